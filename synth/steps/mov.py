"""The ``mov`` step: a per-lane register copy (renaming, ``v_mov_b32`` or a uniform ``v_perm_b32``)."""

from __future__ import annotations

from dataclasses import dataclass

from linlayout import LayoutError

from .base import PlanVerificationError, Step, ints, register, vregs

__all__ = ["Mov"]


@register
@dataclass
class Mov(Step):
    """Per lane ``dst[i] = src[i]``: a free renaming, a ``v_mov_b32``, or a ``v_perm_b32``.

    Certificate: ``{"op": "mov", "dst": [...], "src": [...]}`` (a renaming is a parallel copy
    of the listed slots; ``"kind"`` names a real instruction).  ``v_perm_b32 D, S0, S1, sel``:
    byte ``i`` of D is byte ``sel.byte[i]`` of the 64-bit value ``{S0, S1}`` (0..3 = S1,
    4..7 = S0, 12 = 0x00).  ``operands`` are the dword indices ``(S0, S1)`` and ``selector``
    the 32-bit selector (uniform), in the certificate's ``isa``.  Slots of the destination
    dword that are not listed are don't-care.
    """

    dst: list[int]
    src: list[int]
    kind: str = "rename"  # rename | v_mov | v_perm_b32
    operands: tuple[int, int] | None = None
    selector: int | None = None
    dst_dword: int | None = None
    op = "mov"
    cert_op = "mov"

    def to_cert(self, raw: bool = False) -> list[dict]:
        d = {"op": "mov", "dst": ints(self.dst), "src": ints(self.src)}
        if self.kind != "rename":
            d["kind"] = self.kind
        if self.kind == "v_perm_b32":
            d["isa"] = {"s0": int(self.operands[0]), "s1": int(self.operands[1]),
                        "selector": int(self.selector), "vdst": int(self.dst_dword)}
        return [d]

    @classmethod
    def from_cert(cls, items: list[dict], i: int) -> tuple[Step, int]:
        d = items[i]
        isa = d.get("isa", {})
        kind = d.get("kind", "rename")
        return cls(dst=ints(d["dst"]), src=ints(d["src"]), kind=kind,
                   operands=(isa["s0"], isa["s1"]) if kind == "v_perm_b32" else None,
                   selector=isa.get("selector"), dst_dword=isa.get("vdst")), i + 1

    def counts(self) -> dict[str, int]:
        if self.kind == "rename":
            return {}
        return {self.kind: 1}

    def asm(self, p: int) -> str:
        if self.kind == "rename":
            pairs = ", ".join(f"{d}<-{s}" for d, s in zip(self.dst, self.src))
            return f"; rename slots {pairs}"
        if self.kind == "v_mov":
            return f"v_mov_b32 {vregs(self.dst, p)}, {vregs(self.src, p)}"
        return (f"v_perm_b32 v{self.dst_dword}, v{self.operands[0]}, v{self.operands[1]}, "
                f"0x{self.selector:08x}")

    def reads(self) -> list[int]:
        return self.src

    def writes(self) -> list[int]:
        return self.dst

    @property
    def perm_selectors(self) -> tuple:
        """The v_perm_b32 selectors the step applies (none unless it is one)."""
        return (self.selector,) if self.kind == "v_perm_b32" else ()

    @property
    def renaming(self) -> bool:
        return self.kind == "rename"

    def note_setup(self, setup) -> None:
        if self.kind == "v_perm_b32":
            setup.selector(self.selector)

    def run(self, machine, what: str) -> None:
        if self.kind == "v_perm_b32":
            machine.v_perm(self.dst_dword, self.operands, self.selector)
            machine.check_perm_copies(self.dst, self.src, self.dst_dword, self.operands, self.selector, what,
                                      constants=False)
            return
        if self.kind not in ("rename", "v_mov"):
            raise LayoutError(f"{what}: unknown mov kind {self.kind!r}")
        pairs = machine.pairs(self.dst, self.src, what)
        if self.kind == "rename":  # bookkeeping of values (parallel copy of the listed elements)
            machine.rename(self.dst, self.src)
            return
        # a register step of 64-bit elements runs once per dword half: one slot, two v_mov_b32
        if len(pairs) != machine.dwords_per_slot or (machine.dwords_per_slot == 2 and len(self.dst) != 1):
            raise PlanVerificationError(f"{what}: one v_mov_b32 moves exactly one register (one slot per half "
                                        f"for 64-bit elements)")
        for d, s in pairs:
            machine.copy(d, s)

    def prepare(self, emitter, what: str):
        if self.kind == "v_perm_b32":
            return emitter.scalar_constant(self.selector)
        return None

    def emit(self, emitter, prepared, regs: dict[int, str], what: str) -> None:
        if self.kind == "v_perm_b32":
            regs[self.dst_dword] = emitter.perm(regs, self.operands, prepared, what)
            return
        if self.kind not in ("rename", "v_mov"):
            raise LayoutError(f"{what}: unknown mov kind {self.kind!r}")
        emitter.copy(regs, emitter.pairs(self.dst, self.src, what), what)  # SSA renaming: no instruction
