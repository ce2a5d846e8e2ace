"""How much a wave-uniform register index (``v_movrels_b32`` after an ``m0`` write) could save over the
warp-id select trees of the corpus plans: a measurement (session 21), made before the plan step existed.
Since session 22 the planner reads such trees with the ``Movrels`` step where its cost model ranks that
first (linlayout.synth.warp_index, targets with ``Target.has_movrels``), so this counts the warp-id selects
its plans still hold (at the step's introduction: 4 wave32 plans with 33, each select its own root, nothing to
save; the AMD targets have no ``v_movrels_b32``).

Usage::

    python benchmarks/warp_selects.py [--corpus benchmarks/data/triton_wave32_corpus.json] [--candidates]

A warp-id select is a ``select`` step (``v_cndmask_b32``) whose condition is one list per warp, each
warp's list constant over its lanes and the lists not all equal: it picks registers by the warp id, a
wave-uniform value.  Chained, such selects form trees: a select whose result no later warp-id select
reads is a tree's root (``roots``), and the selects below it pick one of several src registers.  A
register index held in ``m0`` would read each root with one ``v_movrels_b32`` (VGPR[dst] =
VGPR[src + m0]), one VALU each as the select it replaces, so a tree saves its selects less its roots;
the index costs ``M0_SETUP`` SALU.  A single level of selects (selects = roots) saves nothing.  The
estimate assumes each root's candidates lie at the register strides one index reaches (else the
compiler adds copies) and no waits.

For each case of the corpus (``kernel_plan``, the bench kernel's plan): the plan's warp-id selects (one
per step), their roots, and the estimated region total with the index (``selects - roots``
fewer, ``M0_SETUP`` more, where that saves anything).  With ``--candidates``, also every candidate plan
of the bench kernel (``benchmarks.rank_rules.packing_plans``) whose estimate is below the plan's
(instructions only: plans the planner might rank first with the step; its ranking prices cycles).
Prints one line per case that has either, then totals.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: benchmarks.*

from benchmarks.corpus_losses import CORPUS  # noqa: E402
from benchmarks.rank_rules import packing_plans  # noqa: E402
from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout import LayoutError, LinearLayout  # noqa: E402
from linlayout.cli.bench import kernel_plan  # noqa: E402
from linlayout.dtypes import dtype_bits  # noqa: E402
from linlayout.synth.warp_index import warp_id_condition  # noqa: E402

#: [I] SALU that put a wave-uniform register index in ``m0``: the warp id's bits extracted
#: (``s_bfe_u32``, as LLVM emits for gfx1100) and any scaling; LLVM's hazard recognizer puts no wait
#: between an SALU ``m0`` write and ``v_movrels_b32`` (its ReadM0MovRelInterp hazard names ``s_movrel*``
#: and interpolation only), unmeasured here.
M0_SETUP = 2


def warp_selects(plan) -> tuple[int, int]:
    """``(selects, roots)``: the plan's warp-id select instructions (a step is one ``v_cndmask_b32``:
    its ``dst`` lists the element slots of one VGPR) and those whose result no later warp-id select
    reads (module docstring)."""
    steps = [step for step in plan.steps if warp_id_condition(step) is not None]
    pending: list[tuple[int, int]] = []  # (step, register) written, not yet read by a later warp-id select
    for index, step in enumerate(steps):
        pending = [(i, r) for i, r in pending if r not in step.a + step.b] + [(index, d) for d in step.dst]
    return len(steps), len({i for i, _ in pending})


def estimate(total: int, selects: int, roots: int) -> int:
    """The region total with the trees read by index, where that is fewer."""
    saved = selects - roots - M0_SETUP
    return total - saved if saved > 0 else total


def main(argv: list[str] | None = None) -> int:
    parser = ScriptParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=str(CORPUS))
    parser.add_argument("--candidates", action="store_true", help="also every candidate plan of the kernel")
    args = parser.parse_args(argv)
    if not Path(args.corpus).is_file():
        parser.error(f"--corpus {args.corpus}: no such file")
    try:
        cases = json.loads(Path(args.corpus).read_text())["cases"]
    except (json.JSONDecodeError, KeyError, TypeError):
        parser.error(f"--corpus {args.corpus}: not a corpus JSON (an object with 'cases')")
    planned = with_selects = saving = selects_total = 0
    for case in cases:
        src, dst = LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])
        try:
            plan = kernel_plan(src, dst, case["arch"], dtype_bits(case["dtype"]))
        except LayoutError:
            continue
        planned += 1
        total = plan.counts()["total"]
        selects, roots = warp_selects(plan)
        new = estimate(total, selects, roots)
        best = None
        if args.candidates:
            for _, candidate in packing_plans(case):
                c_total = candidate.counts()["total"]
                c_new = estimate(c_total, *warp_selects(candidate))
                if c_new < min(new, c_total) and (best is None or c_new < best[0]):
                    best = (c_new, c_total, *warp_selects(candidate), candidate.strategy)
        if selects or best:
            with_selects += bool(selects)
            selects_total += selects
            saving += total - min(new, best[0] if best else new)
            line = (f"{case['arch']} {case['dtype']} {case['name']}: plan {total}, {selects} warp-id selects, "
                    f"{roots} roots -> {new}")
            if best:
                line += f"; candidate {best[1]} ({best[4]}, {best[2]} selects, {best[3]} roots) -> {best[0]}"
            print(line)
    print(f"{planned} cases planned; {with_selects} plans with warp-id selects ({selects_total} of them); "
          f"estimated region saving {saving} instructions (M0_SETUP {M0_SETUP})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
