"""Plan steps (linlayout.synth.steps): every kind round-trips through its certificate JSON, the parse
registry knows every registered op, and the one pairing rule of register steps."""

from __future__ import annotations

import json
import re
from dataclasses import fields

import numpy as np
import pytest

from linlayout import LayoutError, LinearLayout
from linlayout.synth.emulator import run_isa
from linlayout.synth.plan import Plan
from linlayout.synth.steps import (Barrier, FusedDpp, Lane, LdsLoad, LdsStore, MatrixLoad, MatrixStore, Mov, Movmatrix,
                                   Movrels,
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


def _wave32_samples() -> list:
    """One step of every kind only the wave32 AMD targets have (beyond the lane kinds above)."""
    return [Movrels(dst=[4, 5], src=[0, 1], shift=(0, 2))]


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


@pytest.mark.parametrize("k", range(len(_samples() + _nvidia_samples() + _wave32_samples())))
def test_every_step_kind_round_trips_through_its_certificate_json(k):
    step = (_samples() + _nvidia_samples() + _wave32_samples())[k]
    items = json.loads(json.dumps(step.to_cert()))
    back, end = step_from_json(items, 0)
    assert end == len(items)
    assert _same(back, step), (step, back)
    assert json.dumps(back.to_cert()) == json.dumps(step.to_cert())


def test_a_whole_list_of_steps_parses_back_in_order():
    """Fused classes claim only their own items: a DPP lane step followed by a plain select, a
    select followed by a v_perm select, two stores in a row stay separate steps."""
    steps = _samples() + _nvidia_samples() + _wave32_samples()
    items = json.loads(json.dumps([item for st in steps for item in st.to_cert()]))
    back, i = [], 0
    while i < len(items):
        st, i = step_from_json(items, i)
        back.append(st)
    assert len(back) == len(steps) and all(_same(a, b) for a, b in zip(back, steps))


def test_the_parse_registry_knows_every_registered_step_class():
    classes = step_classes()
    assert {type(s) for s in _samples() + _nvidia_samples() + _wave32_samples()} == set(classes)
    assert set(known_ops()) == {c.cert_op for c in classes} == {
        "mov", "select", "lane", "permlane_swap", "lds_store", "lds_load", "barrier", "ldmatrix", "stmatrix",
        "movmatrix", "movrels"}
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


def _lds_certificate() -> dict:
    """The certificate of a one-warp sm_90 shared-memory round trip (16 stores, a barrier, 4 loads, a mov)."""
    from linlayout.encodings import blocked
    from linlayout.synth.convert import plan_conversion

    src, dst = blocked((1, 4), (4, 8), (1, 1), (1, 0), (16, 32)), blocked((4, 1), (8, 4), (1, 1), (0, 1), (16, 32))
    return json.loads(plan_conversion(src, dst, "sm_90", 16, strategy="lds").dumps())


def _edit(cert: dict, key: str, value, op: str | None = None) -> dict:
    """``cert`` with ``key`` set to ``value``: of the first step of ``op`` (its ``isa`` for ``bytes``), or the top."""
    out = json.loads(json.dumps(cert))
    if op is None:
        out[key] = value
    else:
        step = next(s for s in out["steps"] if s["op"] == op)
        (step["isa"] if key == "bytes" else step)[key] = value
    return out


@pytest.mark.parametrize("key, value, op, match", [
    ("element_bits", 4, None, "plan certificate has element_bits 4; plans move elements of 8, 16, 32, 64 bits"),
    ("src", [10 ** 12], "lds_store", "plan certificate names slot 1000000000000; slots are 0 to 65535"),
    ("slots_in", 0, None, "plan certificate has slots_in 0; it must be 1 to 65536"),
    ("slots_out", -1, None, "plan certificate has slots_out -1; it must be 1 to 65536"),
    ("slots_in", 10 ** 6, None, "plan certificate has slots_in 1000000; it must be 1 to 65536"),
    ("lds_bytes", 10 ** 13, None, "plan certificate has lds_bytes 10000000000000; sm_90 has 0 to 232448"),
    ("lds_bytes", -5, None, "plan certificate has lds_bytes -5"),
    ("wave_size", 48, None, "plan certificate has wave_size 48; sm_90 runs waves of 32 lanes"),
    ("wave_size", 64, None, "plan certificate has wave_size 64; sm_90 runs waves of 32 lanes"),
    ("addr", [0] * 5, "lds_store", r"plan step 0 \(lds_store\): addr has shape \[5\]; a per-lane table is \[32\] "
                                   r"or \[1\]\[32\]"),
    ("bytes", 3, "lds_store", "plan step 0: an LDS access moves 1, 2, 4, 8, 16 bytes per lane, got 3"),
    ("bytes", 32, "lds_load", "plan step 17: an LDS access moves 1, 2, 4, 8, 16 bytes per lane, got 32"),
])
def test_a_certificate_the_hardware_cannot_run_is_one_layout_error(key, value, op, match):
    """Values no plan can have are refused when the certificate is read: before, an element size of 4 and a
    3-byte store verified (ok False or even True), a huge slot number or lds_bytes was a MemoryError in the
    emulator, and a short address table a numpy broadcast error."""
    cert = _lds_certificate()
    assert Plan.from_certificate(cert).lds_bytes == 1024
    with pytest.raises(LayoutError, match=match):
        Plan.from_certificate(_edit(cert, key, value, op))


def test_fused_dpp_steps_run_on_wave32():
    """Both fused DPP forms on a gfx1100 wave (32 lanes, two 16-lane rows): v_cndmask_b32_dpp row_shr:1
    keeps lanes 0 and 16, the others take src from lane l - 1; v_mov_b32_dpp row_ror:4 with row_mask 0x2
    writes row 1 only (lane l takes lane 16 + (l - 4) % 16) and keeps row 0."""
    lanes = np.arange(32)
    lay = LinearLayout({"register": [[1], [2]], "lane": [[4 << j] for j in range(5)]}, [("dim0", 128)])
    keep = (lanes % 16 == 0).astype(np.int64)
    shr = FusedDpp(form="v_cndmask_b32_dpp", dst=[2], own=[0], src=[1], tmp=[3], ctrl_name="row_shr:1",
                   src_lane=np.where(keep == 1, -1, lanes - 1), keep=keep,
                   isa={"ctrl": 0x111, "row_mask": 0xF, "bank_mask": 0xF, "bound_ctrl": 1})
    ror = FusedDpp(form="v_mov_b32_dpp", dst=[0], own=[0], src=[1], tmp=[3], ctrl_name="row_ror:4",
                   src_lane=np.where(lanes < 16, -1, 16 + (lanes - 4) % 16), keep=(lanes < 16).astype(np.int64),
                   isa={"ctrl": 0x124, "row_mask": 0x2, "bank_mask": 0xF})
    before = run_isa(Plan("gfx1100", 32, 1, 32, lay, lay, 4, 4, []))[:, 0]  # [dword, lane, byte]
    after = run_isa(Plan("gfx1100", 32, 1, 32, lay, lay, 4, 4, [shr, ror]))[:, 0]
    assert np.array_equal(after[2], np.where(keep[:, None] == 1, before[0], before[1][lanes - 1]))
    assert np.array_equal(after[0], np.where(lanes[:, None] < 16, before[0], before[1][16 + (lanes - 4) % 16]))


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


@pytest.mark.parametrize("num_warps", [1, 4, 0, -2])
def test_a_certificate_num_warps_other_than_the_layouts_is_one_layout_error(num_warps):
    """num_warps must be the layouts' warp count (here 2): 1 or 4 once verified as a correct plan (the emulator
    repeats or truncates the warps), 0 and negatives broke a numpy reshape."""
    from linlayout.synth.convert import plan_conversion

    layout = LinearLayout.from_bases({"register": [[1]], "lane": [[2 << k] for k in range(6)], "warp": [[128]]},
                                     ["dim0"])
    cert = json.loads(plan_conversion(layout, layout, "gfx942", 32).dumps())
    assert Plan.from_certificate(cert).num_warps == 2
    cert["num_warps"] = num_warps
    with pytest.raises(LayoutError, match=f"plan certificate has num_warps {num_warps} but its src has 2 warps"):
        Plan.from_certificate(cert)


def test_steps_are_frozen():
    """A plan's counts and hazard waits are kept per list of step objects, so a step never
    changes once made: every registered class is a frozen dataclass, and ``register`` refuses
    one that is not."""
    import dataclasses

    import pytest

    from linlayout.synth.steps.barrier import Barrier
    from linlayout.synth.steps.base import Step, register, step_classes

    assert step_classes() and all(c.__dataclass_params__.frozen for c in step_classes())
    with pytest.raises(dataclasses.FrozenInstanceError):
        Barrier().scope = "warp"

    @dataclasses.dataclass
    class Loose(Step):
        cert_op = "loose"

    with pytest.raises(TypeError, match="frozen dataclass"):
        register(Loose)


def _paired_plans() -> dict[str, Plan]:
    """Real plans with two-address LDS accesses, of gfx942 cases of the baseline: fp32 mfma32 -> dotA(kw4)
    [FA P] (4 warps) loads with ``ds_read2st64_b32`` (fp32 mfma16T -> mfma16 did until its plan took a
    swizzled ordered layout, session 21), fp32 mfma32 -> blocked stores with ``ds_write2_b32``,
    fp16 blocked -> dotA(kw4) stores with ``ds_write2_b64`` (fp16 mfma32 -> mfma16 did until the store tuples'
    kept dwords made a round trip of more instructions and fewer cycles its plan, session 24); and of the corpus:
    fp16 mfma16T -> mfma32 (1 warp) loads with ``ds_read2_b64``."""
    from linlayout.synth.convert import plan_conversion

    from repo_data import baseline_cases, family_corpus

    cases = {"read2": ("mfma32->dotA(kw4) [FA P]", "fp32", "baseline"),
             "write2": ("mfma32->blocked", "fp32", "baseline"),
             "read2_b64": ("mfma16T->mfma32", "fp16", "corpus"), "write2_b64": ("blocked->dotA(kw4)", "fp16", "baseline")}
    out = {}
    for key, (name, dtype, where) in cases.items():
        pool = baseline_cases() if where == "baseline" else family_corpus("amd")["cases"]
        c = next(c for c in pool if (c["name"], c["arch"], c["dtype"]) == (name, "gfx942", dtype))
        out[key] = plan_conversion(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), "gfx942",
                                   32 if dtype == "fp32" else 16)
    return out


def test_the_two_address_certificates_of_real_plans_round_trip():
    """Certificate -> plan -> certificate gives the same steps (the fused second accesses read back
    as pairs) and the plan read back verifies."""
    from linlayout.synth.emulator import verify

    for name, plan in _paired_plans().items():
        cert = json.loads(plan.dumps())
        fused = {s["fused"] for s in cert["steps"] if "fused" in s}
        assert fused == {"read2": {"ds_read2st64_b32"}, "write2": {"ds_write2_b32"}, "read2_b64": {"ds_read2_b64"},
                         "write2_b64": {"ds_write2_b64"}}[name]
        back = Plan.from_certificate(cert)
        assert len(back.steps) == len(plan.steps) and all(_same(a, b) for a, b in zip(back.steps, plan.steps))
        assert back.to_certificate() == plan.to_certificate() and verify(back).ok


def _stray(cert: dict, k: int, **item) -> dict:
    """``cert`` with item ``k`` of its steps updated by ``item`` (``fused=None``: the key removed)."""
    out = json.loads(json.dumps(cert))
    out["steps"][k].update(item)
    if item.get("fused", "") is None:
        del out["steps"][k]["fused"]
    return out


@pytest.mark.parametrize("case, message", [
    # item 9 is the second access of the ds_read2st64_b32 at item 8; item 7 the last store
    ("transpose name", "plan step 9 (lds_load) has 'fused': 'ds_read_b64_tr_b16'; fused to the lds_load at item 8 "
                       "(4 bytes per lane) it is the second access of a ds_read2st64_b32, which 'fused' names"),
    ("true", "plan step 9 (lds_load) has 'fused': True; fused to the lds_load at item 8 (4 bytes per lane) it is "
             "the second access of a ds_read2st64_b32, which 'fused' names"),
    ("false", "plan step 9 (lds_load) has 'fused': False; fused to the lds_load at item 8 (4 bytes per lane) it is "
              "the second access of a ds_read2st64_b32, which 'fused' names"),
    ("other width", "plan step 9 (lds_load): the second access of the ds_read2st64_b32 at item 8 moves 4 bytes "
                    "per lane, got 8 (isa 'bytes')"),
    ("after another op", "plan step 8 (lds_load) has 'fused': 'ds_read2st64_b32' but is part of no instruction "
                         "before it (the lds_store at item 7 takes no fused lds_load after it)"),
    ("first item", "plan step 0 (lds_store) has 'fused': 'ds_write2_b128' but is part of no instruction before "
                   "it (it is the first item)"),
    ("third access", "plan step 10 (lds_load) has 'fused': 'ds_read2st64_b32' but is part of no instruction "
                     "before it (the lds_load at item 9 takes no fused lds_load after it)"),
    ("last item", "plan step 40 (mov) has 'fused': 'ds_read2st64_b32' but is part of no instruction before it "
                  "(the lds_load at item 39 takes no fused mov after it)"),
])
def test_a_stray_fused_item_is_refused_when_the_certificate_is_read(case, message):
    """Before, any truthy ``fused`` made an lds item the second access of the one before it (a
    transpose load's name, ``true``), and a ``fused`` anywhere else was ignored: the certificate was
    read as another plan (a stray pair verified and emitted)."""
    cert = json.loads(_paired_plans()["read2"].dumps())
    assert [(s["op"], s.get("fused")) for s in cert["steps"][7:11]] == [
        ("lds_store", None), ("lds_load", None), ("lds_load", "ds_read2st64_b32"), ("lds_load", None)]
    assert cert["steps"][40]["op"] == "mov" and len(cert["steps"]) == 41
    stray = {"transpose name": (9, {"fused": "ds_read_b64_tr_b16"}), "true": (9, {"fused": True}),
             "false": (9, {"fused": False}), "other width": (9, {"isa": {"bytes": 8, "offset1": 1, "st64": True}}),
             "after another op": (8, {"fused": "ds_read2st64_b32"}), "first item": (0, {"fused": "ds_write2_b128"}),
             "third access": (10, {"fused": "ds_read2st64_b32"}), "last item": (40, {"fused": "ds_read2st64_b32"})}
    k, item = stray[case]
    with pytest.raises(LayoutError, match=f"^{re.escape(message)}$"):
        Plan.from_certificate(_stray(cert, k, **item))


def test_a_fused_select_after_a_move_other_than_dpp_is_refused():
    """The select of a fused DPP move names its form; after a ``ds_bpermute`` lane item it was read as a
    DPP control named by the part of the kind after ':' (an IndexError for ``ds_bpermute``)."""
    lane = Lane("ds_bpermute", [2], [0], LANES ^ 33, {"addr": 4 * (LANES ^ 33), "offset": 0}).to_cert()
    sel = Select(dst=[4], a=[2], b=[0], cond=KEEP).to_cert()[0] | {"fused": "v_mov_b32_dpp"}
    with pytest.raises(LayoutError, match=r"plan step 1 \(select\) has 'fused': 'v_mov_b32_dpp' but the lane move at "
                                          r"item 0 is 'ds_bpermute', not a DPP move"):
        step_from_json(json.loads(json.dumps(lane + [sel])), 0)


def test_a_transpose_load_element_of_another_op_is_refused():
    """Every later item of a transpose load is an ``lds_load`` fused to it by its name; an ``lds_store``
    carrying the name was read as one of its elements."""
    items = json.loads(json.dumps(LdsLoad(addr=LANES * 8, width_bytes=8, dst=[4, 5, 6, 7], transpose=16).to_cert()))
    items[2]["op"] = "lds_store"
    with pytest.raises(LayoutError, match=r"plan step 2: element 2 of the ds_read_b64_tr_b16 at item 0 is an lds_load "
                                          r"with 'fused': 'ds_read_b64_tr_b16', got op 'lds_store' with 'fused': "
                                          r"'ds_read_b64_tr_b16'"):
        step_from_json(items, 0)


def test_a_two_address_access_on_nvidia_is_refused():
    cert = _lds_certificate()
    assert [s["op"] for s in cert["steps"][17:19]] == ["lds_load", "lds_load"]
    cert["steps"][18].update(fused="ds_read2_b128", isa={"bytes": 16, "offset1": 1})
    with pytest.raises(LayoutError, match=r"plan step 18 \(lds_load\) has 'fused': 'ds_read2_b128' but sm_90 has no "
                                          r"two-address LDS access"):
        Plan.from_certificate(cert)


def test_an_item_after_an_lds_access_that_is_no_object_is_one_layout_error():
    """The look for a fused second access read the next item as a dict (an AttributeError for a number)."""
    cert = json.loads(_paired_plans()["read2"].dumps())
    cert["steps"][9] = 5
    with pytest.raises(LayoutError, match=r"^plan step 9 is not an object with an 'op'$"):
        Plan.from_certificate(cert)


@pytest.mark.parametrize("op", ["lds_load", "mov", "barrier"])
def test_a_dpp_move_fuses_only_with_a_select(op):
    """A ``lane`` item of a DPP move starts a fused DPP move only when the next item is a ``select``
    carrying the fused form (docs/contract.md section 4); another op carrying that ``fused`` was
    read as the fused select, whatever it was.  Now the lane item is a plain move and the next
    item's ``fused`` is refused as belonging to no instruction."""
    lanes = np.arange(64)
    lane = json.loads(json.dumps(Lane("dpp:row_shr:1", [2], [0], lanes, {"ctrl": 0x111}).to_cert()))
    select = json.loads(json.dumps(Select(dst=[4], a=[2], b=[0], cond=lanes % 2).to_cert()))[0]
    fused = dict(select, fused="v_mov_b32_dpp")
    step, after = step_from_json(lane + [fused], 0)
    assert type(step) is FusedDpp and after == 2
    step, after = step_from_json(lane + [5], 0)  # (a next item that is no object)
    assert type(step) is Lane and after == 1
    items = lane + [dict(fused, op=op)]
    step, after = step_from_json(items, 0)
    assert type(step) is Lane and after == 1
    with pytest.raises(LayoutError, match=rf"^plan step 1 \({op}\) has 'fused': 'v_mov_b32_dpp' but is part of no "
                                          rf"instruction before it \(the lane at item 0 takes no fused {op} after it\)$"):
        step_from_json(items, 1)
