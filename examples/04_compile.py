"""Rung 4: compile a conversion to a code object, read the ISA, run it on the interpreter.

The plan of rung 3 becomes a small kernel (load the tile in the source layout,
convert, store it in the destination layout), emitted as MLIR (gpu + rocdl
dialects), lowered by the MLIR/LLVM AMDGPU backend to ISA and an HSA code
object (fatbin).  The instructions between the region markers are counted the
way Triton's baseline was counted, and must be exactly the plan's (cross-lane,
select, permute, LDS, barrier).  No GPU: the emitted MLIR then runs on the wave
interpreter and its output is compared element by element.

Command-line equivalent:  linlayout convert --src L --dst L --arch gfx942 --dtype fp16 --emit fatbin -o conv.hsaco
"""

import tempfile
from pathlib import Path

import numpy as np

from linlayout.encodings import Mfma, mfma_dot_operand, mfma_layout
from linlayout.lowering.conversion import lower_conversion
from linlayout.lowering.emit.host import distinct_tile, expected_output, interpret
from linlayout.lowering.isa import region_lines
from linlayout.synth.convert import plan_conversion

out_dir = Path(tempfile.mkdtemp())
for arch, version, instr, k_width in [("gfx942", 3, (32, 32, 8), 4), ("gfx950", 4, (32, 32, 16), 8)]:
    src = mfma_layout(version, instr, (4, 1), (128, 64))
    dst = mfma_dot_operand(Mfma(version, instr, (4, 1)), 0, k_width, (128, 64))
    plan = plan_conversion(src, dst, arch, 16)

    low = lower_conversion(plan, binary=True)      # emit MLIR, compile (cached on disk), link
    fatbin = out_dir / f"convert_{arch}.hsaco"
    fatbin.write_bytes(low.compiled.binary)
    counts = {k: v for k, v in low.report["isa_counts"].items() if v}
    print(f"=== {arch}: {plan.strategy} plan -> {fatbin} ({fatbin.stat().st_size} bytes)")
    print(f"isa_counts (conv region, one wave): {counts}")
    print(f"VGPRs {low.report['vgpr_count']}, LDS {low.report['lds_bytes']} B; "
          f"plan/ISA differences: {low.differences or 'none'}")
    isa = [ln.strip() for ln in region_lines(low.compiled.isa, "conv") if not ln.strip().startswith(";")]
    print("ISA:\n    " + "\n    ".join(isa[:6]) + f"\n    ... {len(isa) - 6} more")

    # The same MLIR on the wave interpreter: every element must land where dst says.
    tile = distinct_tile(low.kernel.shape, 16)             # distinct 16-bit patterns, 128 x 64
    got = interpret(low.kernel, tile)
    want = expected_output(plan, tile)
    print(f"interpreter output == expected: {bool(np.array_equal(got, want))} "
          f"({got.size} elements, {low.kernel.num_warps} waves)")
