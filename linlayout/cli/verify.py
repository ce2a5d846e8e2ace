"""``linlayout verify A B``: are two layouts the same map?  Exit 0 if so, 1 with a counterexample if not."""

from __future__ import annotations

import argparse

from ..equivalence import equivalent
from ..errors import LayoutError
from ..spec import parse_layout
from . import add_command


def register(subparsers) -> None:
    p = add_command(
        subparsers, "verify",
        "Compare two layouts (JSON, @FILE, CuTe text or PREFIX:SPEC) as maps, dims matched by name.\n"
        "Exit status 0: equivalent; 1: not, with the smallest flat input where they differ and\n"
        "both outputs; 2: bad input.",
    )
    p.add_argument("a", metavar="A", help="first layout")
    p.add_argument("b", metavar="B", help="second layout")
    p.add_argument(
        "--flatten",
        action="store_true",
        help="compare as maps between flattened in and out index spaces (dim names and splits ignored)",
    )
    p.add_argument(
        "--rename", action="append", default=[], metavar="OLD=NEW", help="rename a dim of B before comparing (repeatable)"
    )
    p.set_defaults(func=run)


def _renames(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        old, sep, new = item.partition("=")
        if not sep or not old or not new:
            raise LayoutError(f"--rename takes OLD=NEW, got {item!r}")
        out[old] = new
    return out


def run(args: argparse.Namespace) -> dict:
    a, b = parse_layout(args.a), parse_layout(args.b)
    verdict = equivalent(a, b, flatten=args.flatten, rename=_renames(args.rename))
    result = {"equivalent": verdict.equal}
    result.update(verdict.to_json())
    result["_exit"] = 0 if verdict.equal else 1
    return result


def render(result: dict, args: argparse.Namespace) -> str:
    if result["equivalent"]:
        return f"equivalent: {result['reason']}"
    lines = [f"NOT equivalent: {result['reason']}"]
    if result["input"] is not None:
        lines.append(f"  input     {result['input']}")
        if result["input_b"] != result["input"]:
            lines.append(f"  input (B) {result['input_b']}")
        lines.append(f"  A ->      {result['output_a']}")
        lines.append(f"  B ->      {result['output_b']}")
    return "\n".join(lines)
