"""linlayout inside FlyDSL kernels: convert in place, compile without a GPU, run on the interpreter.

The GEMM of :mod:`linlayout.flydsl.gemm` stages A through LDS in linlayout's synthesized layout
(given to FlyDSL as a composed layout) and is checked against torch and against that layout.
The flash-attention block of :mod:`linlayout.flydsl.attention` (QK^T, P converted by
``linlayout.flydsl.convert``, PV) is compiled by FlyDSL for gfx942 and gfx950 with every plan
strategy, run on the wave interpreter from CPU torch tensors and compared with torch; its ISA
between the two MFMAs holds exactly the plan's instructions.
"""

from __future__ import annotations

import re

import pytest

from tests import needs

needs.require("torch", "flydsl")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from linlayout import LayoutError  # noqa: E402
from linlayout.flydsl import compile_kernel, compile_only, interpret  # noqa: E402
from linlayout.flydsl.attention import attention_block, p_layouts  # noqa: E402
from linlayout.flydsl import convert  # noqa: E402
from linlayout.flydsl.convert import plan_for  # noqa: E402
from linlayout.flydsl.target import target_arch  # noqa: E402
from linlayout.flydsl_text import from_flydsl, to_flydsl_text  # noqa: E402
from linlayout.flydsl.gemm import gemm_kernel, shared_layout  # noqa: E402
from linlayout.lowering.isa import isa_counts  # noqa: E402
from linlayout.lowering.report import FUSED_KEY, expected_isa_counts, fused_dpp_count, plan_isa_differences  # noqa: E402

CASES = [(arch, strategy) for arch in ("gfx942", "gfx950") for strategy in ("auto", "registers", "lds")]


def _inputs(seed: int):
    g = torch.Generator().manual_seed(seed)
    q, k, vt = (torch.randn(16, 16, generator=g).half() for _ in range(3))
    return q, k, vt, torch.zeros(16, 16)


@pytest.mark.parametrize("arch,strategy", CASES)
def test_attention_block_matches_torch(arch, strategy):
    q, k, vt, o = _inputs(1)
    interpret(attention_block(strategy), q, k, vt, o, arch=arch)
    ref = (q.float() @ k.float().T).half().float() @ vt.float().T
    assert (o - ref).abs().max().item() < 1e-2  # f32 sums in another order; a wrong P errs by ~50


def test_without_the_conversion_the_block_is_wrong():
    """P stored in the accumulator's register order (the identity in place of ``convert``) is wrong:
    the test above can fail."""
    src, _ = p_layouts("gfx942")
    q, k, vt, o = _inputs(1)
    interpret(attention_block("auto", dst=src), q, k, vt, o, arch="gfx942")
    ref = (q.float() @ k.float().T).half().float() @ vt.float().T
    assert (o - ref).abs().max().item() > 1.0


def _between_mfmas(isa: str) -> str:
    lines = isa.splitlines()
    at = [i for i, ln in enumerate(lines) if re.match(r"\s*v_mfma", ln)]
    assert len(at) == 2, at
    return "\n".join(lines[at[0] + 1:at[1]])


@pytest.mark.parametrize("arch,strategy", CASES)
def test_isa_between_the_mfmas_is_the_plan(arch, strategy):
    src, dst = p_layouts(arch)
    plan = plan_for(src, dst, 16, arch=arch, strategy=strategy)
    (kernel,) = compile_kernel(attention_block(strategy), *_inputs(0), arch=arch)
    counts = isa_counts(_between_mfmas(kernel.isa))
    counts[FUSED_KEY] = fused_dpp_count(_between_mfmas(kernel.isa), None)
    assert plan_isa_differences(plan, counts) == {}
    assert any(expected_isa_counts(plan).values())  # the plan moves data: the comparison can fail
    assert re.findall(r"\.globl\s+(\S+)", kernel.isa) == [kernel.name]  # no helper symbol left behind
    assert "func.call" not in kernel.module


def test_flydsl_kernels_declare_the_threads_they_are_launched_with():
    """FlyDSL declares a kernel's threads as linlayout's kernels do (``known_block_size``, which
    lowering.emit.builder.kernel_module writes): it takes them from the static ``launch(block=...)`` (64 here),
    the code object states them (``.max_flat_workgroup_size``, not LLVM's 256 of a kernel declaring none) and
    the interpreter refuses a run of other threads."""
    from linlayout.lowering.interpreter import InterpreterError

    g = torch.Generator().manual_seed(3)
    gemm_args = (torch.randn(16, 64, generator=g).half(), torch.randn(16, 64, generator=g).half(),
                 torch.zeros(16, 16), torch.zeros(1024).half())
    for fn, args in ((attention_block("auto"), _inputs(0)), (gemm_kernel("gfx942"), gemm_args)):
        (kernel,) = compile_kernel(fn, *args, arch="gfx942")
        declared = re.search(rf"gpu\.func @{re.escape(kernel.name)}\(.*\bkernel attributes \{{(.*)\}} \{{",
                             kernel.module)
        assert declared and "known_block_size = array<i32: 64, 1, 1>" in declared.group(1), kernel.module[:2000]
        assert re.findall(r"\.max_flat_workgroup_size: (\d+)", kernel.isa) == ["64"]
    with pytest.raises(InterpreterError, match=re.escape("declares known_block_size = (64, 1, 1), launched with "
                                                         "(128, 1, 1)")):
        interpret(attention_block("auto"), *_inputs(0), arch="gfx942", block=(128, 1, 1))


def test_compile_only_restores_the_environment(monkeypatch):
    monkeypatch.delenv("COMPILE_ONLY", raising=False)
    monkeypatch.setenv("ARCH", "gfx90a")
    with compile_only("gfx950"):
        import os
        assert os.environ["COMPILE_ONLY"] == "1" and os.environ["ARCH"] == "gfx950"
        assert os.access(os.path.join(os.environ["ROCM_PATH"], "llvm", "bin", "ld.lld"), os.X_OK)
    import os
    assert "COMPILE_ONLY" not in os.environ and os.environ["ARCH"] == "gfx90a"
    with pytest.raises(LayoutError):
        with compile_only("gfx1100"):
            pass


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_gemm_through_the_synthesized_lds_layout(arch):
    """C = A B^T matches torch, and the LDS tile FlyDSL wrote through the composed layout is
    exactly linlayout's shared layout (``Image[offset] = A[shared(offset)]``)."""
    res, full = shared_layout(arch)
    assert res.certified and res.total_cycles == res.lower_bound_cycles
    g = torch.Generator().manual_seed(2)
    a, b = torch.randn(16, 64, generator=g).half(), torch.randn(16, 64, generator=g).half()
    c, image = torch.zeros(16, 16), torch.zeros(1024).half()
    interpret(gemm_kernel(arch), a, b, c, image, arch=arch)
    assert (c - a.float() @ b.float().T).abs().max().item() < 1e-2
    coords = full.apply({"offset": np.arange(1024)})
    assert torch.equal(image, a[torch.from_numpy(np.asarray(coords["dim0"])),
                                torch.from_numpy(np.asarray(coords["dim1"]))])


@pytest.mark.parametrize("arch,text", [("gfx942", "ComposedLayout<S<2,4,2> o 0 o (16,(4,16)):(4,(1,64))>"),
                                       ("gfx950", "ComposedLayout<S<1,4,3> o 0 o (16,(4,16)):(4,(1,64))>")])
def test_gemm_hands_flydsl_the_synthesized_layout(arch, text):
    """The composed layout the GEMM gives FlyDSL (``to_flydsl``'s text) reads back as linlayout's
    shared layout of the tile, and differs between the arches (their bank models differ)."""
    full = shared_layout(arch)[1]
    assert to_flydsl_text(full) == text
    assert from_flydsl(text, "smem") == full


def test_target_arch_follows_flydsl_compile_target():
    for arch in ("gfx950", "gfx942"):
        with compile_only(arch):
            assert target_arch() == arch


def test_convert_reads_flydsl_layout_text():
    """src and dst as FlyDSL prints the MFMA's C and A thread-value layouts (``tv:MxN:`` text)
    give the plan of the catalog's layouts."""
    src, dst = p_layouts("gfx942")
    plan = plan_for("tv:16x16:Layout<((16,4),(4,1)):((16,4),(1,16))>", "tv:16x16:Layout<((16,4),4):((1,64),16)>",
                    16, arch="gfx942")
    assert (plan.src, plan.dst) == (src, dst)
    assert plan.dumps() == plan_for(src, dst, 16, arch="gfx942").dumps()


def test_convert_errors():
    src, dst = p_layouts("gfx942")
    with pytest.raises(LayoutError, match="FlyDSL Vector"):
        convert([1.0, 2.0], src, dst)
    with pytest.raises(LayoutError, match="src: cannot parse layout 'not a layout'"):
        plan_for("not a layout", dst, 16, arch="gfx942")
    with pytest.raises(LayoutError, match="src: layout_of reads FlyDSL layouts.*, not int"):
        plan_for(3, dst, 16, arch="gfx942")
    with pytest.raises(LayoutError, match=r"dst: a pair \(FlyDSL object, reading\)"):
        plan_for(src, (dst, "A", 1), 16, arch="gfx942")
    # the A layout has 4 registers per lane; a vector of 8 is refused while FlyDSL traces the kernel
    with pytest.raises(LayoutError, match="4 registers per lane, values has 8"):
        compile_kernel(_convert_eight(src, dst), torch.zeros(64, 8).half(), arch="gfx942")


def _convert_eight(src, dst):
    import flydsl.compiler as flyc
    import flydsl.expr as fx
    from flydsl.expr.typing import Vector

    @flyc.kernel
    def k(X: fx.Tensor):
        convert(Vector.filled(8, 0.0, fx.Float16), src, dst)

    @flyc.jit
    def run(X: fx.Tensor):
        k(X).launch(grid=(1, 1, 1), block=(64, 1, 1))

    return run


def _p_kernel(threads: int):
    """A ``@flyc.jit`` function launching a kernel of ``threads`` threads that converts one MFMA C fragment to its A
    layout (``convert``, strategy ``lds``): every wave its own copy."""
    import flydsl.compiler as flyc
    import flydsl.expr as fx

    @flyc.kernel
    def p_only(O: fx.Tensor):
        bO = fx.slice(fx.zipped_divide(fx.rocdl.make_buffer_tensor(O), (16, 16)), (None, 0))
        tiled = fx.make_tiled_mma(fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 16, fx.Float16)),
                                  fx.make_layout((1, 1, 1), (0, 0, 0)))
        frag_s = tiled.thr_slice(fx.thread_idx.x).make_fragment_C(bO)
        frag_s.fill(0)
        convert(frag_s.load().to(fx.Float16), (tiled, "C"), (tiled, "A"), strategy="lds")

    @flyc.jit
    def run(O: fx.Tensor):
        p_only(O).launch(grid=(1, 1, 1), block=(threads, 1, 1))

    return run


def test_convert_counts_the_setup_of_the_kernels_waves(monkeypatch):
    """``convert`` plans for the kernel it is traced in (the threads its ``gpu.func`` declares, ``known_block_size``):
    one-warp layouts in a kernel of one wave (64 threads) take the one-wave setup estimate; in a kernel of two (128)
    the plan covers both waves, each converting its own fragment (``for_kernel``: two warps, the second's elements a
    second copy of the tile), with the two-warp estimate, whose addresses tell the waves' LDS bytes apart.  (The
    models miss what LLVM shares with the kernel's own lane id: docs/benchmarks.md "Session 24: fold31".)"""
    import sys

    module = sys.modules["linlayout.flydsl.convert"]
    planned = []

    def recorded(*args, **kwargs):
        plan = plan_for(*args, **kwargs)
        planned.append(plan)
        return plan

    monkeypatch.setattr(module, "plan_for", recorded)
    for threads in (64, 128):
        compile_kernel(_p_kernel(threads), torch.zeros(16, 16), arch="gfx942")
    assert [(p.num_warps, p.one_wave, p.overhead) for p in planned] == [
        (1, True, {"valu_lds_addr": 10}), (2, False, {"valu_lds_addr": 15})]


def _own_fragments(block, src, dst, strategy: str):
    """A ``@flyc.jit`` ``run(X, Y)`` launching ``block`` threads (an int: declared; a 3-tuple: declared (x, y, z)
    sizes, thread ``x + bx (y + by z)``; ``"dynamic"``: a launch argument ``n``, no block size declared), each thread
    converting its own row of X (int32, ``src``'s registers) to its row of Y (``dst``'s): every group of the layouts'
    waves holds different data."""
    import flydsl.compiler as flyc
    import flydsl.expr as fx
    from flydsl.expr.typing import Vector

    n_in, n_out = src.in_dim_size("register"), dst.in_dim_size("register")
    bx, by, _ = block if isinstance(block, tuple) else (0, 0, 0)

    @flyc.kernel
    def own(X: fx.Tensor, Y: fx.Tensor):
        tid = fx.thread_idx.x
        if bx:
            tid = tid + (fx.thread_idx.y + fx.thread_idx.z * fx.Int32(by)) * fx.Int32(bx)
        x, y = fx.get_iter(X), fx.get_iter(Y)
        row = Vector.from_elements([fx.ptr_load(x + (tid * fx.Int32(n_in) + fx.Int32(r))) for r in range(n_in)],
                                   fx.Int32)
        out = convert(row, src, dst, strategy=strategy)
        for r in range(n_out):
            fx.ptr_store(out[r], y + (tid * fx.Int32(n_out) + fx.Int32(r)))

    if block == "dynamic":
        @flyc.jit
        def run(X: fx.Tensor, Y: fx.Tensor, n: fx.Int32):
            own(X, Y).launch(grid=(1, 1, 1), block=(n, 1, 1))
    else:
        @flyc.jit
        def run(X: fx.Tensor, Y: fx.Tensor):
            own(X, Y).launch(grid=(1, 1, 1), block=block if isinstance(block, tuple) else (block, 1, 1))

    return run


def _converted(x: np.ndarray, src, dst) -> np.ndarray:
    """Rows of ``x`` (thread ``t``: ``src``'s registers) moved to ``dst``'s, each group of the layouts' warps on its
    own rows (wave ``w`` is warp ``w % warps`` of group ``w // warps``), by evaluating the layouts."""
    warps = src.in_dim_size("warp") if src.has_in_dim("warp") else 1
    per_group = 64 * warps
    at = (lambda t: {"lane": t % 64, "warp": t // 64}) if warps > 1 else (lambda t: {"lane": t})
    ins = lambda lay: np.array([[list(lay.apply({"register": r, **at(t)}).values())
                                 for r in range(lay.in_dim_size("register"))] for t in range(per_group)])
    s, d = ins(src), ins(dst)
    where = {tuple(c): (t, r) for t in range(per_group) for r, c in enumerate(s[t])}
    y = np.zeros((x.shape[0], d.shape[1]), x.dtype)
    for g in range(x.shape[0] // per_group):
        for t in range(per_group):
            for r, c in enumerate(d[t]):
                st, sr = where[tuple(c)]
                y[g * per_group + t, r] = x[g * per_group + st, sr]
    return y


def _two_warp_layouts():
    """``(src, d_within, d_across)`` over a 16 x 32 tile, two warps: ``d_within`` keeps each element in its warp with a
    lane permutation that depends on the warp (registers or LDS), ``d_across`` moves data between warps (LDS)."""
    from linlayout import LinearLayout

    outs = [("dim0", 16), ("dim1", 32)]
    lanes = [[1, 0], [2, 0], [4, 0], [8, 0], [0, 4]]
    src = LinearLayout({"register": [[1, 0], [2, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [4, 0], [8, 0]],
                        "warp": [[0, 16]]}, outs)
    within = LinearLayout({"register": [[0, 1], [0, 2]], "lane": lanes + [[0, 8]], "warp": [[0, 24]]}, outs)
    across = LinearLayout({"register": [[0, 1], [0, 2]], "lane": lanes + [[0, 16]], "warp": [[0, 8]]}, outs)
    return src, within, across


_OWN_CASES = ([("mfma", waves, s) for waves in (2, 4) for s in ("registers", "lds")]
              + [("within", 4, "registers"), ("within", 4, "lds"), ("across", 4, "lds")])


@pytest.mark.parametrize("layouts,waves,strategy", _OWN_CASES)
def test_convert_in_a_kernel_of_more_waves_than_the_layouts(layouts, waves, strategy):
    """Layouts of one warp (the MFMA's C -> A) or two in a kernel of more waves, every group of the layouts' waves
    converting its own data: exact on the interpreter, which reports LDS races between waves.  ``convert`` plans for
    all the kernel's waves (``for_kernel``), so each group has its own LDS bytes and the plan's programs read the
    whole warp id as the plan's (at 73f4b37 the plan was the layouts' warps alone and every group stored to the same
    bytes: the interpreter refused the LDS runs, "lanes of one instruction write different values")."""
    src, within, across = _two_warp_layouts()
    src, dst = {"mfma": p_layouts("gfx942"), "within": (src, within), "across": (src, across)}[layouts]
    x = (torch.arange(waves * 64 * 4, dtype=torch.int32) * 7 + 3).reshape(waves * 64, 4)
    y = torch.zeros(waves * 64, 4, dtype=torch.int32)
    interpret(_own_fragments(waves * 64, src, dst, strategy), x, y, arch="gfx942", block=(waves * 64, 1, 1))
    assert np.array_equal(y.numpy(), _converted(x.numpy(), src, dst))



@pytest.mark.parametrize("layouts,block,strategy", [("mfma", (64, 2, 1), "lds"), ("mfma", (32, 4, 1), "lds"),
                                                    ("mfma", (32, 2, 2), "registers"), ("within", (64, 2, 2), "lds"),
                                                    ("across", (128, 1, 2), "lds")])
def test_convert_in_a_kernel_of_a_block_of_more_dimensions(layouts, block, strategy):
    """A kernel whose declared block has y or z sizes: the hardware forms its waves from the linear thread id
    ``x + bx (y + by z)``, which the plan's lanes and warps are (``atoms.thread_ids``' ``block``).  (At 0326aec
    they were thread id x's: with (64, 2, 1) both waves were warp 0 and stored to one group's LDS bytes, which the
    interpreter refused, "lanes of one instruction write different values".)"""
    src, within, across = _two_warp_layouts()
    src, dst = {"mfma": p_layouts("gfx942"), "within": (src, within), "across": (src, across)}[layouts]
    n_in, n_out = src.in_dim_size("register"), dst.in_dim_size("register")
    threads = block[0] * block[1] * block[2]
    x = (torch.arange(threads * n_in, dtype=torch.int32) * 7 + 3).reshape(threads, n_in)
    y = torch.zeros(threads, n_out, dtype=torch.int32)
    interpret(_own_fragments(block, src, dst, strategy), x, y, arch="gfx942", block=block)
    assert np.array_equal(y.numpy(), _converted(x.numpy(), src, dst))


def test_convert_in_a_kernel_that_declares_no_block_size():
    """A register plan in a kernel of 4 waves that declares no block size (the launch's block a jit argument): the plan
    is the layouts' warps, its programs read the thread and warp ids modulo the plan's (so a larger warp id enters no
    select or table index), and each group converts its own data, exact on the interpreter.  (These layouts' programs
    mask the warp id themselves: the run is exact at 73f4b37 too.)"""
    from linlayout.flydsl.interpret import kernel_arguments
    from linlayout.lowering.interp import load_kernel

    src, within, _ = _two_warp_layouts()
    for src, dst in (p_layouts("gfx942"), (src, within)):
        x = (torch.arange(256 * 4, dtype=torch.int32) * 7 + 3).reshape(256, 4)
        y = torch.zeros(256, 4, dtype=torch.int32)
        (fk,) = compile_kernel(_own_fragments("dynamic", src, dst, "registers"), x, y, 256, arch="gfx942")
        assert "known_block_size" not in fk.module
        args = kernel_arguments(x) + kernel_arguments(y)
        out = load_kernel(fk.module, fk.name, "gfx942").run(args, (1, 1, 1), (256, 1, 1), None)
        got = np.asarray(out[len(kernel_arguments(x))]).reshape(256, 4)
        assert np.array_equal(got, _converted(x.numpy(), src, dst))


def test_convert_refuses_kernels_it_cannot_give_each_wave_group_its_data():
    """An LDS plan in a kernel that declares no block size (the launch's block a jit argument), and layouts of two
    warps in a kernel of three waves (no whole number of groups): one line each, saying what to do."""
    src, dst = p_layouts("gfx942")
    x, y = torch.zeros(64, 4, dtype=torch.int32), torch.zeros(64, 4, dtype=torch.int32)
    with pytest.raises(LayoutError, match=r"declares no block size.*static block=\(\.\.\.\) or pass "
                                          r"strategy='registers'$"):
        compile_kernel(_own_fragments("dynamic", src, dst, "lds"), x, y, 64, arch="gfx942")
    src, within, _ = _two_warp_layouts()
    with pytest.raises(LayoutError, match=r"kernel's 192 threads are not a power-of-two multiple of the layouts' 128 \(2 warp\(s\) of 64 lanes\); launch "):
        compile_kernel(_own_fragments(192, src, within, "registers"), torch.zeros(192, 4, dtype=torch.int32),
                       torch.zeros(192, 4, dtype=torch.int32), arch="gfx942")
