"""Rung 5: a GEMM whose layouts are solved, not hand-written; checked on the interpreter.

linlayout.kernels.gemm builds C = A * B^T (fp16 in, fp32 out) with MFMA.  Its decisions are
each a query to linlayout: the MFMA instruction with the most FLOPs per cycle
(catalog), the K order of the operand registers (tried per candidate), and the
LDS swizzle of A (synthesized for the global-load layout that writes the tile and
the MFMA operand layout that reads it, with a lower bound).  Then every LDS
instruction the kernel actually emits is re-checked by the bank analysis, the
MLIR is compiled to a code object, and a ragged 40 x 40 x 72 problem runs on the
wave interpreter against torch.

Command-line equivalent:  python -m linlayout.kernels.gemm --arch gfx942 --interpret
"""

import argparse

from linlayout.kernels import common, gemm
from linlayout.lowering.compile import compile_mlir

M, N, K = 40, 40, 72        # not multiples of the 64 x 64 x 32 block: edges are masked

for arch in ("gfx942", "gfx950"):
    plan = gemm.plan_gemm(arch, "f16", K)
    t, s = plan.tiling, plan.staged.synthesis
    print(f"=== {arch}: {t.ins.name}, block {t.block_m}x{t.block_n}x{t.bk}, {t.num_warps} waves")
    for cand in plan.candidates["k_order"]:   # K order: c MFMAs' K values side by side per lane
        print(f"  K order c={cand['c']} (kWidth {cand['k_width']}): {cand['lds_instructions']} LDS "
              f"instructions, {cand['lds_cycles']} cycles ({cand['write_op']} + {cand['read_op']})")
    print(f"  A through LDS: {s.write_instructions} x {s.write_op} + {s.read_instructions} x {s.read_op}, "
          f"{s.total_cycles} cycles, lower bound {s.lower_bound_cycles}, certified {s.certified}")

    text, lds = gemm.emit_gemm(plan)          # MLIR text + every LDS instruction it issues
    kb = common.KernelBuild("gemm", arch, text, lds, plan.describe(), extra={"plan": plan})
    banks = common.lds_report(kb)             # re-analysed from the emitted addresses, per lane
    print(f"  emitted LDS instructions: {banks['cycles']} cycles vs {banks['ideal_cycles']} ideal, "
          f"conflict-free: {banks['conflict_free']}")

    ck = compile_mlir(text, arch)             # ISA + HSA code object (cached on disk)
    k = ck.kernel("gemm")
    print(f"  compiled: {k.vgpr_count} VGPRs, {k.lds_bytes} LDS bytes, {len(ck.binary)}-byte code object")

    case = gemm.make_case(kb, argparse.Namespace(m=M, n=N, k=K, dtype="f16", arch=arch), 0)
    run = common.interpret(kb, case)          # the MLIR on the wave interpreter vs torch
    print(f"  interpreter vs torch: verified {run['verified']}, max |err| {run['max_abs_err']:.2g}")
