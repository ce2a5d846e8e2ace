"""VGPR tuples over dword-index bits (linlayout.synth.vgpr_tuples): the tuples a kernel's merged single
loads and stores form (linlayout.lowering.emit.conversion_kernel.source_tuples), priced by the tuple copies
and checked against the compiled kernels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from linlayout import LayoutError, LinearLayout
from linlayout.synth.convert import plan_conversion
from linlayout.synth.cost import estimate_overhead, load_tuple_copies, tuple_copies
from linlayout.synth.vgpr_tuples import VgprTuples

import needs

DATA = Path(__file__).resolve().parent.parent / "benchmarks" / "data"


def _case(corpus: str, name: str, arch: str, dtype: str) -> tuple[LinearLayout, LinearLayout]:
    c = next(c for c in json.loads((DATA / corpus).read_text())["cases"]
             if (c["name"], c["arch"], c["dtype"]) == (name, arch, dtype))
    return LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"])


def test_positions_and_runs_in_place():
    # registers r, r+4, r+8, r+12 in one tuple (dword bits 2 and 3)
    t = VgprTuples((2, 3))
    assert t.dwords == 4 and t.mask == 12
    assert [t.position(d) for d in (1, 5, 9, 13)] == [0, 1, 2, 3]
    assert t.tuple_of(13) == t.tuple_of(1) == 1 != t.tuple_of(2)
    assert t.in_place([1, 5, 9, 13]) and t.in_place([1, 5]) and t.in_place([9, 13])
    assert not t.in_place([5, 9]) and not t.in_place([1, 9]) and not t.in_place([0, 1, 2, 3])
    assert VgprTuples.contiguous(4) == VgprTuples((0, 1)) == VgprTuples.of("x", 4) == VgprTuples.of("x", [0, 1])
    assert VgprTuples.contiguous(1) == VgprTuples(()) and VgprTuples.of("x", 1).dwords == 1


def test_copies_follow_the_tuples():
    # a b128 store of registers 0..3: in place in runs of 4, all four copied from tuples of bits 2 and 3;
    # a store of registers 0, 4, 8, 12 the other way round
    assert tuple_copies([0, 1, 2, 3], set(), 4) == 0
    assert tuple_copies([0, 1, 2, 3], set(), (2, 3)) == 4
    assert tuple_copies([0, 4, 8, 12], set(), (2, 3)) == 0
    assert tuple_copies([0, 4, 8, 12], set(), 4) == 4
    # loads: the dst stored in tuples of bits 1 and 2 (registers 0, 2, 4, 6), a ds_read_b128 of 0, 2, 4, 6 lands
    # in place, one of 0, 1, 2, 3 keeps only dword 0 where it is (at its place in its tuple)
    assert load_tuple_copies([[0, 2, 4, 6], [1, 3, 5, 7]], set(), (1, 2), 1) == 0
    assert load_tuple_copies([[0, 1, 2, 3]], set(), (1, 2), 1) == 3


@pytest.mark.parametrize("bad, why", [
    (3, "must be 1, 2 or 4"), (2.0, "must be 1, 2 or 4"), (True, "must be 1, 2 or 4"), ("4", "must be 1, 2 or 4"),
    ((0, 0), "two distinct"), ((0, 1, 2), "two distinct"), ((-1,), "two distinct"), ((1.0,), "two distinct"),
    ((2, 9), "have index bits below"), (VgprTuples((1,), 3), "alone"), (VgprTuples((1,), -1), "alone"),
    (VgprTuples(5), "must be a sequence"),
])
def test_bad_tuples_are_one_line_layout_errors(bad, why):
    src, dst = _case("triton_wave32_corpus.json", "blocked[4x1,t32x1,o01]->dotAwmma2.16x16(kw4)", "gfx1200", "fp32")
    for name in ("src_tuple_dwords", "dst_tuple_dwords"):
        with pytest.raises(LayoutError, match=why) as e:
            plan_conversion(src, dst, "gfx1200", 32, **{name: bad})
        assert name in str(e.value) and "\n" not in str(e.value)
    if why != "have index bits below":  # (tuple_copies knows no side)
        with pytest.raises(LayoutError, match="tuple_dwords"):
            tuple_copies([0, 1], set(), bad)


def test_a_checked_value_is_taken_again_an_equal_bad_one_is_not():
    # VgprTuples.of takes a value it checked before as it is (it is asked for every access priced), by identity:
    # VgprTuples((True,)) equals the checked VgprTuples((1,)) (True == 1) and is still refused
    good = VgprTuples((1,))
    assert VgprTuples.of("x", good) is good and VgprTuples.of("x", good) is good
    assert VgprTuples((True,)) == good
    for bad in (VgprTuples((True,)), VgprTuples((1,), 2)):
        with pytest.raises(LayoutError, match="tuple_dwords"):
            tuple_copies([0, 1], set(), bad)
    assert VgprTuples.of("x", good, 2) is good  # (the side's dword bits are checked whenever given)
    with pytest.raises(LayoutError, match="have index bits below"):
        VgprTuples.of("x", VgprTuples((2,)), 1)


def test_tuples_given_with_list_bits_plan_as_tuple_bits():
    # VgprTuples([2, 3]) (a list: unhashable) is taken as VgprTuples((2, 3)): the same plan, no TypeError from the
    # design cache's key
    src, dst = _case("triton_wave32_corpus.json", "blocked[4x1,t32x1,o01]->dotAwmma2.16x16(kw4)", "gfx1200", "fp32")
    assert VgprTuples.of("src_tuple_dwords", VgprTuples([2, 3])) == VgprTuples((2, 3))
    assert plan_conversion(src, dst, "gfx1200", 32, src_tuple_dwords=VgprTuples([2, 3])).dumps() == \
        plan_conversion(src, dst, "gfx1200", 32, src_tuple_dwords=(2, 3)).dumps()


def test_the_defaults_keep_the_plans():
    # saying nothing about tuples is src runs of 4 in register order and no dst tuple, as before the bits;
    # a run past the side's end (the int form, or its bits) is no error
    src, dst = _case("triton_wave32_corpus.json", "blocked[4x1,t32x1,o01]->dotAwmma2.16x16(kw4)", "gfx1200", "fp32")
    plan = plan_conversion(src, dst, "gfx1200", 32)
    assert plan.dumps() == plan_conversion(src, dst, "gfx1200", 32, src_tuple_dwords=(0, 1),
                                           dst_tuple_dwords=()).dumps()
    assert estimate_overhead(plan) == estimate_overhead(plan, src_tuple_dwords=VgprTuples((0, 1)))
    one = LinearLayout({"register": [], "lane": [[1], [2], [4], [8], [16]]}, [("dim0", 32)])
    assert plan_conversion(one, one, "gfx1100", 8, src_tuple_dwords=(0, 1)).counts()["total"] == 0


def test_the_kernel_tuples():
    from linlayout.lowering.emit.conversion_kernel import source_tuples

    # registers 0..3 down dim0 (stride 32 elements), 4, 8, 12, .. along dim1: single loads merged in fours
    src, dst = _case("triton_wave32_corpus.json", "blocked[4x1,t32x1,o01]->dotAwmma2.16x16(kw4)", "gfx1200", "fp32")
    assert source_tuples(src, 32).bits == (2, 3) and source_tuples(dst, 32).bits == (0, 1)
    # registers 0, 2 consecutive, 1 a row (256 bytes) further: pairs
    src, _ = _case("triton_amd_corpus.json", "blocked[2x2,t32x2,o01]->blocked[4x1,t8x8,o01]", "gfx950", "fp32")
    assert source_tuples(src, 32).bits == (1,)
    # dst registers 0, 2, 4, 6 consecutive, but register 1 is 8 KB further (its own soffset): the stores of
    # 0 and 2 have one of another soffset between them, none is merged
    _, dst = _case("triton_wave32_corpus.json", "blocked[1x1,t1x32,o10]->blocked[1x1,t32x1,o01]", "gfx1200", "fp32")
    assert source_tuples(dst, 32) == VgprTuples((), 1)
    # dst registers 0, 2 consecutive, 4..7 4 KB further: the dwords with bit 2 set are in no tuple
    _, dst = _case("triton_wave32_corpus.json", "blocked[1x1,t4x8,o01]->blocked[2x2,t32x1,o01]", "gfx1100", "fp32")
    assert source_tuples(dst, 32) == VgprTuples((1,), 4)
    # a load of 0..3: tuple (0, 2) copied whole, (1, 3) keeps one dword; a load of 4..7 needs none
    assert load_tuple_copies([[0, 1, 2, 3], [4, 5, 6, 7]], set(), VgprTuples((1,), 4), 1) == 3
    assert tuple_copies([0, 1, 4, 5], set(), VgprTuples((1,), 4)) == 2  # 4 and 5 are placed where wanted


@needs.mlir
@pytest.mark.parametrize("corpus, name, arch, dtype, blind", [
    # 32 ds_store_b128 of registers r..r+3 where the loads merged r, r+4, r+8, r+12: 96 v_mov (3 of 4 per store)
    ("triton_wave32_corpus.json", "blocked[4x1,t32x1,o01]->dotAwmma2.16x16(kw4)", "gfx1200", "fp32", 96),
    ("triton_wave32_corpus.json", "blocked[4x1,t32x1,o01]->wmma2.16x16", "gfx1200", "fp32", 96),
    # 4 ds_write_b128 of registers r..r+3 where the loads merged pairs r, r+2: 12 v_mov
    ("triton_amd_corpus.json", "blocked[2x2,t32x2,o01]->blocked[4x1,t8x8,o01]", "gfx950", "fp32", 12),
])
def test_stores_priced_for_the_merged_loads_compile_without_copies(corpus, name, arch, dtype, blind, tmp_path,
                                                                   monkeypatch):
    # planned for the kernel's tuples (the bench's kernel_plan), the region holds the tuple copies priced: none;
    # planned as if the src came one dword at a time, LLVM adds `blind` v_mov the plan did not count
    from linlayout.cli.bench import kernel_plan
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.isa import isa_counts

    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    src, dst = _case(corpus, name, arch, dtype)
    from linlayout.lowering.emit.conversion_kernel import source_tuples

    blind_plan = plan_conversion(src, dst, arch, 32, src_tuple_dwords=1, dst_tuple_dwords=source_tuples(dst, 32))
    for plan, copies in ((kernel_plan(src, dst, arch, 32), 0), (blind_plan, blind)):
        assert plan.counts()["v_mov"] == 0
        compiled = isa_counts(lower_conversion(plan, binary=False).compiled.isa, "conv")["v_mov"]
        assert compiled == copies
        if copies == 0:
            assert plan.overhead.get("valu_tuple_copies", 0) == 0


@needs.mlir
@pytest.mark.parametrize("corpus, name, arch, dtype, tuples, copies", [
    # dst registers 0, 2 at consecutive addresses (the stores merged into dwordx2): 32 ds_load_b128
    # of registers r..r+3 leave every pair in two loads; the store side copies one of each pair
    ("triton_wave32_corpus.json", "blocked[4x1,t8x4,o01]->blocked[2x2,t16x2,o01]", "gfx1100", "fp32", (1,), 32),
    ("triton_amd_corpus.json", "blocked[1x1,t16x4,o01]->blocked[2x2,t32x2,o01]", "gfx942", "fp32", (1,), 12),
    # no merged store (another soffset between them): no copy, where the bits (1, 2) would price 104
    ("triton_wave32_corpus.json", "blocked[1x1,t1x32,o10]->blocked[1x1,t32x1,o01]", "gfx1200", "fp32", (), 0),
    # registers 4..7 lie 4 KB further (soffsets of their own, stored alone): only 0..3 merge in pairs, 32 copies
    ("triton_wave32_corpus.json", "blocked[1x1,t4x8,o01]->blocked[2x2,t32x1,o01]", "gfx1100", "fp32", (1,), 32),
])
def test_load_copies_for_the_merged_stores_are_the_compiled_ones(corpus, name, arch, dtype, tuples, copies,
                                                                 tmp_path, monkeypatch):
    from linlayout.cli.bench import kernel_plan
    from linlayout.lowering.beyond_identity import ours_beyond_identity
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.emit.conversion_kernel import source_tuples

    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    src, dst = _case(corpus, name, arch, dtype)
    assert source_tuples(dst, 32).bits == tuples
    plan = kernel_plan(src, dst, arch, 32)
    assert plan.overhead.get("valu_load_tuple_copies", 0) == copies
    isa = lower_conversion(plan, binary=False).compiled.isa
    assert ours_beyond_identity(plan, isa)["outside_valu"]["store"] == copies
    if name.startswith("blocked[1x1,t1x32,o10]"):
        assert estimate_overhead(plan, dst_tuple_dwords=(1, 2))["valu_load_tuple_copies"] == 104
