"""Buffer ops (OOB per component), LDS (cross-wave exchange, races, uninitialised reads,
barriers), global faults, memrefs, and the gfx950 transpose loads on the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import needs

pytestmark = needs.mlir

from interp_kernels import compiles, lane_kernel, run_lanes, seq  # noqa: E402
from linlayout.lowering.interpreter import InterpOptions, InterpreterError, run_kernel  # noqa: E402

RSRC = """      %stride = arith.constant 0 : i16
      %flags = arith.constant 159744 : i32
      %nrec = arith.constant {nrec} : i64
      %soff = arith.constant {soff} : i32
      %r = rocdl.make.buffer.rsrc %{ptr}, %stride, %nrec, %flags : !llvm.ptr<1> to !llvm.ptr<8>
"""


def buffer_load_kernel(t: str, vbytes: int, nrec: int, soff: int = 0) -> str:
    return lane_kernel(RSRC.format(nrec=nrec, soff=soff, ptr="in") + f"""      %cb = arith.constant {vbytes} : i32
      %voff = arith.muli %t, %cb : i32
      %res = rocdl.raw.ptr.buffer.load %r, %voff, %soff, 0 : {t}""", out_type=t)


def test_buffer_load_out_of_range_returns_zero_per_dword():
    data = seq(512, seed=1)
    # dword loads: lanes whose offset >= 100 read 0
    got = run_lanes(buffer_load_kernel("i32", 4, 100), data, np.uint32)
    exp = np.where(np.arange(64) * 4 < 100, data[:64], 0)
    np.testing.assert_array_equal(got, exp)
    # dwordx4: range-checked per component; lane 4 covers bytes 64..79: dwords at 64, 68 in range, 72, 76 not
    got = run_lanes(buffer_load_kernel("vector<4xi32>", 16, 70), data, np.uint32, out_shape=(64, 4))
    offs = np.arange(64)[:, None] * 16 + np.arange(4)[None, :] * 4
    exp = np.where(offs < 70, data[:256].reshape(64, 4), 0)
    np.testing.assert_array_equal(got, exp)
    assert list(got[4]) == [data[16], data[17], 0, 0]


def test_buffer_soffset_is_outside_the_range_check():
    data = seq(128, seed=2)
    got = run_lanes(buffer_load_kernel("i32", 4, 64, soff=8), data, np.uint32)
    exp = np.where(np.arange(64) * 4 < 64, data[2:66], 0)
    np.testing.assert_array_equal(got, exp)


def test_buffer_sub_dword_and_f16_vector_loads():
    data = seq(256, seed=3).astype(np.uint16)
    got = run_lanes(buffer_load_kernel("i16", 2, 21), data, np.uint16)
    np.testing.assert_array_equal(got, np.where(np.arange(64) * 2 < 21, data[:64], 0))
    h = (np.arange(256) / 8).astype(np.float16)
    got = run_lanes(buffer_load_kernel("vector<2xf16>", 4, 40), h, np.float16, out_shape=(64, 2))
    np.testing.assert_array_equal(got, np.where((np.arange(64) * 4 < 40)[:, None], h[:128].reshape(64, 2), 0))


def test_buffer_oob_rule_is_a_parameter():
    data = seq(256, seed=4).astype(np.uint16)
    text = buffer_load_kernel("i16", 2, 21)
    end = run_lanes(text, data, np.uint16, check_compile=False, options=InterpOptions(buffer_oob_rule="end"))
    # a 2-byte component at offset 20 ends at 22 > 21: out of range under "end", in range under "start"
    assert end[10] == 0 and end[9] == data[9]
    assert run_lanes(text, data, np.uint16, check_compile=False)[10] == data[10]


def test_buffer_masking_idiom_voffset_0x80000000():
    text = lane_kernel(RSRC.format(nrec=1 << 20, soff=0, ptr="in") + """      %c4 = arith.constant 4 : i32
      %v = arith.muli %t, %c4 : i32
      %c1 = arith.constant 1 : i32
      %lb = arith.andi %t, %c1 : i32
      %odd = arith.cmpi eq, %lb, %c1 : i32
      %big = arith.constant -2147483648 : i32
      %voff = arith.select %odd, %big, %v : i32
      %res = rocdl.raw.ptr.buffer.load %r, %voff, %soff, 0 : i32""")
    data = seq(64, seed=5)
    np.testing.assert_array_equal(run_lanes(text, data, np.uint32), np.where(np.arange(64) % 2 == 0, data, 0))


def test_buffer_store_out_of_range_is_dropped():
    text = lane_kernel(RSRC.format(nrec=40, soff=0, ptr="out") + """      %c4 = arith.constant 4 : i32
      %voff = arith.muli %t, %c4 : i32
      rocdl.raw.ptr.buffer.store %x, %r, %voff, %soff, 0 : i32
      %res = arith.constant 0 : i32""").replace(
        "      llvm.store %res, %pout : i32, !llvm.ptr<1>\n", "")
    compiles(text)
    data = seq(64, seed=6)
    out = np.full(64, 7, np.uint32)
    got = run_kernel(text, "k", [data, out], block=64)[1]
    np.testing.assert_array_equal(got, np.where(np.arange(64) < 10, data, 7))
    # vector store: per-dword components, partial at the boundary
    text2 = text.replace("rocdl.raw.ptr.buffer.store %x, %r, %voff, %soff, 0 : i32",
                         "%xv = vector.broadcast %x : i32 to vector<2xi32>\n      "
                         "%c8 = arith.constant 8 : i32\n      %v8 = arith.muli %t, %c8 : i32\n      "
                         "rocdl.raw.ptr.buffer.store %xv, %r, %v8, %soff, 0 : vector<2xi32>").replace("nrec = arith.constant 40", "nrec = arith.constant 44")
    compiles(text2)
    got = run_kernel(text2, "k", [data, np.full(128, 7, np.uint32)], block=64)[1]
    exp = np.full(128, 7, np.uint32)
    exp[:11] = np.repeat(data[:6], 2)[:11]
    np.testing.assert_array_equal(got, exp)


def test_buffer_errors():
    data = seq(64)
    with pytest.raises(InterpreterError, match="out of bounds"):  # num_records beyond the array: a fault
        run_lanes(buffer_load_kernel("i32", 4, 1 << 20), data[:32], np.uint32, check_compile=False)
    text = lane_kernel(RSRC.format(nrec=256, soff=0, ptr="in") + """      %c4 = arith.constant 4 : i32
      %v = arith.muli %t, %c4 : i32
      %c2 = arith.constant 2 : i32
      %voff = arith.addi %v, %c2 : i32
      %res = rocdl.raw.ptr.buffer.load %r, %voff, %soff, 0 : i32""")
    with pytest.raises(InterpreterError, match="aligned"):
        run_lanes(text, data, np.uint32, check_compile=False)
    with pytest.raises(InterpreterError, match="raw"):
        run_lanes(buffer_load_kernel("i32", 4, 64).replace("%stride = arith.constant 0", "%stride = arith.constant 16"),
                  data, np.uint32, check_compile=False)


# ------------------------------------------------------------------ LDS
LDS_T = "memref<256xi32, #gpu.address_space<workgroup>>"


def lds_exchange(sync: str) -> str:
    return lane_kernel(f"""      memref.store %x, %lds[%tid] : {LDS_T}
{sync}
      %c255 = arith.constant 255 : index
      %rev = arith.subi %c255, %tid : index
      %res = memref.load %lds[%rev] : {LDS_T}""", workgroup=f"%lds : {LDS_T}")


def test_lds_store_barrier_load_across_waves():
    text = lds_exchange("      gpu.barrier")
    x = seq(256, seed=7)
    got = run_lanes(text, x, np.uint32, block=256)
    np.testing.assert_array_equal(got, x[::-1])
    text = lds_exchange("      rocdl.s.waitcnt 0\n      rocdl.s.barrier")
    np.testing.assert_array_equal(run_lanes(text, x, np.uint32, block=256), x[::-1])


@pytest.mark.parametrize("arch, sync, ordered", [
    ("gfx1100", "rocdl.s.waitcnt 64519", True),  # gfx11 lgkmcnt(0): bits 9:4 zero
    ("gfx1100", "rocdl.s.waitcnt 49279", False),  # gfx9's lgkmcnt(0) encoding reads lgkmcnt 7 on gfx11
    ("gfx1200", "rocdl.s.wait.dscnt 0", True),
    ("gfx1250", "rocdl.s.wait.dscnt 1", False),
])
def test_wave32_lds_waits_before_a_barrier(arch, sync, ordered):
    """8 waves of 32 lanes exchange through LDS across ``wait; s_barrier``: ordered only when the wait,
    decoded for the arch's generation, waits for every LDS access."""
    text = lds_exchange(f"      {sync}\n      rocdl.s.barrier")
    x = seq(256, seed=11)
    if ordered:
        np.testing.assert_array_equal(run_lanes(text, x, np.uint32, arch=arch, block=256), x[::-1])
    else:
        with pytest.raises(InterpreterError, match="race"):
            run_lanes(text, x, np.uint32, arch=arch, block=256, check_compile=False)


@pytest.mark.parametrize("memfence, ordered", [("workgroup", True), ("global", False)])
def test_a_barrier_fencing_only_global_memory_does_not_order_lds(memfence, ordered):
    text = lds_exchange(f"      gpu.barrier memfence [#gpu.address_space<{memfence}>]")
    x = seq(256, seed=12)
    if ordered:
        np.testing.assert_array_equal(run_lanes(text, x, np.uint32, arch="gfx1100", block=256), x[::-1])
    else:
        with pytest.raises(InterpreterError, match="race"):
            run_lanes(text, x, np.uint32, arch="gfx1100", block=256, check_compile=False)


@pytest.mark.parametrize("sync", ["", "      rocdl.s.barrier"])
def test_lds_missing_barrier_is_a_race(sync):
    # without a barrier, or with s_barrier while the LDS writes may still be in flight
    with pytest.raises(InterpreterError, match="race"):
        run_lanes(lds_exchange(sync), seq(256), np.uint32, block=256)
    # inside one wave there is no race: program order
    got = run_lanes(lds_exchange("").replace("%c255 = arith.constant 255", "%c255 = arith.constant 63"),
                    seq(64), np.uint32, block=64, check_compile=False)
    np.testing.assert_array_equal(got, seq(64)[::-1])


def test_lds_write_after_read_race_and_no_race_after_barrier():
    body = f"""      %c0 = arith.constant 0 : index
      memref.store %x, %lds[%tid] : {LDS_T}
      gpu.barrier
      %c64 = arith.constant 64 : index
      %c255 = arith.constant 255 : index
      %p = arith.addi %tid, %c64 : index
      %q = arith.andi %p, %c255 : index
      %res = memref.load %lds[%q] : {LDS_T}
{{sync}}
      memref.store %res, %lds[%tid] : {LDS_T}"""
    with pytest.raises(InterpreterError, match="race.*read"):
        run_lanes(lane_kernel(body.format(sync=""), workgroup=f"%lds : {LDS_T}"), seq(256), np.uint32, block=256,
                  check_compile=False)
    got = run_lanes(lane_kernel(body.format(sync="      gpu.barrier"), workgroup=f"%lds : {LDS_T}"), seq(256), np.uint32,
                    block=256)
    np.testing.assert_array_equal(got, np.roll(seq(256), -64))


def test_lds_uninitialized_read_policies():
    text = lane_kernel(f"""      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %i = arith.muli %tid, %c2 : index
      memref.store %x, %lds[%i] : {LDS_T}
      %j = arith.addi %i, %c1 : index
      %res = memref.load %lds[%j] : {LDS_T}""", workgroup=f"%lds : {LDS_T}")
    with pytest.raises(InterpreterError, match="never wrote"):
        run_lanes(text, seq(64), np.uint32)
    assert not run_lanes(text, seq(64), np.uint32, check_compile=False, options=InterpOptions(uninitialized_lds="zero")).any()
    g1 = run_lanes(text, seq(64), np.uint32, check_compile=False, options=InterpOptions(uninitialized_lds="garbage"))
    g2 = run_lanes(text, seq(64), np.uint32, check_compile=False, options=InterpOptions(uninitialized_lds="garbage"))
    assert g1.any() and (g1 == g2).all()


def test_barrier_in_divergent_control_flow_is_an_error():
    text = lane_kernel("""      %c64 = arith.constant 64 : i32
      %lo = arith.cmpi ult, %t, %c64 : i32
      scf.if %lo {
        gpu.barrier
      }
      %res = arith.addi %x, %x : i32""")
    with pytest.raises(InterpreterError, match="divergent"):
        run_lanes(text, seq(128), np.uint32, block=128)
    # uniform over the workgroup: fine
    np.testing.assert_array_equal(run_lanes(text, seq(64), np.uint32, block=64, check_compile=False), 2 * seq(64))


def test_lds_conflicting_writes_in_one_instruction():
    text = lane_kernel(f"""      %c0 = arith.constant 0 : index
      memref.store %x, %lds[%c0] : {LDS_T}
      %res = arith.addi %x, %x : i32""", workgroup=f"%lds : {LDS_T}")
    with pytest.raises(InterpreterError, match="different values"):
        run_lanes(text, seq(64), np.uint32, check_compile=False)
    # the same value from every lane is fine
    run_lanes(text, np.full(64, 5, np.uint32), np.uint32, check_compile=False)


def test_lds_llvm_globals_vectors_and_bounds():
    text = """module {
  gpu.module @m {
    llvm.mlir.global internal @buf() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<512 x i32>
    memref.global "private" @tile : memref<64x4xf16, #gpu.address_space<workgroup>>
    gpu.func @k(%in: !llvm.ptr<1>, %out: !llvm.ptr<1>) kernel {
      %tid = gpu.thread_id x
      %t = arith.index_cast %tid : index to i32
      %pin = llvm.getelementptr %in[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xi32>
      %x = llvm.load %pin : !llvm.ptr<1> -> vector<4xi32>
      %base = llvm.mlir.addressof @buf : !llvm.ptr<3>
      %c0 = arith.constant 0 : i32
      %p = llvm.getelementptr %base[%c0, %t] : (!llvm.ptr<3>, i32, i32) -> !llvm.ptr<3>, !llvm.array<512 x vector<4xi32>>
      llvm.store %x, %p {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
      gpu.barrier
      %c63 = arith.constant 63 : i32
      %r = arith.subi %c63, %t : i32
      %q = llvm.getelementptr %base[%c0, %r] : (!llvm.ptr<3>, i32, i32) -> !llvm.ptr<3>, !llvm.array<512 x vector<4xi32>>
      %y = llvm.load %q {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
      %tile = memref.get_global @tile : memref<64x4xf16, #gpu.address_space<workgroup>>
      %h = vector.bitcast %y : vector<4xi32> to vector<8xf16>
      %h4 = vector.extract_strided_slice %h {offsets = [2], sizes = [4], strides = [1]} : vector<8xf16> to vector<4xf16>
      %ci0 = arith.constant 0 : index
      vector.store %h4, %tile[%tid, %ci0] : memref<64x4xf16, #gpu.address_space<workgroup>>, vector<4xf16>
      gpu.barrier
      %c1 = arith.constant 1 : index
      %c63i = arith.constant 63 : index
      %nx = arith.addi %tid, %c1 : index
      %n = arith.andi %nx, %c63i : index
      %z = vector.load %tile[%n, %ci0] : memref<64x4xf16, #gpu.address_space<workgroup>>, vector<4xf16>
      %po = llvm.getelementptr %out[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xf16>
      llvm.store %z, %po : vector<4xf16>, !llvm.ptr<1>
      gpu.return
    }
  }
}
"""
    compiles(text)
    x = seq(256, seed=9).reshape(64, 4)
    got = run_kernel(text, "k", [x, np.zeros((64, 4), np.float16)], block=64)[1]
    rev = x[::-1].copy().view(np.float16)  # (64, 8) halves of the reversed rows
    np.testing.assert_array_equal(got.view(np.uint16), np.roll(rev[:, 2:6], -1, axis=0).view(np.uint16))
    # out of the allocation: an error, not a silent read
    bad = text.replace("%c63 = arith.constant 63 : i32", "%c63 = arith.constant 600 : i32")
    with pytest.raises(InterpreterError, match="outside every LDS allocation"):
        run_kernel(bad, "k", [x, np.zeros((64, 4), np.float16)], block=64)
    # a misaligned vector access breaks its alignment claim
    mis = text.replace("(!llvm.ptr<3>, i32, i32) -> !llvm.ptr<3>, !llvm.array<512 x vector<4xi32>>\n      llvm.store",
                       "(!llvm.ptr<3>, i32, i32) -> !llvm.ptr<3>, !llvm.array<512 x vector<2xi32>>\n      llvm.store")
    with pytest.raises(InterpreterError, match="aligned"):
        run_kernel(mis, "k", [x, np.zeros((64, 4), np.float16)], block=64)


def test_global_memory_fault_names_the_buffer():
    text = lane_kernel("""      %c100 = arith.constant 100 : i32
      %i = arith.addi %t, %c100 : i32
      %p = llvm.getelementptr %in[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      %res = llvm.load %p : !llvm.ptr<1> -> i32""")
    with pytest.raises(InterpreterError, match="argument 0.*out of bounds"):
        run_lanes(text, seq(128), np.uint32, check_compile=False)


def test_memref_arguments_and_private_alloca():
    text = """module {
  gpu.module @m {
    gpu.func @k(%a: memref<16x8xf32>, %o: memref<8x16xf32>) kernel {
      %tid = gpu.thread_id x
      %c8 = arith.constant 8 : index
      %c2 = arith.constant 2 : index
      %c1 = arith.constant 1 : index
      %c0 = arith.constant 0 : index
      %i = arith.divui %tid, %c8 : index
      %j = arith.remui %tid, %c8 : index
      %i2 = arith.addi %i, %c2 : index
      %v = memref.load %a[%i2, %j] : memref<16x8xf32>
      %buf = memref.alloca() : memref<2xf32>
      memref.store %v, %buf[%c0] : memref<2xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %buf[%c1] : memref<2xf32>
      %r0 = memref.load %buf[%c0] : memref<2xf32>
      %r1 = memref.load %buf[%c1] : memref<2xf32>
      %s = arith.addf %r0, %r1 : f32
      memref.store %s, %o[%j, %i] : memref<8x16xf32>
      gpu.return
    }
  }
}
"""
    compiles(text)
    a = np.arange(128, dtype=np.float32).reshape(16, 8)
    got = run_kernel(text, "k", [a, np.zeros((8, 16), np.float32)], block=64)[1]
    exp = np.zeros((8, 16), np.float32)
    exp[:, :8] = 3 * a[2:10].T
    np.testing.assert_array_equal(got, exp)
    oob = text.replace("%c8 = arith.constant 8 : index", "%c8 = arith.constant 4 : index")
    with pytest.raises(InterpreterError, match="out of bounds"):
        run_kernel(oob, "k", [a, np.zeros((8, 16), np.float32)], block=64)


# ------------------------------------------------------------------ transpose loads (gfx950)
def tr_kernel(op: str, nbytes: int, t: str) -> str:
    return f"""module {{
  gpu.module @m {{
    gpu.func @k(%in: !llvm.ptr<1>, %out: !llvm.ptr<1>) workgroup(%lds : memref<{64 * nbytes}xi8, #gpu.address_space<workgroup>>) kernel {{
      %tid = gpu.thread_id x
      %t = arith.index_cast %tid : index to i32
      %pin = llvm.getelementptr %in[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<{nbytes}xi8>
      %x = llvm.load %pin {{alignment = 4 : i64}} : !llvm.ptr<1> -> vector<{nbytes}xi8>
      %cn = arith.constant {nbytes} : index
      %off = arith.muli %tid, %cn : index
      vector.store %x, %lds[%off] : memref<{64 * nbytes}xi8, #gpu.address_space<workgroup>>, vector<{nbytes}xi8>
      gpu.barrier
      %base = memref.extract_aligned_pointer_as_index %lds : memref<{64 * nbytes}xi8, #gpu.address_space<workgroup>> -> index
      %addr = arith.addi %base, %off : index
      %a32 = arith.index_cast %addr : index to i32
      %p = llvm.inttoptr %a32 : i32 to !llvm.ptr<3>
      %v = {op} %p : !llvm.ptr<3> -> {t}
      %po = llvm.getelementptr %out[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, {t}
      llvm.store %v, %po {{alignment = 4 : i64}} : {t}, !llvm.ptr<1>
      gpu.return
    }}
  }}
}}
"""


def _unpack(raw: np.ndarray, bits: int, count: int) -> np.ndarray:
    big = [int.from_bytes(r.tobytes(), "little") for r in raw]
    return np.array([[(v >> (bits * e)) & ((1 << bits) - 1) for e in range(count)] for v in big])


@pytest.mark.parametrize("op,nbytes,bits,elems,t", [
    ("rocdl.ds.read.tr16.b64", 8, 16, 4, "vector<4xi16>"),
    ("rocdl.ds.read.tr8.b64", 8, 8, 8, "vector<2xi32>"),
    ("rocdl.ds.read.tr4.b64", 8, 4, 16, "vector<2xi32>"),
    ("rocdl.ds.read.tr6.b96", 12, 6, 16, "vector<3xi32>"),
])
def test_transpose_loads_follow_the_documented_model(op, nbytes, bits, elems, t):
    text = tr_kernel(op, nbytes, t)
    compiles(text, "gfx950")
    raw = np.random.default_rng(bits).integers(0, 256, (64, nbytes)).astype(np.uint8)
    got = run_kernel(text, "k", [raw, np.zeros((64, nbytes), np.uint8)], block=64, arch="gfx950")[1]
    src = _unpack(raw, bits, elems)  # (64, E): element e read by lane s
    out = _unpack(got, bits, elems)
    for lane in range(64):
        g, i = divmod(lane, 16)
        for j in range(elems):
            # docs/amd_facts.md 1.6: lane i element j receives R[j*(16/E) + i//E][i % E] of its 16-lane group
            assert out[lane, j] == src[16 * g + j * (16 // elems) + i // elems, i % elems], (lane, j)
    with pytest.raises(InterpreterError, match="gfx950"):
        run_kernel(text, "k", [raw, np.zeros((64, nbytes), np.uint8)], block=64, arch="gfx942")


@pytest.mark.parametrize("op,nbytes,bits,t", [
    ("rocdl.ds.load.tr16.b128", 16, 16, "vector<8xi16>"),
    ("rocdl.ds.load.tr8.b64", 8, 8, "vector<2xi32>"),
])
def test_gfx1250_transpose_loads_follow_the_documented_maps(op, nbytes, bits, t):
    text = tr_kernel(op, nbytes, t)
    compiles(text, "gfx1250")
    raw = np.random.default_rng(bits).integers(0, 256, (32, nbytes)).astype(np.uint8)
    got = run_kernel(text, "k", [raw, np.zeros((32, nbytes), np.uint8)], block=32, arch="gfx1250")[1]
    src = _unpack(raw, bits, 8)  # (32, 8): element e read by lane s
    out = _unpack(got, bits, 8)
    for lane in range(32):
        for j in range(8):
            # docs/amd_facts.md 6.6: tr16, lane i element j receives element i % 8 of lane 8 (i // 8) + j;
            # tr8, of lane (j % 4) + 4 ((i // 8) % 2) + 8 (j // 4) of its 16-lane group
            s = (8 * (lane // 8) + j if bits == 16
                 else 16 * (lane // 16) + j % 4 + 4 * ((lane // 8) % 2) + 8 * (j // 4))
            assert out[lane, j] == src[s, lane % 8], (lane, j)
    with pytest.raises(InterpreterError, match="exists only on gfx1250, not on gfx950"):
        run_kernel(text, "k", [np.zeros((64, nbytes), np.uint8)] * 2, block=64, arch="gfx950")


def test_constant_global_and_private_attribution():
    text = """module {
  gpu.module @m {
    memref.global "private" constant @table : memref<4xi32> = dense<[10, -20, 30, 40]>
    gpu.func @k(%out: memref<64xi32>) private(%scratch : memref<2xi32, #gpu.address_space<private>>) kernel {
      %tid = gpu.thread_id x
      %c3 = arith.constant 3 : index
      %c0 = arith.constant 0 : index
      %j = arith.andi %tid, %c3 : index
      %tbl = memref.get_global @table : memref<4xi32>
      %v = memref.load %tbl[%j] : memref<4xi32>
      %t = arith.index_cast %tid : index to i32
      memref.store %t, %scratch[%c0] : memref<2xi32, #gpu.address_space<private>>
      %w = memref.load %scratch[%c0] : memref<2xi32, #gpu.address_space<private>>
      %s = arith.addi %v, %w : i32
      memref.store %s, %out[%tid] : memref<64xi32>
      gpu.return
    }
  }
}
"""
    compiles(text)
    got = run_kernel(text, "k", [np.zeros(64, np.int32)], block=64)[0]
    np.testing.assert_array_equal(got, np.array([10, -20, 30, 40])[np.arange(64) % 4] + np.arange(64))
