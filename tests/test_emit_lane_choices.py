"""Per-lane choices of two constants (the selector registers of ``PermSelect`` steps): the form
(linlayout.synth.lane_choices), the planner's count of their setup instructions (``ChoicePlan``, the estimate
``valu_lane_selector``), the values a prologue computes on the interpreter, and the compiled prologue of
conversion kernels whose setup is their choices alone."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import needs
from linlayout import LinearLayout, get_target
from linlayout.synth.lane_choices import ChoicePlan, choice_table, lane_bits

WAVE = 64
LANE = np.arange(WAVE)


def _parity(x: np.ndarray) -> np.ndarray:
    return np.array([bin(int(v)).count("1") & 1 for v in x], dtype=bool)


def _brute_lane_bits(row: np.ndarray) -> tuple[int, ...] | None:
    """The lane-bit set S and constant c with row == c ^ parity(lane & S), by trying all of them."""
    lanes = np.arange(len(row))
    for mask, c in itertools.product(range(len(row)), (False, True)):
        if np.array_equal(row, c ^ _parity(lanes & mask)):
            return tuple(b for b in range(6) if mask >> b & 1)
    return None


def test_lane_bits_finds_each_parity_condition_and_only_those():
    rng = np.random.default_rng(7)
    rows = [c ^ _parity(LANE & mask) for mask in range(WAVE) for c in (False, True)]
    rows += [rng.random(WAVE) < 0.5 for _ in range(20)] + [LANE % 3 == 0, LANE >= 40]
    for row in rows:
        assert lane_bits(row[None, :]) == _brute_lane_bits(row)
        assert lane_bits(np.stack([row, row])) == _brute_lane_bits(row)  # the same in both warps
        assert lane_bits(row[:32]) == _brute_lane_bits(row[:32])  # a wave32 condition
    assert lane_bits(np.stack([LANE & 1 == 1, LANE & 1 == 0])) is None  # warps differ


def test_choice_count_shares_masks_masked_terms_and_values():
    bit0, bit1 = (LANE & 1 == 1)[None, :], (LANE >> 1 & 1 == 1)[None, :]
    c = ChoicePlan(get_target("gfx942"))
    first = c.add(bit0, 0x06020400, 0x03070105)  # v_bfe_i32, v_and_b32, v_add_u32
    assert c.valu == 3 and c.select_condition(first) is None
    assert {c.add(bit0, 0x06020400, 0x03070105),
            c.add(~bit0, 0x03070105, 0x06020400),  # the same table
            c.add(bit0[0], 0x06020400, 0x03070105),  # in the [lanes] shape
            c.add(np.stack([bit0[0], bit0[0]]).astype(np.int8), 0x06020400, 0x03070105)} == {first}  # both warps, 0/1
    assert c.valu == 3
    c.add(bit0, 0x06020401, 0x03070106)  # same lane bit, same K = B - A: one v_add_u32 more
    assert c.valu == 4
    c.add(bit1, 0x05040100, 0x03020706)  # another lane bit
    assert c.valu == 7
    c.add(bit0 ^ bit1, 0x05040100, 0x03020706)  # parity of two bits: the two v_bfe_i32 made, one v_xor_b32
    assert c.valu == 10
    odd = (LANE % 3 == 0)[None, :]  # not affine: v_mov_b32 of both constants (gfx9) and v_cndmask_b32
    select = c.add(odd, 0x05040100, 0x03020706)
    assert c.select_condition(select) == odd[0].tobytes()  # a select condition, in the [lanes] shape
    assert c.valu == 13 and c.add(odd, 0x05040100, 0x03020706) == select  # told once
    warps = np.stack([odd[0], ~odd[0]])  # lanes and warps: kept [warps, lanes]
    assert c.select_condition(c.add(warps, 0x05040100, 0x03020706)) == warps.tobytes() and c.valu == 14
    assert c.select_condition(c.add(LANE[None, :] < 0, 7, 9)) is None  # uniform
    assert c.valu == 15
    assert [op.kind for op in c.ops].count("sbit") == 2 and set(c.masks) == {(0,), (1,), (0, 1)}
    rdna = ChoicePlan(get_target("gfx1100"))  # a VOP3 literal: one constant of a pair moved, once per pair
    lanes = odd[0, :32]
    for if_false, if_true in ((0x05040100, 0x03020706), (0x03020706, 0x05040100), (0x05040100, 0x07060302)):
        rdna.add(lanes, if_false, if_true)
    assert rdna.valu == 3 + 2
    gfx9 = ChoicePlan(get_target("gfx90a"))  # no VOP3 literal: each distinct constant moved once
    for if_false, if_true in ((0x05040100, 0x03020706), (0x03020706, 0x05040100), (0x05040100, 0x07060302)):
        gfx9.add(odd, if_false, if_true)
    assert gfx9.valu == 3 + 3


@needs.mlir
def test_choices_compute_their_tables_on_the_interpreter():
    from linlayout.lowering.emit import atoms
    from linlayout.lowering.emit.builder import Builder, kernel_module
    from linlayout.lowering.emit.lane_choices import LaneChoices
    from linlayout.lowering.emit.lane_values import LaneValues
    from linlayout.lowering.interp import load_kernel
    from interp_kernels import compiles

    W = 2
    bit = lambda b: np.broadcast_to(LANE >> b & 1 == 1, (W, WAVE))  # noqa: E731
    choices = [(bit(0), 0x06020400, 0x03070105), (~bit(0), 0x03070105, 0x06020400),
               (bit(0), 0x06020401, 0x03070106), (bit(5), 0xFFFFFFFF, 0x00000001),
               (bit(1) ^ bit(3) ^ True, 0x05040100, 0x03020706),
               (np.broadcast_to(LANE % 3 == 0, (W, WAVE)), 0x01000504, 0x07060302),
               (np.broadcast_to(np.arange(W)[:, None] == 1, (W, WAVE)), 0x0C0C0C0C, 0x03020100),
               (np.stack([LANE & 4 == 4, LANE & 4 == 0]), 1, 2)]
    b = Builder()
    tid, _t32, lane_v, warp_v = atoms.thread_ids(b)
    lv = LaneValues(b, tid, lane_v, warp_v, W, WAVE, "gfx942")
    lc = LaneChoices(lv)
    names = [lc.choice(cond, f, t, what=f"choice {k}") for k, (cond, f, t) in enumerate(choices)]
    assert names[1] == names[0]  # one table, one value
    rsrc = atoms.buffer_rsrc(b, "%out", 4 * len(names) * W * WAVE)
    t4 = b.arith("muli", b.cast("arith.index_cast", tid, "index", "i32"), b.const(4 * len(names)))
    for k, name in enumerate(names):
        atoms.buffer_store(b, name, rsrc, b.arith("addi", t4, b.const(4 * k)), "i32")
    text = kernel_module("k", [("%out", "!llvm.ptr<1>")], b.body(), W * WAVE, lv.globals)
    compiles(text, "gfx942")
    out = load_kernel(text, "k", "gfx942").run([np.zeros((W * WAVE, len(names)), np.uint32)],
                                               block=(W * WAVE, 1, 1))[0]
    for k, (cond, f, t) in enumerate(choices):
        assert np.array_equal(out[:, k], choice_table(cond, f, t).reshape(-1)), k


# corpus cases whose compiled prologue holds only their plans' choices and select conditions: exactly the
# estimate (gfx90a: no wait after the opaque mask), and the interpreter agrees with the expected tile; the
# plans of the src packed (``kernel_plan(unpacked_src=False)``: the bench's kernel now loads these srcs one
# element per VGPR, whose plans need no byte choices)
CHOICES_ONLY = [
    ("amd", "slice1(dotA32(kw4))->slice1(blocked[1x1,t64x1,o01])", "gfx90a", "bf16",
     {"v_bfe_i32": 1, "v_and_b32_e32": 1, "v_or_b32_e32": 1}),
    ("amd", "slice0(mfma16)->slice0(blocked[1x1,t1x64,o10])", "gfx90a", "fp8",
     {"v_bfe_i32": 1, "v_and_b32_e32": 1, "v_or_b32_e32": 2, "s_mov_b32": 2}),
    ("amd", "slice1(dotA32(kw8))->slice1(blocked[1x1,t64x1,o01])", "gfx950", "i8",
     {"v_bfe_i32": 1, "v_mov_b32_e32": 1, "v_and_or_b32": 1}),
]


@needs.mlir
@pytest.mark.parametrize("family,name,arch,dtype,setup", CHOICES_ONLY)
def test_a_choices_only_prologue_is_the_estimate(family, name, arch, dtype, setup):
    from linlayout.cli.bench import kernel_plan
    from linlayout.dtypes import dtype_bits
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.emit.host import distinct_tile, expected_output, interpret
    from linlayout.lowering.isa import region_lines
    from repo_data import family_corpus

    (case,) = [c for c in family_corpus(family)["cases"]
               if (c["name"], c["arch"], c["dtype"]) == (name, arch, dtype) and c.get("set") != "baseline"]
    plan = kernel_plan(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), arch,
                       dtype_bits(dtype), unpacked_src=False)
    assert any(st.op == "permsel" for st in plan.steps) and not plan.src_unpacked
    low = lower_conversion(plan, binary=False)
    ops = [ln.split()[0] for ln in region_lines(low.compiled.isa, "setup")
           if ln.strip() and not ln.strip().startswith(";")]
    assert {op: ops.count(op) for op in ops} == setup
    prologue = ("salu_vcc", "salu_perm_selector", "valu_lane_selector", "salu_permlane_selector")
    assert sum(plan.overhead.get(k, 0) for k in prologue) == len(ops)
    tile = distinct_tile(low.kernel.shape, plan.element_bits, seed=1)
    assert np.array_equal(interpret(low.kernel, tile, fill=0x5A), expected_output(plan, tile, fill=0x5A))


@needs.mlir
def test_rdna_constant_selectors_are_literals_of_their_permutes():
    """gfx1200 fp8 ``wmma2.16x16->wmma2.16x16T`` (1 wave): its 16 ``v_perm_b32`` take their four constant
    selectors as the VOP3 literal (RDNA), so the prologue moves none into an SGPR (on CDNA one
    ``s_mov_b32`` each: gfx9's VOP3 takes no literal); the kernel computes its tile on the interpreter."""
    import re

    from test_emit_wave32 import check_wave32_kernel

    from linlayout.cli.bench import kernel_plan
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.isa import region_lines
    from repo_data import family_corpus

    key = ("wmma2.16x16->wmma2.16x16T", "gfx1200", "fp8", 1)
    (case,) = [c for c in family_corpus("wave32")["cases"] if (c["name"], c["arch"], c["dtype"], c["num_warps"]) == key]
    plan = kernel_plan(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), "gfx1200", 8)
    selectors = {st.selector for st in plan.steps if getattr(st, "kind", "") == "v_perm_b32"}
    assert len(selectors) == 4 and plan.counts()["v_perm_b32"] == 16
    low = lower_conversion(plan, binary=False)
    assert not [ln for ln in region_lines(low.compiled.isa, "setup") if ln.strip().startswith("s_mov")]
    perms = [ln for ln in region_lines(low.compiled.isa, "conv") if ln.strip().startswith("v_perm_b32")]
    assert len(perms) == 16 and {int(re.search(r"0x[0-9a-f]+$", ln.strip()).group(), 16) for ln in perms} == selectors
    check_wave32_kernel(plan)


@needs.mlir
@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_a_parity_of_two_lane_bits_compiles_to_its_count(arch):
    """``m_S`` on two lane bits: two ``v_bfe_i32`` and a ``v_xor_b32`` (LLVM would otherwise XOR two shifts left and
    shift the result: one VALU more), then ``v_and_b32`` and ``v_add_u32``: the setup's VALU are ``ChoicePlan``'s;
    the interpreter computes the choice."""
    from interp_kernels import prologue_kernel, run_prologue, setup_ops
    from linlayout.lowering.emit.lane_choices import LaneChoices

    W, wave = 2, 64 if arch == "gfx942" else 32
    lane = np.arange(wave)
    cond = (lane >> 1 & 1) ^ (lane >> 3 & 1)
    text, n = prologue_kernel(arch, W, lambda lv: [LaneChoices(lv).choice(cond, 0x06020400, 0x03070105, "choice")])
    count = ChoicePlan(get_target(arch))
    count.add(cond, 0x06020400, 0x03070105)
    ops = setup_ops(text, arch)
    assert [op for op in ops if op.startswith("v_")].count("v_bfe_i32") == 2
    assert len([op for op in ops if op.startswith("v_")]) == count.valu == 5
    out = run_prologue(text, n, arch, W)
    assert np.array_equal(out[:, 0], np.tile(choice_table(cond, 0x06020400, 0x03070105), W))


def _plan_cases(wave: int) -> dict[str, list[tuple[np.ndarray, int, int]]]:
    """Sets of choices ``(cond [lanes], if_false, if_true)`` of one prologue, by name."""
    lane = np.arange(wave)
    bit = lambda b: lane >> b & 1 == 1  # noqa: E731
    odd, odd5 = lane % 3 == 0, lane % 5 == 1
    return {"one bit": [(bit(0), 0x06020400, 0x03070105)],
            "uniform and one bit": [(lane < 0, 0x06020400, 0x03070105), (bit(3), 0x06020400, 0x03070105)],
            "same K": [(bit(0), 0x06020400, 0x03070105), (bit(0), 0x06020401, 0x03070106)],
            "sets sharing a bit": [(bit(0), 0x06020400, 0x03070105), (bit(1), 0x05040100, 0x03020706),
                                   (bit(0) ^ bit(1), 0x05040100, 0x03020706)],
            "two masks": [(bit(2), 0x06020400, 0x03070105), (bit(4), 0x05040100, 0x03020706)],
            "select, one pair twice": [(odd, 0x05040100, 0x03020706), (odd5, 0x05040100, 0x03020706)],
            "select, a shared constant": [(odd, 0x05040100, 0x03020706), (odd5, 0x05040100, 0x07060302)],
            "select and a lane bit": [(odd, 0x05040100, 0x03020706), (bit(1), 0x06020400, 0x03070105)]}


PLAN_CASES = [(arch, name) for arch in ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1250")
              for name in sorted(_plan_cases(64))]
# gfx942 and gfx950 keep a register copy (v_mov_b32) of a bit read in two sets: the softwqm copy that hides the bit
# there (atoms.unseen_word, Target.waits_after_inline_asm) is not coalesced; no corpus plan has sets sharing a bit.
# gfx950 and gfx1250 fuse the v_xor_b32 of the two bits and the v_and_b32 of its K into one v_bitop3_b32 (two ops of
# the plan, one VALU of its count: Target.has_bitop3; gfx950 moves K into an SGPR first, s_mov_b32: its VOP3 takes no
# literal)
COPIES = {("gfx942", "sets sharing a bit"): 1, ("gfx950", "sets sharing a bit"): 1}
FUSED = {("gfx950", "sets sharing a bit"): 1, ("gfx1250", "sets sharing a bit"): 1}


def _compiled_choices(arch: str, choices: list[tuple[np.ndarray, int, int]]) -> tuple[list[str], int, ChoicePlan]:
    """The choices ``(cond, if_false, if_true)`` made by ``LaneChoices`` alone in a 2-warp kernel's setup region:
    (the compiled region's mnemonics, its VALU -- a ``v_dual_*`` line is two, docs/amd_facts.md 6.4 --, the emitted
    :class:`ChoicePlan`), after checking on the interpreter that the kernel computes every choice."""
    from interp_kernels import prologue_kernel, run_prologue, setup_ops
    from linlayout.lowering.emit.lane_choices import LaneChoices

    plans = []

    def build(lanes):
        lc = LaneChoices(lanes)
        plans.append(lc.plan)
        return [lc.choice(cond, f, t, f"choice {k}") for k, (cond, f, t) in enumerate(choices)]

    text, n = prologue_kernel(arch, 2, build)
    ops = setup_ops(text, arch)
    out = run_prologue(text, n, arch, 2)
    for k, (cond, f, t) in enumerate(choices):
        assert np.array_equal(out[:, k], np.tile(choice_table(cond, f, t), 2)), k
    return ops, sum(2 if op.startswith("v_dual_") else 1 for op in ops if op.startswith("v_")), plans[0]


@needs.mlir
@pytest.mark.parametrize("arch,name", PLAN_CASES)
def test_choice_plan_is_the_compiled_count(arch, name):
    """The choices of a :class:`ChoicePlan` alone in a kernel's setup region: LLVM's VALU are the plan's ops and
    constant moves (``valu``; the lanes forms' ``v_bfe_i32`` shared between sets holding the bit, the select form's
    constants one ``v_mov_b32`` per pair where a VOP3 takes a literal (RDNA, gfx1250), per constant on gfx9 (gfx950
    too; the XORs fused into a ``v_bitop3_b32``, ``FUSED``, left out: ``Target.has_bitop3``); ``COPIES``), with no
    wait after the hidden bits (gfx942, gfx950: no ``s_nop``, which the inline asm that hides them elsewhere would
    bring there), and the interpreter computes every choice."""
    choices = _plan_cases(get_target(arch).wave_size)[name]
    ops, valu, plan = _compiled_choices(arch, choices)
    assert valu == plan.valu + COPIES.get((arch, name), 0) and "s_nop" not in ops
    assert ops.count("v_bitop3_b32") == FUSED.get((arch, name), 0)
    count = ChoicePlan(get_target(arch))  # the planner's count of the same choices: the emitted plan's
    for cond, f, t in choices:
        count.add(cond, f, t)
    assert count.valu == plan.valu
    assert [op[:3] for op in count.ops] == [op[:3] for op in plan.ops]


def _parity_cases(wave: int) -> dict[str, tuple[list[tuple[np.ndarray, int, int]], int]]:
    """Sets of ``"lanes"`` choices on parities of lane bits whose XORs the compiler may merge, by name, with the
    ``v_bitop3_b32`` a target that has it compiles (one per ``v_and_b32`` of an XOR only ``v_and_b32``s read)."""
    lane = np.arange(wave)
    bit = lambda b: lane >> b & 1 == 1  # noqa: E731

    def parity(n: int, first: int = 0) -> np.ndarray:
        return np.bitwise_xor.reduce([bit(b) for b in range(first, first + n)])

    a, b = (0x06020400, 0x03070105), (0x05040100, 0x03020706)
    return {"two bits": ([(parity(2), *a)], 1),
            "three bits": ([(parity(3), *a)], 1),
            "four bits": ([(parity(4), *a)], 1),
            "five bits": ([(parity(5), *a)], 1),
            "two bits, then three with them": ([(parity(2), *a), (parity(3), *b)], 2),
            "three bits, then four with them": ([(parity(3), *a), (parity(4), *b)], 2),
            "four bits, then two of them": ([(parity(4), *a), (parity(2), *b)], 2),
            "two bits and one of them": ([(parity(2), *a), (bit(0), *b)], 1),
            "two bits, one K twice": ([(parity(2), *a), (parity(2), 0x06020401, 0x03070106)], 1),
            "three bits, two K": ([(parity(3), *a), (parity(3), *b)], 2)}


# gfx950 keeps a v_mov_b32 copy of a hidden bit read twice here (as in COPIES; no rule found)
PARITY_COPIES = {("gfx950", "four bits, then two of them"): 1, ("gfx950", "three bits, two K"): 1}


@needs.mlir
@pytest.mark.parametrize("arch,name", [(arch, name) for arch in ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1200",
                                                                 "gfx1250") for name in sorted(_parity_cases(64))])
def test_parity_choices_count_the_xors_the_compiler_merges(arch, name):
    """``ChoicePlan``'s count of parity choices is the compiled setup's VALU (``PARITY_COPIES`` aside) and the XORs
    it keeps (``v_xor_b32`` and ``v_xor3_b32``, each one) are the compiled ones, ``ChoicePlan.merged_xors`` left
    out: on gfx950 and gfx1250 (``Target.has_bitop3``) each XOR only ``v_and_b32``s read goes into them as
    ``v_bitop3_b32``s; on RDNA (``Target.has_xor3``) an XOR only one XOR reads goes into it as a ``v_xor3_b32``,
    except on gfx1250 into an XOR a ``v_and_b32`` reads.  The interpreter computes every choice."""
    target = get_target(arch)
    choices, bitop3 = _parity_cases(target.wave_size)[name]
    ops, valu, plan = _compiled_choices(arch, choices)
    assert valu == plan.valu + PARITY_COPIES.get((arch, name), 0), ops
    assert ops.count("v_bitop3_b32") == (bitop3 if target.has_bitop3 else 0), ops
    xors = sum(op.kind == "xor" for op in plan.ops)
    assert sum(op.startswith(("v_xor_b32", "v_xor3_b32")) for op in ops) == xors - plan.merged_xors(), ops


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1200", "gfx1250"])
def test_least_lanes_choice_valu_is_one_choice_alone(arch):
    """``least_lanes_choice_valu(|S|, target)`` (a floor of the over-fetch selectors' VALU) is the count of one
    choice on ``S`` alone, for one to six lane bits: ``2|S| + 1`` less the merged XORs (one on two bits or more
    where the target has ``v_bitop3_b32``, then one per pair of the others where it has ``v_xor3_b32``)."""
    from linlayout.synth.lane_choices import least_lanes_choice_valu

    target = get_target(arch)
    lane = np.arange(target.wave_size)
    for n_bits in range(1, 7 if target.wave_size == 64 else 6):
        plan = ChoicePlan(target)
        plan.add(np.bitwise_xor.reduce([lane >> b & 1 for b in range(n_bits)]), 0x06020400, 0x03070105)
        fused = int(n_bits > 1 and target.has_bitop3)
        paired = (n_bits - 1 - fused) // 2 if target.has_xor3 else 0
        assert least_lanes_choice_valu(n_bits, target) == plan.valu == 2 * n_bits + 1 - fused - paired
