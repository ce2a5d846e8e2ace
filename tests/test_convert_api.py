"""plan_conversion: instruction choice on small exact cases, broadcast, 64-bit, LDS rounds, errors, CLI."""

from __future__ import annotations

import json
import pytest

from linlayout import LayoutError, LinearLayout, caches
from linlayout.spec import parse_layout
from linlayout.synth.convert import plan_conversion
from linlayout.synth.emulator import verify
from linlayout.synth.plan import Plan

from convert_checker import check_certificate


def L(reg, lane, warp=(), d0=None, d1=None):
    """Layout over (dim0, dim1) from unit-vector bit lists; a bit is (dim, k) or None (broadcast)."""
    n0 = d0 if d0 is not None else 1 + max([k for b in [*reg, *lane, *warp] if b and b[0] == 0 for k in [b[1]]],
                                           default=-1)
    n1 = d1 if d1 is not None else 1 + max([k for b in [*reg, *lane, *warp] if b and b[0] == 1 for k in [b[1]]],
                                           default=-1)

    def vec(b):
        return [0, 0] if b is None else ([1 << b[1], 0] if b[0] == 0 else [0, 1 << b[1]])

    return LinearLayout({"register": [vec(b) for b in reg], "lane": [vec(b) for b in lane],
                         "warp": [vec(b) for b in warp]}, [("dim0", 1 << n0), ("dim1", 1 << max(n1, 0))])


LANES = [(0, k) for k in range(6)]


def _check(p: Plan) -> Plan:
    assert p.verified and verify(p).ok
    ok, msg = check_certificate(json.loads(p.dumps()))
    assert ok, msg
    return p


def test_quad_lane_swap_is_one_dpp_move():
    src = L([(1, 0)], LANES)
    dst = L([(1, 0)], [(0, 1), (0, 0)] + LANES[2:])
    p = _check(plan_conversion(src, dst, "gfx942", 32))
    c = p.counts()
    assert c["dpp"] == 2 and c["total"] == 2 and p.strategy == "lanes"  # quad_perm on each of 2 registers


def test_register_lane_transposition_per_target():
    # register bit 0 <-> lane bit 4 (xor 16): gfx942 moves each register through ds_swizzle and merges
    # it by a row-masked identity DPP move in place (no lane mask: 4 instructions and 2 s_waitcnt,
    # against a select, one ds_swizzle and two selects with the mask's 2 SALU and 1 s_waitcnt), gfx950 swaps
    src = L([(1, 0)], LANES)
    dst = L([(0, 4)], LANES[:4] + [(1, 0), (0, 5)])
    p942 = _check(plan_conversion(src, dst, "gfx942", 32))
    assert p942.counts()["ds_swizzle"] == 2 and p942.counts()["dpp"] == 2 and p942.counts()["total"] == 4
    assert p942.counts()["v_cndmask"] == 0 and p942.lds_bytes == 0 and p942.total_with_overhead() == 6
    p950 = _check(plan_conversion(src, dst, "gfx950", 32))
    assert p950.counts()["permlane16_swap"] == 1 and p950.counts()["total"] == 1


def test_dpp_exchange_inside_a_row_and_64bit_doubles_it():
    src = L([(1, 0), (1, 1)], LANES)
    dst = L([(0, 2), (1, 1)], LANES[:2] + [(1, 0)] + LANES[3:])  # register bit 0 <-> lane bit 2
    p = _check(plan_conversion(src, dst, "gfx942", 32))
    # per register pair: one result in place by a bank-masked v_mov_b32_dpp (row_shl/shr:4),
    # the other by a DPP move and a v_cndmask (linlayout.synth.ir.FUSE_DPP_SELECT is off)
    assert p.counts()["dpp"] == 4 and p.counts()["v_cndmask"] == 2 and p.counts()["total"] == 6
    assert p.counts()["ds_bpermute"] == 0 and p.counts()["ds_swizzle"] == 0
    p64 = _check(plan_conversion(src, dst, "gfx942", 64))
    assert p64.counts()["dpp"] == 8 and p64.counts()["total"] == 12


def test_bit_reversal_uses_ds_swizzle_fft():
    src = L([(1, 0)], LANES)
    dst = L([(1, 0)], [(0, 4), (0, 3), (0, 2), (0, 1), (0, 0), (0, 5)])
    p = _check(plan_conversion(src, dst, "gfx942", 32))
    assert p.counts()["ds_swizzle"] == 2 and p.counts()["ds_bpermute"] == 0


def test_lane_broadcast_and_duplicate_registers():
    src = L([(1, 0)], LANES)
    dst = L([(0, 5), (1, 0), None], LANES[:5] + [None])  # lanes l and l+32 hold the same, registers twice
    p = _check(plan_conversion(src, dst, "gfx950", 32))
    assert p.lds_bytes == 0


def test_src_broadcast_over_warps_stays_in_each_wave():
    src = L([(1, 0), (0, 6)], LANES, warp=[None, None])  # every warp holds the whole tile
    dst = L([(1, 0)], LANES, warp=[(0, 6), None])
    p = _check(plan_conversion(src, dst, "gfx942", 16))
    assert p.lds_bytes == 0 and p.counts()["s_barrier"] == 0


def test_cross_warp_needs_lds_and_rounds_under_a_budget():
    src = L([(1, 0), (1, 1)], LANES, warp=[(0, 6)])
    dst = L([(1, 0), (0, 6)], LANES, warp=[(1, 1)])
    p = _check(plan_conversion(src, dst, "gfx942", 32))
    assert p.strategy == "lds" and p.counts()["s_barrier"] >= 1 and p.lower_bound["cross_warp"]
    small = _check(plan_conversion(src, dst, "gfx942", 32, lds_budget_bytes=p.lds_bytes // 2))
    assert small.lds_bytes <= p.lds_bytes // 2 and small.counts()["s_barrier"] >= 2
    half = _check(plan_conversion(src, dst, "gfx942", 16, lds_budget_bytes=p.lds_bytes // 4))
    assert half.lds_bytes <= p.lds_bytes // 4 and half.counts()["s_barrier"] >= 2
    with pytest.raises(LayoutError):
        plan_conversion(src, dst, "gfx942", 32, lds_budget_bytes=64)
    with pytest.raises(LayoutError, match="warps"):
        plan_conversion(src, dst, "gfx942", 32, strategy="registers")


def test_an_8_wave_tile_larger_than_lds_moves_in_rounds_by_default():
    # 256x128 fp32 is 131072 bytes, twice gfx942's LDS: with no budget given the planner splits it
    # into two rounds of 65536 bytes (8 ds_write_b128 + 8 ds_read_b128 a round, a barrier between
    # the writes and the reads of each round and before the second round's writes)
    src = parse_layout("mfma:32x32x8,warps=4x2,shape=256x128")
    dst = parse_layout("mfma:16x16x16,warps=4x2,shape=256x128")
    p = _check(plan_conversion(src, dst, "gfx942", 32))
    c = p.counts()
    assert (p.strategy, p.num_warps, p.lds_bytes) == ("lds", 8, 65536)
    assert (c["lds_write"], c["lds_read"], c["s_barrier"], c["total"]) == (16, 16, 3, 35)
    assert "2 round(s)" in p.notes[-1]
    with pytest.raises(LayoutError, match="the budget 64 allows no split into rounds"):
        plan_conversion(src, dst, "gfx942", 32, lds_budget_bytes=64)


def test_lower_bound_counts_remote_dwords_exactly():
    src = L([(1, 0), (1, 1), (1, 2), (1, 3), (1, 4)], LANES)
    dst = L([(1, 0), (1, 1), (0, 5), (1, 3), (1, 4)], LANES[:5] + [(1, 2)])
    p = _check(plan_conversion(src, dst, "gfx950", 32))
    assert p.lower_bound["cross_lane_dwords"] == 16 and not p.lower_bound["cross_warp"]
    assert p.counts()["permlane32_swap"] == 16  # meets the bound: one dword per lane per swap
    p16 = _check(plan_conversion(src, dst, "gfx950", 16))
    assert p16.lower_bound["cross_lane_dwords"] == 8 and p16.counts()["permlane32_swap"] == 8


def test_certificate_round_trip_and_asm():
    src = L([(1, 0)], LANES)
    dst = L([(0, 4)], LANES[:4] + [(1, 0), (0, 5)])
    p = plan_conversion(src, dst, "gfx942", 16)
    cert = json.loads(p.dumps())
    assert cert["format"] == "linlayout-plan/v1" and cert["slots_in"] == 2 and cert["slots_out"] == 2
    q = Plan.from_certificate(cert)
    assert verify(q).ok and q.counts() == p.counts()
    assert "ds_swizzle_b32" in p.pseudo_asm() or "v_perm_b32" in p.pseudo_asm()


def test_certificate_with_dst_out_dims_in_another_order_verifies():
    """A certificate may list dst's out dims in another order than src's (the same layout): the
    emulator checks the elements in src's tensor bit order; other out dims are a clear error."""
    src = L([(1, 0)], LANES)
    dst = L([(0, 4)], LANES[:4] + [(1, 0), (0, 5)])
    cert = json.loads(plan_conversion(src, dst, "gfx942", 32).dumps())
    cert["dst"] = dst.transpose_outs(["dim1", "dim0"]).to_json()
    assert verify(Plan.from_certificate(cert)).ok
    cert["dst"]["out_dims"][0][0] = "dim7"
    with pytest.raises(LayoutError, match="out dims"):
        verify(Plan.from_certificate(cert))


@pytest.mark.parametrize("kwargs,match", [
    ({"arch": "gfx1100"}, "wave size is 32"), ({"element_bits": 12}, "element_bits"), ({"arch": "sm75"}, "arch"),
    ({"strategy": "magic"}, "strategy"), ({"lds_budget_bytes": 0}, "lds_budget_bytes"),
])
def test_bad_arguments_raise_layout_error(kwargs, match):
    args = {"arch": "gfx942", "element_bits": 32}
    args.update({k: v for k, v in kwargs.items() if k in args})
    extra = {k: v for k, v in kwargs.items() if k not in args}
    src = L([(1, 0)], LANES)
    with pytest.raises(LayoutError, match=match):
        plan_conversion(src, src, args["arch"], args["element_bits"], **extra)


def test_layouts_of_different_tensors_are_rejected():
    with pytest.raises(LayoutError):
        plan_conversion(L([(1, 0)], LANES), L([(1, 1)], LANES), "gfx942", 32)
    wave32 = LinearLayout({"register": [[1, 0]], "lane": [[2, 0], [4, 0], [8, 0], [16, 0], [32, 0]]},
                          [("dim0", 64), ("dim1", 1)])
    with pytest.raises(LayoutError, match="lane size"):
        plan_conversion(wave32, wave32, "gfx942", 32)


def _cli(capsys, *args):
    from linlayout.cli import main

    code = main(["convert", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_json_plan_file_and_errors(tmp_path, capsys):
    src = json.dumps(L([(1, 0)], LANES).to_json())
    dst = json.dumps(L([(0, 4)], LANES[:4] + [(1, 0), (0, 5)]).to_json())
    out = tmp_path / "plan.json"
    code, stdout, err = _cli(capsys, "--src", src, "--dst", dst, "--arch", "gfx950", "--dtype", "fp32", "--json",
                             "--plan", str(out))
    assert code == 0, err
    d = json.loads(stdout)
    assert d["strategy"] == "lanes" and d["verified"] is True
    assert d["plan_counts"]["permlane16_swap"] == 1 and d["plan_counts"]["total"] == 1
    ok, msg = check_certificate(json.loads(out.read_text()))
    assert ok, msg
    code, stdout, _ = _cli(capsys, "--src", src, "--dst", dst, "--arch", "gfx950", "--dtype", "fp32")
    assert code == 0 and "v_permlane16_swap_b32" in stdout
    code, stdout, err = _cli(capsys, "--src", src, "--dst", dst, "--arch", "gfx950", "--dtype", "fp7", "--json")
    assert code == 2 and stdout == "" and "dtype" in err
    code, stdout, err = _cli(capsys, "--src", "{", "--dst", dst, "--arch", "gfx950", "--dtype", "fp32", "--json")
    assert code == 2 and stdout == ""


def test_fused_dpp_select_when_the_compiler_fuses(monkeypatch):
    import linlayout.synth.ir
    from linlayout.synth.plan import FusedDpp

    monkeypatch.setattr(linlayout.synth.ir, "FUSE_DPP_SELECT", True)
    src = L([(1, 0), (1, 1)], LANES)
    dst = L([(0, 2), (1, 1)], LANES[:2] + [(1, 0)] + LANES[3:])
    p = _check(plan_conversion(src, dst, "gfx942", 32))
    forms = sorted(st.form for st in p.steps if isinstance(st, FusedDpp))
    assert forms == ["v_cndmask_b32_dpp"] * 2 + ["v_mov_b32_dpp"] * 2
    assert p.counts()["dpp"] == 4 and p.counts()["total"] == 4
    cert = json.loads(p.dumps())
    assert sum(1 for s in cert["steps"] if s.get("fused") == "v_cndmask_b32_dpp") == 2
    assert verify(Plan.from_certificate(cert)).ok


def test_dst_out_dims_in_another_order_plan_the_same_conversion():
    src = L([(1, 0)], LANES)
    dst = L([(0, 0)], [(1, 0)] + LANES[1:])
    swapped = dst.transpose_outs(["dim1", "dim0"])
    p, q = _check(plan_conversion(src, dst, "gfx942", 32)), _check(plan_conversion(src, swapped, "gfx942", 32))
    assert p.counts() == q.counts() and q.dst == dst
    r = _check(plan_conversion(src.transpose_outs(["dim1", "dim0"]), dst, "gfx942", 32))
    assert r.counts() == p.counts()


def test_cached_and_cold_planning_agree():
    src = L([(1, 0), (1, 1)], LANES, warp=[(0, 6)])
    dst = L([(1, 0), (0, 6)], LANES, warp=[(1, 1)])
    warm = plan_conversion(src, dst, "gfx950", 16)
    caches.clear()
    cold = plan_conversion(src, dst, "gfx950", 16)
    assert cold.dumps() == warm.dumps() and cold.verified


def test_candidate_plans_refuses_a_prune_that_is_not_a_bool():
    from linlayout.synth.convert import candidate_plans
    src = L([[0, 1]], [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [32, 0]])
    with pytest.raises(LayoutError, match="prune must be True or False, got 'no'"):
        candidate_plans(src, src, "gfx942", 32, prune="no")
    assert candidate_plans(src, src, "gfx942", 32, prune=False)[0].strategy == "noop"
