"""Per-lane choices between two i32 constants, computed in a kernel's prologue: ``if_true`` in the lanes where a
condition holds, ``if_false`` elsewhere (the per-lane selector register of a ``PermSelect`` step's ``v_perm_b32``).

Three forms, by the condition's 0/1 table ``cond[w][l]`` (linlayout.synth.lane_choices.choice_form, whose
:class:`~linlayout.synth.lane_choices.ChoiceCount` is the planner's estimate of these instructions):

* **lane bits.**  The condition is GF(2)-affine in the lane bits alone (the same in every warp,
  linlayout.synth.lane_choices.lane_bits):
  ``cond(l) = c ^ XOR_{b in S} l_b``.  With ``A`` the value in lane 0 and ``B`` the other one, the value is

      v(l) = A + (m_S(l) & K),   K = B - A (mod 2**32),   m_S(l) = XOR_{b in S} sext(l_b)   (0 or -1)

  computed as one ``v_bfe_i32 m, lane, b, 1`` per bit of ``S`` (``v_xor_b32`` between), one ``v_and_b32`` with the
  literal ``K`` and one ``v_add_u32`` with the literal ``A`` (``v_or_b32`` where LLVM sees no carry): 3 VALU for one
  choice on one lane bit, no VCC.  Shared: ``m_S`` by every choice on the same ``S``, ``m_S & K`` by every choice
  with the same ``(S, K)`` (then one ``v_add_u32`` each), the value by every choice with the same table.  Each
  sign-extended bit goes through ``atoms.opaque_word`` (an empty inline asm, no instruction) that LLVM cannot see
  into: it would otherwise fold ``m_S & K`` back into ``select(l_b, K, 0)`` and the whole into
  ``select(l_b, B, A)``, which it compiles on gfx9 to ``v_and_b32; v_mov_b32 x2; v_cmp_eq_u32; s_nop;
  v_cndmask_b32`` (VOP3 and VOPC take no literal there), and it would compile the XOR of two sign-extended bits as
  ``ashr(xor(shl, shl), 31)`` (two ``v_lshlrev_b32``, ``v_xor_b32``, ``v_ashrrev_i32``: one VALU more).
  The addition (not an XOR, the same count) keeps gfx950 from fusing the two logic ops into one ``v_bitop3_b32``
  whose two constants it would first have to move into registers.  On gfx940/gfx950 LLVM assumes an inline asm
  may write its output with a forwarding hazard and waits one cycle before the first VALU that reads it (an
  ``s_nop 0`` where it finds no other instruction to put there).
* **uniform in each wave**: the table through :meth:`LaneValues.value_of` (a constant, or arithmetic on the
  wave-uniform warp id).
* **any other** condition (not affine, or lane bits that differ between warps): ``select(cond, B, A)`` on the lane
  mask of :meth:`LaneValues.condition` (the mask in an SGPR or a pair, shared with the plan's select steps):
  ``v_cndmask_b32`` with one constant a literal and the other in a VGPR (``v_mov_b32``, shared by LLVM between
  choices of the same constant) on RDNA; on gfx9 LLVM moves both constants into VGPRs (``v_mov_b32`` x2).
"""

from __future__ import annotations

from linlayout.synth.lane_choices import choice_form, choice_table, lanes_constants

from . import atoms
from .lane_values import LaneValues, lane_table

__all__ = ["LaneChoices"]


class LaneChoices:
    """Builds and shares the per-lane choices of one prologue on the lane id, the conditions and the values of
    ``lanes`` (whose :attr:`~LaneValues.pinned` list receives each choice's value)."""

    def __init__(self, lanes: LaneValues) -> None:
        self.lanes = lanes
        self._masks: dict[tuple[int, ...], str] = {}  # S -> m_S (0 or -1 per lane, opaque to LLVM)
        self._masked: dict[tuple[tuple[int, ...], int], str] = {}  # (S, K) -> m_S & K
        self._values: dict[bytes, str] = {}  # the value's table -> its value

    def choice(self, cond, if_false: int, if_true: int, what: str) -> str:
        """An i32 VGPR value holding ``if_true`` in the lanes (of each warp) where ``cond`` (``[lanes]`` or
        ``[warps, lanes]``) is nonzero, else ``if_false`` (both 32-bit constants); recorded in ``lanes.pinned``."""
        lanes, b = self.lanes, self.lanes.b
        t = lane_table(cond, lanes.num_warps, lanes.wave_size, what) != 0
        table = choice_table(t, if_false, if_true)
        key = table.tobytes()
        if key in self._values:
            return self._values[key]
        form, bits = choice_form(table)
        if form == "uniform":
            value = lanes.value_of(table, what=what)[0]
        else:
            if form == "lanes":
                first, k = lanes_constants(table)
                value = b.arith("addi", self._masked_term(bits, k), b.const(first))
            else:
                value = b.select(lanes.condition(t, what), b.const(if_true), b.const(if_false))
            lanes.pinned.append((value, "i32", "v"))
        self._values[key] = value
        return value

    def _masked_term(self, bits: tuple[int, ...], k: int) -> str:
        """``m_S & K`` (one ``v_and_b32`` with the literal ``K``)."""
        key = (bits, k)
        if key not in self._masked:
            b = self.lanes.b
            self._masked[key] = b.arith("andi", self._mask(bits), b.const(k))
        return self._masked[key]

    def _mask(self, bits: tuple[int, ...]) -> str:
        """``m_S``: per lane 0 or -1, the parity of the lane bits ``S`` sign-extended: one ``v_bfe_i32`` per bit, each
        passed through ``atoms.opaque_word`` (no instruction; LLVM cannot see that it is a sign-extended bit, so it
        neither folds ``m_S & K`` into a select nor rewrites the XOR of two of them as ``ashr(xor(shl, shl), 31)``,
        one VALU more), ``v_xor_b32`` between."""
        if bits not in self._masks:
            b = self.lanes.b
            acc = None
            for bit in bits:
                ext = atoms.opaque_word(b, self.lanes.lane_sign_bit(bit))
                acc = ext if acc is None else b.arith("xori", acc, ext)
            self._masks[bits] = acc
        return self._masks[bits]
