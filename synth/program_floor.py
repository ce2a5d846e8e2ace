"""A lower bound of the priced plan of an SSA register program, read off the program before it is emitted.

``ProgramFloor.of(prog, outputs, cm, element_bits)``: the live ops of ``prog`` (linlayout.synth.ir,
those ``outputs`` depend on) become plan steps in ``Program.emit``; the plan is then priced by
linlayout.synth.cost (``estimate_overhead``, ``plan_cost``).  Without emitting or pricing, every
such plan (of a program without LDS ops) has

* ``instructions`` (``Plan.total_with_overhead``) at least ``sum over live ops of m + depth``:
  each live op emits at least one counted instruction (``lane``: a lane move; ``select``: a
  select; ``fused``: a DPP move, with a select or in place; ``swap``: a ``v_permlane*_swap``;
  ``perm``/``permsel``: a byte permute), counted ``m`` times (``m = dwords_per_slot``: 2 for
  64-bit elements, a register step per dword half); copies and renamings only add steps; and the
  overhead holds at least ``depth`` ``s_waitcnt`` (below): on PTX targets one per level of dependent
  DS instructions (``ds_depth``), on AMD targets ``cost.lgkm_waits``, a wait before each read of a
  newer crossbar result and one at the end for an unwaited one, so at least one per level;
* every part of the cost at least the same expression of the live ops alone: the issue cycles
  ``issue`` (each op's instruction at ``CostModel.instruction``, ``m`` times: copies, hazard wait
  states and setup only add to it), of which ``pipe`` the LDS pipe's (a crossbar move's price
  beyond its issue slot; no LDS access), and the latency ``CostModel.latency(depth)``, with
  ``depth`` at most the plan's ``ds_depth``.

``depth``: a level per value, ``level(v) <= `` the DS chain level (``cost._DsChain``) of every slot
of the register holding ``v`` when it is read.  Src values are 0; a crossbar lane move is
``level(arg) + 1`` (its step reads every slot of its source register and writes every slot of its
own with one level); a select, a fused DPP move and a swap the larger level of their arguments
(each step reads every slot of both and writes all of its own with one level); a permute 0 (its
step reads only the slots its selector names: 0 is below any level).  A copy keeps the level.
So the deepest crossbar move's own level is at most ``ds_depth``.

Hence ``cost >= CostModel.path_floor(issue - pipe, pipe, latency)`` (``path_floor`` does not
decrease when a part grows; the plan's ``simd`` part is ``issue - lds_pipe + setup``) wherever the
floors apply (``CostModel.floors_apply``) and the pipes do not overlap (``pipe_overlap``: not
NVIDIA), and the rank value (``CostModel.rank_value``, non-decreasing in both) is at least
``rank_value(cost floor, instructions floor)``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from .cost import CROSSBAR_KINDS, CostModel
from .ir import Program
from .steps import dwords_per_slot

__all__ = ["ProgramFloor"]


@dataclass(frozen=True)
class ProgramFloor:
    """Lower bounds of the cost and the instructions with setup of the plan a program becomes."""

    cost: float
    instructions: int

    @classmethod
    def of(cls, prog: Program, outputs: list[int], cm: CostModel, element_bits: int) -> "ProgramFloor":
        """The floors (module docstring) of ``prog`` computing ``outputs``; ``cm`` must price
        without overlapping pipes, under an objective the floors bound."""
        ops = prog.live_ops(outputs)
        kinds = Counter(cls._instruction(op, prog) for op in ops)
        depth = cls._ds_depth(ops) if any(kind in CROSSBAR_KINDS for kind in kinds) else 0
        return cls.of_kinds(kinds, depth, cm, element_bits)

    @classmethod
    def of_kinds(cls, kinds: Counter, depth: int, cm: CostModel, element_bits: int) -> "ProgramFloor":
        """The floors (module docstring) of live ops counted per instruction kind (``kinds``) with DS
        depth ``depth``.  Counts and a depth at most a program's own give floors at most its floors:
        every part (``issue - pipe``: each op's price but a crossbar move's LDS-pipe share, at least
        ``ds_issue >= 0``; ``pipe``; the latency; the instructions) is a sum of non-negative terms per
        op, or grows with the depth, and ``path_floor`` and ``rank_value`` do not decrease when one
        grows (``SchedulePlanner.live_moves`` counts part of an exchange program before it is built)."""
        if cm.pipe_overlap or not cm.floors_apply:
            raise ValueError("program floors bound the sum of the parts, under concurrent or latency")
        m = dwords_per_slot(element_bits)
        crossbar = [kind for kind in kinds if kind in CROSSBAR_KINDS]
        issue = m * sum(n * cm.instruction(kind) for kind, n in kinds.items())
        pipe = m * sum(kinds[kind] * cm.lds_pipe_share(kind) for kind in crossbar)
        depth = depth if crossbar else 0
        return cls(cm.path_floor(issue - pipe, pipe, cm.latency(depth)), m * sum(kinds.values()) + depth)

    @staticmethod
    def _ds_depth(ops: list) -> int:
        """The deepest level of a crossbar lane move (module docstring: ``level``)."""
        level: dict[int, int] = {}
        depth = 0
        for op in ops:
            if op.kind == "lane":
                d = level.get(op.args[0], 0) + (1 if op.params["op"].crossbar else 0)
            elif op.kind in ("select", "fused", "swap"):
                d = max(level.get(a, 0) for a in op.args)
            else:  # perm, permsel (``_instruction`` refuses any other op)
                d = 0
            depth = max(depth, d)
            level.update(dict.fromkeys(op.outs, d))
        return depth

    @staticmethod
    def _instruction(op, prog: Program) -> str:
        """The counted instruction kind (``CostModel.instruction``) of the step ``op`` emits at least."""
        if op.kind == "lane":
            return op.params["op"].family
        if op.kind == "select":
            return prog.isa.select
        if op.kind == "fused":
            return "dpp"
        if op.kind == "swap":
            return op.params["kind"]
        if op.kind in ("perm", "permsel"):
            return prog.isa.perm
        raise ValueError(f"no floor for a program with {op.kind} ops")

    def rank_value(self, cm: CostModel) -> float:
        """The least rank value (``CostModel.rank_value``) of the plan."""
        return cm.rank_value(self.cost, self.instructions)
