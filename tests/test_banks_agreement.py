"""The subspace-algebra path and the enumeration path of linlayout.synth.banks agree (and match the oracle)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from banks_oracle import BANKS, PHASES, instruction_cycles
from linlayout import LayoutError, LinearLayout
from linlayout.hw.lds import LDS_ARCHS, lds_model, triton_lds_model
from linlayout.synth.banks import analyze, analyze_op, lane_cycles

MODELS = [lds_model(a) for a in LDS_ARCHS] + [triton_lds_model(a) for a in ("gfx942", "gfx950")]
CASES = []
for model in MODELS:
    for op in model.ops.values():
        if op.bytes_per_lane == 12:
            continue  # 3 dwords per lane: enumeration only
        for eb in (4, 8, 16, 32, 64):
            bits = op.bytes_per_lane * 8
            tr = op.shape.transpose_bits
            if bits % eb == 0 and (tr is None or tr == eb):
                CASES.append((model, op, eb))


@st.composite
def accesses(draw):
    model, op, eb = draw(st.sampled_from(CASES))
    v = op.bytes_per_lane * 8 // eb
    regs = v if draw(st.booleans()) else 1
    # lane offsets: multiples of the vector, often small powers of two (the interesting cases)
    small = st.sampled_from([0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]).map(lambda x: x * v)
    anyv = st.integers(0, 4095).map(lambda x: x * v)
    lane_bits = model.wave_size.bit_length() - 1
    lanes = draw(st.lists(st.one_of(small, anyv), min_size=lane_bits, max_size=lane_bits))
    bases = {"lane": [[o] for o in lanes]}
    if regs > 1:
        bases = {"register": [[1 << j] for j in range(regs.bit_length() - 1)], **bases}
    return model, op, eb, LinearLayout(bases, [("offset", 1 << 20)])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(accesses())
def test_linear_equals_enumeration(case):
    model, op, eb, acc = case
    lin = analyze_op(op, acc, eb, method="linear")
    enum = analyze_op(op, acc, eb, method="enumerate")
    assert lin.method == "linear" and enum.method == "enumeration"
    assert lin.phase_cycles == enum.phase_cycles
    assert lin.cycles == enum.cycles and lin.min_cycles == enum.min_cycles
    assert lin.banks_per_phase == enum.banks_per_phase
    # every collision is real: lanes l and l ^ x are in one phase, same bank, different dwords
    for c in lin.collisions:
        assert op.phase_of(0) == op.phase_of(c.lanes)
        assert c.word_delta and c.word_delta % op.num_banks == 0
    if model.kind == "hardware" and (model.arch, op.name) in PHASES:
        starts = [int(acc.apply({"lane": lane})["offset"]) * eb // 8 for lane in range(model.wave_size)]
        assert lin.phase_cycles == instruction_cycles(starts, op.bytes_per_lane, BANKS[model.arch],
                                                      PHASES[(model.arch, op.name)])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(accesses(), st.integers(0, 63), st.sampled_from(["linear", "xor", "add", "lane_swap"]))
def test_lane_cycles_equals_analyze(case, k, shape):
    """banks.lane_cycles (the planner's per-access price) gives analyze's numbers, or its LayoutError,
    on per-lane start offsets: linear ones, XOR/ADD translates of them and non-linear ones."""
    model, op, eb, acc = case
    lanes = np.arange(model.wave_size)
    starts = np.asarray(acc.apply({"lane": lanes})["offset"], dtype=np.int64)
    v = op.bytes_per_lane * 8 // eb
    starts = {"linear": starts, "xor": starts ^ (k * v), "add": starts + k * v,
              "lane_swap": starts[lanes ^ (k & 7)] if k % 3 else np.roll(starts, k)}[shape]
    try:
        rep = analyze(model, op.name, starts, element_bits=eb)
        want = (rep.cycles, rep.min_cycles)
    except LayoutError as e:
        want = str(e)
    try:
        got = lane_cycles(model, op.name, starts, eb)
    except LayoutError as e:
        got = str(e)
    assert got == want
