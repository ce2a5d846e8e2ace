"""Conversion between the 8-bit and the 16-bit MFMA operand layouts of one tile, with the
element conversion fp8 <-> f16: the data movement of mixed-precision GEMMs (fp8 weights
feeding f16 MFMAs, or f16 activations quantized for fp8 MFMAs).

On gfx942 an fp8 MFMA operand (``v_mfma_f32_32x32x16_fp8_fp8``) holds 8 consecutive K values
per lane, an f16 one (``v_mfma_f32_32x32x8_f16``) 4: the same ``32 x K`` tile sits in
different lanes and registers, so the conversion crosses lanes.  On gfx950 the chosen
instructions are ``v_mfma_f32_32x32x64_f8f6f4`` (16-value K runs, 32 per lane) and
``v_mfma_f32_32x32x16_f16`` (8 per lane); with ``--fp8-instr v_mfma_f32_32x32x16_fp8_fp8``
both hold 8 and the conversion is free.

Layout decision: the layout conversion may run on the 8-bit or on the 16-bit elements (before
or after the element conversion).  Both are planned (``linlayout.synth.convert.plan_conversion``,
verified on the wave emulator) and the cheaper is emitted; 8-bit elements pack four to a
register, so they usually move in half the instructions.

Kernel ``fp8_fp16(X, Y, M, K)``: X (``M x K``, source dtype) is loaded in the source operand
layout (16-byte loads along K), converted, and stored in the destination operand layout as
``Y`` (destination dtype); ``Y`` must equal ``X`` converted element-wise.
fp8 is E4M3 (gfx942 FNUZ, gfx950 OCP); f16 -> fp8 rounds to nearest even.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import torch

from linlayout import LayoutError, LinearLayout
from linlayout.lowering.emit import atoms
from linlayout.lowering.emit.builder import Builder, kernel_module, vector_type
from linlayout.lowering.emit.conversion_kernel import MERGED_ACCESS_DWORDS
from linlayout.lowering.emit.lane_values import LaneValues
from linlayout.lowering.emit.plan_ops import PlanEmitter
from linlayout.synth.convert import plan_conversion
from linlayout.synth.plan import Plan

from . import common
from .convert import lds_instructions
from .dtypes import DtypeInfo, dtype_info, random_values
from .gemm import choose_instruction
from .mfma_tiles import MfmaTiling
from .regs import Registers
from .tile_io import GlobalTile

__all__ = ["DIRECTIONS", "Fp8Fp16Plan", "plan_fp8_fp16", "emit_fp8_fp16", "add_arguments", "build", "make_case"]

DIRECTIONS = ("fp8-to-f16", "f16-to-fp8")
#: Rows of the tile (the M of the 32x32 MFMAs).
TILE_M = 32
#: Threads of the workgroup: one wave64.
THREADS = 64


@dataclass
class Fp8Fp16Plan:
    """The operand layouts of both widths, the conversion plans at 8 and 16 bits, and the choice."""

    arch: str
    direction: str
    src: DtypeInfo
    dst: DtypeInfo
    src_layout: LinearLayout
    dst_layout: LinearLayout
    k: int
    plan: Plan
    convert_at_bits: int
    options: dict
    instructions: dict

    def describe(self) -> dict:
        return {"direction": self.direction, "tile": [TILE_M, self.k], "instructions": self.instructions,
                "src_layout": self.src_layout.to_json()["bases"], "dst_layout": self.dst_layout.to_json()["bases"],
                "layout_conversion_at_bits": self.convert_at_bits,
                "plan": {"strategy": self.plan.strategy, "counts": {k: v for k, v in self.plan.counts().items() if v},
                         "cost": round(float(self.plan.cost), 3), "verified_on_emulator": self.plan.verified},
                "options": self.options}


def plan_fp8_fp16(arch: str, direction: str, fp8_instr: str | None = None, f16_instr: str | None = None) -> Fp8Fp16Plan:
    """Operand layouts of the arch's fp8 and f16 MFMAs over a ``32 x K`` tile and the cheaper conversion."""
    if direction not in DIRECTIONS:
        raise LayoutError(f"direction {direction!r} must be one of {', '.join(DIRECTIONS)}")
    i8, _ = choose_instruction(arch, "fp8", fp8_instr)
    i16, _ = choose_instruction(arch, "f16", f16_instr)
    k = max(i8.k, i16.k, 32)
    l8 = MfmaTiling(i8, (1, 1), (1, 1), k, 1).operand("A")
    l16 = MfmaTiling(i16, (1, 1), (1, 1), k, 1).operand("A")
    f8, f16 = dtype_info("fp8", arch), dtype_info("f16", arch)
    src, dst, ls, ld = (f8, f16, l8, l16) if direction == "fp8-to-f16" else (f16, f8, l16, l8)
    options, best = {}, None
    for bits in (8, 16):
        p = plan_conversion(ls, ld, arch, bits, src_tuple_dwords=_src_tuple_dwords(ls, src, bits))
        options[f"at_{bits}_bits"] = {"strategy": p.strategy, "counts": {k_: v for k_, v in p.counts().items() if v},
                                      "cost": round(float(p.cost), 3)}
        if best is None or p.cost < best[0].cost:
            best = (p, bits)
    return Fp8Fp16Plan(arch, direction, src, dst, ls, ld, k, best[0], best[1], options,
                       {"fp8": i8.name, "f16": i16.name,
                        "k_per_lane": {"fp8": i8.items_per_lane("A"), "f16": i16.items_per_lane("A")}})


# ---------------------------------------------------------------------- element conversion on dwords
def _dwords(b: Builder, regs: Registers, n_regs: int, per: int) -> dict[int, str]:
    """The layout's registers packed ``per`` to an i32 (register r = element r % per of dword r // per)."""
    vt = vector_type(per, regs.elem)
    return {d: b.value(f"llvm.bitcast {regs.gather(list(range(d * per, d * per + per)))} : {vt} to i32", "dw")
            for d in range(n_regs // per)}


def _fp8_to_f16(b: Builder, words: dict[int, str]) -> dict[int, str]:
    """4 fp8 per dword -> 2 f16 per dword (dword d -> 2d, 2d+1; element order kept)."""
    out = {}
    for d, w in words.items():
        for half in (0, 1):
            pair = b.value(f"rocdl.cvt.pk.f32.fp8 {w}[{'true' if half else 'false'}] : vector<2xf32>", "f8")
            h = [b.cast("arith.truncf", b.value(f"vector.extract {pair}[{i}] : f32 from vector<2xf32>", "el"),
                        "f32", "f16") for i in (0, 1)]
            out[2 * d + half] = b.value(f"llvm.bitcast {b.build_vector(h, 'f16')} : vector<2xf16> to i32", "dw")
    return out


def _f16_to_fp8(b: Builder, words: dict[int, str]) -> dict[int, str]:
    """2 f16 per dword -> 4 fp8 per dword (dwords 2d, 2d+1 -> d; element order kept), round to nearest even."""
    out = {}
    for d in range(len(words) // 2):
        acc = b.const(0)
        for half in (0, 1):
            v = b.value(f"llvm.bitcast {words[2 * d + half]} : i32 to vector<2xf16>", "h")
            f = [b.cast("arith.extf", b.value(f"vector.extract {v}[{i}] : f16 from vector<2xf16>", "el"), "f16", "f32")
                 for i in (0, 1)]
            acc = atoms.cvt_pk_fp8_f32(b, f[0], f[1], acc, bool(half))
        out[d] = acc
    return out


def emit_fp8_fp16(plan: Fp8Fp16Plan, name: str = "fp8_fp16") -> str:
    """The MLIR of the kernel (see the module docstring)."""
    b = Builder()
    tid, _t32, lane, warp = atoms.thread_ids(b)
    lanes = LaneValues(b, tid, lane, warp, 1, 64, plan.arch)
    M, K = "%M", "%K"
    rx = atoms.buffer_rsrc_value(b, "%X", b.cast("arith.extui", b.arith("muli", b.arith("muli", M, K),
                                                                        b.const(plan.src.bytes)), "i32", "i64"))
    ry = atoms.buffer_rsrc_value(b, "%Y", b.cast("arith.extui", b.arith("muli", b.arith("muli", M, K),
                                                                        b.const(plan.dst.bytes)), "i32", "i64"))
    n_regs = plan.src_layout.in_dim_size("register")
    vec_src = _run_length(plan.src_layout)
    vec_dst = _run_length(plan.dst_layout)
    x_tile = GlobalTile(b, lanes, plan.src_layout, 1, vec_src, plan.src.storage, "X")
    y_tile = GlobalTile(b, lanes, plan.dst_layout, 1, vec_dst, plan.dst.storage, "Y")
    lds, lds_globals = atoms.plan_lds(b, "fp8_fp16_lds", plan.plan.lds_bytes)  # the plan's round trip, if any
    conv = PlanEmitter(b, plan.plan, lanes, lds)
    conv.prepare()
    x = x_tile.load(rx, b.const(0), b.const(0), M, K, K)
    words = _dwords(b, x, n_regs, 32 // plan.src.bits)
    upcast = plan.direction == "fp8-to-f16"
    element = _fp8_to_f16 if upcast else _f16_to_fp8
    if plan.convert_at_bits != plan.src.bits:
        words = element(b, words)
    atoms.region_marker(b, "conv", "begin")
    words = conv.emit(words)
    atoms.region_marker(b, "conv", "end")
    if plan.convert_at_bits == plan.src.bits:
        words = element(b, words)
    per = 32 // plan.dst.bits
    y = Registers(b, plan.dst.storage)
    for d, w in words.items():
        y.put(list(range(d * per, d * per + per)), b.value(f"llvm.bitcast {w} : i32 to {vector_type(per, y.elem)}", "v"))
    y_tile.store(y, ry, b.const(0), b.const(0), M, K, K)
    return kernel_module(name, [("%X", "!llvm.ptr<1>"), ("%Y", "!llvm.ptr<1>"), ("%M", "i32"), ("%K", "i32")],
                         b.body(), THREADS, list(lanes.globals) + lds_globals)


def _src_tuple_dwords(layout: LinearLayout, src: DtypeInfo, bits: int) -> int:
    """The dwords of the VGPR tuples the conversion's src arrives in at ``bits`` (``plan_conversion``'s
    ``src_tuple_dwords``): at the src width, the kernel's global loads of ``_run_length`` elements (one tuple
    each, of at most ``MERGED_ACCESS_DWORDS``: gfx942's f16 A operand in 2-dword loads, whose halves of a
    joined ``ds_write2_b64`` compile with no copy, cost.joined_pair_copies); at the other width, the element
    conversion's values, each computed where its first use wants it (1)."""
    if bits != src.bits:
        return 1
    return min(MERGED_ACCESS_DWORDS, max(1, _run_length(layout) * src.bits // 32))


def _run_length(layout: LinearLayout) -> int:
    """Registers ``0 .. n-1`` that are consecutive columns (the operand's K run per lane)."""
    n = 1
    regs = layout.bases["register"]
    while n.bit_length() - 1 < len(regs) and regs[n.bit_length() - 1] == [0, n]:
        n *= 2
    return n


# ---------------------------------------------------------------------- command line
def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--direction", choices=DIRECTIONS, default="fp8-to-f16", help="default fp8-to-f16")
    p.add_argument("--m", type=int, default=32, help="rows of the tile present in memory (1..32, default 32)")
    p.add_argument("--fp8-instr", help="the fp8 MFMA whose operand layout is used (default: chosen per arch)")
    p.add_argument("--f16-instr", help="the f16 MFMA whose operand layout is used (default: chosen per arch)")


def build(args: argparse.Namespace) -> common.KernelBuild:
    if not 1 <= args.m <= TILE_M:
        raise LayoutError(f"--m must be in 1..{TILE_M}")
    plan = plan_fp8_fp16(args.arch, args.direction, args.fp8_instr, args.f16_instr)
    return common.KernelBuild("fp8_fp16", args.arch, emit_fp8_fp16(plan), lds_instructions(plan.plan),
                              plan.describe(), regions=("conv",), extra={"plan": plan})


def make_case(kb: common.KernelBuild, args: argparse.Namespace, seed: int) -> common.Case:
    plan: Fp8Fp16Plan = kb.extra["plan"]
    x = random_values((args.m, plan.k), plan.src.name, args.arch, seed, scale=4.0)
    y = torch.zeros((args.m, plan.k), dtype=plan.dst.torch_dtype)
    return common.Case([x, y, args.m, plan.k], (1, 1, 1), (THREADS, 1, 1), {1: x.to(torch.float32).to(plan.dst.torch_dtype)},
                       0.0, 0.0, {"M": args.m, "K": plan.k, "direction": args.direction})


def main(argv: list[str] | None = None) -> int:
    """``linlayout kernel fp8_fp16 ARGV``: the exit status."""
    return common.main("fp8_fp16", __doc__.split("\n\n")[0], add_arguments, build, make_case, argv)


if __name__ == "__main__":
    raise SystemExit(main())
