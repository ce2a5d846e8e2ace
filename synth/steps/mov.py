"""The ``mov`` step: a per-lane register copy (renaming, ``v_mov_b32`` or a uniform ``v_perm_b32``; on
NVIDIA ``mov.b32`` or a uniform ``prmt.b32``), and the two byte-selector conventions."""

from __future__ import annotations

from dataclasses import dataclass

from linlayout import LayoutError
from linlayout.hw.targets import Target

from .base import PlanVerificationError, Step, byte_permute_error, ints, register, same_lengths, vregs

__all__ = ["MOV_KINDS", "Mov", "prmt_as_perm", "prmt_selector"]


def prmt_selector(perm_selector: int) -> int:
    """The ``prmt.b32 d, a, b, c`` selector ``c`` (nibble ``i`` = source byte of result byte ``i``,
    0-3 from ``a``, 4-7 from ``b``) picking with ``a = S1``, ``b = S0`` the bytes the
    ``v_perm_b32 D, S0, S1, sel`` selector ``perm_selector`` picks (byte code 0-3 = S1, 4-7 = S0);
    a constant byte code (8 and above: the planner's don't-care 0x0C) becomes source byte 0."""
    out = 0
    for i in range(4):
        code = (perm_selector >> (8 * i)) & 0xFF
        out |= (code if code < 8 else 0) << (4 * i)
    return out


def prmt_as_perm(selector: int) -> int:
    """The ``v_perm_b32`` selector (S0 = prmt's ``b``, S1 = its ``a``) picking the bytes the generic
    ``prmt`` selector ``selector`` picks; a sign-replicating nibble (bit 3) has no such selector."""
    out = 0
    for i in range(4):
        nib = (selector >> (4 * i)) & 0xF
        if nib & 8:
            raise LayoutError(f"prmt selector 0x{selector:04x}: a sign-replicating byte is not a byte copy")
        out |= nib << (8 * i)
    return out


#: The kinds of a ``mov`` step: a free renaming, AMD's ``v_mov_b32`` / ``v_perm_b32``, PTX's ``mov.b32`` / ``prmt.b32``.
MOV_KINDS = ("rename", "v_mov", "v_perm_b32", "mov", "prmt")


@register
@dataclass(frozen=True)
class Mov(Step):
    """Per lane ``dst[i] = src[i]``: a free renaming, a ``v_mov_b32``, or a ``v_perm_b32`` (NVIDIA:
    ``mov`` = ``mov.b32``, ``prmt`` = ``prmt.b32``).

    Certificate: ``{"op": "mov", "dst": [...], "src": [...]}`` (a renaming is a parallel copy
    of the listed slots; ``"kind"`` names a real instruction).  ``v_perm_b32 D, S0, S1, sel``:
    byte ``i`` of D is byte ``sel.byte[i]`` of the 64-bit value ``{S0, S1}`` (0..3 = S1,
    4..7 = S0, 12 = 0x00).  ``operands`` are the dword indices ``(S0, S1)`` and ``selector``
    the 32-bit selector (uniform), in the certificate's ``isa``.  ``prmt.b32 d, a, b, c``
    (generic mode): byte ``i`` of d is byte ``c[4i+2 : 4i]`` of ``{b, a}`` (0..3 = a, 4..7 = b;
    a set ``c[4i+3]`` replicates that byte's sign); ``operands`` are ``(a, b)`` and ``selector``
    is ``c``, in the ``isa`` as ``a``, ``b``, ``selector``, ``vdst``.  Slots of the destination
    dword that are not listed are don't-care.
    """

    dst: list[int]
    src: list[int]
    kind: str = "rename"  # MOV_KINDS
    operands: tuple[int, int] | None = None
    selector: int | None = None
    dst_dword: int | None = None
    op = "mov"
    cert_op = "mov"

    def renames(self) -> list[tuple[int, int]]:
        return list(zip(self.dst, self.src)) if self.kind == "rename" else []

    def to_cert(self, raw: bool = False) -> list[dict]:
        d = {"op": "mov", "dst": ints(self.dst), "src": ints(self.src)}
        if self.kind != "rename":
            d["kind"] = self.kind
        if self.kind == "v_perm_b32":
            d["isa"] = {"s0": int(self.operands[0]), "s1": int(self.operands[1]),
                        "selector": int(self.selector), "vdst": int(self.dst_dword)}
        elif self.kind == "prmt":
            d["isa"] = {"a": int(self.operands[0]), "b": int(self.operands[1]),
                        "selector": int(self.selector), "vdst": int(self.dst_dword)}
        return [d]

    @classmethod
    def from_cert(cls, items: list[dict], i: int) -> tuple[Step, int]:
        d = items[i]
        isa = d.get("isa", {})
        kind = d.get("kind", "rename")
        if kind not in MOV_KINDS:
            raise LayoutError(f"plan step {i} (mov): kind {kind!r} must be one of {', '.join(MOV_KINDS)}")
        dst, src = ints(d["dst"]), ints(d["src"])
        same_lengths(i, "mov", dst=dst, src=src)
        operands = {"v_perm_b32": ("s0", "s1"), "prmt": ("a", "b")}.get(kind)
        if not operands:
            return cls(dst=dst, src=src, kind=kind), i + 1
        return cls(dst=dst, src=src, kind=kind, operands=(int(isa[operands[0]]), int(isa[operands[1]])),
                   selector=int(isa["selector"]), dst_dword=int(isa["vdst"])), i + 1

    def plan_error(self, target: Target, element_bits: int, lds_bytes: int) -> str:
        """A move of another ISA (``mov``/``prmt`` where the target's lane instructions are not PTX's,
        ``v_mov``/``v_perm_b32`` where they are), or a byte permute whose registers are not those of
        its slots (``byte_permute_error``)."""
        ptx = "prmt" in target.lane_ops
        if self.kind in (("v_mov", "v_perm_b32") if ptx else ("mov", "prmt")):
            return f"{target.name} has no {self.kind} instruction"
        if self.operands is None:
            return ""
        return byte_permute_error(self.dst, self.src, self.dst_dword, self.operands, element_bits)

    def counts(self) -> dict[str, int]:
        if self.kind == "rename":
            return {}
        return {self.kind: 1}

    def asm(self, p: int, target: Target) -> str:
        if self.kind == "rename":
            pairs = ", ".join(f"{d}<-{s}" for d, s in zip(self.dst, self.src))
            return f"; rename slots {pairs}"
        if self.kind == "v_mov":
            return f"v_mov_b32 {vregs(self.dst, p)}, {vregs(self.src, p)}"
        if self.kind == "mov":
            return f"mov.b32 {vregs(self.dst, p)}, {vregs(self.src, p)}"
        if self.kind == "prmt":
            return f"prmt.b32 v{self.dst_dword}, v{self.operands[0]}, v{self.operands[1]}, 0x{self.selector:04x}"
        return (f"v_perm_b32 v{self.dst_dword}, v{self.operands[0]}, v{self.operands[1]}, "
                f"0x{self.selector:08x}")

    def reads(self) -> list[int]:
        return self.src

    def writes(self) -> list[int]:
        return self.dst

    @property
    def perm_selectors(self) -> tuple:
        """The v_perm_b32 selectors the step applies, a prmt's as its v_perm_b32 equivalent (none unless
        it is one)."""
        if self.kind == "prmt":
            return (prmt_as_perm(self.selector),)
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
        if self.kind == "prmt":
            a, b = self.operands
            machine.prmt(self.dst_dword, self.operands, self.selector)
            machine.check_perm_copies(self.dst, self.src, self.dst_dword, (b, a), prmt_as_perm(self.selector), what,
                                      constants=False)
            return
        if self.kind not in ("rename", "v_mov", "mov"):
            raise LayoutError(f"{what}: unknown mov kind {self.kind!r}")
        pairs = machine.pairs(self.dst, self.src, what)
        if self.kind == "rename":  # bookkeeping of values (parallel copy of the listed elements)
            machine.rename(self.dst, self.src)
            return
        # a register step of 64-bit elements runs once per dword half: one slot, two v_mov_b32
        if len(pairs) != machine.dwords_per_slot or (machine.dwords_per_slot == 2 and len(self.dst) != 1):
            raise PlanVerificationError(f"{what}: one {self.kind} moves exactly one register (one slot per half "
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
        if self.kind == "prmt":  # operands (a, b), the generic-mode selector
            regs[self.dst_dword] = emitter.prmt(regs, self.operands, self.selector, what)
            return
        if self.kind not in ("rename", "v_mov", "mov"):
            raise LayoutError(f"{what}: unknown mov kind {self.kind!r}")
        emitter.copy(regs, emitter.pairs(self.dst, self.src, what), what)  # SSA renaming: no instruction
