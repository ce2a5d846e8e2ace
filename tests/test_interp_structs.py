"""Packed and nested struct kernel arguments, as FlyDSL passes a tensor's dynamic shape and strides:
``!llvm.struct<packed (struct<packed (i32, i32)>, struct<packed (i64)>)>`` given as a tuple or as its
C-ABI bytes, read by ``llvm.extractvalue`` with nested positions."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import needs

pytestmark = needs.mlir

from linlayout.lowering.interp import InterpreterError, load_kernel  # noqa: E402
from linlayout.lowering.interp.types import IntT, StructT, parse_type_text  # noqa: E402

LAYOUT = "!llvm.struct<packed (struct<packed (i32, i32)>, struct<packed (i64)>)>"
KERNEL = f"""module attributes {{gpu.container_module}} {{
  gpu.module @m {{
    gpu.func @k(%out: !llvm.ptr<1>, %lay: {LAYOUT}) kernel {{
      %rows = llvm.extractvalue %lay[0, 0] : {LAYOUT}
      %cols = llvm.extractvalue %lay[0, 1] : {LAYOUT}
      %stride = llvm.extractvalue %lay[1, 0] : {LAYOUT}
      %s32 = llvm.trunc %stride : i64 to i32
      %t = gpu.thread_id x
      %ti = arith.index_cast %t : index to i32
      %a = arith.muli %rows, %cols : i32
      %b = arith.addi %a, %s32 : i32
      %v = arith.addi %b, %ti : i32
      %p = llvm.getelementptr %out[%ti] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      llvm.store %v, %p : i32, !llvm.ptr<1>
      gpu.return
    }}
  }}
}}
"""


def test_packed_nested_struct_type_parses():
    i32, i64 = IntT(32), IntT(64)
    assert parse_type_text(LAYOUT) == StructT((StructT((i32, i32), True), StructT((i64,), True)), True)
    assert parse_type_text("!llvm.struct<(i32, f32)>").packed is False
    assert str(parse_type_text(LAYOUT)) == "!llvm.struct<packed (!llvm.struct<packed (i32, i32)>, !llvm.struct<packed (i64)>)>"


@pytest.mark.parametrize("layout", [((16, 8), (40,)), struct.pack("<iiq", 16, 8, 40)])
def test_struct_argument_from_tuple_or_bytes(layout):
    out = np.zeros(64, np.int32)
    got = load_kernel(KERNEL).run([out, layout])[0]
    np.testing.assert_array_equal(got, 16 * 8 + 40 + np.arange(64))


def test_struct_argument_errors():
    k = load_kernel(KERNEL)
    out = np.zeros(64, np.int32)
    with pytest.raises(InterpreterError, match="takes 16 bytes"):
        k.run([out, b"\0" * 12])
    with pytest.raises(InterpreterError, match="tuple of 2 fields"):
        k.run([out, (16, 8)])
