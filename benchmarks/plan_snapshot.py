"""Plan certificates of a fixed corpus, hashed: the guard for refactors that must not change plans.

Usage: python benchmarks/plan_snapshot.py --write FILE [--corpora]   (record)
       python benchmarks/plan_snapshot.py --check FILE [--corpora]   (exit 1 on any differing certificate)

The corpus is the 48 cases of ``benchmarks/data/triton_amd_baseline.json`` and ``--random N``
(default 300) seeded random layout pairs (a tensor of 2**6..2**9 elements; each hardware bit maps to
a distinct unit vector or 0), for gfx90a, gfx942 and gfx950 and element sizes 8..64 bits.  Each row
is ``name: sha256 of the certificate JSON`` (with the plan's strategy and cost), or ``name: error:
<message>`` where planning is refused.  ``--corpora`` adds every case of the repository's corpora
(benchmarks/data/triton_{amd,nvidia,wave32}_corpus.json, ``linlayout bench conversions --corpus``),
planned as the bench plans it (``linlayout.cli.bench.kernel_plan``: the free packing on AMD targets),
named ``FAMILY#INDEX/name/arch/dtype`` (about 1,700 more rows, half a minute).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: benchmarks.script_args

from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout import LayoutError, LinearLayout  # noqa: E402
from linlayout.cli.bench import CORPORA, kernel_plan  # noqa: E402
from linlayout.dtypes import dtype_bits  # noqa: E402
from linlayout.synth.convert import plan_conversion  # noqa: E402

BASELINE = Path(__file__).resolve().parent / "data" / "triton_amd_baseline.json"
BITS = {"fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8}


def _random_layout(rng: np.random.Generator, n_bits: int, dim0_bits: int, register_bits: int,
                   warp_bits: int, cover: bool) -> LinearLayout:
    hw_bits = register_bits + 6 + warp_bits
    count = n_bits if cover else int(rng.integers(n_bits - 2, min(n_bits, hw_bits) + 1))
    columns = [0] * hw_bits
    for hw_bit, tensor_bit in zip(rng.permutation(hw_bits)[:count], rng.permutation(n_bits)[:count]):
        columns[int(hw_bit)] = 1 << int(tensor_bit)

    def basis(c: int) -> list[int]:
        return [c & ((1 << dim0_bits) - 1), c >> dim0_bits]

    bases = {"register": [basis(c) for c in columns[:register_bits]],
             "lane": [basis(c) for c in columns[register_bits:register_bits + 6]],
             "warp": [basis(c) for c in columns[register_bits + 6:]]}
    return LinearLayout(bases, [("dim0", 1 << dim0_bits), ("dim1", 1 << (n_bits - dim0_bits))])


def corpus(random_pairs: int):
    """(name, src, dst, arch, element_bits) of every case."""
    for c in json.loads(BASELINE.read_text())["cases"]:
        yield (f"{c['name']}/{c['arch']}/{c['dtype']}", LinearLayout.from_json(c["src"]),
               LinearLayout.from_json(c["dst"]), c["arch"], BITS[c["dtype"]])
    rng = np.random.default_rng(20261127)
    for i in range(random_pairs):
        n_bits = int(rng.integers(6, 10))
        warp_bits = int(rng.integers(0, 3))
        register_bits = max(0, n_bits - 6 - warp_bits)
        dim0_bits = int(rng.integers(1, n_bits))
        src = _random_layout(rng, n_bits, dim0_bits, register_bits, warp_bits, True)
        dst = _random_layout(rng, n_bits, dim0_bits, register_bits + int(rng.integers(0, 2)), warp_bits,
                             bool(rng.integers(0, 2)))
        arch = ("gfx90a", "gfx942", "gfx950")[int(rng.integers(0, 3))]
        yield f"random{i}/{arch}", src, dst, arch, (8, 16, 32, 64)[int(rng.integers(0, 4))]


def corpora_cases():
    """(name, src, dst, arch, element_bits) of every case of the repository's corpora."""
    for family, path in sorted(CORPORA.items()):
        for i, c in enumerate(json.loads(path.read_text())["cases"]):
            yield (f"{family}#{i}/{c['name']}/{c['arch']}/{c['dtype']}", LinearLayout.from_json(c["src"]),
                   LinearLayout.from_json(c["dst"]), c["arch"], dtype_bits(c["dtype"]))


def _row(plan_case, src, dst, arch: str, element_bits: int) -> str:
    """The row of one case: the hash of ``plan_case(src, dst, arch, element_bits)``'s certificate with
    its strategy and cost, or its refusal."""
    try:
        plan = plan_case(src, dst, arch, element_bits)
    except LayoutError as e:
        return f"error: {e}"
    text = plan.dumps() + f"\n{plan.strategy} {plan.cost}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def snapshot(random_pairs: int, corpora: bool = False) -> dict[str, str]:
    rows = {name: _row(plan_conversion, *case) for name, *case in corpus(random_pairs)}
    if corpora:
        rows.update((name, _row(kernel_plan, *case)) for name, *case in corpora_cases())
    return rows


def main() -> int:
    ap = ScriptParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", type=Path)
    mode.add_argument("--check", type=Path)
    ap.add_argument("--random", type=int, default=300)
    ap.add_argument("--corpora", action="store_true", help="also every case of the corpora, as the bench plans it")
    args = ap.parse_args()
    if args.check:
        try:
            want = dict(line.split(": ", 1) for line in args.check.read_text().splitlines())
        except (OSError, ValueError) as e:  # missing, unreadable, or not "name: hash" lines
            ap.error(f"--check {args.check}: not a snapshot this script wrote ({type(e).__name__}: {e})")
    rows = snapshot(args.random, args.corpora)
    if args.write:
        args.write.write_text("".join(f"{k}: {v}\n" for k, v in rows.items()))
        print(f"wrote {len(rows)} rows to {args.write}")
        return 0
    missing, extra = sorted(want.keys() - rows.keys()), sorted(rows.keys() - want.keys())
    if missing or extra:  # another --random or --corpora than the snapshot's
        print(f"the snapshot has {len(missing)} rows this run does not make and lacks {len(extra)} it makes "
              f"(first: {(missing + extra)[0]}): check with the options it was written with")
        return 1
    differ = [k for k in want if rows[k] != want[k]]
    for k in differ[:20]:
        print(f"differs: {k}: {want[k]} -> {rows[k]}")
    print(f"{len(rows) - len(differ)} of {len(rows)} certificates unchanged")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
