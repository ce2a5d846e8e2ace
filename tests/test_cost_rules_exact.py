"""Rules of the cost model (docs/conversions.md section 5, linlayout.synth.cost) that no other test pinned: a
vector instruction on 64-bit elements is issued once per dword half and ``s_barrier`` once; the tie limit's
rounding margin (``TIE_MARGIN``); the tie fraction per objective (``COST_TIE_FRACTION`` under ``latency`` and
``throughput``, ``CONCURRENT_TIE_FRACTION`` under ``concurrent``); ``lgkm_waits``' wait at the end for an unread
crossbar result (against the compiled region); the LDS lower bound's data cycles at the best bytes per cycle.
Each test fails with its rule reverted."""

from __future__ import annotations

import pytest
from repo_data import family_corpus

import needs
from linlayout import LinearLayout
from linlayout.dtypes import dtype_bits
from linlayout.synth import convert, cost
from linlayout.synth.context import ConversionContext
from linlayout.synth.convert import plan_conversion


def _layouts(name: str, arch: str, dtype: str, num_warps: int) -> tuple[LinearLayout, LinearLayout]:
    (c,) = [c for c in family_corpus("amd")["cases"]
            if (c["name"], c["arch"], c["dtype"], c["num_warps"]) == (name, arch, dtype, num_warps)]
    return LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"])


def test_a_64_bit_vector_instruction_is_priced_per_dword_half_and_a_barrier_once():
    # the layouts of two corpus cases with 64-bit elements.  gfx950 mfma32->mfma16 (1 wave): 8 permlane swap
    # steps, each two instructions (one per dword half: Plan.counts, 16), each issued at PERMLANE_ISSUE: 64
    # issue cycles, the instructions' (8 steps priced once each would be 32)
    src, dst = _layouts("mfma32->mfma16", "gfx950", "fp16", 1)
    plan = plan_conversion(src, dst, "gfx950", 64)
    cm = cost.cost_model("gfx950")
    counts = {k: v for k, v in plan.counts().items() if v}
    assert plan.strategy == "lanes" and len(plan.steps) == 8
    assert counts == {"permlane16_swap": 8, "permlane32_swap": 8, "total": 16}
    assert cost.plan_cost(plan, cm)[1]["issue"] == 16 * cost.PERMLANE_ISSUE == 64.0
    # gfx942 slice1(dotA16(kw1))->slice1(blocked[1x1,t16x4,o01]) (2 waves): an LDS round trip across waves, its
    # one s_barrier (a scalar instruction: once, BARRIER_CYCLES) the only issue outside its LDS accesses
    src, dst = _layouts("slice1(dotA16(kw1))->slice1(blocked[1x1,t16x4,o01])", "gfx942", "fp32", 2)
    plan = plan_conversion(src, dst, "gfx942", 64)
    cm = cost.cost_model("gfx942")
    counts = plan.counts()
    assert plan.strategy == "lds" and counts["s_barrier"] == 1
    assert counts["total"] == counts["lds_write"] + counts["lds_read"] + 1
    assert cost.plan_cost(plan, cm)[1]["issue"] == cost.BARRIER_CYCLES == 16.0


def test_a_rank_value_at_the_tie_limit_is_tied():
    # 115 is 15 % above 100, but 100 * (1 + 0.15) rounds to 114.99999999999999: TIE_MARGIN keeps the two tied
    # (then the fewer instructions win: near_best, convert._rank), a value a hair further is not
    assert 100 * (1 + cost.COST_TIE_FRACTION) < 115.0 <= cost.tie_limit(100.0, cost.COST_TIE_FRACTION)
    items = [(100.0, 10), (115.0, 5)]
    assert cost.near_best(items, lambda x: x[0], lambda x: x[1], cost.COST_TIE_FRACTION) == (115.0, 5)
    items = [(100.0, 10), (115.00001, 5)]
    assert cost.near_best(items, lambda x: x[0], lambda x: x[1], cost.COST_TIE_FRACTION) == (100.0, 10)
    assert cost.tie_limit(float("inf"), cost.COST_TIE_FRACTION) == float("inf")


@pytest.mark.parametrize("objective", ["latency", "throughput", "concurrent"])
def test_the_tie_fraction_is_15_percent_of_the_cost_but_5_under_concurrent(objective):
    # gfx950 fp16 mfma32->mfma16 (1 wave): two register plans, (a) 2 permlane16_swap, 2 permlane32_swap and the
    # s_nop after them, 5 instructions at 20 cycles of latency, and (b) 2 permlane32_swap, 2 v_cndmask and
    # their two lane masks' SALU, 6 at 18.  Under latency and throughput (the cost is the rank value) 20 is
    # within COST_TIE_FRACTION (15 %) of 18, not within 5 %: tied, (a) wins on instructions.  Under
    # concurrent (40 and 36 cycles) the rank values 40 * 5 ** 0.55 and 36 * 6 ** 0.55 are 0.5 % apart: tied too
    src, dst = _layouts("mfma32->mfma16", "gfx950", "fp16", 1)
    ctx = ConversionContext.create(src, dst, "gfx950", dtype_bits("fp16"), objective=objective)
    cm = ctx.cost_model
    first, second = convert._candidates(ctx)[:2]
    per_wave = 2 if objective == "concurrent" else 1  # concurrent: the other wave's issue too (waves_per_simd)
    assert (first.strategy, first.cost, first.total_with_overhead()) == ("registers", 20.0 * per_wave, 5)
    assert (second.strategy, second.cost, second.total_with_overhead()) == ("registers", 18.0 * per_wave, 6)
    assert {k: v for k, v in first.counts().items() if v} == {"permlane16_swap": 2, "permlane32_swap": 2, "total": 4}
    assert {k: v for k, v in second.counts().items() if v} == {"v_cndmask": 2, "permlane32_swap": 2, "total": 4}
    values = [convert.rank_value(p, cm) for p in (first, second)]
    if objective == "concurrent":
        exponent = cost.CONCURRENT_INSTRUCTION_EXPONENT
        assert values == pytest.approx([40 * 5 ** exponent, 36 * 6 ** exponent])
        assert cm.tie_fraction == cost.CONCURRENT_TIE_FRACTION
    else:
        assert values == [20.0, 18.0] and cm.tie_fraction == cost.COST_TIE_FRACTION
        assert values[0] > values[1] * (1 + cost.CONCURRENT_TIE_FRACTION)  # not tied at 5 %
    assert values[1] < values[0] <= cm.tie_limit(values[1])
    assert plan_conversion(src, dst, "gfx950", 16, objective=objective).total_with_overhead() == 5


# (family, name, arch, dtype, num_warps, s_waitcnt): in-wave plans whose last crossbar move's result (ds_bpermute,
# ds_swizzle) is read by no later step of the region: cost.lgkm_waits' one wait at the end, the compiled region's
# (the rule without it: one fewer)
FINAL_CROSSBAR_WAIT = [
    ("amd", "mfma16T->dotA16(kw8)", "gfx942", "fp8", 1, 1),  # 8 ds_bpermute, no step reads one: the end's wait
    ("amd", "slice1(dotA32(kw4))->slice1(blocked[1x1,t16x4,o01])", "gfx942", "bf16", 1, 1),  # 4 ds_swizzle
    # a crossbar move read by a v_perm select (a wait), then one (ds_bpermute, ds_swizzle) that nothing reads: 2
    ("amd", "slice0(blocked[1x1,t2x32,o10])->slice1(mfma16T)", "gfx942", "fp8", 8, 2),
    # (the kernel's pick since session 24 a round trip with no barrier, lds_path._exchanges: its register plan)
    ("wave32", "slice0(blocked[1x1,t1x32,o10])->slice1(wmma1.16x16T)", "gfx1100", "i8", 4, 2),
]
#: the cases whose kernel plan is asked of the register strategy (the pick goes through LDS)
REGISTERS = {"slice0(blocked[1x1,t1x32,o10])->slice1(wmma1.16x16T)"}


def _kernel_plan(family: str, name: str, arch: str, dtype: str, num_warps: int):
    from linlayout.cli.bench import kernel_plan

    (c,) = [c for c in family_corpus(family)["cases"]
            if (c["name"], c["arch"], c["dtype"], c["num_warps"]) == (name, arch, dtype, num_warps)]
    return kernel_plan(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), arch, dtype_bits(dtype),
                       strategy="registers" if name in REGISTERS else "auto")


@pytest.mark.parametrize("family,name,arch,dtype,num_warps,waits", FINAL_CROSSBAR_WAIT)
def test_an_unread_crossbar_result_is_waited_for_at_the_end(family, name, arch, dtype, num_warps, waits):
    plan = _kernel_plan(family, name, arch, dtype, num_warps)
    assert plan.strategy != "lds" and plan.counts()["ds_bpermute"] + plan.counts()["ds_swizzle"] > 0
    assert cost.lgkm_waits(plan) == plan.overhead["s_waitcnt"] == waits


@needs.mlir
@pytest.mark.parametrize("family,name,arch,dtype,num_warps,waits", FINAL_CROSSBAR_WAIT[1::2])
def test_the_end_wait_is_compiled(family, name, arch, dtype, num_warps, waits):
    from linlayout.lowering.conversion import lower_conversion

    plan = _kernel_plan(family, name, arch, dtype, num_warps)
    assert lower_conversion(plan, binary=False).report["isa_counts"]["s_waitcnt"] == waits == cost.lgkm_waits(plan)


def test_the_lds_bound_prices_the_bytes_at_the_best_bytes_per_cycle():
    # gfx942 fp32 slice1(dotA16(kw1))->slice1(blocked[1x1,t16x4,o01]), 2 waves, under latency: data crosses
    # waves, so the bound is a round trip's: 2 loads (8 elements, 32 bytes, per lane: b128 each) and 1 store (256
    # moving elements over 128 lanes: 8 bytes per lane), their issue and a barrier (3 x 4 + 16 = 28), the LDS pipe
    # at the best bytes per cycle (b128: 20 cycles per 16 bytes, x LDS_PORT_SHARING 2: 2.5 a byte), 40 bytes:
    # 100 (counted by instructions alone, 3 x 16 = 48, less), and two DS latency levels (128): 256
    src, dst = _layouts("slice1(dotA16(kw1))->slice1(blocked[1x1,t16x4,o01])", "gfx942", "fp32", 2)
    ctx = ConversionContext.create(src, dst, "gfx942", 32, objective="latency")
    bound = convert._lower_bound(ctx)
    assert (bound["cross_warp"], bound["min_lds_loads"], bound["min_lds_stores"]) == (True, 2, 1)
    issue = 3 * cost.DS_ISSUE + cost.BARRIER_CYCLES
    per_byte = cost.LDS_CYCLES[16] / 16 * cost.LDS_PORT_SHARING
    assert bound["lds_cost"] == issue + (32 + 8) * per_byte + 2 * cost.DS_LATENCY == 256.0
    assert bound["cost"] == 256.0 <= plan_conversion(src, dst, "gfx942", 32, objective="latency").cost


def test_a_wave32_lane_mask_is_one_salu_and_other_conditions_two():
    # distinct select conditions as estimate_overhead keeps them (lanes_condition bytes): a wave32 lane mask is
    # one s_mov_b32 vcc_lo (WAVE32_LANE_MASK_SALU); a 64-lane mask two, one per half, and a condition differing
    # between warps an s_cmp + s_cselect (VCC_SALU), as is an NVIDIA selp predicate's setp
    import numpy as np

    from linlayout.hw.targets import get_target

    lanes32 = (np.arange(32) >= 16).tobytes()
    by_warp32 = np.array([np.arange(32) >= 16, np.arange(32) < 16]).tobytes()
    lanes64 = (np.arange(64) >= 32).tobytes()
    assert cost.vcc_salu({lanes32}, get_target("gfx1200")) == cost.WAVE32_LANE_MASK_SALU == 1
    assert cost.vcc_salu({lanes32, by_warp32}, get_target("gfx1100")) == 1 + cost.VCC_SALU == 3
    assert cost.vcc_salu({lanes64}, get_target("gfx942")) == cost.VCC_SALU == 2
    assert cost.vcc_salu({lanes32}, get_target("sm_90")) == cost.VCC_SALU


def test_a_parity_of_warp_bits_is_priced_at_its_popcount():
    # a condition true in the whole of the warps where popcount(warp & S) is odd (S of two bits or more:
    # lane_choices.warp_parity_bits) is WARP_PARITY_SALU on AMD (s_and_b32, s_bcnt1_i32_b32, s_bfe_i32, and
    # s_ashr_i32 for a wave64's high word: the compiled count, tests/test_fuzz_regressions.py); one warp bit's, a
    # condition that is not whole in a warp or no parity stays VCC_SALU, as does any on NVIDIA
    import numpy as np

    from linlayout.hw.targets import get_target
    from linlayout.synth.lane_choices import warp_parity_bits

    def by_warp(odd, lanes):
        return np.repeat(np.array(odd, dtype=bool)[:, None], lanes, axis=1)

    parity5 = [bin(w & 5).count("1") % 2 == 1 for w in range(8)]
    assert warp_parity_bits(by_warp(parity5, 64)) == 5
    assert warp_parity_bits(by_warp([w & 2 != 0 for w in range(8)], 64)) is None  # one warp bit
    assert warp_parity_bits(by_warp([w in (1, 2) for w in range(8)], 64)) is None  # not a parity
    part = by_warp(parity5, 64)
    part[1, 0] = False
    assert warp_parity_bits(part) is None  # not the whole warp
    assert cost.vcc_salu({by_warp(parity5, 64).tobytes()}, get_target("gfx942")) == cost.WARP_PARITY_SALU[64] == 4
    assert cost.vcc_salu({by_warp(parity5, 32).tobytes()}, get_target("gfx1100")) == cost.WARP_PARITY_SALU[32] == 3
    assert cost.vcc_salu({part.tobytes()}, get_target("gfx942")) == cost.VCC_SALU
    assert cost.vcc_salu({by_warp(parity5, 32).tobytes()}, get_target("sm_90")) == cost.VCC_SALU


def test_the_planners_alu_delays_are_priced_at_the_stall_they_mark():
    # wave32 gfx1200 i8 wmma2.16x16->wmma2.16x16T, 2 waves: its register plan (22 steps' instructions) has 12
    # estimated s_delay_alu (10 close VALU reads, 2 of its selectors' lane masks), each priced at
    # ALU_DELAY_CYCLES (2) under the latency table: setup 6 VALU + 4 SALU + 24; at 1 (SALU_ISSUE) it came to
    # 104 concurrent cycles at 44 instructions and outranked the round trip of 29 at 146 (whole 44 against
    # Triton's 41), at 2 it is 128 and the round trip ranks first (docs/benchmarks.md, "Session 20: ALU waits")
    from linlayout.cli.bench import kernel_plan
    from linlayout.synth.convert import candidate_plans

    (c,) = [c for c in family_corpus("wave32")["cases"]
            if (c["name"], c["arch"], c["dtype"], c["num_warps"]) == ("wmma2.16x16->wmma2.16x16T", "gfx1200", "i8", 2)]
    src, dst = LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"])
    (registers,) = [p for p in candidate_plans(src, dst, "gfx1200", 8, objective="concurrent", prune=False)
                    if p.strategy == "registers"]
    assert registers.overhead == {"salu_vcc": 3, "valu_lane_selector": 6, "salu_lane_selector_delay": 2,
                                  "salu_permlane_selector": 1, "salu_delay_alu": 10}
    assert cost.plan_cost(registers, cost.cost_model("gfx1200", "latency"))[1]["setup"] == 6 + 4 + 12 * 2
    assert (registers.cost, registers.total_with_overhead()) == (128.0, 44)
    # the packed src of the numbers above, planned without the src load line's registers (with them: 25); the
    # src is in both waves, so the round trip has no barrier (synth.lds_path._exchanges; 29 with it)
    plan = kernel_plan(src, dst, "gfx1200", 8, unpacked_src=False, load_line=False)
    assert plan.strategy == "lds" and plan.total_with_overhead() == 27 and plan.counts()["s_barrier"] == 0
    unpacked = kernel_plan(src, dst, "gfx1200", 8)  # the bench's: a round trip too, of 21 (src_unpacked)
    assert (unpacked.strategy, unpacked.src_unpacked, unpacked.total_with_overhead()) == ("lds", True, 21)


def test_a_cost_model_is_made_again_from_its_key():
    # every pricing parameter the key names, each at a value distinct from its default and from the others, so
    # that from_key reading two fields in the wrong order gives another model (the caches of
    # linlayout.synth.exchanges make their model from the key)
    from dataclasses import fields

    named = [f.name for f in fields(cost.CostModel) if f.name not in ("arch", "objective", "waves_per_simd", "_key")]
    values = dict(zip(named, (101.0 + i for i in range(len(named)))))
    values.update(lds_cycles={4: 7.0, 16: 9.0}, pipe_overlap=True)
    cm = cost.CostModel("gfx1200", **values)
    assert all(getattr(cm, n) != getattr(cost.CostModel("gfx1200"), n) for n in named)
    again = cost.CostModel.from_key(cm.key())
    assert again == cm and again.key() == cm.key()


def test_concurrent_prices_a_delay_once_per_wave_of_the_simd():
    # _parts adds an estimated s_delay_alu's stall (ALU_DELAY_CYCLES) to the setup, part of simd: concurrent
    # (path + (waves_per_simd - 1) * simd) prices it at waves_per_simd * ALU_DELAY_CYCLES (docs/conversions.md
    # section 5), latency at ALU_DELAY_CYCLES, throughput in the SIMD's issue
    cm = cost.cost_model("gfx1200", "concurrent")
    base = cost._parts(cm, 10.0, 0.0, 0.0, 0, {"salu_vcc": 1}, 2)
    one = cost._parts(cm, 10.0, 0.0, 0.0, 0, {"salu_vcc": 1, "salu_delay_alu": 1}, 3)
    assert one["setup"] - base["setup"] == cm.alu_delay_cycles == cost.ALU_DELAY_CYCLES == 2
    assert one["concurrent_value"] - base["concurrent_value"] == cm.waves_per_simd * cost.ALU_DELAY_CYCLES == 4
    assert one["latency_value"] - base["latency_value"] == 2
    assert one["throughput_value"] - base["throughput_value"] == 2
