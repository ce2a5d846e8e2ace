"""One copy of each room's modules: ``synth``, ``lowering`` and ``kernels`` imported by their folders' bare
names are ``linlayout.synth``, ``linlayout.lowering`` and ``linlayout.kernels``.

The rooms are folders at the repository root, linked into the package (``linlayout/synth -> ../synth``).
Where the root is on ``sys.path`` (``PYTHONPATH`` set to a checkout, a script run from the root), Python
finds ``synth/`` itself as a top-level package, and ``import synth.cost`` would run ``synth/cost.py`` a
second time as the module ``synth.cost``: a second copy of every class (an ``isinstance`` across the two
fails) and of every cache declaration (linlayout.caches refuses a name declared twice: "cache
'synth.span.index_bits' is declared twice").  So each room's ``__init__`` calls ``alias(__name__)``: run
as the bare ``synth`` it puts ``linlayout.synth`` in its place in ``sys.modules`` (the import statement
then binds that module: importlib returns what ``sys.modules`` holds after the package runs) and puts
``_RoomAliases`` first on ``sys.meta_path``, whose loader gives ``synth.X`` the module
``linlayout.synth.X`` (imported under that name, once).  Run as ``linlayout.synth`` it does nothing.
The library's own modules never import the bare names (tests/test_architecture.py); a bare name is the
user's or a script's spelling, and now the same modules.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

__all__ = ["ROOMS", "alias"]

#: The rooms linked into the package, each importable by its bare name where the repository root is on sys.path.
ROOMS = ("synth", "lowering", "kernels")


def alias(name: str) -> None:
    """Called by each room's ``__init__`` with its ``__name__``: when that is the bare room name, make it
    ``linlayout.<name>`` in ``sys.modules`` and its submodules ``linlayout.<name>.*`` (``_RoomAliases``)."""
    if name not in ROOMS:
        return  # the room imported as linlayout.<name>: the one copy
    sys.modules[name] = importlib.import_module(f"linlayout.{name}")
    if not any(isinstance(f, _RoomAliases) for f in sys.meta_path):
        sys.meta_path.insert(0, _RoomAliases())


class _RoomAliases(importlib.abc.MetaPathFinder):
    """Finds ``<room>.X`` (a room of ``ROOMS``) where the bare ``<room>`` is the package's room (``alias``
    put it there): the module ``linlayout.<room>.X``.  Another top-level ``<room>`` (a third-party
    ``kernels`` package) keeps its own submodules."""

    def find_spec(self, fullname: str, path=None, target=None):
        room, dot, _ = fullname.partition(".")
        if room not in ROOMS or not dot:
            return None
        bare = sys.modules.get(room)
        if bare is None or bare is not sys.modules.get(f"linlayout.{room}"):
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(f"linlayout.{fullname}"))


class _AliasLoader(importlib.abc.Loader):
    """Loads an alias as its module of the package: ``create_module`` imports ``linlayout.<room>.X`` and
    returns it; importlib then sets the alias's spec on it, which ``exec_module`` puts back (the module
    keeps its own name, spec and file: it is the same object under two keys of ``sys.modules``)."""

    def __init__(self, real: str) -> None:
        self.real = real
        self.spec = None

    def create_module(self, spec):
        module = importlib.import_module(self.real)
        self.spec = module.__spec__
        return module

    def exec_module(self, module) -> None:
        module.__spec__ = self.spec

    def get_code(self, fullname: str):
        """The code of ``linlayout.<room>.X`` (its own loader's): ``python -m <room>.X`` runs it (runpy)."""
        return importlib.util.find_spec(self.real).loader.get_code(self.real)
