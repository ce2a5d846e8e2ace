"""The emulator's shortcuts give the step-by-step run's results: a step's register pairs run at once only
when that is running them in order, the wide-cell codes are the XOR of a lane table and a cell table,
and 4-byte cells whose codes need more than 62 bits give way to 2-byte cells."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from repo_data import corpus

from linlayout import LayoutError, LinearLayout
from linlayout.synth import emulator
from linlayout.synth.convert import plan_conversion
from linlayout.synth.emulator import PlanVerificationError, _Machine, run_isa
from linlayout.synth.isa_lanes import v_perm_b32
from linlayout.synth.plan import Plan
from linlayout.synth.steps import Lane, LdsLoad, Select

LANES = np.arange(64)
LAYOUT = LinearLayout({"register": [[1], [2]], "lane": [[4 << j] for j in range(6)]}, [("dim0", 256)])
DPP_SWAP = {"ctrl": 0xB1, "row_mask": 0xF, "bank_mask": 0xF, "bound_ctrl": 0}  # quad_perm:[1,0,3,2]


def _registers(steps: list) -> np.ndarray:
    """``[dword, lane, byte]`` after running ``steps`` on four fp32 registers of one gfx942 wave."""
    return run_isa(Plan("gfx942", 64, 1, 32, LAYOUT, LAYOUT, 4, 4, steps))[:, 0]


def _swap(dst: list[int], src: list[int], src_lane=LANES ^ 1) -> Lane:
    return Lane("dpp:quad_perm:[1,0,3,2]", dst, src, src_lane, DPP_SWAP)


def test_at_once_only_when_no_pair_reads_an_earlier_pairs_destination():
    assert _Machine.at_once([(2, 0), (3, 1)]) == [([2, 3], [0, 1])]
    assert _Machine.at_once([(1, 0), (2, 1)]) == [(1, 0), (2, 1)]
    assert _Machine.at_once([(2, 0, 1), (3, 1, 0)]) == [([2, 3], [0, 1], [1, 0])]
    assert _Machine.at_once([(2, 0, 1), (3, 1, 2)]) == [(2, 0, 1), (3, 1, 2)]
    assert _Machine.at_once([(2, 2)]) == [(2, 2)]


def test_a_lane_step_runs_its_pairs_in_order():
    """v1 <- v0 and v2 <- v1 through quad_perm:[1,0,3,2]: v2 holds v0 moved twice (in place), as two
    steps of one pair each leave it; independent pairs run at once give what one pair a step gives."""
    before = _registers([])
    chained = _registers([_swap([1, 2], [0, 1])])
    assert np.array_equal(chained, _registers([_swap([1], [0]), _swap([2], [1])]))
    assert np.array_equal(chained[1], before[0][LANES ^ 1]) and np.array_equal(chained[2], before[0])
    both = _registers([_swap([2, 3], [0, 1])])
    assert np.array_equal(both, _registers([_swap([2], [0]), _swap([3], [1])]))
    assert np.array_equal(both[2:], before[:2][:, LANES ^ 1])


def test_a_select_step_runs_its_pairs_in_order():
    cond = (LANES & 1).astype(np.int64)
    before = _registers([])
    chained = _registers([Select(dst=[2, 3], a=[0, 2], b=[1, 1], cond=cond)])  # v3 reads the v2 just written
    assert np.array_equal(chained, _registers([Select(dst=[2], a=[0], b=[1], cond=cond),
                                               Select(dst=[3], a=[2], b=[1], cond=cond)]))
    assert np.array_equal(chained[3], np.where(cond[:, None] == 1, before[1], before[0]))


def test_a_wrong_declared_lane_fails_in_a_step_of_several_pairs():
    with pytest.raises(PlanVerificationError, match="lane 5 of warp 0 is declared to read lane 5"):
        _registers([_swap([2, 3], [0, 1], np.where(LANES == 5, 5, LANES ^ 1))])


@pytest.mark.parametrize("element_bits,c", [(32, 2), (16, 2), (16, 4), (8, 2), (8, 4)])
def test_cell_codes_are_the_xor_of_a_lane_and_a_cell_table(element_bits, c):
    """``_code_tables`` against the codes written out from the element ids: ``2**(k n) | sum_j id_j
    2**(n j)`` for ``k`` elements a cell, ``2**(n + s) | id 2**s | t`` for part ``t`` of an element
    of ``2**s`` cells."""
    element_bytes = element_bits // 8
    layout = LinearLayout({"register": [[1], [2], [64]], "lane": [[4 << j] for j in range(4)] + [[128], [512]],
                           "warp": [[256]]}, [("dim0", 1024)])
    n_slots, n = 8, layout.total_out_bits
    lanes, cells = emulator._code_tables(layout, 2, n_slots, c, element_bytes, n, np.int64)
    ids = emulator.element_ids(layout, 2)
    if c < element_bytes:
        s = (element_bytes // c).bit_length() - 1
        want = ((ids[..., None] << s) | np.arange(1 << s) | (1 << (n + s))).reshape(2, 64, -1)
    else:
        k = c // element_bytes
        group = ids.reshape(2, 64, -1, k)
        want = sum(group[..., j] << (n * j) for j in range(k)) | (1 << (k * n))
    assert np.array_equal(lanes[:, :, None] ^ cells, want)
    assert want.min() > 0 and int(want.max()) < 1 << emulator._code_bits(
        Plan("gfx942", 64, 2, element_bits, layout, layout, n_slots, n_slots, []), c)[1]


def test_four_byte_codes_over_62_bits_run_on_two_byte_cells():
    """An 8-bit round trip of a 2**16-element tile moves whole dwords, but their codes would need 65
    bits: the wide run takes 2-byte cells; a load reading its neighbour lane's address fails there
    and with the byte-cell run's message."""
    case = next(c for c in corpus()["cases"] if c["name"] == "blocked[1x8,t8x8,o10]->mfma16T"
                and c["arch"] == "gfx942" and c["dtype"] == "fp8")
    plan = plan_conversion(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), "gfx942", 8)
    assert emulator._cell_bytes(plan) == 4 and emulator._code_bits(plan, 4)[1] > 62
    assert emulator._cell_bytes(plan, widest=2) == 2 and emulator._cell_run_holds(plan)
    j = max(i for i, s in enumerate(plan.steps) if isinstance(s, LdsLoad))
    steps = list(plan.steps)
    steps[j] = replace(steps[j], addr=np.roll(np.asarray(steps[j].addr), 1, axis=-1))
    bad = replace(plan, steps=steps)
    assert not emulator._cell_run_holds(bad)
    message = emulator.verify(bad, certificate=False).message
    assert message and message == emulator._byte_run_failure(bad)


def test_operand_rules_taken_once_per_operand_list_still_name_each_step():
    """``_Machine.pairs`` and ``check_perm_copies`` keep their verdicts per operand list
    (``_dword_pairs``, ``_uncopied_slot``): a second step with the same operands gets the same
    answer, its error naming that step."""
    m = _Machine(4, 1, 64, 4, 16, "gfx942", np.int32)
    assert m.pairs([0, 1], [2, 3], "step 0 (mov)") == [(0, 1)]
    assert m.pairs([0, 1], [2, 3], "step 1 (mov)") == [(0, 1)]
    for i in (2, 3):  # 16-bit slots 0 and 1 share dword 0 but come from dwords 1 and 2
        with pytest.raises(LayoutError, match=f"^step {i} \\(mov\\): register v0 would come from two registers"):
            m.pairs([0, 1], [2, 5], f"step {i} (mov)")
    m.check_perm_copies([0, 1], [2, 3], 0, (0, 1), 0x03020100, "step 4 (mov)", constants=False)  # v[1] = S1 whole
    m.check_perm_copies([], [], 0, (0, 1), 0x0C0C0C0C, "step 5 (mov)", constants=False)  # nothing declared
    for i in (6, 7):  # the halves swapped: slot 2 goes to slot 1, not to slot 0
        with pytest.raises(PlanVerificationError,
                           match=f"^step {i} \\(mov\\): the selector does not copy slot 2 to slot 0"):
            m.check_perm_copies([0, 1], [2, 3], 0, (0, 1), 0x01000302, f"step {i} (mov)", constants=False)



@pytest.mark.parametrize("cell_bytes", [1, 2, 4])
def test_v_perm_into_an_operand_and_into_another_register_agree(cell_bytes):
    """``_Machine.v_perm`` writes its result straight into ``v[d]`` unless ``d`` is an operand (then
    it makes the result apart first): into S0, into S1 and into a third register it leaves the
    same cells, on byte cells the oracle's bytes (uniform selectors moving whole cells of the
    width, and on byte cells sign bytes, constants and one selector per lane)."""
    rng = np.random.default_rng(7)
    selectors = {1: [0x07020501, 0x0C0C0300, 0x0B0A0908,
                     rng.integers(0, 14, (64, 4)) @ (1 << 8 * np.arange(4))],
                 2: [0x07060100, 0x0C0C0302, 0x01000504],
                 4: [0x03020100, 0x07060504, 0x0C0C0C0C]}[cell_bytes]
    for selector in selectors:
        init = rng.integers(0, 256, (2, 2, 64, 4 // cell_bytes))
        got = []
        for d in (0, 1, 2):  # S0 = v0, S1 = v1: the result into S0, into S1, into v2
            m = _Machine(3, 2, 64, 4, 16, "gfx942", np.int64, cell_bytes=cell_bytes)
            m.regs[:2] = init
            m.v_perm(d, (0, 1), selector)
            got.append(m.regs[d].copy())
        np.testing.assert_array_equal(got[0], got[2])
        np.testing.assert_array_equal(got[1], got[2])
        if cell_bytes == 1:
            sel = (np.asarray(selector)[..., None] >> (8 * np.arange(4))) & 0xFF
            np.testing.assert_array_equal(got[2], v_perm_b32(init[0], init[1], sel))



class _WatchedRegisters(np.ndarray):
    """A register file that logs where each item assignment on it or on an array made from it lands:
    ``"file"`` (the file itself: ``regs[d] = ...``), ``"view"`` (a view of its memory, such as
    ``regs[d]``) or ``"apart"`` (an array of its own)."""

    file = None
    log: list[str] = []

    def __setitem__(self, key, value):
        f = _WatchedRegisters.file
        _WatchedRegisters.log.append("file" if self is f else "view" if np.shares_memory(self, f) else "apart")
        super().__setitem__(key, value)


@pytest.mark.parametrize("cell_bytes", [1, 2, 4])
def test_v_perm_into_another_register_writes_it_in_place(cell_bytes, monkeypatch):
    """``_Machine.v_perm`` into a register ``d`` that is no operand writes ``v[d]``'s own cells through
    a view of the register file (no array made apart and assigned to ``regs[d]``: the speed rule of
    505a63d); into an operand it makes the result apart and assigns it once to the file.  On byte
    cells with a uniform and a per-lane selector, and on wider cells; the results are those of a plain
    register file."""
    rng = np.random.default_rng(3)
    selectors = {1: [0x07020501, rng.integers(0, 14, (64, 4)) @ (1 << 8 * np.arange(4))],
                 2: [0x01000504], 4: [0x07060504]}[cell_bytes]
    for selector in selectors:
        for d in (2, 0):
            m = _Machine(3, 2, 64, 4, 16, "gfx942", np.int64, cell_bytes=cell_bytes)
            plain = _Machine(3, 2, 64, 4, 16, "gfx942", np.int64, cell_bytes=cell_bytes)
            plain.regs[...] = rng.integers(0, 256, plain.regs.shape)
            m.regs = plain.regs.copy().view(_WatchedRegisters)
            monkeypatch.setattr(_WatchedRegisters, "file", m.regs)
            monkeypatch.setattr(_WatchedRegisters, "log", [])
            m.v_perm(d, (0, 1), selector)
            plain.v_perm(d, (0, 1), selector)
            log = _WatchedRegisters.log
            if d == 2:  # in place: only writes through the view
                assert log and set(log) == {"view"}, log
            else:  # made apart (no write through the view, which would clobber an operand), assigned once
                assert log.count("file") == 1 and "view" not in log, log
            np.testing.assert_array_equal(np.asarray(m.regs), plain.regs)
