"""Thread and workgroup ids, barriers, waits, and the ops that only steer the scheduler.

Barrier model.  All waves run in lockstep, so a barrier's only observable effect is on LDS
ordering: ``gpu.barrier`` (fence + ``s_barrier`` + fence; with a ``memfence`` list, the fences
cover those address spaces only, and a list without ``#gpu.address_space<workgroup>`` orders no
LDS access) and ``rocdl.s.barrier`` after all
LDS operations were waited for start a new *epoch* of the LDS race tracker (see
``memory.LocalMemory``).  ``rocdl.s.barrier`` while LDS writes may still be in flight (no
``rocdl.s.waitcnt`` with lgkmcnt 0 and no ``llvm.fence`` since the last LDS write) does not:
gfx90a/gfx942/gfx950 have the back-off barrier, so LLVM inserts no wait before
``s_barrier`` and another wave may not see the data yet.  Any barrier under a narrowed EXEC
mask (divergent control flow) is an error.
"""

from __future__ import annotations

import re

import numpy as np

from .registry import OpInfo, register
from .types import IntT, normalize

_DIMS = {"x": 0, "y": 1, "z": 2}


def _dim(op: OpInfo) -> int:
    m = re.search(r"dim\s*([xyz])", str(op.attr("dimension")))
    if not m:
        raise op.error(f"unknown dimension {op.attr('dimension')}")
    return _DIMS[m.group(1)]


def _uniform(value: int, t) -> np.ndarray:
    return normalize(np.array([value], np.uint64), t)


@register("gpu.thread_id", "gpu.block_id", "gpu.block_dim", "gpu.grid_dim", "gpu.global_id")
def _gpu_ids(op: OpInfo):
    d = _dim(op)
    r = op.results[0]
    t = op.result_types[0]
    kind = op.name.split(".")[1]

    def step(ctx):
        if kind == "thread_id":
            ctx.vals[r] = normalize(ctx.tid[d].astype(np.uint64), t)
        elif kind == "block_id":
            ctx.vals[r] = _uniform(ctx.bid[d], t)
        elif kind == "block_dim":
            ctx.vals[r] = _uniform(ctx.block[d], t)
        elif kind == "grid_dim":
            ctx.vals[r] = _uniform(ctx.grid[d], t)
        else:
            ctx.vals[r] = normalize((ctx.tid[d] + ctx.bid[d] * ctx.block[d]).astype(np.uint64), t)

    return step


@register("gpu.lane_id", "gpu.subgroup_id", "gpu.subgroup_size", "rocdl.wavefrontsize")
def _gpu_wave(op: OpInfo):
    r = op.results[0]
    t = op.result_types[0]
    name = op.name

    def step(ctx):
        if name == "gpu.lane_id":
            ctx.vals[r] = normalize(ctx.lane.astype(np.uint64), t)
        elif name == "gpu.subgroup_id":
            ctx.vals[r] = normalize(ctx.wave.astype(np.uint64), t)
        else:
            ctx.vals[r] = _uniform(ctx.target.wave_size, t)

    return step


@register(*(f"rocdl.workitem.id.{d}" for d in "xyz"), *(f"rocdl.workgroup.id.{d}" for d in "xyz"))
def _rocdl_ids(op: OpInfo):
    d = _DIMS[op.name[-1]]
    r = op.results[0]
    t = op.result_types[0]
    if not isinstance(t, IntT):
        raise op.error(f"result type {t} is not an integer")
    item = "workitem" in op.name

    def step(ctx):
        ctx.vals[r] = normalize(ctx.tid[d].astype(np.uint64), t) if item else _uniform(ctx.bid[d], t)

    return step


def _check_converged(ctx, op: OpInfo) -> None:
    if not ctx.converged():
        raise op.error("barrier inside divergent control flow (some threads of the workgroup would not reach it)")


@register("gpu.barrier")
def _gpu_barrier(op: OpInfo):
    fences_lds = not op.has_attr("address_spaces") or "workgroup" in str(op.attr("address_spaces"))

    def step(ctx):
        _check_converged(ctx, op)
        if fences_lds:
            ctx.lds_pending = False
        if not ctx.lds_pending:
            ctx.lds.barrier()

    return step


@register("rocdl.s.barrier", "rocdl.barrier")
def _s_barrier(op: OpInfo):
    full = op.name == "rocdl.barrier"  # __syncthreads-style: waits and fences included

    def step(ctx):
        _check_converged(ctx, op)
        if full:
            ctx.lds_pending = False
        if not ctx.lds_pending:
            ctx.lds.barrier()

    return step


#: The ``s_waitcnt`` immediate's lgkmcnt field (shift, mask) by GFX generation: gfx9 bits 11:8, gfx11
#: bits 9:4.  gfx12 has no ``s_waitcnt``; ``s_wait_dscnt`` waits for LDS accesses there.
LGKMCNT_FIELDS = {9: (8, 0xF), 11: (4, 0x3F)}


@register("rocdl.s.waitcnt")
def _waitcnt(op: OpInfo):
    generation = op.target.gfx_generation
    if generation not in LGKMCNT_FIELDS:
        raise op.error(f"{op.arch} (GFX{generation}) has no s_waitcnt; LDS waits are rocdl.s.wait.dscnt")
    shift, mask = LGKMCNT_FIELDS[generation]
    value = op.int_attr("bitfield") if op.has_attr("bitfield") else op.int_attr("value", 0xFFFF)
    return _lds_done if ((value >> shift) & mask) == 0 else None


@register("rocdl.s.wait.dscnt")
def _wait_dscnt(op: OpInfo):
    if op.target.gfx_generation < 12:
        raise op.error(f"s_wait_dscnt exists from gfx12 on, not on {op.arch}")
    return _lds_done if op.int_attr("count") == 0 else None


def _lds_done(ctx) -> None:
    """The step of a wait for every LDS access of the wave (or a fence): none is in flight after it."""
    ctx.lds_pending = False


@register("llvm.fence")
def _fence(op: OpInfo):
    return _lds_done


@register("rocdl.sched.barrier", "rocdl.sched.group.barrier", "rocdl.iglp.opt", "rocdl.s.setprio", "rocdl.s.nop",
          "rocdl.s.sleep", "rocdl.wave.barrier")
def _no_op(op: OpInfo):
    return None


@register("llvm.inline_asm")
def _inline_asm(op: OpInfo):
    text = op.str_attr("asm_string")
    code = [ln for ln in text.replace("\\n", "\n").splitlines() if ln.strip() and not ln.strip().startswith(";")]
    if code:
        raise op.error(f"inline assembly {text!r} cannot be interpreted (only comment-only markers)")
    if not op.results:  # a marker; operands only pin values in place
        return None
    # a marker whose outputs are tied to inputs ("=v,=v,0,1"): each output is its input, unchanged
    cons = op.str_attr("constraints").split(",")
    n_out = sum(c.startswith("=") for c in cons)
    tied = {int(c): i for i, c in enumerate(c for c in cons if not c.startswith("=")) if c.isdigit()}
    if sorted(tied) != list(range(n_out)):
        raise op.error(f"inline assembly {text!r}: every output must be tied to an input (constraints {cons})")
    srcs, r = [op.operands[tied[k]] for k in range(n_out)], op.results[0]

    def step(ctx):
        ctx.vals[r] = ctx.vals[srcs[0]] if n_out == 1 else tuple(ctx.vals[s] for s in srcs)

    return step
