"""``linlayout convert --src L --dst L --arch A --dtype D``: the cheapest verified conversion plan.

Prints the plan (pseudo-assembly), its instruction counts, cost and the analytic
lower bound.  ``--plan FILE`` writes the plan certificate (docs/contract.md section 4);
``--emit mlir|isa|fatbin|cuda|hip -o FILE`` hands the plan to the lowering package
(``linlayout.lowering.conversion.write_conversion``), whose keys (``isa_counts``,
``lds_bytes``, ...; for C++ the test kernel's names and launch shape) join the JSON.

What the author's kernel does around the conversion (``plan_conversion``'s keywords): ``--src-unpacked`` /
``--dst-unpacked`` (a side held one 8/16-bit element per VGPR), ``--dst-one-copy`` (one copy of each dst
element held in several lanes stored, from the canonical lanes: the kernel masks its stores),
``--src-global-strides`` (the src loaded
from a global tensor of those element strides right before the conversion), ``--src-tuple-dwords`` /
``--dst-tuple-dwords`` (the VGPR tuples the src arrives in / the dst's consumer takes).  ``row-major``
names what a kernel moving the full row-major tile does, the one ``--emit`` writes (``row_major_strides``
of the layouts' out-dim sizes; ``source_tuples``, or single dwords for an unpacked side, as
``linlayout.cli.bench.kernel_plan`` and ``plan_free_packing`` plan it).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from linlayout.lowering.conversion import EMIT_FORMATS, write_conversion
from linlayout.lowering.cpp import DIALECTS
from linlayout.lowering.emit.conversion_kernel import source_tuples
from linlayout.hw.targets import get_target
from linlayout.synth.context import ELEMENT_BITS, dword_bits
from linlayout.synth.convert import ONE_COPY_FORM, UNPACKED_FORM, plan_conversion, rank_value, require_amd
from linlayout.synth.cost import (CONCURRENT_INSTRUCTION_EXPONENT, DST_TUPLE_DWORDS, OBJECTIVES, SRC_TUPLE_DWORDS,
                                  cost_model)
from linlayout.synth.plan import unpacked_src
from linlayout.synth.src_offsets import row_major_strides
from linlayout.synth.vgpr_tuples import TUPLE_DWORDS, VgprTuples

from ..argparsing import add_unpacked_arguments, check_output, positive_int
from ..dtypes import dtype_bits
from ..errors import LayoutError
from ..spec import parse_layout
from . import add_command

#: The value of ``--src-global-strides``, ``--src-tuple-dwords`` and ``--dst-tuple-dwords`` that names what a
#: kernel moving the full row-major tile does (the kernel ``--emit`` writes, the bench's).
ROW_MAJOR = "row-major"
#: The flags (their ``args`` names) saying what the kernel does around the conversion.
KERNEL_FLAGS = ("src_unpacked", "dst_unpacked", "dst_one_copy", "src_global_strides", "src_tuple_dwords",
                "dst_tuple_dwords")


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
    add_unpacked_arguments(p)
    p.add_argument("--src-global-strides", type=strides_arg, metavar="row-major|S0,S1,..",
                   help="the kernel loads the src from a global tensor of these element strides (one per out dim of "
                        "--src, in its order) right before the conversion; the plan prices LDS addresses that reuse "
                        "the load's offset registers.  row-major: the full tile's (the layouts' out-dim sizes, as "
                        "the --emit kernel loads it)")
    p.add_argument("--src-tuple-dwords", type=tuples_arg, metavar="row-major|N|bits:B[,B]",
                   help="the aligned VGPR tuples the src arrives in: N dwords in register order (1, 2 or 4; "
                        f"default {SRC_TUPLE_DWORDS}: an MFMA result, dwordx4 loads), bits:B[,B] the dword-index bits "
                        "that vary inside one tuple, row-major those of loads of the full row-major tile (the --emit "
                        "kernel's; 1 with --src-unpacked)")
    p.add_argument("--dst-tuple-dwords", type=tuples_arg, metavar="row-major|N|bits:B[,B]",
                   help=f"the aligned VGPR tuples the dst's consumer takes: N (1, 2 or 4; default {DST_TUPLE_DWORDS}: "
                        "none; 2 or 4: dwordx2/x4 stores, an MFMA/WMMA operand), bits:B[,B] or row-major (stores of "
                        "the full row-major tile, the --emit kernel's; 1 with --dst-unpacked), as --src-tuple-dwords")
    p.add_argument("--emit", choices=list(EMIT_FORMATS),
                   help="also write this artifact (needs -o): the MLIR kernel, its ISA or code object, or the "
                        "plan as CUDA or HIP C++ (a device function and a test kernel, docs/cpp.md)")
    p.add_argument("-o", "--output", metavar="FILE", help="output file of --emit")
    p.set_defaults(func=run)


def strides_arg(text: str):
    """``--src-global-strides``' type: :data:`ROW_MAJOR`, or element strides ``S0,S1,..`` (positive integers)."""
    if text == ROW_MAJOR:
        return ROW_MAJOR
    try:
        strides = tuple(int(s) for s in text.split(","))
    except ValueError:
        strides = ()
    if not strides or any(s <= 0 for s in strides):
        raise argparse.ArgumentTypeError(f"{text!r} must be {ROW_MAJOR} or element strides S0,S1,.. (positive "
                                         "integers, one per out dim of --src)")
    return strides


def tuples_arg(text: str):
    """``--src-tuple-dwords`` / ``--dst-tuple-dwords``' type: :data:`ROW_MAJOR`; an int ``N`` of
    ``TUPLE_DWORDS``; or ``bits:B[,B]``, a tuple of at most two distinct dword-index bits (``bits:`` none):
    what ``plan_conversion``'s ``src_tuple_dwords`` takes (``VgprTuples.of``)."""
    if text == ROW_MAJOR:
        return ROW_MAJOR
    head, sep, tail = text.partition(":")
    try:
        value = (tuple(int(b) for b in tail.split(",")) if tail else ()) if sep and head == "bits" else int(text)
        VgprTuples.of(text, value)
        return value
    except (ValueError, LayoutError):
        raise argparse.ArgumentTypeError(
            f"{text!r} must be {ROW_MAJOR}, {', '.join(map(str, TUPLE_DWORDS[:-1]))} or {TUPLE_DWORDS[-1]}, or "
            "bits:B[,B] (at most two distinct dword-index bits)") from None


def kernel_inputs(args: argparse.Namespace, src, dst, element_bits: int) -> dict:
    """``plan_conversion``'s keywords for what the kernel does around the conversion, from the flags
    (:data:`ROW_MAJOR` resolved: ``row_major_strides`` of the src's out-dim sizes; ``source_tuples`` of the
    side, or single dwords for a side held one element per VGPR, as ``plan_free_packing`` plans it).  A
    stride count other than the src's out dims is a LayoutError naming the flag."""
    strides = args.src_global_strides
    dims = [name for name, _ in src.out_dims]
    if strides == ROW_MAJOR:
        strides = row_major_strides([size for _, size in src.out_dims])
    elif strides is not None and len(strides) != len(dims):
        raise LayoutError(f"--src-global-strides {','.join(map(str, strides))}: {len(strides)} stride(s) for the "
                          f"src's {len(dims)} out dims {dims}; give one per out dim, in that order")

    def tuples(flag: str, given, layout, side_dwords, unpacked: bool, default):
        if given == ROW_MAJOR:
            return 1 if unpacked else source_tuples(layout, element_bits)
        if given is not None:  # (bits beyond the side's dwords: the flag named)
            VgprTuples.of(flag, given, dword_bits(side_dwords, element_bits))
        return default if given is None else given

    return {"src_unpacked": args.src_unpacked, "dst_unpacked": args.dst_unpacked, "dst_one_copy": args.dst_one_copy,
            "src_global_strides": strides,
            "src_tuple_dwords": tuples("--src-tuple-dwords", args.src_tuple_dwords, src,
                                       unpacked_src(src, element_bits) if args.src_unpacked else src,
                                       args.src_unpacked, SRC_TUPLE_DWORDS),
            "dst_tuple_dwords": tuples("--dst-tuple-dwords", args.dst_tuple_dwords, dst, dst, args.dst_unpacked,
                                       DST_TUPLE_DWORDS)}


def check_nvidia_flags(args: argparse.Namespace) -> None:
    """Refuse, before planning, ``--src-global-strides`` and the tuple flags for an NVIDIA target: its plans
    price no load line's address registers and no VGPR tuple copies (plan_conversion refuses
    ``src_global_strides`` there, and takes the tuples for none)."""
    if get_target(args.arch).family != "nvidia":
        return
    for flag, value in (("--src-global-strides", args.src_global_strides),
                        ("--src-tuple-dwords", args.src_tuple_dwords), ("--dst-tuple-dwords", args.dst_tuple_dwords)):
        if value is not None:
            raise LayoutError(f"{flag} is an AMD kernel input; {args.arch}'s plans price no load line's address "
                              "registers and no VGPR tuples")


def check_unpacked_emit(args: argparse.Namespace) -> None:
    """Refuse, before planning, an unpacked side or a dst read in one copy that ``--arch`` or ``--emit`` has no
    form for: NVIDIA targets (``require_amd``), and C++ (its function takes the src and returns the
    dst as packed registers, in every lane)."""
    for flag, on, form in (("--src-unpacked", args.src_unpacked, UNPACKED_FORM),
                           ("--dst-unpacked", args.dst_unpacked, UNPACKED_FORM),
                           ("--dst-one-copy", args.dst_one_copy, ONE_COPY_FORM)):
        if on:
            require_amd(flag, args.arch, form)
            if args.emit in DIALECTS:
                side = ("a dst stored from its canonical lanes alone" if flag == "--dst-one-copy"
                        else "a side held one element per VGPR")
                raise LayoutError(f"--emit {args.emit} with {flag}: the C++ function takes the src and returns the "
                                  f"dst as packed registers in every lane; {side} is the MLIR kernel's "
                                  "load/store form (--emit mlir|isa|fatbin)")


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
    check_unpacked_emit(args)
    check_nvidia_flags(args)
    element_bits = dtype_bits(args.dtype)
    if element_bits not in ELEMENT_BITS:
        raise LayoutError(f"--dtype {args.dtype} has {element_bits}-bit elements; conversions move elements of "
                          f"{', '.join(map(str, ELEMENT_BITS[:-1]))} or {ELEMENT_BITS[-1]} bits (the C++ and MLIR "
                          f"output too)")
    src, dst = parse_layout(args.src), parse_layout(args.dst)
    inputs = kernel_inputs(args, src, dst, element_bits)
    plan = plan_conversion(src, dst, args.arch, element_bits, lds_budget_bytes=args.lds_budget,
                           strategy=args.strategy, objective=args.objective, **inputs)
    result = {
        "strategy": plan.strategy,
        "verified": plan.verified,
        "plan_counts": plan.counts(),
        "overhead_estimate": plan.overhead,
        "total_with_overhead": plan.total_with_overhead(),
        "objective": plan.objective,
        "cost": plan.cost,
        "rank_value": rank_value(plan, cost_model(plan.arch, plan.objective)),
        "cost_detail": plan.cost_detail,
        "lower_bound": plan.lower_bound,
        "lds_bytes": plan.lds_bytes,
        "arch": plan.arch,
        "element_bits": plan.element_bits,
        "steps": len(plan.steps),
        "notes": plan.notes,
        "asm": plan.pseudo_asm(),
        "src_unpacked": plan.src_unpacked,
        "dst_unpacked": plan.dst_unpacked,
        "dst_one_copy": plan.dst_one_copy,
        "src_global_strides": None if inputs["src_global_strides"] is None else list(inputs["src_global_strides"]),
        **{f"{side}_tuples": _tuples_json(VgprTuples.of(f"{side}_tuple_dwords", inputs[f"{side}_tuple_dwords"]))
           for side in ("src", "dst")},
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


def _tuples_json(tuples: VgprTuples) -> dict:
    """``{"bits", "alone"}`` of the VGPR tuples a side was planned for (linlayout.synth.vgpr_tuples)."""
    return {"bits": list(tuples.bits), "alone": tuples.alone}


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
    if any(getattr(args, k, None) not in (None, False) for k in KERNEL_FLAGS):
        form = [f"{side} held one element per VGPR" for side in ("src", "dst") if result[f"{side}_unpacked"]]
        if result["dst_one_copy"]:
            form.append("dst stored in one copy from its canonical lanes")
        if result["src_global_strides"] is not None:
            form.append(f"src loaded with element strides {result['src_global_strides']}")
        form += [f"{side} tuples of dword bits {result[f'{side}_tuples']['bits']}"
                 + (f" (alone {result[f'{side}_tuples']['alone']})" if result[f"{side}_tuples"]["alone"] else "")
                 for side in ("src", "dst")]
        lines.append(f"planned for the kernel: {'; '.join(form)}")
    lines += [f"note: {n}" for n in result["notes"]]
    if "isa_counts" in result:
        lines.append(f"isa_counts: {json.dumps(result['isa_counts'])}")
    if result.get("plan_file"):
        lines.append(f"certificate written to {result['plan_file']}")
    lines.append(result["asm"])
    return "\n".join(lines)
