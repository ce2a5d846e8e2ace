"""The fused ``select`` step ``v_perm_b32`` (NVIDIA: ``prmt.b32``) with a lane-dependent selector."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linlayout.hw.targets import Target

from .base import Step, byte_permute_error, ints, lane_table, mask_name, register, same_lengths, table
from .mov import prmt_as_perm

__all__ = ["PermSelect"]


@register
@dataclass(frozen=True)
class PermSelect(Step):
    """``v_perm_b32`` with a lane-dependent selector (a VGPR holding ``sel1`` where ``cond``, else ``sel0``).

    Element level it is a select: slot ``dst[i]`` gets ``b[i]`` where ``cond[l]``, else
    ``a[i]`` (the slots each selector copies; the bytes of ``v_perm_b32`` as in ``Mov``).
    Certificate: a ``select`` item with ``"fused": "v_perm_b32"`` and the operands,
    selectors and destination dword in its ``isa``.  ``form = "prmt"`` (NVIDIA): ``prmt.b32``
    with the selector register, ``operands = (a, b)`` and generic-mode selectors as in ``Mov``;
    ``"fused": "prmt"`` and ``isa`` keys ``a``, ``b`` instead of ``s0``, ``s1``.
    """

    dst: list[int]
    a: list[int]
    b: list[int]
    cond: np.ndarray
    operands: tuple[int, int]
    sel0: int
    sel1: int
    dst_dword: int
    form: str = "v_perm_b32"  # v_perm_b32 | prmt
    op = "permsel"
    cert_op = "select"
    fused_forms = ("v_perm_b32", "prmt")
    form_on_first_item = True

    @property
    def _operand_keys(self) -> tuple[str, str]:
        return ("a", "b") if self.form == "prmt" else ("s0", "s1")

    def to_cert(self, raw: bool = False) -> list[dict]:
        k0, k1 = self._operand_keys
        return [{"op": "select", "dst": ints(self.dst), "a": ints(self.a), "b": ints(self.b),
                 "cond": table(raw, self.cond), "fused": self.form,
                 "isa": {k0: int(self.operands[0]), k1: int(self.operands[1]), "sel0": int(self.sel0),
                         "sel1": int(self.sel1), "vdst": int(self.dst_dword)}}]

    @classmethod
    def claims(cls, items: list[dict], i: int) -> bool:
        return items[i].get("fused") in cls.fused_forms

    @classmethod
    def from_cert(cls, items: list[dict], i: int) -> tuple[Step, int]:
        d = items[i]
        isa = d["isa"]
        k0, k1 = ("a", "b") if d["fused"] == "prmt" else ("s0", "s1")
        same_lengths(i, "select", dst=d["dst"], a=d["a"], b=d["b"])
        return cls(dst=ints(d["dst"]), a=ints(d["a"]), b=ints(d["b"]), cond=lane_table(d["cond"], "cond"),
                   operands=(int(isa[k0]), int(isa[k1])), sel0=int(isa["sel0"]), sel1=int(isa["sel1"]),
                   dst_dword=int(isa["vdst"]), form=d["fused"]), i + 1

    def counts(self) -> dict[str, int]:
        return {self.form: 1}

    def plan_error(self, target: Target, element_bits: int, lds_bytes: int) -> str:
        """A form of another ISA (``prmt`` where the target's lane instructions are not PTX's,
        ``v_perm_b32`` where they are), or registers that are not those of its slots
        (``byte_permute_error``)."""
        if (self.form == "prmt") != ("prmt" in target.lane_ops):
            return f"{target.name} has no {self.form} instruction"
        return byte_permute_error(self.dst, self.a + self.b, self.dst_dword, self.operands, element_bits)

    def asm(self, p: int, target: Target) -> str:
        return (f"{'prmt.b32' if self.form == 'prmt' else 'v_perm_b32'} v{self.dst_dword}, v{self.operands[0]}, v{self.operands[1]}, "
                f"v_sel[0x{self.sel0:08x} / 0x{self.sel1:08x} on {mask_name(self.cond)}]")

    def reads(self) -> list[int]:
        return self.a + self.b

    def writes(self) -> list[int]:
        return self.dst

    @property
    def perm_selectors(self) -> tuple:
        """The v_perm_b32 selectors the step applies (each lane one of them; a prmt's as their v_perm_b32
        equivalents)."""
        if self.form == "prmt":
            return (prmt_as_perm(self.sel0), prmt_as_perm(self.sel1))
        return (self.sel0, self.sel1)

    def note_setup(self, setup) -> None:
        if self.form == "v_perm_b32":  # the selector register of prmt (NVIDIA) is ptxas's to build
            setup.lane_choice(self.cond, self.sel0, self.sel1)

    def run(self, machine, what: str) -> None:
        if self.form == "prmt":
            machine.prmt_select(self.dst_dword, self.operands, self.sel0, self.sel1, self.cond)
            perm_operands = self.operands[::-1]  # v_perm_b32's (S0, S1) = prmt's (b, a)
        else:
            machine.v_perm_select(self.dst_dword, self.operands, self.sel0, self.sel1, self.cond)
            perm_operands = self.operands
        for srcs, selector in zip((self.a, self.b), self.perm_selectors):  # each selector's declared copies
            machine.check_perm_copies(self.dst, srcs, self.dst_dword, perm_operands, selector, what, constants=True)

    def prepare(self, emitter, what: str):
        return emitter.lane_choice(self.cond, self.sel0, self.sel1, what)

    def emit(self, emitter, prepared, regs: dict[int, str], what: str) -> None:
        if self.form == "prmt":  # operands (a, b), the per-lane generic-mode selector register
            regs[self.dst_dword] = emitter.prmt(regs, self.operands, prepared, what)
            return
        regs[self.dst_dword] = emitter.perm(regs, self.operands, prepared, what)
