"""The one place that imports the MLIR Python bindings.

Two sources are supported, tried in this order (``LINLAYOUT_MLIR=flydsl`` or
``LINLAYOUT_MLIR=mlir`` picks one):

* ``flydsl._mlir``: the upstream MLIR bindings embedded in the ``flydsl`` wheel, which
  include the ROCDL dialect and the AMDGPU backend used by ``gpu-module-to-binary``;
* ``mlir``: a standalone upstream ``mlir`` Python package.

Everything else in the project gets MLIR through :func:`bindings` (or :func:`new_context`),
so the choice is made here once.  Importing this module never imports MLIR; the first call
to :func:`bindings` does, and raises :class:`MlirUnavailable` if neither source imports.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import types
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from linlayout import caches

__all__ = ["MlirUnavailable", "MlirBindings", "bindings", "available", "new_context", "parse_module"]

_SOURCES = {"flydsl": "flydsl._mlir", "mlir": "mlir"}


class MlirUnavailable(RuntimeError):
    """No usable MLIR Python bindings: install ``flydsl`` (``pip install flydsl``)."""


@dataclass(frozen=True)
class MlirBindings:
    """The MLIR modules the project uses, all from one source package.

    ``source`` is the package they came from (``"flydsl._mlir"`` or ``"mlir"``) and
    ``version`` that distribution's version string (part of compile cache keys).
    """

    source: str
    version: str
    ir: types.ModuleType
    passmanager: types.ModuleType
    gpu: types.ModuleType
    rocdl: types.ModuleType
    llvm: types.ModuleType
    arith: types.ModuleType
    vector: types.ModuleType
    scf: types.ModuleType
    memref: types.ModuleType
    func: types.ModuleType


def _import_flydsl_mlir() -> None:
    """Import ``flydsl._mlir`` without running ``flydsl/__init__.py`` up front.

    The package ``__init__`` imports torch (about 1 s); the bindings need none of it.  We
    register the package module unexecuted and run its real ``__init__`` on the first
    attribute access to ``flydsl`` itself, so other users of ``flydsl`` see no difference.
    """
    if "flydsl" not in sys.modules:
        spec = importlib.util.find_spec("flydsl")
        if spec is None or spec.loader is None:
            raise ImportError("no module named 'flydsl'")
        pkg = importlib.util.module_from_spec(spec)
        state = {"done": False}

        def _lazy_init(name: str) -> Any:
            if not state["done"]:
                state["done"] = True
                spec.loader.exec_module(pkg)  # type: ignore[union-attr]
                if name in pkg.__dict__:
                    return pkg.__dict__[name]
            raise AttributeError(f"module 'flydsl' has no attribute {name!r}")

        pkg.__getattr__ = _lazy_init  # type: ignore[attr-defined]
        sys.modules["flydsl"] = pkg
    importlib.import_module("flydsl._mlir")


def _dist_version(dist: str) -> str:
    try:
        return version(dist)
    except PackageNotFoundError:  # bindings imported from a source tree, not an installed distribution
        return "unknown"


def _load(prefix: str) -> MlirBindings:
    if prefix == "flydsl._mlir":
        _import_flydsl_mlir()
    mods = {name: importlib.import_module(f"{prefix}.{name}") for name in ("ir", "passmanager")}
    for name in ("gpu", "rocdl", "llvm", "arith", "vector", "scf", "memref", "func"):
        mods[name] = importlib.import_module(f"{prefix}.dialects.{name}")
    dist = "flydsl" if prefix == "flydsl._mlir" else "mlir"
    return MlirBindings(source=prefix, version=_dist_version(dist), **mods)


@caches.memoize("lowering.mlir.bindings", size=1)  # 1: no arguments
def bindings() -> MlirBindings:
    """Return the MLIR bindings, importing them on first use.

    Raises :class:`MlirUnavailable` naming what to install when no source imports.
    """
    wanted = os.environ.get("LINLAYOUT_MLIR", "").strip()
    if wanted and wanted not in _SOURCES:
        raise MlirUnavailable(f"LINLAYOUT_MLIR={wanted!r}: expected one of {sorted(_SOURCES)}")
    order = [_SOURCES[wanted]] if wanted else list(_SOURCES.values())
    errors = []
    for prefix in order:
        try:
            return _load(prefix)
        except ImportError as exc:
            errors.append(f"{prefix}: {exc}")
    raise MlirUnavailable(
        "MLIR Python bindings not found (" + "; ".join(errors) + "). "
        "Install them with `pip install flydsl` (or `pip install linlayout[mlir]`)."
    )


def available() -> bool:
    """True when :func:`bindings` succeeds."""
    try:
        bindings()
    except MlirUnavailable:
        return False
    return True


def new_context() -> Any:
    """A fresh ``ir.Context`` with every dialect of the bindings loaded."""
    ctx = bindings().ir.Context()
    ctx.load_all_available_dialects()
    return ctx


def parse_module(text: str, context: Any | None = None) -> Any:
    """Parse MLIR assembly into an ``ir.Module`` (in ``context`` or a new context)."""
    ctx = context if context is not None else new_context()
    return bindings().ir.Module.parse(text, context=ctx)
