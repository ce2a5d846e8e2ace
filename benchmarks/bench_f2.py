"""GF(2) kernels of linlayout against galois on the same random inputs.

Times rank, inverse and solve (``linlayout.f2`` on column ints vs
``numpy.linalg`` on ``galois.GF(2)`` arrays) and the layout operations compose
and invert_and_compose (``LinearLayout`` vs the equivalent galois matrix
product and solve) on square invertible n x n matrices, n = 8, 16, 32, 64.
Prints microseconds per call and the speed-up (galois time / linlayout time).
Target: >= 10x on rank, inverse and solve at every size.

    python benchmarks/bench_f2.py [--repeat 5] [--seed 0]
"""

from __future__ import annotations

import random
import sys
import timeit
from pathlib import Path

import galois
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: benchmarks.script_args

from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout import LinearLayout, f2  # noqa: E402

GF = galois.GF(2)
SIZES = (8, 16, 32, 64)


def invertible_columns(n: int, rng: random.Random) -> list[int]:
    while True:
        cols = [rng.getrandbits(n) for _ in range(n)]
        if f2.rank(cols) == n:
            return cols


def to_gf(cols: list[int], n: int):
    return GF(np.array([[(c >> r) & 1 for c in cols] for r in range(n)], dtype=np.int64))


def per_call_us(fn, repeat: int) -> float:
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=repeat, number=number)) / number * 1e6


def layout(cols: list[int], n: int, in_dim: str, out_dim: str) -> LinearLayout:
    return LinearLayout._from_columns([(in_dim, 1 << n)], [(out_dim, 1 << n)], cols)


def main() -> None:
    ap = ScriptParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    print(f"{'op':<20}{'bits':>5}{'linlayout us':>14}{'galois us':>12}{'speed-up':>10}")
    worst: dict[str, float] = {}
    for n in SIZES:
        a_cols, b_cols = invertible_columns(n, rng), invertible_columns(n, rng)
        rhs = rng.getrandbits(n)
        ga, gb = to_gf(a_cols, n), to_gf(b_cols, n)
        g_rhs = GF([(rhs >> r) & 1 for r in range(n)])
        # A: x -> y, B: y -> z (compose); A and C share out dim y (invert_and_compose)
        la, lb = layout(a_cols, n, "x", "y"), layout(b_cols, n, "y", "z")
        lc = layout(b_cols, n, "w", "y")
        # correctness on these inputs before timing
        assert f2.rank(a_cols) == np.linalg.matrix_rank(ga) == n
        assert to_gf(f2.inverse(a_cols), n).tolist() == np.linalg.inv(ga).tolist()
        assert to_gf([f2.solve(a_cols, rhs)], n)[:, 0].tolist() == np.linalg.solve(ga, g_rhs).tolist()
        assert to_gf(la.compose(lb).columns(), n).tolist() == (gb @ ga).tolist()
        assert to_gf(la.invert_and_compose(lc).columns(), n).tolist() == np.linalg.solve(gb, ga).tolist()
        cases = [
            ("rank", lambda: f2.rank(a_cols), lambda: np.linalg.matrix_rank(ga)),
            ("inverse", lambda: f2.inverse(a_cols), lambda: np.linalg.inv(ga)),
            ("solve", lambda: f2.solve(a_cols, rhs), lambda: np.linalg.solve(ga, g_rhs)),
            ("compose", lambda: la.compose(lb), lambda: gb @ ga),
            ("invert_and_compose", lambda: la.invert_and_compose(lc), lambda: np.linalg.solve(gb, ga)),
        ]
        for name, ours, theirs in cases:
            t_ours, t_theirs = per_call_us(ours, args.repeat), per_call_us(theirs, args.repeat)
            ratio = t_theirs / t_ours
            worst[name] = min(worst.get(name, ratio), ratio)
            print(f"{name:<20}{n:>5}{t_ours:>14.1f}{t_theirs:>12.1f}{ratio:>9.1f}x")
    print("worst speed-up: " + ", ".join(f"{k} {v:.1f}x" for k, v in worst.items()))
    missed = [k for k in ("rank", "inverse", "solve") if worst[k] < 10]
    print("target >= 10x on rank, inverse, solve: " + ("met" if not missed else f"MISSED for {missed}"))


if __name__ == "__main__":
    main()
