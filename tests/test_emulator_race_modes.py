"""The emulator's quick LDS race check (epoch by epoch) against the exact per-access check.

run_isa checks races epoch by epoch and falls back to the exact per-access bookkeeping
when it cannot rule a race out; on random store/load/barrier programs over a few warps
(addresses drawn from a small LDS so that warps collide, data sometimes equal) both must
return the same registers or raise the same first error.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linlayout import LayoutError, LinearLayout
from linlayout.synth import emulator
from linlayout.synth.emulator import PlanVerificationError, run_isa
from linlayout.synth.plan import Barrier, LdsLoad, LdsStore, Plan

LANES = np.arange(64)


def _layout(warps: int, regs: int, broadcast: bool = False) -> LinearLayout:
    """Registers above lanes above warps; ``broadcast``: every warp holds the same data."""
    w_bits = warps.bit_length() - 1
    bases = {"register": [[1 << (6 + w_bits + j)] for j in range(regs.bit_length() - 1)],
             "lane": [[1 << j] for j in range(6)],
             "warp": [[0 if broadcast else 64 << j] for j in range(w_bits)]}
    return LinearLayout(bases, [("dim0", 64 * warps * regs)])


@st.composite
def programs(draw):
    warps = draw(st.sampled_from([1, 2, 4]))
    regs = 2
    lds = 256
    steps = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["store", "store", "load", "barrier"]))
        if kind == "barrier":
            steps.append(Barrier())
            continue
        pattern = draw(st.sampled_from(["lane", "swap", "shared", "half", "random"]))
        base = draw(st.integers(0, 3)) * 64
        if pattern in ("lane", "swap"):  # every warp at its own block (or a neighbour's), or the same one
            per_warp = draw(st.booleans())
            turn = pattern == "swap"
            addr = np.stack([(base + 64 * ((w ^ turn) % warps) * per_warp + LANES * 4) % lds for w in range(warps)])
        elif pattern == "shared":  # all lanes of all warps on few dwords
            addr = np.stack([(base + (LANES % 2) * 4) % lds for _ in range(warps)])
        elif pattern == "half":
            addr = np.stack([(base + (LANES // 2) * 4) % lds for w in range(warps)])
        else:
            addr = np.array(draw(st.lists(st.integers(0, lds // 4 - 1), min_size=64 * warps, max_size=64 * warps)),
                            dtype=np.int64).reshape(warps, 64) * 4
        slot = draw(st.integers(0, regs - 1))
        if kind == "store":
            steps.append(LdsStore(addr=addr, width_bytes=4, src=[slot]))
        else:
            steps.append(LdsLoad(addr=addr, width_bytes=4, dst=[slot]))
    lay = _layout(warps, regs, draw(st.booleans()))
    return Plan("gfx942", 64, warps, 32, lay, lay, regs, regs, steps, lds_bytes=lds)


def _outcome(plan: Plan, exact_only: bool):
    try:
        if exact_only:
            return emulator._run_isa(plan, None, None, exact=True).tolist()
        return run_isa(plan).tolist()
    except (PlanVerificationError, LayoutError) as e:
        return f"{type(e).__name__}: {e}"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_quick_race_check_agrees_with_exact(plan):
    assert _outcome(plan, exact_only=False) == _outcome(plan, exact_only=True)


def test_quick_check_rejects_a_cross_warp_read_without_barrier():
    lay = _layout(2, 2)
    addr = np.stack([LANES * 4, (LANES ^ 1) * 4])  # warp 1 reads what warp 0 wrote (and itself writes)
    plan = Plan("gfx942", 64, 2, 32, lay, lay, 2, 2,
                [LdsStore(addr=np.stack([LANES * 4, LANES * 4 + 256]), width_bytes=4, src=[0]),
                 LdsLoad(addr=addr, width_bytes=4, dst=[1])], lds_bytes=512)
    with pytest.raises(PlanVerificationError, match="without a barrier"):
        run_isa(plan)


def test_a_suspected_race_that_is_none_runs_again_exactly(monkeypatch):
    """Warp 0 overwrites its block (x then y) and warp 1 then writes the same y there: two warps
    and two values on one byte, yet no race (warp 1 writes what is already there)."""
    lay = _layout(2, 2, broadcast=True)  # slot 0 holds x, slot 1 holds y, the same in both warps
    own, swapped = np.stack([LANES * 4, 256 + LANES * 4]), np.stack([256 + LANES * 4, LANES * 4])
    plan = Plan("gfx942", 64, 2, 32, lay, lay, 2, 2,
                [LdsStore(addr=own, width_bytes=4, src=[0]), LdsStore(addr=own, width_bytes=4, src=[1]),
                 LdsStore(addr=swapped, width_bytes=4, src=[1])], lds_bytes=512)
    runs = []
    quick_or_exact = emulator._run_isa
    monkeypatch.setattr(emulator, "_run_isa", lambda *a, **k: runs.append(k["exact"]) or quick_or_exact(*a, **k))
    regs = run_isa(plan)
    assert runs == [False, True]
    assert regs.tolist() == quick_or_exact(plan, None, None, exact=True).tolist()
