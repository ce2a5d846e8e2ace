"""The op program of per-lane GF(2)-affine tables (linlayout.synth.lane_arith): every table it builds
equals its map on every lane and warp, and its instruction count on hand-checked tables."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linlayout.synth.lane_arith import AffineTable, LaneProgram, lane_columns, program_family


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
    an XOR): each node evaluates to its table on all lanes and warps."""
    lane_bits, warp_bits = bits
    prog = LaneProgram(family, lane_bits, warp_bits)
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
    assert valu >= 0 and salu >= 0
    if warp_bits == 0:  # nothing depends on the warp id alone: SALU only for gfx9's v_mul_lo_u32 constants
        wide = sum(1 for n in prog.nodes if n[0] == "mul" and n[2] >= 1 << 24)
        assert salu <= (wide if family == "gfx9" else 0)


def _count(family: str, *tables: AffineTable, warp_bits: int = 0) -> tuple[int, int]:
    prog = LaneProgram(family, 6, warp_bits)
    for t in tables:
        prog.add(t)
    return prog.count()


def test_counts_of_hand_checked_tables():
    """Instruction counts worked out by hand (and matching LLVM's gfx942 code for these tables)."""
    # x & 0x3c: one v_and_b32
    assert _count("gfx9", AffineTable(0, (0, 0, 4, 8, 16, 32), ())) == (1, 0)
    # ((x >> 1) & 31): one v_bfe_u32
    assert _count("gfx9", AffineTable(0, (0, 1, 2, 4, 8, 16), ())) == (1, 0)
    # a gfx942 store address: (x&1)<<6 | sbit(x,1)&0x120 | (x>>1)&6 | x&16 | (x>>2)&8: five terms of
    # 2, 2, 2, 1, 2 ops and two v_or3_b32
    store = AffineTable(0, (0x40, 0x120, 0x2, 0x4, 0x10, 0x8), ())
    assert _count("gfx9", store) == (11, 0)
    # three more addresses, the first XOR 16, 32, 48: one v_xor_b32 each
    others = [AffineTable(c, store.lane_cols, ()) for c in (16, 32, 48)]
    assert _count("gfx9", store, *others) == (14, 0)
    # an XOR swizzle (x & 7) << 4 ^ (x >> 3 & 7) << 4 ... as two shift terms: 2 + 2 ops and a v_xor
    swz = AffineTable(0, (0x10, 0x20, 0x40, 0x10, 0x20, 0x40), ())
    assert _count("gfx9", swz) == (5, 0)
    # the warp part is scalar (s_and + s_lshl), OR'ed into the lane part x & 0x3f: one v_and_or_b32
    assert _count("gfx9", AffineTable(0, (1, 2, 4, 8, 16, 32), (0x1000, 0x2000)), warp_bits=2) == (1, 2)


def test_difference_from_an_earlier_table():
    """A table that differs from a built one in one column costs that column's term and one XOR."""
    a = AffineTable(0, (0x40, 0x120, 0x2, 0x4, 0x10, 0x8), ())
    b = AffineTable(0, (0x40, 0x120, 0x2, 0x4, 0x10, 0x8 ^ 0x400), ())
    alone = _count("gfx9", a)[0]
    assert _count("gfx9", a, b)[0] == alone + 3  # (x & 32) << 5 and a v_xor_b32


def test_rdna_fuses_literal_masks():
    """RDNA's VOP3 takes a literal: an AND with any mask fuses into v_and_or_b32 there, on gfx9 only an
    inline one."""
    t = AffineTable(0, (0x100, 0x200, 0, 0, 0, 0), ())  # one shift term, a lone OR partner below
    u = AffineTable(0, (0x100, 0x200, 0x4000, 0, 0, 0), ())
    assert _count("gfx9", u)[0] == _count("gfx9", t)[0] + 2
    assert program_family("gfx942") == "gfx9" and program_family("gfx1100") == "rdna"
    assert program_family("gfx1250") == "rdna"


def test_lane_columns():
    lane = np.arange(64)
    row = ((lane & 7) << 4) ^ (lane >> 3) ^ 0x100
    assert lane_columns(row) == (0x100, (0x10, 0x20, 0x40, 1, 2, 4))
    assert lane_columns((lane + 1) % 64) is None
    assert lane_columns(np.full(64, -1)) is None


def test_family_is_checked():
    with pytest.raises(ValueError):
        LaneProgram("gfx8")


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
    # a lone column without negative shifts: (x & 1) * 0x2020000, a v_mul_lo_u32 (RDNA); on gfx9 that
    # VOP3 takes its constant from an SGPR (one s_mov_b32 more): as cheap as the two shifts and a
    # v_lshl_or_b32, built first
    lone = AffineTable(0, (0x2020000, 0, 0, 0, 0, 0), ())
    assert _count("rdna", lone) == (2, 0) and _count("gfx9", lone) == (3, 0)
