"""Triton's distributed and shared encodings as LinearLayouts.

One module per family; every encoding is a frozen dataclass with
``to_linear_layout(shape)`` and ``to_params()`` (Triton's param names), and a
constructor function that returns the LinearLayout directly:

* :func:`blocked`, :func:`slice_layout`, :func:`dot_operand` (any parent);
* AMD: :func:`mfma_layout`, :func:`mfma_dot_operand`, :func:`wmma_layout`,
  :func:`wmma_dot_operand`, :func:`choose_wmma_cta_linear_layout`;
* shared memory: :func:`swizzled_shared`, :func:`amd_rotating_shared`,
  :func:`padded_shared` (a :class:`PaddedLayout`: not linear);
* NVIDIA (interop): :func:`nvidia_mma_layout` and its dot operands;
* :func:`from_triton` for ``{"encoding": E, "shape": [...], ...params}``;
* the way back to Triton: :func:`gluon_source` (an encoding as its Gluon class) and
  :func:`to_gluon` (any layout as ``DistributedLinearLayout``/``SharedLinearLayout``);
* :func:`combine_cta_cga_with_shape` and :class:`Cga` (CTAsPerCGA/CTASplitNum/CTAOrder).

See docs/layouts.md.
"""

from .blocked import Blocked, blocked
from .common import Cga, combine_cta_cga_with_shape
from .dot_operand import DotOperand, dot_operand
from .gluon import gluon_source, to_gluon
from .mfma import Mfma, mfma_dot_operand, mfma_layout
from .nvidia import NvidiaMma, nvidia_mma_layout
from .padded import PaddedLayout, PaddedShared, padded_shared
from .shared import AmdRotatingShared, SwizzledShared, amd_rotating_shared, swizzled_shared
from .slice import Slice, slice_layout
from .triton import ENCODINGS, encoding_from_params, from_triton
from .wmma import Wmma, choose_wmma_cta_linear_layout, wmma_dot_operand, wmma_layout

__all__ = [
    "AmdRotatingShared", "Blocked", "Cga", "DotOperand", "ENCODINGS", "Mfma", "NvidiaMma", "PaddedLayout",
    "PaddedShared", "Slice", "SwizzledShared", "Wmma", "amd_rotating_shared", "blocked",
    "choose_wmma_cta_linear_layout", "combine_cta_cga_with_shape", "dot_operand", "encoding_from_params",
    "from_triton", "gluon_source", "mfma_dot_operand", "mfma_layout", "nvidia_mma_layout", "padded_shared",
    "slice_layout", "swizzled_shared", "to_gluon", "wmma_dot_operand", "wmma_layout",
]
