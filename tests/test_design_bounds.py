"""benchmarks/design_bounds.py: on AMD corpus cases every deferred design's bounds are at most its round
trips' least plan floor, a design the exact address VALU prunes is needless, and the wrappers are
restored."""

import json

from benchmarks.bench_conversions_plan import CORPORA, _every_distinct
from benchmarks.design_bounds import BoundRecorder, summary
from linlayout.synth import lds_path


def test_bounds_are_lower_bounds_on_corpus_designs():
    before = (lds_path.DesignPool.by_floor, lds_path.DesignPool._make)
    cases = _every_distinct(json.loads(CORPORA["amd"].read_text())["cases"], 40)
    with BoundRecorder() as recorder:
        assert lds_path.DesignPool.by_floor is not before[0]
        for case in cases:
            recorder.plan(case)
    assert (lds_path.DesignPool.by_floor, lds_path.DesignPool._make) == before
    res = summary(recorder)
    assert res["cases"] == len(cases) and res["made"] > 0
    assert res["above_exact"] == 0
    for r in recorder.rows:
        assert r["gaps"]["cost"] >= 0 and r["gaps"]["instructions"] >= 0
        assert r["gaps"]["issue"] >= 0 and r["gaps"]["pipe"] >= 0 and r["gaps"]["address_valu"] >= 0
        assert r["needless"] or not r["address_pruned"]
    assert res["needless"] >= res["address_pruned"]
