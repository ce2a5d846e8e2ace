"""``to_gluon`` / ``gluon_source`` and ``linlayout layout --to-triton``: Gluon Python for a layout.

The exact text is checked here; that Triton builds the same layout from it is checked
against the wheel (here for the CLI's output, and in bulk in test_encodings_triton_wheel.py).
"""

from __future__ import annotations

import json

import pytest

from linlayout import LayoutError, LinearLayout
from linlayout.cli import main
from linlayout.encodings import AmdRotatingShared, Blocked, Cga, DotOperand, Wmma, gluon_source, to_gluon
from linlayout.encodings.gluon import has_gluon_class
from triton_oracle import TRITON_VERSION, ask_triton, triton_version

MFMA = {"encoding": "amd_mfma", "shape": [64, 64], "version": 3, "instrShape": [32, 32, 8], "warpsPerCTA": [2, 2]}


def test_distributed_layout_text():
    layout = LinearLayout({"register": [[0, 1]], "lane": [[1, 0], [0, 2]], "warp": [], "block": []},
                          [("dim0", 2), ("dim1", 4)])
    assert to_gluon(layout) == ("ttgl.DistributedLinearLayout(reg_bases=[[0, 1]], lane_bases=[[1, 0], [0, 2]], "
                                "warp_bases=[], block_bases=[], shape=[2, 4])")


def test_shared_layout_text():
    layout = LinearLayout({"offset": [[0, 1], [1, 1]]}, [("dim0", 2), ("dim1", 2)])
    assert to_gluon(layout) == "ttgl.SharedLinearLayout(offset_bases=[[0, 1], [1, 1]], block_bases=[])"


def test_other_in_dims_are_refused():
    with pytest.raises(LayoutError, match="neither register/lane/warp/block nor offset/block"):
        to_gluon(LinearLayout.identity_1d(4, "thread", "dim0"))


def test_non_surjective_shared_layout_is_refused():
    with pytest.raises(LayoutError, match="not surjective"):
        to_gluon(LinearLayout({"offset": [[1]]}, [("dim0", 4)]))


def test_named_encodings_text():
    cga = Cga.from_params([2, 1], [2, 1], [1, 0])
    blocked = Blocked((1, 4), (8, 4), (2, 2), (1, 0), cga)
    assert gluon_source(DotOperand(blocked, 0, 0)) == (
        "ttgl.DotOperandLayout(operand_index=0, parent=ttgl.BlockedLayout(size_per_thread=[1, 4], "
        "threads_per_warp=[8, 4], warps_per_cta=[2, 2], order=[1, 0], cga_layout=[[1, 0]]), k_width=0)")
    # WMMA: Gluon takes the CTA layout's bases (tilesPerWarp -> registers, warpsPerCTA -> warps, N first)
    assert gluon_source(Wmma(2, (2, 2), True, (16, 16, 16), (1, 2))) == (
        "ttgl.amd.AMDWMMALayout(version=2, transposed=True, warp_bases=[[0, 2], [1, 0]], reg_bases=[[0, 1]], "
        "instr_shape=[16, 16, 16], cga_layout=[], rank=2)")


def test_rotating_shared_has_no_gluon_class():
    rotating = AmdRotatingShared(4, 1, 4, (1, 0))
    assert not has_gluon_class(rotating)
    assert has_gluon_class(DotOperand(Wmma(2, (2, 2)), 0, 8))
    with pytest.raises(LayoutError, match="no amd_rotating_shared"):
        gluon_source(rotating)


def test_cli_prints_an_encoding_without_gluon_class_as_its_linear_layout(capsys):
    obj = {"encoding": "amd_rotating_shared", "shape": [16, 16], "vec": 4, "perPhase": 1, "maxPhase": 4,
           "order": [1, 0]}
    layout = AmdRotatingShared(4, 1, 4, (1, 0)).to_linear_layout((16, 16))
    assert _cli(json.dumps(obj), capsys)["gluon"] == to_gluon(layout)


def _cli(arg: str, capsys) -> dict:
    assert main(["layout", "--to-triton", arg, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_prints_the_named_encoding(capsys):
    out = _cli(json.dumps(MFMA), capsys)
    assert out == {"gluon": "ttgl.amd.AMDMFMALayout(version=3, instr_shape=[32, 32, 8], transposed=False, "
                            "warps_per_cta=[2, 2], element_bitwidth=32, tiles_per_warp=[1, 1], cga_layout=[])",
                   "import": "from triton.experimental.gluon import language as ttgl"}


def test_cli_prints_a_layout_json_as_a_linear_layout(capsys):
    layout = LinearLayout({"offset": [[0, 1], [1, 1]]}, [("dim0", 2), ("dim1", 2)])
    assert _cli(json.dumps(layout.to_json()), capsys)["gluon"] == to_gluon(layout)


def test_cli_human_form_is_python(capsys):
    assert main(["layout", "--to-triton", json.dumps(MFMA)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("from triton.experimental.gluon import language as ttgl\n\nlayout = ttgl.amd.AMDMFMALayout(")
    compile(text, "<to-triton>", "exec")


def test_cli_refuses_other_in_dims(capsys):
    layout = LinearLayout.identity_1d(4, "thread", "dim0")
    assert main(["layout", "--to-triton", json.dumps(layout.to_json()), "--json"]) == 2
    assert "neither register/lane/warp/block" in capsys.readouterr().err


@pytest.mark.skipif(triton_version() != TRITON_VERSION, reason=f"triton=={TRITON_VERSION} is not installed")
def test_cli_text_gives_triton_the_layout(capsys):
    """Both printed forms of the MFMA layout, built by Triton, are the layout linlayout prints."""
    named = _cli(json.dumps(MFMA), capsys)["gluon"]
    assert main(["layout", "--triton", json.dumps(MFMA), "--json"]) == 0
    layout_json = capsys.readouterr().out
    linear = _cli(layout_json, capsys)["gluon"]
    expected = LinearLayout.from_json(json.loads(layout_json))
    for answer in ask_triton([{"op": "layout", "gluon": g, "shape": MFMA["shape"]} for g in (named, linear)]):
        assert answer["bases"] == {d: expected.bases.get(d, []) for d in answer["bases"]}
        assert answer["shape"] == MFMA["shape"]
