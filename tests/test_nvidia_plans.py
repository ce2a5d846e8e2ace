"""The GPU harness of benchmarks/nvidia (run_plans.py, plan_runner.py): the host-side tiles a
conversion is checked on, the corpus cases, the round-trip kernels' text, Triton's kernel compiled
for sm_90 on the CPU, the report; the recorded GPU results against the corpus; and, on a machine
with an sm_90 GPU, nvcc and CuPy, the whole build-and-run of the blog's pair."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from linlayout import LayoutError
from linlayout.encodings.nvidia import NvidiaMma
from nvidia_scripts import RESULTS, script, sm90_gpu

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "benchmarks" / "data" / "triton_nvidia_corpus.json"


run_plans = script("run_plans")
plan_tiles = script("plan_tiles")
roundtrip_cuda = script("roundtrip_cuda")


# ------------------------------------------------------------------ tiles
def test_slot_indices_follow_the_mma_formulas():
    """mma.sync m16n8 accumulator, 4 warps along M: register r of lane l of warp w holds row
    16w + l/4 + 8 r1, column 2 (l % 4) + r0 + 8 (r >> 2) (PTX's C fragment, repeated every 8 columns)."""
    layout = run_plans._distributed(NvidiaMma(2, (4, 1), (16, 8)).to_linear_layout([64, 32]))
    got = plan_tiles.slot_indices(layout, 4)
    w, l, r = np.meshgrid(np.arange(4), np.arange(32), np.arange(16), indexing="ij")
    row = 16 * w + l // 4 + 8 * ((r >> 1) & 1)
    col = 2 * (l % 4) + (r & 1) + 8 * (r >> 2)
    assert got.shape == (4, 32, 16) and (got == row * 32 + col).all()


def test_slot_indices_of_a_broadcast_layout():
    """A dot operand's warps along K are broadcast: warps 0 and 1 hold the same elements."""
    mma = NvidiaMma(2, (2, 2), (16, 8))
    b = run_plans._distributed(mma.dot_operand_layout(1, 2, [32, 32]))
    got = plan_tiles.slot_indices(b, 4)
    assert (got[0] == got[2]).all() and (got[1] == got[3]).all() and not (got[0] == got[1]).all()


def test_planes_spell_every_index():
    index = np.arange(16 * 32)
    planes = plan_tiles.plane_count(index.size, 8)
    assert planes == 3  # 9 index bits: two 8-bit planes and the hashed one
    values = plan_tiles.plane_values(index, 8, planes)
    assert values.dtype == np.uint8
    assert ((values[0].astype(np.int64) | values[1].astype(np.int64) << 8) == index).all()
    bits = (values[2][:, None] >> np.arange(8)) & 1
    assert (bits.min(axis=0) == 0).all() and (bits.max(axis=0) == 1).all()  # no bit of the hashed plane is constant
    assert plan_tiles.plane_count(64 * 64, 16) == 2 and plan_tiles.plane_count(1, 32) == 2
    with pytest.raises(LayoutError, match="8, 16, 32 or 64"):
        plan_tiles.element_dtype(128)


def test_expected_destination_is_the_source_moved():
    """The expected destination slots hold, slot for slot, the value the source slots give the same element."""
    case = run_plans.blog_case(4)
    src, dst = plan_tiles.slot_tiles(case.src, case.dst, 8, 4)
    src_index = plan_tiles.slot_indices(case.src, 4).ravel()
    dst_index = plan_tiles.slot_indices(case.dst, 4).ravel()
    where = {int(e): i for i, e in enumerate(src_index)}
    for p in range(src.shape[0]):
        moved = src[p].ravel()[[where[int(e)] for e in dst_index]]
        assert (moved == dst[p].ravel()).all()
    tensor = plan_tiles.tensor_tiles(case.src, 8)
    assert (tensor[:, src_index] == src.reshape(src.shape[0], -1)).all()


def test_layouts_must_fit_the_kernel():
    case = run_plans.blog_case(1)
    with pytest.raises(LayoutError, match="1 warps, the kernel 4"):
        plan_tiles.slot_indices(case.src, 4)


# ------------------------------------------------------------------ cases and kernels
def test_blog_case_is_the_corpus_blog_pair():
    """The blog pair with 4 warps is the corpus's sm_80 [blog] case over a 64x32 tile."""
    doc = json.loads(CORPUS.read_text())
    blog = [c for c in doc["cases"] if c["name"].endswith("[blog]") and c["arch"] == "sm_80"]
    assert len(blog) == 1
    ours = run_plans.blog_case(4)
    mma = NvidiaMma(2, (4, 1), (16, 8))
    assert ours.src == run_plans._distributed(mma.to_linear_layout([64, 32]))
    assert blog[0]["triton_src_params"]["instrShape"] == [16, 8] and blog[0]["triton_dst_params"]["kWidth"] == 4


def test_corpus_cases_and_distinct():
    doc = json.loads(CORPUS.read_text())
    cases = run_plans.corpus_cases(CORPUS)
    assert len(cases) == sum(c["arch"].startswith("sm_") for c in doc["cases"]) >= 120
    assert all(not c.src.has_in_dim("block") and c.src.in_dim_size("lane") == 32 for c in cases)
    unique = run_plans.distinct(cases)
    keys = {c.key() for c in cases}
    assert len(unique) == len(keys) < len(cases)  # sm_80 and sm_90 share most pairs
    assert run_plans.distinct(unique + unique) == unique


@pytest.mark.parametrize("uses_shared", [False, True])
def test_roundtrip_kernel_text(uses_shared):
    text = roundtrip_cuda.roundtrip_kernel("k", "fwd", "back", "uint16_t", 16, 8, 4, 128, uses_shared)
    assert 'extern "C" __global__ void __launch_bounds__(128) k(const uint16_t* in' in text
    assert "fwd(x, y);" in text and "back(y_in, x_out);" in text and "fwd(x_in, y_out);" in text
    assert "unsigned xw[4], yw[2];" in text  # 8 and 4 16-bit slots, packed two to a word
    assert "blockIdx.x * 1024u + threadIdx.x * 8u" in text and "blockIdx.x * 512u + threadIdx.x * 4u" in text
    assert ("__syncthreads();" in text) == uses_shared
    assert "#pragma unroll 2\n  for (int i = 0; i < iterations; ++i)" in text  # no loop-carried copies


def test_paper_source_compiles_when_nvcc_is_here(tmp_path):
    if shutil.which("nvcc") is None:
        pytest.skip("needs nvcc")
    run_plans.nvcc_cubin(run_plans.paper_source(0), tmp_path / "paper.cubin")
    assert (tmp_path / "paper.cubin").stat().st_size > 0


def test_gluon_roundtrip_compiles_for_sm90_on_the_cpu():
    pytest.importorskip("triton", reason="needs Triton 3.9 (pip install -e '.[test]')")
    gluon_roundtrip = script("gluon_roundtrip")
    case = run_plans.blog_case(1)
    k = gluon_roundtrip.compile_roundtrip(case.src, case.dst, 8, 1)
    assert k.name == "roundtrip_2d" and k.scratch_args == 2 and k.cubin[:4] == b"\x7fELF"
    assert ".target sm_90a" in k.ptx and "shfl.sync" in k.ptx
    with pytest.raises(LayoutError, match="8, 16 or 32"):
        gluon_roundtrip.compile_roundtrip(case.src, case.dst, 64, 1)


def _c_ternary(expr: str, warp: int) -> int:
    """Value of ``(warp == Wu ? 0xMu : REST)`` chains (the only form Dialect.mask writes) at ``warp``."""
    import re

    while True:
        m = re.fullmatch(r"\(warp == (\d+)u \? 0x([0-9a-f]+)u : (.*)\)", expr)
        if m is None:
            return int(re.fullmatch(r"0x([0-9a-f]+)u", expr).group(1), 16)
        if int(m.group(1)) == warp:
            return int(m.group(2), 16)
        expr = m.group(3)


@pytest.mark.parametrize("masks", [[0, 0, 2**32 - 1, 2**32 - 1, 0, 0, 2**32 - 1, 2**32 - 1],
                                   [0, 0, 0, 0, 2**32 - 1, 2**32 - 1, 2**32 - 1, 2**32 - 1], [5, 5, 5, 5], [1, 2, 1, 2]])
def test_cuda_warp_masks_pick_each_warps_own(masks):
    """The per-warp lane masks of a plan's selects (the first GPU run found warps 0 and 4 of the
    first table given warp 7's mask: 16 corpus cases differed)."""
    from linlayout.lowering.cpp import dialect_for

    expr = dialect_for("sm_90", None).mask(masks, "warp")
    assert [_c_ternary(expr, w) for w in range(len(masks))] == masks


# ------------------------------------------------------------------ report
def _fake_run():
    manifest = {"build": {"nvcc": "x", "triton": "3.9.0"}, "cases": [
        {"name": "a", "element_bits": 8, "num_warps": 1, "kernels": {"ours": {}, "triton": {}}, "errors": {},
         "plan": {"strategy": ["lanes", "lanes"], "counts": [{"shfl": 2, "total": 2}, {"shfl": 2, "total": 2}]}},
        {"name": "b", "element_bits": 16, "num_warps": 4, "kernels": {"ours": {}, "triton": {}}, "errors": {},
         "plan": {"strategy": ["lds", "lanes"], "counts": [{"total": 3}, {"total": 1}]}},
        {"name": "n", "element_bits": 16, "num_warps": 4, "kernels": {"ours": {}, "triton": {}}, "errors": {},
         "plan": {"strategy": ["noop", "noop"], "counts": [{"total": 0}, {"total": 0}]}},
        {"name": "c", "element_bits": 32, "num_warps": 2, "kernels": {"triton": {}}, "errors": {"ours": "LayoutError: no"}},
    ]}
    ok = {"bit_exact": True, "errors": []}
    bad = {"bit_exact": False, "errors": ["dst(0, 0, 3, 1): got 0x5 want 0x7"]}
    results = {"device": "GPU", "iterations": 8, "timing_ctas": 4, "cases": [
        {"name": "a", "check_1": {"ours": ok, "triton": ok}, "check_k": {"ours": ok, "triton": ok},
         "time": {"ours": {"us": 2.0}, "triton": {"us": 4.0}}},
        {"name": "b", "check_1": {"ours": bad, "triton": ok}, "check_k": {"ours": ok, "triton": ok},
         "time": {"ours": {"us": 8.0}, "triton": {"us": 4.0}}},
        {"name": "c", "check_1": {"triton": ok}, "check_k": {"triton": ok}, "time": {"triton": {"us": 1.0}}},
        {"name": "n", "check_1": {"ours": ok, "triton": ok}, "check_k": {"ours": ok, "triton": ok},
         "time": {"ours": {"us": 3.0}, "triton": {"us": 1.0}}},
    ]}
    return results, manifest


def test_summary_counts_failures_and_ratios():
    s = run_plans.summarize(*_fake_run())
    assert (s["cases"], s["ours_cases"], s["ours_bit_exact"], s["triton_bit_exact"]) == (4, 4, 2, 4)
    assert s["timed_pairs"] == 2 and s["geomean_ours_over_triton"] == pytest.approx(1.0) and s["ours_faster"] == 1
    assert s["no_instruction_pairs"] == 1  # "n": timed, but out of the mean
    text = run_plans.markdown(s, "CMD")
    assert "our plans bit-exact: **2 of 4** cases" in text and "Command: `CMD`" in text
    assert "- b: ours differs: dst(0, 0, 3, 1): got 0x5 want 0x7" in text
    assert "- c: ours build: LayoutError: no" in text


# ------------------------------------------------------------------ the recorded GPU run
RECORDED = json.loads((RESULTS / "plans.json").read_text())
RUNS = json.loads((RESULTS / "plans_runs_h200.json").read_text())


def test_recorded_run_covers_the_corpus():
    """One row per distinct NVIDIA pair of the corpus plus the two blog tiles, in build order."""
    cases = run_plans.distinct([run_plans.blog_case(1), run_plans.blog_case(4)] + run_plans.corpus_cases(CORPUS))
    assert [r["name"] for r in RECORDED["rows"]] == [c.name for c in cases] == [r["name"] for r in RUNS["cases"]]
    assert [(r["element_bits"], r["num_warps"]) for r in RECORDED["rows"]] == [(c.element_bits, c.num_warps)
                                                                              for c in cases]
    assert len(cases) >= 100


def test_recorded_run_every_plan_is_bit_exact():
    """Every pair was planned, emitted and compiled both ways, and ran bit-exact on the GPU (both
    checks, both directions), as did Triton's kernel and the paper's solution of the blog pair."""
    rows = RECORDED["rows"]
    assert all(not r["build_errors"] and not r["run_error"] for r in rows)
    assert all(r["ours"]["bit_exact"] and r["triton"]["bit_exact"] for r in rows)
    assert RECORDED["ours_bit_exact"] == RECORDED["ours_cases"] == RECORDED["triton_bit_exact"] == len(rows)
    blog = rows[0]
    assert blog["paper"]["bit_exact"] and blog["plan"]["strategy"] == ["lanes", "lanes"]


def test_recorded_summary_follows_from_the_raw_run():
    manifest = {"build": RUNS["build"], "cases": [
        {"name": r["name"], "element_bits": r["element_bits"], "num_warps": r["num_warps"], "plan": r["plan"],
         "errors": r["build_errors"], "kernels": dict.fromkeys(k for k in ("ours", "paper", "triton") if k in r)}
        for r in RECORDED["rows"]]}
    again = run_plans.summarize(RUNS, manifest)
    assert again == RECORDED
    ratios = [r["ratio"] for r in RECORDED["rows"] if "ratio" in r and any(c.get("total") for c in r["plan"]["counts"])]
    assert RECORDED["geomean_ours_over_triton"] == pytest.approx(float(np.exp(np.mean(np.log(ratios)))))


@pytest.mark.parametrize("folder,forced_sides", [("calibration", (83, 112)), ("calibration/unrolled", (60, 140))])
def test_recorded_calibration_follows_from_its_raw_run(folder, forced_sides):
    """The calibration runs (docs/nvidia_facts.md section 8; the first with the harness's timed loop
    rolled, the second unrolled by two): every side bit-exact, the forced strategies among them,
    and each summary recomputed from the runner's output."""
    calibration = json.loads((RESULTS / folder / "plans.json").read_text())
    runs = json.loads((RESULTS / folder / "runs_h200.json").read_text())
    manifest = {"build": runs["build"], "cases": [
        {"name": r["name"], "element_bits": r["element_bits"], "num_warps": r["num_warps"], "plan": r["plan"],
         "errors": r["build_errors"],
         "kernels": dict.fromkeys(k for k in r if k in ("ours", "paper", "triton") or k.startswith("ours_"))}
        for r in calibration["rows"]]}
    assert run_plans.summarize(runs, manifest) == calibration
    sides = [k for r in calibration["rows"] for k in r if k.startswith("ours_")]
    assert (sides.count("ours_registers"), sides.count("ours_lds")) == forced_sides
    assert all(r[k]["bit_exact"] for r in calibration["rows"] for k in r if k.startswith("ours"))


def test_variant_sources_keep_the_forced_plans_that_differ():
    """The blog pair's default plans are shuffles: forced to registers they are the same plans (left
    out), forced to shared memory they differ (side ``ours_lds``, its own kernel)."""
    case = run_plans.blog_case(1)
    default = run_plans.our_plans(case)
    made = run_plans.variant_sources(case, 7, ["registers", "lds"], default)
    assert list(made) == ["ours_lds"]
    source, info = made["ours_lds"]
    assert info["strategy"] == ["lds", "lds"] and 'extern "C" __global__' in source and "c7_ours_lds(" in source


def test_variant_table_lists_forced_sides_against_triton():
    rows = [{"name": "p", "element_bits": 32, "num_warps": 2, "ratio": 2.0, "triton": {"us": 10.0},
             "ours_registers": {"us": 13.0}},
            {"name": "q", "element_bits": 8, "num_warps": 1, "ratio": 0.5, "triton": {"us": 4.0}}]
    lines = run_plans.variant_table(rows)
    assert lines[-3:] == ["| case | bits | warps | default | ours_registers |", "|---|---|---|---|---|",
                          "| p | 32 | 2 | 2.00 | 1.30 |"]
    assert run_plans.variant_table(rows[1:]) == []


mio_micro = script("mio_micro")


def test_mio_micro_table_is_the_recorded_one():
    """The recorded microbenchmark (docs/nvidia_facts.md section 8): its markdown follows from its
    JSON, and the rates the cost model takes from it are there."""
    doc = json.loads((RESULTS / "mio_micro.json").read_text())
    text = (RESULTS / "mio_micro.md").read_text()
    assert text == "# NVIDIA lane and shared-memory instructions, measured\n\n" + mio_micro.table(doc)
    at32 = {r["op"]: r["warp_ops_per_sm_cycle"] * r["instructions_per_op"] for r in doc["rows"]
            if r["kind"] == "throughput" and r["warps"] == 32}
    assert round(at32["shfl.sync.idx.b32"], 1) == 1.0 and round(at32["ld.shared.v4.b32"], 2) == 0.25
    assert round(at32["selp.b32"], 1) == 2.0 and doc["sass_opcodes"]["_Z10throughputILi10EEvijPyPj"]["NOP"] > 100


def test_mio_micro_counts_sass_opcodes_per_function():
    sass = ("\t\tFunction : k1\n        /*0000*/                   SHFL.IDX PT, R5, R5, R36, 0x1f ;\n"
            "        /*0010*/               @!P1 SEL R4, R40, R43, !P1 ;\n        /*0020*/  SEL R4, R4, R3, P0 ;\n"
            "\t\t..........\n\t\tFunction : k2\n        /*0000*/                   NOP ;\n")
    assert mio_micro.sass_opcodes(sass) == {"k1": {"SEL": 2, "SHFL.IDX": 1}, "k2": {"NOP": 1}}


access_width = script("access_width")


def _shared_access_bytes(plan) -> set[int]:
    return {st.width_bytes for st in plan.steps if st.lds and hasattr(st, "width_bytes")}


def test_access_width_caps_the_shared_accesses_and_restores_the_planner():
    """Within ``four_byte_accesses`` an sm_90 round trip moves at most 4 bytes a lane per access (and
    still verifies); after it the planner makes its 16-byte accesses again, the same plan as before."""
    from linlayout.synth.convert import plan_conversion

    case = next(c for c in access_width.round_trip_pairs() if c.name.startswith("blocked[1x4,t2x16,o10]"))
    before = plan_conversion(case.src, case.dst, "sm_90", 32)
    with access_width.four_byte_accesses():
        narrow = plan_conversion(case.src, case.dst, "sm_90", 32)
    after = plan_conversion(case.src, case.dst, "sm_90", 32)
    assert 16 in _shared_access_bytes(before) and _shared_access_bytes(after) == _shared_access_bytes(before)
    assert narrow.verified and max(_shared_access_bytes(narrow)) == 4
    assert after.dumps() == before.dumps()


def test_access_width_pairs_and_recorded_report():
    """The 38 fp32 pairs of 2 to 8 warps with a shared-memory plan, and the recorded summary follows
    from its rows (docs/nvidia_facts.md section 7)."""
    pairs = access_width.round_trip_pairs()
    assert len(pairs) == 38 and all(c.element_bits == 32 and c.num_warps >= 2 for c in pairs)
    doc = json.loads((RESULTS / "access_width_h200.json").read_text())
    assert doc["pairs"] == len(doc["rows"]) == 38 and doc["bit_exact"]
    ratios = [r["narrow_over_wide"] for r in doc["rows"]]
    assert doc["narrow_faster"] == sum(x < 1 for x in ratios) == 2
    assert round(float(np.exp(np.mean(np.log(ratios)))), 3) == round(doc["geomean"]["narrow_over_wide"], 3) == 1.064


def test_access_width_ctas_runs_recorded():
    """The recorded runs of the 16-byte build at 1 to 8 CTAs per SM (docs/nvidia_facts.md section 7):
    ours / Triton 0.96 to 1.01 at every count, every run bit-exact."""
    runs = json.loads((RESULTS / "ctas_per_sm_h200.json").read_text())["runs"]
    assert [r["ctas_per_sm"] for r in runs] == [1, 1, 2, 4, 8, 8] and all(r["bit_exact"] for r in runs)
    assert [round(r["ours_over_triton"], 3) for r in runs] == [0.974, 0.964, 1.007, 0.987, 0.967, 0.967]


@pytest.mark.parametrize("name, text, match", [
    ("run1.json", {"cases": []}, "run1.json: a results file must be named wide_\\* or narrow_\\*"),
    ("wide_1.json", {}, "wide_1.json: not a plan_runner result \\(KeyError"),
    ("wide_2.json", {"cases": []}, "wide_2.json: no case in it"),
    ("wide_3.json", None, "wide_3.json: not a plan_runner result \\(FileNotFoundError"),
])
def test_access_width_report_refuses_bad_results_in_one_line(tmp_path, capsys, name, text, match):
    path = tmp_path / name
    if text is not None:
        path.write_text(json.dumps(text))
    assert access_width.main(["report", str(path), "--out", str(tmp_path / "out.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("access_width.py: error: ")
    assert re.search(match, err), err
    assert not (tmp_path / "out.json").exists()


# ------------------------------------------------------------------ on a GPU
@pytest.mark.skipif(not sm90_gpu(("nvcc",), ("cupy",)), reason="needs an sm_90 GPU with nvcc and CuPy")
def test_blog_pair_on_the_gpu(tmp_path):
    """Ours and the paper's solution bit-exact; Triton's kernel too where this Triton compiles it
    (the Gluon kernel is written for Triton 3.9)."""
    triton = importlib.util.find_spec("triton") is not None
    manifest = run_plans.build([run_plans.blog_case(1), run_plans.blog_case(4)], tmp_path, triton=triton)
    assert [set(e["kernels"]) >= {"ours"} for e in manifest["cases"]] == [True, True]
    assert "paper" in manifest["cases"][0]["kernels"]
    plan_runner = script("plan_runner")
    doc, lost = plan_runner.run(tmp_path, tmp_path / "results.json", iterations=4, ctas_per_sm=1, warmup=1, repeats=2)
    assert not lost and json.loads((tmp_path / "results.json").read_text()) == doc
    for row, entry in zip(doc["cases"], manifest["cases"]):
        assert "error" not in row
        for check in ("check_1", "check_k"):
            assert set(row[check]) == set(entry["kernels"]) and all(v["bit_exact"] for v in row[check].values())


def test_our_plans_take_the_objective_asked_for():
    """``run_plans.py build --objective``: both directions planned under it; without it, the target's
    default (latency on NVIDIA)."""
    case = run_plans.blog_case(1)
    forward, backward, _ = run_plans.our_plans(case, objective="concurrent")
    assert (forward.objective, backward.objective) == ("concurrent", "concurrent")
    assert run_plans.our_plans(case)[0].objective == "latency"


def test_corpus_losses_are_the_bench_losses(tmp_path):
    """``corpus_cases(..., losses_only=True)`` keeps exactly the cases whose ``linlayout bench
    conversions`` row counts more PTX instructions for ours than for Triton (the bench's losses), in
    corpus order, on a slice of the corpus that holds losses and wins."""
    from linlayout.cli.bench import bench_case, summarize

    doc = json.loads(CORPUS.read_text())
    rows = [bench_case(c) for c in doc["cases"]]
    assert summarize(rows)["losses"] == sum(r["ours"]["total"] > r["triton"]["total"] for r in rows) > 0
    losing = [c for c, r in zip(doc["cases"], rows) if r["ours"]["total"] > r["triton"]["total"]]
    picked = losing[:3] + [c for c in doc["cases"] if c not in losing][:5]
    part = tmp_path / "part.json"
    part.write_text(json.dumps(dict(doc, cases=picked)))
    kept = run_plans.corpus_cases(part, losses_only=True)
    assert [k.name for k in kept] == [f"{c['name']} {c['arch']} {c['dtype']} w{c['num_warps']}" for c in losing[:3]]


def test_a_refused_case_is_no_loss(monkeypatch):
    """``corpus_cases(..., losses_only=True)`` judges a case by the bench's row or refusal
    (``bench_or_refusal``): a case the planner refuses is not a loss (a refusal was a traceback)."""
    import linlayout.cli.bench as bench

    case = json.loads(CORPUS.read_text())["cases"][0]

    def refuse(*args, **kwargs):
        raise LayoutError("refused here")

    monkeypatch.setattr(bench, "bench_case", refuse)
    assert run_plans.loses_to_triton(case) is False
