"""Random NVIDIA conversions for the GPU harness: ``run_plans.py build --random N --seed S``.

Pairs nobody tuned for, drawn with the generator of the hypothesis tests (``tests/random_layouts.py``)
through its seeded ``RandomPicks``, so a seed names the same cases on every machine (Python's
``random.Random``, stable across versions for ``randint``, ``choice``, ``sample`` and ``random``).

Draw ``k`` of seed ``S`` uses ``random.Random(f"{S}:{k}")`` alone, so case ``k`` does not depend on
the draws before it: every ``STORE_TWIN_EVERY``-th draw (``k % STORE_TWIN_EVERY == 0``) is a ``store_twin_problem``
(a src register holding elements that other lanes' or warps' registers hold too), the others
``layout_problem``; all for ``sm_90``, with 1, 2, 4 or 8 warps, src and dst both covering
the tensor (the round-trip kernel converts back), an element size of 8, 16, 32 or 64 bits and
one of the planner's objectives (or its default).  A draw whose layouts equal an earlier case's
(same layouts, element size, warps, target, objective), or a store-twin draw without a store twin, is
skipped; draws go on until ``count`` distinct cases are made.  A store-twin case's name ends in
``twins`` and its ``origin`` has ``"twins": true`` (short for store twins, the names of the
committed runs).

Only ``sm_90`` plans, because an sm_80 cubin does not load on the sm_90 GPU the harness runs on.
The two descriptors (``linlayout/hw/targets/nvidia.py``) differ in ``stmatrix`` (sm_90 only) and in
shared memory per block (163 KiB on sm_80, 227 KiB on sm_90; their bank phase tables are otherwise
the same, sm_80's by assumption).  A random pair's tile is at most ``2**10`` elements of at most
8 bytes, far below either budget, so the sm_80 plan of a pair differs from its sm_90 plan only where
the sm_90 plan stores with ``stmatrix``, which some do (the committed runs' reports list them).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from pair_case import PairCase

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from random_layouts import ELEMENT_BITS, OBJECTIVES, RandomPicks, layout_problem, store_twin_problem  # noqa: E402

__all__ = ["TARGETS", "STORE_TWIN_EVERY", "draw", "random_cases"]

TARGETS = ("sm_90",)
STORE_TWIN_EVERY = 4
MAX_WARP_BITS = 3  # 1 to 8 warps


def draw(seed: int, k: int) -> PairCase | None:
    """Draw ``k`` of ``seed`` (None: a store-twin draw whose src has no store twin)."""
    picks = RandomPicks(random.Random(f"{seed}:{k}"))
    twins = k % STORE_TWIN_EVERY == 0
    if twins:
        problem = store_twin_problem(picks, TARGETS, MAX_WARP_BITS, dst_covers=True)
        if problem is None:
            return None
        src, dst, element_bits, arch = problem
    else:
        src, dst, arch = layout_problem(picks, TARGETS, max_warp_bits=MAX_WARP_BITS, dst_covers=True)
        element_bits = picks.choice(ELEMENT_BITS)
    objective = picks.choice(OBJECTIVES)
    num_warps = src.in_dim_size("warp")
    name = (f"random s{seed} #{k} {arch} {element_bits}b w{num_warps} {objective or 'default'}"
            + (" twins" if twins else ""))
    origin = {"source": "random", "seed": seed, "draw": k, "twins": twins, "src": src.to_json(), "dst": dst.to_json()}
    return PairCase(name, src, dst, element_bits, num_warps, origin, arch, objective)


def random_cases(count: int, seed: int) -> list[PairCase]:
    """``count`` distinct random cases of ``seed`` (the module docstring), in draw order."""
    seen, out = set(), []
    k = 0
    while len(out) < count:
        case = draw(seed, k)
        k += 1
        if case is None or case.key() in seen:
            continue
        seen.add(case.key())
        out.append(case)
    return out
