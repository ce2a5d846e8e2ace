"""The ``barrier`` step: ``s_barrier`` / ``bar.sync`` (workgroup scope) or ``bar.warp.sync`` (warp scope)."""

from __future__ import annotations

from dataclasses import dataclass

from linlayout import LayoutError
from linlayout.hw.targets import Target

from .base import Step, register

__all__ = ["BARRIER_SCOPES", "Barrier"]

#: Barrier scope -> the instruction kind it counts as (``Plan.counts``).
BARRIER_SCOPES = {"workgroup": "s_barrier", "warp": "bar.warp.sync"}


@register
@dataclass(frozen=True)
class Barrier(Step):
    """A barrier of ``scope``:

    * ``"workgroup"``: ``s_barrier`` (AMD) / ``bar.sync`` (NVIDIA): every warp reaches it before
      any continues, so LDS writes before it are seen by every lane's reads after it, and reads
      before it are done before any write after it.  Certificate: ``{"op": "barrier"}``.
    * ``"warp"``: ``bar.warp.sync`` (``__syncwarp()``, NVIDIA): the same for the lanes of one warp
      only, for targets whose lanes are not in lockstep (``Target.lockstep_lanes`` False).
      Certificate: ``{"op": "barrier", "scope": "warp"}``.
    """

    scope: str = "workgroup"

    op = "barrier"
    cert_op = "barrier"
    barrier = True

    def __post_init__(self) -> None:
        if not isinstance(self.scope, str) or self.scope not in BARRIER_SCOPES:
            raise LayoutError(f"barrier scope {self.scope!r} must be one of {', '.join(BARRIER_SCOPES)}")

    def to_cert(self, raw: bool = False) -> list[dict]:
        return [{"op": "barrier"} if self.scope == "workgroup" else {"op": "barrier", "scope": self.scope}]

    @classmethod
    def from_cert(cls, items: list[dict], i: int) -> tuple[Step, int]:
        return cls(scope=items[i].get("scope", "workgroup")), i + 1

    def counts(self) -> dict[str, int]:
        return {BARRIER_SCOPES[self.scope]: 1}

    def register_step(self) -> bool:
        return False

    def price(self, pricer) -> None:
        """One scalar instruction, whatever the element size (not one per dword half)."""
        pricer.issue(self.counts(), per_dword_half=False)

    def asm(self, p: int, target: Target) -> str:
        """``s_barrier`` (AMD) or ``bar.sync 0`` (NVIDIA) for a workgroup, ``bar.warp.sync -1`` for a warp."""
        if self.scope == "warp":
            return "bar.warp.sync -1"
        return "bar.sync 0" if target.family == "nvidia" else "s_barrier"

    def run(self, machine, what: str) -> None:
        machine.barrier(self.scope)

    def emit(self, emitter, prepared, regs: dict[int, str], what: str) -> None:
        if self.scope == "warp":
            emitter.warp_barrier()
        else:
            emitter.barrier()
