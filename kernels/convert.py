"""The standalone layout-conversion kernel: one tile loaded in layout SRC, converted by the
cheapest verified plan (``linlayout.synth.convert.plan_conversion``), stored in layout DST.

This is a thin wrapper: the kernel is the conversion kernel of
``linlayout.lowering.emit.conversion_kernel`` (the one ``linlayout convert --emit`` writes); this module
adds the kernel command line of the package (``--interpret``, ``--emit``, ``--json``, the
static report, the GPU launch).  The tile is a row-major tensor (``--shape``, default the
layouts' full extent; a smaller extent is a ragged tile, handled by buffer out-of-bounds;
``--src-unpacked`` / ``--dst-unpacked``: that side's 8/16-bit elements loaded / stored one per VGPR;
``--dst-one-copy``: one copy of each repeated dst element stored, from the canonical lanes), so
the kernel's output must equal its input element for element: the torch reference is the
identity, compared exactly.

Default layouts (per arch): the MFMA accumulator of the arch's 32x32 f16 instruction and the
B operand (kWidth = the instruction's K values per lane) of the same instruction over the
32x32 tile -- the flash-attention P conversion: a renaming on gfx942, four
``v_permlane32_swap`` on gfx950.

    python -m linlayout.kernels.convert --arch gfx950 --interpret
    python -m linlayout.kernels.convert --src 'mfma:32x32x8,warps=1x1,shape=32x32' \
        --dst 'mfma.a:32x32x8,warps=1x1,kwidth=8,shape=32x32' --dtype f16 --interpret --json
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from linlayout import LayoutError
from linlayout.argparsing import add_unpacked_arguments, dtype_arg
from linlayout.spec import parse_layout
from linlayout.lowering.emit.conversion_kernel import build_conversion_kernel
from linlayout.synth.convert import STRATEGIES, plan_conversion
from linlayout.synth.plan import LdsLoad, LdsStore, Plan

from . import common
from .dtypes import DTYPES, dtype_info

__all__ = ["default_layouts", "add_arguments", "build", "make_case", "lds_instructions"]


def default_layouts(arch: str) -> tuple[str, str]:
    """``(src, dst)`` named specs: the 32x32 f16 MFMA accumulator and its B operand."""
    k, v = (8, 3) if arch == "gfx942" else (16, 4)
    kw = k // 2
    return (f"mfma:32x32x{k},warps=1x1,shape=32x32,v={v}",
            f"mfma.b:32x32x{k},warps=1x1,kwidth={kw},shape=32x32,v={v}")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--src", help="source layout (JSON, @file, CuTe or a named spec); default: MFMA accumulator")
    p.add_argument("--dst", help="destination layout; default: the MFMA B operand of the same tile")
    p.add_argument("--dtype", type=dtype_arg, choices=sorted(DTYPES), default="f16", help="element type (default f16)")
    p.add_argument("--shape", help="tensor extent per out dim, e.g. 30x32 (default: the full tile)")
    p.add_argument("--strategy", choices=STRATEGIES, default="auto", help="conversion strategy (default auto)")
    add_unpacked_arguments(p)


def _shape(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        return tuple(int(x) for x in text.lower().split("x"))
    except ValueError:
        raise LayoutError(f"--shape {text!r} must be extents joined by 'x', e.g. 30x32") from None


def lds_instructions(plan: Plan) -> list[common.LdsInstruction]:
    """The LDS accesses of ``plan`` as recorded instructions (byte offsets; a ds_read2/ds_write2 pair is
    two entries of its base op, one per address)."""
    out = []
    for i, st in enumerate(plan.steps):
        if not isinstance(st, (LdsStore, LdsLoad)):
            continue
        write = isinstance(st, LdsStore)
        w = st.width_bytes
        op = (f"ds_write_b{8 * w}" if write else (f"ds_read_b{8 * w}" if w >= 4 else f"ds_read_u{8 * w}"))
        addrs = [("", st.addr)] + ([(" (2nd half of a ds_*2 pair)", st.pair_addr())] if st.pair is not None else [])
        for note, a in addrs:
            tab = np.asarray(a, dtype=np.int64).reshape(-1, 64)
            out.append(common.LdsInstruction(f"plan step {i} {'store' if write else 'load'}{note}", op, 8, w, tab[None]))
    return out


def build(args: argparse.Namespace) -> common.KernelBuild:
    d_src, d_dst = default_layouts(args.arch)
    src = parse_layout(args.src or d_src)
    dst = parse_layout(args.dst or d_dst)
    info = dtype_info(args.dtype, args.arch)
    plan = plan_conversion(src, dst, args.arch, info.bits, strategy=args.strategy, src_unpacked=args.src_unpacked,
                           dst_unpacked=args.dst_unpacked, dst_one_copy=args.dst_one_copy)
    kernel = build_conversion_kernel(plan, shape=_shape(args.shape), name="convert_layout")
    counts = {k: v for k, v in plan.counts().items() if v}
    decisions = {"src": args.src or d_src, "dst": args.dst or d_dst, "dtype": args.dtype,
                 "element_bits": info.bits, "strategy": plan.strategy, "plan_counts": counts,
                 "plan_cost": round(float(plan.cost), 3), "plan_verified_on_emulator": plan.verified,
                 "lds_bytes_planned": plan.lds_bytes, "notes": list(plan.notes), "tensor_shape": list(kernel.shape),
                 "src_unpacked": plan.src_unpacked, "dst_unpacked": plan.dst_unpacked,
                 "dst_one_copy": plan.dst_one_copy}
    return common.KernelBuild(kernel.name, args.arch, kernel.text, lds_instructions(plan), decisions,
                              regions=("conv",), extra={"kernel": kernel})


_BITS_DTYPE = {8: torch.uint8, 16: torch.int16, 32: torch.int32}


def make_case(kb: common.KernelBuild, args: argparse.Namespace, seed: int) -> common.Case:
    """Distinct bit patterns (as far as the width allows: an 8-bit tile of more than 256 elements
    repeats values) moved as integers; the output must equal the input exactly."""
    kernel = kb.extra["kernel"]
    bits = kernel.element_bits
    g = torch.Generator().manual_seed(int(seed))
    n = 1
    for s in kernel.shape:
        n *= s
    pattern = torch.randperm(1 << min(bits, 24), generator=g)[:n] if n <= 1 << min(bits, 24) else \
        torch.randint(0, 1 << bits, (n,), generator=g)
    x = pattern.to(torch.int64)
    if bits > 8:  # two's complement in the signed torch dtype of the width
        x = torch.where(x >= 1 << (bits - 1), x - (1 << bits), x)
    x = x.to(_BITS_DTYPE[bits]).reshape(kernel.shape)
    return common.Case([x, torch.zeros_like(x)], (1, 1, 1), kernel.block, {1: x.clone()}, 0.0, 0.0,
                       {"shape": list(kernel.shape), "dtype": args.dtype, "element_bits": bits})


def main(argv: list[str] | None = None) -> int:
    """``linlayout kernel convert ARGV``: the exit status."""
    return common.main("convert", __doc__.split("\n\n")[0], add_arguments, build, make_case, argv)


if __name__ == "__main__":
    raise SystemExit(main())
