"""benchmarks/store_twin_search.py on the CPU: the outcome of a plan against another, the pinned
gfx1100 store-twin case of tests/test_lds_store_twins.py (cheaper given the stored src), and the
script's table on five problems."""

from __future__ import annotations

import re
from types import SimpleNamespace

from benchmarks.store_twin_search import OUTCOMES, _plans, main, outcome, problems
from linlayout import LinearLayout, caches
from linlayout.synth.convert import plan_conversion


def _plan(cost: float, instructions: int, text: str = "a"):
    return SimpleNamespace(cost=cost, total_with_overhead=lambda: instructions, dumps=lambda: text)


def test_outcomes_compare_cost_and_instructions():
    base = _plan(60.0, 10)
    assert outcome(_plan(60.0, 10), base) == ("same plan", 0.0, 0)
    assert outcome(_plan(60.0, 10, "b"), base) == ("same price", 0.0, 0)
    assert outcome(_plan(50.0, 10, "b"), base) == ("cheaper", -10.0, 0)
    assert outcome(_plan(50.0, 8, "b"), base) == ("cheaper", -10.0, -2)
    assert outcome(_plan(50.0, 11, "b"), base) == ("trade", -10.0, 1)
    assert outcome(_plan(70.0, 9, "b"), base) == ("trade", 10.0, -1)
    assert outcome(_plan(60.0, 12, "b"), base) == ("dearer", 0.0, 2)
    assert outcome(_plan(64.0, 12, "b"), base) == ("dearer", 4.0, 2)


def test_the_pinned_gfx1100_case_is_cheaper_given_the_stored_src():
    """tests/test_lds_store_twins.py's case: 72 cycles and 14 instructions against 78 and 16."""
    shape = [("dim0", 8), ("dim1", 4)]
    src = LinearLayout({"register": [[2, 1], [0, 1]], "lane": [[2, 0], [4, 0], [1, 0], [0, 0], [0, 2]],
                        "warp": []}, shape)
    dst = LinearLayout({"register": [], "lane": [[0, 1], [1, 0], [2, 0], [4, 0], [0, 2]], "warp": []}, shape)
    today, whole = _plans(src, dst, 8, "gfx1100")
    assert outcome(today, whole) == ("cheaper", -6.0, -2)


def test_the_script_counts_five_problems(capsys):
    assert main(["--count", "5"]) == 0
    out = capsys.readouterr().out
    rows = dict(re.findall(r"^\| ([a-z ]+) \| (\d+) \|$", out, re.M))
    assert list(rows) == list(OUTCOMES) and sum(map(int, rows.values())) == 5
    # the plans the script compares are the planner's own (the patched search leaves no cached plan)
    for src, dst, element_bits, arch in problems(5, 0):
        today, _ = _plans(src, dst, element_bits, arch)
        caches.clear(keep_tables=True)
        assert today.dumps() == plan_conversion(src, dst, arch, element_bits, strategy="lds").dumps()
