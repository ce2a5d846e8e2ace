"""Shared-memory (LDS) layout synthesis: widest vectors first, then fewest bank cycles.

Given a writer ``W`` and a reader ``R`` (distributed layouts ``register, lane,
warp -> tensor`` over the same tensor), choose the shared layout ``S: offset ->
tensor`` through which ``W`` stores and ``R`` loads the tile.  Tensor
coordinates are flattened to an ``n``-bit vector (first out dim least
significant); ``S`` is an ordered basis ``(s_0, .., s_{n-1})`` of the tensor
space, ``s_i`` being the tensor vector of offset bit ``i``.

**Offset bits.**  With ``b``-bit elements, offset bit ``i`` is dword-address bit
``i + log2 b - 5``: bits below that are *sub-dword* (``Z``), the next
``log2 banks`` bits choose the *bank*, the rest (``Row``, ``r`` bits) the row.

**Vector width.**  A side moves ``2**k`` elements per lane per instruction when
``s_0..s_{k-1}`` are its register vectors (a lane's elements are contiguous;
registers may be renamed) -- or, for a transpose read (gfx950, gfx1250), its first ``k``
lane vectors -- and every other column of the side is *aligned* (has no
component on ``s_0..s_{k-1}``).  The shorter vector is a prefix of the longer,
so it is a set of common register vectors and the longer adds register vectors
of its side.  We enumerate every prefix ``P = (s_0..s_{p-1})`` built from any set
of the common register vectors, then any set of one side's other register vectors
(once per choice of those below the dword, the shorter side's footprint), or the
reader's transpose lanes, then sub-dword fill vectors taken from the layouts'
bases, with every pair of vector lengths they allow (``_prefixes``).  The pair
needing the fewest instructions per wave wins ("maximise vector width").

**Cycles.**  For an instruction of side ``s`` with phase subspace ``K`` (lane
differences served together), the lanes of one phase touch the tensor vectors
``M_s = s(K) + V_s + Z`` (lane footprint + the lane's own vector + sub-dword
bits).  Two of them share a bank in different rows exactly when they differ by
a vector of ``Row``, so (as in linlayout.synth.banks, in tensor coordinates) every phase
costs ``2 ** dim(Row ∩ M_s)`` cycles.  Alignment confines the non-prefix bits
to ``Hc``, the intersection of both sides' aligned subspaces, so ``Row ⊆ Hc``
and for *any* layout with this prefix

    dim(Row ∩ M_s) >= r + dim(M_s ∩ Hc) - dim(Hc)            (dimension count)

which gives the lower bound ``LB = sum_s I_s * phases_s * 2**max(0, ...)``.  The
row vectors are then chosen greedily, each one outside ``span(P, Row so far)``
and, whenever possible, outside ``M_s + Row`` for both sides (so the
intersection does not grow).  Over GF(2) a vector space is never the union of
two proper subspaces, so as long as the prefix constraint leaves room this
succeeds and ``LB`` is met; the result carries ``optimal=True`` exactly when
the verified cycle count (exact analysis by linlayout.synth.lds_access) equals ``LB``.
Everything is "optimal under the model": the cycle model and the phase
groupings of linlayout.hw.lds, some of which are named [I] assumptions.
"""

from __future__ import annotations

import heapq
import random
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cache, cached_property
from itertools import chain, combinations, islice, permutations
from typing import Callable, NamedTuple, Sequence, Union

import numpy as np

from linlayout import LayoutError, LinearLayout, caches, f2
from linlayout.encodings.padded import PaddedLayout, padded_shared
from linlayout.hw.lds import OP_SHAPES, LdsModel, LdsOp, lds_model
from linlayout.hw.limits import check_synthesis
from linlayout.hw.targets import TARGETS
from linlayout.hw.transpose_loads import TransposeLoad, transpose_load

from . import cost as cost_mod
from .lds_access import TileAccessReport, access_report, tile_access_report

__all__ = ["NoSharedLayout", "OBJECTIVES", "PaddingOption", "SwizzleResult", "padding_options", "shared_basis",
           "shared_bytes", "synthesize"]


class NoSharedLayout(LayoutError):
    """The writer and reader have no shared layout of the kind asked, a fact of the valid input (none a
    bug): no set of register vectors common to both sides can be the rounds the budget needs
    (``_rep_choices``), or no layout lets both sides use an LDS instruction (the search's alignment:
    ``_no_layout``; ``transpose_only`` and no transpose read fits).  Its callers may take another way
    (linlayout.synth.lds_path.shared_layout: its own layouts); every other LayoutError of the synthesis is
    bad input or a bug and propagates."""

#: The plain (one address per lane, no transpose) LDS op of each ISA, direction and width in bytes.
_PLAIN_OPS = {
    "amdgcn": {
        "read": {1: "ds_read_u8", 2: "ds_read_u16", 4: "ds_read_b32", 8: "ds_read_b64", 16: "ds_read_b128"},
        "write": {1: "ds_write_b8", 2: "ds_write_b16", 4: "ds_write_b32", 8: "ds_write_b64", 16: "ds_write_b128"},
    },
    "ptx": {direction: {n: f"{verb}.shared.b{8 * n}" for n in (1, 2, 4, 8, 16)}
            for verb, direction in (("ld", "read"), ("st", "write"))},
}
_MAX_COMBOS = 64  # cap on subsets tried per prefix slot


@dataclass
class SwizzleResult:
    """A synthesized shared layout and its cost for one wave.

    ``shared``: in dim ``offset`` (and ``reps`` when the tile moves in rounds)
    -> the tensor's dims.  Counts are per wave over all rounds: ``*_instructions``
    LDS instructions, ``*_cycles`` their bank cycles, ``ideal_cycles`` the
    conflict-free cycles of the chosen instructions, ``lower_bound_cycles`` the
    bound no layout with these instructions beats under the model.
    """

    shared: LinearLayout
    arch: str
    element_bits: int
    write_op: str
    read_op: str
    write_vec: int
    read_vec: int
    write_instructions: int
    read_instructions: int
    write_cycles: int
    read_cycles: int
    ideal_cycles: int
    lower_bound_cycles: int
    reps: int
    lds_bytes: int
    fits_in_lds: bool
    write_report: TileAccessReport
    read_report: TileAccessReport
    argument: str = ""
    candidates_considered: int = 0
    certified: bool = False
    objective: str = "vector"
    pareto: list[dict] = field(default_factory=list)

    @property
    def total_cycles(self) -> int:
        return self.write_cycles + self.read_cycles

    @property
    def optimal(self) -> bool:
        """True when the verified cycles meet the lower bound for these instructions."""
        return self.total_cycles == self.lower_bound_cycles

    @property
    def instructions(self) -> list[str]:
        return [self.write_op, self.read_op]

    def to_json(self) -> dict:
        return {
            "shared": self.shared.to_json(), "arch": self.arch, "element_bits": self.element_bits,
            "write_op": self.write_op, "read_op": self.read_op, "write_vec": self.write_vec,
            "read_vec": self.read_vec, "write_instructions": self.write_instructions,
            "read_instructions": self.read_instructions, "write_cycles": self.write_cycles,
            "read_cycles": self.read_cycles, "total_cycles": self.total_cycles,
            "ideal_cycles": self.ideal_cycles, "lower_bound_cycles": self.lower_bound_cycles,
            "optimal": self.optimal, "reps": self.reps, "lds_bytes": self.lds_bytes,
            "fits_in_lds": self.fits_in_lds, "argument": self.argument,
            "candidates_considered": self.candidates_considered, "certified": self.certified,
            "objective": self.objective, "pareto": self.pareto,
        }

    def modelled(self) -> dict:
        """Every conversion objective's value (linlayout.synth.cost.round_trip_cost) of this round
        trip: ``{"concurrent": cycles, "latency": cycles, "throughput": cycles, "instructions": n}``."""
        sides = []
        for report, count in ((self.write_report, self.write_instructions), (self.read_report, self.read_instructions)):
            degree = report.total_cycles / max(1, report.ideal_cycles)
            sides.append((count, OP_SHAPES[report.choice.op].bytes_per_lane, degree))
        parts = cost_mod.round_trip_cost(cost_mod.cost_model(self.arch), sides)
        return {o: parts[f"{o}_value"] for o in cost_mod.OBJECTIVES}

    def pareto_point(self) -> dict:
        """This layout as a point of a Pareto set: instructions, bank cycles, the instructions used and,
        when the LDS model is a target's (the conversion cost model knows only targets; not e.g. the
        ``generic`` model of Triton's tests), the modelled objectives (``modelled``)."""
        point = {"instructions": self.write_instructions + self.read_instructions, "cycles": self.total_cycles,
                 "write_op": self.write_op, "read_op": self.read_op}
        if self.arch in TARGETS:
            point["modelled"] = self.modelled()
        return point


# ------------------------------------------------------------------ sides
@dataclass
class _Side:
    direction: str
    given: LinearLayout  # broadcast registers and rep registers removed, out dims in the writer's order
    regs: list[int]
    lanes: list[int]
    warps: list[int]
    span: f2.Span  # of all its columns (read only)
    reg_index: dict[int, int]  # register vector -> its (last) register bit (read only)

    @cached_property
    def layout(self) -> LinearLayout:
        """``given`` without its block dim (of size 1, checked by ``_normalize``)."""
        return self.given.squeeze_ins("block") if self.given.has_in_dim("block") else self.given


@dataclass
class _Mode:
    """How one side moves the tile for a given prefix."""

    op: LdsOp
    k: int  # vector bits
    vector: list[int]  # tensor vectors of the lane's elements (V_s)
    src_lanes: list[int]  # tensor vector of each (source) lane bit
    others: list[int]  # all other columns of the side (must be aligned)
    instructions: int  # per round
    others_pivots: tuple[f2.Span, tuple[int, ...]] | None = None  # span(others), image basis: _aligned_space

    @property
    def cost(self) -> int:
        """Conflict-free cycles per round."""
        return self.instructions * self.op.num_phases


@dataclass
class _Candidate:
    prefix: list[int]
    write: _Mode
    read: _Mode
    h_w: tuple[int, ...]  # the sides' aligned spaces
    h_r: tuple[int, ...]
    m_w: list[int]
    m_r: list[int]
    m_plus_hc: tuple[int, int]  # dim(M_s + Hc) per side
    lb: int
    fill: int
    key: tuple = field(default_factory=tuple)

    @cached_property
    def hc(self) -> list[int]:
        """A basis of ``Hc = H_w ∩ H_r`` (the bank and row vectors are drawn from it)."""
        return f2.intersection(self.h_w, self.h_r)

    @cached_property
    def hc_reduced(self) -> list[int]:
        """The reduced basis of ``Hc``, spanned by ``H_s`` of the longer vector (a candidate's lies in
        the other ``H_s``)."""
        return _reduced(self.h_w if self.write.k >= self.read.k else self.h_r)


def _flat_columns(layout: LinearLayout) -> dict[str, list[int]]:
    """The flattened tensor vector of every bit of each in dim (the layout's columns, per dim)."""
    cols, out, start = layout.columns(), {}, 0
    for name, size in layout.in_dims:
        k = size.bit_length() - 1
        out[name] = list(cols[start:start + k])
        start += k
    return out


def _normalize(layout: LinearLayout, outs: list[tuple[str, int]], what: str, wave: int) -> LinearLayout:
    if not isinstance(layout, LinearLayout):
        raise LayoutError(f"{what}: expected a LinearLayout")
    for d in layout.in_dim_names:
        if d not in ("register", "lane", "warp", "block"):
            raise LayoutError(f"{what}: unknown in dim {d!r} (expected register, lane, warp, block)")
    if "lane" not in layout.in_dim_names or layout.in_dim_size("lane") != wave:
        raise LayoutError(f"{what}: in dim 'lane' must have the wave size {wave}")
    if layout.has_in_dim("block") and layout.in_dim_size("block") > 1:
        raise LayoutError(f"{what}: in dim 'block' must have size 1 (AMD LDS is per workgroup)")
    if sorted(layout.out_dims) != sorted(outs):
        raise LayoutError(f"{what}: out dims {layout.out_dims} differ from the writer's {outs}")
    names = [o for o, _ in outs]
    out = layout  # a block dim (of size 1) is dropped by _Side.layout, when needed
    if out.out_dim_names != names:
        out = out.transpose_outs(names)
    if 0 in _flat_columns(out).get("register", ()):  # a broadcast register (all of its basis is 0)
        out = out.remove_zero_bases_along_dim("register")
    return out


def _side(direction: str, layout: LinearLayout) -> _Side:
    """The side of ``layout`` (normalized; a block dim of size 1 adds no columns)."""
    cols = _flat_columns(layout)
    regs, lanes, warps = cols.get("register", []), cols.get("lane", []), cols.get("warp", [])
    return _Side(direction, layout, regs, lanes, warps, f2.Span(regs + lanes + warps),
                 {v: j for j, v in enumerate(regs)})


def _drop_registers(side: _Side, vectors: Sequence[int]) -> _Side:
    """The side with the register bits whose vectors are in ``vectors`` removed (one round)."""
    if not vectors:
        return side
    drop = set(vectors)
    keep = [b for b, v in zip(side.layout.bases["register"], side.regs) if v not in drop] \
        if side.layout.has_in_dim("register") else []
    bases = {d: side.layout.bases[d] for d in side.layout.in_dim_names}
    if "register" in bases:
        bases["register"] = keep
    lay = LinearLayout(bases, side.layout.out_dims)
    return _side(side.direction, lay)


# ------------------------------------------------------------------ modes
class _Plain(NamedTuple):
    """A side's plain (not transpose) way to move the tile for a prefix, its mode not built yet:
    the first ``k`` prefix vectors are the lane's elements, moved by ``op``."""

    k: int
    op: LdsOp
    instructions: int  # per round

    @property
    def cost(self) -> int:
        """Conflict-free cycles per round (its mode's ``cost``)."""
        return self.instructions * self.op.num_phases


def _plain_widths(side: _Side, model: LdsModel, element_bits: int) -> list[_Plain]:
    """Every vector length ``k`` the side's plain ops allow, shortest first: ``2**k`` elements are
    1 to 16 bytes and the model has the op (a prefix allows those whose ``prefix[:k]`` are
    register vectors of the side: ``_vector_bits``)."""
    maxbits = (128 // element_bits).bit_length() - 1
    kmin = max(0, 3 - (element_bits.bit_length() - 1))
    ops = {n: name for isa in model.isas for n, name in _PLAIN_OPS[isa][side.direction].items()}
    return [_Plain(k, model.ops[ops[(element_bits << k) // 8]], 1 << (len(side.regs) - k))
            for k in range(kmin, min(maxbits, len(side.regs)) + 1)
            if ops.get((element_bits << k) // 8) in model.ops]


def _widths_upto(widths: list[_Plain], maxbits: int) -> list[list[_Plain]]:
    """For each ``kmax`` in ``0..maxbits``, the widths with ``k <= kmax`` (``widths`` shortest first,
    as ``_plain_widths`` lists them: each is a head of it)."""
    ks = [x.k for x in widths]
    return [widths[:bisect_right(ks, kmax)] for kmax in range(maxbits + 1)]


def _vector_bits(regs: set[int], prefix: list[int], maxbits: int) -> int:
    """The most vector bits a side with register vectors ``regs`` can move for this prefix: its
    first prefix vectors that are register vectors (at most ``maxbits``)."""
    k, most = 0, min(len(prefix), maxbits)
    while k < most and prefix[k] in regs:
        k += 1
    return k


def _plain_mode(side: _Side, prefix: list[int], width: _Plain) -> _Mode:
    """The mode of a plain width: the lane's vector ``prefix[:k]`` (register bits), the other
    register bits, the lanes and the warps must be aligned."""
    vector = prefix[:width.k]
    vec_idx = {side.reg_index[v] for v in vector}
    others = [v for j, v in enumerate(side.regs) if j not in vec_idx] + side.lanes + side.warps
    return _Mode(width.op, width.k, vector, list(side.lanes), others, width.instructions)


def _transpose_reads(model: LdsModel, element_bits: int) -> list[tuple[LdsOp, TransposeLoad]]:
    """The model's 8- and 16-byte transpose loads of ``element_bits``-bit elements (gfx950's
    ``ds_read_b64_tr_b*``, gfx1250's ``ds_load_tr*``; not the 12-byte ``ds_read_b96_tr_b6``), each
    with its lane map (linlayout.hw.transpose_loads), in the model's order."""
    out = []
    for op in model.ops.values():
        if op.direction == "read" and op.shape.transpose_bits == element_bits and op.bytes_per_lane in (8, 16):
            load = transpose_load(model.wave_size, element_bits, op.bytes_per_lane, among=(op.name,))
            if load is not None:
                out.append((op, load))
    return out


def _transpose_modes(side: _Side, prefix: list[int], reads: list[tuple[LdsOp, TransposeLoad]]) -> list[_Mode]:
    """The side's transpose-read modes for this prefix (``reads``: ``_transpose_reads``): the
    prefix starts with its first ``k`` lane vectors (``k = load.vector_bits``), and each choice of
    ``k`` register bits feeds the transposed lanes, the address lanes moving the tensor vectors
    ``TransposeLoad.source_columns`` names."""
    modes = []
    for op, load in reads:
        k = load.vector_bits
        if len(prefix) < k or prefix[:k] != side.lanes[:k] or len(side.regs) < k:
            continue
        others = list(side.regs) + side.lanes[k:] + side.warps
        choices = list(permutations(range(len(side.regs)), k))
        if len(choices) > 24:
            choices = list(combinations(range(len(side.regs)), k))
        for jbits in choices:
            src = load.source_columns(side.lanes, [side.regs[j] for j in jbits])
            modes.append(_Mode(op, k, side.lanes[:k], src, others, 1 << (len(side.regs) - k)))
    return modes


def _footprint(mode: _Mode) -> list[int]:
    return [f2.apply_columns(mode.src_lanes, x) for x in mode.op.phase_subspace()]


# ------------------------------------------------------------------ prefixes
def _sub_dword_heads(vectors: list[int], head: int) -> list[list[int]]:
    """``vectors`` in one order per set of ``head`` of them placed first (the rest keep their order):
    the orders that differ in which vectors fall below offset bit ``head``."""
    if head <= 0 or head >= len(vectors):
        return [vectors]
    return [list(first) + [v for v in vectors if v not in first] for first in combinations(vectors, head)]


def _combos(items: list[int], size: int) -> list[tuple[int, ...]]:
    """The first ``_MAX_COMBOS`` subsets of ``size`` items, in ``itertools.combinations`` order."""
    return list(islice(combinations(items, size), _MAX_COMBOS))


def _every_length_seeds(w: _Side, r: _Side, model: LdsModel, element_bits: int, allow_transpose: bool,
                        common: list[int], only_w: list[int], only_r: list[int], maxbits: int
                        ) -> list[tuple[list[int], None]]:
    """The seeds of ``_prefixes`` tried at every length: the most common register vectors that fit,
    each extended by one side's own register vectors, and the reader's transpose lanes, each
    extended by the writer's register vectors (``common``, ``only_w``, ``only_r``: the register
    vectors of both sides, of the writer only, of the reader only; ``maxbits``: log2 of the most
    elements a lane's access holds)."""
    seeds: list[tuple[list[int], None]] = []
    c = min(len(common), maxbits)
    for cs in _combos(common, c):
        seeds.append((list(cs), None))
        for extra in (only_w, only_r):
            for j in range(1, min(len(extra), maxbits - c) + 1):
                for es in _combos(extra, j):
                    seeds.append((list(cs) + list(es), None))
    if allow_transpose:
        for k in (load.vector_bits for _, load in _transpose_reads(model, element_bits)):
            base = r.lanes[:k]
            if len(base) == k and f2.rank(base) == k:
                seeds.append((list(base), None))
                if all(v in w.regs for v in base):
                    ext = [v for v in w.regs if v not in set(base)]
                    for j in range(1, min(len(ext), maxbits - k) + 1):
                        for es in _combos(ext, j):
                            seeds.append((list(base) + list(es), None))
    return seeds


def _no_lengths(lengths: tuple[int, int]) -> bool:
    """The ``keep_lengths`` of ``_prefixes`` that keeps no pair: only the prefixes tried at every
    length (their list skips the loop over the pairs)."""
    return False


def _new_fixed_lengths(w: _Side, r: _Side, element_bits: int) -> Callable[[tuple[int, int]], bool]:
    """Whether the list of ``_prefixes`` may hold a prefix of fixed vector lengths ``(writer,
    reader)`` that is not one tried at every length.  Those of ``c = min(lengths)`` common vectors
    for ``c`` below the most that fit (``c0``) may; at ``c0`` both sides' vectors are the ones tried
    at every length (the first ``_MAX_COMBOS`` sets of ``c0`` common vectors, then the longer side's
    own vectors), so only another order of the longer side's vectors below the dword is new: when
    it adds ``j`` of them and ``0 < (sub-dword bits) - c0 < j`` (``_sub_dword_heads``)."""
    maxbits = (128 // element_bits).bit_length() - 1
    zb = max(0, 5 - (element_bits.bit_length() - 1))
    rset = set(r.regs)
    c0 = min(sum(v in rset for v in w.regs), maxbits)

    def new(lengths: tuple[int, int]) -> bool:
        c = min(lengths)
        return c < c0 or (c == c0 and 0 < zb - c0 < max(lengths) - c)
    return new


def _prefixes(w: _Side, r: _Side, model: LdsModel, element_bits: int, allow_transpose: bool,
              keep_lengths: Callable[[tuple[int, int]], bool] | None = None,
              every_length: list[tuple[list[int], int, None]] | None = None, lead: list[int] | None = None
              ) -> list[tuple[list[int], int, tuple[int, int] | None]]:
    """Candidate prefixes ``(vectors of offset bits 0..p-1, number of sub-dword fill vectors, vector
    lengths (writer, reader) or None for every length the prefix allows)``; every vector of both
    sides lies in the offset space (the writer's span; ``_search`` checks the reader).

    First every common register vector that fits (the shorter vector's usual choice) and the
    reader's transpose lanes, each extended by one side's register vectors, at every length; then
    every other pair of vector sets at exactly its lengths: the shorter vector any set of common
    register vectors (alignment may forbid a larger one), the longer one adding any set of its side's
    other register vectors, once per choice of those below the dword (the shorter side's footprint
    holds them).

    ``keep_lengths``: which of the pairs of vector lengths of the other pairs of vector sets to expand
    (default all; a prefix left out is left out with every later one of the same lengths, so the
    prefixes kept are those of the full list that remain, in its order).

    ``every_length``: the prefixes tried at every length, when already listed (this function's
    answer with ``keep_lengths`` keeping no pair): the answer starts with them as they are, and
    only the prefixes of fixed lengths are listed after them.

    ``lead``: only the prefixes starting with these vectors (in the full list's order).  A seed
    that does not agree with ``lead`` is not extended: none of its prefixes starts with it, so
    none of them is one that a later seed's prefix repeats."""
    maxbits = (128 // element_bits).bit_length() - 1
    zb = max(0, 5 - (element_bits.bit_length() - 1))
    rset, wset = set(r.regs), set(w.regs)
    common = [v for v in w.regs if v in rset]
    only_w = [v for v in w.regs if v not in rset]
    only_r = [v for v in r.regs if v not in wset]
    seeds: list[tuple[list[int], tuple[int, int] | None]] = []
    if every_length is None:
        seeds = _every_length_seeds(w, r, model, element_bits, allow_transpose, common, only_w, only_r, maxbits)
    kept = keep_lengths or (lambda lengths: True)
    for c in range(min(len(common), maxbits), -1, -1) if kept is not _no_lengths else ():
        # the lengths kept with c common vectors (the longer side's j more), looked up once per c
        same = kept((c, c))
        longer_js = []
        for side in (w, r):
            every_j = [(j, (c + j, c) if side is w else (c, c + j)) for j in range(1, maxbits - c + 1)]
            longer_js.append((side, [(j, lengths) for j, lengths in every_j if kept(lengths)]))
        if not same and not any(js for _, js in longer_js):
            continue
        for cs in _combos(common, c):
            if same:
                seeds.append((list(cs), (c, c)))
            for longer, js in longer_js:
                if not js:
                    continue
                extra = [v for v in longer.regs if v not in cs]
                for j, lengths in js:
                    if j > len(extra):
                        break
                    for es in _combos(extra, j):
                        seeds += [(list(cs) + head, lengths) for head in _sub_dword_heads(list(es), zb - c)]
    if lead is not None:
        seeds = [(seed, lengths) for seed, lengths in seeds if seed[:len(lead)] == lead[:len(seed)]]
    out = list(every_length or [])
    if not seeds:
        return out
    fill_pool = [v for v in dict.fromkeys(w.regs + w.lanes + w.warps + r.regs + r.lanes + r.warps) if v]
    fills_of: dict[tuple, list[tuple[int, ...]]] = {}  # a seed's fills depend on its set of vectors only
    seen = {(tuple(p), None) for p, _, _ in out}
    for seed, lengths in seeds:
        vectors = (frozenset(seed), len(seed))
        fills = fills_of.get(vectors)
        if fills is None:
            spanned = f2.Span(seed)
            need = zb - len(seed)
            if spanned.rank != len(seed):
                fills = []  # dependent (or repeated) seed vectors
            elif need <= 0:
                fills = [()]
            else:
                fills = _combos([v for v in fill_pool if not spanned.contains(v)], need)
            fills_of[vectors] = fills
        for fill in fills:
            p = seed + list(fill)
            if lead is not None and p[:len(lead)] != lead:
                continue
            key = tuple(p)
            # one fill vector is independent of the seed (the pool's are): more need a check; a prefix
            # already taken at every length needs no single lengths
            if ((key, None) not in seen and (key, lengths) not in seen
                    and (len(fill) < 2 or f2.rank(p) == len(p))):
                seen.add((key, lengths))
                out.append((p, len(fill), lengths))
    return out


# ------------------------------------------------------------------ algebra helpers
def _aligned_space(mode: _Mode, prefix: list[int], n_off: int, completion: list[int] | None) -> tuple[int, ...] | None:
    """A basis of ``H_s``: a complement of ``V_s`` (in the ``n_off``-dim offset space) containing
    every other column of the side and the prefix bits above its vector; None if impossible.

    ``completion``: None when the side's columns span the offset space.  Then ``V_s`` and the
    other columns span it, so the pivots ``rest`` of the other columns (and the prefix above
    ``V_s``) are a complement of ``V_s`` exactly when there are ``n - k`` of them (else some column
    leans on ``V_s``), and nothing needs completing.  Else a basis of the offset space to complete
    ``H_s`` from."""
    if completion is None:  # the pivots of the other columns (once per mode), then those of the prefix
        if mode.others_pivots is None:
            span = f2.Span()
            mode.others_pivots = (span, tuple(x for x in mode.others if span.insert(x)))
        span, rest = mode.others_pivots
        need = n_off - mode.k
        tail = prefix[mode.k:]
        if len(rest) == need:  # then the prefix adds no pivot, or one too many
            return rest if all(map(span.contains, tail)) else None
        if tail and len(rest) < need:
            span = span.copy()
            rest += tuple(x for x in tail if span.insert(x))
        return rest if len(rest) == need else None
    rest, own, every = [], f2.Span(), f2.Span(mode.vector)
    for x in mode.others + prefix[mode.k:]:
        if own.insert(x):  # a pivot of the other columns (their image basis, in order)
            if not every.insert(x):
                return None  # some column has a component on the vector bits: misaligned
            rest.append(x)
    ext = []
    for c in completion:  # independent: once every.rank is their number, nothing more is kept
        if every.rank == n_off:
            break
        if every.insert(c):
            ext.append(c)
    return tuple(rest + ext)


def _reduced(basis: Sequence[int]) -> list[int]:
    """The reduced row echelon basis of ``span(basis)`` (a canonical basis of the space)."""
    return f2.rref_rows(basis, max(basis, default=0).bit_length())[0]


def _low_weight(red: list[int], max_weight: int = 3) -> list[int]:
    """XOR-combinations of up to ``max_weight`` vectors of the reduced basis ``red`` (``_reduced``),
    lightest (popcount) first, then by value (distinct: ``red`` is independent)."""
    if max_weight == 1 or not red:
        return sorted(red, key=lambda x: (x.bit_count(), x))
    rows = np.array([*red, 0], dtype=np.int64)
    picks = _subsets(len(red), max_weight)
    vals = rows[picks[0]]
    for pick in picks[1:]:
        vals ^= rows[pick]
    vals.sort()
    return vals[np.argsort(np.bitwise_count(vals), kind="stable")].tolist()


@caches.memoize("synth.swizzle.subsets", table=True)
def _subsets(n: int, max_weight: int) -> tuple[np.ndarray, ...]:
    """Every non-empty subset of ``range(n)`` of at most ``max_weight`` elements, as ``max_weight``
    index arrays (the ``j``-th element of each subset; ``n``, a zero row, where it has fewer).
    Depends on the sizes only."""
    subsets = [c + (n,) * (max_weight - w) for w in range(1, min(max_weight, n) + 1)
               for c in combinations(range(n), w)]
    return tuple(np.array(subsets, dtype=np.intp).reshape(-1, max_weight).T.copy())


def _sum_dim(m: list[int], hc: f2.Span) -> int:
    """``dim(M + Hc)`` for a basis ``m`` of M and the span of Hc: ``dim Hc`` plus the rank of ``m``
    modulo Hc."""
    return hc.rank + f2.rank([hc.reduce(x) for x in m])


def _lb_exponent(dim_m: int, dim_sum: int, r: int) -> int:
    """``max(0, r + dim(M ∩ Hc) - dim Hc)``, i.e. ``max(0, r + dim M - dim(M + Hc))``."""
    return max(0, r + dim_m - dim_sum)


# ------------------------------------------------------------------ construction
def _choose_rows(cand: _Candidate, r: int, rng: Callable[[], random.Random]) -> tuple[list[int], list[int]]:
    """Greedy row vectors (see module doc) -> (rows, exponents [e_w, e_r]).

    Every row vector lies in ``Hc``, so ``dim(M_s + Hc)`` never changes: ``Hc ⊆ M_s`` (every
    further row costs side ``s`` a doubling) exactly when ``dim M_s`` has reached it.  A pool
    vector found in ``span(P, Row)`` stays there, so it leaves the pool."""
    taken = f2.Span(cand.prefix)
    m_w, m_r = f2.Span(cand.m_w), f2.Span(cand.m_r)
    full = cand.m_plus_hc
    costs = [cand.write.cost, cand.read.cost]
    e = [0, 0]
    rows: list[int] = []
    pool = _low_weight(cand.hc_reduced)
    in_taken, in_m_w, in_m_r = taken.contains, m_w.contains, m_r.contains
    for _ in range(r):
        c_w, c_r = costs[0] << e[0], costs[1] << e[1]
        ideal = (c_w if m_w.rank == full[0] else 0) + (c_r if m_r.rank == full[1] else 0)
        best = None
        gone = []  # pool positions in span(P, Row)
        for i, x in enumerate(chain(pool, _random_vectors(cand, rng))):
            if in_taken(x):
                gone.append(i)
                continue
            in_w = in_m_w(x)
            if best is not None and (c_w if in_w else 0) >= best[0]:
                continue  # it cannot cost less than the best so far (which costs more than the least)
            d = (in_w, in_m_r(x))
            delta = (c_w if d[0] else 0) + (c_r if d[1] else 0)
            if best is None or delta < best[0]:
                best = (delta, x, d, i)
            if delta == ideal:
                break
        if best is None:
            raise LayoutError("internal: no row vector outside the prefix (offset space too small)")
        _, x, d, i = best
        rows.append(x)
        taken.insert(x)
        m_w.insert(x)
        m_r.insert(x)
        e[0] += d[0]
        e[1] += d[1]
        for j in sorted(gone + [i], reverse=True):
            if j < len(pool):
                del pool[j]
    return rows, e


def _random_vectors(cand: _Candidate, rng: Callable[[], random.Random], extra: int = 512):
    """Random non-zero vectors of ``Hc`` (XORs of subsets of the basis ``cand.hc``; it and the
    generator ``rng()`` are made only when the first is drawn)."""
    hc, gen = cand.hc, rng()
    for _ in range(extra):
        x = 0
        for h in hc:
            if gen.random() < 0.5:
                x ^= h
        if x:
            yield x


def _unflatten(v: int, outs: list[tuple[str, int]]) -> list[int]:
    comps, sh = [], 0
    for _, s in outs:
        k = s.bit_length() - 1
        comps.append((v >> sh) & (s - 1))
        sh += k
    return comps


# ------------------------------------------------------------------ public API
def shared_bytes(shared: Union[LinearLayout, PaddedLayout], element_bits: int) -> int:
    """LDS bytes a shared layout occupies (padded: up to its last element; ``reps``
    rounds reuse the same bytes)."""
    if isinstance(shared, PaddedLayout):
        return (shared.footprint * element_bits + 7) // 8
    return (shared.in_dim_size("offset") * element_bits + 7) // 8


SEARCH_OBJECTIVES = ("vector", "cycles")
#: Every objective ``synthesize`` takes: its own two, and the conversion planner's (linlayout.synth.cost).
OBJECTIVES = SEARCH_OBJECTIVES + cost_mod.OBJECTIVES


def synthesize(writer: LinearLayout, reader: LinearLayout, element_bits: int, arch: Union[str, LdsModel], *,
               lds_budget_bytes: int | None = None, allow_transpose: bool = True, objective: str = "vector",
               seed: int = 0, transpose_only: bool = False, enumerate_all: bool = True,
               pareto: bool = True) -> SwizzleResult:
    """The shared layout for ``writer`` -> LDS -> ``reader`` that first minimises the number
    of LDS instructions (widest vectors) and then the bank cycles of writes plus reads.

    ``lds_budget_bytes``: LDS the tile may occupy at once (default: the target's LDS, which it may not
    exceed; ``linlayout.hw.limits``); if the tile does not fit, register bits common to both
    sides become an in dim ``reps`` of the shared layout (Triton's reps): the
    tile then moves in ``2**len(reps)`` rounds through ``lds_bytes`` bytes.
    ``allow_transpose``: consider the transpose loads (gfx950's ``ds_read_b64_tr_*``, gfx1250's ``ds_load_tr*``) for the reader;
    ``transpose_only``: consider nothing else (a LayoutError when no transpose read fits).
    ``objective``: ``"vector"`` (default: fewest LDS instructions, i.e. widest vectors, then
    fewest cycles), ``"cycles"`` (fewest bank cycles, then fewest instructions), or a conversion
    objective (linlayout.synth.cost.OBJECTIVES): the point of the Pareto set ranked first under it by
    ``CostModel.best_of``: the least rank value of its round trip's modelled value and LDS instructions,
    near ties to fewer instructions.  The planner ranks whole plans otherwise (``CostModel.best_plan``:
    under ``concurrent`` bank-conflict cycles weigh ``1 + conflict_weight`` times, and on CDNA near ties
    count the LDS passes conflicts add), so between conflicted points it may pick another; ``instructions``
    is ``vector``.
    ``pareto``: also find the Pareto set of (instructions, cycles) over the layouts (``_pareto_set``)
    and report it as ``SwizzleResult.pareto`` (fewest instructions first).
    ``enumerate_all=False`` (objective "vector"): a choice is looked at only when it may beat the
    best found (none with more LDS instructions than a valid one) -- the same layout,
    ``candidates_considered`` then counting only the valid choices looked at.
    """
    if objective not in OBJECTIVES:
        raise LayoutError(f"objective {objective!r} must be one of {', '.join(OBJECTIVES)}")
    lds_budget_bytes = check_synthesis(writer, reader, element_bits, arch, lds_budget_bytes)
    model, outs, w, r, n = _prepare(writer, reader, element_bits, arch)
    choices = _rep_choices(w, r, n, element_bits, lds_budget_bytes)
    frontier = (_pareto_set(w, r, choices, outs, model, element_bits, allow_transpose or transpose_only, seed,
                           lds_budget_bytes, transpose_only)
                if pareto or objective in cost_mod.OBJECTIVES else [])
    if objective in cost_mod.OBJECTIVES and objective != "instructions":
        best = cost_mod.cost_model(arch, objective).best_of(
            frontier, lambda res: res.modelled()[objective], lambda res: res.write_instructions + res.read_instructions)
        best.objective = objective
        best.argument += (f"\nchosen from the Pareto set of {len(frontier)} (instructions, cycles) points as the one of "
                          f"least rank value under the {objective} objective ({best.modelled()[objective]:g} cycles; "
                          "linlayout.synth.cost.round_trip_cost, CostModel.best_of: bank conflicts weighed once, "
                          "near ties by LDS instructions alone)")
    else:
        search = "cycles" if objective == "cycles" else "vector"
        best = _best(w, r, choices, outs, model, element_bits, allow_transpose or transpose_only, search, seed,
                     lds_budget_bytes, transpose_only, not enumerate_all and search == "vector")
        best.objective = objective
    best.pareto = [res.pareto_point() for res in frontier]
    return best


def _best(w: _Side, r: _Side, choices: list[list[int]], outs, model: LdsModel, element_bits: int,
          allow_transpose: bool, objective: str, seed: int, budget, transpose_only: bool, prune: bool,
          max_instructions: int | None = None) -> SwizzleResult:
    """The best layout over the choices of rounds under ``objective`` (``"vector"`` or ``"cycles"``),
    with at most ``max_instructions`` LDS instructions per round when given."""
    best = None
    for reps in choices:
        try:
            res = _solve(_drop_registers(w, reps), _drop_registers(r, reps), reps, outs, model, element_bits,
                         allow_transpose, objective, seed, budget, transpose_only, prune, max_instructions)
        except NoSharedLayout:  # this choice of rounds has none
            continue
        key = _order(objective, res.write_instructions + res.read_instructions, res.total_cycles)
        if best is None or key < best[0]:
            best = (key, res)
    if best is None:
        raise _no_layout(w, r, element_bits)
    return best[1]


def _pareto_set(w: _Side, r: _Side, choices: list[list[int]], outs, model: LdsModel, element_bits: int,
               allow_transpose: bool, seed: int, budget, transpose_only: bool) -> list[SwizzleResult]:
    """The layouts of the Pareto set of (LDS instructions, bank cycles), fewest instructions first,
    by the epsilon-constraint method: the fewest cycles (then instructions) of any layout; then
    the fewest cycles among layouts with fewer instructions per round than the last point, until
    none is left.  Each point is "best under the model" as ``synthesize``'s result is (its
    ``certified``); points another one dominates (after the exact analysis) are dropped."""
    points: list[SwizzleResult] = []
    cap = None
    while cap is None or cap > 0:
        try:
            res = _best(w, r, choices, outs, model, element_bits, allow_transpose, "cycles", seed, budget,
                        transpose_only, False, cap)
        except NoSharedLayout:  # none under the cap
            break
        points.append(res)
        cap = (res.write_instructions + res.read_instructions) // res.reps - 1
    kept = [p for p in points if not any(
        q is not p and q.write_instructions + q.read_instructions <= p.write_instructions + p.read_instructions
        and q.total_cycles <= p.total_cycles
        and (q.write_instructions + q.read_instructions, q.total_cycles)
        != (p.write_instructions + p.read_instructions, p.total_cycles) for q in points)]
    return sorted(kept, key=lambda p: (p.write_instructions + p.read_instructions, p.total_cycles))


def shared_basis(writer: LinearLayout, reader: LinearLayout, element_bits: int, arch: Union[str, LdsModel], *,
                 lds_budget_bytes: int | None = None, transpose_only: bool = False) -> tuple[list[int], list[int], str]:
    """The layout ``synthesize(writer, reader, element_bits, arch, lds_budget_bytes=..., allow_transpose=False,
    transpose_only=..., enumerate_all=False)`` returns, as (the tensor vector of each offset bit, of each
    ``reps`` bit, the read instruction); tensor vectors flattened, the first out dim least significant.

    For callers that analyze the accesses themselves (linlayout.synth.lds_path, whose writer is the src
    as its stores write it: ``lds_path._stored_src``, without the register bits of store twins): with
    one choice of rounds the search alone finds it, the exact analysis of its accesses is not run (it
    cannot fail: the chosen vectors and alignment are what that analysis checks); with several,
    ``synthesize``'s analysis picks among them.
    """
    model, outs, w, r, n = _prepare(writer, reader, element_bits, arch)
    choices = _rep_choices(w, r, n, element_bits, lds_budget_bytes)
    if len(choices) > 1:
        res = synthesize(writer, reader, element_bits, model, lds_budget_bytes=lds_budget_bytes,
                         allow_transpose=False, transpose_only=transpose_only, enumerate_all=False, pareto=False)
        cols = res.shared._aligned_columns(outs, "shared layout")
        n_off = res.shared.in_dim_size_log2("offset")
        return cols[:n_off], cols[n_off:], res.read_op
    (reps,) = choices
    try:
        cand, basis, _, _ = _search(_drop_registers(w, reps), _drop_registers(r, reps), model, element_bits,
                                    transpose_only, "vector", 0, transpose_only, True)
    except NoSharedLayout:
        raise _no_layout(w, r, element_bits) from None
    return basis, list(reps), cand.read.op.name


def _prepare(writer: LinearLayout, reader: LinearLayout, element_bits: int, arch: Union[str, LdsModel]):
    """(model, out dims, writer side, reader side, tensor bits), the arguments checked."""
    model = arch if isinstance(arch, LdsModel) else lds_model(arch)
    if isinstance(element_bits, bool) or not isinstance(element_bits, int) or element_bits not in (4, 8, 16, 32, 64):
        raise LayoutError(f"element_bits {element_bits!r} must be 4, 8, 16, 32 or 64")
    if not isinstance(writer, LinearLayout) or not isinstance(reader, LinearLayout):
        raise LayoutError("writer and reader must be LinearLayouts")
    outs = writer.out_dims
    w = _side("write", _normalize(writer, outs, "writer", model.wave_size))
    r = _side("read", _normalize(reader, outs, "reader", model.wave_size))
    n = sum(s.bit_length() - 1 for _, s in outs)
    if w.span.rank != n:
        raise LayoutError("writer: does not cover every tensor element (not surjective), so LDS would hold "
                          "unwritten elements")
    if r.span.rank > n:
        raise LayoutError("reader: internal rank error")
    return model, outs, w, r, n


def _no_layout(w: _Side, r: _Side, element_bits: int) -> NoSharedLayout:
    why = ""
    if element_bits < 8 and not set(w.regs) & set(r.regs):
        why = (f": {element_bits}-bit elements move at least a byte per lane, so some register of both sides must "
               f"hold the element next to another register's")
    return NoSharedLayout("no shared layout lets both sides use an LDS instruction (alignment impossible)" + why)


def _order(objective: str, instructions: int, cycles: int) -> tuple[int, int]:
    return (instructions, cycles) if objective == "vector" else (cycles, instructions)


def _key(objective: str, write: _Mode, read: _Mode, fill: int, cycles: int) -> tuple:
    """A candidate's rank: the objective's order of its instructions and ``cycles``, then fewer
    sub-dword fill vectors, no transpose read, wider vectors."""
    return _order(objective, write.instructions + read.instructions, cycles) + (
        fill, read.op.shape.transpose_bits or 0, -write.k - read.k)


def _solve(w: _Side, r: _Side, reps: list[int], outs, model: LdsModel, element_bits: int, allow_transpose: bool,
           objective: str, seed: int, budget, transpose_only: bool = False, prune: bool = False,
           max_instructions: int | None = None) -> SwizzleResult:
    """The best layout whose offset space leaves out the register vectors ``reps``, with the exact
    analysis of its accesses (``_search``, ``_verify``)."""
    cand, basis, n_pairs, certified = _search(w, r, model, element_bits, allow_transpose, objective, seed,
                                              transpose_only, prune, max_instructions)
    res = _verify(_layout(basis, reps, outs), basis, reps, outs, w, r, cand, model, element_bits, n_pairs, budget)
    res.certified = certified and res.optimal
    res.objective = objective
    res.argument = _argument(res, cand, model)
    return res


def _search(w: _Side, r: _Side, model: LdsModel, element_bits: int, allow_transpose: bool, objective: str, seed: int,
            transpose_only: bool, prune: bool,
            max_instructions: int | None = None) -> tuple[_Candidate, list[int], int, bool]:
    """The best choice and its offset basis (prefix, bank bits, rows) -> (candidate, basis, valid
    choices looked at, no other choice's bound beats it); ``max_instructions``: only choices with at
    most that many LDS instructions per round are candidates (a LayoutError when none is).

    Without ``prune`` every choice is checked, and every valid one counted.  ``prune`` (the "vector"
    objective, instructions first): a choice is checked only when it may come next, so choices with
    more instructions than a valid one are never looked at, the prefixes of fixed lengths are listed
    only when their floor key comes up, and only the valid choices looked at are counted.  Both
    find the same choice and basis: the candidates are tried in the same order (their keys, then
    their places in the full list) up to the same one that ends the search."""
    in_space = w.span.contains  # the offset space: the writer's span (all of F^n without reps)
    if not all(map(in_space, r.regs + r.lanes + r.warps)):
        raise LayoutError("reader reads elements outside the writer's per-round tile")
    n_off = w.span.rank
    row_start = model.bank_bits + 5 - (element_bits.bit_length() - 1)
    r_bits = max(0, n_off - row_start)

    zb = max(0, 5 - (element_bits.bit_length() - 1))
    aligned: dict[tuple, tuple | None] = {}  # H_s depends on the vector, the other columns, the rest of P
    inside: dict[tuple, bool] = {}  # (A, B) -> A lies in span(B)
    span_of: dict[tuple, f2.Span] = {}  # B -> span(B)

    def span(basis: tuple) -> f2.Span:
        if basis not in span_of:
            span_of[basis] = f2.Span(basis)
        return span_of[basis]

    spans = {id(w): True, id(r): r.span.rank == n_off}  # the writer's span is the space
    lightest: list[list[int]] = []  # a basis of the offset space, lightest first, once a side needs it

    def completion(side: _Side) -> list[int] | None:
        if spans[id(side)]:
            return None
        if not lightest:
            lightest.append(_low_weight(_reduced(w.regs + w.lanes + w.warps), 1))
        return lightest[0]

    widths = {id(s): _plain_widths(s, model, element_bits) for s in (w, r)}
    plain: dict[tuple, _Mode] = {}  # a plain mode depends on the side and its vector only
    maxbits = (128 // element_bits).bit_length() - 1
    # per side: its register vectors and, for each most vector bits a prefix allows, the widths
    # with at most that many (``_vector_bits``; read only)
    allowed = {id(s): (set(s.regs), _widths_upto(widths[id(s)], maxbits)) for s in (w, r)}
    reads = _transpose_reads(model, element_bits) if allow_transpose else []

    # a transpose read's prefix starts with the reader's first k lane vectors (``_transpose_modes``):
    # with nothing else to read by, only such prefixes are listed
    lead = r.lanes[:min(load.vector_bits for _, load in reads)] if transpose_only and reads else None
    if transpose_only and not reads:
        raise NoSharedLayout("no shared layout lets both sides use an LDS instruction (alignment impossible)")

    def plain_widths(side: _Side, prefix: list[int]) -> list[_Plain]:
        regs, upto = allowed[id(side)]
        return upto[_vector_bits(regs, prefix, maxbits)]

    def mode(side: _Side, prefix: list[int], way: _Plain | _Mode) -> _Mode:
        if not isinstance(way, _Plain):
            return way
        key = (id(side), tuple(prefix[:way.k]))
        if key not in plain:
            plain[key] = _plain_mode(side, prefix, way)
        return plain[key]

    def aligned_space(side: _Side, mode: _Mode, prefix: list[int]) -> tuple | None:
        key = (tuple(mode.vector), tuple(mode.others), tuple(prefix[mode.k:]))
        if key not in aligned:
            aligned[key] = h = _aligned_space(mode, prefix, n_off, completion(side))
            if mode.others_pivots is not None and h is mode.others_pivots[1]:
                span_of.setdefault(h, mode.others_pivots[0])  # H_s = the other columns' pivots: their span
        return aligned[key]

    def choices_of(prefixes) -> list[tuple]:
        """Every (prefix, fill, write way, read way) of ``prefixes``, in enumeration order; modes are
        built when looked at."""
        choices = []
        for prefix, fill, lengths in prefixes:
            rways = (([] if transpose_only else plain_widths(r, prefix))
                     + (_transpose_modes(r, prefix, reads) if reads and lengths is None else []))
            wways = plain_widths(w, prefix)
            if lengths is not None:
                wways, rways = ([x for x in ways if x.k == k] for ways, k in zip((wways, rways), lengths))
            choices += [(prefix, fill, ww, rw) for ww in wways for rw in rways]
        return choices

    def validate(choice: tuple) -> tuple | None:
        """(modes, H_w, H_r) of a valid choice, None for an invalid one."""
        prefix, _, ww, rw = choice
        mw, mr = mode(w, prefix, ww), mode(r, prefix, rw)
        hr = aligned_space(r, mr, prefix)
        hw = aligned_space(w, mw, prefix) if hr is not None else None
        if hw is None:
            return None
        # H_s is a complement of V_s (the first k_s prefix vectors) holding the rest of the
        # prefix, so Hc + P is the whole offset space iff Hc = H_s for the longer vector,
        # i.e. iff the aligned space of the longer vector lies in the other one
        key = (hw, hr) if mw.k >= mr.k else (hr, hw)
        if key not in inside:
            contains = span(key[1]).contains
            inside[key] = all(contains(x) for x in key[0])
        return (mw, mr, hw, hr) if inside[key] else None

    def allowed_count(count: int) -> bool:
        return max_instructions is None or count <= max_instructions

    def waiting(index: int, choice: tuple) -> tuple:
        """A choice's heap entry before its bound is known: under the key of its conflict-free cycles."""
        _, fill, ww, rw = choice
        return _key(objective, ww, rw, fill, ww.cost + rw.cost), index, None

    # found[i]: (modes, H_w, H_r) of choice i once checked, None if it is invalid
    found: dict[int, tuple | None] = {}
    later = None  # with prune: the heap entry that stands for the prefixes of fixed lengths until listed
    if prune:
        if objective != "vector":
            raise ValueError(f"internal: the pruned search ranks instructions first, not by {objective!r}")
        # The prefixes tried at every length come first.  The fewest instructions of their valid
        # choices (``cap``: the first valid one in order of instructions) bound those of the search,
        # so a choice with more is never a candidate, and a prefix of fixed lengths with more (or
        # with no instruction at its lengths) has no choice the pruned search looks at.
        every_length = _prefixes(w, r, model, element_bits, allow_transpose, _no_lengths, lead=lead)
        choices = choices_of(every_length)
        counts = [ww.instructions + rw.instructions for _, _, ww, rw in choices]
        cap = float("inf")
        for i in sorted(range(len(choices)), key=counts.__getitem__):
            found[i] = validate(choices[i])
            if found[i] is not None:
                cap = counts[i]
                break
        heap = [waiting(i, c) for i, c in enumerate(choices) if counts[i] == cap and allowed_count(cap)]
        by_k = [{x.k: x for x in widths[id(s)]} for s in (w, r)]
        if transpose_only:
            by_k[1] = {}

        def keep_lengths(lengths: tuple[int, int]) -> bool:
            kw, kr = lengths
            return kw in by_k[0] and kr in by_k[1] and by_k[0][kw].instructions + by_k[1][kr].instructions <= cap
        # The prefixes of fixed lengths follow those of every length in the full list, so they come
        # after them on ties; their choices' keys are no less than the least key of a pair of widths
        # of kept lengths that may give a new prefix (no fill, no transpose read), under which they
        # wait, unlisted, in the heap.
        new = _new_fixed_lengths(w, r, element_bits)
        floor = min((_key(objective, ww, rw, 0, ww.cost + rw.cost) for ww in by_k[0].values()
                     for rw in by_k[1].values() if keep_lengths((ww.k, rw.k)) and new((ww.k, rw.k))),
                    default=None)
        if floor is not None:
            later = (floor, len(choices), None)
            heap.append(later)
    else:
        choices = choices_of(_prefixes(w, r, model, element_bits, allow_transpose, lead=lead))
        found = {i: validate(c) for i, c in enumerate(choices)}
        counts = {i: got[0].instructions + got[1].instructions for i, got in found.items() if got is not None}
        valid = [i for i, count in counts.items() if allowed_count(count)]
        # With the "vector" objective instructions come first: the first choice tried has the fewest, and
        # its result ends the search before any choice with more, so only those with the fewest get a bound.
        fewest = min((counts[i] for i in valid), default=0)
        heap = [waiting(i, choices[i]) for i in valid if objective != "vector" or counts[i] <= fewest]
    footprints: dict[tuple, list[int]] = {}  # per (mode (alive while solving), sub-dword bits): a basis of M_s
    sum_dims: dict[tuple, int] = {}

    def footprint_basis(mode: _Mode, prefix: list[int]) -> list[int]:
        key = (id(mode), tuple(prefix[:zb]))
        if key not in footprints:
            footprints[key] = f2.image_basis(_footprint(mode) + mode.vector + prefix[:zb])
        return footprints[key]

    def sum_dim(m: list[int], hc: tuple) -> int:
        key = (tuple(m), hc)
        if key not in sum_dims:
            sum_dims[key] = _sum_dim(m, span(hc))
        return sum_dims[key]

    def candidate(prefix: list[int], fill: int, mw: _Mode, mr: _Mode, hw: tuple, hr: tuple) -> _Candidate:
        m_w, m_r = footprint_basis(mw, prefix), footprint_basis(mr, prefix)
        hc = hw if mw.k >= mr.k else hr  # spans Hc (see above)
        sums = (sum_dim(m_w, hc), sum_dim(m_r, hc))
        lb = (mw.cost << _lb_exponent(len(m_w), sums[0], r_bits)) + (
            mr.cost << _lb_exponent(len(m_r), sums[1], r_bits))
        c = _Candidate(prefix, mw, mr, hw, hr, m_w, m_r, sums, lb, fill)
        c.key = _key(objective, mw, mr, fill, lb)
        return c

    # The candidates in the order of their keys (ties: in enumeration order), each checked and its
    # bound computed only when it may come next: until then it waits under the key of its
    # conflict-free cycles, which is never above its key.  So once the least key left is no better
    # than the best found, no candidate left can beat it: the search ends there.
    heapq.heapify(heap)
    rng = cache(lambda: random.Random(seed))  # one generator for the search, made on its first draw
    best = None
    missed = []  # bound keys of tried candidates whose greedy rows missed their bound
    while heap:
        entry = heapq.heappop(heap)
        key, i, cand = entry
        if best is not None and key[:2] >= best[0]:
            break
        if entry is later:  # list the prefixes of fixed lengths (after those of every length)
            fixed = choices_of(_prefixes(w, r, model, element_bits, allow_transpose, keep_lengths, every_length,
                                         lead)[len(every_length):])
            for j, choice in enumerate(fixed, len(choices)):
                heapq.heappush(heap, waiting(j, choice))
            choices += fixed
            continue
        if cand is None:
            if i not in found:
                found[i] = validate(choices[i])
            if found[i] is None or not allowed_count(found[i][0].instructions + found[i][1].instructions):
                continue
            cand = candidate(*choices[i][:2], *found[i])
            heapq.heappush(heap, (cand.key, i, cand))
            continue
        rows, e = _choose_rows(cand, r_bits, rng)
        cycles = (cand.write.cost << e[0]) + (cand.read.cost << e[1])
        if cycles > cand.lb:
            missed.append(cand.key[:2])
        key = _order(objective, cand.write.instructions + cand.read.instructions, cycles)
        if best is None or key < best[0]:
            best = (key, cand, rows)
    if best is None:
        raise NoSharedLayout("no shared layout lets both sides use an LDS instruction (alignment impossible)")
    best_key, cand, rows = best
    certified = not any(k < best_key for k in missed)
    banks = f2.complement(cand.prefix + rows, 0, candidates=_low_weight(cand.hc_reduced, 1))  # aligned: inside Hc
    basis = cand.prefix + banks + rows
    if len(basis) != n_off:
        raise LayoutError("internal: offset basis has the wrong size")
    looked_at = sum(got is not None and allowed_count(got[0].instructions + got[1].instructions)
                    for got in found.values())
    return cand, basis, looked_at, certified


def _rep_choices(w: _Side, r: _Side, n: int, element_bits: int, budget: int | None) -> list[list[int]]:
    """Every valid set of round (``reps``) vectors the budget needs: register vectors common to
    both sides whose removal leaves both sides covering the same per-round tile."""
    if budget is None:
        return [[]]
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise LayoutError(f"lds_budget_bytes {budget!r} must be a positive integer")
    need = n - ((budget * 8 // element_bits).bit_length() - 1)
    if need <= 0:
        return [[]]
    rset = set(r.regs)
    common = [v for v in w.regs if v in rset]
    out = []
    for trial in combinations(common, need):
        trial = list(trial)
        # only register bits become rounds: a lane or warp vector equal to a round vector stays (and
        # then the per-round tile is too large: the choice fails the rank test)
        wr = [x for x in w.regs if x not in trial] + w.lanes + w.warps
        rr = [x for x in r.regs if x not in trial] + r.lanes + r.warps
        if f2.rank(wr) == n - need and f2.rank(wr + trial) == n and f2.rank(wr + rr) == f2.rank(wr):
            out.append(trial)
    if not out:
        raise NoSharedLayout(f"the tile needs {(1 << n) * element_bits // 8} bytes; fitting {budget} bytes needs "
                             f"{need} register bits common to writer and reader as rounds, and no such set qualifies")
    return out


def _layout(basis: list[int], reps: list[int], outs: list[tuple[str, int]]) -> LinearLayout:
    bases = {"offset": [_unflatten(v, outs) for v in basis]}
    if reps:
        bases["reps"] = [_unflatten(v, outs) for v in reps]
    return LinearLayout(bases, outs)


def _verify(shared: LinearLayout, basis, reps, outs, w: _Side, r: _Side, cand: _Candidate, model: LdsModel,
            element_bits: int, n_cands: int, budget) -> SwizzleResult:
    """Exact analysis of the synthesized layout (one round) with the planned instructions."""
    round_shared = _layout(basis, [], outs) if reps else shared
    wr = access_report(_access_map(w, basis), element_bits, model, "write", ops=[cand.write.op.name])
    rr = access_report(_access_map(r, basis), element_bits, model, "read", ops=[cand.read.op.name])
    rounds = 1 << len(reps)
    lb = cand.lb * rounds
    lds = shared_bytes(round_shared, element_bits)
    res = SwizzleResult(
        shared=shared, arch=model.arch, element_bits=element_bits,
        write_op=wr.choice.op, read_op=rr.choice.op, write_vec=wr.choice.vector, read_vec=rr.choice.vector,
        write_instructions=wr.choice.count * rounds, read_instructions=rr.choice.count * rounds,
        write_cycles=wr.total_cycles * rounds, read_cycles=rr.total_cycles * rounds,
        ideal_cycles=(wr.ideal_cycles + rr.ideal_cycles) * rounds, lower_bound_cycles=lb,
        reps=rounds, lds_bytes=lds, fits_in_lds=lds <= (budget or model.lds_bytes),
        write_report=wr, read_report=rr, candidates_considered=n_cands)
    return res


def _access_map(side: _Side, basis: list[int]) -> LinearLayout:
    """linlayout.synth.lds_access.access_map of the round's layout (offset bit ``i`` -> ``basis[i]``) for
    ``side``, whose layout has no block dim and no zero register bases: each in bit's offset is the
    unique ``x`` with ``basis . x`` = its tensor vector."""
    offsets = f2.solve_many(basis, side.layout.columns())
    bases, j = {}, 0
    for name, size in side.layout.in_dims:
        k = size.bit_length() - 1
        bases[name] = [[x] for x in offsets[j:j + k]]
        j += k
    return LinearLayout(bases, [("offset", 1 << len(basis))])


def _argument(res: SwizzleResult, cand: _Candidate, model: LdsModel) -> str:
    tags = sorted({o.tag for o in (cand.write.op, cand.read.op)})
    assumptions = sorted({a for a in (cand.write.op.assumption, cand.read.op.assumption) if a})
    first = ("fewest LDS instructions (widest vectors), then fewest cycles" if res.objective == "vector"
             else "fewest bank cycles, then fewest LDS instructions")
    lines = [
        f"objective: {first}; {res.candidates_considered} (prefix, write op, read op) choices enumerated "
        f"(contiguity forces the low offset bits to be register vectors of a side, or the reader's first lane "
        f"vectors for a transpose read; sub-dword fill vectors are drawn from the layouts' bases)",
        f"cycles: every phase costs 2**dim(Row ∩ M) (M = lanes of the phase + the lane's vector + sub-dword bits); "
        f"dim(Row ∩ M) >= dim Row + dim(M ∩ Hc) - dim Hc for every layout with the same prefix, so "
        f"{res.write_instructions} x {res.write_op} + {res.read_instructions} x {res.read_op} cannot take fewer "
        f"than {res.lower_bound_cycles} cycles",
    ]
    if res.optimal:
        lines.append(f"the synthesized layout takes {res.total_cycles} cycles = that bound (verified by exact "
                     f"analysis): optimal for these instructions")
    else:
        lines.append(f"the synthesized layout takes {res.total_cycles} cycles, {res.total_cycles - res.lower_bound_cycles}"
                     f" above the bound (the row choice could not avoid both footprints): maybe not optimal")
    if res.certified:
        lines.append("every other enumerated choice has a bound no better than this result, or was built and did "
                     "no better: optimal over all enumerated choices")
    lines.append(f"all under the model: cycle model of linlayout.hw.lds, phase evidence {','.join(tags)}"
                 + (f", assumptions {', '.join(assumptions)}" if assumptions else ""))
    return "\n".join(lines)


# ------------------------------------------------------------------ padding
@dataclass
class PaddingOption:
    """An unswizzled layout with padding: ``pad`` unused elements after every ``interval``."""

    order: tuple[int, ...]
    interval: int
    pad: int
    shared: PaddedLayout
    write_op: str
    read_op: str
    write_instructions: int
    read_instructions: int
    write_cycles: int
    read_cycles: int
    lds_bytes: int

    @property
    def total_cycles(self) -> int:
        return self.write_cycles + self.read_cycles

    def to_json(self) -> dict:
        return {"order": list(self.order), "interval": self.interval, "pad": self.pad,
                "write_op": self.write_op, "read_op": self.read_op,
                "write_instructions": self.write_instructions, "read_instructions": self.read_instructions,
                "write_cycles": self.write_cycles, "read_cycles": self.read_cycles,
                "total_cycles": self.total_cycles, "lds_bytes": self.lds_bytes}


def padding_options(writer: LinearLayout, reader: LinearLayout, element_bits: int, arch: Union[str, LdsModel], *,
                    intervals: Sequence[int] | None = None, pads: Sequence[int] | None = None,
                    orders: Sequence[Sequence[int]] | None = None) -> list[PaddingOption]:
    """Padded alternatives, best first (fewest instructions, then cycles, then bytes).

    Each is the plain row-major (or another ``order``) layout of the tensor with
    ``pad`` elements inserted after every ``interval`` elements: the classic
    "row stride + pad" trick (e.g. a row of 64 fp16 padded by 4 so the stride in
    dwords is 34 = 2 x odd).  Defaults: intervals = each power of two from 16
    bytes to the tensor, pads = 1 dword, 2 dwords, 16 bytes (in elements).  A padded layout holds
    the whole tile at once, so none larger than the target's LDS is an option.
    """
    lds_bytes = check_synthesis(writer, reader, element_bits, arch, None)
    model = arch if isinstance(arch, LdsModel) else lds_model(arch)
    shape = [s for _, s in writer.out_dims]
    total = 1
    for s in shape:
        total *= s
    if lds_bytes is not None and total * element_bits > 8 * lds_bytes:
        return []
    rank = len(shape)
    if orders is None:
        orders = [tuple(reversed(range(rank)))] + ([tuple(range(rank))] if rank > 1 else [])
    if intervals is None:
        intervals = [1 << i for i in range(max(0, (128 // element_bits).bit_length() - 1), total.bit_length())]
    if pads is None:
        pads = sorted({max(1, 32 // element_bits), max(1, 64 // element_bits), max(1, 128 // element_bits)})
    for name, values in (("intervals", intervals), ("pads", pads)):
        if any(isinstance(x, bool) or not isinstance(x, int) or x < 1 or x & (x - 1) for x in values):
            raise LayoutError(f"padding_options {name} {list(values)!r} must be powers of two")
    for order in orders:
        if sorted(order) != list(range(rank)):
            raise LayoutError(f"padding_options order {order!r} is not a permutation of the {rank} tensor dims")
    out = []
    for order in orders:
        for iv in intervals:
            for pd in pads:
                try:
                    sh = padded_shared([(iv, pd)], shape, order=order)
                    if lds_bytes is not None and shared_bytes(sh, element_bits) > lds_bytes:
                        continue
                    wr = tile_access_report(sh, writer, element_bits, model, "write")
                    rr = tile_access_report(sh, reader, element_bits, model, "read")
                except LayoutError:
                    continue
                out.append(PaddingOption(tuple(order), iv, pd, sh, wr.choice.op, rr.choice.op, wr.choice.count,
                                         rr.choice.count, wr.total_cycles, rr.total_cycles,
                                         shared_bytes(sh, element_bits)))
    out.sort(key=lambda o: (o.write_instructions + o.read_instructions, o.total_cycles, o.lds_bytes))
    return out
