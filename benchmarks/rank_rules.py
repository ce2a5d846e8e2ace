"""Replays ranking rules over every candidate plan of the AMD baseline and corpus: how many cases each
rule leaves above Triton in instructions, in modelled cycles, and in either.

Usage: python benchmarks/rank_rules.py [--exponents 0,0.5,1] [--additive 0,3,10] [--ties 0.05,0.15]
       [--every N] [--list] [--json]

Per case (the 48 baseline cases against Triton's counts; the corpus cases against Triton's whole
conversion, ``linlayout.cli.bench.triton_whole_conversion`` without the load/store-line VALU, which
plans have no counterpart of (the bench measures ours from compiled kernels), leaving out those without it and those
whose Triton kernel needs more LDS than the target has), the packing orders of the bench's kernel
(``linlayout.synth.packing.packing_candidates``) are planned with ``candidate_plans(...,
objective="concurrent", prune=False)`` for the kernel's src and dst VGPR tuples, as the bench's
``kernel_plan`` plans them (``packing_plans``): every candidate, built and priced.  Each candidate carries
what a rule sees, its planned cost (the ``concurrent`` value) and its instructions with setup, and
what the goal measures, its instruction count as the ISA would count it without setup
(``plan_isa_counts`` less the VALU and SALU setup, which Triton's counted region leaves out too) and
that count priced as an instruction mix (``linlayout.synth.cost.mix_cost``, as the bench prices
Triton's counts).  These are the plan's counts, not a compiled kernel's, so a case can differ from
``linlayout bench conversions`` where LLVM counts differently.

A rule ranks a case's candidates by a value of (cost, instructions ``n``): the ratio form
``cost * n ** e`` (``--exponents``; the planner's ``CostModel.rank_value``, with ``e`` 1/2 under
``concurrent``) or the additive form ``cost + c * n`` (``--additive``, ``c`` cycles per
instruction).  As the planner does, within each order the candidates within the tie fraction
(``--ties``) of the least value go by fewest instructions, then no LDS, then the latency value, and
across the orders the first plans by value, near ties by fewest instructions, then cost.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout import LayoutError, LinearLayout  # noqa: E402
from linlayout.cli.bench import triton_exceeds_target_lds, triton_whole_conversion  # noqa: E402
from linlayout.dtypes import dtype_bits  # noqa: E402
from linlayout.lowering.emit.conversion_kernel import contiguous_registers, source_tuples  # noqa: E402
from linlayout.lowering.plan_counts import plan_isa_counts  # noqa: E402
from linlayout.synth.convert import candidate_plans  # noqa: E402
from linlayout.synth.cost import cost_model, mix_cost, rank_value, tie_limit  # noqa: E402
from linlayout.synth.packing import packing_candidates, with_register_order  # noqa: E402

DATA = REPO / "benchmarks" / "data"
SETS = {"baseline": DATA / "triton_amd_baseline.json", "corpus": DATA / "triton_amd_corpus.json"}
OBJECTIVE = "concurrent"


@dataclass(frozen=True)
class Candidate:
    """One candidate plan as a rule sees it (``cost``, ``instructions`` with setup, ``uses_lds``,
    ``latency``) and as the goal measures it (``isa_instructions``, ``mix_cycles``); ``order`` is the
    index of its packing order."""

    order: int
    cost: float
    instructions: int
    uses_lds: bool
    latency: float
    isa_instructions: int
    mix_cycles: float


@dataclass(frozen=True)
class Case:
    """A case's name, set, Triton's instructions and modelled cycles, and its candidates."""

    name: str
    set_name: str
    triton_instructions: int
    triton_cycles: float
    candidates: tuple[Candidate, ...]

    def over(self, c: Candidate) -> tuple[bool, bool]:
        """Is ``c`` above Triton in instructions, in modelled cycles?"""
        return c.isa_instructions > self.triton_instructions, c.mix_cycles > self.triton_cycles + 1e-9


def region_counts(plan) -> dict[str, int]:
    """``plan_isa_counts`` without the plan's VALU and SALU setup (its waits stay)."""
    counts = plan_isa_counts(plan)
    for name, n in plan.overhead.items():
        if name not in ("s_waitcnt", "s_nop"):
            cls = name.split("_", 1)[0]
            counts[cls] -= int(n)
            counts["total"] -= int(n)
    return counts


def packing_plans(case: dict, objective: str = OBJECTIVE):
    """``(order, plan)`` for every candidate plan (unverified, every one built: ``candidate_plans(...,
    prune=False)``) of every packing order of the bench's kernel (``linlayout.cli.bench.kernel_plan``:
    ``packing_candidates`` of the kernel's fixed register runs, each order planned for its src tuples
    and the dst's tuples), ``order`` its index; the orders the planner refuses are left out."""
    src, dst = LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])
    element_bits, arch = dtype_bits(case["dtype"]), case["arch"]
    orders = packing_candidates(src, dst, element_bits, contiguous_registers(src), contiguous_registers(dst))
    for index, (src_first, dst_first) in enumerate(orders):
        s = src if src_first is None else with_register_order(src, src_first)
        d = dst if dst_first is None else with_register_order(dst, dst_first)
        try:
            plans = candidate_plans(s, d, arch, element_bits, objective=objective,
                                    src_tuple_dwords=source_tuples(s, element_bits),
                                    dst_tuple_dwords=source_tuples(d, element_bits), prune=False)
        except LayoutError:
            continue
        for plan in plans:
            yield index, plan


def load_case(case: dict, set_name: str) -> Case | None:
    """The case with every candidate of every packing order (``packing_plans``; None where Triton has
    no whole conversion to compare with, or the planner refuses every order)."""
    triton = case["triton"] if set_name == "baseline" else triton_whole_conversion(case, outside_valu=False)
    if triton is None or triton_exceeds_target_lds(case):
        return None
    element_bits, arch = dtype_bits(case["dtype"]), case["arch"]
    model = cost_model(arch, OBJECTIVE)
    candidates, lane_bytes = [], None
    for index, plan in packing_plans(case):
        lane_bytes = (plan.slots_in * element_bits // 8, plan.slots_out * element_bits // 8)
        counts = region_counts(plan)
        candidates.append(Candidate(index, plan.cost, plan.total_with_overhead(), plan.lds_bytes > 0,
                                    plan.cost_detail.get("latency_value", 0.0), counts["total"],
                                    mix_cost(model, counts, *lane_bytes)[f"{OBJECTIVE}_value"]))
    if not candidates:
        return None
    name = f"{case['name']} {arch} {case['dtype']} {case.get('num_warps', '')}".strip()
    return Case(name, set_name, int(triton["total"]), mix_cost(model, triton, *lane_bytes)[f"{OBJECTIVE}_value"],
                tuple(candidates))


def ratio_rule(exponent: float):
    """The rank value ``cost * n ** exponent``."""
    return lambda c: rank_value(c.cost, c.instructions, exponent)


def additive_rule(cycles_per_instruction: float):
    """The value ``cost + cycles_per_instruction * n``."""
    return lambda c: c.cost + cycles_per_instruction * c.instructions


def _first(candidates: list[Candidate], value, tie_fraction: float, then) -> Candidate:
    """The first candidate: least value; near ties (within its tie limit, ``cost.tie_limit``) by
    fewest instructions, then by ``then``."""
    tie = tie_limit(min(value(c) for c in candidates), tie_fraction)
    return min(candidates, key=lambda c: (value(c) > tie, c.instructions, then(c)))


def choose(case: Case, value, tie_fraction: float) -> Candidate:
    """The plan a rule picks, as the planner picks: the first of each packing order (near ties then
    without LDS, then by latency: ``convert._rank``), then the first of those (near ties then by cost:
    ``cost.near_best``)."""
    by_order: dict[int, list[Candidate]] = {}
    for c in case.candidates:
        by_order.setdefault(c.order, []).append(c)
    firsts = [_first(cs, value, tie_fraction, lambda c: (c.uses_lds, c.latency)) for cs in by_order.values()]
    return _first(firsts, value, tie_fraction, lambda c: c.cost)


def replay(cases: list[Case], value, tie_fraction: float) -> dict:
    """Per set: cases over Triton in instructions, in cycles, in either; total instructions; geometric
    mean of ours/Triton's instructions; and the cases over."""
    out = {s: {"instructions_over": 0, "cycles_over": 0, "either_over": 0, "instructions": 0, "log_sum": 0.0,
               "counted": 0, "cases_over": []} for s in SETS}
    for case in cases:
        c = choose(case, value, tie_fraction)
        over_n, over_c = case.over(c)
        row = out[case.set_name]
        row["instructions_over"] += over_n
        row["cycles_over"] += over_c
        row["either_over"] += over_n or over_c
        row["instructions"] += c.isa_instructions
        if c.isa_instructions and case.triton_instructions:
            row["log_sum"] += math.log(c.isa_instructions / case.triton_instructions)
            row["counted"] += 1
        if over_n or over_c:
            row["cases_over"].append(f"{case.name}: {c.isa_instructions} vs {case.triton_instructions} instructions, "
                                     f"{c.mix_cycles:.0f} vs {case.triton_cycles:.0f} cycles")
    for row in out.values():
        row["geomean"] = round(math.exp(row.pop("log_sum") / max(row.pop("counted"), 1)), 3)
    return out


def _numbers(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of numbers") from None


def main(argv: list[str] | None = None) -> int:
    ap = ScriptParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--exponents", type=_numbers, default=[0.0, 0.5, 1.0])
    ap.add_argument("--additive", type=_numbers, default=[1.0, 3.0, 10.0])
    ap.add_argument("--ties", type=_numbers, default=[0.05])
    ap.add_argument("--every", type=int, default=1, help="every N-th case of each set")
    ap.add_argument("--list", action="store_true", help="also list the cases each rule leaves over Triton")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.every < 1:
        ap.error(f"--every {args.every} must be at least 1")
    if any(tie < 0 for tie in args.ties):
        ap.error(f"--ties {args.ties}: a tie fraction is at least 0")
    cases = [c for set_name, path in SETS.items()
             for raw in json.loads(path.read_text())["cases"][::args.every]
             if (c := load_case(raw, set_name)) is not None]
    rules = [(f"cost*n^{e:g}", ratio_rule(e)) for e in args.exponents] + \
            [(f"cost+{c:g}n", additive_rule(c)) for c in args.additive]
    results = [{"rule": name, "tie_fraction": tie, **replay(cases, value, tie)} for name, value in rules
               for tie in args.ties]
    if args.json:
        print(json.dumps({"cases": {s: sum(c.set_name == s for c in cases) for s in SETS}, "rules": results},
                         indent=1))
        return 0
    print(f"cases: {', '.join(f'{s} {sum(c.set_name == s for c in cases)}' for s in SETS)}")
    print("| rule | tie | " + " | ".join(f"{s}: over in instructions / cycles / either, instructions, geomean"
                                           for s in SETS) + " |")
    print("|---|---:|" + "---|" * len(SETS))
    for r in results:
        cells = [f"{r[s]['instructions_over']} / {r[s]['cycles_over']} / {r[s]['either_over']}, "
                 f"{r[s]['instructions']}, {r[s]['geomean']}" for s in SETS]
        print(f"| {r['rule']} | {r['tie_fraction']:g} | " + " | ".join(cells) + " |")
    if args.list:
        for r in results:
            print(f"\n{r['rule']} (tie {r['tie_fraction']:g}):")
            for s in SETS:
                for line in r[s]["cases_over"]:
                    print(f"  {s}: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
