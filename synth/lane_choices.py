"""Per-lane choices between two 32-bit constants: ``if_true`` in the lanes where a condition holds, ``if_false``
elsewhere (the per-lane selector register of a ``PermSelect`` step's ``v_perm_b32``).  This module says which form
a kernel's prologue computes a choice in (:func:`choice_form`, the form
linlayout.lowering.emit.lane_choices emits).

A condition is a 0/1 table ``cond[w][l]`` (``[warps, lanes]``).  The forms:

* ``"lanes"``: the condition is GF(2)-affine in the lane bits alone, the same in every warp (:func:`lane_bits`):
  ``cond(l) = cond(0) ^ XOR_{b in S} l_b``.  With ``A`` the value in lane 0 and ``B`` the other constant the value is
  ``A + (m_S(l) & K)``, ``K = B - A`` (mod 2**32), ``m_S`` the parity of the lane bits ``S`` sign-extended (0 or -1):
  ``2|S| - 1`` VALU per distinct ``S`` (a ``v_bfe_i32`` per bit, a ``v_xor_b32`` between), one ``v_and_b32`` per
  distinct ``(S, K)`` and one ``v_add_u32`` per choice.
* ``"uniform"``: the value is the same in all lanes of each wave (a constant, or one per warp).
* ``"select"``: any other (not affine, or lane bits that differ between warps): ``v_cndmask_b32`` on the
  condition's lane mask with one constant a literal and the other in a VGPR.

Choices with the same table are one value.
"""

from __future__ import annotations

import numpy as np

__all__ = ["choice_form", "choice_table", "lane_bits", "lanes_constants"]


def lane_bits(cond) -> tuple[int, ...] | None:
    """The lane bits ``S`` of a condition (``[warps, lanes]``, nonzero = true) with ``cond(l, w) = cond(0, 0) ^
    XOR_{b in S} l_b`` in every warp, in increasing order, or None when there is no such ``S``."""
    t = np.asarray(cond) != 0
    if t.ndim != 2 or not (t == t[:1]).all():
        return None
    row = t[0]
    lanes = np.arange(row.size)
    bits = tuple(b for b in range(row.size.bit_length() - 1) if row[1 << b] != row[0])
    mask = sum(1 << b for b in bits)
    return bits if np.array_equal(row, row[0] ^ (np.bitwise_count(lanes & mask) & 1).astype(bool)) else None


def choice_table(cond, if_false: int, if_true: int) -> np.ndarray:
    """The values of a choice: ``if_true`` where ``cond`` (``[warps, lanes]``) is nonzero, else ``if_false``
    (int64 ``[warps, lanes]``, each as an unsigned 32-bit number)."""
    return np.where(np.asarray(cond) != 0, np.int64(if_true & 0xFFFFFFFF), np.int64(if_false & 0xFFFFFFFF))


def choice_form(table: np.ndarray) -> tuple[str, tuple[int, ...] | None]:
    """The form of the choice whose values are ``table`` (:func:`choice_table`): ``"uniform"``, ``"lanes"`` or
    ``"select"``, and for ``"lanes"`` the lane bits ``S``."""
    if (table == table[:, :1]).all():
        return "uniform", None
    bits = lane_bits(table != table[0, 0])
    return ("lanes", bits) if bits else ("select", None)


def lanes_constants(table: np.ndarray) -> tuple[int, int]:
    """``(A, K)`` of a ``"lanes"`` choice: the value in lane 0 and the other value less it, mod 2**32."""
    first = int(table[0, 0])
    other = int(table[table != first][0])
    return first, (other - first) & 0xFFFFFFFF
