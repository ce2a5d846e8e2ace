"""How far the LDS design pool's bounds lie below the round trips they bound, and what a tighter one would prune.

Usage: python benchmarks/design_bounds.py [--corpus FAMILY] [--every N] [--json]

Each case of benchmarks/data/triton_FAMILY_corpus.json (default amd; ``--every N``: every N-th distinct
case, as ``bench_conversions_plan.py --every``) is planned cold once with ``lds_path.DesignPool.by_floor``
wrapped.  For every deferred design that a ``by_floor`` call makes (``DesignPool._make``, its CPU time
taken) and that gives round trips, not read with transpose loads, once the call ends the wrapper compares
the design's bounds (``_Deferred.bounds().cost``, ``_Deferred.instructions()``: those by_floor ranked it
by) with its round trip of least plan-floor rank value (``LdsAccesses.plan_floor``), and splits the gap
into the parts of ``prefix_floor``'s bound of the design's own layout (``_whole_prefix``: no row left
free) against that round trip's: the accesses' issue and LDS-pipe cycles (``_prefix_parts`` and the
barriers' issue against ``LdsAccesses._floor_parts``), the address VALU (``prefix_address_valu`` against
``address_valu``) and the register steps (``register_steps``: permutes and tuple copies, no part of the
bound).  A design is *needless* where every round trip's plan floor has a rank value above the call's
rank limit when it ends (an exact design floor would have left it unmade), and *address-pruned* where
the bound of its own layout with the least ``address_valu`` of its round trips in place of
``prefix_address_valu`` is above that limit too (what an exact address-VALU floor alone would prune).

The wrapper works out floors the planner may not have (after each call: no plan changes, but the times
stretch); the report gives counts, means and medians of the gaps, and the ``_make`` CPU time per case of
every made design and of the needless ones (their round trips' floors not included).
"""
from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.bench_conversions_plan import BITS, CORPORA, _every_distinct  # noqa: E402
from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout import LayoutError, LinearLayout, caches  # noqa: E402
from linlayout.synth import convert, lds_path  # noqa: E402

GAPS = ("cost", "instructions", "issue", "pipe", "address_valu", "perms", "copies")


class BoundRecorder:
    """While entered: ``rows``, one per design made by ``DesignPool.by_floor`` (module docstring), each
    ``{"bound": (cost, instructions), "exact": (cost, instructions), "gaps": {GAPS: ...}, "needless",
    "address_pruned", "make_s"}``; ``cases`` counts the cold calls (``plan``)."""

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self.cases = 0
        self._made: list[list[tuple[int, float]]] = []  # per open by_floor call: (design, _make CPU s)
        self._originals: dict = {}

    def __enter__(self) -> "BoundRecorder":
        pool = lds_path.DesignPool
        self._originals = {"by_floor": pool.by_floor, "_make": pool._make}
        by_floor, make = pool.by_floor, pool._make
        recorder = self

        def timed_make(self, i):
            t = time.process_time()
            got = make(self, i)
            if recorder._made:
                recorder._made[-1].append((i, time.process_time() - t))
            return got

        def recorded(self, limit, rank_limit):
            bounds = {i: (d.bounds().cost, d.instructions()) for i, d in self.deferred.items()}
            recorder._made.append([])
            try:
                yield from by_floor(self, limit, rank_limit)
            finally:
                for i, make_s in recorder._made.pop():
                    row = design_row(self, i, bounds[i], rank_limit())
                    if row is not None:
                        recorder.rows.append(dict(row, make_s=make_s))
        pool.by_floor, pool._make = recorded, timed_make
        return self

    def __exit__(self, *exc) -> None:
        for name, fn in self._originals.items():
            setattr(lds_path.DesignPool, name, fn)

    def plan(self, case: dict) -> None:
        """One cold call of ``case`` (a refusal is no error)."""
        caches.clear(keep_tables=True)
        src, dst = LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])
        self.cases += 1
        try:
            convert.plan_conversion(src, dst, case["arch"], BITS[case["dtype"]])
        except LayoutError:
            pass


def design_row(pool: lds_path.DesignPool, i: int, bound: tuple[float, int], rank_limit: float) -> dict | None:
    """The row of made design ``i`` of ``pool`` (``BoundRecorder``), ``bound`` its deferred bounds (cost,
    instructions) and ``rank_limit`` the call's rank limit at its end; None for a design without round
    trips, one read with transpose loads, or one whose bound is infinite (not made by a bound)."""
    accesses = pool.accesses.get(i, [])
    if not accesses or accesses[0].design.read_transpose or bound[0] == float("inf"):
        return None
    ctx, cm = pool.ctx, pool.ctx.cost_model
    best = min(accesses, key=lambda a: cm.rank_value(*a.plan_floor()))
    design = best.design
    prefix, reps = lds_path._whole_prefix(design)
    issue, pipe = lds_path._prefix_parts(ctx, prefix, reps, design.over_fetch)
    address_valu = lds_path.prefix_address_valu(ctx, prefix, reps, design.over_fetch)
    least_valu = min(a.address_valu for a in accesses)
    valu_bound = lds_path._DeferredBounds.of(ctx, issue, pipe, len(reps), least_valu).cost
    valu_instructions = lds_path.prefix_instructions(ctx, prefix, reps, design.over_fetch, least_valu)
    exact = best.plan_floor()
    exact_issue, exact_pipe = best._floor_parts()
    perms, copies = best.register_steps()
    return {"bound": bound, "exact": exact,
            "gaps": {"cost": exact[0] - bound[0], "instructions": exact[1] - bound[1],
                     "issue": exact_issue - issue - lds_path._barrier_issue(ctx, len(reps)), "pipe": exact_pipe - pipe,
                     "address_valu": best.address_valu - address_valu, "perms": perms, "copies": copies},
            "needless": min(cm.rank_value(*a.plan_floor()) for a in accesses) > rank_limit,
            "address_pruned": cm.rank_value(valu_bound, valu_instructions) > rank_limit}


def summary(recorder: BoundRecorder) -> dict:
    """Counts, and per gap its mean and median over the made designs and over the needless ones; the
    ``_make`` CPU ms per case of each; the designs whose bound is above the exact plan floor (none
    where the bounds are lower bounds)."""
    rows, n = recorder.rows, max(1, recorder.cases)
    needless = [r for r in rows if r["needless"]]

    def gaps(rs: list[dict]) -> dict:
        return {g: {"mean": statistics.mean(r["gaps"][g] for r in rs),
                    "median": statistics.median(r["gaps"][g] for r in rs)}
                for g in GAPS} if rs else {}
    return {"cases": recorder.cases, "made": len(rows), "needless": len(needless),
            "address_pruned": sum(r["address_pruned"] for r in rows),
            "above_exact": sum(r["bound"][0] > r["exact"][0] or r["bound"][1] > r["exact"][1] for r in rows),
            "make_ms_per_case": 1000 * sum(r["make_s"] for r in rows) / n,
            "needless_make_ms_per_case": 1000 * sum(r["make_s"] for r in needless) / n,
            "gaps": gaps(rows), "needless_gaps": gaps(needless)}


def _text(res: dict) -> str:
    lines = [f"cases {res['cases']}: designs made {res['made']}, needless {res['needless']} "
             f"(address-pruned {res['address_pruned']}), bounds above the exact floor {res['above_exact']}",
             f"_make CPU per case: {res['make_ms_per_case']:.3f} ms, of needless designs "
             f"{res['needless_make_ms_per_case']:.3f} ms",
             f"{'gap (exact - bound)':22s} {'made mean':>9s} {'median':>7s} {'needless mean':>13s} {'median':>7s}"]
    for g in GAPS:
        a, b = res["gaps"].get(g), res["needless_gaps"].get(g)
        if a and b:
            lines.append(f"{g:22s} {a['mean']:9.2f} {a['median']:7.1f} {b['mean']:13.2f} {b['median']:7.1f}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = ScriptParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="amd", choices=sorted(CORPORA), metavar="FAMILY",
                    help=f"the repository's corpus of this family ({', '.join(sorted(CORPORA))})")
    ap.add_argument("--every", type=int, default=1, metavar="N", help="every N-th distinct case only")
    ap.add_argument("--json", action="store_true", help="print the measurement as one JSON object")
    args = ap.parse_args(argv)
    if args.every < 1:
        ap.error("--every must be at least 1")
    cases = _every_distinct(json.loads(CORPORA[args.corpus].read_text())["cases"], args.every)
    with BoundRecorder() as recorder:
        for case in cases:
            recorder.plan(case)
    res = summary(recorder)
    print(json.dumps(res, indent=1) if args.json else _text(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
