"""``linlayout demo``: the four questions, answered end to end on one MFMA tile.

1. Layouts: the ISA catalog's C layout of ``v_mfma_f32_32x32x8_f16`` equals
   Triton's MFMA encoding (``equivalent`` proves it or gives a counterexample).
2. Banks: MFMA operand A (kWidth 4, fp16) read from an unswizzled row-major LDS
   tile on gfx942, then from the swizzle synthesized for that reader and the
   global-load writer.
3. Convert: the flash-attention P conversion (32x32 accumulator -> operand A,
   kWidth 8, fp16, 4 waves) planned for gfx942 and gfx950, executed on the wave
   emulator before it is returned.
4. Compile: that plan lowered to ROCDL MLIR, compiled to an HSA code object,
   its ISA counted, and the MLIR run on the wave interpreter against the tile.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from linlayout.lowering.conversion import lower_conversion
from linlayout.lowering.emit.host import distinct_tile, expected_output, interpret
from linlayout.synth.convert import plan_conversion
from linlayout.synth.lds_access import tile_access_report
from linlayout.synth.swizzle import synthesize

from ..equivalence import equivalent
from ..hw.mfma import get_instruction, mfma_layouts
from ..spec import parse_layout
from . import add_command

ACC = "mfma:32x32x8,warps=4x1,shape=128x64"
OPERAND = "mfma.a:32x32x8,warps=4x1,shape=128x64,kwidth=8"
BANK_READER = "mfma.a:32x32x8,warps=1x1,shape=32x64,kwidth=4"
BANK_WRITER = "blocked:spt=1x8,tpw=8x8,wpc=1x1,order=1x0,shape=32x64"
BANK_PLAIN = "swizzled:vec=1,phase=1,maxphase=1,order=1x0,shape=32x64"


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "demo", __doc__)
    p.add_argument("--no-compile", action="store_true", help="skip step 4 (MLIR compile and interpretation)")
    p.set_defaults(func=run)


def _layouts() -> dict:
    isa_c = mfma_layouts(get_instruction("gfx942", "v_mfma_f32_32x32x8_f16"), "gfx942")["C"]
    triton_c = parse_layout("mfma:32x32x8,warps=1x1,shape=32x32").sublayout(["register", "lane"], ["dim0", "dim1"])
    same = equivalent(isa_c, triton_c)
    near = equivalent(isa_c, triton_c.transpose_outs(["dim1", "dim0"]).rename_out_dim("dim1", "x")
                      .rename_out_dim("dim0", "dim1").rename_out_dim("x", "dim0"))
    return {"isa_equals_triton": same.equal, "transposed_differs_at": near.input,
            "isa_output": near.output_a, "transposed_output": near.output_b}


def _banks() -> dict:
    reader = parse_layout(BANK_READER)
    plain = tile_access_report(parse_layout(BANK_PLAIN), reader, 16, "gfx942")
    sw = synthesize(parse_layout(BANK_WRITER), reader, 16, "gfx942")
    fixed = tile_access_report(sw.shared, reader, 16, "gfx942")
    return {
        "unswizzled": {"op": plain.choice.op, "cycles": plain.total_cycles, "ideal": plain.ideal_cycles},
        "swizzled": {"op": fixed.choice.op, "cycles": fixed.total_cycles, "ideal": fixed.ideal_cycles,
                     "conflict_free": fixed.conflict_free, "write_op": sw.write_op,
                     "write_cycles": sw.write_cycles, "optimal": sw.optimal},
        "swizzle_offset_bases": sw.shared.bases["offset"],
    }


def _convert(compile_kernels: bool) -> dict:
    src, dst = parse_layout(ACC), parse_layout(OPERAND)
    out = {}
    for arch in ("gfx942", "gfx950"):
        t0 = time.perf_counter()
        plan = plan_conversion(src, dst, arch, 16)
        entry = {"strategy": plan.strategy, "verified": plan.verified, "plan_counts": plan.counts(),
                 "plan_seconds": round(time.perf_counter() - t0, 4), "pseudo_asm": plan.pseudo_asm()}
        if compile_kernels:
            entry.update(_compile(plan))
        out[arch] = entry
    return out


def _compile(plan) -> dict:
    low = lower_conversion(plan, binary=True)
    tile = distinct_tile(low.kernel.shape, plan.element_bits)
    ran = interpret(low.kernel, tile)
    return {"isa_counts": low.report["isa_counts"], "plan_isa_differences": low.differences,
            "fatbin_bytes": len(low.compiled.binary), "interpreted_equal": bool(np.array_equal(ran, expected_output(plan, tile)))}


def run(args: argparse.Namespace) -> dict:
    t0 = time.perf_counter()
    result = {"layouts": _layouts(), "banks": _banks(), "convert": _convert(not args.no_compile)}
    result["seconds"] = round(time.perf_counter() - t0, 2)
    return result


def render(r: dict, args: argparse.Namespace) -> str:
    lay, banks = r["layouts"], r["banks"]
    lines = ["linlayout demo: one MFMA tile, four questions", "",
             "1. Layouts: is the ISA's C layout of v_mfma_f32_32x32x8_f16 Triton's mfma(32) encoding?",
             f"   equivalent: {lay['isa_equals_triton']}; with rows and columns swapped they first differ at "
             f"{lay['transposed_differs_at']}: {lay['isa_output']} vs {lay['transposed_output']}", "",
             "2. Banks: MFMA operand A (fp16, kWidth 4) read from a 32x64 LDS tile on gfx942",
             f"   unswizzled row-major: {banks['unswizzled']['op']}, {banks['unswizzled']['cycles']} cycles "
             f"vs {banks['unswizzled']['ideal']} ideal",
             f"   synthesized swizzle:  {banks['swizzled']['op']}, {banks['swizzled']['cycles']} cycles vs "
             f"{banks['swizzled']['ideal']} ideal (conflict-free: {banks['swizzled']['conflict_free']}); "
             f"writes {banks['swizzled']['write_op']} at {banks['swizzled']['write_cycles']} cycles", "",
             "3. Convert: flash-attention P, 32x32 accumulator -> operand A (kWidth 8), fp16, 4 waves"]
    for arch, e in r["convert"].items():
        c = {k: v for k, v in e["plan_counts"].items() if v and k != "total"}
        lines.append(f"   {arch}: {e['strategy']} plan, {e['plan_counts']['total']} instructions {c}, "
                     f"verified on the wave emulator: {e['verified']} ({e['plan_seconds'] * 1000:.0f} ms)")
    if "isa_counts" in next(iter(r["convert"].values())):
        lines += ["", "4. Compile: the plan as ROCDL MLIR -> HSA code object, ISA of the conversion region"]
        for arch, e in r["convert"].items():
            isa = {k: v for k, v in e["isa_counts"].items() if v and k not in ("total", "valu")}
            lines.append(f"   {arch}: {e['isa_counts']['total']} instructions {isa}; code object "
                         f"{e['fatbin_bytes']} bytes; ISA matches plan: {not e['plan_isa_differences']}; "
                         f"MLIR interpreted = expected tile: {e['interpreted_equal']}")
    lines += ["", f"done in {r['seconds']} s"]
    return "\n".join(lines)
