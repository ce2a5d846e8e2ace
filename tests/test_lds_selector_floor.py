"""The per-lane v_perm selector setup of over-fetching LDS round trips in the planner's floors.

``LdsAccesses.selector_valu`` (``lds_path.over_fetch_selector_valu``) is a lower bound of the plan's
``valu_lane_selector`` (cost.estimate_overhead), counted in ``plan_floor`` and in the deferred
over-fetch design's bounds, on corpus cases whose over-fetching loads gather their dst dwords with
per-lane selectors (fp16 and bf16: one ``"lanes"`` choice; fp8 and i8: more).
"""

from __future__ import annotations

import pytest

from floor_checks import check_round_trip_floors
from repo_data import corpus, family_corpus
from linlayout import LinearLayout
from linlayout.dtypes import dtype_bits
from linlayout.synth.context import ConversionContext
from linlayout.synth.cost import estimate_overhead
from linlayout.synth.emulator import verify

CASES = [("amd", "mfma16T->mfma32", "gfx90a", "fp16"),
         ("amd", "slice0(blocked[1x2,t1x64,o10])->slice1(mfma16T)", "gfx90a", "i8"),
         ("amd", "blocked[2x1,t16x4,o01]->dotA32(kw8)", "gfx942", "fp8"),
         ("wave32", "wmma1.16x16T->wmma1.16x16", "gfx1100", "bf16")]


def _case(family: str, name: str, arch: str, dtype: str) -> ConversionContext:
    cases = (corpus() if family == "amd" else family_corpus(family))["cases"]
    c = next(c for c in cases if (c["name"], c["arch"], c["dtype"]) == (name, arch, dtype))
    return ConversionContext.create(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), arch,
                                    dtype_bits(dtype))


@pytest.mark.parametrize("case", CASES, ids=lambda c: "/".join(c))
def test_selector_floor_bounds_the_built_plans(case):
    """Every round trip's floors bound its plan (``check_round_trip_floors``: plan_floor, the deferred
    bounds); each over-fetching one counts ``2|S| + 1 >= 3`` selector VALU, at most its plan's
    ``valu_lane_selector``, and its plan runs correctly on the emulator; the other designs count none."""
    ctx = _case(*case)
    fetched = 0
    for _, acc, plan in check_round_trip_floors(ctx, case):
        if not acc.design.over_fetch:
            assert acc.selector_valu == 0
            continue
        assert acc.selector_valu >= 3
        if plan is not None:
            fetched += 1
            assert acc.selector_valu <= estimate_overhead(plan)["valu_lane_selector"]
            assert verify(plan).ok
    assert fetched
