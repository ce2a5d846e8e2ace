"""linlayout.kernels.gemm: every arch x dtype runs on the wave interpreter at ragged sizes and matches
torch, compiles to a code object for gfx942 and gfx950, and every LDS instruction it emits is
conflict-free by the bank analysis."""

from __future__ import annotations

import pytest

import needs

needs.require("torch", "flydsl")

from linlayout.kernels.gemm import a_vector, choose_instruction  # noqa: E402
from tests.kernels_helpers import run_cli  # noqa: E402

EXPECTED_INSTRUCTION = {
    ("gfx942", "f16"): "v_mfma_f32_32x32x8_f16", ("gfx942", "bf16"): "v_mfma_f32_32x32x8_bf16",
    ("gfx942", "fp8"): "v_mfma_f32_32x32x16_fp8_fp8", ("gfx950", "f16"): "v_mfma_f32_32x32x16_f16",
    ("gfx950", "bf16"): "v_mfma_f32_32x32x16_bf16", ("gfx950", "fp8"): "v_mfma_f32_32x32x64_f8f6f4",
}


def _check_static(out: dict) -> None:
    st = out["static"]
    assert st["lds"]["instructions"], "the GEMM stages A through LDS"
    for r in st["lds"]["instructions"]:
        assert r["conflict_free"] and r["cycles"] == r["ideal"], r
    assert st["lds_ops_isa_subset"], (st["lds_ops_isa"], st["lds_ops_emitted"])
    assert st["lds_bytes"] == 2 * out["decisions"]["lds_stage_bytes"]
    assert st["scratch_bytes"] == 0 and st["isa_counts"]["mfma"] > 0
    with open(out["fatbin"], "rb") as f:
        assert f.read(4) == b"\x7fELF"


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
@pytest.mark.parametrize("dtype", ["f16", "bf16", "fp8"])
def test_gemm_ragged_40x40x72(capsys, tmp_path, arch, dtype):
    status, out = run_cli(capsys, "gemm", "--arch", arch, "--dtype", dtype, "--m", "40", "--n", "40", "--k", "72",
                          "--interpret", "--emit", str(tmp_path))
    assert status == 0 and out["verified"] is True, out["interpret"]
    assert out["decisions"]["tiling"]["instruction"] == EXPECTED_INSTRUCTION[(arch, dtype)]
    _check_static(out)


@pytest.mark.parametrize("arch,m,n,k,dtype,vec", [
    ("gfx942", 72, 40, 72, "f16", 8),    # two workgroups along M
    ("gfx950", 40, 72, 70, "f16", 2),    # two along N; K = 70 takes 4-byte loads
    ("gfx942", 17, 9, 5, "bf16", 1),     # tiny and odd: 2-byte loads, one partial K block
])
def test_gemm_other_shapes(capsys, tmp_path, arch, m, n, k, dtype, vec):
    status, out = run_cli(capsys, "gemm", "--arch", arch, "--dtype", dtype, "--m", str(m), "--n", str(n),
                          "--k", str(k), "--interpret", "--emit", str(tmp_path))
    assert status == 0 and out["verified"] is True, out["interpret"]
    assert out["decisions"]["a_global_vector"] == vec
    assert out["interpret"]["grid"] == [-(-n // 64), -(-m // 64), 1]
    _check_static(out)


def test_gemm_of_8_warps_declares_its_512_threads(capsys, tmp_path):
    """A kernel that declares no workgroup size is taken by LLVM for one of at most 256 threads
    (``.max_flat_workgroup_size: 256``) and LLVM drops the thread id's bits from 256 up: the 4x2-warp GEMM
    (512 threads) masked its A writer's row by ``s_and_b32 .., 48`` (warp bits 0 and 1) instead of
    ``0x70``, so warps 4-7 wrote warps 0-3's rows into LDS on a GPU while the interpreter (which runs the
    MLIR) matched.  The kernel declares its threads; the code object states them."""
    status, out = run_cli(capsys, "gemm", "--arch", "gfx942", "--warps", "4x2", "--m", "136", "--n", "40",
                          "--k", "72", "--interpret", "--emit", str(tmp_path))
    assert status == 0 and out["verified"] is True, out["interpret"]
    assert out["interpret"]["block"] == [512, 1, 1]
    assert ".max_flat_workgroup_size: 512\n" in (tmp_path / "gemm.s").read_text()
    _check_static(out)


def test_k_order_choice_prefers_fewer_lds_instructions():
    from linlayout.kernels.gemm import plan_gemm

    plan = plan_gemm("gfx942", "f16", 64)
    tried = {c["c"]: c for c in plan.candidates["k_order"]}
    chosen = plan.tiling.c
    assert all((tried[chosen]["lds_instructions"], tried[chosen]["lds_cycles"]) <=
               (c["lds_instructions"], c["lds_cycles"]) for c in tried.values())
    assert plan.staged.synthesis.write_op == "ds_write_b128" and plan.staged.synthesis.read_op == "ds_read_b128"


def test_instruction_choice_and_vector():
    ins, cands = choose_instruction("gfx950", "f16")
    assert ins.name == "v_mfma_f32_32x32x16_f16"
    assert cands[0]["flops_per_cycle"] >= max(c["flops_per_cycle"] for c in cands)
    assert [a_vector(k, 2, 32) for k in (64, 72, 70, 5)] == [8, 8, 2, 1]
