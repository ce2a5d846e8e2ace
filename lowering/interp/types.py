"""The interpreter's model of MLIR types, and how values of each type are stored.

Storage of an SSA value (see ``docs/interpreter.md``):

* integer ``iN`` and ``index`` (64-bit): the bit pattern in the smallest unsigned numpy dtype
  holding N bits (``i1`` -> ``uint8`` 0/1), always reduced modulo 2**N;
* ``f16``/``f32``/``f64``: numpy ``float16``/``float32``/``float64``; ``bf16`` and the
  8/6/4-bit float types: ``float32`` holding exactly representable values;
* vectors: the element storage with the vector shape as trailing axes;
* every per-thread value has a leading lane axis of size T (the workgroup's threads) or 1
  (the same value in every thread); numpy broadcasting does the rest;
* ``!llvm.ptr<N>``: an address (``uint64``), ``!llvm.struct``: a tuple of field values,
  memrefs: a :class:`~linlayout.lowering.interp.memory.MemRefValue`.

``to_bytes``/``from_bytes`` convert between a value and its in-register / in-memory bytes
(little-endian, vector element 0 first; vectors of sub-byte elements are bit-packed, element
0 in the least significant bits), which is what ``bitcast`` and every load and store use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional, Union

import numpy as np

from .floats import FORMATS, FloatFormat, bf16_bits_to_f32, decode_bits, encode_bits, f32_to_bf16_bits, round_to_format

__all__ = [
    "IntT", "FloatT", "VectorT", "PtrT", "StructT", "ArrayT", "MemRefT", "OpaqueT", "Type",
    "parse_type", "parse_type_text", "storage_dtype", "elem_of", "shape_of", "byte_size",
    "to_bytes", "from_bytes", "normalize", "INDEX_BITS",
]

#: Bits of ``index``: convert-gpu-to-rocdl runs with ``index-bitwidth=0`` = the data layout's
#: pointer width, 64 (lowering/compile.py).
INDEX_BITS = 64


@dataclass(frozen=True)
class IntT:
    bits: int
    is_index: bool = False

    def __str__(self) -> str:
        return "index" if self.is_index else f"i{self.bits}"


@dataclass(frozen=True)
class FloatT:
    name: str  # "f16", "bf16", "f32", "f64", "f8E4M3FNUZ", ...

    @property
    def bits(self) -> int:
        return 64 if self.name == "f64" else FORMATS[self.name].bits

    @property
    def fmt(self) -> Optional[FloatFormat]:
        return FORMATS.get(self.name)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class VectorT:
    shape: tuple
    elem: Union[IntT, FloatT]

    def __str__(self) -> str:
        dims = "".join(f"{d}x" for d in self.shape)
        return f"vector<{dims}{self.elem}>"


@dataclass(frozen=True)
class PtrT:
    space: int

    def __str__(self) -> str:
        return f"!llvm.ptr<{self.space}>"


@dataclass(frozen=True)
class StructT:
    fields: tuple
    packed: bool = False  # ``!llvm.struct<packed (...)>``: no padding between fields

    def __str__(self) -> str:
        return f"!llvm.struct<{'packed ' if self.packed else ''}(" + ", ".join(map(str, self.fields)) + ")>"


@dataclass(frozen=True)
class ArrayT:
    count: int
    elem: Any

    def __str__(self) -> str:
        return f"!llvm.array<{self.count} x {self.elem}>"


@dataclass(frozen=True)
class MemRefT:
    """A ranked memref with static shape, element type, memory space, strides and offset
    (in elements; ``None`` where dynamic).  ``space`` is ``"global"``, ``"workgroup"`` or
    ``"private"``."""

    shape: tuple
    elem: Any
    space: str
    strides: tuple
    offset: Optional[int]

    def __str__(self) -> str:
        return f"memref<{'x'.join(map(str, self.shape))}x{self.elem}, {self.space}>"


@dataclass(frozen=True)
class OpaqueT:
    text: str

    def __str__(self) -> str:
        return self.text


Type = Union[IntT, FloatT, VectorT, PtrT, StructT, ArrayT, MemRefT, OpaqueT]

_FLOAT_NAMES = {"f16", "bf16", "f32", "f64"} | set(FORMATS)
_SPACE_NAMES = {
    "": "global", "0": "global", "1": "global", "3": "workgroup", "5": "private",
    "#gpu.address_space<global>": "global", "#gpu.address_space<workgroup>": "workgroup",
    "#gpu.address_space<private>": "private",
}


class TypeParseError(ValueError):
    pass


def _split_top(text: str) -> list:
    """Split ``text`` at top-level commas (outside <>, (), [])."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def parse_type_text(text: str) -> Type:
    """Parse the assembly of a (non-memref) type."""
    t = text.strip()
    if t == "index":
        return IntT(INDEX_BITS, True)
    if re.fullmatch(r"i\d+", t):
        return IntT(int(t[1:]))
    if t in _FLOAT_NAMES:
        return FloatT(t)
    m = re.fullmatch(r"vector<(.*)>", t)
    if m:
        body = m.group(1)
        if "[" in body:
            raise TypeParseError(f"scalable vector {t}")
        dims = []
        while True:
            dm = re.match(r"(\d+)x", body)
            if not dm:
                break
            dims.append(int(dm.group(1)))
            body = body[dm.end():]
        elem = parse_type_text(body)
        if not isinstance(elem, (IntT, FloatT)):
            raise TypeParseError(f"vector of {elem}")
        return VectorT(tuple(dims), elem)
    m = re.fullmatch(r"!llvm\.ptr(?:<(\d+)>)?", t)
    if m:
        return PtrT(int(m.group(1) or 0))
    m = re.fullmatch(r"(?:!llvm\.)?struct<(packed\s*)?\((.*)\)>", t)  # nested structs drop the prefix
    if m:
        return StructT(tuple(parse_type_text(f) for f in _split_top(m.group(2))), bool(m.group(1)))
    m = re.fullmatch(r"!llvm\.array<(\d+)\s*x\s*(.*)>", t)
    if m:
        return ArrayT(int(m.group(1)), parse_type_text(m.group(2)))
    return OpaqueT(t)


def parse_type(ir_type: Any, ir_module: Any = None) -> Type:
    """The :data:`Type` of an MLIR ``ir.Type`` (memrefs through the bindings' MemRefType)."""
    text = str(ir_type)
    if text.startswith("memref<") and ir_module is not None:
        mt = ir_module.MemRefType(ir_type)
        elem = parse_type(mt.element_type, ir_module)
        space_attr = mt.memory_space
        space_text = "" if space_attr is None else str(space_attr)
        space_text = re.sub(r"\s*:\s*i64$", "", space_text)
        if space_text not in _SPACE_NAMES:
            return OpaqueT(text)
        strides, offset = mt.get_strides_and_offset()
        dyn = -(2**63)
        shape = tuple(None if d == dyn else d for d in mt.shape)
        strides = tuple(None if s == dyn else s for s in strides)
        return MemRefT(shape, elem, _SPACE_NAMES[space_text], strides, None if offset == dyn else offset)
    return parse_type_text(text)


def elem_of(t: Type):
    """Element type of a vector, else the type itself."""
    return t.elem if isinstance(t, VectorT) else t


def shape_of(t: Type) -> tuple:
    """Vector shape (``()`` for scalars)."""
    return t.shape if isinstance(t, VectorT) else ()


def storage_dtype(t: Type) -> np.dtype:
    """The numpy dtype that stores values of scalar/vector type ``t``."""
    e = elem_of(t)
    if isinstance(e, IntT):
        for w, dt in ((8, np.uint8), (16, np.uint16), (32, np.uint32), (64, np.uint64)):
            if e.bits <= w:
                return np.dtype(dt)
        raise TypeParseError(f"integers wider than 64 bits ({e}) are not supported")
    if isinstance(e, FloatT):
        return np.dtype({"f16": np.float16, "f64": np.float64}.get(e.name, np.float32))
    if isinstance(e, PtrT):
        return np.dtype(np.uint64)
    raise TypeParseError(f"type {t} has no array storage")


def elem_bits(t: Type) -> int:
    e = elem_of(t)
    if isinstance(e, (IntT, FloatT)):
        return e.bits
    if isinstance(e, PtrT):
        return 32 if e.space in (3, 5) else 64
    raise TypeParseError(f"type {t} has no bit width")


def byte_size(t: Type) -> int:
    """Bytes of a value of ``t`` in memory (vectors of sub-byte elements are bit-packed)."""
    if isinstance(t, StructT):
        return sum(byte_size(f) for f in t.fields)
    if isinstance(t, ArrayT):
        return t.count * byte_size(t.elem)
    n = int(np.prod(shape_of(t), dtype=np.int64))
    return (n * elem_bits(t) + 7) // 8


def normalize(x: np.ndarray, t: Type) -> np.ndarray:
    """``x`` converted to the storage of ``t``: integers reduced mod 2**N, floats rounded."""
    e = elem_of(t)
    dt = storage_dtype(t)
    if isinstance(e, IntT):
        x = np.asarray(x).astype(dt, copy=False)
        if e.bits not in (8, 16, 32, 64):
            x = x & dt.type((1 << e.bits) - 1)
        return x
    if isinstance(e, FloatT):
        if e.name in ("f16", "f32", "f64"):
            return np.asarray(x).astype(dt, copy=False)
        if e.name == "bf16":
            xa = np.asarray(x)
            if xa.dtype == np.float32:
                return bf16_bits_to_f32(f32_to_bf16_bits(xa))
        return round_to_format(x, e.fmt).astype(np.float32)
    return np.asarray(x).astype(dt, copy=False)


def _uint_dtype(bits: int) -> np.dtype:
    return np.dtype({8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits])


def _elem_bits_array(x: np.ndarray, t: Type) -> np.ndarray:
    """Per-element bit patterns of ``x`` (of type ``t``) as unsigned ints."""
    e = elem_of(t)
    if isinstance(e, IntT) or isinstance(e, PtrT):
        return x
    if e.name in ("f16", "f32", "f64"):
        return x.view(_uint_dtype(e.bits))
    if e.name == "bf16":
        return f32_to_bf16_bits(x)
    return encode_bits(x, e.fmt)


def to_bytes(x: np.ndarray, t: Type) -> np.ndarray:
    """The bytes of each lane's value: ``(L, byte_size(t))`` ``uint8`` (L = lanes of ``x``)."""
    x = np.asarray(x)
    lanes = x.shape[0]
    bits = elem_bits(t)
    b = np.ascontiguousarray(_elem_bits_array(x, t))
    if bits in (8, 16, 32, 64):
        return b.astype(_uint_dtype(bits), copy=False).view(np.uint8).reshape(lanes, -1)
    # bit-packed: element k occupies bits [k*bits, (k+1)*bits)
    return items_to_bytes(b.reshape(lanes, -1), bits)


def from_bytes(b: np.ndarray, t: Type) -> np.ndarray:
    """Inverse of :func:`to_bytes`: ``(L, nbytes)`` ``uint8`` -> values of ``t`` with lane axis L."""
    b = np.ascontiguousarray(b, dtype=np.uint8)
    lanes = b.shape[0]
    shape = (lanes,) + shape_of(t)
    e = elem_of(t)
    bits = elem_bits(t)
    if bits in (8, 16, 32, 64):
        u = b.view(_uint_dtype(bits)).reshape(shape)
    else:
        n = int(np.prod(shape_of(t), dtype=np.int64))
        u = bytes_to_items(b, n, bits).astype(storage_dtype(IntT(bits))).reshape(shape)
    if isinstance(e, (IntT, PtrT)):
        return u.astype(storage_dtype(t), copy=False)
    if e.name in ("f16", "f32", "f64"):
        return u.view(storage_dtype(t)).copy()
    if e.name == "bf16":
        return bf16_bits_to_f32(u)
    return decode_bits(u, e.fmt).astype(np.float32)


def bytes_to_items(b: np.ndarray, count: int, bits: int) -> np.ndarray:
    """The first ``count`` ``bits``-bit items of each row of ``b`` ((L, n) uint8, item 0 in the
    least significant bits): (L, count) uint64."""
    if b.shape[1] * 8 < count * bits:
        raise ValueError(f"{b.shape[1] * 8} bits hold fewer than {count} items of {bits} bits")
    if bits % 8 == 0:
        w = bits // 8
        by = b[:, : count * w].reshape(b.shape[0], count, w).astype(np.uint64)
        return (by << (np.arange(w, dtype=np.uint64) * np.uint64(8))).sum(axis=2, dtype=np.uint64)
    allbits = np.unpackbits(b, axis=1, bitorder="little")[:, : count * bits].reshape(b.shape[0], count, bits)
    return (allbits.astype(np.uint64) << np.arange(bits, dtype=np.uint64)).sum(axis=2, dtype=np.uint64)


def items_to_bytes(items: np.ndarray, bits: int) -> np.ndarray:
    """Inverse of :func:`bytes_to_items`: (L, count) items -> (L, ceil(count*bits/8)) uint8."""
    items = np.asarray(items, dtype=np.uint64)
    lanes, count = items.shape
    allbits = ((items[:, :, None] >> np.arange(bits, dtype=np.uint64)) & np.uint64(1)).astype(np.uint8)
    allbits = allbits.reshape(lanes, count * bits)
    pad = (-(count * bits)) % 8
    if pad:
        allbits = np.concatenate([allbits, np.zeros((lanes, pad), np.uint8)], axis=1)
    return np.packbits(allbits, axis=1, bitorder="little")
