"""LLVM-dialect value ops: undef/poison/zero, struct fields, pointer casts, symbol addresses,
and the VALU byte intrinsics called through ``llvm.call_intrinsic`` (and ``llvm.amdgcn.softwqm``, a copy;
``llvm.ctpop.i32``, the number of set bits).

``llvm.amdgcn.perm`` is ``v_perm_b32 D, S0, S1, S2`` (docs/amd_facts.md 2.6): the 8 input bytes are
S1 bytes 0..3 then S0 bytes 0..3; result byte i is chosen by selector byte ``S2.byte[i]``:
0..7 that input byte, 8..11 0xFF if the sign bit of input byte 1/3/5/7 is set else 0,
12 -> 0x00, 13..255 -> 0xFF.  ``llvm.amdgcn.alignbyte`` is ``v_alignbyte_b32``:
``({S0, S1} >> 8*(S2 & 3)) & 0xFFFFFFFF`` with S0 the high dword.
"""

from __future__ import annotations

import numpy as np

from .options import InterpOptions
from .registry import INTRINSICS, OpInfo, register, register_intrinsic
from .types import FloatT, IntT, PtrT, StructT, elem_of, normalize, shape_of, storage_dtype

#: Byte pattern of undefined integers/pointers under ``undef_fill="pattern"``.
UNDEF_BYTE = 0xA5


def undef_value(t, opts: InterpOptions):
    """The value ``llvm.mlir.undef``/``poison``/``ub.poison`` of type ``t`` stands for."""
    if isinstance(t, StructT):
        return tuple(undef_value(f, opts) for f in t.fields)
    e = elem_of(t)
    shape = (1,) + shape_of(t)
    if opts.undef_fill == "zero":
        return np.zeros(shape, storage_dtype(t))
    if isinstance(e, FloatT):
        return normalize(np.full(shape, np.nan), t)
    bits = e.bits if isinstance(e, IntT) else 64
    pattern = int.from_bytes(bytes([UNDEF_BYTE]) * 8, "little") & ((1 << bits) - 1)
    return np.full(shape, pattern, storage_dtype(t))


def zero_value(t):
    if isinstance(t, StructT):
        return tuple(zero_value(f) for f in t.fields)
    return np.zeros((1,) + shape_of(t), storage_dtype(t))


@register("llvm.mlir.undef", "llvm.mlir.poison", "ub.poison")
def _undef(op: OpInfo):
    t = op.result_types[0]
    r = op.results[0]

    def step(ctx):
        ctx.vals[r] = undef_value(t, ctx.opts)

    return step


@register("llvm.mlir.zero")
def _zero(op: OpInfo):
    val = zero_value(op.result_types[0])
    r = op.results[0]

    def step(ctx):
        ctx.vals[r] = val

    return step


def _field_path(op: OpInfo, t, position: list) -> list:
    path = []
    for p in position:
        if isinstance(t, StructT):
            if not 0 <= p < len(t.fields):
                raise op.error(f"struct position {p} out of range for {t}")
            path.append(p)
            t = t.fields[p]
        else:
            raise op.error(f"extractvalue/insertvalue into {t} is not supported (structs only)")
    return path


@register("llvm.extractvalue")
def _extractvalue(op: OpInfo):
    path = _field_path(op, op.operand_types[0], op.ints_attr("position"))
    src, r = op.operands[0], op.results[0]

    def step(ctx):
        x = ctx.vals[src]
        for p in path:
            x = x[p]
        ctx.vals[r] = x

    return step


@register("llvm.insertvalue")
def _insertvalue(op: OpInfo):
    dest, val = op.operands[0], op.operands[1]
    path = _field_path(op, op.operand_types[0], op.ints_attr("position"))
    r = op.results[0]

    def put(agg, k, v):
        if k == len(path):
            return v
        lst = list(agg)
        lst[path[k]] = put(agg[path[k]], k + 1, v)
        return tuple(lst)

    def step(ctx):
        ctx.vals[r] = put(ctx.vals[dest], 0, ctx.vals[val])

    return step


def _ptr_bits(t: PtrT) -> int:
    return 32 if t.space in (3, 5) else 64


@register("llvm.ptrtoint", "llvm.inttoptr")
def _ptr_cast(op: OpInfo):
    src_t, dst_t = op.operand_types[0], op.result_types[0]
    ptr_t = src_t if isinstance(src_t, PtrT) else dst_t
    if not isinstance(ptr_t, PtrT) or isinstance(elem_of(src_t), FloatT):
        raise op.error(f"unsupported cast {src_t} -> {dst_t}")
    src_bits = _ptr_bits(src_t) if isinstance(src_t, PtrT) else src_t.bits
    mask = np.uint64((1 << min(src_bits, _ptr_bits(ptr_t), 64)) - 1) if op.name == "llvm.inttoptr" else np.uint64((1 << src_bits) - 1)
    a, r = op.operands[0], op.results[0]

    def step(ctx):
        x = ctx.vals[a].astype(np.uint64) & mask
        ctx.vals[r] = x if isinstance(dst_t, PtrT) else normalize(x, dst_t)

    return step


def symbol_address(op: OpInfo, name: str):
    """A function ctx -> uniform address array of global symbol ``name``."""
    name = name.lstrip("@")
    sym = op.compiler.symbols.get(name)
    if sym is None:
        raise op.error(f"unknown global symbol @{name}")
    kind, where = sym
    if kind == "lds":
        addr = np.array([where], np.uint64)
        return lambda ctx: addr
    return lambda ctx: np.array([ctx.const_bases[where]], np.uint64)


@register("llvm.mlir.addressof")
def _addressof(op: OpInfo):
    t = op.result_types[0]
    get = symbol_address(op, op.str_attr("global_name"))
    sym = op.compiler.symbols.get(op.str_attr("global_name").lstrip("@"))
    if isinstance(t, PtrT) and (t.space == 3) != (sym[0] == "lds"):
        raise op.error(f"address of {op.str_attr('global_name')} taken as {t}")
    r = op.results[0]

    def step(ctx):
        ctx.vals[r] = get(ctx)

    return step


def _perm(s0: np.ndarray, s1: np.ndarray, sel: np.ndarray) -> np.ndarray:
    s0, s1, sel = np.broadcast_arrays(s0.astype(np.uint32), s1.astype(np.uint32), sel.astype(np.uint32))
    inb = np.stack([(s1 >> np.uint32(8 * k)) & np.uint32(0xFF) for k in range(4)]
                   + [(s0 >> np.uint32(8 * k)) & np.uint32(0xFF) for k in range(4)], axis=-1)
    out = np.zeros(s0.shape, np.uint32)
    for i in range(4):
        b = (sel >> np.uint32(8 * i)) & np.uint32(0xFF)
        pick = np.take_along_axis(inb, np.minimum(b, 7).astype(np.int64)[..., None], axis=-1)[..., 0]
        sign = np.zeros_like(b)
        for code, src_byte in ((8, 1), (9, 3), (10, 5), (11, 7)):
            sign = np.where(b == code, np.where(inb[..., src_byte] & 0x80, 0xFF, 0), sign)
        byte = np.where(b <= 7, pick, np.where(b <= 11, sign, np.where(b == 12, 0, 0xFF)))
        out |= byte.astype(np.uint32) << np.uint32(8 * i)
    return out


def _alignbyte(s0: np.ndarray, s1: np.ndarray, s2: np.ndarray) -> np.ndarray:
    wide = (s0.astype(np.uint64) << np.uint64(32)) | s1.astype(np.uint64)
    return ((wide >> ((s2.astype(np.uint64) & np.uint64(3)) * np.uint64(8))) & np.uint64(0xFFFFFFFF)).astype(np.uint32)


_INTRINSICS = {"llvm.amdgcn.perm": _perm, "llvm.amdgcn.alignbyte": _alignbyte}


@register_intrinsic("llvm.amdgcn.softwqm.i32")
def _softwqm(op: OpInfo):
    """``llvm.amdgcn.softwqm``: its operand, unchanged (the value in whole-quad mode where the kernel enters it,
    which the kernels interpreted here never do: a copy)."""
    (src,), r = op.operands, op.results[0]

    def step(ctx):
        ctx.vals[r] = ctx.vals[src]

    return step


@register_intrinsic("llvm.ctpop.i32")
def _ctpop(op: OpInfo):
    """``i32 llvm.ctpop.i32(i32 x)``: the number of set bits of ``x`` (gfx9: ``s_bcnt1_i32_b32`` of a uniform one)."""
    if len(op.operands) != 1 or any(not (isinstance(t, IntT) and t.bits == 32)
                                    for t in op.operand_types + op.result_types):
        raise op.error("llvm.ctpop.i32 takes one i32 and returns i32")
    (x,), r = op.operands, op.results[0]

    def step(ctx):
        ctx.vals[r] = np.bitwise_count(ctx.vals[x]).astype(np.uint32)

    return step


@register("llvm.call_intrinsic")
def _call_intrinsic(op: OpInfo):
    name = op.str_attr("intrin")
    if name in INTRINSICS:  # the handlers registered with register_intrinsic (cross-lane ones: ops_lanes)
        return INTRINSICS[name](op)
    fn = _INTRINSICS.get(name)
    if fn is None:
        supported = ", ".join(sorted(_INTRINSICS) + sorted(INTRINSICS))
        raise op.error(f"intrinsic {name} is not supported (supported: {supported})")
    if len(op.operands) != 3 or any(not (isinstance(t, IntT) and t.bits == 32) for t in op.operand_types + op.result_types):
        raise op.error(f"{name} takes three i32 and returns i32")
    a, b, c = op.operands
    r = op.results[0]

    def step(ctx):
        v = ctx.vals
        v[r] = fn(v[a], v[b], v[c])

    return step
