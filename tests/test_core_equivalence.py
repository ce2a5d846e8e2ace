"""equivalent(): verdicts, and every counterexample really separates the layouts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core_strategies import OUT_NAMES, dim_list, layouts, split_bits
from linlayout import LayoutError, LinearLayout
from linlayout.equivalence import Equivalence, equivalent

SETTINGS = settings(max_examples=60, deadline=None)


def check_counterexample(a: LinearLayout, b: LinearLayout, v: Equivalence) -> None:
    assert not v.equal and v.input is not None
    assert a.apply(v.input) == v.output_a
    assert b.apply(v.input_b) == v.output_b
    assert v.output_a != v.output_b or list(a.out_dims) != list(b.out_dims)


def flat(lay: LinearLayout, x: int) -> dict:
    out, shift = {}, 0
    for n, s in lay.in_dims:
        out[n] = (x >> shift) & (s - 1)
        shift += s.bit_length() - 1
    return out


@SETTINGS
@given(st.data())
def test_verdict_matches_equality_and_counterexample_is_smallest(data):
    ins = data.draw(dim_list(["register", "lane"], max_bits=4))
    outs = data.draw(dim_list(OUT_NAMES, max_bits=3))
    a = data.draw(layouts(ins, outs))
    # b: a copy of a with some bases redrawn (often equal)
    bases = a.bases
    for n, s in ins:
        for i in range(s.bit_length() - 1):
            if data.draw(st.integers(0, 4)) == 0:
                bases[n][i] = [data.draw(st.integers(0, size - 1)) for _, size in outs]
    b = LinearLayout(bases, outs)
    b = b.transpose_ins(b.in_dim_names[::-1]).transpose_outs(b.out_dim_names[::-1])
    v = equivalent(a, b)
    assert v.equal == (a == b) == bool(v)
    if v.equal:
        assert v.input is None
        return
    check_counterexample(a, b, v)
    assert v.output_a != v.output_b
    for x in range(v.flat_input):  # nothing smaller differs
        assert a.apply(flat(a, x)) == b.apply(flat(a, x))


@SETTINGS
@given(layouts(max_bits=5), st.data())
def test_flatten_compares_reshaped_layouts(a, data):
    new_ins = split_bits(data.draw, ["p", "q"], a.total_in_bits)
    new_outs = split_bits(data.draw, ["x", "y", "z"], a.total_out_bits)
    b = a.reshape_ins(new_ins).reshape_outs(new_outs)
    assert equivalent(a, b, flatten=True).equal
    assert "in dims differ" in equivalent(a, b).reason
    if a.total_in_bits:
        c = b.reshape_ins([("p", b.total_in_size)])
        cols = c.columns()
        cols[-1] ^= 1 if c.total_out_bits else 0
        c = LinearLayout._from_columns(c.in_dims, c.out_dims, cols)
        v = equivalent(a, c, flatten=True)
        assert v.equal == (c.total_out_bits == 0)
        if not v.equal:
            check_counterexample(a, c, v)
            assert v.flat_input == 1 << (a.total_in_bits - 1)


def test_reasons_for_mismatched_dims():
    a = LinearLayout.identity_1d(8, "lane", "dim0")
    assert "in dims differ" in equivalent(a, LinearLayout.identity_1d(8, "register", "dim0")).reason
    assert "size 8 in A and 4 in B" in equivalent(a, LinearLayout.identity_1d(4, "lane", "dim0")).reason
    assert "out dims differ" in equivalent(a, LinearLayout.identity_1d(8, "lane", "dim1")).reason
    wide = LinearLayout({"lane": [[1], [2], [4]]}, [("dim0", 16)])
    v = equivalent(a, wide)
    assert not v.equal and v.input is None and "size 8 in A and 16 in B" in v.reason
    assert "flat inputs" in equivalent(a, LinearLayout.identity_1d(4, "x", "y"), flatten=True).reason


def test_rename_and_bad_arguments():
    a = LinearLayout.identity_1d(8, "lane", "dim0")
    b = LinearLayout.identity_1d(8, "thread", "row")
    assert equivalent(a, b, rename={"thread": "lane", "row": "dim0"}).equal
    with pytest.raises(LayoutError, match="not a dim of B"):
        equivalent(a, b, rename={"nope": "lane"})
    with pytest.raises(LayoutError):
        equivalent(a, "not a layout")  # type: ignore[arg-type]


def test_counterexample_names_the_bit():
    a = LinearLayout({"register": [[1], [2]], "lane": [[4]]}, ["dim0"])
    b = LinearLayout({"register": [[1], [2]], "lane": [[0]]}, [("dim0", 8)])
    v = equivalent(a, b)
    assert v.input == {"register": 0, "lane": 1} and v.output_a == {"dim0": 4} and v.output_b == {"dim0": 0}
    assert v.flat_input == 4 and "lane" in v.reason
    assert v.to_json()["input"] == {"register": 0, "lane": 1}
