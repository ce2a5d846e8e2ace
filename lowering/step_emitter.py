"""What every emitter of plan steps shares, whatever language it writes (MLIR, C++): the registers.

A plan's slots live in 32-bit registers ("dwords", linlayout.synth.steps.base): with
``element_bits``-bit elements ``p = max(1, 32 / element_bits)`` slots share a dword, a 64-bit
slot spans two.  An emitter keeps one value name per dword (``regs``: dword -> name) and lets
each step emit itself (``Step.prepare`` for the per-lane setup values, then ``Step.emit``: the
double dispatch of linlayout.synth.steps); :class:`StepEmitter` owns the parts of that protocol
that do not depend on the language: the two passes, the register file, the one pairing rule of
register steps and the dword pieces of a shared-memory access.  Subclasses write the
instructions (linlayout.lowering.emit.plan_ops.PlanEmitter, linlayout.lowering.cpp.emitter.CppEmitter).
"""

from __future__ import annotations

import numpy as np

from linlayout import LayoutError
from linlayout.synth.hazards import issue_slots
from linlayout.synth.plan import Plan
from linlayout.synth.steps import dword_pairs, dwords_per_slot, slot_dwords, slots_per_dword

__all__ = ["StepEmitter", "merge_pieces"]


def merge_pieces(pieces: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Join consecutive ``(dword, first byte, bytes)`` pieces of one dword (``(d, 0, 2), (d, 2, 2)`` ->
    ``(d, 0, 4)``)."""
    out: list[tuple[int, int, int]] = []
    for d, o, n in pieces:
        if out and out[-1][0] == d and out[-1][1] + out[-1][2] == o:
            out[-1] = (d, out[-1][1], out[-1][2] + n)
        else:
            out.append((d, o, n))
    return out


class StepEmitter:
    """The register file and the two passes of an emitter of ``plan``'s steps.

    :meth:`prepare` (prologue) and :meth:`emit` (the steps, on the source registers) call each
    step; a subclass provides the primitives the steps call and :meth:`separate_lds_steps`.
    """

    #: Emit in the hazard-aware order of linlayout.synth.hazards and pin it (the conversion kernel)
    pins_order = False

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.slots_per_dword = slots_per_dword(plan.element_bits)
        self.dwords_per_slot = dwords_per_slot(plan.element_bits)
        self._prep: list | None = None

    def prepare(self) -> None:
        """Emit the per-lane values every step needs (before the steps)."""
        self._prep = [st.prepare(self, f"plan step {i} ({st.op})") for i, st in enumerate(self.plan.steps)]

    def emit(self, regs: dict[int, str]) -> dict[int, str]:
        """Emit the steps on ``regs`` (dword -> value); returns the final registers.

        With ``pins_order`` the steps go in the order of :func:`linlayout.synth.hazards.issue_slots`
        (the plan's own where no DPP or permlane op reads a register: then one slot holds every
        step), with :meth:`keep_order` between two slots; without, in the plan's order, the
        compiler free to schedule them.  Between two shared-memory steps with no barrier
        between them it calls :meth:`separate_lds_steps` (the compiler would merge neighbouring
        accesses into wider ones; the plan counts each), before one whose direction (``store``)
        differs from the last one's :meth:`order_lds_accesses` too (a round trip without a
        barrier: its lanes exchange bytes through the LDS, which the compiler does not see), and
        before the first register instruction after a run of loads :meth:`wait_for_lds_loads`."""
        if self._prep is None or len(self._prep) != len(self.plan.steps):
            raise LayoutError(f"{type(self).__name__}.emit called before prepare()")
        regs = dict(regs)
        lds_since_barrier = 0
        last_store = None  # the direction of the last LDS step since the last barrier
        loads_pending = False
        slots = issue_slots(self.plan) if self.pins_order else [list(range(len(self.plan.steps)))]
        order = [(k, i) for k, slot in enumerate(slots) for i in slot]
        for n, (k, i) in enumerate(order):
            st, prep = self.plan.steps[i], self._prep[i]
            if n and k != order[n - 1][0]:
                self.keep_order()
            if st.lds:
                if lds_since_barrier:
                    self.separate_lds_steps()
                if last_store not in (None, st.store):
                    self.order_lds_accesses()
                lds_since_barrier += 1
                last_store = st.store
            elif st.barrier:
                lds_since_barrier, last_store = 0, None
            elif loads_pending and any(st.counts().values()):  # the first instruction after loads
                self.wait_for_lds_loads()
                loads_pending = False
            loads_pending = st.op == "lds_load" or (loads_pending and not st.barrier)
            st.emit(self, prep, regs, f"plan step {i} ({st.op})")
        return regs

    def lane_choice(self, cond, if_false: int, if_true: int, what: str) -> str:
        """A per-lane value: the constant ``if_true`` in the lanes where ``cond`` holds, else ``if_false`` (by
        default the table through the subclass's ``lane_value``)."""
        return self.lane_value(np.where(np.asarray(cond, dtype=np.int64) != 0, if_true, if_false), what)

    def bpermute_address(self, values, what: str, defined: np.ndarray | None = None) -> tuple[str, int]:
        """The per-lane byte addresses ``values`` of a ``ds_bpermute`` (only the ``defined`` lanes matter) as
        a register and a constant that ``ds_bpermute`` adds: by default the table through the subclass's
        ``lane_value`` and 0."""
        return self.lane_value(values, what, defined=defined), 0

    def permlane_selector(self, selector: int) -> None:
        """Prepare the 64-bit lane ``selector`` of a ``v_permlane16``/``x16`` step before the steps (nothing
        by default: the instruction takes it as constants)."""

    def register_index(self, ranks: list[int], what: str) -> str:
        """The wave-uniform register index ``ranks[w]`` of warp ``w`` (a ``Movrels`` step's) in the prologue;
        a language without such an index says so (LayoutError)."""
        raise LayoutError(f"{what}: {type(self).__name__} has no wave-uniform register index (v_movrels_b32)")

    def indexed_read(self, candidates: list[str], index: str) -> str:
        """``candidates[index]`` read at the wave-uniform ``index`` of :meth:`register_index` (which refuses first
        where there is none)."""
        raise NotImplementedError

    def keep_order(self) -> None:
        """Emit what keeps the steps before it before the steps after it (nothing by default)."""

    def wait_for_lds_loads(self) -> None:
        """Before the first register instruction after a run of LDS loads (nothing by default)."""

    def separate_lds_steps(self) -> None:
        """Emit what keeps two shared-memory steps apart (no instruction)."""
        raise NotImplementedError

    def order_lds_accesses(self) -> None:
        """Emit what keeps the shared-memory accesses before it before those after it, stores and
        loads that exchange bytes between lanes with no barrier between them (nothing by default)."""

    def reg(self, regs: dict[int, str], d: int, what: str) -> str:
        """The value of register ``d``."""
        try:
            return regs[d]
        except KeyError:
            raise LayoutError(f"{what}: register {d} is read before it holds a value") from None

    def pairs(self, dst: list[int], src: list[int], what: str) -> list[tuple[int, int]]:
        """(dst dword, src dword) of a register step (``dword_pairs``, the one pairing rule)."""
        return dword_pairs(dst, src, self.slots_per_dword, self.dwords_per_slot, what)

    def copy(self, regs: dict[int, str], pairs: list[tuple[int, int]], what: str) -> None:
        """A parallel copy of registers: new names for the same values (the compiler copies where it must)."""
        old = {sd: self.reg(regs, sd, what) for _, sd in pairs}
        for dd, sd in pairs:
            regs[dd] = old[sd]

    def access_pieces(self, slots: list[int], width_bytes: int, what: str) -> list[tuple[int, int, int]]:
        """The dword pieces ``(dword, first byte, bytes)`` of a shared-memory access of ``slots``, merged,
        in address order; they must fill ``width_bytes`` bytes, whole dwords when 4 or more."""
        pieces = merge_pieces([pc for s in slots for pc in slot_dwords(s, self.slots_per_dword, self.dwords_per_slot)])
        if sum(n for _, _, n in pieces) != width_bytes:
            raise LayoutError(f"{what}: {len(slots)} slots do not make a {width_bytes}-byte access")
        if width_bytes >= 4 and any(n != 4 for _, _, n in pieces):
            raise LayoutError(f"{what}: a {width_bytes}-byte access must move whole 32-bit registers")
        return pieces
