"""MFMA on the interpreter vs. numpy matmul, with operands placed by the ISA's general rule
(CDNA4 ISA 7.1.4, docs/amd_facts.md 3.2) written out here independently of the catalog code."""

from __future__ import annotations

import math

import numpy as np
import pytest

import needs

pytestmark = needs.mlir

from interp_kernels import compiles  # noqa: E402
from linlayout.lowering.interpreter import InterpOptions, InterpreterError, run_kernel  # noqa: E402


def mfma_kernel(op: str, at: str, bt: str, ct: str, mods: str = "0, 0, none", scaled: bool = False) -> str:
    scale_params = ", %psa: !llvm.ptr<1>, %psb: !llvm.ptr<1>" if scaled else ""
    scale_loads = """
      %qsa = llvm.getelementptr %psa[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      %qsb = llvm.getelementptr %psb[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      %sa = llvm.load %qsa : !llvm.ptr<1> -> i32
      %sb = llvm.load %qsb : !llvm.ptr<1> -> i32""" if scaled else ""
    sig = f"({at}, {bt}, {ct}, i32, i32)" if scaled else f"({at}, {bt}, {ct})"
    return f"""module {{
  gpu.module @m {{
    gpu.func @k(%pa: !llvm.ptr<1>, %pb: !llvm.ptr<1>, %pc: !llvm.ptr<1>, %out: !llvm.ptr<1>{scale_params}) kernel {{
      %tid = gpu.thread_id x
      %t = arith.index_cast %tid : index to i32
      %qa = llvm.getelementptr %pa[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, {at}
      %qb = llvm.getelementptr %pb[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, {bt}
      %qc = llvm.getelementptr %pc[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, {ct}
      %a = llvm.load %qa : !llvm.ptr<1> -> {at}
      %b = llvm.load %qb : !llvm.ptr<1> -> {bt}
      %c = llvm.load %qc : !llvm.ptr<1> -> {ct}{scale_loads}
      %d = {op} %a, %b, %c, {mods} : {sig} -> {ct}
      %qo = llvm.getelementptr %out[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, {ct}
      llvm.store %d, %qo : {ct}, !llvm.ptr<1>
      gpu.return
    }}
  }}
}}
"""


# ---- the ISA's general placement rule, per element
def input_place(nonk, k_dim, blocks, b, r, k, run=None):
    """(lane, item) holding A[b, r, k] (or B[b, k, r]); ``run`` = consecutive K per run (gfx950 FP8)."""
    kl = k_dim // (64 // (nonk * blocks))
    if run is None:
        return r + nonk * (b + blocks * (k // kl)), k % kl
    groups = 64 // (nonk * blocks)  # lanes groups along K inside one run block
    e = k % run + run * (k // (run * groups))
    return r + nonk * (b + blocks * ((k // run) % groups)), e


def output_place(m, n, blocks, h, b, i, j):
    bi = math.ceil(64 / (n * m / h))
    mi = (64 // bi) // n
    g = m // (h * mi)
    return j + n * ((i // h) % mi + mi * (b % bi)), (i % h) + h * (i // (h * mi) + g * (b // bi))


def scatter_inputs(mat, nonk, k_dim, blocks, items, transpose=False, run=None):
    """Per-lane item arrays (64, items) from a [blocks, nonk, K] matrix (A) or [blocks, K, nonk] (B)."""
    out = np.zeros((64, items), mat.dtype)
    for b in range(blocks):
        for r in range(nonk):
            for k in range(k_dim):
                lane, e = input_place(nonk, k_dim, blocks, b, r, k, run)
                out[lane, e] = mat[b, k, r] if transpose else mat[b, r, k]
    return out


def gather_output(items, m, n, blocks, h):
    d = np.zeros((blocks, m, n), items.dtype)
    for b in range(blocks):
        for i in range(m):
            for j in range(n):
                lane, e = output_place(m, n, blocks, h, b, i, j)
                d[b, i, j] = items[lane, e]
    return d


def scatter_output(mat, m, n, blocks, h, items):
    out = np.zeros((64, items), mat.dtype)
    for b in range(blocks):
        for i in range(m):
            for j in range(n):
                lane, e = output_place(m, n, blocks, h, b, i, j)
                out[lane, e] = mat[b, i, j]
    return out


def _run(text, a_items, b_items, c_items, out_items, arch, waves, scales=()):
    out = np.zeros_like(c_items)
    args = [a_items, b_items, c_items, out, *scales]
    return run_kernel(text, "k", args, grid=1, block=64 * waves, arch=arch)[3]


CASES = [
    # op, arch, M, N, K, blocks, in dtype, a type, c type, c items
    ("rocdl.mfma.f32.32x32x8f16", "gfx942", 32, 32, 8, 1, np.float16, "vector<4xf16>", "vector<16xf32>", 16),
    ("rocdl.mfma.f32.16x16x16f16", "gfx942", 16, 16, 16, 1, np.float16, "vector<4xf16>", "vector<4xf32>", 4),
    ("rocdl.mfma.f32.4x4x4f16", "gfx942", 4, 4, 4, 16, np.float16, "vector<4xf16>", "vector<4xf32>", 4),
    ("rocdl.mfma.f32.32x32x4f16", "gfx942", 32, 32, 4, 2, np.float16, "vector<4xf16>", "vector<32xf32>", 32),
    ("rocdl.mfma.f32.32x32x2f32", "gfx942", 32, 32, 2, 1, np.float32, "f32", "vector<16xf32>", 16),
    ("rocdl.mfma.f32.32x32x1f32", "gfx942", 32, 32, 1, 2, np.float32, "f32", "vector<32xf32>", 32),
    ("rocdl.mfma.f32.16x16x4f32", "gfx942", 16, 16, 4, 1, np.float32, "f32", "vector<4xf32>", 4),
    ("rocdl.mfma.f32.16x16x32.f16", "gfx950", 16, 16, 32, 1, np.float16, "vector<8xf16>", "vector<4xf32>", 4),
    ("rocdl.mfma.f32.32x32x16.f16", "gfx950", 32, 32, 16, 1, np.float16, "vector<8xf16>", "vector<16xf32>", 16),
    ("rocdl.mfma.f64.16x16x4f64", "gfx942", 16, 16, 4, 1, np.float64, "f64", "vector<4xf64>", 4),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] + "-" + c[1] for c in CASES])
def test_mfma_float_layouts_match_matmul(case):
    op, arch, M, N, K, B, dt, at, ct, nc = case
    text = mfma_kernel(op, at, at, ct)
    compiles(text, arch)
    waves = 2
    rng = np.random.default_rng(hash(op) % 2**32)
    na = M * K * B // 64
    h = 1 if ct.endswith("f64>") else 4  # group height of the output rule: 1 row per item for f64
    a_lanes, b_lanes, c_lanes, exp_lanes = [], [], [], []
    for _ in range(waves):
        A = rng.integers(-4, 5, (B, M, K)).astype(dt)
        Bm = rng.integers(-4, 5, (B, K, N)).astype(dt)
        cdt = np.float64 if h == 1 else np.float32
        C = rng.integers(-64, 65, (B, M, N)).astype(cdt)
        D = np.einsum("bmk,bkn->bmn", A.astype(np.float64), Bm.astype(np.float64)) + C
        a_lanes.append(scatter_inputs(A, M, K, B, na))
        b_lanes.append(scatter_inputs(Bm, N, K, B, na, transpose=True))
        c_lanes.append(scatter_output(C, M, N, B, h, nc))
        exp_lanes.append(scatter_output(D.astype(cdt), M, N, B, h, nc))
    got = _run(text, np.concatenate(a_lanes), np.concatenate(b_lanes), np.concatenate(c_lanes), None, arch, waves)
    np.testing.assert_array_equal(got, np.concatenate(exp_lanes))


def test_mfma_rounds_once_from_exact_products():
    # f16 inputs whose exact dot product is not an f32: the result is the float64 sum rounded once
    op, M, N, K = "rocdl.mfma.f32.16x16x16f16", 16, 16, 16
    text = mfma_kernel(op, "vector<4xf16>", "vector<4xf16>", "vector<4xf32>")
    rng = np.random.default_rng(1)
    A = rng.standard_normal((1, M, K)).astype(np.float16)
    Bm = rng.standard_normal((1, K, N)).astype(np.float16)
    C = rng.standard_normal((1, M, N)).astype(np.float32)
    D = (np.einsum("bmk,bkn->bmn", A.astype(np.float64), Bm.astype(np.float64)) + C).astype(np.float32)
    got = _run(text, scatter_inputs(A, M, K, 1, 4), scatter_inputs(Bm, N, K, 1, 4, transpose=True),
               scatter_output(C, M, N, 1, 4, 4), None, "gfx942", 1)
    np.testing.assert_array_equal(got, scatter_output(D, M, N, 1, 4, 4))


def _bits_of(x: np.ndarray, width: int) -> np.ndarray:
    return x.view({16: np.uint16, 32: np.uint32}[width]) if width in (16, 32) else x


def test_mfma_bf16_and_i8():
    # bf16 as vector<4xi16> bit patterns (16x16x16bf16.1k) and i8 packed in an i64 (32x32x16.i8)
    rng = np.random.default_rng(2)
    M = N = 16
    K = 16
    A = rng.integers(-8, 9, (1, M, K)).astype(np.float32)
    Bm = rng.integers(-8, 9, (1, K, N)).astype(np.float32)
    to_bf16 = lambda v: (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)  # exact for small ints
    text = mfma_kernel("rocdl.mfma.f32.16x16x16bf16.1k", "vector<4xi16>", "vector<4xi16>", "vector<4xf32>")
    compiles(text)
    got = _run(text, scatter_inputs(to_bf16(A), M, K, 1, 4), scatter_inputs(to_bf16(Bm), N, K, 1, 4, transpose=True),
               np.zeros((64, 4), np.float32), None, "gfx942", 1)
    np.testing.assert_array_equal(got, scatter_output((A[0] @ Bm[0])[None].astype(np.float32), M, N, 1, 4, 4))

    M = N = 32
    K = 16
    A = rng.integers(-128, 128, (1, M, K)).astype(np.int8)
    Bm = rng.integers(-128, 128, (1, K, N)).astype(np.int8)
    C = rng.integers(-2**31, 2**31, (1, M, N), dtype=np.int64).astype(np.int32)
    text = mfma_kernel("rocdl.mfma.i32.32x32x16.i8", "i64", "i64", "vector<16xi32>")
    compiles(text)
    got = _run(text, scatter_inputs(A, M, K, 1, 8), scatter_inputs(Bm, N, K, 1, 8, transpose=True),
               scatter_output(C, M, N, 1, 4, 16), None, "gfx942", 1)
    D = (A[0].astype(np.int64) @ Bm[0].astype(np.int64) + C[0]).astype(np.int32)  # wraps mod 2**32
    np.testing.assert_array_equal(got.view(np.int32), scatter_output(D[None], M, N, 1, 4, 16))


def fp8_value(code: int, exp_bits: int, man_bits: int, bias: int, nan_codes=()) -> float:
    """An 8/6/4-bit float code by the textbook formula (no inf in the formats used here)."""
    if code in nan_codes:
        return float("nan")
    total = 1 + exp_bits + man_bits
    s = (code >> (total - 1)) & 1
    e = (code >> man_bits) & ((1 << exp_bits) - 1)
    m = code & ((1 << man_bits) - 1)
    v = (m / 2**man_bits) * 2.0 ** (1 - bias) if e == 0 else (1 + m / 2**man_bits) * 2.0 ** (e - bias)
    return -v if s else v


@pytest.mark.parametrize("arch,exp_bits,man_bits,bias", [("gfx942", 4, 3, 8), ("gfx950", 4, 3, 7)])
def test_mfma_fp8_encodings_per_arch(arch, exp_bits, man_bits, bias):
    # gfx942 fp8 = E4M3FNUZ (bias 8), gfx950 fp8 = OCP E4M3FN (bias 7)
    M = N = 16
    K = 32
    rng = np.random.default_rng(3)
    codes_a = rng.choice([c for c in range(0x20, 0x50)] + [c | 0x80 for c in range(0x20, 0x50)], (1, M, K)).astype(np.uint8)
    codes_b = rng.choice(list(range(0x28, 0x48)), (1, K, N)).astype(np.uint8)
    dec = np.vectorize(lambda c: fp8_value(int(c), exp_bits, man_bits, bias))
    D = dec(codes_a)[0] @ dec(codes_b)[0]
    text = mfma_kernel("rocdl.mfma.f32.16x16x32.fp8.fp8", "i64", "i64", "vector<4xf32>")
    compiles(text, arch)
    got = _run(text, scatter_inputs(codes_a, M, K, 1, 8), scatter_inputs(codes_b, N, K, 1, 8, transpose=True),
               np.zeros((64, 4), np.float32), None, arch, 1)
    np.testing.assert_array_equal(got, scatter_output(D[None].astype(np.float32), M, N, 1, 4, 4))


def test_mfma_cbsz_abid_blgp_broadcasts():
    # 32x32x1f32 (2 blocks): CBSZ=1, ABID=1 -> every lane reads A from lane l%32 + 32; BLGP=2 -> B from l%32 + 32
    text = mfma_kernel("rocdl.mfma.f32.32x32x1f32", "f32", "f32", "vector<32xf32>", "1, 1, bcast_second_32")
    compiles(text)
    rng = np.random.default_rng(4)
    a = rng.integers(-4, 5, (64, 1)).astype(np.float32)
    b = rng.integers(-4, 5, (64, 1)).astype(np.float32)
    lane = np.arange(64)
    a_eff, b_eff = a[lane % 32 + 32], b[lane % 32 + 32]
    A = np.zeros((2, 32, 1), np.float32)
    Bm = np.zeros((2, 1, 32), np.float32)
    for blk in range(2):
        for r in range(32):
            la, _ = input_place(32, 1, 2, blk, r, 0)
            A[blk, r, 0] = a_eff[la, 0]
            Bm[blk, 0, r] = b_eff[la, 0]
    assert (A[0] == A[1]).all()  # the broadcast makes both blocks see block 1's A
    D = np.einsum("bmk,bkn->bmn", A, Bm)
    got = _run(text, a, b, np.zeros((64, 32), np.float32), None, "gfx942", 1)
    np.testing.assert_array_equal(got, scatter_output(D, 32, 32, 2, 4, 32))


def test_mfma_scaled_f8f6f4_fp8_times_fp4():
    # gfx950 v_mfma_scale_f32_16x16x128_f8f6f4, A fp8 (E4M3, 16-item K runs), B fp4 (E2M1, general rule),
    # E8M0 scales per 32 K picked by opsel bytes
    M = N = 16
    K = 128
    rng = np.random.default_rng(5)
    ca = rng.choice(list(range(0x28, 0x40)) + list(range(0xA8, 0xC0)), (1, M, K)).astype(np.uint8)
    cb = rng.integers(0, 16, (1, K, N)).astype(np.uint8)
    va = np.vectorize(lambda c: fp8_value(int(c), 4, 3, 7))(ca)[0]
    vb = np.vectorize(lambda c: fp8_value(int(c), 2, 1, 1))(cb)[0]
    sa = rng.integers(125, 130, (M, K // 32))
    sb = rng.integers(125, 130, (K // 32, N))
    D = (va * np.repeat(2.0 ** (sa - 127), 32, axis=1)) @ (vb * np.repeat(2.0 ** (sb - 127), 32, axis=0))
    a_items = scatter_inputs(ca, M, K, 1, 32, run=16)  # (64, 32) bytes = vector<8xi32>
    b_nib = scatter_inputs(cb, N, K, 1, 32, transpose=True)  # (64, 32) nibbles
    b_bytes = np.zeros((64, 32), np.uint8)
    b_bytes[:, :16] = b_nib[:, 0::2] | (b_nib[:, 1::2] << 4)
    lane = np.arange(64)
    opsel_a, opsel_b = 1, 2
    scale_a = np.zeros(64, np.uint32)
    scale_b = np.zeros(64, np.uint32)
    scale_a |= sa[lane % 16, lane // 16].astype(np.uint32) << (8 * opsel_a)
    scale_b |= sb[lane // 16, lane % 16].astype(np.uint32) << (8 * opsel_b)
    scale_a |= 0x7F  # a decoy in byte 0 that opsel must skip
    text = mfma_kernel("rocdl.mfma.scale.f32.16x16x128.f8f6f4", "vector<8xi32>", "vector<8xi32>", "vector<4xf32>",
                       f"fp8_e4m3, fp4_e2m1, {opsel_a}, %sa, {opsel_b}, %sb", scaled=True)
    compiles(text, "gfx950")
    out = np.zeros((64, 4), np.float32)
    got = run_kernel(text, "k", [a_items, b_bytes, np.zeros((64, 4), np.float32), out, scale_a, scale_b],
                     block=64, arch="gfx950")[3]
    np.testing.assert_array_equal(got, scatter_output(D[None].astype(np.float32), M, N, 1, 4, 4))


def test_mfma_errors():
    text = mfma_kernel("rocdl.mfma.f32.16x16x32.f16", "vector<8xf16>", "vector<8xf16>", "vector<4xf32>")
    with pytest.raises(InterpreterError, match="16x16x32"):  # gfx950-only instruction on gfx942
        run_kernel(text, "k", [np.zeros((64, 8), np.float16)] * 2 + [np.zeros((64, 4), np.float32)] * 2, arch="gfx942")
    text = mfma_kernel("rocdl.mfma.f32.32x32x8f16", "vector<4xf16>", "vector<4xf16>", "vector<16xf32>", "0, 0, bcast_first_32")
    with pytest.raises(InterpreterError, match="BLGP"):
        run_kernel(text, "k", [np.zeros((64, 4), np.float16)] * 2 + [np.zeros((64, 16), np.float32)] * 2, arch="gfx942")


def test_fp8_style_is_a_parameter():
    text = mfma_kernel("rocdl.mfma.f32.16x16x32.fp8.fp8", "i64", "i64", "vector<4xf32>")
    a = np.full((64, 8), 0x40, np.uint8)  # 1.0 in E4M3FNUZ, 2.0 in E4M3FN
    args = [a, a, np.zeros((64, 4), np.float32), np.zeros((64, 4), np.float32)]
    fnuz = run_kernel(text, "k", args, arch="gfx942")[3]
    ocp = run_kernel(text, "k", args, arch="gfx942", options=InterpOptions(fp8_style_gfx942="ocp"))[3]
    assert (fnuz == 32.0).all() and (ocp == 128.0).all()


def test_mfma_f8f6f4_with_constant_zero_scales_runs_unscaled():
    # The unscaled v_mfma_f32_16x16x128_f8f6f4 is written as the scale intrinsic with constant-zero
    # scales; LLVM selects the unscaled instruction (scale 1), so the interpreter must not apply 2**-127.
    M = N = 16
    K = 128
    rng = np.random.default_rng(7)
    ca = rng.choice(list(range(0x28, 0x40)) + list(range(0xA8, 0xC0)), (1, M, K)).astype(np.uint8)
    cb = rng.choice(list(range(0x28, 0x40)) + list(range(0xA8, 0xC0)), (1, K, N)).astype(np.uint8)
    va = np.vectorize(lambda c: fp8_value(int(c), 4, 3, 7))(ca)[0]
    vb = np.vectorize(lambda c: fp8_value(int(c), 4, 3, 7))(cb)[0]
    D = va @ vb
    a_items = scatter_inputs(ca, M, K, 1, 32, run=16)
    b_items = scatter_inputs(cb, N, K, 1, 32, transpose=True, run=16)
    text = mfma_kernel("rocdl.mfma.scale.f32.16x16x128.f8f6f4", "vector<8xi32>", "vector<8xi32>", "vector<4xf32>",
                       "fp8_e4m3, fp8_e4m3, 0, %z, 0, %z", scaled=True)
    text = text.replace("%sb = llvm.load %qsb : !llvm.ptr<1> -> i32",
                        "%sb = llvm.load %qsb : !llvm.ptr<1> -> i32\n      %z = arith.constant 0 : i32")
    isa = compiles(text, "gfx950")
    assert "v_mfma_f32_16x16x128_f8f6f4" in isa and "v_mfma_scale" not in isa
    out = np.zeros((64, 4), np.float32)
    zeros = np.zeros(64, np.uint32)
    got = run_kernel(text, "k", [a_items, b_items, np.zeros((64, 4), np.float32), out, zeros, zeros],
                     block=64, arch="gfx950")[3]
    np.testing.assert_array_equal(got, scatter_output(D[None].astype(np.float32), M, N, 1, 4, 4))
