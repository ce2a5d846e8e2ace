"""Rung 9: the linear-layout blog's example on an NVIDIA GPU: the mma fp16 accumulator to the fp8 operand.

A chained matmul on sm_90 (attention's P @ V in fp8, say) casts the fp16 accumulator of one
``mma.sync`` to fp8 and feeds it as the A operand of ``mma.m16n8k32``.  The cast keeps the
accumulator's register layout, in which each thread holds 2-column pairs of a row; the fp8
operand wants 4 contiguous columns.  linlayout plans the move for sm_90 (warp shuffles, selects,
byte permutes), verifies it on its warp emulator, and writes it as a CUDA device function.  The
linear-layout paper solves the same conversion by hand with 2 shuffles and 4 selects per pair
of 32-bit registers (benchmarks/nvidia/paper_fp16_fp8.cu); both are compared here.

Without nvcc the example stops after the CUDA source; with nvcc it compiles both to sm_90a
and, where cuobjdump is on PATH too, counts the SASS instructions of one conversion; with an sm_90 GPU and CuPy it runs both
and checks every output slot bit for bit (benchmarks/nvidia/run_plans.py does the same for the
whole NVIDIA corpus, timed against Triton).

Command-line equivalent:  linlayout convert --src L --dst L --arch sm_90 --dtype fp8 --emit cuda
"""

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from linlayout.encodings.nvidia import NvidiaMma
from linlayout.lowering.cpp import emit_cpp
from linlayout.synth.convert import plan_conversion

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "nvidia"
sys.path.insert(0, str(BENCH))  # the GPU harness: tiles, round-trip kernel, the paper's solution
from plan_tiles import slot_tiles  # noqa: E402
from roundtrip_cuda import roundtrip_kernel  # noqa: E402

mma = NvidiaMma(2, (1, 1), (16, 8))  # Triton's nvidia_mma v2: one warp, mma.sync m16n8 tiles
src = mma.to_linear_layout([16, 32]).squeeze_ins("block")  # the accumulator layout, now holding fp8
dst = mma.dot_operand_layout(0, 4, [16, 32]).squeeze_ins("block")  # the fp8 A operand (kWidth 4)


def bits(layout, dim):
    names = {(1 << k): f"c{k}" for k in range(5)} | {(1 << k) * 32: f"r{k}" for k in range(4)}
    return ", ".join(names[row * 32 + col] for row, col in layout.bases[dim])


print("=== sm_90: mma fp16 accumulator -> fp8 A operand, 16x32 per warp")
print(f"source      register bits ({bits(src, 'register')}), lane bits ({bits(src, 'lane')})")
print(f"destination register bits ({bits(dst, 'register')}), lane bits ({bits(dst, 'lane')})")

plan = plan_conversion(src, dst, "sm_90", 8)
counts = {k: v for k, v in plan.counts().items() if v}
print(f"linlayout plan: {plan.strategy}, {counts}, verified on the emulator: {plan.verified}")
print("paper's hand solution: 2 shuffles + 4 selects per register pair, {'selp': 8, 'prmt': 4, 'shfl': 4, 'total': 16}")

code = emit_cpp(plan, name="fp16_acc_to_fp8_a")
out_dir = Path(tempfile.mkdtemp())
(out_dir / "convert.cu").write_text(code.source)
body = code.source[code.source.index(f"void {code.function_name}("):]
print(f"CUDA: {code.function_name}({code.element_type} src[{code.slots_in}], dst[{code.slots_out}]), "
      f"{body.count('__shfl')} shuffles in the source, written to {out_dir / 'convert.cu'}")

nvcc = shutil.which("nvcc")
if nvcc is None:
    print("nvcc not found: compiling and running skipped")
    raise SystemExit(0)

back = emit_cpp(plan_conversion(dst, src, "sm_90", 8), name="fp8_a_to_fp16_acc")
kernels = {
    "linlayout": code.source + back.source + roundtrip_kernel("k_linlayout", code.function_name, back.function_name,
                                                             "uint8_t", 8, 16, 16, 32, False),
    "paper": (BENCH / "paper_fp16_fp8.cu").read_text() + roundtrip_kernel(
        "k_paper", "paper_fp16_to_fp8", "paper_fp8_to_fp16", "uint8_t", 8, 16, 16, 32, False),
}
cubins = {}
for side, text in kernels.items():
    cu = out_dir / f"{side}.cu"
    cu.write_text("#include <cstdint>\n" + text)
    cubins[side] = out_dir / f"{side}.cubin"
    subprocess.run([nvcc, "-cubin", "-arch=sm_90a", "-O3", "-o", str(cubins[side]), str(cu)], check=True)

cuobjdump = shutil.which("cuobjdump")
for side, cubin in cubins.items():
    if cuobjdump is None:
        print(f"{side}: compiled to {cubin.name} (no cuobjdump to count SASS)")
        continue
    sass = subprocess.run([cuobjdump, "-sass", "-fun", f"k_{side}", str(cubin)], capture_output=True, text=True, check=True).stdout
    ops = re.findall(r"^\s+/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9]*)", sass, re.M)
    kinds = {k: ops.count(k) for k in ("SHFL", "SEL", "PRMT")}
    print(f"{side}: SASS of the whole kernel (load, one conversion before the loop, a round trip in it, store): {kinds}")

try:
    import cupy
    cupy.cuda.runtime.getDeviceCount()
except Exception:  # no CuPy or no GPU: the compiled kernels are the result
    print("no GPU (or no CuPy): running skipped")
    raise SystemExit(0)

src_slots, dst_slots = slot_tiles(src, dst, 8, 1)  # [planes, 1 warp, 32 lanes, 16 slots]
name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
for side, cubin in cubins.items():
    fn = cupy.RawModule(path=str(cubin)).get_function(f"k_{side}")
    planes = src_slots.shape[0]
    d_in = cupy.asarray(src_slots)
    out_src, out_dst = cupy.zeros_like(d_in), cupy.zeros(dst_slots.shape, np.uint8)
    fn((planes,), (32,), (d_in, out_src, out_dst, np.int32(3)))
    exact = bool((cupy.asnumpy(out_dst) == dst_slots).all() and (cupy.asnumpy(out_src) == src_slots).all())
    print(f"GPU {name.decode() if isinstance(name, bytes) else name}: {side} bit-exact: {exact} "
          f"({planes} planes x 512 elements, 3 round trips)")
