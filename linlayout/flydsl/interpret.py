"""``interpret``: run a FlyDSL kernel on linlayout's MLIR wave interpreter, driven by CPU torch tensors.

FlyDSL compiles ``jit_fn(*args)`` for ``arch`` without a GPU (:func:`~linlayout.flydsl.compile.compile_kernel`);
the kernel's IR at the last stage where it is still a ``gpu.func`` (LLVM-dialect values, as FlyDSL
emits them) runs on :func:`linlayout.lowering.interp.load_kernel`.  Each ``fx.Tensor`` argument reaches
the kernel as FlyDSL passes it: a global pointer, followed (for a tensor with a dynamic layout)
by a packed struct of its dynamic shape and strides, which FlyDSL's own argument adaptor fills
(its C-ABI bytes are decoded by the interpreter).  Dynamic shared memory (``launch(smem=N)``)
gets the size FlyDSL's host code launches with.  After the run the tensors hold the results.
"""

from __future__ import annotations

import re

import numpy as np

from linlayout import LayoutError
from linlayout.lowering.interp import load_kernel

from .compile import FlyKernel, compile_kernel

__all__ = ["interpret", "kernel_arguments", "dynamic_lds_bytes"]


def kernel_arguments(tensor) -> list:
    """What FlyDSL passes a kernel for one torch ``tensor``: its data (a numpy array) and, when the
    layout is dynamic, the bytes of its shape/stride struct."""
    from flydsl.compiler.jit_argument import TorchTensorJitArg

    arg = TorchTensorJitArg(tensor)
    slots = arg.__c_abi_spec__()
    out = [tensor.detach().contiguous().numpy()]
    for ctype, fill in slots[1:]:
        buf = ctype()
        fill(arg, buf)
        out.append(bytes(buf))
    return out


def dynamic_lds_bytes(kernel: FlyKernel) -> int:
    """The dynamic shared memory FlyDSL's launch of ``kernel`` asks for (``launch(smem=...)``; 0 if none)."""
    launch = re.search(rf"gpu\.launch_func .*@{re.escape(kernel.name)}\b.*", kernel.module)
    if launch is None:
        raise LayoutError(f"FlyDSL's module has no launch of kernel {kernel.name}")
    size = re.search(r"dynamic_shared_memory_size (%[\w.]+)", launch.group(0))
    if size is None:
        return 0
    value = re.search(rf"{re.escape(size.group(1))} = arith\.constant (\d+)", kernel.module)
    if value is None:
        raise LayoutError(f"the dynamic shared memory size of kernel {kernel.name} is not a constant")
    return int(value.group(1))


def interpret(jit_fn, *args, arch: str, grid=(1, 1, 1), block=(64, 1, 1), options=None) -> None:
    """Run the kernel of ``jit_fn(*args)`` on the wave interpreter; results are written back into ``args``.

    ``args``: CPU torch tensors and numbers, one per kernel parameter in order (a jit function
    whose ``fx.Constexpr`` parameters do not reach the kernel is not supported); ``arch``: ``gfx942`` or ``gfx950``; ``grid``/``block``:
    the launch the jit function makes (the interpreter checks ``block`` against the kernel's
    known block size).  One kernel per jit function.
    """
    import torch

    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor) and a.device.type != "cpu":
            raise LayoutError(f"interpret: argument {i} is on {a.device}; pass CPU tensors")
    kernels = compile_kernel(jit_fn, *args, arch=arch)
    if len(kernels) != 1:
        raise LayoutError(f"interpret: the jit function compiled {len(kernels)} kernels; one is supported")
    kernel = load_kernel(kernels[0].module, kernels[0].name, arch)
    flat, owners = [], []
    for a in args:
        parts = kernel_arguments(a) if isinstance(a, torch.Tensor) else [a]
        owners.append((a, len(flat)))
        flat += parts
    results = kernel.run(flat, grid, block, options, dynamic_lds_bytes=dynamic_lds_bytes(kernels[0]))
    for a, at in owners:
        if isinstance(a, torch.Tensor):
            a.copy_(torch.from_numpy(np.ascontiguousarray(results[at])).view(a.dtype).reshape(a.shape))
