"""The interpreter's fp8 conversion ops (lowering/interp/ops_fp8_cvt.py) against torch's E4M3
casts (gfx942 FNUZ, gfx950 OCP): rounding, packing into the selected half, byte selects."""

from __future__ import annotations

import numpy as np
import pytest

import needs

needs.require("torch", "flydsl")

import torch  # noqa: E402
from linlayout.lowering.compile import compile_mlir  # noqa: E402
from linlayout.lowering.interpreter import run_kernel  # noqa: E402

KERNEL = """module { gpu.module @m { gpu.func @k(%in: !llvm.ptr<1>, %out: !llvm.ptr<1>, %back: !llvm.ptr<1>,
                                               %pair: !llvm.ptr<1>) kernel {
  %tid = gpu.thread_id x
  %t = arith.index_cast %tid : index to i32
  %c2 = arith.constant 2 : i32
  %i0 = arith.muli %t, %c2 : i32
  %c1 = arith.constant 1 : i32
  %i1 = arith.addi %i0, %c1 : i32
  %p0 = llvm.getelementptr %in[%i0] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  %p1 = llvm.getelementptr %in[%i1] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  %a = llvm.load %p0 : !llvm.ptr<1> -> f32
  %b = llvm.load %p1 : !llvm.ptr<1> -> f32
  %old = arith.constant 4660 : i32
  %r = rocdl.cvt.pk.fp8.f32 %a, %b -> %old[true] : i32
  %po = llvm.getelementptr %out[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
  llvm.store %r, %po : i32, !llvm.ptr<1>
  %f = rocdl.cvt.f32.fp8 %r[3] : f32
  %pb = llvm.getelementptr %back[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  llvm.store %f, %pb : f32, !llvm.ptr<1>
  %v = rocdl.cvt.pk.f32.fp8 %r[true] : vector<2xf32>
  %pp = llvm.getelementptr %pair[%i0] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  llvm.store %v, %pp : vector<2xf32>, !llvm.ptr<1>
  gpu.return } } }"""


@pytest.mark.parametrize("arch,dt", [("gfx942", torch.float8_e4m3fnuz), ("gfx950", torch.float8_e4m3fn)])
def test_fp8_conversions_match_torch(arch, dt):
    isa = compile_mlir(KERNEL, arch, binary=False).isa
    assert "v_cvt_pk_fp8_f32" in isa and "v_cvt_f32_fp8" in isa
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(128) * 4).astype(np.float32)
    x[:4] = [0.0, -0.0, 1e-6, 0.1015625]  # zero, negative zero, underflow, a rounding tie region
    out = np.zeros(64, np.uint32)
    back = np.zeros(64, np.float32)
    pair = np.zeros(128, np.float32)
    _, out, back, pair = run_kernel(KERNEL, "k", [x, out, back, pair], block=64, arch=arch)
    codes = torch.from_numpy(x).to(dt).view(torch.uint8).numpy().astype(np.uint32)
    want = (codes[0::2] << 16) | (codes[1::2] << 24) | 0x1234  # low half of %old kept
    assert np.array_equal(out, want)
    assert np.array_equal(back, torch.from_numpy(x[1::2]).to(dt).float().numpy())
    assert np.array_equal(pair, torch.from_numpy(x).to(dt).float().numpy())
