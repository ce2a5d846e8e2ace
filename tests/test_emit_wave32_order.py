"""The order the conversion kernel emits a wave32 plan's register steps in, and the permlane lane
selectors it computes before its counted region (linlayout.synth.hazards.issue_slots,
linlayout.lowering.emit.plan_ops.PlanEmitter.permlane_selector).

On gfx11 and later a VALU instruction that reads one of the four VALU results before it gets an
``s_delay_alu`` (an SALU instruction of the region); the kernel emits the steps of an RDNA plan without
LDS accesses apart (slots of independent steps, pinned), and the low word of each permlane selector in
an SGPR of the prologue (the high word a literal).  The named corpus cases are the wave32 corpus's register plans that lost to
Triton by such SALU (docs/benchmarks.md, the wave32 section); their compiled counts are pinned here and
each reordered kernel converts its tile on the wave interpreter.
"""

from __future__ import annotations

import numpy as np
import pytest

from linlayout import LinearLayout
from linlayout.cli.bench import kernel_plan
from linlayout.dtypes import dtype_bits
from linlayout.synth.hazards import issue_slots
from linlayout.synth.steps import dwords_per_slot, slot_dwords, slots_per_dword

import needs
from repo_data import family_corpus

#: (case name, arch, dtype, waves) -> (total, valu, salu) of the compiled ``conv`` region of the
#: benchmark kernel's plan.  Before: 37 (valu 32, salu 5), 38 (32, 6), 75 (64, 11), 76 (64, 11:
#: s_waitcnt 1) and 9 (5, 4); Triton's regions: 36, 35, 68, 73 and 7.
CASES = {
    ("dotAwmma2.16x16T(kw8)->dotAwmma2.16x16T(kw16)", "gfx1200", "i8", 1): (33, 32, 1),
    ("wmma2.16x16->dotBwmma2.16x16(kw4)", "gfx1200", "fp32", 2): (33, 32, 1),
    ("dotAwmma2.16x16(kw8)->dotAwmma2.16x16(kw16)", "gfx1200", "fp8", 2): (64, 64, 0),
    ("dotAwmma2.16x16T(kw4)->dotAwmma2.16x16T(kw8)", "gfx1200", "fp32", 8): (64, 64, 0),
    # 7 (8 while the prologue built a selector with v_cmp/v_cndmask: LLVM's s_delay_alu for its last VALU
    # result landed at the region's start)
    ("slice1(wmma1.16x16T)->slice1(blocked[2x1,t32x1,o01])", "gfx1100", "i8", 1): (7, 5, 2),
}


def _plan(key, strategy: str = "auto"):
    name, arch, dtype, waves = key
    case, = [c for c in family_corpus("wave32")["cases"]
             if (c["name"], c["arch"], c["dtype"], c["num_warps"]) == key]
    src, dst = LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])
    # the packed sides these pins describe (the unpacked forms' plans: tests/test_unpacked_src.py, _dst.py)
    return kernel_plan(src, dst, arch, dtype_bits(dtype), strategy, unpacked_src=False, unpacked_dst=False)


def _dwords(plan, slots) -> set[int]:
    p, dps = slots_per_dword(plan.element_bits), dwords_per_slot(plan.element_bits)
    return {d for s in slots for d, _, _ in slot_dwords(s, p, dps)}


@pytest.mark.parametrize("key", sorted(CASES))
def test_the_slots_order_every_step_after_the_steps_it_depends_on_and_split_at_each_read_of_the_slot(key):
    plan = _plan(key)
    slots = issue_slots(plan)
    order = [i for slot in slots for i in slot]
    assert sorted(order) == list(range(len(plan.steps))) and len(slots) > 1
    at = {i: n for n, i in enumerate(order)}
    steps = plan.steps
    for j, later in enumerate(steps):  # each dependence of the plan's order is kept
        for i in range(j):
            reads_i, writes_i = _dwords(plan, steps[i].reads()), _dwords(plan, steps[i].writes())
            reads_j, writes_j = _dwords(plan, later.reads()), _dwords(plan, later.writes())
            if writes_i & (reads_j | writes_j) or reads_i & writes_j:
                assert at[i] < at[j], (i, j)
    for slot in slots:  # no step of a slot reads what another step of it writes
        written = set()
        for i in slot:
            assert steps[i].renaming or written.isdisjoint(_dwords(plan, steps[i].reads()))
            written |= _dwords(plan, steps[i].writes())


def test_the_dot_operand_widening_is_its_selects_then_its_permlanes_then_its_selects():
    plan = _plan(("dotAwmma2.16x16T(kw8)->dotAwmma2.16x16T(kw16)", "gfx1200", "i8", 1))
    kinds = [sorted({plan.steps[i].op for i in slot}) for slot in issue_slots(plan)]
    assert kinds == [["select"], ["lane"], ["mov", "select"]]
    assert [len(slot) for slot in issue_slots(plan)] == [8, 8, 17]


def test_the_planner_prices_each_permlane_selector_and_the_wave32_lane_mask_as_one_setup_salu():
    plan = _plan(("dotAwmma2.16x16T(kw8)->dotAwmma2.16x16T(kw16)", "gfx1200", "i8", 1))
    assert plan.counts()["permlane16"] == 8  # all with one selector: one s_mov_b32 in the prologue
    # the selects' one lane mask: s_mov_b32 vcc_lo (WAVE32_LANE_MASK_SALU); no salu_delay_alu: its reads are apart
    assert plan.overhead == {"salu_vcc": 1, "salu_permlane_selector": 1}


@needs.mlir
def test_the_wave32_lane_mask_and_the_permlane_selector_compile_to_one_s_mov_b32_each():
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.isa import region_lines

    plan = _plan(("dotAwmma2.16x16T(kw8)->dotAwmma2.16x16T(kw16)", "gfx1200", "i8", 1))
    isa = lower_conversion(plan, binary=False, cache=False).compiled.isa
    setup = [ln.split() for ln in region_lines(isa, "setup") if not ln.strip().startswith(";")]
    assert setup == [["s_mov_b32", "s8,", "0x76543210"], ["s_mov_b32", "vcc_lo,", "0xffff0000"]]
    assert sum(plan.overhead.values()) == len(setup)  # salu_vcc 1 + salu_permlane_selector 1


def _check_compiled(plan, want: tuple[int, int, int]):
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.emit.host import distinct_tile, expected_output, interpret

    low = lower_conversion(plan, binary=False, cache=False)
    counts = low.report["isa_counts"]
    assert (counts["total"], counts["valu"], counts["salu"]) == want
    assert low.differences == {}
    tile = distinct_tile(low.kernel.shape, plan.element_bits, seed=3)
    assert np.array_equal(interpret(low.kernel, tile, fill=0x5A), expected_output(plan, tile, fill=0x5A))
    return low


@needs.mlir
def test_with_its_selectors_priced_the_8_wave_fp8_transpose_is_an_lds_round_trip():
    """gfx1200 fp8 ``wmma2.16x16T->wmma2.16x16``, 8 waves: a lanes plan of 16 DPP moves, 8 ``v_perm_b32``,
    16 selects and 4 permlanes compiled to 62 (17 SALU: ``s_delay_alu`` of its two dependent chains);
    with the permlane selectors' setup priced the planner takes an LDS round trip: 29 (1 store, 8 loads,
    12 ``v_perm_b32``, the barrier) before the 8-bit half stores shared their repacks, and with them 16
    (8 byte-pair stores from 4 ``v_perm_b32``, one load, the barriers), against Triton's 51."""
    plan = _plan(("wmma2.16x16T->wmma2.16x16", "gfx1200", "fp8", 8))
    assert plan.strategy == "lds" and plan.verified
    low = _check_compiled(plan, (16, 4, 0))
    assert (low.report["isa_counts"]["lds_write"], low.report["isa_counts"]["lds_read"]) == (8, 1)


@needs.mlir
@pytest.mark.parametrize("key", sorted(CASES))
def test_the_compiled_region_has_the_pinned_counts_and_the_kernel_converts(key):
    from linlayout.lowering.isa import region_lines

    low = _check_compiled(_plan(key), CASES[key])
    region = region_lines(low.compiled.isa, "conv")
    assert not any(ln.split()[0] == "s_mov_b32" for ln in region)  # the selectors are set before it
    assert any(ln.split()[0] == "s_mov_b32" for ln in region_lines(low.compiled.isa, "setup"))


@needs.mlir
def test_the_delay_estimate_against_the_compiled_s_delay_alu():
    """``valu_delays`` (the planner's ``salu_delay_alu`` setup estimate) against the ``s_delay_alu`` LLVM
    put in the region: gfx1250 fp8 ``wmma3.16x64->dotAwmma3.16x64(kw8)``, 4 waves (two dependent
    chains of DPP, ``v_perm_b32``, masked DPP merges and permlane swaps) 7 and 6 (7 and 7 before its two merges
    into values read later became a copy and the masked move in place, linlayout.synth.ir.Program.emit's
    ``dpp_selects``, in place of a DPP move and a ``v_cndmask``; the planner's pick since session 24, when its
    src, in every wave, goes through LDS with no barrier: lds_path._exchanges); the gfx1100 i8 ``wmma1.16x16->
    dotAwmma1.16x16(kw16)``, 8 waves, in registers 12 estimated, 9 compiled (14 and 10 before session 20's
    random-campaign fixes shortened its register plan; 11 compiled when one region held the setup and the store
    addresses; the planner takes an LDS
    round trip for it, 15 instructions against 40); the dot operand widening 0 (its slots keep every read
    5 instructions from its writer; LLVM's dual-issue lines bring one pair closer: 1)."""
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.plan_counts import plan_isa_counts
    from linlayout.synth.hazards import valu_delays

    for key, strategy, estimate, compiled in (
            (("wmma3.16x64->dotAwmma3.16x64(kw8)", "gfx1250", "fp8", 4), "registers", 7, 6),
            (("wmma1.16x16->dotAwmma1.16x16(kw16)", "gfx1100", "i8", 8), "registers", 12, 9),
            (("dotAwmma2.16x16T(kw8)->dotAwmma2.16x16T(kw16)", "gfx1200", "i8", 1), "auto", 0, 1)):
        plan = _plan(key, strategy)
        assert plan.strategy == "lanes" and valu_delays(plan) == estimate
        assert plan.overhead.get("salu_delay_alu", 0) == estimate
        counts = lower_conversion(plan, binary=False, cache=False).report["isa_counts"]
        assert counts["salu"] == counts["s_delay_alu"] == compiled  # every SALU of these regions is an s_delay_alu
        # the plan's counts hold the estimate alike, with the setup's (its PermSelect selectors' lane-bit masks)
        assert plan_isa_counts(plan)["s_delay_alu"] == estimate + plan.overhead.get("salu_lane_selector_delay", 0)
    assert _plan(("wmma1.16x16->dotAwmma1.16x16(kw16)", "gfx1100", "i8", 8)).strategy == "lds"


def _dpp(dst: list[int], src: list[int]):
    from linlayout.synth.steps import Lane

    return Lane(kind="dpp:row_shr:1", dst=dst, src=src, src_lane=np.arange(32),
                isa={"ctrl": 0x111, "row_mask": 15, "bank_mask": 15, "bound_ctrl": 1})


def _swizzle(dst: list[int], src: list[int]):
    from linlayout.synth.steps import Lane

    return Lane(kind="ds_swizzle:0x1f", dst=dst, src=src, src_lane=np.arange(32), isa={"offset": 0x1f})


def test_the_delay_estimate_counts_valu_instructions_only():
    """``valu_delays`` on hand-made gfx1100 step lists (their order is their dependences): a chain of three
    DPP moves of 64-bit elements is six VALU instructions, each of the last four reading the result of the
    one two before it: four close readers, two ``s_delay_alu`` (one covers two); a DPP read of a DPP result
    with four dependent ``ds_swizzle`` between them (DS, no VALU clock: ``VALU_DEP_N`` counts VALU
    instructions) is one VALU instruction behind it: one ``s_delay_alu``."""
    from types import SimpleNamespace

    from linlayout.synth.hazards import valu_delays

    chain = SimpleNamespace(steps=[_dpp([0], [1]), _dpp([2], [0]), _dpp([3], [2])], arch="gfx1100", element_bits=64)
    assert issue_slots(chain) == [[0], [1], [2]] and valu_delays(chain) == 2
    through_ds = SimpleNamespace(steps=[_dpp([0], [1]), _swizzle([2], [0]), _swizzle([3], [2]), _swizzle([6], [3]),
                                        _swizzle([7], [6]), _dpp([8], [0, 7])], arch="gfx1100", element_bits=32)
    assert [i for slot in issue_slots(through_ds) for i in slot] == list(range(6)) and valu_delays(through_ds) == 1
