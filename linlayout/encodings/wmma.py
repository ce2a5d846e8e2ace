"""Triton's AMD WMMA layouts (``#ttg.amd_wmma``, versions 1-3) and their dot operands (wave32).

Version 1 = RDNA3 (gfx11), 2 = RDNA4 (gfx12), 3 = gfx1250.

Accumulator tile (non-transposed; transposed swaps M and N inside the tile):

* v1 16x16: registers -> M rows {2, 4, 8}, lanes 0-15 -> N, lane 16 -> M row 1;
* v2/v3 16x16: registers -> M {1, 2, 4}, lanes 0-15 -> N, lane 16 -> M + 8;
* v2/v3 32x16: registers -> M {1, 2, 4, 16}, lane 16 -> M + 8 (two 16x16 stacked).

The warp/repetition part is a ``CTA layout`` (register, warp -> dims) that Triton
stores in the attribute; :func:`choose_wmma_cta_linear_layout` builds the usual
one from ``warpsPerCTA`` and ``tilesPerWarp`` (for each dim, N first:
``tilesPerWarp[d]`` registers then ``warpsPerCTA[d]`` warps).

Dot operand: ``kWidth`` registers along K, 16 lanes along non-K, lane 16 along
K (v1: a copy, i.e. broadcast; v2/v3: K + kWidth), ``instrK / (2*kWidth)``
registers along K, x2 registers along non-K for the 32-row operand of 32x16
(A, or B when transposed);
then the CTA layout with its K component zeroed and the registers that become
pure broadcast removed.
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
    check_bool,
    check_pow2_list,
    check_warps_and_tiles,
    Tile,
    dot_operand_order,
    matrix_order,
)
from .dot_operand import DotOperand

__all__ = ["Wmma", "wmma_layout", "wmma_dot_operand", "choose_wmma_cta_linear_layout",
           "WMMA_WAVE_SIZE", "WMMA_INSTR_SHAPES"]

#: Lanes per wave for WMMA (wave32).
WMMA_WAVE_SIZE = 32
#: Valid ``(M, N, K)`` per version (Triton's ``AMDWmmaEncodingAttr::verify``).
WMMA_INSTR_SHAPES = {
    1: ((16, 16, 16),),
    2: ((16, 16, 16), (16, 16, 32)),
    3: ((16, 16, 4), (16, 16, 32), (16, 16, 64), (16, 16, 128), (32, 16, 64), (32, 16, 128)),
}
#: The kWidths Triton accepts for the dot operands of WMMA v1/v2 (v3: any power of two).
_K_WIDTHS = {1: (8, 16), 2: (4, 8, 16)}
#: Lanes a WMMA tile spreads along its non-K (or N) dim.
_TILE_LANES = 16


def _cta_tile(rank: int, warps_per_cta: Sequence[int], tiles_per_warp: Sequence[int]) -> Tile:
    tile = Tile(rank)
    for d in matrix_order(rank, row_major=True):
        tile.identity(tiles_per_warp[d], "register", d).identity(warps_per_cta[d], "warp", d)
    return tile.order_outs(range(rank))


def choose_wmma_cta_linear_layout(rank: int, warps_per_cta: Sequence[int], tiles_per_warp: Sequence[int]) -> LinearLayout:
    """Triton's ``chooseWmmaCTALinearLayout``: for each dim in order ``[rank-1, ..., 0]``,
    ``tiles_per_warp[d]`` register bits then ``warps_per_cta[d]`` warp bits along ``d``."""
    return _cta_tile(rank, warps_per_cta, tiles_per_warp).layout()


@dataclass(frozen=True)
class Wmma(EncodingBase):
    """``#ttg.amd_wmma<{version, ctaLayout, isTransposed, instrShape}>`` with the CTA layout
    given by ``warps_per_cta`` / ``tiles_per_warp`` (see :func:`choose_wmma_cta_linear_layout`)."""

    version: int
    warps_per_cta: tuple[int, ...]
    is_transposed: bool = False
    instr_shape: tuple[int, ...] = (16, 16, 16)
    tiles_per_warp: tuple[int, ...] | None = None
    cga: Cga = field(default_factory=Cga)

    _rank_source = "warps_per_cta"
    kind = "amd_wmma"

    def __post_init__(self) -> None:
        if isinstance(self.version, bool) or not isinstance(self.version, int) or self.version not in WMMA_INSTR_SHAPES:
            raise LayoutError(f"parameter version: {self.version!r} is not a WMMA version {sorted(WMMA_INSTR_SHAPES)}")
        instr = check_pow2_list("instrShape", self.instr_shape)
        if instr not in WMMA_INSTR_SHAPES[self.version]:
            raise LayoutError(
                f"parameter instrShape: {list(instr)} is not valid for WMMA v{self.version} "
                f"(valid: {[list(s) for s in WMMA_INSTR_SHAPES[self.version]]})"
            )
        warps, tpw = check_warps_and_tiles(self.warps_per_cta, self.tiles_per_warp)
        check_bool("isTransposed", self.is_transposed)
        self.cga.check_rank(len(warps))
        object.__setattr__(self, "instr_shape", instr)
        object.__setattr__(self, "warps_per_cta", warps)
        object.__setattr__(self, "tiles_per_warp", tpw)

    @classmethod
    def from_params(cls, params: Mapping, encoding: str = "amd_wmma") -> "Wmma":
        r = ParamReader(params, encoding)
        warps = r.get("warpsPerCTA")
        enc = cls(r.get("version"), warps, r.get("isTransposed", False), r.get("instrShape", (16, 16, 16)),
                  r.get("tilesPerWarp", None), r.cga(warps))
        r.done()
        return enc

    def to_params(self) -> dict:
        return {"version": self.version, "warpsPerCTA": list(self.warps_per_cta),
                "isTransposed": self.is_transposed, "instrShape": list(self.instr_shape),
                "tilesPerWarp": list(self.tiles_per_warp), **self.cga.to_params()}

    def cta_layout(self) -> LinearLayout:
        return choose_wmma_cta_linear_layout(self.rank, self.warps_per_cta, self.tiles_per_warp)

    def _tile(self) -> Tile:
        """One instruction's accumulator (register, lane), out dims in standard order."""
        rank = self.rank
        fast, slow = matrix_order(rank, row_major=not self.is_transposed)[:2]
        lanes = [[1, 0], [2, 0], [4, 0], [8, 0]]  # [along fast, along slow]
        if self.version == 1:
            regs, lanes = [[0, 2], [0, 4], [0, 8]], lanes + [[0, 1]]
        else:
            regs, lanes = [[0, 1], [0, 2], [0, 4]], lanes + [[0, 8]]
            if self.instr_shape[:2] == (32, 16):
                regs = regs + [[0, 16]]
        tile = Tile(rank)
        for in_dim, pairs in (("register", regs), ("lane", lanes)):
            bases = tile.bases[in_dim] = []
            for along_fast, along_slow in pairs:
                basis = [0] * rank
                basis[fast], basis[slow] = along_fast, along_slow
                bases.append(basis)
        tile.log2[fast] = _TILE_LANES.bit_length() - 1
        tile.log2[slow] = max(b[slow] for b in tile.bases["register"] + tile.bases["lane"]).bit_length()
        return tile.order_outs(range(rank))

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        """The accumulator layout over ``shape`` (in dims register, lane, warp, block)."""
        shape = self.check_layout_shape(shape)
        tile = self._tile().multiply(_cta_tile(self.rank, self.warps_per_cta, self.tiles_per_warp))
        return tile.order_outs(matrix_order(self.rank, row_major=True)).combine(self.cga, shape)

    def dot_operand_layout(self, op_idx: int, k_width: int, shape: Sequence[int]) -> LinearLayout:
        """Operand A (``op_idx=0``) or B (``op_idx=1``) of this WMMA with ``k_width`` K elements per lane."""
        shape = self.check_layout_shape(shape)
        if isinstance(k_width, bool) or not isinstance(k_width, int) or k_width < 1 or k_width & (k_width - 1):
            raise LayoutError(f"parameter kWidth: {k_width!r} is not a power of two")
        if k_width not in _K_WIDTHS.get(self.version, (k_width,)):
            raise LayoutError(f"parameter kWidth: {k_width} is not one of {list(_K_WIDTHS[self.version])} "
                              f"(WMMA v{self.version} operands)")
        rank = self.rank
        order = dot_operand_order(op_idx, rank, k_contig=True)
        dim_k, dim_nonk = order[0], order[1]
        instr_k = self.instr_shape[2]
        # A is M x K and B is K x N; a transposed WMMA swaps M and N (A: N x K, B: K x M).
        nonk = self.instr_shape[(op_idx + self.is_transposed) % 2]
        k_depth = WMMA_WAVE_SIZE // _TILE_LANES
        tile = Tile(rank).identity(k_width, "register", dim_k).identity(_TILE_LANES, "lane", dim_nonk)
        (tile.zeros if self.version == 1 else tile.identity)(k_depth, "lane", dim_k)
        k_repeat = instr_k // (k_depth * k_width)
        if k_repeat > 1:
            tile.identity(k_repeat, "register", dim_k)
        if nonk > _TILE_LANES:
            tile.identity(nonk // _TILE_LANES, "register", dim_nonk)
        # the CTA layout with K projected away; registers left pointing nowhere are dropped
        cta = _cta_tile(rank, self.warps_per_cta, self.tiles_per_warp)
        for bases in cta.bases.values():
            for b in bases:
                b[dim_k] = 0
        cta.bases["register"] = [b for b in cta.bases["register"] if any(b)]
        cta.log2[dim_k] = 0
        return tile.multiply(cta).order_outs(order).combine(self.cga.operand(dim_k), shape)


def wmma_layout(
    version: int,
    warps_per_cta: Sequence[int],
    shape: Sequence[int],
    *,
    instr_shape: Sequence[int] = (16, 16, 16),
    is_transposed: bool = False,
    tiles_per_warp: Sequence[int] | None = None,
) -> LinearLayout:
    """The accumulator layout of Triton's WMMA encoding, e.g. ``wmma_layout(2, (2, 2), (32, 32))``."""
    return Wmma(version, warps_per_cta, is_transposed, instr_shape, tiles_per_warp).to_linear_layout(shape)


def wmma_dot_operand(parent: Wmma, op_idx: int, k_width: int, shape: Sequence[int]) -> LinearLayout:
    """Operand ``op_idx`` (0 = A, 1 = B) of the WMMA encoding ``parent``."""
    if not isinstance(parent, Wmma):
        raise LayoutError(f"parameter parent: expected a Wmma encoding, got {type(parent).__name__}")
    return DotOperand(parent, op_idx, k_width).to_linear_layout(shape)
