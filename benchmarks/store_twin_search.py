"""What the swizzle search's view of a store-twin src changes in plans through LDS.

Where the src has store twins (a src register holding, in other lanes or warps, the elements
another register holds), the bank-conflict search is given the src as the round trip's stores
write it (``linlayout.synth.lds_path._stored_src``: a basis of the register span modulo the lanes
and warps).  This script draws ``--count`` store-twin problems (``tests/random_layouts.py``'s
``store_twin_problem`` through a seeded ``RandomPicks``: draw ``k`` of seed ``S`` uses
``random.Random(f"{S}:{k}")``; a draw without a twin is skipped) on the targets of
``tests/test_lds_store_twins.py``, plans each through LDS twice -- as the planner does, and with the
search given the whole src (``_stored_src`` patched to return it, the caches cleared around) -- and
counts the outcomes of today's plan against the whole-src one: the same plan; another plan of the
same cost (``Plan.cost``, the target's default objective: cycles) and instructions
(``Plan.total_with_overhead``: with setup); cheaper (less of either, more of neither); a trade
(less of one, more of the other); dearer (more of either, less of neither), with the range of the
dearer plans' extra cycles and instructions.  The default 1,600 problems take about 20 s.

    python benchmarks/store_twin_search.py [--count N] [--seed S]
"""

from __future__ import annotations

import random
import sys
from collections import Counter
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout import caches  # noqa: E402
from linlayout.synth import lds_path  # noqa: E402
from linlayout.synth.convert import plan_conversion  # noqa: E402
from random_layouts import RandomPicks, store_twin_problem  # noqa: E402

__all__ = ["OUTCOMES", "TARGETS", "outcome", "problems", "run"]

TARGETS = ("sm_80", "sm_90", "gfx942", "gfx950", "gfx1100", "gfx1250")  # tests/test_lds_store_twins.py's
OUTCOMES = ("same plan", "same price", "cheaper", "trade", "dearer")


def problems(count: int, seed: int) -> list[tuple]:
    """The first ``count`` store-twin problems (src, dst, element_bits, arch) of ``seed``."""
    out, k = [], 0
    while len(out) < count:
        problem = store_twin_problem(RandomPicks(random.Random(f"{seed}:{k}")), TARGETS)
        k += 1
        if problem is not None:
            out.append(problem)
    return out


def _plans(src, dst, element_bits: int, arch: str) -> tuple:
    """(today's plan through LDS, the plan with the swizzle search given the whole src)."""
    caches.clear(keep_tables=True)
    today = plan_conversion(src, dst, arch, element_bits, strategy="lds")
    caches.clear(keep_tables=True)
    try:
        with mock.patch.object(lds_path, "_stored_src", lambda prob: prob.src):
            whole = plan_conversion(src, dst, arch, element_bits, strategy="lds")
    finally:
        caches.clear(keep_tables=True)
    return today, whole


def outcome(today, whole) -> tuple[str, float, int]:
    """(one of ``OUTCOMES``, today's cost minus the whole-src plan's, instructions likewise)."""
    cycles = today.cost - whole.cost
    instructions = today.total_with_overhead() - whole.total_with_overhead()
    if today.dumps() == whole.dumps():
        return "same plan", cycles, instructions
    signs = {(cycles > 0) - (cycles < 0), (instructions > 0) - (instructions < 0)}
    name = ("same price" if signs == {0} else "cheaper" if max(signs) <= 0 else
            "dearer" if min(signs) >= 0 else "trade")
    return name, cycles, instructions


def run(count: int, seed: int) -> tuple[Counter, list[tuple[float, int]]]:
    """The outcomes' counts and the (extra cycles, extra instructions) of the dearer plans."""
    counts, dearer = Counter(), []
    for problem in problems(count, seed):
        name, cycles, instructions = outcome(*_plans(*problem))
        counts[name] += 1
        if name == "dearer":
            dearer.append((cycles, instructions))
    return counts, dearer


def main(argv: list[str] | None = None) -> int:
    parser = ScriptParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1600, help="store-twin problems (default 1600)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.count < 1:
        parser.error(f"--count {args.count}: the number of problems must be positive")
    counts, dearer = run(args.count, args.seed)
    print(f"{args.count} store-twin problems of seed {args.seed}, plans through LDS, today's against the "
          "swizzle search given the whole src\n")
    print("| outcome | problems |\n|---|---|")
    for name in OUTCOMES:
        print(f"| {name} | {counts[name]} |")
    if dearer:
        cycles, instructions = zip(*dearer)
        print(f"\ndearer by {min(cycles):g} to {max(cycles):g} cycles and {min(instructions)} to "
              f"{max(instructions)} instructions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
