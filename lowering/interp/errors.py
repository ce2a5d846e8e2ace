"""The interpreter's error type."""

from __future__ import annotations

from typing import Optional

from linlayout.errors import LayoutError

__all__ = ["InterpreterError"]


class InterpreterError(LayoutError):
    """The MLIR cannot be interpreted, or executing it hit undefined behaviour.

    ``op`` is the MLIR operation name and ``location`` its source position (``line:col`` of
    the module text) when the error belongs to one operation.
    """

    def __init__(self, message: str, op: Optional[str] = None, location: Optional[str] = None):
        self.op = op
        self.location = location
        where = ""
        if op:
            where = f"{op}" + (f" at {location}" if location else "") + ": "
        super().__init__(where + message)
