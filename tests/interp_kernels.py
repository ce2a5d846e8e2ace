"""Helpers for the interpreter tests: wrap op snippets into kernels, compile-check them and run
them.  Expected values in the tests are computed independently with numpy from the ISA text
(docs/amd_facts.md), never with the interpreter's own tables.

Declared threads.  :func:`prologue_kernel`, whose compiled setup the tests count, is made by
``lowering.emit.builder.kernel_module`` and declares its threads (``known_block_size``) as every
kernel of the package does.  :func:`lane_kernel` and :func:`multi_kernel`, and the hand-written
modules of the interpreter tests, declare none on purpose: one text is launched with several
blocks (partial waves such as 48 threads, 32 to 256), all within the 256 threads LLVM compiles a
kernel declaring none for, and they test the interpreter on MLIR as the gpu dialect allows it (a
size is optional; the interpreter checks one only where declared).  Their ISA is compile-checked (one
test looks for its instructions), never counted against the planner's estimates."""

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


def prologue_kernel(arch: str, num_warps: int, build) -> tuple[str, int]:
    """A kernel ``@k(%out)`` of ``num_warps`` waves of ``arch`` whose ``setup`` region (between the markers, the
    values pinned at its end as in a conversion kernel) holds what ``build(lanes)`` makes with ``lanes``, a
    :class:`~linlayout.lowering.emit.lane_values.LaneValues`; ``build`` returns the names of i32 values, stored to
    ``out[tid][k]``.  Returns the MLIR text and the number of values."""
    from linlayout.hw.targets import get_target
    from linlayout.lowering.emit import atoms
    from linlayout.lowering.emit.builder import Builder, kernel_module
    from linlayout.lowering.emit.lane_values import LaneValues

    wave_size = get_target(arch).wave_size
    b = Builder()
    tid, _t32, lane, warp = atoms.thread_ids(b, wave_size)
    lanes = LaneValues(b, tid, lane, warp, num_warps, wave_size, arch)
    atoms.region_marker(b, "setup", "begin")
    names = build(lanes)
    atoms.region_marker(b, "setup", "end", list(dict.fromkeys(lanes.pinned)))
    n = len(names)
    rsrc = atoms.buffer_rsrc(b, "%out", 4 * n * num_warps * wave_size, atoms.buffer_flags(arch))
    t4 = b.arith("muli", b.cast("arith.index_cast", tid, "index", "i32"), b.const(4 * n))
    for k, name in enumerate(names):
        atoms.buffer_store(b, name, rsrc, b.arith("addi", t4, b.const(4 * k)), "i32")
    return kernel_module("k", [("%out", "!llvm.ptr<1>")], b.body(), num_warps * wave_size, lanes.globals), n


def setup_ops(text: str, arch: str) -> list[str]:
    """The instructions (mnemonics) of the compiled ``setup`` region of ``text``."""
    from linlayout.lowering.isa import region_lines

    lines = [ln.strip() for ln in region_lines(compiles(text, arch), "setup")]
    return [ln.split()[0] for ln in lines if ln and not ln.startswith(";")]


def run_prologue(text: str, n: int, arch: str, num_warps: int) -> np.ndarray:
    """The ``[threads, n]`` values a :func:`prologue_kernel` stores, on the interpreter."""
    from linlayout.hw.targets import get_target
    from linlayout.lowering.interp import load_kernel

    threads = num_warps * get_target(arch).wave_size
    return load_kernel(text, "k", arch).run([np.zeros((threads, n), np.uint32)], block=(threads, 1, 1))[0]


def converting_kernel(plan, seeds=(1, 2)):
    """``lower_conversion(plan)`` (no code object, not cached), asserted to convert on the interpreter: for
    each seed, the kernel's output of a tile of distinct elements is ``expected_output``'s."""
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.emit.host import distinct_tile, expected_output, interpret

    low = lower_conversion(plan, binary=False, cache=False)
    for seed in seeds:
        tile = distinct_tile(low.kernel.shape, plan.element_bits, seed=seed)
        assert np.array_equal(interpret(low.kernel, tile, fill=0x5A), expected_output(plan, tile, fill=0x5A))
    return low
