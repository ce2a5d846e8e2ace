"""MFMA broadcast modifiers (CBSZ/ABID for A, BLGP for B) as GF(2)-affine lane maps.

CDNA4-ISA 7.1.6: after the lane ``l`` that holds an A (B) value under the normal
layout is found, the matrix core reads it from lane ``p(l)``:

* CBSZ/ABID (A): ``S = 64 >> CBSZ``; ``p(l) = l % S + S * ABID``;
* BLGP (B): 0 ``l``; 1 ``l % 32``; 2 ``l % 32 + 32``; 3 ``(l + 16) % 64``; 4-7 ``l % 16 + 16 * (BLGP - 4)``.

Every one of these is affine over GF(2): ``p(l) = P l XOR c``.  Masks and constant
offsets are clear; for BLGP 3, adding 16 modulo 64 flips lane bit 4 and adds the carry
into bit 5, so ``P`` sends bit 4 to bits 4 and 5 and ``c = 16``.
``source_map`` composes ``p`` with the inverse of the operand layout: for every
operand coordinate it gives the (register, lane) actually read.
"""

from __future__ import annotations

from ..errors import LayoutError
from ..layout import LinearLayout
from .mfma import MfmaInstruction, mfma_layouts
from .mfma_layout import WAVE64

__all__ = ["cbsz_abid_lane_map", "blgp_lane_map", "source_map"]

_LANE_BITS = 6


def _lane_map(images: list, offset: int) -> tuple:
    """(lane -> lane LinearLayout whose bit t maps to ``images[t]``, XOR offset)."""
    return LinearLayout({"lane": [[v] for v in images]}, [("lane", WAVE64)]), offset


def cbsz_abid_lane_map(cbsz: int, abid: int) -> tuple:
    """``(P, c)`` with ``P(l) ^ c == l % S + S * abid``, ``S = 64 >> cbsz`` [Q CDNA4-ISA 7.1.6.1]."""
    if not isinstance(cbsz, int) or not 0 <= cbsz <= 4:
        raise LayoutError(f"CBSZ must be an integer in 0..4, got {cbsz!r}")
    if not isinstance(abid, int) or not 0 <= abid < (1 << cbsz):
        raise LayoutError(f"ABID must be an integer in 0..{(1 << cbsz) - 1} for CBSZ {cbsz}, got {abid!r}")
    keep = _LANE_BITS - cbsz
    s = 1 << keep
    return _lane_map([1 << t if t < keep else 0 for t in range(_LANE_BITS)], s * abid)


def blgp_lane_map(blgp: int) -> tuple:
    """``(P, c)`` reproducing Table 29 of the CDNA4 ISA for BLGP 0..7."""
    if not isinstance(blgp, int) or not 0 <= blgp <= 7:
        raise LayoutError(f"BLGP must be an integer in 0..7, got {blgp!r}")
    ident = [1 << t for t in range(_LANE_BITS)]
    if blgp == 0:
        return _lane_map(ident, 0)
    if blgp in (1, 2):
        return _lane_map(ident[:5] + [0], 32 * (blgp - 1))
    if blgp == 3:  # +16 mod 64: bit 4 flips (offset 16) and carries into bit 5
        return _lane_map(ident[:4] + [16 | 32, 32], 16)
    return _lane_map(ident[:4] + [0, 0], 16 * (blgp - 4))


def source_map(ins: MfmaInstruction, operand: str, cbsz: int = 0, abid: int = 0, blgp: int = 0) -> tuple:
    """``(R, c)``: operand coordinate -> (register, lane read), the lane XORed with ``c``.

    ``R`` has in dims ``[block,] dim0, dim1`` and out dims ``register``, ``lane``.  With all
    modifiers 0 it is the inverse of the operand layout and ``c == 0``.
    """
    if operand not in ("A", "B"):
        raise LayoutError(f"broadcast modifiers act on operand A (CBSZ/ABID) or B (BLGP), got {operand!r}")
    if operand == "A":
        lane_map, offset = cbsz_abid_lane_map(cbsz, abid)
        if (cbsz or abid) and not ins.supports_cbsz_abid:
            raise LayoutError(f"{ins.name} on {ins.arch} does not support CBSZ/ABID")
        if (1 << cbsz) > ins.blocks:
            raise LayoutError(f"CBSZ {cbsz} broadcasts 2^{cbsz} blocks but {ins.name} has {ins.blocks}")
    else:
        lane_map, offset = blgp_lane_map(blgp)
        if blgp and not ins.supports_blgp:
            raise LayoutError(f"{ins.name} on {ins.arch} does not support BLGP lane permutation")
    layout = mfma_layouts(ins)[operand]
    regs = layout.in_dim_size("register")
    to_slot = layout.invert()
    permute = LinearLayout.identity_1d(regs, "register", "register") * lane_map
    return to_slot.compose(permute), offset
