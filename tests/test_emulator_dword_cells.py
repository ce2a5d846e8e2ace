"""verify's run on dword or half-dword cells against the byte-cell run.

Plans whose steps move whole 4- or 2-byte cells only (linlayout.synth.emulator._cell_bytes) are first run
on such cells, each holding a code of its bytes.  That run may pass a plan only when the
byte-cell run passes it too, and verify must report exactly what the byte-cell run reports.
Checked on random conversion plans, intact and mutated (a step dropped, two steps swapped, an
LDS address rolled across lanes, a slot list reversed, a v_perm_b32 selector's halves swapped).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linlayout import LinearLayout
from linlayout.synth import emulator
from linlayout.synth.convert import plan_conversion
from linlayout.synth.plan import LdsLoad, LdsStore, Mov, PermSelect, Plan

from repo_data import baseline_cases
from random_layouts import layout_pairs


def _mutated(plan: Plan, kind: int, k: int) -> Plan:
    steps = list(plan.steps)
    if not steps or kind == 0:
        return plan
    i = k % len(steps)
    if kind == 1:
        del steps[i]
    elif kind == 2:
        steps[i], steps[-1 - i] = steps[-1 - i], steps[i]
    elif kind == 3:
        lds = [j for j, s in enumerate(steps) if isinstance(s, (LdsStore, LdsLoad))]
        if lds:
            j = lds[k % len(lds)]
            steps[j] = replace(steps[j], addr=np.roll(np.asarray(steps[j].addr), 1, axis=-1))
    elif kind == 5:
        perms = [j for j, s in enumerate(steps) if isinstance(s, PermSelect)
                 or (isinstance(s, Mov) and s.kind == "v_perm_b32")]
        if perms:
            j = perms[k % len(perms)]
            field = "selector" if isinstance(steps[j], Mov) else "sel1"
            sel = int(getattr(steps[j], field))
            steps[j] = replace(steps[j], **{field: (sel >> 16) | ((sel & 0xFFFF) << 16)})
    else:
        s = steps[i]
        name = next((n for n in ("dst", "src", "a", "vdst") if getattr(s, n, None)), None)
        if name is not None:
            steps[i] = replace(s, **{name: list(reversed(getattr(s, name)))})
    return replace(plan, steps=steps)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout_pairs(), st.integers(0, 5), st.integers(0, 1000))
def test_wide_cells_pass_only_what_byte_cells_pass(case, kind, k):
    src, dst, bits, arch = case
    plan = _mutated(plan_conversion(src, dst, arch, bits), kind, k)
    if emulator.expected_ids(plan).shape[2] != plan.slots_out:
        return
    byte = emulator._byte_run_failure(plan)
    if emulator._cell_run_holds(plan):
        assert byte == ""
    assert emulator.verify(plan, certificate=False).message == byte


def test_baseline_lds_round_trips_run_on_dword_cells():
    """The fp32 round trips of the benchmark move whole dwords: verify needs no byte-cell run, and a
    load reading its neighbour lane's address fails with the byte-cell run's message."""
    case = next(c for c in baseline_cases()
                if c["name"] == "mfma32->mfma16" and c["arch"] == "gfx942" and c["dtype"] == "fp32")
    plan = plan_conversion(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), "gfx942", 32)
    assert plan.strategy == "lds" and emulator._cell_bytes(plan) == 4
    assert emulator._cell_run_holds(plan)
    j = max(i for i, s in enumerate(plan.steps) if isinstance(s, LdsLoad))
    bad = _mutated(plan, 3, j)
    message = emulator.verify(bad, certificate=False).message
    assert not emulator._cell_run_holds(bad)
    assert message and message == emulator._byte_run_failure(bad)


def test_baseline_fp16_v_perm_and_transpose_plans_run_on_half_dword_cells():
    """The fp16 plans of the benchmark whose v_perm_b32 selectors or transpose loads move 16-bit
    halves run on half-dword cells; a selector that swaps the halves, or a transpose load reading its
    neighbour's address, fails with the byte-cell run's message."""
    cases = {(c["name"], c["arch"]): c for c in baseline_cases() if c["dtype"] == "fp16"}
    for name, arch, kind in (("mfma16T->mfma16", "gfx942", 5), ("mfma32->blocked", "gfx942", 5),
                             ("mfma32T->mfma32", "gfx950", 3)):
        case = cases[(name, arch)]
        plan = plan_conversion(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), arch, 16)
        assert emulator._cell_bytes(plan) == 2 and emulator._cell_run_holds(plan), name
        steps = [j for j, s in enumerate(plan.steps) if isinstance(s, (Mov, PermSelect, LdsLoad))
                 and (kind == 3) == isinstance(s, LdsLoad) and getattr(s, "kind", "v_perm_b32") == "v_perm_b32"]
        bad = _mutated(plan, kind, steps[0])
        message = emulator.verify(bad, certificate=False).message
        assert not emulator._cell_run_holds(bad)
        assert message and message == emulator._byte_run_failure(bad), name


def test_renamings_move_whole_cells_only_when_every_cell_is_copied_whole():
    """8-bit slots (4 per dword): 2-byte cells are slot pairs (0, 1), (2, 3), ..."""
    whole = {((4, 5), (2, 3)): True,  # cell 2 <- cell 1
             ((5, 4), (3, 2)): True,  # the same copy listed in another order
             ((7, 4), (3, 2)): False,  # bytes 0 and 3 of v1 are not one cell
             ((4, 5), (3, 2)): False,  # a cell's bytes swapped
             ((4,), (2,)): False,  # half a cell
             ((4, 5, 4, 5), (2, 3, 2, 3)): False}  # a dst cell listed twice
    for (dst, src), expected in whole.items():
        assert (emulator._renamed_cell_pairs(list(dst), list(src), 2, 1) is not None) == expected
