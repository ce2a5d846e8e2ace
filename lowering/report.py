"""The ISA report of a compiled kernel: instruction counts of one marked region of one wave,
and the kernel's resources from the code object metadata.

Counts follow :func:`linlayout.lowering.isa.isa_counts` (the classes and sub-counts of docs/contract.md
section 3, counted the way ``docs/benchmarks.md`` counts Triton's).  Resources are the
``.amdgpu_metadata`` fields of the kernel: ``.vgpr_count``, ``.sgpr_count``,
``.agpr_count``, ``.group_segment_fixed_size`` (static LDS bytes),
``.private_segment_fixed_size`` (scratch) and the spill counts.

:func:`plan_isa_differences` compares the compiled region with a conversion plan: the
cross-lane, select, byte-permute, LDS and barrier instructions must be exactly the
plan's (:data:`PLAN_CHECKED_KEYS`, and the two counts :func:`region_counts` adds: fused DPP
selects and RDNA's ``v_permlane16_b32``/``v_permlanex16_b32``), and so must the ``s_nop`` hazard waits
that the order the ROCDL lowering emits and pins needs (:func:`linlayout.synth.hazards.hazard_nops`;
``hazards=True``, as :func:`linlayout.lowering.conversion.lower_conversion` compares).
``v_mov`` copies and ``s_waitcnt`` are the compiler's and are reported, not compared.  A barrier is the target's
``barrier_instructions`` (gfx12, gfx1250: ``s_barrier_signal`` and ``s_barrier_wait``).
"""

from __future__ import annotations

import re

from linlayout.hw.targets import get_target
from linlayout.lowering.compile import CompiledKernel
from linlayout.lowering.emit.conversion_kernel import STORE_ADDRESSES
from linlayout.lowering.isa import around_region, isa_counts, region_lines
from linlayout.synth.hazards import hazard_nops
from linlayout.synth.steps import dwords_per_slot

__all__ = ["PLAN_CHECKED_KEYS", "FUSED_KEY", "PERMLANE16_KEY", "isa_report", "expected_isa_counts",
           "plan_isa_differences", "fused_dpp_count", "region_counts", "hoisted_m0_writes", "kernel_setup"]

# ISA classes / sub-counts that a conversion region must hold exactly as the plan says.
PLAN_CHECKED_KEYS = ("ds_bpermute", "ds_swizzle", "dpp", "permlane16_swap", "permlane32_swap", "v_cndmask",
                     "v_perm_b32", "lds_write", "lds_read", "lds_read_tr", "s_barrier", "readlane")
# One fused DPP select (one instruction) and a DPP move followed by a select (two) give the
# same per-class counts; this key counts the fused instruction itself.
FUSED_KEY = "v_cndmask_b32_dpp"
# RDNA's v_permlane16_b32 and v_permlanex16_b32 (a plain ``valu`` instruction to the classifier), as the
# plan counts them (``Lane.counts``: the family ``permlane16``).
PERMLANE16_KEY = "permlane16"
_PERMLANE16_MNEMONICS = ("v_permlane16_b32", "v_permlanex16_b32")


def isa_report(compiled: CompiledKernel, region: str | None = "conv", kernel: str | None = None) -> dict:
    """``{"isa_counts": {...}, "vgpr_count", "sgpr_count", "agpr_count", "lds_bytes", "scratch_bytes",
    "vgpr_spill_count", "sgpr_spill_count", "arch"}`` for ``region`` (None: the whole ISA) of ``kernel``
    (None: the only kernel).  ``isa_counts`` is :func:`region_counts` (with :data:`FUSED_KEY` and
    :data:`PERMLANE16_KEY`)."""
    k = compiled.kernel(kernel)
    return {
        "arch": compiled.arch,
        "isa_counts": region_counts(compiled.isa, region),
        "vgpr_count": k.vgpr_count,
        "sgpr_count": k.sgpr_count,
        "agpr_count": k.agpr_count,
        "lds_bytes": k.lds_bytes,
        "scratch_bytes": k.scratch_bytes,
        "vgpr_spill_count": k.vgpr_spill_count,
        "sgpr_spill_count": k.sgpr_spill_count,
    }


def _mnemonic_count(isa_text: str, region: str | None, mnemonics: tuple[str, ...]) -> int:
    """The instructions in ``region`` of ``isa_text`` (None: all of it) whose mnemonic starts with one of
    ``mnemonics``."""
    lines = region_lines(isa_text, region) if region is not None else isa_text.splitlines()
    return sum(1 for ln in lines if ln.split(";", 1)[0].strip().startswith(mnemonics))


def fused_dpp_count(isa_text: str, region: str | None = "conv") -> int:
    """The ``v_cndmask_b32_dpp`` instructions in ``region`` of ``isa_text``."""
    return _mnemonic_count(isa_text, region, (FUSED_KEY,))


def region_counts(isa_text: str, region: str | None = "conv") -> dict[str, int]:
    """:func:`~linlayout.lowering.isa.isa_counts` of ``region`` (None: all of ``isa_text``) with the two
    keys a plan is also compared on: :data:`FUSED_KEY` and :data:`PERMLANE16_KEY`."""
    counts = isa_counts(isa_text, region=region)
    counts[FUSED_KEY] = fused_dpp_count(isa_text, region)
    counts[PERMLANE16_KEY] = _mnemonic_count(isa_text, region, _PERMLANE16_MNEMONICS)
    return counts


def expected_isa_counts(plan, hazards: bool = False) -> dict[str, int]:
    """The :data:`PLAN_CHECKED_KEYS` (and :data:`FUSED_KEY`) counts the ISA of ``plan`` must show; with
    ``hazards`` also ``s_nop``, the hazard waits of the order the ROCDL lowering emits and pins
    (:func:`linlayout.synth.hazards.hazard_nops`; an emitter that leaves the order to the compiler,
    the C++ one or a kernel around the plan, gets the compiler's).

    The plan counts a fused ``v_cndmask_b32_dpp`` once, as ``dpp``; the ISA classifier
    counts that instruction under both ``dpp`` and ``v_cndmask`` (a step's ``fused_select``).  A
    barrier step is ``barrier_instructions`` of the target's ``s_barrier`` class.
    """
    pc = plan.counts()
    out = {k: int(pc.get(k, 0)) for k in PLAN_CHECKED_KEYS + (PERMLANE16_KEY,)}
    out["s_barrier"] *= get_target(plan.arch).barrier_instructions
    fused = dwords_per_slot(plan.element_bits) * sum(1 for s in plan.steps if s.fused_select)
    out["v_cndmask"] += fused
    out[FUSED_KEY] = fused
    if hazards:
        out["s_nop"] = hazard_nops(plan).nops
    return out


def plan_isa_differences(plan, counts: dict[str, int], hazards: bool = False) -> dict[str, dict[str, int]]:
    """``{key: {"plan": n, "isa": m}}`` for every checked key where the region differs from the plan
    (``hazards``: ``s_nop`` too, :func:`expected_isa_counts`)."""
    want = expected_isa_counts(plan, hazards)
    return {k: {"plan": want[k], "isa": int(counts.get(k, 0))} for k in want if want[k] != int(counts.get(k, 0))}


#: An SALU instruction writing ``m0`` (its destination, the first operand).
M0_WRITE = re.compile(r"^\s*s_\w+\s+m0\s*,")


def hoisted_m0_writes(isa_text: str) -> list[str]:
    """The SALU lines of a conversion kernel that write ``m0`` outside every marked region: the register
    index of its ``v_movrels_b32`` reads (``steps.Movrels``), which LLVM hoists to the kernel's start
    (``SIFixSGPRCopies`` merges the ``m0`` initializations at their common dominator) where the index is
    a value from before the ``setup`` region (the warp id)."""
    before, after = around_region(isa_text, "conv", leave_out=("setup", STORE_ADDRESSES))
    return [ln for ln in before + after if M0_WRITE.match(ln)]


def kernel_setup(isa_text: str) -> dict:
    """``isa_counts`` of the ``setup`` region of one of our conversion kernels: the plan's per-lane
    values (lane masks, byte selectors, LDS and ``ds_bpermute`` addresses, the permlane selectors'
    low words), computed once before ``conv``, with the ``m0`` writes LLVM hoisted out of the regions
    (:func:`hoisted_m0_writes`: the setup of the plan's register index, ``salu_movrels_index``)."""
    return isa_counts("\n".join(region_lines(isa_text, "setup") + hoisted_m0_writes(isa_text)))
