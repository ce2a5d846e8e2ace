"""Which instruction realizes a given lane map on a target.

A *lane map* is ``need[l]``: the lane whose value lane ``l`` must receive, or
-1 when lane ``l``'s result does not matter (it will be masked by a select).
Candidates, cheapest kind first (per linlayout.synth.cost):

* DPP (a VALU source modifier, the gfx9 controls of docs/hardware.md section 3):
  every control whose source lanes agree with ``need`` on the needed lanes.  Controls
  whose every lane has a valid source are preferred, so that a ``bound_ctrl`` question
  never arises.
* RDNA (wave32): ``dpp8`` (any map inside groups of 8 lanes, the same in every group) after the
  dpp16 controls, then ``v_permlane16_b32`` / ``v_permlanex16_b32`` (any map of the 16 positions,
  the same in both rows, reading the own or the other row).
* ``ds_swizzle_b32``: bit-mask mode (``j = ((i & and) | or) ^ xor`` on lane
  bits 0-4, bit 5 kept) and quad-perm mode are solved analytically (each lane
  bit of the source is the same bit of the lane, its negation, 0 or 1); FFT
  and rotate modes by table.
* ``ds_bpermute_b32``: any map; the address VGPR is ``4 * need[l]``.
* NVIDIA ``shfl.sync`` (docs/nvidia_facts.md), all one price: ``bfly:m`` where every needed
  lane reads ``l ^ m``; ``down:d`` / ``up:d`` where every needed lane reads ``l + d`` /
  ``l - d`` (the lanes whose source leaves the warp keep their own value: they are don't-care);
  else ``idx`` with ``b = need[l]`` (one value when every needed lane reads the same lane).

The lane maps searched over are derived here, in the planner's own terms (a lane as
``16 row + position`` for DPP, ``32 half + index`` for ds_swizzle), independently of the
semantics the emulator executes (:mod:`linlayout.synth.isa_lanes`, never imported by the
planner): a verified plan is checked against semantics the planner did not use.
``tests/test_isa_lanes.py`` checks that both agree on every control the planner can choose.

The gfx950 permlane swaps act on register pairs and are chosen by the
conversion planner (linlayout.synth.convert), not here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from linlayout import LayoutError, caches
from linlayout.hw.targets import Target

__all__ = ["DPP_ROW_NEWBCAST_FOR_B32", "LaneOp", "any_lane_op", "bpermute_op", "dpp_candidates", "dpp_controls",
           "families_without_dpp", "find_dpp",
           "find_dpp8", "find_lane_op", "find_permlane16", "find_swizzle", "lane_indices", "lane_moves", "row_bank_masks", "shfl_op", "swizzle_table_offsets"]

# [I] row_newbcast (0x150-0x15F) is documented for the 64-bit DP-ALU DPP of gfx90a+;
# whether 32-bit VOP1/VOP2 accept it is not established, so it is not used by default.
DPP_ROW_NEWBCAST_FOR_B32 = False


@dataclass(frozen=True)
class LaneOp:
    """One lane-moving instruction: ``kind`` as in the certificate, ``isa`` its encoding."""

    kind: str
    family: str  # dpp | permlane16 | ds_swizzle | ds_bpermute | shfl
    isa: dict = field(default_factory=dict, hash=False, compare=False)
    all_valid: bool = True

    @property
    def crossbar(self) -> bool:
        """Does it go through the LDS crossbar (ds_swizzle, ds_bpermute; NVIDIA's shfl.sync through the
        shared-memory pipe): one level of DS latency?  DPP and v_permlane16/x16 are VALU ops."""
        return self.family not in ("dpp", "permlane16")


def lane_indices(wave_size: int) -> np.ndarray:
    """``[0, 1, .., wave_size - 1]`` (read-only, one array per wave size)."""
    return _lane_indices(wave_size)


@caches.memoize("synth.lane_ops.lane_indices", table=True)
def _lane_indices(wave_size: int) -> np.ndarray:
    out = np.arange(wave_size)
    out.setflags(write=False)
    return out


@caches.memoize("synth.lane_ops.dpp_table", table=True)
def _dpp_table(wave_size: int) -> list[tuple[str, str, int, np.ndarray]]:
    """``(family name in Target.dpp_controls, asm name, DPP_CTRL, source lanes)`` of every gfx9 DPP control
    in a wave of ``wave_size`` lanes.

    A lane is ``16 row + pos`` (``row = lane[5:4]``, ``pos = lane[3:0]``); each control names
    the row and position it reads, -1 where the source leaves the row (or the wave):
    ``quad_perm:[s0,s1,s2,s3]`` reads ``pos & ~3 | s[pos & 3]``, ``row_shl:k`` ``pos + k``,
    ``row_shr:k`` ``pos - k``, ``row_ror:k`` ``(pos - k) mod 16``, ``row_mirror`` ``15 - pos``,
    ``row_half_mirror`` ``pos ^ 7``, ``row_newbcast:k`` ``k`` (all in the same row);
    ``row_bcast:15`` position 15 of the row before, ``row_bcast:31`` lane 31 (rows 2-3);
    ``wave_shl/rol:1`` lane + 1, ``wave_shr/ror:1`` lane - 1 (shifts invalid at the wave's
    end, rotates wrap)."""
    lane = np.arange(wave_size)
    row, pos = lane >> 4, lane & 15

    def in_row(p: np.ndarray) -> np.ndarray:
        return np.where((p >= 0) & (p < 16), 16 * row + p, -1)

    out = []
    for ctrl in range(256):
        sel = [(ctrl >> (2 * t)) & 3 for t in range(4)]
        src = in_row((pos & ~3) | np.take(sel, pos & 3))
        out.append(("quad_perm", f"quad_perm:[{','.join(map(str, sel))}]", ctrl, src))
    out += [("row_mirror", "row_mirror", 0x140, in_row(15 - pos)),
            ("row_half_mirror", "row_half_mirror", 0x141, in_row(pos ^ 7))]
    out += [("row_ror", f"row_ror:{k}", 0x120 + k, in_row((pos - k) % 16)) for k in range(1, 16)]
    out += [("row_shl", f"row_shl:{k}", 0x100 + k, in_row(pos + k)) for k in range(1, 16)]
    out += [("row_shr", f"row_shr:{k}", 0x110 + k, in_row(pos - k)) for k in range(1, 16)]
    out += [("wave_rol", "wave_rol:1", 0x134, (lane + 1) % wave_size),
            ("wave_ror", "wave_ror:1", 0x13C, (lane - 1) % wave_size),
            ("wave_shl", "wave_shl:1", 0x130, np.where(lane + 1 < wave_size, lane + 1, -1)),
            ("wave_shr", "wave_shr:1", 0x138, np.where(lane >= 1, lane - 1, -1)),
            ("row_bcast15", "row_bcast:15", 0x142, np.where(row >= 1, 16 * (row - 1) + 15, -1)),
            ("row_bcast31", "row_bcast:31", 0x143, np.where(row >= 2, 31, -1))]
    out += [("row_newbcast", f"row_newbcast:{k}", 0x150 + k, in_row(np.full(wave_size, k))) for k in range(16)]
    # RDNA's dpp16 (docs/amd_facts.md section 6): row_share:k reads position k of the row, row_xmask:k
    # position pos ^ k
    out += [("row_share", f"row_share:{k}", 0x150 + k, in_row(np.full(wave_size, k))) for k in range(16)]
    out += [("row_xmask", f"row_xmask:{k}", 0x160 + k, in_row(pos ^ k)) for k in range(16)]
    return out


_RDNA_ONLY = frozenset({"row_share", "row_xmask"})
_GFX9_ONLY = frozenset({"wave_shl", "wave_rol", "wave_shr", "wave_ror", "row_bcast15", "row_bcast31", "row_newbcast"})


def dpp_controls(wave_size: int, family: str = "cdna") -> list[tuple[str, int, np.ndarray]]:
    """``(asm name, DPP_CTRL, source lanes)`` of every DPP control of a target ``family`` (``cdna``: gfx9's,
    ``rdna``: dpp16's) the planner knows, in a wave of ``wave_size`` (read-only rows)."""
    skip = _GFX9_ONLY if family == "rdna" else _RDNA_ONLY
    return [(name, ctrl, src) for fam, name, ctrl, src in _dpp_table(wave_size) if fam not in skip]


@caches.memoize("synth.lane_ops.dpp_arrays", table=True)
def _dpp_arrays(allowed: frozenset, wave_size: int) -> tuple[list[tuple[str, int]], np.ndarray, np.ndarray]:
    names, rows = [], []
    for fam, name, ctrl, src in _dpp_table(wave_size):
        if fam not in allowed or (fam == "row_newbcast" and not DPP_ROW_NEWBCAST_FOR_B32):
            continue
        names.append((name, ctrl))
        rows.append(src)
    tab = np.array(rows, dtype=np.int64)
    valid = (tab >= 0).all(axis=1)
    order = np.argsort(~valid, kind="stable")  # fully valid controls first
    return [names[i] for i in order], tab[order], valid[order]


@caches.memoize("synth.lane_ops.dpp_lane_sets", table=True)
def _dpp_lane_sets(allowed: frozenset, wave_size: int) -> tuple[tuple[int, ...], ...]:
    """``sets[l][s + 1]``: the controls of ``_dpp_arrays(allowed, wave_size)`` (bit ``i`` = row ``i``)
    whose lane ``l`` reads lane ``s`` (``s = -1``: no valid source)."""
    _, tab, _ = _dpp_arrays(allowed, wave_size)
    sets = [[0] * (wave_size + 1) for _ in range(wave_size)]
    for i, row in enumerate(tab.tolist()):
        for lane, s in enumerate(row):
            sets[lane][s + 1] |= 1 << i
    return tuple(map(tuple, sets))


def _dpp_hits(need: list[int], target: Target) -> int:
    """The set (bit ``i`` = row ``i`` of ``_dpp_arrays``) of the controls agreeing with ``need`` on
    every lane ``l`` with ``need[l] >= 0``: the intersection of those lanes' ``_dpp_lane_sets``
    (none reads a lane past the wave)."""
    allowed, wave_size = frozenset(target.dpp_controls), target.wave_size
    sets = _dpp_lane_sets(allowed, wave_size)
    hit = (1 << len(_dpp_arrays(allowed, wave_size)[0])) - 1
    for lane, s in enumerate(need):
        if s >= 0:
            hit &= sets[lane][s + 1] if s < wave_size else 0
            if not hit:
                break
    return hit


def dpp_candidates(need: np.ndarray, target: Target) -> list[LaneOp]:
    """Every DPP control realizing ``need`` on ``target`` (fully valid ones first)."""
    if not target.dpp_controls:
        return []
    hit, out = _dpp_hits(np.asarray(need).tolist(), target), []
    while hit:
        out.append(_dpp_op(hit & -hit, target))
        hit &= hit - 1
    return out


def _dpp_op(bit: int, target: Target) -> LaneOp:
    """The LaneOp of the control at row ``bit.bit_length() - 1`` of ``_dpp_arrays``."""
    names, _, valid = _dpp_arrays(frozenset(target.dpp_controls), target.wave_size)
    i = bit.bit_length() - 1
    return LaneOp(f"dpp:{names[i][0]}", "dpp", {"ctrl": names[i][1]}, bool(valid[i]))


_dpp_cache = caches.cache("synth.lane_ops.dpp", size=4096)  # 4096: several lane maps per layout pair
_UNKEPT = object()  # a lane map _dpp_cache has no answer for


def find_dpp8(need: np.ndarray) -> LaneOp | None:
    """RDNA ``dpp8:[s0,...,s7]`` realizing ``need`` (lane ``n`` reads ``(n & ~7) + s[n & 7]``), or None."""
    lanes = lane_indices(len(need))
    m = need >= 0
    if ((need[m] ^ lanes[m]) & ~7).any():
        return None
    sel = (lanes[:8] & 7).copy()  # position i of every group: its own position unless a needed lane says
    pos, src = lanes[m] & 7, need[m] & 7
    sel[pos] = src
    if (sel[pos] != src).any():  # two needed lanes of one position read different positions
        return None
    code = sum(int(v) << (3 * i) for i, v in enumerate(sel.tolist()))
    return LaneOp(f"dpp8:[{','.join(map(str, sel.tolist()))}]", "dpp", {"dpp8": code})


def find_permlane16(need: np.ndarray) -> LaneOp | None:
    """RDNA ``v_permlane16_b32`` / ``v_permlanex16_b32`` realizing ``need``, or None: every needed
    lane ``16 r + i`` reads position ``f(i)`` of row ``r ^ x``, one ``f`` for both rows and one ``x``
    (0: permlane16, 1: permlanex16).  The 64-bit selector has ``f(i)`` in bits ``4i+3 : 4i``."""
    lanes = lane_indices(len(need))
    m = need >= 0
    cross = (need[m] >> 4) ^ (lanes[m] >> 4)
    if len(cross) and (cross != cross[0]).any():
        return None
    f = (lanes[:16] & 15).copy()
    pos, src = lanes[m] & 15, need[m] & 15
    f[pos] = src
    if (f[pos] != src).any():
        return None
    sel = sum(int(v) << (4 * i) for i, v in enumerate(f.tolist()))
    x = bool(len(cross) and cross[0])
    name = "permlanex16" if x else "permlane16"
    return LaneOp(f"{name}:0x{sel:016x}", "permlane16", {"sel": sel, "cross": x})


def find_dpp(need: np.ndarray, target: Target) -> LaneOp | None:
    """The first DPP control realizing ``need`` (fully valid controls first), or None."""
    need = np.asarray(need, dtype=np.int64)
    return _find_dpp(need.tobytes(), need.tolist(), target)


def _find_dpp(need_bytes: bytes, need: list[int], target: Target) -> LaneOp | None:
    """``find_dpp`` of the lane map ``need`` (as a list, and its int64 bytes for the cache key)."""
    key = (target.name, need_bytes)
    op = _dpp_cache.get(key, _UNKEPT)  # (None is a kept answer: no control)
    if op is _UNKEPT:
        hit = _dpp_hits(need, target) if target.dpp_controls else 0
        op = _dpp_cache[key] = _dpp_op(hit & -hit, target) if hit else None
    return op


def _swizzle_fft_rotate(wave_size: int) -> list[tuple[int, np.ndarray]]:
    """``(offset, source lanes)`` of every ds_swizzle_b32 FFT and rotate offset.

    A lane is ``32 half + i``; the source keeps the half.  FFT (``0xE000 | mask``): the five
    bits of ``i`` reversed, shifted right by the number of bits set in ``mask``, with the
    ``mask`` bits of ``i`` kept.  Rotate (``0xC000 | right << 10 | r << 5 | mask``): the
    ``mask`` bits of ``i`` kept, the others those of ``i + r`` (``i - r`` for ``right``)
    mod 32."""
    lane = np.arange(wave_size)
    half, i = lane & 32, lane & 31
    reversed5 = np.array([int(f"{v:05b}"[::-1], 2) for v in range(32)])[i]
    out = [(0xE000 | mask, half | (reversed5 >> bin(mask).count("1")) | (i & mask)) for mask in range(32)]
    for right in range(2):
        for r in range(32):
            moved = (i + (-r if right else r)) % 32
            out += [(0xC000 | (right << 10) | (r << 5) | mask, half | (i & mask) | (moved & ~mask & 31))
                    for mask in range(32)]
    return out


@caches.memoize("synth.lane_ops.swizzle_table", table=True)
def _swizzle_table(wave_size: int) -> tuple[list[int], np.ndarray, dict[bytes, list[int]]]:
    """The FFT and rotate offsets, their source lanes (int8 rows) and, per row, the offsets having it."""
    pairs = _swizzle_fft_rotate(wave_size)
    offs = [o for o, _ in pairs]
    tab = np.array([src for _, src in pairs], dtype=np.int8)
    by_row: dict[bytes, list[int]] = {}
    for o, row in zip(offs, tab):
        by_row.setdefault(row.tobytes(), []).append(o)
    return offs, tab, by_row


def swizzle_table_offsets(wave_size: int) -> list[tuple[int, np.ndarray]]:
    """``(offset, source lanes)`` of the FFT and rotate offsets the planner searches by table."""
    offs, tab, _ = _swizzle_table(wave_size)
    return [(o, row.astype(np.int64)) for o, row in zip(offs, tab)]


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


_swizzle_rows = caches.cache("synth.lane_ops.swizzle_rows", size=8192, table=True)  # 8192: (lane, source) of both wave sizes


def _swizzle_rows_reading(wave_size: int, lane: int, source: int) -> int:
    """The rows of ``_swizzle_table(wave_size)`` (bit ``i`` = row ``i``) whose ``lane`` reads lane ``source``."""
    key = (wave_size, lane, source)
    rows = _swizzle_rows.get(key)
    if rows is None:
        _, tab, _ = _swizzle_table(wave_size)
        rows = int.from_bytes(np.packbits(tab[:, lane] == source, bitorder="little").tobytes(), "little")
        _swizzle_rows[key] = rows
    return rows


def _swizzle_table_offsets(need: np.ndarray, m: np.ndarray) -> list[int]:
    """The FFT/rotate offsets (table order) whose source lanes agree with ``need`` on the lanes ``m``:
    the rows in the intersection of the needed lanes' ``_swizzle_rows_reading``."""
    offs, _, by_row = _swizzle_table(len(need))
    if m.all():
        return by_row.get(need.astype(np.int8).tobytes(), [])
    hit = (1 << len(offs)) - 1
    for lane, s in zip(np.flatnonzero(m).tolist(), need[m].tolist()):
        hit &= _swizzle_rows_reading(len(need), lane, s)
        if not hit:
            return []
    out = []
    while hit:
        out.append(offs[(hit & -hit).bit_length() - 1])
        hit &= hit - 1
    return out


def find_swizzle(need: np.ndarray, target: Target) -> LaneOp | None:
    """A ds_swizzle_b32 offset realizing ``need`` (bit-mask, quad-perm, then FFT/rotate), or None.
    Every mode keeps lane bit 5."""
    return _find_swizzle(need, np.asarray(need).tolist(), target)


def _find_swizzle(need: np.ndarray, entries: list[int], target: Target) -> LaneOp | None:
    """``find_swizzle`` of the lane map ``need`` (``entries``: the same as a list)."""
    modes = target.ds_swizzle_modes
    if any((lane ^ s) & 32 for lane, s in enumerate(entries) if s >= 0):
        return None  # a lane reads the other half
    m = need >= 0
    i, j = np.flatnonzero(m), need[m]
    if not len(i):
        return LaneOp("ds_swizzle:0x001f", "ds_swizzle", {"offset": 0x001F})
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
    """``ds_bpermute_b32`` with address ``4 * need[l]`` (own lane where undefined; ``need`` one lane map or one per warp)."""
    lanes = np.where(need >= 0, need, lane_indices(need.shape[-1]))
    return LaneOp("ds_bpermute", "ds_bpermute", {"addr": 4 * lanes, "offset": 0})


def any_lane_op(need: np.ndarray, target: Target) -> LaneOp:
    """The instruction moving lanes as any map ``need`` (-1: own lane; one lane map, or one per warp
    ``[warps, lanes]``) on ``target``: ``shfl.sync.idx`` with a per-lane source lane where the target
    has it (NVIDIA), else ``ds_bpermute_b32`` (``bpermute_op``)."""
    if "shfl.sync.idx" not in target.lane_ops:
        return bpermute_op(need)
    lanes = np.where(need >= 0, need, lane_indices(need.shape[-1]))
    return LaneOp("shfl.sync.idx", "shfl", {"mode": "idx", "b": lanes.astype(np.int64), "c": 0x1F})


def shfl_op(need: np.ndarray) -> LaneOp:
    """The ``shfl.sync`` realizing ``need`` on a warp of 32 lanes (the module doc's order: ``bfly``,
    ``down``, ``up``, a uniform ``idx``, a per-lane ``idx``); ``c`` is CUDA's whole-warp operand
    (0x1f, 0 for ``up``)."""
    lanes = lane_indices(len(need))
    m = need >= 0
    i, j = lanes[m], need[m]
    for mode, b in (("bfly", j ^ i), ("down", j - i), ("up", i - j)):
        if len(b) and (b == b[0]).all() and 0 < b[0] < len(need):
            return LaneOp(f"shfl.sync.{mode}:{int(b[0])}", "shfl",
                          {"mode": mode, "b": int(b[0]), "c": 0 if mode == "up" else 0x1F})
    if len(j) and (j == j[0]).all():
        return LaneOp("shfl.sync.idx", "shfl", {"mode": "idx", "b": int(j[0]), "c": 0x1F})
    return LaneOp("shfl.sync.idx", "shfl", {"mode": "idx", "b": np.where(m, need, lanes).astype(np.int64), "c": 0x1F})


_cache = caches.cache("synth.lane_ops.lane_op", size=4096)  # 4096: several lane maps per layout pair


def find_lane_op(need: np.ndarray, target: Target, family_cost: dict[str, float] | None = None) -> LaneOp:
    """The cheapest instruction realizing ``need`` (-1 = don't care) on ``target``.

    ``family_cost`` orders the families (default DPP < ds_swizzle < ds_bpermute).  A target whose
    ``lane_ops`` has ``shfl.sync.idx`` (NVIDIA) moves lanes by ``shfl_op`` only; on one without it
    and without ``ds_bpermute`` a map no DPP control or ds_swizzle realizes is a LayoutError.
    """
    need = np.asarray(need, dtype=np.int64)
    wave_size = target.wave_size
    if need.shape != (wave_size,):
        raise LayoutError(f"a lane map of {target.name} has {wave_size} entries, got shape {need.shape}")
    return _lane_op(need, need.tobytes(), target, family_cost, True)


def families_without_dpp(target: Target) -> tuple[str, ...]:
    """The families ``find_lane_op`` may pick on ``target`` for a lane map no DPP control realizes
    (``find_dpp`` None): ``shfl`` where it moves lanes by ``shfl.sync`` only, else DPP8 (family ``dpp``)
    where the target has it, ``permlane16`` where it has v_permlanex16, ``ds_swizzle`` and
    ``ds_bpermute``."""
    if "shfl.sync.idx" in target.lane_ops:
        return ("shfl",)
    return ((("dpp",) if "dpp8" in target.dpp_controls else ()) + (("permlane16",) if target.has_permlanex16 else ())
            + ("ds_swizzle", "ds_bpermute"))


def lane_moves(need: np.ndarray, target: Target, family_cost: dict[str, float], identity: bool
               ) -> tuple[LaneOp | None, LaneOp | None]:
    """``(find_lane_op(need, target, family_cost), find_dpp(need, target))`` of a lane map the planner
    built (int64 ``[wave_size]``, entries -1 or lane indices: not checked again), the first None
    where ``identity`` (``need`` moves no lane)."""
    need_bytes, entries = need.tobytes(), need.tolist()
    mv = None if identity else _lane_op(need, need_bytes, target, family_cost, False, entries)
    return mv, _find_dpp(need_bytes, entries, target)


def _lane_op(need: np.ndarray, need_bytes: bytes, target: Target, family_cost: dict[str, float] | None,
             check: bool, entries: list[int] | None = None) -> LaneOp:
    """``find_lane_op`` of the int64 lane map ``need`` of the target's wave size (``need_bytes``: its
    bytes, ``entries``: it as a list if known; ``check``: whether its entries are checked to be -1
    or lane indices)."""
    costs = family_cost or {"dpp": 1.0, "permlane16": 1.5, "ds_swizzle": 2.0, "ds_bpermute": 3.0}
    key = (target.name, need_bytes, tuple(sorted(costs.items())))
    kept = _cache.get(key)
    if kept is not None:  # only valid lane maps are kept
        return kept
    if entries is None:
        entries = need.tolist()
    if check and (min(entries) < -1 or max(entries) >= target.wave_size):
        raise LayoutError("a lane map entry is not a lane index or -1")
    if "shfl.sync.idx" in target.lane_ops:
        _cache[key] = shfl_op(need)
        return _cache[key]
    dpp = _find_dpp(need_bytes, entries, target)
    if dpp is None and "dpp8" in target.dpp_controls:
        dpp = find_dpp8(need)
    # RDNA's v_permlane16/x16 (a VALU op, priced as the family "permlane16") when no DPP control moves it
    perm = find_permlane16(need) if dpp is None and target.has_permlanex16 else None
    # a DPP control found and no dearer than ds_swizzle wins over any swizzle (min keeps the first);
    # ds_bpermute (any map, last) only when it is strictly cheaper than both or neither exists
    swz = None if dpp is not None and costs["dpp"] <= costs["ds_swizzle"] else _find_swizzle(need, entries, target)
    options = [op for op in (dpp, perm, swz) if op is not None]
    if not options or min(costs[o.family] for o in options) > costs["ds_bpermute"]:
        if not target.has_ds_bpermute:
            if not options:
                raise LayoutError(f"{target.name} has no lane instruction moving lanes as {need.tolist()}")
        else:
            options.append(bpermute_op(need))
    best = min(options, key=lambda o: costs[o.family])
    _cache[key] = best
    return best


def row_bank_masks(enabled: np.ndarray) -> tuple[int, int] | None:
    """DPP ``(row_mask, bank_mask)`` whose enabled lanes are exactly ``enabled`` (bool[wave size]), or None."""
    en = np.asarray(enabled, dtype=bool)
    return _row_bank_masks(en.tobytes()) if en.ndim == 1 else None


@caches.memoize("synth.lane_ops.row_bank_masks", table=True)
def _row_bank_masks(key: bytes) -> tuple[int, int] | None:
    en = np.frombuffer(key, dtype=bool)
    n = lane_indices(len(en))
    rows = sorted({int(r) for r in (n[en] >> 4)})
    banks = sorted({int(b) for b in ((n[en] >> 2) & 3)})
    rm = sum(1 << r for r in rows)
    bm = sum(1 << b for b in banks)
    got = (((rm >> (n >> 4)) & 1) & ((bm >> ((n >> 2) & 3)) & 1)).astype(bool)
    return (rm, bm) if (got == en).all() and en.any() else None
