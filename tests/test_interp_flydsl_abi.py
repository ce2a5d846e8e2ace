"""What FlyDSL kernels need of the interpreter: dynamic shared memory, and packed and nested struct kernel arguments as FlyDSL passes a tensor's dynamic shape and strides:
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


DYNAMIC = """module attributes {gpu.container_module} {
  gpu.module @m {
    llvm.mlir.global internal @static_lds() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i8>
    llvm.mlir.global external @dyn() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
    gpu.func @k(%out: !llvm.ptr<1>) kernel {
      %t = gpu.thread_id x
      %ti = arith.index_cast %t : index to i32
      %base = llvm.mlir.addressof @dyn : !llvm.ptr<3>
      %p = llvm.getelementptr %base[%ti] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
      llvm.store %ti, %p : i32, !llvm.ptr<3>
      gpu.barrier
      %c63 = arith.constant 63 : i32
      %r = arith.subi %c63, %ti : i32
      %q = llvm.getelementptr %base[%r] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
      %v = llvm.load %q : !llvm.ptr<3> -> i32
      %o = llvm.getelementptr %out[%ti] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      llvm.store %v, %o : i32, !llvm.ptr<1>
      gpu.return
    }
  }
}
"""


def test_dynamic_shared_memory_takes_the_launch_size():
    """A zero-size external LDS global is the launch's dynamic shared memory, after the static LDS."""
    k = load_kernel(DYNAMIC)
    got = k.run([np.zeros(64, np.int32)], dynamic_lds_bytes=256)[0]
    np.testing.assert_array_equal(got, 63 - np.arange(64))
    with pytest.raises(InterpreterError, match="outside every LDS allocation"):
        k.run([np.zeros(64, np.int32)], dynamic_lds_bytes=128)  # too small for 64 dwords
    with pytest.raises(InterpreterError, match="has 65536"):
        k.run([np.zeros(64, np.int32)], dynamic_lds_bytes=1 << 20)
