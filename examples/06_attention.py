"""Rung 6: a flash-attention block, with its P conversion planned and its V swizzle solved.

linlayout.kernels.attention computes, for 32 queries, S^T = K Q^T, an online softmax, and
O^T += V^T P^T with 32x32 MFMAs.  P leaves the softmax in the accumulator layout
and must enter the second MFMA as an operand: the kernel plans that conversion
for every legal K order and keeps the cheapest (on gfx942 the layouts coincide;
gfx950 needs v_permlane32_swap).  V goes through LDS with a synthesized swizzle.
The compiled conversion region is counted, and the kernel runs on the wave
interpreter against a torch reference (80 keys: a ragged last key block).

Command-line equivalent:  python -m linlayout.kernels.attention --arch gfx950 --interpret
"""

import argparse

from linlayout.kernels import attention, common
from linlayout.lowering.compile import compile_mlir
from linlayout.lowering.isa import isa_counts
from linlayout.lowering.report import plan_isa_differences

NQ, NKV, D = 32, 80, 64

for arch in ("gfx942", "gfx950"):
    plan = attention.plan_attention(arch, "f16", D)
    print(f"=== {arch}: {plan.qk.ins.name}, head dim {D}, key block {plan.block_n}")
    for cand in plan.candidates:              # one P conversion plan per K order of P V
        print(f"  P conversion, kWidth {cand['k_width']}: {cand['strategy']} {cand['counts']}")
    p = plan.p_plan
    print(f"  chosen: {p.strategy}, {p.counts()['total']} instructions, cost {p.cost:g} "
          f"(lower bound {p.lower_bound['cost']:g}), verified on the emulator: {p.verified}")
    v = plan.v_stage.synthesis                # V (row-major) -> LDS -> V^T operand layout
    print(f"  V through LDS: {v.write_instructions} x {v.write_op} + {v.read_instructions} x {v.read_op}, "
          f"{v.total_cycles} cycles, lower bound {v.lower_bound_cycles}")

    text, lds, _ = attention.emit_attention(plan)
    kb = common.KernelBuild("attention", arch, text, lds, plan.describe(), regions=("conv",),
                            extra={"plan": plan})
    ck = compile_mlir(text, arch)
    counts = isa_counts(ck.isa, region="conv")   # between the kernel's conv markers
    same = not plan_isa_differences(p, counts)      # cross-lane/select/LDS ops exactly the plan's
    print(f"  compiled P conversion region: {({k: n for k, n in counts.items() if n}) or 'empty'}; "
          f"matches the plan: {same}")

    case = attention.make_case(kb, argparse.Namespace(nq=NQ, nkv=NKV, d=D, dtype="f16", arch=arch), 0)
    run = common.interpret(kb, case)          # the MLIR on the wave interpreter vs torch
    print(f"  interpreter vs torch: verified {run['verified']}, max |err| {run['max_abs_err']:.2g}")
