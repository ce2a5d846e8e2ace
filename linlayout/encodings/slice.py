"""Triton's slice layout (``#ttg.slice<{dim, parent}>``) of any distributed parent.

The parent's layout is built for the shape with a size-1 dim inserted at
``dim``; that out dim is removed (the others are renamed ``dim0..``) and the
register bases that became 0 are dropped.  Lanes and warps that moved along
the removed dim now hold copies (zero bases = broadcast).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..errors import LayoutError
from ..layout import LinearLayout
from .common import EncodingBase, remove_broadcast_registers, standard_out_dims

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
        names = standard_out_dims(self.parent.rank)
        kept = [n for i, n in enumerate(names) if i != self.dim]
        ll = parent_ll.sublayout(parent_ll.in_dim_names, kept)
        for new, old in zip(standard_out_dims(self.rank), kept):
            if new != old:
                ll = ll.rename_out_dim(old, new)
        return remove_broadcast_registers(ll)


def slice_layout(parent: object, dim: int, shape: Sequence[int]) -> LinearLayout:
    """The layout of ``parent`` sliced along ``dim``, over the (rank - 1) ``shape``."""
    return Slice(parent, dim).to_linear_layout(shape)
