"""Conversion plans for Triton's 48-case AMD baseline: instruction counts next to Triton's, and timing.

Usage: python benchmarks/bench_conversions_plan.py [--baseline PATH] [--repeat N] [--json]

Per case: our plan's strategy, its instructions (the steps, as CONTRACT counts them),
the estimated setup instructions (addresses, masks, selectors, waits; synth.cost
[I] estimates), Triton 3.9's instructions (its ISA region, setup included), the
analytic lower bound and the synthesis time (plan + verification on the wave
emulator).  ``cold`` is the first call in this process with the planner's caches
cleared; ``warm`` the best of ``--repeat`` further calls.  The time spent inside
synth.swizzle (the LDS layout synthesis, another module) is reported separately.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from linlayout import LinearLayout  # noqa: E402
from synth import convert  # noqa: E402

BITS = {"fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8}
KINDS = ("lds_write", "lds_read", "s_barrier", "ds_bpermute", "ds_swizzle", "dpp", "permlane16_swap",
         "permlane32_swap", "v_cndmask", "v_perm_b32", "v_mov")


def _clear_caches() -> None:
    convert.clear_caches()


class _SwizzleTimer:
    """Accumulates the time spent in synth.swizzle.synthesize."""

    def __init__(self) -> None:
        from synth import swizzle

        self.mod, self.orig, self.seconds = swizzle, swizzle.synthesize, 0.0

        def timed(*a, **k):
            t = time.perf_counter()
            try:
                return self.orig(*a, **k)
            finally:
                self.seconds += time.perf_counter() - t

        swizzle.synthesize = timed


def run(baseline: Path, repeat: int) -> dict:
    cases = json.loads(baseline.read_text())["cases"]
    timer = _SwizzleTimer()
    rows = []
    for c in cases:
        src, dst = LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"])
        bits = BITS[c["dtype"]]
        _clear_caches()
        timer.seconds = 0.0
        t0 = time.perf_counter()
        plan = convert.plan_conversion(src, dst, c["arch"], bits)
        cold = time.perf_counter() - t0
        cold_swizzle = timer.seconds
        warm = min((lambda t: (convert.plan_conversion(src, dst, c["arch"], bits), time.perf_counter() - t)[1])(
            time.perf_counter()) for _ in range(repeat)) if repeat else cold
        counts = plan.counts()
        tri = c["triton"]
        rows.append({
            "name": c["name"], "arch": c["arch"], "dtype": c["dtype"], "strategy": plan.strategy,
            "verified": plan.verified, "ours": counts, "ours_total": counts["total"],
            "ours_setup": sum(plan.overhead.values()), "ours_with_setup": plan.total_with_overhead(),
            "triton": {k: tri.get(k, 0) for k in ("total",) + KINDS}, "triton_total": tri["total"],
            "lds_bytes": plan.lds_bytes, "triton_lds_bytes": c.get("triton_lds_bytes", 0),
            "lower_bound": plan.lower_bound, "cost": plan.cost, "cold_ms": 1000 * cold,
            "cold_swizzle_ms": 1000 * cold_swizzle, "warm_ms": 1000 * warm,
        })
    wave_local = [r for r in rows if not r["lower_bound"]["cross_warp"] and r["strategy"] != "noop"]
    gfx942_moves = [r for r in rows if r["arch"] == "gfx942" and (r["ours"]["dpp"] or r["ours"]["ds_swizzle"])]
    summary = {
        "cases": len(rows), "verified": sum(r["verified"] for r in rows),
        "ours_total": sum(r["ours_total"] for r in rows),
        "ours_with_setup_total": sum(r["ours_with_setup"] for r in rows),
        "triton_total": sum(r["triton_total"] for r in rows),
        "cases_ours_le_triton": sum(r["ours_total"] <= r["triton_total"] for r in rows),
        "cases_ours_with_setup_le_triton": sum(r["ours_with_setup"] <= r["triton_total"] for r in rows),
        "cases_ours_with_setup_gt_triton": [f"{r['name']} {r['arch']} {r['dtype']}" for r in rows
                                            if r["ours_with_setup"] > r["triton_total"]],
        "in_wave_cases": len(wave_local),
        "in_wave_cases_using_lds": [f"{r['name']} {r['arch']} {r['dtype']}" for r in wave_local if r["lds_bytes"]],
        "triton_in_wave_cases_using_lds": sum(1 for r in wave_local if r["triton"]["lds_write"]),
        "gfx942_cases_using_dpp_or_swizzle": len(gfx942_moves),
        "median_cold_ms": statistics.median(r["cold_ms"] for r in rows),
        "median_cold_ms_without_swizzle_synthesis": statistics.median(r["cold_ms"] - r["cold_swizzle_ms"]
                                                                      for r in rows),
        "median_warm_ms": statistics.median(r["warm_ms"] for r in rows),
        "max_cold_ms": max(r["cold_ms"] for r in rows),
    }
    return {"cases": rows, "summary": summary}


def _table(res: dict) -> str:
    head = (f"{'case':28s} {'arch':6s} {'dt':4s} {'strategy':8s} {'ours':>4s} {'+setup':>6s} {'triton':>6s} "
            f"{'LB(x-lane)':>10s} {'cold ms':>7s}  ours by kind | triton LDS w/r, bperm, permlane")
    lines = [head, "-" * len(head)]
    for r in res["cases"]:
        o, t = r["ours"], r["triton"]
        kinds = " ".join(f"{k}={o[k]}" for k in KINDS if o[k])
        tk = (f"{t['lds_write']}/{t['lds_read']}, {t['ds_bpermute']}, "
              f"{t['permlane16_swap'] + t['permlane32_swap']}")
        lines.append(f"{r['name'][:28]:28s} {r['arch']:6s} {r['dtype']:4s} {r['strategy']:8s} {r['ours_total']:4d} "
                     f"{r['ours_with_setup']:6d} {r['triton_total']:6d} {r['lower_bound']['cross_lane_dwords']:10d} "
                     f"{r['cold_ms']:7.1f}  {kinds or '-'} | {tk}")
    s = res["summary"]
    lines += ["", "summary:"] + [f"  {k}: {v if not isinstance(v, float) else round(v, 2)}" for k, v in s.items()]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", type=Path, default=REPO / ".." / "shared" / "bench" / "triton_amd_baseline.json")
    ap.add_argument("--repeat", type=int, default=3, help="warm repetitions per case")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    res = run(args.baseline, args.repeat)
    print(json.dumps(res) if args.json else _table(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
