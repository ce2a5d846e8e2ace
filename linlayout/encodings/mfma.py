"""Triton's AMD MFMA layouts (``#ttg.amd_mfma``) and their dot operands (wave64).

These are Triton's *encodings* (how Triton tiles MFMA instructions over a
tensor and over waves), not the ISA register maps of single instructions
(those are in ``linlayout.hw.mfma``).

Accumulator (C/D) of an ``M x N`` instruction, ``height = 4`` (1 for 64-bit
elements), ``tiles = M*N / (64*height)``; non-transposed:

* registers ``0..log2(height)`` go along M (4 consecutive rows per lane);
* lanes ``0..log2(N)`` go along N, the remaining lanes along M (stride ``height``);
* ``log2(tiles)`` more registers go along M.

Transposed swaps the roles of M and N inside the instruction tile.  Then:
``tilesPerWarp[N]`` registers along N, ``warpsPerCTA[N]`` warps along N,
registers along N up to the tensor's N extent, ``tilesPerWarp[M]`` registers
along M, ``warpsPerCTA[M]`` warps along M (batch warps last), and the CTA/CGA
combine tiles or folds the result onto the tensor shape (M registers last).

Dot operand ``opIdx`` (0 = A ``[M, K]``, 1 = B ``[K, N]``), non-K extent
``nonK = M`` (A) or ``N`` (B): ``kWidth`` registers along K, ``nonK`` lanes
along non-K, the other ``64/nonK`` lanes along K, K repeated in registers up
to the tensor's K, ``tilesPerWarp[nonK]`` registers along non-K, then warps
as in the accumulator (warps that the accumulator spreads along the other
operand's dim land on K and are broadcast).  It does not depend on
``isTransposed``.
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
    check_bool,
    check_pow2,
    check_pow2_list,
    check_warps_and_tiles,
    matrix_order,
)
from .dot_operand import DotOperand

__all__ = ["Mfma", "mfma_layout", "mfma_dot_operand", "MFMA_WAVE_SIZE", "MFMA_TILE_SHAPES"]

#: Lanes per wave on CDNA (MFMA is wave64 only).
MFMA_WAVE_SIZE = 64
#: ``(M, N)`` of the instruction tiles Triton's MFMA encoding accepts.
MFMA_TILE_SHAPES = ((32, 32), (16, 16), (64, 4), (4, 64))
#: Triton's MFMA versions: 1 = gfx908, 2 = gfx90a, 3 = gfx942, 4 = gfx950.
MFMA_VERSIONS = (1, 2, 3, 4)


@dataclass(frozen=True)
class Mfma(EncodingBase):
    """``#ttg.amd_mfma<{version, warpsPerCTA, instrShape, isTransposed, tilesPerWarp, elementBitWidth}>``.

    ``instr_shape`` is ``(M, N, K)`` of the MFMA instruction; ``warps_per_cta`` and
    ``tiles_per_warp`` have one entry per tensor dim (``[M, N]`` or ``[B, M, N]``).
    """

    version: int
    instr_shape: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    is_transposed: bool = False
    tiles_per_warp: tuple[int, ...] | None = None
    element_bits: int = 32
    cga: Cga = field(default_factory=Cga)

    _rank_source = "warps_per_cta"
    kind = "amd_mfma"

    def __post_init__(self) -> None:
        if self.version not in MFMA_VERSIONS or isinstance(self.version, bool):
            raise LayoutError(f"parameter version: {self.version!r} is not an MFMA version {list(MFMA_VERSIONS)}")
        instr = check_pow2_list("instrShape", self.instr_shape)
        if len(instr) != 3:
            raise LayoutError(f"parameter instrShape: {list(instr)} must be [M, N, K]")
        if instr[:2] not in MFMA_TILE_SHAPES:
            raise LayoutError(
                f"parameter instrShape: {instr[0]}x{instr[1]} is not an MFMA tile "
                f"({', '.join(f'{m}x{n}' for m, n in MFMA_TILE_SHAPES)})"
            )
        warps, tpw = check_warps_and_tiles(self.warps_per_cta, self.tiles_per_warp)
        transposed = check_bool("isTransposed", self.is_transposed)
        if instr[:2] == (64, 4) and not transposed:
            raise LayoutError("parameter isTransposed: a 64x4 MFMA layout must be transposed")
        check_pow2("elementBitWidth", self.element_bits)
        if self.element_bits > 64:
            raise LayoutError(f"parameter elementBitWidth: {self.element_bits} exceeds 64")
        self.cga.check_rank(len(warps))
        object.__setattr__(self, "instr_shape", instr)
        object.__setattr__(self, "warps_per_cta", warps)
        object.__setattr__(self, "tiles_per_warp", tpw)

    @classmethod
    def from_params(cls, params: Mapping, encoding: str = "amd_mfma") -> "Mfma":
        r = ParamReader(params, encoding)
        warps = r.get("warpsPerCTA")
        enc = cls(r.get("version"), r.get("instrShape"), warps, r.get("isTransposed", False),
                  r.get("tilesPerWarp", None), r.get("elementBitWidth", 32),
                  r.cga(warps))
        r.done()
        return enc

    def to_params(self) -> dict:
        return {"version": self.version, "warpsPerCTA": list(self.warps_per_cta),
                "instrShape": list(self.instr_shape), "isTransposed": self.is_transposed,
                "tilesPerWarp": list(self.tiles_per_warp), "elementBitWidth": self.element_bits,
                **self.cga.to_params()}

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        """The accumulator layout over ``shape`` (in dims register, lane, warp, block)."""
        shape = self.check_layout_shape(shape)
        rank = self.rank
        dim_m, dim_n = rank - 2, rank - 1
        m, n = self.instr_shape[:2]
        height = 1 if self.element_bits == 64 else 4
        tiles = (m * n) // (MFMA_WAVE_SIZE * height)
        # Inside one instruction tile, ``along`` holds the registers, ``across`` the first lanes.
        along, across, lanes_first = (dim_n, dim_m, m) if self.is_transposed else (dim_m, dim_n, n)
        tile = (Tile(rank).identity(height, "register", along).identity(lanes_first, "lane", across)
                .identity(MFMA_WAVE_SIZE // lanes_first, "lane", along))
        if tiles > 0:
            tile.identity(tiles, "register", along)
        tile.order_outs([dim_n, dim_m])
        tpw, warps = self.tiles_per_warp, self.warps_per_cta
        tile.identity(tpw[dim_n], "register", dim_n).identity(warps[dim_n], "warp", dim_n)
        n_reps = shape[dim_n] // (n * warps[dim_n] * tpw[dim_n])
        if n_reps > 1:
            tile.identity(n_reps, "register", dim_n)
        tile.identity(tpw[dim_m], "register", dim_m).identity(warps[dim_m], "warp", dim_m)
        if rank == 3:
            tile.identity(1, "register", 0).identity(1, "lane", 0).identity(warps[0], "warp", 0)
        return tile.combine(self.cga, shape)

    def dot_operand_layout(self, op_idx: int, k_width: int, shape: Sequence[int]) -> LinearLayout:
        """Operand A (``op_idx=0``, ``[M, K]``) or B (``op_idx=1``, ``[K, N]``) of this MFMA."""
        shape = self.check_layout_shape(shape)
        check_pow2("kWidth", k_width)
        rank = self.rank
        dim_k, dim_nonk = (rank - 1, rank - 2) if op_idx == 0 else (rank - 2, rank - 1)
        m, n = self.instr_shape[:2]
        nonk = m if op_idx == 0 else n
        tile = (Tile(rank).identity(k_width, "register", dim_k).identity(nonk, "lane", dim_nonk)
                .identity(MFMA_WAVE_SIZE // nonk, "lane", dim_k))
        k_tile = MFMA_WAVE_SIZE // nonk * k_width
        if ((m, n) == (64, 4) and op_idx == 0) or ((m, n) == (4, 64) and op_idx == 1):
            tile.identity(16, "register", dim_k)
            k_tile *= 16
        if shape[dim_k] > k_tile:
            tile.identity(shape[dim_k] // k_tile, "register", dim_k)
        tile.identity(self.tiles_per_warp[dim_nonk], "register", dim_nonk).order_outs([dim_k, dim_nonk])
        if rank == 3:
            tile.identity(1, "register", 0).identity(1, "lane", 0)
        tile.identity_nd("warp", self.warps_per_cta, matrix_order(rank, row_major=True))
        return tile.combine(self.cga, shape)


def mfma_layout(
    version: int,
    instr_shape: Sequence[int],
    warps_per_cta: Sequence[int],
    shape: Sequence[int],
    *,
    is_transposed: bool = False,
    tiles_per_warp: Sequence[int] | None = None,
    element_bits: int = 32,
) -> LinearLayout:
    """The accumulator layout of Triton's MFMA encoding, e.g.
    ``mfma_layout(3, (32, 32, 8), (2, 2), (64, 64))``."""
    return Mfma(version, instr_shape, warps_per_cta, is_transposed, tiles_per_warp, element_bits).to_linear_layout(shape)


def mfma_dot_operand(parent: Mfma, op_idx: int, k_width: int, shape: Sequence[int]) -> LinearLayout:
    """Operand ``op_idx`` (0 = A, 1 = B) of the MFMA encoding ``parent`` with ``k_width``
    consecutive K elements per lane."""
    if not isinstance(parent, Mfma):
        raise LayoutError(f"parameter parent: expected an Mfma encoding, got {type(parent).__name__}")
    return DotOperand(parent, op_idx, k_width).to_linear_layout(shape)
