"""Rounds under a small LDS budget (synth/lds_path.py): ``strategy="lds"`` plans every conversion that has a
valid round split, and the plan runs on the emulator.

A round split is valid (``lds_path._valid_rounds``) when the round vectors, register vectors common to both
sides, meet the span ``L`` of both sides' lane and warp vectors in 0 only; the independent sets of such
vectors modulo ``L`` are a matroid, so ``_round_bits``' greedy choice finds a split of the size the budget
needs exactly when one exists: it is the predicate of "has a valid round split" here.  Before, a conversion
whose every offered layout left a lane or warp vector outside its offset space (a round component:
``_check_rounds``) was refused although ``lds_path.lane_space_design``'s layout serves it, and one whose
``movmatrix`` end (sm_90) had no round split refused the conversion itself."""

from __future__ import annotations

import json
import random

import pytest

import needs

from linlayout import LayoutError, LinearLayout, f2
from linlayout.synth import lds_path
from linlayout.synth.context import ConversionContext
from linlayout.synth.convert import lds_plan, plan_conversion
from linlayout.synth.emulator import verify
from linlayout.synth.plan import Plan

from convert_checker import check_certificate
from random_layouts import ELEMENT_BITS, TARGETS, RandomPicks, layout_problem


def _has_round_split(ctx: ConversionContext) -> bool:
    try:
        lds_path._round_bits(ctx)
    except lds_path.DesignRefused:
        return False
    return True


def _problems(n: int, seed: int):
    """``n`` seeded random problems (tests/random_layouts.py) with a budget of a half or a quarter of the
    tile, each with whether it has a valid round split."""
    for k in range(n):
        picks = RandomPicks(random.Random(seed + k))
        src, dst, arch = layout_problem(picks, TARGETS)
        bits = picks.choice(ELEMENT_BITS)
        tile_bytes = (bits // 8) << sum(s.bit_length() - 1 for _, s in src.out_dims)
        budget = max(1, tile_bytes >> picks.integer(1, 2))
        ctx = ConversionContext.create(src, dst, arch, bits, budget, "lds")
        yield src, dst, arch, bits, budget, _has_round_split(ctx)


def test_every_conversion_with_a_round_split_gets_a_verified_lds_plan():
    """1,500 random problems (293 with a round split, 9 of which every layout but
    ``lane_space_design``'s refused): a plan where a split exists, within the budget, verified on the
    emulator and above its lower bound (the spare layout's plans also pass the independent certificate
    checker and verify again from their certificates).  Where none does the conversion is refused for want
    of one, or (sm_90) planned through a ``movmatrix`` stage, whose staged conversion has one."""
    split = spare = 0
    for src, dst, arch, bits, budget, ok in _problems(1500, 0):
        if not ok:
            try:
                plan = plan_conversion(src, dst, arch, bits, lds_budget_bytes=budget, strategy="lds")
            except LayoutError as e:
                assert "allows no split into rounds" in str(e), e
            else:
                assert plan.verified and plan.lds_bytes <= budget and "movmatrix" in plan.notes[0], plan.notes
            continue
        plan = plan_conversion(src, dst, arch, bits, lds_budget_bytes=budget, strategy="lds")
        assert plan.verified and plan.lds_bytes <= budget, (arch, bits, budget)
        assert plan.lower_bound["cost"] <= plan.cost + 1e-6, (plan.lower_bound, plan.cost)
        split += 1
        if any("every lane and warp vector" in note for note in plan.notes):  # the spare layout's plan
            spare += 1
            cert = json.loads(plan.dumps())
            assert check_certificate(cert)[0] and verify(Plan.from_certificate(cert)).ok
    assert split >= 250 and spare >= 5, (split, spare)


def _flat(regs: list[int], lanes: list[int], warps: list[int], n_bits: int) -> LinearLayout:
    return LinearLayout({"register": [[c] for c in regs], "lane": [[c] for c in lanes], "warp": [[c] for c in warps]},
                        [("dim0", 1 << n_bits)])


def _lane_in_round_case() -> ConversionContext:
    """i8 on gfx950, 1,024 elements through 512 bytes: one round, ``e2``, the one register vector both
    sides hold; the src lane ``e0 + e2`` puts ``e2`` in every offset space that holds all lane and warp
    vectors, which is then ``L`` itself (9 bits): no unit-vector complement of a prefix reaches it, and
    linlayout.synth.swizzle's round choice asks the dst registers ``e0``, ``e4`` to lie in the src's
    per-round tile."""
    src = _flat([4, 32, 8], [5, 528, 64, 2, 512, 128], [256], 10)
    dst = _flat([16, 1, 4, 512, 64], [0, 24, 256, 64, 2, 33], [128], 10)
    return ConversionContext.create(src, dst, "gfx950", 8, 512, "lds")


def test_a_lane_with_a_round_component_in_every_other_layout_gets_the_spare_layout():
    ctx = _lane_in_round_case()
    pool = lds_path.designs(ctx)
    every = pool.every()
    assert every and {a.design.source for a in every} <= {f"{side} registers, then every lane and warp vector"
                                                            for side in ("src", "dst")}
    design = every[0].design
    offsets = design.shared_cols[:design.n_offset_bits]
    assert design.shared_cols[design.n_offset_bits:] == [4]
    others = [c for cols in (ctx.problem.src_cols, ctx.problem.dst_cols) for k in ("lane", "warp") for c in cols[k]]
    assert all(f2.in_span(offsets, c) for c in others)
    plan = plan_conversion(ctx.problem.src, ctx.problem.dst, "gfx950", 8, lds_budget_bytes=512, strategy="lds")
    assert plan.verified and plan.lds_bytes == 512


def test_the_spare_layouts_stay_unlisted_where_another_layout_serves():
    """fp32 on gfx942 with two rounds (the registers ``e0``, ``e1`` of both sides): the register-first
    layouts serve, so the spares change no plan."""
    src = _flat([1, 2, 4], [8, 16, 32, 64, 128, 256], [], 9)
    dst = _flat([2, 1, 256], [4, 8, 16, 32, 64, 128], [], 9)
    ctx = ConversionContext.create(src, dst, "gfx942", 32, 512, "lds")
    pool = lds_path.designs(ctx)
    assert pool.every() and len(pool.spares) == 2
    assert not any("every lane and warp vector" in a.design.source for a in pool.every())


def _movmatrix_end_case() -> tuple[LinearLayout, LinearLayout]:
    """A two-warp i8 conversion of 1,024 elements whose ends sm_90 tries through a movmatrix stage."""
    src = LinearLayout({"register": [[19, 0], [8, 0], [64, 0], [1, 0]],
                        "lane": [[128, 0], [2, 0], [4, 0], [32, 0], [0, 1]], "warp": [[256, 0]]},
                       [("dim0", 512), ("dim1", 2)])
    dst = LinearLayout({"register": [[8, 0], [0, 1], [64, 0]],
                        "lane": [[32, 0], [4, 0], [128, 0], [256, 0], [2, 0]], "warp": [[1, 0]]},
                       [("dim0", 512), ("dim1", 2)])
    return src, dst


def test_a_movmatrix_end_without_a_round_split_leaves_the_conversion_its_plans():
    """i8 on sm_90 through 256 bytes (a quarter of the tile): the conversion's rounds are the common
    registers ``e3``, ``e6``; the dst-end movmatrix stage moves a dst register's vector into a lane, and
    that staged conversion has no round split.  Its refusal refused the whole conversion; now that end
    gives no plan and the others stand."""
    src, dst = _movmatrix_end_case()
    plan = plan_conversion(src, dst, "sm_90", 8, lds_budget_bytes=256, strategy="lds")
    assert plan.verified and plan.lds_bytes <= 256


@needs.mlir
def test_the_spare_layout_s_plan_compiles_and_interprets():
    """``_lane_in_round_case``'s plan lowered: the interpreter's tile is the expected one and the emulator's,
    and the ISA has the plan's counts (tests/test_emit_conversion.check_kernel)."""
    from test_emit_conversion import check_kernel

    ctx = _lane_in_round_case()
    check_kernel(plan_conversion(ctx.problem.src, ctx.problem.dst, "gfx950", 8, lds_budget_bytes=512, strategy="lds"))


def test_another_error_of_a_movmatrix_end_s_staged_conversion_propagates(monkeypatch):
    """Only a staged conversion without a plan (``_NoLdsPlan``, ``DesignRefused``) leaves its movmatrix
    end out (convert._movmatrix_candidates); a plain LayoutError there (a bug, or bad input found late)
    reaches the caller, not swallowed as "this end gives none"."""
    from linlayout.synth import convert

    real = convert._candidates
    staged = []

    def failing(ctx, best_only=False, movmatrix=True, prune=True, ceiling=float("inf")):
        if not movmatrix:  # (the staged conversion: _movmatrix_candidates asks without a stage)
            staged.append(ctx.arch)
            raise LayoutError("the staged conversion failed")
        return real(ctx, best_only, movmatrix, prune, ceiling)
    monkeypatch.setattr(convert, "_candidates", failing)
    src, dst = _movmatrix_end_case()
    with pytest.raises(LayoutError, match="^the staged conversion failed$"):
        plan_conversion(src, dst, "sm_90", 8, strategy="auto")
    assert staged == ["sm_90"]


@pytest.mark.parametrize("side", ["both", "Src", ""])
def test_the_lane_space_design_of_another_side_is_refused_in_one_line(side):
    """Only "src" and "dst" name a side (before, any other string silently took the dst's registers)."""
    with pytest.raises(LayoutError, match=r"^lane_space_design's side must be 'src' or 'dst', got "):
        lds_path.lane_space_design(_lane_in_round_case(), side)
    assert [lds_path.lane_space_design(_lane_in_round_case(), s).source for s in ("src", "dst")] == \
        ["src registers, then every lane and warp vector", "dst registers, then every lane and warp vector"]


def _wide_registers_case(element_bits: int) -> ConversionContext:
    """A wave64 256x16 tile on gfx942 under half its bytes: both sides hold the six low dim0 bits in
    registers (src in order; dst ``4, 8, 1, 2, 16, 32``) and the same six lane vectors, so every register
    vector lies outside the lanes' span and the round vector (``_round_bits``: dim0 32) is one of them."""
    def layout(reg, lane):
        return LinearLayout.from_json({
            "in_dims": [["register", 64], ["lane", 64], ["warp", 1], ["block", 1]],
            "out_dims": [["dim0", 256], ["dim1", 16]],
            "bases": {"register": reg, "lane": lane, "warp": [], "block": []}})
    src = layout([[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [32, 0]],
                 [[64, 0], [128, 0], [0, 1], [0, 2], [0, 4], [0, 8]])
    dst = layout([[4, 0], [8, 0], [1, 0], [2, 0], [16, 0], [32, 0]],
                 [[0, 1], [0, 2], [0, 4], [0, 8], [64, 0], [128, 0]])
    return ConversionContext.create(src, dst, "gfx942", element_bits, (element_bits // 8) * 2048)


@pytest.mark.parametrize("element_bits,side,cols,instructions", [
    (16, "src", [1, 2, 4, 64, 128, 256, 512, 1024, 2048, 8, 16, 32], 55),
    (16, "dst", [4, 8, 1, 64, 128, 256, 512, 1024, 2048, 2, 16, 32], 54),
    (8, "src", [1, 2, 4, 8, 64, 128, 256, 512, 1024, 2048, 16, 32], 49),
    (32, "src", [1, 2, 64, 128, 256, 512, 1024, 2048, 4, 8, 16, 32], 36),
])
def test_the_lane_space_register_prefix_stops_at_the_widest_access(element_bits, side, cols, instructions):
    """``lane_space_design``'s register prefix takes ``side``'s register vectors while they lie outside the
    lanes' and rounds' span, at most a 16-byte access's (3 bits of fp16, 4 of fp8, 2 of fp32): here five
    qualify (all but the round vector 32), the prefix holds the widest access's, the lanes follow, then
    the unit vectors completing them; its one round trip's plan (exact instruction count with setup, a
    one-wave kernel's: linlayout.synth.lane_arith "One wave") runs correctly on the emulator."""
    ctx = _wide_registers_case(element_bits)
    assert lds_path._round_bits(ctx) == [32]
    design = lds_path.lane_space_design(ctx, side)
    assert (design.shared_cols, design.n_offset_bits, design.n_rep_bits) == (cols, 11, 1)
    (acc,) = lds_path.lds_accesses(ctx, design)
    plan = lds_plan(ctx, acc)
    assert plan.total_with_overhead() == instructions
    assert verify(plan).ok
