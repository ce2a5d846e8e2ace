"""``in_wave.gather_intermediates``: the intermediate ``v_perm_b32``s of 8-bit dword gathers, a floor term.

``gather_dwords`` builds an 8-bit dword of three or four values from intermediates (each holding up to four
bytes of one value pair) and one last permute; ``gather_intermediates`` bounds how many intermediates it
makes, and ``LdsAccesses.s_perms`` / ``d_perms`` add it to the permutes the planner's floors count
(``lds_path._load_intermediates``, the stores' per round).  Checked here against the live ops of programs
built by ``gather_dwords`` (exact on the 4x4 byte transpose and a three-value dword, at most them on seeded
random gathers) and against the plans of an fp8 corpus case's round trips.
"""

from __future__ import annotations

import random

import pytest

from floor_checks import check_round_trip_floors
from repo_data import corpus
from linlayout import LinearLayout
from linlayout.synth import lds_path
from linlayout.synth.context import ConversionContext
from linlayout.synth.in_wave import _in_place, gather_dwords, gather_intermediates
from linlayout.synth.ir import Program


def _live_perms(parts_list: list[list], n_values: int) -> int:
    """The live ops of a program holding ``gather_dwords``' dwords of ``n_values`` 8-bit src values."""
    prog = Program(n_values, 4, 1)
    outputs = gather_dwords(prog, parts_list, 1)
    return len(prog.live_ops(outputs))


def _floor(parts_list: list[list]) -> int:
    """One op per dword not in place, plus the intermediates."""
    return sum(_in_place(parts) is None for parts in parts_list) + gather_intermediates(parts_list, 1)


def test_a_4x4_byte_transpose_counts_its_four_intermediates():
    parts = [[(v, j) for v in range(4)] for j in range(4)]  # dword j: byte j of each value
    assert gather_intermediates(parts, 1) == 4
    assert _floor(parts) == _live_perms(parts, 4) == 8


def test_three_values_read_one_intermediate():
    parts = [[(0, 0), (0, 1), (1, 0), (2, 0)]]  # value 0 direct (two bytes), values 1 and 2 through one
    assert gather_intermediates(parts, 1) == 1
    assert _floor(parts) == _live_perms(parts, 3) == 2


def test_no_intermediate_counted_for_two_values_wider_elements_or_a_slot_given_twice():
    assert gather_intermediates([[(0, 1), (1, 0), (0, 0), (1, 1)]], 1) == 0
    assert gather_intermediates([[(0, 0), (1, 0)], [(2, 0), (3, 0)]], 2) == 0
    assert gather_intermediates([[(v, 0) for v in range(4)], [(0, 0), (1, 1), (2, 1), (3, 1)]], 1) == 0


@pytest.mark.parametrize("seed", range(6))
def test_the_floor_is_at_most_the_ops_of_random_gathers(seed):
    """Distinct bytes of up to six values dealt into dwords (some slots left free): the floor never exceeds
    the program's live ops, and every seed's gather has intermediates counted."""
    rng = random.Random(seed)
    n_values = rng.randint(3, 6)
    slots = [(v, s) for v in range(n_values) for s in range(4)]
    rng.shuffle(slots)
    parts_list = []
    while len(slots) >= 2:
        dword = [slots.pop() if slots and rng.random() < 0.9 else None for _ in range(4)]
        parts_list.append(dword)
    assert gather_intermediates(parts_list, 1) > 0
    assert _floor(parts_list) <= _live_perms(parts_list, n_values)


def test_the_round_trips_of_an_fp8_case_count_their_intermediates():
    """Every round trip's floors bound its plan (``check_round_trip_floors``); its plan's ``v_perm_b32`` steps
    are at least ``s_perms + d_perms``; some round trip's loads have intermediates counted."""
    c = next(c for c in corpus()["cases"]
             if (c["name"], c["arch"], c["dtype"]) == ("blocked[2x1,t16x4,o01]->dotA32(kw8)", "gfx942", "fp8"))
    ctx = ConversionContext.create(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), "gfx942", 8)
    counted = 0
    for _, acc, plan in check_round_trip_floors(ctx, c["name"]):
        if plan is None:
            continue
        assert acc.s_perms + acc.d_perms <= plan._kept_counts().get("v_perm_b32", 0)
        if not (acc.design.over_fetch or acc.design.read_transpose):
            counted += lds_path._load_intermediates(acc.D, acc.loads, 4, 1, acc.d_width_bytes) > 0
    assert counted
