"""linlayout.kernels.convert: the conversion kernel (linlayout.lowering.emit.conversion_kernel) through the kernel
command line: the FA P conversion per arch, an LDS round trip with a ragged tile, fp8, sides held one element per
VGPR, a dst read in one copy."""

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


def _one_copy_side(registers: list, lanes: list) -> dict:
    return {"in_dims": [["register", 1 << len(registers)], ["lane", 64], ["warp", 1], ["block", 1]],
            "out_dims": [["dim0", 16], ["dim1", 64]],
            "bases": {"register": registers, "lane": lanes, "warp": [], "block": []}}


#: gfx942 fp16, 1 wave, a 16x64 tile: the dst holds each element in lanes l and l ^ 32 (lane basis 5 zero, column
#: bit 1 in a register); read in one copy (lane bit 5 filled), 8 ds_bpermute rank ahead of the dst's own LDS round
#: trip (6 instructions).
ONE_COPY_SRC = _one_copy_side([[0, 1], [0, 8], [0, 16], [0, 32]],
                              [[0, 4], [1, 0], [2, 0], [4, 0], [8, 0], [0, 2]])
ONE_COPY_DST = _one_copy_side([[0, 1], [0, 2], [0, 8], [0, 16], [0, 32]],
                              [[0, 4], [1, 0], [2, 0], [4, 0], [8, 0], [0, 0]])


def test_a_dst_read_in_one_copy_is_reported_and_the_kernel_masks_its_stores(capsys, tmp_path):
    """``--dst-one-copy``: the decisions say the plan took the form (``dst_one_copy``, the key of ``linlayout
    convert --json``), its counts are the API's plan's, the kernel masks its stores (3 SALU) and converts; without
    the flag the dst's own plan (an LDS round trip), ``dst_one_copy`` false."""
    import json

    from linlayout import LinearLayout
    from linlayout.lowering.beyond_identity import store_mask_salu
    from linlayout.synth.convert import plan_conversion

    for side, layout in (("src", ONE_COPY_SRC), ("dst", ONE_COPY_DST)):
        (tmp_path / f"{side}.json").write_text(json.dumps(layout))
    argv = ["convert", "--arch", "gfx942", "--src", f"@{tmp_path / 'src.json'}", "--dst", f"@{tmp_path / 'dst.json'}"]
    api = plan_conversion(LinearLayout.from_json(ONE_COPY_SRC), LinearLayout.from_json(ONE_COPY_DST), "gfx942", 16,
                          dst_one_copy=True)
    status, out = run_cli(capsys, *argv, "--dst-one-copy", "--interpret", "--emit", str(tmp_path))
    assert status == 0 and out["verified"] is True and out["max_abs_err"] == 0.0
    d = out["decisions"]
    assert (d["dst_one_copy"], d["src_unpacked"], d["dst_unpacked"], d["strategy"]) == (True, False, False, "lanes")
    assert api.dst_one_copy and d["plan_counts"] == {k: v for k, v in api.counts().items() if v} == {
        "ds_bpermute": 8, "total": 8}
    assert store_mask_salu(next(tmp_path.glob("*.s")).read_text()) == 3
    status, out = run_cli(capsys, *argv)
    assert status == 0 and (out["decisions"]["dst_one_copy"], out["decisions"]["strategy"]) == (False, "lds")
