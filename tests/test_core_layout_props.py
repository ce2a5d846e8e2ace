"""Algebraic properties of LinearLayout on random layouts (hypothesis, up to 12 bits per dim)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import needs
from core_strategies import IN_NAMES, OUT_NAMES, dim_list, invertible_layouts, layouts, split_bits
from linlayout import LayoutError, LinearLayout, f2, least_squares

galois = needs.module("galois")
GF = galois.GF(2)
SETTINGS = settings(max_examples=40, deadline=None)


@SETTINGS
@given(st.data())
def test_product_is_associative(data):
    ins = [n for n, _ in data.draw(dim_list(IN_NAMES, max_bits=0))]
    outs = [n for n, _ in data.draw(dim_list(OUT_NAMES, max_bits=0))]

    def draw():  # same dim names in the same order, random sizes (1 included)
        return data.draw(layouts([(n, 1 << data.draw(st.integers(0, 4))) for n in ins],
                                 [(n, 1 << data.draw(st.integers(0, 4))) for n in outs]))

    a, b, c = draw(), draw(), draw()
    assert ((a * b) * c).same_order(a * (b * c))


@SETTINGS
@given(layouts(max_bits=4), layouts(max_bits=4), layouts(max_bits=4))
def test_product_is_associative_as_a_map(a, b, c):
    try:
        left, right = (a * b) * c, a * (b * c)
    except LayoutError:  # the two bracketings can need contradictory dim orders
        return
    assert left == right


@SETTINGS
@given(st.data())
def test_compose_is_associative(data):
    ins = data.draw(dim_list(["register", "lane"], max_bits=6))
    mid1 = data.draw(dim_list(["m0", "m1"], max_bits=6))
    mid2 = data.draw(dim_list(["n0", "n1", "n2"], max_bits=6))
    outs = data.draw(dim_list(OUT_NAMES, max_bits=6))
    a = data.draw(layouts(ins, mid1))
    b = data.draw(layouts(mid1, mid2))
    c = data.draw(layouts(mid2, outs))
    assert a.compose(b).compose(c) == a.compose(b.compose(c))
    # and compose is the composition of functions
    x = {n: data.draw(st.integers(0, s - 1)) for n, s in ins}
    assert a.compose(b).apply(x) == b.apply(a.apply(x))


@SETTINGS
@given(invertible_layouts())
def test_invert_then_compose_is_identity(a):
    inv = a.invert()
    assert inv.in_dims == a.out_dims and inv.out_dims == a.in_dims
    assert a.compose(inv) == LinearLayout.identity(a.in_dims)
    assert inv.compose(a) == LinearLayout.identity(a.out_dims)


@SETTINGS
@given(st.data())
def test_invert_and_compose_solves_when_image_contained(data):
    outs = data.draw(dim_list(OUT_NAMES, max_bits=5))
    a = data.draw(layouts(data.draw(dim_list(["register", "lane"], max_bits=5)), outs))
    b_ins = data.draw(dim_list(["lane", "warp", "block"], max_bits=6))
    b = data.draw(layouts(b_ins, outs))
    contained = all(b_contains(b, v) for v in a.columns())
    if not contained:
        with pytest.raises(LayoutError):
            a.invert_and_compose(b)
        return
    c = a.invert_and_compose(b)
    assert c.in_dims == a.in_dims and c.out_dims == b.in_dims
    assert c.compose(b) == a
    for n, s in a.in_dims:
        x = {n: data.draw(st.integers(0, s - 1))}
        assert b.apply(c.apply(x)) == a.apply(x)


def b_contains(b: LinearLayout, v: int) -> bool:
    return f2.in_span(b.columns(), v)


@SETTINGS
@given(st.data())
def test_divide_left_and_right_undo_the_product(data):
    ins = [n for n, _ in data.draw(dim_list(IN_NAMES, max_bits=1))]
    outs = [n for n, _ in data.draw(dim_list(OUT_NAMES, max_bits=1))]

    def sized(names, hi):
        return [(n, 1 << data.draw(st.integers(0, hi))) for n in names]

    b = data.draw(layouts(sized(ins, 4), sized(outs, 4)))
    c = data.draw(layouts(sized(ins, 4), sized(outs, 4)))
    assert (b * c).divide_left(b) == c
    assert (c * b).divide_right(b) == c


@SETTINGS
@given(layouts(), st.data())
def test_apply_is_the_galois_matrix_product(lay, data):
    flat = data.draw(st.integers(0, lay.total_in_size - 1))
    x, shift = {}, 0
    for n, s in lay.in_dims:
        x[n] = (flat >> shift) & (s - 1)
        shift += s.bit_length() - 1
    m = GF(lay.to_matrix().astype(np.int64))
    vec = GF([(flat >> j) & 1 for j in range(lay.total_in_bits)])
    y = m @ vec if lay.total_in_bits else GF(np.zeros(lay.total_out_bits, dtype=np.int64))
    out_flat = sum(int(b) << i for i, b in enumerate(y))
    got = lay.apply(x)
    expect, shift = {}, 0
    for o, s in lay.out_dims:
        expect[o] = (out_flat >> shift) & (s - 1)
        shift += s.bit_length() - 1
    assert got == expect
    assert lay.apply_flat(flat) == out_flat
    # vectorised apply agrees
    arr = lay.apply({n: np.array([v]) for n, v in x.items()})
    assert {o: int(v[0]) for o, v in arr.items()} == got


@SETTINGS
@given(layouts(), st.data())
def test_reshape_and_json_round_trips(lay, data):
    assert LinearLayout.from_json(json.loads(json.dumps(lay.to_json()))).same_order(lay)
    new_ins = split_bits(data.draw, ["a", "b", "c"][: data.draw(st.integers(1, 3))], lay.total_in_bits)
    new_outs = split_bits(data.draw, ["x", "y"][: data.draw(st.integers(1, 2))], lay.total_out_bits)
    assert lay.reshape_ins(new_ins).reshape_ins(lay.in_dims).same_order(lay)
    assert lay.reshape_outs(new_outs).reshape_outs(lay.out_dims).same_order(lay)
    assert lay.flatten_ins().flatten_outs().columns() == lay.columns()
    assert lay.transpose_outs(lay.out_dim_names[::-1]) == lay


@SETTINGS
@given(layouts())
def test_pseudo_inverse_is_a_right_inverse_on_the_image(lay):
    p = lay.pseudo_inverse() if lay.is_surjective() else None
    if p is None:
        with pytest.raises(LayoutError):
            lay.pseudo_inverse()
        return
    assert p.compose(lay) == LinearLayout.identity(lay.out_dims).transpose_outs(p.compose(lay).out_dim_names)
    masks = lay.free_variable_masks()
    for n, s in lay.in_dims:  # free variables are 0: only pivot bits are used
        for b in p.bases.values():
            for basis in b:
                assert basis[p.out_dim_names.index(n)] & masks[n] == 0


@SETTINGS
@given(st.data())
def test_least_squares_solves_a_x_equals_b(data):
    outs = data.draw(dim_list(OUT_NAMES, max_bits=4))
    a = data.draw(layouts(data.draw(dim_list(["lane", "warp"], max_bits=6)), outs))
    b = data.draw(layouts(data.draw(dim_list(["register"], max_bits=4)), outs))
    if not all(b_contains(a, v) for v in b.columns()):
        with pytest.raises(LayoutError):
            least_squares(a, b)
        return
    x = least_squares(a, b)
    assert x.compose(a) == b
