"""Minimal reproducers of what the seeded fuzz campaign (benchmarks/fuzz_conversions.py) found, each
with its exact expected result; the case names are the campaign's ``seed:k``."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import needs

from linlayout import LayoutError, LinearLayout
from linlayout.synth.convert import plan_conversion

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from fuzz_conversions import dead_steps  # noqa: E402


def _layout(bases: dict, d0: int, d1: int) -> LinearLayout:
    return LinearLayout(bases, [("dim0", d0), ("dim1", d1)])


# the warp-lane candidates (convert._warp_lane_candidates) moved every src VGPR first, also those the
# in-wave plan after them never reads: dead ds_bpermutes the compiler deletes (the ISA had 2 and 4 fewer)
WARP_LANE_CASES = {
    "1:845 gfx942 32b": (
        _layout({"register": [[0, 0], [2, 0]], "lane": [[0, 0], [1, 0], [0, 2], [0, 0], [0, 4], [0, 1]],
                 "warp": [[0, 0]]}, 4, 8),
        _layout({"register": [], "lane": [[1, 0], [0, 2], [2, 1], [0, 1], [0, 4], [1, 0]], "warp": [[0, 4]]}, 4, 8),
        "gfx942", 32, dict(objective="throughput", lds_budget_bytes=40, src_tuple_dwords=1),
        {"ds_bpermute": 3, "v_cndmask": 1, "total": 4}),
    "3:1029 gfx1200 16b": (
        _layout({"register": [[0, 0], [0, 8], [0, 64], [0, 4]],
                 "lane": [[1, 0], [0, 32], [0, 1], [0, 16], [0, 2]], "warp": [[0, 0]]}, 2, 128),
        _layout({"register": [[0, 4]], "lane": [[0, 64], [1, 0], [0, 16], [0, 65], [0, 2]], "warp": [[0, 33]]},
                2, 128),
        "gfx1200", 16, dict(objective="concurrent"),
        {"ds_bpermute": 4, "v_perm_b32": 2, "permlane16": 2, "v_cndmask": 1, "total": 9}),
    # a src VGPR that the in-wave plan only overwrites (its final renames) is dead too
    "2:546 gfx1250 64b": (
        _layout({"register": [[0, 0], [0, 2]], "lane": [[0, 0], [0, 4], [0, 8], [0, 1], [1, 0]],
                 "warp": [[0, 0], [0, 0]]}, 2, 16),
        _layout({"register": [[0, 4]], "lane": [[0, 5], [1, 8], [0, 2], [0, 0], [0, 8]], "warp": [[0, 0], [0, 8]]},
                2, 16),
        "gfx1250", 64, dict(objective="throughput", lds_budget_bytes=140, dst_tuple_dwords=4),
        {"ds_bpermute": 8, "v_cndmask": 4, "total": 12}),
}


@pytest.mark.parametrize("name", sorted(WARP_LANE_CASES))
def test_warp_lane_plans_move_only_the_registers_they_read(name):
    src, dst, arch, bits, kwargs, counts = WARP_LANE_CASES[name]
    plan = plan_conversion(src, dst, arch, bits, **kwargs)
    assert plan.verified and any(n.startswith("warp-dependent lanes") for n in plan.notes)
    assert dead_steps(plan) == []
    assert {k: v for k, v in plan.counts().items() if v} == counts


#: AMD corpus cases (1 wave) whose in-wave plans write part of a register: byte permutes with constant bytes.
PARTIAL_WRITES = [("slice1(mfma32T)->slice1(blocked[2x1,t64x1,o01])", "gfx950", "bf16"),
                  ("slice1(dotA16(kw4))->slice1(blocked[2x1,t64x1,o01])", "gfx942", "fp16"),
                  ("slice1(mfma32T)->slice1(blocked[1x1,t64x1,o01])", "gfx950", "fp8")]


def test_in_wave_plans_write_a_src_register_whole():
    """``convert._after_warp_lanes`` takes a step reading a src VGPR to read its src value whole or not at all
    (it dropped a check that the VGPR was still whole): ``ir.Program.emit`` writes a src VGPR whole, and its
    partial writes (byte permutes with constant bytes) go to fresh registers above the src's.  Here on plans
    that make partial writes, and on the warp-lane case with byte permutes."""
    from repo_data import family_corpus

    bits_of = {"bf16": 16, "fp16": 16, "fp8": 8}
    cases = {(c["name"], c["arch"], c["dtype"]): c for c in family_corpus("amd")["cases"] if c["num_warps"] == 1}
    src, dst, arch, bits, kwargs, _ = WARP_LANE_CASES["3:1029 gfx1200 16b"]
    plans = [(plan_conversion(src, dst, arch, bits, **kwargs), bits)]
    for key in PARTIAL_WRITES:
        c = cases[key]
        plans.append((plan_conversion(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), key[1],
                                      bits_of[key[2]], strategy="registers"), bits_of[key[2]]))
    partial = 0
    for plan, bits in plans:
        p = 32 // bits
        for step in plan.steps:
            written = {}
            for slot in step.writes():
                written.setdefault(slot // p, set()).add(slot)
            assert all(len(slots) == p for r, slots in written.items() if r < plan.slots_in // p), step
            partial += any(len(slots) < p for slots in written.values())
    assert partial >= len(PARTIAL_WRITES)


def test_a_warp_lane_plan_moves_a_src_register_it_also_leaves_in_place():
    """The one-copy planner's fill of AMD corpus case #301 (gfx942 fp32
    ``slice0(blocked[1x1,t1x64,o10])->slice1(mfma16T)``, 2 warps, lane bits 4 and 5 filled with the src's
    lane bases): the src is held whole by every warp and the dst's warp basis is its lane basis 4, so
    warp ``w`` reads lane ``l ^ 16w``.  The in-wave plan after that move reads src VGPR 0 in a lane step
    and keeps it in place as dst VGPR 0; the move was composed into the lane step alone, so warp 1's
    dst VGPR 0 held the unmoved src (a wrong candidate, caught by its verification under
    ``strategy="registers"``)."""
    src = LinearLayout({"register": [[64], [128]], "lane": [[1], [2], [4], [8], [16], [32]], "warp": [[0]]},
                       [("dim0", 256)])
    dst = LinearLayout({"register": [[32], [64], [128]], "lane": [[1], [2], [4], [8], [16], [32]],
                        "warp": [[16]]}, [("dim0", 256)])
    plan = plan_conversion(src, dst, "gfx942", 32, strategy="registers")
    assert plan.verified and plan.strategy == "lanes" and dead_steps(plan) == []
    assert any(n.startswith("warp-dependent lanes") for n in plan.notes)
    assert {k: v for k, v in plan.counts().items() if v} == {"ds_bpermute": 8, "total": 8}


def test_registers_refusal_says_the_data_stay_in_each_warp_where_they_do():
    """2:132 (gfx90a fp16): src is broadcast over the warps, so each warp holds every element, but warp 1
    needs them at the other half of each packed register: no in-wave candidate is built, and the refusal
    said the data moved between warps (false); the default strategy plans it through LDS."""
    src = _layout({"register": [[0, 8], [0, 32], [0, 2]], "lane": [[0, 0], [0, 4], [1, 0], [0, 2], [0, 1], [0, 16]],
                   "warp": [[0, 0]]}, 2, 64)
    dst = _layout({"register": [[0, 8]], "lane": [[0, 0], [0, 16], [0, 32], [0, 2], [0, 0], [0, 0]],
                   "warp": [[0, 8]]}, 2, 64)
    with pytest.raises(LayoutError, match="^no in-register plan: each warp holds the data it needs"):
        plan_conversion(src, dst, "gfx90a", 16, strategy="registers")
    plan = plan_conversion(src, dst, "gfx90a", 16)
    assert plan.verified and plan.strategy == "lds"
    lanes = [[0, 4], [0, 16], [0, 2], [0, 0], [0, 0]]  # warp and lane 0 trade places: data cross warps
    across = (_layout({"register": [[0, 8], [0, 32]], "lane": [[0, 1]] + lanes, "warp": [[1, 0]]}, 2, 64),
              _layout({"register": [[0, 8], [0, 32]], "lane": [[1, 0]] + lanes, "warp": [[0, 1]]}, 2, 64))
    with pytest.raises(LayoutError, match="^the conversion moves data between warps"):
        plan_conversion(*across, "gfx90a", 16, strategy="registers")


@needs.mlir
def test_gather_moves_of_one_src_register_are_shared():
    """3:1491 (gfx1250, 64-bit, strategy registers): two dst registers each read src register 0 at the
    even lanes of one and the odd lanes of the other, at maps that agree where both are defined; the
    gather moved it twice (and register 1 twice), which the compiler merged into one ds_bpermute each
    once the don't-care lanes' addresses are filled in: the plan counted 8 where the kernel has 4."""
    from linlayout.lowering.conversion import lower_conversion

    src = _layout({"register": [[4, 0], [0, 0]], "lane": [[1, 0], [0, 4], [2, 0], [0, 1], [0, 2]], "warp": []}, 8, 8)
    dst = _layout({"register": [[4, 0]], "lane": [[4, 0], [0, 1], [1, 0], [1, 2], [0, 1]], "warp": []}, 8, 8)
    plan = plan_conversion(src, dst, "gfx1250", 64, strategy="registers", objective="latency")
    assert plan.verified and dead_steps(plan) == []
    assert {k: v for k, v in plan.counts().items() if v} == {"ds_bpermute": 4, "v_cndmask": 4, "total": 8}
    isa = lower_conversion(plan, binary=True).report["isa_counts"]
    assert (isa["ds_bpermute"], isa["v_cndmask"]) == (4, 4)


def test_a_seeded_subset_of_the_campaign():
    """Cases 0..79 of the campaign's seed 1 (every target, 1-8 warps, every width, objective, strategy,
    odd budgets, VGPR tuples and 8/16-bit AMD sides held one element per VGPR, 8 src and 9 dst of them; no
    interpreter or compiler here): every check of
    ``fuzz_conversions.check`` passes -- verified, certificate checked and re-verified, budget kept, lower
    bound below the cost, no dead steps, each refusal true (brute-force warp test)."""
    from fuzz_conversions import check, draw

    ran = [check(case, False, False, False) for case in map(lambda k: draw(1, k), range(80)) if case is not None]
    drawn = [case for case in map(lambda k: draw(1, k), range(80)) if case is not None]
    assert (sum(c["src_unpacked"] for c in drawn), sum(c["dst_unpacked"] for c in drawn)) == (8, 9)
    assert len(ran) >= 70 and sum(r.startswith("refused") for r in ran) < len(ran) // 2


def test_a_src_holding_half_the_tile_is_planned_in_wave_under_auto():
    """A bit permutation of 256 elements (two registers and the lanes trade bits) on a tile of 512: src
    holds half the tile.  ``registers`` planned it, ``auto`` raised the shared-layout search's 'writer does
    not cover every tensor element'; now the LDS path has no plan for such a src (its one-line refusal
    under ``lds``), and ``auto`` takes the in-wave plan."""
    def layout(order):
        return LinearLayout({"register": [[1 << b] for b in order[:2]], "lane": [[1 << b] for b in order[2:]]},
                            [("dim0", 512)])
    src, dst = layout(list(range(8))), layout([7, 6] + list(range(6)))
    plan = plan_conversion(src, dst, "gfx942", 32)
    assert plan.verified and plan.strategy == "lanes"
    assert plan.counts() == plan_conversion(src, dst, "gfx942", 32, strategy="registers").counts()
    with pytest.raises(LayoutError, match=r"^an LDS round trip needs a src that holds every tensor element: "
                                          r"src holds 2\*\*8 of the tile's 2\*\*9 elements$"):
        plan_conversion(src, dst, "gfx942", 32, strategy="lds")


@needs.mlir
def test_the_gather_reads_one_copy_of_a_src_register():
    """6:2230 (gfx1200 fp16, strategy registers): src register bit 2 is a broadcast (registers ``r`` and
    ``r ^ 4`` hold the same elements), and the wave map reads both copies on different lanes; the gather
    moved each copy and selected between them (4 ds_bpermute, 2 v_cndmask) where the compiler, seeing
    equal values, kept 2 and 0.  Reading the lower copy always gives the kernel's counts."""
    from linlayout.lowering.conversion import lower_conversion

    src = _layout({"register": [[0, 1], [4, 0], [0, 0]], "lane": [[2, 0], [0, 2], [1, 1], [8, 1], [16, 0]],
                   "warp": []}, 32, 4)
    dst = _layout({"register": [[4, 0], [0, 0], [0, 0], [8, 0]], "lane": [[2, 0], [0, 0], [0, 2], [16, 0], [0, 0]],
                   "warp": []}, 32, 4)
    plan = plan_conversion(src, dst, "gfx1200", 16, strategy="registers", objective="throughput",
                           src_tuple_dwords=2, dst_tuple_dwords=2)
    assert plan.verified and dead_steps(plan) == []
    assert {k: v for k, v in plan.counts().items() if v} == {"ds_bpermute": 2, "v_perm_b32": 2, "total": 4}
    isa = lower_conversion(plan, binary=True).report["isa_counts"]
    assert (isa["ds_bpermute"], isa["v_cndmask"], isa["v_perm_b32"]) == (2, 0, 2)


def test_a_movmatrix_stage_skips_registers_nothing_reads():
    """7:1905 (sm_90 8-bit, strategy registers): the first movmatrix stage transposed both src registers
    though the rest of the plan reads only the first (dst holds two of src's eight elements per lane);
    nvcc deletes the other, so the plan counted one movmatrix more than its PTX."""
    src = _layout({"register": [[2, 0], [0, 4], [0, 2]], "lane": [[0, 0], [0, 1], [0, 8], [0, 16], [1, 0]],
                   "warp": []}, 4, 32)
    dst = _layout({"register": [[0, 0]], "lane": [[0, 16], [1, 0], [0, 4], [0, 0], [2, 0]], "warp": []}, 4, 32)
    plan = plan_conversion(src, dst, "sm_90", 8, strategy="registers", objective="concurrent", src_tuple_dwords=1)
    assert plan.verified and dead_steps(plan) == [] and plan.notes[0].startswith("movmatrix stage")
    assert {k: v for k, v in plan.counts().items() if v} == {"movmatrix": 1, "shfl": 1, "prmt": 2, "total": 4}


@needs.mlir
def test_warp_offsets_of_one_register_take_one_round_of_selects():
    """15:1164 (gfx942 fp32, 8 warps): warp bits 0 and 2 both read the other src register (the same
    offset); the per-warp renaming made a round of selects per warp bit (3 v_cndmask), which the compiler
    folded into one select on the two bits' parity."""
    from linlayout.lowering.conversion import lower_conversion

    src = _layout({"register": [[33, 0], [17, 0]], "lane": [[64, 0], [16, 0], [8, 0], [0, 1], [18, 0], [4, 0]],
                   "warp": [[4, 0], [32, 0], [17, 0]]}, 128, 2)
    dst = _layout({"register": [[0, 0], [4, 0]], "lane": [[0, 0], [0, 1], [2, 0], [0, 0], [0, 0], [8, 0]],
                   "warp": [[0, 0], [1, 0], [32, 0]]}, 128, 2)
    plan = plan_conversion(src, dst, "gfx942", 32, objective="latency", lds_budget_bytes=264, src_tuple_dwords=1)
    assert plan.verified and plan.strategy == "lanes"
    assert {k: v for k, v in plan.counts().items() if v} == {"ds_bpermute": 4, "v_cndmask": 1, "total": 5}
    assert lower_conversion(plan, binary=True).report["isa_counts"]["v_cndmask"] == 1


def _dependent_warp_offsets(lane_bits: int) -> tuple[LinearLayout, LinearLayout]:
    """src, dst of 8 warps whose warp bits 0, 1 and 2 offset the src registers by 1, 2 and 3 (one register
    per lane bit above the two register bits)."""
    w = 4 << lane_bits

    def layout(warps):
        return LinearLayout({"register": [[1], [2]], "lane": [[4 << i] for i in range(lane_bits)], "warp": warps},
                            [("dim0", 8 * w)])

    return layout([[w], [2 * w], [4 * w]]), layout([[w ^ 1], [2 * w ^ 2], [4 * w ^ 3]])


@needs.mlir
def test_dependent_warp_offsets_take_one_round_of_selects_per_basis_vector():
    """Beside 15:1164 (hand-made, gfx942 fp32, 8 warps): warp bits 0, 1 and 2 offset the src registers by 1, 2
    and 3, dependent offsets whose third round the swapped-select fold cannot catch (its operands are selects of
    four registers, not one pair picked both ways).  ``convert._warp_offsets`` makes a round per basis vector of
    the offsets, on the parity of the warp bits holding it: 2 rounds, 8 v_cndmask (a round per warp bit: 12,
    and 12 compiled)."""
    from linlayout.lowering.conversion import lower_conversion

    src, dst = _dependent_warp_offsets(6)
    plan = plan_conversion(src, dst, "gfx942", 32)
    assert plan.verified and plan.strategy == "registers" and dead_steps(plan) == []
    assert {k: v for k, v in plan.counts().items() if v} == {"v_cndmask": 8, "total": 8}
    assert lower_conversion(plan, binary=False).report["isa_counts"]["v_cndmask"] == 8


@needs.mlir
@pytest.mark.parametrize("arch, lane_bits, setup", [("gfx942", 6, 8), ("gfx1100", 5, 6)])
def test_warp_parity_conditions_take_a_popcount_each(arch, lane_bits, setup):
    """The two conditions of the dependent warp offsets above are parities of two warp bits each (``warp & 5``,
    ``warp & 6``): the lowering computes each from the warp id's popcount (``s_and_b32``, ``s_bcnt1_i32_b32``,
    ``s_bfe_i32``, and ``s_ashr_i32`` for a wave64's high word), where LLVM made its chain of ``warp == w`` selects
    14 SALU on gfx942 (11 for ``warp & 5``) and 17 on gfx1100; the setup estimate (``cost.WARP_PARITY_SALU``) is
    the compiled count, and the kernel moves the tile as the layouts say on the interpreter."""
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.emit.host import distinct_tile, expected_output, interpret

    plan = plan_conversion(*_dependent_warp_offsets(lane_bits), arch, 32)
    low = lower_conversion(plan, binary=False)
    assert plan.overhead["salu_vcc"] == setup
    assert low.report["setup_counts"]["total"] == low.report["setup_counts"]["salu"] == setup
    tile = distinct_tile(low.kernel.shape, 32)
    assert np.array_equal(interpret(low.kernel, tile), expected_output(plan, tile))


def test_a_select_between_swapped_selects_is_one_select():
    """14:1476 (gfx1100 fp32, 4 warps): a per-warp register offset (selects of two registers on a warp
    condition) followed by a per-lane pick between its two results: ``c2 ? (c1 ? x : y) : (c1 ? y : x)``,
    3 v_cndmask in the plan, is one select on ``c1 ^ c2`` (the compiler's 1)."""
    src = _layout({"register": [[1, 4], [3, 14]], "lane": [[1, 0], [0, 1], [0, 10], [2, 2], [0, 10]],
                   "warp": [[1, 0], [0, 8]]}, 4, 16)
    dst = _layout({"register": [[0, 0]], "lane": [[0, 2], [0, 0], [0, 1], [0, 8], [0, 0]], "warp": [[0, 0], [0, 0]]},
                  4, 16)
    plan = plan_conversion(src, dst, "gfx1100", 32, strategy="registers", objective="throughput",
                           lds_budget_bytes=256, dst_tuple_dwords=4)
    assert plan.verified and dead_steps(plan) == []
    assert {k: v for k, v in plan.counts().items() if v} == {"ds_bpermute": 3, "v_cndmask": 1, "total": 4}
