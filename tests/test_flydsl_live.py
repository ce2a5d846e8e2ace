"""The tests that build live FlyDSL objects (tests/flydsl_live/*_live.py), each file run by pytest
in a process of its own.

Importing ``flydsl.expr`` registers FlyDSL's value casters on the MLIR bindings for the whole
process (every value of a builtin type then comes back as a FlyDSL wrapper that needs a current
MLIR context).  linlayout's interpreter copes (it works inside its module's context, and
tests/test_flydsl_kernels.py runs kernels in the suite's process), but these files build many live
objects and run each in a process of its own, independent of the suite's order.
"""

from __future__ import annotations

import pytest

import needs
from isolated import ROOT, run_python

needs.module("flydsl")

LIVE = ROOT / "tests" / "flydsl_live"


@pytest.mark.parametrize("module", sorted(p.name for p in LIVE.glob("*_live.py")))
def test_live_flydsl_module(module):
    run = run_python("-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "python_files=*_live.py", str(LIVE / module))
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]  # 5 would mean: no test collected

