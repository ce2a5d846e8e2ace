"""benchmarks/warp_part.py --summary: the accuracy line over the rows a run printed (one JSON object a plan:
its setup estimate by key and its compiled setup)."""

import json

from benchmarks.warp_part import main, summary


def _row(estimate: dict, total: int) -> str:
    return json.dumps({"name": "x", "estimate": estimate, "setup": {"total": total, "valu": total, "salu": 0,
                                                                      "delay": 0}})


def test_summary_counts_exact_within_one_sum_and_median(tmp_path, capsys):
    # compiled - estimate: 0, 1, -3, 2 -> exact 1, within one 2, sum 0, median (0 + 1) / 2
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join([_row({"valu_lds_addr": 5}, 5), _row({"valu_lds_addr": 3, "salu_vcc": 1}, 5),
                               _row({"valu_lds_addr": 7}, 4), _row({}, 2)]) + "\n")
    line = ("4 plans: compiled setup = estimate 1, within one 2; compiled - estimate: sum 0, median 0.5")
    assert summary(rows) == line
    assert main(["--summary", str(rows)]) == 0
    assert capsys.readouterr().out.strip() == line


def test_summary_of_no_rows(tmp_path):
    rows = tmp_path / "empty.jsonl"
    rows.write_text("\n")
    assert summary(rows) == f"{rows}: no rows"
