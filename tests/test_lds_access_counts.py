"""The LDS round trip's per-side counts (linlayout.synth.lds_path: the accesses of a choice of vector
bits, their v_perm repacks and tuple copies), computed from the GF(2) structure of the accesses,
against an enumeration of every access's registers as an array (the definitions in the docstrings)."""

from collections import Counter
from unittest import mock

import numpy as np
from hypothesis import given, settings, strategies as st

from linlayout import LayoutError, f2
from linlayout.synth import lds_path
from linlayout.synth.context import ConversionContext
from linlayout.synth.emulator import element_ids
from linlayout.synth.span import span_table, span_values
from linlayout.synth.vgpr_tuples import VgprTuples

from random_layouts import layout_pairs


_IDENTITY = [1 << i for i in range(16)]  # a shared layout whose (offset, rep) bit i holds tensor bit i


def _side(reg_cols: list[int], n_off: int, lanes: list[int] = (), warps: list[int] = ()) -> lds_path._Side:
    """The side whose register, lane and warp bits are at ``reg_cols``, ``lanes``, ``warps`` of the identity
    shared layout (C = the layout's own columns)."""
    unique, registers = lds_path._registers(tuple(reg_cols))
    return lds_path._Side(span_table(list(warps))[:, None] ^ span_table(list(lanes))[None, :], span_table(reg_cols),
                          n_off, unique, reg_cols, list(lanes) + list(warps), registers, _IDENTITY)


def _group_array(side: lds_path._Side, deltas: list[int]) -> np.ndarray:
    """``[accesses, 2**t]``: every unique register's access base XOR every combination of the deltas,
    the accesses in the order of their first unique register."""
    span = span_table(deltas)
    unique = np.asarray(side.unique, dtype=np.int64)
    bases = list(dict.fromkeys((unique ^ span[side.reg_image[unique] & (len(span) - 1)]).tolist()))
    return np.array(bases, dtype=np.int64)[:, None] ^ span[None, :]


def _perms(g: np.ndarray, p: int, element_bytes: int, high_half: bool) -> int:
    """VGPRs not holding registers ``p*j .. p*j+p-1`` in order; sub-dword accesses: one for each not
    holding consecutive registers from byte 0 or 2 of a VGPR, aligned to its size -- but, with
    ``high_half`` stores, one for every two such 2-byte accesses whose registers lie in the same VGPRs
    (a repack fills both halves)."""
    if p == 1 or not len(g):
        return 0
    n = g.shape[1]
    if n * element_bytes >= 4:
        vgpr = g.reshape(len(g), -1, p)
        return int(((vgpr != vgpr[..., :1] + np.arange(p)).any(axis=-1) | (vgpr[..., 0] % p != 0)).sum())
    pos = (g[:, 0] % p) * element_bytes
    bad = ((g != g[:, :1] + np.arange(n)).any(axis=1) | ((pos % 4 != 0) & (pos % 4 != 2))
           | (pos % (n * element_bytes) != 0))
    if n * element_bytes != 2 or not high_half:
        return int(bad.sum())
    per_vgprs = Counter(frozenset((row // p).tolist()) for row in g[bad])
    return sum(-(-k // 2) for k in per_vgprs.values())


def _copies(g: np.ndarray, p: int, element_bytes: int, tuple_dwords: int) -> int:
    """Chunks of ``min(dwords, tuple_dwords)`` dwords: none when whole VGPRs in order from an aligned
    one, else one per whole in-order VGPR (8-byte elements: two per element of a chunk not in place)."""
    n_acc, m = g.shape
    if m * element_bytes < 8:
        return 0
    if element_bytes >= 8:
        per = max(1, min(m, tuple_dwords // 2))
        chunks = g.reshape(n_acc, m // per, per)
        in_place = (chunks == chunks[..., :1] + np.arange(per)).all(axis=-1) & (chunks[..., 0] % per == 0)
        return int((~in_place).sum()) * 2 * per
    chunks = g.reshape(n_acc, m // p, p)
    first = chunks[..., 0]
    whole = (chunks == first[..., None] + np.arange(p)).all(axis=-1) & (first % p == 0)
    dwords = (first // p).reshape(n_acc, -1)
    c = min(m // p, tuple_dwords)
    dwords, whole = dwords.reshape(n_acc, -1, c), whole.reshape(n_acc, -1, c)
    in_place = whole.all(axis=-1) & (dwords == dwords[..., :1] + np.arange(c)).all(axis=-1) & (dwords[..., 0] % c == 0)
    return int(np.where(in_place, 0, whole.sum(axis=-1)).sum())


@st.composite
def _sides(draw):
    n_off = draw(st.integers(2, 7))
    n_bits = n_off + draw(st.integers(0, 2))  # offset bits, then rep bits
    n_regs = draw(st.integers(0, 7))
    # registers often hold the low offset bits in order (vectors), sometimes duplicates or zeros
    cols = []
    for i in range(n_regs):
        if draw(st.booleans()) and i < n_off:
            cols.append(1 << i)
        else:
            cols.append(draw(st.integers(0, (1 << n_bits) - 1)))
    return _side(draw(st.permutations(cols)) if draw(st.booleans()) else cols, n_off)


@settings(max_examples=400, deadline=None)
@given(_sides(), st.sampled_from([1, 2, 4, 8]), st.sampled_from([1, 2, 4]))
def test_side_counts_match_the_enumerated_accesses(side, element_bytes, tuple_dwords):
    p = max(1, 4 // element_bytes)
    t_cap = (16 // element_bytes).bit_length() - 1
    for deltas in lds_path._vector_bits(side, t_cap):
        g = _group_array(side, deltas)
        assert lds_path._groups(side, deltas) == g.tolist()
        bases, span = lds_path._bases(side, deltas), span_values(deltas)
        assert span == span_table(deltas).tolist()
        assert lds_path._perms_side(bases, span, p, element_bytes) == _perms(g, p, element_bytes, False)
        if p > 1 and (element_bytes << len(deltas)) < 4:
            # narrow stores with a store from the upper half share repacks (_narrow_repacks)
            assert len(lds_path._narrow_repacks(g.tolist(), p, element_bytes, True)) == _perms(g, p, element_bytes, True)
        # the accesses' own counts, less the dwords an access keeps where they arrive (cost.store_tuple_copies)
        per_access = _copies(g, p, element_bytes, tuple_dwords)
        for alignment in (1, 2):
            tuples = VgprTuples.contiguous(tuple_dwords)
            copies = lds_path._store_copies(g.tolist(), 8 * element_bytes, tuples, alignment)
            assert copies == per_access if tuple_dwords == 1 else 0 <= copies <= per_access


def test_side_counts_on_a_known_side():
    # registers 0, 1 at offsets 1, 2 (in order), register 2 at offset 8, register 3 at offset 4:
    # 2-byte elements, p = 2
    side = _side([1, 2, 8, 4], 4)
    deltas = lds_path._vector_bits(side, 3)[-1]
    assert deltas == [1, 2, 8]
    assert lds_path._groups(side, deltas) == [[0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15]]
    bases, span = lds_path._bases(side, deltas), span_values(deltas)
    assert lds_path._perms_side(bases, span, 2, 2) == 0
    # 4 dwords per access, tuples of 2: dwords (0, 1) and (4, 5) in place, (2, 3) and (6, 7) in place
    groups = lds_path._groups(side, deltas)
    # tuples of 4: dwords 0, 1, 4, 5 are not consecutive: 4 copies; then 2, 3, 6, 7 keeps 2, 3 where they arrive
    # (positions 2, 3 of the tuple 0..3, the VGPRs past it free): 2 copies
    for alignment in (1, 2):
        assert lds_path._store_copies(groups, 16, VgprTuples.contiguous(2), alignment) == 0
        assert lds_path._store_copies(groups, 16, VgprTuples.contiguous(4), alignment) == 6
        # tuples of dword bits 0 and 2 (dwords 0, 1, 4, 5 and 2, 3, 6, 7): in place, no copy
        assert lds_path._store_copies(groups, 16, VgprTuples((0, 2)), alignment) == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 63), max_size=7))
def test_first_registers_are_the_least_of_each_image(reg_cols):
    images = span_table(reg_cols).tolist()
    least = {}
    for r, c in enumerate(images):
        least.setdefault(c, r)
    assert lds_path._registers(tuple(reg_cols))[0] == sorted(least.values())


@settings(max_examples=150, deadline=None)
@given(st.data(), st.sampled_from(["swizzle", "dst", "src"]))
def test_side_registers_and_vector_bits_of_a_design_match_their_definitions(data, which):
    # _registers solves on the layout's own register columns, shared by every design: the same least
    # registers (the pivots of C = inv o layout) and the same vector bits as solving C x = offset bit i
    src, dst, element_bits, arch = data.draw(layout_pairs())
    try:
        ctx = ConversionContext.create(src, dst, arch, element_bits)
        design = (lds_path.shared_layout(ctx) if which == "swizzle" else lds_path.vector_first_design(ctx, which))
    except LayoutError:
        return
    inv_cols = f2.inverse(design.shared_cols)
    for cols in (ctx.problem.src_cols, ctx.problem.dst_cols):
        side = lds_path._side(cols, design, inv_cols)
        assert side.unique == span_values([1 << j for j in f2.pivot_columns(side.reg_cols)])
        for t_max in range(6):
            options, solutions = [[]], f2.solve_many(side.reg_cols, [1 << i for i in range(t_max)])
            for t in range(1, t_max + 1):
                if any(c & ((1 << t) - 1) for c in side.other_cols) or any(x is None for x in solutions[:t]):
                    break
                options.append(solutions[:t])
            assert lds_path._vector_bits(side, t_max) == options


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_registers_of_equal_images_hold_equal_elements(data):
    # build_lds gives a dst register that no load writes the value of the register of D.unique with its
    # image: that is the register holding the same element in every lane and warp (element_ids)
    src, dst, element_bits, arch = data.draw(layout_pairs())
    try:
        ctx = ConversionContext.create(src, dst, arch, element_bits)
        design = lds_path.shared_layout(ctx)
    except LayoutError:
        return
    prob = ctx.problem
    D = lds_path._side(prob.dst_cols, design, f2.inverse(design.shared_cols))
    ids = element_ids(prob.dst, prob.num_warps)
    images = D.reg_images
    assert len(images) == ids.shape[2]
    assert sorted({images[u] for u in D.unique}) == sorted(set(images)) and len(set(D.unique)) == len(set(images))
    for r in range(len(images)):
        for u in D.unique:
            assert (images[u] == images[r]) == bool((ids[:, :, u] == ids[:, :, r]).all())


@settings(max_examples=200, deadline=None)
@given(st.data(), st.sampled_from([1, 2, 4, 8]))
def test_side_addresses_are_the_offsets_of_every_warp_lane_and_register(data, element_bytes):
    # _Side.address (the (warp, lane) part XOR the register's, made per register) against the definition:
    # ((warp_lane ^ C(r)) & offset mask) * element bytes, read-only, one array per register
    n_off = data.draw(st.integers(2, 8))
    col = st.integers(0, (1 << (n_off + 2)) - 1)
    reg_cols = data.draw(st.lists(col, min_size=1, max_size=5))
    side = _side(reg_cols, n_off, data.draw(st.lists(col, min_size=6, max_size=6)), data.draw(st.lists(col, max_size=3)))
    for r in range(1 << len(reg_cols)):
        want = ((side.warp_lane ^ int(side.reg_image[r])) & ((1 << n_off) - 1)) * element_bytes
        got = side.address(r, element_bytes)
        assert got.dtype == np.int64 and not got.flags.writeable and (got == want).all()
        assert side.address(r, element_bytes) is got


@settings(max_examples=300, deadline=None)
@given(st.data(), st.sampled_from([1, 2, 4, 8]), st.booleans())
def test_pair_keys_group_the_accesses_whose_addresses_differ_by_a_constant(data, element_bytes, dword_starts):
    # lds_path._pair_keys against every access's [W, lanes] byte address table (dword_starts: the dword
    # holding it, as over-fetch loads give it): equal patterns exactly when two accesses' addresses differ by
    # one constant in every lane and warp, and the base is the address of warp 0, lane 0
    n_off = data.draw(st.integers(2, 8))
    n_bits = n_off + data.draw(st.integers(0, 2))
    col = st.integers(0, (1 << n_bits) - 1)
    reg_cols = data.draw(st.lists(col, min_size=1, max_size=5))
    lanes, warps = data.draw(st.lists(col, min_size=6, max_size=6)), data.draw(st.lists(col, max_size=2))
    side = _side(reg_cols, n_off, lanes, warps)
    regs = list(range(len(side.reg_images)))
    addrs = np.stack([side.address(r, element_bytes) for r in regs]).reshape(len(regs), -1)
    if dword_starts:
        addrs = addrs & ~3
    patterns, bases = lds_path._pair_keys(side, regs, element_bytes, dword_starts)
    assert bases == addrs[:, 0].tolist()
    for i in regs:
        for j in regs:
            assert (patterns[i] == patterns[j]) == bool(((addrs[i] - addrs[j]) == bases[i] - bases[j]).all())


@settings(max_examples=300, deadline=None)
@given(st.data(), st.sampled_from([8, 16]))
def test_over_fetch_sub_dword_slots_from_the_prefix_are_the_designs(data, element_bits):
    # _over_fetch_prefix checks the dst lane and warp columns below the dword from the prefix alone (their
    # coordinates along it): exactly the columns of the design's dst side that _over_fetch_groups checks
    src, dst, _, arch = data.draw(layout_pairs())
    try:
        ctx = ConversionContext.create(src, dst, arch, element_bits)
    except LayoutError:
        return
    seen = []
    with mock.patch.object(lds_path, "_check_sub_dword_slots", lambda lanes, warps: seen.append((lanes, warps))):
        try:
            design = lds_path.over_fetch_design(ctx)
        except LayoutError:
            return
    low = (4 // ctx.element_bytes) - 1
    D = lds_path._side(ctx.problem.dst_cols, design, f2.inverse(design.shared_cols))
    assert seen == [([c & low for c in D.other_cols[:D.lane_bits]], [c & low for c in D.other_cols[D.lane_bits:]])]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 255), min_size=1, max_size=5), st.lists(st.integers(0, 255), min_size=6, max_size=6),
       st.sampled_from([1, 2]))
def test_over_fetch_slot_is_each_lanes_slot_of_its_dword(reg_cols, lanes, element_bytes):
    # _over_fetch_slot (kept per value of a register's low bits) against its definition: warp 0's lanes'
    # element offsets modulo the slots of a dword, an int exactly when every lane has the same
    side, p = _side(reg_cols, 8, lanes), 4 // element_bytes
    for r in range(1 << len(reg_cols)):
        want = ((side.warp_lane[0] ^ int(side.reg_image[r])) & (p - 1)).tolist()
        got = lds_path._over_fetch_slot(side, r, element_bytes)
        if len(set(want)) == 1:
            assert type(got) is int and got == want[0]
        else:
            assert isinstance(got, np.ndarray) and got.tolist() == want


def test_narrow_store_repacks_share_a_vgpr_pair_for_two_half_stores():
    # 8-bit elements, 2-byte stores: the byte pairs (0, 4), (1, 5), (2, 6), (3, 7) all lie in VGPRs 0 and 1,
    # so two repacks serve them (each filling both halves: ds_write_b16 and _d16_hi); (8, 9) is in place;
    # (10, 12) is alone in its VGPRs (2, 3)
    pairs = [[0, 4], [1, 5], [2, 6], [3, 7], [8, 9], [10, 12]]
    assert lds_path._narrow_repacks(pairs, 4, 1, True) == [[0, 1], [2, 3], [5]]
    # without a store from the high half (PTX: a shift before st.shared.b16) nothing is shared
    assert lds_path._narrow_repacks(pairs, 4, 1, False) == [[0], [1], [2], [3], [5]]
    # single bytes at bytes 1 and 3 are repacked one by one (ds_write_b8_d16_hi of a shared repack is
    # taken apart again by the compiler)
    assert lds_path._narrow_repacks([[1], [3], [5]], 4, 1, True) == [[0], [1], [2]]
    # 16-bit elements always sit at byte 0 or 2: none
    assert lds_path._narrow_repacks([[1], [2], [3]], 2, 2, True) == []


def test_vector_choice_counts_narrow_repacks_as_the_round_trip_builds_them():
    # 8-bit elements, register 2 one byte after register 0 (register bits at offsets 4 and 1): 2-byte accesses
    # [0, 2] and [1, 3], both out of place in VGPR 0.  Loads write new registers: two repacks, none shared
    side = _side([4, 1], 3)
    assert lds_path._choose_vectors(side, 4, 4, 1, False, VgprTuples.contiguous(4), None, 2) == [lds_path._Vectors([2], 2, 0)]
    # stores share one repack (ds_write_b16 + _d16_hi) within a round, none across rounds (build_lds)
    stores = [v for v in lds_path._choose_vectors(side, 4, 4, 1, True, VgprTuples.contiguous(4),
                                                  lambda groups: [0] * len(groups), 2)
              if v.deltas == [2]]
    assert stores == [lds_path._Vectors([2], 1, 0)]
    apart = [v for v in lds_path._choose_vectors(side, 4, 4, 1, True, VgprTuples.contiguous(4),
                                                 lambda groups: list(range(len(groups))), 2)
             if v.deltas == [2]]
    assert apart == [lds_path._Vectors([2], 2, 0)]
