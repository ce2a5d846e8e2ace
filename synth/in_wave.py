"""Conversions that stay inside each wave: packing, bit exchanges, per-register gathers.

Input: the element map ``M`` of synth.preimage restricted to one wave --
columns, per dst register bit and dst lane bit, of the src (register, lane)
position holding that element.  Everything is identical in every warp.

**Packing.**  With ``p = 32 / bits > 1`` elements per VGPR, ``kappa <= log2 p``
src register bits ``K`` whose dst preimages ``K_d`` are dst register bits
travel together: the *units* (32-bit values) of the middle of the plan hold
the ``2**kappa`` elements that differ only in ``K`` (unit slot ``k`` = K
coordinate ``k``).  A pack stage builds the units from the src VGPRs and an
unpack stage builds the dst VGPRs from them, with ``v_perm_b32`` byte selects
where the element order differs (``gather_dword``).  The unit problem is ``M``
with the ``K`` bits removed: a linear map on (unit bits, lane bits).

**Exchanges** (``exchange_units``, for a unit map that is a partial bit
permutation).  Track which src bit ("label") sits at each register and lane
bit position.  An exchange of register bit ``rho`` and lane bit ``j`` swaps
their labels: for every register pair ``(a, b)`` differing in ``rho``,

    a' = l_j ? b[l ^ 2^j] : a        b' = l_j ? b : a[l ^ 2^j]

realized per target by the cheapest of: one ``v_permlane{16,32}_swap`` per pair
(gfx950, ``j = 4, 5``); DPP (``j <= 3``): per result a DPP move reading
``l -+ 2^j`` on the lanes that take it, merged by a row/bank-masked
``v_mov_b32_dpp`` in place or by a select (one ``v_cndmask_b32_dpp`` when
``synth.ir.FUSE_DPP_SELECT``); or *ship* -- ``t = l_j ? a : b``, one lane move
of ``t`` (ds_swizzle or ds_bpermute), two selects.  An element bit inside a
unit exchanges with a lane bit by a *subword exchange*: a lane move and a
``v_perm_b32`` with a per-lane selector, per register.  Every lane
position whose target label differs needs one exchange; a cycle of lane
labels needs one more (or a lane-permutation stage moving every unit once,
tried both before and after the exchanges).  Dst lanes that broadcast get a
*virtual* register bit (a copy of the registers), so one DPP move duplicates
the data.  Register renamings are free.

**Gather** (``gather_units``, any map).  Each dst unit, lane by lane, comes
from some (src unit, src lane); lanes are grouped by src unit, one group is
moved as a base and the others are merged by DPP-fused selects or by a move
and a ``v_cndmask``.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations

import numpy as np

from linlayout import LayoutError
from linlayout.hw.targets import Target

from .cost import CostModel
from .ir import FUSE_DPP_SELECT, Program
from .lane_ops import find_dpp, find_lane_op, row_bank_masks

__all__ = ["Packing", "SCHEDULES", "UnitMap", "choose_packing", "exchange_applicable", "exchange_estimate",
           "exchange_plan", "gather_dword", "gather_estimate", "gather_units", "pack_units", "unpack_units"]

WAVE = 64
LANE_BITS = 6
_LANES = np.arange(WAVE)


def _combos(cols: list[int]) -> np.ndarray:
    """``out[x] = XOR of cols[i] over the set bits i of x`` for every x < 2**len(cols)."""
    out = np.zeros(1, dtype=np.int64)
    for c in cols:
        out = np.concatenate([out, out ^ c])
    return out


def _deposit(value: np.ndarray, positions: list[int]) -> np.ndarray:
    """Scatter the low bits of ``value`` to bit ``positions[i]``."""
    out = np.zeros_like(value)
    for i, p in enumerate(positions):
        out |= ((value >> i) & 1) << p
    return out


@dataclass
class UnitMap:
    """Linear map from dst (unit bits, lane bits) to src (unit bits, lane bits).

    ``cols[b]`` for b < n_dst is the image of dst unit bit b, ``cols[n_dst + j]``
    that of lane bit j; images use bits ``0..n_src-1`` for src units and
    ``n_src..n_src+5`` for lanes.
    """

    n_src: int
    n_dst: int
    cols: list[int]

    def table(self) -> tuple[np.ndarray, np.ndarray]:
        """``(src_unit, src_lane)``, each ``[2**n_dst, 64]``."""
        full = _combos(self.cols).reshape(WAVE, 1 << self.n_dst).T
        return full & ((1 << self.n_src) - 1), full >> self.n_src


@dataclass
class Packing:
    """``K``: src register bits kept together (unit slot order); ``Kd``: their dst register bits."""

    elem_bits: int
    n_src_reg: int
    n_dst_reg: int
    K: list[int]
    Kd: list[int]
    units: UnitMap

    @property
    def p(self) -> int:
        return max(1, 32 // self.elem_bits)


def _unit_map(reg_cols: list[int], lane_cols: list[int], n_sr: int, K: list[int], Kd: list[int]) -> UnitMap | None:
    kmask = sum(1 << k for k in K)
    keep_src = [i for i in range(n_sr) if i not in K]
    remap = {s: i for i, s in enumerate(keep_src)}
    n_su = len(keep_src)

    def conv(c: int) -> int | None:
        if c & kmask:
            return None
        out = c >> n_sr << n_su
        for s, i in remap.items():
            out |= ((c >> s) & 1) << i
        return out

    cols = []
    for b, c in enumerate(reg_cols):
        if b in Kd:
            continue
        v = conv(c)
        if v is None:
            return None
        cols.append(v)
    n_du = len(cols)
    for c in lane_cols:
        v = conv(c)
        if v is None:
            return None
        cols.append(v)
    return UnitMap(n_su, n_du, cols)


def _pack_perms(pk_K: list[int], n_sr: int, p: int) -> int:
    """Units whose content is not one src VGPR with the elements already in unit-slot order."""
    kappa = len(pk_K)
    n_su = n_sr - kappa
    rest = [i for i in range(n_sr) if i not in pk_K]
    u = np.arange(1 << n_su)[:, None]
    k = np.arange(1 << kappa)[None, :]
    r = _deposit(u, rest) | _deposit(k, pk_K)
    same = ((r // p) == (r[:, :1] // p)).all(axis=1) & ((r % p) == k).all(axis=1)
    return int((~same).sum())


def choose_packing(reg_cols: list[int], lane_cols: list[int], n_sr: int, elem_bits: int) -> Packing:
    """The packing with the most elements per unit, then the fewest pack/unpack ``v_perm``s."""
    n_dr = len(reg_cols)
    p = max(1, 32 // elem_bits)
    e = p.bit_length() - 1
    G = [(c.bit_length() - 1, b) for b, c in enumerate(reg_cols)
         if c and c & (c - 1) == 0 and c < (1 << n_sr)]
    G = list({rho: (rho, b) for rho, b in G}.values())  # one dst bit per src bit
    for kappa in range(min(e, len(G)), -1, -1):
        best = None
        for sub in permutations(G, kappa):
            K, Kd = [s for s, _ in sub], [b for _, b in sub]
            um = _unit_map(reg_cols, lane_cols, n_sr, K, Kd)
            if um is None:
                continue
            cost = _pack_perms(K, n_sr, p) + _pack_perms(Kd, n_dr, p)
            if best is None or cost < best[0]:
                best = (cost, K, Kd, um)
        if best is not None:
            return Packing(elem_bits, n_sr, n_dr, best[1], best[2], best[3])
    raise LayoutError("internal: no packing found")  # kappa = 0 always succeeds


# ---------------------------------------------------------------------- byte gathers
def gather_dword(prog: Program, parts: list[tuple[int, int] | None], elem_bytes: int) -> int:
    """A register whose slot ``i`` is slot ``parts[i][1]`` of value ``parts[i][0]`` (None: don't care)."""
    used = [x for x in parts if x is not None]
    if not used:
        return 0  # nothing needed: any register
    vals = list(dict.fromkeys(v for v, _ in used))
    if len(vals) == 1 and all(x is None or x[1] == i for i, x in enumerate(parts)):
        return vals[0]
    if len(vals) <= 2:
        s1 = vals[0]
        s0 = vals[1] if len(vals) == 2 else vals[0]
        sel = 0
        for i in range(4 // elem_bytes):
            x = parts[i] if i < len(parts) else None
            for b in range(elem_bytes):
                byte = i * elem_bytes + b
                if x is None:
                    code = 0x0C
                else:
                    code = (4 if (x[0] == s0 and x[0] != s1) else 0) + x[1] * elem_bytes + b
                sel |= code << (8 * byte)
        return prog.perm(s0, s1, sel)
    half = len(parts) // 2
    lo = gather_dword(prog, parts[:half] + [None] * (len(parts) - half), elem_bytes)
    hi = gather_dword(prog, [None] * half + parts[half:], elem_bytes)
    sel = 0
    for byte in range(4):
        sel |= (byte if byte < 2 else 4 + byte) << (8 * byte)
    return prog.perm(hi, lo, sel)


def pack_units(prog: Program, pk: Packing) -> list[int]:
    """Values of the units (index = src unit index), built from the src VGPRs ``0..``."""
    p, kappa = pk.p, len(pk.K)
    rest = [i for i in range(pk.n_src_reg) if i not in pk.K]
    eb = max(1, pk.elem_bits // 8)
    units = []
    for u in range(1 << (pk.n_src_reg - kappa)):
        ks = np.arange(1 << kappa)
        r = _deposit(np.full_like(ks, u), rest) | _deposit(ks, pk.K)
        parts: list[tuple[int, int] | None] = [(int(x) // p, int(x) % p) for x in r]
        parts += [None] * (p - len(parts))
        units.append(gather_dword(prog, parts, eb) if p > 1 else int(r[0]))
    return units


def dst_register_parts(n_dst_slots: int, p: int, locate) -> list[list[tuple[int, int] | None]]:
    """Per dst VGPR, per slot: ``locate(r)`` = (value, slot) of dst element ``r`` (None past the end)."""
    return [[locate(r) if r < n_dst_slots else None for r in range(d * p, d * p + p)]
            for d in range(-(-n_dst_slots // p))]


def unpack_units(prog: Program, pk: Packing, final_units: list[int], n_dst_slots: int) -> list[int]:
    """Dst VGPR values built from the final units (index = dst unit index)."""
    rest = [i for i in range(pk.n_dst_reg) if i not in pk.Kd]
    eb = max(1, pk.elem_bits // 8)

    def locate(r: int) -> tuple[int, int]:
        u = sum(((r >> b) & 1) << i for i, b in enumerate(rest))
        k = sum(((r >> b) & 1) << i for i, b in enumerate(pk.Kd))
        return final_units[u], k

    return [gather_dword(prog, parts, eb) if pk.p > 1 else parts[0][0]
            for parts in dst_register_parts(n_dst_slots, pk.p, locate)]


# ---------------------------------------------------------------------- gather strategy
def gather_estimate(um: UnitMap, cm: CostModel) -> float:
    """Optimistic cost of ``gather_units``: one DPP merge per extra lane group."""
    src_u, _ = um.table()
    srt = np.sort(src_u, axis=1)
    extra = int((srt[:, 1:] != srt[:, :-1]).sum())
    merge = cm.instruction("dpp") + (0 if FUSE_DPP_SELECT else cm.instruction("v_cndmask"))
    return extra * merge


def gather_units(prog: Program, um: UnitMap, units: list[int], target: Target, cm: CostModel) -> list[int]:
    """Each dst unit assembled lane group by lane group (works for every map)."""
    src_u, src_l = um.table()
    fam = cm.lane_family_cost()
    sel_cost = cm.instruction("v_cndmask")
    dpp_cost = cm.instruction("dpp") + (0 if FUSE_DPP_SELECT else sel_cost)
    out = []
    for q in range(1 << um.n_dst):
        groups = []
        for g in np.unique(src_u[q]):
            lanes = src_u[q] == g
            need = np.where(lanes, src_l[q], -1)
            ident = bool((need[lanes] == _LANES[lanes]).all())
            mv = None if ident else find_lane_op(need, target, fam)
            dpp = find_dpp(need, target)
            base_cost = 0.0 if ident else fam[mv.family]
            add_cost = dpp_cost if dpp is not None else (base_cost + sel_cost)
            groups.append((int(g), lanes, need, mv, dpp, base_cost, add_cost))
        total = sum(g[6] for g in groups)
        bi = min(range(len(groups)), key=lambda i: total - groups[i][6] + groups[i][5])
        g, lanes, need, mv, _, _, _ = groups[bi]
        cur = units[g] if mv is None else prog.lane(units[g], need, mv)
        for i, (g2, lanes2, need2, mv2, dpp2, _, _) in enumerate(groups):
            if i == bi:
                continue
            if dpp2 is not None:
                cur = prog.fused(cur, units[g2], ~lanes2, need2, dpp2)
            else:
                t = units[g2] if mv2 is None else prog.lane(units[g2], need2, mv2)
                cur = prog.select(lanes2, cur, t)
        out.append(cur)
    return out


# ---------------------------------------------------------------------- exchange strategy
def _label(c: int, n_src_reg: int):
    if c == 0:
        return None
    if c & (c - 1):
        raise ValueError("not a bit permutation")
    b = c.bit_length() - 1
    return ("r", b) if b < n_src_reg else ("l", b - n_src_reg)


@dataclass
class _Realization:
    how: str  # permlane | fused | ship | subword
    kind: str = ""
    ops: tuple = ()
    cost: float = 0.0  # per register pair (per register for subword)


def _exchange_realization(j: int, target: Target, cm: CostModel) -> _Realization:
    """Cheapest way to exchange a unit bit with lane bit ``j`` (cost per register pair)."""
    J = 1 << j
    lj = ((_LANES >> j) & 1).astype(bool)
    opts = []
    if target.has_permlane_swap and j in (4, 5):
        opts.append(_Realization("permlane", f"permlane{16 if j == 4 else 32}_swap",
                                 cost=cm.instruction("permlane16_swap")))
    da = find_dpp(np.where(lj, _LANES ^ J, -1), target)
    db = find_dpp(np.where(~lj, _LANES ^ J, -1), target)
    if da is not None and db is not None:
        # per pair: one result in place under row/bank masks when lane bit j is 2..5, the other (and
        # both for j = 0, 1) a DPP move plus a select unless the compiler fuses them
        masked = 1 if row_bank_masks(lj) is not None else 0
        per = cm.instruction("dpp") * 2 + (0 if FUSE_DPP_SELECT else (2 - masked) * cm.instruction("v_cndmask"))
        opts.append(_Realization("fused", ops=(da, db), cost=per))
    full = find_lane_op(_LANES ^ J, target, cm.lane_family_cost())
    opts.append(_Realization("ship", ops=(full,), cost=3 * cm.instruction("v_cndmask")
                             + cm.lane_family_cost()[full.family]))
    return min(opts, key=lambda o: o.cost)


def _subword_realization(j: int, target: Target, cm: CostModel) -> _Realization:
    """Exchange a within-register element bit with lane bit ``j``: a lane move and a v_perm per register."""
    full = find_lane_op(_LANES ^ (1 << j), target, cm.lane_family_cost())
    return _Realization("subword", ops=(full,), cost=cm.lane_family_cost()[full.family]
                        + cm.instruction("v_perm_b32"))


def _subword_selectors(k: int, elem_bytes: int) -> tuple[int, int]:
    """v_perm selectors (S0 = partner's register, S1 = own) for lanes with l_j = 0 and l_j = 1."""
    p = 4 // elem_bytes
    sels = []
    for y in (0, 1):
        sel = 0
        for slot in range(p):
            x = (slot >> k) & 1
            src_slot, base = (slot, 0) if x == y else (slot ^ (1 << k), 4)
            for b in range(elem_bytes):
                sel |= (base + src_slot * elem_bytes + b) << (8 * (slot * elem_bytes + b))
        sels.append(sel)
    return sels[0], sels[1]


class _Exchanger:
    """Label machine over the register and lane bit positions of one wave.

    Register positions ``0..kappa-1`` are element bits inside a 32-bit unit (the
    packing ``K``); the others index units (``vals``).  Each position holds the
    label of the src bit whose coordinate it carries.  With ``prog`` None only
    labels move and ``cost`` accumulates (a dry run for choosing a schedule).
    """

    def __init__(self, prog: Program | None, reg_cols: list[int], lane_cols: list[int], n_sr: int,
                 K: list[int], units: list[int] | None, target: Target, cm: CostModel, elem_bits: int) -> None:
        self.prog, self.target, self.cm = prog, target, cm
        self.kappa = len(K)
        self.eb = max(1, elem_bits // 8)
        self.T = [_label(c, n_sr) for c in lane_cols]
        self.dst_labels = [_label(c, n_sr) for c in reg_cols]
        nv = 0
        for j in range(LANE_BITS):
            if self.T[j] is None:
                self.T[j] = ("v", nv)
                nv += 1
        rest = [i for i in range(n_sr) if i not in K]
        self.reg = [("r", i) for i in K] + [("r", i) for i in rest] + [("v", k) for k in range(nv)]
        self.lane = [("l", j) for j in range(LANE_BITS)]
        n_unit_bits = len(self.reg) - self.kappa
        self.n_units = 1 << n_unit_bits
        mask = (1 << len(rest)) - 1
        self.vals = [(units[q & mask] if units is not None else q & mask) for q in range(self.n_units)]
        self.cost = 0.0
        self._real: dict[tuple, _Realization] = {}

    def _realization(self, rho: int, j: int) -> _Realization:
        key = (rho < self.kappa, j)
        if key not in self._real:
            self._real[key] = (_subword_realization(j, self.target, self.cm) if rho < self.kappa
                               else _exchange_realization(j, self.target, self.cm))
        return self._real[key]

    def exchange(self, rho: int, j: int) -> None:
        real = self._realization(rho, j)
        sub = rho < self.kappa
        self.cost += real.cost * (self.n_units if sub else self.n_units // 2)
        self.reg[rho], self.lane[j] = self.lane[j], self.reg[rho]
        if self.prog is None:
            return
        J = 1 << j
        lj = ((_LANES >> j) & 1).astype(bool)
        if sub:
            (mv,) = real.ops
            sel0, sel1 = _subword_selectors(rho, self.eb)
            for q in range(self.n_units):
                t = self.prog.lane(self.vals[q], _LANES ^ J, mv)
                self.vals[q] = self.prog.perm_select(t, self.vals[q], sel0, sel1, lj)
            return
        bit = 1 << (rho - self.kappa)
        for q in range(self.n_units):
            if q & bit:
                continue
            a, b = self.vals[q], self.vals[q | bit]
            if real.how == "permlane":
                na, nb = self.prog.swap(real.kind, a, b)
            elif real.how == "fused":
                da, db = real.ops
                na = self.prog.fused(a, b, ~lj, np.where(lj, _LANES ^ J, -1), da)
                nb = self.prog.fused(b, a, lj, np.where(~lj, _LANES ^ J, -1), db)
            else:
                (mv,) = real.ops
                t = self.prog.select(lj, b, a)
                s = self.prog.lane(t, _LANES ^ J, mv)
                na, nb = self.prog.select(lj, a, s), self.prog.select(lj, s, b)
            self.vals[q], self.vals[q | bit] = na, nb

    def lane_stage(self, src_pos: list[int]) -> None:
        """New lane bit position j takes the label at old position ``src_pos[j]``."""
        if src_pos == list(range(LANE_BITS)):
            return
        sigma = np.zeros(WAVE, dtype=np.int64)
        for j, s in enumerate(src_pos):
            sigma |= ((_LANES >> j) & 1) << s
        op = find_lane_op(sigma, self.target, self.cm.lane_family_cost())
        self.cost += self.cm.lane_family_cost()[op.family] * self.n_units
        self.lane = [self.lane[s] for s in src_pos]
        if self.prog is not None:
            self.vals = [self.prog.lane(v, sigma, op) for v in self.vals]

    def reg_pos(self, label) -> int | None:
        return self.reg.index(label) if label in self.reg else None

    def spare(self) -> int:
        """A unit position whose label nobody needs (else the first unit position)."""
        if self.kappa == len(self.reg):
            raise ValueError("no unit bit to break a cycle of lane bits")
        needed = set(self.dst_labels) | set(self.T)
        for i in range(self.kappa, len(self.reg)):
            if self.reg[i] not in needed:
                return i
        return self.kappa

    def dst_parts(self, n_dst_slots: int, p: int) -> list[list[tuple[int, int] | None]]:
        """Per dst register, per slot: (value, slot) of the final units."""
        pos = []
        for lab in self.dst_labels:
            if lab is None:
                pos.append(None)
                continue
            r = self.reg_pos(lab)
            if r is None:
                raise ValueError("label not in registers")
            pos.append(r)

        def locate(r: int) -> tuple[int, int]:
            u = k = 0
            for b, ps in enumerate(pos):
                if ps is not None and (r >> b) & 1:
                    if ps < self.kappa:
                        k |= 1 << ps
                    else:
                        u |= 1 << (ps - self.kappa)
            return self.vals[u], k

        return dst_register_parts(n_dst_slots, p, locate)

    # -------------------------------------------------------------- schedules
    def run_exchanges_only(self) -> None:
        D = [j for j in range(LANE_BITS) if self.lane[j] != self.T[j]]
        init = list(self.lane)
        nxt = {}
        for j in D:
            if self.T[j] in init:
                nxt[init.index(self.T[j])] = j
        done: set[int] = set()
        for j in D:
            if j in done or self.reg_pos(self.T[j]) is None:
                continue
            cur, rho = j, self.reg_pos(self.T[j])
            while cur is not None and cur not in done:
                self.exchange(rho, cur)
                done.add(cur)
                cur = nxt.get(cur)
        for j in D:
            if j in done:
                continue
            rho = self.spare()
            self.exchange(rho, j)
            done.add(j)
            cur = nxt.get(j)
            while cur is not None and cur != j:
                self.exchange(rho, cur)
                done.add(cur)
                cur = nxt.get(cur)
            self.exchange(rho, j)

    def run_lane_first(self) -> None:
        src_pos: list[int | None] = [None] * LANE_BITS
        for j, t in enumerate(self.T):
            if t in self.lane:
                src_pos[j] = self.lane.index(t)
        free = [j for j in range(LANE_BITS) if j not in src_pos]
        for j in range(LANE_BITS):
            if src_pos[j] is None and j in free:
                src_pos[j] = j
                free.remove(j)
        for j in range(LANE_BITS):
            if src_pos[j] is None:
                src_pos[j] = free.pop(0)
        self.lane_stage(src_pos)  # type: ignore[arg-type]
        self.run_exchanges_only()

    def run_lane_last(self) -> None:
        out_pos = [j for j in range(LANE_BITS) if self.lane[j] not in self.T]
        incoming = [t for t in self.T if t not in self.lane]
        entry = {}
        for t in incoming:
            j = self.T.index(t)
            if j in out_pos and j not in entry.values():
                entry[t] = j
        free = [j for j in out_pos if j not in entry.values()]
        for t in incoming:
            if t not in entry:
                entry[t] = free.pop(0)
        for t in incoming:
            self.exchange(self.reg_pos(t), entry[t])
        self.lane_stage([self.lane.index(t) for t in self.T])


SCHEDULES = ("exchanges", "lane_first", "lane_last")


def exchange_applicable(reg_cols: list[int], lane_cols: list[int], n_sr: int) -> bool:
    """The element map is a partial bit permutation whose register-bound lane bits leave the lanes."""
    labels = [c for c in reg_cols + lane_cols if c]
    if any(c & (c - 1) for c in labels) or len(set(labels)) != len(labels):
        return False
    lane_targets = {c for c in lane_cols if c}
    return not any(c >= (1 << n_sr) and c in lane_targets for c in reg_cols)


def _repack_count(parts_list: list[list[tuple[int, int] | None]]) -> int:
    """v_perm_b32 instructions to build registers from (value, slot) parts (0 when already in place)."""
    n = 0
    for parts in parts_list:
        used = [x for x in parts if x is not None]
        vals = {v for v, _ in used}
        if len(vals) == 1 and all(x is None or x[1] == i for i, x in enumerate(parts)):
            continue
        n += 1 if len(vals) <= 2 else 3
    return n


def exchange_estimate(reg_cols: list[int], lane_cols: list[int], n_sr: int, K: list[int], target: Target,
                      cm: CostModel, elem_bits: int, schedule: str, n_dst_slots: int) -> float:
    """Dry-run cost of a schedule (labels only), with the packing and unpacking ``v_perm``s."""
    ex = _Exchanger(None, reg_cols, lane_cols, n_sr, K, None, target, cm, elem_bits)
    getattr(ex, {"exchanges": "run_exchanges_only", "lane_first": "run_lane_first",
                 "lane_last": "run_lane_last"}[schedule])()
    p = max(1, 32 // elem_bits)
    perms = _pack_perms(K, n_sr, p) if p > 1 else 0
    perms += _repack_count(ex.dst_parts(n_dst_slots, p)) if p > 1 else 0
    return ex.cost + perms * cm.instruction("v_perm_b32")


def exchange_plan(prog: Program, reg_cols: list[int], lane_cols: list[int], n_sr: int, K: list[int],
                  units: list[int], n_dst_slots: int, target: Target, cm: CostModel, elem_bits: int,
                  schedule: str) -> list[int]:
    """Dst register values of the exchange plan (the map must pass ``exchange_applicable``)."""
    ex = _Exchanger(prog, reg_cols, lane_cols, n_sr, K, units, target, cm, elem_bits)
    getattr(ex, {"exchanges": "run_exchanges_only", "lane_first": "run_lane_first",
                 "lane_last": "run_lane_last"}[schedule])()
    p = max(1, 32 // elem_bits)
    eb = max(1, elem_bits // 8)
    return [gather_dword(prog, parts, eb) if p > 1 else parts[0][0] for parts in ex.dst_parts(n_dst_slots, p)]
