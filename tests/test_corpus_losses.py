"""benchmarks/corpus_losses.py: every case of the AMD corpora has a kind, and rows that are not the
whole corpus are refused in one line."""

import json

import pytest

from benchmarks.bench_conversions_plan import CORPORA
from benchmarks.corpus_losses import kind, main


@pytest.mark.parametrize("family", ["amd", "wave32"])
def test_every_case_has_a_kind(family):
    cases = json.loads(CORPORA[family].read_text())["cases"]
    kinds = {kind(c) for c in cases}
    families = {"mfma", "dot", "blocked"} | ({"wmma"} if family == "wave32" else set())
    assert kinds <= {"1-D slice", "register-only"} | {f"{a} -> {b}" for a in families for b in families}
    assert {"1-D slice", "register-only"} <= kinds and any(k.startswith("wmma" if family == "wave32" else "mfma")
                                                           for k in kinds)


def test_rows_of_part_of_the_corpus_are_refused(tmp_path, capsys, monkeypatch):
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps({"cases": [{"set": "wave32", "name": "x", "arch": "gfx1100", "dtype": "fp16"}]}))
    monkeypatch.setattr("sys.argv", ["corpus_losses.py", str(rows), "--corpus", str(CORPORA["wave32"])])
    with pytest.raises(SystemExit) as e:
        main()
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and err[-1].endswith("1 bench rows for 615 corpus cases: run the whole corpus")


@pytest.mark.parametrize("content, reason", [(None, "FileNotFoundError"), ('{"x": 1}', "KeyError: 'cases'"),
                                             ("not json", "JSONDecodeError")])
def test_unreadable_rows_are_refused_in_one_line(tmp_path, capsys, monkeypatch, content, reason):
    rows = tmp_path / "rows.json"
    if content is not None:
        rows.write_text(content)
    monkeypatch.setattr("sys.argv", ["corpus_losses.py", str(rows)])
    with pytest.raises(SystemExit) as e:
        main()
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and f"rows {rows}: not a JSON file with a 'cases' list ({reason}" in err[-1]
