"""``linlayout mfma ARCH INSTRUCTION``: the A, B and C/D register layouts of one instruction.

Also ``linlayout mfma ARCH --list`` (the instructions of an arch).  RDNA arches
(gfx1100, gfx1200, gfx1250) answer with their WMMA instructions in the same form, NVIDIA
arches (sm_80, sm_90) with mma.sync and wgmma (e.g. ``mma.m16n8k16.f16``; wgmma adds the
in dim ``warp`` and has no register B).
Layouts are docs/contract.md section 1 JSON with in dims ``register`` (packed item index in
the lane) and ``lane``, and out dims ``[block,] dim0, dim1``.
"""

from __future__ import annotations

import argparse

from ..errors import LayoutError
from ..hw import mfma as hw_mfma
from ..hw import wmma as hw_wmma
from ..hw.mfma import F8F6F4_FORMATS, get_instruction, instructions_for, mfma_layouts, mfma_scale_layouts
from ..hw.mma_nvidia import get_nvidia_mma, nvidia_mma_instructions_for, nvidia_mma_layouts
from ..hw.targets import get_target
from ..hw.wmma import get_wmma_instruction, wmma_instructions_for, wmma_layouts
from ..layout import LinearLayout
from . import add_command


def register(subparsers) -> None:
    p = add_command(
        subparsers, "mfma",
        "Print the A (M x K), B (K x N) and C/D (M x N) register layouts of one matrix instruction,\n"
        "with its registers, cycles and LLVM/ROCDL names; --list lists an arch's instructions.",
    )
    p.add_argument("arch", metavar="ARCH",
                   help="gfx90a, gfx942, gfx950 (MFMA), gfx1100, gfx1200, gfx1250 (WMMA) or sm_80, sm_90 (mma.sync)")
    p.add_argument("instruction", metavar="INSTRUCTION", nargs="?",
                   help="e.g. v_mfma_f32_32x32x8_f16 (also the CDNA2 spelling, the LLVM intrinsic or the ROCDL op)")
    p.add_argument("--list", action="store_true", help="list the arch's instructions instead")
    p.add_argument("--a-format", choices=list(F8F6F4_FORMATS), help="A format of an f8f6f4 instruction (CBSZ)")
    p.add_argument("--b-format", choices=list(F8F6F4_FORMATS), help="B format of an f8f6f4 instruction (BLGP)")
    p.set_defaults(func=run)


def _is_wmma(arch: str) -> bool:
    return get_target(arch).family == "rdna"


def _summary(ins) -> dict:
    out = ins.to_json()
    return {k: out[k] for k in ("instruction", "mnemonic", "M", "N", "K", "blocks", "types", "registers", "cycles")}


def _run_nvidia(args: argparse.Namespace) -> dict:
    if args.a_format or args.b_format:
        raise LayoutError("--a-format/--b-format apply to the gfx950 f8f6f4 MFMAs only")
    if args.list:
        if args.instruction:
            raise LayoutError("--list takes no INSTRUCTION")
        return {"arch": get_target(args.arch).name,
                "instructions": [_summary(i) for i in nvidia_mma_instructions_for(args.arch)]}
    if not args.instruction:
        raise LayoutError("missing INSTRUCTION (or give --list)")
    ins = get_nvidia_mma(args.arch, args.instruction)
    result = {name: lay.to_json() for name, lay in nvidia_mma_layouts(ins).items()}
    result.update(ins.to_json(), arch=get_target(args.arch).name, notes=[])
    return result


def run(args: argparse.Namespace) -> dict:
    if get_target(args.arch).family == "nvidia":
        return _run_nvidia(args)
    wmma = _is_wmma(args.arch)
    if args.list:
        if args.instruction:
            raise LayoutError("--list takes no INSTRUCTION")
        if args.a_format or args.b_format:
            raise LayoutError("--a-format/--b-format describe one f8f6f4 instruction; --list takes neither")
        insts = wmma_instructions_for(args.arch) if wmma else instructions_for(args.arch)
        return {"arch": get_target(args.arch).name, "instructions": [_summary(i) for i in insts]}
    if not args.instruction:
        raise LayoutError("missing INSTRUCTION (or give --list)")
    if wmma:
        if args.a_format or args.b_format:
            raise LayoutError("--a-format/--b-format apply to the gfx950 f8f6f4 MFMAs only")
        ins = get_wmma_instruction(args.arch, args.instruction)
        layouts = wmma_layouts(ins)
        notes = hw_wmma.layout_notes(ins)
    else:
        ins = get_instruction(args.arch, args.instruction, a_format=args.a_format, b_format=args.b_format)
        layouts = mfma_layouts(ins)
        notes = hw_mfma.layout_notes(ins)
        if ins.scaled:
            layouts.update(mfma_scale_layouts(ins))
    result = {name: lay.to_json() for name, lay in layouts.items()}
    result.update(ins.to_json())
    result["notes"] = notes
    return result


def bit_form(layout_json: dict) -> str:
    """``register: dim1[0] dim1[1]; lane: dim0[0] ...`` (each in bit -> its single out bit, ``0`` = broadcast)."""
    lay = LinearLayout.from_json(layout_json)
    parts = []
    for dim in lay.in_dim_names:
        bits = []
        for basis in lay.bases[dim]:
            hits = [f"{name}[{v.bit_length() - 1}]" for (name, _), v in zip(lay.out_dims, basis) if v]
            bits.append("+".join(hits) if hits and all(v & (v - 1) == 0 for v in basis) else (str(basis) if hits else "0"))
        parts.append(f"{dim}: {' '.join(bits) if bits else '-'}")
    return "; ".join(parts)


def _registers(result: dict) -> str:
    """What the arch calls a lane's 32-bit registers."""
    return "registers" if get_target(result["arch"]).family == "nvidia" else "VGPRs"


def render(result: dict, args: argparse.Namespace) -> str:
    if "instructions" in result:
        lines = [f"{result['arch']}: {len(result['instructions'])} instructions"]
        for i in result["instructions"]:
            r, t = i["registers"], i["types"]
            alias = f" ({i['mnemonic']})" if i["mnemonic"] != i["instruction"] else ""
            cycles = f" {i['cycles']} cycles" if i["cycles"] is not None else ""
            lines.append(f"  {i['instruction']:<34} {i['M']}x{i['N']}x{i['K']} x{i['blocks']:<3} "
                         f"{t['A']}/{t['B']}->{t['C']:<5} {_registers(result)} {r['A']}/{r['B']}/{r['C']:<3}{cycles}{alias}")
        return "\n".join(lines)
    r, t = result["registers"], result["types"]
    cycles = f"; {result['cycles']} cycles" if result["cycles"] is not None else ""
    lines = [
        f"{result['instruction']} on {result['arch']} (assembler: {result['mnemonic']})",
        f"  {result['M']} x {result['N']} x {result['K']}, {result['blocks']} block(s); "
        f"A {t['A']}, B {t['B']}, C/D {t['C']}; {_registers(result)} A {r['A']}, B {r['B']}, C {r['C']}{cycles}",
    ]
    if "rocdl" in result:
        lines.append(f"  {result['rocdl']}  ({result['intrinsic']})")
    for name in ("A", "B", "C", "A_scale", "B_scale"):
        if name in result:
            dims = " x ".join(f"{n} {s}" for n, s in result[name]["out_dims"])
            lines.append(f"{name} ({dims}): {bit_form(result[name])}")
    lines += [f"note: {n}" for n in result.get("notes", [])]
    return "\n".join(lines)
