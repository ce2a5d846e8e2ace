"""``linlayout layout --triton '<json>'``: the layout of a Triton encoding.

The argument is ``{"encoding": E, "shape": [...], ...params}`` (CONTRACT.md
section 3), or ``@file.json``.  ``--json`` prints the layout JSON (for
``padded_shared`` plus a ``"padding"`` key); the human form is the layout's text.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..encodings import ENCODINGS, from_triton
from ..errors import LayoutError
from . import add_command


def register(subparsers) -> None:
    p = add_command(subparsers, "layout", "Print the LinearLayout of a Triton encoding. Encodings:\n"
                    + ", ".join(ENCODINGS))
    p.add_argument("--triton", required=True, metavar="JSON",
                   help='{"encoding": E, "shape": [...], ...params} (Triton param names) or @file.json')
    p.set_defaults(func=run)


def _load(text: str) -> object:
    if text.startswith("@"):
        try:
            text = Path(text[1:]).read_text()
        except OSError as e:
            raise LayoutError(f"--triton: cannot read {text[1:]!r}: {e.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise LayoutError(f"--triton: not valid JSON: {e.msg} at position {e.pos}") from None


def run(args: argparse.Namespace) -> dict:
    result = from_triton(_load(args.triton))
    args._layout_text = str(result)
    return result.to_json()


def render(result: dict, args: argparse.Namespace) -> str:
    return args._layout_text
