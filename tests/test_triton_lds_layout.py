"""Triton's LDS accesses as its compiled kernels make them (benchmarks/llir_lds.py, benchmarks/triton_lds_conflicts.py):
the LLVM IR reader on a hand-written kernel, linlayout.synth.triton_swizzle's re-derived shared layout against
the stored sample of compiled addresses (benchmarks/data/triton_lds_sample.json), the stored bank cycles of the
corpora (benchmarks/data/triton_lds_conflicts.json) against the bank model on those addresses, and the cycles
the bench adds for each side's conflicts (linlayout.cli.bench.bank_conflicts)."""

import json

import numpy as np
import pytest

import needs

from benchmarks.llir_lds import LdsAccess, lds_accesses
from benchmarks.triton_lds_conflicts import OUT, SAMPLE, bank_rows, case_key
from linlayout import LayoutError, LinearLayout
from linlayout.cli.bench import CORPORA, bank_conflicts, kernel_plan, triton_bank_rows, triton_whole_conversion
from linlayout.dtypes import dtype_bits
from linlayout.synth.cost import OBJECTIVES, access_conflict_cycles, cost_model, lds_conflict_cycles, plan_cost
from linlayout.synth.triton_swizzle import optimal_swizzling_ldst, shared_byte_addresses

SAMPLE_CASES = json.loads(SAMPLE.read_text())["cases"]
STORED = json.loads(OUT.read_text())
CORPUS_CASES = {case_key(c): c for family in ("amd", "wave32")
                for c in json.loads(CORPORA[family].read_text())["cases"]}

KERNEL = """
define amdgpu_kernel void @k() {
  %1 = tail call i32 @llvm.amdgcn.workitem.id.x(), !dbg !11
  %2 = tail call i32 @llvm.amdgcn.readfirstlane.i32(i32 %1), !dbg !11
  %3 = and i32 %1, 7
  %4 = shl nuw nsw i32 %3, 4
  %5 = lshr i32 %2, 6
  %6 = shl i32 %5, 10
  %7 = xor i32 %4, %6
  %8 = getelementptr inbounds nuw i8, ptr addrspace(3) @global_smem, i32 %7, !dbg !16
  store <4 x i32> %x, ptr addrspace(3) %8, align 16, !dbg !16
  %9 = and i32 %1, 32
  %10 = icmp eq i32 %9, 0
  br i1 %10, label %low, label %done

low:
  %11 = getelementptr inbounds nuw i8, ptr addrspace(3) %8, i32 128
  %12 = load <2 x half>, ptr addrspace(3) %11, align 4
  br label %done

done:
  ret void
}
"""


def test_the_ir_reader_evaluates_every_threads_address_and_its_branch_mask():
    store, load = lds_accesses(KERNEL, 128, 64)
    tid = np.arange(128)
    assert (store.store, store.width_bytes, load.store, load.width_bytes) == (True, 16, False, 4)
    assert (store.addr == (tid & 7) * 16 + (tid // 64) * 1024).all() and store.active.all()
    assert (load.addr == store.addr + 128).all()
    assert (load.active == ((tid & 32) == 0)).all()


def test_the_ir_reader_refuses_what_it_does_not_evaluate():
    with pytest.raises(ValueError, match="not evaluated"):
        lds_accesses(KERNEL.replace("lshr i32 %2, 6", "fptoui float %2 to i32"), 64, 64)
    with pytest.raises(ValueError, match="a branch back"):
        lds_accesses(KERNEL.replace("br label %done", "br label %low"), 64, 64)


def _compiled(entry: dict, store: bool) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every element slot of the sample's accesses of one side: (wave 0's byte addresses, active lanes)."""
    return [(np.array(a["addr"]) + j * e, np.array(a["active"], dtype=bool))
            for a in entry["accesses"] if a["store"] == store
            for e in [max(1, entry["element_bits"] // 8)] for j in range(a["width_bytes"] // e)]


def _derived_matches(key: str) -> bool:
    """Does Triton's generic swizzling as re-derived (no lane tile: the sample's 128-bit loads on gfx90a,
    gfx1200 and gfx1250 match only without one) give the compiled addresses: every element slot of each
    access is a register's lane addresses, and every register is one of its side's slots?"""
    case, entry = CORPUS_CASES[key], SAMPLE_CASES[key]
    entry = dict(entry, element_bits=dtype_bits(case["dtype"]))
    src, dst = LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])
    banks = 64 if case["arch"] in ("gfx950", "gfx1250") else 32
    smem = optimal_swizzling_ldst(src, dst, entry["element_bits"], banks)
    for store, layout in ((True, src), (False, dst)):
        derived = shared_byte_addresses(layout, smem, entry["element_bits"])
        slots = _compiled(entry, store)
        if not all(any((row[active] == addr[active]).all() for row in derived) for addr, active in slots):
            return False
        whole = {tuple(addr) for addr, active in slots if active.all()}
        if len(whole) == len(slots) and whole != {tuple(row) for row in derived}:
            return False
    return True


#: The sample's cases whose compiled addresses the re-derivation does not give: a src broadcast over lanes
#: (gfx942 fp32 16x16) and two gfx1100 8-wave tiles (the segment's swizzle pairs differ).
DIFFERS = {"blocked[1x4,t1x64,o10]->dotB16(kw1) gfx942 fp32 1 16x16",
           "blocked[1x4,t4x8,o10]->blocked[4x1,t8x4,o01] gfx1100 fp32 8 64x64",
           "wmma1.16x16->blocked[2x2,t2x16,o10] gfx1100 fp16 8 128x128"}


def test_the_rederived_swizzling_gives_tritons_compiled_addresses_on_the_sample():
    archs = {CORPUS_CASES[k]["arch"] for k in SAMPLE_CASES}
    assert archs == {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1200", "gfx1250"} and len(SAMPLE_CASES) == 31
    assert {k for k in SAMPLE_CASES if not _derived_matches(k)} == DIFFERS


def test_the_stored_bank_cycles_are_the_bank_models_on_the_compiled_addresses():
    # the sample holds wave 0's addresses; the stored rows are each access's worst wave's, which on every corpus
    # kernel is wave 0's (benchmarks/triton_lds_conflicts.py; its other waves conflict as much or less)
    for key, entry in SAMPLE_CASES.items():
        case = CORPUS_CASES[key]
        accesses = [LdsAccess(a["store"], a["width_bytes"], np.array(a["addr"]), np.array(a["active"], dtype=bool), 0)
                    for a in entry["accesses"]]
        assert bank_rows(accesses, case["arch"], dtype_bits(case["dtype"])) == STORED["cases"][key], key
    # every corpus case is stored, its IR's bytes per lane those of its ISA's LDS instructions
    assert set(STORED["cases"]) == set(CORPUS_CASES) and not STORED["failed"] and not STORED["ir_isa_differences"]


def _case(name, arch, dtype, waves, shape):
    return CORPUS_CASES[f"{name} {arch} {dtype} {waves} {shape}"]


def test_the_conflict_trade_case_is_conflict_free_on_both_sides():
    # gfx90a i8 blocked[1x4,t2x32,o10]->dotA16(kw8), 1 wave (tests/test_rank_rules.py CONFLICT_TRADE): Triton's
    # 8 ds_write_b128 and 4 ds_read_b128 take the conflict-free 8 bank cycles each; our plan's accesses are
    # conflict-free too, so counting conflicts leaves the case as it was (over Triton's whole mix in cycles)
    case = _case("blocked[1x4,t2x32,o10]->dotA16(kw8)", "gfx90a", "i8", 1, "64x64")
    assert triton_bank_rows(case) == [[0, 16, 8, 8, 4], [1, 16, 8, 8, 8]]
    plan = kernel_plan(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), "gfx90a", 8)
    assert bank_conflicts(plan, case, triton_whole_conversion(case)) == {"ours": 0.0, "triton": 0.0,
                                                                         "triton_whole": 0.0}


def test_tritons_two_way_conflicted_reads_are_priced():
    # gfx90a fp32 mfma32T->mfma16, 1 wave: Triton's 16 ds_read_b128 take 16 bank cycles against 8 each:
    # 16 x 20 (LDS_CYCLES[16]) x (2 - 1) x 2 (the port's sharing) = 640 cycles more
    case = _case("mfma32T->mfma16", "gfx90a", "fp32", 1, "64x64")
    assert triton_bank_rows(case) == [[0, 16, 16, 8, 16], [1, 16, 8, 8, 16]]
    cm = cost_model("gfx90a")
    assert access_conflict_cycles(cm, triton_bank_rows(case)) == {"lds_write": 0.0, "lds_read": 640.0}


def test_our_plans_conflicts_are_priced_as_its_cost_prices_them():
    # gfx950 bf16 mfma16->blocked[1x1,t64x1,o10], 1 wave: the plan's 16 ds_read_b64_tr_b16 are 2-way
    # conflicted: 16 x 12 (LDS_CYCLES[8]) x (2 - 1) x 2 = 384; Triton's accesses none
    case = _case("mfma16->blocked[1x1,t64x1,o10]", "gfx950", "bf16", 1, "64x64")
    plan = kernel_plan(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), "gfx950", 16)
    assert lds_conflict_cycles(plan) == 384.0
    assert bank_conflicts(plan, case, triton_whole_conversion(case))["triton_whole"] == 0.0


def test_our_conflict_cycles_are_the_ones_the_plan_was_priced_with():
    # one source: lds_conflict_cycles reads what plan_cost kept with the plan (cost_detail), the number pricing
    # its steps again gives under every objective (it priced them again, beside the planner's)
    import copy

    case = _case("mfma16->blocked[1x1,t64x1,o10]", "gfx950", "bf16", 1, "64x64")
    plan = kernel_plan(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), "gfx950", 16)
    again = {plan_cost(plan, cost_model("gfx950", o))[1]["conflict_cycles"] for o in OBJECTIVES}
    assert again == {plan.cost_detail["conflict_cycles"]} == {384.0}
    kept = copy.copy(plan)
    kept.cost_detail = dict(plan.cost_detail, conflict_cycles=7.0)
    assert lds_conflict_cycles(kept) == 7.0
    kept.cost_detail = {}
    with pytest.raises(LayoutError, match="never priced"):
        lds_conflict_cycles(kept)


def _without_conflicts_file(monkeypatch, tmp_path):
    """linlayout.cli.bench with its Triton conflicts file missing and not yet read."""
    from linlayout.cli import bench

    monkeypatch.setattr(bench, "TRITON_LDS_CONFLICTS", tmp_path / "triton_lds_conflicts.json")
    monkeypatch.setattr(bench, "_triton_bank_rows", None)
    return bench


def test_a_missing_conflicts_file_fails_in_one_line_not_conflict_blind(monkeypatch, tmp_path):
    # without benchmarks/data/triton_lds_conflicts.json every row would be quietly conflict-blind: the bench
    # refuses to run (a LayoutError, the CLI's one line and exit 2), and not as a refused row of each case
    case = _case("mfma32T->mfma16", "gfx90a", "fp32", 1, "64x64")
    bench = _without_conflicts_file(monkeypatch, tmp_path)
    with pytest.raises(LayoutError, match="triton_lds_conflicts.json is missing"):
        bench.triton_bank_rows(case)
    with pytest.raises(LayoutError, match="is missing"):
        bench.bench_or_refusal(case, binary=False)


def test_cases_that_price_no_triton_conflicts_run_without_the_file(monkeypatch, tmp_path):
    # the NVIDIA corpus (counted from the plan) and the 48-case baseline (no triton_kernel_shared) never read
    # benchmarks/data/triton_lds_conflicts.json: the bench ran them only with it (bench_or_refusal read it first)
    from repo_data import baseline_cases, family_corpus

    bench = _without_conflicts_file(monkeypatch, tmp_path)
    nvidia, baseline = family_corpus("nvidia")["cases"][0], baseline_cases()[0]
    assert not bench.prices_triton_banks(nvidia) and not bench.prices_triton_banks(baseline)
    assert bench.triton_bank_rows(nvidia) is None and bench.triton_bank_rows(baseline) is None
    row = bench.bench_or_refusal(nvidia)
    assert "refused" not in row and row["counted_by"] == "plan" and row["bank_conflicts"] is None
    assert bench._triton_bank_rows is None  # not read
    assert bench.prices_triton_banks(_case("mfma32T->mfma16", "gfx90a", "fp32", 1, "64x64"))


@needs.mlir
def test_the_baseline_is_benched_without_the_conflicts_file(monkeypatch, tmp_path):
    from repo_data import baseline_cases

    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path / "cache"))
    bench = _without_conflicts_file(monkeypatch, tmp_path)
    row = bench.bench_or_refusal(baseline_cases()[0], binary=False)
    assert "refused" not in row and row["counted_by"] == "isa" and row["bank_conflicts"] is None
    assert bench._triton_bank_rows is None


def test_a_masked_lane_of_wave_0_at_a_conflicting_address_is_not_counted():
    # gfx942 ds_read_b32 of 4 lane bytes in order; lane 5 would read bank 6 at another address (a 2-way
    # conflict when it runs): masked off, it takes an active lane's address of its phase and adds nothing
    addr = 4 * np.arange(64)
    addr[5] = 4 * 6 + 128
    active = np.ones(64, dtype=bool)
    assert bank_rows([LdsAccess(False, 4, addr, active, 1)], "gfx942", 32) == [[0, 4, 3, 2, 1]]
    active[5] = False
    assert bank_rows([LdsAccess(False, 4, addr, active, 1)], "gfx942", 32) == [[0, 4, 2, 2, 1]]


def test_an_access_takes_its_worst_waves_cycles():
    # gfx942 ds_read_b32 of two waves: the lanes of one read their dwords in order (2 bank cycles, the least),
    # the other's lane 5 reads bank 6 at another address (3); the access is priced at 3 whichever wave conflicts
    # (it took wave 0's addresses alone: the conflict of a later wave was not counted)
    plain = 4 * np.arange(64)
    conflicted = plain.copy()
    conflicted[5] = 4 * 6 + 128
    active = np.ones(128, dtype=bool)
    for addr in (np.concatenate([plain, conflicted]), np.concatenate([conflicted, plain])):
        assert bank_rows([LdsAccess(False, 4, addr, active, 1)], "gfx942", 32) == [[0, 4, 3, 2, 1]]
    assert bank_rows([LdsAccess(False, 4, np.concatenate([plain, plain]), active, 1)], "gfx942", 32) == [[0, 4, 2, 2, 1]]
    # a wave none of whose lanes executes the access adds nothing
    idle = np.concatenate([np.ones(64, dtype=bool), np.zeros(64, dtype=bool)])
    assert bank_rows([LdsAccess(False, 4, np.concatenate([plain, conflicted]), idle, 1)], "gfx942", 32) == [[0, 4, 2, 2, 1]]


def test_conflict_cycles_are_lds_pipe_cycles_of_the_mix():
    from linlayout.synth.cost import mix_cost

    cm = cost_model("gfx942")
    counts = {"lds_write": 4, "lds_read": 4, "valu": 10, "total": 18}
    free, conflicted = mix_cost(cm, counts, 16, 16), mix_cost(cm, counts, 16, 16, 100.0)
    assert conflicted["lds"] - free["lds"] == conflicted["lds_pipe"] - free["lds_pipe"] == 100.0
    assert conflicted["simd"] == free["simd"]  # the LDS pipe's, not the SIMD's
    for o in ("latency", "throughput"):
        assert conflicted[f"{o}_value"] == cm.objective_value(conflicted, o) > free[f"{o}_value"]


def test_tritons_region_takes_at_most_all_of_its_kernels_conflict_cycles(monkeypatch):
    # a counted region with more reads than its kernel's LDS reads (as a whole conversion may count) takes the
    # kernel's conflict cycles once, not more
    from linlayout.cli import bench

    case = _case("mfma32T->mfma16", "gfx90a", "fp32", 1, "64x64")
    rows = triton_bank_rows(case)
    kernel = dict(case["triton_kernel_shared"])
    reads = int(kernel["lds_read"])
    monkeypatch.setattr(bench, "lds_conflict_cycles", lambda plan: 0.0)
    plan = type("P", (), {"arch": "gfx90a"})()
    more = dict(case["triton"], lds_read=3 * reads)
    half = dict(case["triton"], lds_read=reads // 2)
    all_cycles = access_conflict_cycles(cost_model("gfx90a"), rows)["lds_read"]
    assert all_cycles == 640.0
    got = bench.bank_conflicts(plan, dict(case, triton=more), half)
    assert got == {"ours": 0.0, "triton": all_cycles, "triton_whole": all_cycles / 2}
