"""NVIDIA targets (sm_80, sm_90): descriptors, the shared-memory bank model against the counters
Nsight Compute reported on an H200 (benchmarks/nvidia/results, docs/nvidia_facts.md section 2),
the ldmatrix/stmatrix fragments against the values the same GPU returned, and the mma.sync /
wgmma fragments against Triton's nvidia_mma encodings.  The last test runs both scripts on a
GPU and skips without one."""

from __future__ import annotations

import json

import numpy as np
import pytest

from linlayout import LayoutError, get_target
from linlayout.cli import main
from linlayout.encodings.nvidia import NvidiaMma
from linlayout.hw.lds import lds_model
from linlayout.hw.mma_nvidia import (get_nvidia_mma, matrix_address_layout, matrix_fragment_layout,
                                     nvidia_mma_instructions_for, nvidia_mma_layouts)
from linlayout.synth.banks import analyze
from nvidia_scripts import RESULTS, script, sm90_gpu

bank_counters = script("bank_counters")
matrix_fragments = script("matrix_fragments")


# ------------------------------------------------------------------ descriptors
def test_descriptors():
    for arch in ("sm_80", "sm_90"):
        t = get_target(arch)
        assert (t.family, t.wave_size, t.lds_banks, t.mma) == ("nvidia", 32, 32, "mma_sync")
        assert t.lane_ops == {"shfl.sync.idx", "shfl.sync.bfly", "shfl.sync.up", "shfl.sync.down", "prmt", "selp",
                              "movmatrix"}
        assert not (t.dpp_controls or t.ds_swizzle_modes or t.has_ds_bpermute)
    assert get_target("H100").name == "sm_90" and get_target("sm80").name == "sm_80"
    assert (get_target("sm_80").lds_bytes, get_target("sm_90").lds_bytes) == (163 * 1024, 227 * 1024)


def test_phases_per_width():
    m = lds_model("sm_90")
    rows = {name: (op.phase_rows, op.address_lanes, op.merge_lanes) for name, op in m.ops.items()}
    assert rows["ld.shared.b32"] == rows["st.shared.b32"] == rows["ld.shared.b16"] == ((), 32, ())
    assert rows["ld.shared.b64"] == ((16,), 32, (1, 2)) and rows["st.shared.b64"] == ((16,), 32, ())
    assert rows["ld.shared.b128"] == ((8, 16), 32, (1, 2)) and rows["st.shared.b128"] == ((8, 16), 32, ())
    for verb in ("ld", "st"):
        for trans in ("", ".trans"):
            assert [rows[f"{verb}matrix.x{n}{trans}"] for n in (1, 2, 4)] == [((), 8, ()), ((8,), 16, ()),
                                                                                ((8, 16), 32, ())]
    assert m.op("ld.shared.b128").merged().phase_rows == (16,)
    assert m.op("ldmatrix.x2").phase_lanes(1) == list(range(8, 16))
    assert {op.tag for op in m.ops.values()} == {"M"}
    assert {(op.tag, op.assumption) for op in lds_model("sm_80").ops.values()} == {("I", "sm80_as_sm90")}
    assert [a.name for a in m.assumptions] == ["pairing_whole_warp"]


def test_unsupported_instruction_names_the_target():
    with pytest.raises(LayoutError, match="'stmatrix.x4' is not an LDS instruction of sm_80"):
        lds_model("sm_80").op("stmatrix.x4")
    with pytest.raises(LayoutError, match="'ds_read_b128' is not an LDS instruction of sm_90"):
        lds_model("sm_90").op("ds_read_b128")
    with pytest.raises(LayoutError, match="needs sm_89 or later; sm_80 does not have it"):
        get_nvidia_mma("sm_80", "mma.m16n8k32.e4m3")
    with pytest.raises(LayoutError, match="needs sm_90 or later; sm_80 does not have it"):
        get_nvidia_mma("sm_80", "wgmma.m64n64k16.f32.f16")
    with pytest.raises(LayoutError, match="has no mma.sync/wgmma"):
        nvidia_mma_instructions_for("gfx942")


# ------------------------------------------------------------------ bank model vs silicon
RECORDED = json.loads((RESULTS / "bank_counters.json").read_text())


def test_the_recorded_counters_are_the_scripts_cases():
    suite = bank_counters.cases()
    assert len(suite) == len(RECORDED) >= 50
    assert [(c.name, c.op, c.ptx, list(c.lane_bytes)) for c in suite] == \
        [(r["case"], r["op"], r["ptx"], r["lane_bytes"]) for r in RECORDED]
    ops = {c.op for c in suite}
    assert {f"{v}.shared.b{b}" for v in ("ld", "st") for b in (8, 16, 32, 64, 128)} <= ops
    assert {f"{v}matrix.x{n}{t}" for v in ("ld", "st") for n in (1, 2, 4) for t in ("", ".trans")} <= ops


@pytest.mark.parametrize("index", range(len(RECORDED)), ids=[r["case"] for r in RECORDED])
def test_bank_model_equals_the_counters(index):
    case = bank_counters.cases()[index]
    assert bank_counters.predict(case) == RECORDED[index]["ncu"]


def test_counters_parse_and_compare():
    rows = bank_counters.compare(bank_counters.cases(),
                                 bank_counters.parse_counters((RESULTS / "ncu_h200.csv").read_text()))
    assert [r["ncu"] for r in rows] == [r["ncu"] for r in RECORDED] and all(r["agree"] for r in rows)


def test_linear_and_enumerated_paths_agree_on_nvidia_ops():
    """The linear path (a LinearLayout access) and the enumeration give the same numbers,
    with the phase merge and the ignored address lanes."""
    from linlayout import LinearLayout
    for op, cols in [("ld.shared.b128", [0, 16, 32, 64, 128]), ("ld.shared.b64", [8, 0, 64, 128, 256]),
                     ("ldmatrix.x1", [128, 256, 512, 16, 32]), ("stmatrix.x2", [144, 16, 128, 1024, 0])]:
        access = LinearLayout({"lane": [[c] for c in cols]}, [("offset", 4096)])
        lin = analyze("sm_90", op, access, element_bits=8, method="linear")
        enum = analyze("sm_90", op, access, element_bits=8, method="enumerate")
        assert (lin.cycles, lin.min_cycles) == (enum.cycles, enum.min_cycles)
    assert analyze("sm_90", "ld.shared.b64", access, element_bits=8).min_cycles == 2
    paired = LinearLayout({"lane": [[0], [8], [16], [32], [64]]}, [("offset", 4096)])
    assert (analyze("sm_90", "ld.shared.b64", paired, element_bits=8).min_cycles,
            analyze("sm_90", "st.shared.b64", paired, element_bits=8).min_cycles) == (1, 2)


def test_banks_cli(capsys):
    assert main(["banks", "--arch", "sm_90", "--op", "ldmatrix.x4", "--access", "(8,32):(1,64)", "--dtype", "f16",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["cycles"], out["min_cycles"]) == (32, 4)


# ------------------------------------------------------------------ fragments
def test_matrix_fragments_follow_the_ptx_formulas():
    for n in (1, 2, 4):
        for trans in (False, True):
            got = matrix_fragment_layout(n, trans).apply({"register": np.arange(2 * n)[:, None],
                                                          "lane": np.arange(32)[None, :]})
            reg, lane = np.meshgrid(np.arange(2 * n), np.arange(32), indexing="ij")
            row, col = lane // 4, 2 * (lane % 4) + reg % 2
            if trans:
                row, col = col, row
            assert (got["matrix"] == reg // 2).all() and (got["row"] == row).all() and (got["col"] == col).all()
        addr = matrix_address_layout(n).apply({"lane": np.arange(32)})
        lanes = np.arange(32)
        assert (addr["row"] == lanes % 8).all() and (addr["matrix"] == (lanes // 8) % n).all()


def test_matrix_fragments_equal_the_recorded_hardware_values():
    rows = matrix_fragments.check((RESULTS / "fragments_h200.txt").read_text())
    assert len(rows) == 12 and all(r["agree"] for r in rows)


@pytest.mark.parametrize("name", ["mma.m16n8k16.f16", "mma.m16n8k16.f32.bf16", "mma.m16n8k16.f16.f16",
                                  "mma.m16n8k32.e4m3", "mma.m16n8k32.s32.s8"])
def test_mma_sync_fragments_equal_triton_nvidia_mma(name):
    ins = get_nvidia_mma("sm_90", name)
    lay = nvidia_mma_layouts(ins)
    enc = NvidiaMma(2, (1, 1), (16, 8))
    k_width = 32 // 16 if ins.k == 16 else 4

    def triton(layout):
        return layout.squeeze_ins("block").squeeze_ins("warp")

    assert lay["C"] == triton(enc.to_linear_layout([16, 8]))
    assert lay["A"] == triton(enc.dot_operand_layout(0, k_width, [16, ins.k]))
    assert lay["B"] == triton(enc.dot_operand_layout(1, k_width, [ins.k, 8]))


@pytest.mark.parametrize("n", [8, 16, 32, 64, 128, 256])
def test_wgmma_accumulator_equals_triton_nvidia_mma_v3(n):
    lay = nvidia_mma_layouts(get_nvidia_mma("sm_90", f"wgmma.m64n{n}k16.f32.f16"))
    enc = NvidiaMma(3, (4, 1), (16, n, 16))
    assert "B" not in lay
    assert lay["C"] == enc.to_linear_layout([64, n]).squeeze_ins("block")
    assert lay["A"] == enc.dot_operand_layout(0, 2, [64, 16]).squeeze_ins("block")


def test_mfma_cli_answers_nvidia(capsys):
    assert main(["mfma", "sm_90", "mma.m16n8k16.f16"]) == 0
    text = capsys.readouterr().out
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in text and "registers A 4, B 2, C 4" in text
    assert main(["mfma", "sm_80", "--list", "--json"]) == 0
    names = [i["instruction"] for i in json.loads(capsys.readouterr().out)["instructions"]]
    assert names == ["mma.m16n8k16.f32.f16", "mma.m16n8k16.f16.f16", "mma.m16n8k16.f32.bf16", "mma.m16n8k32.s32.s8",
                     "mma.m16n8k32.s32.u8"]


# ------------------------------------------------------------------ on a GPU
@pytest.mark.skipif(not sm90_gpu(("nvcc", "ncu", "cuobjdump")), reason="needs an sm_90 GPU with nvcc, cuobjdump and ncu")
def test_on_the_gpu(tmp_path):
    assert bank_counters.main(["--out", str(tmp_path / "banks")]) == 0
    assert matrix_fragments.main(["--out", str(tmp_path / "fragments")]) == 0


def test_whole_tile_reports_skip_the_matrix_ops():
    from linlayout.encodings import swizzled_shared
    from linlayout.synth.lds_access import tile_access_report
    reg = NvidiaMma(2, (1, 1), (16, 8)).dot_operand_layout(0, 2, [64, 64])
    shared = swizzled_shared(8, 1, 8, (1, 0), (64, 64))
    rep = tile_access_report(shared, reg, 16, "sm_90", "read")
    assert (rep.choice.op, rep.choice.cycles[:2], rep.ideal_cycles) == ("ld.shared.b32", [1, 1], 64)
    with pytest.raises(LayoutError, match="ldmatrix.x4 spreads each row over other lanes"):
        tile_access_report(shared, reg, 16, "sm_90", "read", ops=["ldmatrix.x4"])
