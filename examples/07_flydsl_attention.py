"""Rung 7: linlayout inside a FlyDSL kernel -- a flash-attention block whose P is converted in place.

linlayout.flydsl.attention writes, in FlyDSL, S = Q K^T and O = P V with the 16x16x16 f16 MFMA
(one wave).  P leaves the first MFMA in the accumulator layout and enters the second as its A
operand; one call, ``linlayout.flydsl.convert(P, src, dst)``, plans that conversion for
FlyDSL's compile target, verifies it on the wave emulator and emits it between the MFMAs.
Without a GPU: FlyDSL compiles for both arches with linlayout's linker
(``linlayout.flydsl.compile_kernel``), the ISA between the MFMAs is counted against the plan,
and the kernel runs on linlayout's wave interpreter from CPU torch tensors
(``linlayout.flydsl.interpret``).
"""

import re

import torch

from linlayout.flydsl import compile_kernel, interpret
from linlayout.flydsl.attention import attention_block, p_layouts
from linlayout.flydsl.convert import plan_for
from linlayout.lowering.isa import isa_counts
from linlayout.lowering.report import FUSED_KEY, fused_dpp_count, plan_isa_differences

torch.manual_seed(0)
q, k, vt = (torch.randn(16, 16).half() for _ in range(3))
reference = (q.float() @ k.float().T).half().float() @ vt.float().T

for arch in ("gfx942", "gfx950"):
    src, dst = p_layouts(arch)
    for strategy in ("auto", "lds"):
        plan = plan_for(src, dst, 16, arch=arch, strategy=strategy)
        print(f"=== {arch} {strategy}: P conversion {plan.strategy}, {plan.counts()['total']} instructions, "
              f"verified on the emulator: {plan.verified}")
        (kernel,) = compile_kernel(attention_block(strategy), q, k, vt, torch.zeros(16, 16), arch=arch)
        lines = kernel.isa.splitlines()
        first, second = [i for i, ln in enumerate(lines) if re.match(r"\s*v_mfma", ln)]
        between = "\n".join(lines[first + 1:second])
        counts = isa_counts(between)
        counts[FUSED_KEY] = fused_dpp_count(between, None)
        print(f"  ISA between the two MFMAs matches the plan: {not plan_isa_differences(plan, counts)}")
        out = torch.zeros(16, 16)
        interpret(attention_block(strategy), q, k, vt, out, arch=arch)  # on the wave interpreter
        err = (out - reference).abs().max().item()
        print(f"  interpreter vs torch: max |err| {err:.2g}, verified {err < 1e-2}")
