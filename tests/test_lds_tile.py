"""linlayout.kernels.lds_tile.stage_tile on every wave size: the staged instructions, run lane by
lane on a model of LDS, store exactly the shared layout's elements and read exactly the reader's.

The model: instruction ``a`` of the writer stores, for every warp ``w`` and lane ``l``, register
``a.regs[j]`` at element offset ``a.offsets[w, l] + j``; a plain read loads those offsets into the
same registers; a transpose read (``linlayout.hw.transpose_loads``) gives lane ``i`` element ``j``
(register ``a.regs[j]``) element ``src_elem[i, j]`` of the read of lane ``src_lane[i, j]``
(``TransposeLoad.sources``).  Elements are named by their flattened tensor index."""

from __future__ import annotations

import numpy as np
import pytest

from linlayout import LayoutError, LinearLayout, get_target
from linlayout.encodings.blocked import blocked
from linlayout.encodings.wmma import Wmma, wmma_dot_operand, wmma_layout
from linlayout.hw.lds import lds_model
from linlayout.hw.transpose_loads import transpose_load_named
from linlayout.kernels.attention import plan_attention, transposed
from linlayout.kernels.lds_tile import StagedTile, stage_tile


def _elements(layout: LinearLayout, **ins) -> np.ndarray:
    """The flattened tensor index of ``layout(ins)``, in the shape of ``ins``."""
    out = layout.apply(ins)
    index = 0
    for name, size in layout.out_dims:
        index = index * size + np.asarray(out[name])
    return index


def _register(layout: LinearLayout, reg: int, num_warps: int, wave_size: int) -> np.ndarray:
    """The element of register ``reg`` of every lane, ``[warp, lane]``."""
    shape = (num_warps, wave_size)
    ins = {"register": np.full(shape, reg), "lane": np.broadcast_to(np.arange(wave_size)[None, :], shape)}
    if layout.has_in_dim("warp"):
        ins["warp"] = np.broadcast_to(np.arange(num_warps)[:, None], shape)
    return _elements(layout, **ins)


def _check_exact(st: StagedTile, writer: LinearLayout, reader: LinearLayout, arch: str, num_warps: int) -> None:
    wave_size = get_target(arch).wave_size
    size = st.shared.in_dim_size("offset")
    lds = np.full(size, -1)
    for a in st.writes:
        assert a.offsets.shape == (num_warps, wave_size)
        for j, reg in enumerate(a.regs):
            lds[a.offsets + j] = _register(writer, reg, num_warps, wave_size)
    assert np.array_equal(lds, _elements(st.shared, offset=np.arange(size)))
    model = lds_model(arch)
    for a in st.reads:
        assert a.offsets.shape == (num_warps, wave_size)
        transpose = model.op(a.op).shape.transpose_bits is not None
        if transpose:
            src_lane, src_elem = transpose_load_named(a.op).sources()
        for j, reg in enumerate(a.regs):
            got = lds[a.offsets[:, src_lane[:, j]] + src_elem[None, :, j]] if transpose else lds[a.offsets + j]
            assert np.array_equal(got, _register(reader, reg, num_warps, wave_size)), (a.op, reg)


def _ops(accesses) -> list[tuple[str, tuple[int, ...]]]:
    return [(a.op, a.regs) for a in accesses]


ACC_WRITES = {"gfx1200": "ds_write_b16", "gfx1250": "ds_write_b16", "gfx1100": "ds_write_b16",
              "sm_80": "st.shared.b16", "sm_90": "st.shared.b16"}
BLOCKED_READS = {"gfx1200": "ds_read_b128", "gfx1250": "ds_read_b128", "gfx1100": "ds_read_b128",
                 "sm_80": "ld.shared.b128", "sm_90": "ld.shared.b128"}


@pytest.mark.parametrize("arch", sorted(ACC_WRITES))
def test_wave32_wmma_accumulator_to_blocked(arch):
    """A WMMA v2 accumulator (2 x 2 warps, 32 x 32 fp16; a lane's 8 registers are 8 rows of one
    column) written, a blocked layout of 4 contiguous columns per lane read, on every wave32
    target: the shared layout the synthesis picks gives the reader 128-bit reads and the writer
    one 16-bit store per register."""
    writer = wmma_layout(2, (2, 2), (32, 32))
    reader = blocked([1, 4], [4, 8], [2, 2], [1, 0], (32, 32))
    st = stage_tile(writer, reader, 16, arch, 4)
    assert _ops(st.writes) == [(ACC_WRITES[arch], (r,)) for r in range(8)]
    assert _ops(st.reads) == [(BLOCKED_READS[arch], tuple(range(8))), (BLOCKED_READS[arch], tuple(range(8, 16)))]
    _check_exact(st, writer, reader, arch, 4)


@pytest.mark.parametrize("element_bits, k_width, op, regs", [
    (16, 8, "ds_load_tr16_b128", [tuple(range(8)), tuple(range(8, 16))]),
    (8, 16, "ds_load_tr8_b64", [tuple(range(8 * i, 8 * i + 8)) for i in range(4)]),
])
def test_gfx1250_transpose_load_reader(element_bits, k_width, op, regs):
    """The gfx1250 WMMA A operand read transposed (its K runs across lanes in LDS, as attention
    reads V) from a blocked tile whose lanes each write 16 contiguous bytes of a row: gfx1250's transpose loads, each
    by its own lane map, deliver every element to its register."""
    k = 512 // element_bits  # the instruction K: 32 fp16 or 64 fp8 elements
    reader = transposed(wmma_dot_operand(Wmma(3, (1, 1), False, (16, 16, k)), 0, k_width, (16, k)))
    vector = 128 // element_bits  # one ds_write_b128 per lane and row
    writer = blocked([1, vector], [32 * vector // 16, 16 // vector], [1, 1], [1, 0], [k, 16])
    st = stage_tile(writer, reader, element_bits, "gfx1250", 1, transpose_only=True)
    assert _ops(st.writes) == [("ds_write_b128", tuple(range(vector * i, vector * i + vector))) for i in range(2)]
    assert _ops(st.reads) == [(op, r) for r in regs]
    _check_exact(st, writer, reader, "gfx1250", 1)


def test_gfx950_attention_v_stage_wave64():
    """The wave64 path the kernels use (attention's V through gfx950's ds_read_b64_tr_b16)."""
    plan = plan_attention("gfx950", "f16")
    st = plan.v_stage
    assert _ops(st.writes) == [("ds_write_b128", tuple(range(8 * i, 8 * i + 8))) for i in range(4)]
    assert _ops(st.reads) == [("ds_read_b64_tr_b16", tuple(range(4 * i, 4 * i + 4))) for i in range(8)]
    _check_exact(st, plan.v_writer, transposed(plan.pv.operand("A")), "gfx950", 1)


def test_refusals_are_one_line():
    writer = wmma_layout(2, (2, 2), (32, 32))
    reader = blocked([1, 4], [4, 8], [2, 2], [1, 0], (32, 32))
    with pytest.raises(LayoutError, match=r"^write layout: in dim 'warp' has size 4, the tile is staged by 8 warps$"):
        stage_tile(writer, reader, 16, "gfx1200", 8)
    wave64 = blocked([1, 4], [8, 8], [2, 2], [1, 0], (32, 64))
    with pytest.raises(LayoutError, match=r"^writer: in dim 'lane' must have the wave size 32$"):
        stage_tile(wave64, wave64, 16, "gfx1200", 4)
