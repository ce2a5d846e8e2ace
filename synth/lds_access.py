"""Whole-tile LDS accesses: which instruction, how many, how many cycles.

A register layout ``R: (register, lane, warp) -> tensor`` reads (or writes) a
tile stored in LDS by a shared layout ``S: offset -> tensor``.  The element of
register ``r`` of lane ``l`` of warp ``w`` lives at

    offset = cvt(r, l, w),    cvt = S^-1 o R    (R.invert_and_compose(S)).

Broadcast registers (zero images) are dropped first (the data is moved once).

**Plain ops** (``ds_read_b32/b64/b128``, ``ds_write_*``, sub-dword ``u8/u16``,
``b8/b16``) moving ``v`` elements per lane are legal when ``log2 v`` register bits
map to offsets ``1, 2, .., v/2`` (a lane's elements are contiguous; registers
may be renamed, as Triton does) and every other lane, warp and register bit maps
to an offset that is a multiple of ``v`` (aligned).  The remaining register bits
count the instructions.

**Transpose reads** (gfx950 ``ds_read_b64_tr_b{16,8,4}``, gfx1250 ``ds_load_tr16_b128`` /
``ds_load_tr8_b64``; ``E`` elements per lane): lane bits ``0..log2 E - 1`` must map to offsets
``1 .. E/2`` (in LDS the contiguous run goes *across* lanes) and ``log2 E`` register bits ``r_u``
say which source lane supplies which result element, by the load's lane map
(``linlayout.hw.transpose_loads.TransposeLoad.source_columns``; gfx950: docs/amd_facts.md 1.6,
assumption ``tr_lane_permutation``: source lane ``s`` of a 16-lane group reads the ``E`` elements at
``cvt(lane = E*(s % (16/E)) + k, register j = s // (16/E))``, ``k < E``; gfx1250: section 6.6).
Its access is therefore again linear.

For a linear shared layout every instruction of every warp is a XOR-translate
of instruction 0, and XOR by a constant permutes banks and rows without changing
the per-bank counts, so all instructions cost the same (proved, not sampled).
Padded layouts are enumerated per instruction and warp; the worst warp counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import permutations
from typing import Union

import numpy as np

from linlayout import LayoutError, LinearLayout
from linlayout.encodings.padded import PaddedLayout
from linlayout.hw.lds import LdsModel, LdsOp, lds_model
from linlayout.hw.limits import check_tile_access
from linlayout.hw.transpose_loads import transpose_load_named

from .banks import BankReport, _padding, analyze_op, bank_load, lane_start_bytes, linear_cycles

__all__ = ["InstructionChoice", "TileAccessReport", "access_map", "access_report", "largest_vector",
           "tile_access_report"]

Shared = Union[LinearLayout, PaddedLayout]


@dataclass
class InstructionChoice:
    """One legal way to move the tile: ``count`` instructions ``op`` per wave.

    ``register_bits``: the register bits (of the register layout after dropping
    broadcast registers) that one instruction covers, in element order.
    ``cycles``: per instruction (worst warp).  ``report``: instruction 0's analysis.
    ``access``: instruction 0 as ``lane, register -> offset`` (linear layouts only).
    """

    op: str
    vector: int
    register_bits: list[int]
    count: int
    cycles: list[int]
    min_cycles: int
    report: BankReport
    access: LinearLayout | None = None

    @property
    def total_cycles(self) -> int:
        return sum(self.cycles)

    @property
    def ideal_cycles(self) -> int:
        return self.count * self.min_cycles

    def to_json(self) -> dict:
        out = {"op": self.op, "vector": self.vector, "register_bits": list(self.register_bits),
               "instructions": self.count, "cycles_per_instruction": list(self.cycles),
               "min_cycles_per_instruction": self.min_cycles, "total_cycles": self.total_cycles,
               "ideal_cycles": self.ideal_cycles, "conflict_free": self.total_cycles == self.ideal_cycles,
               "bank_report": self.report.to_json()}
        if self.access is not None:
            out["access"] = self.access.to_json()
        return out


@dataclass
class TileAccessReport:
    """The chosen instruction (widest legal vector, then fewest cycles) and the alternatives."""

    arch: str
    direction: str
    element_bits: int
    choice: InstructionChoice
    alternatives: list[InstructionChoice] = field(default_factory=list)
    rejected: dict[str, str] = field(default_factory=dict)
    broadcast_registers: int = 0

    @property
    def total_cycles(self) -> int:
        return self.choice.total_cycles

    @property
    def ideal_cycles(self) -> int:
        return self.choice.ideal_cycles

    @property
    def conflict_free(self) -> bool:
        return self.total_cycles == self.ideal_cycles

    @property
    def explanation(self) -> str:
        c = self.choice
        lines = [f"{self.direction} of the tile on {self.arch}: {c.count} x {c.op} per wave "
                 f"({c.vector} elements of {self.element_bits} bits per lane, register bits {c.register_bits}); "
                 f"{self.total_cycles} cycles vs {self.ideal_cycles} ideal"
                 + (" - conflict-free" if self.conflict_free else "")]
        if len(set(c.cycles)) == 1:
            lines.append(f"every instruction: {c.cycles[0]} cycles ({c.min_cycles} phases)")
        else:
            lines.append(f"cycles per instruction: {c.cycles}")
        lines.append(c.report.explanation)
        for a in self.alternatives:
            if a is not c:
                lines.append(f"alternative: {a.count} x {a.op}: {a.total_cycles} cycles (ideal {a.ideal_cycles})")
        for op, why in self.rejected.items():
            lines.append(f"not legal: {op}: {why}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {"arch": self.arch, "direction": self.direction, "element_bits": self.element_bits,
                "op": self.choice.op, "instructions": self.choice.count, "vector": self.choice.vector,
                "cycles_per_instruction": list(self.choice.cycles), "cycles": self.total_cycles,
                "ideal_cycles": self.ideal_cycles, "min_cycles": self.ideal_cycles,
                "conflict_free": self.conflict_free, "choice": self.choice.to_json(),
                "alternatives": [{"op": a.op, "instructions": a.count, "cycles": a.total_cycles,
                                  "ideal_cycles": a.ideal_cycles} for a in self.alternatives],
                "rejected": dict(self.rejected), "broadcast_registers": self.broadcast_registers,
                "explanation": self.explanation}


# ----------------------------------------------------------------- public API
def access_map(shared: Shared, reg_layout: LinearLayout) -> LinearLayout:
    """``cvt = (register, lane, warp) -> offset`` (unpadded offset for a PaddedLayout),
    broadcast registers dropped."""
    lin = shared.linear if isinstance(shared, PaddedLayout) else shared
    if not isinstance(lin, LinearLayout) or not lin.has_in_dim("offset"):
        raise LayoutError("shared layout: expected a LinearLayout or PaddedLayout with in dim 'offset'")
    if not isinstance(reg_layout, LinearLayout):
        raise LayoutError("register layout: expected a LinearLayout")
    for d in lin.in_dim_names:
        if d not in ("offset", "block"):
            raise LayoutError(f"shared layout: in dims must be 'offset' (and 'block'), got {lin.in_dim_names}")
    if lin.has_in_dim("block") and lin.in_dim_size("block") > 1:
        raise LayoutError("shared layout: in dim 'block' must have size 1 (AMD LDS is per workgroup)")
    for d in reg_layout.in_dim_names:
        if d not in ("register", "lane", "warp", "block"):
            raise LayoutError(f"register layout: unknown in dim {d!r} (expected register, lane, warp, block)")
        if d == "block" and reg_layout.in_dim_size(d) > 1:
            raise LayoutError("register layout: in dim 'block' must have size 1 (AMD LDS is per workgroup)")
    if "lane" not in reg_layout.in_dim_names:
        raise LayoutError("register layout: in dim 'lane' is missing")
    lin = lin.sublayout(["offset"], lin.out_dim_names)
    if not lin.is_injective():
        raise LayoutError("shared layout: two offsets hold the same tensor element (not injective)")
    reg = reg_layout
    if reg.has_in_dim("register"):
        reg = reg.remove_zero_bases_along_dim("register")
    keep = [d for d in reg.in_dim_names if d != "block"]
    reg = reg.sublayout(keep, reg.out_dim_names)
    if set(reg.out_dim_names) != set(lin.out_dim_names):
        raise LayoutError(f"register layout out dims {reg.out_dim_names} differ from the shared layout's "
                          f"{lin.out_dim_names}")
    shared_sizes = dict(lin.out_dims)
    for name, size in reg.out_dims:
        if size > shared_sizes[name]:
            raise LayoutError(f"register layout has {name} of size {size}, the shared layout only "
                              f"{shared_sizes[name]}: the tile does not fit in the shared layout")
    return reg.invert_and_compose(lin)


def tile_access_report(shared: Shared, reg_layout: LinearLayout, element_bits: int,
                       arch: Union[str, LdsModel], direction: str = "read", *,
                       ops: list[str] | None = None) -> TileAccessReport:
    """How ``reg_layout`` reads (or writes) the tile stored by ``shared``.

    Tries every LDS op of ``arch`` for ``direction`` (or only ``ops``), keeps the
    legal ones and chooses the widest vector, then the fewest cycles.  Raises
    ``LayoutError`` when no op is legal.
    """
    if direction not in ("read", "write"):
        raise LayoutError(f"direction {direction!r} must be 'read' or 'write'")
    if isinstance(element_bits, bool) or not isinstance(element_bits, int) or element_bits not in (4, 8, 16, 32, 64):
        raise LayoutError(f"element_bits {element_bits!r} must be 4, 8, 16, 32 or 64")
    check_tile_access(shared, reg_layout, element_bits, arch)
    model = arch if isinstance(arch, LdsModel) else lds_model(arch)
    cvt = access_map(shared, reg_layout)
    n_broadcast = (reg_layout.in_dim_size_log2("register") - cvt.in_dim_size_log2("register")
                   if reg_layout.has_in_dim("register") else 0)
    return access_report(cvt, element_bits, model, direction, ops=ops,
                         padding=shared if isinstance(shared, PaddedLayout) else None,
                         broadcast_registers=max(0, n_broadcast))


def access_report(cvt: LinearLayout, element_bits: int, arch: Union[str, LdsModel], direction: str = "read", *,
                  ops: list[str] | None = None, padding: PaddedLayout | None = None,
                  broadcast_registers: int = 0) -> TileAccessReport:
    """``tile_access_report`` for an access map ``cvt`` (``access_map``: register, lane, warp ->
    offset) already built; ``padding``: the padded shared layout it addresses, if any."""
    model = arch if isinstance(arch, LdsModel) else lds_model(arch)
    if cvt.in_dim_size("lane") != model.wave_size:
        raise LayoutError(f"register layout: in dim 'lane' has size {cvt.in_dim_size('lane')}, the {model.arch} "
                          f"wave has {model.wave_size} lanes")
    pad = _padding(padding) if padding is not None else None
    if ops is None:
        names = [n for n in model.op_names(direction) if _applicable(model.op(n), element_bits)]
    else:
        names = list(ops)
    legal, rejected = [], {}
    for name in names:
        op = model.op(name)
        if op.direction != direction:
            raise LayoutError(f"op {name} is a {op.direction}, not a {direction}")
        try:
            legal.append(_best_choice(op, cvt, element_bits, pad))
        except LayoutError as e:
            rejected[name] = str(e)
    if not legal:
        raise LayoutError(f"no LDS {direction} instruction of {model.arch} can move this tile: "
                          + "; ".join(f"{k}: {v}" for k, v in rejected.items()))
    legal.sort(key=lambda c: (-c.vector * element_bits, c.total_cycles, model.op(c.op).shape.transpose_bits or 0))
    return TileAccessReport(model.arch, direction, element_bits, legal[0], legal, rejected, broadcast_registers)


# ------------------------------------------------------------------ internals
def _offsets(cvt: LinearLayout, dim: str) -> list[int]:
    """The first out dim's component (the offset) of every bit of in dim ``dim``: the low bits of
    its flattened columns."""
    start, mask = 0, cvt.out_dims[0][1] - 1
    for name, size in cvt.in_dims:
        k = size.bit_length() - 1
        if name == dim:
            return [c & mask for c in cvt.columns()[start:start + k]]
        start += k
    return []


def _applicable(op: LdsOp, element_bits: int) -> bool:
    """The op moves a power-of-two number (>= 1) of whole elements of this width, each lane its
    own (not ldmatrix/stmatrix, whose rows land in other lanes)."""
    bits = op.bytes_per_lane * 8
    tr = op.shape.transpose_bits
    return (op.bytes_per_lane != 12 and bits % element_bits == 0 and not op.shape.fragment
            and (tr is None or tr == element_bits))


def _best_choice(op: LdsOp, cvt: LinearLayout, element_bits: int, pad) -> InstructionChoice:
    """The cheapest legal way to use ``op`` (raises LayoutError when illegal)."""
    bits = op.bytes_per_lane * 8
    if op.shape.fragment:
        raise LayoutError(f"{op.name} spreads each row over other lanes' registers; it is not a per-lane vector "
                          "access (analyse one instruction with linlayout banks --op)")
    if op.bytes_per_lane == 12:
        raise LayoutError("96-bit accesses are not a power-of-two number of elements")
    if bits % element_bits:
        raise LayoutError(f"{op.bytes_per_lane} bytes are not a whole number of {element_bits}-bit elements")
    v = bits // element_bits
    k = v.bit_length() - 1
    regs, lanes, warps = _offsets(cvt, "register"), _offsets(cvt, "lane"), _offsets(cvt, "warp")
    low = v - 1
    tr = op.shape.transpose_bits
    if tr is None:
        candidates = [_plain_vector(regs, lanes + warps, v)]
    else:
        if element_bits != tr:
            raise LayoutError(f"transposes {tr}-bit elements, the tile has {element_bits}-bit elements")
        for i in range(k):
            if i >= len(lanes) or lanes[i] != 1 << i:
                raise LayoutError(f"lane bit {i} must map to offset +{1 << i} (the transposed run goes across "
                                  f"lanes), it maps to {lanes[i] if i < len(lanes) else None}")
        _check_aligned(op, lanes[k:] + warps, low)
        aligned = [j for j, o in enumerate(regs) if not o & low]
        if len(aligned) < k:
            raise LayoutError(f"needs {k} register bits with offsets aligned to {v} elements")
        candidates = [list(p) for p in permutations(aligned, k)]
        rest_ok = [j for j, o in enumerate(regs) if o & low]
        if rest_ok:
            raise LayoutError(f"register bits {rest_ok} map to offsets not aligned to {v} elements")
    if pad is not None:
        best = None
        for vec in candidates:
            choice = _evaluate(op, cvt, element_bits, pad, vec, regs, lanes, warps)
            if best is None or choice.total_cycles < best.total_cycles:
                best = choice
        return best
    # linear: every candidate has the same instruction count, so the cycles of its access decide;
    # the first is evaluated in full (it validates the access), the others by their lane columns
    first = _evaluate(op, cvt, element_bits, pad, candidates[0], regs, lanes, warps)
    best_vec, best_cycles = candidates[0], first.report.cycles
    for vec in candidates[1:]:
        cycles = linear_cycles(op, _source_lanes(op, vec, regs, lanes), element_bits)
        if cycles < best_cycles:
            best_vec, best_cycles = vec, cycles
    return first if best_vec is candidates[0] else _evaluate(op, cvt, element_bits, pad, best_vec, regs, lanes, warps)


def _check_aligned(op: LdsOp, offsets: list[int], low: int) -> None:
    bad = [o for o in offsets if o & low]
    if bad:
        raise LayoutError(f"offset {bad[0]} is not aligned to the {low + 1}-element vector of {op.name}")


def _plain_vector(regs: list[int], others: list[int], v: int) -> list[int]:
    """Register bits holding offsets ``1, 2, .., v/2`` (in that order), all other offsets
    multiples of ``v``; raises LayoutError otherwise."""
    vec = []
    for i in range(v.bit_length() - 1):
        js = [j for j, o in enumerate(regs) if o == 1 << i]
        if not js:
            raise LayoutError(f"no register holds the element at offset +{1 << i} (a lane's {v} elements "
                              f"are not contiguous in LDS)")
        vec.append(js[0])
    bad = [o for j, o in enumerate(regs) if j not in vec and o & (v - 1)] + [o for o in others if o & (v - 1)]
    if bad:
        raise LayoutError(f"offset {bad[0]} is not aligned to a {v}-element vector")
    return vec


def largest_vector(cvt: LinearLayout, element_bits: int, max_bytes: int = 16) -> tuple[int, list[int]]:
    """Triton's ``largestVectorisation``: the most elements ``v`` (``v * bits <= 8 * max_bytes``)
    that each lane can move as one contiguous aligned vector, and the register bits forming it."""
    return largest_vector_of_offsets(_offsets(cvt, "register"), _offsets(cvt, "lane") + _offsets(cvt, "warp"),
                                     element_bits, max_bytes)


def largest_vector_of_offsets(regs: list[int], others: list[int], element_bits: int,
                              max_bytes: int = 16) -> tuple[int, list[int]]:
    """:func:`largest_vector` given the offsets of the register bits and of the lane and warp bits."""
    v = max(1, max_bytes * 8 // element_bits)
    while v > 1:
        try:
            return v, _plain_vector(regs, others, v)
        except LayoutError:
            v //= 2
    return 1, []


def _source_lanes(op: LdsOp, vec: list[int], regs: list[int], lanes: list[int]) -> list[int]:
    """Offsets of the lane bits of instruction 0's *source* addresses.

    Plain ops: the lanes themselves.  Transpose reads: the load's source lane bits as result
    lane bits and element bits (register ``vec[u]`` for element bit ``u``;
    ``TransposeLoad.source_columns``; gfx950: source lane bit ``t < 4 - log2 E`` is result lane
    bit ``log2 E + t``, source lane bit ``4 - log2 E + u`` is element bit ``u``, lane bits 4..
    are unchanged).
    """
    if op.shape.transpose_bits is None:
        return list(lanes)
    return transpose_load_named(op.name).source_columns(lanes, [regs[j] for j in vec])


def _evaluate(op: LdsOp, cvt: LinearLayout, element_bits: int, pad, vec: list[int],
              regs: list[int], lanes: list[int], warps: list[int]) -> InstructionChoice:
    v = 1 << len(vec)
    src = _source_lanes(op, vec, regs, lanes)
    size = cvt.out_dim_size("offset")
    access = LinearLayout({"register": [[1 << i] for i in range(len(vec))], "lane": [[o] for o in src]},
                          [("offset", size)])
    rest = [o for j, o in enumerate(regs) if j not in vec]
    count = 1 << len(rest)
    if pad is None:
        report = analyze_op(op, access, element_bits)
        cycles = [report.cycles] * count
    else:
        # every instruction of every warp at once: offsets [count, warps, wave, v]
        lanes_idx = np.arange(op.wave_size)
        lane_off = np.zeros(op.wave_size, dtype=np.int64)
        for b, o in enumerate(src):
            lane_off ^= ((lanes_idx >> b) & 1) * o
        base = np.array([[_xor_of(rest, i) ^ _xor_of(warps, w) for w in range(1 << len(warps))]
                         for i in range(count)], dtype=np.int64)
        offs = (lane_off[None, None, :] ^ base[:, :, None])[..., None] + np.arange(v, dtype=np.int64)
        table = bank_load(op, lane_start_bytes(op, offs, element_bits, pad))  # [count, warps, phases, banks]
        per = table.max(axis=-1).sum(axis=-1)  # [count, warps]
        cycles = [int(c) for c in per.max(axis=1)]
        worst = int(per[0].argmax())
        report = analyze_op(op, offs[0, worst], element_bits, padding=pad)
        access = None
    return InstructionChoice(op.name, v, list(vec), count, cycles, op.num_phases, report, access)


def _xor_of(cols: list[int], x: int) -> int:
    out = 0
    for b, c in enumerate(cols):
        if (x >> b) & 1:
            out ^= c
    return out
