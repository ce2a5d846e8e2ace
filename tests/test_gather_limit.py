"""``in_wave.gather_choices`` with a limit: it stops as soon as the units chosen so far and the floors
of the rest (``_unit_floors``) exceed the limit, so it must never stop at a limit the whole cost
meets (the floors bound each unit's cost), and whatever it returns is the unlimited answer."""

from __future__ import annotations

import numpy as np

from linlayout import LinearLayout
from linlayout.dtypes import dtype_bits
from linlayout.synth import convert
from linlayout.synth.context import ConversionContext
from linlayout.synth.in_wave import _unit_floors, gather_choices, gather_floor

from repo_data import family_corpus


def _unit_maps():
    """(context, unit map) of the gather on the first wave map of every 9th AMD and 11th wave32
    corpus case that stays in each wave."""
    for family, step in (("amd", 9), ("wave32", 11)):
        for case in family_corpus(family)["cases"][::step]:
            ctx = ConversionContext.create(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]),
                                           case["arch"], dtype_bits(case["dtype"]))
            wm = convert._wave_maps(ctx.problem)[0]
            if convert._same_map(ctx.problem) or not wm.wave_local:
                continue
            yield ctx, convert._unit_problem(ctx, wm).pk.units


def _same(a, b) -> bool:
    """Two gather plans alike: the same unit kinds, source units, lane maps and lane ops."""
    def key(gu):
        if hasattr(gu, "unit_of"):
            return ("select first", gu.unit_of.tolist(), gu.need.tolist(), gu.mv)
        g, lanes, need, mv = gu.base
        return (g, lanes.tolist(), need.tolist(), mv, [(m[0], m[1].tolist(), m[2].tolist(), m[3], m[4])
                                                         for m in gu.merges])
    return [key(u) for u in a] == [key(u) for u in b]


def test_a_limit_the_cost_meets_never_stops_it_and_a_lower_one_may():
    seen = stopped = 0
    for ctx, um in _unit_maps():
        cost, plan = gather_choices(ctx, um)
        floors = _unit_floors(um, ctx.cost_model)
        assert floors.shape == (um.table()[0].shape[0],) and float(floors.sum()) == gather_floor(um, ctx.cost_model)
        assert gather_floor(um, ctx.cost_model) <= cost + 1e-9
        for limit in (cost, cost + 1.0, float("inf")):
            got = gather_choices(ctx, um, limit)
            assert got is not None and got[0] == cost and _same(got[1], plan)
        for limit in (cost * 0.5, cost - 1.0, float(np.nextafter(gather_floor(um, ctx.cost_model), -1.0))):
            got = gather_choices(ctx, um, limit)
            if got is None:
                stopped += 1
            else:  # stopping is allowed, not required: else it is the whole answer
                assert got[0] == cost and _same(got[1], plan)
        seen += 1
    assert seen > 40 and stopped > 20
