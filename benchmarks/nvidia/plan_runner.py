"""Run a built set of conversion kernels on an NVIDIA GPU: check every output slot, time both sides.

This is the device half of ``benchmarks/nvidia/run_plans.py`` and needs only numpy and CuPy
(no linlayout, no Triton) and the repository it sits in (its one-line option errors come from
``benchmarks/script_args.py``, standard library only): ``run_plans.py build`` writes a folder
with ``manifest.json``, ``tiles.npz`` and one cubin per kernel; this script loads them.

Each case has up to three kernels (``kernels``: side -> cubin, entry, shared bytes), each one CTA
of ``32 * num_warps`` threads per tile, launched with ``(src, out_src, out_dst, iterations)``
(Triton's adds its two scratch pointers, passed as 0):

* ``ours``: thread ``(warp w, lane l)`` of CTA ``b`` loads its source slots
  ``src[b, w, l, :]`` (the element the source layout puts at register ``r``), computes
  ``y = forward(x)``, then ``iterations`` times ``(x, y) = (backward(y), forward(x))``, and
  stores ``x`` to ``out_src[b, w, l, :]`` and ``y`` to ``out_dst[b, w, l, :]``.  The loop
  carries both tiles, so neither direction can be folded into the other, and both results
  are stored, so neither chain is dead.  Checked slot for slot: ``out_dst`` must equal the
  expected destination slots (slot ``r`` of lane ``l`` of warp ``w`` holds the element the
  destination layout puts there) and ``out_src`` the source slots.
* ``paper`` (the blog's fp16 -> fp8 case only): the same loop around the hand-written
  2-shuffle, 4-select conversion of the linear-layout paper, with ``ours``'s tiles.
* ``triton``: the same loop in Gluon with ``gl.convert_layout`` (the tile is a row-major
  tensor, loaded in the source layout); both outputs must equal the input tensor.

Tiles: ``planes`` CTAs, plane ``p`` holding bits ``[p*element_bits, (p+1)*element_bits)`` of
each element's row-major index (so together they name every element even when 8 bits do
not) and one more plane of hashed indices.  Timing launches ``timing_ctas`` CTAs (every
SM busy), all on the first plane's tile, and takes CUDA-event times of ``repeats`` launches
after ``warmup``; the reported time is the median.

    python benchmarks/nvidia/plan_runner.py DIR [--iterations K] [--out results.json]

A kernel that faults takes the CUDA context with it: its case is recorded with the error and
the script exits with status 3; ``--resume`` goes on with the next case in a new process.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: benchmarks.script_args

from benchmarks.script_args import ScriptParser  # noqa: E402


class Runner:
    """The GPU, the loaded modules and the launch helpers (CuPy)."""

    def __init__(self, folder: Path):
        import cupy

        self.cp = cupy
        self.folder = folder
        props = cupy.cuda.runtime.getDeviceProperties(0)
        self.device = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        self.sm_count = int(props["multiProcessorCount"])
        self.capability = f"{props['major']}.{props['minor']}"
        self._modules = {}

    def function(self, kernel: dict):
        path = str(self.folder / kernel["cubin"])
        if path not in self._modules:
            self._modules[path] = self.cp.RawModule(path=path)
        fn = self._modules[path].get_function(kernel["name"])
        if kernel["shared_bytes"] > 48 * 1024:
            fn.max_dynamic_shared_size_bytes = kernel["shared_bytes"]
        return fn

    def launch(self, fn, kernel: dict, ctas: int, threads: int, buffers, iterations: int) -> None:
        args = list(buffers) + [np.int32(iterations)]
        if kernel["scratch_args"]:
            args += [np.uint64(0)] * kernel["scratch_args"]
        fn((ctas,), (threads,), tuple(args), shared_mem=kernel["shared_bytes"])


def _mismatches(got: np.ndarray, want: np.ndarray, what: str, limit: int = 4) -> list[str]:
    """Up to ``limit`` lines naming (plane, warp, lane, slot) or (plane, index) that differ."""
    bad = np.argwhere(got != want)
    return [f"{what}{tuple(int(i) for i in idx)}: got {int(got[tuple(idx)]):#x} want {int(want[tuple(idx)]):#x}"
            for idx in bad[:limit]] + ([f"{what}: {len(bad)} slots differ"] if len(bad) else [])


def _arrays(case: dict, kernel: dict, tiles) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(input, expected out_src, expected out_dst) of a kernel: slot tiles or the row-major tensor."""
    i = case["index"]
    if kernel["io"] == "slots":
        return tiles[f"{i}_src"], tiles[f"{i}_src"], tiles[f"{i}_dst"]
    tensor = tiles[f"{i}_tensor"]
    return tensor, tensor, tensor


def check_case(runner: Runner, case: dict, tiles, iterations: int) -> dict:
    """Run every kernel of ``case`` on every plane with ``iterations`` round trips; compare."""
    cp = runner.cp
    threads = 32 * case["num_warps"]
    out = {}
    for side, kernel in case["kernels"].items():
        fn = runner.function(kernel)
        src, want_src, want_dst = _arrays(case, kernel, tiles)
        d_out_src, d_out_dst = cp.zeros(want_src.shape, want_src.dtype), cp.zeros(want_dst.shape, want_dst.dtype)
        runner.launch(fn, kernel, src.shape[0], threads, (cp.asarray(src), d_out_src, d_out_dst), iterations)
        cp.cuda.runtime.deviceSynchronize()
        errors = (_mismatches(cp.asnumpy(d_out_dst), want_dst, "dst") +
                  _mismatches(cp.asnumpy(d_out_src), want_src, "src"))
        out[side] = {"bit_exact": not errors, "errors": errors}
    return out


def time_case(runner: Runner, case: dict, tiles, iterations: int, ctas: int, warmup: int, repeats: int) -> dict:
    """Median and least kernel time (microseconds) of each side at ``ctas`` CTAs and ``iterations``
    round trips, the sides' launches interleaved."""
    cp = runner.cp
    threads = 32 * case["num_warps"]
    launches = {}
    for side, kernel in case["kernels"].items():
        src, want_src, want_dst = _arrays(case, kernel, tiles)
        buffers = (cp.asarray(np.ascontiguousarray(np.broadcast_to(src[:1], (ctas,) + src.shape[1:]))),
                   cp.zeros((ctas,) + want_src.shape[1:], want_src.dtype),
                   cp.zeros((ctas,) + want_dst.shape[1:], want_dst.dtype))
        launches[side] = (runner.function(kernel), kernel, buffers)
    times = {side: [] for side in launches}
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    for repeat in range(warmup + repeats):
        for side, (fn, kernel, buffers) in launches.items():
            start.record()
            runner.launch(fn, kernel, ctas, threads, buffers, iterations)
            stop.record()
            stop.synchronize()
            if repeat >= warmup:
                times[side].append(cp.cuda.get_elapsed_time(start, stop) * 1000.0)
    return {side: {"us": float(np.median(t)), "us_min": float(np.min(t))} for side, t in times.items()}


FATAL = 3  # exit status: the GPU context was lost (a kernel faulted); run again with --resume


def _context_lost(runner: Runner, error: Exception) -> bool:
    """Whether ``error`` left the CUDA context unusable (a fault inside a kernel)."""
    cuda = runner.cp.cuda
    if not isinstance(error, (cuda.runtime.CUDARuntimeError, cuda.driver.CUDADriverError)):
        return False
    try:
        cuda.runtime.deviceSynchronize()
        return False
    except Exception:  # noqa: BLE001 -- any failure to synchronize means the context is gone
        return True


def run(folder: Path, out: Path, iterations: int, ctas_per_sm: int, warmup: int, repeats: int,
        only: list[str] | None = None, resume: bool = False) -> tuple[dict, bool]:
    """Check and time every case of the built ``folder``, writing the results document to ``out``
    after each case.  ``resume`` keeps the cases ``out`` already holds (a run cut off by a kernel
    fault: that case is recorded with its error and the next process goes on after it).
    Returns (the document, whether the GPU context was lost)."""
    manifest = json.loads((folder / "manifest.json").read_text())
    tiles = np.load(folder / "tiles.npz")
    runner = Runner(folder)
    ctas = runner.sm_count * ctas_per_sm
    rows = json.loads(out.read_text())["cases"] if resume and out.exists() else []
    done = {r["name"] for r in rows}
    doc = {"format": "linlayout_nvidia_plan_runs/v1", "device": runner.device, "capability": runner.capability,
           "sm_count": runner.sm_count, "iterations": iterations, "timing_ctas": ctas, "warmup": warmup,
           "repeats": repeats, "build": manifest.get("build", {}), "cases": rows}
    for case in manifest["cases"]:
        if (only and case["name"] not in only) or case["name"] in done:
            continue
        row = {"name": case["name"], "element_bits": case["element_bits"], "num_warps": case["num_warps"]}
        lost = False
        try:
            row["check_1"] = check_case(runner, case, tiles, 1)
            row["check_k"] = check_case(runner, case, tiles, iterations)
            row["time"] = time_case(runner, case, tiles, iterations, ctas, warmup, repeats)
        except Exception as e:  # noqa: BLE001 -- a kernel that fails to load or run is reported with its case
            row["error"] = f"{type(e).__name__}: {e}"
            lost = _context_lost(runner, e)
        rows.append(row)
        out.write_text(json.dumps(doc, indent=1) + "\n")
        print(_line(row), flush=True)
        if lost:
            return doc, True
    return doc, False


def _line(row: dict) -> str:
    if "error" in row:
        return f"{row['name']}: ERROR {row['error']}"
    parts = [row["name"]]
    for side in row["time"]:
        checks = [row[k][side] for k in ("check_1", "check_k")]
        exact = all(c["bit_exact"] for c in checks)
        t = row["time"][side]["us"]
        parts.append(f"{side} {'exact' if exact else 'MISMATCH'} {t:.1f}us")
        for c in checks:
            parts += c["errors"][:2]
    return " | ".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = ScriptParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path, help="the folder run_plans.py build wrote")
    ap.add_argument("--out", type=Path, help="results JSON (default FOLDER/results.json)")
    ap.add_argument("--iterations", type=int, default=256, help="round trips per timed launch")
    ap.add_argument("--ctas-per-sm", type=int, default=4, help="CTAs per SM in the timed launches")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--case", action="append", help="run only this case (repeatable)")
    ap.add_argument("--resume", action="store_true", help="keep the cases already in --out (after a kernel fault)")
    args = ap.parse_args(argv)
    path = args.out or args.folder / "results.json"
    doc, lost = run(args.folder, path, args.iterations, args.ctas_per_sm, args.warmup, args.repeats, args.case,
                    args.resume)
    if lost:
        print(f"the GPU context was lost at {doc['cases'][-1]['name']}; run again with --resume", flush=True)
        return FATAL
    bad = [r["name"] for r in doc["cases"] if "error" in r or not all(
        c["bit_exact"] for k in ("check_1", "check_k") for c in r[k].values())]
    print(f"{len(doc['cases']) - len(bad)} of {len(doc['cases'])} cases bit-exact on every side; wrote {path}")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
