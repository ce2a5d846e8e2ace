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

__all__ = ["gluon_source", "to_gluon", "GLUON_IMPORT"]

#: The import the printed code assumes.
GLUON_IMPORT = "from triton.experimental.gluon import language as ttgl"

_DISTRIBUTED_DIMS = {"register": "reg_bases", "lane": "lane_bases", "warp": "warp_bases", "block": "block_bases"}
_SHARED_DIMS = {"offset": "offset_bases", "block": "block_bases"}


def _ints(values) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def _bases(bases) -> str:
    return "[" + ", ".join(_ints(b) for b in bases) + "]"


def _cga_layout(cga: Cga, rank: int) -> str:
    """Gluon's ``cga_layout``: the block bases of the CGA layout (empty for one CTA)."""
    if cga.ctas_per_cga is None:
        return "[]"
    return _bases(cga.linear_layout(rank).bases["block"])


def _blocked(enc: Blocked) -> str:
    return (f"ttgl.BlockedLayout(size_per_thread={_ints(enc.size_per_thread)}, "
            f"threads_per_warp={_ints(enc.threads_per_warp)}, warps_per_cta={_ints(enc.warps_per_cta)}, "
            f"order={_ints(enc.order)}, cga_layout={_cga_layout(enc.cga, enc.rank)})")


def _mfma(enc: Mfma) -> str:
    return (f"ttgl.amd.AMDMFMALayout(version={enc.version}, instr_shape={_ints(enc.instr_shape)}, "
            f"transposed={enc.is_transposed}, warps_per_cta={_ints(enc.warps_per_cta)}, "
            f"element_bitwidth={enc.element_bits}, tiles_per_warp={_ints(enc.tiles_per_warp)}, "
            f"cga_layout={_cga_layout(enc.cga, enc.rank)})")


def _wmma(enc: Wmma) -> str:
    cta = enc.cta_layout()
    return (f"ttgl.amd.AMDWMMALayout(version={enc.version}, transposed={enc.is_transposed}, "
            f"warp_bases={_bases(cta.bases['warp'])}, reg_bases={_bases(cta.bases['register'])}, "
            f"instr_shape={_ints(enc.instr_shape)}, cga_layout={_cga_layout(enc.cga, enc.rank)}, rank={enc.rank})")


def _nvidia_mma(enc: NvidiaMma) -> str:
    return (f"ttgl.NVMMADistributedLayout(version=[{enc.version_major}, {enc.version_minor}], "
            f"warps_per_cta={_ints(enc.warps_per_cta)}, instr_shape={_ints(enc.instr_shape)}, "
            f"cga_layout={_cga_layout(enc.cga, enc.rank)})")


def _swizzled(enc: SwizzledShared) -> str:
    if isinstance(enc, AmdRotatingShared):
        raise LayoutError("Gluon has no amd_rotating_shared layout; print its LinearLayout with to_gluon instead")
    return (f"ttgl.SwizzledSharedLayout(vec={enc.vec}, per_phase={enc.per_phase}, max_phase={enc.max_phase}, "
            f"order={_ints(enc.order)}, cga_layout={_cga_layout(enc.cga, enc.rank)})")


def _slice(enc: Slice) -> str:
    return f"ttgl.SliceLayout(dim={enc.dim}, parent={gluon_source(enc.parent)})"


def _dot_operand(enc: DotOperand) -> str:
    return (f"ttgl.DotOperandLayout(operand_index={enc.op_idx}, parent={gluon_source(enc.parent)}, "
            f"k_width={enc.k_width})")


_PRINTERS = [(Blocked, _blocked), (Mfma, _mfma), (Wmma, _wmma), (NvidiaMma, _nvidia_mma),
             (SwizzledShared, _swizzled), (Slice, _slice), (DotOperand, _dot_operand)]


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
    args = [f"{field}={_bases(bases.get(dim, []))}" for dim, field in fields.items()]
    if fields is _DISTRIBUTED_DIMS:
        shape = [size for _, size in layout.out_dims]
        return f"ttgl.DistributedLinearLayout({', '.join(args)}, shape={_ints(shape)})"
    return f"ttgl.SharedLinearLayout({', '.join(args)})"
