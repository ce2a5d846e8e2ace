"""The one error type of the library."""

from __future__ import annotations

__all__ = ["LayoutError"]


class LayoutError(ValueError):
    """Bad layout input or an impossible layout operation.

    The message names the offending dim, size or basis.  The CLI turns it into
    exit status 2 and a one-line message.
    """
