"""ISA semantics of the wave emulator against the quoted ISA text (docs/amd_facts.md section 2)."""

from __future__ import annotations

import numpy as np
import pytest

from linlayout import LayoutError, LinearLayout
from linlayout.synth.emulator import PlanVerificationError, run_isa, verify
from linlayout.synth.isa_lanes import bpermute_src_lanes, dpp_src_lanes, permlane_swap, swizzle_src_lanes, v_perm_b32
from linlayout.synth.plan import Barrier, FusedDpp, Lane, LdsLoad, LdsStore, Plan, Select

LANES = np.arange(64)


# ------------------------------------------------------------------ DPP (Table 94)
def test_dpp_quad_perm_reads_within_each_quad():
    ctrl = 1 | (0 << 2) | (3 << 4) | (2 << 6)  # quad_perm:[1,0,3,2]
    assert dpp_src_lanes(ctrl, 64).tolist() == [(n & ~3) | [1, 0, 3, 2][n & 3] for n in range(64)]


@pytest.mark.parametrize("s", [1, 4, 15])
def test_dpp_row_shifts_and_rotate(s):
    shl, shr, ror = dpp_src_lanes(0x100 + s, 64), dpp_src_lanes(0x110 + s, 64), dpp_src_lanes(0x120 + s, 64)
    for n in range(64):
        assert shl[n] == (n + s if (n & 15) < 16 - s else -1)
        assert shr[n] == (n - s if (n & 15) >= s else -1)
        assert ror[n] == ((n & ~15) | (((n & 15) - s) % 16))


def test_dpp_mirrors_broadcasts_and_wave_shifts():
    assert dpp_src_lanes(0x140, 64).tolist() == [(n & ~15) | (15 - (n & 15)) for n in range(64)]
    assert dpp_src_lanes(0x141, 64).tolist() == [(n & ~7) | (7 - (n & 7)) for n in range(64)]
    assert dpp_src_lanes(0x142, 64).tolist() == [-1] * 16 + [15] * 16 + [31] * 16 + [47] * 16
    assert dpp_src_lanes(0x143, 64).tolist() == [-1] * 32 + [31] * 32
    assert dpp_src_lanes(0x130, 64).tolist() == list(range(1, 64)) + [-1]
    assert dpp_src_lanes(0x134, 64).tolist() == list(range(1, 64)) + [0]
    assert dpp_src_lanes(0x138, 64).tolist() == [-1] + list(range(63))
    assert dpp_src_lanes(0x13C, 64).tolist() == [63] + list(range(63))
    with pytest.raises(LayoutError):
        dpp_src_lanes(0x100, 64)  # reserved


# ------------------------------------------------------------------ ds_swizzle (all modes)
def test_swizzle_fft_example_from_the_isa():
    # input values 1..0x20 on lanes 0..31; FFT mask 0 gives {1, 0x11, 9, 0x19, 5, 0x15, 0xd, 0x1d, ...}
    vals = swizzle_src_lanes(0xE000, 64)[:8] + 1
    assert vals.tolist() == [0x01, 0x11, 0x09, 0x19, 0x05, 0x15, 0x0D, 0x1D]
    assert swizzle_src_lanes(0xE01F, 64).tolist() == list(range(64))  # mask 0x1f: no swizzle


def test_swizzle_rotate_wraps_inside_each_half():
    left1 = swizzle_src_lanes(0xC000 | (1 << 5), 64)
    assert left1[31] == 0 and left1[0] == 1 and left1[63] == 32
    right1 = swizzle_src_lanes(0xC000 | 0x400 | (1 << 5), 64)
    assert right1[0] == 31 and right1[32] == 63


def test_swizzle_quad_perm_and_bitmask_presets():
    qp = swizzle_src_lanes(0x8000 | 3 | (2 << 2) | (1 << 4) | (0 << 6), 64)  # reverse each quad
    assert qp.tolist() == [(n & ~3) | (3 - (n & 3)) for n in range(64)]
    swap16 = swizzle_src_lanes(0x1F | (0x10 << 10), 64)
    assert swap16.tolist() == [n ^ 16 for n in range(64)]
    bcast8 = swizzle_src_lanes(0x18 | (3 << 5), 64)  # and=0x18, or=3: lane 3 of every 8
    assert bcast8.tolist() == [(n & 0x38) | 3 for n in range(64)]


# ------------------------------------------------------------------ ds_bpermute
def test_bpermute_isa_example_scaled_to_a_wave():
    addr = np.array([0, 0, 12, 4] + [4 * n for n in range(4, 64)])
    src = bpermute_src_lanes(addr, 64)
    assert src[:4].tolist() == [0, 0, 3, 1]  # {A, B, C, D} -> {A, A, D, B}
    assert bpermute_src_lanes(np.array([4 * 70 + 3] * 64), 64)[0] == 6  # /4 drops 2 bits, % 64 wraps
    assert bpermute_src_lanes(np.zeros(64, dtype=np.int64), 64, offset=8)[0] == 2


# ------------------------------------------------------------------ permlane swaps (docs/contract.md 4, docs/amd_facts.md 2.4)
@pytest.mark.parametrize("kind,half", [("permlane32_swap", 32), ("permlane16_swap", 16)])
def test_permlane_swaps_exchange_src0_low_rows_with_vdst_high_rows(kind, half):
    vdst = np.arange(64)[None, :] + 100
    src0 = np.arange(64)[None, :] + 200
    vd, s0 = permlane_swap(kind, vdst, src0)
    for l in range(64):
        in_low = (l % (2 * half)) < half
        if in_low:
            assert s0[0, l] == 100 + l + half and vd[0, l] == 100 + l
        else:
            assert vd[0, l] == 200 + l - half and s0[0, l] == 200 + l


# ------------------------------------------------------------------ v_perm_b32
def test_v_perm_byte_selects_sign_and_constants():
    s0 = np.array([0x10, 0x91, 0x12, 0x13])  # bytes of S0 (in[4..7])
    s1 = np.array([0x00, 0x01, 0x82, 0x03])  # bytes of S1 (in[0..3])
    sel = np.array([7, 0, 4, 2])
    assert v_perm_b32(s0, s1, sel).tolist() == [0x13, 0x00, 0x10, 0x82]
    # 8..11: sign of in[1], in[3], in[5], in[7]; 12: 0x00; >= 13: 0xff
    assert v_perm_b32(s0, s1, np.array([8, 10, 12, 13])).tolist() == [0x00, 0xFF, 0x00, 0xFF]


# ------------------------------------------------------------------ whole-plan semantics
def _lane_layout(n_reg_bits: int) -> LinearLayout:
    """32-bit elements: register r, lane l -> element r * 64 + l (one warp)."""
    return LinearLayout({"register": [[1 << (6 + i)] for i in range(n_reg_bits)],
                         "lane": [[1 << j] for j in range(6)], "warp": []}, [("dim0", 64 << n_reg_bits)])


def _plan(steps, src=None, dst=None, lds=0, warps=1):
    src = src or _lane_layout(0)
    return Plan("gfx942", 64, warps, 32, src, dst or src, src.in_dim_size("register"),
                (dst or src).in_dim_size("register"), steps, lds_bytes=lds)


def test_dpp_bound_ctrl_and_masks_at_isa_level():
    # row_shr:1 with bound_ctrl:0 leaves lanes without a source unwritten
    st = Lane("dpp:row_shr:1", [1], [0], np.where((LANES & 15) >= 1, LANES - 1, -1),
              {"ctrl": 0x111, "row_mask": 0xF, "bank_mask": 0xF, "bound_ctrl": 0})
    regs = run_isa(_plan([st]))
    assert (regs[1, 0, 17, :] == regs[0, 0, 16, :]).all()
    assert (regs[1, 0, 16, :] == -1).all() and (regs[1, 0, 0, :] == -1).all()  # first lane of each row
    # masked v_mov_b32_dpp: disabled lanes keep the old value (in place)
    keep = (LANES >> 2) & 1 == 0  # banks 0 and 2 keep
    f = FusedDpp("v_mov_b32_dpp", [0], [0], [0], [5], "quad_perm:[1,0,3,2]", np.where(keep, -1, LANES ^ 1),
                 keep.astype(np.int64), {"ctrl": 1 | (0 << 2) | (3 << 4) | (2 << 6), "row_mask": 0xF,
                                         "bank_mask": 0b1010, "bound_ctrl": 0})
    regs0 = run_isa(_plan([]))
    regs = run_isa(_plan([f]))
    assert (regs[0, 0, 4, :] == regs0[0, 0, 5, :]).all() and (regs[0, 0, 0, :] == regs0[0, 0, 0, :]).all()


def test_declared_lane_map_must_match_the_instruction():
    wrong = Lane("ds_swizzle:0x401f", [1], [0], LANES ^ 8, {"offset": 0x401F})  # the offset swaps 16, not 8
    with pytest.raises(PlanVerificationError):
        run_isa(_plan([wrong]))


def test_lds_race_without_barrier_is_detected():
    two = LinearLayout({"register": [], "lane": [[1 << j] for j in range(6)], "warp": [[64]]}, [("dim0", 128)])
    swapped = LinearLayout({"register": [], "lane": [[1 << j] for j in range(6)], "warp": [[64]]}, [("dim0", 128)])
    addr_w = np.stack([LANES * 4, 256 + LANES * 4])
    addr_r = np.stack([256 + LANES * 4, LANES * 4])  # each warp reads the other's data
    dst = LinearLayout({"register": [], "lane": [[1 << j] for j in range(6)], "warp": [[64]]}, [("dim0", 128)])
    racy = Plan("gfx942", 64, 2, 32, two, dst, 1, 1,
                [LdsStore(addr=addr_w, width_bytes=4, src=[0]), LdsLoad(addr=addr_r, width_bytes=4, dst=[0])], lds_bytes=512)
    with pytest.raises(PlanVerificationError, match="barrier"):
        run_isa(racy)
    ok = Plan("gfx942", 64, 2, 32, two, swapped, 1, 1,
              [LdsStore(addr=addr_w, width_bytes=4, src=[0]), Barrier(), LdsLoad(addr=addr_r, width_bytes=4, dst=[0])],
              lds_bytes=512)
    run_isa(ok)  # no race with the barrier (the data are swapped between warps, which verify rejects)
    assert not verify(ok).ok


def test_select_and_misaligned_lds_access():
    sel = Select([1], [0], [0], (LANES & 1).astype(np.int64))
    assert verify(_plan([sel, Select([0], [1], [1], np.zeros(64, dtype=np.int64))])).ok
    bad = _plan([LdsStore(addr=LANES * 4 + 2, width_bytes=4, src=[0])], lds=512)
    with pytest.raises(PlanVerificationError, match="lane 0 addresses byte 2, not a multiple of 4 \\(a 4-byte access\\)"):
        run_isa(bad)
