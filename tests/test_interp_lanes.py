"""Cross-lane ops on the interpreter vs. per-lane Python written from the ISA text (docs/amd_facts.md 2).

Every kernel is also compiled for gfx942 (and gfx950 where the op exists) to prove the
interpreted MLIR is MLIR that compiles."""

from __future__ import annotations

import numpy as np
import pytest

import needs

pytestmark = needs.mlir

from interp_kernels import compiles, lane_kernel, multi_kernel, run_lanes, seq  # noqa: E402
from linlayout.lowering.interpreter import InterpOptions, InterpreterError, run_kernel  # noqa: E402

W = 64


# ------------------------------------------------------------------ DPP
def dpp_src(ctrl: int, n: int):
    """Source lane of lane n for DPP_CTRL ``ctrl`` (CDNA4 ISA Table 94), None if out of range."""
    r = n % 16
    if ctrl <= 0xFF:
        return (n & ~3) + ((ctrl >> (2 * (n % 4))) & 3)
    s = ctrl & 0xF
    if 0x101 <= ctrl <= 0x10F:
        return n + s if r < 16 - s else None
    if 0x111 <= ctrl <= 0x11F:
        return n - s if r >= s else None
    if 0x121 <= ctrl <= 0x12F:
        return n - s if r >= s else n + 16 - s
    if ctrl == 0x130:
        return n + 1 if n < 63 else None
    if ctrl == 0x134:
        return (n + 1) % 64
    if ctrl == 0x138:
        return n - 1 if n > 0 else None
    if ctrl == 0x13C:
        return (n - 1) % 64
    if ctrl == 0x140:
        return n - r + 15 - r
    if ctrl == 0x141:
        return n - n % 8 + 7 - n % 8
    if ctrl == 0x142:
        return (n & 0x30) - 1 if n > 15 else None
    if ctrl == 0x143:
        return (n & 0x20) - 1 if n > 31 else None
    if 0x150 <= ctrl <= 0x15F:
        return n - r + s
    raise AssertionError(ctrl)


def dpp_expect(ctrl, src, old, row_mask=15, bank_mask=15, bc=False, active=None):
    out = old.copy()
    for w0 in range(0, src.size, W):
        for n in range(W):
            g = w0 + n
            if active is not None and not active[g]:
                continue
            if not ((row_mask >> (n // 16)) & 1 and (bank_mask >> ((n // 4) % 4)) & 1):
                continue
            s = dpp_src(ctrl, n)
            if s is not None and active is not None and not active[w0 + s]:
                s = None
            if s is None:
                out[g] = 0 if bc else old[g]
            else:
                out[g] = src[w0 + s]
    return out


CTRLS = ([0x00, 0x1B, 0x4E, 0xB1, 0xE4, 0x93] + list(range(0x101, 0x110)) + list(range(0x111, 0x120))
         + list(range(0x121, 0x130)) + [0x130, 0x134, 0x138, 0x13C, 0x140, 0x141, 0x142, 0x143]
         + list(range(0x150, 0x160)))


@pytest.mark.parametrize("bc", [False, True])
def test_dpp_every_gfx9_control(bc):
    body = ["      %k = arith.constant 1000000 : i32", "      %old = arith.addi %x, %k : i32"]
    body += [f"      %res{i} = rocdl.update.dpp %old, %x with {c}, 15, 15, {str(bc).lower()} : i32" for i, c in enumerate(CTRLS)]
    text = multi_kernel("\n".join(body), len(CTRLS), 128)
    x = seq(128)
    got = run_lanes(text, x, np.uint32, block=128, out_shape=128 * len(CTRLS)).reshape(len(CTRLS), 128)
    compiles(text, "gfx950")
    for i, c in enumerate(CTRLS):
        np.testing.assert_array_equal(got[i], dpp_expect(c, x, x + 1000000, bc=bc), err_msg=f"ctrl {c:#x}")


def test_dpp_row_and_bank_masks_and_f32():
    cases = [(0x111, 0xA, 0xF, False), (0x111, 0x5, 0x3, True), (0x142, 0xA, 0xF, False), (0x143, 0xC, 0xF, True),
             (0x1B, 0xF, 0x6, False), (0x101, 0x3, 0x9, True)]
    body = ["      %k = arith.constant 7 : i32", "      %old = arith.xori %x, %k : i32",
            "      %fx = arith.bitcast %x : i32 to f32", "      %fo = arith.bitcast %old : i32 to f32"]
    for i, (c, rm, bm, bc) in enumerate(cases):
        body.append(f"      %f{i} = rocdl.update.dpp %fo, %fx with {c}, {rm}, {bm}, {str(bc).lower()} : f32")
        body.append(f"      %res{i} = arith.bitcast %f{i} : f32 to i32")
    text = multi_kernel("\n".join(body), len(cases), 64)
    x = seq(64, seed=3)
    got = run_lanes(text, x, np.uint32, out_shape=64 * len(cases)).reshape(len(cases), 64)
    for i, (c, rm, bm, bc) in enumerate(cases):
        np.testing.assert_array_equal(got[i], dpp_expect(c, x, x ^ 7, rm, bm, bc), err_msg=str(cases[i]))


def _divergent(body_inside: str, cond: str = "%odd") -> str:
    """``%res`` = result of ``body_inside`` (defines %r) on lanes where ``cond``, else 0."""
    return f"""      %c1 = arith.constant 1 : i32
      %c0 = arith.constant 0 : i32
      %lb = arith.andi %t, %c1 : i32
      %odd = arith.cmpi eq, %lb, %c1 : i32
      %res = scf.if {cond} -> (i32) {{
{body_inside}
        scf.yield %r : i32
      }} else {{
        scf.yield %c0 : i32
      }}"""


@pytest.mark.parametrize("invalid", [True, False])
@pytest.mark.parametrize("bc", [False, True])
def test_dpp_reading_inactive_lanes(invalid, bc):
    # odd lanes active; quad_perm [1,0,3,2] makes every odd lane read an (inactive) even lane
    text = lane_kernel(_divergent(f"""        %k = arith.constant 5 : i32
        %old = arith.addi %x, %k : i32
        %r = rocdl.update.dpp %old, %x with 177, 15, 15, {str(bc).lower()} : i32"""))
    x = seq(64, seed=4)
    got = run_lanes(text, x, np.uint32, options=InterpOptions(dpp_inactive_source_invalid=invalid))
    odd = np.arange(64) % 2 == 1
    if invalid:
        exp = dpp_expect(0xB1, x, x + 5, bc=bc, active=odd)
    else:
        exp = dpp_expect(0xB1, x, x + 5, bc=bc)
    np.testing.assert_array_equal(got, np.where(odd, exp, 0))


@pytest.mark.parametrize("row0_invalid", [True, False])
def test_dpp_row_bcast_rows_without_source(row0_invalid):
    body = ["      %k = arith.constant 77 : i32", "      %old = arith.addi %x, %k : i32",
            "      %res0 = rocdl.update.dpp %old, %x with 322, 15, 15, true : i32",
            "      %res1 = rocdl.update.dpp %old, %x with 323, 15, 15, true : i32"]
    text = multi_kernel("\n".join(body), 2, 64)
    x = seq(64, seed=14)
    got = run_lanes(text, x, np.uint32, out_shape=128, options=InterpOptions(dpp_row_bcast_row0_invalid=row0_invalid))
    got = got.reshape(2, 64)
    exp15, exp31 = dpp_expect(0x142, x, x + 77, bc=True), dpp_expect(0x143, x, x + 77, bc=True)
    if not row0_invalid:
        exp15[:16], exp31[:32] = x[:16] + 77, x[:32] + 77
    np.testing.assert_array_equal(got[0], exp15)
    np.testing.assert_array_equal(got[1], exp31)


def test_dpp_reserved_control_is_an_error():
    text = lane_kernel("      %res = rocdl.update.dpp %x, %x with 256, 15, 15, false : i32")
    with pytest.raises(InterpreterError, match="reserved"):
        run_lanes(text, seq(64), np.uint32, check_compile=False)


# ------------------------------------------------------------------ ds_swizzle
def swizzle_src(offset: int, i: int):
    """ds_swizzle_b32 source lane (CDNA4 ISA 12.12 op 61 pseudocode)."""
    if offset >= 0xE000:
        mask = offset & 0x1F
        j = int(f"{i & 0x1F:05b}"[::-1], 2) >> bin(mask).count("1")
        return j | (i & mask) | (i & 0x20)
    if offset >= 0xC000:
        rot = (offset >> 5) & 0x1F
        mask = offset & 0x1F
        rot = -rot if offset & 0x400 else rot
        return (((i & mask) | ((i + rot) & ~mask)) & 0x1F) | (i & 0x20)
    if offset & 0x8000:
        return (i & ~3) + ((offset >> (2 * (i & 3))) & 3)
    and_m, or_m, xor_m = offset & 0x1F, (offset >> 5) & 0x1F, (offset >> 10) & 0x1F
    return ((((i & 0x1F) & and_m) | or_m) ^ xor_m) | (i & 0x20)


def _bitmask(and_m, or_m, xor_m):
    return and_m | (or_m << 5) | (xor_m << 10)


SWIZZLES = [
    _bitmask(0x1F, 0, 0x10), _bitmask(0x1F, 0, 0x01), _bitmask(0x1F, 0, 0x1F), _bitmask(0x00, 0x07, 0),
    _bitmask(0x18, 0x03, 0), _bitmask(0x15, 0x0A, 0x06),  # SWAP16, SWAP1, REVERSE32, BCAST32 lane 7, ...
    0x8000 | 0b00011011, 0x8000 | 0b11100100, 0x8000 | 0b01010101,  # quad perms
    0xC000 | (1 << 5), 0xC000 | 0x400 | (3 << 5), 0xC000 | (5 << 5) | 0x03, 0xC000 | 0x400 | (16 << 5) | 0x10,  # rotates
    0xE000, 0xE000 | 0x1F, 0xE000 | 0x05, 0xE000 | 0x10,  # FFT
]


def test_ds_swizzle_all_modes():
    body = [f"""      %z{i} = arith.constant {o} : i32
      %res{i} = rocdl.ds_swizzle %x, %z{i} : (i32, i32) -> i32""" for i, o in enumerate(SWIZZLES)]
    text = multi_kernel("\n".join(body), len(SWIZZLES), 128)
    x = seq(128, seed=5)
    got = run_lanes(text, x, np.uint32, block=128, out_shape=128 * len(SWIZZLES)).reshape(len(SWIZZLES), 128)
    for k, o in enumerate(SWIZZLES):
        exp = np.array([x[(g // 64) * 64 + swizzle_src(o, g % 64)] for g in range(128)])
        np.testing.assert_array_equal(got[k], exp, err_msg=f"offset {o:#x}")


def test_ds_swizzle_isa_examples():
    # FFT mask 0 on inputs 1..0x20: {1, 0x11, 9, 0x19, 5, 0x15, 0xd, 0x1d, ...} (ISA example)
    x = np.arange(1, 65, dtype=np.uint32)
    text = lane_kernel("""      %z = arith.constant 57344 : i32
      %res = rocdl.ds_swizzle %x, %z : (i32, i32) -> i32""")
    got = run_lanes(text, x, np.uint32)
    assert list(got[:8]) == [1, 0x11, 9, 0x19, 5, 0x15, 0xD, 0x1D]
    # rotate left by 1: lane 31 reads lane 0 (the rotation wraps inside 32 lanes)
    text = lane_kernel("""      %z = arith.constant 49184 : i32
      %res = rocdl.ds_swizzle %x, %z : (i32, i32) -> i32""")
    got = run_lanes(text, x, np.uint32)
    assert got[0] == 2 and got[31] == 1 and got[32] == 34 and got[63] == 33


def test_ds_swizzle_inactive_source_reads_zero():
    text = lane_kernel(_divergent("""        %z = arith.constant 1055 : i32
        %r = rocdl.ds_swizzle %x, %z : (i32, i32) -> i32"""))  # SWAP1: odd lanes read even lanes
    got = run_lanes(text, seq(64), np.uint32)
    assert not got.any()


def test_ds_swizzle_needs_uniform_offset():
    text = lane_kernel("      %res = rocdl.ds_swizzle %x, %t : (i32, i32) -> i32")
    with pytest.raises(InterpreterError, match="same in every lane"):
        run_lanes(text, seq(64), np.uint32, check_compile=False)


# ------------------------------------------------------------------ ds_bpermute
def test_ds_bpermute_pulls_by_byte_address():
    rng = np.random.default_rng(7)
    perm = np.concatenate([rng.permutation(64), rng.permutation(64)])
    addr = (perm * 4 + rng.integers(0, 4, 128) + 256 * rng.integers(0, 1000, 128)).astype(np.uint32)  # low bits, wrap
    vals = seq(128, seed=8)
    data = np.stack([addr, vals], axis=1).ravel()
    text = lane_kernel("""      %c1 = arith.constant 1 : i32
      %two = arith.constant 2 : i32
      %ia = arith.muli %t, %two : i32
      %iv = arith.addi %ia, %c1 : i32
      %pa = llvm.getelementptr %in[%ia] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      %pv = llvm.getelementptr %in[%iv] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      %a = llvm.load %pa : !llvm.ptr<1> -> i32
      %v = llvm.load %pv : !llvm.ptr<1> -> i32
      %res = rocdl.ds_bpermute %a, %v : (i32, i32) -> i32""")
    got = run_lanes(text, data, np.uint32, block=128, out_shape=128)
    exp = np.array([vals[(g // 64) * 64 + (int(addr[g]) // 4) % 64] for g in range(128)])
    np.testing.assert_array_equal(got, exp)


def test_ds_bpermute_isa_example_and_inactive_source():
    # ISA 4-lane example: ADDR = {0, 0, 12, 4} -> {A, A, D, B}
    addr = np.zeros(64, np.uint32)
    addr[:4] = [0, 0, 12, 4]
    vals = np.arange(10, 74, dtype=np.uint32)
    text = lane_kernel("""      %sixty4 = arith.constant 64 : i32
      %i2 = arith.addi %t, %sixty4 : i32
      %p2 = llvm.getelementptr %in[%i2] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      %v = llvm.load %p2 : !llvm.ptr<1> -> i32
      %res = rocdl.ds_bpermute %x, %v : (i32, i32) -> i32""")
    got = run_lanes(text, np.concatenate([addr, vals]), np.uint32, out_shape=64)
    assert list(got[:4]) == [10, 10, 13, 11]
    # odd lanes active, each reads lane t-1 (even, inactive) -> 0; reading an active lane works
    text = lane_kernel(_divergent("""        %c4 = arith.constant 4 : i32
        %m1 = arith.subi %t, %c1 : i32
        %a = arith.muli %m1, %c4 : i32
        %bad = rocdl.ds_bpermute %a, %x : (i32, i32) -> i32
        %a2 = arith.muli %t, %c4 : i32
        %good = rocdl.ds_bpermute %a2, %x : (i32, i32) -> i32
        %r = arith.addi %bad, %good : i32"""))
    x = seq(64, seed=9)
    got = run_lanes(text, x, np.uint32)
    np.testing.assert_array_equal(got, np.where(np.arange(64) % 2 == 1, x, 0))


# ------------------------------------------------------------------ permlane swaps (gfx950)
def permlane_swap_expect(vdst, src0, half):
    """ISA pseudocode: permlane16: for pass in 0..1, lane in 0..15: swap(src0[pass*32+lane],
    vdst[pass*32+lane+16]); permlane32: for lane in 0..31: swap(src0[lane], vdst[lane+32])."""
    v, s = vdst.copy(), src0.copy()
    for w0 in range(0, v.size, 64):
        pairs = [(w0 + p * 32 + l, w0 + p * 32 + l + 16) for p in range(2) for l in range(16)] if half == 16 else \
            [(w0 + l, w0 + l + 32) for l in range(32)]
        for a, b in pairs:
            s[a], v[b] = v[b], s[a]
    return v, s


@pytest.mark.parametrize("half", [16, 32])
def test_permlane_swap(half):
    text = multi_kernel(f"""      %k = arith.constant 1000 : i32
      %y = arith.addi %x, %k : i32
      %sw = rocdl.permlane{half}.swap %x, %y, false, false : (i32, i32) -> !llvm.struct<(i32, i32)>
      %res0 = llvm.extractvalue %sw[0] : !llvm.struct<(i32, i32)>
      %res1 = llvm.extractvalue %sw[1] : !llvm.struct<(i32, i32)>""", 2, 128)
    x = seq(128, seed=half)
    got = run_lanes(text, x, np.uint32, arch="gfx950", block=128, out_shape=256).reshape(2, 128)
    v, s = permlane_swap_expect(x, x + 1000, half)
    np.testing.assert_array_equal(got[0], v)
    np.testing.assert_array_equal(got[1], s)


def test_permlane_swap_is_gfx950_only():
    text = multi_kernel("""      %sw = rocdl.permlane32.swap %x, %x, false, false : (i32, i32) -> !llvm.struct<(i32, i32)>
      %res0 = llvm.extractvalue %sw[0] : !llvm.struct<(i32, i32)>""", 1, 64)
    with pytest.raises(InterpreterError, match="gfx950"):
        run_kernel(text, "k", [seq(64), np.zeros(64, np.uint32)], block=64, arch="gfx942")


# ------------------------------------------------------------------ readlane / readfirstlane / mbcnt / ballot
def test_readlane_readfirstlane_mbcnt_ballot():
    text = multi_kernel("""      %c5 = arith.constant 5 : i32
      %res0 = rocdl.readlane %x, %c5 : (i32, i32) -> i32
      %res1 = rocdl.readfirstlane %x : i32
      %m1 = arith.constant -1 : i32
      %c0 = arith.constant 0 : i32
      %lo = rocdl.mbcnt.lo %m1, %c0 : (i32, i32) -> i32
      %res2 = rocdl.mbcnt.hi %m1, %lo : (i32, i32) -> i32
      %mask = arith.constant 1431655765 : i32
      %lo2 = rocdl.mbcnt.lo %mask, %c0 : (i32, i32) -> i32
      %res3 = rocdl.mbcnt.hi %mask, %lo2 : (i32, i32) -> i32
      %c3 = arith.constant 3 : i32
      %b = arith.andi %t, %c3 : i32
      %p = arith.cmpi eq, %b, %c0 : i32
      %bal = rocdl.ballot %p : i64
      %res4 = arith.trunci %bal : i64 to i32
      %c32 = arith.constant 32 : i64
      %bh = arith.shrui %bal, %c32 : i64
      %res5 = arith.trunci %bh : i64 to i32""", 6, 128)
    x = seq(128, seed=11)
    got = run_lanes(text, x, np.uint32, block=128, out_shape=6 * 128).reshape(6, 128)
    lane = np.arange(128) % 64
    wave0 = np.arange(128) // 64 * 64
    np.testing.assert_array_equal(got[0], x[wave0 + 5])
    np.testing.assert_array_equal(got[1], x[wave0])
    np.testing.assert_array_equal(got[2], lane)
    exp3 = [bin(0x55555555 & ((1 << min(l, 32)) - 1)).count("1") + bin(0x55555555 & ((1 << max(l - 32, 0)) - 1)).count("1")
            for l in lane]
    np.testing.assert_array_equal(got[3], exp3)
    assert (got[4] == 0x11111111).all() and (got[5] == 0x11111111).all()


@pytest.mark.parametrize("and_exec", [False, True])
def test_mbcnt_under_divergence(and_exec):
    text = lane_kernel(_divergent("""        %m1 = arith.constant -1 : i32
        %lo = rocdl.mbcnt.lo %m1, %c0 : (i32, i32) -> i32
        %r = rocdl.mbcnt.hi %m1, %lo : (i32, i32) -> i32"""))
    got = run_lanes(text, seq(64), np.uint32, options=InterpOptions(mbcnt_and_exec=and_exec))
    lane = np.arange(64)
    exp = lane // 2 if and_exec else lane  # counting only the active (odd) lanes below, or all lanes below
    np.testing.assert_array_equal(got, np.where(lane % 2 == 1, exp, 0))


def test_readfirstlane_under_divergence_picks_lowest_active_lane():
    text = lane_kernel(_divergent("        %r = rocdl.readfirstlane %x : i32"))
    x = seq(64, seed=12)
    got = run_lanes(text, x, np.uint32)
    np.testing.assert_array_equal(got, np.where(np.arange(64) % 2 == 1, x[1], 0))


# ------------------------------------------------------------------ v_perm_b32 / v_alignbyte_b32
def perm_expect(s0: int, s1: int, sel: int) -> int:
    """v_perm_b32 (CDNA4 ISA pseudocode, docs/amd_facts.md 2.6)."""
    inb = [(s1 >> (8 * k)) & 0xFF for k in range(4)] + [(s0 >> (8 * k)) & 0xFF for k in range(4)]
    out = 0
    for i in range(4):
        b = (sel >> (8 * i)) & 0xFF
        if b <= 7:
            v = inb[b]
        elif b <= 11:
            v = 0xFF if inb[[1, 3, 5, 7][b - 8]] & 0x80 else 0
        elif b == 12:
            v = 0
        else:
            v = 0xFF
        out |= v << (8 * i)
    return out


def test_perm_and_alignbyte_intrinsics():
    rng = np.random.default_rng(13)
    s0 = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    s1 = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    sel_bytes = rng.integers(0, 16, (64, 4))
    sel_bytes[:8] = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 255], [7, 0, 12, 8], [3, 3, 3, 3],
                     [9, 11, 1, 5], [200, 12, 6, 2]]
    sel = (sel_bytes[:, 0] | sel_bytes[:, 1] << 8 | sel_bytes[:, 2] << 16 | sel_bytes[:, 3] << 24).astype(np.uint32)
    data = np.stack([s0, s1, sel], axis=1).ravel()
    text = multi_kernel("""      %c3 = arith.constant 3 : i32
      %c1 = arith.constant 1 : i32
      %c2 = arith.constant 2 : i32
      %b = arith.muli %t, %c3 : i32
      %b1 = arith.addi %b, %c1 : i32
      %b2 = arith.addi %b, %c2 : i32
      %q0 = llvm.getelementptr %in[%b] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      %q1 = llvm.getelementptr %in[%b1] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      %q2 = llvm.getelementptr %in[%b2] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      %s0 = llvm.load %q0 : !llvm.ptr<1> -> i32
      %s1 = llvm.load %q1 : !llvm.ptr<1> -> i32
      %sel = llvm.load %q2 : !llvm.ptr<1> -> i32
      %res0 = llvm.call_intrinsic "llvm.amdgcn.perm"(%s0, %s1, %sel) : (i32, i32, i32) -> i32
      %res1 = llvm.call_intrinsic "llvm.amdgcn.alignbyte"(%s0, %s1, %sel) : (i32, i32, i32) -> i32""", 2, 64)
    isa = compiles(text)
    assert "v_perm_b32" in isa and "v_alignbyte_b32" in isa
    got = run_lanes(text, data, np.uint32, check_compile=False, out_shape=128).reshape(2, 64)
    np.testing.assert_array_equal(got[0], [perm_expect(int(a), int(b), int(c)) for a, b, c in zip(s0, s1, sel)])
    exp = [((int(a) << 32 | int(b)) >> (8 * (int(c) & 3))) & 0xFFFFFFFF for a, b, c in zip(s0, s1, sel)]
    np.testing.assert_array_equal(got[1], exp)


def test_ds_swizzle_any_offset_property():
    # the offset comes from memory (uniform) so one parsed kernel serves every offset; this text
    # is interpreter-only (the hardware offset is an immediate)
    from hypothesis import given, settings
    from hypothesis import strategies as st

    text = lane_kernel("""      %c64 = arith.constant 64 : i32
      %po = llvm.getelementptr %in[%c64] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      %off = llvm.load %po : !llvm.ptr<1> -> i32
      %res = rocdl.ds_swizzle %x, %off : (i32, i32) -> i32""")
    x = seq(64, seed=15)

    @settings(max_examples=150, deadline=None)
    @given(st.integers(0, 0xFFFF))
    def check(offset):
        got = run_kernel(text, "k", [np.concatenate([x, [offset]]).astype(np.uint32), np.zeros(64, np.uint32)], block=64)[1]
        np.testing.assert_array_equal(got, x[[swizzle_src(offset, i) for i in range(64)]])

    check()


# ------------------------------------------------------------------ wave32 targets: what does not exist there
_DPP8 = '%res = llvm.call_intrinsic "llvm.amdgcn.mov.dpp8.i32"(%x, %s) : (i32, i32) -> i32'


@pytest.mark.parametrize("arch, body, message", [
    ("gfx1250", """      %sw = rocdl.permlane32.swap %x, %x, false, false : (i32, i32) -> !llvm.struct<(i32, i32)>
      %res = llvm.extractvalue %sw[0] : !llvm.struct<(i32, i32)>""", "64-lane wave"),
    ("gfx1100", "      %res = rocdl.update.dpp %x, %x with 304, 15, 15, false : i32", "reserved on RDNA"),  # wave_shl:1
    ("gfx1100", "      %s = arith.constant 57344 : i32\n      %res = rocdl.ds_swizzle %x, %s : (i32, i32) -> i32",
     "fft mode"),
    ("gfx1200", "      rocdl.s.waitcnt 64519\n      %res = arith.addi %x, %x : i32", "no s_waitcnt"),
    ("gfx1100", "      rocdl.s.wait.dscnt 0\n      %res = arith.addi %x, %x : i32", "from gfx12 on"),
    ("gfx942", f"      %s = arith.constant 0 : i32\n      {_DPP8}", "RDNA"),
    ("gfx1100", """      %b = arith.constant true
      %m = rocdl.ballot %b : i64
      %res = arith.trunci %m : i64 to i32""", "is i32"),
    ("gfx1100", """      %m = arith.constant 5 : i64
      %c = llvm.call_intrinsic "llvm.amdgcn.inverse.ballot.i64"(%m) : (i64) -> i1
      %res = arith.extui %c : i1 to i32""", "is i32"),
])
def test_wave32_refusals_name_the_instruction(arch, body, message):
    with pytest.raises(InterpreterError, match=message):
        run_kernel(lane_kernel(body), "k", [seq(64), np.zeros(64, np.uint32)], block=64, arch=arch)


def test_wave32_lane_moves_under_a_partial_exec_mask_are_refused():
    text = lane_kernel(f"      %s = arith.constant 0 : i32\n      {_DPP8}")
    with pytest.raises(InterpreterError, match="partial EXEC"):  # 48 threads: the second wave has 16 lanes
        run_kernel(text, "k", [seq(48), np.zeros(48, np.uint32)], block=48, arch="gfx1100")


def test_wave32_ballot():
    """A ballot of 32-lane waves is an i32 per wave."""
    text = lane_kernel("""      %one = arith.constant 1 : i32
      %bit = arith.andi %x, %one : i32
      %p = arith.trunci %bit : i32 to i1
      %res = rocdl.ballot %p : i32""")
    x = seq(64, seed=3)
    got = run_lanes(text, x, np.uint32, arch="gfx1100", block=64).reshape(2, 32)
    want = [sum(int(v & 1) << l for l, v in enumerate(wave)) for wave in x.reshape(2, 32)]
    np.testing.assert_array_equal(got, np.repeat(np.array(want, np.uint32)[:, None], 32, axis=1))
