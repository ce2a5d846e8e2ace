"""Fuzz the parsers and constructors with junk: only LayoutError may escape."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linlayout import LayoutError, LinearLayout
from linlayout.cute import from_cute
from linlayout.spec import parse_layout

SETTINGS = settings(max_examples=300, deadline=None)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=True) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=6), inner, max_size=5),
    max_leaves=25,
)

names = st.sampled_from(["in", "out", "lane", "", "dim0", "register"]) | st.text(max_size=3)
ints = st.integers(-3, 70) | st.sampled_from([0, 1, 2, 3, 4, 6, 8, 16, 2**40, 2**80])


@st.composite
def near_layout_json(draw):
    """Layout JSON with random defects in sizes, bases, names and shapes."""
    n_out = draw(st.integers(0, 3))
    outs = [[draw(names), draw(ints)] for _ in range(n_out)]
    ins = [[draw(names), draw(ints)] for _ in range(draw(st.integers(0, 3)))]
    bases = {
        draw(names): draw(st.lists(st.lists(ints | json_values, max_size=4), max_size=5))
        for _ in range(draw(st.integers(0, 3)))
    }
    obj = {"in_dims": ins, "out_dims": outs, "bases": bases}
    if draw(st.booleans()):
        obj[draw(st.sampled_from(["in_dims", "out_dims", "bases"]))] = draw(json_values)
    return obj


cute_tokens = st.sampled_from(
    ["(", ")", ",", ":", "o", " o ", "∘", "Sw<", "Swizzle<", ">", "_", "-", "0", "1", "2", "3", "4", "6", "8",
     "16", "64", "3,3,3>", "_8", "x", " ", "@", "{", "}", "cute:", "mfma:"]
)
cute_junk = st.lists(cute_tokens, max_size=16).map("".join)


def only_layout_error(fn, *args, **kwargs):
    try:
        out = fn(*args, **kwargs)
    except LayoutError:
        return None
    assert isinstance(out, LinearLayout)
    return out


@SETTINGS
@given(json_values | near_layout_json())
def test_from_json_junk(obj):
    lay = only_layout_error(LinearLayout.from_json, obj)
    if lay is not None:  # anything accepted round-trips
        assert LinearLayout.from_json(lay.to_json()).same_order(lay)


@SETTINGS
@given(st.text(max_size=40) | cute_junk | near_layout_json().map(json.dumps))
def test_parse_layout_junk(text):
    only_layout_error(parse_layout, text)


@SETTINGS
@given(cute_junk | st.text(max_size=30))
def test_from_cute_junk(text):
    only_layout_error(from_cute, text)


@SETTINGS
@given(json_values, json_values)
def test_constructor_junk(bases, outs):
    only_layout_error(LinearLayout, bases, outs)


@SETTINGS
@given(st.dictionaries(names, st.lists(st.lists(ints, max_size=3), max_size=4), max_size=3),
       st.lists(names | st.tuples(names, ints), max_size=3))
def test_constructor_near_valid(bases, outs):
    only_layout_error(LinearLayout, bases, outs)


def test_constructor_refuses_out_dims_given_as_one_string():
    """``out_dims="dim0"`` was read as the four one-letter dims d, i, m, 0."""
    with pytest.raises(LayoutError, match="^out_dims must be a list, got the string 'dim0'$"):
        LinearLayout({"lane": [[1]]}, "dim0")


LAY = LinearLayout({"register": [[1, 0], [0, 1]], "lane": [[2, 0]]}, ["dim0", "dim1"])
METHODS = {  # method -> number of positional arguments
    "basis": 3, "in_dim_size": 1, "out_dim_size": 1, "reshape_ins": 1, "reshape_outs": 1, "transpose_ins": 1,
    "transpose_outs": 1, "squeeze_ins": 1, "squeeze_outs": 1, "resize_in_dim": 2, "resize_out_dim": 2,
    "rename_in_dim": 2, "rename_out_dim": 2, "sublayout": 2, "remove_zero_bases_along_dim": 1, "quotient": 1,
    "sublayout_is_zero": 2, "is_identity_on_out_dim": 1, "is_trivial_over": 1, "factor_maximal_identity_prefix": 3,
    "contiguous_elems_along_out_dim": 1, "apply": 1, "apply_flat": 1, "compose": 1, "invert_and_compose": 1,
    "divide_left": 1, "divide_right": 1, "concat_ins": 1, "concat_outs": 1, "same_order": 1,
}
junk_args = st.one_of(
    json_values,
    st.sampled_from([LAY, "register", "lane", "dim0", ["register"], ["dim0", "dim1"], [("x", 8)], [("x", 3)],
                     [("dim0", 4), ("dim1", 2)], {"register": 3}, {"register": 9}, object(), b"x", 2**70]),
)


@SETTINGS
@given(st.sampled_from(sorted(METHODS)), st.data())
def test_methods_with_junk_arguments(name, data):
    args = [data.draw(junk_args) for _ in range(METHODS[name])]
    try:
        getattr(LAY, name)(*args)
    except LayoutError:
        pass
