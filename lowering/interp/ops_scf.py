"""``scf.for``, ``scf.if``, ``scf.while`` with EXEC-mask semantics.

A condition or loop bound that is the same in every active lane runs like ordinary control
flow.  When lanes disagree the construct runs *divergently*, as the hardware does with EXEC
masking: ``scf.if`` runs the then-region on the lanes whose condition holds and the
else-region on the others (a region with no active lane is skipped), and merges the
results per lane; a divergent ``scf.for``/``scf.while`` keeps iterating while some lane is
active, each lane leaving when its own trip ends.  Ops inside see the narrowed mask
(``ctx.mask``): stores, loads and cross-lane ops honour it, and ``gpu.barrier`` refuses to
run under a narrowed mask.
"""

from __future__ import annotations

import numpy as np

from .core import run_block
from .registry import OpInfo, lanes, merge, register, signed, uniform_scalar
from .types import IntT, normalize


def _with_mask(ctx, mask, fn):
    old = ctx.mask
    ctx.set_mask(mask)
    try:
        return fn()
    finally:
        ctx.mask = old


@register("scf.if")
def _if(op: OpInfo):
    then_b = op.region(0)
    else_b = op.region(1) if op.num_regions > 1 and len(list(op.op.regions[1].blocks)) else None
    c = op.operands[0]
    res = op.results

    def step(ctx):
        cond = ctx.vals[c]
        u = uniform_scalar(cond, ctx.mask)
        if u is not None:
            branch = then_b if u else else_b
            outs = run_block(ctx, branch, []) if branch is not None else []
        else:
            act = ctx.active()
            cb = lanes(cond, ctx.T).astype(bool)
            m_then, m_else = act & cb, act & ~cb
            outs_t = _with_mask(ctx, m_then, lambda: run_block(ctx, then_b, [])) if m_then.any() else None
            outs_e = None
            if else_b is not None and m_else.any():
                outs_e = _with_mask(ctx, m_else, lambda: run_block(ctx, else_b, []))
            if outs_t is None or outs_e is None:
                outs = outs_t if outs_e is None else outs_e
            else:
                outs = [merge(cb, x, y, "scf.if result") for x, y in zip(outs_t, outs_e)]
        for s, v in zip(res, outs or []):
            ctx.vals[s] = v

    return step


def _as_int(x: np.ndarray, bits: int, unsigned: bool) -> np.ndarray:
    return x.astype(np.uint64).view(np.int64) if unsigned and bits == 64 else (x.astype(np.int64) if unsigned else signed(x, bits))


@register("scf.for")
def _for(op: OpInfo):
    body = op.region(0)
    lb_s, ub_s, st_s = op.operands[:3]
    init = op.operands[3:]
    res = op.results
    t = op.operand_types[0]
    if not isinstance(t, IntT):
        raise op.error(f"loop bounds of type {t} are not supported")
    unsigned = op.bool_attr("unsignedCmp")

    def step(ctx):
        v = ctx.vals
        act = ctx.mask
        lb, ub, st = (uniform_scalar(v[s], act) for s in (lb_s, ub_s, st_s))
        carried = [v[s] for s in init]
        if None not in (lb, ub, st):
            if unsigned:
                lb, ub, st = (x & ((1 << t.bits) - 1) for x in (lb, ub, st))
            else:
                lb, ub, st = (int(signed(np.array([x], np.uint64), t.bits)[0]) for x in (lb, ub, st))
            if st <= 0:
                raise op.error(f"scf.for step {st} is not positive (undefined behaviour)")
            for i in range(lb, ub, st):
                carried = run_block(ctx, body, [normalize(np.array([i & ((1 << t.bits) - 1)], np.uint64), t)] + carried)
        else:
            T = ctx.T
            stv = _as_int(lanes(v[st_s], T), t.bits, unsigned)
            if (stv[ctx.active()] <= 0).any():
                raise op.error("scf.for step is not positive in an active lane (undefined behaviour)")
            iv = _as_int(lanes(v[lb_s], T), t.bits, unsigned).copy()
            ubv = _as_int(lanes(v[ub_s], T), t.bits, unsigned)
            live = ctx.active() & (iv < ubv)
            while live.any():
                outs = _with_mask(ctx, live, lambda: run_block(ctx, body, [normalize(iv.astype(np.uint64), t)] + carried))
                carried = [merge(live, n, o, "scf.for iter_arg") for n, o in zip(outs, carried)]
                iv = iv + stv
                live = live & (iv < ubv)
        for s, x in zip(res, carried):
            v[s] = x

    return step


@register("scf.while")
def _while(op: OpInfo):
    before = op.region(0)
    after = op.region(1)
    init = op.operands
    res = op.results

    def step(ctx):
        cur = [ctx.vals[s] for s in init]
        results = None
        live = ctx.active().copy()
        while True:
            outs = _with_mask(ctx, live, lambda: run_block(ctx, before, cur))
            cond, fwd = outs[0], outs[1:]
            u = uniform_scalar(cond, live)
            c = np.full(ctx.T, bool(u)) if u is not None else lanes(cond, ctx.T).astype(bool)
            done = live & ~c
            if results is None:
                results = fwd
            elif done.any():
                results = [merge(done, f, r, "scf.while result") for f, r in zip(fwd, results)]
            live = live & c
            if not live.any():
                break
            cur = _with_mask(ctx, live, lambda: run_block(ctx, after, fwd))
        for s, x in zip(res, results):
            ctx.vals[s] = x

    return step
