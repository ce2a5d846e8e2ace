"""Do 16-byte shared-memory accesses cost an NVIDIA round trip more than their wavefronts say?

An experiment on the fp32 pairs of 2 to 8 warps whose plans go through shared memory one way or
both (38 of the recorded run's pairs, ``results/plans.json``): each pair is built twice with
``run_plans.build``, once with the planner as it is (16-byte ``ld``/``st.shared.v4`` where a lane's
elements are contiguous) and once with every shared access capped at 4 bytes, and the GPU times both
builds in alternating order (the recorded run: narrow, wide, wide, narrow, wide, narrow, narrow, wide),
so that a drift of the clock between launches cancels.

The cap is not a planner option: the 4-byte build swaps, for its own process only, the sm_90
target for one whose shared-memory ops are the ``b8``/``b16``/``b32`` ones (so the swizzle search
looks for conflict-free 4-byte accesses) and caps the vector bits ``lds_path._choose_vectors``
may give an access at 0 (one 4-byte element).  Plans are verified on the emulator as always, and
the runner checks both builds bit for bit.

    python benchmarks/nvidia/access_width.py build --out DIR --reuse-triton EARLIER_BUILD
    for s in narrow_1 wide_1 wide_2 narrow_2 wide_3 narrow_3 narrow_4 wide_4; do    # on the GPU, repository root
        python3 benchmarks/nvidia/plan_runner.py DIR/${s%_*} --out DIR/$s.json; done
    python benchmarks/nvidia/access_width.py report DIR/narrow_1.json DIR/wide_1.json ... DIR/wide_4.json \\
        --out results/access_width_h200.json
    for c in 1 1 2 4 8 8; do python3 benchmarks/nvidia/plan_runner.py DIR/wide --ctas-per-sm $c --out DIR/wide_c${c}_$RANDOM.json; done
    python benchmarks/nvidia/access_width.py ctas DIR/wide_c*.json --out results/ctas_per_sm_h200.json

``report`` takes the runner's results in run order, each named ``wide_*`` or ``narrow_*``, and gives
per pair the narrow build's time over the wide one's (each side's times summed over its runs), their
geometric mean, and the wide build's time over Triton's.  ``ctas`` takes runs of the wide build at
several CTAs per SM and gives, per run, our time over Triton's (geometric mean over the pairs).
A results file that is missing, not a runner result, or empty is one line and exit 2.
"""

from __future__ import annotations

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

from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout import LayoutError, caches  # noqa: E402
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


def read_run(path: Path) -> dict:
    """One runner result (``plan_runner.py --out``) as ``{"doc": .., "cases": {name: case}}``; a
    LayoutError naming the file when it is missing, not JSON, or holds no timed case."""
    try:
        doc = json.loads(path.read_text())
        cases = {c["name"]: c for c in doc["cases"]}
        for c in cases.values():
            c["time"]["ours"]["us"], c["check_k"]["ours"]["bit_exact"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise LayoutError(f"{path}: not a plan_runner result ({type(e).__name__}: {e})") from None
    if not cases:
        raise LayoutError(f"{path}: no case in it")
    return {"doc": doc, "cases": cases}


def _geomean(values: list[float]) -> float:
    return math.exp(sum(map(math.log, values)) / len(values))


def report(results: list[Path], out: Path) -> dict:
    """The 4-byte build's time over the 16-byte build's per pair (each side's times summed over its
    runs, ``narrow_*`` and ``wide_*`` files), and the 16-byte build's over Triton's."""
    runs: dict[str, list[dict]] = {"wide": [], "narrow": []}
    for path in results:
        side = path.name.split("_")[0]
        if side not in runs:
            raise LayoutError(f"{path.name}: a results file must be named wide_* or narrow_*")
        runs[side].append(read_run(path)["cases"])
    if not runs["wide"] or not runs["narrow"]:
        raise LayoutError("give at least one wide_* and one narrow_* results file")
    names = list(runs["wide"][0])
    if any(list(run) != names for side in runs.values() for run in side):
        raise LayoutError("the results files do not time the same pairs")

    def total(side: str, name: str, kernel: str = "ours") -> float:
        return sum(run[name]["time"][kernel]["us"] for run in runs[side])

    exact = all(c["check_k"]["ours"]["bit_exact"] for side in runs.values() for run in side for c in run.values())
    rows = [{"name": n, "narrow_over_wide": total("narrow", n) / total("wide", n),
             "wide_over_triton": total("wide", n) / total("wide", n, "triton")} for n in names]
    geomean = {k: _geomean([r[k] for r in rows]) for k in ("narrow_over_wide", "wide_over_triton")}
    summary = {"order": [p.name for p in results], "pairs": len(rows), "bit_exact": exact,
               "geomean": geomean, "narrow_faster": sum(r["narrow_over_wide"] < 1 for r in rows), "rows": rows}
    out.write_text(json.dumps(summary, indent=1) + "\n")
    print(f"{len(rows)} pairs, bit-exact {exact}: 4-byte / 16-byte accesses {geomean['narrow_over_wide']:.3f} "
          f"(4-byte faster on {summary['narrow_faster']}); 16-byte / Triton {geomean['wide_over_triton']:.3f}")
    return summary


def report_ctas(results: list[Path], out: Path) -> dict:
    """Per runner result of the 16-byte build (each launched with its own ``--ctas-per-sm``): the
    CTAs per SM (its ``timing_ctas`` over ``sm_count``), our time over Triton's (geometric mean over
    the pairs) and the pairs where ours is faster."""
    rows = []
    for path in results:
        run = read_run(path)
        ratios = [c["time"]["ours"]["us"] / c["time"]["triton"]["us"] for c in run["cases"].values()]
        rows.append({"file": path.name, "ctas_per_sm": run["doc"]["timing_ctas"] // run["doc"]["sm_count"],
                     "pairs": len(ratios), "ours_over_triton": _geomean(ratios),
                     "ours_faster": sum(r < 1 for r in ratios),
                     "bit_exact": all(c["check_k"][k]["bit_exact"] for c in run["cases"].values()
                                      for k in ("ours", "triton"))})
    out.write_text(json.dumps({"runs": rows}, indent=1) + "\n")
    for r in rows:
        print(f"{r['ctas_per_sm']} CTAs per SM: ours / Triton {r['ours_over_triton']:.3f}, ours faster on "
              f"{r['ours_faster']} of {r['pairs']}, bit-exact {r['bit_exact']}")
    return {"runs": rows}


def main(argv: list[str] | None = None) -> int:
    ap = ScriptParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("--out", type=Path, required=True)
    b.add_argument("--reuse-triton", type=Path, metavar="DIR", help="Triton's kernels from an earlier build")
    for name, text in (("report", "4-byte against 16-byte accesses"), ("ctas", "ours / Triton by CTAs per SM")):
        r = sub.add_parser(name, help=text)
        r.add_argument("results", type=Path, nargs="+", help="the runner's results, in run order")
        r.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    try:
        if args.command == "build":
            build(args.out, args.reuse_triton)
        else:
            (report if args.command == "report" else report_ctas)(args.results, args.out)
    except LayoutError as e:
        print(f"access_width.py: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
