"""The hardware atoms a kernel is built from, as MLIR ops: thread ids, buffer resources and
raw buffer loads/stores, global loads/stores, LDS allocation and accesses, MFMA, region markers.

Every function appends ops to a :class:`~lowering.emit.builder.Builder` and returns the SSA
name of the result (facts from shared/reference/amd_hw.md sections 2.8, 3 and 4).

Buffers (amd_hw.md 4).  A raw buffer resource (stride 0) bounds every access: a dword
component at byte offset ``voffset + inst_offset >= num_records`` reads 0 and is not
written (4.3), so a ragged tile needs no branch: give the lanes outside the tensor the
offset :data:`BUFFER_OOB_OFFSET`.  :data:`BUFFER_FLAGS_GFX9` is the descriptor's word 3.

MFMA (amd_hw.md 3 and the catalog :mod:`linlayout.hw.mfma`).  :func:`mfma_operand_types`
gives the LLVM types of A, B and C of a catalogued instruction (the packed items of one
lane: 16-bit items as ``vector<K x f16>``/``vector<K x i16>`` (bf16 of the ``.1k`` forms),
8-bit items packed in i32/i64/``vector<4xi32>``, F8F6F4 operands as ``vector<8|6|4 x i32>``).
"""

from __future__ import annotations

from linlayout import LayoutError
from linlayout.hw.mfma import MfmaInstruction
from lowering.isa import marker_ops

from .builder import Builder, vector_type

__all__ = [
    "BUFFER_FLAGS_GFX9", "BUFFER_OOB_OFFSET", "BLGP_NAMES", "F8F6F4_FORMAT_NAMES", "thread_ids",
    "buffer_rsrc", "buffer_load", "buffer_store", "global_load", "global_store", "lds_global",
    "lds_base", "lds_pointer", "lds_load", "lds_store", "mfma", "mfma_operand_types", "region_marker",
    "wait_all",
]

# [I] Descriptor word 3 for raw buffers on gfx9: num_format 7 (float), data_format 4 (32),
# the value Triton and IREE emit (amd_hw.md 4.1); CK uses 0x00020000.  Only the data-format
# field matters to the untyped buffer_load/store_dword* instructions used here.
BUFFER_FLAGS_GFX9 = 0x00027000
# A voffset no tensor reaches: every component at or above num_records is out of range.
BUFFER_OOB_OFFSET = 0x80000000
# BLGP modifier values 0..7 as the ROCDL dialect spells them (amd_hw.md 3.5).
BLGP_NAMES = ("none", "bcast_first_32", "bcast_second_32", "rotate_16_right", "bcast_first_16",
              "bcast_second_16", "bcast_third_16", "bcast_fourth_16")
# F8F6F4 operand formats (catalog name -> ROCDL enum), CBSZ/BLGP codes 0..4.
F8F6F4_FORMAT_NAMES = {"fp8": "fp8_e4m3", "bf8": "fp8_e5m2", "fp6": "fp6_e2m3", "bf6": "fp6_e3m2",
                       "fp4": "fp4_e2m1"}


# ---------------------------------------------------------------------- ids and regions
def thread_ids(b: Builder, wave_size: int = 64) -> tuple[str, str, str, str]:
    """``(tid: index, tid: i32, lane: i32, warp: i32)``; ``warp`` is made wave-uniform.

    The workgroup is one-dimensional (x); lane = tid % wave_size, warp = tid / wave_size
    read through ``v_readfirstlane`` so the compiler keeps it in a scalar register.
    """
    tid = b.value("gpu.thread_id x", "tid")
    t32 = b.cast("arith.index_cast", tid, "index", "i32")
    lane = b.arith("andi", t32, b.const(wave_size - 1))
    w = b.arith("shrui", t32, b.const(wave_size.bit_length() - 1))
    warp = b.value(f"rocdl.readfirstlane {w} : i32", "warp")
    return tid, t32, lane, warp


def region_marker(b: Builder, tag: str, which: str) -> None:
    """The zero-cost ``; linlayout-<which> <tag>`` marker (lowering.isa.marker_ops)."""
    b.lines_(marker_ops(tag, which))


def wait_all(b: Builder) -> None:
    """``s_waitcnt`` on every counter (vmcnt, expcnt, lgkmcnt = 0): earlier loads are done."""
    b.line("rocdl.s.waitcnt 0")


# ---------------------------------------------------------------------- buffers
def buffer_rsrc(b: Builder, ptr: str, num_records: int, flags: int = BUFFER_FLAGS_GFX9) -> str:
    """A raw buffer resource over ``num_records`` bytes at the global pointer ``ptr``."""
    if not 0 <= num_records < 1 << 32:
        raise LayoutError(f"buffer num_records {num_records} does not fit the 32-bit field")
    return b.value(
        f"rocdl.make.buffer.rsrc {ptr}, {b.const(0, 'i16')}, {b.const(num_records, 'i64')}, "
        f"{b.const(flags)} : !llvm.ptr<1> to !llvm.ptr<8>", "rsrc")


def buffer_load(b: Builder, rsrc: str, voffset: str, type_: str) -> str:
    """``buffer_load_*``: ``type_`` at byte ``voffset`` (0 where out of range)."""
    return b.value(f"rocdl.raw.ptr.buffer.load {rsrc}, {voffset}, {b.const(0)}, 0 : {type_}", "bld")


def buffer_store(b: Builder, value: str, rsrc: str, voffset: str, type_: str) -> None:
    """``buffer_store_*``: ``value`` at byte ``voffset`` (dropped where out of range)."""
    b.line(f"rocdl.raw.ptr.buffer.store {value}, {rsrc}, {voffset}, {b.const(0)}, 0 : {type_}")


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

    ``cbsz/abid/blgp`` are the broadcast modifiers (amd_hw.md 3.5; f64 instructions take
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
