"""A dst held one 8/16-bit element per VGPR (``plan_conversion(..., dst_unpacked=True)``, ``Plan.dst_unpacked``):
the form of Triton's kernels that leave each element in its own VGPR and store it alone
(``global_store_byte`` / ``_short``; docs/conversions.md section 4, "A src held one element per VGPR")."""

from __future__ import annotations

import pytest

import needs
from linlayout import LayoutError, LinearLayout
from linlayout.cli.bench import kernel_plan
from linlayout.synth.convert import UnpackedDstRefused, candidate_plans, plan_conversion
from linlayout.synth.emulator import verify
from linlayout.synth.packing import plan_free_packing, unpacked_orders
from linlayout.synth.plan import LdsLoad, Plan, packed_dst, unpacked_dst
from repo_data import corpus


def _layouts(name: str, arch: str, dtype: str, num_warps: int) -> tuple[LinearLayout, LinearLayout]:
    (case,) = [c for c in corpus()["cases"] if (c["name"], c["arch"], c["dtype"], c["num_warps"])
               == (name, arch, dtype, num_warps)]
    return LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])


#: gfx950 bf16, 1 wave: one element per lane to two (Triton: a v_mov, an s_nop, a v_permlane32_swap).
SWAP = ("slice0(blocked[1x1,t1x64,o10])->slice1(mfma32T)", "gfx950", "bf16", 1)
#: gfx950 i8, 1 wave: a round trip whose two byte loads land one element per VGPR.
BYTES = ("slice0(blocked[1x2,t2x32,o10])->slice1(mfma32T)", "gfx950", "i8", 1)


def test_the_unpacked_dst_layout_is_the_unpacked_src_one_and_packs_back():
    _, dst = _layouts(*SWAP)
    u = unpacked_dst(dst, 16)
    assert u.bases["register"] == [[0]] + dst.bases["register"]
    assert packed_dst(u, 16).to_json() == dst.to_json()
    with pytest.raises(LayoutError, match="a dst held one element per VGPR needs 8- or 16-bit elements"):
        unpacked_dst(dst, 32)


def test_the_swapped_halves_are_left_in_their_own_vgprs_with_no_permute():
    src, dst = _layouts(*SWAP)
    packed = plan_conversion(src, dst, "gfx950", 16)
    plan = plan_conversion(src, dst, "gfx950", 16, dst_unpacked=True)
    assert plan.verified and plan.dst_unpacked and not plan.src_unpacked and plan.strategy == "lanes"
    counts, packed_counts = plan.counts(), packed.counts()
    assert (counts["v_mov"], counts["permlane32_swap"], counts["v_perm_b32"], counts["total"]) == (1, 1, 0, 2)
    assert (packed_counts["v_perm_b32"], packed_counts["total"]) == (1, 3)  # the perm joining the halves
    assert (plan.total_with_overhead(), packed.total_with_overhead()) == (3, 5)  # (no selector SGPR)
    assert (plan.slots_out, packed.slots_out) == (4, 2)
    assert plan.lane_bytes() == packed.lane_bytes() == (2, 4)
    assert plan.packed_sides()[1].to_json() == dst.to_json()


def test_the_emulator_checks_each_vgprs_low_element_alone():
    src, dst = _layouts(*SWAP)
    plan = plan_conversion(src, dst, "gfx950", 16, dst_unpacked=True)
    assert verify(plan).ok
    plan.dst_unpacked = False  # every slot checked: the upper halves do not repeat their elements
    result = verify(plan, certificate=False)
    assert not result.ok and "slot 1 holds element" in result.message
    s2, d2 = _layouts(*BYTES)
    loads = plan_conversion(s2, d2, "gfx950", 8, dst_unpacked=True)
    last = max(k for k, st in enumerate(loads.steps) if isinstance(st, LdsLoad))
    loads.steps = loads.steps[:last] + loads.steps[last + 1:]  # the second byte never loaded: VGPR 1's low slot
    result = verify(loads, certificate=False)
    assert not result.ok and "slot 4 holds element -1" in result.message
    assert "(64 slots wrong)" in result.message  # one a lane: slots 5-7 above it are not checked


def test_narrow_lds_loads_land_one_element_per_vgpr():
    src, dst = _layouts(*BYTES)
    plan = plan_conversion(src, dst, "gfx950", 8, dst_unpacked=True)
    assert plan.strategy == "lds" and plan.dst_unpacked and verify(plan).ok
    counts = plan.counts()
    assert (counts["lds_write"], counts["lds_read"], counts["v_perm_b32"], counts["total"]) == (1, 2, 0, 3)
    assert [st.width_bytes for st in plan.steps if isinstance(st, LdsLoad)] == [1, 1]
    packed = plan_conversion(src, dst, "gfx950", 8)  # the two bytes joined: a v_perm_b32 and its selector
    assert (packed.counts()["v_perm_b32"], packed.counts()["total"]) == (1, 4)
    assert (plan.total_with_overhead(), packed.total_with_overhead()) == (6, 9)


def test_the_certificate_keeps_the_form_and_refuses_a_bad_one():
    src, dst = _layouts(*SWAP)
    plan = plan_conversion(src, dst, "gfx950", 16, dst_unpacked=True)
    cert = plan.to_certificate()
    assert cert["dst_unpacked"] is True and "src_unpacked" not in cert
    assert cert["format"] == "linlayout-plan/v1-unpacked"  # a v1 reader refuses it by name
    from convert_checker import check_certificate
    assert check_certificate(cert) == (True, "")  # (only each VGPR's low slot checked)
    assert not check_certificate({**cert, "dst_unpacked": False})[0]
    assert "dst_unpacked" not in plan_conversion(src, dst, "gfx950", 16).to_certificate()
    back = Plan.from_certificate(cert)
    assert back.dst_unpacked and verify(back).ok
    with pytest.raises(LayoutError, match="dst_unpacked 1; it must be true or false"):
        Plan.from_certificate({**cert, "dst_unpacked": 1})
    packed = plan_conversion(src, dst, "gfx950", 16).to_certificate()
    with pytest.raises(LayoutError, match="dst_unpacked true but its dst's first register bases are not zero"):
        Plan.from_certificate({**packed, "dst_unpacked": True})
    assert packed["format"] == "linlayout-plan/v1"
    with pytest.raises(LayoutError, match="format 'linlayout-plan/v1' has dst_unpacked true; that is format "
                                          "'linlayout-plan/v1-unpacked'"):
        Plan.from_certificate({**cert, "format": "linlayout-plan/v1"})
    with pytest.raises(LayoutError, match="format .linlayout-plan/v1-unpacked. has none of"):
        Plan.from_certificate({**packed, "format": "linlayout-plan/v1-unpacked"})


def test_both_sides_unpacked():
    src, dst = _layouts(*SWAP)
    plan = plan_conversion(src, dst, "gfx950", 16, src_unpacked=True, dst_unpacked=True)
    assert plan.src_unpacked and plan.dst_unpacked and verify(plan).ok
    assert (plan.slots_in, plan.slots_out, plan.counts()["total"]) == (2, 4, 2)
    assert all(p.dst_unpacked and verify(p, certificate=False).ok
               for p in candidate_plans(src, dst, "gfx950", 16, dst_unpacked=True))


def test_where_no_candidate_converts_the_form_is_refused(monkeypatch):
    import linlayout.synth.convert as convert

    src, dst = _layouts(*SWAP)
    monkeypatch.setattr(convert, "_first_unpacked", lambda ranked, *_: None)
    with pytest.raises(UnpackedDstRefused, match="no plan converts this dst held one element per VGPR"):
        plan_conversion(src, dst, "gfx950", 16, dst_unpacked=True)
    plan = plan_free_packing(src, dst, "gfx950", 16, unpacked_dst=True)
    assert not plan.dst_unpacked and plan.verified


def test_the_unpacked_orders_leave_an_unpacked_sides_order_moot():
    candidates = [(None, None), ((1, 2), None), (None, (2,))]
    assert unpacked_orders(candidates, False, False) == []
    assert unpacked_orders(candidates, True, False) == [(None, None, True, False), (None, (2,), True, False)]
    assert unpacked_orders(candidates, False, True) == [(None, None, False, True), ((1, 2), None, False, True)]
    assert unpacked_orders(candidates, True, True)[-1] == (None, None, True, True)
    assert len(unpacked_orders(candidates, True, True)) == 5


@pytest.mark.parametrize("call, message", [
    (lambda s, d: plan_conversion(s, d, "gfx950", 16, dst_unpacked="yes"),
     "dst_unpacked must be True or False, got 'yes'"),
    (lambda s, d: candidate_plans(s, d, "gfx950", 16, dst_unpacked=None),
     "dst_unpacked must be True or False, got None"),
    (lambda s, d: plan_conversion(s, d, "gfx950", 32, dst_unpacked=True),
     "a dst held one element per VGPR needs 8- or 16-bit elements, not 32-bit ones"),
    (lambda s, d: plan_free_packing(s, d, "gfx950", 16, unpacked_dst=1), "unpacked_dst must be True or False, got 1"),
    (lambda s, d: plan_free_packing(s, d, "gfx950", 16, dst_fixed_bits=1, unpacked_dst=True),
     r"unpacked_dst needs 8- or 16-bit elements whose dwords the caller does not move whole \(dst_fixed_bits"),
    (lambda s, d: kernel_plan(s, d, "gfx950", 16, unpacked_dst="no"), "unpacked_dst must be True or False, got 'no'"),
    (lambda s, d: plan_conversion(s, d, "sm_90", 16, dst_unpacked=True),
     "dst_unpacked: held one element per VGPR is an AMD kernel form; sm_90 has no emitter for it"),
    (lambda s, d: plan_free_packing(s, d, "sm_80", 16, unpacked_dst=True),
     "unpacked_dst: held one element per VGPR is an AMD kernel form; sm_80 has no emitter for it"),
])
def test_bad_values_are_one_line_errors(call, message):
    src, dst = _layouts(*SWAP)
    with pytest.raises(LayoutError, match=message) as e:
        call(src, dst)
    assert "\n" not in str(e.value)


def test_free_packing_and_the_bench_take_the_unpacked_dst_where_it_is_cheaper():
    src, dst = _layouts(*SWAP)
    assert plan_free_packing(src, dst, "gfx950", 16, unpacked_dst=True).dst_unpacked
    assert not plan_free_packing(src, dst, "gfx950", 16).dst_unpacked
    assert kernel_plan(src, dst, "gfx950", 16).dst_unpacked
    assert not kernel_plan(src, dst, "gfx950", 16, unpacked_dst=False).dst_unpacked
    # gfx942 fp16, 4 waves: unpacked, the round trip's dword loads split 6 + 6 (an address from the thread id,
    # lane_arith.thread_id_form; 6 + 7 and kept packed before) against 4 + 8 packed: the same count, the
    # unpacked of fewer modelled cycles taken
    s2, d2 = _layouts("slice0(blocked[1x2,t1x64,o10])->slice1(mfma32T)", "gfx942", "fp16", 4)
    unpacked = plan_conversion(s2, d2, "gfx942", 16, dst_unpacked=True)
    assert (unpacked.counts()["total"], unpacked.total_with_overhead()) == (6, 12)
    packed = plan_free_packing(s2, d2, "gfx942", 16)
    assert not packed.dst_unpacked and (packed.counts()["total"], packed.total_with_overhead()) == (4, 12)
    taken = plan_free_packing(s2, d2, "gfx942", 16, unpacked_dst=True)
    assert taken.dst_unpacked and taken.total_with_overhead() == 12 and taken.cost < packed.cost


@needs.mlir
def test_the_kernel_stores_each_element_from_its_own_vgpr():
    """The swapped halves (no unpacking on the store line) and the round trip's narrow loads, each
    element stored alone, both converting on the interpreter."""
    from interp_kernels import converting_kernel
    from linlayout.lowering.isa import region_lines

    swap = converting_kernel(plan_conversion(*_layouts(*SWAP), "gfx950", 16, dst_unpacked=True))
    counts = swap.report["isa_counts"]
    assert (counts["total"], counts["v_mov"], counts["permlane32_swap"], counts["s_nop"]) == (3, 1, 1, 1)
    assert swap.report["setup_counts"]["total"] == 0
    isa = swap.compiled.isa
    assert isa.count("buffer_store_short") == 2 and "_d16_hi" not in isa
    tail = isa.split("linlayout-end conv")[1]
    assert not any(op in tail for op in ("v_lshrrev", "v_perm_b32", "v_and_b32"))  # no unpacking on the store line
    ops = [line.split()[0] for line in region_lines(isa, "conv") if not line.lstrip().startswith(";")]
    assert ops == ["v_mov_b32_e32", "s_nop", "v_permlane32_swap_b32_e32"]
    loads = converting_kernel(plan_conversion(*_layouts(*BYTES), "gfx950", 8, dst_unpacked=True))
    counts = loads.report["isa_counts"]
    assert (counts["total"], counts["lds_write"], counts["lds_read"], counts["valu"]) == (3, 1, 2, 0)
    assert loads.compiled.isa.count("ds_read_u8") == 2 and loads.compiled.isa.count("buffer_store_byte") == 2


@needs.mlir
def test_the_bench_counts_the_unpacked_kernel_whole():
    from linlayout.cli.bench import bench_case

    (case,) = [c for c in corpus()["cases"] if (c["name"], c["arch"], c["dtype"], c["num_warps"]) == SWAP]
    row = bench_case(case, binary=False)
    assert row["dst_unpacked"] and not row["src_unpacked"] and row["repacked"] == []
    assert (row["ours"]["total"], row["ours_setup"]["total"], row["ours_whole"]["total"]) == (3, 0, 3)
    assert row["ours_outside_valu"] == {"load": 0, "store": 0}
    assert (row["triton"]["total"], row["triton_whole"]["total"]) == (3, 3)


#: A random gfx942 fp16 pair (fuzz seed 91 case 73) whose LDS pool's load permutes depend on ``dst_unpacked``.
_ORDER_SRC = {"in_dims": [["register", 8], ["lane", 64], ["warp", 4]], "out_dims": [["dim0", 16], ["dim1", 64]],
              "bases": {"register": [[0, 2], [2, 0], [0, 4]],
                        "lane": [[0, 1], [8, 0], [0, 32], [0, 0], [0, 16], [0, 8]], "warp": [[4, 0], [1, 0]]}}
_ORDER_DST = {"in_dims": [["register", 16], ["lane", 64], ["warp", 4]], "out_dims": [["dim0", 16], ["dim1", 64]],
              "bases": {"register": [[0, 32], [1, 0], [0, 8], [0, 1]],
                        "lane": [[4, 0], [2, 0], [0, 2], [0, 16], [0, 0], [0, 0]], "warp": [[8, 0], [0, 4]]}}


def test_a_plan_does_not_depend_on_whether_the_other_form_was_planned_first():
    from linlayout import caches
    src, dst = LinearLayout.from_json(_ORDER_SRC), LinearLayout.from_json(_ORDER_DST)

    def plan(unpacked: bool):
        return plan_conversion(src, dst, "gfx942", 16, dst_unpacked=unpacked)

    def key(p):
        return p.strategy, p.cost, p.total_with_overhead(), p.counts()

    fresh = {}
    for unpacked in (False, True):
        caches.clear()
        fresh[unpacked] = key(plan(unpacked))
    for first in (False, True):
        caches.clear()
        plan(first)
        assert key(plan(not first)) == fresh[not first]


def test_a_staged_conversion_keeps_the_unpacked_dst():
    # gfx1100 fp16, registers only (fuzz seed 2401 case 380): the warp-lane candidate's inner conversion
    # once dropped dst_unpacked and returned a packed plan
    src = LinearLayout.from_json({"in_dims": [["register", 4], ["lane", 32], ["warp", 2]],
                                  "out_dims": [["dim0", 32], ["dim1", 4]],
                                  "bases": {"register": [[2, 0], [2, 1]],
                                            "lane": [[0, 1], [16, 0], [1, 0], [0, 2], [8, 0]], "warp": [[4, 0]]}})
    dst = LinearLayout.from_json({"in_dims": [["register", 8], ["lane", 32], ["warp", 2]],
                                  "out_dims": [["dim0", 32], ["dim1", 4]],
                                  "bases": {"register": [[0, 2], [0, 2], [2, 0]],
                                            "lane": [[1, 0], [0, 1], [0, 2], [8, 0], [16, 0]], "warp": [[5, 0]]}})
    plan = plan_conversion(src, dst, "gfx1100", 16, objective="throughput", strategy="registers",
                           src_tuple_dwords=2, dst_unpacked=True)
    assert plan.dst_unpacked and not plan.src_unpacked and plan.slots_out == 16
    assert verify(plan).ok


def test_the_bench_leaves_a_dst_of_more_vgprs_than_its_limit_packed():
    from linlayout.cli.bench import UNPACKED_DST_VGPRS, unpacked_sides

    def column_major(register_bits: int) -> LinearLayout:  # registers down dim0, lanes along dim1: no dword whole
        return LinearLayout({"register": [[1 << k, 0] for k in range(register_bits)],
                             "lane": [[0, 1 << k] for k in range(6)], "warp": []},
                            [("dim0", 1 << register_bits), ("dim1", 64)])

    at, over = column_major(UNPACKED_DST_VGPRS.bit_length() - 1), column_major(UNPACKED_DST_VGPRS.bit_length())
    assert at.in_dim_size("register") == UNPACKED_DST_VGPRS
    assert unpacked_sides(at, at, 16) == (True, True)
    assert unpacked_sides(over, over, 16) == (True, False)  # (the src side has no such limit)


def test_a_same_map_conversion_to_an_unpacked_dst_moves_the_upper_halves_down():
    # not the noop: dst's 2 bf16 per lane leave one per VGPR, the upper one shifted down (the packed form: no step)
    _, dst = _layouts(*SWAP)
    assert plan_conversion(dst, dst, "gfx950", 16).strategy == "noop"
    plan = plan_conversion(dst, dst, "gfx950", 16, dst_unpacked=True)
    assert plan.dst_unpacked and plan.verified and verify(plan).ok
    assert (plan.strategy, plan.counts()["total"], plan.slots_out) == ("registers", 1, 4)
