"""linlayout inside FlyDSL kernels (needs the ``flydsl`` package): see docs/flydsl.md."""

from .convert import convert
from .compile import compile_kernel, compile_only
from .interpret import interpret
