"""Pictures of layouts: one cell per tensor element, coloured and labelled by who holds it.

:func:`cell_grid` computes the picture's content without any plotting library;
:func:`render` draws it to ``.png`` or ``.svg`` with matplotlib (the optional
extra ``pip install 'linlayout[plot]'``).

Geometry: the layout's last out dim runs along the columns; the other out dims
are flattened row-major (first out dim outermost) into rows, so a 2-D
``[dim0, dim1]`` layout is drawn as rows x columns, a 1-D layout as a single row
and a ``[B, M, N]`` layout as ``B`` stacked ``M x N`` panels separated by thick
lines.

Labels: every cell shows the *first* hardware index that holds it (smallest
block, then warp, then lane, then register), one line per in dim of size > 1:
``T<lane>``, ``r<register>``, ``w<warp>``, ``b<block>``; shared layouts (in dim
``offset``) show the offset and its bank ``B<bank>``.  A cell held by ``k + 1``
hardware indices (broadcast) gets ``+k`` after its first line.  Cells no
index reaches are blank and grey.

Lines: thin between cells, medium at the boundaries of the lane tile (for
each out dim, the extent the lane bases span: where the lane pattern repeats),
thick between cells held by different warps or blocks.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Union

import numpy as np

from .errors import LayoutError
from .layout import LinearLayout

__all__ = ["CellGrid", "cell_grid", "render", "LABEL_LIMIT"]

#: Above this many cells no per-cell labels are drawn (colour and legend only).
LABEL_LIMIT = 64 * 64
#: Largest grid side drawn, in inches (cells shrink beyond it).
_MAX_GRID_IN = 48.0
#: Short names of the hardware in dims in labels.
_PREFIX = {"lane": "T", "register": "r", "warp": "w", "block": "b", "offset": ""}
_LABEL_ORDER = ["offset", "lane", "register", "warp", "block"]


@dataclass(frozen=True)
class CellGrid:
    """What a picture shows.  All arrays are ``[rows, cols]``.

    ``labels``: cell text (``""`` where no hardware index holds the element);
    ``values``: the colouring value (the ``color_by`` dim of the first holder, or its
    bank), ``-1`` where empty; ``copies``: how many hardware indices hold the cell;
    ``first``: ``{in_dim: array}`` of the first holder; ``row_dims``: the out dims
    flattened into rows (outermost first); ``col_dim``: the out dim along columns.
    """

    labels: np.ndarray
    values: np.ndarray
    copies: np.ndarray
    first: dict
    color_by: str
    num_values: int
    row_dims: list
    col_dim: str
    lane_tile: dict


def _padding_parts(layout):
    """``(linear layout, address function or None)`` of a LinearLayout or PaddedLayout."""
    if isinstance(layout, LinearLayout):
        return layout, None
    linear = getattr(layout, "linear", None)
    if isinstance(linear, LinearLayout) and hasattr(layout, "address"):
        return linear, layout.address
    raise LayoutError(f"cannot draw a {type(layout).__name__}: expected a LinearLayout or PaddedLayout")


def cell_grid(
    layout,
    *,
    color_by: str | None = None,
    element_bytes: int = 4,
    banks: int = 32,
) -> CellGrid:
    """The picture content of ``layout`` (a LinearLayout, or a PaddedLayout whose
    padded addresses give the banks).

    ``color_by``: an in dim name (``lane``, ``warp``, ``register``, ``offset``, ...)
    or ``"bank"`` (layouts with in dim ``offset``: 4-byte bank of the element's
    address, ``element_bytes`` per element, ``banks`` banks).  Default: ``lane``
    when present, else ``bank`` when there is an ``offset`` dim, else the first in dim.
    """
    linear, address = _padding_parts(layout)
    if not linear.out_dims:
        raise LayoutError("cannot draw a layout without out dims")
    if linear.total_in_bits > 24 or linear.total_out_bits > 24:
        raise LayoutError(
            f"layout too large to draw ({linear.total_in_size} hardware indices, {linear.total_out_size} elements)"
        )
    ins = linear.in_dim_names
    has_offset = "offset" in ins
    if color_by is None:
        color_by = "lane" if "lane" in ins else ("bank" if has_offset else ins[0])
    if color_by == "bank":
        if not has_offset:
            raise LayoutError("color_by='bank' needs a shared layout (in dim 'offset')")
        if element_bytes < 1 or banks < 1:
            raise LayoutError(f"element_bytes ({element_bytes}) and banks ({banks}) must be positive")
    elif color_by not in ins:
        raise LayoutError(f"color_by={color_by!r} is not 'bank' or an in dim of the layout {ins}")

    outs = linear.out_dims
    col_dim, col_size = outs[-1]
    row_dims = [n for n, _ in outs[:-1]]
    n_rows = int(np.prod([s for _, s in outs[:-1]])) if row_dims else 1

    table = linear.table()  # [inputs, out dims], inputs flattened with the first in dim fastest
    elem = np.zeros(len(table), dtype=np.int64)
    for j, (_, s) in enumerate(outs):
        elem = elem * s + table[:, j]
    n_cells = n_rows * col_size
    uniq, first_idx = np.unique(elem, return_index=True)
    copies = np.bincount(elem, minlength=n_cells)

    first = {}
    shift = 0
    for name, size in linear.in_dims:
        vals = np.full(n_cells, -1, dtype=np.int64)
        vals[uniq] = (first_idx >> shift) & (size - 1)
        first[name] = vals.reshape(n_rows, col_size)
        shift += size.bit_length() - 1

    held = copies.reshape(n_rows, col_size) > 0
    bank = None
    if has_offset:
        off = first["offset"]
        addr = np.where(held, off, 0)
        if address is not None:
            addr = address(addr)
        bank = np.where(held, (addr * element_bytes // 4) % banks, -1)
    if color_by == "bank":
        values, num_values = bank, banks
    else:
        values, num_values = first[color_by], linear.in_dim_size(color_by)

    shown = [d for d in _LABEL_ORDER if d in ins and (linear.in_dim_size(d) > 1 or d in ("lane", "offset"))]
    shown += [d for d in ins if d not in _LABEL_ORDER and linear.in_dim_size(d) > 1]
    copies2 = copies.reshape(n_rows, col_size)
    labels = np.empty((n_rows, col_size), dtype=object)
    for r in range(n_rows):
        for c in range(col_size):
            if not held[r, c]:
                labels[r, c] = ""
                continue
            lines = [f"{_PREFIX.get(d, d[:1])}{first[d][r, c]}" for d in shown]
            if bank is not None:
                lines.insert(1, f"B{bank[r, c]}")
            if copies2[r, c] > 1:
                lines[0] += f"+{copies2[r, c] - 1}"
            labels[r, c] = "\n".join(lines)

    lane_tile = {}
    if "lane" in ins:
        for j, (name, size) in enumerate(outs):
            mask = 0
            for b in linear.bases["lane"]:
                mask |= b[j]
            lane_tile[name] = min(size, 1 << mask.bit_length())
    return CellGrid(labels, values, copies2, first, color_by, num_values, row_dims, col_dim, lane_tile)


def _palette(n: int):
    """``n`` light, distinguishable colours (RGBA rows) that keep black text legible."""
    from matplotlib import colormaps

    if n <= 10:
        base = colormaps["tab10"](np.arange(n))
    elif n <= 20:  # the dark shades of tab20 first, then the light ones
        base = colormaps["tab20"]([(2 * i) % 20 + (2 * i) // 20 for i in range(n)])
    else:
        base = colormaps["hsv"]((np.arange(n) * 0.618034) % 1.0) if n > 64 else colormaps["hsv"](np.arange(n) / n)
    light = base.copy()
    light[:, :3] = 0.55 * base[:, :3] + 0.45
    return light


def _boundaries(grid: CellGrid, linear: LinearLayout, n_rows: int, n_cols: int):
    """``(medium, thick)`` line segments ``((x0, y0), (x1, y1))`` in cell units."""
    owner = np.zeros((n_rows, n_cols), dtype=np.int64)
    for d in ("block", "warp"):
        if d in grid.first:
            owner = owner * linear.in_dim_size(d) + grid.first[d]
    thick, medium = [], []
    outs = linear.out_dims
    row_sizes = [s for _, s in outs[:-1]]
    # thick: warp/block changes, and panels of leading dims (>2-D)
    panel = int(np.prod(row_sizes[1:])) if len(row_sizes) > 1 else n_rows
    for r in range(n_rows):
        for c in range(n_cols):
            if c + 1 < n_cols and owner[r, c] != owner[r, c + 1]:
                thick.append(((c + 1, r), (c + 1, r + 1)))
            if r + 1 < n_rows and (owner[r, c] != owner[r + 1, c] or (r + 1) % panel == 0):
                thick.append(((c, r + 1), (c + 1, r + 1)))
    if grid.lane_tile:
        tc = grid.lane_tile[grid.col_dim]
        tr = grid.lane_tile[outs[-2][0]] if len(outs) > 1 else n_rows
        for c in range(tc, n_cols, tc):
            medium.append(((c, 0), (c, n_rows)))
        for r in range(tr, n_rows, tr):
            medium.append(((0, r), (n_cols, r)))
    return medium, thick


def render(
    layout,
    path: Union[str, Path],
    *,
    color_by: str | None = None,
    element_bytes: int = 4,
    banks: int = 32,
    title: str | None = None,
    label_limit: int = LABEL_LIMIT,
) -> np.ndarray:
    """Draw ``layout`` to ``path`` (format from the suffix: ``.png`` or ``.svg``).

    Returns the label grid (``[rows, cols]`` strings, see :func:`cell_grid`); labels are
    drawn only when the grid has at most ``label_limit`` cells, and shrink with the grid.
    """
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in ("png", "svg"):
        raise LayoutError(f"picture file {str(path)!r} must end in .png or .svg")
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
        from matplotlib.collections import LineCollection
        from matplotlib.colors import BoundaryNorm, ListedColormap
    except ImportError:
        raise LayoutError("pictures need matplotlib: pip install 'linlayout[plot]'") from None

    grid = cell_grid(layout, color_by=color_by, element_bytes=element_bytes, banks=banks)
    linear, _ = _padding_parts(layout)
    n_rows, n_cols = grid.labels.shape
    cells = n_rows * n_cols
    biggest = max(n_rows, n_cols)
    cell_in = 0.55 if biggest <= 16 else (0.42 if biggest <= 32 else 0.36)
    cell_in = min(cell_in, _MAX_GRID_IN / n_cols, _MAX_GRID_IN / n_rows)
    left, right, top, bottom = 0.7, 1.4, 0.9, 0.3  # margins in inches (right: colour bar)
    width = n_cols * cell_in + left + right
    height = max(n_rows * cell_in, 2.0) + top + bottom
    ui = min(24.0, max(8.0, 0.35 * max(width, height)))  # axis/legend font grows with the figure
    colors = _palette(grid.num_values)
    empty = np.array([0.85, 0.85, 0.85, 1.0])
    rgba = np.where(grid.values[..., None] >= 0, colors[np.clip(grid.values, 0, None)], empty)

    with plt.rc_context({"svg.fonttype": "none", "font.family": "DejaVu Sans"}):
        fig = plt.figure(figsize=(width, height))
        ax = fig.add_axes((left / width, bottom / height, n_cols * cell_in / width, n_rows * cell_in / height))
        cax = fig.add_axes(((width - right + 0.25) / width, bottom / height, 0.25 / width,
                            max(n_rows * cell_in, 2.0) / height))
        ax.imshow(rgba, extent=(0, n_cols, n_rows, 0), interpolation="nearest", aspect="equal")
        if cell_in >= 0.12:  # thin cell borders only while they do not swamp the cells
            ax.add_collection(LineCollection(
                [((c, 0), (c, n_rows)) for c in range(n_cols + 1)]
                + [((0, r), (n_cols, r)) for r in range(n_rows + 1)], colors="white", linewidths=0.6))
        medium, thick = _boundaries(grid, linear, n_rows, n_cols)
        if medium:
            ax.add_collection(LineCollection(medium, colors="0.35", linewidths=1.2))
        if thick:
            ax.add_collection(LineCollection(thick, colors="black", linewidths=2.4))
        if cells <= label_limit:
            n_lines = max((lab.count("\n") + 1 for lab in grid.labels.flat if lab), default=1)
            longest = max((max(len(s) for s in lab.split("\n")) for lab in grid.labels.flat if lab), default=1)
            points = cell_in * 72
            size = max(2.5, min(9.0, 0.8 * points / n_lines, 1.45 * points / max(longest, 2)))
            for r in range(n_rows):
                for c in range(n_cols):
                    if grid.labels[r, c]:
                        ax.text(c + 0.5, r + 0.5, grid.labels[r, c], ha="center", va="center",
                                fontsize=size, linespacing=1.0)
        ax.set_xlim(0, n_cols)
        ax.set_ylim(n_rows, 0)
        step_c = max(1, n_cols // 16)
        step_r = max(1, n_rows // 16)
        ax.set_xticks(np.arange(0, n_cols, step_c) + 0.5, [str(c) for c in range(0, n_cols, step_c)], fontsize=ui)
        ax.set_yticks(np.arange(0, n_rows, step_r) + 0.5, [str(r) for r in range(0, n_rows, step_r)], fontsize=ui)
        ax.set_xlabel(grid.col_dim, fontsize=ui)
        ax.set_ylabel(" x ".join(grid.row_dims) if grid.row_dims else "", fontsize=ui)
        ax.xaxis.set_label_position("top")
        ax.xaxis.tick_top()
        n = grid.num_values
        mappable = plt.cm.ScalarMappable(cmap=ListedColormap(colors), norm=BoundaryNorm(np.arange(n + 1) - 0.5, n))
        bar = fig.colorbar(mappable, cax=cax)
        step = max(1, n // 16)
        bar.set_ticks(list(range(0, n, step)))
        bar.set_label(grid.color_by, fontsize=ui)
        bar.ax.tick_params(labelsize=ui)
        ax.set_title(title or _default_title(linear, grid), fontsize=ui + 2)
        fig.savefig(path, format=fmt, dpi=150 if 32 * 32 < cells <= label_limit else 100, bbox_inches="tight")
        plt.close(fig)
    return grid.labels


def _default_title(linear: LinearLayout, grid: CellGrid) -> str:
    ins = " x ".join(f"{n}:{s}" for n, s in linear.in_dims if s > 1)
    outs = " x ".join(f"{n}:{s}" for n, s in linear.out_dims)
    return f"{ins} -> {outs}   (colour: {grid.color_by}; +k = k more copies)"
