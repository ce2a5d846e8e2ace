"""Helpers for the kernel tests: run a kernel's command line in-process and return its JSON."""

from __future__ import annotations

import importlib
import json


def run_cli(capsys, name: str, *argv: str) -> tuple[int, dict]:
    """``python -m linlayout.kernels.<name> ARGV --json`` in-process: (exit status, printed JSON)."""
    mod = importlib.import_module(f"linlayout.kernels.{name}")
    doc = (mod.__doc__ or "").split("\n\n")[0]
    status = mod.common.main(name, doc, mod.add_arguments, mod.build, mod.make_case, list(argv) + ["--json"])
    out = capsys.readouterr().out
    return status, json.loads(out)
