"""Random layout pairs for the hypothesis tests of the planner, the emulator and the lowering.

Layouts: a tensor of 2**n elements (dim0 x dim1); every hardware bit (register, lane, warp) maps
to a tensor vector.  Permutation-like layouts give each bit a distinct unit vector or 0
(broadcast); general ones use random invertible bit maps (XOR combinations) and random duplicate
bits.  src always covers the tensor; dst may broadcast and may have a different number of
registers.
"""

from __future__ import annotations

from hypothesis import assume, strategies as st

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
def layout_problems(draw, targets: tuple[str, ...], max_bits: int = 10, max_src_registers: int = 5):
    """(src, dst, arch): a layout pair of at most ``max_bits`` tensor bits on one of ``targets`` (the
    wave32 and NVIDIA ones with 5 lane bits), src covering the tensor with at most
    ``max_src_registers`` register bits."""
    arch = draw(st.sampled_from(targets))
    n_lane = get_target(arch).wave_size.bit_length() - 1
    n_bits = draw(st.integers(5, max_bits))
    d0 = draw(st.integers(1, n_bits - 1))
    n_warp = draw(st.integers(0, 2))
    lo = max(0, n_bits - n_lane - n_warp)
    src = random_layout(draw, n_bits, d0, draw(st.integers(lo, min(lo + 2, max_src_registers))), n_warp,
                        draw(st.booleans()), True, n_lane)
    dst = random_layout(draw, n_bits, d0, draw(st.integers(max(0, lo - 1), min(lo + 2, 5))), n_warp,
                        draw(st.booleans()), draw(st.booleans()), n_lane)
    return src, dst, arch


@st.composite
def planning_problems(draw, targets: tuple[str, ...] = TARGETS):
    """A layout pair on one of ``targets`` (``layout_problems``), with an element size, an objective,
    an LDS budget and a strategy."""
    src, dst, arch = draw(layout_problems(targets))
    return (src, dst, draw(st.sampled_from([8, 16, 32, 64])), arch,
            draw(st.sampled_from([None, "concurrent", "latency", "throughput", "instructions"])),
            draw(st.sampled_from([None, 1024, 65536])), draw(st.sampled_from(["auto", "auto", "lds", "registers"])))


@st.composite
def store_twin_problems(draw, targets: tuple[str, ...]):
    """A layout pair on one of ``targets`` whose src has a register bit holding a lane bit's or a warp
    bit's tensor vector (or their sum), plus another register bit's or not: some register then
    holds, in other lanes or warps, the elements another register holds (lds_path's store twins).
    With an element size; src covers the tensor (``layout_problems``' src with a register bit
    more, inserted among the others at a random place)."""
    src, dst, arch = draw(layout_problems(targets, 9, 4))
    bases = src.bases
    others = [b for b in bases["lane"] + bases["warp"] if any(b)]
    assume(others)  # (else every lane and warp bit is a broadcast: no store twins)
    picked = draw(st.lists(st.sampled_from(others), min_size=1, max_size=2))
    twin = [picked[0][0] ^ picked[-1][0], picked[0][1] ^ picked[-1][1]] if len(picked) == 2 else picked[0]
    if not any(twin):  # (the same vector twice)
        twin = picked[0]
    if bases["register"] and draw(st.booleans()):  # (in the register span, twin's lane/warp part is)
        reg = draw(st.sampled_from(bases["register"]))
        twin = [twin[0] ^ reg[0], twin[1] ^ reg[1]]
    regs = list(bases["register"])
    regs.insert(draw(st.integers(0, len(regs))), twin)
    src = LinearLayout(dict(bases, register=regs), src.out_dims)
    return src, dst, draw(st.sampled_from([8, 16, 32, 64])), arch
