"""Bank-conflict analysis of one instruction (linlayout.synth.banks): exact counts on hand-made accesses."""

from __future__ import annotations

import numpy as np
import pytest

from banks_oracle import BANKS, PHASES, instruction_cycles
from linlayout import LayoutError, LinearLayout
from linlayout.encodings import PaddedLayout
from linlayout.hw.lds import lds_model, triton_lds_model
from linlayout.synth.banks import analyze, bank_load, lane_start_bytes


def access(lane_offsets, regs=1, size=1 << 16):
    """lane bit i -> offset lane_offsets[i]; register bit j -> offset 2**j."""
    bases = {"lane": [[o] for o in lane_offsets]}
    if regs > 1:
        bases = {"register": [[1 << j] for j in range(regs.bit_length() - 1)], **bases}
    return LinearLayout(bases, [("offset", size)])


def oracle(arch, op, acc, elem_bits, nbytes):
    starts = [int(acc.apply({"lane": lane})["offset"]) * elem_bits // 8 for lane in range(64)]
    return instruction_cycles(starts, nbytes, BANKS[arch], PHASES[(arch, op)])


@pytest.mark.parametrize("method", ["linear", "enumerate"])
def test_stride_one_word_is_conflict_free(method):
    r = analyze("gfx942", "ds_read_b32", access([1, 2, 4, 8, 16, 32]), 4, method=method)
    assert (r.cycles, r.min_cycles, r.conflict_free) == (2, 2, True)
    assert r.banks_per_phase == 32


@pytest.mark.parametrize("method", ["linear", "enumerate"])
def test_stride_32_words_is_32_way(method):
    acc = access([32 << i for i in range(6)])
    r = analyze("gfx942", "ds_read_b32", acc, 4, method=method)
    assert r.phase_cycles == [32, 32] and r.cycles == 64 and r.conflict_degree == 32
    assert r.phase_cycles == oracle("gfx942", "ds_read_b32", acc, 32, 4)
    if method == "linear":
        # every lane bit of the phase keeps the bank and changes the row
        assert sorted(c.lanes for c in r.collisions) == [1, 2, 4, 8, 16]
        assert all(c.word_delta % 32 == 0 for c in r.collisions)
        assert "collision" in r.explanation
        assert r.idle_bank_bits == [0, 1, 2, 3, 4]  # all 32 lanes of a phase sit in bank 0


def test_broadcast_costs_one_cycle_per_phase():
    r = analyze("gfx950", "ds_read_b128", access([0] * 6, regs=4), 4)
    assert r.cycles == r.min_cycles == 4


def test_xor_phases_decide_gfx942_b128():
    # l0, l1 -> banks 4, 8; l2 -> bank 16; l4 -> same bank, next row.  Lanes differing in l4 alone
    # are in different phases on the hardware (phase = l2^l4, ...), in one phase for Triton's laneAddr.
    acc = access([4, 8, 16, 1024, 32, 2048], regs=4)  # fp32: offset = dword
    hw = analyze("gfx942", "ds_read_b128", acc, 4)
    assert hw.cycles == 8 and hw.conflict_free
    assert hw.phase_cycles == oracle("gfx942", "ds_read_b128", acc, 32, 16)
    tri = analyze(triton_lds_model("gfx942"), "ds_read_b128", acc, 4)
    assert tri.cycles == 16 and tri.collisions[0].lanes == 16


def test_subdword_lanes_share_a_dword():
    # fp16, lane l reads element l: two lanes per dword, 16 dwords per phase
    r = analyze("gfx942", "ds_read_u16", access([1, 2, 4, 8, 16, 32]), 2)
    assert r.cycles == 2
    # l1 moves 64 elements = 128 bytes: same bank, next row -> 2-way
    acc = access([1, 64, 2, 4, 8, 16])
    r = analyze("gfx942", "ds_read_u16", acc, 2)
    assert r.phase_cycles == [2, 2] == oracle("gfx942", "ds_read_u16", acc, 16, 2)


def test_padding_breaks_a_stride_conflict():
    rows = access([64 << i for i in range(6)], regs=2)  # fp16 rows of 64, 2 elements per lane
    plain = analyze("gfx942", "ds_read_b32", rows, 2)
    assert plain.cycles == 64
    padded = analyze("gfx942", "ds_read_b32", rows, 2, padding=[(64, 2)])  # stride 33 dwords
    assert padded.cycles == 2 and padded.method == "enumeration"
    lin = LinearLayout.identity_1d(1 << 16, "offset", "dim0")
    same = analyze("gfx942", "ds_read_b32", rows, 2, padding=PaddedLayout(lin, (64,), (2,)))
    assert same.cycles == 2
    with pytest.raises(LayoutError, match="padding splits"):
        analyze("gfx942", "ds_read_b32", access([64 << i for i in range(6)], regs=2), 2, padding=[(1, 1)])


def test_per_lane_offsets_input():
    offs = np.arange(64) * 64
    assert analyze("gfx942", "ds_read_b32", offs, 4).cycles == 64
    two = np.stack([offs * 2, offs * 2 + 1], axis=1)
    assert analyze("gfx942", "ds_read_b64", two, 4).cycles == 64
    with pytest.raises(LayoutError, match="consecutive"):
        analyze("gfx942", "ds_read_b64", np.stack([offs * 2, offs * 2 + 3], axis=1), 4)
    with pytest.raises(LayoutError, match="64 per-lane"):
        analyze("gfx942", "ds_read_b32", np.arange(32), 4)
    with pytest.raises(LayoutError, match="rectangular"):
        analyze("gfx942", "ds_read_b32", [[1, 2], [3]], 4)
    with pytest.raises(LayoutError, match="integers"):
        analyze("gfx942", "ds_read_b32", np.arange(64) * 1.0, 4)


def test_b96_is_enumerated():
    # 12 bytes per lane, lanes back to back.  Phase 0 = lanes {0-3, 20-23}: dwords 0-11 and 60-71,
    # and 64-71 wrap onto banks 0-7 -> 2 cycles; phase 1 = {4-7, 16-19}: dwords 12-23, 48-59 -> 1.
    offs = np.arange(64) * 3
    r = analyze("gfx950", "ds_read_b96", offs, 4)
    assert r.method == "enumeration" and r.phase_cycles[:2] == [2, 1] and r.cycles == 12
    starts = [int(o) * 4 for o in offs]
    assert r.phase_cycles == instruction_cycles(starts, 12, 64, PHASES[("gfx950", "ds_read_b96")])


def test_transpose_read_access():
    acc = access([4 << i for i in range(6)], regs=4)
    r = analyze("gfx950", "ds_read_b64_tr_b16", acc, 2)
    assert (r.cycles, r.min_cycles) == (2, 2)
    with pytest.raises(LayoutError, match="transposes 16-bit"):
        analyze("gfx950", "ds_read_b64_tr_b16", access([8 << i for i in range(6)], regs=8), 1)


def test_six_bit_elements_use_enumeration():
    acc = access([16 << i for i in range(6)])  # 16 fp6 = 12 bytes per lane
    r = analyze("gfx950", "ds_read_b96_tr_b6", acc, element_bits=6)
    same_bytes = analyze("gfx950", "ds_read_b96", np.arange(64) * 3, 4)  # lane l at byte 12 l
    assert r.method == "enumeration" and r.phase_cycles == same_bytes.phase_cycles and r.cycles == 12


def test_bank_load_table():
    op = lds_model("gfx942").op("ds_read_b32")
    table = bank_load(op, lane_start_bytes(op, access([32 << i for i in range(6)]), 32))
    assert table.shape == (2, 32) and table[:, 0].tolist() == [32, 32] and table[:, 1:].sum() == 0


@pytest.mark.parametrize("kwargs,match", [
    (dict(op="ds_read_b64", acc=access([1, 2, 4, 8, 16, 32]), eb=4), "not aligned to 8 bytes"),
    (dict(op="ds_read_b64", acc=access([2, 4, 8, 16, 32, 64], regs=4), eb=4), "register"),
    (dict(op="ds_read_b32", acc=LinearLayout({"register": [[2]], "lane": [[4 << i] for i in range(6)]},
                                             [("offset", 1024)]), eb=2), "contiguous"),
    (dict(op="ds_read_b32", acc=access([1, 2, 4, 8, 16]), eb=4), "wave has 64"),
    (dict(op="ds_read_b32", acc=LinearLayout({"lane": [[1 << i] for i in range(6)], "warp": [[64]]},
                                             [("offset", 128)]), eb=4), "in dims"),
    (dict(op="ds_read_b32", acc=LinearLayout({"lane": [[1 << i] for i in range(6)]}, [("x", 64)]), eb=4),
     "out dim"),
    (dict(op="ds_read_u8", acc=access([1, 2, 4, 8, 16, 32]), eb=2), "less than one"),
])
def test_bad_accesses(kwargs, match):
    with pytest.raises(LayoutError, match=match):
        analyze("gfx942", kwargs["op"], kwargs["acc"], kwargs["eb"])


def test_bad_arguments():
    acc = access([1, 2, 4, 8, 16, 32])
    with pytest.raises(LayoutError, match="exactly one"):
        analyze("gfx942", "ds_read_b32", acc)
    with pytest.raises(LayoutError, match="element_bytes"):
        analyze("gfx942", "ds_read_b32", acc, 0)
    with pytest.raises(LayoutError, match="linear method"):
        analyze("gfx942", "ds_read_b32", acc, 4, padding=[(64, 1)], method="linear")
    with pytest.raises(LayoutError, match="method"):
        analyze("gfx942", "ds_read_b32", acc, 4, method="fast")
    with pytest.raises(LayoutError, match="padding"):
        analyze("gfx942", "ds_read_b32", acc, 4, padding="x")
    with pytest.raises(LayoutError, match="unknown arch"):
        analyze("gfx9", "ds_read_b32", acc, 4)
