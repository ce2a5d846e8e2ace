"""Conversion plans for Triton's 48-case AMD baseline: instruction counts next to Triton's, and timing.

Usage: python benchmarks/bench_conversions_plan.py [--baseline PATH | --corpus] [--repeat N] [--cold-repeat N]
       [--json | --markdown]
       python benchmarks/bench_conversions_plan.py [--baseline PATH | --corpus] --against REV [--against REV2 ..]
       [--rounds N]

Per case: our plan's strategy, its instructions (the steps, as docs/contract.md counts them),
the estimated setup instructions (addresses, masks, selectors, waits; linlayout.synth.cost
[I] estimates), Triton 3.9's instructions (its ISA region, setup included), the
analytic lower bounds and the synthesis time (planning plus the emulator's ISA-level
run of the chosen plan).  For conversions that stay inside each wave, also the plan
``strategy="registers"`` gives.  ``cold`` is a call with every planner cache emptied
first (linlayout.caches.clear(keep_tables=True), which includes the LDS layouts of linlayout.synth.swizzle;
the tables of the targets' instructions, such as lane maps of instruction encodings, are kept) on
layouts freshly read from the JSON (so their own memoized columns are cold too), the
least of ``--cold-repeat`` such calls (each one cold: the minimum only filters out
the noise of a shared machine); ``warm`` the best of ``--repeat`` further calls
(cached: wave maps, bounds, LDS layouts with their access analysis, lane-stage
tables; every call still builds, prices and verifies its candidates).  The time
spent inside linlayout.synth.swizzle (the LDS layout synthesis, another module) is reported
separately.

``--corpus`` runs benchmarks/data/triton_amd_corpus.json (691 cases, the same format) instead
of the 48-case baseline; ``--corpus nvidia`` (or ``wave32``) that family's corpus
(benchmarks/data/triton_FAMILY_corpus.json).  ``--every N`` keeps every N-th distinct case
(distinct: src, dst, arch and dtype) of the cases run.  ``--against REV`` times planning only, here and in a checkout of the
git revision ``REV`` (a ``git worktree add --detach`` in a temporary folder, removed afterwards;
``--against`` may be repeated to compare several revisions in the same run), each tree in its own
subprocess (``--tree``: import linlayout from that folder) and the trees in alternation,
``--rounds`` times; per case the least cold and warm time over the rounds; the medians over the
cases every tree plans (a case a tree refuses is counted, not timed), of wall time and of the
process's CPU time (``cold_cpu_ms``: less disturbed by other work on a shared machine).  There a
cold time is the case's first plan in its process (one per round: ``--cold-repeat`` does not
apply), since an older release's cache clearing may leave caches of the case filled (b49e30c's
``convert.clear_caches`` keeps some of the emulator's and swizzle's).

Targets for in-wave conversions that Triton sends through LDS: no LDS traffic, no more
instructions than Triton, at most half of Triton's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout import LayoutError, LinearLayout, caches  # noqa: E402
from linlayout.synth import convert, swizzle  # noqa: E402

BITS = {"fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "i8": 8}
CORPORA = {family: REPO / "benchmarks" / "data" / f"triton_{family}_corpus.json" for family in ("amd", "nvidia", "wave32")}
KINDS = ("lds_write", "lds_read", "s_barrier", "ds_bpermute", "ds_swizzle", "dpp", "permlane16_swap",
         "permlane32_swap", "v_cndmask", "v_perm_b32", "v_mov")


class _SwizzleTimer:
    """Accumulates the time spent in linlayout.synth.swizzle.shared_basis (the planner's entry to it)."""

    def __init__(self) -> None:
        self.mod, self.orig, self.seconds = swizzle, swizzle.shared_basis, 0.0

        def timed(*a, **k):
            t = time.perf_counter()
            try:
                return self.orig(*a, **k)
            finally:
                self.seconds += time.perf_counter() - t

        swizzle.shared_basis = timed


def _in_wave_registers(src, dst, arch, bits) -> dict | None:
    """The register plan of an in-wave conversion (None when data crosses warps)."""
    try:
        p = convert.plan_conversion(src, dst, arch, bits, strategy="registers")
    except LayoutError:
        return None
    return p.counts()


def run(baseline: Path, repeat: int, cold_repeat: int = 1) -> dict:
    cases = json.loads(baseline.read_text())["cases"]
    timer = _SwizzleTimer()
    rows = []
    for c in cases:
        src, dst = LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"])
        bits = BITS[c["dtype"]]
        cold = cold_swizzle = float("inf")
        for _ in range(max(1, cold_repeat)):
            caches.clear(keep_tables=True)
            fresh_src, fresh_dst = LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"])
            timer.seconds = 0.0
            t0 = time.perf_counter()
            plan = convert.plan_conversion(fresh_src, fresh_dst, c["arch"], bits)
            dt = time.perf_counter() - t0
            if dt < cold:
                cold, cold_swizzle = dt, timer.seconds
        warm = cold if not repeat else float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            convert.plan_conversion(src, dst, c["arch"], bits)
            warm = min(warm, time.perf_counter() - t0)
        counts = plan.counts()
        tri = c["triton"]
        in_wave = not plan.lower_bound["cross_warp"] and plan.strategy != "noop"
        reg = _in_wave_registers(src, dst, c["arch"], bits) if in_wave else None
        rows.append({
            "name": c["name"], "arch": c["arch"], "dtype": c["dtype"], "strategy": plan.strategy,
            "verified": plan.verified, "ours": counts, "ours_total": counts["total"],
            "ours_setup": sum(plan.overhead.values()), "ours_with_setup": plan.total_with_overhead(),
            "registers_total": reg["total"] if reg else None,
            "triton": {k: tri.get(k, 0) for k in ("total",) + KINDS}, "triton_total": tri["total"],
            "lds_bytes": plan.lds_bytes, "triton_lds_bytes": c.get("triton_lds_bytes", 0),
            "in_wave": in_wave, "lower_bound": plan.lower_bound, "cost": plan.cost, "cold_ms": 1000 * cold,
            "cold_swizzle_ms": 1000 * cold_swizzle, "warm_ms": 1000 * warm,
        })
    wave_local = [r for r in rows if r["in_wave"]]
    tri_lds = [r for r in wave_local if r["triton"]["lds_write"]]
    gfx942_moves = [r for r in rows if r["arch"] == "gfx942" and (r["ours"]["dpp"] or r["ours"]["ds_swizzle"])]
    name = lambda r: f"{r['name']} {r['arch']} {r['dtype']}"  # noqa: E731
    summary = {
        "cases": len(rows), "verified": sum(r["verified"] for r in rows),
        "ours_total": sum(r["ours_total"] for r in rows),
        "ours_with_setup_total": sum(r["ours_with_setup"] for r in rows),
        "triton_total": sum(r["triton_total"] for r in rows),
        "cases_ours_le_triton": sum(r["ours_total"] <= r["triton_total"] for r in rows),
        "cases_ours_gt_triton": [name(r) for r in rows if r["ours_total"] > r["triton_total"]],
        "cases_ours_with_setup_le_triton": sum(r["ours_with_setup"] <= r["triton_total"] for r in rows),
        "cases_ours_with_setup_gt_triton": [name(r) for r in rows if r["ours_with_setup"] > r["triton_total"]],
        "in_wave_cases": len(wave_local),
        "in_wave_cases_using_lds": [name(r) for r in wave_local if r["lds_bytes"]],
        "triton_in_wave_cases_using_lds": len(tri_lds),
        "of_those_no_lds": sum(not r["lds_bytes"] for r in tri_lds),
        "of_those_le_triton": sum(r["ours_total"] <= r["triton_total"] for r in tri_lds),
        "of_those_le_half_triton": sum(2 * r["ours_total"] <= r["triton_total"] for r in tri_lds),
        "of_those_all_three_targets": sum(not r["lds_bytes"] and 2 * r["ours_total"] <= r["triton_total"]
                                          for r in tri_lds),
        "gfx942_cases_using_dpp_or_swizzle": len(gfx942_moves),
        "cold_repeat": max(1, cold_repeat),
        "median_cold_ms": statistics.median(r["cold_ms"] for r in rows),
        "median_cold_ms_without_swizzle_synthesis": statistics.median(r["cold_ms"] - r["cold_swizzle_ms"]
                                                                      for r in rows),
        "median_warm_ms": statistics.median(r["warm_ms"] for r in rows),
        "max_cold_ms": max(r["cold_ms"] for r in rows),
        "max_warm_ms": max(r["warm_ms"] for r in rows),
    }
    return {"cases": rows, "summary": summary}


def _tree_timings(tree: Path, cases: Path, repeat: int) -> dict:
    """benchmarks/plan_timing.py's per-case times of the linlayout in ``tree``, in a fresh process."""
    out = subprocess.run([sys.executable, str(REPO / "benchmarks" / "plan_timing.py"), "--tree", str(tree),
                          "--cases", str(cases), "--repeat", str(repeat)],
                         check=True, capture_output=True, text=True, cwd=tree).stdout
    return json.loads(out)


def against(revs: list[str], cases: Path, rounds: int, repeat: int) -> dict:
    """Planning times of this tree and of the git revisions ``revs`` on ``cases``: ``rounds``
    alternating subprocess runs of each tree (so all see the same load), one cold call per case
    and run, per case the least time over the rounds, then the medians over the cases every tree
    plans."""
    with tempfile.TemporaryDirectory(prefix="linlayout-against-") as tmp:
        trees = {"this": REPO}
        try:
            for rev in revs:
                other = Path(tmp) / f"tree-{len(trees)}"
                subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(other), rev],
                               check=True, capture_output=True)
                trees[rev] = other
            best: dict[str, dict] = {}
            for _ in range(max(1, rounds)):
                for name, tree in trees.items():
                    t = _tree_timings(tree, cases, repeat)
                    if name not in best:
                        best[name] = t
                        continue
                    for kind in ("cold_ms", "cold_cpu_ms", "warm_ms"):
                        best[name][kind] = [None if a is None or b is None else min(a, b)
                                            for a, b in zip(best[name][kind], t[kind])]
        finally:
            for name, tree in trees.items():
                if name != "this":
                    subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)],
                                   check=True, capture_output=True)
    n = len(best["this"]["cold_ms"])
    every = [i for i in range(n) if all(best[name]["cold_ms"][i] is not None for name in trees)]
    summary = {"cases": n, "planned_by_every_tree": len(every), "rounds": max(1, rounds), "repeat": repeat}
    for name in trees:
        summary[f"{name}_refused"] = sum(t is None for t in best[name]["cold_ms"])
        for kind in ("cold_ms", "cold_cpu_ms", "warm_ms"):
            summary[f"{name}_median_{kind}"] = statistics.median(best[name][kind][i] for i in every)
    return {"times": best, "summary": summary}


def _every_distinct(cases: list[dict], every: int) -> list[dict]:
    """Every ``every``-th of the distinct ``cases`` (by src, dst, arch and dtype), in corpus order."""
    seen, distinct = set(), []
    for c in cases:
        key = json.dumps([c["src"], c["dst"], c["arch"], c["dtype"]], sort_keys=True)
        if key not in seen:
            seen.add(key)
            distinct.append(c)
    return distinct[::every]


def _markdown(res: dict) -> str:
    """The in-wave cases Triton sends through LDS, as a markdown table (for docs/conversions.md)."""
    lines = ["| case | arch | dtype | strategy | ours | registers | Triton | no LDS | <= Triton | <= Triton/2 |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    yes = lambda b: "yes" if b else "no"  # noqa: E731
    for r in res["cases"]:
        if not (r["in_wave"] and r["triton"]["lds_write"]):
            continue
        lines.append(f"| {r['name']} | {r['arch']} | {r['dtype']} | {r['strategy']} | {r['ours_total']} | "
                     f"{r['registers_total']} | {r['triton_total']} | {yes(not r['lds_bytes'])} | "
                     f"{yes(r['ours_total'] <= r['triton_total'])} | {yes(2 * r['ours_total'] <= r['triton_total'])} |")
    return "\n".join(lines)


def _table(res: dict) -> str:
    head = (f"{'case':28s} {'arch':6s} {'dt':4s} {'strategy':8s} {'ours':>4s} {'+setup':>6s} {'regs':>4s} "
            f"{'triton':>6s} {'LB x-lane/merge':>15s} {'cold':>5s} {'warm':>5s} ms  ours by kind | "
            f"triton LDS w/r, bperm, permlane")
    lines = [head, "-" * len(head)]
    for r in res["cases"]:
        o, t, lb = r["ours"], r["triton"], r["lower_bound"]
        kinds = " ".join(f"{k}={v}" for k, v in o.items() if v and k != "total")  # the target's own kinds
        tk = (f"{t['lds_write']}/{t['lds_read']}, {t['ds_bpermute']}, "
              f"{t['permlane16_swap'] + t['permlane32_swap']}")
        regs = "-" if r["registers_total"] is None else str(r["registers_total"])
        bound = f"{lb['cross_lane_dwords']}/{lb['min_register_merges']}"
        lines.append(f"{r['name'][:28]:28s} {r['arch']:6s} {r['dtype']:4s} {r['strategy']:8s} {r['ours_total']:4d} "
                     f"{r['ours_with_setup']:6d} {regs:>4s} {r['triton_total']:6d} {bound:>15s} "
                     f"{r['cold_ms']:5.1f} {r['warm_ms']:5.1f}     {kinds or '-'} | {tk}")
    s = res["summary"]
    lines += ["", "summary:"] + [f"  {k}: {v if not isinstance(v, float) else round(v, 2)}" for k, v in s.items()]
    return "\n".join(lines)


def _report(args: argparse.Namespace, cases: Path) -> int:
    """Run ``cases`` (a file) as ``args`` ask and print the result."""
    if args.against:
        res = against(args.against, cases, args.rounds, args.repeat)
        print(json.dumps(res) if args.json else "\n".join(
            f"{k}: {round(v, 2) if isinstance(v, float) else v}" for k, v in res["summary"].items()))
        return 0
    res = run(cases, args.repeat, args.cold_repeat)
    print(json.dumps(res) if args.json else (_markdown(res) if args.markdown else _table(res)))
    return 0


def main(argv=None) -> int:
    ap = ScriptParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", type=Path, default=REPO / "benchmarks" / "data" / "triton_amd_baseline.json")
    ap.add_argument("--corpus", nargs="?", const="amd", choices=sorted(CORPORA), metavar="FAMILY",
                    help="run benchmarks/data/triton_FAMILY_corpus.json (default amd) instead of --baseline")
    ap.add_argument("--every", type=int, default=1, metavar="N", help="every N-th distinct case only")
    ap.add_argument("--against", metavar="REV", action="append",
                    help="time planning only, here and at git revision REV (repeatable: several revisions)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating runs of each tree (with --against)")
    ap.add_argument("--repeat", type=int, default=3, help="warm repetitions per case")
    ap.add_argument("--cold-repeat", type=int, default=3,
                    help="cold calls per case (each after emptying the caches); the least is reported")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--markdown", action="store_true", help="the in-wave cases Triton sends through LDS")
    args = ap.parse_args(argv)
    cases = CORPORA[args.corpus] if args.corpus else args.baseline
    if args.every < 1:
        ap.error(f"--every must be at least 1, got {args.every}")
    if args.every == 1:
        return _report(args, cases)
    with tempfile.TemporaryDirectory(prefix="linlayout-cases-") as tmp:
        chosen = Path(tmp) / "cases.json"
        chosen.write_text(json.dumps({"cases": _every_distinct(json.loads(cases.read_text())["cases"], args.every)}))
        return _report(args, chosen)


if __name__ == "__main__":
    sys.exit(main())
