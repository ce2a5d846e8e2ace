"""The MLIR scope FlyDSL objects are built in, as inside ``@flyc.kernel``: a context with
FlyDSL's dialects, a location and an insertion point (tests that need FlyDSL only)."""

from __future__ import annotations

from contextlib import contextmanager

from flydsl._mlir import ir


@contextmanager
def insertion_point():
    """Enter a fresh context, an unknown location and the body of a new module; yield the module."""
    ctx = ir.Context()
    ctx.load_all_available_dialects()
    with ctx, ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            yield module
