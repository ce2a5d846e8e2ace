"""``cost.joined_pair_copies``: a ``ds_write2_b64`` of two 8-byte accesses at consecutive addresses whose halves
lie in place in two different 4-dword src tuples compiles with one half copied (LLVM joins the two stores into
one 16-byte store, then splits it back); the ds_write2st64_b64 LLVM pairs of single stores compile without.  Every plan
here runs on the wave emulator and is compiled; the copies priced are the region's ``v_mov``."""

from __future__ import annotations

import numpy as np
import pytest

import needs
from linlayout import LinearLayout
from linlayout.dtypes import dtype_bits
from linlayout.synth.cost import joined_pair_copies
from linlayout.synth.emulator import verify
from linlayout.synth.steps.lds import LdsStore
from linlayout.synth.steps.mov import Mov


def _case(name: str, arch: str, dtype: str, num_warps: int | None = None) -> tuple[LinearLayout, LinearLayout]:
    from repo_data import corpus

    (c,) = [c for c in corpus()["cases"] if (c["name"], c["arch"], c["dtype"]) == (name, arch, dtype)
            and c.get("set") != "baseline" and num_warps in (None, c["num_warps"])]
    return LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"])


def _compiled_copies(plan) -> int:
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.isa import isa_counts

    return isa_counts(lower_conversion(plan, binary=False).compiled.isa, "conv")["v_mov"]


def _joined(plan) -> int:
    """The joined pairs (``LdsStore.joined``) of ``plan``."""
    return sum(isinstance(st, LdsStore) and st.joined for st in plan.steps)


@needs.mlir
def test_joined_pairs_of_two_tuples_compile_with_one_half_copied(tmp_path, monkeypatch):
    # gfx942 fp32 blocked[1x4,t1x64,o10]->blocked[2x2,t16x4,o10]: the src arrives in buffer_load_dwordx4 tuples;
    # a candidate storing 16 ds_write2_b64 offset1:1, each of halves of two tuples, compiles with 32 v_mov (the
    # kernel plan of dbd59fb did, unpriced: region 50); priced, the kernel plan takes other stores and has none
    from linlayout.cli.bench import kernel_plan
    from linlayout.lowering.emit.conversion_kernel import source_tuples
    from linlayout.synth.convert import candidate_plans

    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    src, dst = _case("blocked[1x4,t1x64,o10]->blocked[2x2,t16x4,o10]", "gfx942", "fp32")
    tuples = source_tuples(src, 32)
    assert tuples.dwords == 4
    plans = candidate_plans(src, dst, "gfx942", 32, src_tuple_dwords=tuples, dst_tuple_dwords=source_tuples(dst, 32),
                            prune=False)
    joined = [p for p in plans if joined_pair_copies(p, tuples)]
    assert joined
    plan = joined[0]
    assert verify(plan).ok
    plan.verified = True  # (run on the emulator above)
    assert (_joined(plan), joined_pair_copies(plan, tuples), plan.counts()["v_mov"]) == (16, 32, 0)
    assert plan.overhead["valu_tuple_copies"] == 32 == _compiled_copies(plan)
    kernel = kernel_plan(src, dst, "gfx942", 32)
    assert verify(kernel).ok
    assert kernel.overhead.get("valu_tuple_copies", 0) == 0 == _compiled_copies(kernel)


@needs.mlir
@pytest.mark.parametrize("name, arch, dtype, num_warps, offsets", [
    # 2 ds_write2_b64 whose second access is 64 accesses on (LLVM: ds_write2st64_b64 offset1:1), each half a
    # 2-dword src tuple: no copy (it was mfma32T->blocked[2x2,t8x8,o10], whose halves were of two tuples, until
    # session 22 gave that kernel a swizzled ordered layout, lds_path.PER_PREFIX_FAMILIES, with no pair)
    ("blocked[2x2,t16x4,o10]->mfma32T", "gfx942", "fp32", 8, [64, 64]),
    # gfx950 fp16: the swizzled ordered layout (16 ds_write2_b64 offset1:1 of halves of two tuples: 32 v_mov,
    # region 66) is priced so and not taken; the kernel plan stores no joined pair
    ("blocked[1x8,t8x8,o10]->mfma16T", "gfx950", "fp16", None, None),
])
def test_kernel_plans_price_the_copies_they_compile_with(name, arch, dtype, num_warps, offsets, tmp_path, monkeypatch):
    from linlayout.cli.bench import kernel_plan

    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    src, dst = _case(name, arch, dtype, num_warps)
    plan = kernel_plan(src, dst, arch, dtype_bits(dtype))
    assert verify(plan).ok
    assert _joined(plan) == 0
    if offsets is not None:
        assert [st.pair_offset for st in plan.steps if isinstance(st, LdsStore) and st.pair] == offsets
    assert plan.counts()["v_mov"] == 0
    assert plan.overhead.get("valu_tuple_copies", 0) == _compiled_copies(plan) == 0
    assert not any("rows swizzled by" in n for n in plan.notes)


def _pair_plan(store: LdsStore, before=()):
    """gfx942 fp32, one wave: the plan of ``before``, then ``store``."""
    from linlayout.synth.plan import Plan

    lay = LinearLayout({"register": [[1], [2], [4]], "lane": [[8 << j] for j in range(6)], "warp": []},
                       [("dim0", 512)])
    return Plan("gfx942", 64, 1, 32, lay, lay, 8, 8, [*before, store], lds_bytes=4096)


def test_a_joined_pair_of_halves_of_two_tuples_copies_the_second_half():
    # dwords 0-1 and 6-7, each half in place in its own 4-dword src tuple: dwords 6-7 copied
    plan = _pair_plan(LdsStore(addr=np.arange(64) * 16, width_bytes=8, src=[0, 1], pair=[6, 7], pair_offset=1))
    assert plan.steps[-1].joined and joined_pair_copies(plan, 4) == 2


def test_an_st64_pair_is_not_joined():
    # ds_write2st64_b64 offset1:1: the second access 64 accesses on, LLVM joins nothing
    plan = _pair_plan(LdsStore(addr=np.arange(64) * 16, width_bytes=8, src=[0, 1], pair=[6, 7], pair_offset=1,
                                  st64=True))
    assert not plan.steps[-1].joined and joined_pair_copies(plan, 4) == 0


def test_a_joined_pair_of_dwords_the_plan_wrote_copies_nothing():
    # dwords 0-1 written by the plan first (a v_mov each): allocated into the joined tuple directly
    plan = _pair_plan(LdsStore(addr=np.arange(64) * 16, width_bytes=8, src=[0, 1], pair=[6, 7], pair_offset=1),
                         before=[Mov(dst=[0, 1], src=[2, 3], kind="v_mov")])
    assert plan.steps[-1].joined and joined_pair_copies(plan, 4) == 0
