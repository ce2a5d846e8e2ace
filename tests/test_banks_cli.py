"""``linlayout banks``: the docs/contract.md section 3 keys, the whole-tile and synthesis modes, errors."""

from __future__ import annotations

import json

import pytest

from banks_oracle import BANKS, PHASES, instruction_cycles
from linlayout import LinearLayout
from linlayout.cli import main
from linlayout.dtypes import dtype_bits


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def access_json(lane_offsets, regs=1, size=1 << 14):
    bases = {"lane": [[o] for o in lane_offsets]}
    in_dims = [["lane", 64]]
    if regs > 1:
        bases["register"] = [[1 << j] for j in range(regs.bit_length() - 1)]
        in_dims = [["register", regs]] + in_dims
    return json.dumps({"in_dims": in_dims, "out_dims": [["offset", size]], "bases": bases})


def test_contract_keys(capsys):
    acc = access_json([64 << i for i in range(6)], regs=8)
    code, out, err = run(capsys, "banks", "--arch", "gfx942", "--op", "ds_read_b128", "--access", acc,
                         "--element-bytes", "2", "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    starts = [(64 * lane) * 2 for lane in range(64)]
    expected = sum(instruction_cycles(starts, 16, BANKS["gfx942"], PHASES[("gfx942", "ds_read_b128")]))
    assert d["cycles"] == expected == 64 and d["min_cycles"] == 8 and d["conflict_free"] is False
    assert d["method"] == "linear" and d["collisions"]


def test_cute_access(capsys):
    # CuTe (8,64):(1,64): 8 fp16 per lane, lane stride 64 elements = the JSON access above
    code, out, _ = run(capsys, "banks", "--arch", "gfx942", "--op", "ds_read_b128", "--access", "(8,64):(1,64)",
                       "--element-bytes", "2", "--json")
    d = json.loads(out)
    assert code == 0 and (d["cycles"], d["min_cycles"]) == (64, 8)


def test_text_output(capsys):
    code, out, _ = run(capsys, "banks", "--arch", "gfx950", "--op", "ds_read_b32", "--access",
                       access_json([1 << i for i in range(6)]), "--element-bytes", "4")
    assert code == 0 and out.startswith("cycles 2  min_cycles 2  conflict_free True")


def test_padding_and_png(capsys, tmp_path):
    acc = access_json([64 << i for i in range(6)], regs=2)
    png = tmp_path / "heat.png"
    code, out, _ = run(capsys, "banks", "--arch", "gfx942", "--op", "ds_read_b32", "--access", acc,
                       "--element-bits", "16", "--padding", "64:2", "--png", str(png), "--json")
    d = json.loads(out)
    assert code == 0 and d["cycles"] == 2 and d["method"] == "enumeration"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_text_output_names_the_pictures_it_wrote(capsys, tmp_path):
    """As ``show`` does, the text output ends with one ``wrote PATH`` line per picture (it named none)."""
    png, svg = tmp_path / "heat.png", tmp_path / "heat.svg"
    code, out, _ = run(capsys, "banks", "--arch", "gfx942", "--shared", "swizzled:vec=1,phase=1,maxphase=1,order=1x0,"
                       "shape=32x64", "--reg", "mfma.a:32x32x8,warps=1x1,shape=32x64,kwidth=4", "--dtype", "fp16",
                       "--png", str(png), "--svg", str(svg))
    assert code == 0 and out.splitlines()[-2:] == [f"wrote {png}", f"wrote {svg}"], out


def test_whole_tile_mode(capsys):
    code, out, _ = run(capsys, "banks", "--arch", "gfx942", "--shared",
                       "swizzled:vec=4,phase=1,maxphase=16,order=1x0,shape=64x64",
                       "--reg", "mfma.a:32x32x8,warps=2x2,kwidth=4,shape=64x64", "--dtype", "f16", "--json")
    d = json.loads(out)
    assert code == 0 and d["op"] == "ds_read_b64" and d["instructions"] == 8
    assert d["cycles_per_instruction"] == [4] * 8 and d["conflict_free"] is True
    code, out, _ = run(capsys, "banks", "--arch", "gfx942", "--shared",
                       "swizzled:vec=1,phase=1,maxphase=1,order=1x0,shape=64x64",
                       "--reg", "mfma.a:32x32x8,warps=2x2,kwidth=4,shape=64x64", "--dtype", "fp16")
    assert code == 0 and "512 cycles vs 32 ideal" in out


def test_synthesis_mode(capsys):
    code, out, _ = run(capsys, "banks", "--arch", "gfx942", "--writer", "blocked:spt=1x8,tpw=8x8,wpc=4x1,order=1x0,shape=64x64",
                       "--reader", "mfma.a:32x32x8,warps=2x2,kwidth=4,shape=64x64", "--dtype", "bf16", "--json")
    d = json.loads(out)
    assert code == 0 and d["optimal"] and d["total_cycles"] == d["ideal_cycles"]
    assert LinearLayout.from_json(d["shared"]).is_invertible()
    code, out, _ = run(capsys, "banks", "--arch", "gfx942", "--writer", "blocked:spt=1x8,tpw=8x8,wpc=4x1,order=1x0,shape=64x64",
                       "--reader", "mfma.a:32x32x8,warps=2x2,kwidth=4,shape=64x64", "--dtype", "bf16", "--padding-options")
    assert code == 0 and "why:" in out and "padding " in out


def test_model_mode(capsys):
    code, out, _ = run(capsys, "banks", "--model", "--json")
    d = json.loads(out)
    assert [m["arch"] for m in d["models"]] == ["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1200", "gfx1250"]
    code, out, _ = run(capsys, "banks", "--model", "--arch", "gfx1100")
    assert code == 0 and "ds_read_b128" in out and "rdna_b128_read_phases_32banks" in out
    code, out, _ = run(capsys, "banks", "--model", "--arch", "gfx942", "--assume", "b32_phases_32banks=64")
    assert code == 0 and "ds_read_b32          1 x 64 lanes" in out and "overridden assumption" in out


@pytest.mark.parametrize("argv,match", [
    (["--arch", "gfx942", "--op", "ds_read_b32", "--access", "{", "--element-bytes", "4"], "does not parse"),
    (["--arch", "gfx942", "--op", "ds_read_b33", "--access", access_json([1] * 6), "--element-bytes", "4"],
     "not an LDS instruction"),
    (["--arch", "gfx942", "--op", "ds_read_b32", "--access", access_json([1] * 6)], "exactly one"),
    (["--arch", "gfx942", "--op", "ds_read_b64", "--access", access_json([1 << i for i in range(6)]),
      "--element-bytes", "4"], "not aligned"),
    (["--model", "--op", "ds_read_b32"], "choose one mode"),
    (["--op", "ds_read_b32", "--access", access_json([1] * 6), "--element-bytes", "4"], "--arch"),
    (["--arch", "gfx942", "--shared", "swizzled:vec=1,phase=1,maxphase=1,order=1x0,shape=64x64"], "--reg"),
    (["--arch", "gfx942", "--writer", "x"], "--reader"),
    (["--model", "--assume", "nope"], "NAME=VALUE"),
    (["--arch", "gfx942", "--op", "ds_read_b32", "--access", access_json([1] * 6), "--dtype", "f13"], "dtype"),
    (["--arch", "gfx942", "--op", "ds_read_b32", "--access", access_json([1] * 6), "--element-bytes", "4",
      "--padding", "64"], "INTERVAL:PAD"),
    (["--arch", "sm_90", "--shared", "swizzled:vec=1,phase=1,maxphase=1,order=1x0,shape=32x64", "--reg",
      "blocked:spt=1x8,tpw=8x4,wpc=1x1,order=1x0,shape=64x64", "--dtype", "fp16"],
     "register layout has dim0 of size 64, the shared layout only 32"),  # once invert_and_compose's words
    # an option of another mode is refused, not ignored (--png in synthesis mode drew nothing, exit 0)
    (["--arch", "gfx950", "--writer", "blocked:spt=1x8,tpw=8x8,wpc=1x1,order=1x0,shape=32x64", "--reader",
      "mfma.a:32x32x8,warps=1x1,shape=32x64,kwidth=4", "--dtype", "fp16", "--png", "x.png"],
     "linlayout: error: --png: not an option of synthesis mode\n"),
    (["--model", "--dtype", "fp16"], "linlayout: error: --dtype: not an option of model mode\n"),
    (["--arch", "gfx942", "--op", "ds_read_b32", "--access", access_json([1] * 6), "--element-bytes", "4",
      "--direction", "write", "--lds-budget", "4096"],
     "linlayout: error: --direction, --lds-budget: not options of instruction mode\n"),
    (["--arch", "gfx942", "--shared", "swizzled:vec=1,phase=1,maxphase=1,order=1x0,shape=32x64", "--reg",
      "mfma.a:32x32x8,warps=1x1,shape=32x64,kwidth=4", "--dtype", "fp16", "--method", "linear", "--no-transpose"],
     "linlayout: error: --method, --no-transpose: not options of tile mode\n"),
    # given with its default value, or 0, it is still given
    (["--arch", "gfx942", "--model", "--direction", "read"], "linlayout: error: --direction: not an option of model mode\n"),
    (["--arch", "gfx942", "--model", "--element-bytes", "0"],
     "linlayout: error: --element-bytes: not an option of model mode\n"),
])
def test_errors_exit_2_with_one_line(capsys, argv, match):
    code, out, err = run(capsys, "banks", *argv)
    assert code == 2 and out == "" and match in err and err.count("\n") == 1


def test_dtype_bits():
    assert [dtype_bits(x) for x in ("fp16", "bf16", "e4m3", "fp4", "f32", "i16")] == [16, 16, 8, 4, 32, 16]
