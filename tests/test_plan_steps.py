"""Plan steps (linlayout.synth.steps): every kind round-trips through its certificate JSON, the parse
registry knows every registered op, and the one pairing rule of register steps."""

from __future__ import annotations

import json
from dataclasses import fields

import numpy as np
import pytest

from linlayout import LayoutError, LinearLayout
from linlayout.synth.emulator import run_isa
from linlayout.synth.plan import Plan
from linlayout.synth.steps import (Barrier, FusedDpp, Lane, LdsLoad, LdsStore, MatrixLoad, MatrixStore, Mov, Movmatrix,
                                   PermlaneSwap, PermSelect, Select, dword_pairs, known_ops, step_classes,
                                   step_from_json)

LANES = np.arange(64)
LANES32 = np.arange(32)
KEEP = (LANES % 4 == 0).astype(np.int64)


def _samples() -> list:
    """One step of every kind and form, with every optional field set somewhere."""
    return [
        Mov(dst=[2, 3], src=[0, 1]),
        Mov(dst=[2, 3], src=[0, 1], kind="v_mov"),
        Mov(dst=[4, 5], src=[0, 3], kind="v_perm_b32", operands=(0, 1), selector=0x07060100, dst_dword=2),
        Select(dst=[4, 5], a=[0, 1], b=[2, 3], cond=(LANES & 1).astype(np.int64)),
        Select(dst=[4, 5], a=[0, 1], b=[2, 3], cond=np.stack([LANES & 1, LANES >> 5 & 1])),
        PermSelect(dst=[4, 5], a=[0, 1], b=[2, 3], cond=(LANES & 2) >> 1, operands=(0, 1), sel0=0x05040100,
                   sel1=0x07060302, dst_dword=2),
        Lane("dpp:quad_perm:[1,0,3,2]", [2, 3], [0, 1], LANES ^ 1,
             {"ctrl": 0xB1, "row_mask": 0xF, "bank_mask": 0xF, "bound_ctrl": 0}),
        Lane("ds_swizzle:0x401f", [2, 3], [0, 1], LANES ^ 16, {"offset": 0x401F}),
        Lane("ds_bpermute", [2, 3], [0, 1], LANES ^ 33, {"addr": 4 * (LANES ^ 33), "offset": 0}),
        FusedDpp(form="v_cndmask_b32_dpp", dst=[4, 5], own=[0, 1], src=[2, 3], tmp=[6, 7], ctrl_name="row_shr:1",
                 src_lane=np.where(KEEP == 1, -1, LANES - 1), keep=KEEP,
                 isa={"ctrl": 0x111, "row_mask": 0xF, "bank_mask": 0xF, "bound_ctrl": 1}),
        FusedDpp(form="v_mov_b32_dpp", dst=[0, 1], own=[0, 1], src=[2, 3], tmp=[6, 7], ctrl_name="row_ror:4",
                 src_lane=np.where(LANES < 16, -1, (LANES & ~15) | ((LANES - 4) & 15)),
                 keep=(LANES < 16).astype(np.int64), isa={"ctrl": 0x124, "row_mask": 0xE, "bank_mask": 0xF}),
        PermlaneSwap(kind="permlane32_swap", vdst=[0, 1], src0=[2, 3]),
        PermlaneSwap(kind="permlane16_swap", vdst=[4, 5], src0=[6, 7]),
        LdsStore(addr=LANES * 4, width_bytes=4, src=[0, 1]),
        LdsStore(addr=np.stack([LANES * 2, 128 + LANES * 2]), width_bytes=2, src=[1], d16_hi=True),
        LdsStore(addr=LANES * 4, width_bytes=4, src=[0, 1], pair=[2, 3], pair_offset=64),
        LdsStore(addr=LANES * 8, width_bytes=8, src=[0, 1, 2, 3], pair=[4, 5, 6, 7], pair_offset=2, st64=True),
        LdsLoad(addr=LANES * 16, width_bytes=16, dst=list(range(8))),
        LdsLoad(addr=LANES * 4, width_bytes=4, dst=[0, 1], pair=[2, 3], pair_offset=1),
        LdsLoad(addr=LANES * 8, width_bytes=8, dst=[4, 5, 6, 7], transpose=16),
        LdsLoad(addr=LANES * 8, width_bytes=8, dst=list(range(8)), transpose=8),
        Barrier(),
    ]


def _nvidia_samples() -> list:
    """One step of every NVIDIA-only kind and form (32-lane tables)."""
    return [
        MatrixLoad(addr=LANES32 * 16, dst=list(range(8)), num=4),
        MatrixLoad(addr=np.stack([LANES32 * 16, 512 + LANES32 * 16]), dst=[4, 5, 6, 7], num=2, trans=True),
        MatrixStore(addr=(LANES32 % 8) * 32, src=[3], num=1),
        MatrixStore(addr=LANES32 * 16, src=list(range(8)), num=2, trans=True),
        Movmatrix(dst=[4, 5], src=[0, 1]),
        Movmatrix(dst=[4, 5, 6, 7], src=[0, 1, 2, 3]),
    ]


def _same(a, b) -> bool:
    """Field by field equality of two steps (per-lane tables as arrays, ISA dicts value by value)."""
    if type(a) is not type(b):
        return False
    for f in fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, dict):
            if x.keys() != y.keys() or not all(np.array_equal(x[k], y[k]) for k in x):
                return False
        elif isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not np.array_equal(x, y):
                return False
        elif (list(x) if isinstance(x, tuple) else x) != (list(y) if isinstance(y, tuple) else y):
            return False
    return True


@pytest.mark.parametrize("k", range(len(_samples() + _nvidia_samples())))
def test_every_step_kind_round_trips_through_its_certificate_json(k):
    step = (_samples() + _nvidia_samples())[k]
    items = json.loads(json.dumps(step.to_cert()))
    back, end = step_from_json(items, 0)
    assert end == len(items)
    assert _same(back, step), (step, back)
    assert json.dumps(back.to_cert()) == json.dumps(step.to_cert())


def test_a_whole_list_of_steps_parses_back_in_order():
    """Fused classes claim only their own items: a DPP lane step followed by a plain select, a
    select followed by a v_perm select, two stores in a row stay separate steps."""
    steps = _samples() + _nvidia_samples()
    items = json.loads(json.dumps([item for st in steps for item in st.to_cert()]))
    back, i = [], 0
    while i < len(items):
        st, i = step_from_json(items, i)
        back.append(st)
    assert len(back) == len(steps) and all(_same(a, b) for a, b in zip(back, steps))


def test_the_parse_registry_knows_every_registered_step_class():
    classes = step_classes()
    assert {type(s) for s in _samples() + _nvidia_samples()} == set(classes)
    assert set(known_ops()) == {c.cert_op for c in classes} == {
        "mov", "select", "lane", "permlane_swap", "lds_store", "lds_load", "barrier", "ldmatrix", "stmatrix",
        "movmatrix"}
    for op in known_ops():  # every op has one plain class, which reads any item no fused class claims
        assert sum(1 for c in classes if c.cert_op == op and not c.fused_forms) == 1, op
    with pytest.raises(LayoutError, match="unknown op 'wgmma'"):
        step_from_json([{"op": "wgmma"}], 0)
    with pytest.raises(LayoutError, match=r"plan step 0 \(select\) lacks the key 'cond'"):
        step_from_json([{"op": "select", "dst": [0], "a": [0], "b": [0]}], 0)


def test_the_pairing_rule():
    # 16-bit slots: two per dword; 64-bit slots: two dwords each
    assert dword_pairs([2, 3, 0, 1], [4, 5, 6, 7], 2, 1, "t") == [(1, 2), (0, 3)]
    assert dword_pairs([1], [3], 1, 2, "t") == [(2, 6), (3, 7)]
    with pytest.raises(LayoutError, match="changes the element's place"):
        dword_pairs([2, 3], [5, 4], 2, 1, "t")
    with pytest.raises(LayoutError, match="v1 would come from two registers"):
        dword_pairs([2, 3], [4, 7], 2, 1, "t")
    with pytest.raises(LayoutError, match=r"v1 is written in part \(slots \[0\] of 2\)"):
        dword_pairs([2], [4], 2, 1, "t")
    with pytest.raises(LayoutError, match="2 destination slots but 1 source slots"):
        dword_pairs([2, 3], [4], 2, 1, "t")


def test_the_emulator_applies_the_same_pairing_rule():
    """A select writing half a register is refused by the emulator as by the emitter."""
    lay = LinearLayout({"register": [[1]], "lane": [[2 << j] for j in range(6)], "warp": []}, [("dim0", 128)])
    half = Select(dst=[0], a=[0], b=[1], cond=LANES & 1)
    with pytest.raises(LayoutError, match="written in part"):
        run_isa(Plan("gfx942", 64, 1, 16, lay, lay, 2, 2, [half]))


@pytest.mark.parametrize("key,value", [("wave_size", "x"), ("num_warps", [4]), ("slots_in", None),
                                       ("cost", "cheap")])
def test_a_malformed_certificate_value_is_one_layout_error(key, value):
    """A certificate field that is not a number is a LayoutError naming it, not a bare ValueError or
    TypeError from int()/float()."""
    from linlayout.synth.convert import plan_conversion

    layout = LinearLayout.from_bases({"register": [[1, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16],
                                                                      [2, 0]]}, ["dim0", "dim1"])
    cert = plan_conversion(layout, layout, "gfx942", 16).to_certificate()
    assert Plan.from_certificate(json.loads(json.dumps(cert))).wave_size == 64
    cert[key] = value
    with pytest.raises(LayoutError, match="plan certificate has a malformed value"):
        Plan.from_certificate(cert)
