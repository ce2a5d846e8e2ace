"""ConversionContext: the one object the planner carries (target, element size with its unit, layouts,
cost model, LDS budget, strategy), its derived quantities and its argument checks."""

from __future__ import annotations

import dataclasses

import pytest

from linlayout import LayoutError, LinearLayout
from linlayout.synth.context import ConversionContext
from linlayout.synth.convert import candidate_plans, exchange_schedule_plans
from linlayout.synth.preimage import normalize

# 8 registers x 64 lanes over a 16 x 32 tile: dim1 bits 0-2 in registers (src) or lanes (dst)
SRC = LinearLayout({"register": [[0, 1], [0, 2], [0, 4]],
                    "lane": [[0, 8], [0, 16], [1, 0], [2, 0], [4, 0], [8, 0]], "warp": []},
                   [("dim0", 16), ("dim1", 32)])
DST = LinearLayout({"register": [[0, 8], [0, 16], [1, 0]],
                    "lane": [[0, 1], [0, 2], [0, 4], [2, 0], [4, 0], [8, 0]], "warp": []},
                   [("dim0", 16), ("dim1", 32)])


@pytest.mark.parametrize("bits, element_bytes, slots_per_dword, dwords_per_slot",
                         [(8, 1, 4, 1), (16, 2, 2, 1), (32, 4, 1, 1), (64, 8, 1, 2)])
def test_element_size_units(bits, element_bytes, slots_per_dword, dwords_per_slot):
    ctx = ConversionContext.create(SRC, DST, "gfx942", bits)
    assert (ctx.element_bits, ctx.element_bytes, ctx.slots_per_dword, ctx.dwords_per_slot) == (
        bits, element_bytes, slots_per_dword, dwords_per_slot)


def test_fields_made_once_from_the_arguments():
    ctx = ConversionContext.create(SRC, DST, "mi300", 16, lds_budget_bytes=4096, strategy="lds")
    assert ctx.arch == "gfx942" and ctx.target.name == "gfx942" and ctx.cost_model.arch == "gfx942"
    assert ctx.problem.key() == normalize(SRC, DST, 64).key()
    assert (ctx.lds_budget_bytes, ctx.strategy) == (4096, "lds")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.element_bits = 32  # type: ignore[misc]


@pytest.mark.parametrize("args, kwargs, match", [
    (("gfx1100", 32), {}, "wave size is 32"), (("gfx942", 12), {}, "element_bits 12"),
    (("gfx942", True), {}, "element_bits True"), (("gfx942", 32), {"strategy": "magic"}, "strategy 'magic'"),
    (("gfx942", 32), {"lds_budget_bytes": 0}, "lds_budget_bytes 0"),
    (("gfx942", 32), {"lds_budget_bytes": 1.5}, "lds_budget_bytes 1.5"),
])
def test_bad_arguments_are_layout_errors_at_every_entry(args, kwargs, match):
    with pytest.raises(LayoutError, match=match):
        ConversionContext.create(SRC, DST, *args, **kwargs)
    with pytest.raises(LayoutError, match=match):
        candidate_plans(SRC, DST, *args, **kwargs)
    if not kwargs:
        with pytest.raises(LayoutError, match=match):
            exchange_schedule_plans(SRC, DST, *args)


def test_the_plans_carry_the_context_target_and_element_size():
    plans = candidate_plans(SRC, DST, "cdna3", 16)
    assert plans and {(p.arch, p.element_bits) for p in plans} == {("gfx942", 16)}


def test_one_wave_is_the_kernels_not_only_the_layouts():
    """``plan_conversion``'s ``one_wave``: one-warp layouts in a kernel of more waves (FlyDSL's ``convert`` in a larger
    block) take the multi-wave setup estimate (the lane id's masks counted: lane_arith "One wave"), and the plan and
    its certificate say so; the default follows the layouts' warps; a kernel of one wave cannot hold two warps."""
    from linlayout.hw.mfma import mfma_layouts
    from linlayout.synth.convert import plan_conversion
    from linlayout.synth.plan import Plan

    lay = mfma_layouts("v_mfma_f32_16x16x16_f16", "gfx942")
    plans = {w: plan_conversion(lay["C"], lay["A"], "gfx942", 16, strategy="lds", one_wave=w) for w in (None, True, False)}
    assert [plans[w].one_wave for w in (None, True, False)] == [True, True, False]
    # the LDS addresses keep their lane-id masks in a kernel of more waves (10 -> 11)
    assert plans[None].overhead == plans[True].overhead == {"valu_lds_addr": 10}
    assert plans[False].overhead == {"valu_lds_addr": 11}
    assert plans[False].to_certificate()["steps"] == plans[True].to_certificate()["steps"]  # only the count differs
    assert "one_wave" not in plans[True].to_certificate()
    cert = plans[False].to_certificate()
    assert cert["one_wave"] is False and Plan.from_certificate(cert).one_wave is False
    assert Plan.from_certificate(dict(cert, one_wave=True)).one_wave is True  # (one warp's default, written out)
    with pytest.raises(LayoutError, match="plan certificate has one_wave 1: only false, and only with one warp"):
        Plan.from_certificate(dict(cert, one_wave=1))
    two = dict(SRC.to_json(), bases=dict(SRC.to_json()["bases"], warp=[[0, 0]]))
    two["in_dims"] = [[d, 2 if d == "warp" else n] for d, n in two["in_dims"]]
    src2 = LinearLayout.from_json(two)
    with pytest.raises(LayoutError, match="one_wave: the layouts have 2 warps; a kernel of one wave holds one"):
        ConversionContext.create(src2, src2, "gfx942", 16, one_wave=True)
    with pytest.raises(LayoutError, match="one_wave must be True, False or None, not 1"):
        ConversionContext.create(SRC, DST, "gfx942", 16, one_wave=1)
