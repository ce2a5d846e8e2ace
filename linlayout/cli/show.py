"""``linlayout show LAYOUT``: bases, the 0/1 matrix, properties and an input -> output table."""

from __future__ import annotations

import argparse

from ..cute import to_cute
from ..errors import LayoutError
from ..layout import LinearLayout
from ..pictures import picture_file, render as draw
from ..spec import parse_layout
from . import add_command


def register(subparsers) -> None:
    p = add_command(
        subparsers, "show",
        "Print a layout (JSON, @FILE, CuTe text or PREFIX:SPEC): its bases, the 0/1 matrix\n"
        "(rows: out bits, columns: in bits, LSB first), rank, injectivity, surjectivity, its CuTe\n"
        "form when it has one, and the first --limit rows of the input -> output table.\n"
        "--png/--svg draw the tile: one cell per element, coloured by lane with a legend,\n"
        "labelled where the labels fit, one panel per warp.",
    )
    p.add_argument("layout", metavar="LAYOUT", help="layout JSON, @FILE, CuTe layout, or PREFIX:SPEC")
    p.add_argument("--limit", type=int, default=32, help="table rows to print (default 32; 0: none)")
    p.add_argument("--png", metavar="FILE", type=picture_file, help="also draw the layout to a PNG file (needs matplotlib)")
    p.add_argument("--svg", metavar="FILE", type=picture_file, help="also draw the layout to an SVG file (needs matplotlib)")
    p.set_defaults(func=run)


def _cute_or_none(layout: LinearLayout) -> str | None:
    try:
        return to_cute(layout)
    except LayoutError:
        return None


def table_rows(layout: LinearLayout, limit: int) -> list[dict]:
    """The first ``limit`` inputs (flat order, first in dim fastest) with their outputs."""
    n = min(max(limit, 0), layout.total_in_size)
    rows = []
    for x in range(n):
        inp, shift = {}, 0
        for name, size in layout.in_dims:
            inp[name] = (x >> shift) & (size - 1)
            shift += size.bit_length() - 1
        rows.append({"input": inp, "output": layout.apply(inp)})
    return rows


def run(args: argparse.Namespace) -> dict:
    if args.limit < 0:
        raise LayoutError(f"--limit must be >= 0, got {args.limit}")
    layout = parse_layout(args.layout)
    drawn = []
    for path in (args.png, args.svg):
        if path is not None:
            draw(layout, path)
            drawn.append(path)
    rows = table_rows(layout, args.limit)
    return {
        "layout": layout.to_json(),
        "rank": layout.rank(),
        "injective": layout.is_injective(),
        "surjective": layout.is_surjective(),
        "invertible": layout.is_invertible(),
        "free_variable_masks": layout.free_variable_masks(),
        "cute": _cute_or_none(layout) if len(layout.out_dims) == 1 and layout.in_dims else None,
        "matrix": layout.to_matrix().tolist(),
        "table": rows,
        "table_truncated": len(rows) < layout.total_in_size,
        "pictures": drawn,
    }


def render(result: dict, args: argparse.Namespace) -> str:
    layout = LinearLayout.from_json(result["layout"])
    lines = [str(layout)]
    props = ", ".join(
        f"{k}={result[k]}" for k in ("rank", "injective", "surjective", "invertible")
    )
    lines.append(props)
    masks = {k: v for k, v in result["free_variable_masks"].items() if v}
    if masks:
        lines.append("free (broadcast) in bits: " + ", ".join(f"{k}={bin(v)}" for k, v in masks.items()))
    if result["cute"]:
        lines.append(f"CuTe: {result['cute']}")
    ins, outs = layout.in_dim_names, layout.out_dim_names
    if result["table"] and (ins or outs):
        head = ins + ["->"] + outs
        body = [[str(r["input"][n]) for n in ins] + ["->"] + [str(r["output"][o]) for o in outs] for r in result["table"]]
        widths = [max(len(h), *(len(row[k]) for row in body)) for k, h in enumerate(head)]
        lines.append("  ".join(h.rjust(w) for h, w in zip(head, widths)))
        lines += ["  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in body]
    if result["table_truncated"]:
        lines.append(f"... {layout.total_in_size - len(result['table'])} more rows (--limit)")
    for path in result["pictures"]:
        lines.append(f"wrote {path}")
    return "\n".join(lines)
