"""CBSZ/ABID/BLGP as affine lane maps, against the CDNA4-ISA 7.1.6 integer expressions."""

from __future__ import annotations

import numpy as np
import pytest

from linlayout import LayoutError
from linlayout.hw.mfma import MFMA_ARCHES, get_instruction, instructions_for, mfma_layouts
from linlayout.hw.mfma_modifiers import blgp_lane_map, cbsz_abid_lane_map, source_map

# Table 29, verbatim as integer expressions
BLGP = {0: lambda l: l, 1: lambda l: l % 32, 2: lambda l: l % 32 + 32, 3: lambda l: (l + 16) % 64,
        4: lambda l: l % 16, 5: lambda l: l % 16 + 16, 6: lambda l: l % 16 + 32, 7: lambda l: l % 16 + 48}


def _apply(lane_map, lanes):
    p, c = lane_map
    return p.apply({"lane": np.asarray(lanes)})["lane"] ^ c


def test_lane_maps_match_isa_expressions():
    lanes = np.arange(64)
    for blgp, f in BLGP.items():
        np.testing.assert_array_equal(_apply(blgp_lane_map(blgp), lanes), [f(int(l)) for l in lanes])
    for cbsz in range(5):
        s = 64 >> cbsz
        for abid in range(1 << cbsz):
            np.testing.assert_array_equal(_apply(cbsz_abid_lane_map(cbsz, abid), lanes), lanes % s + s * abid)


def _slot_of_every_coordinate(layout):
    """Brute-force inverse: coordinate tuple -> (item, lane), from the forward table only."""
    table = layout.table()
    regs = layout.in_dim_size("register")
    return {tuple(row): (x % regs, x // regs) for x, row in enumerate(table.tolist())}


MULTI = [(a, i.name) for a in MFMA_ARCHES for i in instructions_for(a) if i.supports_cbsz_abid]


@pytest.mark.parametrize("arch,name", MULTI)
def test_source_map_cbsz_abid(arch, name):
    ins = get_instruction(arch, name)
    slots = _slot_of_every_coordinate(mfma_layouts(ins)["A"])
    cbsz = 0
    while (1 << cbsz) <= ins.blocks and cbsz <= 4:
        s = 64 >> cbsz
        for abid in range(1 << cbsz):
            r, c = source_map(ins, "A", cbsz=cbsz, abid=abid)
            for coord, (e, lane) in slots.items():
                got = r.apply(dict(zip(r.in_dim_names, coord)))
                assert (got["register"], got["lane"] ^ c) == (e, lane % s + s * abid)
        cbsz += 1


@pytest.mark.parametrize("arch,name", [(a, i.name) for a in MFMA_ARCHES for i in instructions_for(a)
                                       if i.supports_blgp])
def test_source_map_blgp(arch, name):
    ins = get_instruction(arch, name)
    slots = _slot_of_every_coordinate(mfma_layouts(ins)["B"])
    for blgp, f in BLGP.items():
        r, c = source_map(ins, "B", blgp=blgp)
        for coord, (e, lane) in slots.items():
            got = r.apply(dict(zip(r.in_dim_names, coord)))
            assert (got["register"], got["lane"] ^ c) == (e, f(lane))


def test_isa_example_cbsz1_abid1():
    """CDNA4-ISA 7.1.6.1: 32x32x1_2b with CBSZ=1, ABID=1 multiplies every block of B by block 1 of A."""
    ins = get_instruction("gfx942", "v_mfma_f32_32x32x1_2b_f32")
    r, c = source_map(ins, "A", cbsz=1, abid=1)
    a = mfma_layouts(ins)["A"]
    for b in range(2):
        for i in range(32):
            slot = r.apply({"block": b, "dim0": i, "dim1": 0})
            assert a.apply({"register": slot["register"], "lane": slot["lane"] ^ c}) == {"block": 1, "dim0": i, "dim1": 0}


def test_modifier_errors():
    single = get_instruction("gfx942", "v_mfma_f32_32x32x8_f16")
    with pytest.raises(LayoutError, match="does not support CBSZ"):
        source_map(single, "A", cbsz=1)
    with pytest.raises(LayoutError, match="does not support BLGP"):
        source_map(single, "B", blgp=1)
    two = get_instruction("gfx942", "v_mfma_f32_32x32x1_2b_f32")
    with pytest.raises(LayoutError, match="has 2"):
        source_map(two, "A", cbsz=2)
    with pytest.raises(LayoutError, match="ABID"):
        cbsz_abid_lane_map(1, 2)
    with pytest.raises(LayoutError, match="CBSZ"):
        cbsz_abid_lane_map(5, 0)
    with pytest.raises(LayoutError, match="BLGP"):
        blgp_lane_map(8)
    with pytest.raises(LayoutError, match="operand A"):
        source_map(two, "C")
    plain, c = source_map(single, "A")
    assert c == 0 and plain == mfma_layouts(single)["A"].invert()
