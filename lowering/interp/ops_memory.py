"""Loads, stores and addresses: ``memref``, ``vector.load``/``store``, ``llvm`` pointers.

Every access is done for the active lanes only (inactive lanes read zeros and write
nothing), goes through the memory of its address space (``memory.py``: global buffers, the
workgroup LDS with its race/uninitialised checks, private allocations) and is checked:

* memref indices must lie inside the memref's shape (an out-of-bounds ``memref.load`` is
  undefined behaviour in MLIR), ``vector.load``/``store`` must stay inside the last dim;
* a pointer access must be aligned as its ``alignment`` attribute (or the type's ABI
  alignment: natural for scalars, the size rounded up to a power of two for vectors) claims.
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from .memory import MemRefValue, PrivateMemory
from .ops_llvm import symbol_address
from .registry import OpInfo, lanes, register, signed
from .types import (
    ArrayT, FloatT, IntT, MemRefT, PtrT, StructT, VectorT, byte_size, from_bytes, normalize, shape_of, to_bytes,
)

__all__ = ["load_bytes", "store_bytes", "check_alignment", "space_of_ptr"]

_LDS_MASK = np.uint64(0xFFFFFFFF)


def space_of_ptr(op: OpInfo, t) -> str:
    if not isinstance(t, PtrT):
        raise op.error(f"{t} is not a pointer")
    if t.space in (0, 1):
        return "global"
    if t.space == 3:
        return "workgroup"
    raise op.error(f"pointers in address space {t.space} cannot be loaded or stored through")


def load_bytes(ctx, space: str, addrs: np.ndarray, nbytes: int, private: Optional[PrivateMemory] = None) -> np.ndarray:
    """``(T, nbytes)`` bytes read by every lane at its address (zeros in inactive lanes)."""
    a = lanes(addrs, ctx.T)
    act = ctx.active()
    if space == "global":
        return ctx.gmem.load(a, nbytes, act)
    if space == "workgroup":
        return ctx.lds.load(a & _LDS_MASK, nbytes, act, ctx.wave, ctx.opts.check_lds_races)
    return private.load(a, nbytes, act)


def store_bytes(ctx, space: str, addrs: np.ndarray, data: np.ndarray, private: Optional[PrivateMemory] = None) -> None:
    """Write ``data`` (``(L, nbytes)``) at each active lane's address."""
    a = lanes(addrs, ctx.T)
    d = lanes(data, ctx.T)
    act = ctx.active()
    if space == "global":
        ctx.gmem.store(a, d, act, ctx.opts.check_store_conflicts)
    elif space == "workgroup":
        ctx.lds.store(a & _LDS_MASK, d, act, ctx.wave, ctx.opts.check_lds_races, ctx.opts.check_store_conflicts)
        ctx.lds_pending = True
    else:
        private.store(a, d, act)


def check_alignment(ctx, op: OpInfo, addrs: np.ndarray, align: int) -> None:
    if align <= 1:
        return
    bad = (addrs % np.uint64(align)) != 0
    if addrs.shape[0] != 1:
        bad = bad & ctx.active()
    if bad.any():
        lane = int(np.flatnonzero(bad)[0])
        raise op.error(f"address {int(addrs[lane]):#x} (lane {lane}) is not {align}-byte aligned as the access claims")


def abi_alignment(t) -> int:
    n = byte_size(t)
    if isinstance(t, VectorT):
        return 1 << max(n - 1, 0).bit_length()
    return max(1, n)


# ------------------------------------------------------------------ memrefs
def _memref_type(op: OpInfo, t) -> MemRefT:
    if not isinstance(t, MemRefT):
        raise op.error(f"{t} is not a supported memref type (ranked, static strides, global/workgroup/private space)")
    if None in t.strides:
        raise op.error(f"{t} has dynamic strides, which are not supported")
    if isinstance(t.elem, (IntT, FloatT)) and t.elem.bits % 8:
        raise op.error(f"memrefs of {t.elem} (not a whole number of bytes) are not supported")
    return t


def _space(mt: MemRefT, mv: MemRefValue) -> str:
    """Where a memref lives: its allocation decides for ``memref.alloca`` (private memory)."""
    return "private" if mv.private is not None else mt.space


def _indexer(op: OpInfo, mt: MemRefT, idx_slots: list, vec_shape: tuple = ()) -> Callable:
    """A function (ctx, memref value) -> byte address of the indexed element (lane axis)."""
    esize = byte_size(mt.elem)
    shape, strides = mt.shape, mt.strides
    if len(idx_slots) != len(shape):
        raise op.error(f"{len(idx_slots)} indices for a rank-{len(shape)} memref")
    tail = (1,) * (len(shape) - len(vec_shape)) + tuple(vec_shape)

    def addr(ctx, mv: MemRefValue) -> np.ndarray:
        off = np.asarray(mv.elem_offset, dtype=np.int64).reshape(-1)
        for k, s in enumerate(idx_slots):
            i = signed(ctx.vals[s], 64)
            if shape[k] is not None:
                bad = (i < 0) | (i + tail[k] > shape[k])
                if (bad if i.shape[0] == 1 else bad & ctx.active()).any():
                    lane = int(np.flatnonzero(bad if i.shape[0] == 1 else bad & ctx.active())[0])
                    raise op.error(
                        f"index {int(i[lane])} (lane {lane}) + extent {tail[k]} is out of bounds for dimension {k} of size {shape[k]}"
                    )
            off = off + i * strides[k]
        return mv.base.astype(np.uint64) + (off * esize).astype(np.uint64)

    return addr


def _access_step(op: OpInfo, is_store: bool, t, locate: Callable, align: int):
    """The step of a load (result ``t``) or store (operand 0 of type ``t``); ``locate(ctx)``
    gives ``(space, addresses, private allocation)``."""
    n = byte_size(t)
    if is_store:
        val = op.operands[0]

        def step(ctx):
            space, a, private = locate(ctx)
            check_alignment(ctx, op, a, align)
            store_bytes(ctx, space, a, to_bytes(ctx.vals[val], t), private)

        return step
    r = op.results[0]

    def step(ctx):
        space, a, private = locate(ctx)
        check_alignment(ctx, op, a, align)
        ctx.vals[r] = from_bytes(load_bytes(ctx, space, a, n, private), t)

    return step


@register("memref.load", "memref.store", "vector.load", "vector.store")
def _memref_access(op: OpInfo):
    is_store = op.name.endswith("store")
    m_i = 1 if is_store else 0
    mt = _memref_type(op, op.operand_types[m_i])
    t = op.operand_types[0] if is_store else op.result_types[0]
    vshape = shape_of(t) if op.name.startswith("vector.") else ()
    if len(vshape) > 1:
        raise op.error(f"{op.name} of the {len(vshape)}-D {t} does not lower in our pipeline; use 1-D vectors")
    if vshape and mt.strides[-1] != 1:
        raise op.error(f"vector access needs a unit innermost stride, {mt} has {mt.strides[-1]}")
    addr = _indexer(op, mt, op.operands[m_i + 1 :], vshape)
    align = op.int_attr("alignment", 0) if op.has_attr("alignment") else byte_size(mt.elem)
    m_slot = op.operands[m_i]

    def locate(ctx):
        mv = ctx.vals[m_slot]
        return _space(mt, mv), addr(ctx, mv), mv.private

    return _access_step(op, is_store, t, locate, align)


@register("memref.alloca")
def _alloca(op: OpInfo):
    mt = _memref_type(op, op.result_types[0])
    if op.operands:
        raise op.error("dynamically sized alloca is not supported")
    if mt.space == "workgroup":
        raise op.error("memref.alloca in workgroup memory is not supported; use a workgroup attribution or memref.global")
    nbytes = byte_size(mt.elem) * int(np.prod(mt.shape, dtype=np.int64))
    r = op.results[0]

    def step(ctx):
        ctx.vals[r] = MemRefValue(MemRefT(mt.shape, mt.elem, "private", mt.strides, mt.offset), np.zeros(1, np.uint64),
                                  mt.offset or 0, PrivateMemory(ctx.T, nbytes))

    return step


@register("memref.get_global")
def _get_global(op: OpInfo):
    mt = _memref_type(op, op.result_types[0])
    name = op.str_attr("name").lstrip("@")
    kind = op.compiler.symbols.get(name, ("?",))[0]
    if (kind == "lds") != (mt.space == "workgroup"):
        raise op.error(f"@{name} is {'LDS' if kind == 'lds' else 'global'} memory but used as {mt}")
    get = symbol_address(op, name)
    r = op.results[0]

    def step(ctx):
        ctx.vals[r] = MemRefValue(mt, get(ctx), mt.offset or 0)

    return step


@register("memref.extract_aligned_pointer_as_index")
def _aligned_pointer(op: OpInfo):
    src, r = op.operands[0], op.results[0]
    t = op.result_types[0]

    def step(ctx):
        ctx.vals[r] = normalize(ctx.vals[src].base.astype(np.uint64), t)

    return step


@register("memref.assume_alignment")
def _assume_alignment(op: OpInfo):
    if not op.results:
        return None
    src, r = op.operands[0], op.results[0]

    def step(ctx):
        ctx.vals[r] = ctx.vals[src]

    return step


# ------------------------------------------------------------------ llvm pointers
_GEP_DYNAMIC = -(2**31)


@register("llvm.getelementptr")
def _gep(op: OpInfo):
    base_t = op.operand_types[0]
    if not isinstance(base_t, PtrT):
        raise op.error(f"getelementptr on {base_t} (vectors of pointers) is not supported")
    raw = op.ints_attr("rawConstantIndices")
    t = op.type_attr("elem_type")
    # one (scale, constant or operand slot) per index
    terms = []
    dyn = iter(zip(op.operands[1:], op.operand_types[1:]))
    cur = t
    for k, c in enumerate(raw):
        if k == 0:
            scale = byte_size(cur)
        elif isinstance(cur, ArrayT):
            cur = cur.elem
            scale = byte_size(cur)
        elif isinstance(cur, VectorT):
            cur = cur.elem
            scale = byte_size(cur)
        else:
            raise op.error(f"getelementptr into {cur} is not supported (arrays, vectors, scalars)")
        if c == _GEP_DYNAMIC:
            slot, it = next(dyn)
            terms.append((scale, slot, it.bits))
        else:
            terms.append((scale, None, c))
    mask = _LDS_MASK if base_t.space in (3, 5) else np.uint64(0xFFFFFFFFFFFFFFFF)
    base, r = op.operands[0], op.results[0]

    def step(ctx):
        off = np.zeros(1, np.int64)
        for scale, slot, c in terms:
            off = off + (signed(ctx.vals[slot], c) if slot is not None else np.int64(c)) * scale
        ctx.vals[r] = (ctx.vals[base].astype(np.uint64) + off.astype(np.uint64)) & mask

    return step


@register("llvm.load", "llvm.store")
def _llvm_access(op: OpInfo):
    is_store = op.name == "llvm.store"
    ptr_i = 1 if is_store else 0
    space = space_of_ptr(op, op.operand_types[ptr_i])
    t = op.operand_types[0] if is_store else op.result_types[0]
    if isinstance(t, (StructT, PtrT)):
        raise op.error(f"loading or storing {t} is not supported")
    align = op.int_attr("alignment", 0) if op.has_attr("alignment") else abi_alignment(t)
    p = op.operands[ptr_i]
    return _access_step(op, is_store, t, lambda ctx: (space, ctx.vals[p], None), align)
