"""Triton's blocked layout (``#ttg.blocked``) and its dot operands (FMA dot).

Blocked: ``register -> sizePerThread``, ``lane -> threadsPerWarp``, ``warp ->
warpsPerCTA``, each counting through its tile with ``order[0]`` fastest; the
three tiles nest (registers innermost), then the whole pattern repeats over
the tensor (extra register bits) or broadcasts where the tensor is smaller.

Dot operand of a blocked parent (``opIdx`` 0 = A ``[M, K]``, 1 = B ``[K, N]``):
every thread holds the whole K extent in registers; lanes and warps that the
parent spreads along K hold copies (broadcast).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ..errors import LayoutError
from ..layout import LinearLayout
from .common import Cga, EncodingBase, ParamReader, Tile, check_order, check_pow2_list

__all__ = ["Blocked", "blocked"]


@dataclass(frozen=True)
class Blocked(EncodingBase):
    """``#ttg.blocked<{sizePerThread, threadsPerWarp, warpsPerCTA, order}>``."""

    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    order: tuple[int, ...]
    cga: Cga = field(default_factory=Cga)

    _rank_source = "size_per_thread"
    kind = "blocked"

    def __post_init__(self) -> None:
        spt = check_pow2_list("sizePerThread", self.size_per_thread)
        rank = len(spt)
        object.__setattr__(self, "size_per_thread", spt)
        object.__setattr__(self, "threads_per_warp", check_pow2_list("threadsPerWarp", self.threads_per_warp, rank))
        object.__setattr__(self, "warps_per_cta", check_pow2_list("warpsPerCTA", self.warps_per_cta, rank))
        object.__setattr__(self, "order", check_order("order", self.order, rank))
        self.cga.check_rank(rank)

    @classmethod
    def from_params(cls, params: Mapping) -> "Blocked":
        r = ParamReader(params, "blocked")
        spt = r.get("sizePerThread")
        enc = cls(spt, r.get("threadsPerWarp"), r.get("warpsPerCTA"), r.get("order"),
                  r.cga(spt))
        r.done()
        return enc

    def to_params(self) -> dict:
        return {"sizePerThread": list(self.size_per_thread), "threadsPerWarp": list(self.threads_per_warp),
                "warpsPerCTA": list(self.warps_per_cta), "order": list(self.order), **self.cga.to_params()}

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        shape = self.check_layout_shape(shape)
        cta = (Tile(self.rank).identity_nd("register", self.size_per_thread, self.order)
               .identity_nd("lane", self.threads_per_warp, self.order)
               .identity_nd("warp", self.warps_per_cta, self.order))
        return cta.combine(self.cga, shape, broadcast_registers=False)

    def dot_operand_layout(self, op_idx: int, k_width: int, shape: Sequence[int]) -> LinearLayout:
        """FMA dot operand: K fully in registers, lanes/warps along K broadcast (``k_width`` must be 0)."""
        if k_width != 0:
            raise LayoutError(f"parameter kWidth: {k_width} must be 0 for a dot operand of a blocked layout")
        shape = self.check_layout_shape(shape)
        rank = self.rank
        if rank < 2:
            raise LayoutError("parameter shape: a dot operand needs rank >= 2")
        k_dim = rank - 1 if op_idx == 0 else rank - 2
        thread_size = list(self.size_per_thread)
        thread_size[k_dim] = shape[k_dim]
        cta = (Tile(rank).identity_nd("register", thread_size, self.order)
               .identity_nd("lane", self.threads_per_warp, self.order, zero_dim=k_dim)
               .identity_nd("warp", self.warps_per_cta, self.order, zero_dim=k_dim))
        return cta.combine(self.cga.operand(k_dim), shape)


def blocked(
    size_per_thread: Sequence[int],
    threads_per_warp: Sequence[int],
    warps_per_cta: Sequence[int],
    order: Sequence[int],
    shape: Sequence[int],
    *,
    ctas_per_cga: Sequence[int] | None = None,
    cta_split_num: Sequence[int] | None = None,
    cta_order: Sequence[int] | None = None,
) -> LinearLayout:
    """The LinearLayout of ``#ttg.blocked`` over ``shape`` (in dims register, lane, warp, block)."""
    cga = Cga.from_params(ctas_per_cga, cta_split_num, cta_order, len(size_per_thread)
                          if isinstance(size_per_thread, (list, tuple)) else None)
    return Blocked(size_per_thread, threads_per_warp, warps_per_cta, order, cga).to_linear_layout(shape)
