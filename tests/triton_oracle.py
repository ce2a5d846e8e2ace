"""The real Triton wheel as an oracle, run in a worker subprocess (tests/triton_worker.py).

Triton aborts the whole process on some inputs, so every query goes through a
worker; when it dies, the request it was answering is reported as
``{"error": "worker died ..."}`` and a new worker takes the rest.
"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
import tempfile
from pathlib import Path

WORKER = Path(__file__).resolve().with_name("triton_worker.py")
#: The Triton release whose layouts linlayout reproduces.
TRITON_VERSION = "3.9.0"


def triton_version() -> str | None:
    """The installed triton's version, or None."""
    try:
        return importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        return None


def ask_triton(requests: list[dict]) -> list[dict]:
    """One answer per request, in order (see tests/triton_worker.py for the request kinds)."""
    answers: list[dict] = []
    while len(answers) < len(requests):
        start = len(answers)
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
            for i, req in enumerate(requests[start:], start):
                f.write(json.dumps({**req, "i": i}) + "\n")
        proc = subprocess.Popen([sys.executable, str(WORKER), f.name], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)
        for line in proc.stdout:
            answer = json.loads(line)
            if answer["i"] != len(answers):
                raise RuntimeError(f"triton worker answered request {answer['i']}, expected {len(answers)}")
            answers.append(answer)
        rc = proc.wait()
        Path(f.name).unlink()
        if len(answers) < len(requests):
            if len(answers) == start and rc == 0:
                raise RuntimeError("triton worker exited without answering")
            answers.append({"i": len(answers), "error": f"worker died (exit status {rc})"})
    return answers
