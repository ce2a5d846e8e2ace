"""The hardware atoms a kernel is built from, as MLIR ops: thread ids, buffer resources and
raw buffer loads/stores, global loads/stores, LDS allocation and accesses, MFMA, region markers.

Every function appends ops to a :class:`~linlayout.lowering.emit.builder.Builder` and returns the SSA
name of the result (facts from docs/amd_facts.md sections 2.8, 3 and 4).

Buffers (docs/amd_facts.md 4).  A raw buffer resource (stride 0) bounds every access: a dword
component at byte offset ``voffset + inst_offset >= num_records`` reads 0 and is not
written (4.3), so a ragged tile needs no branch: give the lanes outside the tensor the
offset :data:`BUFFER_OOB_OFFSET`.  :data:`BUFFER_FLAGS_GFX9` is the descriptor's word 3 on CDNA,
:data:`BUFFER_FLAGS_RDNA` on RDNA and gfx1250 (:func:`buffer_flags`).

MFMA (docs/amd_facts.md 3 and the catalog :mod:`linlayout.hw.mfma`).  :func:`mfma_operand_types`
gives the LLVM types of A, B and C of a catalogued instruction (the packed items of one
lane: 16-bit items as ``vector<K x f16>``/``vector<K x i16>`` (bf16 of the ``.1k`` forms),
8-bit items packed in i32/i64/``vector<4xi32>``, F8F6F4 operands as ``vector<8|6|4 x i32>``).
"""

from __future__ import annotations

from linlayout import LayoutError, get_target
from linlayout.hw.mfma import MfmaInstruction
from linlayout.hw.transpose_loads import TransposeLoad
from linlayout.lowering.isa import marker_ops

from .builder import Builder, vector_type

__all__ = [
    "BUFFER_FLAGS_GFX9", "BUFFER_FLAGS_RDNA", "BUFFER_OOB_OFFSET", "buffer_flags", "BLGP_NAMES",
    "F8F6F4_FORMAT_NAMES", "thread_ids", "buffer_rsrc", "buffer_load", "buffer_store", "global_load", "global_store",
    "lds_global", "plan_lds",
    "lds_base", "lds_pointer", "lds_load", "lds_transpose_load", "lds_store", "mfma", "mfma_operand_types", "region_marker",
    "block_id", "dpp_mov", "dpp8_mov", "permlane16", "uniform_word", "ds_swizzle", "ds_bpermute", "permlane_swap", "lds_wait",
    "exp2", "cvt_pk_fp8_f32", "cvt_f32_fp8", "buffer_rsrc_value",
]

# [I] Descriptor word 3 for raw buffers on gfx9: num_format 7 (float), data_format 4 (32),
# the value Triton and IREE emit (docs/amd_facts.md 4.1); CK uses 0x00020000.  Only the data-format
# field matters to the untyped buffer_load/store_dword* instructions used here.
BUFFER_FLAGS_GFX9 = 0x00027000
# [I] Word 3 on RDNA and gfx1250: the same format fields, bit 24 (reserved, must be 1 on RDNA) and
# OOB_SELECT (bits 29:28) = 3, range checking against the offset only, the value Triton emits for
# RDNA (docs/amd_facts.md 4.1).  On gfx12 LLVM rebuilds the descriptor from the pointer form and keeps
# only bits 3:0 of this word (OOB_SELECT 0, "structured", which is the same check for a stride of 0).
BUFFER_FLAGS_RDNA = 0x31027000
# A voffset no tensor reaches: every component at or above num_records is out of range.
BUFFER_OOB_OFFSET = 0x80000000
# BLGP modifier values 0..7 as the ROCDL dialect spells them (docs/amd_facts.md 3.5).
BLGP_NAMES = ("none", "bcast_first_32", "bcast_second_32", "rotate_16_right", "bcast_first_16",
              "bcast_second_16", "bcast_third_16", "bcast_fourth_16")
# F8F6F4 operand formats (catalog name -> ROCDL enum), CBSZ/BLGP codes 0..4.
F8F6F4_FORMAT_NAMES = {"fp8": "fp8_e4m3", "bf8": "fp8_e5m2", "fp6": "fp6_e2m3", "bf6": "fp6_e3m2",
                       "fp4": "fp4_e2m1"}


# ---------------------------------------------------------------------- ids and regions
def thread_ids(b: Builder, wave_size: int = 64, block: tuple[int, int, int] | None = None) -> tuple[str, str, str, str]:
    """``(tid: index, tid: i32, lane: i32, warp: i32)``; ``warp`` is made wave-uniform.

    The workgroup is one-dimensional (x) unless ``block``, its declared sizes, says otherwise: then tid is the
    linear id ``x + bx (y + by z)``, by which the hardware forms its waves.  lane = tid % wave_size, warp =
    tid / wave_size read through ``v_readfirstlane`` so the compiler keeps it in a scalar register.
    """
    tid = b.value("gpu.thread_id x", "tid")
    if block is not None and block[1] * block[2] > 1:
        yz = b.value("gpu.thread_id y", "tid")
        if block[2] > 1:
            yz = b.arith("addi", yz, b.arith("muli", b.value("gpu.thread_id z", "tid"), b.const(block[1], "index"),
                                             "index"), "index")
        tid = b.arith("addi", tid, b.arith("muli", yz, b.const(block[0], "index"), "index"), "index")
    t32 = b.cast("arith.index_cast", tid, "index", "i32")
    lane = b.arith("andi", t32, b.const(wave_size - 1))
    w = b.arith("shrui", t32, b.const(wave_size.bit_length() - 1))
    warp = b.value(f"rocdl.readfirstlane {w} : i32", "warp")
    return tid, t32, lane, warp


def region_marker(b: Builder, tag: str, which: str, pinned: list[tuple[str, str, str]] | None = None,
                  tied: list[str] | None = None) -> list[str]:
    """The zero-cost ``; linlayout-<which> <tag>`` marker (linlayout.lowering.isa.marker_ops).

    ``pinned``: ``(value, type, constraint)`` inputs of the marker's inline asm (``"v"``
    VGPR, ``"s"`` SGPR): the compiler computes them before the marker, so nothing that
    produces them drifts past it.  ``tied``: i32 VGPR values passed *through* the marker
    (outputs tied to inputs, no instruction); code that uses the returned values cannot
    be hoisted above it.  Returns the tied values' new names.
    """
    sched, asm, _ = marker_ops(tag, which)
    prefix = asm[: asm.index(', "" : () -> ()')]
    tied = list(tied or [])
    ins = [(v, "i32", str(k)) for k, v in enumerate(tied)] + list(pinned or [])
    cons = ",".join(["=v"] * len(tied) + [c for _, _, c in ins])
    operands = ", ".join(v for v, _, _ in ins)
    types = ", ".join(t for _, t, _ in ins)
    b.line(sched)
    out: list[str] = []
    if not tied:
        b.line(f'{prefix}, "{cons}" {operands} : ({types}) -> ()' if ins else asm)
    elif len(tied) == 1:
        out = [b.value(f'{prefix}, "{cons}" {operands} : ({types}) -> i32', "pin")]
    else:
        st = f"!llvm.struct<({', '.join(['i32'] * len(tied))})>"
        res = b.value(f'{prefix}, "{cons}" {operands} : ({types}) -> {st}', "pin")
        out = [b.value(f"llvm.extractvalue {res}[{k}] : {st}", "pin") for k in range(len(tied))]
    b.line(sched)
    return out


# ---------------------------------------------------------------------- buffers
def buffer_flags(arch: str) -> int:
    """The raw buffer descriptor's word 3 for ``arch`` (a CDNA or an RDNA/gfx1250 target)."""
    family = get_target(arch).family
    if family == "cdna":
        return BUFFER_FLAGS_GFX9
    if family == "rdna":
        return BUFFER_FLAGS_RDNA
    raise LayoutError(f"no AMD buffer descriptor for {arch} ({family} family)")


def buffer_rsrc(b: Builder, ptr: str, num_records: int, flags: int = BUFFER_FLAGS_GFX9) -> str:
    """A raw buffer resource over ``num_records`` bytes at the global pointer ``ptr``."""
    if not 0 <= num_records < 1 << 32:
        raise LayoutError(f"buffer num_records {num_records} does not fit the 32-bit field")
    return buffer_rsrc_value(b, ptr, b.const(num_records, "i64"), flags)


def buffer_load(b: Builder, rsrc: str, voffset: str, type_: str, soffset: str | None = None) -> str:
    """``buffer_load_*``: ``type_`` at byte ``voffset + soffset`` (0 where ``voffset`` is out of range;
    the uniform ``soffset`` is not part of the range check)."""
    so = soffset if soffset is not None else b.const(0)
    return b.value(f"rocdl.raw.ptr.buffer.load {rsrc}, {voffset}, {so}, 0 : {type_}", "bld")


def buffer_store(b: Builder, value: str, rsrc: str, voffset: str, type_: str, soffset: str | None = None) -> None:
    """``buffer_store_*``: ``value`` at byte ``voffset + soffset`` (dropped where ``voffset`` is out of range)."""
    so = soffset if soffset is not None else b.const(0)
    b.line(f"rocdl.raw.ptr.buffer.store {value}, {rsrc}, {voffset}, {so}, 0 : {type_}")


# ---------------------------------------------------------------------- global memory
def _gep(b: Builder, base: str, byte_offset: str, space: int) -> str:
    return b.value(f"llvm.getelementptr {base}[{byte_offset}] : (!llvm.ptr<{space}>, i32) -> !llvm.ptr<{space}>, i8",
                   "gep")


def global_load(b: Builder, ptr: str, byte_offset: str, type_: str, align: int) -> str:
    """``global_load_*`` of ``type_`` at ``ptr + byte_offset``."""
    p = _gep(b, ptr, byte_offset, 1)
    return b.value(f"llvm.load {p} {{alignment = {align} : i64}} : !llvm.ptr<1> -> {type_}", "gld")


def global_store(b: Builder, value: str, ptr: str, byte_offset: str, type_: str, align: int) -> None:
    """``global_store_*`` of ``value`` at ``ptr + byte_offset``."""
    p = _gep(b, ptr, byte_offset, 1)
    b.line(f"llvm.store {value}, {p} {{alignment = {align} : i64}} : {type_}, !llvm.ptr<1>")


# ---------------------------------------------------------------------- LDS
def lds_global(name: str, nbytes: int, align: int = 16) -> str:
    """The module-level line allocating ``nbytes`` of LDS (address space 3) as ``@name``."""
    if nbytes <= 0:
        raise LayoutError(f"an LDS allocation needs a positive size, got {nbytes}")
    return (f"llvm.mlir.global internal @{name}() {{addr_space = 3 : i32, alignment = {align} : i64}} "
            f": !llvm.array<{nbytes} x i8>")


def lds_base(b: Builder, name: str) -> str:
    """The ``!llvm.ptr<3>`` of the LDS allocation ``@name``."""
    return b.value(f"llvm.mlir.addressof @{name} : !llvm.ptr<3>", "lds")


def plan_lds(b: Builder, name: str, lds_bytes: int) -> tuple[str | None, list[str]]:
    """A conversion plan's LDS: the base of ``@name`` and the module line allocating its ``lds_bytes`` rounded up
    to 16, or ``(None, [])`` for a plan that uses no LDS (``lds_bytes`` 0)."""
    if lds_bytes <= 0:
        return None, []
    return lds_base(b, name), [lds_global(name, -(-lds_bytes // 16) * 16)]


def lds_pointer(b: Builder, base: str, byte_offset: str | int) -> str:
    """``base + byte_offset`` (an i32 value, or a constant folded into the instruction)."""
    if isinstance(byte_offset, int):
        if byte_offset == 0:
            return base
        return b.value(f"llvm.getelementptr {base}[{byte_offset}] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8", "gep")
    return _gep(b, base, byte_offset, 3)


def lds_load(b: Builder, ptr: str, type_: str, align: int) -> str:
    """``ds_read_*`` of ``type_`` (``ds_read_u8/u16`` for i8/i16)."""
    return b.value(f"llvm.load {ptr} {{alignment = {align} : i64}} : !llvm.ptr<3> -> {type_}", "dsr")


def lds_transpose_load(b: Builder, ptr: str, load: TransposeLoad) -> str:
    """The transpose load ``load`` (its ROCDL op: gfx950's ``rocdl.ds.read.tr{bits}.b64``, gfx1250's
    ``rocdl.ds.load.tr16.b128`` / ``rocdl.ds.load.tr8.b64``) as a vector of its dwords (``vector<2xi32>``,
    ``vector<4xi32>``); 16-bit elements come as ``i16`` items, 8-bit ones as dwords."""
    dwords = load.bytes_per_lane // 4
    words = vector_type(dwords, "i32")
    t = vector_type(load.elements, "i16") if load.element_bits == 16 else words
    v = b.value(f"{load.rocdl} {ptr} : !llvm.ptr<3> -> {t}", "dstr")
    return v if t == words else b.cast("llvm.bitcast", v, t, words)


def lds_store(b: Builder, value: str, ptr: str, type_: str, align: int) -> None:
    """``ds_write_*`` of ``value`` (a ``ds_write_b16_d16_hi`` when it is the upper half of a dword)."""
    b.line(f"llvm.store {value}, {ptr} {{alignment = {align} : i64}} : {type_}, !llvm.ptr<3>")


# ---------------------------------------------------------------------- MFMA
def _packed_type(items: int, bits: int, kind: str) -> str:
    """The LLVM type of ``items`` packed ``bits``-bit items of one operand."""
    if kind == "float":
        elem = {16: "f16", 32: "f32", 64: "f64"}[bits]
        return vector_type(items, elem)
    if kind == "bf16":
        return vector_type(items, "bf16")
    if kind == "i16":
        return vector_type(items, "i16")
    total = items * bits  # packed integer bits
    if total in (32, 64):
        return f"i{total}"
    if total % 32:
        raise LayoutError(f"{items} items of {bits} bits do not fill whole registers")
    return vector_type(total // 32, "i32")


def _operand_type(ins: MfmaInstruction, operand: str, fmt: str) -> str:
    items = ins.items_per_lane(operand)
    if operand == "C":
        elem = {"f32": "f32", "i32": "i32", "f64": "f64"}[ins.c_type]
        return vector_type(items, elem)
    if ins.is_f8f6f4:
        bits = {"fp8": 8, "bf8": 8, "fp6": 6, "bf6": 6, "fp4": 4}[fmt]
        return vector_type(items * bits // 32, "i32")
    if fmt in ("f32", "f64"):
        return vector_type(items, fmt)
    if fmt == "xf32":
        return vector_type(items, "f32")
    if fmt == "f16":
        return _packed_type(items, 16, "float")
    if fmt == "bf16":  # the .1k forms take i16 vectors, gfx950's ``...x32.bf16`` ones bf16 vectors
        return _packed_type(items, 16, "bf16" if ins.intrinsic.endswith(".bf16") else "i16")
    if fmt in ("i8", "fp8", "bf8"):
        return _packed_type(items, 8, "int")
    raise LayoutError(f"{ins.name}: operand type {fmt!r} has no LLVM form here")


def mfma_operand_types(ins: MfmaInstruction) -> tuple[str, str, str]:
    """The LLVM types of the A, B and C (= D) operands of ``ins`` (formats as ``ins`` carries them)."""
    return _operand_type(ins, "A", ins.a_type), _operand_type(ins, "B", ins.b_type), _operand_type(ins, "C", ins.c_type)


def mfma(b: Builder, ins: MfmaInstruction, a: str, bb: str, c: str, *, cbsz: int = 0, abid: int = 0,
         blgp: int = 0, scale_a: str | None = None, scale_b: str | None = None, opsel_a: int = 0,
         opsel_b: int = 0) -> str:
    """``D = A * B + C`` with the catalogued instruction ``ins``; returns D.

    ``cbsz/abid/blgp`` are the broadcast modifiers (docs/amd_facts.md 3.5; f64 instructions take
    them as negate bits).  F8F6F4 instructions take their operand formats from ``ins``
    (``with_formats``); the ``v_mfma_scale_*`` ones need the E8M0 scale registers
    ``scale_a/scale_b`` (i32 values, byte ``opsel_a/opsel_b``).  The unscaled F8F6F4 ones
    are the same intrinsic with zero scales, which LLVM selects as the unscaled instruction.
    """
    ta, tb, tc = mfma_operand_types(ins)
    if ins.scaled and (scale_a is None or scale_b is None):
        raise LayoutError(f"{ins.name} needs scale_a and scale_b values (E8M0 scales)")
    if not ins.scaled and (scale_a is not None or scale_b is not None):
        raise LayoutError(f"{ins.name} takes no scales; use the v_mfma_scale_ instruction")
    if ins.is_f8f6f4:
        fa, fb = F8F6F4_FORMAT_NAMES[ins.a_type], F8F6F4_FORMAT_NAMES[ins.b_type]
        sa = scale_a if scale_a is not None else b.const(0)
        sb = scale_b if scale_b is not None else b.const(0)
        return b.value(f"{ins.rocdl} {a}, {bb}, {c}, {fa}, {fb}, {opsel_a}, {sa}, {opsel_b}, {sb} : "
                       f"({ta}, {tb}, {tc}, i32, i32) -> {tc}", "mfma")
    if not 0 <= blgp < len(BLGP_NAMES):
        raise LayoutError(f"blgp {blgp} is not in 0..7")
    return b.value(f"{ins.rocdl} {a}, {bb}, {c}, {int(cbsz)}, {int(abid)}, {BLGP_NAMES[blgp]} : "
                   f"({ta}, {tb}, {tc}) -> {tc}", "mfma")


# ---------------------------------------------------------------------- kernel atoms (added by the kernels engineer)
def block_id(b: Builder, dim: str = "x") -> str:
    """The workgroup id along ``dim`` as a wave-uniform i32."""
    return b.cast("arith.index_cast", b.value(f"gpu.block_id {dim}", "bid"), "index", "i32")


def dpp_mov(b: Builder, src: str, ctrl: int, row_mask: int = 0xF, bank_mask: int = 0xF,
            bound_ctrl: bool = False, old: str | None = None) -> str:
    """``v_mov_b32_dpp``: ``src`` read through DPP control ``ctrl`` (i32); disabled lanes keep ``old``."""
    old = old if old is not None else b.value("llvm.mlir.poison : i32", "poison")
    return b.value(f"rocdl.update.dpp {old}, {src} with {int(ctrl)}, {int(row_mask)}, {int(bank_mask)}, "
                   f"{'true' if bound_ctrl else 'false'} : i32", "dpp")


def dpp8_mov(b: Builder, src: str, selector: int) -> str:
    """RDNA ``v_mov_b32_dpp ... dpp8:[s0,..,s7]`` (lane ``n`` reads lane ``(n & ~7) + s[n & 7]``; ``selector``
    holds ``s_i`` in bits ``3i+2 : 3i``).  The bundled ROCDL dialect has no dpp8 op: the LLVM intrinsic
    ``llvm.amdgcn.mov.dpp8`` (its selector an immediate)."""
    if not 0 <= int(selector) < 1 << 24:
        raise LayoutError(f"dpp8 selector {selector:#x} is not a 24-bit value")
    return b.value(f'llvm.call_intrinsic "llvm.amdgcn.mov.dpp8.i32"({src}, {b.const(int(selector))}) : '
                   "(i32, i32) -> i32", "dpp8")


def permlane16(b: Builder, src: str, selector: int, cross: bool, words: tuple[str, str] | None = None) -> str:
    """RDNA ``v_permlane16_b32`` (``cross``: ``v_permlanex16_b32``) of ``src`` with the 64-bit lane selector
    ``selector`` (its low and high words in the two scalar operands: ``words``, two i32 values that hold
    them, e.g. from :func:`uniform_word` before the region; by default constants), every lane active: the
    instruction's ``old`` operand (its destination register) is never kept, so it is poison (the
    compiler need not copy a live value into the destination), fetch-inactive and bound_ctrl are
    off.  ``rocdl.permlanex16`` for the cross form; the bundled ROCDL dialect has no permlane16 op:
    the LLVM intrinsic ``llvm.amdgcn.permlane16``."""
    if not 0 <= int(selector) < 1 << 64:
        raise LayoutError(f"permlane16 selector {selector:#x} is not a 64-bit value")
    lo, hi = words or (b.const(int(selector) & 0xFFFFFFFF), b.const(int(selector) >> 32))
    old = b.value("llvm.mlir.poison : i32", "poison")
    if cross:
        return b.value(f"rocdl.permlanex16 {old}, {src}, {lo}, {hi}, false, false : i32, i32", "pmx")
    off = b.const(0, "i1")
    return b.value(f'llvm.call_intrinsic "llvm.amdgcn.permlane16.i32"({old}, {src}, {lo}, {hi}, {off}, {off}) : '
                   "(i32, i32, i32, i32, i1, i1) -> i32", "pm")


def uniform_word(b: Builder, value: int) -> str:
    """The i32 constant ``value`` in an SGPR, opaque to the compiler: an empty inline asm (``"=s,0"``, no
    instruction) passes the constant through, so the ``s_mov_b32`` that materialises it stays where this
    op is (a constant operand the compiler rematerialises next to each use, e.g. inside a counted
    region)."""
    c = b.const(int(value) & 0xFFFFFFFF)
    return b.value(f'llvm.inline_asm "", "=s,0" {c} : (i32) -> i32', "sc")


def unseen_word(b: Builder, value: str) -> str:
    """The i32 VGPR ``value`` through ``llvm.amdgcn.softwqm`` ("this value in whole-quad mode if the kernel
    enters it"): in a kernel that never enters whole-quad mode (ours: no derivatives, no image sampling) a plain
    copy, which the register allocator removes (except on gfx942 where two lane-bit sets read one bit: one
    ``v_mov_b32`` stays, tests/test_emit_lane_choices.py), and LLVM does not look through it, so ops on the
    result are selected as written.  Unlike :func:`opaque_word`, it is no inline asm, after which gfx940/gfx950 LLVM waits a
    cycle before the first VALU reader (``Target.waits_after_inline_asm``: an ``s_nop 0`` where nothing else
    fills the slot)."""
    return b.value(f'llvm.call_intrinsic "llvm.amdgcn.softwqm.i32"({value}) : (i32) -> i32', "uw")


def opaque_word(b: Builder, value: str) -> str:
    """The i32 VGPR ``value`` passed through an empty inline asm (``"=v,0"``, no instruction): the
    compiler cannot see how it was computed, so an op on the result is selected as written (an
    ``addi`` of a constant stays one ``v_add_u32``, where LLVM would otherwise merge it into the ops
    that made ``value``, gfx950: a ``v_bitop3_b32`` and an ``s_mov_b32`` of the constant)."""
    return b.value(f'llvm.inline_asm "", "=v,0" {value} : (i32) -> i32', "ow")


#: ``s_waitcnt`` immediates waiting for every LDS access (lgkmcnt = 0, the other counters at their
#: maxima: not waited for), by GFX generation.  gfx9: vmcnt bits 15:14 and 3:0, expcnt 6:4, lgkmcnt
#: 11:8; gfx11: vmcnt 15:10, lgkmcnt 9:4, expcnt 2:0.  gfx12 has no ``s_waitcnt``: ``s_wait_dscnt 0``.
LGKMCNT0_WAITS = {9: 0xC07F, 11: 0xFC07}


def lds_wait(b: Builder, arch: str) -> None:
    """Wait until every LDS access of the wave is done: ``s_waitcnt lgkmcnt(0)`` (gfx9, gfx11) or
    ``s_wait_dscnt 0`` (gfx12, gfx1250)."""
    generation = get_target(arch).gfx_generation
    if generation >= 12:
        b.line("rocdl.s.wait.dscnt 0")
    elif generation in LGKMCNT0_WAITS:
        b.line(f"rocdl.s.waitcnt {LGKMCNT0_WAITS[generation]}")
    else:
        raise LayoutError(f"no LDS wait known for {arch} (GFX generation {generation})")


def ds_swizzle(b: Builder, src: str, offset: int) -> str:
    """``ds_swizzle_b32`` of the i32 ``src`` with the 16-bit pattern ``offset`` (docs/amd_facts.md 2.2)."""
    return b.value(f"rocdl.ds_swizzle {src}, {b.const(int(offset))} : (i32, i32) -> i32", "swz")


def ds_bpermute(b: Builder, byte_addr: str, src: str) -> str:
    """``ds_bpermute_b32``: lane ``l`` receives ``src`` of lane ``byte_addr[l] / 4`` (i32)."""
    return b.value(f"rocdl.ds_bpermute {byte_addr}, {src} : (i32, i32) -> i32", "bperm")


def permlane_swap(b: Builder, kind: str, vdst: str, src0: str) -> tuple[str, str]:
    """gfx950 ``v_permlane16_swap``/``v_permlane32_swap`` (``kind`` ``permlane16_swap`` or
    ``permlane32_swap``) of two i32 values; returns the new ``(vdst, src0)``."""
    if kind not in ("permlane16_swap", "permlane32_swap"):
        raise LayoutError(f"permlane swap kind {kind!r} must be permlane16_swap or permlane32_swap")
    op = "rocdl." + kind.replace("_", ".")
    res = b.value(f"{op} {vdst}, {src0}, false, false : (i32, i32) -> !llvm.struct<(i32, i32)>", "swap")
    return (b.value(f"llvm.extractvalue {res}[0] : !llvm.struct<(i32, i32)>", "sw"),
            b.value(f"llvm.extractvalue {res}[1] : !llvm.struct<(i32, i32)>", "sw"))


def exp2(b: Builder, x: str) -> str:
    """``v_exp_f32``: 2**x of an f32."""
    return b.value(f"rocdl.exp2 {x} f32 -> f32", "exp")


def cvt_pk_fp8_f32(b: Builder, lo: str, hi: str, old: str, high_word: bool) -> str:
    """``v_cvt_pk_fp8_f32``: two f32 to the arch's fp8 (gfx942 E4M3FNUZ, gfx950 E4M3FN), packed
    into the low (``high_word`` False) or high 16 bits of ``old`` (i32); the other half is kept."""
    return b.value(f"rocdl.cvt.pk.fp8.f32 {lo}, {hi} -> {old}[{'true' if high_word else 'false'}] : i32", "fp8")


def cvt_f32_fp8(b: Builder, packed: str, byte: int) -> str:
    """``v_cvt_f32_fp8``: byte ``byte`` (0..3) of the i32 ``packed`` as f32 (the arch's fp8 format)."""
    if not 0 <= int(byte) <= 3:
        raise LayoutError(f"fp8 byte select {byte} is not in 0..3")
    return b.value(f"rocdl.cvt.f32.fp8 {packed}[{int(byte)}] : f32", "f8f")


def buffer_rsrc_value(b: Builder, ptr: str, num_records: str, flags: int = BUFFER_FLAGS_GFX9) -> str:
    """:func:`buffer_rsrc` whose ``num_records`` (bytes) is a run-time i64 value (wave-uniform)."""
    return b.value(f"rocdl.make.buffer.rsrc {ptr}, {b.const(0, 'i16')}, {num_records}, {b.const(flags)} : "
                   "!llvm.ptr<1> to !llvm.ptr<8>", "rsrc")
