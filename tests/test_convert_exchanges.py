"""synth.exchanges: every schedule builds a correct plan whose instruction count is the predicted
one; lane cycles enter at their cheapest position; rounds use the permlane positions; the register
merge bound of synth.cost on small exact cases."""

from __future__ import annotations

import pytest

from linlayout import LinearLayout
from synth.convert import exchange_schedule_plans, plan_conversion
from synth.cost import register_merges
from synth.emulator import element_ids, verify

LANES = [(0, k) for k in range(6)]


def L(reg, lane):
    """Layout over (dim0 = lane bits, dim1 = register bits) from (dim, bit) pairs."""
    def vec(b):
        return [1 << b[1], 0] if b[0] == 0 else [0, 1 << b[1]]

    n1 = 1 + max([b[1] for b in reg + lane if b[0] == 1], default=0)
    return LinearLayout({"register": [vec(b) for b in reg], "lane": [vec(b) for b in lane]},
                        [("dim0", 64), ("dim1", 1 << n1)])


R = [(1, k) for k in range(5)]
SRC = L(R, LANES)
# a 4-bit register/lane transpose (32x32 accumulator <-> its transpose): dst register bits are src
# lane bits 0, 1, 3, 4 and register bit 4; dst lane bits are src register bits 0-3 and lane bits 5, 2
TRANSPOSE4 = L([LANES[0], LANES[1], LANES[3], LANES[4], R[4]], [R[0], R[1], LANES[5], R[2], R[3], LANES[2]])
# a 2-bit transpose with the lane rotation (2, 3) <-> (4, 5) (16x16 accumulator <-> its transpose)
TRANSPOSE2 = L([LANES[0], LANES[1], R[2], R[3], R[4]], [R[0], R[1], LANES[4], LANES[5], LANES[2], LANES[3]])


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
@pytest.mark.parametrize("bits", [16, 32])
@pytest.mark.parametrize("dst", [TRANSPOSE4, TRANSPOSE2], ids=["transpose4", "transpose2"])
def test_every_schedule_builds_a_verified_plan_of_the_predicted_count(arch, bits, dst):
    plans = exchange_schedule_plans(SRC, dst, arch, bits)
    names = {name.split(":")[0] for _, name, _, _ in plans}
    assert {"exchanges", "lane_first", "rounds"} <= names
    for K, name, predicted, plan in plans:
        assert plan.lds_bytes == 0
        assert verify(plan).ok, (K, name)
        assert plan.counts()["total"] == predicted, (K, name)


def test_lane_cycle_enters_at_its_cheapest_position():
    # swap lane bits 2 and 5 (a register bit is the spare): through the permlane32 position first
    dst = L(R, LANES[:2] + [LANES[5], LANES[3], LANES[4], LANES[2]])
    (K, name, n, plan), = [t for t in exchange_schedule_plans(SRC, dst, "gfx950", 32) if t[1] == "exchanges"]
    c = plan.counts()
    assert c["permlane32_swap"] == 32 and c["dpp"] == 32 and c["v_cndmask"] == 16 and n == 80  # 2.5 R, R = 32
    chosen = plan_conversion(SRC, dst, "gfx950", 32)
    assert chosen.lds_bytes == 0 and chosen.counts()["ds_bpermute"] == 0


def test_rounds_move_the_outgoing_lane_bits_to_the_permlane_positions():
    # gfx950, 2-bit transpose: a stage brings src lane bits 0, 1 to positions 4, 5, two permlane
    # exchanges (R/2 each), a stage to the targets: 3 R instructions (R = 32 registers)
    plans = {name: (n, p) for _, name, n, p in exchange_schedule_plans(SRC, TRANSPOSE2, "gfx950", 32)}
    n, p = plans["rounds:0/2"]
    c = p.counts()
    assert n == 96 and c["permlane16_swap"] == 16 and c["permlane32_swap"] == 16 and c["ds_bpermute"] == 64
    assert plans["exchanges"][0] == 288  # exchanges at lane bits 0, 1 (2 R each) and the rotation through a register


def test_register_merge_bound_on_exact_cases():
    W = 1

    def merges(dst, bits):
        return register_merges(element_ids(SRC, W), element_ids(dst, W), bits)

    assert merges(SRC, 32) == 0
    one = L(R[:4] + [LANES[5]], LANES[:5] + [R[4]])  # register bit 4 <-> lane bit 5: every VGPR splits in two
    assert merges(one, 32) == 32 and merges(one, 64) == 64
    assert merges(TRANSPOSE2, 32) == 64 and merges(TRANSPOSE4, 32) == 128
    # 16-bit: dword bits are register bits 1-4; the element bit (register bit 0) goes to lane bit 0
    assert merges(TRANSPOSE4, 16) == 48
