"""Triton's LinearLayout/LayoutUtils unit-test vectors, run through the Python API.

The vectors live in ``tests/data/triton_vectors_public.json``.  Every ``ll_*``,
``get_reps`` and ``factor_maximal_identity_prefix`` vector must reproduce its
expected layout (same map, same dim names, sizes and dim order) or value.
"""

from __future__ import annotations

import pytest
from repo_data import triton_vectors

from linlayout import LinearLayout
from linlayout.layout_utils import factor_maximal_identity_prefix, get_reps

ALGEBRA_KINDS = ("ll_", "get_reps", "factor_maximal_identity_prefix")
CASES = triton_vectors(prefix=ALGEBRA_KINDS)


def L(obj) -> LinearLayout:
    return LinearLayout.from_json(obj)


def _pick(params: dict, *names):
    for n in names:
        if n in params:
            return params[n]
    raise KeyError(f"none of {names} in params {sorted(params)}")


def _pairs(dims):
    return [(n, s) for n, s in dims]


def run_vector(kind: str, p: dict):
    """The result of one vector: a LinearLayout, None (no solution) or a JSON value."""
    if kind == "ll_mul":
        return L(p["inner"]) * L(p["outer"])
    if kind == "ll_compose":
        return L(_pick(p, "this", "inner", "layout")).compose(L(p["outer"]))
    if kind == "ll_invert_and_compose":
        return L(p["this"]).invert_and_compose(L(p["outer"]))
    if kind == "ll_apply":
        return {"output": L(p["layout"]).apply(p["input"])}
    if kind == "ll_divide_left":
        return L(p["A"]).divide_left(L(p["B"]))
    if kind == "ll_divide_right":
        return L(p["A"]).divide_right(L(p["B"]))
    if kind == "ll_num_consecutive_in_out":
        return {"value": L(p["layout"]).num_consecutive_in_out()}
    if kind == "ll_free_variable_masks":
        return {"masks": L(p["layout"]).free_variable_masks()}
    if kind == "ll_transpose_outs":
        return L(p["layout"]).transpose_outs(p["new_out_order"])
    if kind == "ll_transpose_ins":
        return L(p["layout"]).transpose_ins(_pick(p, "new_in_order", "order"))
    if kind == "ll_resize_in_dim":
        return L(p["layout"]).resize_in_dim(p["inDim"], p["newSize"])
    if kind == "ll_reshape_ins":
        return L(p["layout"]).reshape_ins(_pairs(_pick(p, "new_in_dims", "newInDims", "in_dims")))
    if kind == "ll_reshape_outs":
        return L(p["layout"]).reshape_outs(_pairs(_pick(p, "new_out_dims", "newOutDims", "out_dims")))
    if kind == "ll_sublayout":
        return L(p["layout"]).sublayout(_pick(p, "in_dims", "inDims", "ins"), _pick(p, "out_dims", "outDims", "outs"))
    if kind == "get_reps":
        return get_reps(L(p["cvt"]), L(p["tile"]))
    if kind == "factor_maximal_identity_prefix":
        size, q = factor_maximal_identity_prefix(
            L(p["layout"]), _pick(p, "inDim", "in_dim"), _pick(p, "outDim", "out_dim"), p.get("maxSize", p.get("max_size"))
        )
        return {"size": size, "quotient": q}
    raise NotImplementedError(f"no runner for vector kind {kind!r}")


def _check(result, expected):
    if isinstance(result, LinearLayout):
        want = L(expected)
        assert result == want, f"got {result.to_json()}, want {expected}"
        assert result.in_dims == want.in_dims and result.out_dims == want.out_dims
        return
    if result is None:
        assert expected is None or expected.get("exists") is False
        return
    for key, value in expected.items():
        got = result[key]
        if isinstance(got, LinearLayout):
            _check(got, value)
        else:
            assert got == value, f"{key}: got {got}, want {value}"


@pytest.mark.parametrize("vec", CASES, ids=[f"{i}-{v['kind']}" for i, v in enumerate(CASES)])
def test_triton_algebra_vector(vec):
    _check(run_vector(vec["kind"], vec["params"]), vec["expected"])


def test_vectors_cover_the_public_kinds():
    kinds = {v["kind"] for v in CASES}
    assert {"ll_mul", "ll_invert_and_compose", "ll_divide_left", "get_reps"} <= kinds
