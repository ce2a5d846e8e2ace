"""The warp part of multi-warp LDS plans' addresses against the compiled setup (analysis, not a benchmark row).

For every corpus case whose plan accesses LDS with more than one warp: the planner's setup estimate
(``plan.overhead``: its setup-region entries), the compiled ``setup`` region's VALU, SALU and
``s_delay_alu`` (linlayout.lowering.conversion.lower_conversion, ``; linlayout-begin setup``), and the
affine tables the lowering built for the LDS address registers (their lane and warp columns, as
linlayout.synth.lane_arith.AffineTable).  One JSON line per plan, for fitting a count of the warp part:

    PYTHONPATH=$PWD python benchmarks/warp_part.py [--corpus wave32] [--arch A] > rows.jsonl
    python benchmarks/warp_part.py --summary rows.jsonl

``--summary`` reads such lines back: how many plans' compiled setup (VALU and SALU, ``s_delay_alu``
included) equals the estimate, is within one of it, and the sum and median of compiled minus estimate.
(The tables are read by wrapping ``LaneValues._affine`` and ``PlanEmitter.lds_address`` for the run.)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the repository root: benchmarks.script_args

from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout import LinearLayout  # noqa: E402
from linlayout.cli.bench import dtype_bits, kernel_plan  # noqa: E402
from linlayout.lowering.conversion import lower_conversion  # noqa: E402
from linlayout.lowering.emit import lane_values, plan_ops  # noqa: E402
from linlayout.lowering.isa import region_lines, isa_counts  # noqa: E402

SETUP_KEYS = ("valu_bpermute_addr", "salu_vcc", "salu_perm_selector", "valu_lane_selector",
              "salu_lane_selector_delay", "salu_permlane_selector", "valu_lds_addr")
CORPORA = {"amd": REPO / "benchmarks/data/triton_amd_corpus.json",
           "wave32": REPO / "benchmarks/data/triton_wave32_corpus.json"}


class _Recorder:
    """The affine tables ``LaneValues._affine`` builds while ``PlanEmitter.lds_address`` runs."""

    def __init__(self) -> None:
        self.inside = 0
        self.tables: list = []
        affine, address = lane_values.LaneValues._affine, plan_ops.PlanEmitter.lds_address
        rec = self

        def _affine(lanes, aff):
            if rec.inside:
                rec.tables.append(aff)
            return affine(lanes, aff)

        def lds_address(emitter, st, what):
            rec.inside += 1
            try:
                return address(emitter, st, what)
            finally:
                rec.inside -= 1

        lane_values.LaneValues._affine = _affine
        plan_ops.PlanEmitter.lds_address = lds_address


def summary(path: Path) -> str:
    """One line on the rows ``main`` printed to ``path``: plans, exact, within one, sum and median of the
    compiled setup less the estimate."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if not rows:
        return f"{path}: no rows"
    diffs = sorted(r["setup"]["total"] - sum(r["estimate"].values()) for r in rows)
    median = (diffs[(len(diffs) - 1) // 2] + diffs[len(diffs) // 2]) / 2
    return (f"{len(rows)} plans: compiled setup = estimate {sum(d == 0 for d in diffs)}, within one "
            f"{sum(abs(d) <= 1 for d in diffs)}; compiled - estimate: sum {sum(diffs)}, median {median:g}")


def main(argv=None) -> int:
    ap = ScriptParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", choices=sorted(CORPORA), default="amd")
    ap.add_argument("--arch")
    ap.add_argument("--all", action="store_true", help="one-warp plans and plans without a warp part too")
    ap.add_argument("--summary", type=Path, help="summarize the rows of an earlier run instead")
    args = ap.parse_args(argv)
    if args.summary:
        try:
            print(summary(args.summary))
        except (OSError, ValueError, KeyError, TypeError) as e:
            ap.error(f"--summary {args.summary}: not rows this script wrote ({type(e).__name__}: {e})")
        return 0
    rec = _Recorder()
    cases = json.loads(CORPORA[args.corpus].read_text())["cases"]
    for c in cases:
        if args.arch and c["arch"] != args.arch:
            continue
        plan = kernel_plan(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), c["arch"],
                           dtype_bits(c["dtype"]))
        if "valu_lds_addr" not in plan.overhead and not args.all:
            continue
        if plan.num_warps < 2 and not args.all:
            continue
        rec.tables = []
        try:
            low = lower_conversion(plan, binary=False, cache=False)
        except Exception as e:  # noqa: BLE001 (an analysis: report the case and go on)
            print(f"{c['name']} {c['arch']} {c['dtype']}: {e}", file=sys.stderr)
            continue
        isa = low.compiled.isa
        lines = region_lines(isa, "setup")
        counts = isa_counts(isa, "setup")
        tables = [(t.const, list(t.lane_cols), list(t.warp_cols)) for t in rec.tables]
        if not args.all and not any(any(w) for _, _, w in tables):
            continue
        print(json.dumps({
            "name": c["name"], "arch": c["arch"], "dtype": c["dtype"], "num_warps": plan.num_warps,
            "wave_size": plan.wave_size, "estimate": {k: plan.overhead.get(k, 0) for k in SETUP_KEYS},
            "setup": {"total": counts["total"], "valu": counts["valu"], "salu": counts["salu"],
                      "delay": sum("s_delay_alu" in ln for ln in lines)},
            "tables": tables, "isa": [ln.strip() for ln in lines if ln.strip() and not ln.strip().startswith(";")],
        }), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
