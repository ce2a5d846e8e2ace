"""The 48 conversions of Triton's AMD baseline and the Triton lit-test decompositions.

Every case must produce a verified plan that the independent checker accepts;
the Triton lit tests' instruction facts must hold for our plans too (or be beaten).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from linlayout import LinearLayout
from synth.convert import plan_conversion

from convert_checker import check_certificate

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared"
BASELINE = SHARED / "bench" / "triton_amd_baseline.json"
VECTORS = SHARED / "data" / "triton_vectors_public.json"
BITS = {"fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8}


def _cases():
    if not BASELINE.exists():
        return []
    return json.loads(BASELINE.read_text())["cases"]


@pytest.fixture(scope="module")
def plans():
    if not BASELINE.exists():
        pytest.skip("shared/bench/triton_amd_baseline.json is not available")
    out = {}
    for c in _cases():
        p = plan_conversion(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), c["arch"],
                            BITS[c["dtype"]])
        out[(c["name"], c["arch"], c["dtype"])] = (c, p)
    return out


def test_every_baseline_case_is_verified_and_independently_checked(plans):
    assert len(plans) == 48
    for (name, arch, dtype), (c, p) in plans.items():
        assert p.verified, name
        ok, msg = check_certificate(json.loads(p.dumps()))
        assert ok, f"{name} {arch} {dtype}: {msg}"


def test_equal_layouts_need_nothing_and_wave_local_cases_avoid_barriers(plans):
    for (name, arch, dtype), (c, p) in plans.items():
        if c["src"] == c["dst"]:
            assert p.strategy == "noop" and p.counts()["total"] == 0
        if not p.lower_bound["cross_warp"]:
            assert p.counts()["s_barrier"] == 0, name  # each warp reads its own writes
        else:
            assert p.strategy == "lds" and p.counts()["s_barrier"] >= 1


def test_data_movement_never_exceeds_triton_and_lower_bound_holds(plans):
    for (name, arch, dtype), (c, p) in plans.items():
        assert p.counts()["total"] <= c["triton"]["total"], (name, arch, dtype)
        assert p.lower_bound["cost"] <= p.cost + 1e-6


def test_permlane_cases_match_triton_on_gfx950(plans):
    _, p = plans[("mfma32T->dotA(kw8) [FA P]", "gfx950", "fp32")]
    assert p.counts()["permlane32_swap"] == 16 and p.counts()["total"] == 16
    _, p = plans[("mfma16T->dotA(kw8)", "gfx950", "fp32")]
    assert p.counts()["permlane32_swap"] == 16 and p.counts()["permlane16_swap"] == 16
    _, p = plans[("mfma32T->dotA(kw8) [FA P]", "gfx950", "fp16")]
    assert p.counts()["total"] == 8  # Triton: 9


def test_gfx942_single_transposition_stays_in_registers(plans):
    # lane bit 5 has neither DPP nor ds_swizzle on gfx942: ship with ds_bpermute (1 per register pair)
    _, p = plans[("mfma32T->dotA(kw8)", "gfx942", "fp32")]
    c = p.counts()
    assert p.lds_bytes == 0 and c["ds_bpermute"] == 16 and c["v_cndmask"] == 48


def test_register_plan_of_a_multi_bit_transpose_uses_subword_exchanges(plans):
    from synth.plan import PermSelect

    c, p = plans[("mfma32->dotA(kw8) [FA P]", "gfx950", "fp16")]
    assert p.strategy == "lds"  # the register plan below is the longer one
    r = plan_conversion(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), "gfx950", 16,
                        strategy="registers")
    assert r.verified and r.lds_bytes == 0
    n_sub = sum(isinstance(st, PermSelect) for st in r.steps)
    assert n_sub == 16  # the element bit <-> lane bit 0 exchange: one v_perm with a lane selector per VGPR
    cnt = r.counts()
    assert cnt["permlane16_swap"] == 8 and cnt["permlane32_swap"] == 8 and cnt["total"] > p.counts()["total"]


def test_triton_lit_decompositions():
    if not VECTORS.exists():
        pytest.skip("shared/data/triton_vectors_public.json is not available")
    vecs = [v for v in json.loads(VECTORS.read_text())["vectors"] if v["kind"] == "warp_layout_convert_decomposition"]
    assert vecs
    for v in vecs:
        prm = v["params"]
        arch = "gfx950" if prm["src"]["version"] == 4 else "gfx942"
        p = plan_conversion(LinearLayout.from_json(prm["src_ll"]), LinearLayout.from_json(prm["dst_ll"]), arch,
                            prm["bitwidth"])
        c = p.counts()
        assert p.lds_bytes == 0 and c["lds_write"] == 0  # "no LDS store/load"
        if arch == "gfx950":
            assert c["ds_bpermute"] == 0
            if "(r2 l5 l4)" in v["expected"]["derived_P_cycles (r_i = register bit i, l_j = lane bit j)"]:
                assert c["permlane32_swap"] == 2 and c["permlane16_swap"] == 2
            else:
                assert c["permlane32_swap"] == 2 and c["total"] == 2
        else:
            assert c["ds_bpermute"] >= 1
