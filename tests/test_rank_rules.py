"""benchmarks/rank_rules.py: the replay picks what the planner picks under its own rule (AMD and wave32), the
planner's exponent (CONCURRENT_INSTRUCTION_EXPONENT, 0.55) meets Triton on the two whole-conversion rank trades
1/2 lost, the window rule picks as documented, the two cases docs/conversions.md section 5 names need
opposite trades from any fixed exchange rate, and ``--trades`` lists the values covering each rank trade and the
cases all of them make worse (the whole-conversion trades of main each have one)."""

import json

import pytest

from benchmarks.rank_rules import (FAMILIES, SETS, Candidate, Case, additive_rule, against_planner, choose,
                                   conflict_rule, load_case, planner_rule, ratio_rule, trades, uncovered, window_rule)
from linlayout import LinearLayout
from linlayout.cli.bench import bank_conflicts, kernel_plan
from linlayout.dtypes import dtype_bits
from linlayout.synth.cost import CONCURRENT_CONFLICT_WEIGHT, CONCURRENT_INSTRUCTION_EXPONENT, CONCURRENT_TIE_FRACTION

CASES = {s: json.loads(p.read_text())["cases"] for s, p in SETS.items()}
#: A corpus case that only cycles-first rules (ratio 0, few cycles per instruction) meet, one that only
#: instructions-weighing rules meet (were gfx90a fp32 blocked[1x1,t32x2,o01]->mfma32T and gfx950 fp16
#: blocked[2x2,t2x32,o01]->mfma32 until the setup estimates counted the address program and the waits,
#: the second gfx942 fp32 mfma16T->dotA16(kw1) until the ordered layouts, lds_path.ordered_design, and gfx942
#: bf16 slice0(blocked[1x4,t4x16,o10])->slice1(mfma16T), 2 waves, until the warp part of the LDS addresses
#: was priced, cost.warp_part_ops: additive rates 2 to 2.5 then met both; and gfx950 bf16
#: slice0(blocked[1x2,t2x32,o10])->slice1(mfma16T), 4 waves, until the setup estimate took the kernel's src
#: load line's offset registers, synth.src_offsets: its round trip's cost fell to the lane plan's, and the
#: round trip is over in the region's cycles; then gfx942 fp16 slice0(blocked[1x4,t2x32,o10])->slice1(mfma16),
#: 8 waves, and gfx950 i8 slice0(mfma32T)->slice0(blocked[1x2,t1x64,o10]), 2 waves, until session 24's round
#: trips with no barrier where the src is in every wave, lds_path._exchanges: no candidate covers the first since).
NEEDS_REGISTERS = ("slice0(blocked[1x2,t1x64,o10])->slice1(mfma32T)", "gfx950", "fp32", 8)
NEEDS_ROUND_TRIP = ("blocked[2x2,t2x32,o01]->mfma32", "gfx950", "fp16", 4)


def _corpus_case(key, set_name="corpus"):
    (case,) = [c for c in CASES[set_name] if (c["name"], c["arch"], c["dtype"], c.get("num_warps")) == key]
    return case


@pytest.mark.parametrize("index", [0, 7, 21, 33, 47])
def test_replay_picks_the_planners_plan(index):
    raw = CASES["baseline"][index]
    case = load_case(raw, "baseline")
    picked = choose(case, planner_rule(), CONCURRENT_TIE_FRACTION)
    plan = kernel_plan(LinearLayout.from_json(raw["src"]), LinearLayout.from_json(raw["dst"]), raw["arch"],
                       dtype_bits(raw["dtype"]))
    assert (picked.cost, picked.instructions) == (plan.cost, plan.total_with_overhead())


#: Corpus cases whose dst the kernel stores in VGPR tuples (``source_tuples``: 4 dwords in register order): planned without
#: the dst's tuples, the replay picked another plan than the bench's (gfx950 fp32: cost 3400 and 89
#: instructions where the planner's is 4632 and 147, its LDS loads landing in the store tuples); and a wave32
#: case whose pick the exponent 0.55 changed (a round trip of cost 712, 50 instructions with setup, where 1/2
#: took one of 544 and 78).
DST_TUPLES = [("corpus", ("mfma16->mfma16T", "gfx950", "fp32", 1)),
              ("corpus", ("blocked[1x1,t32x2,o01]->mfma32T", "gfx90a", "fp32", 1)),
              ("wave32", ("blocked[4x1,t32x1,o01]->wmma2.16x16", "gfx1200", "fp32", 2))]


@pytest.mark.parametrize("set_name, key", DST_TUPLES)
def test_replay_plans_for_the_kernels_dst_tuples(set_name, key):
    raw = _corpus_case(key, set_name)
    picked = choose(load_case(raw, set_name), planner_rule(), CONCURRENT_TIE_FRACTION)
    plan = kernel_plan(LinearLayout.from_json(raw["src"]), LinearLayout.from_json(raw["dst"]), raw["arch"],
                       dtype_bits(raw["dtype"]))
    assert (picked.cost, picked.instructions) == (plan.cost, plan.total_with_overhead())


#: wave32 cases whose bench plan stores its dst in one copy (``kernel_plan``'s ``one_copy_dst``, docs/benchmarks.md
#: "Session 21: copies25"): the replay's candidates hold the filled dsts' (``order`` ``(k, f)``, ``f`` > 0) and it
#: picks the planner's one-copy plan.
ONE_COPY = [("wmma1.16x16T->dotAwmma1.16x16T(kw8)", "gfx1100", "fp16", 2),
            ("dotAwmma3.16x64(kw8)->dotAwmma3.16x64(kw16)", "gfx1250", "i8", 1)]


@pytest.mark.parametrize("key", ONE_COPY)
def test_replay_picks_the_planners_one_copy_plan(key):
    raw = _corpus_case(key, "wave32")
    picked = choose(load_case(raw, "wave32"), planner_rule(), CONCURRENT_TIE_FRACTION)
    plan = kernel_plan(LinearLayout.from_json(raw["src"]), LinearLayout.from_json(raw["dst"]), raw["arch"],
                       dtype_bits(raw["dtype"]))
    assert plan.dst_one_copy and picked.order[1] > 0
    assert (picked.cost, picked.instructions) == (plan.cost, plan.total_with_overhead())


#: The whole-conversion rank trades the exponent 1/2 lost and 0.55 meets (docs/conversions.md section 5), the
#: pick at 1/2 and at 0.55 as (cost, instructions with setup): gfx942 fp32, 4 waves, a lane plan of 27 at 268
#: against a round trip of 12 at 432, Triton's whole conversion 26.  (gfx90a i8 ``blocked[1x4,t2x32,o10]->
#: dotA16(kw8)``, 1 wave, left this list in session 21: CONFLICT_TRADE below.)
RANK_TRADES = [(("slice0(mfma16T)->slice0(blocked[1x1,t4x16,o10])", "gfx942", "fp32", 4), (268.0, 27), (432.0, 12))]

#: gfx90a i8, 1 wave: since the swizzled ordered layouts (docs/benchmarks.md "Session 21: addr25", jp26's
#: paragraph) both exponents pick a conflict-free round trip, 37 with setup at 1128, where 0.55 picked the
#: unswizzled one, 31 at 1336 (its four ``ds_read_b128`` 4-way bank conflicts: LDS pipe 960 against 704), and
#: 1/2 a third, 49 at 1000.  The replay's cycles count no bank conflicts, so the pick was over Triton's whole
#: conversion there (968 against 954) while under it in instructions (37 against 44; compiled 40).  Since session
#: 22 (``lds_path.PER_PREFIX_FAMILIES``: a swizzled ordered layout per prefix length) both pick a conflict-free
#: round trip of 39 at 920, under Triton's whole conversion in both (compiled 38, region 12).  Since session 24
#: (``cost.LOAD_LINE_TERMS``: a one-wave address program reuses the load line's terms) that pick is 38 at 912, the
#: conflicting one 29 at 1320 and session 21's 36 at 1120 (one, two and one VALU fewer, 8 cycles each).
CONFLICT_TRADE = ("blocked[1x4,t2x32,o10]->dotA16(kw8)", "gfx90a", "i8", 1)


@pytest.mark.parametrize("key, at_half, at_rule", RANK_TRADES)
def test_the_planners_exponent_meets_triton_on_the_rank_trades(key, at_half, at_rule):
    raw = _corpus_case(key)
    case = load_case(raw, "corpus")
    picked = choose(case, planner_rule(), CONCURRENT_TIE_FRACTION)
    plan = kernel_plan(LinearLayout.from_json(raw["src"]), LinearLayout.from_json(raw["dst"]), raw["arch"],
                       dtype_bits(raw["dtype"]))
    assert (picked.cost, picked.instructions) == (plan.cost, plan.total_with_overhead()) == at_rule
    assert not any(any(case.over(picked, m)) for m in ("region", "whole"))
    half = choose(case, ratio_rule(0.5), CONCURRENT_TIE_FRACTION)
    assert (half.cost, half.instructions) == at_half and case.over(half, "whole")[0]  # over in instructions


def test_a_conflict_free_round_trip_is_picked_over_fewer_instructions_with_conflicts():
    raw = _corpus_case(CONFLICT_TRADE)
    case = load_case(raw, "corpus")
    picked = choose(case, planner_rule(), CONCURRENT_TIE_FRACTION)
    half = choose(case, ratio_rule(0.5), CONCURRENT_TIE_FRACTION)
    assert (picked.cost, picked.instructions) == (half.cost, half.instructions) == (912.0, 38)
    assert any(c.cost == 1320.0 and c.instructions == 29 and c.conflict_cycles for c in case.candidates)  # conflicting
    assert any(c.cost == 1120.0 and c.instructions == 36 for c in case.candidates)  # session 21's pick
    assert case.over(picked, "whole") == (False, False)  # under Triton's 44 instructions and its 954 cycles


#: gfx942 fp16, 1 wave (docs/benchmarks.md "Session 22: tconf27"): the planner's pick until cyc29, 15 instructions
#: with setup at 440, has 4 ``ds_*`` accesses that bank conflicts make 64 cycles (4 LDS passes) dearer; a
#: conflict-free round trip of 19 at 408 loses the rank by instructions alone ((440 + 8) * 15 ** 0.55 = 1,987;
#: 408 * 19 ** 0.55 = 2,061, within 5 %), and ties it counting the passes (15 + 4 = 19), where its least
#: latency value picks it.  Triton's whole conversion: 22 instructions at 442, its accesses conflict-free.
CONFLICTED_PICK = ("blocked[1x4,t16x4,o10]->mfma32", "gfx942", "fp16", 1)


def test_the_replay_prices_both_sides_with_their_bank_conflicts():
    raw = _corpus_case(CONFLICTED_PICK)
    aware, blind = load_case(raw, "corpus"), load_case(raw, "corpus", conflict_blind=True)
    assert aware.triton == blind.triton == {"region": (22, 442.0), "whole": (22, 442.0)}
    rule = conflict_rule(CONCURRENT_INSTRUCTION_EXPONENT, CONCURRENT_CONFLICT_WEIGHT)  # ties by instructions alone
    picked, picked_blind = choose(aware, rule, CONCURRENT_TIE_FRACTION), choose(blind, rule, CONCURRENT_TIE_FRACTION)
    assert (picked.cost, picked.instructions, picked.conflict_cycles) == (440.0, 15, 64.0)
    assert (picked_blind.cost, picked_blind.instructions) == (440.0, 15)  # the rule sees no measure
    # the bench's conflict cycles (bank_conflicts' "ours") added to the plan's mix in both measures
    plan = kernel_plan(LinearLayout.from_json(raw["src"]), LinearLayout.from_json(raw["dst"]), raw["arch"],
                       dtype_bits(raw["dtype"]))
    # (the planner's plan since cyc29 is the conflict-free round trip; the pick's 64 are bank_conflicts' of its own)
    assert bank_conflicts(plan, raw, None)["ours"] == 0.0 and (plan.cost, plan.total_with_overhead()) == (408.0, 19)
    assert picked.counted == {"region": (6, 384.0), "whole": (15, 456.0)}
    assert picked_blind.counted == {"region": (6, 320.0), "whole": (15, 392.0)}
    assert aware.over(picked, "whole") == (False, True) and blind.over(picked_blind, "whole") == (False, False)
    # the conflict-free round trip covers the case.  Conflict cycles weighing twice rank it first, (440 + 64) *
    # 15 ** 0.55 = 2,235 against 2,061; at 1.5 times, 2,093, the near tie (5 %) takes the fewer instructions,
    # unless conflicted plans lose ties
    (free,) = [c for c in aware.candidates if (c.cost, c.instructions) == (408.0, 19)]
    assert free.conflict_cycles == 0.0 and free.counted["whole"] == (19, 424.0)
    assert picked.conflict_passes == 4.0 and choose(aware, planner_rule(), CONCURRENT_TIE_FRACTION) is free
    assert choose(aware, conflict_rule(CONCURRENT_INSTRUCTION_EXPONENT, 1.0), CONCURRENT_TIE_FRACTION) is free
    assert choose(aware, conflict_rule(CONCURRENT_INSTRUCTION_EXPONENT, 0.5), CONCURRENT_TIE_FRACTION) is picked
    assert choose(aware, conflict_rule(CONCURRENT_INSTRUCTION_EXPONENT, 0.5, True), CONCURRENT_TIE_FRACTION) is free
    cells = against_planner([aware], conflict_rule(CONCURRENT_INSTRUCTION_EXPONENT, 1.0), CONCURRENT_TIE_FRACTION,
                            {id(aware): picked})
    assert cells == {"corpus": {"region": {"instructions": [0, 0], "cycles": [0, 0]},
                                "whole": {"instructions": [0, 0], "cycles": [1, 0]}}}


def test_conflicted_candidates_lose_near_ties_where_the_rule_says_so():
    triton = {"region": (20, 400.0)}
    conflicted = Candidate((0, 0), 100.0, 10, True, 100.0, {"region": (10, 420.0)}, 30.0)
    free = Candidate((0, 0), 104.0, 12, True, 104.0, {"region": (12, 380.0)}, 0.0)
    case = Case("tie", "baseline", triton, (conflicted, free))
    assert choose(case, ratio_rule(0.0), 0.05) is conflicted  # within the tie: fewer instructions
    assert choose(case, conflict_rule(0.0, 0.0, conflicts_lose_ties=True), 0.05) is free
    assert choose(case, conflict_rule(0.0, 0.0, conflicts_lose_ties=True), 0.0) is conflicted  # no tie


def _candidate(cost, instructions, order=(0, 0), conflict_cycles=0.0):
    return Candidate(order, cost, instructions, True, cost, {"region": (instructions, cost)}, conflict_cycles)


def test_the_window_rule_takes_the_least_cost_within_k_instructions_of_the_fewest():
    case = Case("synthetic", "baseline", {"region": (10, 100.0)},
                (_candidate(300.0, 10), _candidate(200.0, 14), _candidate(100.0, 30)))
    assert [choose(case, window_rule(k), 0.0).cost for k in (0, 3, 4, 19, 20)] == [300.0, 300.0, 200.0, 200.0, 100.0]
    # near ties (within the tie fraction of the least cost in the window) go to fewer instructions
    assert choose(case, window_rule(4), 0.5).cost == 300.0


def test_no_fixed_exchange_rate_meets_triton_on_both_cases():
    registers, round_trip = load_case(_corpus_case(NEEDS_REGISTERS), "corpus"), \
        load_case(_corpus_case(NEEDS_ROUND_TRIP), "corpus")

    def meets(case, value):
        return not any(case.over(choose(case, value, 0.0)))

    # each case alone is met by some rate of each form ...
    assert meets(registers, ratio_rule(0.0)) and meets(round_trip, ratio_rule(0.5))
    assert meets(registers, additive_rule(0.5)) and meets(round_trip, additive_rule(8.0))
    # ... but no rate meets both
    for rule in [ratio_rule(e / 100) for e in range(0, 201, 2)] + [additive_rule(c / 4) for c in range(0, 201)]:
        assert not (meets(registers, rule) and meets(round_trip, rule))


def _measured(region, whole):
    return Candidate((0, 0), region[1], whole[0], False, 0.0, {"region": region, "whole": whole})


def test_a_case_is_uncovered_when_no_one_candidate_meets_triton_in_every_count_and_measure():
    triton = {"region": (10, 100.0), "whole": (12, 120.0)}
    # one candidate meets the region, another the whole: no rule can pick one that meets both
    split = (_measured((8, 90.0), (14, 110.0)), _measured((11, 80.0), (12, 100.0)))
    (row,) = uncovered([Case("split", "corpus", triton, split)])
    assert row["region"] == {"triton": [10, 100.0], "fewest_instructions": [8, 90.0], "fewest_cycles": [11, 80.0]}
    assert row["whole"] == {"triton": [12, 120.0], "fewest_instructions": [12, 100.0], "fewest_cycles": [12, 100.0]}
    assert row["nearest"] == {"region": [11, 80.0], "whole": [12, 100.0]}  # 11/10 is less over than 14/12
    # a candidate at Triton's counts in both measures covers the case
    assert uncovered([Case("tie", "corpus", triton, split + (_measured((10, 100.0), (12, 120.0)),))]) == []


#: A wave32 case no candidate covers (docs/conversions.md section 8, "Cases no candidate covers"): its
#: permlanex16-and-perm program is Triton's (32 permlanex16, 64 ``v_perm_b32``), whose store writes one copy of
#: the dst's repeated lanes, so that its selectors are constants (99 instructions at 198 cycles); ours builds
#: per-lane selectors for all 32 lanes (4 VALU, an ``s_delay_alu``) and the permlane selector: 102 at 202.  The
#: candidate of fewest instructions, a round trip of 89 (91 before session 24's ``cost.LOAD_LINE_TERMS``), is 602
#: cycles with its accesses' bank conflicts (474 conflict-blind).
UNCOVERED_WAVE32 = ("wmma1.16x16T->dotAwmma1.16x16T(kw8)", "gfx1100", "bf16", 1)
#: Triton's program as well (24 selects, 8 permlanex16, 36 instructions at 68 cycles), ours 32 with the
#: permlane selector and the wave32 lane mask (one ``s_mov_b32`` each: WAVE32_LANE_MASK_SALU): 34 at 68.  It
#: was uncovered while the mask was priced at 2 (VCC_SALU): 35 at 70.
COVERED_WAVE32 = ("dotAwmma2.16x16T(kw8)->dotAwmma2.16x16T(kw16)", "gfx1200", "i8", 1)


def test_an_uncovered_wave32_case_is_listed_with_its_nearest_candidate():
    (row,) = uncovered([load_case(_corpus_case(UNCOVERED_WAVE32, "wave32"), "wave32")])
    assert row["whole"] == {"triton": [99, 198.0], "fewest_instructions": [89, 602.0], "fewest_cycles": [102, 202.0]}
    (blind,) = uncovered([load_case(_corpus_case(UNCOVERED_WAVE32, "wave32"), "wave32", conflict_blind=True)])
    assert blind["whole"]["fewest_instructions"] == [89, 474.0]
    assert row["nearest"] == {"region": [96, 192.0], "whole": [102, 202.0]}


def test_a_wave32_lane_mask_at_one_salu_covers_the_dot_operand_widening():
    case = load_case(_corpus_case(COVERED_WAVE32, "wave32"), "wave32")
    assert uncovered([case]) == []
    assert case.triton["whole"] == (36, 68.0)
    assert min(c.counted["whole"] for c in case.candidates if not c.uses_lds) == (34, 68.0)


def _grid(family, low, high):
    return [v for v, _ in FAMILIES[family] if low <= v <= high]


def test_a_rank_trade_lists_the_values_that_cover_it_and_the_cases_all_of_them_break():
    triton = {"region": (15, 300.0)}
    # the planner's pick (100 cycles, 20 instructions) is over Triton's 15 instructions; the round trip (250, 10)
    # covers.  Ranked first at 250 * 10**e <= 1.05 * 100 * 20**e (the near tie), e >= log2(2.5 / 1.05) = 1.25,
    # and at 250 + 10 c <= 1.05 * (100 + 20 c), c >= 145 / 11 = 13.2.
    trade = Case("trade", "baseline", triton, (_candidate(100.0, 20), _candidate(250.0, 10)))
    # the planner's pick covers these; the other candidate is over Triton's cycles.  "witness" takes it at
    # e >= log2(2 / 1.05) = 0.93 and c >= 95 / 11 = 8.6, below every value that covers "trade"; "kept" only at
    # e >= log2(20 / 1.05) = 4.25 and c >= 1895 / 11 = 172, beyond the grids
    witness = Case("witness", "baseline", {"region": (20, 120.0)}, (_candidate(100.0, 20), _candidate(200.0, 10)))
    kept = Case("kept", "baseline", {"region": (20, 120.0)}, (_candidate(100.0, 20), _candidate(2000.0, 10)))
    (row,) = trades([trade, witness, kept])
    assert row["name"] == "trade" and row["planned"] == {"region": [20, 100.0]}
    assert row["covered_at"] == {"exponent": _grid("exponent", 1.26, 4), "additive": _grid("additive", 13.25, 60),
                                 "conflict": []}  # no candidate has bank conflicts
    assert row["witnesses"] == ["witness"]
    # with 40 of the pick's 100 cycles bank conflicts, weighing them w more covers "trade" where the round trip
    # is in the near tie, 250 * 10 ** 0.55 <= 1.05 * (100 + 40 w) * 20 ** 0.55, w >= 1.57 (1.625 on the grid),
    # and leaves the conflict-free "witness" alone
    conflicted = Case("trade", "baseline", triton, (_candidate(100.0, 20, conflict_cycles=40.0), _candidate(250.0, 10)))
    (row,) = trades([conflicted, witness, kept])
    assert row["covered_at"]["conflict"] == _grid("conflict", 1.6, 8) and row["witnesses"] == []


#: The whole-conversion rank trades of main (docs/conversions.md section 8) and a case each that every value of
#: both families covering it (exponent, additive rate; the planner's tie fraction) makes worse: a proof by replay
#: that no rule of the two families meets Triton on both.  gfx1200 fp32 ``wmma2.16x16->dotBwmma2.16x16(kw4)``,
#: 2 waves, is made worse by every value covering the gfx1200 trade.  Counted with each side's bank conflicts,
#: that trade is covered from the exponent 0.8 and the rate 3.25 to the grids' ends since session 24 (its src is in
#: both waves: round trips with no barrier, lds_path._exchanges; before, from the exponent 1.34 and the rate 5.75
#: up to 1.66 and 13.25, beyond which a conflicted candidate went over Triton's cycles).  (Session 22's two gfx950 slice trades had gfx950 fp16
#: ``slice1(mfma16T)->slice1(blocked[2x1,t32x2,o01])``, 2 waves, for their witness: since session 23's widened
#: multiply the bf16 one is a tie and the fp8 one is covered from lower values, which that case survives:
#: ``test_the_fp8_slice_trade_lost_its_witness``.)
WHOLE_TRADES = [
    (("wmma2.16x16->blocked[4x1,t1x32,o01]", "gfx1200", "fp32", 2), ((0.8, 4), (3.25, 60)),
     ("wave32", ("wmma2.16x16->dotBwmma2.16x16(kw4)", "gfx1200", "fp32", 2))),
]


@pytest.mark.parametrize("key, covering, witness", WHOLE_TRADES)
def test_no_exponent_or_rate_meets_triton_on_a_whole_rank_trade_and_its_witness(key, covering, witness):
    set_name = "corpus" if key[1].startswith("gfx9") else "wave32"
    case = load_case(_corpus_case(key, set_name), set_name)
    other = load_case(_corpus_case(witness[1], witness[0]), witness[0])
    (row,) = trades([case, other])
    assert row["covered_at"] == {"exponent": _grid("exponent", *covering[0]),
                                 "additive": _grid("additive", *covering[1]),
                                 "conflict": []}  # the planner's pick has no bank conflicts
    assert row["witnesses"] == [other.name]
    # over Triton's whole conversion in instructions, under its cycles, as the planner picks
    (n, cycles), (triton_n, triton_cycles) = row["planned"]["whole"], row["triton"]["whole"]
    assert n > triton_n and cycles < triton_cycles


def test_the_fp8_slice_trade_lost_its_witness():
    """gfx950 fp8 ``slice0(mfma32T)->slice0(blocked[1x4,t1x64,o10])`` (8 waves): its gather through one
    ``ds_bpermute``, whose address ``(l & 31) * 0x84`` is one ``v_mul_u32_u24`` since session 23
    (``lane_arith._widened``), is 22 instructions at 236 cycles, Triton's whole 22 at 522, so the trade is
    covered from the exponent 1.08 (1.24 before session 24's round trips with no barrier where the src is in
    every wave, lds_path._exchanges) and the rate 8.25 (1.46 and 24.25 before session 23, through an LDS round
    trip), and
    session 22's witness, gfx950 fp16 ``slice1(mfma16T)->slice1(blocked[2x1,t32x2,o01])`` (2 waves), keeps its plan
    at some of those values: no witness of the two."""
    case = load_case(_corpus_case(("slice0(mfma32T)->slice0(blocked[1x4,t1x64,o10])", "gfx950", "fp8", 8), "corpus"),
                     "corpus")
    other = load_case(_corpus_case(("slice1(mfma16T)->slice1(blocked[2x1,t32x2,o01])", "gfx950", "fp16", 2), "corpus"),
                      "corpus")
    (row,) = trades([case, other])
    assert row["covered_at"] == {"exponent": _grid("exponent", 1.08, 4), "additive": _grid("additive", 8.25, 60),
                                 "conflict": []}
    assert row["witnesses"] == [] and row["planned"]["whole"] == [25, 176.0] and row["triton"]["whole"] == [22, 522.0]
    assert any(c.counted["whole"] == (22, 236.0) for c in case.candidates)


@pytest.mark.parametrize("argv, message", [(["--every", "0"], "--every 0 must be at least 1"),
                                           (["--ties", "-0.1"], "a tie fraction is at least 0"),
                                           (["--exponents", "a"], "'a' is not a comma-separated list of numbers"),
                                           (["--windows", "-1"], "a window is at least 0 instructions"),
                                           (["--sets", "nvidia"], "the sets are baseline, corpus, wave32")])
def test_bad_arguments_are_refused_in_one_line(capsys, argv, message):
    from benchmarks.rank_rules import main
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2 and message in capsys.readouterr().err.strip().splitlines()[-1]
