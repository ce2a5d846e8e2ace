"""``preimage.wave_local_maps`` (the two element maps sharing their cosets) against the maps made one
by one with ``wave_local_map``, on random layout pairs."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from linlayout import LayoutError
from linlayout.synth.preimage import _Choices, normalize, wave_local_map, wave_local_maps

from random_layouts import layout_pairs


def _problem(case):
    """The normalized problem of a random layout pair (None when the pair is refused)."""
    src, dst, _, _ = case
    try:
        return normalize(src, dst, 64)
    except LayoutError:
        return None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout_pairs())
def test_wave_local_maps_are_the_maps_made_one_by_one(case):
    prob = _problem(case)
    if prob is None:
        return
    first, still = wave_local_map(prob), wave_local_map(prob, still_lanes=True)
    assert still.wave_local == first.wave_local
    want = [first] + ([still] if still.wave_local and still.lane != first.lane else [])
    assert wave_local_maps(prob) == want


def test_a_broadcast_dst_lane_bit_gives_a_second_map():
    from test_convert_slices import _broadcast_lane_slice

    prob = normalize(*_broadcast_lane_slice(), 64)
    assert [m.lane for m in wave_local_maps(prob)] == [[2, 4, 8, 16, 64, 64], [2, 4, 8, 16, 0, 64]]


def _reference_pick(choices, kind: str, still_lanes: bool) -> list[int]:
    """``_Choices.pick`` member by member: the least score (module rules), the first on ties."""
    nr, nl = choices.nr, choices.nl

    def score(i: int, x: int) -> int:
        weight, warp_part = bin(x).count("1"), x & choices.warp_m
        if kind == "warp":
            own = 1 << (nr + nl + i)
            return 0 if x == own else (500 + weight if warp_part == own else 1000 + weight)
        single_reg = weight == 1 and x & choices.reg_m
        single_lane = weight == 1 and x & choices.lane_m
        if kind == "lane":
            base = (0 if x == 1 << (nr + i) else (1 if still_lanes else 4) if x == 0 else 2 if single_lane
                    else 3 if single_reg else 5 + weight)
        else:
            base = 0 if x == 0 else 1 if single_reg else 3 if single_lane else 5 + weight
        return base + (1000 if warp_part else 0)

    out = []
    for i, t in enumerate(choices.solutions[kind]):
        members = [t ^ int(k) for k in choices.coset] if choices.kernel else [t]
        out.append(min(members, key=lambda x: score(i, x)))
    return out


def _check_picks(prob) -> bool:
    choices = _Choices(prob, 10)
    for kind, still in (("register", False), ("lane", False), ("lane", True), ("warp", False), ("warp", True)):
        assert choices.pick(kind, still) == _reference_pick(choices, kind, still), (kind, still)
    return bool(choices.kernel)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout_pairs())
def test_every_kind_picked_at_once_is_picked_member_by_member(case):
    prob = _problem(case)
    if prob is not None:
        _check_picks(prob)


def test_corpus_picks_are_picked_member_by_member():
    from linlayout import LinearLayout

    from repo_data import family_corpus

    with_kernel = 0
    for family, step in (("amd", 5), ("wave32", 7)):
        for case in family_corpus(family)["cases"][::step]:
            src, dst = LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])
            with_kernel += _check_picks(normalize(src, dst, 32 if family == "wave32" else 64))
    assert with_kernel > 20
