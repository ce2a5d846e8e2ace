"""A plan certificate is user input: what no run, price or emission of it can accept is refused when it
is read (``Plan.from_certificate``), as one LayoutError line naming the item, on every target family."""

from __future__ import annotations

import functools
import json
import random
import re
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from linlayout import LayoutError, LinearLayout
from linlayout.hw.lds import access_alignment, misaligned_address
from linlayout.synth.convert import plan_conversion
from linlayout.synth.cost import cost_model, lds_conflict_degree, plan_cost
from linlayout.synth.emulator import run_isa
from linlayout.synth.plan import Plan
from linlayout.synth.steps import LdsStore

from test_convert_lds_vectors import ACC, DOT_A  # flash-attention P: the accumulator -> dot operand A

# a transpose: 8 x 32 elements, 2 warps; lanes run along dim1 in src, along dim0 in dst
_SRC = LinearLayout({"register": [[1, 0], [2, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [4, 0]],
                     "warp": [[0, 16]]}, [("dim0", 8), ("dim1", 32)])
_DST = LinearLayout({"register": [[0, 1], [0, 2]], "lane": [[1, 0], [2, 0], [4, 0], [0, 4], [0, 8]],
                     "warp": [[0, 16]]}, [("dim0", 8), ("dim1", 32)])
_LANES64 = LinearLayout({"register": [[1, 0], [2, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]],
                         "warp": [[0, 32]]}, [("dim0", 8), ("dim1", 64)])
_LANES64_T = LinearLayout({"register": [[0, 1], [0, 2]], "lane": [[1, 0], [2, 0], [4, 0], [0, 4], [0, 8], [0, 16]],
                           "warp": [[0, 32]]}, [("dim0", 8), ("dim1", 64)])


def _lds_certificate(arch: str, element_bits: int = 16) -> dict:
    """The JSON certificate of a planned LDS round trip on ``arch`` (a wave64 transpose on CDNA)."""
    src, dst = (_LANES64, _LANES64_T) if arch.startswith("gfx9") else (_SRC, _DST)
    return json.loads(plan_conversion(src, dst, arch, element_bits, strategy="lds").dumps())


def _first(cert: dict, op: str) -> tuple[int, dict]:
    return next((k, item) for k, item in enumerate(cert["steps"]) if item["op"] == op)


# ---------------------------------------------------------------------- 1. alignment
@pytest.mark.parametrize("arch", ["gfx942", "gfx950", "gfx1100", "gfx1250", "sm_80", "sm_90"])
def test_a_misaligned_lds_address_is_refused_when_read(arch):
    """Lane 5 of warp 1 of the first LDS store moved by half its width (no longer a multiple of it) is
    refused when read; before, the plan was read and only pricing it raised the bank model's RuntimeError."""
    cert = _lds_certificate(arch)
    assert plan_cost(Plan.from_certificate(cert), cost_model(arch))[0] > 0
    k, item = _first(cert, "lds_store")
    width_bytes = item["isa"]["bytes"]
    assert width_bytes >= 2
    addr = np.array(item["addr"])
    addr[1, 5] += width_bytes // 2
    item["addr"] = addr.tolist()
    want = (f"plan step {k} (lds_store): lane 5 of warp 1 addresses byte {addr[1, 5]}, not a multiple of "
            f"{width_bytes} (a {width_bytes}-byte access)")
    with pytest.raises(LayoutError, match=f"^{re.escape(want)}$"):
        Plan.from_certificate(cert)


def test_a_misaligned_ldmatrix_row_is_refused_when_read():
    """Row 3 of the first ldmatrix moved by 4 bytes (its elem_addr moved with it) is refused when read."""
    plan = Plan.from_certificate(_lds_certificate("sm_80", 32))
    k, step = next((k, st) for k, st in enumerate(plan.steps) if st.op == "ldmatrix")
    lane_addr = np.array(step.addr)
    lane_addr[0, 3] += 4
    plan.steps[k] = replace(step, addr=lane_addr)
    cert = json.loads(plan.dumps())
    k = [item["op"] for item in cert["steps"]].index("ldmatrix")
    want = (f"plan step {k} (ldmatrix): a row address: lane 3 of warp 0 addresses byte {lane_addr[0, 3]}, not a "
            f"multiple of 16 (a 16-byte access)")
    with pytest.raises(LayoutError, match=f"^{re.escape(want)}$"):
        Plan.from_certificate(cert)


@pytest.mark.parametrize("width_bytes", [1, 2, 4, 8, 16])
def test_the_reader_the_emulator_and_the_bank_model_share_one_alignment_rule(width_bytes):
    """For addresses shifted by every byte below the width: the reader refuses the access exactly when the
    emulator does (with the same phrase) and the bank model does (a RuntimeError for a planner's plan)."""
    lanes = np.arange(64)
    lay = LinearLayout({"register": [[1], [2], [4], [8]], "lane": [[16 << j] for j in range(6)], "warp": []},
                       [("dim0", 1024)])
    for shift in range(width_bytes):
        addr = lanes * 16 + shift * (lanes % 3 == 1)
        slots = list(range(width_bytes))  # 8-bit elements: one a byte
        plan = Plan("gfx942", 64, 1, 8, lay, lay, 16, 16, [LdsStore(addr=addr, width_bytes=width_bytes, src=slots)],
                    lds_bytes=2048)
        phrase = misaligned_address(addr, width_bytes)
        assert bool(phrase) == (shift % access_alignment(width_bytes) != 0)
        if not phrase:
            Plan.from_certificate(json.loads(plan.dumps()))
            run_isa(plan)
            lds_conflict_degree("gfx942", True, width_bytes, addr, 8)
            continue
        assert phrase == f"lane 1 addresses byte {16 + shift}, not a multiple of {width_bytes} " \
                         f"(a {width_bytes}-byte access) (21 lanes in all)"
        with pytest.raises(LayoutError, match=f"^plan step 0 \\(lds_store\\): {re.escape(phrase)}$"):
            Plan.from_certificate(json.loads(plan.dumps()))
        with pytest.raises(RuntimeError, match=re.escape(phrase)):
            run_isa(plan)
        with pytest.raises(RuntimeError, match="not aligned"):
            lds_conflict_degree("gfx942", True, width_bytes, addr, 8)


# ---------------------------------------------------------------------- 2. transpose loads
def test_a_transpose_load_the_target_lacks_is_refused_when_read():
    """gfx950's transpose-reading plan of FA's P operand, its certificate relabelled gfx942: refused when
    read with ``missing_transpose_load``'s line; before, it was read and refused only by verification
    (and priced, a LayoutError from the bank model)."""
    cert = json.loads(plan_conversion(ACC, DOT_A, "gfx950", 16).dumps())
    k = next(k for k, item in enumerate(cert["steps"]) if "transpose" in item.get("isa", {}))
    assert cert["steps"][k]["isa"]["transpose"] == "ds_read_b64_tr_b16"
    Plan.from_certificate(cert)
    cert["arch"] = "gfx942"
    want = (f"plan step {k} (lds_load): gfx942 has no transpose load of 16-bit elements moving 8 bytes per lane; "
            f"ds_read_b64_tr_b16 is gfx950's")
    with pytest.raises(LayoutError, match=f"^{re.escape(want)}$"):
        Plan.from_certificate(cert)


def _transpose_certificate(arch: str) -> dict:
    """A planned certificate with transpose loads: gfx950's FA P operand (one warp, 16-bit) or the
    gfx1250 fp8 corpus case of two warps that reads ``ds_load_tr8_b64``."""
    if arch == "gfx950":
        return json.loads(plan_conversion(ACC, DOT_A, "gfx950", 16).dumps())
    from test_transpose_loads import _corpus_case, _corpus_plan
    return json.loads(_corpus_plan(_corpus_case("wmma3.16x64T->wmma3.16x64", "fp8", (128, 32), 2)).dumps())


@pytest.mark.parametrize("arch, name, warp", [("gfx950", "ds_read_b64_tr_b16", 0), ("gfx1250", "ds_load_tr8_b64", 1)])
def test_a_transpose_load_element_at_another_address_is_refused_when_read(arch, name, warp):
    """The certificate unchanged reads, verifies and round-trips; element 2's ``addr`` of one lane moved
    by 4 bytes is refused naming the item and the lane (before: read, that ``addr`` ignored, since the
    instruction's own lane map decides where each element is read)."""
    from linlayout.synth.emulator import verify
    from linlayout.synth.steps.lds import transpose_element_addresses
    cert = _transpose_certificate(arch)
    plan = Plan.from_certificate(cert)
    assert verify(plan).ok and plan.to_certificate() == cert
    k = next(k for k, item in enumerate(cert["steps"]) if item.get("isa", {}).get("transpose") == name)
    item = cert["steps"][k + 2]
    assert item["fused"] == name
    addr = np.array(item["addr"])
    load = next(st for st in plan.steps if st.op == "lds_load" and st.transpose).transpose_load
    read = transpose_element_addresses(cert["steps"][k]["isa"]["lane_addr"], load)[2]
    assert np.array_equal(addr, read) and addr.shape[0] == warp + 1
    addr[warp, 3] += 4
    item["addr"] = addr.tolist()
    want = (f"plan step {k + 2} (lds_load): element 2 of the {name} at item {k} reads byte {read[warp, 3]} in "
            f"lane 3 of warp {warp}, the certificate says {read[warp, 3] + 4}")
    with pytest.raises(LayoutError, match=f"^{re.escape(want)}$"):
        Plan.from_certificate(cert)
    del item["addr"]
    with pytest.raises(LayoutError, match=rf"^plan step {k + 2} \(lds_load\) lacks the key 'addr'$"):
        Plan.from_certificate(cert)


# ---------------------------------------------------------------------- 3. the rest of the reader
def _edited(cert: dict, op: str, **fields) -> tuple[int, dict]:
    """``cert`` (a copy) with ``fields`` set on its first item of ``op`` (``isa_<key>``: in its isa); the item's index."""
    out = json.loads(json.dumps(cert))
    k, item = _first(out, op)
    for key, value in fields.items():
        if key.startswith("isa_"):
            item["isa"][key[4:]] = value
        else:
            item[key] = value
    return k, out


@pytest.mark.parametrize("arch, op, fields, match", [
    # before: read, then a RuntimeError (the bank model) when priced
    ("sm_90", "lds_store", {"isa_bytes": 1}, "a 1-byte access moves less than one 16-bit element"),
    # before: read, then an IndexError in the emulator (the plan's first store is a ds_write_b64)
    ("gfx942", "lds_store", {"src": []}, "a 8-byte access moves 4 16-bit elements, 0 slots listed"),
    # before: read, verified as a refusal only
    ("gfx1100", "lds_load", {"addr": [[4096] * 32] * 2}, "it accesses bytes 4096 to 4097, outside the plan's 512 "
                                                          r"\(lds_bytes\)"),
    # before: an AttributeError
    ("gfx942", "lds_store", {"isa": 7}, "'isa' must be an object of the instruction's parameters, got 7"),
    # before: a KeyError when priced
    ("gfx942", "mov", {"kind": "v_cndmask_b32_dpp"}, "kind 'v_cndmask_b32_dpp' must be one of rename, v_mov, "
                                                     "v_perm_b32, mov, prmt"),
    ("gfx942", "mov", {"kind": "mov"}, "gfx942 has no mov instruction"),
])
def test_a_step_no_run_can_accept_is_refused_when_read(arch, op, fields, match):
    k, cert = _edited(_lds_certificate(arch), op, **fields)
    with pytest.raises(LayoutError, match=rf"^plan step {k} \({op}\): {match}$"):
        Plan.from_certificate(cert)


def test_registers_and_kinds_of_lane_and_permute_steps_are_checked_when_read():
    """A per-lane v_perm_b32 writing another register than its slots' (an IndexError in the emulator before), a
    permlane swap on gfx942 and a ds_swizzle on sm_90 (refused only by verification before)."""
    cert = json.loads(plan_conversion(_LANES64, _LANES64_T, "gfx942", 8).dumps())
    k, item = next((k, item) for k, item in enumerate(cert["steps"]) if item.get("fused") == "v_perm_b32")
    dword = item["isa"]["vdst"]
    item["isa"]["vdst"] = 1000
    with pytest.raises(LayoutError, match=rf"^plan step {k} \(select\): it writes v1000 but its destination slots "
                                          rf"are in v{dword}$"):
        Plan.from_certificate(cert)
    swap = {"op": "permlane_swap", "kind": "permlane32_swap", "vdst": [0], "src0": [1]}
    cert = _lds_certificate("gfx942", 32)
    cert["steps"].insert(0, swap)
    with pytest.raises(LayoutError, match=r"^plan step 0 \(permlane_swap\): gfx942 has no permlane32_swap "
                                          r"instruction$"):
        Plan.from_certificate(cert)
    cert = _lds_certificate("sm_90", 32)
    cert["steps"].insert(0, {"op": "lane", "kind": "ds_swizzle:0x401f", "dst": [0], "src": [1],
                             "src_lane": list(range(32)), "isa": {"offset": 0x401F}})
    with pytest.raises(LayoutError, match=r"^plan step 0 \(lane\): sm_90 has no ds_swizzle:0x401f instruction$"):
        Plan.from_certificate(cert)


@pytest.mark.parametrize("key, value, match", [
    ("slots_in", 3, "plan certificate has slots_in 3 but its src has 4 registers"),
    ("overhead_estimate", 0, "plan certificate has overhead_estimate 0; it must map names to numbers"),
    ("lower_bound", {"cost": "low"}, r"plan certificate has lower_bound \{'cost': 'low'\}; it must map names to "
                                     "numbers"),
])
def test_plan_fields_no_run_can_accept_are_refused_when_read(key, value, match):
    """Before: a numpy broadcast error in the certificate run (slots_in), an AttributeError when priced."""
    cert = _lds_certificate("gfx1100")
    cert[key] = value
    with pytest.raises(LayoutError, match=f"^{match}$"):
        Plan.from_certificate(cert)


# ---------------------------------------------------------------------- the fuzz
@functools.cache
def _fuzz_certificates() -> tuple[str, ...]:
    """Planned certificates (JSON text) of every family: LDS round trips, lane moves, byte permutes,
    transpose loads, ldmatrix, two-address accesses."""
    from linlayout.encodings import blocked
    from linlayout.encodings.nvidia import NvidiaMma

    plans = [plan_conversion(_LANES64, _LANES64_T, arch, bits, strategy=strategy) for arch in ("gfx942", "gfx950")
             for bits in (8, 16) for strategy in ("auto", "lds")]
    plans.append(plan_conversion(ACC, DOT_A, "gfx950", 16))  # transpose loads
    plans.append(plan_conversion(ACC, DOT_A, "gfx942", 32))  # ds_read2 / ds_write2
    plans += [plan_conversion(_SRC, _DST, arch, bits, strategy=strategy) for arch in ("gfx1100", "gfx1250", "sm_80")
              for bits in (16, 32) for strategy in ("auto", "lds")]
    mma = NvidiaMma(2, (1, 1), (16, 8))
    plans += [plan_conversion(mma.to_linear_layout((16, 32)), blocked((1, 4), (4, 8), (1, 1), (1, 0), (16, 32)),
                              "sm_90", 32, strategy="lds"),
              plan_conversion(mma.to_linear_layout((16, 32)), mma.dot_operand_layout(0, 4, (16, 32)), "sm_90", 8)]
    return tuple(dict.fromkeys(p.dumps() for p in plans))


_VALUES = (0, 1, 2, 3, -1, 7, 64, 1000, 1 << 20, 1 << 40, "x", None, [], [1], True, 0.5, {}, "dpp:quad_perm:[1,0,3,2]",
           "ds_swizzle:0x401f", "ds_bpermute", "shfl.sync.idx", "permlane32_swap", "ds_read_b64_tr_b16",
           "ds_read2_b32", "v_cndmask_b32_dpp", "v_perm_b32", "prmt", "selp", "v_mov", "mov")


def _mutate(cert: dict, rng: random.Random) -> dict:
    """``cert`` with one change: a top-level field, an item duplicated, dropped or a barrier inserted, or one
    field (or ``isa`` field, or one entry of a list) of one item set to another value."""
    steps = cert["steps"]
    r = rng.random()
    if r < 0.15 or not steps:
        key = rng.choice(sorted(cert))
        cert[key] = rng.choice(_VALUES)
        return cert
    i = rng.randrange(len(steps))
    if r < 0.25:
        steps.insert(rng.randrange(len(steps)), json.loads(json.dumps(rng.choice(steps))))
        return cert
    if r < 0.3:
        steps.pop(i)
        return cert
    if r < 0.35:
        steps.insert(i, {"op": "barrier", **({"scope": "warp"} if rng.random() < 0.5 else {})})
        return cert
    item = steps[i]
    isa = item.get("isa") if isinstance(item.get("isa"), dict) else {}
    where, key = rng.choice([(item, k) for k in sorted(item)] + [(isa, k) for k in sorted(isa)])
    value = where[key]
    flat = np.asarray(value) if isinstance(value, list) and value else None
    if flat is not None and flat.dtype.kind == "i" and rng.random() < 0.7:
        a = flat.reshape(-1)
        j = rng.randrange(a.size)
        a[j] = rng.choice([a[j] + 1, a[j] + 2, a[j] + 4, a[j] - 1, -a[j] - 1, a[j] + 65536, 2 * a[j] + 8, 0])
        where[key] = a.reshape(flat.shape).tolist()
    elif isinstance(value, int) and not isinstance(value, bool) and rng.random() < 0.6:
        where[key] = rng.choice([value + 1, value - 1, 2 * value, value + 64, 0, -1, value + 4])
    else:
        where[key] = rng.choice(_VALUES)
    return cert


def _read_price_verify_emit(cert: dict) -> bool:
    """Read ``cert``, price it, verify it and, verified, emit it (MLIR for AMD, C++ for NVIDIA); whether it verified."""
    from linlayout.hw.targets import get_target
    from linlayout.lowering.conversion import emitter_for
    from linlayout.lowering.cpp import emit_cpp
    from linlayout.synth.emulator import verify

    plan = Plan.from_certificate(cert)
    plan_cost(plan, cost_model(plan.arch))
    if not verify(plan).ok:
        return False
    plan.verified = True
    if get_target(plan.arch).family == "nvidia":
        emit_cpp(plan)
    else:
        emitter_for(plan.arch)(plan)
    return True


def test_the_fuzz_certificates_verify_and_emit():
    assert all(_read_price_verify_emit(json.loads(text)) for text in _fuzz_certificates())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2 ** 32 - 1))
def test_a_certificate_changed_in_one_place_is_read_priced_verified_and_emitted_or_one_layout_error(seed):
    """One random change to a planned certificate (``_mutate``): reading, pricing, verifying and emitting it
    either succeed or raise a LayoutError, never another exception (before: AttributeErrors, KeyErrors,
    IndexErrors, numpy errors and the bank model's RuntimeError)."""
    rng = random.Random(seed)
    certs = _fuzz_certificates()
    cert = _mutate(json.loads(certs[rng.randrange(len(certs))]), rng)
    try:
        _read_price_verify_emit(cert)
    except LayoutError:
        pass


def test_a_second_access_without_its_slots_is_named():
    """The second access of a ``ds_read2st64_b32`` (gfx942 fp32 mfma32 -> dotA(kw4) [FA P] of the baseline) that
    lacks ``dst`` is refused naming that item, not the first access it is fused to.  (Until addr25's swizzled
    ordered layouts the case was mfma16T -> mfma16, whose plan now fuses its stores, ``ds_write2``, not its loads.)"""
    from repo_data import baseline_cases
    case = next(c for c in baseline_cases()
                if (c["name"], c["arch"], c["dtype"]) == ("mfma32->dotA(kw4) [FA P]", "gfx942", "fp32"))
    plan = plan_conversion(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), "gfx942", 32)
    cert = json.loads(plan.dumps())
    k = next(i for i, s in enumerate(cert["steps"]) if s["op"] == "lds_load" and s.get("fused"))
    assert cert["steps"][k]["fused"] == "ds_read2st64_b32"
    del cert["steps"][k]["dst"]
    with pytest.raises(LayoutError, match=rf"^plan step {k} \(lds_load\) lacks the key 'dst'$"):
        Plan.from_certificate(cert)
