"""NVIDIA ldmatrix / stmatrix / movmatrix: the oracle against the PTX fragment formulas, the plan steps on
the emulator (hand-built plans and the planner's), their certificates, their CUDA and its PTX counts.

The oracle (linlayout.synth.isa_lanes) is checked against ``matrix_fragment_layout`` (the GF(2) fragments
of linlayout.hw.mma_nvidia, which matched an H200 bit for bit: docs/nvidia_facts.md section 5) and
against the PTX formulas written out here; the planner's own formulas (linlayout.synth.steps) against
the oracle.  Plans run on the emulator, which executes the steps by the oracle.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from linlayout import LayoutError, LinearLayout
from linlayout.dtypes import dtype_bits
from linlayout.hw.mma_nvidia import matrix_fragment_layout
from linlayout.lowering.cpp import emit_cpp
from linlayout.lowering.cpp.counts import expected_ptx_counts, ptx_counts
from linlayout.lowering.cpp.toolchain import compile_cuda, find_nvcc
from linlayout.lowering.plan_counts import plan_ptx_counts
from linlayout.synth.convert import plan_conversion
from linlayout.synth.emulator import run_certificate, run_isa, verify
from linlayout.synth.isa_lanes import matrix_row_bytes, movmatrix_sources
from linlayout.synth.plan import Barrier, Mov, Plan
from linlayout.synth.steps import MatrixLoad, MatrixStore, Movmatrix, matrix_pieces, step_from_json

from convert_checker import check_certificate
from repo_data import family_corpus

nvcc = pytest.mark.skipif(find_nvcc() is None, reason="needs nvcc (the CUDA toolkit) on PATH")
LANES = np.arange(32)
FORMS = [(num, trans) for num in (1, 2, 4) for trans in (False, True)]


# ---------------------------------------------------------------------- the oracle
@pytest.mark.parametrize("num,trans", FORMS)
def test_matrix_oracle_is_the_ptx_fragment(num, trans):
    """Byte k of register m of lane t: written-out PTX formula, and the fragment layout's element
    (row, col) of matrix m, whose row address lane 8m + row supplies."""
    row_lane, row_byte = matrix_row_bytes(num, trans)
    fragment = matrix_fragment_layout(num, trans)
    for t in range(32):
        for m in range(num):
            for k in range(4):
                h = k >> 1
                row, col = (2 * (t % 4) + h, t // 4) if trans else (t // 4, 2 * (t % 4) + h)
                assert (row_lane[t, m, k], row_byte[t, m, k]) == (8 * m + row, 2 * col + k % 2)
                e = fragment.apply({"register": 2 * m + h, "lane": t})
                assert (e["matrix"], e["row"], e["col"]) == (m, row, col)


def test_movmatrix_oracle_takes_the_plain_fragment_to_the_trans_one():
    """With src holding matrix M in the plain fragment, dst holds it in the .trans fragment (PTX:
    the transpose of M in the plain fragment), byte for byte."""
    plain, trans = matrix_fragment_layout(1, False), matrix_fragment_layout(1, True)

    def element(layout, t, h):
        e = layout.apply({"register": h, "lane": t})
        return e["row"], e["col"]

    src_lane, src_byte = movmatrix_sources()
    for t in range(32):
        for k in range(4):
            assert src_byte[t, k] % 2 == k % 2  # a half moves whole
            assert element(plain, src_lane[t, k], src_byte[t, k] >> 1) == element(trans, t, k >> 1)


@pytest.mark.parametrize("num,trans", FORMS)
def test_the_planners_pieces_are_the_oracles_bytes(num, trans):
    """linlayout.synth.steps.matrix_pieces (the planner's formula) against the oracle, on random row
    addresses of two warps."""
    rng = np.random.default_rng(num + 8 * trans)
    lane_addr = 16 * rng.integers(0, 64, size=(2, 32))
    row_lane, row_byte = matrix_row_bytes(num, trans)
    for m, first, addr in matrix_pieces(lane_addr, num, trans):
        for k in range(first, first + (2 if trans else 4)):
            want = lane_addr[:, row_lane[:, m, k]] + row_byte[:, m, k]
            assert (addr + (k - first) == want).all()


# ---------------------------------------------------------------------- hand-built plans on the emulator
def _with_warps(layout: LinearLayout) -> LinearLayout:
    return LinearLayout(dict(layout.bases, warp=[]), layout.out_dims)


def _rows(num: int) -> np.ndarray:
    """Row addresses: lane 8m + r gives matrix m's row r a 16-byte slot, rows of a matrix permuted (r ^ 5)
    and 48 bytes apart (not contiguous)."""
    return 48 * (8 * ((LANES >> 3) % num) + ((LANES & 7) ^ 5))


def _round_trip_plan(arch: str, num: int, store_trans: bool, load_trans: bool) -> Plan:
    """16-bit elements in the ``store_trans`` fragment of ``num`` matrices -> stmatrix -> warp barrier ->
    ldmatrix -> the ``load_trans`` fragment (the same rows)."""
    n = 2 * num
    steps = [MatrixStore(addr=_rows(num), src=list(range(n)), num=num, trans=store_trans), Barrier(scope="warp"),
             MatrixLoad(addr=_rows(num), dst=list(range(n, 2 * n)), num=num, trans=load_trans),
             Mov(dst=list(range(n)), src=list(range(n, 2 * n)))]
    return Plan(arch, 32, 1, 16, _with_warps(matrix_fragment_layout(num, store_trans)),
                _with_warps(matrix_fragment_layout(num, load_trans)), n, n, steps, strategy="hand", lds_bytes=48 * 32)


@pytest.mark.parametrize("num,trans", FORMS)
def test_stmatrix_then_ldmatrix_moves_the_fragments(num, trans):
    """Stores of one fragment and loads of the other transpose every matrix (and the same form twice
    moves nothing), element for element on the emulator and the certificate."""
    for load_trans in (False, True):
        plan = _round_trip_plan("sm_90", num, trans, load_trans)
        assert verify(plan).ok, verify(plan).message
        assert check_certificate(json.loads(plan.dumps())) == (True, "")
        c = plan.counts()
        assert (c["stmatrix"], c["ldmatrix"], c["bar.warp.sync"], c["total"]) == (1, 1, 1, 3)
        mnemonics = [line.split()[0] for line in plan.pseudo_asm().splitlines()[1:]]
        assert [m.split(".")[0] for m in mnemonics] == ["stmatrix", "bar", "ldmatrix", ";"]  # ; the renaming


def test_stmatrix_is_sm90_only_and_every_malformed_step_is_refused():
    with pytest.raises(LayoutError, match="sm_80 has no stmatrix instruction"):
        run_isa(_round_trip_plan("sm_80", 2, False, True))
    wrong = _round_trip_plan("sm_90", 4, False, True)
    wrong.steps[2] = MatrixLoad(addr=_rows(4) + 8, dst=list(range(8, 16)), num=4, trans=True)
    assert "a row address: lane 0 of warp 0 addresses byte 248, not a multiple of 16" in verify(wrong).message
    no_barrier = _round_trip_plan("sm_90", 1, False, True)  # lanes read halves other lanes stored
    del no_barrier.steps[1]
    assert "warp barrier is missing" in verify(no_barrier).message
    lay = _with_warps(matrix_fragment_layout(1, False))
    fp32 = Plan("sm_90", 32, 1, 32, lay, lay, 2, 2, [MatrixLoad(addr=_rows(1), dst=[0], num=1, trans=True)])
    assert ".trans splits a 32-bit element" in verify(fp32).message


def _fragment_8bit(trans: bool) -> LinearLayout:
    """8-bit elements of one 8x8 matrix of 16-bit halves (8 rows x 16 bytes): the byte bit, then the
    plain fragment's half and lanes (``trans``: those of the transposed halves)."""
    if trans:
        bases = {"register": [[0, 1], [1, 0]], "lane": [[2, 0], [4, 0], [0, 2], [0, 4], [0, 8]]}
    else:
        bases = {"register": [[0, 1], [0, 2]], "lane": [[0, 4], [0, 8], [1, 0], [2, 0], [4, 0]]}
    return LinearLayout(dict(bases, warp=[]), [("row", 8), ("col", 16)])


@pytest.mark.parametrize("element_bits", [8, 16])
def test_movmatrix_transposes_the_halves(element_bits):
    p = 32 // element_bits
    if element_bits == 16:
        src, dst = (_with_warps(matrix_fragment_layout(1, t)) for t in (False, True))
    else:
        src, dst = _fragment_8bit(False), _fragment_8bit(True)
    steps = [Movmatrix(dst=list(range(p, 2 * p)), src=list(range(p))), Mov(dst=list(range(p)), src=list(range(p, 2 * p)))]
    plan = Plan("sm_80", 32, 1, element_bits, src, dst, p, p, steps, strategy="hand")
    assert verify(plan).ok, verify(plan).message
    assert check_certificate(json.loads(plan.dumps())) == (True, "")
    assert plan.counts()["movmatrix"] == 1 and plan_ptx_counts(plan)["other"] == 1  # Triton's class for it
    back = Plan.from_certificate(json.loads(plan.dumps()))
    assert verify(back).ok and back.counts() == plan.counts()


def test_a_movmatrix_of_32_bit_elements_is_refused():
    lay = _with_warps(matrix_fragment_layout(1, False))
    plan = Plan("sm_90", 32, 1, 32, lay, lay, 2, 2, [Movmatrix(dst=[2], src=[0])])
    assert "one register of 16-bit halves" in verify(plan).message


# ---------------------------------------------------------------------- certificates
def test_certificates_round_trip_and_run_at_element_level():
    plan = _round_trip_plan("sm_90", 4, True, False)
    back = Plan.from_certificate(json.loads(plan.dumps()))
    assert [type(s) for s in back.steps] == [type(s) for s in plan.steps]
    assert back.dumps() == plan.dumps() and verify(back).ok
    from linlayout.synth.emulator import expected_ids

    assert (run_certificate(plan.to_certificate())[:, :, :8] == expected_ids(plan)).all()


def _item(step) -> dict:
    return json.loads(json.dumps(step.to_cert()))[0]


@pytest.mark.parametrize("change,message", [
    (lambda d: d["isa"].update(num=3), "isa.num must be 1, 2 or 4"),
    (lambda d: d["isa"].update(trans="yes"), "isa.trans must be true or false"),
    (lambda d: d["elem_addr"][3].__setitem__(5, -16), "elem_addr is not where"),
    (lambda d: d["elem_addr"].pop(), "elem_addr is not where"),
    (lambda d: d.update(dst=[0, 1, 2]), "3 slots do not fill 2 registers"),
    (lambda d: d["isa"].pop("lane_addr"), "lacks the key 'lane_addr'"),
])
def test_a_bad_ldmatrix_certificate_is_a_layout_error(change, message):
    d = _item(MatrixLoad(addr=_rows(2), dst=[0, 1, 2, 3], num=2, trans=True))
    change(d)
    with pytest.raises(LayoutError, match=message):
        step_from_json([d], 0)


@pytest.mark.parametrize("change,message", [
    (lambda d: d["src_lane"][0].__setitem__(0, 7), "src_lane / src_slot are not"),
    (lambda d: d["src_slot"][1].__setitem__(4, 0), "src_lane / src_slot are not"),  # lane 4 reads slot 1
    (lambda d: d.update(dst=[4, 5, 6]), "one register of 16-bit halves"),
    (lambda d: d.pop("src_slot"), "lacks the key 'src_slot'"),
])
def test_a_bad_movmatrix_certificate_is_a_layout_error(change, message):
    d = _item(Movmatrix(dst=[4, 5], src=[0, 1]))
    change(d)
    with pytest.raises(LayoutError, match=message):
        step_from_json([d], 0)


# ---------------------------------------------------------------------- the planner's plans
def _corpus_case(name: str, arch: str, dtype: str) -> tuple[LinearLayout, LinearLayout, int, dict]:
    (case,) = [c for c in family_corpus("nvidia")["cases"] if (c["name"], c["arch"], c["dtype"]) == (name, arch, dtype)]
    return LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), dtype_bits(dtype), case["triton"]


PLANNED = [  # (corpus case, the plan's matrix counts)
    (("blocked[1x2,t32x1,o10]->blocked[2x1,t1x32,o01]", "sm_90", "fp32"), {"stmatrix": 8, "lds_read": 16}),
    (("blocked[1x8,t8x4,o10]->blocked[8x1,t4x8,o01]", "sm_80", "bf16"), {"ldmatrix": 2, "lds_write": 2}),
    (("blocked[8x1,t8x4,o01]->dotBmma2.16x8(kw2)", "sm_90", "fp16"), {"stmatrix": 4, "lds_read": 4}),
    (("slice0(mma2.16x8)->slice0(blocked[1x4,t1x32,o10])", "sm_80", "fp8"), {"ldmatrix": 1, "lds_write": 1}),
]


@pytest.mark.parametrize("k", range(len(PLANNED)))
def test_the_planner_uses_matrix_accesses_where_they_are_cheaper(k):
    """The fp32 transpose where Triton uses ldmatrix: 8 stmatrix.x4 + 16 ld.shared (Triton: st.shared.v4 +
    ldmatrix.x4), where st/ld.shared alone took 32 stores and 16 loads; and plans of 16- and 8-bit elements with ldmatrix or
    stmatrix.  Each is verified on the emulator when planned, its certificate reads back, and a
    planner with the matrix accesses priced out of reach does not choose them."""
    (name, arch, dtype), counts = PLANNED[k]
    src, dst, bits, triton = _corpus_case(name, arch, dtype)
    plan = plan_conversion(src, dst, arch, bits)
    assert {kind: plan.counts()[kind] for kind in counts} == counts
    assert plan_ptx_counts(plan)["total"] < triton["total"]
    back = Plan.from_certificate(json.loads(plan.dumps()))
    assert verify(back).ok and back.counts() == plan.counts()
    assert check_certificate(json.loads(plan.dumps())) == (True, "")


def test_matrix_accesses_are_chosen_only_when_cheaper(monkeypatch):
    from linlayout.synth import cost

    src, dst, bits, _ = _corpus_case(*PLANNED[0][0])
    monkeypatch.setattr(cost, "NV_MATRIX_WAVEFRONT_CYCLES", 1000.0)
    cost._matrix_cache.clear()
    try:
        plan = plan_conversion(src, dst, "sm_90", bits, objective="throughput")
    finally:
        cost._matrix_cache.clear()
    assert plan.counts()["ldmatrix"] == 0 and verify(plan).ok


# ---------------------------------------------------------------------- CUDA
def _check_cuda(plan: Plan, arch: str) -> dict:
    want = expected_ptx_counts(plan)
    got = ptx_counts(compile_cuda(emit_cpp(plan), arch), "conv")
    assert {k: got.get(k, 0) for k in want} == want
    assert {k for k, v in got.items() if v and k.startswith(("ldmatrix.", "stmatrix."))} == \
        {k for k, v in want.items() if v and k.startswith(("ldmatrix.", "stmatrix."))}
    return got


@nvcc
@pytest.mark.parametrize("num,trans", FORMS)
def test_cuda_matrix_round_trip_holds_the_plans_instructions(num, trans):
    got = _check_cuda(_round_trip_plan("sm_90", num, trans, not trans), "sm_90")
    suffix = ".trans" if trans else ""
    assert got[f"stmatrix.x{num}{suffix}"] == 1 and got[f"ldmatrix.x{num}{'' if trans else '.trans'}"] == 1


@nvcc
def test_cuda_movmatrix_and_the_planners_matrix_plans():
    lay = (_with_warps(matrix_fragment_layout(1, t)) for t in (False, True))
    plan = Plan("sm_80", 32, 1, 16, *lay, 2, 2, [Movmatrix(dst=[2, 3], src=[0, 1]), Mov(dst=[0, 1], src=[2, 3])])
    assert _check_cuda(plan, "sm_80")["movmatrix"] == 1
    for (name, arch, dtype), _ in PLANNED:
        src, dst, bits, _ = _corpus_case(name, arch, dtype)
        _check_cuda(plan_conversion(src, dst, arch, bits), arch)
    case = next(c for c in family_corpus("nvidia")["cases"] if c["name"] == "mma2.16x8->dotBmma2.16x8(kw2)")
    plan = plan_conversion(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), case["arch"],
                           dtype_bits(case["dtype"]))
    assert _check_cuda(plan, case["arch"])["movmatrix"] == plan.counts()["movmatrix"] > 0


# ---------------------------------------------------------------------- the movmatrix stage of the planner
def test_the_planners_movmatrix_layout_is_the_instructions():
    """linlayout.synth.movmatrix_stage's column swap takes the plain fragment to the .trans one (16-bit),
    and the 8-bit halves' fragment likewise."""
    from linlayout.synth.movmatrix_stage import movmatrix_layout

    plain, trans = (_with_warps(matrix_fragment_layout(1, t)) for t in (False, True))
    assert movmatrix_layout(plain, 16).bases == trans.bases
    assert movmatrix_layout(_fragment_8bit(False), 8).bases == _fragment_8bit(True).bases
    assert movmatrix_layout(plain, 32) is None


def test_the_planner_transposes_mma_accumulators_to_b_operands_with_movmatrix():
    """mma2 accumulator -> dot B operand (kWidth 2) of 16-bit elements: where it is exactly the transpose
    of every 8x8 block of halves (the layout after a movmatrix of every register is dst's up to the
    order of its registers: 8 cases of the corpus), one movmatrix per register and nothing else,
    where Triton shuffles; elsewhere a movmatrix stage then the rest, fewer instructions than Triton's."""
    from linlayout.synth.movmatrix_stage import movmatrix_layout

    cases = [c for c in family_corpus("nvidia")["cases"]
             if c["name"] == "mma2.16x8->dotBmma2.16x8(kw2)" and c["dtype"] in ("fp16", "bf16")]
    exact = 0
    for case in cases:
        src, dst = LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])
        moved = movmatrix_layout(src, 16).bases
        plan = plan_conversion(src, dst, case["arch"], 16)
        c = plan.counts()
        if (moved["lane"], moved["warp"], moved["register"][0]) == (dst.bases["lane"], dst.bases["warp"],
                                                                     dst.bases["register"][0]) \
                and sorted(moved["register"]) == sorted(dst.bases["register"]):
            exact += 1
            assert c["movmatrix"] == src.in_dim_size("register") // 2 == c["total"]
        if c["movmatrix"]:
            assert plan_ptx_counts(plan)["total"] < case["triton"]["total"]
            assert check_certificate(json.loads(plan.dumps())) == (True, "")
    assert exact == 8


def test_a_movmatrix_stage_at_either_end():
    """The exact accumulator -> B operand transpose and its way back: both one movmatrix per register;
    among the candidates, a stage first (on src) and a stage last (on dst), each verified."""
    from linlayout.synth.convert import candidate_plans

    case = next(c for c in family_corpus("nvidia")["cases"]
                if c["name"] == "mma2.16x8->dotBmma2.16x8(kw2)" and c["dtype"] == "fp16" and c["num_warps"] == 1)
    src, dst = LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])
    n = src.in_dim_size("register") // 2
    for a, b in ((src, dst), (dst, src)):
        assert plan_conversion(a, b, "sm_90", 16).counts()["movmatrix"] == n
        ends: dict[tuple[bool, bool], list] = {}
        for p in candidate_plans(a, b, "sm_90", 16):
            if p.counts()["movmatrix"]:
                ends.setdefault((isinstance(p.steps[0], Movmatrix), isinstance(p.steps[-1], Movmatrix)), []).append(p)
        assert set(ends) == {(True, False), (False, True)}  # the stage, and a renaming after or before it
        assert all(verify(p).ok for plans in ends.values() for p in plans)
        assert [min(p.counts()["total"] for p in plans) for plans in ends.values()] == [n, n]
    mixed = _with_warps(matrix_fragment_layout(1, False))
    regs = mixed.bases["register"] + [[1, 0, 0]]
    src1 = LinearLayout(dict(mixed.bases, register=regs), [("matrix", 2), ("row", 8), ("col", 8)])
    trans = _with_warps(matrix_fragment_layout(1, True))
    lanes = [trans.bases["lane"][k] for k in (1, 0, 2, 3, 4)]  # the .trans fragment, lanes 0 and 1 swapped
    dst1 = LinearLayout(dict(trans.bases, register=trans.bases["register"] + [[1, 0, 0]], lane=lanes),
                        [("matrix", 2), ("row", 8), ("col", 8)])
    for a, b, first in ((src1, dst1, True), (dst1, src1, False)):
        staged = [p for p in candidate_plans(a, b, "sm_90", 16)
                  if isinstance(p.steps[0 if first else -1], Movmatrix)]
        assert staged and all(verify(p).ok for p in staged)


def test_a_movmatrix_is_shared_memory_pipe_work_like_a_shuffle():
    """On NVIDIA a movmatrix goes through the MIO pipe, priced as NV_MOVMATRIX_SHUFFLES shuffles: a plan of
    movmatrix alone has its pipe cycles beyond the issue slots in ``lds_pipe`` (which the overlapped price
    of docs/nvidia_facts.md section 8 takes the maximum against), exactly as a shuffle's."""
    from linlayout.synth.cost import cost_model

    case = next(c for c in family_corpus("nvidia")["cases"]
                if c["name"] == "mma2.16x8->dotBmma2.16x8(kw2)" and c["dtype"] == "fp16" and c["num_warps"] == 1)
    plan = plan_conversion(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), "sm_90", 16)
    cm, n = cost_model("sm_90"), plan.counts()["movmatrix"]
    assert n == plan.counts()["total"] > 0
    assert cm.instruction("movmatrix") == cm.instruction("shfl")
    assert plan.cost_detail["lds_pipe"] == n * (cm.instruction("shfl") - cm.ds_issue) > 0
