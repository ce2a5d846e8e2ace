"""Small MLIR text helpers the kernels share on top of ``linlayout.lowering.emit.builder.Builder``:
``scf.for`` with loop-carried values, float constants and comparisons."""

from __future__ import annotations

from typing import Callable, Sequence

from linlayout.hw.mfma import MfmaInstruction, get_instruction
from linlayout.lowering.emit import atoms
from linlayout.lowering.emit.builder import Builder, vector_type

__all__ = ["scf_for", "fconst", "ult", "and1", "index_to_i32", "float_vector", "UNIT_SCALES",
           "mfma_unit_scale", "mfma_operand"]

#: E8M0 scales 1.0 (byte 127) in every byte: the scale operand of an F8F6F4 MFMA that does not scale.
UNIT_SCALES = 0x7F7F7F7F


def fconst(b: Builder, value: float, type_: str = "f32") -> str:
    """A float (or dense float vector, ``type_`` ``vector<..>``) constant; f32 infinities as bit patterns."""
    if value != value:
        raise ValueError("a NaN constant is not supported")
    if abs(value) == float("inf"):
        if type_ != "f32":
            raise ValueError(f"an infinite constant needs type f32, not {type_}")
        lit = "0xFF800000" if value < 0 else "0x7F800000"
    else:
        lit = repr(float(value))
        if "e" not in lit and "." not in lit:
            lit += ".0"
    if type_.startswith("vector"):
        return b.value(f"arith.constant dense<{lit}> : {type_}", "cf")
    return b.value(f"arith.constant {lit} : {type_}", "cf")


def float_vector(n: int) -> str:
    return f"vector<{n}xf32>" if n > 1 else "f32"


def ult(b: Builder, x: str, y: str) -> str:
    """``x < y`` unsigned (i32) as i1."""
    return b.value(f"arith.cmpi ult, {x}, {y} : i32", "lt")


def and1(b: Builder, x: str, y: str) -> str:
    return b.arith("andi", x, y, "i1")


def index_to_i32(b: Builder, x: str) -> str:
    return b.cast("arith.index_cast", x, "index", "i32")


def scf_for(b: Builder, upper: str, carried: Sequence[tuple[str, str]],
            body: Callable[[str, list[str]], list[str]]) -> list[str]:
    """``for i in [0, upper)`` (``upper`` an i32) carrying ``(initial value, type)`` values.

    ``body(i, args)`` emits the loop body (``i`` the i32 induction variable, ``args`` the
    carried values) and returns the values to carry on; returns the final values.
    """
    lb, step = b.const(0, "index"), b.const(1, "index")
    ub = b.cast("arith.index_cast", upper, "i32", "index")
    iv = b.fresh("kb")
    args = [b.fresh("carry") for _ in carried]
    types = ", ".join(t for _, t in carried)
    res = b.fresh("loop")
    inits = ", ".join(f"{a} = {v}" for a, (v, _) in zip(args, carried))
    head = f"{res}:{len(carried)} = " if len(carried) > 1 else (f"{res} = " if carried else "")
    b.line(f"{head}scf.for {iv} = {lb} to {ub} step {step} iter_args({inits}) -> ({types}) {{"
           if carried else f"scf.for {iv} = {lb} to {ub} step {step} {{")
    outs = body(b.cast("arith.index_cast", iv, "index", "i32"), args)
    if len(outs) != len(carried):
        raise ValueError(f"loop body returned {len(outs)} values for {len(carried)} carried ones")
    b.line(f"scf.yield {', '.join(outs)} : {types}" if carried else "scf.yield")
    b.line("}")
    return [f"{res}#{i}" for i in range(len(carried))] if len(carried) > 1 else ([res] if carried else [])


def mfma_unit_scale(b: Builder, ins: MfmaInstruction, a: str, bb: str, c: str) -> str:
    """``D = A B + C`` with ``ins``; a gfx950 F8F6F4 instruction is issued as its
    ``v_mfma_scale_`` twin with every E8M0 scale 127 (= 1.0, :data:`UNIT_SCALES`).

    The unscaled F8F6F4 MFMAs exist in LLVM only as the scale intrinsic with zero scale
    operands (which LLVM selects as the unscaled instruction), while E8M0 byte 0 means
    2**-127 to the wave interpreter; scales of 1.0 mean the same to both."""
    if ins.is_f8f6f4 and not ins.scaled:
        twin = get_instruction(ins.arch, "v_mfma_scale_" + ins.name[len("v_mfma_"):], ins.a_type, ins.b_type)
        one = b.const(UNIT_SCALES)
        return atoms.mfma(b, twin, a, bb, c, scale_a=one, scale_b=one)
    return atoms.mfma(b, ins, a, bb, c)


def mfma_operand(b: Builder, regs, tiling, operand: str, g: int, tile: int, mlir_t: str) -> str:
    """Operand ``A``/``B`` of the MFMA of group ``g``, tile ``tile`` of ``tiling``
    (linlayout.kernels.mfma_tiles.MfmaTiling) from ``regs`` (linlayout.kernels.regs.Registers), as the
    instruction's operand type ``mlir_t``."""
    rl = list(tiling.operand_registers(operand, g, tile))
    got = regs.gather(rl)
    from_t = vector_type(len(rl), regs.elem)
    return got if from_t == mlir_t else b.value(f"llvm.bitcast {got} : {from_t} to {mlir_t}", "bc")
