"""Where a cold planning call spends its time: CPU time per part of ``plan_conversion``, per case.

Usage: python benchmarks/plan_parts.py [--corpus FAMILY] [--every N] [--rounds N] [--profile N] [--oracle] [--json]

Each case of benchmarks/data/triton_FAMILY_corpus.json (default amd; ``--every N``: every N-th
distinct case, as ``bench_conversions_plan.py --every``) is planned cold (``linlayout.caches.clear
(keep_tables=True)``, layouts freshly read from the JSON) ``--rounds`` times; per case the round
with the least CPU time (``time.process_time``) is kept, with the inclusive CPU time of each part
in that round.  The parts are the planner's entry points, each timed by wrapping it (which adds a
few microseconds per call; a part called inside another of the same name counts once):

* ``swizzle``: ``linlayout.synth.swizzle.shared_basis``, the shared layout's synthesis;
* ``lds_designs``: ``lds_path.designs`` and the deferred designs made on demand
  (``DesignPool._make``): the shared layouts and their accesses (``swizzle`` included);
* ``lds_round_trips``: ``convert.lds_plan``, building and pricing one LDS round trip;
* ``in_wave``: ``convert._in_wave_programs`` and ``convert._finish_in_wave``, the plans that stay in
  each wave, built as programs and priced;
* ``verification``: ``convert.verify``, the emulator's run of the returned plan.

The report gives the median cold time, the mean of each part over the cases within 0.8 to 1.25
times the median (the middle band) and over all cases, and the count and median cold time of the
cases of each strategy of the returned plan (a refused case: ``refused``).

``--profile N``: then one more cold call of each middle-band case under ``cProfile`` (the profiler on
around ``plan_conversion`` only), and the ``N`` functions of most own time and of most cumulative
time, each per case: calls, own ms and cumulative ms (``profile_rows``).  The profiler's own cost
per call stretches those times (about twice a call's CPU time in all): they rank the functions,
they do not time them; the parts above do.

``--oracle``: how much time any exact pruning could save.  Every case is planned cold ``--rounds``
times under the oracle's wrappers unrestricted (``own``: the ratios' denominator, timed under the same
wrappers as the rest, not the parts' timer); each case whose plan is an LDS round trip as many times
more with the design pool holding only the design of that round trip (``design_only``: a perfect bound
of every other design), and as many times also without the in-wave programs (``lds_only``: a perfect
bound of every in-wave candidate too); every other case keeps its ``own`` time.  Every round gives the
same plan (checked: a case with a round whose certificate differs is counted in ``oracle_changed``;
then the script prints a failure line and exits 1).  The report gives the median cold time under each
and the medians of the per-case ratios to ``own`` (``oracle_rows``).
"""

from __future__ import annotations

import cProfile
import json
import pstats
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.bench_conversions_plan import BITS, CORPORA, _every_distinct  # noqa: E402
from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout import LayoutError, LinearLayout, caches  # noqa: E402
from linlayout.synth.plan import Plan  # noqa: E402
from linlayout.synth import convert, lds_path, swizzle  # noqa: E402

PARTS = {  # part -> (owner, attribute) of the functions it times
    "swizzle": [(swizzle, "shared_basis")],
    "lds_designs": [(lds_path, "designs"), (lds_path.DesignPool, "_make")],
    "lds_round_trips": [(convert, "lds_plan")],
    "in_wave": [(convert, "_in_wave_programs"), (convert, "_finish_in_wave")],
    "verification": [(convert, "verify")],
}


class PartTimer:
    """CPU seconds spent in each part since ``reset`` (the outermost call of a part only), while
    the timer is entered (``with PartTimer() as timer``: the parts' functions are wrapped on entry
    and put back on exit)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._depth: dict[str, int] = defaultdict(int)
        self._originals: list[tuple[object, str, object]] = []

    def __enter__(self) -> "PartTimer":
        for part, targets in PARTS.items():
            for owner, name in targets:
                fn = getattr(owner, name)
                self._originals.append((owner, name, fn))
                setattr(owner, name, self._timed(part, fn))
        return self

    def __exit__(self, *exc) -> None:
        for owner, name, fn in reversed(self._originals):
            setattr(owner, name, fn)
        self._originals.clear()

    def _timed(self, part: str, fn):
        def timed(*args, **kwargs):
            self._depth[part] += 1
            start = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self._depth[part] -= 1
                if not self._depth[part]:
                    self.seconds[part] += time.process_time() - start
        return timed

    def reset(self) -> None:
        self.seconds.clear()


def time_parts(cases: list[dict], rounds: int) -> list[dict]:
    """Per case: ``cold_cpu_ms`` (the least over ``rounds`` cold calls), the parts' CPU ms in that
    call and the strategy of the plan (``refused`` for a LayoutError)."""
    rows: list[dict] = [{"cold_cpu_ms": float("inf")} for _ in cases]
    with PartTimer() as timer:
        for _ in range(rounds):
            for row, c in zip(rows, cases):
                caches.clear(keep_tables=True)
                src, dst = LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"])
                timer.reset()
                start = time.process_time()
                try:
                    strategy = convert.plan_conversion(src, dst, c["arch"], BITS[c["dtype"]]).strategy
                except LayoutError:
                    strategy = "refused"
                cpu_ms = 1000 * (time.process_time() - start)
                if cpu_ms < row["cold_cpu_ms"]:
                    row.update(cold_cpu_ms=cpu_ms, strategy=strategy,
                               parts={part: 1000 * timer.seconds.get(part, 0.0) for part in PARTS})
    return rows


def summary(rows: list[dict]) -> dict:
    """The median cold time, the parts' means over the middle band and over all cases, and per
    strategy the count and median cold time."""
    median = statistics.median(r["cold_cpu_ms"] for r in rows)
    middle = [rows[k] for k in band(rows)]
    by_strategy: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        by_strategy[r["strategy"]].append(r["cold_cpu_ms"])
    return {
        "cases": len(rows), "median_cold_cpu_ms": median, "band_cases": len(middle),
        "band_mean_cold_cpu_ms": statistics.mean(r["cold_cpu_ms"] for r in middle),
        "band_mean_parts_ms": {p: statistics.mean(r["parts"][p] for r in middle) for p in PARTS},
        "mean_parts_ms": {p: statistics.mean(r["parts"][p] for r in rows) for p in PARTS},
        "strategies": {s: {"cases": len(v), "median_cold_cpu_ms": statistics.median(v)}
                       for s, v in sorted(by_strategy.items(), key=lambda kv: -len(kv[1]))},
    }


class Oracle:
    """While entered (``with Oracle() as oracle``): ``oracle.winner(case)`` plans ``case`` cold and gives its
    plan and, where that is an LDS round trip, the index of its design in the design pool that built it
    (``lds_path.DesignPool``; ``oracle.problem``: that pool's problem key); ``oracle.keep`` (a design index
    or None) restricts the pools of that problem to that design when they are asked for round trips
    (``DesignPool.by_floor``), and ``oracle.in_wave`` False leaves ``convert._in_wave_programs`` without
    programs for that problem (the pools and programs of the other problems a plan is made of, NVIDIA's
    movmatrix stages' conversions, stay as they are).  The planner's functions are put back on exit."""

    def __init__(self) -> None:
        self.keep: int | None = None
        self.in_wave = True
        self.problem = None  # the problem key of the pool of the winning design
        self._pools: list = []
        self._accesses: dict[int, object] = {}  # id of an LDS plan -> its round trip
        self._originals: list[tuple[object, str, object]] = []

    def __enter__(self) -> "Oracle":
        by_floor, lds_plan, in_wave = lds_path.DesignPool.by_floor, convert.lds_plan, convert._in_wave_programs

        def restricted(pool, limit, rank_limit):
            self._pools.append(pool)
            if self.keep is not None and pool.ctx.problem.key() == self.problem:
                for i in [i for i in pool.deferred if i != self.keep]:
                    del pool.deferred[i]
                for i in [i for i in pool.accesses if i != self.keep]:
                    del pool.accesses[i]
            return by_floor(pool, limit, rank_limit)

        def recorded(ctx, acc):
            plan = lds_plan(ctx, acc)
            self._accesses[id(plan)] = acc
            return plan

        def programs(ctx, *args, **kwargs):
            return in_wave(ctx, *args, **kwargs) if self.in_wave or ctx.problem.key() != self.problem else []
        for owner, name, fn in ((lds_path.DesignPool, "by_floor", restricted), (convert, "lds_plan", recorded),
                                (convert, "_in_wave_programs", programs)):
            self._originals.append((owner, name, getattr(owner, name)))
            setattr(owner, name, fn)
        return self

    def __exit__(self, *exc) -> None:
        for owner, name, fn in reversed(self._originals):
            setattr(owner, name, fn)
        self._originals.clear()

    def plan(self, case: dict) -> tuple[float, Plan | None]:
        """CPU ms of one cold call of ``case`` and its plan (None: refused)."""
        caches.clear(keep_tables=True)
        self._pools.clear()
        self._accesses.clear()
        src, dst = LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])
        start = time.process_time()
        try:
            plan = convert.plan_conversion(src, dst, case["arch"], BITS[case["dtype"]])
        except LayoutError:
            plan = None
        return 1000 * (time.process_time() - start), plan

    def winner(self, case: dict) -> tuple[Plan | None, int | None]:
        """``case``'s plan, unrestricted, and the pool index of its design (None unless an LDS round trip);
        sets ``problem``."""
        self.keep, self.in_wave, self.problem = None, True, None
        plan = self.plan(case)[1]
        acc = self._accesses.get(id(plan))
        for pool in self._pools:
            for i, accs in pool.accesses.items():
                if any(a is acc for a in accs):
                    self.problem = pool.ctx.problem.key()
                    return plan, i
        return plan, None


def oracle_rows(cases: list[dict], rounds: int) -> dict:
    """``--oracle``'s report: per case the least of ``rounds`` cold calls unrestricted (``own``), with the
    pool holding only the winning design (``design_only``) and also without in-wave programs
    (``lds_only``), where the plan is an LDS round trip (else its ``own`` time), all under the oracle's
    wrappers; their medians, the medians of the per-case ratios to ``own``, and ``oracle_changed``, the
    cases with a round whose plan differs from the unrestricted winner's (should be 0)."""
    own, design_only, lds_only, changed = [], [], [], 0
    with Oracle() as oracle:
        for case in cases:
            plan, design = oracle.winner(case)
            want = None if plan is None else plan.to_certificate()
            ms, differs = _least_of_rounds(oracle, case, rounds, want)
            own.append(ms)
            times = {True: ms, False: ms}
            if design is not None:
                for in_wave in (True, False):
                    oracle.keep, oracle.in_wave = design, in_wave
                    times[in_wave], moved = _least_of_rounds(oracle, case, rounds, want)
                    differs |= moved
                oracle.keep, oracle.in_wave = None, True
            design_only.append(times[True])
            lds_only.append(times[False])
            changed += differs
    out = {"oracle_changed": changed, "own_median_cold_cpu_ms": statistics.median(own)}
    for name, times in (("design_only", design_only), ("lds_only", lds_only)):
        out[f"{name}_median_cold_cpu_ms"] = statistics.median(times)
        out[f"{name}_median_ratio"] = statistics.median(t / o for t, o in zip(times, own))
    return out


def _least_of_rounds(oracle: Oracle, case: dict, rounds: int, want) -> tuple[float, bool]:
    """The least CPU ms of ``rounds`` cold calls of ``case`` under ``oracle`` as it is set, and whether any
    call's plan certificate (None: refused) differs from ``want``."""
    best, differs = float("inf"), False
    for _ in range(rounds):
        ms, got = oracle.plan(case)
        best = min(best, ms)
        differs |= (None if got is None else got.to_certificate()) != want
    return best, differs


def band(rows: list[dict]) -> list[int]:
    """The indices of the middle band's rows: cold CPU time within 0.8 to 1.25 times the median."""
    median = statistics.median(r["cold_cpu_ms"] for r in rows)
    return [k for k, r in enumerate(rows) if 0.8 * median <= r["cold_cpu_ms"] <= 1.25 * median]


def profile_rows(cases: list[dict], top: int) -> dict[str, list[dict]]:
    """One cold call of each of ``cases`` under cProfile: the ``top`` functions by own time
    (``"own"``) and by cumulative time (``"cumulative"``), each ``{"function": "PATH:LINE NAME",
    "calls", "own_ms", "cumulative_ms"}`` per case (paths from the repository root)."""
    prof = cProfile.Profile()
    for c in cases:
        caches.clear(keep_tables=True)
        src, dst = LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"])
        prof.enable()
        try:
            convert.plan_conversion(src, dst, c["arch"], BITS[c["dtype"]])
        except LayoutError:
            pass
        finally:
            prof.disable()
    n = max(1, len(cases))
    rows = [{"function": f"{_short(path)}:{line} {name}", "calls": calls / n, "own_ms": 1000 * own / n,
             "cumulative_ms": 1000 * cum / n}
            for (path, line, name), (_, calls, own, cum, _) in pstats.Stats(prof).stats.items()]
    return {key: sorted(rows, key=lambda r: -r[f"{key}_ms"])[:top] for key in ("own", "cumulative")}


def _short(path: str) -> str:
    """``path`` from the repository root when it lies inside it (a built-in: as pstats names it)."""
    try:
        return str(Path(path).resolve().relative_to(REPO))
    except ValueError:
        return path


def _text(res: dict) -> str:
    lines = [f"cases {res['cases']}, median cold {res['median_cold_cpu_ms']:.2f} ms CPU; "
             f"middle band (0.8 to 1.25 x median) {res['band_cases']} cases, mean {res['band_mean_cold_cpu_ms']:.2f} ms",
             f"{'part':16s} {'band mean':>9s} {'all mean':>9s}  ms"]
    lines += [f"{p:16s} {res['band_mean_parts_ms'][p]:9.2f} {res['mean_parts_ms'][p]:9.2f}" for p in PARTS]
    lines.append("strategy: cases, median cold ms")
    lines += [f"  {s:10s} {v['cases']:4d} {v['median_cold_cpu_ms']:7.2f}" for s, v in res["strategies"].items()]
    if "oracle" in res:
        o = res["oracle"]
        lines.append("oracle (unrestricted / LDS winners planned with their design alone / also without in-wave "
                     f"programs, all under its wrappers): median cold {o['own_median_cold_cpu_ms']:.2f} / "
                     f"{o['design_only_median_cold_cpu_ms']:.2f} / "
                     f"{o['lds_only_median_cold_cpu_ms']:.2f} ms, per-case ratio medians "
                     f"{o['design_only_median_ratio']:.3f} / {o['lds_only_median_ratio']:.3f}; "
                     f"plans changed {o['oracle_changed']}")
    for key, rows in res.get("profile", {}).items():
        lines.append(f"middle band under cProfile, by {key} time: calls, own ms, cumulative ms per case")
        lines += [f"  {r['calls']:8.1f} {r['own_ms']:7.3f} {r['cumulative_ms']:7.3f}  {r['function']}" for r in rows]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = ScriptParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="amd", choices=sorted(CORPORA), metavar="FAMILY")
    ap.add_argument("--every", type=int, default=1, metavar="N", help="every N-th distinct case only")
    ap.add_argument("--rounds", type=int, default=2, help="cold calls per case; the least CPU time is kept")
    ap.add_argument("--profile", type=int, default=0, metavar="N",
                    help="then profile the middle band's cold calls: the N functions of most own and cumulative time")
    ap.add_argument("--oracle", action="store_true",
                    help="then time the LDS winners with their design alone, and also without in-wave programs")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.every < 1 or args.rounds < 1 or args.profile < 0:
        ap.error("--every and --rounds must be at least 1, --profile at least 0")
    cases = _every_distinct(json.loads(CORPORA[args.corpus].read_text())["cases"], args.every)
    rows = time_parts(cases, args.rounds)
    res = summary(rows)
    if args.profile:
        res["profile"] = profile_rows([cases[k] for k in band(rows)], args.profile)
    if args.oracle:
        res["oracle"] = oracle_rows(cases, args.rounds)
    print(json.dumps(res, indent=1) if args.json else _text(res))
    if res.get("oracle", {}).get("oracle_changed"):
        print(f"plan_parts: FAILED: {res['oracle']['oracle_changed']} plans changed under the oracle "
              "(its restriction is not exact)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
