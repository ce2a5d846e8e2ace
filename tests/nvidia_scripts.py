"""The scripts of benchmarks/nvidia loaded as modules, and whether an sm_90 GPU is here for the
tests that run them on one."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent.parent / "benchmarks" / "nvidia"
RESULTS = SCRIPTS / "results"


def script(name: str):
    """``benchmarks/nvidia/<name>.py`` as a module (registered, so that its dataclasses resolve)."""
    spec = importlib.util.spec_from_file_location(f"nvidia_{name}", SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def sm90_gpu(tools: tuple[str, ...], modules: tuple[str, ...] = ()) -> bool:
    """Whether ``nvidia-smi`` reports a compute capability 9.0 GPU and every program in ``tools`` and
    Python module in ``modules`` is here."""
    if not all(shutil.which(t) for t in ("nvidia-smi",) + tools):
        return False
    if not all(importlib.util.find_spec(m) for m in modules):
        return False
    out = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                         capture_output=True, text=True)
    return out.returncode == 0 and out.stdout.strip().startswith("9.0")
