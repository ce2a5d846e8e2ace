"""``linlayout kernel NAME [options]``: build, compile and check one of the kernels of ``linlayout.kernels``.

Everything after NAME goes to the kernel's own options (``linlayout kernel gemm --help``).
The options every kernel takes (``linlayout.kernels.options``) are read first, so a bad one is
refused before the kernel's module (and torch) is imported; only the named kernel is imported.
"""

from __future__ import annotations

import argparse
import importlib

from ..argparsing import Parser
from ..errors import LayoutError
from ..kernels.options import KERNEL_NAMES, add_common_arguments
from . import COMMANDS


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "kernel",
        help=COMMANDS["kernel"],
        description="Build one kernel of linlayout.kernels, compile it for --arch, and with --interpret run it\n"
        "on the wave interpreter against torch. The options after NAME are the kernel's own;\n"
        "'linlayout kernel NAME --help' lists them. 'linlayout --json kernel NAME ...' is\n"
        "'linlayout kernel NAME ... --json'.",
    )
    names = sorted(KERNEL_NAMES)
    p.add_argument("name", choices=names, metavar="NAME", help=f"one of {', '.join(names)}")
    p.add_argument("kernel_args", nargs=argparse.REMAINDER, metavar="...", help="the kernel's options")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """The kernel's own exit status (it prints its report or JSON itself)."""
    kernel_args = list(args.kernel_args)
    if args.json and "--json" not in kernel_args:
        kernel_args.append("--json")
    common = Parser(prog=f"linlayout kernel {args.name}", add_help=False, allow_abbrev=False)
    add_common_arguments(common)
    try:
        common.parse_known_args(kernel_args)
    except LayoutError as e:
        raise LayoutError(f"kernel {args.name}: {e}") from None
    return importlib.import_module(f"linlayout.kernels.{args.name}").main(kernel_args)
