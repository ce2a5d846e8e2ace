"""Live FlyDSL layout objects as linear layouts, and shared layouts back as FlyDSL objects.

Every FlyDSL object below prints (``str``) as FlyDSL layout text, which
``linlayout.flydsl_text`` reads; this module chooses the reading and the tile each object
implies:

* a ``Layout``: its literal map ``coord -> offset`` (``"cute"``), or ``reading="smem"`` /
  ``"tv"`` (``linlayout.flydsl_text``);
* a ``ComposedLayout`` (a swizzled memory layout) and a shared-memory ``Tensor``'s layout:
  the shared layout ``offset -> dim0, dim1, ...`` (``"smem"``); another tensor (a register
  fragment) needs an explicit reading;
* an MMA atom or a tiled MMA with ``reading`` ``"A"``, ``"B"`` or ``"C"``: the role's
  thread-value layout (a tiled MMA's includes its wave order and K permutation) as
  ``register, lane[, warp] -> dim0, dim1``, in the MFMA catalog's orientation: A is M x K,
  B is K x N (FlyDSL's B tile is N x K and is transposed here), C is M x N;
* a tiled copy: its source (``reading="src"``, the default) or destination (``"dst"``)
  thread-value layout over its tile ``tile_mn``, ``register, lane, warp -> dim0, dim1``.

``to_flydsl(shared)`` builds the FlyDSL composed layout of a shared layout at the current
MLIR insertion point (inside ``@flyc.kernel``, or any ``ir.InsertionPoint``).
"""

from __future__ import annotations

import re
from typing import Optional, Union

import flydsl.expr as fx
from flydsl.expr import typing as fxt
from flydsl._mlir import ir

from linlayout.cute import from_cute
from linlayout.errors import LayoutError
from linlayout.flydsl_text import from_flydsl, to_flydsl_text
from linlayout.hw.mfma import MFMA_ARCHES, instructions_for
from linlayout.layout import LinearLayout
from linlayout.spec import parse_layout

__all__ = ["MMA_ROLES", "COPY_SIDES", "layout_of", "mfma_instruction", "mma_tiles", "tile_shape", "to_flydsl"]

#: The operand roles of an MMA and the tile dims each role's thread-value layout indexes
#: (FlyDSL's order, first mode fastest): A is (M, K), B is (N, K), C is (M, N).
MMA_ROLES = {"A": ("m", "k"), "B": ("n", "k"), "C": ("m", "n")}
#: The sides of a tiled copy: the attribute holding each side's thread-value layout.
COPY_SIDES = {"src": "layout_src_tv_tiled", "dst": "layout_dst_tv_tiled"}

#: FlyDSL (MLIR) element types -> the MFMA catalog's type names.
_CATALOG_TYPE = {"f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64", "i8": "i8", "i32": "i32",
                 "f8E4M3FNUZ": "fp8", "f8E4M3FN": "fp8", "f8E5M2FNUZ": "bf8", "f8E5M2": "bf8"}
_MFMA_TYPE = re.compile(r"mfma<(\d+)x(\d+)x(\d+),\s*\((\w+),\s*(\w+)\)\s*->\s*(\w+)>")
_INTS = re.compile(r"^IntTuple<\((\d+(?:,\d+)*)\)>$")
_TILE = re.compile(r"^Tile<\[(.*)\]>$", re.S)

Readable = Union[str, "fxt.Layout", "fxt.ComposedLayout", "fxt.Tensor", "fxt.MmaAtom", "fxt.TiledMma", "fxt.TiledCopy"]


def layout_of(obj: Readable, reading: Optional[str] = None) -> LinearLayout:
    """The ``LinearLayout`` of a FlyDSL object or of FlyDSL's printed text (module docstring).

    ``reading``: for text and layouts ``"cute"``, ``"smem"`` or ``"tv"``
    (``linlayout.flydsl_text.from_flydsl``; text without a reading is any layout argument of
    ``linlayout.spec.parse_layout``, FlyDSL's text included); for an MMA atom or tiled MMA the role ``"A"``,
    ``"B"`` or ``"C"`` (required); for a tiled copy ``"src"`` (default) or ``"dst"``.
    """
    if isinstance(obj, str):
        return parse_layout(obj) if reading is None else from_flydsl(obj, reading)
    if isinstance(obj, fxt.Tensor):
        space = str(obj.address_space)
        if reading is None and space != "shared":
            raise LayoutError(f"a {space} tensor's layout is not a shared layout: a register fragment maps one "
                              "lane's values to its registers; read the tiled MMA's or tiled copy's role "
                              "(layout_of(tiled_mma, 'A')), or give the reading")
        return layout_of(obj.layout, reading or "smem")
    if isinstance(obj, fxt.ComposedLayout):
        return from_flydsl(str(obj), reading or "smem")
    if isinstance(obj, fxt.Layout):
        return from_flydsl(str(obj), reading or "cute")
    if isinstance(obj, (fxt.MmaAtom, fxt.TiledMma)):
        return _mma_role(obj, reading)
    if isinstance(obj, fxt.TiledCopy):
        return _copy_side(obj, reading or "src")
    raise LayoutError(f"layout_of reads FlyDSL layouts, composed layouts, tensors, MMA atoms, tiled MMAs, "
                      f"tiled copies and FlyDSL layout text, not {type(obj).__name__}")


def to_flydsl(shared: LinearLayout) -> "fxt.ComposedLayout":
    """The FlyDSL composed layout of a shared layout (``offset -> dim0, dim1, ...``), built at the
    current MLIR insertion point; ``layout_of`` of it is ``shared`` exactly.  The text alone:
    ``linlayout.flydsl_text.to_flydsl_text``."""
    text = to_flydsl_text(shared)
    try:
        ir.InsertionPoint.current
    except ValueError:
        raise LayoutError("to_flydsl builds a live FlyDSL layout at the current MLIR insertion point (inside "
                          f"@flyc.kernel); there is none here.  Its text: {text}") from None
    body = text[len("ComposedLayout<"):-1]  # FlyDSL's own spelling (S<B,M,S>) inside the type
    return fx.static(ir.Type.parse(f"!fly.composed_layout<{body}>"))


def mfma_instruction(mma) -> str:
    """The MFMA catalog's name (``v_mfma_f32_16x16x16_f16``) of an MMA atom's or tiled MMA's
    instruction, from its type (``mfma<MxNxK, (a, b) -> c>``)."""
    text = str(mma.type)
    m = _MFMA_TYPE.search(text)
    if m is None:
        raise LayoutError(f"FlyDSL MMA {text} is not an MFMA atom (mfma<MxNxK, (a, b) -> c>)")
    mm, nn, kk = (int(x) for x in m.group(1, 2, 3))
    types = []
    for t in m.group(4, 5, 6):
        if t not in _CATALOG_TYPE:
            raise LayoutError(f"FlyDSL MMA {text}: element type {t} has no MFMA catalog name")
        types.append(_CATALOG_TYPE[t])
    a, b, c = types
    for arch in MFMA_ARCHES:
        for ins in instructions_for(arch):
            if (ins.m, ins.n, ins.k, ins.blocks, ins.a_type, ins.b_type, ins.c_type) == (mm, nn, kk, 1, a, b, c):
                return ins.name
    raise LayoutError(f"FlyDSL MMA {text}: no single-block MFMA {mm}x{nn}x{kk} ({a}, {b}) -> {c} in the catalog")


def mma_tiles(mma) -> dict:
    """``{"m": M, "n": N, "k": K}``: the tile an MMA atom (``shape_mnk``) or a tiled MMA
    (``tile_size_mnk``, waves and permutation included) covers."""
    shape = mma.tile_size_mnk if isinstance(mma, fxt.TiledMma) else mma.shape_mnk
    m = _INTS.match(str(shape))
    if m is None or len(m.group(1).split(",")) != 3:
        raise LayoutError(f"FlyDSL MMA tile {shape} is not a static (M,N,K)")
    return dict(zip("mnk", (int(x) for x in m.group(1).split(","))))


def tile_shape(tile) -> list[int]:
    """The extents of a FlyDSL ``Tile<[L0|L1|...]>`` (each mode a layout; its extent is its size)."""
    m = _TILE.match(str(tile))
    if m is None:
        raise LayoutError(f"FlyDSL tile {tile} is not a static Tile<[...]>")
    out = []
    for mode in m.group(1).split("|"):
        if mode.strip() == "*":
            raise LayoutError(f"FlyDSL tile {tile}: mode '*' has no extent")
        out.append(from_cute(mode).in_dim_size("coord"))
    return out


# ------------------------------------------------------------------ internals
def _mma_role(mma, role: Optional[str]) -> LinearLayout:
    if role not in MMA_ROLES:
        raise LayoutError(f"an MMA's layout needs its role: reading 'A', 'B' or 'C', got {role!r}")
    tiles = mma_tiles(mma)
    tv = (getattr(mma, f"layout_{role}_tv") if isinstance(mma, fxt.MmaAtom)
          else getattr(mma, f"tv_layout_{role}_tiled"))
    L = from_flydsl(str(tv), "tv", tile=[tiles[d] for d in MMA_ROLES[role]])
    if role == "B":  # FlyDSL's B tile is (N, K); the catalog's B is K x N
        L = L.rename_out_dim("dim0", "n").rename_out_dim("dim1", "dim0").rename_out_dim("n", "dim1")
        L = L.transpose_outs(["dim0", "dim1"])
    return L


def _copy_side(copy, side: str) -> LinearLayout:
    if side not in COPY_SIDES:
        raise LayoutError(f"a tiled copy's layout is read from side 'src' or 'dst', got {side!r}")
    tv = getattr(copy, COPY_SIDES[side])
    return from_flydsl(str(tv), "tv", tile=tile_shape(copy.tile_mn))
