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
    row = plan_snapshot._row(plan_snapshot.kernel_plan, src, dst, arch, element_bits)
    assert len(row) == 16 and set(row) <= set("0123456789abcdef")  # a hash prefix
    assert row == plan_snapshot._row(plan_snapshot.kernel_plan, src, dst, arch, element_bits)
    assert row != plan_snapshot._row(plan_snapshot.kernel_plan, dst, src, arch, element_bits)
    refused = plan_snapshot._row(plan_snapshot.kernel_plan, src, dst, arch, 7)
    assert refused.startswith("error: ")


def test_check_refuses_a_snapshot_of_other_options(tmp_path, monkeypatch, capsys):
    """A snapshot written with ``--corpora`` checked without it (or the other way) names the mismatch
    and fails, instead of listing every row as changed or passing on the rows it shares."""
    snap = tmp_path / "snap.txt"
    every_case = plan_snapshot.corpora_cases
    monkeypatch.setattr(plan_snapshot, "corpora_cases", lambda: list(every_case())[:2])
    for argv, code in ((["--write", str(snap), "--random", "0", "--corpora"], 0),
                       (["--check", str(snap), "--random", "0", "--corpora"], 0),
                       (["--check", str(snap), "--random", "0"], 1)):
        monkeypatch.setattr("sys.argv", ["plan_snapshot.py", *argv])
        assert plan_snapshot.main() == code
    out = capsys.readouterr().out
    assert "50 of 50 certificates unchanged" in out
    assert "the snapshot has 2 rows this run does not make and lacks 0 it makes" in out
