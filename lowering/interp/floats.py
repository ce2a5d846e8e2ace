"""Floating-point formats narrower than numpy's: rounding, bit encodings and decodings.

A value of a narrow format is carried as a float array whose entries are exactly
representable in the format (bf16 in ``float32``, the 8/6/4-bit formats in ``float32``);
``f16``, ``f32`` and ``f64`` use numpy's own dtypes.  Every function here is exact: rounding
is IEEE round-to-nearest-even from ``float64`` (which holds every value of every narrower
format exactly), so rounding an ``f32`` or ``f64`` result happens once.

Formats (``FloatFormat``): ``exp_bits``/``man_bits``/``bias`` as usual, and ``style``:

* ``"ieee"``: all-ones exponent encodes inf (mantissa 0) and NaN (f16, bf16, f32, E5M2);
* ``"fn"``: no infinities, only S.1111.111 is NaN (OCP ``f8E4M3FN``); overflow -> NaN;
* ``"fnuz"``: no infinities, no negative zero, 0x80 is the only NaN (``f8E4M3FNUZ``,
  ``f8E5M2FNUZ``, the fp8/bf8 of gfx942 MFMA); overflow -> NaN;
* ``"finite"``: neither infinities nor NaN (OCP MX ``f6E2M3FN``, ``f6E3M2FN``,
  ``f4E2M1FN``); overflow saturates to the largest finite value;
* ``"e8m0"``: unsigned power of two 2^(bits-127), 0xFF = NaN (``f8E8M0FNU``, MX scales).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linlayout import caches

__all__ = [
    "FloatFormat",
    "FORMATS",
    "round_to_format",
    "decode_bits",
    "encode_bits",
    "f32_to_bf16_bits",
    "bf16_bits_to_f32",
]


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format of ``1 + exp_bits + man_bits`` bits (``e8m0``: 8 bits)."""

    name: str
    exp_bits: int
    man_bits: int
    bias: int
    style: str

    @property
    def bits(self) -> int:
        return (0 if self.style == "e8m0" else 1) + self.exp_bits + self.man_bits

    @property
    def min_exp(self) -> int:
        """Exponent of the smallest normal number."""
        return 1 - self.bias

    @property
    def max_finite(self) -> float:
        top = (1 << self.exp_bits) - 1  # the all-ones exponent field
        if self.style == "ieee":
            return float(np.ldexp(2.0 - 2.0 ** -self.man_bits, top - 1 - self.bias))
        if self.style == "fn":  # all-ones exponent usable except mantissa all-ones (NaN)
            return float(np.ldexp(2.0 - 2.0 ** (1 - self.man_bits), top - self.bias))
        return float(np.ldexp(2.0 - 2.0 ** -self.man_bits, top - self.bias))  # fnuz, finite


FORMATS = {
    f.name: f
    for f in (
        FloatFormat("f16", 5, 10, 15, "ieee"),
        FloatFormat("bf16", 8, 7, 127, "ieee"),
        FloatFormat("f32", 8, 23, 127, "ieee"),
        FloatFormat("f8E5M2", 5, 2, 15, "ieee"),
        FloatFormat("f8E4M3FN", 4, 3, 7, "fn"),
        FloatFormat("f8E4M3FNUZ", 4, 3, 8, "fnuz"),
        FloatFormat("f8E5M2FNUZ", 5, 2, 16, "fnuz"),
        FloatFormat("f6E2M3FN", 2, 3, 1, "finite"),
        FloatFormat("f6E3M2FN", 3, 2, 3, "finite"),
        FloatFormat("f4E2M1FN", 2, 1, 1, "finite"),
        FloatFormat("f8E8M0FNU", 8, 0, 127, "e8m0"),
    )
}


def round_to_format(x: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """Round ``x`` (any float array) to ``fmt`` with round-to-nearest-even; ``float64`` result.

    Overflow gives inf (``ieee``), NaN (``fn``/``fnuz``) or the largest finite value
    (``finite``).  ``fnuz`` has no negative zero: -0 becomes +0.
    """
    x = np.asarray(x, dtype=np.float64)
    if fmt.style == "e8m0":
        raise ValueError("rounding to e8m0 is not defined here (it is a scale format)")
    a = np.abs(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        _, e2 = np.frexp(a)  # a = m * 2**e2, m in [0.5, 1)
        e = np.maximum(e2.astype(np.int64) - 1, fmt.min_exp)
        q = e - fmt.man_bits
        r = np.ldexp(np.round(np.ldexp(a, -q)), q)
        big = r > fmt.max_finite
        if fmt.style == "ieee":
            r = np.where(big, np.inf, r)
        elif fmt.style == "finite":
            r = np.where(big | np.isinf(a), fmt.max_finite, r)
        else:
            r = np.where(big | np.isinf(a), np.nan, r)
        r = np.where(np.isnan(a), np.nan, r)
        r = np.copysign(r, x)
        if fmt.style == "fnuz":
            r = np.where(r == 0, 0.0, r)
        if fmt.style == "finite":
            r = np.where(np.isnan(x), fmt.max_finite, r)  # no NaN encoding: [I] saturate
    return r


@caches.memoize("lowering.interp.float_decode_tables", table=True)
def _decode_table(name: str) -> np.ndarray:
    """Every bit pattern of a format of at most 8 bits, decoded to ``float64``."""
    fmt = FORMATS[name]
    n = 1 << fmt.bits
    codes = np.arange(n, dtype=np.int64)
    if fmt.style == "e8m0":
        out = np.ldexp(1.0, codes - fmt.bias).astype(np.float64)
        out[codes == 0xFF] = np.nan
        return out
    sign = (codes >> (fmt.bits - 1)) & 1
    ef = (codes >> fmt.man_bits) & ((1 << fmt.exp_bits) - 1)
    mf = codes & ((1 << fmt.man_bits) - 1)
    mag = np.where(
        ef == 0,
        np.ldexp(mf.astype(np.float64), fmt.min_exp - fmt.man_bits),
        np.ldexp((mf + (1 << fmt.man_bits)).astype(np.float64), ef - fmt.bias - fmt.man_bits),
    )
    out = np.where(sign == 1, -mag, mag)
    top = (1 << fmt.exp_bits) - 1
    if fmt.style == "ieee":
        out = np.where((ef == top) & (mf == 0), np.where(sign == 1, -np.inf, np.inf), out)
        out = np.where((ef == top) & (mf != 0), np.nan, out)
    elif fmt.style == "fn":
        out = np.where((ef == top) & (mf == (1 << fmt.man_bits) - 1), np.nan, out)
    elif fmt.style == "fnuz":
        out = np.where(codes == (1 << (fmt.bits - 1)), np.nan, out)
    return out


def decode_bits(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """The ``float64`` values of the bit patterns ``bits`` (unsigned ints) in ``fmt``."""
    bits = np.asarray(bits)
    if fmt.name == "f16":
        return bits.astype(np.uint16).view(np.float16).astype(np.float64)
    if fmt.name == "bf16":
        return bf16_bits_to_f32(bits).astype(np.float64)
    if fmt.name == "f32":
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
    return _decode_table(fmt.name)[bits.astype(np.int64)]


def encode_bits(values: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """Bit patterns (``uint8``/``uint16``/``uint32``) of ``values``, rounded to ``fmt`` first."""
    v = np.asarray(values)
    if fmt.name == "f16":
        return v.astype(np.float16).view(np.uint16)
    if fmt.name == "bf16":
        return f32_to_bf16_bits(round_to_format(v, fmt).astype(np.float32))
    if fmt.name == "f32":
        return v.astype(np.float32).view(np.uint32)
    table = _decode_table(fmt.name)
    if fmt.style == "e8m0":
        with np.errstate(divide="ignore", invalid="ignore"):
            e = np.clip(np.round(np.log2(np.asarray(v, dtype=np.float64))), -127, 127)
        out = np.where(np.isnan(e), 0xFF, e + 127)
        return out.astype(np.uint8)
    r = round_to_format(v, fmt)
    # Look the rounded value up among the non-negative codes, then add the sign bit.
    half = 1 << (fmt.bits - 1)
    pos = table[:half]
    order = np.argsort(pos, kind="stable")
    a = np.abs(r)
    idx = np.searchsorted(pos[order], np.where(np.isnan(a), 0.0, a))
    code = order[np.minimum(idx, half - 1)].astype(np.int64)
    code = np.where(np.signbit(r), code | half, code)  # fnuz: rounding already turned -0 into +0
    if fmt.style in ("fn", "fnuz", "ieee"):
        nan_code = {"fn": (1 << (fmt.bits - 1)) - 1, "fnuz": half, "ieee": (((1 << fmt.exp_bits) - 1) << fmt.man_bits) | (1 << (fmt.man_bits - 1))}[fmt.style]
        code = np.where(np.isnan(r), nan_code, code)
    if fmt.style == "ieee":
        inf_code = ((1 << fmt.exp_bits) - 1) << fmt.man_bits
        code = np.where(np.isinf(r), inf_code | np.where(r < 0, half, 0), code)
    return code.astype(np.uint8)


def f32_to_bf16_bits(x: np.ndarray) -> np.ndarray:
    """bf16 bit patterns of ``float32`` values, round-to-nearest-even (NaN stays a quiet NaN)."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    r = np.where(nan, (u >> 16) | 0x40, r)
    return r.astype(np.uint16)


def bf16_bits_to_f32(bits: np.ndarray) -> np.ndarray:
    """The ``float32`` values of bf16 bit patterns (exact)."""
    return (np.asarray(bits).astype(np.uint32) << np.uint32(16)).view(np.float32)
