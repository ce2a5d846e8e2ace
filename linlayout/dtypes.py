"""Element type names: one vocabulary for every command and kernel that takes ``--dtype``.

Canonical names are those of the MFMA catalog (``linlayout.hw.mfma.TYPE_BITS``:
f64, f32, xf32, i32, f16, bf16, i8, fp8, bf8, fp6, bf6, fp4, iu4, ...) plus i16 and
i64; the common spellings of numpy, torch and Triton (``fp16``, ``float16``, ``half``,
``fp32``, ``e4m3``, ``int8``, ...) map onto them, case-insensitively.
"""

from __future__ import annotations

from .errors import LayoutError
from .hw.mfma import TYPE_BITS

__all__ = ["dtype_bits", "dtype_name", "DTYPE_NAMES"]

_ALIASES = {
    "fp64": "f64", "double": "f64", "float64": "f64",
    "fp32": "f32", "float": "f32", "float32": "f32", "tf32": "xf32",
    "fp16": "f16", "half": "f16", "float16": "f16", "bfloat16": "bf16",
    "int32": "i32", "u32": "i32", "uint32": "i32",
    "int16": "i16", "u16": "i16", "uint16": "i16",
    "int64": "i64", "u64": "i64", "uint64": "i64",
    "int8": "i8", "u8": "i8", "uint8": "i8",
    "e4m3": "fp8", "fp8e4m3": "fp8", "f8": "fp8", "e5m2": "bf8", "fp8e5m2": "bf8",
    "e2m1": "fp4", "i4": "iu4", "int4": "iu4",
}
_BITS = {**TYPE_BITS, "i16": 16, "i64": 64}
#: Every accepted spelling, canonical names first.
DTYPE_NAMES = tuple(sorted(_BITS)) + tuple(sorted(_ALIASES))


def dtype_name(name: str) -> str:
    """The canonical name of the dtype spelled ``name`` (``"fp16"`` -> ``"f16"``), or ``LayoutError``."""
    if not isinstance(name, str):
        raise LayoutError(f"dtype must be a name such as 'fp16', got {name!r}")
    key = _ALIASES.get(name.lower(), name.lower())
    if key not in _BITS:
        raise LayoutError(f"unknown dtype {name!r}; known: {', '.join(sorted(DTYPE_NAMES))}")
    return key


def dtype_bits(name: str) -> int:
    """Bits per element of the dtype spelled ``name`` (case-insensitive), or ``LayoutError``."""
    return _BITS[dtype_name(name)]
