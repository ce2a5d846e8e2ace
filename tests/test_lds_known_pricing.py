"""An LDS round trip is priced from what its accesses already know (convert.lds_plan): its DS depth
(``lds_path.ROUND_TRIP_DS_DEPTH``), its stores' and loads' tuple copies (``LdsAccesses.register_steps``) and
its accesses' cycles by form (``LdsAccesses.access_cycles``).  Counted again from the plan's steps
alone, every one of them, the setup and the cost with all its parts are the same."""

import json
from pathlib import Path

import pytest

from linlayout import LayoutError, LinearLayout
from linlayout.synth import cost, lds_path
from linlayout.synth.context import ConversionContext
from linlayout.synth.convert import candidate_plans
from linlayout.synth.steps import Movmatrix

BITS = {"fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "i8": 8}
DATA = Path(__file__).resolve().parent.parent / "benchmarks" / "data"


def _cases(name: str, step: int) -> list[dict]:
    return json.loads((DATA / name).read_text())["cases"][::step]


@pytest.mark.parametrize("corpus, step, src_tuple_dwords, dst_tuple_dwords", [
    ("triton_amd_corpus.json", 23, cost.SRC_TUPLE_DWORDS, cost.DST_TUPLE_DWORDS),
    ("triton_amd_corpus.json", 37, 1, 2),
    ("triton_amd_corpus.json", 31, cost.SRC_TUPLE_DWORDS, 4),
    ("triton_wave32_corpus.json", 29, cost.SRC_TUPLE_DWORDS, 2),
    ("triton_nvidia_corpus.json", 29, cost.SRC_TUPLE_DWORDS, 4),
])
def test_round_trip_priced_as_counted(corpus: str, step: int, src_tuple_dwords: int, dst_tuple_dwords: int) -> None:
    checked = 0
    for case in _cases(corpus, step):
        src, dst = LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])
        element_bits = BITS[case["dtype"]]
        try:
            plans = candidate_plans(src, dst, case["arch"], element_bits, strategy="lds",
                                    src_tuple_dwords=src_tuple_dwords, dst_tuple_dwords=dst_tuple_dwords, prune=False)
        except LayoutError:
            continue
        cm = ConversionContext.create(src, dst, case["arch"], element_bits, None, "lds", None,
                                      src_tuple_dwords, dst_tuple_dwords).cost_model
        # the round trips alone (a plan with a movmatrix stage is priced afresh, convert._movmatrix_candidates)
        for plan in (p for p in plans if p.strategy == "lds" and not any(isinstance(st, Movmatrix) for st in p.steps)):
            assert cost.ds_depth(plan) == lds_path.ROUND_TRIP_DS_DEPTH
            assert cost.estimate_overhead(plan, src_tuple_dwords=src_tuple_dwords,
                                          dst_tuple_dwords=dst_tuple_dwords) == plan.overhead
            assert cost.plan_cost(plan, cm) == (plan.cost, plan.cost_detail)
            checked += 1
    assert checked >= 20
