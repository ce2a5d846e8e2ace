"""The MLIR wave interpreter: runs a ``gpu.func`` kernel for whole workgroups, before LLVM
lowering, with the AMD ISA's semantics.  Public entry points live in
:mod:`linlayout.lowering.interpreter`; see ``docs/interpreter.md``."""

from __future__ import annotations

from . import ops_arith, ops_buffer, ops_gpu, ops_lanes, ops_lds_tr, ops_llvm, ops_memory, ops_mfma, ops_scf, ops_vector  # noqa: F401  (registration)
from . import ops_fp8_cvt  # noqa: F401  (registration; fp8 conversions, added for kernels/)
from .core import Kernel, LaunchBounds, launch_bounds, load_kernel
from .errors import InterpreterError
from .options import InterpOptions
from .registry import OPS

__all__ = ["Kernel", "LaunchBounds", "launch_bounds", "load_kernel", "InterpreterError", "InterpOptions", "supported_ops"]


def supported_ops() -> list:
    """Every op name the interpreter executes (sorted)."""
    return sorted(OPS) + ["func.return", "gpu.return", "scf.condition", "scf.yield"]
