"""The synthesis's refusals (synth/swizzle.py ``NoSharedLayout``) and who catches them: lds_path.shared_layout
takes its own src-registers-first layout where linlayout.synth.swizzle has no shared layout, and only there;
swizzle's own search drops a choice of rounds (or a Pareto cap) only for want of a layout.  Any other
LayoutError (bad input, a bug) propagates: these tests fail if a catch is widened back to LayoutError."""

from __future__ import annotations

import pytest

from linlayout import LayoutError, LinearLayout
from linlayout.synth import lds_path, swizzle
from linlayout.synth.context import ConversionContext
from linlayout.synth.convert import plan_conversion


def _flat(regs: list[int], lanes: list[int], warps: list[int], n_bits: int) -> LinearLayout:
    return LinearLayout({"register": [[c] for c in regs], "lane": [[c] for c in lanes], "warp": [[c] for c in warps]},
                        [("dim0", 1 << n_bits)])


def _no_swizzle_rounds_case() -> ConversionContext:
    """i8 on gfx950 through 512 bytes (half the tile): the one common register vector ``e2`` would be the
    round, but the dst registers ``e0``, ``e4`` lie outside the src's per-round tile (the src lane ``e0 + e2``),
    which swizzle's round choices ask of every choice: it has none (tests/test_lds_round_splits.py)."""
    src = _flat([4, 32, 8], [5, 528, 64, 2, 512, 128], [256], 10)
    dst = _flat([16, 1, 4, 512, 64], [0, 24, 256, 64, 2, 33], [128], 10)
    return ConversionContext.create(src, dst, "gfx950", 8, 512, "lds")


def test_no_swizzled_rounds_is_a_refusal_and_shared_layout_takes_its_own_layout():
    ctx = _no_swizzle_rounds_case()
    with pytest.raises(swizzle.NoSharedLayout, match="no such set qualifies"):
        swizzle.shared_basis(ctx.problem.src, ctx.problem.dst, 8, "gfx950", lds_budget_bytes=512)
    design = lds_path.shared_layout(ctx)
    assert design.source == "src registers first, rows swizzled"
    assert design == lds_path.vector_first_design(ctx, "src")


def test_alignment_impossible_is_a_refusal():
    """4-bit elements whose sides share no register vector: no LDS instruction moves a lone nibble."""
    src = _flat([1, 2], [4, 8, 16, 32, 64, 128], [], 8)
    dst = _flat([64, 128], [1, 2, 4, 8, 16, 32], [], 8)
    with pytest.raises(swizzle.NoSharedLayout, match="alignment impossible"):
        swizzle.shared_basis(src, dst, 4, "gfx942")


def test_other_errors_of_the_synthesis_propagate_from_shared_layout(monkeypatch):
    """A plain LayoutError of ``shared_basis`` (a bug, say) is no refusal: shared_layout, the design pool
    and the planner raise it; a NoSharedLayout makes the register-first layout the synthesized one."""
    ctx = ConversionContext.create(_flat([1, 2], [4, 8, 16, 32, 64, 128], [], 8),
                                   _flat([64, 128], [1, 2, 4, 8, 16, 32], [], 8), "gfx942", 16, None, "lds")

    def fail(error):
        def shared_basis(*args, **kwargs):
            raise error
        monkeypatch.setattr(swizzle, "shared_basis", shared_basis)

    fail(swizzle.NoSharedLayout("none"))
    assert lds_path.shared_layout(ctx) == lds_path.vector_first_design(ctx, "src")
    with pytest.raises(lds_path.DesignRefused, match="^no transpose-read shared layout: none$"):
        lds_path.shared_layout(ctx, transpose=True)
    fail(LayoutError("a bug"))
    for transpose in (False, True):
        with pytest.raises(LayoutError, match="^a bug$") as got:
            lds_path.shared_layout(ctx, transpose)
        assert type(got.value) is LayoutError
    from linlayout import caches
    caches.clear(keep_tables=True)
    try:
        with pytest.raises(LayoutError, match="^a bug$"):
            plan_conversion(ctx.problem.src, ctx.problem.dst, "gfx942", 16, strategy="lds")
    finally:
        caches.clear(keep_tables=True)


@pytest.mark.parametrize("pareto", [False, True])
def test_swizzle_drops_a_choice_of_rounds_only_for_want_of_a_layout(monkeypatch, pareto):
    """``_best`` (each choice of rounds) and ``_pareto_set`` (each instruction cap) pass over a
    NoSharedLayout of ``_solve`` and let any other LayoutError through (fp16 on gfx942, the tile in two
    rounds: two choices of the round vector)."""
    src = _flat([1, 2, 256], [4, 8, 16, 32, 64, 128], [], 9)
    dst = _flat([256, 2, 1], [4, 8, 16, 32, 64, 128], [], 9)
    real = swizzle._solve
    calls = []

    def solve(*args, **kwargs):
        calls.append(args[2])
        if len(calls) == 1:
            raise error
        return real(*args, **kwargs)

    monkeypatch.setattr(swizzle, "_solve", solve)
    error = swizzle.NoSharedLayout("none")
    res = swizzle.synthesize(src, dst, 16, "gfx942", lds_budget_bytes=512, pareto=pareto)
    assert res.reps == 2 and len(calls) >= 2 and calls[1] != calls[0]
    calls.clear()
    error = LayoutError("a bug")
    with pytest.raises(LayoutError, match="^a bug$") as got:
        swizzle.synthesize(src, dst, 16, "gfx942", lds_budget_bytes=512, pareto=pareto)
    assert type(got.value) is LayoutError
