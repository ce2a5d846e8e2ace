"""Element type names -> bits per element, shared by every command that takes ``--dtype``.

Canonical names are those of the MFMA catalog (``linlayout.hw.mfma.TYPE_BITS``:
f64, f32, xf32, i32, f16, bf16, i8, fp8, bf8, fp6, bf6, fp4, iu4, ...); the common
spellings of numpy, torch and Triton map onto them.
"""

from __future__ import annotations

from .errors import LayoutError
from .hw.mfma import TYPE_BITS

__all__ = ["dtype_bits"]

_ALIASES = {
    "fp64": "f64", "double": "f64", "float64": "f64",
    "fp32": "f32", "float": "f32", "float32": "f32", "tf32": "xf32",
    "fp16": "f16", "half": "f16", "float16": "f16", "bfloat16": "bf16",
    "int32": "i32", "u32": "i32", "uint32": "i32",
    "int8": "i8", "u8": "i8", "uint8": "i8",
    "e4m3": "fp8", "fp8e4m3": "fp8", "f8": "fp8", "e5m2": "bf8", "fp8e5m2": "bf8",
    "e2m1": "fp4", "i4": "iu4", "int4": "iu4",
}
_OTHER_BITS = {"i16": 16, "int16": 16, "u16": 16, "uint16": 16, "i64": 64, "int64": 64, "u64": 64, "uint64": 64}


def dtype_bits(name: str) -> int:
    """Bits per element of the dtype called ``name`` (case-insensitive), or ``LayoutError``."""
    if not isinstance(name, str):
        raise LayoutError(f"dtype must be a name such as 'fp16', got {name!r}")
    key = _ALIASES.get(name.lower(), name.lower())
    if key in TYPE_BITS:
        return TYPE_BITS[key]
    if key in _OTHER_BITS:
        return _OTHER_BITS[key]
    known = sorted(set(TYPE_BITS) | set(_ALIASES) | set(_OTHER_BITS))
    raise LayoutError(f"unknown dtype {name!r}; known: {', '.join(known)}")
