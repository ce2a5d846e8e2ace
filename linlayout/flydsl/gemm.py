"""A GEMM written in FlyDSL whose LDS layout for A is the one linlayout synthesizes.

One wave computes ``C = A B^T`` (A: 16 x 64, B: 16 x 64, f16; C: 16 x 16, f32) with four
16x16x16 MFMAs.  A goes global -> registers -> LDS -> A operand: per 16-column K block each
lane writes 4 elements (8 bytes) of a row and reads the MFMA's A operand back.  In a
row-major 16 x 16 block (32 bytes a row) the lanes reading one column group collide in
banks; the shared layout :func:`linlayout.synth.swizzle.synthesize` chooses for these two
access patterns reaches its lower bound of bank cycles.  The kernel hands it to FlyDSL as
the composed layout ``S<B,M,S> o 0 o L`` that :func:`linlayout.flydsl.to_flydsl` builds (its
text: :func:`linlayout.flydsl_text.to_flydsl_text`).
"""

from linlayout import LinearLayout
from linlayout.synth.swizzle import SwizzleResult, synthesize

from .layouts import to_flydsl

__all__ = ["ROWS", "COLS", "BLOCK", "access_layouts", "shared_layout", "gemm_kernel"]

ROWS, COLS = 16, 64  # A's tile: rows (dim0, M) x columns (dim1, K)
BLOCK = 16  # columns per MFMA (K block); each block is its own 16 x 16 LDS tile


def access_layouts() -> tuple[LinearLayout, LinearLayout]:
    """``(writer, reader)`` of one 16 x 16 K block of A in LDS: (register, lane) -> (row, column).

    Writer (the tiled copy of :func:`gemm_kernel`, one 8-byte write per lane and block): lane
    ``t`` holds row ``t // 4``, columns ``4 (t % 4) + i`` at register ``i``.  Reader (the MFMA's
    A operand, one 8-byte read): lane ``l`` holds row ``l % 16``, columns ``4 (l // 16) + i``.
    """
    outs = [("dim0", ROWS), ("dim1", BLOCK)]
    regs = [[0, 1], [0, 2]]
    writer = LinearLayout({"register": regs, "lane": [[0, 4], [0, 8], [1, 0], [2, 0], [4, 0], [8, 0]], "warp": []},
                          outs)
    reader = LinearLayout({"register": regs, "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 4], [0, 8]], "warp": []},
                          outs)
    return writer, reader


def shared_layout(arch: str) -> tuple[SwizzleResult, LinearLayout]:
    """linlayout's shared layout of one K block on ``arch`` (plain 8-byte writes and reads), and the
    layout of the whole tile: the four blocks one after another (column bits 4, 5 -> offset bits 8, 9)."""
    writer, reader = access_layouts()
    res = synthesize(writer, reader, 16, arch, allow_transpose=False)
    bases = res.shared.bases["offset"] + [[0, BLOCK], [0, 2 * BLOCK]]
    return res, LinearLayout({"offset": bases}, [("dim0", ROWS), ("dim1", COLS)])


def _copy_image(fx, smem, image, tid) -> None:
    """``image[e] = LDS element e`` for the tile's 1024 elements (lane ``t``: elements ``16 t ..``),
    so that a test sees where each element of A was written."""
    per_lane = ROWS * COLS // 64
    for i in range(per_lane):
        at = tid * fx.Int32(per_lane) + fx.Int32(i)
        fx.ptr_store(fx.ptr_load(smem + at), image + at)


def gemm_kernel(arch: str):
    """The ``@flyc.jit`` function ``run(A, B, C, Image)`` (one wave): ``C = A B^T`` with A staged
    through LDS in the synthesized layout for ``arch``; ``Image`` (1024 f16) receives the LDS
    tile as written (``Image[offset] = A[shared(offset)]``)."""
    import flydsl.compiler as flyc
    import flydsl.expr as fx

    shared = shared_layout(arch)[1]
    lds_bytes = ROWS * COLS * 2

    @flyc.kernel
    def gemm(A: fx.Tensor, B: fx.Tensor, C: fx.Tensor, Image: fx.Tensor):
        tid = fx.thread_idx.x
        bA = fx.slice(fx.zipped_divide(fx.rocdl.make_buffer_tensor(A), (ROWS, COLS)), (None, 0))
        bB = fx.slice(fx.zipped_divide(fx.rocdl.make_buffer_tensor(B), (16, COLS)), (None, 0))
        bC = fx.slice(fx.zipped_divide(fx.rocdl.make_buffer_tensor(C), (ROWS, 16)), (None, 0))
        smem = fx.get_dyn_shared(fx.Float16)
        sA = fx.make_view(smem, to_flydsl(shared))
        global64 = fx.make_copy_atom(fx.rocdl.BufferCopy64b(), fx.Float16)
        lds64 = fx.make_copy_atom(fx.UniversalCopy64b(), fx.Float16)
        tile_mn, tv = fx.make_layout_tv(fx.make_layout((16, 4), (4, 1)), fx.make_layout((1, 4), (1, 1)))
        copy_g = fx.make_tiled_copy(global64, tv, tile_mn).get_slice(tid)
        copy_s = fx.make_tiled_copy(lds64, tv, tile_mn).get_slice(tid)
        staged = fx.make_fragment_like(copy_g.partition_S(bA))
        fx.copy(global64, copy_g.partition_S(bA), staged)
        fx.copy(lds64, staged, copy_s.partition_D(sA))
        fx.gpu.barrier()
        _copy_image(fx, smem, fx.get_iter(Image), tid)
        atom = fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 16, fx.Float16))
        tiled = fx.make_tiled_mma(atom, fx.make_layout((1, 1, 1), (0, 0, 0)))
        thr = tiled.thr_slice(tid)
        frag_a, frag_b, frag_c = thr.make_fragment_A(bA), thr.make_fragment_B(bB), thr.make_fragment_C(bC)
        copy_a = fx.make_tiled_copy_A(lds64, tiled).get_slice(tid)
        copy_b = fx.make_tiled_copy_B(global64, tiled).get_slice(tid)
        copy_c = fx.make_tiled_copy_C(fx.make_copy_atom(fx.rocdl.BufferCopy32b(), fx.Float32), tiled).get_slice(tid)
        fx.copy(lds64, copy_a.partition_S(sA), copy_a.retile(frag_a))
        fx.copy(global64, copy_b.partition_S(bB), copy_b.retile(frag_b))
        frag_c.fill(0)
        fx.gemm(atom, frag_c, frag_a, frag_b, frag_c)
        fx.copy(fx.make_copy_atom(fx.rocdl.BufferCopy32b(), fx.Float32), copy_c.retile(frag_c), copy_c.partition_S(bC))

    @flyc.jit
    def run(A: fx.Tensor, B: fx.Tensor, C: fx.Tensor, Image: fx.Tensor):
        gemm(A, B, C, Image).launch(grid=(1, 1, 1), block=(64, 1, 1), smem=lds_bytes)

    return run
