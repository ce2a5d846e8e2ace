"""linlayout vs Triton 3.9.0's C++ (through Gluon's builder): encoding -> layout, and bank conflicts.

Usage: ``python benchmarks/bench_triton_encodings.py [--layouts N] [--banks N] [--seed S] [--json]``

Both sides get the same corpus of *distinct* random encodings (tests/triton_random_encodings.py;
the script checks there are no repeats, so no per-call cache can help either side) and each
case is timed once per pass, best of ``--passes`` passes (the two sides alternate):

* layouts: linlayout ``encoding_from_params(...).to_linear_layout(shape)`` from the params
  dict, against Triton ``layout._to_ir(builder)`` + ``builder.to_linear_layout(attr, shape)``
  from a prebuilt Gluon layout object;
* bank conflicts: linlayout builds both layouts from their encodings and counts with
  ``bank_conflicts_memdesc`` (the work Triton's call does: it converts both attributes
  itself), against Triton ``get_shared_bank_conflicts``.  Only cases that both count.

Triton runs in a worker process (tests/triton_worker.py); every pass is a fresh worker,
so Triton's own layout cache starts empty (linlayout's encoding code keeps no cache).
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout import LayoutError  # noqa: E402
from linlayout.encodings import encoding_from_params, gluon_source  # noqa: E402
from linlayout.synth.triton_swizzle import bank_conflicts_memdesc  # noqa: E402
from triton_oracle import TRITON_VERSION, ask_triton, triton_version  # noqa: E402
from triton_random_encodings import random_encoding, random_encodings, swizzled_params  # noqa: E402


def _split(case: dict) -> tuple[str, dict, list[int]]:
    params = dict(case)
    return params.pop("encoding"), params, params.pop("shape")


def layout_corpus(seed: int, count: int) -> list[dict]:
    """``count`` distinct encodings that linlayout and Triton both build (Triton asked once)."""
    pool = random_encodings(seed, count * 2)
    unique = list({json.dumps(c, sort_keys=True): c for c in pool}.values())
    ours = []
    for case in unique:
        kind, params, _ = _split(case)
        try:
            ours.append((case, gluon_source(encoding_from_params(kind, params))))
        except LayoutError:
            continue
    answers = ask_triton([{"op": "layout", "gluon": g, "shape": c["shape"]} for c, g in ours])
    both = [(c, g) for (c, g), a in zip(ours, answers) if "error" not in a]
    return both[:count]


def bank_corpus(seed: int, count: int) -> list[tuple[dict, dict, int]]:
    """``count`` distinct (register encoding, swizzled shared encoding, bitwidth) both count."""
    rng = random.Random(seed)
    seen, cases = set(), []
    while len(cases) < count:
        kind = rng.choice(("blocked", "blocked", "amd_mfma", "amd_mfma_dot_operand", "nvidia_mma", "amd_wmma"))
        reg = {k: v for k, v in random_encoding(rng, kind).items() if not k.startswith("CTA")}
        if "parent" in reg:
            reg["parent"] = {k: v for k, v in reg["parent"].items() if not k.startswith("CTA")}
        shared = {"encoding": "swizzled_shared", "shape": reg["shape"],
                  **{k: v for k, v in swizzled_params(rng, len(reg["shape"])).items() if not k.startswith("CTA")}}
        bitwidth = rng.choice((8, 16, 32, 64))
        key = json.dumps([reg, shared, bitwidth], sort_keys=True)
        if key in seen:
            continue
        try:
            _count_banks(reg, shared, bitwidth)
        except LayoutError:
            continue
        seen.add(key)
        cases.append((reg, shared, bitwidth))
    return cases


def _build(case: dict):
    kind, params, shape = _split(case)
    return encoding_from_params(kind, params).to_linear_layout(shape)


def _count_banks(reg: dict, shared: dict, bitwidth: int) -> int:
    return bank_conflicts_memdesc(_build(reg), _build(shared), bitwidth, 32)[0]


def _bank_request(reg: dict, shared: dict, bitwidth: int) -> list:
    lanes = _build(reg).in_dim_size("lane")
    reg_source = gluon_source(encoding_from_params(*_split(reg)[:2]))
    return [reg_source, gluon_source(encoding_from_params(*_split(shared)[:2])), reg["shape"], bitwidth, lanes]


def _best_of(passes: int, ours, triton_op: str, triton_cases: list) -> tuple[float, float]:
    """Best pass of each side; the passes alternate so both sides see the same machine load."""
    best_ours = best_triton = float("inf")
    for _ in range(passes):
        start = time.perf_counter()
        ours()
        best_ours = min(best_ours, time.perf_counter() - start)
        answer = ask_triton([{"op": triton_op, "cases": triton_cases, "repeat": 1}])[0]
        best_triton = min(best_triton, answer["seconds"])
    return best_ours, best_triton


def main(argv: list[str] | None = None) -> dict:
    ap = ScriptParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layouts", type=int, default=1200, help="distinct encodings (default 1200)")
    ap.add_argument("--banks", type=int, default=400, help="distinct bank-conflict cases (default 400)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--passes", type=int, default=3, help="fresh passes per side; the best is kept")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if triton_version() != TRITON_VERSION:
        sys.exit(f"triton=={TRITON_VERSION} is not installed")

    layouts = layout_corpus(args.seed, args.layouts)
    banks = bank_corpus(args.seed, args.banks)
    ours_layouts, triton_layouts = _best_of(args.passes, lambda: [_build(c) for c, _ in layouts],
                                            "time_layouts", [[g, c["shape"]] for c, g in layouts])
    ours_banks, triton_banks = _best_of(args.passes, lambda: [_count_banks(*case) for case in banks],
                                        "time_banks", [_bank_request(*case) for case in banks])
    result = {
        "layouts": {"cases": len(layouts), "linlayout_s": ours_layouts, "triton_s": triton_layouts,
                    "speedup": triton_layouts / ours_layouts},
        "banks": {"cases": len(banks), "linlayout_s": ours_banks, "triton_s": triton_banks,
                  "speedup": triton_banks / ours_banks},
    }
    if args.json:
        print(json.dumps(result))
    else:
        for name, r in result.items():
            print(f"{name:8s} {r['cases']:5d} distinct cases: linlayout {r['linlayout_s'] * 1e3:8.1f} ms "
                  f"({r['linlayout_s'] / r['cases'] * 1e6:6.1f} us/call), Triton {r['triton_s'] * 1e3:8.1f} ms "
                  f"({r['triton_s'] / r['cases'] * 1e6:6.1f} us/call): linlayout x{r['speedup']:.2f}")
    return result


if __name__ == "__main__":
    main()
