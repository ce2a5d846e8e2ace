"""linlayout.synth.cost.lgkm_waits: the s_waitcnt LLVM puts in an AMD conversion region, priced per plan
(DS results complete in issue order: a wait before a barrier that follows stores and before an
instruction reading a DS result newer than the last one waited for; one at the end for an unwaited
crossbar result), and the address VALU of lds_address_valu's two rules (a register XOR a formed one,
gfx950's opaque beyond-offset copy once per class).  Each named case below is one where the older
rule, the DS depth (cost.ds_depth), gives another number than the compiled kernel."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from linlayout import LinearLayout
from linlayout.cli.bench import dtype_bits, kernel_plan
from linlayout.synth.cost import ds_depth, lds_address_valu, lgkm_waits
from linlayout.synth.plan import LdsLoad, LdsStore

import needs

DATA = Path(__file__).resolve().parent.parent / "benchmarks" / "data"

# (corpus, name, arch, dtype, the compiled region's s_waitcnt)
CASES = [
    # one wave, no barrier: the loads' results are waited for on the store line, none in the region
    ("triton_amd_corpus.json", "mfma32->mfma16", "gfx90a", "bf16", 0),
    # a barrier after the stores, one lgkmcnt(0) before it (CDNA: one wait drains every load)
    ("triton_amd_corpus.json", "mfma32T->mfma16", "gfx942", "fp32", 1),
    ("triton_amd_corpus.json", "blocked[1x8,t8x8,o10]->mfma16T", "gfx90a", "fp16", 3),
    ("triton_amd_corpus.json", "blocked[1x4,t8x8,o10]->mfma16T", "gfx90a", "fp32", 7),
    # in-wave: each ds_bpermute result read in turn by selects and DPP moves
    ("triton_amd_corpus.json", "mfma16->mfma16T", "gfx942", "fp8", 2),
    ("triton_amd_corpus.json", "mfma32T->dotA32(kw1)", "gfx942", "fp32", 4),
    # RDNA: a wait before each reader of a newer load
    # (2 waves, each holding the whole src: no barrier since session 24, lds_path._exchanges; 5 with it)
    ("triton_wave32_corpus.json", "blocked[1x1,t1x32,o10]->blocked[1x1,t32x1,o01]", "gfx1100", "fp8", 4),
    ("triton_wave32_corpus.json", "wmma2.16x16->dotAwmma2.16x16(kw16)", "gfx1200", "fp8", 8),
    ("triton_wave32_corpus.json", "blocked[1x4,t32x1,o10]->dotBwmma3.16x32T(kw8)", "gfx1250", "fp16", 8),  # (the same: 9)
]


def _plan(corpus: str, name: str, arch: str, dtype: str):
    case = next(c for c in json.loads((DATA / corpus).read_text())["cases"]
                if (c["name"], c["arch"], c["dtype"]) == (name, arch, dtype))
    return kernel_plan(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), arch,
                       dtype_bits(dtype))


@pytest.mark.parametrize("corpus, name, arch, dtype, waits", CASES)
def test_the_region_waits_are_priced_by_the_issue_order_rule(corpus, name, arch, dtype, waits):
    plan = _plan(corpus, name, arch, dtype)
    assert lgkm_waits(plan) == plan.overhead.get("s_waitcnt", 0) == waits
    assert ds_depth(plan) != waits  # the older rule would price these otherwise


@needs.mlir
@pytest.mark.parametrize("corpus, name, arch, dtype, waits", CASES[::2])
def test_the_priced_waits_are_the_compiled_ones(corpus, name, arch, dtype, waits, tmp_path, monkeypatch):
    from linlayout.lowering.conversion import lower_conversion

    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    plan = _plan(corpus, name, arch, dtype)
    assert lower_conversion(plan, binary=False).report["isa_counts"]["s_waitcnt"] == waits


LANE = np.arange(64)
# a swizzled address column: lane bits 0-2 to bytes 16-64, lane bits 3-5 to bytes 128-512
SWIZZLED = ((LANE & 7) << 4) ^ ((LANE >> 3) << 7)


def _store(addr) -> LdsStore:
    return LdsStore(addr=np.array([addr]), width_bytes=4, src=[0])


def test_a_register_xor_a_formed_one_is_one_valu():
    # PTX: every new register costs PTX_ADDR_BASE_VALU; the load's address is the second store's XOR 16,
    # one xor (5 in all) where a new register would cost the constant (7)
    load = LdsLoad(addr=np.array([(SWIZZLED + 0x22000) ^ 16]), width_bytes=4, dst=[0])
    assert lds_address_valu([_store(SWIZZLED), _store(SWIZZLED + 0x22000), load], "sm_90") == 5


def test_gfx950s_opaque_copy_is_counted_once_per_class():
    # two adds beyond the 16-bit offset field from one base: gfx950 passes the base through one opaque
    # copy (Target.opaque_beyond_offset_adds), one v_mov_b32 for the class, not one per add
    steps = [_store(SWIZZLED), _store(SWIZZLED + 0x12000), _store(SWIZZLED + 0x24000)]
    assert [lds_address_valu(steps, arch) for arch in ("gfx942", "gfx950")] == [4, 5]
