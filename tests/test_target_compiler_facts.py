"""The target descriptor's facts about what the ROCDL compiler makes of our MLIR (linlayout.hw.targets.Target:
``vop3_literal``, ``has_delay_alu``, ``waits_after_inline_asm``, ``has_bitop3``, ``has_xor3``), each checked on the
code it compiles for every AMD target with an emitter: a fact set wrong for a target fails here."""

from __future__ import annotations

import pytest

import needs
from linlayout.hw.targets import TARGETS

pytestmark = needs.mlir

AMD = sorted(name for name, t in TARGETS.items() if t.emitter == "rocdl")


def _isa(body: str, arch: str) -> list[str]:
    """The instruction lines of a lane kernel (interp_kernels.lane_kernel) of ``body`` compiled for ``arch``."""
    from interp_kernels import compiles, lane_kernel

    lines = [ln.strip() for ln in compiles(lane_kernel(body), arch).splitlines()]
    return [ln for ln in lines if ln and not ln.startswith((";", ".")) and not ln.endswith(":")]


def test_every_amd_target_is_checked():
    assert {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1200", "gfx1250"} <= set(AMD)


@pytest.mark.parametrize("arch", AMD)
def test_vop3_literal(arch):
    """A ``v_perm_b32`` with the constant selector 0x05040100 (no inline constant): the selector is the
    instruction's literal exactly where ``Target.vop3_literal`` says so, else it is moved into a register."""
    from linlayout import get_target

    body = """      %y = arith.muli %x, %x : i32
      %c = arith.constant 84148480 : i32
      %res = llvm.call_intrinsic "llvm.amdgcn.perm"(%x, %y, %c) : (i32, i32, i32) -> i32"""
    (perm,) = [ln for ln in _isa(body, arch) if ln.startswith("v_perm_b32")]
    assert perm.endswith("0x5040100") == get_target(arch).vop3_literal, perm


@pytest.mark.parametrize("arch", AMD)
def test_has_delay_alu(arch):
    """Three dependent VALU instructions: an ``s_delay_alu`` between them exactly where ``Target.has_delay_alu``
    says so."""
    from linlayout import get_target

    body = """      %a = arith.muli %x, %x : i32
      %b = arith.xori %a, %x : i32
      %res = arith.muli %b, %a : i32"""
    assert any(ln.startswith("s_delay_alu") for ln in _isa(body, arch)) == get_target(arch).has_delay_alu


@pytest.mark.parametrize("arch", AMD)
def test_waits_after_inline_asm(arch):
    """A VALU result through an empty inline asm (``atoms.opaque_word``'s) read by the next VALU instruction: an
    ``s_nop`` between them exactly where ``Target.waits_after_inline_asm`` says so."""
    from linlayout import get_target

    body = """      %y = arith.muli %x, %x : i32
      %o = llvm.inline_asm "", "=v,0" %y : (i32) -> i32
      %c = arith.constant 4660 : i32
      %res = arith.andi %o, %c : i32"""
    assert any(ln.startswith("s_nop") for ln in _isa(body, arch)) == get_target(arch).waits_after_inline_asm


@pytest.mark.parametrize("arch", AMD)
def test_has_bitop3(arch):
    """The XOR of two values masked by a constant (a lane-bit parity's ``m_S & K``): one ``v_bitop3_b32`` and no
    ``v_xor_b32`` exactly where ``Target.has_bitop3`` says so, else a ``v_xor_b32`` and a ``v_and_b32``."""
    from linlayout import get_target

    body = """      %a = arith.muli %x, %x : i32
      %b = arith.addi %a, %x : i32
      %c = arith.xori %a, %b : i32
      %k = arith.constant 4660 : i32
      %res = arith.andi %c, %k : i32"""
    ops = [ln.split()[0] for ln in _isa(body, arch)]
    fused = get_target(arch).has_bitop3
    assert ("v_bitop3_b32" in ops, any(op.startswith("v_xor_b32") for op in ops)) == (fused, not fused), ops


@pytest.mark.parametrize("arch", AMD)
def test_has_xor3(arch):
    """The XOR of an XOR with a third value (a parity of three lane bits): one ``v_xor3_b32`` exactly where
    ``Target.has_xor3`` says so, else two ``v_xor_b32``."""
    from linlayout import get_target

    body = """      %a = arith.muli %x, %x : i32
      %b = arith.addi %a, %x : i32
      %c = arith.muli %b, %x : i32
      %d = arith.xori %a, %b : i32
      %res = arith.xori %d, %c : i32"""
    ops = [ln.split()[0] for ln in _isa(body, arch)]
    merged = get_target(arch).has_xor3
    assert (ops.count("v_xor3_b32"), sum(op.startswith("v_xor_b32") for op in ops)) == ((1, 0) if merged else (0, 2))
