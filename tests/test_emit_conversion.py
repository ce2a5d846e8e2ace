"""Conversion kernels end to end: plan -> MLIR -> interpreter and ISA.

Every kernel runs on the wave interpreter and must leave exactly the expected tile, which
must also be what the plan emulator (linlayout.synth.emulator) produces; its compiled ``conv``
region must hold exactly the plan's cross-lane, select, byte-permute, LDS and barrier
instructions.  Cases: the 48 conversions of the Triton baseline, seeded random layout
pairs (8/16/32/64-bit elements), hand-built plans for each lane instruction, ragged tiles.
"""

from __future__ import annotations

import json
import random
import struct

import numpy as np
import pytest

from linlayout import LayoutError, LinearLayout

import needs
from repo_data import baseline_cases

pytestmark = needs.mlir

from linlayout.lowering.conversion import lower_conversion  # noqa: E402
from linlayout.lowering.emit.conversion_kernel import build_conversion_kernel  # noqa: E402
from linlayout.lowering.emit.host import distinct_tile, emulated_output, expected_output, interpret  # noqa: E402
from linlayout.lowering.report import FUSED_KEY, PLAN_CHECKED_KEYS, expected_isa_counts  # noqa: E402
from linlayout.synth.convert import plan_conversion  # noqa: E402
from linlayout.synth.emulator import verify  # noqa: E402
from linlayout.synth.plan import Lane, Mov, Plan  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402

from random_layouts import planning_problems  # noqa: E402

BITS = {"fp32": 32, "fp16": 16}


@pytest.fixture(scope="module", autouse=True)
def _cache(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("LINLAYOUT_CACHE", str(tmp_path_factory.mktemp("cache")))
    yield
    mp.undo()


def check_kernel(plan: Plan, shape=None, seed: int = 0):
    """Interpret the plan's kernel, compare with the expected tile and the emulator; check the ISA."""
    low = lower_conversion(plan, binary=False, shape=shape)
    tile = distinct_tile(low.kernel.shape, plan.element_bits, seed=seed)
    want = expected_output(plan, tile, fill=0x5A)
    got = interpret(low.kernel, tile, fill=0x5A)
    assert np.array_equal(got, want), "interpreter output differs from the expected tile"
    assert np.array_equal(emulated_output(plan, tile, fill=0x5A), want), "plan emulator disagrees"
    counts = low.report["isa_counts"]
    exp = expected_isa_counts(plan)
    for k in PLAN_CHECKED_KEYS:
        assert counts[k] == exp[k], (k, counts[k], exp[k], plan.pseudo_asm())
    # LLVM does not form v_cndmask_b32_dpp from update.dpp + select on gfx9 (its DPP combiner
    # handles VOP1/VOP2 only): a fused step costs a v_mov_b32_dpp and a v_cndmask_b32.
    assert counts[FUSED_KEY] == 0
    # s_nop: the hazard model's count of the pinned order (linlayout.synth.hazards), exact on all but
    # one corpus kernel; the compiler can add waits it does not see (docs/lowering.md)
    assert set(low.differences) <= {FUSED_KEY, "s_nop"}
    assert counts["vmem"] == 0 and counts["smem"] == 0  # loads and stores stay outside the region
    return low


# ---------------------------------------------------------------------- the 48 baseline cases
@pytest.mark.parametrize("idx", range(48))
def test_baseline_conversion(idx):
    c = baseline_cases()[idx]
    plan = plan_conversion(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), c["arch"],
                           BITS[c["dtype"]])
    low = check_kernel(plan, seed=idx)
    if plan.strategy == "noop":
        assert low.report["isa_counts"]["total"] == 0
    if plan.lds_bytes:
        assert low.report["lds_bytes"] >= plan.lds_bytes


# ---------------------------------------------------------------------- random layout pairs
def _perm_layout(reg_bits, warp_bits, d0_bits, d1_bits, order) -> LinearLayout:
    cols = [[1 << (k - d1_bits), 0] if k >= d1_bits else [0, 1 << k] for k in order]
    bases = {"register": cols[:reg_bits], "lane": cols[reg_bits:reg_bits + 6], "warp": cols[reg_bits + 6:]}
    return LinearLayout(bases, [("dim0", 1 << d0_bits), ("dim1", 1 << d1_bits)])


def random_problem(seed: int):
    """Two permutation layouts of one 2-D tile that differ in a few bits, an element width, an arch."""
    rng = random.Random(seed)
    reg_bits, warp_bits = rng.choice([1, 2, 3, 4]), rng.choice([0, 1, 2])
    n = reg_bits + 6 + warp_bits
    d1 = rng.randint(2, n - 2)
    p1 = list(range(n))
    rng.shuffle(p1)
    p2 = list(p1)
    for _ in range(rng.randint(1, 3)):
        i, j = rng.sample(range(n), 2)
        p2[i], p2[j] = p2[j], p2[i]
    eb, arch = rng.choice([8, 16, 32, 64]), rng.choice(["gfx942", "gfx950"])
    return (_perm_layout(reg_bits, warp_bits, n - d1, d1, p1), _perm_layout(reg_bits, warp_bits, n - d1, d1, p2),
            eb, arch)


# seeds whose plans together use every step kind at every element width the planner produces
RANDOM_SEEDS = [0, 2, 5, 6, 9, 11, 13, 14, 15, 16, 23, 31, 33, 35, 37, 43, 52, 59, 71, 85, 86, 122, 151, 171]


@pytest.mark.parametrize("seed", RANDOM_SEEDS)
def test_random_conversion(seed):
    src, dst, eb, arch = random_problem(seed)
    check_kernel(plan_conversion(src, dst, arch, eb), seed=seed)


@pytest.mark.parametrize("seed", [2093, 1792])  # 8-bit gfx942 and gfx950 (the first of the seeds on each)
def test_over_fetch_loads_run_on_the_interpreter(seed):
    # problems whose chosen plan loads dwords holding other lanes' elements (lds_path.over_fetch_design)
    src, dst, eb, arch = random_problem(seed)
    plan = plan_conversion(src, dst, arch, eb)
    assert any("over-fetch" in n for n in plan.notes) and (eb, arch) == {2093: (8, "gfx942"), 1792: (8, "gfx950")}[seed]
    check_kernel(plan, seed=seed)


# ---------------------------------------------------------------------- hand-built lane plans
def _lane_perm_plan(kind: str, isa: dict, sigma: list[int], arch: str = "gfx942", eb: int = 32) -> Plan:
    """A plan with one lane instruction per register: lane l reads lane T(l), T permuting lane bits by ``sigma``."""
    src = LinearLayout({"register": [[0, 1], [0, 2]], "lane": [[0, 4], [0, 8], [0, 16], [1, 0], [2, 0], [4, 0]],
                        "warp": [[8, 0]]}, [("dim0", 16), ("dim1", 32)])
    lanes = src.bases["lane"]
    dst = LinearLayout({"register": src.bases["register"], "lane": [lanes[sigma[i]] for i in range(6)],
                        "warp": src.bases["warp"]}, src.out_dims)
    l = np.arange(64)
    T = sum(((l >> i) & 1) << sigma[i] for i in range(6))
    p = max(1, 32 // eb)
    n = 4 // p if eb < 32 else 4
    steps = [Lane(kind=kind, dst=[(n + d) * p + k for k in range(p)], src=[d * p + k for k in range(p)],
                  src_lane=T, isa=dict(isa, **({"addr": 4 * T} if kind == "ds_bpermute" else {})))
             for d in range(n)]
    steps.append(Mov(dst=list(range(4)), src=[n * p + s for s in range(4)]))
    plan = Plan(arch=arch, wave_size=64, num_warps=2, element_bits=eb, src=src, dst=dst, slots_in=4, slots_out=4,
                steps=steps, strategy="hand")
    res = verify(plan)
    assert res.ok, res.message
    plan.verified = True
    return plan


@pytest.mark.parametrize("kind,isa,sigma,key", [
    ("dpp:quad_perm:[0,2,1,3]", {"ctrl": 0xD8, "row_mask": 0xF, "bank_mask": 0xF, "bound_ctrl": 0},
     [1, 0, 2, 3, 4, 5], "dpp"),
    ("ds_swizzle:0x80d8", {"offset": 0x80D8}, [1, 0, 2, 3, 4, 5], "ds_swizzle"),  # quad-perm mode
    ("ds_swizzle:0xe000", {"offset": 0xE000}, [4, 3, 2, 1, 0, 5], "ds_swizzle"),  # FFT: bits 0-4 reversed
    ("ds_bpermute", {"offset": 0}, [5, 1, 2, 3, 4, 0], "ds_bpermute"),
])
def test_hand_built_lane_plans(kind, isa, sigma, key):
    plan = _lane_perm_plan(kind, isa, sigma)
    low = check_kernel(plan)
    assert low.report["isa_counts"][key] == 4


def test_hand_built_packed_16bit_plan():
    plan = _lane_perm_plan("dpp:quad_perm:[0,2,1,3]", {"ctrl": 0xD8}, [1, 0, 2, 3, 4, 5], eb=16)
    assert check_kernel(plan).report["isa_counts"]["dpp"] == 2  # two elements per register


# ---------------------------------------------------------------------- ragged tiles, options, errors
def _baseline_plan(idx: int) -> Plan:
    c = baseline_cases()[idx]
    return plan_conversion(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), c["arch"],
                           BITS[c["dtype"]])


@pytest.mark.parametrize("idx,shape", [(0, (100, 60)), (12, (128, 33)), (28, (65, 17)), (40, (127, 64))])
def test_ragged_tiles_need_no_branches(idx, shape):
    plan = _baseline_plan(idx)
    low = check_kernel(plan, shape=shape, seed=idx)
    assert low.kernel.shape == shape
    assert "cf.cond_br" not in low.kernel.text and "scf.if" not in low.kernel.text
    assert "s_cbranch" not in low.compiled.isa


def test_io_dwords_and_argument_errors():
    plan = _baseline_plan(9)  # mfma32T->mfma32 fp32: LDS groups differ from the loads' dwordx4 groups
    wide = build_conversion_kernel(plan)
    narrow = build_conversion_kernel(plan, io_dwords=1)
    assert "vector<4xi32>" in wide.text.split("linlayout-begin setup")[0]
    assert "vector<4xi32>" not in narrow.text.split("linlayout-begin setup")[0]
    tile = distinct_tile(narrow.shape, 32)
    assert np.array_equal(interpret(narrow, tile), expected_output(plan, tile))
    pinned = build_conversion_kernel(plan, pin_sources=True)  # sources passed through the begin marker
    assert '"=v,=v' in pinned.text
    assert np.array_equal(interpret(pinned, tile), expected_output(plan, tile))
    with pytest.raises(LayoutError):
        build_conversion_kernel(plan, io_dwords=3)
    with pytest.raises(LayoutError):
        build_conversion_kernel(plan, shape=(129, 64))
    with pytest.raises(LayoutError):
        build_conversion_kernel(plan, name="bad name")
    plan.verified = False
    with pytest.raises(LayoutError, match="verified"):
        build_conversion_kernel(plan)


# ---------------------------------------------------------------------- code objects and the CLI
ELF_MACH = {"gfx942": 0x04C, "gfx950": 0x04F}


@pytest.mark.parametrize("idx,arch", [(5, "gfx942"), (30, "gfx950")])
def test_fatbin_per_arch_through_the_cli(idx, arch, tmp_path, capsys):
    from linlayout.cli import main

    c = baseline_cases()[idx]
    assert c["arch"] == arch
    src, dst = tmp_path / "src.json", tmp_path / "dst.json"
    src.write_text(json.dumps(c["src"]))
    dst.write_text(json.dumps(c["dst"]))
    out = tmp_path / "k.hsaco"
    argv = ["convert", "--src", f"@{src}", "--dst", f"@{dst}", "--arch", arch, "--dtype", c["dtype"], "--json"]
    assert main(argv + ["--emit", "fatbin", "-o", str(out)]) == 0
    r = json.loads(capsys.readouterr().out)
    b = out.read_bytes()
    assert b[:4] == b"\x7fELF" and struct.unpack_from("<I", b, 48)[0] & 0xFF == ELF_MACH[arch]
    assert r["output"] == str(out) and r["plan_isa_differences"] == {}
    plan_counts = r["plan_counts"]
    for k in ("ds_bpermute", "permlane16_swap", "permlane32_swap", "v_cndmask", "lds_write", "lds_read"):
        assert r["isa_counts"][k] == plan_counts[k]
    assert main(argv + ["--emit", "mlir", "-o", str(tmp_path / "k.mlir")]) == 0
    capsys.readouterr()
    assert "gpu.module" in (tmp_path / "k.mlir").read_text()
    assert main(argv + ["--emit", "isa", "-o", str(tmp_path / "k.s")]) == 0
    r2 = json.loads(capsys.readouterr().out)
    assert "linlayout-begin conv" in (tmp_path / "k.s").read_text() and r2["isa_counts"] == r["isa_counts"]


def test_byte_stores_keep_their_extraction_out_of_the_conversion_region():
    """AMD corpus gfx942 fp8 blocked[8x1,t2x32,o01]->blocked[4x1,t2x32,o01] (index 87): the dst is stored
    byte by byte, and the end marker passes those VGPRs through, so the stores' byte extraction stays
    after the region -- its ISA is the plan's 8 DPP moves and 8 v_cndmask (pinned only, LLVM hoisted
    57 extraction instructions into it) -- and the kernel still converts."""
    from linlayout.cli.bench import CORPORA, kernel_plan
    from linlayout.dtypes import dtype_bits

    case = json.loads(CORPORA["amd"].read_text())["cases"][87]
    assert (case["name"], case["arch"], case["dtype"]) == (
        "blocked[8x1,t2x32,o01]->blocked[4x1,t2x32,o01]", "gfx942", "fp8")
    plan = kernel_plan(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), "gfx942",
                       dtype_bits(case["dtype"]))
    low = lower_conversion(plan, binary=False, cache=False)
    counts = low.report["isa_counts"]
    assert (counts["total"], counts["dpp"], counts["v_cndmask"]) == (16, 8, 8) and low.differences == {}
    tile = distinct_tile(low.kernel.shape, 8, seed=87)
    assert np.array_equal(interpret(low.kernel, tile, fill=0x5A), expected_output(plan, tile, fill=0x5A))


def test_a_barrier_free_round_trip_keeps_its_stores_before_its_loads():
    """AMD corpus gfx942 bf16 slice1(mfma16T)->slice1(blocked[2x1,t64x1,o01]) (index 273): one round trip
    through the LDS with no barrier (each wave reads bytes its own lanes wrote), 1 store then 2 loads.
    A ``rocdl.wave.barrier`` stands between the store and the loads (and nowhere else), so LLVM keeps
    their order; it is no instruction (the ISA's counts are the plan's) and the kernel converts on the
    interpreter."""
    from linlayout.cli.bench import CORPORA, kernel_plan
    from linlayout.dtypes import dtype_bits
    from linlayout.lowering.compile import compile_mlir
    from linlayout.lowering.isa import isa_counts

    case = json.loads(CORPORA["amd"].read_text())["cases"][273]
    assert (case["name"], case["arch"], case["dtype"]) == (
        "slice1(mfma16T)->slice1(blocked[2x1,t64x1,o01])", "gfx942", "bf16")
    plan = kernel_plan(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), "gfx942",
                       dtype_bits(case["dtype"]))
    assert [st.op for st in plan.steps if st.lds or st.barrier] == ["lds_store", "lds_load", "lds_load"]
    low = lower_conversion(plan, binary=False, cache=False)
    body = low.kernel.text
    marks = [ln.strip() for ln in body.splitlines()
             if "llvm.store" in ln and "!llvm.ptr<3>" in ln or "llvm.load" in ln and "!llvm.ptr<3>" in ln
             or "rocdl.wave.barrier" in ln]
    kinds = ["wave" if "wave.barrier" in m else "store" if "llvm.store" in m else "load" for m in marks]
    assert kinds == ["store", "wave", "load", "load"], marks
    counts, exp = low.report["isa_counts"], expected_isa_counts(plan)
    assert all(counts[k] == exp[k] for k in PLAN_CHECKED_KEYS) and low.differences == {}
    without = compile_mlir(body.replace("rocdl.wave.barrier", ""), "gfx942", binary=False, cache=False)
    assert isa_counts(without.isa, "conv") == isa_counts(low.compiled.isa, "conv")
    assert isa_counts(low.compiled.isa, "conv")["total"] == counts["total"] == 5  # 1 store, 2 loads, a wait, a v_perm
    tile = distinct_tile(low.kernel.shape, 16, seed=273)
    assert np.array_equal(interpret(low.kernel, tile, fill=0x5A), expected_output(plan, tile, fill=0x5A))


@pytest.mark.parametrize("arch, lane_bits", [("gfx942", 6), ("gfx1100", 5)])
def test_the_kernel_declares_its_threads(arch, lane_bits):
    """LLVM takes a kernel that declares no size for one of at most 256 threads (``.max_flat_workgroup_size: 256``)
    and may drop the warp id's bits above: an 8-warp wave64 kernel's src load address kept warp bits 0 and 1
    alone (``s_and_b32 .., 0xc00``).  The kernel declares its threads (``known_block_size``), which its code
    object states and the interpreter checks at launch."""
    layout = LinearLayout({"register": [[1]], "lane": [[2 << i] for i in range(lane_bits)],
                           "warp": [[2 << lane_bits], [4 << lane_bits], [8 << lane_bits]]}, [("dim0", 16 << lane_bits)])
    plan = plan_conversion(layout, layout, arch, 32)
    low = lower_conversion(plan, binary=False)
    assert low.kernel.block == (8 << lane_bits, 1, 1)
    assert f".max_flat_workgroup_size: {8 << lane_bits}\n" in low.compiled.isa
    tile = distinct_tile(low.kernel.shape, 32)
    assert np.array_equal(interpret(low.kernel, tile), expected_output(plan, tile))


@pytest.mark.parametrize("element_bits, dst_lane", [(8, [[4], [8], [16], [32], [0], [0]]),
                                                  (16, [[2], [4], [8], [16], [32], [0]])])
def test_a_dword_with_fewer_slots_than_fit_is_stored_by_its_pieces(element_bits, dst_lane):
    """One 8- or 16-bit element per lane fills part of a dword: where the dst holds every 4th byte
    (every other 16-bit element), each at a 4-byte aligned address, the kernel stores the element,
    not the dword, which would overwrite the elements beside it that the dst does not hold (found
    by fuzzing the kernels with random layouts)."""
    shape = [("dim0", 64)]
    src = LinearLayout({"register": [], "lane": [[1], [2], [4], [8], [16], [32]], "warp": []}, shape)
    dst = LinearLayout({"register": [], "lane": dst_lane, "warp": []}, shape)
    low = check_kernel(plan_conversion(src, dst, "gfx942", element_bits))
    assert f"buffer_store_{'byte' if element_bits == 8 else 'short'} " in low.compiled.isa
    assert "buffer_store_dword " not in low.compiled.isa


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
@pytest.mark.parametrize("element_bits", [16, 32])
def test_registers_other_lanes_and_warps_hold_are_stored_once(arch, element_bits):
    """Two warps whose src register bit 1 holds lane bit 1's tensor vector and bit 2 the warp bit's:
    register ``r | 2`` holds in lane ``l ^ 2`` the element ``r`` holds in lane ``l``, and ``r | 4`` in
    warp ``w ^ 1`` the one ``r`` holds in warp ``w``, so of the 8 registers per lane only 0 and 1
    are stored (lds_path._stored_once): 2 elements per lane (a store each, as the setup estimate prices
    their addresses, cost.addresses_valu; on gfx1100 16-bit one ``ds_write_b32`` of both halves paired
    by a ``v_perm_b32``, 32-bit one ``ds_write2_b32`` through an ordered layout, lds_path.ordered_design;
    on gfx942 32-bit that plan, 3 + 15 of setup at 520 cycles, ranks after a swizzled ordered layout's
    4 + 21 at 408, lds_path._swizzled_ordered, out of the concurrent tie), a workgroup barrier (the warps
    exchange data), and the kernel leaves exactly the expected tile."""
    lane_bits = 6 if arch == "gfx942" else 5
    shape = [("dim0", 8), ("dim1", 1 << (lane_bits - 1))]
    unit = [[1, 0], [2, 0], [4, 0]] + [[0, 1 << i] for i in range(lane_bits - 1)]
    lanes, warp, other = unit[:lane_bits], unit[lane_bits], unit[lane_bits + 1]
    src = LinearLayout({"register": [other, lanes[1], warp], "lane": lanes, "warp": [warp]}, shape)
    dst = LinearLayout({"register": [lanes[0]], "lane": [warp, other] + lanes[2:][::-1], "warp": [lanes[1]]}, shape)
    plan = plan_conversion(src, dst, arch, element_bits, strategy="lds")
    stores = [st for st in plan.steps if st.lds and st.store]
    assert sorted(slot for st in stores for slots, _ in st.accesses() for slot in slots) == [0, 1]
    assert len(stores) == (1 if arch == "gfx1100" else 2)
    assert plan.counts()["s_barrier"] == 1
    check_kernel(plan)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(planning_problems(targets=("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1200", "gfx1250")))
def test_random_problems_run_on_the_interpreter(case):
    """Random layout pairs (broadcast and partial dst layouts among them) on the AMD targets, wave32
    too: the kernel leaves exactly the expected tile (fuzzing like this found dword stores that
    wrote elements the dst does not hold)."""
    src, dst, bits, arch = case[:4]
    plan = plan_conversion(src, dst, arch, bits)
    low = lower_conversion(plan, binary=False)
    tile = distinct_tile(low.kernel.shape, plan.element_bits, seed=1)
    assert np.array_equal(interpret(low.kernel, tile, fill=0x5A), expected_output(plan, tile, fill=0x5A))
