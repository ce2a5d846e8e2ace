"""Running Python in a fresh process, with the repository and tests/ importable.

For code that must not share the test session's process: ``flydsl.expr`` registers FlyDSL's
value casters on the MLIR bindings process-wide (tests/test_flydsl_live.py says what breaks).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_python(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """``python ARGS`` in a fresh process (output captured as text)."""
    path = os.pathsep.join(p for p in (str(ROOT), str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")) if p)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": path})
