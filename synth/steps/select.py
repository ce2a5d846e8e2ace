"""The ``select`` step: ``v_cndmask_b32`` (NVIDIA: ``selp.b32``), a per-lane choice between two registers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linlayout import LayoutError
from linlayout.hw.targets import Target

from .base import Step, ints, lane_table, mask_name, register, same_lengths, table, vregs

__all__ = ["SELECT_KINDS", "Select"]

#: The select instructions: AMD's ``v_cndmask_b32`` and PTX's ``selp.b32``.
SELECT_KINDS = ("v_cndmask", "selp")


@register
@dataclass(frozen=True)
class Select(Step):
    """``v_cndmask_b32``: per lane ``dst = b if cond[l] else a`` (VCC = cond; S0 = a, S1 = b).

    Certificate: ``{"op": "select", "dst": [...], "a": [...], "b": [...], "cond": C}``, ``C``
    one 0/1 value per lane (``[lanes]``) or one such list per warp.  ``kind``: the instruction,
    ``v_cndmask`` or (NVIDIA) ``selp`` = ``selp.b32 d, b, a, p`` with the predicate ``p = cond``;
    the certificate names it (``"kind": "selp"``) unless it is ``v_cndmask``.
    """

    dst: list[int]
    a: list[int]
    b: list[int]
    cond: np.ndarray
    kind: str = "v_cndmask"  # v_cndmask | selp
    op = "select"
    cert_op = "select"

    def to_cert(self, raw: bool = False) -> list[dict]:
        d = {"op": "select", "dst": ints(self.dst), "a": ints(self.a), "b": ints(self.b),
             "cond": table(raw, self.cond)}
        if self.kind != "v_cndmask":
            d["kind"] = self.kind
        return [d]

    @classmethod
    def from_cert(cls, items: list[dict], i: int) -> tuple[Step, int]:
        d = items[i]
        kind = d.get("kind", "v_cndmask")
        if kind not in SELECT_KINDS:
            raise LayoutError(f"plan step {i} (select): kind {kind!r} must be one of {', '.join(SELECT_KINDS)}")
        same_lengths(i, "select", dst=d["dst"], a=d["a"], b=d["b"])
        return cls(dst=ints(d["dst"]), a=ints(d["a"]), b=ints(d["b"]), cond=lane_table(d["cond"], "cond"),
                   kind=kind), i + 1

    def plan_error(self, target: Target, element_bits: int, lds_bytes: int) -> str:
        """The select of another ISA: ``selp`` where the target's lane instructions are not PTX's
        (``Target.lane_ops``), ``v_cndmask`` where they are."""
        own = "selp" if "selp" in target.lane_ops else "v_cndmask"
        return "" if self.kind == own else f"{target.name} has no {self.kind} instruction (its select is {own})"

    def counts(self) -> dict[str, int]:
        return {self.kind: 1}

    def asm(self, p: int, target: Target) -> str:
        if self.kind == "selp":
            return f"selp.b32 {vregs(self.dst, p)}, {vregs(self.b, p)}, {vregs(self.a, p)}, {mask_name(self.cond)}"
        return (f"v_cndmask_b32 {vregs(self.dst, p)}, {vregs(self.a, p)}, {vregs(self.b, p)}, "
                f"{mask_name(self.cond)}")

    def reads(self) -> list[int]:
        return self.a + self.b

    def writes(self) -> list[int]:
        return self.dst

    def note_setup(self, setup) -> None:
        setup.condition(self.cond)

    def run(self, machine, what: str) -> None:
        pairs = zip(machine.pairs(self.dst, self.a, what), machine.pairs(self.dst, self.b, what))
        for d, a, b in machine.at_once([(d, a, b) for (d, a), (_, b) in pairs]):
            machine.select(d, a, b, self.cond)

    def prepare(self, emitter, what: str):
        return emitter.condition(self.cond, what)

    def emit(self, emitter, prepared, regs: dict[int, str], what: str) -> None:
        for (d, a), (_, b) in zip(emitter.pairs(self.dst, self.a, what), emitter.pairs(self.dst, self.b, what)):
            regs[d] = emitter.select(prepared, emitter.reg(regs, b, what), emitter.reg(regs, a, what))
