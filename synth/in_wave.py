"""Conversions that stay inside each wave: packing, bit exchanges, per-register gathers.

Input: the element map ``M`` of linlayout.synth.preimage restricted to one wave --
columns, per dst register bit and dst lane bit, of the src (register, lane)
position holding that element.  Everything is identical in every warp.

**Packing.**  With ``p = 32 / bits > 1`` elements per VGPR, ``kappa <= log2 p``
src register bits ``K`` whose dst preimages ``K_d`` are dst register bits
travel together: the *units* (32-bit values) of the middle of the plan hold
the ``2**kappa`` elements that differ only in ``K`` (unit slot ``k`` = K
coordinate ``k``).  A pack stage builds the units from the src VGPRs and an
unpack stage builds the dst VGPRs from them, with ``v_perm_b32`` byte selects
where the element order differs (``gather_dword``).  The unit problem is ``M``
with the ``K`` bits removed: a linear map on (unit bits, lane bits).

**Exchanges** (linlayout.synth.exchanges), for a unit map that is a partial bit
permutation: register/lane bit exchanges and lane stages, scheduled on labels.

**Gather** (``gather_units``, any map).  Each dst unit, lane by lane, comes
from some (src unit, src lane); lanes are grouped by src unit, one group is
moved as a base and the others are merged by DPP-fused selects or by a move
and a ``v_cndmask``.  Where every src lane is read in one src unit (broadcast
slices), a dst unit may instead be assembled select first: a ``v_cndmask`` tree
picks the unit in each src lane, then one lane op moves it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import combinations, permutations

import numpy as np

from linlayout import LayoutError
from .context import ConversionContext
from .cost import CostModel
from . import ir
from .ir import Program
from .lane_ops import families_without_dpp, find_dpp, find_lane_op, lane_indices, lane_moves
from .plan import slots_per_dword
from .span import span_table

__all__ = ["Packing", "UnitMap", "choose_packing", "dst_register_parts", "gather_choices", "gather_dword",
           "gather_dwords", "gather_floor", "gather_units", "pack_perms", "pack_units", "unpack_units",
           "unpacked_outputs"]

@dataclass
class UnitMap:
    """Linear map from dst (unit bits, lane bits) to src (unit bits, lane bits).

    ``cols[b]`` for b < n_dst is the image of dst unit bit b, ``cols[n_dst + j]``
    that of lane bit j (``wave_size = 2**(len(cols) - n_dst)`` lanes); images use bits
    ``0..n_src-1`` for src units and ``n_src..`` for lanes.
    """

    n_src: int
    n_dst: int
    cols: list[int]

    def table(self) -> tuple[np.ndarray, np.ndarray]:
        """``(src_unit, src_lane)``, each ``[2**n_dst, wave_size]``."""
        full = span_table(self.cols).reshape(-1, 1 << self.n_dst).T
        return full & ((1 << self.n_src) - 1), full >> self.n_src


@dataclass
class Packing:
    """``K``: src register bits kept together (unit slot order); ``Kd``: their dst register bits."""

    element_bits: int
    n_src_reg: int
    n_dst_reg: int
    K: list[int]
    Kd: list[int]
    units: UnitMap

    @property
    def p(self) -> int:
        return slots_per_dword(self.element_bits)


def _unit_map(reg_cols: list[int], lane_cols: list[int], n_sr: int, K: list[int], Kd: list[int]) -> UnitMap | None:
    kmask = sum(1 << k for k in K)
    keep_src = [i for i in range(n_sr) if i not in K]
    remap = {s: i for i, s in enumerate(keep_src)}
    n_su = len(keep_src)

    def conv(c: int) -> int | None:
        if c & kmask:
            return None
        out = c >> n_sr << n_su
        for s, i in remap.items():
            out |= ((c >> s) & 1) << i
        return out

    cols = []
    for b, c in enumerate(reg_cols):
        if b in Kd:
            continue
        v = conv(c)
        if v is None:
            return None
        cols.append(v)
    n_du = len(cols)
    for c in lane_cols:
        v = conv(c)
        if v is None:
            return None
        cols.append(v)
    return UnitMap(n_su, n_du, cols)


def pack_perms(pk_K: list[int], n_sr: int, p: int) -> int:
    """Units whose content is not one src VGPR with the elements already in unit-slot order.

    Unit slot ``k`` holds src register ``deposit(u, rest) | deposit(k, K)``: that is element
    ``k`` of one VGPR for every ``k`` iff ``K = [0, .., kappa - 1]`` (``kappa <= log2 p``) and
    the unit's register bits ``kappa .. log2 p - 1`` are 0."""
    e, kappa = p.bit_length() - 1, len(pk_K)
    n_units = 1 << (n_sr - kappa)
    if kappa > e or list(pk_K) != list(range(kappa)):
        return n_units
    return n_units - (n_units >> (min(e, n_sr) - kappa))  # units whose bits kappa.. log2 p - 1 are 0


def choose_packing(reg_cols: list[int], lane_cols: list[int], n_sr: int, element_bits: int) -> Packing:
    """The packing with the most elements per unit, then the fewest pack/unpack ``v_perm``s."""
    n_dr = len(reg_cols)
    p = slots_per_dword(element_bits)
    e = p.bit_length() - 1
    G = [(c.bit_length() - 1, b) for b, c in enumerate(reg_cols)
         if c and c & (c - 1) == 0 and c < (1 << n_sr)]
    G = list({rho: (rho, b) for rho, b in G}.values())  # one dst bit per src bit
    for kappa in range(min(e, len(G)), -1, -1):
        best = None
        for sub in permutations(G, kappa):
            K, Kd = [s for s, _ in sub], [b for _, b in sub]
            um = _unit_map(reg_cols, lane_cols, n_sr, K, Kd)
            if um is None:
                continue
            cost = pack_perms(K, n_sr, p) + pack_perms(Kd, n_dr, p)
            if best is None or cost < best[0]:
                best = (cost, K, Kd, um)
        if best is not None:
            return Packing(element_bits, n_sr, n_dr, best[1], best[2], best[3])
    raise LayoutError("internal: no packing found")  # kappa = 0 always succeeds


# ---------------------------------------------------------------------- byte gathers
def gather_dword(prog: Program, parts: list[tuple[int, int | np.ndarray] | None], element_bytes: int,
                 patterns: dict | None = None) -> int:
    """A register whose slot ``i`` is slot ``parts[i][1]`` of value ``parts[i][0]`` (None: don't care).

    A slot may be a per-lane array (``[wave_size]``) taking at most two patterns over the lanes: then
    the ``v_perm_b32``s get a per-lane selector (``Program.perm_select``).  ``patterns``: the lane
    patterns of the gather's earlier dwords (``_slot_patterns``; None: none)."""
    patterns = {} if patterns is None else patterns
    in_place = _in_place(parts)
    if in_place is not None:
        return in_place
    used = [x for x in parts if x is not None]
    vals = list(dict.fromkeys(v for v, _ in used))
    by_lanes = _slot_patterns(parts, patterns)
    if (len(vals) == 1 and len(by_lanes) == 1
            and all(x is None or x[1] == i for i, x in enumerate(by_lanes[0][1]))):
        return vals[0]
    if len(vals) <= 2:
        s1 = vals[0]
        s0 = vals[1] if len(vals) == 2 else vals[0]
        sels = [_perm_selector(fixed, s0, s1, element_bytes) for _, fixed in by_lanes]
        if len(sels) == 1:
            return prog.perm(s0, s1, sels[0])
        return prog.perm_select(s0, s1, sels[0], sels[1], by_lanes[1][0])
    half = len(parts) // 2
    lo = gather_dword(prog, parts[:half] + [None] * (len(parts) - half), element_bytes, patterns)
    hi = gather_dword(prog, [None] * half + parts[half:], element_bytes, patterns)
    sel = 0
    for byte in range(4):
        sel |= (byte if byte < 2 else 4 + byte) << (8 * byte)
    return prog.perm(hi, lo, sel)


def _in_place(parts: list[tuple[int, int | np.ndarray] | None]) -> int | None:
    """The value whose slot ``i`` is every ``parts[i]`` given, when one value holds them all in place
    (slots as ints); 0 when no part is given (any register); else None."""
    value = None
    for i, x in enumerate(parts):
        if x is None:
            continue
        if type(x[1]) is not int or x[1] != i or (value is not None and x[0] != value):
            return None
        value = x[0]
    return 0 if value is None else value


def unpacked_outputs(prog: Program, outputs: list[int], n_elements: int, element_bytes: int) -> list[int]:
    """The values of a dst held one element per VGPR (``Plan.dst_unpacked``) from ``outputs``, the
    packed dst VGPRs (``p = 4 / element_bytes`` elements each): element ``r`` is slot ``r % p`` of
    ``outputs[r // p]``, read through the ``v_perm_b32`` that joined it there
    (``Program.element_source``, so that permute is dead unless something else reads it), and it is
    that value where its element sits in the low bits, else one permute of it moving the element
    down (``gather_dword``, the slots above don't-care)."""
    p = 4 // element_bytes
    out = []
    for r in range(n_elements):
        value, slot = prog.element_source(outputs[r // p], r % p, element_bytes)
        out.append(gather_dword(prog, [(value, slot)] + [None] * (p - 1), element_bytes))
    return out


def gather_dwords(prog: Program, parts_list: list[list], element_bytes: int) -> list[int]:
    """``gather_dword`` of every entry of ``parts_list``, 8-bit dwords of three or four values sharing
    their first ``v_perm_b32``s.

    Such a dword (every slot an int) is one ``v_perm_b32`` of two registers, each either one of its
    values (the bytes it gives, wherever they sit) or an *intermediate* holding the bytes of two of
    its values (a ``v_perm_b32`` of them): with three values, the one giving the most bytes is used
    directly and the other two share an intermediate; with four, two intermediates, paired so that
    the value pairs most dwords need are used.  An intermediate holds up to four bytes of its value
    pair, so the dwords needing bytes of the same pair share one: a 4x4 byte transpose takes 8
    ``v_perm_b32``, not ``gather_dword``'s 12.  Every other entry is ``gather_dword``'s (an entry one
    value holds in place, ``_in_place``, is settled once here: it makes no op)."""
    in_place = [_in_place(parts) for parts in parts_list]
    multi = {}
    for i, parts in enumerate(parts_list if element_bytes == 1 else ()):
        if in_place[i] is not None:
            continue
        used = [x for x in parts if x is not None]
        vals = list(dict.fromkeys(v for v, _ in used))
        if len(vals) > 2 and all(isinstance(s, int) for _, s in used):
            multi[i] = vals
    pair_use: dict[tuple[int, int], int] = {}
    for vals in multi.values():
        for pair in combinations(sorted(vals), 2):
            pair_use[pair] = pair_use.get(pair, 0) + 1

    def key(a: int, b: int) -> tuple[int, int]:
        return (a, b) if a < b else (b, a)

    groups = {}  # entry -> its two (values, bytes) groups
    for i, vals in multi.items():
        given = {v: [x for x in parts_list[i] if x is not None and x[0] == v] for v in vals}
        if len(vals) == 3:
            direct = max(vals, key=lambda v: (len(given[v]), pair_use[key(*[u for u in vals if u != v])]))
            pairs = [(direct,), tuple(u for u in vals if u != direct)]
        else:
            a, b, c, d = vals
            pairs = max([[(a, b), (c, d)], [(a, c), (b, d)], [(a, d), (b, c)]],
                        key=lambda ps: sum(pair_use[key(*q)] for q in ps))
        groups[i] = [(q, list(dict.fromkeys(x for v in q for x in given[v]))) for q in pairs]
    held: dict[tuple[int, int], list[list]] = {}  # value pair -> intermediates (their bytes, in order)
    for i in multi:
        for q, wanted in groups[i]:
            if len(q) == 2:
                fits = [m for m in held.setdefault(key(*q), []) if len(set(m) | set(wanted)) <= 4]
                if fits:
                    fits[0].extend(x for x in wanted if x not in fits[0])
                else:
                    held[key(*q)].append(list(wanted))
    registers = {}  # (value pair, intermediate index) -> its value
    for q, ms in held.items():
        for k, m in enumerate(ms):
            registers[q, k] = prog.perm(q[1], q[0], _perm_selector(m + [None] * (4 - len(m)), q[1], q[0], 1))

    def located(q: tuple, wanted: list) -> tuple[int, dict]:
        """The register of a group and where each of its bytes sits in it."""
        if len(q) == 1:
            return q[0], {x: x[1] for x in wanted}
        k = next(k for k, m in enumerate(held[key(*q)]) if set(wanted) <= set(m))
        m = held[key(*q)][k]
        return registers[key(*q), k], {x: m.index(x) for x in wanted}

    out = []
    patterns: dict = {}  # the lane patterns of the entries' slots (gather_dword)
    for i, parts in enumerate(parts_list):
        if in_place[i] is not None:
            out.append(in_place[i])
            continue
        if i not in multi:
            out.append(gather_dword(prog, parts, element_bytes, patterns))
            continue
        (r1, at1), (r0, at0) = (located(q, wanted) for q, wanted in groups[i])
        sel = 0
        for byte, x in enumerate(parts):
            code = 0x0C if x is None else (at1[x] if x in at1 else 4 + at0[x])
            sel |= code << (8 * byte)
        out.append(prog.perm(r0, r1, sel))
    return out


def gather_intermediates(parts_list: list[list], element_bytes: int) -> int:
    """A lower bound of the intermediate ``v_perm_b32``s that ``gather_dwords(prog, parts_list, element_bytes)``
    makes besides one op per entry not in place (``_in_place``), where no slot ``(value, slot)`` is given
    twice in ``parts_list`` (else 0).

    Only 8-bit entries of three or four values, every slot an int, read intermediates, and all their bytes
    come through them but those of the value used directly (four values: none; three: one value's, at most
    the most bytes one value gives).  An intermediate holds at most four bytes of one value pair, each byte
    a distinct given slot, so there are at least the sum of those counts over four.  Each is a live
    ``perm`` of two values (its entry's op reads it), no entry's own op (those read an intermediate, or
    name in their selector slots no intermediate holds: each slot is given once), and no other
    intermediate (a pair's intermediates hold different slots)."""
    if element_bytes != 1:
        return 0
    given, through = set(), 0
    n_given = 0
    for parts in parts_list:
        used = [x for x in parts if x is not None]
        given.update(used)
        n_given += len(used)
        values = {v for v, _ in used}
        if len(values) > 2 and all(type(s) is int for _, s in used):  # (never in place: more than one value)
            counts = Counter(v for v, _ in used)
            through += len(used) - (max(counts.values()) if len(values) == 3 else 0)
    if len(given) != n_given:
        return 0
    return -(-through // 4)


def _slot_patterns(parts: list, memo: dict) -> list[tuple[np.ndarray | None, list]]:
    """``parts`` with int slots per lane pattern: ``[(lanes, parts)]``, one entry (lanes None) when
    every slot is an int, else two (the lanes of each pattern).  ``memo``: the patterns of the slots
    seen so far (``_lane_patterns`` by the slots' values), shared by the dwords of one gather, so
    each is worked out once and its lane masks are the same arrays for every dword."""
    if all(x is None or not isinstance(x[1], np.ndarray) for x in parts):
        return [(None, parts)]
    slots = [x[1] for x in parts if x is not None]
    key = tuple((s.dtype.str, s.shape, s.tobytes()) if isinstance(s, np.ndarray) else int(s) for s in slots)
    found = memo.get(key)
    if found is None:
        found = memo[key] = _lane_patterns(slots)

    def fixed(pattern_slots: list[int]) -> list:
        it = iter(pattern_slots)
        return [None if x is None else (x[0], next(it)) for x in parts]

    return [(lanes, fixed(pattern_slots)) for lanes, pattern_slots in found]


def _lane_patterns(slots: list) -> list[tuple[np.ndarray | None, list[int]]]:
    """The slots (ints or per-lane arrays, ``[wave_size]``) as int slots per lane pattern:
    ``[(lanes, slots)]``, one entry (lanes None) when every lane reads the same, else two."""
    rows = np.array(np.broadcast_arrays(*(np.asarray(s) for s in slots)))
    first = rows[:, 0]
    other = (rows != first[:, None]).any(axis=0)
    cols = rows[:, other]
    if (cols != cols[:, :1]).any():
        raise LayoutError("internal: lane-dependent slots of one register take more than two patterns")
    if not other.any():
        return [(None, [int(s) for s in first])]
    return [(~other, [int(s) for s in first]), (other, [int(s) for s in cols[:, 0]])]


def _perm_selector(parts: list[tuple[int, int] | None], s0: int, s1: int, element_bytes: int) -> int:
    """The ``v_perm_b32`` selector putting slot ``parts[i][1]`` of value ``parts[i][0]`` (``s0`` or
    ``s1``) into slot ``i`` (bytes 0-3: ``s1``, 4-7: ``s0``, 0x0C: zero for don't care)."""
    sel = 0
    for i in range(4 // element_bytes):
        x = parts[i] if i < len(parts) else None
        for b in range(element_bytes):
            byte = i * element_bytes + b
            if x is None:
                code = 0x0C
            else:
                code = (4 if (x[0] == s0 and x[0] != s1) else 0) + x[1] * element_bytes + b
            sel |= code << (8 * byte)
    return sel


def pack_units(prog: Program, pk: Packing) -> list[int]:
    """Values of the units (index = src unit index), built from the src VGPRs ``0..``."""
    p, kappa = pk.p, len(pk.K)
    rest = [i for i in range(pk.n_src_reg) if i not in pk.K]
    element_bytes = pk.element_bits // 8
    if p == 1:  # 32/64-bit elements: unit u is src register u
        return list(range(1 << pk.n_src_reg))

    def deposit(x: int, positions: list[int]) -> int:
        return sum(((x >> i) & 1) << b for i, b in enumerate(positions))

    parts_list = []
    for u in range(1 << (pk.n_src_reg - kappa)):
        base = deposit(u, rest)
        parts: list[tuple[int, int] | None] = [divmod(base | deposit(k, pk.K), p) for k in range(1 << kappa)]
        parts_list.append(parts + [None] * (p - len(parts)))
    return gather_dwords(prog, parts_list, element_bytes)


def dst_register_parts(n_dst_slots: int, p: int, locate) -> list[list[tuple[int, int] | None]]:
    """Per dst VGPR, per slot: ``locate(r)`` = (value, slot) of dst element ``r`` (None past the end)."""
    return [[locate(r) if r < n_dst_slots else None for r in range(d * p, d * p + p)]
            for d in range(-(-n_dst_slots // p))]


def unpack_units(prog: Program, pk: Packing, final_units: list[int], n_dst_slots: int) -> list[int]:
    """Dst VGPR values built from the final units (index = dst unit index)."""
    rest = [i for i in range(pk.n_dst_reg) if i not in pk.Kd]
    element_bytes = pk.element_bits // 8

    def locate(r: int) -> tuple[int, int]:
        u = sum(((r >> b) & 1) << i for i, b in enumerate(rest))
        k = sum(((r >> b) & 1) << i for i, b in enumerate(pk.Kd))
        return final_units[u], k

    parts_list = dst_register_parts(n_dst_slots, pk.p, locate)
    return gather_dwords(prog, parts_list, element_bytes) if pk.p > 1 else [parts[0][0] for parts in parts_list]


# ---------------------------------------------------------------------- gather strategy
@dataclass
class _GatherUnit:
    """How one dst unit is assembled: the base group (moved whole) and the merged groups."""

    base: tuple  # (src unit, lanes, need, lane op or None)
    merges: list  # (src unit, lanes, need, DPP op or None, lane op or None)


@dataclass
class _SelectThenMove:
    """One dst unit assembled select first: every src lane ``s`` picks the src unit
    ``unit_of[s]`` (``-1``: no dst lane reads ``s``) by a tree of ``v_cndmask`` over the unit
    index bits, then one lane op ``mv`` (None: identity) moves the picked value to the lanes
    ``need``.  It applies when every src lane is read in one src unit only, as in broadcast
    slices, where a lane-by-lane gather moves each src unit separately."""

    unit_of: np.ndarray
    need: np.ndarray
    mv: object


def _select_tree(prog: Program, units: list[int], unit_of: np.ndarray) -> int:
    """Per lane ``s`` the value ``units[unit_of[s]]`` (don't care where ``-1``): a binary tree of
    selects over the unit index bits, low bit first; a subtree no lane reads is skipped, so a tree
    over ``n`` present units has ``n - 1`` selects, and the select of bit ``j`` uses one lane mask
    wherever it occurs (``_tree_mask``)."""
    masks: dict[int, np.ndarray] = {}

    def pick(prefix: int, bits: int) -> int | None:
        if bits == len(units).bit_length() - 1:
            return units[prefix] if (unit_of == prefix).any() else None
        low, high = pick(prefix, bits + 1), pick(prefix | (1 << bits), bits + 1)
        if low is None or high is None:
            return high if low is None else low
        if bits not in masks:
            masks[bits] = _tree_mask(unit_of, bits)
        return prog.select(masks[bits], low, high)

    return pick(0, 0)


def _tree_mask(unit_of: np.ndarray, bits: int) -> np.ndarray:
    """The lane mask of ``_select_tree``'s selects of unit bit ``bits``: ``unit_of >> bits & 1`` on the
    lanes read (``unit_of >= 0``).  On the others it is free; where one lane bit's mask (lanes whose bit
    ``b`` is set) agrees on the lanes read, that mask is taken, so that the trees of dst units read at
    different lanes (a broadcast of lane ``k`` of each lane group, one unit per ``k``) select alike and
    share their selects, and a ``v_perm_b32`` fused with them its per-lane selector
    (``Program.select``); else the free lanes pick the low subtree."""
    read = unit_of >= 0
    want = (unit_of >> bits & 1).astype(bool) & read
    lanes = lane_indices(len(unit_of))
    for b in range(len(unit_of).bit_length() - 1):
        mask = (lanes >> b & 1).astype(bool)
        if np.array_equal(mask[read], want[read]):
            return mask
    return want


def gather_floor(um: UnitMap, cm: CostModel) -> float:
    """A lower bound of the ``gather_choices`` cost.  A lane group (the lanes of one dst unit that
    read one src unit) merges by a select when its lanes read their own lane, else by at least a DPP
    move and a select (one fused DPP op when ``FUSE_DPP_SELECT``); the base group saves at most one
    select per dst unit."""
    src_u, src_l = um.table()
    n_q, n_u = src_u.shape[0], 1 << um.n_src
    key = (np.arange(n_q)[:, None] * n_u + src_u).reshape(-1)
    moved = np.bincount(key, weights=(src_l != lane_indices(src_l.shape[-1])).reshape(-1), minlength=n_q * n_u)
    present = np.bincount(key, minlength=n_q * n_u) > 0
    sel, dpp = cm.instruction("v_cndmask"), cm.instruction("dpp")
    add_moved = dpp if ir.FUSE_DPP_SELECT else dpp + sel
    per_group = np.where(present, np.where(moved > 0, add_moved, sel), 0).reshape(n_q, n_u)
    lane_by_lane = per_group.sum(axis=1) - min(sel, add_moved)
    select_first = (present.reshape(n_q, n_u).sum(axis=1) - 1) * sel  # a _SelectThenMove's selects
    return float(np.minimum(lane_by_lane, select_first).sum())


def gather_choices(ctx: ConversionContext, um: UnitMap, limit: float = float("inf")
                   ) -> tuple[float, list[_GatherUnit | _SelectThenMove]] | None:
    """The per-unit gather and its cost under the context's target and cost model: each dst unit
    is assembled lane group by lane group (lanes reading the same src unit); the group whose move
    costs least relative to merging it is the base, every other group merges by one DPP move into
    the base (plus a select unless fused) or by a lane move and a ``v_cndmask``.  Where it costs
    less, a dst unit is assembled select first instead (``_SelectThenMove``).

    None when the cost is above ``limit``, told as soon as the units chosen so far and the floors of
    the rest (``_unit_floors``) exceed it (by more than rounding), before the rest's lane moves are
    looked up."""
    src_u, src_l = um.table()
    target, cm = ctx.target, ctx.cost_model
    fam = cm.lane_family_cost()
    sel_cost = cm.instruction("v_cndmask")
    dpp_cost = cm.instruction("dpp") + (0 if ir.FUSE_DPP_SELECT else sel_cost)
    # every (dst unit, src unit) lane group, dst unit major, src unit ascending
    present = np.zeros((src_u.shape[0], 1 << um.n_src), dtype=bool)
    present[np.arange(src_u.shape[0])[:, None], src_u] = True
    qs, gs = np.nonzero(present)
    lanes = src_u[qs] == gs[:, None]
    needs = np.where(lanes, src_l[qs], -1)
    idents = ((needs == lane_indices(target.wave_size)) | ~lanes).all(axis=1).tolist()
    needs = _shared_moves(needs, gs, idents, target, fam)
    moves: dict[bytes, tuple] = {}  # lane map -> (lane op or None, DPP op or None, base cost, merge cost)
    blob, row = needs.tobytes(), needs.shape[1] * needs.itemsize  # the lane maps' bytes, one row each
    n_q = src_u.shape[0]
    starts = np.searchsorted(qs, np.arange(n_q + 1)).tolist()  # the groups of dst unit q: starts[q] ..
    gs_list = gs.tolist()
    copies = sum(1 << j for j, col in enumerate(ctx.problem.src_cols["lane"]) if col == 0)
    first = _select_first(src_u, src_l, copies)
    rest = None  # the least cost of units q.., when a limit is given (its rounding margin keeps the exit exact)
    if limit < float("inf"):
        keys = [blob[i * row:(i + 1) * row] for i in range(len(gs_list))]
        floors = _unit_floors(ctx, needs, keys, idents, starts, first, fam, sel_cost, dpp_cost)
        rest = np.cumsum(floors[::-1])[::-1].tolist()
        limit += 1e-9 * (1.0 + abs(limit))
    total_cost, plan = 0.0, []
    for q in range(n_q):
        if rest is not None and total_cost + rest[q] > limit:
            return None
        groups = []
        for i in range(starts[q], starts[q + 1]):
            key, need = blob[i * row:(i + 1) * row], needs[i]
            move = moves.get(key)
            if move is None:
                mv, dpp = lane_moves(need, target, fam, idents[i])
                base_cost = 0.0 if idents[i] else fam[mv.family]
                move = moves[key] = (mv, dpp, base_cost, dpp_cost if dpp is not None else (base_cost + sel_cost))
            groups.append((gs_list[i], lanes[i], need, *move))
        total = sum(gr[6] for gr in groups)
        bi = min(range(len(groups)), key=lambda i: total - groups[i][6] + groups[i][5])
        lane_by_lane = total - groups[bi][6] + groups[bi][5]
        selects = (len(groups) - 1) * sel_cost
        if first is not None and first[2][q] and selects < lane_by_lane:  # else select first cannot cost less
            unit_of, need, identity = first[0][q], first[1][q], first[3][q]
            mv = None if identity else find_lane_op(need, target, fam)
            cost = selects + (0.0 if mv is None else fam[mv.family])
            if cost < lane_by_lane:
                total_cost += cost
                plan.append(_SelectThenMove(unit_of, need, mv))
                continue
        total_cost += lane_by_lane
        g, lanes_b, need, mv = groups[bi][:4]
        plan.append(_GatherUnit((g, lanes_b, need, mv), [(g2, l2, n2, d2, m2) for i, (g2, l2, n2, m2, d2, _, _)
                                                         in enumerate(groups) if i != bi]))
    return total_cost, plan


def _shared_moves(needs: np.ndarray, gs: np.ndarray, idents: list[bool], target, fam: dict[str, float]) -> np.ndarray:
    """The lane groups' maps with the moves of one src unit shared: groups of src unit ``gs[i]`` that
    move lanes by no DPP control and whose maps agree wherever both are defined (their lanes are
    disjoint: different dst units read the unit at different lanes) take their union, in group order,
    where the union moves by an instruction of the same family (``find_lane_op``) and no DPP control
    either: the program then makes one lane op of them (``Program.lane`` merges equal ops), as the
    compiler merges the moves once the don't-care lanes' addresses are filled in (random pairs found
    gathers of two ``ds_bpermute`` per src VGPR where the kernels had one).  A group still uses only
    its own lanes' values (its select mask is unchanged); its price is unchanged (each group's move
    priced), so the gather's choices are too."""
    out = needs.copy()
    by_unit: dict[int, list[int]] = {}
    for i in range(len(needs)):
        if not idents[i]:
            by_unit.setdefault(int(gs[i]), []).append(i)

    def family(need: np.ndarray) -> str | None:  # None: a DPP control moves it (the group merges fused)
        return None if find_dpp(need, target) is not None else find_lane_op(need, target, fam).family
    for members in by_unit.values():
        if len(members) < 2:
            continue
        agree = _agreeing_pairs(needs[members])
        unions: list[np.ndarray] = []  # group g's union
        families: list[str | None] = []  # group g's union's family (None: not looked up yet)
        positions: list[list[int]] = []  # group g's members, by position in ``members``
        for p, i in enumerate(members):
            need = needs[i]
            # a union holds each of its members' values on their lanes: it agrees with ``need``
            # exactly where each of its members does (none where no member before ``need`` does)
            rows = ([g for g, group in enumerate(positions) if all(agree[p][q] for q in group)]
                    if any(agree[p][:p]) else [])
            own = family(need) if rows else None  # (None: a DPP control moves it, it joins no group)
            for g in rows if own is not None else ():
                if families[g] is None:
                    families[g] = family(unions[g]) or "dpp"
                wider = np.where(unions[g] >= 0, unions[g], need)
                if own == families[g] and family(wider) == own:
                    unions[g] = wider
                    positions[g].append(p)
                    break
            else:
                unions.append(need)
                families.append(None)
                positions.append([p])
        for union, group in zip(unions, positions):
            if len(group) > 1:  # (a lone member's union is its own map)
                out[[members[p] for p in group]] = union
    return out


def _agreeing_pairs(maps: np.ndarray) -> list[list[bool]]:
    """``[k][k]``: do lane maps ``maps[a]`` and ``maps[b]`` (``-1`` where undefined) agree wherever
    both are defined (every pair compared at once)."""
    defined = maps >= 0
    clash = (maps[:, None, :] != maps[None, :, :]) & defined[:, None, :] & defined[None, :, :]
    return (~clash.any(axis=2)).tolist()


def _unit_floors(ctx: ConversionContext, needs: np.ndarray, keys: list[bytes], idents: list[bool], starts: list[int],
                 first: tuple | None, fam: dict[str, float], sel_cost: float, dpp_cost: float) -> list[float]:
    """Per dst unit, a lower bound of its cost in ``gather_choices`` (its lane groups ``starts[q] ..
    starts[q + 1]``: lane maps ``needs``, their bytes ``keys``, whether they move nothing ``idents``),
    from the DPP controls of the lane maps alone, before the other lane ops are looked up.  A group
    merges at ``dpp_cost`` where a DPP control moves its map (as in ``gather_choices``), else by a
    select after no move (``idents``) or after a move of a family ``families_without_dpp`` allows;
    as the base it costs nothing when unmoved, else at least the least family.  Lane by lane, the
    unit costs its groups' merges but the base's, plus the base's move; select first, a select per
    group but one, plus the move unless it is the identity (where it applies: ``_select_first``)."""
    target = ctx.target
    least = min(fam.values())
    moved_merge = min(fam[f] for f in families_without_dpp(target)) + sel_cost
    dpp_of: dict[bytes, bool] = {}
    merges, bases = [], []
    for i, key in enumerate(keys):
        has_dpp = dpp_of.get(key)
        if has_dpp is None:
            has_dpp = dpp_of[key] = find_dpp(needs[i], target) is not None
        merges.append(dpp_cost if has_dpp else (sel_cost if idents[i] else moved_merge))
        bases.append(0.0 if idents[i] else least)
    floors = []
    for q in range(len(starts) - 1):
        ms, bs = merges[starts[q]:starts[q + 1]], bases[starts[q]:starts[q + 1]]
        floor = sum(ms) - max(m - b for m, b in zip(ms, bs))
        if first is not None and first[2][q]:
            floor = min(floor, (len(ms) - 1) * sel_cost + (0.0 if first[3][q] else least))
        floors.append(floor)
    return floors


def _select_first(src_u: np.ndarray, src_l: np.ndarray, copies: int) -> tuple | None:
    """Every dst unit ``q`` (its lanes read ``src_u[q, l]`` at lane ``src_l[q, l]``) assembled select
    first: ``(unit_of, need, possible, identity)``, per dst unit the src unit ``unit_of[q, s]`` that
    src lane ``s`` picks (``-1``: no dst lane reads ``s``), the lane map ``need[q]`` of the move,
    whether every src lane is read in one src unit only (else it does not apply) and whether the
    move is the identity.  The move costs ``(groups - 1)`` selects plus its lane op.  ``copies``:
    the src lane bits whose flip keeps every register (zero lane columns of src): dst lane ``l``
    reads the copy whose such bits are those of ``l``, so the move is as near the identity as the
    data allows."""
    lanes = lane_indices(src_l.shape[-1])
    need = (src_l & ~copies) | (lanes & copies)
    rows = np.arange(need.shape[0])[:, None]
    unit_of = np.full(need.shape, -1, dtype=np.int64)
    unit_of[rows, need] = src_u
    possible = (unit_of[rows, need] == src_u).all(axis=1).tolist()
    if not any(possible):
        return None
    return unit_of, need, possible, (need == lanes).all(axis=1).tolist()


def gather_units(prog: Program, plan: list[_GatherUnit | _SelectThenMove], units: list[int]) -> list[int]:
    """The dst units of a ``gather_choices`` plan built from the src units ``units``."""
    out = []
    for gu in plan:
        if isinstance(gu, _SelectThenMove):
            picked = _select_tree(prog, units, gu.unit_of)
            out.append(picked if gu.mv is None else prog.lane(picked, gu.need, gu.mv))
            continue
        g, _, need, mv = gu.base
        cur = units[g] if mv is None else prog.lane(units[g], need, mv)
        for g2, lanes2, need2, dpp2, mv2 in gu.merges:
            if dpp2 is not None:
                cur = prog.fused(cur, units[g2], ~lanes2, need2, dpp2)
            else:
                t = units[g2] if mv2 is None else prog.lane(units[g2], need2, mv2)
                cur = prog.select(lanes2, cur, t)
        out.append(cur)
    return out
