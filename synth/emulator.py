"""A lane-accurate model of one workgroup that executes conversion plans.

Two executors:

* ``run_isa(plan)``: the ISA level.  Registers are 32-bit VGPRs of every lane
  of every warp, held as 4 *byte cells* each; LDS is a byte array.  Every step
  runs as its hardware instruction with the parameters it carries (DPP control
  with row_mask/bank_mask/bound_ctrl, ds_swizzle offset in all four modes,
  ds_bpermute byte addresses with ``(addr + offset) / 4 % 64``, the gfx950
  permlane swaps, v_perm_b32 byte selectors, v_cndmask VCC, ds_write/ds_read
  widths and alignment).  LDS accesses are checked for races between warps
  (no barrier between a write and another warp's read or write of the same
  byte) -- within one wave LDS instructions are taken to complete in order
  (``LDS_IN_ORDER_PER_WAVE``, [I]).
* ``run_certificate(cert)``: the element level of CONTRACT.md section 4, on
  the JSON certificate alone (no ISA parameters needed).

Byte cells are int32 (int64 when a tag does not fit): values ``0..255`` are
literal bytes, values ``>= 256`` are symbolic tags (one per element byte) so
that a run proves where every byte went; ``UNDEF = -1`` marks never-written
bytes, and v_perm's sign selectors on a tag produce ``-tag`` (a symbolic sign
byte).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass

import numpy as np

from linlayout import LayoutError, LinearLayout, caches
from linlayout.hw.targets import get_target

from .isa_lanes import bpermute_src_lanes, dpp_src_lanes, permlane_swap, swizzle_src_lanes, v_perm_b32
from .plan import (Barrier, FusedDpp, Lane, LdsLoad, LdsStore, Mov, PermlaneSwap, PermSelect, Plan, Select,
                   dwords_per_slot, slots_per_dword, transpose_element_addresses)
from .span import span_table

__all__ = [
    "LDS_IN_ORDER_PER_WAVE", "PlanVerificationError", "UNDEF", "VerifyResult", "bpermute_src_lanes",
    "dpp_src_lanes", "element_ids", "expected_ids", "permlane_swap", "run_certificate", "run_isa",
    "swizzle_src_lanes", "v_perm_b32", "verify",
]

UNDEF = -1
WAVE = 64
TAG_BASE = 256

# [I] LDS instructions of one wave are processed in issue order, so a wave reading
# back (or overwriting) its own LDS data needs no barrier, only s_waitcnt.
LDS_IN_ORDER_PER_WAVE = True


class PlanVerificationError(RuntimeError):
    """A synthesized plan did not move every element where it must go (an internal bug)."""


# ====================================================================== tags
def element_ids(layout: LinearLayout, num_warps: int) -> np.ndarray:
    """``[warps, 64, slots]`` tensor index (flattened, first out dim least significant) per slot (read-only)."""
    # layouts equal up to out-dim order compare (and hash) equal but flatten differently: key on the order too
    return _element_ids(layout, tuple(layout.out_dim_names), num_warps)


@caches.memoize("synth.emulator.element_ids", size=256)  # 256: arrays of every element of a layout
def _element_ids(layout: LinearLayout, out_order: tuple, num_warps: int) -> np.ndarray:
    n_reg = layout.in_dim_size("register")
    cols = layout.columns()  # flattened over its own out dims (kept by the layout)
    lengths = {"warp": num_warps, "lane": WAVE, "register": n_reg}
    part = {name: np.zeros(n, dtype=np.int64) for name, n in lengths.items()}  # each axis's XOR of images
    j = 0
    for name, size in layout.in_dims:
        k = size.bit_length() - 1
        if name in part:  # index x takes the images of its low k bits (higher warps repeat the pattern)
            table = span_table(cols[j:j + k])
            part[name] = table if size == lengths[name] else table[np.arange(lengths[name]) & (size - 1)]
        j += k
    flat = part["warp"][:, None, None] ^ part["lane"][None, :, None] ^ part["register"][None, None, :]
    flat.setflags(write=False)
    return flat


def expected_ids(plan: Plan) -> np.ndarray:
    """``[warps, 64, slots]`` the element ids ``plan.dst`` asks for, its out dims taken in ``plan.src``'s
    order (the order the src elements are tagged in; a certificate may list them in another)."""
    dst, names = plan.dst, plan.src.out_dim_names
    if dst.out_dim_names != names:
        if sorted(dst.out_dims) != sorted(plan.src.out_dims):
            raise LayoutError(f"src out dims {plan.src.out_dims} and dst out dims {dst.out_dims} differ")
        dst = dst.transpose_outs(names)
    return element_ids(dst, plan.num_warps)


# ====================================================================== ISA executor
_dpp_cached = caches.memoize("synth.emulator.dpp_src_lanes", table=True)(dpp_src_lanes)
_swz_cached = caches.memoize("synth.emulator.swizzle_src_lanes", table=True)(swizzle_src_lanes)
_LANES = np.arange(WAVE)
_BYTE_OFFSETS = np.arange(16)


@caches.memoize("synth.emulator.masks_enabled", table=True)
def _masks_enabled(row_mask: int, bank_mask: int) -> np.ndarray:
    return (((row_mask >> (_LANES >> 4)) & 1) & ((bank_mask >> ((_LANES >> 2) & 3)) & 1)).astype(bool)


class _RaceSuspect(Exception):
    """The quick check of an epoch cannot rule a race out (or a step failed): run again exactly."""


class _Machine:
    """Registers ``[n_dwords, W, 64, 4 / cell_bytes]`` cells; LDS cells with race bookkeeping.

    Byte cells (``cell_bytes`` 1) hold one byte each.  Wider cells (``cell_bytes`` 2 or 4) hold a
    code of their bytes (``_cell_codes``), for plans whose steps move such cells whole only
    (``_cell_bytes``): every step then does to a cell's code what it does to its bytes.
    ``exact``: every LDS access checks and marks the cells it touches.  Otherwise (quick) the
    accesses of an epoch are only recorded and checked together at its barrier (``_check_epoch``),
    which flags everything the exact checks could report (and possibly more)."""

    def __init__(self, n_dw: int, W: int, lds_bytes: int, cell: type = np.int64, exact: bool = True,
                 cell_bytes: int = 1) -> None:
        self.W = W
        self.exact = exact
        self.cb, self.cpd = cell_bytes, 4 // cell_bytes  # bytes per cell, cells per dword
        self.lds_bytes = lds_bytes
        lds_size = -(-lds_bytes // cell_bytes)
        # quick: (cells, data) of each write, cells of each read (``[..., W, k]``: the warp axis is -2)
        self.epoch_writes: list[tuple[np.ndarray, np.ndarray]] = []
        self.epoch_reads: list[np.ndarray] = []
        self.runs: dict[int, tuple] = {}  # quick: runs of LDS steps done at once (_lds_runs)
        self.regs = np.full((n_dw, W, WAVE, self.cpd), UNDEF, dtype=cell)
        self.lds = np.full(lds_size, UNDEF, dtype=cell)
        mask = np.int32 if W < 31 else np.int64  # a bit per warp
        self.w_warps = np.zeros(lds_size, dtype=mask)  # bitmask of warps that wrote since the last barrier
        self.r_warps = np.zeros(lds_size, dtype=mask)  # bitmask of warps that read since the last barrier
        self.warp_bit = (1 << np.arange(W, dtype=mask))[:, None]
        self.wrote = self.read = False  # some LDS write / read since the last barrier

    def barrier(self) -> None:
        if not self.exact:
            _check_epoch(self)
        if self.wrote:
            self.w_warps[:] = 0
        if self.read:
            self.r_warps[:] = 0
        self.wrote = self.read = False


def _paired(dst: list[int], src: list[int], p: int, dps: int, what: str) -> list[tuple[int, int]]:
    """(dst dword, src dword) pairs of a register step; slots must keep their place in the dword."""
    if len(dst) != len(src):
        raise PlanVerificationError(f"{what}: {len(dst)} destination slots but {len(src)} source slots")
    if dps == 2:  # a 64-bit slot s is the dwords 2s, 2s + 1 (p is 1)
        dst, src = ([2 * x + h for x in slots for h in (0, 1)] for slots in (dst, src))
    pairs: dict[int, int] = {}
    for d, s in zip(dst, src):
        if d % p != s % p:
            raise PlanVerificationError(f"{what}: slot {s} -> {d} changes the element's place in its register")
        if pairs.setdefault(d // p, s // p) != s // p:
            raise PlanVerificationError(f"{what}: register v{d // p} would come from two registers")
    return list(pairs.items())


def _lanes_of(t, warps: int) -> np.ndarray:
    t = np.asarray(t, dtype=np.int64)
    return np.broadcast_to(t, (warps, WAVE)) if t.ndim == 1 else t


def _gather(vals: np.ndarray, src_lane: np.ndarray) -> np.ndarray:
    """``vals[w, src_lane[w, l], :]`` (vals ``[W, 64, cells]``; source lanes -1..63, ``[64]`` for every
    warp or ``[W, 64]``); -1 source lanes read 0."""
    out = vals[np.arange(vals.shape[0])[:, None], src_lane & (WAVE - 1)]
    return np.where((src_lane < 0)[..., None], 0, out)


def _check_declared(declared: np.ndarray, actual: np.ndarray, W: int, what: str) -> None:
    """Every lane whose declared source lane is not -1 reads that lane (lane tables ``[64]`` or ``[W, 64]``)."""
    bad = (declared >= 0) & (declared != actual)
    if bad.any():
        declared, actual, bad = (np.broadcast_to(x, (W, WAVE)) for x in (declared, actual, bad))
        w, l = map(int, np.argwhere(bad)[0])
        raise PlanVerificationError(
            f"{what}: lane {l} of warp {w} is declared to read lane {int(declared[w, l])} but the "
            f"instruction reads {int(actual[w, l])}")


def _exec_dpp(m: _Machine, dst: int, src: int, ctrl: int, row_mask: int, bank_mask: int, bound_ctrl: int,
              vcc: np.ndarray | None, s1: int | None) -> np.ndarray:
    """``v_mov_b32_dpp`` (vcc None) or ``v_cndmask_b32_dpp dst, src(DPP), s1, vcc``; returns source lanes.

    An out-of-range source lane reads 0 ([I]: the meaning of bound_ctrl:1) and, with
    bound_ctrl:0, the lane is not written.  Lanes disabled by row_mask/bank_mask keep dst.
    """
    sl = _dpp_cached(ctrl)
    s0 = _gather(m.regs[src], sl)
    enabled = _masks_enabled(row_mask, bank_mask)
    if not bound_ctrl:
        enabled = enabled & (sl >= 0)
    if vcc is None:
        res = s0
    else:
        res = np.where(vcc[..., None], m.regs[s1], s0)
    m.regs[dst] = np.where(enabled[None, :, None], res, m.regs[dst])
    return sl


def _lds_access(m: _Machine, addr, width: int, what: str) -> np.ndarray:
    """Cell indices ``[W, 64 * width / cell bytes]`` of an LDS access, with alignment and range checks."""
    a = np.asarray(addr, dtype=np.int64)  # [64] (every warp alike) or [W, 64]
    if width in (2, 4, 8, 16) and (a % width).any():
        raise PlanVerificationError(f"{what}: an address is not aligned to the {width}-byte access")
    if a.min() < 0 or a.max() + width > m.lds_bytes:  # the bytes are a .. a + width - 1
        raise PlanVerificationError(f"{what}: address outside the {m.lds_bytes}-byte LDS allocation")
    n = width // m.cb
    idx = ((a if m.cb == 1 else a // m.cb)[..., None] + _BYTE_OFFSETS[:n]).reshape(-1, WAVE * n)
    return idx if idx.shape[0] == m.W else idx.repeat(m.W, axis=0)


def _lds_write(m: _Machine, idx: np.ndarray, data: np.ndarray, what: str) -> None:
    """Warps are unordered between barriers: a byte another warp wrote (with other data) or read
    since the last barrier is a race; so are two warps writing different data in this step.
    ``idx``: the cells ``[W, k]`` (quick: ``[..., W, k]``, a run's)."""
    flat, vals = idx.reshape(-1), data.reshape(-1)
    if not m.exact:
        m.lds[flat] = vals
        if (m.lds.take(flat) != vals).any():  # two listings of a byte with different data
            raise _RaceSuspect
        m.epoch_writes.append((idx, data))
        return
    other_w = _by_other_warps(m, m.w_warps, m.wrote, idx)
    if other_w is not None:
        other_w &= m.lds[idx] != data
        if other_w.any():
            raise PlanVerificationError(f"{what}: LDS byte {int(idx[other_w][0])} was written by another warp "
                                        f"with other data since the last barrier")
    other_r = _by_other_warps(m, m.r_warps, m.read, idx)
    if other_r is not None:
        raise PlanVerificationError(f"{what}: LDS byte {int(idx[other_r][0])} is read by another warp since "
                                    f"the last barrier (missing barrier)")
    m.lds[flat] = vals
    if (m.lds.take(flat) != vals).any():  # a byte listed twice with different data keeps only one of them
        order = np.argsort(flat, kind="stable")
        f, v = flat[order], vals[order]
        dup = (f[1:] == f[:-1]) & (v[1:] != v[:-1])
        raise PlanVerificationError(f"{what}: two lanes or warps write different data to LDS byte "
                                    f"{int(f[1:][dup][0])}")
    _mark(m.w_warps, idx)
    m.wrote = True


def _lds_read(m: _Machine, idx: np.ndarray, what: str) -> np.ndarray:
    if not m.exact:
        m.epoch_reads.append(idx)
        return m.lds.take(idx)
    other = _by_other_warps(m, m.w_warps, m.wrote, idx)
    if other is not None:
        raise PlanVerificationError(f"{what}: LDS byte {int(idx[other][0])} is read without a barrier after "
                                    f"another warp wrote it")
    _mark(m.r_warps, idx)
    m.read = True
    return m.lds.take(idx)


def _by_other_warps(m: _Machine, warps: np.ndarray, any_marked: bool, idx: np.ndarray) -> np.ndarray | None:
    """Which bytes ``idx[w]`` another warp than ``w`` marked in ``warps`` since the barrier (None: none)."""
    if not any_marked:
        return None
    marked = warps[idx]
    if not marked.any():
        return None
    other = (marked & ~m.warp_bit) != 0
    return other if other.any() else None


def _mark(warps: np.ndarray, idx: np.ndarray) -> None:
    """Add warp ``w``'s bit to the bytes ``idx[w]`` (a warp may list a byte twice: same bit)."""
    for w in range(idx.shape[0]):
        warps[idx[w]] |= 1 << w


def _check_epoch(m: _Machine) -> None:
    """Quick mode, at a barrier or the end: raise _RaceSuspect unless the epoch's accesses are free of
    every race the exact checks find.  A write racing a write puts two values on a byte, so some
    write's data differs from the byte's final value; a read and a write of one byte by two warps
    race in either order.  Flagged: a byte written by two warps with a write not matching its final
    value, or read and written by two warps."""
    writes, reads = m.epoch_writes, m.epoch_reads
    m.epoch_writes, m.epoch_reads = [], []
    if not writes or (len(writes) == 1 and not reads):
        return  # one write leaves its data on its bytes (_lds_write checked them), nothing read
    flat = np.concatenate([i.reshape(-1) for i, _ in writes])
    changed = m.lds[flat] != np.concatenate([d.reshape(-1) for _, d in writes])
    if not changed.any() and not reads:
        return  # every byte written once (or with one value), nothing read
    for w in range(m.W):
        m.w_warps[np.concatenate([i[..., w, :].reshape(-1) for i, _ in writes])] |= 1 << w
    suspect = bool(changed.any()) and bool((np.bitwise_count(m.w_warps[flat[changed]]) > 1).any())
    if reads and not suspect:
        for w in range(m.W):
            m.r_warps[np.concatenate([i[..., w, :].reshape(-1) for i in reads])] |= 1 << w
        rb = np.concatenate([i.reshape(-1) for i in reads])
        wm = m.w_warps[rb]
        suspect = bool(((wm != 0) & (np.bitwise_count(wm | m.r_warps[rb]) > 1)).any())
        m.r_warps[:] = 0
    m.w_warps[:] = 0
    if suspect:
        raise _RaceSuspect


@caches.memoize("synth.emulator.slot_bytes", size=4096, table=True)  # 4096: several slots per instruction
def _slot_bytes(slot: int, p: int, dps: int, bytes_per: int) -> tuple[tuple[int, int], ...]:
    """(dword, byte) cells of one slot."""
    if dps == 2:
        return tuple((2 * slot + h, b) for h in range(2) for b in range(4))
    d, pos = divmod(slot, p)
    return tuple((d, pos * bytes_per + b) for b in range(bytes_per))


def _cell_index(slots, p: int, dps: int, bytes_per: int) -> tuple[np.ndarray, np.ndarray]:
    """(dword, byte) index arrays ``[len(slots), bytes per slot]`` of the slots' cells (``_slot_bytes``
    of every slot: 64-bit slot ``s`` is dwords ``2s, 2s+1``, bytes 0..3 each; else dword ``s // p``,
    bytes ``(s % p) * bytes_per ..``)."""
    s = np.asarray(slots, dtype=np.int64).reshape(-1, 1)
    if dps == 2:
        return 2 * s + (np.arange(8) >> 2), np.repeat((np.arange(8) & 3)[None], len(s), axis=0)
    return np.repeat(s // p, bytes_per, axis=1), (s % p) * bytes_per + np.arange(bytes_per)


def _max_slot(plan: Plan) -> int:
    m = max(plan.slots_in, plan.slots_out)
    for s in plan.steps:
        for name in _slot_fields(type(s)):
            v = getattr(s, name, None)
            if v:
                m = max(m, max(v) + 1)
    return m


@caches.memoize("synth.emulator.slot_fields", table=True)
def _slot_fields(step_class: type) -> tuple[str, ...]:
    """The names of the fields that may list slots, those a (dataclass) step class has (a table of
    the step classes only)."""
    names = ("dst", "src", "a", "b", "own", "tmp", "vdst", "src0", "pair")
    if is_dataclass(step_class):
        names = tuple(n for n in names if n in {f.name for f in fields(step_class)})
    return names


def run_isa(plan: Plan, init: np.ndarray | None = None, lds_bytes: int | None = None) -> np.ndarray:
    """Execute ``plan`` instruction by instruction; returns the registers ``[n_dwords, W, 64, 4]``.

    ``init``: byte cells of the initial slots ``[W, 64, slots_in, bytes]`` (default:
    symbolic tags ``256 + 8 * id + byte`` of the src elements).  The run first checks LDS races
    epoch by epoch (quick); a possible race or any failure runs it again with every access
    checked (exact), which raises the first error a step makes.
    """
    try:
        return _run_isa(plan, init, lds_bytes, exact=False)
    except (_RaceSuspect, PlanVerificationError, LayoutError):
        return _run_isa(plan, init, lds_bytes, exact=True)


def _n_dwords(plan: Plan) -> int:
    """VGPRs (dwords) every slot the plan names fits in."""
    eb = plan.element_bits
    n_slots = _max_slot(plan)
    return n_slots * 2 if dwords_per_slot(eb) == 2 else -(-n_slots // slots_per_dword(eb))


def _run_isa(plan: Plan, init: np.ndarray | None, lds_bytes: int | None, exact: bool) -> np.ndarray:
    eb = plan.element_bits
    p, dps, B = slots_per_dword(eb), dwords_per_slot(eb), max(1, eb // 8)
    W = plan.num_warps
    n_dw = _n_dwords(plan)
    if init is None:  # tags below TAG_BASE + 8 * (number of tensor elements)
        small = TAG_BASE + 8 * (1 << plan.src.total_out_bits) < (1 << 31) - 1
        ids = element_ids(plan.src, W).astype(np.int32 if small else np.int64)
        init = (TAG_BASE + 8 * ids)[..., None] + np.arange(B, dtype=ids.dtype)
    else:
        init = np.asarray(init)
        small = not init.size or (-(1 << 31) < int(init.min()) and int(init.max()) < (1 << 31) - 1)
    m = _Machine(n_dw, W, lds_bytes if lds_bytes is not None else max(plan.lds_bytes, 4),
                 np.int32 if small else np.int64, exact)
    if not exact:
        m.runs = _lds_runs(m, plan) or {}
    if plan.slots_in % p == 0:  # the slots fill dwords 0.. in order: slot s, byte b is cell (s*B + b) / 4
        cells = init[:, :, : plan.slots_in].reshape(W, WAVE, -1, 4)
        m.regs[: cells.shape[2]] = cells.transpose(2, 0, 1, 3)
    else:
        d_i, b_i = _cell_index(range(plan.slots_in), p, dps, B)
        m.regs[d_i, :, :, b_i] = np.moveaxis(init[:, :, : plan.slots_in], (0, 1), (2, 3))
    _execute(m, plan)
    return m.regs


def _execute(m: _Machine, plan: Plan) -> None:
    """Run the steps of ``plan`` on ``m`` (quick: the last epoch checked at the end); a run of LDS
    steps in ``m.runs`` goes at once (``_lds_runs``)."""
    eb = plan.element_bits
    p, dps, B = slots_per_dword(eb), dwords_per_slot(eb), max(1, eb // 8)
    W = m.W
    i = 0
    while i < len(plan.steps):
        st = plan.steps[i]
        what = f"step {i} ({st.op})"
        if i in m.runs:
            i = _exec_run(m, m.runs[i], what)
            continue
        i += 1
        if isinstance(st, Mov):
            _exec_mov(m, st, p, dps, B, what)
        elif isinstance(st, PermSelect):
            _exec_permsel(m, st, p, dps, B, what)
        elif isinstance(st, Select):
            vcc = np.asarray(st.cond).astype(bool)[..., None]  # [64, 1] or [W, 64, 1]
            for (d, a), (_, b) in zip(_paired(st.dst, st.a, p, dps, what), _paired(st.dst, st.b, p, dps, what)):
                m.regs[d] = np.where(vcc, m.regs[b], m.regs[a])
        elif isinstance(st, Lane):
            for d, s in _paired(st.dst, st.src, p, dps, what):
                sl = _exec_lane(m, st, d, s, what)
                _check_declared(np.asarray(st.src_lane), sl, W, what)
        elif isinstance(st, FusedDpp):
            _exec_fused(m, st, p, dps, what)
        elif isinstance(st, PermlaneSwap):
            for vd, s0 in _paired(st.vdst, st.src0, p, dps, what):
                if vd == s0:
                    raise PlanVerificationError(f"{what}: a permlane swap needs two different registers")
                m.regs[vd], m.regs[s0] = permlane_swap(st.kind, m.regs[vd], m.regs[s0])
        elif isinstance(st, (LdsStore, LdsLoad)):
            if st.pair is not None and (st.width not in (4, 8) or not 0 < st.pair_offset <= 255):
                raise PlanVerificationError(f"{what}: a two-address LDS access needs 4- or 8-byte halves and an "
                                            f"offset1 in 1..255, got {st.width} bytes and {st.pair_offset}")
            accesses = [(st.src if isinstance(st, LdsStore) else st.dst, st.addr)]
            if st.pair is not None:
                accesses.append((st.pair, st.pair_addr()))
            if isinstance(st, LdsLoad) and st.transpose:
                _exec_transpose_load(m, st, plan.arch, p, dps, B, what)
                continue
            for slots, addr in accesses:
                if isinstance(st, LdsStore):
                    _exec_store(m, slots, addr, st.width, st.d16_hi, p, dps, B, what)
                else:
                    _exec_load(m, slots, addr, st.width, p, dps, B, what)
        elif isinstance(st, Barrier):
            m.barrier()
        else:  # pragma: no cover - all step classes are handled above
            raise PlanVerificationError(f"{what}: unknown step")
    if not m.exact:
        _check_epoch(m)


# ====================================================================== code cells
def _cell_bytes(plan: Plan) -> int:
    """The widest cells, 4 or 2 bytes (else 1), that every step of ``plan`` moves whole: the bytes
    of a cell together and in order, to the bytes of a cell.  Register steps other than renamings
    and v_perm_b32 move whole dwords (they write whole VGPRs from whole VGPRs, or 0); a renaming
    and a v_perm_b32 move what ``_renamed_cell_pairs`` and ``_perm_cells`` allow; an LDS access moves
    cells when it moves at least a cell per lane between whole cells in byte order (a transpose
    load: cells no wider than its elements).  The first and last slots must fill whole cells."""
    eb = plan.element_bits
    p, dps, B = slots_per_dword(eb), dwords_per_slot(eb), max(1, eb // 8)
    c = next(c for c in (4, 2, 1) if plan.slots_in * B % c == 0 and plan.slots_out * B % c == 0)
    for st in plan.steps:
        while c > 1 and not _moves_cells(st, c, p, dps, B):
            c //= 2
    return c


def _moves_cells(st, c: int, p: int, dps: int, B: int) -> bool:
    """Does step ``st`` move whole ``c``-byte cells (``_cell_bytes``)?"""
    store = isinstance(st, LdsStore)
    if store or isinstance(st, LdsLoad):
        if not store and st.transpose and 8 * c > st.transpose:  # cells no wider than the elements
            return False
        return st.width >= c and all(_register_cells(tuple(x), c, p, dps, B)[1] is not None
                                     for x in (st.src if store else st.dst, st.pair) if x is not None)
    if isinstance(st, PermSelect):
        return _perm_cells(st.sel0, c) is not None and _perm_cells(st.sel1, c) is not None
    if isinstance(st, Mov):
        if st.kind == "v_perm_b32":
            return _perm_cells(st.selector, c) is not None
        if st.kind == "rename":
            return _renamed_cell_pairs(st, c, B) is not None
    return True


@caches.memoize("synth.emulator.register_cells", size=4096, table=True)  # 4096: one per register operand
def _register_cells(slots: tuple, c: int, p: int, dps: int, B: int) -> tuple[list, np.ndarray | None]:
    """The (dword, byte) cells of ``slots`` in order (``_cells``) and, when they are whole ``c``-byte
    cells each in byte order, those cells ``[n, 2]`` as (dword, cell of the dword); else None."""
    cells = _cells(slots, p, dps, B)[0]
    whole = len(cells) % c == 0 and all(
        cells[k][1] % c == 0 and cells[k:k + c] == [(cells[k][0], cells[k][1] + t) for t in range(c)]
        for k in range(0, len(cells), c))
    reg = np.array([(d, b // c) for d, b in cells[::c]], dtype=np.int64).reshape(-1, 2) if whole else None
    return cells, reg


@caches.memoize("synth.emulator.perm_cells", table=True)
def _perm_cells(selector, c: int) -> tuple[int, ...] | None:
    """What a v_perm_b32 with the uniform ``selector`` writes to each ``c``-byte cell of its result:
    cell ``k`` of ``{S0, S1}`` (S1 first, the selector bytes ``c * k ..`` in order), or ``8 // c``
    for the zero cell (selector bytes 12); None when some cell is neither (or the selector varies
    per lane)."""
    if np.ndim(selector):
        return None
    sel = _bytes_of(selector)
    out = []
    for g in (sel[h:h + c] for h in range(0, 4, c)):
        if g == [12] * c:
            out.append(8 // c)
        elif g[0] < 8 and g[0] % c == 0 and g == list(range(g[0], g[0] + c)):
            out.append(g[0] // c)
        else:
            return None
    return tuple(out)


def _renamed_cell_pairs(st: Mov, c: int, B: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The ``c``-byte cells a renaming of ``B``-byte slots copies, as (dst cells, src cells), each
    numbered by its byte offset / ``c`` (slot ``s`` is the bytes ``s * B ..``), when it copies whole
    cells, each from one whole cell in byte order and each dst cell once; else None."""
    n = min(len(st.dst), len(st.src))
    return _cell_pairs(tuple(st.dst[:n]), tuple(st.src[:n]), c, B)


@caches.memoize("synth.emulator.cell_pairs", size=1024, table=True)  # 1024: one per renaming instruction
def _cell_pairs(dst: tuple, src: tuple, c: int, B: int) -> tuple[np.ndarray, np.ndarray] | None:
    """``_renamed_cell_pairs`` of the renaming ``dst[i] <- src[i]`` (read-only arrays)."""
    n = len(dst)
    if len(set(dst)) < n:
        return None
    if c < B:  # a slot is B / c whole cells
        parts = B // c
        qd, qs = [d * parts + t for d in dst for t in range(parts)], [s * parts + t for s in src for t in range(parts)]
    else:
        k = c // B  # slots per cell: a dst cell needs all its k slots, from one src cell, in place
        src_cell: dict[int, int] = {}
        for d, s in zip(dst, src):
            if d % k != s % k or src_cell.setdefault(d // k, s // k) != s // k:
                return None
        if n != k * len(src_cell):
            return None
        qd, qs = list(src_cell), list(src_cell.values())
    out = np.array(qd, dtype=np.int64), np.array(qs, dtype=np.int64)
    for q in out:
        q.setflags(write=False)
    return out


def _code_bits(plan: Plan, c: int) -> tuple[int, int]:
    """(bits per element id, bits of the largest code of a ``c``-byte cell): ids are below ``2**n``
    (the tensor's elements); a code is at most ``2**(c / B * n)``, or ``2**(n + log2(B / c))`` for
    elements wider than a cell."""
    B = max(1, plan.element_bits // 8)
    n = max(plan.src.total_out_bits, plan.dst.total_out_bits)
    return n, (c // B * n if c >= B else n + (B // c).bit_length() - 1)


def _cell_codes(ids: np.ndarray, c: int, B: int, n_bits: int, dtype) -> np.ndarray:
    """``[W, 64, cells]``: the code of every ``c``-byte cell of slots holding the elements ``ids``
    ``[W, 64, slots]`` (byte tags ``TAG_BASE + 8 * id + byte``): ``1 + sum_j id_j * 2**(n_bits * j)``
    over the cell's ``c / B`` elements, or ``1 + (B / c) * id + part`` for part ``part`` of an element
    wider than a cell.  One code per cell content, none 0 (the zero cell) or UNDEF."""
    ids = ids.astype(dtype)
    if c < B:
        parts = B // c
        return (1 + parts * ids[..., None] + np.arange(parts, dtype=dtype)).reshape(ids.shape[0], WAVE, -1)
    g = ids.reshape(ids.shape[0], WAVE, -1, c // B)
    out = 1 + g[..., 0]
    for j in range(1, c // B):
        out += g[..., j] << (n_bits * j)
    return out


def _cell_run_holds(plan: Plan, want: np.ndarray) -> bool:
    """Quick ISA run on the widest cells the plan moves whole (``_cell_bytes``, 2 or 4 bytes): do
    the dst slots end up holding ``want``?  False when the plan moves no such cells, and when any
    check fails (the byte-cell run then finds what)."""
    c = _cell_bytes(plan)
    if c == 1:
        return False
    B = max(1, plan.element_bits // 8)
    n, bits = _code_bits(plan, c)
    if bits > 62:
        return False
    dtype = np.int32 if bits <= 30 else np.int64
    m = _Machine(_n_dwords(plan), plan.num_warps, max(plan.lds_bytes, 4), dtype, exact=False, cell_bytes=c)
    codes = _cell_codes(element_ids(plan.src, plan.num_warps)[:, :, : plan.slots_in], c, B, n, dtype)
    q = np.arange(codes.shape[2])  # cell q of the slots is cell q % cpd of dword q // cpd
    m.regs[q // m.cpd, :, :, q % m.cpd] = codes.transpose(2, 0, 1)
    runs = _lds_runs(m, plan)
    if runs is None:
        return False
    m.runs = runs
    try:
        _execute(m, plan)
    except (_RaceSuspect, PlanVerificationError, LayoutError):
        return False
    out = _cell_codes(want, c, B, n, dtype)
    q = np.arange(out.shape[2])
    return bool((m.regs[q // m.cpd, :, :, q % m.cpd] == out.transpose(2, 0, 1)).all())


def _lds_runs(m: _Machine, plan: Plan) -> dict[int, tuple] | None:
    """The LDS accesses of a quick run grouped into runs of consecutive stores, or loads, of one
    width (and transpose size): first step -> (store?, the step after the run, the register cells
    ``[n]`` of its accesses as dword and cell indices, their LDS cells ``[n, W, 64]`` in the same
    order).  Stores of a run read no register another writes, loads write distinct register cells
    and read no LDS another writes, so a run is one gather and one scatter; the race bookkeeping
    of a quick run (``_check_epoch``) needs only the cells each warp reads or writes.  A transpose
    load reads, per 16-lane group, the cells of its lanes' 8-byte reads, so those are its LDS
    cells (in the order its elements go to registers).  The addresses of all runs are checked at
    once.  ``ds_read_u8/u16`` (zero-extending) steps are not in runs.  None when an access is
    malformed, not 1, 2, 4, 8 or 16 bytes wide or (wider cells) not whole cells: the run on wider
    cells then fails, the byte-cell run goes step by step."""
    eb = plan.element_bits
    p, dps, B = slots_per_dword(eb), dwords_per_slot(eb), max(1, eb // 8)
    accesses = []  # (step, store?, register cells, width, transpose bits)
    addrs = []  # the address [W, 64] or [64] of each access
    for i, st in enumerate(plan.steps):
        store = isinstance(st, LdsStore)
        if not store and not isinstance(st, LdsLoad):
            continue
        if st.pair is not None and (st.width not in (4, 8) or not 0 < st.pair_offset <= 255):
            return None
        tr = 0 if store else st.transpose
        if st.width not in (1, 2, 4, 8, 16) or (tr and (8 * m.cb > tr or _transpose_error(st, plan.arch, B))):
            return None
        for slots, addr in [(st.src if store else st.dst, st.addr)] + ([(st.pair, st.pair_addr())] if st.pair else []):
            cells, reg = _register_cells(tuple(slots), m.cb, p, dps, B)
            if len(cells) != st.width or reg is None:
                return None
            if store and st.width < 4 and cells[0][1] != (2 if st.d16_hi else 0):
                return None
            if st.width >= 4 or store:
                accesses.append((i, store, reg, st.width, tr))
                addrs.append(addr)
    if not accesses:
        return {}
    a_all = _lane_tables(addrs, m.W)  # [accesses, W, 64]
    widths = np.array([x[3] for x in accesses])
    misaligned = np.bitwise_or.reduce(a_all.reshape(len(widths), -1), axis=1) & (widths - 1)
    if misaligned.any() or a_all.min() < 0 or (a_all.max(axis=(1, 2)) + widths).max() > m.lds_bytes:
        return None
    runs, k = {}, 0
    while k < len(accesses):
        (first, store, _, width, tr), j = accesses[k], k + 1
        while (j < len(accesses) and accesses[j][1] == store and accesses[j][3:] == (width, tr)
               and accesses[j][0] <= accesses[j - 1][0] + 1):
            j += 1
        reg = np.concatenate([x[2] for x in accesses[k:j]])  # [cells, 2]
        if not store and len(set((reg[:, 0] * m.cpd + reg[:, 1]).tolist())) < len(reg):
            return None
        a = a_all[k:j]
        if tr:  # the addresses of each lane's elements, and the cells of an element
            base, n = np.stack(transpose_element_addresses(a, tr), axis=1), tr // 8 // m.cb  # [accesses, E, W, 64]
        else:
            base, n = a[:, None], width // m.cb
        lds = (base >> (m.cb.bit_length() - 1))[:, :, None] + _BYTE_OFFSETS[:n, None, None]  # [.., E or 1, n, W, 64]
        runs[first] = (store, accesses[j - 1][0] + 1, reg[:, 0], reg[:, 1], lds.reshape(-1, m.W, WAVE))
        k = j
    return runs


def _lane_tables(tables: list, W: int) -> np.ndarray:
    """``[len(tables), W, 64]`` int64 from per-lane tables each ``[64]`` (every warp alike) or ``[W, 64]``."""
    if all(getattr(t, "ndim", 0) == 2 for t in tables):
        return np.array(tables, dtype=np.int64)
    return np.array([np.broadcast_to(t, (W, WAVE)) for t in tables], dtype=np.int64)


def _exec_run(m: _Machine, run: tuple, what: str) -> int:
    """Do a run of LDS stores or loads (``_lds_runs``; register and LDS cells ``[n, W, 64]`` in one
    order: no transposes); returns the step after it."""
    store, end, dwords, cells, lds = run
    if store:
        _lds_write(m, lds, m.regs[dwords, :, :, cells], what)
    else:
        m.regs[dwords, :, :, cells] = _lds_read(m, lds, what)
    return end


def _exec_store(m: _Machine, slots: list[int], addr, width: int, d16_hi: bool, p: int, dps: int, B: int,
                what: str) -> None:
    cells, c, whole = _cells(tuple(slots), p, dps, B)
    if len(cells) != width:
        raise PlanVerificationError(f"{what}: {len(cells)} bytes listed for a {width}-byte store")
    if width < 4 and cells[0][1] != (2 if d16_hi else 0):  # ds_write_b8/b16[_d16_hi]
        raise PlanVerificationError(f"{what}: a {width}-byte store reads byte {2 if d16_hi else 0} of its VGPR, "
                                    f"not byte {cells[0][1]}")
    if whole is not None:
        data = m.regs[whole].transpose(1, 2, 0, 3).reshape(m.W, -1)  # [W, 64 * width]
    else:
        data = m.regs[c[::m.cb, 0], :, :, c[::m.cb, 1] // m.cb].transpose(1, 2, 0).reshape(m.W, -1)
    _lds_write(m, _lds_access(m, addr, width, what), data, what)


def _exec_load(m: _Machine, slots: list[int], addr, width: int, p: int, dps: int, B: int, what: str) -> None:
    cells, c, whole = _cells(tuple(slots), p, dps, B)
    if len(cells) != width:
        raise PlanVerificationError(f"{what}: {len(cells)} bytes listed for a {width}-byte load")
    data = _lds_read(m, _lds_access(m, addr, width, what), what).reshape(m.W, WAVE, width // m.cb)
    if width < 4:  # ds_read_u8/u16: zero-extended into the whole VGPR
        if cells[0][1] != 0:
            raise PlanVerificationError(f"{what}: a {width}-byte load fills byte 0 of its VGPR")
        m.regs[cells[0][0]] = 0
    if whole is not None:
        m.regs[whole] = data.reshape(m.W, WAVE, -1, m.cpd).transpose(2, 0, 1, 3)
    else:
        m.regs[c[::m.cb, 0], :, :, c[::m.cb, 1] // m.cb] = data.transpose(2, 0, 1)


@caches.memoize("synth.emulator.cells", size=4096, table=True)  # 4096: one per register operand
def _cells(slots: tuple, p: int, dps: int, B: int) -> tuple[list, np.ndarray, slice | np.ndarray | None]:
    """The (dword, byte) cells of ``slots`` in order, as a list and an array ``[n, 2]``, and the dwords
    they fill when they are whole dwords, each in byte order: a slice for ``d, d+1, ..``, else an
    index array (None when they are not whole dwords)."""
    cells = [c for s in slots for c in _slot_bytes(s, p, dps, B)]
    dwords = [d for d, _ in cells[::4]]
    if len(cells) % 4 or cells != [(dwords[i // 4], i % 4) for i in range(len(cells))]:
        whole = None
    elif dwords == list(range(dwords[0], dwords[0] + len(dwords))):
        whole = slice(dwords[0], dwords[0] + len(dwords))
    else:
        whole = np.array(dwords, dtype=np.int64)
    return cells, np.array(cells, dtype=np.int64).reshape(-1, 2), whole


def _transpose_error(st: LdsLoad, arch: str, B: int) -> str:
    """Why a transpose load ``st`` of ``B``-byte elements cannot run on ``arch`` ("" when it can)."""
    if not get_target(arch).has_ds_read_tr:
        return f"transpose loads exist only on gfx950, not on {arch}"
    if st.transpose not in (8, 16) or st.width != 8 or B != st.transpose // 8 or st.pair is not None:
        return (f"a ds_read_b64_tr_b{st.transpose} moves 8 bytes of {st.transpose}-bit elements, here "
                f"{B * 8}-bit ones in {st.width} bytes")
    if len(st.dst) != 64 // st.transpose:
        return f"{len(st.dst)} slots listed for {64 // st.transpose} elements"
    return ""


def _exec_transpose_load(m: _Machine, st: LdsLoad, arch: str, p: int, dps: int, B: int, what: str) -> None:
    """gfx950 ``ds_read_b64_tr_b{8,16}``: every lane supplies an 8-byte aligned address; lane ``l``
    element ``j`` is an element of the read of a lane of its 16-lane group
    (plan.transpose_element_addresses, the [I] lane model of linlayout.hw.lds).  Each element lies
    inside that lane's checked 8-byte read (an aligned 8-byte address plus a multiple of the
    element size below 8), so it is aligned and in range."""
    error = _transpose_error(st, arch, B)
    if error:
        raise PlanVerificationError(f"{what}: {error}")
    _lds_read(m, _lds_access(m, st.addr, 8, what), what)  # the lanes' own 8-byte reads
    a = np.broadcast_to(np.asarray(st.addr, dtype=np.int64), (m.W, WAVE))
    elem = np.stack(transpose_element_addresses(a, st.transpose), axis=-1)  # [W, 64, slots]
    data = m.lds[elem[..., None] + _BYTE_OFFSETS[:B]].reshape(m.W, WAVE, -1)  # [W, 64, slots * bytes]
    _, c, _ = _cells(tuple(st.dst), p, dps, B)
    m.regs[c[:, 0], :, :, c[:, 1]] = data.transpose(2, 0, 1)


def _exec_mov(m: _Machine, st: Mov, p: int, dps: int, B: int, what: str) -> None:
    if st.kind == "v_perm_b32":
        s0, s1 = st.operands
        uniform = np.ndim(st.selector) == 0
        selb = (_bytes_of(st.selector) if uniform  # [4], or [64, 4] per lane
                else (np.asarray(st.selector, dtype=np.int64)[..., None] >> (8 * np.arange(4))) & 0xFF)
        m.regs[st.dst_dword] = _perm(m, s0, s1, st.selector, selb)
        for d, s in zip(st.dst, st.src):  # the declared slot copies must be what the selector did
            for (dd, db), (sd, sb) in zip(_slot_bytes(d, p, dps, B), _slot_bytes(s, p, dps, B)):
                if dd != st.dst_dword or not uniform or not _reads(selb[db], sd, sb, s0, s1):
                    raise PlanVerificationError(f"{what}: the selector does not copy slot {s} to slot {d}")
        return
    pairs = _paired(st.dst, st.src, p, dps, what)
    if st.kind == "v_mov":
        # a register step of 64-bit elements runs once per dword half: one slot, two v_mov_b32
        if len(pairs) != dps or (dps == 2 and len(st.dst) != 1):
            raise PlanVerificationError(f"{what}: one v_mov_b32 moves exactly one register (one slot per half "
                                        f"for 64-bit elements)")
        for d, s in pairs:
            m.regs[d] = m.regs[s]
        return
    # a renaming: bookkeeping of values (parallel copy of the listed elements)
    if m.cb > 1:  # whole cells (_renamed_cell_pairs)
        qd, qs = _renamed_cell_pairs(st, m.cb, B)
        m.regs[qd // m.cpd, :, :, qd % m.cpd] = m.regs[qs // m.cpd, :, :, qs % m.cpd]
        return
    dd, db, sd, sb = _renamed_cells(st, p, dps, B)
    if len(set((4 * dd + db).tolist())) == dd.size:  # every cell written once: one gather, one scatter
        m.regs[dd, :, :, db] = m.regs[sd, :, :, sb]
        return
    src_vals = m.regs[sd, :, :, sb]
    for k in range(dd.size):  # in order: a cell listed twice keeps the later value
        m.regs[dd[k], :, :, db[k]] = src_vals[k]


def _bytes_of(value) -> list[int]:
    """The four bytes of a 32-bit value, the lowest first."""
    return [(int(value) >> (8 * i)) & 0xFF for i in range(4)]


def _perm(m: _Machine, s0: int, s1: int, selector, selector_bytes) -> np.ndarray:
    """``v_perm_b32`` of the registers ``s0``, ``s1``: on byte cells with the selector's bytes, on wider
    cells by the choice of each cell (``_perm_cells``: cell ``k`` of {S1, S0}, or the zero cell)."""
    if m.cb == 1:
        return v_perm_b32(m.regs[s0], m.regs[s1], selector_bytes)
    src, out = (m.regs[s1], m.regs[s0]), np.empty_like(m.regs[s0])
    for h, k in enumerate(_perm_cells(selector, m.cb)):
        out[..., h] = src[k // m.cpd][..., k % m.cpd] if k < 2 * m.cpd else 0
    return out


def _renamed_cells(st: Mov, p: int, dps: int, B: int) -> tuple[np.ndarray, ...]:
    """(dst dword, dst byte, src dword, src byte) of every cell a renaming copies, flat."""
    n = min(len(st.dst), len(st.src))
    (dd, db), (sd, sb) = (_cell_index(slots[:n], p, dps, B) for slots in (st.dst, st.src))
    return tuple(x.reshape(-1) for x in (dd, db, sd, sb))


def _reads(code: int, sd: int, sb: int, s0: int, s1: int) -> bool:
    """Does the v_perm selector byte ``code`` read byte ``sb`` of register ``sd`` (S1: 0..3, S0: 4..7)?"""
    return (sd == s1 and code == sb) or (sd == s0 and code == 4 + sb)


def _exec_permsel(m: _Machine, st: PermSelect, p: int, dps: int, B: int, what: str) -> None:
    cond = np.asarray(st.cond).astype(bool)  # [64] or [W, 64]
    s0, s1 = st.operands
    sels = [_bytes_of(sel) for sel in (st.sel0, st.sel1)]
    # the selector VGPR holds sels[1] where cond, else sels[0]: each lane's result is the one of its selector
    res0, res1 = (_perm(m, s0, s1, sel, selb) for sel, selb in zip((st.sel0, st.sel1), sels))
    m.regs[st.dst_dword] = np.where(cond[..., None], res1, res0)
    for srcs, selb in ((st.a, sels[0]), (st.b, sels[1])):  # declared copies must be what each selector does
        for d, s in zip(st.dst, srcs):
            for (dd, db), (sd, sb) in zip(_slot_bytes(d, p, dps, B), _slot_bytes(s, p, dps, B)):
                code = selb[db]
                if dd != st.dst_dword or (code < 8 and not _reads(code, sd, sb, s0, s1)):
                    raise PlanVerificationError(f"{what}: the selector does not copy slot {s} to slot {d}")


def _exec_lane(m: _Machine, st: Lane, d: int, s: int, what: str) -> np.ndarray:
    fam = st.kind.split(":", 1)[0]
    if fam == "dpp":
        return _exec_dpp(m, d, s, int(st.isa["ctrl"]), int(st.isa.get("row_mask", 0xF)),
                         int(st.isa.get("bank_mask", 0xF)), int(st.isa.get("bound_ctrl", 0)), None, None)
    if fam == "ds_swizzle":
        sl = _swz_cached(int(st.isa["offset"]))
    elif fam == "ds_bpermute":
        sl = bpermute_src_lanes(st.isa["addr"], int(st.isa.get("offset", 0)))
    else:
        raise PlanVerificationError(f"{what}: lane kind {st.kind!r} has no ISA model")
    m.regs[d] = _gather(m.regs[s], sl)
    return sl


def _exec_fused(m: _Machine, st: FusedDpp, p: int, dps: int, what: str) -> None:
    keep = np.asarray(st.keep).astype(bool)  # [64] or [W, 64]
    ctrl, bc = int(st.isa["ctrl"]), int(st.isa.get("bound_ctrl", 0))
    rm, bm = int(st.isa.get("row_mask", 0xF)), int(st.isa.get("bank_mask", 0xF))
    for (d, o), (_, s) in zip(_paired(st.dst, st.own, p, dps, what), _paired(st.dst, st.src, p, dps, what)):
        if st.form == "v_mov_b32_dpp":
            if d != o:
                raise PlanVerificationError(f"{what}: a masked v_mov_b32_dpp writes its 'old' register in place")
            if (_masks_enabled(rm, bm)[None, :] == keep).any():
                raise PlanVerificationError(f"{what}: the row/bank masks do not disable exactly the kept lanes")
            sl = _exec_dpp(m, d, s, ctrl, rm, bm, bc, None, None)
        elif st.form == "v_cndmask_b32_dpp":
            if rm != 0xF or bm != 0xF or not bc:
                raise PlanVerificationError(f"{what}: a DPP v_cndmask must have full masks and bound_ctrl:1")
            sl = _exec_dpp(m, d, s, ctrl, rm, bm, bc, keep, o)
        else:
            raise PlanVerificationError(f"{what}: unknown fused form {st.form!r}")
        _check_declared(np.where(keep, -1, st.src_lane), sl, m.W, what)
        if ((~keep) & (sl < 0)).any():
            raise PlanVerificationError(f"{what}: a lane that takes the moved value has no DPP source")


# ====================================================================== certificate executor
def run_certificate(cert: dict) -> np.ndarray:
    """Execute a plan certificate at element level; returns ``[W, 64, n_slots]`` element ids (-1 undefined)."""
    W, wave = int(cert["num_warps"]), int(cert["wave_size"])
    src = LinearLayout.from_json(cert["src"])
    eb = int(cert["element_bits"])
    B = max(1, eb // 8)
    n = max(int(cert["slots_in"]), int(cert["slots_out"]))
    for st in cert["steps"]:
        for k in ("dst", "src", "a", "b", "vdst", "src0"):
            if isinstance(st.get(k), list) and st[k] and isinstance(st[k][0], int):
                n = max(n, max(st[k]) + 1)
    state = np.full((W, wave, n), UNDEF, dtype=np.int64)
    state[:, :, : int(cert["slots_in"])] = element_ids(src, W)
    top = 1
    for st in cert["steps"]:
        if st["op"] in ("lds_store", "lds_load"):
            n_el = len(st["src"] if st["op"] == "lds_store" else st["dst"])
            top = max(top, int(np.max(st["addr"])) // B + n_el + 1)
    lds = np.full(top, UNDEF, dtype=np.int64)  # one cell per element-sized LDS location
    for st in cert["steps"]:
        op = st["op"]
        if op == "mov":
            state[:, :, st["dst"]] = state[:, :, st["src"]].copy()
        elif op == "select":
            c = _lanes_of(st["cond"], W).astype(bool)[..., None]
            state[:, :, st["dst"]] = np.where(c, state[:, :, st["b"]], state[:, :, st["a"]])
        elif op == "lane":
            t = _lanes_of(st["src_lane"], W)
            vals = np.take_along_axis(state[:, :, st["src"]], np.clip(t, 0, wave - 1)[..., None], axis=1)
            state[:, :, st["dst"]] = np.where((t < 0)[..., None], UNDEF, vals)
        elif op == "permlane_swap":
            vd, s0 = permlane_swap(st["kind"], state[:, :, st["vdst"]], state[:, :, st["src0"]])
            state[:, :, st["vdst"]], state[:, :, st["src0"]] = vd, s0
        elif op in ("lds_store", "lds_load"):
            a = _lanes_of(st["addr"], W)
            if (a % B).any():
                raise LayoutError(f"certificate: an LDS address is not a multiple of the element size {B}")
            base = a // B
            slots = st["src"] if op == "lds_store" else st["dst"]
            for k, sl in enumerate(slots):
                if op == "lds_store":
                    lds[base + k] = state[:, :, sl]
                else:
                    state[:, :, sl] = lds[base + k]
        elif op == "barrier":
            pass
        else:
            raise LayoutError(f"certificate step op {op!r} is unknown")
    return state


# ====================================================================== verification
@dataclass
class VerifyResult:
    ok: bool
    message: str = ""


def _final_ids_from_regs(plan: Plan, regs: np.ndarray) -> np.ndarray:
    """Element ids held by the dst slots after an ISA run (-1 where the bytes are not one element)."""
    eb = plan.element_bits
    p, dps, B = slots_per_dword(eb), dwords_per_slot(eb), max(1, eb // 8)
    if not plan.slots_out:
        return np.full(regs.shape[1:3] + (0,), UNDEF, dtype=np.int64)
    if plan.slots_out % p == 0:  # slots fill dwords 0.. in order: cell (d, b) is byte 4d + b of the run
        g = regs[: plan.slots_out * B // 4].transpose(0, 3, 1, 2).reshape(plan.slots_out, B, *regs.shape[1:3])
    else:
        d_i, b_i = _cell_index(range(plan.slots_out), p, dps, B)
        g = regs[d_i, :, :, b_i]  # [slots, bytes, W, 64]
    ident = (g[:, 0] - TAG_BASE) // 8
    k = np.arange(g.shape[1])[None, :, None, None]
    ok = (g[:, 0] >= TAG_BASE) & (g == TAG_BASE + 8 * ident[:, None] + k).all(axis=1)
    return np.moveaxis(np.where(ok, ident, UNDEF), 0, -1)


def _holds_ids(plan: Plan, regs: np.ndarray, want: np.ndarray) -> bool:
    """Do the dst slots after an ISA run hold exactly the elements ``want`` ``[W, 64, slots]`` (every
    byte the tag ``TAG_BASE + 8 * id + byte``)?  When the slots fill whole dwords, the expected
    cells are compared in place; otherwise through ``_final_ids_from_regs``."""
    eb = plan.element_bits
    p, B = slots_per_dword(eb), max(1, eb // 8)
    if not plan.slots_out or plan.slots_out % p:
        return not (_final_ids_from_regs(plan, regs) != want).any()
    tags = (TAG_BASE + 8 * want.astype(regs.dtype))[..., None] + np.arange(B, dtype=regs.dtype)  # [W, 64, slots, B]
    n_dw = plan.slots_out * B // 4
    return bool((regs[:n_dw] == tags.reshape(tags.shape[0], WAVE, n_dw, 4).transpose(2, 0, 1, 3)).all())


def verify(plan: Plan, certificate: bool = True) -> VerifyResult:
    """Run ``plan`` at ISA level and (``certificate``) at certificate level; both must leave ``dst`` in
    the dst slots.  A plan moving whole 2- or 4-byte cells only runs on such cells first
    (``_cell_run_holds``); any other plan, or a failure there, runs on byte cells, which tell what
    went wrong."""
    want = expected_ids(plan)
    if want.shape[2] != plan.slots_out:
        return VerifyResult(False, f"dst has {want.shape[2]} registers but the plan fills {plan.slots_out}")
    if not _cell_run_holds(plan, want):
        failure = _byte_run_failure(plan, want)
        if failure:
            return VerifyResult(False, failure)
    if not certificate:
        return VerifyResult(True, "")
    state = run_certificate(plan.to_certificate(raw=True))[:, :, : plan.slots_out]
    bad = state != want
    if bad.any():
        w, l, s = map(int, np.argwhere(bad)[0])
        return VerifyResult(False, f"certificate run: warp {w} lane {l} slot {s} holds element "
                                   f"{int(state[w, l, s])}, expected {int(want[w, l, s])}")
    return VerifyResult(True, "")


def _byte_run_failure(plan: Plan, want: np.ndarray) -> str:
    """What goes wrong in the ISA run on byte cells ("" when the dst slots end up holding ``want``)."""
    try:
        regs = run_isa(plan)
    except (PlanVerificationError, LayoutError) as e:
        return f"ISA execution failed: {e}"
    if _holds_ids(plan, regs, want):
        return ""
    got = _final_ids_from_regs(plan, regs)
    bad = got != want
    w, l, s = map(int, np.argwhere(bad)[0])
    return (f"ISA run: warp {w} lane {l} slot {s} holds element {int(got[w, l, s])}, "
            f"expected {int(want[w, l, s])} ({int(bad.sum())} slots wrong)")
