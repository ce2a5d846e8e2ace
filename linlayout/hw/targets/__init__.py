"""AMD GPU targets: one descriptor (:class:`Target`) per architecture, in a registry.

Each module of this package describes one target family and registers its descriptors
(:func:`register`) when the package is imported; every module here except ``base`` is
imported.  Adding a target is adding (or extending) one module: the descriptor decides the
wave size, lane operations, LDS model, matrix-instruction catalog and emitter (see
:class:`Target`).  Facts and their evidence: docs/hardware.md.
"""

from __future__ import annotations

import importlib
import pkgutil

from ...errors import LayoutError
from .base import Assumption, LdsPhase, Target

__all__ = ["Assumption", "LdsPhase", "TARGETS", "Target", "get_target", "register", "target_names", "targets_with"]

TARGETS: dict[str, Target] = {}
_ALIASES: dict[str, str] = {}


def register(target: Target) -> Target:
    """Add ``target`` (and its aliases) to the registry; a name taken twice is an error."""
    for key in (target.name, *target.aliases):
        if key in TARGETS or key in _ALIASES:
            raise ValueError(f"target name {key!r} registered twice")
    TARGETS[target.name] = target
    _ALIASES.update({a: target.name for a in target.aliases})
    return target


def target_names() -> list[str]:
    """Every registered arch, in registration order."""
    return list(TARGETS)


def targets_with(**fields: object) -> tuple[str, ...]:
    """The names of the targets whose descriptor fields equal ``fields`` (``mma="mfma"``, ...);
    a field given as True matches any set (non-empty, non-None, non-zero) value."""
    def ok(t: Target) -> bool:
        return all(bool(getattr(t, k)) if v is True else getattr(t, k) == v for k, v in fields.items())

    return tuple(t.name for t in TARGETS.values() if ok(t))


def get_target(name: str) -> Target:
    """The target called ``name`` (a gfx name, or an alias like ``cdna3``/``mi300``)."""
    target = TARGETS.get(name) if isinstance(name, str) else None
    if target is not None:  # a target's own name (what the planner passes on), looked up once
        return target
    if not isinstance(name, str):
        raise LayoutError(f"arch must be a string such as 'gfx942', got {name!r}")
    key = _ALIASES.get(name.lower(), name.lower())
    try:
        return TARGETS[key]
    except KeyError:
        raise LayoutError(f"unknown arch {name!r}; known: {', '.join(TARGETS)}") from None


for _module in pkgutil.iter_modules(__path__):
    if _module.name != "base":
        importlib.import_module(f"{__name__}.{_module.name}")
