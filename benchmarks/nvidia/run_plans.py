"""Every NVIDIA conversion of a corpus planned by linlayout, run on a GPU bit for bit, and timed
against Triton's own ``convert_layout`` of the same pair in the same run.

Three steps; the first needs linlayout, nvcc (CUDA 12.x/13.x) and Triton 3.9 (``--random``:
hypothesis instead) but no GPU, the
second only numpy, CuPy and an NVIDIA GPU of compute capability 9.0:

    python benchmarks/nvidia/run_plans.py build --out DIR [--corpus benchmarks/data/triton_nvidia_corpus.json]
    python benchmarks/nvidia/run_plans.py build --out DIR --random N [--seed S]   # or: random pairs
    python benchmarks/nvidia/run_plans.py build --out DIR --corpus FILE --losses  # or: the corpus's losses
    python benchmarks/nvidia/plan_runner.py DIR                    # on the GPU machine
    python benchmarks/nvidia/run_plans.py report DIR/results.json --manifest DIR/manifest.json --out results/

``build``: for each distinct (source layout, destination layout, element size, warps) of the
corpus's NVIDIA cases (and the blog's fp16 -> fp8 pair), ``plan_conversion(src, dst, "sm_90",
bits)`` and its inverse ``plan_conversion(dst, src, ...)``, both emitted as CUDA device functions
by :func:`linlayout.lowering.cpp.emit_cpp` inside the round-trip kernel of
``benchmarks/nvidia/roundtrip_cuda.py`` (compiled with nvcc to an sm_90a cubin); Triton's
round-trip kernel of the same pair (``benchmarks/nvidia/gluon_roundtrip.py``, compiled by Triton
for ``cuda`` capability 90 on the CPU); the slot tiles and tensors of
``benchmarks/nvidia/plan_tiles.py``; and ``manifest.json``.  A case whose plan or emission
fails is kept with its error (it counts as a failure, not as skipped); a pair the planner refuses
(its ``LayoutError``, e.g. over the shared-memory budget) is kept as a refusal, listed apart.

``build --random N --seed S``: instead of the blog pair and a corpus, ``N`` distinct random pairs
drawn from the seed (``benchmarks/nvidia/random_cases.py``: the hypothesis tests' layout generator,
``sm_90`` plans, 1 to 8 warps, 8- to 64-bit elements, each case with its own objective, a quarter
with src registers that other lanes or warps duplicate); no Triton kernels (Triton's ``DistributedLinearLayout`` takes only register and
lane bases that move in one tensor dimension, and its compiler aborts on the others), so checked,
not compared.
``--variants registers,lds`` adds each pair's forced-strategy plans where they differ.

``report``: the per-case table (bit-exact or the first differing slots, the plans' strategies and
instruction counts, each side's time, ours / Triton), the geometric mean of the ratios, the
refusals, as JSON and markdown.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))  # the repository root: benchmarks.script_args

from gluon_roundtrip import compile_roundtrip  # noqa: E402
from pair_case import PairCase  # noqa: E402
from plan_tiles import element_dtype, slot_tiles, tensor_tiles  # noqa: E402
from roundtrip_cuda import roundtrip_kernel  # noqa: E402

from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout import LayoutError, LinearLayout  # noqa: E402
from linlayout.cli.bench import bench_or_refusal  # noqa: E402
from linlayout.encodings.nvidia import NvidiaMma  # noqa: E402
from linlayout.lowering.cpp import emit_cpp  # noqa: E402
from linlayout.synth.convert import plan_conversion  # noqa: E402
from linlayout.synth.context import STRATEGIES  # noqa: E402
from linlayout.synth.cost import OBJECTIVES  # noqa: E402

ARCH = "sm_90"
NVCC_ARCH = "sm_90a"
DTYPE_BITS = {"fp32": 32, "i32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "i8": 8}
PAPER_SOURCE = HERE / "paper_fp16_fp8.cu"
BLOG_NAME = "blog: mma fp16 accumulator -> fp8 A operand (16x32)"


def _distributed(layout: LinearLayout) -> LinearLayout:
    """``layout`` without a size-1 ``block`` in dim (one CTA)."""
    if layout.has_in_dim("block"):
        if layout.in_dim_size("block") != 1:
            raise LayoutError("the GPU check runs one CTA; the layout spans several (block dim > 1)")
        layout = layout.squeeze_ins("block")
    return layout


def blog_case(num_warps: int = 1) -> PairCase:
    """The blog's pair: mma.sync m16n8 accumulator (fp16, cast to fp8) -> fp8 A operand of
    m16n8k32 (kWidth 4), a 16x32 tile per warp, warps along M."""
    mma = NvidiaMma(2, (num_warps, 1), (16, 8))
    shape = [16 * num_warps, 32]
    return PairCase(BLOG_NAME if num_warps == 1 else f"{BLOG_NAME}, {num_warps} warps",
                    _distributed(mma.to_linear_layout(shape)), _distributed(mma.dot_operand_layout(0, 4, shape)),
                    8, num_warps, {"source": "blog"})


def corpus_cases(path: Path, losses_only: bool = False) -> list[PairCase]:
    """The NVIDIA cases of a corpus file (``triton_nvidia_convert_baseline`` format); with
    ``losses_only``, those where ``linlayout bench conversions`` counts more PTX instructions for
    our plan (of the case's own arch) than Triton's (:func:`loses_to_triton`)."""
    doc = json.loads(path.read_text())
    out = []
    for c in doc["cases"]:
        if not c["arch"].startswith("sm_") or (losses_only and not loses_to_triton(c)):
            continue
        out.append(PairCase(f"{c['name']} {c['arch']} {c['dtype']} w{c['num_warps']}",
                            _distributed(LinearLayout.from_json(c["src"])), _distributed(LinearLayout.from_json(c["dst"])),
                            DTYPE_BITS[c["dtype"]], c["num_warps"],
                            {"source": path.name, "arch": c["arch"], "dtype": c["dtype"],
                             "triton_ptx_counts": c.get("triton", {})}))
    return out


def loses_to_triton(case: dict) -> bool:
    """True when the bench's row of the corpus ``case`` (linlayout.cli.bench.bench_or_refusal: the plan
    for the case's arch under the planner's default objective, counted in PTX classes) has more
    instructions than Triton's count.  A case the planner refuses is no loss (the bench lists it
    apart, as refused)."""
    row = bench_or_refusal(case)
    return "refused" not in row and row["ours"]["total"] > row["triton"]["total"]


def distinct(cases: list[PairCase]) -> list[PairCase]:
    """The first case of each (layouts, element size, warps); later equal ones are dropped."""
    seen, out = set(), []
    for case in cases:
        if case.key() not in seen:
            seen.add(case.key())
            out.append(case)
    return out


# ------------------------------------------------------------------ ours: plan, emit, wrap
def our_plans(case: PairCase, strategy: str = "auto", objective: str | None = None) -> tuple:
    """(forward, backward, planning seconds): ``plan_conversion`` of the pair both ways for the case's
    target under ``strategy`` and ``objective`` (None: the case's own, which None leaves to the planner)."""
    objective = case.objective if objective is None else objective
    options = {"strategy": strategy} if objective is None else {"strategy": strategy, "objective": objective}
    started = time.perf_counter()
    forward = plan_conversion(case.src, case.dst, case.arch, case.element_bits, **options)
    backward = plan_conversion(case.dst, case.src, case.arch, case.element_bits, **options)
    return forward, backward, time.perf_counter() - started


def our_source(case: PairCase, index: int, plans: tuple | None = None, side: str = "ours") -> tuple[str, dict]:
    """The CUDA source of case ``index``'s round-trip kernel (named ``c<index>_<side>``) around
    ``plans`` (default: ``our_plans(case)``) and what the manifest records of the plans."""
    forward, backward, plan_seconds = plans or our_plans(case)
    fwd = emit_cpp(forward, name=f"c{index}_{side}_forward")
    back = emit_cpp(backward, name=f"c{index}_{side}_backward")
    kernel = roundtrip_kernel(f"c{index}_{side}", fwd.function_name, back.function_name, fwd.element_type,
                              fwd.element_bits, fwd.slots_in, fwd.slots_out, fwd.block_threads,
                              bool(fwd.lds_bytes or back.lds_bytes))
    info = {"strategy": [forward.strategy, backward.strategy],
            "counts": [{k: v for k, v in p.counts().items() if v} for p in (forward, backward)],
            "cost": [round(p.cost, 1) for p in (forward, backward)],
            "lds_bytes": [fwd.lds_bytes, back.lds_bytes], "plan_seconds": round(plan_seconds, 4)}
    return fwd.source + "\n" + back.source + "\n" + kernel, info


def variant_sources(case: PairCase, index: int, variants: list[str], default: tuple) -> dict[str, tuple[str, dict]]:
    """Side ``ours_<strategy>`` -> (source, plan info) for each forced ``strategy`` of ``variants``
    whose plans differ from the ``default`` ones (``our_plans(case)``) in some direction
    (cost-model calibration: the GPU times the plans the model did not pick).  A strategy the
    pair cannot take (``registers`` across warps) is left out."""
    out = {}
    for strategy in variants:
        try:
            plans = our_plans(case, strategy)
        except LayoutError:
            continue
        if all(p.dumps() == d.dumps() for p, d in zip(plans[:2], default[:2])):
            continue
        out[f"ours_{strategy}"] = our_source(case, index, plans, f"ours_{strategy}")
    return out


def paper_source(index: int) -> str:
    """The round-trip kernel around the paper's hand solution (the blog pair, one warp)."""
    return (PAPER_SOURCE.read_text() + "\n" +
            roundtrip_kernel(f"c{index}_paper", "paper_fp16_to_fp8", "paper_fp8_to_fp16", "uint8_t", 8, 16, 16, 32, False))


def nvcc_cubin(source: str, path: Path, nvcc: str = "nvcc") -> None:
    """Compile a CUDA source to an sm_90a cubin at ``path`` (RuntimeError with nvcc's message)."""
    cu = path.with_suffix(".cu")
    cu.write_text("#include <cstdint>\n" + source)
    proc = subprocess.run([nvcc, "-cubin", f"-arch={NVCC_ARCH}", "-O3", "-o", str(path), str(cu)],
                          capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"nvcc failed on {cu.name}: {proc.stderr.strip()[-1500:]}")


def compile_batches(sources: dict[str, str], out: Path, nvcc: str, batch: int) -> tuple[dict[str, str], dict[str, str]]:
    """Compile kernel sources (kernel name -> source) ``batch`` to a cubin; a batch nvcc rejects is
    compiled one kernel a cubin to find the culprit.  Returns (kernel -> cubin file, kernel -> error)."""
    names = list(sources)
    cubins, errors = {}, {}
    for start in range(0, len(names), batch):
        group = names[start:start + batch]
        path = out / f"batch{start // batch}.cubin"
        try:
            nvcc_cubin("\n".join(sources[n] for n in group), path, nvcc)
            cubins.update(dict.fromkeys(group, path.name))
            continue
        except RuntimeError:
            pass
        for name in group:
            try:
                nvcc_cubin(sources[name], out / f"{name}.cubin", nvcc)
                cubins[name] = f"{name}.cubin"
            except RuntimeError as e:
                errors[name] = str(e)
    return cubins, errors


# ------------------------------------------------------------------ build
def build(cases: list[PairCase], out: Path, nvcc: str = "nvcc", triton: bool = True, batch: int = 24,
          variants: list[str] | None = None, reuse_triton: Path | None = None, objective: str | None = None) -> dict:
    """Plan, emit and compile every case into ``out``; returns (and writes) the manifest.
    ``variants``: forced strategies also built as sides ``ours_<strategy>`` (``variant_sources``);
    ``reuse_triton``: a folder an earlier build wrote, whose Triton kernels are copied by case name
    instead of compiled (Triton's side does not depend on linlayout); ``objective``: our plans' (None:
    the planner's default)."""
    out.mkdir(parents=True, exist_ok=True)
    earlier = ({e["name"]: e for e in json.loads((reuse_triton / "manifest.json").read_text())["cases"]}
               if reuse_triton else {})
    arrays, entries, sources, owner = {}, [], {}, {}
    for index, case in enumerate(cases):
        entry = {"index": index, "name": case.name, "element_bits": case.element_bits, "num_warps": case.num_warps,
                 "arch": case.arch, "objective": case.objective, "shape": [size for _, size in case.src.out_dims],
                 "origin": case.origin, "kernels": {}, "errors": {}}
        src_slots, dst_slots = slot_tiles(case.src, case.dst, case.element_bits, case.num_warps)
        arrays[f"{index}_src"], arrays[f"{index}_dst"] = src_slots, dst_slots
        arrays[f"{index}_tensor"] = tensor_tiles(case.src, case.element_bits)
        sides = {}
        try:
            default = our_plans(case, objective=objective)  # made once for "ours" and the variants
            sides["ours"] = lambda: our_source(case, index, default)
            if variants:
                sides["variants"] = lambda: variant_sources(case, index, variants, default)
        except LayoutError as e:  # the planner refuses the pair (e.g. over the shared-memory budget)
            entry["refusal"] = f"LayoutError: {e}"
        except Exception as e:  # noqa: BLE001 -- every failure is recorded with its case and reported
            entry["errors"]["ours"] = f"{type(e).__name__}: {e}"
        if case.origin["source"] == "blog" and case.num_warps == 1:
            sides["paper"] = lambda: (paper_source(index), {})
        for side, make in sides.items():
            try:
                made = make() if side == "variants" else {side: make()}
            except Exception as e:  # noqa: BLE001 -- every failure is recorded with its case and reported
                entry["errors"][side] = f"{type(e).__name__}: {e}"
                continue
            for side_name, (source, info) in made.items():
                name = f"c{index}_{side_name}"
                sources[name], owner[name] = source, (entry, side_name)
                if side_name == "ours":
                    entry["plan"] = info
                elif info:
                    entry.setdefault("variant_plans", {})[side_name] = info
        entries.append(entry)
    cubins, errors = compile_batches(sources, out, nvcc, batch)
    for name, (entry, side) in owner.items():
        if name in cubins:
            entry["kernels"][side] = {"cubin": cubins[name], "name": name, "shared_bytes": 0, "scratch_args": 0,
                                      "io": "slots"}
        else:
            entry["errors"][side] = errors[name]
    for entry, case in zip(entries, cases):
        before = earlier.get(entry["name"], {}).get("kernels", {}).get("triton")
        if triton and before:
            shutil.copyfile(reuse_triton / before["cubin"], out / f"c{entry['index']}_triton.cubin")
            entry["kernels"]["triton"] = dict(before, cubin=f"c{entry['index']}_triton.cubin")
        elif triton:
            try:
                k = compile_roundtrip(case.src, case.dst, case.element_bits, case.num_warps)
                (out / f"c{entry['index']}_triton.cubin").write_bytes(k.cubin)
                entry["kernels"]["triton"] = {"cubin": f"c{entry['index']}_triton.cubin", "name": k.name,
                                              "shared_bytes": k.shared_bytes, "scratch_args": k.scratch_args,
                                              "io": "tensor"}
            except Exception as e:  # noqa: BLE001 -- Triton's compile errors are recorded with the case
                entry["errors"]["triton"] = f"{type(e).__name__}: {e}"
        status = ", ".join([f"{s} {'ok' if s in entry['kernels'] else 'FAILED'}"
                            for s in sorted(set(entry["kernels"]) | set(entry["errors"]))] +
                           (["ours refused"] if "refusal" in entry else []))
        print(f"[{entry['index'] + 1}/{len(cases)}] {entry['name']}: {status}", flush=True)
    np.savez_compressed(out / "tiles.npz", **arrays)
    manifest = {"format": "linlayout_nvidia_plans/v1", "arch": ARCH, "nvcc_arch": NVCC_ARCH,
                "build": _versions(nvcc, triton), "cases": entries}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def _versions(nvcc: str, triton: bool) -> dict:
    """The nvcc release and, where the build has Triton's kernels (``triton``), Triton's version
    (else None)."""
    import importlib.metadata

    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    release = next(line for line in version.splitlines() if "release" in line)
    return {"nvcc": release.split("release")[1].strip(" ,"),
            "triton": importlib.metadata.version("triton") if triton else None}


# ------------------------------------------------------------------ report
def geomean(values: list[float]) -> float | None:
    """The geometric mean; None (JSON null) of no values."""
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def summarize(results: dict, manifest: dict) -> dict:
    """One row per case (build errors included) and the totals."""
    by_name = {r["name"]: r for r in results["cases"]}
    rows = []
    for entry in manifest["cases"]:
        run = by_name.get(entry["name"], {})
        row = {"name": entry["name"], "element_bits": entry["element_bits"], "num_warps": entry["num_warps"],
               "plan": entry.get("plan", {}), "build_errors": entry["errors"], "run_error": run.get("error")}
        if "refusal" in entry:  # the planner's LayoutError: no kernel, not a failure
            row["refusal"] = entry["refusal"]
        for side in entry["kernels"]:
            checks = [run.get(k, {}).get(side) for k in ("check_1", "check_k")]
            row[side] = {"bit_exact": all(c is not None and c["bit_exact"] for c in checks),
                         "errors": [e for c in checks if c for e in c["errors"]],
                         "us": run.get("time", {}).get(side, {}).get("us")}
        if row.get("ours", {}).get("us") and row.get("triton", {}).get("us"):
            row["ratio"] = row["ours"]["us"] / row["triton"]["us"]
        rows.append(row)
    ours = [r for r in rows if "ours" in r["build_errors"] or "ours" in r]
    exact = [r for r in ours if r.get("ours", {}).get("bit_exact")]
    # a pair whose plans have no instruction (equal layouts up to register renaming) times only
    # the kernels' loads and stores: listed, left out of the mean
    moves = [r for r in rows if "ratio" in r and any(c.get("total") for c in r["plan"].get("counts", []))]
    ratios = [r["ratio"] for r in moves]
    return {"device": results["device"], "iterations": results["iterations"], "timing_ctas": results["timing_ctas"],
            "build": manifest.get("build", {}), "cases": len(rows), "ours_cases": len(ours),
            "ours_bit_exact": len(exact), "triton_bit_exact": sum(r.get("triton", {}).get("bit_exact", False) for r in rows),
            "timed_pairs": len(ratios), "geomean_ours_over_triton": geomean(ratios),
            "ours_faster": sum(r < 1 for r in ratios),
            "no_instruction_pairs": sum("ratio" in r for r in rows) - len(moves), "rows": rows}


def variant_table(rows: list[dict]) -> list[str]:
    """Markdown lines comparing the forced-strategy sides (``--variants``) with the default plans and
    Triton, where a build has them: per element size, the geometric means over the pairs with a
    variant, and one row per such pair."""
    sides = sorted({k for r in rows for k in r if k.startswith("ours_")})
    timed = [r for r in rows if "ratio" in r and any(r.get(v, {}).get("us") for v in sides)]
    if not timed:
        return []
    lines = ["", "## Forced strategies (calibration)", "",
             "Each pair's plans forced to one strategy (`plan_conversion(..., strategy=S)`, both directions) where "
             "they differ from the default plans; time / Triton's time.", "",
             "| case | bits | warps | default | " + " | ".join(sides) + " |", "|---|---|---|---|" + "---|" * len(sides)]
    for r in timed:
        cells = [f"{r[v]['us'] / r['triton']['us']:.2f}" if r.get(v, {}).get("us") else "-" for v in sides]
        lines.append(f"| {r['name']} | {r['element_bits']} | {r['num_warps']} | {r['ratio']:.2f} | " + " | ".join(cells) + " |")
    return lines


def _sides(row: dict) -> list[str]:
    """The kernels a report row has results of: ours, paper, triton and the forced strategies ours_*."""
    return [k for k in row if k in ("ours", "paper", "triton") or k.startswith("ours_")]


def markdown(summary: dict, command: str) -> str:
    """The report; a build without Triton kernels (``--random``) has no Triton lines."""
    s = summary
    triton = any("triton" in r or "triton" in r["build_errors"] for r in s["rows"])
    forced = [r[k]["bit_exact"] for r in s["rows"] for k in _sides(r) if k.startswith("ours_")]
    lines = ["# linlayout's NVIDIA plans on the GPU" + (", against Triton's convert_layout" if triton else ""), "",
             f"Device: {s['device']}; built with nvcc {s['build'].get('nvcc', '?')}"
             + (f", Triton {s['build'].get('triton', '?')}." if triton else " (no Triton kernels)."),
             f"Command: `{command}`", "",
             f"- our plans bit-exact: **{s['ours_bit_exact']} of {s['ours_cases']}** cases"
             + (f" (Triton's round trip: {s['triton_bit_exact']} of {s['cases']})" if triton else "")
             + f"; refused by the planner (LayoutError, listed below): {sum('refusal' in r for r in s['rows'])}"]
    if forced:
        lines.append(f"- forced-strategy plans (`--variants`) bit-exact: {sum(forced)} of {len(forced)}")
    if triton and s["timed_pairs"]:
        lines.append(f"- time ours / Triton (round-trip kernel, {s['iterations']} round trips, {s['timing_ctas']} "
                     f"CTAs): geometric mean **{s['geomean_ours_over_triton']:.3f}** over {s['timed_pairs']} pairs; "
                     f"ours faster on {s['ours_faster']} (left out: {s['no_instruction_pairs']} pairs whose plans "
                     "have no instruction, where only the kernels' loads and stores are timed)")
    for r in s["rows"]:
        if "paper" in r:
            times = ", ".join(f"{side} {r[side]['us']:.1f} us ({'bit-exact' if r[side]['bit_exact'] else 'DIFFERS'})"
                              for side in ("ours", "paper", "triton") if side in r and r[side]["us"])
            lines.append(f"- {r['name']}: {times}")
    lines += ["", "| group | pairs | geomean ours/Triton | ours faster |", "|---|---|---|---|"] if triton else []
    for title, key in (("elements of {} bits", lambda r: r["element_bits"]),
                       ("plans {}", lambda r: " / ".join(r["plan"].get("strategy", [])))):
        groups: dict = {}  # (empty without Triton: no row has a ratio)
        for r in s["rows"]:
            if "ratio" in r and any(c.get("total") for c in r["plan"].get("counts", [])):
                groups.setdefault(key(r), []).append(r["ratio"])
        for group, ratios in sorted(groups.items(), key=lambda g: (-len(g[1]), str(g[0]))):
            lines.append(f"| {title.format(group)} | {len(ratios)} | {geomean(ratios):.3f} | {sum(x < 1 for x in ratios)} |")
    lines += variant_table(s["rows"])
    lines += ["",
             "| case | bits | warps | our plans (fwd / back) | instructions (fwd / back) | ours exact | Triton exact | "
             "ours us | Triton us | ours/Triton |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in s["rows"]:
        strategy = " / ".join(r["plan"].get("strategy", [])) or "-"
        counts = " / ".join(", ".join(f"{k} {v}" for k, v in c.items()) or "none" for c in r["plan"].get("counts", []))
        cells = []
        for side in ("ours", "triton"):
            if side == "ours" and "refusal" in r:
                cells.append("refused")
            elif side in r["build_errors"]:
                cells.append("build error")
            elif side in r:
                cells.append("yes" if r[side]["bit_exact"] else "**NO**")
            else:
                cells.append("-")
        times = [f"{r[side]['us']:.1f}" if side in r and r[side]["us"] else "-" for side in ("ours", "triton")]
        ratio = f"{r['ratio']:.2f}" if "ratio" in r else "-"
        lines.append(f"| {r['name']} | {r['element_bits']} | {r['num_warps']} | {strategy} | {counts or '-'} | {cells[0]} | "
                     f"{cells[1]} | {times[0]} | {times[1]} | {ratio} |")
    failures = [r for r in s["rows"] if r["build_errors"] or r["run_error"] or
                any(not r[side]["bit_exact"] for side in _sides(r))]
    if failures:
        lines += ["", "## Failures", ""]
        for r in failures:
            for side, err in r["build_errors"].items():
                lines.append(f"- {r['name']}: {side} build: {err.splitlines()[0][:300]}")
            if r["run_error"]:
                lines.append(f"- {r['name']}: run: {r['run_error'][:300]}")
            for side in _sides(r):
                if not r[side]["bit_exact"]:
                    lines.append(f"- {r['name']}: {side} differs: {'; '.join(r[side]['errors'][:3])}")
    refusals = [r for r in s["rows"] if "refusal" in r]
    if refusals:
        lines += ["", "## Refusals (the planner's LayoutError)", ""]
        lines += [f"- {r['name']}: {r['refusal'].splitlines()[0][:300]}" for r in refusals]
    return "\n".join(lines) + "\n"


FORCED_STRATEGIES = tuple(s for s in STRATEGIES if s != "auto")


def forced_strategies(text: str) -> list[str]:
    """``--variants``: a comma list of the planner's forced strategies (``FORCED_STRATEGIES``)."""
    names = [v for v in text.split(",") if v]
    wrong = [v for v in names if v not in FORCED_STRATEGIES]
    if wrong:
        raise argparse.ArgumentTypeError(f"{', '.join(map(repr, wrong))}: the forced strategies are "
                                         f"{', '.join(FORCED_STRATEGIES)}")
    return names


def main(argv: list[str] | None = None) -> int:
    ap = ScriptParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="plan, emit and compile (no GPU)")
    b.add_argument("--out", type=Path, required=True)
    cases = b.add_mutually_exclusive_group()
    cases.add_argument("--corpus", type=Path, help="a triton_nvidia_convert_baseline JSON (default: the blog pair only)")
    cases.add_argument("--random", type=int, metavar="N", help="N distinct random pairs (random_cases.py) instead of "
                       "the blog pair and a corpus; no Triton kernels (Triton refuses most random layouts)")
    b.add_argument("--losses", action="store_true", help="with --corpus: only the cases where our plan has more "
                   "PTX instructions than Triton's (as linlayout bench conversions counts them: under the planner's "
                   "default objective, whatever --objective says; a case the planner refuses is no loss), and no "
                   "blog pair")
    b.add_argument("--seed", type=int, default=0, help="the seed of --random (default 0)")
    b.add_argument("--limit", type=int, help="the first N distinct cases only")
    b.add_argument("--nvcc", default="nvcc")
    b.add_argument("--no-triton", action="store_true", help="skip Triton's kernels")
    b.add_argument("--reuse-triton", type=Path, metavar="DIR",
                   help="copy Triton's kernels from an earlier build folder (by case name) instead of compiling them")
    b.add_argument("--variants", type=forced_strategies, default=[],
                   help=f"comma-separated forced strategies ({', '.join(FORCED_STRATEGIES)}) also built "
                   "as sides ours_<strategy> where their plans differ from the default (cost-model calibration)")
    b.add_argument("--objective", choices=OBJECTIVES, help="our plans' cost objective (default: each case's own; a corpus case has "
                   "none: the planner's default)")
    r = sub.add_parser("report", help="tables from the runner's results")
    r.add_argument("results", type=Path)
    r.add_argument("--manifest", type=Path, required=True)
    r.add_argument("--out", type=Path, required=True, help="folder for plans.json and plans.md")
    r.add_argument("--command", default="python benchmarks/nvidia/run_plans.py build ... ; plan_runner.py ...")
    args = ap.parse_args(argv)
    if args.command == "build":
        if args.random is not None and args.random < 1:
            ap.error(f"--random {args.random}: the number of cases must be positive")
        if args.losses and args.corpus is None:
            ap.error("--losses selects among the cases of --corpus; give --corpus FILE")
        if shutil.which(args.nvcc) is None:
            ap.error(f"--nvcc {args.nvcc}: not found")
        if args.random is not None:
            from random_cases import random_cases  # (the tests' layout generator: needs hypothesis)

            cases = random_cases(args.random, args.seed)[:args.limit]
        else:
            blog = [] if args.losses else [blog_case(1), blog_case(4)]
            cases = blog + (corpus_cases(args.corpus, args.losses) if args.corpus else [])
            cases = distinct(cases)[:args.limit]
        manifest = build(cases, args.out, args.nvcc, not (args.no_triton or args.random), variants=args.variants,
                         reuse_triton=args.reuse_triton, objective=args.objective)
        failed = [e["name"] for e in manifest["cases"] if e["errors"]]
        print(f"{len(cases)} cases built into {args.out}; {len(failed)} with a build error")
        return 0
    read = []
    for path in (args.results, args.manifest):
        try:
            read.append(json.loads(path.read_text()))
        except (OSError, ValueError) as error:  # a missing file, not JSON
            ap.error(f"{path}: {error}")
    summary = summarize(*read)
    args.out.mkdir(parents=True, exist_ok=True)
    head = json.dumps({k: v for k, v in summary.items() if k != "rows"}, indent=1)[:-2]
    rows = ",\n".join(json.dumps(r) for r in summary["rows"])
    (args.out / "plans.json").write_text(f'{head},\n "rows": [\n{rows}\n]}}\n')
    (args.out / "plans.md").write_text(markdown(summary, args.command))
    print(f"ours bit-exact {summary['ours_bit_exact']} of {summary['ours_cases']}" +
          (f"; geomean ours/Triton {summary['geomean_ours_over_triton']:.3f} over {summary['timed_pairs']} pairs"
           if summary["timed_pairs"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
