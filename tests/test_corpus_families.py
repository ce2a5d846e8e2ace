"""The corpora of the other target families (benchmarks/make_corpus.py --family F, stored as
benchmarks/data/triton_F_corpus.json): well-formed, covering what they promise, their counts
summing to their totals, and their layouts (Triton's to_linear_layout when they were made) equal
to linlayout's encodings of the recorded Triton params and, where Triton 3.9.0 is installed, to
the wheel's answer for a sample asked again now."""

from __future__ import annotations

import json

import pytest

import needs

from linlayout.cli import main
from linlayout.cli.bench import (SHARED_MEMORY_KEYS, bank_conflicts, kernel_plan, modelled, outside_valu_measured,
                                  ptx_mix, triton_exceeds_target_lds, triton_whole_conversion, with_outside_valu,
                                  with_setup)
from linlayout.dtypes import dtype_bits
from linlayout.encodings import encoding_from_params, from_triton
from linlayout.encodings.gluon import gluon_source
from linlayout.layout import LinearLayout
from linlayout.lowering.beyond_identity import ours_beyond_identity
from linlayout.lowering.isa import CLASS_KEYS, COUNT_KEYS
from linlayout.lowering.conversion import lower_conversion
from linlayout.lowering.plan_counts import plan_ptx_counts
from linlayout.lowering.ptx_counts import PTX_CLASS_KEYS, PTX_COUNT_KEYS
from linlayout.synth.plan import packed_src
from repo_data import family_corpus
from triton_oracle import TRITON_VERSION, ask_triton, triton_version

#: family -> (format, archs, count keys, class keys)
FAMILIES = {
    "nvidia": ("triton_nvidia_convert_baseline/v1", {"sm_80", "sm_90"}, PTX_COUNT_KEYS, PTX_CLASS_KEYS),
    "wave32": ("triton_amd_convert_baseline/v1", {"gfx1100", "gfx1200", "gfx1250"}, COUNT_KEYS, CLASS_KEYS),
}
CASE_KEYS = {"name", "arch", "dtype", "shape", "num_warps", "src", "dst", "triton", "triton_src_params",
             "triton_dst_params", "triton_src", "triton_dst", "triton_lds_bytes", "counted_by", "triton_kernel_shared"}
#: The families whose every case carries the load/store-line VALU beyond the identity kernels
#: (make_corpus.valu_beyond_identity; amdgcn only).
OUTSIDE_VALU_FAMILIES = ("amd", "wave32")
#: Cases of each side's layout asked of the wheel again (every n-th case of the file).
WHEEL_SAMPLE = 12


def _cases(family: str) -> list[dict]:
    return family_corpus(family)["cases"]


def _kinds(params: dict) -> set[str]:
    """The encoding names in ``params`` and its parents; nvidia_mma with its major version."""
    name = params.get("encoding", "nvidia_mma" if "versionMajor" in params else "amd_wmma")
    if name == "nvidia_mma":
        name = f"nvidia_mma_v{params['versionMajor']}"
    if name == "amd_wmma":
        name = f"wmma_v{params['version']}_{params['instrShape'][0]}x{params['instrShape'][2]}"
    parent = params.get("parent")
    return {name} | (_kinds(parent) if parent is not None else set())


def _layout(case: dict, side: str) -> LinearLayout:
    return from_triton(dict(case[f"triton_{side}_params"], shape=case["shape"]))


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_format(family):
    data = family_corpus(family)
    fmt, archs, count_keys, class_keys = FAMILIES[family]
    assert data["format"] == fmt and data["triton"] == "3.9.0"
    for c in data["cases"]:
        assert set(c) == CASE_KEYS | ({"triton_outside_valu"} if family in OUTSIDE_VALU_FAMILIES else set()), c["name"]
        assert c["arch"] in archs and c["counted_by"] == "source_line"
        assert set(c["triton"]) == set(count_keys), c["name"]
        assert c["triton"]["total"] == sum(c["triton"][k] for k in class_keys), c["name"]
        # the whole kernel's shared-memory accesses hold the region's (the region is part of the kernel)
        kernel = c["triton_kernel_shared"]
        assert set(kernel) <= set(SHARED_MEMORY_KEYS) and all(kernel.values()), c["name"]
        assert all(c["triton"].get(k, 0) <= kernel.get(k, 0) for k in SHARED_MEMORY_KEYS), c["name"]


def test_nvidia_coverage():
    cases = _cases("nvidia")
    assert len(cases) >= 120
    assert {c["arch"] for c in cases} == {"sm_80", "sm_90"}
    assert {c["dtype"] for c in cases} == {"fp32", "fp16", "bf16", "fp8", "i8"}
    assert {c["num_warps"] for c in cases} == {1, 2, 4, 8}
    assert {len(c["shape"]) for c in cases} == {1, 2}
    assert all(16 <= n <= 128 for c in cases if len(c["shape"]) == 2 for n in c["shape"])
    kinds = set().union(*(_kinds(c[f"triton_{s}_params"]) for c in cases for s in ("src", "dst")))
    assert {"nvidia_mma_v2", "nvidia_mma_v3", "dot_operand_of_nvidia_mma", "blocked", "slice"} <= kinds
    operands = {(p["opIdx"], p["kWidth"]) for c in cases for s in ("src", "dst")
                for p in [c[f"triton_{s}_params"]] if p["encoding"] == "dot_operand_of_nvidia_mma"}
    assert {(0, 1), (0, 2), (0, 4), (1, 1), (1, 2), (1, 4)} <= operands
    # the blog's example: an MMA accumulator to the 8-bit operand A (kWidth 4), on both archs
    blog = [c for c in cases if c["name"].endswith("[blog]")]
    assert sorted(c["arch"] for c in blog) == ["sm_80", "sm_90"]
    assert all(c["dtype"] == "fp8" and c["triton_dst_params"]["kWidth"] == 4 for c in blog)
    # transposes: blocked -> blocked with the order swapped
    assert any(c["triton_src_params"].get("order") == [1, 0] and c["triton_dst_params"].get("order") == [0, 1]
               for c in cases)


def test_wave32_coverage():
    cases = _cases("wave32")
    assert len(cases) >= 100
    assert {c["arch"] for c in cases} == {"gfx1100", "gfx1200", "gfx1250"}
    assert {c["dtype"] for c in cases} == {"fp32", "fp16", "bf16", "fp8", "i8"}
    assert {c["num_warps"] for c in cases} == {1, 2, 4, 8}
    assert {len(c["shape"]) for c in cases} == {1, 2}
    kinds = set().union(*(_kinds(c[f"triton_{s}_params"]) for c in cases for s in ("src", "dst")))
    # every WMMA version's accumulators: 16x16x16 on gfx11/gfx12, K = 4/32/64 and M = 32 on gfx1250
    assert {"wmma_v1_16x16", "wmma_v2_16x16", "wmma_v3_16x4", "wmma_v3_16x32", "wmma_v3_16x64", "wmma_v3_32x64",
            "amd_wmma_dot_operand", "blocked", "slice"} <= kinds
    for arch in ("gfx1100", "gfx1200", "gfx1250"):
        here = [c for c in cases if c["arch"] == arch]
        assert {p["opIdx"] for c in here for p in [c["triton_dst_params"]]
                if p["encoding"] == "amd_wmma_dot_operand"} == {0, 1}, arch
        assert any(c["triton_src_params"].get("isTransposed") is not None and c["triton_dst_params"].get(
            "isTransposed") == (not c["triton_src_params"]["isTransposed"]) for c in here), arch
    assert any(c["triton_src_params"].get("order") == [1, 0] and c["triton_dst_params"].get("order") == [0, 1]
               for c in cases)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_layouts_are_linlayouts_encodings(family):
    for c in _cases(family):
        for side in ("src", "dst"):
            assert _layout(c, side) == LinearLayout.from_json(c[side]), f"{c['name']} {c['arch']} {side}"


@pytest.mark.skipif(triton_version() != TRITON_VERSION, reason=f"triton=={TRITON_VERSION} is not installed")
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_stored_layouts_are_the_wheels(family):
    """The stored layout JSON is what the installed wheel's to_linear_layout answers now."""
    cases = _cases(family)
    sample = cases[:: len(cases) // WHEEL_SAMPLE][:WHEEL_SAMPLE]
    requests = []
    for c in sample:
        for side in ("src", "dst"):
            params = dict(c[f"triton_{side}_params"])
            encoding = encoding_from_params(params.pop("encoding"), params)
            requests.append({"op": "layout", "gluon": gluon_source(encoding), "shape": c["shape"]})
    answers = ask_triton(requests)
    stored = [c[side] for c in sample for side in ("src", "dst")]
    for layout, answer in zip(stored, answers):
        assert "error" not in answer, answer
        assert {d: [list(b) for b in bases] for d, bases in layout["bases"].items()} == answer["bases"]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_bench_rows_are_computed_per_case(family, capsys, tmp_path, monkeypatch):
    """``linlayout bench conversions --corpus F``: one row per case, tagged with the family, with
    Triton's counts from the file and either the planner's refusal naming the target or our
    counts computed again here -- NVIDIA: the plan's in PTX classes (plan_counts); wave32: the
    compiled conversion kernel's ISA, equal to the plan's instructions -- for the bench kernel's plan
    (``kernel_plan``: the src loaded as the kernel loads it; on wave32 the packing chosen where the
    kernel moves elements one at a time)."""
    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    assert main(["bench", "conversions", "--corpus", family, "--cases", "3", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    cases = _cases(family)[:3]
    assert [(r["set"], r["name"], r["arch"]) for r in result["cases"]] == [
        (family, c["name"], c["arch"]) for c in cases]
    for row, case in zip(result["cases"], cases):
        if "refused" in row:
            assert case["arch"] in row["refused"] and row["triton_total"] == case["triton"]["total"]
            continue
        src, dst = LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])
        plan = kernel_plan(src, dst, case["arch"], dtype_bits(case["dtype"]))
        planned_src = packed_src(plan.src, plan.element_bits) if plan.src_unpacked else plan.src
        assert row["repacked"] == [side for side, given, planned in (("src", src, planned_src), ("dst", dst, plan.dst))
                                   if given.bases["register"] != planned.bases["register"]]
        assert row.get("src_unpacked", False) == plan.src_unpacked
        nvidia = family == "nvidia"
        if nvidia:
            ours = plan_ptx_counts(plan)
        else:
            low = lower_conversion(plan, binary=False)
            ours = low.report["isa_counts"]
            assert row["plan_isa_differences"] == low.differences == {}
        assert row["triton"] == case["triton"] and row["ours"] == ours
        assert row["counted_by"] == ("plan" if nvidia else "isa")
        whole = triton_whole_conversion(case)
        assert row["triton_whole"] == whole and whole["total"] >= case["triton"]["total"]
        # the load/store-side VALU: Triton's from the file, ours beyond our identity kernels, and our
        # setup region (wave32 only)
        beyond = {"outside_valu": None, "setup": None} if nvidia else ours_beyond_identity(plan, low.compiled.isa)
        outside, setup = beyond["outside_valu"], beyond["setup"]
        assert row["triton_outside_valu"] == case.get("triton_outside_valu") and row["ours_outside_valu"] == outside
        assert row["ours_setup"] == setup and row["ours_outside_valu_failed"] is None
        assert row["ours_whole"] == with_outside_valu(with_setup(ours, setup), outside)
        priced = (ptx_mix(ours), ptx_mix(case["triton"]), ptx_mix(whole), ptx_mix(ours)) if nvidia else (
            ours, case["triton"], whole, with_outside_valu(with_setup(ours, setup), outside))
        conflicts = None if nvidia else bank_conflicts(plan, case, whole)  # Triton's stored for the amdgcn corpora
        assert row["bank_conflicts"] == conflicts and (conflicts is None) == nvidia
        assert row["modelled"] == modelled(plan, *priced, conflicts)
        assert row["modelled_conflict_blind"] == modelled(plan, *priced)
    assert result["summaries"][family]["refused"] == [
        f"{r['name']} {r['arch']} {r['dtype']}: {r['refused']}" for r in result["cases"] if "refused" in r]


def test_triton_whole_conversion_adds_the_shared_accesses_its_region_leaves_out():
    """A region with 4 LDS writes and no read, in a kernel with 4 of each: the 4 reads are the
    conversion's (the kernel uses LDS for nothing else) and join its counts; a class the region
    already counts in full adds nothing; a case without whole-kernel counts (the baseline) has none."""
    region = {"total": 10, "valu": 6, "lds_write": 4, "lds_read": 0}
    case = {"triton": region, "triton_kernel_shared": {"lds_write": 4, "lds_read": 4}}
    assert triton_whole_conversion(case) == {"total": 14, "valu": 6, "lds_write": 4, "lds_read": 4}
    assert case["triton"] == region  # the stored counts are not changed
    assert triton_whole_conversion({"triton": region}) is None


def test_triton_whole_conversion_adds_the_load_and_store_lines_valu():
    """The VALU Triton's load and store lines hold beyond its identity kernels' (``triton_outside_valu``)
    joins ``valu`` and ``total``; a case without the field has it not measured (its whole conversion
    the region and the shared-memory accesses alone), which ``outside_valu_measured`` tells apart
    from a measured zero."""
    region = {"total": 10, "valu": 6, "lds_write": 4, "lds_read": 0}
    case = {"triton": region, "triton_kernel_shared": {"lds_write": 4, "lds_read": 4},
            "triton_outside_valu": {"load": 3, "store": 160}}
    assert triton_whole_conversion(case) == {"total": 177, "valu": 169, "lds_write": 4, "lds_read": 4}
    assert outside_valu_measured(case)
    zero = dict(case, triton_outside_valu={"load": 0, "store": 0})
    unmeasured = {k: v for k, v in case.items() if k != "triton_outside_valu"}
    assert triton_whole_conversion(zero) == triton_whole_conversion(unmeasured) == {
        "total": 14, "valu": 6, "lds_write": 4, "lds_read": 4}
    assert outside_valu_measured(zero) and not outside_valu_measured(unmeasured)
    assert triton_whole_conversion(case, outside_valu=False) == triton_whole_conversion(unmeasured)


@pytest.mark.parametrize("family", OUTSIDE_VALU_FAMILIES)
def test_every_amdgcn_case_carries_its_load_and_store_lines_valu(family):
    """Both amdgcn corpora measure the load/store-line VALU on every case (a count per line, at least 0);
    the gfx1200 fp16 16-bit pair transpose of docs/benchmarks.md repacks 162 VALU on its store line."""
    cases = family_corpus(family)["cases"]
    for c in cases:
        assert set(c["triton_outside_valu"]) == {"load", "store"}, c["name"]
        assert all(isinstance(n, int) and n >= 0 for n in c["triton_outside_valu"].values()), c["name"]
    if family == "wave32":
        case = next(c for c in cases if (c["name"], c["arch"], c["dtype"], c["num_warps"])
                    == ("wmma2.16x16->blocked[1x4,t16x2,o10]", "gfx1200", "fp16", 1))
        assert case["triton_outside_valu"] == {"load": 0, "store": 162}
        assert triton_whole_conversion(case)["total"] == case["triton"]["total"] + 16 + 162


@needs.mlir
def test_bench_counts_the_load_and_store_lines_valu_in_the_whole_conversion(capsys, tmp_path, monkeypatch):
    """``linlayout bench conversions --baseline FILE`` on two crafted copies of a wave32 case, one with
    ``triton_outside_valu`` and one without: the row carries the field, its ``triton_whole`` and its
    modelled whole-conversion cycles count the VALU, ours beyond our identity kernels is measured
    for it (``ours_whole``) and not for the other (its whole conversions: the regions with the
    shared-memory accesses, on both sides, ours with our setup region), and the summary names the case
    without it as not measured."""
    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    stored = _cases("wave32")[0]
    measured = dict(stored, triton_outside_valu={"load": 5, "store": 7})
    unmeasured = {k: v for k, v in stored.items() if k != "triton_outside_valu"}
    path = tmp_path / "crafted.json"
    path.write_text(json.dumps({"format": "triton_amd_convert_baseline/v1", "cases": [measured, unmeasured]}))
    assert main(["bench", "conversions", "--baseline", str(path), "--isa-only", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    with_field, without = result["cases"]
    assert with_field["triton_outside_valu"] == {"load": 5, "store": 7} and without["triton_outside_valu"] is None
    assert with_field["triton_whole"]["total"] == without["triton_whole"]["total"] + 12
    assert with_field["triton_whole"]["valu"] == without["triton_whole"]["valu"] + 12
    assert with_field["ours"] == without["ours"] and without["ours_outside_valu"] is None
    assert with_field["ours_setup"] == without["ours_setup"] and with_field["ours_setup"]["total"] > 0
    assert without["ours_whole"] == with_setup(without["ours"], without["ours_setup"])
    assert set(with_field["ours_outside_valu"]) == {"load", "store"}
    assert with_field["ours_whole"] == with_outside_valu(with_setup(with_field["ours"], with_field["ours_setup"]),
                                                         with_field["ours_outside_valu"])
    assert with_field["modelled"]["instructions"]["triton_whole"] > without["modelled"]["instructions"]["triton_whole"]
    whole = result["summary"]["whole_conversion"]
    assert whole["cases"] == 2 and whole["outside_valu_not_measured"] == 1
    assert whole["triton_total"] == with_field["triton_whole"]["total"] + without["triton_whole"]["total"]
    assert whole["ours_total"] == with_field["ours_whole"]["total"] + without["ours_whole"]["total"]


def test_the_triton_kernels_that_exceed_their_targets_lds_are_named():
    """Six AMD corpus kernels (8 waves, 256x256 ``mfma32->mfma16T`` in fp32/fp16/bf16 on gfx90a and
    gfx942) take 128 KiB of LDS in one round on targets of 64 KiB; no other case of the three corpora
    exceeds its target."""
    over = [(c["name"], c["arch"], c["dtype"], c["triton_lds_bytes"])
            for family in ("amd", "nvidia", "wave32") for c in family_corpus(family)["cases"]
            if triton_exceeds_target_lds(c)]
    assert sorted(over) == sorted(("mfma32->mfma16T", arch, dtype, 131072)
                                  for arch in ("gfx90a", "gfx942") for dtype in ("fp32", "fp16", "bf16"))


@pytest.mark.skipif(triton_version() != TRITON_VERSION, reason=f"triton=={TRITON_VERSION} is not installed")
def test_refresh_measures_the_stored_cases_again_and_keeps_their_layouts(tmp_path):
    """``make_corpus.py --refresh``: two stored AMD cases (one whose Triton kernel uses LDS) come out
    field for field as stored; a stored layout that Triton no longer gives stops it, file untouched."""
    import subprocess
    import sys

    from repo_data import REPO

    data = family_corpus("amd")
    cases = [data["cases"][0], next(c for c in data["cases"] if c["triton_kernel_shared"])]
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps(dict(data, cases=cases)))

    def refresh():
        return subprocess.run([sys.executable, str(REPO / "benchmarks" / "make_corpus.py"), "--refresh", "--out",
                               str(path)], capture_output=True, text=True, timeout=600)

    done = refresh()
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(path.read_text())["cases"] == cases
    tampered = json.loads(path.read_text())
    tampered["cases"][0]["src"]["bases"]["lane"][0], tampered["cases"][0]["src"]["bases"]["lane"][1] = (
        tampered["cases"][0]["src"]["bases"]["lane"][1], tampered["cases"][0]["src"]["bases"]["lane"][0])
    path.write_text(json.dumps(tampered))
    done = refresh()
    assert done.returncode != 0 and "src" in done.stderr and "left as it was" in done.stderr
    assert json.loads(path.read_text()) == tampered
