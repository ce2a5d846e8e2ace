"""The op program of per-lane GF(2)-affine tables (linlayout.synth.lane_arith): every table it builds
equals its map on every lane and warp, and its instruction count on hand-checked tables."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import needs
from linlayout import LayoutError
from linlayout.hw.targets import get_target
from linlayout.synth.lane_arith import (LANE, TID, WARP, AffineTable, LaneProgram, fit_affine, lane_columns,
                                        program_family)


def _column(draw, wide: bool) -> int:
    """A column: zero, one bit, or (``wide``) any 32-bit word."""
    kind = draw(st.sampled_from(["zero", "bit", "word"] if wide else ["zero", "bit"]))
    if kind == "zero":
        return 0
    if kind == "bit":
        return 1 << draw(st.integers(0, 31))
    return draw(st.integers(1, (1 << 32) - 1))


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from([(6, 0), (6, 2), (5, 3), (5, 0)]), st.sampled_from(["gfx9", "rdna"]),
       st.integers(1, 4))
def test_program_computes_every_table(data, bits, family, n_tables):
    """Random affine tables built into one program (sharing terms, some derived from earlier ones by
    an XOR; without warp bits the program of a one-wave kernel or not): each node evaluates to its table on
    all lanes and warps."""
    lane_bits, warp_bits = bits
    one_wave = warp_bits == 0 and data.draw(st.booleans())
    prog = LaneProgram(family, lane_bits, warp_bits, one_wave)
    tables = []
    for _ in range(n_tables):
        wide = data.draw(st.booleans())
        aff = AffineTable(data.draw(st.integers(0, (1 << 32) - 1)),
                          tuple(_column(data.draw, wide) for _ in range(lane_bits)),
                          tuple(_column(data.draw, wide) for _ in range(warp_bits)))
        tables.append((aff, prog.add(aff)))
    num_warps = 1 << warp_bits
    for aff, node in tables:
        assert np.array_equal(prog.evaluate(node, num_warps), aff.evaluate(num_warps) & 0xFFFFFFFF)
    valu, salu = prog.count()
    live = _live_ops(prog)
    wide = sum(1 for i in live if prog.nodes[i][0] == "mul" and prog.nodes[i][2] >= 1 << 24)
    top = ("sbit", LANE, lane_bits - 1)  # one wave, gfx9: a select of a non-inline constant takes a v_mov_b32
    movs = len({prog.nodes[i][2] for i in live if one_wave and prog.nodes[i][0] == "and"
                and prog.nodes[prog.nodes[i][1]] == top and not -16 <= prog.nodes[i][2] <= 64})
    assert valu + salu <= len(live) + (wide + movs if family == "gfx9" else 0)  # an op is one instruction
    assert (valu > 0) == any(any(aff.lane_cols) for aff, _ in tables)  # a lane-dependent table takes a VALU
    if any(any(aff.warp_cols) for aff, _ in tables):
        assert salu > 0  # the warp part is scalar
    if warp_bits == 0:  # nothing depends on the warp id alone: SALU only for gfx9's v_mul_lo_u32 constants
        wide = sum(1 for n in prog.nodes if n[0] == "mul" and n[2] >= 1 << 24)
        assert salu <= (wide if family == "gfx9" else 0)


@settings(max_examples=40, deadline=None)
@given(st.data(), st.sampled_from(["gfx9", "rdna"]), st.integers(2, 4))
def test_count_reads_the_reached_nodes_alone(data, family, n_tables):
    """LaneProgram.count depends on the nodes the tables reach, neither on the nodes that the trials of
    ``add`` leave reached by none nor on the ids: a program of the reached nodes alone, made in
    another order (the tables last to first, each node's later operand first), counts the same."""
    prog = LaneProgram(family, 6, 0)
    for _ in range(n_tables):
        wide = data.draw(st.booleans())
        prog.add(AffineTable(data.draw(st.integers(0, (1 << 32) - 1)),
                             tuple(_column(data.draw, wide) for _ in range(6)), ()))
    copy, new = LaneProgram(family, 6, 0), {LANE: LANE, WARP: WARP, TID: TID}

    def make(i: int) -> int:
        if i not in new:
            n = prog.nodes[i]
            ops = n[1:3] if n[0] in ("or", "xor") else () if n[0] == "const" else n[1:2]
            for a in sorted(ops, reverse=True):
                make(a)
            new[i] = copy.node(n[0], *(new[a] for a in ops), *n[1 + len(ops):])
        return new[i]

    for aff, i in reversed(list(prog.tables.items())):
        copy.tables[aff] = make(i)
    assert len(copy.nodes) == len(_live_ops(prog)) + 3 + sum(1 for i in new if prog.nodes[i][0] == "const")
    assert copy.count() == prog.count()


def _live_ops(prog: LaneProgram) -> set[int]:
    """The op nodes (not the ids, not constants) that the program's tables reach."""
    live, stack = set(), list(prog.tables.values())
    while stack:
        i = stack.pop()
        n = prog.nodes[i]
        if i in live or n[0] in ("in", "const"):
            continue
        live.add(i)
        stack.extend(n[1:3] if n[0] in ("or", "xor") else n[1:2])
    return live


def _count(family: str, *tables: AffineTable, warp_bits: int = 0) -> tuple[int, int]:
    prog = LaneProgram(family, 6, warp_bits)
    for t in tables:
        prog.add(t)
    return prog.count()


#: a gfx942 store address
STORE = AffineTable(0, (0x40, 0x120, 0x2, 0x4, 0x10, 0x8), ())

#: lane bit 0 with a two-bit column: on gfx9 a column term ``sbit(x, 0) & 0x2010`` (``v_bfe_i32``, ``v_and_b32``),
#: not a multiply term ``(x & 1) * 0x2010``, which LLVM makes a select (``v_cmp``, ``v_mov_b32`` of the
#: constant, ``v_cndmask_b32``: 4 VALU with the AND)
BIT0 = AffineTable(0, (0x2010, 0x40, 0x80, 0x8, 0, 0), ())


def test_counts_of_hand_checked_tables():
    """Instruction counts worked out by hand.  LLVM's gfx942 code has these counts for the masks, the store
    addresses and the multiply term (test_counts_of_compiled_tables); it compiles the swizzle in 4 (it masks
    once after the XOR, ``((x << 4) ^ (x << 1)) & 0x70``) and the warp table in 2 VALU (``v_lshl_or_b32`` and
    ``v_and_b32``)."""
    # x & 0x3c: one v_and_b32
    assert _count("gfx9", AffineTable(0, (0, 0, 4, 8, 16, 32), ())) == (1, 0)
    # ((x >> 1) & 31): one v_bfe_u32
    assert _count("gfx9", AffineTable(0, (0, 1, 2, 4, 8, 16), ())) == (1, 0)
    # a gfx942 store address: (x&1)<<6 | sbit(x,1)&0x120 | (x>>1)&6 | x&16 | (x>>2)&8: five terms of
    # 2, 2, 2, 1, 2 ops and two v_or3_b32
    store = STORE
    assert _count("gfx9", store) == (11, 0)
    # three more addresses, the first XOR 16, 32, 48: one v_xor_b32 each
    others = [AffineTable(c, store.lane_cols, ()) for c in (16, 32, 48)]
    assert _count("gfx9", store, *others) == (14, 0)
    # an XOR swizzle (x & 7) << 4 ^ (x >> 3 & 7) << 4 ... as two shift terms: 2 + 2 ops and a v_xor
    swz = AffineTable(0, (0x10, 0x20, 0x40, 0x10, 0x20, 0x40), ())
    assert _count("gfx9", swz) == (5, 0)
    # BIT0: sbit(x,0) & 0x2010 | (x & 6) << 5 | (x & 8): terms of 2, 2 and 1 ops, one v_or3_b32
    assert _count("gfx9", BIT0) == (6, 0)
    # the warp part is scalar (s_and + s_lshl), OR'ed into the lane part x & 0x3f: one v_and_or_b32
    assert _count("gfx9", AffineTable(0, (1, 2, 4, 8, 16, 32), (0x1000, 0x2000)), warp_bits=2) == (1, 2)


COMPILED = {"store": [STORE],
            "store and 3 more": [STORE] + [AffineTable(c, STORE.lane_cols, ()) for c in (16, 32, 48)],
            "multiply term": [AffineTable(0, (0x21, 0x42, 0x84, 0x108, 0, 0), ())],
            "masks": [AffineTable(0, (0, 0, 4, 8, 16, 32), ()), AffineTable(0, (0, 1, 2, 4, 8, 16), ())],
            "bit 0 column": [BIT0]}


@needs.mlir
@pytest.mark.parametrize("arch", ["gfx942", "gfx90a"])
@pytest.mark.parametrize("name", sorted(COMPILED))
def test_counts_of_compiled_tables(arch, name):
    """Tables of test_counts_of_hand_checked_tables alone in a kernel's setup region: LLVM's VALU are the
    program's count (no SALU); the interpreter computes each table.  Two waves: the kernel declares its threads
    (``known_block_size``), and in a kernel of one wave LLVM knows the lane id below 64 and merges terms the
    program keeps apart (bit 0 column: ``((l << 5) | l) & 0xc8``, 4 VALU and an SALU where the one-wave
    program counts 6 VALU; the folds it counts: test_counts_of_compiled_one_wave_tables)."""
    from interp_kernels import prologue_kernel, run_prologue, setup_ops

    tables = COMPILED[name]
    programs = []

    def build(lanes):
        programs.append(lanes.program)
        return [lanes.value_of(t.evaluate(1)[0], what=name)[0] for t in tables]

    text, n = prologue_kernel(arch, 2, build)
    ops = setup_ops(text, arch)
    assert (sum(op.startswith("v_") for op in ops), sum(op.startswith("s_") for op in ops)) == programs[0].count()
    out = run_prologue(text, n, arch, 2)
    for k, t in enumerate(tables):
        assert np.array_equal(out[:, k], np.tile(t.evaluate(1)[0], 2)), k


#: tables whose count differs in a one-wave kernel (lane_arith "One wave"): the whole lane id shifted (no AND), a
#: multiply term of every lane bit, and the top lane bit's column term (a select: v_cmp, v_cndmask_b32)
ONE_WAVE = {64: {"shifted": [AffineTable(0, (0x10, 0x20, 0x40, 0x80, 0x100, 0x200), ())],
                 "shifted and masks": [AffineTable(0, (0x10, 0x20, 0x40, 0x80, 0x100, 0x200), ()),
                                       AffineTable(0, (0, 0, 4, 8, 16, 32), ())],
                 "multiply term": [AffineTable(0, (0x21, 0x42, 0x84, 0x108, 0x210, 0x420), ())],
                 "top bit": [AffineTable(0, (1, 2, 4, 8, 0, 0x810), ())]},
            32: {"shifted": [AffineTable(0, (0x10, 0x20, 0x40, 0x80, 0x100), ())],
                 "multiply term": [AffineTable(0, (0x21, 0x42, 0x84, 0x108, 0x210), ())],
                 "top bit": [AffineTable(0, (1, 2, 4, 8, 0x810), ())]}}


def test_counts_of_one_wave_tables():
    """A one-wave program drops the AND of the whole lane id and makes the top lane bit's column term a select
    (gfx9: and the constant's ``v_mov_b32``), which no OR absorbs; the same tables with warps counted as before."""
    def count(family, lane_bits, table, one_wave):
        prog = LaneProgram(family, lane_bits, 0, one_wave)
        for t in ONE_WAVE[1 << lane_bits][table]:
            prog.add(t)
        return prog.count()

    assert count("gfx9", 6, "shifted", True) == (1, 0) and count("gfx9", 6, "shifted", False) == (2, 0)
    assert count("gfx9", 6, "multiply term", True) == (2, 0)  # l << 5 ^ l
    assert count("gfx9", 6, "top bit", True) == (4, 0)  # v_mov_b32, v_cmp, v_cndmask_b32, v_and_or_b32
    assert count("gfx9", 6, "top bit", False) == (3, 0)  # v_bfe_i32, v_and_b32, v_and_or_b32 (0x810 a literal)
    assert count("rdna", 5, "multiply term", True) == (1, 0) and count("rdna", 5, "multiply term", False) == (2, 0)


@needs.mlir
@pytest.mark.parametrize("arch,name", [(a, n) for a in ("gfx942", "gfx90a", "gfx1100") for n in
                                       ONE_WAVE[get_target(a).wave_size] if n != "top bit" or a != "gfx942"])
def test_counts_of_compiled_one_wave_tables(arch, name):
    """Tables alone in the setup region of a kernel of one wave: LLVM's VALU and SALU (not the RDNA
    ``s_delay_alu``, tables_valu's) are the one-wave program's count, and the interpreter computes each
    table.  (gfx942 puts an ``s_nop 1`` between the select's ``v_cmp`` and ``v_cndmask_b32`` where nothing
    else comes between them: the top bit is not tested there.)"""
    from interp_kernels import prologue_kernel, run_prologue, setup_ops

    tables = ONE_WAVE[get_target(arch).wave_size][name]
    programs = []

    def build(lanes):
        programs.append(lanes.program)
        return [lanes.value_of(t.evaluate(1)[0], what=name)[0] for t in tables]

    text, n = prologue_kernel(arch, 1, build)
    ops = [op for op in setup_ops(text, arch) if op != "s_delay_alu"]
    assert programs[0].one_wave
    assert (sum(op.startswith("v_") for op in ops), sum(op.startswith("s_") for op in ops)) == programs[0].count()
    out = run_prologue(text, n, arch, 1)
    for k, t in enumerate(tables):
        assert np.array_equal(out[:, k], t.evaluate(1)[0]), k


def test_difference_from_an_earlier_table():
    """A table that differs from a built one in one column costs that column's term and one XOR."""
    a = AffineTable(0, (0x40, 0x120, 0x2, 0x4, 0x10, 0x8), ())
    b = AffineTable(0, (0x40, 0x120, 0x2, 0x4, 0x10, 0x8 ^ 0x400), ())
    alone = _count("gfx9", a)[0]
    assert _count("gfx9", a, b)[0] == alone + 3  # (x & 32) << 5 and a v_xor_b32


def test_a_table_near_an_earlier_one_is_built_from_it():
    """A table whose columns differ from a built one's in fewer nonzero columns than it has is built as that
    table XOR the difference's terms, when that is fewer instructions than its own terms.  By hand, gfx9:
    ``a`` (lane columns 0x401, 0, 0x801, 0x80, 0x28, 0) is ``x & 1``, ``x & 8``, ``sbit(x, 2) & 0x801`` and
    ``sbit(x, 4) & 0x28`` (``v_and_b32``, ``v_and_b32``, ``v_bfe_i32`` + ``v_and_b32`` twice: 6 VALU), OR'ed with
    ``(x & 8) << 4`` and ``(x & 1) << 10`` (a ``v_or_b32`` and two ``v_lshl_or_b32``: 3) and XOR'ed with
    ``x & 1`` (bit 0 is in columns 0 and 2: 1), 10 VALU.  ``b`` differs in column 3 alone (0x180 = 0x80 ^ 0x100):
    ``a ^ ((x & 8) << 5)``, of ``a``'s ``x & 8``, a ``v_lshlrev_b32`` and a ``v_xor_b32``: 12 in all.  Built from
    its own terms beside ``a`` (no earlier table's difference) it takes 5 more, 15."""
    a = AffineTable(0, (0x401, 0, 0x801, 0x80, 0x28, 0), ())
    b = AffineTable(0, (0x401, 0, 0x801, 0x180, 0x28, 0), ())
    assert _count("gfx9", a) == _count("gfx9", b) == (10, 0)
    assert _count("gfx9", a, b) == (12, 0)


def test_rdna_fuses_literal_masks():
    """RDNA's VOP3 takes a literal: an AND with any mask fuses into v_and_or_b32 there, on gfx9 only an
    inline one."""
    t = AffineTable(0, (0x100, 0x200, 0, 0, 0, 0), ())  # one shift term, a lone OR partner below
    u = AffineTable(0, (0x100, 0x200, 0x4000, 0, 0, 0), ())
    assert _count("gfx9", u)[0] == _count("gfx9", t)[0] + 2
    assert program_family("gfx942") == "gfx9" and program_family("gfx1100") == "rdna"
    assert program_family("gfx1250") == "rdna"


def test_family_is_checked():
    with pytest.raises(ValueError):
        LaneProgram("gfx8")


def test_tables_valu_counts_the_program_and_one_per_table():
    """The planner's count (tables_valu) is the program's, at least one per table, a uniform table one
    v_mov_b32, a table no affine map gives TABLE_LOAD_OPS."""
    from linlayout.synth.lane_arith import TABLE_LOAD_OPS, tables_valu

    store = (0, (0x40, 0x120, 0x2, 0x4, 0x10, 0x8))
    assert tables_valu("gfx9", 6, (store,)) == 11
    assert tables_valu("gfx9", 6, (store, (16, store[1]))) == 12  # a v_xor_b32
    term = (0, (0, 0, 0, 0, 0x10, 0))  # x & 16: a node of the store's program already, still counted one
    assert tables_valu("gfx9", 6, (store, term)) == 12
    assert tables_valu("gfx9", 6, (store, (5, (0,) * 6), None)) == 11 + 1 + TABLE_LOAD_OPS


def test_estimate_of_a_plan_counts_its_address_program():
    """valu_lds_addr of a one-warp LDS plan is the program count of its new address registers (each its
    class's address less its constant bits no column touches), and the plan's ds_bpermute tables are
    counted alike."""
    from linlayout.synth.cost import lds_address_valu
    from linlayout.synth.steps import LdsLoad, LdsStore

    lane = np.arange(64)
    a = ((lane & 7) << 4) ^ ((lane >> 3) << 4 & 0x70) ^ ((lane >> 3) << 7)  # a swizzled store
    b = lane << 2  # the load
    steps = [LdsStore(addr=a, width_bytes=4, src=[0]), LdsStore(addr=a + 0x1000, width_bytes=4, src=[1]),
             LdsLoad(addr=b, width_bytes=4, dst=[2])]
    prog = LaneProgram("gfx9", 6, 0)
    for t in (a, b):
        c, cols = lane_columns(t[None, :])[0]
        prog.add(AffineTable(c, cols, ()))
    assert lds_address_valu(steps, "gfx942") == sum(prog.count())  # the second store: offset 0x1000


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from(["gfx9", "rdna"]))
def test_program_of_shared_shift_sets(data, family):
    """Columns ``pattern << b`` on several bits (one set of shifts: a multiply term where its copies are
    disjoint) among single-bit ones: each table equals its map."""
    prog = LaneProgram(family, 6, 1)
    pattern = data.draw(st.integers(1, (1 << 12) - 1))
    tables = []
    for _ in range(data.draw(st.integers(1, 3))):
        lane = tuple(data.draw(st.sampled_from([0, pattern << b, 1 << data.draw(st.integers(0, 20))]))
                     for b in range(6))
        aff = AffineTable(data.draw(st.integers(0, 255)), lane, (data.draw(st.sampled_from([0, 0x1000, pattern])),))
        tables.append((aff, prog.add(aff)))
    for aff, node in tables:
        assert np.array_equal(prog.evaluate(node, 2), aff.evaluate(2) & 0xFFFFFFFF)


def test_multiply_terms():
    """Bits of one set of shifts are one AND and one v_mul_u32_u24: (x & 15) * 0x21 is 2 ops (as shift
    terms 4: two ANDs and shifts, and an OR); where the shifted copies overlap, no multiply term."""
    assert _count("gfx9", AffineTable(0, (0x21, 0x42, 0x84, 0x108, 0, 0), ())) == (2, 0)
    # x & 3 at shifts 0 and 1 overlap: (x & 3) * 3 would carry; the shift terms (x & 3) ^ ((x & 3) << 1),
    # one AND for both, a shift and a v_xor_b32
    assert _count("gfx9", AffineTable(0, (0x3, 0x6, 0, 0, 0, 0), ())) == (3, 0)
    # a lone column without negative shifts: (x & 2) * 0x2020000, a v_mul_lo_u32 (RDNA); on gfx9 that
    # VOP3 takes its constant from an SGPR (one s_mov_b32 more): as cheap as the two shifts and a
    # v_lshl_or_b32, built first
    lone = AffineTable(0, (0, 0x4040000, 0, 0, 0, 0), ())
    assert _count("rdna", lone) == (2, 0) and _count("gfx9", lone) == (3, 0)
    # the same column of lane bit 0 is on gfx9 a column term, sbit(x, 0) & 0x2020000 (v_bfe_i32,
    # v_and_b32): LLVM makes a select of (x & 1) * K (BIT0)
    lone0 = AffineTable(0, (0x2020000, 0, 0, 0, 0, 0), ())
    assert _count("rdna", lone0) == (2, 0) and _count("gfx9", lone0) == (2, 0)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, (1 << 16) - 1), min_size=6, max_size=6), st.integers(0, (1 << 16) - 1),
       st.integers(0, 63), st.integers(1, 1 << 15))
def test_lane_columns_is_fit_affine_on_lanes(cols, const, lane, bump):
    """lane_columns gives a row's (c, L) exactly where fit_affine fits the row (an affine row, and the
    same row with one lane's value changed, which no affine map gives)."""
    row = AffineTable(const, tuple(cols), ()).evaluate(1)[0]
    broken = row.copy()
    broken[lane] ^= bump
    got = lane_columns(np.stack([row, broken]))
    assert got[0] == (const, tuple(cols))
    assert (got[1] is None) == (fit_affine(broken[None, :]) is None) and got[1] is None


def _amd_corpus_case(name: str, arch: str, dtype: str) -> dict:
    from repo_data import family_corpus

    return next(c for c in family_corpus("amd")["cases"] if (c["name"], c["arch"], c["dtype"]) == (name, arch, dtype))


def test_ordered_layouts_keep_lane_bits_in_runs():
    """gfx942 i8 ``blocked[1x4,t16x4,o10]->mfma32``: linlayout.synth.swizzle's layout puts the dst's 8-byte load
    vector (dim0 bits 0, 1, 3) low and swizzles a row, which scatters the src's lane bits (16 address VALU, 7
    shift terms over both sides); ``ordered_design`` keeps its two sub-dword bits, then the unit vectors in
    the tensor's order (the src's lanes 2-5 at offset bits 0-3: one ``v_bfe_u32``; 7 VALU, 4 terms), the
    src's (registers dim1 0-1, lanes dim1 2-3, then dim0 2-3: 10 VALU, 5 terms) or the src lanes' first.
    ``designs`` offers the ordered layouts of the fewest terms."""
    from linlayout import LinearLayout
    from linlayout.lowering.emit.conversion_kernel import source_tuples
    from linlayout.synth import lds_path
    from linlayout.synth.context import ConversionContext
    from linlayout.synth.convert import lds_plan

    c = _amd_corpus_case("blocked[1x4,t16x4,o10]->mfma32", "gfx942", "i8")
    src, dst = LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"])
    ctx = ConversionContext.create(src, dst, "gfx942", 8, src_tuple_dwords=source_tuples(src, 8),
                                   dst_tuple_dwords=source_tuples(dst, 8))
    swizzled = lds_path.shared_layout(ctx)
    assert swizzled.shared_cols == [1, 2, 8, 4, 32, 64, 128, 20]  # dim0 bits are 1..8, dim1 bits 16..128
    assert lds_path._ordered_prefixes(ctx, swizzled) == [[1, 2], [1, 2, 8]]
    tensor, by_src = (lds_path.ordered_design(ctx, [1, 2], [], order) for order in ("tensor", "src"))
    assert tensor.shared_cols == [1, 2, 4, 8, 16, 32, 64, 128] and tensor.lds_bytes == 256
    assert by_src.shared_cols == [1, 2, 16, 32, 64, 128, 4, 8]
    assert lds_path.ordered_design(ctx, [1, 2], [], "src lanes").shared_cols == [1, 2, 64, 128, 4, 8, 16, 32]
    assert [lds_path.lane_terms(ctx, d) for d in (swizzled, tensor, by_src)] == [7, 4, 5]
    valu = [min(lds_plan(ctx, a).overhead["valu_lds_addr"] for a in lds_path.lds_accesses(ctx, d))
            for d in (swizzled, tensor, by_src)]
    assert valu == [16, 7, 10]
    assert lds_path.ordered_design(ctx, [1, 2], [], "dst lanes").shared_cols == [1, 2, 16, 32, 64, 128, 4, 8]
    with pytest.raises(ValueError):
        lds_path.ordered_design(ctx, [1, 2], [], "lanes")


@needs.mlir
@pytest.mark.parametrize("name, dtype, setup, compiled", [("blocked[8x1,t2x32,o01]->mfma16T", "fp8", 10, 10),
                                                         # (fp16 blocked[2x2,t8x8,o10]->dotB16(kw4), 8, until session
                                                         # 22 gave it a swizzled ordered layout:
                                                         # lds_path.PER_PREFIX_FAMILIES)
                                                         ("mfma16T->blocked[2x1,t8x8,o01]", "bf16", 16, 15)])
def test_ordered_layout_setup_compiles_to_the_estimate(name, dtype, setup, compiled, tmp_path, monkeypatch):
    """Two gfx942 benchmark kernels that plan through an ordered layout (verified on the emulator): the compiled
    setup region holds ``compiled`` instructions against the plan's setup estimate ``setup`` (the address program and
    the v_perm selectors' ``s_mov_b32``): equal on the fp8 one; the bf16 one, since session 22 (rank28's conflict
    weight) a conflict-free swizzled ordered layout, compiles one under its 16."""
    from linlayout import LinearLayout
    from linlayout.cli.bench import dtype_bits, kernel_plan
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.isa import region_lines

    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    c = _amd_corpus_case(name, "gfx942", dtype)
    plan = kernel_plan(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), "gfx942",
                       dtype_bits(dtype))
    assert plan.verified and "order after a" in plan.notes[-1]
    assert plan.overhead["valu_lds_addr"] + plan.overhead.get("salu_perm_selector", 0) == setup
    isa = lower_conversion(plan, binary=False).compiled.isa
    ops = [ln.split()[0] for ln in (x.strip() for x in region_lines(isa, "setup")) if ln and not ln.startswith(";")]
    assert len(ops) == compiled


def test_one_thread_id_serves_an_exact_table_and_one_read_modulo_the_wave():
    """The thread id ``TID`` is one input of a program for both of its uses: an LDS address that
    ``thread_id_form`` takes from it, ``(tid >> 2) & 56``, exact in every bit on 8 warps, and a ``ds_bpermute``
    address read in its low byte alone whose ``(l & 3) << 6`` term is ``tid << 6``, equal to its table in
    those bits and not above; ``tables_valu`` counts the same program from its ``LaneTable`` entries (4).  A
    plain entry of three fields is a LayoutError, a table both from the thread id and read in some bits a ValueError."""
    from linlayout.synth.lane_arith import LaneTable, tables_valu, thread_id_form

    lds = AffineTable(0, (0, 0, 0, 0, 0, 8), (16, 32, 0))
    bperm = AffineTable(0, (0x40, 0x80, 4, 8, 16, 32), ())
    assert thread_id_form("gfx9", 6, lds)
    prog = LaneProgram("gfx9", 6, 3)
    a, b = prog.add(lds, thread_id=True), prog.add(bperm, care=0xFF)
    assert prog.nodes[a] == ("and", prog.node("shr", TID, 2), 56) and ("shl", TID, 6) in prog.nodes
    assert np.array_equal(prog.evaluate(a, 8), lds.evaluate(8))
    got, table = prog.evaluate(b, 8), bperm.evaluate(8)
    assert np.array_equal(got & 0xFF, table & 0xFF) and (got != table).any()
    assert prog.count() == (4, 0)
    entries = (LaneTable(0, lds.lane_cols, warp_cols=lds.warp_cols), LaneTable(0, bperm.lane_cols, care=0xFF))
    assert tables_valu("gfx9", 6, entries) == 4
    with pytest.raises(LayoutError, match="a tables_valu entry is a LaneTable or"):
        tables_valu("gfx9", 6, ((0, bperm.lane_cols, 0xFF),))
    with pytest.raises(ValueError):
        LaneProgram("gfx9", 6, 3).add(lds, thread_id=True, care=0xFF)


def test_a_multiply_read_modulo_the_wave_takes_the_bits_its_product_gives():
    """A ``ds_bpermute`` address read in its low byte (``care`` 0xFF), lane ``l & 15`` times 4 plus ``(l & 3) << 6``
    (gfx950 bf16 ``slice0(mfma16T)->slice0(blocked[1x4,t4x16,o10])``): its multiply term ``(l & 3) * 0x44`` takes
    bits 2 and 3, whose products' low copies are their columns and whose high ones (bits 8, 9) lie above the byte,
    ``(l & 15) * 0x44``: 2 VALU where ``(l & 15) << 2 | tid << 6`` were 3; equal to the table in the byte.  Read
    in every bit it keeps its shift term; a bit whose product meets another's copies (``* 5``: bit 2's low copy
    is bit 0's high one, a carry) is not taken."""
    cols = (0x44, 0x88, 16, 32, 0, 0)
    prog = LaneProgram("gfx9", 6, 0)
    b = prog.add(AffineTable(0, cols, ()), care=0xFF)
    assert prog.nodes[b] == ("mul", prog.node("and", LANE, 15), 0x44) and prog.count() == (2, 0)
    got, table = prog.evaluate(b, 1), AffineTable(0, cols, ()).evaluate(1)
    assert np.array_equal(got & 0xFF, table & 0xFF) and (got != table).any()
    exact = LaneProgram("gfx9", 6, 0)
    exact.add(AffineTable(0, cols, ()))
    assert sum(exact.count()) > 2
    # [I] gfx9 only, as the thread-id shift term (module docstring): on RDNA the term keeps its mask, l & 3
    rdna = LaneProgram("rdna", 5, 0)
    r = rdna.add(AffineTable(0, cols[:5], ()), care=0xFF)
    assert [rdna.nodes[n[1]] for n in rdna.nodes if n and n[0] == "mul"] == [("and", LANE, 3)]
    assert rdna.count() == (4, 0) and np.array_equal(rdna.evaluate(r, 1), AffineTable(0, cols[:5], ()).evaluate(1))
    from linlayout.synth.lane_arith import _widened
    assert _widened(3, 0x44, cols, 0xFF, 3) == (15, 12)
    assert _widened(3, 0x41, (0x41, 0x82, 4, 8, 0, 0), 0xFF, 3) == (15, 12)
    assert _widened(1, 0x5, (0x5, 0, 0x14, 0, 0, 0), 0xFF, 1) == (1, 0)  # bit 2's 4 and 16: bit 0's 4, a carry


def test_tables_read_modulo_the_wave_equal_their_tables_in_those_bits():
    """On 400 seeded random lane tables (columns of 1 to 3 bits, many of them repeated shifts, so that multiply
    terms and their widening occur): the program read in the low byte equals the table there on every lane,
    and counts no more than the exact program."""
    rng = np.random.default_rng(23)
    widened = 0
    for _ in range(400):
        cols = tuple(int(sum(1 << int(o) for o in rng.choice(10, size=rng.integers(1, 4), replace=False)))
                     if rng.random() < 0.8 else 0 for _ in range(6))
        aff = AffineTable(0, cols, ())
        loose, exact = LaneProgram("gfx9", 6, 0), LaneProgram("gfx9", 6, 0)
        node = loose.add(aff, care=0xFF)
        exact.add(aff)
        assert np.array_equal(loose.evaluate(node, 1) & 0xFF, aff.evaluate(1) & 0xFF), cols
        assert sum(loose.count()) <= sum(exact.count()), cols
        widened += any(n[0] == "mul" and loose.nodes[n[1]][0] == "and" and loose.nodes[n[1]][2] & ~sum(
            1 << b for b, c in enumerate(cols) if c & (c - 1)) for n in loose.nodes[3:])
    assert widened >= 5, widened


@needs.mlir
def test_rdna_bit0_column_compiles_to_the_count():
    """RDNA too takes lane bit 0's two-bit column as a column term (``sbit(x, 0) & K``: ``v_bfe_i32`` and an AND,
    the count's 2) where its multiply term's AND has no other use: LLVM makes that multiply a select, 3 VALU
    (session 22: the gfx1200 fp16 ``blocked[2x1,t32x1,o01]->dotAwmma2.16x16(kw8)`` load address).  Compiled for
    gfx1200, the setup's VALU are the program's count (the ``s_delay_alu`` aside); the interpreter computes it."""
    from interp_kernels import prologue_kernel, run_prologue, setup_ops

    # the load address: lane bit 0 at bytes 0x20 and 0x200, bits 1-3 at 0x10-0x40, bit 4 at 0x40 and 0x400
    table = AffineTable(0, (0x220, 0x10, 0x20, 0x40, 0x440), ())
    programs = []

    def build(lanes):
        programs.append(lanes.program)
        return [lanes.value_of(table.evaluate(1), what="bit 0 column")[0]]

    text, n = prologue_kernel("gfx1200", 1, build)
    ops = setup_ops(text, "gfx1200")
    assert "v_bfe_i32" in ops and not any(op.startswith("v_cndmask") for op in ops)
    assert (sum(op.startswith("v_") for op in ops), 0) == programs[0].count() == (7, 0)
    assert np.array_equal(run_prologue(text, n, "gfx1200", 1)[:, 0], table.evaluate(1)[0])


_TERMS_IN_ORDER = """
from linlayout.synth.lane_arith import LANE, LaneProgram
cols = [0x6, 0, 0, 0x300, 0x3000]  # three multi-bit columns: units (LANE, (0,)), (LANE, (3,)), (LANE, (4,))
prog = LaneProgram("rdna", 5, 0)
for general in prog._generals(cols, ()):
    print([prog.nodes[n] for n, _ in prog._terms(LANE, cols, general)])
"""

_CASE_MLIR = """
import hashlib
from linlayout import LinearLayout
from linlayout.cli.bench import CORPORA, kernel_plan
from linlayout.dtypes import dtype_bits
from linlayout.lowering.emit.conversion_kernel import build_conversion_kernel
import json
key = ("wmma1.16x16T->blocked[1x4,t16x2,o10]", "gfx1100", "bf16")
(c,) = [c for c in json.loads(CORPORA["wave32"].read_text())["cases"] if (c["name"], c["arch"], c["dtype"]) == key]
src, dst = LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"])
plan = kernel_plan(src, dst, c["arch"], dtype_bits(c["dtype"]))
print(hashlib.sha256(build_conversion_kernel(plan).text.encode()).hexdigest())
"""


def _under_hash_seeds(code: str, seeds) -> set[str]:
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[1])
    outs = set()
    for seed in seeds:
        env = dict(os.environ, PYTHONHASHSEED=str(seed), PYTHONPATH=root)
        outs.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                check=True).stdout)
    return outs


def test_the_terms_and_the_emitted_mlir_do_not_follow_the_string_hash():
    # a set of units holding the string "mul" (lane bit 0's multiply term) iterated in its hash order made the
    # terms' order, so the arith.ori order of the MLIR and LLVM's schedule, change with PYTHONHASHSEED
    (terms,) = _under_hash_seeds(_TERMS_IN_ORDER, range(8))
    assert terms.count("\n") == 12  # 8 sets of 3 units, 4 of them with lane bit 0 once more as a multiply term
    (mlir,) = _under_hash_seeds(_CASE_MLIR, (3, 5))
    assert len(mlir.strip()) == 64


def test_the_unit_sets_are_sorted_tuples():
    # _terms builds a set's units in the order _generals gives them (no sorting of its own): every subset of the
    # three units (x, bits) once, in binary order, each sorted, and each holding lane bit 0 once more with its
    # multiply term (LANE, (0,), "mul") in place of its column term; no multi-bit column: the empty set alone
    prog = LaneProgram("rdna", 5, 0)
    units = [(LANE, (0,)), (LANE, (3,)), (LANE, (4,))]
    want = []
    for pick in range(8):
        chosen = [u for k, u in enumerate(units) if (pick >> k) & 1]
        want.append(tuple(chosen))
        if (LANE, (0,)) in chosen:
            want.append(((LANE, (0,), "mul"),) + tuple(chosen[1:]))
    got = list(prog._generals((0x6, 0, 0, 0x300, 0x3000), ()))
    assert got == want and all(list(g) == sorted(g) for g in got) and len(got) == 12
    assert list(prog._generals((1, 2, 4, 8, 16), ())) == [()]
