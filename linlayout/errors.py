"""The one error type of the library."""

from __future__ import annotations

__all__ = ["LayoutError", "require_flag"]


class LayoutError(ValueError):
    """Bad layout input or an impossible layout operation.

    The message names the offending dim, size or basis.  The CLI turns it into
    exit status 2 and a one-line message.
    """


def require_flag(name: str, value: object) -> bool:
    """``value`` where it is True or False; otherwise a LayoutError naming the flag ``name`` (an int
    such as 1 is refused: a keyword flag is a bool, never a truthy value)."""
    if not isinstance(value, bool):
        raise LayoutError(f"{name} must be True or False, got {value!r}")
    return value
