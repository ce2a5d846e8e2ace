"""linlayout.lowering.beyond_identity: the VALU a conversion kernel spends on its load and store sides
beyond its identity kernels' (Triton's lines in the corpus, ours in the bench), and the ISA text
around a marked region it reads ours from."""

from __future__ import annotations

import pytest

import needs
from linlayout.dtypes import dtype_bits
from linlayout.layout import LinearLayout
from linlayout.lowering.beyond_identity import (IdentityKernelError, kernel_setup, kernel_sides,
                                                ours_beyond_identity, outside_valu, setup_beyond, valu_beyond)
from linlayout.lowering.isa import IsaRegionError, around_region, region_lines
from repo_data import family_corpus

ISA = "\n".join([
    "\tv_mov_b32_e32 v0, 0",
    "\t; linlayout-begin setup", "\tv_lshlrev_b32_e32 v1, 2, v0", "\ts_mov_b32 s0, 0", "\t; linlayout-end setup",
    "\t; linlayout-begin store_addresses", "\tv_lshlrev_b32_e32 v11, 4, v0", "\tv_or_b32_e32 v12, 1, v11",
    "\t; linlayout-end store_addresses",
    "\tglobal_load_dwordx4 v[2:5], v1, s[0:1]",
    "\t; linlayout-begin conv", "\tds_write_b128 v1, v[2:5]", "\tds_read_b128 v[6:9], v1", "\t; linlayout-end conv",
    "\tv_perm_b32 v6, v6, v7, 0x5040100", "\tv_mov_b32_e32 v10, v8",
    "\tglobal_store_dwordx4 v1, v[6:9], s[0:1]", "\ts_endpgm"])


def test_around_region_leaves_out_the_region_and_the_named_ones():
    before, after = around_region(ISA, "conv", leave_out=("setup", "store_addresses"))
    assert [ln.split()[0] for ln in before] == ["v_mov_b32_e32", "global_load_dwordx4"]
    assert [ln.split()[0] for ln in after] == ["v_perm_b32", "v_mov_b32_e32", "global_store_dwordx4", "s_endpgm"]
    assert [ln.split()[0] for ln in around_region(ISA, "conv")[0]][2:4] == ["v_lshlrev_b32_e32", "s_mov_b32"]
    with pytest.raises(IsaRegionError):
        around_region(ISA, "other")


def test_kernel_sides_count_the_load_and_store_sides_without_the_setup_and_the_store_addresses():
    sides = kernel_sides(ISA)
    assert (sides["load"]["total"], sides["load"]["valu"], sides["load"]["vmem"]) == (2, 1, 1)
    assert (sides["store"]["valu"], sides["store"]["v_perm_b32"], sides["store"]["v_mov"]) == (2, 1, 1)


def test_kernel_setup_counts_the_setup_region_and_setup_beyond_leaves_out_what_every_identity_kernel_has():
    setup = kernel_setup(ISA)
    assert (setup["total"], setup["valu"], setup["salu"]) == (2, 1, 1)
    none = dict.fromkeys(setup, 0)
    assert setup_beyond(setup, [none, none]) == setup
    assert setup_beyond(setup, [dict(none, total=1, salu=1), none]) == setup  # the least of the identity kernels'
    assert setup_beyond(setup, [dict(none, total=1, salu=1)] * 2) == dict(setup, total=1, salu=0)
    # one identity kernel's counts come off together, so the total stays the sum of its classes
    assert setup_beyond(setup, [dict(none, total=1, salu=1), dict(none, total=1, valu=1)]) == dict(setup, total=1,
                                                                                                  salu=0)


def test_valu_beyond_is_the_difference_at_least_zero():
    ours = {"valu": 170, "v_mov": 96, "v_perm_b32": 0, "salu": 9}
    identity = {"valu": 8, "v_mov": 100, "v_perm_b32": 0, "salu": 1}
    assert valu_beyond(ours, identity) == {"valu": 162, "v_mov": 0, "v_perm_b32": 0}


def test_outside_valu_takes_the_moves_where_the_valu_difference_is_less():
    assert outside_valu({"valu": 162, "v_mov": 96, "v_perm_b32": 0}) == 162
    assert outside_valu({"valu": 0, "v_mov": 48, "v_perm_b32": 0}) == 48
    assert outside_valu({"valu": 3, "v_mov": 0, "v_perm_b32": 2}) == 3


def _corpus_case(family: str, name: str, arch: str, dtype: str, num_warps: int) -> dict:
    return next(c for c in family_corpus(family)["cases"]
                if (c["name"], c["arch"], c["dtype"], c["num_warps"]) == (name, arch, dtype, num_warps))


@needs.mlir
@pytest.mark.parametrize("family, key, ours, triton", [
    # Triton repacks the loaded halves on its store line (96 v_mov_b16 + 64 v_lshrrev_b32 and 2 more);
    # our kernel's packing around its region is its identity kernels' (none for the conversion)
    ("wave32", ("wmma2.16x16->blocked[1x4,t16x2,o10]", "gfx1200", "fp16", 1),
     {"load": 0, "store": 0}, {"load": 0, "store": 162}),
    # fp32, no packing: Triton's kernel copies its LDS loads' registers into the stores' tuples; ours loads
    # them into the tuples (the planner knows the kernel's dwordx4 stores: dst_tuple_dwords; it copied 112)
    ("amd", ("mfma16->mfma16T", "gfx950", "fp32", 1), {"load": 0, "store": 0}, {"load": 0, "store": 113}),
])
def test_ours_is_measured_as_the_corpus_measures_tritons(family, key, ours, triton, tmp_path, monkeypatch):
    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    case = _corpus_case(family, *key)
    plan, low = _lowered(case)
    assert ours_beyond_identity(plan, low.compiled.isa)["outside_valu"] == ours
    assert case["triton_outside_valu"] == triton


def _lowered(case: dict):
    from linlayout.cli.bench import kernel_plan
    from linlayout.lowering.conversion import lower_conversion

    plan = kernel_plan(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), case["arch"],
                       dtype_bits(case["dtype"]))
    return plan, lower_conversion(plan, binary=False)


@needs.mlir
def test_ours_whole_counts_the_setup_the_permlane_selectors_low_words(tmp_path, monkeypatch):
    """gfx1200 fp32 ``wmma2.16x16->dotBwmma2.16x16(kw4)``, 2 waves: 8 ``v_permlane16`` whose selectors'
    low words two ``s_mov_b32`` of the setup region compute (the identity kernels' setups are empty):
    our whole conversion is the region's 33 and those 2, 35 (it was 33), against Triton's 37."""
    from linlayout.cli.bench import bench_case

    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    case = _corpus_case("wave32", "wmma2.16x16->dotBwmma2.16x16(kw4)", "gfx1200", "fp32", 2)
    row = bench_case(case, binary=False)
    assert (row["ours"]["total"], row["ours"]["salu"], row["ours"]["permlane16"]) == (33, 1, 8)
    assert {k: n for k, n in row["ours_setup"].items() if n} == {"total": 2, "salu": 2}
    assert row["ours_outside_valu"] == {"load": 0, "store": 0}
    assert (row["ours_whole"]["total"], row["ours_whole"]["salu"], row["triton_whole"]["total"]) == (35, 3, 37)
    _, low = _lowered(case)
    assert [ln.split()[0] for ln in region_lines(low.compiled.isa, "setup")].count("s_mov_b32") == 2


@needs.mlir
def test_the_store_addresses_are_their_own_region_not_the_setup(tmp_path, monkeypatch):
    """gfx1100 fp16 ``wmma1.16x16T->dotBwmma1.16x16T(kw16)``, 2 waves: the kernel stores the dst's halves
    one at a time, 129 instructions of addresses; the setup region holds the plan's LDS addresses alone
    (14 VALU with synth/lane_arith.py's program, 4 ``s_delay_alu``; it held 144 with the store addresses), and neither the load side nor the
    store side counts the store addresses (those of an identity kernel are its load addresses)."""
    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    plan, low = _lowered(_corpus_case("wave32", "wmma1.16x16T->dotBwmma1.16x16T(kw16)", "gfx1100", "fp16", 2))
    setup = low.report["setup_counts"]
    assert (setup["total"], setup["valu"], setup["salu"]) == (18, 14, 4)
    addresses = region_lines(low.compiled.isa, "store_addresses")
    assert len(addresses) >= 129 and not any(ln.split()[0].startswith("buffer_") for ln in addresses)
    assert ours_beyond_identity(plan, low.compiled.isa)["outside_valu"] == {"load": 0, "store": 0}


@needs.mlir
@pytest.mark.parametrize("key, setup, region", [
    # 16 stores and 32 loads: the setup computes their address registers and the region reads them, no
    # v_add_u32 in it (LLVM used to take apart the setup's registers and add 15 v_add_u32 in the region,
    # the setup computing 41 instructions).  The plan whose 4 classes of store
    # addresses (an XOR swizzle) set up 31 instructions (28 VALU, 3 SALU) ranked first until the
    # setup estimate counted the address program (cost.addresses_valu; this plan's estimate 25 VALU); then a
    # plan setting up 22 (estimate 25) ranked first until addr25's swizzled ordered LDS layout (lds_path.
    # _swizzled_fewest: fewer lane terms in the address program, estimate 13 VALU, plan cost 2376 -> 2280); 10
    # until the kernel declared its 64 threads (LLVM drops a v_and_b32 of the thread id, known below 64)
    (("mfma32T->mfma16", "gfx90a", "fp32", 1), (9, 9, 0), (48, 0)),
    # one class of store addresses and one of loads through an unswizzled layout (lds_path.ordered_design: the
    # src's order after the sub-dword bit; 4 ds_write_b16, 2 ds_read2_b32).  Before it, 2 store addresses 0x110
    # apart set up 15 for a region of 9, and before the setup estimate counted the address program, 4 classes
    # of store addresses at 0x0, 0x90, 0x20, 0xb0 set up 22 for a region of 5.  8 VALU until the kernel declared its
    # 64 threads; then LLVM joins two masks into a v_and_or_b32 of an s_movk_i32 constant: 7 VALU and 1 SALU.
    # Since cyc29 (near ties count the 4 LDS passes that layout's bank conflicts add) the src order after the
    # sub-dword bit with rows swizzled by 4, conflict-free: 4 stores and 2 loads still, 12 VALU
    # (estimate 13)
    (("blocked[1x4,t16x4,o10]->mfma32", "gfx90a", "fp16", 1), (12, 12, 0), (6, 0)),
])
def test_the_setup_computes_one_lds_address_register_per_class(tmp_path, monkeypatch, key, setup, region):
    """The setup region's ``(total, valu, salu)`` and the region's ``(total, v_add_u32)`` of named AMD
    cases: one register per class of LDS addresses that differ by constants, the constant bits that no
    lane touches left to the accesses' offsets, one register more per address beyond its access's offset
    field, and the region reading the registers as the setup left them (no address arithmetic)."""
    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    _, low = _lowered(_corpus_case("amd", *key))
    counts = low.report["setup_counts"]
    assert (counts["total"], counts["valu"], counts["salu"]) == setup
    conv = region_lines(low.compiled.isa, "conv")
    assert (low.report["isa_counts"]["total"], sum(1 for ln in conv if ln.split()[0].startswith("v_add"))) == region
    assert low.differences == {}


@needs.mlir
def test_a_failure_of_the_identity_kernels_is_not_a_refusal(tmp_path, monkeypatch):
    """Where our identity kernels cannot be planned, the case is still benched (its region counted): the
    row says the load/store-side VALU failed, has no whole conversion of ours, and the summary leaves it
    out of the whole-conversion comparison and lists it."""
    from linlayout import LayoutError
    from linlayout.cli.bench import bench_or_refusal, summarize

    def refuse(*args, **kwargs):
        raise LayoutError("no identity plan")

    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    case = _corpus_case("wave32", "wmma2.16x16->dotBwmma2.16x16(kw4)", "gfx1200", "fp32", 2)
    plan, low = _lowered(case)
    monkeypatch.setattr("linlayout.lowering.beyond_identity.plan_conversion", refuse)
    with pytest.raises(IdentityKernelError, match="no identity plan"):
        ours_beyond_identity(plan, low.compiled.isa)
    with pytest.raises(IdentityKernelError):
        ours_beyond_identity(plan, low.compiled.isa.replace("linlayout-begin store_addresses", ""))
    from linlayout.lowering.compile import CompileError

    def fail_to_compile(*args, **kwargs):
        raise CompileError("no code object")

    monkeypatch.undo()
    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    monkeypatch.setattr("linlayout.lowering.beyond_identity.lower_conversion", fail_to_compile)
    with pytest.raises(IdentityKernelError, match="no code object"):
        ours_beyond_identity(plan, low.compiled.isa)
    monkeypatch.setattr("linlayout.lowering.beyond_identity.plan_conversion", refuse)
    row = bench_or_refusal(case, binary=False)
    assert "refused" not in row and row["ours"]["total"] == 33
    assert (row["ours_whole"], row["ours_outside_valu"], row["ours_setup"]) == (None, None, None)
    assert "no identity plan" in row["ours_outside_valu_failed"] and "ours_whole" not in row["modelled"]["concurrent"]
    whole = summarize([row])["whole_conversion"]
    assert whole["cases"] == 0 and len(whole["outside_valu_failed"]) == 1
