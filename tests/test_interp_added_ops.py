"""Ops added to the interpreter for the kernels: fp8 <-> f32 conversions, inverse ballot,
comment-only inline asm with tied outputs, ``llvm.amdgcn.softwqm`` (a copy) and ``llvm.ctpop.i32``;
checked against torch's fp8 casts, the ISA text and counts written out bit by bit."""

from __future__ import annotations

import numpy as np
import pytest

import needs

pytestmark = needs.mlir

from interp_kernels import compiles, lane_kernel, multi_kernel, run_lanes  # noqa: E402

torch = needs.module("torch")
FP8 = {"gfx942": "float8_e4m3fnuz", "gfx950": "float8_e4m3fn"}


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_fp8_conversions_match_torch(arch):
    rng = np.random.default_rng(1)
    a = (rng.standard_normal(64) * 20).astype(np.float32)
    b = (rng.standard_normal(64) / 50).astype(np.float32)
    a[:3] = [0.0, 1.0, -3.5]
    body = """      %c64 = arith.constant 64 : i32
      %iy = arith.addi %t, %c64 : i32
      %py = llvm.getelementptr %in[%iy] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      %y = llvm.load %py : !llvm.ptr<1> -> f32
      %old = arith.constant 305419896 : i32
      %lo = rocdl.cvt.pk.fp8.f32 %x, %y -> %old[false] : i32
      %hi = rocdl.cvt.pk.fp8.f32 %x, %y -> %lo[true] : i32
      %res0 = arith.addi %lo, %lo : i32
      %res1 = arith.addi %hi, %hi : i32
      %f = rocdl.cvt.f32.fp8 %hi[3] : f32
      %res2 = arith.bitcast %f : f32 to i32
      %v = rocdl.cvt.pk.f32.fp8 %hi[false] : vector<2xf32>
      %v1 = vector.extract %v[1] : f32 from vector<2xf32>
      %res3 = arith.bitcast %v1 : f32 to i32"""
    text = multi_kernel(body, 4, 64, in_type="f32")
    got = run_lanes(text, np.concatenate([a, b]), np.uint32, arch=arch, out_shape=4 * 64).reshape(4, 64)
    dt = getattr(torch, FP8[arch])
    code = lambda v: torch.from_numpy(v).to(dt).view(torch.uint8).numpy().astype(np.int64)
    lo = (0x12345678 & 0xFFFF0000) | code(a) | code(b) << 8
    hi = (lo & 0xFFFF) | code(a) << 16 | code(b) << 24
    np.testing.assert_array_equal(got[0], (2 * lo) % 2**32)
    np.testing.assert_array_equal(got[1], (2 * hi) % 2**32)
    back = lambda v: torch.from_numpy(v).to(dt).float().numpy()
    np.testing.assert_array_equal(got[2].view(np.float32), back(b))  # byte 3 of hi = fp8(b)
    np.testing.assert_array_equal(got[3].view(np.float32), back(b))  # bytes 0, 1 of hi = fp8(a), fp8(b)


def test_inverse_ballot_and_tied_inline_asm_marker():
    body = """      %m = arith.constant 6148914691236517205 : i64
      %bit = llvm.call_intrinsic "llvm.amdgcn.inverse.ballot.i64"(%m) : (i64) -> i1
      %b32 = arith.extui %bit : i1 to i32
      %pinned = llvm.inline_asm has_side_effects "; pin", "=v,0" %x : (i32) -> i32
      %res = arith.addi %pinned, %b32 : i32"""
    text = lane_kernel(body)
    compiles(text)
    x = np.arange(100, 164, dtype=np.uint32)
    np.testing.assert_array_equal(run_lanes(text, x, np.uint32), x + (np.arange(64) % 2 == 0))



@pytest.mark.parametrize("arch,lanes", [("gfx942", 64), ("gfx950", 64), ("gfx1100", 32)])
def test_softwqm_is_a_copy_and_no_instruction(arch, lanes):
    """``atoms.unseen_word``'s ``llvm.amdgcn.softwqm`` on a sign-extended bit of ``x``, then ``& K + A`` (a lane
    choice's form): the interpreter passes the value through, and the compiled kernel keeps the ``v_bfe_i32``, the
    AND and the add as written (no ``v_cndmask_b32`` of the select LLVM folds them into without it, no ``s_nop``
    as after an inline asm, no copy)."""
    from linlayout.lowering.isa import instructions

    body = """      %c30 = arith.constant 30 : i32
      %c31 = arith.constant 31 : i32
      %s = arith.shli %x, %c30 : i32
      %bit = arith.shrsi %s, %c31 : i32
      %w = llvm.call_intrinsic "llvm.amdgcn.softwqm.i32"(%bit) : (i32) -> i32
      %k = arith.constant 84148480 : i32
      %m = arith.andi %w, %k : i32
      %a = arith.constant 100795392 : i32
      %res = arith.addi %m, %a : i32"""
    text = lane_kernel(body)
    ops = [ln.split()[0] for ln in instructions(compiles(text, arch))]
    assert "v_bfe_i32" in ops and not [op for op in ops if op.startswith(("v_cndmask", "s_nop", "v_mov"))], ops
    x = np.arange(lanes, dtype=np.uint32) * np.uint32(0x9E3779B1)
    expected = np.where(x >> 1 & 1, np.uint32(84148480 + 100795392), np.uint32(100795392))
    np.testing.assert_array_equal(run_lanes(text, x, np.uint32, arch=arch, block=lanes), expected)


@pytest.mark.parametrize("arch,lanes", [("gfx942", 64), ("gfx1100", 32)])
def test_ctpop_counts_the_set_bits_of_each_lane(arch, lanes):
    """``llvm.ctpop.i32`` (the lane-value popcount of lowering.emit.lane_values, ``s_bcnt1_i32_b32`` where
    uniform) on per-lane values: 0, all ones (32, not the count of a signed -1's magnitude), single high and low
    bits, alternating bits and odd words; the counts written out bit by bit here."""
    body = '      %res = llvm.call_intrinsic "llvm.ctpop.i32"(%x) : (i32) -> i32'
    text = lane_kernel(body)
    fixed = [0, 0xFFFFFFFF, 1, 0x80000000, 0x55555555, 0xAAAAAAAA, 0x7FFFFFFF, 0xFFFFFFFE, 0x00010000]
    x = np.array(fixed + [(k * 0x9E3779B1) % 2**32 for k in range(lanes - len(fixed))], np.uint32)
    expected = np.array([sum(int(v) >> b & 1 for b in range(32)) for v in x], np.uint32)
    assert list(expected[:9]) == [0, 32, 1, 1, 16, 16, 31, 31, 1]
    np.testing.assert_array_equal(run_lanes(text, x, np.uint32, arch=arch, block=lanes), expected)


def test_ctpop_of_another_width_is_refused():
    from linlayout.lowering.interp.errors import InterpreterError

    body = """      %w = arith.extui %x : i32 to i64
      %c = llvm.call_intrinsic "llvm.ctpop.i32"(%w) : (i64) -> i64
      %res = arith.trunci %c : i64 to i32"""
    with pytest.raises(InterpreterError, match=r"llvm.ctpop.i32 takes one i32 and returns i32"):
        run_lanes(lane_kernel(body), np.zeros(64, np.uint32), np.uint32, check_compile=False)
