"""Triton's NVIDIA MMA layouts (``#ttg.nvidia_mma``, v2 = Ampere ``mma.sync``, v3 =
Hopper ``wgmma``) and their dot operands — for Triton interop (warp size 32).

One tile (``m x n``, ``order[0]`` the inner dim): ``kWidth`` registers along the
inner dim, 4 lanes along the inner dim, 8 lanes along the outer dim, ``m/8``
registers along the outer dim, ``n/(4*kWidth)`` registers along the inner dim.
The accumulator uses ``kWidth = 2`` and the tile ``instrShape[:2]`` (v3) or
``instrShape`` (v2).  Warps: row-major for v2, column-major for v3; a dot
operand's warps along K are broadcast.  Operand A's tile is ``instrM x
kWidth*8`` (``kWidth*4`` for fp64's ``instrM = 8``), operand B's (v2 only)
``kWidth*8 x 8``.
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
    check_pow2,
    check_pow2_list,
    check_warps_and_tiles,
    dot_operand_order,
    matrix_order,
)

__all__ = ["NvidiaMma", "nvidia_mma_layout"]


def _mma_tile(tile_shape: Sequence[int], k_width: int, order: Sequence[int]) -> Tile:
    """Triton's ``nvidiaMmaTile`` (out dims in ``order``)."""
    tile = Tile(len(order))
    for d in order:
        tile.identity(1, "register", d)
    inner, outer = order[0], order[1]
    m, n = tile_shape[outer], tile_shape[inner]
    if m % 8 or n % (k_width * 4):
        raise LayoutError(f"parameter instrShape: tile {m}x{n} is not a multiple of 8 x {4 * k_width}")
    return (tile.identity(k_width, "register", inner).identity(4, "lane", inner).identity(8, "lane", outer)
            .identity(m // 8, "register", outer).identity(n // (k_width * 4), "register", inner))


@dataclass(frozen=True)
class NvidiaMma(EncodingBase):
    """``#ttg.nvidia_mma<{versionMajor, versionMinor, warpsPerCTA, instrShape}>``."""

    version_major: int
    warps_per_cta: tuple[int, ...]
    instr_shape: tuple[int, ...]
    version_minor: int = 0
    cga: Cga = field(default_factory=Cga)

    _rank_source = "warps_per_cta"
    kind = "nvidia_mma"

    def __post_init__(self) -> None:
        if isinstance(self.version_major, bool) or self.version_major not in (2, 3):
            raise LayoutError(f"parameter versionMajor: {self.version_major!r} is not 2 (Ampere) or 3 (Hopper)")
        if isinstance(self.version_minor, bool) or not isinstance(self.version_minor, int):
            raise LayoutError(f"parameter versionMinor: {self.version_minor!r} is not an integer")
        warps, _ = check_warps_and_tiles(self.warps_per_cta, None)
        instr = check_pow2_list("instrShape", self.instr_shape)
        want = len(warps) if self.version_major == 2 else 3
        if len(instr) != want:
            raise LayoutError(f"parameter instrShape: {list(instr)} must have {want} entries for MMA v{self.version_major}")
        self.cga.check_rank(len(warps))
        object.__setattr__(self, "warps_per_cta", warps)
        object.__setattr__(self, "instr_shape", instr)

    @classmethod
    def from_params(cls, params: Mapping, encoding: str = "nvidia_mma") -> "NvidiaMma":
        r = ParamReader(params, encoding)
        warps = r.get("warpsPerCTA")
        enc = cls(r.get("versionMajor"), warps, r.get("instrShape"), r.get("versionMinor", 0),
                  r.cga(warps))
        r.done()
        return enc

    def to_params(self) -> dict:
        return {"versionMajor": self.version_major, "versionMinor": self.version_minor,
                "warpsPerCTA": list(self.warps_per_cta), "instrShape": list(self.instr_shape),
                **self.cga.to_params()}

    def _warp_order(self) -> list[int]:
        return matrix_order(self.rank, row_major=self.version_major != 3)

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        shape = self.check_layout_shape(shape)
        rank = self.rank
        tile_shape = self.instr_shape if self.version_major == 2 else self.instr_shape[:2]
        if len(tile_shape) != rank:
            raise LayoutError(f"parameter instrShape: MMA v3 layouts are 2-D, the shape has rank {rank}")
        cta = _mma_tile(tile_shape, 2, matrix_order(rank, row_major=True))
        return cta.identity_nd("warp", self.warps_per_cta, self._warp_order()).combine(self.cga, shape)

    def dot_operand_layout(self, op_idx: int, k_width: int, shape: Sequence[int]) -> LinearLayout:
        shape = self.check_layout_shape(shape)
        check_pow2("kWidth", k_width)
        rank = self.rank
        if op_idx == 1 and self.version_major == 3:
            raise LayoutError("parameter opIdx: MMA v3 (wgmma) takes operand B from shared memory, not registers")
        instr_m = self.instr_shape[rank - 2] if self.version_major == 2 else self.instr_shape[0]
        k_tile = k_width * (4 if instr_m == 8 else 8)
        tile_shape = [1] * rank
        if op_idx == 0:
            tile_shape[rank - 2], tile_shape[rank - 1] = instr_m, k_tile
        else:
            tile_shape[rank - 2], tile_shape[rank - 1] = k_tile, 8
        cta = _mma_tile(tile_shape, k_width, dot_operand_order(op_idx, rank, k_contig=True))
        k_dim = rank - 1 if op_idx == 0 else rank - 2
        cta.identity_nd("warp", self.warps_per_cta, self._warp_order(), zero_dim=k_dim)
        return cta.combine(self.cga.operand(k_dim), shape)


def nvidia_mma_layout(
    version_major: int, warps_per_cta: Sequence[int], instr_shape: Sequence[int], shape: Sequence[int]
) -> LinearLayout:
    """The accumulator layout of ``#ttg.nvidia_mma`` over ``shape``."""
    return NvidiaMma(version_major, warps_per_cta, instr_shape).to_linear_layout(shape)
