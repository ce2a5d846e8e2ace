"""Do 16-byte shared-memory accesses cost an NVIDIA round trip more than their wavefronts say?

An experiment on the fp32 pairs of 2 to 8 warps whose plans go through shared memory one way or
both (38 of the recorded run's pairs, ``results/plans.json``): each pair is built twice with
``run_plans.build``, once with the planner as it is (16-byte ``ld``/``st.shared.v4`` where a lane's
elements are contiguous) and once with every shared access capped at 4 bytes, and the GPU times both
builds in the order A B B A, so that a drift of the clock between launches cancels.

The cap is not a planner option: the 4-byte build swaps, for its own process only, the sm_90
target for one whose shared-memory ops are the ``b8``/``b16``/``b32`` ones (so the swizzle search
looks for conflict-free 4-byte accesses) and caps the vector bits ``lds_path._choose_vectors``
may give an access at 0 (one 4-byte element).  Plans are verified on the emulator as always, and
the runner checks both builds bit for bit.

    python benchmarks/nvidia/access_width.py build --out DIR --reuse-triton EARLIER_BUILD
    python3 benchmarks/nvidia/plan_runner.py DIR/wide --out DIR/wide_1.json   # on the GPU: wide, narrow,
    python3 benchmarks/nvidia/plan_runner.py DIR/narrow --out DIR/narrow_1.json  # narrow, wide (A B B A)
    ...
    python benchmarks/nvidia/access_width.py report DIR/narrow_1.json DIR/wide_1.json DIR/wide_2.json \\
        DIR/narrow_2.json --out results/access_width_h200.json

``report`` takes the runner's results in run order, each named ``wide_*`` or ``narrow_*``, and gives
per pair the narrow build's time over the wide one's (each side's times summed over its runs), their
geometric mean, and the wide build's time over Triton's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from contextlib import contextmanager
from pathlib import Path
from types import MappingProxyType

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

import run_plans  # noqa: E402

from linlayout import caches  # noqa: E402
from linlayout.hw import targets  # noqa: E402
from linlayout.synth import lds_path  # noqa: E402

RECORDED = HERE / "results" / "plans.json"
CORPUS = REPO / "benchmarks" / "data" / "triton_nvidia_corpus.json"
NARROW_OPS = (".b8", ".b16", ".b32")  # the shared-memory ops of at most 4 bytes a lane


def round_trip_pairs(recorded: Path = RECORDED) -> list[run_plans.PairCase]:
    """The corpus's fp32 pairs of 2 warps or more whose recorded plans use shared memory in some
    direction, in corpus order."""
    rows = json.loads(recorded.read_text())["rows"]
    names = {r["name"] for r in rows if r["element_bits"] == 32 and r["num_warps"] >= 2
             and "lds" in r["plan"]["strategy"]}
    return [c for c in run_plans.distinct(run_plans.corpus_cases(CORPUS)) if c.name in names]


@contextmanager
def four_byte_accesses():
    """Within it, the planner's sm_90 shared accesses are at most 4 bytes a lane (module doc)."""
    target, choose = targets.TARGETS[run_plans.ARCH], lds_path._choose_vectors
    narrow = {op: phases for op, phases in target.lds_phases.items() if op.endswith(NARROW_OPS)}
    targets.TARGETS[run_plans.ARCH] = dataclasses.replace(target, lds_phases=MappingProxyType(narrow))
    lds_path._choose_vectors = lambda side, vector_bits_cap, *rest: choose(side, 0, *rest)
    caches.clear()
    try:
        yield
    finally:
        targets.TARGETS[run_plans.ARCH], lds_path._choose_vectors = target, choose
        caches.clear()


def build(out: Path, reuse_triton: Path | None) -> None:
    cases = round_trip_pairs()
    run_plans.build(cases, out / "wide", reuse_triton=reuse_triton, triton=reuse_triton is not None)
    with four_byte_accesses():
        run_plans.build(cases, out / "narrow", triton=False)
    print(f"{len(cases)} pairs built into {out}/wide and {out}/narrow")


def report(results: list[Path], out: Path) -> dict:
    runs: dict[str, list[dict]] = {"wide": [], "narrow": []}
    for path in results:
        side = path.name.split("_")[0]
        if side not in runs:
            raise SystemExit(f"{path.name}: a results file must be named wide_* or narrow_*")
        runs[side].append({c["name"]: c for c in json.loads(path.read_text())["cases"]})
    if not runs["wide"] or not runs["narrow"]:
        raise SystemExit("give at least one wide_* and one narrow_* results file")

    def total(side: str, name: str, kernel: str = "ours") -> float:
        return sum(run[name]["time"][kernel]["us"] for run in runs[side])

    exact = all(c["check_k"]["ours"]["bit_exact"] for side in runs.values() for run in side for c in run.values())
    rows = [{"name": n, "narrow_over_wide": total("narrow", n) / total("wide", n),
             "wide_over_triton": total("wide", n) / total("wide", n, "triton")} for n in runs["wide"][0]]
    geomean = {k: math.exp(sum(math.log(r[k]) for r in rows) / len(rows)) for k in ("narrow_over_wide",
                                                                                  "wide_over_triton")}
    summary = {"order": [p.name for p in results], "pairs": len(rows), "bit_exact": exact,
               "geomean": geomean, "narrow_faster": sum(r["narrow_over_wide"] < 1 for r in rows), "rows": rows}
    out.write_text(json.dumps(summary, indent=1) + "\n")
    print(f"{len(rows)} pairs, bit-exact {exact}: 4-byte / 16-byte accesses {geomean['narrow_over_wide']:.3f} "
          f"(4-byte faster on {summary['narrow_faster']}); 16-byte / Triton {geomean['wide_over_triton']:.3f}")
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("--out", type=Path, required=True)
    b.add_argument("--reuse-triton", type=Path, metavar="DIR", help="Triton's kernels from an earlier build")
    r = sub.add_parser("report")
    r.add_argument("results", type=Path, nargs="+", help="the runner's results, in run order")
    r.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    if args.command == "build":
        build(args.out, args.reuse_triton)
    else:
        report(args.results, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
