"""FlyDSL's printed layout text read without FlyDSL: the cute, smem and tv readings, the text
written back, and every CLI layout argument accepting it.  The texts are as FlyDSL prints them."""

from __future__ import annotations

import json

import pytest

from linlayout import LayoutError, LinearLayout
from linlayout.cli import main
from linlayout.cute import Swizzle, from_cute, swizzle_layout, top_level_modes
from linlayout.flydsl_text import cute_text, from_flydsl, is_flydsl_text, to_flydsl_text, tv_layout
from linlayout.hw.mfma import mfma_layouts
from linlayout.spec import parse_layout

# FlyDSL's thread-value layouts of MFMA atoms (A/B alike; C), and the tile each indexes.
ATOMS = {
    "v_mfma_f32_16x16x16_f16": ("Layout<((16,4),4):((1,64),16)>", "Layout<((16,4),(4,1)):((16,4),(1,16))>", 16, 16, 16),
    "v_mfma_f32_32x32x8_f16": ("Layout<((32,2),4):((1,128),32)>", "Layout<((32,2),(4,4)):((32,4),(1,8))>", 32, 32, 8),
    "v_mfma_f32_16x16x32_fp8_fp8": ("Layout<((16,4),8):((1,128),16)>", "Layout<((16,4),(4,1)):((16,4),(1,16))>",
                                    16, 16, 32),
}


def _transposed(L: LinearLayout) -> LinearLayout:
    """dim0 <-> dim1 (FlyDSL's B tile is N x K, the catalog's B is K x N)."""
    return L.rename_out_dim("dim0", "x").rename_out_dim("dim1", "dim0").rename_out_dim("x", "dim1")


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
@pytest.mark.parametrize("name", sorted(ATOMS))
def test_tv_text_of_mfma_atoms_is_the_catalog(name, arch):
    ab, c, m, n, k = ATOMS[name]
    cat = mfma_layouts(name, arch)
    assert from_flydsl(ab, "tv", tile=(m, k)) == cat["A"]
    assert _transposed(from_flydsl(ab, "tv", tile=(n, k))) == cat["B"]
    assert from_flydsl(c, "tv", tile=(m, n)) == cat["C"]
    assert from_flydsl(ab, "tv", tile=(m, k)) != cat["B"] or m == k  # the roles are told apart


def test_tv_reading_without_tile_and_with_waves():
    A = from_flydsl("Layout<((16,4),4):((1,64),16)>", "tv")
    assert A.in_dims == [("register", 4), ("lane", 64)] and A.out_dims == [("index", 256)]
    assert A.apply({"register": 3, "lane": 17}) == {"index": 1 + 16 * (4 * 1 + 3)}
    # a tiled MMA's A (4 waves, wave bits 2-3 broadcast; K permuted so a lane holds 8 K values)
    T = from_flydsl("Layout<((16,4,4),(4,(1,2))):((1,128,0),(16,(0,64)))>", "tv", tile=(16, 32))
    assert T.in_dims == [("register", 8), ("lane", 64), ("warp", 4)]
    assert T.bases["warp"] == [[0, 0], [0, 0]]
    assert [T.apply({"register": r, "lane": 16})["dim1"] for r in range(8)] == list(range(8, 16))


def test_smem_reading_inverts_the_memory_layout():
    S = from_flydsl("ComposedLayout<S<3,3,3> o 0 o (128,64):(64,1)>")  # composed: smem by default
    assert S.in_dims == [("offset", 8192)] and S.out_dims == [("dim0", 128), ("dim1", 64)]
    plain = from_cute("Sw<3,3,3> o (128,64):(64,1)", in_dim=["dim0", "dim1"])
    assert S == plain.invert()
    # row 1 of the swizzled tile: element (1, c) sits at offset 64 + (c ^ 8)
    assert [S.apply({"offset": 64 + o}) for o in (0, 8)] == [{"dim0": 1, "dim1": 8}, {"dim0": 1, "dim1": 0}]
    assert from_flydsl("Layout<(128,64):(64,1)>") == from_cute("(128,64):(64,1)")  # plain: the literal map
    assert from_flydsl("Layout<(128,64):(64,1)>", "smem") == from_cute("(128,64):(64,1)", in_dim=["dim0", "dim1"]).invert()


@pytest.mark.parametrize("text", [
    "ComposedLayout<S<3,3,3> o 0 o (128,64):(64,1)>",
    "ComposedLayout<S<2,2,4> o 0 o (32,16):(16,1)>",
    "ComposedLayout<S<0,0,0> o 0 o ((8,8),(8,8)):((8,512),(1,64))>",
    "ComposedLayout<S<1,0,1> o 0 o ((8,8)):((8,1))>",
    "ComposedLayout<S<0,0,0> o 0 o (16,8,4):(32,1,8)>",
])
def test_to_flydsl_text_round_trips(text):
    S = from_flydsl(text)
    out = to_flydsl_text(S)
    assert out.startswith("ComposedLayout<S<") and from_flydsl(out) == S


def test_to_flydsl_text_of_a_swizzled_shared_layout():
    plain = from_flydsl("Layout<(32,16):(16,1)>", "smem")
    shared = swizzle_layout(Swizzle(2, 2, 4), 9).compose(plain)
    assert to_flydsl_text(shared) == "ComposedLayout<S<2,2,4> o 0 o (32,16):(16,1)>"
    assert to_flydsl_text(plain) == "ComposedLayout<S<0,0,0> o 0 o (32,16):(16,1)>"


def test_wrapper_and_modes():
    assert is_flydsl_text("Layout<8:1>") and is_flydsl_text(" ComposedLayout<S<1,0,1> o 0 o 4:1> ")
    assert not is_flydsl_text("(8,4):(4,1)")
    assert cute_text("ComposedLayout<S<3,3,3> o 0 o (128,64):(64,1)>") == "Sw<3,3,3> o 0 o (128,64):(64,1)"
    assert cute_text("(8,4):(4,1)") == "(8,4):(4,1)"
    assert [top_level_modes(t) for t in ("8:1", "(8,4):(4,1)", "((8,4)):((4,1))", "Sw<1,0,1> o (2,(2,2)):(1,(2,4))")] \
        == [1, 2, 1, 2]


@pytest.mark.parametrize("call,match", [
    (lambda: from_flydsl("Layout<(4,?):(1,4)>"), "dynamic"),
    (lambda: from_flydsl("Layout<S<1,0,1> o 4:1>"), "ComposedLayout"),
    (lambda: from_flydsl("Layout<(8,4,2):(1,8,32)>", "tv"), "two top-level modes"),
    (lambda: from_flydsl("Layout<(16,4):(1,256)>", "tv", tile=(16, 16)), "out_size 256"),
    (lambda: tv_layout(from_cute("(16,4):(1,16)", in_dim=["thread", "value"]), tile=(16, 16)), "16x16 has 256"),
    (lambda: from_flydsl("Layout<(16,4):(1,16)>", "smem", tile=(16, 4)), "'tv' reading"),
    (lambda: from_flydsl("Layout<(16,4):(1,32)>", "smem"), "not a bijection"),
    (lambda: from_flydsl("Layout<(16,4):(1,0)>", "smem"), "not a bijection"),
    (lambda: from_flydsl("Layout<(16,4):(1,16)>", "mem"), "is not one of"),
    (lambda: from_flydsl("Layout<(16,4):(1,16)>", "tv", tile=(3, 4)), "powers of two"),
    (lambda: to_flydsl_text(LinearLayout.identity_1d(8, "lane", "dim0")), "one in dim 'offset'"),
    (lambda: to_flydsl_text(LinearLayout.identity_1d(8, "offset", "x")), "out dims are dim0"),
    (lambda: to_flydsl_text(LinearLayout.zeros_1d(8, "offset", "dim0")), "not a bijection"),
    (lambda: tv_layout(LinearLayout.identity_1d(8, "lane", "index")), "in dims thread, value"),
])
def test_bad_input_is_one_layout_error(call, match):
    with pytest.raises(LayoutError, match=match):
        call()


def test_every_layout_argument_accepts_flydsl_text():
    assert parse_layout("Layout<((16,4),4):((1,64),16)>") == from_cute("((16,4),4):((1,64),16)")
    assert parse_layout("ComposedLayout<S<3,3,3> o 0 o (128,64):(64,1)>") == from_flydsl(
        "ComposedLayout<S<3,3,3> o 0 o (128,64):(64,1)>", "smem")
    assert parse_layout("tv:16x16:Layout<((16,4),4):((1,64),16)>") == mfma_layouts("v_mfma_f32_16x16x16_f16", "gfx942")["A"]
    assert parse_layout("tv:Layout<((16,4),4):((1,64),16)>").out_dims == [("index", 256)]
    assert parse_layout("smem:(32,16):(16,1)") == from_flydsl("Layout<(32,16):(16,1)>", "smem")


def _cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_show_verify_banks_convert(capsys):
    code, out, _ = _cli(capsys, "show", "tv:16x16:Layout<((16,4),4):((1,64),16)>", "--json")
    assert code == 0 and LinearLayout.from_json(json.loads(out)["layout"]) == mfma_layouts(
        "v_mfma_f32_16x16x16_f16", "gfx942")["A"]
    code, out, _ = _cli(capsys, "verify", "tv:32x32:Layout<((32,2),(4,4)):((32,4),(1,8))>",
                        "tv:32x32:Layout<((32,2),(4,4)):((32,4),(1,8))>")
    assert code == 0
    code, out, _ = _cli(capsys, "verify", "tv:16x16:Layout<((16,4),4):((1,64),16)>",
                        "tv:16x16:Layout<((16,4),(4,1)):((16,4),(1,16))>")
    assert code == 1
    reg = "tv:32x16:Layout<((16,4,2,2),(4,(1,1))):((1,128,16,0),(32,(0,0)))>"
    cycles = {}
    for smem in ("smem:Layout<(32,16):(16,1)>", "ComposedLayout<S<2,2,4> o 0 o (32,16):(16,1)>"):
        code, out, _ = _cli(capsys, "banks", "--arch", "gfx942", "--shared", smem, "--reg", reg, "--dtype", "f16",
                            "--json")
        assert code == 0
        d = json.loads(out)
        cycles[smem] = (d["op"], d["cycles_per_instruction"], d["ideal_cycles"])
    assert cycles == {"smem:Layout<(32,16):(16,1)>": ("ds_read_b64", [16], 4),
                      "ComposedLayout<S<2,2,4> o 0 o (32,16):(16,1)>": ("ds_read_b64", [4], 4)}
    code, out, _ = _cli(capsys, "convert", "--src", "tv:16x16:Layout<((16,4),(4,1)):((16,4),(1,16))>",
                        "--dst", "tv:16x16:Layout<((16,4),4):((1,64),16)>", "--arch", "gfx942", "--dtype", "f16", "--json")
    assert code == 0 and json.loads(out)["verified"] is True
