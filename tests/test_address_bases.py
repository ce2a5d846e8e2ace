"""Two rules of the address pricing (linlayout.synth.cost) on hand-made tables, each failing with its rule
reverted: on targets whose adds beyond the offset field read their base through a copy
(``Target.opaque_beyond_offset_adds``, gfx950), each warp class of an address class has its own base and
so its own copy (``_AddressBases``: the copies keyed by (class, warp)); a ``ds_bpermute`` table whose
warp 0 defines too few lanes for its row fit to hold in the other warps is fit whole (``_table_fit``'s
``fit_affine``).  And ``bpermute_address_valu``'s one-line refusal of tables of another warp count."""

from __future__ import annotations

import numpy as np
import pytest

from linlayout import LayoutError
from linlayout.synth import cost
from linlayout.synth.steps.lds import OFFSET_LIMIT, LdsLoad

LANES = np.arange(64)


def _load(base: int, warp_col: int, k: int) -> LdsLoad:
    """A ``ds_read_b32`` of two warps: lane ``l`` of warp ``w`` reads byte ``(base + 4 l) ^ (w warp_col)``."""
    return LdsLoad(addr=np.stack([base + 4 * LANES, (base + 4 * LANES) ^ warp_col]), width_bytes=4, dst=[k])


def test_each_warp_class_of_a_beyond_offset_add_has_its_own_copy():
    """Two loads of one lane table, the second with another warp part (its own register joined from the
    first's lane part: ``_AddressBases.joined``), then each again at ``OFFSET_LIMIT`` bytes further, beyond
    the offset field: one ``v_add_u32`` each on gfx942; on gfx950 each add's base (one per warp class) is
    read through its own ``v_mov_b32`` copy, two more."""
    first = [_load(0, 256, 0), _load(0, 512, 1)]
    further = [_load(OFFSET_LIMIT, 256, 2), _load(OFFSET_LIMIT, 512, 3)]
    assert cost.lds_address_valu(first, "gfx942") == cost.lds_address_valu(first, "gfx950")
    adds = cost.lds_address_valu(first + further, "gfx942") - cost.lds_address_valu(first, "gfx942")
    assert adds == 2
    assert cost.lds_address_valu(first + further, "gfx950") - cost.lds_address_valu(first, "gfx950") == adds + 2


def test_a_bpermute_table_defined_by_other_warps_is_fit_whole():
    """Warp 0 reads lane 0 alone (the others don't-care), warp 1 every lane: warp 0's row fit has no lane
    columns, so the row fit and warp 1's difference miss the table; ``fit_affine`` on the whole table finds
    ``4 l + 256 w``, priced as the same table with every lane defined."""
    full = np.stack([4 * LANES, 4 * LANES + 256])
    table = full.copy()
    table[0, 1:] = -1
    fit = cost._table_fit(table, table >= 0)
    assert (fit.const, fit.lane_cols, fit.warp_cols) == (0, (4, 8, 16, 32, 64, 128), (256,))
    assert cost.bpermute_address_valu([table], "gfx942", 2) == cost.bpermute_address_valu([full], "gfx942", 2)


@pytest.mark.parametrize("num_warps", [1, 4])
def test_a_bpermute_table_of_another_warp_count_is_refused_in_one_line(num_warps):
    table = np.stack([4 * LANES, 4 * LANES + 256])
    with pytest.raises(LayoutError, match=f"^a ds_bpermute address table of 2 warps for {num_warps} warps$"):
        cost.bpermute_address_valu([table], "gfx942", num_warps)


def _formed(table: np.ndarray) -> tuple:
    """``SrcOffsets.registers``' entry of a load-line register holding ``table`` in every warp."""
    return ((table - table[0]).tobytes(), (table ^ table[0]).tobytes(), (), int(table[0]))


@pytest.mark.parametrize("arch", ["gfx942", "gfx1200"])
@pytest.mark.parametrize("base", [4 * LANES, 2 * LANES + 16], ids=["4l", "2l+16"])
def test_a_bpermute_table_after_the_load_line_costs_what_it_adds_to_its_registers(arch, base):
    """``formed`` (the src load line's registers, made in the lowering's one ``LaneValues`` before the
    ``ds_bpermute`` tables): a table is priced as if the load line's table came first in the list, less that
    table's own price -- one of them plus an offset is free (the ``offset:`` field), their lane parts are terms
    of the program (``4 (l ^ 1)`` after ``4 l``: one XOR).  Without ``formed`` the same tables cost more."""
    formed = [_formed(base)]
    alone = cost.bpermute_address_valu([base], arch, 1)
    tables = [base + 64, 4 * (LANES ^ 1), (LANES >> 1) * 8, 8 * LANES]
    seeded = [cost.bpermute_address_valu([t], arch, 1, formed) for t in tables]
    assert seeded == [cost.bpermute_address_valu([base, t], arch, 1) - alone for t in tables]
    assert seeded[0] == 0 < cost.bpermute_address_valu([base + 64], arch, 1)
    if base[1] == 4:
        assert seeded[1] == 1 < cost.bpermute_address_valu([4 * (LANES ^ 1)], arch, 1)
