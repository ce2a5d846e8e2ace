"""What the target changes in the op program of per-lane affine tables (linlayout.synth.lane_arith):
gfx9's VOP3 takes no literal constant, and the program family a target name gives."""

from __future__ import annotations

import pytest

from linlayout import LayoutError
from linlayout.synth.lane_arith import AffineTable, LaneProgram, program_family


def _count(family: str, *tables: AffineTable, lane_bits: int = 6) -> tuple[int, int]:
    prog = LaneProgram(family, lane_bits, 0)
    for t in tables:
        prog.add(t)
    return prog.count()


def test_an_or_with_a_literal_constant_needs_it_in_a_register_on_gfx9():
    """Counts worked out by hand and matching LLVM's gfx942 / gfx1100 code of a LaneValues kernel storing
    these tables (the lane id ``x``):

    * ``(x & 7) | 0x1000``: gfx942 ``v_mov_b32 v1, 0x1000`` and ``v_and_or_b32 v1, v0, 7, v1`` (2 VALU);
      gfx1100 ``v_and_or_b32 v1, v0, 7, 0x1000`` (1: RDNA's VOP3 takes one literal);
    * ``(x & 7) | 64``: 64 is an inline constant, one ``v_and_or_b32`` on gfx942 too;
    * ``(x & 7) | 0x1000`` and ``(x & 56) | 0x1000``: one ``v_mov_b32`` for both ``v_and_or_b32`` (3);
    * ``((x & 63) << 2) | 0x1000``: an AND, and ``v_lshl_or_b32`` with the ``v_mov_b32``, or (LLVM)
      a shift, ``v_and_b32`` and ``v_or_b32_e32`` with the literal (3)."""
    low = AffineTable(0x1000, (1, 2, 4, 0, 0, 0), ())
    assert _count("gfx9", low) == (2, 0)
    assert _count("rdna", AffineTable(0x1000, (1, 2, 4, 0, 0), ()), lane_bits=5) == (1, 0)
    assert _count("gfx9", AffineTable(64, (1, 2, 4, 0, 0, 0), ())) == (1, 0)
    assert _count("gfx9", low, AffineTable(0x1000, (0, 0, 0, 8, 16, 32), ())) == (3, 0)
    assert _count("gfx9", AffineTable(0x1000, (4, 8, 16, 32, 64, 128), ())) == (3, 0)
    # -16 (0xfffffff0 as a 32-bit word) is inline: no v_mov_b32 (bits 4..31 set, x below 16 leaves them)
    assert _count("gfx9", AffineTable(0xFFFFFFF0, (1, 2, 4, 0, 0, 0), ())) == (1, 0)


def test_the_program_family_is_the_targets():
    """gfx9 for the GFX IP 9 (CDNA) targets, also by alias; rdna for GFX IP 11 and 12; no family (a
    LayoutError) for an NVIDIA target, a typo or no name, which once read as gfx9."""
    assert [program_family(a) for a in ("gfx90a", "gfx942", "gfx950", "mi300")] == ["gfx9"] * 4
    assert [program_family(a) for a in ("gfx1100", "gfx1200", "gfx1250")] == ["rdna"] * 3
    for bad in ("sm_90", "gfx9420", "gfx1", None):
        with pytest.raises(LayoutError):
            program_family(bad)
