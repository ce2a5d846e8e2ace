"""Kernels written by solve: every layout decision made by linlayout, the MLIR emitted with
``lowering.emit``, compiled for gfx942/gfx950 and verified on the wave interpreter.

``python -m kernels.convert | kernels.gemm | kernels.attention | kernels.fp8_fp16 --help``;
see ``docs/kernels.md``.
"""
