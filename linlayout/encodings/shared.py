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
    check_order,
    check_pow2,
    combine_cta_cga_with_shape,
    shape_per_cta,
    standard_out_dims,
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
        if isinstance(self.order, (str, bytes)) or not isinstance(self.order, Sequence):
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
        names = standard_out_dims(rank)
        if rank == 1:
            return combine_cta_cga_with_shape(LinearLayout.identity_1d(per_cta[0], "offset", "dim0"), self.cga, shape)
        core_shape = shape if self.rotating else per_cta
        col, row = self.order[0], self.order[1]
        n_cols, n_rows = core_shape[col], core_shape[row]
        bases = [[0, 1 << i] for i in range(n_cols.bit_length() - 1)]
        for i in range(n_rows.bit_length() - 1):
            r = 1 << i
            bases.append([r, (self.vec * self._phase(r)) % n_cols])
        cta = LinearLayout({"offset": bases}, [(names[row], n_rows), (names[col], n_cols)])
        for d in self.order[2:]:
            cta = cta * LinearLayout.identity_1d(core_shape[d], "offset", names[d])
        return combine_cta_cga_with_shape(cta, self.cga, shape)


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
