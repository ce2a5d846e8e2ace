"""FlyDSL's compile target and the MLIR context of the kernel being traced.

FlyDSL picks its target from ``ARCH`` (``COMPILE_ONLY=1 ARCH=gfx950``) or the GPU present;
:func:`target_arch` asks FlyDSL's backend for it, so a conversion is planned for the arch
the kernel is compiled for.
"""

from __future__ import annotations

from linlayout import LayoutError

__all__ = ["target_arch", "gpu_module_body", "kernel_block", "kernel_threads"]


def target_arch() -> str:
    """The gfx arch FlyDSL compiles the current kernel for (``gfx942``, ``gfx950`` ...)."""
    from flydsl.compiler.backends import get_backend

    return str(get_backend().target.arch).split(":", 1)[0].lower()


def gpu_module_body():
    """The body block of the ``gpu.module`` FlyDSL is tracing a kernel into (module-level
    ops such as LDS globals go here); a LayoutError outside ``@flyc.kernel``."""
    from flydsl.compiler.kernel_function import CompilationContext

    ctx = CompilationContext.get_current()
    body = getattr(ctx, "gpu_module_body", None) if ctx is not None else None
    if body is None:
        raise LayoutError("linlayout.flydsl.convert must be called inside a @flyc.kernel being compiled")
    return body


def kernel_threads() -> int | None:
    """The threads of the kernel being traced as its ``gpu.func`` declares them (the product of its
    ``known_block_size``; FlyDSL writes it from a static ``launch(block=...)``), None where it declares none.
    A LayoutError outside a ``gpu.func``."""
    block = kernel_block()
    return None if block is None else block[0] * block[1] * block[2]


def kernel_block() -> tuple[int, int, int] | None:
    """The ``known_block_size`` of the kernel being traced, None where it declares none (``kernel_threads``)."""
    from flydsl._mlir import ir

    op = ir.InsertionPoint.current.block.owner
    while op is not None and op.operation.name != "gpu.func":
        op = op.parent
    if op is None:
        raise LayoutError("linlayout.flydsl.convert must be called inside a @flyc.kernel being compiled")
    attrs = op.operation.attributes
    if "known_block_size" not in attrs:
        return None
    x, y, z = (int(size) for size in attrs["known_block_size"])
    return x, y, z
