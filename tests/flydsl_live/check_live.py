"""check_copy: a real FlyDSL tiled copy (the A side of a 2x2-wave 16x16x16 f16 tiled MMA, 64-bit
universal copies) against swizzled and unswizzled sA, cross-checked with `linlayout banks`."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import needs

needs.module("flydsl")  # run by tests/test_flydsl_live.py in a process of its own

import pytest  # noqa: E402
import flydsl.expr as fx  # noqa: E402

from flydsl_scope import insertion_point  # noqa: E402
from linlayout import LayoutError  # noqa: E402
from linlayout.cli import main  # noqa: E402
from linlayout.flydsl import check_copy, layout_of  # noqa: E402
from linlayout.flydsl.check import copy_bits, lds_op  # noqa: E402

COPY_TV = "Layout<((16,4,2,2),(4,(1,1))):((1,128,16,0),(32,(0,0)))>"  # the copy's layout_tv_tiled, tile 32x16


def _tiled_copy(make_tiled_copy):
    """A 64-bit f16 tiled copy of one side of a 2 x 2-wave MFMA(16,16,16,f16) tiled MMA."""
    with insertion_point():
        mma = fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 16, fx.Float16))
        tiled = fx.make_tiled_mma(mma, fx.make_layout((2, 2, 1), (1, 2, 0)))
        yield make_tiled_copy(fx.make_copy_atom(fx.UniversalCopy64b(), fx.Float16), tiled)


@pytest.fixture
def copy_a():
    yield from _tiled_copy(fx.make_tiled_copy_A)


@pytest.fixture
def copy_c():
    yield from _tiled_copy(fx.make_tiled_copy_C)


def _cli_banks(arch: str, smem: str, reg: str = f"tv:32x16:{COPY_TV}", direction: str = "read") -> tuple:
    """`linlayout banks` whole-tile mode on the same shared layout and the copy's printed layout."""
    buf = io.StringIO()
    with redirect_stdout(buf):
        code = main(["banks", "--arch", arch, "--shared", smem, "--reg", reg, "--dtype", "f16",
                     "--direction", direction, "--json"])
    assert code == 0
    d = json.loads(buf.getvalue())
    return d["op"], d["cycles_per_instruction"], d["min_cycles"] // d["instructions"]


def test_the_copy_is_the_printed_layout(copy_a):
    assert str(copy_a.layout_tv_tiled) == COPY_TV
    assert copy_bits(copy_a) == (64, 16) and lds_op(64, "read") == "ds_read_b64"
    assert layout_of(copy_a).remove_zero_bases_along_dim("register") == layout_of(f"tv:32x16:{COPY_TV}")


# (arch, sA as FlyDSL prints it, cycles of each ds_read_b64, ideal cycles of one)
ONE_TILE = [
    ("gfx942", "Layout<(32,16):(16,1)>", [16], 4),
    ("gfx942", "ComposedLayout<S<2,2,3> o 0 o (32,16):(16,1)>", [8], 4),
    ("gfx942", "ComposedLayout<S<2,2,4> o 0 o (32,16):(16,1)>", [4], 4),
    ("gfx950", "Layout<(32,16):(16,1)>", [4], 2),
    ("gfx950", "ComposedLayout<S<2,2,4> o 0 o (32,16):(16,1)>", [2], 2),
]


@pytest.mark.parametrize("arch,smem,cycles,ideal", ONE_TILE)
def test_cycles_per_instruction_agree_with_the_cli(copy_a, arch, smem, cycles, ideal):
    r = check_copy(copy_a, smem if smem.startswith("Composed") else fx.make_layout((32, 16), (16, 1)), arch=arch)
    assert (r.op, r.instructions, r.cycles, r.ideal_cycles) == ("ds_read_b64", 1, cycles, ideal)
    assert r.conflict_free == (cycles == [ideal])
    cli_smem = smem if smem.startswith("Composed") else f"smem:{smem}"
    assert _cli_banks(arch, cli_smem) == ("ds_read_b64", cycles, ideal)
    assert f"{cycles[0]} cycles vs {ideal} ideal" in r.reason
    assert r.swizzle_cycles == [ideal]  # the swizzle found is conflict-free for the copy


def test_whole_sA_and_its_swizzle(copy_a):
    """sA 64 x 32 (row-major, K contiguous): the 32 x 16 copy tile repeats 2 x 2 (4 instructions)."""
    r = check_copy(copy_a, fx.make_layout((64, 32), (32, 1)), arch="gfx942")
    assert (r.op, r.instructions, r.cycles, r.ideal_cycles, r.conflict_free) == ("ds_read_b64", 4, [32] * 4, 4, False)
    assert "collision" in r.reason
    assert r.swizzle == "ComposedLayout<S<3,2,4> o 0 o (64,32):(32,1)>"
    assert (r.swizzle_cycles, r.other_op, r.other_cycles) == ([4] * 4, "ds_write_b64", [4, 4])
    again = check_copy(copy_a, r.swizzle, arch="gfx942")  # the swizzle, given back as FlyDSL text
    assert again.cycles == r.swizzle_cycles and again.conflict_free
    live = r.swizzle_layout()
    assert str(live) == r.swizzle and layout_of(live) == r.swizzled
    assert r.to_json()["swizzle"] == r.swizzle


def test_writing_the_accumulator(copy_c):
    """The C side (64-bit copies of 4 f16 along M) writing a 32 x 32 tile stored M-contiguous."""
    tv = str(copy_c.layout_dst_tv_tiled)
    r = check_copy(copy_c, "Layout<(32,32):(1,32)>", arch="gfx942", direction="write")
    assert (r.op, r.instructions, r.cycles, r.ideal_cycles) == ("ds_write_b64", 1, [32], 4)
    assert _cli_banks("gfx942", "smem:Layout<(32,32):(1,32)>", f"tv:32x32:{tv}", "write") == ("ds_write_b64", [32], 4)
    assert (r.swizzle, r.swizzle_cycles) == ("ComposedLayout<S<3,2,4> o 0 o (32,32):(1,32)>", [4])
    assert _cli_banks("gfx942", r.swizzle, f"tv:32x32:{tv}", "write") == ("ds_write_b64", [4], 4)
    with pytest.raises(LayoutError, match="not contiguous"):
        check_copy(copy_c, "Layout<(32,32):(32,1)>", arch="gfx942", direction="write")


def test_bad_input(copy_a):
    with pytest.raises(LayoutError, match="'read' or 'write'"):
        check_copy(copy_a, "Layout<(32,16):(16,1)>", arch="gfx942", direction="load")
    with pytest.raises(LayoutError, match="larger than the shared tensor"):
        check_copy(copy_a, "Layout<(16,16):(16,1)>", arch="gfx942")
    with pytest.raises(LayoutError, match="no LDS instruction"):
        lds_op(48, "read")
    with pytest.raises(LayoutError, match="^expected a FlyDSL tiled copy, got NoneType$"):  # was an AttributeError
        check_copy(None, "Layout<(32,16):(16,1)>", arch="gfx942")
    with pytest.raises(LayoutError, match="^unknown arch 'gfx9999'"):  # named before the copy is read
        check_copy(None, "Layout<(32,16):(16,1)>", arch="gfx9999")
