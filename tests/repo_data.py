"""The facts and figures the tests check against, read from the repository.

* ``tests/data/triton_vectors_public.json``: layouts and algebra results from Triton's unit
  tests (``vectors``: ``kind``, ``params``, ``expected``);
* ``tests/data/mfma_oracle/*.json``: five MFMA register-layout tables printed by AMD's matrix
  instruction calculator;
* ``benchmarks/data/triton_amd_baseline.json``: Triton 3.9's instruction counts for 48 AMD
  layout conversions (the benchmark baseline, read from its one place);
* ``benchmarks/data/triton_amd_corpus.json``: the same for the public corpus that
  ``benchmarks/make_corpus.py`` generates;
* ``benchmarks/data/triton_<family>_corpus.json``: its corpora of other target families
  (``nvidia``: sm_80/sm_90 PTX counts; ``wave32``: gfx1100/gfx1200/gfx1250 amdgcn counts).

``tests/data/README.md`` says where each came from.  They are part of the repository: a
missing file is an error (``FileNotFoundError``), never a skip.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
TRITON_VECTORS = DATA / "triton_vectors_public.json"
MFMA_ORACLE_DIR = DATA / "mfma_oracle"
TRITON_BASELINE = REPO / "benchmarks" / "data" / "triton_amd_baseline.json"
TRITON_CORPUS = REPO / "benchmarks" / "data" / "triton_amd_corpus.json"
#: The corpora of the other target families, by family name.
FAMILY_CORPORA = {family: TRITON_CORPUS.with_name(f"triton_{family}_corpus.json")
                  for family in ("amd", "nvidia", "wave32")}

__all__ = ["REPO", "DATA", "TRITON_VECTORS", "MFMA_ORACLE_DIR", "TRITON_BASELINE", "TRITON_CORPUS",
           "FAMILY_CORPORA", "triton_vectors", "baseline_cases", "corpus", "family_corpus", "mfma_oracle_files"]


@functools.cache
def _vectors() -> tuple[dict, ...]:
    return tuple(json.loads(TRITON_VECTORS.read_text())["vectors"])


def triton_vectors(kind: str | None = None, *, prefix: str | tuple[str, ...] | None = None) -> list[dict]:
    """Triton's vectors: all of them, those of one ``kind``, or those whose kind starts with ``prefix``."""
    return [v for v in _vectors()
            if (kind is None or v["kind"] == kind) and (prefix is None or v["kind"].startswith(prefix))]


@functools.cache
def _baseline() -> tuple[dict, ...]:
    return tuple(json.loads(TRITON_BASELINE.read_text())["cases"])


def baseline_cases() -> list[dict]:
    """The 48 cases of Triton's measured baseline, in file order."""
    return list(_baseline())


@functools.cache
def corpus() -> dict:
    """The whole corpus file (``format``, ``triton``, ``method``, ``cases``, ``failed``)."""
    return json.loads(TRITON_CORPUS.read_text())


@functools.cache
def family_corpus(family: str) -> dict:
    """The corpus file of a target family (``amd``, ``nvidia``, ``wave32``), whole."""
    return json.loads(FAMILY_CORPORA[family].read_text())


def mfma_oracle_files() -> list[Path]:
    """The calculator tables, sorted by name; raises if the folder holds none."""
    files = sorted(MFMA_ORACLE_DIR.glob("*.json"))
    if not files:
        raise FileNotFoundError(f"no calculator tables in {MFMA_ORACLE_DIR}")
    return files
