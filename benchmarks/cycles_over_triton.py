"""Why our modelled cycles exceed Triton's instruction mix: the corpus cases over it under the plans'
objective, in the counted region or in the whole conversion, each with its cause.

Usage::

    linlayout bench conversions --corpus [wave32] --isa-only --json > rows.json
    python benchmarks/cycles_over_triton.py rows.json [--corpus benchmarks/data/triton_wave32_corpus.json] [--list]
                                            [--conflict-blind]

A case is over where the bench's ``modelled`` value of the plan's objective (our compiled counts and
Triton's priced alike as instruction mixes, linlayout.synth.cost.mix_cost) exceeds Triton's, in the
counted region (``ours`` against ``triton``: the bench summary's ``modelled_over_triton``) or in the
whole conversion (``ours_whole`` against ``triton_whole``).  Both sides' LDS accesses are priced with
their bank conflicts where the bench row has them (``bank_conflicts``: ours from the plan's addresses,
Triton's from its compiled kernel's, benchmarks/triton_lds_conflicts.py); ``--conflict-blind`` takes
the rows' ``modelled_conflict_blind`` values instead (no conflict on either side: the measure before
session 22), and prices the candidates below without conflicts too.  Each such case goes to the first
class that holds:

* ``boundary-lds`` / ``boundary-valu``: over in the region only.  Against the whole conversion ours
  is not over: Triton's counted region leaves out LDS accesses of its conversion (``-lds``: its whole
  conversion has more of them, on the lines its ``.loc`` directives name) or only the VALU of its load
  and store lines (``-valu``), which the whole conversion counts (linlayout.cli.bench);
* ``compiled``: the plan's own counts (its steps and estimated setup as ISA classes,
  linlayout.lowering.plan_counts.plan_isa_counts) price at or below Triton's whole conversion, the
  compiled kernel above it: the kernel holds instructions the plan did not expect (setup beyond the
  estimate, load/store-side VALU);
* ``rank-tie``, ``rank-exponent``, ``rank-price``: a candidate plan of the bench's kernel (any
  packing order, every candidate built: benchmarks.rank_rules.packing_plans), counted so, prices at
  or below Triton's whole conversion, but the planner ranked it after its plan.  ``-tie``: the
  candidate's rank value (linlayout.synth.cost.CostModel.rank_value of its ``rank_cost``) is at most the
  plan's, and the near tie went to the plan's fewer tie count (``CostModel.tie_count``: its
  instructions with setup, on CDNA with the LDS passes its bank conflicts add); ``-exponent``: its
  modelled cost is below the plan's, and the instruction count in the rank value put it behind;
  ``-price``: the plan's own pricing puts it above the plan, the mix below (the two pricings disagree);
* ``setup``: the same LDS and crossbar instructions as Triton's whole conversion, more VALU or SALU;
* ``form``: other LDS or crossbar instructions than Triton's, and no candidate at or below its mix.

Prints a Markdown table of the classes (cases, over in the region, over in the whole conversion) and
with ``--list`` every case of each class.
"""

from __future__ import annotations

import os
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: benchmarks.*

from benchmarks.corpus_losses import CORPUS, corpus_rows  # noqa: E402
from benchmarks.rank_rules import packing_plans  # noqa: E402
from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout import LinearLayout  # noqa: E402
from linlayout.cli.bench import kernel_plan  # noqa: E402
from linlayout.dtypes import dtype_bits  # noqa: E402
from linlayout.lowering.plan_counts import plan_isa_counts  # noqa: E402
from linlayout.synth.cost import cost_model, lds_conflict_cycles, mix_cost  # noqa: E402

CLASSES = ("boundary-lds", "boundary-valu", "compiled", "rank-tie", "rank-exponent", "rank-price", "setup", "form")
#: The instruction classes that move data through the LDS or its crossbar, grouped as Triton's counts
#: and ours compare them (a transposing read is a read; ``ds_permute`` is priced as ``ds_bpermute``).
MOVES = {"lds_write": ("lds_write",), "lds_read": ("lds_read", "lds_read_tr"),
         "crossbar": ("ds_bpermute", "ds_permute", "ds_swizzle")}


def _moves(counts: dict) -> dict[str, int]:
    return {k: sum(int(counts.get(c, 0)) for c in cs) for k, cs in MOVES.items()}


def modelled_values(row: dict, blind: bool) -> dict:
    """The row's ``modelled`` values, or with ``blind`` its conflict-blind ones."""
    if "bank_conflicts" not in row:
        sys.exit("rows made by an older linlayout bench (no bank_conflicts): run it again")
    return row["modelled_conflict_blind" if blind else "modelled"]


def over(row: dict, blind: bool = False) -> tuple[bool, bool]:
    """Is the row's modelled value under its plan's objective above Triton's in the region, in the
    whole conversion (False where the row has no whole conversion)?  ``blind``: conflict-blind."""
    m = modelled_values(row, blind)[row["objective"]]
    whole = m.get("ours_whole") is not None and m.get("triton_whole") is not None
    return m["ours"] > m["triton"] + 1e-9, whole and m["ours_whole"] > m["triton_whole"] + 1e-9


def classify(row: dict, case: dict, blind: bool = False) -> tuple[str, str]:
    """The class of a case over Triton's mix (module docstring) and a line of its numbers."""
    region_over, whole_over = over(row, blind)
    if not (region_over or whole_over):
        raise ValueError(f"{case['name']} {case['arch']} {case['dtype']}: not over Triton's mix")
    objective = row["objective"]
    m = modelled_values(row, blind)[objective]
    if not whole_over:
        extra = _moves(row["triton_whole"])["lds_read"] + _moves(row["triton_whole"])["lds_write"] \
            - _moves(row["triton"])["lds_read"] - _moves(row["triton"])["lds_write"]
        return ("boundary-lds" if extra > 0 else "boundary-valu",
                f"region {m['ours']:.0f} vs {m['triton']:.0f} cycles, whole {m['ours_whole']:.0f} vs "
                f"{m['triton_whole']:.0f}")
    bits, arch = dtype_bits(case["dtype"]), case["arch"]
    model = cost_model(arch, objective)
    plan = kernel_plan(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), arch, bits)
    lane_bytes = plan.lane_bytes()

    conflicts = not blind and row["bank_conflicts"] is not None

    def mix(p) -> float:
        return mix_cost(model, plan_isa_counts(p), *lane_bytes,
                        lds_conflict_cycles(p) if conflicts else 0.0)[f"{objective}_value"]

    triton = m["triton_whole"]
    head = (f"whole {m['ours_whole']:.0f} vs {triton:.0f} cycles, {row['ours_whole']['total']} vs "
            f"{row['triton_whole']['total']} instructions")
    planned = mix(plan)
    if planned <= triton + 1e-9:
        setup = row["ours_setup"]
        estimated = {unit: sum(int(n) for k, n in plan.overhead.items() if k.startswith(unit)) for unit in ("valu", "salu")}
        return "compiled", (f"{head}; planned {planned:.0f}; setup VALU {setup['valu']}, SALU {setup['salu']} "
                            f"(estimated: {estimated['valu']}, {estimated['salu']}, tuple copies included); "
                            f"load/store-side VALU {row['ours_outside_valu']}")
    below = [p for _, p in packing_plans(case, objective) if mix(p) <= triton + 1e-9]
    if below:
        alt = min(below, key=lambda p: model.rank_value(model.rank_cost(p), p.total_with_overhead()))
        alt_rank = model.rank_value(model.rank_cost(alt), alt.total_with_overhead())
        plan_rank = model.rank_value(model.rank_cost(plan), plan.total_with_overhead())
        kind = "rank-tie" if alt_rank <= plan_rank else ("rank-exponent" if alt.cost < plan.cost else "rank-price")
        return kind, (f"{head}; the plan: cost {plan.cost:.0f}, {plan.total_with_overhead()} instructions, tie count "
                      f"{model.tie_count(plan):g}, rank {plan_rank:.0f}; a {alt.strategy} candidate: cost "
                      f"{alt.cost:.0f}, {alt.total_with_overhead()} instructions, tie count {model.tie_count(alt):g}, "
                      f"rank {alt_rank:.0f}, mix {mix(alt):.0f}")
    ours, theirs = _moves(row["ours_whole"]), _moves(row["triton_whole"])
    return ("setup" if ours == theirs else "form"), (f"{head}; LDS/crossbar ours {ours}, Triton's {theirs}; "
                                                     f"VALU {row['ours_whole']['valu']} vs "
                                                     f"{row['triton_whole']['valu']}, SALU "
                                                     f"{row['ours_whole']['salu']} vs {row['triton_whole']['salu']}")


def main() -> None:
    ap = ScriptParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rows", help="the --json output of linlayout bench conversions --corpus")
    ap.add_argument("--corpus", default=str(CORPUS))
    ap.add_argument("--list", action="store_true", help="also list every case of each class")
    ap.add_argument("--conflict-blind", action="store_true",
                    help="price no bank conflict on either side (the measure before session 22)")
    args = ap.parse_args()
    rows, cases = corpus_rows(ap, args.rows, args.corpus)
    by_class = defaultdict(list)
    for r, c in zip(rows, cases):
        if "refused" in r or not any(over(r, args.conflict_blind)):
            continue
        kind, line = classify(r, c, args.conflict_blind)
        by_class[kind].append((over(r, args.conflict_blind),
                               f"{c['name']} {c['arch']} {c['dtype']} {c['num_warps']} waves: {line}"))
    print("| class | cases | over in the region | over in the whole conversion |")
    print("|---|---:|---:|---:|")
    for kind in CLASSES:
        found = by_class[kind]
        print(f"| {kind} | {len(found)} | {sum(o[0] for o, _ in found)} | {sum(o[1] for o, _ in found)} |")
    everything = [o for found in by_class.values() for o, _ in found]
    print(f"| all | {len(everything)} | {sum(o[0] for o in everything)} | {sum(o[1] for o in everything)} |")
    if args.list:
        for kind in CLASSES:
            if by_class[kind]:
                print(f"\n{kind}:")
                print("\n".join(f"- {line}" for _, line in by_class[kind]))


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:  # the reader stopped early (``| head``): nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
