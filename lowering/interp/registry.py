"""The op registry, the compile-time view of one op (:class:`OpInfo`), and value helpers.

An op handler is registered for one or more op names with :func:`register` (an LLVM intrinsic
called through ``llvm.call_intrinsic "<name>"``, for one with no dialect op, with
:func:`register_intrinsic`); at compile time it receives an :class:`OpInfo` and returns a
*step*, a function ``step(ctx)`` that executes the op for the whole workgroup: it reads operand
values from ``ctx.vals[slot]`` and writes results to ``ctx.vals[slot]``.  ``ctx`` is a
:class:`linlayout.lowering.interp.core.Ctx`.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Optional

import numpy as np

from .errors import InterpreterError
from .memory import MemRefValue
from .types import IntT, Type, VectorT, normalize, parse_type, shape_of, storage_dtype

__all__ = ["OPS", "INTRINSICS", "register", "register_intrinsic", "OpInfo", "lanes", "merge", "uniform_scalar",
           "const_array", "signed", "Step"]

Step = Callable[[Any], None]
OPS: dict = {}
INTRINSICS: dict = {}


def _registrar(table: dict, what: str, names: tuple[str, ...]) -> Callable:
    def deco(fn: Callable) -> Callable:
        for n in names:
            if n in table:
                raise RuntimeError(f"{what} {n} registered twice")
            table[n] = fn
        return fn

    return deco


def register(*names: str) -> Callable:
    """Decorator: the function compiles ops called ``names`` into steps."""
    return _registrar(OPS, "op", names)


def register_intrinsic(*names: str) -> Callable:
    """Decorator: the function compiles ``llvm.call_intrinsic`` ops of the intrinsics ``names`` into steps."""
    return _registrar(INTRINSICS, "intrinsic", names)


def _location(op: Any) -> str:
    m = re.search(r":(\d+):(\d+)\)?$", str(op.location).rstrip(")"))
    return f"line {m.group(1)}:{m.group(2)}" if m else str(op.location)


class OpInfo:
    """What a handler may know about one op at compile time."""

    def __init__(self, op: Any, compiler: Any) -> None:
        self.op = op
        self.compiler = compiler
        self.name: str = op.name
        self.loc: str = _location(op)
        ir = compiler.ir
        self.operands: list = [compiler.slot(v) for v in op.operands]
        self.operand_types: list = [parse_type(v.type, ir) for v in op.operands]
        self.results: list = [compiler.new_slot(v) for v in op.results]
        self.result_types: list = [parse_type(v.type, ir) for v in op.results]
        self.arch: str = compiler.arch
        self.target = compiler.target

    # ---- errors
    def error(self, msg: str) -> InterpreterError:
        return InterpreterError(msg, self.name, self.loc)

    # ---- attributes
    def has_attr(self, name: str) -> bool:
        return name in self.op.attributes

    def attr(self, name: str) -> Any:
        if name not in self.op.attributes:
            raise self.error(f"missing attribute {name!r}")
        return self.op.attributes[name]

    def int_attr(self, name: str, default: Optional[int] = None) -> int:
        if name not in self.op.attributes:
            if default is None:
                raise self.error(f"missing attribute {name!r}")
            return default
        a = self.op.attributes[name]
        try:
            return int(a.value)
        except AttributeError:
            m = re.match(r"^(-?\d+)", str(a))
            if not m:
                raise self.error(f"attribute {name} = {a} is not an integer") from None
            return int(m.group(1))

    def bool_attr(self, name: str, default: bool = False) -> bool:
        if name not in self.op.attributes:
            return default
        a = self.op.attributes[name]
        try:
            return bool(a.value)
        except AttributeError:
            return str(a) in ("true", "unit")

    def ints_attr(self, name: str) -> list:
        a = self.attr(name)
        try:
            return [int(x) for x in a]
        except TypeError:
            return [int(x.value) for x in a]

    def str_attr(self, name: str) -> str:
        a = self.attr(name)
        return a.value if hasattr(a, "value") and isinstance(a.value, str) else str(a)

    def type_attr(self, name: str) -> Type:
        a = self.attr(name)
        return parse_type(a.value if hasattr(a, "value") else a, self.compiler.ir)

    # ---- regions
    def region(self, i: int):
        return self.compiler.compile_region(self.op.regions[i], self)

    @property
    def num_regions(self) -> int:
        return len(self.op.regions)


# ------------------------------------------------------------------ value helpers
def lanes(x: np.ndarray, n: int) -> np.ndarray:
    """``x`` with its lane axis broadcast to ``n`` (read-only view when it was 1)."""
    return x if x.shape[0] == n else np.broadcast_to(x, (n,) + x.shape[1:])


def const_array(value: Any, t: Type) -> np.ndarray:
    """A uniform value (lane axis 1) of scalar/vector type ``t`` from Python/numpy numbers
    (integers may be negative: they are taken modulo 2**N)."""
    shape = shape_of(t)
    e = t.elem if isinstance(t, VectorT) else t
    if isinstance(e, IntT):
        dt = storage_dtype(t)
        if isinstance(value, (int, bool, np.integer)):
            arr = np.full(shape, int(value) & ((1 << e.bits) - 1), dtype=dt)
        else:
            arr = np.broadcast_to(np.asarray(value).astype(np.int64), shape).astype(dt)
            if e.bits not in (8, 16, 32, 64):
                arr &= dt.type((1 << e.bits) - 1)
        return arr.reshape((1,) + shape)
    return normalize(np.broadcast_to(np.asarray(value, dtype=np.float64), shape), t).reshape((1,) + shape)


def signed(x: np.ndarray, bits: int) -> np.ndarray:
    """Two's-complement value of ``bits``-bit patterns as ``int64``."""
    if bits == 64:
        return x.view(np.int64) if x.dtype == np.uint64 else x.astype(np.uint64).view(np.int64)
    v = x.astype(np.int64)
    sign = np.int64(1 << (bits - 1))
    return (v ^ sign) - sign


def _bcast_cond(c: np.ndarray, like: np.ndarray) -> np.ndarray:
    return c.reshape(c.shape + (1,) * (like.ndim - c.ndim))


def merge(c: np.ndarray, a: Any, b: Any, what: str = "value") -> Any:
    """Per lane: ``a`` where ``c`` (bool, lane axis) else ``b``; structs and memrefs too."""
    if a is b:
        return a
    if isinstance(a, tuple):
        return tuple(merge(c, x, y, what) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return np.where(_bcast_cond(c, a), a, b)
    if isinstance(a, MemRefValue) and isinstance(b, MemRefValue):
        if a.mtype != b.mtype or a.private is not b.private:
            raise InterpreterError(f"cannot merge two different memrefs ({what}) across divergent lanes")
        off = a.elem_offset if np.array_equal(a.elem_offset, b.elem_offset) else np.where(c, a.elem_offset, b.elem_offset)
        return MemRefValue(a.mtype, np.where(c, a.base, b.base), off, a.private)
    if a == b:
        return a
    raise InterpreterError(f"cannot merge {what} values {a!r} and {b!r} across divergent lanes")


def uniform_scalar(x: np.ndarray, active: Optional[np.ndarray]) -> Optional[Any]:
    """The common value of a scalar over the active lanes, or ``None`` if lanes differ."""
    if x.shape[0] == 1:
        return x[0].item()
    v = x if active is None else x[active]
    if v.size == 0:
        return x[0].item()
    first = v[0]
    if (v == first).all():
        return first.item()
    return None

