"""The LDS hardware model (linlayout.hw.lds): phases, bank map, named assumptions."""

from __future__ import annotations

import pytest

from banks_oracle import GFX942_B128_READ, GFX950_B128_READ, contiguous
from linlayout import LayoutError, f2
from linlayout.hw.lds import (ASSUMPTIONS, LDS_ARCHS, OP_SHAPES, generic_lds_model, lds_model,
                              triton_lds_model)


def _groups(op):
    return [op.phase_lanes(p) for p in range(op.num_phases)]


def _as_sets(groups):
    return sorted(sorted(g) for g in groups)


@pytest.mark.parametrize("arch,op,expected", [
    ("gfx942", "ds_read_b128", GFX942_B128_READ),
    ("gfx90a", "ds_read_b128", GFX942_B128_READ),
    ("gfx950", "ds_read_b128", GFX950_B128_READ),
    ("gfx950", "ds_read_b96", GFX942_B128_READ),
    ("gfx942", "ds_write_b128", contiguous(8)),
    ("gfx942", "ds_read_b64", contiguous(16)),
    ("gfx950", "ds_read_b64", contiguous(32)),
    ("gfx950", "ds_write_b64", contiguous(16)),
    ("gfx942", "ds_read_b32", contiguous(32)),
])
def test_phase_groups_match_amd_hw_lists(arch, op, expected):
    assert _as_sets(_groups(lds_model(arch).op(op))) == _as_sets(expected)


def test_xor_phases_are_not_index_subsets():
    # gfx942 ds_read_b128: lanes 0-3 and 20-23 together; the phase subspace is span{l0, l1, l2^l4}
    op = lds_model("gfx942").op("ds_read_b128")
    assert sorted(f2.image_basis(op.phase_subspace())) == sorted(f2.image_basis([1, 2, 4 | 16]))
    assert op.phase_of(0) == op.phase_of(20) != op.phase_of(16)
    # Triton's laneAddr {0,1,4} groups lanes 0-3 with 16-19 instead
    tri = triton_lds_model("gfx942").op("ds_read_b128")
    assert tri.phase_of(0) == tri.phase_of(16) != tri.phase_of(20)
    assert sorted(tri.phase_lanes(0)) == [0, 1, 2, 3, 16, 17, 18, 19]
    tri950 = triton_lds_model("gfx950").op("ds_read_b128")
    assert sorted(tri950.phase_lanes(0)) == [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27]


@pytest.mark.parametrize("arch", LDS_ARCHS)
def test_every_phase_is_a_coset_of_the_phase_subspace(arch):
    for op in lds_model(arch).ops.values():
        k = op.phase_subspace()
        span = {f2.apply_columns(k, x) for x in range(1 << len(k))}
        assert len(span) == op.lanes_per_phase
        for p in range(op.num_phases):
            lanes = op.phase_lanes(p)
            assert sorted(lanes[0] ^ s for s in span) == lanes


def test_bank_counts_and_geometry():
    assert [lds_model(a).num_banks for a in LDS_ARCHS] == [32, 32, 64, 32, 32, 64]
    assert [lds_model(a).wave_size for a in LDS_ARCHS] == [64, 64, 64, 32, 32, 32]
    assert lds_model("gfx950").lds_bytes == 160 * 1024 and lds_model("gfx1250").lds_bytes == 320 * 1024
    assert lds_model("mi300").arch == "gfx942"
    with pytest.raises(LayoutError, match="not an LDS instruction"):
        lds_model("gfx942").op("ds_read_b64_tr_b16")  # gfx950 only


@pytest.mark.parametrize("arch", LDS_ARCHS)
def test_inferred_ops_name_their_assumption(arch):
    model = lds_model(arch)
    listed = {a.name for a in model.assumptions}
    for op in model.ops.values():
        if op.tag == "I":
            assert op.assumption in ASSUMPTIONS and op.assumption in listed
        else:
            assert op.tag in ("Q", "M") and op.assumption is None
    desc = model.describe()
    assert {a["name"] for a in desc["assumptions"]} == listed
    assert "subdword_same_dword" in listed


def test_assumption_override_changes_the_phases():
    base = lds_model("gfx942")
    alt = lds_model("gfx942", assume={"b32_phases_32banks": 64})
    assert base.op("ds_read_b32").num_phases == 2
    assert alt.op("ds_read_b32").num_phases == 1
    assert alt.op("ds_read_u16").num_phases == 1  # sub-dword ops follow b32
    assert alt.op("ds_read_b128").num_phases == 8
    rows = lds_model("gfx950", assume={"tr_b64_phases": [16, 32]}).op("ds_read_b64_tr_b16")
    assert rows.lanes_per_phase == 16 and rows.phase_of(16) == 1
    with pytest.raises(LayoutError, match="unknown assumption"):
        lds_model("gfx942", assume={"nope": 1})
    with pytest.raises(LayoutError, match="power of two"):
        lds_model("gfx942", assume={"b32_phases_32banks": 24})
    with pytest.raises(LayoutError, match="independent"):
        lds_model("gfx942", assume={"b32_phases_32banks": [32, 32]})
    with pytest.raises(LayoutError, match="mapping"):
        lds_model("gfx942", assume=[("b32_phases_32banks", 64)])
    assert "OVERRIDDEN to 64" in {a.name: a.statement for a in alt.assumptions}["b32_phases_32banks"]


def test_generic_model_is_tritons_rule():
    m = generic_lds_model(32, 32)
    assert m.op("ds_read_b32").lanes_per_phase == 32
    assert m.op("ds_read_b64").lanes_per_phase == 16
    assert m.op("ds_read_b128").lanes_per_phase == 8
    assert generic_lds_model(64, 64).op("ds_read_u8").lanes_per_phase == 64
    with pytest.raises(LayoutError):
        generic_lds_model(24, 64)
    with pytest.raises(LayoutError, match="lane bits"):
        generic_lds_model(32, 64, lane_tiles={"ds_read_b128": [0, 9]})
    with pytest.raises(LayoutError, match="unknown op"):
        generic_lds_model(32, 64, lane_tiles={"ds_read_b256": [0]})


def test_op_shapes():
    assert OP_SHAPES["ds_read_b64_tr_b16"].transpose_elems == 4
    assert OP_SHAPES["ds_read_b64_tr_b4"].transpose_elems == 16
    assert OP_SHAPES["ds_read_b96_tr_b6"].transpose_elems == 16
    assert OP_SHAPES["ds_read_b96"].words_per_lane == 3
    assert OP_SHAPES["ds_write_b16"].words_per_lane == 1
