"""Cross-lane ROCDL ops, with the ISA's semantics (``docs/amd_facts.md`` sections 2 and 6).

Each op works inside one wave of ``W`` lanes, the target's wave size (64 on CDNA, 32 on RDNA and
gfx1250); values are reshaped to ``(waves, W, ...)``.  EXEC is ``ctx.active()``; the destination
of an inactive lane is never observed, so it is 0.  A lane ``n`` has the bits ``n[5:0]`` (wave64)
or ``n[4:0]`` (wave32); a DPP *row* is 16 lanes, a ds_swizzle *half* 32 lanes (a wave32 is one).

* ``rocdl.ds_bpermute %addr, %src``: lane i reads lane ``(addr[i] / 4) % W``; reading an
  inactive lane gives 0.
* ``rocdl.ds_swizzle %src, %offset`` (offset a wave-uniform constant): FFT (offset >=
  0xE000), rotate (>= 0xC000), quad-perm (bit 15), bit-mask (and/or/xor on lane bits 0-4,
  bit 5 kept) modes -- on RDNA and gfx1250 only the quad-perm and bit-mask ones
  (``Target.ds_swizzle_modes``); reading an inactive lane gives 0.  Rotate wraps inside each
  32-lane half [I, from the ISA example].
* ``rocdl.update.dpp %old, %src with ctrl, row_mask, bank_mask, bound_ctrl``: every gfx9
  DPP_CTRL, or every RDNA dpp16 control (:func:`dpp_source`: no wave shifts or row_bcast;
  ``row_share:k`` 0x150-0x15F reads lane ``k`` of the row, ``row_xmask:k`` 0x160-0x16F lane
  ``(n & 15) ^ k`` of the row); a lane whose source is out of its row / the wave (or
  inactive, ``InterpOptions.dpp_inactive_source_invalid``) gets 0 when bound_ctrl is set and
  keeps ``old`` otherwise; lanes disabled by row_mask/bank_mask keep ``old``.  row_bcast:15/31
  lanes with no source row (0-15 / 0-31) are out of range, or with
  ``InterpOptions.dpp_row_bcast_row0_invalid=False`` not written at all.
* ``llvm.call_intrinsic "llvm.amdgcn.mov.dpp8.i32"(%src, %sel)`` (RDNA ``v_mov_b32_dpp dpp8``; the
  bundled ROCDL dialect has no op for it): lane ``n`` reads lane ``(n & ~7) + sel[3(n%8)+2 : 3(n%8)]``.
* ``rocdl.permlanex16 %old, %src, %sel_lo, %sel_hi, fi, bound_ctrl`` and ``llvm.call_intrinsic
  "llvm.amdgcn.permlane16.i32"(%old, %src, %sel_lo, %sel_hi, %fi, %bound_ctrl)`` (RDNA
  ``v_permlanex16_b32`` / ``v_permlane16_b32``; the dialect has no permlane16 op): lane ``16 r + i``
  reads lane ``16 r' + sel[4i+3 : 4i]`` of the 64-bit selector ``{sel_hi, sel_lo}`` (uniform scalar
  operands), ``r' = r`` (permlane16) or ``r ^ 1`` (permlanex16).
* dpp8 and permlane16/x16 are refused under a partial EXEC mask (what fetch-inactive and
  bound_ctrl do with an inactive source is not modelled).
* ``rocdl.permlane16.swap`` / ``permlane32.swap`` (gfx950, gfx1250's permlane16.swap): result
  struct (new first operand = vdst, new second operand = src0): in each 32-lane half, vdst lanes
  16-31 swap with src0 lanes 0-15; for 32 (wave64 only): vdst lanes 32-63 swap with src0 lanes
  0-31.  Refused under a partial EXEC mask (what fi/bound_ctrl do with inactive lanes is not
  established).
* ``rocdl.readlane`` (lane index mod W, EXEC ignored), ``rocdl.readfirstlane`` (lowest
  active lane, lane 0 if none), ``rocdl.mbcnt.lo/hi`` (ISA pseudocode: popcount of the mask
  bits below the lane; the ROCDL op text says the mask is also AND-ed with EXEC, which
  ``InterpOptions.mbcnt_and_exec`` selects), ``rocdl.ballot`` (an iW mask),
  ``llvm.amdgcn.inverse.ballot.i64`` / ``.i32`` (lane l gets bit l of its wave's iW mask).
"""

from __future__ import annotations

import numpy as np

from .registry import OpInfo, lanes, register, register_intrinsic, uniform_scalar
from .types import IntT, StructT, normalize


def _waves(ctx, x: np.ndarray) -> np.ndarray:
    return lanes(x, ctx.T).reshape((ctx.waves, ctx.target.wave_size) + x.shape[1:])


def _flat(ctx, x: np.ndarray) -> np.ndarray:
    return x.reshape((ctx.T,) + x.shape[2:])


def _active(ctx) -> np.ndarray:
    """EXEC as ``(waves, W)``."""
    return ctx.active().reshape(ctx.waves, ctx.target.wave_size)


def _gather(x: np.ndarray, src: np.ndarray) -> np.ndarray:
    """``x[w, src[w, l]]`` for ``x`` of shape ``(waves, W, ...)`` and ``src`` ``(waves, W)`` or ``(W,)``."""
    src = np.broadcast_to(src, x.shape[:2])
    return x[np.arange(x.shape[0])[:, None], src]


def _where_lanes(c: np.ndarray, a: np.ndarray, b) -> np.ndarray:
    return np.where(c.reshape(c.shape + (1,) * (a.ndim - c.ndim)), a, b)


def _full_exec(ctx, op: OpInfo) -> np.ndarray:
    """EXEC as ``(waves, W)``; an error when a live wave has an inactive lane."""
    act = _active(ctx)
    live = act.any(axis=1)
    if (act[live] == False).any():  # noqa: E712 - elementwise
        raise op.error(f"{op.name} under a partial EXEC mask is not modelled (fetch-inactive / bound_ctrl semantics)")
    return act


@register("rocdl.ds_bpermute")
def _bpermute(op: OpInfo):
    idx, src = op.operands
    r = op.results[0]
    wave = op.target.wave_size

    def step(ctx):
        x = _waves(ctx, ctx.vals[src])
        lane = ((_waves(ctx, ctx.vals[idx]).astype(np.uint32) >> np.uint32(2)) & np.uint32(wave - 1)).astype(np.int64)
        valid = _gather(_active(ctx), lane)
        ctx.vals[r] = _flat(ctx, _where_lanes(valid, _gather(x, lane), 0).astype(x.dtype))

    return step


def swizzle_mode(offset: int) -> str:
    """The ds_swizzle_b32 mode an ``offset`` selects: ``fft``, ``rotate``, ``quad_perm`` or ``bitmask``."""
    if offset >= 0xE000:
        return "fft"
    if offset >= 0xC000:
        return "rotate"
    return "quad_perm" if offset & 0x8000 else "bitmask"


def swizzle_source(offset: int, wave_size: int = 64) -> np.ndarray:
    """Source lane of every lane (``wave_size``,) for ds_swizzle_b32 with ``offset`` (docs/amd_facts.md 2.2)."""
    i = np.arange(wave_size)
    lo = i & 0x1F
    mode = swizzle_mode(offset)
    if mode == "fft":
        mask = offset & 0x1F
        rev = np.array([int(f"{v:05b}"[::-1], 2) for v in lo])
        j = (rev >> bin(mask).count("1")) | (i & mask)
    elif mode == "rotate":
        rot = (offset >> 5) & 0x1F
        mask = offset & 0x1F
        if offset & 0x400:
            rot = -rot
        j = ((i & mask) | ((i + rot) & ~mask)) & 0x1F
    elif mode == "quad_perm":
        j = (i & 0x1C) | ((offset >> (2 * (i & 3))) & 3)
    else:
        and_m, or_m, xor_m = offset & 0x1F, (offset >> 5) & 0x1F, (offset >> 10) & 0x1F
        j = ((lo & and_m) | or_m) ^ xor_m
    return (j & 0x1F) | (i & 0x20)


@register("rocdl.ds_swizzle")
def _swizzle(op: OpInfo):
    src, off = op.operands
    r = op.results[0]
    cache: dict = {}
    wave, modes = op.target.wave_size, op.target.ds_swizzle_modes

    def step(ctx):
        o = uniform_scalar(ctx.vals[off], None)
        if o is None:
            raise op.error("the swizzle offset must be the same in every lane (it is an instruction immediate)")
        o = int(o) & 0xFFFF
        if o not in cache:
            if swizzle_mode(o) not in modes:
                raise op.error(f"ds_swizzle offset {o:#06x} selects the {swizzle_mode(o)} mode, which {op.arch} "
                               f"does not have")
            cache[o] = swizzle_source(o, wave)
        sl = cache[o]
        x = _waves(ctx, ctx.vals[src])
        valid = _active(ctx)[:, sl]
        ctx.vals[r] = _flat(ctx, _where_lanes(valid, x[:, sl], 0).astype(x.dtype))

    return step


def dpp_source(ctrl: int, wave_size: int = 64, family: str = "cdna") -> tuple:
    """``(source lane (W,), in-range (W,) bool)`` of a DPP_CTRL: gfx9's (``family`` ``cdna``,
    docs/amd_facts.md 2.3) or RDNA's dpp16 (``rdna``: the same quad_perm, row shifts and rotates and
    mirrors; 0x150-0x15F row_share, 0x160-0x16F row_xmask; no wave shifts or row_bcast).

    Raises ``ValueError`` for reserved values."""
    n = np.arange(wave_size)
    ok = np.ones(wave_size, bool)
    row = n & ~0xF
    rdna = family == "rdna"
    arch = "RDNA" if rdna else "gfx9"
    if 0 <= ctrl <= 0xFF:
        return (n & ~3) | ((ctrl >> (2 * (n & 3))) & 3), ok
    s = ctrl & 0xF
    if 0x101 <= ctrl <= 0x10F:
        return np.minimum(n + s, wave_size - 1), (n & 0xF) + s < 16
    if 0x111 <= ctrl <= 0x11F:
        return np.maximum(n - s, 0), (n & 0xF) >= s
    if 0x121 <= ctrl <= 0x12F:
        return row | ((n - s) & 0xF), ok
    if ctrl == 0x140:
        return row | (15 - (n & 0xF)), ok
    if ctrl == 0x141:
        return (n & ~7) | (7 - (n & 7)), ok
    if 0x150 <= ctrl <= 0x15F:  # gfx9 row_newbcast, RDNA row_share
        return row + s, ok
    if rdna:
        if 0x160 <= ctrl <= 0x16F:  # row_xmask
            return row | ((n & 0xF) ^ s), ok
        raise ValueError(f"DPP control {ctrl:#x} is reserved on {arch}")
    if ctrl == 0x130:
        return np.minimum(n + 1, wave_size - 1), n < wave_size - 1
    if ctrl == 0x134:
        return (n + 1) % wave_size, ok
    if ctrl == 0x138:
        return np.maximum(n - 1, 0), n > 0
    if ctrl == 0x13C:
        return (n - 1) % wave_size, ok
    if ctrl == 0x142:
        return np.maximum((n & 0x30) - 1, 0), n > 15
    if ctrl == 0x143:
        return np.full(wave_size, 31), n > 31
    raise ValueError(f"DPP control {ctrl:#x} is reserved on {arch}")


@register("rocdl.update.dpp")
def _dpp(op: OpInfo):
    ctrl = op.int_attr("dppCtrl")
    row_mask, bank_mask = op.int_attr("rowMask") & 0xF, op.int_attr("bankMask") & 0xF
    bound_ctrl = op.bool_attr("boundCtrl")
    old_s, src_s = op.operands
    r = op.results[0]
    wave = op.target.wave_size
    n = np.arange(wave)
    enabled = (((row_mask >> (n >> 4)) & 1) & ((bank_mask >> ((n >> 2) & 3)) & 1)).astype(bool)
    try:
        sl, in_range = dpp_source(ctrl, wave, op.target.family)
    except ValueError as exc:
        raise op.error(str(exc)) from None
    is_bcast = ctrl in (0x142, 0x143)

    def step(ctx):
        write = enabled
        if is_bcast and not ctx.opts.dpp_row_bcast_row0_invalid:
            write = enabled & in_range  # lanes with no source row are not written at all
        old = _waves(ctx, ctx.vals[old_s])
        x = _waves(ctx, ctx.vals[src_s])
        act = _active(ctx)
        valid = np.broadcast_to(in_range, act.shape)
        if ctx.opts.dpp_inactive_source_invalid:
            valid = valid & act[:, sl]
        moved = _where_lanes(valid, x[:, sl], np.zeros((), x.dtype) if bound_ctrl else old)
        out = _where_lanes(write[None, :] & act, moved, old)
        ctx.vals[r] = _flat(ctx, out.astype(x.dtype))

    return step


def dpp8_source(selector: int, wave_size: int) -> np.ndarray:
    """Source lane of every lane for RDNA ``dpp8`` with the 24-bit ``selector`` (three bits per lane of an
    octet): lane ``n`` reads lane ``8 * (n // 8) + selector[3(n%8)+2 : 3(n%8)]``."""
    n = np.arange(wave_size)
    picks = np.array([(selector >> (3 * k)) & 7 for k in range(8)])
    return 8 * (n // 8) + picks[n % 8]


def permlane16_source(selector: int, cross: bool, wave_size: int) -> np.ndarray:
    """Source lane of every lane for RDNA ``v_permlane16_b32`` (``cross`` False) / ``v_permlanex16_b32``
    with the 64-bit ``selector``: lane ``16 r + i`` reads lane ``16 r' + selector[4i+3 : 4i]``, ``r' = r``
    or, crossing, the other row of its 32-lane half (``r ^ 1``)."""
    n = np.arange(wave_size)
    picks = np.array([(selector >> (4 * k)) & 15 for k in range(16)])
    rows = n // 16
    return 16 * (rows ^ 1 if cross else rows) + picks[n % 16]


def _lane_move(op: OpInfo, src_s: int, source, what: str):
    """The step of a pure lane move on a 32-lane wave: lane ``l`` gets ``src`` of lane ``source(ctx)[l]``
    (every lane active)."""
    if op.target.wave_size != 32:
        raise op.error(f"{what} is an RDNA (wave32) instruction, not one of {op.arch}")
    r = op.results[0]

    def step(ctx):
        _full_exec(ctx, op)
        x = _waves(ctx, ctx.vals[src_s])
        ctx.vals[r] = _flat(ctx, x[:, source(ctx)])

    return step


def _uniform_operand(op: OpInfo, ctx, slot: int, what: str) -> int:
    v = uniform_scalar(ctx.vals[slot], None)
    if v is None:
        raise op.error(f"{what} must be the same in every lane (a scalar operand)")
    return int(v) & 0xFFFFFFFF


@register_intrinsic("llvm.amdgcn.mov.dpp8.i32")
def _dpp8(op: OpInfo):
    src_s, sel_s = op.operands

    def source(ctx):
        return dpp8_source(_uniform_operand(op, ctx, sel_s, "the dpp8 selector") & 0xFFFFFF, 32)

    return _lane_move(op, src_s, source, "v_mov_b32_dpp dpp8")


def _permlane16(op: OpInfo, cross: bool):
    _old, src_s, lo_s, hi_s = op.operands[:4]

    def source(ctx):
        lo = _uniform_operand(op, ctx, lo_s, "the permlane16 selector's low word")
        hi = _uniform_operand(op, ctx, hi_s, "the permlane16 selector's high word")
        return permlane16_source(lo | hi << 32, cross, 32)

    return _lane_move(op, src_s, source, f"v_permlane{'x' if cross else ''}16_b32")


@register("rocdl.permlanex16")
def _permlanex16_op(op: OpInfo):
    return _permlane16(op, True)


@register_intrinsic("llvm.amdgcn.permlane16.i32")
def _permlane16_intrinsic(op: OpInfo):
    return _permlane16(op, False)


@register("rocdl.permlane16.swap", "rocdl.permlane32.swap")
def _permlane_swap(op: OpInfo):
    if not op.target.has_permlane_swap:
        raise op.error(f"{op.name} exists only on gfx950 and gfx1250, not on {op.arch}")
    half = 16 if "16" in op.name else 32
    wave = op.target.wave_size
    if half == wave:
        raise op.error(f"{op.name} swaps the halves of a 64-lane wave; {op.arch} has {wave}-lane waves")
    t = op.result_types[0]
    if not (isinstance(t, StructT) and len(t.fields) == 2):
        raise op.error(f"result type {t} is not a two-field struct")
    old_s, src_s = op.operands
    r = op.results[0]
    n = np.arange(wave)
    upper = (n & half) != 0  # vdst lanes that receive src0 from `half` lanes below
    partner = n ^ half

    def step(ctx):
        act = _full_exec(ctx, op)
        vdst, src0 = _waves(ctx, ctx.vals[old_s]), _waves(ctx, ctx.vals[src_s])
        new_vdst = _where_lanes(np.broadcast_to(upper, act.shape), src0[:, partner], vdst)
        new_src0 = _where_lanes(np.broadcast_to(~upper, act.shape), vdst[:, partner], src0)
        ctx.vals[r] = (_flat(ctx, new_vdst), _flat(ctx, new_src0))

    return step


@register("rocdl.readlane")
def _readlane(op: OpInfo):
    src, idx = op.operands
    r = op.results[0]
    wave = op.target.wave_size

    def step(ctx):
        i = _waves(ctx, ctx.vals[idx]).astype(np.int64) & (wave - 1)
        act = _active(ctx)
        for w in range(ctx.waves):
            vals = i[w][act[w]] if act[w].any() else i[w]
            if (vals != vals[0]).any():
                raise op.error("the readlane lane index differs between lanes of a wave (it is a scalar operand)")
        first = np.argmax(act, axis=1) if act.any() else np.zeros(ctx.waves, np.int64)
        lane = i[np.arange(ctx.waves), first]
        x = _waves(ctx, ctx.vals[src])
        picked = x[np.arange(ctx.waves), lane]
        ctx.vals[r] = _flat(ctx, np.repeat(picked[:, None], ctx.target.wave_size, axis=1))

    return step


@register("rocdl.readfirstlane")
def _readfirstlane(op: OpInfo):
    src = op.operands[0]
    r = op.results[0]

    def step(ctx):
        act = _active(ctx)
        first = np.where(act.any(axis=1), np.argmax(act, axis=1), 0)
        x = _waves(ctx, ctx.vals[src])
        picked = x[np.arange(ctx.waves), first]
        ctx.vals[r] = _flat(ctx, np.repeat(picked[:, None], ctx.target.wave_size, axis=1))

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
            act = _active(ctx).astype(np.uint64)
            half = act[:, 32:] if hi else act[:, :32]
            exec_bits = (half << np.arange(half.shape[1], dtype=np.uint64)).sum(axis=1, dtype=np.uint64)
            m = m & np.repeat(exec_bits, ctx.target.wave_size)
        cnt = np.bitwise_count(m & below).astype(np.uint64)
        ctx.vals[r] = normalize(cnt + ctx.vals[acc_s].astype(np.uint64), t)

    return step


@register("rocdl.ballot")
def _ballot(op: OpInfo):
    p = op.operands[0]
    r = op.results[0]
    t = op.result_types[0]
    wave = op.target.wave_size
    if not isinstance(t, IntT) or t.bits != wave:
        raise op.error(f"ballot result {t}: a ballot of {wave}-lane waves is i{wave}")

    def step(ctx):
        act = _active(ctx)
        bits = (_waves(ctx, ctx.vals[p]).astype(bool) & act).astype(np.uint64)
        mask = (bits << np.arange(wave, dtype=np.uint64)).sum(axis=1, dtype=np.uint64)
        ctx.vals[r] = normalize(np.repeat(mask[:, None], wave, axis=1).reshape(ctx.T), t)

    return step


@register_intrinsic("llvm.amdgcn.inverse.ballot.i64", "llvm.amdgcn.inverse.ballot.i32")
def _inverse_ballot(op: OpInfo):
    """``i1 llvm.amdgcn.inverse.ballot.iW(iW mask)``: lane l of each wave gets bit l of the wave's mask."""
    wave = op.target.wave_size
    if op.str_attr("intrin") != f"llvm.amdgcn.inverse.ballot.i{wave}":
        raise op.error(f"{op.str_attr('intrin')} on {op.arch}: a lane mask of {wave}-lane waves is i{wave}")
    (m,), r = op.operands, op.results[0]

    def step(ctx):
        mask = lanes(ctx.vals[m], ctx.T).astype(np.uint64)
        lane = (np.arange(ctx.T) % wave).astype(np.uint64)
        ctx.vals[r] = ((mask >> lane) & np.uint64(1)).astype(np.uint8)

    return step
