"""Triton's swizzled shared layouts (``#ttg.swizzled_shared``, ``#ttg.amd_rotating_shared``).

In dims ``offset`` (element index into shared memory / LDS) and ``block``.
Column dim ``c = order[0]``, row dim ``r = order[1]`` (per-CTA extents
``numCols``, ``numRows``):

* offset bits ``0..log2(numCols)`` go along the column dim (1, 2, 4, ...);
* row bit ``2**i`` (row ``R``) maps to ``(R, vec * phase(R) % numCols)`` with
  ``phase(R) = (R // perPhase) % maxPhase``: the classic ``col ^= vec * phase``
  swizzle, linear because vec, perPhase and maxPhase are powers of two;
* the remaining dims follow ``order`` unswizzled.

The AMD rotating variant XORs the phase with the "block number"
``(R // (perPhase * maxPhase)) % maxPhase``, so consecutive groups of
``perPhase * maxPhase`` rows use rotated swizzles.  (As in Triton, it sizes its
2-D core with the full shape, not the per-CTA shape.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ..errors import LayoutError
from ..layout import LinearLayout
from .common import (
    Cga,
    EncodingBase,
    ParamReader,
    Tile,
    _is_list,
    check_order,
    check_pow2,
    shape_per_cta,
)

__all__ = ["SwizzledShared", "AmdRotatingShared", "swizzled_shared", "amd_rotating_shared"]


@dataclass(frozen=True)
class SwizzledShared(EncodingBase):
    """``#ttg.swizzled_shared<{vec, perPhase, maxPhase, order}>``."""

    vec: int
    per_phase: int
    max_phase: int
    order: tuple[int, ...]
    cga: Cga = field(default_factory=Cga)

    _rank_source = "order"
    kind = "swizzled_shared"
    rotating = False

    def __post_init__(self) -> None:
        check_pow2("vec", self.vec)
        check_pow2("perPhase", self.per_phase)
        check_pow2("maxPhase", self.max_phase)
        if not _is_list(self.order):
            raise LayoutError(f"parameter order: {self.order!r} is not a list of dims")
        object.__setattr__(self, "order", check_order("order", self.order, len(self.order)))
        self.cga.check_rank(len(self.order))

    @classmethod
    def from_params(cls, params: Mapping) -> "SwizzledShared":
        r = ParamReader(params, cls.kind)
        order = r.get("order")
        enc = cls(r.get("vec"), r.get("perPhase"), r.get("maxPhase"), order,
                  r.cga(order))
        r.done()
        return enc

    def to_params(self) -> dict:
        return {"vec": self.vec, "perPhase": self.per_phase, "maxPhase": self.max_phase,
                "order": list(self.order), **self.cga.to_params()}

    def _phase(self, row: int) -> int:
        phase = (row // self.per_phase) % self.max_phase
        if self.rotating:
            phase ^= (row // self.max_phase // self.per_phase) % self.max_phase
        return phase

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        """``offset, block -> dims`` over ``shape``."""
        shape = self.check_layout_shape(shape)
        rank = self.rank
        per_cta = shape_per_cta(shape, self.cga)
        if rank == 1:
            return Tile(1).identity(per_cta[0], "offset", 0).combine(self.cga, shape)
        core_shape = shape if self.rotating else per_cta
        col, row = self.order[0], self.order[1]
        n_cols, n_rows = core_shape[col], core_shape[row]
        cta = Tile(rank)
        bases = cta.bases["offset"] = []
        for i in range(n_cols.bit_length() - 1):
            basis = [0] * rank
            basis[col] = 1 << i
            bases.append(basis)
        for i in range(n_rows.bit_length() - 1):
            basis = [0] * rank
            basis[row], basis[col] = 1 << i, (self.vec * self._phase(1 << i)) % n_cols
            bases.append(basis)
        cta.log2[col], cta.log2[row] = n_cols.bit_length() - 1, n_rows.bit_length() - 1
        cta.order_outs([row, col])
        for d in self.order[2:]:
            cta.identity(core_shape[d], "offset", d)
        return cta.combine(self.cga, shape)


@dataclass(frozen=True)
class AmdRotatingShared(SwizzledShared):
    """``#ttg.amd_rotating_shared<{vec, perPhase, maxPhase, order}>``."""

    kind = "amd_rotating_shared"
    rotating = True


def swizzled_shared(vec: int, per_phase: int, max_phase: int, order: Sequence[int], shape: Sequence[int]) -> LinearLayout:
    """The ``offset -> dims`` layout of ``#ttg.swizzled_shared`` over ``shape``."""
    return SwizzledShared(vec, per_phase, max_phase, order).to_linear_layout(shape)


def amd_rotating_shared(vec: int, per_phase: int, max_phase: int, order: Sequence[int], shape: Sequence[int]) -> LinearLayout:
    """The ``offset -> dims`` layout of ``#ttg.amd_rotating_shared`` over ``shape``."""
    return AmdRotatingShared(vec, per_phase, max_phase, order).to_linear_layout(shape)
