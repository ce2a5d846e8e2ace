"""Atoms of linlayout.lowering.emit: the MLIR text builder, every catalogued MFMA instruction, raw
buffer loads/stores with out-of-range lanes, LDS accesses; compiled and interpreted."""

from __future__ import annotations

import numpy as np
import pytest

import needs

from linlayout import LayoutError

pytestmark = needs.mlir

from linlayout.hw.mfma import get_instruction, instructions_for  # noqa: E402
from linlayout.lowering.compile import compile_mlir  # noqa: E402
from linlayout.lowering.emit import atoms  # noqa: E402
from linlayout.lowering.emit.builder import Builder, kernel_module, vector_type  # noqa: E402
from linlayout.lowering.interp import load_kernel  # noqa: E402
from linlayout.lowering.isa import instructions  # noqa: E402


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path / "cache"))


def _module(body: str, globals_: tuple[str, ...] = ()) -> str:
    """Kernel ``@k(%in, %out)`` of one wave of 64 threads."""
    return kernel_module("k", [("%in", "!llvm.ptr<1>"), ("%out", "!llvm.ptr<1>")], body, 64, globals_)


# ---------------------------------------------------------------------- builder
def test_builder_constants_are_interned_and_twos_complement():
    b = Builder()
    c1 = b.const(0xFFFFFFFF)
    assert b.const(-1) == c1  # the same i32 bit pattern
    assert b.const(0x80000000) == b.const(-(1 << 31))
    assert b.const(1, "i64") != b.const(1)
    v = b.arith("addi", c1, b.const(3))
    body = b.body()
    assert "arith.constant -1 : i32" in body and "arith.constant -2147483648 : i32" in body
    assert body.index("arith.constant 3 : i32") < body.index(v + " = arith.addi")  # constants dominate uses
    assert vector_type(1, "i32") == "i32" and vector_type(4, "f16") == "vector<4xf16>"


def test_region_marker_pins_and_ties():
    b = Builder()
    x = b.const(5)
    (y,) = atoms.region_marker(b, "conv", "begin", pinned=[(b.const(7, "i64"), "i64", "s")], tied=[x])
    text = b.body()
    assert '"; linlayout-begin conv", "=v,0,s"' in text and "-> i32" in text and y.startswith("%pin")
    assert atoms.region_marker(b, "conv", "end") == []
    assert b.body().count("rocdl.sched.barrier none") == 4


# ---------------------------------------------------------------------- MFMA
def _mfma_kernel(ins_list) -> str:
    b = Builder()
    off = 0
    for ins in ins_list:
        ta, tb, tc = atoms.mfma_operand_types(ins)
        a = atoms.global_load(b, "%in", b.const(off), ta, 4)
        bb = atoms.global_load(b, "%in", b.const(off + 64), tb, 4)
        c = atoms.global_load(b, "%in", b.const(off + 128), tc, 4)
        scales = {}
        if ins.scaled:
            scales = {"scale_a": atoms.global_load(b, "%in", b.const(off + 256), "i32", 4),
                      "scale_b": atoms.global_load(b, "%in", b.const(off + 260), "i32", 4)}
        d = atoms.mfma(b, ins, a, bb, c, **scales)
        atoms.global_store(b, d, "%out", b.const(off), tc, 4)
        off += 512
    return _module(b.body())


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_every_catalogued_mfma_compiles_to_its_instruction(arch):
    cat = instructions_for(arch)
    ck = compile_mlir(_mfma_kernel(cat), arch, binary=False)
    got = sorted(ln.split()[0] for ln in instructions(ck.isa) if ln.startswith("v_mfma"))
    assert got == sorted(ins.mnemonic for ins in cat)


def test_f8f6f4_formats_and_scale_rules():
    base = get_instruction("gfx950", "v_mfma_f32_16x16x128_f8f6f4")
    variants = [base.with_formats("fp6", "fp4"), base.with_formats("bf8", "bf6")]
    assert atoms.mfma_operand_types(variants[0])[:2] == ("vector<6xi32>", "vector<4xi32>")
    ck = compile_mlir(_mfma_kernel(variants), "gfx950", binary=False)
    assert sum(ln.startswith("v_mfma_f32_16x16x128_f8f6f4") for ln in instructions(ck.isa)) == 2
    b = Builder()
    scaled = get_instruction("gfx950", "v_mfma_scale_f32_16x16x128_f8f6f4")
    with pytest.raises(LayoutError, match="scale"):
        atoms.mfma(b, scaled, "%a", "%b", "%c")
    with pytest.raises(LayoutError, match="no scales"):
        atoms.mfma(b, base, "%a", "%b", "%c", scale_a="%s", scale_b="%s")
    with pytest.raises(LayoutError, match="blgp"):
        atoms.mfma(b, get_instruction("gfx942", "v_mfma_f32_32x32x8_f16"), "%a", "%b", "%c", blgp=8)
    assert atoms.mfma_operand_types(get_instruction("gfx942", "v_mfma_f32_32x32x8_bf16")) == (
        "vector<4xi16>", "vector<4xi16>", "vector<16xf32>")
    assert atoms.mfma_operand_types(get_instruction("gfx950", "v_mfma_f32_16x16x32_bf16"))[0] == "vector<8xbf16>"
    assert atoms.mfma_operand_types(get_instruction("gfx942", "v_mfma_i32_16x16x32_i8"))[0] == "i64"
    assert atoms.mfma_operand_types(get_instruction("gfx942", "v_mfma_f64_4x4x4_4b_f64")) == ("f64", "f64", "f64")


# ---------------------------------------------------------------------- buffers and LDS
def _buffer_kernel() -> str:
    """Lane l loads dword l of 40 (lanes >= 40 read past num_records) and writes it to LDS dword l;
    after the barrier it reads LDS dword 63 - l (lane 63 - l's value: the round trip crosses lanes, so
    LLVM cannot forward the store to the load in a one-wave workgroup), doubles it and stores it at
    dword 63 - l; lanes with l % 4 == 3 use the out-of-range offset for the store."""
    b = Builder()
    _tid, t32, lane, _warp = atoms.thread_ids(b)
    rin = atoms.buffer_rsrc(b, "%in", 40 * 4)
    rout = atoms.buffer_rsrc(b, "%out", 64 * 4)
    voff = b.arith("shli", lane, b.const(2))
    x = atoms.buffer_load(b, rin, voff, "i32")
    lds = atoms.lds_base(b, "scratch")
    rev = b.arith("shli", b.arith("subi", b.const(63), lane), b.const(2))
    atoms.lds_store(b, x, atoms.lds_pointer(b, lds, voff), "i32", 4)
    b.line("gpu.barrier")
    y = atoms.lds_load(b, atoms.lds_pointer(b, lds, rev), "i32", 4)
    y2 = b.arith("addi", y, y)
    skip = b.value(f"arith.cmpi eq, {b.arith('andi', lane, b.const(3))}, {b.const(3)} : i32", "skip")
    soff = b.select(skip, b.const(atoms.BUFFER_OOB_OFFSET), rev)
    atoms.buffer_store(b, y2, rout, soff, "i32")
    return _module(b.body(), (atoms.lds_global("scratch", 256),))


def test_buffer_out_of_range_reads_zero_and_drops_writes():
    text = _buffer_kernel()
    src = np.arange(1, 65, dtype=np.uint32)
    out = np.full(64, 0xDEAD, dtype=np.uint32)
    res = load_kernel(text, "k", "gfx942").run([src, out], block=(64, 1, 1))[1]
    dword = np.arange(64)
    # dword m of out: twice dword m of in (0 past num_records), written by lane 63 - m unless
    # (63 - m) % 4 == 3, i.e. m % 4 == 0
    expect = np.where(dword < 40, 2 * (dword + 1), 0).astype(np.uint32)
    expect[dword % 4 == 0] = 0xDEAD
    assert np.array_equal(res, expect)
    isa = compile_mlir(text, "gfx942", binary=False).isa
    ops = [ln.split()[0] for ln in instructions(isa)]
    assert "buffer_load_dword" in ops and "buffer_store_dword" in ops
    assert "ds_write_b32" in ops and "ds_read_b32" in ops
    assert "s_barrier" not in ops  # a workgroup of one wave (64 threads declared) needs no barrier


def test_atom_argument_errors():
    b = Builder()
    with pytest.raises(LayoutError):
        atoms.buffer_rsrc(b, "%p", 1 << 32)
    with pytest.raises(LayoutError):
        atoms.lds_global("x", 0)
    with pytest.raises(LayoutError):
        atoms.permlane_swap(b, "permlane8_swap", "%a", "%b")
