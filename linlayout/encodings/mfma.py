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
    check_bool,
    check_pow2,
    check_pow2_list,
    check_warps_and_tiles,
    combine_cta_cga_with_shape,
    identity_standard_nd,
    matrix_order,
    standard_out_dims,
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
        m_idx, n_idx = rank - 2, rank - 1
        names = standard_out_dims(rank)
        dim_m, dim_n = names[m_idx], names[n_idx]
        m, n = self.instr_shape[:2]
        height = 1 if self.element_bits == 64 else 4
        tiles = (m * n) // (MFMA_WAVE_SIZE * height)
        ident = LinearLayout.identity_1d
        # Inside one instruction tile, ``along`` holds the registers, ``across`` the first lanes.
        along, across, lanes_first = (dim_n, dim_m, m) if self.is_transposed else (dim_m, dim_n, n)
        tile = (ident(height, "register", along) * ident(lanes_first, "lane", across)
                * ident(MFMA_WAVE_SIZE // lanes_first, "lane", along))
        if tiles > 0:
            tile = tile * ident(tiles, "register", along)
        tile = _ordered(tile, [dim_n, dim_m])
        tpw, warps = self.tiles_per_warp, self.warps_per_cta
        tile = tile * ident(tpw[n_idx], "register", dim_n) * ident(warps[n_idx], "warp", dim_n)
        n_reps = shape[n_idx] // (n * warps[n_idx] * tpw[n_idx])
        if n_reps > 1:
            tile = tile * ident(n_reps, "register", dim_n)
        tile = tile * ident(tpw[m_idx], "register", dim_m) * ident(warps[m_idx], "warp", dim_m)
        if rank == 3:
            tile = (tile * ident(1, "register", names[0]) * ident(1, "lane", names[0])
                    * ident(warps[0], "warp", names[0]))
        return combine_cta_cga_with_shape(tile, self.cga, shape)

    def dot_operand_layout(self, op_idx: int, k_width: int, shape: Sequence[int]) -> LinearLayout:
        """Operand A (``op_idx=0``, ``[M, K]``) or B (``op_idx=1``, ``[K, N]``) of this MFMA."""
        shape = self.check_layout_shape(shape)
        check_pow2("kWidth", k_width)
        rank = self.rank
        names = standard_out_dims(rank)
        k_idx, nonk_idx = (rank - 1, rank - 2) if op_idx == 0 else (rank - 2, rank - 1)
        dim_k, dim_nonk = names[k_idx], names[nonk_idx]
        m, n = self.instr_shape[:2]
        nonk = m if op_idx == 0 else n
        ident = LinearLayout.identity_1d
        tile = (ident(k_width, "register", dim_k) * ident(nonk, "lane", dim_nonk)
                * ident(MFMA_WAVE_SIZE // nonk, "lane", dim_k))
        k_tile = MFMA_WAVE_SIZE // nonk * k_width
        if ((m, n) == (64, 4) and op_idx == 0) or ((m, n) == (4, 64) and op_idx == 1):
            tile = tile * ident(16, "register", dim_k)
            k_tile *= 16
        if shape[k_idx] > k_tile:
            tile = tile * ident(shape[k_idx] // k_tile, "register", dim_k)
        tile = tile * ident(self.tiles_per_warp[nonk_idx], "register", dim_nonk)
        tile = _ordered(tile, [dim_k, dim_nonk])
        if rank == 3:
            tile = tile * ident(1, "register", names[0]) * ident(1, "lane", names[0])
        warps = identity_standard_nd("warp", self.warps_per_cta, matrix_order(rank, row_major=True))
        cta = tile * warps
        return combine_cta_cga_with_shape(cta, self.cga, shape).transpose_outs(names)


def _ordered(layout: LinearLayout, outs: list[str]) -> LinearLayout:
    """``layout`` with out dims ``outs`` (missing ones added with size 1), in that order."""
    for o in outs:
        if not layout.has_out_dim(o):
            layout = layout * LinearLayout.identity_1d(1, layout.in_dim_names[0], o)
    return layout.transpose_outs(outs)


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
