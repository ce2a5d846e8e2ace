"""The ``select`` step: ``v_cndmask_b32``, a per-lane choice between two registers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Step, ints, lane_table, mask_name, register, table, vregs

__all__ = ["Select"]


@register
@dataclass
class Select(Step):
    """``v_cndmask_b32``: per lane ``dst = b if cond[l] else a`` (VCC = cond; S0 = a, S1 = b).

    Certificate: ``{"op": "select", "dst": [...], "a": [...], "b": [...], "cond": C}``, ``C``
    one 0/1 value per lane (``[64]``) or one such list per warp.
    """

    dst: list[int]
    a: list[int]
    b: list[int]
    cond: np.ndarray
    op = "select"
    cert_op = "select"

    def to_cert(self, raw: bool = False) -> list[dict]:
        return [{"op": "select", "dst": ints(self.dst), "a": ints(self.a), "b": ints(self.b),
                 "cond": table(raw, self.cond)}]

    @classmethod
    def from_cert(cls, items: list[dict], i: int) -> tuple[Step, int]:
        d = items[i]
        return cls(dst=ints(d["dst"]), a=ints(d["a"]), b=ints(d["b"]), cond=lane_table(d["cond"], "cond")), i + 1

    def counts(self) -> dict[str, int]:
        return {"v_cndmask": 1}

    def asm(self, p: int) -> str:
        return (f"v_cndmask_b32 {vregs(self.dst, p)}, {vregs(self.a, p)}, {vregs(self.b, p)}, "
                f"{mask_name(self.cond)}")

    def reads(self) -> list[int]:
        return self.a + self.b

    def writes(self) -> list[int]:
        return self.dst

    def note_setup(self, setup) -> None:
        setup.condition(self.cond)

    def run(self, machine, what: str) -> None:
        for (d, a), (_, b) in zip(machine.pairs(self.dst, self.a, what), machine.pairs(self.dst, self.b, what)):
            machine.select(d, a, b, self.cond)

    def prepare(self, emitter, what: str):
        return emitter.condition(self.cond, what)

    def emit(self, emitter, prepared, regs: dict[int, str], what: str) -> None:
        for (d, a), (_, b) in zip(emitter.pairs(self.dst, self.a, what), emitter.pairs(self.dst, self.b, what)):
            regs[d] = emitter.select(prepared, emitter.reg(regs, b, what), emitter.reg(regs, a, what))
