"""arith / vector / scf / llvm value ops and the interpreter's error reporting.

Expected values come from numpy (and torch for bf16 rounding); every kernel that should
compile is compiled for gfx942 first."""

from __future__ import annotations

import re

import numpy as np
import pytest

import needs

pytestmark = needs.mlir

from interp_kernels import compiles, lane_kernel, multi_kernel, run_lanes, seq  # noqa: E402
from linlayout.lowering.interpreter import InterpOptions, InterpreterError, load_kernel, run_kernel, supported_ops  # noqa: E402

TWO_INPUTS = """      %c64 = arith.constant 64 : i32
      %iy = arith.addi %t, %c64 : i32
      %py = llvm.getelementptr %in[%iy] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, {t}
      %y = llvm.load %py : !llvm.ptr<1> -> {t}
"""


def two_input_run(ops: list, x: np.ndarray, y: np.ndarray, t: str = "i32", out_t: str = "i32", out_dtype=np.uint32):
    """Run ``ops`` (each defining ``%res{k}`` from ``%x``, ``%y``) on 64 lanes; (len(ops), 64)."""
    body = TWO_INPUTS.format(t=t) + "\n".join(ops)
    text = multi_kernel(body, len(ops), 64, in_type=t, out_type=out_t)
    got = run_lanes(text, np.concatenate([x, y]), out_dtype, out_shape=64 * len(ops))
    return got.reshape(len(ops), 64)


def test_integer_ops_match_numpy():
    rng = np.random.default_rng(1)
    x = rng.integers(-2**31, 2**31, 64).astype(np.int32)
    y = rng.integers(-2**31, 2**31, 64).astype(np.int32) | 1
    y[:4] = [1, -1, 7, -7]
    x[:4] = [-(2**31) + 1, 5, -20, 20]
    names = ["addi", "subi", "muli", "andi", "ori", "xori", "divui", "remui", "divsi", "remsi", "maxsi", "minsi",
             "maxui", "minui", "ceildivsi", "floordivsi", "ceildivui"]
    ops = [f"      %res{k} = arith.{n} %x, %y : i32" for k, n in enumerate(names)]
    base = len(ops)
    ops += [f"""      %c31_{k} = arith.constant 31 : i32
      %s{k} = arith.andi %y, %c31_{k} : i32
      %res{base + k} = arith.{n} %x, %s{k} : i32""" for k, n in enumerate(["shli", "shrui", "shrsi"])]
    preds = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
    base = len(ops)
    ops += [f"""      %b{k} = arith.cmpi {p}, %x, %y : i32
      %res{base + k} = arith.extui %b{k} : i1 to i32""" for k, p in enumerate(preds)]
    got = two_input_run(ops, x.view(np.uint32), y.view(np.uint32)).view(np.int32)
    X, Y = x.astype(np.int64), y.astype(np.int64)
    ux, uy = X % 2**32, Y % 2**32
    tdiv = np.sign(X) * np.sign(Y) * (np.abs(X) // np.abs(Y))  # C division truncates toward zero
    exp = [X + Y, X - Y, X * Y, X & Y, X | Y, X ^ Y, ux // uy, ux % uy, tdiv, X - tdiv * Y, np.maximum(X, Y),
           np.minimum(X, Y), np.maximum(ux, uy), np.minimum(ux, uy), -((-X) // Y), X // Y, -((-ux) // uy)]
    s = Y & 31
    exp += [(ux << s), ux >> s, X >> s]
    exp += [X == Y, X != Y, X < Y, X <= Y, X > Y, X >= Y, ux < uy, ux <= uy, ux > uy, ux >= uy]
    for k, e in enumerate(exp):
        np.testing.assert_array_equal(got[k], (np.asarray(e).astype(np.int64) % 2**32).astype(np.uint32).view(np.int32),
                                      err_msg=(names + ["shli", "shrui", "shrsi"] + preds)[k])


def test_narrow_integers_and_casts():
    x = np.array(list(range(-32, 32)), np.int32)
    ops = [
        """      %a = arith.trunci %x : i32 to i8
      %b = arith.muli %a, %a : i8
      %res0 = arith.extsi %b : i8 to i32""",
        """      %a1 = arith.trunci %x : i32 to i8
      %b1 = arith.muli %a1, %a1 : i8
      %res1 = arith.extui %b1 : i8 to i32""",
        """      %i = arith.index_cast %x : i32 to index
      %c3 = arith.constant 3 : index
      %j = arith.muli %i, %c3 : index
      %res2 = arith.index_cast %j : index to i32""",
        """      %iu = arith.index_castui %x : i32 to index
      %c32 = arith.constant 32 : index
      %ju = arith.shrui %iu, %c32 : index
      %res3 = arith.index_cast %ju : index to i32""",
        """      %a4 = arith.trunci %x : i32 to i4
      %b4 = arith.addi %a4, %a4 : i4
      %res4 = arith.extsi %b4 : i4 to i32""",
    ]
    got = two_input_run(ops, x.view(np.uint32), x.view(np.uint32)).view(np.int32)
    sq = ((x * x) & 0xFF).astype(np.int64)
    np.testing.assert_array_equal(got[0], np.where(sq >= 128, sq - 256, sq))
    np.testing.assert_array_equal(got[1], sq)
    np.testing.assert_array_equal(got[2], 3 * x)
    np.testing.assert_array_equal(got[3], 0)  # zero-extended: the high word is 0
    d = (2 * x) & 0xF
    np.testing.assert_array_equal(got[4], np.where(d >= 8, d - 16, d))


def test_float_ops_and_comparisons():
    rng = np.random.default_rng(2)
    x = rng.standard_normal(64).astype(np.float32) * 100
    y = rng.standard_normal(64).astype(np.float32)
    x[:6] = [np.nan, 1.0, 0.0, -0.0, np.inf, 2.0]
    y[:6] = [1.0, np.nan, -0.0, 0.0, np.inf, 2.0]
    names = ["addf", "subf", "mulf", "divf", "maximumf", "minimumf", "maxnumf", "minnumf"]
    ops = [f"      %res{k} = arith.{n} %x, %y : f32" for k, n in enumerate(names)]
    got = two_input_run(ops, x, y, t="f32", out_t="f32", out_dtype=np.float32)
    with np.errstate(all="ignore"):
        exp = [x + y, x - y, x * y, x / y, np.maximum(x, y), np.minimum(x, y), np.fmax(x, y), np.fmin(x, y)]
    for k, e in enumerate(exp):
        np.testing.assert_array_equal(got[k], e.astype(np.float32), err_msg=names[k])
    # signed zeros: maximumf(0, -0) = +0, minimumf(-0, 0) = -0
    assert not np.signbit(got[4][2]) and not np.signbit(got[4][3])
    assert np.signbit(got[5][2]) and np.signbit(got[5][3])
    preds = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"]
    ops = [f"""      %b{k} = arith.cmpf {p}, %x, %y : f32
      %res{k} = arith.extui %b{k} : i1 to i32""" for k, p in enumerate(preds)]
    got = two_input_run(ops, x, y, t="f32")
    un = np.isnan(x) | np.isnan(y)
    with np.errstate(invalid="ignore"):
        base = {"eq": x == y, "gt": x > y, "ge": x >= y, "lt": x < y, "le": x <= y, "ne": (x != y) & ~un}
    for k, p in enumerate(preds):
        if p in ("false", "true"):
            e = np.full(64, p == "true")
        elif p in ("ord", "uno"):
            e = ~un if p == "ord" else un
        elif p[0] == "o":
            e = base[p[1:]] & ~un
        else:
            e = base[p[1:]] | un if p != "une" else (x != y) | un
        np.testing.assert_array_equal(got[k], e.astype(np.uint32), err_msg=p)


def test_float_conversions_round_to_nearest_even():
    torch = needs.module("torch")
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(64) * np.exp2(rng.integers(-20, 20, 64))).astype(np.float32)
    x[:5] = [65520.0, 65519.0, 1e-8, -3.0e38, np.float32(1.0) + np.float32(2**-8)]
    ops = [
        """      %h = arith.truncf %x : f32 to f16
      %res0 = arith.extf %h : f16 to f32""",
        """      %b = arith.truncf %x : f32 to bf16
      %res1 = arith.extf %b : bf16 to f32""",
        """      %h2 = arith.truncf %x : f32 to f16
      %g2 = arith.truncf %y : f32 to f16
      %s2 = arith.addf %h2, %g2 : f16
      %res2 = arith.extf %s2 : f16 to f32""",
        """      %b3 = arith.truncf %x : f32 to bf16
      %c3 = arith.truncf %y : f32 to bf16
      %m3 = arith.mulf %b3, %c3 : bf16
      %res3 = arith.extf %m3 : bf16 to f32""",
    ]
    y = (rng.standard_normal(64) * 3).astype(np.float32)
    got = two_input_run(ops, x, y, t="f32", out_t="f32", out_dtype=np.float32)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got[0], x.astype(np.float16).astype(np.float32))
        np.testing.assert_array_equal(got[2], (x.astype(np.float16) + y.astype(np.float16)).astype(np.float32))
    bf = lambda a: torch.from_numpy(a).to(torch.bfloat16)
    np.testing.assert_array_equal(got[1], bf(x).float().numpy())
    np.testing.assert_array_equal(got[3], (bf(x) * bf(y)).float().numpy())


def test_int_float_conversions_and_bitcasts():
    x = np.array([0.0, -1.5, 2.5, 3e9, -3e9, np.nan, 1e20, -0.7] * 8, np.float32)
    ops = [
        "      %res0 = arith.fptosi %x : f32 to i32",
        "      %res1 = arith.fptoui %x : f32 to i32",
        """      %i2 = arith.fptosi %x : f32 to i32
      %f2 = arith.sitofp %i2 : i32 to f32
      %res2 = arith.bitcast %f2 : f32 to i32""",
        "      %res3 = arith.bitcast %x : f32 to i32",
        """      %v4 = llvm.bitcast %x : f32 to vector<2xf16>
      %e4 = vector.extract %v4[1] : f16 from vector<2xf16>
      %w4 = arith.extf %e4 : f16 to f32
      %res4 = arith.bitcast %w4 : f32 to i32""",
        """      %big = arith.constant -1 : i32
      %f5 = arith.uitofp %big : i32 to f32
      %res5 = arith.bitcast %f5 : f32 to i32""",
    ]
    got = two_input_run(ops, x, x, t="f32")
    sat = lambda lo, hi: np.clip(np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0)), lo, hi).astype(np.int64)
    np.testing.assert_array_equal(got[0].view(np.int32), sat(-2**31, 2**31 - 1))
    np.testing.assert_array_equal(got[1], sat(0, 2**32 - 1))
    np.testing.assert_array_equal(got[2].view(np.float32), sat(-2**31, 2**31 - 1).astype(np.float32))
    np.testing.assert_array_equal(got[3], x.view(np.uint32))
    np.testing.assert_array_equal(got[4].view(np.float32), x.view(np.float16)[1::2].astype(np.float32))
    assert (got[5].view(np.float32) == np.float32(4294967295.0)).all()


# ------------------------------------------------------------------ vector
def test_vector_ops():
    x = seq(64, seed=4)
    ops = [
        """      %b = vector.broadcast %x : i32 to vector<4xi32>
      %st = vector.step : vector<4xindex>
      %sti = arith.index_cast %st : vector<4xindex> to vector<4xi32>
      %v = arith.addi %b, %sti : vector<4xi32>
      %res0 = vector.reduction <add>, %v : vector<4xi32> into i32""",
        """      %c3 = arith.constant 3 : i32
      %lane3 = arith.andi %t, %c3 : i32
      %li = arith.index_cast %lane3 : i32 to index
      %v1 = vector.from_elements %x, %t, %c3, %lane3 : vector<4xi32>
      %res1 = vector.extract %v1[%li] : i32 from vector<4xi32>""",
        """      %z = arith.constant dense<0> : vector<2x4xi32>
      %c3i = arith.constant 3 : i32
      %l2 = arith.andi %t, %c3i : i32
      %l2i = arith.index_cast %l2 : i32 to index
      %in2 = vector.insert %x, %z[1, %l2i] : i32 into vector<2x4xi32>
      %flat = vector.shape_cast %in2 : vector<2x4xi32> to vector<8xi32>
      %sl = vector.shuffle %flat, %flat [3, 7] : vector<8xi32>, vector<8xi32>
      %r2a = vector.reduction <xor>, %sl : vector<2xi32> into i32
      %sl2 = vector.extract_strided_slice %flat {offsets = [3], sizes = [2], strides = [1]} : vector<8xi32> to vector<2xi32>
      %r2b = vector.reduction <xor>, %sl2 : vector<2xi32> into i32
      %res2 = arith.addi %r2a, %r2b : i32""",
        """      %z3 = arith.constant dense<7> : vector<8xi32>
      %p3 = vector.broadcast %x : i32 to vector<2xi32>
      %q3 = vector.insert_strided_slice %p3, %z3 {offsets = [5], strides = [1]} : vector<2xi32> into vector<8xi32>
      %sh = vector.shuffle %q3, %z3 [6, 0, 15] : vector<8xi32>, vector<8xi32>
      %res3 = vector.reduction <add>, %sh : vector<3xi32> into i32""",
        """      %v4 = vector.from_elements %x, %t : vector<2xi32>
      %c1_4 = arith.constant 1 : i32
      %e4 = llvm.extractelement %v4[%c1_4 : i32] : vector<2xi32>
      %w4 = llvm.insertelement %e4, %v4[%c1_4 : i32] : vector<2xi32>
      %m4 = vector.reduction <maxsi>, %w4 : vector<2xi32> into i32
      %res4 = arith.subi %m4, %e4 : i32""",
    ]
    got = two_input_run(ops, x, x)
    t = np.arange(64, dtype=np.uint32)
    np.testing.assert_array_equal(got[0], 4 * x + 6)
    np.testing.assert_array_equal(got[1], np.choose(t & 3, [x, t, np.full(64, 3), t & 3]))
    # x sits at position (1, t&3) = flat 4 + t&3: elements 3,7 hold it when t&3 == 3, elements 3,4 when t&3 == 0
    np.testing.assert_array_equal(got[2], np.where(t & 3 == 3, x, 0) + np.where(t & 3 == 0, x, 0))
    np.testing.assert_array_equal(got[3], x + 7 + 7)  # q3[6] = x, z3[0] = 7, z3[7] = 7
    np.testing.assert_array_equal(got[4], np.maximum(x, t) - t)


def test_float_reduction_is_ordered_and_fma():
    x = np.array([1e8, 1.0, -1e8, 1.0] * 16, np.float32)
    ops = ["""      %b = vector.broadcast %x : f32 to vector<4xf32>
      %cst = arith.constant dense<[1.0e8, 1.0, -1.0e8, 1.0]> : vector<4xf32>
      %res0 = vector.reduction <add>, %cst : vector<4xf32> into f32""",
           """      %c = arith.constant 3.0 : f32
      %res1 = math.fma %x, %c, %x : f32"""]
    got = two_input_run(ops, x, x, t="f32", out_t="f32", out_dtype=np.float32)
    assert (got[0] == np.float32(1.0)).all()  # ((1e8 + 1) - 1e8) + 1 in f32 order = 0 + 1
    np.testing.assert_array_equal(got[1], 4 * x)


# ------------------------------------------------------------------ scf
def test_scf_for_accumulation_and_divergent_bounds():
    x = seq(64, seed=5)
    ops = ["""      %c0 = arith.constant 0 : index
      %c10 = arith.constant 10 : index
      %c1 = arith.constant 1 : index
      %res0 = scf.for %i = %c0 to %c10 step %c1 iter_args(%acc = %x) -> (i32) {
        %ii = arith.index_cast %i : index to i32
        %n = arith.addi %acc, %ii : i32
        scf.yield %n : i32
      }""", """      %z = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      %c5 = arith.constant 5 : i32
      %ub = arith.remui %t, %c5 : i32
      %res1 = scf.for %j = %z to %ub step %one iter_args(%s = %z) -> (i32) : i32 {
        %sq = arith.muli %j, %j : i32
        %n2 = arith.addi %s, %sq : i32
        scf.yield %n2 : i32
      }"""]
    got = two_input_run(ops, x, x)
    t = np.arange(64)
    np.testing.assert_array_equal(got[0], x + 45)
    np.testing.assert_array_equal(got[1], [sum(j * j for j in range(v % 5)) for v in t])


def test_scf_if_uniform_and_divergent_and_while():
    x = seq(64, seed=6)
    ops = ["""      %c32 = arith.constant 32 : i32
      %lo = arith.cmpi ult, %t, %c32 : i32
      %res0 = scf.if %lo -> (i32) {
        %a = arith.addi %x, %x : i32
        scf.yield %a : i32
      } else {
        %b = arith.muli %x, %x : i32
        scf.yield %b : i32
      }""", """      %tr = arith.constant true
      %res1 = scf.if %tr -> (i32) {
        scf.yield %t : i32
      } else {
        scf.yield %x : i32
      }""", """      %one = arith.constant 1 : i32
      %zero = arith.constant 0 : i32
      %c3 = arith.constant 3 : i32
      %w:2 = scf.while (%v = %t, %n = %zero) : (i32, i32) -> (i32, i32) {
        %more = arith.cmpi ugt, %v, %one : i32
        scf.condition(%more) %v, %n : i32, i32
      } do {
      ^bb0(%v2: i32, %n2: i32):
        %odd = arith.andi %v2, %one : i32
        %isodd = arith.cmpi eq, %odd, %one : i32
        %nv = scf.if %isodd -> (i32) {
          %m = arith.muli %v2, %c3 : i32
          %p = arith.addi %m, %one : i32
          scf.yield %p : i32
        } else {
          %h = arith.shrui %v2, %one : i32
          scf.yield %h : i32
        }
        %nn = arith.addi %n2, %one : i32
        scf.yield %nv, %nn : i32, i32
      }
      %res2 = arith.addi %w#1, %zero : i32"""]
    got = two_input_run(ops, x, x)
    t = np.arange(64)
    np.testing.assert_array_equal(got[0], np.where(t < 32, 2 * x, (x.astype(np.uint64) ** 2) % 2**32))
    np.testing.assert_array_equal(got[1], t)

    def collatz(v):
        n = 0
        while v > 1:
            v = 3 * v + 1 if v & 1 else v // 2
            n += 1
        return n
    np.testing.assert_array_equal(got[2], [collatz(v) for v in t])


# ------------------------------------------------------------------ llvm values
def test_llvm_struct_undef_zero_and_ptr_casts():
    x = seq(64, seed=7)
    ops = ["""      %u = llvm.mlir.undef : !llvm.struct<(i32, f32)>
      %f = arith.constant 1.5 : f32
      %s1 = llvm.insertvalue %x, %u[0] : !llvm.struct<(i32, f32)>
      %s2 = llvm.insertvalue %f, %s1[1] : !llvm.struct<(i32, f32)>
      %a = llvm.extractvalue %s2[0] : !llvm.struct<(i32, f32)>
      %b = llvm.extractvalue %s2[1] : !llvm.struct<(i32, f32)>
      %bi = arith.fptosi %b : f32 to i32
      %res0 = arith.addi %a, %bi : i32""", """      %p = llvm.ptrtoint %in : !llvm.ptr<1> to i64
      %q = llvm.inttoptr %p : i64 to !llvm.ptr<1>
      %g = llvm.getelementptr %q[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      %res1 = llvm.load %g : !llvm.ptr<1> -> i32""", """      %un = llvm.mlir.undef : i32
      %res2 = arith.addi %un, %x : i32"""]
    got = two_input_run(ops, x, x)
    np.testing.assert_array_equal(got[0], x + 1)
    np.testing.assert_array_equal(got[1], x)
    np.testing.assert_array_equal(got[2], x + np.uint32(0xA5A5A5A5))  # the undef pattern shows
    text = multi_kernel(TWO_INPUTS.format(t="i32") + ops[2].replace("%res2", "%res0"), 1, 64)
    zero = run_lanes(text, np.concatenate([x, x]), np.uint32, check_compile=False, options=InterpOptions(undef_fill="zero"))
    np.testing.assert_array_equal(zero, x)


# ------------------------------------------------------------------ errors
def test_unsupported_op_names_op_and_line():
    text = lane_kernel("""      %f = arith.bitcast %x : i32 to f32
      %g = math.tanh %f : f32
      %res = arith.bitcast %g : f32 to i32""")
    with pytest.raises(InterpreterError, match=r"math.tanh at line 9:12: operation not supported"):
        run_lanes(text, seq(64), np.uint32, check_compile=False)


def test_inline_asm_markers_only():
    marker = lane_kernel("""      llvm.inline_asm has_side_effects "; linlayout-begin conv", "" : () -> ()
      rocdl.sched.barrier none
      %res = arith.addi %x, %x : i32""")
    np.testing.assert_array_equal(run_lanes(marker, seq(64), np.uint32), 2 * seq(64))
    real = marker.replace("; linlayout-begin conv", "s_nop 0")
    with pytest.raises(InterpreterError, match="inline assembly"):
        run_lanes(real, seq(64), np.uint32, check_compile=False)


def test_poison_and_undefined_behaviour_are_errors():
    shift = lane_kernel("""      %c40 = arith.constant 40 : i32
      %res = arith.shli %x, %c40 : i32""")
    with pytest.raises(InterpreterError, match="shift amount"):
        run_lanes(shift, seq(64), np.uint32, check_compile=False)
    div = lane_kernel("""      %c3 = arith.constant 3 : i32
      %m = arith.remui %t, %c3 : i32
      %res = arith.divui %x, %m : i32""")
    with pytest.raises(InterpreterError, match="division by zero"):
        run_lanes(div, seq(64), np.uint32, check_compile=False)
    # the same division guarded by a divergent scf.if is fine: inactive lanes do not fault
    guarded = lane_kernel("""      %c3 = arith.constant 3 : i32
      %c0 = arith.constant 0 : i32
      %m = arith.remui %t, %c3 : i32
      %nz = arith.cmpi ne, %m, %c0 : i32
      %res = scf.if %nz -> (i32) {
        %q = arith.divui %x, %m : i32
        scf.yield %q : i32
      } else {
        scf.yield %c0 : i32
      }""")
    x = seq(64)
    m = np.arange(64) % 3
    np.testing.assert_array_equal(run_lanes(guarded, x, np.uint32), np.where(m != 0, x // np.maximum(m, 1), 0))


def test_launch_and_module_errors():
    ok = lane_kernel("      %res = arith.addi %x, %x : i32")
    x = seq(64)
    with pytest.raises(InterpreterError, match="takes 2 arguments"):
        run_kernel(ok, "k", [x], block=64)
    with pytest.raises(InterpreterError, match="numpy array"):
        run_kernel(ok, "k", [x, 3], block=64)
    with pytest.raises(InterpreterError, match="no kernel 'nope'"):
        run_kernel(ok, "nope", [x, x], block=64)
    with pytest.raises(InterpreterError, match="1024"):
        run_kernel(ok, "k", [x, x], block=(64, 32))
    with pytest.raises(InterpreterError, match="models AMD targets"):
        run_kernel(ok, "k", [x, x], block=64, arch="sm_90")
    with pytest.raises(InterpreterError, match="does not parse"):
        run_kernel("module { junk }", None, [])
    with pytest.raises(InterpreterError, match="uninitialized_lds"):
        run_kernel(ok, "k", [x, x], block=64, options=InterpOptions(uninitialized_lds="maybe"))
    big = lane_kernel("      %res = arith.addi %x, %x : i32", workgroup="%lds : memref<20000xi32, #gpu.address_space<workgroup>>")
    with pytest.raises(InterpreterError, match="LDS"):
        load_kernel(big, "k", "gfx942")
    load_kernel(big, "k", "gfx950")  # 160 KiB of LDS there


def test_partial_wave_and_multi_dim_launch():
    text = """module {
  gpu.module @m {
    gpu.func @k(%out: memref<4x3x100xi32>) kernel attributes {known_block_size = array<i32: 100, 3, 1>, known_grid_size = array<i32: 2, 2, 1>} {
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %dx = gpu.block_dim x
      %gx = gpu.grid_dim x
      %l = gpu.lane_id
      %w = gpu.subgroup_id : index
      %c64 = arith.constant 64 : index
      %wl = arith.muli %w, %c64 : index
      %lin = arith.addi %wl, %l : index
      %r = arith.muli %ty, %dx : index
      %lin2 = arith.addi %r, %tx : index
      %same = arith.cmpi eq, %lin, %lin2 : index
      %bb = arith.muli %by, %gx : index
      %b = arith.addi %bb, %bx : index
      %v = arith.index_cast %lin : index to i32
      %c1000 = arith.constant 1000 : i32
      %bad = arith.addi %v, %c1000 : i32
      %val = arith.select %same, %v, %bad : i32
      memref.store %val, %out[%b, %ty, %tx] : memref<4x3x100xi32>
      gpu.return
    }
  }
}
"""
    compiles(text)
    got = run_kernel(text, "k", [np.full((4, 3, 100), -1, np.int32)], grid=(2, 2), block=(100, 3))[0]
    exp = np.broadcast_to(np.arange(300).reshape(3, 100), (4, 3, 100))
    np.testing.assert_array_equal(got, exp)
    with pytest.raises(InterpreterError, match="known_block_size"):  # gpu.block_dim would be a wrong constant
        run_kernel(text, "k", [np.zeros((4, 3, 100), np.int32)], grid=(2, 2), block=(50, 6))
    with pytest.raises(InterpreterError, match=re.escape("declares known_grid_size = (2, 2, 1), launched with (4, 1, 1)")):
        run_kernel(text, "k", [np.zeros((4, 3, 100), np.int32)], grid=4, block=(100, 3))  # gpu.grid_dim too


def test_global_id_and_subgroup_size():
    text = """module {
  gpu.module @m {
    gpu.func @k(%out: memref<256xi32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 2, 1, 1>} {
      %g = gpu.global_id x
      %s = gpu.subgroup_size : index
      %v = arith.addi %g, %s : index
      %i = arith.index_cast %v : index to i32
      memref.store %i, %out[%g] : memref<256xi32>
      gpu.return
    }
  }
}
"""
    compiles(text)
    got = run_kernel(text, "k", [np.zeros(256, np.int32)], grid=2, block=128)[0]
    np.testing.assert_array_equal(got, np.arange(256) + 64)


def test_supported_ops_lists_the_contract_ops():
    ops = set(supported_ops())
    for name in ["arith.addi", "vector.extract_strided_slice", "scf.for", "memref.load", "gpu.barrier", "rocdl.ds_bpermute",
                 "rocdl.ds_swizzle", "rocdl.update.dpp", "rocdl.permlane32.swap", "rocdl.readlane", "rocdl.mfma.f32.32x32x8f16",
                 "rocdl.make.buffer.rsrc", "rocdl.raw.ptr.buffer.load", "rocdl.ds.read.tr16.b64", "llvm.call_intrinsic"]:
        assert name in ops, name


def test_llvm_dialect_arithmetic_aliases():
    rng = np.random.default_rng(9)
    x = rng.integers(-1000, 1000, 64).astype(np.int32)
    y = rng.integers(1, 31, 64).astype(np.int32)
    iops = [
        "      %res0 = llvm.add %x, %y : i32", "      %res1 = llvm.sub %x, %y : i32", "      %res2 = llvm.mul %x, %y : i32",
        "      %res3 = llvm.and %x, %y : i32", "      %res4 = llvm.or %x, %y : i32", "      %res5 = llvm.xor %x, %y : i32",
        "      %res6 = llvm.shl %x, %y : i32", "      %res7 = llvm.lshr %x, %y : i32", "      %res8 = llvm.ashr %x, %y : i32",
        """      %c8 = llvm.icmp "slt" %x, %y : i32
      %res8b = llvm.select %c8, %x, %y : i1, i32
      %res9 = llvm.add %res8b, %res8b : i32""",
        """      %tr = llvm.trunc %x : i32 to i8
      %res10 = llvm.sext %tr : i8 to i32""",
        """      %tr2 = llvm.trunc %x : i32 to i8
      %res11 = llvm.zext %tr2 : i8 to i32""",
    ]
    got = two_input_run(iops, x.view(np.uint32), y.view(np.uint32)).view(np.int32)
    X, Y = x.astype(np.int64), y.astype(np.int64)
    exp = [X + Y, X - Y, X * Y, X & Y, X | Y, X ^ Y, (X << Y), (X % 2**32) >> Y, X >> Y, 2 * np.minimum(X, Y),
           ((X & 0xFF) ^ 0x80) - 0x80, X & 0xFF]
    for k, e in enumerate(exp):
        np.testing.assert_array_equal(got[k], (e % 2**32).astype(np.uint32).view(np.int32), err_msg=iops[k])

    a = rng.standard_normal(64).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    fops = [
        "      %res0 = llvm.fadd %x, %y : f32", "      %res1 = llvm.fsub %x, %y : f32", "      %res2 = llvm.fmul %x, %y : f32",
        "      %res3 = llvm.fdiv %x, %y : f32", "      %res4 = llvm.fneg %x : f32",
        "      %res5 = llvm.intr.fma(%x, %y, %x) : (f32, f32, f32) -> f32",
        "      %res6 = llvm.intr.maxnum(%x, %y) : (f32, f32) -> f32", "      %res7 = llvm.intr.minimum(%x, %y) : (f32, f32) -> f32",
        "      %res8 = llvm.intr.fabs(%x) : (f32) -> f32", "      %res9 = llvm.intr.sqrt(%y) : (f32) -> f32",
        """      %h = llvm.fptrunc %x : f32 to f16
      %res10 = llvm.fpext %h : f16 to f32""",
        """      %i = llvm.fptosi %x : f32 to i32
      %res11 = llvm.sitofp %i : i32 to f32""",
        """      %vx = vector.broadcast %x : f32 to vector<2xf32>
      %vy = vector.broadcast %y : f32 to vector<2xf32>
      %vf = vector.fma %vx, %vy, %vy : vector<2xf32>
      %res12 = vector.extract %vf[1] : f32 from vector<2xf32>""",
        """      %cf = llvm.fcmp "olt" %x, %y : f32
      %res13 = llvm.select %cf, %x, %y : i1, f32""",
    ]
    got = two_input_run(fops, a, b, t="f32", out_t="f32", out_dtype=np.float32)
    A, B = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(invalid="ignore"):
        exp = [a + b, a - b, a * b, a / b, -a, A * B + A, np.fmax(a, b), np.minimum(a, b), np.abs(a), np.sqrt(b),
               a.astype(np.float16), np.trunc(a), A * B + B, np.minimum(a, b)]
    for k, e in enumerate(exp):
        np.testing.assert_array_equal(got[k], np.asarray(e).astype(np.float32), err_msg=fops[k])


def test_scheduling_ops_are_no_ops_and_rocdl_ids():
    body = """      rocdl.sched.barrier none
      rocdl.sched.group.barrier mfma_wmma, 1, 0
      rocdl.iglp.opt 0
      rocdl.s.setprio 1
      rocdl.s.nop 0
      rocdl.s.sleep 1
      rocdl.wave.barrier
      rocdl.barrier
      %wx = rocdl.workitem.id.x : i32
      %gx = rocdl.workgroup.id.x : i32
      %gy = rocdl.workgroup.id.y : i32
      %ws = rocdl.wavefrontsize : i32
      %c1000 = arith.constant 1000 : i32
      %gy1000 = arith.muli %gy, %c1000 : i32
      %a = arith.addi %wx, %gx : i32
      %b = arith.addi %a, %ws : i32
      %res0 = arith.addi %b, %gy1000 : i32"""
    text = multi_kernel(body, 1, 64)
    compiles(text)
    # every workgroup writes out[t]; the last one (x=2, y=1) wins
    got = run_kernel(text, "k", [seq(64), np.zeros(64, np.uint32)], grid=(3, 2), block=64)[1]
    np.testing.assert_array_equal(got, np.arange(64) + 2 + 64 + 1000)


def test_unsigned_loops_null_pointer_and_memref_alignment():
    text = """module {
  gpu.module @m {
    gpu.func @k(%a: memref<8x8xf32>, %out: memref<64xi32>) kernel {
      %tid = gpu.thread_id x
      %a2 = memref.assume_alignment %a, 16 : memref<8x8xf32>
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %v = vector.load %a2[%c3, %c2] : memref<8x8xf32>, vector<4xf32>
      %s = vector.reduction <add>, %v : vector<4xf32> into f32
      %lb = arith.constant -2 : i32
      %ub = arith.constant 3 : i32
      %st = arith.constant 1 : i32
      %z = arith.constant 0 : i32
      %n1 = scf.for %i = %lb to %ub step %st iter_args(%c = %z) -> (i32) : i32 {
        %c1 = arith.addi %c, %st : i32
        scf.yield %c1 : i32
      }
      %n2 = scf.for unsigned %j = %lb to %ub step %st iter_args(%d = %z) -> (i32) : i32 {
        %d1 = arith.addi %d, %st : i32
        scf.yield %d1 : i32
      }
      %p = llvm.mlir.zero : !llvm.ptr<1>
      %pi = llvm.ptrtoint %p : !llvm.ptr<1> to i32
      %si = arith.fptosi %s : f32 to i32
      %ten = arith.constant 10 : i32
      %x2 = arith.muli %n2, %ten : i32
      %y = arith.addi %n1, %x2 : i32
      %y2 = arith.addi %y, %pi : i32
      %hund = arith.constant 100 : i32
      %y3 = arith.muli %si, %hund : i32
      %r = arith.addi %y2, %y3 : i32
      memref.store %r, %out[%tid] : memref<64xi32>
      gpu.return
    }
  }
}
"""
    compiles(text)
    a = np.arange(64, dtype=np.float32).reshape(8, 8)
    got = run_kernel(text, "k", [a, np.zeros(64, np.int32)], block=64)[1]
    # signed: -2..2 = 5 trips; unsigned: 0xFFFFFFFE >= 3, no trip; null pointer is 0
    assert (got == 5 + 0 + 100 * int(a[3, 2:6].sum())).all()
    two_d = text.replace("vector<4xf32>\n      %s = vector.reduction <add>, %v : vector<4xf32>",
                         "vector<2x4xf32>\n      %v1 = vector.extract %v[1] : vector<4xf32> from vector<2x4xf32>\n"
                         "      %s = vector.reduction <add>, %v1 : vector<4xf32>")
    with pytest.raises(InterpreterError, match="1-D"):
        run_kernel(two_d, "k", [a, np.zeros(64, np.int32)], block=64)
