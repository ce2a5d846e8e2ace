"""Interpreter speed: a 4-wave layout-conversion kernel and an MFMA loop.

    python benchmarks/bench_interp.py [--reps N]

Prints the compile (parse + step building) time and the per-launch interpret time of:
* ``conversion``: 256 threads, each buffer-loads 8 f16 (dwordx4), writes them to LDS with an
  XOR swizzle, barrier, reads 8 f16 back transposed, DPP + ds_bpermute + ds_swizzle on the
  packed dwords, buffer-stores; one workgroup;
* ``mfma_loop``: 4 waves, scf.for over 64 iterations of v_mfma_f32_32x32x8_f16 with A/B
  loaded from LDS each iteration.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: benchmarks.script_args

from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout.argparsing import positive_int  # noqa: E402
from linlayout.lowering.interpreter import load_kernel  # noqa: E402

CONVERSION = """module {
  gpu.module @m {
    gpu.func @conv(%src: !llvm.ptr<1>, %dst: !llvm.ptr<1>) workgroup(%lds : memref<2048xf16, #gpu.address_space<workgroup>>) kernel {
      %tid = gpu.thread_id x
      %t = arith.index_cast %tid : index to i32
      %c0 = arith.constant 0 : i32
      %c16 = arith.constant 16 : i32
      %c7 = arith.constant 7 : i32
      %c8i = arith.constant 8 : index
      %c255 = arith.constant 255 : index
      %stride = arith.constant 0 : i16
      %nrec = arith.constant 4096 : i64
      %flags = arith.constant 159744 : i32
      %rs = rocdl.make.buffer.rsrc %src, %stride, %nrec, %flags : !llvm.ptr<1> to !llvm.ptr<8>
      %rd = rocdl.make.buffer.rsrc %dst, %stride, %nrec, %flags : !llvm.ptr<1> to !llvm.ptr<8>
      %voff = arith.muli %t, %c16 : i32
      %v = rocdl.raw.ptr.buffer.load %rs, %voff, %c0, 0 : vector<8xf16>
      %row = arith.divui %tid, %c8i : index
      %col = arith.remui %tid, %c8i : index
      %rc = arith.index_cast %row : index to i32
      %sw = arith.andi %rc, %c7 : i32
      %swi = arith.index_cast %sw : i32 to index
      %colx = arith.xori %col, %swi : index
      %r64 = arith.muli %row, %c8i : index
      %slot = arith.addi %r64, %colx : index
      %base = arith.muli %slot, %c8i : index
      vector.store %v, %lds[%base] : memref<2048xf16, #gpu.address_space<workgroup>>, vector<8xf16>
      gpu.barrier
      %rev = arith.subi %c255, %tid : index
      %rrow = arith.divui %rev, %c8i : index
      %rcol = arith.remui %rev, %c8i : index
      %rrc = arith.index_cast %rrow : index to i32
      %rsw = arith.andi %rrc, %c7 : i32
      %rswi = arith.index_cast %rsw : i32 to index
      %rcolx = arith.xori %rcol, %rswi : index
      %rr64 = arith.muli %rrow, %c8i : index
      %rslot = arith.addi %rr64, %rcolx : index
      %rbase = arith.muli %rslot, %c8i : index
      %w = vector.load %lds[%rbase] : memref<2048xf16, #gpu.address_space<workgroup>>, vector<8xf16>
      %d = vector.bitcast %w : vector<8xf16> to vector<4xi32>
      %d0 = vector.extract %d[0] : i32 from vector<4xi32>
      %d1 = vector.extract %d[1] : i32 from vector<4xi32>
      %d2 = vector.extract %d[2] : i32 from vector<4xi32>
      %d3 = vector.extract %d[3] : i32 from vector<4xi32>
      %e0 = rocdl.update.dpp %d0, %d0 with 177, 15, 15, false : i32
      %c4 = arith.constant 4 : i32
      %t1 = arith.addi %t, %c4 : i32
      %idx = arith.muli %t1, %c4 : i32
      %e1 = rocdl.ds_bpermute %idx, %d1 : (i32, i32) -> i32
      %swz = arith.constant 16415 : i32
      %e2 = rocdl.ds_swizzle %d2, %swz : (i32, i32) -> i32
      %e3 = rocdl.update.dpp %d3, %d3 with 321, 15, 15, true : i32
      %o = vector.from_elements %e0, %e1, %e2, %e3 : vector<4xi32>
      rocdl.raw.ptr.buffer.store %o, %rd, %voff, %c0, 0 : vector<4xi32>
      gpu.return
    }
  }
}
"""

MFMA_LOOP = """module {
  gpu.module @m {
    gpu.func @gemm(%a: !llvm.ptr<1>, %out: !llvm.ptr<1>) workgroup(%lds : memref<1024xf16, #gpu.address_space<workgroup>>) kernel {
      %tid = gpu.thread_id x
      %t = arith.index_cast %tid : index to i32
      %c4 = arith.constant 4 : index
      %l = arith.remui %tid, %c4 : index
      %pa = llvm.getelementptr %a[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xf16>
      %va = llvm.load %pa : !llvm.ptr<1> -> vector<4xf16>
      %b4 = arith.muli %tid, %c4 : index
      vector.store %va, %lds[%b4] : memref<1024xf16, #gpu.address_space<workgroup>>, vector<4xf16>
      gpu.barrier
      %acc0 = arith.constant dense<0.0> : vector<16xf32>
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %c1 = arith.constant 1 : index
      %acc = scf.for %i = %c0 to %c64 step %c1 iter_args(%acc_i = %acc0) -> (vector<16xf32>) {
        %x = vector.load %lds[%b4] : memref<1024xf16, #gpu.address_space<workgroup>>, vector<4xf16>
        %n = rocdl.mfma.f32.32x32x8f16 %x, %x, %acc_i, 0, 0, none : (vector<4xf16>, vector<4xf16>, vector<16xf32>) -> vector<16xf32>
        scf.yield %n : vector<16xf32>
      }
      %po = llvm.getelementptr %out[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<16xf32>
      llvm.store %acc, %po : vector<16xf32>, !llvm.ptr<1>
      gpu.return
    }
  }
}
"""


def bench(name: str, text: str, kname: str, args, block: int, reps: int = 5) -> None:
    t0 = time.perf_counter()
    k = load_kernel(text, kname, "gfx942")
    t1 = time.perf_counter()
    times = []
    for _ in range(reps):
        s = time.perf_counter()
        k.run(args, grid=1, block=block)
        times.append(time.perf_counter() - s)
    print(f"{name:12s} compile {1e3 * (t1 - t0):7.1f} ms   interpret {1e3 * min(times):7.1f} ms (best of {reps}, {block} threads)")


def main(argv: list[str] | None = None) -> None:
    ap = ScriptParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=positive_int, default=5, help="launches per kernel; the best is reported")
    reps = ap.parse_args(argv).reps
    src = (np.arange(2048) % 97).astype(np.float16)
    bench("conversion", CONVERSION, "conv", [src, np.zeros(1024, np.uint32)], 256, reps)
    a = (np.arange(256 * 4) % 5).astype(np.float16)
    bench("mfma_loop", MFMA_LOOP, "gemm", [a, np.zeros(256 * 16, np.float32)], 256, reps)


if __name__ == "__main__":
    main()
