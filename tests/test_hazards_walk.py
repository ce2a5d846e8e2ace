"""linlayout.synth.hazards's walk (a table of the steps, one clock) against a straightforward
reference: one object per step, each register's writer as ``(position, written by a VALU op)``,
the dependences rebuilt per run -- the same issue order, ``s_nop`` count and wait states on every
plan the planner prices for a sample of the AMD corpus (in-wave and LDS, 8- to 64-bit elements,
scheduled and in the plan's own order)."""

from __future__ import annotations

import heapq
import json
from types import SimpleNamespace

import pytest

from linlayout import LayoutError, LinearLayout
from linlayout.cli.bench import CORPORA
from linlayout.dtypes import dtype_bits
from linlayout.synth import hazards
from linlayout.synth.convert import candidate_plans
from linlayout.synth.steps import dwords_per_slot, slots_per_dword


def _dwords(slots, p, dps):
    if dps == 2:
        return [d for s in slots for d in (2 * s, 2 * s + 1)]
    return [s // p for s in slots]


class _Node:
    def __init__(self, index, st, p, dps):
        self.index, self.step = index, st
        self.reads, self.writes = set(_dwords(st.reads(), p, dps)), set(_dwords(st.writes(), p, dps))
        self.instructions = 0
        if not st.renaming:
            self.instructions = (dps if st.register_step() else 1) * sum(st.counts().values())
            self.instructions *= 2 if st.fused_select else 1
        self.wait = hazards.hazard_wait_states(st)
        self.any_writer = self.wait and st.op != "permlane_swap"
        self.ds = bool(st.crossbar or (st.lds and not st.store))


class _Clock:
    def __init__(self, p, dps):
        self.p, self.dps, self.now, self.nops, self.states = p, dps, 0, 0, 0
        self.written, self.pending = {}, {}

    def waits_for_ds(self, n):
        return n.instructions > 0 and any(d in self.pending for d in n.reads)

    def clear_at(self, n):
        return max([w[0] + 1 + n.wait for d in n.reads if (w := self.written.get(d)) and (w[1] or n.any_writer)],
                   default=0)

    def stall(self, n):
        return max(0, self.clear_at(n) - self.now - self.waits_for_ds(n)) if n.wait else 0

    def issue(self, n):
        if n.step.renaming:
            pairs = zip(_dwords(n.step.writes(), self.p, self.dps), _dwords(n.step.reads(), self.p, self.dps))
            moved = [(d, self.written.get(s), self.pending.get(s)) for d, s in pairs]
            for d, w, t in moved:
                self.written.pop(d, None)
                self.pending.pop(d, None)
                if w is not None:
                    self.written[d] = w
                if t is not None:
                    self.pending[d] = t
            return
        stall = self.stall(n)
        if self.waits_for_ds(n):
            last = max(self.pending[d] for d in n.reads if d in self.pending)
            self.pending = {d: t for d, t in self.pending.items() if t > last}
            self.now += 1
        if stall:
            self.nops, self.states, self.now = self.nops + 1, self.states + stall, self.now + stall
        if n.instructions:
            for d in n.writes:
                self.written[d] = (self.now + n.instructions - 1, not n.ds)
                self.pending.pop(d, None)
                if n.ds:
                    self.pending[d] = self.now
        self.now += n.instructions


def _schedule(run, clock):
    preds = [set() for _ in run]
    for j, n in enumerate(run):
        for i, m in enumerate(run[:j]):
            if m.writes & (n.reads | n.writes) or m.reads & n.writes:
                preds[j].add(i)
    height = [0] * len(run)
    for i in range(len(run) - 1, -1, -1):
        height[i] = run[i].instructions + max(
            [height[j] + (run[j].wait if run[i].writes & run[j].reads else 0)
             for j in range(len(run)) if i in preds[j]], default=0)
    done, out = set(), []
    while len(out) < len(run):
        ready = [j for j in range(len(run)) if j not in done and preds[j] <= done]
        # ready steps that need no wait now (a reader's clear position is fixed once it is ready),
        # the highest first; else the one that waits least
        plain = [j for j in ready if not run[j].wait or clock.clear_at(run[j]) <= clock.now]
        if plain:
            best = min(plain, key=lambda j: (-height[j], j))
        else:
            best = min(ready, key=lambda j: (clock.stall(run[j]), -height[j], j))
        clock.issue(run[best])
        done.add(best)
        out.append(run[best])
    return out


def _reference(plan, scheduled):
    """(issue slots, s_nop, wait states) of ``plan``: the module docstring, restated plainly."""
    p, dps = slots_per_dword(plan.element_bits), dwords_per_slot(plan.element_bits)
    clock, order, run, loads = _Clock(p, dps), [], [], False
    for n in [_Node(i, st, p, dps) for i, st in enumerate(plan.steps)] + [None]:
        if n is not None and not (n.step.lds or n.step.barrier):
            run.append(n)
            continue
        if run:
            if loads and clock.pending:
                clock.pending, clock.now = {}, clock.now + 1
            loads = False
            if scheduled:
                order += _schedule(run, clock)
            else:
                for m in run:
                    clock.issue(m)
                order += run
            run = []
        if n is not None:
            clock.issue(n)
            order.append(n)
            loads = n.step.op == "lds_load" or (loads and not n.step.barrier)
    slots, copied = [], set()
    for n in order:
        if slots and n.wait and n.reads & copied:
            slots[-1].append(n.index)
        else:
            slots.append([n.index])
        if n.step.op == "mov" and n.step.kind == "v_mov":
            copied |= n.writes
    return slots, clock.nops, clock.states


_CASES = json.loads(CORPORA["amd"].read_text())["cases"]


@pytest.mark.parametrize("start", range(4))
def test_the_walk_is_the_reference_on_every_plan_of_a_corpus_sample(start):
    walked = nops = lds = 0
    for case in _CASES[start::12]:
        src, dst = LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])
        bits = dtype_bits(case["dtype"])
        for element_bits in sorted({bits, 64} if bits == 32 else {bits}):
            try:
                plans = candidate_plans(src, dst, case["arch"], element_bits, strategy="registers")
                lds_plans = candidate_plans(src, dst, case["arch"], element_bits, strategy="lds")
            except LayoutError:
                continue
            # the walk reads registers only, not values: an LDS round trip around and after the
            # register plan gives runs between LDS accesses and DS results awaited by the readers
            plans += [SimpleNamespace(steps=a.steps + b.steps + a.steps, arch=a.arch, element_bits=a.element_bits)
                      for a, b in zip(lds_plans, plans)]
            for plan in plans + lds_plans:
                if not any(hazards.hazard_wait_states(st) for st in plan.steps):
                    continue
                for scheduled in (True, False):
                    slots, clock = hazards._walk(plan, scheduled)
                    assert (slots, clock.nops, clock.states) == _reference(plan, scheduled)
                    walked += 1
                    lds += any(st.lds for st in plan.steps)
                    nops += clock.nops
    assert walked >= 20 and nops > 0 and lds > 0  # the sample holds hazard readers that need s_nop, and LDS plans
