"""``linlayout layout --triton '<json>'``: the layout of a Triton encoding;
``linlayout layout --to-triton '<layout>'``: Gluon Python that constructs a layout.

The ``--triton`` argument is ``{"encoding": E, "shape": [...], ...params}`` (docs/contract.md
section 3), or ``@file.json``.  ``--json`` prints the layout JSON (for
``padded_shared`` plus a ``"padding"`` key); the human form is the layout's text.

``--to-triton`` takes such an encoding (printed as its Gluon class) or any layout
``linlayout.spec.parse_layout`` reads (printed as ``DistributedLinearLayout`` or
``SharedLinearLayout``); ``--json`` prints ``{"gluon": expression, "import": line}``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..encodings import ENCODINGS, encoding_from_params, from_triton, gluon_source, to_gluon
from ..encodings.gluon import GLUON_IMPORT, has_gluon_class
from ..errors import LayoutError
from ..spec import parse_layout
from . import add_command


def register(subparsers) -> None:
    p = add_command(subparsers, "layout", "Print the LinearLayout of a Triton encoding (--triton), or the Gluon Python "
                    "that constructs a layout (--to-triton). Encodings:\n" + ", ".join(ENCODINGS))
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--triton", metavar="JSON",
                       help='{"encoding": E, "shape": [...], ...params} (Triton param names) or @file.json')
    which.add_argument("--to-triton", metavar="LAYOUT",
                       help="print Gluon Python constructing LAYOUT (layout JSON, any layout spec, or a --triton object)")
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


def _to_triton(text: str) -> dict:
    """The Gluon expression: an encoding's own Gluon class when Gluon has one, else the
    linear layout (of the encoding over its shape, or of any other layout argument)."""
    if text.lstrip().startswith("{"):
        obj = _load(text)
        if isinstance(obj, dict) and "encoding" in obj:
            params = {k: v for k, v in obj.items() if k not in ("encoding", "shape")}
            encoding = encoding_from_params(obj["encoding"], params)
            if has_gluon_class(encoding):
                return {"gluon": gluon_source(encoding), "import": GLUON_IMPORT}
            return {"gluon": to_gluon(from_triton(obj)), "import": GLUON_IMPORT}
    return {"gluon": to_gluon(parse_layout(text)), "import": GLUON_IMPORT}


def run(args: argparse.Namespace) -> dict:
    if args.to_triton is not None:
        result = _to_triton(args.to_triton)
        args._layout_text = f"{result['import']}\n\nlayout = {result['gluon']}"
        return result
    result = from_triton(_load(args.triton))
    args._layout_text = str(result)
    return result.to_json()


def render(result: dict, args: argparse.Namespace) -> str:
    return args._layout_text
