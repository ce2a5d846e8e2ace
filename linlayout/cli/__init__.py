"""The ``linlayout`` command line.

Each subcommand lives in its own module of this package and exposes
``register(subparsers)`` (adds its parser, setting ``func=run``) and
``run(args) -> dict``.  ``run`` returns the JSON-able result; the module's
``render(result, args) -> str`` (optional) gives the human-readable text.
A result key ``"_exit"`` (removed before printing) sets a non-zero exit status
for a well-formed question whose answer is "no" (e.g. ``verify``: 1).
With ``--json`` exactly one JSON object is printed.  A ``LayoutError`` (bad
input) exits with status 2 and a one-line message on stderr, nothing on stdout.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Sequence

from ..errors import LayoutError

# Subcommand modules, in the order ``--help`` lists them.
SUBCOMMANDS = [
    "demo",
    "show",
    "verify",
    "layout",
    "mfma",
    "banks",
    "convert",
    "bench",
    "kernel",
]


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so usage errors become exit 2 one-liners."""

    def error(self, message: str):  # type: ignore[override]
        raise LayoutError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="linlayout", description="GF(2) linear layouts for AMD GPU kernels.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in SUBCOMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def add_json_flag(p: argparse.ArgumentParser) -> None:
    """Every subcommand takes ``--json``."""
    p.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser()
        if not argv:
            parser.print_help()
            return 0
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 0
        result = args.func(args)
        if isinstance(result, int):  # a command that prints its own output (kernel)
            return result
        code = int(result.pop("_exit", 0)) if isinstance(result, dict) else 0
        if getattr(args, "json", False):
            print(json.dumps(result))
        else:
            mod = sys.modules[args.func.__module__]
            render = getattr(mod, "render", None)
            print(render(result, args) if render else json.dumps(result, indent=2))
        return code
    except LayoutError as e:
        msg = " ".join(str(e).split())
        print(f"linlayout: error: {msg}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
