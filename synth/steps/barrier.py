"""The ``barrier`` step: ``s_barrier``."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Step, register

__all__ = ["Barrier"]


@register
@dataclass
class Barrier(Step):
    """``s_barrier``: every warp reaches it before any continues (LDS writes before it are seen by
    every warp's reads after it).  Certificate: ``{"op": "barrier"}``."""

    op = "barrier"
    cert_op = "barrier"
    barrier = True

    def to_cert(self, raw: bool = False) -> list[dict]:
        return [{"op": "barrier"}]

    @classmethod
    def from_cert(cls, items: list[dict], i: int) -> tuple[Step, int]:
        return cls(), i + 1

    def counts(self) -> dict[str, int]:
        return {"s_barrier": 1}

    def register_step(self) -> bool:
        return False

    def price(self, pricer) -> None:
        """One scalar instruction, whatever the element size (not one per dword half)."""
        pricer.issue(self.counts(), per_dword_half=False)

    def asm(self, p: int) -> str:
        return "s_barrier"

    def run(self, machine, what: str) -> None:
        machine.barrier()

    def emit(self, emitter, prepared, regs: dict[int, str], what: str) -> None:
        emitter.barrier()
