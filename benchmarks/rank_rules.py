"""Replays ranking rules over every candidate plan of the AMD baseline, the AMD corpus and the wave32
corpus: how many cases each rule leaves above Triton in instructions, in modelled cycles and in
either, in the region and in the whole conversion.

Usage: python benchmarks/rank_rules.py [--exponents 0,0.5,1] [--additive 1,3,10] [--windows 0,4,16]
       [--weights 0.5,1] [--conflict-ties] [--ties 0.05,0.15] [--sets baseline,corpus,wave32] [--every N]
       [--list | --against] [--conflict-blind] [--json]
       python benchmarks/rank_rules.py --uncovered [--sets ...] [--every N] [--json]
       python benchmarks/rank_rules.py --trades [--sets ...] [--every N] [--json]

Rerun and compare: ``python benchmarks/rank_rules.py > a.md`` on each tree (about 20 s; the default
grid is the one docs/conversions.md section 5 quotes).

Per case (the 48 baseline cases against Triton's counts; the corpus cases, AMD
(benchmarks/data/triton_amd_corpus.json) and wave32 (benchmarks/data/triton_wave32_corpus.json),
against Triton's whole conversion, ``linlayout.cli.bench.triton_whole_conversion``, leaving out those
without it and those whose Triton kernel needs more LDS than the target has), the packing orders of the bench's kernel (``linlayout.synth.packing.packing_candidates``) are
planned with ``candidate_plans(..., objective="concurrent", prune=False)`` for the kernel's src and
dst VGPR tuples, as the bench's ``kernel_plan`` plans them (``packing_plans``): every candidate, built
and priced.  Each candidate carries what a rule sees, its planned cost (the ``concurrent`` value)
and its instructions with setup, and what the goal measures, in two measures:

* *region*: its instruction count as the ISA would count it without setup (``plan_isa_counts``
  less the VALU and SALU setup, which Triton's counted region leaves out too), against Triton's
  whole conversion without the load/store-line VALU;
* *whole*: the same with the estimated setup (``plan_isa_counts``), against Triton's whole conversion
  with that VALU (``triton_whole_conversion``'s default), as the bench's whole conversion compares
  them; corpora only.  Ours is taken to have no load/store-line VALU, which the plans cannot tell
  (the compiled kernels have none beyond the identity kernels' in 657 of the 691 AMD corpus cases
  and 598 of the 615 wave32 ones at ``43033db``);

each also priced as an instruction mix (``linlayout.synth.cost.mix_cost``, as the bench prices
Triton's counts), with the cycles each side's LDS bank conflicts add as the bench's rows have them
(``linlayout.cli.bench.bank_conflicts``: ours from the plan's addresses, Triton's from its compiled
accesses; none on either side for the baseline, whose Triton accesses are not stored; ``--conflict-blind``:
none anywhere, the measure before session 22).  These are the plans' counts, not a compiled kernel's,
so a case can differ from ``linlayout bench conversions`` where LLVM counts differently (the setup most
of all).

Rules (``Rule``): a value of (cost, instructions with setup ``n``) ranks a case's candidates -- the
ratio form ``cost * n ** e`` (``--exponents``; ``CostModel.rank_value``), the additive
form ``cost + c * n`` (``--additive``, ``c`` cycles per instruction) -- or the window rule
(``--windows k``): the least cost among the candidates within ``k`` instructions of the fewest, a
lexicographic rule (``k`` 0: fewest instructions, then cost; no ``k``: cost alone) -- or a rule that
weighs a candidate's bank-conflict cycles apart (``--weights w``: ``(cost + w * k) * n ** e`` at the
planner's exponent, ``k`` the conflict cycles ``cost`` holds once: the planner's rule at ``w``
``CONCURRENT_CONFLICT_WEIGHT``, ``planner_rule``, ``CostModel.rank_cost``; ``--conflict-ties``:
conflicted candidates lose near ties, with each ``w`` and alone).  As the planner
does, within each packing order the candidates within the tie fraction (``--ties``) of the least
value go by fewest instructions (the planner's rule: with the LDS passes bank conflicts add,
``CostModel.tie_count``), then no LDS, then the latency value (``convert._rank``), and across
the orders the first plans by value, near ties by fewest instructions (the planner's rule: with the
passes again, ``CostModel.best_plan``), then cost; the window rule picks the same way at both levels.

Prints a Markdown table per set (``cases over Triton: instructions / cycles / either``, the
instructions of the picks summed, the geometric mean of ours/Triton's), then a summary, a row per
rule: the corpora's cases over in either measure in the region, and in the region or the whole
conversion (``any``: the score docs/conversions.md ranks the rules by), and the baseline's; the
planner's own rule is marked ``*``.  With ``--list``, every case each rule leaves over.  With
``--against`` (``against_planner``), per rule, set, measure and count the cases over Triton it fixes and
breaks against the planner's pick.

With ``--uncovered`` (no rules replayed): the cases no candidate covers, those where no candidate is at
or under Triton in both counts (instructions and modelled cycles) in every measure, so that no ranking
rule can meet the goal; per case Triton's counts, per measure the candidate of fewest instructions and
the one of fewest cycles, and the candidate nearest to covering (``uncovered``).

With ``--trades`` (``trades``): the rank trades, the cases some candidate covers but the planner's rule
(its exponent and tie fraction) picks one that does not.  Per case, the values of each one-parameter
family (``FAMILIES``: the exponent ``e`` of ``cost * n ** e`` on ``0, 0.02, .., 4``, the rate ``c`` of
``cost + c * n`` on ``0, 0.25, .., 60``, the weight ``w`` of the bank-conflict cycles ``k`` in
``(cost + w * k) * n ** e`` at the planner's exponent on ``0, 0.125, .., 8``; the planner's tie
fraction) whose pick covers it, and its
*witnesses*: the cases whose planner's pick covers them and that every one of those values leaves over
Triton in a count and measure where the planner's pick is not (``kept``; none where no value covers
it).  A trade with a witness in
every family is a proof by replay that no rule of these families meets the goal on both cases.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout import LayoutError, LinearLayout  # noqa: E402
from linlayout.cli.bench import (bank_conflicts, triton_exceeds_target_lds, triton_whole_conversion,  # noqa: E402
                                 unpacked_sides)
from linlayout.dtypes import dtype_bits  # noqa: E402
from linlayout.lowering.emit.conversion_kernel import contiguous_registers, source_tuples  # noqa: E402
from linlayout.lowering.plan_counts import plan_isa_counts  # noqa: E402
from linlayout.synth.convert import candidate_plans, one_copy_candidates  # noqa: E402
from linlayout.synth.cost import (CONCURRENT_CONFLICT_WEIGHT, CONCURRENT_INSTRUCTION_EXPONENT,  # noqa: E402
                                  CONCURRENT_TIE_FRACTION, cost_model, lds_conflict_cycles, mix_cost, rank_value, SETUP_DELAY_ALU, tie_limit)
from linlayout.synth.one_copy import copy_bits  # noqa: E402
from linlayout.synth.packing import packing_candidates, unpacked_orders, with_register_order  # noqa: E402
from linlayout.synth.src_offsets import row_major_strides  # noqa: E402

DATA = REPO / "benchmarks" / "data"
SETS = {"baseline": DATA / "triton_amd_baseline.json", "corpus": DATA / "triton_amd_corpus.json",
        "wave32": DATA / "triton_wave32_corpus.json"}
CORPORA = ("corpus", "wave32")  # the sets compared with Triton's whole conversion
MEASURES = ("region", "whole")
OBJECTIVE = "concurrent"


@dataclass(frozen=True)
class Candidate:
    """One candidate plan as a rule sees it (``cost``, ``instructions`` with setup, ``uses_lds``,
    ``latency``, ``conflict_cycles``: what its LDS accesses' bank conflicts add to ``cost``,
    ``cost.lds_conflict_cycles``, and ``conflict_passes``, the LDS passes they add where the planner's
    near ties count them, ``CostModel.tie_count``: CDNA) and as the goal
    measures it (``counted``: per measure, its ISA instructions and their mix cycles, ``region``
    without setup, ``whole`` with it); ``order`` is
    ``(k, f)``, the index of its packing order and of its filled dst (0: the dst's own candidates;
    ``packing_plans``)."""

    order: tuple[int, int]
    cost: float
    instructions: int
    uses_lds: bool
    latency: float
    counted: dict  # measure -> (instructions, mix cycles)
    conflict_cycles: float = 0.0
    conflict_passes: float = 0.0  # the LDS passes those conflicts add where the planner's ties count them

    @property
    def conflicted(self) -> bool:
        """Do its LDS accesses have bank conflicts?"""
        return self.conflict_cycles > 1e-9


@dataclass(frozen=True)
class Case:
    """A case's name, set, Triton's instructions and modelled cycles per measure (``triton``:
    measure -> (instructions, cycles)), and its candidates."""

    name: str
    set_name: str
    triton: dict
    candidates: tuple[Candidate, ...]

    @property
    def measures(self) -> tuple[str, ...]:
        """The measures compared: the baseline's Triton counts are a region only."""
        return tuple(self.triton)

    def over(self, c: Candidate, measure: str = "region") -> tuple[bool, bool]:
        """Is ``c`` above Triton in instructions, in modelled cycles, in ``measure``?"""
        (n, cycles), (triton_n, triton_cycles) = c.counted[measure], self.triton[measure]
        return n > triton_n, cycles > triton_cycles + 1e-9


def region_counts(plan) -> dict[str, int]:
    """``plan_isa_counts`` without the plan's VALU and SALU setup (its waits stay; the estimated
    ``s_delay_alu`` leave ``salu`` and its sub-count, ``SETUP_DELAY_ALU``)."""
    counts = plan_isa_counts(plan)
    for name, n in plan.overhead.items():
        if name not in ("s_waitcnt", "s_nop"):
            cls = name.split("_", 1)[0]
            counts[cls] -= int(n)
            counts["total"] -= int(n)
            if name in SETUP_DELAY_ALU:  # and from salu's sub-count
                counts["s_delay_alu"] -= int(n)
    return counts


def packing_plans(case: dict, objective: str = OBJECTIVE):
    """``(order, plan)`` for every candidate plan (unverified, every one built: ``candidate_plans(...,
    prune=False)``) of every packing order of the bench's kernel (``linlayout.cli.bench.kernel_plan``:
    ``packing_candidates`` of the kernel's fixed register runs, each order planned for its src tuples
    and the dst's tuples; where the kernel loads its 8/16-bit src elements alone, the src held one
    per VGPR with each of those dst orders after them, and where it stores its dst elements alone, the
    dst held so (``unpacked_orders``), their candidates those that convert:
    ``candidate_plans(..., src_unpacked=, dst_unpacked=)``), ``order`` the pair ``(k, f)``: ``k`` the order's
    index, ``f`` 0 for the candidates of the dst itself and ``i`` for those of the dst's ``i``-th filled dst
    where it holds elements in several lanes (the kernel stores one copy: ``kernel_plan``'s ``one_copy_dst``,
    ``convert.one_copy_candidates``, every one built); the orders the planner refuses are left out."""
    src, dst = LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])
    element_bits, arch = dtype_bits(case["dtype"]), case["arch"]
    orders = packing_candidates(src, dst, element_bits, contiguous_registers(src), contiguous_registers(dst))
    unpacked = unpacked_orders(orders, *unpacked_sides(src, dst, element_bits))  # kernel_plan's
    packed = [(src_first, dst_first, False, False) for src_first, dst_first in orders]
    for index, (src_first, dst_first, src_unpacked, dst_unpacked) in enumerate(packed + unpacked):
        s = src if src_first is None else with_register_order(src, src_first)
        d = dst if dst_first is None else with_register_order(dst, dst_first)
        keywords = dict(objective=objective, src_tuple_dwords=1 if src_unpacked else source_tuples(s, element_bits),
                        dst_tuple_dwords=1 if dst_unpacked else source_tuples(d, element_bits), prune=False,
                        src_unpacked=src_unpacked, dst_unpacked=dst_unpacked,
                        src_global_strides=row_major_strides([size for _, size in s.out_dims]))
        try:
            plans = candidate_plans(s, d, arch, element_bits, **keywords)
        except LayoutError:
            continue
        fills = one_copy_candidates(s, d, arch, element_bits, **keywords) if copy_bits(d) else []
        for fill, fill_plans in enumerate([plans] + fills):
            for plan in fill_plans:
                yield (index, fill), plan


def load_case(case: dict, set_name: str, conflict_blind: bool = False) -> Case | None:
    """The case with every candidate of every packing order (``packing_plans``; None where Triton has
    no whole conversion to compare with, or the planner refuses every order).  Each side's mix has
    the cycles its LDS accesses' bank conflicts add, as the bench's ``modelled`` has them
    (``linlayout.cli.bench.bank_conflicts``: ours from the plan's addresses, Triton's from its compiled
    accesses, benchmarks/data/triton_lds_conflicts.json, all of them in both measures, since both
    count every LDS access of Triton's kernel, ``triton_whole_conversion``); both conflict-blind where
    Triton's are not stored (the baseline) or with ``conflict_blind`` (the measure before session 22)."""
    baseline = set_name == "baseline"
    triton = {"region": case["triton"] if baseline else triton_whole_conversion(case, outside_valu=False)}
    if triton["region"] is None or triton_exceeds_target_lds(case):
        return None
    if not baseline:
        triton["whole"] = triton_whole_conversion(case)
    element_bits, arch = dtype_bits(case["dtype"]), case["arch"]
    model = cost_model(arch, OBJECTIVE)
    candidates, lane_bytes, triton_conflicts = [], None, 0.0
    for index, plan in packing_plans(case):
        lane_bytes = plan.lane_bytes()
        conflicts = None if baseline else bank_conflicts(plan, case, triton["region"])
        ours = lds_conflict_cycles(plan) if conflicts is None else conflicts["ours"]
        measured = conflicts is not None and not conflict_blind
        triton_conflicts = conflicts["triton_whole"] if measured else 0.0
        counts = {"region": region_counts(plan), "whole": plan_isa_counts(plan)}
        counted = {m: (counts[m]["total"], mix_cost(model, counts[m], *lane_bytes, ours if measured else 0.0)
                       [f"{OBJECTIVE}_value"]) for m in triton}
        candidates.append(Candidate(index, plan.cost, plan.total_with_overhead(), plan.lds_bytes > 0,
                                    plan.cost_detail.get("latency_value", 0.0), counted, ours,
                                    model.tie_count(plan) - plan.total_with_overhead()))
    if not candidates:
        return None
    name = f"{case['name']} {arch} {case['dtype']} {case.get('num_warps', '')}".strip()
    return Case(name, set_name, {m: (int(t["total"]), mix_cost(model, t, *lane_bytes, triton_conflicts)
                                     [f"{OBJECTIVE}_value"]) for m, t in triton.items()}, tuple(candidates))


@dataclass(frozen=True)
class Rule:
    """A ranking rule: ``value`` of a candidate among ``candidates`` (least first; infinite: never
    first unless all are), named ``name``; with ``conflicts_lose_ties``, near ties go to the candidates
    without bank conflicts first (``Candidate.conflicted``), then by the planner's keys; with
    ``passes_in_ties``, near ties count the LDS passes bank conflicts add with the instructions
    (``CostModel.tie_count``)."""

    name: str
    value: Callable[[Candidate, list[Candidate]], float]
    conflicts_lose_ties: bool = False
    passes_in_ties: bool = False


def ratio_rule(exponent: float) -> Rule:
    """The rank value ``cost * n ** exponent`` (``CostModel.rank_value``)."""
    return Rule(f"cost*n^{exponent:g}", lambda c, _: rank_value(c.cost, c.instructions, exponent))


def additive_rule(cycles_per_instruction: float) -> Rule:
    """The value ``cost + cycles_per_instruction * n``."""
    return Rule(f"cost+{cycles_per_instruction:g}n", lambda c, _: c.cost + cycles_per_instruction * c.instructions)


def conflict_rule(exponent: float, weight: float, conflicts_lose_ties: bool = False,
                  passes_in_ties: bool = False) -> Rule:
    """The rank value ``(cost + weight * k) * n ** exponent``, ``k`` the candidate's conflict cycles
    (``cost`` holds them once already: they weigh ``1 + weight`` times an issue cycle); with
    ``conflicts_lose_ties`` (``Rule``), conflicted candidates lose near ties; with ``passes_in_ties``
    (the planner's since cyc29), near ties count the LDS passes conflicts add."""
    return Rule(f"(cost+{weight:g}k)*n^{exponent:g}" + (", conflicts lose ties" if conflicts_lose_ties else "") +
                (", ties count passes" if passes_in_ties else ""),
                lambda c, _: rank_value(c.cost + weight * c.conflict_cycles, c.instructions, exponent),
                conflicts_lose_ties, passes_in_ties)


def planner_rule() -> Rule:
    """The planner's rule: ``conflict_rule`` at its exponent and conflict weight (``CostModel.rank_cost``,
    ``CostModel.rank_value``), near ties counting conflict passes (``CostModel.tie_count``)."""
    return conflict_rule(CONCURRENT_INSTRUCTION_EXPONENT, CONCURRENT_CONFLICT_WEIGHT, passes_in_ties=True)


def window_rule(window: int) -> Rule:
    """The cost of the candidates within ``window`` instructions of the fewest among them, infinite for
    the others: the least cost of those comes first."""
    def value(c: Candidate, candidates: list[Candidate]) -> float:
        return c.cost if c.instructions <= min(x.instructions for x in candidates) + window else math.inf
    return Rule(f"window {window:g}", value)


def _first(candidates: list[Candidate], rule: Rule, tie_fraction: float, then) -> Candidate:
    """The first candidate: least value; near ties (within its tie limit, ``cost.tie_limit``) by
    fewest instructions (without bank conflicts first, with the conflict passes, where the rule says
    so), then by ``then``."""
    values = {id(c): rule.value(c, candidates) for c in candidates}
    tie = tie_limit(min(values.values()), tie_fraction)
    return min(candidates, key=lambda c: (values[id(c)] > tie, rule.conflicts_lose_ties and c.conflicted,
                                          c.instructions + (c.conflict_passes if rule.passes_in_ties else 0.0),
                                          then(c)))


def choose(case: Case, rule: Rule, tie_fraction: float) -> Candidate:
    """The plan a rule picks, as the planner picks: the first of each packing order's dst and of each of its
    filled dsts (near ties then without LDS, then by latency: ``convert._rank``; a filled dst's ranked with
    the store mask, which the planner adds after), the first of those per packing order (near ties then by
    cost: ``cost.near_best``, ``convert._one_copy_plan``), then the first of those (the same)."""
    groups: dict[tuple[int, int], list[Candidate]] = {}
    for c in case.candidates:
        groups.setdefault(c.order, []).append(c)
    by_order: dict[int, list[Candidate]] = {}
    for cs in groups.values():
        first = _first(cs, rule, tie_fraction, lambda c: (c.uses_lds, c.latency))
        by_order.setdefault(first.order[0], []).append(first)
    firsts = [_first(cs, rule, tie_fraction, lambda c: c.cost) for cs in by_order.values()]
    return _first(firsts, rule, tie_fraction, lambda c: c.cost)


def replay(cases: list[Case], rule: Rule, tie_fraction: float, sets=tuple(SETS)) -> dict:
    """Per set and measure: cases over Triton in instructions, in cycles, in either; the picks'
    instructions summed; the geometric mean of ours/Triton's instructions; the cases over.  Per set,
    ``any_over``: cases over in either measure, region or whole."""
    out = {s: {m: {"instructions_over": 0, "cycles_over": 0, "either_over": 0, "instructions": 0,
                   "log_sum": 0.0, "counted": 0} for m in (MEASURES if s in CORPORA else ("region",))}
           for s in sets}
    for s in sets:
        out[s].update(any_over=0, cases_over=[])
    for case in cases:
        c = choose(case, rule, tie_fraction)
        lines = []
        for measure in case.measures:
            over_n, over_c = case.over(c, measure)
            row = out[case.set_name][measure]
            row["instructions_over"] += over_n
            row["cycles_over"] += over_c
            row["either_over"] += over_n or over_c
            n, cycles = c.counted[measure]
            row["instructions"] += n
            if n and case.triton[measure][0]:
                row["log_sum"] += math.log(n / case.triton[measure][0])
                row["counted"] += 1
            if over_n or over_c:
                triton_n, triton_cycles = case.triton[measure]
                lines.append(f"{measure} {n} vs {triton_n} instructions, {cycles:.0f} vs {triton_cycles:.0f} cycles")
        if lines:
            out[case.set_name]["any_over"] += 1
            out[case.set_name]["cases_over"].append(f"{case.name}: " + "; ".join(lines))
    for s in sets:
        for m in MEASURES:
            if m in out[s]:
                row = out[s][m]
                row["geomean"] = round(math.exp(row.pop("log_sum") / max(row.pop("counted"), 1)), 3)
    return out


def against_planner(cases: list[Case], rule: Rule, tie_fraction: float,
                    planned: dict | None = None) -> dict:
    """Per set, measure and count (``instructions``, ``cycles``): ``[fixed, broken]``, the cases over
    Triton in that count and measure under the planner's rule (``planned``: ``id(case)`` -> its pick;
    None: chosen here) and not under ``rule`` at ``tie_fraction``, and the other way round."""
    if planned is None:
        planned = {id(c): choose(c, planner_rule(), CONCURRENT_TIE_FRACTION) for c in cases}
    out: dict = {}
    for case in cases:
        picked = choose(case, rule, tie_fraction)
        for m in case.measures:
            cells = out.setdefault(case.set_name, {}).setdefault(m, {"instructions": [0, 0], "cycles": [0, 0]})
            before, after = case.over(planned[id(case)], m), case.over(picked, m)
            for count, was, now in zip(("instructions", "cycles"), before, after):
                cells[count][0] += was and not now
                cells[count][1] += now and not was
    return out


def covers(case: Case, c: Candidate) -> bool:
    """Is ``c`` at or under Triton in both counts in every measure of ``case``?"""
    return not any(any(case.over(c, m)) for m in case.measures)


def excess(case: Case, c: Candidate) -> float:
    """The largest ratio of ``c``'s counts to Triton's over the counts and measures of ``case`` (at most
    1 where ``c`` covers it; Triton's counts taken as at least 1)."""
    return max(x / max(t, 1) for m in case.measures for x, t in zip(c.counted[m], case.triton[m]))


def uncovered(cases: list[Case]) -> list[dict]:
    """The cases no candidate covers (``covers``): per case its set, name, and per measure Triton's
    (instructions, cycles), the least-instruction candidate's and the least-cycle candidate's (each
    the other count as the tie-break); ``nearest``: per measure the counts of the candidate of least
    ``excess``."""
    out = []
    for case in cases:
        if any(covers(case, c) for c in case.candidates):
            continue
        near = min(case.candidates, key=lambda c: excess(case, c))
        row = {"set": case.set_name, "name": case.name,
               "nearest": {m: [near.counted[m][0], round(near.counted[m][1], 1)] for m in case.measures}}
        for m in case.measures:
            fewest = min(case.candidates, key=lambda c: c.counted[m])
            cheapest = min(case.candidates, key=lambda c: c.counted[m][::-1])
            row[m] = {"triton": [case.triton[m][0], round(case.triton[m][1], 1)],
                      "fewest_instructions": [fewest.counted[m][0], round(fewest.counted[m][1], 1)],
                      "fewest_cycles": [cheapest.counted[m][0], round(cheapest.counted[m][1], 1)]}
        out.append(row)
    return out


#: The one-parameter rule families ``--trades`` scans: name -> the rule of each value.
FAMILIES = {"exponent": [(x / 50, ratio_rule(x / 50)) for x in range(201)],
            "additive": [(x / 4, additive_rule(x / 4)) for x in range(241)],
            "conflict": [(x / 8, conflict_rule(CONCURRENT_INSTRUCTION_EXPONENT, x / 8)) for x in range(65)]}


def kept(case: Case, picked: Candidate, planned: Candidate) -> bool:
    """Is ``picked`` over Triton in no count and measure of ``case`` where the planner's pick ``planned`` is
    not?"""
    return not any(p and not q for m in case.measures for p, q in zip(case.over(picked, m), case.over(planned, m)))


def trades(cases: list[Case], tie_fraction: float = CONCURRENT_TIE_FRACTION) -> list[dict]:
    """The rank trades (module docstring, ``--trades``): per case its set, name, Triton's and the planner's
    pick's counts per measure (instructions, cycles), and per family the values that cover it (``covered_at``)
    and its witnesses (names)."""
    planned = {id(c): choose(c, planner_rule(), tie_fraction) for c in cases}
    picks = {id(c): {f: [(v, choose(c, rule, tie_fraction)) for v, rule in values] for f, values in FAMILIES.items()}
             for c in cases}
    kept_at = {id(c): {f: {v for v, p in picks[id(c)][f] if kept(c, p, planned[id(c)])} for f in FAMILIES}
               for c in cases if covers(c, planned[id(c)])}
    out = []
    for case in cases:
        plan = planned[id(case)]
        if covers(case, plan) or not any(covers(case, c) for c in case.candidates):
            continue
        at = {f: [v for v, p in picks[id(case)][f] if covers(case, p)] for f in FAMILIES}
        witnesses = [other.name for other in cases if any(at.values()) and id(other) in kept_at
                     and all(not set(at[f]) & kept_at[id(other)][f] for f in FAMILIES)]
        out.append({"set": case.set_name, "name": case.name,
                    "triton": {m: [n, round(c, 1)] for m, (n, c) in case.triton.items()},
                    "planned": {m: [n, round(c, 1)] for m, (n, c) in plan.counted.items() if m in case.triton},
                    "covered_at": at, "witnesses": witnesses})
    return out


def _ranges(values: list[float], grid: list[float]) -> str:
    """``values`` (ascending, on ``grid``) as runs ``a-b`` of consecutive grid values; ``-`` where none."""
    runs: list[list[float]] = []
    for v in values:
        if runs and grid.index(v) == grid.index(runs[-1][-1]) + 1:
            runs[-1].append(v)
        else:
            runs.append([v])
    return ", ".join(f"{r[0]:g}" if len(r) == 1 else f"{r[0]:g}-{r[-1]:g}" for r in runs) or "-"


def _print_trades(rows: list[dict]) -> None:
    print(f"rank trades (a candidate covers the case, the planner's pick does not): {len(rows)}; with a witness: "
          f"{sum(bool(r['witnesses']) for r in rows)}")
    print("cells: instructions / cycles per measure (region; whole); the values of each family whose pick covers "
          "the case; its witnesses (cases every such value leaves over where the planner's pick is not)\n")
    print("| set | case | Triton | planned | " + " | ".join(f"{f} covers at" for f in FAMILIES) + " | witnesses |")
    print("|---|---|---|---|" + "---|" * len(FAMILIES) + "---|")
    for r in rows:
        counts = ["; ".join(f"{n} / {c:g}" for n, c in r[k].values()) for k in ("triton", "planned")]
        at = [_ranges(r["covered_at"][f], [v for v, _ in FAMILIES[f]]) for f in FAMILIES]
        w = (f"{len(r['witnesses'])}" + (f" (first: {r['witnesses'][0]})" if r["witnesses"] else "")
             if any(r["covered_at"].values()) else "-")
        print(f"| {r['set']} | {r['name']} | " + " | ".join(counts + at) + f" | {w} |")


def _print_against(rows: list[dict], sets: tuple[str, ...]) -> None:
    print("cells: cases over Triton the rule fixes / breaks against the planner's pick (instructions; cycles)\n")
    columns = [(s, m) for s in sets for m in (MEASURES if s in CORPORA else ("region",))]
    print("| rule | tie | " + " | ".join(f"{s} {m}" for s, m in columns) + " |")
    print("|---|---:|" + "---|" * len(columns))
    for r in rows:
        cells = ["; ".join(f"+{f}/-{b}" for f, b in r[s][m].values()) if s in r else "-" for s, m in columns]
        print(f"| {r['rule']} | {r['tie_fraction']:g} | " + " | ".join(cells) + " |")


def _print_uncovered(rows: list[dict], counts: dict) -> None:
    print(f"cases: {', '.join(f'{s} {n}' for s, n in counts.items())}; no candidate at or under Triton in "
          f"both counts in every measure: {len(rows)} (" +
          ", ".join(f"{s} {sum(r['set'] == s for r in rows)}" for s in counts) + ")")
    print("cells: instructions / cycles of Triton; of our candidate of fewest instructions; of fewest cycles; "
          "nearest: the candidate of least excess over Triton's counts, region; whole\n")
    print("| set | case | region: Triton, fewest n, fewest cycles | whole: Triton, fewest n, fewest cycles | nearest |")
    print("|---|---|---|---|---|")
    for r in rows:
        cells = [", ".join(f"{n} / {c:g}" for n, c in (r[m]["triton"], r[m]["fewest_instructions"],
                                                      r[m]["fewest_cycles"])) if m in r else "-"
                 for m in MEASURES]
        near = "; ".join(f"{n} / {c:g}" for n, c in r["nearest"].values())
        print(f"| {r['set']} | {r['name']} | " + " | ".join(cells) + f" | {near} |")


def _numbers(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of numbers") from None


def _sets(text: str) -> list[str]:
    names = [x for x in text.split(",") if x]
    if not names or any(x not in SETS for x in names):
        raise argparse.ArgumentTypeError(f"{text!r}: the sets are {', '.join(SETS)}")
    return names


def _cell(row: dict) -> str:
    return f"{row['instructions_over']} / {row['cycles_over']} / {row['either_over']}"


def main(argv: list[str] | None = None) -> int:
    ap = ScriptParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--exponents", type=_numbers, default=[0.0, 0.2, 0.3, 0.4, 0.5, 0.55, 0.6, 0.7, 1.0])
    ap.add_argument("--additive", type=_numbers, default=[1.0, 2.0, 3.0, 5.0, 7.0, 10.0, 20.0])
    ap.add_argument("--windows", type=_numbers, default=[0.0, 2.0, 4.0, 8.0, 16.0])
    ap.add_argument("--ties", type=_numbers, default=[0.05])
    ap.add_argument("--sets", type=_sets, default=list(SETS), help="comma-separated: " + ", ".join(SETS))
    ap.add_argument("--every", type=int, default=1, help="every N-th case of each set")
    ap.add_argument("--list", action="store_true", help="also list the cases each rule leaves over Triton")
    ap.add_argument("--uncovered", action="store_true",
                    help="list the cases no candidate covers (at or under Triton in both counts and measures)")
    ap.add_argument("--trades", action="store_true",
                    help="list the rank trades (a candidate covers the case, the planner's pick does not), the values "
                         "of each rule family that cover each, and the cases every such value makes worse")
    ap.add_argument("--weights", type=_numbers, default=[CONCURRENT_CONFLICT_WEIGHT],
                    help="also the rules (cost + w * conflict cycles) * n ** e at the planner's exponent, for each w")
    ap.add_argument("--conflict-ties", action="store_true",
                    help="also each --weights rule (and w 0) with conflicted candidates losing near ties")
    ap.add_argument("--against", action="store_true",
                    help="per rule, the cases over Triton it fixes / breaks against the planner's rule, per set, "
                         "measure and count")
    ap.add_argument("--conflict-blind", action="store_true",
                    help="price both sides' mixes without bank conflicts (the measure before session 22)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.every < 1:
        ap.error(f"--every {args.every} must be at least 1")
    if any(tie < 0 for tie in args.ties):
        ap.error(f"--ties {args.ties}: a tie fraction is at least 0")
    if any(w < 0 for w in args.windows):
        ap.error(f"--windows {args.windows}: a window is at least 0 instructions")
    sets = tuple(args.sets)
    cases = [c for set_name in sets
             for raw in json.loads(SETS[set_name].read_text())["cases"][::args.every]
             if (c := load_case(raw, set_name, args.conflict_blind)) is not None]
    counts = {s: sum(c.set_name == s for c in cases) for s in sets}
    if args.trades:
        rows = trades(cases)
        if args.json:
            print(json.dumps({"cases": counts, "trades": rows}, indent=1))
        else:
            _print_trades(rows)
        return 0
    if args.uncovered:
        rows = uncovered(cases)
        if args.json:
            print(json.dumps({"cases": counts, "uncovered": rows}, indent=1))
        else:
            _print_uncovered(rows, counts)
        return 0
    planners = (planner_rule().name, CONCURRENT_TIE_FRACTION)
    rules = [ratio_rule(e) for e in args.exponents] + [additive_rule(c) for c in args.additive] + \
            [window_rule(w) for w in args.windows] + \
            [conflict_rule(CONCURRENT_INSTRUCTION_EXPONENT, w, ties) for w in ([0.0] if args.conflict_ties else []) +
             args.weights for ties in ((False, True) if args.conflict_ties else (False,)) if w or ties] + \
            [planner_rule()]  # the --weights rules tie by instructions alone (the planner before cyc29)
    if args.against:
        rows = [{"rule": rule.name, "tie_fraction": tie, **against_planner(cases, rule, tie)} for rule in rules
                for tie in args.ties]
        if args.json:
            print(json.dumps({"cases": counts, "against": rows}, indent=1))
        else:
            _print_against(rows, sets)
        return 0
    results = [{"rule": rule.name, "tie_fraction": tie, **replay(cases, rule, tie, sets)} for rule in rules
               for tie in args.ties]
    if args.json:
        print(json.dumps({"cases": counts, "rules": results}, indent=1))
        return 0
    print(f"cases: {', '.join(f'{s} {n}' for s, n in counts.items())}; the planner's rule marked *")
    print("cells: cases over Triton in instructions / cycles / either; the picks' instructions; geomean")

    def label(r: dict) -> str:
        return r["rule"] + ("*" if (r["rule"], r["tie_fraction"]) == planners else "")

    for s in sets:
        measures = MEASURES if s in CORPORA else ("region",)
        print(f"\n{s}:\n\n| rule | tie | " + " | ".join(f"{m} over" for m in measures) + " | any over | " +
              " | ".join(f"{m} instructions, geomean" for m in measures) + " |")
        print("|---|---:|" + "---|" * (2 * len(measures) + 1))
        for r in results:
            print(f"| {label(r)} | {r['tie_fraction']:g} | " + " | ".join(_cell(r[s][m]) for m in measures) +
                  f" | {r[s]['any_over']} | " +
                  " | ".join(f"{r[s][m]['instructions']}, {r[s][m]['geomean']}" for m in measures) + " |")
    corpora = [s for s in sets if s in CORPORA]
    if corpora:
        print(f"\n{' + '.join(corpora)}: cases over in either measure, region / any (region or whole); "
              "baseline: region over in instructions / cycles, instructions\n")
        print("| rule | tie | region either | any | baseline |\n|---|---:|---:|---:|---|")
        for r in results:
            b = r["baseline"]["region"] if "baseline" in sets else None
            base = f"{b['instructions_over']} / {b['cycles_over']}, {b['instructions']}" if b else "-"
            print(f"| {label(r)} | {r['tie_fraction']:g} | {sum(r[s]['region']['either_over'] for s in corpora)} | "
                  f"{sum(r[s]['any_over'] for s in corpora)} | {base} |")
    if args.list:
        for r in results:
            print(f"\n{r['rule']} (tie {r['tie_fraction']:g}):")
            for s in sets:
                for line in r[s]["cases_over"]:
                    print(f"  {s}: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
