"""LDS round trips: gfx950 transpose loads in plans, and the VGPR tuples of wide LDS stores and loads."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from linlayout import LayoutError, LinearLayout
from linlayout.synth.convert import plan_conversion
from linlayout.synth.cost import estimate_overhead, load_tuple_copies, tuple_copies
from linlayout.synth.emulator import PlanVerificationError, run_certificate, run_isa, verify
from linlayout.synth.in_wave import gather_dword
from linlayout.synth.ir import Program
from linlayout.synth.plan import LdsLoad, LdsStore, Mov, PermSelect, Plan

import needs
from convert_checker import check_certificate
from repo_data import baseline_cases

LANES = np.arange(64)
# flash-attention P, one 32x64 tile per warp: the non-transposed 32x32 accumulator -> dot operand A (kwidth 8)
ACC = LinearLayout({"register": [[1, 0], [2, 0], [8, 0], [16, 0], [0, 32]],
                    "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]], "warp": []},
                   [("dim0", 32), ("dim1", 64)])
DOT_A = LinearLayout({"register": [[0, 1], [0, 2], [0, 4], [0, 16], [0, 32]],
                      "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 8]], "warp": []},
                     [("dim0", 32), ("dim1", 64)])


def _tr_plan(arch: str) -> Plan:
    """One warp of 16-bit elements: element id ``r + 4 * lane`` in slot ``r`` (4 slots); every lane
    stores its 4 elements at ``8 * lane`` and reads them back with ``ds_read_b64_tr_b16``."""
    src = LinearLayout({"register": [[1], [2]], "lane": [[4 << j] for j in range(6)], "warp": []},
                       [("dim0", 256)])
    steps = [LdsStore(addr=LANES * 8, width_bytes=8, src=[0, 1, 2, 3]),
             LdsLoad(addr=LANES * 8, width_bytes=8, dst=[4, 5, 6, 7], transpose=16)]
    return Plan(arch, 64, 1, 16, src, src, 4, 8, steps, lds_bytes=512)


def test_transpose_load_follows_the_lane_model():
    regs = run_isa(_tr_plan("gfx950"))  # [dwords, W, 64, 4 bytes], tags 256 + 8 * id + byte
    ids = (regs[2:4, 0, :, ::2] - 256) // 8  # slots 4..7: dwords 2, 3, low and high halves
    got = np.stack([ids[0, :, 0], ids[0, :, 1], ids[1, :, 0], ids[1, :, 1]], axis=1)  # [lane, element j]
    i, j = LANES[:, None], np.arange(4)[None, :]
    # docs/amd_facts.md 1.6: lane i, element j <- element i % 4 of lane (i & ~15) + 4 j + (i % 16) // 4
    src_lane = (i & ~15) + 4 * j + (i % 16) // 4
    assert np.array_equal(got, (i % 4) + 4 * src_lane)


def test_transpose_load_exists_only_on_gfx950():
    with pytest.raises(PlanVerificationError, match="gfx942 has no transpose load of 16-bit elements moving 8 bytes "
                                                    "per lane; ds_read_b64_tr_b16 is gfx950's"):
        run_isa(_tr_plan("gfx942"))


def test_unknown_transpose_load_in_a_certificate_is_a_layout_error():
    cert = json.loads(_tr_plan("gfx950").dumps())
    cert["steps"][1]["isa"]["transpose"] = "ds_read_b64_tr_bX"
    with pytest.raises(LayoutError, match="unknown transpose load"):
        Plan.from_certificate(cert)
    cert = json.loads(_tr_plan("gfx950").dumps())
    del cert["steps"][4]  # the last element of the transpose load
    with pytest.raises(LayoutError, match="needs 4 lds_load items"):
        Plan.from_certificate(cert)


def test_lds_address_estimate_respects_the_read2_write2_offset_range():
    from linlayout.synth.cost import estimate_overhead

    def overhead(second_base: int) -> int:
        steps = [LdsStore(addr=LANES * 4, width_bytes=4, src=[0], pair=[1], pair_offset=1),
                 LdsStore(addr=LANES * 4 + second_base, width_bytes=4, src=[2], pair=[3], pair_offset=1)]
        src = LinearLayout({"register": [[64], [128]], "lane": [[1 << j] for j in range(6)], "warp": []},
                           [("dim0", 256)])
        plan = Plan("gfx942", 64, 1, 32, src, src, 4, 4, steps, lds_bytes=8192)
        return estimate_overhead(plan)["valu_lds_addr"]

    # the first address (lane & 63) << 2 costs a v_lshlrev_b32 in a kernel of one wave (no AND: the lane id is
    # below 64, linlayout.synth.lane_arith "One wave"); offset0 reaches (255 - offset1) * 4 = 1016 bytes
    assert overhead(1016) == 1
    assert overhead(1020) == 2 and overhead(4096) == 2  # beyond: one v_add_u32


def test_ds_depth_follows_both_halves_of_a_read2():
    """A value loaded by the second half of a ds_read2 and then shipped by ds_bpermute is three DS
    levels deep (the store, the load, the crossbar move), like a value of the first half."""
    from linlayout.synth.cost import ds_depth
    from linlayout.synth.plan import Lane

    src = LinearLayout({"register": [[64], [128]], "lane": [[1 << j] for j in range(6)], "warp": []},
                       [("dim0", 256)])
    store = LdsStore(addr=LANES * 4, width_bytes=4, src=[0], pair=[1], pair_offset=64)
    load = LdsLoad(addr=LANES * 4, width_bytes=4, dst=[2], pair=[3], pair_offset=64)

    def depth(shipped: int) -> int:
        ship = Lane("ds_bpermute", [0], [shipped], LANES ^ 1, {"addr": 4 * (LANES ^ 1)})
        return ds_depth(Plan("gfx942", 64, 1, 32, src, src, 4, 4, [store, load, ship], lds_bytes=1024))

    assert depth(3) == depth(2) == 3  # the pair half (slot 3) counts like the first (slot 2)
    assert depth(1) == 2  # a slot no load wrote: the store -> load chain only


def test_ds_depth_follows_a_per_lane_byte_select():
    """A PermSelect (v_perm_b32 with a per-lane selector) of loaded values passes their DS level on:
    store, load, select, ds_bpermute is three levels."""
    from linlayout.synth.cost import ds_depth
    from linlayout.synth.plan import Lane

    src = LinearLayout({"register": [[64], [128]], "lane": [[1 << j] for j in range(6)], "warp": []},
                       [("dim0", 256)])
    steps = [LdsStore(addr=LANES * 4, width_bytes=4, src=[0]), LdsLoad(addr=LANES * 4, width_bytes=4, dst=[1]),
             PermSelect([2], [1], [0], (LANES & 1).astype(bool), (1, 0), 0x03020100, 0x07060504, 2),
             Lane("ds_bpermute", [3], [2], LANES ^ 1, {"addr": 4 * (LANES ^ 1)})]
    assert ds_depth(Plan("gfx942", 64, 1, 32, src, src, 4, 4, steps, lds_bytes=1024)) == 3


def test_transpose_certificate_round_trip_and_element_semantics():
    plan = _tr_plan("gfx950")
    cert = json.loads(plan.dumps())
    loads = [s for s in cert["steps"] if s["op"] == "lds_load"]
    assert len(loads) == 4 and all(s.get("fused") == "ds_read_b64_tr_b16" for s in loads[1:])
    back = Plan.from_certificate(cert)
    assert back.counts()["lds_read_tr"] == 1 and back.counts()["lds_read"] == 0
    assert np.array_equal(np.asarray(back.steps[1].addr).reshape(-1), LANES * 8)
    regs = run_isa(back)
    ids = run_certificate(cert)[0]  # [64, slots] element ids
    assert np.array_equal(ids[:, 4], (regs[2, 0, :, 0] - 256) // 8)
    assert np.array_equal(ids[:, 7], (regs[3, 0, :, 2] - 256) // 8)


def test_fa_p_conversion_on_gfx950_reads_transposed():
    p = plan_conversion(ACC, DOT_A, "gfx950", 16)
    c = p.counts()
    assert p.verified and (c["lds_write"], c["lds_read_tr"], c["total"]) == (4, 8, 12)
    assert all(st.transpose == 16 for st in p.steps if isinstance(st, LdsLoad))
    q = plan_conversion(ACC, DOT_A, "gfx942", 16)  # no transpose loads: repacking with v_perm_b32
    assert q.counts()["lds_read_tr"] == 0 and q.counts()["v_perm_b32"] > 0
    assert q.verified and verify(q).ok


def test_fa_p_conversion_on_gfx942_over_fetches_dwords():
    # src VGPRs hold 16-bit row pairs, dst VGPRs column pairs: the src stores its VGPRs as they are, and
    # each dst lane loads dwords holding its element and its lane-bit-0 neighbour's (same addresses),
    # assembling every dst VGPR with one v_perm_b32 of per-lane selector
    p = plan_conversion(ACC, DOT_A, "gfx942", 16)
    c = p.counts()
    assert p.verified and (c["lds_write"], c["lds_read"], c["v_perm_b32"], c["total"]) == (8, 8, 16, 32)
    assert any("over-fetch" in n for n in p.notes)
    loads = [st for st in p.steps if isinstance(st, LdsLoad)]
    assert len(loads) == 8 and all(st.width_bytes == 16 for st in loads)
    for st in loads:
        a = np.asarray(st.addr).reshape(-1, 64)
        assert (a % 16 == 0).all() and (a == a[:, LANES ^ 1]).all()
    assert sum(isinstance(st, PermSelect) for st in p.steps) == 16
    assert not any(isinstance(st, Mov) and st.kind == "v_perm_b32" for st in p.steps)
    assert verify(p).ok and check_certificate(json.loads(p.dumps()))[0]


def test_gather_dword_with_per_lane_slots():
    prog = Program(2, 2, 1)  # two 16-bit slots per dword
    odd = (LANES & 1).astype(bool)
    slot = odd.astype(np.int64)  # even lanes want slot 0 of each value, odd lanes slot 1
    v = gather_dword(prog, [(0, slot), (1, slot)], 2)
    (op,) = prog.ops
    assert op.outs == (v,) and op.kind == "permsel" and op.args == (1, 0)
    assert (op.params["sel0"], op.params["sel1"], op.params["cond"].tolist()) == (0x05040100, 0x07060302, odd.tolist())
    assert gather_dword(prog, [(0, np.zeros(64, dtype=np.int64)), (0, np.ones(64, dtype=np.int64))], 2) == 0
    three = LANES % 3
    with pytest.raises(LayoutError, match="two patterns"):
        gather_dword(Program(2, 4, 1), [(0, three), (1, 0), None, None], 1)


@pytest.mark.parametrize("bits, dst, why", [
    (32, DOT_A, "sub-dword"),  # whole-dword elements: nothing to over-fetch
    (16, ACC, "sub-dword"),  # both sides pack the same rows: the ordinary layouts fit
])
def test_over_fetch_design_needs_sub_dword_bits_the_dst_lacks(bits, dst, why):
    from linlayout.synth.context import ConversionContext
    from linlayout.synth.lds_path import over_fetch_design

    with pytest.raises(LayoutError, match=why):
        over_fetch_design(ConversionContext.create(ACC, dst, "gfx942", bits))


def test_rounds_never_split_a_lane_vector():
    # src lane bit 0 holds the same tensor vector as register bit 0 (a broadcast): that vector cannot be
    # a round, and with it the only common register bit, a 128-byte budget has no valid rounds
    def tile(reg, lane):
        return LinearLayout({"register": reg, "lane": lane, "warp": []}, [("dim0", 4), ("dim1", 128)])

    src = tile([[0, 32], [0, 8], [0, 2], [1, 0], [0, 4]], [[0, 32], [0, 17], [0, 16], [0, 0], [2, 0], [0, 64]])
    dst = tile([[1, 0], [0, 32], [0, 4], [0, 64]], [[0, 2], [0, 8], [0, 16], [2, 0], [0, 0], [0, 1]])
    for arch in ("gfx942", "gfx950"):
        with pytest.raises(LayoutError, match="no split into rounds"):
            plan_conversion(src, dst, arch, 16, lds_budget_bytes=128, strategy="lds")
        p = plan_conversion(src, dst, arch, 16, lds_budget_bytes=128)
        assert p.verified and p.strategy == "lanes" and p.lds_bytes == 0
        assert plan_conversion(src, dst, arch, 16, lds_budget_bytes=256, strategy="lds").verified


def test_design_floor_bounds_hold_on_the_baseline():
    # the bounds that let DesignPool skip a layout are at most the floor of each of its round trips: the
    # pool's (from the layout's prefix) and, for the register-first layouts, the bound from the whole offset
    # order taken as the prefix; the instructions bound of the prefix at most each round trip's
    # instruction floor (LdsAccesses.plan_floor)
    from linlayout.synth.context import ConversionContext
    from linlayout.synth.lds_path import (_over_fetch_prefix, _vector_first_prefix, lds_accesses, over_fetch_design,
                                          prefix_address_valu, prefix_floor, prefix_instructions, shared_layout,
                                          transpose_floor, vector_first_design)

    bits = {"fp32": 32, "fp16": 16}
    checked = tight = 0
    for c in baseline_cases():
        ctx = ConversionContext.create(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), c["arch"],
                                       bits[c["dtype"]])
        makers = [(lambda s=s: vector_first_design(ctx, s), lambda s=s: _vector_first_prefix(ctx, s))
                  for s in ("src", "dst")]
        makers += [(lambda: over_fetch_design(ctx), lambda: _over_fetch_prefix(ctx)),
                   (lambda: shared_layout(ctx, True), None)]
        for make, prefix_of in makers:
            try:
                d = make()
                accs = lds_accesses(ctx, d)
            except LayoutError:
                continue
            if d.read_transpose:
                bounds, counts, address_bounds = [transpose_floor(ctx)], [], []
            else:
                bounds = [prefix_floor(ctx, *prefix_of(), d.over_fetch),
                          prefix_floor(ctx, d.shared_cols[:d.n_offset_bits], d.shared_cols[d.n_offset_bits:],
                                       d.over_fetch)]
                prefixes = [prefix_of(), (d.shared_cols[:d.n_offset_bits], d.shared_cols[d.n_offset_bits:])]
                counts = [prefix_instructions(ctx, *p, d.over_fetch) for p in prefixes]
                address_bounds = [prefix_address_valu(ctx, *p, d.over_fetch) for p in prefixes]
            for a in accs:
                for bound in bounds:
                    assert bound <= a.floor() + 1e-9, (c["name"], c["arch"], c["dtype"], d.source)
                    checked += 1
                for count, addresses in zip(counts, address_bounds):
                    assert count <= a.plan_floor()[1], (c["name"], c["arch"], c["dtype"], d.source)
                    # reached but for the address VALU, which the bound takes at its least (the program's
                    # count of the round trip's tables is known only once its layout is made)
                    tight += count - addresses == a.plan_floor()[1] - a.address_valu
    assert checked >= 200  # 120 round trips on the 48 cases, two bounds each for most
    assert tight >= 10  # the instructions bound is reached (it is no trivial one)


def test_prefix_address_valu_bounds_every_round_trip_and_is_reached():
    # lds_path.prefix_address_valu: the VALU ops forming the LDS addresses of every round trip through a
    # register-first or over-fetch layout are at least it (the first store's base, and the first load's
    # where its address patterns differ from the stores' along the prefix); on the baseline it finds a
    # second base for some layouts
    from linlayout.synth.context import ConversionContext
    from linlayout.synth.cost import least_address_valu
    from linlayout.synth.lds_path import (_over_fetch_prefix, _vector_first_prefix, lds_accesses, over_fetch_design,
                                          prefix_address_valu, vector_first_design)

    bits = {"fp32": 32, "fp16": 16}
    checked = second = 0
    for c in baseline_cases():
        ctx = ConversionContext.create(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), c["arch"],
                                       bits[c["dtype"]])
        makers = [(lambda s=s: vector_first_design(ctx, s), lambda s=s: _vector_first_prefix(ctx, s), False)
                  for s in ("src", "dst")] + [(lambda: over_fetch_design(ctx), lambda: _over_fetch_prefix(ctx), True)]
        for make, prefix_of, over_fetch in makers:
            try:
                accs = lds_accesses(ctx, make())
            except LayoutError:
                continue
            bound = prefix_address_valu(ctx, *prefix_of(), over_fetch)
            least = least_address_valu(ctx)
            assert bound in (least, 2 * least)
            for a in accs:
                assert bound <= a.address_valu, (c["name"], c["arch"], c["dtype"])
                checked += 1
                second += bound == 2 * least
    assert checked >= 100 and second >= 40  # 108 and 58 today


_TRANSPOSE_BITS = {"fp16": 16, "bf16": 16, "fp8": 8, "i8": 8}


def _amd_corpus_cases() -> list[dict]:
    from pathlib import Path

    corpus = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "triton_amd_corpus.json"
    return json.loads(corpus.read_text())["cases"]


def _transpose_read(case: dict) -> tuple[bool, int, list[int]]:
    """For a gfx950 corpus case: whether ``lds_path._transpose_readable`` admits its dst for the target's
    transpose load, ``transpose_instructions`` and the instruction floors (``plan_floor``) of the round
    trips through the transpose search's shared layout (none where it finds no layout)."""
    from linlayout.synth.context import ConversionContext
    from linlayout.synth.lds_path import _transpose_readable, lds_accesses, shared_layout, transpose_instructions

    ctx = ConversionContext.create(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), "gfx950",
                                   _TRANSPOSE_BITS[case["dtype"]])
    readable = _transpose_readable(ctx.problem.dst_cols, ctx.target.transpose_load(ctx.element_bits))
    try:
        trips = lds_accesses(ctx, shared_layout(ctx, transpose=True))
    except LayoutError:
        trips = []
    return readable, transpose_instructions(ctx), [a.plan_floor()[1] for a in trips]


#: gfx950 corpus cases (name, dtype, shape, warps), named so (not by their place in the file, which moves
#: as the corpus grows): (readable, transpose_instructions, the round trips' instruction floors).  The
#: bound takes the first store's address at its least (cost.least_address_valu, 1 VALU) and one wait per
#: barrier (lds_path.least_waits), the floors count the round trips' address programs
#: (cost.addresses_valu); the last two rule transpose loads out.
TRANSPOSE_READ_CASES = {
    ("mfma32->mfma16", "fp16", (16, 16), 1): (True, 10, [20]),
    ("mfma32T->mfma32", "fp16", (64, 64), 1): (True, 25, [40]),
    ("mfma16->mfma16T", "i8", (16, 16), 2): (False, 0, []),  # (3 before session 24: the src is in both waves,
    # no barrier and no wait before it, lds_path._exchanges; then 1, less the first address's op, which an 8-bit
    # store at byte l does without: cost.least_address_valu)
    ("mfma32->mfma16", "fp8", (16, 16), 1): (False, 8, []),  # (9 with the first address's op)
}


@pytest.mark.parametrize("key", list(TRANSPOSE_READ_CASES), ids=lambda k: f"{k[0]}-{k[1]}")
def test_transpose_read_layout_bounds_on_named_cases(key):
    (case,) = [c for c in _amd_corpus_cases()
               if (c["arch"], c["name"], c["dtype"], tuple(c["shape"]), c["num_warps"]) == ("gfx950", *key)]
    assert _transpose_read(case) == TRANSPOSE_READ_CASES[key]


def test_transpose_read_layout_bounds_on_the_corpus():
    # lds_path._transpose_readable: where the dst's own columns rule transpose loads out, the transpose
    # search finds no layout or its layout gives no round trip (lds_accesses); and transpose_instructions
    # is at most the instruction floor (plan_floor) of every round trip there.  Over every other gfx950
    # sub-dword case of the AMD corpus (counted, not pinned): both kinds of dst occur and some round trip
    # is within 3 instructions of the bound (neither is trivial)
    seen = {True: 0, False: 0}
    gaps = []
    for c in _amd_corpus_cases()[::2]:
        if c["arch"] != "gfx950" or c["dtype"] not in _TRANSPOSE_BITS:
            continue
        readable, bound, floors = _transpose_read(c)
        assert readable or not floors, c["name"]
        seen[readable] += 1
        gaps += [floor - bound for floor in floors]
    assert min(gaps) >= 0
    assert seen[True] and seen[False] and min(gaps) <= 3


def test_designs_left_unmade_by_their_instructions_bound_change_no_plan(monkeypatch):
    # DesignPool.by_floor leaves a deferred layout unmade when its floor and instructions bounds rank
    # it beyond what is wanted: on the baseline some are, and every plan is the one planned with the
    # instructions bound taken as 0 (then no layout is left unmade for it)
    from linlayout import caches
    from linlayout.synth import lds_path

    bits = {"fp32": 32, "fp16": 16}
    made = []
    make = lds_path.DesignPool._make
    monkeypatch.setattr(lds_path.DesignPool, "_make", lambda pool, i: made.append(i) or make(pool, i))

    def plans() -> list[str]:
        out = []
        for c in baseline_cases():
            caches.clear(keep_tables=True)
            out.append(plan_conversion(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]),
                                       c["arch"], bits[c["dtype"]]).dumps())
        return out

    bounded = plans()
    n_bounded = len(made)
    made.clear()
    monkeypatch.setattr(lds_path, "prefix_instructions", lambda *args: 0)
    assert plans() == bounded
    assert len(made) > n_bounded


def test_prefix_floor_counts_forced_bank_conflicts():
    # mfma32->mfma16 gfx942 fp16: a register-first layout stores (or loads) 4-element vectors whose
    # paired b64 accesses conflict under every layout with that prefix (lds_path._conflict_floor).  The
    # latency bound is 720 (704 for the accesses, conflict-free ones alone would give 512, and 16 for
    # the s_barrier: warps exchange data), above the tie limit of the winning plan (576 * 1.15, through a layout
    # of lds_path.ordered_design, with its warp part of the addresses: cost.warp_part_ops, and 12 store tuple
    # copies: cost.store_tuple_copies), so DesignPool never makes those layouts; under concurrent (the default)
    # the bound adds the other wave's issue floor (48: 8 accesses at 4 cycles and the barrier): 768, above the
    # tie limit too (704 * 1.05, the same plan; 888 before stores kept dwords where they arrive, a register-first
    # layout with rows swizzled, when the bound was below it and those layouts were made and priced).
    from linlayout.synth.context import ConversionContext
    from linlayout.synth.cost import COST_TIE_FRACTION, CONCURRENT_TIE_FRACTION
    from linlayout.synth.lds_path import _vector_first_prefix, prefix_floor

    c = next(c for c in baseline_cases()
             if (c["name"], c["arch"], c["dtype"]) == ("mfma32->mfma16", "gfx942", "fp16"))
    src, dst = LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"])
    for objective, floor, cost, tie in (("latency", 720.0, 576.0, COST_TIE_FRACTION),
                                        ("concurrent", 768.0, 704.0, CONCURRENT_TIE_FRACTION)):
        ctx = ConversionContext.create(src, dst, "gfx942", 16, objective=objective)
        assert [prefix_floor(ctx, *_vector_first_prefix(ctx, side)) for side in ("src", "dst")] == [floor, floor]
        plan = plan_conversion(src, dst, "gfx942", 16, objective=objective)
        assert plan.cost == cost and cost * (1 + tie) < floor


@pytest.mark.parametrize("dwords, fresh, copies", [
    ([0, 1, 2, 3], set(), 0), ([4, 5, 6, 7], set(), 0), ([2, 3], set(), 0),  # aligned tuples in order
    ([2, 3, 4, 5], set(), 4), ([0, 4, 8, 12], set(), 4), ([1, 0], set(), 2),  # misaligned / scattered / reversed
    ([0, 4], {4}, 1), ([9, 4], {9, 4}, 0), ([7], set(), 0),  # computed values are placed directly
])
def test_tuple_copies(dwords, fresh, copies):
    assert tuple_copies(dwords, fresh) == copies


@pytest.mark.parametrize("dwords, fresh, tuple_dwords, copies", [
    ([0, 4, 8, 12], set(), 1, 0), ([1, 0], set(), 1, 0),  # scalar src VGPRs: any tuple is free
    ([0, 1, 4, 5], set(), 2, 0), ([2, 3, 4, 5], set(), 2, 0),  # whole arriving pairs, aligned in the access
    ([0, 1, 4, 5], set(), 4, 4), ([1, 0, 4, 5], set(), 2, 2), ([0, 1, 4, 9], {9}, 2, 1),  # a broken pair
])
def test_tuple_copies_of_narrower_tuples(dwords, fresh, tuple_dwords, copies):
    assert tuple_copies(dwords, fresh, tuple_dwords) == copies


def test_src_loaded_one_dword_at_a_time_stores_any_tuple():
    # gfx942 fp32 mfma32 -> blocked[1x4,t4x16] (the baseline's 128x64 case): the b128 stores of the
    # swizzled layout are of src registers {r, r+8, r+16, r+24}: 32 copies when they arrive as an MFMA
    # result (16 ds_write2_b32 win, through lds_path.ordered_design's layout, whose addresses take 13 VALU
    # where the swizzled one's take 16), none when each arrives by its own load (8 ds_write_b128, 8 ds_read_b128)
    c = next(c for c in baseline_cases() if (c["name"], c["arch"], c["dtype"]) == ("mfma32->blocked", "gfx942", "fp32"))
    src, dst = LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"])
    tuples = plan_conversion(src, dst, "gfx942", 32)
    loaded = plan_conversion(src, dst, "gfx942", 32, src_tuple_dwords=1)
    latency = [p.cost_detail["latency_value"] for p in (tuples, loaded)]
    assert (tuples.counts()["lds_write"], tuples.counts()["lds_read"], latency[0]) == (16, 8, 1140.0)
    assert (loaded.counts()["lds_write"], loaded.counts()["lds_read"], latency[1]) == (8, 8, 984.0)
    assert "valu_tuple_copies" not in loaded.overhead
    with pytest.raises(LayoutError, match="src_tuple_dwords"):
        plan_conversion(src, dst, "gfx942", 32, src_tuple_dwords=3)


def test_stores_avoid_tuple_copies_when_instructions_tie():
    # mfma16T -> mfma16 (fp32, 4 warps): b128 stores of src registers {0, 4, 8, 12} would need 32 copies;
    # the plan stores whole registers (ds_write2 of any two VGPRs, or b128 of an aligned run)
    src = LinearLayout({"register": [[0, 1], [0, 2], [0, 16], [0, 32], [64, 0]],
                        "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 4], [0, 8]], "warp": [[16, 0], [32, 0]]},
                       [("dim0", 128), ("dim1", 64)])
    dst = LinearLayout({"register": [[1, 0], [2, 0], [0, 16], [0, 32], [64, 0]],
                        "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [4, 0], [8, 0]], "warp": [[16, 0], [32, 0]]},
                       [("dim0", 128), ("dim1", 64)])
    p = plan_conversion(src, dst, "gfx942", 32)
    assert p.strategy == "lds" and p.overhead.get("valu_tuple_copies", 0) == 0
    assert p.counts()["total"] == 24 and p.counts()["lds_write"] + p.counts()["lds_read"] == 24


@pytest.mark.parametrize("loads, fresh, tuple_dwords, alignment, copies", [
    ([[0, 1, 2, 3]], set(), 2, 2, 0), ([[0, 1, 2, 3]], set(), 4, 2, 0), ([[0, 1], [2, 3]], set(), 4, 2, 0),  # in place
    ([[5], [4]], set(), 2, 2, 0), ([[0, 4, 8, 12]], set(), 1, 2, 0),  # single VGPRs; no tuple
    # pairs from two loads: (0, 1) copies both; (2, 3) keeps 3 at its place, its neighbour 1 spent; with
    # tuples at any VGPR (RDNA), (0, 1) keeps 1 too, its home starting just before the second load
    ([[0, 2, 4, 6], [1, 3, 5, 7]], set(), 2, 2, 6), ([[0, 2, 4, 6], [1, 3, 5, 7]], set(), 2, 1, 4),
    # quads: (0..3) copies all; (4..7) keeps 5 and 7 in the second load, whose 1 and 3 are spent
    ([[0, 4, 2, 6], [1, 5, 3, 7]], set(), 4, 2, 6),
    # halves of a quad: 2 and 3 stay as its upper half (its home from two VGPRs before the load), 0 and 1 copied
    ([[2, 3, 0, 1]], set(), 4, 2, 2), ([[0, 1, 4, 5], [2, 3, 6, 7]], set(), 4, 2, 4),
    ([[0, -1, 2, -2]], {-1, -2}, 2, 2, 0),  # temporaries: repacked into the tuple
])
def test_load_tuple_copies(loads, fresh, tuple_dwords, alignment, copies):
    assert load_tuple_copies(loads, fresh, tuple_dwords, alignment) == copies


def _amd_case(name: str, arch: str, dtype: str, corpus: str = "triton_amd_corpus.json") -> dict:
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "data" / corpus
    return next(c for c in json.loads(path.read_text())["cases"]
                if (c["name"], c["arch"], c["dtype"]) == (name, arch, dtype))


@needs.mlir
@pytest.mark.parametrize("corpus, name, arch, dtype, tuple_dwords, copies", [
    # 32 ds_read_b128, each dwordx2 store from two of them
    ("triton_amd_corpus.json", "mfma16->dotA16(kw2)", "gfx90a", "fp32", 2, 96),
    # 16 ds_read_b128, each dwordx4 store from two of them
    ("triton_amd_corpus.json", "blocked[1x1,t32x2,o01]->mfma32T", "gfx90a", "fp32", 4, 48),
    # 4 ds_read_b128 of 16-bit pairs, each dwordx4 store from halves of two of them
    ("triton_amd_baseline.json", "mfma32T->dotA(kw8)", "gfx942", "fp16", 4, 8),
    # RDNA (tuples at any VGPR): 8 ds_load_b128, each dwordx4 store from four of them, 3 copies each
    ("triton_wave32_corpus.json", "blocked[2x1,t1x32,o01]->blocked[1x4,t2x16,o10]", "gfx1100", "fp32", 4, 24),
])
def test_load_tuple_copies_are_the_compiled_ones(corpus, name, arch, dtype, tuple_dwords, copies, tmp_path,
                                                 monkeypatch):
    # the round trip planned without the dst's tuples (as before they were priced): the store side of the compiled
    # kernel holds exactly the copies priced for them (the identity kernel's store side holds none)
    from linlayout.lowering.beyond_identity import ours_beyond_identity
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.emit.conversion_kernel import source_tuples

    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    c = _amd_case(name, arch, dtype, corpus)
    src, dst = LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"])
    bits = {"fp32": 32, "fp16": 16}[dtype]
    assert source_tuples(dst, bits).bits == tuple(range(tuple_dwords.bit_length() - 1))
    plan = plan_conversion(src, dst, arch, bits, strategy="lds", src_tuple_dwords=source_tuples(src, bits))
    assert "valu_load_tuple_copies" not in plan.overhead
    priced = estimate_overhead(plan, dst_tuple_dwords=tuple_dwords)["valu_load_tuple_copies"]
    isa = lower_conversion(plan, binary=False).compiled.isa
    assert priced == copies == ours_beyond_identity(plan, isa)["outside_valu"]["store"]


@needs.mlir
def test_loads_land_in_the_dst_tuples_when_the_planner_knows_them(tmp_path, monkeypatch):
    # gfx90a fp32 mfma16->dotA16(kw2), 4 waves, the dst stored in dwordx2 tuples: the swizzled layout's
    # 8 ds_write_b128 + 32 ds_read_b128 leave each tuple's two dwords in two loads (96 copies); knowing the
    # tuples, the planner takes the dst-registers-first layout (16 ds_write2st64_b32, 32 ds_read_b128
    # that each hold two whole tuples): no copy, in the plan and in the compiled kernel
    from linlayout.lowering.beyond_identity import ours_beyond_identity
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.emit.conversion_kernel import source_tuples

    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    c = _amd_case("mfma16->dotA16(kw2)", "gfx90a", "fp32")
    src, dst = LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"])
    given = dict(src_tuple_dwords=source_tuples(src, 32))
    blind = plan_conversion(src, dst, "gfx90a", 32, **given)
    plan = plan_conversion(src, dst, "gfx90a", 32, dst_tuple_dwords=2, **given)
    assert (blind.counts()["lds_write"], blind.counts()["lds_read"]) == (8, 32)
    assert (plan.counts()["lds_write"], plan.counts()["lds_read"]) == (16, 32)
    assert "valu_load_tuple_copies" not in plan.overhead
    assert "dst registers first" in plan.notes[-1]
    isa = lower_conversion(plan, binary=False).compiled.isa
    assert ours_beyond_identity(plan, isa)["outside_valu"]["store"] == 0


def test_no_dst_tuples_by_default():
    # dst_tuple_dwords=1 is the default: the same plan; a size that is no tuple is refused
    c = _amd_case("mfma16->dotA16(kw2)", "gfx90a", "fp32")
    src, dst = LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"])
    assert (plan_conversion(src, dst, "gfx90a", 32, dst_tuple_dwords=1).dumps()
            == plan_conversion(src, dst, "gfx90a", 32).dumps())
    for bad in (3, 2.0, True):
        with pytest.raises(LayoutError, match="dst_tuple_dwords"):
            plan_conversion(src, dst, "gfx90a", 32, dst_tuple_dwords=bad)
    with pytest.raises(LayoutError, match="src_tuple_dwords"):
        plan_conversion(src, dst, "gfx90a", 32, src_tuple_dwords=4.0)
    with pytest.raises(LayoutError, match="alignment"):
        load_tuple_copies([[0, 1]], set(), 2, 0)


@needs.mlir
def test_fp8_transpose_load_plan_runs_on_the_interpreter():
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.emit.host import distinct_tile, expected_output, interpret

    p = plan_conversion(ACC, DOT_A, "gfx950", 8, strategy="lds")
    assert {k: v for k, v in p.counts().items() if v} == {"lds_write": 4, "lds_read_tr": 4, "total": 8}
    low = lower_conversion(p, binary=False)
    tile = distinct_tile(low.kernel.shape, 8, seed=3)
    assert np.array_equal(interpret(low.kernel, tile, fill=0x5A), expected_output(p, tile, fill=0x5A))
    assert low.report["isa_counts"]["lds_read_tr"] == 4 and not low.differences


def test_deferred_bounds_and_barriers_hold_on_every_round_trip():
    # on every 5th AMD corpus case, every deferred design made (DesignPool.every): its bounds
    # (lds_path._DeferredBounds) satisfy floor <= each round trip's floor and cost <= each
    # round trip's plan_floor cost, the floor bound counting the barriers every round trip has
    # (lds_path._barriers, _barrier_issue: exactly those of the round trip's floor); the floor bound
    # is reached by some round trip and the cost bound is at or above the floor bound, above it on many
    # (neither is trivial; equal where no address op is certain: 8-bit elements, cost.least_address_valu)
    from pathlib import Path

    from linlayout import caches
    from linlayout.synth import lds_path
    from linlayout.synth.context import ConversionContext

    bits = {"fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "i8": 8}
    corpus = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "triton_amd_corpus.json"
    checked = reached = barriers = above = 0
    for c in json.loads(corpus.read_text())["cases"][::5]:
        caches.clear(keep_tables=True)
        ctx = ConversionContext.create(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), c["arch"],
                                       bits[c["dtype"]])
        try:
            pool = lds_path.designs(ctx)
        except LayoutError:
            continue
        bounds = {i: d.bounds() for i, d in pool.deferred.items()}
        pool.every()
        for i, accs in pool.accesses.items():
            for a in accs:
                n = lds_path._barriers(ctx, a.design.n_rep_bits)
                assert n == ((2 << a.design.n_rep_bits) - 1 if a.barrier_scope else 0)
                accesses_issue = ctx.cost_model.ds_issue * sum(len(r) for r in a.stores + a.loads)
                assert lds_path._barrier_issue(ctx, a.design.n_rep_bits) == a._floor_parts()[0] - accesses_issue
                barriers += n > 0
                if i not in bounds:
                    continue
                b = bounds[i]
                assert b.floor <= a.floor() + 1e-9 and b.floor <= b.cost, c["name"]
                assert b.cost <= a.plan_floor()[0] + 1e-9, c["name"]
                checked += 1
                reached += abs(b.floor - a.floor()) < 1e-9
                above += b.floor < b.cost
    assert checked >= 300 and reached >= 150 and barriers >= 250 and above >= 300, (checked, reached, barriers, above)
    # (925, 600, 452, 430 at session 24's end)


def test_load_tuple_copies_follow_renamings_after_the_loads_only():
    # the recount from the plan (estimate_overhead) names each loaded slot by the dst slot its value
    # ends in: a renaming after the loads moves values out of their tuples (dst 0 and 2 swapped: the
    # two dwordx2 tuples (0, 1), (2, 3) of one ds_read_b128 no longer sit in place: 3 copies by
    # load_tuple_copies' rule), a renaming before them is overwritten by the loads and changes nothing
    import dataclasses

    from linlayout.lowering.emit.conversion_kernel import source_tuples
    from linlayout.synth.steps.mov import Mov

    c = _amd_case("mfma16->dotA16(kw2)", "gfx90a", "fp32")
    src, dst = LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"])
    plan = plan_conversion(src, dst, "gfx90a", 32, dst_tuple_dwords=2, src_tuple_dwords=source_tuples(src, 32))

    def copies(steps):
        return estimate_overhead(dataclasses.replace(plan, steps=steps), dst_tuple_dwords=2).get(
            "valu_load_tuple_copies", 0)

    assert copies(list(plan.steps)) == 0
    assert copies([Mov(dst=[0], src=[1])] + list(plan.steps)) == 0
    # a renaming before the loads of slots they load (two of the first load's): still none (3 when the
    # walk followed renamings before the loads too)
    first = next(st for st in plan.steps if st.load_tuple())
    a, b = first.load_tuple()[0], first.load_tuple()[2]
    assert copies([Mov(dst=[a, b], src=[b, a])] + list(plan.steps)) == 0
    swap = list(range(plan.slots_out))
    swap[0], swap[2] = 2, 0
    assert copies(list(plan.steps) + [Mov(dst=list(range(plan.slots_out)), src=swap)]) == 3
