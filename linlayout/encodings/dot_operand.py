"""Triton's dot-operand layout (``#ttg.dot_op<{opIdx, parent, kWidth}>``).

Operand A (``opIdx = 0``) is ``[M, K]``, operand B (``opIdx = 1``) is ``[K, N]``
(with a leading batch dim for rank 3).  The rule depends on the parent
family (blocked, MFMA, WMMA, NVIDIA MMA): each parent encoding class
implements ``dot_operand_layout(op_idx, k_width, shape)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..errors import LayoutError
from ..layout import LinearLayout
from .common import EncodingBase

__all__ = ["DotOperand", "dot_operand"]


@dataclass(frozen=True)
class DotOperand(EncodingBase):
    """Operand ``op_idx`` of a dot whose result has encoding ``parent``; ``k_width`` is the
    number of consecutive K elements a lane holds per instruction (0 for blocked parents)."""

    parent: object
    op_idx: int
    k_width: int = 0

    kind = "dot_operand"

    def __post_init__(self) -> None:
        if not hasattr(self.parent, "dot_operand_layout"):
            raise LayoutError(f"parameter parent: {type(self.parent).__name__} has no dot-operand layout")
        if isinstance(self.op_idx, bool) or self.op_idx not in (0, 1):
            raise LayoutError(f"parameter opIdx: {self.op_idx!r} is not 0 (A) or 1 (B)")
        if isinstance(self.k_width, bool) or not isinstance(self.k_width, int) or self.k_width < 0:
            raise LayoutError(f"parameter kWidth: {self.k_width!r} is not a non-negative integer")

    @property
    def rank(self) -> int:
        return self.parent.rank

    def to_params(self) -> dict:
        return {"opIdx": self.op_idx, "kWidth": self.k_width, "parent": self.parent.to_params()}

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        return self.parent.dot_operand_layout(self.op_idx, self.k_width, shape)


def dot_operand(parent: object, op_idx: int, k_width: int, shape: Sequence[int]) -> LinearLayout:
    """The layout of dot operand ``op_idx`` (0 = A, 1 = B) of ``parent`` over ``shape``."""
    return DotOperand(parent, op_idx, k_width).to_linear_layout(shape)
