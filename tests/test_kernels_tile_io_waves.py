"""linlayout.kernels.tile_io and common on both wave sizes: the per-lane tables and the LDS bank records take the
lane count from the target (``Target.wave_size``: 64 on CDNA, 32 on RDNA), and a layout of another lane count is
refused with one line.  A kernel loading a tile through ``GlobalTile`` and storing it transposed runs on the wave
interpreter on a wave64 and a wave32 target."""

from __future__ import annotations

import numpy as np
import pytest

import needs

needs.require("torch")

from linlayout import LayoutError, get_target  # noqa: E402
from linlayout.encodings.blocked import Blocked  # noqa: E402
from linlayout.kernels.attention import transposed  # noqa: E402
from linlayout.kernels.common import LdsInstruction  # noqa: E402
from linlayout.kernels.tile_io import GlobalTile, layout_tables  # noqa: E402
from linlayout.lowering.emit import atoms  # noqa: E402
from linlayout.lowering.emit.builder import Builder, kernel_module  # noqa: E402
from linlayout.lowering.emit.lane_values import LaneValues  # noqa: E402
from linlayout.lowering.interp import load_kernel  # noqa: E402


def _tile(arch: str):
    """A one-warp blocked layout of 4 consecutive columns per lane on ``arch``'s wave: 8 x 16 (wave32) or
    16 x 16 (wave64) elements."""
    wave = get_target(arch).wave_size
    rows = wave // 4
    return Blocked((1, 4), (rows, 4), (1, 1), (1, 0)).to_linear_layout([rows, 16]), rows, 16


def _transposing_copy(arch: str) -> str:
    """Kernel ``@k(%in, %out)``: one wave loads the ``rows x cols`` i32 matrix at ``%in`` through ``GlobalTile``
    (``_tile``'s layout, 4-register vectors) and stores its registers through the transposed layout to
    ``%out`` (a ``cols x rows`` matrix)."""
    wave = get_target(arch).wave_size
    layout, rows, cols = _tile(arch)
    b = Builder()
    tid, _t32, lane, warp = atoms.thread_ids(b, wave)
    lanes = LaneValues(b, tid, lane, warp, 1, wave, arch)
    src = GlobalTile(b, lanes, layout, 1, 4, "i32", "src")
    dst = GlobalTile(b, lanes, transposed(layout), 1, 1, "i32", "dst")
    flags = atoms.buffer_flags(arch)
    r_in, r_out = (atoms.buffer_rsrc(b, p, 4 * rows * cols, flags) for p in ("%in", "%out"))
    regs = src.load(r_in, b.const(0), b.const(0), b.const(rows), b.const(cols), b.const(cols))
    dst.store(regs, r_out, b.const(0), b.const(0), b.const(cols), b.const(rows), b.const(rows))
    return kernel_module("k", [("%in", "!llvm.ptr<1>"), ("%out", "!llvm.ptr<1>")], b.body(), wave, lanes.globals)


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100", "gfx1250"])
def test_a_global_tile_moves_a_wave_of_its_targets_lanes(arch):
    _, rows, cols = _tile(arch)
    a = np.arange(rows * cols, dtype=np.uint32).reshape(rows, cols) * 7 + 3
    kernel = load_kernel(_transposing_copy(arch), "k", arch)
    out = kernel.run([a.reshape(-1).copy(), np.zeros(rows * cols, np.uint32)],
                     block=(get_target(arch).wave_size, 1, 1))[1]
    np.testing.assert_array_equal(out.reshape(cols, rows), a.T)


def test_layout_tables_refuse_a_layout_of_another_wave():
    layout64, _, _ = _tile("gfx942")
    with pytest.raises(LayoutError, match="^the layout has 64 lanes; a wave here has 32$"):
        layout_tables(layout64, 0, 1, 32)
    assert layout_tables(_tile("gfx1100")[0], 1, 1, 32)["dim1"].shape == (1, 32)


def test_lds_records_take_the_targets_wave():
    """An LDS instruction record's offsets are one per lane of the target's wave: ``ds_read_b32`` of 32
    consecutive dwords on gfx1100 (one cycle), and a 64-lane record there is refused with one line."""
    rec = LdsInstruction("t", "ds_read_b32", 32, 1, np.arange(32).reshape(1, 1, 32))
    got = rec.analyse("gfx1100")
    assert (got["cycles"], got["conflict_free"], got["warps"]) == (1, True, 1)
    with pytest.raises(LayoutError, match=r"^t: offsets must be \[variants, warps, 32\] on gfx1100, got \(1, 1, 64\)$"):
        LdsInstruction("t", "ds_read_b32", 32, 1, np.arange(64).reshape(1, 1, 64)).analyse("gfx1100")
