"""benchmarks/corpus_losses.py: every case of the three corpora has a kind, NVIDIA rows (PTX counts)
are tabled in their classes, and rows that are not the whole corpus are refused in one line."""

import json

import pytest

from benchmarks.bench_conversions_plan import CORPORA
from benchmarks.corpus_losses import kind, main


@pytest.mark.parametrize("family", ["amd", "nvidia", "wave32"])
def test_every_case_has_a_kind(family):
    cases = json.loads(CORPORA[family].read_text())["cases"]
    kinds = {kind(c) for c in cases}
    families = {"dot", "blocked"} | {"amd": {"mfma"}, "nvidia": {"mma"}, "wave32": {"wmma"}}[family]
    assert kinds <= {"1-D slice", "register-only"} | {f"{a} -> {b}" for a in families for b in families}
    first = {"amd": "mfma", "nvidia": "mma", "wave32": "wmma"}[family]
    assert {"1-D slice", "register-only"} <= kinds and any(k.startswith(first) for k in kinds)


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


def test_nvidia_rows_are_tabled_in_ptx_classes(tmp_path, capsys, monkeypatch):
    """Rows of ``bench conversions --corpus nvidia`` (PTX counts, no ``lds_write`` key): three cases
    benched, the others given as the planner's refusals, one case's count raised by a ``shfl.sync``
    so that it loses: the summary, the kind table (``mma``) and the losing case with both mixes in
    PTX classes are printed, no traceback."""
    from linlayout.cli import main as cli

    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    assert cli(["bench", "conversions", "--corpus", "nvidia", "--cases", "3", "--json"]) == 0
    benched = json.loads(capsys.readouterr().out)["cases"]
    cases = json.loads(CORPORA["nvidia"].read_text())["cases"]
    losing = dict(benched[0], ours=dict(benched[0]["ours"]))
    losing["ours"]["shfl.sync"] += cases[0]["triton"]["total"]
    losing["ours"]["total"] += cases[0]["triton"]["total"]
    rows = [losing] + benched[1:] + [{"name": c["name"], "arch": c["arch"], "dtype": c["dtype"], "set": "nvidia",
                                      "triton_total": c["triton"]["total"], "refused": "not benched here"}
                                     for c in cases[3:]]
    path = tmp_path / "rows.json"
    path.write_text(json.dumps({"cases": rows}))
    monkeypatch.setattr("sys.argv", ["corpus_losses.py", str(path), "--corpus", str(CORPORA["nvidia"])])
    main()
    out = capsys.readouterr().out
    assert out.startswith(f"cases 3 (refused {len(cases) - 3}): ")
    assert "whole conversions (ours against Triton's), 3 cases (load/store-side VALU not measured on 3)" in out
    assert f"| {kind(cases[0])} | " in out and kind(cases[0]).startswith("mma -> ")
    loss = next(ln for ln in out.splitlines() if ln.startswith(f"| {kind(cases[0])} | `{cases[0]['name']}`"))
    assert f"| {losing['ours']['total']} | {cases[0]['triton']['total']} | " in loss
    assert f"shfl.sync {losing['ours']['shfl.sync']}" in loss and "valu" not in loss


def test_rows_of_an_older_bench_are_refused_in_one_line(tmp_path, capsys, monkeypatch):
    """Rows with Triton's whole conversion but no ``ours_whole`` (an older ``linlayout bench``, which
    counted ours without its setup) are refused in one line before any count, not read as ours (a
    KeyError traceback in the summary)."""
    rows = tmp_path / "rows.json"
    row = {"set": "wave32", "name": "x", "arch": "gfx1100", "dtype": "fp16", "triton_whole": {"total": 3},
           "ours": {"total": 2}}
    # no ours_whole (before the whole conversion was ours too), and an ours_whole of an older rule
    # (before our setup and store addresses were counted in it)
    for older in (row, dict(row, ours_whole={"total": 2}, ours_setup=None)):
        rows.write_text(json.dumps({"cases": [older]}))
        monkeypatch.setattr("sys.argv", ["corpus_losses.py", str(rows), "--corpus", str(CORPORA["wave32"])])
        with pytest.raises(SystemExit) as e:
            main()
        err = capsys.readouterr().err.strip().splitlines()
        assert (e.value.code, err[-1]) == (2, f"corpus_losses.py: error: rows {rows}: made by an older linlayout "
                                              "bench (its ours_whole counted otherwise): run it again")
