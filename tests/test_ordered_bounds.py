"""The bounds the ordered layouts (lds_path.ordered_design) wait under in the design pool.

An ordered layout is whole when listed (no row is left to choose), so ``designs`` gives it the bounds of
its whole offset basis taken as the prefix (``lds_path._whole_prefix``, as linlayout.synth.swizzle's
layout has): ``prefix_floor``'s layouts are then that layout alone.  Checked on sampled AMD and wave32
corpus cases: each bound is at most what it bounds on every round trip (floor_checks), and it is at
least the bound of the shorter prefix the layout was made from, and above it on most (it waits longer).
"""

from __future__ import annotations

import pytest

from floor_checks import check_round_trip_floors
from repo_data import corpus, family_corpus
from linlayout import LayoutError, LinearLayout
from linlayout.dtypes import dtype_bits
from linlayout.synth import lds_path
from linlayout.synth.context import ConversionContext


def _contexts(family: str, every: int) -> list[tuple[tuple, ConversionContext]]:
    cases = (corpus() if family == "amd" else family_corpus(family))["cases"][::every]
    return [((c["name"], c["arch"], c["dtype"]),
             ConversionContext.create(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), c["arch"],
                                      dtype_bits(c["dtype"])))
            for c in cases]


@pytest.mark.parametrize("family,every", [("amd", 7), ("wave32", 7)])
def test_ordered_layouts_bounds_hold_on_every_round_trip(family, every):
    """On every 7th case: every deferred design's floor, plan cost and instructions bounds are at most
    its round trips' (``check_round_trip_floors`` asserts them), ordered layouts among them; and each
    ordered layout's whole-basis bounds are at least its ``_ordered_prefixes`` prefix's."""
    ordered = tighter = 0
    for what, ctx in _contexts(family, every):
        for deferred, acc, _ in check_round_trip_floors(ctx, what):
            if "order after" not in acc.design.source:
                continue
            assert deferred, what
            ordered += 1
            d = acc.design
            n_prefix = int(d.source.split("after a ")[1].split("-bit")[0])
            reps = d.shared_cols[d.n_offset_bits:]
            whole, prefix = lds_path._whole_prefix(d), (d.shared_cols[:n_prefix], reps)
            bounds = [lds_path._prefix_bounds(ctx, lambda p=p: p) for p in (whole, prefix)]
            (b_whole, n_whole), (b_prefix, n_prefix_instr) = [(b(), n()) for b, n in bounds]
            assert (b_whole.floor >= b_prefix.floor - 1e-9 and b_whole.cost >= b_prefix.cost - 1e-9
                    and n_whole >= n_prefix_instr), what
            floor, (cost, count) = acc.floor(), acc.plan_floor()
            assert b_whole.floor <= floor + 1e-9 and b_whole.cost <= cost + 1e-9 and n_whole <= count, what
            tighter += b_whole.cost > b_prefix.cost + 1e-9
    assert ordered >= 200 and tighter >= ordered // 2, (ordered, tighter)


@pytest.mark.parametrize("family", ["amd", "wave32"])
def test_no_ordered_layout_has_fewer_terms_than_one_per_side(family):
    """``_fewest_terms`` lists nothing where linlayout.synth.swizzle's layout has one shift term per side
    with a nonzero lane column: on every 7th case, every ordered layout (each prefix, each order) has at
    least that many, and where the swizzled layout has more, the listed layouts have the fewest of all."""
    at_least = listed = 0
    for what, ctx in _contexts(family, 7):
        synthesized = lds_path.shared_layout(ctx)
        reps = synthesized.shared_cols[synthesized.n_offset_bits:]
        terms = {order: [lds_path.lane_terms(ctx, lds_path.ordered_design(ctx, p, reps, order))
                         for p in lds_path._ordered_prefixes(ctx, synthesized)] for order in lds_path.ORDERS}
        least = min(min(t) for t in terms.values())
        sides = sum(any(cols["lane"]) for cols in (ctx.problem.src_cols, ctx.problem.dst_cols))
        assert least >= sides, what
        fewest = lds_path._fewest_terms(ctx, synthesized)
        if lds_path.lane_terms(ctx, synthesized) == sides:
            at_least += 1
            assert not fewest, what
        elif fewest:
            listed += 1
            assert {lds_path.lane_terms(ctx, d) for d in fewest} == {least}, what
    assert at_least >= 10 and listed >= 20, (at_least, listed)


def test_the_pool_defers_ordered_layouts_under_their_whole_basis():
    """``designs`` puts each ordered layout in the pool under its whole offset basis's bounds, not under those of
    the shorter prefix it was made from (which, on most ordered layouts, are lower: it would be made more often,
    the plans the same): on every 7th AMD case, the deferred entry's bounds and instructions equal the whole
    basis's, and on some they are above the shorter prefix's."""
    from linlayout import caches

    checked = above = 0
    for what, ctx in _contexts("amd", 7):
        caches.clear(keep_tables=True)
        pool = lds_path.designs(ctx)
        for entry in pool.deferred.values():
            try:
                d = entry.make()
            except LayoutError:  # a design that does not exist here (an over-fetch one)
                continue
            if "order after" not in d.source:
                continue
            n_prefix = int(d.source.split("after a ")[1].split("-bit")[0])
            reps = d.shared_cols[d.n_offset_bits:]
            whole, short = (lds_path._prefix_bounds(ctx, lambda p=p: p)
                            for p in (lds_path._whole_prefix(d), (d.shared_cols[:n_prefix], reps)))
            assert (entry.bounds(), entry.instructions()) == (whole[0](), whole[1]()), what
            above += entry.bounds().cost > short[0]().cost + 1e-9
            checked += 1
    assert checked >= 20 and above >= checked // 2, (checked, above)
