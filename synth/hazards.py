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
Plans without DPP or permlane reads, and every target but CDNA, keep the plan's order unpinned
and need none.
"""

from __future__ import annotations

import heapq
import operator
from dataclasses import dataclass

from linlayout import caches
from linlayout.hw.targets import get_target

from .steps import Step, dwords_per_slot, slots_per_dword

__all__ = ["DPP_READ_WAIT_STATES", "PERMLANE_READ_WAIT_STATES", "HazardCount", "hazard_nops", "hazard_wait_states",
           "issue_slots"]

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


class _Node:
    """One step as the schedule sees it: the registers it reads and writes, its instructions."""

    __slots__ = ("index", "step", "reads", "writes", "instructions", "wait", "any_writer", "ds", "copy")

    def __init__(self, index: int, st: Step, p: int, dps: int) -> None:
        self.index, self.step = index, st
        self.reads = frozenset(_dwords(st.reads(), p, dps))
        self.writes = frozenset(_dwords(st.writes(), p, dps))
        if st.renaming:
            self.instructions = 0
        else:
            mult = dps if st.register_step() else 1
            self.instructions = mult * sum(st.counts().values())
            if st.fused_select:  # gfx9: LLVM makes it a v_mov_b32_dpp and a v_cndmask_b32 (docs/lowering.md)
                self.instructions *= 2
        self.wait = hazard_wait_states(st)
        self.any_writer = self.wait and st.op != "permlane_swap"  # DPP: any writer counts
        self.ds = bool(st.crossbar or (st.lds and not st.store))  # a DS result: awaited by s_waitcnt
        self.copy = st.op == "mov" and st.kind == "v_mov"


class _Clock:
    """Issue positions (one per wait state) of the instructions emitted so far: each register's last
    writer, the DS results not yet waited for, and the ``s_nop``s inserted."""

    def __init__(self, p: int, dps: int) -> None:
        self.p, self.dps = p, dps
        self.now = 0
        self.written: dict[int, tuple[int, bool]] = {}  # register -> (position, written by a VALU op)
        self.pending: dict[int, int] = {}  # register -> position of the DS op it awaits
        self.nops = self.states = 0

    def _waits_for_ds(self, n: _Node) -> bool:
        return bool(self.pending) and n.instructions > 0 and any(d in self.pending for d in n.reads)

    def clear_at(self, n: _Node) -> int:
        """The first position at which hazard reader ``n`` needs no wait, given the writers of its
        registers so far (fixed once ``n`` is ready: a later writer waits for it)."""
        at = 0
        for d in n.reads:
            w = self.written.get(d)
            if w is not None and (w[1] or n.any_writer):
                at = max(at, w[0] + 1 + n.wait)
        return at

    def stall(self, n: _Node, clear_at: int | None = None) -> int:
        """The wait states ``n`` needs beyond the instructions before it, were it issued now
        (``clear_at``: :meth:`clear_at` of ``n`` if known)."""
        if not n.wait:
            return 0
        if clear_at is None:
            clear_at = self.clear_at(n)
        # the s_waitcnt before a DS result is one wait state
        return max(0, clear_at - self.now - self._waits_for_ds(n))

    def issue(self, n: _Node) -> None:
        if n.step.renaming:  # the values keep their writers under their new names
            moved = [(d, self.written.get(s), self.pending.get(s))
                     for d, s in zip(_dwords(n.step.writes(), self.p, self.dps), _dwords(n.step.reads(), self.p, self.dps))]
            for d, w, t in moved:
                self.written.pop(d, None)
                self.pending.pop(d, None)
                if w is not None:
                    self.written[d] = w
                if t is not None:
                    self.pending[d] = t
            return
        stall = self.stall(n)
        if self._waits_for_ds(n):  # s_waitcnt lgkmcnt: DS results arrive in order
            last = max(self.pending[d] for d in n.reads if d in self.pending)
            self.pending = {d: t for d, t in self.pending.items() if t > last}
            self.now += 1
        if stall > 0:
            self.nops += 1
            self.states += stall
            self.now += stall
        if n.instructions:
            for d in n.writes:
                self.written[d] = (self.now + n.instructions - 1, not n.ds)
                self.pending.pop(d, None)
                if n.ds:
                    self.pending[d] = self.now
        self.now += n.instructions

    def lds_wait(self) -> None:
        """The one LDS wait the lowering emits before the first register step after LDS loads."""
        if self.pending:
            self.pending = {}
            self.now += 1


def _schedule(run: list[_Node], clock: _Clock) -> list[_Node]:
    """List-schedule one run of register steps (module docstring), issuing them on ``clock``."""
    k = len(run)
    succs: list[list[int]] = [[] for _ in range(k)]  # each successor once
    waiting = [0] * k
    writer: dict[int, int] = {}  # register -> the last step writing it
    readers: dict[int, list[int]] = {}  # register -> the steps reading it since
    for j, n in enumerate(run):
        preds = {writer[d] for d in n.reads if d in writer}
        for d in n.writes:
            if d in writer:
                preds.add(writer[d])
            preds.update(readers.get(d, ()))
        preds.discard(j)
        for i in preds:
            succs[i].append(j)
        waiting[j] = len(preds)
        for d in n.reads:
            readers.setdefault(d, []).append(j)
        for d in n.writes:
            writer[d] = j
            readers[d] = []
    height = [0] * k  # instructions and hazard waits from a step to the end of the run
    for i in range(k - 1, -1, -1):
        writes, longest = run[i].writes, 0
        for j in succs[i]:
            m = run[j]
            h = height[j] + (m.wait if m.wait and not writes.isdisjoint(m.reads) else 0)
            if h > longest:
                longest = h
        height[i] = run[i].instructions + longest
    plain: list[tuple[int, int]] = []  # ready steps that need no wait now: a heap by height
    blocked: list[tuple[int, int]] = []  # ready hazard readers by Clock.clear_at: a heap

    def ready(j: int) -> None:
        if run[j].wait:
            heapq.heappush(blocked, (clock.clear_at(run[j]), j))
        else:
            heapq.heappush(plain, (-height[j], j))

    for j in range(k):
        if not waiting[j]:
            ready(j)
    out = []
    while plain or blocked:
        while blocked and blocked[0][0] <= clock.now:  # clear: the reader needs no wait any more
            j = heapq.heappop(blocked)[1]
            heapq.heappush(plain, (-height[j], j))
        if plain:
            best = heapq.heappop(plain)[1]
        else:  # every ready step waits: the one that waits least
            at, best = min(blocked, key=lambda e: (clock.stall(run[e[1]], e[0]), -height[e[1]], e[1]))
            blocked.remove((at, best))
            heapq.heapify(blocked)
        clock.issue(run[best])
        out.append(run[best])
        for j in succs[best]:
            waiting[j] -= 1
            if not waiting[j]:
                ready(j)
    return out


def _walk(plan, scheduled: bool = True) -> tuple[list[list[int]], _Clock]:
    """The issue slots of ``plan`` (:func:`issue_slots`; ``scheduled=False``: its own order, one step
    per slot) and the clock after issuing them."""
    p, dps = slots_per_dword(plan.element_bits), dwords_per_slot(plan.element_bits)
    nodes = [_Node(i, st, p, dps) for i, st in enumerate(plan.steps)]
    order, clock = _issue(nodes, _Clock(p, dps), scheduled)
    slots: list[list[int]] = []
    copied: set[int] = set()
    for n in order:
        if slots and n.wait and n.reads & copied:  # the compiler's copy may move up into this slot
            slots[-1].append(n.index)
        else:
            slots.append([n.index])
        if n.copy:
            copied |= n.writes
    return slots, clock


def _issue(nodes: list[_Node], clock: _Clock, scheduled: bool) -> tuple[list[_Node], _Clock]:
    """Issue ``nodes`` on ``clock``: the LDS and barrier steps in place, each run of register steps
    between them in the plan's order or (``scheduled``) list-scheduled."""
    order: list[_Node] = []
    run: list[_Node] = []
    loads = False
    for n in nodes + [None]:
        if n is not None and not (n.step.lds or n.step.barrier):
            run.append(n)
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
        if n is not None:
            clock.issue(n)
            order.append(n)
            loads = n.step.op == "lds_load" or (loads and not n.step.barrier)
    return order, clock


def issue_slots(plan) -> list[list[int]]:
    """The indices of ``plan.steps`` as the lowering emits them: consecutive groups, one scheduling
    region each (module docstring).  One group in the plan's order where no step is a hazard
    reader or the target is not CDNA (the compiler schedules freely)."""
    if not _has_hazards(plan):
        return [list(range(len(plan.steps)))]
    return _walk(plan)[0]


_counts = caches.cache("synth.hazards.counts", size=4)  # 4: the plan being priced (its count is asked twice)


def hazard_nops(plan, scheduled: bool = True) -> HazardCount:
    """The ``s_nop`` instructions, and their wait states, that ``plan``'s steps need in the order of
    :func:`issue_slots` (``scheduled=False``: in the plan's own order, each step pinned); none where
    the plan reads nothing through DPP or a permlane, or off CDNA.

    Pricing a plan asks twice (its setup, then its cost: linlayout.synth.cost), so the count is kept
    per list of steps, with the steps it was counted on: a list whose steps are those very objects,
    in order (steps are not changed once made), has that count."""
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
