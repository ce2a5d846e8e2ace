"""Hypothesis strategies for random linear layouts (used by the tests/test_core_* files)."""

from __future__ import annotations

from hypothesis import strategies as st

from linlayout import LinearLayout
from linlayout import f2

IN_NAMES = ["register", "lane", "warp", "block"]
OUT_NAMES = ["dim0", "dim1", "dim2"]
MAX_BITS = 12  # bits per dim


@st.composite
def dim_list(draw, pool=IN_NAMES, min_dims=1, max_dims=3, max_bits=MAX_BITS, min_bits=0):
    """``[(name, size)]``: names from ``pool`` in pool order, sizes ``2**0 .. 2**max_bits``."""
    n = draw(st.integers(min_dims, min(max_dims, len(pool))))
    names = sorted(draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n, unique=True)), key=pool.index)
    return [(name, 1 << draw(st.integers(min_bits, max_bits))) for name in names]


@st.composite
def layouts(draw, ins=None, outs=None, max_bits=MAX_BITS):
    """A random layout; ``ins``/``outs`` fix the dims (else drawn)."""
    if ins is None:
        ins = draw(dim_list(IN_NAMES, max_bits=max_bits))
    if outs is None:
        outs = draw(dim_list(OUT_NAMES, max_bits=max_bits))
    bases = {
        n: [[draw(st.integers(0, s - 1)) for _, s in outs] for _ in range(size.bit_length() - 1)] for n, size in ins
    }
    return LinearLayout(bases, outs)


def split_bits(draw, names, n_bits):
    """Split ``n_bits`` over ``names`` (in order) as ``[(name, size)]``."""
    cuts = sorted(draw(st.lists(st.integers(0, n_bits), min_size=len(names) - 1, max_size=len(names) - 1)))
    edges = [0] + cuts + [n_bits]
    return [(n, 1 << (edges[k + 1] - edges[k])) for k, n in enumerate(names)]


@st.composite
def invertible_columns(draw, n_bits):
    """Columns of a random invertible n x n matrix: P (L U) with unit triangular L, U."""
    upper = [(1 << j) | draw(st.integers(0, (1 << j) - 1)) for j in range(n_bits)]
    lower = [(1 << j) | (draw(st.integers(0, (1 << n_bits) - 1)) >> (j + 1) << (j + 1)) for j in range(n_bits)]
    prod = [f2.apply_columns(lower, c) for c in upper]
    return draw(st.permutations(prod))


@st.composite
def invertible_layouts(draw, max_bits=10):
    n = draw(st.integers(0, max_bits))
    cols = draw(invertible_columns(n))
    ins = split_bits(draw, draw(st.sampled_from([["register"], ["register", "lane"], ["lane", "warp", "block"]])), n)
    outs = split_bits(draw, draw(st.sampled_from([["dim0"], ["dim0", "dim1"]])), n)
    return LinearLayout._from_columns(ins, outs, cols)
