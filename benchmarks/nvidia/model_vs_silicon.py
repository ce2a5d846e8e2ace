"""Does the NVIDIA cost model order a random pair's kernels as the GPU does?

Reads a run of random pairs (``run_plans.py build --random N --seed S --variants registers,lds``,
timed by ``plan_runner.py``, reported as ``plans.json``), re-plans every timed kernel's two plans on
the CPU (case ``#k`` of seed ``S`` is ``random_cases.draw(S, k)``; side ``ours`` is the default
strategy, ``ours_<strategy>`` the forced one, each under the case's own objective) and compares the
model's prices with the measured times:

* **rank agreement**: for every two kernels of one pair whose times differ by more than
  ``CLEAR`` (10 %), does the model's value of the kernel (the NVIDIA ``latency`` value
  ``max(simd, lds_pipe) + latency`` of each plan, summed over forward and back) order them as
  the GPU did?  The kernels of one pair run the same harness, so the fixed load/store overhead
  does not enter the order.  The same count under a re-pricing (``Pricing``: the latency of a
  dependent level, the ALU issue, the pipe cycles of shuffles or of 64-bit elements' shared
  accesses scaled) says whether one price is off;
* **outliers by objective**: pairs whose default kernel is over ``CLEAR`` slower than the fastest
  forced one, per case objective, and the same when each pair's kernel is picked by its summed
  latency value instead;
* **differences by kind**: for two kernels of one pair of different kinds (``lanes``: shuffles
  both ways, ``lds``: round trips both ways, ``mixed``), the median of measured minus modelled
  time difference in SM cycles per iteration (``us_per_cycle``: the run's iterations at the SM
  clock), per warps;
* **fit**: per warps, least squares of the measured cycles per iteration on the summed parts
  (``simd``, ``lds_pipe``, round-trip levels, shuffle levels, a constant) over kernels of at most
  ``FIT_REGISTERS`` 32-bit registers per thread on either side (bigger tiles spill).

``HARNESS`` prices a kernel as the harness runs it: the two conversions of an iteration work on
independent tiles, so the latency of one hides under the other (``Pricing.overlap_directions``).

    python benchmarks/nvidia/model_vs_silicon.py benchmarks/nvidia/results/random/plans.json [--limit N] [--json OUT]
"""

from __future__ import annotations

import itertools
import json
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))  # the repository root: benchmarks.script_args

from random_cases import draw  # noqa: E402

from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout.synth import cost  # noqa: E402
from linlayout.synth.convert import plan_conversion  # noqa: E402

__all__ = ["CLEAR", "FIT_REGISTERS", "HARNESS", "Kernel", "Pair", "Pricing", "StaleRun", "fit_parts", "kind_differences", "load_pairs",
           "outliers_by_objective", "rank_agreement"]

CLEAR = 1.10  # two kernels' times differ clearly above this ratio
FIT_REGISTERS = 16  # the fit's largest tile, 32-bit registers per thread on either side
SM_CLOCK_MHZ = 1980.0  # the H200's SM clock under load (docs/nvidia_facts.md section 8)
SIDES = {"ours": "auto", "ours_registers": "registers", "ours_lds": "lds"}
ALU_KINDS = ("selp", "prmt", "mov")
_NAME = re.compile(r"^random s(\d+) #(\d+) ")


@dataclass(frozen=True)
class Pricing:
    """The NVIDIA latency value of a plan from its parts with some prices changed: each dependent
    MIO level ``latency_per_level`` cycles (the model: ``NV_SHARED_LATENCY``), each ALU
    instruction ``alu_issue`` (``NV_ALU_ISSUE``), the MIO-pipe cycles of shuffles times
    ``shuffle_factor`` and those of a 64-bit element's shared accesses times ``wide_factor``, and
    ``round_trip_cycles`` added to a plan through shared memory (strategy ``lds``), each
    ``bar.sync`` ``bar_sync_cycles`` (``NV_BAR_SYNC``).
    ``Pricing()`` is the model's own value (``plan.cost_detail["latency_value"]``).

    ``overlap_directions``: a kernel's value (``Kernel.value``) is the sum of its two plans'
    values but for the latency, where only the larger plan's counts: the harness's iteration runs
    ``backward(y)`` and ``forward(x)`` on two independent tiles, so one plan's latency hides under
    the other's (``roundtrip_cuda.py``)."""

    latency_per_level: float = cost.NV_SHARED_LATENCY
    alu_issue: float = cost.NV_ALU_ISSUE
    shuffle_factor: float = 1.0
    wide_factor: float = 1.0
    round_trip_cycles: float = 0.0
    bar_sync_cycles: float = cost.NV_BAR_SYNC
    overlap_directions: bool = False

    def value(self, parts: dict, counts: dict, element_bits: int, strategy: str) -> tuple[float, float]:
        """(the plan's busiest pipe with any ``round_trip_cycles``, its latency)."""
        cm = cost.cost_model("sm_90", "latency")
        alu = sum(counts.get(k, 0) for k in ALU_KINDS)
        shuffle_pipe = sum(counts.get(k, 0) * cm.lds_pipe_share(k) for k in cost.CROSSBAR_KINDS)
        shared_pipe = parts["lds_pipe"] - shuffle_pipe
        simd = (parts["simd"] + alu * (self.alu_issue - cm.valu_issue)
                + counts.get("bar.sync", 0) * (self.bar_sync_cycles - cm.barrier_cycles))
        pipe = shuffle_pipe * self.shuffle_factor + shared_pipe * (self.wide_factor if element_bits == 64 else 1.0)
        round_trip = self.round_trip_cycles if strategy == "lds" else 0.0
        return max(simd, pipe) + round_trip, parts["latency"] * self.latency_per_level / cm.ds_latency


@dataclass(frozen=True)
class Kernel:
    """One timed round-trip kernel: its side, time (us) and its two plans' counts and cost parts."""

    side: str
    us: float
    strategies: tuple[str, str]
    counts: tuple[dict, dict]
    parts: tuple[dict, dict]

    @property
    def kind(self) -> str:
        """``lanes`` or ``lds`` when both plans are, else ``mixed``."""
        return self.strategies[0] if self.strategies[0] == self.strategies[1] else "mixed"

    def value(self, pricing: Pricing, element_bits: int) -> float:
        """The two plans' values under ``pricing``, summed (``Pricing.overlap_directions``: the
        latency of the larger only)."""
        pipes, latencies = zip(*(pricing.value(p, c, element_bits, s)
                                 for p, c, s in zip(self.parts, self.counts, self.strategies)))
        return sum(pipes) + (max(latencies) if pricing.overlap_directions else sum(latencies))

    def total(self, part: str) -> float:
        return sum(p[part] for p in self.parts)


@dataclass(frozen=True)
class Pair:
    """A random pair of the run with its timed kernels (``ours`` first)."""

    name: str
    element_bits: int
    num_warps: int
    objective: str
    registers: int  # the larger side's 32-bit registers per thread
    kernels: tuple[Kernel, ...]

    def fastest_forced(self) -> float:
        return min(k.us for k in self.kernels[1:])


def _kernel(side: str, us: float, plans) -> Kernel:
    return Kernel(side, us, tuple(p.strategy for p in plans), tuple(p.counts() for p in plans),
                  tuple(p.cost_detail for p in plans))


class StaleRun(RuntimeError):
    """A run whose default plans this tree prices otherwise than the run recorded."""


def load_pairs(path: Path, limit: int | None = None) -> tuple[list[Pair], float]:
    """The run's pairs (the first ``limit`` rows), each re-planned, and its us per SM cycle per
    iteration.  A default plan whose price differs from the one the run recorded is a
    :class:`StaleRun`: this tree would not price the kernel that was timed.  A file that is not a
    run's report (no ``iterations`` and ``rows``) or a row not named as a random pair is a
    ValueError, as is a file that is not JSON."""
    run = json.loads(Path(path).read_text())
    if not isinstance(run, dict) or not {"iterations", "rows"} <= run.keys():
        raise ValueError("not a run's plans.json (run_plans.py report): no iterations and rows")
    us_per_cycle = run["iterations"] / SM_CLOCK_MHZ
    pairs = []
    for row in run["rows"][:limit]:
        match = _NAME.match(row["name"])
        if match is None:
            raise ValueError(f"{row['name']!r} is not a random pair's name")
        case = draw(int(match[1]), int(match[2]))
        kernels = []
        for side, strategy in SIDES.items():
            if side not in row:
                continue
            plans = [plan_conversion(a, b, case.arch, case.element_bits, strategy=strategy,
                                     **({"objective": case.objective} if case.objective else {}))
                     for a, b in ((case.src, case.dst), (case.dst, case.src))]
            if side == "ours" and [round(p.cost, 1) for p in plans] != row["plan"]["cost"]:
                raise StaleRun(f"{row['name']}: plan costs {[p.cost for p in plans]}, the run's {row['plan']['cost']}")
            kernels.append(_kernel(side, row[side]["us"], plans))
        dwords = 2 if case.element_bits == 64 else 1
        registers = dwords * max(case.src.in_dim_size("register"), case.dst.in_dim_size("register"))
        pairs.append(Pair(row["name"], case.element_bits, case.num_warps, case.objective or "default", registers,
                          tuple(kernels)))
    return pairs, us_per_cycle


def _clear_orders(pairs: list[Pair]):
    """(pair, faster kernel, slower kernel) for every two kernels of a pair over ``CLEAR`` apart."""
    for pair in pairs:
        for a, b in itertools.combinations(pair.kernels, 2):
            if max(a.us, b.us) > CLEAR * min(a.us, b.us):
                yield (pair, a, b) if a.us < b.us else (pair, b, a)


def rank_agreement(pairs: list[Pair], pricing: Pricing = Pricing()) -> dict:
    """Of the clear orders (``_clear_orders``) the model values differently, how many it gets
    right (``agree``) and wrong (``disagree``), and ``slow_picks``: pairs of several kernels where
    the one of least value is over ``CLEAR`` slower than the fastest (ties go to ``ours``)."""
    agree = disagree = 0
    for pair, fast, slow in _clear_orders(pairs):
        fast_value, slow_value = fast.value(pricing, pair.element_bits), slow.value(pricing, pair.element_bits)
        agree += fast_value < slow_value
        disagree += fast_value > slow_value
    slow_picks = 0
    for pair in pairs:
        if len(pair.kernels) > 1:
            pick = min(pair.kernels, key=lambda k: k.value(pricing, pair.element_bits))
            slow_picks += pick.us > CLEAR * min(k.us for k in pair.kernels)
    return {"agree": agree, "disagree": disagree, "slow_picks": slow_picks}


def outliers_by_objective(pairs: list[Pair]) -> dict[str, dict]:
    """Per case objective, of the pairs with forced kernels: how many, how many have the default
    kernel over ``CLEAR`` slower than the fastest forced one (``outliers``), and how many of all
    kernels picked by latency value are over ``CLEAR`` slower than the pair's fastest
    (``by_latency``)."""
    out: dict[str, dict] = {}
    for pair in pairs:
        if len(pair.kernels) < 2:
            continue
        row = out.setdefault(pair.objective, {"pairs": 0, "outliers": 0, "by_latency": 0})
        row["pairs"] += 1
        row["outliers"] += pair.kernels[0].us > CLEAR * pair.fastest_forced()
        row["by_latency"] += rank_agreement([pair])["slow_picks"]
    return dict(sorted(out.items()))


def kind_differences(pairs: list[Pair], us_per_cycle: float, pricing: Pricing = Pricing()) -> dict[str, dict]:
    """For kernels of one pair of different kinds, ``"<kind a> - <kind b> w<warps>"`` -> the count
    and the median of (measured - modelled under ``pricing``) time difference of a minus b in SM
    cycles per iteration (a positive median: ``pricing`` makes a's kind too cheap against b's)."""
    diffs: dict[str, list[float]] = {}
    order = ("lanes", "mixed", "lds")
    for pair in pairs:
        for a, b in itertools.combinations(pair.kernels, 2):
            if a.kind == b.kind:
                continue
            a, b = sorted((a, b), key=lambda k: order.index(k.kind))
            measured = (a.us - b.us) / us_per_cycle
            modelled = a.value(pricing, pair.element_bits) - b.value(pricing, pair.element_bits)
            diffs.setdefault(f"{a.kind} - {b.kind} w{pair.num_warps}", []).append(measured - modelled)
    return {k: {"kernels": len(v), "median_cycles": round(statistics.median(v), 1)} for k, v in sorted(diffs.items())}


FIT_TERMS = ("simd", "lds_pipe", "round-trip levels", "shuffle levels", "constant")


def _terms(kernel: Kernel) -> list[float]:
    round_trip_levels = sum(2 for s in kernel.strategies if s == "lds")
    return [kernel.total("simd"), kernel.total("lds_pipe"), round_trip_levels,
            kernel.total("ds_depth") - round_trip_levels, 1.0]


def fit_parts(pairs: list[Pair], us_per_cycle: float) -> dict[int, dict]:
    """Per warps, the least-squares coefficients (``FIT_TERMS``) of the measured SM cycles per
    iteration of every kernel of pairs of at most ``FIT_REGISTERS`` registers, with its R^2 (the
    model's coefficients: simd and lds_pipe 1 through their maximum, 25 a level)."""
    out = {}
    for warps in sorted({p.num_warps for p in pairs}):
        kernels = [k for p in pairs if p.num_warps == warps and p.registers <= FIT_REGISTERS for k in p.kernels]
        if len(kernels) <= len(FIT_TERMS):
            continue
        x = np.array([_terms(k) for k in kernels])
        y = np.array([k.us / us_per_cycle for k in kernels])
        coef = np.linalg.lstsq(x, y, rcond=None)[0]
        r2 = 1.0 - float(((x @ coef - y) ** 2).sum() / ((y - y.mean()) ** 2).sum())
        out[warps] = {"kernels": len(kernels), "r2": round(r2, 3),
                      **{t: round(float(c), 2) for t, c in zip(FIT_TERMS, coef)}}
    return out


HARNESS = Pricing(overlap_directions=True)
SWEEP = {"model": Pricing(), "harness: one direction's latency": HARNESS,
         **{f"latency {v:g}/level": Pricing(latency_per_level=v) for v in (0, 5, 10, 15, 35)},
         **{f"64-bit shared wavefronts x{v:g}": Pricing(wide_factor=v) for v in (1.5, 2)},
         **{f"shuffle pipe x{v:g}": Pricing(shuffle_factor=v) for v in (1.5, 2)},
         **{f"ALU issue {v:g}": Pricing(alu_issue=v) for v in (1, 3, 4)},
         **{f"round trip {v:+g}": Pricing(round_trip_cycles=v) for v in (-10, -20, -25, -30)},
         **{f"bar.sync {v:g}": Pricing(bar_sync_cycles=v) for v in (0, 10, 40, 80)}}


def analyse(pairs: list[Pair], us_per_cycle: float) -> dict:
    return {"pairs": len(pairs), "with_forced": sum(len(p.kernels) > 1 for p in pairs),
            "sweep": {name: rank_agreement(pairs, pricing) for name, pricing in SWEEP.items()},
            "objectives": outliers_by_objective(pairs), "kinds": kind_differences(pairs, us_per_cycle),
            "kinds_harness": kind_differences(pairs, us_per_cycle, HARNESS),
            "fit": fit_parts(pairs, us_per_cycle)}


def markdown(result: dict) -> str:
    lines = [f"{result['pairs']} pairs, {result['with_forced']} with forced kernels; clear: over {CLEAR:g}x apart", "",
             "| pricing | clear orders right | wrong | pairs whose cheapest kernel is clearly slow |", "|---|---|---|---|"]
    lines += [f"| {n} | {r['agree']} | {r['disagree']} | {r['slow_picks']} |" for n, r in result["sweep"].items()]
    lines += ["", "| objective | pairs | default clearly slower than fastest forced | picked by latency value |",
              "|---|---|---|---|"]
    lines += [f"| {n} | {r['pairs']} | {r['outliers']} | {r['by_latency']} |" for n, r in result["objectives"].items()]
    lines += ["", "| kinds, warps | kernel pairs | median measured - modelled (cycles/iteration) | the same, harness |",
              "|---|---|---|---|"]
    lines += [f"| {n} | {r['kernels']} | {r['median_cycles']} | {result['kinds_harness'][n]['median_cycles']} |"
              for n, r in result["kinds"].items()]
    lines += ["", "| warps | kernels | R^2 | " + " | ".join(FIT_TERMS) + " |", "|---" * (3 + len(FIT_TERMS)) + "|"]
    lines += [f"| {w} | {r['kernels']} | {r['r2']} | " + " | ".join(str(r[t]) for t in FIT_TERMS) + " |"
              for w, r in result["fit"].items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = ScriptParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("plans", type=Path, help="a random run's plans.json (run_plans.py report)")
    parser.add_argument("--limit", type=int, help="only the first LIMIT rows")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args(argv)
    if args.json and not args.json.parent.is_dir():
        parser.error(f"--json {args.json}: no directory {args.json.parent}")
    try:
        result = analyse(*load_pairs(args.plans, args.limit))
    except (OSError, ValueError, StaleRun) as error:  # a missing file, not JSON, not a random run, stale
        parser.error(f"{args.plans}: {error}")
    if args.json:
        try:
            args.json.write_text(json.dumps(result, indent=1) + "\n")
        except OSError as error:
            parser.error(f"--json {args.json}: {error.strerror}")
    print(markdown(result), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
