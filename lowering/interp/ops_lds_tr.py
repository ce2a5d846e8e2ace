"""gfx950 LDS transpose loads: ``rocdl.ds.read.tr{4,8,16}.b64`` and ``rocdl.ds.read.tr6.b96``.

``%v = rocdl.ds.read.tr16.b64 %ptr : !llvm.ptr<3> -> vector<4xi16>`` (tr8/tr4:
``vector<2xi32>``, tr6.b96: ``vector<3xi32>``; any type of the same size).  Each lane reads
8 (12) bytes at its own LDS address = E elements of w bits (TR16: E=4, w=16; TR8: 8, 8;
TR4: 16, 4; TR6: 16, 6) and the 16 lanes of each group exchange them.  The lane model is
``InterpOptions.tr_load_model`` [I]; ``"amd_hw_1.6"``: lane i (0..15 in its group) element j
receives element ``i % E`` of the elements read by lane ``j*(16/E) + i//E``.
EXEC must be all ones (ISA); the address must be aligned to the data size (8 bytes for the
b64 forms; 4 for b96 [I: 12-byte alignment is not a power of two]).
"""

from __future__ import annotations

from linlayout import LayoutError
from linlayout.hw.lds import transpose_read_sources

from .ops_memory import check_alignment, load_bytes
from .registry import OpInfo, register
from .types import byte_size, bytes_to_items, from_bytes, items_to_bytes

GROUP = 16
#: op name -> (bytes read per lane, element bits, elements per lane E, required alignment)
TR_OPS = {
    "rocdl.ds.read.tr16.b64": (8, 16, 4, 8),
    "rocdl.ds.read.tr8.b64": (8, 8, 8, 8),
    "rocdl.ds.read.tr4.b64": (8, 4, 16, 8),
    "rocdl.ds.read.tr6.b96": (12, 6, 16, 4),
}


def tr_source(elems: int, model: str = "amd_hw_1.6") -> tuple:
    """(source lane within the group, source element) for destination (lane i, element j):
    two (16, E) int arrays (linlayout.hw.lds.transpose_read_sources)."""
    try:
        return transpose_read_sources(elems, model)
    except LayoutError as e:
        raise ValueError(str(e)) from None


@register(*TR_OPS)
def _tr_load(op: OpInfo):
    if not op.target.has_ds_read_tr or op.target.wave_size != 64:  # gfx1250's wave32 transposes are other instructions
        raise op.error(f"{op.name} exists only on gfx950, not on {op.arch}")
    nbytes, bits, elems, align = TR_OPS[op.name]
    t = op.result_types[0]
    if byte_size(t) != nbytes:
        raise op.error(f"result {t} is not {nbytes} bytes")
    p, r = op.operands[0], op.results[0]

    def step(ctx):
        act = ctx.active().reshape(ctx.waves, 64)
        if (act.any(axis=1) & ~act.all(axis=1)).any():
            raise op.error("transpose loads require EXEC to be all ones")
        a = ctx.vals[p]
        check_alignment(ctx, op, a, align)
        raw = load_bytes(ctx, "workgroup", a, nbytes)
        items = bytes_to_items(raw, elems, bits).reshape(-1, GROUP, elems)  # (groups, 16, E)
        src_lane, src_elem = tr_source(elems, ctx.opts.tr_load_model)
        out = items[:, src_lane, src_elem].reshape(ctx.T, elems)
        ctx.vals[r] = from_bytes(items_to_bytes(out, bits)[:, :nbytes], t)

    return step
