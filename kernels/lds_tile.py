"""A tile staged through LDS: the synthesized shared layout and every LDS instruction of the
writer and the reader, ready to emit.

``stage_tile(writer, reader, bits, arch)`` asks ``linlayout.synth.swizzle.synthesize`` for the shared
layout ``S: offset -> tensor`` (widest vectors, then fewest bank cycles) and turns its
instruction choices (``linlayout.synth.lds_access``: op, vector width, the register bits one
instruction covers, how many instructions) into :class:`LdsAccess` lists.  Instruction
``i`` of a side covers the registers ``base_i ^ spread(j)``, ``j < vector``, where
``spread`` puts the bits of ``j`` on the covered register bits (element order) and
``base_i`` enumerates the other register bits; lane ``l`` of warp ``w`` starts at element
offset ``cvt(base_i, l, w)`` with ``cvt = S^-1 o layout``, and its elements follow at
``+1, +2, ..`` (checked here for every lane, not assumed).  The lanes are the target's wave
(``Target.wave_size``): 64 on CDNA, 32 on RDNA and NVIDIA; the transpose reads are gfx950's
(wave64) and gfx1250's (wave32), each by its own lane map (``linlayout.hw.transpose_loads``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linlayout import LayoutError, LinearLayout, get_target
from linlayout.hw.lds import lds_model
from linlayout.hw.transpose_loads import transpose_load_named
from linlayout.synth.lds_access import TileAccessReport, access_map
from linlayout.synth.swizzle import SwizzleResult, synthesize

__all__ = ["LdsAccess", "StagedTile", "stage_tile", "tile_accesses"]


@dataclass(frozen=True)
class LdsAccess:
    """One LDS instruction of one side: ``op``, the registers it moves (element order) and the
    element offset ``[warp, lane]`` of each lane's first element."""

    op: str
    regs: tuple[int, ...]
    offsets: np.ndarray

    @property
    def vector(self) -> int:
        return len(self.regs)


@dataclass
class StagedTile:
    """The synthesized shared layout and the writer's and reader's instructions."""

    shared: LinearLayout
    element_bits: int
    writes: list[LdsAccess]
    reads: list[LdsAccess]
    synthesis: SwizzleResult

    @property
    def lds_bytes(self) -> int:
        return self.synthesis.lds_bytes

    def describe(self) -> dict:
        s = self.synthesis
        return {"shared": self.shared.to_json()["bases"]["offset"], "write_op": s.write_op,
                "write_instructions": s.write_instructions, "write_cycles": s.write_cycles,
                "read_op": s.read_op, "read_instructions": s.read_instructions, "read_cycles": s.read_cycles,
                "ideal_cycles": s.ideal_cycles, "lower_bound_cycles": s.lower_bound_cycles,
                "optimal": s.optimal, "lds_bytes": s.lds_bytes}


def _check_registers(layout: LinearLayout, what: str) -> None:
    if layout.has_in_dim("register") and any(not any(v) for v in layout.bases["register"]):
        raise LayoutError(f"{what}: a register of the layout is a broadcast (zero basis); drop it before staging")


def _cvt_offsets(cvt: LinearLayout, reg: int, lanes: np.ndarray, num_warps: int) -> np.ndarray:
    """``cvt(register = reg, lane = lanes[l], warp = w)`` as ``[warp, len(lanes)]``."""
    shape = (num_warps, len(lanes))
    args = {"register": np.full(shape, reg), "lane": np.broadcast_to(lanes[None, :], shape)}
    if cvt.has_in_dim("warp"):
        args["warp"] = np.broadcast_to(np.arange(num_warps)[:, None], shape)
    return np.asarray(cvt.apply(args)["offset"], dtype=np.int64)


def _transpose_source(cvt: LinearLayout, covered: list[int], base: int, num_warps: int, op: str) -> np.ndarray:
    """Start offsets ``[warp, lane]`` of the transpose read ``op`` (the address each lane *supplies*).

    By the load's lane map (``TransposeLoad.source_columns``): source lane bit ``b`` is a result lane
    bit or a result element bit ``u`` (register ``covered[u]``), so lane ``s`` supplies
    ``cvt(base, 0, w)`` XOR the offsets of the result bits its bits stand for.  gfx950
    (docs/amd_facts.md 1.6), ``E = 2**k`` elements per lane: source lane bit ``t < 4 - k`` is result
    lane bit ``k + t``, source lane bit ``4 - k + u`` is element bit ``u``, lane bits 4.. are kept;
    gfx1250: section 6.6.
    """
    load = transpose_load_named(op)
    lane_cols = [b[0] for b in cvt.bases["lane"]]
    reg_cols = [b[0] for b in cvt.bases["register"]]
    src = load.source_columns(lane_cols, [reg_cols[j] for j in covered])
    lane = np.arange(load.wave_size)
    off = np.zeros(load.wave_size, dtype=np.int64)
    for bit, col in enumerate(src):
        off ^= ((lane >> bit) & 1) * col
    return _cvt_offsets(cvt, base, np.zeros(load.wave_size, dtype=np.int64), num_warps) ^ off[None, :]


def tile_accesses(report: TileAccessReport, shared: LinearLayout, layout: LinearLayout,
                  num_warps: int) -> list[LdsAccess]:
    """The instructions of ``report.choice`` for ``layout`` reading/writing ``shared``.

    Plain ops: lane ``l`` starts at ``cvt(base, l, w)`` and its registers follow at +1, +2, ..
    (checked).  Transpose reads (gfx950 ``ds_read_b64_tr_b*``, gfx1250 ``ds_load_tr*``): the start
    each lane supplies follows the load's lane map (:func:`_transpose_source`); the registers it
    receives are ``base ^ spread(j)`` in element order, as for plain ops.  The lanes are those of the
    target's wave (``Target.wave_size``: 64 on CDNA, 32 on RDNA and NVIDIA).
    """
    _check_registers(layout, f"{report.direction} layout")
    cvt = access_map(shared, layout)
    ch = report.choice
    transpose = lds_model(report.arch).op(ch.op).shape.transpose_bits is not None
    n_reg = cvt.in_dim_size_log2("register")
    covered = list(ch.register_bits)
    rest = [i for i in range(n_reg) if i not in covered]
    lanes = np.arange(get_target(report.arch).wave_size)
    out = []
    for i in range(1 << len(rest)):
        base = sum(((i >> k) & 1) << bit for k, bit in enumerate(rest))
        regs = [base | sum(((j >> k) & 1) << bit for k, bit in enumerate(covered)) for j in range(ch.vector)]
        if transpose:
            out.append(LdsAccess(ch.op, tuple(regs), _transpose_source(cvt, covered, base, num_warps, ch.op)))
            continue
        offs = [_cvt_offsets(cvt, r, lanes, num_warps) for r in regs]
        for j, r in enumerate(regs):
            if j and not np.array_equal(offs[j], offs[0] + j):
                raise LayoutError(f"{ch.op}: register {r} is not next to register {regs[0]} in LDS")
        out.append(LdsAccess(ch.op, tuple(regs), offs[0]))
    if len(out) != ch.count:
        raise LayoutError(f"{ch.op}: expected {ch.count} instructions, enumerated {len(out)}")
    return out


def _check_warps(layout: LinearLayout, num_warps: int, what: str) -> None:
    warps = layout.in_dim_size("warp") if layout.has_in_dim("warp") else 1
    if warps != num_warps:
        raise LayoutError(f"{what} layout: in dim 'warp' has size {warps}, the tile is staged by {num_warps} warps")


def stage_tile(writer: LinearLayout, reader: LinearLayout, element_bits: int, arch: str,
               num_warps: int, **synth_options) -> StagedTile:
    """Synthesize the shared layout of ``writer -> LDS -> reader`` and list both sides' instructions.

    Any target with an LDS model (``linlayout.hw.lds.SHARED_MEMORY_ARCHS``: CDNA's 64-lane waves,
    RDNA's and NVIDIA's 32-lane ones) whose wave the layouts' ``lane`` dims match; ``num_warps``:
    the warps that stage the tile (the size of each layout's ``warp`` dim, 1 where it has none)."""
    _check_warps(writer, num_warps, "write")
    _check_warps(reader, num_warps, "read")
    res = synthesize(writer, reader, element_bits, arch, **synth_options)
    if res.shared.in_dim_names != ["offset"]:
        raise LayoutError(f"the staged tile needs {res.lds_bytes * res.reps} bytes of LDS, more than the "
                          f"{res.lds_bytes} bytes of one round; a kernel stages its whole tile at once")
    return StagedTile(res.shared, element_bits, tile_accesses(res.write_report, res.shared, writer, num_warps),
                      tile_accesses(res.read_report, res.shared, reader, num_warps), res)
