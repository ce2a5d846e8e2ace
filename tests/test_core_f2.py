"""linlayout.f2 against galois (GF(2) reference) on random matrices."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import needs
from core_strategies import invertible_columns
from linlayout import f2

galois = needs.module("galois")
GF = galois.GF(2)
SETTINGS = settings(max_examples=60, deadline=None)


def to_gf(cols, n_rows):
    m = np.zeros((n_rows, len(cols)), dtype=np.int64)
    for j, c in enumerate(cols):
        for r in range(n_rows):
            m[r, j] = (c >> r) & 1
    return GF(m)


def from_vec(v) -> int:
    return sum(int(b) << i for i, b in enumerate(v))


@st.composite
def matrices(draw, max_rows=16, max_cols=16):
    n = draw(st.integers(1, max_rows))
    m = draw(st.integers(1, max_cols))
    # sparse-ish columns and repeats make dependent columns common
    pool = draw(st.lists(st.integers(0, (1 << n) - 1), min_size=1, max_size=4))
    cols = draw(st.lists(st.one_of(st.integers(0, (1 << n) - 1), st.sampled_from(pool)), min_size=m, max_size=m))
    return n, cols


@SETTINGS
@given(matrices())
def test_rank_matches_galois(nm):
    n, cols = nm
    assert f2.rank(cols) == np.linalg.matrix_rank(to_gf(cols, n))
    assert len(f2.pivot_columns(cols)) == f2.rank(cols)
    assert f2.rank(f2.image_basis(cols)) == f2.rank(cols)


@SETTINGS
@given(st.integers(1, 16).flatmap(lambda n: st.tuples(st.just(n), invertible_columns(n))))
def test_inverse_matches_galois(ncols):
    n, cols = ncols
    inv = f2.inverse(cols)
    assert to_gf(inv, n).tolist() == np.linalg.inv(to_gf(cols, n)).tolist()
    assert [f2.apply_columns(cols, c) for c in inv] == [1 << i for i in range(n)]


@SETTINGS
@given(matrices(), st.data())
def test_solve_matches_galois(nm, data):
    n, cols = nm
    b = data.draw(st.integers(0, (1 << n) - 1))
    x = f2.solve(cols, b)
    g = to_gf(cols, n)
    aug = np.linalg.matrix_rank(np.hstack([g, GF([[(b >> r) & 1] for r in range(n)])]))
    if x is None:
        assert aug > np.linalg.matrix_rank(g)  # b outside the column space
        return
    assert from_vec(g @ GF([(x >> j) & 1 for j in range(len(cols))])) == b
    pivots = set(f2.pivot_columns(cols))
    assert all(j in pivots for j in range(len(cols)) if (x >> j) & 1)  # free variables are 0
    # the pivot columns are independent, so the solution supported on them is unique
    assert f2.rank([cols[j] for j in pivots]) == len(pivots)
    assert f2.solve_many(cols, [b, b]) == [x, x]


@SETTINGS
@given(matrices())
def test_kernel_matches_galois(nm):
    n, cols = nm
    ker = f2.kernel_basis(cols)
    g = to_gf(cols, n)
    assert len(ker) == g.null_space().shape[0]
    assert f2.rank(ker) == len(ker)
    for k in ker:
        assert from_vec(g @ GF([(k >> j) & 1 for j in range(len(cols))])) == 0


@SETTINGS
@given(matrices(max_cols=8), matrices(max_cols=8))
def test_intersection_dimension_and_membership(a, b):
    n = max(a[0], b[0])
    u, v = a[1], b[1]
    inter = f2.intersection(u, v)
    assert len(inter) == f2.rank(u) + f2.rank(v) - f2.rank(u + v)
    assert len(inter) == f2.rank(inter)
    for w in inter:
        assert f2.in_span(u, w) and f2.in_span(v, w)
    assert f2.rank(f2.span_sum(u, v)) == np.linalg.matrix_rank(to_gf(u + v, n))


@SETTINGS
@given(matrices(), st.integers(0, 2**16 - 1))
def test_echelon_reduce_records_the_combination(nm, v):
    n, cols = nm
    v &= (1 << n) - 1
    ech = f2.Echelon()
    flags = [ech.insert(c) for c in cols]
    assert [j for j, f in enumerate(flags) if f] == f2.pivot_columns(cols)
    r, combo = ech.reduce(v)
    assert r ^ f2.apply_columns(cols, combo) == v
    assert (r == 0) == f2.in_span(cols, v) == ech.contains(v)
    assert ech.rank == f2.rank(cols) == len(ech.basis())


@SETTINGS
@given(matrices(), st.integers(0, 2**16 - 1), st.integers(0, 2**16 - 1))
def test_span_membership_rank_and_residue(nm, v, w):
    n, cols = nm
    v, w = v & ((1 << n) - 1), w & ((1 << n) - 1)
    span = f2.Span()
    flags = [span.insert(c) for c in cols]
    assert [j for j, f in enumerate(flags) if f] == f2.pivot_columns(cols)
    assert span.rank == f2.rank(cols) == f2.Span(cols).rank
    assert span.contains(v) == f2.in_span(cols, v) == (span.reduce(v) == 0)
    ech = f2.Echelon()
    for c in cols:
        ech.insert(c)
    assert span.reduce(v) == ech.reduce(v)[0]
    # the residue is a function of the coset: v and v + (a span vector) reduce alike
    assert span.reduce(v) == span.reduce(v ^ f2.apply_columns(cols, w & ((1 << len(cols)) - 1)))


@SETTINGS
@given(matrices(), st.lists(st.integers(0, 2**16 - 1), max_size=6))
def test_span_copy_is_independent(nm, more):
    n, cols = nm
    more = [v & ((1 << n) - 1) for v in more]
    span = f2.Span(cols)
    copy = span.copy()
    flags = [copy.insert(v) for v in more]
    assert span.rank == f2.rank(cols)  # the original is untouched
    assert copy.rank == f2.rank(cols + more)
    assert [j for j, f in enumerate(flags) if f] == [j - len(cols) for j in f2.pivot_columns(cols + more) if j >= len(cols)]


@SETTINGS
@given(matrices())
def test_rref_and_transpose(nm):
    n, cols = nm
    rows = f2.transpose(cols, n)  # rows of A as ints over columns
    assert f2.transpose(rows, len(cols)) == cols
    red, pivots = f2.rref_rows(rows, len(cols))
    assert len(red) == f2.rank(cols)
    assert pivots == f2.pivot_columns(cols)
    for r, c in zip(red, pivots):
        assert (r & -r) == 1 << c  # pivot is the lowest set bit
        assert sum((q >> c) & 1 for q in red) == 1  # reduced: no other row has it


def test_complement_completes_the_space():
    u = [0b0011, 0b0110]
    comp = f2.complement(u, 4)
    assert f2.rank(u + comp) == 4 and len(comp) == 2
    assert comp == [0b0001, 0b1000]


def test_inverse_rejects_singular_and_non_square():
    for bad in ([1, 1], [1, 4]):
        try:
            f2.inverse(bad)
        except ValueError:
            continue
        raise AssertionError(f"inverse accepted {bad}")
