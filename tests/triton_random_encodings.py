"""Random valid Triton encodings (linlayout's ``{"encoding": E, "shape": [...], ...params}``).

Every kind that linlayout and Gluon share: blocked, slices (of every distributed
parent), AMD MFMA (versions 1-4, every tile, transposed, tilesPerWarp, 64-bit),
AMD WMMA (v1-v3, every instruction shape, transposed), NVIDIA MMA v2/v3, the dot
operands of each, swizzled shared; with and without CGA params, on shapes both
smaller and larger than the layout's tile.  About 1 in 10 WMMA operands has a kWidth
Triton refuses (both sides must refuse it).  Shapes are powers of two with at most
2**14 elements.
"""

from __future__ import annotations

import random

from linlayout.encodings.mfma import MFMA_TILE_SHAPES
from linlayout.encodings.wmma import WMMA_INSTR_SHAPES

KINDS = ("blocked", "slice", "amd_mfma", "amd_mfma_dot_operand", "amd_wmma", "amd_wmma_dot_operand",
         "nvidia_mma", "dot_operand_of_nvidia_mma", "dot_operand_of_blocked", "swizzled_shared")
MAX_ELEMENTS_LOG2 = 14


def _split(rng: random.Random, total_log2: int, rank: int) -> list[int]:
    """``rank`` powers of two whose product is ``2**total_log2``."""
    logs = [0] * rank
    for _ in range(total_log2):
        logs[rng.randrange(rank)] += 1
    return [1 << x for x in logs]


def _pow2(rng: random.Random, max_log2: int) -> int:
    return 1 << rng.randint(0, max_log2)


def _order(rng: random.Random, rank: int) -> list[int]:
    order = list(range(rank))
    rng.shuffle(order)
    return order


def _cga(rng: random.Random, rank: int) -> dict:
    """CTAsPerCGA/CTASplitNum/CTAOrder half of the time (up to 4 CTAs)."""
    if rng.random() < 0.5:
        return {}
    ctas = _split(rng, rng.randint(1, 2), rank)
    split = [_pow2(rng, c.bit_length() - 1) for c in ctas]
    return {"CTAsPerCGA": ctas, "CTASplitNum": split, "CTAOrder": _order(rng, rank)}


def _shape(rng: random.Random, rank: int) -> list[int]:
    total = rng.randint(0, MAX_ELEMENTS_LOG2)
    while True:
        shape = [_pow2(rng, 9) for _ in range(rank)]
        if sum(s.bit_length() - 1 for s in shape) <= total or total == MAX_ELEMENTS_LOG2:
            if sum(s.bit_length() - 1 for s in shape) <= MAX_ELEMENTS_LOG2:
                return shape


def blocked_params(rng: random.Random, rank: int) -> dict:
    lanes = rng.choice((32, 64))
    return {"sizePerThread": [_pow2(rng, 2) for _ in range(rank)],
            "threadsPerWarp": _split(rng, lanes.bit_length() - 1, rank),
            "warpsPerCTA": _split(rng, rng.randint(0, 3), rank), "order": _order(rng, rank), **_cga(rng, rank)}


def mfma_params(rng: random.Random, rank: int) -> dict:
    m, n = rng.choice(MFMA_TILE_SHAPES)
    k = rng.choice((4, 8, 16, 32, 64)) if m == n else 4
    return {"version": rng.randint(1, 4), "instrShape": [m, n, k], "warpsPerCTA": _split(rng, rng.randint(0, 3), rank),
            "isTransposed": True if (m, n) == (64, 4) else rng.random() < 0.5,
            "tilesPerWarp": [_pow2(rng, 1) for _ in range(rank)], "elementBitWidth": rng.choice((32, 32, 64)),
            **_cga(rng, rank)}


def wmma_params(rng: random.Random, rank: int) -> dict:
    version = rng.randint(1, 3)
    return {"version": version, "instrShape": list(rng.choice(WMMA_INSTR_SHAPES[version])),
            "warpsPerCTA": _split(rng, rng.randint(0, 3), rank), "isTransposed": rng.random() < 0.5,
            "tilesPerWarp": [_pow2(rng, 1) for _ in range(rank)], **_cga(rng, rank)}


def nvidia_mma_params(rng: random.Random, rank: int) -> dict:
    warps = _split(rng, rng.randint(0, 3), rank)
    if rank == 2 and rng.random() < 0.4:
        warps = [rng.choice((4, 8)), 1]
        return {"versionMajor": 3, "versionMinor": 0, "warpsPerCTA": warps,
                "instrShape": [16, rng.choice((8, 16, 32, 64, 128, 256)), 16], **_cga(rng, rank)}
    return {"versionMajor": 2, "versionMinor": rng.choice((0, 1)), "warpsPerCTA": warps,
            "instrShape": [1] * (rank - 2) + [16, 8], **_cga(rng, rank)}


def swizzled_params(rng: random.Random, rank: int) -> dict:
    return {"vec": _pow2(rng, 3), "perPhase": _pow2(rng, 3), "maxPhase": _pow2(rng, 4), "order": _order(rng, rank),
            **_cga(rng, rank)}


_PARENTS = {"blocked": blocked_params, "amd_mfma": mfma_params, "amd_wmma": wmma_params,
            "nvidia_mma": nvidia_mma_params}


def random_encoding(rng: random.Random, kind: str) -> dict:
    """One random encoding of ``kind`` (one of :data:`KINDS`) with a random shape."""
    if kind == "blocked":
        rank = rng.randint(1, 3)
        return {"encoding": kind, "shape": _shape(rng, rank), **blocked_params(rng, rank)}
    if kind == "swizzled_shared":
        rank = rng.randint(1, 3)
        return {"encoding": kind, "shape": _shape(rng, rank), **swizzled_params(rng, rank)}
    if kind in ("amd_mfma", "amd_wmma", "nvidia_mma"):
        rank = rng.choice((2, 2, 3))
        return {"encoding": kind, "shape": _shape(rng, rank), **_PARENTS[kind](rng, rank)}
    if kind == "slice":
        parent_kind = rng.choice(sorted(_PARENTS))
        rank = rng.randint(2, 3) if parent_kind == "blocked" else rng.choice((2, 2, 3))
        parent = {"encoding": parent_kind, **_PARENTS[parent_kind](rng, rank)}
        return {"encoding": kind, "shape": _shape(rng, rank - 1), "dim": rng.randrange(rank), "parent": parent}
    parent_kind = {"amd_mfma_dot_operand": "amd_mfma", "amd_wmma_dot_operand": "amd_wmma",
                   "dot_operand_of_nvidia_mma": "nvidia_mma", "dot_operand_of_blocked": "blocked"}[kind]
    rank = rng.choice((2, 2, 3))
    parent = _PARENTS[parent_kind](rng, rank)
    op_idx = rng.randint(0, 1)
    if parent_kind == "nvidia_mma" and parent["versionMajor"] == 3:
        op_idx = 0
    k_width = 0 if parent_kind == "blocked" else _pow2(rng, 4 if parent_kind == "amd_mfma" else 3)
    if parent_kind == "amd_wmma" and rng.random() < 0.9:  # mostly kWidths Triton accepts (v1: 8/16, v2: 4/8/16)
        k_width = rng.choice({1: (8, 16), 2: (4, 8, 16)}.get(parent["version"], (1, 2, 4, 8, 16)))
    return {"encoding": kind, "shape": _shape(rng, rank), "opIdx": op_idx, "kWidth": k_width, "parent": parent}


def random_encodings(seed: int, count: int) -> list[dict]:
    """``count`` encodings, the kinds in turn."""
    rng = random.Random(seed)
    return [random_encoding(rng, KINDS[i % len(KINDS)]) for i in range(count)]
