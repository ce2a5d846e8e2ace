"""The NVIDIA matrix shared-memory steps ``ldmatrix`` and ``stmatrix`` (``.x1/.x2/.x4``, plain or ``.trans``).

One instruction moves ``num`` 8x8 matrices of 16-bit halves between shared memory and one 32-bit
register per matrix in every lane (docs/nvidia_facts.md section 3): lane ``8m + r`` supplies the
16-byte aligned byte address ``A[8m + r]`` of row ``r`` of matrix ``m``.  Register ``m`` of lane
``t`` is, as *pieces* of consecutive bytes at one address each:

* plain: one 4-byte piece at ``A[8m + (t >> 2)] + 4 (t & 3)`` (halves ``h``: columns ``2 (t & 3) + h``);
* ``.trans``: two 2-byte pieces, half ``h`` at ``A[8m + 2 (t & 3) + h] + 2 (t >> 2)``.

Elements of 8, 16 or 32 bits ride in the halves as bytes do (``element_bits`` 32: plain only,
each register one element; 64-bit elements: never), so a step lists its registers' slots, ``p``
per register in register order, and each slot's element sits at its piece's address plus its
byte position in the piece.  These formulas are the planner's; the emulator runs the steps with
the oracle's (linlayout.synth.isa_lanes.matrix_row_bytes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from linlayout import LayoutError
from linlayout.hw.lds import misaligned_address
from linlayout.hw.targets import Target, get_target

from .base import PlanVerificationError, Step, ints, lane_table, register, table, vregs

__all__ = ["MATRIX_COUNTS", "MatrixLoad", "MatrixStore", "matrix_name", "matrix_pieces"]

MATRIX_COUNTS = (1, 2, 4)  # .x1, .x2, .x4
ROW_BYTES = 16  # one row of 8 halves
WARP_LANES = 32  # the lanes of a warp, whose registers the matrices fill


def matrix_name(store: bool, num: int, trans: bool) -> str:
    """The bank-model op name (linlayout.hw.lds) and instruction form: ``ldmatrix.x4.trans`` ..."""
    return f"{'st' if store else 'ld'}matrix.x{num}{'.trans' if trans else ''}"


def matrix_pieces(lane_addr, num: int, trans: bool) -> list[tuple[int, int, np.ndarray]]:
    """``(register, first byte, address)`` of every piece (module docstring), registers in order:
    ``address`` ``[..., 32]`` the byte address each lane's piece has (``lane_addr`` ``[32]`` or
    ``[warps, 32]``, lanes ``8m + r`` the row addresses)."""
    a = np.asarray(lane_addr, dtype=np.int64)
    t = np.arange(32)
    out = []
    for m in range(num):
        if trans:
            for h in (0, 1):
                out.append((m, 2 * h, a[..., 8 * m + 2 * (t & 3) + h] + 2 * (t >> 2)))
        else:
            out.append((m, 0, a[..., 8 * m + (t >> 2)] + 4 * (t & 3)))
    return out


@dataclass(frozen=True)
class _MatrixAccess(Step):
    """Common part of ``ldmatrix`` / ``stmatrix``: ``addr`` ``[warps][lanes]`` (or ``[lanes]``) the lane
    addresses, ``num`` matrices, ``trans``; ``slots`` (the subclass's ``dst`` / ``src``): ``p`` per
    register, registers ``0 .. num - 1`` in order."""

    addr: np.ndarray
    num: int = 1
    trans: bool = False
    lds = True

    @property
    def slots(self) -> list[int]:
        raise NotImplementedError

    @property
    def name(self) -> str:
        return matrix_name(self.store, self.num, self.trans)

    @property
    def width_bytes(self) -> int:
        """Bytes of one piece (what one lane moves at one address)."""
        return 2 if self.trans else 4

    def register_step(self) -> bool:
        return False

    def counts(self) -> dict[str, int]:
        return {"stmatrix" if self.store else "ldmatrix": 1}

    def accesses(self) -> list[tuple[list[int], np.ndarray]]:
        """``(slots, address)`` of every piece: the slots of the piece's bytes and its per-lane address."""
        per_register = len(self.slots) // self.num
        out = []
        for m, first, a in matrix_pieces(self.addr, self.num, self.trans):
            regs = self.slots[m * per_register:(m + 1) * per_register]
            k = len(regs) * first // 4  # slots before the piece in its register
            out.append((regs[k:k + len(regs) * self.width_bytes // 4], a))
        return out

    def matrix_error(self, element_bits: int) -> str:
        """Why this step cannot move ``element_bits``-bit elements ("" when it can)."""
        if self.num not in MATRIX_COUNTS:
            return f"{self.name.split('.')[0]} moves 1, 2 or 4 matrices, not {self.num}"
        if element_bits not in (8, 16, 32) or (self.trans and element_bits == 32):
            return (f"{self.name} moves 16-bit halves: no {element_bits}-bit elements"
                    + (" (.trans splits a 32-bit element)" if element_bits == 32 else ""))
        per_register = 32 // element_bits
        if len(self.slots) != self.num * per_register:
            return f"{len(self.slots)} slots listed for {self.num} registers of {per_register}"
        return ""

    def plan_error(self, target: Target, element_bits: int, lds_bytes: int) -> str:
        """An instruction ``target`` lacks, a step that cannot move these elements (``matrix_error``), a
        row address (lanes ``0 .. 8 num - 1``) that is not a multiple of ROW_BYTES (the emulator's and
        the bank model's rule, ``linlayout.hw.lds.access_alignment``) or a row outside ``[0, lds_bytes)``."""
        if not target.has_matrix_access(self.store):
            return f"{target.name} has no {self.name.split('.')[0]} instruction"
        error = self.matrix_error(element_bits)
        if error:
            return error
        rows = np.asarray(self.addr)[..., :8 * self.num]
        misaligned = misaligned_address(rows, ROW_BYTES)
        if misaligned:
            return f"a row address: {misaligned}"
        low, high = int(rows.min()), int(rows.max()) + ROW_BYTES
        if low < 0 or high > lds_bytes:
            return f"its rows are bytes {low} to {high - 1}, outside the plan's {lds_bytes} (lds_bytes)"
        return ""

    def offset_limit(self) -> int:
        return 1 << 16

    def offset_unit(self) -> int:
        return 1

    def offset_reaches(self, d: int) -> bool:
        return 0 <= d < self.offset_limit()

    def pair_error(self) -> str:
        return ""

    def note_setup(self, setup) -> None:
        setup.lds_access(self)

    def price(self, pricer) -> None:
        pricer.matrix_access(self.name, self.addr)

    def prepare(self, emitter, what: str):
        return emitter.lds_address(self, what)

    def _check(self, machine, what: str) -> None:
        """The target must have the instruction (a LayoutError naming it), the step must be well formed."""
        if not get_target(machine.arch).has_matrix_access(self.store):
            raise LayoutError(f"{what}: {machine.arch} has no {self.name.split('.')[0]} instruction")
        error = self.matrix_error(8 * machine.element_bytes)
        if error:
            raise PlanVerificationError(f"{what}: {error}")

    def _cert(self, key: str, raw: bool) -> list[dict]:
        per_register = len(self.slots) // self.num
        element_bytes = 4 // per_register
        elem_addr = []
        for slots, a in self.accesses():
            elem_addr += [a + k * element_bytes for k in range(len(slots))]
        return [{"op": self.cert_op, key: ints(self.slots), "elem_addr": [table(raw, e) for e in elem_addr],
                 "isa": {"num": self.num, "trans": self.trans, "lane_addr": table(raw, self.addr)}}]

    @classmethod
    def _from(cls, items: list[dict], i: int, key: str) -> "_MatrixAccess":
        """The step of certificate item ``items[i]`` whose slots are under ``key``; LayoutError for a
        malformed ``isa`` or ``elem_addr`` that is not where the instruction moves the elements."""
        d = items[i]
        isa = d.get("isa", {})
        num = isa.get("num")
        if num not in MATRIX_COUNTS:
            raise LayoutError(f"plan step {i} ({d['op']}): isa.num must be 1, 2 or 4, not {num!r}")
        trans = isa.get("trans", False)
        if not isinstance(trans, bool):
            raise LayoutError(f"plan step {i} ({d['op']}): isa.trans must be true or false, not {trans!r}")
        slots = ints(d[key])
        if not slots or len(slots) % num or 32 % (len(slots) // num) or len(slots) // num > 4:
            raise LayoutError(f"plan step {i} ({d['op']}): {len(slots)} slots do not fill {num} registers")
        lane_addr = lane_table(isa["lane_addr"], "lane_addr")
        if np.shape(lane_addr)[-1] != WARP_LANES:
            raise LayoutError(f"plan step {i} ({d['op']}): lane_addr has {np.shape(lane_addr)[-1]} lanes; "
                              f"{d['op']} is an instruction of {WARP_LANES}-lane warps")
        step = cls(**{key: slots}, addr=lane_addr, num=int(num), trans=trans)
        given = d["elem_addr"]
        element_bytes = 4 * num // len(slots)
        want = [a + k * element_bytes for s, a in step.accesses() for k in range(len(s))]
        if (not isinstance(given, list) or len(given) != len(want)
                or any(np.asarray(g).shape != w.shape or (np.asarray(g) != w).any() for g, w in zip(given, want))):
            raise LayoutError(f"plan step {i} ({d['op']}): elem_addr is not where {step.name} moves the "
                              f"elements of lane_addr (docs/contract.md section 4)")
        return step


@register
@dataclass(frozen=True)
class MatrixLoad(_MatrixAccess):
    """``ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16``: lane ``l`` of warp ``w`` receives its
    slots ``dst`` (``p`` per register, ``num`` registers) from the pieces of the module docstring.

    Certificate: ``{"op": "ldmatrix", "dst": [...], "elem_addr": [E_0, ...], "isa": {"num": N,
    "trans": bool, "lane_addr": A}}``: slot ``dst[j]`` of lane ``l`` of warp ``w`` reads the element
    at byte ``E_j[w][l]``; ``A`` the lane addresses (``E`` follows from them).
    """

    dst: list[int] = field(default_factory=list)
    op = "ldmatrix"
    cert_op = "ldmatrix"

    @property
    def slots(self) -> list[int]:
        return self.dst

    def writes(self) -> list[int]:
        return self.dst

    def to_cert(self, raw: bool = False) -> list[dict]:
        return self._cert("dst", raw)

    @classmethod
    def from_cert(cls, items: list[dict], i: int) -> tuple[Step, int]:
        return cls._from(items, i, "dst"), i + 1

    def asm(self, p: int, target: Target) -> str:
        base = int(np.asarray(self.addr).reshape(-1)[0])
        return f"{self.name}.shared.b16 {vregs(self.dst, p)}, [a(lane0={base})]"

    def add_to_ds_chain(self, chain) -> None:
        chain.lds_load(self.writes())

    def run(self, machine, what: str) -> None:
        self._check(machine, what)
        machine.ldmatrix(self.dst, self.addr, self.num, self.trans, what)

    def emit(self, emitter, prepared, regs: dict[int, str], what: str) -> None:
        emitter.ldmatrix(self.dst, prepared, self.num, self.trans, regs, what)


@register
@dataclass(frozen=True)
class MatrixStore(_MatrixAccess):
    """``stmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16`` (sm_90): lane ``l`` of warp ``w`` stores its
    slots ``src`` (``p`` per register, ``num`` registers) at the pieces of the module docstring.

    Certificate: ``{"op": "stmatrix", "src": [...], "elem_addr": [E_0, ...], "isa": {"num": N,
    "trans": bool, "lane_addr": A}}``: slot ``src[j]`` of lane ``l`` of warp ``w`` goes to byte
    ``E_j[w][l]``.
    """

    src: list[int] = field(default_factory=list)
    op = "stmatrix"
    cert_op = "stmatrix"
    store = True

    @property
    def slots(self) -> list[int]:
        return self.src

    def reads(self) -> list[int]:
        return self.src

    def to_cert(self, raw: bool = False) -> list[dict]:
        return self._cert("src", raw)

    @classmethod
    def from_cert(cls, items: list[dict], i: int) -> tuple[Step, int]:
        return cls._from(items, i, "src"), i + 1

    def asm(self, p: int, target: Target) -> str:
        base = int(np.asarray(self.addr).reshape(-1)[0])
        return f"{self.name}.shared.b16 [a(lane0={base})], {vregs(self.src, p)}"

    def add_to_ds_chain(self, chain) -> None:
        chain.lds_store(self.reads())

    def run(self, machine, what: str) -> None:
        self._check(machine, what)
        machine.stmatrix(self.src, self.addr, self.num, self.trans, what)

    def emit(self, emitter, prepared, regs: dict[int, str], what: str) -> None:
        emitter.stmatrix(self.src, prepared, self.num, self.trans, regs, what)
