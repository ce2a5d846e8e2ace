"""An SSA program over 32-bit registers (64-bit for 64-bit elements) that becomes plan steps.

The strategies of linlayout.synth.convert build programs of *values*: value ``i < n_init``
is src register (dword) ``i``; every op creates new values.  The builder folds
trivial ops (an identity lane map, a select of equal operands, constant
conditions) and shares identical ops.  ``emit`` drops ops whose results no dst
register needs, assigns registers, and writes plan steps: new values go to
fresh registers above both the src and dst register ranges; a permlane swap,
a masked ``v_mov_b32_dpp`` and an RDNA ``dpp8`` move write their operands in place
and get a ``v_mov`` copy first when an operand is still needed afterwards (that copy
is a real instruction and is counted).  The ``dpp8`` move is in place because LLVM
selects ``llvm.amdgcn.mov.dpp8`` as a ``v_mov_b32_dpp`` whose tied old value is its
source [observed: gfx1100 fp8 ``slice0(blocked[1x4,t4x8,o10])->slice1(wmma1.16x16)``
of the wave32 corpus, eight dpp8 moves of one value compile to seven copies and
the eight moves].  A select whose condition is a DPP row/bank product set can be emitted as
such a masked move too, of the identity control (``emit``'s ``dpp_selects``: no lane mask, maybe a
copy; the planner prices both forms).  Which VGPR holds which value is otherwise the
register allocator's business (renaming is free, as in Triton's counts): LDS
vector operands list their values' slots, and the dst registers are filled by
a final renaming.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .lane_ops import LaneOp, lane_indices, row_bank_masks
from .plan import (Barrier, FusedDpp, Lane, LdsLoad, LdsStore, Mov, PermlaneSwap, PermSelect, Select, Step,
                   prmt_selector)
from .steps import MatrixLoad, MatrixStore

__all__ = ["AMD_REGISTER_ISA", "DPP_SELECT_MODES", "FUSE_DPP_SELECT", "PTX_REGISTER_ISA", "Program", "Op", "RegisterIsa"]


@dataclass(frozen=True)
class RegisterIsa:
    """The instructions a program's register ops become: ``select`` (a per-lane choice), ``mov`` (a copy)
    and ``perm`` (a byte permute of two registers; the program's selectors are v_perm_b32's, a
    ``prmt`` step gets the equivalent prmt selector, linlayout.synth.steps.prmt_selector)."""

    select: str
    mov: str
    perm: str


AMD_REGISTER_ISA = RegisterIsa("v_cndmask", "v_mov", "v_perm_b32")
PTX_REGISTER_ISA = RegisterIsa("selp", "mov", "prmt")

# [I, observed] Whether a lane's DPP move and the select that merges it are emitted as one
# v_cndmask_b32_dpp.  The ISA has the instruction, but LLVM's DPP combiner did not fuse the pair
# the lowering emits (update.dpp + select, shared/ISA counts of the 48-case benchmark), so by
# default the pair is two steps; a row/bank-masked v_mov_b32_dpp (no select) stays one.
FUSE_DPP_SELECT = False

# ``Program.emit``'s choices of the lane masks whose v_cndmasks become masked DPP moves in place
# (``Program._dpp_select_ways``): none; the row/bank-shaped conditions whose every select can write an
# operand no later op reads; every row/bank-shaped one, with copies (masked DPP merges too)
DPP_SELECT_MODES = ("none", "in_place", "all")


@dataclass(slots=True)
class Op:
    kind: str  # lane | select | fused | swap | perm | copy | store | load | barrier
    args: tuple  # value ids read
    outs: tuple  # value ids written
    params: dict = field(default_factory=dict)


def swap_perm_operands(selector: int) -> int:
    """The ``v_perm_b32`` selector that picks the same bytes with the two operands swapped: each byte
    code below 8 flips between the S1 (0-3) and S0 (4-7) halves; constant codes stay."""
    out = 0
    for i in range(4):
        code = (selector >> (8 * i)) & 0xFF
        out |= (code ^ 4 if code < 8 else code) << (8 * i)
    return out


def _key_arr(a) -> bytes:
    return np.ascontiguousarray(a).tobytes()


def _lane_facts(need) -> tuple[np.ndarray, bool, bytes]:
    """``Program.lane``'s facts of a lane map: as int64, whether it moves nothing, its key."""
    need = np.asarray(need, dtype=np.int64)
    return need, bool(((need == lane_indices(len(need))) | (need < 0)).all()), _key_arr(need)


def _condition_facts(cond) -> tuple[np.ndarray, bool, bool, bytes]:
    """``Program.select``'s facts of a condition: as bool, whether any and every lane holds, its key."""
    cond = np.asarray(cond, dtype=bool)
    return cond, bool(cond.any()), bool(cond.all()), _key_arr(cond)


def _merge_facts(keep, need) -> tuple[np.ndarray, np.ndarray, bool, tuple[int, int] | None, tuple[bytes, bytes]]:
    """``Program.fused``'s facts of a masked DPP move: ``keep`` as bool, ``need`` don't-care where kept,
    whether every lane keeps, the DPP row and bank masks of the moving lanes, the key."""
    keep = np.asarray(keep, dtype=bool)
    need = np.where(keep, -1, np.asarray(need, dtype=np.int64))
    return keep, need, bool(keep.all()), row_bank_masks(~keep), (_key_arr(keep), _key_arr(need))


def _select_masks(cond: np.ndarray) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """The DPP ``(row_mask, bank_mask)`` enabling exactly the lanes where a select's condition holds,
    and those where it does not (None where that lane set is no row/bank product set)."""
    return row_bank_masks(cond), row_bank_masks(~np.asarray(cond, dtype=bool))


class Program:
    """Builder of an SSA register program for one wave (ops identical in every warp, except LDS addresses)."""

    def __init__(self, n_init: int, slots_per_value: int, dwords_per_value: int,
                 isa: RegisterIsa = AMD_REGISTER_ISA, fuse_select_perm: bool = False,
                 init_alias: tuple[int, ...] | None = None) -> None:
        """``init_alias[i]``: the first src value holding the same elements as src value ``i`` in
        every lane and warp (register duplicates: a lowering holds them in one VGPR, LLVM merging
        their identical loads), ``i`` itself when none does; None: no duplicates.  The register ops
        read a duplicate as its first, so a select of a value and its duplicate folds, an op on
        both is shared, and a permlane swap of the two (one VGPR) gets its ``v_mov`` copy."""
        if init_alias is not None and (len(init_alias) != n_init
                                       or any(not 0 <= a <= i or init_alias[a] != a for i, a in enumerate(init_alias))):
            raise ValueError(f"init_alias must map each of {n_init} src values to a first value at or before it")
        self.init_alias = init_alias
        self.isa = isa
        self.fuse_select_perm = fuse_select_perm
        self.n_init = n_init
        self.p = slots_per_value
        self.dps = dwords_per_value
        self.n_values = n_init
        self.ops: list[Op] = []
        self._cse: dict[tuple, tuple] = {}
        self.producer: dict[int, int] = {}
        self._facts: dict[tuple, tuple] = {}  # (what, ids of arrays) -> (the arrays, their facts)

    def _array_facts(self, what: str, arrays: tuple, compute):
        """``compute()``, the facts ``what`` of the per-lane ``arrays``, once per arrays given: a builder
        passes the same array for every pair of values it treats alike, and arrays are not changed once
        given (the ops keep them: each is made read-only here); the arrays are kept with their facts,
        so their ids stay theirs."""
        key = (what, *map(id, arrays))
        kept = self._facts.get(key)
        if kept is None:
            for array in arrays:
                if isinstance(array, np.ndarray):
                    array.flags.writeable = False
            kept = self._facts[key] = (arrays, compute())
        return kept[1]

    # ------------------------------------------------------------ builders
    def _new(self, kind: str, args: tuple, params: dict, n_out: int = 1, key: tuple | None = None) -> tuple:
        if key is not None:
            outs = self._cse.get(key)
            if outs is not None:
                return outs
        n = self.n_values
        outs = (n,) if n_out == 1 else tuple(range(n, n + n_out))
        self.n_values = n + n_out
        index = len(self.ops)
        self.ops.append(Op(kind, args, outs, params))
        for o in outs:
            self.producer[o] = index
        if key is not None:
            self._cse[key] = outs
        return outs

    def first(self, v: int) -> int:
        """``v``, or the first src value it duplicates (``init_alias``)."""
        return self.init_alias[v] if self.init_alias is not None and v < self.n_init else v

    def lane(self, src: int, need: np.ndarray, op: LaneOp) -> int:
        """``src`` read from lane ``need[l]`` (``-1``: don't care) by instruction ``op``."""
        if self.init_alias is not None:  # (a call per operand costs where no src value repeats: the usual case)
            src = self.first(src)
        need, identity, need_key = self._array_facts("lane", (need,), lambda: _lane_facts(need))
        if identity:
            return src
        return self._new("lane", (src,), {"need": need, "op": op}, key=("lane", src, need_key, op.kind))[0]

    def select(self, cond: np.ndarray, a: int, b: int) -> int:
        """Per lane ``b if cond[l] else a`` (a ``v_cndmask_b32``)."""
        if self.init_alias is not None:
            a, b = self.first(a), self.first(b)
        cond, some, every, cond_key = self._array_facts("select", (cond,), lambda: _condition_facts(cond))
        if a == b or not some:
            return a
        if every:
            return b
        swapped = self._swapped_selects(a, b)
        if swapped is not None:  # c2 ? (c1 ? x : y) : (c1 ? y : x) is (c1 ^ c2) ? y : x
            c1, x, y = swapped
            return self.select(np.logical_xor(cond, c1), x, y)
        fused = self._select_of_perms(a, b) if self.fuse_select_perm else None
        if fused is not None:
            s0, s1, sel_a, sel_b = fused
            return self.perm_select(s0, s1, sel_a, sel_b, cond)
        return self._new("select", (a, b), {"cond": cond}, key=("select", a, b, cond_key))[0]

    def _swapped_selects(self, a: int, b: int) -> tuple[np.ndarray, int, int] | None:
        """``(c1, x, y)`` where ``a = select(c1, x, y)`` and ``b = select(c1, y, x)``: the same two values
        picked the other way round on one condition (a per-warp register offset, then a per-lane pick
        between its two results), which a select between ``a`` and ``b`` folds into one select on the
        conditions' XOR, as the compiler does (random pairs: 3 ``v_cndmask`` in the plan, 1 in the kernel);
        else None."""
        ops = [self.ops[self.producer[v]] if v in self.producer else None for v in (a, b)]
        if any(op is None or op.kind != "select" for op in ops):
            return None
        (x, y), (y2, x2) = ops[0].args, ops[1].args
        c1 = ops[0].params["cond"]
        if (x, y) != (x2, y2) or not np.array_equal(c1, ops[1].params["cond"]):
            return None
        return c1, x, y

    def _bytes_of(self, v: int) -> list[tuple[int, int] | int]:
        """The four bytes of value ``v``, low first: ``(value, byte)`` read from another value, or the
        ``v_perm_b32`` constant code (12 and up: 0x00 or 0xFF) -- through ``v``'s permute when a
        ``perm`` made it whose codes are bytes or constants (codes 8-11 spread a source byte's sign
        bit, which reading other operands would change: such a permute's value is its own bytes)."""
        op = self.ops[self.producer[v]] if v in self.producer else None
        codes = [(op.params["selector"] >> (8 * i)) & 0xFF for i in range(4)] if op and op.kind == "perm" else []
        if not codes or any(8 <= c < 12 for c in codes):
            return [(v, i) for i in range(4)]
        s0, s1 = op.args
        return [c if c >= 12 else (s0 if c >= 4 else s1, c % 4) for c in codes]

    def element_source(self, v: int, slot: int, element_bytes: int) -> tuple[int, int]:
        """``(value, slot)``: where the element in slot ``slot`` of value ``v`` was read from, through the
        ``v_perm_b32``s that moved it whole (``_bytes_of``; its bytes in order from one slot of one value);
        ``(v, slot)`` where no permute made it so."""
        while True:
            parts = self._bytes_of(v)[slot * element_bytes:(slot + 1) * element_bytes]
            first = parts[0]
            if (v not in self.producer or not isinstance(first, tuple) or first[1] % element_bytes
                    or parts != [(first[0], first[1] + k) for k in range(element_bytes)] or first[0] == v):
                return v, slot
            v, slot = first[0], first[1] // element_bytes

    def _select_of_perms(self, a: int, b: int) -> tuple[int, int, int, int] | None:
        """``(s0, s1, sel_a, sel_b)`` when ``a`` and ``b`` (at least one made by a ``perm``) are
        ``v_perm_b32`` of the same two values ``(s0, s1)`` with selectors ``sel_a``, ``sel_b`` (a
        value that no permute made is its own bytes): then ``select(c, a, b)`` is one permute whose
        selector is per lane (``perm_select``).  Else None."""
        if not any(v in self.producer and self.ops[self.producer[v]].kind == "perm" for v in (a, b)):
            return None
        bytes_a, bytes_b = self._bytes_of(a), self._bytes_of(b)
        regs = sorted({x[0] for x in bytes_a + bytes_b if isinstance(x, tuple)})
        if len(regs) > 2:
            return None
        s0, s1 = (regs * 2)[:2]

        def selector(byte_list) -> int:
            codes = [x if isinstance(x, int) else (4 + x[1] if x[0] == s0 else x[1]) for x in byte_list]
            return sum(c << (8 * i) for i, c in enumerate(codes))
        return s0, s1, selector(bytes_a), selector(bytes_b)

    def fused(self, own: int, src: int, keep: np.ndarray, need: np.ndarray, op: LaneOp) -> int:
        """One DPP instruction: ``own`` where ``keep[l]``, else ``src`` read from lane ``need[l]``."""
        if self.init_alias is not None:
            own, src = self.first(own), self.first(src)
        keep, need, every, masks, arrays_key = self._array_facts("fused", (keep, need), lambda: _merge_facts(keep, need))
        if every:
            return own
        return self._new("fused", (own, src), {"keep": keep, "need": need, "op": op, "masks": masks},
                         key=("fused", own, src, arrays_key, op.kind))[0]

    def swap(self, kind: str, vdst: int, src0: int) -> tuple[int, int]:
        """gfx950 ``v_permlane{16,32}_swap``: returns the new (vdst, src0)."""
        vdst, src0 = self.first(vdst), self.first(src0)
        return self._new("swap", (vdst, src0), {"kind": kind}, n_out=2, key=("swap", kind, vdst, src0))  # type: ignore[return-value]

    def perm(self, s0: int, s1: int, selector: int) -> int:
        """``v_perm_b32``: byte ``i`` = byte ``sel[i]`` of ``{s0, s1}`` (0-3: s1, 4-7: s0, 12: zero).

        With ``fuse_select_perm``, a permute of two complementary selects ``s0 = c ? y : x``,
        ``s1 = c ? x : y`` is one permute of ``(x, y)`` whose per-lane selector is ``selector``
        where ``c`` is false and ``selector`` with its operands swapped (byte codes 0-3 <-> 4-7)
        where it is true (``perm_select``); the selects then have no other use left unless
        something else reads them (``emit`` drops dead ops)."""
        if self.init_alias is not None:
            s0, s1 = self.first(s0), self.first(s1)
        fused = self._complementary_selects(s0, s1) if self.fuse_select_perm else None
        if fused is not None:
            cond, x, y = fused
            return self.perm_select(x, y, int(selector), swap_perm_operands(int(selector)), cond)
        return self._new("perm", (s0, s1), {"selector": int(selector)}, key=("perm", s0, s1, int(selector)))[0]

    def _complementary_selects(self, s0: int, s1: int) -> tuple[np.ndarray, int, int] | None:
        """``(c, x, y)`` when ``s0 = select(c, x, y)`` and ``s1 = select(c, y, x)``, else None."""
        at0, at1 = self.producer.get(s0), self.producer.get(s1)
        if at0 is None or at1 is None:
            return None
        op0, op1 = self.ops[at0], self.ops[at1]
        if op0.kind != "select" or op1.kind != "select":
            return None
        (x, y), (y1, x1) = op0.args, op1.args
        if (x, y) != (x1, y1) or not np.array_equal(op0.params["cond"], op1.params["cond"]):
            return None
        return op0.params["cond"], x, y

    def perm_select(self, s0: int, s1: int, sel0: int, sel1: int, cond: np.ndarray) -> int:
        """``v_perm_b32`` with a per-lane selector VGPR: ``sel1`` where ``cond[l]``, else ``sel0``."""
        if self.init_alias is not None:
            s0, s1 = self.first(s0), self.first(s1)
        cond, some, every, cond_key = self._array_facts("select", (cond,), lambda: _condition_facts(cond))
        if sel0 == sel1 or not some:
            return self.perm(s0, s1, sel0)
        if every:
            return self.perm(s0, s1, sel1)
        return self._new("permsel", (s0, s1), {"sel0": int(sel0), "sel1": int(sel1), "cond": cond},
                         key=("permsel", s0, s1, int(sel0), int(sel1), cond_key))[0]

    def store(self, values: list[int], positions: list[int], addr: np.ndarray, width_bytes: int,
              pair: list[int] | None = None, pair_offset: int = 0, st64: bool = False,
              matrix: tuple[int, bool] | None = None) -> None:
        """LDS store of ``width_bytes`` per lane: ``values`` (in address order) at byte ``addr[w][l]``;
        sub-dword: element ``positions[0]`` of the one value.  ``pair``: a second access of the same
        width at ``addr + pair_offset * width_bytes`` (``* 64`` if ``st64``) in the same instruction.
        ``matrix``: ``(num, trans)`` of a PTX ``stmatrix`` of the registers ``values`` (``addr``: the
        lanes' row addresses; linlayout.synth.steps.MatrixStore)."""
        self._new("store", tuple(values) + tuple(pair or ()),
                  {"n_first": len(values), "positions": positions, "addr": addr, "width_bytes": width_bytes,
                   "pair_offset": pair_offset, "st64": st64, "paired": pair is not None, "matrix": matrix}, n_out=0)

    def load(self, n_values: int, addr: np.ndarray, width_bytes: int, paired: bool = False, pair_offset: int = 0,
             st64: bool = False, transpose: int = 0, matrix: tuple[int, bool] | None = None) -> tuple:
        """LDS load of ``width_bytes`` per lane into ``n_values`` new registers (sub-dword: element at
        position 0); ``paired``: as many more registers from ``addr + pair_offset * width_bytes``
        (``* 64`` if ``st64``); ``transpose``: the element bits of a transpose load (the target's of that
        width: linlayout.hw.transpose_loads; ``addr``: what each lane supplies); ``matrix``: ``(num, trans)`` of a PTX ``ldmatrix`` into ``n_values = num``
        registers (``addr``: the lanes' row addresses; linlayout.synth.steps.MatrixLoad)."""
        return self._new("load", (), {"addr": addr, "width_bytes": width_bytes, "paired": paired,
                                      "pair_offset": pair_offset, "st64": st64, "n_first": n_values,
                                      "transpose": transpose, "matrix": matrix},
                         n_out=n_values * (2 if paired else 1))

    def barrier(self, scope: str = "workgroup") -> None:
        """A barrier of ``scope`` (``"workgroup"`` or ``"warp"``: steps.Barrier)."""
        self._new("barrier", (), {"scope": scope}, n_out=0)

    # ------------------------------------------------------------ emission
    def emit(self, outputs: list[int], n_dst: int, dpp_selects: str = "none",
             identity_dpp: LaneOp | None = None) -> list[Step]:
        """Plan steps computing ``outputs[k]`` into dst register ``k`` (``len(outputs) == n_dst``).

        ``dpp_selects`` (``DPP_SELECT_MODES``; ``identity_dpp``: the target's DPP move reading each
        lane's own value, needed unless ``"none"``): which selects become a masked identity
        ``v_mov_b32_dpp`` (``_dpp_select_ways``)."""
        outputs = [self.first(v) for v in outputs]
        order, last_use = self._schedule(outputs)
        em = _Emitter(self, n_dst)
        if dpp_selects != "none":
            if identity_dpp is None:
                raise ValueError("a select as a DPP move needs the target's identity DPP move")
            em.dpp_selects = self._dpp_select_ways(order, last_use, dpp_selects)
            em.identity_dpp = identity_dpp
        for pos, i in enumerate(order):
            op = self.ops[i]
            _EMIT_OP[op.kind](em, op, pos, last_use)
        em.finish(outputs)
        return em.steps

    def _schedule(self, outputs: list[int]) -> tuple[list[int], dict[int, int]]:
        """The live ops computing ``outputs`` (indices into ``ops``, in program order) and each value's
        last reading position among them (after the last for an output)."""
        live = self._live(outputs)
        order = [i for i in range(len(self.ops)) if live[i]]
        last_use: dict[int, int] = {}
        for pos, i in enumerate(order):
            for a in self.ops[i].args:
                last_use[a] = pos
        for v in outputs:
            last_use[v] = len(order) + 1
        return order, last_use

    def dpp_select_modes(self, outputs: list[int]) -> list[str]:
        """The ``emit`` modes other than ``"none"`` that change a step of this program computing
        ``outputs`` (``"in_place"`` before ``"all"``, ``"all"`` only where it converts more): none
        when no live select's condition, or its complement, is a DPP row/bank product set and no
        row/bank-masked DPP move merges into a value read later."""
        outputs = [self.first(v) for v in outputs]
        if not any((op.kind == "select" and _select_masks(op.params["cond"]) != (None, None))
                   or (op.kind == "fused" and op.params["masks"] is not None) for op in self.ops):
            return []
        order, last_use = self._schedule(outputs)
        ways = {mode: self._dpp_select_ways(order, last_use, mode) for mode in ("in_place", "all")}
        modes = ["in_place"] if ways["in_place"] else []
        return modes + (["all"] if len(ways["all"]) > len(ways["in_place"]) else [])

    def _dpp_select_ways(self, order: list[int], last_use: dict,
                         mode: str) -> dict[int, tuple[int, tuple[int, int]] | None]:
        """Per select op (by its position in ``order``, the live ops) that becomes a masked identity
        ``v_mov_b32_dpp``: which operand it writes in place (0: ``a``, the move enabled where the
        condition holds; 1: ``b``, enabled where it does not) and the DPP ``(row_mask, bank_mask)``;
        per masked ``fused`` op whose kept value is read later, None: a copy of that value and the move
        in place, in place of a move and a ``v_cndmask``.  The ops of one condition go together
        (their lane mask is set up once: it is saved only when none is left a ``v_cndmask``): under
        ``"all"`` every condition that is a row/bank product set (or whose complement is), copying the
        written operand first where it is read later; under ``"in_place"`` only the conditions whose
        every select has an operand read last by it."""
        if mode not in DPP_SELECT_MODES:
            raise ValueError(f"dpp_selects must be one of {', '.join(DPP_SELECT_MODES)}, not {mode!r}")
        groups: dict[bytes, list[tuple[int, tuple[int, tuple[int, int]] | None]]] = {}
        refused: set[bytes] = set()
        for pos, i in enumerate(order):
            op = self.ops[i]
            if op.kind == "fused":
                # a masked move that cannot write its kept value in place is a move and a v_cndmask of
                # the condition ``keep`` (FUSE_DPP_SELECT: one v_cndmask_b32_dpp of it), or, under
                # "all" and masks, a copy of the kept value and the masked move in place
                if op.params["masks"] is not None and last_use.get(op.args[0], -1) <= pos:
                    continue
                key = _key_arr(op.params["keep"])
                if op.params["masks"] is None or FUSE_DPP_SELECT or mode == "in_place":
                    refused.add(key)
                else:
                    groups.setdefault(key, []).append((pos, None))
                continue
            if op.kind != "select":
                continue
            cond = op.params["cond"]
            key = _key_arr(cond)
            masks = _select_masks(cond)
            dead = [masks[k] is not None and last_use.get(op.args[k], -1) <= pos for k in (0, 1)]
            k = 0 if dead[0] else 1 if dead[1] else (0 if masks[0] is not None else 1)
            if masks[k] is None or (mode == "in_place" and not dead[k]):
                refused.add(key)
                continue
            groups.setdefault(key, []).append((pos, (k, masks[k])))
        return {pos: way for key, ways in groups.items() if key not in refused for pos, way in ways}

    def live_ops(self, outputs: list[int]) -> list[Op]:
        """The ops ``emit`` turns into steps for ``outputs``, in program order."""
        return [op for op, live in zip(self.ops, self._live([self.first(v) for v in outputs])) if live]

    def _live(self, outputs: list[int]) -> list[bool]:
        ops = self.ops
        live_vals = set(outputs)
        live = [False] * len(ops)
        lds = False  # a live LDS op
        for i in range(len(ops) - 1, -1, -1):
            op = ops[i]
            if op.kind in ("store", "barrier") or not live_vals.isdisjoint(op.outs):
                live[i] = True
                live_vals.update(op.args)
                lds = lds or op.kind in ("store", "load")
        # a barrier is needed only between live LDS ops
        if not lds:
            live = [l and ops[i].kind != "barrier" for i, l in enumerate(live)]
        return live


class _Emitter:
    def __init__(self, prog: Program, n_dst: int) -> None:
        self.prog = prog
        self.p, self.dps = prog.p, prog.dps
        self.steps: list[Step] = []
        self.reg: dict[int, int] = {v: v for v in range(prog.n_init)}  # value -> register
        self.next_reg = max(prog.n_init, n_dst)
        self.dpp_selects: dict[int, tuple[int, tuple[int, int]] | None] = {}  # Program._dpp_select_ways
        self.identity_dpp: LaneOp | None = None

    def _slots(self, r: int) -> list[int]:
        """The slots of register ``r``: ``r * p .. r * p + p - 1``."""
        p = self.p
        return [r] if p == 1 else list(range(r * p, r * p + p))

    def _slots_of(self, regs) -> list[int]:
        """The slots of the registers ``regs``, in order."""
        p = self.p
        return [r * p + k for r in regs for k in range(p)] if p > 1 else list(regs)

    def _fresh(self, n: int = 1, align: int = 1) -> int:
        r = -(-self.next_reg // align) * align
        self.next_reg = r + n
        return r

    def _copy(self, v: int) -> int:
        r = self._fresh()
        self.steps.append(Mov(dst=self._slots(r), src=self._slots(self.reg[v]), kind=self.prog.isa.mov))
        return r

    def _owned(self, v: int, pos: int, last_use: dict) -> int:
        """A register holding ``v`` that may be overwritten now (copy when ``v`` is needed later)."""
        return self.reg[v] if last_use.get(v, -1) <= pos else self._copy(v)

    def _lane(self, op: Op, pos: int, last_use: dict) -> None:
        lo: LaneOp = op.params["op"]
        isa = dict(lo.isa)
        if lo.family == "dpp":  # lanes without a DPP source are don't-care here: not written
            isa.update(row_mask=0xF, bank_mask=0xF, bound_ctrl=0)
        if "dpp8" in isa:  # in place (module docstring): a copy first when the source is needed afterwards
            r = self._owned(op.args[0], pos, last_use)
            src = r
        else:
            r, src = self._fresh(), self.reg[op.args[0]]
        self.steps.append(Lane(kind=lo.kind, dst=self._slots(r), src=self._slots(src),
                               src_lane=op.params["need"].copy(), isa=isa))
        self.reg[op.outs[0]] = r

    def _select(self, op: Op, pos: int, last_use: dict) -> None:
        way = self.dpp_selects.get(pos)
        if way is not None:
            self._dpp_select(op, pos, last_use, *way)
            return
        r = self._fresh()
        a, b = op.args
        self.steps.append(Select(dst=self._slots(r), a=self._slots(self.reg[a]), b=self._slots(self.reg[b]),
                                 cond=op.params["cond"].astype(np.int64), kind=self.prog.isa.select))
        self.reg[op.outs[0]] = r

    def _dpp_select(self, op: Op, pos: int, last_use: dict, written: int, masks: tuple[int, int]) -> None:
        """``select`` as ``v_mov_b32_dpp`` of the identity control writing operand ``written`` in place
        (a copy first when it is read later) with the other where the row/bank ``masks`` enable."""
        cond = np.asarray(op.params["cond"], dtype=bool)
        own, src = op.args[written], op.args[1 - written]
        keep = ~cond if written == 0 else cond
        r = self._owned(own, pos, last_use)
        lo = self.identity_dpp
        isa = {"ctrl": lo.isa["ctrl"], "row_mask": masks[0], "bank_mask": masks[1], "bound_ctrl": 0}
        tmp = self._fresh()
        self.steps.append(FusedDpp(form="v_mov_b32_dpp", dst=self._slots(r), own=self._slots(r),
                                   src=self._slots(self.reg[src]), tmp=self._slots(tmp),
                                   ctrl_name=lo.kind.split(":", 1)[1],
                                   src_lane=np.where(keep, -1, lane_indices(len(keep))),
                                   keep=keep.astype(np.int64), isa=isa))
        self.reg[op.outs[0]] = r

    def _swap(self, op: Op, pos: int, last_use: dict) -> None:
        a, b = op.args
        ra = self._owned(a, pos, last_use)
        rb = self._owned(b, pos, last_use) if b != a else self._copy(b)
        if rb == ra:
            rb = self._copy(b)
        self.steps.append(PermlaneSwap(kind=op.params["kind"], vdst=self._slots(ra), src0=self._slots(rb)))
        self.reg[op.outs[0]], self.reg[op.outs[1]] = ra, rb

    def _perm(self, op: Op, pos: int, last_use: dict) -> None:
        r = self._fresh()
        s0, s1 = self.reg[op.args[0]], self.reg[op.args[1]]
        sel = op.params["selector"]
        dst, src = [], []
        for slot in range(self.p):
            bsel = (sel >> (8 * slot * (4 // self.p))) & 0xFF
            if bsel < 8:
                sreg, sb = (s0, bsel - 4) if bsel >= 4 else (s1, bsel)
                dst.append(r * self.p + slot)
                src.append(sreg * self.p + sb // (4 // self.p))
        if self.prog.isa.perm == "prmt":  # prmt a = S1, b = S0
            self.steps.append(Mov(dst=dst, src=src, kind="prmt", operands=(s1, s0), selector=prmt_selector(sel),
                                  dst_dword=r))
        else:
            self.steps.append(Mov(dst=dst, src=src, kind="v_perm_b32", operands=(s0, s1), selector=sel,
                                  dst_dword=r))
        self.reg[op.outs[0]] = r

    def _barrier(self, op: Op, pos: int, last_use: dict) -> None:
        self.steps.append(Barrier(scope=op.params["scope"]))

    def _fused(self, op: Op, pos: int, last_use: dict) -> None:
        own, src = op.args
        lo: LaneOp = op.params["op"]
        keep, need, masks = op.params["keep"], op.params["need"], op.params["masks"]
        if masks is not None and (last_use.get(own, -1) <= pos or pos in self.dpp_selects):
            r = old = self._owned(own, pos, last_use)  # in place: no VCC (a copy first where ``own`` is read later)
            rm, bm = masks
            isa = {"ctrl": lo.isa["ctrl"], "row_mask": rm, "bank_mask": bm, "bound_ctrl": 0}
            form = "v_mov_b32_dpp"
        elif not FUSE_DPP_SELECT:  # a DPP move, then a v_cndmask
            tmp = self._fresh()
            self.steps.append(Lane(kind=lo.kind, dst=self._slots(tmp), src=self._slots(self.reg[src]),
                                   src_lane=need.copy(), isa={"ctrl": lo.isa["ctrl"], "row_mask": 0xF,
                                                              "bank_mask": 0xF, "bound_ctrl": 0}))
            r = self._fresh()
            self.steps.append(Select(dst=self._slots(r), a=self._slots(tmp), b=self._slots(self.reg[own]),
                                     cond=keep.astype(np.int64)))
            self.reg[op.outs[0]] = r
            return
        else:
            r, old = self._fresh(), self.reg[own]
            isa = {"ctrl": lo.isa["ctrl"], "row_mask": 0xF, "bank_mask": 0xF, "bound_ctrl": 1}
            form = "v_cndmask_b32_dpp"
        tmp = self._fresh()
        self.steps.append(FusedDpp(form=form, dst=self._slots(r), own=self._slots(old),
                                   src=self._slots(self.reg[src]), tmp=self._slots(tmp),
                                   ctrl_name=lo.kind.split(":", 1)[1], src_lane=need.copy(),
                                   keep=keep.astype(np.int64), isa=isa))
        self.reg[op.outs[0]] = r

    def _byte_source(self, code: int, s0: int, s1: int) -> int | None:
        """Slot read by selector byte ``code`` (None for a constant byte)."""
        if code >= 8:
            return None
        reg = s0 if code >= 4 else s1
        return reg * self.p + (code % 4) // (4 // self.p)

    def _permsel(self, op: Op, pos: int, last_use: dict) -> None:
        """A ``PermSelect`` step.  A slot whose bytes one selector fills with a constant (a slot no
        one reads: the unfused permute left it zero) copies, under that selector, the bytes the
        other selector copies, so the step's element-level select (that slot named on both
        sides) is what the instruction does."""
        r = self._fresh()
        s0, s1 = self.reg[op.args[0]], self.reg[op.args[1]]
        sel0, sel1 = op.params["sel0"], op.params["sel1"]
        slot_bits = 32 // self.p
        slot_mask = (1 << slot_bits) - 1
        dst, a, b = [], [], []
        for slot in range(self.p):
            shift = slot_bits * slot
            x0 = self._byte_source((sel0 >> shift) & 0xFF, s0, s1)
            x1 = self._byte_source((sel1 >> shift) & 0xFF, s0, s1)
            if x0 is None and x1 is None:
                continue
            if x0 is None:
                sel0 = sel0 & ~(slot_mask << shift) | sel1 & (slot_mask << shift)
            elif x1 is None:
                sel1 = sel1 & ~(slot_mask << shift) | sel0 & (slot_mask << shift)
            dst.append(r * self.p + slot)
            a.append(x0 if x0 is not None else x1)
            b.append(x1 if x1 is not None else x0)
        cond = op.params["cond"].astype(np.int64)
        if self.prog.isa.perm == "prmt":  # prmt a = S1, b = S0
            self.steps.append(PermSelect(dst=dst, a=a, b=b, cond=cond, operands=(s1, s0), sel0=prmt_selector(sel0),
                                         sel1=prmt_selector(sel1), dst_dword=r, form="prmt"))
        else:
            self.steps.append(PermSelect(dst=dst, a=a, b=b, cond=cond, operands=(s0, s1), sel0=sel0, sel1=sel1,
                                         dst_dword=r))
        self.reg[op.outs[0]] = r

    def _store(self, op: Op, pos: int, last_use: dict) -> None:
        width_bytes, positions, n1 = op.params["width_bytes"], op.params["positions"], op.params["n_first"]
        pair = dict(pair_offset=op.params["pair_offset"], st64=op.params["st64"])
        if op.params.get("matrix"):
            num, trans = op.params["matrix"]
            self.steps.append(MatrixStore(src=self._slots_of([self.reg[v] for v in op.args]), addr=op.params["addr"],
                                          num=num, trans=trans))
        elif width_bytes >= 4:
            slots = self._slots_of([self.reg[v] for v in op.args[:n1]])
            pslots = self._slots_of([self.reg[v] for v in op.args[n1:]]) if op.params["paired"] else None
            self.steps.append(LdsStore(src=slots, addr=op.params["addr"], width_bytes=width_bytes, pair=pslots, **pair))
        else:  # sub-dword (8/16-bit elements): elements k.. of one register
            (v,), (k,) = op.args, positions
            element_bytes = 4 // self.p
            slots = [self.reg[v] * self.p + k + i for i in range(width_bytes // element_bytes)]
            self.steps.append(LdsStore(src=slots, addr=op.params["addr"], width_bytes=width_bytes,
                                       d16_hi=k * element_bytes == 2))

    def _load(self, op: Op, pos: int, last_use: dict) -> None:
        width_bytes, n1 = op.params["width_bytes"], op.params["n_first"]
        if op.params.get("matrix"):
            num, trans = op.params["matrix"]
            r0 = self._fresh(len(op.outs))
            self.reg.update(zip(op.outs, range(r0, r0 + len(op.outs))))
            self.steps.append(MatrixLoad(dst=self._slots_of(range(r0, r0 + len(op.outs))), addr=op.params["addr"],
                                         num=num, trans=trans))
        elif width_bytes >= 4:
            r0 = self._fresh(len(op.outs))
            regs = range(r0, r0 + len(op.outs))
            self.reg.update(zip(op.outs, regs))
            slots = self._slots_of(regs[:n1])
            pslots = self._slots_of(regs[n1:]) if op.params["paired"] else None
            self.steps.append(LdsLoad(dst=slots, addr=op.params["addr"], width_bytes=width_bytes, pair=pslots,
                                      pair_offset=op.params["pair_offset"], st64=op.params["st64"],
                                      transpose=op.params.get("transpose", 0)))
        else:  # ds_read_u8/u16 (8/16-bit elements): zero-extended into a fresh register
            r = self._fresh()
            element_bytes = 4 // self.p
            self.steps.append(LdsLoad(dst=[r * self.p + i for i in range(width_bytes // element_bytes)],
                                      addr=op.params["addr"], width_bytes=width_bytes))
            self.reg[op.outs[0]] = r

    def finish(self, outputs: list[int]) -> None:
        """Rename the output values into dst registers ``0..n_dst-1`` (one parallel renaming, no overlap)."""
        pairs = [(k, self.reg[v]) for k, v in enumerate(outputs) if self.reg[v] != k]
        if not pairs:
            return
        targets = {k for k, _ in pairs}
        clash = {r for _, r in pairs if r in targets}
        if clash:
            moved = {}
            for r in sorted(clash):
                moved[r] = self._fresh()
            self.steps.append(Mov(dst=self._slots_of([moved[r] for r in sorted(clash)]),
                                  src=self._slots_of(sorted(clash))))
            pairs = [(k, moved.get(r, r)) for k, r in pairs]
        self.steps.append(Mov(dst=self._slots_of([k for k, _ in pairs]), src=self._slots_of([r for _, r in pairs])))


# an op's kind -> the _Emitter method writing its steps (arguments: the op, its position among the live ops,
# each value's last reading position); one table, not a test per kind per op
_EMIT_OP = {"lane": _Emitter._lane, "select": _Emitter._select, "fused": _Emitter._fused, "swap": _Emitter._swap,
            "perm": _Emitter._perm, "permsel": _Emitter._permsel, "store": _Emitter._store, "load": _Emitter._load,
            "barrier": _Emitter._barrier}
