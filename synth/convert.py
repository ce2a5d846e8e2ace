"""The cheapest verified plan that converts a distributed tile from one layout to another.

``plan_conversion(src, dst, arch, element_bits)``:

1. ``normalize`` both layouts (same tensor, the target's wave size, equal warp counts)
   and choose, per dst basis bit, the src position that moves least
   (linlayout.synth.preimage) -- this decides whether the conversion stays inside each
   wave.
2. Candidates, each built as an SSA program (linlayout.synth.ir) and emitted to steps:
   * nothing, when the layouts are equal;
   * inside each wave: pack 8/16-bit elements into 32-bit units
     (linlayout.synth.in_wave); the exchange schedules are priced on labels alone and
     only the cheapest is built (linlayout.synth.exchanges); the per-register gather only
     when its optimistic estimate could win; then unpack;
     the exchanges are tried on a second element map too, where a dst lane bit over which the dst
     broadcasts moves nothing (``preimage.wave_local_map(still_lanes=True)``);
   * when every warp reads only its own src data but at warp-dependent lanes: one
     ``ds_bpermute`` per src VGPR (per-warp addresses) moves each warp's lanes into warp 0's
     order, then the in-wave plans of what is left;
   * the LDS round trip (linlayout.synth.lds_path), unless the analytic LDS lower bound
     already ranks it after the in-wave plan.
   The in-wave candidates are SSA programs first; where their floors (linlayout.synth.program_floor)
   are well above the LDS lower bound, the LDS plans are built first and an in-wave program is
   built only when a floor known before (``_InWaveProgram.early_floor``), and emitted and priced
   only when its floor, could enter the tie group (``_lds_first``).
3. Candidates are ranked by linlayout.synth.cost (``CostModel.rank_value``: the cost, times
   the instructions with setup to the power 0.55 under ``concurrent``; ``CostModel.tie_fraction``:
   near ties go to fewer instructions, counting under ``concurrent`` on CDNA the LDS passes bank
   conflicts add, ``CostModel.tie_count``, then to no LDS); the winner is executed on the wave
   emulator at ISA level (every instruction with its parameters, its declared
   source lanes and byte selects checked).  A plan that fails is a bug:
   ``PlanVerificationError`` is raised and nothing is returned.  The element-level
   certificate is checked by the emulator's certificate executor and by the
   independent checker in the tests.

The conversion's context (linlayout.synth.context: layouts, target, element size, cost
model, LDS budget, strategy) is made once here and carried through the planner.
Sub-results that depend only on (layouts, arch, element bits, LDS budget) are
cached per process (the wave map, the lower bound, the LDS shared layouts, the
exchange tables; declared in ``linlayout.caches``); ``linlayout.caches.clear()`` empties them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from linlayout import LayoutError, LinearLayout, caches, f2
from linlayout.errors import require_flag
from linlayout.hw.targets import get_target

from . import cost as cost_mod
from .context import STRATEGIES, ConversionContext
from .emulator import PlanVerificationError, verify
from .exchanges import SchedulePlanner, best_schedule, build_schedule, exchange_applicable
from .in_wave import (Packing, UnitMap, choose_packing, gather_choices, gather_floor, gather_units, pack_perms,
                      pack_units, unpack_units, unpacked_outputs)
from .ir import AMD_REGISTER_ISA, PTX_REGISTER_ISA, Program, RegisterIsa
from . import lds_path, one_copy
from .lds_path import build_lds
from .lane_ops import any_lane_op, find_dpp, lane_indices
from .movmatrix_stage import movmatrix_layout, worth_trying
from .plan import Lane, Plan, unpacked_dst, unpacked_src
from .program_floor import ProgramFloor
from .span import span_values
from .steps import Movmatrix
from .warp_index import indexed_steps
from .preimage import Problem, wave_local_maps

__all__ = ["LDS_FIRST_FACTOR", "ONE_COPY_FORM", "STRATEGIES", "UNPACKED_FORM", "UnpackedDstRefused",
           "UnpackedSrcRefused", "candidate_plans", "exchange_schedule_plans", "lds_plan", "one_copy_candidates",
           "plan_conversion", "rank_value", "require_amd"]

# [I] Where only the first plan is wanted, the LDS plans are built before the in-wave ones when the
# in-wave programs' least rank value floor is above this many times the LDS lower bound's (then an
# in-wave plan is priced only if it can enter the tie group: ``_lds_first``).  Only the work done
# depends on it, never the plan.
LDS_FIRST_FACTOR = 1.5


def _base_plan(ctx: ConversionContext) -> Plan:
    prob = ctx.problem
    dst = unpacked_dst(prob.dst, ctx.element_bits) if ctx.dst_unpacked else prob.dst
    return Plan(arch=ctx.arch, wave_size=ctx.target.wave_size, num_warps=prob.num_warps, element_bits=ctx.element_bits,
                src=prob.src, dst=dst, slots_in=prob.src.in_dim_size("register"),
                slots_out=dst.in_dim_size("register"), steps=[], objective=ctx.objective, dst_unpacked=ctx.dst_unpacked,
                one_wave=ctx.one_wave)


def _dst_values(ctx: ConversionContext, prog: Program, outputs: list[int]) -> list[int]:
    """The dst values of a program computing the packed dst VGPRs ``outputs``: those, or of a dst held
    one element per VGPR (``ctx.dst_unpacked``) one value per element (``in_wave.unpacked_outputs``)."""
    if not ctx.dst_unpacked:
        return outputs
    return unpacked_outputs(prog, outputs, ctx.problem.dst.in_dim_size("register"), ctx.element_bits // 8)


def _n_values(n_slots: int, ctx: ConversionContext) -> int:
    """Values of the SSA program holding ``n_slots`` elements: one per element for 64-bit ones,
    else one per 32-bit VGPR."""
    return n_slots if ctx.element_bits == 64 else -(-n_slots // ctx.slots_per_dword)


def _register_isa(ctx: ConversionContext) -> RegisterIsa:
    """The register instructions of ``ctx``'s target (PTX's where it has ``prmt``)."""
    return PTX_REGISTER_ISA if "prmt" in ctx.target.lane_ops else AMD_REGISTER_ISA


def _program(ctx: ConversionContext) -> Program:
    """An empty SSA program over the src registers of ``ctx`` (its duplicates: ``_src_duplicates``)."""
    n_values = _n_values(ctx.problem.src.in_dim_size("register"), ctx)
    return Program(n_values, ctx.slots_per_dword, ctx.dwords_per_slot, _register_isa(ctx),
                   fuse_select_perm=ctx.target.family in ("cdna", "rdna"), init_alias=_src_duplicates(ctx, n_values))


def _src_duplicates(ctx: ConversionContext, n_values: int) -> tuple[int, ...] | None:
    """``Program``'s ``init_alias``: per src value (a VGPR, or a 64-bit element), the first value
    whose registers hold the same elements, slot by slot, in every lane and warp -- register ``r``
    holds the tensor vector ``sum_{bit b of r} col_b`` plus its lane's and warp's, so this is a
    question about the register columns alone (zero columns, or columns summing to zero); None
    when no two values are alike."""
    cols = ctx.problem.src_cols["register"]
    per_value = 1 if ctx.element_bits == 64 else ctx.slots_per_dword
    vectors = span_values(cols)
    if len(set(vectors)) == len(vectors):  # independent columns: no register repeats another
        return None
    first: dict[tuple, int] = {}
    alias = tuple(first.setdefault(tuple(vectors[v * per_value:(v + 1) * per_value]), v) for v in range(n_values))
    return None if alias == tuple(range(n_values)) else alias


def _priced(plan: Plan, ctx: ConversionContext, lds_valu: int | None = None, depth: int | None = None,
            store_copies: int | None = None, access_cycles: dict | None = None,
            load_copies: int | None = None) -> Plan:
    """``plan`` with the setup, cost and cost parts of its steps under ``ctx`` (``lds_valu``: its LDS
    address VALU ops, ``depth``: its ``cost.ds_depth``, ``store_copies``: its stores' VGPR tuple
    copies, ``access_cycles``: its LDS accesses' cycles by form (``cost.plan_cost``), each when known;
    ``load_copies``: the copies building the dst's VGPR tuples from its LDS loads')."""
    depth = cost_mod.ds_depth(plan) if depth is None else depth
    plan.overhead = cost_mod.estimate_overhead(plan, depth, lds_valu, ctx.src_tuples, store_copies,
                                               load_copies, ctx.dst_tuples, ctx.formed_addresses)
    plan.cost, plan.cost_detail = cost_mod.plan_cost(plan, ctx.cost_model, depth, access_cycles)
    return plan


class _NoLdsPlan(LayoutError):
    """No LDS round trip serves the conversion: no shared layout gives accesses, or none fits the LDS budget
    (``_lds_candidates``).  With ``lds_path.DesignRefused`` (no split into rounds fits the budget), the only
    errors of the LDS candidates that leave the in-wave plans the candidates; any other propagates."""


@dataclass
class _UnitProblem:
    """The in-wave element map on (register, lane) bits, its packing and the packings worth trying."""

    reg_cols: list[int]
    lane_cols: list[int]
    n_sr: int
    pk: Packing
    packings: list[list[int]]  # K lists: the best passive packing, then the native one (8/16-bit)


def _unit_problem(ctx: ConversionContext, wm) -> _UnitProblem:
    mask = wm.reg_lane_mask
    reg_cols = [c & mask for c in wm.reg]
    lane_cols = [c & mask for c in wm.lane]
    n_sr = ctx.problem.n_src_reg
    pk = choose_packing(reg_cols, lane_cols, n_sr, ctx.element_bits)
    p = ctx.slots_per_dword
    packings = [pk.K]
    native = list(range(min(len(pk.K) if p == 1 else (p.bit_length() - 1), n_sr)))
    if p > 1 and native != pk.K:
        packings.append(native)
    return _UnitProblem(reg_cols, lane_cols, n_sr, pk, packings)


@dataclass
class _InWaveProgram:
    """An in-wave candidate of the conversion ``ctx`` as an SSA program (``outputs``: its dst values),
    built when first read (``make``), not yet emitted or priced (``_finish_in_wave``); ``moves``: what
    it holds live, known before it is built (``SchedulePlanner.live_moves``: ``(kinds, depth)``), or
    None."""

    ctx: ConversionContext
    name: str
    K: list[int]
    make: Callable[[], tuple[Program, list[int]]]
    moves: tuple[Counter, int] | None = None
    _built: tuple[Program, list[int]] | None = field(default=None, repr=False)
    _floor: ProgramFloor | None = field(default=None, repr=False)

    @property
    def prog(self) -> Program:
        return self._program()[0]

    @property
    def outputs(self) -> list[int]:
        return self._program()[1]

    def _program(self) -> tuple[Program, list[int]]:
        if self._built is None:
            prog, outputs = self.make()
            self._built = prog, _dst_values(self.ctx, prog, outputs)
        return self._built

    def floor(self) -> ProgramFloor:
        """Lower bounds of the priced plan's cost and instructions (linlayout.synth.program_floor)."""
        if self._floor is None:
            self._floor = ProgramFloor.of(self.prog, self.outputs, self.ctx.cost_model, self.ctx.element_bits)
        return self._floor

    def early_floor(self) -> ProgramFloor:
        """Floors at most ``floor``'s: of ``moves`` without building the program
        (``ProgramFloor.of_kinds``), else ``floor`` itself."""
        if self.moves is None:
            return self.floor()
        return ProgramFloor.of_kinds(*self.moves, self.ctx.cost_model, self.ctx.element_bits)


def _in_wave_program(ctx: ConversionContext, wm, up: _UnitProblem, K: list[int], name: str,
                     middle, moves: tuple[Counter, int] | None = None) -> _InWaveProgram | None:
    """The program that packs the src VGPRs into units (elements grouped by ``K``), applies the
    per-warp register offsets and runs ``middle(prog, units) -> dst values``, built when first read
    (``moves``: ``_InWaveProgram``'s); None if a warp offset moves elements inside a unit."""
    offsets = wm.warp_register_offsets
    if any((x >> b) & 1 for x in offsets for b in K):
        return None

    def make() -> tuple[Program, list[int]]:
        prog = _program(ctx)
        pkK = Packing(ctx.element_bits, up.n_sr, len(up.reg_cols), K, up.pk.Kd if K == up.pk.K else [], up.pk.units)
        units = _warp_offsets(prog, pack_units(prog, pkK), offsets, K, up.n_sr, ctx.problem.num_warps,
                              ctx.target.wave_size)
        return prog, middle(prog, units)
    return _InWaveProgram(ctx, name, K, make, moves)


def _finish_in_wave(ctx: ConversionContext, built: _InWaveProgram) -> Plan:
    """The priced plan of an in-wave program (its selects' form: ``_best_emission``, then ``_indexed``)."""
    return _indexed(ctx, _best_emission(ctx, built.prog, built.outputs,
                                        lambda mode: _priced(_emitted_in_wave(ctx, built, mode), ctx)))


def _emission_key(ctx: ConversionContext, plan: Plan) -> tuple[float, int]:
    """How two forms of one program rank: rank value, then instructions with setup."""
    return rank_value(plan, ctx.cost_model), plan.total_with_overhead()


def _indexed(ctx: ConversionContext, plan: Plan) -> Plan:
    """``plan``, or its warp-id select trees read at a wave-uniform register index (``v_movrels_b32``,
    linlayout.synth.warp_index) where that form ranks first (``_emission_key``)."""
    steps = indexed_steps(plan.steps, ctx.arch, plan.num_warps, plan.element_bits, plan.slots_out)
    if steps is None:
        return plan
    indexed = _priced(replace(plan, steps=steps, notes=plan.notes + [
        "warp-id selects read at a wave-uniform register index (v_movrels_b32)"]), ctx)
    return indexed if _emission_key(ctx, indexed) < _emission_key(ctx, plan) else plan


def _identity_dpp(ctx: ConversionContext):
    """The DPP move by which each lane reads its own value (``quad_perm:[0,1,2,3]``), None on a target
    without DPP."""
    return find_dpp(lane_indices(ctx.target.wave_size), ctx.target) if ctx.target.dpp_controls else None


def _best_emission(ctx: ConversionContext, prog: Program, outputs: list[int], make: Callable[[str], Plan]) -> Plan:
    """The priced plan ``make(mode)`` of ``prog`` computing ``outputs`` under the ``Program.emit`` select
    mode ranking first under ``ctx``'s cost model (rank value, then instructions with setup; ``"none"``,
    every select a ``v_cndmask``, on ties): a select whose condition is a DPP row/bank product set can be
    a masked identity ``v_mov_b32_dpp`` in place, which needs no lane mask in SGPRs but may need a copy
    or hazard wait states (``Program.dpp_select_modes``)."""
    best = make("none")
    if _identity_dpp(ctx) is None:
        return best
    for mode in prog.dpp_select_modes(outputs):
        plan = make(mode)
        if _emission_key(ctx, plan) < _emission_key(ctx, best):
            best = plan
    return best


def _emitted_in_wave(ctx: ConversionContext, built: _InWaveProgram, dpp_selects: str = "none") -> Plan:
    """The plan of an in-wave program, emitted but not priced (``dpp_selects``: ``Program.emit``'s)."""
    plan = _base_plan(ctx)
    plan.steps = built.prog.emit(built.outputs, _n_values(plan.slots_out, ctx), dpp_selects,
                                 _identity_dpp(ctx) if dpp_selects != "none" else None)
    plan.strategy = "registers"
    plan.notes.append(f"in-wave builder: {built.name}; elements per 32-bit unit follow src register bits {built.K}")
    return plan


def _best_schedule(ctx: ConversionContext, up: _UnitProblem, dups: bool):
    """``(schedule, planner, K)``: the best exchange schedule over the packings (``dups``:
    SchedulePlanner's), or None where the map is no partial bit permutation."""
    if not exchange_applicable(up.reg_cols, up.lane_cols, up.n_sr):
        return None
    p, n_dst = ctx.slots_per_dword, ctx.problem.dst.in_dim_size("register")
    scheds = []
    for K in up.packings:
        try:
            sched, planner = best_schedule(ctx, up.reg_cols, up.lane_cols, up.n_sr, K, n_dst,
                                           pack_perms(K, up.n_sr, p) if p > 1 else 0, dups)
        except ValueError:
            continue
        scheds.append((sched, planner, K))
    cm = ctx.cost_model
    return cost_mod.near_best(scheds, lambda t: t[0].cost, lambda t: t[0].count, cm.tie_fraction) if scheds else None


def _schedule_program(ctx: ConversionContext, wm, up: _UnitProblem, chosen,
                      builder: str = "exchange") -> _InWaveProgram | None:
    """The program of ``chosen`` (``_best_schedule``'s), named ``builder:schedule``."""
    sched, planner, K = chosen
    n_dst = ctx.problem.dst.in_dim_size("register")
    return _in_wave_program(ctx, wm, up, K, f"{builder}:{sched.name}",
                            lambda prog, units: build_schedule(prog, sched, planner, units, n_dst),
                            planner.live_moves(sched, n_dst, _register_isa(ctx)))


def _dup_programs(ctx: ConversionContext, maps: list) -> list[_InWaveProgram]:
    """Per wave map, the program of the best exchange schedule with dup exchanges
    (linlayout.synth.exchanges.SchedulePlanner: a src lane bit with a zero column takes a register
    bit by a select), where that schedule has one."""
    out = []
    for wm in maps:
        up = _unit_problem(ctx, wm)
        chosen = _best_schedule(ctx, up, dups=True)
        if chosen is not None and any(mv[0] == "dx" for mv in chosen[0].moves):
            built = _schedule_program(ctx, wm, up, chosen, "dup exchange")
            if built is not None:
                out.append(built)
    return out


def _in_wave_programs(ctx: ConversionContext, wm, gather: bool = True) -> list[_InWaveProgram]:
    """The cheapest in-wave candidates as programs: the best exchange schedule (priced on labels,
    linlayout.synth.exchanges) over the packings, and (``gather``) the gather when its price is
    within the tie fraction of it."""
    up = _unit_problem(ctx, wm)
    p, cm = ctx.slots_per_dword, ctx.cost_model
    n_dst = ctx.problem.dst.in_dim_size("register")
    best = _best_schedule(ctx, up, dups=False)
    out = []
    if best is not None:
        built = _schedule_program(ctx, wm, up, best)
        if built is not None:
            out.append(built)
    vperm = cm.instruction("v_perm_b32") * (pack_perms(up.pk.K, up.n_sr, p) + pack_perms(up.pk.Kd, len(up.reg_cols), p)
                                            if p > 1 else 0)
    # under an objective other than latency the gather is always built and ranked, and where the
    # pipes overlap (NVIDIA) too: both prices here are label-priced sums of instruction costs, which
    # rank as the plans' values only where those are sums
    limit = float("inf")
    if best is not None and cm.floors_apply and not cm.pipe_overlap:
        limit = cm.tie_limit(best[0].cost)
    units = _read_first_copies(ctx, up)
    if gather and gather_floor(units, cm) + vperm <= limit:  # the gather is priced only when it might win
        gathered = gather_choices(ctx, units, limit - vperm)  # None: above the limit
        if gathered is not None and gathered[0] + vperm <= limit:
            g_plan = gathered[1]
            built = _in_wave_program(ctx, wm, up, up.pk.K, "gather",
                                     lambda prog, units: unpack_units(prog, up.pk, gather_units(prog, g_plan, units),
                                                                      n_dst))
            if built is not None:
                out.append(built)
    return out


def _read_first_copies(ctx: ConversionContext, up: _UnitProblem) -> UnitMap:
    """The gather's unit map with every read of a src unit that is a copy of a lower one made a read of
    that one: a src register bit whose tensor column is 0 (a register holding what another holds in every
    lane and warp) is, for the src unit index bits it carries (the register bits outside the packing
    ``K``, in order), cleared from every image -- a linear map still.  Else a dst unit whose lanes read
    two copies gathers both, with a lane move and a select each, which the compiler folds into one move
    and no select once it sees the copies are equal (random pairs: plans of 4 ``ds_bpermute`` and 2
    ``v_cndmask`` where the kernels had 2 and 0)."""
    um = up.pk.units
    src_reg = ctx.problem.src_cols["register"]
    kept = [i for i in range(up.n_sr) if i not in up.pk.K]
    copies = sum(1 << j for j, i in enumerate(kept) if src_reg[i] == 0)
    return um if not copies else UnitMap(um.n_src, um.n_dst, [c & ~copies for c in um.cols])


def _warp_lane_candidates(ctx: ConversionContext, wm) -> list[Plan]:
    """In-wave plans of a conversion in which warp ``w`` reads its own src data at lanes ``l ^ Y(w)``
    (``WaveMap.warp_lane_offsets``): every src VGPR moves by a ``ds_bpermute`` whose address depends
    on the warp (lane ``l`` of warp ``w`` reads lane ``l ^ Y(w)``), which leaves the tile in the
    layout ``src'`` whose warp vector ``k`` is ``src(w_k) ^ src(y_k)``; the in-wave candidates of
    ``src' -> dst`` follow (``_after_warp_lanes``: a lane step reading a src VGPR absorbs its move),
    re-priced.  Only on targets that move a per-warp lane map in one instruction (``ds_bpermute``,
    or NVIDIA's ``shfl.sync.idx``: ``lane_ops.any_lane_op``)."""
    if not (ctx.target.has_ds_bpermute or "shfl.sync.idx" in ctx.target.lane_ops):
        return []
    prob = ctx.problem
    ys = wm.warp_lane_offsets
    bases = {d: [list(b) for b in prob.src.bases[d]] for d in prob.src.in_dim_names}
    for k, y in enumerate(ys):
        for j in range(prob.n_lane):
            if (y >> j) & 1:
                bases["warp"][k] = [a ^ b for a, b in zip(bases["warp"][k], bases["lane"][j])]
    moved = LinearLayout(bases, list(prob.src.out_dims))
    inner = ConversionContext.create(moved, prob.dst, ctx.arch, ctx.element_bits,
                                     ctx.lds_budget_bytes if ctx.budget_given else None, "registers", ctx.objective,
                                     ctx.src_tuples, ctx.dst_tuples, ctx.src_offsets, dst_unpacked=ctx.dst_unpacked)
    warps = np.arange(prob.num_warps)
    shift = np.zeros(prob.num_warps, dtype=np.int64)
    for k, y in enumerate(ys):
        shift ^= np.where((warps >> k) & 1, y, 0)
    need = lane_indices(ctx.target.wave_size)[None, :] ^ shift[:, None]
    p = ctx.slots_per_dword
    slots = [[v * p + q for q in range(p)] for v in range(_n_values(prob.src.in_dim_size("register"), ctx))]
    move = "shfl.sync.idx" if "shfl.sync.idx" in ctx.target.lane_ops else "ds_bpermute"  # as any_lane_op picks
    out = []
    # the inner plans are priced only once their moves are in (their own prices would not be used)
    inner_plans = [_emitted_in_wave(inner, built) for k, m in enumerate(_wave_maps(inner.problem)) if m.wave_local
                   for built in _in_wave_programs(inner, m, gather=k == 0)]
    for plan in inner_plans:
        plan.steps = _after_warp_lanes(plan.steps, slots, need, ctx.target, plan.slots_out)
        plan.src = prob.src
        plan.notes.append(f"warp-dependent lanes: one {move} per src VGPR first")
        out.append(_priced(plan, ctx))
    return out


def _after_warp_lanes(steps: list, slots: list[list[int]], need: np.ndarray, target, slots_out: int) -> list:
    """``steps`` run on the src VGPRs (``slots`` of each) after lane ``l`` of warp ``w`` has read lane
    ``need[w, l]`` of its warp: a VGPR whose original value only lane steps read gets their lane
    maps composed with ``need`` (each becomes one ``ds_bpermute``, or ``shfl.sync.idx`` on NVIDIA:
    ``lane_ops.any_lane_op`` on ``target``); any other moves in place by such a move of its own in
    front, but for a VGPR whose src value is dead (``_value_read``): its move would be an instruction
    the compiler deletes (random pairs found such plans counting 2 to 4 ``ds_bpermute`` more than
    their kernels).  A VGPR whose src value is also left in place as an output (a slot below
    ``slots_out`` no step writes) has another reader: it moves in front.  ``steps`` come from
    ``ir.Program.emit``, which writes a src VGPR whole (its partial writes, byte permutes and sub-dword
    loads, go to fresh registers above the src's), so a step that reads a src VGPR reads its src value
    whole or not at all."""
    steps = list(steps)
    front = []
    for vgpr in slots:
        live, readers = set(vgpr), []  # live: the slots still holding their src value
        for i, st in enumerate(steps):
            if live & set(st.reads()):
                if not (isinstance(st, Lane) and list(st.src) == vgpr):
                    readers = None
                    break
                readers.append(i)
            live -= set(st.writes())
            if not live:
                break
        if readers and any(slot < slots_out for slot in live):  # (an output in place reads it too)
            readers = None
        if not any(_value_read(steps, slot, slots_out) for slot in vgpr):  # dead: no move
            continue
        if not readers:
            op = any_lane_op(need, target)
            front.append(Lane(kind=op.kind, dst=vgpr, src=vgpr, src_lane=need, isa=dict(op.isa)))
            continue
        for i in readers:
            inner = np.asarray(steps[i].src_lane, dtype=np.int64)
            lanes = np.broadcast_to(inner, need.shape)
            composed = np.where(lanes >= 0, np.take_along_axis(need, np.maximum(lanes, 0), axis=1), -1)
            op = any_lane_op(composed, target)
            steps[i] = Lane(kind=op.kind, dst=steps[i].dst, src=vgpr, src_lane=composed, isa=dict(op.isa))
    return front + steps


def _value_read(steps: list, slot: int, slots_out: int) -> bool:
    """Whether the value ``slot`` holds before ``steps`` is used: a step reads it before any step
    writes the slot, or none does and it is an output (``slot < slots_out``)."""
    for st in steps:
        if slot in st.reads():
            return True
        if slot in st.writes():
            return False
    return slot < slots_out


def exchange_schedule_plans(src: LinearLayout, dst: LinearLayout, arch: str,
                            element_bits: int) -> list[tuple[list[int], str, int, Plan]]:
    """Every exchange schedule the planner prices for an in-wave conversion, built into a plan
    (unverified): ``(packing K, schedule name, predicted instructions, plan)``.  For inspecting the
    choice; ``plan_conversion`` builds only the cheapest."""
    ctx = ConversionContext.create(src, dst, arch, element_bits)
    wm = _wave_map(ctx.problem)
    if not wm.wave_local:
        raise LayoutError("the conversion moves data between warps: no exchange schedule")
    up = _unit_problem(ctx, wm)
    if not exchange_applicable(up.reg_cols, up.lane_cols, up.n_sr):
        return []
    p, n_dst = ctx.slots_per_dword, ctx.problem.dst.in_dim_size("register")
    out = []
    for K in up.packings:
        planner = SchedulePlanner(ctx, up.reg_cols, up.lane_cols, up.n_sr, K)
        for sched in planner.candidates():
            n = pack_perms(K, up.n_sr, p) + planner.repack_perms(sched, n_dst) if p > 1 else 0
            built = _in_wave_program(ctx, wm, up, K, "exchange:" + sched.name,
                                     lambda prog, units, sched=sched, planner=planner:
                                     build_schedule(prog, sched, planner, units, n_dst))
            if built is not None:
                out.append((K, sched.name, sched.count + n, _finish_in_wave(ctx, built)))
    return out


def _warp_offsets(prog: Program, units: list[int], offsets: list[int], K: list[int], n_sr: int,
                  num_warps: int, wave_size: int) -> list[int]:
    """Per-warp register renaming ``r -> r ^ X(w)`` as selects on a per-warp condition (no offset may
    move elements inside a 32-bit unit: ``_in_wave_program`` checks).  ``X(w)``, the XOR of the unit
    offsets ``u_k`` of the set warp bits ``k``, is ``XOR_j c_j(w) b_j`` over a basis ``b_j`` of the
    ``u_k`` (``f2.image_basis``): one round of selects per basis vector, on the condition ``c_j(w)``, the
    parity of the warp bits whose ``u_k`` holds ``b_j`` -- one round per warp bit where the ``u_k`` are
    independent, fewer where they are not (random pairs with two warp bits of one offset made two
    rounds, which the compiler folded into one select on the two bits' parity)."""
    rest = [i for i in range(n_sr) if i not in K]
    us = [sum(((x >> b) & 1) << i for i, b in enumerate(rest)) for x in offsets]
    basis = f2.image_basis([u for u in us if u])
    coords = [f2.solve(basis, u) for u in us]
    warps = np.arange(num_warps)
    for j, b in enumerate(basis):
        parity = np.zeros(num_warps, dtype=bool)
        for k, c in enumerate(coords):
            if (c >> j) & 1:
                parity ^= ((warps >> k) & 1).astype(bool)
        cond = np.repeat(parity[:, None], wave_size, axis=1)
        units = [prog.select(cond, units[q], units[q ^ b]) for q in range(len(units))]
    return units


def _lds_candidates(ctx: ConversionContext, best_only: bool = False, ceiling: float = float("inf"),
                    prune: bool = True) -> list[Plan]:
    """LDS round trips through each shared layout (lds_path.designs), built in the order of the rank
    values of their plan floors (``LdsAccesses.plan_floor``: cost and instructions with setup;
    lds_path.DesignPool.by_floor); a round trip whose plan floor's rank value is above the tie limit
    of the best plan built so far, or whose cost floor is (in rank value: its cost floor with the
    least instructions of any LDS plan, ``lower_bound``'s ``lds_instructions``), cannot enter the tie
    group and is not built: past a plan floor above it the pool stops (every later one's rank value
    is at least as high), a cost floor above it only skips that round trip (``prune``: the floors
    bound the cost model's value, ``CostModel.floors_apply``; else every one is built).  ``best_only``: neither is a round trip equal to one built before (the same layout and
    stores: the same cost and instructions, ranked after it) nor one that a plan built before
    outranks (``_outranked``), nor one whose floor is above ``ceiling`` (the in-wave plans' tie
    limit in rank value: it would rank after them).  The plans are given in the pool's order (its
    designs in ``lds_path.designs``' order, then each design's store choices), whatever the order
    they were built in: the order ``_rank`` settles full ties by.

    A src that holds only part of the tile (not surjective) has no round trip: the shared layouts are
    made for a writer that covers the tile (linlayout.synth.swizzle); that is a ``_NoLdsPlan``, so the
    in-wave plans are the candidates where there are any (a bit permutation on half a tile was refused
    under ``auto`` though ``registers`` planned it)."""
    prob = ctx.problem
    held = f2.rank(prob.src_hw_cols())
    if held < prob.n_tensor_bits:
        raise _NoLdsPlan(f"an LDS round trip needs a src that holds every tensor element: src holds 2**{held} of "
                         f"the tile's 2**{prob.n_tensor_bits} elements")
    pool = lds_path.designs(ctx)
    budget, target, cm = ctx.lds_budget_bytes, ctx.target, ctx.cost_model
    out: list[Plan] = []
    places: list[tuple[int, int]] = []  # (design, store choice) in the pool of each plan of ``out``
    # (rank cost, instructions with setup, tie count) of each plan of ``out``
    priced: list[tuple[float, int, float]] = []
    best_rank = float("inf")  # the least rank value in ``out``
    built = set()
    fitted = False
    # rank value / cost of a plan with the least instructions any LDS plan has (1 by the cost alone)
    least_factor = cm.rank_value(1.0, _lower_bound(ctx)["lds_instructions"]) if prune else 1.0

    def rank_limit() -> float:  # the rank value above which no round trip can reach the tie group
        if not prune:
            return float("inf")
        lds = cm.tie_limit(best_rank) if out else float("inf")
        return min(lds, ceiling) if best_only else lds

    def limit() -> float:  # the cost floor above which none can
        return rank_limit() / least_factor

    for place, acc in pool.by_floor(limit, rank_limit) if prune else pool.placed():  # (unpruned: in place order)
        if acc.design.lds_bytes > min(budget, target.lds_bytes):
            continue
        fitted = True
        if prune and acc.floor() > limit():
            continue
        key = (lds_path.layout_key(acc.design), acc.s_width_bytes, acc.s_matrix, acc.d_matrix)
        if best_only and key in built:
            continue
        built.add(key)
        if best_only and _outranked(acc, priced, cm):
            continue
        out.append(lds_plan(ctx, acc))
        places.append(place)
        priced.append((cm.rank_cost(out[-1]), out[-1].total_with_overhead(), cm.tie_count(out[-1])))
        best_rank = min(best_rank, cm.rank_value(*priced[-1][:2]))
    if not fitted and rank_limit() < float("inf"):  # (out is empty: the limit is the ceiling)
        return []  # every round trip given was over the budget, and the rest rank after the in-wave plans
    if not fitted:  # (no limit: every round trip was given)
        every = pool.every()
        if not every:
            raise _NoLdsPlan("no shared layout gives LDS accesses for this conversion")
        raise _NoLdsPlan(f"the tile needs {min(a.design.lds_bytes for a in every)} bytes of LDS, more than "
                          f"{ctx.budget_text} allows; give a larger lds_budget_bytes or one that allows rounds")
    return [out[k] for k in sorted(range(len(out)), key=places.__getitem__)]


def lds_plan(ctx: ConversionContext, acc: lds_path.LdsAccesses) -> Plan:
    """The plan (priced, unverified) of the LDS round trip ``acc`` (its selects' form: ``_best_emission``)."""
    prog = _program(ctx)
    outs = _dst_values(ctx, prog, build_lds(prog, acc, list(range(prog.n_init))))
    return _best_emission(ctx, prog, outs, lambda mode: _lds_plan_of(ctx, acc, prog, outs, mode))


def _lds_plan_of(ctx: ConversionContext, acc: lds_path.LdsAccesses, prog: Program, outs: list[int],
                 dpp_selects: str) -> Plan:
    """``lds_plan``'s plan with ``prog``'s steps emitted under ``dpp_selects`` (``Program.emit``'s)."""
    plan = _base_plan(ctx)
    plan.lds_bytes = acc.design.lds_bytes
    plan.steps = prog.emit(outs, _n_values(plan.slots_out, ctx), dpp_selects,
                           _identity_dpp(ctx) if dpp_selects != "none" else None)
    plan.strategy = "lds"
    plan = _priced(plan, ctx, acc.address_valu, lds_path.ROUND_TRIP_DS_DEPTH, acc.s_copies, acc.access_cycles(),
                   acc.d_copies)
    rounds = 1 << acc.design.n_rep_bits
    sync = {"workgroup": "barriers (data crosses warps)",
            "warp": "warp barriers (each warp reads its own writes; its lanes are not in lockstep)",
            None: "no barrier (each warp reads its own writes)"}[acc.barrier_scope]
    plan.notes.append(f"LDS layout: {acc.design.source}; {rounds} round(s); {sync}")
    return plan


def _outranked(acc, built: list[tuple[float, int, float]], cm: cost_mod.CostModel) -> bool:
    """Does an LDS plan built before (``built``: the rank cost, the instructions with setup and the tie
    count, ``CostModel.tie_count``, of each) rank before the plan of ``acc`` whatever else is built?
    Yes when its rank value is at most that of ``acc``'s plan floor (``LdsAccesses.plan_floor``, at
    most the plan's own: ``rank_value`` does not decrease in either part) and its tie count is less than
    the floor's instructions (at most the plan's tie count, which adds passes to them): it is then in
    the tie group whenever that plan is and comes first on the tie key (_rank); and the tie group does
    not change.  (With as many the next keys decide, among them the latency value, which no floor
    bounds: that plan is built.)"""
    if not built:
        return False
    cost, count = acc.plan_floor()
    value = cm.rank_value(cost, count)
    return any(q_tie < count and cm.rank_value(q_cost, q_count) <= value for q_cost, q_count, q_tie in built)


def candidate_plans(src: LinearLayout, dst: LinearLayout, arch: str, element_bits: int, *,
                    lds_budget_bytes: int | None = None, strategy: str = "auto",
                    objective: str | None = None, src_tuple_dwords=cost_mod.SRC_TUPLE_DWORDS,
                    dst_tuple_dwords=cost_mod.DST_TUPLE_DWORDS, prune: bool = True,
                    src_unpacked: bool = False, dst_unpacked: bool = False, src_global_strides=None) -> list[Plan]:
    """The candidate plans (unverified), in rank order under ``objective``.  ``prune`` (under the
    objectives whose value the floors bound): the LDS designs whose floors cannot reach the tie group
    of the in-wave plans are not built; ``prune=False`` builds every candidate.  ``src_unpacked`` /
    ``dst_unpacked`` (plan_conversion's): the candidates of a side held one element per VGPR that
    convert it, each run on the emulator (``_first_unpacked``'s test).  ``src_global_strides``:
    plan_conversion's."""
    require_flag("prune", prune)
    ctx = _context(src, dst, arch, element_bits, lds_budget_bytes, strategy, objective, src_tuple_dwords,
                   dst_tuple_dwords, src_unpacked, dst_unpacked, src_global_strides)
    ranked = _candidates(ctx, prune=prune)
    if not (src_unpacked or dst_unpacked):
        return ranked
    return [plan for plan in ranked if _converts_unpacked(plan, src_unpacked)]


#: The AMD kernel forms a flag may ask for (``require_amd``): what the flag's plan means for the kernel.
UNPACKED_FORM = "held one element per VGPR"
ONE_COPY_FORM = "a dst stored from its canonical lanes"


def require_amd(name: str, arch: str, form: str) -> None:
    """A LayoutError where ``arch`` is an NVIDIA target: the flag ``name`` asks for ``form`` (``UNPACKED_FORM``,
    ``ONE_COPY_FORM``), an AMD kernel form that no NVIDIA emitter produces."""
    if get_target(arch).family == "nvidia":
        raise LayoutError(f"{name}: {form} is an AMD kernel form; {arch} has no emitter for it")


def _context(src: LinearLayout, dst: LinearLayout, arch: str, element_bits: int, lds_budget_bytes: int | None,
             strategy: str, objective: str | None, src_tuple_dwords, dst_tuple_dwords, src_unpacked: bool,
             dst_unpacked: bool, src_global_strides, one_wave: bool | None = None) -> ConversionContext:
    """The ConversionContext of plan_conversion's arguments: of ``unpacked_src(src)`` where ``src_unpacked``;
    a non-bool flag is a LayoutError naming it, and so is ``src_global_strides`` on an NVIDIA target (its
    plans price no load line's address registers: cost.AddressRegisters.of)."""
    for name, value in (("src_unpacked", src_unpacked), ("dst_unpacked", dst_unpacked)):
        if require_flag(name, value):
            require_amd(name, arch, UNPACKED_FORM)
    if src_global_strides is not None and get_target(arch).family == "nvidia":
        raise LayoutError(f"src_global_strides: a src load line's address registers are an AMD kernel input; "
                          f"{arch}'s plans price none")
    if dst_unpacked:
        unpacked_dst(dst, element_bits)  # (checks the element size)
    return ConversionContext.create(unpacked_src(src, element_bits) if src_unpacked else src, dst, arch, element_bits,
                                    lds_budget_bytes, strategy, objective, src_tuple_dwords, dst_tuple_dwords,
                                    src_global_strides, dst_unpacked, one_wave)


def _candidates(ctx: ConversionContext, best_only: bool = False, movmatrix: bool = True,
                prune: bool = True, ceiling: float = float("inf")) -> list[Plan]:
    """``_unrefined_candidates`` (``ceiling``: its), and where the first of them stays in the wave (no LDS), the
    programs with dup exchanges (``_dup_programs``) ranked with them.

    A dup exchange turns an exchange with a src lane bit whose column is zero into one select per
    unit pair, and such a program refines a plan in registers; it does not take a conversion from
    LDS to registers: the rank policy weighs instructions against modelled cycles at a rate
    (``CostModel.rank_value``, docs/conversions.md section 5) chosen for the candidates without
    them, and at that rate the select chains they make outrank round trips of a third of their
    instructions (on Triton's AMD corpus, three more cases over Triton in either measure)."""
    ranked = _unrefined_candidates(ctx, best_only, movmatrix, prune, ceiling)
    if not ranked or ranked[0].strategy != "registers":
        return ranked
    maps = _wave_maps(ctx.problem)
    if not maps[0].wave_local:
        return ranked
    refined = [_finish_in_wave(ctx, b) for b in _dup_programs(ctx, maps)]
    return _rank(ranked + refined, ctx.cost_model) if refined else ranked


def _unrefined_candidates(ctx: ConversionContext, best_only: bool = False, movmatrix: bool = True,
                          prune: bool = True, ceiling: float = float("inf")) -> list[Plan]:
    """The candidate plans, cheapest first (``best_only``: only the first is wanted, so candidates
    that provably rank after another are not built -- under the latency objective, whose value the
    floors bound; under another no floor prunes: every LDS design and the gather are built, and the
    exchange schedule is still the one the latency table prices best).  ``movmatrix``: also the
    plans that start with a movmatrix stage (``_movmatrix_candidates``; not within one).
    ``prune``: False builds every LDS design even under the latency objective (the plans are parts
    of larger ones, whose value the floors of the part do not bound).

    The in-wave candidates are made as programs first (an exchange program built only when read);
    where only the first plan is wanted, the floors apply and the pipes do not overlap, and their
    least floor (linlayout.synth.program_floor) is above ``LDS_FIRST_FACTOR`` times the LDS lower
    bound's rank value, the LDS plans are built first (``_lds_first``) -- told first from the early
    floors (``_InWaveProgram.early_floor``, at most the floors: where their least is above, so is
    the floors'), else from the floors of the built programs, so the order taken is the one the
    floors give; else the in-wave plans are priced first, least floor first and only
    those whose floor is within the tie limit of one priced before (``_within_ties``), and bound the
    LDS designs built (their tie limit, ``_lds_candidates``' ``ceiling``).  ``ceiling``: under strategy
    ``registers`` with ``best_only``, where every in-wave program's floor, those with dup exchanges
    (``_dup_programs``) included, is above this rank value, no candidate (the caller wants no plan
    above it: ``_one_copy_plan``)."""
    prob, strategy, cm = ctx.problem, ctx.strategy, ctx.cost_model
    prune = prune and cm.floors_apply
    best_only = best_only and prune
    if _same_map(prob) and not ctx.dst_unpacked:
        plan = _base_plan(ctx)
        plan.strategy = "noop"
        plan.cost, plan.cost_detail = cost_mod.plan_cost(plan, cm, 0)
        return [plan]
    # where some warp needs an element its src warp does not hold (the lower bound's ``cross_warp``),
    # every element map crosses warps: no wave map is local or moves lanes per warp, so none is made
    # (asked where the LDS candidates ask the bound anyway: ``prune``; the inner problems of the
    # movmatrix stages are not pruned on NVIDIA)
    maps = None if prune and _lower_bound(ctx)["cross_warp"] else _wave_maps(prob)
    wm = maps[0] if maps else None
    with_movmatrix = movmatrix and "movmatrix" in ctx.target.lane_ops
    cands: list[Plan] = []
    in_wave = wm is not None and strategy in ("auto", "registers")
    if in_wave and wm.wave_local:
        # the gather takes any map: built on the first only
        programs = [b for k, m in enumerate(maps) for b in _in_wave_programs(ctx, m, gather=k == 0)]
        if programs and best_only and not cm.pipe_overlap and not with_movmatrix:
            lds_first = float("inf")  # (strategy registers: no LDS plan)
            if strategy == "auto":
                lb = _lower_bound(ctx)
                lds_first = LDS_FIRST_FACTOR * cm.rank_value(lb["lds_cost"], lb["lds_instructions"])
                early = [b.early_floor().rank_value(cm) for b in programs]  # no program built that has moves
                if min(early) > lds_first:
                    return _rank(_lds_first(ctx, programs, early), cm)
            floors = [b.floor().rank_value(cm) for b in programs]
            if strategy == "registers" and min(floors) > ceiling \
                    and all(b.floor().rank_value(cm) > ceiling for b in _dup_programs(ctx, maps)):
                return []
            if min(floors) > lds_first:
                return _rank(_lds_first(ctx, programs, floors), cm)
            cands.extend(_within_ties(ctx, programs, floors))
        else:
            cands.extend(_finish_in_wave(ctx, b) for b in programs)
    elif in_wave and wm.warp_lane_offsets is not None:
        cands.extend(_warp_lane_candidates(ctx, wm))
    if with_movmatrix:
        cands.extend(_movmatrix_candidates(ctx, best_only))
    if strategy == "registers" and not cands:
        raise LayoutError(_no_register_plan(wm))
    lds_floor, ceiling = None, float("inf")
    if cands and strategy == "auto" and prune:  # no LDS plan can beat (or tie) it: skip
        lb = _lower_bound(ctx)
        lds_floor = cm.rank_value(lb["lds_cost"], lb["lds_instructions"])
        ceiling = cm.tie_limit(min(rank_value(p, cm) for p in cands))
    if strategy in ("auto", "lds") and (lds_floor is None or lds_floor <= ceiling):
        try:
            cands.extend(_lds_candidates(ctx, best_only, ceiling, prune))
        except (_NoLdsPlan, lds_path.DesignRefused):
            if not cands:
                raise
    return _rank(cands, cm)


def _no_register_plan(wm) -> str:
    """Why ``strategy="registers"`` finds no plan, true to the wave map ``wm`` (None: the lower bound
    found data crossing warps): the data cross warps, or each warp holds what it needs but no in-wave
    candidate serves it -- e.g. a per-warp register offset (``WaveMap.warp_register_offsets``, after the
    warp-dependent lane move where there is one) that moves elements inside a packed 32-bit register,
    which ``_in_wave_program`` refuses (random 8/16-bit pairs with warp-broadcast src found the first
    message given there: false)."""
    if wm is None or not (wm.wave_local or wm.warp_lane_offsets is not None):
        return "the conversion moves data between warps; only the LDS strategy can do it"
    return ("no in-register plan: each warp holds the data it needs, but the planner builds no in-wave candidate "
            "for it (a per-warp register offset inside a packed 32-bit register is one such case); only the LDS "
            "strategy can do it")


def _lds_first(ctx: ConversionContext, programs: list[_InWaveProgram], floors: list[float]) -> list[Plan]:
    """The candidates whose first (``_rank``) is the first of every candidate: the LDS plans
    (``_lds_candidates`` with ``best_only``, no ceiling), then the in-wave ``programs`` priced, but
    only those whose rank value floor (``ProgramFloor.rank_value``) is within the tie limit of the
    best LDS plan's (all of them when no LDS plan fits).  ``floors``: rank values at most those
    floors (``_InWaveProgram.early_floor``'s): a program whose ``floors`` entry is above the limit
    is not even built; the others are built and priced when their floor is within it -- the same
    programs as by the floors alone.

    Why the first plan is the one of the in-wave-first order.  ``_rank`` puts first, of the plans
    whose rank value is at most ``tie_limit(V)`` (``CostModel.tie_limit``; ``V``: the least rank
    value; the tie group), the one of least ``CostModel.tie_count`` (instructions with setup, with the passes
    bank conflicts add under ``concurrent`` on CDNA), then without LDS, then of the least
    latency value, then the first in the candidates' fixed order (``_rank``).  (1) A program left
    unpriced has a rank value above ``tie_limit(B) >= tie_limit(V)`` (``B``: the best LDS plan's, an
    upper bound of ``V``): it is outside the tie group and is not the least, so leaving it out changes
    neither ``V`` nor the tie group.  (2) The LDS plans built: the in-wave-first order passes the
    in-wave plans' tie limit as a ceiling, which leaves out designs whose floors (``floor`` with the
    least LDS instructions, ``plan_floor``) are above it, and those only; a design of rank value at
    most ``tie_limit(V)`` has its floors below both every built plan's tie limit and the
    ceiling, so it is built in both orders unless a plan built before outranks it
    (``_outranked``), which then has a rank value at most its own: a plan of the tie group too,
    built in both orders (by induction along the build order, the plan floors' rank value order).
    So both orders build the same tie group, in the same relative order (in-wave plans first, LDS
    plans in the pool's order): the first plan is the same, full ties included (the LDS plans are
    given in the pool's order, whatever order they were built in)."""
    cm = ctx.cost_model
    try:
        lds = _lds_candidates(ctx, best_only=True)
    except (_NoLdsPlan, lds_path.DesignRefused):  # no LDS plan fits: the in-wave plans are the candidates
        lds = []
    limit = cm.tie_limit(min(rank_value(p, cm) for p in lds)) if lds else float("inf")
    return [_finish_in_wave(ctx, b) for b, f in zip(programs, floors)
            if f <= limit and b.floor().rank_value(cm) <= limit] + lds


def _within_ties(ctx: ConversionContext, programs: list[_InWaveProgram], floors: list[float]) -> list[Plan]:
    """The priced plans of ``programs`` (in their order) but those that cannot enter the tie group:
    priced least floor first (``floors``: ``ProgramFloor.rank_value``), a program whose floor is above
    the tie limit of a plan priced before (``CostModel.tie_limit`` of its rank value) is left
    unpriced.  Its rank value is above ``tie_limit(V)`` (``V``: the least rank value of every
    candidate), so, as in ``_lds_first`` (1), leaving it out changes neither ``V`` nor the tie group
    nor the LDS ceiling (``_candidates``): the first plan is the same."""
    cm = ctx.cost_model
    plans: dict[int, Plan] = {}
    limit = float("inf")
    for k in sorted(range(len(programs)), key=floors.__getitem__):
        if floors[k] > limit:
            break
        plans[k] = _finish_in_wave(ctx, programs[k])
        limit = min(limit, cm.tie_limit(rank_value(plans[k], cm)))
    return [plans[k] for k in sorted(plans)]


def _movmatrix_candidates(ctx: ConversionContext, best_only: bool) -> list[Plan]:
    """Plans with a ``movmatrix`` stage (linlayout.synth.movmatrix_stage) at one end, each register's
    16-bit halves transposed in place: first, on every src register, then the rest converts the
    layout that leaves into dst; or last, the rest converts src into the layout whose stage gives
    dst, then the stage on every dst register.  An end is tried when its stage brings that side's
    lanes closer to the other side's (``worth_trying``); the rest is the best plan of its conversion
    (every candidate unless ``best_only``), and the stage's steps are priced with it like any plan's.
    Where the pipes overlap (``CostModel.pipe_overlap``) the value of the rest with the stage is not
    its own value plus the stage's (the stage's MIO cycles may hide under the rest's ALU issue or
    not): there every candidate of the rest is built, unpruned, and priced with the stage.  An end whose
    rest has no plan (``_NoLdsPlan``, ``lds_path.DesignRefused``: its rounds cannot split its lanes'
    elements, say, where the conversion's own can) gives none; any other error propagates.  A first
    stage leaves out the src registers whose values the rest never reads (``_value_read``: random
    pairs found a ``movmatrix`` on a register nothing read, which the compiler deletes)."""
    prob = ctx.problem
    p = ctx.slots_per_dword
    out = []
    for first in (True, False):
        side, other = (prob.src, prob.dst) if first else (prob.dst, prob.src)
        moved = movmatrix_layout(side, ctx.element_bits)
        if moved is None or not worth_trying(side, moved, other):
            continue
        inner = ConversionContext.create(moved if first else prob.src, prob.dst if first else moved, ctx.arch,
                                         ctx.element_bits, ctx.lds_budget_bytes if ctx.budget_given else None,
                                         ctx.strategy, ctx.objective, ctx.src_tuples, ctx.dst_tuples, ctx.src_offsets,
                                         dst_unpacked=ctx.dst_unpacked)
        stage = [Movmatrix(dst=list(range(d * p, d * p + p)), src=list(range(d * p, d * p + p)))
                 for d in range(_n_values(side.in_dim_size("register"), ctx))]
        whole = ctx.cost_model.pipe_overlap
        try:
            rests = _candidates(inner, best_only and not whole, movmatrix=False, prune=not whole)
        except (_NoLdsPlan, lds_path.DesignRefused):  # the staged conversion has no plan: this end gives none
            continue
        for rest in rests[:1 if best_only and not whole else None]:
            plan = _base_plan(ctx)
            if first:  # a src register the rest never reads needs no stage (its value is dead)
                plan.steps = [m for m in stage if any(_value_read(rest.steps, s, plan.slots_out) for s in m.dst)] \
                    + rest.steps
            else:
                plan.steps = rest.steps + stage
            plan.lds_bytes = rest.lds_bytes
            plan.notes = [f"movmatrix stage: the 16-bit halves of every {'src' if first else 'dst'} register "
                          "transposed"] + rest.notes
            plan.strategy = "registers" if rest.strategy in ("noop", "registers", "lanes", "rename") else rest.strategy
            out.append(_priced(plan, ctx))
    return out


def rank_value(plan: Plan, cm: cost_mod.CostModel) -> float:
    """What the planner ranks ``plan`` by: ``CostModel.rank_value`` of its ``CostModel.rank_cost`` (the cost with
    its bank-conflict cycles weighed) and its instructions with setup."""
    return cm.rank_value(cm.rank_cost(plan), plan.total_with_overhead())


def _rank(cands: list[Plan], cm: cost_mod.CostModel) -> list[Plan]:
    """Least rank value first (``CostModel.rank_value``: the cost, times a power of the instructions
    with setup under ``concurrent``); near-ties (at most ``CostModel.tie_limit`` of the least) by
    ``CostModel.tie_count`` (instructions with setup, under ``concurrent`` on CDNA with the passes bank
    conflicts add), then no LDS, then the latency value (the cost itself under the
    latency objective); candidates tied on every one of those keys keep their order in ``cands``
    (a stable sort).  The candidate lists are made in a fixed order that does not depend on which
    candidates were built (pruned or not): the in-wave plans in the order of their programs, then
    the movmatrix plans, then the LDS round trips in the design pool's order -- the designs as
    ``lds_path.designs`` lists them, then each design's store choices (``_lds_candidates``), not
    the order the floors had them built in; the programs with dup exchanges after the plans they
    refine (``_candidates``).  So the first plan is the same whichever candidates the floors leave
    unbuilt (none of which could be first)."""
    if not cands:
        return cands
    value = {id(p): rank_value(p, cm) for p in cands}
    tie = cm.tie_limit(min(value.values()))
    return sorted(cands, key=lambda p: (value[id(p)] > tie, cm.tie_count(p), p.lds_bytes > 0,
                                        p.cost_detail.get("latency_value", 0.0)))


def _same_map(prob: Problem) -> bool:
    s, d = prob.src_cols, prob.dst_cols
    return all(s[k] == d[k] for k in ("register", "lane", "warp"))


def plan_conversion(src: LinearLayout, dst: LinearLayout, arch: str, element_bits: int, *,
                    lds_budget_bytes: int | None = None, strategy: str = "auto",
                    objective: str | None = None,
                    src_tuple_dwords=cost_mod.SRC_TUPLE_DWORDS,
                    dst_tuple_dwords=cost_mod.DST_TUPLE_DWORDS, src_unpacked: bool = False,
                    dst_unpacked: bool = False, src_global_strides=None, dst_one_copy: bool = False,
                    one_wave: bool | None = None) -> Plan:
    """The cheapest plan converting a tile held in ``src`` into ``dst``, verified on the emulator.

    ``src``/``dst``: distributed layouts (register, lane, warp[, block] -> tensor).
    ``arch``: a target with lane and LDS instructions (CDNA gfx90a, gfx942, gfx950; NVIDIA sm_80,
    sm_90; RDNA wave32 gfx1100, gfx1200, gfx1250).  ``element_bits``: 8, 16,
    32 or 64.  ``lds_budget_bytes``: LDS the conversion may use (default: the
    target's LDS); a larger tile moves in rounds, and only a budget no plan can meet
    is an error.  ``strategy``: ``auto`` (cheapest), ``registers`` (stay in
    registers; an error when data crosses warps) or ``lds``.  ``objective``: what
    "cheapest" means (linlayout.synth.cost.OBJECTIVES): ``concurrent`` (one wave's
    critical path plus the issue cycles of the other waves of its SIMD converting with
    it), ``latency`` (one wave's critical path), ``throughput`` (the busiest of the
    SIMD's issue and the LDS pipe, several waves per SIMD hiding latency) or
    ``instructions``; None (the default): the target's ``default_objective``
    (``concurrent`` on AMD, ``latency`` on NVIDIA); the certificate records it.  Under
    ``concurrent`` the candidates are ranked by that value times their instructions with setup to
    the power ``cost.CONCURRENT_INSTRUCTION_EXPONENT`` (``CostModel.rank_value``).  ``src_tuple_dwords``: the src VGPRs arrive as aligned tuples of this many dwords
    in register order (4, the default: an MFMA result or a dwordx4 load; 1: loaded one dword at a
    time), or in the tuples of the dword-index bits it lists (a sequence of at most two: dword ``d`` is
    at position ``pext(d, bits)``; a kernel's single loads at consecutive addresses merged by LLVM,
    linlayout.synth.vgpr_tuples), which prices the copies an LDS store of other register groups needs.
    ``dst_tuple_dwords``: the dst's consumer takes aligned tuples of this many dwords in register
    order (1, the default: no tuple; 2 or 4: a ``dwordx2``/``dwordx4`` store, an MFMA/WMMA operand),
    or those of the bits it lists, which prices the copies LDS loads of other register groups need
    (ConversionContext).  ``src_unpacked``: the src arrives one 8/16-bit element per VGPR, in its low
    bits, the bits above it zero (a kernel loading each element alone: ``global_load_ubyte`` /
    ``_ushort``); the plan's ``src`` is then ``linlayout.synth.plan.unpacked_src(src, element_bits)``
    (VGPR ``r``'s element is slot ``r * 32 / element_bits``), ``plan.src_unpacked`` is set, and the plan
    is the first candidate in rank order whose run converts with the bytes above each element zero
    (``_first_unpacked``: of the candidates built for the first place, else of every one;
    ``UnpackedSrcRefused`` where none does).  ``dst_unpacked``: the dst is handed over one 8/16-bit
    element per VGPR, in its low bits, the bits above it don't-care (a kernel storing each element
    alone: ``global_store_byte`` / ``_short``); the plan's ``dst`` is then
    ``linlayout.synth.plan.unpacked_dst(dst, element_bits)``, ``plan.dst_unpacked`` is set, its
    programs are the packed dst's with their outputs split per element (``in_wave.unpacked_outputs``:
    no ``v_perm_b32`` joins two elements into a dword), and the plan is chosen as for
    ``src_unpacked`` (``UnpackedDstRefused`` where none converts).  ``src_global_strides``: where the kernel
    loads the src from a global tensor right before the conversion, that tensor's element strides, one per
    out dim (a row-major tensor of shape ``n``: ``prod(n[d+1:])``); the LDS addresses that the load line's
    offset registers reach are priced as reused (LLVM's common-subexpression elimination;
    linlayout.synth.src_offsets).  None (the default): no such load.  ``dst_one_copy``: only one copy of
    each dst element that ``dst`` holds in several lanes (a zero lane basis) is read, the one in the
    canonical lanes (linlayout.synth.one_copy: the lanes whose bits of those bases are clear; a kernel
    storing the dst from them alone); the in-wave plans of the filled dsts (``one_copy.filled_dsts``) join
    the plan of ``dst`` and the cheapest is taken (``_one_copy_plan``); ``plan.dst_one_copy`` is set where
    one of them is, and its ``dst`` is ``dst`` in the register order it chose.  An AMD kernel form (an
    NVIDIA target is a LayoutError).  ``one_wave``: the kernel the conversion runs in is one wave and declares its
    threads, so that LLVM bounds the thread id by the wave size (linlayout.synth.lane_arith, "One wave": the setup
    estimates count the programs LLVM makes then); None (the default): the layouts' warps tell, as in
    linlayout's kernels, which declare ``num_warps`` waves; False for a kernel of one-warp layouts that runs more
    waves or declares no threads (FlyDSL's ``convert`` in a larger block); ``plan.one_wave`` records it.
    """
    if require_flag("dst_one_copy", dst_one_copy):
        require_amd("dst_one_copy", arch, ONE_COPY_FORM)
    args = (arch, element_bits, lds_budget_bytes, strategy, objective, src_tuple_dwords, dst_tuple_dwords,
            src_unpacked, dst_unpacked, src_global_strides, one_wave)
    plain = _plan_layouts(src, dst, *args)
    return _one_copy_plan(plain, src, dst, args) if dst_one_copy else plain


def _one_copy_plan(plain: Plan, src: LinearLayout, dst: LinearLayout, args: tuple) -> Plan:
    """``plain`` (the plan of ``dst``) or the cheapest of the in-wave plans (strategy ``registers``: a fill's
    LDS round trips are priced right -- where their loads do not land in the tuples the kernel stores, the
    copies are ``valu_load_tuple_copies`` -- but planning them triples the planning time of the dsts with
    copy bits for no gain on the corpora, docs/benchmarks.md "Session 21: fillds26"; a fill with no in-wave
    plan, ``LayoutError``, is left out) of
    ``dst``'s filled dsts (``one_copy.filled_dsts``), each with ``dst`` in its register order
    (``one_copy.unfilled``), ``dst_one_copy`` set, verified on the canonical lanes, and the kernel's store
    mask added to its setup (``salu_one_copy_store``, ``cost.ONE_COPY_STORE_SALU``) and cost, ranked as the
    planner ranks whole plans (``CostModel.best_plan``: near ties by ``CostModel.tie_count``, the plans in the
    fills' order after ``plain``).  ``args``:
    plan_conversion's arguments after ``dst``; a strategy ``lds`` tries no filled dst.

    Where the floors apply (``CostModel.floors_apply``) the fills are planned in the order of their rank
    value floors (``_one_copy_floor``), and a fill whose floor is above the tie limit of the least rank
    value planned so far is not planned: its plan's rank value would be above the tie limit of every
    least rank value, so it is neither the least nor in the tie group, and ``best_plan`` takes the same plan
    without it."""
    arch, strategy, cm = args[0], args[3], cost_mod.cost_model(args[0], args[4])
    bits = one_copy.copy_bits(dst)
    contexts = [_context(src, filled, *args[:3], "registers", *args[4:])
                for filled in (one_copy.filled_dsts(src, dst) if strategy != "lds" else [])]
    floors = [_one_copy_floor(ctx) for ctx in contexts]
    least = rank_value(plain, cm)
    planned = {}
    for i in sorted(range(len(contexts)), key=floors.__getitem__):
        ceiling = cm.tie_limit(least) if cm.floors_apply else float("inf")
        if floors[i] > ceiling:
            break  # (every later floor is above it too)
        try:
            plan = _plan_context(contexts[i], *args[7:9], ceiling)
        except LayoutError:  # no in-wave plan of this fill
            continue
        if plan is None:  # every plan of this fill is above the ceiling
            continue
        _as_one_copy(plan, bits, cm)
        res = verify(plan, certificate=False)
        if not res.ok:
            raise PlanVerificationError(f"internal error: the one-copy {plan.strategy} plan failed verification: "
                                        f"{res.message}")
        planned[i] = plan
        least = min(least, rank_value(plan, cm))
    return cm.best_plan([plain] + [planned[i] for i in sorted(planned)])


def _as_one_copy(plan: Plan, bits: list[int], cm: cost_mod.CostModel) -> Plan:
    """``plan`` (of a filled dst) made the one-copy plan of the dst it was filled from, in place: its ``dst``
    with the lane bases ``bits`` zero again (``one_copy.unfilled``), ``dst_one_copy`` set, the kernel's
    store mask in its setup (``salu_one_copy_store``, ``cost.ONE_COPY_STORE_SALU``) and its cost repriced
    under ``cm``."""
    plan.dst, plan.dst_one_copy = one_copy.unfilled(plan.dst, bits), True
    plan.overhead = dict(plan.overhead, salu_one_copy_store=cost_mod.ONE_COPY_STORE_SALU)
    plan.cost, plan.cost_detail = cost_mod.plan_cost(plan, cm)
    return plan


def one_copy_candidates(src: LinearLayout, dst: LinearLayout, arch: str, element_bits: int, *,
                        lds_budget_bytes: int | None = None, strategy: str = "registers",
                        objective: str | None = None,
                        src_tuple_dwords=cost_mod.SRC_TUPLE_DWORDS, dst_tuple_dwords=cost_mod.DST_TUPLE_DWORDS,
                        prune: bool = True, src_unpacked: bool = False, dst_unpacked: bool = False,
                        src_global_strides=None) -> list[list[Plan]]:
    """The candidates ``plan_conversion(..., dst_one_copy=True)`` chooses among beside ``dst``'s own
    (``candidate_plans``), unverified: per filled dst (``one_copy.filled_dsts``, in order) its
    ``candidate_plans`` under ``strategy`` (``registers``: the planner's; another, such as ``auto``, weighs
    the fills' LDS round trips, which the planner does not) made one-copy plans of ``dst`` (``_as_one_copy``),
    in the fill's rank order (ranked before the store mask is added, as the planner ranks them); an empty
    list for a fill with no plan under it.  The other arguments are candidate_plans', checked once on ``dst``
    first (a bad one is a LayoutError, never an empty list)."""
    require_amd("dst_one_copy", arch, ONE_COPY_FORM)
    require_flag("prune", prune)
    _context(src, dst, arch, element_bits, lds_budget_bytes, strategy, objective, src_tuple_dwords, dst_tuple_dwords,
             src_unpacked, dst_unpacked, src_global_strides)
    bits, cm = one_copy.copy_bits(dst), cost_mod.cost_model(arch, objective)
    out = []
    for filled in one_copy.filled_dsts(src, dst):
        try:
            plans = candidate_plans(src, filled, arch, element_bits, lds_budget_bytes=lds_budget_bytes,
                                    strategy=strategy, objective=objective, src_tuple_dwords=src_tuple_dwords,
                                    dst_tuple_dwords=dst_tuple_dwords, prune=prune, src_unpacked=src_unpacked,
                                    dst_unpacked=dst_unpacked, src_global_strides=src_global_strides)
        except LayoutError:  # no plan under strategy (registers: the data cross warps)
            plans = []
        out.append([_as_one_copy(plan, bits, cm) for plan in plans])
    return out


def _one_copy_floor(ctx: ConversionContext) -> float:
    """A floor of the rank value of a one-copy plan in registers of ``ctx`` (a filled dst, strategy
    ``registers``) where the floors apply: ``lower_bound``'s ``register_cost`` with its instructions at
    least the cross-lane moves and the merges (a move may be a merge: the larger) and the store mask
    (``cost.ONE_COPY_STORE_SALU``); infinite where the data cross warps (no plan in registers)."""
    lb = _lower_bound(ctx)
    if lb["cross_warp"]:
        return float("inf")
    instructions = max(lb["cross_lane_dwords"], lb["min_register_merges"]) + cost_mod.ONE_COPY_STORE_SALU
    return ctx.cost_model.rank_value(lb["register_cost"], instructions)


def _plan_layouts(src: LinearLayout, dst: LinearLayout, arch: str, element_bits: int, lds_budget_bytes: int | None,
                  strategy: str, objective: str | None, src_tuple_dwords, dst_tuple_dwords, src_unpacked: bool,
                  dst_unpacked: bool, src_global_strides, one_wave: bool | None) -> Plan:
    """plan_conversion of ``dst`` itself (every lane's copy read)."""
    return _plan_context(_context(src, dst, arch, element_bits, lds_budget_bytes, strategy, objective,
                                  src_tuple_dwords, dst_tuple_dwords, src_unpacked, dst_unpacked, src_global_strides,
                                  one_wave),
                         src_unpacked, dst_unpacked)


def _plan_context(ctx: ConversionContext, src_unpacked: bool, dst_unpacked: bool,
                  ceiling: float = float("inf")) -> Plan | None:
    """The plan of ``ctx`` (``_plan_layouts``; ``src_unpacked`` / ``dst_unpacked``: plan_conversion's);
    None where ``_candidates``' ``ceiling`` leaves no candidate (every plan's rank value is above it)."""
    first = _candidates(ctx, best_only=True, ceiling=ceiling)
    if not first:
        return None
    if src_unpacked or dst_unpacked:  # the first candidate, else every one in rank order
        best = _first_unpacked(first, src_unpacked) or _first_unpacked(_candidates(ctx), src_unpacked)
        if best is None:
            refused = UnpackedSrcRefused if src_unpacked else UnpackedDstRefused
            raise refused(f"no plan converts this {refused.side} held one element per VGPR")
    else:
        best = first[0]
        res = verify(best, certificate=False)
        if not res.ok:
            raise PlanVerificationError(f"internal error: the {best.strategy} plan failed verification: {res.message}")
    if (best.src_unpacked, best.dst_unpacked) != (src_unpacked, dst_unpacked):
        raise PlanVerificationError(f"internal error: the {best.strategy} plan holds src_unpacked="
                                    f"{best.src_unpacked}, dst_unpacked={best.dst_unpacked}; asked for "
                                    f"{src_unpacked}, {dst_unpacked}")
    best.verified = True
    if best.strategy == "registers":
        cross = any(s.across_lanes for s in best.steps)
        best.strategy = "lanes" if cross else ("rename" if best.counts()["total"] == 0 else "registers")
    best.lower_bound = _lower_bound(ctx)
    return best


class UnpackedSrcRefused(LayoutError):
    """No candidate of a src held one element per VGPR reads only the elements' bytes (``src_unpacked``)."""

    side = "src"


class UnpackedDstRefused(LayoutError):
    """No candidate of a dst held one element per VGPR converts (``dst_unpacked``; its src held so, where
    both are asked for, is ``UnpackedSrcRefused``)."""

    side = "dst"


def _first_unpacked(ranked: list[Plan], src_unpacked: bool = True) -> Plan | None:
    """The first of ``ranked`` (candidates of a src :func:`~linlayout.synth.plan.unpacked_src`) that converts
    the src held one element per VGPR: run with the bytes above each element zero (``src_unpacked``),
    the dst holds its elements; None when none does.  The candidates are built for the src whose VGPRs
    repeat their element in every slot, so a plan may read a slot above the element (a byte permute
    of the upper half); the LDS round trips store each VGPR's first slot (``lds_path``: a duplicate is
    stored from its original), so one of them converts where a round trip fits the LDS.  Of a dst held
    one element per VGPR (``Plan.dst_unpacked``, set where they were built) the run checks each VGPR's
    low slot alone; ``src_unpacked=False``: the src is packed."""
    return next((plan for plan in ranked if _converts_unpacked(plan, src_unpacked)), None)


def _converts_unpacked(plan: Plan, src_unpacked: bool) -> bool:
    """Marks ``plan`` ``src_unpacked`` as given; does its run (the bytes above each src element zero, where
    set; a ``dst_unpacked`` plan's upper dst slots unchecked) convert?"""
    plan.src_unpacked = src_unpacked
    return verify(plan, certificate=False).ok


_wm_cache = caches.cache("synth.convert.wave_maps")
_lb_cache = caches.cache("synth.convert.lower_bounds")


def _wave_map(prob: Problem):
    return _wave_maps(prob)[0]


def _wave_maps(prob: Problem) -> list:
    """The element maps the in-wave plans are built from: ``wave_local_map``'s, then, where it
    differs and stays in each wave, the one whose broadcast dst lane bits move nothing
    (``still_lanes``; it may be a bit permutation, which the exchanges need, where the first is not;
    only its exchange schedules are built)."""
    return _wm_cache.lookup(prob.key(), lambda: wave_local_maps(prob))


def _lower_bound(ctx: ConversionContext) -> dict:
    lb = _lb_cache.lookup((ctx.problem.key(), ctx.element_bits, ctx.arch, ctx.objective, ctx.src_offsets is None),
                          lambda: cost_mod.lower_bound(ctx))
    return dict(lb)
