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
block, then warp, then lane, then register) as numbers, one line per in dim of
size > 1 in the order ``lane, register, warp, block`` (``CellGrid.label_dims``
names the lines, and the picture says which is which); shared layouts (in dim
``offset``) show the offset and its ``bank``.  A cell held by ``k + 1`` hardware
indices (broadcast) gets ``+k`` after its first line.  Cells no index reaches
are blank and grey.

Drawing (:func:`render`, about 1000 pixels wide whatever the tile): cells are
coloured by ``color_by`` (default ``lane``) with a colour bar as the legend.
Labels are drawn only where they fit (at least 6 points); a tile too large for
them is drawn whole, unlabelled, beside a labelled zoom of its top-left
16 x 16 cells, or 8 x 8 when labels of three lines would not fit (outlined on the
whole tile).  Lines: medium at the boundaries of
the lane tile (for each out dim, the extent the lane bases span: where the lane
pattern repeats), thick between cells held by different warps or blocks.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Union

import numpy as np

from .argparsing import check_output
from .errors import LayoutError
from .layout import LinearLayout

__all__ = ["CellGrid", "cell_grid", "render", "bank_heatmap", "MAX_CELLS", "ZOOM_CELLS", "WIDTH_PX"]

#: Largest tile drawn (elements): 256 x 256; a larger picture shows nothing at screen size.
MAX_CELLS = 1 << 16
#: Side of the labelled zoom (cells) when the whole tile is too large for labels.
ZOOM_CELLS = 16
#: Width of every picture in pixels (at :data:`_DPI`).
WIDTH_PX = 1000
_DPI = 100
#: Smallest label font drawn, in points.
_MIN_LABEL_PT = 6.0
_LABEL_ORDER = ["offset", "lane", "register", "warp", "block"]


@dataclass(frozen=True)
class CellGrid:
    """What a picture shows.  All arrays are ``[rows, cols]``.

    ``labels``: cell text (``""`` where no hardware index holds the element), one number per
    line, the lines named by ``label_dims`` (in dims, and ``bank`` for shared layouts);
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
    label_dims: list


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
    if linear.total_out_size > MAX_CELLS or linear.total_in_size > 16 * MAX_CELLS:
        raise LayoutError(f"layout too large to draw ({linear.total_in_size} hardware indices, "
                          f"{linear.total_out_size} elements; at most {MAX_CELLS} elements)")
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
    columns = [first[d].astype(str).astype(object) for d in shown]
    label_dims = list(shown)
    if bank is not None:
        columns.insert(1, bank.astype(str).astype(object))
        label_dims.insert(1, "bank")
    if columns:
        columns[0] = np.where(copies2 > 1, columns[0] + "+" + (copies2 - 1).astype(str).astype(object), columns[0])
        labels = columns[0]
        for col in columns[1:]:
            labels = labels + "\n" + col
        labels = np.where(held, labels, "").astype(object)
    else:
        labels = np.full((n_rows, col_size), "", dtype=object)

    lane_tile = {}
    if "lane" in ins:
        for j, (name, size) in enumerate(outs):
            mask = 0
            for b in linear.bases["lane"]:
                mask |= b[j]
            lane_tile[name] = min(size, 1 << mask.bit_length())
    return CellGrid(labels, values, copies2, first, color_by, num_values, row_dims, col_dim, lane_tile, label_dims)


def _pyplot():
    """matplotlib's pyplot on the Agg backend.  Imported on the first drawing, not with this
    module: matplotlib is the optional ``plot`` extra, and its import (about half a second)
    is not paid by commands that draw nothing."""
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        raise LayoutError("pictures need matplotlib: pip install 'linlayout[plot]'") from None
    return plt


#: Text stays text in SVG; one font; SVG ids fixed, so the same picture is the same file.
_STYLE = {"svg.fonttype": "none", "font.family": "DejaVu Sans", "svg.hashsalt": "linlayout"}


def picture_path(path) -> tuple[Path, str]:
    """``(path, "png" | "svg")`` from the file name's suffix, or ``LayoutError`` (also for a path
    the command could not write, by :func:`linlayout.argparsing.check_output`: empty, a folder, in
    a missing folder, not writable; refused before anything is drawn, which takes seconds for a
    large tile)."""
    text = str(path)
    check_output(text, "picture")
    path = Path(text)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in ("png", "svg"):
        raise LayoutError(f"picture file {text!r} must end in .png or .svg")
    return path, fmt


def picture_file(text: str) -> str:
    """The argparse type of a command's ``--png`` / ``--svg``: :func:`picture_path`'s checks when
    the options are parsed, so a bad second path is refused before the first picture is drawn;
    ``text`` itself."""
    try:
        picture_path(text)
    except LayoutError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def _save(plt, fig, path: Path, fmt: str) -> None:
    """Write ``fig`` at :data:`WIDTH_PX` / ``_DPI`` and close it; an unwritable path is a ``LayoutError``."""
    try:
        fig.savefig(path, format=fmt, dpi=_DPI)
    except OSError as e:
        raise LayoutError(f"cannot write picture {str(path)!r}: {e.strerror or e}") from None
    finally:
        plt.close(fig)


def _palette(plt, n: int) -> np.ndarray:
    """``n`` light, distinguishable colours (RGBA rows) that keep black text legible."""
    if n <= 10:
        base = plt.get_cmap("tab10")(np.arange(n))
    elif n <= 20:  # the dark shades of tab20 first, then the light ones
        base = plt.get_cmap("tab20")([(2 * i) % 20 + (2 * i) // 20 for i in range(n)])
    else:  # turbo: neighbours similar, the two ends far apart (hsv would wrap lane 63 onto lane 0)
        base = plt.get_cmap("turbo")(np.linspace(0.05, 0.95, n))
    light = base.copy()
    light[:, :3] = 0.55 * base[:, :3] + 0.45
    return light


def _boundaries(grid: CellGrid, linear: LinearLayout):
    """``(medium, thick)`` line segments ``((x0, y0), (x1, y1))`` in cell units."""
    n_rows, n_cols = grid.labels.shape
    owner = np.zeros((n_rows, n_cols), dtype=np.int64)
    for d in ("block", "warp"):
        if d in grid.first:
            owner = owner * linear.in_dim_size(d) + grid.first[d]
    outs = linear.out_dims
    row_sizes = [s for _, s in outs[:-1]]
    panel = int(np.prod(row_sizes[1:])) if len(row_sizes) > 1 else n_rows  # panels of leading dims (>2-D)
    across = owner[:-1, :] != owner[1:, :]
    across[panel - 1::panel, :] = True
    thick = [((c + 1, r), (c + 1, r + 1)) for r, c in zip(*np.nonzero(owner[:, :-1] != owner[:, 1:]))]
    thick += [((c, r + 1), (c + 1, r + 1)) for r, c in zip(*np.nonzero(across))]
    medium = []
    if grid.lane_tile:
        tc = grid.lane_tile[grid.col_dim]
        tr = grid.lane_tile[outs[-2][0]] if len(outs) > 1 else n_rows
        medium += [((c, 0), (c, n_rows)) for c in range(tc, n_cols, tc)]
        medium += [((0, r), (n_cols, r)) for r in range(tr, n_rows, tr)]
    return medium, thick


def _region_labels(grid: CellGrid, rows: slice, cols: slice):
    """``(labels, dims, constant)`` of the cells ``[rows, cols]``: one line per label dim that
    varies there (the first always), ``constant`` the others with their one value."""
    values = {d: (grid.values if d == "bank" and grid.color_by == "bank" else grid.first.get(d)) for d in grid.label_dims}
    held = grid.copies[rows, cols] > 0
    lines = [line.split("\n") for line in grid.labels[rows, cols].flat]
    dims, constant = [], {}
    for k, d in enumerate(grid.label_dims):
        vals = {ln[k].split("+")[0] for ln, h in zip(lines, held.flat) if h}
        if k == 0 or len(vals) > 1 or values[d] is None:
            dims.append(k)
        elif vals:
            constant[d] = vals.pop()
    text = np.array(["\n".join(ln[k] for k in dims) if h else "" for ln, h in zip(lines, held.flat)], dtype=object)
    return text.reshape(held.shape), [grid.label_dims[k] for k in dims], constant


def _label_points(labels: np.ndarray, cell_in: float) -> float:
    """The label font size (points) that fits ``labels`` into square cells of ``cell_in`` inches."""
    shown = [lab for lab in labels.flat if lab]
    if not shown:
        return 0.0
    n_lines = max(lab.count("\n") + 1 for lab in shown)
    longest = max(max(len(s) for s in lab.split("\n")) for lab in shown)
    points = cell_in * 72
    return min(9.0, 0.75 * points / n_lines, 1.3 * points / max(longest, 2))  # a digit is 0.64 em wide


def _draw_cells(ax, rgba, grid, linear, rows: slice, cols: slice, labels=None, font=0.0, ui=9.0):
    """Cells ``[rows, cols]`` of the tile on ``ax``, with the tile's boundary lines and (given
    ``labels``) one label per held cell."""
    from matplotlib.collections import LineCollection

    r0, r1, c0, c1 = rows.start, rows.stop, cols.start, cols.stop
    ax.imshow(rgba[rows, cols], extent=(c0, c1, r1, r0), interpolation="nearest", aspect="equal")
    medium, thick = _boundaries(grid, linear)
    if labels is not None:
        ax.add_collection(LineCollection([((c, r0), (c, r1)) for c in range(c0, c1 + 1)]
                                         + [((c0, r), (c1, r)) for r in range(r0, r1 + 1)],
                                         colors="white", linewidths=0.6))
        for (r, c), text in np.ndenumerate(labels):
            if text:
                ax.text(c0 + c + 0.5, r0 + r + 0.5, text, ha="center", va="center", fontsize=font, linespacing=1.0)
    if medium:
        ax.add_collection(LineCollection(medium, colors="0.35", linewidths=1.0))
    if thick:
        ax.add_collection(LineCollection(thick, colors="black", linewidths=2.0))
    ax.set_xlim(c0, c1)
    ax.set_ylim(r1, r0)
    step_c, step_r = max(1, (c1 - c0) // 8), max(1, (r1 - r0) // 8)
    ax.set_xticks(np.arange(c0, c1, step_c) + 0.5, [str(c) for c in range(c0, c1, step_c)], fontsize=ui)
    ax.set_yticks(np.arange(r0, r1, step_r) + 0.5, [str(r) for r in range(r0, r1, step_r)], fontsize=ui)
    ax.xaxis.tick_top()
    ax.xaxis.set_label_position("top")
    ax.set_xlabel(grid.col_dim, fontsize=ui)
    ax.set_ylabel(" x ".join(grid.row_dims), fontsize=ui)


def _name_owners(ax, grid: CellGrid) -> None:
    """Write ``warp k`` (and ``block k``) in the middle of the cells each one holds first, when
    every one of them holds a rectangle."""
    dims = [d for d in ("block", "warp") if d in grid.first and grid.first[d].max() > 0]
    if not dims:
        return
    held = grid.copies > 0
    keys = {tuple(int(grid.first[d][r, c]) for d in dims) for r, c in zip(*np.nonzero(held))}
    for key in sorted(keys):
        mask = held.copy()
        for d, v in zip(dims, key):
            mask &= grid.first[d] == v
        rows, cols = np.nonzero(mask)
        if len(rows) != (np.ptp(rows) + 1) * (np.ptp(cols) + 1):
            return  # interleaved warps: the thick lines show them, a name would point nowhere
        ax.text(cols.mean() + 0.5, rows.mean() + 0.5, ", ".join(f"{d} {v}" for d, v in zip(dims, key)),
                ha="center", va="center", fontsize=9, bbox={"facecolor": "white", "alpha": 0.85, "pad": 1.5})


def _key(dims: list, constant: dict) -> str:
    """What a labelled panel's cells say: ``each cell: lane / register (warp 0)``."""
    fixed = ", ".join(f"{d} {v}" for d, v in constant.items())
    return "each cell: " + " / ".join(dims) + (f"   (all: {fixed})" if fixed else "")


def render(
    layout,
    path: Union[str, Path],
    *,
    color_by: str | None = None,
    element_bytes: int = 4,
    banks: int = 32,
    title: str | None = None,
) -> np.ndarray:
    """Draw ``layout`` to ``path`` (format from the suffix: ``.png`` or ``.svg``), :data:`WIDTH_PX`
    pixels wide.  Returns the label grid of the whole tile (``[rows, cols]`` strings, see
    :func:`cell_grid`).

    The whole tile carries labels when they fit at 6 points or more; otherwise it is drawn
    unlabelled beside a labelled zoom of its top-left :data:`ZOOM_CELLS` x :data:`ZOOM_CELLS`
    cells.  A label line whose value is the same in every cell of a panel is stated once
    in the panel's key instead (``all: warp 0``).
    """
    path, fmt = picture_path(path)
    grid = cell_grid(layout, color_by=color_by, element_bytes=element_bytes, banks=banks)
    plt = _pyplot()
    linear, _ = _padding_parts(layout)
    n_rows, n_cols = grid.labels.shape
    colors = _palette(plt, grid.num_values)
    rgba = np.where(grid.values[..., None] >= 0, colors[np.clip(grid.values, 0, None)], [0.85, 0.85, 0.85, 1.0])
    width = WIDTH_PX / _DPI
    left, bar, top = 0.7, 1.1, 1.0  # inches: tick labels, colour bar, titles
    everything = (slice(0, n_rows), slice(0, n_cols))
    cell_in = min((width - left - bar) / n_cols, 8.0 / n_rows)
    labels, dims, constant = _region_labels(grid, *everything)
    font = _label_points(labels, cell_in)
    zoomed = font < _MIN_LABEL_PT and max(n_rows, n_cols) > ZOOM_CELLS
    with plt.rc_context(_STYLE):
        if not zoomed:
            panel_h = max(n_rows * cell_in, 1.2)  # room for the colour bar under a short tile
            height = panel_h + top + 0.3
            fig = plt.figure(figsize=(width, height), dpi=_DPI)
            ax = fig.add_axes((left / width, (0.3 + panel_h - n_rows * cell_in) / height,
                               n_cols * cell_in / width, n_rows * cell_in / height))
            shown = labels if font >= _MIN_LABEL_PT else None
            _draw_cells(ax, rgba, grid, linear, *everything, shown, font)
            key = _key(dims, constant) if shown is not None else "labels do not fit: colour only"
            bar_box = ((left + n_cols * cell_in + 0.25) / width, 0.3 / height, 0.2 / width, panel_h / height)
        else:
            zoom_in, whole_in = 4.3, width - left * 2 - bar - 4.3
            cell_in = min(whole_in / n_cols, 6.0 / n_rows)
            for side in (ZOOM_CELLS, ZOOM_CELLS // 2):  # the largest zoom whose labels fit
                zr, zc = slice(0, min(n_rows, side)), slice(0, min(n_cols, side))
                zcell = zoom_in / max(zr.stop, zc.stop)
                labels, dims, constant = _region_labels(grid, zr, zc)
                font = _label_points(labels, zcell)
                if font >= _MIN_LABEL_PT:
                    break
            panel_h = max(n_rows * cell_in, zr.stop * zcell, 1.2)
            height = panel_h + top + 0.3
            fig = plt.figure(figsize=(width, height), dpi=_DPI)
            bottom = 0.3 / height
            ax = fig.add_axes((left / width, bottom + (panel_h - n_rows * cell_in) / height,
                               n_cols * cell_in / width, n_rows * cell_in / height))
            _draw_cells(ax, rgba, grid, linear, *everything)
            _name_owners(ax, grid)
            ax.add_patch(plt.Rectangle((0, 0), zc.stop, zr.stop, fill=False, edgecolor="red", linewidth=2.0))
            ax.set_title(f"whole tile ({n_rows} x {n_cols}); red: the zoom", fontsize=9)
            zx = 2 * left + n_cols * cell_in
            zax = fig.add_axes((zx / width, bottom + (panel_h - zr.stop * zcell) / height,
                                zc.stop * zcell / width, zr.stop * zcell / height))
            _draw_cells(zax, rgba, grid, linear, zr, zc, labels if font >= _MIN_LABEL_PT else None, font)
            for spine in zax.spines.values():
                spine.set_edgecolor("red")
                spine.set_linewidth(2.0)
            key = f"zoom, rows 0-{zr.stop - 1}, columns 0-{zc.stop - 1}; " + _key(dims, constant)
            bar_box = ((zx + zc.stop * zcell + 0.25) / width, bottom, 0.2 / width, panel_h / height)
        n = grid.num_values
        bar_ax = fig.add_axes(bar_box)
        bar_ax.imshow(colors[::-1, None, :], aspect="auto", extent=(0, 1, -0.5, n - 0.5))
        step = 1 << max(0, (n // max(2, int(bar_box[3] * height * 72 / 28)) - 1).bit_length())  # 28 pt apart
        bar_ax.set_xticks([])
        bar_ax.yaxis.tick_right()
        bar_ax.set_yticks(range(0, n, step))
        bar_ax.tick_params(labelsize=8)
        bar_ax.set_title(f"colour:\n{grid.color_by}", fontsize=9, loc="left")
        copies = "; +k: k more copies" if (grid.copies > 1).any() else ""
        fig.suptitle((title or _default_title(linear)) + "\n" + key + copies, fontsize=10,
                     y=1 - 0.1 / height, va="top")
        _save(plt, fig, path, fmt)
    return grid.labels


def _default_title(linear: LinearLayout) -> str:
    ins = " x ".join(f"{n} {s}" for n, s in linear.in_dims if s > 1)
    outs = " x ".join(f"{n} {s}" for n, s in linear.out_dims)
    return f"{ins} -> {outs}"


def bank_heatmap(table: np.ndarray, path: Union[str, Path], *, title: str) -> None:
    """Draw ``table`` (``[lane phases, banks]``: distinct 4-byte words each bank serves in each
    phase, i.e. its cycles) as a heat map, :data:`WIDTH_PX` pixels wide, to ``.png`` or ``.svg``.
    Every nonzero cell is labelled with its count where the label fits; a phase costs the
    largest count of its row, so at most 1 everywhere is conflict-free."""
    path, fmt = picture_path(path)
    table = np.asarray(table)
    plt = _pyplot()
    n_phases, n_banks = table.shape
    width = WIDTH_PX / _DPI
    left, right = 0.8, 1.2
    cell_w = (width - left - right) / n_banks
    cell_h = max(cell_w, 0.3)
    height = n_phases * cell_h + 1.3
    top = int(max(1, table.max()))
    with plt.rc_context(_STYLE):
        fig = plt.figure(figsize=(width, height), dpi=_DPI)
        ax = fig.add_axes((left / width, 0.5 / height, n_banks * cell_w / width, n_phases * cell_h / height))
        im = ax.imshow(table, aspect="auto", cmap="viridis", vmin=0, vmax=top, interpolation="nearest",
                       extent=(0, n_banks, n_phases, 0))
        font = min(9.0, 1.5 * cell_w * 72 / max(2, len(str(top))), 0.75 * cell_h * 72)
        if font >= _MIN_LABEL_PT:
            for (p, b), v in np.ndenumerate(table):
                if v:
                    ax.text(b + 0.5, p + 0.5, str(int(v)), ha="center", va="center", fontsize=font,
                            color="white" if v < 0.6 * top else "black")
        step = max(1, n_banks // 16)
        ax.set_xticks(np.arange(0, n_banks, step) + 0.5, [str(b) for b in range(0, n_banks, step)], fontsize=8)
        ax.set_yticks(np.arange(n_phases) + 0.5, [str(p) for p in range(n_phases)], fontsize=8)
        ax.set_xlabel("bank", fontsize=9)
        ax.set_ylabel("lane phase", fontsize=9)
        ax.set_title(f"{title}\n(a phase costs the largest number of its row; at most 1 everywhere: conflict-free)", fontsize=10)
        cax = fig.add_axes(((left + n_banks * cell_w + 0.2) / width, 0.5 / height, 0.2 / width,
                            n_phases * cell_h / height))
        fig.colorbar(im, cax=cax, label="distinct dwords")
        _save(plt, fig, path, fmt)
