"""A seeded end-to-end fuzz campaign of the planner: random conversions nobody tuned for, every check
the project trusts, and a one-line report per failure.

    python benchmarks/fuzz_conversions.py --seed S --cases N [--targets gfx942,sm_90] \
        [--interpret-every K] [--compile-every K] [--nvcc-every K] [--seconds T]

Case ``k`` of seed ``S`` is drawn from ``random.Random(f"fuzz:{S}:{k}")`` alone through the hypothesis
tests' generator (``tests/random_layouts.py``: ``layout_problem``, every ``STORE_TWIN_EVERY``-th a
``store_twin_problem``; every ``PARTIAL_EVERY``-th on a tile twice as tall as src holds), with 1 to 8
warps, an element size of 8..64 bits, an objective, a strategy, an LDS budget (None, the tile, or an odd
size: a fraction of the tile plus a few bytes), src/dst VGPR tuples and, on about one 8/16-bit AMD side
in ``UNPACKED_EVERY``, that side held one element per VGPR
(``src_unpacked`` / ``dst_unpacked``; a refusal of that form, ``UnpackedSrcRefused`` / ``UnpackedDstRefused``,
is one only a case so drawn may raise).  Each case must:

- plan without any error but ``LayoutError``, and a ``LayoutError`` only where the caller chose a
  strategy or a budget (``auto`` with the target's whole LDS plans every pair);
- verify on the wave emulator, again from its certificate, pass the independent certificate checker
  (``tests/convert_checker.py``), respect the budget, and have its lower bound at most its cost;
- every ``--interpret-every``-th AMD case: its MLIR kernel, run on the interpreter, leaves exactly the
  expected tile; every ``--compile-every``-th also compiles (code object) with the plan's ISA counts;
- every ``--nvcc-every``-th NVIDIA case: its CUDA builds with nvcc (``-Werror``) to PTX whose counts
  are the plan's (when nvcc is on PATH).

Each case runs under an alarm of ``--seconds`` (a hang is a failure).  Prints one line per failure
(``FAIL seed:k kind: message``) and a summary per target; exit status 1 when anything failed.
"""

from __future__ import annotations

import json
import random
import re
import signal
import sys
import time
import traceback
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository root: benchmarks.script_args
sys.path.insert(0, str(ROOT / "tests"))

from random_layouts import (ELEMENT_BITS, OBJECTIVES, TARGETS, RandomPicks, layout_problem,  # noqa: E402
                            store_twin_problem)
from convert_checker import check_certificate  # noqa: E402

from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout import LayoutError, LinearLayout  # noqa: E402
from linlayout.lowering.conversion import lower_conversion  # noqa: E402
from linlayout.lowering.cpp import emit_cpp  # noqa: E402
from linlayout.lowering.cpp.counts import expected_ptx_counts, ptx_counts  # noqa: E402
from linlayout.lowering.cpp.toolchain import compile_cuda, find_nvcc  # noqa: E402
from linlayout.lowering.emit.host import distinct_tile, expected_output, interpret as run  # noqa: E402
from linlayout.lowering.report import PLAN_CHECKED_KEYS, expected_isa_counts  # noqa: E402
from linlayout.hw.targets import get_target  # noqa: E402
from linlayout.synth.convert import UnpackedDstRefused, UnpackedSrcRefused, plan_conversion  # noqa: E402
from linlayout.synth.emulator import verify  # noqa: E402
from linlayout.synth.plan import Plan  # noqa: E402

STORE_TWIN_EVERY = 4
PARTIAL_EVERY = 8
MAX_WARP_BITS = 3  # 1 to 8 warps
TUPLES = (1, 2, 4)
UNPACKED_EVERY = 4  # about one 8/16-bit AMD side in this many is held one element per VGPR


class Hang(Exception):
    pass


def draw(seed: int, k: int) -> dict | None:
    """The problem of case ``k`` of ``seed`` (None: a store-twin draw without a store twin)."""
    picks = RandomPicks(random.Random(f"fuzz:{seed}:{k}"))
    if k % STORE_TWIN_EVERY == 0:
        problem = store_twin_problem(picks, TARGETS, MAX_WARP_BITS)
        if problem is None:
            return None
        src, dst, bits, arch = problem
    else:
        src, dst, arch = layout_problem(picks, TARGETS, max_warp_bits=MAX_WARP_BITS)
        bits = picks.choice(ELEMENT_BITS)
    if k % PARTIAL_EVERY == PARTIAL_EVERY - 1:  # a tile twice as tall as src holds: src is not surjective
        src, dst = (LinearLayout(lay.bases, [(n, s * (2 if i == 0 else 1)) for i, (n, s) in enumerate(lay.out_dims)])
                    for lay in (src, dst))
    tile_bytes = (bits // 8) << sum(s.bit_length() - 1 for _, s in src.out_dims)
    budget = picks.choice([None, None, tile_bytes, max(1, (tile_bytes >> picks.integer(1, 3)) + picks.integer(0, 12))])
    case = dict(src=src, dst=dst, arch=arch, bits=bits, objective=picks.choice(OBJECTIVES),
                strategy=picks.choice(["auto", "auto", "lds", "registers"]), budget=budget,
                src_tuple=picks.choice(TUPLES), dst_tuple=picks.choice(TUPLES), src_unpacked=False, dst_unpacked=False)
    if bits in (8, 16) and get_target(arch).family != "nvidia":  # (drawn last: the other draws stay as they were)
        for side in ("src", "dst"):
            if picks.integer(1, UNPACKED_EVERY) == 1:  # held one element per VGPR, its tuples single VGPRs
                case[f"{side}_unpacked"], case[f"{side}_tuple"] = True, 1
    return case


def _crosses_warps(src, dst) -> bool:
    """Whether some element ``dst`` puts in warp ``w`` is in none of ``src``'s registers and lanes of warp ``w``."""
    def held(layout, w):
        return {tuple(layout.apply({"register": r, "lane": l, "warp": w}).values())
                for r in range(layout.in_dim_size("register")) for l in range(layout.in_dim_size("lane"))}
    return any(not held(dst, w) <= held(src, w) for w in range(src.in_dim_size("warp")))


def dead_steps(plan: Plan) -> list[int]:
    """Indices of the steps that write registers no later step reads and that are not outputs (slots
    ``< slots_out`` at the end): instructions the compiler deletes, so the plan's counts overstate the
    kernel's and its cost is not the kernel's."""
    live, dead = set(range(plan.slots_out)), []
    for i in range(len(plan.steps) - 1, -1, -1):
        st = plan.steps[i]
        written = set(st.writes())
        if written and not written & live:
            dead.append(i)
            continue
        live = (live - written) | set(st.reads())
    return dead[::-1]


def check(case: dict, interpret: bool, compile_: bool, nvcc: bool) -> str:
    """Run every check on one case; returns what ran (raises AssertionError/other on a failure)."""
    try:
        plan = plan_conversion(case["src"], case["dst"], case["arch"], case["bits"], objective=case["objective"],
                               lds_budget_bytes=case["budget"], strategy=case["strategy"],
                               src_tuple_dwords=case["src_tuple"], dst_tuple_dwords=case["dst_tuple"],
                               src_unpacked=case["src_unpacked"], dst_unpacked=case["dst_unpacked"])
    except LayoutError as e:
        assert "\n" not in str(e), f"multi-line LayoutError: {e!r}"
        if isinstance(e, UnpackedSrcRefused | UnpackedDstRefused):  # no candidate converts that form
            assert case["src_unpacked" if isinstance(e, UnpackedSrcRefused) else "dst_unpacked"], f"refused: {e}"
        elif "between warps" in str(e):  # only the registers strategy, and only when some dst warp needs another's data
            assert case["strategy"] == "registers" and _crosses_warps(case["src"], case["dst"]), f"refused: {e}"
        elif "needs a src that holds every tensor element" in str(e):  # no LDS round trip: in-wave only
            assert case["strategy"] == "lds" or _crosses_warps(case["src"], case["dst"]), f"refused: {e}"
        elif "each warp holds the data it needs" in str(e):
            assert case["strategy"] == "registers" and not _crosses_warps(case["src"], case["dst"]), f"refused: {e}"
        else:
            assert case["budget"] is not None, f"refused without a budget: {e}"
        return "refused: " + _reason(str(e))
    assert plan.verified
    assert (plan.src_unpacked, plan.dst_unpacked) == (case["src_unpacked"], case["dst_unpacked"])
    cert = json.loads(plan.dumps())
    ok, msg = check_certificate(cert)
    assert ok, f"checker: {msg}"
    res = verify(Plan.from_certificate(cert))
    assert res.ok, f"certificate re-verify: {res.message}"
    if case["budget"] is not None:
        assert plan.lds_bytes <= case["budget"], (plan.lds_bytes, case["budget"])
    assert plan.lower_bound["cost"] <= plan.cost + 1e-6, ("lower bound", plan.lower_bound["cost"], plan.cost)
    dead = dead_steps(plan)
    assert not dead, f"dead steps {[type(plan.steps[i]).__name__ for i in dead][:3]}"
    ran = plan.strategy
    nvidia = get_target(case["arch"]).family == "nvidia"
    if interpret and not nvidia:
        low = lower_conversion(plan, binary=compile_)
        tile = distinct_tile(low.kernel.shape, plan.element_bits, seed=1)
        assert np.array_equal(run(low.kernel, tile, fill=0x5A), expected_output(plan, tile, fill=0x5A)), \
            "interpreter output differs from the expected tile"
        ran += "+interp"
        if compile_:
            counts, exp = low.report["isa_counts"], expected_isa_counts(plan)
            bad = {k: (counts[k], exp[k]) for k in PLAN_CHECKED_KEYS if counts[k] != exp[k]}
            assert not bad, f"ISA counts differ from the plan's: {bad}"
            ran += "+isa"
    if nvcc and nvidia:
        if find_nvcc() is not None:
            ptx = compile_cuda(emit_cpp(plan), case["arch"], strict=True)
            want, got = expected_ptx_counts(plan), ptx_counts(ptx, "conv")
            bad = {k: (got.get(k, 0), v) for k, v in want.items() if got.get(k, 0) != v}
            assert not bad, f"PTX counts differ from the plan's: {bad}"
            ran += "+nvcc"
    return ran


def _reason(message: str) -> str:
    """A refusal's message without its numbers (so that refusals tally by kind)."""
    return re.sub(r"\d+", "N", message)[:90]


def _alarm(signum, frame):
    raise Hang()


def main(argv=None) -> int:
    ap = ScriptParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--start", type=int, default=0, help="first case index")
    ap.add_argument("--targets", default=None, help="comma-separated subset of the targets (default: all)")
    ap.add_argument("--interpret-every", type=int, default=0, help="interpret every K-th AMD case's MLIR (0: none)")
    ap.add_argument("--compile-every", type=int, default=0, help="also compile every K-th interpreted case")
    ap.add_argument("--nvcc-every", type=int, default=0, help="build every K-th NVIDIA case's CUDA (0: none)")
    ap.add_argument("--seconds", type=int, default=120, help="per-case alarm")
    args = ap.parse_args(argv)
    want = set(args.targets.split(",")) if args.targets else set(TARGETS)
    if want - set(TARGETS) or args.cases < 1:
        ap.error(f"--targets: unknown {sorted(want - set(TARGETS))}; known: {', '.join(TARGETS)}"
                 if want - set(TARGETS) else f"--cases must be at least 1, got {args.cases}")
    for flag in ("interpret_every", "compile_every", "nvcc_every"):
        if getattr(args, flag) < 0:
            ap.error(f"--{flag.replace('_', '-')} must be 0 (none) or a positive K, got {getattr(args, flag)}")
    if args.compile_every and not args.interpret_every:
        ap.error("--compile-every compiles interpreted cases: give --interpret-every too")
    if args.seconds < 1:
        ap.error(f"--seconds must be at least 1 (the per-case alarm), got {args.seconds}")
    signal.signal(signal.SIGALRM, _alarm)
    tally: dict[str, Counter] = defaultdict(Counter)
    failures = 0
    t0 = time.time()
    for k in range(args.start, args.start + args.cases):
        case = draw(args.seed, k)
        if case is None or case["arch"] not in want:
            continue
        every = lambda n: n > 0 and k % n == 0  # noqa: E731
        signal.alarm(args.seconds)
        try:
            ran = check(case, every(args.interpret_every), every(args.interpret_every) and every(args.compile_every),
                        every(args.nvcc_every))
            tally[case["arch"]][ran] += 1
        except Hang:
            failures += 1
            tally[case["arch"]]["FAIL"] += 1
            print(f"FAIL {args.seed}:{k} hang over {args.seconds} s", flush=True)
        except Exception as e:  # noqa: BLE001  (a campaign reports every failure and goes on)
            failures += 1
            tally[case["arch"]]["FAIL"] += 1
            where = traceback.extract_tb(e.__traceback__)[-1]
            print(f"FAIL {args.seed}:{k} {type(e).__name__}: {str(e)[:300]} "
                  f"[{Path(where.filename).name}:{where.lineno}] "
                  f"({case['arch']} {case['bits']}b {case['strategy']} {case['objective']} budget={case['budget']} "
                  f"tuples={case['src_tuple']},{case['dst_tuple']})", flush=True)
        finally:
            signal.alarm(0)
    refusals = Counter()
    for arch in sorted(tally):
        for key in [key for key in tally[arch] if key.startswith("refused: ")]:
            refusals[key[len("refused: "):]] += tally[arch][key]
            tally[arch]["refused"] += tally[arch].pop(key)
        print(f"{arch}: {dict(sorted(tally[arch].items()))}")
    for reason, n in refusals.most_common():
        print(f"  refused {n}: {reason}")
    print(f"seed {args.seed} cases {args.start}..{args.start + args.cases - 1}: {failures} failures, "
          f"{time.time() - t0:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
