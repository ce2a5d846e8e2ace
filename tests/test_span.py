"""``synth.span``: the value tables of GF(2) linear maps against ``f2.apply_columns`` of each index."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from linlayout import f2
from linlayout.synth.span import span_table, span_values


@given(st.lists(st.integers(0, (1 << 40) - 1), max_size=10))
def test_span_table_and_values_are_the_xor_over_each_index_set_bits(cols):
    want = [f2.apply_columns(cols, x) for x in range(1 << len(cols))]
    table = span_table(cols)
    assert table.dtype.name == "int64" and table.shape == (1 << len(cols),)
    assert table.tolist() == want
    assert span_values(cols) == want
