"""Fixed LDS layout conventions, as shared layouts ``offset -> tensor``, for comparison.

* :func:`unswizzled`: the plain layout, ``order[0]`` fastest.
* :func:`triton_mfma_operand_shared`: Triton's AMD choice for an MFMA operand tile
  (``composeSharedLayoutForOperand``, docs/triton_facts.md 2.5): ``swizzled_shared(vec =
  kWidth, perPhase = max(1, banks*32/bits / inner), maxPhase = max(1, min(16/perPhase,
  inner/vec)))``, no swizzle when K is not the contiguous dim (except gfx950 8/16-bit data,
  read with ``ds_read_*_tr``, where the same formula is applied along the contiguous dim).
* :func:`xor_333`: CUTLASS-style ``Swizzle<3,4,3>`` in bytes: the 16-byte chunk index (3 bits)
  XOR the 128-byte line index (low 3 bits) of the plain layout's byte offset.
* :func:`ck_xor16`: CK-Tile's XOR pre-shuffle: K is split into 16-byte packs ``K0``; a line
  of ``max(row, 128 B)`` holds ``MLdsLayer`` rows and ``K0' = K0 ^ (line mod packs per line)``.
* :func:`triton_convert_shared`: Triton's ``optimalSwizzlingLdSt`` with the AMD ``laneAddr``
  tile for 128-bit loads (the layout its ``convert_layout`` LDS path would use).

All are linear maps; each XOR swizzle is ``S(2**i) = P(2**i) ^ P(2**(i - s))`` on the plain
layout ``P`` for the swizzled offset bits ``i``.
"""

from __future__ import annotations

from typing import Sequence

from linlayout import LayoutError, LinearLayout
from linlayout.encodings import swizzled_shared
from linlayout.hw.lds import lds_model

from .triton_swizzle import TRITON_B128_LANE_ADDR, as_offset_layout, optimal_swizzling_ldst

__all__ = ["ck_xor16", "triton_convert_shared", "triton_mfma_operand_shared", "unswizzled", "xor_333"]


def _log2(x: int) -> int:
    return x.bit_length() - 1


def unswizzled(shape: Sequence[int], order: Sequence[int]) -> LinearLayout:
    return swizzled_shared(1, 1, 1, order, shape)


def triton_mfma_operand_shared(shape: Sequence[int], order: Sequence[int], k_dim: int, k_width: int,
                               element_bits: int, arch: str) -> LinearLayout:
    """Triton's AMD shared layout for an MFMA operand whose global order is ``order``."""
    model = lds_model(arch)
    inner = shape[order[0]]
    if order[0] != k_dim and not (model.arch == "gfx950" and element_bits in (8, 16)):
        return unswizzled(shape, order)
    per_phase = max(1, (model.num_banks * 32 // element_bits) // inner)
    max_phase = max(min(16 // per_phase, inner // k_width), 1)
    return swizzled_shared(k_width, per_phase, max_phase, order, shape)


def _xor_swizzle(shape: Sequence[int], order: Sequence[int], pairs: list[tuple[int, int]]) -> LinearLayout:
    """Plain layout with offset bit ``i`` also moving plain bit ``j`` for each ``(i, j)``."""
    plain = unswizzled(shape, order)
    bases = plain.bases["offset"]
    n = len(bases)
    out = [list(b) for b in bases]
    for i, j in pairs:
        if i < n and 0 <= j < n:
            out[i] = [a ^ b for a, b in zip(bases[i], bases[j])]
    return LinearLayout({"offset": out}, plain.out_dims)


def xor_333(shape: Sequence[int], order: Sequence[int], element_bits: int) -> LinearLayout:
    """Byte-level ``Swizzle<3,4,3>``: 16-byte chunk index ^= 128-byte line index (mod 8)."""
    if element_bits > 128 or 128 % element_bits:
        raise LayoutError(f"xor_333: {element_bits}-bit elements do not divide 16 bytes")
    c = _log2(128 // element_bits)  # offset bit of the 16-byte chunk
    return _xor_swizzle(shape, order, [(c + 3 + k, c + k) for k in range(3)])


def ck_xor16(shape: Sequence[int], order: Sequence[int], element_bits: int) -> LinearLayout:
    """CK-Tile XOR pre-shuffle with 16-byte packs (``KPack``) and 128-byte lines."""
    if element_bits > 128 or 128 % element_bits:
        raise LayoutError(f"ck_xor16: {element_bits}-bit elements do not divide 16 bytes")
    c = _log2(128 // element_bits)
    line = _log2(max(shape[order[0]], 1024 // element_bits))
    packs = line - c
    return _xor_swizzle(shape, order, [(line + k, c + k) for k in range(packs)])


def triton_convert_shared(writer: LinearLayout, reader: LinearLayout, element_bits: int, arch: str) -> LinearLayout:
    """The shared layout of Triton's LDS ``convert_layout`` path on ``arch`` (as ``offset -> tensor``)."""
    model = lds_model(arch)
    probe = optimal_swizzling_ldst(writer, reader, element_bits, model.num_banks)
    dst_tile = ()
    if probe.in_dim_size("vector") * element_bits == 128:
        dst_tile = TRITON_B128_LANE_ADDR[model.num_banks]
    smem = optimal_swizzling_ldst(writer, reader, element_bits, model.num_banks, dst_lane_addr=dst_tile)
    return as_offset_layout(smem)
