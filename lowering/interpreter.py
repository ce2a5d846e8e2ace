"""Run emitted MLIR on the wave interpreter (no GPU needed).

    from linlayout.lowering.interpreter import run_kernel
    out = run_kernel(mlir_text, "conv", args=[src, dst], grid=(1,), block=(256,), arch="gfx942")
    dst_after = out[1]

``run_kernel`` parses the module with the MLIR bindings, compiles kernel ``kernel_name``
(cached by text), and executes every workgroup of ``grid`` in turn with ``block`` threads,
SIMT-vectorised over the workgroup.  Pointer and memref arguments are numpy arrays (copied
in); the result is a list aligned with ``args`` holding each buffer's final contents (same
dtype and shape) and ``None`` for scalar arguments.  Anything the interpreter does not know
or any undefined behaviour it detects raises :class:`InterpreterError` naming the op and its
line.  Semantics, the op set and the inferred ([I]) parameters: ``docs/interpreter.md``.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from .interp import InterpOptions, InterpreterError, Kernel, LaunchBounds, launch_bounds, load_kernel, supported_ops

__all__ = ["run_kernel", "launch_bounds", "LaunchBounds", "load_kernel", "Kernel", "InterpOptions", "InterpreterError", "supported_ops"]


def run_kernel(
    module_text: str,
    kernel_name: Optional[str] = None,
    args: Sequence[Any] = (),
    grid: Any = (1, 1, 1),
    block: Any = (64, 1, 1),
    arch: str = "gfx942",
    options: Optional[InterpOptions] = None,
) -> list:
    """Interpret ``kernel_name`` (or the module's only kernel) on ``grid`` x ``block`` threads.

    Returns a list aligned with ``args``: numpy arrays (buffers after the run) and ``None``
    for scalars.  Raises :class:`InterpreterError` (a ``LayoutError``) for unsupported ops,
    bad arguments and detected undefined behaviour.
    """
    return load_kernel(module_text, kernel_name, arch).run(args, grid, block, options)
