"""Gluon Python that constructs a layout: the way back from linlayout to Triton.

:func:`gluon_source` prints an encoding object (:class:`Blocked`, :class:`Mfma`, ...) as
the equal Gluon layout class (``ttgl.BlockedLayout(...)``, ``ttgl.amd.AMDMFMALayout(...)``);
:func:`to_gluon` prints any :class:`LinearLayout` as ``ttgl.DistributedLinearLayout``
(in dims ``register, lane, warp, block``) or ``ttgl.SharedLinearLayout`` (in dims
``offset, block``).  ``ttgl`` is ``triton.experimental.gluon.language``.

Gluon's layouts carry no dim names: out dim ``i`` of the layout (in its out-dim
order, ``dim0`` outermost) is tensor dim ``i``, and a basis ``[c0, c1, ...]`` lists
its components in that order.  Gluon gives the CTA (CGA) tiling as block bases
(``cga_layout``): those of :meth:`Cga.linear_layout`.
"""

from __future__ import annotations

from ..errors import LayoutError
from ..layout import LinearLayout
from .blocked import Blocked
from .common import Cga
from .dot_operand import DotOperand
from .mfma import Mfma
from .nvidia import NvidiaMma
from .shared import AmdRotatingShared, SwizzledShared
from .slice import Slice
from .wmma import Wmma

__all__ = ["gluon_source", "has_gluon_class", "to_gluon", "GLUON_IMPORT"]

#: The import the printed code assumes.
GLUON_IMPORT = "from triton.experimental.gluon import language as ttgl"

_DISTRIBUTED_DIMS = {"register": "reg_bases", "lane": "lane_bases", "warp": "warp_bases", "block": "block_bases"}
_SHARED_DIMS = {"offset": "offset_bases", "block": "block_bases"}


class _Source:
    """Already printed source (a nested layout)."""

    def __init__(self, source: str) -> None:
        self.source = source


def _plain(value):
    """``value`` with tuples as lists and ints as plain ints, so that ``repr`` is Python source."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value if isinstance(value, (bool, str)) else int(value)


def _call(cls: str, **kwargs) -> str:
    """``cls(key=value, ...)`` as Python source (every value a bool, an int, a list or printed source)."""
    args = ", ".join(f"{k}={v.source if isinstance(v, _Source) else repr(_plain(v))}" for k, v in kwargs.items())
    return f"{cls}({args})"


def _cga_layout(cga: Cga, rank: int) -> list:
    """Gluon's ``cga_layout``: the block bases of the CGA layout (empty for one CTA)."""
    return [] if cga.ctas_per_cga is None else cga.linear_layout(rank).bases["block"]


def _blocked(enc: Blocked) -> str:
    return _call("ttgl.BlockedLayout", size_per_thread=enc.size_per_thread, threads_per_warp=enc.threads_per_warp,
                 warps_per_cta=enc.warps_per_cta, order=enc.order, cga_layout=_cga_layout(enc.cga, enc.rank))


def _mfma(enc: Mfma) -> str:
    return _call("ttgl.amd.AMDMFMALayout", version=enc.version, instr_shape=enc.instr_shape,
                 transposed=enc.is_transposed, warps_per_cta=enc.warps_per_cta, element_bitwidth=enc.element_bits,
                 tiles_per_warp=enc.tiles_per_warp, cga_layout=_cga_layout(enc.cga, enc.rank))


def _wmma(enc: Wmma) -> str:
    cta = enc.cta_layout()
    return _call("ttgl.amd.AMDWMMALayout", version=enc.version, transposed=enc.is_transposed,
                 warp_bases=cta.bases["warp"], reg_bases=cta.bases["register"], instr_shape=enc.instr_shape,
                 cga_layout=_cga_layout(enc.cga, enc.rank), rank=enc.rank)


def _nvidia_mma(enc: NvidiaMma) -> str:
    return _call("ttgl.NVMMADistributedLayout", version=[enc.version_major, enc.version_minor],
                 warps_per_cta=enc.warps_per_cta, instr_shape=enc.instr_shape,
                 cga_layout=_cga_layout(enc.cga, enc.rank))


def _swizzled(enc: SwizzledShared) -> str:
    if isinstance(enc, AmdRotatingShared):
        raise LayoutError("Gluon has no amd_rotating_shared layout; print its LinearLayout with to_gluon instead")
    return _call("ttgl.SwizzledSharedLayout", vec=enc.vec, per_phase=enc.per_phase, max_phase=enc.max_phase,
                 order=enc.order, cga_layout=_cga_layout(enc.cga, enc.rank))


def _slice(enc: Slice) -> str:
    return _call("ttgl.SliceLayout", dim=enc.dim, parent=_Source(gluon_source(enc.parent)))


def _dot_operand(enc: DotOperand) -> str:
    return _call("ttgl.DotOperandLayout", operand_index=enc.op_idx, parent=_Source(gluon_source(enc.parent)),
                 k_width=enc.k_width)


_PRINTERS = [(Blocked, _blocked), (Mfma, _mfma), (Wmma, _wmma), (NvidiaMma, _nvidia_mma),
             (SwizzledShared, _swizzled), (Slice, _slice), (DotOperand, _dot_operand)]


def has_gluon_class(encoding: object) -> bool:
    """Whether Gluon has a layout class for ``encoding`` (not for ``amd_rotating_shared``,
    whose layout :func:`to_gluon` prints as a ``SharedLinearLayout``)."""
    if isinstance(encoding, (Slice, DotOperand)):
        return has_gluon_class(encoding.parent)
    return any(isinstance(encoding, cls) for cls, _ in _PRINTERS) and not isinstance(encoding, AmdRotatingShared)


def gluon_source(encoding: object) -> str:
    """The Gluon expression of a named encoding object (no shape: Gluon's named layouts have none)."""
    for cls, printer in _PRINTERS:
        if isinstance(encoding, cls):
            return printer(encoding)
    raise LayoutError(f"no Gluon layout class for a {type(encoding).__name__} encoding")


def to_gluon(layout: LinearLayout) -> str:
    """The Gluon expression of ``layout``: ``ttgl.DistributedLinearLayout(...)`` for in dims among
    register/lane/warp/block, ``ttgl.SharedLinearLayout(...)`` for offset/block."""
    if not isinstance(layout, LinearLayout):
        raise LayoutError(f"to_gluon takes a LinearLayout, got {type(layout).__name__}")
    ins = set(layout.in_dim_names)
    if ins <= set(_DISTRIBUTED_DIMS):
        fields = _DISTRIBUTED_DIMS
    elif ins <= set(_SHARED_DIMS) and "offset" in ins:
        fields = _SHARED_DIMS
        if not layout.is_surjective():
            raise LayoutError("a Gluon SharedLinearLayout must reach every tensor element (the layout is not surjective)")
    else:
        raise LayoutError(f"in dims {layout.in_dim_names} are neither register/lane/warp/block nor offset/block")
    bases = layout.bases
    fields_bases = {field: bases.get(dim, []) for dim, field in fields.items()}
    if fields is _DISTRIBUTED_DIMS:
        return _call("ttgl.DistributedLinearLayout", **fields_bases, shape=[size for _, size in layout.out_dims])
    return _call("ttgl.SharedLinearLayout", **fields_bases)
