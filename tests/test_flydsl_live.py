"""The tests that build live FlyDSL objects (tests/flydsl_live/*_live.py), each file run by pytest
in a process of its own.

Importing ``flydsl.expr`` registers FlyDSL's value casters on the MLIR bindings for the whole
process: from then on every value of a builtin type (integers, floats, vectors) comes back as a
FlyDSL wrapper whose ``==`` builds an MLIR comparison, and linlayout's interpreter and emitters,
which use the same bindings, stop working (the interpreter's value lookups fail with "An MLIR
function requires a Context"; patched, the emitters then abort the process).  ``linlayout.flydsl`` imports ``flydsl.expr``, so
its tests must not share a process with the rest of the suite.
"""

from __future__ import annotations

import sys

import pytest

import needs
from isolated import ROOT, run_python

needs.module("flydsl")

LIVE = ROOT / "tests" / "flydsl_live"


@pytest.mark.parametrize("module", sorted(p.name for p in LIVE.glob("*_live.py")))
def test_live_flydsl_module(module):
    run = run_python("-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "python_files=*_live.py", str(LIVE / module))
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]  # 5 would mean: no test collected


def test_the_suite_process_has_not_imported_flydsl_expr():
    assert "flydsl.expr" not in sys.modules
