"""FlyDSL's printed layouts as linear layouts, and shared layouts back as FlyDSL text.

FlyDSL prints its layouts as CuTe text in a wrapper (no FlyDSL import is needed here):

* ``Layout<SHAPE:STRIDE>``, e.g. ``Layout<((16,4),4):((1,64),16)>`` (nested tuples,
  stride 0 = broadcast);
* ``ComposedLayout<S<B,M,S> o OFFSET o SHAPE:STRIDE>``: the swizzle ``S<B,M,S>`` (CuTe's
  ``Swizzle``: XOR of offset bits) applied to the offset the layout produces; the offset
  must be 0 (a non-zero offset is affine, not linear).

``cute_text(text)`` strips the wrapper; the map itself is read by ``linlayout.cute``.  The
same text has three readings (``from_flydsl(text, kind)``):

``"cute"``
    The literal map: in dim ``coord`` (the flat colexicographic coordinate, first mode
    fastest) -> out dim ``offset``, as ``from_cute`` reads CuTe text.
``"smem"``
    A memory layout read as linlayout's *shared layout*: top-level mode ``i`` of the
    coordinate is tensor dim ``dim{i}`` (FlyDSL's ``(M, K)`` tile: ``dim0`` = M, the rows),
    and the map is inverted to ``offset -> dim0, dim1, ...``.  It must be a bijection onto
    the offsets ``0 .. size-1``.
``"tv"``
    A thread-value layout: top-level mode 0 is the thread, mode 1 the value, and the
    offset is the element's linear index in the tile (CuTe's column-major: first tile
    dim fastest).  Thread bits ``0 .. log2(lanes)-1`` become in dim ``lane``, the rest
    ``warp`` (no ``warp`` dim for one wave); value bits become ``register``; in dims in linlayout's order ``register,
    lane, warp``.  Out dim ``index`` (the linear index), or, with ``tile=(M, N, ...)``,
    ``dim0`` (``M``, the low index bits), ``dim1``, ...

Without a ``kind``, a ``ComposedLayout<...>`` is read as ``"smem"`` (FlyDSL composes swizzles
with memory layouts only) and everything else as ``"cute"``.

``to_flydsl_text(shared)`` prints a shared layout (``offset -> dim0, dim1, ...``) as the
FlyDSL composed layout ``ComposedLayout<S<B,M,S> o 0 o SHAPE:STRIDE>`` whose ``"smem"``
reading is that layout (``S<0,0,0>``, the identity, when no swizzle is needed).
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

from .cute import from_cute, to_cute, top_level_modes
from .errors import LayoutError
from .layout import LinearLayout

__all__ = ["KINDS", "WAVE_LANES", "cute_text", "from_flydsl", "is_flydsl_text", "to_flydsl_text", "tv_layout"]

#: The readings of FlyDSL layout text (module docstring).
KINDS = ("cute", "smem", "tv")
#: Lanes of a wave on the CDNA targets linlayout models (thread bits below it are lane bits).
WAVE_LANES = 64

_WRAPPER = re.compile(r"^\s*(Layout|ComposedLayout)\s*<(.*)>\s*$", re.S)
_SWIZZLE = re.compile(r"(?<![A-Za-z0-9_])S\s*<")


def is_flydsl_text(text: str) -> bool:
    """Whether ``text`` is wrapped as FlyDSL prints layouts (``Layout<...>``, ``ComposedLayout<...>``)."""
    return isinstance(text, str) and _WRAPPER.match(text) is not None


def cute_text(text: str) -> str:
    """The CuTe text inside FlyDSL's wrapper (``S<B,M,S>`` spelled ``Sw<B,M,S>``); text without
    a wrapper is returned unchanged."""
    if not isinstance(text, str):
        raise LayoutError(f"FlyDSL layout text must be a string, got {type(text).__name__}")
    m = _WRAPPER.match(text)
    if m is None:
        return text
    kind, body = m.group(1), m.group(2)
    if "?" in body:
        raise LayoutError(f"FlyDSL layout {_short(text)} has dynamic (run-time) values ('?'): only static "
                          "layouts are maps linlayout can read")
    if kind == "Layout":
        if _SWIZZLE.search(body):
            raise LayoutError(f"FlyDSL layout {_short(text)}: a swizzle belongs in a ComposedLayout<...>")
        return body.strip()
    return _SWIZZLE.sub("Sw<", body).strip()


def from_flydsl(text: str, kind: Optional[str] = None, *, tile: Optional[Sequence[int]] = None,
                lanes: int = WAVE_LANES) -> LinearLayout:
    """FlyDSL layout text (or bare CuTe text) read as ``kind`` (``KINDS``; module docstring).

    ``kind=None``: ``"smem"`` for a ``ComposedLayout<...>`` (FlyDSL swizzles only memory
    layouts), else ``"cute"``.

    ``tile`` (``"tv"`` only): the tile's extents, first mode first, splitting the linear
    index into ``dim0, dim1, ...``.  ``lanes``: threads per wave (``"tv"`` only).
    """
    body = cute_text(text)
    if kind is None:
        wrapper = _WRAPPER.match(text)
        kind = "smem" if wrapper and wrapper.group(1) == "ComposedLayout" else "cute"
    if kind not in KINDS:
        raise LayoutError(f"FlyDSL layout reading {kind!r} is not one of {', '.join(KINDS)}")
    if tile is not None and kind != "tv":
        raise LayoutError(f"a tile shape applies to the 'tv' reading, not {kind!r}")
    if kind == "cute":
        return from_cute(body)
    if kind == "smem":
        return _smem(body)
    return tv_layout(from_cute(body, in_dim=_two_modes(body), out_size=_tile_size(tile)), tile=tile, lanes=lanes)


def tv_layout(tv: LinearLayout, *, tile: Optional[Sequence[int]] = None, lanes: int = WAVE_LANES) -> LinearLayout:
    """A thread-value map ``thread, value -> index`` as ``register, lane, warp -> index``
    (or ``-> dim0, dim1, ...`` with ``tile``, whose size must be the index's), by the ``"tv"``
    rule of the module docstring."""
    if tv.in_dim_names != ["thread", "value"] or len(tv.out_dims) != 1:
        raise LayoutError(f"a thread-value layout has in dims thread, value and one out dim, got "
                          f"{tv.in_dim_names} -> {tv.out_dim_names}")
    if isinstance(lanes, bool) or not isinstance(lanes, int) or lanes < 1 or lanes & (lanes - 1):
        raise LayoutError(f"lanes {lanes!r} must be a power of two")
    threads, values = tv.in_dim_size("thread"), tv.in_dim_size("value")
    lane_count = min(threads, lanes)
    out = tv.out_dim_names[0]
    L = tv.transpose_ins(["value", "thread"]).reshape_ins(
        [("register", values), ("lane", lane_count), ("warp", threads // lane_count)])
    if threads <= lanes:
        L = L.squeeze_ins("warp")  # one wave: no warp dim, as the MFMA catalog's layouts
    if tile is None:
        return L.rename_out_dim(out, "index")
    size = _tile_size(tile)
    if L.out_dim_size(out) != size:
        raise LayoutError(f"the thread-value layout's index has size {L.out_dim_size(out)}, the tile "
                          f"{'x'.join(map(str, tile))} has {size} elements")
    return L.reshape_outs([(f"dim{i}", e) for i, e in enumerate(tile)])


def to_flydsl_text(shared: LinearLayout) -> str:
    """FlyDSL text of a shared layout ``offset -> dim0, dim1, ...``: its ``"smem"`` reading is
    ``shared`` exactly.  Raises ``LayoutError`` when it is not a bijection or needs more than one
    ``S<B,M,S>`` swizzle (``to_cute``)."""
    if not isinstance(shared, LinearLayout):
        raise LayoutError(f"to_flydsl_text needs a LinearLayout, got {type(shared).__name__}")
    if shared.in_dim_names != ["offset"]:
        raise LayoutError(f"a shared layout has the one in dim 'offset', got {shared.in_dim_names}")
    dims = [f"dim{i}" for i in range(len(shared.out_dims))]
    if sorted(shared.out_dim_names) != sorted(dims):
        raise LayoutError(f"a shared layout's out dims are {', '.join(dims)}, got {shared.out_dim_names}")
    if not shared.is_invertible():
        raise LayoutError("the shared layout is not a bijection between offsets and tensor elements, so "
                          "no FlyDSL layout reads it")
    coord_to_offset = shared.transpose_outs(dims).invert()
    text = to_cute(coord_to_offset)
    swizzle, _, plain = text.rpartition(" o ")
    if len(dims) == 1 and plain.startswith("("):
        shape, stride = plain.split(":")
        plain = f"({shape}):({stride})"  # the modes of one tensor dim nested in one top-level mode
    b, m, s = re.fullmatch(r"Sw<(-?\d+),(-?\d+),(-?\d+)>", swizzle or "Sw<0,0,0>").groups()
    return f"ComposedLayout<S<{b},{m},{s}> o 0 o {plain}>"


# ------------------------------------------------------------------ internals
def _smem(body: str) -> LinearLayout:
    dims = [f"dim{i}" for i in range(top_level_modes(body))]
    coord_to_offset = from_cute(body, in_dim=dims if len(dims) > 1 else dims[0])
    if not coord_to_offset.is_invertible():
        raise LayoutError(f"memory layout {_short(body)} is not a bijection onto offsets 0 .. size-1 "
                          "(a broadcast mode, a gap or an overlap), so it is no shared layout")
    return coord_to_offset.invert()


def _two_modes(body: str) -> list[str]:
    if top_level_modes(body) != 2:
        raise LayoutError(f"thread-value layout {_short(body)} must have two top-level modes (thread, value), "
                          f"it has {top_level_modes(body)}")
    return ["thread", "value"]


def _tile_size(tile: Optional[Sequence[int]]) -> Optional[int]:
    if tile is None:
        return None
    if isinstance(tile, (str, bytes)) or not all(isinstance(e, int) and not isinstance(e, bool) for e in tile) \
            or not tile or any(e < 1 or e & (e - 1) for e in tile):
        raise LayoutError(f"tile {tile!r} must be a non-empty sequence of powers of two")
    size = 1
    for e in tile:
        size *= e
    return size


def _short(s: str) -> str:
    return repr(s if len(s) <= 60 else s[:57] + "...")
