"""MFMA/WMMA register layouts against AMD's calculator tables and the ISA formulas.

Oracles, none of them produced by linlayout:
* ``tests/data/mfma_oracle/*.json``: five full calculator tables (entry by entry);
* ``tests/data/hw_mfma_calculator_tables.json``: the calculator's table of every dense
  gfx90a/gfx942 MFMA and gfx1100/gfx1200 WMMA (see its generator);
* the CDNA4-ISA 7.1.4 formulas, evaluated here with integer arithmetic, for every
  instruction of every arch (including gfx950, which the calculator does not cover).
"""

from __future__ import annotations

import base64
import json
import zlib

import numpy as np
import pytest
from repo_data import DATA, mfma_oracle_files

from linlayout import LayoutError
from linlayout.hw.mfma import (F64_4X4X4_CD_RULE, MFMA_ARCHES, get_instruction, instructions_for,
                               mfma_layouts, mfma_scale_layouts)
from linlayout.hw.wmma import get_wmma_instruction, wmma_layouts

CALC_TABLES = DATA / "hw_mfma_calculator_tables.json"
ALL = [(a, i.name) for a in MFMA_ARCHES for i in instructions_for(a)]
F8F6F4 = [(i.name, fa, fb) for i in instructions_for("gfx950") if i.is_f8f6f4
          for fa in ("fp8", "fp6", "fp4") for fb in ("bf8", "bf6", "fp4")]


def _coords(layout, items: int, lanes: int):
    e = np.repeat(np.arange(items), lanes)
    lane = np.tile(np.arange(lanes), items)
    out = layout.apply({"register": e, "lane": lane})
    block = out.get("block", np.zeros_like(e))
    return e, lane, block, out["dim0"], out["dim1"]


# --------------------------------------------------------------- calculator oracles
@pytest.mark.parametrize("path", mfma_oracle_files(), ids=lambda p: p.stem)
def test_shared_oracle_entry_by_entry(path):
    data = json.loads(path.read_text())
    ins = get_instruction(data["arch"], data["instruction"])
    assert (ins.m, ins.n, ins.k, ins.blocks) == tuple(data["dims"][d] for d in ("M", "N", "K", "blocks"))
    layouts = mfma_layouts(ins)
    counts = {}
    for ent in data["entries"]:
        op = {"A": "A", "B": "B", "C": "C", "D": "C"}.get(ent["matrix"])
        if op is None:
            continue
        bits = {"A": ins.a_bits, "B": ins.b_bits, "C": ins.c_bits}[op]
        assert ent["bit_hi"] - ent["bit_lo"] + 1 == bits
        # the tool's packed element index is the register-major item index
        assert ent["elem"] == (ent["vgpr"] // 2 if bits == 64 else ent["vgpr"] * (32 // bits) + ent["bit_lo"] // bits)
        got = layouts[op].apply({"register": ent["elem"], "lane": ent["lane"]})
        want = {"dim0": ent["row"], "dim1": ent["col"]}
        if ins.blocks > 1:
            want["block"] = ent["block"]
        assert got == want, (ent, got)
        counts[ent["matrix"]] = counts.get(ent["matrix"], 0) + 1
    for m, n in counts.items():  # every (item, lane) of every operand is in the table once
        assert n == layouts["C" if m == "D" else m].total_in_size
    cycles = [ln for ln in data["detail_instruction_output"] if "Execution cycles" in ln]
    assert int(cycles[0].split(":")[1]) == ins.cycles
    for op in "ABC":
        line = [ln for ln in data["detail_instruction_output"] if f"GPRs required for {op}:" in ln][0]
        assert int(line.split(":")[1]) == ins.registers(op)


def _calc_tables():
    return json.loads(CALC_TABLES.read_text())["instructions"]


@pytest.mark.parametrize("key", sorted(_calc_tables()))
def test_calculator_table(key):
    entry = _calc_tables()[key]
    arch, name = key.split()
    if arch.startswith("gfx1"):
        ins = get_wmma_instruction(arch, name)
        layouts = wmma_layouts(ins)
    else:
        ins = get_instruction(arch, name)
        layouts = mfma_layouts(ins)
    assert ins.cycles == entry["cycles"]
    for op in "ABC":
        assert ins.registers(op) == entry["registers"][op]
        tab = entry[op]
        want = np.frombuffer(zlib.decompress(base64.b64decode(tab["table"])), dtype="<u2")
        assert layouts[op].in_dim_size("register") == tab["items"]
        assert layouts[op].in_dim_size("lane") == tab["lanes"]
        _, _, block, row, col = _coords(layouts[op], tab["items"], tab["lanes"])
        np.testing.assert_array_equal(block, want >> 10, err_msg=f"{key} {op} block")
        np.testing.assert_array_equal(row, (want >> 5) & 31, err_msg=f"{key} {op} row")
        np.testing.assert_array_equal(col, want & 31, err_msg=f"{key} {op} col")


# ------------------------------------------------------ ISA formulas, integer arithmetic
def _isa_input_slot(ins, operand, b, nonk_idx, k):
    """CDNA4-ISA 7.1.4.1: X[b,.,k] is item k % K_L of lane idx + M*(b + B*(k // K_L))."""
    nonk = ins.m if operand == "A" else ins.n
    k_l = ins.k // (64 // (nonk * ins.blocks))
    return k % k_l, nonk_idx + nonk * (b + ins.blocks * (k // k_l))


def _isa_fp8_f8f6f4_slot(ins, nonk_idx, k):
    """docs/amd_facts.md 3.4 FP8 tables, solved for (item, lane): 16x16x128 k = (e&15) + 16(lane>>4) + 64(e>>4);
    32x32x64 k = (e&15) + 16(lane>>5) + 32(e>>4)."""
    if ins.m == 16:
        return (k % 16) + 16 * (k // 64), nonk_idx + 16 * ((k // 16) % 4)
    return (k % 16) + 16 * (k // 32), nonk_idx + 32 * ((k // 16) % 2)


def _isa_output_slot(ins, b, i, j):
    """CDNA4-ISA 7.1.4.2, or for v_mfma_f64_4x4x4_4b_f64 the calculator's printed rule
    (item 0 of lane 16*(i%4) + 4*block + j)."""
    if ins.c_type == "f64" and ins.m == 4 and F64_4X4X4_CD_RULE[ins.arch] == "calculator":
        return 0, 16 * (i % 4) + 4 * b + j
    h = 1 if ins.c_type == "f64" else 4
    b_i = -(-64 // (ins.n * ins.m // h))
    m_i = (64 // b_i) // ins.n
    g = ins.m // (h * m_i)
    return (i % h) + h * (i // (h * m_i) + g * (b // b_i)), j + ins.n * ((i // h) % m_i + m_i * (b % b_i))


def _check_formula(ins, layouts):
    for op in "ABC":
        lay = layouts[op]
        rows, cols = {"A": (ins.m, ins.k), "B": (ins.k, ins.n), "C": (ins.m, ins.n)}[op]
        seen = set()
        for b in range(ins.blocks):
            for r in range(rows):
                for c in range(cols):
                    if op == "C":
                        e, lane = _isa_output_slot(ins, b, r, c)
                    else:
                        nonk_idx, k = (r, c) if op == "A" else (c, r)
                        fmt = ins.a_type if op == "A" else ins.b_type
                        if ins.is_f8f6f4 and fmt in ("fp8", "bf8"):
                            e, lane = _isa_fp8_f8f6f4_slot(ins, nonk_idx, k)
                        else:
                            e, lane = _isa_input_slot(ins, op, b, nonk_idx, k)
                    want = {"dim0": r, "dim1": c, **({"block": b} if ins.blocks > 1 else {})}
                    assert lay.apply({"register": e, "lane": lane}) == want, (ins.name, op, b, r, c)
                    seen.add((e, lane))
        # the formula hits every (item, lane) exactly once: no duplication, full tile
        assert len(seen) == rows * cols * ins.blocks == lay.total_in_size


@pytest.mark.parametrize("arch,name", ALL)
def test_every_instruction_matches_isa_formula(arch, name):
    ins = get_instruction(arch, name)
    layouts = mfma_layouts(ins)
    _check_formula(ins, layouts)
    for op in "ABC":
        lay = layouts[op]
        assert lay.is_injective() and lay.is_surjective()
        assert lay.in_dim_names == ["register", "lane"]
        want_out = (["block"] if ins.blocks > 1 else []) + ["dim0", "dim1"]
        assert lay.out_dim_names == want_out
        # registers = items * bits / 32, items = M*K*B/64 (A), K*N*B/64 (B), M*N*B/64 (C)
        bits = {"A": ins.a_bits, "B": ins.b_bits, "C": ins.c_bits}[op]
        assert lay.in_dim_size("register") * bits == ins.registers(op) * 32


@pytest.mark.parametrize("name,fa,fb", F8F6F4)
def test_f8f6f4_formats_match_isa(name, fa, fb):
    ins = get_instruction("gfx950", name, a_format=fa, b_format=fb)
    _check_formula(ins, mfma_layouts(ins))


def test_fp8_exception_bit_form():
    """docs/amd_facts.md 3.4 bit form: 16x16x128 e0..e3 -> k1..k8, l4 -> k16, l5 -> k32, e4 -> k64;
    FP4/FP6 (general rule): e0..e4 -> k1..k16, l4 -> k32, l5 -> k64."""
    a8 = mfma_layouts(get_instruction("gfx950", "v_mfma_f32_16x16x128_f8f6f4"))["A"]
    assert [b[1] for b in a8.bases["register"]] == [1, 2, 4, 8, 64]
    assert a8.bases["lane"] == [[1, 0], [2, 0], [4, 0], [8, 0], [0, 16], [0, 32]]
    a6 = mfma_layouts(get_instruction("gfx950", "v_mfma_f32_16x16x128_f8f6f4", a_format="fp6"))["A"]
    assert [b[1] for b in a6.bases["register"]] == [1, 2, 4, 8, 16]
    assert a6.bases["lane"][4:] == [[0, 32], [0, 64]]
    b8 = mfma_layouts(get_instruction("gfx950", "v_mfma_f32_32x32x64_f8f6f4"))["B"]
    assert [b[0] for b in b8.bases["register"]] == [1, 2, 4, 8, 32]
    assert b8.bases["lane"][5] == [16, 0]


def test_f64_4x4x4_disagreement_is_the_documented_one():
    ins = get_instruction("gfx942", "v_mfma_f64_4x4x4_4b_f64")
    calc = mfma_layouts(ins)["C"]
    assert calc.bases["lane"][2:] == [[1, 0, 0], [2, 0, 0], [0, 1, 0], [0, 2, 0]]  # blocks, then rows
    saved = F64_4X4X4_CD_RULE["gfx942"]
    try:
        F64_4X4X4_CD_RULE["gfx942"] = "isa"
        isa = mfma_layouts(ins)["C"]
        assert isa.bases["lane"][2:] == [[0, 1, 0], [0, 2, 0], [1, 0, 0], [2, 0, 0]]  # rows, then blocks
        assert isa.bases["lane"][:2] == calc.bases["lane"][:2] and isa.bases["register"] == calc.bases["register"]
        F64_4X4X4_CD_RULE["gfx942"] = "neither"
        with pytest.raises(LayoutError, match="F64_4X4X4_CD_RULE"):
            mfma_layouts(ins)
    finally:
        F64_4X4X4_CD_RULE["gfx942"] = saved


@pytest.mark.parametrize("name", ["v_mfma_scale_f32_16x16x128_f8f6f4", "v_mfma_scale_f32_32x32x64_f8f6f4"])
def test_scale_layouts(name):
    """CDNA4-ISA 7.2.1: lane l holds the scale of row/col l % M for K block l // M (32 K each)."""
    ins = get_instruction("gfx950", name)
    s = mfma_scale_layouts(ins)
    for lane in range(64):
        assert s["A_scale"].apply({"lane": lane}) == {"dim0": lane % ins.m, "dim1": lane // ins.m}
        assert s["B_scale"].apply({"lane": lane}) == {"dim0": lane // ins.n, "dim1": lane % ins.n}
    assert s["A_scale"].out_dims == [("dim0", ins.m), ("dim1", ins.k // 32)]
    assert s["A_scale"].is_invertible() and s["B_scale"].is_invertible()
    with pytest.raises(LayoutError, match="no scale operands"):
        mfma_scale_layouts(get_instruction("gfx950", "v_mfma_f32_16x16x128_f8f6f4"))


def test_layouts_by_name_and_arch_alias():
    by_name = mfma_layouts("v_mfma_f32_32x32x8f16", "cdna3")
    assert by_name == mfma_layouts(get_instruction("gfx942", "v_mfma_f32_32x32x8_f16"))
    # the same instruction on another arch is re-resolved there
    assert mfma_layouts(get_instruction("gfx942", "v_mfma_f32_32x32x8_f16"), "gfx950")["A"] == by_name["A"]
    with pytest.raises(LayoutError, match="needs an arch"):
        mfma_layouts("v_mfma_f32_32x32x8_f16")


def test_wmma_gfx1250_c_matches_triton_v3_rule():
    """Triton amd_wmma v3 16x16: registers -> rows 1, 2, 4; lanes 0-15 -> columns; lane 16 -> row 8."""
    for ins_name in ("v_wmma_f32_16x16x32_f16", "v_wmma_f32_16x16x4_f32"):
        c = wmma_layouts(get_wmma_instruction("gfx1250", ins_name))["C"]
        assert c.bases == {"register": [[1, 0], [2, 0], [4, 0]],
                           "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [8, 0]]}


def test_wmma_gfx1250_inputs_follow_triton_kwidth():
    a = wmma_layouts(get_wmma_instruction("gfx1250", "v_wmma_f32_16x16x32_bf16"))["A"]
    assert a.bases == {"register": [[0, 1], [0, 2], [0, 4], [0, 16]],
                       "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 8]]}
    b = wmma_layouts(get_wmma_instruction("gfx1250", "v_wmma_f32_16x16x4_f32"))["B"]
    assert b.bases == {"register": [[1, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [2, 0]]}


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1200", "gfx1250"])
def test_wmma_cover_tiles_and_duplicate_only_on_gfx11(arch):
    from linlayout.hw.wmma import wmma_instructions_for

    for ins in wmma_instructions_for(arch):
        lays = wmma_layouts(ins)
        for op in "ABC":
            lay = lays[op]
            assert lay.is_surjective(), (ins.name, op)
            bits = {"A": ins.a_bits, "B": ins.b_bits, "C": 32 if ins.version == 1 else ins.c_bits}[op]
            assert lay.in_dim_size("register") * bits == ins.registers(op) * 32  # gfx11 C: one VGPR per item
            if op != "C" and ins.version == 1:  # lanes 16-31 repeat lanes 0-15
                assert lay.free_variable_masks() == {"register": 0, "lane": 16}
            else:
                assert lay.is_injective(), (ins.name, op)
