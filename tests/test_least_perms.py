"""The repacking part of the deferred designs' instruction bound (lds_path._least_perms, summed per side by
lds_path._side_instructions into prefix_instructions): checked against the exact counts of the round trips.

A deferred design waits in the pool under its instruction bound; a bound above a round trip's count would
leave a design unmade that a plan needs, so each side's bound must be at most that side's LDS instructions
plus its ``v_perm_b32`` steps (``LdsAccesses.stores`` and ``s_perms``, ``loads`` and ``d_perms``) on every
round trip through the layouts of the prefix.
"""

from __future__ import annotations

import pytest

from repo_data import corpus, family_corpus
from linlayout import LayoutError, LinearLayout
from linlayout.dtypes import dtype_bits
from linlayout.synth import lds_path
from linlayout.synth.context import ConversionContext


def _prefixed_designs(ctx: ConversionContext) -> list[tuple[lds_path.LdsDesign, list[tuple]]]:
    """The pool's layouts that wait under prefix bounds (register-first, over-fetch, ordered), each with the
    prefixes whose bounds hold for it: its pool prefix and its whole offset basis."""
    out = []
    makers = [(lambda s=s: lds_path.vector_first_design(ctx, s), lambda s=s: lds_path._vector_first_prefix(ctx, s))
              for s in ("src", "dst")]
    makers.append((lambda: lds_path.over_fetch_design(ctx), lambda: lds_path._over_fetch_prefix(ctx)))
    for make, prefix_of in makers:
        try:
            d = make()
        except LayoutError:
            continue
        out.append((d, [prefix_of(), lds_path._whole_prefix(d)]))
    synthesized = lds_path.shared_layout(ctx)
    if not synthesized.read_transpose:
        out += [(d, [lds_path._whole_prefix(d)]) for d in lds_path._fewest_terms(ctx, synthesized)]
    return out


@pytest.mark.parametrize("family,every", [("amd", 5), ("wave32", 9)])
def test_side_bounds_hold_on_every_round_trip_and_count_repacks(family, every):
    """On every ``every``-th sub-dword case: per side, the bound is at most the round trip's accesses plus
    repacks; on many layouts the repacks raise it (``_least_perms`` positive) and the bound is reached.
    Each of ``_least_perms``' three rules raises many bounds on its own (the bound less that rule's
    repacks is lower): the stores' dword repacks, the loads' dword repacks (both where the vector
    bits' registers are not in order), the loads narrower than a dword (every dst dword)."""
    cases = (corpus() if family == "amd" else family_corpus(family))["cases"][::every]
    checked = raised = reached = 0
    by_rule = {"stores": 0, "dword loads": 0, "narrow loads": 0}
    for c in cases:
        if dtype_bits(c["dtype"]) > 16:
            continue
        what = (c["name"], c["arch"], c["dtype"])
        ctx = ConversionContext.create(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), c["arch"],
                                       dtype_bits(c["dtype"]))
        for d, prefixes in _prefixed_designs(ctx):
            try:
                accs = lds_path.lds_accesses(ctx, d)
            except LayoutError:
                continue
            for prefix, reps in prefixes:
                bounds = lds_path._side_instructions(ctx, prefix, reps, d.over_fetch)
                without = list(bounds)
                for k, (_, cols, any_width, t_up) in enumerate(lds_path._prefix_sides(ctx, prefix, reps,
                                                                                       d.over_fetch)[0]):
                    if any_width:
                        continue
                    store = k == 0
                    moved = 1 << lds_path._moved_rank(cols["register"], cols["lane"] + cols["warp"], store)
                    pair = [2 if ctx.target.has_lds_pair and ctx.element_bytes << t in (4, 8) else 1
                            for t in range(t_up + 1)]
                    accesses = [-(-(moved >> t) // pair[t]) for t in range(t_up + 1)]
                    perms = lds_path._least_perms(ctx, prefix, cols, store, moved, t_up)
                    assert bounds[k] == min(a + q for a, q in zip(accesses, perms)), what
                    without[k] = min(accesses)  # the same bound with no repack counted
                    wide = [ctx.element_bytes << t >= 4 for t in range(t_up + 1)]
                    rules = {"stores": wide if store else None, "dword loads": None if store else wide,
                             "narrow loads": None if store else [not w for w in wide]}
                    for rule, keep_out in rules.items():
                        if keep_out is not None:
                            less = min(a + (0 if out else q) for a, q, out in zip(accesses, perms, keep_out))
                            by_rule[rule] += bounds[k] > less
                for a in accs:
                    exact = [sum(len(r) for r in a.stores) + a.s_perms, sum(len(r) for r in a.loads) + a.d_perms]
                    for bound, plain, count in zip(bounds, without, exact):
                        assert plain <= bound <= count, (what, d.source, bounds, exact)
                        checked += 1
                        raised += bound > plain
                        reached += bound > plain and bound == count
    assert checked >= 300 and raised >= 30 and reached >= 10, (checked, raised, reached)
    assert all(n >= 30 for n in by_rule.values()), by_rule
