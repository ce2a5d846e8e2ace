"""Triton's slice layout (``#ttg.slice<{dim, parent}>``) of any distributed parent.

The parent's layout is built for the shape with a size-1 dim inserted at
``dim``; that out dim is removed (the others are renamed ``dim0..``) and every
register basis that is 0 is dropped (a slice has no broadcast registers).  Lanes and warps that moved along
the removed dim now hold copies (zero bases = broadcast).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..errors import LayoutError
from ..layout import LinearLayout
from .common import EncodingBase, standard_out_dims

__all__ = ["Slice", "slice_layout"]


@dataclass(frozen=True)
class Slice(EncodingBase):
    """The layout of ``parent`` with tensor dim ``dim`` sliced away (rank - 1)."""

    parent: object
    dim: int

    kind = "slice"

    def __post_init__(self) -> None:
        if not hasattr(self.parent, "to_linear_layout") or not hasattr(self.parent, "rank"):
            raise LayoutError(f"parameter parent: {type(self.parent).__name__} is not an encoding")
        if isinstance(self.dim, bool) or not isinstance(self.dim, int) or not 0 <= self.dim < self.parent.rank:
            raise LayoutError(f"parameter dim: {self.dim!r} is not a dim of the rank-{self.parent.rank} parent")

    @property
    def rank(self) -> int:
        return self.parent.rank - 1

    def to_params(self) -> dict:
        return {"dim": self.dim, "parent": {"encoding": self.parent.kind, **self.parent.to_params()}}

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        shape = self.check_layout_shape(shape)
        parent_shape = list(shape)
        parent_shape.insert(self.dim, 1)
        parent_ll = self.parent.to_linear_layout(parent_shape)
        keep = [i for i in range(self.parent.rank) if i != self.dim]
        bases = {}
        for in_dim, parent_bases in parent_ll.bases.items():
            sliced = [[b[i] for i in keep] for b in parent_bases]
            bases[in_dim] = [b for b in sliced if any(b)] if in_dim == "register" else sliced
        # the parent's bases less one component: already valid, the trusted constructor
        return LinearLayout._make([(d, 1 << len(b)) for d, b in bases.items()],
                                  list(zip(standard_out_dims(self.rank), shape)), bases)


def slice_layout(parent: object, dim: int, shape: Sequence[int]) -> LinearLayout:
    """The layout of ``parent`` sliced along ``dim``, over the (rank - 1) ``shape``."""
    return Slice(parent, dim).to_linear_layout(shape)
