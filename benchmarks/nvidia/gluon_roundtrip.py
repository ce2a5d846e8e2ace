"""Triton's side of the timing: a Gluon kernel that converts a tile back and forth with
``gl.convert_layout``, compiled for an NVIDIA target on the CPU (no GPU needed).

The kernel (one CTA per tile, the tile a row-major tensor of ``shape`` at ``pid * numel``)::

    x = load(src, SRC);  y = convert_layout(x, DST)
    for i in range(iterations):  x, y = convert_layout(y, SRC), convert_layout(x, DST)
    store(out_src, x, SRC);  store(out_dst, y, DST)

Both conversions of an iteration read loop-carried values, so Triton's canonicalizer (which
folds ``convert(convert(x))``) cannot fold them, and both results are stored.  The layouts
are given as ``ttgl.DistributedLinearLayout`` (printed by :func:`linlayout.encodings.to_gluon`),
so Triton converts between exactly the layouts linlayout plans for.

Triton appends two pointer parameters (global and profile scratch) to every kernel;
:func:`compile_roundtrip` reports how many so the runner can pass zeros.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from linlayout import LayoutError, LinearLayout
from linlayout.encodings import to_gluon

__all__ = ["GluonKernel", "compile_roundtrip"]

TRITON_INT = {8: "i8", 16: "i16", 32: "i32"}


@dataclass(frozen=True)
class GluonKernel:
    """A compiled round-trip kernel: its cubin, entry name, dynamic shared bytes, PTX and the
    number of trailing scratch pointers Triton added."""

    cubin: bytes
    name: str
    shared_bytes: int
    ptx: str
    scratch_args: int


def _kernels():
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl

    @gluon.jit
    def roundtrip(src, out_src, out_dst, offs_src, offs_dst, iterations, SRC: gl.constexpr, DST: gl.constexpr):
        x = gl.load(src + offs_src)
        y = gl.convert_layout(x, DST)
        for i in range(iterations):
            x, y = gl.convert_layout(y, SRC), gl.convert_layout(x, DST)
        gl.store(out_src + offs_src, x)
        gl.store(out_dst + offs_dst, y)

    @gluon.jit
    def roundtrip_2d(src, out_src, out_dst, iterations, M: gl.constexpr, N: gl.constexpr,
                     SRC: gl.constexpr, DST: gl.constexpr):
        base = gl.program_id(0) * (M * N)
        rs = gl.arange(0, M, layout=gl.SliceLayout(1, SRC))
        cs = gl.arange(0, N, layout=gl.SliceLayout(0, SRC))
        rd = gl.arange(0, M, layout=gl.SliceLayout(1, DST))
        cd = gl.arange(0, N, layout=gl.SliceLayout(0, DST))
        roundtrip(src, out_src, out_dst, base + gl.expand_dims(rs, 1) * N + gl.expand_dims(cs, 0),
                  base + gl.expand_dims(rd, 1) * N + gl.expand_dims(cd, 0), iterations, SRC, DST)

    @gluon.jit
    def roundtrip_1d(src, out_src, out_dst, iterations, M: gl.constexpr, SRC: gl.constexpr, DST: gl.constexpr):
        base = gl.program_id(0) * M
        roundtrip(src, out_src, out_dst, base + gl.arange(0, M, layout=SRC), base + gl.arange(0, M, layout=DST),
                  iterations, SRC, DST)

    return roundtrip_2d, roundtrip_1d


def _gluon_layout(layout: LinearLayout):
    from triton.experimental.gluon import language as ttgl

    return eval(to_gluon(layout), {"ttgl": ttgl})  # to_gluon prints a constructor call of ttgl


def compile_roundtrip(src: LinearLayout, dst: LinearLayout, element_bits: int, num_warps: int,
                      capability: int = 90) -> GluonKernel:
    """Compile the round-trip kernel for ``src <-> dst`` (layouts over the same 1-D or 2-D
    tensor, ``element_bits``-bit integers) for ``cuda`` compute capability ``capability``."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    if element_bits not in TRITON_INT:
        raise LayoutError(f"element_bits {element_bits}: the Gluon round trip takes 8, 16 or 32")
    shape = [size for _, size in src.out_dims]
    if shape != [size for _, size in dst.out_dims]:
        raise LayoutError(f"the layouts cover different tensors: {src.out_dims} vs {dst.out_dims}")
    k2, k1 = _kernels()
    layouts = {"SRC": _gluon_layout(src), "DST": _gluon_layout(dst)}
    if len(shape) == 2:
        fn, consts = k2, {"M": shape[0], "N": shape[1], **layouts}
    elif len(shape) == 1:
        fn, consts = k1, {"M": shape[0], **layouts}
    else:
        raise LayoutError(f"the Gluon round trip takes 1-D or 2-D tiles, not {len(shape)}-D")
    ptr = "*" + TRITON_INT[element_bits]
    signature = {"src": ptr, "out_src": ptr, "out_dst": ptr, "iterations": "i32", **dict.fromkeys(consts, "constexpr")}
    compiled = triton.compile(GluonASTSource(fn, signature=signature, constexprs=consts),
                              target=GPUTarget("cuda", capability, 32), options={"num_warps": num_warps})
    ptx = compiled.asm["ptx"]
    entry = re.search(r"\.entry\s+(\w+)\(([^)]*)\)", ptx)
    params = [p for p in entry.group(2).split(",") if p.strip()]
    return GluonKernel(compiled.asm["cubin"], compiled.metadata.name, compiled.metadata.shared, ptx,
                       len(params) - 4)
