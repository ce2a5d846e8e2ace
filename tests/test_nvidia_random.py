"""The random-conversion kit of benchmarks/nvidia (``run_plans.py build --random N --seed S``,
random_cases.py): the cases a seed names, their layouts' properties, and the build folder they
make (manifest, tiles, CUDA sources) -- on the CPU, with a stand-in nvcc that keeps each batch's
source as its cubin, and with the real nvcc where it is installed."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import numpy as np
import pytest

from linlayout import LinearLayout
from linlayout.f2 import in_span
from nvidia_scripts import script

run_plans = script("run_plans")
plan_tiles = script("plan_tiles")
roundtrip_cuda = script("roundtrip_cuda")
random_cases = script("random_cases")

SEED = 11


def _flat(layout: LinearLayout, dim: str) -> list[int]:
    """The tensor vectors of ``dim``'s bits as integers (dim0's bits low)."""
    dim0_bits = layout.out_dims[0][1].bit_length() - 1
    return [b[0] | b[1] << dim0_bits for b in layout.bases.get(dim, [])]


def _has_store_twin(src: LinearLayout) -> bool:
    """Some register bit's vector is outside the other registers' span but inside their span with
    the lane and warp vectors: that register holds elements other lanes or warps hold."""
    regs, others = _flat(src, "register"), _flat(src, "lane") + _flat(src, "warp")
    return any(not in_span(regs[:i] + regs[i + 1:], r) and in_span(regs[:i] + regs[i + 1:] + others, r)
               for i, r in enumerate(regs))


def test_a_seed_names_the_same_cases():
    first, again = random_cases.random_cases(3, SEED), random_cases.random_cases(3, SEED)
    assert [c.key() for c in first] == [c.key() for c in again] and [c.name for c in first] == [c.name for c in again]
    assert [c.key() for c in random_cases.random_cases(2, SEED)] == [c.key() for c in first[:2]]
    assert [c.key() for c in random_cases.random_cases(3, SEED + 1)] != [c.key() for c in first]


def test_random_cases_are_distinct_round_trips_for_the_nvidia_targets():
    """40 cases of a seed: distinct keys; both layouts cover the tensor (the kernel converts back);
    32 lanes, the case's warps (1 to 8), an element size of 8 to 64 bits, a target of TARGETS; every
    STORE_TWIN_EVERY-th draw a store-twin case whose src has a register that other lanes or warps duplicate;
    the layouts recorded in the origin."""
    cases = random_cases.random_cases(40, SEED)
    assert len({c.key() for c in cases}) == 40
    for c in cases:
        assert c.src.is_surjective() and c.dst.is_surjective() and c.src.out_dims == c.dst.out_dims
        assert c.src.in_dim_size("lane") == c.dst.in_dim_size("lane") == 32
        assert c.src.in_dim_size("warp") == c.dst.in_dim_size("warp") == c.num_warps in (1, 2, 4, 8)
        assert c.element_bits in (8, 16, 32, 64) and c.arch in random_cases.TARGETS
        assert c.origin["twins"] == (c.origin["draw"] % random_cases.STORE_TWIN_EVERY == 0)
        if c.origin["twins"]:
            assert _has_store_twin(c.src)
        assert LinearLayout.from_json(c.origin["src"]) == c.src and LinearLayout.from_json(c.origin["dst"]) == c.dst
    assert {c.arch for c in cases} == set(random_cases.TARGETS) and {c.element_bits for c in cases} == {8, 16, 32, 64}
    assert any(c.origin["twins"] for c in cases) and len({c.objective for c in cases}) > 2


FAKE_NVCC = """#!/bin/sh
# stands in for nvcc: --version, or "-cubin -arch=A -O3 -o OUT IN" copying IN to OUT
if [ "$1" = "--version" ]; then echo "Cuda compilation tools, release 99.9, V99.9.9"; exit 0; fi
cp "$6" "$5"
"""


def _fake_nvcc(folder: Path) -> str:
    path = folder / "nvcc"
    path.write_text(FAKE_NVCC)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def _build(folder: Path, nvcc: str, count: int = 3) -> dict:
    assert run_plans.main(["build", "--random", str(count), "--seed", str(SEED), "--variants", "registers,lds",
                           "--out", str(folder), "--nvcc", nvcc]) == 0
    return json.loads((folder / "manifest.json").read_text())


def _without_timing(manifest: dict) -> dict:
    for entry in manifest["cases"]:
        for info in [entry.get("plan", {})] + list(entry.get("variant_plans", {}).values()):
            info.pop("plan_seconds", None)
    return manifest


def test_build_writes_exact_tiles_and_the_same_kit_again(tmp_path):
    """The manifest names the seed's cases with their targets, objectives and layouts, and every
    plan's kernel (no Triton); the tiles are the slot tiles of the layouts; a second build of the
    seed is the same folder (manifest but for planning times, tiles, sources)."""
    nvcc = _fake_nvcc(tmp_path)
    manifest = _build(tmp_path / "a", nvcc)
    cases = random_cases.random_cases(3, SEED)
    assert [e["name"] for e in manifest["cases"]] == [c.name for c in cases]
    tiles = np.load(tmp_path / "a" / "tiles.npz")
    for entry, case in zip(manifest["cases"], cases):
        assert (entry["arch"], entry["objective"], entry["element_bits"]) == (case.arch, case.objective, case.element_bits)
        assert entry["origin"]["src"] == case.src.to_json() and not entry["errors"] and "triton" not in entry["kernels"]
        assert entry["kernels"]["ours"]["name"] == f"c{entry['index']}_ours"
        src, dst = plan_tiles.slot_tiles(case.src, case.dst, case.element_bits, case.num_warps)
        i = entry["index"]
        assert tiles[f"{i}_src"].dtype == plan_tiles.element_dtype(case.element_bits)
        assert np.array_equal(tiles[f"{i}_src"], src) and np.array_equal(tiles[f"{i}_dst"], dst)
        forward, backward, _ = run_plans.our_plans(case)
        assert entry["plan"]["strategy"] == [forward.strategy, backward.strategy]
        for side, kernel in entry["kernels"].items():
            text = (tmp_path / "a" / kernel["cubin"]).read_text()
            assert f'extern "C" __global__ void __launch_bounds__({32 * case.num_warps}) {kernel["name"]}(' in text
    assert manifest["build"] == {"nvcc": "99.9, V99.9.9", "triton": None}  # no Triton kernels: no Triton version
    again = _build(tmp_path / "b", nvcc)
    assert _without_timing(again) == _without_timing(manifest)
    tiles_again = np.load(tmp_path / "b" / "tiles.npz")
    assert sorted(tiles_again.files) == sorted(tiles.files)
    assert all(np.array_equal(tiles_again[k], tiles[k]) for k in tiles.files)
    cubins = sorted(p.name for p in (tmp_path / "a").glob("*.cubin"))
    assert cubins and all((tmp_path / "a" / n).read_bytes() == (tmp_path / "b" / n).read_bytes() for n in cubins)


def _refused(capsys, argv: list[str], message: str):
    """``run_plans.py argv`` is refused when parsed: ``message`` in one stderr line, exit status 2."""
    with pytest.raises(SystemExit) as exit_:
        run_plans.main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1 and message in err, err


def test_build_and_report_refuse_bad_arguments_when_parsed(tmp_path, capsys):
    nvcc = ["--out", str(tmp_path), "--nvcc", _fake_nvcc(tmp_path)]
    _refused(capsys, ["build", "--random", "0", *nvcc], "--random 0: the number of cases must be positive")
    _refused(capsys, ["build", "--random", "-1", *nvcc], "--random -1: the number of cases must be positive")
    _refused(capsys, ["build", "--random", "3", "--corpus", "x.json", "--out", str(tmp_path)], "not allowed with argument")
    _refused(capsys, ["build", "--random", "3", "--out", str(tmp_path), "--nvcc", str(tmp_path / "none")],
             f"--nvcc {tmp_path / 'none'}: not found")
    objectives = ", ".join(map(repr, run_plans.OBJECTIVES))
    _refused(capsys, ["build", "--random", "3", "--objective", "foo", *nvcc],
             f"argument --objective: invalid choice: 'foo' (choose from {objectives})")
    _refused(capsys, ["build", "--random", "3", "--variants", "registers,foo", *nvcc],
             "argument --variants: 'foo': the forced strategies are registers, lds")
    _refused(capsys, ["report", str(tmp_path / "none.json"), "--manifest", str(tmp_path / "m.json"), "--out", str(tmp_path)],
             f"{tmp_path / 'none.json'}: [Errno 2] No such file or directory")
    (tmp_path / "results.json").write_text("{}")
    (tmp_path / "m.json").write_text("not json")
    _refused(capsys, ["report", str(tmp_path / "results.json"), "--manifest", str(tmp_path / "m.json"), "--out", str(tmp_path)],
             f"{tmp_path / 'm.json'}: Expecting value")


def test_report_without_triton_lists_refusals_apart_forced_plans_and_each_plans_instructions():
    manifest = {"build": {"nvcc": "13.0"}, "cases": [
        {"name": "r", "element_bits": 64, "num_warps": 2, "kernels": {"ours": {}, "ours_lds": {}}, "errors": {},
         "plan": {"strategy": ["lds", "lanes"], "counts": [{"lds_write": 2, "total": 2}, {"shfl": 1, "total": 1}]}},
        {"name": "x", "element_bits": 8, "num_warps": 8, "kernels": {}, "errors": {},
         "refusal": "LayoutError: over the shared-memory budget"}]}
    ok = {"bit_exact": True, "errors": []}
    bad = {"bit_exact": False, "errors": ["dst(1, 0, 7, 2): got 0x3 want 0x9"]}
    results = {"device": "GPU", "iterations": 8, "timing_ctas": 4, "cases": [
        {"name": "r", "check_1": {"ours": ok, "ours_lds": bad}, "check_k": {"ours": ok, "ours_lds": ok},
         "time": {"ours": {"us": 2.0}, "ours_lds": {"us": 3.0}}},
        {"name": "x", "check_1": {}, "check_k": {}, "time": {}}]}
    s = run_plans.summarize(results, manifest)
    assert (s["cases"], s["ours_cases"], s["ours_bit_exact"], s["timed_pairs"]) == (2, 1, 1, 0)
    assert s["geomean_ours_over_triton"] is None  # JSON null, not NaN
    text = run_plans.markdown(s, "CMD")
    assert text.startswith("# linlayout's NVIDIA plans on the GPU\n\nDevice: GPU; built with nvcc 13.0 (no Triton kernels).")
    assert "- our plans bit-exact: **1 of 1** cases; refused by the planner (LayoutError, listed below): 1\n" in text
    assert "- forced-strategy plans (`--variants`) bit-exact: 0 of 1\n" in text and "Triton," not in text
    assert "| r | 64 | 2 | lds / lanes | lds_write 2, total 2 / shfl 1, total 1 | yes | - | 2.0 | - | - |" in text
    assert "| x | 8 | 8 | - | - | refused | - | - | - | - |" in text
    assert "## Failures\n\n- r: ours_lds differs: dst(1, 0, 7, 2): got 0x3 want 0x9\n" in text
    assert text.endswith("## Refusals (the planner's LayoutError)\n\n- x: LayoutError: over the shared-memory budget\n")


def test_roundtrip_kernel_carries_64_bit_elements_in_64_bit_words():
    text = roundtrip_cuda.roundtrip_kernel("k", "fwd", "back", "uint64_t", 64, 8, 4, 64, False)
    assert "unsigned long long xw[8], yw[4];" in text and "unsigned long long xn[8], yn[4];" in text
    assert "roundtrip_load<uint64_t, 8>(in + at_in, xw);" in text


def test_64_bit_planes_spell_every_index_and_hash_every_bit():
    index = np.arange(1 << 10)
    planes = plan_tiles.plane_count(index.size, 64)
    values = plan_tiles.plane_values(index, 64, planes)
    assert planes == 2 and values.dtype == np.uint64 and np.array_equal(values[0], index.astype(np.uint64))
    bits = (values[1][:, None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)
    assert (bits.min(axis=0) == 0).all() and (bits.max(axis=0) == 1).all()
    assert np.array_equal(plan_tiles.plane_values(index, 32, 2)[1], values[1].astype(np.uint32))  # low half: the 32-bit hash


def test_random_kit_compiles_with_nvcc_when_it_is_here(tmp_path):
    if shutil.which("nvcc") is None:
        pytest.skip("needs nvcc")
    manifest = _build(tmp_path, "nvcc")
    assert all(not e["errors"] for e in manifest["cases"])
    cubins = {k["cubin"] for e in manifest["cases"] for k in e["kernels"].values()}
    assert all((tmp_path / c).read_bytes()[:4] == b"\x7fELF" for c in cubins)
