"""Planning time of one linlayout tree, per case: the worker ``bench_conversions_plan.py --against`` runs.

Usage: python benchmarks/plan_timing.py --tree PATH --cases JSON [--repeat N]

Imports linlayout from ``--tree`` (a checkout of any revision: the current one or a previous
release) and prints, as JSON, ``{"cold_ms": [...], "cold_cpu_ms": [...], "warm_ms": [...]}`` with
one entry per case of ``--cases`` (a file in the format of benchmarks/data/triton_amd_baseline.json),
``null`` where that tree refuses the case (LayoutError).  ``cold``: the case's one call of
``plan_conversion(src, dst, arch, element_bits)`` in this process, on layouts freshly read from the
JSON after emptying the planner's caches (``linlayout.caches.clear(keep_tables=True)``; a release
from before linlayout.caches has ``linlayout.synth.convert.clear_caches``, which leaves some
caches filled: so the case is planned cold only once per process); ``cold_cpu_ms``: the same
call's CPU time of this process (``time.process_time``: on a machine shared with other work, wall
time also counts the time the process waits for a core); ``warm``: the least of ``--repeat``
further calls on the same layouts.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: benchmarks.script_args

from benchmarks.script_args import ScriptParser  # noqa: E402

ELEMENT_BITS = {"fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "i8": 8}


def _clear_caches():
    """The tree's way to empty the planner caches (the tables of the targets' instructions kept)."""
    try:
        from linlayout import caches
    except ImportError:  # a release from before linlayout.caches
        from linlayout.synth import convert
        return convert.clear_caches
    return lambda: caches.clear(keep_tables=True)


def time_cases(cases: list[dict], repeat: int) -> dict:
    from linlayout import LayoutError, LinearLayout
    from linlayout.synth import convert

    clear = _clear_caches()
    cold_ms, cold_cpu_ms, warm_ms = [], [], []
    for c in cases:
        element_bits = ELEMENT_BITS[c["dtype"]]
        warm = float("inf")
        try:
            clear()
            src, dst = LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"])
            t0, c0 = time.perf_counter(), time.process_time()
            convert.plan_conversion(src, dst, c["arch"], element_bits)
            cold, cold_cpu = time.perf_counter() - t0, time.process_time() - c0
            for _ in range(repeat):
                t0 = time.perf_counter()
                convert.plan_conversion(src, dst, c["arch"], element_bits)
                warm = min(warm, time.perf_counter() - t0)
        except LayoutError:
            cold_ms.append(None)
            cold_cpu_ms.append(None)
            warm_ms.append(None)
            continue
        cold_ms.append(1000 * cold)
        cold_cpu_ms.append(1000 * cold_cpu)
        warm_ms.append(1000 * (warm if repeat else cold))
    return {"cold_ms": cold_ms, "cold_cpu_ms": cold_cpu_ms, "warm_ms": warm_ms}


def main(argv=None) -> int:
    ap = ScriptParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, required=True, help="the checkout whose linlayout is timed")
    ap.add_argument("--cases", type=Path, required=True)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(args.tree.resolve()))
    cases = json.loads(args.cases.read_text())["cases"]
    print(json.dumps(time_cases(cases, args.repeat)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
