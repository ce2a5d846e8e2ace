"""Flash-attention inner block for one tile of 32 queries: ``S = Q K^T``, online softmax,
``O += P V``, with the conversion of ``P`` from the accumulator layout to the MFMA operand
layout solved by the conversion planner.

One wave per workgroup; workgroup ``q`` takes queries ``32q .. 32q + 31`` and walks the keys
in blocks of ``BN`` (32, or the MFMA's K when larger).  Both products are computed
transposed so that the softmax statistics stay in the lane that owns a query:

* ``S^T = K Q^T`` (A = the K block, ``BN x D``; B = ``Q^T``, ``D x 32``): in the
  accumulator of a 32x32 MFMA a lane holds one column (= one query ``i``) and 16 rows
  (keys ``j``); the row max and row sum over ``j`` are in-lane over registers plus a
  butterfly over the lane bits that carry ``j`` (:mod:`linlayout.kernels.reduce`: lane bit 5 =
  ``v_permlane32_swap`` on gfx950, ``ds_bpermute`` on gfx942).
* ``O^T = V^T P^T`` (A = ``V^T``, ``D x BN``; B = ``P^T``, ``BN x 32``): the accumulator of
  ``O^T`` again gives each lane one query, so ``O *= alpha`` and ``O /= l`` are per lane.

Layout decisions:

* **instruction**: as the GEMM (``linlayout.kernels.gemm.choose_instruction``: the arch's fastest 32x32
  MFMA for the dtype).
* **P conversion**: ``P^T`` leaves ``exp2`` in the accumulator layout of ``S^T`` and must enter
  the MFMA as operand B of ``O^T``.  The K order of the second product (linlayout.kernels.mfma_tiles,
  factor ``c``) is free, since ``V`` is loaded to match; for every ``c`` the conversion is
  planned (``linlayout.synth.convert.plan_conversion``, verified on the wave emulator) and the
  cheapest plan is emitted (``linlayout.lowering.emit.plan_ops.PlanEmitter``) between
  ``; linlayout-begin conv`` markers.  f16/bf16 on gfx942: no instruction (the layouts
  coincide); gfx950 (``32x32x16``): four ``v_permlane32_swap``; fp8 on gfx942
  (``32x32x16_fp8``, 8 K per lane): ``ds_bpermute`` + ``v_cndmask``.
* **V staging**: V (row-major, ``BN x D``) goes through LDS: 16-byte global loads along D,
  the synthesized swizzle (``linlayout.synth.swizzle``) to the ``V^T`` operand layout -- on gfx950 with
  the transpose reads ``ds_read_b64_tr_b16/b8`` -- every LDS instruction checked by the bank
  analysis.  Q (once) and each K block are loaded straight
  into their operand layouts (16-byte loads along D).

Kernel ``attention(Q, K, V, O, Nq, Nkv)``: Q ``Nq x D``, K and V ``Nkv x D`` (the dtype), O
``Nq x D`` f32; ``softmax(scale * Q K^T) V`` with ``D`` and ``scale`` compiled in.  Ragged
``Nq`` and ``Nkv`` are handled by buffer out-of-bounds and a key mask (``-inf`` scores).
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

import numpy as np
import torch

from linlayout import LayoutError, LinearLayout, get_target
from linlayout.argparsing import dtype_arg
from linlayout.encodings.blocked import Blocked
from linlayout.hw.limits import check_kernel_buffers, check_kernel_lds
from linlayout.hw.mfma import MfmaInstruction
from linlayout.lowering.emit import atoms
from linlayout.lowering.emit.builder import Builder, kernel_module, vector_type
from linlayout.lowering.emit.lane_values import LaneValues
from linlayout.lowering.emit.plan_ops import PlanEmitter
from linlayout.synth.convert import plan_conversion
from linlayout.synth.plan import Plan

from . import common
from .convert import lds_instructions
from .dtypes import DtypeInfo, dtype_info, random_values
from .gemm import GLOBAL_VECTOR_BYTES, choose_instruction
from .lds_tile import StagedTile, stage_tile
from .mfma_tiles import MfmaTiling
from .mlir_ops import fconst, mfma_operand, mfma_unit_scale, scf_for, ult
from .reduce import LaneReducer, reduce_lane_bits
from .regs import Registers
from .tile_io import GlobalTile, LdsStage, add, layout_tables, mul

__all__ = ["QUERY_TILE", "AttentionPlan", "plan_attention", "transposed", "emit_attention", "reference",
           "add_arguments", "build", "make_case"]

#: Queries per workgroup (the N of the 32x32 MFMAs).
QUERY_TILE = 32
#: Threads of the workgroup: one wave64.
THREADS = 64
#: K-order factors of the P V product tried for the P conversion.
K_ORDER_FACTORS = (1, 2, 4)
LOG2E = 1.4426950408889634


def transposed(layout: LinearLayout) -> LinearLayout:
    """``layout`` with ``dim0`` and ``dim1`` exchanged (the same registers of the transposed matrix)."""
    bases = {d: [[v[1], v[0]] for v in layout.bases[d]] for d in layout.in_dim_names}
    return LinearLayout(bases, [("dim0", layout.out_dim_size("dim1")), ("dim1", layout.out_dim_size("dim0"))])


def _widest_c(ins: MfmaInstruction, groups: int, eb: int) -> int:
    """The largest K-order factor whose lane run fits one 16-byte load."""
    c = 1
    while 2 * c <= groups and ins.items_per_lane("A") * 2 * c * eb <= GLOBAL_VECTOR_BYTES:
        c *= 2
    return c


@dataclass
class AttentionPlan:
    """Every decision of one attention kernel (see the module docstring)."""

    arch: str
    dtype: DtypeInfo
    head_dim: int
    block_n: int
    scale: float
    qk: MfmaTiling
    pv: MfmaTiling
    p_plan: Plan
    v_stage: StagedTile
    v_writer: LinearLayout
    v_vec: int
    candidates: list

    def buffer_bytes(self, nq: int, nkv: int) -> dict[str, int]:
        """Bytes of the kernel's buffers for ``nq`` queries and ``nkv`` keys: Q, K, V in the
        element type, O in f32, ``head_dim`` columns each."""
        eb, d = self.dtype.bytes, self.head_dim
        return {"Q": nq * d * eb, "K": nkv * d * eb, "V": nkv * d * eb, "O": nq * d * 4}

    def describe(self) -> dict:
        counts = {k: v for k, v in self.p_plan.counts().items() if v}
        return {"dtype": self.dtype.name, "head_dim": self.head_dim, "key_block": self.block_n,
                "scale": self.scale, "qk": self.qk.describe(), "pv": self.pv.describe(),
                "p_conversion": {"strategy": self.p_plan.strategy, "counts": counts,
                                 "cost": round(float(self.p_plan.cost), 3), "verified_on_emulator": self.p_plan.verified,
                                 "candidates": self.candidates},
                "v_lds": self.v_stage.describe(), "v_global_vector": self.v_vec}


def plan_attention(arch: str, dtype: str, head_dim: int = 64, scale: float | None = None,
                   instr: str | None = None) -> AttentionPlan:
    """Choose instruction, tilings, P conversion and V staging for ``dtype`` on ``arch``."""
    info = dtype_info(dtype, arch)
    if info.mfma_type is None:
        raise LayoutError(f"attention takes f16, bf16 or fp8, not {dtype}")
    if scale is not None and not math.isfinite(scale):
        raise LayoutError(f"softmax scale {scale} must be a finite number")
    ins, _ = choose_instruction(arch, dtype, instr)
    if ins.m != QUERY_TILE or ins.n != QUERY_TILE:
        raise LayoutError(f"{ins.name}: the attention tile uses 32x32 MFMAs")
    d = int(head_dim)
    if d < 32 or d % ins.k or d & (d - 1):
        raise LayoutError(f"head dim {d} must be a power of two and a multiple of 32 and of the MFMA's K = {ins.k}")
    bn = max(32, ins.k)
    eb = info.bytes
    qk = MfmaTiling(ins, (1, 1), (bn // 32, 1), d, _widest_c(ins, d // ins.k, eb))
    best, cands = None, []
    for c in K_ORDER_FACTORS:
        if c > bn // ins.k:
            continue
        pv = MfmaTiling(ins, (1, 1), (d // 32, 1), bn, c)
        p = plan_conversion(qk.acc(), pv.operand("B"), arch, info.bits)
        cands.append({"c": c, "k_width": c * ins.items_per_lane("B"), "strategy": p.strategy,
                      "counts": {k: v for k, v in p.counts().items() if v}, "cost": round(float(p.cost), 3)})
        if best is None or p.cost < best[0].cost:
            best = (p, pv)
    p_plan, pv = best
    _check_query_lanes(qk, pv, arch)
    v_vec = min(GLOBAL_VECTOR_BYTES // eb, d)
    tk = d // v_vec
    v_writer = Blocked((1, v_vec), (64 // tk, tk), (1, 1), (1, 0)).to_linear_layout([bn, d])
    v_stage = stage_tile(v_writer, transposed(pv.operand("A")), info.bits, arch, 1, allow_transpose=True)
    return AttentionPlan(arch, info, d, bn, float(scale if scale is not None else 1.0 / math.sqrt(d)), qk, pv,
                         p_plan, v_stage, v_writer, v_vec, cands)


def _check_query_lanes(qk: MfmaTiling, pv: MfmaTiling, arch: str) -> None:
    """Every register of a lane must hold the same query in ``S^T`` and in ``O^T`` (per-lane softmax state);
    the accumulators' lanes are ``arch``'s wave (``layout_tables`` refuses a layout of another)."""
    cols = []
    wave_size = get_target(arch).wave_size
    for lay in (qk.acc(), pv.acc()):
        tabs = [layout_tables(lay, r, 1, wave_size)["dim1"] for r in range(lay.in_dim_size("register"))]
        if any(not np.array_equal(t, tabs[0]) for t in tabs):
            raise LayoutError("an accumulator lane holds several queries; the softmax state would not be per lane")
        cols.append(tabs[0])
    if not np.array_equal(cols[0], cols[1]):
        raise LayoutError("S^T and O^T give a lane different queries")


# ---------------------------------------------------------------------- host reference
def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float, block_n: int,
              p_dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """``(blocked, exact)``: the kernel's algorithm in float64 with its roundings (scores and
    ``exp2`` in f32, ``P`` rounded to ``p_dtype`` before ``P V``), and exact softmax attention."""
    qf, kf, vf = (x.to(torch.float64) for x in (q, k, v))
    c = torch.tensor(scale * LOG2E, dtype=torch.float32)
    nq, nkv = q.shape[0], k.shape[0]
    m = torch.full((nq, 1), -math.inf, dtype=torch.float32)
    lsum = torch.zeros((nq, 1), dtype=torch.float32)
    o = torch.zeros((nq, v.shape[1]), dtype=torch.float64)
    for j0 in range(0, nkv, block_n):
        s = (qf @ kf[j0:j0 + block_n].T).to(torch.float32) * c
        mb = torch.maximum(m, s.max(dim=1, keepdim=True).values)
        alpha = torch.exp2((m - mb).to(torch.float64)).to(torch.float32)
        p = torch.exp2((s - mb).to(torch.float64)).to(torch.float32)
        lsum = lsum * alpha + p.sum(dim=1, keepdim=True, dtype=torch.float64).to(torch.float32)
        o = o * alpha.to(torch.float64) + p.to(p_dtype).to(torch.float64) @ vf[j0:j0 + block_n]
        m = mb
    exact = torch.softmax(qf @ kf.T * scale, dim=1) @ vf
    return (o / lsum.to(torch.float64)), exact


# ---------------------------------------------------------------------- kernel
class _Emitter:
    def __init__(self, plan: AttentionPlan, name: str) -> None:
        self.plan, self.name = plan, name
        self.b = Builder()
        self.elem = plan.dtype.storage
        self.records: list[common.LdsInstruction] = []

    def build(self) -> tuple[str, list[common.LdsInstruction], LaneReducer]:
        b, plan = self.b, self.plan
        qk, pv = plan.qk, plan.pv
        d, bn, eb = plan.head_dim, plan.block_n, plan.dtype.bytes
        tid, _t32, lane, warp = atoms.thread_ids(b)
        lanes = LaneValues(b, tid, lane, warp, 1, 64, plan.arch)
        q0 = mul(b, atoms.block_id(b, "x"), QUERY_TILE)
        NQ, NKV, D = "%Nq", "%Nkv", b.const(d)
        rq = atoms.buffer_rsrc_value(b, "%Q", self._i64(mul(b, NQ, d * eb)))
        rk = atoms.buffer_rsrc_value(b, "%K", self._i64(mul(b, NKV, d * eb)))
        rv = atoms.buffer_rsrc_value(b, "%V", self._i64(mul(b, NKV, d * eb)))
        ro = atoms.buffer_rsrc_value(b, "%O", self._i64(mul(b, NQ, d * 4)))
        lds = atoms.lds_base(b, "attn_lds_v")
        vec_qk = qk.items("A") * qk.c
        k_tile = GlobalTile(b, lanes, qk.operand("A"), 1, vec_qk, self.elem, "K")
        q_tile = GlobalTile(b, lanes, transposed(qk.operand("B")), 1, vec_qk, self.elem, "Q")
        v_tile = GlobalTile(b, lanes, plan.v_writer, 1, plan.v_vec, self.elem, "V")
        v_stage = LdsStage(b, lanes, lds, plan.v_stage, self.elem, "V")
        s_lay = qk.acc()
        n_s = s_lay.in_dim_size("register")
        key_rows = []
        for r in range(n_s):
            v, dl = lanes.value_of(layout_tables(s_lay, r, 1, lanes.wave_size)["dim0"], what=f"key of S register {r}")
            key_rows.append((v, dl))
        reducer = LaneReducer(b, lanes, plan.arch, reduce_lane_bits(s_lay, "dim0"))
        # P's round trip, if its plan takes one: one wave (THREADS), so its LDS accesses stay in order across the
        # key blocks' iterations and need no barrier between them
        p_lds, p_globals = atoms.plan_lds(b, "attn_lds_p", plan.p_plan.lds_bytes)
        conv = PlanEmitter(b, plan.p_plan, lanes, p_lds)
        conv.prepare()
        q_regs = q_tile.load(rq, q0, b.const(0), NQ, D, D)
        c2 = fconst(b, plan.scale * LOG2E)
        ninf = fconst(b, -math.inf)
        o_t = vector_type(pv.items("C"), "f32")
        inits = [(fconst(b, 0.0, o_t), o_t) for _ in range(pv.tiles[0])] + [(ninf, "f32"), (fconst(b, 0.0), "f32")]
        nkb = b.arith("divui", add(b, NKV, bn - 1), b.const(bn))

        def body(kb: str, carried: list[str]) -> list[str]:
            o_acc, m_old, l_old = carried[:-2], carried[-2], carried[-1]
            j0 = mul(b, kb, bn)
            k_regs = k_tile.load(rk, j0, b.const(0), NKV, D, D)
            v_regs = v_tile.load(rv, j0, b.const(0), NKV, D, D)
            s_vals = self._scores(q_regs, k_regs, key_rows, j0, NKV, c2, ninf)
            m_loc = s_vals[0]
            for x in s_vals[1:]:
                m_loc = b.value(f"arith.maxnumf {m_loc}, {x} : f32", "mx")
            m_new = b.value(f"arith.maxnumf {m_old}, {reducer.reduce(m_loc, 'maxnumf')} : f32", "m")
            alpha = atoms.exp2(b, b.value(f"arith.subf {m_old}, {m_new} : f32", "d"))
            p = [atoms.exp2(b, b.value(f"arith.subf {x}, {m_new} : f32", "d")) for x in s_vals]
            psum = p[0]
            for x in p[1:]:
                psum = b.value(f"arith.addf {psum}, {x} : f32", "sum")
            l_new = b.value(f"arith.addf {b.value(f'arith.mulf {l_old}, {alpha} : f32', 'l')}, "
                            f"{reducer.reduce(psum, 'addf')} : f32", "l")
            p_regs = self._convert_p(conv, p)
            b.line("gpu.barrier")  # the previous block's V reads are done
            v_stage.store(v_regs)
            b.line("gpu.barrier")
            vt_regs = v_stage.read()
            alpha_v = b.value(f"vector.broadcast {alpha} : f32 to {o_t}", "av")
            o_new = [b.value(f"arith.mulf {o}, {alpha_v} : {o_t}", "o") for o in o_acc]
            ta, tb, _ = atoms.mfma_operand_types(pv.ins)
            for g in range(pv.groups):
                pb = mfma_operand(b, p_regs, pv, "B", g, 0, tb)
                for tm in range(pv.tiles[0]):
                    o_new[tm] = mfma_unit_scale(b, pv.ins, mfma_operand(b, vt_regs, pv, "A", g, tm, ta), pb, o_new[tm])
            return o_new + [m_new, l_new]

        out = scf_for(b, nkb, inits, body)
        o_acc, l_fin = out[:-2], out[-1]
        inv = b.value(f"arith.divf {fconst(b, 1.0)}, {l_fin} : f32", "inv")
        inv_v = b.value(f"vector.broadcast {inv} : f32 to {o_t}", "iv")
        o_regs = Registers(b, "f32")
        for tm in range(pv.tiles[0]):
            o_regs.put(list(pv.acc_registers(tm, 0)), b.value(f"arith.mulf {o_acc[tm]}, {inv_v} : {o_t}", "o"))
        GlobalTile(b, lanes, transposed(pv.acc()), 1, 1, "f32", "O").store(o_regs, ro, q0, b.const(0), NQ, D, D)
        self.records = v_stage.records("per key block", 0, [0], [0]) + lds_instructions(plan.p_plan)
        params = [("%Q", "!llvm.ptr<1>"), ("%K", "!llvm.ptr<1>"), ("%V", "!llvm.ptr<1>"), ("%O", "!llvm.ptr<1>"),
                  ("%Nq", "i32"), ("%Nkv", "i32")]
        lds_bytes = -(-plan.v_stage.lds_bytes // 16) * 16
        text = kernel_module(self.name, params, b.body(), THREADS,
                             list(lanes.globals) + [atoms.lds_global("attn_lds_v", lds_bytes)] + p_globals)
        return text, self.records, reducer

    def _i64(self, x: str) -> str:
        return self.b.cast("arith.extui", x, "i32", "i64")

    def _scores(self, q_regs: Registers, k_regs: Registers, key_rows, j0: str, nkv: str, c2: str,
                ninf: str) -> list[str]:
        """``S^T`` of the block, scaled to the exp2 domain, keys beyond ``Nkv`` at ``-inf`` (one f32 per register)."""
        b, qk = self.b, self.plan.qk
        ta, tb, _ = atoms.mfma_operand_types(qk.ins)
        c_t = vector_type(qk.items("C"), "f32")
        accs = [fconst(b, 0.0, c_t) for _ in range(qk.tiles[0])]
        for g in range(qk.groups):
            qb = mfma_operand(b, q_regs, qk, "B", g, 0, tb)
            for tm in range(qk.tiles[0]):
                accs[tm] = mfma_unit_scale(b, qk.ins, mfma_operand(b, k_regs, qk, "A", g, tm, ta), qb, accs[tm])
        vals = [None] * (qk.items("C") * qk.tiles[0])
        for tm in range(qk.tiles[0]):
            for e, r in enumerate(qk.acc_registers(tm, 0)):
                s = b.value(f"arith.mulf {b.extract(accs[tm], e, c_t)}, {c2} : f32", "s")
                key = add(b, add(b, j0, key_rows[r][0]), key_rows[r][1])
                vals[r] = b.select(ult(b, key, nkv), s, ninf, "f32")
        return vals

    def _convert_p(self, conv: PlanEmitter, p: list[str]) -> Registers:
        """Round ``P`` to the dtype, pack it in dwords (slot = S register), run the conversion plan."""
        b, info = self.b, self.plan.dtype
        per = 32 // info.bits
        dwords: dict[int, str] = {}
        for dw in range(len(p) // per):
            xs = p[dw * per:(dw + 1) * per]
            if info.bits == 8:
                word = atoms.cvt_pk_fp8_f32(b, xs[0], xs[1], b.const(0), False)
                dwords[dw] = atoms.cvt_pk_fp8_f32(b, xs[2], xs[3], word, True)
            else:
                ft = info.name
                h = [b.cast("arith.truncf", x, "f32", ft) for x in xs]
                vec = b.build_vector(h, ft)
                dwords[dw] = b.value(f"llvm.bitcast {vec} : vector<2x{ft}> to i32", "bc")
        atoms.region_marker(b, "conv", "begin")
        out = conv.emit(dwords)
        atoms.region_marker(b, "conv", "end")
        regs = Registers(b, self.elem)
        pt = vector_type(per, self.elem)
        for dw in range(-(-self.plan.p_plan.slots_out // per)):
            regs.put(list(range(dw * per, dw * per + per)), b.value(f"llvm.bitcast {out[dw]} : i32 to {pt}", "bc"))
        return regs


def emit_attention(plan: AttentionPlan, name: str = "attention") -> tuple[str, list[common.LdsInstruction], list]:
    """The MLIR of the attention kernel, its LDS instructions and the reduction's lane instructions."""
    text, records, reducer = _Emitter(plan, name).build()
    return text, records, reducer.describe()


# ---------------------------------------------------------------------- command line
def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dtype", type=dtype_arg, choices=("f16", "bf16", "fp8"), default="f16", help="Q, K, V and P element type")
    p.add_argument("--d", type=int, default=64, help="head dim (default 64)")
    p.add_argument("--nq", type=int, default=32, help="queries (default 32: one tile)")
    p.add_argument("--nkv", type=int, default=80, help="keys (default 80: a ragged last key block)")
    p.add_argument("--scale", type=float, help="softmax scale (default 1/sqrt(d))")
    p.add_argument("--instr", help="force an MFMA instruction (default: chosen per arch)")


def build(args: argparse.Namespace) -> common.KernelBuild:
    for what in ("nq", "nkv"):
        if getattr(args, what) < 1:
            raise LayoutError(f"--{what} must be positive")
    plan = plan_attention(args.arch, args.dtype, args.d, args.scale, args.instr)
    check_kernel_lds(args.arch, plan.v_stage.lds_bytes + plan.p_plan.lds_bytes)
    check_kernel_buffers(args.arch, plan.buffer_bytes(args.nq, args.nkv), interpret=args.interpret)
    text, lds, reduction = emit_attention(plan)
    decisions = plan.describe()
    decisions["row_reduction"] = reduction
    return common.KernelBuild("attention", args.arch, text, lds, decisions, regions=("conv",), extra={"plan": plan})


def make_case(kb: common.KernelBuild, args: argparse.Namespace, seed: int) -> common.Case:
    plan: AttentionPlan = kb.extra["plan"]
    q = random_values((args.nq, args.d), args.dtype, args.arch, seed)
    k = random_values((args.nkv, args.d), args.dtype, args.arch, seed + 1)
    v = random_values((args.nkv, args.d), args.dtype, args.arch, seed + 2)
    o = torch.zeros((args.nq, args.d), dtype=torch.float32)
    blocked, exact = reference(q, k, v, plan.scale, plan.block_n, plan.dtype.torch_dtype)
    atol = 2e-2 if plan.dtype.bits == 8 else 2e-3
    return common.Case([q, k, v, o, args.nq, args.nkv], (-(-args.nq // QUERY_TILE), 1, 1), (THREADS, 1, 1),
                       {3: blocked.to(torch.float32)}, atol=atol, rtol=1e-3,
                       sizes={"Nq": args.nq, "Nkv": args.nkv, "D": args.d, "dtype": args.dtype,
                              "reference_vs_exact_softmax": float((blocked - exact).abs().max())})


def main(argv: list[str] | None = None) -> int:
    """``linlayout kernel attention ARGV``: the exit status."""
    return common.main("attention", __doc__.split("\n\n")[0], add_arguments, build, make_case, argv)


if __name__ == "__main__":
    raise SystemExit(main())
