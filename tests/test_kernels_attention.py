"""linlayout.kernels.attention: the flash-attention block matches torch on the wave interpreter for every
arch x dtype (ragged queries and keys), and the P conversion is what the planner should find:
nothing on gfx942 f16/bf16, four v_permlane32_swap on gfx950, ds_bpermute + v_cndmask for
gfx942 fp8 -- and the compiled conversion region holds exactly the plan's instructions."""

from __future__ import annotations

import pytest

import needs

needs.require("torch", "flydsl")

from tests.kernels_helpers import run_cli  # noqa: E402

CHECKED = ("ds_bpermute", "v_cndmask", "permlane32_swap", "permlane16_swap", "dpp", "ds_swizzle", "lds_read",
           "lds_write")


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
@pytest.mark.parametrize("dtype", ["f16", "bf16", "fp8"])
def test_attention(capsys, tmp_path, arch, dtype):
    status, out = run_cli(capsys, "attention", "--arch", arch, "--dtype", dtype, "--nq", "40", "--nkv", "80",
                          "--interpret", "--emit", str(tmp_path))
    assert status == 0 and out["verified"] is True, out["interpret"]
    assert out["interpret"]["grid"] == [2, 1, 1]
    conv = out["decisions"]["p_conversion"]
    counts = conv["counts"]
    if arch == "gfx942" and dtype != "fp8":
        assert conv["strategy"] == "noop" and counts == {}
    elif arch == "gfx950":
        assert counts == {"permlane32_swap": 4, "total": 4}
    else:
        assert counts.get("ds_bpermute", 0) > 0 and counts.get("permlane32_swap", 0) == 0
    region = out["static"]["region_counts"]["conv"]
    for key in CHECKED:
        assert region.get(key, 0) == counts.get(key, 0), (key, region, counts)
    assert all(c["cost"] >= conv["cost"] for c in conv["candidates"])
    red = out["decisions"]["row_reduction"]
    assert [r["lane_bit"] for r in red] == [5]
    assert red[0]["instruction"] == ("permlane32_swap" if arch == "gfx950" else "ds_bpermute")
    st = out["static"]
    assert st["lds"]["conflict_free"] and st["lds_ops_isa_subset"] and st["scratch_bytes"] == 0


def test_attention_head_dim_32_single_key_block(capsys, tmp_path):
    status, out = run_cli(capsys, "attention", "--arch", "gfx942", "--d", "32", "--nq", "5", "--nkv", "3",
                          "--interpret", "--emit", str(tmp_path))
    assert status == 0 and out["verified"] is True
    assert out["interpret"]["sizes"]["reference_vs_exact_softmax"] < 1e-2


def test_attention_rejects_bad_head_dim(capsys):
    from linlayout.kernels import attention, common

    status = common.main("attention", "", attention.add_arguments, attention.build, attention.make_case,
                         ["--d", "48", "--json"])
    assert status == 2 and "head dim" in capsys.readouterr().err


def test_gfx950_reads_v_with_transpose_loads(capsys, tmp_path):
    status, out = run_cli(capsys, "attention", "--arch", "gfx950", "--interpret", "--emit", str(tmp_path))
    assert status == 0 and out["verified"] is True
    assert out["decisions"]["v_lds"]["read_op"] == "ds_read_b64_tr_b16"
    assert out["static"]["lds_ops_isa"].get("ds_read_b64_tr_b16") == out["decisions"]["v_lds"]["read_instructions"]


def test_the_query_lanes_check_reads_the_targets_wave():
    """``_check_query_lanes`` reads the accumulators on the target's wave (``Target.wave_size``), not on the
    layouts' own lane count: 64-lane MFMA accumulators on a 32-lane wave are refused, on gfx942 checked."""
    from linlayout import LayoutError
    from linlayout.kernels import attention
    from linlayout.kernels.gemm import choose_instruction
    from linlayout.kernels.mfma_tiles import MfmaTiling

    ins, _ = choose_instruction("gfx942", "f16")
    qk = MfmaTiling(ins, (1, 1), (1, 1), 32, 1)
    pv = MfmaTiling(ins, (1, 1), (1, 1), 32, 1)
    attention._check_query_lanes(qk, pv, "gfx942")
    with pytest.raises(LayoutError, match="^the layout has 64 lanes; a wave here has 32$"):
        attention._check_query_lanes(qk, pv, "gfx1200")


def test_a_p_conversion_through_lds_gets_its_own_allocation(capsys, tmp_path, monkeypatch):
    """P's conversion planned as an LDS round trip (forced): the kernel allocates its LDS beside V's, counts its
    accesses in the conversion region and stays exact on the interpreter across the key blocks (one wave: its
    accesses stay in order from one block to the next)."""
    from linlayout.kernels import attention

    real = attention.plan_conversion
    monkeypatch.setattr(attention, "plan_conversion", lambda *a, **k: real(*a, **{**k, "strategy": "lds"}))
    status, out = run_cli(capsys, "attention", "--arch", "gfx950", "--nq", "40", "--nkv", "80",
                          "--interpret", "--emit", str(tmp_path))
    assert status == 0 and out["verified"] is True, out["interpret"]
    conv = out["decisions"]["p_conversion"]
    assert conv["strategy"] == "lds" and conv["counts"]["lds_write"] > 0 and conv["counts"]["lds_read"] > 0
    region = out["static"]["region_counts"]["conv"]
    assert (region["lds_write"], region["lds_read"]) == (conv["counts"]["lds_write"], conv["counts"]["lds_read"])
    assert "@attn_lds_p" in (tmp_path / "attention.mlir").read_text()
