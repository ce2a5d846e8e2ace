"""How the scripts of benchmarks/ and benchmarks/nvidia/ read their command line: :class:`ScriptParser`.

A bad argument is one line on stderr, ``PROG: error: MESSAGE``, and exit status 2 (the project's
rule for bad input, as for the ``linlayout`` command, whose ``linlayout.argparsing.Parser`` raises a
LayoutError its ``main`` prints); argparse's own ``error`` prints the usage line first.

Standard library only, so that importing it imports no linlayout: ``plan_timing.py`` reads its
options before it imports the linlayout of the tree it times, and ``nvidia/plan_runner.py`` runs
on the GPU machine with numpy and CuPy alone.  A script imports it as ``benchmarks.script_args``
with the repository root on ``sys.path``.
"""

from __future__ import annotations

import argparse

__all__ = ["ScriptParser"]


class ScriptParser(argparse.ArgumentParser):
    """argparse whose errors are one line ``PROG: error: MESSAGE`` (whitespace runs made single
    spaces) and exit status 2."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}\n")
