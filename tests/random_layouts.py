"""Random layout pairs for the hypothesis tests of the planner, the emulator and the lowering, and
for the NVIDIA random-conversion kit (benchmarks/nvidia/random_cases.py).

Layouts: a tensor of 2**n elements (dim0 x dim1); every hardware bit (register, lane, warp) maps
to a tensor vector.  Permutation-like layouts give each bit a distinct unit vector or 0
(broadcast); general ones use random invertible bit maps (XOR combinations) and random duplicate
bits.  src always covers the tensor; dst may broadcast and may have a different number of
registers.

Every choice goes through a ``Picks`` object: ``HypothesisPicks`` (the strategies below, which
hypothesis shrinks) or ``RandomPicks`` (a seeded ``random.Random``: the same layouts drawn
reproducibly outside hypothesis).  The builders (``layout_problem``, ``planning_problem``,
``store_twin_problem``) take the picks; the strategies (``layout_problems`` ...) wrap them.
"""

from __future__ import annotations

import random
from typing import Sequence

from hypothesis import assume, strategies as st

from linlayout import LinearLayout
from linlayout.hw.targets import get_target

ELEMENT_BITS = (8, 16, 32, 64)
OBJECTIVES = (None, "concurrent", "latency", "throughput", "instructions")


class HypothesisPicks:
    """Choices drawn from hypothesis strategies (``draw`` of a ``@st.composite``)."""

    def __init__(self, draw):
        self.draw = draw

    def integer(self, low: int, high: int) -> int:
        """An integer in ``[low, high]``."""
        return self.draw(st.integers(low, high))

    def boolean(self) -> bool:
        return self.draw(st.booleans())

    def choice(self, items: Sequence):
        return self.draw(st.sampled_from(items))

    def permutation(self, items: Sequence) -> list:
        return self.draw(st.permutations(items))

    def choices(self, items: Sequence, low: int, high: int) -> list:
        """``low`` to ``high`` items, each any of ``items`` (repeats allowed)."""
        return self.draw(st.lists(st.sampled_from(items), min_size=low, max_size=high))


class RandomPicks:
    """The same choices from a ``random.Random`` (reproducible from its seed, no hypothesis)."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def boolean(self) -> bool:
        return self.rng.random() < 0.5

    def choice(self, items: Sequence):
        return self.rng.choice(list(items))

    def permutation(self, items: Sequence) -> list:
        return self.rng.sample(list(items), len(items))

    def choices(self, items: Sequence, low: int, high: int) -> list:
        return [self.rng.choice(list(items)) for _ in range(self.rng.randint(low, high))]


def random_layout(picks, n_bits: int, d0: int, n_reg: int, n_warp: int, general: bool, surjective: bool,
                  n_lane: int = 6) -> LinearLayout:
    """A layout of ``n_reg`` register, ``n_lane`` lane and ``n_warp`` warp bits on a ``2**d0`` x
    ``2**(n_bits - d0)`` tensor (``general``: XOR mixes and duplicates; ``surjective``: it covers
    the tensor)."""
    n_hw = n_reg + n_lane + n_warp
    hw = list(range(n_hw))
    shuffled = picks.permutation(hw)
    carriers = sorted(shuffled[: min(n_bits, n_hw)]) if surjective else sorted(
        shuffled[: picks.integer(max(0, n_bits - 3), min(n_bits, n_hw))])
    order = picks.permutation(list(range(n_bits)))
    cols = [0] * n_hw
    for k, b in enumerate(carriers):
        cols[b] = 1 << order[k]
    if general:  # an invertible mix of the carried vectors, and some duplicates
        for _ in range(picks.integer(0, 4)):
            i, j = picks.choice(carriers), picks.choice(carriers)
            if i != j:
                cols[i] ^= cols[j]
        for b in hw:
            if cols[b] == 0 and picks.boolean():
                cols[b] = cols[picks.choice(carriers)] if carriers else 0
    def basis(c: int) -> list[int]:
        return [c & ((1 << d0) - 1), c >> d0]
    bases = {"register": [basis(c) for c in cols[:n_reg]], "lane": [basis(c) for c in cols[n_reg:n_reg + n_lane]],
             "warp": [basis(c) for c in cols[n_reg + n_lane:]]}
    return LinearLayout(bases, [("dim0", 1 << d0), ("dim1", 1 << (n_bits - d0))])


@st.composite
def layout_pairs(draw):
    """A layout pair on a wave64 CDNA target (6 lane bits), with an element size."""
    picks = HypothesisPicks(draw)
    n_bits = picks.integer(6, 10)
    d0 = picks.integer(1, n_bits - 1)
    n_warp = picks.integer(0, 2)
    lo = max(0, n_bits - 6 - n_warp)
    general = picks.boolean()
    src = random_layout(picks, n_bits, d0, picks.integer(lo, min(lo + 2, 5)), n_warp, general, True)
    dst = random_layout(picks, n_bits, d0, picks.integer(max(0, lo - 1), min(lo + 2, 5)), n_warp,
                        picks.boolean(), picks.boolean())
    return src, dst, picks.choice(ELEMENT_BITS), picks.choice(["gfx942", "gfx950", "gfx90a"])


TARGETS = ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1200", "gfx1250", "sm_80", "sm_90")


def layout_problem(picks, targets: tuple[str, ...], max_bits: int = 10, max_src_registers: int = 5,
                   max_warp_bits: int = 2, dst_covers: bool | None = None) -> tuple:
    """(src, dst, arch): a layout pair of at most ``max_bits`` tensor bits and at most
    ``max_warp_bits`` warp bits on one of ``targets`` (the wave32 and NVIDIA ones with 5 lane
    bits), src covering the tensor with at most ``max_src_registers`` register bits; dst covers it
    too when ``dst_covers`` (with enough register bits to; None: as picked)."""
    arch = picks.choice(targets)
    n_lane = get_target(arch).wave_size.bit_length() - 1
    n_bits = picks.integer(5, max_bits)
    d0 = picks.integer(1, n_bits - 1)
    n_warp = picks.integer(0, max_warp_bits)
    lo = max(0, n_bits - n_lane - n_warp)
    src = random_layout(picks, n_bits, d0, picks.integer(lo, min(lo + 2, max_src_registers)), n_warp,
                        picks.boolean(), True, n_lane)
    dst_registers = picks.integer(lo if dst_covers else max(0, lo - 1), min(lo + 2, 5))  # (lo - 1: dst can't cover)
    dst_general, dst_surjective = picks.boolean(), picks.boolean()
    dst = random_layout(picks, n_bits, d0, dst_registers, n_warp, dst_general,
                        dst_surjective if dst_covers is None else dst_covers, n_lane)
    return src, dst, arch


def planning_problem(picks, targets: tuple[str, ...] = TARGETS) -> tuple:
    """A layout pair on one of ``targets`` (``layout_problem``), with an element size, an objective,
    an LDS budget and a strategy."""
    src, dst, arch = layout_problem(picks, targets)
    return (src, dst, picks.choice(ELEMENT_BITS), arch, picks.choice(OBJECTIVES),
            picks.choice([None, 1024, 65536]), picks.choice(["auto", "auto", "lds", "registers"]))


def store_twin_problem(picks, targets: tuple[str, ...], max_warp_bits: int = 2, dst_covers: bool | None = None):
    """A layout pair on one of ``targets`` whose src has a register bit holding a lane bit's or a warp
    bit's tensor vector (or their sum), plus another register bit's or not: some register then
    holds, in other lanes or warps, the elements another register holds (lds_path's store twins).
    With an element size; src covers the tensor (``layout_problem``'s src of at most 9 tensor bits
    and 4 register bits, with a register bit more, inserted among the others at a random place).
    None when every lane and warp bit of the drawn src is a broadcast (no store twin exists)."""
    src, dst, arch = layout_problem(picks, targets, 9, 4, max_warp_bits, dst_covers)
    bases = src.bases
    others = [b for b in bases["lane"] + bases["warp"] if any(b)]
    if not others:
        return None
    picked = picks.choices(others, 1, 2)
    twin = [picked[0][0] ^ picked[-1][0], picked[0][1] ^ picked[-1][1]] if len(picked) == 2 else picked[0]
    if not any(twin):  # (the same vector twice)
        twin = picked[0]
    if bases["register"] and picks.boolean():  # (in the register span, twin's lane/warp part is)
        reg = picks.choice(bases["register"])
        twin = [twin[0] ^ reg[0], twin[1] ^ reg[1]]
    regs = list(bases["register"])
    regs.insert(picks.integer(0, len(regs)), twin)
    src = LinearLayout(dict(bases, register=regs), src.out_dims)
    return src, dst, picks.choice(ELEMENT_BITS), arch


@st.composite
def layout_problems(draw, targets: tuple[str, ...], max_bits: int = 10, max_src_registers: int = 5):
    """``layout_problem`` as a strategy."""
    return layout_problem(HypothesisPicks(draw), targets, max_bits, max_src_registers)


@st.composite
def planning_problems(draw, targets: tuple[str, ...] = TARGETS):
    """``planning_problem`` as a strategy."""
    return planning_problem(HypothesisPicks(draw), targets)


@st.composite
def store_twin_problems(draw, targets: tuple[str, ...]):
    """``store_twin_problem`` as a strategy (a src without store twins is rejected)."""
    problem = store_twin_problem(HypothesisPicks(draw), targets)
    assume(problem is not None)
    return problem
