"""linlayout.flydsl.layout_of / to_flydsl on live FlyDSL objects: MMA atoms and tiled MMAs
equal the MFMA catalog, tiled copies, and shared layouts round-trip through composed layouts."""

from __future__ import annotations

import needs

needs.module("flydsl")  # run by tests/test_flydsl_live.py in a process of its own

import pytest  # noqa: E402
import flydsl.expr as fx  # noqa: E402
from flydsl._mlir import ir  # noqa: E402

from flydsl_scope import insertion_point  # noqa: E402
from linlayout import LayoutError, LinearLayout  # noqa: E402
from linlayout.cute import Swizzle, swizzle_layout  # noqa: E402
from linlayout.flydsl import layout_of, to_flydsl  # noqa: E402
from linlayout.flydsl.convert import plan_for  # noqa: E402
from linlayout.flydsl.layouts import mfma_instruction, mma_tiles, tile_shape  # noqa: E402
from linlayout.flydsl_text import from_flydsl, to_flydsl_text  # noqa: E402
from linlayout.hw.mfma import mfma_layouts  # noqa: E402


@pytest.fixture
def at():
    """An MLIR context with FlyDSL's dialects and an insertion point, as inside a kernel."""
    with insertion_point() as module:
        yield module


# (M, N, K, FlyDSL element type name, the catalog's instruction)
ATOMS = [
    (16, 16, 16, "Float16", "v_mfma_f32_16x16x16_f16"),
    (32, 32, 8, "Float16", "v_mfma_f32_32x32x8_f16"),
    (16, 16, 16, "BFloat16", "v_mfma_f32_16x16x16_bf16"),
    (16, 16, 32, "Float8E4M3FNUZ", "v_mfma_f32_16x16x32_fp8_fp8"),
    (16, 16, 4, "Float32", "v_mfma_f32_16x16x4_f32"),
    (32, 32, 16, "Float8E4M3FNUZ", "v_mfma_f32_32x32x16_fp8_fp8"),
]
GFX950_ATOMS = [
    (16, 16, 32, "Float16", "v_mfma_f32_16x16x32_f16"),
    (32, 32, 16, "BFloat16", "v_mfma_f32_32x32x16_bf16"),
    (16, 16, 32, "BFloat16", "v_mfma_f32_16x16x32_bf16"),
    (16, 16, 32, "Float8E4M3FN", "v_mfma_f32_16x16x32_fp8_fp8"),  # gfx950's OCP fp8
]


def _atom(m, n, k, dtype):
    return fx.make_mma_atom(fx.rocdl.MFMA(m, n, k, getattr(fx, dtype)))


@pytest.mark.parametrize("arch,atom", [(a, x) for a in ("gfx942", "gfx950") for x in ATOMS]
                         + [("gfx950", x) for x in GFX950_ATOMS])
def test_mma_atom_roles_are_the_catalog(at, arch, atom):
    m, n, k, dtype, name = atom
    mma = _atom(m, n, k, dtype)
    assert mfma_instruction(mma) == name
    assert mma_tiles(mma) == {"m": m, "n": n, "k": k}
    cat = mfma_layouts(name, arch)
    for role in "ABC":
        assert layout_of(mma, role) == cat[role], role


def test_tiled_mma_with_waves_and_k_permutation(at):
    mma = _atom(16, 16, 16, "Float16")
    tiled = fx.make_tiled_mma(mma, fx.make_layout((1, 4, 1), (0, 1, 0)), [None, None, fx.make_layout((4, 4, 2), (1, 8, 4))])
    assert mma_tiles(tiled) == {"m": 16, "n": 64, "k": 32}
    A, B, C = (layout_of(tiled, r) for r in "ABC")
    one = mfma_layouts("v_mfma_f32_16x16x16_f16", "gfx942")
    # A: 4 waves along N share the M x K tile (warp bits broadcast); K permuted so that a lane
    # holds 8 consecutive K values: instruction 0 takes values 0-3 (K 0-3, 8-11, ... per lane group)
    assert A.in_dims == [("register", 8), ("lane", 64), ("warp", 4)] and A.out_dims == [("dim0", 16), ("dim1", 32)]
    assert A.bases["warp"] == [[0, 0], [0, 0]]
    assert [A.apply({"register": r, "lane": 16})["dim1"] for r in range(8)] == list(range(8, 16))
    # B is K x N (the catalog's orientation); wave w owns columns 16w .. 16w+15
    assert B.out_dims == [("dim0", 32), ("dim1", 64)] and B.bases["warp"] == [[0, 16], [0, 32]]
    # C: each wave's accumulator is the instruction's, 16 columns further per wave
    assert C.sublayout(["register", "lane"], ["dim0", "dim1"]).resize_out_dim("dim1", 16) == one["C"]
    assert C.bases["warp"] == [[0, 16], [0, 32]]


def test_tiled_copy_and_tile(at):
    mma = _atom(16, 16, 16, "Float16")
    tiled = fx.make_tiled_mma(mma, fx.make_layout((2, 2, 1), (1, 2, 0)))
    copy = fx.make_tiled_copy_A(fx.make_copy_atom(fx.UniversalCopy64b(), fx.Float16), tiled)
    assert tile_shape(copy.tile_mn) == [32, 16]
    R = layout_of(copy)
    assert R == layout_of(copy, "dst")
    assert R.out_dims == [("dim0", 32), ("dim1", 16)]
    assert R.remove_zero_bases_along_dim("register") == layout_of(tiled, "A").remove_zero_bases_along_dim("register")
    with pytest.raises(LayoutError, match="'src' or 'dst'"):
        layout_of(copy, "A")


@pytest.mark.parametrize("text", [
    "ComposedLayout<S<3,3,3> o 0 o (128,64):(64,1)>",
    "ComposedLayout<S<2,2,4> o 0 o (32,16):(16,1)>",
    "ComposedLayout<S<0,0,0> o 0 o ((8,8),(8,8)):((8,512),(1,64))>",
])
def test_composed_layouts_read_and_round_trip(at, text):
    body = text[len("ComposedLayout<"):-1]
    live = fx.static(ir.Type.parse(f"!fly.composed_layout<{body}>"))
    assert str(live) == text
    S = layout_of(live)
    assert S == from_flydsl(text)
    back = to_flydsl(S)
    assert isinstance(back, fx.ComposedLayout) and layout_of(back) == S


def test_to_flydsl_of_a_synthesized_swizzle(at):
    plain = from_flydsl("Layout<(64,32):(32,1)>", "smem")
    shared = swizzle_layout(Swizzle(3, 2, 4), 11).compose(plain)
    live = to_flydsl(shared)
    assert str(live) == "ComposedLayout<S<3,2,4> o 0 o (64,32):(32,1)>" and layout_of(live) == shared


def test_plain_layouts_and_text(at):
    L = fx.make_layout((16, 4), (1, 16))
    assert layout_of(L) == from_flydsl("Layout<(16,4):(1,16)>")
    assert layout_of(L, "smem") == from_flydsl("Layout<(16,4):(1,16)>", "smem")
    assert layout_of("tv:16x16:Layout<((16,4),4):((1,64),16)>") == mfma_layouts("v_mfma_f32_16x16x16_f16", "gfx942")["A"]
    assert layout_of("Layout<((16,4),4):((1,64),16)>", "tv").out_dims == [("index", 256)]


def test_tensors(at):
    frag = fx.make_rmem_tensor(fx.make_layout((4, 2), (1, 4)), fx.Float16)
    with pytest.raises(LayoutError, match="register tensor's layout is not a shared layout"):
        layout_of(frag)
    assert layout_of(frag, "cute") == from_flydsl("Layout<(4,2):(1,4)>")


def test_errors(at):
    mma = _atom(16, 16, 16, "Float16")
    with pytest.raises(LayoutError, match="needs its role"):
        layout_of(mma)
    with pytest.raises(LayoutError, match="not int"):
        layout_of(3)
    with pytest.raises(LayoutError, match="not a bijection"):
        to_flydsl(LinearLayout.zeros_1d(8, "offset", "dim0"))


def test_to_flydsl_needs_an_insertion_point():
    ctx = ir.Context()
    ctx.load_all_available_dialects()
    with ctx, ir.Location.unknown(), pytest.raises(LayoutError, match="insertion point.*S<0,0,0> o 0 o 8:1"):
        to_flydsl(from_flydsl("Layout<8:1>", "smem"))
    assert to_flydsl_text(from_flydsl("Layout<8:1>", "smem")) == "ComposedLayout<S<0,0,0> o 0 o 8:1>"


def test_convert_takes_flydsl_fragments_and_copies(at):
    """``convert``'s src and dst as a FlyDSL author holds them: the tiled MMA's fragment roles
    ``(tiled, "C")`` -> ``(tiled, "A")`` plan exactly the catalog's C -> A conversion, and a tiled
    copy (its src side) stands for its thread-value layout."""
    tiled = fx.make_tiled_mma(_atom(16, 16, 16, "Float16"), fx.make_layout((1, 1, 1), (0, 0, 0)))
    cat = mfma_layouts("v_mfma_f32_16x16x16_f16", "gfx942")
    plan = plan_for((tiled, "C"), (tiled, "A"), 16, arch="gfx942")
    assert (plan.src, plan.dst) == (cat["C"], cat["A"])
    assert plan.dumps() == plan_for(cat["C"], cat["A"], 16, arch="gfx942").dumps()
    copy = fx.make_tiled_copy_A(fx.make_copy_atom(fx.UniversalCopy64b(), fx.Float16), tiled)
    assert plan_for(copy, (tiled, "A"), 16, arch="gfx942").src == layout_of(copy)
    with pytest.raises(LayoutError, match="dst: an MMA's layout needs its role"):
        plan_for((tiled, "C"), tiled, 16, arch="gfx942")
