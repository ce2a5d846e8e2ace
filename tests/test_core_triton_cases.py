"""Expected results of Triton's LinearLayoutTest.cpp / LayoutUtilsTest.cpp cases (the kinds
the public vector file lacks: compose, reshape, flatten, sublayout, quotient, divide,
invert_and_compose variants, factor_maximal_identity_prefix and the LayoutUtils helpers)."""

from __future__ import annotations

import pytest

from linlayout import LayoutError, LinearLayout as L
from linlayout.layout_utils import (
    ensure_layout_not_larger_than,
    ensure_layout_not_smaller_than,
    factor_maximal_identity_prefix,
    get_input_basis_mask,
    get_output_basis_mask,
    get_reps,
    identity_standard_nd,
    is_image_subset,
    rename_dims,
    square_sublayout_is_identity,
    zeros_like,
)

I1 = L.identity_1d
Z1 = L.zeros_1d


def test_products():
    assert I1(16, "in", "out") * I1(32, "in", "out") == L({"in": [[1 << i] for i in range(9)]}, ["out"])
    assert L.empty() * I1(32, "in", "out") == I1(32, "in", "out")
    assert I1(8, "in", "out") * Z1(16, "in", "out") == L({"in": [[1], [2], [4], [0], [0], [0], [0]]}, ["out"])
    assert Z1(16, "in", "out1") * L({"in": []}, ["out2"]) == L({"in": [[0, 0]] * 4}, ["out1", "out2"])
    assert I1(4, "in", "out1") * I1(8, "in", "out2") == L(
        {"in": [[1, 0], [2, 0], [0, 1], [0, 2], [0, 4]]}, ["out1", "out2"]
    )
    t = (I1(32, "in1", "out1") * I1(16, "in2", "out2")).transpose_ins(["in2", "in1"])
    assert t.in_dim_names == ["in2", "in1"]


def test_compose():
    l1 = L({"in1": [[1, 1], [0, 1]], "in2": [[1, 0], [1, 2]]}, ["out1", "out2"])
    l2 = L({"out1": [[2, 2], [1, 0]], "out2": [[1, 1], [2, 1]]}, ["out3", "out4"])
    c = l1.compose(l2)
    assert c.same_order(L({"in1": [[3, 3], [1, 1]], "in2": [[2, 2], [0, 3]]}, [("out3", 4), ("out4", 4)]))
    assert not c.is_surjective()


def test_compose_4d():
    l1 = L(
        {
            "in0": [[1, 0, 0, 0], [2, 0, 0, 0]],
            "in1": [[4, 0, 0, 0], [8, 0, 0, 0], [16, 0, 0, 0], [32, 0, 0, 0]],
            "in2": [[0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 0, 2]],
            "in3": [],
        },
        ["out3", "out0", "out1", "out2"],
    )
    l2 = L(
        {
            "out3": [[1, 0, 0, 0], [2, 0, 0, 0]] + [[0, 0, 0, 0]] * 4,
            "out0": [[0, 1, 0, 0]],
            "out1": [[0, 0, 1, 0]],
            "out2": [[0, 0, 0, 1], [0, 0, 0, 2]],
        },
        ["out3", "out2", "out1", "out0"],
    )
    want = L(
        {
            "in0": [[1, 0, 0, 0], [2, 0, 0, 0]],
            "in1": [[0, 0, 0, 0]] * 4,
            "in2": [[0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 0, 2]],
            "in3": [],
        },
        [("out3", 4), ("out2", 2), ("out1", 2), ("out0", 4)],
    )
    assert l1.compose(l2).same_order(want)


@pytest.mark.parametrize(
    "bases,new,want",
    [
        ({"in1": [[1], [4], [8]], "in2": [[2]]}, [("in3", 2), ("in4", 8)], {"in3": [[1]], "in4": [[4], [8], [2]]}),
        ({"in1": [[1], [4], [2]], "in2": []}, [("in3", 4), ("in4", 2)], {"in3": [[1], [4]], "in4": [[2]]}),
        ({"in1": [[1], [4]], "in2": [[2]]}, [("in3", 8), ("in4", 1)], {"in3": [[1], [4], [2]], "in4": []}),
        ({"in1": [[1], [4]], "in2": [[2]]}, [("in3", 1), ("in4", 8)], {"in3": [], "in4": [[1], [4], [2]]}),
    ],
)
def test_reshape_ins(bases, new, want):
    assert L(bases, ["out"]).reshape_ins(new).same_order(L(want, ["out"]))


@pytest.mark.parametrize(
    "bases,new,want",
    [
        ({"in1": [[1], [4], [8]], "in2": [[3]]}, [("out2", 2), ("out3", 8)], {"in1": [[1, 0], [0, 2], [0, 4]], "in2": [[1, 1]]}),
        ({"in1": [[1], [4], [2]], "in2": []}, [("out1", 4), ("out2", 2)], {"in1": [[1, 0], [0, 1], [2, 0]], "in2": []}),
        ({"in1": [[1], [4]], "in2": [[2]]}, [("out1", 8), ("out2", 1)], {"in1": [[1, 0], [4, 0]], "in2": [[2, 0]]}),
    ],
)
def test_reshape_outs(bases, new, want):
    got = L(bases, ["out"]).reshape_outs(new)
    assert got.same_order(L(want, [n for n, _ in new]))


def test_flatten():
    assert L({"in1": [[1], [4], [8]], "in2": [[2]]}, ["out"]).flatten_ins().same_order(
        L({"in1": [[1], [4], [8], [2]]}, ["out"])
    )
    ll = L({"in1": [[1, 0], [4, 1], [8, 4]], "in2": [[3, 2]]}, [("out1", 16), ("out2", 8)])
    assert ll.flatten_outs().same_order(L({"in1": [[1], [4 + 16], [8 + 64]], "in2": [[3 + 32]]}, [("out1", 128)]))
    for lay in (L({"in1": []}, ["out"]), L({"in1": []}, []), L({}, ["out"]), L({}, [])):
        assert lay.flatten_ins().same_order(lay) and lay.flatten_outs().same_order(lay)


@pytest.mark.parametrize(
    "a,b,want,want_outs",
    [
        ({"in1": [[2], [1], [4]]}, {"in2": [[4], [1], [2]]}, {"in1": [[4], [2], [1]]}, [("in2", 8)]),
        ({"in1": [[2], [1], [4]]}, {"in2": [[0], [2], [1], [4]]}, {"in1": [[2], [4], [8]]}, [("in2", 16)]),
        ({"in1": [[2], [1], [4]], "in2": [[0]]}, {"in": [[4], [1], [2]]}, {"in1": [[4], [2], [1]], "in2": [[0]]}, [("in", 8)]),
        ({"in": [[1], [2], [4]]}, {"in": [[0], [4], [1], [2]]}, {"in": [[4], [8], [2]]}, [("in", 16)]),
        ({"in1": [[1], [2], [4]]}, {"in2": [[4], [1], [2], [0]]}, {"in1": [[2], [4], [1]]}, [("in2", 16)]),
        ({"in": [[1], [2], [4]]}, {"in": [[0], [4], [1], [2], [0]]}, {"in": [[4], [8], [2]]}, [("in", 32)]),
    ],
)
def test_invert_and_compose_1d(a, b, want, want_outs):
    la, lb = L(a, ["out"]), L(b, ["out"])
    c = la.invert_and_compose(lb)
    assert c == L(want, want_outs)
    assert c.compose(lb).apply_flat(0) == 0
    assert [c.compose(lb).apply_flat(1 << j) for j in range(la.total_in_bits)] == la.columns()


def test_invert_and_compose_broadcasted_dims():
    l1 = L({"in1": [[1], [2], [4]], "in2": [[0]]}, ["out"])
    l2 = L({"in3": [[1], [2], [4]], "in4": [[0]]}, ["out"])
    assert l1.invert_and_compose(l2) == L({"in1": [[1, 0], [2, 0], [4, 0]], "in2": [[0, 0]]}, [("in3", 8), ("in4", 2)])
    a = L({"in1": [[1], [2]], "in2": [[0]]}, ["out"])
    b = L({"in3": [[2], [1]], "in4": [[0]]}, ["out"])
    c = a.invert_and_compose(b)
    assert c == L({"in1": [[2, 0], [1, 0]], "in2": [[0, 0]]}, [("in3", 4), ("in4", 2)])
    assert c.compose(b) == a


def test_invert_and_compose_multidim_and_identity_dims():
    l1 = L({"in1": [[1, 0], [0, 1], [2, 0], [3, 2]], "in2": [[2, 2]]}, ["out1", "out2"])
    l2 = L({"in3": [[0, 1], [1, 0], [0, 0], [0, 2], [2, 1]]}, ["out2", "out1"])
    assert l1.invert_and_compose(l2).compose(l2) == l1
    assert l2.invert_and_compose(l1).compose(l1) == l2
    outs = [f"dim{i}" for i in range(9)]

    def unit(k):
        return [1 if i == k else 0 for i in range(9)]

    src = L({"register": [unit(8), unit(7)], "lane": [unit(6), unit(5), unit(4), unit(3), unit(2)],
             "warp": [unit(1), unit(0)], "block": []}, outs)
    dst = L({"register": [unit(8), unit(7)], "lane": [unit(0), unit(1), unit(2), unit(3), unit(4)],
             "warp": [unit(5), unit(6)], "block": []}, outs)
    cvt = dst.invert_and_compose(src)
    k = {"register": 3, "lane": 0, "warp": 2, "block": 0}
    assert dst.apply(k) == src.apply(cvt.apply(k))
    # register is identical in both: kept as the identity
    assert cvt.bases["register"] == [[1, 0, 0, 0], [2, 0, 0, 0]]


def test_invert_and_compose_needs_the_image():
    with pytest.raises(LayoutError, match="not in the image"):
        L({"in": [[1], [2]]}, ["out"]).invert_and_compose(L({"x": [[1], [0]]}, [("out", 4)]))


def test_num_consecutive_in_out():
    cases = [
        (I1(1, "in", "out"), 1),
        (I1(4, "in", "out"), 4),
        (I1(4, "in1", "out") * I1(8, "in2", "out"), 4),
        (I1(4, "in", "out1") * I1(8, "in", "out2"), 4),
        (Z1(4, "in", "out1") * I1(4, "in", "out2"), 1),
        (L({"in": [[1], [2], [4], [9]]}, ["out"]), 1),
        (L({"in": [[1], [2], [4], [10]]}, ["out"]), 2),
        (L({"in": [[1], [4], [2]]}, ["out"]), 2),
        (L({"in": [[1], [2], [4]], "in2": [[8], [18]]}, ["out"]), 2),
    ]
    assert [lay.num_consecutive_in_out() for lay, _ in cases] == [v for _, v in cases]


def test_equality_checks_out_dim_sizes():
    assert I1(4, "in", "out") != L({"in": [[1], [2]]}, [("out", 8)])


def test_sublayout():
    l1 = L({"in1": [[1, 0], [0, 1], [2, 0]], "in2": [[0, 1]]}, ["out1", "out2"])
    want = L({"in1": [[1], [0], [2]], "in2": [[0]]}, ["out1"])
    assert l1.sublayout(["in1", "in2"], ["out1"]).same_order(want)
    assert l1.sublayout(["in2", "in1"], ["out1"]).same_order(want)
    assert l1.sublayout(["in2", "in1"], ["out2", "out1"]).same_order(l1)
    assert l1.sublayout(["in1"], ["out1"]).same_order(L({"in1": [[1], [0], [2]]}, ["out1"]))
    assert l1.sublayout([], []).same_order(L.empty())
    assert l1.sublayout(["in1"], []).same_order(L({"in1": [[], [], []]}, []))
    assert l1.sublayout([], ["out1"]).same_order(L({}, [("out1", 4)]))
    with pytest.raises(LayoutError):
        l1.sublayout(["nope"], [])


def test_sublayout_is_zero():
    i = I1(4, "in", "out")
    assert not i.sublayout_is_zero(["in"], ["out"])
    assert i.sublayout_is_zero([], ["out"]) and i.sublayout_is_zero(["in"], []) and i.sublayout_is_zero([], [])
    l1 = L({"in1": [[0, 1], [0, 2]], "in2": [[1, 1]]}, ["out1", "out2"])
    assert l1.sublayout_is_zero(["in1"], ["out1"])
    assert not any(l1.sublayout_is_zero([a], [b]) for a, b in [("in1", "out2"), ("in2", "out1"), ("in2", "out2")])


def test_free_variable_masks():
    assert I1(4, "in", "out").free_variable_masks() == {"in": 0}
    assert Z1(16, "in", "out").free_variable_masks() == {"in": 0b1111}
    lay = I1(2, "in", "out") * Z1(4, "in", "out") * I1(4, "in", "out") * Z1(2, "in", "out")
    assert lay.free_variable_masks() == {"in": 0b100110}


def test_quotient():
    lay = L({"dim1": [[1, 0]], "dim2": [[0, 0]]}, [("dim1", 2), ("dim2", 1)])
    q = lay.quotient(["dim1"])
    assert q == Z1(2, "dim2", "dim2")
    assert q.quotient(["dim2"]) is None
    assert L({"dim1": [[1, 0], [2, 0], [4, 0]], "dim2": [[0, 1], [0, 2]]}, ["dim1", "dim2"]).quotient(["dim1", "dim2"]) is not None
    ok = L({"dim1": [[1, 0, 2], [2, 0, 1]], "dim2": [[0, 1, 0], [0, 2, 0], [0, 4, 0]], "dim3": [[0, 0, 1], [0, 0, 2]]},
           ["dim1", "dim2", "dim3"])
    assert ok.quotient(["dim2"]) is not None
    bad = L({"dim1": [[1, 0, 2], [2, 0, 1]], "dim2": [[0, 1, 0], [0, 2, 0], [0, 4, 0]], "dim3": [[0, 1, 1], [0, 0, 2]]},
            ["dim1", "dim2", "dim3"])
    assert bad.quotient(["dim2"]) is None
    assert L.empty().quotient(["dim1"]) is None
    ident = I1(8, "dim1", "dim1") * I1(2, "dim2", "dim2") * I1(4, "dim3", "dim3")
    assert ident.quotient(["dim1", "dim3"]).quotient(["dim2"]) is not None


def test_divide_left():
    b, c = I1(8, "in", "out"), Z1(16, "in", "out")
    assert (b * c).divide_left(b) == c
    assert (c * b).divide_left(c) == b
    assert I1(32, "in", "out").divide_left(L({"in": [[1], [2], [4], [8]], "extra": [[0]]}, ["out"])) is None
    assert I1(8, "in", "out").divide_left(I1(4, "in", "out")) == I1(2, "in", "out")
    assert I1(8, "in", "out").divide_left(I1(8, "in", "out")) == I1(1, "in", "out")
    l1 = L({"in2": [[0, 1], [1, 0]], "in1": [[2, 0], [0, 2]]}, ["out1", "out2"])
    l2 = L({"in2": [[0, 1], [1, 0]]}, ["out1", "out2"])
    l3 = L({"in2": [], "in1": [[1, 0], [0, 1]]}, ["out1", "out2"])
    assert l2 * l3 == l1 and l1.divide_left(l2) == l3
    l7 = L({"in1": [], "in2": [[0, 1]], "in3": []}, ["out1", "out2"])
    l8 = L({"in2": [[0, 1]]}, ["out1", "out2"])
    assert l7.divide_left(l8) == L({"in1": [], "in2": [], "in3": []}, ["out1", "out2"])
    e1 = L({"in2": [[1, 0], [1, 0]], "in1": [[2, 0], [0, 1]]}, ["out1", "out2"])
    e2 = L({"in2": [[1, 0], [1, 0]]}, ["out1", "out2"])
    assert e1.divide_left(e2) == L({"in2": [], "in1": [[1, 0], [0, 1]]}, ["out1", "out2"])
    l4 = L({"in1": [[0, 1], [0, 2]]}, ["out1", "out2"])
    assert l4.divide_left(L({}, ["out1"])) == l4


def test_divide_right():
    a = I1(4, "in", "out") * I1(8, "in", "out")
    assert a.divide_right(I1(8, "in", "out")) == I1(4, "in", "out")
    assert L({"in": [[2], [1]]}, ["out"]).divide_right(I1(2, "in", "out")) is None


def test_layout_utils():
    l1 = L({"in1": [[1, 1], [2, 2], [4, 4]], "in2": [[2, 1], [1, 2]]}, [("in1", 8), ("in2", 8)])
    assert square_sublayout_is_identity(l1, ["in1"]) and not square_sublayout_is_identity(l1, ["in2"])
    assert square_sublayout_is_identity(I1(4, "in", "in"), [])
    l2 = I1(4, "in1", "in1") * I1(8, "in2", "in2") * L({"in3": [[1, 1, 1]]}, [("in1", 2), ("in2", 2), ("in3", 2)])
    assert [square_sublayout_is_identity(l2, d) for d in (["in1"], ["in2"], ["in3"], ["in1", "in2"])] == [
        False, False, True, False]
    lay = L({"x": [[1, 8], [2, 16]], "y": [[4, 1]], "broadcast": [[0, 0]]}, [("out0", 8), ("out1", 32)])
    assert get_output_basis_mask(lay, ["x"], "out0") == 0b0011
    assert get_output_basis_mask(lay, ["x", "y"], "out0") == 0b0111
    assert get_output_basis_mask(lay, ["x", "broadcast"], "out1") == 0b11000
    assert get_output_basis_mask(lay, [], "out0") == 0
    lay = L({"x": [[1, 0], [0, 2], [0, 0], [4, 8]], "y": [[2, 0]]}, [("out0", 8), ("out1", 16)])
    assert [get_input_basis_mask(lay, "x", o) for o in (["out0"], ["out1"], ["out0", "out1"], [])] == [9, 10, 11, 0]
    lay = L({"x": [[1], [2], [8]], "other": [[4]]}, [("out", 16)])
    size, q = factor_maximal_identity_prefix(lay, "x", "out", 8)
    assert size == 4 and I1(size, "x", "out") * q == lay
    r = rename_dims(L({"a": [[1, 0]], "b": [[0, 1]]}, [("x", 2), ("y", 2)]), {"a": "b", "b": "a"}, {"x": "y", "y": "x"})
    assert r.in_dim_names == ["b", "a"] and r.out_dim_names == ["y", "x"]
    assert r.same_order(L({"b": [[1, 0]], "a": [[0, 1]]}, [("y", 2), ("x", 2)]))
    sup = L({"x": [[1, 1], [2, 0]]}, [("out0", 4), ("out1", 2)])
    sub = L({"other": [[1, 3]]}, [("out1", 2), ("out0", 4)])
    outside = L({"other": [[1, 0]]}, [("out0", 4), ("out1", 2)])
    smaller = L({"other": [[1, 1]]}, [("out0", 2), ("out1", 2)])
    wrong = L({"other": [[1]]}, [("different", 2)])
    assert is_image_subset(sub, sup) and is_image_subset(smaller, sup)
    assert not is_image_subset(sup, sub) and not is_image_subset(outside, sup) and not is_image_subset(sub, wrong)
    cvt = L({"in": [[1, 0], [0, 1]]}, ["out0", "out1"])
    assert get_reps(cvt, L({"in": [[1]]}, ["out0"])) == L({"in": [[0, 0], [0, 1]]}, [("out0", 2), ("out1", 2)])
    assert zeros_like(cvt) == L({"in": [[0, 0], [0, 0]]}, [("out0", 2), ("out1", 2)])


def test_ensure_layout_size_helpers():
    lay = I1(4, "register", "dim0") * I1(8, "lane", "dim1")
    small = ensure_layout_not_larger_than(lay, {"dim0": 2})
    assert small.out_dims == [("dim0", 2), ("dim1", 8)] and small.bases["register"] == [[1, 0], [0, 0]]
    dropped = ensure_layout_not_larger_than(lay, {"dim0": 2}, broadcast_registers=False)
    assert dropped.bases["register"] == [[1, 0]]
    big = ensure_layout_not_smaller_than(lay, [8, 16])
    assert big.out_dims == [("dim0", 8), ("dim1", 16)]
    assert big.bases["register"] == [[1, 0], [2, 0], [4, 0], [0, 8]]
    nd = identity_standard_nd("register", [4, 8], [1, 0])
    assert nd.same_order(L({"register": [[0, 1], [0, 2], [0, 4], [1, 0], [2, 0]]}, ["dim0", "dim1"]))


def test_equal_ignoring_out_dim_sizes():
    wide = L({"in": [[1], [2]]}, [("out", 8)])
    assert I1(4, "in", "out") != wide and I1(4, "in", "out").equal_ignoring_out_dim_sizes(wide)
    assert not I1(4, "in", "out").equal_ignoring_out_dim_sizes(L({"in": [[2], [1]]}, [("out", 8)]))
    l1 = L({"in1": [[1], [2], [4]]}, ["out"])
    l2 = L({"in2": [[4], [1], [2], [0]]}, ["out"])
    assert l1.invert_and_compose(l2).compose(l2).equal_ignoring_out_dim_sizes(l1)


def test_resize_out_dim_zeroes_components_at_or_above_the_new_size():
    ll = L({"in": [[1, 3], [2, 4], [0, 5], [0, 6]]}, [("out0", 4), ("out1", 8)])
    got = ll.resize_out_dim("out1", 4)
    assert got.same_order(L({"in": [[1, 3], [2, 0], [0, 0], [0, 0]]}, [("out0", 4), ("out1", 4)]))
    with pytest.raises(LayoutError, match="only shrinks"):
        ll.resize_out_dim("out0", 8)
