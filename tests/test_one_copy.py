"""A dst of which one copy of each repeated element is read (``plan_conversion(..., dst_one_copy=True)``,
``Plan.dst_one_copy``; linlayout.synth.one_copy): the end state is checked in the canonical lanes alone, the
certificate has its own format, and the kernel stores from those lanes alone."""

from __future__ import annotations

import numpy as np
import pytest

import needs
from linlayout import LayoutError, LinearLayout
from linlayout.synth.convert import one_copy_candidates, plan_conversion
from linlayout.synth.emulator import verify
from linlayout.synth.one_copy import ONE_COPY_FILLS, canonical_lanes, copy_bits, filled_dsts, unfilled
from linlayout.synth.plan import Plan, cert_format
from repo_data import family_corpus

#: wave32 gfx1100 fp16, 2 waves: each dst element in lanes l and l ^ 16 (lane bit 4 zero); Triton's kernel stores
#: lanes 0-15 and its v_perm_b32 selectors are constants there; ours took per-lane selectors for all 32 lanes.
X16 = ("wmma1.16x16T->dotAwmma1.16x16T(kw8)", "gfx1100", "fp16", 2)


def _layouts(name: str, arch: str, dtype: str, num_warps: int) -> tuple[LinearLayout, LinearLayout]:
    (case,) = [c for c in family_corpus("wave32")["cases"] if (c["name"], c["arch"], c["dtype"], c["num_warps"])
               == (name, arch, dtype, num_warps)]
    return LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])


def test_the_copy_bits_name_the_canonical_lanes_and_the_fills():
    src, dst = _layouts(*X16)
    assert copy_bits(dst) == [4]
    assert canonical_lanes(dst, 32).tolist() == [True] * 16 + [False] * 16
    fills = filled_dsts(src, dst)
    registers = [b for b in dst.bases["register"] if any(b)]
    assert len(fills) == len(registers) + (src.bases["lane"][4] not in registers) <= ONE_COPY_FILLS
    assert [f.bases["lane"][4] for f in fills][:len(registers)] == registers
    assert all(unfilled(f, [4]).to_json() == dst.to_json() for f in fills)
    assert filled_dsts(src, src) == [] and copy_bits(src) == []


def test_the_selectors_become_constants_in_the_canonical_lanes():
    src, dst = _layouts(*X16)
    every = plan_conversion(src, dst, "gfx1100", 16)
    one = plan_conversion(src, dst, "gfx1100", 16, dst_one_copy=True)
    assert not every.dst_one_copy and one.dst_one_copy and one.verified and one.strategy == "lanes"
    assert one.dst.to_json() == dst.to_json()
    assert (every.counts()["total"], one.counts()["total"]) == (48, 48)  # 16 v_permlanex16, 32 v_perm_b32
    assert every.overhead["valu_lane_selector"] == 4 and "valu_lane_selector" not in one.overhead
    assert one.overhead["salu_one_copy_store"] == 3
    # 2 selector SGPRs (RDNA's literals, priced at 1 each: cost.PERM_SELECTOR_SALU) and the store mask's 3 SALU
    # against 4 VALU and an s_delay_alu: as many instructions, fewer modelled cycles
    assert one.total_with_overhead() == every.total_with_overhead() == 54 and one.cost < every.cost


def test_the_emulator_checks_the_canonical_lanes_alone():
    src, dst = _layouts(*X16)
    one = plan_conversion(src, dst, "gfx1100", 16, dst_one_copy=True)
    assert verify(one).ok
    one.dst_one_copy = False  # every lane checked: the copy lanes hold other elements
    result = verify(one, certificate=False)
    assert not result.ok and "lane 16 slot" in result.message


@pytest.mark.parametrize("lanes, ok", [((1,), False), ((15,), False), ((16, 31), True)])
def test_a_spoiled_lane_fails_exactly_where_it_is_canonical(lanes, ok):
    # a v_cndmask appended in ``lanes``: VGPR 0 takes VGPR 1's elements; lanes 0-15 are canonical, 16-31 copies
    from dataclasses import replace

    from linlayout.synth.plan import Select

    src, dst = _layouts(*X16)
    one = plan_conversion(src, dst, "gfx1100", 16, dst_one_copy=True)
    cond = np.isin(np.arange(32), lanes).astype(np.int64)
    spoiled = replace(one, steps=[*one.steps, Select(dst=[0, 1], a=[0, 1], b=[2, 3], cond=cond)])
    isa = verify(spoiled, certificate=False)
    assert isa.ok == ok and (ok or f"lane {lanes[0]} slot 0" in isa.message)
    assert verify(spoiled).ok == ok


def test_the_certificate_has_its_own_format_and_the_checker_knows_it():
    from convert_checker import check_certificate

    src, dst = _layouts(*X16)
    one = plan_conversion(src, dst, "gfx1100", 16, dst_one_copy=True)
    cert = one.to_certificate()
    assert cert["format"] == "linlayout-plan/v1-one-copy" and cert["dst_one_copy"] is True
    assert check_certificate(cert) == (True, "")
    assert not check_certificate({**cert, "dst_one_copy": False})[0]
    back = Plan.from_certificate(cert)
    assert back.dst_one_copy and verify(back).ok
    every = plan_conversion(src, dst, "gfx1100", 16).to_certificate()
    assert every["format"] == "linlayout-plan/v1" and "dst_one_copy" not in every
    with pytest.raises(LayoutError, match="format 'linlayout-plan/v1' has dst_one_copy true; that is format "
                                          "'linlayout-plan/v1-one-copy'"):
        Plan.from_certificate({**cert, "format": "linlayout-plan/v1"})
    with pytest.raises(LayoutError, match="format 'linlayout-plan/v1-one-copy' has none of"):
        Plan.from_certificate({**every, "format": "linlayout-plan/v1-one-copy"})
    with pytest.raises(LayoutError, match="dst_one_copy 'yes'; it must be true or false"):
        Plan.from_certificate({**cert, "dst_one_copy": "yes"})
    assert [cert_format(u, o) for u in (False, True) for o in (False, True)] == [
        "linlayout-plan/v1", "linlayout-plan/v1-one-copy", "linlayout-plan/v1-unpacked",
        "linlayout-plan/v1-unpacked-one-copy"]
    with pytest.raises(LayoutError, match="has dst_one_copy true; that is format 'linlayout-plan/v1-one-copy'"):
        Plan.from_certificate({**cert, "format": "linlayout-plan/v1-unpacked-one-copy"})
    full = plan_conversion(src, src, "gfx1100", 16).to_certificate()
    with pytest.raises(LayoutError, match="dst_one_copy true but its dst has no zero lane basis"):
        Plan.from_certificate({**full, "format": "linlayout-plan/v1-one-copy", "dst_one_copy": True})


@pytest.mark.parametrize("kwargs, message", [
    ({"prune": 1}, "prune must be True or False, got 1"),
    ({"strategy": "bogus"}, "strategy"),
    ({"src_global_strides": [1]}, "src_global_strides"),
    ({"lds_budget_bytes": -5}, "lds_budget_bytes"),
])
def test_the_candidates_refuse_a_bad_argument_rather_than_list_no_plan(kwargs, message):
    src, dst = _layouts(*X16)
    with pytest.raises(LayoutError, match=message):
        one_copy_candidates(src, dst, "gfx1100", 16, **kwargs)


def test_the_candidates_are_the_fills_and_hold_the_chosen_plan():
    src, dst = _layouts(*X16)
    one = plan_conversion(src, dst, "gfx1100", 16, dst_one_copy=True)
    fills = one_copy_candidates(src, dst, "gfx1100", 16)
    assert len(fills) == len(filled_dsts(src, dst)) == 6
    plans = [p for f in fills for p in f]
    assert all(p.dst_one_copy and p.dst.to_json() == dst.to_json() and not p.lds_bytes
               and p.overhead["salu_one_copy_store"] == 3 for p in plans)
    assert [p.counts()["total"] for p in plans] == [48, 96, 80, 80, 80, 80]
    # strategy auto adds each fill's LDS round trips (which the planner does not plan) after its plan in registers
    auto = one_copy_candidates(src, dst, "gfx1100", 16, strategy="auto")
    assert [f[0].counts() for f in auto] == [p.counts() for p in plans]
    # (one round trip more per fill since session 22: a swizzled ordered layout per prefix length; the fourth fill's
    # 10 are 8 since its stores keep dwords where they arrive, cost.store_tuple_copies: a cheaper best prunes more)
    assert [len(f) for f in auto] == [4, 3, 4, 8, 4, 4] and all(p.lds_bytes for f in auto for p in f[1:])
    cert = {k: v for k, v in one.to_certificate().items() if k not in ("strategy", "lower_bound")}
    assert {k: v for k, v in plans[0].to_certificate().items() if k not in ("strategy", "lower_bound")} == cert


def test_a_caller_strategy_registers_plans_the_fills_in_registers():
    """AMD corpus case #301 (gfx942 fp32 ``slice0(blocked[1x1,t1x64,o10])->slice1(mfma16T)``, 2 warps): its fill of
    lane bits 4 and 5 with the src's lane bases had a wrong in-registers candidate
    (tests/test_fuzz_regressions.py); every fill now plans, and the dst's own plan (8 ds_bpermute) stays the
    cheapest in registers (under ``auto`` since session 24 a round trip of the dst's own, with no barrier: the src
    is in both warps, lds_path._exchanges)."""
    (case,) = [c for c in family_corpus("amd")["cases"]
               if (c["name"], c["arch"], c["dtype"], c["num_warps"])
               == ("slice0(blocked[1x1,t1x64,o10])->slice1(mfma16T)", "gfx942", "fp32", 2)]
    src, dst = LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])
    plans = [p for f in one_copy_candidates(src, dst, "gfx942", 32) for p in f]
    assert len(plans) >= len(filled_dsts(src, dst)) == 12 and all(verify(p, certificate=False).ok for p in plans)
    for strategy, kind, counts in (("registers", "lanes", {"ds_bpermute": 8, "total": 8}),
                                   ("auto", "lds", {"lds_write": 1, "lds_read": 2, "total": 3})):
        plan = plan_conversion(src, dst, "gfx942", 32, strategy=strategy, dst_one_copy=True)
        assert plan.verified and not plan.dst_one_copy and plan.strategy == kind
        assert {k: v for k, v in plan.counts().items() if v} == counts


@pytest.mark.parametrize("call, message", [
    (lambda s, d: plan_conversion(s, d, "gfx1100", 16, dst_one_copy="one"),
     "dst_one_copy must be True or False, got 'one'"),
    (lambda s, d: plan_conversion(s, d, "sm_90", 16, dst_one_copy=True),
     "dst_one_copy: a dst stored from its canonical lanes is an AMD kernel form; sm_90 has no emitter"),
])
def test_bad_input_is_one_line(call, message):
    src, dst = _layouts(*X16)  # (32 lanes: NVIDIA's warp too)
    with pytest.raises(LayoutError, match=message):
        call(src, dst)


def test_an_nvidia_target_is_refused_before_planning(monkeypatch):
    import linlayout.synth.convert as convert

    def planned(*args):
        raise AssertionError("planned before refusing")

    monkeypatch.setattr(convert, "_plan_layouts", planned)
    src, dst = _layouts(*X16)
    with pytest.raises(LayoutError, match="dst_one_copy: a dst stored from its canonical lanes is an AMD kernel form"):
        plan_conversion(src, dst, "sm_90", 16, dst_one_copy=True)


def test_cpp_output_refuses_the_form():
    from linlayout.lowering.cpp.source import emit_cpp

    src, dst = _layouts(*X16)
    one = plan_conversion(src, dst, "gfx1100", 16, dst_one_copy=True)
    with pytest.raises(LayoutError, match="C\\+\\+ output needs every dst lane"):
        emit_cpp(one)


@needs.mlir
def test_the_kernel_stores_the_canonical_lanes_alone():
    from linlayout.lowering.beyond_identity import ours_beyond_identity, store_mask_salu
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.emit.host import distinct_tile, emulated_output, expected_output, interpret

    src, dst = _layouts(*X16)
    one = plan_conversion(src, dst, "gfx1100", 16, dst_one_copy=True)
    low = lower_conversion(one, binary=False)
    tile = distinct_tile(low.kernel.shape, 16, seed=3)
    want = expected_output(one, tile, fill=0x5A)
    assert np.array_equal(interpret(low.kernel, tile, fill=0x5A), want)
    assert np.array_equal(emulated_output(one, tile, fill=0x5A), want)
    isa = low.compiled.isa
    assert store_mask_salu(isa) == 3  # s_and_saveexec_b32, s_cbranch_execz, the mask's s_mov_b32
    assert low.report["isa_counts"]["total"] == 48
    setup = ours_beyond_identity(one, isa)["setup"]
    assert (setup["total"], setup["salu"], setup["valu"]) == (4, 4, 0)  # the permlane selector and the mask


@needs.mlir
@pytest.mark.parametrize("one_copy", [False, True])
def test_the_emulated_output_of_an_unpacked_dst_stores_each_vgprs_low_slot(one_copy):
    # the slots above each VGPR's low one are don't-care (Plan.dst_unpacked): the kernel stores the low one alone
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.emit.host import distinct_tile, emulated_output, expected_output, interpret

    src, dst = _layouts(*X16)
    plan = plan_conversion(src, dst, "gfx1100", 16, dst_unpacked=True, dst_one_copy=one_copy)
    assert plan.dst_unpacked and plan.dst_one_copy == one_copy
    low = lower_conversion(plan, binary=False)
    tile = distinct_tile(low.kernel.shape, 16, seed=3)
    want = expected_output(plan, tile, fill=0x5A)
    assert np.array_equal(interpret(low.kernel, tile, fill=0x5A), want)
    assert np.array_equal(emulated_output(plan, tile, fill=0x5A), want)


def _amd_case(name: str, arch: str, dtype: str, num_warps: int) -> tuple[LinearLayout, LinearLayout]:
    (case,) = [c for c in family_corpus("amd")["cases"] if (c["name"], c["arch"], c["dtype"], c["num_warps"])
               == (name, arch, dtype, num_warps)]
    return LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])


def _kernel_tuples(src: LinearLayout, dst: LinearLayout, element_bits: int) -> dict:
    """The VGPR tuples the conversion kernel loads the src and stores the dst in (``bench.source_tuples``)."""
    from linlayout.cli.bench import source_tuples

    return dict(src_tuple_dwords=source_tuples(src, element_bits), dst_tuple_dwords=source_tuples(dst, element_bits))


#: AMD corpus, a fill's LDS round trip (``one_copy_candidates(..., strategy="auto")``), which the planner does not
#: plan, planned for the kernel's tuples: gfx90a i8, 8 waves, 4 ds_read_b128 where the dst's plan has 8 ds_read_b64
#: and more v_perm_b32 (10 fewer in all; 9 until the kernel declared its 512 threads); gfx942 fp16, 4 waves,
#: ds_read_b128 that do not land in the dwordx2 tuples of the kernel's stores: 12 copies (v_mov_b32 on the store
#: line), priced as its valu_load_tuple_copies
LDS_FILL = ("mfma32T->dotB32(kw8)", "gfx90a", "i8", 8)
LDS_FILL_COPIES = ("blocked[2x2,t8x8,o01]->dotA32(kw4)", "gfx942", "fp16", 4)


@needs.mlir
@pytest.mark.parametrize("case, element_bits, counts", [
    (LDS_FILL, 8, {"plain": (61, 20, 0), "fill": (49, 22, 0)}),  # (63 and 51 before session 24: their barriers)
    (LDS_FILL_COPIES, 16, {"plain": (15, 8, 0), "fill": (11, 10, 12)}),  # (setup 13 before session 22)
])
def test_a_fill_through_lds_is_priced_with_its_store_tuple_copies(case, element_bits, counts):
    """A fill's LDS round trip, ranked as the planner ranks (``CostModel.best_of``): its reads in the copy
    lanes address other elements, which no canonical lane sees, and where its loads do not land in the
    tuples the kernel stores, the copies (priced from ``dst_tuple_dwords``: ``valu_load_tuple_copies``)
    are LLVM's ``v_mov_b32`` on the store line, the compiled kernel's VALU beyond the identity kernel's.
    The planner plans the fills in registers only, and takes the dst's own plan here.  Counts:
    the conversion region, the setup beyond the identity kernels (the store mask's 3 SALU in the fill's),
    the store line's VALU beyond theirs."""
    from linlayout.lowering.beyond_identity import ours_beyond_identity
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.emit.host import distinct_tile, emulated_output, expected_output, interpret
    from linlayout.synth.cost import cost_model

    src, dst = _amd_case(*case)
    arch, tuples = case[1], _kernel_tuples(src, dst, element_bits)
    plain = plan_conversion(src, dst, arch, element_bits, **tuples)
    assert plan_conversion(src, dst, arch, element_bits, dst_one_copy=True, **tuples).to_certificate() \
        == plain.to_certificate()
    fills = [p for f in one_copy_candidates(src, dst, arch, element_bits, strategy="auto", **tuples) for p in f
             if p.lds_bytes]
    fill = cost_model(arch, None).best_of(fills, lambda p: p.cost, lambda p: p.total_with_overhead())
    assert fill.overhead.get("valu_load_tuple_copies", 0) == counts["fill"][2]
    assert verify(fill, certificate=False).ok and fill.dst_one_copy
    fill.verified = True
    for key, p in (("plain", plain), ("fill", fill)):
        low = lower_conversion(p, binary=False)
        beyond = ours_beyond_identity(p, low.compiled.isa)
        assert (low.report["isa_counts"]["total"], beyond["setup"]["total"], beyond["outside_valu"]["store"]) \
            == counts[key], key
        tile = distinct_tile(low.kernel.shape, element_bits, seed=5)
        want = expected_output(p, tile, fill=0x5A)
        assert np.array_equal(interpret(low.kernel, tile, fill=0x5A), want)
        assert np.array_equal(emulated_output(p, tile, fill=0x5A), want)


def test_the_one_copy_choice_breaks_near_ties_by_the_tie_count(monkeypatch):
    """The dst's own plan and the one-copy plans are ranked as the planner ranks whole plans
    (``CostModel.best_plan``), near ties by ``CostModel.tie_count``: for X16 under ``concurrent`` the dst's own
    plan (54 instructions with setup, cost 110, rank value 110 * 54 ** 0.55 = 987) is within 5 % of the one-copy
    plan's (54, 108: 969), which the cost picks; a tie count one more for a one-copy plan picks the dst's own."""
    from linlayout.synth import cost

    src, dst = _layouts(*X16)

    def planned():
        one = plan_conversion(src, dst, "gfx1100", 16, dst_one_copy=True, objective="concurrent")
        return one.dst_one_copy, one.cost, one.total_with_overhead()

    model = cost.cost_model("gfx1100", "concurrent")
    assert model.rank_value(110.0, 54) < model.tie_limit(model.rank_value(108.0, 54))
    assert planned() == (True, 108.0, 54)
    monkeypatch.setattr(cost.CostModel, "tie_count", lambda self, plan: plan.total_with_overhead() + plan.dst_one_copy)
    assert planned() == (False, 110.0, 54)
