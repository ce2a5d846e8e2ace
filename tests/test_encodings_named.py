"""Named layout specs (``mfma:...``, ``dotop:...``, ...) parse to the constructors' layouts,
including every example in docs/layouts.md, and reject bad input with LayoutError."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import linlayout.encodings as enc
from linlayout import LayoutError
from linlayout.cli import main
from linlayout.encodings import (
    Blocked,
    Mfma,
    Wmma,
    blocked,
    dot_operand,
    mfma_dot_operand,
    mfma_layout,
    slice_layout,
    swizzled_shared,
    wmma_dot_operand,
    wmma_layout,
)
from linlayout.spec import named_layouts, parse_layout

DOC = Path(__file__).resolve().parents[1] / "docs" / "layouts.md"


@pytest.mark.parametrize("spec, expected", [
    ("mfma:32x32x8,warps=2x2,shape=64x64", lambda: mfma_layout(3, (32, 32, 8), (2, 2), (64, 64))),
    ("mfma:16x16x32,v=4,warps=4x1,shape=128x32,transposed,tpw=2x1,bits=16",
     lambda: mfma_layout(4, (16, 16, 32), (4, 1), (128, 32), is_transposed=True, tiles_per_warp=(2, 1),
                         element_bits=16)),
    ("mfma.a:32x32x8,warps=2x2,kwidth=8,shape=64x32",
     lambda: mfma_dot_operand(Mfma(3, (32, 32, 8), (2, 2)), 0, 8, (64, 32))),
    ("mfma.b:16x16x16,warps=2x2,kwidth=4,shape=32x64",
     lambda: mfma_dot_operand(Mfma(3, (16, 16, 16), (2, 2)), 1, 4, (32, 64))),
    ("dotop:mfma(32x32x8,warps=2x2),op=0,kwidth=8,shape=64x32",
     lambda: mfma_dot_operand(Mfma(3, (32, 32, 8), (2, 2)), 0, 8, (64, 32))),
    ("wmma:16x16x16,v=1,warps=2x2,shape=32x32", lambda: wmma_layout(1, (2, 2), (32, 32))),
    ("wmma:32x16x64,v=3,warps=2x2,shape=64x64",
     lambda: wmma_layout(3, (2, 2), (64, 64), instr_shape=(32, 16, 64))),
    ("wmma.b:v=2,warps=2x4,kwidth=8,shape=64x128",
     lambda: wmma_dot_operand(Wmma(2, (2, 4)), 1, 8, (64, 128))),
    ("blocked:spt=1x8,tpw=8x8,wpc=4x1,order=1x0,shape=64x64",
     lambda: blocked((1, 8), (8, 8), (4, 1), (1, 0), (64, 64))),
    ("dotop:blocked(spt=1x4,tpw=8x4,wpc=2x2,order=1x0),op=1,shape=16x64",
     lambda: dot_operand(Blocked((1, 4), (8, 4), (2, 2), (1, 0)), 1, 0, (16, 64))),
    ("slice:mfma(32x32x8,warps=2x2),dim=0,shape=64",
     lambda: slice_layout(Mfma(3, (32, 32, 8), (2, 2)), 0, (64,))),
    ("swizzled:vec=8,phase=1,maxphase=8,order=1x0,shape=32x64",
     lambda: swizzled_shared(8, 1, 8, (1, 0), (32, 64))),
    ('triton:{"encoding": "amd_mfma", "shape": [64, 64], "version": 3, "warpsPerCTA": [2, 2],'
     ' "instrShape": [32, 32, 8]}', lambda: mfma_layout(3, (32, 32, 8), (2, 2), (64, 64))),
])
def test_named_spec_equals_constructor(spec, expected):
    assert parse_layout(spec).same_order(expected())


def test_specs_are_registered_with_help():
    names = named_layouts()
    for prefix in ("mfma", "mfma.a", "mfma.b", "wmma", "wmma.a", "wmma.b", "blocked", "swizzled", "rotating",
                   "dotop", "slice", "triton"):
        assert prefix in names and names[prefix].startswith(prefix + ":")


@pytest.mark.parametrize("spec, needle", [
    ("mfma:32x32x8,warps=2x2", "shape"),
    ("mfma:32x32x8,warps=2x2,shape=64x64,foo=1", "foo"),
    ("mfma:32x32x8,warps=2x2,shape=64x64,warps=1x1", "twice"),
    ("mfma:warps=2x2,shape=64x64", "instruction shape"),
    ("mfma:32x32x8,warps=2x2,shape=64x64,bits=x", "bits"),
    ("mfma:32x32x8,warps=2x2,shape=64x64,sideways", "sideways"),
    ("mfma:24x32x8,warps=2x2,shape=64x64", "instrShape"),
    ("wmma:16x16x16,warps=2x2,shape=32x32", "v="),
    ("dotop:op=0,kwidth=8,shape=64x32", "parent"),
    ("dotop:mfma(32x32x8,warps=2x2,op=0,kwidth=8,shape=64x32", "unbalanced"),
    ("dotop:tiles(1),op=0,shape=64x32", "unknown encoding"),
    ("slice:blocked(spt=1x1,tpw=8x8,wpc=1x1,order=1x0),dim=3,shape=8", "dim"),
    ("blocked:spt=1x8,tpw=8x8,wpc=4x1,order=1x0,shape=64x64,,", "empty"),
    ("triton:{", "JSON"),
    ('triton:{"encoding": "padded_shared", "shape": [8, 8], "intervals": [8], "paddings": [1], "order": [1, 0]}',
     "padded"),
])
def test_bad_specs_raise_layout_error(spec, needle):
    with pytest.raises(LayoutError, match=re.escape(needle)):
        parse_layout(spec)


def test_show_accepts_named_spec(capsys):
    assert main(["show", "mfma:16x16x16,warps=1x1,shape=16x16", "--json", "--limit", "0"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["layout"] == mfma_layout(3, (16, 16, 16), (1, 1), (16, 16)).to_json()


def _doc_rows():
    """``(spec, python)`` pairs of the examples table in docs/layouts.md."""
    if not DOC.exists():
        return []
    rows = []
    for line in DOC.read_text().splitlines():
        m = re.match(r"^\|\s*`([a-z.]+:[^`]+)`\s*\|\s*`([^`]+)`\s*\|", line)
        if m:
            rows.append(pytest.param(m.group(1), m.group(2), id=m.group(1)[:40]))
    return rows


DOC_ROWS = _doc_rows()


def test_docs_have_examples():
    assert len(DOC_ROWS) >= 8


@pytest.mark.parametrize("spec, python", DOC_ROWS)
def test_docs_examples(spec, python):
    expected = eval(python, {name: getattr(enc, name) for name in enc.__all__})  # noqa: S307 - our own docs
    got = parse_layout(spec)
    assert got.same_order(expected)


def test_docs_python_block_runs():
    if not DOC.exists():
        pytest.skip("docs/layouts.md is absent")
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert blocks
    namespace: dict = {}
    for block in blocks:
        exec(block, namespace)  # noqa: S102 - our own docs
    assert namespace["C"].out_dims == [("dim0", 128), ("dim1", 32)]
    assert namespace["P"].footprint == 64 * 64 + 31 * 4
