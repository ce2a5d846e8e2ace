"""PTX instruction classes (linlayout.lowering.ptx_counts) and a plan's counts in its target's
classes (linlayout.lowering.plan_counts)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from linlayout.cli.bench import ptx_mix
from linlayout.dtypes import dtype_bits
from linlayout.layout import LinearLayout
from linlayout.lowering.isa import CLASS_KEYS, VALU_SUB_KEYS
from linlayout.lowering.plan_counts import plan_isa_counts, plan_ptx_counts
from linlayout.lowering.ptx_counts import PTX_COUNT_KEYS, ptx_class, ptx_counts, ptx_mnemonic
from linlayout.synth.convert import plan_conversion
from linlayout.synth.cost import cost_model
from repo_data import baseline_cases, family_corpus

PTX = """
	.reg .b32 	%r<40>;
	.loc	1 259 13                        // make_corpus.py:259:13
$L__BB0_1:
	// begin inline asm
	shfl.sync.idx.b32	%r1, %r2, %r3, 31, -1;
	// end inline asm
	shfl.sync.bfly.b32	%r4, %r2, 1, 31, -1;
	prmt.b32 	%r5, %r1, %r4, 0x5410U;
	@%p1 selp.b32 	%r6, %r5, %r1, %p2;
	@!%p1 st.shared.v2.b32 	[%r7], {%r5, %r6};
	bar.sync 	0;
	ld.shared.v4.b32 	{%r8, %r9, %r10, %r11}, [%r7];
	ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r12, %r13, %r14, %r15}, [%r7];
	stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r7], {%r12, %r13, %r14, %r15};
	mov.b32 	%r16, {%rs1, %rs2};
	cvt.u32.u16 	%r17, %rs3;
	{
	}
"""


def test_ptx_counts_classifies_every_instruction_line_once():
    assert ptx_counts(PTX) == {"total": 11, "shfl.sync": 2, "prmt": 1, "selp": 1, "ld.shared": 1, "st.shared": 1,
                               "ldmatrix": 1, "stmatrix": 1, "bar.sync": 1, "mov": 1, "other": 1}
    assert ptx_counts(PTX.splitlines()) == ptx_counts(PTX)


@pytest.mark.parametrize("line, mnemonic", [
    ("\t@%p3 st.shared.b8 [%r1], %rs1;", "st.shared.b8"),
    ("  // shfl.sync.idx.b32 in a comment", None),
    (".loc 1 2 3", None),
    ("$L__BB0_2:", None),
    ("\tret;", "ret"),
])
def test_ptx_mnemonic(line, mnemonic):
    assert ptx_mnemonic(line) == mnemonic


@pytest.mark.parametrize("mnemonic, cls", [
    ("shfl.sync.up.b32", "shfl.sync"), ("barrier.sync", "bar.sync"), ("bar.warp.sync", "bar.sync"),
    ("ld.shared.u8", "ld.shared"), ("ld.global.b32", "other"), ("movmatrix.sync.aligned.m8n8.trans.b16", "other"),
    ("mov.u32", "mov"), ("selp.b16", "selp"), ("shfl", "other"),
])
def test_ptx_class(mnemonic, cls):
    assert ptx_class(mnemonic) == cls


def _fake_plan(counts: dict, overhead: dict, arch: str = "sm_90"):
    return SimpleNamespace(arch=arch, counts=lambda: dict(counts, total=sum(counts.values())), overhead=overhead)


def test_plan_ptx_counts_maps_kinds_and_setup():
    plan = _fake_plan({"shfl": 2, "shfl.sync.bfly": 1, "selp": 4, "prmt": 1, "mov": 2, "lds_write": 3,
                       "lds_read": 2, "s_barrier": 1, "bar.sync": 1, "ldmatrix.x4.trans": 1, "v_cndmask": 0},
                      {"alu_shared_addr": 5, "scoreboard_waits": 1})
    assert plan_ptx_counts(plan) == {"total": 23, "shfl.sync": 3, "prmt": 1, "selp": 4, "ld.shared": 2,
                                     "st.shared": 3, "ldmatrix": 1, "stmatrix": 0, "bar.sync": 2, "mov": 2,
                                     "other": 5}
    assert tuple(plan_ptx_counts(plan)) == PTX_COUNT_KEYS


def test_plan_ptx_counts_refuses_amd_instructions():
    with pytest.raises(ValueError, match="'v_cndmask', which is no PTX instruction"):
        plan_ptx_counts(_fake_plan({"v_cndmask": 2}, {}))


def test_plan_isa_counts_of_real_plans_total_their_steps_and_setup():
    for case in baseline_cases()[:6]:
        plan = plan_conversion(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]),
                               case["arch"], dtype_bits(case["dtype"]))
        counts = plan_isa_counts(plan)
        assert counts["total"] == plan.total_with_overhead() == sum(counts[k] for k in CLASS_KEYS)
        steps = plan.counts()
        assert all(counts[k] == steps[k] for k in VALU_SUB_KEYS if k in steps)
        assert counts["valu"] >= sum(steps[k] for k in VALU_SUB_KEYS if k in steps)


def test_plan_isa_counts_of_rdna_kinds():
    plan = _fake_plan({"permlane16": 4, "dpp": 2, "v_cndmask": 1, "lds_write": 1}, {"valu_x": 1, "s_waitcnt": 1},
                      "gfx1100")
    assert {k: v for k, v in plan_isa_counts(plan).items() if v} == {
        "total": 10, "valu": 8, "dpp": 2, "v_cndmask": 1, "lds_write": 1, "s_waitcnt": 1}


def test_plan_isa_counts_count_a_gfx12_barrier_twice():
    """gfx1200 and gfx1250 split a barrier into s_barrier_signal + s_barrier_wait, both s_barrier."""
    for arch, barriers in (("gfx1100", 1), ("gfx1200", 2), ("gfx1250", 2), ("gfx942", 1)):
        counts = plan_isa_counts(_fake_plan({"lds_write": 1, "s_barrier": 1, "lds_read": 1}, {}, arch))
        assert (counts["s_barrier"], counts["total"]) == (barriers, 2 + barriers)


def test_plan_isa_counts_refuses_unknown_kinds():
    with pytest.raises(ValueError, match="'shfl.sync.idx', which is no AMD instruction class"):
        plan_isa_counts(_fake_plan({"shfl.sync.idx": 1}, {}, "gfx1100"))
    with pytest.raises(ValueError, match="setup estimate 'lane_masks' has no ISA class"):
        plan_isa_counts(_fake_plan({"v_cndmask": 1}, {"lane_masks": 2}, "gfx1100"))


def test_plan_ptx_counts_of_real_nvidia_plans_name_every_step():
    """Every step of an NVIDIA plan lands in a named PTX class: ``other`` holds the setup alone, and
    ``movmatrix``, which the corpus's classes put there (every 4th of the first 40 cases, some of
    them movmatrix plans)."""
    for case in family_corpus("nvidia")["cases"][:40:4]:
        plan = plan_conversion(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]),
                               case["arch"], dtype_bits(case["dtype"]))
        counts = plan_ptx_counts(plan)
        setup = sum(v for k, v in plan.overhead.items() if k != "scoreboard_waits")
        assert counts["other"] == setup + plan.counts()["movmatrix"], case["name"]
        assert counts["total"] == plan.counts()["total"] + setup, case["name"]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_ptx_mix_prices_each_class_as_the_cost_model_prices_it(arch):
    """bench prices a PTX mix under AMD kind names (PTX_AS_MIX): only sound while the NVIDIA cost
    model prices each PTX instruction as the kind it is named after."""
    cm = cost_model(arch)
    for ptx, amd in (("shfl", "ds_bpermute"), ("prmt", "v_perm_b32"), ("selp", "v_cndmask"), ("mov", "v_mov")):
        assert cm.instruction(ptx) == cm.instruction(amd), (ptx, amd)
    counts = {"total": 12, "shfl.sync": 1, "prmt": 2, "selp": 3, "ld.shared": 1, "st.shared": 1, "ldmatrix": 1,
              "stmatrix": 0, "bar.sync": 1, "mov": 1, "other": 1}
    assert ptx_mix(counts) == {"total": 12, "valu": 7, "ds_bpermute": 1, "v_perm_b32": 2, "v_cndmask": 3, "v_mov": 1,
                               "lds_write": 1, "lds_read": 2, "s_barrier": 1}
