"""LDS bank checks in FlyDSL terms: a tiled copy against its shared-memory layout.

``check_copy(tiled_copy, smem_layout, arch=...)`` reads the copy's thread-value layout
(``layout_of``: ``register, lane, warp -> dim0, dim1`` over its tile ``tile_mn``) and the
shared layout (``offset -> dim0, dim1``), and repeats the copy's tile over the whole
shared tensor as FlyDSL's partition does (``(CPY, CPY_M, CPY_K)``: more register bits, tile
dim 0 first).  The copy atom fixes the LDS instruction: a ``universal_copy<BITS>`` of
``E``-bit elements is ``ds_read_b{BITS}`` (``ds_read_u8/u16`` below 32 bits) or
``ds_write_b{BITS}``, ``BITS / E`` elements per lane.  ``linlayout.synth.lds_access`` then
counts the cycles of every instruction against the ideal (``linlayout.synth.banks``), and
a search over CuTe's swizzles ``S<B,M,S>`` (``B`` in ``SWIZZLE_BITS``) of the unswizzled
layout finds the one with the fewest cycles for the copy, then for its other side: a FlyDSL
composed layout the kernel can use as it is.  (``linlayout.synth.swizzle.synthesize`` may
choose other instructions and element orders than the copy atom fixes, so it is not used
here.)

The other side: the copy that fills (for a read) or drains (for a write) the shared tile.
By default it moves 16 bytes per lane in the memory order of the shared layout without its
swizzle (offset bits: the elements of one lane, then lanes, then the copy's waves, then
more elements of each lane): a global <-> LDS copy of a tile stored in that order.
``other=`` gives it explicitly (a FlyDSL tiled copy or a ``register, lane, warp -> dim0,
dim1`` layout).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Union

from flydsl.expr import typing as fxt

from linlayout.errors import LayoutError
from linlayout.cute import Swizzle, swizzle_layout
from linlayout.flydsl_text import cute_text, from_flydsl, to_flydsl_text
from linlayout.hw.lds import lds_model
from linlayout.layout import LinearLayout
from linlayout.synth.lds_access import TileAccessReport, tile_access_report

from .layouts import COPY_SIDES, layout_of, to_flydsl

__all__ = ["CopyCheck", "OTHER_SIDE_BYTES", "SWIZZLE_BITS", "check_copy", "copy_bits", "lds_op"]

#: Bytes per lane of the default other side of the copy (module docstring).
OTHER_SIDE_BYTES = 16

_COPY_TYPE = re.compile(r"copy_atom<!fly\.universal_copy<(\d+)>,\s*(\d+)>")
_SIDE = {"read": "src", "write": "dst"}
_OTHER = {"read": "write", "write": "read"}
#: Swizzle widths ``B`` the search tries (``S<B,M,S>``: 2**B rows of XOR patterns).
SWIZZLE_BITS = (1, 2, 3)
assert set(_SIDE.values()) == set(COPY_SIDES)


@dataclass
class CopyCheck:
    """The bank analysis of one FlyDSL tiled copy against its shared layout.

    ``op``: the LDS instruction; ``instructions``: how many each wave issues for the whole
    shared tile; ``cycles``: each one's bank cycles; ``ideal_cycles``: the conflict-free
    cycles of one; ``reason``: why (linlayout's explanation: lanes that collide, bank bits).
    ``swizzle``: FlyDSL composed-layout text ``S<B,M,S> o 0 o LAYOUT`` of the best swizzle
    of the unswizzled layout (``swizzled``, the shared layout it makes); ``swizzle_cycles``:
    the copy's cycles per instruction against it; ``other_op`` / ``other_cycles``: the other
    side's instruction and cycles against it.  ``report``: the full ``TileAccessReport``.
    """

    arch: str
    direction: str
    op: str
    element_bits: int
    instructions: int
    cycles: list[int]
    ideal_cycles: int
    reason: str
    swizzle: str
    swizzled: LinearLayout
    swizzle_cycles: list[int]
    other_op: str
    other_cycles: list[int]
    report: TileAccessReport

    @property
    def conflict_free(self) -> bool:
        return all(c == self.ideal_cycles for c in self.cycles)

    def swizzle_layout(self):
        """The chosen swizzled layout as a live FlyDSL composed layout, built at the current MLIR
        insertion point (``linlayout.flydsl.to_flydsl``)."""
        return to_flydsl(self.swizzled)

    def to_json(self) -> dict:
        return {"arch": self.arch, "direction": self.direction, "op": self.op, "element_bits": self.element_bits,
                "instructions": self.instructions, "cycles": list(self.cycles), "ideal_cycles": self.ideal_cycles,
                "conflict_free": self.conflict_free, "reason": self.reason, "swizzle": self.swizzle,
                "swizzle_cycles": list(self.swizzle_cycles), "other_op": self.other_op,
                "other_cycles": list(self.other_cycles)}


def check_copy(tiled_copy, smem_layout, *, arch: str, direction: str = "read",
               other: Union[None, LinearLayout, "fxt.TiledCopy"] = None) -> CopyCheck:
    """LDS cycles vs ideal of ``tiled_copy`` reading (``direction="read"``: its source side) or
    writing (``"write"``: its destination side) ``smem_layout`` on ``arch``, with the reason and
    the best swizzle (module docstring).

    ``smem_layout``: a FlyDSL tensor, layout or composed layout, FlyDSL layout text (read as a
    memory layout), or a shared ``LinearLayout`` (``offset -> dim0, dim1``, taken as unswizzled).
    """
    if direction not in _SIDE:
        raise LayoutError(f"direction {direction!r} must be 'read' or 'write'")
    model = lds_model(arch)
    bits, element_bits = copy_bits(tiled_copy)
    op = lds_op(bits, direction)
    shared = _shared(smem_layout)
    copy = _over_tile(layout_of(tiled_copy, _SIDE[direction]), shared)
    report = tile_access_report(shared, copy, element_bits, model, direction, ops=[op])
    plain = _unswizzled(smem_layout)
    if other is None:
        other_side = _memory_order_copy(plain, copy, element_bits, model.wave_size)
    elif isinstance(other, fxt.TiledCopy):
        other_side = _over_tile(layout_of(other, _SIDE[_OTHER[direction]]), shared)
    else:
        other_side = other
    swizzled, mine, theirs = _best_swizzle(plain, copy, other_side, element_bits, model, direction, op)
    choice = report.choice
    return CopyCheck(model.arch, direction, op, element_bits, choice.count, list(choice.cycles), choice.min_cycles,
                     choice.report.explanation, to_flydsl_text(swizzled), swizzled, list(mine.choice.cycles),
                     theirs.choice.op, list(theirs.choice.cycles), report)


def copy_bits(tiled_copy) -> tuple[int, int]:
    """``(bits per lane per copy, element bits)`` of a tiled copy of a universal copy atom."""
    if not isinstance(tiled_copy, fxt.TiledCopy):
        raise LayoutError(f"expected a FlyDSL tiled copy, got {type(tiled_copy).__name__}")
    text = str(tiled_copy.type)
    m = _COPY_TYPE.search(text)
    if m is None:
        raise LayoutError(f"FlyDSL copy {text[:80]} is not a universal_copy<BITS> atom (an LDS copy)")
    return int(m.group(1)), int(m.group(2))


def lds_op(bits: int, direction: str) -> str:
    """The LDS instruction moving ``bits`` per lane: ``ds_read_b{bits}`` (``ds_read_u8/u16``) or
    ``ds_write_b{bits}``."""
    if bits not in (8, 16, 32, 64, 96, 128):
        raise LayoutError(f"no LDS instruction moves {bits} bits per lane")
    if direction == "read" and bits < 32:
        return f"ds_read_u{bits}"
    return f"ds_{direction}_b{bits}"


# ------------------------------------------------------------------ internals
def _shared(smem_layout) -> LinearLayout:
    if isinstance(smem_layout, LinearLayout):
        return smem_layout
    return layout_of(smem_layout, "smem")


def _over_tile(copy: LinearLayout, shared: LinearLayout) -> LinearLayout:
    """The copy repeated over the shared tensor: one register bit per doubling, dim0 first."""
    if sorted(copy.out_dim_names) != sorted(shared.out_dim_names):
        raise LayoutError(f"the copy's tile dims {copy.out_dim_names} are not the shared tensor's "
                          f"{shared.out_dim_names}")
    out = copy
    for dim in shared.out_dim_names:
        tile, whole = copy.out_dim_size(dim), shared.out_dim_size(dim)
        if whole < tile:
            raise LayoutError(f"the copy's tile ({dim} {tile}) is larger than the shared tensor ({dim} {whole})")
        if whole > tile:
            out = out * LinearLayout.identity_1d(whole // tile, "register", dim)
    return out.transpose_outs(shared.out_dim_names)


def _best_swizzle(plain: LinearLayout, copy: LinearLayout, other: LinearLayout, element_bits: int, model,
                  direction: str, op: str):
    """``(shared layout, copy's report, other side's report)`` of the swizzle minimising the copy's
    cycles, then the other side's instructions and cycles, then ``B`` (the identity first)."""
    n = plain.in_dim_size_log2("offset")
    candidates = [Swizzle(0, 0, 0)] + [Swizzle(b, m, s) for b in SWIZZLE_BITS for m in range(n)
                                       for s in range(b, n - m - b + 1)]
    best = None
    for sw in candidates:
        shared = swizzle_layout(sw, n).compose(plain)
        try:
            mine = tile_access_report(shared, copy, element_bits, model, direction, ops=[op])
            theirs = tile_access_report(shared, other, element_bits, model, _OTHER[direction])
        except LayoutError:
            continue  # the swizzle splits a lane's vector: that instruction is not legal
        key = (mine.total_cycles, theirs.choice.count, theirs.total_cycles, sw.bits)
        if best is None or key < best[0]:
            best = (key, sw, shared, mine, theirs)
    if best is None:
        raise LayoutError(f"no S<B,M,S> swizzle of the shared layout lets {op} move the copy's vectors")
    return best[2:]


def _memory_order_copy(plain: LinearLayout, copy: LinearLayout, element_bits: int, wave_size: int) -> LinearLayout:
    """The default other side: offsets of the unswizzled layout in order, ``OTHER_SIDE_BYTES`` a lane."""
    offset_bits = plain.in_dim_size_log2("offset")
    low = min((OTHER_SIDE_BYTES * 8 // element_bits).bit_length() - 1, offset_bits)
    lane_bits = min(wave_size.bit_length() - 1, offset_bits - low)
    warp_bits = min(copy.in_dim_size_log2("warp") if copy.has_in_dim("warp") else 0, offset_bits - low - lane_bits)
    rest = offset_bits - low - lane_bits - warp_bits
    if 1 << lane_bits < wave_size:
        raise LayoutError(f"the shared tensor ({1 << offset_bits} elements) is smaller than one wave's "
                          f"{OTHER_SIDE_BYTES}-byte copy")
    order = plain.reshape_ins([("register", 1 << low), ("lane", 1 << lane_bits), ("warp", 1 << warp_bits),
                               ("more", 1 << rest)])
    order = order.transpose_ins(["register", "more", "lane", "warp"])
    return order.reshape_ins([("register", 1 << (low + rest)), ("lane", 1 << lane_bits), ("warp", 1 << warp_bits)])


def _unswizzled(smem_layout) -> LinearLayout:
    if isinstance(smem_layout, LinearLayout):
        return smem_layout
    text = str(smem_layout.layout if isinstance(smem_layout, fxt.Tensor) else smem_layout)
    return from_flydsl(cute_text(text).rpartition(" o ")[2], "smem")

