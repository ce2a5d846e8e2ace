"""Optional dependencies of the tests, and the one way a test skips without one.

Every test that needs something beyond numpy and pytest uses a mark (``@needs.torch``, or
``pytestmark = needs.mlir`` for a whole module), or, before module-level imports that need it,
``module(name)`` (returns the module) or ``require(*names)``.
Each skips with the reason ``needs <what> (pip install -e ".[<extra>]")``, so ``pytest -rs``
names exactly what to install.  Data files are not optional (``repo_data``); nor is a linker
once the MLIR bindings are there: the ``mlir`` extra brings ``ziglang``'s ``ld.lld``, and
``test_lowering_compile.test_linker_found`` fails when none is found.
"""

from __future__ import annotations

import importlib.util

import pytest

from linlayout.lowering.mlir import available as _mlir_available

__all__ = ["REASONS", "has", "module", "require", "reason", "mlir", "torch", "matplotlib", "galois", "ziglang"]

#: import name -> (what it is, the pyproject extra that installs it)
REASONS = {
    "torch": ("torch, the kernels' tensors", "kernels"),
    "flydsl": ("the MLIR Python bindings (flydsl)", "mlir"),
    "matplotlib": ("matplotlib, for pictures", "plot"),
    "galois": ("galois, the GF(2) reference", "test"),
    "ziglang": ("ziglang, whose ld.lld links code objects", "mlir"),
}


def reason(name: str) -> str:
    """The skip reason for a missing optional dependency ``name`` (a key of REASONS)."""
    what, extra = REASONS[name]
    return f'needs {what} (pip install -e ".[{extra}]")'


def has(name: str) -> bool:
    """Whether the optional dependency ``name`` can be used (flydsl: its MLIR bindings load)."""
    if name not in REASONS:
        raise KeyError(f"{name!r} is not an optional dependency of the tests ({sorted(REASONS)})")
    if name == "flydsl":
        return _mlir_available()
    return importlib.util.find_spec(name) is not None


def module(name: str):
    """Import ``name`` or skip the calling test module with ``reason(name)``."""
    return pytest.importorskip(name, reason=reason(name))


def require(*names: str) -> None:
    """Skip the calling test module unless every optional dependency in ``names`` is there."""
    for name in names:
        if not has(name):
            pytest.skip(reason(name), allow_module_level=True)


def _mark(name: str):
    return pytest.mark.skipif(not has(name), reason=reason(name))


mlir = _mark("flydsl")
torch = _mark("torch")
matplotlib = _mark("matplotlib")
galois = _mark("galois")
ziglang = _mark("ziglang")
