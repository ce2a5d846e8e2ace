"""The join of a warp-lane ``ds_bpermute`` table's warp part to a one-term lane part
(``cost.bpermute_join_ops``), against the setups the corpora's kernels compile to
(docs/benchmarks.md "Session 20: rank23")."""

import json

import pytest

from benchmarks.rank_rules import SETS, packing_plans
from linlayout import LinearLayout
from linlayout.cli.bench import kernel_plan
from linlayout.dtypes import dtype_bits
from linlayout.synth.cost import bpermute_join_ops

CASES = {s: json.loads(SETS[s].read_text())["cases"] for s in ("corpus", "wave32")}


def _case(set_name, name, arch, dtype, warps):
    (case,) = [c for c in CASES[set_name] if (c["name"], c["arch"], c["dtype"], c.get("num_warps")) ==
               (name, arch, dtype, warps)]
    return case


def _lanes_setup(case) -> int:
    """The estimated ``ds_bpermute`` addresses of the case's cheapest warp-lane plan (the bench's pick
    where a lanes plan is)."""
    plans = [p for _, p in packing_plans(case)
             if p.overhead.get("valu_bpermute_addr") and any("warp-dependent lanes" in x for x in p.notes)]
    return min(plans, key=lambda p: p.cost).overhead["valu_bpermute_addr"]


@pytest.mark.parametrize("set_name, name, arch, dtype, warps, compiled", [
    # v_lshrrev, v_and (the lane term), s_lshr_b32 (the warp term), v_and_or_b32 (the join)
    ("corpus", "slice0(blocked[1x4,t1x64,o10])->slice1(mfma16)", "gfx90a", "i8", 4, 4),
    # the lane term, the warp id's bits in an SGPR, s_delay_alu, the join
    ("wave32", "slice0(blocked[1x4,t1x32,o10])->slice1(wmma3.16x64)", "gfx1250", "fp8", 4, 5),
    # the warp bit in place in the wave's SGPR: v_and, v_lshlrev, v_and_or_b32 v, s8, 64, v
    ("corpus", "slice1(dotA32(kw8))->slice1(blocked[1x1,t16x4,o01])", "gfx942", "fp8", 4, 3),
])
def test_the_bpermute_address_estimate_is_the_compiled_setup(set_name, name, arch, dtype, warps, compiled):
    assert _lanes_setup(_case(set_name, name, arch, dtype, warps)) == compiled


def test_the_join_makes_a_round_trip_of_fewer_instructions_first():
    # the lanes plan (8 ds_bpermute, a wait, addresses 4 and a selector) was the pick at 3 estimated
    # addresses (compiled whole 13); the round trip, 9 with setup (compiled 8) planned without the src
    # load line's registers, 7 with them (the bench's: its addresses 3 VALU, not 5); since session 24 two
    # fewer each, with no barrier and no wait before it (the src is in every wave: lds_path._exchanges)
    case = _case("corpus", "slice0(blocked[1x2,t1x64,o10])->slice1(mfma16)", "gfx942", "i8", 8)
    src, dst = LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])
    for load_line, total in ((False, 7), (True, 5)):
        plan = kernel_plan(src, dst, case["arch"], dtype_bits(case["dtype"]), load_line=load_line)
        assert (plan.strategy, plan.total_with_overhead()) == ("lds", total)
    assert _lanes_setup(case) == 4


def test_join_ops_by_family():
    one_term, two_terms = (0, 0, 4, 8), (4, 8, 64, 0)
    assert bpermute_join_ops(one_term, (32, 64), "gfx9", 64) == 0  # the whole warp id shifted
    assert bpermute_join_ops(one_term, (0, 32), "gfx9", 64) == 1
    assert bpermute_join_ops(one_term, (64, 0), "gfx9", 64) == 0  # in place: v_and_or_b32 of the wave's SGPR
    assert bpermute_join_ops(one_term, (16, 32), "rdna", 32) == 2
    assert bpermute_join_ops(two_terms, (0, 32), "gfx9", 64) == 0  # rides in the lane part's OR
    assert bpermute_join_ops(one_term, (0, 0), "rdna", 32) == 0
