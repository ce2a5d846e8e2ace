"""A lane-accurate model of one workgroup that executes conversion plans.

Two executors:

* ``run_isa(plan)``: the ISA level.  Registers are 32-bit VGPRs of every lane
  of every warp, held as 4 *byte cells* each; LDS is a byte array.  Every step
  runs itself (``Step.run``, linlayout.synth.steps) through the primitives of
  ``_Machine``, as its hardware instruction with the parameters it carries (DPP control
  with row_mask/bank_mask/bound_ctrl, ds_swizzle offset in all four modes,
  ds_bpermute byte addresses with ``(addr + offset) / 4 % wave_size``, the gfx950
  permlane swaps, v_perm_b32 byte selectors, v_cndmask VCC, ds_write/ds_read
  widths and alignment).  LDS accesses are checked for races between warps
  (no barrier between a write and another warp's read or write of the same
  byte) -- within one wave LDS instructions are taken to complete in order
  (``LDS_IN_ORDER_PER_WAVE``, [I]).  A write that leaves a byte's data as it is
  races with nothing, and a warp reading a byte it wrote itself since the barrier
  reads its own data, which every other write of that byte since the barrier
  matched (``_lds_write``, ``_lds_read``).  On a target whose lanes are not in lockstep
  (``Target.lockstep_lanes`` False: NVIDIA) the run also checks the order between the lanes
  of one warp (``_check_lane_order``): a byte one lane writes is read or overwritten by
  another lane of its warp, and a byte one lane reads is overwritten by another, only after a
  barrier of either scope.
* ``run_certificate(cert)``: the element level of docs/contract.md section 4, on
  the JSON certificate alone (no ISA parameters needed).

Byte cells are int32 (int64 when a tag does not fit): values ``0..255`` are
literal bytes, values ``>= 256`` are symbolic tags (one per element byte) so
that a run proves where every byte went; ``UNDEF = -1`` marks never-written
bytes, and v_perm's sign selectors on a tag produce ``-tag`` (a symbolic sign
byte).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linlayout import LayoutError, LinearLayout, caches
from linlayout.hw.lds import access_alignment, misaligned_address
from linlayout.hw.targets import get_target

from .isa_lanes import (bpermute_src_lanes, dpp8_src_lanes, dpp_src_lanes, matrix_row_bytes, movmatrix_sources,
                        permlane16_src_lanes, permlane_swap, prmt_b32, shfl_sync, swizzle_src_lanes, v_perm_b32)
from .plan import Plan
from .one_copy import canonical_lanes
from .steps import (PlanVerificationError, dword_pairs, dwords_per_slot, prmt_as_perm, slot_dwords,
                    slots_per_dword, transpose_element_addresses)
from .span import span_table

__all__ = [
    "LDS_IN_ORDER_PER_WAVE", "PlanVerificationError", "UNDEF", "VerifyResult", "bpermute_src_lanes", "checked_slots",
    "dpp_src_lanes", "element_ids", "expected_ids", "permlane_swap", "run_certificate", "run_isa",
    "swizzle_src_lanes", "v_perm_b32", "verify",
]

UNDEF = -1
TAG_BASE = 256

# [I] LDS instructions of one wave are processed in issue order, so a wave reading
# back (or overwriting) its own LDS data needs no barrier, only s_waitcnt.
LDS_IN_ORDER_PER_WAVE = True


# ====================================================================== tags
def element_ids(layout: LinearLayout, num_warps: int) -> np.ndarray:
    """``[warps, lanes, slots]`` tensor index (flattened, first out dim least significant) per slot
    (read-only); ``lanes`` is the layout's lane size (the wave size of a normalized layout).  The
    index of slot ``r`` of lane ``l`` of warp ``w`` is the XOR of the axis tables ``_axis_ids``."""
    return _element_ids(*_axis_key(layout, num_warps))


def _axis_key(layout: LinearLayout, num_warps: int) -> tuple:
    """What the ids are made of: the in dims with their sizes and the columns, flattened over the
    layout's own out dims (whose order the key holds: layouts equal up to out-dim order flatten
    differently), not the layout (whose hash is not memoized yet on a layout just read)."""
    return (tuple(layout.in_dims), tuple(layout.out_dims), tuple(layout.columns()), num_warps,
            layout.in_dim_size("lane"), layout.in_dim_size("register"))


@caches.memoize("synth.emulator.element_ids", size=256)  # 256: arrays of every element of a layout
def _element_ids(*key) -> np.ndarray:
    warp, lane, register = _axis_ids(*key)
    flat = warp[:, None, None] ^ lane[None, :, None] ^ register[None, None, :]
    flat.setflags(write=False)
    return flat


@caches.memoize("synth.emulator.axis_ids", size=256)  # 256: one per layout, as element_ids
def _axis_ids(in_dims: tuple, out_dims: tuple, cols: tuple, num_warps: int, lanes: int,
              n_reg: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(warp [num_warps], lane [lanes], register [n_reg])`` int64: each axis index's image (the XOR of
    the columns of its set bits; warps past the layout's warp size repeat its pattern), read-only."""
    lengths = {"warp": num_warps, "lane": lanes, "register": n_reg}
    part = {}
    j = 0
    for name, size in in_dims:
        k = size.bit_length() - 1
        if name in lengths:  # index x takes the images of its low k bits (higher warps repeat the pattern)
            table = span_table(cols[j:j + k])
            part[name] = table if size == lengths[name] else table[np.arange(lengths[name]) & (size - 1)]
        j += k
    out = tuple(part[name] if name in part else np.zeros(n, dtype=np.int64) for name, n in lengths.items())
    for t in out:
        t.setflags(write=False)
    return out


def expected_ids(plan: Plan) -> np.ndarray:
    """``[warps, lanes, slots]`` the element ids ``plan.dst`` asks for, its out dims taken in ``plan.src``'s
    order (the order the src elements are tagged in; a certificate may list them in another)."""
    return element_ids(_expected_layout(plan), plan.num_warps)


def _expected_layout(plan: Plan) -> LinearLayout:
    """``plan.dst`` with its out dims in ``plan.src``'s order (``expected_ids``), both sides checked to
    have the plan's wave size in lanes and the same out dims."""
    dst, names = plan.dst, plan.src.out_dim_names
    for side, lay in (("src", plan.src), ("dst", dst)):
        if lay.in_dim_size("lane") != plan.wave_size:
            raise LayoutError(f"{side} has lane size {lay.in_dim_size('lane')}, "
                              f"the plan's wave size is {plan.wave_size}")
    if dst.out_dim_names != names:
        if sorted(dst.out_dims) != sorted(plan.src.out_dims):
            raise LayoutError(f"src out dims {plan.src.out_dims} and dst out dims {dst.out_dims} differ")
        dst = dst.transpose_outs(names)
    return dst


# ====================================================================== ISA executor
_dpp_cached = caches.memoize("synth.emulator.dpp_src_lanes", table=True)(dpp_src_lanes)
_swz_cached = caches.memoize("synth.emulator.swizzle_src_lanes", table=True)(swizzle_src_lanes)
_BYTE_OFFSETS = np.arange(16)
MATRIX_OPS = ("ldmatrix", "stmatrix")  # shared-memory steps the machine runs by their own oracle


@caches.memoize("synth.emulator.masks_enabled", table=True)
def _masks_enabled(row_mask: int, bank_mask: int, wave_size: int) -> np.ndarray:
    lanes = np.arange(wave_size)
    return (((row_mask >> (lanes >> 4)) & 1) & ((bank_mask >> ((lanes >> 2) & 3)) & 1)).astype(bool)


class _RaceSuspect(Exception):
    """The quick check of an epoch cannot rule a race out (or a step failed): run again exactly."""


class _Machine:
    """Registers ``[n_dwords, W, wave_size, 4 / cell_bytes]`` cells; LDS cells with race bookkeeping.

    Byte cells (``cell_bytes`` 1) hold one byte each.  Wider cells (``cell_bytes`` 2 or 4) hold a
    code of their bytes (``_cell_codes``), for plans whose steps move such cells whole only
    (``_cell_bytes``): every step then does to a cell's code what it does to its bytes.
    ``exact``: every LDS access checks and marks the cells it touches.  Otherwise (quick) the
    accesses of an epoch are only recorded and checked together at its barrier (``_check_epoch``),
    which flags everything the exact checks could report (and possibly more).

    The public methods are the primitives a step's ``run`` calls (linlayout.synth.steps): one
    instruction (or its check) each, with the ISA semantics of this module."""

    def __init__(self, n_dw: int, W: int, wave_size: int, lds_bytes: int, element_bits: int, arch: str,
                 cell: type = np.int64, exact: bool = True, cell_bytes: int = 1) -> None:
        self.W = W
        self.wave = wave_size
        self.exact = exact
        self.arch = arch
        self.target = get_target(arch)
        if self.target.wave_size != wave_size:
            raise LayoutError(f"a plan of {wave_size}-lane waves for {arch}, whose waves have {self.target.wave_size}")
        self.layout = _slot_layout(element_bits)  # where slots sit in the registers
        self.slots_per_dword, self.dwords_per_slot, self.element_bytes = self.layout
        self.cb, self.cpd = cell_bytes, 4 // cell_bytes  # bytes per cell, cells per dword
        self.lds_bytes = lds_bytes
        lds_size = -(-lds_bytes // cell_bytes)
        # quick: (cells, data) of each write, cells of each read (``[..., W, k]``: the warp axis is -2)
        self.epoch_writes: list[tuple[np.ndarray, np.ndarray]] = []
        self.epoch_reads: list[np.ndarray] = []
        self.runs: dict[int, tuple] = {}  # quick: runs of LDS steps done at once (_lds_runs)
        self.regs = np.full((n_dw, W, wave_size, self.cpd), UNDEF, dtype=cell)
        self.lds = np.full(lds_size, UNDEF, dtype=cell)
        mask = np.int32 if W < 31 else np.int64  # a bit per warp
        self.w_warps = np.zeros(lds_size, dtype=mask)  # bitmask of warps that wrote since the last barrier
        self.r_warps = np.zeros(lds_size, dtype=mask)  # bitmask of warps that read since the last barrier
        self.rewritten = np.zeros(lds_size, dtype=bool)  # written since the last barrier, then changed again
        self.warp_bit = (1 << np.arange(W, dtype=mask))[:, None]
        self.wrote = self.read = False  # some LDS write / read since the last barrier

    def _has(self, present: bool, instruction: str) -> None:
        """A step using an instruction the target lacks is a LayoutError naming the target."""
        if not present:
            raise LayoutError(f"{self.arch} has no {instruction} instruction")

    # ------------------------------------------------------------ registers
    def pairs(self, dst: list[int], src: list[int], what: str) -> list[tuple[int, int]]:
        """(dst dword, src dword) of a register step (steps.dword_pairs, the one pairing rule, once per
        pair of operand lists: ``_dword_pairs``); lists breaking the rule raise its LayoutError."""
        pairs = _dword_pairs(tuple(dst), tuple(src), self.slots_per_dword, self.dwords_per_slot)
        if pairs is None:
            dword_pairs(dst, src, self.slots_per_dword, self.dwords_per_slot, what)  # raises, naming the step
            raise RuntimeError(f"{what}: dword_pairs refused the operands once and accepted them now")
        return list(pairs)

    @staticmethod
    def at_once(pairs: list[tuple[int, ...]]) -> list[tuple]:
        """The register tuples ``(dst dword, src dword, ..)`` of a step's instructions (one per tuple, in
        order) as one tuple of dword lists, when doing them all at once (every source read before any
        destination is written) is doing them in order: no instruction reads a dword an earlier one
        wrote.  Else (or for one tuple) the tuples themselves.  The primitives below take a dword or such
        a list."""
        if len(pairs) < 2:
            return pairs
        written: set[int] = set()
        for d, *srcs in pairs:
            if written.intersection(srcs):
                return pairs
            written.add(d)
        return [tuple(list(x) for x in zip(*pairs))]

    def copy(self, d: int, s: int) -> None:
        """``v_mov_b32 v[d], v[s]``."""
        self.regs[d] = self.regs[s]

    def rename(self, dst: list[int], src: list[int]) -> None:
        """A renaming: bookkeeping of values (parallel copy of the listed elements; whole cells when the
        cells are wider than a byte, ``_renamed_cell_pairs``)."""
        if self.cb > 1:
            dd, dc, sd, sc = _renamed_cell_pairs(dst, src, self.cb, self.element_bytes)
            self.regs[dd, :, :, dc] = self.regs[sd, :, :, sc]
            return
        n = min(len(dst), len(src))
        if not n:
            return
        d_cells, s_cells = (_cells(tuple(slots[:n]), *self.layout)[1] for slots in (dst, src))  # [n * bytes, 2] each
        if len(set(dst[:n])) == n:  # every cell written once (distinct slots, distinct cells): one gather, one scatter
            self.regs[d_cells[:, 0], :, :, d_cells[:, 1]] = self.regs[s_cells[:, 0], :, :, s_cells[:, 1]]
            return
        (dd, db), (sd, sb) = (cells.reshape(n, -1, 2).transpose(2, 0, 1) for cells in (d_cells, s_cells))  # [n, bytes]
        src_vals = self.regs[sd, :, :, sb]
        for k in range(n):  # in order: a slot listed twice keeps the later value
            self.regs[dd[k], :, :, db[k]] = src_vals[k]

    def select(self, d: int, a: int, b: int, cond) -> None:
        """``v_cndmask_b32 v[d], v[a], v[b]`` with VCC = ``cond`` (``[lanes]`` or ``[W, lanes]``)."""
        vcc = np.asarray(cond).astype(bool)[..., None]
        self.regs[d] = np.where(vcc, self.regs[b], self.regs[a])

    def movrels(self, d: int, s: int, shifts: list[int], what: str) -> None:
        """``v_movrels_b32 v[d], v[s]`` with ``m0 = shifts[w]`` in warp ``w`` (one register offset per warp: a
        wave-uniform index), reading ``v[s + shifts[w]]`` in every lane of warp ``w``."""
        self._has(self.target.has_movrels, "v_movrels_b32")
        if len(shifts) != self.W:
            raise LayoutError(f"{what}: {len(shifts)} warp shifts for {self.W} warps")
        read = [s + k for k in shifts]
        if min(read) < 0 or max(read) >= len(self.regs):
            raise LayoutError(f"{what}: reads register v{min(read) if min(read) < 0 else max(read)}, outside the "
                              f"plan's {len(self.regs)}")
        self.regs[d] = self.regs[read, np.arange(self.W)]

    def v_perm(self, d: int, operands: tuple[int, int], selector) -> None:
        """``v_perm_b32 v[d], v[S0], v[S1], selector`` (uniform, or one selector per lane ``[lanes]``)."""
        self._has("prmt" not in self.target.lane_ops, "v_perm_b32")
        s0, s1 = operands
        if d == s0 or d == s1:  # the result replaces an operand: made apart first
            self.regs[d] = _perm(self, s0, s1, selector)
        else:
            _perm(self, s0, s1, selector, out=self.regs[d])

    def v_perm_select(self, d: int, operands: tuple[int, int], sel0: int, sel1: int, cond) -> None:
        """``v_perm_b32`` whose selector VGPR holds ``sel1`` where ``cond``, else ``sel0``: each lane's
        result is the one of its selector."""
        self._has("prmt" not in self.target.lane_ops, "v_perm_b32")
        s0, s1 = operands
        res0, res1 = (_perm(self, s0, s1, sel) for sel in (sel0, sel1))
        self.regs[d] = np.where(np.asarray(cond).astype(bool)[..., None], res1, res0)

    def prmt(self, d: int, operands: tuple[int, int], selector: int) -> None:
        """PTX ``prmt.b32 r[d], r[a], r[b], selector`` (generic mode, uniform selector); on wider cells by
        the cells its v_perm_b32 equivalent chooses (S0 = b, S1 = a)."""
        self._has("prmt" in self.target.lane_ops, "prmt")
        self.regs[d] = _prmt(self, operands, selector)

    def prmt_select(self, d: int, operands: tuple[int, int], sel0: int, sel1: int, cond) -> None:
        """``prmt.b32`` whose selector register holds ``sel1`` where ``cond``, else ``sel0``."""
        self._has("prmt" in self.target.lane_ops, "prmt")
        res0, res1 = (_prmt(self, operands, sel) for sel in (sel0, sel1))
        self.regs[d] = np.where(np.asarray(cond).astype(bool)[..., None], res1, res0)

    def check_perm_copies(self, dst: list[int], src: list[int], d: int, operands: tuple[int, int], selector,
                          what: str, constants: bool) -> None:
        """The declared slot copies ``src[i] -> dst[i]`` must be what the (uniform) ``selector`` of a
        ``v_perm_b32`` into ``v[d]`` does (``constants``: a selector byte choosing a constant is free)."""
        uniform = int(selector) if _uniform(selector) else None
        i = _uncopied_slot(tuple(dst), tuple(src), d, tuple(operands), uniform, self.layout, constants)
        if i is not None:
            raise PlanVerificationError(f"{what}: the selector does not copy slot {src[i]} to slot {dst[i]}")

    # ------------------------------------------------------------ lanes
    def dpp(self, d: int, s: int, ctrl: int, row_mask: int, bank_mask: int, bound_ctrl: int,
            vcc: np.ndarray | None = None, s1: int | None = None) -> np.ndarray:
        """``v_mov_b32_dpp`` (vcc None) or ``v_cndmask_b32_dpp v[d], v[s](DPP), v[s1], vcc``; returns the
        source lanes.  An out-of-range source lane reads 0 ([I]: the meaning of bound_ctrl:1) and,
        with bound_ctrl:0, the lane is not written.  Lanes disabled by row_mask/bank_mask keep v[d]."""
        self._has(self.target.has_lane_family("dpp"), "DPP")
        sl = _dpp_cached(ctrl, self.wave, "rdna" if self.target.family == "rdna" else "cdna")
        moved = _gather(self.regs[s], sl)
        enabled = _masks_enabled(row_mask, bank_mask, self.wave)
        if not bound_ctrl:
            enabled = enabled & (sl >= 0)
        res = moved if vcc is None else np.where(vcc[..., None], self.regs[s1], moved)
        self.regs[d] = np.where(enabled[None, :, None], res, self.regs[d])
        return sl

    def dpp_enabled(self, row_mask: int, bank_mask: int) -> np.ndarray:
        """``[wave_size]`` the lanes a DPP instruction's row and bank masks enable."""
        return _masks_enabled(row_mask, bank_mask, self.wave)

    def ds_swizzle(self, d: int, s: int, offset: int) -> np.ndarray:
        """``ds_swizzle_b32 v[d], v[s] offset:<offset>``; returns the source lanes."""
        self._has(self.target.has_lane_family("ds_swizzle"), "ds_swizzle_b32")
        sl = _swz_cached(offset, self.wave)
        self.regs[d] = _gather(self.regs[s], sl)
        return sl

    def ds_bpermute(self, d: int, s: int, addr, offset: int) -> np.ndarray:
        """``ds_bpermute_b32 v[d], addr, v[s] offset:<offset>``; returns the source lanes."""
        self._has(self.target.has_lane_family("ds_bpermute"), "ds_bpermute_b32")
        sl = bpermute_src_lanes(addr, self.wave, offset)
        self.regs[d] = _gather(self.regs[s], sl)
        return sl

    def dpp8(self, d: int, s: int, selectors: int) -> np.ndarray:
        """RDNA ``v_mov_b32_dpp v[d], v[s] dpp8:[...]``; returns the source lanes."""
        self._has(self.target.has_lane_family("dpp8"), "dpp8")
        sl = dpp8_src_lanes(selectors, self.wave)
        self.regs[d] = _gather(self.regs[s], sl)
        return sl

    def permlane16(self, d: int, s: int, selector: int, cross: bool) -> np.ndarray:
        """RDNA ``v_permlane{16,x16}_b32 v[d], v[s], sel_lo, sel_hi``; returns the source lanes."""
        self._has(self.target.has_lane_family("permlane16"), "v_permlane16_b32")
        sl = permlane16_src_lanes(selector, cross, self.wave)
        self.regs[d] = _gather(self.regs[s], sl)
        return sl

    def shfl(self, d: int, s: int, mode: str, b, c: int) -> np.ndarray:
        """PTX ``shfl.sync.<mode>.b32 r[d], r[s], b, c, 0xffffffff`` (``b``: one value or one per lane);
        returns the source lanes (a lane out of range reads its own value)."""
        self._has(self.target.has_lane_family("shfl"), "shfl.sync")
        sl, _ = shfl_sync(mode, b, c, self.wave)
        self.regs[d] = _gather(self.regs[s], sl)
        return sl

    def check_declared(self, declared: np.ndarray, actual: np.ndarray, what: str) -> None:
        _check_declared(declared, actual, self.W, what)

    def permlane_swap(self, kind: str, vd: int, s0: int) -> None:
        self._has(self.target.has_lane_family("permlane_swap"), kind)
        self.regs[vd], self.regs[s0] = permlane_swap(kind, self.regs[vd], self.regs[s0])

    # ------------------------------------------------------------ LDS
    def lds_store(self, slots: list[int], addr, width_bytes: int, d16_hi: bool, what: str) -> None:
        """``ds_write_b{8 * width_bytes}[_d16_hi]`` of ``slots`` at the per-lane byte addresses ``addr``."""
        cells, c, whole = _cells(tuple(slots), *self.layout)
        if len(cells) != width_bytes:
            raise PlanVerificationError(f"{what}: {len(cells)} bytes listed for a {width_bytes}-byte store")
        if width_bytes < 4 and cells[0][1] != (2 if d16_hi else 0):  # ds_write_b8/b16[_d16_hi]
            raise PlanVerificationError(f"{what}: a {width_bytes}-byte store reads byte {2 if d16_hi else 0} of "
                                        f"its VGPR, not byte {cells[0][1]}")
        if whole is not None:
            data = self.regs[whole].transpose(1, 2, 0, 3).reshape(self.W, -1)  # [W, lanes * width_bytes]
        else:
            data = self.regs[c[::self.cb, 0], :, :, c[::self.cb, 1] // self.cb].transpose(1, 2, 0).reshape(self.W, -1)
        _lds_write(self, _lds_access(self, addr, width_bytes, what), data, what)

    def lds_load(self, slots: list[int], addr, width_bytes: int, what: str) -> None:
        """``ds_read_b{32,64,128}`` or (zero-extending) ``ds_read_u{8,16}`` of ``slots``."""
        cells, c, whole = _cells(tuple(slots), *self.layout)
        if len(cells) != width_bytes:
            raise PlanVerificationError(f"{what}: {len(cells)} bytes listed for a {width_bytes}-byte load")
        data = _lds_read(self, _lds_access(self, addr, width_bytes, what), what).reshape(
            self.W, self.wave, width_bytes // self.cb)
        if width_bytes < 4:  # ds_read_u8/u16: zero-extended into the whole VGPR
            if cells[0][1] != 0:
                raise PlanVerificationError(f"{what}: a {width_bytes}-byte load fills byte 0 of its VGPR")
            self.regs[cells[0][0]] = 0
        if whole is not None:
            self.regs[whole] = data.reshape(self.W, self.wave, -1, self.cpd).transpose(2, 0, 1, 3)
        else:
            self.regs[c[::self.cb, 0], :, :, c[::self.cb, 1] // self.cb] = data.transpose(2, 0, 1)

    def lds_transpose_load(self, slots: list[int], addr, load, what: str) -> None:
        """A transpose load ``load`` (linlayout.hw.transpose_loads: gfx950's ``ds_read_b64_tr_b*``,
        gfx1250's ``ds_load_tr*``): every lane supplies an address aligned to the bytes it reads;
        lane ``l`` element ``j`` is an element of the read of a lane of its group
        (steps.transpose_element_addresses, the [I] lane map of the load).  Each element lies inside
        that lane's checked read (an aligned address plus a multiple of the element size below the
        read's bytes), so it is aligned and in range."""
        _lds_read(self, _lds_access(self, addr, load.bytes_per_lane, what), what)  # the lanes' own reads
        a = np.broadcast_to(np.asarray(addr, dtype=np.int64), (self.W, self.wave))
        elem = np.stack(transpose_element_addresses(a, load), axis=-1)  # [W, lanes, slots]
        data = self.lds[elem[..., None] + _BYTE_OFFSETS[:self.element_bytes]].reshape(self.W, self.wave, -1)
        _, c, _ = _cells(tuple(slots), *self.layout)
        self.regs[c[:, 0], :, :, c[:, 1]] = data.transpose(2, 0, 1)

    def ldmatrix(self, slots: list[int], addr, num: int, trans: bool, what: str) -> None:
        """PTX ``ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16`` into the ``num`` registers of
        ``slots`` (whole dwords in order): the address lanes ``0 .. 8 num - 1`` read their 16-byte rows
        and every byte goes where ``isa_lanes.matrix_row_bytes`` says."""
        self._has(self.target.has_matrix_access(False), "ldmatrix")
        rows, dwords = self._matrix_rows(slots, addr, num, what)
        data = _lds_read(self, rows, what).reshape(self.W, 8 * num, 16 // self.cb)
        lane, byte = self._matrix_cells(num, trans, what)
        self.regs[dwords] = data[:, lane, byte].transpose(2, 0, 1, 3)

    def stmatrix(self, slots: list[int], addr, num: int, trans: bool, what: str) -> None:
        """PTX ``stmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16`` of the ``num`` registers of ``slots``:
        the fragments of ``ldmatrix`` stored (every byte of the ``8 num`` rows written once)."""
        self._has(self.target.has_matrix_access(True), "stmatrix")
        rows, dwords = self._matrix_rows(slots, addr, num, what)
        lane, byte = self._matrix_cells(num, trans, what)
        data = np.empty((self.W, 8 * num, 16 // self.cb), dtype=self.regs.dtype)
        data[:, lane, byte] = self.regs[dwords].transpose(1, 2, 0, 3)
        _lds_write(self, rows, data.reshape(self.W, -1), what)

    def _matrix_rows(self, slots: list[int], addr, num: int, what: str) -> tuple[np.ndarray, np.ndarray]:
        """The LDS cells ``[W, 8 num * 16 / cb]`` of the rows the address lanes ``0 .. 8 num - 1`` give (16-byte
        aligned, in range), and the register dwords of a matrix access."""
        _, _, whole = _cells(tuple(slots), *self.layout)
        if whole is None or len(slots) * self.element_bytes != 4 * num:
            raise PlanVerificationError(f"{what}: a matrix access moves {num} whole registers, in order")
        dwords = np.arange(self.regs.shape[0])[whole]
        a = np.broadcast_to(np.asarray(addr, dtype=np.int64), (self.W, self.wave))[:, :8 * num]
        misaligned = misaligned_address(a, 16)
        if misaligned:
            raise PlanVerificationError(f"{what}: a row address: {misaligned}")
        if a.min() < 0 or a.max() + 16 > self.lds_bytes:
            raise PlanVerificationError(f"{what}: a row outside the {self.lds_bytes}-byte shared allocation")
        cells = (a // self.cb)[..., None] + _BYTE_OFFSETS[:16 // self.cb]
        return cells.reshape(self.W, -1), dwords

    def _matrix_cells(self, num: int, trans: bool, what: str) -> tuple[np.ndarray, np.ndarray]:
        """``(row lane, row cell)`` ``[lanes, num, cells per dword]`` of every register cell (the oracle's
        bytes, in cells of ``cb`` bytes: a cell's bytes must stay together)."""
        lane, byte = matrix_row_bytes(num, trans)
        cb = self.cb
        if cb > 1 and ((lane != lane[..., ::cb].repeat(cb, axis=-1)).any()
                       or (byte != byte[..., ::cb].repeat(cb, axis=-1) + np.arange(4) % cb).any()):
            raise RuntimeError(f"{what}: a {cb}-byte cell is split by the matrix access (_cell_bytes)")
        return lane[..., ::cb], byte[..., ::cb] // cb

    def movmatrix(self, d: int, s: int) -> None:
        """PTX ``movmatrix.sync.aligned.m8n8.trans.b16 r[d], r[s]`` (``isa_lanes.movmatrix_sources``)."""
        self._has("movmatrix" in self.target.lane_ops, "movmatrix")
        lane, byte = movmatrix_sources()
        cb = self.cb
        if cb > 2:
            raise RuntimeError("movmatrix splits a 4-byte cell (_cell_bytes)")
        self.regs[d] = self.regs[s][:, lane[:, ::cb], byte[:, ::cb] // cb]

    def barrier(self, scope: str) -> None:
        """A barrier of ``scope`` (steps.Barrier).  A warp barrier orders the lanes of each warp only:
        the warps' race bookkeeping goes on (the lanes' order is ``_check_lane_order``'s)."""
        if scope == "warp":
            self._has(not self.target.lockstep_lanes, "warp-scope barrier (its lanes are in lockstep)")
            return
        if not self.exact:
            _check_epoch(self)
        if self.wrote:
            self.w_warps[:] = 0
            self.rewritten[:] = False
        if self.read:
            self.r_warps[:] = 0
        self.wrote = self.read = False


@caches.memoize("synth.emulator.dword_pairs", size=4096, table=True)  # 4096: one per register operand pair
def _dword_pairs(dst: tuple, src: tuple, p: int, dps: int) -> tuple[tuple[int, int], ...] | None:
    """``steps.dword_pairs`` of the slot lists ``dst``, ``src`` (``p`` slots per dword, ``dps`` dwords per
    slot), None where they break the pairing rule."""
    try:
        return tuple(dword_pairs(dst, src, p, dps, ""))
    except LayoutError:
        return None


@caches.memoize("synth.emulator.uncopied_slot", size=4096, table=True)  # 4096: one per v_perm_b32 instruction
def _uncopied_slot(dst: tuple, src: tuple, d: int, operands: tuple, selector: int | None, layout: tuple,
                   constants: bool) -> int | None:
    """``_Machine.check_perm_copies``: the first ``i`` whose declared copy ``src[i] -> dst[i]`` the
    ``v_perm_b32`` into ``v[d]`` with the uniform ``selector`` (None: one per lane, which copies
    nothing declared) does not do, None when it does every one (``layout`` of ``_slot_layout``)."""
    n = min(len(dst), len(src))  # slot i's bytes are the cells i * element_bytes .. of its list (_cells)
    if not n:
        return None
    s0, s1 = operands
    selb = _bytes_of(selector) if selector is not None else None
    dst_cells, src_cells = (_cells(slots[:n], *layout)[0] for slots in (dst, src))
    for q, ((dd, db), (sd, sb)) in enumerate(zip(dst_cells, src_cells)):
        code = selb[db] if dd == d and selb is not None else None  # S1 byte b: code b, S0 byte b: 4 + b
        if code is None or not ((constants and code >= 8) or (sd == s1 and code == sb)
                                or (sd == s0 and code == 4 + sb)):
            return q // layout[2]
    return None


def _bytes_of(value) -> list[int]:
    """The four bytes of a 32-bit value, the lowest first."""
    v = int(value)
    return [v & 0xFF, (v >> 8) & 0xFF, (v >> 16) & 0xFF, (v >> 24) & 0xFF]


def _uniform(selector) -> bool:
    """Is a v_perm_b32 selector one value for every lane (an int, or an array of no dimension)?"""
    return isinstance(selector, (int, np.integer)) or np.ndim(selector) == 0


def _perm(m: _Machine, s0: int, s1: int, selector, out: np.ndarray | None = None) -> np.ndarray:
    """``v_perm_b32`` of the registers ``s0``, ``s1`` with ``selector`` (uniform, or one per lane
    ``[lanes]``): on byte cells with the selector's bytes, on wider cells by the choice of each cell
    (``_perm_cells``: cell ``k`` of {S1, S0}, or the zero cell); written into ``out`` (another
    register than ``s0`` and ``s1``), else into a new array."""
    if m.cb == 1:
        selector_bytes = (_bytes_of(selector) if _uniform(selector)  # [4], or [lanes, 4] per lane
                          else (np.asarray(selector, dtype=np.int64)[..., None] >> (8 * np.arange(4))) & 0xFF)
        return v_perm_b32(m.regs[s0], m.regs[s1], selector_bytes, out)
    src = (m.regs[s1], m.regs[s0])
    if out is None:
        out = np.empty_like(src[1])
    for h, k in enumerate(_perm_cells(selector, m.cb)):
        out[..., h] = src[k // m.cpd][..., k % m.cpd] if k < 2 * m.cpd else 0
    return out


def _prmt(m: _Machine, operands: tuple[int, int], selector: int) -> np.ndarray:
    """``prmt.b32`` of the registers ``operands = (a, b)``: the oracle on byte cells; on wider cells the
    cells of its byte-copy equivalent (``steps.prmt_as_perm``, S0 = b, S1 = a)."""
    a, b = operands
    if m.cb == 1:
        return prmt_b32(m.regs[a], m.regs[b], selector)
    return _perm(m, b, a, prmt_as_perm(selector))


def _lanes_of(t, warps: int) -> np.ndarray:
    t = np.asarray(t, dtype=np.int64)
    return np.broadcast_to(t, (warps, t.shape[-1])) if t.ndim == 1 else t


def _gather(vals: np.ndarray, src_lane: np.ndarray) -> np.ndarray:
    """``vals[.., w, src_lane[w, l], :]`` (vals ``[.., W, lanes, cells]``: the registers of one dword or of
    several; source lanes -1..lanes-1, ``[lanes]`` for every warp or ``[W, lanes]``); -1 source lanes
    read 0."""
    lanes = src_lane & (vals.shape[-2] - 1)
    out = vals[..., lanes, :] if lanes.ndim == 1 else vals[..., np.arange(vals.shape[-3])[:, None], lanes, :]
    negative = src_lane < 0
    return np.where(negative[..., None], 0, out) if negative.any() else out


def _check_declared(declared: np.ndarray, actual: np.ndarray, W: int, what: str) -> None:
    """Every lane whose declared source lane is not -1 reads that lane (lane tables ``[lanes]`` or
    ``[W, lanes]``)."""
    bad = (declared >= 0) & (declared != actual)
    if bad.any():
        declared, actual, bad = (np.broadcast_to(x, (W, bad.shape[-1])) for x in (declared, actual, bad))
        w, l = map(int, np.argwhere(bad)[0])
        raise PlanVerificationError(
            f"{what}: lane {l} of warp {w} is declared to read lane {int(declared[w, l])} but the "
            f"instruction reads {int(actual[w, l])}")


def _lds_access(m: _Machine, addr, width_bytes: int, what: str) -> np.ndarray:
    """Cell indices ``[W, lanes * width_bytes / cell bytes]`` of an LDS access, with alignment and range checks."""
    a = np.asarray(addr, dtype=np.int64)  # [lanes] (every warp alike) or [W, lanes]
    misaligned = misaligned_address(a, width_bytes)
    if misaligned:
        raise PlanVerificationError(f"{what}: {misaligned}")
    if a.min() < 0 or a.max() + width_bytes > m.lds_bytes:  # the bytes are a .. a + width_bytes - 1
        raise PlanVerificationError(f"{what}: address outside the {m.lds_bytes}-byte LDS allocation")
    n = width_bytes // m.cb
    idx = ((a if m.cb == 1 else a // m.cb)[..., None] + _BYTE_OFFSETS[:n]).reshape(-1, m.wave * n)
    return idx if idx.shape[0] == m.W else idx.repeat(m.W, axis=0)


def _lds_write(m: _Machine, idx: np.ndarray, data: np.ndarray, what: str) -> None:
    """Warps are unordered between barriers: writing other data on a byte another warp wrote or read
    since the last barrier is a race; so are two warps writing different data in this step.  (A
    write of a byte's own data changes nothing another warp can see, in either order.)  ``rewritten``:
    the bytes written since the barrier and then changed again (``_lds_read``).
    ``idx``: the cells ``[W, k]`` (quick: ``[..., W, k]``, a run's)."""
    flat, vals = idx.reshape(-1), data.reshape(-1)
    if not m.exact:
        m.lds[flat] = vals
        if (m.lds.take(flat) != vals).any():  # two listings of a byte with different data
            raise _RaceSuspect
        m.epoch_writes.append((idx, data))
        return
    changed = m.lds[idx] != data
    other_w = _by_other_warps(m, m.w_warps, m.wrote, idx)
    if other_w is not None:
        other_w &= changed
        if other_w.any():
            raise PlanVerificationError(f"{what}: LDS byte {int(idx[other_w][0])} was written by another warp "
                                        f"with other data since the last barrier")
    other_r = _by_other_warps(m, m.r_warps, m.read, idx)
    if other_r is not None:
        other_r &= changed
        if other_r.any():
            raise PlanVerificationError(f"{what}: LDS byte {int(idx[other_r][0])} is read by another warp since "
                                        f"the last barrier (missing barrier)")
    if m.wrote:
        m.rewritten[idx[changed & (m.w_warps[idx] != 0)]] = True
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
        # a byte the warp wrote itself holds its own data, where it held one value since its first write
        # after the barrier (else another warp's earlier write of other data may land between)
        other &= ((m.w_warps[idx] & m.warp_bit) == 0) | m.rewritten[idx]
        if other.any():
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
    if m.W == 1 or not writes or (len(writes) == 1 and not reads):
        return  # one warp (no other to race with), or one write leaves its data on its bytes (_lds_write
        # checked them) and nothing was read
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
def _slot_bytes(slot: int, p: int, dps: int, element_bytes: int) -> tuple[tuple[int, int], ...]:
    """(dword, byte) cells of one slot (the bytes of its ``steps.slot_dwords`` pieces; ``element_bytes``
    is what ``p`` and ``dps`` imply)."""
    return tuple((d, first + k) for d, first, n in slot_dwords(slot, p, dps) for k in range(n))


def _cell_index(slots, p: int, dps: int, element_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """(dword, byte) index arrays ``[len(slots), bytes per slot]`` of the slots' cells (``_slot_bytes``
    of every slot: 64-bit slot ``s`` is dwords ``2s, 2s+1``, bytes 0..3 each; else dword ``s // p``,
    bytes ``(s % p) * element_bytes ..``)."""
    s = np.asarray(slots, dtype=np.int64).reshape(-1, 1)
    if dps == 2:
        return 2 * s + (np.arange(8) >> 2), np.repeat((np.arange(8) & 3)[None], len(s), axis=0)
    return np.repeat(s // p, element_bytes, axis=1), (s % p) * element_bytes + np.arange(element_bytes)


def _max_slot(plan: Plan) -> int:
    named = [max(slots) for slots in (s.named_slots() for s in plan.steps) if slots]
    return max(plan.slots_in, plan.slots_out, max(named, default=-1) + 1)


def run_isa(plan: Plan, init: np.ndarray | None = None, lds_bytes: int | None = None) -> np.ndarray:
    """Execute ``plan`` instruction by instruction; returns the registers ``[n_dwords, W, lanes, 4]``.

    ``init``: byte cells of the initial slots ``[W, lanes, slots_in, bytes]`` (default:
    symbolic tags ``256 + 8 * id + byte`` of the src elements; of a src held one element per VGPR,
    ``Plan.src_unpacked``, the bytes above each VGPR's element 0).  The run first checks LDS races
    epoch by epoch (quick); a possible race or any failure runs it again with every access
    checked (exact), which raises the first error a step makes.
    """
    try:
        return _run_isa(plan, init, lds_bytes, exact=False)
    except (_RaceSuspect, PlanVerificationError, LayoutError):
        return _run_isa(plan, init, lds_bytes, exact=True)


def _n_dwords(plan: Plan) -> int:
    """VGPRs (dwords) every slot the plan names fits in."""
    element_bits = plan.element_bits
    n_slots = _max_slot(plan)
    return n_slots * 2 if dwords_per_slot(element_bits) == 2 else -(-n_slots // slots_per_dword(element_bits))


def _slot_layout(element_bits: int) -> tuple[int, int, int]:
    """(slots per dword, dwords per slot, element bytes) of ``element_bits``-bit elements."""
    return slots_per_dword(element_bits), dwords_per_slot(element_bits), max(1, element_bits // 8)


def _run_isa(plan: Plan, init: np.ndarray | None, lds_bytes: int | None, exact: bool) -> np.ndarray:
    p, dps, element_bytes = _slot_layout(plan.element_bits)
    W = plan.num_warps
    n_dw = _n_dwords(plan)
    if init is None:  # tags below TAG_BASE + 8 * (number of tensor elements)
        small = TAG_BASE + 8 * (1 << plan.src.total_out_bits) < (1 << 31) - 1
    else:
        init = np.asarray(init)
        small = not init.size or (-(1 << 31) < int(init.min()) and int(init.max()) < (1 << 31) - 1)
    machine_lds_bytes = lds_bytes if lds_bytes is not None else max(plan.lds_bytes, 4)
    m = _Machine(n_dw, W, plan.wave_size, machine_lds_bytes, plan.element_bits, plan.arch,
                 np.int32 if small else np.int64, exact)
    if not exact:
        m.runs = _lds_runs(m, plan) or {}
    tables = None if init is not None else [t.astype(m.regs.dtype)
                                            for t in _tag_tables(plan.src, W, plan.slots_in, element_bytes)]
    if tables and plan.slots_in % p == 0:  # the slots fill dwords 0.. in order: the tags straight into them
        lanes, tags = tables
        regs = m.regs[: len(tags) // 4]
        np.bitwise_xor(tags.reshape(-1, 1, 1, 4), lanes[None, :, :, None], out=regs)
        regs += TAG_BASE
    else:
        if tables:
            init = (TAG_BASE + (tables[0][:, :, None] ^ tables[1])).reshape(W, plan.wave_size, plan.slots_in,
                                                                            element_bytes)
        if plan.slots_in % p == 0:  # the slots fill dwords 0.. in order: slot s, byte b is cell (s*bytes + b) / 4
            cells = init[:, :, : plan.slots_in].reshape(W, plan.wave_size, -1, 4)
            m.regs[: cells.shape[2]] = cells.transpose(2, 0, 1, 3)
        else:
            d_i, b_i = _cell_index(range(plan.slots_in), p, dps, element_bytes)
            m.regs[d_i, :, :, b_i] = np.moveaxis(init[:, :, : plan.slots_in], (0, 1), (2, 3))
    if plan.src_unpacked:  # one element per VGPR, zero-extended: the bytes above it are 0
        m.regs[: plan.slots_in // p, :, :, element_bytes:] = 0
    _execute(m, plan)
    return m.regs


def _tag_tables(layout: LinearLayout, num_warps: int, n_slots: int, element_bytes: int) -> tuple[np.ndarray, ...]:
    """The byte tags ``TAG_BASE + 8 * id + b`` of the first ``n_slots`` slots holding ``layout``'s elements
    as ``TAG_BASE + (lanes[w, l] ^ tags[q])``, byte ``q`` being byte ``q % element_bytes`` of slot
    ``q // element_bytes``: ``8 * id + b`` is ``8 * (warp image ^ lane image) ^ (8 * slot image | b)`` (b < 8,
    ``_axis_ids``).  Returns ``(lanes [W, lanes], tags [n_slots * element_bytes])``, int64."""
    warp, lane, register = _axis_ids(*_axis_key(layout, num_warps))
    tags = ((register[:n_slots] << 3)[:, None] | np.arange(element_bytes)).reshape(-1)
    return (warp[:, None] ^ lane[None, :]) << 3, tags


def _execute(m: _Machine, plan: Plan) -> None:
    """Run the steps of ``plan`` on ``m``, each by its own ``run`` (quick: the last epoch checked at
    the end); a run of LDS steps in ``m.runs`` goes at once (``_lds_runs``)."""
    steps, runs = plan.steps, m.runs
    i = 0
    while i < len(steps):
        st = steps[i]
        what = f"step {i} ({st.op})"
        if i in runs:
            i = _exec_run(m, runs[i], what)
            continue
        st.run(m, what)
        i += 1
    if not m.exact:
        _check_epoch(m)
    if not m.target.lockstep_lanes:
        _check_lane_order(m, plan)


def _check_lane_order(m: _Machine, plan: Plan) -> None:
    """The lanes of a warp of a target without lockstep lanes (NVIDIA) run in no set order between
    barriers: a byte lane ``l`` of warp ``w`` writes may be read or overwritten by another lane
    of ``w``, and a byte ``l`` reads overwritten by another lane, only after a barrier (a warp
    barrier, or a workgroup one) between -- else PlanVerificationError.  (Warps against each other
    are the race checks of the run.)  LDS addresses do not depend on data, so this walks the
    steps' accesses once, after a run that found them aligned and in range."""
    W, lanes = m.W, m.wave
    wrote = np.zeros((W, m.lds_bytes), dtype=np.int64)  # per warp and byte: lanes (bit mask) that wrote it
    read = np.zeros((W, m.lds_bytes), dtype=np.int64)  # ... that read it, since the last barrier
    lane_bit = (np.int64(1) << np.arange(lanes, dtype=np.int64))[None, :, None]
    warp = np.arange(W)[:, None, None]
    for i, st in enumerate(plan.steps):
        if st.barrier:
            wrote[:] = read[:] = 0
            continue
        if not st.lds:
            continue
        for _, addr in st.accesses():
            a = np.broadcast_to(np.asarray(addr, dtype=np.int64), (W, lanes))
            byte = a[..., None] + _BYTE_OFFSETS[:st.width_bytes]
            others = wrote[warp, byte] | (read[warp, byte] if st.store else 0)
            others &= ~lane_bit
            if others.any():
                w, l, k = map(int, np.argwhere(others)[0])
                other = int(others[w, l, k]).bit_length() - 1
                raise PlanVerificationError(
                    f"step {i} ({st.op}): lane {l} of warp {w} {'writes' if st.store else 'reads'} LDS byte "
                    f"{int(byte[w, l, k])}, which lane {other} of its warp accessed with no barrier between "
                    f"({m.arch}'s lanes are not in lockstep: a warp barrier is missing)")
            marks = wrote if st.store else read
            np.bitwise_or.at(marks, (np.broadcast_to(warp, byte.shape), byte), np.broadcast_to(lane_bit, byte.shape))


# ====================================================================== code cells
def _cell_bytes(plan: Plan, widest: int = 4) -> int:
    """The widest cells, 4 or 2 bytes (else 1; at most ``widest``), that every step of ``plan`` moves
    whole: the bytes of a cell together and in order, to the bytes of a cell.  Register steps other than renamings
    and v_perm_b32 move whole dwords (they write whole VGPRs from whole VGPRs, or 0); a renaming
    and a v_perm_b32 move what ``_renamed_cell_pairs`` and ``_perm_cells`` allow; an LDS access moves
    cells when it moves at least a cell per lane between whole cells in byte order (a transpose
    load: cells no wider than its elements).  The first and last slots must fill whole cells."""
    layout = _slot_layout(plan.element_bits)
    element_bytes = layout[2]
    c = next(c for c in (4, 2, 1) if c <= widest and plan.slots_in * element_bytes % c == 0
             and plan.slots_out * element_bytes % c == 0)
    for st in plan.steps:
        while c > 1 and not _moves_cells(st, c, layout):
            c //= 2
    return c


def _moves_cells(st, c: int, layout: tuple[int, int, int]) -> bool:
    """Does step ``st`` move whole ``c``-byte cells (``_cell_bytes``; ``layout`` of ``_slot_layout``)?"""
    if st.op in MATRIX_OPS:  # whole registers, in pieces of 4 (plain) or 2 (.trans) bytes
        return c <= st.width_bytes
    if st.lds:
        if not st.store and st.transpose and 8 * c > st.transpose:  # cells no wider than the elements
            return False
        return st.width_bytes >= c and all(_register_cells(tuple(slots), c, *layout)[1] is not None
                                           for slots, _ in st.access_offsets())
    if st.perm_selectors:
        return all(_perm_cells(sel, c) is not None for sel in st.perm_selectors)
    if st.renaming:
        return _renamed_cell_pairs(st.dst, st.src, c, layout[2]) is not None
    return c <= st.cell_bytes


@caches.memoize("synth.emulator.register_cells", size=4096, table=True)  # 4096: one per register operand
def _register_cells(slots: tuple, c: int, p: int, dps: int, element_bytes: int) -> tuple[list, np.ndarray | None]:
    """The (dword, byte) cells of ``slots`` in order (``_cells``) and, when they are whole ``c``-byte
    cells each in byte order, those cells ``[n, 2]`` as (dword, cell of the dword); else None."""
    cells = _cells(slots, p, dps, element_bytes)[0]
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
    if not _uniform(selector):
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


def _renamed_cell_pairs(dst: list[int], src: list[int], c: int,
                        element_bytes: int) -> tuple[np.ndarray, ...] | None:
    """The ``c``-byte cells a renaming ``dst[i] <- src[i]`` of ``element_bytes``-byte slots copies, as
    (dst dwords, dst cells of the dword, src dwords, src cells of the dword) -- a cell numbered ``q`` by
    its byte offset / ``c`` (slot ``s`` is the bytes ``s * element_bytes ..``) is cell ``q % (4 / c)`` of
    dword ``q // (4 / c)`` -- when it copies whole cells, each from one whole cell in byte order and
    each dst cell once; else None."""
    n = min(len(dst), len(src))
    return _cell_pairs(tuple(dst[:n]), tuple(src[:n]), c, element_bytes)


@caches.memoize("synth.emulator.cell_pairs", size=1024, table=True)  # 1024: one per renaming instruction
def _cell_pairs(dst: tuple, src: tuple, c: int, element_bytes: int) -> tuple[np.ndarray, ...] | None:
    """``_renamed_cell_pairs`` of the renaming ``dst[i] <- src[i]`` (read-only arrays)."""
    n = len(dst)
    if len(set(dst)) < n:
        return None
    if c < element_bytes:  # a slot is element_bytes / c whole cells
        parts = element_bytes // c
        qd, qs = [d * parts + t for d in dst for t in range(parts)], [s * parts + t for s in src for t in range(parts)]
    else:
        k = c // element_bytes  # slots per cell: a dst cell needs all its k slots, from one src cell, in place
        src_cell: dict[int, int] = {}
        for d, s in zip(dst, src):
            if d % k != s % k or src_cell.setdefault(d // k, s // k) != s // k:
                return None
        if n != k * len(src_cell):
            return None
        qd, qs = list(src_cell), list(src_cell.values())
    cpd = 4 // c
    out = tuple(f(np.array(q, dtype=np.int64), cpd) for q in (qd, qs) for f in (np.floor_divide, np.remainder))
    for q in out:
        q.setflags(write=False)
    return out


def _code_bits(plan: Plan, c: int) -> tuple[int, int]:
    """(bits per element id, bits of the largest code of a ``c``-byte cell, ``_code_tables``): ids are
    below ``2**n`` (the tensor's elements); a code is below ``2**(c / element_bytes * n + 1)``, or
    ``2**(n + log2(element_bytes / c) + 1)`` for elements wider than a cell."""
    element_bytes = max(1, plan.element_bits // 8)
    n = max(plan.src.total_out_bits, plan.dst.total_out_bits)
    return n, 1 + (c // element_bytes * n if c >= element_bytes else n + (element_bytes // c).bit_length() - 1)


def _code_tables(layout: LinearLayout, num_warps: int, n_slots: int, c: int, element_bytes: int, n_bits: int,
                 dtype) -> tuple[np.ndarray, np.ndarray]:
    """The code of every ``c``-byte cell of the first ``n_slots`` slots holding ``layout``'s elements,
    as two tables whose XOR it is: ``lanes [W, lanes]`` and ``cells [n_slots * element_bytes / c]``.

    A cell holding the elements ``id_0, ..`` (``c / element_bytes`` of them) has the code
    ``2**(k n) | sum_j id_j * 2**(n j)`` (``n = n_bits``, ids below ``2**n``, ``k`` elements), part ``t``
    of an element wider than a cell ``2**(n + s) | id * 2**s | t`` (``2**s = element_bytes / c``): one
    code per cell content, none 0 (the zero cell) or UNDEF.  An id is the XOR of its warp, lane and
    slot images (``_axis_ids``) and the fields do not overlap, so a code is the XOR of the fields of the
    warp and lane images (with the top bit) and those of the slot images (with ``t``)."""
    warp, lane, register = _axis_ids(*_axis_key(layout, num_warps))
    lanes, register = warp[:, None] ^ lane[None, :], register[:n_slots]
    if c < element_bytes:
        s = (element_bytes // c).bit_length() - 1
        lanes = (lanes << s) | (1 << (n_bits + s))
        cells = ((register << s)[:, None] | np.arange(1 << s)).reshape(-1)
    else:
        k = c // element_bytes
        group = register.reshape(-1, k)  # the slots of a cell
        spread, cells = lanes, group[:, 0]
        for j in range(1, k):  # element j of a cell: field j
            spread, cells = spread | (lanes << (n_bits * j)), cells | (group[:, j] << (n_bits * j))
        lanes = spread | (1 << (k * n_bits))
    return lanes.astype(dtype), cells.astype(dtype)


def _cell_run_holds(plan: Plan) -> bool:
    """Quick ISA run on the widest cells the plan moves whole (``_cell_bytes``, 2 or 4 bytes): do
    the dst slots end up holding the elements ``expected_ids`` names?  False when the plan moves no
    such cells, and when any check fails (the byte-cell run then finds what)."""
    if plan.src_unpacked or plan.dst_unpacked or plan.dst_one_copy:  # (the codes put whole elements in every
        return False  # cell; the byte run zeroes the bytes above an unpacked src element and leaves an unpacked
        # dst's, and the lanes other than a one-copy dst's canonical ones, unchecked)
    c = _cell_bytes(plan)
    n, bits = _code_bits(plan, c)
    if bits > 62 and c == 4:  # the codes of 4-byte cells do not fit in 62 bits: try 2-byte ones
        c = _cell_bytes(plan, widest=2)
        n, bits = _code_bits(plan, c)
    if c == 1 or bits > 62:
        return False
    element_bytes = max(1, plan.element_bits // 8)
    dtype = np.int32 if bits <= 30 else np.int64
    m = _Machine(_n_dwords(plan), plan.num_warps, plan.wave_size, max(plan.lds_bytes, 4), plan.element_bits, plan.arch,
                 dtype, exact=False, cell_bytes=c)
    _first_cells(m, *_code_tables(plan.src, plan.num_warps, plan.slots_in, c, element_bytes, n, dtype), store=True)
    runs = _lds_runs(m, plan)
    if runs is None:
        return False
    m.runs = runs
    try:
        _execute(m, plan)
    except (_RaceSuspect, PlanVerificationError, LayoutError):
        return False
    return _first_cells(m, *_code_tables(_expected_layout(plan), plan.num_warps, plan.slots_out, c, element_bytes, n,
                                         dtype), store=False)


def _first_cells(m: _Machine, lanes: np.ndarray, cells: np.ndarray, store: bool) -> bool:
    """Put the codes ``lanes[w, l] ^ cells[q]`` (``_code_tables``) in the first cells of the registers
    (``store``), or tell whether those hold them; cell ``q`` of the slots is cell ``q % cpd`` of dword
    ``q // cpd`` (whole dwords in place when the cells fill them, else by index)."""
    n = len(cells)
    if n % m.cpd == 0:  # whole dwords: the registers [dwords, W, lanes, cpd] and the codes in their order
        regs, codes = m.regs[: n // m.cpd], (cells.reshape(-1, 1, 1, m.cpd), lanes[None, :, :, None])
        if store:
            np.bitwise_xor(*codes, out=regs)
            return True
        return bool((regs == np.bitwise_xor(*codes)).all())
    q = np.arange(n)
    index, codes = (q // m.cpd, slice(None), slice(None), q % m.cpd), cells[:, None, None] ^ lanes  # [n, W, lanes]
    if store:
        m.regs[index] = codes
        return True
    return bool((m.regs[index] == codes).all())


def _lds_runs(m: _Machine, plan: Plan) -> dict[int, tuple] | None:
    """The LDS accesses of a quick run grouped into runs of consecutive stores, or loads, of one
    width (and transpose size): first step -> (store?, the step after the run, the register cells
    ``[n]`` of its accesses as dword and cell indices, their LDS cells ``[n, W, lanes]`` in the same
    order).  Stores of a run read no register another writes, loads write distinct register cells
    and read no LDS another writes, so a run is one gather and one scatter; the race bookkeeping
    of a quick run (``_check_epoch``) needs only the cells each warp reads or writes.  A transpose
    load reads, per group of lanes, the cells of its lanes' own reads, so those are its LDS
    cells (in the order its elements go to registers).  The addresses of all runs are checked at
    once.  ``ds_read_u8/u16`` (zero-extending) steps are not in runs.  None when an access is
    malformed, not 1, 2, 4, 8 or 16 bytes wide or (wider cells) not whole cells: the run on wider
    cells then fails, the byte-cell run goes step by step."""
    layout = _slot_layout(plan.element_bits)
    cb = m.cb
    accesses = []  # (step, store?, register cells, width in bytes, transpose load or None)
    addrs, offsets = [], []  # the step's address [W, lanes] or [lanes] and the access's byte offset from it
    for i, st in enumerate(plan.steps):
        if not st.lds or st.op in MATRIX_OPS:  # a matrix access runs by itself (its oracle)
            continue
        store, width_bytes = st.store, st.width_bytes
        if st.pair_error():
            return None
        # (a transpose step names a load: transpose_error checks)
        tr = None if store or not st.transpose else st.transpose_load
        if width_bytes not in (1, 2, 4, 8, 16) or (not store and st.transpose and (
                8 * cb > st.transpose or st.transpose_error(plan.arch, layout[2]))):
            return None
        kept = width_bytes >= 4 or store
        for slots, offset in st.access_offsets():
            cells, reg = _register_cells(tuple(slots), cb, *layout)
            if len(cells) != width_bytes or reg is None:
                return None
            if store and width_bytes < 4 and cells[0][1] != (2 if st.d16_hi else 0):
                return None
            if kept:
                accesses.append((i, store, reg, width_bytes, tr))
                addrs.append(st.addr)
                offsets.append(offset)
    if not accesses:
        return {}
    a_all = _lane_tables(addrs, m.W, m.wave)  # [accesses, W, lanes]
    if any(offsets):
        a_all += np.array(offsets, dtype=np.int64)[:, None, None]
    widths = [x[3] for x in accesses]
    low_bits = np.array([access_alignment(w) - 1 for w in widths])[:, None, None]  # (alignments: powers of 2)
    if (a_all & low_bits).any() or a_all.min() < 0 or (a_all.max(axis=(1, 2)) + widths).max() > m.lds_bytes:
        return None
    runs, k = {}, 0
    while k < len(accesses):
        (first, store, _, width, tr), j = accesses[k], k + 1
        while (j < len(accesses) and accesses[j][1] == store and accesses[j][3:] == (width, tr)
               and accesses[j][0] <= accesses[j - 1][0] + 1):
            j += 1
        reg = accesses[k][2] if j == k + 1 else np.concatenate([x[2] for x in accesses[k:j]])  # [cells, 2]
        if not store and len(set((reg[:, 0] * m.cpd + reg[:, 1]).tolist())) < len(reg):
            return None
        a = a_all[k:j]
        if tr:  # the addresses of each lane's elements, and the cells of an element
            base, n = np.stack(transpose_element_addresses(a, tr), axis=1), tr.element_bits // 8 // m.cb  # [.., E, W, lanes]
        else:
            base, n = a[:, None], width // m.cb
        if m.cb > 1:  # byte address -> cell
            base = base >> (m.cb.bit_length() - 1)
        lds = base[:, :, None] + _BYTE_OFFSETS[:n, None, None]  # [.., E or 1, n, W, 64]
        runs[first] = (store, accesses[j - 1][0] + 1, reg[:, 0], reg[:, 1], lds.reshape(-1, m.W, m.wave))
        k = j
    return runs


def _lane_tables(tables: list, W: int, wave_size: int) -> np.ndarray:
    """``[len(tables), W, wave_size]`` int64 from per-lane tables each ``[wave_size]`` (every warp alike)
    or ``[W, wave_size]``."""
    if all(getattr(t, "ndim", 0) == 2 for t in tables):
        return np.array(tables, dtype=np.int64)
    return np.array([np.broadcast_to(t, (W, wave_size)) for t in tables], dtype=np.int64)


def _exec_run(m: _Machine, run: tuple, what: str) -> int:
    """Do a run of LDS stores or loads (``_lds_runs``; register and LDS cells ``[n, W, lanes]`` in one
    order: no transposes); returns the step after it."""
    store, end, dwords, cells, lds = run
    if store:
        _lds_write(m, lds, m.regs[dwords, :, :, cells], what)
    else:
        m.regs[dwords, :, :, cells] = _lds_read(m, lds, what)
    return end


@caches.memoize("synth.emulator.cells", size=4096, table=True)  # 4096: one per register operand
def _cells(slots: tuple, p: int, dps: int, element_bytes: int) -> tuple[list, np.ndarray, slice | np.ndarray | None]:
    """The (dword, byte) cells of ``slots`` in order, as a list and an array ``[n, 2]``, and the dwords
    they fill when they are whole dwords, each in byte order: a slice for ``d, d+1, ..``, else an
    index array (None when they are not whole dwords)."""
    cells = [c for s in slots for c in _slot_bytes(s, p, dps, element_bytes)]
    dwords = [d for d, _ in cells[::4]]
    if len(cells) % 4 or cells != [(dwords[i // 4], i % 4) for i in range(len(cells))]:
        whole = None
    elif dwords == list(range(dwords[0], dwords[0] + len(dwords))):
        whole = slice(dwords[0], dwords[0] + len(dwords))
    else:
        whole = np.array(dwords, dtype=np.int64)
    return cells, np.array(cells, dtype=np.int64).reshape(-1, 2), whole


# ====================================================================== certificate executor
def run_certificate(cert: dict) -> np.ndarray:
    """Execute a plan certificate at element level; returns ``[W, lanes, n_slots]`` element ids (-1 undefined).
    A src held one element per VGPR (``"src_unpacked"``) starts with its elements in each VGPR's low slot
    only: the slots above hold nothing (UNDEF), so a plan reading one leaves UNDEF where it lands."""
    W, wave = int(cert["num_warps"]), int(cert["wave_size"])
    src = LinearLayout.from_json(cert["src"])
    element_bytes = max(1, int(cert["element_bits"]) // 8)
    n = max(int(cert["slots_in"]), int(cert["slots_out"]))
    for st in cert["steps"]:
        for k in ("dst", "src", "a", "b", "vdst", "src0"):
            if isinstance(st.get(k), list) and st[k] and isinstance(st[k][0], int):
                n = max(n, max(st[k]) + 1)
        if st.get("op") == "movrels":  # the slots the warps read
            n = max(n, max(st["src"]) + max(st["shift"]) + 1)
    state = np.full((W, wave, n), UNDEF, dtype=np.int64)
    state[:, :, : int(cert["slots_in"])] = element_ids(src, W)
    if cert.get("src_unpacked"):
        p = slots_per_dword(int(cert["element_bits"]))
        state[:, :, [r for r in range(int(cert["slots_in"])) if r % p]] = UNDEF
    top = 1
    for st in cert["steps"]:
        if st["op"] in ("lds_store", "lds_load"):
            n_el = len(st["src"] if st["op"] == "lds_store" else st["dst"])
            top = max(top, int(np.max(st["addr"])) // element_bytes + n_el + 1)
        elif st["op"] in MATRIX_OPS:
            top = max(top, max(int(np.max(e)) for e in st["elem_addr"]) // element_bytes + 1)
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
            if (a % element_bytes).any():
                raise LayoutError(f"certificate: an LDS address is not a multiple of the element size {element_bytes}")
            base = a // element_bytes
            slots = st["src"] if op == "lds_store" else st["dst"]
            for k, sl in enumerate(slots):
                if op == "lds_store":
                    lds[base + k] = state[:, :, sl]
                else:
                    state[:, :, sl] = lds[base + k]
        elif op in MATRIX_OPS:  # slot j at its own element address
            for sl, e in zip(st["src"] if op == "stmatrix" else st["dst"], st["elem_addr"]):
                e = _lanes_of(e, W)
                if (e % element_bytes).any():
                    raise LayoutError(f"certificate: an {op} element address is not a multiple of the element size")
                if op == "stmatrix":
                    lds[e // element_bytes] = state[:, :, sl]
                else:
                    state[:, :, sl] = lds[e // element_bytes]
        elif op == "movmatrix":
            warp = np.arange(W)[:, None]  # slot dst[j] of lane l <- slot S_j[l] of lane T_j[l]
            vals = [state[warp, _lanes_of(t, W), _lanes_of(s, W)] for t, s in zip(st["src_lane"], st["src_slot"])]
            for sl, v in zip(st["dst"], vals):
                state[:, :, sl] = v
        elif op == "movrels":  # warp w: slot dst[i] <- slot src[i] + shift[w]
            shift = np.asarray(st["shift"], dtype=np.int64)
            if shift.shape != (W,):
                raise LayoutError(f"certificate: a movrels shift has {shift.size} entries for {W} warps")
            read = np.asarray(st["src"], dtype=np.int64)[None, :] + shift[:, None]  # [W, slots]
            if read.min() < 0:
                raise LayoutError("certificate: a movrels step reads below slot 0")
            # one v_movrels_b32 per register, in order (as the emulator, the MLIR and the hardware): the slots
            # of one dst register (of a 64-bit slot: the slot) at once, a register an earlier one wrote read new
            p = slots_per_dword(int(cert["element_bits"]))
            per_register: dict[int, list[int]] = {}
            for i, d in enumerate(st["dst"]):
                per_register.setdefault(d // p, []).append(i)
            dst = np.asarray(st["dst"], dtype=np.int64)
            for idx in per_register.values():
                state[:, :, dst[idx]] = np.take_along_axis(state, read[:, None, idx].repeat(wave, axis=1), axis=2)
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
    p, dps, element_bytes = _slot_layout(plan.element_bits)
    if not plan.slots_out:
        return np.full(regs.shape[1:3] + (0,), UNDEF, dtype=np.int64)
    if plan.slots_out % p == 0:  # slots fill dwords 0.. in order: cell (d, b) is byte 4d + b of the run
        g = regs[: plan.slots_out * element_bytes // 4].transpose(0, 3, 1, 2).reshape(
            plan.slots_out, element_bytes, *regs.shape[1:3])
    else:
        d_i, b_i = _cell_index(range(plan.slots_out), p, dps, element_bytes)
        g = regs[d_i, :, :, b_i]  # [slots, bytes, W, lanes]
    ident = (g[:, 0] - TAG_BASE) // 8
    k = np.arange(g.shape[1])[None, :, None, None]
    ok = (g[:, 0] >= TAG_BASE) & (g == TAG_BASE + 8 * ident[:, None] + k).all(axis=1)
    return np.moveaxis(np.where(ok, ident, UNDEF), 0, -1)


def _holds_tags(plan: Plan, regs: np.ndarray, dst: LinearLayout) -> bool:
    """Do the dst slots after an ISA run hold exactly the elements of ``dst`` (``_expected_layout``; every
    byte the tag ``TAG_BASE + 8 * id + byte``)?  When the slots fill whole dwords, the expected tags are
    compared in place (``_tag_tables``); otherwise through ``_final_ids_from_regs``."""
    if (not plan.slots_out or plan.slots_out % slots_per_dword(plan.element_bits) or plan.dst_unpacked
            or plan.dst_one_copy):
        wrong = _final_ids_from_regs(plan, regs) != element_ids(dst, plan.num_warps)
        return not (wrong & checked_slots(plan)).any()
    lanes, tags = _tag_tables(dst, plan.num_warps, plan.slots_out, _slot_layout(plan.element_bits)[2])
    return bool((regs[: len(tags) // 4] == (tags.reshape(-1, 1, 1, 4) ^ lanes[None, :, :, None]) + TAG_BASE).all())


def checked_slots(plan: Plan) -> np.ndarray:
    """``[slots_out]``, or ``[1, wave_size, slots_out]`` for a dst read in one copy: the dst slots a run must
    leave their elements in -- every one, except above each VGPR's first slot of a dst held one element
    per VGPR (``Plan.dst_unpacked``: don't-care there) and in the lanes other than the canonical ones of a
    dst read in one copy (``Plan.dst_one_copy``, linlayout.synth.one_copy.canonical_lanes).  The slots a
    kernel stores (linlayout.lowering.emit.host.emulated_output)."""
    slots = np.arange(plan.slots_out)
    checked = slots % slots_per_dword(plan.element_bits) == 0 if plan.dst_unpacked else slots >= 0
    if not plan.dst_one_copy:
        return checked
    return canonical_lanes(plan.dst, plan.wave_size)[None, :, None] & checked[None, None, :]


def verify(plan: Plan, certificate: bool = True) -> VerifyResult:
    """Run ``plan`` at ISA level and (``certificate``) at certificate level; both must leave ``dst`` in
    the dst slots.  A plan moving whole 2- or 4-byte cells only runs on such cells first
    (``_cell_run_holds``); any other plan, or a failure there, runs on byte cells, which tell what
    went wrong."""
    dst = _expected_layout(plan)
    n_reg = dst.in_dim_size("register")
    if n_reg != plan.slots_out:
        return VerifyResult(False, f"dst has {n_reg} registers but the plan fills {plan.slots_out}")
    if not _cell_run_holds(plan):
        failure = _byte_run_failure(plan)
        if failure:
            return VerifyResult(False, failure)
    if not certificate:
        return VerifyResult(True, "")
    want = element_ids(dst, plan.num_warps)
    state = run_certificate(plan.to_certificate(raw=True))[:, :, : plan.slots_out]
    bad = (state != want) & checked_slots(plan)
    if bad.any():
        w, l, s = map(int, np.argwhere(bad)[0])
        return VerifyResult(False, f"certificate run: warp {w} lane {l} slot {s} holds element "
                                   f"{int(state[w, l, s])}, expected {int(want[w, l, s])}")
    return VerifyResult(True, "")


def _byte_run_failure(plan: Plan) -> str:
    """What goes wrong in the ISA run on byte cells ("" when the dst slots end up holding the elements
    ``expected_ids`` names)."""
    try:
        regs = run_isa(plan)
    except (PlanVerificationError, LayoutError) as e:
        return f"ISA execution failed: {e}"
    dst = _expected_layout(plan)
    if _holds_tags(plan, regs, dst):
        return ""
    want = element_ids(dst, plan.num_warps)
    got = _final_ids_from_regs(plan, regs)
    bad = (got != want) & checked_slots(plan)
    w, l, s = map(int, np.argwhere(bad)[0])
    return (f"ISA run: warp {w} lane {l} slot {s} holds element {int(got[w, l, s])}, "
            f"expected {int(want[w, l, s])} ({int(bad.sum())} slots wrong)")
