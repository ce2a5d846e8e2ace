"""Per-lane choices between two i32 constants, computed in a kernel's prologue: ``if_true`` in the lanes where a
condition holds, ``if_false`` elsewhere (the per-lane selector register of a ``PermSelect`` step's ``v_perm_b32``).

Three forms, by the condition's 0/1 table ``cond[w][l]`` (linlayout.synth.lane_choices.choice_form).  Which ops
compute the choices and which they share is decided by :class:`~linlayout.synth.lane_choices.ChoicePlan` (whose count
is the planner's estimate of these instructions); this module writes its ops as MLIR and decides nothing:

* **lane bits.**  The condition is GF(2)-affine in the lane bits alone (the same in every warp,
  linlayout.synth.lane_choices.lane_bits):
  ``cond(l) = c ^ XOR_{b in S} l_b``.  With ``A`` the value in lane 0 and ``B`` the other one, the value is

      v(l) = A + (m_S(l) & K),   K = B - A (mod 2**32),   m_S(l) = XOR_{b in S} sext(l_b)   (0 or -1)

  computed as one ``v_bfe_i32 m, lane, b, 1`` per bit of ``S`` (``v_xor_b32`` between), one ``v_and_b32`` with the
  literal ``K`` and one ``v_add_u32`` with the literal ``A`` (``v_or_b32`` where LLVM sees no carry): 3 VALU for one
  choice on one lane bit, no VCC.  Shared: a bit's ``v_bfe_i32`` by every ``S`` holding it, ``m_S`` by every choice
  on the same ``S``, ``m_S & K`` by every choice with the same ``(S, K)`` (then one ``v_add_u32`` each), the value
  by every choice with the same table.  Each
  sign-extended bit is hidden from LLVM (no instruction; below): it would otherwise fold ``m_S & K`` back into
  ``select(l_b, K, 0)`` and the whole into
  ``select(l_b, B, A)``, which it compiles on gfx9 to ``v_and_b32; v_mov_b32 x2; v_cmp_eq_u32; s_nop;
  v_cndmask_b32`` (VOP3 and VOPC take no literal there), and it would compile the XOR of two sign-extended bits as
  ``ashr(xor(shl, shl), 31)`` (two ``v_lshlrev_b32``, ``v_xor_b32``, ``v_ashrrev_i32``: one VALU more).
  The addition (not an XOR, the same count) keeps gfx950 from fusing the two logic ops into one ``v_bitop3_b32``
  whose two constants it would first have to move into registers.  The hiding: an empty inline asm
  (``atoms.opaque_word``), except where the compiler waits a cycle before the first VALU reader of an inline
  asm's result (``Target.waits_after_inline_asm``: gfx942, gfx950; an ``s_nop 0`` where it finds no other
  instruction to put there, in 9 of the AMD corpus's 23 such kernels with lane-bit choices, which the count does
  not hold): there ``llvm.amdgcn.softwqm`` (``atoms.unseen_word``, a copy the register allocator removes).  On
  RDNA the asm stays: there LLVM puts fewer ``s_delay_alu`` around it (softwqm: 6 more in the wave32 corpus
  than it saves).
* **uniform in each wave**: the table through :meth:`LaneValues.value_of` (a constant, or arithmetic on the
  wave-uniform warp id).
* **any other** condition (not affine, or lane bits that differ between warps): ``select(cond, B, A)`` on the lane
  mask of :meth:`LaneValues.condition` (the mask in an SGPR or a pair, shared with the plan's select steps):
  ``v_cndmask_b32`` with one constant a literal and the other in a VGPR (``v_mov_b32``, shared by LLVM between
  choices of the same constant) on RDNA; on gfx9 LLVM moves both constants into VGPRs (``v_mov_b32`` x2).
"""

from __future__ import annotations

from linlayout.hw.targets import get_target
from linlayout.synth.lane_choices import ChoicePlan

from . import atoms
from .lane_values import LaneValues, lane_table

__all__ = ["LaneChoices"]


class LaneChoices:
    """Emits the per-lane choices of one prologue: :attr:`plan` (a
    :class:`~linlayout.synth.lane_choices.ChoicePlan`, the planner's count of the same choices) decides each op and
    what it shares, this class writes each op once as MLIR on the lane id, the conditions and the values of
    ``lanes`` (whose :attr:`~LaneValues.pinned` list receives each choice's value)."""

    def __init__(self, lanes: LaneValues) -> None:
        self.lanes = lanes
        target = get_target(lanes.arch)
        self.plan = ChoicePlan(target)
        # how a lane bit is hidden from LLVM: no inline asm where the compiler waits after one
        self._hide = atoms.unseen_word if target.waits_after_inline_asm else atoms.opaque_word
        self._values: dict[int, str] = {}  # op of the plan -> its value

    def choice(self, cond, if_false: int, if_true: int, what: str) -> str:
        """An i32 VGPR value holding ``if_true`` in the lanes (of each warp) where ``cond`` (``[lanes]`` or
        ``[warps, lanes]``) is nonzero, else ``if_false`` (both 32-bit constants); recorded in ``lanes.pinned``."""
        lanes = self.lanes
        op = self.plan.add(lane_table(cond, lanes.num_warps, lanes.wave_size, what) != 0, if_false, if_true)
        if op not in self._values:
            value = self._value(op, what)
            if self.plan.ops[op].kind != "uniform":
                lanes.pinned.append((value, "i32", "v"))
        return self._values[op]

    def _value(self, i: int, what: str) -> str:
        """The value of op ``i`` of the plan (its operands first), made once.  ``"sbit"``: one ``v_bfe_i32``
        (``LaneValues.lane_sign_bit``) hidden from LLVM (no instruction; it cannot see that it is a sign-extended
        bit, so it neither folds ``m_S & K`` into a select nor rewrites the XOR of two of them as
        ``ashr(xor(shl, shl), 31)``, one VALU more)."""
        got = self._values.get(i)
        if got is not None:
            return got
        lanes, b = self.lanes, self.lanes.b
        op = self.plan.ops[i]
        args = [self._value(j, what) for j in op.operands]
        if op.kind == "sbit":
            value = self._hide(b, lanes.lane_sign_bit(op.constant))
        elif op.kind == "xor":
            value = b.arith("xori", *args)
        elif op.kind in ("and", "add"):
            value = b.arith(f"{op.kind}i", args[0], b.const(op.constant))
        elif op.kind == "uniform":
            value = lanes.value_of(op.table, what=what)[0]
        else:  # "select"
            if_false, if_true = op.pair
            value = b.select(lanes.condition(op.table, what), b.const(if_true), b.const(if_false))
        self._values[i] = value
        return value
