"""Value tables of linear maps over GF(2), as numpy arrays (vectors are ints, bit i = coordinate i).

``span_table(cols)[x]`` is the image of ``x`` under the map with columns ``cols``:
the XOR of ``cols[i]`` over the set bits ``i`` of ``x``, for every ``x < 2**len(cols)``
(a 0/1 matrix of the columns' bits of every index times the columns, XOR-reduced over the
columns; more than eight columns split into the low eight and the rest; up to ``_DOUBLED`` columns the entries are listed by doubling,
``span_values``, where the few Python XORs cost less than the numpy calls).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from linlayout import caches

__all__ = ["span_table", "span_values"]


def span_table(cols: Sequence[int]) -> np.ndarray:
    """``[2**len(cols)]``: the XOR of ``cols[i]`` over the set bits ``i`` of every index."""
    if len(cols) <= _DOUBLED:
        return np.array(span_values(cols), dtype=np.int64)
    if len(cols) > _DIRECT:  # index = high * 2**_DIRECT + low: the XOR of two smaller tables
        return (span_table(cols[_DIRECT:])[:, None] ^ span_table(cols[:_DIRECT])[None, :]).reshape(-1)
    return np.bitwise_xor.reduce(_index_bits(len(cols)) * np.asarray(cols, dtype=np.int64)[:, None], axis=0)


def span_values(cols: Sequence[int]) -> list[int]:
    """``span_table(cols)`` as a list of ints, built by doubling (entry ``x + 2**i`` is entry ``x``
    XOR ``cols[i]``): for the few columns of one access, where a numpy call costs more."""
    out = [0]
    for c in cols:
        out += [x ^ c for x in out]
    return out


_DIRECT = 8  # columns tabulated directly (an 8 x 256 bit matrix at most)
_DOUBLED = 4  # columns listed by doubling (16 entries at most)


@caches.memoize("synth.span.index_bits", table=True)
def _index_bits(k: int) -> np.ndarray:
    """``[k, 2**k]``: bit ``i`` of every index (0 or 1), a row per bit (the XOR reduction runs over the
    rows: whole rows at a time)."""
    return (np.arange(1 << k)[None, :] >> np.arange(k)[:, None]) & 1
