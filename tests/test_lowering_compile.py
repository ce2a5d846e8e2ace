"""End-to-end tests of the compile layer: MLIR text -> ISA + HSA code object, and isa_counts.

Needs the MLIR bindings (flydsl) and an ld.lld (see lowering/linker.py); the module is
skipped only when flydsl is missing.  A missing linker is a failure, not a skip.
"""

from __future__ import annotations

import json
import os
import struct
import time

import pytest

from linlayout.lowering import isa as isa_mod
from linlayout.lowering.isa import COUNT_KEYS, CLASS_KEYS, IsaRegionError, isa_counts, marker_ops

import needs
from repo_data import baseline_cases

pytestmark = needs.mlir

from linlayout.lowering import compile as compile_mod  # noqa: E402
from linlayout.lowering import linker  # noqa: E402
from linlayout.lowering.compile import CompileError, compile_mlir  # noqa: E402

ELF_MACH = {"gfx942": 0x04C, "gfx950": 0x04F}  # EF_AMDGPU_MACH_AMDGCN_GFX942 / _GFX950
EM_AMDGPU = 224


def _marker(which: str) -> str:
    return "\n".join("      " + ln for ln in marker_ops("conv", which))


def exchange_kernel(arch: str, markers: bool = True) -> str:
    """A kernel that buffer-loads one i32 per lane, runs ds_bpermute, a DPP mov,
    (gfx950) permlane32.swap, ds_swizzle and an LDS store/barrier/load, and buffer-stores.
    The exchange part sits between the ``conv`` region markers."""
    if arch == "gfx950":
        swap = """      %sw = rocdl.permlane32.swap %d, %a, false, false : (i32, i32) -> !llvm.struct<(i32, i32)>
      %s0 = llvm.extractvalue %sw[0] : !llvm.struct<(i32, i32)>
      %s1 = llvm.extractvalue %sw[1] : !llvm.struct<(i32, i32)>"""
    else:
        swap = """      %s0 = arith.addi %d, %c0 : i32
      %s1 = arith.addi %a, %c0 : i32"""
    begin, end = (_marker("begin"), _marker("end")) if markers else ("", "")
    return f"""module {{
  gpu.module @test_kernels {{
    gpu.func @exchange(%in: !llvm.ptr<1>, %out: !llvm.ptr<1>)
        workgroup(%lds : memref<256xi32, #gpu.address_space<workgroup>>) kernel {{
      %tid = gpu.thread_id x
      %t = arith.index_cast %tid : index to i32
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c4 = arith.constant 4 : i32
      %c63 = arith.constant 63 : i32
      %c255 = arith.constant 255 : index
      %stride = arith.constant 0 : i16
      %nrec = arith.constant 1024 : i64
      %flags = arith.constant 159744 : i32
      %rin = rocdl.make.buffer.rsrc %in, %stride, %nrec, %flags : !llvm.ptr<1> to !llvm.ptr<8>
      %rout = rocdl.make.buffer.rsrc %out, %stride, %nrec, %flags : !llvm.ptr<1> to !llvm.ptr<8>
      %voff = arith.muli %t, %c4 : i32
      %t1 = arith.addi %t, %c1 : i32
      %t1m = arith.andi %t1, %c63 : i32
      %idx = arith.muli %t1m, %c4 : i32
      %rev = arith.subi %c255, %tid : index
      %x = rocdl.raw.ptr.buffer.load %rin, %voff, %c0, 0 : i32
{begin}
      %a = rocdl.ds_bpermute %idx, %x : (i32, i32) -> i32
      %d = rocdl.update.dpp %a, %a with 177, 15, 15, false : i32
{swap}
      %swz = arith.constant 16415 : i32
      %z = rocdl.ds_swizzle %s1, %swz : (i32, i32) -> i32
      memref.store %s0, %lds[%tid] : memref<256xi32, #gpu.address_space<workgroup>>
      gpu.barrier
      %r = memref.load %lds[%rev] : memref<256xi32, #gpu.address_space<workgroup>>
      %rr = arith.xori %r, %z : i32
{end}
      rocdl.raw.ptr.buffer.store %rr, %rout, %voff, %c0, 0 : i32
      gpu.return
    }}
  }}
}}
"""


@pytest.fixture()
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("LINLAYOUT_CACHE", str(d))
    monkeypatch.delenv("LINLAYOUT_NO_CACHE", raising=False)
    return d


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_exchange_kernel_compiles_to_expected_isa(arch, cache_dir):
    t0 = time.perf_counter()
    ck = compile_mlir(exchange_kernel(arch), arch, cache=False)
    wall = time.perf_counter() - t0
    print(f"{arch}: compile (isa + code object) {ck.compile_seconds:.3f}s, call {wall:.3f}s")
    assert ck.arch == arch and not ck.from_cache

    c = isa_counts(ck.isa, region="conv")
    assert c["ds_bpermute"] == 1
    assert c["dpp"] == 1
    assert c["ds_swizzle"] == 1
    assert c["permlane32_swap"] == (1 if arch == "gfx950" else 0)
    assert c["permlane16_swap"] == 0
    assert c["lds_write"] == 1 and c["lds_read"] == 1 and c["lds_read_tr"] == 0
    assert c["s_barrier"] == 1
    assert c["v_cndmask"] == 0 and c["v_perm_b32"] == 0 and c["ds_permute"] == 0
    assert c["vmem"] == 0 and c["smem"] == 0  # the buffer load/store stay outside the region
    assert c["total"] == sum(c[k] for k in CLASS_KEYS)

    whole = isa_counts(ck.isa)
    assert whole["vmem"] == 2  # buffer_load_dword + buffer_store_dword
    assert any(ln.startswith("buffer_load_dword") for ln in isa_mod.instructions(ck.isa))
    assert any(ln.startswith("buffer_store_dword") for ln in isa_mod.instructions(ck.isa))

    k = ck.kernel()
    assert k.name == "exchange" and k.lds_bytes == 256 * 4 and k.wavefront_size == 64
    assert k.vgpr_count > 0 and k.sgpr_count > 0 and k.scratch_bytes == 0
    assert ck.lds_bytes == 1024

    b = ck.binary
    assert b[:4] == b"\x7fELF" and b[7] == 64  # ELFOSABI_AMDGPU_HSA
    assert struct.unpack_from("<H", b, 18)[0] == EM_AMDGPU
    assert struct.unpack_from("<I", b, 48)[0] & 0xFF == ELF_MACH[arch]
    assert b"exchange" in b


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_markers_cost_nothing(arch, cache_dir):
    with_m = isa_counts(compile_mlir(exchange_kernel(arch), arch, binary=False).isa)
    without = isa_counts(compile_mlir(exchange_kernel(arch, markers=False), arch, binary=False).isa)
    assert with_m == without


def test_permlane_swap_refused_on_gfx942(cache_dir):
    # LLVM would abort the process ("Cannot select: intrinsic"); we must raise instead.
    with pytest.raises(CompileError, match="gfx950"):
        compile_mlir(exchange_kernel("gfx950"), "gfx942")


def test_wave64_only_instructions_refused_on_gfx1250(cache_dir):
    # gfx1250 has permlane swaps and transposing LDS loads, but not gfx950's permlane32 swap or
    # ds_read_b64_tr_b*: LLVM would abort the process.
    with pytest.raises(CompileError, match="rocdl.permlane32.swap are instructions of 64-lane waves; gfx1250"):
        compile_mlir(exchange_kernel("gfx950"), "gfx1250")


def test_bad_mlir_and_bad_arch(cache_dir):
    with pytest.raises(CompileError, match="parse|expected"):
        compile_mlir("module { this is not mlir }", "gfx942", binary=False)
    with pytest.raises(ValueError):
        compile_mlir(exchange_kernel("gfx942"), "sm_90")


def test_cache_hit_and_corrupt_entry_rebuilt(cache_dir):
    src = exchange_kernel("gfx942")
    first = compile_mlir(src, "gfx942")
    again = compile_mlir(src, "gfx942")
    assert again.from_cache and again.isa == first.isa and again.binary == first.binary
    entries = list((cache_dir / "compile").rglob("*.json"))
    assert len(entries) == 1
    assert not [p for p in (cache_dir / "compile").rglob("*") if p.name.endswith(".tmp")]

    for garbage in (b"", b"{not json", json.dumps({"format": "linlayout-compiled/v1"}).encode()):
        entries[0].write_bytes(garbage)
        rebuilt = compile_mlir(src, "gfx942")
        assert not rebuilt.from_cache and rebuilt.isa == first.isa
        assert compile_mlir(src, "gfx942").from_cache

    # a tampered binary fails the checksum and is rebuilt
    e = json.loads(entries[0].read_text())
    e["binary_b64"] = "AAAA"
    entries[0].write_text(json.dumps(e))
    assert not compile_mlir(src, "gfx942").from_cache

    # an ISA-only entry does not satisfy a binary request
    other = exchange_kernel("gfx942").replace("%c63 = arith.constant 63", "%c63 = arith.constant 31")
    assert compile_mlir(other, "gfx942", binary=False).binary == b""
    full = compile_mlir(other, "gfx942")
    assert not full.from_cache and full.binary[:4] == b"\x7fELF"


def _no_system_linkers(monkeypatch):
    monkeypatch.delenv("LINLAYOUT_LD_LLD", raising=False)
    monkeypatch.setattr(linker, "_rocm_candidates", lambda: [])
    monkeypatch.setattr(linker, "_path_candidates", lambda: [])


def test_linker_found(cache_dir):
    tk = linker.find_toolkit()
    assert os.access(tk.ld_lld, os.X_OK), tk


@needs.ziglang
def test_ziglang_linker_shim(cache_dir, monkeypatch):
    _no_system_linkers(monkeypatch)
    linker.find_toolkit.cache_clear()
    try:
        tk = linker.find_toolkit()
        assert "ziglang" in tk.origin
        ck = compile_mlir(exchange_kernel("gfx950"), "gfx950", cache=False)
        assert ck.binary[:4] == b"\x7fELF"
    finally:
        linker.find_toolkit.cache_clear()


def test_linker_not_found_message(cache_dir, monkeypatch):
    _no_system_linkers(monkeypatch)
    monkeypatch.setattr(linker, "_ziglang_available", lambda: False)
    linker.find_toolkit.cache_clear()
    try:
        with pytest.raises(linker.LinkerNotFound, match="pip install 'ziglang"):
            linker.find_toolkit()
    finally:
        linker.find_toolkit.cache_clear()


# ---- isa_counts on hand-written text -------------------------------------------------

SAMPLE = """\t.text
kern:
\ts_load_dwordx2 s[0:1], s[0:1], 0x0
\t;;#ASMSTART
\t; linlayout-begin conv
\t;;#ASMEND
\tv_mov_b32_e32 v1, v0
\tv_mov_b32_dpp v2, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
\tv_cndmask_b32_e64 v3, v1, v2, s[2:3]
\tv_perm_b32 v4, v1, v2, v3
\tv_pk_mov_b32 v[4:5], v[2:3], v[4:5] op_sel:[0,1]
\tv_readlane_b32 s4, v1, 3
\tv_permlane16_swap_b32_e32 v1, v2
\tv_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]
\tds_bpermute_b32 v1, v2, v1
\tds_permute_b32 v1, v2, v1
\tds_swizzle_b32 v1, v1 offset:swizzle(SWAP,16)
\tds_write_b128 v0, v[4:7]
\tds_write2_b32 v0, v1, v2 offset1:32
\tds_read_b64 v[2:3], v0
\tds_read_b64_tr_b16 v[2:3], v0
\ts_waitcnt lgkmcnt(0)
\ts_barrier
\ts_nop 1
\ts_add_u32 s0, s0, 4
.LBB0_1:
\tglobal_load_dword v1, v0, s[0:1]
\t;;#ASMSTART
\t; linlayout-end conv
\t;;#ASMEND
\ts_endpgm
\t.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count:     0
    .args:
      - .address_space:  global
    .group_segment_fixed_size: 1024
    .name:           kern
    .sgpr_count:     8
    .vgpr_count:     6
amdhsa.target:   amdgcn-amd-amdhsa--gfx942
...
\t.end_amdgpu_metadata
"""


def test_isa_counts_rules():
    c = isa_counts(SAMPLE, region="conv")
    assert set(c) == set(COUNT_KEYS)
    expect = {
        "total": 20, "valu": 7, "mfma": 1, "salu": 1, "s_waitcnt": 1, "s_barrier": 1, "s_nop": 1,
        "ds_bpermute": 1, "ds_permute": 1, "ds_swizzle": 1, "lds_write": 2, "lds_read": 1,
        "lds_read_tr": 1, "vmem": 1, "v_mov": 1, "dpp": 1, "v_cndmask": 1, "v_perm_b32": 1,
        "pack_ops": 1, "readlane": 1, "permlane16_swap": 1,
    }  # fmt: skip
    assert {k: v for k, v in c.items() if v} == expect
    assert c["total"] == sum(c[k] for k in CLASS_KEYS)
    whole = isa_counts(SAMPLE)  # metadata YAML lines are not instructions
    assert whole["total"] == 22 and whole["smem"] == 1 and whole["salu"] == 2
    kr = compile_mod.parse_kernel_resources(SAMPLE)
    assert kr[0].name == "kern" and kr[0].lds_bytes == 1024 and kr[0].vgpr_count == 6 and kr[0].sgpr_count == 8


def test_isa_counts_gfx12_barrier_halves_and_waits():
    """gfx12/gfx1250 split a barrier into s_barrier_signal + s_barrier_wait (both s_barrier) and
    name their waits s_wait_* (s_waitcnt, s_wait_alu included); s_delay_alu is a scalar instruction, counted
    under salu and its s_delay_alu sub-count (an s_mov_b32 under salu only)."""
    c = isa_counts("\ts_barrier_signal -1\n\ts_barrier_wait -1\n\ts_wait_dscnt 0x0\n\ts_wait_alu 0xfffe\n"
                   "\ts_delay_alu instid0(VALU_DEP_1)\n\tds_load_b128 v[0:3], v4\n\tds_store_b32 v4, v5\n"
                   "\ts_mov_b32 s0, 0x5040100\n")
    assert {k: v for k, v in c.items() if v} == {"total": 8, "s_barrier": 2, "s_waitcnt": 2, "salu": 2,
                                                 "s_delay_alu": 1, "lds_read": 1, "lds_write": 1}


def test_isa_counts_a_dual_issue_line_as_its_two_instructions():
    """A gfx11/gfx12 VOPD line is two VALU instructions, each with its own sub-counts."""
    c = isa_counts("\tv_dual_cndmask_b32 v36, v1, v0 :: v_dual_mov_b32 v33, v2\n"
                   "\tv_dual_cndmask_b32 v2, v2, v6, s0 :: v_dual_cndmask_b32 v4, v4, v1, s0 ; comment\n"
                   "\tv_perm_b32 v1, v2, v3, 0x5040100\n")
    assert {k: v for k, v in c.items() if v} == {"total": 5, "valu": 5, "v_cndmask": 3, "v_mov": 1, "v_perm_b32": 1}


def test_isa_region_errors():
    with pytest.raises(IsaRegionError):
        isa_counts(SAMPLE, region="other")
    doubled = SAMPLE.replace("\ts_endpgm", "\t; linlayout-begin conv\n\t; linlayout-end conv\n\ts_endpgm")
    with pytest.raises(IsaRegionError):
        isa_counts(doubled, region="conv")
    with pytest.raises(ValueError):
        marker_ops("bad tag", "begin")


def test_count_keys_cover_contract_and_baseline():
    contract = {"total", "valu", "ds_bpermute", "permlane16_swap", "permlane32_swap", "lds_write", "lds_read",
                "s_barrier", "v_cndmask", "v_perm_b32", "dpp", "ds_swizzle"}  # fmt: skip
    assert contract <= set(COUNT_KEYS)
    for case in baseline_cases():
        t = case["triton"]
        assert set(t) <= set(COUNT_KEYS), set(t) - set(COUNT_KEYS)
        counted = sum(t[k] for k in t if k in CLASS_KEYS)
        assert 0 <= t["total"] - counted <= 1, case["name"]  # the rest: at most one s_nop
        subs = sum(t[k] for k in isa_mod.VALU_SUB_KEYS if k in t)
        assert t["valu"] >= subs, case["name"]
