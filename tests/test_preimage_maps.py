"""``preimage.wave_local_maps`` (the two element maps sharing their cosets) against the maps made one
by one with ``wave_local_map``, on random layout pairs."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from linlayout import LayoutError
from linlayout.synth.preimage import normalize, wave_local_map, wave_local_maps

from test_convert_random import layout_pairs


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout_pairs())
def test_wave_local_maps_are_the_maps_made_one_by_one(case):
    src, dst, _, _ = case
    try:
        prob = normalize(src, dst, 64)
    except LayoutError:
        return
    first, still = wave_local_map(prob), wave_local_map(prob, still_lanes=True)
    assert still.wave_local == first.wave_local
    want = [first] + ([still] if still.wave_local and still.lane != first.lane else [])
    assert wave_local_maps(prob) == want


def test_a_broadcast_dst_lane_bit_gives_a_second_map():
    from test_convert_slices import _broadcast_lane_slice

    prob = normalize(*_broadcast_lane_slice(), 64)
    assert [m.lane for m in wave_local_maps(prob)] == [[2, 4, 8, 16, 64, 64], [2, 4, 8, 16, 0, 64]]
