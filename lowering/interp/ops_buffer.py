"""Raw buffer resources and buffer loads/stores (docs/amd_facts.md section 4).

``rocdl.make.buffer.rsrc %base, %stride, %num_records, %flags : !llvm.ptr<1> to !llvm.ptr<8>``
builds a V#: base address (48 bits), stride (i16: bits 13:0 stride, 14 cache swizzle, 15
swizzle enable), num_records (32 bits on gfx9) and flags (descriptor word 3).  Only raw
buffers are modelled: stride 0, no swizzle, no add-tid (flags bit 23); anything else raises.

``rocdl.raw.ptr.buffer.load %rsrc, %voffset, %soffset, aux : T`` and
``rocdl.raw.ptr.buffer.store %data, %rsrc, %voffset, %soffset, aux : T`` access
``base + soffset + voffset`` (bytes).  The access is split into components as the hardware
does: dwords for 4/8/12/16-byte types (``buffer_load_dword[x2,x3,x4]``), one component for 1-
and 2-byte types.  A component at byte offset ``o = voffset + 4*c`` is out of range when
``o >= num_records`` (``InterpOptions.buffer_oob_rule="start"``, the ISA text; ``"end"``:
``o + size > num_records``); soffset is not part of the check.  Out-of-range components load
0 and are not stored, per component.  In-range components must fall inside a launch buffer
(anything else would be a memory fault and raises).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .registry import OpInfo, lanes, register, uniform_scalar
from .types import byte_size, from_bytes, to_bytes

#: Word-3 flag bit that makes the buffer add the thread id to the index (not modelled).
ADD_TID_BIT = 23


@dataclass(frozen=True)
class BufferResource:
    base: int
    stride: int
    num_records: int
    flags: int


@register("rocdl.make.buffer.rsrc")
def _make_rsrc(op: OpInfo):
    base_s, stride_s, nrec_s, flags_s = op.operands
    r = op.results[0]

    def step(ctx):
        vals = []
        for s, what in ((base_s, "base"), (stride_s, "stride"), (nrec_s, "num_records"), (flags_s, "flags")):
            u = uniform_scalar(ctx.vals[s], ctx.mask)
            if u is None:
                raise op.error(f"buffer resource {what} differs between lanes (a V# lives in scalar registers)")
            vals.append(int(u))
        base, stride, nrec, flags = vals
        if stride & 0xFFFF:
            raise op.error(f"stride/swizzle field {stride:#x} is not 0: only raw (stride 0, unswizzled) buffers are modelled")
        if (flags >> ADD_TID_BIT) & 1:
            raise op.error("add_tid_enable buffers are not modelled")
        ctx.vals[r] = BufferResource(base & ((1 << 48) - 1), 0, nrec & 0xFFFFFFFF, flags & 0xFFFFFFFF)

    return step


def _components(op: OpInfo, nbytes: int) -> list:
    """(byte offset, size) of the hardware components of an access of ``nbytes`` bytes."""
    if nbytes in (1, 2):
        return [(0, nbytes)]
    if nbytes in (4, 8, 12, 16):
        return [(4 * c, 4) for c in range(nbytes // 4)]
    raise op.error(f"buffer access of {nbytes} bytes has no single buffer instruction (1, 2, 4, 8, 12 or 16)")


def _plan(ctx, op: OpInfo, rsrc, voff: np.ndarray, soff: np.ndarray, comps: list, nbytes: int):
    if not isinstance(rsrc, BufferResource):
        raise op.error("the resource operand is not a buffer resource from rocdl.make.buffer.rsrc")
    v = lanes(voff, ctx.T).astype(np.int64)
    s = lanes(soff, ctx.T).astype(np.int64)
    act = ctx.active()
    if ctx.opts.buffer_require_dword_alignment and nbytes >= 4:
        addr = rsrc.base + s + v
        bad = (addr % 4 != 0) & act
        if bad.any():
            lane = int(np.flatnonzero(bad)[0])
            raise op.error(f"dword buffer access at byte {int(addr[lane]) - rsrc.base} (lane {lane}) is not 4-byte aligned")
    plan = []
    for off, size in comps:
        o = v + off
        oob = (o >= rsrc.num_records) if ctx.opts.buffer_oob_rule == "start" else (o + size > rsrc.num_records)
        addrs = (np.int64(rsrc.base) + s + o).astype(np.uint64)
        plan.append((off, size, act & ~oob, addrs))
    return plan


@register("rocdl.raw.ptr.buffer.load")
def _buffer_load(op: OpInfo):
    t = op.result_types[0]
    n = byte_size(t)
    comps = _components(op, n)
    rs, vo, so = op.operands
    r = op.results[0]

    def step(ctx):
        data = np.zeros((ctx.T, n), np.uint8)
        for off, size, ok, addrs in _plan(ctx, op, ctx.vals[rs], ctx.vals[vo], ctx.vals[so], comps, n):
            data[:, off : off + size] = ctx.gmem.load(addrs, size, ok)
        ctx.vals[r] = from_bytes(data, t)

    return step


@register("rocdl.raw.ptr.buffer.store")
def _buffer_store(op: OpInfo):
    t = op.operand_types[0]
    n = byte_size(t)
    comps = _components(op, n)
    ds, rs, vo, so = op.operands

    def step(ctx):
        data = lanes(to_bytes(ctx.vals[ds], t), ctx.T)
        for off, size, ok, addrs in _plan(ctx, op, ctx.vals[rs], ctx.vals[vo], ctx.vals[so], comps, n):
            ctx.gmem.store(addrs, data[:, off : off + size], ok, ctx.opts.check_store_conflicts)

    return step
