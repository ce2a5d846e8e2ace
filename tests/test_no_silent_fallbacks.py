"""A broken tree or an internal inconsistency raises; it never makes worse plans quietly."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from linlayout import LayoutError
from linlayout.lowering import mlir
from linlayout.synth.cost import lds_conflict_degree

ROOT = Path(__file__).resolve().parents[1]


def _import_without(missing: str, module: str) -> subprocess.CompletedProcess:
    """Import ``module`` in a fresh interpreter where ``missing`` cannot be imported."""
    code = textwrap.dedent(f"""
        import sys
        sys.modules[{missing!r}] = None  # what a deleted or broken file looks like to the importer
        import {module}
    """)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("missing,module", [
    ("linlayout.synth.banks", "linlayout.synth.cost"),  # LDS accesses were all priced conflict-free
    ("linlayout.synth.swizzle", "linlayout.synth.lds_path"),  # shared layouts were all unswizzled
])
def test_a_missing_module_fails_the_import(missing, module):
    run = _import_without(missing, module)
    assert run.returncode == 1
    assert f"ModuleNotFoundError: import of {missing} halted; None in sys.modules" in run.stderr


def test_an_access_the_bank_model_rejects_is_an_error_not_conflict_free():
    lanes = np.arange(64)
    assert lds_conflict_degree("gfx942", False, 8, lanes * 8, 16) == 1.0  # one ds_read_b64 per lane, in order
    assert lds_conflict_degree("gfx942", False, 4, lanes * 8, 32) == 2.0  # ds_read_b32 2 dwords apart: 2-way
    with pytest.raises(RuntimeError, match="not one gfx942 can make.*lane 0 starts at byte 2, not aligned"):
        lds_conflict_degree("gfx942", False, 8, lanes * 8 + 2, 16)
    # a transpose load the target lacks: also reached by pricing a plan read from a certificate, so a LayoutError
    with pytest.raises(LayoutError, match="^gfx942 has no transpose load of 16-bit elements moving 8 bytes per lane; "
                                          "ds_read_b64_tr_b16 is gfx950's$"):
        lds_conflict_degree("gfx942", False, 8, lanes * 8, 16, transpose=16)


def test_only_a_missing_distribution_is_an_unknown_version(monkeypatch):
    assert mlir._dist_version("linlayout-no-such-distribution") == "unknown"

    def broken(dist):
        raise OSError("unreadable metadata")

    monkeypatch.setattr(mlir, "version", broken)
    with pytest.raises(OSError, match="unreadable metadata"):
        mlir._dist_version("flydsl")
