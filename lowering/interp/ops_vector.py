"""``vector`` dialect ops (and ``llvm`` vector element ops) on per-lane vectors.

A vector value is an array ``(L, *shape)``; positions count from the first vector axis.
Dynamic positions may differ per lane.  A position out of range is poison in MLIR and raises
``InterpreterError`` when an active lane uses it.
"""

from __future__ import annotations

import numpy as np

from .ops_arith import _max_min
from .ops_llvm import undef_value
from .registry import OpInfo, lanes, register, signed
from .types import FloatT, IntT, elem_of, normalize, shape_of

KDYN = -(2**63)


def _lanes_of(*xs) -> int:
    return max(x.shape[0] for x in xs)


def _positions(op: OpInfo, static: list, dyn_slots: list, dims: tuple):
    """A function ctx -> (index tuple over the vector axes, uniform?) for static/dynamic positions."""
    if len(static) > len(dims):
        raise op.error(f"position {static} has more entries than the vector has dimensions {dims}")
    for p, d in zip(static, dims):
        if p != KDYN and not 0 <= p < d:
            raise op.error(f"position {p} out of range for dimension {d}")
    dyn_bits = [t.bits for t in op.operand_types[len(op.operand_types) - len(dyn_slots):]]

    def get(ctx):
        pos, k, uniform = [], 0, True
        for p, d in zip(static, dims):
            if p != KDYN:
                pos.append(p)
                continue
            x = signed(ctx.vals[dyn_slots[k]], dyn_bits[k])
            k += 1
            bad = (x < 0) | (x >= d)
            if (bad if x.shape[0] == 1 else bad & ctx.active()).any():
                raise op.error(f"dynamic position out of range [0, {d}) in an active lane (poison)")
            x = np.where(bad, 0, x)
            if x.shape[0] == 1 or (x == x[0]).all():
                pos.append(int(x[0]))
            else:
                pos.append(x)
                uniform = False
        return tuple(pos), uniform

    return get


@register("vector.extract")
def _extract(op: OpInfo):
    src, r = op.operands[0], op.results[0]
    get = _positions(op, op.ints_attr("static_position"), op.operands[1:], shape_of(op.operand_types[0]))

    def step(ctx):
        x = ctx.vals[src]
        pos, uni = get(ctx)
        if uni:
            ctx.vals[r] = x[(slice(None),) + pos]
        else:
            L = ctx.T
            ctx.vals[r] = lanes(x, L)[(np.arange(L),) + tuple(lanes(np.atleast_1d(p), L) if isinstance(p, np.ndarray) else p for p in pos)]

    return step


@register("vector.insert")
def _insert(op: OpInfo):
    val, dest = op.operands[0], op.operands[1]
    r = op.results[0]
    get = _positions(op, op.ints_attr("static_position"), op.operands[2:], shape_of(op.operand_types[1]))

    def step(ctx):
        v, d = ctx.vals[val], ctx.vals[dest]
        pos, uni = get(ctx)
        L = _lanes_of(v, d) if uni else ctx.T
        out = np.array(lanes(d, L))
        if uni:
            out[(slice(None),) + pos] = v
        else:
            out[(np.arange(L),) + tuple(lanes(p, L) if isinstance(p, np.ndarray) else p for p in pos)] = lanes(v, L)
        ctx.vals[r] = out

    return step


#: The discardable attribute by which a lowering claims an ``llvm.extractelement``'s index the same in every
#: lane of a wave (LLVM then reads with ``v_movrels_b32`` at an ``m0`` index; linlayout.lowering.emit.plan_ops).
UNIFORM_INDEX_ATTR = "linlayout.uniform_index"


@register("llvm.extractelement")
def _llvm_extractelement(op: OpInfo):
    """``x[i]`` per lane; with ``UNIFORM_INDEX_ATTR`` an index that differs between active lanes of one wave
    raises (the claim the compiled code rests on: a uniform index is read through ``m0``)."""
    src, idx = op.operands
    r = op.results[0]
    n = shape_of(op.operand_types[0])[0]
    bits = op.operand_types[1].bits
    uniform = op.has_attr(UNIFORM_INDEX_ATTR)

    def step(ctx):
        x, i = ctx.vals[src], signed(ctx.vals[idx], bits)
        bad = (i < 0) | (i >= n)
        if (bad if i.shape[0] == 1 else bad & ctx.active()).any():
            raise op.error(f"element index out of range [0, {n}) in an active lane (poison)")
        if uniform and i.shape[0] > 1:
            waves = i.reshape(ctx.waves, -1)
            act = ctx.active().reshape(ctx.waves, -1)
            first = np.where(act.any(axis=1), np.argmax(act, axis=1), 0)
            differs = act & (waves != waves[np.arange(ctx.waves), first][:, None])
            if differs.any():
                w = int(np.argmax(differs.any(axis=1)))
                raise op.error(f"the index marked {UNIFORM_INDEX_ATTR} differs between the lanes of wave {w}")
        i = np.where(bad, 0, i)
        L = _lanes_of(x, i)
        ctx.vals[r] = lanes(x, L)[np.arange(L), lanes(i, L)]

    return step


@register("llvm.insertelement")
def _llvm_insertelement(op: OpInfo):
    dest, val, idx = op.operands
    r = op.results[0]
    n = shape_of(op.operand_types[0])[0]
    bits = op.operand_types[2].bits

    def step(ctx):
        d, v, i = ctx.vals[dest], ctx.vals[val], signed(ctx.vals[idx], bits)
        bad = (i < 0) | (i >= n)
        if (bad if i.shape[0] == 1 else bad & ctx.active()).any():
            raise op.error(f"element index out of range [0, {n}) in an active lane (poison)")
        i = np.where(bad, 0, i)
        L = _lanes_of(d, v, i)
        out = np.array(lanes(d, L))
        out[np.arange(L), lanes(i, L)] = lanes(v, L)
        ctx.vals[r] = out

    return step


@register("vector.extract_strided_slice")
def _extract_strided(op: OpInfo):
    offs, sizes, strides = op.ints_attr("offsets"), op.ints_attr("sizes"), op.ints_attr("strides")
    idx = (slice(None),) + tuple(slice(o, o + s * st, st) for o, s, st in zip(offs, sizes, strides))
    src, r = op.operands[0], op.results[0]

    def step(ctx):
        ctx.vals[r] = ctx.vals[src][idx]

    return step


@register("vector.insert_strided_slice")
def _insert_strided(op: OpInfo):
    offs, strides = op.ints_attr("offsets"), op.ints_attr("strides")
    sshape = shape_of(op.operand_types[0])
    lead = len(offs) - len(sshape)
    idx = (slice(None),) + tuple(offs[:lead]) + tuple(
        slice(o, o + s * st, st) for o, s, st in zip(offs[lead:], sshape, strides)
    )
    src, dest = op.operands
    r = op.results[0]

    def step(ctx):
        s, d = ctx.vals[src], ctx.vals[dest]
        out = np.array(lanes(d, _lanes_of(s, d)))
        out[idx] = s
        ctx.vals[r] = out

    return step


@register("vector.shape_cast")
def _shape_cast(op: OpInfo):
    shape = shape_of(op.result_types[0])
    src, r = op.operands[0], op.results[0]

    def step(ctx):
        x = ctx.vals[src]
        ctx.vals[r] = x.reshape((x.shape[0],) + shape)

    return step


@register("vector.from_elements")
def _from_elements(op: OpInfo):
    shape = shape_of(op.result_types[0])
    srcs, r = op.operands, op.results[0]

    def step(ctx):
        xs = [ctx.vals[s] for s in srcs]
        L = _lanes_of(*xs)
        ctx.vals[r] = np.stack([lanes(x, L) for x in xs], axis=1).reshape((L,) + shape)

    return step


@register("vector.broadcast")
def _broadcast(op: OpInfo):
    shape = shape_of(op.result_types[0])
    sshape = shape_of(op.operand_types[0])
    pad = (1,) * (len(shape) - len(sshape))
    src, r = op.operands[0], op.results[0]

    def step(ctx):
        x = ctx.vals[src]
        ctx.vals[r] = np.broadcast_to(x.reshape((x.shape[0],) + pad + sshape), (x.shape[0],) + shape)

    return step


@register("vector.shuffle", "llvm.shufflevector")
def _shuffle(op: OpInfo):
    mask = op.ints_attr("mask")
    t = op.result_types[0]
    a, b = op.operands
    r = op.results[0]
    def step(ctx):
        x, y = ctx.vals[a], ctx.vals[b]
        L = _lanes_of(x, y)
        both = np.concatenate([lanes(x, L), lanes(y, L)], axis=1)
        fill = undef_value(t, ctx.opts)
        out = np.array(lanes(fill, L))
        for i, m in enumerate(mask):
            if m >= 0:
                out[:, i] = both[:, m]
        ctx.vals[r] = out

    return step


@register("vector.step")
def _step(op: OpInfo):
    t = op.result_types[0]
    arr = normalize(np.arange(shape_of(t)[0], dtype=np.uint64)[None, :], t)
    r = op.results[0]

    def step(ctx):
        ctx.vals[r] = arr

    return step


_RED_INT = {"add": np.add, "mul": np.multiply, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
            "maxui": np.maximum, "minui": np.minimum, "maxsi": np.maximum, "minsi": np.minimum}


@register("vector.reduction")
def _reduction(op: OpInfo):
    kind = str(op.attr("kind")).split("<")[-1].rstrip(">")
    t = op.result_types[0]
    e = elem_of(t)
    src = op.operands[0]
    acc = op.operands[1] if len(op.operands) > 1 else None
    r = op.results[0]
    if isinstance(e, IntT):
        if kind not in _RED_INT:
            raise op.error(f"reduction kind {kind} on integers is not supported")
        fn = _RED_INT[kind]
        as_signed = kind in ("maxsi", "minsi")
    elif isinstance(e, FloatT):
        fns = {"add": np.add, "mul": np.multiply,
               "maxnumf": lambda x, y: _max_min(x, y, True, False), "minnumf": lambda x, y: _max_min(x, y, False, False),
               "maximumf": lambda x, y: _max_min(x, y, True, True), "minimumf": lambda x, y: _max_min(x, y, False, True)}
        if kind not in fns:
            raise op.error(f"reduction kind {kind} on floats is not supported")
        fn = fns[kind]
        as_signed = False
    else:
        raise op.error(f"reduction over {t}")

    def step(ctx):
        x = ctx.vals[src]
        a = None if acc is None else ctx.vals[acc]
        if as_signed:
            x = signed(x, e.bits)
            a = None if a is None else signed(a, e.bits)
        # LLVM's reductions without reassoc are ordered: ((acc op x0) op x1) op ...
        with np.errstate(all="ignore"):
            res = x[:, 0] if a is None else normalize(fn(a, x[:, 0]), t)
            for k in range(1, x.shape[1]):
                res = normalize(fn(res, x[:, k]), t)
        ctx.vals[r] = normalize(res, t)

    return step
