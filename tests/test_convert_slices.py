"""Corpus conversions where the planner lost to Triton 3.9 (docs/benchmarks.md, "where the planner
loses"): 1-D broadcast slices assembled select first, and 16-bit register-only reorderings whose
``v_perm_b32`` count is the lower bound of packed registers."""

from __future__ import annotations

import numpy as np
import pytest

import needs
from linlayout import LinearLayout
from linlayout.synth.convert import candidate_plans, plan_conversion
from linlayout.synth.cost import WAIT_STATE_CYCLES
from linlayout.synth.hazards import HazardCount, hazard_nops
from linlayout.synth.plan import PermSelect


def _layout(register: list, lane: list, warp: list, shape: list) -> LinearLayout:
    sizes = {"register": 1 << len(register), "lane": 1 << len(lane), "warp": 1 << len(warp), "block": 1}
    return LinearLayout.from_json({"in_dims": [[d, s] for d, s in sizes.items()],
                                   "out_dims": [[f"dim{i}", s] for i, s in enumerate(shape)],
                                   "bases": {"register": register, "lane": lane, "warp": warp, "block": []}})


def _lane0_dwords(layout: LinearLayout) -> set[frozenset]:
    """The element pairs (as (dim0, dim1)) of lane 0's 16-bit registers 2k, 2k+1: its dwords."""
    def element(r: int) -> tuple:
        out = layout.apply({"register": r, "lane": 0, "warp": 0, "block": 0})
        return out["dim0"], out["dim1"]
    return {frozenset((element(r), element(r + 1))) for r in range(0, layout.in_dim_size("register"), 2)}


def test_a_broadcast_slice_selects_its_dword_in_each_lane_then_moves_it_once():
    # corpus slice0(mfma32T)->slice0(blocked[1x4,t1x64,o10]), gfx950, fp8, 8 waves, 128 elements:
    # every lane holds 64 elements (lane bit 5 picks element bit 2); dst lane l wants dword l >> 1 & 15
    # of a lane whose bit 5 is bit 0 of l.  A select tree over the 16 src dwords (15 v_cndmask) in
    # each lane, then one ds_bpermute (168 modelled cycles, its address 4 setup VALU; 3 since its
    # (l & 1) << 7 term is the thread id shifted, lane_arith's tables read modulo the wave; 2 since session 23,
    # (l & 31) * 0x84 read in the low byte, lane_arith._widened); before, 30 DPP
    # moves, 18 selects and 4 permlane swaps (216).  With dst lane bit 5 (a broadcast) moving nothing,
    # the element map is a bit permutation and its exchanges take 27 instructions without a DS
    # latency: 112 cycles, plus
    # the 7 wait states of their 4 s_nop (linlayout.synth.hazards), which make the gather the cheaper.
    src = _layout([[1], [2], [8], [16], [32], [64]], [[0], [0], [0], [0], [0], [4]], [[0], [0], [0]], [128])
    dst = _layout([[1], [2]], [[4], [8], [16], [32], [64], [0]], [[0], [0], [0]], [128])
    by_builder = {}
    for plan in candidate_plans(src, dst, "gfx950", 8):
        by_builder.setdefault(plan.notes[-1].split(";")[0], plan)
    gather = by_builder["in-wave builder: gather"]
    # 14 of the tree's selects are on lane bits 2-5 (row/bank product sets): masked identity DPP moves in
    # place (linlayout.synth.ir.Program.emit's dpp_selects), their 3 masks' SALU saved for a wait state
    assert {k: v for k, v in gather.counts().items() if v} == {"v_cndmask": 1, "dpp": 14, "ds_bpermute": 1,
                                                                 "total": 16}
    # (modelled cycles: the latency values; the concurrent ones, the default's, add the issue again)
    assert gather.cost_detail["latency_value"] == 158 and gather.cost == 158 + 78
    exchange = by_builder["in-wave builder: exchange:exchanges"]
    counts = {k: v for k, v in exchange.counts().items() if v}
    assert counts == {"v_cndmask": 9, "v_mov": 1, "dpp": 15, "permlane16_swap": 1, "permlane32_swap": 1, "total": 27}
    assert hazard_nops(exchange) == HazardCount(4, 7)
    assert exchange.cost_detail["latency_value"] == 112 + 7 * WAIT_STATE_CYCLES and exchange.cost == 2 * (112 + 28)
    # Src lane bits 0-4 hold copies (zero columns), so the exchange of src register bits into them
    # is one select per unit pair (a dup exchange, linlayout.synth.exchanges): the select tree again,
    # and src lane bit 5 goes to dst lane bit 0 by one permlane32 swap and a select where the gather
    # took a ds_bpermute: 18 instructions, 72 issue cycles, no DS latency.  7 of its selects are on
    # lane bits 2-5 and become masked identity DPP moves: 5 wait states (3 s_nop) and 4 of setup (2
    # masks) where the v_cndmask form had 2 and 10 (5 masks): 96 against 90, but 25 instructions with
    # setup against 29, which the rank value (CostModel.rank_value) prefers; the concurrent value 192
    # against the gather's 252.
    dup = by_builder["in-wave builder: dup exchange:exchanges"]
    assert {k: v for k, v in dup.counts().items() if v} == {"v_cndmask": 9, "dpp": 7, "v_mov": 1,
                                                              "permlane32_swap": 1, "total": 18}
    assert hazard_nops(dup) == HazardCount(3, 5) and dup.total_with_overhead() == 25
    assert dup.cost_detail["latency_value"] == 72 + 5 * WAIT_STATE_CYCLES + 4 and dup.cost == 2 * 96
    plan = plan_conversion(src, dst, "gfx950", 8)
    assert plan.verified and plan.cost == dup.cost and plan.counts() == dup.counts()


def _broadcast_lane_slice() -> tuple[LinearLayout, LinearLayout]:
    # corpus slice1(mfma32T)->slice1(blocked[1x1,t16x4,o01]), gfx950, i8, 1 wave, 64 elements: src
    # lanes 32-63 repeat lanes 0-31; dst lane l < 16 holds elements l + 16 r, and dst lanes 16-63
    # repeat lanes 0-15
    src = _layout([[32]], [[1], [2], [4], [8], [16], [0]], [], [64])
    dst = _layout([[16], [32]], [[1], [2], [4], [8], [0], [0]], [], [64])
    return src, dst


def test_a_broadcast_dst_lane_bit_moves_nothing_so_one_permlane_swap_does_it():
    # The least-moving choice sent dst lane bit 4 (a broadcast) to src lane bit 5 (also a broadcast),
    # which dst lane bit 5 keeps too: no bit permutation, so a gather with 2 ds_swizzle (109 modelled
    # cycles; Triton 3.9: a v_permlane16_swap, 2 v_perm_b32, 2 v_mov, a v_cndmask, 34 cycles).  With
    # lane bit 4 moving nothing, src lane bit 4 goes to a dst register bit: one exchange.
    from linlayout.synth.preimage import normalize, wave_local_map

    src, dst = _broadcast_lane_slice()
    prob = normalize(src, dst, 64)
    assert wave_local_map(prob).lane == [2, 4, 8, 16, 64, 64]
    assert wave_local_map(prob, still_lanes=True).lane == [2, 4, 8, 16, 0, 64]
    plan = plan_conversion(src, dst, "gfx950", 8)
    counts = {k: v for k, v in plan.counts().items() if v}
    assert counts == {"v_perm_b32": 1, "v_mov": 1, "permlane16_swap": 1, "total": 3}
    # the swap reads the v_mov copy: one s_nop 1 (2 wait states) that no order avoids, priced
    assert hazard_nops(plan) == HazardCount(1, 2) and plan.overhead["s_nop"] == 1
    assert plan.verified and plan.cost_detail["latency_value"] == 13 + 2 * WAIT_STATE_CYCLES
    assert plan.cost == 2 * plan.cost_detail["latency_value"]


def _interpreted(plan, element_bits: int, seed: int):
    """The plan's lowered kernel, after checking that the MLIR interpreter gives the expected tile."""
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.emit.host import distinct_tile, expected_output, interpret

    low = lower_conversion(plan, binary=False)
    tile = distinct_tile(low.kernel.shape, element_bits, seed=seed)
    assert np.array_equal(interpret(low.kernel, tile, fill=0x5A), expected_output(plan, tile, fill=0x5A))
    return low


@needs.mlir
def test_the_broadcast_lane_exchange_runs_on_the_interpreter():
    src, dst = _broadcast_lane_slice()
    low = _interpreted(plan_conversion(src, dst, "gfx950", 8), 8, seed=3)
    assert low.report["isa_counts"]["permlane16_swap"] == 1 and not low.differences


def test_a_broadcast_slice_whose_lanes_hold_their_own_copy_needs_no_lane_move():
    # corpus slice0(mfma16)->slice0(blocked[1x1,t1x64,o10]), gfx942, fp16, 1 wave, 64 elements: src
    # lanes 16-63 repeat lanes 0-15 (zero lane columns), so dst lane l finds element l in its own
    # lane, in register l >> 4: byte selects and a select tree only; before, 11 instructions with
    # ds_bpermute and ds_swizzle.  The gather does it in 3 (one select fused with the byte permute
    # beside it: a v_perm_b32 with a per-lane selector), its selects on two lane masks (4 setup
    # SALU); the dup exchanges (src lane bits 4 and 5 take the two src register bits) in 3 as well,
    # two per-lane byte permutes then one select, on one mask each: 52 modelled cycles against 56
    # (both with their per-lane selector's 3 setup VALU, valu_lane_selector; 28 against 32 without).
    src = _layout([[16], [32]], [[1], [2], [4], [8], [0], [0]], [], [64])
    dst = _layout([], [[1], [2], [4], [8], [16], [32]], [], [64])
    by_builder = {p.notes[-1].split(";")[0]: p for p in reversed(candidate_plans(src, dst, "gfx942", 16))}
    gather = by_builder["in-wave builder: gather"]
    assert {k: v for k, v in gather.counts().items() if v} == {"v_cndmask": 2, "v_perm_b32": 1, "total": 3}
    assert sum(isinstance(s, PermSelect) for s in gather.steps) == 1 and gather.cost == 56
    assert gather.overhead == {"salu_vcc": 4, "valu_lane_selector": 3}
    plan = plan_conversion(src, dst, "gfx942", 16)
    counts = {k: v for k, v in plan.counts().items() if v}
    assert plan.verified and plan.strategy == "registers" and plan.notes[-1].startswith("in-wave builder: dup exchange")
    assert counts == {"v_cndmask": 1, "v_perm_b32": 2, "total": 3} and plan.cost == 52
    assert sum(isinstance(s, PermSelect) for s in plan.steps) == 2


def test_a_16_bit_register_reordering_that_splits_every_dword_needs_one_perm_per_dst_dword():
    # corpus blocked[2x2,t64x1,o10]->blocked[2x2,t64x1,o01], fp16, 1 wave, 128x8: the same 16
    # elements per lane, dwords pack along dim1 in src and along dim0 in dst, so no dst dword is a
    # src dword and each takes one v_perm_b32 of two src dwords; renaming cannot do it.
    lane = [[2, 0], [4, 0], [8, 0], [16, 0], [32, 0], [64, 0]]
    src = _layout([[0, 1], [1, 0], [0, 2], [0, 4]], lane, [], [128, 8])
    dst = _layout([[1, 0], [0, 1], [0, 2], [0, 4]], lane, [], [128, 8])
    assert len(_lane0_dwords(dst) - _lane0_dwords(src)) == 8
    plan = plan_conversion(src, dst, "gfx942", 16)
    counts = {k: v for k, v in plan.counts().items() if v}
    assert plan.verified and counts == {"v_perm_b32": 8, "total": 8}


def test_a_slice_read_at_warp_dependent_lanes_moves_by_one_per_warp_bpermute():
    # corpus slice1(mfma32T)->slice1(blocked[1x1,t16x4,o01]), gfx950, fp32, 8 waves, 64 elements:
    # dst warp bit 0 is element bit 4, which src holds in lane bit 4 of every warp, so warp w reads
    # its own lanes l ^ 16 * (w & 1): one ds_bpermute whose address depends on the warp (Triton 3.9:
    # one ds_bpermute and 3 VALU); before, an LDS round trip with a barrier (4 instructions).
    from convert_checker import check_certificate
    from linlayout.synth.preimage import normalize, wave_local_map

    src = _layout([], [[1], [2], [4], [8], [16], [0]], [[0], [32], [0]], [64])
    dst = _layout([], [[1], [2], [4], [8], [0], [0]], [[16], [32], [0]], [64])
    wm = wave_local_map(normalize(src, dst, 64))
    assert not wm.wave_local and wm.warp_lane_offsets == [16, 0, 0]
    plan = plan_conversion(src, dst, "gfx950", 32)
    assert plan.verified and plan.strategy == "lanes"
    assert {k: v for k, v in plan.counts().items() if v} == {"ds_bpermute": 1, "total": 1}
    (lane,) = plan.steps[:1]
    warps = np.arange(8)[:, None]
    assert np.array_equal(np.asarray(lane.src_lane)[:, :16], np.arange(16)[None, :] ^ (16 * (warps & 1)))
    check_certificate(plan.to_certificate())


@needs.mlir
def test_the_per_warp_bpermute_runs_on_the_interpreter():
    src = _layout([], [[1], [2], [4], [8], [16], [0]], [[0], [32], [0]], [64])
    dst = _layout([], [[1], [2], [4], [8], [0], [0]], [[16], [32], [0]], [64])
    low = _interpreted(plan_conversion(src, dst, "gfx950", 32), 32, seed=5)
    assert low.report["isa_counts"]["ds_bpermute"] == 1 and not low.differences


def _byte_transpose() -> tuple[LinearLayout, LinearLayout]:
    # 8-bit, 64x16, 1 wave: each lane holds a 4x4 block of bytes, its dwords along dim1 in src and
    # along dim0 in dst: dst dword j is byte j of the four src dwords (a 4x4 byte transpose)
    lane = [[4, 0], [8, 0], [16, 0], [32, 0], [0, 4], [0, 8]]
    src = _layout([[0, 1], [0, 2], [1, 0], [2, 0]], lane, [], [64, 16])
    dst = _layout([[1, 0], [2, 0], [0, 1], [0, 2]], lane, [], [64, 16])
    return src, dst


def test_a_4x4_byte_transpose_shares_its_first_perms():
    # Each dst dword takes one byte of four src dwords: three v_perm_b32 alone (12), but the first
    # level pairs src dwords (0, 1) and (2, 3) for every dst dword, so two registers per pair hold
    # the byte pairs of all four (4 v_perm_b32) and one v_perm_b32 per dst dword joins them (4).
    src, dst = _byte_transpose()
    plan = plan_conversion(src, dst, "gfx942", 8)
    assert plan.verified and {k: v for k, v in plan.counts().items() if v} == {"v_perm_b32": 8, "total": 8}


@needs.mlir
def test_the_byte_transpose_runs_on_the_interpreter():
    src, dst = _byte_transpose()
    low = _interpreted(plan_conversion(src, dst, "gfx942", 8), 8, seed=7)
    assert low.report["isa_counts"]["v_perm_b32"] == 8 and not low.differences


def test_a_fused_perm_select_does_what_its_certificate_says_in_every_slot_it_lists():
    """Where one of the two permutes fused into a ``PermSelect`` left a slot zero (a slot no one
    reads), the fused selector copies there what the other selector copies, so every slot the
    step lists (its element-level select) is what ``v_perm_b32`` writes: no listed slot has a
    constant byte under either selector.  The three AMD corpus cases whose fusion met such a slot."""
    import json
    from pathlib import Path

    from linlayout.synth.emulator import verify

    data = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "triton_amd_corpus.json"
    cases = {(c["name"], c["arch"], c["dtype"]): c for c in json.loads(data.read_text())["cases"]}
    bits = {"i8": 8, "fp8": 8, "bf16": 16}
    for key in [("slice1(dotA32(kw8))->slice1(blocked[1x1,t64x1,o01])", "gfx950", "i8"),
                ("slice0(mfma16)->slice0(blocked[1x1,t1x64,o10])", "gfx90a", "fp8"),
                ("slice1(dotA32(kw4))->slice1(blocked[1x1,t64x1,o01])", "gfx90a", "bf16")]:
        c = cases[key]
        plan = plan_conversion(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), c["arch"],
                               bits[c["dtype"]])
        fused = [s for s in plan.steps if isinstance(s, PermSelect)]
        assert fused, key
        slots_per_dword = 32 // bits[c["dtype"]]
        for step in fused:
            for slot in (d % slots_per_dword for d in step.dst):
                for selector in (step.sel0, step.sel1):
                    for byte in range(4 // slots_per_dword):
                        code = (selector >> (8 * (slot * (4 // slots_per_dword) + byte))) & 0xFF
                        assert code < 8, (key, hex(step.sel0), hex(step.sel1), slot)
        assert verify(plan, certificate=False).ok


def _dot_slice() -> tuple[LinearLayout, LinearLayout]:
    # corpus slice1(dotA16(kw8))->slice1(blocked[4x1,t32x2,o01]), gfx942, fp8, 2 waves, 128 elements:
    # src lane l holds elements l % 16 + 16 r (8 bytes, 2 dwords), lanes 16-63 repeat lanes 0-15;
    # dst lane l < 32 holds elements 4 l .. 4 l + 3 (one dword), lanes 32-63 repeat lanes 0-31
    src = _layout([[16], [32], [64]], [[1], [2], [4], [8], [0], [0]], [[0]], [128])
    dst = _layout([[1], [2]], [[4], [8], [16], [32], [64], [0]], [[0]], [128])
    return src, dst


def test_a_src_register_bit_bound_for_a_copied_lane_bit_takes_one_select():
    # Dst lane bit 4 wants src register bit 2 (the dword), and src lane bit 4 holds copies: lane l
    # with bit 4 set picks the second dword itself (one v_cndmask, a dup exchange), where the
    # exchange without it shipped the dword through ds_swizzle between two selects and moved two
    # units through the 4x4 byte transpose after it.  Then the byte transpose in each quad (2 DPP
    # moves, 2 per-lane v_perm_b32) and one ds_bpermute: 6 instructions (Triton 3.9: 8 ds_write_b8,
    # a barrier, a ds_read_b32 and 4 VALU; ours before, 12 with 10 VALU).  Both build their two per-lane
    # v_perm selectors on two lane bits in the prologue (6 setup VALU, valu_lane_selector): 260 modelled
    # cycles against 364 (212 against 316 without them; the ds_bpermute's address program is 6 setup VALU
    # in both, cost.bpermute_address_valu).  With them priced the planner takes an LDS
    # round trip instead (9 instructions, less setup; on the corpus bench region 12 and setup 7 against 9 and 14).
    src, dst = _dot_slice()
    plan = plan_conversion(src, dst, "gfx942", 8, strategy="registers")
    assert plan.verified and plan.notes[-1].startswith("in-wave builder: dup exchange")
    # (the select, on src lane bit 4, a masked identity DPP move: linlayout.synth.ir.Program.emit's
    # dpp_selects; its mask's 2 SALU become 2 wait states, 260 -> 256 modelled cycles)
    assert {k: v for k, v in plan.counts().items() if v} == {"dpp": 3, "v_perm_b32": 2, "ds_bpermute": 1, "total": 6}
    assert plan.cost == 256 and plan.overhead["valu_lane_selector"] == 6 and plan.overhead["valu_bpermute_addr"] == 6
    undup = [p for p in candidate_plans(src, dst, "gfx942", 8) if p.notes[-1].startswith("in-wave builder: exchange")]
    assert [(p.counts()["total"], p.cost) for p in undup] == [(12, 364)]
    assert plan_conversion(src, dst, "gfx942", 8).strategy == "lds"


@needs.mlir
def test_the_dup_exchange_runs_on_the_interpreter():
    src, dst = _dot_slice()
    low = _interpreted(plan_conversion(src, dst, "gfx942", 8, strategy="registers"), 8, seed=5)
    counts = low.report["isa_counts"]
    assert (counts["v_cndmask"], counts["dpp"], counts["ds_bpermute"], counts["ds_swizzle"]) == (0, 3, 1, 0)
    assert not low.differences


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
@pytest.mark.parametrize("bits", [8, 16, 32])
def test_every_dup_exchange_schedule_builds_a_verified_plan(arch, bits):
    # every schedule of the dup-exchange family (with and without the dup prefix), not only the one
    # the planner builds, on the emulator: the broadcast slices above and one whose dst broadcasts too
    from linlayout.synth import convert
    from linlayout.synth.context import ConversionContext
    from linlayout.synth.emulator import verify
    from linlayout.synth.exchanges import SchedulePlanner, build_schedule, exchange_applicable

    pairs = [_dot_slice(), _broadcast_lane_slice(),
             (_layout([[1], [2], [8], [16], [32], [64]], [[0], [0], [0], [0], [0], [4]], [], [128]),
              _layout([[1], [2]], [[4], [8], [16], [32], [64], [0]], [], [128]))]
    built = 0
    for src, dst in pairs:
        ctx = ConversionContext.create(src, dst, arch, bits)
        n_dst = dst.in_dim_size("register")
        for wm in convert._wave_maps(ctx.problem):  # the maps the planner tries
            up = convert._unit_problem(ctx, wm)
            if not exchange_applicable(up.reg_cols, up.lane_cols, up.n_sr):
                continue
            for K in up.packings:
                planner = SchedulePlanner(ctx, up.reg_cols, up.lane_cols, up.n_sr, K, dups=True)
                for sched in planner.candidates():
                    program = convert._in_wave_program(
                        ctx, wm, up, K, "dup exchange:" + sched.name,
                        lambda prog, units, sched=sched, planner=planner:
                        build_schedule(prog, sched, planner, units, n_dst))
                    plan = convert._finish_in_wave(ctx, program)
                    assert verify(plan).ok, (sched.name, sched.moves)
                    built += any(mv[0] == "dx" for mv in sched.moves)
    assert built >= 6
