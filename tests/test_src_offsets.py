"""The src load line's address registers (``ConversionContext.src_offsets``, linlayout.synth.src_offsets): the
argument's checks, the registers a load forms, and the setup estimate of a named corpus case whose LDS stores
take the load line's offset register whole (LLVM's common-subexpression elimination), against its compiled
setup."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from repo_data import family_corpus
from test_convert_context import DST, SRC  # 8 registers x 64 lanes over 16 x 32: dim1 bits 0-2 in registers

import needs
from linlayout import LayoutError, LinearLayout
from linlayout.dtypes import dtype_bits
from linlayout.synth import cost
from linlayout.synth.context import ConversionContext
from linlayout.synth.convert import candidate_plans, plan_conversion
from linlayout.synth.src_offsets import SrcOffsets, row_major_strides


@pytest.mark.parametrize("strides, match", [
    ((32,), r"must be 2 positive integers, one per out dim \['dim0', 'dim1'\]"),
    ((32, 0), "must be 2 positive integers"), ((32, True), "must be 2 positive integers"),
    ("ab", "must be 2 positive integers"), (32, "must be 2 positive integers"),
    ((1 << 27, 1), r"last byte offset 4026531902 is not below 2147483648"),
])
def test_bad_strides_are_one_line_layout_errors(strides, match):
    for make in (lambda: ConversionContext.create(SRC, DST, "gfx942", 16, src_global_strides=strides),
                 lambda: plan_conversion(SRC, DST, "gfx942", 16, src_global_strides=strides)):
        with pytest.raises(LayoutError, match=match) as err:
            make()
        assert "\n" not in str(err.value)


@pytest.mark.parametrize("plan", [plan_conversion, candidate_plans])
def test_an_nvidia_target_refuses_a_load_line(plan):
    # PTX addresses are priced without a load line's registers (cost.AddressRegisters.of): the input would be ignored
    with pytest.raises(LayoutError, match="src_global_strides: a src load line's address registers are an AMD "
                                          "kernel input; sm_90's plans price none"):
        plan(SRC, DST, "sm_90", 16, src_global_strides=(32, 1))


def test_no_load_line_is_no_register_and_the_default():
    ctx = ConversionContext.create(SRC, DST, "gfx942", 16)
    assert ctx.src_offsets is None and ctx.formed_addresses == () and cost.least_address_valu(ctx) == 1


def test_a_row_major_load_forms_one_register_per_class():
    # row-major 16 x 32 fp16: register r of lane l sits at 2 * (32 * x0 + x1); the registers' tables differ by
    # the constants 2 * r (dim1 bits 0-2), so the load forms one register: lane l's bits 0-1 at dim1 bits 3-4
    # (bytes 16, 32), bits 2-5 at dim0 (bytes 64 .. 512)
    assert row_major_strides((16, 32)) == (32, 1)
    ctx = ConversionContext.create(SRC, DST, "gfx942", 16, src_global_strides=(32, 1))
    lanes = np.arange(64)
    table = 16 * (lanes & 3) + 64 * (lanes >> 2)
    assert ctx.src_offsets.strides == (32, 1)
    assert ctx.formed_addresses == ((table.tobytes(), table.tobytes(), (), 0),)
    assert cost.least_address_valu(ctx) == 0
    # a wider tensor (rows of 48 elements): the same class, other differences
    (reg,) = ConversionContext.create(SRC, DST, "gfx942", 16, src_global_strides=(48, 1)).formed_addresses
    assert reg[0] == (16 * (lanes & 3) + 96 * (lanes >> 2)).tobytes()
    # a register column across a lane bit (dim1 bit 3 with dim1 bit 0): XOR, not a constant apart -> two classes
    src = LinearLayout({"register": [[0, 9], [0, 2], [0, 4]], "lane": SRC.bases["lane"], "warp": []}, SRC.out_dims)
    regs = ConversionContext.create(src, DST, "gfx942", 16, src_global_strides=(32, 1)).formed_addresses
    assert [a0 for *_, a0 in regs] == [0, 18]


def test_a_context_passes_its_offsets_on():
    ctx = ConversionContext.create(SRC, DST, "gfx942", 16, src_global_strides=(32, 1))
    assert SrcOffsets.of(ctx.src_offsets, ctx.problem, 16) is ctx.src_offsets
    assert ConversionContext.create(SRC, DST, "gfx942", 16, src_global_strides=ctx.src_offsets).src_offsets \
        is ctx.src_offsets


# gfx950 fp8 slice1(mfma32) -> slice1(blocked[4x1,t16x4,o01]), 4 waves: the kernel's round trip stores at the
# src's global offsets (the load line's register, ``v_and_or_b32`` of the lane bits and the warp id's SGPR) and
# loads at ``(v0 << 2) & 60`` (2 VALU); the setup estimate was 5 without the load line's register
CASE = ("amd", "slice1(mfma32)->slice1(blocked[4x1,t16x4,o01])", "gfx950", "fp8", 4)


@functools.cache
def _kernel_plan():
    from linlayout.cli.bench import kernel_plan

    family, name, arch, dtype, num_warps = CASE
    (c,) = [c for c in family_corpus(family)["cases"] if (c["name"], c["arch"], c["dtype"], c["num_warps"])
            == (name, arch, dtype, num_warps) and c.get("set") != "baseline"]
    return kernel_plan(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), arch, dtype_bits(dtype))


def test_the_load_lines_register_is_the_stores_address():
    plan = _kernel_plan()
    steps = [st for st in plan.steps if st.op in ("lds_store", "lds_load")]
    ctx = ConversionContext.create(plan.src, plan.dst, plan.arch, plan.element_bits,
                                   src_global_strides=row_major_strides([n for _, n in plan.src.out_dims]))
    assert {k: v for k, v in plan.overhead.items() if v} == {"valu_lds_addr": 2, "s_waitcnt": 1}
    assert cost.lds_address_valu(steps, plan.arch, ctx.formed_addresses) == 2
    assert cost.lds_address_valu(steps, plan.arch) == 5


@needs.mlir
def test_the_estimate_is_the_compiled_setup():
    from linlayout.lowering.report import kernel_setup
    from linlayout.lowering.conversion import lower_conversion

    plan = _kernel_plan()
    setup = kernel_setup(lower_conversion(plan, binary=False).compiled.isa)
    assert (setup["total"], setup["valu"]) == (2, 2) == (sum(plan.overhead.values()) - plan.overhead["s_waitcnt"],
                                                         plan.overhead["valu_lds_addr"])


def test_pruning_keeps_the_best_plan_with_the_load_lines_registers():
    # least_address_valu is 0 with formed registers (the first address may be one): the pruned candidates' first
    # is the unpruned ones'
    plan = _kernel_plan()
    args = (plan.src, plan.dst, plan.arch, plan.element_bits)
    kw = dict(src_global_strides=row_major_strides([n for _, n in plan.src.out_dims]))
    pruned, every = candidate_plans(*args, **kw), candidate_plans(*args, prune=False, **kw)
    assert pruned[0].dumps() == every[0].dumps()
    assert pruned[0].overhead["valu_lds_addr"] == 2


def test_the_lower_bound_keys_on_whether_a_load_line_is_given():
    # the load line's registers lower the bound's LDS instructions (3 -> 2: an address formed by the load);
    # planned one after the other in one process, each bound is its fresh-cache one
    from linlayout import caches
    kw = dict(src_global_strides=(32, 1))

    def bound(**given):
        return plan_conversion(SRC, DST, "gfx942", 16, **given).lower_bound["lds_instructions"]

    fresh = []
    for given in ({}, kw):
        caches.clear()
        fresh.append(bound(**given))
    assert fresh == [3, 2]
    for first, then in ((0, 1), (1, 0)):
        caches.clear()
        assert [bound(**({}, kw)[k]) for k in (first, then)] == [fresh[first], fresh[then]]


# One-wave corpus kernels whose LDS address program reuses a term of the src load line's program
# (cost.LOAD_LINE_TERMS, cost.load_line_tables): (family, name, arch, dtype, the estimate, the compiled setup's
# instructions other than s_delay_alu).  Without the load line's terms each estimate is one more.
LOAD_LINE_CASES = [
    # the load line loads at (tid & 31) << 1 (v_and_b32 v0, 31, v0; v_lshlrev_b32 v1, 1, v0); the LDS address
    # (tid & 31) << 3 is one shift of the load line's mask
    ("amd", "slice0(mfma32)->slice0(blocked[1x4,t2x32,o10])", "gfx942", "bf16", 1, ["v_lshlrev_b32_e32"]),
    # the load line's tid & 16 (v_and_b32 v129, 16, v0) is the AND of the multiply term (tid & 16) * 52
    ("wave32", "wmma2.16x16->dotBwmma2.16x16(kw4)", "gfx1200", "fp32", 4,
     ["v_lshlrev_b32_e32", "v_mul_u32_u24_e32", "v_xor_b32_e32", "v_xor_b32_e32"]),
]


LOAD_LINE_IDS = [c[2] for c in LOAD_LINE_CASES]


@pytest.fixture
def fresh_caches():
    """Clear the planner's caches before and after a test that changes ``cost.LOAD_LINE_TERMS`` (they do not key
    on it)."""
    from linlayout import caches
    caches.clear()
    yield
    caches.clear()


def _one_wave_plan(family: str, name: str, arch: str, dtype: str):
    from linlayout.cli.bench import kernel_plan

    (c,) = [c for c in family_corpus(family)["cases"] if (c["name"], c["arch"], c["dtype"], c["num_warps"])
            == (name, arch, dtype, 1) and c.get("set") != "baseline"]
    return kernel_plan(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), arch, dtype_bits(dtype))


@pytest.mark.parametrize("family, name, arch, dtype, estimate, ops", LOAD_LINE_CASES, ids=LOAD_LINE_IDS)
def test_a_one_wave_setup_takes_the_load_lines_terms(family, name, arch, dtype, estimate, ops, fresh_caches,
                                                     monkeypatch):
    plan = _one_wave_plan(family, name, arch, dtype)
    steps = [st for st in plan.steps if st.op in ("lds_store", "lds_load")]
    formed = ConversionContext.create(plan.src, plan.dst, arch, plan.element_bits, src_global_strides=row_major_strides(
        [n for _, n in plan.src.out_dims])).formed_addresses
    assert plan.num_warps == 1 and cost.load_line_tables(formed)
    assert plan.overhead["valu_lds_addr"] == cost.lds_address_valu(steps, arch, formed, True) == estimate
    for scope, more in (("none", 1), ("every", 0)):
        monkeypatch.setattr(cost, "LOAD_LINE_TERMS", scope)
        assert cost.lds_address_valu(steps, arch, formed, True) == estimate + more


@needs.mlir
@pytest.mark.parametrize("family, name, arch, dtype, estimate, ops", LOAD_LINE_CASES, ids=LOAD_LINE_IDS)
def test_the_compiled_setup_reads_the_load_lines_value(family, name, arch, dtype, estimate, ops):
    from benchmarks.warp_part import kernel_sharing
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.isa import around_region, region_lines

    plan = _one_wave_plan(family, name, arch, dtype)
    isa = lower_conversion(plan, binary=False).compiled.isa
    code = {r: [ln.strip() for ln in region_lines(isa, r) if ln.strip() and not ln.strip().startswith(";")]
            for r in ("setup", "conv")}
    assert [ln.split()[0] for ln in code["setup"] if not ln.startswith("s_delay_alu")] == ops
    assert len(ops) == estimate
    read, _ = kernel_sharing(code["setup"], code["conv"], around_region(isa, "setup")[0])
    assert read  # a VGPR the load line wrote, not the lane id


def test_the_load_line_terms_scope_is_one_of_three(monkeypatch):
    for scope, one, many in (("one_wave", True, False), ("every", True, True), ("none", False, False)):
        monkeypatch.setattr(cost, "LOAD_LINE_TERMS", scope)
        assert (cost.takes_load_line_terms(True), cost.takes_load_line_terms(False)) == (one, many)
    monkeypatch.setattr(cost, "LOAD_LINE_TERMS", "all")
    with pytest.raises(LayoutError, match="LOAD_LINE_TERMS is one_wave, every or none, not 'all'"):
        cost.takes_load_line_terms(True)
