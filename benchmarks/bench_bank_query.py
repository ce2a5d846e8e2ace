"""Speed of one bank-conflict query: subspace algebra vs enumeration (64-lane ds_read_b128).

Three timings per access, each the median over repeated runs:

  linear      linlayout.synth.banks.analyze(..., method="linear")     rank/intersection of <= 8 vectors
  enumerate   linlayout.synth.banks.analyze(..., method="enumerate")  numpy: every lane's dwords, per phase/bank
  python      plain Python loops over lanes and dwords (the obvious brute force)

The public call includes validating the access layout; "core" lines time only the counting
(given the lane byte addresses / address columns).

Run:  python benchmarks/bench_bank_query.py [--json] [--reps N]
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from benchmarks.script_args import ScriptParser  # noqa: E402

from linlayout import LinearLayout  # noqa: E402
from linlayout.hw.lds import lds_model  # noqa: E402
from linlayout.synth.banks import (_analyze_enumerated, _analyze_linear, _lane_byte_columns, analyze,  # noqa: E402
                         lane_start_bytes)


def access(lane_offsets):
    return LinearLayout({"register": [[1], [2], [4]], "lane": [[o] for o in lane_offsets]}, [("offset", 1 << 16)])


ACCESSES = {
    "row stride 64 fp16 (8-way conflict)": access([64 << i for i in range(6)]),
    "xor-swizzled rows (conflict-free)": access([64 + 8, 128 + 16, 256 + 32, 512 + 64, 1024, 2048]),
    "random aligned": access([8 * x for x in (123, 7, 911, 64, 300, 5)]),
}


def median_us(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def python_bruteforce(op, starts):
    total = 0
    for p in range(op.num_phases):
        words = set()
        for lane in range(op.wave_size):
            if op.phase_of(lane) == p:
                for b in range(starts[lane], starts[lane] + op.bytes_per_lane, 4):
                    words.add(b // 4)
        per_bank = {}
        for w in words:
            per_bank[w % op.num_banks] = per_bank.get(w % op.num_banks, 0) + 1
        total += max(per_bank.values())
    return total


def main(argv=None):
    ap = ScriptParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--reps", type=int, default=300)
    args = ap.parse_args(argv)
    rows = []
    for arch in ("gfx942", "gfx950"):
        op = lds_model(arch).op("ds_read_b128")
        for name, acc in ACCESSES.items():
            lin = analyze(arch, "ds_read_b128", acc, 2, method="linear")
            enum = analyze(arch, "ds_read_b128", acc, 2, method="enumerate")
            starts = lane_start_bytes(op, acc, 16)
            brute = python_bruteforce(op, [int(x) for x in starts])
            assert lin.cycles == enum.cycles == brute
            cols = _lane_byte_columns(op, acc, 16)
            t = {
                "linear": median_us(lambda: analyze(arch, "ds_read_b128", acc, 2, method="linear"), args.reps),
                "enumerate": median_us(lambda: analyze(arch, "ds_read_b128", acc, 2, method="enumerate"), args.reps),
                "python": median_us(lambda: python_bruteforce(op, [int(x) for x in starts]), max(20, args.reps // 10)),
                "core_linear": median_us(lambda: _analyze_linear(op, cols, 16), args.reps),
                "core_enumerate": median_us(lambda: _analyze_enumerated(op, np.asarray(starts), 16), args.reps),
            }
            rows.append({"arch": arch, "access": name, "cycles": lin.cycles, "us": {k: round(v, 1) for k, v in t.items()},
                         "speedup_vs_enumerate": round(t["enumerate"] / t["linear"], 1),
                         "speedup_vs_python": round(t["python"] / t["linear"], 1),
                         "core_speedup": round(t["core_enumerate"] / t["core_linear"], 1)})
    summary = {"min_speedup_vs_enumerate": min(r["speedup_vs_enumerate"] for r in rows),
               "min_core_speedup": min(r["core_speedup"] for r in rows),
               "min_speedup_vs_python": min(r["speedup_vs_python"] for r in rows)}
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary}))
        return 0
    print(f"{'arch':<7} {'access':<38} {'cycles':>6} {'linear':>9} {'enum':>9} {'python':>9} {'x enum':>7} "
          f"{'x py':>6} {'core lin':>9} {'core enum':>9} {'x core':>7}   (microseconds)")
    for r in rows:
        u = r["us"]
        print(f"{r['arch']:<7} {r['access']:<38} {r['cycles']:>6} {u['linear']:>9} {u['enumerate']:>9} "
              f"{u['python']:>9} {r['speedup_vs_enumerate']:>7} {r['speedup_vs_python']:>6} "
              f"{u['core_linear']:>9} {u['core_enumerate']:>9} {r['core_speedup']:>7}")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
