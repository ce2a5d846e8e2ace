"""linlayout.lowering.beyond_identity: the VALU a conversion kernel spends on its load and store sides
beyond its identity kernels' (Triton's lines in the corpus, ours in the bench), and the ISA text
around a marked region it reads ours from."""

from __future__ import annotations

import pytest

import needs
from linlayout.dtypes import dtype_bits
from linlayout.layout import LinearLayout
from linlayout.lowering.beyond_identity import kernel_sides, ours_outside_valu, outside_valu, valu_beyond
from linlayout.lowering.isa import IsaRegionError, around_region
from repo_data import family_corpus

ISA = "\n".join([
    "\tv_mov_b32_e32 v0, 0",
    "\t; linlayout-begin setup", "\tv_lshlrev_b32_e32 v1, 2, v0", "\ts_mov_b32 s0, 0", "\t; linlayout-end setup",
    "\tglobal_load_dwordx4 v[2:5], v1, s[0:1]",
    "\t; linlayout-begin conv", "\tds_write_b128 v1, v[2:5]", "\tds_read_b128 v[6:9], v1", "\t; linlayout-end conv",
    "\tv_perm_b32 v6, v6, v7, 0x5040100", "\tv_mov_b32_e32 v10, v8",
    "\tglobal_store_dwordx4 v1, v[6:9], s[0:1]", "\ts_endpgm"])


def test_around_region_leaves_out_the_region_and_the_named_ones():
    before, after = around_region(ISA, "conv", leave_out=("setup",))
    assert [ln.split()[0] for ln in before] == ["v_mov_b32_e32", "global_load_dwordx4"]
    assert [ln.split()[0] for ln in after] == ["v_perm_b32", "v_mov_b32_e32", "global_store_dwordx4", "s_endpgm"]
    assert [ln.split()[0] for ln in around_region(ISA, "conv")[0]][2:4] == ["v_lshlrev_b32_e32", "s_mov_b32"]
    with pytest.raises(IsaRegionError):
        around_region(ISA, "other")


def test_kernel_sides_count_the_load_and_store_sides():
    sides = kernel_sides(ISA)
    assert (sides["load"]["total"], sides["load"]["valu"], sides["load"]["vmem"]) == (2, 1, 1)
    assert (sides["store"]["valu"], sides["store"]["v_perm_b32"], sides["store"]["v_mov"]) == (2, 1, 1)


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
    # fp32, no packing: both kernels copy the LDS loads' registers into the stores' tuples
    ("amd", ("mfma16->mfma16T", "gfx950", "fp32", 1), {"load": 0, "store": 112}, {"load": 0, "store": 113}),
])
def test_ours_is_measured_as_the_corpus_measures_tritons(family, key, ours, triton, tmp_path, monkeypatch):
    from linlayout.cli.bench import kernel_plan
    from linlayout.lowering.conversion import lower_conversion

    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    case = _corpus_case(family, *key)
    plan = kernel_plan(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), case["arch"],
                       dtype_bits(case["dtype"]))
    assert ours_outside_valu(plan, lower_conversion(plan, binary=False).compiled.isa) == ours
    assert case["triton_outside_valu"] == triton
