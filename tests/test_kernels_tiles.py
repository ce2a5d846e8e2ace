"""linlayout.kernels.mfma_tiles: the operand and accumulator layouts of a tiling compute A @ B when every
MFMA is executed with the catalog's instruction layouts (simulated in numpy); the GEMM's
host preshuffle puts each B element where the B-operand layout says a lane reads it."""

from __future__ import annotations

import numpy as np
import pytest

import needs

needs.require("torch")

import torch  # noqa: E402
from linlayout.hw.mfma import get_instruction, mfma_layouts  # noqa: E402
from linlayout.kernels.gemm import plan_gemm, preshuffle_b  # noqa: E402
from linlayout.kernels.mfma_tiles import MfmaTiling  # noqa: E402

LANES = np.arange(64)


def _gather(layout, mat, reg, warp):
    o = layout.apply({"register": np.full(64, reg), "lane": LANES, "warp": np.full(64, warp)})
    return o["dim0"], o["dim1"]


def simulate(t: MfmaTiling, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C of the tiling: operands gathered with t.operand, each MFMA by the instruction layouts."""
    ins, li = t.ins, mfma_layouts(t.ins)
    la, lb, lc = t.operand("A"), t.operand("B"), t.acc()
    c = np.full((t.block_m, t.block_n), np.nan)
    for w in range(t.num_warps):
        ra = {r: a[_gather(la, a, r, w)] for r in range(la.in_dim_size("register"))}
        rb = {r: b[_gather(lb, b, r, w)] for r in range(lb.in_dim_size("register"))}
        for tm in range(t.tiles[0]):
            for tn in range(t.tiles[1]):
                cm = np.zeros((ins.m, ins.n))
                for g in range(t.groups):
                    am, bm = np.zeros((ins.m, ins.k)), np.zeros((ins.k, ins.n))
                    for e, r in enumerate(t.operand_registers("A", g, tm)):
                        o = li["A"].apply({"register": np.full(64, e), "lane": LANES})
                        am[o["dim0"], o["dim1"]] = ra[r]
                    for e, r in enumerate(t.operand_registers("B", g, tn)):
                        o = li["B"].apply({"register": np.full(64, e), "lane": LANES})
                        bm[o["dim0"], o["dim1"]] = rb[r]
                    cm += am @ bm
                for e, r in enumerate(t.acc_registers(tm, tn)):
                    o = li["C"].apply({"register": np.full(64, e), "lane": LANES})
                    c[_gather(lc, c, r, w)] = cm[o["dim0"], o["dim1"]]
    return c


@pytest.mark.parametrize("arch,name,warps,tiles,bk,c", [
    ("gfx942", "v_mfma_f32_32x32x8_f16", (2, 2), (1, 1), 32, 2),
    ("gfx942", "v_mfma_f32_32x32x8_f16", (1, 1), (2, 1), 64, 4),
    ("gfx942", "v_mfma_f32_16x16x16_f16", (1, 2), (2, 1), 64, 2),
    ("gfx942", "v_mfma_f32_32x32x16_fp8_fp8", (2, 1), (1, 2), 32, 1),
    ("gfx950", "v_mfma_f32_32x32x64_f8f6f4", (2, 1), (1, 2), 128, 1),
    ("gfx950", "v_mfma_f32_32x32x16_bf16", (1, 1), (1, 1), 64, 2),
])
def test_tiling_computes_the_product(arch, name, warps, tiles, bk, c):
    t = MfmaTiling(get_instruction(arch, name), warps, tiles, bk, c)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((t.block_m, t.bk))
    b = rng.standard_normal((t.bk, t.block_n))
    assert np.allclose(simulate(t, a, b), a @ b, atol=1e-9)


def test_k_order_runs_and_bijection():
    t = MfmaTiling(get_instruction("gfx942", "v_mfma_f32_32x32x8_f16"), (1, 1), (1, 1), 32, 2)
    ks = {t.phi(g, kk) for g in range(t.groups) for kk in range(t.ins.k)}
    assert ks == set(range(32))
    # c = 2: a lane's first 8 registers are 8 consecutive K values (two MFMAs side by side)
    la = t.operand("A")
    assert [la.apply({"register": r, "lane": 0, "warp": 0})["dim1"] for r in range(8)] == list(range(8))
    assert t.describe()["k_width"] == 8


def test_preshuffled_b_matches_the_operand_layout():
    plan = plan_gemm("gfx942", "f16", 40)
    t = plan.tiling
    n, k = 70, 40
    b = torch.arange(n * k, dtype=torch.float32).reshape(n, k).to(torch.float16)
    flat = preshuffle_b(b, plan).to(torch.float32)
    nkb, r_ = -(-k // t.bk), plan.lane_b_elements
    lay = t.operand("B")
    rng = np.random.default_rng(0)
    for _ in range(300):
        nb, kb, wn, lane, r = (int(rng.integers(x)) for x in (-(-n // t.block_n), nkb, t.warps[1], 64, r_))
        idx = ((((nb * nkb + kb) * t.warps[1] + wn) * t.tiles[1] + 0) * 64 + lane) * r_ + r
        o = lay.apply({"register": r, "lane": lane, "warp": wn})
        row, col = nb * t.block_n + o["dim1"], kb * t.bk + o["dim0"]
        want = float(b[row, col]) if row < n and col < k else 0.0
        assert float(flat[idx]) == want
