"""Cross-lane ROCDL ops, with the ISA's semantics (``docs/amd_facts.md`` section 2).

Each op works inside one wave (64 lanes); values are reshaped to ``(waves, 64, ...)``.  EXEC
is ``ctx.active()``; the destination of an inactive lane is never observed, so it is 0.

* ``rocdl.ds_bpermute %addr, %src``: lane i reads lane ``(addr[i] / 4) % 64``; reading an
  inactive lane gives 0.
* ``rocdl.ds_swizzle %src, %offset`` (offset a wave-uniform constant): FFT (offset >=
  0xE000), rotate (>= 0xC000), quad-perm (bit 15), bit-mask (and/or/xor on lane bits 0-4,
  bit 5 kept) modes; reading an inactive lane gives 0.  Rotate wraps inside each 32-lane
  half [I, from the ISA example].
* ``rocdl.update.dpp %old, %src with ctrl, row_mask, bank_mask, bound_ctrl``: every gfx9
  DPP_CTRL (:func:`dpp_source`); a lane whose source is out of its row / the wave (or
  inactive, ``InterpOptions.dpp_inactive_source_invalid``) gets 0 when bound_ctrl is set and
  keeps ``old`` otherwise; lanes disabled by row_mask/bank_mask keep ``old``.  row_bcast:15/31
  lanes with no source row (0-15 / 0-31) are out of range, or with
  ``InterpOptions.dpp_row_bcast_row0_invalid=False`` not written at all.
* ``rocdl.permlane16.swap`` / ``permlane32.swap`` (gfx950): result struct (new first operand
  = vdst, new second operand = src0): vdst lanes 16-31 (48-63) swap with src0 lanes 0-15
  (32-47); for 32: vdst lanes 32-63 swap with src0 lanes 0-31.  Refused under a partial
  EXEC mask (what fi/bound_ctrl do with inactive lanes is not established).
* ``rocdl.readlane`` (lane index mod 64, EXEC ignored), ``rocdl.readfirstlane`` (lowest
  active lane, lane 0 if none), ``rocdl.mbcnt.lo/hi`` (ISA pseudocode: popcount of the mask
  bits below the lane; the ROCDL op text says the mask is also AND-ed with EXEC, which
  ``InterpOptions.mbcnt_and_exec`` selects), ``rocdl.ballot``.
"""

from __future__ import annotations

import numpy as np

from .registry import OpInfo, lanes, register, uniform_scalar
from .types import IntT, StructT, normalize

WAVE = 64


def _waves(ctx, x: np.ndarray) -> np.ndarray:
    return lanes(x, ctx.T).reshape((ctx.waves, WAVE) + x.shape[1:])


def _flat(ctx, x: np.ndarray) -> np.ndarray:
    return x.reshape((ctx.T,) + x.shape[2:])


def _gather(x: np.ndarray, src: np.ndarray) -> np.ndarray:
    """``x[w, src[w, l]]`` for ``x`` of shape ``(W, 64, ...)`` and ``src`` ``(W, 64)`` or ``(64,)``."""
    src = np.broadcast_to(src, x.shape[:2])
    return x[np.arange(x.shape[0])[:, None], src]


def _where_lanes(c: np.ndarray, a: np.ndarray, b) -> np.ndarray:
    return np.where(c.reshape(c.shape + (1,) * (a.ndim - c.ndim)), a, b)


@register("rocdl.ds_bpermute")
def _bpermute(op: OpInfo):
    idx, src = op.operands
    r = op.results[0]

    def step(ctx):
        x = _waves(ctx, ctx.vals[src])
        lane = ((_waves(ctx, ctx.vals[idx]).astype(np.uint32) >> np.uint32(2)) & np.uint32(WAVE - 1)).astype(np.int64)
        act = ctx.active().reshape(ctx.waves, WAVE)
        valid = _gather(act, lane)
        ctx.vals[r] = _flat(ctx, _where_lanes(valid, _gather(x, lane), 0).astype(x.dtype))

    return step


def swizzle_source(offset: int) -> np.ndarray:
    """Source lane of every lane (64,) for ds_swizzle_b32 with ``offset`` (docs/amd_facts.md 2.2)."""
    i = np.arange(WAVE)
    lo = i & 0x1F
    if offset >= 0xE000:  # FFT
        mask = offset & 0x1F
        rev = np.array([int(f"{v:05b}"[::-1], 2) for v in lo])
        j = (rev >> bin(mask).count("1")) | (i & mask)
    elif offset >= 0xC000:  # rotate
        rot = (offset >> 5) & 0x1F
        mask = offset & 0x1F
        if offset & 0x400:
            rot = -rot
        j = ((i & mask) | ((i + rot) & ~mask)) & 0x1F
    elif offset & 0x8000:  # quad perm
        j = (i & 0x1C) | ((offset >> (2 * (i & 3))) & 3)
    else:  # bit mask
        and_m, or_m, xor_m = offset & 0x1F, (offset >> 5) & 0x1F, (offset >> 10) & 0x1F
        j = ((lo & and_m) | or_m) ^ xor_m
    return (j & 0x1F) | (i & 0x20)


@register("rocdl.ds_swizzle")
def _swizzle(op: OpInfo):
    src, off = op.operands
    r = op.results[0]
    cache: dict = {}

    def step(ctx):
        o = uniform_scalar(ctx.vals[off], None)
        if o is None:
            raise op.error("the swizzle offset must be the same in every lane (it is an instruction immediate)")
        o = int(o) & 0xFFFF
        if o not in cache:
            cache[o] = swizzle_source(o)
        sl = cache[o]
        x = _waves(ctx, ctx.vals[src])
        act = ctx.active().reshape(ctx.waves, WAVE)
        valid = act[:, sl]
        ctx.vals[r] = _flat(ctx, _where_lanes(valid, x[:, sl], 0).astype(x.dtype))

    return step


def dpp_source(ctrl: int) -> tuple:
    """``(source lane (64,), in-range (64,) bool)`` of a gfx9 DPP_CTRL (docs/amd_facts.md 2.3).

    Raises ``ValueError`` for reserved values."""
    n = np.arange(WAVE)
    ok = np.ones(WAVE, bool)
    row = n & ~0xF
    if 0 <= ctrl <= 0xFF:
        return (n & 0x3C) | ((ctrl >> (2 * (n & 3))) & 3), ok
    s = ctrl & 0xF
    if 0x101 <= ctrl <= 0x10F:
        return np.minimum(n + s, WAVE - 1), (n & 0xF) + s < 16
    if 0x111 <= ctrl <= 0x11F:
        return np.maximum(n - s, 0), (n & 0xF) >= s
    if 0x121 <= ctrl <= 0x12F:
        return row | ((n - s) & 0xF), ok
    if ctrl == 0x130:
        return np.minimum(n + 1, WAVE - 1), n < WAVE - 1
    if ctrl == 0x134:
        return (n + 1) % WAVE, ok
    if ctrl == 0x138:
        return np.maximum(n - 1, 0), n > 0
    if ctrl == 0x13C:
        return (n - 1) % WAVE, ok
    if ctrl == 0x140:
        return row | (15 - (n & 0xF)), ok
    if ctrl == 0x141:
        return (n & ~7) | (7 - (n & 7)), ok
    if ctrl == 0x142:
        return np.maximum((n & 0x30) - 1, 0), n > 15
    if ctrl == 0x143:
        return np.full(WAVE, 31), n > 31
    if 0x150 <= ctrl <= 0x15F:
        return row + s, ok
    raise ValueError(f"DPP control {ctrl:#x} is reserved on gfx9")


@register("rocdl.update.dpp")
def _dpp(op: OpInfo):
    ctrl = op.int_attr("dppCtrl")
    row_mask, bank_mask = op.int_attr("rowMask") & 0xF, op.int_attr("bankMask") & 0xF
    bound_ctrl = op.bool_attr("boundCtrl")
    old_s, src_s = op.operands
    r = op.results[0]
    n = np.arange(WAVE)
    enabled = (((row_mask >> (n >> 4)) & 1) & ((bank_mask >> ((n >> 2) & 3)) & 1)).astype(bool)
    try:
        sl, in_range = dpp_source(ctrl)
    except ValueError as exc:
        raise op.error(str(exc)) from None
    is_bcast = ctrl in (0x142, 0x143)

    def step(ctx):
        write = enabled
        if is_bcast and not ctx.opts.dpp_row_bcast_row0_invalid:
            write = enabled & in_range  # lanes with no source row are not written at all
        old = _waves(ctx, ctx.vals[old_s])
        x = _waves(ctx, ctx.vals[src_s])
        act = ctx.active().reshape(ctx.waves, WAVE)
        valid = np.broadcast_to(in_range, act.shape)
        if ctx.opts.dpp_inactive_source_invalid:
            valid = valid & act[:, sl]
        moved = _where_lanes(valid, x[:, sl], np.zeros((), x.dtype) if bound_ctrl else old)
        out = _where_lanes(write[None, :] & act, moved, old)
        ctx.vals[r] = _flat(ctx, out.astype(x.dtype))

    return step


@register("rocdl.permlane16.swap", "rocdl.permlane32.swap")
def _permlane_swap(op: OpInfo):
    if not op.target.has_permlane_swap:
        raise op.error(f"{op.name} exists only on gfx950, not on {op.arch}")
    half = 16 if "16" in op.name else 32
    t = op.result_types[0]
    if not (isinstance(t, StructT) and len(t.fields) == 2):
        raise op.error(f"result type {t} is not a two-field struct")
    old_s, src_s = op.operands
    r = op.results[0]
    n = np.arange(WAVE)
    upper = (n & half) != 0  # vdst lanes that receive src0 from `half` lanes below
    partner = n ^ half

    def step(ctx):
        act = ctx.active().reshape(ctx.waves, WAVE)
        live = act.any(axis=1)
        if (act[live] == False).any():  # noqa: E712 - elementwise
            raise op.error("permlane swap under a partial EXEC mask is not modelled (fi/bound_ctrl semantics unknown)")
        vdst, src0 = _waves(ctx, ctx.vals[old_s]), _waves(ctx, ctx.vals[src_s])
        new_vdst = _where_lanes(np.broadcast_to(upper, act.shape), src0[:, partner], vdst)
        new_src0 = _where_lanes(np.broadcast_to(~upper, act.shape), vdst[:, partner], src0)
        ctx.vals[r] = (_flat(ctx, new_vdst), _flat(ctx, new_src0))

    return step


@register("rocdl.readlane")
def _readlane(op: OpInfo):
    src, idx = op.operands
    r = op.results[0]

    def step(ctx):
        i = _waves(ctx, ctx.vals[idx]).astype(np.int64) & (WAVE - 1)
        act = ctx.active().reshape(ctx.waves, WAVE)
        for w in range(ctx.waves):
            vals = i[w][act[w]] if act[w].any() else i[w]
            if (vals != vals[0]).any():
                raise op.error("the readlane lane index differs between lanes of a wave (it is a scalar operand)")
        first = np.argmax(act, axis=1) if act.any() else np.zeros(ctx.waves, np.int64)
        lane = i[np.arange(ctx.waves), first]
        x = _waves(ctx, ctx.vals[src])
        picked = x[np.arange(ctx.waves), lane]
        ctx.vals[r] = _flat(ctx, np.repeat(picked[:, None], WAVE, axis=1))

    return step


@register("rocdl.readfirstlane")
def _readfirstlane(op: OpInfo):
    src = op.operands[0]
    r = op.results[0]

    def step(ctx):
        act = ctx.active().reshape(ctx.waves, WAVE)
        first = np.where(act.any(axis=1), np.argmax(act, axis=1), 0)
        x = _waves(ctx, ctx.vals[src])
        picked = x[np.arange(ctx.waves), first]
        ctx.vals[r] = _flat(ctx, np.repeat(picked[:, None], WAVE, axis=1))

    return step


@register("rocdl.mbcnt.lo", "rocdl.mbcnt.hi")
def _mbcnt(op: OpInfo):
    m_s, acc_s = op.operands
    r = op.results[0]
    t = op.result_types[0]
    hi = op.name.endswith("hi")

    def step(ctx):
        lane = ctx.lane.astype(np.int64)
        k = np.clip(lane - 32, 0, 32) if hi else np.minimum(lane, 32)
        below = ((np.uint64(1) << k.astype(np.uint64)) - np.uint64(1)) & np.uint64(0xFFFFFFFF)
        m = lanes(ctx.vals[m_s], ctx.T).astype(np.uint64)
        if ctx.opts.mbcnt_and_exec:
            act = ctx.active().reshape(ctx.waves, WAVE).astype(np.uint64)
            half = act[:, 32:] if hi else act[:, :32]
            exec_bits = (half << np.arange(32, dtype=np.uint64)).sum(axis=1, dtype=np.uint64)
            m = m & np.repeat(exec_bits, WAVE)
        cnt = np.bitwise_count(m & below).astype(np.uint64)
        ctx.vals[r] = normalize(cnt + ctx.vals[acc_s].astype(np.uint64), t)

    return step


@register("rocdl.ballot")
def _ballot(op: OpInfo):
    p = op.operands[0]
    r = op.results[0]
    t = op.result_types[0]
    if not isinstance(t, IntT) or t.bits != WAVE:
        raise op.error(f"ballot result {t}: a wave64 ballot is i64")

    def step(ctx):
        act = ctx.active().reshape(ctx.waves, WAVE)
        bits = (_waves(ctx, ctx.vals[p]).astype(bool) & act).astype(np.uint64)
        mask = (bits << np.arange(WAVE, dtype=np.uint64)).sum(axis=1, dtype=np.uint64)
        ctx.vals[r] = normalize(np.repeat(mask[:, None], WAVE, axis=1).reshape(ctx.T), t)

    return step
