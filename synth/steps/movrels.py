"""The ``movrels`` step: ``v_movrels_b32``, a register read at a wave-uniform register index held in ``m0``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linlayout import LayoutError
from linlayout.hw.targets import Target

from .base import Step, dword_pairs, dwords_per_slot, ints, register, same_lengths, slots_per_dword, vregs

__all__ = ["Movrels", "index_ranks"]


def index_ranks(dword_shifts) -> tuple[list[int], list[int]]:
    """``(offsets, ranks)`` of a per-warp table of register offsets: ``offsets`` the distinct offsets in
    increasing order, ``ranks[w]`` the place of warp ``w``'s offset among them.  The lowering reads the
    registers ``src + offsets[k]`` as the elements ``k`` of one vector at the wave-uniform index
    ``ranks[w]`` (the value it puts in ``m0``)."""
    offsets = sorted({int(x) for x in dword_shifts})
    place = {o: k for k, o in enumerate(offsets)}
    return offsets, [place[int(x)] for x in dword_shifts]


@register
@dataclass(frozen=True)
class Movrels(Step):
    """``v_movrels_b32`` (``m0`` = a wave-uniform register index): in every lane of warp ``w``,
    ``dst[i] = src[i] + shift[w]`` (slot numbers: warp ``w`` reads the slot ``shift[w]`` past ``src[i]``).

    Certificate: ``{"op": "movrels", "dst": [...], "src": [...], "shift": [S_0, .., S_{W-1}]}``, one
    integer per warp.  The instruction moves whole 32-bit registers: ``dst`` and ``src`` pair by
    ``dword_pairs`` and each shift is a whole number of registers (a multiple of the slots per register;
    a 64-bit slot is two registers, so its register offset is ``2 shift``).  The register offset is the
    same for every lane of a warp: the instruction's ``m0`` (written once by the SALU for all the steps
    of one shift table: ``cost.estimate_overhead``'s ``salu_movrels_index``).  Counted under ``v_mov`` (a
    VALU move, as the ISA counts classify ``v_movrel*``).
    """

    dst: list[int]
    src: list[int]
    shift: tuple[int, ...]
    op = "movrels"
    cert_op = "movrels"
    warp_tables = ("shift",)

    def to_cert(self, raw: bool = False) -> list[dict]:
        return [{"op": "movrels", "dst": ints(self.dst), "src": ints(self.src), "shift": ints(self.shift)}]

    @classmethod
    def from_cert(cls, items: list[dict], i: int) -> tuple[Step, int]:
        d = items[i]
        same_lengths(i, "movrels", dst=d["dst"], src=d["src"])
        shift = d["shift"]
        if (not isinstance(shift, list) or not shift
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in shift)):
            raise LayoutError(f"plan step {i} (movrels): shift must be a list of integers, one per warp, got {shift!r}")
        return cls(dst=ints(d["dst"]), src=ints(d["src"]), shift=tuple(shift)), i + 1

    def plan_error(self, target: Target, element_bits: int, lds_bytes: int) -> str:
        """A target without ``v_movrels_b32`` (``Target.has_movrels``), a shift that is not a whole
        number of registers, or one reading below slot 0."""
        if not target.has_movrels:
            return f"{target.name} has no v_movrels_b32 instruction (Target.has_movrels)"
        p = slots_per_dword(element_bits)
        bad = [s for s in self.shift if s % p]
        if bad:
            return f"shift {bad[0]} moves part of a register ({p} slots per 32-bit register)"
        if min(self.src) + min(self.shift) < 0:
            return f"warp shift {min(self.shift)} reads below slot 0"
        return ""

    def dword_shifts(self, p: int, dps: int) -> list[int]:
        """The register (dword) offset per warp with ``p`` slots per register, ``dps`` registers per slot."""
        return [s * dps // p for s in self.shift]

    def indexed_tuples(self, element_bits: int) -> list[list[int]]:
        """Per register read, the registers the warps read in index order (``index_ranks``): the vector the
        lowering reads at the index, which LLVM keeps in consecutive VGPRs."""
        p, dps = slots_per_dword(element_bits), dwords_per_slot(element_bits)
        offsets = index_ranks(self.dword_shifts(p, dps))[0]
        return [[s + o for o in offsets] for _, s in dword_pairs(self.dst, self.src, p, dps, "movrels")]

    def counts(self) -> dict[str, int]:
        return {"v_mov": 1}

    def asm(self, p: int, target: Target) -> str:
        return f"v_movrels_b32 {vregs(self.dst, p)}, {vregs(self.src, p)}  ; m0 = {list(self.shift)} by warp"

    def reads(self) -> list[int]:
        return [s + k for k in sorted(set(self.shift)) for s in self.src]

    def writes(self) -> list[int]:
        return self.dst

    def note_setup(self, setup) -> None:
        setup.register_index(self.shift)

    def run(self, machine, what: str) -> None:
        shifts = self.dword_shifts(machine.slots_per_dword, machine.dwords_per_slot)
        for d, s in machine.pairs(self.dst, self.src, what):
            machine.movrels(d, s, shifts, what)

    def prepare(self, emitter, what: str):
        offsets, ranks = index_ranks(self.dword_shifts(emitter.slots_per_dword, emitter.dwords_per_slot))
        return offsets, emitter.register_index(ranks, what)

    def emit(self, emitter, prepared, regs: dict[int, str], what: str) -> None:
        offsets, index = prepared
        for d, s in emitter.pairs(self.dst, self.src, what):
            regs[d] = emitter.indexed_read([emitter.reg(regs, s + o, what) for o in offsets], index)
