"""Pictures: files are written, and the cell labels/colours come from the layout; a 64x64 tile is
drawn 1000 pixels wide in under a second, labelled in a zoom."""

from __future__ import annotations

import builtins
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import needs

from linlayout import LayoutError
from linlayout.cli import main
from linlayout.encodings import Wmma, mfma_layout, padded_shared, swizzled_shared, wmma_dot_operand
from linlayout.pictures import WIDTH_PX, ZOOM_CELLS, bank_heatmap, cell_grid, render

needs.module("matplotlib")
from PIL import Image  # noqa: E402  (matplotlib depends on pillow)

MFMA_C = mfma_layout(3, (32, 32, 8), (1, 1), (32, 32))


def _expected_label(layout, r, c):
    """The label of cell (r, c): the smallest (warp, lane, register) holding it, by brute force."""
    best = None
    for w in range(layout.in_dim_size("warp")):
        for lane in range(layout.in_dim_size("lane")):
            for reg in range(layout.in_dim_size("register")):
                out = layout.apply({"register": reg, "lane": lane, "warp": w})
                if (out["dim0"], out["dim1"]) == (r, c):
                    key = (w, lane, reg)
                    best = key if best is None or key < best else best
    w, lane, reg = best
    return f"{lane}\n{reg}" + (f"\n{w}" if layout.in_dim_size("warp") > 1 else "")


def _svg_texts(path):
    return ["".join(el.itertext()) for el in ET.parse(path).getroot().iter() if el.tag.endswith("text")]


def _drawn_in_order(texts, labels) -> bool:
    """The label lines of ``labels`` (row by row) appear as consecutive SVG texts."""
    lines = [ln for lab in labels.flat for ln in lab.split("\n")]
    return any(texts[i:i + len(lines)] == lines for i in range(len(texts) - len(lines) + 1))


def test_render_mfma_png_and_svg(tmp_path):
    png, svg = tmp_path / "c.png", tmp_path / "c.svg"
    labels = render(MFMA_C, png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and Image.open(png).size == (WIDTH_PX, 930)
    assert labels.shape == (32, 32) and cell_grid(MFMA_C).label_dims == ["lane", "register"]
    for r, c in [(0, 0), (0, 31), (4, 0), (5, 17), (31, 31), (12, 9)]:
        assert labels[r, c] == _expected_label(MFMA_C, r, c)
    # every label names a (lane, register) that the layout maps to that cell
    for r in range(32):
        for c in range(32):
            m = re.fullmatch(r"(\d+)\n(\d+)", labels[r, c])
            out = MFMA_C.apply({"lane": int(m.group(1)), "register": int(m.group(2))})
            assert (out["dim0"], out["dim1"]) == (r, c)

    svg_labels = render(MFMA_C, svg)
    assert np.array_equal(svg_labels, labels)
    texts = _svg_texts(svg)
    # the 32 x 32 tile is labelled whole, one SVG text per label line, row by row; lane 37 holds 16 cells
    assert _drawn_in_order(texts, labels) and len(texts) < 2 * labels.size + 100
    assert sum(lab.startswith("37\n") for lab in labels.flat) == 16
    assert "each cell: lane / register" in texts and not any(t.startswith("T") for t in texts)


def test_colour_by_warp_and_tile_boundaries():
    L = mfma_layout(3, (16, 16, 16), (2, 2), (32, 32))
    g = cell_grid(L, color_by="warp")
    w = L.apply({"warp": np.arange(4)})
    for k in range(4):
        assert g.values[w["dim0"][k], w["dim1"][k]] == k
    assert g.num_values == 4 and g.lane_tile == {"dim0": 16, "dim1": 16}


def test_broadcast_is_marked():
    A = wmma_dot_operand(Wmma(1, (1, 1)), 0, 16, (16, 16))
    g = cell_grid(A)
    assert (g.copies == 2).all()
    assert g.labels[3, 5] == "3+1\n5" and g.label_dims == ["lane", "register"]


def test_shared_layout_shows_offsets_and_banks():
    S = swizzled_shared(4, 1, 8, (1, 0), (8, 32))
    g = cell_grid(S, element_bytes=2, banks=32)
    assert g.color_by == "bank"
    inv = S.invert()
    for r, c in [(0, 0), (1, 0), (3, 17), (7, 31)]:
        off = inv.apply({"dim0": r, "dim1": c})["offset"]
        assert g.labels[r, c] == f"{off}\n{(off * 2 // 4) % 32}"
        assert g.values[r, c] == (off * 2 // 4) % 32


def test_padded_layout_banks_use_padded_addresses():
    P = padded_shared([(32, 1)], (4, 32), order=(1, 0))
    g = cell_grid(P, element_bytes=4, banks=32)
    # row 1 starts at address 33 -> bank 1
    assert g.values[1, 0] == 1 and g.labels[1, 0] == "32\n1" and g.label_dims == ["offset", "bank"]


def test_three_d_layouts_stack_panels():
    L = mfma_layout(3, (32, 32, 8), (2, 1, 1), (2, 32, 32))
    g = cell_grid(L)
    assert g.labels.shape == (64, 32) and g.row_dims == ["dim0", "dim1"]


def test_a_64x64_tile_is_drawn_whole_with_a_labelled_zoom(tmp_path):
    # its time is benchmarks/bench_pictures.py's (under a second), not a unit test's
    L = mfma_layout(3, (32, 32, 8), (2, 2), (64, 64))
    for name in ("t.png", "t.svg"):
        labels = render(L, tmp_path / name)
    assert labels.shape == (64, 64) and labels[0, 0] == "0\n0\n0"
    assert Image.open(tmp_path / "t.png").size == (WIDTH_PX, 560)
    texts = _svg_texts(tmp_path / "t.svg")
    # the zoom: ZOOM_CELLS x ZOOM_CELLS cells of warp 0, two lines each (warp stated once in the key)
    zoom = labels[:ZOOM_CELLS, :ZOOM_CELLS]
    assert {lab.rsplit("\n", 1)[1] for lab in zoom.flat} == {"0"}
    assert _drawn_in_order(texts, np.vectorize(lambda lab: lab.rsplit("\n", 1)[0])(zoom))
    assert len(texts) < 2 * ZOOM_CELLS ** 2 + 100  # nothing else labelled cell by cell
    assert [t for t in texts if t.startswith("warp ")] == ["warp 0", "warp 1", "warp 2", "warp 3"]
    assert any("each cell: lane / register   (all: warp 0)" in t for t in texts)


def test_bank_heatmap(tmp_path):
    table = np.zeros((4, 32), dtype=int)
    table[:, :2] = 16
    bank_heatmap(table, tmp_path / "h.png", title="x")
    bank_heatmap(table, tmp_path / "h.svg", title="x")
    assert Image.open(tmp_path / "h.png").size == (WIDTH_PX, 250)
    assert _svg_texts(tmp_path / "h.svg").count("16") == 8 + 1  # the 8 nonzero cells, and bank tick 16


def test_errors(tmp_path, monkeypatch):
    with pytest.raises(LayoutError, match=r"\.png or \.svg"):
        render(MFMA_C, tmp_path / "x.jpg")
    (tmp_path / "d.png").mkdir()
    with monkeypatch.context() as m:  # an unwritable path is refused before matplotlib draws anything
        m.setattr("linlayout.pictures._pyplot", lambda: pytest.fail("drew a picture it cannot write"))
        with pytest.raises(LayoutError, match=f"cannot write picture .*: no folder '{tmp_path / 'no'}'"):
            render(MFMA_C, tmp_path / "no" / "x.png")
        with pytest.raises(LayoutError, match="cannot write picture .*: it is a folder"):
            render(MFMA_C, tmp_path / "d.png")
        with pytest.raises(LayoutError, match="no folder"):
            bank_heatmap(np.zeros((4, 32), dtype=int), tmp_path / "no" / "h.svg", title="x")
        with pytest.raises(LayoutError, match="^cannot write picture '': an empty path$"):
            render(MFMA_C, "")
    with pytest.raises(LayoutError, match="color_by"):
        cell_grid(MFMA_C, color_by="bank")
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("no matplotlib here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(LayoutError, match=re.escape("pip install 'linlayout[plot]'")):
        render(MFMA_C, tmp_path / "x.png")
    with pytest.raises(LayoutError, match="too large to draw"):
        cell_grid(mfma_layout(3, (32, 32, 8), (1, 1), (512, 256)))


def test_show_png_end_to_end(tmp_path, capsys):
    png = tmp_path / "s.png"
    assert main(["show", "mfma:16x16x16,warps=1x1,shape=16x16", "--png", str(png), "--json", "--limit", "0"]) == 0
    assert png.exists() and png.stat().st_size > 5_000
    capsys.readouterr()
