"""Which instruction realizes a given lane map on a target.

A *lane map* is ``need[l]``: the lane whose value lane ``l`` must receive, or
-1 when lane ``l``'s result does not matter (it will be masked by a select).
Candidates, cheapest kind first (per linlayout.synth.cost):

* DPP (a VALU source modifier, gfx9 controls of shared/reference/amd_hw.md
  2.3): every control whose decoded source lanes agree with ``need`` on the
  needed lanes.  Controls whose every lane has a valid source are preferred,
  so that a ``bound_ctrl`` question never arises.
* ``ds_swizzle_b32``: bit-mask mode (``j = ((i & and) | or) ^ xor`` on lane
  bits 0-4, bit 5 kept) and quad-perm mode are solved analytically (each lane
  bit of the source is the same bit of the lane, its negation, 0 or 1); FFT
  and rotate modes by table.
* ``ds_bpermute_b32``: any map; the address VGPR is ``4 * need[l]``.

The gfx950 permlane swaps act on register pairs and are chosen by the
conversion planner (linlayout.synth.convert), not here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from linlayout import LayoutError, caches
from linlayout.hw.targets import Target

from .emulator import WAVE, dpp_src_lanes, swizzle_src_lanes

__all__ = ["DPP_ROW_NEWBCAST_FOR_B32", "LaneOp", "bpermute_op", "dpp_candidates", "find_dpp", "find_lane_op",
           "find_swizzle", "row_bank_masks"]

# [I] row_newbcast (0x150-0x15F) is documented for the 64-bit DP-ALU DPP of gfx90a+;
# whether 32-bit VOP1/VOP2 accept it is not established, so it is not used by default.
DPP_ROW_NEWBCAST_FOR_B32 = False


@dataclass(frozen=True)
class LaneOp:
    """One lane-moving instruction: ``kind`` as in the certificate, ``isa`` its encoding."""

    kind: str
    family: str  # dpp | ds_swizzle | ds_bpermute
    isa: dict = field(default_factory=dict, hash=False, compare=False)
    all_valid: bool = True


def _dpp_table() -> list[tuple[str, str, int]]:
    """(family name in Target.dpp_controls, asm name, ctrl) of every gfx9 DPP control."""
    out = []
    for c in range(256):
        sel = [(c >> (2 * t)) & 3 for t in range(4)]
        out.append(("quad_perm", f"quad_perm:[{','.join(map(str, sel))}]", c))
    out += [("row_mirror", "row_mirror", 0x140), ("row_half_mirror", "row_half_mirror", 0x141)]
    out += [("row_ror", f"row_ror:{s}", 0x120 + s) for s in range(1, 16)]
    out += [("row_shl", f"row_shl:{s}", 0x100 + s) for s in range(1, 16)]
    out += [("row_shr", f"row_shr:{s}", 0x110 + s) for s in range(1, 16)]
    out += [("wave_rol", "wave_rol:1", 0x134), ("wave_ror", "wave_ror:1", 0x13C),
            ("wave_shl", "wave_shl:1", 0x130), ("wave_shr", "wave_shr:1", 0x138),
            ("row_bcast15", "row_bcast:15", 0x142), ("row_bcast31", "row_bcast:31", 0x143)]
    out += [("row_newbcast", f"row_newbcast:{k}", 0x150 + k) for k in range(16)]
    return out


_DPP_ALL = _dpp_table()


@caches.memoize("synth.lane_ops.dpp_arrays", table=True)
def _dpp_arrays(allowed: frozenset) -> tuple[list[tuple[str, int]], np.ndarray, np.ndarray]:
    names, rows = [], []
    for fam, name, ctrl in _DPP_ALL:
        if fam not in allowed or (fam == "row_newbcast" and not DPP_ROW_NEWBCAST_FOR_B32):
            continue
        names.append((name, ctrl))
        rows.append(dpp_src_lanes(ctrl))
    tab = np.array(rows, dtype=np.int64)
    valid = (tab >= 0).all(axis=1)
    order = np.argsort(~valid, kind="stable")  # fully valid controls first
    return [names[i] for i in order], tab[order], valid[order]


def dpp_candidates(need: np.ndarray, target: Target) -> list[LaneOp]:
    """Every DPP control realizing ``need`` on ``target`` (fully valid ones first)."""
    if not target.dpp_controls:
        return []
    names, tab, valid = _dpp_arrays(frozenset(target.dpp_controls))
    m = need >= 0
    hit = (tab[:, m] == need[m]).all(axis=1)
    return [LaneOp(f"dpp:{names[i][0]}", "dpp", {"ctrl": names[i][1]}, bool(valid[i])) for i in np.flatnonzero(hit)]


_dpp_cache = caches.cache("synth.lane_ops.dpp", size=4096)  # 4096: several lane maps per layout pair


def find_dpp(need: np.ndarray, target: Target) -> LaneOp | None:
    """The first DPP control realizing ``need`` (fully valid controls first), or None."""
    key = (target.name, np.asarray(need, dtype=np.int64).tobytes())
    if key not in _dpp_cache:
        c = dpp_candidates(need, target)
        _dpp_cache[key] = c[0] if c else None
    return _dpp_cache[key]


@caches.memoize("synth.lane_ops.swizzle_table", table=True)
def _swizzle_table() -> tuple[list[int], np.ndarray, dict[bytes, list[int]]]:
    """The FFT and rotate offsets, their source lanes (int8 rows) and, per row, the offsets having it."""
    offs = [0xE000 | m for m in range(32)] + [0xC000 | (d << 10) | (r << 5) | m
                                              for d in range(2) for r in range(32) for m in range(32)]
    tab = np.array([swizzle_src_lanes(o) for o in offs], dtype=np.int8)
    by_row: dict[bytes, list[int]] = {}
    for o, row in zip(offs, tab):
        by_row.setdefault(row.tobytes(), []).append(o)
    return offs, tab, by_row


_BITS5 = np.arange(5)


def _swizzle_bitmask(i: np.ndarray, j: np.ndarray) -> int | None:
    """The bit-mask offset moving lane ``i[k]``'s value from lane ``j[k]`` (bit 5 kept), or None.

    Per lane bit ``b < 5`` the source bit is a function of the lane's bit: the same one
    (identity), its negation, or a constant; it is undetermined only on one side, where
    identity is taken unless the other side forces a negation."""
    ib = (i[:, None] >> _BITS5) & 1
    jb = (j[:, None] >> _BITS5) & 1
    seen = ((2 * ib + jb)[:, :, None] == np.arange(4)).any(axis=0).tolist()  # [bit][2 * i_b + j_b]
    and_m = or_m = xor_m = 0
    for b, (s00, s01, s10, s11) in enumerate(seen):
        if (s00 and s01) or (s10 and s11):
            return None
        f0 = 1 if s01 else (0 if s00 else None)
        f1 = 1 if s11 else (0 if s10 else None)
        if f0 is not None and f0 == f1:  # constant bit
            or_m |= f0 << b
        elif f0 == 1 or f1 == 0:  # negation
            and_m |= 1 << b
            xor_m |= 1 << b
        else:  # identity (or undetermined)
            and_m |= 1 << b
    return and_m | (or_m << 5) | (xor_m << 10)


def _swizzle_table_offsets(need: np.ndarray, m: np.ndarray) -> list[int]:
    """The FFT/rotate offsets (table order) whose source lanes agree with ``need`` on the lanes ``m``."""
    offs, tab, by_row = _swizzle_table()
    if m.all():
        return by_row.get(need.astype(np.int8).tobytes(), [])
    i = np.flatnonzero(m)
    rows = np.flatnonzero(tab[:, i[0]] == need[i[0]])  # the offsets agreeing on the first needed lane
    hit = rows[(tab[rows][:, i] == need[i]).all(axis=1)]
    return [offs[h] for h in hit]


def find_swizzle(need: np.ndarray, target: Target) -> LaneOp | None:
    """A ds_swizzle_b32 offset realizing ``need`` (bit-mask, quad-perm, then FFT/rotate), or None.
    Every mode keeps lane bit 5."""
    modes = target.ds_swizzle_modes
    m = need >= 0
    i, j = np.flatnonzero(m), need[m]
    if not len(i):
        return LaneOp("ds_swizzle:0x001f", "ds_swizzle", {"offset": 0x001F})
    if ((i ^ j) & 32).any():
        return None
    off = _swizzle_bitmask(i, j) if "bitmask" in modes else None
    if off is not None:
        return LaneOp(f"ds_swizzle:0x{off:04x}", "ds_swizzle", {"offset": off})
    if "quad_perm" in modes and not ((i ^ j) >> 2).any():
        sel = [None] * 4
        ok = True
        for a, b in zip((i & 3).tolist(), (j & 3).tolist()):
            if sel[a] is None:
                sel[a] = b
            elif sel[a] != b:
                ok = False
                break
        if ok:
            off = 0x8000 | sum((s or 0) << (2 * t) for t, s in enumerate(sel))
            return LaneOp(f"ds_swizzle:0x{off:04x}", "ds_swizzle", {"offset": off})
    if "fft" in modes or "rotate" in modes:
        for o in _swizzle_table_offsets(need, m):
            if (o >= 0xE000 and "fft" in modes) or (o < 0xE000 and "rotate" in modes):
                return LaneOp(f"ds_swizzle:0x{o:04x}", "ds_swizzle", {"offset": o})
    return None


def bpermute_op(need: np.ndarray) -> LaneOp:
    """``ds_bpermute_b32`` with address ``4 * need[l]`` (own lane where undefined)."""
    lanes = np.where(need >= 0, need, np.arange(WAVE))
    return LaneOp("ds_bpermute", "ds_bpermute", {"addr": (4 * lanes).astype(np.int64), "offset": 0})


_cache = caches.cache("synth.lane_ops.lane_op", size=4096)  # 4096: several lane maps per layout pair


def find_lane_op(need: np.ndarray, target: Target, family_cost: dict[str, float] | None = None) -> LaneOp:
    """The cheapest instruction realizing ``need`` (-1 = don't care) on ``target``.

    ``family_cost`` orders the families (default DPP < ds_swizzle < ds_bpermute).
    """
    need = np.asarray(need, dtype=np.int64)
    if need.shape != (WAVE,):
        raise LayoutError(f"a lane map has {WAVE} entries, got shape {need.shape}")
    if ((need < -1) | (need >= WAVE)).any():
        raise LayoutError("a lane map entry is not a lane index or -1")
    costs = family_cost or {"dpp": 1.0, "ds_swizzle": 2.0, "ds_bpermute": 3.0}
    key = (target.name, need.tobytes(), tuple(sorted(costs.items())))
    if key in _cache:
        return _cache[key]  # type: ignore[return-value]
    dpp = find_dpp(need, target)
    # a DPP control found and no dearer than ds_swizzle wins over any swizzle (min keeps the first);
    # ds_bpermute (any map, last) only when it is strictly cheaper than both or neither exists
    swz = None if dpp is not None and costs["dpp"] <= costs["ds_swizzle"] else find_swizzle(need, target)
    options = [op for op in (dpp, swz) if op is not None]
    if not options or min(costs[o.family] for o in options) > costs["ds_bpermute"]:
        options.append(bpermute_op(need))
    best = min(options, key=lambda o: costs[o.family])
    _cache[key] = best
    return best


def row_bank_masks(enabled: np.ndarray) -> tuple[int, int] | None:
    """DPP ``(row_mask, bank_mask)`` whose enabled lanes are exactly ``enabled`` (bool[64]), or None."""
    en = np.asarray(enabled, dtype=bool)
    return _row_bank_masks(en.tobytes()) if en.shape == (WAVE,) else None


@caches.memoize("synth.lane_ops.row_bank_masks", table=True)
def _row_bank_masks(key: bytes) -> tuple[int, int] | None:
    en = np.frombuffer(key, dtype=bool)
    n = np.arange(WAVE)
    rows = sorted({int(r) for r in (n[en] >> 4)})
    banks = sorted({int(b) for b in ((n[en] >> 2) & 3)})
    rm = sum(1 << r for r in rows)
    bm = sum(1 << b for b in banks)
    got = (((rm >> (n >> 4)) & 1) & ((bm >> ((n >> 2) & 3)) & 1)).astype(bool)
    return (rm, bm) if (got == en).all() and en.any() else None
