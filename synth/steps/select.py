"""The ``select`` step: ``v_cndmask_b32`` (NVIDIA: ``selp.b32``), a per-lane choice between two registers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linlayout.hw.targets import Target

from .base import Step, ints, lane_table, mask_name, register, table, vregs

__all__ = ["Select"]


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
        return cls(dst=ints(d["dst"]), a=ints(d["a"]), b=ints(d["b"]), cond=lane_table(d["cond"], "cond"),
                   kind=d.get("kind", "v_cndmask")), i + 1

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
