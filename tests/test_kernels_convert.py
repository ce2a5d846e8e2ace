"""linlayout.kernels.convert: the conversion kernel (linlayout.lowering.emit.conversion_kernel) through the kernel
command line: the FA P conversion per arch, an LDS round trip with a ragged tile, fp8, sides held one element per
VGPR."""

from __future__ import annotations

import pytest

import needs

needs.require("torch", "flydsl")

from tests.kernels_helpers import run_cli  # noqa: E402


@pytest.mark.parametrize("arch,counts", [("gfx942", {}), ("gfx950", {"permlane32_swap": 4, "total": 4})])
def test_default_pair(capsys, tmp_path, arch, counts):
    status, out = run_cli(capsys, "convert", "--arch", arch, "--interpret", "--emit", str(tmp_path))
    assert status == 0 and out["verified"] is True and out["max_abs_err"] == 0.0
    assert out["decisions"]["plan_counts"] == counts
    assert out["static"]["region_counts"]["conv"].get("permlane32_swap", 0) == counts.get("permlane32_swap", 0)


def test_lds_round_trip_ragged(capsys, tmp_path):
    status, out = run_cli(capsys, "convert", "--arch", "gfx942", "--interpret", "--emit", str(tmp_path),
                          "--src", "blocked:spt=1x8,tpw=8x8,wpc=4x1,order=1x0,shape=64x64",
                          "--dst", "blocked:spt=8x1,tpw=8x8,wpc=1x4,order=0x1,shape=64x64", "--shape", "61x64")
    assert status == 0 and out["verified"] is True
    assert out["decisions"]["strategy"] == "lds"
    st = out["static"]
    assert st["lds"]["instructions"] and st["lds_ops_match"]
    assert st["lds_bytes"] >= out["decisions"]["lds_bytes_planned"]


def test_fp8_operand_pair(capsys, tmp_path):
    status, out = run_cli(capsys, "convert", "--arch", "gfx942", "--dtype", "fp8", "--interpret", "--emit",
                          str(tmp_path), "--src", "mfma:32x32x16,warps=1x1,shape=32x32,v=3",
                          "--dst", "mfma.b:32x32x16,warps=1x1,kwidth=8,shape=32x32,v=3", "--shape", "30x31")
    assert status == 0 and out["verified"] is True
    assert out["decisions"]["plan_counts"]["ds_bpermute"] == 2


@pytest.mark.parametrize("flags", [["--src-unpacked"], ["--dst-unpacked"], ["--src-unpacked", "--dst-unpacked"]])
def test_unpacked_sides_ragged(capsys, tmp_path, flags):
    """Halves adjacent in memory on both sides, a tile ragged in rows (a packed side moves whole dwords): the kernel
    of an unpacked side (``plan_conversion``'s ``src_unpacked`` / ``dst_unpacked``, its plan) loads / stores each
    element alone, and converts."""
    from linlayout.spec import parse_layout
    from linlayout.synth.convert import plan_conversion

    src = "blocked:spt=1x2,tpw=8x8,wpc=1x1,order=1x0,shape=32x32"
    dst = "blocked:spt=1x2,tpw=4x16,wpc=1x1,order=1x0,shape=32x32"
    status, out = run_cli(capsys, "convert", "--arch", "gfx942", "--interpret", "--emit", str(tmp_path), "--src", src,
                          "--dst", dst, "--shape", "30x32", *flags)
    assert status == 0 and out["verified"] is True and out["max_abs_err"] == 0.0
    unpacked = {"src_unpacked": "--src-unpacked" in flags, "dst_unpacked": "--dst-unpacked" in flags}
    plan = plan_conversion(parse_layout(src), parse_layout(dst), "gfx942", 16, **unpacked)
    d = out["decisions"]
    assert {k: d[k] for k in unpacked} == unpacked
    assert d["plan_counts"] == {k: v for k, v in plan.counts().items() if v}
    isa = next(tmp_path.glob("*.s")).read_text()
    assert isa.count("buffer_load_ushort") == (16 if unpacked["src_unpacked"] else 0)
    assert isa.count("buffer_store_short") == (16 if unpacked["dst_unpacked"] else 0)
