"""The ``linlayout`` command line.

Each subcommand lives in its own module of this package and exposes
``register(subparsers)`` (adds its parser with :func:`add_command`, setting ``func=run``)
and ``run(args) -> dict``.  ``run`` returns the JSON-able result; the module's
``render(result, args) -> str`` (optional) gives the human-readable text.
A result key ``"_exit"`` (removed before printing) sets a non-zero exit status
for a well-formed question whose answer is "no" (e.g. ``verify``: 1).
With ``--json`` (before or after the command) exactly one JSON object is printed.
A ``LayoutError`` (bad input) exits with status 2 and a one-line message on
stderr, nothing on stdout.

Only the module of the command being run is imported (``linlayout --help`` lists the
commands from :data:`COMMANDS` without importing the planner, the lowering or torch).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Iterable, Sequence

from ..argparsing import Parser, error_line
from ..errors import LayoutError

#: Subcommand -> its one-line help, in the order ``--help`` lists them.
COMMANDS = {
    "demo": "run the main job: layouts, bank conflicts, a conversion plan, a compiled kernel",
    "show": "print a layout: bases, matrix, properties, table, picture",
    "verify": "check two layouts are the same map (exit 0) or give a counterexample (exit 1)",
    "layout": "the layout of a Triton encoding (--triton JSON), or Gluon Python for a layout (--to-triton)",
    "mfma": "register layouts (A, B, C/D) of an MFMA, WMMA or NVIDIA mma instruction",
    "banks": "LDS / shared-memory bank conflicts: one instruction, a whole tile, or swizzle synthesis",
    "convert": "plan a layout conversion of a distributed tile (verified on the wave emulator)",
    "bench": "benchmarks against the peer (Triton's AMD and NVIDIA backends)",
    "kernel": "build, compile and check a kernel (gemm, attention, convert, fp8_fp16)",
}
SUBCOMMANDS = list(COMMANDS)
JSON_HELP = "print exactly one JSON object on stdout"
DTYPE_HELP = "element type: f16 (or fp16, half), bf16, f32 (fp32), fp8 (e4m3), bf8 (e5m2), i8, fp4, f64, ..."


def add_command(subparsers, name: str, description: str, **kwargs) -> argparse.ArgumentParser:
    """The parser of subcommand ``name``: its help line from :data:`COMMANDS`, ``description``
    (printed as plain text, line breaks kept), and ``--json``."""
    p = subparsers.add_parser(name, help=COMMANDS[name], description=description, **kwargs)
    add_json_flag(p)
    return p


def add_json_flag(p: argparse.ArgumentParser) -> None:
    """Every subcommand takes ``--json``."""
    p.add_argument("--json", action="store_true", help=JSON_HELP)


def build_parser(commands: Iterable[str] | None = None) -> argparse.ArgumentParser:
    """The ``linlayout`` parser with the full options of ``commands`` (default: all of them);
    the other commands are listed by name and help line only, their modules not imported."""
    full = set(COMMANDS if commands is None else commands)
    parser = Parser(prog="linlayout", description="GF(2) linear layouts for AMD and NVIDIA GPU kernels.")
    parser.add_argument("--json", dest="json_before", action="store_true", help=JSON_HELP + " (any command)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_line in COMMANDS.items():
        if name in full:
            importlib.import_module(f"{__name__}.{name}").register(sub)
        else:
            sub.add_parser(name, help=help_line, add_help=False)
    return parser


def _command(argv: list[str]) -> str | None:
    """The subcommand named in ``argv``: its first word that is not an option."""
    return next((a for a in argv if not a.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        command = _command(argv)
        parser = build_parser([command] if command in COMMANDS else [])
        if not argv:
            parser.print_help()
            return 0
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):  # no command: the list of commands
            if args.json_before:
                print(json.dumps({"commands": COMMANDS}))
            else:
                parser.print_help()
            return 0
        args.json = getattr(args, "json", False) or args.json_before
        result = args.func(args)
        if isinstance(result, int):  # a command that prints its own output (kernel)
            return result
        code = int(result.pop("_exit", 0)) if isinstance(result, dict) else 0
        if args.json:
            print(json.dumps(result))
        else:
            mod = sys.modules[args.func.__module__]
            render = getattr(mod, "render", None)
            print(render(result, args) if render else json.dumps(result, indent=2))
        return code
    except LayoutError as e:
        print(error_line(e), file=sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
