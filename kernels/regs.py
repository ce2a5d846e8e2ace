"""Per-lane registers of a distributed layout as MLIR values.

A layout's register ``r`` of a lane is one element.  The elements arrive in vectors (one
load instruction fills several registers) and leave in other groupings (an MFMA operand,
an LDS store), so :class:`Registers` remembers, for each register index, the vector value
that holds it and its position, and :meth:`Registers.gather` builds the vector of any list
of registers: the loaded vector itself, a contiguous slice of it
(``vector.extract_strided_slice``), or single elements put together
(``vector.from_elements``).  LLVM turns slices and aligned regroupings into nothing.
"""

from __future__ import annotations

from typing import Sequence

from linlayout import LayoutError
from linlayout.lowering.emit.builder import Builder, vector_type

__all__ = ["Registers", "bitcast"]


def bitcast(b: Builder, value: str, from_t: str, to_t: str) -> str:
    """``llvm.bitcast`` (no op when the types are equal)."""
    return value if from_t == to_t else b.value(f"llvm.bitcast {value} : {from_t} to {to_t}", "bc")


class Registers:
    """Register index -> (vector value, its length, position) for elements of MLIR type ``elem``."""

    def __init__(self, b: Builder, elem: str) -> None:
        self.b = b
        self.elem = elem
        self._where: dict[int, tuple[str, int, int]] = {}

    def put(self, regs: Sequence[int], value: str) -> None:
        """``value`` (``vector<len(regs) x elem>``, or ``elem`` for one register) holds ``regs`` in order."""
        n = len(regs)
        for p, r in enumerate(regs):
            self._where[int(r)] = (value, n, p)

    def __contains__(self, r: int) -> bool:
        return int(r) in self._where

    def gather(self, regs: Sequence[int]) -> str:
        """The ``vector<len(regs) x elem>`` (or ``elem``) of ``regs`` in order."""
        try:
            where = [self._where[int(r)] for r in regs]
        except KeyError as e:
            raise LayoutError(f"register {e.args[0]} holds no value yet") from None
        b, n = self.b, len(regs)
        v0, n0, p0 = where[0]
        if all(w[0] == v0 and w[2] == p0 + i for i, w in enumerate(where)):
            if n == n0:
                return v0
            if n == 1:
                return self._element(v0, n0, p0)
            return b.value(f"vector.extract_strided_slice {v0} {{offsets = [{p0}], sizes = [{n}], strides = [1]}} : "
                           f"{vector_type(n0, self.elem)} to {vector_type(n, self.elem)}", "slice")
        elems = [self._element(v, m, p) for v, m, p in where]
        return b.build_vector(elems, self.elem)

    def _element(self, v: str, n: int, p: int) -> str:
        if n == 1:
            return v
        return self.b.value(f"vector.extract {v}[{p}] : {self.elem} from {vector_type(n, self.elem)}", "el")
