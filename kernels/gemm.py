"""GEMM ``C = A * B^T`` with MFMA: A (M x K) through a double-buffered, swizzled LDS tile,
B (N x K) preshuffled on the host so each lane loads its MFMA operands straight from global
memory; fp16, bf16 and fp8 (E4M3) on gfx942 and gfx950; any M, N, K.

Layout decisions, each solved rather than hand-written:

* **instruction** (:func:`choose_instruction`): of the arch's single-block 32x32 MFMAs for
  the dtype, the most FLOPs per cycle (catalog ``linlayout.hw.mfma``): gfx942 f16
  ``v_mfma_f32_32x32x8_f16``; gfx950 f16 ``v_mfma_f32_32x32x16_f16``; fp8 gfx942
  ``v_mfma_f32_32x32x16_fp8_fp8``, gfx950 ``v_mfma_f32_32x32x64_f8f6f4``.
* **tile**: ``WM x WN = 2 x 2`` warps, one 32x32 MFMA tile each (64 x 64 per workgroup);
  ``BK`` = :data:`K_BLOCK_BYTES` of a row of A, at least two MFMAs.
* **K order** (:mod:`linlayout.kernels.mfma_tiles`): the factor ``c`` (lane holds ``c`` MFMAs' K
  values side by side) is chosen by synthesizing the LDS layout for every legal ``c`` and
  keeping the fewest LDS instructions, then the fewest bank cycles.
* **LDS swizzle**: ``linlayout.synth.swizzle.synthesize`` of the global-load layout of A (a blocked
  layout, ``vec`` consecutive K per lane, :func:`a_vector`) and the MFMA A-operand layout;
  every LDS instruction is then checked by the bank analysis (the static report).
* **B preshuffle** (:func:`preshuffle_b`): the B-operand layout of the tiling gives, for
  every (K block, warp, lane, register), the B element it needs; the host gathers B into
  that order (zero outside the matrix), so lane ``l`` loads its ``BK/2`` elements of a K
  block as one contiguous run (16-byte loads).

Out of bounds: A is read with raw buffer loads whose lanes outside the matrix get an
offset beyond ``num_records`` (they read 0), C is written the same way (dropped); the
preshuffled B is zero-padded to whole tiles.  K must be a multiple of the A load vector
(the kernel is specialized on ``K``'s alignment, e.g. 8 for 16-byte f16 loads; any K works
with narrower loads).

Kernel ``gemm(A, Bp, C, M, N, K)``: grid ``(ceil(N/BN), ceil(M/BM))``, ``64 * WM * WN`` threads (declared,
``GemmPlan.threads``).
K loop (``scf.for`` over ``ceil(K/BK)`` blocks), LDS stage ``s = kb & 1``: issue the global
loads of A's next block and B's block, read the A operands of stage ``s`` from LDS, run the
MFMAs, write the next A block into stage ``s ^ 1``, one barrier.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np
import torch

from linlayout import LayoutError, LinearLayout
from linlayout.argparsing import dtype_arg
from linlayout.encodings.blocked import Blocked
from linlayout.hw.limits import check_kernel_buffers, check_kernel_lds
from linlayout.hw.mfma import MfmaInstruction, get_instruction, instructions_for
from linlayout.lowering.emit import atoms
from linlayout.lowering.emit.builder import Builder, kernel_module, vector_type
from linlayout.lowering.emit.lane_values import LaneValues

from . import common
from .dtypes import DtypeInfo, dtype_info, random_values
from .lds_tile import StagedTile, stage_tile
from .mfma_tiles import MfmaTiling
from .mlir_ops import fconst, mfma_operand, mfma_unit_scale, scf_for
from .regs import Registers, bitcast
from .tile_io import GlobalTile, LdsStage, add, mul

__all__ = ["K_BLOCK_BYTES", "GLOBAL_VECTOR_BYTES", "GemmPlan", "choose_instruction", "a_vector",
           "plan_gemm", "preshuffle_b", "emit_gemm", "reference", "add_arguments", "build", "make_case"]

#: [design parameter] Bytes of a row of A per K block (BK = this / element bytes, at least 2 MFMAs).
K_BLOCK_BYTES = 64
#: Widest global (buffer) load per lane: buffer_load_dwordx4.
GLOBAL_VECTOR_BYTES = 16
#: K-order factors tried (linlayout.kernels.mfma_tiles); a lane holds at most 16 bytes of one K run beyond c = 1.
K_ORDER_FACTORS = (1, 2, 4)
#: The MFMA operand types that count as "the dtype" (fp8 = E4M3 on both operands).
_OPERAND_TYPES = {"f16": ("f16",), "bf16": ("bf16",), "fp8": ("fp8",)}


def _log2(x: int) -> int:
    return x.bit_length() - 1


def choose_instruction(arch: str, dtype: str, name: str | None = None) -> tuple[MfmaInstruction, list[dict]]:
    """The single-block 32x32 MFMA of ``dtype`` with the most FLOPs per cycle (fewest cycles on a
    tie), and the candidates considered; ``name`` forces an instruction."""
    if name is not None:
        ins = get_instruction(arch, name)
        if ins.a_type not in _OPERAND_TYPES.get(dtype, ()) or ins.blocks != 1:
            raise LayoutError(f"{ins.name} does not take single-block {dtype} operands")
        return ins, [{"instruction": ins.name, "flops_per_cycle": ins.flops // ins.cycles, "forced": True}]
    cands = [i for i in instructions_for(arch) if i.blocks == 1 and i.m == i.n == 32 and not i.scaled
             and i.a_type in _OPERAND_TYPES[dtype] and i.b_type == i.a_type]
    if not cands:
        raise LayoutError(f"{arch} has no single-block 32x32 MFMA for {dtype}")
    cands.sort(key=lambda i: (-i.flops / i.cycles, i.cycles))
    return cands[0], [{"instruction": i.name, "cycles": i.cycles, "flops_per_cycle": i.flops // i.cycles}
                      for i in cands]


def a_vector(k: int, element_bytes: int, bk: int) -> int:
    """Elements of A per lane per global load: the largest power of two with at most
    :data:`GLOBAL_VECTOR_BYTES` bytes that divides ``K`` (rows stay aligned) and ``BK``."""
    v = GLOBAL_VECTOR_BYTES // element_bytes
    while v > 1 and (k % v or bk % v):
        v //= 2
    return v


def a_writer_layout(bm: int, bk: int, vec: int, num_warps: int) -> LinearLayout:
    """The global-load layout of the ``BM x BK`` A block: ``vec`` consecutive K per lane, lanes
    along K first (Triton's blocked layout ``sizePerThread [1, vec]``, order ``[1, 0]``)."""
    tk = min(64, bk // vec)
    return Blocked((1, vec), (64 // tk, tk), (num_warps, 1), (1, 0)).to_linear_layout([bm, bk])


@dataclass
class GemmPlan:
    """Every decision of one GEMM kernel (see the module docstring)."""

    arch: str
    dtype: DtypeInfo
    tiling: MfmaTiling
    vec: int
    writer: LinearLayout
    staged: StagedTile
    candidates: dict

    @property
    def eb(self) -> int:
        return self.dtype.bytes

    @property
    def stage_bytes(self) -> int:
        """LDS bytes per stage, rounded up to 512 (a whole number of bank rows on every target)."""
        return -(-self.staged.lds_bytes // 512) * 512

    @property
    def lds_bytes(self) -> int:
        """LDS of the kernel: two stages (the double buffer of A)."""
        return 2 * self.stage_bytes

    @property
    def threads(self) -> int:
        """Threads of the workgroup: one wave64 per warp of the tiling (``64 * WM * WN``)."""
        return 64 * self.tiling.num_warps

    @property
    def lane_b_elements(self) -> int:
        """Elements of B one lane loads per K block and N tile (``ipl * G``)."""
        return self.tiling.items("B") * self.tiling.groups

    def buffer_bytes(self, m: int, n: int, k: int) -> dict[str, int]:
        """Bytes of the kernel's buffers for ``C (m x n) = A (m x k) * B^T (n x k)``: B preshuffled
        in whole ``block_n x bk`` blocks (:func:`preshuffle_b`), C in f32."""
        t = self.tiling
        n_blocks, k_blocks = -(-n // t.block_n), -(-k // t.bk)
        return {"A": m * k * self.eb, "B": n_blocks * k_blocks * t.block_n * t.bk * self.eb, "C": m * n * 4}

    def describe(self) -> dict:
        return {"dtype": self.dtype.name, "tiling": self.tiling.describe(), "a_global_vector": self.vec,
                "a_writer": self.writer.to_json()["bases"], "lds_a": self.staged.describe(),
                "lds_stage_bytes": self.stage_bytes, "lds_stages": 2,
                "b_preshuffle": f"[ceil(N/{self.tiling.block_n}), ceil(K/{self.tiling.bk}), {self.tiling.warps[1]} warps,"
                                f" {self.tiling.tiles[1]} tiles, 64 lanes, {self.lane_b_elements} elements]",
                "candidates": self.candidates}


def plan_gemm(arch: str, dtype: str, k: int, *, instr: str | None = None, warps=(2, 2), tiles=(1, 1),
              bk: int | None = None) -> GemmPlan:
    """Choose instruction, tile, K order and LDS swizzle for ``dtype`` on ``arch`` (``k``: the K the
    kernel is specialized for -- only its alignment matters)."""
    info = dtype_info(dtype, arch)
    if info.mfma_type is None:
        raise LayoutError(f"gemm takes f16, bf16 or fp8, not {dtype}")
    ins, ins_cands = choose_instruction(arch, dtype, instr)
    eb = info.bytes
    bk = bk or max(2 * ins.k, K_BLOCK_BYTES // eb)
    vec = a_vector(int(k), eb, bk)
    num_warps = warps[0] * warps[1]
    tried = []
    best = None
    for c in K_ORDER_FACTORS:
        if (c > 1 and ins.items_per_lane("A") * c * eb > GLOBAL_VECTOR_BYTES) or c > bk // ins.k:
            continue
        tiling = MfmaTiling(ins, tuple(warps), tuple(tiles), bk, c)
        writer = a_writer_layout(tiling.block_m, bk, vec, num_warps)
        st = stage_tile(writer, tiling.operand("A"), info.bits, arch, num_warps)
        s = st.synthesis
        key = (s.write_instructions + s.read_instructions, s.total_cycles)
        tried.append({"c": c, "k_width": c * ins.items_per_lane("A"), "lds_instructions": key[0],
                      "lds_cycles": key[1], "write_op": s.write_op, "read_op": s.read_op})
        if best is None or key < best[0]:
            best = (key, tiling, writer, st)
    if best is None:
        raise LayoutError(f"no K order fits {ins.name} with BK = {bk}")
    _, tiling, writer, st = best
    return GemmPlan(arch, info, tiling, vec, writer, st, {"instruction": ins_cands, "k_order": tried})


# ---------------------------------------------------------------------- host side
def preshuffle_b(b: torch.Tensor, plan: GemmPlan) -> torch.Tensor:
    """``B`` (N x K, row-major) in the kernel's load order, as a flat tensor of B's dtype.

    Index ``((((nb * nkb + kb) * WN + wn) * TN + tn) * 64 + lane) * R + r`` holds
    ``B[nb*BN + n, kb*BK + k]`` with ``(k, n) = Bop(register = r + R*tn, lane, warp = wn)`` (the
    tiling's B-operand layout, ``R = ipl * G``); zero outside B.
    """
    t = plan.tiling
    n_rows, k_cols = b.shape
    bn, bk = t.block_n, t.bk
    nbn, nkb = -(-n_rows // bn), -(-k_cols // bk)
    wn, tn, r_ = t.warps[1], t.tiles[1], plan.lane_b_elements
    lay = t.operand("B")
    w = np.arange(wn)[:, None, None, None]
    ti = np.arange(tn)[None, :, None, None]
    lane = np.arange(64)[None, None, :, None]
    r = np.arange(r_)[None, None, None, :]
    shape = (wn, tn, 64, r_)
    o = lay.apply({"register": np.broadcast_to(r + r_ * ti, shape), "lane": np.broadcast_to(lane, shape),
                   "warp": np.broadcast_to(w, shape)})
    kk, nn = np.asarray(o["dim0"]), np.asarray(o["dim1"])  # [wn, tn, 64, R] within the block
    rows = (np.arange(nbn)[:, None, None, None, None, None] * bn + nn[None, None])  # [nbn, 1, ...]
    cols = (np.arange(nkb)[None, :, None, None, None, None] * bk + kk[None, None])
    rows, cols = np.broadcast_arrays(rows, cols)
    inside = (rows < n_rows) & (cols < k_cols)
    flat = torch.zeros(rows.size, dtype=torch.float32)
    src = b.to(torch.float32).reshape(-1)
    idx = torch.from_numpy((np.where(inside, rows, 0) * k_cols + np.where(inside, cols, 0)).reshape(-1))
    flat = torch.where(torch.from_numpy(inside.reshape(-1)), src[idx], flat)
    return flat.to(b.dtype)


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``A @ B^T`` in float64 from the (rounded) inputs."""
    return a.to(torch.float64) @ b.to(torch.float64).T


# ---------------------------------------------------------------------- kernel
class _Emitter:
    def __init__(self, plan: GemmPlan, name: str) -> None:
        self.plan, self.name = plan, name
        self.t = plan.tiling
        self.b = Builder()
        self.elem = plan.dtype.storage

    def _i64(self, x: str) -> str:
        return self.b.cast("arith.extui", x, "i32", "i64")

    def build(self) -> tuple[str, list[common.LdsInstruction]]:
        b, t, plan = self.b, self.t, self.plan
        eb, W = plan.eb, t.num_warps
        tid, _t32, lane, warp = atoms.thread_ids(b)
        lanes = LaneValues(b, tid, lane, warp, W, 64, plan.arch)
        nb = atoms.block_id(b, "x")
        n0 = mul(b, nb, t.block_n)
        m0 = mul(b, atoms.block_id(b, "y"), t.block_m)
        M, N, K = "%M", "%N", "%K"
        nkb = b.arith("shrui", add(b, K, t.bk - 1), b.const(_log2(t.bk)))
        nbn = b.arith("shrui", add(b, N, t.block_n - 1), b.const(_log2(t.block_n)))
        block_bytes = t.block_n * t.bk * eb
        ra = atoms.buffer_rsrc_value(b, "%A", self._i64(mul(b, mul(b, M, K), eb)))
        rb = atoms.buffer_rsrc_value(b, "%Bp", self._i64(mul(b, mul(b, nbn, nkb), block_bytes)))
        rc = atoms.buffer_rsrc_value(b, "%C", self._i64(mul(b, mul(b, M, N), 4)))
        lds = atoms.lds_base(b, "gemm_lds")

        a_tile = GlobalTile(b, lanes, plan.writer, W, plan.vec, self.elem, "A")
        stage = LdsStage(b, lanes, lds, plan.staged, self.elem, "A")
        sb = plan.stage_bytes
        # B loads: the lane part of the preshuffled offset (the warp's N index, tile, lane)
        rl = plan.lane_b_elements
        wn_tab = np.arange(W)[:, None] % t.warps[1]
        b_lane = []
        for tn in range(t.tiles[1]):
            tab = ((wn_tab * t.tiles[1] + tn) * 64 + np.arange(64)[None, :]) * rl * eb
            v, d = lanes.value_of(tab, what=f"B offset of tile {tn}")
            b_lane.append(add(b, v, d))
        nb_off = mul(b, mul(b, nb, nkb), block_bytes)

        # prologue: A block 0 -> stage 0
        stage.store(a_tile.load(ra, m0, b.const(0), M, K, K), b.const(0))
        b.line("gpu.barrier")
        acc_t = vector_type(t.items("C"), "f32")
        inits = [(fconst(b, 0.0, acc_t), acc_t) for _ in range(t.tiles[0] * t.tiles[1])]

        def body(kb: str, accs: list[str]) -> list[str]:
            s = b.arith("andi", kb, b.const(1))
            a_next = a_tile.load(ra, m0, mul(b, add(b, kb, 1), t.bk), M, K, K)
            bregs = self._load_b(rb, b_lane, add(b, nb_off, mul(b, kb, block_bytes)))
            aregs = stage.read(mul(b, s, sb))
            accs = self._mfmas(aregs, bregs, accs)
            stage.store(a_next, mul(b, b.arith("xori", s, b.const(1)), sb))
            b.line("gpu.barrier")
            return accs

        accs = scf_for(b, nkb, inits, body)
        c_regs = Registers(b, "f32")
        for tm in range(t.tiles[0]):
            for tn in range(t.tiles[1]):
                c_regs.put(list(t.acc_registers(tm, tn)), accs[tn + t.tiles[1] * tm])
        GlobalTile(b, lanes, t.acc(), W, 1, "f32", "C").store(c_regs, rc, m0, n0, M, N, N)
        records = (stage.records("prologue, stage 0", sb, [0], [])
                   + stage.records("K loop, stage kb&1 / (kb+1)&1", sb, [1, 0], [0, 1]))
        text = kernel_module(self.name, [("%A", "!llvm.ptr<1>"), ("%Bp", "!llvm.ptr<1>"), ("%C", "!llvm.ptr<1>"),
                                         ("%M", "i32"), ("%N", "i32"), ("%K", "i32")], b.body(), plan.threads,
                             list(lanes.globals) + [atoms.lds_global("gemm_lds", plan.lds_bytes)])
        return text, records

    def _load_b(self, rb: str, b_lane: list[str], block_off: str) -> Registers:
        b, eb = self.b, self.plan.eb
        rl = self.plan.lane_b_elements
        per = min(GLOBAL_VECTOR_BYTES, rl * eb)
        n_el = per // eb
        load_t = vector_type(per // 4, "i32")
        regs = Registers(b, self.elem)
        for tn, lane_off in enumerate(b_lane):
            base = add(b, block_off, lane_off)
            for q in range(rl * eb // per):
                raw = atoms.buffer_load(b, rb, add(b, base, q * per), load_t)
                first = tn * rl + q * n_el
                regs.put(list(range(first, first + n_el)), bitcast(b, raw, load_t, vector_type(n_el, self.elem)))
        return regs

    def _mfmas(self, aregs: Registers, bregs: Registers, accs: list[str]) -> list[str]:
        t = self.t
        ta, tb, _ = atoms.mfma_operand_types(t.ins)
        out = list(accs)
        for g in range(t.groups):
            for tm in range(t.tiles[0]):
                a = mfma_operand(self.b, aregs, t, "A", g, tm, ta)
                for tn in range(t.tiles[1]):
                    i = tn + t.tiles[1] * tm
                    out[i] = mfma_unit_scale(self.b, t.ins, a, mfma_operand(self.b, bregs, t, "B", g, tn, tb), out[i])
        return out


def emit_gemm(plan: GemmPlan, name: str = "gemm") -> tuple[str, list[common.LdsInstruction]]:
    """The MLIR of the GEMM kernel of ``plan`` and its LDS instructions (for the bank report)."""
    return _Emitter(plan, name).build()


# ---------------------------------------------------------------------- command line
def _pair(text: str, what: str) -> tuple[int, int]:
    try:
        a, c = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise LayoutError(f"--{what} {text!r} must look like 2x2") from None
    if any(x < 1 or x & (x - 1) for x in (a, c)):
        raise LayoutError(f"--{what} {text!r}: both counts must be powers of two")
    return a, c


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dtype", type=dtype_arg, choices=("f16", "bf16", "fp8"), default="f16", help="A and B element type")
    p.add_argument("--m", type=int, default=40, help="rows of A and C (default 40)")
    p.add_argument("--n", type=int, default=40, help="rows of B, columns of C (default 40)")
    p.add_argument("--k", type=int, default=72, help="columns of A and B (default 72)")
    p.add_argument("--instr", help="force an MFMA instruction (default: chosen per arch)")
    p.add_argument("--warps", default="2x2", help="warps along M x N (default 2x2)")
    p.add_argument("--tiles", default="1x1", help="MFMA tiles per warp along M x N (default 1x1)")
    p.add_argument("--bk", type=int, help="K block (default: 64 bytes of A's row, at least two MFMAs)")


def build(args: argparse.Namespace) -> common.KernelBuild:
    for what in ("m", "n", "k"):
        if getattr(args, what) < 1:
            raise LayoutError(f"--{what} must be positive")
    if args.bk is not None and args.bk < 1:
        raise LayoutError("--bk must be positive")
    plan = plan_gemm(args.arch, args.dtype, args.k, instr=args.instr, warps=_pair(args.warps, "warps"),
                     tiles=_pair(args.tiles, "tiles"), bk=args.bk)
    check_kernel_lds(args.arch, plan.lds_bytes)
    check_kernel_buffers(args.arch, plan.buffer_bytes(args.m, args.n, args.k), interpret=args.interpret)
    text, lds = emit_gemm(plan)
    return common.KernelBuild("gemm", args.arch, text, lds, plan.describe(), extra={"plan": plan})


def make_case(kb: common.KernelBuild, args: argparse.Namespace, seed: int) -> common.Case:
    plan: GemmPlan = kb.extra["plan"]
    if args.k % plan.vec:
        raise LayoutError(f"K = {args.k} is not a multiple of the kernel's A vector {plan.vec}")
    a = random_values((args.m, args.k), args.dtype, args.arch, seed)
    bt = random_values((args.n, args.k), args.dtype, args.arch, seed + 1)
    c = torch.zeros((args.m, args.n), dtype=torch.float32)
    t = plan.tiling
    grid = (-(-args.n // t.block_n), -(-args.m // t.block_m), 1)
    ref = reference(a, bt).to(torch.float32)
    return common.Case([a, preshuffle_b(bt, plan), c, args.m, args.n, args.k], grid, (plan.threads, 1, 1),
                       {2: ref}, atol=1e-3 * max(1.0, args.k ** 0.5), rtol=1e-4,
                       sizes={"M": args.m, "N": args.n, "K": args.k, "dtype": args.dtype})


def main(argv: list[str] | None = None) -> int:
    """``linlayout kernel gemm ARGV``: the exit status."""
    return common.main("gemm", __doc__.split("\n\n")[0], add_arguments, build, make_case, argv)


if __name__ == "__main__":
    raise SystemExit(main())
