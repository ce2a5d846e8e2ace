"""Value tables of linear maps over GF(2), as numpy arrays (vectors are ints, bit i = coordinate i).

``span_table(cols)[x]`` is the image of ``x`` under the map with columns ``cols``:
the XOR of ``cols[i]`` over the set bits ``i`` of ``x``, for every ``x < 2**len(cols)``
(built by doubling: the second half of the table is the first half XOR the next column).

``position_table(reg, lane, warp)[w, l, r]`` is the image of the hardware position
(warp ``w``, lane ``l``, register ``r``) under a map given by its columns per hardware
dim; the map is linear, so it is the XOR of one table per dim.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["position_table", "span_table"]


def span_table(cols: Sequence[int]) -> np.ndarray:
    """``[2**len(cols)]``: the XOR of ``cols[i]`` over the set bits ``i`` of every index."""
    out = np.zeros(1, dtype=np.int64)
    for c in cols:
        out = np.concatenate([out, out ^ c])
    return out


def position_table(reg: Sequence[int], lane: Sequence[int], warp: Sequence[int]) -> np.ndarray:
    """``[2**len(warp), 2**len(lane), 2**len(reg)]``: the image of every (warp, lane, register)."""
    return span_table(warp)[:, None, None] ^ span_table(lane)[None, :, None] ^ span_table(reg)[None, None, :]
