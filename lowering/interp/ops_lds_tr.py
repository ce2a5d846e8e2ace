"""LDS transpose loads: gfx950's ``rocdl.ds.read.tr{4,8,16}.b64`` / ``rocdl.ds.read.tr6.b96`` and
gfx1250's ``rocdl.ds.load.tr16.b128`` / ``rocdl.ds.load.tr8.b64``.

``%v = rocdl.ds.read.tr16.b64 %ptr : !llvm.ptr<3> -> vector<4xi16>`` (any result type of the
read's size: tr8/tr4 ``vector<2xi32>``, tr6.b96 ``vector<3xi32>``, tr16.b128 ``vector<8xi16>``).
Each lane reads ``bytes_per_lane`` bytes at its own LDS address = ``E`` elements, and the lanes
of each group exchange them by the load's lane map (:class:`linlayout.hw.transpose_loads.TransposeLoad`:
gfx950's is the target assumption ``tr_lane_permutation`` [I], lane i (0..15 in its group)
element j receives element ``i % E`` of the elements read by lane ``j*(16/E) + i//E``; gfx1250's
are Triton's, docs/amd_facts.md 6.6 [I]).  EXEC must be all ones (CDNA4 ISA; taken for gfx1250
too [I]); the address must be aligned to the data size (4 bytes for the b96 form [I: 12-byte
alignment is not a power of two]).
"""

from __future__ import annotations

from linlayout.hw.targets import TARGETS
from linlayout.hw.transpose_loads import TRANSPOSE_LOADS

from .ops_memory import check_alignment, load_bytes
from .registry import OpInfo, register
from .types import byte_size, bytes_to_items, from_bytes, items_to_bytes

#: ROCDL op name -> its transpose load
TR_OPS = {load.rocdl: load for load in TRANSPOSE_LOADS}


@register(*TR_OPS)
def _tr_load(op: OpInfo):
    load = TR_OPS[op.name]
    if op.target.transpose_load(load.element_bits, load.bytes_per_lane) != load:
        have = [t.name for t in TARGETS.values() if t.transpose_load(load.element_bits, load.bytes_per_lane) == load]
        raise op.error(f"{op.name} ({load.name}) exists only on {', '.join(have)}, not on {op.arch}")
    nbytes, bits, elems, wave = load.bytes_per_lane, load.element_bits, load.elements, load.wave_size
    align = nbytes if nbytes & (nbytes - 1) == 0 else 4
    t = op.result_types[0]
    if byte_size(t) != nbytes:
        raise op.error(f"result {t} is not {nbytes} bytes")
    p, r = op.operands[0], op.results[0]
    src_lane, src_elem = load.sources()  # [wave, E] each

    def step(ctx):
        act = ctx.active().reshape(ctx.waves, wave)
        if (act.any(axis=1) & ~act.all(axis=1)).any():
            raise op.error("transpose loads require EXEC to be all ones")
        a = ctx.vals[p]
        check_alignment(ctx, op, a, align)
        raw = load_bytes(ctx, "workgroup", a, nbytes)
        items = bytes_to_items(raw, elems, bits).reshape(-1, wave, elems)  # (waves, lanes, E)
        out = items[:, src_lane, src_elem].reshape(ctx.T, elems)
        ctx.vals[r] = from_bytes(items_to_bytes(out, bits)[:, :nbytes], t)

    return step
