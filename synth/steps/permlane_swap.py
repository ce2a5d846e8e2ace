"""The ``permlane_swap`` step: gfx950 ``v_permlane{16,32}_swap_b32``."""

from __future__ import annotations

from dataclasses import dataclass

from linlayout import LayoutError
from linlayout.hw.targets import Target

from .base import PlanVerificationError, Step, ints, register, vregs

__all__ = ["PERMLANE_SWAP_KINDS", "PermlaneSwap"]

PERMLANE_SWAP_KINDS = ("permlane16_swap", "permlane32_swap")


@register
@dataclass(frozen=True)
class PermlaneSwap(Step):
    """gfx950 ``v_permlane{16,32}_swap_b32 vdst, src0`` (both registers written in place).

    32: for lane ``l < 32`` swap ``src0[l]`` with ``vdst[l + 32]``; 16: in each 32-lane half
    swap ``src0[l]`` with ``vdst[l + 16]`` for the lanes ``l`` of its lower 16.  Certificate:
    ``{"op": "permlane_swap", "kind": K, "vdst": [...], "src0": [...]}``.
    """

    kind: str  # PERMLANE_SWAP_KINDS
    vdst: list[int]
    src0: list[int]
    op = "permlane_swap"
    cert_op = "permlane_swap"
    across_lanes = True

    def to_cert(self, raw: bool = False) -> list[dict]:
        return [{"op": "permlane_swap", "kind": self.kind, "vdst": ints(self.vdst), "src0": ints(self.src0)}]

    @classmethod
    def from_cert(cls, items: list[dict], i: int) -> tuple[Step, int]:
        d = items[i]
        if d["kind"] not in PERMLANE_SWAP_KINDS:
            raise LayoutError(f"plan step {i} (permlane_swap): kind {d['kind']!r} must be one of "
                              f"{', '.join(PERMLANE_SWAP_KINDS)}")
        return cls(kind=d["kind"], vdst=ints(d["vdst"]), src0=ints(d["src0"])), i + 1

    def plan_error(self, target: Target, element_bits: int, lds_bytes: int) -> str:
        """A target without the swaps (``Target.has_lane_family``, the emulator's answer)."""
        return "" if target.has_lane_family("permlane_swap") else f"{target.name} has no {self.kind} instruction"

    def counts(self) -> dict[str, int]:
        return {self.kind: 1}

    def asm(self, p: int, target: Target) -> str:
        return f"v_{self.kind}_b32 {vregs(self.vdst, p)}, {vregs(self.src0, p)}"

    def reads(self) -> list[int]:
        return self.vdst + self.src0

    def writes(self) -> list[int]:
        return self.vdst + self.src0

    def run(self, machine, what: str) -> None:
        for vd, s0 in machine.pairs(self.vdst, self.src0, what):
            if vd == s0:
                raise PlanVerificationError(f"{what}: a permlane swap needs two different registers")
            machine.permlane_swap(self.kind, vd, s0)

    def emit(self, emitter, prepared, regs: dict[int, str], what: str) -> None:
        for vd, s0 in emitter.pairs(self.vdst, self.src0, what):
            regs[vd], regs[s0] = emitter.permlane_swap(self.kind, emitter.reg(regs, vd, what),
                                                       emitter.reg(regs, s0, what))
