"""Swizzle synthesis (linlayout.synth.swizzle): optimality certificate, oracle cycles, never worse than
Triton's choices and the fixed conventions, reps, padding options."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from banks_oracle import tile_cycles
from linlayout import LayoutError, LinearLayout, f2
from linlayout.encodings import Mfma, blocked, mfma_dot_operand
from linlayout.hw.lds import lds_model
from linlayout.synth.lds_access import tile_access_report
from linlayout.synth.swizzle import padding_options, shared_basis, shared_bytes, synthesize
from linlayout.synth.swizzle_conventions import (ck_xor16, triton_convert_shared, triton_mfma_operand_shared, unswizzled,
                                       xor_333)


def operand_case(arch, instr, k_width, op_idx, shape, row_major, bits):
    """(writer, reader, k_dim, order): a global-load style blocked writer, 16 bytes per lane."""
    version = 4 if arch == "gfx950" else 3
    reader = mfma_dot_operand(Mfma(version, instr, (2, 2)), op_idx, k_width, shape)
    vec = 128 // bits
    order = (1, 0) if row_major else (0, 1)
    c = order[0]
    per_thread = [1, 1]
    per_thread[c] = vec
    lanes = [1, 1]
    lanes[c] = min(64, shape[c] // vec)
    lanes[1 - c] = 64 // lanes[c]
    warps = [4, 1] if row_major else [1, 4]
    writer = blocked(per_thread, lanes, warps, list(order), shape)
    return writer, reader, (1 if op_idx == 0 else 0), order


CASES = [
    ("gfx942", (32, 32, 8), 4, 0, (128, 64), True, 16),
    ("gfx942", (16, 16, 16), 4, 1, (64, 128), False, 16),
    ("gfx950", (16, 16, 32), 8, 0, (128, 64), False, 16),
    ("gfx942", (32, 32, 16), 8, 0, (128, 128), False, 8),
]


def _pair_cost(shared, writer, reader, bits, arch):
    w = tile_access_report(shared, writer, bits, arch, "write")
    r = tile_access_report(shared, reader, bits, arch, "read")
    return w.choice.count + r.choice.count, w.total_cycles + r.total_cycles


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1][0]}x{c[1][1]}-op{c[3]}-{'row' if c[5] else 'col'}-{c[6]}b")
def test_synthesis_is_optimal_and_verified(case):
    arch, instr, kw, op_idx, shape, row, bits = case
    writer, reader, k_dim, order = operand_case(*case)
    res = synthesize(writer, reader, bits, arch)
    assert res.shared.in_dim_names == ["offset"] and res.shared.is_invertible()
    assert res.optimal and res.total_cycles == res.lower_bound_cycles == res.ideal_cycles
    # the oracle (literal lane groups, point-by-point addresses) agrees on every instruction
    for rep, reg in ((res.write_report, writer), (res.read_report, reader)):
        assert rep.choice.cycles == tile_cycles(res.shared, reg, bits, arch, rep.choice.op, rep.choice.register_bits)
    # never worse than Triton's choices or the fixed conventions (instructions, then cycles)
    ours = (res.write_instructions + res.read_instructions, res.total_cycles)
    for other in (triton_convert_shared(writer, reader, bits, arch),
                  triton_mfma_operand_shared(shape, order, k_dim, kw, bits, arch),
                  xor_333(shape, order, bits), ck_xor16(shape, order, bits), unswizzled(shape, order)):
        assert ours <= _pair_cost(other, writer, reader, bits, arch)
    assert "optimal for these instructions" in res.argument


def test_transpose_read_chosen_on_gfx950():
    writer, reader, _, _ = operand_case("gfx950", (16, 16, 32), 8, 0, (128, 64), False, 16)
    res = synthesize(writer, reader, 16, "gfx950")
    assert (res.write_op, res.read_op) == ("ds_write_b128", "ds_read_b64_tr_b16")
    plain = synthesize(writer, reader, 16, "gfx950", allow_transpose=False)
    assert "tr" not in plain.read_op
    assert (res.write_instructions + res.read_instructions) < (plain.write_instructions + plain.read_instructions)
    assert synthesize(writer, reader, 16, "gfx942").read_op != res.read_op  # no tr on gfx942


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_synthesis_on_nvidia_uses_shared_memory_ops(arch):
    """NVIDIA models name their plain accesses ld/st.shared.bN: synthesis finds a layout with them (it once
    looked for AMD's ds_* names only and refused every NVIDIA pair, 'alignment impossible'), optimal and
    verified by the exact analysis like on AMD."""
    writer = blocked((1, 8), (8, 4), (1, 1), (1, 0), (32, 64))
    reader = blocked((8, 1), (4, 8), (1, 1), (0, 1), (32, 64))
    res = synthesize(writer, reader, 16, arch)
    assert (res.write_op, res.read_op) == ("st.shared.b128", "ld.shared.b32")
    assert res.optimal and res.total_cycles == res.lower_bound_cycles
    same = synthesize(writer, writer, 16, arch)
    assert (same.write_op, same.read_op) == ("st.shared.b128", "ld.shared.b128") and same.optimal


def test_unavoidable_conflicts_meet_the_lower_bound():
    # assume 64 lanes per b32 phase: 64 dwords on 32 banks cannot be conflict-free (16 warps, a
    # workgroup's most, and 4 registers per lane hold the 64 x 64 tile)
    model = lds_model("gfx942", assume={"b32_phases_32banks": 64})
    writer = LinearLayout({"register": [[1, 0], [2, 0]], "lane": [[0, 1 << i] for i in range(6)],
                           "warp": [[1 << i, 0] for i in range(2, 6)]}, [("dim0", 64), ("dim1", 64)])
    reader = LinearLayout({"register": [[0, 1], [0, 2]], "lane": [[1 << i, 0] for i in range(6)],
                           "warp": [[0, 1 << i] for i in range(2, 6)]}, [("dim0", 64), ("dim1", 64)])
    res = synthesize(writer, reader, 32, model)
    assert (res.write_op, res.read_op) == ("ds_write_b128", "ds_read_b32")
    assert res.ideal_cycles == 12 and res.lower_bound_cycles == res.total_cycles == 16 and res.optimal


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32))
def test_no_layout_with_the_same_prefix_beats_the_bound(seed):
    """The lower bound is a bound: re-basing the non-prefix offset bits at random (any bank and
    row split of the same aligned space) never goes below it."""
    rng = random.Random(seed)
    writer, reader, _, _ = operand_case("gfx942", (32, 32, 8), 4, 0, (64, 64), True, 16)
    res = synthesize(writer, reader, 16, "gfx942")
    p = max(res.write_vec, res.read_vec).bit_length() - 1
    cols = res.shared.columns()
    prefix, g = cols[:p], cols[p:]
    rest = []
    while len(rest) < len(g):
        x = f2.apply_columns(g, rng.getrandbits(len(g)))
        if x and f2.rank(rest + [x]) == len(rest) + 1:
            rest.append(x)
    outs = res.shared.out_dims
    basis = [[v & 63, v >> 6] for v in prefix + rest]
    shared = LinearLayout({"offset": basis}, outs)
    w = tile_access_report(shared, writer, 16, "gfx942", "write", ops=[res.write_op])
    r = tile_access_report(shared, reader, 16, "gfx942", "read", ops=[res.read_op])
    assert w.total_cycles + r.total_cycles >= res.lower_bound_cycles


def _random_layout(rng, n_regs, shape):
    """A random invertible map register, lane (64), warp -> shape: a bit permutation plus XORs."""
    n = sum(s.bit_length() - 1 for s in shape)
    vecs = [1 << i for i in range(n)]
    rng.shuffle(vecs)
    for _ in range(rng.randint(0, 3)):
        i, j = rng.sample(range(n), 2)
        vecs[i] ^= vecs[j]
    k0 = shape[0].bit_length() - 1
    un = [[v & (shape[0] - 1), v >> k0] for v in vecs]
    return LinearLayout({"register": un[:n_regs], "lane": un[n_regs:n_regs + 6], "warp": un[n_regs + 6:]},
                        [("dim0", shape[0]), ("dim1", shape[1])])


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from([8, 16, 32, 64]), st.sampled_from(["gfx942", "gfx950"]))
@example(65537, 8, "gfx942")  # the shorter vector must not hold every common register (5 instructions, not 9)
def test_random_layouts(seed, bits, arch):
    rng = random.Random(seed)
    shape = (32, 64)
    writer, reader = _random_layout(rng, 3, shape), _random_layout(rng, 3, shape)
    res = synthesize(writer, reader, bits, arch)
    assert res.shared.is_invertible()
    assert res.total_cycles >= res.lower_bound_cycles and (res.optimal or not res.certified)
    ours = (res.write_instructions + res.read_instructions, res.total_cycles)
    for order in ((1, 0), (0, 1)):
        plain = unswizzled(shape, order)
        try:
            theirs = _pair_cost(plain, writer, reader, bits, arch)
        except LayoutError:
            continue  # the plain layout cannot serve one side at all
        assert ours <= theirs


def test_shorter_vector_leaves_out_a_common_register():
    """Writer registers (dim1=1, dim0=8, dim0=1), reader registers (dim0=1, dim1=3, dim0=8): the common
    dim0=8 cannot lie in both vectors (the reader's warp dim0=24 = 8 + 16 and the writer's lane
    dim0=16 could not both be aligned).  The search used to put every common register
    first, dim0=8 leading, leaving the shorter vector empty: 1 x ds_write_b64 + 8 x ds_read_u8.  The
    fewest are a 2-element vector of dim0=1 alone on one side and b64 on the other (4 + 1; both ways
    take 12 cycles)."""
    rng = random.Random(65537)
    writer, reader = _random_layout(rng, 3, (32, 64)), _random_layout(rng, 3, (32, 64))
    res = synthesize(writer, reader, 8, "gfx942")
    assert {(res.write_op, res.write_instructions), (res.read_op, res.read_instructions)} in (
        {("ds_write_b16", 4), ("ds_read_b64", 1)}, {("ds_write_b64", 1), ("ds_read_u16", 4)})
    assert res.total_cycles == res.lower_bound_cycles == 12 and res.certified


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from([8, 16, 32]), st.sampled_from(["gfx942", "gfx950"]),
       st.sampled_from([None, 512]))
def test_pruned_enumeration_finds_the_same_layout(seed, bits, arch, budget):
    """enumerate_all=False looks at fewer choices and returns what the full enumeration returns."""
    rng = random.Random(seed)
    shape = (32, 64)
    writer, reader = _random_layout(rng, 3, shape), _random_layout(rng, 3, shape)
    outcomes = []
    for enumerate_all in (True, False):
        try:
            res = synthesize(writer, reader, bits, arch, lds_budget_bytes=budget, enumerate_all=enumerate_all)
        except LayoutError as e:
            outcomes.append(str(e))
            continue
        out = res.to_json()
        outcomes.append((out.pop("candidates_considered"), out.pop("argument"), out))
    if isinstance(outcomes[0], str):
        assert outcomes[1] == outcomes[0]
        return
    (n_all, _, full), (n_pruned, _, pruned) = outcomes
    assert pruned == full and 0 < n_pruned <= n_all


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from([8, 16, 32]), st.sampled_from(["gfx942", "gfx950"]),
       st.sampled_from([None, 512]), st.booleans())
def test_shared_basis_is_the_synthesized_layout(seed, bits, arch, budget, transpose_only):
    """shared_basis (no exact analysis of the accesses) returns synthesize's layout, or its error."""
    rng = random.Random(seed)
    shape = (32, 64)
    writer, reader = _random_layout(rng, 3, shape), _random_layout(rng, 3, shape)
    try:
        res = synthesize(writer, reader, bits, arch, lds_budget_bytes=budget, allow_transpose=False,
                         transpose_only=transpose_only, enumerate_all=False)
    except LayoutError as e:
        with pytest.raises(LayoutError, match=re.escape(str(e))):
            shared_basis(writer, reader, bits, arch, lds_budget_bytes=budget, transpose_only=transpose_only)
        return
    cols = res.shared._aligned_columns(writer.out_dims, "shared layout")
    n_off = res.shared.in_dim_size_log2("offset")
    assert shared_basis(writer, reader, bits, arch, lds_budget_bytes=budget, transpose_only=transpose_only) == (
        cols[:n_off], cols[n_off:], res.read_op)


def test_reps_halve_the_lds_footprint():
    writer, reader, _, _ = operand_case("gfx942", (32, 32, 8), 4, 0, (128, 64), True, 16)
    full = synthesize(writer, reader, 16, "gfx942")
    half = synthesize(writer, reader, 16, "gfx942", lds_budget_bytes=full.lds_bytes // 2)
    assert full.reps == 1 and half.reps == 2
    assert half.shared.in_dim_names == ["offset", "reps"] and half.lds_bytes == full.lds_bytes // 2
    assert half.shared.is_invertible()
    # the only registers common to both sides (K1, K2, M64) all serve the full-width vector, so one
    # of them becomes the round index and one side drops to ds_*_b64: 16 instructions instead of 12
    assert (full.write_instructions, full.read_instructions) == (4, 8)
    assert half.write_instructions + half.read_instructions == 16
    assert half.optimal and half.total_cycles == half.ideal_cycles
    with pytest.raises(LayoutError, match="rounds"):
        synthesize(writer, reader, 16, "gfx942", lds_budget_bytes=64)


def test_padding_options():
    writer, reader, _, order = operand_case("gfx942", (32, 32, 8), 4, 0, (64, 64), True, 16)
    opts = padding_options(writer, reader, 16, "gfx942", intervals=[64], pads=[2, 4, 8])
    assert [(o.interval, o.pad) for o in opts if o.order == (1, 0)] and opts
    keys = [(o.write_instructions + o.read_instructions, o.total_cycles, o.lds_bytes) for o in opts]
    assert keys == sorted(keys)
    for o in opts:
        assert o.lds_bytes == shared_bytes(o.shared, 16) == o.shared.footprint * 2
        rep = tile_access_report(o.shared, reader, 16, "gfx942", "read")
        assert rep.total_cycles == o.read_cycles
    # row of 64 fp16 + 4 = 34 dwords (2 x odd): conflict-free ds_read_b64
    best = next(o for o in opts if o.order == (1, 0) and o.pad == 4)
    assert best.read_op == "ds_read_b64" and best.read_cycles == best.read_instructions * 4


def test_errors():
    writer, reader, _, _ = operand_case("gfx942", (32, 32, 8), 4, 0, (64, 64), True, 16)
    with pytest.raises(LayoutError, match="element_bits"):
        synthesize(writer, reader, 12, "gfx942")
    partial = LinearLayout({"lane": [[0, 1 << i] for i in range(6)]}, [("dim0", 64), ("dim1", 64)])
    with pytest.raises(LayoutError, match="surjective"):
        synthesize(partial, reader, 16, "gfx942")
    other = LinearLayout({"lane": [[1 << i] for i in range(6)]}, [("dim0", 64)])
    with pytest.raises(LayoutError, match="out dims"):
        synthesize(writer, other, 16, "gfx942")
    with pytest.raises(LayoutError, match="LinearLayout"):
        synthesize(writer, "x", 16, "gfx942")
    with pytest.raises(LayoutError, match="lds_budget_bytes"):
        synthesize(writer, reader, 16, "gfx942", lds_budget_bytes=0)
    with pytest.raises(LayoutError, match="objective"):
        synthesize(writer, reader, 16, "gfx942", objective="speed")
    with pytest.raises(LayoutError, match="powers of two"):
        padding_options(writer, reader, 16, "gfx942", intervals=[3])
    with pytest.raises(LayoutError, match="permutation"):
        padding_options(writer, reader, 16, "gfx942", orders=[(5, 0)])
    fp4 = LinearLayout({"register": [[0, 2]], "lane": [[0, 4 << i] for i in range(4)] + [[1, 0], [2, 0]],
                        "warp": [[0, 1]]}, [("dim0", 4), ("dim1", 64)])
    with pytest.raises(LayoutError, match="at least a byte"):
        synthesize(fp4, _fp4_other_pairing(fp4), 4, "gfx942")


def _fp4_other_pairing(layout):
    """The same fp4 tile with a different register vector: no register common to both sides."""
    return LinearLayout({"register": [[0, 1]], "lane": [[0, 4 << i] for i in range(4)] + [[1, 0], [2, 0]],
                         "warp": [[0, 2]]}, layout.out_dims)


def test_deterministic():
    writer, reader, _, _ = operand_case("gfx942", (16, 16, 16), 4, 1, (64, 128), False, 16)
    a = synthesize(writer, reader, 16, "gfx942")
    b = synthesize(writer, reader, 16, "gfx942")
    assert a.shared.same_order(b.shared)
    assert random.Random(0).random() == random.Random(0).random()
