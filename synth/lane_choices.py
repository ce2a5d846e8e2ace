"""Per-lane choices between two 32-bit constants: ``if_true`` in the lanes where a condition holds, ``if_false``
elsewhere (the per-lane selector register of a ``PermSelect`` step's ``v_perm_b32``).  This module says which form
a kernel's prologue computes a choice in (:func:`choice_form`, the form
linlayout.lowering.emit.lane_choices emits) and how many setup instructions a plan's choices take together
(:class:`ChoiceCount`, the planner's estimate ``valu_lane_selector``, linlayout.synth.cost).

A condition is a 0/1 table ``cond[w][l]`` (``[warps, lanes]``, or ``[lanes]`` when the same in every warp).
The forms:

* ``"lanes"``: the condition is GF(2)-affine in the lane bits alone, the same in every warp (:func:`lane_bits`):
  ``cond(l) = cond(0) ^ XOR_{b in S} l_b``.  With ``A`` the value in lane 0 and ``B`` the other constant the value is
  ``A + (m_S(l) & K)``, ``K = B - A`` (mod 2**32), ``m_S`` the parity of the lane bits ``S`` sign-extended (0 or -1):
  ``2|S| - 1`` VALU per distinct ``S`` (a ``v_bfe_i32`` per bit, a ``v_xor_b32`` between), one ``v_and_b32`` per
  distinct ``(S, K)`` and one ``v_add_u32`` per choice.
* ``"uniform"``: the value is the same in all lanes of each wave (a constant, or one per warp):
  UNIFORM_CHOICE_VALU.
* ``"select"``: any other (not affine, or lane bits that differ between warps): ``v_cndmask_b32`` on the
  condition's lane mask (one per choice; the mask is a select condition, ``salu_vcc``) with one constant a literal
  and the other in a VGPR (SELECT_CHOICE_CONSTANT_VALU per distinct pair of constants).  That holds on RDNA; on
  gfx9 LLVM moves both constants into VGPRs (gfx90a/gfx942: ``v_mov_b32`` x2 + ``v_cndmask_b32``), one VALU more
  than counted: a known underestimate.

Choices with the same table are one value.
"""

from __future__ import annotations

import numpy as np

from linlayout import caches

__all__ = ["ChoiceCount", "SELECT_CHOICE_CONSTANT_VALU", "UNIFORM_CHOICE_VALU", "choice_form", "choice_table",
           "lane_bits", "lane_mask_valu", "lanes_condition", "lanes_constants", "least_lanes_choice_valu"]

#: [I] VALU for a choice uniform in each wave: a ``v_mov_b32`` of the constant (or of the warp's value)
UNIFORM_CHOICE_VALU = 1
#: [I] VALU per distinct pair of constants of ``"select"`` choices: a ``v_mov_b32`` of the constant the
#: ``v_cndmask_b32`` cannot take as its literal (LLVM shares it between choices of the same pair)
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


def lanes_condition(cond) -> np.ndarray:
    """A condition (``[lanes]`` or ``[warps, lanes]``, nonzero = true) as bool, ``[lanes]`` when the same in every
    warp (one shape for one condition)."""
    t = np.asarray(cond) != 0
    return t[0] if t.ndim == 2 and (t.shape[0] == 1 or (t == t[:1]).all()) else t


# a choice's (table bytes, form, lane bits, K, the key of its condition) by (condition bytes, shape and dtype as
# given, if_false, if_true): the planner counts the same choices of one layout pair in each of its candidate plans
_facts = caches.cache("synth.lane_choices.facts")


def _choice_facts(cond, if_false: int, if_true: int) -> tuple[bytes, str, tuple[int, ...] | None, int, bytes]:
    lanes = lanes_condition(cond)
    table = choice_table(lanes, if_false, if_true)
    form, bits = choice_form(table)
    return table.tobytes(), form, bits, lanes_constants(table)[1] if form == "lanes" else 0, lanes.tobytes()


def lane_mask_valu(lane_bit_count: int) -> int:
    """VALU of a ``"lanes"`` choice's mask ``m_S`` on ``|S| = lane_bit_count`` lane bits: a ``v_bfe_i32`` per bit,
    a ``v_xor_b32`` between (shared by every choice on the same ``S``)."""
    return 2 * lane_bit_count - 1


def least_lanes_choice_valu(lane_bit_count: int) -> int:
    """The fewest VALU a ``"lanes"`` choice on ``lane_bit_count`` lane bits takes when no other choice shares its
    parts: its mask, one ``v_and_b32`` and one ``v_add_u32``."""
    return lane_mask_valu(lane_bit_count) + 2


class ChoiceCount:
    """The setup VALU of a plan's choices (``valu``), told one at a time (:meth:`add`), shared as the lowering shares
    them; ``masks``: the lane-bit sets of the ``"lanes"`` choices (each one chain ``v_bfe_i32 -> v_and_b32 ->
    v_add_u32`` of dependent VALU)."""

    def __init__(self) -> None:
        self._tables: set[bytes] = set()
        self.masks: set[tuple[int, ...]] = set()  # the lane-bit sets S of the "lanes" choices
        self._masked: set[tuple[tuple[int, ...], int]] = set()
        self._pairs: set[tuple[int, int]] = set()
        self.valu = 0

    def add(self, cond, if_false: int, if_true: int) -> bytes | None:
        """One choice (``cond``: ``[lanes]``, or ``[warps, lanes]``; one the same in every warp is the ``[lanes]``
        one, :func:`lanes_condition`); for a new ``"select"`` choice the bytes of its condition (bool, in
        :func:`lanes_condition`'s shape: the caller counts it as a select condition), else None."""
        cond = np.asarray(cond)
        if_false, if_true = if_false & 0xFFFFFFFF, if_true & 0xFFFFFFFF
        table, form, bits, k, lanes = _facts.lookup((cond.tobytes(), cond.shape, cond.dtype.str, if_false, if_true),
                                                    lambda: _choice_facts(cond, if_false, if_true))
        if table in self._tables:
            return None
        self._tables.add(table)
        if form == "uniform":
            self.valu += UNIFORM_CHOICE_VALU
        elif form == "lanes":
            if bits not in self.masks:
                self.masks.add(bits)
                self.valu += lane_mask_valu(len(bits))
            if (bits, k) not in self._masked:
                self._masked.add((bits, k))
                self.valu += 1
            self.valu += 1
        else:
            pair = (min(if_false, if_true), max(if_false, if_true))
            if pair not in self._pairs:
                self._pairs.add(pair)
                self.valu += SELECT_CHOICE_CONSTANT_VALU
            self.valu += 1
            return lanes
        return None
