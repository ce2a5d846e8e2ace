"""C++ output of a plan (linlayout.lowering.cpp): the source compiles, and its compiled conversion holds
exactly the plan's instructions.

CUDA: nvcc compiles for sm_80 and sm_90 to PTX; in the marked region every shuffle, ``selp``,
``prmt``, shared access (by width) and barrier is the one the plan's steps name
(``expected_ptx_counts``).  HIP: a HIP-capable clang compiles for gfx942/gfx950; the region's
cross-lane, select, byte-permute, LDS and barrier instructions equal the plan's
(``expected_isa_counts``, the MLIR path's rule) and the MLIR path's own ISA for the same plan.
Compiling is not running: the NVIDIA plans run on a GPU in benchmarks/nvidia.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from linlayout import LayoutError, LinearLayout
from linlayout.lowering.cpp import MARK_MACRO, emit_cpp
from linlayout.lowering.cpp.counts import PTX_KEYS, expected_ptx_counts, ptx_counts
from linlayout.lowering.cpp.toolchain import compile_cuda, compile_hip, find_hip_clang, find_nvcc
from linlayout.lowering.report import FUSED_KEY, PERMLANE16_KEY, PLAN_CHECKED_KEYS, expected_isa_counts, region_counts
from linlayout.synth.convert import plan_conversion
from linlayout.synth.plan import Barrier, Lane, LdsLoad, LdsStore, Mov, PermSelect, Plan, Select

import needs
from repo_data import baseline_cases

nvcc = pytest.mark.skipif(find_nvcc() is None, reason="needs nvcc (the CUDA toolkit) on PATH")
hip_clang = pytest.mark.skipif(find_hip_clang() is None,
                               reason='needs a HIP-capable clang ($LINLAYOUT_HIP_CLANG, clang on PATH, or '
                                      'pip install -e ".[mlir]" for ziglang\'s)')
BITS = {"fp32": 32, "fp16": 16}
LANES32 = np.arange(32)


# ---------------------------------------------------------------------- NVIDIA plans as CUDA
def _units(eb: int) -> tuple[int, int]:
    """(slots, bytes) of one unit of the hand-built plan: a 32-bit register, or a 64-bit slot."""
    return (max(1, 32 // eb), 4) if eb <= 32 else (1, 8)


def _shfl(mode: str, dst: list[int], src: list[int], b, c: int) -> Lane:
    """A shfl.sync lane step with its source lanes from the PTX semantics (linlayout.synth.isa_lanes)."""
    from linlayout.synth.isa_lanes import shfl_sync

    src_lane, _ = shfl_sync(mode, b, c, 32)
    kind = "shfl.sync.idx" if mode == "idx" else f"shfl.sync.{mode}:{b}"
    return Lane(kind, dst, src, src_lane, {"mode": mode, "b": b, "c": c})


def _nvidia_plan(eb: int, arch: str = "sm_90", num_warps: int = 2) -> Plan:
    """Every CUDA step form on 8 units (``_units``): the four shuffles (one in a segment of 8 lanes, one
    with a clamp no intrinsic has), a select, a uniform and a per-lane ``prmt``, shared stores and
    loads of every width the element size allows, a warp barrier and a workgroup barrier.

    A shape for the compiler, not a conversion (the planner's plans are the cases below)."""
    per, unit_bytes = _units(eb)
    u = lambda *ks: [k * per + j for k in ks for j in range(per)]  # noqa: E731 -- slots of units
    dword = lambda k: k * (unit_bytes // 4)  # noqa: E731 -- the first register of unit k
    warp_bytes = 32 * 64
    addr = lambda off: np.stack([LANES32 * 64 + off + w * warp_bytes for w in range(num_warps)])  # noqa: E731
    steps = [
        _shfl("bfly", u(4), u(0), 5, 0x1F),
        _shfl("idx", u(5), u(1), (LANES32 * 3) % 32, 0x1F),
        _shfl("up", u(6), u(2), 2, 0x1800),  # segments of 8 lanes
        _shfl("down", u(7), u(3), 1, 0x1807),  # clamp 7 in segments of 8: inline PTX
        Select(u(0), u(4), u(5), (LANES32 >> 2) & 1, kind="selp"),
        Mov(u(1), u(6), kind="prmt", operands=(dword(6), dword(7)), selector=0x5410, dst_dword=dword(1)),
        PermSelect(u(2), u(6), u(7), LANES32 & 1, (dword(6), dword(7)), 0x7632, 0x3276, dword(2), form="prmt"),
    ]
    stores = [[0, 1, 2, 7]] if unit_bytes == 4 else [[0, 1], [2, 7]]
    for k, units in enumerate(stores):
        steps.append(LdsStore(addr=addr(16 * k), width_bytes=16, src=u(*units)))
    if eb <= 16:  # a sub-register store: the element at byte 2 of unit 3's register
        steps.append(LdsStore(addr=addr(40), width_bytes=eb // 8, src=[3 * per + 16 // eb], d16_hi=True))
    steps.append(Barrier(scope="warp"))
    steps.append(Barrier())
    steps.append(LdsLoad(addr=addr(8), width_bytes=8, dst=u(*range(8 // unit_bytes))))
    if unit_bytes == 4:
        steps.append(LdsLoad(addr=addr(20), width_bytes=4, dst=u(2)))
    if eb <= 16:  # sub-register loads into unit 3 (zero-extended, the other bytes kept)
        steps.append(LdsLoad(addr=addr(40), width_bytes=eb // 8, dst=[3 * per]))
    bits = per.bit_length() - 1
    layout = LinearLayout({"register": [[1 << k] for k in range(3 + bits)],
                           "lane": [[1 << k] for k in range(3 + bits, 8 + bits)],
                           "warp": [[1 << (8 + bits)]]}, [("dim0", 1 << (9 + bits))])
    return Plan(arch=arch, wave_size=32, num_warps=num_warps, element_bits=eb, src=layout, dst=layout,
                slots_in=8 * per, slots_out=8 * per, steps=steps, strategy="hand", lds_bytes=num_warps * warp_bytes)


def _check_cuda(plan: Plan, arch: str, unmarked: bool = False) -> str:
    """Compile ``plan``'s CUDA for ``arch`` and check its PTX against the plan (``unmarked``: also the
    build without region markers); returns the PTX."""
    want = expected_ptx_counts(plan)
    ptx = compile_cuda(emit_cpp(plan), arch, strict=True)  # no warning either
    got = ptx_counts(ptx, "conv")
    assert {k: got.get(k, 0) for k in want} == want
    assert {k for k, v in got.items() if v and k.startswith(("ld.shared.", "st.shared."))} == \
        {k for k, v in want.items() if v and k.startswith(("ld.shared.", "st.shared."))}
    assert ".local" not in ptx  # the register arrays stay in registers
    if not unmarked:
        return ptx
    whole = ptx_counts(compile_cuda(emit_cpp(plan), arch, mark=False))  # no markers: the same code
    for k in PTX_KEYS:  # the setup may compute a selector with selp or prmt, nothing else adds these
        assert whole[k] == want[k] if k not in ("selp", "prmt") else whole[k] >= want[k], k
    return ptx


@nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("eb", [8, 16, 32, 64])
def test_cuda_every_step_form(arch, eb):
    ptx = _check_cuda(_nvidia_plan(eb, arch), arch, unmarked=True)
    assert "shfl.sync.down.b32 %r" in ptx and ", 0x1807, 0xffffffff;" in ptx  # the inline PTX (c = 0x1807)


def _mma_cases():
    from test_convert_nvidia import _mma_pairs

    return [(name, src, dst, eb) for name, src, dst, eb in _mma_pairs()]


@nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("case", range(len(_mma_cases())))
def test_cuda_mma_fragment_plans(arch, case):
    _, src, dst, eb = _mma_cases()[case]
    plan = plan_conversion(src, dst, arch, eb)
    _check_cuda(plan, arch, unmarked=case % 4 == 0)
    _assert_sums_are_the_plans_counts(plan)


def _swapped_pair(rng, n_bits: int, warp_bits: int) -> tuple[LinearLayout, LinearLayout]:
    """A 1-D tile of ``2**n_bits`` elements in a random permutation layout (5 lane bits, ``warp_bits``
    warp bits, the rest registers) and the same layout with 1 to 3 pairs of bases swapped."""
    order = [int(k) for k in rng.permutation(n_bits)]
    swapped = list(order)
    for _ in range(int(rng.integers(1, 4))):
        i, j = (int(k) for k in rng.choice(n_bits, 2, replace=False))
        swapped[i], swapped[j] = swapped[j], swapped[i]
    reg_bits = n_bits - 5 - warp_bits

    def layout(bits: list[int]) -> LinearLayout:
        cols = [[1 << k] for k in bits]
        return LinearLayout({"register": cols[:reg_bits], "lane": cols[reg_bits:reg_bits + 5],
                             "warp": cols[reg_bits + 5:]}, [("dim0", 1 << n_bits)])

    return layout(order), layout(swapped)


@nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("eb", [8, 16, 32, 64])
def test_cuda_random_plans(arch, eb):
    rng = np.random.default_rng(eb + (7 if arch == "sm_90" else 0))
    for n_bits, warp_bits in ((7, 0), (8, 1), (9, 2), (10, 1)):
        plan = plan_conversion(*_swapped_pair(rng, n_bits, warp_bits), arch, eb)
        _check_cuda(plan, arch)
        _assert_sums_are_the_plans_counts(plan)


def _assert_sums_are_the_plans_counts(plan: Plan) -> None:
    want, counts = expected_ptx_counts(plan), plan.counts()
    assert sum(want[f"shfl.sync.{m}"] for m in ("idx", "bfly", "up", "down")) == counts["shfl"]
    assert (want["selp"], want["prmt"], want["st.shared"], want["ld.shared"], want["bar.sync"],
            want["bar.warp.sync"]) == (counts["selp"], counts["prmt"], counts["lds_write"], counts["lds_read"],
                                       counts["bar.sync"], counts["bar.warp.sync"])


def test_expected_ptx_counts_follow_the_steps():
    plan = _nvidia_plan(64)
    want = expected_ptx_counts(plan)
    # 64-bit elements: a register step runs on both halves, a byte permute is one register
    assert [want[f"shfl.sync.{m}"] for m in ("idx", "bfly", "up", "down")] == [2, 2, 2, 2]
    assert (want["selp"], want["prmt"], want["st.shared"], want["ld.shared"], want["bar.sync"],
            want["bar.warp.sync"]) == (2, 2, 2, 1, 1, 1)
    assert (want["st.shared.b128"], want["ld.shared.b64"]) == (2, 1)
    for eb in (8, 16, 32):  # (the plan counts a prmt of 64-bit elements twice, a register step; none is made)
        _assert_sums_are_the_plans_counts(_nvidia_plan(eb))


def test_the_blog_example_as_cuda():
    from linlayout.encodings.nvidia import NvidiaMma

    mma = NvidiaMma(2, (1, 1), (16, 8))
    plan = plan_conversion(mma.to_linear_layout((16, 32)), mma.dot_operand_layout(0, 4, (16, 32)), "sm_90", 8)
    text = emit_cpp(plan).source
    c = plan.counts()
    assert text.count("__shfl_") == c["shfl"] and text.count(" ? ") == c["selp"]
    assert text.count("__byte_perm(") == c["prmt"] and "__shared__" not in text


def _c_value(expr: str, lane: int, warp: int) -> int:
    """The value of one of the emitter's C++ integer expressions (``&``, ``^``, ``<<``, ``>>``, ``*``,
    ``==``, ``?:`` on unsigned literals and the names ``lane`` and ``warp``) at one lane and warp."""
    import re

    py = re.sub(r"\b(0x[0-9a-f]+|\d+)(ull|u)\b", r"\1", expr)
    py = re.sub(r"\(([^?()]+) \? ([^:()]+) : ", r"((\2) if (\1) else ", py)  # (c ? a : b) -> ((a) if (c) else b)
    return eval(py, {}, {"lane": lane, "warp": warp}) & 0xFFFFFFFFFFFFFFFF


@pytest.mark.parametrize("arch, masks", [
    ("sm_90", [0, 0, 2**32 - 1, 2**32 - 1, 0, 0, 2**32 - 1, 2**32 - 1]),
    ("sm_90", [0, 0, 0, 0, 2**32 - 1, 2**32 - 1, 2**32 - 1, 2**32 - 1]),
    ("sm_90", [5, 5, 5, 5]), ("sm_80", [1, 2, 1, 2]),
    ("gfx942", [2**64 - 1, 3, 3, 2**63]), ("gfx950", [7, 7]),
])
def test_warp_masks_pick_each_warps_own(arch, masks):
    from linlayout.lowering.cpp import dialect_for

    expr = dialect_for(arch).mask(masks, "warp")
    assert [_c_value(expr, 0, w) for w in range(len(masks))] == masks


@pytest.mark.parametrize("seed", range(6))
def test_lane_values_are_their_tables(seed):
    """Every per-lane value the prologue computes (affine tables, reused ones plus their constant
    offsets) equals its table in every lane of every warp."""
    from linlayout.lowering.cpp.dialect import dialect_for
    from linlayout.lowering.cpp.lane_exprs import CppLaneValues

    rng = np.random.default_rng(seed)
    warps, wave = (4, 32) if seed % 2 else (2, 64)
    d = dialect_for("sm_90" if wave == 32 else "gfx942")
    values = CppLaneValues(d, "f", warps, "lane", "warp", "tid")
    lane, warp = np.arange(wave)[None, :], np.arange(warps)[:, None]
    full = lambda t: np.broadcast_to(t, (warps, wave))  # noqa: E731
    tables = [full((lane * 16) ^ (warp << 11)), full((lane * 16) ^ (warp << 11) ^ 0x8000),  # reuse, offset 0x8000
              full(((lane >> 1) & 1) * 0x1010 ^ (lane & 1) << 5), rng.integers(0, 1 << 20, (warps, wave)),  # a table
              full(lane ^ 5)]
    names = [values.value_of(t, "t", max_delta=1 << 16) for t in tables]
    env = {}
    for ln in values.lines:  # const unsigned aK = EXPR;
        name, expr = ln[len("const unsigned "):-1].split(" = ", 1)
        env[name] = expr
    for t, (name, delta) in zip(tables, names):
        for w in range(warps):
            for l in range(wave):
                if name.startswith("a") and "_table" in env[name]:
                    continue  # read from a constant array: its data is the table itself
                got = _c_value(env.get(name, name), l, w) + delta
                assert got == t[w, l], (name, env.get(name), w, l)
    assert names[1] == (names[0][0], 0x8000)


def test_shuffle_operands_are_the_steps():
    text = emit_cpp(_nvidia_plan(32)).source
    assert "__shfl_xor_sync(0xffffffffu, v0, 5u)" in text
    assert "__shfl_up_sync(0xffffffffu, v2, 2u, 8)" in text  # c = 0x1800: segments of 8 lanes
    assert 'asm("shfl.sync.down.b32 %0, %1, %2, 0x1807, 0xffffffff;"' in text
    assert "__byte_perm(" in text and "__syncthreads();" in text


def test_the_device_function_and_test_kernel_signatures():
    plan = _nvidia_plan(16)
    src = emit_cpp(plan, name="fp16_swap")
    assert (src.dialect, src.function_name, src.kernel_name) == ("cuda", "fp16_swap", "fp16_swap_test")
    assert (src.block_threads, src.slots_in, src.slots_out, src.element_bits) == (64, 16, 16, 16)
    assert (src.tile_in, src.tile_out, src.element_type) == (64 * 16, 64 * 16, "uint16_t")
    assert "void fp16_swap(const uint16_t (&src)[16], uint16_t (&dst)[16])" in src.source
    assert 'extern "C" __global__ void __launch_bounds__(64) fp16_swap_test(const uint16_t* in, uint16_t* out)' \
        in src.source
    assert "blockIdx.x * 1024u + t * 16u" in src.source  # in[b * tile_in + t * slots_in + r]
    assert src.source.count(f"#ifdef {MARK_MACRO}") == 2


@pytest.mark.parametrize("num_warps, reads", [(1, ("tid", "lane")), (2, ("tid", "lane", "warp"))])
def test_only_the_ids_the_function_reads_are_declared(num_warps, reads):
    """A one-warp plan never reads the warp id, so it is not declared (nvcc warns about an unused variable)."""
    source = emit_cpp(_nvidia_plan(32, num_warps=num_warps)).source
    declared = tuple(n for n in ("tid", "lane", "warp") if f"const unsigned {n} = " in source)
    assert declared == reads


@nvcc
def test_one_warp_cuda_compiles_without_warnings():
    plan = _nvidia_plan(16, num_warps=1)
    compile_cuda(emit_cpp(plan), "sm_90", strict=True)


def test_unsupported_combinations_are_one_layout_error_naming_the_target():
    with pytest.raises(LayoutError, match="hip C\\+\\+ does not run on sm_90"):
        emit_cpp(_nvidia_plan(32), dialect="hip")
    amd = plan_conversion(*_baseline_layouts(0), "gfx942", 32)
    with pytest.raises(LayoutError, match="cuda C\\+\\+ does not run on gfx942"):
        emit_cpp(amd, dialect="cuda")
    with pytest.raises(LayoutError, match="dialect must be one of cuda, hip"):
        emit_cpp(amd, dialect="opencl")
    dpp = _nvidia_plan(32)
    dpp.steps[0] = Lane("dpp:quad_perm:[1,0,3,2]", [4], [0], LANES32 ^ 1, {"ctrl": 0xB1})
    with pytest.raises(LayoutError, match="a DPP move has no CUDA form for sm_90"):
        emit_cpp(dpp)
    with pytest.raises(LayoutError, match="no CUDA form for sm_90"):
        expected_ptx_counts(dpp)
    prmt_on_amd = _sample_plan(Mov([0, 1], [2, 3], kind="prmt", operands=(0, 1), selector=0x5410, dst_dword=0))
    with pytest.raises(LayoutError, match="prmt.b32 has no HIP form for gfx950"):
        emit_cpp(prmt_on_amd)
    with pytest.raises(LayoutError, match="C identifier"):
        emit_cpp(amd, name="two words")
    unpacked = plan_conversion(*_baseline_layouts(0), "gfx942", 16, dst_unpacked=True)
    assert unpacked.dst_unpacked
    with pytest.raises(LayoutError, match="C\\+\\+ output needs a packed dst: a dst_unpacked plan leaves"):
        emit_cpp(unpacked)
    emit_cpp(plan_conversion(*_baseline_layouts(0), "gfx942", 16))  # (the packed dst: emitted)


# ---------------------------------------------------------------------- AMD plans as HIP
def _baseline_layouts(idx: int) -> tuple[LinearLayout, LinearLayout]:
    c = baseline_cases()[idx]
    return LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"])


def _baseline_plan(idx: int) -> Plan:
    c = baseline_cases()[idx]
    return plan_conversion(*_baseline_layouts(idx), c["arch"], BITS[c["dtype"]])


def _hip_region(plan: Plan) -> tuple[str, dict[str, int]]:
    isa = compile_hip(emit_cpp(plan), plan.arch, strict=True)
    return isa, region_counts(isa, "conv")


def _assert_plan_counts(plan: Plan, counts: dict[str, int]) -> None:
    want = expected_isa_counts(plan)
    # LLVM does not fuse update.dpp + select into v_cndmask_b32_dpp on gfx9 (as on the MLIR path)
    assert {k: counts[k] for k in want if k != FUSED_KEY} == {k: v for k, v in want.items() if k != FUSED_KEY}
    assert counts[FUSED_KEY] == 0
    assert counts["vmem"] == 0 and counts["smem"] == 0  # the test kernel's loads and stores stay outside


def test_hip_barrier_free_round_trip_orders_its_stores_before_its_loads():
    """The HIP form of test_emit_conversion's barrier-free round trip (AMD corpus index 273: 1 store, 2
    loads, no barrier): one ``__builtin_amdgcn_wave_barrier()`` between the store and the first load."""
    from linlayout.cli.bench import CORPORA, kernel_plan

    case = json.loads(CORPORA["amd"].read_text())["cases"][273]
    plan = kernel_plan(LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"]), "gfx942", 16)
    lines = emit_cpp(plan).source.splitlines()
    kinds = ["wave" if "wave_barrier" in ln else "store" if ln.lstrip().startswith("*reinterpret_cast")
             else "load" if "lds + " in ln else None for ln in lines]
    assert [k for k in kinds if k] == ["store", "wave", "load", "load"]


@hip_clang
@pytest.mark.parametrize("idx", range(48))
def test_hip_baseline_region_holds_exactly_the_plans_instructions(idx):
    plan = _baseline_plan(idx)
    isa, counts = _hip_region(plan)
    _assert_plan_counts(plan, counts)
    assert "; ScratchSize: 0" in isa  # the register arrays stay in registers


@hip_clang
@needs.mlir
@pytest.mark.parametrize("idx", range(0, 48, 4))
def test_hip_lane_instructions_equal_the_mlir_paths(idx, tmp_path, monkeypatch):
    from linlayout.lowering.conversion import lower_conversion

    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    plan = _baseline_plan(idx)
    mlir = lower_conversion(plan).report["isa_counts"]
    _, hip = _hip_region(plan)
    assert {k: hip[k] for k in PLAN_CHECKED_KEYS + (FUSED_KEY,)} == {k: mlir[k] for k in PLAN_CHECKED_KEYS + (FUSED_KEY,)}


@hip_clang
@pytest.mark.parametrize("seed", [0, 2, 5, 11, 15, 23, 35, 43, 52, 85, 90, 171])
def test_hip_random_plans(seed):
    from test_emit_conversion import random_problem  # every step kind the planner makes, 8 to 64 bits

    src, dst, eb, arch = random_problem(seed)
    plan = plan_conversion(src, dst, arch, eb)
    _assert_plan_counts(plan, _hip_region(plan)[1])


def _sample_plan(step) -> Plan:
    """One sample step of tests/test_plan_steps (written for 16-bit elements, 8-bit for the 8-bit
    transpose load) in a gfx950 plan whose 8 registers all hold values."""
    eb = 8 if getattr(step, "transpose", 0) == 8 else 16
    per = 32 // eb
    layout = LinearLayout({"register": [[1 << k] for k in range(3 + per.bit_length() - 1)]}, [("dim0", 8 * per)])
    return Plan(arch="gfx950", wave_size=64, num_warps=2, element_bits=eb, src=layout, dst=layout,
                slots_in=8 * per, slots_out=8 * per, steps=[step], lds_bytes=1024)


@hip_clang
@pytest.mark.parametrize("k", range(22))
def test_hip_every_step_form(k):
    from test_plan_steps import _samples  # one step of every kind and form

    samples = _samples()
    assert len(samples) == 22
    plan = _sample_plan(samples[k])
    _assert_plan_counts(plan, _hip_region(plan)[1])


@hip_clang
@pytest.mark.parametrize("arch", ["gfx1100", "gfx1200", "gfx1250"])
@pytest.mark.parametrize("eb", [8, 16, 32, 64])
def test_hip_wave32_plans(arch, eb):
    """The region's instructions are the plan's (``region_counts``: a VOPD line's two halves each count,
    ``v_permlane{,x}16_b32`` as ``permlane16``, gfx12's barrier as its two instructions)."""
    rng = np.random.default_rng(eb * 5 + int(arch[3:]))
    for n_bits, warp_bits in ((6, 0), (7, 1), (8, 0), (9, 2)):
        plan = plan_conversion(*_swapped_pair(rng, n_bits, warp_bits), arch, eb)
        isa, got = _hip_region(plan)
        want = {k: v for k, v in expected_isa_counts(plan).items() if k != FUSED_KEY}
        assert {k: got[k] for k in want} == want, plan.pseudo_asm()
        assert "; ScratchSize: 0" in isa


@hip_clang
@needs.mlir
@pytest.mark.parametrize("arch", ["gfx1100", "gfx1200", "gfx1250"])
def test_hip_wave32_lane_instructions_equal_the_mlir_paths(arch, tmp_path, monkeypatch):
    from linlayout.lowering.conversion import lower_conversion

    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    rng = np.random.default_rng(int(arch[3:]))
    keys = PLAN_CHECKED_KEYS + (PERMLANE16_KEY,)
    for n_bits, warp_bits, eb in ((7, 1, 16), (9, 2, 8)):
        plan = plan_conversion(*_swapped_pair(rng, n_bits, warp_bits), arch, eb)
        mlir = lower_conversion(plan).report["isa_counts"]
        hip = _hip_region(plan)[1]
        assert {k: hip[k] for k in keys} == {k: mlir[k] for k in keys}, plan.pseudo_asm()


@hip_clang
@pytest.mark.parametrize("key", [0, 1])
def test_hip_gfx1250_transpose_loads(key):
    """gfx1250's corpus plans that read a WMMA operand with ``ds_load_tr16_b128`` (bf16) or
    ``ds_load_tr8_b64`` (fp8) compile as HIP, their region holding exactly the plan's instructions,
    the transpose loads among them."""
    from test_transpose_loads import COMPILED_CASES, TRANSPOSED_CASES, _corpus_case, _corpus_plan

    case = COMPILED_CASES[key]
    plan = _corpus_plan(_corpus_case(*case))
    isa, got = _hip_region(plan)
    want = {k: v for k, v in expected_isa_counts(plan).items() if k != FUSED_KEY}
    assert want["lds_read_tr"] == plan.counts()["lds_read_tr"] > 0
    assert {k: got[k] for k in want} == want, plan.pseudo_asm()
    assert isa.count(f"\t{TRANSPOSED_CASES[case][0]} ") == want["lds_read_tr"]


@hip_clang
def test_hip_gfx950_only_steps_are_refused_for_gfx942():
    from test_plan_steps import _samples

    swap = next(s for s in _samples() if type(s).__name__ == "PermlaneSwap")
    plan = _sample_plan(swap)
    plan.arch = "gfx942"
    with pytest.raises(LayoutError, match="v_permlane32_swap_b32 has no HIP form for gfx942"):
        emit_cpp(plan)


@hip_clang
def test_hip_test_kernel_declares_its_threads():
    """The HIP test kernel of an 8-warp wave64 plan declares its 512 threads
    (``amdgpu_flat_work_group_size(1, 512)``) and its code object states them: the MLIR path's kernels
    had to declare theirs (``known_block_size``), a kernel declaring none there being taken for at most 256."""
    warps = [[2 << 6], [4 << 6], [8 << 6]]
    src = LinearLayout({"register": [[1]], "lane": [[2 << i] for i in range(6)], "warp": warps}, [("dim0", 1024)])
    dst = LinearLayout({"register": [[1]], "lane": [[2 << i] for i in range(6)], "warp": warps[::-1]}, [("dim0", 1024)])
    source = emit_cpp(plan_conversion(src, dst, "gfx942", 32))
    assert source.block_threads == 512
    assert "__attribute__((amdgpu_flat_work_group_size(1, 512))) linlayout_convert_test(" in source.source
    assert ".max_flat_workgroup_size: 512\n" in compile_hip(source, "gfx942", strict=True)


# ---------------------------------------------------------------------- CLI
def test_cli_emits_hip_and_refuses_cuda_for_an_amd_target(tmp_path, capsys):
    from linlayout.cli import main

    src, dst = (json.dumps(x.to_json()) for x in _baseline_layouts(40))
    out = tmp_path / "conv.hip"
    code = main(["convert", "--src", src, "--dst", dst, "--arch", "gfx950", "--dtype", "fp16", "--emit", "hip",
                 "-o", str(out), "--json"])
    res = json.loads(capsys.readouterr().out)
    assert code == 0 and out.read_text() == emit_cpp(_baseline_plan(40)).source
    assert (res["emit"], res["function"], res["kernel"], res["block_threads"]) == \
        ("hip", "linlayout_convert", "linlayout_convert_test", 256)
    code = main(["convert", "--src", src, "--dst", dst, "--arch", "gfx950", "--dtype", "fp16", "--emit", "cuda",
                 "-o", str(tmp_path / "conv.cu")])
    err = capsys.readouterr().err
    assert code == 2 and "cuda C++ does not run on gfx950" in err and not (tmp_path / "conv.cu").exists()


def test_cli_emits_cuda_for_sm90(tmp_path, capsys):
    from linlayout.cli import main
    from linlayout.encodings.nvidia import NvidiaMma

    mma = NvidiaMma(2, (1, 1), (16, 8))
    src, dst = mma.to_linear_layout((16, 32)), mma.dot_operand_layout(0, 4, (16, 32))
    out = tmp_path / "conv.cu"
    code = main(["convert", "--src", json.dumps(src.to_json()), "--dst", json.dumps(dst.to_json()), "--arch", "sm_90",
                 "--dtype", "fp8", "--emit", "cuda", "-o", str(out), "--json"])
    res = json.loads(capsys.readouterr().out)
    assert code == 0 and out.read_text() == emit_cpp(plan_conversion(src, dst, "sm_90", 8)).source
    assert (res["emit"], res["block_threads"], res["slots_in"], res["element_bits"]) == ("cuda", 32, 16, 8)


def test_bit_runs_of_affine_columns():
    """Consecutive bits moved by one shift are one run; a column of several bits is a run of its own (shift None);
    zero columns none."""
    from linlayout.lowering.cpp.lane_exprs import bit_runs

    # bits 0-1 -> 4-5 (shift 4), bit 2 zero, bits 3-4 -> 1-2 (shift -2), bit 5 a general column
    assert bit_runs((0x10, 0x20, 0, 0x2, 0x4, 0x3)) == [(0, 2, 4), (3, 2, -2), (5, 1, None)]
    assert bit_runs((1, 2, 4, 8, 16, 32)) == [(0, 6, 0)]
    assert bit_runs((0,) * 5) == []
