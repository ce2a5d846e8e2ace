"""The public conversion corpus (benchmarks/data/triton_amd_corpus.json, made by
benchmarks/make_corpus.py): well-formed, covering what it promises, its layouts putting the same
elements in each lane as linlayout's encodings of the recorded Triton params, and a sample of ten
cases that plans and verifies."""

from __future__ import annotations

import json

import pytest

import needs
from linlayout.cli import main
from linlayout.dtypes import dtype_bits
from linlayout.encodings import from_triton
from linlayout.layout import LinearLayout
from linlayout.lowering.isa import CLASS_KEYS, COUNT_KEYS
from linlayout.synth.convert import plan_conversion
from linlayout.synth.emulator import verify
from repo_data import baseline_cases, corpus

CASES = corpus()["cases"]
#: Ten cases spread evenly over the file (which cycles through arch and dtype, so they vary in both).
SAMPLE = CASES[:: len(CASES) // 10][:10]


def _kinds(params: dict) -> set[str]:
    """The encoding names in ``params`` and its parents, MFMA ones with their instruction size."""
    name = params["encoding"]
    if name == "amd_mfma":
        name = f"mfma{params['instrShape'][0]}{'T' if params['isTransposed'] else ''}"
    parent = params.get("parent")
    if parent is None:
        return {name}
    return {name} | _kinds(dict(parent, encoding=parent.get("encoding", "amd_mfma")))


def test_format_matches_the_baseline():
    data = corpus()
    assert data["format"] == "triton_amd_convert_baseline/v1" and data["triton"] == "3.9.0"
    base_keys = set(baseline_cases()[0])
    for c in CASES:
        assert base_keys <= set(c), c["name"]
        assert set(c["triton"]) == set(COUNT_KEYS)
        assert c["triton"]["total"] == sum(c["triton"][k] for k in CLASS_KEYS), c["name"]
        assert c["counted_by"] == "source_line"


def test_coverage():
    assert len(CASES) >= 300
    assert {c["arch"] for c in CASES} == {"gfx90a", "gfx942", "gfx950"}
    assert {c["dtype"] for c in CASES} == {"fp32", "fp16", "bf16", "fp8", "i8"}
    assert {c["num_warps"] for c in CASES} == {1, 2, 4, 8}
    assert {len(c["shape"]) for c in CASES} == {1, 2}
    kinds = set().union(*(_kinds(c[f"triton_{s}_params"]) for c in CASES for s in ("src", "dst")))
    assert {"mfma16", "mfma16T", "mfma32", "mfma32T", "amd_mfma_dot_operand", "blocked", "slice"} <= kinds
    assert {(c["triton_dst_params"].get("opIdx"), c["triton_dst_params"].get("kWidth")) for c in CASES
            if c["triton_dst_params"]["encoding"] == "amd_mfma_dot_operand"} >= {(0, 4), (1, 4), (0, 8), (1, 8)}


def _per_lane(layout: LinearLayout) -> dict:
    """What a layout puts in each lane and wave, up to the order of its registers: the lane, warp
    and block bases and the set of its nonzero register bases."""
    bases = layout.bases
    return {**{d: bases.get(d, []) for d in ("lane", "warp", "block")},
            "register": sorted(b for b in bases["register"] if any(b))}


def test_layouts_put_the_same_elements_in_each_lane_as_linlayouts_encodings():
    """Triton's to_linear_layout (stored) and linlayout.encodings of the same params put the same
    elements in every lane and wave (the register order may differ: next test)."""
    for c in CASES:
        for side in ("src", "dst"):
            ours = from_triton(dict(c[f"triton_{side}_params"], shape=c["shape"]))
            assert _per_lane(ours) == _per_lane(LinearLayout.from_json(c[side])), f"{c['name']} {c['arch']} {side}"


def test_layouts_are_linlayouts_encodings():
    for c in CASES:
        for side in ("src", "dst"):
            ours = from_triton(dict(c[f"triton_{side}_params"], shape=c["shape"]))
            assert ours == LinearLayout.from_json(c[side]), f"{c['name']} {c['arch']} {side}"


@pytest.mark.parametrize("case", SAMPLE, ids=lambda c: f"{c['name']}-{c['arch']}-{c['dtype']}")
def test_sample_plans_and_verifies(case):
    src, dst = LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])
    plan = plan_conversion(src, dst, case["arch"], dtype_bits(case["dtype"]))
    result = verify(plan)
    assert result.ok, result.message


@needs.mlir
def test_bench_runs_the_corpus_beside_the_baseline(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    assert main(["bench", "conversions", "--corpus", "--cases", "1", "--arch", "gfx950", "--isa-only", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    first = next(c for c in CASES if c["arch"] == "gfx950")
    assert [(row["set"], row["name"]) for row in r["cases"]] == [
        ("baseline", next(c for c in baseline_cases() if c["arch"] == "gfx950")["name"]), ("corpus", first["name"])]
    assert r["cases"][1]["triton"] == first["triton"]
    assert r["summaries"]["corpus"]["cases"] == 1 and r["summaries"]["baseline"] == r["summary"]


def test_make_corpus_reads_back_every_recorded_encoding():
    """make_corpus.py --refresh and benchmarks/triton_region_audit.py recompile a case from its recorded
    Triton params: make_corpus.spec_of inverts make_corpus.triton_params on every encoding of the
    three corpora (MFMA, WMMA, NVIDIA MMA, their dot operands, slices, blocked)."""
    import sys

    from repo_data import REPO, family_corpus

    sys.path.insert(0, str(REPO / "benchmarks"))
    import make_corpus

    for family in ("amd", "nvidia", "wave32"):
        for c in family_corpus(family)["cases"]:
            for side in ("src", "dst"):
                params = c[f"triton_{side}_params"]
                assert make_corpus.triton_params(make_corpus.spec_of(params)) == params, (family, c["name"])
