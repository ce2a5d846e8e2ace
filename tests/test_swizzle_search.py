"""The shared-layout search's helpers (linlayout.synth.swizzle) against their definitions."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from linlayout import f2
from linlayout.hw.lds import lds_model
from linlayout.synth import swizzle

SETTINGS = settings(max_examples=80, deadline=None)


@SETTINGS
@given(st.integers(2, 8).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.integers(1, (1 << n) - 1), min_size=1, max_size=4),
    st.lists(st.integers(0, (1 << n) - 1), max_size=10), st.lists(st.integers(1, (1 << n) - 1), max_size=3))),
    st.integers(0, 4))
def test_aligned_space_of_a_spanning_side_is_the_pivots_of_the_other_columns_and_the_prefix(case, k):
    """Without a completion, ``H_s`` is the image basis of the other columns then the prefix above the
    vector, when it has ``n - k`` vectors (else None); the pivots of the other columns are kept on the
    mode and give the same answer again, for another prefix too."""
    n, vector, others, tail = case
    k = min(k, len(vector))
    mode = swizzle._Mode(lds_model("gfx942").op("ds_read_b32"), k, vector[:k], [], others, 1)
    for prefix in (vector[:k] + tail, vector[:k] + tail[:1], vector[:k] + tail):
        rest = f2.image_basis(others + prefix[k:])
        expect = tuple(rest) if len(rest) == n - k else None
        assert swizzle._aligned_space(mode, prefix, n, None) == expect
    assert mode.others_pivots[1] == tuple(f2.image_basis(others))


def test_transpose_reads_and_isas_of_the_models():
    def reads(arch, bits):
        return [(op.name, load.name, load.vector_bits) for op, load in swizzle._transpose_reads(lds_model(arch), bits)]

    assert reads("gfx950", 16) == [("ds_read_b64_tr_b16",) * 2 + (2,)]
    assert reads("gfx950", 8) == [("ds_read_b64_tr_b8",) * 2 + (3,)]
    assert reads("gfx1250", 16) == [("ds_load_tr16_b128",) * 2 + (3,)]
    assert reads("gfx1250", 8) == [("ds_load_tr8_b64",) * 2 + (3,)]
    assert reads("gfx950", 32) == reads("gfx942", 16) == reads("gfx1200", 16) == []
    for arch, isas in (("gfx942", {"amdgcn"}), ("gfx950", {"amdgcn"}), ("sm_90", {"ptx"})):
        model = lds_model(arch)
        assert model.isas == frozenset(isas) == frozenset(op.shape.isa for op in model.ops.values())


def test_plain_widths_hold_the_ops_of_their_bytes():
    model = lds_model("gfx942")
    side = swizzle._side("read", swizzle._normalize(
        swizzle.LinearLayout({"register": [[1], [2], [4]], "lane": [[8 << i] for i in range(6)]}, [("dim0", 512)]),
        [("dim0", 512)], "reader", 64))
    widths = swizzle._plain_widths(side, model, 16)
    assert [(x.k, x.op.name, x.instructions) for x in widths] == [
        (0, "ds_read_u16", 8), (1, "ds_read_b32", 4), (2, "ds_read_b64", 2), (3, "ds_read_b128", 1)]
    assert side.reg_index == {1: 0, 2: 1, 4: 2}


def test_combos_are_the_first_subsets_in_combinations_order():
    items = list(range(1, 13))
    assert swizzle._combos(items, 2) == [(a, b) for a in items for b in items if a < b][:swizzle._MAX_COMBOS]
    assert len(swizzle._combos(items, 3)) == swizzle._MAX_COMBOS < 220
    assert swizzle._combos(items[:3], 3) == [(1, 2, 3)]
    assert swizzle._combos(items[:2], 3) == []
    assert swizzle._combos(items[:2], 0) == [()]


def test_widths_upto_are_those_of_at_most_each_vector_bits():
    model = lds_model("gfx950")
    side = swizzle._side("write", swizzle._normalize(
        swizzle.LinearLayout({"register": [[1], [2], [4], [8]], "lane": [[16 << i] for i in range(6)]}, [("dim0", 1024)]),
        [("dim0", 1024)], "writer", 64))
    for element_bits in (8, 16, 32):
        widths = swizzle._plain_widths(side, model, element_bits)
        maxbits = (128 // element_bits).bit_length() - 1
        upto = swizzle._widths_upto(widths, maxbits)
        assert upto == [[x for x in widths if x.k <= kmax] for kmax in range(maxbits + 1)]
        assert upto[-1] == widths and len(upto) == maxbits + 1


def _random_side(rng: random.Random, direction: str, n_regs: int, n: int = 11) -> swizzle._Side:
    """A side whose register, lane (64) and warp bits are an invertible map of ``n`` bits: the unit
    vectors shuffled, a few XORed into others."""
    units = [1 << i for i in range(n)]
    rng.shuffle(units)
    for _ in range(rng.randint(0, 3)):
        i, j = rng.sample(range(n), 2)
        units[i] ^= units[j]
    cols = [[v] for v in units]
    layout = swizzle.LinearLayout({"register": cols[:n_regs], "lane": cols[n_regs:n_regs + 6],
                                   "warp": cols[n_regs + 6:]}, [("dim0", 1 << n)])
    return swizzle._side(direction, swizzle._normalize(layout, [("dim0", 1 << n)], direction, 64))


@SETTINGS
@given(st.integers(0, 2**32), st.sampled_from([4, 8, 16, 32]), st.integers(1, 4), st.booleans())
def test_prefixes_with_a_lead_are_those_of_the_full_list_that_start_with_it(seed, element_bits, k, from_lanes):
    """``lead`` keeps the full list's prefixes that start with it, in its order (the reader's first lanes, as
    for a transpose read, or the writer's first registers, which plain seeds start with)."""
    rng = random.Random(seed)
    w, r = _random_side(rng, "write", rng.randint(2, 5)), _random_side(rng, "read", rng.randint(2, 5))
    lead = (r.lanes if from_lanes else w.regs)[:k]
    model = lds_model("gfx950")
    full = swizzle._prefixes(w, r, model, element_bits, True)
    assert swizzle._prefixes(w, r, model, element_bits, True, lead=lead) == [
        x for x in full if x[0][:len(lead)] == lead]


@SETTINGS
@given(st.integers(0, 2**32), st.sampled_from([4, 8, 16, 32]), st.sampled_from(["gfx90a", "gfx942", "gfx950"]),
       st.booleans(), st.booleans())
def test_pruned_search_tries_what_the_full_search_tries(seed, element_bits, arch, allow_transpose, transpose_only):
    """The pruned search (choices checked when they may come next, the prefixes of fixed lengths listed
    when their floor comes up) finds the full search's choice, basis and certificate, or its error."""
    rng = random.Random(seed)
    w, r = _random_side(rng, "write", rng.randint(1, 5)), _random_side(rng, "read", rng.randint(1, 5))
    model = lds_model(arch)
    outcomes = []
    for prune in (False, True):
        try:
            cand, basis, looked_at, certified = swizzle._search(
                w, r, model, element_bits, allow_transpose or transpose_only, "vector", 0, transpose_only, prune)
        except swizzle.LayoutError as e:
            outcomes.append(str(e))
            continue
        outcomes.append((cand.prefix, cand.write.op.name, cand.write.k, cand.read.op.name, cand.read.k, basis,
                         certified, looked_at))
    if isinstance(outcomes[0], str):
        assert outcomes[1] == outcomes[0]
        return
    (*full, n_all), (*pruned, n_pruned) = outcomes
    assert pruned == full and 0 < n_pruned <= n_all


@SETTINGS
@given(st.integers(0, 2**32), st.sampled_from([4, 8, 16, 32, 64]), st.integers(0, 5), st.integers(0, 5))
def test_prefixes_of_fixed_lengths_have_new_lengths(seed, element_bits, n_w, n_r):
    """Every prefix of fixed lengths in the full list has lengths ``_new_fixed_lengths`` allows, and
    those of the most common vectors that fit, on both sides, are not allowed."""
    rng = random.Random(seed)
    w, r = _random_side(rng, "write", n_w), _random_side(rng, "read", n_r)
    new = swizzle._new_fixed_lengths(w, r, element_bits)
    lengths = [x[2] for x in swizzle._prefixes(w, r, lds_model("gfx950"), element_bits, True) if x[2] is not None]
    assert all(map(new, lengths))
    most = min(len(set(w.regs) & set(r.regs)), (128 // element_bits).bit_length() - 1)
    assert not new((most, most))
