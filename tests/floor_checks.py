"""The floors the LDS planner prunes with, checked against the round trips and plans they bound.

Used by tests/test_convert_nvidia.py (the NVIDIA corpus) and tests/test_lds_store_twins.py (random
src layouts whose registers alias other lanes' elements).
"""

from __future__ import annotations

from linlayout import caches
from linlayout.synth import lds_path
from linlayout.synth.context import ConversionContext
from linlayout.synth.convert import lds_plan


def check_round_trip_floors(ctx: ConversionContext, what) -> list[tuple[bool, lds_path.LdsAccesses, object]]:
    """Per round trip of every design of ``lds_path.designs(ctx)`` (deferred ones made): (made from a
    deferred design?, its accesses, its plan from ``convert.lds_plan``, None where its layout is over
    the LDS budget).  Asserted on the way (``what`` names the case in a failure): the deferred
    bounds (``_DeferredBounds``: floor bound <= the round trip's floor; plan cost bound
    <= ``plan_floor``'s cost; the instructions bound <= ``plan_floor``'s instructions), and
    ``plan_floor`` <= (the plan's cost, its instructions with setup), the floor <= its cost.  The
    caches are cleared first: every deferred design of the pool not made yet."""
    caches.clear(keep_tables=True)
    pool = lds_path.designs(ctx)
    bounds = {i: (d.bounds(), d.instructions()) for i, d in pool.deferred.items()}
    pool.every()
    out = []
    for i, accs in pool.accesses.items():
        for acc in accs:
            floor = acc.floor()
            cost, count = acc.plan_floor()
            if i in bounds:
                b, instructions = bounds[i]
                assert b.floor <= floor + 1e-9, what
                assert b.cost <= cost + 1e-9 and instructions <= count, what
            plan = None
            if acc.design.lds_bytes <= ctx.lds_budget_bytes:
                plan = lds_plan(ctx, acc)
                assert max(floor, cost) <= plan.cost + 1e-9, what
                assert count <= plan.total_with_overhead(), what
            out.append((i in bounds, acc, plan))
    return out
