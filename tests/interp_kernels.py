"""Helpers for the interpreter tests: wrap op snippets into kernels, compile-check them and run
them.  Expected values in the tests are computed independently with numpy from the ISA text
(docs/amd_facts.md), never with the interpreter's own tables."""

from __future__ import annotations

import numpy as np

from linlayout.lowering.compile import compile_mlir
from linlayout.lowering.interpreter import run_kernel


def lane_kernel(body: str, in_type: str = "i32", out_type: str = "i32", workgroup: str = "", params: str = "") -> str:
    """Kernel ``@k(%in, %out [, params])``: ``%x = in[tid]`` (``in_type``), then ``body``, which
    must define ``%res`` (``out_type``), stored to ``out[tid]``.  ``%tid`` (index) and ``%t``
    (i32) are the thread id; ``workgroup`` is a workgroup attribution list."""
    wg = f" workgroup({workgroup})" if workgroup else ""
    extra = f", {params}" if params else ""
    return f"""module {{
  gpu.module @m {{
    gpu.func @k(%in: !llvm.ptr<1>, %out: !llvm.ptr<1>{extra}){wg} kernel {{
      %tid = gpu.thread_id x
      %t = arith.index_cast %tid : index to i32
      %pin = llvm.getelementptr %in[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, {in_type}
      %x = llvm.load %pin : !llvm.ptr<1> -> {in_type}
{body}
      %pout = llvm.getelementptr %out[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, {out_type}
      llvm.store %res, %pout : {out_type}, !llvm.ptr<1>
      gpu.return
    }}
  }}
}}
"""


def compiles(text: str, arch: str = "gfx942") -> str:
    """Compile to ISA (proves the interpreted text is compilable MLIR); the ISA text."""
    return compile_mlir(text, arch, binary=False, cache=False).isa


def run_lanes(text: str, x: np.ndarray, out_dtype, arch: str = "gfx942", block: int = 64, check_compile: bool = True,
              options=None, out_shape=None) -> np.ndarray:
    """Compile-check ``text`` then interpret it on one workgroup; the ``out`` buffer."""
    if check_compile:
        compiles(text, arch)
    out = np.zeros(out_shape if out_shape is not None else block, out_dtype)
    return run_kernel(text, "k", [x, out], grid=1, block=block, arch=arch, options=options)[1]


def seq(n: int, dtype=np.uint32, seed: int = 0) -> np.ndarray:
    """Distinct pseudo-random values."""
    rng = np.random.default_rng(seed)
    return rng.permutation(np.arange(1, 10 * n, dtype=np.int64))[:n].astype(dtype)


def multi_kernel(body: str, n_out: int, threads: int, in_type: str = "i32", out_type: str = "i32",
                 workgroup: str = "") -> str:
    """Like :func:`lane_kernel` but ``body`` defines ``%res0 .. %res{n_out-1}``, stored to
    ``out[t + k*threads]``."""
    stores = "\n".join(
        f"""      %out_off{k} = arith.constant {k * threads} : i32
      %out_idx{k} = arith.addi %t, %out_off{k} : i32
      %out_ptr{k} = llvm.getelementptr %out[%out_idx{k}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, {out_type}
      llvm.store %res{k}, %out_ptr{k} : {out_type}, !llvm.ptr<1>"""
        for k in range(n_out)
    )
    text = lane_kernel(body + "\n" + stores + "\n      %res = arith.addi %t, %t : i32", in_type=in_type,
                       out_type="i32", workgroup=workgroup)
    # the trailing dummy %res store writes out[t] = 2t; drop it
    return text.replace(
        """      %pout = llvm.getelementptr %out[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      llvm.store %res, %pout : i32, !llvm.ptr<1>
""", "")
