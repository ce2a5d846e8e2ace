"""``linlayout mfma``: JSON keys of docs/contract.md section 3, lists, errors (exit 2, one line)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from linlayout import LinearLayout
from linlayout.cli import main
from linlayout.hw.mfma import get_instruction, instructions_for, mfma_layouts
from linlayout.hw.wmma import get_wmma_instruction, wmma_layouts


def _json(capsys, *argv):
    assert main([*argv, "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1  # exactly one JSON object
    return json.loads(out)


def test_contract_example(capsys):
    res = _json(capsys, "mfma", "gfx942", "v_mfma_f32_32x32x8_f16")
    ins = get_instruction("gfx942", "v_mfma_f32_32x32x8_f16")
    want = mfma_layouts(ins)
    for op in "ABC":
        lay = LinearLayout.from_json(res[op])
        assert lay.same_order(want[op])
        assert lay.in_dim_names == ["register", "lane"] and lay.out_dim_names == ["dim0", "dim1"]
    assert LinearLayout.from_json(res["A"]).out_dims == [("dim0", 32), ("dim1", 8)]
    assert (res["instruction"], res["arch"], res["cycles"]) == ("v_mfma_f32_32x32x8_f16", "gfx942", 32)
    assert res["registers"] == {"A": 2, "B": 2, "C": 16}
    assert res["rocdl"] == "rocdl.mfma.f32.32x32x8f16" and res["intrinsic"] == "llvm.amdgcn.mfma.f32.32x32x8f16"
    assert res["notes"] == []


def test_multi_block_leading_block_dim(capsys):
    res = _json(capsys, "mfma", "gfx90a", "v_mfma_f32_4x4x4f16")
    for op in "ABC":
        assert [d for d, _ in res[op]["out_dims"]] == ["block", "dim0", "dim1"]
        assert res[op]["out_dims"][0] == ["block", 16]
    assert res["mnemonic"] == "v_mfma_f32_4x4x4f16" and res["instruction"] == "v_mfma_f32_4x4x4_16b_f16"


def test_f8f6f4_formats_and_scales(capsys):
    res = _json(capsys, "mfma", "gfx950", "v_mfma_scale_f32_32x32x64_f8f6f4", "--a-format", "fp6", "--b-format", "fp4")
    assert res["types"] == {"A": "fp6", "B": "fp4", "C": "f32"}
    assert res["registers"] == {"A": 6, "B": 4, "C": 16} and res["cycles"] == 32
    assert res["A_scale"]["out_dims"] == [["dim0", 32], ["dim1", 2]]
    assert res["B_scale"]["out_dims"] == [["dim0", 2], ["dim1", 32]]
    assert any("FP6" in n for n in res["notes"])


def test_wmma_through_mfma_command(capsys):
    res = _json(capsys, "mfma", "gfx1100", "v_wmma_f16_16x16x16_f16")
    ins = get_wmma_instruction("gfx1100", "v_wmma_f16_16x16x16_f16")
    assert LinearLayout.from_json(res["C"]) == wmma_layouts(ins)["C"]
    assert res["A"]["in_dims"] == [["register", 16], ["lane", 32]]
    assert res["registers"] == {"A": 8, "B": 8, "C": 8}


def test_list(capsys):
    res = _json(capsys, "mfma", "gfx950", "--list")
    assert res["arch"] == "gfx950"
    assert [i["instruction"] for i in res["instructions"]] == [i.name for i in instructions_for("gfx950")]
    assert main(["mfma", "gfx90a", "--list"]) == 0
    text = capsys.readouterr().out
    assert "v_mfma_f32_32x32x8_f16" in text and "(v_mfma_f32_32x32x8f16)" in text


def test_human_text_bit_form(capsys):
    assert main(["mfma", "gfx942", "v_mfma_f32_16x16x16_f16"]) == 0
    text = capsys.readouterr().out
    # K_L = 4: two register bits along K, four lane bits along M, two lane bits along K
    assert "A (dim0 16 x dim1 16): register: dim1[0] dim1[1]; lane: dim0[0] dim0[1] dim0[2] dim0[3] dim1[2] dim1[3]" in text
    assert "VGPRs A 2, B 2, C 4; 16 cycles" in text


@pytest.mark.parametrize("argv,needle", [
    (["mfma", "gfx943", "v_mfma_f32_32x32x8_f16"], "unknown arch 'gfx943'"),
    (["mfma", "gfx942", "v_mfma_f32_32x32x8_f61"], "did you mean v_mfma_f32_32x32x8_f16"),
    (["mfma", "gfx942", "v_mfma_f32_16x16x32_f16"], "available on gfx950"),
    (["mfma", "gfx942"], "missing INSTRUCTION"),
    (["mfma", "gfx942", "v_mfma_f32_32x32x8_f16", "--list"], "--list takes no INSTRUCTION"),
    (["mfma", "gfx950", "--list", "--a-format", "fp4"],  # was ignored
     "linlayout: error: --a-format/--b-format describe one f8f6f4 instruction; --list takes neither"),
    (["mfma", "gfx942", "v_mfma_f32_32x32x8_f16", "--a-format", "fp4"], "f8f6f4"),
    (["mfma", "gfx1200", "v_wmma_f32_16x16x16_f16", "--a-format", "fp4"], "f8f6f4"),
    (["mfma", "gfx950", "v_mfma_f32_16x16x128_f8f6f4", "--a-format", "fp5"], "invalid choice"),
])
def test_errors_exit_2_one_line(capsys, argv, needle):
    assert main([*argv, "--json"]) == 2
    cap = capsys.readouterr()
    assert cap.out == ""
    assert cap.err.count("\n") == 1 and needle in cap.err


def test_console_script_runs():
    proc = subprocess.run([sys.executable, "-c", "import sys; from linlayout.cli import main; sys.exit(main())", "mfma", "cdna3", "v_mfma_f32_32x32x2_f32", "--json"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["registers"] == {"A": 1, "B": 1, "C": 16}
