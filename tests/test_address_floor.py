"""The round trips' floor of their first LDS address (``cost.least_address_valu``) stays under the estimate
(``lane_arith.tables_valu``) where an address table costs nothing: an 8-bit store at byte ``l``, the lane id."""

from __future__ import annotations

import pytest

from linlayout import LinearLayout
from linlayout.synth import cost
from linlayout.synth.context import ConversionContext
from linlayout.synth.lane_arith import program_family, tables_valu

SRC = LinearLayout.from_bases({"register": [], "lane": [[1 << b, 0] for b in range(6)], "warp": [[0, 1]]},
                              ["dim0", "dim1"])
DST = LinearLayout.from_bases({"register": [], "lane": [[0, 1]] + [[1 << b, 0] for b in range(5)],
                               "warp": [[32, 0]]}, ["dim0", "dim1"])
LANE_ID = (0, tuple(1 << b for b in range(6)))  # (const, lane columns): the byte address l of a wave64's lane l


@pytest.mark.parametrize("element_bits,floor", [(8, 0), (16, 1), (32, 1)])
def test_the_first_address_floor_allows_a_lane_id_address_only_for_bytes(element_bits, floor):
    ctx = ConversionContext.create(SRC, DST, "gfx942", element_bits)
    assert cost.least_address_valu(ctx) == floor
    # the estimate of an address table equal to the lane id: none, so an 8-bit round trip storing at byte l
    # would be priced under a floor of 1 (review31); wider elements' addresses are multiples of their bytes
    assert tables_valu(program_family("gfx942"), 6, (LANE_ID,)) == 0
    assert tables_valu(program_family("gfx942"), 6, ((0, tuple(2 << b for b in range(6))),)) >= 1
