"""Kernels written by solve: every layout decision made by linlayout, the MLIR emitted with
``linlayout.lowering.emit``, compiled for gfx942/gfx950 and verified on the wave interpreter.

``python -m linlayout.kernels.convert | linlayout.kernels.gemm | linlayout.kernels.attention | linlayout.kernels.fp8_fp16 --help``;
see ``docs/kernels.md``.
"""

from linlayout import room_alias

room_alias.alias(__name__)
