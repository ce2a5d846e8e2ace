"""The fused ``select`` step ``v_perm_b32`` with a lane-dependent selector."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Step, ints, lane_table, mask_name, register, table

__all__ = ["PermSelect"]


@register
@dataclass
class PermSelect(Step):
    """``v_perm_b32`` with a lane-dependent selector (a VGPR holding ``sel1`` where ``cond``, else ``sel0``).

    Element level it is a select: slot ``dst[i]`` gets ``b[i]`` where ``cond[l]``, else
    ``a[i]`` (the slots each selector copies; the bytes of ``v_perm_b32`` as in ``Mov``).
    Certificate: a ``select`` item with ``"fused": "v_perm_b32"`` and the operands,
    selectors and destination dword in its ``isa``.
    """

    dst: list[int]
    a: list[int]
    b: list[int]
    cond: np.ndarray
    operands: tuple[int, int]
    sel0: int
    sel1: int
    dst_dword: int
    op = "permsel"
    cert_op = "select"
    fused_forms = ("v_perm_b32",)

    def to_cert(self, raw: bool = False) -> list[dict]:
        return [{"op": "select", "dst": ints(self.dst), "a": ints(self.a), "b": ints(self.b),
                 "cond": table(raw, self.cond), "fused": "v_perm_b32",
                 "isa": {"s0": int(self.operands[0]), "s1": int(self.operands[1]), "sel0": int(self.sel0),
                         "sel1": int(self.sel1), "vdst": int(self.dst_dword)}}]

    @classmethod
    def claims(cls, items: list[dict], i: int) -> bool:
        return items[i].get("fused") in cls.fused_forms

    @classmethod
    def from_cert(cls, items: list[dict], i: int) -> tuple[Step, int]:
        d = items[i]
        isa = d["isa"]
        return cls(dst=ints(d["dst"]), a=ints(d["a"]), b=ints(d["b"]), cond=lane_table(d["cond"], "cond"),
                   operands=(int(isa["s0"]), int(isa["s1"])), sel0=int(isa["sel0"]), sel1=int(isa["sel1"]),
                   dst_dword=int(isa["vdst"])), i + 1

    def counts(self) -> dict[str, int]:
        return {"v_perm_b32": 1}

    def asm(self, p: int) -> str:
        return (f"v_perm_b32 v{self.dst_dword}, v{self.operands[0]}, v{self.operands[1]}, "
                f"v_sel[0x{self.sel0:08x} / 0x{self.sel1:08x} on {mask_name(self.cond)}]")

    def reads(self) -> list[int]:
        return self.a + self.b

    def writes(self) -> list[int]:
        return self.dst

    @property
    def perm_selectors(self) -> tuple:
        """The v_perm_b32 selectors the step applies (each lane one of them)."""
        return (self.sel0, self.sel1)

    def run(self, machine, what: str) -> None:
        machine.v_perm_select(self.dst_dword, self.operands, self.sel0, self.sel1, self.cond)
        for srcs, selector in ((self.a, self.sel0), (self.b, self.sel1)):  # each selector's declared copies
            machine.check_perm_copies(self.dst, srcs, self.dst_dword, self.operands, selector, what, constants=True)

    def prepare(self, emitter, what: str):
        cond = np.asarray(self.cond, dtype=np.int64) != 0
        return emitter.lane_value(np.where(cond, self.sel1, self.sel0), what)

    def emit(self, emitter, prepared, regs: dict[int, str], what: str) -> None:
        regs[self.dst_dword] = emitter.perm(regs, self.operands, prepared, what)
