"""verify's dword-cell run against the byte-cell run.

Plans whose steps move whole dwords only (synth.emulator._moves_dwords) are first run on one
cell per dword holding a code of its four bytes.  That run may pass a plan only when the
byte-cell run passes it too, and verify must report exactly what the byte-cell run reports.
Checked on random conversion plans, intact and mutated (a step dropped, two steps swapped, an
LDS address rolled across lanes, a slot list reversed).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linlayout import LinearLayout
from synth import emulator
from synth.convert import plan_conversion
from synth.plan import LdsLoad, LdsStore, Plan

from test_convert_random import layout_pairs

BASELINE = Path(__file__).resolve().parents[1] / ".." / "shared" / "bench" / "triton_amd_baseline.json"


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
    else:
        s = steps[i]
        name = next((n for n in ("dst", "src", "a", "vdst") if getattr(s, n, None)), None)
        if name is not None:
            steps[i] = replace(s, **{name: list(reversed(getattr(s, name)))})
    return replace(plan, steps=steps)


def _byte_verdict(plan: Plan, want: np.ndarray) -> str:
    return emulator._byte_run_failure(plan, want)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout_pairs(), st.integers(0, 4), st.integers(0, 1000))
def test_dword_cells_pass_only_what_byte_cells_pass(case, kind, k):
    src, dst, bits, arch = case
    plan = _mutated(plan_conversion(src, dst, arch, bits), kind, k)
    want = emulator.expected_ids(plan)
    if want.shape[2] != plan.slots_out:
        return
    byte = _byte_verdict(plan, want)
    if emulator._moves_dwords(plan) and emulator._dword_run_holds(plan, want):
        assert byte == ""
    assert emulator.verify(plan, certificate=False).message == byte


def test_baseline_lds_round_trips_run_on_dword_cells():
    """The fp32 round trips of the benchmark move whole dwords: verify needs no byte-cell run, and a
    load reading its neighbour lane's address fails with the byte-cell run's message."""
    if not BASELINE.exists():
        import pytest

        pytest.skip("shared/bench baseline absent")
    case = next(c for c in json.loads(BASELINE.read_text())["cases"]
                if c["name"] == "mfma32->mfma16" and c["arch"] == "gfx942" and c["dtype"] == "fp32")
    plan = plan_conversion(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), "gfx942", 32)
    want = emulator.expected_ids(plan)
    assert plan.strategy == "lds" and emulator._moves_dwords(plan)
    assert emulator._dword_run_holds(plan, want)
    j = max(i for i, s in enumerate(plan.steps) if isinstance(s, LdsLoad))
    bad = _mutated(plan, 3, j)
    message = emulator.verify(bad, certificate=False).message
    assert not emulator._dword_run_holds(bad, want)
    assert message and message == _byte_verdict(bad, want)
