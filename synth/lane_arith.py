"""The integer program that computes a kernel's GF(2)-affine per-lane tables, and its instruction count.

A per-lane table of a plan (an LDS byte address, a ``ds_bpermute`` byte address) is GF(2)-affine in
the lane id ``l`` and the warp id ``w`` (bit ``b`` of an int is ``(x >> b) & 1``, bit 0 lowest):

    T(l, w) = c ^ XOR_{b: l_b = 1} L_b ^ XOR_{b: w_b = 1} W_b          (32-bit words)

:class:`LaneProgram` builds one hash-consed op graph for *all* the tables of a kernel, so that a term
two tables share is computed once, and counts the instructions a gfx9 or RDNA compiler makes of it.
The MLIR lowering (linlayout.lowering.emit.lane_values) emits exactly this graph as arith ops (the C++
output, linlayout.lowering.cpp.lane_exprs, spells each table on its own); the
planner (linlayout.synth.cost) counts the same graph for its setup estimates.

**Terms of a linear part.**  Each pair (input bit ``i``, output bit ``o``) of a column has the shift
``o - i``.  All pairs of one shift ``s`` form one *shift term* ``(x & M) << s`` (``>> -s`` when
negative), ``M`` the input bits with that shift: one AND and one shift (one AND for shift 0; a run
moved down to bit 0 is one ``v_bfe_u32``).  The bits of multi-bit columns with one same set of
shifts ``S`` may instead be one *multiply term* ``(x & M) * K``, ``K = sum 2**s`` (one AND and one
``v_mul_u32_u24``; only where the shifted copies of ``M`` are disjoint, so that the product is the
XOR), and a lone such column a *column term* ``sbit(x, i) & L_i`` (``v_bfe_i32`` of the bit: 0 or -1,
then an AND), two ops whatever the column (lane bit 0's too: LLVM makes ``(x & 1) * K`` a select, so
its multiply term is kept only where its AND is shared).  The choices of these terms (``_units``; all of them up
to 3 units) are priced and the cheapest kept (a swizzle ``x ^ (x >> 3)`` is two shift terms, a lone
column of scattered bits one column term, a row address repeated at two places one multiply term).

**Combining.**  Terms whose output bits are disjoint are OR'ed (the same as XOR there): an OR absorbs
one operand that is a single-use shift left (``v_lshl_or_b32``), an AND with an encodable mask
(``v_and_or_b32``) or another OR (``v_or3_b32``), the OR first: LLVM selects from the root down and
prefers ``v_or3_b32``.  Groups of pairwise disjoint terms are XOR'ed
(``v_xor3_b32`` on RDNA absorbs an XOR; gfx9 has one XOR per operand).  The constant ``c`` is one
more XOR.  gfx9's VOP3 takes no literal, so there an AND fuses into ``v_and_or_b32`` only with an
inline mask (-16..64), and an OR that absorbs an operand while its other operand is a constant outside
that range (``(x & 7) | 0x1000``) takes the constant in a register: one ``v_mov_b32`` more, once per
value for all such ORs (as LLVM materializes it); RDNA's VOP3 takes one literal.

**Sharing.**  A table equal to a computed one XOR a difference ``D`` costs ``D``'s ops and one XOR
when that is cheaper than building it (tried from the earlier tables whose difference has the
fewest nonzero columns, fewer than the table's own); terms shared with earlier tables cost nothing
more (the graph is hash-consed: LLVM's CSE merges them the same way).  The warp part is combined
from its own terms and joins the lane terms as one more term; a table that ``thread_id_form`` takes
from the thread id (an LDS address: ``add(..., thread_id=True)``) is instead one shift term of it.

**Tables read modulo a power of two.**  A table whose consumer reads only its bits ``care``
(``care + 1`` a power of two: a ``ds_bpermute`` address, whose lane is its bits 2 to ``log2(wave)
+ 1``, :func:`bpermute_address_bits`) may take a shift term ``(l & M) << s`` as the thread id
``t << s`` (``t`` = ``TID``, lane + wave size x warp id, the kernel's ``v0``: no AND) where every bit of
``t`` that the shift puts in ``care`` is a bit of ``M`` (the others land above it) and no other term
has its output bits: one shift, which an OR absorbs (``v_lshl_or_b32``), for an AND and a shift.
[I] On gfx9 only: on RDNA the wave32 corpus measured it worse (docs/benchmarks.md, "Session 21:
wamd25").  On gfx9 alone as well ([I]: RDNA left out by the same rule, unmeasured there; one wave32
plan would change) a multiply term (no shift down) takes the bits of ``l`` whose products' copies in
``care`` are their columns and whose other copies land above it, where no copy meets another (no carry):
``(l & 3) * 0x44 | (l & 12) << 2`` read in the low byte is ``(l & 15) * 0x44`` (``_widened``; session 23,
gfx950 bf16 ``slice0(mfma16T)->slice0(blocked[1x4,t4x16,o10])`` setup 3 -> 2).  Such a table is a value of
its own: the other tables are not built from it (its bits above ``care`` are not the table's).

**One wave.**  A kernel of one wave declares as many threads as the wave has lanes (``known_block_size``),
so that the compiler knows the thread id below ``2 ** lane_bits``: the lane id is the thread id, no AND
masks it.  A program of such a kernel (``LaneProgram``'s ``one_wave``) takes an AND that keeps every bit
the lane id (or the lane id shifted down) can have as no op (``(l & 63) << 4`` is ``l << 4``: one
``v_lshlrev_b32``, a multiply term of every lane bit one ``v_mul_u32_u24``), and a column term of the
lane id's top bit, ``sbit(l, lane_bits - 1) & L``, as the select LLVM makes of it (``l >= 2 ** (lane_bits
- 1) ? L : 0``: ``v_cmp`` and ``v_cndmask_b32``, which no OR absorbs; on gfx9 ``L`` in a VGPR where it is
not inline, one ``v_mov_b32`` per value); the thread id is the lane id's node.  [I] Measured on the
corpora's one-wave kernels against the same kernels declaring two waves (docs/benchmarks.md, "Session 23:
onewave29"); LLVM's other folds there (two shift terms OR'ed as one masked ``v_lshl_or_b32``) are not
counted.

**Count.**  Ops on the lane id (and the thread id) are VALU, ops on the warp id alone SALU (the warp id is
wave-uniform); :meth:`LaneProgram.count` counts them after the fusions above (each op absorbs at
most one single-use operand, and an op that absorbed one is not absorbed itself).  Tables whose columns all
vanish are constants (no op).
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import xor
from typing import NamedTuple

import numpy as np

from linlayout import LayoutError, caches, f2
from linlayout.hw.targets import get_target

__all__ = ["AffineTable", "LaneProgram", "LaneTable", "RDNA_OPS_PER_DELAY", "TABLE_LOAD_OPS", "bpermute_address_bits",
           "fit_affine", "lane_columns", "least_tables_valu", "linear_columns", "program_family", "row_table",
           "tables_valu", "thread_id_form"]

LANE, WARP, TID = 0, 1, 2  # the value ids of the lane id, the warp id and the thread id in every program
_INLINE = range(-16, 65)  # gfx9 inline integer constants (a VOP3 operand without a literal)


def _inline(value: int) -> bool:
    """Is the 32-bit ``value`` (read as signed) an inline integer constant (``_INLINE``)?"""
    return ((value + 16) & 0xFFFFFFFF) - 16 in _INLINE


@dataclass(frozen=True)
class AffineTable:
    """``T(l, w) = const ^ XOR lane_cols[b] (bit b of l) ^ XOR warp_cols[b] (bit b of w)`` (32-bit);
    a wave has ``2 ** len(lane_cols)`` lanes."""

    const: int
    lane_cols: tuple[int, ...]
    warp_cols: tuple[int, ...]

    def evaluate(self, num_warps: int) -> np.ndarray:
        """The table ``[num_warps, 2 ** len(lane_cols)]`` this map describes."""
        wave_size = 1 << len(self.lane_cols)
        lane = np.arange(wave_size)
        out = np.full((num_warps, wave_size), self.const, dtype=np.int64)
        for b, col in enumerate(self.lane_cols):
            out ^= np.where((lane >> b) & 1, col, 0)[None, :]
        for b, col in enumerate(self.warp_cols):
            out ^= np.where((np.arange(num_warps) >> b) & 1, col, 0)[:, None]
        return out


def fit_affine(table: np.ndarray, defined: np.ndarray | None = None) -> AffineTable | None:
    """A GF(2)-affine map equal to a ``[W, L]`` table of 32-bit ints (``L`` lanes, a power of two), or None.

    ``defined`` (same shape, bool) marks the entries that must match; the others are
    don't-care.  Each output bit is solved independently over GF(2) (unknowns: the
    constant bit and one coefficient per lane and warp bit).
    """
    t = np.asarray(table, dtype=np.int64)
    num_warps, wave_size = t.shape
    if num_warps & (num_warps - 1) or wave_size & (wave_size - 1):
        return None
    lane_bits = wave_size.bit_length() - 1
    ok = np.ones(t.shape, dtype=bool) if defined is None else np.asarray(defined, dtype=bool)
    if ((t < 0) & ok).any() or ((t >= 1 << 32) & ok).any():
        return None
    wb = num_warps.bit_length() - 1
    ws, ls = np.nonzero(ok)
    if ws.size == 0:
        return AffineTable(0, (0,) * lane_bits, (0,) * wb)
    x = [int(l) | (int(w) << lane_bits) for w, l in zip(ws, ls)]
    vals = [int(v) for v in t[ws, ls]]
    n_in = lane_bits + wb
    cols = [sum(1 << i for i, xi in enumerate(x) if (xi >> j) & 1) for j in range(n_in)]
    cols.append((1 << len(x)) - 1)  # the constant term
    targets = [sum(1 << i for i, v in enumerate(vals) if (v >> k) & 1) for k in range(32)]
    sol = f2.solve_many(cols, targets)
    if any(s is None for s in sol):
        return None
    def column(j: int) -> int:
        return sum(((s >> j) & 1) << k for k, s in enumerate(sol))
    cand = AffineTable(column(n_in), tuple(column(j) for j in range(lane_bits)),
                       tuple(column(lane_bits + j) for j in range(wb)))
    return cand if np.array_equal(cand.evaluate(num_warps)[ok], t[ok]) else None


def bpermute_address_bits(wave_size: int) -> int:
    """The bits of a ``ds_bpermute_b32`` byte address the hardware reads, as a mask: bits 0 to ``log2(wave_size)
    + 1`` (the lane is bits 2 and up, modulo the wave; docs/hardware.md section 3, ``isa_lanes.bpermute_src_lanes``;
    the low two bits are kept too, so that two tables a DS offset apart stay so)."""
    return 4 * wave_size - 1


def program_family(arch: str) -> str:
    """The program family of the AMD target ``arch`` (linlayout.hw's descriptor): ``"rdna"`` (VOP3
    takes a literal, ``v_xor3_b32``) for GFX IP 10 and later, ``"gfx9"`` for GFX IP 9 (the CDNA
    targets).  A name of no AMD target (an NVIDIA one, an unknown one) is a LayoutError."""
    target = get_target(arch)
    if target.family not in ("cdna", "rdna"):
        raise LayoutError(f"{target.name} is not an AMD target: per-lane table programs are AMD code")
    return "rdna" if target.gfx_generation >= 10 else "gfx9"


def _shifts(b: int, col: int) -> frozenset:
    return frozenset(o - b for o in _bits(col))


def _multiply(bits, cols) -> tuple[int, int, int]:
    """``(k, m, K)`` with ``((x >> k) & m) * K = XOR_{b in bits} x_b cols[b]`` for bits of one set of
    shifts ``S`` (``K = sum 2**(s + k)``, ``k = max(0, -min S)``): the shifted copies of ``m`` must be
    disjoint (then the sum is the XOR; one ``v_mul_u32_u24``, ``v_mul_lo_u32`` for ``K`` from ``2**24``);
    else None."""
    shifts = _shifts(bits[0], cols[bits[0]])
    k = max(0, -min(shifts))
    m = sum(1 << (b - k) for b in bits)
    seen = 0
    for sh in shifts:
        if (m << (sh + k)) & seen:
            return None
        seen |= m << (sh + k)
    mult = sum(1 << (sh + k) for sh in shifts)
    return k, m, mult


def _widened(m: int, mult: int, cols, care: int, taken: int) -> tuple[int, int]:
    """``(m', w)``: the mask ``m`` of a multiply term ``(x & m) * mult`` (no shift down) of a table read in
    its bits ``care`` alone (a low mask), widened by the bits ``w`` of ``x`` outside ``m`` and ``taken`` (those
    other terms build) whose product ``mult << b`` is their column inside ``care`` (its other copies land
    above it), where every copy of every bit stays disjoint from the others (no carry: the product is still
    their XOR).  Then the shift terms of those bits are the multiply's: ``(l & 15) * 0x44`` read in the low
    byte is ``(l & 3) * 0x44 | (l & 12) << 2``, one ``v_mul_u32_u24`` where the shift term and its OR were
    two ops."""
    seen = sum(mult << b for b in _bits(m))
    widened = 0
    for b, col in enumerate(cols):
        product = mult << b
        if not col or (taken >> b) & 1 or (m >> b) & 1 or product & care != col or product & seen:
            continue
        seen |= product
        widened |= 1 << b
    return m | widened, widened


def _units(x: int, cols) -> list:
    """The multi-bit columns of ``cols`` (input ``x``) in *units* ``(x, bits)``: the bits of one set of
    shifts ``o - b`` whose multiply term is valid (``_multiply``: one AND and one ``v_mul_u32_u24``
    for them all), one unit each other bit (a multiply term too where its shifts are not negative:
    the AND may be shared with a shift term; else a column term, ``v_bfe_i32`` and an AND)."""
    groups: dict[frozenset, list[int]] = {}
    for b, c in enumerate(cols):
        if c & (c - 1):
            groups.setdefault(_shifts(b, c), []).append(b)
    units = []
    for bits in groups.values():
        if len(bits) > 1 and _multiply(bits, cols) is not None:
            units.append((x, tuple(bits)))
        else:
            units.extend((x, (b,)) for b in bits)
    return units


def _nonzero(cols: tuple[int, ...]) -> int:
    return len(cols) - cols.count(0)


def _bits(x: int) -> list[int]:
    """The set bits of the 32-bit word ``x`` (not negative), lowest first."""
    out = []
    while x > 0:
        low = x & -x
        out.append(low.bit_length() - 1)
        x ^= low
    return out


class LaneProgram:
    """One hash-consed op graph computing GF(2)-affine tables from the lane id and the warp id.

    Nodes are tuples ``(kind, *operands)`` (operands: node ids, then ints); ids 0, 1 and 2 are the lane
    id (``LANE``, below ``2 ** lane_bits``), the warp id (``WARP``, below ``2 ** warp_bits``) and the
    thread id (``TID``, ``lane + (warp << lane_bits)``, a VGPR; not bounded: its bits above ``lane_bits +
    warp_bits`` are the workgroup's other warps', which every term of an exact table masks off, and a
    table read modulo a power of two, ``add``'s ``care``, reads only in its ``care`` bits):

    ``("and", a, m)`` ``a & m``; ``("mul", a, K)`` ``a * K`` (``v_mul_u32_u24``); ``("shl", a, s)``,
    ``("shr", a, s)`` logical shifts;
    ``("bfe", a, k, n)`` ``(a >> k) & (2**n - 1)`` (one ``v_bfe_u32``); ``("sbit", a, k)`` ``-((a >> k) &
    1)`` (one ``v_bfe_i32``); ``("or", a, b)``, ``("xor", a, b)``; ``("const", c)``.

    A node's operands are older nodes.  Only the nodes a table reaches are counted and emitted: the
    builds of a table that its trials did not choose stay in the graph, reached by none (what
    :meth:`count` finds depends on the reached nodes alone, not on their ids: any order with parents
    first gives it).

    ``family``: ``program_family``'s.  ``one_wave``: the kernel is one wave (module docstring, "One wave").
    """

    def __init__(self, family: str = "gfx9", lane_bits: int = 6, warp_bits: int = 0, one_wave: bool = False) -> None:
        if family not in ("gfx9", "rdna"):
            raise LayoutError(f"program family is gfx9 or rdna, not {family!r}")
        self.family = family
        self.bits = {LANE: lane_bits, WARP: warp_bits}
        self.one_wave = one_wave
        self.nodes: list[tuple] = [("in", LANE), ("in", WARP), ("in", TID)]
        self._index: dict[tuple, int] = {n: i for i, n in enumerate(self.nodes)}
        self._ops: list[list[int]] = [[], [], []]  # each node's operands that are nodes of ops (not constants)
        self._vec: list[bool] = [True, False, True]  # does the node depend on the lane id (a VALU op)?
        self._kinds: list[str] = ["in", "in", "in"]  # each node's kind (``nodes[i][0]``)
        self.tables: dict[AffineTable, int] = {}  # the tables built, by their map
        self.wrapped: dict[tuple[AffineTable, int], int] = {}  # the tables read modulo a power of two, by (map, care)

    # ------------------------------------------------------------------ building
    def node(self, kind: str, *args) -> int:
        return self._node((kind, *args))

    def _node(self, key: tuple) -> int:
        """:meth:`node` of ``key`` ``(kind, *args)``."""
        i = self._index.get(key)
        if i is None:
            kinds, vec = self._kinds, self._vec
            i = len(kinds)
            kind = key[0]
            if kind == "or" or kind == "xor":
                ops = [a for a in key[1:] if kinds[a] != "const"]
            else:
                ops = [key[1]] if kind != "const" else []
            self.nodes.append(key)
            kinds.append(kind)
            self._index[key] = i
            self._ops.append(ops)
            vec.append(len(ops) > 0 and (vec[ops[0]] or (len(ops) > 1 and vec[ops[1]])))  # (at most two)
        return i

    def add(self, aff: AffineTable, *, thread_id: bool = False, care: int | None = None) -> int:
        """The node computing ``aff``: built with the fewest new instructions (VALU and SALU) given
        the graph (:meth:`_candidates`), directly or as an earlier table XOR the difference; the same
        map twice is one node.  A table without lane or warp columns is a ``const`` node.  With
        ``thread_id``, a table that ``thread_id_form`` takes from the thread id is built from it alone
        (:meth:`_thread_id_candidates`; exact in every bit).  ``care``: the table is read only in these
        bits (module docstring: a node of its own, whose value may differ from ``aff`` above them, kept
        in :attr:`wrapped`); None: every bit.  One table is not both (a ValueError)."""
        return self._add(aff, thread_id, care)[0]

    def add_counted(self, aff: AffineTable, *, thread_id: bool = False, care: int | None = None) -> int:
        """:meth:`add` ``aff``; the instructions of the graph then (``sum(count())``, from the trial
        that chose the build where there was one)."""
        i, total = self._add(aff, thread_id, care)
        return sum(self.count()) if total is None else total

    def _add(self, aff: AffineTable, thread_id: bool = False, care: int | None = None,
             builds=None) -> tuple[int, int | None]:
        if thread_id and care is not None:
            raise ValueError("a table built from the thread id is exact in every bit: no care bits")
        book, key = (self.tables, aff) if care is None else (self.wrapped, (aff, care))
        got = book.get(key)
        if got is not None:
            return got, None
        if builds is None:
            if thread_id and thread_id_form(self.family, self.bits[LANE], aff):
                builds = self._thread_id_candidates
            else:
                builds = lambda a: self._candidates(a, care)  # noqa: E731
        candidates = list(builds(aff))
        if len(candidates) == 1:
            i = candidates[0]()
            book[key] = i
            return i, None
        total = i = None
        for build in candidates:  # the first of the fewest instructions (the others' nodes stay, dead)
            node = book[key] = build()
            count = sum(self.count())
            if total is None or count < total:
                total, i = count, node
        book[key] = i
        return i, total

    def _candidates(self, aff: AffineTable, care: int | None = None):
        """Builders of ``aff``: each choice of column terms (``_generals``), and an earlier table XOR
        the difference where the difference has fewer nonzero columns than ``aff`` (the earlier tables
        with the fewest, each with its choices of column terms); ``care``: :meth:`add`'s."""
        def direct(lane_cols, warp_cols, const, general):
            return lambda: self._affine(lane_cols, warp_cols, const, general, care)
        for general in self._generals(aff.lane_cols, aff.warp_cols):
            yield direct(aff.lane_cols, aff.warp_cols, aff.const, general)
        size = _nonzero(aff.lane_cols) + _nonzero(aff.warp_cols)
        near = []
        for prev, node in self.tables.items():
            d_lane = tuple(map(xor, aff.lane_cols, prev.lane_cols))
            d_warp = tuple(map(xor, aff.warp_cols, prev.warp_cols))
            d = _nonzero(d_lane) + _nonzero(d_warp)
            if d < size:
                near.append((d, node, d_lane, d_warp, aff.const ^ prev.const))
        if not near:
            return
        least = min(n[0] for n in near)
        for _, node, d_lane, d_warp, d_const in near:
            if _ == least:
                for general in self._generals(d_lane, d_warp):
                    yield (lambda n=node, dl=d_lane, dw=d_warp, dc=d_const, g=general:
                           self._xor(n, self._affine(dl, dw, dc, g, care)))

    def _thread_id_candidates(self, aff: AffineTable):
        """Builders of ``aff`` from the thread id alone: its lane and warp columns are the thread id's
        columns (``lane_cols + warp_cols``), each choice of column terms (``_generals``)."""
        cols = aff.lane_cols + aff.warp_cols
        for general in self._generals(cols, (), TID):
            yield lambda g=general: self._with_const(self._combine(self._terms(TID, cols, g)), aff.const)

    def _generals(self, lane_cols, warp_cols, x: int = LANE):
        """The sets of *units* to build as column or multiply terms (``_units``), each a sorted tuple: every set where there
        are at most 3 units, else none and all.  Lane bit 0 (no negative shift) is a column term in a set,
        then in the same set once more a multiply term (``(LANE, (0,), "mul")``): LLVM makes ``(x & 1) * K``
        a select where the AND has no other use (gfx9: ``v_cmp``, ``v_mov_b32`` of ``K``, ``v_cndmask_b32``, 2
        VALU more; RDNA: ``v_cmp`` and ``v_cndmask_b32`` with ``K`` inline, 1 more), so that term is taken
        only where it is fewer ops (its AND shared), the column term on a tie (``add``: the first of the
        fewest).  [I] On RDNA since session 22: with the swizzled ordered layouts of ``lds_path.PER_PREFIX_FAMILIES``
        the wave32 corpus measured it 22 whole instructions fewer (16 rows fewer, 2 more; gfx1200 fp16
        ``blocked[2x1,t32x1,o01]->dotAwmma2.16x16(kw8)`` setup 16 -> 13, Triton's whole 45); alone, in session 20,
        it had moved 2 plans for the worse (docs/benchmarks.md "Session 20: setup24", "Session 22: w32lds27")."""
        units = _units(x, lane_cols) + _units(WARP, warp_cols)
        if not units:
            yield ()
            return
        if len(units) > 3:
            picks = [(), units]
        else:
            picks = [[u for k, u in enumerate(units) if (pick >> k) & 1] for pick in range(1 << len(units))]
        bit0 = (x, (0,))
        for pick in picks:  # each a sorted tuple: _terms builds its units in this order, not in a set's
            yield tuple(sorted(pick))
            if bit0 in pick:
                yield tuple(sorted([u for u in pick if u != bit0] + [(x, (0,), "mul")]))

    def _xor(self, a: int, b: int) -> int:
        if self.nodes[b] == ("const", 0):
            return a
        if self.nodes[a] == ("const", 0):
            return b
        return self.node("xor", a, b)

    def _affine(self, lane_cols, warp_cols, const: int, general, care: int | None = None) -> int:
        """``const ^ lane part ^ warp part``: the terms (:meth:`_terms`) OR'ed within groups of disjoint
        output bits, the groups XOR'ed; the warp part combined apart (scalar ops), then one term."""
        terms = self._terms(LANE, lane_cols, general, care)
        warp_terms = self._terms(WARP, warp_cols, general) if any(warp_cols) else None
        if warp_terms:  # the warp part (scalar) joins the lane terms as one more term
            terms.append(self._combine(warp_terms))
        if not terms:
            return self.node("const", const & 0xFFFFFFFF)
        return self._with_const(self._combine(terms), const)

    def _with_const(self, combined: tuple[int, int], const: int) -> int:
        """``const ^`` the combined terms ``(node, output bits)`` (``_combine``'s)."""
        acc, bits = combined
        if const:
            acc = self.node("or" if not const & bits else "xor", acc, self.node("const", const & 0xFFFFFFFF))
        return acc

    def _terms(self, x: int, cols, general, care: int | None = None) -> list[tuple[int, int]]:
        """The terms ``(node, output bits)`` of the linear part ``XOR_b x_b cols[b]``: a column or
        multiply term per unit of ``general`` (``_units``), a shift term per shift of the other pairs
        (module docstring; ``care``: :meth:`add`'s)."""
        node = self._node
        by_shift: dict[int, int] = {}
        terms = []
        done = 0
        units = sum(1 << b for unit in general if unit[0] == x for b in unit[1])  # (a widened multiply's are not)
        for unit in general:  # in sorted order (_generals), not a set's: that would follow PYTHONHASHSEED
            if unit[0] != x:
                continue
            bits = unit[1]
            for b in bits:
                done |= 1 << b
            k, m, mult = _multiply(bits, cols)  # valid for every unit (_units)
            if len(bits) == 1 and (k != 0 or unit == (x, (0,)) and x != WARP):  # v_bfe_i32, an AND (bit 0: _generals)
                b = bits[0]
                terms.append((node(("and", node(("sbit", x, b)), cols[b])), cols[b]))
                continue
            out = sum(cols[b] for b in bits)
            if care is not None and self.family == "gfx9" and x == LANE and not k:
                m, widened = _widened(m, mult, cols, care, done | units)
                done |= widened
                out |= sum(cols[b] for b in _bits(widened))
            part = self._and(node(("shr", x, k)) if k else x, m)
            terms.append((node(("mul", part, mult)), out))
        for b, col in enumerate(cols):
            if not col or (done >> b) & 1:
                continue
            while col:
                low = col & -col
                col ^= low
                s = low.bit_length() - 1 - b
                by_shift[s] = by_shift.get(s, 0) | (1 << b)
        if not by_shift:
            return terms
        if care is None or self.family != "gfx9" or x != LANE:
            for s, m in sorted(by_shift.items()):
                terms.append((self._shift_term(x, m, s), (m << s) if s >= 0 else (m >> -s)))
            return terms
        outs = {s: (m << s) if s >= 0 else (m >> -s) for s, m in by_shift.items()}
        for s, m in sorted(by_shift.items()):
            others = 0  # the output bits of every other term: a term disjoint from them is OR'ed
            for t in terms:
                others |= t[1]
            for k, out in outs.items():
                if k > s:
                    others |= out
            terms.append((self._shift_term(x, m, s, None if outs[s] & others else care), outs[s]))
        return terms

    def _shift_term(self, x: int, m: int, s: int, care: int | None = None) -> int:
        """``(x & m) << s`` (``>> -s``): an AND and a shift, or one ``v_bfe_u32`` where the bits move
        down to bit 0 as one run.  The compiler does not bound the ids (it reads the lane id as the
        thread id masked, and pushes that mask into each use), so every term masks; but a term of the
        lane id read in the bits ``care`` alone is the thread id shifted, ``TID << s``, where the
        bits of the thread id that the shift puts in ``care`` are all bits of ``m`` (module docstring;
        :meth:`_terms` gives ``care`` only on gfx9, to a lane term whose output bits no other term has,
        which an OR joins: in an XOR LLVM masks the XOR of shifts once, ``(a << i ^ b << j) & M``)."""
        if care is not None and s >= 0 and not (care >> s) & ~m:
            tid = LANE if self.one_wave else TID
            return self._node(("shl", tid, s)) if s else tid
        if s >= 0:
            part = self._and(x, m)
            return self._node(("shl", part, s)) if s else part
        k = -s
        run = m >> k
        if m & ((1 << k) - 1) == 0 and run & (run + 1) == 0:
            return self._node(("bfe", x, k, run.bit_length()))
        return self._and(self._node(("shr", x, k)), run)

    def _and(self, a: int, m: int) -> int:
        """The node ``a & m``: in a one-wave program ``a`` itself where ``a`` is the lane id or the lane id
        shifted down and ``m`` keeps every bit it can have (module docstring, "One wave")."""
        if self.one_wave:
            n = self.nodes[a]
            down = 0 if a == LANE else n[2] if n[0] == "shr" and n[1] == LANE else None
            if down is not None and not ((1 << (self.bits[LANE] - down)) - 1) & ~m:
                return a
        return self._node(("and", a, m))

    def _select(self, n: tuple) -> bool:
        """Is the node ``n`` a column term of the lane id's top bit in a one-wave program (``sbit(l, lane_bits
        - 1) & L``), which LLVM makes a select (module docstring, "One wave")?"""
        return (self.one_wave and n[0] == "and"
                and self.nodes[n[1]] == ("sbit", LANE, self.bits[LANE] - 1))

    def _combine(self, terms: list[tuple[int, int]]) -> tuple[int, int]:
        """``(node, output bits)`` of the XOR of ``terms``: greedy groups of pairwise disjoint terms,
        each an OR chain (terms an OR cannot absorb first), the groups XOR'ed."""
        if len(terms) == 1:
            return terms[0]
        kinds, nodes, rdna = self._kinds, self.nodes, self.family == "rdna"
        fusable = lambda t: kinds[t[0]] == "shl" or (  # noqa: E731
            kinds[t[0]] == "and" and (rdna or _inline(nodes[t[0]][2])) and not self._select(nodes[t[0]]))
        groups: list[list] = []  # each [its terms' output bits, node of the OR chain so far]
        for t, out in sorted(terms, key=fusable):
            for g in groups:
                if not out & g[0]:  # disjoint from every term of the group
                    g[0] |= out
                    g[1] = self._node(("or", g[1], t))
                    break
            else:
                groups.append([out, t])
        acc, bits = None, 0
        for out, node in groups:
            acc = node if acc is None else self._node(("xor", acc, node))
            bits |= out
        return acc, bits

    # ------------------------------------------------------------------ counting
    def count(self) -> tuple[int, int]:
        """``(valu, salu)``: the ops of every node reached from a table, VALU where they depend on
        the lane id; a node that an OR/XOR absorbs (module docstring) is no instruction; on gfx9 one
        ``v_mov_b32`` per value of the non-inline constants of the ORs that absorbed one and of the selects
        of a one-wave program (module docstring, "One wave")."""
        ops, vector, kinds = self._ops, self._vec, self._kinds
        n = len(kinds)
        live = [False] * n
        for i in self.tables.values():
            live[i] = True
        for i in self.wrapped.values():
            live[i] = True
        uses = [0] * n
        order = []  # the live op nodes, parents first (a node's operands are older nodes)
        for i in range(n - 1, TID, -1):
            if live[i]:
                order.append(i)
                for a in ops[i]:
                    uses[a] += 1
                    live[a] = True
        gfx9 = self.family == "gfx9"
        absorbed = [False] * n
        literals = None  # gfx9: the non-inline constants of the ORs/XORs that absorbed an operand
        valu = salu = 0
        for i in order:  # parents first (LLVM selects from the root down): a node's absorber came before it
            if absorbed[i]:
                continue
            kind = kinds[i]
            if kind == "const":
                continue
            if not vector[i]:
                salu += 1
                continue
            valu += 1
            if gfx9 and kind == "and" and self._select(self.nodes[i]) and not _inline(self.nodes[i][2]):
                literals = literals or set()  # the select's constant in a VGPR (v_mov_b32, one per value)
                literals.add(self.nodes[i][2])
                continue
            if kind == "mul":
                if gfx9 and self.nodes[i][2] >= 1 << 24:
                    salu += 1  # v_mul_lo_u32 is VOP3: its constant in an SGPR (s_mov_b32)
                continue
            if kind != "or" and kind != "xor":
                continue
            a_ops = ops[i]
            if len(a_ops) == 2 and kinds[a_ops[1]] == kind and kinds[a_ops[0]] != kind:
                a_ops = a_ops[::-1]  # an operand of the same kind first
            for a in a_ops:
                if uses[a] == 1 and vector[a] and self._fuses(kind, self.nodes[a]):
                    absorbed[a] = True  # one VOP3 instruction with its parent
                    if gfx9:  # VOP3 takes no literal: each such constant in a VGPR (v_mov_b32)
                        for c in self.nodes[i][1:]:
                            if kinds[c] == "const" and not _inline(self.nodes[c][1]):
                                literals = literals or set()
                                literals.add(self.nodes[c][1])
                    break
        return valu + (len(literals) if literals else 0), salu

    def _fuses(self, pk: str, ck: tuple) -> bool:
        """Does an OR/XOR (kind ``pk``) absorb its operand, the node ``ck``?"""
        if pk == "or":
            if ck[0] in ("or", "shl"):
                return True
            if ck[0] == "and":  # v_and_or_b32 (LLVM seldom makes an OR of a product a v_mad_u32_u24)
                return (self.family == "rdna" or _inline(ck[2])) and not self._select(ck)
            return False
        return self.family == "rdna" and ck[0] == "xor"

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, node: int, num_warps: int) -> np.ndarray:
        """The node's value ``[num_warps, 2 ** lane_bits]`` (uint32 arithmetic, as int64)."""
        lane = np.arange(1 << self.bits[LANE], dtype=np.int64)[None, :]
        warp = np.arange(num_warps, dtype=np.int64)[:, None]
        memo: dict[int, np.ndarray] = {LANE: np.broadcast_to(lane, (num_warps, lane.shape[1])),
                                       WARP: np.broadcast_to(warp, (num_warps, lane.shape[1])),
                                       TID: lane + (warp << self.bits[LANE])}
        m32 = (1 << 32) - 1

        def val(i: int) -> np.ndarray:
            if i in memo:
                return memo[i]
            n = self.nodes[i]
            k = n[0]
            if k == "const":
                v = np.full((num_warps, lane.shape[1]), n[1] & m32, dtype=np.int64)
            elif k == "and":
                v = val(n[1]) & (n[2] & m32)
            elif k == "shl":
                v = (val(n[1]) << n[2]) & m32
            elif k == "shr":
                v = val(n[1]) >> n[2]
            elif k == "bfe":
                v = (val(n[1]) >> n[2]) & ((1 << n[3]) - 1)
            elif k == "mul":
                v = (val(n[1]) * n[2]) & m32
            elif k == "sbit":
                v = np.where((val(n[1]) >> n[2]) & 1, m32, 0)
            elif k == "or":
                v = val(n[1]) | val(n[2])
            else:
                v = val(n[1]) ^ val(n[2])
            memo[i] = v
            return v

        return val(node)


@caches.memoize("synth.lane_arith.thread_id_form", size=1 << 12)
def thread_id_form(family: str, lane_bits: int, aff: AffineTable) -> bool:
    """Whether the table ``aff`` (lane and warp columns) is built from the thread id alone: where it has
    both, its linear part on the thread id (``lane + (warp << lane_bits)``, whose columns are the lane and
    the warp columns) is one shift term (``(tid >> 1) & 56`` for lane bit 4 and warp bits 0-1 at address
    bits 3-5), and that term takes fewer instructions than its lane terms, warp terms and their join,
    each counted alone (``LaneProgram.count``; the choice is per table, not per graph, so that the
    planner's estimates and the lowering make the same one).  [I] One shift term: with more, the terms
    on the thread id lose the sharing that split tables have (each a term of the lane id and the warp
    id's SGPRs that the kernel's load line forms) and compiled to more on the wave32 corpus (74 of its
    cases 1-3 instructions more, 106 fewer: docs/benchmarks.md "Session 21: ww32_25")."""
    cols = aff.lane_cols + aff.warp_cols
    if (not any(aff.lane_cols) or not any(aff.warp_cols)
            or len({o - b for b, c in enumerate(cols) for o in _bits(c)}) > 1):
        return False
    split = LaneProgram(family, lane_bits, len(aff.warp_cols))
    split.add(aff)
    whole = LaneProgram(family, lane_bits, len(aff.warp_cols))
    whole._add(aff, builds=whole._thread_id_candidates)
    return sum(whole.count()) < sum(split.count())


#: [I] On RDNA targets LLVM puts an ``s_delay_alu`` before a VALU op that reads a recent VALU result;
#: the setup programs of the wave32 corpus have about one per this many of their ops.
RDNA_OPS_PER_DELAY = 6

#: [I] Instructions of a per-lane table that no GF(2)-affine map gives: the lowering reads it from a
#: constant array in global memory (the thread's index and one global load; its wait not counted).
TABLE_LOAD_OPS = 3


def lane_columns(rows: np.ndarray) -> list:
    """Per row of the int64 ``rows`` (``[tables, lanes]``, a power-of-two number of lanes) its map ``(c,
    L)`` with ``row[l] = c ^ XOR_{b: l_b = 1} L_b`` for every lane ``l``, or None where no such map
    gives the row (also for values outside 32 bits).  ``c`` is the row's lane 0 and ``L_b`` its lane
    ``2**b`` XOR ``c``; the map is checked on every lane at once."""
    lanes = rows.shape[1]
    bits = lanes.bit_length() - 1
    c = rows[:, :1]
    cols = rows[:, 1 << np.arange(bits)] ^ c  # [tables, bits]
    on = ((np.arange(lanes)[:, None] >> np.arange(bits)) & 1).astype(bool)  # [lanes, bits]
    fit = np.bitwise_xor.reduce(np.where(on[None], cols[:, None, :], 0), axis=2) ^ c
    ok = ((fit == rows) & (rows >= 0) & (rows < 1 << 32)).all(axis=1)
    return [(int(r[0]), tuple(int(v) for v in k)) if good else None
            for r, k, good in zip(c.tolist(), cols.tolist(), ok.tolist())]


@caches.memoize("synth.lane_arith.linear_columns", size=1 << 14)
def linear_columns(row: bytes) -> tuple[int, ...] | None:
    """The columns ``L`` with ``row[l] = XOR_{b: l_b = 1} L_b`` for every lane ``l`` of the int64 row given
    as its bytes (``row[0]`` is 0: a table XOR its lane 0, ``cost.addresses_valu``'s patterns), or None
    where no such map gives it or a column leaves 32 bits (``lane_columns``)."""
    r = np.frombuffer(row, dtype=np.int64).tolist()
    cols = []
    k = 1
    while k < len(r):  # lanes k .. 2k-1 are lanes 0 .. k-1 with bit log2(k) set
        col = r[k]
        if not 0 <= col < 1 << 32 or r[k:2 * k] != [v ^ col for v in r[:k]]:
            return None
        cols.append(col)
        k *= 2
    return tuple(cols)


class LaneTable(NamedTuple):
    """An entry of ``tables_valu``: the table ``const ^ XOR lane_cols[b] (bit b of l)`` of one program, and how
    the program builds it.  ``warp_cols``: where not empty, the table's warp columns too, which the
    program builds from the thread id with the lane part (``LaneProgram.add``'s ``thread_id``: an LDS
    address that ``thread_id_form`` takes so; its warp part then no warp-id ops); ``care``: where not
    None, the bits the table is read in alone (``LaneProgram.add``'s ``care``: a ``ds_bpermute`` address,
    ``bpermute_address_bits``).  A plain ``(const, lane_cols)`` is an entry with neither."""

    const: int
    lane_cols: tuple[int, ...]
    warp_cols: tuple[int, ...] = ()
    care: int | None = None


@caches.memoize("synth.lane_arith.tables_valu", size=1 << 14)
def tables_valu(family: str, lane_bits: int, tables: tuple, prior: tuple = (), one_wave: bool = False) -> int:
    """Instructions (VALU and SALU, ``LaneProgram.count``) of one program building the lane tables
    ``tables`` in this order: each a ``LaneTable`` (or its plain ``(const, lane_cols)``), or None for a
    table that is not affine (``TABLE_LOAD_OPS`` each).  A table without lane columns is uniform: one
    ``v_mov_b32`` into the VGPR a per-lane operand needs.  A table equal to the lane id costs nothing (``_lane_id``);
    each other table counts at least one (a table that is a term of an earlier one costs its own register), so that
    the count is at least ``least_tables_valu``: the planner's floors (linlayout.synth.lds_path) count one per new
    address register.  On RDNA the
    ``s_delay_alu`` LLVM adds, one per RDNA_OPS_PER_DELAY ops of the program.  ``prior``: affine
    tables ``(const, lane_cols)`` the program built before (the kernel's src load line's lane parts,
    linlayout.synth.src_offsets), not counted: their nodes are free terms of ``tables``.  ``one_wave``: the
    kernel is one wave (``LaneProgram``'s).  An entry
    of another length is a LayoutError (an internal input: its fields' types are not checked)."""
    prog = LaneProgram(family, lane_bits, 0, one_wave)
    for t in prior:
        prog.add_counted(AffineTable(t[0], t[1], ()))
    start = sum(prog.count()) if prior else 0
    total = 0
    before = start
    for t in tables:
        if t is None:
            total += TABLE_LOAD_OPS
            continue
        if not isinstance(t, LaneTable):
            if len(t) != 2:
                raise LayoutError(f"a tables_valu entry is a LaneTable or (const, lane_cols), not {t!r}")
            t = LaneTable(*t)
        if not any(t.lane_cols):
            total += 1
            continue
        now = prog.add_counted(AffineTable(t.const, t.lane_cols, t.warp_cols), thread_id=bool(t.warp_cols),
                               care=t.care)
        if not _lane_id(t):  # (the lane id's node is in the program, a term later tables share)
            total += max(now - before, 1)
        before = now
    return total + ((before - start) // RDNA_OPS_PER_DELAY if family == "rdna" else 0)


def least_tables_valu(tables: tuple) -> int:
    """A lower bound of ``tables_valu`` for ``tables`` on either family, without a program: each table
    counts at least one (``TABLE_LOAD_OPS`` one that is not affine; none the lane id, ``_lane_id``), the
    ``s_delay_alu`` none."""
    return sum(TABLE_LOAD_OPS if t is None else 0 if _lane_id(t) else 1 for t in tables)


def _lane_id(table) -> bool:
    """Is ``table`` (a ``tables_valu`` entry: a ``LaneTable`` or ``(const, lane_cols)``) the lane id itself, ``l``?
    Every kernel computes it for its memory ops (the thread id masked, in a kernel of any number of waves), and
    LLVM's CSE gives the table that register: no op.  [I] Compiled (session 24, fold31: gfx942 i8, two waves,
    an LDS store at byte ``l``: its address is the load line's ``v_and_b32 v, 63, v0``, none in the setup)."""
    if table is None:
        return False
    const, lane_cols = (table.const, table.lane_cols) if isinstance(table, LaneTable) else table
    return (not const and lane_cols == tuple(1 << b for b in range(len(lane_cols)))
            and not any(getattr(table, "warp_cols", ())))


def row_table(row: np.ndarray, defined: np.ndarray | None = None):
    """``tables_valu``'s entry for warp 0's per-lane ``row``: ``(const, lane_cols)`` (only the
    ``defined`` lanes need to match), None where no affine map gives it."""
    if defined is None:
        return lane_columns(row[None, :])[0]
    aff = fit_affine(row[None, :], defined[None, :])
    return None if aff is None else (aff.const, aff.lane_cols)
