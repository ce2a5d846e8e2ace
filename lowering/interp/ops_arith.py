"""``arith`` (and the few ``math``) ops: elementwise, lane by lane, exactly as LLVM defines them.

Integers are bit patterns reduced mod 2**N; signed ops read them as two's complement.
Float results are rounded once to the result type with round-to-nearest-even (``f16`` and
``bf16`` arithmetic is done in ``float32`` first, which is exact after the final rounding
because 24 >= 2*11+2).  Denormals are kept (IEEE mode).  Poison-producing cases that matter
(shift amount >= width, division by zero, signed division overflow) raise
``InterpreterError`` when an active lane hits them; float -> int conversions saturate like
``v_cvt_i32_f32`` (NaN -> 0) [I: LLVM calls out-of-range results poison].
"""

from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from .errors import InterpreterError
from .floats import FORMATS, decode_bits
from .registry import OpInfo, const_array, merge, register, signed
from .types import FloatT, IntT, VectorT, byte_size, elem_of, from_bytes, normalize, shape_of, to_bytes, storage_dtype

__all__ = ["dense_values", "CMPI", "CMPF"]

CMPI = {0: "eq", 1: "ne", 2: "slt", 3: "sle", 4: "sgt", 5: "sge", 6: "ult", 7: "ule", 8: "ugt", 9: "uge"}
CMPF = {0: "false", 1: "oeq", 2: "ogt", 3: "oge", 4: "olt", 5: "ole", 6: "one", 7: "ord", 8: "ueq", 9: "ugt",
        10: "uge", 11: "ult", 12: "ule", 13: "une", 14: "uno", 15: "true"}


# ------------------------------------------------------------------ constants
_TOKEN = re.compile(r"0x[0-9A-Fa-f]+|[-+]?(?:inf|nan)|[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|true|false")


def dense_values(attr: Any, elem: Any, shape: tuple) -> np.ndarray:
    """The values of a scalar or dense elements attribute as a numpy array of ``shape``
    (ints as int64/object, floats as float64 exactly)."""
    if hasattr(attr, "is_splat") and attr.is_splat:
        return np.broadcast_to(dense_values(attr.get_splat_value(), elem, ()), shape)
    if hasattr(attr, "value") and not hasattr(attr, "is_splat"):
        v = attr.value
        return np.broadcast_to(np.asarray(int(v) if isinstance(elem, IntT) else float(v)), shape)
    try:
        return np.asarray(np.array(attr)).reshape(shape)
    except (ValueError, TypeError, RuntimeError):
        pass
    text = str(attr)
    body = text[text.index("<") + 1 : text.rindex(">")] if text.startswith("dense<") else text
    body = body.split(" : ")[0]
    toks = _TOKEN.findall(body)
    vals = []
    for tok in toks:
        if tok.startswith("0x"):
            bits = int(tok, 16)
            if isinstance(elem, FloatT):
                vals.append(float(decode_bits(np.array([bits], np.uint64), FORMATS[elem.name])[0]))
            else:
                vals.append(bits)
        elif tok in ("true", "false"):
            vals.append(int(tok == "true"))
        else:
            vals.append(float(tok) if isinstance(elem, FloatT) else int(tok))
    n = int(np.prod(shape, dtype=np.int64))
    if len(vals) == 1 and n != 1:
        vals = vals * n
    if len(vals) != n:
        raise InterpreterError(f"cannot read constant {text}")
    return np.array(vals, dtype=np.float64 if isinstance(elem, FloatT) else object).reshape(shape)


@register("arith.constant", "llvm.mlir.constant")
def _constant(op: OpInfo):
    t = op.result_types[0]
    e = elem_of(t)
    if not isinstance(e, (IntT, FloatT)):
        raise op.error(f"unsupported constant type {t}")
    vals = dense_values(op.attr("value"), e, shape_of(t))
    if isinstance(e, IntT):
        flat = [int(v) for v in np.asarray(vals, dtype=object).ravel()]
        arr = np.array([v & ((1 << e.bits) - 1) for v in flat], dtype=storage_dtype(t)).reshape((1,) + shape_of(t))
    else:
        arr = const_array(vals, t)
    r = op.results[0]

    def step(ctx):
        ctx.vals[r] = arr

    return step


# ------------------------------------------------------------------ helpers
def _active_any(ctx, bad: np.ndarray) -> bool:
    """Whether ``bad`` (a bool array with a lane axis first) holds in some active lane."""
    per_lane = bad.reshape(bad.shape[0], -1).any(axis=1)
    if per_lane.shape[0] == 1:
        return bool(per_lane[0])
    return bool((per_lane & ctx.active()).any())


def _binary(op: OpInfo, fn: Callable) -> Callable:
    a, b = op.operands
    r = op.results[0]
    t = op.result_types[0]

    def step(ctx):
        v = ctx.vals
        v[r] = normalize(fn(ctx, v[a], v[b]), t)

    return step


def _bits(op: OpInfo, i: int = 0) -> int:
    e = elem_of(op.operand_types[i])
    if not isinstance(e, IntT):
        raise op.error(f"operand {i} is {op.operand_types[i]}, expected an integer type")
    return e.bits


def _float_type(op: OpInfo) -> FloatT:
    e = elem_of(op.result_types[0])
    if not isinstance(e, FloatT) or e.name not in ("f16", "bf16", "f32", "f64"):
        raise op.error(f"unsupported float type {op.result_types[0]} (f16, bf16, f32, f64)")
    return e


# ------------------------------------------------------------------ integer ops
_INT_SIMPLE = {
    "arith.addi": lambda x, y: x + y,
    "arith.subi": lambda x, y: x - y,
    "arith.muli": lambda x, y: x * y,
    "arith.andi": lambda x, y: x & y,
    "arith.ori": lambda x, y: x | y,
    "arith.xori": lambda x, y: x ^ y,
    "arith.maxui": np.maximum,
    "arith.minui": np.minimum,
}


@register(*_INT_SIMPLE, "llvm.add", "llvm.sub", "llvm.mul", "llvm.and", "llvm.or", "llvm.xor")
def _int_simple(op: OpInfo):
    _bits(op)
    name = {"llvm.add": "arith.addi", "llvm.sub": "arith.subi", "llvm.mul": "arith.muli", "llvm.and": "arith.andi",
            "llvm.or": "arith.ori", "llvm.xor": "arith.xori"}.get(op.name, op.name)
    fn = _INT_SIMPLE[name]
    return _binary(op, lambda ctx, x, y: fn(x, y))


@register("arith.maxsi", "arith.minsi")
def _int_signed_minmax(op: OpInfo):
    bits = _bits(op)
    fn = np.maximum if op.name == "arith.maxsi" else np.minimum
    return _binary(op, lambda ctx, x, y: fn(signed(x, bits), signed(y, bits)))


def _check_divisor(ctx, op: OpInfo, y: np.ndarray) -> np.ndarray:
    zero = y == 0
    if _active_any(ctx, zero):
        raise op.error("division by zero in an active lane (undefined behaviour)")
    return np.where(zero, 1, y).astype(y.dtype)


@register("arith.divui", "arith.remui", "arith.ceildivui")
def _udiv(op: OpInfo):
    _bits(op)

    def fn(ctx, x, y):
        y = _check_divisor(ctx, op, y)
        if op.name == "arith.divui":
            return x // y
        if op.name == "arith.remui":
            return x % y
        return x // y + (x % y != 0)

    return _binary(op, fn)


@register("arith.divsi", "arith.remsi", "arith.ceildivsi", "arith.floordivsi")
def _sdiv(op: OpInfo):
    bits = _bits(op)
    lo = -(1 << (bits - 1))

    def fn(ctx, x, y):
        y = _check_divisor(ctx, op, y)
        a, b = signed(x, bits), signed(y, bits)
        if _active_any(ctx, (a == lo) & (b == -1)):
            raise op.error("signed division overflow (INT_MIN / -1) in an active lane")
        b = np.where((a == lo) & (b == -1), 1, b)
        q = np.floor_divide(a, b)  # floor
        r = a - q * b
        if op.name == "arith.floordivsi":
            return q
        trunc = q + ((r != 0) & ((a < 0) != (b < 0)))  # toward zero
        if op.name == "arith.divsi":
            return trunc
        if op.name == "arith.remsi":
            return a - trunc * b
        return trunc + ((a - trunc * b != 0) & ((a < 0) == (b < 0)))  # ceildivsi

    return _binary(op, fn)


@register("arith.shli", "arith.shrui", "arith.shrsi", "llvm.shl", "llvm.lshr", "llvm.ashr")
def _shift(op: OpInfo):
    bits = _bits(op)
    kind = {"arith.shli": "l", "llvm.shl": "l", "arith.shrui": "u", "llvm.lshr": "u"}.get(op.name, "s")

    def fn(ctx, x, y):
        if _active_any(ctx, y >= bits):
            raise op.error(f"shift amount >= {bits} in an active lane (poison)")
        amt = np.where(y >= bits, 0, y).astype(np.uint64)
        if kind == "l":
            return x.astype(np.uint64) << amt
        if kind == "u":
            return x.astype(np.uint64) >> amt
        return signed(x, bits) >> amt.astype(np.int64)

    return _binary(op, fn)


def _icmp(pred: str, x: np.ndarray, y: np.ndarray, bits: int) -> np.ndarray:
    if pred[0] == "s":
        x, y = signed(x, bits), signed(y, bits)
    fn = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
          "ge": np.greater_equal}[pred if pred in ("eq", "ne") else pred[1:]]
    return fn(x, y).astype(np.uint8)


@register("arith.cmpi", "llvm.icmp")
def _cmpi(op: OpInfo):
    bits = _bits(op)
    code = op.int_attr("predicate")
    if code not in CMPI:
        raise op.error(f"unknown integer predicate {code}")
    pred = CMPI[code]
    return _binary(op, lambda ctx, x, y: _icmp(pred, x, y, bits))


@register("arith.select", "llvm.select")
def _select(op: OpInfo):
    c, a, b = op.operands
    r = op.results[0]
    vdims = len(shape_of(op.result_types[0]))
    cond_scalar = not isinstance(op.operand_types[0], VectorT)

    def step(ctx):
        v = ctx.vals
        cond = v[c].astype(bool)
        if cond_scalar and vdims:
            cond = cond.reshape(cond.shape + (1,) * vdims)
        x, y = v[a], v[b]
        if isinstance(x, np.ndarray):
            v[r] = np.where(cond, x, y)
        else:
            v[r] = merge(np.broadcast_to(cond, (max(cond.shape[0], 1),)), x, y, "select operand")

    return step


@register("arith.index_cast", "arith.index_castui", "arith.extui", "arith.extsi", "arith.trunci",
          "llvm.zext", "llvm.sext", "llvm.trunc")
def _int_cast(op: OpInfo):
    src_bits = _bits(op)
    t = op.result_types[0]
    if not isinstance(elem_of(t), IntT):
        raise op.error(f"result type {t} is not an integer type")
    dst_bits = elem_of(t).bits
    sign_extend = op.name in ("arith.extsi", "llvm.sext") or (op.name == "arith.index_cast" and dst_bits > src_bits)
    a, r = op.operands[0], op.results[0]

    if sign_extend:
        def step(ctx):
            ctx.vals[r] = normalize(signed(ctx.vals[a], src_bits).astype(np.uint64), t)
    else:
        def step(ctx):
            ctx.vals[r] = normalize(ctx.vals[a].astype(np.uint64) & np.uint64((1 << min(src_bits, 64)) - 1), t)

    return step


@register("arith.bitcast", "llvm.bitcast", "vector.bitcast")
def _bitcast(op: OpInfo):
    src, dst = op.operand_types[0], op.result_types[0]
    try:
        if byte_size(src) != byte_size(dst):
            raise op.error(f"bitcast between {src} and {dst} of different sizes")
    except ValueError as exc:
        raise op.error(str(exc)) from None
    a, r = op.operands[0], op.results[0]

    def step(ctx):
        ctx.vals[r] = from_bytes(to_bytes(ctx.vals[a], src), dst)

    return step


# ------------------------------------------------------------------ float ops
_FLOAT_BIN = {
    "arith.addf": np.add, "arith.subf": np.subtract, "arith.mulf": np.multiply, "arith.divf": np.divide,
    "llvm.fadd": np.add, "llvm.fsub": np.subtract, "llvm.fmul": np.multiply,
    "llvm.fdiv": np.divide,
}


@register(*_FLOAT_BIN)
def _float_bin(op: OpInfo):
    _float_type(op)
    fn = _FLOAT_BIN[op.name]

    def f(ctx, x, y):
        with np.errstate(all="ignore"):
            return fn(x, y)

    return _binary(op, f)


def _max_min(x: np.ndarray, y: np.ndarray, is_max: bool, nan_propagates: bool) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        r = np.where((x > y) if is_max else (x < y), x, y)
        # equal values: only +0/-0 differ; maximum prefers +0, minimum prefers -0
        both_zero = (x == 0) & (y == 0)
        zsel = np.where(np.signbit(x) == (not is_max), x, y)
        r = np.where(both_zero, zsel, r)
        xn, yn = np.isnan(x), np.isnan(y)
        if nan_propagates:
            r = np.where(xn, x, np.where(yn, y, r))
        else:
            r = np.where(xn, y, np.where(yn, x, r))
    return r


@register("arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf", "llvm.intr.maxnum",
          "llvm.intr.minnum", "llvm.intr.maximum", "llvm.intr.minimum")
def _float_minmax(op: OpInfo):
    _float_type(op)
    is_max = "max" in op.name
    prop = op.name.endswith(("maximumf", "minimumf", "maximum", "minimum"))
    return _binary(op, lambda ctx, x, y: _max_min(x, y, is_max, prop))


@register("arith.cmpf", "llvm.fcmp")
def _cmpf(op: OpInfo):
    code = op.int_attr("predicate")
    if code not in CMPF:
        raise op.error(f"unknown float predicate {code}")
    pred = CMPF[code]

    def fn(ctx, x, y):
        with np.errstate(invalid="ignore"):
            unordered = np.isnan(x) | np.isnan(y)
            if pred in ("false", "true"):
                res = np.full(np.broadcast_shapes(x.shape, y.shape), pred == "true")
            elif pred in ("ord", "uno"):
                res = ~unordered if pred == "ord" else unordered
            else:
                base = {"eq": np.equal, "gt": np.greater, "ge": np.greater_equal, "lt": np.less, "le": np.less_equal,
                        "ne": np.not_equal}[pred[1:]](x, y)
                res = (base & ~unordered) if pred[0] == "o" else (base | unordered)
        return res.astype(np.uint8)

    return _binary(op, fn)


@register("arith.negf", "llvm.fneg", "math.absf", "llvm.intr.fabs", "math.sqrt", "llvm.intr.sqrt", "math.exp",
          "llvm.intr.exp", "math.log", "llvm.intr.log", "rocdl.exp2")
def _float_unary(op: OpInfo):
    _float_type(op)
    fn = {"arith.negf": np.negative, "llvm.fneg": np.negative, "math.absf": np.abs, "llvm.intr.fabs": np.abs,
          "math.sqrt": np.sqrt, "llvm.intr.sqrt": np.sqrt, "math.exp": np.exp, "llvm.intr.exp": np.exp,
          "math.log": np.log, "llvm.intr.log": np.log, "rocdl.exp2": np.exp2}[op.name]
    exact = op.name in ("arith.negf", "llvm.fneg", "math.absf", "llvm.intr.fabs")
    a, r = op.operands[0], op.results[0]
    t = op.result_types[0]

    def step(ctx):
        x = ctx.vals[a]
        with np.errstate(all="ignore"):
            ctx.vals[r] = normalize(fn(x) if exact else fn(x.astype(np.float64)), t)

    return step


@register("math.fma", "llvm.intr.fma", "llvm.intr.fmuladd", "vector.fma")
def _fma(op: OpInfo):
    _float_type(op)
    a, b, c = op.operands
    r = op.results[0]
    t = op.result_types[0]

    def step(ctx):
        v = ctx.vals
        with np.errstate(all="ignore"):
            v[r] = normalize(v[a].astype(np.float64) * v[b].astype(np.float64) + v[c].astype(np.float64), t)

    return step


@register("arith.extf", "arith.truncf", "llvm.fpext", "llvm.fptrunc")
def _float_cast(op: OpInfo):
    _float_type(op)
    if op.has_attr("roundingmode"):
        mode = str(op.attr("roundingmode"))
        if "to_nearest_even" not in mode and not mode.startswith("0"):
            raise op.error(f"rounding mode {mode} is not supported (round-to-nearest-even only)")
    a, r = op.operands[0], op.results[0]
    t = op.result_types[0]

    def step(ctx):
        with np.errstate(all="ignore"):
            ctx.vals[r] = normalize(ctx.vals[a], t)

    return step


@register("arith.fptosi", "arith.fptoui", "llvm.fptosi", "llvm.fptoui")
def _fp_to_int(op: OpInfo):
    t = op.result_types[0]
    bits = elem_of(t).bits
    is_signed = "fptosi" in op.name
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if is_signed else (0, 2**bits - 1)
    a, r = op.operands[0], op.results[0]

    def step(ctx):
        x = ctx.vals[a].astype(np.float64)
        with np.errstate(invalid="ignore"):
            y = np.clip(np.trunc(np.where(np.isnan(x), 0.0, x)), lo, hi)  # saturate, NaN -> 0
        high = y >= 2.0**63  # only for unsigned 64-bit; int64 cannot hold these
        low = np.where(high, y - 2.0**63, y).astype(np.int64).astype(np.uint64)
        top = np.uint64(hi) if is_signed else low + np.uint64(1 << 63)
        ctx.vals[r] = normalize(np.where(high, top, low), t)

    return step


@register("arith.sitofp", "arith.uitofp", "llvm.sitofp", "llvm.uitofp")
def _int_to_fp(op: OpInfo):
    bits = _bits(op)
    t = op.result_types[0]
    is_signed = "sitofp" in op.name
    a, r = op.operands[0], op.results[0]
    dt = np.float32 if elem_of(t).name == "f32" else np.float64  # f32: one rounding from the integer

    def step(ctx):
        x = ctx.vals[a]
        src = signed(x, bits) if is_signed else x.astype(np.uint64)
        ctx.vals[r] = normalize(src.astype(dt), t)

    return step
