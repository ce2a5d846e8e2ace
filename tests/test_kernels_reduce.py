"""linlayout.kernels.reduce: butterfly reductions over lane bits, with the instruction each arch gets
(DPP / ds_swizzle / ds_bpermute / permlane swaps), executed on the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import needs

needs.require("flydsl")

from linlayout import LayoutError, LinearLayout  # noqa: E402
from linlayout.lowering.compile import compile_mlir  # noqa: E402
from linlayout.lowering.emit import atoms  # noqa: E402
from linlayout.lowering.emit.builder import Builder  # noqa: E402
from linlayout.lowering.emit.lane_values import LaneValues  # noqa: E402
from linlayout.lowering.interpreter import run_kernel  # noqa: E402
from linlayout.lowering.emit.builder import kernel_module  # noqa: E402
from linlayout.kernels.reduce import LaneReducer, reduce_lane_bits  # noqa: E402


def _kernel(arch: str, bits: list[int], op: str) -> tuple[str, list[dict]]:
    b = Builder()
    tid, t32, lane, warp = atoms.thread_ids(b)
    lanes = LaneValues(b, tid, lane, warp, 1, 64, arch)
    red = LaneReducer(b, lanes, arch, bits)
    p = b.value(f"llvm.getelementptr %x[{t32}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32", "p")
    x = b.value(f"llvm.load {p} : !llvm.ptr<1> -> f32", "x")
    r = red.reduce(x, op)
    q = b.value(f"llvm.getelementptr %y[{t32}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32", "q")
    b.line(f"llvm.store {r}, {q} : f32, !llvm.ptr<1>")
    return kernel_module("k", [("%x", "!llvm.ptr<1>"), ("%y", "!llvm.ptr<1>")], b.body(), 64, lanes.globals), red.describe()


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
@pytest.mark.parametrize("bits", [[0, 1, 2, 3, 4, 5], [5], [4, 1]])
@pytest.mark.parametrize("op", ["maxnumf", "addf"])
def test_butterfly(arch, bits, op):
    text, steps = _kernel(arch, bits, op)
    compile_mlir(text, arch, binary=False)
    x = np.random.default_rng(0).integers(-50, 50, 64).astype(np.float32)
    y = run_kernel(text, "k", [x, np.zeros(64, np.float32)], block=64, arch=arch)[1]
    mask = sum(1 << b for b in bits)
    for lane in range(64):
        group = [l for l in range(64) if (l & ~mask) == (lane & ~mask)]
        want = max(x[group]) if op == "maxnumf" else sum(x[group])
        assert y[lane] == want
    kinds = {s["lane_bit"]: s["instruction"] for s in steps}
    if arch == "gfx950" and 5 in bits:
        assert kinds[5] == "permlane32_swap"
    if arch == "gfx942" and 5 in bits:
        assert kinds[5] == "ds_bpermute"
    if 0 in bits:
        assert kinds[0].startswith("dpp:")


def test_reduce_lane_bits():
    lay = LinearLayout({"register": [[1, 0]], "lane": [[0, 1], [0, 2], [2, 0], [0, 4], [0, 8], [0, 16]]},
                       [("dim0", 4), ("dim1", 32)])
    assert reduce_lane_bits(lay, "dim0") == [2]
    assert reduce_lane_bits(lay, "dim1") == [0, 1, 3, 4, 5]
    bad = LinearLayout({"lane": [[1, 1]]}, [("dim0", 2), ("dim1", 2)])
    with pytest.raises(LayoutError):
        reduce_lane_bits(bad, "dim0")
