"""Warp-id select trees read at a wave-uniform register index (``steps.Movrels``, ``v_movrels_b32``;
linlayout.synth.warp_index, ``convert._indexed``): the step on the emulator and the certificate executor, its
bad input, the planner's rewrite, the interpreter's run of the emitted MLIR against the emulator, the compiled
counts of the target case and the interpreter's refusal of a non-uniform index claimed uniform."""

from __future__ import annotations

import numpy as np
import pytest
from interp_kernels import converting_kernel, lane_kernel, run_lanes
from repo_data import family_corpus

import needs
from linlayout import LayoutError, LinearLayout
from linlayout.dtypes import dtype_bits
from linlayout.hw.targets import get_target
from linlayout.synth import cost
from linlayout.synth.emulator import verify
from linlayout.synth.plan import Plan
from linlayout.synth.steps import Movrels, Select, step_from_json
from linlayout.synth.warp_index import indexed_steps, warp_id_condition

# wave32 gfx1100 fp32, 4 waves: 48 v_cndmask choosing each warp's 16 of 64 src VGPRs by the warp id (16 roots)
NAME, ARCH, DTYPE = "blocked[2x1,t1x32,o01]->blocked[1x4,t2x16,o10]", "gfx1100", "fp32"


def _case_plan(monkeypatch=None, indexed: bool = True, arch: str = ARCH, swap_dst_warps: bool = False) -> Plan:
    from linlayout import caches
    from linlayout.cli.bench import kernel_plan
    from linlayout.synth import convert

    (case,) = [c for c in family_corpus("wave32")["cases"] if (c["name"], c["arch"], c["dtype"]) == (NAME, ARCH, DTYPE)]
    if not indexed:
        monkeypatch.setattr(convert, "indexed_steps", lambda *a: None)
    dst = dict(case["dst"], bases=dict(case["dst"]["bases"]))
    if swap_dst_warps:  # warp w = 2 b1 + b0 then holds what warp 2 b0 + b1 held: its offset is no longer 2 w
        dst["bases"]["warp"] = dst["bases"]["warp"][::-1]
    caches.clear()
    plan = kernel_plan(LinearLayout.from_json(case["src"]), LinearLayout.from_json(dst), arch,
                       dtype_bits(DTYPE))
    caches.clear()
    if monkeypatch is not None:
        monkeypatch.undo()
    return plan


@pytest.fixture(scope="module")
def plan() -> Plan:
    return _case_plan()


def test_the_target_case_reads_its_warp_id_trees_with_16_movrels(plan):
    moves = [s for s in plan.steps if isinstance(s, Movrels)]
    assert len(moves) == 16 and all(s.shift == (0, 2, 4, 6) for s in moves)  # warp w reads its src + 2 w
    assert sorted(s.src[0] for s in moves) == sorted(8 * k + h for k in range(8) for h in (0, 1))
    assert not any(warp_id_condition(s) for s in plan.steps)  # the 48 warp-id selects are gone
    counts = plan.counts()
    assert (counts["v_mov"], counts["v_cndmask"], counts["permlane16"], counts["total"]) == (16, 8, 32, 56)
    assert plan.overhead["salu_movrels_index"] == cost.MOVRELS_M0_SALU  # the index is the warp id: one m0 write
    assert plan.verified and verify(plan).ok


def test_without_the_step_the_plan_is_the_select_tree(monkeypatch):
    old = _case_plan(monkeypatch, indexed=False)
    assert old.counts()["v_cndmask"] == 56 and old.counts()["total"] == 88
    assert indexed_steps(old.steps, ARCH, old.num_warps, old.element_bits, old.slots_out) is not None
    # no v_movrels_b32 on gfx9: nothing to rewrite
    assert indexed_steps(old.steps, "gfx942", old.num_warps, old.element_bits, old.slots_out) is None


def test_a_wrong_shift_fails_on_the_emulator(plan):
    k = next(i for i, s in enumerate(plan.steps) if isinstance(s, Movrels))
    bad = Plan.from_certificate(plan.to_certificate())
    bad.steps[k] = Movrels(dst=bad.steps[k].dst, src=bad.steps[k].src, shift=(0, 2, 2, 6))
    result = verify(bad)
    assert not result.ok and "warp 2" in result.message


def test_the_certificate_round_trips_and_refuses_bad_input(plan):
    again = Plan.from_certificate(plan.to_certificate())
    assert [s.to_cert() for s in again.steps] == [s.to_cert() for s in plan.steps]
    item = {"op": "movrels", "dst": [0], "src": [1], "shift": [0, 2, 4, 6]}
    step, _ = step_from_json([item], 0)
    assert isinstance(step, Movrels) and step.reads() == [1, 3, 5, 7]
    with pytest.raises(LayoutError, match="shift must be a list of integers"):
        step_from_json([dict(item, shift=[0, "2"])], 0)
    with pytest.raises(LayoutError, match="equally long"):
        step_from_json([dict(item, src=[1, 2])], 0)
    assert "no v_movrels_b32" in step.plan_error(get_target("gfx942"), 32, 0)
    assert "part of a register" in Movrels([0, 1], [2, 3], (0, 1, 2, 3)).plan_error(get_target(ARCH), 16, 0)
    assert "below slot 0" in Movrels([0], [1], (0, -2)).plan_error(get_target(ARCH), 32, 0)
    cert = plan.to_certificate()
    k = next(i for i, s in enumerate(cert["steps"]) if s["op"] == "movrels")
    cert["steps"][k]["shift"] = [0, 2]  # two shifts for four warps
    with pytest.raises(LayoutError, match=r"shift has 2 entries; a per-warp table has one per warp \(4\)"):
        Plan.from_certificate(cert)


def test_a_tree_rewrites_only_where_its_leaves_are_one_shift_table():
    # 2 warps; slot 4 <- warp 1 ? 1 : 0, slot 5 <- warp 1 ? 3 : 2, slot 6 <- warp 1 ? (5) : (4) of those:
    # one root, leaves 0 / 3 (no base + one shift for the two-slot form is checked below)
    w = np.array([[0] * 32, [1] * 32])
    steps = [Select([4], [0], [1], w), Select([5], [2], [3], w), Select([0], [4], [5], w)]
    new = indexed_steps(steps, ARCH, 2, 32, 1)
    assert [s.to_cert() for s in new] == [[{"op": "movrels", "dst": [0], "src": [0], "shift": [0, 3]}]]
    lane_cond = np.array([1] * 16 + [0] * 16)  # a lane mask, not a warp-id select
    assert indexed_steps([Select([4], [0], [1], lane_cond), Select([0], [4], [2], w)], ARCH, 2, 32, 1) is None
    # the same tree with its inner result read again later keeps that select
    kept = indexed_steps(steps + [Select([1], [4], [4], lane_cond)], ARCH, 2, 32, 2)
    assert [s.op for s in kept] == ["select", "movrels", "select"]


@needs.mlir
@pytest.mark.parametrize("arch", ["gfx1100", "gfx1200", "gfx1250"])
def test_the_emitted_kernel_converts_on_the_interpreter_and_compiles_to_movrels(arch):
    # the corpus case on gfx1100; its layouts planned for gfx1200 and gfx1250 give the same plan and counts
    from linlayout.lowering.report import kernel_setup

    plan = _case_plan(arch=arch)
    assert plan.counts()["total"] == 56 and sum(isinstance(s, Movrels) for s in plan.steps) == 16
    low = _converting(plan)
    assert low.kernel.text.count("linlayout.uniform_index") == 16 and not low.differences
    isa = low.compiled.isa
    assert isa.count("v_movrels_b32") == 16 and "s_set_gpr_idx_on" not in isa
    counts = low.report["isa_counts"]
    # v_movrels_b32 counted under v_mov; gfx1250's region holds one s_delay_alu more (LLVM's schedule there since
    # the kernels declare their threads, session 22), which the plan does not count
    delays = 1 if arch == "gfx1250" else 0
    assert (counts["v_mov"], counts["s_delay_alu"], counts["total"]) == (16, delays, 56 + delays)
    # vcc_lo and 4 permlane selector words, and the m0 write LLVM hoists before the setup region (counted there)
    from linlayout.lowering.report import hoisted_m0_writes

    assert [ln.split()[:2] for ln in hoisted_m0_writes(isa)] == [["s_lshr_b32", "m0,"]]
    assert kernel_setup(isa)["total"] == low.report["setup_counts"]["total"] == 6
    assert counts["total"] - delays + 6 == plan.total_with_overhead() == 62  # the estimate's 56 + 6, compiled


@needs.mlir
def test_an_index_other_than_the_warp_id_is_a_scalar_select_chain():
    # the dst's two warp bits swapped: warp w reads its src + (0, 4, 2, 6)[w], index (0, 2, 1, 3)[w], made by
    # s_cmp + s_cselect per warp after warp 0 (MOVRELS_WARP_SALU) and moved into m0 (in the region, compiled)
    from linlayout.lowering.report import kernel_setup

    plan = _case_plan(swap_dst_warps=True)
    assert {s.shift for s in plan.steps if isinstance(s, Movrels)} == {(0, 4, 2, 6)} and plan.verified
    assert plan.overhead["salu_movrels_index"] == cost.MOVRELS_M0_SALU + 3 * cost.MOVRELS_WARP_SALU == 7
    low = _converting(plan)
    region, setup = low.report["isa_counts"]["total"], kernel_setup(low.compiled.isa)["total"]
    assert (region, setup) == (57, 11) and region + setup == plan.total_with_overhead() == 68


def _converting(plan):
    """``plan`` lowered and compiled (``converting_kernel``: its MLIR converts on the interpreter), its run on
    the emulator leaving the same tile."""
    from linlayout.lowering.emit.host import distinct_tile, emulated_output, expected_output

    low = converting_kernel(plan, seeds=(3,))
    tile = distinct_tile(low.kernel.shape, plan.element_bits, seed=3)
    assert np.array_equal(emulated_output(plan, tile, fill=0x5A), expected_output(plan, tile, fill=0x5A))
    return low


def test_the_interpreter_refuses_a_lane_dependent_index_claimed_uniform():
    def kernel(index: str, claim: bool) -> str:
        attr = " {linlayout.uniform_index}" if claim else ""
        return lane_kernel(f"""      %c1 = arith.constant 1 : i32
      %c3 = arith.constant 3 : i32
      %y = arith.addi %x, %c1 : i32
      %vec = vector.from_elements %x, %y, %x, %y : vector<4xi32>
      %i = {index}
      %res = llvm.extractelement %vec[%i : i32]{attr} : vector<4xi32>""")
    x = np.arange(32, dtype=np.uint32)
    lane_bits = "arith.andi %t, %c3 : i32"
    out = run_lanes(kernel(lane_bits, False), x, np.uint32, arch=ARCH, block=32, check_compile=False)
    assert np.array_equal(out, x + (np.arange(32) & 1))
    from linlayout.lowering.interp import InterpreterError
    with pytest.raises(InterpreterError, match="differs between the lanes of wave 0"):
        run_lanes(kernel(lane_bits, True), x, np.uint32, arch=ARCH, block=32, check_compile=False)
    uniform = "arith.constant 1 : i32"
    out = run_lanes(kernel(uniform, True), x, np.uint32, arch=ARCH, block=32, check_compile=False)
    assert np.array_equal(out, x + 1)


def test_the_hip_output_reads_the_index_bits_as_a_select_tree():
    # C++ has no wave-uniform register index: the HIP output selects on the index's bits (prologue conditions),
    # as the select tree's output did (compiled: 56 v_cndmask_b32, 24 v_mov_b32 and 32 v_permlane16_b32 both ways)
    from linlayout.lowering.cpp import emit_cpp
    from linlayout.lowering.cpp.toolchain import compile_hip, find_hip_clang
    from linlayout.lowering.report import region_counts

    plan = _case_plan()
    reads = [ln for ln in emit_cpp(plan).source.splitlines() if ln.strip().startswith("const unsigned i")]
    assert len(reads) == 16 and all(ln.count(" ? ") == 3 for ln in reads)  # 1 of 4 registers: 3 selects
    if find_hip_clang() is None:
        pytest.skip("no clang compiling HIP")
    counts = region_counts(compile_hip(emit_cpp(plan), ARCH, strict=True), "conv")
    assert (counts["v_cndmask"], counts["permlane16"], counts["total"]) == (56, 32, 113)


def test_a_vector_of_src_registers_out_of_their_load_tuples_is_copied():
    from types import SimpleNamespace

    from linlayout.synth.vgpr_tuples import VgprTuples

    step = Movrels(dst=[20], src=[0], shift=(0, 2, 4, 6))  # reads v0, v2, v4, v6: one vector of 4
    assert step.indexed_tuples(32) == [[0, 2, 4, 6]]
    plan = SimpleNamespace(steps=[step], element_bits=32)
    assert cost.movrels_copies(plan, VgprTuples.of("t", 1)) == 0  # single loads: placed where the vector wants
    assert cost.movrels_copies(plan, VgprTuples.of("t", 4)) == 4  # runs of 4 loaded together: all copied
    plan.steps = [Movrels(dst=[20], src=[0], shift=(0, 1, 2, 3))]
    assert cost.movrels_copies(plan, VgprTuples.of("t", 4)) == 0  # one run in order: in place
    plan.steps = [step, Movrels(dst=[21], src=[2], shift=(0, 2, 4, 6))]  # v2, v4, v6 again, and v8
    assert cost.movrels_copies(plan, VgprTuples.of("t", 1)) == 3


def test_priced_copies_keep_the_select_tree_where_the_src_arrives_in_runs_of_four():
    # a random gfx1250 fp32 case, 8 waves: as Movrels 2 reads of src dwords 0, 2, .., 14 and 1, 3, .., 15, which
    # its kernel loads 4 at a time; compiled with them, 16 v_mov_b32 built the two vectors (region 23)
    from linlayout.cli.bench import kernel_plan

    src = {"in_dims": [["register", 16], ["lane", 32], ["warp", 8], ["block", 1]],
           "out_dims": [["dim0", 8], ["dim1", 64]],
           "bases": {"register": [[0, 16], [0, 2], [0, 32], [0, 1]],
                     "lane": [[0, 4], [2, 0], [0, 8], [4, 0], [1, 0]], "warp": [[0, 0], [0, 0], [0, 0]], "block": []}}
    dst = {"in_dims": [["register", 2], ["lane", 32], ["warp", 8], ["block", 1]],
           "out_dims": [["dim0", 8], ["dim1", 64]],
           "bases": {"register": [[2, 0]], "lane": [[4, 0], [0, 8], [1, 0], [0, 4], [0, 16]],
                     "warp": [[0, 1], [0, 2], [0, 32]], "block": []}}
    # (in registers: the src is in every wave, so since session 24 the kernel's pick is a round trip with no
    # barrier, lds_path._exchanges)
    plan = kernel_plan(LinearLayout.from_json(src), LinearLayout.from_json(dst), "gfx1250", 32, strategy="registers")
    assert not any(isinstance(s, Movrels) for s in plan.steps) and plan.counts()["v_cndmask"] == 14
    steps = indexed_steps(plan.steps, "gfx1250", 8, 32, plan.slots_out)
    indexed = Plan.from_certificate(dict(plan.to_certificate(), steps=[i for s in steps for i in s.to_cert()]))
    assert verify(indexed).ok
    assert cost.estimate_overhead(indexed, src_tuple_dwords=4)["valu_movrels_copies"] == 16


def _evaluate_ternary(expr: str, body: dict[str, str], truth: dict[str, bool]) -> str:
    """The register name a C++ ``(c ? a : b)`` tree picks: ``body`` the variables of the emitted lines (name ->
    expression), ``truth`` the conditions' values."""
    import re

    def parse(tokens: list[str], k: int) -> tuple[str, int]:
        if tokens[k] != "(":
            name = tokens[k]
            return (_evaluate_ternary(body[name], body, truth) if name in body else name), k + 1
        cond = tokens[k + 1]
        assert tokens[k + 2] == "?"
        yes, k = parse(tokens, k + 3)
        assert tokens[k] == ":"
        no, k = parse(tokens, k + 1)
        assert tokens[k] == ")"
        return (yes if truth[cond] else no), k + 1

    tokens = re.findall(r"[()?:]|[^\s()?:]+", expr)
    out, k = parse(tokens, 0)
    assert k == len(tokens)
    return out


@pytest.mark.parametrize("element_bits, shift", [(32, (0, 4, 2, 6)), (32, (2, 0, 0, 1)), (64, (3, 0, 1, 3)),
                                                 (16, (6, 2, 0, 4))])
def test_the_hip_select_tree_picks_each_warps_register(element_bits, shift):
    # the C++ output of a Movrels step, evaluated per warp: warp w's result is the register src + offset[rank[w]]
    # (ranks (0, 2, 1, 3) for the first shift: the index's bits out of the warp id's order)
    from types import SimpleNamespace

    from linlayout.lowering.cpp.emitter import CppEmitter
    from linlayout.synth.steps.base import dword_pairs, dwords_per_slot, slots_per_dword

    W, wave = len(shift), 32
    tables: dict[str, np.ndarray] = {}

    def condition(cond, what):
        name = f"c{len(tables)}"
        tables[name] = np.asarray(cond) != 0
        return name

    plan = SimpleNamespace(num_warps=W, wave_size=wave, element_bits=element_bits, steps=[])
    emitter = CppEmitter(plan, SimpleNamespace(wave_size=wave), SimpleNamespace(condition=condition), "lds")
    p, dps = slots_per_dword(element_bits), dwords_per_slot(element_bits)
    step = Movrels(dst=[16, 17], src=[0, 1], shift=shift)
    regs = {d: f"v{d}" for d in range(16)}
    step.emit(emitter, step.prepare(emitter, "movrels"), regs, "movrels")
    body = {ln.split()[2]: ln.split(" = ", 1)[1].rstrip(";") for ln in emitter.body}
    for w in range(W):
        truth = {name: bool(t[w].all()) for name, t in tables.items()}
        assert all(t[w].all() or not t[w].any() for t in tables.values())  # a condition is one value per warp
        off = shift[w] * dps // p
        for d, s in dword_pairs(step.dst, step.src, p, dps, "movrels"):
            assert _evaluate_ternary(regs[d], body, truth) == f"v{s + off}", (w, d)


def _runs(steps, element_bits: int, num_warps: int = 2, n_regs: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """``[W, lanes, slots]`` element ids after ``steps`` on a src of ``n_regs`` slots per lane (distinct elements)
    for gfx1100: on the emulator (``run_isa``, read back from its byte tags) and on the certificate executor."""
    from linlayout.synth.convert import plan_conversion
    from linlayout.synth.emulator import UNDEF, _slot_bytes, run_certificate, run_isa
    from linlayout.synth.steps.base import dwords_per_slot, slots_per_dword

    r_bits, w_bits = n_regs.bit_length() - 1, num_warps.bit_length() - 1
    size = n_regs * 32 * num_warps
    src = LinearLayout.from_json({
        "in_dims": [["register", n_regs], ["lane", 32], ["warp", num_warps], ["block", 1]],
        "out_dims": [["dim0", size]],
        "bases": {"register": [[1 << b] for b in range(r_bits)], "lane": [[n_regs << b] for b in range(5)],
                  "warp": [[32 * n_regs << b] for b in range(w_bits)], "block": []}})
    cert = plan_conversion(src, src, ARCH, element_bits).to_certificate(raw=True)
    cert["steps"] = [item for s in steps for item in s.to_cert(raw=True)]
    plan = Plan.from_certificate(cert)
    regs = run_isa(plan)  # [dwords, W, lanes, bytes]: tag 256 + 8 id + byte
    p, dps, eb = slots_per_dword(element_bits), dwords_per_slot(element_bits), max(1, element_bits // 8)
    emulated = np.stack([np.where(regs[d, :, :, b] >= 256, (regs[d, :, :, b] - 256) // 8, UNDEF)
                         for d, b in (_slot_bytes(s, p, dps, eb)[0] for s in range(n_regs))], axis=-1)
    return emulated, run_certificate(plan.to_certificate(raw=True))[:, :, :n_regs]


@pytest.mark.parametrize("element_bits", [16, 32])
def test_a_register_written_earlier_in_the_step_is_read_new_on_both_executors(element_bits):
    # register 2 <- register 4 (+ the warp's offset), then register 0 <- register 2 (+ offset): one v_movrels_b32
    # after another, the second reads what the first wrote (the emulator, the MLIR and the hardware); the
    # certificate executor agrees (it read every source first)
    p = max(1, 32 // element_bits)
    reg = lambda r: [r * p + k for k in range(p)]  # noqa: E731  the slots of register r
    step = Movrels(dst=reg(2) + reg(0), src=reg(4) + reg(2), shift=(0, p))
    emulated, certified = _runs([step], element_bits, n_regs=16)
    assert np.array_equal(emulated, certified)
    lanes = 16 * np.arange(32)  # element ids: slot + 16 lane + 512 warp
    assert (certified[0, :, 0] == 4 * p + lanes).all()  # warp 0: register 2's new value, the old register 4
    assert (certified[1, :, 0] == 512 + 3 * p + lanes).all()  # warp 1: register 3, which it did not write
    assert (certified[1, :, 2 * p] == 512 + 5 * p + lanes).all()


def test_a_64_bit_movrels_on_two_warps_runs_alike_on_both_executors():
    step = Movrels(dst=[6, 7], src=[0, 1], shift=(0, 2))  # 64-bit slots: two registers each, offsets 0 and 4
    emulated, certified = _runs([step], 64)
    assert np.array_equal(emulated, certified)
    lanes = 8 * np.arange(32)  # element ids: slot + 8 lane + 256 warp
    assert (certified[0, :, 6] == lanes).all() and (certified[1, :, 6] == 256 + 2 + lanes).all()
    assert (certified[1, :, 7] == 256 + 3 + lanes).all()


def test_the_certificate_executor_refuses_bad_reads_and_reads_above_every_named_slot():
    from linlayout.synth.emulator import UNDEF, run_certificate

    base = Plan.from_certificate(_case_plan().to_certificate(raw=True)).to_certificate(raw=True)
    W = base["num_warps"]
    top = base["slots_in"] + 5  # a slot no step names and no src holds
    cert = dict(base, steps=[{"op": "movrels", "dst": [0], "src": [1], "shift": [0, 1, top - 1, 2]}])
    state = run_certificate(cert)
    assert (state[2, :, 0] == UNDEF).all() and (state[1, :, 0] == state[0, :, 2]).all()
    with pytest.raises(LayoutError, match="reads below slot 0"):
        run_certificate(dict(base, steps=[{"op": "movrels", "dst": [0], "src": [1], "shift": [0, -2, 0, 0]}]))
    with pytest.raises(LayoutError, match=f"a movrels shift has 3 entries for {W} warps"):
        run_certificate(dict(base, steps=[{"op": "movrels", "dst": [0], "src": [1], "shift": [0, 1, 2]}]))


def test_the_emulator_refuses_a_read_past_the_registers():
    from linlayout.synth.emulator import _Machine

    m = _Machine(4, 2, 32, 0, 32, ARCH)
    m.movrels(0, 3, [0, 0], "step 0 (movrels)")
    with pytest.raises(LayoutError, match="reads register v4, outside the plan's 4"):
        m.movrels(0, 3, [0, 1], "step 0 (movrels)")
    with pytest.raises(LayoutError, match="reads register v-1"):
        m.movrels(0, 0, [0, -1], "step 0 (movrels)")


def test_a_gfx942_plan_with_a_movrels_step_fails_verification():
    from linlayout.synth.convert import plan_conversion

    src = LinearLayout.from_json({"in_dims": [["register", 4], ["lane", 64], ["warp", 2], ["block", 1]],
                                  "out_dims": [["dim0", 512]],
                                  "bases": {"register": [[1], [2]], "lane": [[4 << b] for b in range(6)],
                                            "warp": [[256]], "block": []}})
    plan = plan_conversion(src, src, "gfx942", 32)
    cert = dict(plan.to_certificate(raw=True), steps=[{"op": "movrels", "dst": [0], "src": [0], "shift": [0, 0]}])
    with pytest.raises(LayoutError, match="gfx942 has no v_movrels_b32 instruction"):  # the step's plan_error
        Plan.from_certificate(cert)
    plan.steps = [Movrels(dst=[0], src=[0], shift=(0, 0))]  # past the parser: the emulator refuses it too
    result = verify(plan)
    assert not result.ok and result.message == "ISA execution failed: gfx942 has no v_movrels_b32 instruction"


def test_the_index_salu_exactly():
    m0, warp = cost.MOVRELS_M0_SALU, cost.MOVRELS_WARP_SALU
    assert cost.movrels_index_salu((0, 1, 2, 3)) == m0  # the warp id itself
    assert cost.movrels_index_salu((0, 0, 1, 1)) == m0 + 2 * warp == 5
    assert cost.movrels_index_salu((1, 0)) == m0 + warp == 3
    assert cost.movrels_index_salu((0, 2, 1, 3)) == m0 + 3 * warp == 7


def test_the_rewrite_refuses_an_odd_slot_shift_of_16_bit_registers():
    w = np.array([[0] * 32, [1] * 32])
    # 16-bit, 2 slots per register: leaves 0 / 1 and 2 / 3 are a shift of one slot, half a register
    steps = [Select([8], [0], [1], w), Select([9], [2], [3], w), Select([0], [8], [9], w)]
    assert indexed_steps(steps, ARCH, 2, 16, 1) is None
    even = [Select([8], [0], [2], w), Select([9], [4], [6], w), Select([0], [8], [9], w)]  # a shift of 2 slots
    assert [s.op for s in indexed_steps(even, ARCH, 2, 16, 1)] == ["movrels"]


def test_a_condition_whose_rows_vary_is_no_warp_id_select():
    w = np.array([[0] * 32, [1] * 32])
    assert warp_id_condition(Select([0], [1], [2], w)) == (0, 1)
    mixed = w.copy()
    mixed[1, 5] = 0  # warp 1 differs between its lanes
    assert warp_id_condition(Select([0], [1], [2], mixed)) is None
    assert warp_id_condition(Select([0], [1], [2], np.zeros((2, 32), dtype=int))) is None  # the same in every warp


def test_random_select_trees_run_alike_before_and_after_the_rewrite():
    # random warp-id select trees and moves over 4 warps: the emulator's state after steps and after
    # indexed_steps(steps) agrees in every slot the plan keeps (slots_out)
    from linlayout.synth.steps import Mov

    rng = np.random.default_rng(28)
    rewritten = 0
    for _ in range(40):
        W, n = 4, 8
        steps, free = [], 16
        for _ in range(int(rng.integers(2, 6))):
            if rng.random() < 0.2:
                steps.append(Mov([free], [int(rng.integers(0, free))]))
            else:
                bit = int(rng.integers(0, 2))
                cond = np.repeat(((np.arange(W) >> bit) & 1)[:, None], 32, axis=1)
                a, b = (int(x) for x in rng.integers(0, free, size=2))
                steps.append(Select([free], [a], [b], cond))
            free += 1
        steps.append(Mov([0], [free - 1]))
        new = indexed_steps(steps, ARCH, W, 32, 1)
        if new is None:
            continue
        rewritten += 1
        before, _ = _runs(steps, 32, W, 32)
        after, _ = _runs(new, 32, W, 32)
        assert np.array_equal(before[..., :1], after[..., :1]), [s.to_cert() for s in steps]
    assert rewritten >= 5


def test_the_uniform_index_check_looks_at_the_active_lanes_only():
    # lane 0 is masked off (scf.if on t != 0) and alone has another index: the active lanes agree, the first of
    # them is lane 1, so the claim holds
    kernel = lane_kernel("""      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c3 = arith.constant 3 : i32
      %y = arith.addi %x, %c1 : i32
      %vec = vector.from_elements %x, %y, %x, %y : vector<4xi32>
      %lane0 = arith.cmpi eq, %t, %c0 : i32
      %i = arith.select %lane0, %c3, %c1 : i32
      %active = arith.cmpi ne, %t, %c0 : i32
      %res = scf.if %active -> (i32) {
        %r = llvm.extractelement %vec[%i : i32] {linlayout.uniform_index} : vector<4xi32>
        scf.yield %r : i32
      } else {
        scf.yield %c0 : i32
      }""")
    x = np.arange(32, dtype=np.uint32)
    out = run_lanes(kernel, x, np.uint32, arch=ARCH, block=32, check_compile=False)
    assert np.array_equal(out, np.where(np.arange(32) == 0, 0, x + 1))
