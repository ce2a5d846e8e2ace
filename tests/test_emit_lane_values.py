"""Per-lane setup values (linlayout.lowering.emit.lane_values): the GF(2)-affine fit, register reuse
with immediate offsets, lane masks, and the values a kernel computes on the interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import needs
from linlayout.synth.lane_arith import AffineTable, fit_affine

WAVE = 64


def _affine_tables(draw, num_warps):
    wb = num_warps.bit_length() - 1
    word = st.integers(0, (1 << 32) - 1)
    return AffineTable(draw(word), tuple(draw(word) for _ in range(6)), tuple(draw(word) for _ in range(wb)))


@settings(max_examples=40, deadline=None)
@given(st.data(), st.sampled_from([1, 2, 4, 8]))
def test_fit_affine_recovers_every_affine_table(data, num_warps):
    aff = _affine_tables(data.draw, num_warps)
    t = aff.evaluate(num_warps)
    assert fit_affine(t) == aff
    # with don't-cares the fit only has to agree on the defined entries
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    defined = rng.random(t.shape) < 0.5
    noisy = np.where(defined, t, rng.integers(0, 1 << 32, t.shape))
    fit = fit_affine(noisy, defined)
    assert fit is not None and np.array_equal(fit.evaluate(num_warps)[defined], t[defined])


def test_fit_affine_refuses_non_affine_tables():
    lane = np.arange(WAVE)
    assert fit_affine(((lane + 1) % WAVE)[None, :]) is None  # a rotation is not GF(2)-affine
    assert fit_affine(np.full((3, WAVE), 1)) is None  # warp count not a power of two
    assert fit_affine(np.full((1, WAVE), -1)) is None
    # a rotation restricted to lanes where it is affine (no carry out of bit 0) fits
    defined = (lane % 2 == 0)[None, :]
    assert fit_affine(((lane + 1) % WAVE)[None, :], defined) is not None


mlir = needs.mlir


@mlir
def test_lane_values_kernel_on_interpreter():
    from linlayout.lowering.emit import atoms
    from linlayout.lowering.emit.builder import Builder, kernel_module
    from linlayout.lowering.emit.lane_values import LaneValues
    from linlayout.lowering.interp import load_kernel

    W = 2
    lane = np.arange(WAVE)
    warp = np.arange(W)[:, None]
    tables = {
        "xor_swizzle": np.broadcast_to((lane * 16) ^ ((lane >> 3) & 7) * 16 ^ warp * 4096, (W, WAVE)),
        "general_cols": np.broadcast_to(((lane & 1) * 0x1234) ^ ((lane >> 5) * 0xABCD00) ^ 7, (W, WAVE)),
        "rotation": np.broadcast_to(4 * ((lane + 1) % WAVE), (W, WAVE)),  # not affine: constant array
    }
    b = Builder()
    tid, _t32, lane_v, warp_v = atoms.thread_ids(b)
    lv = LaneValues(b, tid, lane_v, warp_v, W, WAVE, "gfx942")
    names = {k: lv.value_of(t, what=k)[0] for k, t in tables.items()}
    base, delta = lv.value_of(tables["xor_swizzle"] + 48, max_delta=64)
    assert (base, delta) == (names["xor_swizzle"], 48)  # reused with an immediate offset
    other, d2 = lv.value_of(tables["xor_swizzle"] + 8, max_delta=8)  # too far: a new (affine) register
    assert d2 == 0 and other != names["xor_swizzle"]
    cond_t = (lane[None, :] >> 4 & 1) ^ (warp & 1)  # differs per warp
    cond = lv.condition(np.broadcast_to(cond_t, (W, WAVE)))
    assert lv.condition(np.broadcast_to(cond_t, (W, WAVE))) == cond  # cached
    assert len(lv.globals) == 1 and any(c == "s" for _, _, c in lv.pinned)
    rsrc = atoms.buffer_rsrc(b, "%out", 4 * 4 * W * WAVE)
    t4 = b.arith("shli", b.cast("arith.index_cast", tid, "index", "i32"), b.const(4))
    for k, name in enumerate(list(names.values()) + [b.select(cond, b.const(1), b.const(0))]):
        atoms.buffer_store(b, name, rsrc, b.arith("addi", t4, b.const(4 * k)), "i32")
    text = kernel_module("k", [("%out", "!llvm.ptr<1>")], b.body(), W * WAVE, lv.globals)
    out = load_kernel(text, "k", "gfx942").run([np.zeros((W * WAVE, 4), np.uint32)], block=(W * WAVE, 1, 1))[0]
    for k, t in enumerate(tables.values()):
        assert np.array_equal(out[:, k], np.asarray(t, dtype=np.int64).reshape(-1) & 0xFFFFFFFF), k
    assert np.array_equal(out[:, 3], cond_t.reshape(-1))


def _column(rng, wide: bool, pattern: int, b: int) -> int:
    """A random column of input bit ``b``: zero, one bit, ``pattern << b`` (a multiply term's) or (``wide``) any
    word."""
    kind = int(rng.integers(4 if wide else 3))
    return [0, 1 << int(rng.integers(32)), (pattern << b) & 0xFFFFFFFF, int(rng.integers(1, 1 << 32))][kind]


@mlir
@pytest.mark.parametrize("arch", ["gfx942", "gfx950", "gfx1100", "gfx1250"])
@pytest.mark.parametrize("num_warps", [1, 4])
def test_random_tables_on_the_interpreter(arch, num_warps):
    """Random affine tables of a wave32 or wave64 kernel (lane and warp parts, multiply-term columns), tables a
    constant above them beyond the offset field (``beyond``) and lane-bit choices: the interpreter computes each."""
    from interp_kernels import prologue_kernel, run_prologue
    from linlayout.lowering.emit.lane_choices import LaneChoices
    from linlayout.synth.lane_choices import choice_table

    rng = np.random.default_rng([num_warps, *map(ord, arch)])
    tables: list[np.ndarray] = []

    def build(lanes):
        lb, wb = lanes.wave_size.bit_length() - 1, num_warps.bit_length() - 1
        names = []
        for k in range(6):
            wide, pattern = bool(rng.integers(2)), int(rng.integers(1, 1 << 12))
            aff = AffineTable(int(rng.integers(1 << 32)), tuple(_column(rng, wide, pattern, b) for b in range(lb)),
                              tuple(_column(rng, wide, pattern, b) for b in range(wb)))
            t = aff.evaluate(num_warps)
            names.append(lanes.value_of(t, what=f"table {k}")[0])
            tables.append(t)
            above = t + int(rng.integers(1, 1 << 20))
            if (above < 1 << 32).all():  # no wrap: the same constant above in every lane
                names.append(lanes.value_of(above, what=f"table {k} above", beyond=[names[-1]])[0])
                tables.append(above)
        choices = LaneChoices(lanes)
        lane = np.arange(lanes.wave_size)
        for k in range(3):
            bits = int(rng.integers(1, lanes.wave_size))  # the lane bits S: cond = parity(lane & S) ^ c
            parity = np.array([bin(int(v)).count("1") & 1 for v in lane & bits])
            cond = np.broadcast_to(parity ^ int(rng.integers(2)), (num_warps, lanes.wave_size))
            if_false, if_true = (int(v) for v in rng.integers(0, 1 << 32, 2))
            names.append(choices.choice(cond, if_false, if_true, what=f"choice {k}"))
            tables.append(choice_table(cond, if_false, if_true))
        return names

    text, n = prologue_kernel(arch, num_warps, build)
    out = run_prologue(text, n, arch, num_warps)
    for k, t in enumerate(tables):
        assert np.array_equal(out[:, k], t.reshape(-1) & 0xFFFFFFFF), k


def _compiled_address_tables(arch, num_warps, tables, build=None):
    """``(ops, estimate)``: the compiled setup of a kernel of ``num_warps`` waves that makes the LDS address ``tables``
    (one per lane; ``build(lanes)`` makes their values, each on its own by default) and ``cost.lds_address_valu``
    of LDS stores at them; asserts that the interpreter computes each table in every wave."""
    from interp_kernels import prologue_kernel, run_prologue, setup_ops
    from linlayout.synth.cost import lds_address_valu
    from linlayout.synth.steps import LdsStore

    if build is None:
        def build(lanes):
            return [lanes.value_of(t, what="table")[0] for t in tables]
    text, n = prologue_kernel(arch, num_warps, build)
    out = run_prologue(text, n, arch, num_warps)
    for k, t in enumerate(tables):
        assert np.array_equal(out[:, k], np.tile(t, num_warps)), k
    steps = [LdsStore(addr=t[None, :], width_bytes=4, src=[0]) for t in tables]
    return setup_ops(text, arch), lds_address_valu(steps, arch, one_wave=num_warps == 1)


@mlir
@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
@pytest.mark.parametrize("num_warps", [1, 2])
def test_adds_beyond_the_offset_field_compile_to_the_estimate(arch, num_warps):
    """Two registers a constant beyond the offset field above a swizzled one: the compiled setup has the planner's
    count (cost.lds_address_valu: on gfx950 the base's copy once, ``Target.opaque_beyond_offset_adds``) and no
    ``s_nop`` (gfx950 hides the base with ``llvm.amdgcn.softwqm``: after an inline asm it would wait a cycle,
    ``Target.waits_after_inline_asm``); the interpreter computes each register.  The kernel declares its
    threads (``known_block_size``): in one wave LLVM drops the lane id's mask (``tid & 63``) from the swizzled
    table, ``l << 4``, and so does the estimate of a one-wave kernel (lane_arith "One wave")."""

    lane = np.arange(WAVE)
    swizzled = ((lane & 7) << 4) ^ ((lane >> 3) << 7)
    tables = [swizzled, swizzled + 0x12000, swizzled + 0x24000]

    def build(lanes):
        first = lanes.value_of(tables[0], what="base")[0]
        return [first] + [lanes.value_of(t, max_delta=1 << 16, what="above", beyond=[first])[0] for t in tables[1:]]

    ops, estimate = _compiled_address_tables(arch, num_warps, tables, build)
    assert "s_nop" not in ops
    assert sum(op.startswith("v_") for op in ops) == estimate


@mlir
@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
@pytest.mark.parametrize("num_warps", [1, 2])
@pytest.mark.parametrize("name", ["l", "l and (l & 15) << 2", "(l & 15) << 2 and l"])
def test_a_table_equal_to_the_lane_id_is_no_op(arch, num_warps, name):
    """An LDS address table equal to the lane id is the kernel's lane id (``tid & (wave - 1)``, which the kernel
    computes anyway): no instruction in the setup, in a kernel of one wave or two, alone or beside another table
    (lane_arith ``_lane_id``; the estimate counted it as one VALU); the estimate is the compiled VALU (RDNA's
    ``s_delay_alu`` apart), and the interpreter computes each register."""
    from linlayout.hw.targets import get_target

    lane = np.arange(get_target(arch).wave_size)
    tables = {"l": [lane], "l and (l & 15) << 2": [lane, (lane & 15) << 2],
              "(l & 15) << 2 and l": [(lane & 15) << 2, lane]}[name]
    ops, estimate = _compiled_address_tables(arch, num_warps, tables)
    assert sum(op.startswith("v_") for op in ops) == estimate == 2 * (len(tables) - 1)


@mlir
@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
@pytest.mark.parametrize("num_warps", [1, 2])
def test_one_lane_bit_moved_up_is_a_shift_and_an_and(arch, num_warps):
    """``(l & 16) << 4``: LLVM makes it ``(l << 4) & 0x100`` (a ``v_lshlrev_b32`` and a ``v_and_b32`` with the literal),
    2 VALU in a kernel of one wave or two, the estimate's count (session 24, fold31: review30 asked whether this
    one-wave fold was counted; the ``s_movk_i32 s2, 0x100`` LLVM schedules beside it on gfx942 with one wave and
    on gfx1100 with two is the store's buffer size, no part of the table)."""
    from linlayout.hw.targets import get_target

    table = (np.arange(get_target(arch).wave_size) & 16) << 4
    ops, estimate = _compiled_address_tables(arch, num_warps, [table])
    assert [op for op in ops if op.startswith("v_")] == ["v_lshlrev_b32_e32", "v_and_b32_e32"]
    assert estimate == 2


@mlir
@pytest.mark.parametrize("arch,dtype,num_warps,valu", [("gfx90a", "bf16", 4, 2)])
def test_a_bpermute_address_a_constant_above_another_is_its_offset_field(arch, dtype, num_warps, valu):
    """AMD corpus ``slice0(blocked[1x1,t1x64,o10])->slice1(mfma32T)``: two ``ds_bpermute`` tables, ``4 (l & 31)`` and
    ``4 (l & 31) + 128``.  The second is the first's register plus 128 (``PlanEmitter.bpermute_address``), which
    LLVM folds into the instruction's ``offset:128``, so the setup makes one register, ``v_and_b32`` and
    ``v_lshlrev_b32`` (its own register, pinned, was a ``v_or_b32`` more that nothing read); the planner counts
    the same (cost.bpermute_address_valu); the kernel converts on the interpreter."""
    import re

    from linlayout import LinearLayout
    from linlayout.cli.bench import kernel_plan
    from linlayout.dtypes import dtype_bits
    from linlayout.lowering.report import kernel_setup
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.emit.host import distinct_tile, expected_output, interpret
    from linlayout.lowering.isa import region_lines
    from repo_data import family_corpus

    (case,) = [c for c in family_corpus("amd")["cases"] if c.get("set") != "baseline" and
               (c["name"], c["arch"], c["dtype"], c["num_warps"]) ==
               ("slice0(blocked[1x1,t1x64,o10])->slice1(mfma32T)", arch, dtype, num_warps)]
    plan = kernel_plan(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), arch,
                       dtype_bits(dtype))
    assert plan.strategy == "lanes" and plan.counts()["ds_bpermute"] == 2
    assert plan.overhead["valu_bpermute_addr"] == valu
    low = lower_conversion(plan, binary=False, cache=False)
    isa = low.compiled.isa
    permutes = [re.match(r"ds_bpermute_b32 v\d+, (v\d+), v\d+(?: offset:(\d+))?$", ln.strip())
                for ln in region_lines(isa, "conv") if "ds_bpermute" in ln]
    assert len({m.group(1) for m in permutes}) == 1 and sorted(m.group(2) or "0" for m in permutes) == ["0", "128"]
    setup = kernel_setup(isa)
    assert setup["valu"] == valu
    tile = distinct_tile(low.kernel.shape, plan.element_bits, seed=5)
    assert np.array_equal(interpret(low.kernel, tile, fill=0x5A), expected_output(plan, tile, fill=0x5A))


@mlir
@pytest.mark.parametrize("family,name,arch,dtype,num_warps,count", [
    # 3 VALU: v_lshlrev_b32 and v_and_b32 (4 x lane, lane part), v_and_or_b32 joining the warp SGPR's bit 64
    ("amd", "slice1(dotA32(kw8))->slice1(blocked[1x1,t16x4,o01])", "gfx942", "fp8", 4, 3),
    # 11 VALU and 4 SALU (s_lshr_b32 of the warp id, 3 s_delay_alu); planned as a lane plan (strategy
    # "registers"): the bench plans a round trip, whose read address is the thread id shifted (ww32_25)
    ("wave32", "slice0(blocked[1x4,t2x16,o10])->slice1(wmma2.16x16)", "gfx1200", "i8", 8, 15),
])
def test_bpermute_addresses_count_their_warp_part(family, name, arch, dtype, num_warps, count):
    """Multi-warp ``ds_bpermute`` tables whose source lane depends on the warp: cost.bpermute_address_valu counts
    their warp part (``warp_part_ops``, as for LDS addresses: one more here than warp 0's program), and the
    compiled setup region (VALU and SALU) is that count."""
    from linlayout import LinearLayout
    from linlayout.cli.bench import kernel_plan
    from linlayout.dtypes import dtype_bits
    from linlayout.lowering.report import kernel_setup
    from linlayout.lowering.conversion import lower_conversion
    from repo_data import family_corpus

    (case,) = [c for c in family_corpus(family)["cases"] if c.get("set") != "baseline" and
               (c["name"], c["arch"], c["dtype"], c["num_warps"]) == (name, arch, dtype, num_warps)]
    plan = kernel_plan(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), arch,
                       dtype_bits(dtype), strategy="auto" if family == "amd" else "registers")
    assert plan.strategy == "lanes"
    assert {k: v for k, v in plan.overhead.items() if k.startswith(("valu", "salu"))} == {"valu_bpermute_addr": count}
    setup = kernel_setup(lower_conversion(plan, binary=False).compiled.isa)
    assert setup["valu"] + setup["salu"] == count


def test_thread_id_form_takes_an_address_across_the_lane_and_warp_bits():
    """lane_arith.thread_id_form: an LDS read address of lane bit 4 and warp bits 0-1 at bytes 8, 16, 32
    (wave32 gfx1200 i8 ``slice0(blocked[1x4,t2x16,o10])->slice1(wmma2.16x16)``, 8 waves) is ``(tid >> 1) &
    56``, 2 VALU, where the lane term, the warp term and their join take 4 (2 of them SALU); a table with
    no warp column, or no lane column, keeps its split form."""
    from linlayout.synth.lane_arith import TID, LaneProgram, thread_id_form

    aff = AffineTable(0, (0, 0, 0, 0, 8), (16, 32, 0))
    split = LaneProgram("rdna", 5, 3)
    split.add(aff)
    assert split.count() == (2, 2)
    assert thread_id_form("rdna", 5, aff) and thread_id_form("gfx9", 5, aff)
    prog = LaneProgram("rdna", 5, 3)
    node = prog.add(aff, thread_id=True)
    assert prog.count() == (2, 0)
    assert prog.nodes[node] == ("and", prog.node("shr", TID, 1), 56)
    assert np.array_equal(prog.evaluate(node, 8), aff.evaluate(8))
    assert not thread_id_form("rdna", 5, AffineTable(0, (0, 0, 0, 0, 8), (0, 0, 0)))
    assert not thread_id_form("rdna", 5, AffineTable(0, (0,) * 5, (16, 32, 0)))


@mlir
def test_lds_address_from_the_thread_id_compiles_to_its_count():
    """The bench's round trip of wave32 gfx1200 i8 ``slice0(blocked[1x4,t2x16,o10])->slice1(wmma2.16x16)``,
    8 waves: its read address built from the thread id is estimated at 2 (``valu_lds_addr``) and compiles to
    ``v_lshrrev_b32``, ``v_and_b32`` and an ``s_delay_alu`` (5 before: a lane term, the warp id's
    ``s_lshr_b32``, a ``v_and_or_b32`` join and the delay); the whole conversion is 2 + 3 + the wait after
    the region, Triton's 9 (5 + 3 + the wait before session 24 took away its barrier and the wait before it: the
    src is in every wave, lds_path._exchanges); the kernel moves every element on the interpreter."""
    from linlayout.lowering.report import kernel_setup
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.emit.host import distinct_tile, expected_output, interpret
    from linlayout.lowering.isa import isa_counts, region_lines

    _, plan = _bench_plan("wave32", "slice0(blocked[1x4,t2x16,o10])->slice1(wmma2.16x16)", "gfx1200", "i8", 8)
    assert plan.strategy == "lds" and plan.overhead == {"valu_lds_addr": 2}
    low = lower_conversion(plan, binary=False, cache=False)
    setup = kernel_setup(low.compiled.isa)
    assert (setup["valu"], setup["salu"], setup["s_delay_alu"], setup["total"]) == (2, 1, 1, 3)
    assert isa_counts("\n".join(region_lines(low.compiled.isa, "conv")))["total"] == 2
    tile = distinct_tile(low.kernel.shape, plan.element_bits, seed=3)
    assert np.array_equal(interpret(low.kernel, tile, fill=0x5A), expected_output(plan, tile, fill=0x5A))


@mlir
def test_a_bpermute_address_after_the_load_line_is_priced_with_its_terms():
    """gfx950 i8 ``mfma16->mfma16T``, 2 waves, as the bench plans it in registers (the src load line's registers,
    ``kernel_plan``'s ``load_line``; the pick since session 24 a round trip with no barrier): the lanes plan's one ``ds_bpermute`` table ``4 (l & 3) + 64 (l >> 2 & 3)
    + ...`` shares its terms with the load line's byte offsets (``l``, i8), which the lowering computes in
    the same ``LaneValues`` first: estimated 5 (6 without the load line's registers, ``formed``), and the
    compiled setup is those 5 and the 6 VALU of the lane selectors.  Emulator-verified, the kernel run on the
    interpreter."""
    from linlayout.lowering.report import kernel_setup
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.emit.host import distinct_tile, expected_output, interpret
    from linlayout.synth import cost

    case, plan = _bench_plan("amd", "mfma16->mfma16T", "gfx950", "i8", 2, "registers")
    assert plan.verified and plan.strategy == "lanes"
    assert {k: v for k, v in plan.counts().items() if v} == {"v_perm_b32": 2, "dpp": 2, "ds_bpermute": 1, "total": 5}
    assert {k: v for k, v in plan.overhead.items() if k.startswith(("valu", "salu")) and v} == \
        {"valu_bpermute_addr": 5, "valu_lane_selector": 6}
    setup = cost._Setup(cost.get_target(plan.arch))
    for st in plan.steps:
        st.note_setup(setup)
    assert cost.bpermute_address_valu(list(setup.bpermute_addresses.values()), plan.arch, plan.num_warps) == 6
    low = lower_conversion(plan, binary=False, cache=False)
    compiled = kernel_setup(low.compiled.isa)
    assert (compiled["valu"], compiled["salu"]) == (11, 0)
    tile = distinct_tile(low.kernel.shape, plan.element_bits, seed=3)
    assert np.array_equal(interpret(low.kernel, tile, fill=0x5A), expected_output(plan, tile, fill=0x5A))


def _bench_plan(family: str, name: str, arch: str, dtype: str, num_warps: int, strategy: str = "auto"):
    """The corpus case and the plan the bench makes of it (with the src load line's registers) under ``strategy``."""
    from linlayout import LinearLayout
    from linlayout.cli.bench import kernel_plan
    from linlayout.dtypes import dtype_bits
    from repo_data import family_corpus

    (case,) = [c for c in family_corpus(family)["cases"] if c.get("set") != "baseline" and
               (c["name"], c["arch"], c["dtype"], c["num_warps"]) == (name, arch, dtype, num_warps)]
    return case, kernel_plan(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), arch,
                             dtype_bits(dtype), strategy, load_line=True)



@mlir
def test_the_prologue_fixture_declares_its_threads():
    """``prologue_kernel`` declares its workgroup's threads as the package's kernels do (``kernel_module``'s
    ``known_block_size``): 8 waves of 64 are 512 threads in its code object, not the 256 LLVM takes a kernel
    declaring none for (dropping the warp id's bit 2), and the interpreter runs no launch of other threads."""
    from interp_kernels import compiles, prologue_kernel, run_prologue
    from linlayout.lowering.interp import InterpreterError, load_kernel

    text, n = prologue_kernel("gfx942", 8, lambda lanes: [lanes.warp])
    assert ".max_flat_workgroup_size: 512\n" in compiles(text, "gfx942")
    assert np.array_equal(run_prologue(text, n, "gfx942", 8)[:, 0], np.arange(512) // WAVE)
    with pytest.raises(InterpreterError, match=r"declares known_block_size = \(512, 1, 1\), launched with \(256, 1, 1\)"):
        load_kernel(text, "k", "gfx942").run([np.zeros((512, n), np.uint32)], block=(256, 1, 1))
