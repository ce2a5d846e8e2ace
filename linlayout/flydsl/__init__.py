"""linlayout inside FlyDSL kernels (needs the ``flydsl`` package): read FlyDSL's layouts,
write shared layouts back as FlyDSL composed layouts, check tiled copies' LDS banks, convert a
lane's fragment in place inside ``@flyc.kernel``, compile without ROCm, and run a kernel on the
wave interpreter.

An integration layer above ``linlayout.kernels``, like the CLI: nothing in linlayout imports
it, and ``import linlayout`` does not import FlyDSL.  docs/flydsl.md shows it in use.
"""

from .check import CopyCheck, check_copy
from .compile import compile_kernel, compile_only
from .convert import convert
from .interpret import interpret
from .layouts import layout_of, to_flydsl

__all__ = [
    "CopyCheck",
    "check_copy",
    "compile_kernel",
    "compile_only",
    "convert",
    "interpret",
    "layout_of",
    "to_flydsl",
]
