"""Hypothesis: random layout pairs (tests/random_layouts.py) convert with verified plans that an
independent checker accepts, on every target."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, event, example, given, settings

from linlayout import LayoutError, LinearLayout
from linlayout.synth.convert import plan_conversion
from linlayout.synth.emulator import verify
from linlayout.synth.plan import Plan

from convert_checker import check_certificate
from random_layouts import layout_pairs, planning_problems


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout_pairs())
# found by hypothesis: a 64-bit register plan whose permlane swaps copy a slot first (a v_mov per dword half)
@example((LinearLayout({"register": [[1, 0], [0, 1]], "lane": [[0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [0, 64]],
                        "warp": []}, [("dim0", 2), ("dim1", 128)]),
          LinearLayout({"register": [[1, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 16], [0, 0], [0, 0]], "warp": []},
                       [("dim0", 2), ("dim1", 128)]), 64, "gfx950"))
def test_random_pairs_verify_and_independent_checker_agrees(case):
    src, dst, bits, arch = case
    plan = plan_conversion(src, dst, arch, bits)
    event(plan.strategy)
    assert plan.verified
    cert = json.loads(plan.dumps())
    ok, msg = check_certificate(cert)
    assert ok, msg
    again = Plan.from_certificate(cert)
    assert verify(again).ok  # the certificate's ISA parameters alone reproduce the plan
    assert plan.lower_bound["cost"] <= plan.cost + 1e-6


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(planning_problems())
def test_random_problems_on_every_target_verify_and_are_bounded(case):
    """Every target, objective, budget and strategy: a plan verifies (again from its certificate)
    and its lower bound is at most its value under its objective; only a strategy or a budget the
    caller chose can make it a LayoutError.  (Fuzzing like this found NVIDIA round trips that
    stored one element from two lanes without a warp barrier, and lower bounds above the plan.)"""
    src, dst, bits, arch, objective, budget, strategy = case
    try:
        plan = plan_conversion(src, dst, arch, bits, objective=objective, lds_budget_bytes=budget, strategy=strategy)
    except LayoutError as e:
        assert strategy != "auto" or budget is not None, e
        event("refused")
        return
    event(f"{arch} {plan.strategy}")
    assert plan.verified
    assert verify(Plan.from_certificate(json.loads(plan.dumps()))).ok
    assert plan.lower_bound["cost"] <= plan.cost + 1e-6, (plan.lower_bound, plan.cost)
