"""The MFMA/WMMA instruction catalog: which instructions, registers, cycles, names."""

from __future__ import annotations

import pytest

from linlayout import LayoutError
from linlayout.hw.mfma import MFMA_ARCHES, get_instruction, instructions_for
from linlayout.hw.wmma import get_wmma_instruction, wmma_instructions_for

# docs/amd_facts.md 3.6 (calculator, CDNA3 unless noted; CDNA4-ISA Table 28 / 7.1.5 for gfx950):
# (arch, instruction, A VGPRs, B VGPRs, C VGPRs, cycles)
TABLE_3_6 = [
    ("gfx942", "v_mfma_f32_32x32x8_f16", 2, 2, 16, 32), ("gfx90a", "v_mfma_f32_32x32x8f16", 2, 2, 16, 64),
    ("gfx942", "v_mfma_f32_32x32x8_bf16", 2, 2, 16, 32),
    ("gfx942", "v_mfma_f32_16x16x16_f16", 2, 2, 4, 16), ("gfx90a", "v_mfma_f32_16x16x16f16", 2, 2, 4, 32),
    ("gfx942", "v_mfma_f32_32x32x2_f32", 1, 1, 16, 64), ("gfx942", "v_mfma_f32_16x16x4_f32", 1, 1, 4, 32),
    ("gfx942", "v_mfma_f32_32x32x16_fp8_fp8", 2, 2, 16, 32), ("gfx942", "v_mfma_i32_32x32x16_i8", 2, 2, 16, 32),
    ("gfx942", "v_mfma_f32_16x16x32_fp8_fp8", 2, 2, 4, 16), ("gfx942", "v_mfma_i32_16x16x32_i8", 2, 2, 4, 16),
    ("gfx942", "v_mfma_f32_32x32x4_2b_f16", 2, 2, 32, 64), ("gfx942", "v_mfma_f32_16x16x4_4b_f16", 2, 2, 16, 32),
    ("gfx942", "v_mfma_f32_4x4x4_16b_f16", 2, 2, 4, 8),
    ("gfx942", "v_mfma_f64_16x16x4_f64", 2, 2, 8, 32), ("gfx950", "v_mfma_f64_16x16x4_f64", 2, 2, 8, 64),
    ("gfx950", "v_mfma_f32_16x16x32_f16", 4, 4, 4, 16), ("gfx950", "v_mfma_f32_16x16x32_bf16", 4, 4, 4, 16),
    ("gfx950", "v_mfma_f32_32x32x16_f16", 4, 4, 16, 32), ("gfx950", "v_mfma_i32_16x16x64_i8", 4, 4, 4, 16),
    ("gfx950", "v_mfma_i32_32x32x32_i8", 4, 4, 16, 32),
]


@pytest.mark.parametrize("arch,name,ra,rb,rc,cycles", TABLE_3_6)
def test_registers_and_cycles_of_amd_hw_3_6(arch, name, ra, rb, rc, cycles):
    ins = get_instruction(arch, name)
    assert (ins.registers("A"), ins.registers("B"), ins.registers("C"), ins.cycles) == (ra, rb, rc, cycles)
    assert ins.registers("D") == rc


@pytest.mark.parametrize("shape,c_regs,cyc", [("16x16x128", 4, 16), ("32x32x64", 16, 32)])
@pytest.mark.parametrize("scaled", [False, True])
def test_f8f6f4_registers_and_cycles_per_format(shape, c_regs, cyc, scaled):
    """CDNA4-ISA 7.1.5: F8 8 VGPRs, F6 6, F4 4; twice the cycles if either operand is 8-bit."""
    name = f"v_mfma_{'scale_' if scaled else ''}f32_{shape}_f8f6f4"
    vgprs = {"fp8": 8, "bf8": 8, "fp6": 6, "bf6": 6, "fp4": 4}
    for fa, ra in vgprs.items():
        for fb, rb in vgprs.items():
            ins = get_instruction("gfx950", name, a_format=fa, b_format=fb)
            assert (ins.registers("A"), ins.registers("B"), ins.registers("C")) == (ra, rb, c_regs)
            assert ins.cycles == cyc * (2 if 8 in (ins.a_bits, ins.b_bits) else 1)
    default = get_instruction("gfx950", name)  # modifiers 0 = E4M3 for both operands
    assert (default.a_type, default.b_type, default.cycles) == ("fp8", "fp8", 2 * cyc)


def test_instruction_counts_and_membership():
    names = {a: {i.name for i in instructions_for(a)} for a in MFMA_ARCHES}
    # the calculator lists 27 (CDNA2) and 32 dense (CDNA3) MFMAs; gfx950 = gfx942 - xf32 + 10 new
    assert (len(names["gfx90a"]), len(names["gfx942"]), len(names["gfx950"])) == (27, 32, 40)
    assert names["gfx950"] == (names["gfx942"] - {"v_mfma_f32_16x16x8_xf32", "v_mfma_f32_32x32x4_xf32"}) | {
        "v_mfma_f32_16x16x32_f16", "v_mfma_f32_32x32x16_f16", "v_mfma_f32_16x16x32_bf16",
        "v_mfma_f32_32x32x16_bf16", "v_mfma_i32_16x16x64_i8", "v_mfma_i32_32x32x32_i8",
        "v_mfma_f32_16x16x128_f8f6f4", "v_mfma_f32_32x32x64_f8f6f4",
        "v_mfma_scale_f32_16x16x128_f8f6f4", "v_mfma_scale_f32_32x32x64_f8f6f4"}
    only_90a = names["gfx90a"] - names["gfx942"]
    assert only_90a == {"v_mfma_f32_32x32x2_2b_bf16", "v_mfma_f32_16x16x2_4b_bf16", "v_mfma_f32_4x4x2_16b_bf16",
                        "v_mfma_f32_32x32x4_bf16", "v_mfma_f32_16x16x8_bf16",
                        "v_mfma_i32_32x32x8_i8", "v_mfma_i32_16x16x16_i8"}


@pytest.mark.parametrize("arch", MFMA_ARCHES)
def test_catalog_invariants(arch):
    for ins in instructions_for(arch):
        assert ins.arch == arch and arch in ins.available_on
        assert ins.m * ins.blocks <= 64 and ins.n * ins.blocks <= 64
        assert ins.flops == 2 * ins.m * ins.n * ins.k * ins.blocks
        assert ins.rocdl == "rocdl." + ins.intrinsic[len("llvm.amdgcn."):]
        # operand registers are what the LLVM operand types hold: items * bits / 32
        for op, bits in (("A", ins.a_bits), ("B", ins.b_bits), ("C", ins.c_bits)):
            assert ins.registers(op) * 32 == ins.items_per_lane(op) * bits
        assert get_instruction(arch, ins.mnemonic) == ins
        assert get_instruction(arch, ins.name.upper()) == ins
        if not (ins.is_f8f6f4 and not ins.scaled):
            assert get_instruction(arch, ins.intrinsic) == ins
            assert get_instruction(arch, ins.rocdl) == ins


def test_names_intrinsics_and_spellings():
    i90 = get_instruction("gfx90a", "v_mfma_f32_32x32x8_f16")
    assert (i90.mnemonic, i90.intrinsic) == ("v_mfma_f32_32x32x8f16", "llvm.amdgcn.mfma.f32.32x32x8f16")
    assert i90.rocdl == "rocdl.mfma.f32.32x32x8f16"
    bf = get_instruction("gfx942", "v_mfma_f32_32x32x4bf16_1k")
    assert (bf.name, bf.blocks, bf.intrinsic) == ("v_mfma_f32_32x32x4_2b_bf16", 2, "llvm.amdgcn.mfma.f32.32x32x4bf16.1k")
    old = get_instruction("gfx90a", "v_mfma_f32_32x32x4bf16")  # pre-1k bf16: K=4, one block
    assert (old.k, old.blocks, old.registers("A")) == (4, 1, 1)
    assert get_instruction("gfx950", "v_mfma_f32_16x16x32_f16").rocdl == "rocdl.mfma.f32.16x16x32.f16"
    assert get_instruction("gfx942", "v_mfma_i32_16x16x32_i8").intrinsic == "llvm.amdgcn.mfma.i32.16x16x32.i8"
    assert get_instruction("gfx942", "v_mfma_f32_16x16x32_bf8_fp8").rocdl == "rocdl.mfma.f32.16x16x32.bf8.fp8"
    assert get_instruction("mi355", "v_mfma_scale_f32_32x32x64_f8f6f4").rocdl == "rocdl.mfma.scale.f32.32x32x64.f8f6f4"
    assert get_instruction("gfx942", "v_mfma_f64_4x4x4_4b_f64").mnemonic == "v_mfma_f64_4x4x4_4b_f64"
    assert get_instruction("gfx90a", "v_mfma_f64_4x4x4_4b_f64").mnemonic == "v_mfma_f64_4x4x4f64"


def test_modifier_support_as_calculator_reports():
    assert get_instruction("gfx90a", "v_mfma_f32_32x32x8f16").supports_blgp
    assert not get_instruction("gfx942", "v_mfma_f32_32x32x8_f16").supports_blgp
    assert get_instruction("gfx942", "v_mfma_f32_32x32x2_f32").supports_blgp
    assert get_instruction("gfx942", "v_mfma_f32_16x16x4_4b_f16").supports_cbsz_abid
    assert not get_instruction("gfx942", "v_mfma_f32_16x16x16_f16").supports_cbsz_abid
    assert not get_instruction("gfx942", "v_mfma_f64_4x4x4_4b_f64").supports_cbsz_abid


def test_errors_name_the_problem():
    with pytest.raises(LayoutError, match="did you mean v_mfma_f32_32x32x8_f16"):
        get_instruction("gfx942", "v_mfma_f32_32x32x8_f61")
    with pytest.raises(LayoutError, match="available on gfx950"):
        get_instruction("gfx942", "v_mfma_f32_16x16x32_f16")
    with pytest.raises(LayoutError, match="unknown arch"):
        instructions_for("gfx9999")
    with pytest.raises(LayoutError, match="no MFMA"):
        instructions_for("gfx1100")
    with pytest.raises(LayoutError, match="formats apply to the f8f6f4"):
        get_instruction("gfx942", "v_mfma_f32_32x32x8_f16", a_format="fp4")
    with pytest.raises(LayoutError, match="unknown B format"):
        get_instruction("gfx950", "v_mfma_f32_16x16x128_f8f6f4", b_format="fp5")
    with pytest.raises(LayoutError, match="unknown A format"):
        get_instruction("gfx950", "v_mfma_f32_16x16x128_f8f6f4", a_format=["fp8"])
    with pytest.raises(LayoutError, match="operand must be"):
        get_instruction("gfx942", "v_mfma_f32_32x32x8_f16").registers("E")
    with pytest.raises(LayoutError):
        get_instruction("gfx942", 7)


def test_wmma_catalog():
    assert len(wmma_instructions_for("gfx1100")) == 6 and len(wmma_instructions_for("gfx1200")) == 11
    w = get_wmma_instruction("gfx1201", "v_wmma_f32_16x16x16_fp8_bf8")
    assert (w.intrinsic, w.rocdl) == ("llvm.amdgcn.wmma.f32.16x16x16.fp8.bf8", "rocdl.wmma.f32.16x16x16.fp8_bf8")
    assert get_wmma_instruction("gfx1100", "rocdl.wmma.f32.16x16x16.f16").registers("A") == 8
    assert get_wmma_instruction("gfx1250", "v_wmma_f32_16x16x4_f32").registers("A") == 2
    with pytest.raises(LayoutError, match="did you mean"):
        get_wmma_instruction("gfx1200", "v_wmma_f32_16x16x16_f61")
    with pytest.raises(LayoutError, match="no WMMA"):
        wmma_instructions_for("gfx942")
