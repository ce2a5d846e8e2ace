"""Register/lane bit exchanges inside a wave: a schedule chosen on labels, then built on values.

Setting (linlayout.synth.in_wave).  The 32-bit *units* of a lane are indexed by unit bits; a unit holds
``2**kappa`` elements (its *element slots*; kappa = 0 for 32/64-bit elements).  The element map
is a partial bit permutation, so the conversion permutes *labels* (the src bit whose coordinate a
position carries): register positions (element slots first, then unit bits) and the lane bit
positions.  Lane position ``j`` must end with label ``T[j]``; the register positions with the dst
register labels.  ``R`` is the number of units.

Moves, priced per linlayout.synth.cost (``count``: instructions, ``cost``: modelled cycles):

* ``exchange(rho, j)`` swaps the labels of register position ``rho`` and lane position ``j``.
  For a unit bit, per unit pair ``(a, b)`` differing in ``rho``::

      a' = l_j ? b[l ^ 2^j] : a          b' = l_j ? b : a[l ^ 2^j]

  realized by the cheapest of: one ``v_permlane{16,32}_swap`` per pair (gfx950, ``j = 4, 5``;
  ``R/2`` instructions); DPP, where a control reads ``l ^ 2^j`` on the lanes that take it
  (``j <= 3``): per result a DPP move and a ``v_cndmask``, except that one result of each pair is
  written in place by a row/bank-masked ``v_mov_b32_dpp`` when ``j >= 2`` (``1.5 R``, ``2 R`` for
  ``j = 0, 1``); or *ship*: ``t = l_j ? a : b``, one ds_swizzle/ds_bpermute of ``t``, two selects
  (``2 R``).  For an element slot (*subword exchange*), per unit one lane move ``u[l ^ 2^j]`` and
  one ``v_perm_b32`` with a per-lane selector (``2 R``).
* a *lane stage* moves every unit through one lane map (DPP, ds_swizzle or ds_bpermute): any
  permutation of the lane positions, ``R`` instructions.
* register renaming is free.
* a *dup exchange* (``SchedulePlanner(..., dups=True)``): a unit bit exchanged into a lane position
  whose label is a src lane bit with a zero column (``dups``: lanes ``l`` and ``l ^ 2^j`` hold the
  same) is one select ``l_j ? b : a`` per unit pair, which both units then hold: ``R/2``
  instructions, and every later move prices the units that remain distinct (``units``).  Its
  schedules also start with the dup exchanges of the unit bits a dup lane position wants
  (``dup_prefix``; named ``+dup``).

Schedules, each a list of moves computed on labels alone and priced without building anything:

* ``exchanges``: every incoming label is exchanged straight into its target position; the label
  it evicts is followed to its own target (chains); a cycle of lane labels goes through a spare
  register position, entered and left at the cycle's cheapest position (one extra exchange).
* ``lane_first``: one stage puts every staying lane label at its target, then ``exchanges``.
* ``rounds(A)``: the outgoing labels in ``A`` are exchanged where they sit; a stage moves the
  others to the cheapest exchange positions, where they are exchanged; a final stage puts every
  label at its target (skipped when already there).  ``A`` = all is "exchange in place, then one
  stage"; ``A`` = none is "stage, exchange at the cheapest positions, stage"; in between, the
  thresholds of the in-place costs.

The cheapest schedule (modelled cycles; within ``CostModel.tie_fraction``, fewer instructions)
is then replayed on the SSA program (``build_schedule``).  A DS lane move adds one level of DS
latency to the estimate, as ``cost.plan_cost`` charges per dependent level.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from linlayout import caches
from linlayout.hw.targets import Target

from . import ir
from .context import ConversionContext
from .cost import CostModel, near_best
from .in_wave import dst_register_parts, gather_dwords
from .ir import Program
from .lane_ops import LaneOp, find_dpp, find_lane_op, lane_indices, row_bank_masks
from .span import span_table

__all__ = ["Schedule", "SchedulePlanner", "best_schedule", "build_schedule", "exchange_applicable",
           "label_of"]

# ("r", src register bit) | ("l", src lane bit) | ("v", k): a virtual (duplicating) register bit
Label = tuple


def label_of(c: int, n_src_reg: int) -> Label | None:
    """The label of a src hardware vector with one bit set (None for 0)."""
    if c == 0:
        return None
    if c & (c - 1):
        raise ValueError("not a bit permutation")
    b = c.bit_length() - 1
    return ("r", b) if b < n_src_reg else ("l", b - n_src_reg)


def exchange_applicable(reg_cols: list[int], lane_cols: list[int], n_sr: int) -> bool:
    """The element map is a partial bit permutation whose register-bound lane bits leave the lanes."""
    labels = [c for c in reg_cols + lane_cols if c]
    if any(c & (c - 1) for c in labels) or len(set(labels)) != len(labels):
        return False
    lane_targets = {c for c in lane_cols if c}
    return not any(c >= (1 << n_sr) and c in lane_targets for c in reg_cols)


# ---------------------------------------------------------------------- realizations
@dataclass(frozen=True)
class Realization:
    """How one exchange (per unit pair) or subword exchange (per unit) is done, and its price."""

    how: str  # permlane | dpp | ship | subword
    cost: float
    count: int
    ds: bool  # a crossbar (DS) lane move: one more level of DS latency
    kind: str = ""
    ops: tuple = ()


def _dword_options(j: int, target: Target, cm: CostModel) -> list[Realization]:
    J = 1 << j
    lanes = lane_indices(target.wave_size)
    lj = ((lanes >> j) & 1).astype(bool)
    fam = cm.lane_family_cost()
    sel = cm.instruction("v_cndmask")
    opts = []
    if target.has_permlane_swap and j in (4, 5):
        kind = f"permlane{16 if j == 4 else 32}_swap"
        opts.append(Realization("permlane", cm.instruction(kind), 1, False, kind))
    da = find_dpp(np.where(lj, lanes ^ J, -1), target)
    db = find_dpp(np.where(~lj, lanes ^ J, -1), target)
    if da is not None and db is not None:
        # one result in place under row/bank masks when lane bit j is 2..5, the other (both for
        # j = 0, 1) a DPP move plus a select unless the compiler fuses them
        n_sel = 0 if ir.FUSE_DPP_SELECT else 2 - (row_bank_masks(lj) is not None)
        opts.append(Realization("dpp", 2 * cm.instruction("dpp") + n_sel * sel, 2 + n_sel, False, ops=(da, db)))
    full = find_lane_op(lanes ^ J, target, fam)
    opts.append(Realization("ship", 3 * sel + fam[full.family], 4, full.crossbar, ops=(full,)))
    return opts


@caches.memoize("synth.exchanges.realizations", table=True)
def _realizations(target: Target, cm_key: tuple, fuse: bool) -> tuple[tuple[Realization, ...], tuple[Realization, ...]]:
    """Per lane position: the cheapest unit-bit exchange (per pair) and subword exchange (per unit)."""
    del fuse  # part of the cache key: ir.FUSE_DPP_SELECT changes the DPP realization
    cm = CostModel.from_key(cm_key)
    fam = cm.lane_family_cost()
    dword, sub = [], []
    for j in range(target.wave_size.bit_length() - 1):
        dword.append(min(_dword_options(j, target, cm), key=lambda o: (o.cost, o.count)))
        mv = find_lane_op(lane_indices(target.wave_size) ^ (1 << j), target, fam)
        sub.append(Realization("subword", fam[mv.family] + cm.instruction("v_perm_b32"), 2, mv.crossbar,
                               ops=(mv,)))
    return tuple(dword), tuple(sub)


# 4096: a permutation of a wave's lane bits (720 of 64 lanes) per target and cost model
@caches.memoize("synth.exchanges.stage_op", size=4096, table=True)
def _stage_op(target: Target, cm_key: tuple, src_pos: tuple) -> LaneOp:
    """The instruction moving every lane to the lane whose bit ``j`` is its bit ``src_pos[j]``: a
    permutation of the lane bits, so a table of the target's lane instructions (like
    ``_realizations``), whatever layouts are planned."""
    return find_lane_op(_stage_sigma(src_pos), target, CostModel.from_key(cm_key).lane_family_cost())


def _stage_sigma(src_pos: tuple) -> np.ndarray:
    """Per lane, the lane whose bit ``src_pos[j]`` is its bit ``j``."""
    return span_table([1 << s for s in src_pos])


# ---------------------------------------------------------------------- schedules on labels
class DupLabelRefused(Exception):
    """A schedule would exchange a dup label back out of the registers (``SchedulePlanner._exchange``
    refuses it): its generator has no schedule from that start."""


@dataclass
class Schedule:
    """Moves ``("x", rho, j)`` (exchange) and ``("stage", src_pos)`` with their price; the final labels."""

    name: str
    moves: list = field(default_factory=list)
    cost: float = 0.0
    count: int = 0
    reg: list = field(default_factory=list)
    lane: list = field(default_factory=list)
    collapsed: int = 0  # unit bits along which the units are equal (dup exchanges)


class SchedulePlanner:
    """Label bookkeeping and the schedule generators (no values, no numpy in the loops)."""

    def __init__(self, ctx: ConversionContext, reg_cols: list[int], lane_cols: list[int], n_sr: int,
                 K: list[int], dups: bool = False) -> None:
        self.ctx = ctx
        self.target, self.cm = ctx.target, ctx.cost_model
        self.lane_bits = self.target.wave_size.bit_length() - 1
        self.cm_key = self.cm.key()
        self.kappa = len(K)
        self.T = [label_of(c, n_sr) for c in lane_cols]
        self.dst_labels = [label_of(c, n_sr) for c in reg_cols]
        nv = 0
        for j in range(self.lane_bits):
            if self.T[j] is None:
                self.T[j] = ("v", nv)
                nv += 1
        self.T_set = set(self.T)
        # src lane bits with a zero column: every unit holds the same at lanes l and l ^ 2**j
        # (``dups=False``: none taken as such, every exchange moves lanes)
        self.dups = frozenset(("l", j) for j, c in enumerate(ctx.problem.src_cols["lane"])
                              if c == 0 and dups) - self.T_set
        self.prefix: list[tuple[int, int]] = []  # exchanges every schedule starts with (``_new``)
        rest = [i for i in range(n_sr) if i not in K]
        self.reg0 = [("r", i) for i in K] + [("r", i) for i in rest] + [("v", k) for k in range(nv)]
        self.n_units = 1 << (len(self.reg0) - self.kappa)
        self.p = ctx.slots_per_dword
        e = self.p.bit_length() - 1
        # dst element bit k wants its label in element slot k (else a v_perm repacks at the end)
        self.elem_want = [self.dst_labels[k] if k < len(self.dst_labels) and k < e else None
                          for k in range(self.kappa)]
        self.dword, self.sub = _realizations(self.target, self.cm_key, ir.FUSE_DPP_SELECT)
        self.latency = self.cm.latency(1)
        self.family_cost = self.cm.lane_family_cost()

    # -------------------------------------------------------------- pricing helpers
    def units(self, s: Schedule) -> int:
        """The distinct units under schedule ``s`` (those a collapsing dup exchange made equal count once)."""
        return self.n_units >> s.collapsed

    def x_price(self, rho: int, j: int, s: Schedule) -> tuple[float, int]:
        """(cycles, instructions) of exchanging register position ``rho`` with lane position ``j`` in
        schedule ``s``: a *dup exchange* where lane ``j`` holds a label of ``dups`` (``_exchange``)."""
        n_units = self.units(s)
        if rho >= self.kappa and s.lane[j] in self.dups:
            return self.cm.instruction("v_cndmask") * (n_units // 2), n_units // 2
        if rho < self.kappa:
            r, n = self.sub[j], n_units
        else:
            r, n = self.dword[j], n_units // 2
        return r.cost * n + (self.latency if r.ds else 0.0), r.count * n

    def _new(self, name: str) -> Schedule:
        """A schedule at the src labels, after the exchanges of ``prefix``."""
        s = Schedule(name, reg=list(self.reg0), lane=[("l", j) for j in range(self.lane_bits)])
        for rho, j in self.prefix:
            self._exchange(s, rho, j)
        return s

    def _exchange(self, s: Schedule, rho: int, j: int) -> None:
        """Exchange the labels of register position ``rho`` and lane position ``j``.

        Where ``rho`` is a unit bit and lane ``j`` holds a label of ``dups`` (data equal at lanes
        ``l`` and ``l ^ 2**j``) it is a *dup exchange* (``("dx", rho, j)``): per unit pair ``(a, b)``
        one select ``l_j ? b : a``, which both units then hold (one fewer distinct unit bit:
        ``collapsed``).  A register position holding a dup label is not exchanged again
        (``_spare`` skips it; the other generators exchange labels that the dst holds)."""
        if s.reg[rho] in self.dups:
            raise DupLabelRefused("a dup label is not exchanged back out of the registers")
        c, n = self.x_price(rho, j, s)
        s.cost += c
        s.count += n
        dup = rho >= self.kappa and s.lane[j] in self.dups
        s.collapsed += dup
        s.reg[rho], s.lane[j] = s.lane[j], s.reg[rho]
        s.moves.append(("dx" if dup else "x", rho, j))

    def _stage(self, s: Schedule, src_pos: list[int]) -> None:
        """New lane position ``j`` takes the label at old position ``src_pos[j]``."""
        if src_pos == list(range(self.lane_bits)):
            return
        c, n = self._stage_price(tuple(src_pos), s)
        s.cost += c
        s.count += n
        s.lane = [s.lane[i] for i in src_pos]
        s.moves.append(("stage", tuple(src_pos)))

    def _final_stage(self, s: Schedule) -> None:
        self._stage(s, [s.lane.index(t) for t in self.T])

    def _spare(self, s: Schedule) -> int:
        """A unit position whose label nobody needs (else the first unit position)."""
        if self.kappa == len(s.reg):
            raise ValueError("no unit bit to break a cycle of lane bits")
        needed = set(self.dst_labels) | self.T_set
        for i in range(self.kappa, len(s.reg)):
            if s.reg[i] not in needed and s.reg[i] not in self.dups:
                return i
        return self.kappa

    # -------------------------------------------------------------- generators
    def exchanges(self, s: Schedule | None = None) -> Schedule:
        """Incoming labels straight to their targets (chains), lane cycles through a spare register."""
        s = s or self._new("exchanges")
        D = [j for j in range(self.lane_bits) if s.lane[j] != self.T[j]]
        init = list(s.lane)
        nxt = {init.index(self.T[j]): j for j in D if self.T[j] in init}
        done: set[int] = set()
        for j in D:  # chains that start with a label from the registers
            if j in done or self.T[j] not in s.reg:
                continue
            cur, rho = j, s.reg.index(self.T[j])
            while cur is not None and cur not in done:
                self._exchange(s, rho, cur)
                done.add(cur)
                cur = nxt.get(cur)
        for j in D:  # cycles of lane labels: through a spare register, entered at the cheapest position
            if j in done:
                continue
            cyc = [j]
            while nxt[cyc[-1]] != j:
                cyc.append(nxt[cyc[-1]])
            rho = self._spare(s)
            start = min(range(len(cyc)), key=lambda i: self.x_price(rho, cyc[i], s)[0])
            cyc = cyc[start:] + cyc[:start]
            for pos in cyc:
                self._exchange(s, rho, pos)
                done.add(pos)
            self._exchange(s, rho, cyc[0])
        return s

    def lane_first(self) -> Schedule:
        """One lane stage puts every staying label at its target, then ``exchanges``."""
        s = self._new("lane_first")
        src_pos: list[int | None] = [s.lane.index(t) if t in s.lane else None for t in self.T]
        free = [j for j in range(self.lane_bits) if j not in src_pos]
        for j in range(self.lane_bits):
            if src_pos[j] is None and j in free:
                src_pos[j] = j
                free.remove(j)
        for j in range(self.lane_bits):
            if src_pos[j] is None:
                src_pos[j] = free.pop(0)
        self._stage(s, src_pos)  # type: ignore[arg-type]
        return self.exchanges(s)

    def _partner_pick(self, x: Label, dword_in: list, elem_in: dict, prefer: Label | None) -> tuple[Label, bool]:
        """The incoming label to exchange with outgoing ``x``: (label, is an element slot)."""
        for e, want in elem_in.items():
            if want == x:
                return e, True
        if prefer in dword_in:
            return prefer, False
        if dword_in:
            return dword_in[0], False
        free = [e for e, want in elem_in.items() if want is None]
        return (free or list(elem_in))[0], True

    def in_place_cost(self, x: Label, s: Schedule, elem_in: dict) -> float:
        """Cycles of exchanging outgoing label ``x`` where it sits (subword if an element slot wants it)."""
        j = s.lane.index(x)
        n_units = self.units(s)
        if x in elem_in.values():
            return self.sub[j].cost * n_units
        return (self.cm.instruction("v_cndmask") if x in self.dups else self.dword[j].cost) * (n_units // 2)

    def rounds(self, in_place: set, name: str) -> Schedule:
        """Exchange the outgoing labels ``in_place`` where they sit; a stage moves the others to the
        cheapest positions, where they are exchanged; a final stage to the targets."""
        s = self._new(name)
        outgoing = [lab for lab in s.lane if lab not in self.T_set]
        incoming = [t for t in self.T if t not in s.lane]
        elem = {s.reg[k]: self.elem_want[k] for k in range(self.kappa) if s.reg[k] in self.T_set}
        elem_in = {e: (w if w in outgoing else None) for e, w in elem.items()}
        dword_in = [t for t in incoming if t not in elem_in]

        def take(x: Label, prefer: Label | None) -> tuple[Label, bool]:
            lab, sub = self._partner_pick(x, dword_in, elem_in, prefer)
            (elem_in.pop if sub else dword_in.remove)(lab)
            return lab, sub

        for x in [x for x in outgoing if x in in_place]:
            j = s.lane.index(x)
            lab, _ = take(x, self.T[j])
            self._exchange(s, s.reg.index(lab), j)
        rest = [x for x in outgoing if x not in in_place]
        if rest:
            pairs = [(x, *take(x, None)) for x in rest]
            pos = self._positions(pairs)
            placed = {pos[i]: x for i, (x, _, _) in enumerate(pairs)}
            new_lane: list[Label | None] = [placed.get(j) for j in range(self.lane_bits)]
            others = [lab for lab in s.lane if lab not in placed.values()]
            for lab in list(others):
                j = s.lane.index(lab)
                if new_lane[j] is None:
                    new_lane[j] = lab
                    others.remove(lab)
            for j in range(self.lane_bits):
                if new_lane[j] is None:
                    new_lane[j] = others.pop(0)
            self._stage(s, [s.lane.index(lab) for lab in new_lane])
            for i, (_, lab, _) in enumerate(pairs):
                self._exchange(s, s.reg.index(lab), pos[i])
        self._final_stage(s)
        return s

    def _positions(self, pairs: list[tuple[Label, Label, bool]]) -> list[int]:
        """Lane positions for the exchanges of ``pairs`` (outgoing, incoming, subword): unit-bit
        exchanges take the cheapest positions (an incoming label's own target first on ties), then
        subword exchanges the cheapest left; both orders tried."""
        best = None
        for sub_first in (False, True):
            free = list(range(self.lane_bits))
            pos = [0] * len(pairs)
            total = 0.0
            order = sorted(range(len(pairs)), key=lambda i: pairs[i][2] != sub_first)
            for i in order:
                _, lab, sub = pairs[i]
                table = self.sub if sub else self.dword
                mult = self.n_units if sub else self.n_units // 2
                tgt = self.T.index(lab) if lab in self.T else -1
                j = min(free, key=lambda q: (table[q].cost, q != tgt, q))
                free.remove(j)
                pos[i] = j
                total += table[j].cost * mult
            if best is None or total < best[0]:
                best = (total, pos)
        return best[1]

    def candidates(self) -> list[Schedule]:
        """Every schedule of the family (module docstring), priced; rounds for the in-place thresholds;
        each from the src labels and, where the src has dup lanes that want register labels, after
        the dup exchanges that put them there (``dup_prefix``)."""
        out = self._generated("")
        prefix = self.dup_prefix()
        if prefix:
            self.prefix = prefix
            out += self._generated("+dup")
            self.prefix = []
        return out

    def dup_prefix(self) -> list[tuple[int, int]]:
        """The dup exchanges (``_exchange``) of every unit-bit label that a lane position holding a dup
        label wants (``T``): each halves the units that every later move works on."""
        units = self.reg0[self.kappa:]
        return [(self.kappa + units.index(self.T[j]), j) for j in range(self.lane_bits)
                if ("l", j) in self.dups and self.T[j] in units]

    def _generated(self, suffix: str) -> list[Schedule]:
        """The schedules of every generator from ``_new``'s start, their names ending in ``suffix``."""
        out = []
        for gen in (self.exchanges, self.lane_first):
            try:
                out.append(gen())
            except (ValueError, DupLabelRefused):  # ValueError: no unit bit to break a lane cycle (_spare)
                pass
        out += [f for f in map(self.fused_stages, list(out)) if f is not None]
        s0 = self._new("")
        outgoing = [lab for lab in s0.lane if lab not in self.T_set]
        elem = {s0.reg[k]: self.elem_want[k] for k in range(self.kappa) if s0.reg[k] in self.T_set}
        if len(outgoing) and (self.n_units > 1 or len(elem) == len(outgoing)):
            costs = {x: self.in_place_cost(x, s0, elem) for x in outgoing}
            levels = sorted(set(costs.values()))
            seen = set()
            for tau in [-1.0] + levels:
                A = frozenset(x for x in outgoing if costs[x] <= tau)
                if A not in seen:
                    seen.add(A)
                    try:
                        out.append(self.rounds(set(A), f"rounds:{len(A)}/{len(outgoing)}"))
                    except DupLabelRefused:
                        pass
        for sched in out:
            sched.name += suffix
        return out

    def fused_stages(self, s: Schedule) -> Schedule | None:
        """``s`` with every shipped unit-bit exchange next to a lane stage done with the stage in one
        (``("xs", rho, j, src_pos, exchange_first)``), on targets where one instruction moves lanes
        by any map (NVIDIA's ``shfl.sync.idx``); None when there is none to fuse.

        With ``J = 2**j``, stage ``sigma`` (lane ``l`` reads lane ``sigma(l)``) and the pair
        ``(a, b)``: exchange then stage leaves ``x(l) = a(m0)`` or ``b(m1)``, ``y(l) = b(m0)`` or
        ``a(m1)`` with ``m0 = sigma(l)``, ``m1 = m0 ^ J``, the second choices where ``c(l) =
        l_j(m0)``; stage then exchange leaves the same with ``m1 = sigma(l ^ J)`` and ``c(l) = l_j``.
        A source lane ``m`` knows whether it serves a lane with ``c`` set through ``m0`` (``g(m)``:
        ``m_j``, resp. bit ``j`` of ``sigma^-1(m)``), and then through ``m1`` it serves one with
        ``c`` clear.  So ``u0 = g ? b : a``, ``u1 = g ? a : b`` (2 selects), ``z0 = u0[m0]``,
        ``z1 = u1[m1]`` (2 shuffles), ``x = c ? z1 : z0``, ``y = c ? z0 : z1`` (2 selects): per pair 4
        selects and 2 shuffles in one shuffle level, where the ship and the stage take 3 selects and
        3 shuffles in two (the linear-layout paper's register/lane swap, docs/nvidia_facts.md
        section 6)."""
        if "shfl.sync.idx" not in self.target.lane_ops:
            return None
        moves, fused, i = [], False, 0
        while i < len(s.moves):
            pair = s.moves[i:i + 2]
            kinds = [mv[0] for mv in pair]
            if kinds in (["x", "stage"], ["stage", "x"]):
                x, stage = pair if kinds[0] == "x" else pair[::-1]
                if x[1] >= self.kappa and self.dword[x[2]].how == "ship":
                    moves.append(("xs", x[1], x[2], stage[1], kinds[0] == "x"))
                    fused = True
                    i += 2
                    continue
            mv = s.moves[i]
            moves.append(mv)
            i += 1
        if not fused:
            return None
        out = Schedule(s.name + "+fused", reg=list(self.reg0), lane=[("l", j) for j in range(self.lane_bits)])
        for mv in moves:  # replayed on the labels: a price depends on the labels a move finds
            if mv[0] == "stage":
                self._stage(out, list(mv[1]))
            elif mv[0] == "xs":
                c, n = self._fused_price(out)
                out.cost += c
                out.count += n
                rho, j, src_pos, exchange_first = mv[1:]
                if not exchange_first:
                    out.lane = [out.lane[q] for q in src_pos]
                out.reg[rho], out.lane[j] = out.lane[j], out.reg[rho]
                if exchange_first:
                    out.lane = [out.lane[q] for q in src_pos]
                out.moves.append(mv)
            else:
                self._exchange(out, mv[1], mv[2])
        return out

    def _stage_price(self, src_pos: tuple, s: Schedule) -> tuple[float, int]:
        """(cycles, instructions) of a lane stage (``_stage``) in schedule ``s``."""
        op = _stage_op(self.target, self.cm_key, tuple(src_pos))
        n_units = self.units(s)
        return self.family_cost[op.family] * n_units + (self.latency if op.crossbar else 0.0), n_units

    def _fused_price(self, s: Schedule) -> tuple[float, int]:
        """(cycles, instructions) of an exchange fused with a stage (``fused_stages``) in schedule ``s``."""
        pairs = self.units(s) // 2
        sel = self.cm.instruction("selp")
        return (4 * sel + 2 * self.family_cost["shfl"]) * pairs + self.latency, 6 * pairs

    # -------------------------------------------------------------- repacking at the end
    def locations(self, s: Schedule, n_dst_slots: int) -> list[tuple[int, int]]:
        """Per dst element ``r``: (unit index, element slot) holding it after schedule ``s``."""
        bits = []  # per dst register bit: (unit bit, slot bit) of its label's final position
        for lab in self.dst_labels:
            ps = s.reg.index(lab) if lab is not None else -1
            bits.append((0, 0) if ps < 0 else ((0, 1 << ps) if ps < self.kappa else (1 << (ps - self.kappa), 0)))
        out = [(0, 0)]
        for r in range(1, n_dst_slots):
            low = (r & -r).bit_length() - 1  # r = (r with its lowest bit cleared) + that bit
            (u, k), (du, dk) = out[r & (r - 1)], bits[low]
            out.append((u | du, k | dk))
        return out

    def repack_perms(self, s: Schedule, n_dst_slots: int) -> int:
        """v_perm_b32 instructions that build the dst VGPRs from the final units (``n_dst_slots``:
        ``2 ** len(dst_labels)``).

        Dst VGPR ``d`` holds the elements whose slot bits (dst register bits below ``log2 p``)
        vary: it reads ``2^m`` units, ``m`` = the slot bits whose label ends in a unit bit (one
        ``v_perm`` for up to two units, three for more), and is a final unit as it is (no
        ``v_perm``) iff ``m = 0``, slot bit ``b`` ends in element slot ``b`` and every set bit of
        ``d`` ends in a unit bit or is broadcast."""
        if self.p == 1:
            return 0
        e = min(self.p.bit_length() - 1, len(self.dst_labels))
        pos = [None if lab is None else s.reg.index(lab) for lab in self.dst_labels]
        m = sum(1 for x in pos[:e] if x is not None and x >= self.kappa)
        n_vgprs = n_dst_slots >> e
        in_order = m == 0 and all(x == b for b, x in enumerate(pos[:e]))
        as_is = 1 << sum(1 for x in pos[e:] if x is None or x >= self.kappa) if in_order else 0
        return (n_vgprs - as_is) * (1 if m <= 1 else 3)

    def live_moves(self, s: Schedule, n_dst_slots: int, isa: ir.RegisterIsa) -> tuple[Counter, int] | None:
        """What every program ``build_schedule`` makes of ``s`` holds live, known before it is built:
        ``(kinds, depth)``, a count of its live ops per counted instruction kind (``ProgramFloor``'s)
        that is at most the program's own, and a depth at most its DS depth (``ProgramFloor``'s
        ``level``) -- so ``ProgramFloor.of_kinds(kinds, depth, ...)`` is at most the program's floor.
        None where that is not known: a virtual register label (the units start duplicated and the
        builder's common subexpressions merge ops) or a move fused with a stage (``"xs"``).
        ``isa``: the program's select and byte permute (``Program.isa``).

        Why.  Without virtual labels the builder starts from one distinct value per unit, and every
        move keeps them distinct: a stage is one lane op per unit (``_stage`` drops the identity); a
        unit-bit exchange of the pair ``(q, q | bit)`` is one swap (two outs), or two fused DPP moves
        ``fused(a, b)``, ``fused(b, a)``, or ship: ``t = select(lj, b, a)``, one lane op of ``t``
        and two selects; a subword exchange one lane op and one per-lane permute (``perm_select``
        with two different selectors: a ``permsel``) per unit.  No lane op, fused move, swap or
        permute here is an identity or folds (``lj`` is half the lanes, the partner lane map is not
        the identity), and none repeats another's key (their sources differ), so each is one op of
        the program; so is each select of 32/64-bit elements (no permute in the program: none folds
        into one), while with 8/16-bit ones selects are not counted (one may fold into a permute of
        a packing's bytes).
        The units the dst slots read at the end (``locations``) are live, since no program value
        they read is a permute that ``gather_dwords`` could look through (only selects may fold into
        one, and those keep a lane op's whole value); backwards, an output of a move is live only
        if it is, and then so are all the move's inputs (every op above reads both units of its
        pair).  Counted: per live unit of a stage, a lane op of the stage's family; per live pair of
        an exchange, a swap, a fused ``dpp`` per live result, or the ship's lane op (32/64-bit: and
        its select ``t`` and a select per live result); per live unit of a subword exchange, its
        lane op and a permute.  Levels: a lane op adds one to its source's when it goes through the
        crossbar, a fused move, a swap and a select of 32/64-bit elements take the larger of their
        inputs', a permute 0, and a select of 8/16-bit ones is taken as 0 (at most its level: the
        larger of its inputs', or 0 as a permute); units start at 0 (src values, packing permutes,
        warp-offset selects)."""
        if any(lab[0] == "v" for lab in self.reg0) or any(mv[0] in ("xs", "dx") for mv in s.moves):
            return None
        live = set(u for u, _ in self.locations(s, n_dst_slots))
        lives = []  # the units live after each move, last move first
        for mv in reversed(s.moves):
            lives.append(live)
            if mv[0] == "x" and mv[1] >= self.kappa:
                bit = 1 << (mv[1] - self.kappa)
                live = live | {q ^ bit for q in live}
        kinds: Counter = Counter()
        level = [0] * self.n_units
        depth = 0
        for mv, live in zip(s.moves, reversed(lives)):
            if mv[0] == "stage":
                op = _stage_op(self.target, self.cm_key, mv[1])
                for q in live:
                    kinds[op.family] += 1
                    level[q] += op.crossbar
                    depth = max(depth, level[q])
                continue
            rho, j = mv[1], mv[2]
            if rho < self.kappa:
                (op,) = self.sub[j].ops
                for q in live:
                    kinds[op.family] += 1
                    kinds[isa.perm] += 1
                    depth = max(depth, level[q] + op.crossbar)
                    level[q] = 0
                continue
            real, bit = self.dword[j], 1 << (rho - self.kappa)
            for q in {q & ~bit for q in live}:
                if real.how == "ship":  # t = select(lj, b, a), its lane op, a select per result
                    (op,) = real.ops
                    kinds[op.family] += 1
                    if self.p > 1:  # the selects taken as level 0 and not counted
                        depth = max(depth, int(op.crossbar))
                        level[q] = level[q | bit] = 0
                        continue
                    kinds[isa.select] += 1 + len({q, q | bit} & live)
                    level[q] = level[q | bit] = max(level[q], level[q | bit]) + op.crossbar
                    depth = max(depth, level[q])
                    continue
                if real.how == "permlane":  # one swap
                    kinds[real.kind] += 1
                else:  # a fused DPP move per live result
                    kinds["dpp"] += len({q, q | bit} & live)
                level[q] = level[q | bit] = max(level[q], level[q | bit])
                depth = max(depth, level[q])
        return kinds, depth


def best_schedule(ctx: ConversionContext, reg_cols: list[int], lane_cols: list[int], n_sr: int, K: list[int],
                  n_dst_slots: int, pack_perms: int, dups: bool = False) -> tuple[Schedule, SchedulePlanner]:
    """The cheapest schedule for the unit map (``exchange_applicable`` must hold), its price including
    ``pack_perms`` packing and the final repacking ``v_perm``s (``dups``: SchedulePlanner's)."""
    pl = SchedulePlanner(ctx, reg_cols, lane_cols, n_sr, K, dups)
    cands = pl.candidates()
    if not cands:
        raise ValueError("no exchange schedule")
    vperm = ctx.cost_model.instruction("v_perm_b32")
    for s in cands:
        n = pack_perms + pl.repack_perms(s, n_dst_slots)
        s.cost += n * vperm
        s.count += n
    return near_best(cands, lambda c: c.cost, lambda c: c.count, ctx.cost_model.tie_fraction), pl


# ---------------------------------------------------------------------- building on values
def _fused_exchange(prog: Program, pl: SchedulePlanner, vals: list[int], bit: int, j: int,
                    sigma: np.ndarray, exchange_first: bool) -> list[int]:
    """The exchange of unit bit ``bit`` with lane bit ``j`` fused with the stage ``sigma``, before
    or after it (``SchedulePlanner.fused_stages``), on the unit values ``vals``."""
    lanes = lane_indices(pl.target.wave_size)
    lj = ((lanes >> j) & 1).astype(bool)
    m0 = sigma
    if exchange_first:
        m1, c, g = sigma ^ (1 << j), lj[sigma], lj
    else:
        inverse = np.empty_like(sigma)
        inverse[sigma] = lanes
        m1, c, g = sigma[lanes ^ (1 << j)], lj, lj[inverse]
    op0, op1 = (find_lane_op(m, pl.target, pl.family_cost) for m in (m0, m1))
    vals = list(vals)
    for q in range(pl.n_units):
        if q & bit:
            continue
        a, b = vals[q], vals[q | bit]
        u0, u1 = prog.select(g, a, b), prog.select(g, b, a)  # g ? b : a, g ? a : b
        z0, z1 = prog.lane(u0, m0, op0), prog.lane(u1, m1, op1)
        vals[q], vals[q | bit] = prog.select(c, z0, z1), prog.select(c, z1, z0)
    return vals


def _subword_selectors(k: int, element_bytes: int) -> tuple[int, int]:
    """v_perm selectors (S0 = partner's register, S1 = own) for lanes with l_j = 0 and l_j = 1."""
    p = 4 // element_bytes
    sels = []
    for y in (0, 1):
        sel = 0
        for slot in range(p):
            x = (slot >> k) & 1
            src_slot, base = (slot, 0) if x == y else (slot ^ (1 << k), 4)
            for b in range(element_bytes):
                sel |= (base + src_slot * element_bytes + b) << (8 * (slot * element_bytes + b))
        sels.append(sel)
    return sels[0], sels[1]


def build_schedule(prog: Program, sched: Schedule, pl: SchedulePlanner, units: list[int],
                   n_dst_slots: int) -> list[int]:
    """Replay ``sched`` on the unit values ``units`` (index = src unit); returns the dst VGPR values."""
    n_rest = len(pl.reg0) - pl.kappa - sum(1 for lab in pl.reg0 if lab[0] == "v")
    mask = (1 << n_rest) - 1
    vals = [units[q & mask] for q in range(pl.n_units)]
    element_bytes = pl.ctx.element_bytes
    for mv in sched.moves:
        if mv[0] == "stage":
            sigma = _stage_sigma(mv[1])
            op = _stage_op(pl.target, pl.cm_key, mv[1])
            vals = [prog.lane(v, sigma, op) for v in vals]
            continue
        rho, j = mv[1], mv[2]
        lanes = lane_indices(pl.target.wave_size)
        lj = ((lanes >> j) & 1).astype(bool)
        if mv[0] == "xs":  # SchedulePlanner.fused_stages
            vals = _fused_exchange(prog, pl, vals, 1 << (rho - pl.kappa), j, _stage_sigma(mv[3]), mv[4])
            continue
        # one array per lane map and condition of the move (the program knows an array it was given)
        partner, stay = lanes ^ (1 << j), ~lj
        if mv[0] == "dx":  # SchedulePlanner._exchange: lanes l and l ^ 2**j hold the same
            bit = 1 << (rho - pl.kappa)
            for q in range(pl.n_units):
                if not q & bit:
                    vals[q] = vals[q | bit] = prog.select(lj, vals[q], vals[q | bit])
            continue
        if rho < pl.kappa:
            (op,) = pl.sub[j].ops
            sel0, sel1 = _subword_selectors(rho, element_bytes)
            moved = [prog.lane(v, partner, op) for v in vals]  # all moves first: no DPP waits on a v_perm
            vals = [prog.perm_select(t, v, sel0, sel1, lj) for t, v in zip(moved, vals)]
            continue
        real = pl.dword[j]
        bit = 1 << (rho - pl.kappa)
        need_a, need_b = np.where(lj, partner, -1), np.where(stay, partner, -1)
        for q in range(pl.n_units):
            if q & bit:
                continue
            a, b = vals[q], vals[q | bit]
            if real.how == "permlane":
                na, nb = prog.swap(real.kind, a, b)
            elif real.how == "dpp":
                da, db = real.ops
                na = prog.fused(a, b, stay, need_a, da)
                nb = prog.fused(b, a, lj, need_b, db)
            else:
                (op,) = real.ops
                t = prog.select(lj, b, a)
                sh = prog.lane(t, partner, op)
                na, nb = prog.select(lj, a, sh), prog.select(lj, sh, b)
            vals[q], vals[q | bit] = na, nb
    loc = pl.locations(sched, n_dst_slots)
    parts = dst_register_parts(n_dst_slots, pl.p, lambda r: (vals[loc[r][0]], loc[r][1]))
    return gather_dwords(prog, parts, element_bytes) if pl.p > 1 else [ps[0][0] for ps in parts]
