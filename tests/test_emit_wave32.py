"""Conversion kernels of 32-lane waves (gfx1100, gfx1200, gfx1250) end to end: plan -> ROCDL MLIR ->
wave interpreter and ISA.

A sample of Triton's wave32 corpus (benchmarks/data/triton_wave32_corpus.json), chosen so that its
plans hold every step kind the planner makes there on every arch: each kernel runs on the MLIR wave
interpreter (32-lane waves) and leaves exactly the expected tile, which is also the plan emulator's;
its compiled ``conv`` region holds exactly the plan's instructions (``expected_isa_counts``: the
cross-lane, select, byte-permute, LDS and barrier instructions, RDNA's ``v_permlane16/x16`` and the
fused DPP selects) and no memory access of the kernel's own.
"""

from __future__ import annotations

import numpy as np
import pytest

from linlayout import LinearLayout
from linlayout.dtypes import dtype_bits

import needs
from repo_data import family_corpus

pytestmark = needs.mlir

from test_emit_conversion import _cache  # noqa: E402, F401  (the module's own compile cache)
from linlayout.lowering.conversion import lower_conversion  # noqa: E402
from linlayout.lowering.emit.conversion_kernel import source_tuples  # noqa: E402
from linlayout.lowering.emit.host import distinct_tile, emulated_output, expected_output, interpret  # noqa: E402
from linlayout.lowering.report import expected_isa_counts  # noqa: E402
from linlayout.synth.convert import plan_conversion  # noqa: E402
from linlayout.synth.plan import Plan  # noqa: E402

#: Corpus cases whose plans together use every step kind (and LDS access width) the planner makes for
#: the corpus on each of the three arches.
#: (289: gfx1200's 1-byte stores since session 22, whose swizzled ordered layouts took them from the others.)
SAMPLE = (6, 8, 9, 13, 25, 27, 33, 37, 65, 72, 73, 78, 80, 97, 104, 111, 114, 120, 123, 125, 127, 133, 142, 145, 149, 160,
          168, 187, 203, 204, 222, 226, 235, 243, 252, 269, 273, 282, 289, 304, 310, 322, 348, 358, 364, 374, 416, 420,
          425, 437, 439, 441, 452, 459, 461, 529, 584, 598, 602, 603, 609, 611)
#: The step kinds the sample covers on each arch (``_kind``).
LANE_KINDS = {"dpp:quad_perm", "dpp:row_ror", "dpp:row_xmask", "ds_bpermute", "permlane16", "permlanex16"}
KINDS = {
    # no corpus plan takes dpp8 there (gfx1200's do), nor since session 24 a ds_swizzle or a fused DPP select:
    # the plans that did convert srcs held in every wave, which go through LDS with no barrier (lds_path._exchanges)
    "gfx1100": LANE_KINDS,
    # dpp8: test_wave32_dpp8_kernel (the corpus plan that took it is an LDS one); no corpus plan takes a quad_perm
    # DPP move there since the ordered layouts (lds_path.ordered_design) made their round trips cheaper
    "gfx1200": LANE_KINDS - {"dpp:quad_perm"} | {"fused_dpp"},
    # no corpus plan takes a permlanex16 there since the ordered layouts, nor a quad_perm DPP move or a fused DPP
    # select since session 24's barrier-free round trips
    "gfx1250": LANE_KINDS - {"permlanex16", "dpp:quad_perm"} | {"permlane16_swap", "v_mov", "lds_load_tr:16",
                                                                 "lds_load_tr:8"},
}
COMMON_KINDS = {"barrier", "v_perm_b32", "perm_select", "v_cndmask", "rename"} | {
    f"{op}:{width}" for op in ("lds_load", "lds_store") for width in (1, 2, 4, 8, 16)}


def _plan(idx: int, strategy: str = "auto") -> Plan:
    case = family_corpus("wave32")["cases"][idx]
    src, element_bits = LinearLayout.from_json(case["src"]), dtype_bits(case["dtype"])
    return plan_conversion(src, LinearLayout.from_json(case["dst"]), case["arch"], element_bits, strategy=strategy,
                           src_tuple_dwords=source_tuples(src, element_bits))


def _kind(step) -> str:
    """A step's kind: a lane step's family (DPP: ``dpp:<control name>``), an LDS step's op and width
    (``lds_load_tr``: a transpose load), ``fused_dpp``, ``perm_select``, else its ``kind`` (renames,
    v_perm_b32, selects, permlane swaps) or op."""
    if step.op == "lane":
        return ":".join(step.kind.split(":")[:2]) if step.kind.startswith("dpp:") else step.kind.split(":")[0]
    if step.op in ("lds_load", "lds_store"):
        return f"{step.op}{'_tr' if getattr(step, 'transpose', 0) else ''}:{step.width_bytes}"
    return {"fused": "fused_dpp", "permsel": "perm_select"}.get(step.op) or getattr(step, "kind", step.op)


def check_wave32_kernel(plan: Plan, shape=None, seed: int = 0) -> None:
    """Interpret the plan's kernel on 32-lane waves, compare with the expected tile and the emulator;
    its ISA region is the plan's instructions."""
    assert plan.wave_size == 32
    low = lower_conversion(plan, binary=False, shape=shape)
    assert low.kernel.block == (32 * plan.num_warps, 1, 1)
    tile = distinct_tile(low.kernel.shape, plan.element_bits, seed=seed)
    want = expected_output(plan, tile, fill=0x5A)
    assert np.array_equal(interpret(low.kernel, tile, fill=0x5A), want), "interpreter output differs from the tile"
    assert np.array_equal(emulated_output(plan, tile, fill=0x5A), want), "plan emulator disagrees"
    counts = low.report["isa_counts"]
    exp = expected_isa_counts(plan)
    assert {k: counts[k] for k in exp} == exp, plan.pseudo_asm()
    assert low.differences == {}
    assert counts["vmem"] == 0 and counts["smem"] == 0  # loads, stores and cache invalidates stay outside


def test_the_sample_covers_every_step_kind_on_every_arch():
    kinds: dict[str, set[str]] = {}
    for idx in SAMPLE:
        plan = _plan(idx)
        kinds.setdefault(plan.arch, set()).update(_kind(st) for st in plan.steps)
    for arch, want in KINDS.items():
        assert kinds[arch] >= want | COMMON_KINDS, (arch, sorted((want | COMMON_KINDS) - kinds[arch]))


@pytest.mark.parametrize("idx", SAMPLE)
def test_wave32_corpus_conversion(idx):
    plan = _plan(idx)
    check_wave32_kernel(plan, seed=idx)


def test_wave32_dpp8_kernel():
    """gfx1200 bf16 ``blocked[1x2,t16x2,o10]->blocked[2x1,t2x16,o01]`` (corpus case 259) in registers opens
    with four ``dpp8`` moves; the planner takes an LDS round trip for it (its register plan's dependent
    chains cost ``s_delay_alu``s, linlayout.synth.hazards.valu_delays)."""
    plan = _plan(259, strategy="registers")
    assert plan.arch == "gfx1200" and sum(_kind(st) == "dpp8" for st in plan.steps) == 4
    assert _plan(259).strategy == "lds"
    check_wave32_kernel(plan, seed=259)


@pytest.mark.parametrize("idx,shape", [(8, (13, 50)), (13, (31, 9)), (133, (100,))])
def test_wave32_ragged_tiles(idx, shape):
    """A tensor smaller than the tile: the lanes outside it get an out-of-range buffer offset through a
    32-bit lane mask (``inverse.ballot.i32``)."""
    plan = _plan(idx)
    assert len(shape) == len(plan.src.out_dims)
    check_wave32_kernel(plan, shape=shape, seed=idx)


#: EF_AMDGPU_MACH_AMDGCN_GFX1100 / _GFX1200 / _GFX1250 (LLVM's ELF e_flags).
ELF_MACH = {"gfx1100": 0x041, "gfx1200": 0x048, "gfx1250": 0x049}


@pytest.mark.parametrize("idx", [133, 8, 13])  # one case per arch
def test_wave32_code_object_through_the_cli(idx, tmp_path, capsys):
    """``linlayout convert --emit fatbin`` links an HSA code object of the arch whose region is the plan."""
    import json
    import struct

    from linlayout.cli import main

    case = family_corpus("wave32")["cases"][idx]
    src, dst = tmp_path / "src.json", tmp_path / "dst.json"
    src.write_text(json.dumps(case["src"]))
    dst.write_text(json.dumps(case["dst"]))
    out = tmp_path / "k.hsaco"
    assert main(["convert", "--src", f"@{src}", "--dst", f"@{dst}", "--arch", case["arch"], "--dtype", case["dtype"],
                 "--json", "--emit", "fatbin", "-o", str(out)]) == 0
    r = json.loads(capsys.readouterr().out)
    b = out.read_bytes()
    assert b[:4] == b"\x7fELF" and struct.unpack_from("<I", b, 48)[0] & 0xFF == ELF_MACH[case["arch"]]
    assert r["plan_isa_differences"] == {} and r["isa_counts"]["permlane16"] == r["plan_counts"]["permlane16"]


def test_permlane_swap_of_a_register_duplicate_counts_its_copy():
    """gfx1250 i8 ``dotAwmma3.16x64(kw8)->dotAwmma3.16x64(kw16)`` (corpus case 50): src register bits 3
    and 4 have zero columns, so the dwords ``d``, ``d ^ 2``, ``d ^ 4``, ``d ^ 6`` hold the same elements and
    the kernel holds them in one VGPR; each ``v_permlane16_swap`` that trades lane bit 4 for register
    bit 3 swaps a value with itself and needs a ``v_mov`` copy first.  The plan counts the 8 copies with
    the 8 swaps, as the compiled region has them (it counted 8 instructions before)."""
    plan = _plan(50)
    assert (plan.arch, plan.counts()["v_mov"], plan.counts()["permlane16_swap"], plan.counts()["total"]) == \
        ("gfx1250", 8, 8, 16)
    check_wave32_kernel(plan, seed=50)
    counts = lower_conversion(plan, binary=False).report["isa_counts"]
    assert (counts["v_mov"], counts["permlane16_swap"], counts["valu"]) == (8, 8, 16)


def test_broadcast_gather_shares_its_selects_and_copies_before_dpp8():
    """gfx1100 fp8 ``slice0(blocked[1x4,t4x8,o10])->slice1(wmma1.16x16)`` (corpus case 436): each dst unit
    broadcasts lane ``k`` of every 8-lane group (``dpp8:[k,..,k]``) of a value picked per lane group.  The
    pick's select mask is free on the lanes no broadcast reads, so it is taken as lane bit 4's for every
    ``k``: the picks of one src pair are one ``v_perm_b32`` (2 in all, one per-lane selector; they were 16
    with 8 selectors, loaded as lane tables in the setup).  A ``dpp8`` move is in place (LLVM ties its old
    value to its source), so the 16 moves of the 2 values need 14 copies, which the plan counts as the
    compiled region has them.  Planned as the bench plans it (``kernel_plan``: the src packing chosen too),
    kept in registers: with the per-lane selectors priced (``valu_lane_selector``) the planner's own choice
    is an LDS round trip of 10 instructions (the next test)."""
    from linlayout.cli.bench import kernel_plan

    case = family_corpus("wave32")["cases"][436]
    plan = kernel_plan(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), case["arch"],
                       dtype_bits(case["dtype"]), strategy="registers")
    counts = plan.counts()
    assert (counts["v_perm_b32"], counts["dpp"], counts["v_mov"], counts["total"]) == (2, 16, 14, 32)
    check_wave32_kernel(plan, seed=436)
    low = lower_conversion(plan, binary=False)
    isa = low.report["isa_counts"]
    assert (isa["v_perm_b32"], isa["dpp"], isa["v_mov"], isa["valu"]) == (2, 16, 14, 32)
    assert low.report["setup_counts"]["vmem"] == 0


def test_broadcast_slice_goes_through_lds_once_its_selectors_are_priced():
    """The same case (wave32 corpus 436) as the bench plans it: the register plan's per-lane selectors and
    copies priced, an LDS round trip (2 stores, 4 loads, 4 ``v_perm_b32``; one barrier too before session 24: its src
    is in every wave, lds_path._exchanges; 1 store before its
    setup was priced with the src load line's offset registers, synth.src_offsets) ranks first; its compiled region is
    under Triton's 14 (15 with the kernel-argument load its region held before session 19)."""
    from linlayout.cli.bench import kernel_plan

    case = family_corpus("wave32")["cases"][436]
    plan = kernel_plan(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), case["arch"],
                       dtype_bits(case["dtype"]))
    counts = plan.counts()
    assert (plan.strategy, counts["lds_write"], counts["lds_read"], counts["v_perm_b32"], counts["total"]) == \
        ("lds", 2, 4, 4, 10)
    check_wave32_kernel(plan, seed=436)
    isa = lower_conversion(plan, binary=False).report["isa_counts"]
    assert isa["total"] < case["triton"]["total"] == 14
