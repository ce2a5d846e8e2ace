"""Rung 10: a WMMA accumulator becomes an A operand on gfx1250, read back with transpose loads.

gfx1250 (wave32) has LDS loads that transpose as they read: ``ds_load_tr16_b128`` (16-bit
elements, an 8 x 8 exchange inside each group of 8 lanes) and ``ds_load_tr8_b64`` (8-bit).  The
conversion planner weighs a round trip read that way against every other plan, like gfx950's
``ds_read_b64_tr_b16``.  Here the bf16 16x16 WMMA v3 accumulator of a 64 x 32 tile on 8 waves
becomes the A operand (kWidth 8) of the next WMMA: the src VGPRs are stored as they are and come
back transposed.  The plan runs on the wave emulator; its MLIR on the wave interpreter; its HIP
C++ compiles with any HIP-capable clang (``ziglang``'s is found when no other is).

The lane maps of gfx1250's transpose loads come from Triton's lowering alone ([I],
docs/amd_facts.md 6.6): no AMD document states them.
"""

import json
from pathlib import Path

import numpy as np

from linlayout import LinearLayout
from linlayout.encodings import Wmma, wmma_dot_operand, wmma_layout
from linlayout.lowering.conversion import lower_conversion
from linlayout.lowering.cpp import emit_cpp
from linlayout.lowering.cpp.toolchain import ToolchainNotFound, compile_hip
from linlayout.lowering.emit.host import distinct_tile, expected_output, interpret
from linlayout.synth.convert import plan_conversion

ARCH, SHAPE, WARPS, INSTR = "gfx1250", (64, 32), (1, 8), (16, 16, 32)
CORPUS = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "triton_wave32_corpus.json"

src = wmma_layout(3, WARPS, SHAPE, instr_shape=INSTR)                       # the accumulator
dst = wmma_dot_operand(Wmma(3, WARPS, instr_shape=INSTR), 0, 8, SHAPE)     # the A operand, kWidth 8
plan = plan_conversion(src, dst, ARCH, 16)                                  # bf16; verified or raises
counts = {k: v for k, v in plan.counts().items() if v and k != "total"}
loads = sorted({st.transpose_load.name for st in plan.steps if getattr(st, "transpose", 0)})
print(f"=== {ARCH}: wmma3 16x16 accumulator -> A operand (kWidth 8), bf16 64x32, 8 waves")
print(f"strategy {plan.strategy}, {plan.counts()['total']} instructions {counts}, "
      f"verified on the emulator: {plan.verified}")
print(f"transpose loads: {', '.join(loads) or 'none'}")

triton = next(c for c in json.loads(CORPUS.read_text())["cases"]
              if c["arch"] == ARCH and c["dtype"] == "bf16" and LinearLayout.from_json(c["src"]) == src
              and LinearLayout.from_json(c["dst"]) == dst)
print(f"Triton 3.9 (compiled ISA, one wave): {triton['triton']['total']} instructions, "
      f"{triton['triton']['lds_write']} LDS stores and {triton['triton']['lds_read']} loads")

low = lower_conversion(plan, binary=False)                                  # ROCDL MLIR, compiled to ISA
tile = distinct_tile(low.kernel.shape, plan.element_bits, seed=1)
same = np.array_equal(interpret(low.kernel, tile, fill=0x5A), expected_output(plan, tile, fill=0x5A))
print(f"MLIR: {low.report['isa_counts']['lds_read_tr']} transpose loads in the ISA; "
      f"interpreter output == expected: {same}")

try:
    isa = compile_hip(emit_cpp(plan), ARCH, strict=True)
    found = sum(isa.count("\t" + name + " ") for name in loads)
    print(f"HIP: {found} transpose loads in clang's ISA")
except ToolchainNotFound as e:
    print(f"HIP skipped: {e}")
