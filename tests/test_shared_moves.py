"""``in_wave._shared_moves`` groups the lane maps of one src unit by their pairwise agreement
(``_agreeing_pairs``): checked against the definition, a union grown group by group and compared
lane by lane, on the gathers of part of the AMD and wave32 corpora and of the fuzz campaign's case
3:1491, whose gather shares moves (tests/test_fuzz_regressions.py)."""

from __future__ import annotations

import numpy as np

from linlayout import LinearLayout
from linlayout.synth import in_wave
from linlayout.synth.convert import plan_conversion
from linlayout.synth.in_wave import gather_choices

from test_gather_limit import _unit_maps


def test_agreeing_pairs_is_agreement_on_lanes_both_define():
    rng = np.random.default_rng(7)
    maps = rng.integers(-1, 3, size=(12, 16))
    got = in_wave._agreeing_pairs(maps)
    for a in range(len(maps)):
        for b in range(len(maps)):
            both = (maps[a] >= 0) & (maps[b] >= 0)
            assert got[a][b] == bool(np.all(maps[a][both] == maps[b][both]))


def _shared_moves_by_definition(needs, gs, idents, target, fam):
    """The groups grown one member at a time, each member compared with each group's union lane by lane."""
    def family(need):
        return None if in_wave.find_dpp(need, target) is not None else in_wave.find_lane_op(need, target, fam).family
    out = needs.copy()
    for unit in sorted({int(g) for g, ident in zip(gs, idents) if not ident}):
        members = [i for i in range(len(needs)) if int(gs[i]) == unit and not idents[i]]
        groups = []  # [union, member indices]
        for i in members:
            for group in groups:
                union = group[0]
                if not np.all((union == needs[i]) | (union < 0) | (needs[i] < 0)):
                    continue
                own, wider = family(needs[i]), np.where(union >= 0, union, needs[i])
                if own is not None and own == (family(union) or "dpp") and family(wider) == own:
                    group[0], group[1] = wider, group[1] + [i]
                    break
            else:
                groups.append([needs[i], [i]])
        for union, idx in groups:
            out[idx] = union
    return out


def test_shared_moves_is_the_definition(monkeypatch):
    real, compared = in_wave._shared_moves, []

    def checked(needs, gs, idents, target, fam):
        got = real(needs, gs, idents, target, fam)
        want = _shared_moves_by_definition(needs, gs, idents, target, fam)
        compared.append(bool(np.array_equal(got, needs)))
        assert np.array_equal(got, want)
        return got
    monkeypatch.setattr(in_wave, "_shared_moves", checked)
    for ctx, um in _unit_maps():
        gather_choices(ctx, um)
    src = LinearLayout({"register": [[4, 0], [0, 0]], "lane": [[1, 0], [0, 4], [2, 0], [0, 1], [0, 2]], "warp": []},
                       [("dim0", 8), ("dim1", 8)])
    dst = LinearLayout({"register": [[4, 0]], "lane": [[4, 0], [0, 1], [1, 0], [1, 2], [0, 1]], "warp": []},
                       [("dim0", 8), ("dim1", 8)])
    plan_conversion(src, dst, "gfx1250", 64, strategy="registers", objective="latency")
    assert len(compared) > 20 and not all(compared)  # 3:1491's gather shares a move
