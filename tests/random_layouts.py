"""Random layout pairs for the hypothesis tests of the planner, the emulator and the lowering.

Layouts: a tensor of 2**n elements (dim0 x dim1); every hardware bit (register, lane, warp) maps
to a tensor vector.  Permutation-like layouts give each bit a distinct unit vector or 0
(broadcast); general ones use random invertible bit maps (XOR combinations) and random duplicate
bits.  src always covers the tensor; dst may broadcast and may have a different number of
registers.
"""

from __future__ import annotations

from hypothesis import strategies as st

from linlayout import LinearLayout
from linlayout.hw.targets import get_target


def random_layout(draw, n_bits: int, d0: int, n_reg: int, n_warp: int, general: bool, surjective: bool,
                  n_lane: int = 6) -> LinearLayout:
    """A layout of ``n_reg`` register, ``n_lane`` lane and ``n_warp`` warp bits on a ``2**d0`` x
    ``2**(n_bits - d0)`` tensor (``general``: XOR mixes and duplicates; ``surjective``: it covers
    the tensor)."""
    n_hw = n_reg + n_lane + n_warp
    hw = list(range(n_hw))
    shuffled = draw(st.permutations(hw))
    carriers = sorted(shuffled[: min(n_bits, n_hw)]) if surjective else sorted(
        shuffled[: draw(st.integers(min_value=max(0, n_bits - 3), max_value=min(n_bits, n_hw)))])
    order = draw(st.permutations(list(range(n_bits))))
    cols = [0] * n_hw
    for k, b in enumerate(carriers):
        cols[b] = 1 << order[k]
    if general:  # an invertible mix of the carried vectors, and some duplicates
        for _ in range(draw(st.integers(0, 4))):
            i, j = draw(st.sampled_from(carriers)), draw(st.sampled_from(carriers))
            if i != j:
                cols[i] ^= cols[j]
        for b in hw:
            if cols[b] == 0 and draw(st.booleans()):
                cols[b] = cols[draw(st.sampled_from(carriers))] if carriers else 0
    def basis(c: int) -> list[int]:
        return [c & ((1 << d0) - 1), c >> d0]
    bases = {"register": [basis(c) for c in cols[:n_reg]], "lane": [basis(c) for c in cols[n_reg:n_reg + n_lane]],
             "warp": [basis(c) for c in cols[n_reg + n_lane:]]}
    return LinearLayout(bases, [("dim0", 1 << d0), ("dim1", 1 << (n_bits - d0))])


@st.composite
def layout_pairs(draw):
    """A layout pair on a wave64 CDNA target (6 lane bits), with an element size."""
    n_bits = draw(st.integers(6, 10))
    d0 = draw(st.integers(1, n_bits - 1))
    n_warp = draw(st.integers(0, 2))
    lo = max(0, n_bits - 6 - n_warp)
    general = draw(st.booleans())
    src = random_layout(draw, n_bits, d0, draw(st.integers(lo, min(lo + 2, 5))), n_warp, general, True)
    dst = random_layout(draw, n_bits, d0, draw(st.integers(max(0, lo - 1), min(lo + 2, 5))), n_warp,
                        draw(st.booleans()), draw(st.booleans()))
    return src, dst, draw(st.sampled_from([8, 16, 32, 64])), draw(st.sampled_from(["gfx942", "gfx950", "gfx90a"]))


TARGETS = ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1200", "gfx1250", "sm_80", "sm_90")


@st.composite
def planning_problems(draw, targets: tuple[str, ...] = TARGETS):
    """A layout pair on one of ``targets`` (the wave32 and NVIDIA ones with 5 lane bits), with an
    element size, an objective, an LDS budget and a strategy."""
    arch = draw(st.sampled_from(targets))
    n_lane = get_target(arch).wave_size.bit_length() - 1
    n_bits = draw(st.integers(5, 10))
    d0 = draw(st.integers(1, n_bits - 1))
    n_warp = draw(st.integers(0, 2))
    lo = max(0, n_bits - n_lane - n_warp)
    src = random_layout(draw, n_bits, d0, draw(st.integers(lo, min(lo + 2, 5))), n_warp, draw(st.booleans()), True,
                        n_lane)
    dst = random_layout(draw, n_bits, d0, draw(st.integers(max(0, lo - 1), min(lo + 2, 5))), n_warp,
                        draw(st.booleans()), draw(st.booleans()), n_lane)
    return (src, dst, draw(st.sampled_from([8, 16, 32, 64])), arch,
            draw(st.sampled_from([None, "concurrent", "latency", "throughput", "instructions"])),
            draw(st.sampled_from([None, 1024, 65536])), draw(st.sampled_from(["auto", "auto", "lds", "registers"])))
