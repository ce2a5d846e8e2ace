"""``linlayout kernel NAME [options]``: build, compile and check one of the kernels of ``linlayout.kernels``.

Everything after NAME goes to the kernel's own options (``linlayout kernel gemm --help``).
"""

from __future__ import annotations

import argparse

from ..kernels import attention, convert, fp8_fp16, gemm
from . import COMMANDS

KERNELS = {"attention": attention, "convert": convert, "fp8_fp16": fp8_fp16, "gemm": gemm}


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "kernel",
        help=COMMANDS["kernel"],
        description="Build one kernel of linlayout.kernels, compile it for --arch, and with --interpret run it\n"
        "on the wave interpreter against torch. The options after NAME are the kernel's own;\n"
        "'linlayout kernel NAME --help' lists them. 'linlayout --json kernel NAME ...' is\n"
        "'linlayout kernel NAME ... --json'.",
    )
    p.add_argument("name", choices=sorted(KERNELS), metavar="NAME", help=f"one of {', '.join(sorted(KERNELS))}")
    p.add_argument("kernel_args", nargs=argparse.REMAINDER, metavar="...", help="the kernel's options")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """The kernel's own exit status (it prints its report or JSON itself)."""
    kernel_args = list(args.kernel_args)
    if args.json and "--json" not in kernel_args:
        kernel_args.append("--json")
    return KERNELS[args.name].main(kernel_args)
