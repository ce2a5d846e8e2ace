"""A plan's instruction counts in the classes of its target's assembly, for targets whose
conversions are not emitted as kernels (no ``Target.emitter``: NVIDIA, or an AMD descriptor naming none).

Where a target has an emitter, ``linlayout bench conversions`` counts the compiled ISA
(:mod:`linlayout.lowering.isa`); elsewhere it counts the plan: every step's instructions by kind
(``Plan.counts()``) plus the estimated setup (``Plan.overhead``), put into the classes the
target's Triton counts use, so that both sides of a corpus row have the same keys:

* NVIDIA (PTX classes, :mod:`linlayout.lowering.ptx_counts`): the planner's kinds
  (``linlayout.synth.plan.PTX_COUNT_KINDS``) go to their PTX instructions (``shfl`` ->
  ``shfl.sync``, ``lds_write`` -> ``st.shared``, ``lds_read`` -> ``ld.shared``, ``lds_read_tr`` ->
  ``ldmatrix``, ``s_barrier`` -> ``bar.sync``), a kind named by a PTX mnemonic (``prmt``,
  ``selp``, ``mov``, ``bar.sync``, ``shfl.sync.idx``, ``ldmatrix.x4``, ...) to its
  :func:`~linlayout.lowering.ptx_counts.ptx_class`; the setup goes to ``other``, except the
  estimated ``scoreboard_waits`` (``linlayout.synth.cost.PTX_SETUP_NAMES``): PTX has no wait
  instruction (the hardware waits for a shared load's result by itself).
* AMD (ISA classes, :mod:`linlayout.lowering.isa`): a kind that is an ISA class counts there; a
  VALU sub-kind (``v_cndmask``, ``dpp``, ...) counts under ``valu`` and its sub-count; RDNA's
  ``permlane16`` (``v_permlane16_b32``/``v_permlanex16_b32``) and another ``v_*`` kind under
  ``valu``; setup ``valu_*``/``salu_*``/``s_waitcnt`` under its class, the estimated ``s_delay_alu``
  (``SETUP_DELAY_ALU``) also under ``salu``'s sub-count of that name.

A kind the target's classes cannot hold (an AMD instruction in an NVIDIA plan) is an internal
inconsistency: ``ValueError``.
"""

from __future__ import annotations

from linlayout.hw.targets import get_target
from linlayout.synth.cost import PTX_SETUP_NAMES, SETUP_DELAY_ALU

from .isa import CLASS_KEYS, COUNT_KEYS, VALU_SUB_KEYS
from .ptx_counts import PTX_COUNT_KEYS, ptx_class

__all__ = ["plan_ptx_counts", "plan_isa_counts"]

#: The planner's own kind names as PTX classes.
_PLANNER_AS_PTX = {"shfl": "shfl.sync", "lds_write": "st.shared", "lds_read": "ld.shared", "lds_read_tr": "ldmatrix",
                   "s_barrier": "bar.sync"}
#: PTX mnemonics' first words (a kind starting with one is a PTX instruction).
_PTX_WORDS = ("shfl", "prmt", "selp", "ld", "st", "ldmatrix", "stmatrix", "movmatrix", "bar", "mov")


#: The planner's AMD kinds that are VALU instructions without an ISA sub-count.
_VALU_KINDS = ("permlane16",)


def _nonzero(plan) -> dict[str, int]:
    return {k: int(v) for k, v in plan.counts().items() if k != "total" and v}


def plan_ptx_counts(plan) -> dict[str, int]:
    """``plan``'s steps and setup as PTX counts (``PTX_COUNT_KEYS``, ``total`` their sum)."""
    out = dict.fromkeys(PTX_COUNT_KEYS, 0)
    for kind, n in _nonzero(plan).items():
        if kind in _PLANNER_AS_PTX:
            cls = _PLANNER_AS_PTX[kind]
        elif kind.split(".", 1)[0] in _PTX_WORDS:
            cls = ptx_class(kind)
        else:
            raise ValueError(f"plan for {plan.arch} counts {n} {kind!r}, which is no PTX instruction")
        out[cls] += n
    out["other"] += sum(int(v) for name, v in plan.overhead.items() if name != PTX_SETUP_NAMES["s_waitcnt"])
    out["total"] = sum(out[k] for k in PTX_COUNT_KEYS[1:])
    return out


def plan_isa_counts(plan) -> dict[str, int]:
    """``plan``'s steps and setup as AMD ISA counts (``COUNT_KEYS``, ``total`` the sum of the classes); a
    barrier counts its target's ``barrier_instructions`` (gfx12: ``s_barrier_signal`` + ``s_barrier_wait``)."""
    out = dict.fromkeys(COUNT_KEYS, 0)
    for kind, n in _nonzero(plan).items():
        if kind in VALU_SUB_KEYS:
            out[kind] += n
            out["valu"] += n
        elif kind in CLASS_KEYS:
            out[kind] += n
        elif kind.startswith("v_") or kind in _VALU_KINDS:
            out["valu"] += n
        else:
            raise ValueError(f"plan for {plan.arch} counts {n} {kind!r}, which is no AMD instruction class")
    for name, n in plan.overhead.items():
        cls = name if name in ("s_waitcnt", "s_nop") else name.split("_", 1)[0]
        if cls not in ("valu", "salu", "s_waitcnt", "s_nop"):
            raise ValueError(f"plan for {plan.arch}: setup estimate {name!r} has no ISA class")
        out[cls] += int(n)
        if name in SETUP_DELAY_ALU:
            out["s_delay_alu"] += int(n)
    out["s_barrier"] *= get_target(plan.arch).barrier_instructions
    out["total"] = sum(out[k] for k in CLASS_KEYS)
    return out
