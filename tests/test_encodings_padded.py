"""Padded shared layouts: the padding function is injective, pads sit where stated,
and the linear part is the unpadded layout."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linlayout import LayoutError
from linlayout.cli import main
from linlayout.encodings import PaddedLayout, from_triton, padded_shared, swizzled_shared


def test_single_pair_places_the_pad_after_every_interval():
    P = padded_shared([(128, 4)], (64, 64), order=(1, 0))
    addr = P.addresses()
    assert addr[127] == 127 and addr[128] == 132 and addr[256] == 264
    gaps = np.diff(addr)
    assert set(np.nonzero(gaps != 1)[0] + 1) == set(range(128, 4096, 128))
    assert set(gaps[gaps != 1]) == {5}
    assert P.footprint == 4095 + 31 * 4 + 1
    mask = P.padding_mask()
    assert mask.sum() == P.footprint - 4096
    assert mask[128:132].all() and not mask[127] and not mask[132]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([2, 4, 8, 16, 32, 64, 128, 256, 512]), st.sampled_from([1, 2, 4, 8, 16])),
                min_size=1, max_size=3, unique_by=lambda p: p[0]),
       st.sampled_from([(16, 16), (32, 64), (8, 128)]))
def test_padding_is_injective_and_counts_the_pads(pairs, shape):
    P = padded_shared(pairs, shape, order=(1, 0))
    n = shape[0] * shape[1]
    addr = P.addresses()
    assert len(addr) == n
    assert np.all(np.diff(addr) >= 1)  # strictly increasing -> injective into the padded buffer
    o = np.arange(n)
    expected_pads = sum((o // i) * p for i, p in pairs)
    assert np.array_equal(addr - o, expected_pads)  # everything skipped before o is padding
    assert P.padding_mask().sum() == P.footprint - n
    # scalar and array forms agree
    for x in (0, n // 3, n - 1):
        assert P.address(x) == addr[x]


def test_linear_part_and_address_of():
    P = padded_shared([(64, 8)], (16, 32), order=(1, 0))
    assert P.linear == swizzled_shared(1, 1, 1, (1, 0), (16, 32))
    # element (row 3, col 5) sits at unpadded offset 3*32+5 = 101 -> +8 pad once
    assert P.address_of({"dim0": 3, "dim1": 5}) == 101 + 8
    rows, cols = np.meshgrid(np.arange(16), np.arange(32), indexing="ij")
    got = P.address_of({"dim0": rows.ravel(), "dim1": cols.ravel()})
    assert np.array_equal(got, P.addresses())


def test_custom_linear_component_and_from_triton():
    swz = swizzled_shared(4, 1, 8, (1, 0), (32, 32))
    P = padded_shared([(256, 16)], (32, 32), linear=swz)
    assert P.linear == swz
    obj = {"encoding": "padded_shared", "shape": [32, 32], "intervals": [256], "paddings": [16],
           "offset": swz.bases["offset"], "block": []}
    Q = from_triton(obj)
    assert isinstance(Q, PaddedLayout) and Q.linear == swz and Q.intervals == (256,) and Q.pads == (16,)
    assert np.array_equal(Q.addresses(), P.addresses())


def test_cli_prints_linear_part_and_padding(capsys):
    obj = {"encoding": "padded_shared", "shape": [16, 16], "intervals": [32, 64], "paddings": [4, 8], "order": [1, 0]}
    assert main(["layout", "--triton", json.dumps(obj), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["padding"] == [[32, 4], [64, 8]]
    assert out["in_dims"][0] == ["offset", 256]


@pytest.mark.parametrize("kwargs, needle", [
    ({"intervals_pads": [(100, 4)]}, "intervals"),
    ({"intervals_pads": [(128, 3)]}, "paddings"),
    ({"intervals_pads": []}, "intervals"),
    ({"intervals_pads": [(128, 4), (128, 8)]}, "repeats"),
    ({"intervals_pads": [5]}, "intervals_pads"),
])
def test_bad_padding_params(kwargs, needle):
    with pytest.raises(LayoutError, match=needle):
        padded_shared(kwargs["intervals_pads"], (16, 16), order=(1, 0))


def test_bad_offsets_and_components():
    P = padded_shared([(32, 4)], (8, 8), order=(1, 0))
    with pytest.raises(LayoutError, match="offset"):
        P.address(64)
    with pytest.raises(LayoutError, match="offset"):
        P.address(np.array([0, 70]))
    with pytest.raises(LayoutError, match="order|offset"):
        padded_shared([(32, 4)], (8, 8))
    with pytest.raises(LayoutError, match="offset"):
        from_triton({"encoding": "padded_shared", "shape": [8, 8], "intervals": [32], "paddings": [4],
                     "offset": [[0, 1], [0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], "block": [], "order": [1, 0]})
