"""The design pool's error handling (synth/lds_path.py): a design the conversion has none of, or
whose accesses cannot be formed, is refused with a ``DesignRefused`` naming the reason, and the
pool drops it; any other error of building a design or its accesses (a bug) propagates.

The cases are built by hand so that each reason is reached by valid input:
- a register-first layout whose offset basis misses a src lane vector (``e6 + e7``, the round
  ``e7``): the lanes of one access would hold elements of two rounds (``_check_rounds``);
- LDS budgets below a vector: a vector's registers must lie in one round, so the vector bits are
  offset bits only (``_vector_bits``, ``_over_fetch_groups``).  Before, such a design's accesses
  raised "an LDS access spans two rounds" and the pool dropped it, so a 4-byte budget had no
  LDS plan."""

from __future__ import annotations

import pytest

import needs

from linlayout import LayoutError, LinearLayout, caches
from linlayout.synth import lds_path
from linlayout.synth.context import ConversionContext
from linlayout.synth.convert import lds_plan, plan_conversion
from linlayout.synth.emulator import verify
from linlayout.synth.lds_path import DesignPool, DesignRefused, _Deferred, lds_accesses


def _layout(regs: list[int], lanes: list[int], n_bits: int) -> LinearLayout:
    """A one-warp wave64 layout of ``2**n_bits`` elements (one dim): register and lane bits holding the
    tensor vectors ``regs`` and ``lanes``."""
    return LinearLayout({"register": [[r] for r in regs], "lane": [[c] for c in lanes], "warp": []},
                        [("dim0", 1 << n_bits)])


def _split_lane_case() -> tuple[ConversionContext, lds_path.LdsDesign]:
    """fp32 on gfx942, 512 bytes of LDS for 256 elements: one round bit, ``e7``, the one register
    bit both sides hold.  The dst-registers-first layout puts the dst register ``e6`` at offset bit 0
    and vectors of ``e0..e5`` above it (rows swizzled), so the src lane ``e6 + e7`` has the round component
    ``e7``."""
    src = _layout([128, 1], [2, 4, 8, 16, 32, 64 | 128], 8)
    dst = _layout([64, 128], [1, 2, 4, 8, 16, 32], 8)
    ctx = ConversionContext.create(src, dst, "gfx942", 32, 512, "lds")
    design = lds_path.vector_first_design(ctx, "dst")
    offsets = design.shared_cols[:design.n_offset_bits]
    assert offsets[0] == 64 and max(offsets) < 128 and design.shared_cols[design.n_offset_bits:] == [128]
    return ctx, design


def test_a_layout_whose_rounds_split_a_lane_is_refused_with_its_reason():
    ctx, design = _split_lane_case()
    with pytest.raises(DesignRefused, match=r"^the shared layout's rounds split a src lane's or warp's elements"):
        lds_accesses(ctx, design)
    pool = DesignPool(ctx, [design])
    assert pool.every() == []


def test_an_access_spanning_two_rounds_is_an_internal_error_the_pool_does_not_swallow(monkeypatch):
    """Without the refusal the same layout reaches the invariant: an AssertionError, not a
    LayoutError for the user, and the pool lets it through."""
    ctx, design = _split_lane_case()
    monkeypatch.setattr(lds_path, "_check_rounds", lambda S, D: None)
    with pytest.raises(AssertionError, match="internal: an LDS access spans two rounds"):
        DesignPool(ctx, [design])


@pytest.mark.parametrize("made", [False, True])
def test_the_pool_drops_refusals_only(monkeypatch, made):
    """A plain LayoutError of a design (``made``: of a deferred design's ``make``) or of its accesses
    is not a refusal: it propagates; a DesignRefused of either empties that design alone (fp16 on
    gfx942, two registers and 64 lanes a side, the dst's lanes along the src's registers)."""
    src = _layout([1, 2], [4, 8, 16, 32, 64, 128], 8)
    dst = _layout([64, 128], [1, 2, 4, 8, 16, 32], 8)
    ctx = ConversionContext.create(src, dst, "gfx942", 16, None, "lds")
    good, other = lds_path.shared_layout(ctx), lds_path.vector_first_design(ctx, "dst")
    assert lds_path.layout_key(good) != lds_path.layout_key(other)

    def pool_of(error: Exception) -> DesignPool:
        def fail():
            raise error
        if made:
            return DesignPool(ctx, [good, _Deferred(fail, lambda: None, lambda: 0)])
        real = lds_accesses
        monkeypatch.setattr(lds_path, "lds_accesses", lambda c, d: fail() if d is other else real(c, d))
        return DesignPool(ctx, [good, other])

    pool = pool_of(DesignRefused("refused"))
    places = [place for place, _ in pool.placed()]
    assert places == [(0, j) for j in range(len(pool.accesses[0]))] and places and pool.accesses[1] == []
    with pytest.raises(LayoutError, match="^a bug$") as got:
        pool_of(LayoutError("a bug")).placed()
    assert type(got.value) is LayoutError


def _all_registers(regs: list[int]) -> LinearLayout:
    """16 fp32 elements in one lane's registers (every lane holding all of them)."""
    return _layout(regs, [0] * 6, 4)


@pytest.mark.parametrize("budget, accesses", [(4, 16), (8, 8), (16, 4)])
def test_vectors_stay_in_one_round_under_a_budget_below_a_vector(budget, accesses):
    """16 fp32 registers in each lane, the dst's in another order: a budget of 4 bytes leaves one
    element a round (16 rounds of one ``ds_write_b32`` and one ``ds_read_b32``), 8 bytes two (8
    rounds; the src's vector of its registers 0, 1 would reach a round bit), 16 bytes four.  The
    plan runs on the emulator."""
    src, dst = _all_registers([1, 2, 4, 8]), _all_registers([2, 1, 8, 4])
    plan = plan_conversion(src, dst, "gfx942", 32, lds_budget_bytes=budget, strategy="lds")
    counts = plan.counts()
    assert (counts["lds_write"], counts["lds_read"]) == (accesses, accesses)
    assert plan.lds_bytes <= budget and plan.verified


def test_over_fetch_loads_stay_in_one_round():
    """fp8 on gfx942 with 8 bytes of LDS: the over-fetch layout's offset bits are the src's two
    sub-dword register bits and the dst register ``e2`` (3 bits, the other 6 rounds), so its loads take
    two dwords (offset bits 2 and 3 would reach round bit 0), and the round trip runs on the
    emulator."""
    src = _layout([1 << r for r in (0, 1, 3, 4, 5, 6, 7, 8)], [4] + [0] * 5, 9)
    dst = _layout([1 << r for r in (1, 2, 3, 4, 5, 6, 7, 8)], [1] + [0] * 5, 9)
    ctx = ConversionContext.create(src, dst, "gfx942", 8, 8, "lds")
    design = lds_path.over_fetch_design(ctx)
    assert (design.n_offset_bits, design.n_rep_bits) == (3, 6)
    accs = lds_accesses(ctx, design)
    assert [(a.s_width_bytes, a.d_width_bytes) for a in accs] == [(4, 8)]
    assert verify(lds_plan(ctx, accs[0]), certificate=False).ok


@needs.mlir
def test_a_round_of_one_element_compiles_and_interprets():
    """The 4-byte budget's plan (16 rounds of one dword, offset field 0) lowered: the interpreter's tile is the
    expected one and the emulator's, and the ISA has the plan's 16 stores and 16 loads."""
    from test_emit_conversion import check_kernel

    src, dst = _all_registers([1, 2, 4, 8]), _all_registers([2, 1, 8, 4])
    check_kernel(plan_conversion(src, dst, "gfx942", 32, lds_budget_bytes=4, strategy="lds"))


@pytest.mark.parametrize("error, raised", [(DesignRefused("refused"), False), (LayoutError("a bug"), True)])
def test_the_deferred_bounds_drop_refusals_only(monkeypatch, error, raised):
    """A register-first layout's prefix refused (``DesignRefused``) gives that layout infinite bounds: the pool
    lists the others' round trips and none of its; any other error of the prefix propagates from the bounds."""
    from linlayout import caches

    src = _layout([1, 2], [4, 8, 16, 32, 64, 128], 8)
    dst = _layout([64, 128], [1, 2, 4, 8, 16, 32], 8)

    def prefix(ctx, side):
        raise error

    monkeypatch.setattr(lds_path, "_vector_first_prefix", prefix)
    caches.clear(keep_tables=True)
    try:
        pool = lds_path.designs(ConversionContext.create(src, dst, "gfx942", 16, None, "lds"))
        walk = lambda: [a.design.source for _, a in pool.by_floor(lambda: float("inf"), lambda: 1e30)]  # noqa: E731
        if raised:
            with pytest.raises(LayoutError, match="^a bug$"):
                walk()
        else:
            sources = walk()
            assert sources and not any("registers first" in s for s in sources), sources
    finally:
        caches.clear(keep_tables=True)  # the pool built under the patch stays out of later tests


@pytest.mark.parametrize("lds_first", [False, True])
@pytest.mark.parametrize("error, raised", [(DesignRefused("refused"), False), (LayoutError("a bug"), True)])
def test_the_planner_falls_back_to_in_wave_plans_on_refusals_only(monkeypatch, error, raised, lds_first):
    """A conversion inside one wave (fp16, the dst's lanes along the src's registers) has in-wave plans: where the
    LDS candidates are refused the first of those is the plan; any other error of the LDS candidates propagates
    (convert._unrefined_candidates and, ``lds_first``, convert._lds_first, whose LayoutError catches took every
    error for "no LDS plan")."""
    from linlayout import caches
    from linlayout.synth import convert

    src = _layout([1, 2], [4, 8, 16, 32, 64, 128], 8)
    dst = _layout([64, 128], [1, 2, 4, 8, 16, 32], 8)

    def designs(ctx):
        raise error

    monkeypatch.setattr(lds_path, "designs", designs)
    monkeypatch.setattr(convert, "LDS_FIRST_FACTOR", 0.0 if lds_first else float("inf"))  # which order is taken
    taken = []
    real = convert._lds_first
    monkeypatch.setattr(convert, "_lds_first", lambda *a: taken.append(1) or real(*a))
    caches.clear(keep_tables=True)
    try:
        if raised:
            with pytest.raises(LayoutError, match="^a bug$"):
                plan_conversion(src, dst, "gfx942", 16)
        else:
            assert plan_conversion(src, dst, "gfx942", 16).strategy != "lds"
        assert bool(taken) == lds_first
    finally:
        caches.clear(keep_tables=True)


def _two_round_dword_case() -> tuple[LinearLayout, LinearLayout]:
    """tests/random_layouts.py seed 302922: sm_90 fp16, 256 elements, register ``(0, 0)`` a broadcast
    src register, the dst's registers ``(4, 0), (0, 8), (0, 4)``.  With 128 bytes of LDS some shared
    layouts put the src's dword register (register bit 0, ``(0, 1)``) at a round bit, which an
    ``ldmatrix.trans``/``stmatrix.trans`` access leaves free (it fixes register bits below ``z - 1``
    only)."""
    src = LinearLayout({"register": [[0, 1], [0, 4], [4, 0], [0, 0], [2, 0]],
                        "lane": [[1, 0], [8, 0], [0, 8], [0, 2], [0, 0]], "warp": []}, [("dim0", 16), ("dim1", 16)])
    dst = LinearLayout({"register": [[4, 0], [0, 8], [0, 4]],
                        "lane": [[0, 2], [8, 0], [0, 1], [1, 0], [2, 0]], "warp": []}, [("dim0", 16), ("dim1", 16)])
    return src, dst


@pytest.mark.parametrize("strategy", ["lds", "auto"])
def test_a_matrix_access_whose_dword_spans_two_rounds_is_not_offered(monkeypatch, strategy):
    """Before, ``_matrix_groups`` took a dword's round from its first register and grouped a
    ``.trans`` access over a dword whose second register lies in another round: the plan failed
    verification.  Now that grouping is refused (``DesignRefused``) and the plan runs on the emulator."""
    refusals = []
    real = lds_path._matrix_groups

    def watched(*args):
        try:
            return real(*args)
        except DesignRefused as e:
            refusals.append(str(e))
            raise
    monkeypatch.setattr(lds_path, "_matrix_groups", watched)
    caches.clear()  # (the LDS shared layouts and their accesses are cached per process)
    src, dst = _two_round_dword_case()
    plan = plan_conversion(src, dst, "sm_90", 16, lds_budget_bytes=128, strategy=strategy)
    assert plan.verified and plan.lds_bytes <= 128
    assert refusals and set(refusals) == {"a dword's registers lie in two rounds: a matrix access would span both"}
