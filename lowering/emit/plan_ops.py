"""Plan steps (linlayout.synth.plan) -> MLIR ops, one op per instruction of the plan.

Registers.  The plan's slots live in 32-bit VGPRs ("dwords"): with ``b``-bit elements,
``p = max(1, 32 // b)`` slots share a dword (slot ``s`` = element ``s % p`` of dword
``s // p``, little endian); a 64-bit slot ``s`` spans dwords ``2s, 2s+1``.  The emitter
keeps one i32 SSA value per dword; register steps act on whole dwords.

Instruction per step (docs/amd_facts.md 2.8):

===================  =========================================================================
step                 MLIR
===================  =========================================================================
Mov rename / v_mov   none (SSA renaming; LLVM inserts a ``v_mov_b32`` only where it needs one)
Mov v_perm_b32       ``llvm.call_intrinsic "llvm.amdgcn.perm"(S0, S1, selector)``
PermSelect           the same with a per-lane selector register (``sel1`` where cond, else ``sel0``)
Select               ``arith.select cond, b, a`` (``v_cndmask_b32``: VCC = cond, S0 = a, S1 = b)
Lane dpp:<ctl>       ``rocdl.update.dpp poison, src with ctrl, row_mask, bank_mask, bound_ctrl``
Lane ds_swizzle      ``rocdl.ds_swizzle src, offset``
Lane ds_bpermute     ``rocdl.ds_bpermute addr, src`` (addr = 4 * source lane)
FusedDpp v_mov       ``rocdl.update.dpp own, src with ctrl, row_mask, bank_mask, bound_ctrl``
FusedDpp v_cndmask   ``update.dpp`` (bound_ctrl 1, full masks) then ``arith.select keep, own, moved``;
                     LLVM's DPP combiner fuses the pair into one ``v_cndmask_b32_dpp``
PermlaneSwap         ``rocdl.permlane{16,32}.swap vdst, src0, false, false`` (both results used)
LdsStore / LdsLoad   ``llvm.store`` / ``llvm.load`` on ``!llvm.ptr<3>`` of the access width
                     (``ds_write_b{8,16,32,64,128}``, ``ds_write_b16_d16_hi``, ``ds_read_*``)
Barrier              ``gpu.barrier`` (``s_waitcnt lgkmcnt(0)`` + ``s_barrier``)
===================  =========================================================================

Per-lane parameters (LDS addresses, ``ds_bpermute`` addresses, VCC masks) are computed in
the kernel's prologue by :class:`~linlayout.lowering.emit.lane_values.LaneValues` (:meth:`prepare`),
so the counted region holds only the instructions above.  An LDS access whose address is
an earlier one's plus a constant reuses that address register with an immediate offset.

LLVM merges two ``ds_read_b32``/``ds_read_b64`` (or writes) off one address register into
one ``ds_read2*`` (and vectorizes adjacent accesses); the plan counts them separately, so a
``rocdl.sched.barrier none`` (no instruction) separates successive LDS steps between two
barriers and the ISA keeps exactly the plan's LDS instructions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from linlayout import LayoutError
from linlayout.synth.plan import (Barrier, FusedDpp, Lane, LdsLoad, LdsStore, Mov, PermlaneSwap, PermSelect, Plan, Select,
                        Step, dwords_per_slot, slots_per_dword)

from . import atoms
from .builder import Builder, vector_type
from .lane_values import LaneValues

__all__ = ["PlanEmitter", "LDS_OFFSET_LIMIT", "slot_dwords", "dword_pairs"]

# ds_read/ds_write carry a 16-bit unsigned byte offset; ds_read2/ds_write2 two 8-bit ones.
LDS_OFFSET_LIMIT = 1 << 16
PAIR_OFFSET_MAX = 255


def slot_dwords(slot: int, p: int, dps: int) -> list[tuple[int, int, int]]:
    """``(dword, first byte, bytes)`` pieces of one slot (64-bit: two dwords)."""
    if dps == 2:
        return [(2 * slot, 0, 4), (2 * slot + 1, 0, 4)]
    nb = 4 // p
    return [(slot // p, (slot % p) * nb, nb)]


def dword_pairs(dst: list[int], src: list[int], p: int, dps: int, what: str) -> list[tuple[int, int]]:
    """``(dst dword, src dword)`` of a register step whose slots keep their place in the dword.

    Every dst dword must be listed whole (all ``p`` slots) and come from one src dword.
    """
    if len(dst) != len(src):
        raise LayoutError(f"{what}: {len(dst)} destination slots but {len(src)} source slots")
    pairs: dict[int, int] = {}
    covered: dict[int, set[int]] = {}
    for d, s in zip(dst, src):
        if dps == 1 and d % p != s % p:
            raise LayoutError(f"{what}: slot {s} -> {d} changes the element's place in its register")
        for (dd, _, _), (sd, _, _) in zip(slot_dwords(d, p, dps), slot_dwords(s, p, dps)):
            if pairs.setdefault(dd, sd) != sd:
                raise LayoutError(f"{what}: register {dd} would come from two registers")
            covered.setdefault(dd, set()).add(d % p)
    for dd, got in covered.items():
        if dps == 1 and len(got) != p:
            raise LayoutError(f"{what}: register {dd} is written in part (slots {sorted(got)} of {p}); "
                              "register steps move whole 32-bit registers")
    return list(pairs.items())


@dataclass
class _Prepared:
    """Setup values of one step: address (value, immediate), condition, ..."""

    addr: tuple[str, int] | None = None
    cond: str | None = None
    extra: dict = field(default_factory=dict)


class PlanEmitter:
    """Lowers one :class:`~linlayout.synth.plan.Plan` to MLIR ops on i32 register values.

    Call :meth:`prepare` in the prologue (it emits the per-lane setup values), then
    :meth:`emit` inside the counted region with the source registers.
    """

    def __init__(self, b: Builder, plan: Plan, lanes: LaneValues, lds: str | None) -> None:
        self.b = b
        self.plan = plan
        self.lanes = lanes
        self.lds = lds
        self.p = slots_per_dword(plan.element_bits)
        self.dps = dwords_per_slot(plan.element_bits)
        self.elem_bytes = max(1, plan.element_bits // 8)
        self._prep: list[_Prepared] = []
        self._lds_ptrs: dict[str, str] = {}
        self.loaded: set[str] = set()  # values that are LDS load results as loaded (no instruction after)

    # ------------------------------------------------------------------ prologue
    def prepare(self) -> None:
        """Emit the per-lane values every step needs (before the counted region)."""
        self._prep = [self._prepare_step(i, st) for i, st in enumerate(self.plan.steps)]

    def _lds_address(self, st: LdsStore | LdsLoad, what: str) -> tuple[str, int]:
        """The address register and immediate offset of an LDS step.

        A paired step (``ds_read2``/``ds_write2``) has two 8-bit offsets in units of
        ``width`` (``64 * width`` for st64): the shared register must sit at a multiple of
        that unit below the first access, close enough for the second offset to fit.
        """
        if self.lds is None:
            raise LayoutError(f"{what}: the plan accesses LDS but the kernel has no LDS allocation")
        if st.pair is None:
            unit, limit = 1, LDS_OFFSET_LIMIT
        else:
            unit = st.width * (64 if st.st64 else 1)
            if not 0 < st.pair_offset <= PAIR_OFFSET_MAX:
                raise LayoutError(f"{what}: pair offset {st.pair_offset} is not in 1..{PAIR_OFFSET_MAX}")
            limit = unit * (PAIR_OFFSET_MAX + 1 - st.pair_offset)
        base, delta = self.lanes.value_of(st.addr, max_delta=limit, delta_unit=unit, what=what)
        ptr = self._lds_ptrs.get(base)
        if ptr is None:
            ptr = atoms.lds_pointer(self.b, self.lds, base)
            self._lds_ptrs[base] = ptr
            self.lanes.pinned.append((ptr, "!llvm.ptr<3>", "v"))
        return ptr, delta

    def _prepare_step(self, i: int, st: Step) -> _Prepared:
        what = f"plan step {i} ({st.op})"
        if isinstance(st, Select):
            return _Prepared(cond=self.lanes.condition(st.cond, what))
        if isinstance(st, PermSelect):
            cond = np.asarray(st.cond, dtype=np.int64) != 0
            sel, _ = self.lanes.value_of(np.where(cond, st.sel1, st.sel0), what=what)
            return _Prepared(extra={"selector": sel})
        if isinstance(st, FusedDpp) and st.form == "v_cndmask_b32_dpp":
            return _Prepared(cond=self.lanes.condition(st.keep, what))
        if isinstance(st, Lane) and st.kind == "ds_bpermute":
            need = np.asarray(st.src_lane, dtype=np.int64)
            addr, _ = self.lanes.value_of(4 * np.where(need >= 0, need, 0), defined=need >= 0, what=what)
            return _Prepared(extra={"addr": addr})
        if isinstance(st, (LdsStore, LdsLoad)):
            return _Prepared(addr=self._lds_address(st, what))
        if isinstance(st, Mov) and st.kind == "v_perm_b32":
            sel = self.b.const(st.selector)
            if (sel, "i32", "s") not in self.lanes.pinned:
                self.lanes.pinned.append((sel, "i32", "s"))
            return _Prepared(extra={"selector": sel})
        return _Prepared()

    # ------------------------------------------------------------------ region
    def emit(self, regs: dict[int, str]) -> dict[int, str]:
        """Emit the steps on ``regs`` (dword index -> i32 value); returns the final registers."""
        if len(self._prep) != len(self.plan.steps):
            raise LayoutError("PlanEmitter.emit called before prepare()")
        regs = dict(regs)
        lds_since_barrier = 0
        for i, (st, prep) in enumerate(zip(self.plan.steps, self._prep)):
            what = f"plan step {i} ({st.op})"
            if isinstance(st, (LdsStore, LdsLoad)):
                if lds_since_barrier:
                    self.b.line("rocdl.sched.barrier none")
                lds_since_barrier += 1
            elif isinstance(st, Barrier):
                lds_since_barrier = 0
            self._step(st, prep, regs, what)
        return regs

    def _get(self, regs: dict[int, str], d: int, what: str) -> str:
        try:
            return regs[d]
        except KeyError:
            raise LayoutError(f"{what}: register {d} is read before it holds a value") from None

    def _step(self, st: Step, prep: _Prepared, regs: dict[int, str], what: str) -> None:
        b, p, dps = self.b, self.p, self.dps
        if isinstance(st, PermSelect):
            regs[st.dst_dword] = self._perm(regs, st.operands, prep.extra["selector"], what)
        elif isinstance(st, Mov):
            if st.kind == "v_perm_b32":
                regs[st.dst_dword] = self._perm(regs, st.operands, prep.extra["selector"], what)
                return
            if st.kind not in ("rename", "v_mov"):
                raise LayoutError(f"{what}: unknown mov kind {st.kind!r}")
            pairs = dword_pairs(st.dst, st.src, p, dps, what)
            old = {sd: self._get(regs, sd, what) for _, sd in pairs}
            for dd, sd in pairs:
                regs[dd] = old[sd]
        elif isinstance(st, Select):
            for (d, a), (_, bb) in zip(dword_pairs(st.dst, st.a, p, dps, what), dword_pairs(st.dst, st.b, p, dps, what)):
                regs[d] = b.select(prep.cond, self._get(regs, bb, what), self._get(regs, a, what))
        elif isinstance(st, Lane):
            for d, s in dword_pairs(st.dst, st.src, p, dps, what):
                regs[d] = self._lane(st, prep, self._get(regs, s, what), what)
        elif isinstance(st, FusedDpp):
            own_pairs = dword_pairs(st.dst, st.own, p, dps, what)
            src_pairs = dword_pairs(st.dst, st.src, p, dps, what)
            isa = st.isa
            ctrl, rm, bm, bc = int(isa["ctrl"]), int(isa.get("row_mask", 0xF)), int(isa.get("bank_mask", 0xF)), \
                int(isa.get("bound_ctrl", 0))
            for (d, o), (_, s) in zip(own_pairs, src_pairs):
                own, src = self._get(regs, o, what), self._get(regs, s, what)
                if st.form == "v_mov_b32_dpp":
                    regs[d] = atoms.dpp_mov(b, src, ctrl, rm, bm, bool(bc), old=own)
                elif st.form == "v_cndmask_b32_dpp":
                    moved = atoms.dpp_mov(b, src, ctrl, 0xF, 0xF, True)
                    regs[d] = b.select(prep.cond, own, moved)
                else:
                    raise LayoutError(f"{what}: unknown fused DPP form {st.form!r}")
        elif isinstance(st, PermlaneSwap):
            if st.kind not in ("permlane16_swap", "permlane32_swap"):
                raise LayoutError(f"{what}: unknown permlane swap {st.kind!r}")
            for vd, s0 in dword_pairs(st.vdst, st.src0, p, dps, what):
                regs[vd], regs[s0] = atoms.permlane_swap(b, st.kind, self._get(regs, vd, what),
                                                         self._get(regs, s0, what))
        elif isinstance(st, LdsStore):
            self._lds_store(st, prep, regs, what)
        elif isinstance(st, LdsLoad):
            self._lds_load(st, prep, regs, what)
        elif isinstance(st, Barrier):
            b.line("gpu.barrier")
        else:
            raise LayoutError(f"{what}: no lowering for {type(st).__name__}")

    def _perm(self, regs: dict[int, str], operands: tuple[int, int], selector: str, what: str) -> str:
        s0, s1 = operands
        return self.b.value(f'llvm.call_intrinsic "llvm.amdgcn.perm"({self._get(regs, s0, what)}, '
                            f"{self._get(regs, s1, what)}, {selector}) : (i32, i32, i32) -> i32", "perm")

    # ------------------------------------------------------------------ lane moves
    def _lane(self, st: Lane, prep: _Prepared, src: str, what: str) -> str:
        b = self.b
        fam = st.kind.split(":", 1)[0]
        if fam == "dpp":
            isa = st.isa
            return atoms.dpp_mov(b, src, int(isa["ctrl"]), int(isa.get("row_mask", 0xF)),
                                 int(isa.get("bank_mask", 0xF)), bool(isa.get("bound_ctrl", 0)))
        if fam == "ds_swizzle":
            return atoms.ds_swizzle(b, src, int(st.isa["offset"]))
        if fam == "ds_bpermute":
            return atoms.ds_bpermute(b, prep.extra["addr"], src)
        raise LayoutError(f"{what}: lane step kind {st.kind!r} has no lowering")

    # ------------------------------------------------------------------ LDS
    def _pieces(self, slots: list[int], width: int, what: str) -> list[tuple[int, int, int]]:
        """The dword pieces of an LDS access, in address order; checks they fill ``width`` bytes."""
        pieces = [pc for s in slots for pc in slot_dwords(s, self.p, self.dps)]
        if sum(n for _, _, n in pieces) != width:
            raise LayoutError(f"{what}: {len(slots)} slots do not make a {width}-byte access")
        if width >= 4 and any(n != 4 for _, _, n in self._merge(pieces)):
            raise LayoutError(f"{what}: a {width}-byte access must move whole 32-bit registers")
        return pieces

    @staticmethod
    def _merge(pieces: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
        """Join consecutive pieces of one dword (``(d, 0, 2), (d, 2, 2)`` -> ``(d, 0, 4)``)."""
        out: list[tuple[int, int, int]] = []
        for d, o, n in pieces:
            if out and out[-1][0] == d and out[-1][1] + out[-1][2] == o:
                out[-1] = (d, out[-1][1], out[-1][2] + n)
            else:
                out.append((d, o, n))
        return out

    def _accesses(self, st: LdsStore | LdsLoad, prep: _Prepared, slots: list[int]) -> list[tuple[list[int], str]]:
        """``(slots, pointer)`` of the one or two accesses of an LDS step (a pair: no barrier between,
        LLVM fuses them into the ds_read2/ds_write2 the plan names)."""
        base, delta = prep.addr
        out = [(slots, atoms.lds_pointer(self.b, base, delta))]
        if st.pair is not None:
            unit = st.width * (64 if st.st64 else 1)
            out.append((st.pair, atoms.lds_pointer(self.b, base, delta + st.pair_offset * unit)))
        return out

    def _lds_store(self, st: LdsStore, prep: _Prepared, regs: dict[int, str], what: str) -> None:
        b = self.b
        for slots, ptr in self._accesses(st, prep, st.src):
            pieces = self._merge(self._pieces(slots, st.width, what))
            if st.width >= 4:
                vals = [self._get(regs, d, what) for d, _, _ in pieces]
                t = vector_type(len(vals), "i32")
                value = b.build_vector(vals, "i32")
            else:
                (d, o, n), = pieces
                word = self._get(regs, d, what)
                if o:
                    word = b.arith("shrui", word, b.const(8 * o))
                t = f"i{8 * n}"
                value = b.cast("arith.trunci", word, "i32", t)
            atoms.lds_store(b, value, ptr, t, st.width)

    def _lds_load(self, st: LdsLoad, prep: _Prepared, regs: dict[int, str], what: str) -> None:
        if st.transpose:
            (slots, ptr), = self._accesses(st, prep, st.dst)
            v = atoms.lds_transpose_load(self.b, ptr, st.transpose)
            for k, (d, _, _) in enumerate(self._merge(self._pieces(slots, 8, what))):
                regs[d] = self.b.extract(v, k, "vector<2xi32>")
                self.loaded.add(regs[d])
            return
        for slots, ptr in self._accesses(st, prep, st.dst):
            self._load_one(slots, ptr, st.width, regs, what)

    def _load_one(self, slots: list[int], ptr: str, width: int, regs: dict[int, str], what: str) -> None:
        b = self.b
        pieces = self._merge(self._pieces(slots, width, what))
        if width >= 4:
            t = vector_type(len(pieces), "i32")
            v = atoms.lds_load(b, ptr, t, width)
            for k, (d, _, _) in enumerate(pieces):
                regs[d] = v if len(pieces) == 1 else b.extract(v, k, t)
                self.loaded.add(regs[d])
            return
        (d, o, n), = pieces
        v = atoms.lds_load(b, ptr, f"i{8 * n}", width)
        word = b.cast("arith.extui", v, f"i{8 * n}", "i32")
        if o:
            word = b.arith("shli", word, b.const(8 * o))
        if d in regs and (o or n < 4):  # keep the other bytes of a register that holds data
            keep = b.arith("andi", regs[d], b.const(~(((1 << (8 * n)) - 1) << (8 * o)) & 0xFFFFFFFF))
            word = b.arith("ori", keep, word)
        elif not o:
            self.loaded.add(word)  # ds_read_u8/u16 zero-extend: the zext is free
        regs[d] = word
