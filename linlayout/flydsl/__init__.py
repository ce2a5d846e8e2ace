"""linlayout inside FlyDSL kernels (needs the ``flydsl`` package): read FlyDSL's layouts,
write shared layouts back as FlyDSL composed layouts, check tiled copies' LDS banks.

An integration layer above ``linlayout.kernels``, like the CLI: nothing in linlayout imports
it, and ``import linlayout`` does not import FlyDSL.  docs/flydsl.md shows it in use.
"""

from .check import CopyCheck, check_copy
from .layouts import layout_of, to_flydsl

__all__ = [
    "CopyCheck",
    "check_copy",
    "layout_of",
    "to_flydsl",
]
