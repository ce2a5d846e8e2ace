"""``in_wave.gather_choices`` with a limit: it stops as soon as the units chosen so far and the floors
of the rest (``_unit_floors``) exceed the limit, so each floor must bound its unit's cost, it must
never stop at a limit the whole cost meets, and whatever it returns is the unlimited answer."""

from __future__ import annotations

import numpy as np

from linlayout import LinearLayout
from linlayout.synth import in_wave
from linlayout.dtypes import dtype_bits
from linlayout.synth import convert
from linlayout.synth.context import ConversionContext
from linlayout.synth.in_wave import gather_choices, gather_floor

from repo_data import family_corpus


def _unit_maps():
    """(context, unit map) of the gather on the first wave map of every 9th AMD and 11th wave32
    corpus case that stays in each wave."""
    for family, step in (("amd", 9), ("wave32", 11)):
        for case in family_corpus(family)["cases"][::step]:
            ctx = ConversionContext.create(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]),
                                           case["arch"], dtype_bits(case["dtype"]))
            wm = convert._wave_maps(ctx.problem)[0]
            if convert._same_map(ctx.problem) or not wm.wave_local:
                continue
            yield ctx, convert._unit_problem(ctx, wm).pk.units


def _same(a, b) -> bool:
    """Two gather plans alike: the same unit kinds, source units, lane maps and lane ops."""
    def key(gu):
        if hasattr(gu, "unit_of"):
            return ("select first", gu.unit_of.tolist(), gu.need.tolist(), gu.mv)
        g, lanes, need, mv = gu.base
        return (g, lanes.tolist(), need.tolist(), mv, [(m[0], m[1].tolist(), m[2].tolist(), m[3], m[4])
                                                         for m in gu.merges])
    return [key(u) for u in a] == [key(u) for u in b]


def _unit_cost(ctx, gu) -> float:
    """What ``gather_choices`` charges for one dst unit of its plan."""
    cm = ctx.cost_model
    fam, sel = cm.lane_family_cost(), cm.instruction("v_cndmask")
    if hasattr(gu, "unit_of"):  # select first: a select per src unit but one, then the move
        return (len(set(gu.unit_of[gu.unit_of >= 0].tolist())) - 1) * sel + (fam[gu.mv.family] if gu.mv else 0.0)
    dpp_cost = cm.instruction("dpp") + (0 if in_wave.ir.FUSE_DPP_SELECT else sel)
    mv = gu.base[3]
    return (fam[mv.family] if mv else 0.0) + sum(dpp_cost if dpp is not None else (fam[m.family] if m else 0.0) + sel
                                                 for _, _, _, dpp, m in gu.merges)


def test_each_unit_floor_bounds_its_unit(monkeypatch):
    real, got = in_wave._unit_floors, []
    monkeypatch.setattr(in_wave, "_unit_floors", lambda *a: got.append(real(*a)) or got[-1])
    seen = tight = 0
    for ctx, um in _unit_maps():
        cost, plan = gather_choices(ctx, um)
        assert sum(_unit_cost(ctx, gu) for gu in plan) == cost
        got.clear()
        assert gather_choices(ctx, um, cost) is not None
        (floors,) = got
        assert len(floors) == len(plan)
        for floor, gu in zip(floors, plan):
            assert floor <= _unit_cost(ctx, gu) + 1e-9
            tight += floor == _unit_cost(ctx, gu)
            seen += 1
    assert seen > 400 and tight > 100


def test_a_limit_the_cost_meets_never_stops_it_and_a_lower_one_may():
    seen = stopped = 0
    for ctx, um in _unit_maps():
        cost, plan = gather_choices(ctx, um)
        assert gather_floor(um, ctx.cost_model) <= cost + 1e-9
        for limit in (cost, cost + 1.0, float("inf")):
            got = gather_choices(ctx, um, limit)
            assert got is not None and got[0] == cost and _same(got[1], plan)
        for limit in (cost * 0.5, cost - 1.0, float(np.nextafter(gather_floor(um, ctx.cost_model), -1.0))):
            got = gather_choices(ctx, um, limit)
            if got is None:
                stopped += 1
            else:  # stopping is allowed, not required: else it is the whole answer
                assert got[0] == cost and _same(got[1], plan)
        seen += 1
    assert seen > 40 and stopped > 100


def test_a_lane_map_no_dpp_control_moves_takes_a_family_families_without_dpp_names():
    """``lane_ops.families_without_dpp``, which the unit floors price such a map by, holds the family
    ``find_lane_op`` picks for it: random lane maps (and some of only 8- and 16-lane groups) on a
    CDNA, an RDNA and an NVIDIA target."""
    from linlayout.hw.targets import get_target
    from linlayout.synth.lane_ops import families_without_dpp, find_dpp, find_lane_op, lane_indices

    rng = np.random.default_rng(12)
    picked = set()
    for arch in ("gfx942", "gfx1100", "sm_90"):
        target = get_target(arch)
        lanes = lane_indices(target.wave_size)
        maps = [rng.integers(-1, target.wave_size, target.wave_size) for _ in range(40)]
        maps += [(lanes & ~7) | rng.permutation(8)[lanes & 7] for _ in range(20)]
        maps += [lanes ^ (16 * int(rng.integers(0, 2))) ^ rng.permutation(16)[lanes & 15] for _ in range(20)]
        for need in maps:
            need = np.asarray(need, dtype=np.int64)
            if find_dpp(need, target) is None:
                family = find_lane_op(need, target).family
                assert family in families_without_dpp(target), (arch, family)
                picked.add((arch, family))
    assert {("gfx942", "ds_bpermute"), ("gfx1100", "dpp"), ("sm_90", "shfl")} <= picked
