"""parse_layout: JSON, @file, CuTe, named specs and the registry."""

from __future__ import annotations

import json

import pytest

from linlayout import LayoutError, LinearLayout
from linlayout.cute import from_cute
from linlayout.spec import named_layouts, parse_layout, register_named_layouts

LAY = LinearLayout({"register": [[1, 0], [0, 2]], "lane": [[0, 1]]}, ["dim0", "dim1"])


def test_json_text_file_and_wrapper(tmp_path):
    text = json.dumps(LAY.to_json())
    assert parse_layout(text).same_order(LAY)
    assert parse_layout(json.dumps({"layout": LAY.to_json(), "rank": 3})).same_order(LAY)
    p = tmp_path / "l.json"
    p.write_text(text)
    assert parse_layout(f"@{p}").same_order(LAY)
    q = tmp_path / "c.txt"
    q.write_text("  Sw<1,0,1> o (2,2):(2,1)\n")
    assert parse_layout(f"@{q}") == from_cute("Sw<1,0,1> o (2,2):(2,1)")


def test_cute_and_cute_prefix():
    assert parse_layout("(8,4):(4,1)") == from_cute("(8,4):(4,1)")
    assert parse_layout("cute:Sw<3,3,3> o (8,64):(64,1)") == from_cute("Sw<3,3,3> o (8,64):(64,1)")
    assert "cute" in named_layouts()


def test_registered_named_spec():
    def ident(rest: str) -> LinearLayout:
        return LinearLayout.identity_1d(int(rest), "lane", "dim0")

    register_named_layouts("test-core-ident", ident, "test-core-ident:N  identity on N lanes")
    register_named_layouts("test-core-ident", ident, "same parser again: a no-op")
    assert parse_layout("test-core-ident:16") == LinearLayout.identity_1d(16, "lane", "dim0")
    assert named_layouts()["test-core-ident"] == "test-core-ident:N  identity on N lanes"
    with pytest.raises(LayoutError, match="named layout 'test-core-ident' rejected 'abc': ValueError"):
        parse_layout("test-core-ident:abc")
    with pytest.raises(LayoutError, match="already registered"):
        register_named_layouts("test-core-ident", lambda s: LAY, "another")
    with pytest.raises(LayoutError):
        register_named_layouts("9bad", ident, "")
    register_named_layouts("test-core-notlayout", lambda s: 42, "returns junk")  # type: ignore[arg-type,return-value]
    with pytest.raises(LayoutError, match="did not produce a layout"):
        parse_layout("test-core-notlayout:x")


@pytest.mark.parametrize(
    "text,msg",
    [
        ("nosuch:thing", "'nosuch' is not a registered named layout (known: "),
        ("{not json", "does not parse"),
        ('{"in_dims": []}', "lacks the key 'out_dims'"),
        ('{"in_dims": [["lane", 2], ["lane", 2]], "out_dims": [["dim0", 4]], "bases": {"lane": [[1]]}}',
         "in dim 'lane' is listed twice in in_dims"),  # was read as one lane bit
        ("hello", "not layout JSON"),
        ("(8,4):(4,3)", "stride 3 of mode 1"),
        ("@/nonexistent/file.json", "cannot read layout file"),
        ("   ", "empty"),
    ],
)
def test_errors_name_what_was_tried(text, msg):
    with pytest.raises(LayoutError) as e:
        parse_layout(text)
    assert msg in str(e.value)


def test_nested_file_reference_is_refused(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("@" + str(p))
    with pytest.raises(LayoutError, match="nesting"):
        parse_layout(f"@{p}")
