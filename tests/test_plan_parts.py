"""benchmarks/plan_parts.py: the part timer wraps and restores the planner's entry points, and the
summary's median, middle band, means and strategies."""

import json

from benchmarks.plan_parts import PARTS, Oracle, PartTimer, band, oracle_rows, profile_rows, summary, time_parts
from benchmarks.bench_conversions_plan import BITS, CORPORA
from linlayout import LinearLayout
from linlayout.synth.context import ConversionContext
from linlayout.synth import convert, lds_path, swizzle


def test_timer_restores_the_entry_points():
    before = {(id(owner), name): getattr(owner, name) for targets in PARTS.values() for owner, name in targets}
    with PartTimer():
        assert convert.verify is not before[(id(convert), "verify")]
    after = {(id(owner), name): getattr(owner, name) for targets in PARTS.values() for owner, name in targets}
    assert after == before
    assert {(swizzle, "shared_basis"), (lds_path, "designs")} <= {t for ts in PARTS.values() for t in ts}


def test_nested_calls_of_a_part_count_once():
    timer = PartTimer()
    calls = []

    def inner():
        calls.append(1)
        return 7

    outer = timer._timed("verification", lambda: timer._timed("verification", inner)() + 1)
    assert outer() == 8 and calls == [1]
    assert list(timer.seconds) == ["verification"]


def test_summary_band_means_and_strategies():
    parts = {p: 0.0 for p in PARTS}
    rows = [{"cold_cpu_ms": t, "strategy": s, "parts": dict(parts, verification=v)}
            for t, s, v in [(1.0, "noop", 0.0), (4.0, "lds", 1.0), (4.5, "lds", 2.0), (5.0, "lanes", 3.0),
                            (9.0, "lds", 4.0)]]
    res = summary(rows)
    assert res["median_cold_cpu_ms"] == 4.5
    assert res["band_cases"] == 3  # 3.6 <= t <= 5.625
    assert res["band_mean_cold_cpu_ms"] == 4.5
    assert res["band_mean_parts_ms"]["verification"] == 2.0
    assert res["mean_parts_ms"]["verification"] == 2.0
    assert list(res["strategies"]) == ["lds", "noop", "lanes"]
    assert res["strategies"]["lds"] == {"cases": 3, "median_cold_cpu_ms": 4.5}


def test_time_parts_on_corpus_cases():
    cases = json.loads(CORPORA["amd"].read_text())["cases"][:2]
    rows = time_parts(cases, 1)
    assert [set(r["parts"]) for r in rows] == [set(PARTS)] * 2
    for r in rows:
        assert r["parts"]["verification"] > 0 and r["parts"]["swizzle"] <= r["parts"]["lds_designs"]


def test_band_is_the_middle_of_the_summary():
    rows = [{"cold_cpu_ms": t, "strategy": "lds", "parts": {p: 0.0 for p in PARTS}} for t in (1.0, 4.0, 4.5, 5.0, 9.0)]
    assert band(rows) == [1, 2, 3]
    assert summary(rows)["band_cases"] == len(band(rows))


def test_profile_rows_rank_the_planner_calls():
    cases = json.loads(CORPORA["amd"].read_text())["cases"][:2]
    res = profile_rows(cases, 5)
    assert set(res) == {"own", "cumulative"}
    top = res["cumulative"][0]
    assert top["function"].endswith(" plan_conversion") and top["function"].startswith("synth/convert.py:")
    assert top["calls"] == 1.0
    for rows in res.values():
        assert len(rows) == 5
        for r in rows:
            assert r["calls"] > 0 and 0 <= r["own_ms"] <= r["cumulative_ms"] + 1e-9
    own = [r["own_ms"] for r in res["own"]]
    assert own == sorted(own, reverse=True)


def test_oracle_plans_with_the_winning_design_alone():
    cases = json.loads(CORPORA["amd"].read_text())["cases"][:2]
    before = (lds_path.DesignPool.by_floor, convert.lds_plan, convert._in_wave_programs)
    with Oracle() as oracle:
        plan, design = oracle.winner(cases[0])
        assert plan.strategy == "lds" and design is not None
        want = plan.to_certificate()
        others = [i for pool in oracle._pools for i, accs in pool.accesses.items() if accs and i != design]
        assert others  # the pool built round trips of other designs too
        oracle.keep = design
        got = oracle.plan(cases[0])[1]
        assert got.to_certificate() == want
        assert [i for pool in oracle._pools for i in pool.accesses] == [design]
        oracle.keep = others[0]  # the restriction bites: another design alone gives another plan
        assert oracle.plan(cases[0])[1].to_certificate() != want
        oracle.keep, oracle.in_wave = design, False
        assert oracle.plan(cases[0])[1].to_certificate() == want
        c = cases[0]
        ctx = ConversionContext.create(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), c["arch"],
                                       BITS[c["dtype"]])
        assert ctx.problem.key() == oracle.problem
        assert convert._in_wave_programs(ctx, convert._wave_maps(ctx.problem)[0]) == []
    assert (lds_path.DesignPool.by_floor, convert.lds_plan, convert._in_wave_programs) == before
    res = oracle_rows(cases, 1)
    assert res["oracle_changed"] == 0 and res["own_median_cold_cpu_ms"] > 0
    for name in ("design_only", "lds_only"):
        assert res[f"{name}_median_cold_cpu_ms"] > 0 and res[f"{name}_median_ratio"] > 0


def test_oracle_keeps_the_movmatrix_stages_conversions():
    """An NVIDIA LDS winner whose movmatrix candidates plan another problem in registers: the oracle
    leaves that problem's in-wave programs (removing them changes the plan)."""
    case = next(c for c in json.loads(CORPORA["nvidia"].read_text())["cases"]
                if c["name"] == "mma2.16x8->dotBmma2.16x8(kw4)" and c["arch"] == "sm_80" and c["dtype"] == "fp8")
    with Oracle() as oracle:
        plan, design = oracle.winner(case)
        want = plan.to_certificate()
        oracle.keep, oracle.in_wave = design, False
        restricted, asked = convert._in_wave_programs, []

        def programs(ctx, *args, **kwargs):
            got = restricted(ctx, *args, **kwargs)
            asked.append((ctx.problem.key() == oracle.problem, len(got)))
            return got
        convert._in_wave_programs = programs
        try:
            assert oracle.plan(case)[1].to_certificate() == want
        finally:
            convert._in_wave_programs = restricted
        assert {n for own, n in asked if own} == {0}  # the winner's problem: no program
        assert any(n for own, n in asked if not own)  # a movmatrix stage's conversion: its programs


def test_oracle_counts_a_wrong_design_as_a_changed_plan_and_the_script_fails(monkeypatch, capsys):
    """The winner's design index replaced by another design's: its round trips give another plan, which
    ``oracle_changed`` counts, and the script prints a failure line and exits 1."""
    from benchmarks import plan_parts

    cases = json.loads(CORPORA["amd"].read_text())["cases"][:1]
    winner = Oracle.winner

    def wrong(self, case):
        plan, design = winner(self, case)
        others = [i for pool in self._pools for i, accs in pool.accesses.items() if accs and i != design]
        return plan, others[0]
    monkeypatch.setattr(Oracle, "winner", wrong)
    assert oracle_rows(cases, 1)["oracle_changed"] == 1
    monkeypatch.setattr(plan_parts, "_every_distinct", lambda cases, every: cases[:1])
    assert plan_parts.main(["--rounds", "1", "--oracle"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == "plan_parts: FAILED: 1 plans changed under the oracle (its restriction is not exact)"


def test_oracle_checks_every_round_and_keeps_the_least_time(monkeypatch):
    """Scripted calls: the least of a case's rounds is its time under each restriction, and a plan that
    differs in a round other than the last is counted."""
    from types import SimpleNamespace

    cert = SimpleNamespace(to_certificate=lambda: "A")
    other = SimpleNamespace(to_certificate=lambda: "B")
    # own 3, 5; design_only 2, 4; lds_only 1, 6 (each least first, not last) -- and design_only's first
    # round giving another plan
    calls = iter([(3.0, cert), (5.0, cert), (2.0, other), (4.0, cert), (1.0, cert), (6.0, cert)])
    monkeypatch.setattr(Oracle, "winner", lambda self, case: (cert, 0))
    monkeypatch.setattr(Oracle, "plan", lambda self, case: next(calls))
    res = oracle_rows([{}], 2)
    assert (res["own_median_cold_cpu_ms"], res["design_only_median_cold_cpu_ms"],
            res["lds_only_median_cold_cpu_ms"]) == (3.0, 2.0, 1.0)
    assert res["oracle_changed"] == 1 and res["lds_only_median_ratio"] == 1.0 / 3.0


def test_oracle_cuts_only_the_pools_of_the_winning_problem(monkeypatch):
    """``oracle.keep`` leaves a pool of the winner's problem only that design, deferred or built; a pool of
    another problem keeps every design."""
    from types import SimpleNamespace

    seen = []
    monkeypatch.setattr(lds_path.DesignPool, "by_floor", lambda pool, limit, rank_limit: seen.append(pool))

    def pool(problem):
        return SimpleNamespace(ctx=SimpleNamespace(problem=SimpleNamespace(key=lambda: problem)),
                               deferred={0: "d0", 1: "d1", 2: "d2"}, accesses={0: ["a0"], 1: ["a1"]})
    with Oracle() as oracle:
        oracle.keep, oracle.problem = 1, "P"
        mine, theirs = pool("P"), pool("Q")
        lds_path.DesignPool.by_floor(mine, 0.0, 0.0)
        lds_path.DesignPool.by_floor(theirs, 0.0, 0.0)
    assert seen == [mine, theirs]
    assert (mine.deferred, mine.accesses) == ({1: "d1"}, {1: ["a1"]})
    assert (theirs.deferred, theirs.accesses) == ({0: "d0", 1: "d1", 2: "d2"}, {0: ["a0"], 1: ["a1"]})
