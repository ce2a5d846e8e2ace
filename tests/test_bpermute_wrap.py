"""Session 21 (wamd25): ``ds_bpermute`` addresses read modulo the wave, and registers stored in bytes.

A ``ds_bpermute`` address is read in its bits 0 to ``log2(wave) + 1`` alone
(``lane_arith.bpermute_address_bits``), so on gfx9 a shift term ``(l & M) << s`` whose other thread-id bits
land above them is the thread id shifted, which an OR absorbs (``v_lshl_or_b32``): the setup of the AMD
corpus's gfx950 ``slice0(mfma16T)->slice0(blocked[1x4,t2x32,o10])`` (i8) is 5 -> 3 (whole 11 -> 9, Triton's
9), of ``...t4x16...`` (bf16) 4 -> 3.  A register the kernel stores in bytes: the shifted words reach the
stores opaque (``conversion_kernel._Kernel._store``), so LLVM does not rebuild the register from its bytes
first (gfx950 fp8 ``mfma16T->mfma16``: store side 9 VALU -> 0 beyond its identity kernel's).  Since session 23
those two addresses, ``4 * ((l & 15) | (l & 3) << 4)``, are one multiply term read modulo the wave,
``(l & 15) * 0x44`` (``lane_arith._widened``): setup 3 -> 2 on both (whole 8 and 11, Triton's 9 and 11).  Each
compiled kernel converts on the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import needs
from linlayout.synth.lane_arith import TID, AffineTable, LaneProgram, LaneTable, bpermute_address_bits, tables_valu

#: ``4 * ((l >> 2) | (l & 3) << 4)``: lane bits 0-1 to address bits 6-7, lane bits 2-5 to bits 2-5
ADDRESS = AffineTable(0, (0x40, 0x80, 4, 8, 16, 32), ())


def test_an_address_read_modulo_the_wave_shifts_the_thread_id():
    """The ``(l & 3) << 6`` term of ``ADDRESS`` is ``t << 6`` when only bits 0-7 are read: 2 ops (the AND of
    ``l & 60`` and the ``v_lshl_or_b32`` that absorbs ``t << 6``) for 3; the value agrees with the table in those
    bits on every lane of 8 warps and differs above them.  RDNA programs keep the mask (measured worse there)."""
    care = bpermute_address_bits(64)
    assert care == 0xFF
    exact, loose = LaneProgram("gfx9", 6, 3), LaneProgram("gfx9", 6, 3)
    e, w = exact.add(ADDRESS), loose.add(ADDRESS, care=care)
    assert exact.count() == (3, 0) and loose.count() == (2, 0)
    assert ("shl", TID, 6) in loose.nodes and ("shl", TID, 6) not in exact.nodes
    table = ADDRESS.evaluate(8)
    assert np.array_equal(exact.evaluate(e, 8), table)
    got = loose.evaluate(w, 8)
    assert np.array_equal(got & care, table & care) and (got != table).any()
    assert tables_valu("gfx9", 6, ((0, ADDRESS.lane_cols),)) == 3
    assert tables_valu("gfx9", 6, (LaneTable(0, ADDRESS.lane_cols, care=care),)) == 2
    assert (tables_valu("rdna", 6, (LaneTable(0, ADDRESS.lane_cols, care=care),))
            == tables_valu("rdna", 6, ((0, ADDRESS.lane_cols),)))


def test_a_term_in_an_xor_keeps_its_mask():
    """A shift term whose output bits another term has is XOR'ed, not OR'ed: LLVM masks the XOR of shifts once,
    so the thread-id form is not taken (the same program with and without ``care``)."""
    aff = AffineTable(0, (0x44, 0x88, 0x40, 16, 0, 0), ())
    exact, loose = LaneProgram("gfx9", 6, 0), LaneProgram("gfx9", 6, 0)
    exact.add(aff)
    loose.add(aff, care=0xFF)
    assert loose.count() == exact.count() == (7, 0)
    assert not any(n[0] == "shl" and n[1] == TID for n in loose.nodes)


def test_an_exact_table_never_reuses_a_value_read_modulo_the_wave():
    """LaneValues: a ``ds_bpermute`` address computed with the thread id holds other bits above its low byte, so
    an LDS address equal to it in every lane is computed again, not read from it."""
    from linlayout.lowering.emit.builder import Builder
    from linlayout.lowering.emit.lane_values import LaneValues

    b = Builder()
    lanes = LaneValues(b, "%tid", "%lane", "%warp", 8, 64, "gfx950")
    table = ADDRESS.evaluate(1)[0]
    loose, _ = lanes.value_of(table, max_delta=1 << 16, defined=np.ones(64, dtype=bool), care=0xFF)
    (wrapped,) = lanes.program.wrapped.values()
    assert ("shl", TID, 6) in lanes.program.nodes and lanes.program.nodes[wrapped][0] == "or"
    again, _ = lanes.value_of(table, max_delta=1 << 16, defined=np.ones(64, dtype=bool), care=0xFF)
    exact, _ = lanes.value_of(table)
    assert again == loose and exact != loose
    (made,) = lanes.program.tables.values()
    assert made != wrapped


def _case(name: str, arch: str, dtype: str, num_warps: int, family: str = "amd"):
    from repo_data import family_corpus

    (case,) = [c for c in family_corpus(family)["cases"] if c.get("set") != "baseline" and
               (c["name"], c["arch"], c["dtype"], c["num_warps"]) == (name, arch, dtype, num_warps)]
    return case


def _compiled(case):
    from linlayout import LinearLayout
    from linlayout.cli.bench import kernel_plan
    from linlayout.dtypes import dtype_bits
    from linlayout.lowering.beyond_identity import ours_beyond_identity
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.emit.host import distinct_tile, expected_output, interpret

    plan = kernel_plan(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), case["arch"],
                       dtype_bits(case["dtype"]))
    assert plan.verified
    low = lower_conversion(plan, binary=False, cache=False)
    tile = distinct_tile(low.kernel.shape, plan.element_bits, seed=7)
    assert np.array_equal(interpret(low.kernel, tile, fill=0x5A), expected_output(plan, tile, fill=0x5A))
    return plan, low, ours_beyond_identity(plan, low.compiled.isa)


@needs.mlir
@pytest.mark.parametrize("name,dtype,num_warps,region,setup,triton_whole", [
    ("slice0(mfma16T)->slice0(blocked[1x4,t2x32,o10])", "i8", 8, 6, 2, 9),  # was 6 + 5 = 11, 6 + 3 = 9
    ("slice0(mfma16T)->slice0(blocked[1x4,t4x16,o10])", "bf16", 4, 9, 2, 11),  # was 9 + 4 = 13, 9 + 3 = 12
])
def test_gfx950_bpermute_setups(name, dtype, num_warps, region, setup, triton_whole):
    """The address ``(l & 15) * 0x44`` read in its low byte: the planner counts 2 (``valu_bpermute_addr``), the
    compiled setup is those 2, a ``v_and_b32`` and a ``v_mul_u32_u24`` (3 in session 22: ``((l & 15) << 2) |
    t << 6``, a ``v_lshl_or_b32`` of the thread id by 6)."""
    from linlayout.cli.bench import triton_whole_conversion
    from linlayout.lowering.isa import region_lines

    case = _case(name, "gfx950", dtype, num_warps)
    plan, low, beyond = _compiled(case)
    assert plan.strategy == "lanes" and plan.overhead["valu_bpermute_addr"] == setup
    assert low.report["isa_counts"]["total"] == region and beyond["setup"]["total"] == setup
    assert sum(beyond["outside_valu"].values()) == 0
    assert [ln.split()[0] for ln in (x.strip() for x in region_lines(low.compiled.isa, "setup"))
            if ln and not ln.startswith(";")] == ["v_and_b32_e32", "v_mul_u32_u24_e32"]
    assert int(triton_whole_conversion(case)["total"]) == triton_whole


@needs.mlir
def test_gfx950_fp8_bytes_stored_without_a_rebuild():
    """``mfma16T->mfma16`` (fp8, 8 warps): the plan's one packed dst register is stored as 4 bytes after 3
    shifts (``v_lshrrev_b32`` by 8, 16, 24), as its identity kernel stores them: whole 8 + 12 + 0 = 20
    against Triton's 25 (8 + 12 + 9 = 29 when LLVM rebuilt the register from its bytes first)."""
    from linlayout.cli.bench import triton_whole_conversion
    from linlayout.lowering.isa import around_region, isa_counts

    case = _case("mfma16T->mfma16", "gfx950", "fp8", 8)
    plan, low, beyond = _compiled(case)
    assert plan.strategy == "lanes" and not plan.dst_unpacked
    assert low.report["isa_counts"]["total"] == 8 and beyond["setup"]["total"] == 12
    assert beyond["outside_valu"] == {"load": 0, "store": 0}
    _, after = around_region(low.compiled.isa, "conv")
    store_side = isa_counts("\n".join(after))
    assert store_side["valu"] == 3 and store_side["vmem"] == 4
    assert int(triton_whole_conversion(case)["total"]) == 25


@needs.mlir
def test_wave32_bytes_stored_as_before():
    """On RDNA the shifted bytes reach the stores as before (no opaque copy: there they cost a VALU): wave32
    gfx1100 i8 ``slice1(wmma1.16x16T)->slice1(blocked[2x1,t32x1,o01])``, 1 wave, stores bytes with nothing
    beyond its identity kernel's store side, whole 5 + 1 = 6, Triton's 8 (5 + 3 until the kernel declared its 32
    threads)."""
    from linlayout.cli.bench import triton_whole_conversion

    case = _case("slice1(wmma1.16x16T)->slice1(blocked[2x1,t32x1,o01])", "gfx1100", "i8", 1, "wave32")
    plan, low, beyond = _compiled(case)
    assert 'llvm.inline_asm "", "=v,0"' not in low.kernel.text.split("store the destination registers")[1]
    assert beyond["outside_valu"] == {"load": 0, "store": 0}
    assert low.report["isa_counts"]["total"] + beyond["setup"]["total"] == 6
    assert int(triton_whole_conversion(case)["total"]) == 8
