"""Whole-tile LDS accesses (linlayout.synth.lds_access): instruction choice and cycles, against the oracle."""

from __future__ import annotations

import pytest

from banks_oracle import tile_cycles
from linlayout import LayoutError, LinearLayout
from linlayout.encodings import Mfma, blocked, mfma_dot_operand, padded_shared, swizzled_shared
from linlayout.synth.lds_access import largest_vector, tile_access_report

A_942 = mfma_dot_operand(Mfma(3, (32, 32, 8), (2, 2)), 0, 4, (64, 64))
A_950 = mfma_dot_operand(Mfma(4, (16, 16, 32), (2, 2)), 0, 8, (64, 64))


def _check_against_oracle(shared, reg, bits, arch, rep, warp=0):
    c = rep.choice
    assert c.cycles == tile_cycles(shared, reg, bits, arch, c.op, c.register_bits, warp)


@pytest.mark.parametrize("shared,op,per_instr", [
    (swizzled_shared(1, 1, 1, (1, 0), (64, 64)), "ds_read_b64", 64),  # unswizzled: 16 lanes in one bank
    (swizzled_shared(4, 1, 16, (1, 0), (64, 64)), "ds_read_b64", 4),  # Triton's AMD operand swizzle
    (swizzled_shared(8, 1, 8, (1, 0), (64, 64)), "ds_read_b64", 8),
])
def test_mfma_operand_a_from_swizzled_tile(shared, op, per_instr):
    rep = tile_access_report(shared, A_942, 16, "gfx942", "read")
    c = rep.choice
    assert (c.op, c.vector, c.count) == (op, 4, 8)
    assert c.cycles == [per_instr] * 8 and rep.ideal_cycles == 32
    assert rep.conflict_free == (per_instr == 4)
    _check_against_oracle(shared, A_942, 16, "gfx942", rep)
    # b128 is illegal: K 0-3 and 8-11 of a lane are not adjacent in LDS
    assert "ds_read_b128" in rep.rejected
    assert [a.op for a in rep.alternatives] == ["ds_read_b64", "ds_read_b32", "ds_read_u16"]


def test_every_warp_costs_the_same():
    shared = swizzled_shared(8, 1, 8, (1, 0), (64, 64))
    rep = tile_access_report(shared, A_942, 16, "gfx942", "read")
    for w in range(4):
        _check_against_oracle(shared, A_942, 16, "gfx942", rep, warp=w)


def test_padded_tile_is_enumerated():
    shared = padded_shared([(64, 4)], (64, 64), order=(1, 0))  # row stride 68 fp16 = 34 dwords
    rep = tile_access_report(shared, A_942, 16, "gfx942", "read")
    assert rep.choice.op == "ds_read_b64" and rep.choice.access is None
    assert rep.conflict_free
    _check_against_oracle(shared, A_942, 16, "gfx942", rep)
    worse = padded_shared([(64, 2)], (64, 64), order=(1, 0))  # 33 dwords: b64 loses alignment
    rep2 = tile_access_report(worse, A_942, 16, "gfx942", "read")
    assert rep2.choice.op == "ds_read_b32"
    _check_against_oracle(worse, A_942, 16, "gfx942", rep2)


def test_blocked_write_uses_b128():
    writer = blocked([1, 8], [8, 8], [4, 1], [1, 0], (64, 64))
    shared = swizzled_shared(8, 1, 8, (1, 0), (64, 64))
    rep = tile_access_report(shared, writer, 16, "gfx942", "write")
    assert (rep.choice.op, rep.choice.count) == ("ds_write_b128", 2)
    _check_against_oracle(shared, writer, 16, "gfx942", rep)


def test_transpose_read_on_gfx950():
    # M-contiguous LDS tile read as a K-contiguous MFMA operand: ds_read_b64_tr_b16 is legal
    shared = swizzled_shared(1, 1, 1, (0, 1), (64, 64))
    rep = tile_access_report(shared, A_950, 16, "gfx950", "read")
    assert rep.choice.op == "ds_read_b64_tr_b16" and rep.choice.vector == 4
    assert rep.choice.count == 8  # 32 elements per lane (2 distinct warps), 4 per instruction
    # the oracle emulates the transpose lane permutation of docs/amd_facts.md 1.6 independently
    _check_against_oracle(shared, A_950, 16, "gfx950", rep)
    assert "ds_read_b64_tr_b16" not in tile_access_report(shared, A_942, 16, "gfx942").rejected


def test_transpose_model_matches_the_interpreter():
    """The source-lane access derived for ds_read_b64_tr_b16 delivers, through the wave
    interpreter's transpose-load lane model, exactly the register layout's elements."""
    ops_lds_tr = pytest.importorskip("linlayout.lowering.interp.ops_lds_tr")
    shared = swizzled_shared(1, 1, 1, (0, 1), (64, 64))
    rep = tile_access_report(shared, A_950, 16, "gfx950", "read")
    acc, regs = rep.choice.access, rep.choice.register_bits
    src_lane, src_elem = ops_lds_tr.TR_OPS["rocdl.ds.read.tr16.b64"].sources()  # lanes 0-15: group 0's
    outs = shared.out_dim_names
    inv = {tuple(shared.apply({"offset": o})[d] for d in outs): o for o in range(shared.in_dim_size("offset"))}
    for group in range(4):
        for i in range(16):
            for j in range(4):
                lane, elem = 16 * group + int(src_lane[i, j]), int(src_elem[i, j])
                addr = acc.apply({"lane": lane, "register": elem})["offset"]
                reg = sum(((j >> k) & 1) << b for k, b in enumerate(regs))
                want = A_950.apply({"register": reg, "lane": 16 * group + i, "warp": 0})
                assert inv[tuple(want[d] for d in outs)] == addr


def test_transpose_needs_lane_contiguity():
    shared = swizzled_shared(8, 1, 8, (1, 0), (64, 64))  # K-contiguous: lanes run along M
    rep = tile_access_report(shared, A_950, 16, "gfx950", "read")
    assert rep.choice.op == "ds_read_b128"
    assert "lane bit 0" in rep.rejected["ds_read_b64_tr_b16"]


def test_broadcast_registers_are_read_once():
    dup = LinearLayout({"register": [[0, 1], [0, 0], [0, 2]], "lane": [[1 << i, 0] for i in range(6)]},
                       [("dim0", 64), ("dim1", 4)])
    shared = swizzled_shared(1, 1, 1, (1, 0), (64, 4))
    rep = tile_access_report(shared, dup, 32, "gfx942", "read")
    assert rep.broadcast_registers == 1 and rep.choice.op == "ds_read_b128" and rep.choice.count == 1


def test_largest_vector():
    cvt = LinearLayout({"register": [[4], [1], [2]], "lane": [[8 << i] for i in range(6)]}, [("offset", 1024)])
    assert largest_vector(cvt, 16) == (8, [1, 2, 0])
    assert largest_vector(cvt, 32) == (4, [1, 2])
    odd = LinearLayout({"register": [[1]], "lane": [[3]]}, [("offset", 4)])
    assert largest_vector(odd, 16) == (1, [])


def test_errors():
    shared = swizzled_shared(1, 1, 1, (1, 0), (64, 64))
    with pytest.raises(LayoutError, match="direction"):
        tile_access_report(shared, A_942, 16, "gfx942", "sideways")
    with pytest.raises(LayoutError, match="element_bits"):
        tile_access_report(shared, A_942, 12, "gfx942")
    with pytest.raises(LayoutError, match="is a write"):
        tile_access_report(shared, A_942, 16, "gfx942", "read", ops=["ds_write_b64"])
    half = LinearLayout({"lane": [[1 << i, 0] for i in range(5)]}, [("dim0", 64), ("dim1", 64)])
    with pytest.raises(LayoutError, match="lane"):
        tile_access_report(shared, half, 16, "gfx942")
    dup = LinearLayout({"offset": [[0, 1 << i] for i in range(6)] + [[1 << i, 0] for i in range(5)] + [[0, 1]]},
                       [("dim0", 64), ("dim1", 64)])
    with pytest.raises(LayoutError, match="injective"):
        tile_access_report(dup, A_942, 16, "gfx942")
    # fp4 elements that never pair up in a byte: no LDS op can move them
    fp4 = LinearLayout({"register": [[2]], "lane": [[4 << i] for i in range(6)]}, [("dim0", 512)])
    with pytest.raises(LayoutError, match="no LDS read"):
        tile_access_report(LinearLayout.identity_1d(512, "offset", "dim0"), fp4, 4, "gfx942")
