"""``from_triton``: a Triton encoding given as JSON params -> its layout.

The object is ``{"encoding": E, "shape": [...], ...params}`` with ``E`` one of
the suffixes of the ``to_linear_layout/<E>`` vector kinds and the params named
as Triton names them (docs/contract.md section 3).  For dot operands and slices,
``parent`` carries the parent's params; the parent family is implied by ``E``
(``amd_mfma_dot_operand`` -> MFMA, ``slice_of_blocked`` -> blocked, ...) or, for
the generic ``dot_operand`` and ``slice``, named by ``parent["encoding"]``.
``padded_shared`` (not a LinearLayout) gives a :class:`PaddedLayout`.
"""

from __future__ import annotations

from typing import Callable, Mapping

from ..errors import LayoutError
from ..layout import LinearLayout
from .blocked import Blocked
from .common import ParamReader
from .dot_operand import DotOperand
from .mfma import Mfma
from .nvidia import NvidiaMma
from .padded import PaddedLayout, PaddedShared
from .shared import AmdRotatingShared, SwizzledShared
from .slice import Slice
from .wmma import Wmma

__all__ = ["from_triton", "encoding_from_params", "ENCODINGS"]

#: Encodings that are built from their own params.
_PLAIN: dict[str, Callable[[Mapping], object]] = {
    "blocked": Blocked.from_params,
    "amd_mfma": Mfma.from_params,
    "amd_wmma": Wmma.from_params,
    "nvidia_mma": NvidiaMma.from_params,
    "swizzled_shared": SwizzledShared.from_params,
    "amd_rotating_shared": AmdRotatingShared.from_params,
    "padded_shared": PaddedShared.from_params,
}
#: Dot-operand kinds -> parent encoding (None: named by ``parent["encoding"]``).
_DOT_PARENT = {
    "amd_mfma_dot_operand": "amd_mfma",
    "amd_wmma_dot_operand": "amd_wmma",
    "dot_operand_of_blocked": "blocked",
    "dot_operand_of_nvidia_mma": "nvidia_mma",
    "dot_operand": None,
}
#: Slice kinds -> parent encoding.
_SLICE_PARENT = {"slice_of_blocked": "blocked", "slice": None}

ENCODINGS = sorted([*_PLAIN, *_DOT_PARENT, *_SLICE_PARENT])


def _parent(kind: str, implied: str | None, params: object) -> object:
    if not isinstance(params, Mapping):
        raise LayoutError(f"{kind}: parameter parent must be an object with the parent's params")
    params = dict(params)
    named = params.pop("encoding", None)
    if implied is not None and named is not None and named != implied:
        raise LayoutError(f"{kind}: parameter parent has encoding {named!r}, expected {implied!r}")
    return encoding_from_params(implied or named, params)


def encoding_from_params(encoding: object, params: Mapping) -> object:
    """The encoding object for a Triton encoding name and its params (without ``shape``)."""
    if not isinstance(encoding, str):
        raise LayoutError(f"parameter encoding: {encoding!r} is not one of {ENCODINGS}")
    if encoding in _PLAIN:
        return _PLAIN[encoding](params)
    if encoding in _DOT_PARENT:
        r = ParamReader(params, encoding)
        enc = DotOperand(_parent(encoding, _DOT_PARENT[encoding], r.get("parent")), r.get("opIdx"),
                         r.get("kWidth", 0))
        r.done()
        return enc
    if encoding in _SLICE_PARENT:
        r = ParamReader(params, encoding)
        enc = Slice(_parent(encoding, _SLICE_PARENT[encoding], r.get("parent")), r.get("dim"))
        r.done()
        return enc
    raise LayoutError(f"parameter encoding: {encoding!r} is not one of {ENCODINGS}")


def from_triton(obj: Mapping) -> LinearLayout | PaddedLayout:
    """The layout of ``{"encoding": E, "shape": [...], ...params}`` (docs/contract.md section 3)."""
    if not isinstance(obj, Mapping):
        raise LayoutError(f"a Triton encoding must be a JSON object, got {type(obj).__name__}")
    params = dict(obj)
    encoding = params.pop("encoding", None)
    if encoding is None:
        raise LayoutError("missing parameter encoding")
    if isinstance(encoding, str) and encoding.startswith("to_linear_layout/"):
        encoding = encoding[len("to_linear_layout/"):]
    shape = params.pop("shape", None)
    enc = encoding_from_params(encoding, params)  # an unknown encoding is named before a missing shape
    if shape is None:
        raise LayoutError(f"{encoding}: missing parameter shape")
    return enc.to_linear_layout(shape)
