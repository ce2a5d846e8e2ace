"""The per-lane v_perm selector setup of over-fetching LDS round trips in the planner's floors.

``LdsAccesses.selector_valu`` (``lds_path.over_fetch_selector_valu``) is a lower bound of the plan's
``valu_lane_selector`` (cost.estimate_overhead), counted in ``plan_floor`` and in the deferred
over-fetch design's bounds, on corpus cases whose over-fetching loads gather their dst dwords with
per-lane selectors (fp16 and bf16: one ``"lanes"`` choice; fp8 and i8: more).
Those corpus cases have one lane bit in ``S`` (the same count on every target); synthetic fp16 tiles with
``|S|`` of 1 to 4 pin the floor per target (bitop3, xor3, PTX), equal to the plan's count.
"""

from __future__ import annotations

import pytest

from floor_checks import check_round_trip_floors
from repo_data import corpus, family_corpus
from linlayout import LinearLayout
from linlayout.dtypes import dtype_bits
from linlayout.synth.context import ConversionContext
from linlayout.synth.cost import estimate_overhead
from linlayout.synth.emulator import verify

CASES = [("amd", "mfma16T->mfma32", "gfx90a", "fp16"),
         ("amd", "slice0(blocked[1x2,t1x64,o10])->slice1(mfma16T)", "gfx90a", "i8"),
         ("amd", "blocked[2x1,t16x4,o01]->dotA32(kw8)", "gfx942", "fp8"),
         ("wave32", "wmma1.16x16T->wmma1.16x16", "gfx1100", "bf16")]


def _case(family: str, name: str, arch: str, dtype: str) -> ConversionContext:
    cases = (corpus() if family == "amd" else family_corpus(family))["cases"]
    c = next(c for c in cases if (c["name"], c["arch"], c["dtype"]) == (name, arch, dtype))
    return ConversionContext.create(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), arch,
                                    dtype_bits(dtype))


@pytest.mark.parametrize("case", CASES, ids=lambda c: "/".join(c))
def test_selector_floor_bounds_the_built_plans(case):
    """Every round trip's floors bound its plan (``check_round_trip_floors``: plan_floor, the deferred
    bounds); each over-fetching one counts ``2|S| + 1 >= 3`` selector VALU, at most its plan's
    ``valu_lane_selector``, and its plan runs correctly on the emulator; the other designs count none."""
    ctx = _case(*case)
    fetched = 0
    for _, acc, plan in check_round_trip_floors(ctx, case):
        if not acc.design.over_fetch:
            assert acc.selector_valu == 0
            continue
        assert acc.selector_valu >= 3
        if plan is not None:
            fetched += 1
            assert acc.selector_valu <= estimate_overhead(plan)["valu_lane_selector"]
            assert verify(plan).ok
    assert fetched


@pytest.mark.parametrize("case", CASES, ids=lambda c: "/".join(c))
def test_over_fetch_perms_count_the_gathered_dwords(case):
    """An over-fetching round trip's ``d_perms`` (``lds_path._over_fetch_perms``: the distinct dst dwords no
    loaded dword holds in place) is at most its plan's ``v_perm_b32`` steps with the stores' ``s_perms``;
    every dst dword of these cases sits at a lane-dependent slot, so each is counted: with two elements a
    dword (fp16, bf16) one ``PermSelect`` each, the count exact; with four (i8, fp8) a dword of four loaded
    dwords takes three permutes, a third of them counted."""
    ctx = _case(*case)
    fetched = 0
    for _, acc, plan in check_round_trip_floors(ctx, case):
        if not acc.design.over_fetch or plan is None:
            continue
        fetched += 1
        perms = plan._kept_counts()["v_perm_b32"]
        dwords = len(acc.D.reg_image) * ctx.element_bytes // 4
        assert acc.d_perms == dwords
        assert acc.s_perms + acc.d_perms == (perms if ctx.element_bytes == 2 else perms // 3)
    assert fetched


def _lane_pattern_case(arch: str, lane_bits: int, pattern_lanes: int) -> ConversionContext:
    """fp16 over a 256x16 tile: the src holds dim1 bits 0 and 1 in registers (its dwords pair dim1 0 and 1),
    the dst dim0 bits in registers and dim1 in lanes, lane ``i < pattern_lanes`` taking dim1 ``2^i + 1`` (so
    ``|S| = pattern_lanes`` lane columns have the offset bit below the dword, one pattern ``d``); ``lane_bits``
    6 (wave64) or 5 (wave32: the src's dim0 8 moves to its registers)."""
    dim1 = [[0, (1 << i) | int(0 < i < pattern_lanes)] for i in range(4)]
    wide = lane_bits == 6
    src_reg = [[0, 1], [0, 2]] + ([] if wide else [[8, 0]]) + [[16 << i, 0] for i in range(4)]
    src_lane = [[1, 0], [2, 0], [4, 0]] + ([[8, 0]] if wide else []) + [[0, 4], [0, 8]]
    dst_lane = dim1 + ([[0, 0]] if wide else []) + [[4, 0]]
    def layout(reg, lane):
        return LinearLayout.from_json({
            "in_dims": [["register", 1 << len(reg)], ["lane", 1 << len(lane)], ["warp", 1], ["block", 1]],
            "out_dims": [["dim0", 256], ["dim1", 16]],
            "bases": {"register": reg, "lane": lane, "warp": [], "block": []}})
    dst_reg = [[1, 0], [2, 0], [8, 0], [16, 0], [32, 0], [64, 0], [128, 0]]
    return ConversionContext.create(layout(src_reg, src_lane), layout(dst_reg, dst_lane), arch, 16)


@pytest.mark.parametrize("arch,lane_bits,pattern_lanes,selector_valu", [
    ("gfx942", 6, 1, 3), ("gfx942", 6, 2, 5), ("gfx942", 6, 3, 7),
    ("gfx950", 6, 1, 3), ("gfx950", 6, 2, 4), ("gfx950", 6, 3, 6),
    ("gfx1100", 5, 2, 5), ("gfx1100", 5, 3, 6), ("gfx1100", 5, 4, 8),
    ("gfx1250", 5, 2, 4), ("gfx1250", 5, 3, 6), ("gfx1250", 5, 4, 7),
    ("sm_80", 5, 3, 0)])
def test_selector_floor_is_the_plans_selector_count_per_target(arch, lane_bits, pattern_lanes, selector_valu):
    """The floor takes the target: ``least_lanes_choice_valu(|S|, target)`` (mask ``2|S| - 1``, an and, an add,
    less the xor ``v_bitop3_b32`` fuses on gfx950 and gfx1250 and one of each xor pair ``v_xor3_b32`` merges on
    gfx1100 and gfx1250), 0 on PTX (ptxas builds the ``prmt`` selectors); here each over-fetching round trip
    is exactly its plan's ``valu_lane_selector``, and the plan runs correctly on the emulator."""
    ctx = _lane_pattern_case(arch, lane_bits, pattern_lanes)
    fetched = 0
    for _, acc, plan in check_round_trip_floors(ctx, (arch, pattern_lanes)):
        if acc.design.over_fetch:
            fetched += 1
            assert acc.selector_valu == estimate_overhead(plan).get("valu_lane_selector", 0) == selector_valu
            assert verify(plan).ok
    assert fetched == 1
