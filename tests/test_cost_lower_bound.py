"""``cost.lower_bound`` per target: a cross-lane dword is priced by the target's own lane
instructions (``cross_lane_kinds``), and every bound stays below every plan on every target."""

from __future__ import annotations

from hypothesis import HealthCheck, event, given, settings

from linlayout import LayoutError, LinearLayout
from linlayout.hw.targets import get_target, target_names
from linlayout.synth.context import ConversionContext
from linlayout.synth.convert import plan_conversion
from linlayout.synth.cost import cross_lane_kinds, lower_bound
from linlayout.synth.preimage import wave_local_maps

from random_layouts import planning_problems


def test_the_cross_lane_kinds_are_the_targets_own():
    """Read from each descriptor: DPP, the swizzles, bpermute and readlane on AMD, v_permlanex16 on
    RDNA, the permlane swaps on gfx950 and gfx1250, shfl.sync and movmatrix on NVIDIA only."""
    cdna = ("dpp", "ds_bpermute", "ds_swizzle", "readlane")
    swaps = ("permlane16_swap", "permlane32_swap")
    rdna = ("dpp", "permlane16", "ds_bpermute", "ds_swizzle", "readlane")
    assert {name: cross_lane_kinds(get_target(name)) for name in target_names()} == {
        "gfx90a": cdna, "gfx942": cdna, "gfx950": cdna[:1] + swaps + cdna[1:],
        "gfx1100": rdna, "gfx1200": rdna, "gfx1250": rdna[:2] + swaps + rdna[2:],
        "sm_80": ("shfl", "movmatrix"), "sm_90": ("shfl", "movmatrix")}


def test_an_nvidia_lane_permutation_meets_its_bound():
    """Swapping lane bits 0 and 1 of a 4-register fp32 layout takes 4 shfl.sync on sm_80: each
    issues 1 cycle and keeps the shared-memory pipe busy 4 (NV_SHFL_CYCLES at NV_MIO_SHARING), the
    pipes overlap and the shuffles are one DS level (25 cycles), so every register plan costs at
    least ``max(4 * 1, 4 * 4) + 25 = 41`` under ``latency`` -- exactly the plan's cost.  Pricing a
    move by the cheapest kind of every target (a DPP move, 2 cycles on NVIDIA's ALU, no pipe, no
    latency) bounded it by 8.  Under ``concurrent`` the other wave's 4 issue cycles add to the bound
    (45); the plan's 2 setup ALU ops (4 cycles on each wave) are beyond it (49)."""
    shape = [("dim0", 4), ("dim1", 32)]
    src = LinearLayout({"register": [[1, 0], [2, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]],
                        "warp": []}, shape)
    dst = LinearLayout({"register": [[1, 0], [2, 0]], "lane": [[0, 2], [0, 1], [0, 4], [0, 8], [0, 16]],
                        "warp": []}, shape)
    got = {}
    for objective in ("latency", "concurrent"):
        plan = plan_conversion(src, dst, "sm_80", 32, objective=objective)
        counts = {k: v for k, v in plan.counts().items() if v}
        assert plan.strategy == "lanes" and counts == {"shfl": 4, "total": 4}
        lb = plan.lower_bound
        assert lb["cross_lane_dwords"] == 4 and not lb["cross_warp"] and lb["register_cost"] == lb["cost"]
        got[objective] = (lb["cost"], plan.cost)
    assert got == {"latency": (41.0, 41.0), "concurrent": (45.0, 49.0)}


LOAD_KINDS = ("lds_read", "lds_read_tr", "ldmatrix")
STORE_KINDS = ("lds_write", "stmatrix")
BARRIER_KINDS = ("s_barrier", "bar.sync")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(planning_problems())
def test_the_lower_bound_holds_for_every_plan_on_every_target(case):
    """Every target (wave64, wave32, NVIDIA), objective, budget and strategy: the plan's value is at
    least ``cost``; a plan without LDS issues at least ``cross_lane_dwords`` of the target's lane
    instructions and ``min_register_merges`` instructions, and its latency path (``concurrent``:
    with the other waves' issue) is at least ``register_cost``; a plan through LDS has at least
    ``min_lds_loads`` loads, ``min_lds_stores`` stores, ``min_barriers`` barriers and
    ``lds_instructions`` instructions with setup, and its path at least ``lds_cost``; a conversion
    between warps goes through LDS."""
    src, dst, bits, arch, objective, budget, strategy = case
    try:
        plan = plan_conversion(src, dst, arch, bits, objective=objective, lds_budget_bytes=budget, strategy=strategy)
    except LayoutError:
        event("refused")
        return
    event(f"{get_target(arch).family} {plan.strategy}")
    lb, counts = plan.lower_bound, plan.counts()
    assert lb["cost"] <= plan.cost + 1e-6, (lb, plan.cost)
    path = plan.cost_detail["concurrent_value" if plan.objective == "concurrent" else "latency_value"]
    loads, stores = sum(counts.get(k, 0) for k in LOAD_KINDS), sum(counts.get(k, 0) for k in STORE_KINDS)
    if plan.strategy == "noop":
        return
    if loads or stores:
        assert loads >= lb["min_lds_loads"] and stores >= lb["min_lds_stores"], (lb, counts)
        assert sum(counts.get(k, 0) for k in BARRIER_KINDS) >= lb["min_barriers"], (lb, counts)
        assert plan.total_with_overhead() >= lb["lds_instructions"], (lb, counts, plan.overhead)
        assert path >= lb["lds_cost"] - 1e-6, (lb, plan.cost_detail)
    else:
        assert not lb["cross_warp"]
        moves = sum(counts.get(k, 0) for k in cross_lane_kinds(get_target(arch)))
        # the strategy label is Step.across_lanes; a plan moving across lanes issues the bound's kinds
        # (CROSS_LANE_KINDS), and a plan of selects may too: a select as a masked identity DPP move in
        # place (linlayout.synth.ir.Program.emit's dpp_selects) is a DPP instruction moving no lane
        across = any(s.across_lanes for s in plan.steps)
        assert (plan.strategy == "lanes") == across and (moves > 0 or not across), counts
        assert moves >= lb["cross_lane_dwords"] and counts["total"] >= lb["min_register_merges"], (lb, counts)
        assert path >= lb["register_cost"] - 1e-6, (lb, plan.cost_detail)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(planning_problems())
def test_cross_warp_is_exactly_no_wave_map_in_each_warp(case):
    """The planner makes no wave map where the bound says ``cross_warp`` (convert._unrefined_candidates):
    some warp then needs an element its src warp does not hold, so the element map of every wave map
    takes a warp component -- neither local (``wave_local``) nor moving lanes per warp
    (``warp_lane_offsets``) -- and where it is False the first wave map is one of those two."""
    src, dst, bits, arch, objective, budget, strategy = case
    try:
        ctx = ConversionContext.create(src, dst, arch, bits)
    except LayoutError:
        return
    wm = wave_local_maps(ctx.problem)[0]
    stays = wm.wave_local or wm.warp_lane_offsets is not None
    event(f"cross_warp {not stays}")
    assert lower_bound(ctx)["cross_warp"] == (not stays)


def test_selects_as_masked_dpp_moves_are_a_registers_plan():
    """gfx942 bf16 ``blocked[1x1,t64x1,o01]->dotA32(kw4)``, 4 waves: each lane keeps its elements, and
    the plan's 16 selects are masked identity DPP moves in place (``dpp_selects``): DPP instructions, no
    lane moved, so the strategy is ``registers`` and the lane bound asks for no lane move."""
    from repo_data import family_corpus
    from linlayout.dtypes import dtype_bits

    (case,) = [c for c in family_corpus("amd")["cases"]
               if (c["name"], c["arch"], c["dtype"], c["num_warps"]) == ("blocked[1x1,t64x1,o01]->dotA32(kw4)",
                                                                         "gfx942", "bf16", 4)]
    plan = plan_conversion(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), "gfx942",
                           dtype_bits(case["dtype"]))
    assert plan.strategy == "registers" and not any(s.across_lanes for s in plan.steps)
    assert {k: v for k, v in plan.counts().items() if v} == {"dpp": 16, "total": 16}
    assert plan.lower_bound["cross_lane_dwords"] == 0
