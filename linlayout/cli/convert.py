"""``linlayout convert --src L --dst L --arch A --dtype D``: the cheapest verified conversion plan.

Prints the plan (pseudo-assembly), its instruction counts, cost and the analytic
lower bound.  ``--plan FILE`` writes the plan certificate (docs/contract.md section 4);
``--emit mlir|isa|fatbin|cuda|hip -o FILE`` hands the plan to the lowering package
(``linlayout.lowering.conversion.write_conversion``), whose keys (``isa_counts``,
``lds_bytes``, ...; for C++ the test kernel's names and launch shape) join the JSON.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from linlayout.lowering.conversion import EMIT_FORMATS, write_conversion
from linlayout.synth.context import ELEMENT_BITS
from linlayout.synth.convert import plan_conversion
from linlayout.synth.cost import CONCURRENT_INSTRUCTION_EXPONENT, OBJECTIVES, cost_model

from ..argparsing import check_output, positive_int
from ..dtypes import dtype_bits
from ..errors import LayoutError
from ..spec import parse_layout
from . import add_command


def register(subparsers) -> None:
    p = add_command(
        subparsers, "convert",
        "The cheapest instruction sequence moving a tile from layout --src to layout --dst\n"
        "on one AMD or NVIDIA target: register renaming, in-wave lane moves (DPP, ds_swizzle,\n"
        "permlane swaps, ds_bpermute; shfl.sync on NVIDIA) with selects and byte permutes, or a\n"
        "round trip through LDS (shared memory).  Every plan is executed on the wave emulator before\n"
        "it is printed.  --emit mlir|isa|fatbin writes the kernel (AMD targets); --emit cuda|hip the\n"
        "plan as C++ (NVIDIA|AMD targets).",
    )
    p.add_argument("--src", required=True, metavar="L", help="src layout (JSON, @file, CuTe or a named spec)")
    p.add_argument("--dst", required=True, metavar="L", help="dst layout")
    p.add_argument("--arch", required=True, help="gfx90a, gfx942, gfx950, sm_80, sm_90, gfx1100, gfx1200 or gfx1250")
    p.add_argument("--dtype", required=True, metavar="DTYPE",
                   help="element type of 8, 16, 32 or 64 bits: f16 (or fp16, half), bf16, f32 (fp32), fp8 (e4m3), "
                        "bf8 (e5m2), i8, f64, ...")
    p.add_argument("--plan", metavar="FILE", help="write the plan certificate (JSON) to FILE")
    p.add_argument("--lds-budget", type=positive_int, metavar="BYTES",
                   help="LDS the conversion may use (rounds if smaller)")
    p.add_argument("--strategy", default="auto", choices=["auto", "registers", "lds"],
                   help="auto: cheapest; registers: stay in registers; lds: round trip through LDS")
    p.add_argument("--objective", choices=list(OBJECTIVES),
                   help="what cheapest means: concurrent (one wave's critical path plus the issue cycles of the "
                        "other waves of its SIMD converting with it, candidates ranked by that times their "
                        f"instructions to the power {CONCURRENT_INSTRUCTION_EXPONENT:g}; the AMD default), latency (one wave's critical "
                        "path; the NVIDIA default), throughput (the busiest of SIMD issue and LDS pipe, latency "
                        "hidden by other waves), instructions")
    p.add_argument("--emit", choices=list(EMIT_FORMATS),
                   help="also write this artifact (needs -o): the MLIR kernel, its ISA or code object, or the "
                        "plan as CUDA or HIP C++ (a device function and a test kernel, docs/cpp.md)")
    p.add_argument("-o", "--output", metavar="FILE", help="output file of --emit")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> dict:
    if args.emit and not args.output:
        raise LayoutError("--emit needs -o FILE")
    if args.output and not args.emit:
        raise LayoutError(f"-o is the output of --emit; give --emit {'|'.join(EMIT_FORMATS)}")
    for what, path in (("the plan certificate to", args.plan), (f"the --emit {args.emit} output to", args.output)):
        check_output(path, what)
    if args.plan and args.output and Path(args.plan).resolve() == Path(args.output).resolve():
        raise LayoutError(f"--plan and -o name one file {args.plan!r}; the --emit output would overwrite the "
                          "certificate")
    element_bits = dtype_bits(args.dtype)
    if element_bits not in ELEMENT_BITS:
        raise LayoutError(f"--dtype {args.dtype} has {element_bits}-bit elements; conversions move elements of "
                          f"{', '.join(map(str, ELEMENT_BITS[:-1]))} or {ELEMENT_BITS[-1]} bits (the C++ and MLIR "
                          f"output too)")
    src, dst = parse_layout(args.src), parse_layout(args.dst)
    plan = plan_conversion(src, dst, args.arch, element_bits, lds_budget_bytes=args.lds_budget,
                           strategy=args.strategy, objective=args.objective)
    result = {
        "strategy": plan.strategy,
        "verified": plan.verified,
        "plan_counts": plan.counts(),
        "overhead_estimate": plan.overhead,
        "total_with_overhead": plan.total_with_overhead(),
        "objective": plan.objective,
        "cost": plan.cost,
        "rank_value": cost_model(plan.arch, plan.objective).rank_value(plan.cost, plan.total_with_overhead()),
        "cost_detail": plan.cost_detail,
        "lower_bound": plan.lower_bound,
        "lds_bytes": plan.lds_bytes,
        "arch": plan.arch,
        "element_bits": plan.element_bits,
        "steps": len(plan.steps),
        "notes": plan.notes,
        "asm": plan.pseudo_asm(),
    }
    if args.plan:
        try:
            Path(args.plan).write_text(plan.dumps())
        except OSError as e:
            raise LayoutError(f"cannot write the plan certificate to {args.plan!r}: {e}") from None
        result["plan_file"] = args.plan
    if args.emit:
        result.update(write_conversion(plan, args.emit, args.output))
    return result


def render(result: dict, args: argparse.Namespace) -> str:
    c = result["plan_counts"]
    kinds = ", ".join(f"{k} {v}" for k, v in c.items() if v and k != "total")
    lb = result["lower_bound"]
    lines = [
        f"strategy: {result['strategy']}   verified on the wave emulator: {result['verified']}",
        f"instructions: {c['total']} ({kinds or 'none'}); estimated setup: "
        f"{sum(result['overhead_estimate'].values())} {json.dumps(result['overhead_estimate'])}",
        f"cost: {result['cost']:g} {'instructions' if result['objective'] == 'instructions' else 'cycles'} (model)   "
        f"lower bound: {lb.get('cost', 0):g} "
        f"(cross-lane dwords per lane >= {lb.get('cross_lane_dwords', 0)}, "
        f"cross-warp: {lb.get('cross_warp', False)})",
        f"objective: {result['objective']} (latency {result['cost_detail'].get('latency_value', 0):g}, "
        f"throughput {result['cost_detail'].get('throughput_value', 0):g} cycles; ranked by "
        f"{result['rank_value']:g}, linlayout.synth.cost.CostModel.rank_value)",
    ]
    if result["lds_bytes"]:
        lines.append(f"LDS bytes: {result['lds_bytes']}")
    lines += [f"note: {n}" for n in result["notes"]]
    if "isa_counts" in result:
        lines.append(f"isa_counts: {json.dumps(result['isa_counts'])}")
    if result.get("plan_file"):
        lines.append(f"certificate written to {result['plan_file']}")
    lines.append(result["asm"])
    return "\n".join(lines)
