"""AMD wave32 targets (gfx1100, gfx1200, gfx1250) in the conversion planner: RDNA's lane semantics
in the oracle (dpp16 controls, dpp8, v_permlane16/x16), the planner's own maps against them, and
verified plans for random pairs, a register/lane-bit-4 exchange and WMMA fragments.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from convert_checker import check_certificate
from linlayout import LayoutError, LinearLayout, get_target
from linlayout.encodings import Wmma, wmma_dot_operand
from linlayout.synth import lane_ops
from linlayout.synth.convert import plan_conversion
from linlayout.synth.emulator import verify
from linlayout.synth.isa_lanes import dpp8_src_lanes, dpp_src_lanes, permlane16_src_lanes
from linlayout.synth.plan import RDNA_COUNT_KINDS, Lane, Plan

ARCHES = ("gfx1100", "gfx1200", "gfx1250")
LANES = np.arange(32)
# kinds RDNA has no instruction for (gfx9-only DPP controls, NVIDIA's shuffles)
FOREIGN = ("dpp:wave_", "dpp:row_bcast", "dpp:row_newbcast", "shfl.sync")


# ------------------------------------------------------------------ oracle
def test_rdna_dpp16_controls():
    assert dpp_src_lanes(0x165, 32, "rdna").tolist() == [(n & ~15) | ((n & 15) ^ 5) for n in range(32)]  # row_xmask:5
    assert dpp_src_lanes(0x153, 32, "rdna").tolist() == [16 * (n // 16) + 3 for n in range(32)]  # row_share:3
    assert dpp_src_lanes(0x141, 32, "rdna").tolist() == [(n & ~7) | (7 - (n & 7)) for n in range(32)]
    assert dpp_src_lanes(0x104, 32, "rdna").tolist() == [n + 4 if n % 16 < 12 else -1 for n in range(32)]
    for reserved in (0x130, 0x134, 0x138, 0x13C, 0x142, 0x143):  # wave shifts/rotates, row_bcast: gfx9 only
        with pytest.raises(LayoutError, match="reserved on RDNA"):
            dpp_src_lanes(reserved, 32, "rdna")
    with pytest.raises(LayoutError, match="reserved on gfx9"):
        dpp_src_lanes(0x161, 64)  # row_xmask: RDNA only


def test_dpp8_and_permlane16():
    sel = [3, 0, 7, 1, 1, 6, 2, 5]
    code = sum(s << (3 * i) for i, s in enumerate(sel))
    assert dpp8_src_lanes(code, 32).tolist() == [8 * (n // 8) + sel[n % 8] for n in range(32)]
    # the ISA's example: selectors 0x87654321 (lanes 0-7) and 0x0fedcba9 (lanes 8-15) rotate each row by one
    rot = 0x0FEDCBA9_87654321
    assert permlane16_src_lanes(rot, False, 32).tolist() == [16 * (n // 16) + (n + 1) % 16 for n in range(32)]
    assert permlane16_src_lanes(rot, True, 32).tolist() == [16 * (1 - n // 16) + (n + 1) % 16 for n in range(32)]
    ident = 0xFEDCBA98_76543210  # v_permlanex16 with identity selectors: XOR 16
    assert permlane16_src_lanes(ident, True, 32).tolist() == (LANES ^ 16).tolist()


def test_planner_rdna_dpp_maps_are_the_oracles_on_every_control():
    controls = lane_ops.dpp_controls(32, "rdna")
    names = {name.split(":")[0] for name, _, _ in controls}
    assert names == {"quad_perm", "row_mirror", "row_half_mirror", "row_ror", "row_shl", "row_shr", "row_share",
                     "row_xmask"}
    for name, ctrl, src in controls:
        np.testing.assert_array_equal(src, dpp_src_lanes(ctrl, 32, "rdna"), err_msg=f"{name} ({ctrl:#x})")
    assert len(lane_ops.dpp_controls(64)) == len(lane_ops.dpp_controls(64, "cdna"))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 7), min_size=8, max_size=8), st.lists(st.booleans(), min_size=32, max_size=32))
def test_planner_dpp8_solves_every_group_map(sel, needed):
    need = np.where(needed, 8 * (LANES // 8) + np.array(sel)[LANES % 8], -1)
    op = lane_ops.find_dpp8(need)
    got = dpp8_src_lanes(op.isa["dpp8"], 32)
    assert (got[need >= 0] == need[need >= 0]).all() and op.kind.startswith("dpp8:")
    assert lane_ops.find_dpp8(np.where(LANES == 3, 12, -1)) is None  # leaves its group of 8


@settings(max_examples=150, deadline=None)
@given(st.permutations(list(range(16))), st.booleans(), st.lists(st.booleans(), min_size=32, max_size=32))
def test_planner_permlane16_solves_every_row_map(f, cross, needed):
    full = 16 * ((LANES >> 4) ^ int(cross)) + np.array(f)[LANES & 15]
    need = np.where(needed, full, -1)
    op = lane_ops.find_permlane16(need)
    got = permlane16_src_lanes(op.isa["sel"], op.isa["cross"], 32)
    assert (got[need >= 0] == need[need >= 0]).all()
    two_rows_differ = np.where(LANES < 16, LANES, LANES ^ 1)
    assert lane_ops.find_permlane16(two_rows_differ) is None  # one selector serves both rows


def test_lane_ops_for_rdna_pick_valu_moves_first():
    t = get_target("gfx1100")
    assert lane_ops.find_lane_op(LANES ^ 5, t).kind == "dpp:row_xmask:5"
    assert lane_ops.find_lane_op(LANES ^ 16, t).kind.startswith("permlanex16:")
    assert lane_ops.find_lane_op(LANES[::-1].copy(), t).kind.startswith("permlanex16:")
    with pytest.raises(LayoutError, match="32 entries"):
        lane_ops.find_lane_op(np.arange(64), t)


# ------------------------------------------------------------------ plans
def _check_rdna_plan(plan: Plan) -> None:
    assert plan.verified and plan.wave_size == 32
    assert verify(plan).ok
    cert = json.loads(plan.dumps())
    ok, msg = check_certificate(cert)
    assert ok, msg
    assert verify(Plan.from_certificate(cert)).ok
    assert set(plan.counts()) == set(RDNA_COUNT_KINDS) | {"total"}
    for s in plan.steps:
        if isinstance(s, Lane):
            assert not s.kind.startswith(FOREIGN), s.kind


def _random_layout(rng, n_bits, reg_bits, warp_bits):
    hw = reg_bits + 5 + warp_bits
    cols = [0] * hw
    for h, t in zip(rng.permutation(hw), rng.permutation(n_bits)):
        cols[int(h)] = 1 << int(t)
    return LinearLayout({"register": [[c] for c in cols[:reg_bits]], "lane": [[c] for c in cols[reg_bits:reg_bits + 5]],
                         "warp": [[c] for c in cols[reg_bits + 5:]]}, [("x", 1 << n_bits)])


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("element_bits", [8, 16, 32, 64])
def test_random_pairs_plan_and_verify(arch, element_bits):
    rng = np.random.default_rng(element_bits * 3 + ARCHES.index(arch))
    for _ in range(10):
        n_bits = int(rng.integers(5, 9))
        warp_bits = int(rng.integers(0, 3))
        reg_bits = max(0, n_bits - 5 - warp_bits)
        src = _random_layout(rng, n_bits, reg_bits, warp_bits)
        dst = _random_layout(rng, n_bits, reg_bits, warp_bits)
        _check_rdna_plan(plan_conversion(src, dst, arch, element_bits))


def test_register_lane16_exchange_uses_permlane16_swap_on_gfx1250_only():
    """Register bit 0 and lane bit 4 trade places: gfx1250 has v_permlane16_swap for it."""
    lanes = [[1 << i] for i in range(1, 5)]
    src = LinearLayout({"register": [[1]], "lane": lanes + [[32]]}, [("x", 64)])
    dst = LinearLayout({"register": [[32]], "lane": lanes + [[1]]}, [("x", 64)])
    kinds = {}
    for arch in ARCHES:
        plan = plan_conversion(src, dst, arch, 32)
        _check_rdna_plan(plan)
        kinds[arch] = {k for k, v in plan.counts().items() if v and k != "total"}
    assert "permlane16_swap" in kinds["gfx1250"]
    assert "permlane16_swap" not in kinds["gfx1100"] | kinds["gfx1200"]


def test_warp_dependent_lanes_on_wave32():
    """Warp 1 reads its src data at lanes ``l ^ 16`` (the wave32 corpus's wmma2 -> blocked i8 case):
    the warp-lane candidates' ds_bpermute maps span the wave's 32 lanes."""
    src = LinearLayout({"register": [[1, 0], [2, 0], [4, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [8, 0]],
                        "warp": [[0, 0]]}, [("dim0", 16), ("dim1", 16)])
    dst = LinearLayout({"register": [[1, 0], [2, 0], [4, 0]], "lane": [[8, 0], [0, 0], [0, 1], [0, 2], [0, 4]],
                        "warp": [[0, 8]]}, [("dim0", 16), ("dim1", 16)])
    plan = plan_conversion(src, dst, "gfx1200", 8, strategy="registers")
    _check_rdna_plan(plan)
    assert "warp-dependent lanes: one ds_bpermute per src VGPR first" in plan.notes


def test_a_wave32_certificate_relabelled_wave64_is_a_layout_error():
    """A certificate whose arch and wave size say 64 lanes but whose src/dst have 32 is refused by
    name (it once broke a numpy broadcast inside verify)."""
    lanes = [[1 << i] for i in range(5)]
    tile = LinearLayout({"register": [[32]], "lane": lanes}, [("x", 64)])
    cert = json.loads(plan_conversion(tile, tile, "gfx1100", 32).dumps())
    cert["arch"], cert["wave_size"] = "gfx942", 64
    with pytest.raises(LayoutError, match="src has lane size 32, the plan's wave size is 64"):
        verify(Plan.from_certificate(cert))


@pytest.mark.parametrize("arch, version", [("gfx1100", 1), ("gfx1200", 2)])
def test_wmma_fragments_plan_and_verify(arch, version):
    shape = (32, 32)
    enc = Wmma(version, (2, 2))
    acc = enc.to_linear_layout(shape)
    a16, b16 = (wmma_dot_operand(enc, op, 8, shape) for op in (0, 1))
    for src, dst, bits in ((acc, a16, 16), (acc, b16, 16), (a16, acc, 32), (acc, acc, 32)):
        _check_rdna_plan(plan_conversion(src, dst, arch, bits))


# ---------------------------------------------------------------------- complementary selects into v_perm_b32
#: One lane of a pair holds the even columns, the other the odd ones; the dst (a WMMA v1 operand,
#: gfx1100) holds the pair's columns packed in both lanes: 16-bit, 2 waves.
_PAIR_SRC = LinearLayout.from_json({"in_dims": [["register", 32], ["lane", 32], ["warp", 2], ["block", 1]],
                                    "out_dims": [["dim0", 128], ["dim1", 16]],
                                    "bases": {"register": [[0, 2], [0, 4], [0, 8], [32, 0], [64, 0]],
                                              "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]],
                                              "warp": [[16, 0]], "block": []}})
_PAIR_DST = LinearLayout.from_json({"in_dims": [["register", 64], ["lane", 32], ["warp", 2], ["block", 1]],
                                    "out_dims": [["dim0", 128], ["dim1", 16]],
                                    "bases": {"register": [[0, 1], [0, 2], [0, 4], [0, 8], [32, 0], [64, 0]],
                                              "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 0]],
                                              "warp": [[16, 0]], "block": []}})


def test_swap_perm_operands_flips_the_halves_of_every_byte_code():
    from linlayout.synth.ir import swap_perm_operands

    assert swap_perm_operands(0x05040100) == 0x01000504
    assert swap_perm_operands(0x0C0C0105) == 0x0C0C0501  # constant bytes stay
    assert swap_perm_operands(swap_perm_operands(0x07020603)) == 0x07020603


@pytest.mark.parametrize("fuse", [False, True])
def test_a_permute_of_complementary_selects_is_one_permute_with_a_lane_selector(fuse):
    from linlayout.synth.ir import Program
    from linlayout.synth.plan import PermSelect, Select

    cond = np.arange(32) >= 16
    prog = Program(2, 2, 1, fuse_select_perm=fuse)
    a, b = prog.select(cond, 0, 1), prog.select(cond, 1, 0)  # c ? v1 : v0, c ? v0 : v1
    out = prog.perm(b, a, 0x05040100)
    kinds = [type(s) for s in prog.emit([out], 1)]
    if fuse:
        (step,) = [s for s in prog.emit([out], 1) if isinstance(s, PermSelect)]
        assert Select not in kinds and (step.sel0, step.sel1) == (0x05040100, 0x01000504)
        assert step.operands == (1, 0) and list(step.cond) == list(cond.astype(int))
    else:
        assert kinds.count(Select) == 2 and PermSelect not in kinds


@pytest.mark.parametrize("fuse", [False, True])
def test_a_select_of_permutes_of_two_values_is_one_permute_with_a_lane_selector(fuse):
    """``c ? perm(v0, v1, 0x0C0C0C05) : v1``: both operands are bytes of (v0, v1) -- v1 its own bytes,
    selector 0x03020100 -- so the select is one v_perm_b32 with those two selectors, the permute dead;
    the bytes the permute left zero (slots no one reads) copy under it what the other selector
    copies (0x03020105), so the step's element-level select names what the instruction writes."""
    from linlayout.synth.ir import Program
    from linlayout.synth.plan import Mov, PermSelect, Select

    cond = np.arange(64) >= 32
    prog = Program(2, 4, 1, fuse_select_perm=fuse)
    moved = prog.perm(0, 1, 0x0C0C0C05)  # byte 1 of v0 into byte 0, zeros above
    out = prog.select(cond, 1, moved)
    steps = prog.emit([out], 1)
    if fuse:
        (step,) = steps[:-1] if isinstance(steps[-1], Mov) and steps[-1].kind == "rename" else steps
        assert isinstance(step, PermSelect) and step.operands == (0, 1)
        assert (step.sel0, step.sel1) == (0x03020100, 0x03020105)
    else:
        assert [type(s) for s in steps if s.op != "mov" or s.kind != "rename"] == [Mov, Select]
    # a permute whose selector spreads a sign bit (code 8) is taken as its own bytes, not re-read
    signed = Program(2, 4, 1, fuse_select_perm=True)
    spread = signed.perm(0, 1, 0x0C0C0C08)
    signed.select(cond, 1, spread)
    assert signed._bytes_of(spread) == [(spread, i) for i in range(4)]
    assert signed._bytes_of(signed.perm(0, 1, 0x0C0C0C05)) == [(0, 1), 12, 12, 12]
    # bytes of three distinct values cannot come from one permute: no fusion
    three = Program(3, 4, 1, fuse_select_perm=True)
    out = three.select(cond, 2, three.perm(0, 1, 0x0C0C0105))
    assert [type(s) for s in three.emit([out], 1) if s.op != "mov" or s.kind != "rename"] == [Mov, Select]


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1200"])
def test_wave32_pairs_of_lanes_pack_with_lane_selected_permutes(arch):
    """One v_permlanex16 per src VGPR brings the partner lane's pair; each dst VGPR is one v_perm_b32 of
    (partner, own) whose selector swaps the operands on lanes 16-31 (Triton's instructions, without
    the two v_cndmask per src VGPR the selects took before)."""
    plan = plan_conversion(_PAIR_SRC, _PAIR_DST, arch, 16)
    _check_rdna_plan(plan)
    assert {k: v for k, v in plan.counts().items() if v} == {"permlane16": 16, "v_perm_b32": 32, "total": 48}


def test_the_select_fusion_is_the_amd_targets_only():
    from linlayout.synth.context import ConversionContext
    from linlayout.synth.convert import _program

    wide = LinearLayout({"register": [[1], [2]], "lane": [[4], [8], [16], [32], [64], [0]]}, [("dim0", 128)])
    assert _program(ConversionContext.create(wide, wide, "gfx942", 16)).fuse_select_perm
    assert not _program(ConversionContext.create(_PAIR_SRC, _PAIR_DST, "sm_90", 16)).fuse_select_perm
    assert _program(ConversionContext.create(_PAIR_SRC, _PAIR_DST, "gfx1100", 16)).fuse_select_perm


def test_the_lane_selected_permutes_compile_to_exactly_the_plans_instructions():
    from test_lowering_cpp import _hip_region, find_hip_clang

    if find_hip_clang() is None:
        pytest.skip("needs a HIP-capable clang")
    plan = plan_conversion(_PAIR_SRC, _PAIR_DST, "gfx1100", 16)
    _, got = _hip_region(plan)
    assert (got["permlane16"], got["v_perm_b32"], got["v_cndmask"]) == (16, 32, 0)


@pytest.mark.parametrize("objective", ["concurrent", "latency"])
def test_the_lower_bounds_hold_for_every_candidate_on_the_wave32_corpus(objective):
    """On every 16th wave32 corpus case (v_permlane16/x16 issue in one cycle there, below a DPP op's
    two): lower_bound's cost is at most every candidate's, its register bound at most every plan's
    that stays in registers, its LDS bound and LDS instructions at most every round trip's."""
    from linlayout import caches
    from linlayout.dtypes import dtype_bits
    from linlayout.synth import convert
    from linlayout.synth.context import ConversionContext
    from linlayout.synth.cost import lower_bound
    from repo_data import family_corpus

    plans = 0
    for c in family_corpus("wave32")["cases"][::16]:
        caches.clear(keep_tables=True)
        ctx = ConversionContext.create(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), c["arch"],
                                       dtype_bits(c["dtype"]), objective=objective)
        lb = lower_bound(ctx)
        for plan in convert._candidates(ctx, prune=False):
            assert lb["cost"] <= plan.cost + 1e-6, c["name"]
            if plan.strategy == "lds":
                assert lb["lds_cost"] <= plan.cost + 1e-6 and lb["lds_instructions"] <= plan.total_with_overhead()
            elif plan.strategy != "noop" and not lb["cross_warp"]:
                assert lb["register_cost"] <= plan.cost + 1e-6, c["name"]
            plans += 1
    assert plans > 60


def test_the_lower_bound_prices_a_cross_lane_dword_at_the_cheapest_lane_instruction():
    """gfx1200's v_permlane16_b32 (1 cycle) is cheaper than its DPP move (2): the 64-bit plan moves
    its 8 cross-lane dwords with 8 permlanes, 16 under ``concurrent`` (two waves a SIMD), and the
    bound is exactly that, not the 32 a DPP price gave, above the plan (found by fuzzing); the plan
    also sets up its two lane selectors (one ``s_mov_b32`` each, ``PERMLANE_SELECTOR_SALU``): 20."""
    shape = [("dim0", 4), ("dim1", 16)]
    src = LinearLayout({"register": [[0, 8], [1, 0]], "lane": [[0, 2], [0, 4], [0, 1], [2, 0], [0, 0]], "warp": []},
                       shape)
    dst = LinearLayout({"register": [[0, 2], [1, 0]], "lane": [[0, 4], [0, 0], [0, 0], [0, 0], [0, 0]], "warp": []},
                       shape)
    plan = plan_conversion(src, dst, "gfx1200", 64)
    assert plan.counts()["permlane16"] == 8 and plan.lower_bound["cross_lane_dwords"] == 8
    assert plan.lower_bound["cost"] == 16.0 and plan.overhead == {"salu_permlane_selector": 2}
    assert plan.cost == 20.0


def test_a_plan_of_permlane16_moves_is_a_lanes_plan():
    """The strategy of a register plan names what its steps do: a plan whose only lane moves are
    v_permlane16 (gfx1200 i8 WMMA v2 A operand of a 16x16 tile, kWidth 8 -> 16, two
    warps: 2 permlane16, 4 selects) moves data
    across lanes, so it is a "lanes" plan, as a DPP or shuffle plan is (it was labelled "registers"
    when the label came from a list of count kinds that lacked permlane16)."""
    lanes = [[1, 0], [2, 0], [4, 0], [8, 0]]
    src = LinearLayout({"register": [[0, 1], [0, 2], [0, 4]], "lane": lanes + [[0, 8]], "warp": [[0, 0]]},
                       [("dim0", 16), ("dim1", 16)])
    dst = LinearLayout({"register": [[0, 1], [0, 2], [0, 4], [0, 8]], "lane": lanes + [[0, 0]], "warp": [[0, 0]]},
                       [("dim0", 16), ("dim1", 16)])
    plan = plan_conversion(src, dst, "gfx1200", 8)
    counts = {k: v for k, v in plan.counts().items() if v}
    assert counts == {"permlane16": 2, "v_cndmask": 4, "total": 6}
    assert plan.strategy == "lanes"
