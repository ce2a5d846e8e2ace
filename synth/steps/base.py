"""The plan step protocol, the certificate parse registry and the slot-to-register pairing rule.

Slots and registers (docs/contract.md section 4).  With ``element_bits``-bit elements,
``p = max(1, 32 // element_bits)`` consecutive slots share one 32-bit VGPR (*dword*): slot
``s`` is element ``s % p`` of dword ``s // p`` (little endian: bytes
``(s % p) * element_bytes ..``).  A 64-bit slot ``s`` spans the two dwords ``2s, 2s+1``.

A step is one instruction (or a free renaming).  Its class, one per module of this package,
owns everything the step means: its certificate items (``to_cert`` / ``from_cert``), its
instruction counts and the parts of the cost model that depend on the step alone
(``add_to_ds_chain``, ``note_setup``, ``price``: the caller in linlayout.synth.cost passes
the accumulator whose primitives the step calls), its element-level semantics (the class
docstring), its run on the emulator (``run(machine, what)``: primitives of the emulator's
machine, which owns the ISA semantics) and its MLIR (``prepare(emitter, what)`` in the
prologue, ``emit(emitter, prepared, regs, what)`` in the counted region: primitives of
linlayout.lowering's PlanEmitter, which owns the MLIR syntax).  So the layers stay one way:
this package imports neither the emulator nor lowering.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np

from linlayout import LayoutError
from linlayout.hw.targets import Target

__all__ = ["PlanVerificationError", "Step", "dword_pairs", "dwords_per_slot", "known_ops", "register",
           "slot_dwords", "slots_per_dword", "step_classes", "step_from_json"]


class PlanVerificationError(RuntimeError):
    """A plan did not move every element where it must go, or a step is not the instruction it
    claims (an internal bug when the planner made the plan)."""


def slots_per_dword(element_bits: int) -> int:
    """Elements packed in one 32-bit VGPR (1 for 32- and 64-bit elements)."""
    return max(1, 32 // element_bits)


def dwords_per_slot(element_bits: int) -> int:
    """32-bit VGPRs one element occupies (2 for 64-bit elements, else 1)."""
    return 2 if element_bits == 64 else 1


def slot_dwords(slot: int, p: int, dps: int) -> list[tuple[int, int, int]]:
    """``(dword, first byte, bytes)`` pieces of one slot (``p`` slots per dword, ``dps`` dwords per
    slot; a 64-bit slot is two whole dwords)."""
    if dps == 2:
        return [(2 * slot, 0, 4), (2 * slot + 1, 0, 4)]
    element_bytes = 4 // p
    return [(slot // p, (slot % p) * element_bytes, element_bytes)]


def dword_pairs(dst: Sequence[int], src: Sequence[int], p: int, dps: int, what: str) -> list[tuple[int, int]]:
    """``(dst dword, src dword)`` of a register step, in order of first appearance: THE pairing rule.

    A register instruction writes whole 32-bit registers from whole registers, so the slot
    lists of a register step pair ``dst[i]`` with ``src[i]`` such that (1) a slot keeps its
    place in its dword (``dst[i] % p == src[i] % p``), (2) every dst dword comes from one src
    dword, and (3) every dst dword is listed whole (all ``p`` of its slots).  64-bit slots pair
    their two dword halves in order.  A step breaking the rule is a malformed plan: LayoutError.
    """
    if len(dst) != len(src):
        raise LayoutError(f"{what}: {len(dst)} destination slots but {len(src)} source slots")
    pairs: dict[int, int] = {}
    if dps == 2:  # a 64-bit slot is the dwords 2 slot, 2 slot + 1 (slot_dwords)
        for d, s in zip(dst, src):
            for h in (0, 1):
                if pairs.setdefault(2 * d + h, 2 * s + h) != 2 * s + h:
                    raise LayoutError(f"{what}: register v{2 * d + h} would come from two registers")
        return list(pairs.items())
    if p == 1:  # a slot is a whole dword: only (2) to check
        for d, s in zip(dst, src):
            if pairs.setdefault(d, s) != s:
                raise LayoutError(f"{what}: register v{d} would come from two registers")
        return list(pairs.items())
    for d, s in zip(dst, src):
        dd, k = divmod(d, p)
        sd, sk = divmod(s, p)
        if k != sk:
            raise LayoutError(f"{what}: slot {s} -> {d} changes the element's place in its register")
        if pairs.setdefault(dd, sd) != sd:
            raise LayoutError(f"{what}: register v{dd} would come from two registers")
    if len(set(dst)) != p * len(pairs):  # the listed slots do not fill their dwords: name the first one
        covered: dict[int, int] = {}  # dst dword -> bit mask of its slots listed
        for d in dst:
            covered[d // p] = covered.get(d // p, 0) | (1 << (d % p))
        dd, got = next((dd, got) for dd, got in covered.items() if got != (1 << p) - 1)
        slots = [k for k in range(p) if (got >> k) & 1]
        raise LayoutError(f"{what}: register v{dd} is written in part (slots {slots} of {p}); "
                          "register steps move whole 32-bit registers")
    return list(pairs.items())


def byte_permute_error(dst: Sequence[int], src: Sequence[int], dst_dword: int, operands: Sequence[int],
                       element_bits: int) -> str:
    """Why the registers a byte permute (``v_perm_b32`` / ``prmt.b32``, uniform or per-lane selector)
    names are not those of its slots ("" when they are): the dword it writes holds every ``dst``
    slot, and its two operand dwords are the dwords of its ``src`` slots (``slot_dwords``)."""
    p, dps = slots_per_dword(element_bits), dwords_per_slot(element_bits)
    written = sorted({d for s in dst for d, _, _ in slot_dwords(s, p, dps)})
    read = sorted({d for s in src for d, _, _ in slot_dwords(s, p, dps)})
    if written != [dst_dword]:
        return f"it writes v{dst_dword} but its destination slots are in {', '.join(f'v{d}' for d in written)}"
    if sorted(set(operands)) != read:
        return (f"its operands are {', '.join(f'v{d}' for d in operands)} but its source slots are in "
                f"{', '.join(f'v{d}' for d in read)}")
    return ""


# ---------------------------------------------------------------------- certificate helpers
def ints(xs: Iterable) -> list[int]:
    return [int(x) for x in xs]


def same_lengths(i: int, op: str, **lists: Sequence[int]) -> None:
    """The slot lists of certificate item ``i`` pair element for element: ``LayoutError`` naming them
    when they are not equally long, or empty."""
    lengths = {k: len(v) for k, v in lists.items()}
    if len(set(lengths.values())) != 1 or not next(iter(lengths.values())):
        raise LayoutError(f"plan step {i} ({op}): the slot lists {', '.join(lengths)} must be equally long and not "
                          f"empty, got {', '.join(f'{k} {n}' for k, n in lengths.items())}")


def lane_table(t: Any, what: str) -> np.ndarray:
    """A per-lane table (``[lanes]`` or ``[warps][lanes]``, lanes the wave size) as an int64 array."""
    try:
        a = np.asarray(t, dtype=np.int64)
    except (TypeError, ValueError):
        raise LayoutError(f"{what} must be a list of integers per lane") from None
    if a.ndim not in (1, 2):
        raise LayoutError(f"{what} must be one list per wave or one list per warp")
    return a


def table(raw: bool, a: Any) -> Any:
    """A per-lane table for a certificate: a list, or the numpy array when ``raw``."""
    return np.asarray(a) if raw else np.asarray(a).tolist()


def vregs(slots: Sequence[int], p: int) -> str:
    """Pseudo-asm name of the VGPRs holding ``slots`` (whole dwords)."""
    if not slots:
        return "-"
    d = sorted({s // p for s in slots})
    if len(d) == 1:
        return f"v{d[0]}"
    if d == list(range(d[0], d[-1] + 1)):
        return f"v[{d[0]}:{d[-1]}]"
    return "v{" + ",".join(str(x) for x in d) + "}"


def mask_name(cond: np.ndarray) -> str:
    """Pseudo-asm name of a lane mask (warp 0's), as the 64-bit SGPR pair value."""
    c = np.asarray(cond).reshape(-1, np.asarray(cond).shape[-1])[0]
    v = int(sum(int(x) << i for i, x in enumerate(c)))
    return f"s[0x{v:016x}]"


# ---------------------------------------------------------------------- the protocol
class Step:
    """One instruction (or a free renaming); subclasses are frozen dataclasses registered with
    ``register`` (never changed once made: a plan's counts and hazard waits are kept per list of
    step objects).

    ``op`` names the step in messages; ``cert_op`` is the op of its first certificate item;
    ``fused_forms`` the ``fused`` names that single it out among the classes of one ``cert_op``
    (``claims``); ``form_on_first_item``: its first item carries that name (else only the later
    items of a several-item instruction carry ``fused``, checked by ``from_cert``).  ``lds``: an LDS
    access (``store`` tells which way).
    """

    op = ""
    cert_op = ""
    fused_forms: tuple[str, ...] = ()
    form_on_first_item = False
    lds = False
    store = False
    barrier = False
    crossbar = False  # a DS crossbar move (ds_swizzle, ds_bpermute): one level of DS latency
    across_lanes = False  # moves data between lanes of a wave without LDS (a plan with one is a "lanes" plan)
    fused_select = False  # one instruction the ISA classifier counts under v_cndmask as well
    renaming = False  # a free renaming of slots (no instruction)
    cell_bytes = 4  # the widest byte groups (aligned in a dword) a register step keeps together (movmatrix: 2)
    perm_selectors: tuple = ()  # the v_perm_b32 selectors the step applies
    warp_tables: tuple[str, ...] = ()  # the fields holding one value per warp (a certificate checks their length)

    # ------------------------------------------------------------ certificate
    def to_cert(self, raw: bool = False) -> list[dict]:
        """Element-level certificate items (one, or more for a fused instruction); ``raw`` keeps
        per-lane tables as numpy arrays (for in-process checking)."""
        raise NotImplementedError

    @classmethod
    def claims(cls, items: list[dict], i: int) -> bool:
        """Is ``items[i]`` (an item of op ``cert_op``) the start of this class's certificate?"""
        return True

    @classmethod
    def from_cert(cls, items: list[dict], i: int) -> tuple["Step", int]:
        """The step whose certificate starts at ``items[i]``, and the index after its items."""
        raise NotImplementedError

    def plan_error(self, target: Target, element_bits: int, lds_bytes: int) -> str:
        """Why this step cannot be an instruction of a plan for ``target`` moving ``element_bits``-bit
        elements in ``lds_bytes`` bytes of LDS, as far as the step alone tells ("" when it can): what
        ``Plan.from_certificate`` refuses when it reads a certificate, before a run, its price or its
        emission would meet it."""
        return ""

    # ------------------------------------------------------------ counts and text
    def counts(self) -> dict[str, int]:
        """Instructions by kind, per dword (64-bit elements double register steps later)."""
        return {}

    def register_step(self) -> bool:
        """True for VGPR-to-VGPR steps whose count doubles for 64-bit elements."""
        return True

    def asm(self, p: int, target: Target) -> str:
        """The step as one line of pseudo-assembly in ``target``'s instruction names (``p`` slots per
        32-bit register)."""
        raise NotImplementedError

    # ------------------------------------------------------------ slots
    def reads(self) -> list[int]:
        """The slots whose values the step reads."""
        return []

    def writes(self) -> list[int]:
        """The slots the step writes."""
        return []

    def named_slots(self) -> list[int]:
        """Every slot the step names (its certificate's too): the registers a run must have."""
        return self.reads() + self.writes()

    # ------------------------------------------------------------ cost (linlayout.synth.cost)
    def wide_store_tuples(self) -> list[list[int]]:
        """The VGPR tuples (slot lists) of an 8- or 16-byte LDS store (``cost.tuple_copies``)."""
        return []

    def indexed_tuples(self, element_bits: int) -> list[list[int]]:
        """The VGPR tuples (dword lists, in order) the reads of a register at a uniform index take
        (``cost.movrels_copies``)."""
        return []

    def renames(self) -> list[tuple[int, int]]:
        """``(dst, src)`` slot pairs of a free renaming (no instruction: the value keeps its VGPR)."""
        return []

    def load_tuple(self) -> list[int]:
        """The VGPR tuple (slot list, in VGPR order) an LDS load of at least a dword writes (``cost.tuple_copies``)."""
        return []

    def add_to_ds_chain(self, chain) -> None:
        """Extend ``cost.ds_depth``'s chain of dependent DS instructions by this step."""
        chain.register_step(self.reads(), self.writes(), self.crossbar)

    def note_setup(self, setup) -> None:
        """Tell ``cost.estimate_overhead``'s tally the setup values this step needs."""

    def price(self, pricer) -> None:
        """Add this step's cycles to ``cost.plan_cost``'s pricer."""
        pricer.issue(self.counts())

    # ------------------------------------------------------------ emulator and emitter
    def run(self, machine, what: str) -> None:
        """Execute the instruction on the emulator's machine (linlayout.synth.emulator)."""
        raise NotImplementedError

    def prepare(self, emitter, what: str) -> Any:
        """Emit the per-lane setup values of the step in the prologue (PlanEmitter); returns them."""
        return None

    def emit(self, emitter, prepared: Any, regs: dict[int, str], what: str) -> None:
        """Emit the instruction's MLIR on ``regs`` (dword -> i32 value, updated in place)."""
        raise NotImplementedError


# ---------------------------------------------------------------------- registry
_BY_OP: dict[str, list[type[Step]]] = {}


def register(step_class: type[Step]) -> type[Step]:
    """Class decorator: ``step_from_json`` reads the items of op ``step_class.cert_op`` with
    ``step_class`` (a class with ``fused_forms`` is asked first, the plain class of the op last).
    The class must be a frozen dataclass (``Step``: steps never change once made)."""
    params = getattr(step_class, "__dataclass_params__", None)
    if params is None or not params.frozen:
        raise TypeError(f"step class {step_class.__name__} must be a frozen dataclass")
    classes = _BY_OP.setdefault(step_class.cert_op, [])
    if step_class.fused_forms:
        classes.insert(0, step_class)
    else:
        if any(not c.fused_forms for c in classes):
            raise TypeError(f"two plain step classes for the certificate op {step_class.cert_op!r}")
        classes.append(step_class)
    return step_class


def known_ops() -> tuple[str, ...]:
    """The certificate ops ``step_from_json`` reads."""
    return tuple(_BY_OP)


def step_classes() -> tuple[type[Step], ...]:
    """Every registered step class."""
    return tuple(c for classes in _BY_OP.values() for c in classes)


def step_from_json(items: list[dict], i: int) -> tuple[Step, int]:
    """Parse the certificate step at ``items[i]`` (more items for a fused instruction); returns (step, next i).

    An item carrying ``fused`` is a later item of the instruction the items before it start (the
    second access of a ``ds_read2``/``ds_write2``, an element of a transpose load, the select of a
    fused DPP move), named by that instruction's name; it never starts a step, unless its class
    names its form there (``Step.form_on_first_item``: a ``v_perm_b32``/``prmt`` select).  So
    ``LayoutError`` for a ``fused`` item here that is not such a select: it is the first item, or
    follows an item of another op or an instruction that takes no further item; and for an ``isa``
    that is not an object or a ``kind`` that is not a string."""
    d = items[i]
    if not isinstance(d, dict) or "op" not in d:
        raise LayoutError(f"plan step {i} is not an object with an 'op'")
    op = d["op"]
    classes = _BY_OP.get(op)
    if classes is None:
        raise LayoutError(f"plan step {i}: unknown op {op!r}")
    if not isinstance(d.get("isa", {}), dict):
        raise LayoutError(f"plan step {i} ({op}): 'isa' must be an object of the instruction's parameters, "
                          f"got {d['isa']!r}")
    if not isinstance(d.get("kind", ""), str):
        raise LayoutError(f"plan step {i} ({op}): 'kind' must be an instruction name, got {d['kind']!r}")
    try:
        cls = next(c for c in classes if c.claims(items, i))
        if "fused" in d and not cls.form_on_first_item:
            where = "it is the first item" if i == 0 else f"the {items[i - 1]['op']} at item {i - 1} takes no " \
                                                         f"fused {op} after it"
            raise LayoutError(f"plan step {i} ({op}) has 'fused': {d['fused']!r} but is part of no instruction "
                              f"before it ({where})")
        return cls.from_cert(items, i)
    except KeyError as e:
        raise LayoutError(f"plan step {i} ({op}) lacks the key {e.args[0]!r}") from None
