"""linlayout.kernels.fp8_fp16: 8-bit <-> 16-bit MFMA operand layouts with the element conversion, exact
against torch's casts; the layout conversion runs at 8 bits, where four elements share a VGPR (the cheaper
of the two plans: in-wave at both widths it is half the instructions of 16)."""

from __future__ import annotations

import pytest

import needs

needs.require("torch", "flydsl")

from tests.kernels_helpers import run_cli  # noqa: E402


# (strategy, instructions) of the plans at 8 and at 16 bits: in-wave at both widths the 8-bit plan moves
# half the dwords in half the instructions.  gfx942's A operand at 16 bits is either a one-wave round trip of
# 2 ds_write + 2 ds_read (4, 5-6 address VALU) or the in-wave plan of 16 (25 with its setup, 284 cycles); the
# round trip stores two joined ds_write2_b64 of src dwords (0,1)+(4,5) and (2,3)+(6,7).  Its halves are copied
# (cost.joined_pair_copies) only where they arrive in place in two 4-dword tuples: compiled in the conversion
# kernel, fp8 -> f16's src (dwordx4 loads) takes 4 v_mov_b32 (region 8), f16 -> fp8's (the f16 operand's
# 2-dword loads) none (region 4, 9 with its setup, 472 cycles).  This kernel plans with its own src arrival
# (kernels.fp8_fp16._src_tuple_dwords): at 16 bits f16 -> fp8's src is its 2-dword loads, fp8 -> f16's the
# element conversion's values (each computed in place, no copy priced), so both take the round trip (the rank
# value's instruction exponent 0.55).  Either way the 8-bit plan is the kernel's: in-wave (8, 188 cycles),
# except gfx942 f16 -> fp8, whose 8-bit plan since session 23's one-wave setup estimate (the kernel declares
# 64 threads, so LLVM drops the lane-id masks of its LDS addresses) is a round trip of 1 ds_write + 1 ds_read
# (272 cycles, fewer instructions with its setup), run from the kernel's own LDS allocation.
OPTIONS = {("gfx942", "fp8-to-f16"): {8: ("lanes", 8), 16: ("lds", 4)},
           ("gfx942", "f16-to-fp8"): {8: ("lds", 2), 16: ("lds", 4)},
           ("gfx950", "fp8-to-f16"): {8: ("lanes", 4), 16: ("lanes", 8)},
           ("gfx950", "f16-to-fp8"): {8: ("lanes", 4), 16: ("lanes", 8)}}


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
@pytest.mark.parametrize("direction", ["fp8-to-f16", "f16-to-fp8"])
def test_fp8_fp16(capsys, tmp_path, arch, direction):
    status, out = run_cli(capsys, "fp8_fp16", "--arch", arch, "--direction", direction, "--m", "30",
                          "--interpret", "--emit", str(tmp_path))
    assert status == 0 and out["verified"] is True and out["max_abs_err"] == 0.0
    dec = out["decisions"]
    if arch == "gfx942":
        assert dec["instructions"]["k_per_lane"] == {"fp8": 8, "f16": 4}
    opts = dec["options"]
    assert dec["layout_conversion_at_bits"] == 8
    assert opts["at_8_bits"]["cost"] < opts["at_16_bits"]["cost"]
    assert {bits: (opts[f"at_{bits}_bits"]["strategy"], opts[f"at_{bits}_bits"]["counts"]["total"])
            for bits in (8, 16)} == OPTIONS[arch, direction]
    region = out["static"]["region_counts"]["conv"]
    for key, n in dec["plan"]["counts"].items():
        if key != "total":
            assert region.get(key, 0) == n, (key, region)


def test_same_k_per_lane_is_free(capsys, tmp_path):
    status, out = run_cli(capsys, "fp8_fp16", "--arch", "gfx950", "--fp8-instr", "v_mfma_f32_32x32x16_fp8_fp8",
                          "--interpret", "--emit", str(tmp_path))
    assert status == 0 and out["verified"] is True
    assert out["decisions"]["plan"]["strategy"] == "noop"
    assert out["static"]["region_counts"]["conv"] == {}
