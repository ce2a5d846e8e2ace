"""The copies of LDS store tuples that LLVM's coalescer avoids (``cost.store_tuple_copies``: an access keeps src
dwords where they arrive, its tuple taking its VGPRs from a position of theirs), beside compiled counts."""

from __future__ import annotations

import needs
import pytest
from linlayout import LayoutError, LinearLayout
from linlayout.cli.bench import kernel_plan
from linlayout.synth.cost import store_tuple_copies
from linlayout.synth.vgpr_tuples import VgprTuples
from repo_data import family_corpus


def _case(family: str, name: str, arch: str, dtype: str):
    case = next(c for c in family_corpus(family)["cases"] if (c["name"], c["arch"], c["dtype"]) == (name, arch, dtype))
    return LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])


@pytest.mark.parametrize("accesses, t, alignment, kept, copies", [
    # tuples 0..3 and 4..7: {0, 2, 4, 6} copies all four; {1, 3, 5, 7} keeps 1 in place at VGPRs 1..4 of the
    # first tuple (2 read before, 3 copied out first, the VGPR past the tuple free): 3
    ([[0, 2, 4, 6], [1, 3, 5, 7]], 4, 1, set(), 7),
    ([[0, 2, 4, 6], [1, 3, 5, 7]], 4, 2, set(), 7),  # CDNA (even starts): 7 stays at VGPRs 4..7 instead
    ([[0, 2, 4, 6], [1, 3, 5, 7]], 4, 1, {2}, 7),  # 2 read elsewhere: 7 stays at VGPRs 4..7 instead (4, 6 read)
    ([[0, 2, 4, 6], [1, 3, 5, 7]], 4, 1, {2, 4}, 8),
    # tuples of 2: {0, 2} would need the VGPR before tuple 2..3 (another tuple's: not taken), and 1 is read later
    # at tuple 0..1; {1, 3} keeps 1 at its place (0 read before): 3 (gfx1250 fp32, compiled: 6 of 8 per pair)
    ([[0, 2], [1, 3]], 2, 1, set(), 3),
    ([[0, 1, 2, 3]], 4, 1, set(), 0),  # in place
])
def test_store_tuple_copies(accesses, t, alignment, kept, copies):
    fresh = [set() for _ in accesses]
    assert store_tuple_copies(accesses, fresh, t, alignment, kept) == copies


def test_store_tuple_copies_checks_the_alignment():
    with pytest.raises(LayoutError, match="alignment"):
        store_tuple_copies([[0, 1]], [set()], VgprTuples.contiguous(2), 4)


@needs.mlir
def test_the_store_copies_priced_are_the_compiled_ones(tmp_path, monkeypatch):
    # gfx1200 fp16, 1 wave: 16 ds_store_b128 of 4 dwords from src tuples of 4 (dwords 4k .. 4k + 3); 8 stores copy
    # all four, 8 keep their first dword where it arrives (ds_store_b128 v75, v[11:14] with v[10:13] loaded): 56
    # v_mov (the per-access count was 64)
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.isa import isa_counts

    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    plan = kernel_plan(*_case("wave32", "blocked[2x1,t32x1,o01]->blocked[1x2,t16x2,o10]", "gfx1200", "fp16"),
                       "gfx1200", 16)
    assert plan.overhead["valu_tuple_copies"] == 56
    assert isa_counts(lower_conversion(plan, binary=False).compiled.isa, "conv")["v_mov"] == 56


@needs.mlir
def test_a_tuple_started_before_the_arriving_one_is_not_counted(tmp_path, monkeypatch):
    # gfx1200 fp32 blocked[2x2,t32x1,o01]->wmma2.16x16, 1 wave: 32 ds_store_2addr_b64 of two 2-dword accesses from
    # src tuples of 4; priced 80 copies, compiled 64: LLVM also starts accesses one VGPR before an arriving tuple
    # (v_mov_b32 v1, v20 then ds_store_2addr_b64 .., v[1:2], .. with v[2:5] loaded), which the rule leaves out
    # (gfx1250 fp32 blocked[1x2,t1x32,o10]->blocked[2x1,t32x1,o01]: the VGPR before is another tuple's, none taken)
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.isa import isa_counts

    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    plan = kernel_plan(*_case("wave32", "blocked[2x2,t32x1,o01]->wmma2.16x16", "gfx1200", "fp32"), "gfx1200", 32)
    assert plan.overhead["valu_tuple_copies"] == 80
    assert isa_counts(lower_conversion(plan, binary=False).compiled.isa, "conv")["v_mov"] == 64
