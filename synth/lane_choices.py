"""Per-lane choices between two 32-bit constants: ``if_true`` in the lanes where a condition holds, ``if_false``
elsewhere (the per-lane selector register of a ``PermSelect`` step's ``v_perm_b32``).  This module says which form
a kernel's prologue computes a choice in (:func:`choice_form`) and which instructions a plan's choices take
together (:class:`ChoicePlan`: the ops and what they share, which linlayout.lowering.emit.lane_choices emits as
they are and whose count is the planner's estimate ``valu_lane_selector``, linlayout.synth.cost).

A condition is a 0/1 table ``cond[w][l]`` (``[warps, lanes]``, or ``[lanes]`` when the same in every warp).
The forms:

* ``"lanes"``: the condition is GF(2)-affine in the lane bits alone, the same in every warp (:func:`lane_bits`):
  ``cond(l) = cond(0) ^ XOR_{b in S} l_b``.  With ``A`` the value in lane 0 and ``B`` the other constant the value is
  ``A + (m_S(l) & K)``, ``K = B - A`` (mod 2**32), ``m_S`` the parity of the lane bits ``S`` sign-extended (0 or -1):
  a ``v_bfe_i32`` per distinct lane bit, a ``v_xor_b32`` between (``2|S| - 1`` VALU for the first ``S``; the sets
  share the bits' ``v_bfe_i32`` and the XOR of a common first part), one ``v_and_b32`` per distinct ``(S, K)`` and
  one ``v_add_u32`` per choice.  Where the ISA has ``v_bitop3_b32`` (``Target.has_bitop3``: gfx950, gfx1250) the
  compiler fuses each ``v_and_b32`` into the ``v_xor_b32`` that made its mask and drops that XOR where no other XOR
  reads it; where it has ``v_xor3_b32`` (``Target.has_xor3``: RDNA) it merges an XOR into the one XOR that reads
  it: one VALU fewer each (:meth:`ChoicePlan.merged_xors`).
* ``"uniform"``: the value is the same in all lanes of each wave (a constant, or one per warp):
  UNIFORM_CHOICE_VALU.
* ``"select"``: any other (not affine, or lane bits that differ between warps): ``v_cndmask_b32`` on the
  condition's lane mask (one per choice; the mask is a select condition, ``salu_vcc``) with one constant a literal
  and the other in a VGPR (SELECT_CHOICE_CONSTANT_VALU per distinct pair of constants) where a VOP3 takes a literal
  (``Target.vop3_literal``: RDNA, gfx1250); on gfx9 LLVM moves both constants into VGPRs (``v_mov_b32`` x2 +
  ``v_cndmask_b32``; SELECT_CHOICE_CONSTANT_VALU per distinct constant).

Choices with the same table are one value.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from linlayout import caches

__all__ = ["ChoiceOp", "ChoicePlan", "SELECT_CHOICE_CONSTANT_VALU", "UNIFORM_CHOICE_VALU", "choice_form",
           "choice_table", "lane_bits", "lane_mask_valu", "lanes_condition", "lanes_constants",
           "least_lanes_choice_valu", "warp_parity_bits"]

#: [I] VALU for a choice uniform in each wave: a ``v_mov_b32`` of the constant (or of the warp's value)
UNIFORM_CHOICE_VALU = 1
#: [I] VALU per constant of ``"select"`` choices that LLVM moves into a VGPR (a ``v_mov_b32``, shared between the
#: choices that read it): one per distinct pair where a VOP3 takes a literal (``Target.vop3_literal``: the
#: ``v_cndmask_b32`` takes the other), each distinct constant elsewhere (gfx9: both constants of a choice)
SELECT_CHOICE_CONSTANT_VALU = 1


def lane_bits(cond) -> tuple[int, ...] | None:
    """The lane bits ``S`` of a condition (``[lanes]``, or ``[warps, lanes]``; nonzero = true) with ``cond(l, w) =
    cond(0, 0) ^ XOR_{b in S} l_b`` in every warp, in increasing order, or None when there is no such ``S``.

    On the condition's lane mask ``m`` (bit ``l`` = lane ``l``), made ``cond(0) = 0`` by flipping every lane where
    lane 0 holds: ``S`` are the bits ``b`` with lane ``2**b`` set, and ``m`` must be their parity mask."""
    row = np.asarray(cond) != 0
    if row.ndim == 2:
        if not (row == row[:1]).all():
            return None
        row = row[0]
    lanes = row.size
    m = int.from_bytes(np.packbits(row, bitorder="little").tobytes(), "little")
    if m & 1:
        m ^= (1 << lanes) - 1
    bits = tuple(b for b in range(lanes.bit_length() - 1) if m >> (1 << b) & 1)
    return bits if m == _parity_lanes(sum(1 << b for b in bits), lanes) else None


@caches.memoize("synth.lane_choices.parity_lanes", table=True)
def _parity_lanes(mask: int, lanes: int) -> int:
    """The lanes ``l < lanes`` where ``l & mask`` has odd parity, as a lane mask (bit ``l`` = lane ``l``)."""
    return sum(1 << lane for lane in range(lanes) if (lane & mask).bit_count() & 1)


def choice_table(cond, if_false: int, if_true: int) -> np.ndarray:
    """The values of a choice: ``if_true`` where ``cond`` (``[lanes]`` or ``[warps, lanes]``) is nonzero, else
    ``if_false`` (int64, ``cond``'s shape, each as an unsigned 32-bit number)."""
    return np.where(np.asarray(cond) != 0, np.int64(if_true & 0xFFFFFFFF), np.int64(if_false & 0xFFFFFFFF))


def choice_form(table: np.ndarray) -> tuple[str, tuple[int, ...] | None]:
    """The form of the choice whose values are ``table`` (:func:`choice_table`): ``"uniform"``, ``"lanes"`` or
    ``"select"``, and for ``"lanes"`` the lane bits ``S``."""
    if (table == table[..., :1]).all():
        return "uniform", None
    bits = lane_bits(table != table.flat[0])
    return ("lanes", bits) if bits else ("select", None)


def lanes_constants(table: np.ndarray) -> tuple[int, int]:
    """``(A, K)`` of a ``"lanes"`` choice: the value in lane 0 and the other value less it, mod 2**32."""
    first = int(table.flat[0])
    other = int(table[table != first][0])
    return first, (other - first) & 0xFFFFFFFF


def warp_parity_bits(cond) -> int | None:
    """The warp bits ``S`` (two or more) whose parity is the condition ``cond`` (``[warps, lanes]``, nonzero =
    true): true in every lane of the warps ``w`` where ``popcount(w & S)`` is odd, false in every lane of the
    others.  None for any other condition, or one warp bit's (``S`` a single bit).  The lowering computes such
    a lane mask from the warp id's popcount (linlayout.lowering.emit.lane_values), ``cost.vcc_salu`` prices it so."""
    t = np.asarray(cond) != 0
    if t.ndim != 2 or t.shape[0] & (t.shape[0] - 1):
        return None
    whole = t.all(axis=1)
    if (whole != t.any(axis=1)).any():
        return None
    n = t.shape[0]
    bits = sum(1 << k for k in range(n.bit_length() - 1) if whole[1 << k])
    if not bits & (bits - 1):
        return None
    parity = np.array([bin(w & bits).count("1") % 2 == 1 for w in range(n)])
    return bits if (whole == parity).all() else None


def lanes_condition(cond) -> np.ndarray:
    """A condition (``[lanes]`` or ``[warps, lanes]``, nonzero = true) as bool, ``[lanes]`` when the same in every
    warp (one shape for one condition)."""
    t = np.asarray(cond) != 0
    return t[0] if t.ndim == 2 and (t.shape[0] == 1 or (t == t[:1]).all()) else t


# a choice's (table bytes, form, lane bits, A, K, values: the table of a "uniform" choice, the condition of a
# "select" one) by (condition bytes, shape and dtype as given, if_false, if_true): the planner counts the same
# choices of one layout pair in each of its candidate plans
_facts = caches.cache("synth.lane_choices.facts")


def _choice_facts(cond, if_false: int, if_true: int):
    lanes = lanes_condition(cond)
    table = choice_table(lanes, if_false, if_true)
    form, bits = choice_form(table)
    first, k = lanes_constants(table) if form == "lanes" else (0, 0)
    values = {"uniform": table, "select": lanes}.get(form)
    if values is not None:
        values.flags.writeable = False
    return table.tobytes(), form, bits, first, k, values


def lane_mask_valu(lane_bit_count: int) -> int:
    """VALU of a ``"lanes"`` choice's mask ``m_S`` on ``|S| = lane_bit_count`` lane bits: a ``v_bfe_i32`` per bit,
    a ``v_xor_b32`` between (shared by every choice on the same ``S``)."""
    return 2 * lane_bit_count - 1


def least_lanes_choice_valu(lane_bit_count: int, target) -> int:
    """The fewest VALU a ``"lanes"`` choice on ``lane_bit_count`` lane bits takes on ``target`` when no other choice
    shares its parts: its mask, one ``v_and_b32`` and one ``v_add_u32``, less the XORs the compiler merges
    (:meth:`ChoicePlan.merged_xors` on one chain of ``k = |S| - 1`` XORs: the last where ``target.has_bitop3``, then
    one of each pair of the others where ``target.has_xor3``)."""
    k = lane_bit_count - 1
    fused = int(k > 0 and target.has_bitop3)
    return lane_mask_valu(lane_bit_count) + 2 - fused - ((k - fused) // 2 if target.has_xor3 else 0)


class ChoiceOp(NamedTuple):
    """One setup instruction of a :class:`ChoicePlan` (an index into :attr:`ChoicePlan.ops` names its result).

    ``kind``: ``"sbit"`` (``v_bfe_i32`` of lane bit ``constant``: 0 or -1, hidden from the compiler by a copy
    that is no instruction),
    ``"xor"`` (``v_xor_b32`` of the two ``operands``), ``"and"`` (``v_and_b32`` of the operand with the literal
    ``constant``, ``K``), ``"add"`` (``v_add_u32`` of the operand and the literal ``constant``, ``A``),
    ``"uniform"`` (the wave-uniform ``table``, UNIFORM_CHOICE_VALU), ``"select"`` (``v_cndmask_b32`` on the
    condition ``table``, bool in :func:`lanes_condition`'s shape, between ``pair = (if_false, if_true)``)."""

    kind: str
    operands: tuple[int, ...] = ()
    constant: int = 0
    table: np.ndarray | None = None
    pair: tuple[int, int] = (0, 0)


class ChoicePlan:
    """The per-lane choices of one kernel's prologue as instructions (:attr:`ops`), told one at a time
    (:meth:`add`), each op made once and shared by every choice that reads it: ``m_S`` (its ``"sbit"`` ops and
    the ``"xor"`` between) by the ``"lanes"`` choices on the same ``S``, ``m_S & K`` by those with the same
    ``(S, K)``, a value by every choice with the same table.  The planner counts it (:attr:`valu`, the estimate
    ``valu_lane_selector``; :attr:`masks`, the lane-bit sets ``S``, each one chain ``v_bfe_i32 -> v_and_b32 ->
    v_add_u32`` of dependent VALU), the lowering (linlayout.lowering.emit.lane_choices) emits :attr:`ops` as
    they are.  ``valu`` also counts the ``v_mov_b32`` of the ``"select"`` choices' constants
    (SELECT_CHOICE_CONSTANT_VALU per distinct pair, per distinct constant without ``Target.vop3_literal``),
    which LLVM makes and the lowering does not emit, and leaves out the ``"xor"`` ops LLVM merges into others
    (:meth:`merged_xors`).  ``target`` (linlayout.hw.targets.Target, an AMD one) decides what the compiler adds
    around the ops (:attr:`delay_alu`) and what it merges."""

    def __init__(self, target) -> None:
        self.target = target
        self.ops: list[ChoiceOp] = []
        self._index: dict[tuple, int] = {}  # (kind, operands, constant) of "sbit" / "xor" / "and" / "add" -> op
        self._values: dict[bytes, int] = {}  # a choice's table -> the op holding it
        self.masks: dict[tuple[int, ...], int] = {}  # the lane-bit set S of each "lanes" choice -> the op of m_S
        self._moved: set = set()  # the "select" choices' constants in VGPRs: pairs (one of the two) or constants
        self._made = 0  # VALU of the ops and constant moves, before the compiler's merges

    def add(self, cond, if_false: int, if_true: int) -> int:
        """The op holding the choice of ``if_true`` where ``cond`` (``[lanes]``, or ``[warps, lanes]``; one the
        same in every warp is the ``[lanes]`` one, :func:`lanes_condition`) is nonzero, else ``if_false``."""
        cond = np.asarray(cond)
        if_false, if_true = if_false & 0xFFFFFFFF, if_true & 0xFFFFFFFF
        key, form, bits, first, k, values = _facts.lookup(
            (cond.tobytes(), cond.shape, cond.dtype.str, if_false, if_true),
            lambda: _choice_facts(cond, if_false, if_true))
        got = self._values.get(key)
        if got is not None:
            return got
        if form == "uniform":
            self._made += UNIFORM_CHOICE_VALU
            op = self._new(ChoiceOp("uniform", table=values))
        elif form == "lanes":
            op = self._op("add", self._op("and", self._mask(bits), k), first)
        else:
            # the constants moved into VGPRs: the pair's other than the literal, or both
            pair = (min(if_false, if_true), max(if_false, if_true))
            moved = (pair,) if self.target.vop3_literal else pair
            for constant in moved:
                if constant not in self._moved:
                    self._moved.add(constant)
                    self._made += SELECT_CHOICE_CONSTANT_VALU
            self._made += 1
            op = self._new(ChoiceOp("select", table=values, pair=(if_false, if_true)))
        self._values[key] = op
        return op

    @property
    def delay_alu(self) -> int:
        """The ``s_delay_alu`` of the choices on a target that delays dependent VALU reads
        (``Target.has_delay_alu``): one per lane-bit set ``S`` [I] (its mask, masked terms and values are a chain
        of dependent VALU)."""
        return len(self.masks) if self.target.has_delay_alu else 0

    def select_condition(self, op: int) -> bytes | None:
        """The bytes of the condition (bool, :func:`lanes_condition`'s shape) of ``op`` when it is a
        ``"select"`` choice (a select condition: ``salu_vcc``), else None."""
        o = self.ops[op]
        return o.table.tobytes() if o.kind == "select" else None

    def _mask(self, bits: tuple[int, ...]) -> int:
        """The op of ``m_S``: an ``"sbit"`` per bit of ``S``, ``"xor"`` between (lane_mask_valu(|S|) VALU, fewer
        where an earlier set made some of them)."""
        got = self.masks.get(bits)
        if got is None:
            got = self._op("sbit", (), bits[0])
            for bit in bits[1:]:
                got = self._op("xor", (got, self._op("sbit", (), bit)))
            self.masks[bits] = got
        return got

    def _op(self, kind: str, operands, constant: int = 0) -> int:
        """The op ``kind`` on ``operands`` (an op, or a tuple of ops) and ``constant``, made once (one VALU)."""
        operands = operands if isinstance(operands, tuple) else (operands,)
        key = (kind, operands, constant)
        got = self._index.get(key)
        if got is None:
            self._made += 1
            got = self._index[key] = self._new(ChoiceOp(kind, operands, constant))
        return got

    @property
    def valu(self) -> int:
        """VALU of the choices as compiled: the ops and constant moves less :meth:`merged_xors`."""
        return self._made - self.merged_xors()

    def merged_xors(self) -> int:
        """The ``"xor"`` ops the compiler merges into other instructions, each one VALU fewer
        (tests/test_emit_lane_choices.py compiles sets of parity choices on every AMD target):

        * ``Target.has_bitop3`` (gfx950, gfx1250): an XOR that only ``"and"`` ops read goes into them, each
          ``v_and_b32`` of it becoming one ``v_bitop3_b32`` of its two operands and ``K``;
        * then ``Target.has_xor3`` (RDNA): an XOR left whose one reader is another XOR left goes into it, one
          ``v_xor3_b32``, taken from the last XOR made (the root of a set's chain) down, each XOR in one merge:
          a chain of ``k`` XORs takes ``ceil(k / 2)`` instructions.  Where the target has both, not into an XOR an
          ``"and"`` reads (gfx1250 rewrites that and with the XOR's operands as a ``v_bitop3_b32`` and keeps
          its own XORs: a set of three bits and one of four with them compile to two XORs, not one)."""
        target = self.target
        if not (target.has_bitop3 or target.has_xor3):
            return 0
        readers: dict[int, list[str]] = {}
        for op in self.ops:
            for o in op.operands:
                readers.setdefault(o, []).append(op.kind)
        xors = [i for i, op in enumerate(self.ops) if op.kind == "xor"]
        done = {i for i in xors if set(readers.get(i, ())) == {"and"}} if target.has_bitop3 else set()
        merged = len(done)
        if target.has_xor3:
            for y in reversed(xors):
                if y in done or (target.has_bitop3 and "and" in readers.get(y, ())):
                    continue
                x = next((x for x in self.ops[y].operands
                          if self.ops[x].kind == "xor" and x not in done and readers[x] == ["xor"]), None)
                if x is not None:
                    done |= {x, y}
                    merged += 1
        return merged

    def _new(self, op: ChoiceOp) -> int:
        self.ops.append(op)
        return len(self.ops) - 1
