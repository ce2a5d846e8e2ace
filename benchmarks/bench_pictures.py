"""Time and memory of a layout picture: a 64x64 MFMA tile (4 waves) as PNG and as SVG.

Goal (issue 14): under one second of CPU time each, drawn at 1000 px wide.  The first render is
not timed (matplotlib's import and font cache are not the picture's cost).

Run:  python benchmarks/bench_pictures.py [--json] [--reps N]
"""

from __future__ import annotations

import json
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: benchmarks.script_args

from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout.encodings import mfma_layout  # noqa: E402
from linlayout.pictures import render  # noqa: E402

GOAL_CPU_SECONDS = 1.0


def run(reps: int) -> dict:
    layout = mfma_layout(3, (32, 32, 8), (2, 2), (64, 64))
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        render(layout, Path(tmp) / "warm.png")
        for suffix in ("png", "svg"):
            times = []
            for _ in range(reps):
                t0 = time.process_time()
                render(layout, Path(tmp) / f"t.{suffix}")
                times.append(time.process_time() - t0)
            out[suffix] = {"cpu_seconds": round(min(times), 3), "meets_goal": min(times) < GOAL_CPU_SECONDS}
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def main() -> None:
    ap = ScriptParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    result = run(args.reps)
    if args.json:
        print(json.dumps(result))
        return
    for suffix in ("png", "svg"):
        r = result[suffix]
        print(f"64x64 tile, {suffix}: {r['cpu_seconds']} s CPU (goal < {GOAL_CPU_SECONDS} s: {r['meets_goal']})")
    print(f"peak RSS {result['peak_rss_mb']} MB")


if __name__ == "__main__":
    main()
