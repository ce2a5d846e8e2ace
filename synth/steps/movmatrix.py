"""The NVIDIA ``movmatrix`` step: the transpose of an 8x8 matrix of 16-bit halves held one register per lane."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linlayout import LayoutError
from linlayout.hw.targets import Target

from .base import PlanVerificationError, Step, ints, lane_table, register, table, vregs

__all__ = ["Movmatrix", "movmatrix_half_sources"]


def movmatrix_half_sources() -> tuple[np.ndarray, np.ndarray]:
    """``(src_lane, src_half)`` each ``[2, 32]``: half ``h`` of the result in lane ``t`` is half
    ``src_half[h, t]`` of the operand in lane ``src_lane[h, t]`` (the class docstring; the planner's
    formula)."""
    t = np.arange(32)
    h = np.arange(2)[:, None]
    return 4 * (2 * (t & 3) + h) + (t >> 3), np.broadcast_to((t >> 2) & 1, (2, 32)).copy()


@register
@dataclass(frozen=True)
class Movmatrix(Step):
    """``movmatrix.sync.aligned.m8n8.trans.b16 d, a`` (sm_75+): register ``a`` holds an 8x8 matrix of
    16-bit halves in the plain ``ldmatrix`` fragment (lane ``u`` half ``h``: row ``u >> 2``, column
    ``2 (u & 3) + h``); ``d`` gets its transpose in the same fragment: half ``h`` of lane ``t`` is half
    ``(t >> 2) & 1`` of lane ``4 (2 (t & 3) + h) + (t >> 3)``.  ``dst``/``src``: one register's slots
    each (``p = 32 / element_bits`` of 8- or 16-bit elements, which ride in the halves whole).

    Certificate: ``{"op": "movmatrix", "dst": [...], "src": [...], "src_lane": [T_0, ...],
    "src_slot": [S_0, ...]}``: slot ``dst[j]`` of lane ``l`` receives slot ``S_j[l]`` of lane
    ``T_j[l]`` of its warp (tables of 32; they follow from the instruction, and a certificate whose
    tables differ is refused).
    """

    dst: list[int]
    src: list[int]
    op = "movmatrix"
    cert_op = "movmatrix"
    across_lanes = True
    cell_bytes = 2  # the 16-bit halves move whole

    def tables(self) -> tuple[np.ndarray, np.ndarray]:
        """``(src_lane, src_slot)`` ``[len(dst), 32]`` of the certificate."""
        per_half = len(self.dst) // 2
        lane, half = movmatrix_half_sources()
        j = np.arange(len(self.dst))
        h, k = j // per_half, j % per_half
        src = np.asarray(self.src, dtype=np.int64)
        return lane[h], src[half[h] * per_half + k[:, None]]

    def shape_error(self) -> str:
        """Why the slot lists are not one register of 8- or 16-bit elements each ("" when they are)."""
        if len(self.dst) != len(self.src) or len(self.dst) not in (2, 4):
            return (f"movmatrix moves one register of 16-bit halves: {len(self.src)} source and {len(self.dst)} "
                    "destination slots (2 of 16-bit or 4 of 8-bit elements each)")
        return ""

    def to_cert(self, raw: bool = False) -> list[dict]:
        lane, slot = self.tables()
        return [{"op": "movmatrix", "dst": ints(self.dst), "src": ints(self.src),
                 "src_lane": [table(raw, x) for x in lane], "src_slot": [table(raw, x) for x in slot]}]

    @classmethod
    def from_cert(cls, items: list[dict], i: int) -> tuple[Step, int]:
        d = items[i]
        step = cls(dst=ints(d["dst"]), src=ints(d["src"]))
        error = step.shape_error()
        if error:
            raise LayoutError(f"plan step {i} (movmatrix): {error}")
        lane, slot = step.tables()
        given = [lane_table(d["src_lane"], "src_lane"), lane_table(d["src_slot"], "src_slot")]
        if any(g.shape != w.shape or (g != w).any() for g, w in zip(given, (lane, slot))):
            raise LayoutError(f"plan step {i} (movmatrix): src_lane / src_slot are not the lanes and slots "
                              "movmatrix reads (docs/contract.md section 4)")
        return step, i + 1

    def counts(self) -> dict[str, int]:
        return {"movmatrix": 1}

    @property
    def crossbar(self) -> bool:  # moves data between lanes, like shfl.sync
        return True

    def asm(self, p: int, target: Target) -> str:
        return f"movmatrix.sync.aligned.m8n8.trans.b16 {vregs(self.dst, p)}, {vregs(self.src, p)}"

    def reads(self) -> list[int]:
        return self.src

    def writes(self) -> list[int]:
        return self.dst

    def run(self, machine, what: str) -> None:
        error = self.shape_error()
        if error:
            raise PlanVerificationError(f"{what}: {error}")
        ((d, s),) = machine.pairs(self.dst, self.src, what)
        machine.movmatrix(d, s)

    def emit(self, emitter, prepared, regs: dict[int, str], what: str) -> None:
        ((d, s),) = emitter.pairs(self.dst, self.src, what)
        regs[d] = emitter.movmatrix(emitter.reg(regs, s, what))
