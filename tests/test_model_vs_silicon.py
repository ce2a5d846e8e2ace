"""benchmarks/nvidia/model_vs_silicon.py on the CPU: the re-pricing reproduces the model's latency
value, the counts of orders and outliers on hand-made kernels, and a run on the first rows of the
recorded random run (re-planned here, checked against the run's recorded plan costs)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from nvidia_scripts import RESULTS, SCRIPTS, script

mvs = script("model_vs_silicon")
PLANS = RESULTS / "random" / "plans.json"
ROWS = 4  # rows 0..3 of seed 2: three of them with forced kernels


@pytest.fixture(scope="module")
def first_rows():
    return mvs.load_pairs(PLANS, ROWS)


def test_the_model_pricing_is_each_plans_latency_value(first_rows):
    pairs, us_per_cycle = first_rows
    assert us_per_cycle == 256 / mvs.SM_CLOCK_MHZ
    assert [len(p.kernels) for p in pairs] == [1, 3, 2, 2]
    for pair in pairs:
        for kernel in pair.kernels:
            for parts, counts, strategy in zip(kernel.parts, kernel.counts, kernel.strategies):
                assert sum(mvs.Pricing().value(parts, counts, pair.element_bits, strategy)) == parts["latency_value"]
            assert kernel.value(mvs.Pricing(), pair.element_bits) == kernel.total("latency_value")
    # a dearer latency level adds (new - 25) / 25 of each plan's latency part
    kernel = pairs[2].kernels[0]
    dearer = kernel.value(mvs.Pricing(latency_per_level=50.0), pairs[2].element_bits)
    assert dearer == kernel.total("latency_value") + kernel.total("latency")
    # the harness's overlap: the latency of one plan only, the larger
    overlapped = kernel.value(mvs.Pricing(overlap_directions=True), pairs[2].element_bits)
    assert overlapped == kernel.total("latency_value") - min(p["latency"] for p in kernel.parts)


def test_a_run_whose_plans_this_tree_prices_otherwise_is_refused(tmp_path):
    run = json.loads(PLANS.read_text())
    run["rows"] = run["rows"][:1]
    run["rows"][0]["plan"]["cost"][0] += 1.0
    (tmp_path / "plans.json").write_text(json.dumps(run))
    with pytest.raises(mvs.StaleRun, match="random s2 #0 .* the run's"):
        mvs.load_pairs(tmp_path / "plans.json")
    _refused([str(tmp_path / "plans.json")], "random s2 #0 sm_90 8b w8 latency twins: plan costs [84.0, 89.0], the run's [85.0, 89.0]")


def _refused(args: list[str], message: str):
    """The script run on ``args`` says ``message`` in one line on stderr and exits 2."""
    out = subprocess.run([sys.executable, str(SCRIPTS / "model_vs_silicon.py"), *args], capture_output=True, text=True)
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and message in out.stderr, out.stderr


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    _refused([str(tmp_path / "none.json")], "No such file or directory")
    (tmp_path / "text.json").write_text("not json")
    _refused([str(tmp_path / "text.json")], "Expecting value")
    (tmp_path / "list.json").write_text("[]")
    _refused([str(tmp_path / "list.json")], "not a run's plans.json")
    _refused([str(RESULTS / "plans.json"), "--limit", "1"], "'blog: mma fp16 accumulator -> fp8 A operand (16x32)' is not a random pair's name")
    _refused([str(PLANS), "--limit", "1", "--json", "/nonexist/x.json"], "--json /nonexist/x.json: no directory /nonexist")


def _kernel(side: str, us: float, latency_value: float, strategy: str = "lds", latency: float = 0.0) -> "mvs.Kernel":
    """A kernel of two equal plans whose latency value is ``latency_value`` each (MIO pipe and
    ``latency``), ``strategy`` both ways."""
    parts = {"simd": 0.0, "lds_pipe": latency_value - latency, "latency": latency, "ds_depth": round(latency / 25),
             "latency_value": latency_value}
    return mvs.Kernel(side, us, (strategy, strategy), ({}, {}), (parts, parts))


def test_orders_outliers_and_kind_differences_on_hand_made_kernels():
    right = mvs.Pair("a", 32, 1, "latency", 4, (_kernel("ours", 10.0, 50.0), _kernel("ours_lds", 12.0, 60.0)))
    wrong = mvs.Pair("b", 32, 1, "concurrent", 4, (_kernel("ours", 13.0, 50.0, "lanes"), _kernel("ours_lds", 10.0, 60.0)))
    close = mvs.Pair("c", 32, 1, "latency", 4, (_kernel("ours", 10.5, 50.0), _kernel("ours_lds", 10.0, 60.0)))
    alone = mvs.Pair("d", 32, 1, "latency", 4, (_kernel("ours", 10.0, 50.0),))
    pairs = [right, wrong, close, alone]
    assert mvs.rank_agreement(pairs) == {"agree": 1, "disagree": 1, "slow_picks": 1}
    # a round trip 25 cycles cheaper per plan puts the lds kernel of "b" first: both orders right
    assert mvs.rank_agreement(pairs, mvs.Pricing(round_trip_cycles=-25.0)) == {"agree": 2, "disagree": 0, "slow_picks": 0}
    assert mvs.outliers_by_objective(pairs) == {"concurrent": {"pairs": 1, "outliers": 1, "by_latency": 1},
                                                "latency": {"pairs": 2, "outliers": 0, "by_latency": 0}}
    # lanes - lds of "b": measured (13 - 10) us at 0.5 us a cycle = 6 cycles, modelled 100 - 120 = -20
    assert mvs.kind_differences([wrong], 0.5) == {"lanes - lds w1": {"kernels": 1, "median_cycles": 26.0}}
    # one shuffle level against a round trip's two: measured (10 - 11) us = -2 cycles, modelled
    # 90 - 140 = -50, as the harness runs them (one plan's latency) 65 - 90 = -25
    levels = mvs.Pair("e", 16, 2, "latency", 4, (_kernel("ours", 10.0, 45.0, "lanes", 25.0),
                                                 _kernel("ours_lds", 11.0, 70.0, "lds", 50.0)))
    assert mvs.kind_differences([levels], 0.5) == {"lanes - lds w2": {"kernels": 1, "median_cycles": 48.0}}
    assert mvs.kind_differences([levels], 0.5, mvs.HARNESS) == {"lanes - lds w2": {"kernels": 1, "median_cycles": 23.0}}


def test_the_script_writes_its_tables(first_rows, tmp_path, capsys):
    assert mvs.main([str(PLANS), "--limit", str(ROWS), "--json", str(tmp_path / "out.json")]) == 0
    result = json.loads((tmp_path / "out.json").read_text())
    assert (result["pairs"], result["with_forced"]) == (ROWS, 3)
    pairs, us_per_cycle = first_rows
    assert result["sweep"]["model"] == mvs.rank_agreement(pairs)
    assert result["kinds"] == mvs.kind_differences(pairs, us_per_cycle)
    assert result["kinds_harness"] == mvs.kind_differences(pairs, us_per_cycle, mvs.HARNESS)
    fit = mvs.fit_parts(pairs, us_per_cycle)
    assert list(fit) == [1] and fit[1]["kernels"] == 7  # the one-warp pairs' kernels; the others too few to fit
    assert result["fit"] == {"1": fit[1]}
    assert "| model | " in capsys.readouterr().out
