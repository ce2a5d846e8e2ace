"""Cost model of conversion plans per architecture, and the analytic lower bounds.

Unit: cycles of one wave on its SIMD.  The table below and the unprefixed parameters are CDNA's
(a VALU instruction of a wave64 takes 4 cycles on a 16-lane SIMD); the ``NV_`` (NVIDIA warp of 32,
SM clock) and ``RDNA_`` (wave32 on a 32-lane SIMD) parameters price the same model on those
targets (``NVIDIA_PARAMETERS``, ``RDNA_PARAMETERS``).  The cost of a plan is

    sum over instructions of their issue cycles
  + sum over LDS-pipe instructions of their LDS cycles (bank-conflict aware)
  + LATENCY_WEIGHT * (DS latency) * (depth of the longest chain of dependent DS instructions)
  + s_barrier cycles + setup instructions (VALU/SALU) estimated from the steps;

on NVIDIA (``CostModel.pipe_overlap``, measured on an H200: docs/nvidia_facts.md section 8) the
shared-memory (MIO) pipe works while the warp issues its ALU instructions, so the first two lines
are ``max(issue and ALU cycles + setup, MIO-pipe cycles)``.

Table (every number not quoted from a source is an [I] named parameter):

=====================  ======  ============  ==========================================
instruction            issue   latency        LDS-pipe cycles
=====================  ======  ============  ==========================================
v_cndmask, v_perm,     4       VALU           --
v_mov, DPP op
v_permlane*_swap       4 [I]   VALU           --
ds_swizzle_b32         4       DS (crossbar)  CROSSBAR_CYCLES [I]: 256 B through the 64 B/clk port
ds_bpermute_b32        4       DS (crossbar)  CROSSBAR_CYCLES [I]
ds_write_bN            4       DS             b32 8, b128 20 [Q rocprofiler-compute], b64 12 [I];
                                              x bank cycles / ideal cycles (linlayout.synth.banks);
                                              ds_write2/read2: the data cycles of both accesses
ds_read_bN             4       DS             same
s_barrier              BARRIER_CYCLES [I]
bar.warp.sync          warp_barrier_cycles (NVIDIA only: NV_BAR_WARP_SYNC [M]; AMD lanes are lockstep)
=====================  ======  ============  ==========================================

``DS_LATENCY`` [I] is the issue-to-data latency of a DS instruction; it counts
once per level of dependent DS instructions (a store then a load is two levels,
independent ds_bpermutes are one level).  Latency is partly hidden by other
waves, hence ``LATENCY_WEIGHT`` [I].

``LDS_PORT_SHARING`` [I] multiplies the LDS-pipe cycles of LDS accesses and of
the crossbar moves (ds_swizzle, ds_bpermute): the CU's LDS has two ports, each
shared by a pair of SIMDs, and "only one SIMD per pair may issue an LDS
instruction at a time" [Q rocprofiler-compute], so when the neighbouring SIMD's
waves use LDS too (the common case in GEMM and attention kernels, which stage
their operands there) a wave gets half a port.  A VALU instruction has no such
sharing (every SIMD has its own VALU).  Set it to 1 to price an LDS pipe that
is otherwise idle.

Objectives (``OBJECTIVES``, ``CostModel.objective_value``): the sum above is ``latency``, one
wave's critical path; ``concurrent`` (the default) is that path plus the SIMD issue cycles of the
other ``WAVES_PER_SIMD - 1`` [I] waves converting at the same time; ``throughput`` is the busiest
of the SIMD's issue and the LDS pipe when ``WAVES_PER_SIMD`` waves share the SIMD and hide each
other's latency (or that path over the waves, when larger); ``instructions`` counts instructions
with setup.  Every per-instruction price above is the same under all four; docs/hardware.md
section 5 gives each number's source and docs/conversions.md argues the default.  ``mix_cost`` and ``round_trip_cost``
price an instruction mix known by its counts and an LDS round trip known by its accesses the
same way.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import repeat

import numpy as np

from linlayout import LayoutError, caches, f2
from linlayout.hw.lds import lds_model
from linlayout.hw.targets import Target, get_target

from . import banks
from .hazards import hazard_nops, valu_delays
from .lane_choices import ChoicePlan, lanes_condition, warp_parity_bits
from .lane_arith import (AffineTable, LaneTable, bpermute_address_bits, fit_affine, least_tables_valu,
                         linear_columns, program_family, row_table, tables_valu, thread_id_form)
from .steps import dwords_per_slot, slots_per_dword
from .steps.lds import OFFSET_LIMIT, missing_transpose_load
from .steps.movrels import index_ranks
from .vgpr_tuples import VgprTuples

__all__ = ["access_conflict_cycles", "AddressRegisters", "bpermute_address_valu", "lds_conflict_cycles",
           "CONCURRENT_CONFLICT_WEIGHT", "CONCURRENT_INSTRUCTION_EXPONENT", "CONCURRENT_TIE_FRACTION", "cost_model", "COST_TIE_FRACTION",
           "CostModel", "DST_TUPLE_DWORDS", "lds_address_valu", "least_address_valu", "lgkm_waits",
           "load_line_tables", "LOAD_LINE_TERMS", "load_tuple_copies", "lower_bound", "matrix_access_cost", "mix_cost",
           "near_best", "OBJECTIVES",
           "rank_value", "register_dwords", "register_load_copies", "register_merges", "round_trip_cost",
           "SETUP_DELAY_ALU", "SRC_TUPLE_DWORDS", "takes_load_line_terms", "tie_limit", "TIE_MARGIN", "tuple_copies", "vcc_salu",
           "warp_columns", "warp_part_ops"]

VALU_ISSUE = 4.0  # [I] wave64 on a 16-wide SIMD: 4 cycles per VALU instruction
PERMLANE_ISSUE = 4.0  # [I] v_permlane*_swap issue rate is undocumented; taken as one VALU op
DS_ISSUE = 4.0  # [I] issue slot of a DS instruction
CROSSBAR_CYCLES = 8.0  # [I] ds_bpermute/ds_swizzle: 64 lanes x 4 B at 64 B per cycle per wave ([Q] port rate)
LDS_CYCLES = {1: 8.0, 2: 8.0, 4: 8.0, 8: 12.0, 16: 20.0}  # b32 8 and b128 20 [Q]; others [I]
DS_LATENCY = 64.0  # [I] cycles from a DS instruction's issue to its data
LATENCY_WEIGHT = 1.0  # [I] fraction of DS latency not hidden by other waves
BARRIER_CYCLES = 16.0  # [I] cost of an s_barrier when the waves are balanced
SALU_ISSUE = 1.0  # [I] scalar instruction
# [I] the stall an s_delay_alu marks (gfx11 and later; the planner's estimated ones, SETUP_DELAY_ALU): it
# issues nothing (the sequencer handles it, docs/amd_facts.md 6.5), but the VALU read behind it waits for a
# result of the VALU_DEPENDENCY_INSTRUCTIONS - 1 instructions before it (linlayout.synth.hazards), taken as
# two issue cycles of a wave32.  ``_parts`` adds it to the setup, which is part of the wave's SIMD issue
# (``simd``): so ``concurrent`` prices each delay at waves_per_simd * ALU_DELAY_CYCLES (4 cycles: the stall
# in the wave's path, and again as issue cycles of each other wave), as if the other wave could not issue
# during the stall, and ``throughput`` counts it against the SIMD.  This price is the one calibrated: as a
# free wait (0) register plans with many close reads outranked round trips of fewer instructions; at 2 under
# this formula the wave32 lane mask's price (WAVE32_LANE_MASK_SALU) makes no plan worse (docs/benchmarks.md,
# "Fair counting" and "Session 20: the planner's ALU waits").  The comparison with Triton (mix_cost) prices
# both sides' ALU waits as waits, no cycle.
ALU_DELAY_CYCLES = 2.0
DPP_HAZARD = 0.0  # [I] extra cycles per DPP op beyond its counted wait states (CDNA: none; RDNA: RDNA_DPP_CYCLES)
# [I] one hazard wait state (an s_nop's, linlayout.synth.hazards): one of the wave's issue slots, which
# come once per VALU_ISSUE cycles on its SIMD (a wave64 VALU op takes 4 cycles on a 16-lane SIMD)
WAIT_STATE_CYCLES = VALU_ISSUE
LDS_PORT_SHARING = 2.0  # [I] SIMDs competing for one LDS port (two per port, [Q] one issues at a time)

# NVIDIA (sm_80, sm_90): the same model with a warp of 32 lanes on an SM sub-partition (docs/nvidia_facts.md,
# "Cost model"; [M]: benchmarks/nvidia/mio_micro.py on an H200, docs/nvidia_facts.md section 8).  One cycle is an SM
# clock seen by one sub-partition; the ``ds`` fields price the SM's shared-memory (MIO) pipe, which executes
# shfl.sync and ld/st.shared one wavefront per SM cycle for all 4 sub-partitions together, while selp/prmt run
# on each sub-partition's own ALU pipe: the two overlap (``pipe_overlap``).
NV_ALU_ISSUE = 2.0  # [M] selp/prmt: 0.5 warp-instructions per sub-partition cycle (2 per SM cycle, 16+ warps)
NV_MIO_ISSUE = 1.0  # [M] the issue slot of a shfl.sync or ld/st.shared (one instruction per sub-partition cycle)
NV_SHFL_CYCLES = 1.0  # [M] shfl.sync (idx or bfly): one wavefront, 1 per SM cycle at 8+ warps
NV_SHARED_CYCLES = {1: 1.0, 2: 1.0, 4: 1.0, 8: 2.0, 16: 4.0}  # [M] wavefronts of a conflict-free access, 1 per SM cycle
NV_SHARED_LATENCY = 25.0  # [M] issue to data: shfl.sync.idx 26, ld.shared.b32 23 SM cycles (dependent chain)
NV_BAR_SYNC = 20.0  # [I] bar.sync when the warps are balanced
NV_BAR_WARP_SYNC = 1.0  # [M] bar.warp.sync of a converged warp: ptxas emits a NOP, one issue slot
NV_MIO_SHARING = 4.0  # [M] the 4 sub-partitions share the MIO pipe: a wavefront costs a busy warp 4 of its cycles
# NVIDIA matrix instructions (docs/nvidia_facts.md section 6), priced beside the parameters above:
NV_MATRIX_WAVEFRONT_CYCLES = 1.0  # [I] cycles per wavefront of an ldmatrix/stmatrix (the wavefronts: the bank model [M])
NV_MOVMATRIX_SHUFFLES = 1.0  # [I] a movmatrix priced as this many shfl.sync (one register through the crossbar)
NVIDIA_PARAMETERS = dict(valu_issue=NV_ALU_ISSUE, ds_issue=NV_MIO_ISSUE, crossbar_cycles=NV_SHFL_CYCLES,
                         lds_cycles=NV_SHARED_CYCLES, ds_latency=NV_SHARED_LATENCY, barrier_cycles=NV_BAR_SYNC,
                         warp_barrier_cycles=NV_BAR_WARP_SYNC, lds_port_sharing=NV_MIO_SHARING, pipe_overlap=True)

# RDNA wave32 (gfx1100, gfx1200, gfx1250): a wave of 32 on a 32-lane SIMD (docs/amd_facts.md section 6).
RDNA_VALU_ISSUE = 1.0  # [I] a wave32 VALU (DPP, v_permlane16/x16, v_cndmask, v_perm) in one pass of a 32-lane SIMD
RDNA_DS_ISSUE = 1.0  # [I] issue slot of a DS instruction of a wave32
# [Q RDNA3-ISA, "Data Share Operations"] a SIMD32 pair owns 32 banks of one dword, each bank one read and
# one write per clock: one phase of the LDS model (linlayout.hw.targets.rdna) per cycle, so a conflict-free
# access takes its phase count (gfx11/gfx12: b8-b32 1, b64 2, b128 4; gfx1250's 64 banks [I]: b64 1, b128 2)
RDNA_PHASE_CYCLES = 1.0
RDNA_CROSSBAR_CYCLES = RDNA_PHASE_CYCLES  # [I] ds_bpermute/ds_swizzle: one b32 access's cycles, as on CDNA
RDNA_DPP_CYCLES = 1.0  # [Q RDNA3-ISA 7.7] a DPP instruction costs one cycle more than its plain VALU form
RDNA_DS_LATENCY = 20.0  # [Q LLVM GFX11/GFX12/GFX1250 scheduling models: WriteLDS latency 20 cycles]
RDNA_PARAMETERS = dict(valu_issue=RDNA_VALU_ISSUE, permlane_issue=RDNA_VALU_ISSUE, ds_issue=RDNA_DS_ISSUE,
                       crossbar_cycles=RDNA_CROSSBAR_CYCLES, dpp_hazard=RDNA_DPP_CYCLES, ds_latency=RDNA_DS_LATENCY)

# What a plan's ``cost`` measures (the module docstring, "Objectives"; the default is argued in
# docs/conversions.md).
OBJECTIVES = ("concurrent", "latency", "throughput", "instructions")
WAVES_PER_SIMD = 2  # [I] waves sharing one SIMD: they convert together (concurrent) or hide each other's latency (throughput)

# [I] Policy: plans are ranked by their rank value, the modelled cost times the instructions
# (with estimated setup) to the power ``CostModel.instruction_exponent``; plans whose rank value is
# within a tie fraction of the least are equal, and among them the one with the fewest instructions
# wins (under ``concurrent`` with its bank conflicts' LDS passes: ``CostModel.tie_count``), then a
# plan without LDS (LDS is shared by the CU's waves and limits occupancy).
# ``CostModel.tie_fraction`` is COST_TIE_FRACTION under the objectives that do not price the issue
# slots the rest of the kernel competes for (``latency``; the fraction makes near ties go to fewer
# of them) and CONCURRENT_TIE_FRACTION under ``concurrent``, which prices them: there the fraction
# only absorbs the inferred LDS numbers.  The exponent is 0 (the rank value is the cost) except
# under ``concurrent``, where it is CONCURRENT_INSTRUCTION_EXPONENT: a plan with k times fewer
# instructions outranks one unless that one's modelled cycles are less than k ** -0.55 times its
# own, which weighs the exact instruction count against cycles that rest on inferred ([I])
# numbers.  0.55 is the replay's (benchmarks/rank_rules.py) fewest cases over Triton in either
# measure, region or whole conversion, over the AMD and wave32 corpora, and the least exponent
# meeting both whole-conversion rank trades 1/2 lost (docs/conversions.md section 5).  linlayout.synth.exchanges and the gather rank their pieces,
# priced with the latency table, by the tie rule alone.
COST_TIE_FRACTION = 0.15
CONCURRENT_TIE_FRACTION = 0.05
CONCURRENT_INSTRUCTION_EXPONENT = 0.55
# [I] Under ``concurrent`` the cost a plan ranks by (``CostModel.rank_cost``) counts the cycles its LDS
# accesses' bank conflicts add (``cost_detail["conflict_cycles"]``, in its cost once) 1 + this weight
# times: they rest on one wave's addresses (docs/hardware.md section 5) and a conflict-free plan of a
# few more instructions is the safer pick.  0.125 was the largest weight on the replay's grid
# (benchmarks/rank_rules.py --against, 0.0625 apart) that left no case of the AMD and wave32 corpora
# over Triton in a count and measure where the exponent alone was not (docs/benchmarks.md "Session 22:
# rank28"); at cyc29 0.1875 leaves none either (its 5 fixes are wave32 picks of more setup, whose
# estimate undercounts there), and the weight is kept.
CONCURRENT_CONFLICT_WEIGHT = 0.125
# Policy: under ``concurrent`` the near ties that go by fewest instructions (the policy above
# ``COST_TIE_FRACTION``) count, besides a plan's instructions with setup, the passes its LDS accesses'
# bank conflicts add (``CostModel.tie_count``, ``cost_detail["conflict_passes"]``): a ds_read or ds_write
# whose lanes conflict d ways is d passes of the LDS over its lanes, each the work of a conflict-free
# access of its width, and the bank count that gives d is exact (the plan's own addresses), as the
# instruction count is.  Near ties otherwise went to conflicted plans of fewer instructions whose extra
# passes outnumber them (docs/benchmarks.md "cyc29").  CDNA targets only: the count the passes are
# weighed against holds the estimated setup, which on RDNA undercounts (its ``s_delay_alu``,
# RDNA_OPS_PER_DELAY): there the conflict-free picks of more setup compiled 4 whole conversions over
# Triton's instructions where their estimates were under it (docs/benchmarks.md "cyc29").


TIE_MARGIN = 1e-9  # a rank value this far above a tie limit, a rounding of one at it, is still tied


def tie_limit(value: float, tie_fraction: float) -> float:
    """The greatest rank value tied with the least rank value ``value`` (the policy above):
    ``value * (1 + tie_fraction)``, plus ``TIE_MARGIN`` (infinite for an infinite ``value``)."""
    return value * (1 + tie_fraction) + TIE_MARGIN


def near_best(items: list, cost, count, tie_fraction: float = COST_TIE_FRACTION, instruction_exponent: float = 0.0,
              tie_count=None):
    """The item of least rank value ``cost * max(count, 1) ** instruction_exponent``; of those within
    its tie limit (``tie_limit``), the one with the fewest ``tie_count`` (None: ``count``), then the least
    ``cost``."""
    def value(x) -> float:
        return rank_value(cost(x), count(x), instruction_exponent)
    limit = tie_limit(min(value(x) for x in items), tie_fraction)
    first = count if tie_count is None else tie_count
    return min(items, key=lambda x: (value(x) > limit, first(x), cost(x)))


def rank_value(cost: float, instructions: int, instruction_exponent: float) -> float:
    """``cost * max(instructions, 1) ** instruction_exponent`` (the policy above; the cost itself
    when the exponent is 0)."""
    return cost * max(instructions, 1) ** instruction_exponent if instruction_exponent else cost


def _priced_conflicts(plan, key: str) -> float:
    """``plan.cost_detail[key]``, one of the bank-conflict counts :func:`plan_cost` prices with a plan
    (``conflict_cycles``, ``conflict_passes``); a LayoutError for a plan never priced (none counted is
    not none there)."""
    if key not in plan.cost_detail:
        raise LayoutError(f"the plan has no priced bank conflicts (cost_detail[{key!r}], plan_cost's): "
                          "it was never priced")
    return plan.cost_detail[key]


@dataclass(frozen=True)
class CostModel:
    """The named parameters above, per architecture (all CDNA targets share them today), and the
    objective a plan's cost measures (``OBJECTIVES``) with the waves per SIMD of ``throughput``.

    Every per-instruction price (``instruction``, ``latency``) is the latency table, whatever the
    objective: the planner's inner searches rank their pieces with it, and ``objective_value``
    turns a plan's parts into the objective that ranks the built candidates."""

    arch: str
    valu_issue: float = VALU_ISSUE
    permlane_issue: float = PERMLANE_ISSUE
    ds_issue: float = DS_ISSUE
    crossbar_cycles: float = CROSSBAR_CYCLES
    lds_cycles: dict = field(default_factory=lambda: dict(LDS_CYCLES))
    ds_latency: float = DS_LATENCY
    latency_weight: float = LATENCY_WEIGHT
    barrier_cycles: float = BARRIER_CYCLES
    warp_barrier_cycles: float = 0.0  # a warp-scope barrier (bar.warp.sync); none on AMD (lockstep lanes)
    salu_issue: float = SALU_ISSUE
    alu_delay_cycles: float = ALU_DELAY_CYCLES
    dpp_hazard: float = DPP_HAZARD
    wait_state_cycles: float = WAIT_STATE_CYCLES
    lds_port_sharing: float = LDS_PORT_SHARING
    pipe_overlap: bool = False  # NVIDIA: the LDS (MIO) pipe runs beside the issue of other instructions
    objective: str = "latency"  # cost_model() sets it; the latency table prices the derived tables (``key``)
    waves_per_simd: int = WAVES_PER_SIMD
    _key: tuple | None = field(default=None, init=False, repr=False, compare=False)  # ``key``, once made

    @property
    def tie_fraction(self) -> float:
        """Plans within this fraction of the cheapest are near ties (the policy above
        ``COST_TIE_FRACTION``): ``CONCURRENT_TIE_FRACTION`` under ``concurrent``, else
        ``COST_TIE_FRACTION``."""
        return CONCURRENT_TIE_FRACTION if self.objective == "concurrent" else COST_TIE_FRACTION

    @property
    def instruction_exponent(self) -> float:
        """The power of the instruction count in a plan's rank value (the policy above
        ``COST_TIE_FRACTION``): ``CONCURRENT_INSTRUCTION_EXPONENT`` under ``concurrent``, else 0."""
        return CONCURRENT_INSTRUCTION_EXPONENT if self.objective == "concurrent" else 0.0

    @property
    def conflict_weight(self) -> float:
        """How much more than once a plan's bank-conflict cycles count in the cost it ranks by (the
        policy above ``CONCURRENT_CONFLICT_WEIGHT``): that weight under ``concurrent``, else 0."""
        return CONCURRENT_CONFLICT_WEIGHT if self.objective == "concurrent" else 0.0

    def rank_cost(self, plan) -> float:
        """The cost ``plan`` ranks by: its ``cost`` and ``conflict_weight`` times the cycles its LDS
        accesses' bank conflicts add (``cost_detail["conflict_cycles"]``, ``plan_cost``; a LayoutError there
        for a plan never priced, ``_priced_conflicts``); never less than ``cost``, so every floor of the cost
        bounds it too."""
        if not self.conflict_weight:
            return plan.cost
        return plan.cost + self.conflict_weight * _priced_conflicts(plan, "conflict_cycles")

    def tie_count(self, plan) -> float:
        """What ``plan``'s near ties go by first (the policy below ``CONCURRENT_CONFLICT_WEIGHT``): its
        instructions with setup, and under ``concurrent`` on a CDNA target the passes its LDS accesses'
        bank conflicts add (``cost_detail["conflict_passes"]``, ``plan_cost``; a LayoutError there for a plan
        never priced, ``_priced_conflicts``)."""
        n = plan.total_with_overhead()
        return n + _priced_conflicts(plan, "conflict_passes") if self.passes_in_ties else n

    @property
    def passes_in_ties(self) -> bool:
        """Do near ties count the LDS passes of bank conflicts (``tie_count``)?  Under ``concurrent`` on
        a CDNA target."""
        return self.objective == "concurrent" and get_target(self.arch).family == "cdna"

    def rank_value(self, cost: float, instructions: int) -> float:
        """The rank value of a plan of modelled ``cost`` and ``instructions`` (with setup) under
        this model's policy (``rank_value``)."""
        return rank_value(cost, instructions, self.instruction_exponent)

    def tie_limit(self, value: float) -> float:
        """The greatest rank value tied with the least rank value ``value`` under this model's tie
        fraction (``tie_limit``): every ranking and pruning of near ties compares with it."""
        return tie_limit(value, self.tie_fraction)

    def best_of(self, items: list, cost, count, tie_count=None):
        """``near_best`` of ``items`` under this model's tie fraction and instruction exponent."""
        return near_best(items, cost, count, self.tie_fraction, self.instruction_exponent, tie_count)

    def best_plan(self, plans: list):
        """The first of ``plans`` as the planner ranks whole plans: ``best_of`` their ``rank_cost`` and
        instructions with setup, near ties by ``tie_count``."""
        return self.best_of(plans, self.rank_cost, lambda p: p.total_with_overhead(), self.tie_count)

    @property
    def floors_apply(self) -> bool:
        """Are the planner's cost floors (linlayout.synth.lds_path, ``lower_bound``) lower bounds of
        this objective?  They bound the ``concurrent`` and ``latency`` values (``path_floor``);
        under another objective every candidate is built and ranked."""
        return self.objective in ("concurrent", "latency")

    def path_floor(self, issue: float, pipe: float, latency: float) -> float:
        """A lower bound of the value of this model's objective (``concurrent`` or ``latency``:
        ``floors_apply``) of every plan whose wave issues at least ``issue`` cycles (the ``simd``
        part: every issue slot, the ALU and the setup), whose LDS (MIO) pipe is busy at least
        ``pipe`` cycles (``lds_pipe``) and whose latency (with any spill) is at least ``latency``:
        the path ``issue + pipe + latency``, or where the pipes overlap (``pipe_overlap``)
        ``max(issue, pipe) + latency``, plus ``(waves_per_simd - 1) * issue`` under
        ``concurrent``.  Each value is that same expression of the plan's own parts (the summed
        ``issue + lds + setup`` is ``simd + lds_pipe``), which does not decrease when any part
        grows: so a floor of each part gives a floor of the value."""
        path = (max(issue, pipe) if self.pipe_overlap else issue + pipe) + latency
        return path + (self.waves_per_simd - 1) * issue if self.objective == "concurrent" else path

    def objective_value(self, parts: dict, objective: str | None = None) -> float:
        """The value of ``objective`` (default: the model's) of a plan or an instruction mix from its
        parts (``plan_cost``'s):

        * ``latency``: one wave's critical path, ``issue + lds + latency + setup`` -- every
          instruction's issue slot, the LDS-pipe cycles of its DS instructions (at its share of
          the port), ``ds_latency`` per level of dependent DS instructions and the setup; with
          ``pipe_overlap`` (NVIDIA) the LDS pipe works while the wave issues its other
          instructions, so the path is ``max(simd, lds_pipe) + latency``;
        * ``concurrent``: the ``waves_per_simd`` waves of a SIMD converting together (the waves of
          a workgroup reach a conversion at the same point of the kernel): one wave's path plus
          the issue cycles of the other ``waves_per_simd - 1``, which share its SIMD's issue
          (``path + (waves_per_simd - 1) * simd``; the LDS pipe is already in the path at the
          wave's share of the port, ``lds_port_sharing``);
        * ``throughput``: the busiest resource when ``waves_per_simd`` waves share the SIMD and
          hide each other's latency: ``max(simd, lds_pipe, latency_value / waves_per_simd)``
          (``simd``: the wave's issue cycles on its SIMD, setup included; ``lds_pipe``: its
          LDS-pipe cycles);
        * ``instructions``: instructions with estimated setup (64-bit register steps twice).
        """
        objective = objective or self.objective
        if objective == "instructions":
            return float(parts["instructions"])
        if self.pipe_overlap:
            path = max(parts["simd"], parts["lds_pipe"]) + parts["latency"]
        else:
            path = parts["issue"] + parts["lds"] + parts["latency"] + parts["setup"]
        if objective == "latency":
            return path
        if objective == "concurrent":
            return path + (self.waves_per_simd - 1) * parts["simd"]
        return max(parts["simd"], parts["lds_pipe"], path / self.waves_per_simd)

    def key(self) -> tuple:
        """A hashable value naming every pricing parameter (for caches of derived tables, which are
        priced with the latency table whatever the objective); made once (a model is not changed once made)."""
        if self._key is None:
            object.__setattr__(self, "_key", self._make_key())
        return self._key

    def _make_key(self) -> tuple:
        return (self.arch, self.valu_issue, self.permlane_issue, self.ds_issue, self.crossbar_cycles,
                tuple(sorted(self.lds_cycles.items())), self.ds_latency, self.latency_weight, self.barrier_cycles,
                self.warp_barrier_cycles, self.salu_issue, self.alu_delay_cycles, self.dpp_hazard,
                self.wait_state_cycles, self.lds_port_sharing, self.pipe_overlap)

    @classmethod
    def from_key(cls, key: tuple) -> "CostModel":
        (arch, valu, perm, ds, xbar, lds, lat, lw, bar, warp_bar, salu, delay, hz, wait, share, overlap) = key
        return cls(arch, valu, perm, ds, xbar, dict(lds), lat, lw, bar, warp_bar, salu, delay, hz, wait, share,
                   overlap)

    def instruction(self, kind: str, width_bytes: int = 4, conflict_degree: float = 1.0) -> float:
        """Cycles of one instruction of ``kind`` (a COUNT_KINDS name); LDS ops take their access's
        ``width_bytes`` per lane."""
        if kind in ("v_cndmask", "v_perm_b32", "v_mov", "selp", "prmt", "mov"):
            return self.valu_issue
        if kind == "dpp":
            return self.valu_issue + self.dpp_hazard
        if kind in ("permlane16_swap", "permlane32_swap", "permlane16"):
            return self.permlane_issue
        if kind in ("ds_bpermute", "ds_swizzle", "shfl"):
            return self.ds_issue + self.crossbar_cycles * self.lds_port_sharing
        if kind == "readlane":
            return self.valu_issue
        if kind == "movmatrix":
            return NV_MOVMATRIX_SHUFFLES * self.instruction("shfl")
        if kind in ("lds_write", "lds_read", "lds_read_tr"):
            return self.ds_issue + self.lds_cycles.get(width_bytes, 20.0) * conflict_degree * self.lds_port_sharing
        if kind == "s_barrier":
            return self.barrier_cycles
        if kind == "bar.warp.sync":
            return self.warp_barrier_cycles
        raise KeyError(kind)

    def lds_pipe_share(self, kind: str) -> float:
        """Cycles the LDS (MIO) pipe is busy with one register instruction of ``kind`` (a COUNT_KINDS
        name): a crossbar move's (``CROSSBAR_KINDS``) price beyond its issue slot
        (``instruction(kind) - ds_issue``), 0 for any other; the rest of its price is the wave's issue
        (the ``simd`` part, ``plan_cost``)."""
        return self.instruction(kind) - self.ds_issue if kind in CROSSBAR_KINDS else 0.0

    def lane_family_cost(self) -> dict[str, float]:
        """Costs used to rank single lane-moving instructions (linlayout.synth.lane_ops)."""
        return {"dpp": self.instruction("dpp"), "ds_swizzle": self.instruction("ds_swizzle") + 0.5,
                "ds_bpermute": self.instruction("ds_bpermute") + 1.0, "shfl": self.instruction("shfl"),
                "permlane16": self.instruction("permlane16") + 0.5}

    def latency(self, ds_depth: int) -> float:
        return self.latency_weight * self.ds_latency * ds_depth

    def table(self) -> list[dict]:
        """The cost table as rows (for docs and ``--json``)."""
        rows = []
        for kind in ("v_cndmask", "v_perm_b32", "v_mov", "dpp", "permlane16_swap", "permlane32_swap",
                     "ds_swizzle", "ds_bpermute", "s_barrier"):
            rows.append({"kind": kind, "cycles": self.instruction(kind)})
        for w in sorted(self.lds_cycles):
            rows.append({"kind": f"lds b{8 * w}", "cycles": self.instruction("lds_read", w)})
        rows.append({"kind": "ds latency per dependent level", "cycles": self.latency(1)})
        return rows


def cost_model(arch: str, objective: str | None = None) -> CostModel:
    """The cost model of ``arch`` (validated through linlayout.hw.targets) under ``objective`` (None:
    the target's ``default_objective``): the CDNA parameters, the NVIDIA ones
    (``NVIDIA_PARAMETERS``) for an NVIDIA target, the wave32 ones (``RDNA_PARAMETERS``, LDS cycles
    ``_rdna_lds_cycles``) for an RDNA target."""
    target = get_target(arch)
    objective = target.default_objective if objective is None else objective
    if objective not in OBJECTIVES:
        raise LayoutError(f"objective {objective!r} must be one of {', '.join(OBJECTIVES)}")
    if target.family == "nvidia":
        family = dict(NVIDIA_PARAMETERS, lds_cycles=dict(NV_SHARED_CYCLES))
    elif target.family == "rdna":
        family = dict(RDNA_PARAMETERS, lds_cycles=_rdna_lds_cycles(target))
    else:
        family = {}
    return CostModel(target.name, objective=objective, **family)


def _rdna_lds_cycles(target) -> dict[int, float]:
    """LDS-pipe cycles of a conflict-free access of each width (bytes per lane) on an RDNA target:
    ``RDNA_PHASE_CYCLES`` per phase of the target's LDS model, the more phased of its load and store."""
    model = lds_model(target.name)
    return {w: RDNA_PHASE_CYCLES * max(model.op(target.lds_op_name(store, w)).num_phases for store in (False, True))
            for w in LDS_CYCLES}


# ====================================================================== plans
def _lds_op_name(arch: str, store: bool, width_bytes: int, transpose: int = 0) -> str:
    """The LDS instruction of ``arch`` moving ``width_bytes`` per lane (``Target.lds_op_name``), or its
    transpose load of ``transpose``-bit elements (``Target.transpose_load``).  ``LayoutError`` where it
    has no such load: a plan read from a certificate, or built of public steps, for a target that lacks
    it reaches here when priced (``plan_cost``)."""
    target = get_target(arch)
    if transpose:
        missing = missing_transpose_load(arch, transpose, width_bytes, target.wave_size)
        if missing:
            raise LayoutError(missing)
        return target.transpose_load(transpose, width_bytes).name
    return target.lds_op_name(store, width_bytes)


_bank_cache = caches.cache("synth.cost.bank_conflict_degree", size=8192)  # 8192: one per LDS access priced


def lds_conflict_degree(arch: str, store: bool, width_bytes: int, addr, element_bits: int,
                        transpose: int = 0) -> float:
    """Bank cycles / conflict-free cycles of one LDS access of ``width_bytes`` per lane (warp 0's
    byte addresses; ``transpose``: the element bits of a transpose load), from
    linlayout.synth.banks.

    Memoized on the access up to a move that keeps its cycles: XOR by a multiple of the width
    keeps every lane aligned and maps the dwords by a fixed XOR (banks by a fixed XOR too), so
    every phase's per-bank counts are only permuted; an unaligned access is kept by its shape
    (``a - min``) and where it starts in the 256-byte bank window."""
    a = _warp0(addr)
    c = int(a[0])
    if c % width_bytes == 0:
        key = (arch, store, width_bytes, transpose, element_bits, (a ^ c).tobytes(), None)
    else:
        low = int(a.min())
        key = (arch, store, width_bytes, transpose, element_bits, (a - low).tobytes(), low % 256)
    degree = _bank_cache.get(key)
    if degree is None:
        element_bytes = max(1, element_bits // 8)  # a sub-byte element (a plan read from JSON) addresses its byte
        op = _lds_op_name(arch, store, width_bytes, transpose)
        moved = a ^ c if key[-1] is None else a
        try:
            cycles, ideal = banks.lane_cycles(arch, op, moved // element_bytes, element_bits)
        except LayoutError as e:  # the planner built an access the hardware cannot make: a bug
            raise RuntimeError(f"an LDS access of the plan is not one {arch} can make: {e}") from e
        degree = _bank_cache[key] = cycles / max(1, ideal)
    return degree


def _warp0(addr) -> np.ndarray:
    """Warp 0's byte addresses ``[lanes]`` of a per-lane table ``[lanes]`` or ``[warps, lanes]``."""
    a = np.asarray(addr)
    return a[0] if a.ndim == 2 else a


def lds_access_cost(cm: CostModel, arch: str, store: bool, width_bytes: int, addr, element_bits: int,
                    paired: bool, transpose: int = 0) -> float:
    """Issue plus LDS-pipe cycles of one ds_write/ds_read of ``width_bytes`` per lane (``paired``: a
    ds_write2/ds_read2, whose second access has the same pattern; ``transpose``: a transpose load of
    elements of that many bits, priced as a read of its width)."""
    kind = "lds_write" if store else "lds_read"
    one = cm.instruction(kind, width_bytes, lds_conflict_degree(arch, store, width_bytes, addr, element_bits,
                                                                transpose))
    return one + (one - cm.ds_issue if paired else 0.0)


_matrix_cache = caches.cache("synth.cost.matrix_wavefronts", size=4096)


def matrix_access_cost(cm: CostModel, arch: str, name: str, addr) -> float:
    """Issue plus shared-memory-pipe cycles of one ``ldmatrix``/``stmatrix`` of form ``name``
    (``ldmatrix.x4.trans`` ...) whose lanes give the row addresses ``addr`` (warp 0's): the bank
    model's wavefronts (linlayout.synth.banks, the phases of its address lanes) at
    NV_MATRIX_WAVEFRONT_CYCLES each, at the pipe's sharing."""
    a = _warp0(addr).astype(np.int64)
    key = (arch, name, (a - a.min()).tobytes(), int(a.min()) % 128)  # banks repeat every 128 bytes
    if key not in _matrix_cache:
        try:
            wavefronts, _ = banks.lane_cycles(arch, name, a, 8)
        except LayoutError as e:  # the planner built an access the hardware cannot make: a bug
            raise RuntimeError(f"a matrix access of the plan is not one {arch} can make: {e}") from e
        _matrix_cache[key] = float(wavefronts)
    return cm.ds_issue + NV_MATRIX_WAVEFRONT_CYCLES * _matrix_cache[key] * cm.lds_port_sharing


class _DsChain:
    """The chain of dependent DS instructions of ``ds_depth``: each step extends it through one of
    these primitives (``Step.add_to_ds_chain``).  ``depth[slot]``: the DS levels the slot's value
    depends on (absent: none); ``memory``: the level of the latest LDS data."""

    def __init__(self) -> None:
        self.depth: dict[int, int] = {}
        self.memory = self.best = 0

    def level(self, slots) -> int:
        return max(map(self.depth.get, slots, repeat(0)), default=0) if self.depth else 0

    def register_step(self, reads: list[int], writes: list[int], crossbar: bool) -> None:
        """A register step: its results depend on what it reads, one level more through the crossbar."""
        depth = self.depth
        d = self.level(reads) + (1 if crossbar else 0)
        if d or depth:  # (level 0 everywhere: an empty chain stays empty)
            for s in writes:
                depth[s] = d
            if d > self.best:
                self.best = d

    def lds_store(self, slots: list[int]) -> None:
        self.memory = max(self.memory, self.level(slots) + 1)

    def lds_load(self, slots: list[int]) -> None:
        self.depth.update(dict.fromkeys(slots, self.memory + 1))
        self.best = max(self.best, self.memory + 1)


def ds_depth(plan) -> int:
    """Longest chain of dependent DS instructions (crossbar moves, LDS store -> load); a
    two-address access (read2/write2) reads or writes the slots of both halves."""
    chain = _DsChain()
    for st in plan.steps:
        st.add_to_ds_chain(chain)
    return chain.best


def lgkm_waits(plan) -> int:
    """The ``s_waitcnt`` LLVM puts in the region of an AMD ``plan``: LDS accesses and crossbar moves
    (``ds_bpermute``, ``ds_swizzle``) complete in issue order (one ``lgkmcnt`` counter), so a wait goes
    before each barrier that follows LDS stores or unwaited results, and before each instruction
    (a register step, an LDS store, a crossbar move) that reads the result of a DS op issued after
    the last one waited for: on RDNA targets that wait is for that op (the next reader of a newer
    one waits again); on CDNA targets, where the wait the lowering puts before the first register
    instruction after LDS loads (linlayout.lowering.emit.atoms.lds_wait) holds, a wait for a load
    is for every DS op issued.  One more at the end where a crossbar move's result is still
    unwaited; LDS loads whose results are only read after the region need no wait in it.  A step of
    no instruction (a renaming) passes its slots' writers on.  (On the compiled corpora of 0b196bb:
    the region's waits of 596 of 615 wave32 and 666 of 691 AMD plans, off by 19 and 70 in all; the
    DS depth, two for a round trip, matched 136 and 212, off by 770 and 680; docs/benchmarks.md.)"""
    drain = get_target(plan.arch).family == "cdna"
    waits = issued = waited = last_crossbar = 0
    writer: dict[int, int] = {}  # slot -> the issue number of the DS op that wrote it
    loads: set[int] = set()  # the issue numbers of LDS loads
    stores = False

    def wait_for(slots) -> None:
        nonlocal waits, waited
        if issued <= waited:  # every DS result issued is waited for (need <= issued)
            return
        need = max(map(writer.get, slots, repeat(0)), default=0)
        if need > waited:
            waits += 1
            waited = issued if drain and need in loads else need

    for st in plan.steps:
        if st.barrier:
            if stores or issued > waited:
                waits += 1
                waited = issued
            stores = False
        elif st.lds and st.store:
            wait_for(st.reads())
            stores = True
        elif st.lds or st.crossbar:
            if st.crossbar:
                wait_for(st.reads())
                last_crossbar = issued + 1
            else:
                loads.add(issued + 1)
            issued += 1
            writer.update(dict.fromkeys(st.writes(), issued))
        elif not st.counts():  # a renaming: the slots it writes hold what it reads
            for d, s in zip(st.writes(), st.reads()):
                writer[d] = writer.get(s, 0)
        else:
            wait_for(st.reads())
            if writer:
                for d in st.writes():
                    writer.pop(d, None)
    return waits + (1 if last_crossbar > waited else 0)


PTX_ADDR_BASE_VALU = 3  # [I] integer ops forming one lane/warp-dependent shared-memory address in PTX
BPERMUTE_ADDR_VALU = 2  # [I] integer ops forming one shfl source-lane register in PTX
# [I] s_mov_b32 x2: a 64-bit lane mask into an SGPR pair; a condition uniform in each wave takes about as
# many (s_cmp + s_cselect of the warp id).
VCC_SALU = 2
# [I] SALU of a whole-warp condition that is the parity of two or more warp-id bits (lane_choices.warp_parity_bits)
# on an AMD target, by wave size, as linlayout.lowering.emit.lane_values computes it: s_and_b32 of the warp id,
# s_bcnt1_i32_b32, s_bfe_i32 (the sign of the count's low bit: the mask of a wave32) and on a wave64 s_ashr_i32 for
# the mask's high word (our compiled gfx942 and gfx1100 kernels, tests/test_fuzz_regressions.py).
WARP_PARITY_SALU = {32: 3, 64: 4}
# [I] s_mov_b32 vcc_lo: a wave32 lane mask (the same in every warp), as our compiled RDNA kernels load it.
# Priced at 1 with the planner's s_delay_alu at SALU_ISSUE, plans of the wave32 corpus came out worse
# (docs/benchmarks.md, x16setup22); with ALU_DELAY_CYCLES none (docs/benchmarks.md, "Session 20: the
# planner's ALU waits").
WAVE32_LANE_MASK_SALU = 1
# [I] s_mov_b32: gfx9 VOP3 takes no literal, so a constant v_perm selector lives in an SGPR.  RDNA's VOP3 takes
# it as its literal (no instruction, PlanEmitter.scalar_constant), but priced at 0 there the wave32 corpus's
# plans came out worse (regions +28, whole +12 instructions, docs/benchmarks.md), so it is 1 on every target.
PERM_SELECTOR_SALU = 1
# [I] s_mov_b32: the low word of a v_permlane16/x16 lane selector in an SGPR (the high word is a literal:
# a VOP3 takes one on gfx11 and later; our compiled RDNA kernels, docs/amd_facts.md 6.4)
PERMLANE_SELECTOR_SALU = 1
# [I] the SALU writing one register index into m0 for the ``v_movrels_b32`` of ``Movrels`` steps (the index is
# the warp id's place among the warps' register offsets, ``steps.movrels.index_ranks``): one write of m0 (LLVM
# writes it from the warp id's SGPR, ``s_lshr_b32 m0``/``s_mov_b32 m0``, docs/amd_facts.md 6.7), and where the
# index is not the warp id itself an ``s_cmp`` + ``s_cselect`` per warp whose index differs from warp 0's (the
# lowering's select chain, as a warp-dependent condition's).
MOVRELS_M0_SALU = 1
MOVRELS_WARP_SALU = 2
# [I] The SALU of a kernel storing a dst read in one copy (``Plan.dst_one_copy``) from its canonical lanes alone:
# the constant lane mask's s_mov_b32, s_and_saveexec_b32 and s_cbranch_execz around the stores (our compiled
# gfx1100 kernels; Triton's add a v_cmp forming its mask from the thread id)
ONE_COPY_STORE_SALU = 3
# How the src VGPRs arrive by default: aligned tuples of this many dwords in register order (an
# MFMA result, a dwordx4 load), which an LDS store of other register groups must copy (tuple_copies).
# A kernel that loads its src otherwise says so (ConversionContext.src_tuples: linlayout.synth.vgpr_tuples).
SRC_TUPLE_DWORDS = 4
# What the dst's consumer takes whole by default: single VGPRs (no tuple; ConversionContext.dst_tuples).
DST_TUPLE_DWORDS = 1


class _AddressBases:
    """The LDS address VGPRs formed so far (warp 0's per-lane byte addresses and each register's warp
    columns, ``warp_columns``), indexed so that "differs from a formed one by a constant" is a lookup:
    ``a - b`` is constant iff ``a - a[0]`` equals ``b - b[0]`` in warp 0 (same for XOR) and the two have
    the same warp columns.  ``opaque_adds``: the target's ``Target.opaque_beyond_offset_adds`` (an add
    beyond the offset field reads its base through a copy, one ``v_mov_b32`` per base:
    linlayout.lowering.emit.lane_values)."""

    def __init__(self, opaque_adds: bool = False) -> None:
        self.by_difference: dict[bytes, dict[tuple[int, ...], list[int]]] = {}  # a - a[0] -> warp -> a[0]s
        self.by_xor: set[tuple[bytes, tuple[int, ...]]] = set()  # (a ^ a[0], warp)
        self.new: list[tuple[int, bool]] = []  # (access, XOR a constant of a formed one) of each new register
        self.joined: list[int] = []  # accesses whose register is a formed one's lane part and its own warp part
        self.opaque_adds = opaque_adds
        self.copied: set[tuple[bytes, tuple[int, ...]]] = set()  # the classes whose base has its opaque copy

    def seed(self, formed) -> None:
        """Take the registers ``formed`` (``SrcOffsets.registers``: ``(a - a[0], a ^ a[0], warp columns, a[0])``
        each, warp 0's bytes) as formed before any LDS address: the kernel's src load line made them, and
        LLVM's common-subexpression elimination lets the setup reuse them (linlayout.synth.src_offsets)."""
        for diff, xor, warp, a0 in formed:
            self.by_difference.setdefault(diff, {}).setdefault(warp, []).append(a0)
            self.by_xor.add((xor, warp))

    def cost(self, a0: int, diff: bytes, xor: bytes, st, i: int, warp: tuple[int, ...] = ()) -> int:
        """VALU ops to form the address ``a`` of LDS access ``i`` (step ``st``), given as ``a[0]``, the
        bytes of ``a - a[0]`` and ``a ^ a[0]`` (warp 0's) and its warp columns ``warp``: 0 when a formed
        one plus an immediate offset reaches it (``st.offset_reaches``), 1 (``v_add_u32``) when it
        differs from a formed one by another constant (2 for the first such add of a class with
        ``opaque_adds``: the base's copy).  An address whose warp-0 part is a formed one's plus a
        constant but whose warp columns are another's is a register of its own made of that lane part
        (LLVM computes it once) and its warp part (:attr:`joined`, priced by the caller), 0 here; else it
        is a new register (:attr:`new`, priced by the caller), 0 here."""
        by_warp = self.by_difference.get(diff)
        if by_warp is None:
            self.by_difference[diff] = {warp: [a0]}
            self.new.append((i, (xor, warp) in self.by_xor))
            self.by_xor.add((xor, warp))
            return 0
        self.by_xor.add((xor, warp))
        starts = by_warp.get(warp)
        if starts is None:
            by_warp[warp] = [a0]
            self.joined.append(i)
            return 0
        for b0 in starts:
            if st.offset_reaches(a0 - b0):
                return 0
        starts.append(a0)
        if self.opaque_adds and (diff, warp) not in self.copied:
            self.copied.add((diff, warp))
            return 2
        return 1


def lds_address_valu(steps, arch: str, formed=(), one_wave: bool = False) -> int:
    """``valu_lds_addr`` of ``estimate_overhead``: the instructions forming the addresses of the LDS
    steps ``steps`` (LdsStore/LdsLoad, in issue order; ``addresses_valu``) on ``arch`` after the registers
    ``formed`` (``AddressRegisters.of``) in a kernel of one wave or not (``one_wave``): VALU ops, and
    the warp part of the addresses (``warp_columns``, ``warp_part_ops``), whose SALU ops the key counts
    and prices as VALU too (one issue each: on wave64 an upper bound of a SALU's)."""
    if not steps:
        return 0
    return addresses_valu(np.array([_warp0(st.addr) for st in steps], dtype=np.int64), steps, arch,
                          [warp_columns(st.addr) for st in steps], formed, one_wave)


def addresses_valu(addresses: np.ndarray, forms, arch: str, warp_cols=None, formed=(), one_wave: bool = False) -> int:
    """Instructions forming the LDS addresses ``addresses`` (``[accesses, lanes]`` int64, warp 0's byte
    addresses in issue order) of accesses made by the LDS steps ``forms`` (one per access, which gives
    only its immediate offsets, ``offset_reaches``, not its address) on ``arch``, their warp parts
    ``warp_cols`` (one ``warp_columns`` per access; None: none), after the registers ``formed``, in a kernel
    of one wave or not (``one_wave``): ``AddressRegisters.of(...).count()``."""
    return AddressRegisters.of(addresses, forms, arch, warp_cols, formed, one_wave).count()


def warp_columns(addr) -> tuple[int, ...]:
    """The warp columns ``W_b`` of a byte address table ``[warps, lanes]`` (``addr[2**b] ^ addr[0]`` in
    lane 0: the warp part of a GF(2)-affine table, linlayout.synth.lane_arith); () for a ``[lanes]``
    table or one warp."""
    a = np.asarray(addr)
    if a.ndim != 2 or a.shape[0] < 2:
        return ()
    first = int(a[0, 0])
    return tuple(int(a[1 << b, 0]) ^ first for b in range(a.shape[0].bit_length() - 1))


def _warp_shift_terms(cols: tuple[int, ...]) -> dict[int, int]:
    """The shift terms of a warp part with warp columns ``cols``: shift ``s`` -> mask ``m`` of the warp
    bits that land ``s`` bits up (the part is the OR of ``(w & m) << s``; a negative ``s`` shifts down)."""
    by_shift: dict[int, int] = {}
    for b, col in enumerate(cols):
        o = 0
        while col >> o:
            if (col >> o) & 1:
                by_shift[o - b] = by_shift.get(o - b, 0) | (1 << b)
            o += 1
    return by_shift


def _whole_warp_shifted(cols: tuple[int, ...]) -> bool:
    """Whether the warp part with warp columns ``cols`` is the whole warp id shifted (one shift term whose
    mask is every warp bit): ``warp_part_ops`` counts it as the one VALU joining it to the lane part."""
    by_shift = _warp_shift_terms(cols)
    return len(by_shift) == 1 and next(iter(by_shift.values())) == (1 << len(cols)) - 1


def warp_part_ops(parts) -> int:
    """[I] The instructions LLVM makes of the warp parts ``parts`` of a kernel's LDS address registers
    (each register's ``warp_columns``, in issue order), as measured on the corpora's multi-warp LDS
    plans (benchmarks/warp_part.py; docs/benchmarks.md "The warp part of LDS addresses"):

    * a part that is the whole warp id shifted (one shift term whose mask is every warp bit: LLVM knows
      the warp id's range) is one VALU per register, ``v_lshl_or_b32 v, s_warp, s, v_lane``;
    * any other part is its shift terms (``(w & m) << s``: lane_arith's terms on the warp id), one
      SALU each (``s_lshl_b32``, ``s_and_b32`` or ``s_bfe_u32``: LLVM folds the warp id's own shift
      and mask into one op of the term, and shares a term between parts), and one ``s_or_b32`` per
      further term of each distinct part; the join into the lane address rides in a 3-input VALU
      (``v_or3_b32``, which reads the SGPR), no instruction.

    Parts without a warp column cost nothing."""
    n = 0
    terms_done: set[tuple[int, int]] = set()
    parts_done: set[tuple[int, ...]] = set()
    for cols in parts:
        if not any(cols):
            continue
        by_shift = _warp_shift_terms(cols)
        if _whole_warp_shifted(cols):
            n += 1  # v_lshl_or_b32 of the whole warp id
            continue
        if cols in parts_done:
            continue
        parts_done.add(cols)
        for term in by_shift.items():
            if term not in terms_done:
                terms_done.add(term)
                n += 1
        n += len(by_shift) - 1
    return n


@dataclass(frozen=True)
class AddressRegisters:
    """The instructions forming a round trip's LDS addresses in two parts: ``fixed``, the adds and XORs
    of formed registers (and on PTX targets every new register's), and the other new registers, the
    tables of one op program (``tables``: ``lane_arith.tables_valu``'s entries, in issue order; its
    ``family``, ``lane_bits`` and ``one_wave``).  ``count()`` is the instruction count, ``least()`` a lower bound of
    it that builds no program (``lane_arith.least_tables_valu``): the planner orders round trips by
    the second and works out the first only for those that might come next (lds_path.DesignPool)."""

    fixed: int
    family: str | None  # lane_arith.program_family's (None on PTX targets: no table)
    lane_bits: int
    tables: tuple
    warp: int = 0  # warp_part_ops of the new registers' warp parts
    one_wave: bool = False  # the kernel is one wave (lane_arith.LaneProgram's)
    prior: tuple = ()  # the load line's tables whose terms the program has built (tables_valu's prior)

    @classmethod
    def of(cls, addresses: np.ndarray, forms, arch: str, warp_cols=None, formed=(),
           one_wave: bool = False) -> "AddressRegisters":
        """The registers forming ``addresses`` (``addresses_valu``'s arguments) after the registers ``formed``
        (``SrcOffsets.registers``: the kernel's src load line's, which LLVM's common-subexpression
        elimination lets the setup reuse, linlayout.synth.src_offsets; () on PTX targets and without
        warp columns: none taken): their adds and XORs, and in the kernels ``LOAD_LINE_TERMS`` names the
        terms of their program too (:attr:`prior`, ``load_line_tables``: the lowering builds the setup's
        tables in the load line's program, so that a term the load line built is no new instruction).

        An address that a formed register plus a constant reaches costs 0 or 1 (``_AddressBases``), a
        new register that is a formed one XOR a constant 1 (a ``v_xor_b32``; ``xor`` on PTX targets).  The
        other new registers are, on AMD targets, the tables of one op program
        (linlayout.synth.lane_arith.tables_valu: shared terms, a table made from a formed one by an XOR
        where cheaper), each its class's address less the bits of its constant that no lane column
        touches (the lowering's register, linlayout.lowering.emit.plan_ops ``_address_base``: those bits
        go to the immediate offset); on PTX targets PTX_ADDR_BASE_VALU each (``fixed``, no table).  (The
        lowering's program builds the XOR'ed registers too, as one op each but where sharing its terms
        differently changes another table's fusions: on the programs of the corpora's round trips the
        count is the program's in 1165 of 1287, 1 to 3 below it in the others.)  The program is warp 0's;
        the warp parts of the new registers (``warp_cols``, one per access; AMD targets) are
        ``warp_part_ops`` (:attr:`warp`), except for a register that ``lane_arith.thread_id_form`` takes from
        the thread id (a ``LaneTable`` with its ``warp_cols`` in the program, no warp part: the lowering's
        ``PlanEmitter.lds_address`` builds it so).  An address whose warp-0 part a formed register reaches but whose
        warp columns differ from that register's (``_AddressBases.joined``) is its own register, the lowering's
        (plan_ops ``_address_base`` keys a class on every warp's addresses): LLVM computes the lane part once
        and joins the other warp part to it, one VALU (``fixed``) unless ``warp_part_ops``' own
        ``v_lshl_or_b32`` of the whole warp id is the join, and its warp part's SALU (:attr:`warp`)."""
        a0 = addresses[:, :1]
        row = addresses.shape[1] * addresses.itemsize  # the bytes of one access
        diffs, xors = (addresses - a0).tobytes(), (addresses ^ a0).tobytes()
        target = get_target(arch)
        if target.lds_isa == "ptx":
            warp_cols = None  # PTX_ADDR_BASE_VALU holds the warp part
        bases = _AddressBases(target.opaque_beyond_offset_adds)
        if warp_cols is not None:
            bases.seed(formed)
        n = sum(bases.cost(first, diffs[i * row:(i + 1) * row], xors[i * row:(i + 1) * row], st, i,
                           warp_cols[i] if warp_cols is not None else ())
                for i, (first, st) in enumerate(zip(a0[:, 0].tolist(), forms)))
        lane_bits = addresses.shape[1].bit_length() - 1
        if target.lds_isa == "ptx":
            return cls(n + sum(1 if xor_of_formed else PTX_ADDR_BASE_VALU for _, xor_of_formed in bases.new),
                       None, lane_bits, ())
        tables, parts = [], []
        for i in bases.joined:  # a formed lane part and its own warp part: one VALU joins a part not joined
            parts.append(warp_cols[i])  # by warp_part_ops' own v_lshl_or_b32
            n += any(warp_cols[i]) and not _whole_warp_shifted(warp_cols[i])
        family = program_family(arch)
        for i, xor_of_formed in bases.new:
            if xor_of_formed:
                n += 1  # a v_xor_b32
                continue
            cols = linear_columns(xors[i * row:(i + 1) * row])
            warp = warp_cols[i] if warp_cols is not None else ()
            if cols is not None and any(warp):
                span = 0
                for col in cols + warp:
                    span |= col
                aff = AffineTable(int(a0[i, 0]) & span, cols, warp)
                if thread_id_form(family, lane_bits, aff):  # built from the thread id: no warp part
                    tables.append(LaneTable(aff.const, cols, warp_cols=warp))
                    continue
            if warp_cols is not None:
                parts.append(warp_cols[i])
            if cols is None:
                tables.append(None)
                continue
            span = 0
            for col in cols:
                span |= col
            tables.append((int(a0[i, 0]) & span, cols))
        prior = load_line_tables(formed) if warp_cols is not None and takes_load_line_terms(one_wave) else ()
        return cls(n, family, lane_bits, tuple(tables), warp_part_ops(parts), one_wave, prior)

    def count(self) -> int:
        """The instructions forming the addresses: ``fixed``, the tables' program after :attr:`prior`'s (not
        counted) and the warp parts."""
        return self.fixed + (tables_valu(self.family, self.lane_bits, self.tables, self.prior, self.one_wave)
                             if self.tables else 0) + self.warp

    def least(self) -> int:
        """A lower bound of ``count()``: ``fixed`` and ``least_tables_valu`` of the tables."""
        return self.fixed + least_tables_valu(self.tables)


#: [I] The kernels whose LDS address programs are priced after their src load line's program
#: (``AddressRegisters.prior``): ``"one_wave"``, kernels of one wave; ``"every"``, all; ``"none"``, no kernel (the
#: estimate before session 24).  The bench kernel's lowering builds the setup's tables in the program of the load
#: line's (one ``LaneValues``), so a term the load line built (``tid & 15``, ``tid << 2``) is reused, and LLVM keeps
#: it: on the corpora's plans (docs/benchmarks.md, "Session 24: share31") 96% of what the load line's terms take
#: off the estimate is in plans whose compiled setup reads a VGPR the load line wrote.  With ``"every"`` the
#: one-wave and two-wave estimates meet the compiled setups better (sum of |estimate - compiled| 149 -> 97 and
#: 144 -> 122 on gfx9, 291 -> 229 and 226 -> 165 on RDNA), the 8-wave gfx9 ones worse (212 -> 253: the rest of
#: their estimate, the warp parts and LLVM's own fusions, is under the compiled setups, which the lane programs'
#: overcount hid), and the wave32 corpus's planner chose two 8-wave plans whose compiled warp parts are far above
#: that estimate (whole losses 3 -> 5); ``"one_wave"`` keeps every whole count at or below session 23's.
LOAD_LINE_TERMS = "one_wave"


def takes_load_line_terms(one_wave: bool) -> bool:
    """Whether the LDS address program of a kernel of one wave or not (``one_wave``) is priced after its src load
    line's (``LOAD_LINE_TERMS``; a value other than its three a LayoutError)."""
    if LOAD_LINE_TERMS not in ("one_wave", "every", "none"):
        raise LayoutError(f"LOAD_LINE_TERMS is one_wave, every or none, not {LOAD_LINE_TERMS!r}")
    return LOAD_LINE_TERMS == "every" or (LOAD_LINE_TERMS == "one_wave" and one_wave)


def load_line_tables(formed) -> tuple:
    """The lane tables ``(const, lane_cols)`` (``lane_arith.row_table``) of the registers ``formed`` (a sequence of
    ``SrcOffsets.registers``' ``(a - a[0], a ^ a[0], warp columns, a[0])``, warp 0's bytes) that are GF(2)-affine:
    the tables of the kernel's src load line's program, whose terms a setup program built after them reuses
    (``lane_arith.tables_valu``'s ``prior``)."""
    return _load_line_tables(tuple(formed))


@caches.memoize("synth.cost.load_line_tables", size=1 << 12)
def _load_line_tables(formed: tuple) -> tuple:
    """:func:`load_line_tables` of a tuple."""
    out = []
    for diff, _, _, a0 in formed:
        fit = row_table(a0 + np.frombuffer(diff, dtype=np.int64))
        if fit is not None:
            out.append(fit)
    return tuple(out)


def least_address_valu(ctx) -> int:
    """The fewest instructions ``addresses_valu`` counts for the first LDS address of a round trip of the
    conversion ``ctx`` (linlayout.synth.context.ConversionContext): a floor of the planner's bounds.  On
    AMD targets 1 (``lane_arith.tables_valu`` counts at least one per table: a ``v_and_b32``), 0 where the
    kernel's src load line formed registers (``ctx.src_offsets``: one of them may be that address) and for
    8-bit elements (an address table equal to the lane id, byte ``l``, costs none: ``lane_arith._lane_id``;
    wider elements' addresses are aligned to their bytes, never ``l``); on PTX targets PTX_ADDR_BASE_VALU."""
    if ctx.target.lds_isa == "ptx":
        return PTX_ADDR_BASE_VALU
    return 0 if ctx.src_offsets is not None or ctx.element_bits == 8 else 1


def bpermute_address_valu(tables, arch: str, num_warps: int, formed=(), one_wave: bool | None = None) -> int:
    """``valu_bpermute_addr`` of ``estimate_overhead``: the instructions forming the distinct
    ``ds_bpermute`` byte-address tables ``tables`` (each ``[lanes]`` or ``[warps, lanes]``, negative where
    no lane reads: don't-care; ``num_warps`` warps) on ``arch``, as the lowering makes them
    (linlayout.lowering.emit.lane_values, on every warp's table): a table that an earlier one plus a
    constant in ``[0, OFFSET_LIMIT)`` gives on its lanes that read costs nothing (``PlanEmitter.
    bpermute_address``: LLVM folds the constant into the instruction's 16-bit ``offset:``); the others are
    one op program for their lane parts (lane_arith.tables_valu, each read in ``bpermute_address_bits`` alone: a
    shift term may be the thread id shifted) and their warp parts as LLVM makes them
    (``warp_part_ops``, as for LDS addresses) with their joins (``bpermute_join_ops``).  On PTX targets
    (``shfl`` source-lane registers) BPERMUTE_ADDR_VALU each.  A LayoutError where a ``[warps, lanes]``
    table has other than ``num_warps`` rows.  ``formed``: the registers the kernel's src load line formed before
    (``SrcOffsets.registers``, linlayout.synth.src_offsets): the lowering's tables follow theirs in one
    ``LaneValues``, so a table that one of them plus such a constant gives is free, and their lane parts are
    terms the program has.  ``one_wave``: the kernel is one wave (lane_arith "One wave"; ``Plan.one_wave``); None:
    ``num_warps == 1`` (a kernel that declares its warps)."""
    if get_target(arch).lds_isa == "ptx" or not tables:
        return BPERMUTE_ADDR_VALU * len(tables)
    fits, parts, made = [], [], []  # the program's tables, their warp parts; every register's table
    care = bpermute_address_bits(get_target(arch).wave_size)  # the bits the instruction reads
    rows = num_warps if any(np.ndim(t) == 2 for t in tables) else 1  # 1: the same tables in every warp
    prior = load_line_tables(formed)
    for diff, _, warp, a0 in formed:
        row = a0 + np.frombuffer(diff, dtype=np.int64)
        if rows == 1 and any(warp):
            continue
        made.append(AffineTable(0, (), tuple(warp)).evaluate(rows)[:, :1] ^ row[None, :])
    lanes = 0
    for t in tables:
        a = np.asarray(t, dtype=np.int64)
        if a.ndim == 2 and a.shape[0] != num_warps:
            raise LayoutError(f"a ds_bpermute address table of {a.shape[0]} warps for {num_warps} warps")
        lanes = a.shape[-1]
        a = np.broadcast_to(a if a.ndim == 2 else a[None, :], (rows, lanes))
        defined = a >= 0
        if any(_uniform_offset(a - m, defined) for m in made):
            continue
        full = _table_fit(a, defined)
        if full is None:
            fits.append(None)
            made.append(np.where(defined, a, 0))
            continue
        fits.append(LaneTable(full.const, full.lane_cols, care=care))
        parts.append(full.warp_cols)
        made.append(full.evaluate(rows))
    family = program_family(arch)
    lane_cols = [f[1] for f in fits if f is not None]  # parts holds one warp part per such fit
    one_wave = num_warps == 1 if one_wave is None else one_wave
    return (tables_valu(family, lanes.bit_length() - 1, tuple(fits), prior, one_wave) if fits else 0) + \
        warp_part_ops(parts) + sum(bpermute_join_ops(c, w, family, get_target(arch).wave_size)
                                   for c, w in zip(lane_cols, parts))


def bpermute_join_ops(lane_cols: tuple[int, ...], warp_cols: tuple[int, ...], family: str, wave_size: int) -> int:
    """[I] The instructions joining a ``ds_bpermute`` table's warp part (``warp_cols``) to its lane part
    (``lane_cols``) beyond ``warp_part_ops``, as LLVM compiles the corpora's warp-lane plans (program
    ``family``, ``wave_size`` lanes; docs/benchmarks.md "Session 20: rank23"): none unless the warp part
    is nonzero, the lane part is one shift term (``(l >> a) & m``, a shift and an AND: no 3-input VALU for
    the join to ride in) and some warp term moves the warp bits off their place in the wave's SGPR
    (``w << log2(wave_size)``: a term in place is the join's own AND, ``v_and_or_b32 v, s_wave, m, v_lane``,
    which warp_part_ops counts as its SALU); then on CDNA (``"gfx9"``) one VALU (``v_and_or_b32`` /
    ``v_lshl_or_b32`` reading the warp term's SGPR) unless the part is the whole warp id shifted, whose
    ``v_lshl_or_b32`` warp_part_ops counts as the join, and on RDNA two either way: the warp id's bits taken out
    of the wave's SGPR (``s_bfe_u32``) or the join, and the ``s_delay_alu`` before the join, which reads the
    lane term's VALU result."""
    in_place = wave_size.bit_length() - 1
    if not any(warp_cols) or len(_warp_shift_terms(lane_cols)) > 1 or set(_warp_shift_terms(warp_cols)) == {in_place}:
        return 0
    if family == "rdna":
        return 2
    return 0 if _whole_warp_shifted(warp_cols) else 1


def _table_fit(a: np.ndarray, defined: np.ndarray):
    """The ``AffineTable`` of the ``[warps, lanes]`` table ``a`` on its ``defined`` entries (``fit_affine``'s,
    None where none fits), from warp 0's row fit and each warp bit's uniform difference where those give
    the table (about a hundred times faster than ``fit_affine`` on several warps), else ``fit_affine``'s."""
    fit = row_table(a[0], None if defined[0].all() else defined[0])
    if fit is None or a.shape[0] == 1:
        return None if fit is None else AffineTable(fit[0], fit[1], ())
    row0 = AffineTable(fit[0], fit[1], ()).evaluate(1)[0]
    cols = []
    for b in range(a.shape[0].bit_length() - 1):
        x = (a[1 << b] ^ row0)[defined[1 << b]]
        cols.append(int(x[0]) if x.size else 0)
    aff = AffineTable(fit[0], fit[1], tuple(cols))
    if ((aff.evaluate(a.shape[0]) == a) | ~defined).all():
        return aff
    return fit_affine(a, None if defined.all() else defined)


def _uniform_offset(diff: np.ndarray, defined: np.ndarray) -> bool:
    """Is ``diff`` one constant in ``[0, OFFSET_LIMIT)`` on the ``defined`` lanes (a DS offset field's)?"""
    d = diff[defined]
    return d.size == 0 or (0 <= d[0] < OFFSET_LIMIT and bool((d == d[0]).all()))


def tuple_copies(dwords: list[int], fresh: set[int], tuple_dwords=SRC_TUPLE_DWORDS) -> int:
    """``v_mov_b32`` copies LLVM needs to hand one LDS access its VGPR tuple.

    An access of ``n >= 2`` dwords reads an aligned tuple ``v[k*n : k*n+n]``.  The src VGPRs
    arrive in the tuples ``tuple_dwords`` (what linlayout.synth.vgpr_tuples.VgprTuples.of takes: 4,
    aligned runs of 4 dwords in register order, an MFMA result or a dwordx4 load; 1: single loads,
    each VGPR placed where its first use wants it; the dword-index bits of merged loads), so the
    access is cut into chunks of
    ``c = min(n, tuples.dwords)`` dwords: a chunk of src dwords in place (``VgprTuples.in_place``:
    positions ``k c .. k c + c - 1`` of one arriving tuple in order) needs nothing; in any other chunk
    every src dword in a tuple is copied into the new one (a value computed by the plan, ``fresh``, or a
    dword in no tuple, ``VgprTuples.by_itself``, is allocated there directly).
    """
    tuples = VgprTuples.of("tuple_dwords", tuple_dwords)
    n = len(dwords)
    if n < 2:
        return 0
    c = min(n, tuples.dwords)
    copies = 0
    for k in range(0, n, c):
        chunk = dwords[k:k + c]
        if fresh.intersection(chunk) or not tuples.in_place(chunk):
            copies += sum(1 for d in chunk if d not in fresh and not tuples.by_itself(d))
    return copies


def store_tuple_copies(accesses: list[list[int]], fresh: list[set[int]], tuple_dwords, alignment: int,
                       kept: set[int] = frozenset()) -> int:
    """``tuple_copies`` of the LDS store ``accesses`` (issue order; ``fresh[i]``: the computed dwords of
    access ``i``), less the src dwords an access keeps where they arrive [I] (what LLVM's coalescer was seen
    to do, gfx1200 fp16 ``blocked[2x1,t32x1,o01]->blocked[1x2,t16x2,o10]``, tests/test_store_tuple_home.py):
    an access of ``n`` dwords, ``2 <= n <= t`` (``t`` dwords a tuple) and not in place, may take its VGPRs
    at positions ``o .. o + n - 1`` of one arriving tuple (``o >= 0`` a multiple of ``alignment``,
    ``Target.vgpr_tuple_alignment``; positions past the tuple's end are free VGPRs, those before its start
    are not: gfx1250 fp32 ``blocked[1x2,t1x32,o10]->blocked[2x1,t32x1,o01]``, 48 copies) when each VGPR of it
    inside the tuple holds a dword of the access at its place (it stays), another dword of the access
    (copied out first) or a dead one: read by no later access and not in ``kept`` (the dwords the plan
    reads elsewhere or keeps as dst); the home with the most dwords staying."""
    tuples = VgprTuples.of("tuple_dwords", tuple_dwords)
    if type(alignment) is not int or alignment not in (1, 2):
        raise LayoutError(f"alignment {alignment!r} must be 1 or 2 (Target.vgpr_tuple_alignment)")
    last = {d: i for i, dwords in enumerate(accesses) for d in dwords}
    copies = 0
    for i, (dwords, new) in enumerate(zip(accesses, fresh)):
        n = tuple_copies(dwords, new, tuples)
        copies += n
        if n and len(dwords) <= tuples.dwords:
            copies -= _staying(dwords, new, tuples, alignment, lambda x: x not in kept and last.get(x, -1) <= i)
    return copies


def _staying(dwords: list[int], fresh: set[int], tuples: VgprTuples, alignment: int, free) -> int:
    """The most of ``dwords`` (one access) that stay in their arriving VGPRs (``store_tuple_copies``'s
    homes; ``free(x)``: may the VGPR of src dword ``x`` be taken)."""
    best = 0
    for z, d in enumerate(dwords):
        if d in fresh or tuples.by_itself(d):
            continue
        o = tuples.position(d) - z
        if o < 0 or o % alignment:
            continue
        base, stays = tuples.tuple_of(d), 0
        for q in range(o, min(o + len(dwords), tuples.dwords)):
            x = base | sum(((q >> k) & 1) << b for k, b in enumerate(tuples.bits))
            if x == dwords[q - o]:
                stays += 1
            elif x not in dwords and not free(x):
                break
        else:
            best = max(best, stays)
    return best


def _store_tuple_copies(plan, tuples: VgprTuples) -> int:
    """``store_tuple_copies`` over the LDS stores of ``plan`` (write2 forms: each access separately), the
    src VGPRs arriving in ``tuples``; kept: the dwords any other step reads or renames, and those of the
    dst slots no step writes."""
    stores = [(st, accesses, set(written)) for st, accesses, written in _wide_stores(plan)]  # (written: as it was)
    wide = {id(st) for st, _, _ in stores}
    kept: set[int] = set()
    written_slots: set[int] = set()
    for st in plan.steps:
        written_slots.update(st.writes())
        if id(st) not in wide:
            kept.update(_slot_dwords(st.reads() + [s for _, s in st.renames()], plan.element_bits))
    kept.update(_slot_dwords([s for s in range(plan.slots_out) if s not in written_slots], plan.element_bits))
    accesses = [(dwords, written) for _, acc, written in stores for dwords in acc]
    return store_tuple_copies([a for a, _ in accesses], [w for _, w in accesses], tuples,
                              get_target(plan.arch).vgpr_tuple_alignment, kept)


def joined_pair_copies(plan, tuples: VgprTuples) -> int:
    """[I] The ``v_mov_b32`` copies LLVM adds to the ``ds_write2_b64`` of ``plan`` whose two 8-byte accesses
    are at consecutive addresses (``offset1`` 1, not st64; ``LdsStore.joined``), besides their halves'
    ``tuple_copies``: the lowering stores the halves one by one, LLVM's load-store vectorizer joins them
    into one 16-byte store (its data one 4-VGPR tuple) and the backend splits it back into the pair
    (8-byte alignment), after the register allocator has copied one half.  Counted where each half is
    src dwords in place in their tuples (``tuple_copies`` 0, none computed by the plan) and the four
    dwords are not (``tuple_copies`` of them all above 0): the second half's dwords.  Seen on the compiled
    ISA: gfx950 fp16 ``blocked[1x8,t8x8,o10]->mfma16T`` (a swizzled ordered layout's 16 such pairs: 32
    ``v_mov``), gfx942 fp32 ``blocked[1x4,t1x64,o10]->blocked[2x2,t16x4,o10]`` (16 pairs, 32); the pairs
    whose second access is 64 on (gfx942 fp32 ``mfma32T->blocked[2x2,t8x8,o10]``, 8 waves: 2, compiled as
    ``ds_write2st64_b64``), halves of two tuples too, none (tests/test_joined_pairs.py)."""
    if not any(getattr(st, "joined", False) for st in plan.steps):
        return 0
    n = 0
    for st, accesses, written in _wide_stores(plan):
        if not getattr(st, "joined", False):
            continue
        first, second = accesses
        if not written.intersection(first + second) and \
                tuple_copies(first, written, tuples) == tuple_copies(second, written, tuples) == 0 < \
                tuple_copies(first + second, written, tuples):
            n += len(second)
    return n


def movrels_copies(plan, tuples: VgprTuples) -> int:
    """[I] ``v_mov_b32`` copies LLVM needs to hand each ``Movrels`` read its vector, the registers the warps read
    in consecutive VGPRs (``Step.indexed_tuples``): ``tuple_copies`` of each vector (src dwords arriving in
    ``tuples`` in place need none, values the plan computed are allocated there directly), and one per dword an
    earlier vector took since it was written (a VGPR sits in one tuple).  Seen compiled: 16 copies where 8 warps
    read src dwords ``0, 2, .., 14`` and ``1, 3, .., 15`` arriving in runs of 4 (docs/amd_facts.md 6.7)."""
    vectors = [st.indexed_tuples(plan.element_bits) for st in plan.steps]
    if not any(vectors):
        return 0
    written: set[int] = set()
    taken: set[int] = set()
    copies = 0
    for st, reads in zip(plan.steps, vectors):
        for dwords in reads:
            copies += tuple_copies(dwords, written, tuples) + len(taken.intersection(dwords))
            taken.update(dwords)
        done = _slot_dwords(st.writes(), plan.element_bits)
        written.update(done)
        taken.difference_update(done)
    return copies


def _wide_stores(plan):
    """(step, its accesses' dwords (``_slot_dwords``), the dwords the plan has written before it) of each
    8- or 16-byte LDS store of ``plan``."""
    written: set[int] = set()
    for st in plan.steps:
        accesses = st.wide_store_tuples()
        if accesses:
            yield st, [_slot_dwords(acc, plan.element_bits) for acc in accesses], written  # (read before the update)
        written.update(_slot_dwords(st.writes(), plan.element_bits))


def _slot_dwords(slots: list[int], element_bits: int) -> list[int]:
    """The dwords of ``slots`` in order of first appearance."""
    p, dps = slots_per_dword(element_bits), dwords_per_slot(element_bits)
    if dps > 1:
        return list(dict.fromkeys(d for s in slots for d in range(s * dps, s * dps + dps)))
    return list(dict.fromkeys(s // p for s in slots) if p > 1 else dict.fromkeys(slots))


def load_tuple_copies(loads: list[list[int]], fresh: set[int], tuple_dwords, alignment: int) -> int:
    """``v_mov_b32`` copies LLVM needs to build the dst's VGPR tuples from LDS loads.

    ``loads``: per load (issue order) the dwords it writes to consecutive VGPRs (a ``ds_read2``: its
    two accesses' one after the other), each a dst dword or a temporary (``fresh``: repacked into a
    new value, which is allocated into its tuple directly).  The dst is taken in the tuples
    ``tuple_dwords`` (what linlayout.synth.vgpr_tuples.VgprTuples.of takes; ``t`` dwords each), one
    after the other in the order of their first dwords (the kernel's stores).
    A load of one dword is placed where its tuple wants it, and a dst dword in no tuple
    (``VgprTuples.by_itself``) where it lands.  A load of ``n >= 2`` is cut into chunks
    of ``c = min(n, t)``: a chunk in place (``VgprTuples.in_place``) is (part of) its tuple.
    Every other dst dword of such a load is copied into its tuple, except those a tuple keeps where
    they are [I] (what LLVM's coalescer was seen to do, docs/conversions.md section 4): the tuple may
    take its home at the ``t`` VGPRs from position ``o`` of one load (``o`` a multiple of ``alignment``,
    ``Target.vgpr_tuple_alignment``: the load starts at such a VGPR too; positions outside the load
    are free VGPRs) when each
    VGPR of the home inside the load holds a dword of the tuple at its place in the tuple
    (position ``q - o`` at load position ``q``), a temporary, or a dword of an earlier tuple (its
    value already taken); the tuple's dwords there stay: the home with the most of them."""
    tuples = VgprTuples.of("tuple_dwords", tuple_dwords)
    if type(alignment) is not int or alignment not in (1, 2):
        raise LayoutError(f"alignment {alignment!r} must be 1 or 2 (Target.vgpr_tuple_alignment)")
    t = tuples.dwords
    if t == 1:
        return 0
    placed: set[int] = set()  # dst dwords loaded into place
    bound: dict[int, tuple[int, int]] = {}  # other dst dwords of wide loads -> (load, position)
    for i, dwords in enumerate(loads):
        n = len(dwords)
        if n < 2:
            continue
        c = min(n, t)
        for k in range(0, n, c):
            chunk = dwords[k:k + c]
            if not fresh.intersection(chunk) and tuples.in_place(chunk):
                placed.update(chunk)
            else:
                bound.update((d, (i, k + z)) for z, d in enumerate(chunk) if d not in fresh and not tuples.by_itself(d))
    copies = 0
    by_tuple: dict[int, list[int]] = {}
    for d in bound:
        if d not in placed:
            copies += 1
            by_tuple.setdefault(tuples.tuple_of(d), []).append(d)
    for tup, ds in by_tuple.items():
        stays = 0
        for i, o in {(bound[d][0], bound[d][1] - tuples.position(d)) for d in ds}:
            if o % alignment:
                continue
            home = [(z, loads[i][o + z]) for z in range(t) if 0 <= o + z < len(loads[i])]
            if all(x in fresh or tuples.tuple_of(x) < tup or (tuples.tuple_of(x) == tup and tuples.position(x) == z)
                   for z, x in home):
                stays = max(stays, sum(tuples.tuple_of(x) == tup for _, x in home if x not in fresh))
        copies -= stays
    return copies


def _load_tuple_copies(plan, tuples: VgprTuples) -> int:
    """``tuple_copies`` of the dst's VGPR tuples ``tuples`` over the LDS loads of ``plan``
    (``Step.load_tuple``), each loaded slot named by the dst slot its value ends in: followed back from
    the end (slot ``k`` holds dst slot ``k``), a free renaming (``Step.renames``: ``(d, s)``, slot ``d``
    takes ``s``'s value) sends ``d``'s dst slots to ``s``, and any step writing a slot cuts it off (the
    value there before does not reach the dst); the first of its dst slots, a temporary where none:
    ``register_load_copies``."""
    if tuples.dwords == 1:
        return 0
    ends: dict[int, set[int]] = {k: {k} for k in range(plan.slots_out)}  # slot -> the dst slots its value ends in
    loads: list[list[int]] = []
    for st in reversed(plan.steps):
        slots = st.load_tuple()
        if slots:
            loads.append([min(ends[v]) if v in ends else -1 for v in slots])  # (-1: a temporary)
        written = set(st.writes())
        before = {v: set(d) for v, d in ends.items() if v not in written}
        for d, v in st.renames():
            if d in ends:
                before.setdefault(v, set()).update(ends[d])
        ends = before
    loads.reverse()
    return register_load_copies(loads, plan.element_bits, tuples, get_target(plan.arch).vgpr_tuple_alignment)


def register_load_copies(loads: list[list[int]], element_bits: int, tuple_dwords, alignment: int) -> int:
    """``load_tuple_copies`` of LDS loads given as the dst registers (slots) they write, in VGPR order
    (-1: a temporary), the dst taken in the tuples ``tuple_dwords``.  A loaded VGPR is dst dword ``j`` when it holds
    registers ``p j .. p j + p - 1`` in order (``p`` elements per dword; a 64-bit register ``r`` is
    dwords ``2 r, 2 r + 1``), else a temporary that ``v_perm_b32`` repacks into a new value.
    ``alignment``: ``load_tuple_copies``'."""
    tuples = VgprTuples.of("tuple_dwords", tuple_dwords)
    if tuples.dwords == 1:
        return 0
    fresh: set[int] = set()
    dword_lists = [register_dwords(regs, element_bits, fresh) for regs in loads]
    return load_tuple_copies(dword_lists, fresh, tuples, alignment)


def register_dwords(regs: list[int], element_bits: int, fresh: set[int]) -> list[int]:
    """The dwords of the VGPRs that hold the registers (slots) ``regs``, in VGPR order (-1: a temporary):
    a VGPR holding registers ``p j .. p j + p - 1`` in order (``p`` elements per dword) is dword ``j``
    (a 64-bit register ``r`` is dwords ``2 r, 2 r + 1``); any other is a new value that ``v_perm_b32``
    repacks, named by a negative number added to ``fresh`` (``-1``, ``-2``, .. in order)."""
    p, dps = slots_per_dword(element_bits), dwords_per_slot(element_bits)
    dwords: list[int] = []
    for k in range(0, len(regs), p):
        run = regs[k:k + p]
        if len(run) == p and run[0] >= 0 and run[0] % p == 0 and run == list(range(run[0], run[0] + p)):
            dwords += range(run[0] // p * dps, run[0] // p * dps + dps)
        else:
            fresh.add(-1 - len(fresh))
            dwords += [-len(fresh)] * dps
    return dwords


#: The setup estimates that count ``s_delay_alu`` instructions: a register plan's close VALU reads
#: (``linlayout.synth.hazards.valu_delays``) and the lane-bit masks of ``PermSelect`` selectors
#: (``estimate_overhead``); priced at ``CostModel.alu_delay_cycles``, counted under ``salu`` and its
#: ``s_delay_alu`` sub-count (linlayout.lowering.plan_counts).
SETUP_DELAY_ALU = ("salu_delay_alu", "salu_lane_selector_delay")


def vcc_salu(conditions: Iterable[bytes], target: Target) -> int:
    """The SALU putting the distinct select ``conditions`` (``lanes_condition`` bytes: one bool per lane, or
    per warp and lane) into VCC on ``target``: WAVE32_LANE_MASK_SALU for a lane mask of an RDNA (wave32) target,
    WARP_PARITY_SALU for the parity of two or more warp bits on an AMD target, VCC_SALU for the others (NVIDIA:
    the ``setp`` of a ``selp`` predicate)."""
    lane_mask = WAVE32_LANE_MASK_SALU if target.family == "rdna" else VCC_SALU

    def salu(c: bytes) -> int:
        if len(c) == target.wave_size:
            return lane_mask
        if target.lds_isa != "ptx" and warp_parity_bits(np.frombuffer(c, dtype=bool).reshape(-1, target.wave_size)):
            return WARP_PARITY_SALU[target.wave_size]
        return VCC_SALU

    return sum(salu(c) for c in conditions)


def movrels_index_salu(ranks) -> int:
    """The SALU of one ``Movrels`` register index table ``ranks`` (one per warp): ``MOVRELS_M0_SALU``, plus
    ``MOVRELS_WARP_SALU`` per warp whose index differs from warp 0's unless the index is the warp id."""
    ranks = [int(r) for r in ranks]
    if ranks == list(range(len(ranks))):
        return MOVRELS_M0_SALU
    return MOVRELS_M0_SALU + MOVRELS_WARP_SALU * sum(r != ranks[0] for r in ranks[1:])


class _Setup:
    """The distinct setup values of ``estimate_overhead``, told by each step (``Step.note_setup``)."""

    def __init__(self, target) -> None:
        self.bpermute_addresses: dict[bytes, np.ndarray] = {}  # distinct tables, in order
        self.conditions: set[bytes] = set()
        self.selectors: set[int] = set()
        self.permlane_selectors: set[int] = set()
        self.register_indices: set[tuple[int, ...]] = set()
        self.choices = ChoicePlan(target)
        self.lds_steps: list = []

    def bpermute_address(self, addr) -> None:
        a = np.asarray(addr, dtype=np.int64)
        self.bpermute_addresses.setdefault(a.tobytes(), a)

    def condition(self, cond) -> None:
        self.conditions.add(lanes_condition(cond).tobytes())

    def selector(self, selector: int) -> None:
        self.selectors.add(int(selector))

    def lane_choice(self, cond, if_false: int, if_true: int) -> None:
        """A per-lane choice of two constants (a ``PermSelect`` selector, linlayout.synth.lane_choices); a
        ``"select"`` choice's condition is a select condition too."""
        select = self.choices.select_condition(self.choices.add(cond, if_false, if_true))
        if select is not None:
            self.conditions.add(select)

    def permlane_selector(self, selector: int) -> None:
        self.permlane_selectors.add(int(selector))

    def register_index(self, shift) -> None:
        """A ``Movrels`` step's per-warp shift: its register index table (``index_ranks``)."""
        self.register_indices.add(tuple(index_ranks(shift)[1]))

    def lds_access(self, step) -> None:
        self.lds_steps.append(step)


#: The setup estimates of ``estimate_overhead`` on NVIDIA (PTX) targets, the same numbers in PTX's
#: words: integer instructions forming a ``shfl.sync``'s per-lane source lanes and the shared-memory
#: addresses, a ``setp`` per ``selp`` predicate, and the waits on dependent shared-memory and shuffle
#: results (no PTX instruction: the hardware's scoreboard waits).  The AMD-only estimates (v_perm
#: selectors in SGPRs, VGPR tuple copies) are none there.
PTX_SETUP_NAMES = {"valu_bpermute_addr": "alu_shfl_lanes", "salu_vcc": "setp_predicates",
                   "valu_lds_addr": "alu_shared_addr", "s_waitcnt": "scoreboard_waits"}
_AMD_SETUP_NAMES = {nv: amd for amd, nv in PTX_SETUP_NAMES.items()}


def _setup_unit(name: str) -> str:
    """The issue slot that prices setup estimate ``name`` (``_parts``): ``valu``, ``salu`` or none (a
    wait), the prefix of its AMD name."""
    return _AMD_SETUP_NAMES.get(name, name).split("_", 1)[0]


def estimate_overhead(plan, depth: int | None = None, lds_valu: int | None = None,
                      src_tuple_dwords=SRC_TUPLE_DWORDS, store_copies: int | None = None,
                      load_copies: int | None = None, dst_tuple_dwords=DST_TUPLE_DWORDS,
                      formed=()) -> dict[str, int]:
    """Setup instructions the steps need but that are not steps themselves ([I] estimates).

    ``valu_bpermute_addr`` the instructions forming the distinct ds_bpermute address tables
    (``bpermute_address_valu``: one op program, linlayout.synth.lane_arith, after the registers ``formed``;
    BPERMUTE_ADDR_VALU per ``shfl`` source-lane table on PTX targets);
    ``salu_vcc`` the SALU of the distinct select conditions (of select steps, fused DPP selects and ``"select"``
    lane choices): ``vcc_salu``;
    ``salu_perm_selector`` PERM_SELECTOR_SALU per distinct constant v_perm selector;
    ``valu_lane_selector`` the VALU building the per-lane v_perm selector registers of ``PermSelect`` steps in
    the prologue (linlayout.synth.lane_choices.ChoicePlan: ``A + (m & K)`` on a lane-bit mask ``m``, the ops the
    lowering emits; not the ``prmt`` selectors of PTX targets, which ptxas builds);
    ``salu_lane_selector_delay`` on targets with ``s_delay_alu`` (``Target.has_delay_alu``: gfx11 and later)
    one per lane-bit mask of those selectors [I] (the mask, its masked term and the selector are dependent VALU);
    ``salu_permlane_selector`` PERMLANE_SELECTOR_SALU per distinct v_permlane16/x16 lane selector;
    ``salu_movrels_index`` the m0 writes of the distinct register index tables of ``Movrels`` steps
    (``movrels_index_salu``);
    ``valu_lds_addr``: an LDS address that is a formed address plus a constant in the
    access's immediate range is free, one that differs from a formed address by another
    constant (added) costs one VALU op, the others are the tables of one op program
    (``addresses_valu``: linlayout.synth.lane_arith, the program the lowering emits, for warp 0; the
    warp-dependent parts as LLVM selects them, ``warp_part_ops``: SALU and joining VALU), after the
    registers ``formed`` (``SrcOffsets.registers``: the kernel's src load line's, linlayout.synth.src_offsets);
    ``valu_tuple_copies``: ``v_mov_b32`` building the VGPR tuples of LDS stores
    (``tuple_copies``, the src VGPRs arriving in the tuples ``src_tuple_dwords``: what
    ``VgprTuples.of`` takes; plus ``joined_pair_copies``); none on PTX
    targets, whose vector accesses name any registers (``st.shared.v4.b32 [a], {r1, r7, r2, r9}``:
    the register placement is ptxas's, no PTX instruction; docs/nvidia_facts.md section 6);
    ``valu_movrels_copies``: ``v_mov_b32`` building the vectors of ``Movrels`` reads (``movrels_copies``; none
    on PTX);
    ``valu_load_tuple_copies``: ``v_mov_b32`` building the dst's VGPR tuples ``dst_tuple_dwords``
    from the LDS loads' (``_load_tuple_copies``); none on PTX;
    ``s_waitcnt`` on AMD targets the waits LLVM puts in the region (``lgkm_waits``); on PTX targets
    the scoreboard waits, one per level of dependent DS instructions (``depth``: ``ds_depth(plan)``,
    ``lds_valu``: ``valu_lds_addr``, ``store_copies``: ``valu_tuple_copies`` and ``load_copies``:
    ``valu_load_tuple_copies`` on AMD, when the
    caller knows them); ``s_nop`` the hazard waits of the
    order the lowering emits the steps in (linlayout.synth.hazards.hazard_nops: CDNA DPP and permlane
    reads; not setup but instructions of the region, priced by ``plan_cost`` at their wait states);
    ``salu_delay_alu`` the ``s_delay_alu`` LLVM puts before dependent VALU reads of an RDNA plan
    without LDS accesses in the order it is emitted in (linlayout.synth.hazards.valu_delays; also
    instructions of the region, priced at ``CostModel.alu_delay_cycles``: ``SETUP_DELAY_ALU``).  The lane id
    is taken as available
    (every kernel computes it for its memory ops).  On NVIDIA targets the keys are
    ``PTX_SETUP_NAMES``'s.
    """
    target = get_target(plan.arch)
    setup = _Setup(target)
    for st in plan.steps:
        st.note_setup(setup)
    ptx = target.lds_isa == "ptx"
    src_tuples = VgprTuples.of("src_tuple_dwords", src_tuple_dwords)
    out = {
        "valu_bpermute_addr": bpermute_address_valu(list(setup.bpermute_addresses.values()), plan.arch,
                                                    plan.num_warps, formed, plan.one_wave),
        "salu_vcc": vcc_salu(setup.conditions, target),
        "salu_perm_selector": PERM_SELECTOR_SALU * len(setup.selectors),
        "valu_lane_selector": setup.choices.valu,
        "salu_lane_selector_delay": setup.choices.delay_alu,
        "salu_permlane_selector": PERMLANE_SELECTOR_SALU * len(setup.permlane_selectors),
        "salu_movrels_index": sum(map(movrels_index_salu, setup.register_indices)),
        "valu_lds_addr": (lds_address_valu(setup.lds_steps, plan.arch, formed, plan.one_wave)
                          if lds_valu is None else lds_valu),
        "valu_tuple_copies": 0 if ptx else ((_store_tuple_copies(plan, src_tuples) if store_copies is None
                                             else store_copies) + joined_pair_copies(plan, src_tuples)),
        "valu_movrels_copies": 0 if ptx else movrels_copies(plan, src_tuples),
        "valu_load_tuple_copies": 0 if ptx else (_load_tuple_copies(plan, VgprTuples.of("dst_tuple_dwords",
                                                                                        dst_tuple_dwords))
                                                 if load_copies is None else load_copies),
        "s_waitcnt": (ds_depth(plan) if depth is None else depth) if ptx else lgkm_waits(plan),
    }
    if not ptx:
        out["s_nop"] = hazard_nops(plan).nops
        out["salu_delay_alu"] = valu_delays(plan)
    return {PTX_SETUP_NAMES[k] if ptx else k: v for k, v in out.items() if v}


#: Every instruction kind that moves values between lanes; each delivers at most one dword to a lane
#: (lower_bound prices a cross-lane dword by the kinds of its target: ``cross_lane_kinds``).
CROSS_LANE_KINDS = ("dpp", "permlane16", "permlane16_swap", "permlane32_swap", "ds_bpermute", "ds_swizzle", "shfl",
                    "readlane", "movmatrix")
CROSSBAR_KINDS = ("ds_bpermute", "ds_swizzle", "shfl", "movmatrix")  # register steps that use the LDS (MIO) pipe


def cross_lane_kinds(target) -> tuple[str, ...]:
    """The ``CROSS_LANE_KINDS`` a target (linlayout.hw.targets.Target) has, read from its descriptor:
    ``dpp`` with any DPP control, ``permlane16`` with v_permlanex16 (RDNA), both permlane swaps with
    ``has_permlane_swap``, ``ds_bpermute`` and ``ds_swizzle`` where it has them, ``readlane`` on AMD
    (v_readlane_b32: every AMD target, the ones with the AMD lane fields), ``shfl`` and ``movmatrix``
    where its ``lane_ops`` name them (NVIDIA)."""
    has = {"dpp": bool(target.dpp_controls), "permlane16": target.has_permlanex16,
           "permlane16_swap": target.has_permlane_swap, "permlane32_swap": target.has_permlane_swap,
           "ds_bpermute": target.has_ds_bpermute, "ds_swizzle": bool(target.ds_swizzle_modes),
           "readlane": target.family in ("cdna", "rdna"), "shfl": "shfl.sync.idx" in target.lane_ops,
           "movmatrix": "movmatrix" in target.lane_ops}
    return tuple(kind for kind in CROSS_LANE_KINDS if has[kind])


class _Pricer:
    """The issue and LDS cycles of ``plan_cost``, added by each step (``Step.price``).  Every
    vector instruction but an LDS access is priced once per dword half of its elements (``mult``);
    a scalar one (``s_barrier``) once.
    ``lds_pipe_cycles``: the part of both that the LDS pipe is busy (crossbar moves and LDS
    accesses beyond their issue slot); ``conflict_cycles``: what the bank conflicts of the
    ``ds_write``/``ds_read`` accesses add (each against a conflict-free access of its width);
    ``conflict_passes``: the same counted in passes of the LDS over the accesses' lanes, each of its
    width's conflict-free cycles (``conflict_degree - 1`` per access, twice for a paired one)."""

    def __init__(self, cm: CostModel, arch: str, element_bits: int,
                 access_cycles: dict[tuple[bool, int, bool, int], float] | None = None) -> None:
        self.cm, self.arch, self.element_bits = cm, arch, element_bits
        self.access_cycles = access_cycles or {}  # plan_cost's access_cycles
        self.mult = dwords_per_slot(element_bits)
        self.issue_cycles = self.lds_cycles = self.lds_pipe_cycles = self.conflict_cycles = 0.0
        self.conflict_passes = 0.0
        # kind -> (cm.instruction(kind), the LDS pipe's share of it), asked once per kind
        self._cycles: dict[str, tuple[float, float]] = {}

    def issue(self, counts: dict[str, int], per_dword_half: bool = True) -> None:
        mult = self.mult if per_dword_half else 1
        for kind, n in counts.items():
            priced = self._cycles.get(kind)
            if priced is None:
                share = self.cm.lds_pipe_share(kind) if kind in CROSSBAR_KINDS else 0.0
                priced = self._cycles[kind] = (self.cm.instruction(kind), share)
            self.issue_cycles += n * mult * priced[0]
            self.lds_pipe_cycles += n * mult * priced[1]

    def lds_access(self, store: bool, width_bytes: int, addr, paired: bool, transpose: int) -> None:
        cycles = self.access_cycles.get((store, width_bytes, paired, transpose))
        if cycles is None:
            cycles = lds_access_cost(self.cm, self.arch, store, width_bytes, addr, self.element_bits, paired,
                                     transpose)
        self.lds_cycles += cycles
        self.lds_pipe_cycles += cycles - self.cm.ds_issue
        free = self.cm.instruction("lds_write" if store else "lds_read", width_bytes)
        added = cycles - (free + (free - self.cm.ds_issue if paired else 0.0))
        self.conflict_cycles += added
        self.conflict_passes += added / (free - self.cm.ds_issue)

    def matrix_access(self, name: str, addr) -> None:
        """One ldmatrix/stmatrix (``matrix_access_cost``)."""
        cycles = matrix_access_cost(self.cm, self.arch, name, addr)
        self.lds_cycles += cycles
        self.lds_pipe_cycles += cycles - self.cm.ds_issue

    def lds_accesses(self, count: int, width_bytes: int, conflict_degree: float = 1.0) -> None:
        """``count`` LDS accesses of ``width_bytes`` per lane known only by their bank cycles over the
        conflict-free ones (``conflict_degree``)."""
        one = self.cm.instruction("lds_read", width_bytes, conflict_degree)
        self.lds_cycles += count * one
        self.lds_pipe_cycles += count * (one - self.cm.ds_issue)


def _parts(cm: CostModel, issue: float, lds: float, lds_pipe: float, depth: int, overhead: dict,
           instructions: int) -> dict:
    """The parts of a cost (``plan_cost``) and the value of every objective (``latency``,
    ``throughput``, ``instructions``), the one of ``cm.objective`` under ``cost``.

    ``setup = valu * valu_issue + (salu - delays) * salu_issue + delays * alu_delay_cycles``, where
    ``valu`` and ``salu`` are the ``overhead`` estimates of each issue slot (``_setup_unit``; waits
    none) and ``delays`` the estimated ``s_delay_alu`` among the ``salu`` ones (``SETUP_DELAY_ALU``).
    The setup is part of ``simd`` (``issue + lds - lds_pipe + setup``), so under ``concurrent`` a
    delay costs ``waves_per_simd * alu_delay_cycles`` (``ALU_DELAY_CYCLES``)."""
    setup = sum(v for k, v in overhead.items() if _setup_unit(k) == "valu") * cm.valu_issue
    delays = sum(overhead.get(k, 0) for k in SETUP_DELAY_ALU)  # ALU waits: priced at the stall they mark
    setup += (sum(v for k, v in overhead.items() if _setup_unit(k) == "salu") - delays) * cm.salu_issue
    setup += delays * cm.alu_delay_cycles
    parts = {"issue": issue, "lds": lds, "latency": cm.latency(depth), "setup": setup, "ds_depth": depth,
             "simd": issue + lds - lds_pipe + setup, "lds_pipe": lds_pipe, "instructions": instructions}
    parts.update({f"{o}_value": cm.objective_value(parts, o) for o in OBJECTIVES})
    return parts


def plan_cost(plan, cm: CostModel, depth: int | None = None,
              access_cycles: dict[tuple[bool, int, bool, int], float] | None = None) -> tuple[float, dict]:
    """The value of ``plan`` under ``cm.objective`` and its parts, with every objective's value
    (``<objective>_value``), ``conflict_cycles`` (``_Pricer``'s, in the value once) and ``conflict_passes``
    (``_Pricer``'s; ``depth``: ``ds_depth(plan)`` if known; ``access_cycles``: where known,
    ``lds_access_cost`` of every LDS access of a form (store, width in bytes, paired, transpose
    element bits), the same for all the plan's accesses of that form)."""
    pricer = _Pricer(cm, plan.arch, plan.element_bits, access_cycles)
    for st in plan.steps:
        st.price(pricer)
    if plan.overhead.get("s_nop"):  # the hazard wait states of the emitted order (estimate_overhead)
        pricer.issue_cycles += hazard_nops(plan).wait_states * cm.wait_state_cycles
    depth = ds_depth(plan) if depth is None else depth
    parts = _parts(cm, pricer.issue_cycles, pricer.lds_cycles, pricer.lds_pipe_cycles, depth, plan.overhead,
                   plan.total_with_overhead())
    parts["conflict_cycles"] = pricer.conflict_cycles
    parts["conflict_passes"] = pricer.conflict_passes
    return parts[f"{cm.objective}_value"], parts


MIX_VALU_KINDS = ("v_cndmask", "v_perm_b32", "v_mov", "dpp", "readlane", "permlane16_swap", "permlane32_swap")


def _mix_width_bytes(lane_bytes: int, n_accesses: int) -> int:
    """The width (1, 2, 4, 8 or 16 bytes per lane) of each of ``n_accesses`` accesses moving
    ``lane_bytes`` per lane: the largest power of two at most their share, at most 16."""
    share = max(1, lane_bytes // max(1, n_accesses))
    return min(16, 1 << (share.bit_length() - 1))


def lds_conflict_cycles(plan) -> float:
    """The cycles that the bank conflicts of ``plan``'s LDS accesses (``ds_write``/``ds_read``, each
    priced by ``lds_access_cost`` on its lanes' addresses) add over conflict-free accesses of the same
    widths: what :func:`mix_cost` (whose accesses are conflict-free) leaves out of the plan's compiled
    mix.  The planner prices them with the plan (:func:`plan_cost`'s ``conflict_cycles``, kept in
    ``plan.cost_detail``), and they are read from there, not priced again: one number under every
    objective, since every per-instruction price is the latency table's whatever the objective
    (:class:`CostModel`).  A LayoutError for a plan never priced."""
    return _priced_conflicts(plan, "conflict_cycles")


def access_conflict_cycles(cm: CostModel, rows) -> dict[str, float]:
    """The cycles that bank conflicts add, per side (``lds_write``, ``lds_read``), to LDS accesses
    given as ``[store, width_bytes, cycles, min_cycles, count]`` rows (linlayout.synth.banks's
    bank cycles of each access and its conflict-free least, ``count`` accesses alike;
    benchmarks/data/triton_lds_conflicts.json stores Triton's so): each access costs
    ``instruction(kind, width_bytes, cycles / min_cycles)`` against the conflict-free one."""
    out = {"lds_write": 0.0, "lds_read": 0.0}
    for store, width_bytes, cycles, min_cycles, count in rows:
        kind = "lds_write" if store else "lds_read"
        conflicted = cm.instruction(kind, width_bytes, cycles / min_cycles)
        out[kind] += count * (conflicted - cm.instruction(kind, width_bytes))
    return out


def mix_cost(cm: CostModel, counts: dict[str, int], write_lane_bytes: int, read_lane_bytes: int,
             conflict_cycles: float = 0.0) -> dict:
    """The parts and every objective's value (``plan_cost``'s keys) of an instruction mix known only
    by its counts, as benchmarks/data/triton_amd_baseline.json gives Triton's: the COUNT_KINDS
    names, ``valu`` (every vector instruction, those kinds included), ``salu``, ``ds_permute``
    (priced as ``ds_bpermute``), ``s_waitcnt`` and ``total``.

    The counts say no more, so [I]: the LDS stores carry ``write_lane_bytes`` per lane between
    them and the loads ``read_lane_bytes`` (a round trip moves each lane's share of the tile), in
    equal conflict-free accesses (``_mix_width_bytes``); the vector instructions not named by kind
    take one VALU issue each; the mix has the fewest dependent DS levels it can (2 when it stores
    to LDS: a store then a load; 1 with only loads or crossbar moves; else 0).  Where the named
    vector kinds exceed ``valu`` by at most the smaller of ``v_cndmask`` and ``dpp`` (RDNA's
    v_cndmask in DPP form counts under both), the excess is priced once, as ``dpp``.  ``s_barrier``
    counts the target's ``barrier_instructions`` per barrier (gfx12: signal and wait), priced once.
    ``s_nop``: one wait state each (``wait_state_cycles``; ``s_nop n`` waits ``n + 1``, which a
    count does not say), as a plan prices the wait states of its hazards.

    ALU waits [I] (docs/amd_facts.md 6.5): ``s_delay_alu`` (the sub-count of ``salu`` of that name,
    gfx11 and later) and gfx12's ``s_wait_alu`` (counted under ``s_waitcnt``) are priced as waits,
    as ``s_waitcnt`` is: no issue cycles, the stall they mark unpriced.  Both are program-control
    instructions that the sequencer handles; neither is issued to the SALU.

    ``conflict_cycles``: what the bank conflicts of the mix's LDS accesses add to them, where known
    from their addresses (ours: :func:`lds_conflict_cycles`; Triton's: :func:`access_conflict_cycles`),
    added to the LDS (and LDS-pipe) cycles as a conflicted access's extra bank cycles are."""
    pricer = _Pricer(cm, cm.arch, 32)
    named = {k: counts.get(k, 0) for k in MIX_VALU_KINDS + ("ds_swizzle", "s_barrier")}
    named["s_barrier"] /= get_target(cm.arch).barrier_instructions
    named["ds_bpermute"] = counts.get("ds_bpermute", 0) + counts.get("ds_permute", 0)
    # RDNA's VOP3 DPP: a v_cndmask in DPP form counts under both v_cndmask and dpp, so the named
    # kinds may exceed valu; that overlap is priced once, as dpp
    overlap = sum(named[k] for k in MIX_VALU_KINDS) - counts.get("valu", 0)
    if 0 < overlap <= min(named["v_cndmask"], named["dpp"]):
        named["v_cndmask"] -= overlap
    pricer.issue({k: n for k, n in named.items() if n})
    pricer.issue_cycles += counts.get("s_nop", 0) * cm.wait_state_cycles  # each at its least: one wait state
    n_writes = counts.get("lds_write", 0)
    n_reads = counts.get("lds_read", 0) + counts.get("lds_read_tr", 0)
    for n, lane_bytes in ((n_writes, write_lane_bytes), (n_reads, read_lane_bytes)):
        pricer.lds_accesses(n, _mix_width_bytes(lane_bytes, n))
    pricer.lds_cycles += conflict_cycles
    pricer.lds_pipe_cycles += conflict_cycles
    other_valu = counts.get("valu", 0) - sum(named[k] for k in MIX_VALU_KINDS)
    if other_valu < 0:
        raise LayoutError(f"instruction mix: valu {counts.get('valu', 0)} is fewer than its named vector kinds")
    alu_waits = counts.get("s_delay_alu", 0)
    if alu_waits > counts.get("salu", 0):
        raise LayoutError(f"instruction mix: salu {counts.get('salu', 0)} is fewer than its s_delay_alu {alu_waits}")
    overhead = {"valu_other": other_valu, "salu_other": counts.get("salu", 0) - alu_waits,
                "s_waitcnt": counts.get("s_waitcnt", 0) + alu_waits}
    crossbar = named["ds_bpermute"] or named["ds_swizzle"]
    depth = 2 if n_writes else (1 if n_reads or crossbar else 0)
    total = counts.get("total", sum(named.values()) + n_writes + n_reads + sum(overhead.values()))
    return _parts(cm, pricer.issue_cycles, pricer.lds_cycles, pricer.lds_pipe_cycles, depth, overhead, total)


def round_trip_cost(cm: CostModel, sides: list[tuple[int, int, float]]) -> dict:
    """The parts and every objective's value (``plan_cost``'s keys) of an LDS round trip given per
    side as ``(instructions, width_bytes, conflict_degree)`` (bank cycles over conflict-free ones):
    its accesses priced as a plan's are, a store then a load (2 DS levels), no other instruction.
    linlayout.synth.swizzle ranks its shared layouts with it."""
    pricer = _Pricer(cm, cm.arch, 32)
    for count, width_bytes, degree in sides:
        pricer.lds_accesses(count, width_bytes, degree)
    return _parts(cm, 0.0, pricer.lds_cycles, pricer.lds_pipe_cycles, 2, {}, sum(n for n, _, _ in sides))


def register_merges(prob, element_bits: int) -> int:
    """The least number of two-input register instructions of any plan without LDS, per wave,
    for the conversion ``prob`` (linlayout.synth.preimage.Problem).

    A counting argument in the manner of Floyd's bound for permuting with two-page
    operations.  Every instruction of a register plan writes one VGPR from at most
    two VGPRs (v_cndmask, v_perm_b32, a DPP move into an old value, a permlane swap
    writing two); ds_bpermute, ds_swizzle and DPP moves read one.  Follow every
    needed element byte backwards from one dst slot holding it: the paths are
    disjoint, so a VGPR carries at most 256 path bytes.  With ``n_g(v)`` the path
    bytes of VGPR ``v`` bound for dst VGPR ``g``, ``Phi(v) = sum_g n log2 n`` grows
    only when an instruction merges two inputs, by at most the bytes it writes
    (binary entropy <= 1), i.e. by <= 256 per VGPR written.  At the end every dst
    VGPR holds 256 bytes of one group; at the start a src VGPR whose bytes go to
    ``k`` dst VGPRs evenly has ``log2 k`` bits less per byte.  So the merges are
    at least ``(Phi_end - Phi_start) / 256`` = the sum over src VGPRs of the entropy
    (bits) of where their bytes go.  A permlane swap counts twice.  The largest
    warp is taken.  LDS plans are not bound by this (a store and a load can route
    any byte anywhere).

    Both potentials are counted by coset algebra on the layouts' columns (``_merge_potentials``);
    every count is a power of two, so the sums are exact integers.
    """
    halves = 2 if element_bits == 64 else 1  # the two dword halves of 64-bit elements move alike
    phi_end, phi_start = _merge_potentials(prob, element_bits)
    best = (phi_end - phi_start) / 256.0
    return math.ceil(best * halves - 1e-9) if best > 1e-9 else 0


def _merge_potentials(prob, element_bits: int) -> tuple[int, int]:
    """``Phi_end`` (the same in every warp) and the least ``Phi_start`` over the warps, in bytes
    times bits, of ``register_merges``.

    Within warp ``w`` the dst slots are ``x`` = (register bits low, lane bits high), holding
    element ``c_w + A x``.  An element's path starts at its first slot, the least ``x`` of the
    coset ``x + ker A``; ``ker A`` has an echelon basis whose leading bits are the non-pivot
    columns of ``A``, so that slot is the solution supported on the pivot columns ``P``.  Its
    dst VGPR is given by the *group bits* ``G`` (the register bits >= log2 of the elements per
    VGPR): ``2^|P & G|`` VGPRs start ``2^|P - G|`` paths each.  A src VGPR ``v`` of warp ``w``
    holds ``s_w + B_v v + span(B_free)`` (``B_free``: the lane bits and the register bits inside
    a VGPR); its elements needed by the warp, those in ``c_w + Im A``, are none or a coset of
    ``U = span(B_free) & Im A``, on which the group map ``pi(t)`` = the ``G`` bits of the
    solution of ``A x = t`` takes ``2^rank pi(U)`` values equally often.  That coset is
    non-empty for ``2^(n_v - rank_extra)`` of the ``2^n_v`` VGPRs (``rank_extra``: the rank
    ``B_v`` adds to ``span(B_free) + Im A``) when ``s_w + c_w`` is in ``Im B + Im A``, else for
    none (``Phi_start = 0``)."""
    S, D = prob.src_cols, prob.dst_cols
    e = max(1, 32 // element_bits).bit_length() - 1  # log2 of the elements per VGPR
    b = min(4, max(1, element_bits // 8))  # bytes of one element inside one VGPR

    def t(n: int) -> int:  # n log2 n of a power of two
        return n * (n.bit_length() - 1)

    a_cols = D["register"] + D["lane"]
    pivots = f2.pivot_columns(a_cols)
    g_mask = ((1 << len(D["register"])) - 1) & ~((1 << e) - 1)
    in_g = sum(1 for j in pivots if (g_mask >> j) & 1)
    phi_end = (1 << in_g) * t(b << (len(pivots) - in_g))
    b_free = S["register"][:e] + S["lane"]
    b_v = S["register"][e:]
    v_span = f2.span_sum(b_free, a_cols)
    rank_extra = f2.rank(v_span + b_v) - len(v_span)
    covered = f2.Span(v_span + b_v)
    if not all(covered.contains(s ^ d) for s, d in zip(S["warp"], D["warp"])):
        return phi_end, 0
    u = f2.intersection(b_free, a_cols)
    solved = f2.solve_many(a_cols, u)
    rk = f2.rank([x & g_mask for x in solved])  # type: ignore[operator]
    per_vgpr = (1 << rk) * t(b << (len(u) - rk))
    return phi_end, (1 << (len(b_v) - rank_extra)) * per_vgpr


def _moving(dst: dict, have: list[int], offset_cols: list[int], n_dst_bits: int) -> int:
    """Distinct elements some dst slot needs from outside ``S(0, x) + span(have)`` of its own lane/warp.

    ``g(z) = D(z) + offset(x)`` over the dst hardware bits ``z``: the slot is remote iff
    ``g(z)`` is not in ``span(have)``.  If ``g`` is not constant modulo ``have`` on some
    fibre of ``D`` (a kernel vector of ``D`` has ``g`` outside), every element is remote
    somewhere; else the elements never remote are ``D(ker q)``, ``q = g mod have``.
    """
    dcols = dst["register"] + dst["lane"] + dst["warp"]
    g = [d ^ o for d, o in zip(dcols, offset_cols)]
    ker_d = f2.kernel_basis(dcols)
    n_img = 1 << (len(dcols) - len(ker_d))
    have_span = f2.Span(have)
    if any(not have_span.contains(f2.apply_columns(g, k)) for k in ker_d):
        return n_img
    dim_ker_q = n_dst_bits - (f2.rank(have + g) - have_span.rank)
    return n_img - (1 << (dim_ker_q - len(ker_d)))


def lower_bound(ctx) -> dict:
    """Analytic bounds over every plan (per wave) of the conversion of ``ctx``
    (linlayout.synth.context.ConversionContext: its problem, element size, cost model and target).

    With ``S``/``D`` the src/dst maps hardware bits -> tensor bits, lane (and warp)
    ``x`` holds ``S(0, x) + Im S_reg`` and needs ``D(0, x) + Im D_reg`` (cosets: their
    intersection is empty or a coset of ``Im S_reg & Im D_reg``), so:

    ``cross_lane_dwords``: the most 32-bit values one lane must receive from other
    lanes (``32 / bits`` elements per dword); every cross-lane instruction (DPP,
    swizzle, bpermute, a permlane, readlane, shfl, movmatrix) delivers at most one dword to each
    lane, so a plan without LDS issues at least that many of the target's own
    (``cross_lane_kinds``: a kind it lacks is in no plan of it).
    ``min_register_merges``: two-input instructions any plan without LDS needs
    (``register_merges``).
    ``cross_warp``: some lane needs an element no lane of its warp holds (only LDS
    can move it; then ``min_lds_loads`` per lane, 16 bytes each, and a barrier).
    ``min_lds_stores``: the distinct elements that must travel, spread over every
    lane of every wave, 16 bytes per store.  ``cost``: a lower bound of every plan's value under
    the model's objective.  Under ``concurrent`` and ``latency`` the cheapest of the bounds
    ``register_cost`` and ``lds_cost``.  ``register_cost``, of every plan without LDS:
    ``CostModel.path_floor(issue, pipe, latency)`` with ``n = cross_lane_dwords`` moves of the
    target's kinds ``K`` and ``m = min_register_merges`` merges (a move may be a merge: a DPP move
    into an old value), each kind ``k`` issuing ``i_k = instruction(k) - p_k`` cycles and busying
    the LDS pipe ``p_k`` (``CostModel.lds_pipe_share``): ``issue = max(n min_K i_k, m * merge)``
    (``merge``: the cheapest two-input instruction per VGPR written, a v_cndmask or half a
    permlane swap), ``pipe = n min_K p_k`` and ``latency = CostModel.latency(1)`` when every kind
    of ``K`` is a crossbar move (NVIDIA's shfl.sync and movmatrix: a DS level each) and ``n > 0``,
    else 0; each is a floor of the plan's part (``simd``, ``lds_pipe``, ``latency``) and
    ``path_floor`` does not decrease when a part grows.  ``lds_cost``
    (``CostModel.path_floor`` of the accesses' issue with the barrier, their data cycles and two
    latency levels: their sum, or where the pipes overlap (NVIDIA) the larger of the first two plus
    the latency); under ``throughput`` that bound of the latency path (``register_cost`` and
    ``lds_cost`` are then the path's floors) over ``waves_per_simd`` (the objective's value is at
    least the path shared by the waves); under ``instructions`` the fewest instructions: every
    cross-lane move delivers at most one dword to a lane and every merge is one instruction, so a
    plan without LDS issues at least the larger of ``cross_lane_dwords`` and
    ``min_register_merges``, one through LDS at least ``lds_instructions``.
    ``lds_instructions``: the instructions with setup of every
    plan through LDS (at least one load and one store, the bounds above, the barrier, its
    ``s_waitcnt`` on AMD targets (``lgkm_waits``; on PTX targets two scoreboard waits, after the stores
    and after the loads), and the ``least_address_valu`` ops forming the
    first access's address, which no address formed before can reach: ``lds_address_valu``).
    """
    prob, element_bits, cm = ctx.problem, ctx.element_bits, ctx.cost_model
    has_permlane = ctx.target.has_permlane_swap
    S, D = prob.src_cols, prob.dst_cols
    W, L = prob.num_warps, prob.wave
    element_bytes = ctx.element_bytes
    per_dword = ctx.slots_per_dword
    halves = 2 if element_bits == 64 else 1
    n_warp_bits = len(D["warp"])
    r_d = f2.rank(D["register"])
    n_d_bits = len(D["register"]) + len(D["lane"]) + n_warp_bits
    zeros_r = [0] * len(D["register"])

    def worst(have: list[int], offsets: list[int]) -> int:
        """The most needed elements of one lane outside ``S(0, x) + span(have)`` (the lane's
        needs ``D(0, x) + Im D_reg`` meet it in none or ``|Im D_reg & span(have)|`` elements)."""
        both = f2.Span(D["register"] + have)
        if any(not both.contains(d ^ o) for d, o in zip(D["lane"] + D["warp"], offsets)):
            return 1 << r_d
        return (1 << r_d) - (1 << (r_d + f2.rank(have) - both.rank))  # dim of the intersection

    lane_off = S["lane"] + S["warp"]
    warp_off = [0] * len(S["lane"]) + S["warp"]
    have_lane, have_warp = S["register"], S["register"] + S["lane"]
    per_lane = worst(have_lane, lane_off)
    per_lane_w = worst(have_warp, [0] * len(D["lane"]) + S["warp"])
    cross_lane = -(-per_lane // per_dword) * halves
    cross_warp = per_lane_w > 0
    elems_b128 = 16 // element_bytes
    if cross_warp:
        n_moving = _moving(D, have_warp, zeros_r + warp_off, n_d_bits)
    else:
        n_moving = _moving(D, have_lane, zeros_r + lane_off, n_d_bits) if per_lane else 0
    worst_lane = per_lane_w if cross_warp else per_lane
    lds_loads = -(-worst_lane // elems_b128)
    lds_stores = -(-n_moving // (W * L * elems_b128))
    kinds = cross_lane_kinds(ctx.target)
    move_pipe = min(cm.lds_pipe_share(kind) for kind in kinds)
    move_issue = min(cm.instruction(kind) - cm.lds_pipe_share(kind) for kind in kinds)
    move_levels = 1 if cross_lane and all(kind in CROSSBAR_KINDS for kind in kinds) else 0
    merge = min(cm.valu_issue, cm.instruction("permlane16_swap") / 2 if has_permlane else 1e9)
    merges = 0 if (cross_warp or not per_lane) else register_merges(prob, element_bits)
    per_instr = min(cm.lds_cycles.values()) * cm.lds_port_sharing
    per_byte = min(c / w for w, c in cm.lds_cycles.items()) * cm.lds_port_sharing

    def lds_pipe(n_instr: int, n_bytes: int) -> float:  # the data cycles, every width allowed
        return max(n_instr * per_instr, n_bytes * per_byte)

    load_bytes = worst_lane * element_bytes
    store_bytes = -(-n_moving // (W * L)) * element_bytes
    barrier = cm.instruction("s_barrier") if cross_warp else 0.0
    lds_bound = cm.path_floor((lds_loads + lds_stores) * cm.ds_issue + barrier,
                              lds_pipe(lds_loads, load_bytes) + lds_pipe(lds_stores, store_bytes), cm.latency(2))
    reg_bound = cm.path_floor(max(cross_lane * move_issue, merges * merge), cross_lane * move_pipe,
                              cm.latency(move_levels))
    waits = 2 if ctx.target.lds_isa == "ptx" else (1 if cross_warp else 0)  # lds_path.least_waits
    lds_instructions = (max(lds_loads, 1) + max(lds_stores, 1) + (1 if cross_warp else 0) + waits
                        + least_address_valu(ctx))
    if cross_warp:
        cost, count = lds_bound, lds_instructions
    elif cross_lane:
        cost, count = min(reg_bound, lds_bound), min(max(cross_lane, merges), lds_instructions)
    else:
        cost, count = 0.0, 0
    if cm.objective == "instructions":
        cost = float(count)
    elif not cm.floors_apply:  # throughput: at least the latency path shared by the waves of a SIMD
        cost /= cm.waves_per_simd
    return {"cross_lane_dwords": cross_lane, "min_register_merges": merges, "cross_warp": cross_warp,
            "min_lds_loads": lds_loads if (cross_warp or cross_lane) else 0,
            "min_lds_stores": lds_stores if (cross_warp or cross_lane) else 0,
            "min_barriers": 1 if cross_warp else 0, "cost": round(cost, 3), "lds_cost": round(lds_bound, 3),
            "lds_instructions": lds_instructions, "register_cost": round(reg_bound, 3)}
