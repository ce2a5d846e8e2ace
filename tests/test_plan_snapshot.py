"""benchmarks/plan_snapshot.py: the guard that a refactor changes no plan covers the corpora too."""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks import plan_snapshot  # noqa: E402
from linlayout.cli.bench import CORPORA  # noqa: E402


def test_corpora_rows_name_every_corpus_case_once():
    names = [name for name, *_ in plan_snapshot.corpora_cases()]
    assert len(names) == len(set(names)) == sum(len(json.loads(p.read_text())["cases"]) for p in CORPORA.values())
    assert {name.split("#")[0] for name in names} == set(CORPORA)


def test_a_row_is_the_plan_hash_or_the_refusal():
    name, src, dst, arch, element_bits = next(plan_snapshot.corpora_cases())
    row = plan_snapshot._row(plan_snapshot.kernel_plan, name, src, dst, arch, element_bits)
    assert len(row) == 16 and int(row, 16) >= 0  # a hash prefix
    assert row == plan_snapshot._row(plan_snapshot.kernel_plan, name, src, dst, arch, element_bits)
    refused = plan_snapshot._row(plan_snapshot.kernel_plan, name, src, dst, arch, 7)
    assert refused.startswith("error: ")
