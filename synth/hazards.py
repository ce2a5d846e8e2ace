"""Hazard wait states of CDNA DPP and permlane reads: the order the lowering emits a plan's steps
in, and the ``s_nop`` instructions that order needs.

The hardware (docs/amd_facts.md 2.3, 2.4; [Q] CDNA3/CDNA4 ISA, "Manually inserted wait states",
table 11): a DPP instruction that reads a VGPR needs ``DPP_READ_WAIT_STATES`` wait states after the
instruction that wrote it, and a ``v_permlane16/32_swap`` (which reads both its operands) needs
``PERMLANE_READ_WAIT_STATES`` after a VALU instruction that wrote one.  The compiler covers them
with the instructions between writer and reader, and where those are too few with one
``s_nop N`` (``N + 1`` wait states) right before the reader.  Which writers count is the reading
of LLVM's hazard recognizer, the compiler of our kernels (``checkDPPHazards``,
``checkPermlaneHazards``): for a DPP read any instruction that wrote the register (a VALU op, and
also a ``ds_bpermute``/``ds_swizzle`` or LDS load, whose ``s_waitcnt`` counts one wait state); for a
permlane read a VALU write.  Every instruction in between is one wait state.

:func:`issue_slots` is the order the lowering emits a plan in: a list schedule of each run of
register steps (the runs between LDS accesses and barriers, which keep their places) over the
plan's dependences on 32-bit registers (a step after every earlier step whose registers it reads
or overwrites, or that reads registers it overwrites), which takes a hazard reader only when
enough instructions separate it from its writers, else the ready step that waits least, the
longest remaining path (instructions and wait states) first.  The lowering pins that order (one
scheduling region per slot, ``rocdl.sched.barrier``), since LLVM's scheduler, free, packs
dependent instructions together; a hazard reader of a ``v_mov`` copy shares the slot of the step
before it, so that the compiler, which makes the copy in the reader's slot, can move it up.
:func:`hazard_nops` counts the ``s_nop`` instructions and wait states of that order (the plan's
price and expected ISA counts include them: linlayout.synth.cost, linlayout.lowering.report).
CDNA plans without DPP or permlane reads keep the plan's order unpinned and need none.

RDNA (gfx11 and later) has no such wait states, but a VALU instruction that reads a result of one of
the ``VALU_DEPENDENCY_INSTRUCTIONS - 1`` VALU instructions before it stalls, and the compiler puts an
``s_delay_alu`` (an SALU instruction, counted in the region) before it (docs/amd_facts.md 6.4).  For
an RDNA plan without LDS accesses or barriers (one run of register steps) :func:`issue_slots` is a
list schedule over the same dependences that takes the ready step whose latest VALU writer lies
furthest back (up to that distance), then the longest remaining path, cut into slots of independent
steps (a new slot at each step that reads a register the current slot writes) and pinned: the
compiler, free within a slot, pairs its instructions into dual-issue lines and adds the copies it
needs, but cannot pull a reader up to its writer.  No ``s_nop`` is needed; the ``s_delay_alu`` that
remain (:func:`valu_delays`) are instructions of the region, which linlayout.synth.cost.estimate_overhead
adds as ``salu_delay_alu`` (priced at the stall each marks, ``CostModel.alu_delay_cycles``, not as an
SALU issue slot: linlayout.synth.cost.SETUP_DELAY_ALU).  Other RDNA plans keep the plan's order
unpinned and count none.
"""

from __future__ import annotations

import heapq
import operator
from dataclasses import dataclass

from linlayout import caches
from linlayout.hw.targets import get_target

from .steps import Step, dwords_per_slot, slots_per_dword

__all__ = ["DPP_READ_WAIT_STATES", "PERMLANE_READ_WAIT_STATES", "VALU_DEPENDENCY_INSTRUCTIONS", "HazardCount", "hazard_nops",
           "hazard_wait_states", "issue_slots", "valu_delays"]

#: [I] A VALU instruction that reads a VGPR written by one of the ``VALU_DEPENDENCY_INSTRUCTIONS - 1`` VALU
#: instructions before it gets an ``s_delay_alu`` on gfx11 and later (LLVM's AMDGPUInsertDelayALU, our
#: compiled RDNA kernels: ``VALU_DEP_1`` .. ``VALU_DEP_4``; docs/amd_facts.md 6.4)
VALU_DEPENDENCY_INSTRUCTIONS = 5
DPP_READ_WAIT_STATES = 2  # [Q CDNA3/CDNA4 ISA, table 11] a write of a VGPR -> a DPP op reads it
PERMLANE_READ_WAIT_STATES = 2  # [Q CDNA4 ISA, table 11] a VALU write of a VGPR -> v_permlane*_swap reads it


@dataclass(frozen=True)
class HazardCount:
    """The ``s_nop`` instructions a plan's emitted order needs and the wait states they hold."""

    nops: int = 0
    wait_states: int = 0


def hazard_wait_states(step: Step) -> int:
    """The wait states a VGPR read of ``step`` needs after its writer (0: ``step`` is no hazard reader)."""
    if step.op == "fused" or (step.op == "lane" and step.family == "dpp"):
        return DPP_READ_WAIT_STATES
    if step.op == "permlane_swap":
        return PERMLANE_READ_WAIT_STATES
    return 0


def _has_hazards(plan) -> bool:
    return get_target(plan.arch).family == "cdna" and any(hazard_wait_states(st) for st in plan.steps)


def _dwords(slots: list[int], p: int, dps: int) -> list[int]:
    """The 32-bit registers of ``slots``, in order (a 64-bit slot is two)."""
    if dps == 2:
        return [d for s in slots for d in (2 * s, 2 * s + 1)]
    return slots if p == 1 else [s // p for s in slots]


class _Table:
    """The steps of a plan as the schedule sees them, one list entry per step (a table, not an object
    per step: the walk runs once per priced plan): the registers it reads and writes, its
    instructions, the wait states a read of it needs (``wait``; 0: no hazard reader), whether any
    writer counts for them (``any_writer``: DPP) or a VALU one only (permlane), and whether its
    result is a DS one (``ds``: awaited by ``s_waitcnt``)."""

    __slots__ = ("steps", "p", "dps", "reads", "writes", "instructions", "wait", "any_writer", "ds")

    def __init__(self, steps: list[Step], p: int, dps: int) -> None:
        self.steps, self.p, self.dps = steps, p, dps
        split = dps == 2 or p > 1
        # (one slot per register: the step's own list, which the walk only reads; a register may repeat)
        self.reads = [frozenset(_dwords(st.reads(), p, dps)) for st in steps] if split else [st.reads() for st in steps]
        self.writes = [frozenset(_dwords(st.writes(), p, dps) if split else st.writes()) for st in steps]
        self.instructions = [0 if st.renaming else _instructions(st, dps) for st in steps]
        self.wait = [hazard_wait_states(st) for st in steps]
        self.any_writer = [bool(w) and st.op != "permlane_swap" for w, st in zip(self.wait, steps)]  # DPP: any writer
        self.ds = [bool(st.crossbar or (st.lds and not st.store)) for st in steps]

    def renamed(self, i: int) -> list[tuple[int, int]]:
        """``(new register, old register)`` of renaming step ``i``."""
        st, p, dps = self.steps[i], self.p, self.dps
        return list(zip(_dwords(st.writes(), p, dps), _dwords(st.reads(), p, dps)))


def _instructions(st: Step, dps: int) -> int:
    """The instructions of ``st`` as emitted (a register step twice for 64-bit elements)."""
    n = sum(st.counts().values())
    if dps == 2 and st.register_step():
        n *= 2
    if st.fused_select:  # gfx9: LLVM makes it a v_mov_b32_dpp and a v_cndmask_b32 (docs/lowering.md)
        n *= 2
    return n


class _Clock:
    """Issue positions (one per wait state) of the instructions emitted so far: each register's last
    writer (``written``: ``2 * position + 1`` if a VALU op wrote it, ``2 * position`` if a DS op),
    the DS results not yet waited for, and the ``s_nop``s inserted."""

    __slots__ = ("table", "now", "written", "pending", "nops", "states")

    def __init__(self, table: _Table) -> None:
        self.table = table
        self.now = 0
        self.written: dict[int, int] = {}  # register -> 2 * position of its last writer (+ 1: a VALU op)
        self.pending: dict[int, int] = {}  # register -> position of the DS op it awaits
        self.nops = self.states = 0

    def _waits_for_ds(self, i: int) -> bool:
        pending = self.pending
        return bool(pending) and self.table.instructions[i] > 0 and not pending.keys().isdisjoint(self.table.reads[i])

    def clear_at(self, i: int) -> int:
        """The first position at which hazard reader ``i`` needs no wait, given the writers of its
        registers so far (fixed once ``i`` is ready: a later writer waits for it)."""
        t, written = self.table, self.written
        wait, valu_only = t.wait[i], not t.any_writer[i]
        at = 0
        for d in t.reads[i]:
            w = written.get(d)
            if w is not None and (w & 1 or not valu_only) and (w >> 1) + 1 + wait > at:
                at = (w >> 1) + 1 + wait
        return at

    def stall(self, i: int, clear_at: int, waits_for_ds: bool | None = None) -> int:
        """The wait states hazard reader ``i`` needs beyond the instructions before it, were it issued
        now (``clear_at``: its :meth:`clear_at`; ``waits_for_ds``: :meth:`_waits_for_ds` if known)."""
        if waits_for_ds is None:
            waits_for_ds = self._waits_for_ds(i)
        # the s_waitcnt before a DS result is one wait state
        return max(0, clear_at - self.now - waits_for_ds)

    def issue(self, i: int, clear_at: int | None = None) -> None:
        """Emit step ``i`` now (``clear_at``: its :meth:`clear_at` if known)."""
        t, written, pending = self.table, self.written, self.pending
        if t.steps[i].renaming:  # the values keep their writers under their new names
            moved = [(d, written.get(s), pending.get(s)) for d, s in t.renamed(i)]
            for d, w, a in moved:
                written.pop(d, None)
                pending.pop(d, None)
                if w is not None:
                    written[d] = w
                if a is not None:
                    pending[d] = a
            return
        waits = self._waits_for_ds(i)
        stall = self.stall(i, self.clear_at(i) if clear_at is None else clear_at, waits) if t.wait[i] else 0
        if waits:  # s_waitcnt lgkmcnt: DS results arrive in order
            last = max(pending[d] for d in t.reads[i] if d in pending)
            self.pending = pending = {d: a for d, a in pending.items() if a > last}
            self.now += 1
        if stall > 0:
            self.nops += 1
            self.states += stall
            self.now += stall
        n = t.instructions[i]
        if n:
            now, ds = self.now, t.ds[i]
            code = 2 * (now + n - 1) + (not ds)
            for d in t.writes[i]:
                written[d] = code
                if pending:
                    pending.pop(d, None)
                if ds:
                    pending[d] = now
            self.now = now + n

    def lds_wait(self) -> None:
        """The one LDS wait the lowering emits before the first register step after LDS loads."""
        if self.pending:
            self.pending = {}
            self.now += 1


def _dependences(run: list[int], t: _Table) -> tuple[list[list[int]], list[int]]:
    """The dependences of a run of steps (positions in ``run``): each step's successors (each once) and
    its number of predecessors -- a step comes after every earlier step whose registers it reads or
    overwrites, or that reads registers it overwrites."""
    reads, writes = t.reads, t.writes
    k = len(run)
    succs: list[list[int]] = [[] for _ in range(k)]  # each successor once
    waiting = [0] * k
    writer: dict[int, int] = {}  # register -> the last step writing it
    readers: dict[int, list[int]] = {}  # register -> the steps reading it since
    for j, i in enumerate(run):
        preds = {writer[d] for d in reads[i] if d in writer}
        for d in writes[i]:
            if d in writer:
                preds.add(writer[d])
            if d in readers:
                preds.update(readers[d])
        for q in preds:
            succs[q].append(j)
        waiting[j] = len(preds)
        for d in reads[i]:
            if d in readers:
                readers[d].append(j)
            else:
                readers[d] = [j]
        for d in writes[i]:
            writer[d] = j
            readers[d] = []
    return succs, waiting


def _schedule(run: list[int], clock: _Clock) -> list[int]:
    """List-schedule one run of register steps (module docstring), issuing them on ``clock``."""
    t = clock.table
    reads, writes, wait = t.reads, t.writes, t.wait
    k = len(run)
    succs, waiting = _dependences(run, t)
    height = [0] * k  # instructions and hazard waits from a step to the end of the run
    for a in range(k - 1, -1, -1):
        written, longest = writes[run[a]], 0
        for j in succs[a]:
            m = run[j]
            h = height[j] + wait[m] if wait[m] and not written.isdisjoint(reads[m]) else height[j]
            if h > longest:
                longest = h
        height[a] = t.instructions[run[a]] + longest
    plain: list[tuple[int, int]] = []  # ready steps that need no wait now: a heap by height
    blocked: list[tuple[int, int]] = []  # ready hazard readers by Clock.clear_at: a heap
    clear: dict[int, int] = {}  # ready hazard reader -> its Clock.clear_at
    push, pop = heapq.heappush, heapq.heappop

    for j in range(k):
        if not waiting[j]:
            if wait[run[j]]:
                clear[j] = at = clock.clear_at(run[j])
                push(blocked, (at, j))
            else:
                push(plain, (-height[j], j))
    out = []
    while plain or blocked:
        while blocked and blocked[0][0] <= clock.now:  # clear: the reader needs no wait any more
            j = pop(blocked)[1]
            push(plain, (-height[j], j))
        if plain:
            best = pop(plain)[1]
        else:  # every ready step waits: the one that waits least
            at, best = min(blocked, key=lambda e: (clock.stall(run[e[1]], e[0]), -height[e[1]], e[1]))
            blocked.remove((at, best))
            heapq.heapify(blocked)
        clock.issue(run[best], clear.get(best))
        out.append(run[best])
        for j in succs[best]:
            waiting[j] -= 1
            if not waiting[j]:  # ready
                if wait[run[j]]:
                    clear[j] = at = clock.clear_at(run[j])
                    push(blocked, (at, j))
                else:
                    push(plain, (-height[j], j))
    return out


def _walk(plan, scheduled: bool = True) -> tuple[list[list[int]], _Clock]:
    """The issue slots of ``plan`` (:func:`issue_slots`; ``scheduled=False``: its own order, one step
    per slot) and the clock after issuing them."""
    table = _Table(plan.steps, slots_per_dword(plan.element_bits), dwords_per_slot(plan.element_bits))
    clock = _Clock(table)
    slots: list[list[int]] = []
    copied: set[int] = set()
    for i in _issue(clock, scheduled):
        if slots and table.wait[i] and not copied.isdisjoint(table.reads[i]):  # the compiler's copy may move up
            slots[-1].append(i)
        else:
            slots.append([i])
        st = table.steps[i]
        if st.op == "mov" and st.kind == "v_mov":
            copied |= table.writes[i]
    return slots, clock


def _issue(clock: _Clock, scheduled: bool) -> list[int]:
    """Issue the steps of ``clock``'s table: the LDS and barrier steps in place, each run of register
    steps between them in the plan's order or (``scheduled``) list-scheduled; returns the order."""
    steps = clock.table.steps
    order: list[int] = []
    run: list[int] = []
    loads = False
    for i in list(range(len(steps))) + [None]:
        if i is not None and not (steps[i].lds or steps[i].barrier):
            run.append(i)
            continue
        if run:
            if loads:  # the lowering's one LDS wait before the first register step after loads
                clock.lds_wait()
                loads = False
            if scheduled:
                order.extend(_schedule(run, clock))
            else:
                for m in run:
                    clock.issue(m)
                order.extend(run)
            run = []
        if i is not None:
            clock.issue(i)
            order.append(i)
            loads = steps[i].op == "lds_load" or (loads and not steps[i].barrier)
    return order


def _delays_dependent_valu(plan) -> bool:
    """Does ``plan``'s target delay a VALU read of a recent VALU result (``s_delay_alu``,
    ``Target.has_delay_alu``: gfx11 and later, every RDNA target), and is the plan one run of register steps
    (no LDS access or barrier)?"""
    return get_target(plan.arch).has_delay_alu and not any(st.lds or st.barrier for st in plan.steps)


class _ValuClock:
    """VALU issue positions (one per VALU instruction: ``VALU_DEP_N`` counts VALU instructions only, so a
    DS instruction takes none) of the steps of a table issued so far, and the position of the VALU
    instruction that last wrote each register (a DS result is awaited by ``s_waitcnt``, not delayed:
    none; a renaming keeps the values' writers under their new names)."""

    __slots__ = ("table", "now", "written")

    def __init__(self, table: _Table) -> None:
        self.table = table
        self.now = 0
        self.written: dict[int, int] = {}  # register -> position of the VALU instruction that wrote it

    def latest(self, i: int) -> int:
        """The position of the latest VALU writer of what step ``i`` reads (far back if none)."""
        written = self.written
        return max((written[d] for d in self.table.reads[i] if d in written), default=-VALU_DEPENDENCY_INSTRUCTIONS)

    def issue(self, i: int) -> None:
        t, written = self.table, self.written
        if t.steps[i].renaming:
            moved = [(d, written.get(s)) for d, s in t.renamed(i)]
            for d, w in moved:
                written.pop(d, None)
                if w is not None:
                    written[d] = w
            return
        if t.ds[i]:
            for d in t.writes[i]:
                written.pop(d, None)
            return
        n = t.instructions[i]
        for k, d in enumerate(sorted(t.writes[i])):  # the step writes its registers in order
            written[d] = self.now + min(k, max(n - 1, 0))
        self.now += n


def _apart_schedule(t: _Table) -> list[int]:
    """List-schedule the steps of ``t`` (one run of register steps) so that a VALU read comes
    ``VALU_DEPENDENCY_INSTRUCTIONS`` VALU instructions after the writer where it can (module docstring):
    of the ready steps, the one whose most recent VALU writer lies furthest back (capped at the
    distance), then the longest remaining path of instructions, then the plan's order."""
    run = list(range(len(t.steps)))
    succs, waiting = _dependences(run, t)
    height = [0] * len(run)
    for a in reversed(run):
        height[a] = t.instructions[a] + max((height[j] for j in succs[a]), default=0)
    clock = _ValuClock(t)
    # a ready step's latest VALU writer: fixed once it is ready (a later writer of what it reads waits for it)
    latest = {j: clock.latest(j) for j in run if not waiting[j]}
    order = []
    while latest:
        now = clock.now
        best = max(latest, key=lambda j: (min(now - latest[j], VALU_DEPENDENCY_INSTRUCTIONS), height[j], -j))
        del latest[best]
        order.append(best)
        clock.issue(best)
        for j in succs[best]:
            waiting[j] -= 1
            if not waiting[j]:
                latest[j] = clock.latest(j)
    return order


def _apart_slots(t: _Table, order: list[int]) -> list[list[int]]:
    """``order`` cut into slots: a new slot at each step that reads a register a step of the current
    slot wrote, so that no step of a slot depends on another (the compiler, free within a slot, pairs
    its instructions into dual-issue VOPD lines but cannot move a reader up to its writer)."""
    slots: list[list[int]] = []
    written: set[int] = set()
    for i in order:
        if not slots or not (t.steps[i].renaming or written.isdisjoint(t.reads[i])):
            slots.append([])
            written = set()
        slots[-1].append(i)
        written |= t.writes[i]
    return slots


def issue_slots(plan) -> list[list[int]]:
    """The indices of ``plan.steps`` as the lowering emits them: consecutive groups, one scheduling
    region each (module docstring).  CDNA plans with hazard readers: the hazard schedule; RDNA plans
    without LDS accesses: dependent VALU instructions apart (:func:`_apart_schedule`, cut into
    independent slots); otherwise one group in the plan's order (the compiler schedules freely)."""
    if _has_hazards(plan):
        return _walk(plan)[0]
    if _delays_dependent_valu(plan) and plan.steps:
        table = _Table(plan.steps, slots_per_dword(plan.element_bits), dwords_per_slot(plan.element_bits))
        return _apart_slots(table, _apart_schedule(table))
    return [list(range(len(plan.steps)))]


def valu_delays(plan) -> int:
    """The ``s_delay_alu`` instructions LLVM is expected to put in the region of an RDNA plan without LDS
    accesses on gfx11 and later, whose order the lowering pins (:func:`issue_slots`) [I]: of its VALU
    instructions in that order, those that read a register written by one of the
    ``VALU_DEPENDENCY_INSTRUCTIONS - 1`` VALU instructions before them (a DS result is awaited by
    ``s_waitcnt`` instead), one ``s_delay_alu`` per two of them (one covers a second reader close
    behind, ``instskip``).  Instruction ``k`` of a step of ``n`` is issued ``k`` after its first and
    taken to read the step's latest VALU writer (a step's instructions read alike: the dwords of one
    move).  0 for other plans (a plan with LDS accesses is scheduled by the compiler, which
    interleaves its independent loads and permutes)."""
    if not (plan.steps and _delays_dependent_valu(plan)):
        return 0
    t = _Table(plan.steps, slots_per_dword(plan.element_bits), dwords_per_slot(plan.element_bits))
    clock, readers = _ValuClock(t), 0
    for i in _apart_schedule(t):  # the order of issue_slots
        if not t.ds[i]:
            behind = clock.now - clock.latest(i)  # VALU instructions from the latest writer to the step's first
            readers += max(0, min(t.instructions[i], VALU_DEPENDENCY_INSTRUCTIONS - behind))
        clock.issue(i)
    return (readers + 1) // 2


_counts = caches.cache("synth.hazards.counts", size=4)  # 4: the plan being priced (its count is asked twice)


def hazard_nops(plan, scheduled: bool = True) -> HazardCount:
    """The ``s_nop`` instructions, and their wait states, that ``plan``'s steps need in the order of
    :func:`issue_slots` (``scheduled=False``: in the plan's own order, each step pinned); none where
    the plan reads nothing through DPP or a permlane, or off CDNA.

    Pricing a plan asks twice (its setup, then its cost: linlayout.synth.cost), so the count is kept
    per list of steps, with the steps it was counted on: a list whose steps are those very objects,
    in order (steps are frozen dataclasses: never changed once made), has that count."""
    if not _has_hazards(plan):
        return HazardCount()
    key = (id(plan.steps), plan.arch, plan.element_bits, scheduled)
    kept = _counts.get(key)
    if kept is not None and len(kept[0]) == len(plan.steps) and all(map(operator.is_, kept[0], plan.steps)):
        return kept[1]
    clock = _walk(plan, scheduled)[1]
    count = HazardCount(clock.nops, clock.states)
    _counts[key] = (tuple(plan.steps), count)
    return count
