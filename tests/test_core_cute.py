"""CuTe layouts: parsing against CuTe's integer formula, swizzles, printing, and the errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linlayout import LayoutError, LinearLayout
from linlayout.cute import Swizzle, from_cute, to_cute

SETTINGS = settings(max_examples=60, deadline=None)


# ---------------------------------------------------------- reference model
def flat_leaves(shape, stride):
    if isinstance(shape, int):
        return [(shape, stride)]
    return [leaf for s, d in zip(shape, stride) for leaf in flat_leaves(s, d)]


def cute_offset(shape, stride, x: int) -> int:
    """CuTe's definition: colexicographic coordinate of x, dotted with the strides (integers)."""
    off = 0
    for extent, d in flat_leaves(shape, stride):
        off += (x % extent) * d
        x //= extent
    return off


def swizzle_ref(b: int, m: int, s: int, x: int) -> int:
    ymask = ((1 << b) - 1) << (m + max(s, 0))
    y = x & ymask
    return x ^ (y >> s if s >= 0 else y << -s)


def fmt(x) -> str:
    return str(x) if isinstance(x, int) else "(" + ",".join(fmt(y) for y in x) + ")"


@st.composite
def linear_cute(draw):
    """A random GF(2)-linear CuTe layout: (shape, stride) with power-of-two extents and
    strides whose images occupy disjoint offset bits (some strides 0)."""
    exps = draw(st.lists(st.integers(0, 3), min_size=1, max_size=6))
    order = draw(st.permutations(range(len(exps))))
    gaps = draw(st.lists(st.integers(0, 2), min_size=len(exps), max_size=len(exps)))
    zero = draw(st.lists(st.booleans(), min_size=len(exps), max_size=len(exps)))
    strides = [0] * len(exps)
    pos = 0
    for k in order:
        pos += gaps[k]
        strides[k] = 0 if zero[k] and exps[k] else 1 << pos
        if not (zero[k] and exps[k]):
            pos += exps[k]
    leaves = [(1 << e, d) for e, d in zip(exps, strides)]
    # group consecutive leaves into top-level modes (nested tuples)
    sizes = []
    rest = len(leaves)
    while rest:
        k = draw(st.integers(1, rest))
        sizes.append(k)
        rest -= k
    shape, stride, i = [], [], 0
    for k in sizes:
        grp = leaves[i : i + k]
        i += k
        if k == 1:
            shape.append(grp[0][0])
            stride.append(grp[0][1])
        else:
            shape.append(tuple(e for e, _ in grp))
            stride.append(tuple(d for _, d in grp))
    return tuple(shape), tuple(stride)


# --------------------------------------------------------------- properties
@SETTINGS
@given(linear_cute())
def test_parsed_layout_matches_cute_integer_formula(ss):
    shape, stride = ss
    lay = from_cute(f"{fmt(shape)}:{fmt(stride)}")
    size = 1
    for e, _ in flat_leaves(shape, stride):
        size *= e
    assert lay.in_dims == [("coord", size)]
    for x in range(size):
        assert lay.apply({"coord": x}) == {"offset": cute_offset(shape, stride, x)}


@SETTINGS
@given(linear_cute(), st.integers(1, 3), st.integers(0, 3), st.integers(-6, 6), st.booleans())
def test_swizzle_composition_applies_swizzle_to_the_offset(ss, b, m, s, cute_print):
    if abs(s) < b:
        s = b if s >= 0 else -b
    shape, stride = ss
    mid = " o _0 o " if cute_print else " o "
    lay = from_cute(f"Swizzle<{b},{m},{s}>{mid}{fmt(shape)}:{fmt(stride)}")
    for x in range(lay.in_dim_size("coord")):
        assert lay.apply({"coord": x})["offset"] == swizzle_ref(b, m, s, cute_offset(shape, stride, x))


@SETTINGS
@given(linear_cute(), st.booleans())
def test_to_cute_round_trips(ss, per_mode):
    shape, stride = ss
    text = f"{fmt(shape)}:{fmt(stride)}"
    names = [f"m{k}" for k in range(len(shape))]
    lay = from_cute(text, in_dim=names if per_mode else "coord")
    back = to_cute(lay)
    assert from_cute(back, in_dim=names if per_mode else "coord", out_size=lay.out_dim_size("offset")) == lay


@SETTINGS
@given(linear_cute(), st.integers(1, 3), st.integers(0, 3), st.integers(1, 4))
def test_to_cute_finds_swizzles(ss, b, m, s):
    shape, stride = ss
    s = max(s, b)
    lay = from_cute(f"Sw<{b},{m},{s}> o {fmt(shape)}:{fmt(stride)}")
    text = to_cute(lay)
    assert from_cute(text, out_size=lay.out_dim_size("offset")) == lay


# ------------------------------------------------------------------ examples
def test_nested_layout_bases():
    lay = from_cute("(8,(4,8)):(4,(1,32))")
    assert lay.bases == {"coord": [[4], [8], [16], [1], [2], [32], [64], [128]]}
    assert lay.out_dims == [("offset", 256)]
    per_mode = from_cute("(8,(4,8)):(4,(1,32))", in_dim=["row", "col"], out_dim="addr")
    assert per_mode.in_dims == [("row", 8), ("col", 32)] and per_mode.out_dim_names == ["addr"]
    assert to_cute(per_mode) == "(8,(4,8)):(4,(1,32))"


def test_static_integers_broadcast_and_default_strides():
    assert from_cute("(_8,_64):(_64,_1)") == from_cute("(8,64):(64,1)")
    b = from_cute("(4,2):(0,1)")
    assert b.bases == {"coord": [[0], [0], [1]]} and b.out_dims == [("offset", 2)]
    assert from_cute("(8,4)") == from_cute("(8,4):(1,8)") == LinearLayout.identity_1d(32, "coord", "offset")
    assert from_cute("(1,8):(3,1)").bases == {"coord": [[1], [2], [4]]}  # extent 1: stride unused
    assert from_cute("8:2", out_size=64).out_dims == [("offset", 64)]


def test_swizzled_smem_layout():
    lay = from_cute("Sw<3,3,3> o (8,64):(64,1)")
    # row r (coord bits 0-2 -> offset bits 6-8) XORs its 3 bits into offset bits 3-5
    assert lay.bases["coord"][:3] == [[64 | 8], [128 | 16], [256 | 32]]
    assert to_cute(lay) == "Sw<3,3,3> o (8,64):(64,1)"
    assert from_cute("Sw<3,3,3>").in_dims == [("coord", 512)]
    assert str(Swizzle(3, 3, 3)) == "Sw<3,3,3>"


def test_chains_compose_right_to_left():
    lay = from_cute("(8,8):(8,1) o (64):(1)")
    assert lay == from_cute("(8,8):(8,1)")


@pytest.mark.parametrize(
    "text,msg",
    [
        ("(8,4):(4,3)", "stride 3 of mode 1 is not a power of two: the map is not linear over GF(2)"),
        ("(6,4):(1,8)", "extent 6 of mode 0 is not a power of two"),
        ("(2,(4,6)):(1,(2,8))", "extent 6 of mode 1.1"),
        ("(4,4):(1,2)", "integer addition carries"),
        ("Sw<3,3,2> o 8:1", "|S|=2 is smaller than B=3"),
        ("(8,8):(1,-8)", "negative"),
        ("4 o 8:1", "affine"),
        ("(8,8):(1,8,2)", "not congruent"),
        ("8:1 o 16:1", "outside the domain"),
        ("", "empty"),
        ("(8,4):(4,1) extra", "unexpected"),
        ("99999999999999999999999:1", "too large"),
        ("(" * 40 + "2" + ")" * 40, "nested deeper"),
    ],
)
def test_errors_say_why(text, msg):
    with pytest.raises(LayoutError) as e:
        from_cute(text)
    assert msg in str(e.value)


def test_to_cute_rejects_what_cute_cannot_express():
    with pytest.raises(LayoutError, match="not a CuTe layout"):
        to_cute(LinearLayout({"x": [[3], [1], [2]]}, [("offset", 4)]))  # 3 = 1 ^ 2: no swizzle separates them
    assert to_cute(LinearLayout({"x": [[3], [1]]}, [("offset", 4)])) == "Sw<1,0,1> o (2,2):(2,1)"
    with pytest.raises(LayoutError, match="exactly one out dim"):
        to_cute(LinearLayout.identity_1d(4, "x", "a") * LinearLayout.identity_1d(4, "y", "b"))
    with pytest.raises(LayoutError, match="not a CuTe layout"):
        to_cute(LinearLayout({"x": [[2], [2]]}, [("offset", 4)]))  # two bits reach offset bit 1
