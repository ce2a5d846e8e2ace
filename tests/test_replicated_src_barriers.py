"""A round trip whose src is replicated across warps (every warp holds the whole tile) needs no
workgroup barrier on AMD targets in one round (``lds_path._exchanges``): every warp stores every
element itself before its loads, and the other warps store the same data on those bytes.  The wave
emulator and the MLIR interpreter accept such unordered same-data stores and reads of a warp's own
stores, and still refuse the races around them."""

from __future__ import annotations

import json

import numpy as np
import pytest

from linlayout import LinearLayout
from linlayout.cli.bench import kernel_plan
from linlayout.dtypes import dtype_bits
from linlayout.lowering.interp.errors import InterpreterError
from linlayout.lowering.interp.memory import LdsLayout, LocalMemory
from linlayout.synth import lds_path
from linlayout.synth.context import ConversionContext
from linlayout.synth.emulator import PlanVerificationError, run_isa
from linlayout.synth.plan import Barrier, LdsLoad, LdsStore, Plan

from repo_data import REPO

LANES = np.arange(64)
CORPUS = json.loads((REPO / "benchmarks" / "data" / "triton_amd_corpus.json").read_text())["cases"]


def _broadcast_plan(steps, warps: int = 2) -> Plan:
    """A 2-warp gfx942 plan of 64 fp32 elements per warp, every warp holding all of them."""
    lay = LinearLayout({"register": [], "lane": [[1 << j] for j in range(6)], "warp": [[0]] * (warps.bit_length() - 1)},
                       [("dim0", 64)])
    return Plan("gfx942", 64, warps, 32, lay, lay, 2, 2, steps, lds_bytes=256)


def _same(addr):
    return np.stack([addr, addr])


def test_the_emulator_takes_same_data_stores_of_two_warps_and_reads_of_a_warps_own_stores():
    rotated = (LANES + 1) % 64 * 4
    plan = _broadcast_plan([LdsStore(addr=_same(LANES * 4), width_bytes=4, src=[0]),
                            LdsLoad(addr=_same(rotated), width_bytes=4, dst=[1])])
    out = run_isa(plan)
    assert np.array_equal(out[1], out[0][:, (LANES + 1) % 64])  # [warp, lane] of slot 1: lane l + 1's element


@pytest.mark.parametrize("steps, error", [
    # warp 1 reads a byte only warp 0 stored
    ([LdsStore(addr=np.stack([LANES * 4, LANES * 4 + 256]), width_bytes=4, src=[0]),
      LdsLoad(addr=_same(LANES * 4), width_bytes=4, dst=[1])], "read without a barrier after another warp"),
    # warp 1 overwrites with other data (its lane l + 1's element) a byte both warps wrote and warp 0 read
    ([LdsStore(addr=_same(LANES * 4), width_bytes=4, src=[0]), LdsLoad(addr=_same(LANES * 4), width_bytes=4, dst=[1]),
      LdsStore(addr=np.stack([LANES * 4 + 256, (LANES + 63) % 64 * 4]), width_bytes=4, src=[0])],
     "written by another warp with other data"),
])
def test_the_emulator_still_refuses_the_races(steps, error):
    plan = _broadcast_plan(steps)
    plan.lds_bytes = 512
    with pytest.raises(PlanVerificationError, match=error):
        run_isa(plan)
    steps.insert(1, Barrier())  # ordered, the same program runs
    if "read without" in error:
        run_isa(plan)



def test_the_emulator_refuses_a_read_of_an_own_store_after_another_warps_earlier_other_data():
    # warp 0 stores its elements in place, then rotated on the same bytes; warp 1 stores them rotated
    # there too (the bytes' data as they are: the final data is warp 0's last in any order) and reads
    # them: warp 0's first store may land between warp 1's store and its read (review31)
    rotated = (LANES + 1) % 64 * 4
    steps = [LdsStore(addr=np.stack([LANES * 4, LANES * 4 + 512]), width_bytes=4, src=[0]),
             LdsStore(addr=np.stack([rotated, LANES * 4 + 512]), width_bytes=4, src=[0]),
             LdsStore(addr=np.stack([LANES * 4 + 512, rotated]), width_bytes=4, src=[0]),
             LdsLoad(addr=np.stack([LANES * 4 + 512, rotated]), width_bytes=4, dst=[1])]
    plan = _broadcast_plan(steps)
    plan.lds_bytes = 1024
    with pytest.raises(PlanVerificationError, match="step 3 .*read without a barrier after another warp"):
        run_isa(plan)
    steps.insert(2, Barrier())  # warp 0's stores ordered before warp 1's: the same program runs
    out = run_isa(plan)
    assert np.array_equal(out[1][1], out[0][1])  # warp 1's lane l reads the byte its lane l stored

def _lds() -> LocalMemory:
    layout = LdsLayout()
    layout.allocate("lds", 16, 4)
    return LocalMemory(layout, 2, "error", 0)


def _access(lds: LocalMemory, wave: int, value: int | None):
    addrs, active, waves = np.array([0], np.uint64), np.array([True]), np.array([wave])
    if value is None:
        return int(lds.load(addrs, 1, active, waves, True)[0, 0])
    lds.store(addrs, np.array([[value]], np.uint8), active, waves, True, False)


def test_the_interpreter_takes_a_waves_read_of_its_own_store():
    lds = _lds()
    _access(lds, 0, 7)
    _access(lds, 1, 7)  # the same value: no race with wave 0's store
    assert _access(lds, 0, None) == 7  # wave 0 stored the byte itself
    _access(lds, 1, 7)  # leaves the byte read by wave 0 as it is
    with pytest.raises(InterpreterError, match="overwrites lds\\+0 that wave 0 wrote"):
        _access(lds, 1, 8)  # (wave 0 wrote it too: the first race reported)
    lds.barrier()
    assert _access(lds, 0, None) == 7
    _access(lds, 1, 7)
    with pytest.raises(InterpreterError, match="overwrites lds\\+0 that wave 0 read"):
        _access(lds, 1, 8)
    lds = _lds()
    _access(lds, 1, 7)
    with pytest.raises(InterpreterError, match="reads lds\\+0 that wave 1 wrote"):
        _access(lds, 0, None)



def test_the_interpreter_refuses_a_same_data_store_after_other_data():
    lds = _lds()
    _access(lds, 1, 7)
    _access(lds, 0, 7)  # the same value: wave 0 is the byte's last writer
    with pytest.raises(InterpreterError, match="wave 0 .*overwrites lds\\+0 that wave 1 wrote"):
        _access(lds, 0, 8)  # wave 1's store of 7 may land after it (review31)
    lds = _lds()
    _access(lds, 0, 7)
    _access(lds, 0, 8)  # one wave's stores land in order
    _access(lds, 1, 8)  # the byte's data as it is: the final data is 8 in any order
    with pytest.raises(InterpreterError, match="wave 1 .*reads lds\\+0 that wave 0 wrote"):
        _access(lds, 1, None)  # wave 0's store of 7 may land between wave 1's store and this read
    lds.barrier()
    assert _access(lds, 1, None) == 8

def _case(name, arch, dtype, waves):
    (case,) = [c for c in CORPUS if (c["name"], c["arch"], c["dtype"], c["num_warps"]) == (name, arch, dtype, waves)]
    return case


def _plan(case):
    return kernel_plan(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), case["arch"],
                       dtype_bits(case["dtype"]))


@pytest.mark.parametrize("corpus, name, arch, dtype, waves, moves", [
    # gfx950 fp32, 8 waves: the src (a slice along the warps' dim) is in every warp, the dst's warp bit
    # picks which half a warp reads; before: ds_write_b64, s_waitcnt, s_barrier, ds_read_b32
    ("amd", "slice0(blocked[1x2,t1x64,o10])->slice1(mfma32T)", "gfx950", "fp32", 8, (1, 1)),
    # gfx942 fp16 8 waves, and a wave32 target (gfx1100 fp8, 2 waves; 5 waits and a barrier before)
    ("amd", "slice0(blocked[1x4,t2x32,o10])->slice1(mfma16)", "gfx942", "fp16", 8, (1, 1)),
    ("wave32", "blocked[1x1,t1x32,o10]->blocked[1x1,t32x1,o01]", "gfx1100", "fp8", 2, None),
])
def test_a_replicated_src_round_trip_has_no_barrier_and_runs_on_the_interpreter(corpus, name, arch, dtype, waves,
                                                                                  moves):
    from repo_data import family_corpus
    from test_emit_conversion import check_kernel

    (case,) = [c for c in family_corpus(corpus)["cases"] if (c["name"], c["arch"], c["dtype"], c["num_warps"])
               == (name, arch, dtype, waves)]
    plan = _plan(case)
    assert plan.strategy == "lds" and "no barrier" in plan.notes[-1] and plan.verified
    counts = plan.counts()
    assert counts["s_barrier"] == 0
    if moves is not None:
        assert (counts["lds_write"], counts["lds_read"]) == moves
    check_kernel(plan)


def _replicated(lanes: int):
    """A src in every warp of 2 (each lane two elements) and a dst whose warp bit picks a half."""
    bits = lanes.bit_length() - 1
    src = LinearLayout({"register": [[1]], "lane": [[2 << j] for j in range(bits)], "warp": [[0]]},
                       [("dim0", 2 * lanes)])
    dst = LinearLayout({"register": [], "lane": [[1 << j] for j in range(bits)], "warp": [[lanes]]},
                       [("dim0", 2 * lanes)])
    return src, dst


@pytest.mark.parametrize("arch, lanes, replicated", [("gfx950", 64, True), ("gfx1100", 32, True),
                                                     ("sm_90", 32, False)])
def test_exchanges_by_the_src_and_the_target(arch, lanes, replicated):
    ctx = ConversionContext.create(*_replicated(lanes), arch, 32)
    assert lds_path._crosses_warps(ctx.problem) and lds_path._src_in_every_warp(ctx.problem)
    assert lds_path._exchanges(ctx, 0) is not replicated  # PTX targets keep their barriers
    assert lds_path._exchanges(ctx, 1)  # rounds: the next round's stores may overwrite another warp's reads


def test_a_src_split_over_the_warps_exchanges():
    # slice0(blocked[1x2,t4x16,o10]), 2 waves: its warp column lies outside its lane columns' span
    case = _case("slice0(blocked[1x2,t4x16,o10])->slice1(mfma32T)", "gfx950", "bf16", 2)
    ctx = ConversionContext.create(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), "gfx950", 16)
    assert not lds_path._src_in_every_warp(ctx.problem) and lds_path._exchanges(ctx, 0)
    assert _plan(case).counts()["s_barrier"] == 1


@pytest.mark.parametrize("corpus, name, arch, dtype, shape", [
    ("amd", "mfma16T->mfma16", "gfx90a", "i8", (64, 64)),
    ("wave32", "wmma2.16x16->wmma2.16x16T", "gfx1200", "fp8", (64, 64)),
])
def test_an_8_bit_barrier_free_round_trip_moves_random_bytes_exactly(corpus, name, arch, dtype, shape):
    """The interpreter judges same-data stores by their bytes, and an 8-bit ``distinct_tile`` repeats every 256
    elements, so a kernel that gave another wave's element ``e + 256`` for ``e`` would pass it (review31).  Tiles
    of random bytes (two seeds) place the repeats elsewhere: the 2-wave barrier-free round trips of two 8-bit
    corpus cases of 4,096 elements still give exactly the expected tile."""
    from repo_data import family_corpus

    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.emit.host import expected_output, interpret

    (case,) = [c for c in family_corpus(corpus)["cases"] if (c["name"], c["arch"], c["dtype"], c["num_warps"],
                                                              tuple(c["shape"])) == (name, arch, dtype, 2, shape)]
    plan = _plan(case)
    assert plan.strategy == "lds" and plan.counts()["s_barrier"] == 0
    low = lower_conversion(plan, binary=False)
    for seed in (1, 2):
        tile = np.random.default_rng(seed).integers(0, 256, size=low.kernel.shape, dtype=np.uint8)
        assert np.array_equal(interpret(low.kernel, tile, fill=0x5A), expected_output(plan, tile, fill=0x5A)), seed
