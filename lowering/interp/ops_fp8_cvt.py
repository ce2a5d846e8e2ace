"""fp8 <-> f32 conversions: ``rocdl.cvt.pk.fp8.f32``, ``rocdl.cvt.f32.fp8``, ``rocdl.cvt.pk.f32.fp8``.

The fp8 format is the arch's (``InterpOptions.fp8_style``): gfx942 ``f8E4M3FNUZ``
(bias 8, no negative zero, 0x80 = NaN), gfx950 the OCP ``f8E4M3FN`` -- the same choice the
plain fp8 MFMAs make (linlayout.lowering.interp.ops_mfma).

* ``%r = rocdl.cvt.pk.fp8.f32 %a, %b -> %old[wordSel] : i32`` (``v_cvt_pk_fp8_f32``): both
  f32 rounded to fp8 (round to nearest even), ``fp8(a) | fp8(b) << 8`` replaces the low 16
  bits of ``old`` (``wordSel`` false) or the high 16 bits (true); the other half is kept.
* ``%f = rocdl.cvt.f32.fp8 %src[byteSel] : f32`` (``v_cvt_f32_fp8``): byte ``byteSel`` of
  ``src`` decoded exactly.
* ``%v = rocdl.cvt.pk.f32.fp8 %src[wordSel] : vector<2xf32>`` (``v_cvt_pk_f32_fp8``): bytes
  ``2*wordSel`` and ``2*wordSel + 1``.

[I] A value beyond the largest finite fp8 becomes the format's NaN (what
:func:`~linlayout.lowering.interp.floats.encode_bits` does for the ``fn``/``fnuz`` styles); the ISA's
clamp bit (saturation) is not modelled, and the ROCDL op does not set it
(:data:`OVERFLOW_RULE`).
"""

from __future__ import annotations

import numpy as np

from .floats import FORMATS, decode_bits, encode_bits
from .registry import OpInfo, register

__all__ = ["OVERFLOW_RULE", "FP8_FORMATS"]

#: [I] What a conversion to fp8 does with a value above the largest finite one: "nan".
OVERFLOW_RULE = "nan"
#: The E4M3 format of each fp8 style.
FP8_FORMATS = {"fnuz": "f8E4M3FNUZ", "ocp": "f8E4M3FN"}


def _fmt(ctx):
    return FORMATS[FP8_FORMATS[ctx.opts.fp8_style(ctx.arch)]]


@register("rocdl.cvt.pk.fp8.f32")
def _cvt_pk_fp8(op: OpInfo):
    a, b, old = op.operands
    high = op.bool_attr("wordSel")
    r = op.results[0]
    shift = np.uint32(16 if high else 0)
    keep = np.uint32(0x0000FFFF if high else 0xFFFF0000)

    def step(ctx):
        fmt = _fmt(ctx)
        x = encode_bits(ctx.vals[a].astype(np.float64), fmt).astype(np.uint32)
        y = encode_bits(ctx.vals[b].astype(np.float64), fmt).astype(np.uint32)
        word = (x | (y << np.uint32(8))) << shift
        ctx.vals[r] = ((ctx.vals[old].astype(np.uint32) & keep) | word).astype(np.uint32)

    return step


@register("rocdl.cvt.f32.fp8")
def _cvt_f32_fp8(op: OpInfo):
    (src,) = op.operands
    sel = op.int_attr("byteSel")
    if not 0 <= sel <= 3:
        raise op.error(f"byteSel {sel} is not in 0..3")
    r = op.results[0]

    def step(ctx):
        byte = (ctx.vals[src].astype(np.uint32) >> np.uint32(8 * sel)) & np.uint32(0xFF)
        ctx.vals[r] = decode_bits(byte, _fmt(ctx)).astype(np.float32)

    return step


@register("rocdl.cvt.pk.f32.fp8")
def _cvt_pk_f32_fp8(op: OpInfo):
    (src,) = op.operands
    high = op.bool_attr("wordSel")
    r = op.results[0]

    def step(ctx):
        u = ctx.vals[src].astype(np.uint32) >> np.uint32(16 if high else 0)
        bytes_ = np.stack([u & np.uint32(0xFF), (u >> np.uint32(8)) & np.uint32(0xFF)], axis=-1)
        ctx.vals[r] = decode_bits(bytes_, _fmt(ctx)).astype(np.float32)

    return step
