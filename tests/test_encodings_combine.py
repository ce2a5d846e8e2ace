"""``combine_cta_cga_with_shape``: Triton's combineCtaCgaWithShape on a hand-made CTA layout.

CTA layout: 4 registers along dim1, then 8 lanes along dim0 (out-dim order dim1, dim0).
"""

from __future__ import annotations

from linlayout import LinearLayout
from linlayout.encodings import Cga, combine_cta_cga_with_shape

CTA = LinearLayout.identity_1d(4, "register", "dim1") * LinearLayout.identity_1d(8, "lane", "dim0")
ONE_CTA = Cga()


def test_larger_tensor_extends_registers_in_out_dim_order():
    L = combine_cta_cga_with_shape(CTA, ONE_CTA, (16, 8))
    assert L.out_dims == [("dim0", 16), ("dim1", 8)]
    assert L.bases == {"register": [[0, 1], [0, 2], [0, 4], [8, 0]], "lane": [[1, 0], [2, 0], [4, 0]], "block": []}


def test_smaller_tensor_keeps_broadcast_registers():
    L = combine_cta_cga_with_shape(CTA, ONE_CTA, (4, 2))
    assert L.out_dims == [("dim0", 4), ("dim1", 2)]
    assert L.bases == {"register": [[0, 1], [0, 0]], "lane": [[1, 0], [2, 0], [0, 0]], "block": []}


def test_smaller_tensor_drops_broadcast_registers_when_asked():
    L = combine_cta_cga_with_shape(CTA, ONE_CTA, (4, 2), broadcast_registers=False)
    assert L.bases["register"] == [[0, 1]]
    assert L.bases["lane"] == [[1, 0], [2, 0], [0, 0]]  # lanes are never dropped


def test_cga_split_halves_the_cta_shape():
    L = combine_cta_cga_with_shape(CTA, Cga.from_params([2, 1], [2, 1], [1, 0]), (16, 8))
    assert L.bases == {"register": [[0, 1], [0, 2], [0, 4]], "lane": [[1, 0], [2, 0], [4, 0]], "block": [[8, 0]]}


def test_operand_cga_never_splits_k():
    cga = Cga.from_params([2, 2], [2, 2], [1, 0])
    assert cga.operand(1) == Cga((2, 2), (2, 1), (1, 0))
    assert cga.operand(1).linear_layout(2).bases["block"] == [[0, 0], [1, 0]]
