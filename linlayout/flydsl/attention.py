"""A flash-attention block written in FlyDSL, with P converted by :func:`linlayout.flydsl.convert`.

One wave computes, with the 16x16x16 f16 MFMA, ``S = Q K^T`` (Q: 16 x 16 queries x head dim,
K: 16 x 16 keys x head dim), ``P = f16(S)`` and ``O = P V`` (``Vt`` = V^T, head dim x keys):
``O[m, d] = sum_n P[m, n] V[n, d]``.  P leaves the first MFMA in the accumulator (C) layout
``lane l, register i -> (m, n) = (4 (l // 16) + i, l % 16)`` and must enter the second as the
A operand ``lane l, register i -> (m, k) = (l % 16, 4 (l // 16) + i)``: a transpose across
lanes, which ``convert`` plans, verifies and emits between the two MFMAs.  (The softmax of a
full attention block is elementwise on P in either layout and is left out.)
"""

from linlayout.hw.mfma import mfma_layouts

from .convert import convert

__all__ = ["MFMA", "p_layouts", "attention_block"]

MFMA = "v_mfma_f32_16x16x16_f16"


def p_layouts(arch: str):
    """``(src, dst)`` of P: the MFMA's C layout and its A-operand layout (dims m, n = k), from the
    catalog: the layouts :func:`attention_block`'s fragment roles ``(tiled, "C")``, ``(tiled, "A")`` read as."""
    lay = mfma_layouts(MFMA, arch)
    return lay["C"], lay["A"]


def attention_block(strategy: str = "auto", dst=None):
    """The ``@flyc.jit`` function ``run(Q, K, Vt, O)`` of the block (one wave, 64 threads); the
    target is the one FlyDSL compiles for (``compile_kernel``'s or ``interpret``'s ``arch``).

    P is converted from the tiled MMA's C fragment to its A fragment, given to ``convert`` as
    FlyDSL holds them, ``(tiled, "C")`` and ``(tiled, "A")``.  ``dst``: another layout for P
    (a LinearLayout; one that is not the A operand's shows what a wrong conversion does)."""
    import flydsl.compiler as flyc
    import flydsl.expr as fx

    @flyc.kernel
    def fa_block(Q: fx.Tensor, K: fx.Tensor, Vt: fx.Tensor, O: fx.Tensor):
        tid = fx.thread_idx.x
        bQ = fx.slice(fx.zipped_divide(fx.rocdl.make_buffer_tensor(Q), (16, 16)), (None, 0))
        bK = fx.slice(fx.zipped_divide(fx.rocdl.make_buffer_tensor(K), (16, 16)), (None, 0))
        bV = fx.slice(fx.zipped_divide(fx.rocdl.make_buffer_tensor(Vt), (16, 16)), (None, 0))
        bO = fx.slice(fx.zipped_divide(fx.rocdl.make_buffer_tensor(O), (16, 16)), (None, 0))
        atom = fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 16, fx.Float16))
        tiled = fx.make_tiled_mma(atom, fx.make_layout((1, 1, 1), (0, 0, 0)))
        thr = tiled.thr_slice(tid)
        copy64 = fx.make_copy_atom(fx.rocdl.BufferCopy64b(), fx.Float16)
        copy32 = fx.make_copy_atom(fx.rocdl.BufferCopy32b(), fx.Float32)
        copy_a = fx.make_tiled_copy_A(copy64, tiled).get_slice(tid)
        copy_b = fx.make_tiled_copy_B(copy64, tiled).get_slice(tid)
        copy_c = fx.make_tiled_copy_C(copy32, tiled).get_slice(tid)
        frag_q, frag_p = thr.make_fragment_A(bQ), thr.make_fragment_A(bQ)
        frag_k, frag_v = thr.make_fragment_B(bK), thr.make_fragment_B(bV)
        frag_s, frag_o = thr.make_fragment_C(bO), thr.make_fragment_C(bO)
        fx.copy(copy64, copy_a.partition_S(bQ), copy_a.retile(frag_q))
        fx.copy(copy64, copy_b.partition_S(bK), copy_b.retile(frag_k))
        fx.copy(copy64, copy_b.partition_S(bV), copy_b.retile(frag_v))
        frag_s.fill(0)
        frag_o.fill(0)
        fx.gemm(atom, frag_s, frag_q, frag_k, frag_s)
        p_dst = (tiled, "A") if dst is None else dst
        frag_p.store(convert(frag_s.load().to(fx.Float16), (tiled, "C"), p_dst, strategy=strategy))
        fx.gemm(atom, frag_o, frag_p, frag_v, frag_o)
        fx.copy(copy32, copy_c.retile(frag_o), copy_c.partition_S(bO))

    @flyc.jit
    def run(Q: fx.Tensor, K: fx.Tensor, Vt: fx.Tensor, O: fx.Tensor):
        fa_block(Q, K, Vt, O).launch(grid=(1, 1, 1), block=(64, 1, 1))

    return run
