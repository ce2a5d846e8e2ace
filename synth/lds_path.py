"""The LDS round trip: every warp stores its src registers, (barrier,) loads its dst registers.

Shared layout ``S: (offset[, reps]) -> tensor`` comes from the bank-conflict
work (``linlayout.synth.swizzle.synthesize``: widest vectors, then fewest bank cycles,
rounds when the tile exceeds the LDS budget), or is one of our *register-first*
layouts (``vector_first_design``: one side's VGPR element order at the low
offset bits, rows swizzled against both sides' phase footprints).

Per side (store with src, load with dst) let ``C = S^-1 o layout`` map
hardware bits to (offset, rep) bits.  A side moves ``2**t`` elements per lane
per instruction when offset bits ``0..t-1`` are images of register vectors
``delta_i`` and no lane/warp bit touches them (alignment); the ``2**t``
elements of one access are the registers ``r ^ sum(c_i delta_i)``.  When the
vector's elements are not whole VGPRs in order, ``v_perm_b32`` repacks them
(store side before, load side after).  Accesses of 4 or 8 bytes whose
addresses differ by one constant in every lane become one ``ds_read2`` /
``ds_write2`` (``st64`` for multiples of 64 units).  *Duplicates*, registers of one side holding
the same element in every lane and warp (register broadcast), are stored and loaded once (a dst
duplicate takes the value of its original, ``_Side.unique``); of *store twins*, src registers one
holding, in other lanes or warps, the elements the other holds, one is stored (``_stored_once``:
each element is stored once).
Sub-dword accesses use ``ds_write_b8/b16`` (``_d16_hi`` for the upper half) and ``ds_read_u8/u16``.

Rounds: tensor bits that are register bits on both sides become rep bits; round
``k`` moves the registers whose rep bits equal ``k``.  A barrier separates the
stores from the loads (and a round's loads from the next round's stores) only
when some warp reads bytes another warp writes.  An access lies in one round (its vector bits
are offset bits; a PTX matrix access whose dword's registers lie in two rounds is not offered); a layout where a lane or warp vector has a round component is refused
(``DesignRefused``, which names each refusal; the design pool drops refused layouts only).  Where every
layout offered is refused so, ``lane_space_design``'s, whose offset space holds every lane and warp
vector, serves (a spare of the pool: listed only then).
"""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Callable, Iterator, NamedTuple

import numpy as np

from linlayout import LayoutError, LinearLayout, caches, f2
from linlayout.hw.lds import OP_SHAPES, lds_model
from linlayout.hw.transpose_loads import TransposeLoad

from . import swizzle
from .context import ConversionContext
from .cost import (AddressRegisters, _lds_op_name, _warp0, lds_access_cost, least_address_valu, matrix_access_cost,
                   register_dwords, register_load_copies, store_tuple_copies, warp_columns)
from .in_wave import gather_dword, gather_dwords, gather_intermediates
from .ir import Program
from .lane_choices import least_lanes_choice_valu
from .plan import LdsLoad, LdsStore
from .steps import BARRIER_SCOPES, MatrixLoad, MatrixStore, Step, matrix_name
from .preimage import Problem
from .span import span_table, span_values
from .vgpr_tuples import VgprTuples

__all__ = ["DesignPool", "DesignRefused", "LdsAccesses", "LdsDesign", "ORDERS", "build_lds", "design_cache", "designs",
           "lane_space_design", "layout_key", "lane_terms", "lds_accesses", "ordered_design", "over_fetch_design",
           "prefix_address_valu", "prefix_floor", "shared_layout", "transpose_floor", "transpose_instructions",
           "vector_first_design", "warp_terms"]


class DesignRefused(LayoutError):
    """A shared layout of one kind that the conversion has none of, or one whose round trip's
    accesses cannot be formed; the message says why.  The refusals, each a fact of the problem and the
    layout (none a bug): ``_over_fetch_prefix``'s and ``_check_sub_dword_slots``' (no over-fetching
    loads), ``_round_bits``' (no split into rounds fits the budget), ``shared_layout``'s with
    ``transpose`` (no transpose-read layout), ``_transpose_groups``' (the dst is not read so through
    this layout) and ``_check_rounds``' (a lane or warp vector has a round component).  The design
    pool drops a design refused so (``DesignPool``); any other error of building a design or its
    accesses propagates."""


@dataclass
class LdsDesign:
    shared_cols: list[int]  # tensor vector of every offset bit, then every rep bit
    n_offset_bits: int
    n_rep_bits: int
    source: str  # "linlayout.synth.swizzle" or "fallback"
    lds_bytes: int
    read_transpose: int = 0  # the loads are the target's transpose loads of read_transpose-bit elements
    over_fetch: bool = False  # the loads are dword vectors, each lane taking its elements (over_fetch_design)


def layout_key(design: LdsDesign) -> tuple:
    """What the round trip through ``design`` depends on (designs of equal keys move alike)."""
    return (tuple(design.shared_cols), design.n_offset_bits, design.n_rep_bits, design.lds_bytes,
            design.read_transpose, design.over_fetch)


def vector_first_design(ctx: ConversionContext, side: str) -> LdsDesign:
    """A layout whose low offset bits are ``side``'s register bits in register order, rows swizzled.

    ``side`` ("src" or "dst") then moves whole VGPRs (up to 16 bytes) with no
    repacking; ``side`` "both": the register bits common to both sides (src order), so that
    both sides move vectors (in registers that need not be consecutive: on PTX targets a
    vector access names any registers).  Above the bank bits, each row vector is chosen greedily outside
    ``M + Row`` for both sides, ``M`` being the tensor vectors one phase of that
    side touches (phase lanes, the lane's own vector, sub-dword bits): then two
    lanes of one phase never meet in one bank on different rows unless forced
    (the dimension argument of linlayout.synth.swizzle, here with the prefix fixed).
    """
    prob = ctx.problem
    prefix, reps = _vector_first_prefix(ctx, side)
    leads = [_lead(prefix, prob.src_cols), _lead(prefix, prob.dst_cols)]
    whose = "src and dst common" if side == "both" else side
    return _rows_swizzled(ctx, prefix, reps, leads, f"{whose} registers first, rows swizzled")


def lane_space_design(ctx: ConversionContext, side: str) -> LdsDesign:
    """For a tile that moves in rounds (``_round_bits`` ``R``, not empty): a layout whose offset space holds
    every lane and warp vector of both sides, so that no design is refused for want of one.

    Why.  A round is a coset of the offset space ``O`` (``F^n = O + span(R)``, direct); a lane or warp
    vector outside ``O`` has a round component, and the lanes of one access would hold elements of two
    rounds (``_check_rounds``).  The other designs take ``O`` from their prefix and the unit vectors
    completing it (``_row_space``) or from linlayout.synth.swizzle (whose round choices ask more:
    ``_rep_choices``): where a lane or warp vector is no sum of those (a src lane ``e0 + e2`` with the
    round ``e2``: unit vectors completing ``e2`` leave ``e2`` out, so they never span ``e0 + e2``), every
    one of them is refused though a valid ``O`` exists (random problems under a half or a quarter of
    the tile's bytes: 9 of the 293 with a round split among 1,500, tests/test_lds_round_splits.py).

    The layout.  ``L`` = the span of both sides' lane and warp vectors; ``_valid_rounds`` makes
    ``L ∩ span(R) = 0``.  Offset bits, low to high: ``side``'s ("src" or "dst") register vectors in its
    register order while each lies outside ``span(P + L + R)`` (``P``: the ones taken; at most the
    widest access's, 16 bytes), so that they are the low bits of that side's accesses and no lane or warp
    vector has a component on them; then the lane and warp vectors of the src, then of the dst, each
    outside the span of those before it and ``P + R`` (a basis of ``L``: ``span(L) ∩ span(P + R) = 0``,
    since ``P`` lies outside ``span(L + R)`` and ``L`` outside ``span(R)``); then the unit vectors
    completing ``P + L + R`` (f2.complement).  So ``O ⊇ L`` and ``O ⊕ span(R) = F^n``: every lane and warp
    vector has no round component and each register picks its round by its own round component.
    Unswizzled (bank conflicts as they fall): a spare of the design pool (``designs``, ``DesignPool``),
    listed only where every other layout is refused, so it changes no plan another layout gives.
    A LayoutError for a ``side`` other than "src" and "dst"."""
    if side not in ("src", "dst"):
        raise LayoutError(f"lane_space_design's side must be 'src' or 'dst', got {side!r}")
    prob = ctx.problem
    reps = _round_bits(ctx)
    others = [c for cols in (prob.src_cols, prob.dst_cols) for k in ("lane", "warp") for c in cols[k] if c]
    prefix: list[int] = []
    widest_vector_bits = (16 // ctx.element_bytes).bit_length() - 1  # vector bits of a 16-byte access
    for c in prob.src_cols["register"] if side == "src" else prob.dst_cols["register"]:
        if len(prefix) == widest_vector_bits or not c or f2.in_span(prefix + others + reps, c):
            break
        prefix.append(c)
    lanes = f2.complement(prefix + reps, prob.n_tensor_bits, others)
    rest = f2.complement(prefix + lanes + reps, prob.n_tensor_bits)
    offsets = prefix + lanes + rest
    return LdsDesign(offsets + reps, len(offsets), len(reps), f"{side} registers, then every lane and warp vector",
                     ctx.element_bytes << len(offsets))


def _vector_first_prefix(ctx: ConversionContext, side: str) -> tuple[list[int], list[int]]:
    """(low offset vectors, round vectors) of ``vector_first_design``: ``side``'s register bits in
    its register order, or (``side`` "both") the register bits of both sides, in the src's order."""
    reps = _round_bits(ctx)
    src, dst = ctx.problem.src_cols["register"], ctx.problem.dst_cols["register"]
    first = {"src": src, "dst": dst, "both": [c for c in src if c in dst]}[side]
    return _register_run(first, [], reps, (16 // ctx.element_bytes).bit_length() - 1), reps


def over_fetch_design(ctx: ConversionContext) -> LdsDesign:
    """For sub-dword elements packed along different tensor bits by the two sides: the src's
    sub-dword register bits at offset bits ``0..z-1`` (``z = log2(4 / bytes)``: the src stores
    whole VGPRs), then the dst's register bits, rows swizzled (``vector_first_design``).

    The dst then loads dword vectors whose dwords hold one of its elements in a lane-dependent
    slot (the other slots belong to other lanes): each dst VGPR is assembled by a ``v_perm_b32``
    with a per-lane selector, where reading sub-dword elements would need one load per element.
    A LayoutError when the src's low register bits are not sub-dword bits the dst lacks, or when
    the dst's lane and warp columns below the dword rule out such loads in every layout of this
    prefix (``_check_sub_dword_slots``, told from the prefix before any row is chosen)."""
    prefix, reps = _over_fetch_prefix(ctx)
    leads = [_lead(prefix, ctx.problem.src_cols), len(prefix)]
    return replace(_rows_swizzled(ctx, prefix, reps, leads, "src dwords, then dst registers (over-fetch)"),
                   over_fetch=True)


#: The orders of ``ordered_design``'s offset bits above its prefix: the tensor's own order (unit vectors
#: ascending), a side's columns (registers, lanes, warps) and a side's lanes first.
ORDERS = ("tensor", "src", "src lanes", "dst", "dst lanes")


def ordered_design(ctx: ConversionContext, prefix: list[int], reps: list[int], order: str) -> LdsDesign:
    """An unswizzled layout whose low offset bits are ``prefix`` and whose other offset bits are the unit
    vectors completing it (``_row_space``, as ``_rows_swizzled``'s span) in the order ``order``
    (``ORDERS``): the tensor's (ascending) or a side's columns' (a unit vector that is the side's
    register, lane or warp column ``j`` in the place of ``j`` in (registers, lanes, warps), or (lanes,
    registers, warps) for ``"src lanes"`` and ``"dst lanes"``; the others after them, ascending).

    Lane bits that keep their order at consecutive offset bits cost one shift term of the address
    programs (linlayout.synth.lane_arith), where a swizzled layout's rows and the sides' scattered lane
    bits cost a term each: among layouts of equal conflicts and accesses, such a layout's setup is
    cheaper (gfx942 i8 ``blocked[1x4,t16x4,o10]->mfma32``: 16 address VALU through linlayout.synth.swizzle's
    layout, 7 through the sub-dword bits then the tensor's order).  The planner prices every such layout
    with the others (``designs``)."""
    if order not in ORDERS:
        raise ValueError(f"order is one of {ORDERS}, not {order!r}")
    rest = _row_space(prefix, reps, ctx.problem.n_tensor_bits)
    return _ordered(ctx, prefix, _rest_in_order(ctx, rest, order), reps, order)


def _ordered(ctx: ConversionContext, prefix: list[int], rest: list[int], reps: list[int], order: str) -> LdsDesign:
    """``ordered_design``'s layout, its unit vectors ``rest`` given in the order ``order`` (``_rest_in_order``)."""
    n_off = len(prefix) + len(rest)
    return LdsDesign(prefix + rest + reps, n_off, len(reps), f"{order} order after a {len(prefix)}-bit prefix",
                     ctx.element_bytes << n_off)


def _rest_in_order(ctx: ConversionContext, rest: list[int], order: str,
                   place: dict[int, int] | None = None) -> list[int]:
    """The unit vectors ``rest`` (ascending, ``_row_space``) in ``ordered_design``'s order ``order``
    (``place``: ``_order_places(ctx, order)`` where known)."""
    if order == "tensor":
        return rest
    if place is None:
        place = _order_places(ctx, order)
    last = len(place)
    return sorted(rest, key=lambda u: (place.get(u, last), u))


def _order_places(ctx: ConversionContext, order: str) -> dict[int, int]:
    """Each tensor vector's place in the columns of ``order`` (not "tensor"): the side's (registers, lanes,
    warps), or (lanes, registers, warps) for a lanes-first order, the first place of a repeated one."""
    side, _, lanes_first = order.partition(" ")
    cols = ctx.problem.src_cols if side == "src" else ctx.problem.dst_cols
    seq = cols["lane"] + cols["register"] if lanes_first else cols["register"] + cols["lane"]
    place: dict[int, int] = {}
    for j, c in enumerate(seq + cols["warp"]):
        place.setdefault(c, j)
    return place


def lane_terms(ctx: ConversionContext, design: LdsDesign) -> int:
    """The shift terms of the lane parts of both sides' addresses through ``design``: per side, the distinct
    shifts ``o - b`` over the offset bits ``o`` of each lane column ``b``'s image (linlayout.synth.lane_arith's
    shift terms, before its column terms and fusions).  ``designs`` lists an ordered layout only where it
    has fewer than linlayout.synth.swizzle's, or as many and fewer ``warp_terms`` (it is offered for cheaper
    addresses)."""
    return _shift_terms(_lane_images(ctx, design.shared_cols))


def warp_terms(ctx: ConversionContext, shared_cols) -> int:
    """The shift terms of the warp parts of both sides' addresses through the layout of offset (and round)
    vectors ``shared_cols`` (an ``LdsDesign``'s): ``lane_terms``' count on the warp columns, the terms of
    the warp parts that linlayout.synth.cost.warp_part_ops prices (one SALU each, and an ``s_or_b32`` per
    further one).  ``_fewest_terms`` breaks its ties with it."""
    return _shift_terms(_lane_images(ctx, list(shared_cols), "warp"))


def _lane_images(ctx: ConversionContext, basis: list[int], kind: str = "lane") -> list[list[list[int]]]:
    """Per side (src, dst), per lane column (``kind`` "warp": per warp column), the offset (and round) bits of
    its image under the layout of offset basis ``basis``: the positions of the basis vectors that XOR to it."""
    src, dst = ctx.problem.src_cols[kind], ctx.problem.dst_cols[kind]
    images = [_set_bits(x) for x in f2.solve_many(basis, src + dst)]
    return [images[:len(src)], images[len(src):]]


def _set_bits(x: int) -> list[int]:
    """The set bits of ``x >= 0``, ascending."""
    out = []
    while x:
        low = x & -x
        out.append(low.bit_length() - 1)
        x ^= low
    return out


def _shift_terms(images: list[list[list[int]]], moved: list[int] | None = None) -> int:
    """``lane_terms`` of the lane images ``images`` (``_lane_images``), offset bit ``k`` taken as bit
    ``moved[k]`` where ``moved`` is given (the images of a layout whose offset bits are relabelled)."""
    if moved is not None:
        images = [[[moved[o] for o in bits] for bits in side] for side in images]
    return sum(len({o - b for b, bits in enumerate(side) for o in bits}) for side in images)


def _ordered_prefixes(ctx: ConversionContext, design: LdsDesign) -> list[list[int]]:
    """The prefixes of ``ordered_design`` taken from ``design`` (linlayout.synth.swizzle's): its sub-dword
    offset bits, and its leading offset bits in the span of one side's register columns (the widest
    access's vector), where longer; on a target of ``PER_PREFIX_FAMILIES`` each side's such leading bits
    (the two lengths, where they differ)."""
    cols, n = design.shared_cols, design.n_offset_bits
    zb = min(n, max(0, 2 - (ctx.element_bytes.bit_length() - 1)))
    vecs = []
    for side in (ctx.problem.src_cols, ctx.problem.dst_cols):
        regs = f2.Span([c for c in side["register"] if c])
        t = 0
        while t < n and regs.contains(cols[t]):
            t += 1
        vecs.append(max(zb, t))
    lengths = {zb, *vecs} if ctx.target.family in PER_PREFIX_FAMILIES else {zb, max(vecs)}
    return [cols[:k] for k in sorted(lengths)]


def _over_fetch_prefix(ctx: ConversionContext) -> tuple[list[int], list[int]]:
    """(low offset vectors, round vectors) of ``over_fetch_design``; a DesignRefused when it has none or
    its loads could not over-fetch."""
    z = (4 // ctx.element_bytes).bit_length() - 1
    src_regs, dst_regs = ctx.problem.src_cols["register"], ctx.problem.dst_cols["register"]
    if not z or len(src_regs) < z or f2.rank(src_regs[:z]) < z or all(c in dst_regs for c in src_regs[:z]):
        raise DesignRefused("over-fetch loads need sub-dword src register bits that are not dst register bits")
    reps = _round_bits(ctx)
    if any(c in reps for c in src_regs[:z]):
        raise DesignRefused("over-fetch loads: a sub-dword src register bit is a round bit")
    prefix = _register_run(dst_regs, src_regs[:z], reps, 2)
    if len(prefix) == z:
        raise DesignRefused("over-fetch loads: no dst register bit extends the dword")
    _check_sub_dword_slots(*_sub_dword_lows(ctx, prefix, reps))
    return prefix, reps


def _sub_dword_lows(ctx: ConversionContext, prefix: list[int], reps: list[int]) -> tuple[list[int], list[int]]:
    """The dst lane and the dst warp vectors' offset bits ``0..z-1`` (``z = log2(4 / bytes)``) in every
    layout whose low offset bits are ``prefix`` and whose round bits are ``reps`` (``_coordinates``: the
    rest of its offset basis spans ``_row_space``, whose coordinates lie above the prefix's)."""
    coords = _prefix_basis(prefix, reps)
    low = 4 // ctx.element_bytes - 1
    lanes, warps = ([c & low for c in _coordinates(coords, ctx.problem.dst_cols[dim])] for dim in ("lane", "warp"))
    return lanes, warps


def over_fetch_selector_valu(ctx: ConversionContext, lane_lows: list[int]) -> int:
    """A lower bound of the VALU building the per-lane ``v_perm_b32`` selectors (``valu_lane_selector`` of
    cost.estimate_overhead) of every round trip with over-fetching loads whose dst lane columns have the
    offset bits below the dword ``lane_lows`` (0 on PTX targets, where ptxas builds ``prmt``'s).

    A dst register's element sits in slot ``(warp_lane[0, l] ^ C(r)) & (p - 1)`` of its loaded dword
    (``_over_fetch_slot``), lane-dependent exactly where some lane column has low bits: the set ``S`` of
    those lane bits (the warps agree, and the lane columns' low bits are one pattern ``d``,
    ``_check_sub_dword_slots``, so the lanes' slots take two values ``a`` and ``a ^ d``).  Every dst
    dword is gathered (``build_lds``: ``gather_dwords``), and one holding such an element needs it from
    slots that differ between the lanes: ``gather_dword`` splits it until a part reads at most two values,
    whose two lane patterns (the condition ``XOR_{b in S} l_b`` or its complement) give selectors that
    differ at that slot, so ``Program.perm_select`` makes a ``PermSelect`` (live: its dword is an output)
    with a ``"lanes"`` choice on ``S`` (lane_choices.choice_form), which takes at least
    ``lane_choices.least_lanes_choice_valu(|S|, target)`` (its mask, a ``v_and_b32`` and a ``v_add_u32``, less a
    ``v_xor_b32`` fused where the target has ``v_bitop3_b32``)."""
    bits = sum(1 for c in lane_lows if c)
    return least_lanes_choice_valu(bits, ctx.target) if bits and ctx.target.lds_isa != "ptx" else 0


def _check_sub_dword_slots(lanes: list[int], warps: list[int]) -> None:
    """Over-fetching loads take the dst lane and warp columns' offset bits below the dword (``lanes``,
    ``warps``): a LayoutError unless no warp column and the lane columns on exactly one pattern touch
    them (``_over_fetch_groups``)."""
    if any(warps) or f2.rank(lanes) != 1:
        raise DesignRefused("over-fetch loads need lane (not warp) columns on one sub-dword pattern")


def prefix_floor(ctx: ConversionContext, prefix: list[int], reps: list[int], over_fetch: bool = False) -> float:
    """A lower bound of ``LdsAccesses.floor`` for every round trip through a layout whose low offset
    bits are the tensor vectors ``prefix`` and whose round bits are ``reps``, the other offset bits
    spanning ``_row_space(prefix, reps)`` (``_rows_swizzled``: ``vector_first_design``,
    ``over_fetch_design``; ``ordered_design``).

    A side moves ``2**t`` elements per access only if offset bits ``0..t-1`` are images of its
    register vectors, so ``t`` stops at the first prefix vector outside the span of its register
    vectors (beyond the prefix: the widest, 16 bytes; over-fetching loads: any width).  Every
    register a side moves (``2**_moved_rank``: ``_Side.n_moved``) is moved once, an access of
    ``w`` bytes carrying ``w / bytes`` elements at least at its cost with the least conflict
    degree any such layout can give it (``_conflict_floor``; 1 for over-fetching loads), a
    ds_read2 / ds_write2 counted as two accesses sharing one issue; plus the issue of the barriers
    (``_barrier_issue``: as many for every layout of these round bits) and two DS latency levels.  A
    side the target has matrix accesses for (``ldmatrix``/``stmatrix``: rows anywhere, up to 16
    bytes per lane, at a 16-byte access's wavefronts) counts as any width at degree 1 too.

    The issue and the LDS-pipe cycles are bounded apart (``_cheapest_per_element``: each the
    least per element over the widths allowed) and joined by ``CostModel.path_floor`` with the
    latency, as ``LdsAccesses.floor`` joins its own parts: ``issue floor + pipe floor + latency``,
    where the pipes overlap ``max(issue floor, pipe floor) + latency``; each part of this bound
    is at most that part of the floor, and ``path_floor`` does not decrease in any part."""
    return _DeferredBounds.of(ctx, *_prefix_parts(ctx, prefix, reps, over_fetch), len(reps)).floor


def _prefix_parts(ctx: ConversionContext, prefix: list[int], reps: list[int], over_fetch: bool) -> tuple[float, float]:
    """(issue, LDS-pipe) floors of the accesses alone (no barrier) of ``prefix_floor``'s round trips."""
    prob, cm, element_bytes = ctx.problem, ctx.cost_model, ctx.element_bytes
    model = lds_model(ctx.arch)
    issue = pipe = 0.0
    for (store, cols, any_width, t_up), lanes in zip(*_prefix_sides(ctx, prefix, reps, over_fetch)):
        moved = 1 << _moved_rank(cols["register"], cols["lane"] + cols["warp"], store)

        def degree(t: int, store=store, lanes=lanes) -> float:
            return _conflict_floor(model, store, element_bytes, t, lanes, len(prefix), len(reps), prob.n_tensor_bits)

        side_issue, side_pipe = _cheapest_per_element(cm, "lds_write" if store else "lds_read", element_bytes,
                                                      range(t_up + 1), None if any_width else degree)
        issue += moved * side_issue
        pipe += moved * side_pipe
    return issue, pipe


prefix_sides_cache = caches.cache("synth.lds_path.prefix_sides")


def _prefix_sides(ctx: ConversionContext, prefix: list[int], reps: list[int],
                  over_fetch: bool) -> tuple[list[tuple], list[list[int]]]:
    """``_side_widths(ctx, prefix, over_fetch)`` and each side's lane columns in ``_coordinates`` of
    ``_prefix_basis(prefix, reps)`` (src, then dst), read only: the prefix bounds of a deferred design
    (``_prefix_parts``, ``prefix_address_valu``, ``prefix_instructions``) each ask them.  Cached per
    (problem, element size, arch, prefix, round bits, over-fetch)."""
    key = (ctx.problem.key(), ctx.element_bytes, ctx.arch, tuple(prefix), tuple(reps), over_fetch)
    got = prefix_sides_cache.get(key)
    if got is None:
        coords = _prefix_basis(prefix, reps)
        widths = _side_widths(ctx, prefix, over_fetch)
        got = prefix_sides_cache[key] = (widths, [_coordinates(coords, cols["lane"]) for _, cols, _, _ in widths])
    return got


def _side_widths(ctx: ConversionContext, prefix: list[int], over_fetch: bool) -> list[tuple]:
    """Per side of a layout whose low offset bits are ``prefix`` (``prefix_floor``): (store?, the
    side's columns, any width?, the most vector bits ``t`` of its accesses).  A side moves
    ``2**t`` elements per access only if offset bits ``0..t-1`` are images of its register
    vectors, so ``t`` stops at the first prefix vector outside their span
    (beyond the prefix: the widest, 16 bytes); a side of any width (matrix accesses, over-fetching
    loads) takes the widest."""
    prob = ctx.problem
    t_max = (16 // ctx.element_bytes).bit_length() - 1
    matrix = ctx.target.has_matrix_access
    out = []
    for store, cols, any_width in ((True, prob.src_cols, matrix(True)),
                                   (False, prob.dst_cols, over_fetch or matrix(False))):
        regs = _registers(tuple(cols["register"]))[1]  # (read only)
        t_up = t_max
        if not any_width:
            t_up = next((i for i, v in enumerate(prefix[:t_max]) if not regs.contains(v)), t_max)
        out.append((store, cols, any_width, t_up))
    return out


def _moved_rank(registers: list[int], lanes_warps: list[int], stores: bool) -> int:
    """``log2`` of the registers a side moves through every shared layout, the one statement of that
    count (``_Side.n_moved`` and ``_Side.has_store_twins`` derive from it), from the side's register
    columns ``registers`` (spanning ``R``) and lane and warp columns ``lanes_warps`` (spanning ``V``),
    as tensor vectors or as their images under any shared layout's inverse (an isomorphism: the
    ranks are the same).  A load side moves every distinct register, one per member of ``R`` (its
    duplicates, registers of equal images, are not loaded): ``rank R``.  The store side moves one
    register per class of store twins (``_Side.store_keys``), the classes of register images modulo
    ``V``: ``dim R - dim(R & V) = rank(R + V) - rank(V)``."""
    return _moved_rank_of(tuple(registers), tuple(lanes_warps), stores)


# each side's columns are asked by every design's bounds: about 4 entries a layout pair, so 2048 hold
# the few hundred pairs a compile session plans (linlayout.caches)
@caches.memoize("synth.lds_path.moved_rank", size=2048)
def _moved_rank_of(registers: tuple[int, ...], lanes_warps: tuple[int, ...], stores: bool) -> int:
    """``_moved_rank`` of the columns as tuples."""
    if not stores:
        return f2.rank(registers)
    return f2.rank(registers + lanes_warps) - f2.rank(lanes_warps)


def _stored_src(prob: Problem) -> LinearLayout:
    """The src as the round trip stores it: the writer ``shared_layout`` gives the swizzle search.
    Without store twins, the src itself; with them, the src without the register bits of store twins,
    so that the search counts only the registers the stores write (in instructions, and so in bank
    cycles) and asks only their vectors, the lanes and the warps to be aligned.

    Register bit ``j`` is kept when its tensor vector is outside ``V`` (the span of the lane and warp
    columns) plus the span of the bits kept before it.  The kept vectors are then a basis of ``R``
    (the register columns' span) modulo ``V``: ``rank(R + V) - rank V = _moved_rank`` of them, whose
    ``2**_moved_rank`` registers hold one register of each class of store twins, the count
    ``_Side.n_moved`` the stores write, and with the lanes and warps cover what the src covers.  Their
    cost under a shared layout is the search's: with offset bits ``0 .. k-1`` kept register vectors
    and the lanes and warps aligned, the stores can move ``2**k`` registers per lane (``_vector_bits``
    solves for them in the register span and asks only the lane and warp columns to be aligned), so
    ``n_moved / 2**k`` stores (``_stored_once``), each with the lanes' bank conflicts whatever its
    registers (``C(l) ^ C(r)``: a register XORs every lane's offset with one constant, which keeps
    their differences).  A src without store twins (``_moved_rank = rank R``) is given whole, its
    duplicates included (register bits dependent on the ones before them, which the search counts, as
    it does the dst's), so its plans do not change."""
    cols = prob.src_cols
    lanes_warps = cols["lane"] + cols["warp"]
    if _moved_rank(cols["register"], lanes_warps, True) == f2.rank(cols["register"]):
        return prob.src
    kept = f2.Echelon()
    for c in lanes_warps:
        kept.insert(c)
    registers = [b for b, c in zip(prob.src.bases["register"], cols["register"]) if kept.insert(c)]
    return LinearLayout(dict(prob.src.bases, register=registers), prob.src.out_dims)


def _prefix_basis(prefix: list[int], reps: list[int]) -> f2.Echelon:
    """``prefix + reps`` inserted in order into an echelon basis (``_coordinates``' basis)."""
    coords = f2.Echelon()
    for v in prefix + reps:
        coords.insert(v)
    return coords


def prefix_instructions(ctx: ConversionContext, prefix: list[int], reps: list[int], over_fetch: bool = False,
                        address_valu: int | None = None) -> int:
    """A lower bound of the instructions with setup (``LdsAccesses.plan_floor``) of every round trip
    through a layout whose low offset bits are the tensor vectors ``prefix`` and whose round bits
    are ``reps`` (``prefix_floor``'s layouts).

    A side of plain accesses moves ``2**m`` registers (``m = _moved_rank``: ``_Side.n_moved``)
    once, ``2**t`` of them per access (the accesses of vector bits ``t`` partition them,
    ``_groups``), ``t`` at most ``_side_widths``'s, two accesses of 4 or 8 bytes per ds_read2 /
    ds_write2 where the target pairs (``_pairs``): at least ``ceil(2**(m - t) / 2)`` of
    those instructions, ``2**(m - t)`` of wider or narrower ones, plus the side's ``v_perm_b32``
    of such accesses (``_least_perms``), the least over ``t``; a side of any width at least one.  Then the barriers (``2 * 2**len(reps) - 1`` where there are any:
    warps exchange data whatever the layout, ``_crosses_warps``, or the target's lanes are not in
    lockstep: ``LdsAccesses.barrier_scope``), the VALU ops forming the first store's address and,
    where its address patterns differ from every store's, the first load's (``prefix_address_valu``,
    or ``address_valu`` when given), and the ``s_waitcnt`` of ``least_waits``."""
    barriers = _barriers(ctx, len(reps))
    if address_valu is None:
        address_valu = prefix_address_valu(ctx, prefix, reps, over_fetch)
    return (sum(_side_instructions(ctx, prefix, reps, over_fetch)) + barriers + address_valu
            + least_waits(ctx, (1 << len(reps)) if barriers else 0))


def _side_instructions(ctx: ConversionContext, prefix: list[int], reps: list[int], over_fetch: bool) -> list[int]:
    """Per side (src stores, dst loads) of ``prefix_instructions``' layouts, a lower bound of its LDS
    instructions and ``v_perm_b32`` steps (``LdsAccesses.stores`` and ``s_perms``, ``loads`` and
    ``d_perms``): the least over the vector bits ``t`` of the accesses (``prefix_instructions``) plus
    ``_least_perms``; one for a side of any width."""
    element_bytes, pairs = ctx.element_bytes, ctx.target.has_lds_pair
    out = []
    for store, cols, any_width, t_up in _prefix_sides(ctx, prefix, reps, over_fetch)[0]:
        if any_width:
            out.append(1)
            continue
        per_pair = [2 if pairs and element_bytes << t in (4, 8) else 1 for t in range(t_up + 1)]
        moved = 1 << _moved_rank(cols["register"], cols["lane"] + cols["warp"], store)
        perms = _least_perms(ctx, prefix, cols, store, moved, t_up)
        out.append(min(-(-(moved >> t) // per_pair[t]) + perms[t] for t in range(t_up + 1)))
    return out


def _least_perms(ctx: ConversionContext, prefix: list[int], cols: dict, store: bool, moved: int,
                 t_up: int) -> list[int]:
    """Per vector bits ``t = 0 .. t_up``: a lower bound of the ``v_perm_b32`` steps that
    ``LdsAccesses.register_steps`` counts for a side of plain accesses of ``t`` vector bits (``s_perms``
    of the stores, ``d_perms`` of the loads; none on PTX targets or for whole-VGPR elements) through
    every layout whose low offset bits are ``prefix``, the side moving ``moved`` registers
    (``_moved_rank``), its columns ``cols``.

    With ``p`` elements per dword (``z = log2 p``), an access of at least a dword
    (``element_bytes * 2**t >= 4``) repacks every dword it moves (``_perms_side``: ``len(bases) * 2**t
    / p`` less the chunks in order, ``_in_order_chunks``) unless its vector bits' registers
    ``span[y]`` are ``y`` for ``y < p``, that is, the register vectors ``delta_i`` of offset bits ``i < z``
    (``_vector_bits``: the pivot solutions for the tensor vectors ``prefix[i]``) are the register
    bits ``i`` themselves.  Where ``prefix`` has those ``z`` vectors and some ``delta_i`` is not, no
    chunk is in order: at least ``(moved >> t) * 2**t / p`` (the accesses are at least ``moved >> t``:
    they partition the registers moved).  The loads' are counted only where the dst has no duplicate
    registers (its ``moved`` are all its registers; else ``d_perms`` is 0), and there loads narrower
    than a dword repack every dst dword (``d_perms``: ``len(reg_image) / p``); narrower stores may
    store in place (``_narrow_in_place``): 0.  A dst held one element per VGPR (``ctx.dst_unpacked``)
    counts none for its loads (narrow loads leave each element in place)."""
    p = ctx.slots_per_dword
    out = [0] * (t_up + 1)
    if p == 1 or ctx.target.lds_isa == "ptx":
        return out
    z = p.bit_length() - 1
    regs = _registers(tuple(cols["register"]))[1]
    in_order = len(prefix) < z or all(_solve(regs, prefix[i]) == 1 << i for i in range(z))
    no_duplicates = moved == 1 << len(cols["register"])
    if not store and (not no_duplicates or ctx.dst_unpacked):  # (loads: d_perms counts none, or none for sure)
        return out
    for t in range(t_up + 1):
        if ctx.element_bytes << t >= 4:
            out[t] = 0 if in_order else (moved >> t) * ((1 << t) // p)
        elif not store:
            out[t] = moved // p
    return out


def _load_perms(ctx: ConversionContext, packed_perms: int, width_bytes: int, n_dst: int) -> int:
    """``LdsAccesses.d_perms`` of loads of ``width_bytes`` per lane into a dst of ``n_dst`` distinct
    registers: the dst dwords they gather (``packed_perms``, ``_choose_vectors``' for loads of a dword or
    more; every dst dword for narrower ones), or of a dst held one element per VGPR
    (``ctx.dst_unpacked``; ``in_wave.unpacked_outputs``) the elements moved down to the low bits: none
    for narrower loads (each element alone at position 0), those in the upper ``p - 1`` of the ``p``
    slots of each loaded dword for wider ones."""
    p = ctx.slots_per_dword
    if ctx.dst_unpacked:
        return 0 if width_bytes < 4 else n_dst - n_dst // p
    return packed_perms if width_bytes >= 4 else n_dst // p


def prefix_address_valu(ctx: ConversionContext, prefix: list[int], reps: list[int], over_fetch: bool = False) -> int:
    """A lower bound of the VALU ops forming the LDS addresses (``LdsAccesses.address_valu``) of
    every round trip through a layout whose low offset bits are ``prefix`` and whose round bits are
    ``reps`` (``prefix_floor``'s layouts): ``least_address_valu`` for the first access (a store: no
    address is formed before it, cost.lds_address_valu), twice that where the first load's address
    can differ from every store's neither by a constant added nor by one XORed.

    Warp 0's byte address of a plain access at lane ``x`` is ``a(x) = ((C(x) ^ I) & M) * bytes``
    (``_pair_keys``), ``C`` linear.  Its XOR pattern ``a(x) ^ a(0) = (C(x) & M) * bytes`` is the same
    for every access of a side.  With ``g_k`` the lane functional of offset bit ``k`` (bit ``j``: bit
    ``k`` of lane column ``j``'s image) and ``s_k = +1`` where ``I``'s bit ``k`` is clear, else ``-1``,
    ``a(x) - a(0) = bytes * sum_k s_k 2**k g_k(x)``; writing ``g(x) = (1 - (-1)**<g, x>) / 2``, the
    characters ``(-1)**<g, x>`` of distinct ``g`` being linearly independent, the difference pattern
    fixes ``A(g) = sum over {k: g_k = g} of s_k 2**k`` for every nonzero ``g``, and so the least such
    ``k`` (the 2-adic valuation of ``A(g)``; none when ``A(g) = 0``), whatever the signs.  Below
    ``len(prefix)`` the bits of an image are the column's coordinates along the prefix
    (``_coordinates``); above it the rows' (unknown before the layout is made).  So where some ``g``
    has its least prefix bit on one side and another (or none) on the other, the least ``k`` differs,
    hence every store's difference pattern differs from the first load's, and so do the XOR
    patterns (``g_k`` differs): that load is a new base of ``least_address_valu`` ops or more
    (``cost._AddressBases``), and every round trip's first round has stores, then loads.  Only for
    plain accesses on both sides (no matrix access, no over-fetching loads)."""
    if over_fetch or ctx.target.has_matrix_access(True) or ctx.target.has_matrix_access(False):
        return least_address_valu(ctx)
    low = (1 << len(prefix)) - 1
    sides = [[c & low for c in lanes] for lanes in _prefix_sides(ctx, prefix, reps, over_fetch)[1]]
    if sides[0] == sides[1]:
        return least_address_valu(ctx)
    least = []  # per side: lane functional -> its least prefix offset bit
    for lanes in sides:
        first: dict[int, int] = {}
        for k, g in enumerate(f2.transpose(lanes, len(prefix))):  # g: bit j is bit k of lane column j's
            if g:
                first.setdefault(g, k)
        least.append(first)
    return least_address_valu(ctx) * (2 if least[0] != least[1] else 1)


def _barrier_scope(cross: bool, lockstep_lanes: bool) -> str | None:
    """``LdsAccesses.barrier_scope`` of a round trip whose warps exchange data (``cross``) or not, on a
    target whose lanes are in lockstep or not."""
    if cross:
        return "workgroup"
    return None if lockstep_lanes else "warp"


def _barriers(ctx: ConversionContext, n_rep_bits: int) -> int:
    """The barriers of every round trip through a layout of ``n_rep_bits`` round bits: one between
    each round's stores and its loads and one between rounds (``2 * 2**n_rep_bits - 1``) where there
    are any (``_barrier_scope``: whether warps exchange data is the same for every layout of as many
    rounds, ``_exchanges``)."""
    scope = _barrier_scope(_exchanges(ctx, n_rep_bits), ctx.target.lockstep_lanes)
    return 0 if scope is None else (2 << n_rep_bits) - 1


def least_waits(ctx: ConversionContext, barrier_rounds: int) -> int:
    """A lower bound of the ``s_waitcnt`` (cost.estimate_overhead) of a round trip whose ``barrier_rounds``
    rounds each end their stores with a barrier (0: no barriers): on AMD targets one per such round
    (cost.lgkm_waits: the wait before the barrier that follows stores), on PTX targets the round
    trip's DS depth, ROUND_TRIP_DS_DEPTH (the scoreboard waits count its levels)."""
    return ROUND_TRIP_DS_DEPTH if ctx.target.lds_isa == "ptx" else barrier_rounds


def _barrier_issue(ctx: ConversionContext, n_rep_bits: int) -> float:
    """The issue cycles of ``_barriers(ctx, n_rep_bits)`` (``LdsAccesses.floor`` counts them)."""
    n = _barriers(ctx, n_rep_bits)
    if not n:
        return 0.0
    scope = _barrier_scope(_exchanges(ctx, n_rep_bits), ctx.target.lockstep_lanes)
    return ctx.cost_model.instruction(BARRIER_SCOPES[scope]) * n


def _coordinates(basis: f2.Echelon, xs: list[int]) -> list[int]:
    """Each tensor vector ``x = p + y`` of ``xs``, ``p`` in the span of the vectors inserted into
    ``basis`` (``prefix + reps``) and ``y`` in the span of ``_row_space`` (the unit vectors at the
    bits that lead no vector of that span, f2.complement's choice): ``p``'s coefficients, then
    ``y``'s bits (``x`` reduced against ``basis``: no bit at a leading bit) shifted above them."""
    shift = basis.rank
    return [p | (y << shift) for y, p in map(basis.reduce, xs)]


def _conflict_floor(model, store: bool, element_bytes: int, t: int, lanes: list[int], n_p: int, n_r: int,
                    n: int) -> float:
    """A lower bound of the bank-conflict degree (cost.lds_conflict_degree) of a side's access of
    ``element_bytes << t`` bytes (vector bits offset bits ``0..t-1``) through any layout of ``n`` tensor bits
    whose offset basis is ``prefix`` (``n_p`` vectors; ``t <= n_p``, else 1) then a basis of
    ``span(_row_space)``, in any order, with ``n_r`` round bits ``reps``.  ``lanes``: the side's
    lane vectors in ``_coordinates``.

    ``_coordinates`` write a tensor vector ``x = p + r + y`` (``p``, ``r``, ``y`` in the spans of
    ``prefix``, ``reps``, ``_row_space``) as the coefficients of ``p`` and ``r`` and the bits of
    ``y``.  ``x``'s offset is ``p``'s coefficients at positions ``0..n_p-1`` and ``L(y)`` above them
    (``L`` an isomorphism fixed by the layout; rounds are no offset bits).  By linlayout.synth.banks, every
    phase of a linear access costs ``2**(dim U - rank pi(U))`` cycles (the degree): ``U`` = the
    dwords one phase touches, the offsets of ``M`` = span(the phase lanes' vectors,
    ``prefix[:t]``) at the dword positions, ``pi`` keeping the bank positions.  With ``s`` / ``k``
    the positions above the prefix inside a dword / at a bank: ``U`` drops ``r``, ``p``'s
    coefficients inside a dword and ``s`` positions of ``L(y)``, so ``dim U >= rank (p at dword
    positions, y)(M) - s``; ``pi(U)`` keeps ``A`` = ``p``'s coefficients at bank positions and ``k``
    positions of ``L(y)``, so ``rank pi(U) = rank A(M) + rank L(y)_bank(M ∩ ker A) <= rank A(M) +
    min(k, rank (A, y)(M) - rank A(M))``."""
    if t > n_p:
        return 1.0
    try:
        op = model.op(_lds_op_name(model.arch, store, element_bytes << t))
    except LayoutError:
        return 1.0
    m = [f2.apply_columns(lanes, mask) for mask in op.phase_subspace()] + [1 << i for i in range(t)]
    shift = (element_bytes.bit_length() - 1) - 2  # offset bit i is dword bit i + shift
    low, top = max(0, -shift), op.bank_bits - shift  # positions below low: inside a dword; low..top-1: bank
    n_off = n - n_r
    s = max(0, min(n_off, low) - n_p)
    k = max(0, min(n_off, top) - max(n_p, low))
    dword_p = ((1 << n_p) - 1) & -(1 << low)  # p's coefficients at dword / bank positions
    bank_p = dword_p & ((1 << top) - 1)
    y = -1 << (n_p + n_r)
    a = f2.rank([x & bank_p for x in m])
    dim_u = f2.rank([x & (dword_p | y) for x in m]) - s
    return float(1 << max(0, dim_u - a - min(k, f2.rank([x & (bank_p | y) for x in m]) - a)))


def _cheapest_per_element(cm, kind: str, element_bytes: int, ts,
                          degree: Callable[[int], float] | None = None) -> tuple[float, float]:
    """The least (issue, LDS-pipe) cycles per element of a ``kind`` access of ``element_bytes << t``
    bytes over the ``t`` in ``ts`` at bank-conflict degree ``degree(t)`` (1 when None), a ds_read2 /
    ds_write2 counted as two accesses sharing one issue: per element ``ds_issue`` (half of it
    paired) and the access's cycles beyond its issue, over ``2**t``.

    Summed (``CostModel.path_floor`` adds the parts), the parts of the width of least sum; where
    the pipes overlap, the least issue and the least pipe cycles, each over every width (the
    plan's accesses need not all take one width's parts, and each part bounds its own).  A degree
    raises only the pipe cycles, so it is asked for a width only when its conflict-free parts beat
    the least so far."""
    def per_element(t: int, c: float) -> tuple[float, float]:
        issue = cm.ds_issue / 2 if element_bytes << t in (4, 8) else cm.ds_issue
        return issue / (1 << t), (cm.instruction(kind, element_bytes << t, c) - cm.ds_issue) / (1 << t)

    def better(parts: tuple[float, float], least: tuple[float, float]) -> bool:
        return parts[1] < least[1] if cm.pipe_overlap else sum(parts) < sum(least)

    least = (float("inf"), float("inf"))
    for t in sorted(ts, reverse=True):  # the widest first: usually the cheapest
        parts = per_element(t, 1.0)
        if degree is not None and better(parts, least):
            parts = per_element(t, degree(t))
        if cm.pipe_overlap:
            least = (min(least[0], parts[0]), min(least[1], parts[1]))
        elif better(parts, least):
            least = parts
    return least


def _round_bits(ctx: ConversionContext) -> list[int]:
    """The round vectors ``R``: register bits common to both sides that become rounds until the tile fits
    the LDS budget (``bytes << (n - |R|) <= budget``), the last common ones first, skipping any that cannot
    join them (``_valid_rounds``); a DesignRefused where too few can.

    Which bits can be rounds.  A round bit is a nonzero tensor vector that is a register column of both
    sides of the flattened problem (``ConversionContext.problem``; a broadcast bit, a zero column, is
    none), and the round vectors together meet ``L``, the span of both sides' lane and warp vectors, in 0
    only (``_valid_rounds``).  Those sets are the independent sets of a matroid (the common columns'
    images in ``F^n / L``, independent), so this greedy choice finds ``need`` round bits exactly when some
    set of ``need`` does: a refusal here means no split of this kind exists.  And a valid ``R`` always has
    a layout: ``lane_space_design``'s offset space holds ``L`` and completes ``span(R)``."""
    prob, element_bytes, budget = ctx.problem, ctx.element_bytes, ctx.lds_budget_bytes
    n = prob.n_tensor_bits
    reps: list[int] = []
    if (element_bytes << n) > budget:
        common = [c for c in prob.src_cols["register"] if c in prob.dst_cols["register"] and c]
        while (element_bytes << (n - len(reps))) > budget:
            while common and not _valid_rounds(prob, reps + [common[-1]]):
                common.pop()
            if not common:
                raise DesignRefused(f"the tile needs {element_bytes << n} bytes of LDS; {ctx.budget_text} allows "
                                  f"no split into rounds (too few register bits common to src and dst that no lane "
                                  f"or warp bit also holds)")
            reps.append(common.pop())
    return reps


def _valid_rounds(prob: Problem, reps: list[int]) -> bool:
    """Can the register vectors ``reps`` be rounds?  A round is a coset of the offset space, so
    every lane and warp vector of both sides must lie in one complement of ``span(reps)``: the
    lane and warp vectors span nothing of it (else a lane would hold elements of two rounds in
    one register).  Register vectors may have round components: they pick their round.  The offset
    space of a layout must then hold every lane and warp vector, which not every layout's does
    (``_check_rounds``; ``lane_space_design``'s does)."""
    others = [c for cols in (prob.src_cols, prob.dst_cols) for k in ("lane", "warp") for c in cols[k] if c]
    return f2.rank(others + reps) == f2.rank(others) + len(reps)


def _register_run(regs: list[int], start: list[int], reps: list[int], n_more: int) -> list[int]:
    """``start`` extended by up to ``n_more`` of ``regs`` in order (skipping those in ``start``),
    stopping at the first zero, round or dependent column."""
    prefix = list(start)
    for c in regs:
        if c in start:  # a sub-dword bit both sides hold as a register bit: already placed
            continue
        if n_more == 0 or not c or c in reps or f2.in_span(prefix + reps, c):
            break
        prefix.append(c)
        n_more -= 1
    return prefix


def _lead(prefix: list[int], cols: dict) -> int:
    """How many leading offset bits (``prefix``) are the side's register bits: its access vector."""
    t = 0
    while t < len(prefix) and prefix[t] in cols["register"]:
        t += 1
    return t


order_cache = caches.cache("synth.lds_path.offset_order")


def _rows_swizzled(ctx: ConversionContext, prefix: list[int], reps: list[int], leads: list[int],
                   source: str) -> LdsDesign:
    """``prefix`` at the low offset bits, then bank bits, then rows chosen greedily outside each
    side's phase footprint (``leads``: the prefix bits one store / one load covers).  The offset
    order is cached per (problem, prefix, rounds, leads): the two register-first layouts often
    have the same prefix."""
    key = (ctx.problem.key(), ctx.element_bytes, ctx.arch, tuple(prefix), tuple(reps), tuple(leads))
    if key not in order_cache:
        order_cache[key] = _swizzled_order(ctx, prefix, reps, leads)
    order = order_cache[key]
    return LdsDesign(order + reps, len(order), len(reps), source, ctx.element_bytes << len(order))


def _swizzled_order(ctx: ConversionContext, prefix: list[int], reps: list[int], leads: list[int]) -> list[int]:
    """The offset vectors of ``_rows_swizzled``: ``prefix``, bank bits, rows."""
    n = ctx.problem.n_tensor_bits
    n_off = n - len(reps)
    row_start = lds_model(ctx.arch).bank_bits + 5 - ctx.element_bits.bit_length() + 1
    r_bits = max(0, n_off - max(row_start, len(prefix)))

    m_w, m_r = _footprints(ctx, prefix, leads)
    # rows come from a complement of the prefix (unit vectors and their pairs) so that lane and warp
    # vectors outside the prefix keep no prefix component: the vector accesses stay aligned
    q = _row_space(prefix, reps, n)
    cands = q + [a ^ b for i, a in enumerate(q) for b in q[i + 1:]]
    rows = _greedy_rows(cands, [prefix + reps, m_w, m_r], r_bits)
    bank = f2.complement(prefix + reps + rows, n, q)
    return prefix + bank + rows


def _footprints(ctx: ConversionContext, prefix: list[int], leads: list[int]) -> tuple[list[int], list[int]]:
    """The phase footprints (store, load) of a layout whose low offset bits are ``prefix``: per side, a
    basis of the tensor vectors one phase of its widest access touches (its phase lanes' columns, the
    access's own vector: the first ``leads[side]`` prefix bits up to 16 bytes, and the sub-dword prefix
    bits).  Two lanes of one phase meet in one bank on different rows only through a row vector in
    that span (``_swizzled_order``, ``_swizzled_ordered``)."""
    prob, model = ctx.problem, lds_model(ctx.arch)
    t_max = (16 // ctx.element_bytes).bit_length() - 1
    zb = max(0, 5 - ctx.element_bits.bit_length() + 1)

    def footprint(cols: dict, write: bool, lead: int) -> list[int]:
        t = min(lead, t_max)
        name = ctx.target.lds_op_name(write, ctx.element_bytes << t)
        try:
            kern = model.op(name).phase_subspace()
        except LayoutError:
            kern = []
        lane_span = span_values(cols["lane"])  # entry x: the XOR of the lane columns of x's set bits
        lanes = [lane_span[mask & (len(lane_span) - 1)] for mask in kern]
        return f2.image_basis(lanes + prefix[:t] + prefix[:zb])

    return footprint(prob.src_cols, True, leads[0]), footprint(prob.dst_cols, False, leads[1])


def _swizzled_ordered(ctx: ConversionContext, offsets: list[int], reps: list[int], n_prefix: int,
                      footprints: dict | None = None) -> list[tuple[int, list[int]]]:
    """The swizzles of an ordered layout (``ordered_design``: offset vectors ``offsets``, the first
    ``n_prefix`` its prefix; round vectors ``reps``) by a fixed shift: per ``shift`` (1, 2, ...), the
    layout whose row offset bit ``k`` (at or above the bank bits and the prefix) holding a vector of
    the phase footprints (``_footprints``, with the rows below it) becomes that vector XOR the one of
    offset bit ``k - shift``, listed (``(shift, offset vectors)``) where every such row has its partner
    above the prefix and below the rows and leaves both footprints so: no two lanes of one phase meet
    in one bank on different rows (``_swizzled_order``'s argument).  The first held row must move, so
    the shifts tried are those that put its partner in range.  None listed where no row is held (the
    ordered layout is conflict-free so already) or no shift frees every held row.

    Why a fixed shift.  A lane column whose image has offset bit ``k`` also gets ``k - shift``, and lane
    bits at consecutive rows their partners at consecutive bank bits: the address programs gain one
    shift term per run of such lanes (linlayout.synth.lane_arith), where linlayout.synth.swizzle's rows and
    the register-first layouts' pair rows cost a term each (gfx90a fp32 ``blocked[1x4,t4x16,o10]->mfma16T``,
    4 waves: 12 address VALU in place of 22, the accesses as conflict-free).  The partners lie above
    the prefix, so that the lane and warp vectors keep no prefix component (the vector accesses stay
    aligned).  ``footprints``: a dict of the footprints worked out by earlier calls on the same problem
    (filled here), keyed by what they depend on."""
    n_off = len(offsets)
    zb = max(0, 5 - ctx.element_bits.bit_length() + 1)  # the sub-dword offset bits
    row_start = max(lds_model(ctx.arch).bank_bits + zb, n_prefix)
    if row_start >= n_off:
        return []
    t_max = (16 // ctx.element_bytes).bit_length() - 1
    leads = [min(_lead(offsets, ctx.problem.src_cols), t_max), min(_lead(offsets, ctx.problem.dst_cols), t_max)]
    key = (tuple(offsets[:max(leads + [zb])]), tuple(leads))  # (_footprints reads these alone)
    if footprints is None or key not in footprints:
        got = _footprints(ctx, offsets, leads)
        if footprints is not None:
            footprints[key] = got
    else:
        got = footprints[key]
    store, load = (f2.Span(m) for m in got)  # (two named spans, tested in line: the generation's hot loop)
    first = row_start  # the first row held: the rows below it stay, whatever the shift
    while first < n_off and not (store.contains(offsets[first]) or load.contains(offsets[first])):
        store.insert(offsets[first])
        load.insert(offsets[first])
        first += 1
    if first == n_off:  # no row is held: the ordered layout is conflict-free so
        return []
    out = []
    for shift in range(max(1, first - row_start + 1), first - n_prefix + 1):  # (first's partner in range)
        grown_store, grown_load = store.copy(), load.copy()
        rows: list[int] = []
        for k in range(first, n_off):
            u, partner = offsets[k], k - shift
            if grown_store.contains(u) or grown_load.contains(u):
                if not n_prefix <= partner < row_start:
                    break
                u ^= offsets[partner]
                if grown_store.contains(u) or grown_load.contains(u):
                    break
            rows.append(u)
            grown_store.insert(u)
            grown_load.insert(u)
        else:
            out.append((shift, offsets[:first] + rows))
    return out


def _row_space(prefix: list[int], reps: list[int], n: int) -> list[int]:
    """The unit vectors completing ``prefix + reps`` to all ``n`` tensor bits: ``_swizzled_order``'s
    bank bits and rows span them (``prefix_floor`` relies on that)."""
    return f2.complement(prefix + reps, n)


def _greedy_rows(cands: list[int], spaces: list[list[int]], r_bits: int) -> list[int]:
    """``r_bits`` rows picked in turn from ``cands``: the first candidate outside ``spaces[0]`` that
    lies in the fewest of ``spaces[1:]`` (each space growing by the rows picked so far).

    The spaces only grow, so a candidate's count never falls and one inside ``spaces[0]`` stays
    there: a candidate passed over while looking for one in none of ``spaces[1:]`` never becomes
    one, and the next such search starts after the row picked.  Only when none is left are all
    candidates compared (and from then on, always)."""
    spans = [f2.Span(s) for s in spaces]
    first, rest = spans[0], spans[1:]

    def count(k: int) -> int | None:  # None: inside spaces[0]
        v = cands[k]
        return None if first.contains(v) else [sp.contains(v) for sp in rest].count(True)

    rows: list[int] = []
    start = 0
    for _ in range(r_bits):
        k = next((k for k in range(start, len(cands)) if count(k) == 0), None)
        if k is None:
            k = min((c, k) for k in range(len(cands)) if (c := count(k)) is not None)[1]
            start = len(cands)
        else:
            start = k + 1
        rows.append(cands[k])
        for sp in spans:
            sp.insert(cands[k])
    return rows


def shared_layout(ctx: ConversionContext, transpose: bool = False) -> LdsDesign:
    """The shared layout from linlayout.synth.swizzle, else (where it has none: ``swizzle.NoSharedLayout``, e.g.
    no layout lets both sides vectorize) the src-registers-first layout (``vector_first_design``: sub-dword
    accesses where they must be); ``transpose``: the one read with the target's transpose loads, a DesignRefused
    if none is.  Any other LayoutError of the synthesis (bad input, a bug) propagates."""
    try:
        off, rep, read_op = swizzle.shared_basis(_stored_src(ctx.problem), ctx.problem.dst, ctx.element_bits,
                                                 ctx.arch, lds_budget_bytes=ctx.lds_budget_bytes,
                                                 transpose_only=transpose)
    except swizzle.NoSharedLayout as e:
        if transpose:
            raise DesignRefused(f"no transpose-read shared layout: {e}") from e
        return vector_first_design(ctx, "src")
    tr = OP_SHAPES[read_op].transpose_bits is not None
    return LdsDesign(off + rep, len(off), len(rep), "linlayout.synth.swizzle" + (f" ({read_op})" if tr else ""),
                     ctx.element_bytes << len(off), OP_SHAPES[read_op].transpose_bits if tr else 0)


design_cache = caches.cache("synth.lds_path.designs")


def designs(ctx: ConversionContext) -> "DesignPool":
    """The shared layouts worth building, each with its accesses (``lds_accesses``): linlayout.synth.swizzle's,
    the two register-first ones (a layout favouring one side's register order can save
    repacking and tuple copies), the ordered ones of the fewest shift terms (``_fewest_terms``:
    ``ordered_design`` on each of ``_ordered_prefixes`` in each of ``ORDERS``, ``lane_terms``, then
    ``warp_terms``; none unless fewer than linlayout.synth.swizzle's layout has: cheaper address programs)
    and one swizzled ordered layout (``_swizzled_fewest``: conflict-free on the phase footprints, of the
    fewest shift terms; on AMD targets one per prefix length).  Per layout the store vectors are chosen
    twice, counting the stores' tuple copies and not (a wide store with copies can beat narrow
    conflicting stores: the cost model decides).  Every layout but linlayout.synth.swizzle's is made only
    when its floor bound (``transpose_floor`` for the transpose-read layout of a target with transpose
    loads: gfx950, gfx1250; ``prefix_floor`` for the register-first, over-fetch and ordered ones, an ordered
    (or swizzled ordered) one's prefix its whole offset basis, ``_whole_prefix``: it is whole when listed) lets it
    come first and, with its instructions bound (``prefix_instructions``), lets it rank (``DesignPool.by_floor``); the
    transpose-read layout is not listed where the dst cannot be read so through any layout
    (``_transpose_readable``).  linlayout.synth.swizzle's layout is synthesized here, its round trips
    listed when wanted (``_synthesized``: under a rank limit, by its own bounds).  Where the tile moves in
    rounds, ``lane_space_design``'s two layouts are the pool's spares (``DesignPool``: listed only where every
    other layout is refused, so they change no plan another layout gives).
    Cached per (problem, element bits, arch, LDS budget, src and dst tuples, objective, src offsets, dst
    unpacked): the accesses' vectors are chosen and the floors computed under the objective, so a pool is
    not shared between objectives; the loads' permutes and floors (``_least_perms``, ``_load_perms``)
    depend on ``dst_unpacked``."""
    key = (ctx.problem.key(), ctx.element_bits, ctx.arch, ctx.lds_budget_bytes, ctx.src_tuples, ctx.dst_tuples,
           ctx.objective, ctx.src_offsets, ctx.dst_unpacked, ctx.one_wave)
    if key not in design_cache:
        synthesized = shared_layout(ctx)
        out: list[LdsDesign | _Deferred] = [_synthesized(ctx, synthesized)]
        sub_dword = ctx.element_bits in (8, 16)
        load = ctx.target.transpose_load(ctx.element_bits) if sub_dword else None
        if load is not None and _transpose_readable(ctx.problem.dst_cols, load):
            out.append(_Deferred(lambda: shared_layout(ctx, transpose=True),
                                 lambda: _DeferredBounds.of(ctx, *_transpose_parts(ctx), 0),  # (one round or more)
                                 lambda: transpose_instructions(ctx)))
        # PTX vector accesses name any registers: with whole-register elements (no repacking) the
        # common register bits let both sides move vectors
        both = ctx.target.lds_isa == "ptx" and ctx.element_bits >= 32
        for side in ("dst", "src") + (("both",) if both else ()):
            out.append(_Deferred(lambda side=side: vector_first_design(ctx, side),
                                 *_prefix_bounds(ctx, lambda side=side: _vector_first_prefix(ctx, side))))
        if sub_dword:
            out.append(_Deferred(lambda: over_fetch_design(ctx), *_prefix_bounds(ctx, lambda: _over_fetch_prefix(ctx),
                                                                                 True)))
        ordered = _ordered_layouts(ctx, synthesized)
        out += [_Deferred(lambda d=d: d, *_prefix_bounds(ctx, lambda d=d: _whole_prefix(d)))
                for d in _fewest_terms(ctx, synthesized, ordered) + _swizzled_fewest(ctx, synthesized, ordered)]
        # rounds: the layouts whose offset space holds every lane and warp vector, where every other is refused
        spares = tuple(lane_space_design(ctx, side) for side in ("src", "dst")) if synthesized.n_rep_bits else ()
        design_cache[key] = DesignPool(ctx, out, spares)
    return design_cache[key]


def _fewest_terms(ctx: ConversionContext, synthesized: LdsDesign, ordered: dict | None = None) -> list[LdsDesign]:
    """The ordered layouts (``ordered_design`` on each of ``_ordered_prefixes(synthesized)`` in each of
    ``ORDERS``, each layout once) of the fewest ``lane_terms``, none unless fewer than ``synthesized``
    has; where the fewest are as many as ``synthesized``'s, those of them of the fewest ``warp_terms``,
    none unless fewer than ``synthesized``'s (since session 23: an 8-warp wave64 kernel computes every
    warp bit, and a warp part of one shift term is one SALU where two terms are three and LLVM's five:
    gfx950 fp8 ``blocked[2x1,t64x1,o01]->mfma16T``, 8 waves, setup 16 -> 12 compiled, whole 28 -> 24
    against Triton's 25; docs/benchmarks.md "Session 23: whole29").  None either where ``synthesized``
    has one term per side with a nonzero lane column: every layout has as many at least (such a column's
    image is nonzero, so it has a shift).  ``ordered``: ``_ordered_layouts(ctx, synthesized)`` where known."""
    reps = synthesized.shared_cols[synthesized.n_offset_bits:]
    return [_ordered(ctx, prefix, in_order, reps, order) for prefix, in_order, order in
            _fewest_entries(ctx, synthesized, ordered)]


def _fewest_entries(ctx: ConversionContext, synthesized: LdsDesign, ordered: dict | None) -> list[tuple]:
    """(prefix, unit vectors after it in order, order) of each layout of ``_fewest_terms``."""
    if ordered is None:
        ordered = _ordered_layouts(ctx, synthesized)
    least = min((t for t, _, _, _ in ordered.values()), default=None)
    synthesized_terms = lane_terms(ctx, synthesized)
    if least is None or least > synthesized_terms:
        return []
    fewest = [(layout, prefix, in_order, order) for layout, (t, prefix, in_order, order) in ordered.items()
              if t == least]
    if least == synthesized_terms:  # as many lane terms: the fewest warp terms, if fewer
        warps = [warp_terms(ctx, layout) for layout, _, _, _ in fewest]
        if min(warps) >= warp_terms(ctx, synthesized.shared_cols):
            return []
        fewest = [entry for entry, w in zip(fewest, warps) if w == min(warps)]
    return [(prefix, in_order, order) for _, prefix, in_order, order in fewest]


def _ordered_layouts(ctx: ConversionContext, synthesized: LdsDesign) -> dict[tuple, tuple]:
    """Each ordered layout of ``_fewest_terms`` (its offset and round vectors) -> (its ``lane_terms``,
    prefix, the unit vectors after it in order, order); empty where ``synthesized`` has one term per side
    with a nonzero lane column (no layout has fewer)."""
    synthesized_terms = lane_terms(ctx, synthesized)
    if synthesized_terms <= sum(any(cols["lane"]) for cols in (ctx.problem.src_cols, ctx.problem.dst_cols)):
        return {}
    reps = synthesized.shared_cols[synthesized.n_offset_bits:]
    places = {order: _order_places(ctx, order) for order in ORDERS if order != "tensor"}
    ordered = {}  # layout -> (its shift terms, prefix, its unit vectors in order, order)
    for prefix in _ordered_prefixes(ctx, synthesized):
        rest = _row_space(prefix, reps, ctx.problem.n_tensor_bits)
        # the lane images in the tensor order's layout: another order's are a relabelling of its unit
        # vectors' offset bits (the prefix's and the round bits' stay)
        images = _lane_images(ctx, prefix + rest + reps)
        moved = list(range(len(prefix) + len(rest) + len(reps)))  # offset bit k of the tensor order's is moved[k]
        for order in ORDERS:
            in_order = _rest_in_order(ctx, rest, order, places.get(order))
            layout = tuple(prefix + in_order + reps)
            if layout in ordered:
                continue
            where = {u: len(prefix) + k for k, u in enumerate(in_order)}
            for k, u in enumerate(rest):
                moved[len(prefix) + k] = where[u]
            terms = _shift_terms(images, moved)
            ordered[layout] = (terms, prefix, in_order, order)
    return ordered


#: [I] The target families whose design pools list swizzled ordered layouts (``_swizzled_fewest``), those
#: where the compiled corpora measured them to help: CDNA (AMD corpus whole 19,949 -> 19,729 instructions, the
#: gfx90a, gfx942 and gfx950 plans' modelled cycles down) and, with ``PER_PREFIX_FAMILIES``, RDNA (wave32 corpus
#: whole 20,214 -> 20,012, setup 6,692 -> 6,524; alone, RDNA's went 20,374 -> 20,414 in session 21: plans that
#: trade instructions for plan-modelled cycles; docs/benchmarks.md, "Session 21: addr25", "Session 22:
#: w32lds27").  Left out: NVIDIA (3 plans changed, sm_80 bf16 ``blocked[1x2,t8x4,o10]->blocked[2x1,t4x8,o01]``
#: 27 -> 44 instructions, none measured on a GPU).
SWIZZLED_ORDERED_FAMILIES = ("cdna", "rdna")

#: [I] The target families whose ordered layouts take each side's register prefix (``_ordered_prefixes``: e.g.
#: the dst's 16-byte vector where the src's register span holds one more bit) and whose pools list one swizzled
#: ordered layout per prefix length (``_swizzled_fewest``): the fewest ``lane_terms`` of a short prefix's narrow
#: accesses no longer hide a wide prefix's swizzle.  Measured compiled against main ``71e0df3`` (docs/benchmarks.md,
#: "Session 22: w32lds27"): AMD corpus whole 19,576 -> 19,311, setup 7,080 -> 6,803, region 12,360 -> 12,292,
#: whole cycle-overs 10 -> 8 (77 rows changed, 13 of them up); wave32 whole 20,214 -> 20,012, setup 6,692 ->
#: 6,524, region 13,436 -> 13,383 (102 rows, 38 up: plans of fewer plan-modelled cycles, the bank conflicts);
#: gfx1200 fp16 ``blocked[2x1,t32x1,o01]->dotAwmma2.16x16(kw8)``: the src lanes order after the 16-byte prefix,
#: rows swizzled by 4, setup 21 -> 16, whole 53 -> 48 against Triton's 45 (13 and 45 with RDNA's lane bit 0
#: column term, linlayout.synth.lane_arith).  Not NVIDIA (no swizzled ordered
#: layouts there; its ordered layouts keep the longest prefix).
PER_PREFIX_FAMILIES = ("cdna", "rdna")

#: [I] A swizzled ordered layout (``_swizzled_ordered``) has as many ``lane_terms`` as its ordered layout at
#: least, so ``_swizzled_fewest`` does not swizzle the ordered layouts whose swizzles could not be listed.  Not
#: proven: a lane column whose image holds both a moved row ``k`` and ``k - shift`` loses the latter's term;
#: measured on every third AMD corpus case (393 pools, 2,978 ordered layouts): no swizzle below its ordered
#: layout.  tests/test_swizzled_ordered.py checks the layout listed against every swizzle on every 5th case.
SWIZZLE_TERMS_AT_LEAST_ORDERED = True


def _swizzled_fewest(ctx: ConversionContext, synthesized: LdsDesign, ordered: dict) -> list[LdsDesign]:
    """The first (in ``ordered``'s order, then by shift) of the swizzled ordered layouts (``_swizzled_ordered``
    of each layout of ``ordered``, ``_ordered_layouts``', each shift) of the fewest ``lane_terms``, none unless
    fewer than ``synthesized`` has: conflict-free on the phase footprints, as linlayout.synth.swizzle's layout
    is, with a shorter address program.  One layout at most (on a target of ``PER_PREFIX_FAMILIES`` one per
    prefix length, shortest prefix first), each listed one costing its bounds and, where
    they pass, its round trips (planning time; the ties left out gave 6 of 29 swizzled plans on every third
    AMD case).  ``designs`` defers it under its whole offset basis's bounds, as the ordered ones.  None on a
    target outside ``SWIZZLED_ORDERED_FAMILIES``.  An ordered layout of as many terms as ``synthesized`` or
    as the fewest found so far is not swizzled (``SWIZZLE_TERMS_AT_LEAST_ORDERED``: half the ordered layouts
    of the AMD corpus)."""
    if ctx.target.family not in SWIZZLED_ORDERED_FAMILIES:
        return []
    reps = synthesized.shared_cols[synthesized.n_offset_bits:]
    per_prefix = ctx.target.family in PER_PREFIX_FAMILIES
    best: dict[int, tuple] = {}  # prefix length (0: any) -> (terms, shift, prefix, offsets, order), the first of the
    # fewest
    footprints: dict = {}
    ceiling = lane_terms(ctx, synthesized)  # the terms a swizzle must go below to be listed
    for terms, prefix, in_order, order in ordered.values():
        key = len(prefix) if per_prefix else 0
        least = best.get(key)
        if SWIZZLE_TERMS_AT_LEAST_ORDERED and terms >= (ceiling if least is None else min(ceiling, least[0])):
            continue  # none of its swizzles could be listed
        base = prefix + in_order
        images = None  # the ordered layout's lane images, each as an int of offset bits (asked once)
        for shift, offsets in _swizzled_ordered(ctx, base, reps, len(prefix), footprints):
            if images is None:
                images = [[sum(1 << o for o in bits) for bits in side] for side in _lane_images(ctx, base + reps)]
            # offset coordinates through the swizzled basis: a moved row k's coordinate also toggles k - shift
            # (the change of basis is its own inverse: no partner is moved)
            moved = sum(1 << k for k in range(len(base)) if offsets[k] != base[k])
            terms = _shift_terms([[_set_bits(x ^ ((x & moved) >> shift)) for x in side] for side in images])
            least = best.get(key)
            if least is None or terms < least[0]:
                best[key] = (terms, shift, prefix, offsets, order)
    return [LdsDesign(offsets + reps, len(offsets), len(reps), f"{order} order after a {len(prefix)}-bit prefix, "
                      f"rows swizzled by {shift}", ctx.element_bytes << len(offsets))
            for _, (terms, shift, prefix, offsets, order) in sorted(best.items()) if terms < ceiling]


def _whole_prefix(design: LdsDesign) -> tuple[list[int], list[int]]:
    """(offset vectors, round vectors) of ``design``: the prefix of ``prefix_floor``'s layouts that are
    ``design`` alone (no offset bit is left for rows)."""
    n = design.n_offset_bits
    return design.shared_cols[:n], design.shared_cols[n:]


def _synthesized(ctx: ConversionContext, design: LdsDesign) -> "_Deferred":
    """``shared_layout``'s design, made, its round trips (``lds_accesses``) listed when wanted
    (``_Deferred.made``) under the bounds of a deferred design of its kind: ``transpose_floor``'s and
    ``transpose_instructions`` for one read with transpose loads, else those of its offset bits taken
    as the prefix (``_prefix_bounds``: the layouts of that prefix and its round bits are this one
    alone, no offset bit being left for rows)."""
    if design.read_transpose:
        return _Deferred(lambda: design, lambda: _DeferredBounds.of(ctx, *_transpose_parts(ctx), 0),
                         lambda: transpose_instructions(ctx), made=True)
    prefix = _whole_prefix(design)
    return _Deferred(lambda: design, *_prefix_bounds(ctx, lambda: prefix, design.over_fetch), made=True)


def _prefix_bounds(ctx: ConversionContext, prefix_of: Callable[[], tuple[list[int], list[int]]],
                   over_fetch: bool = False) -> tuple[Callable[[], "_DeferredBounds"], Callable[[], int]]:
    """The ``_Deferred.bounds`` and ``_Deferred.instructions`` of a design with the prefix
    ``prefix_of()`` (``prefix_floor``'s parts, ``prefix_instructions``; infinite bounds when the
    design does not exist: it is never made), with ``prefix_address_valu``'s VALU ops and, for
    over-fetching loads, ``over_fetch_selector_valu``'s (both setup VALU of the plan, each a
    lower bound of its own part: ``LdsAccesses.plan_floor`` counts both)."""
    known: list = []  # prefix_of()'s answer (None where there is none), then those VALU ops

    def prefix() -> tuple[list[int], list[int]] | None:
        if not known:
            try:
                known.append(prefix_of())
            except DesignRefused:
                known.append(None)
        return known[0]

    def setup_valu() -> int:  # (asked by both bounds: once)
        if len(known) < 2:
            selectors = over_fetch_selector_valu(ctx, _sub_dword_lows(ctx, *prefix())[0]) if over_fetch else 0
            known.append(prefix_address_valu(ctx, *prefix(), over_fetch) + selectors)
        return known[1]

    def bounds() -> _DeferredBounds:
        if prefix() is None:
            return _DeferredBounds(float("inf"), float("inf"))
        prefix_cols, reps = prefix()
        return _DeferredBounds.of(ctx, *_prefix_parts(ctx, prefix_cols, reps, over_fetch), len(reps), setup_valu())

    def instructions() -> int:
        return 0 if prefix() is None else prefix_instructions(ctx, *prefix(), over_fetch, setup_valu())
    return bounds, instructions


@dataclass(frozen=True)
class _DeferredBounds:
    """Lower bounds for every round trip through a deferred design: ``floor`` of its
    ``LdsAccesses.floor`` and ``cost`` of its ``LdsAccesses.plan_floor`` cost."""

    floor: float
    cost: float

    @classmethod
    def of(cls, ctx: ConversionContext, issue: float, pipe: float, n_rep_bits: int,
           address_valu: int | None = None) -> "_DeferredBounds":
        """From floors of the (issue, LDS-pipe) cycles of the accesses alone, the fewest round bits
        of a round trip through the design and the fewest VALU ops forming its LDS addresses.

        ``floor``: ``CostModel.path_floor`` of those parts with two DS latency levels and the issue of
        the barriers (``_barrier_issue``: at least as many as ``n_rep_bits`` round bits give; the
        floor counts them).  ``cost``: the same with the issue of ``address_valu`` ops
        (``plan_floor`` adds that of ``LdsAccesses.address_valu``: at least ``least_address_valu``, no
        address being formed before the first access, cost.lds_address_valu; at least
        ``prefix_address_valu``; None: ``least_address_valu``); ``path_floor`` does not decrease in any part, so
        ``floor <= cost``."""
        cm = ctx.cost_model
        latency, with_barriers = cm.latency(2), issue + _barrier_issue(ctx, n_rep_bits)
        if address_valu is None:
            address_valu = least_address_valu(ctx)
        return cls(cm.path_floor(with_barriers, pipe, latency),
                   cm.path_floor(with_barriers + address_valu * cm.valu_issue, pipe, latency))


@dataclass
class _Deferred:
    """A design synthesized when wanted: ``make()`` (a DesignRefused: there is none), ``bounds()``
    (``_DeferredBounds``) and ``instructions()``, a lower bound of the instructions with setup
    (``LdsAccesses.plan_floor``) of each of its round trips.  ``made``: ``make()`` gives a design
    already synthesized, whose round trips alone wait (``_synthesized``); its bounds are worked out
    only where a rank limit is in force when the pool is asked (``DesignPool.by_floor``).  A
    DesignRefused of its accesses leaves it without round trips, as any design's
    (``DesignPool._add``)."""

    make: Callable[[], LdsDesign]
    bounds: Callable[[], _DeferredBounds]
    instructions: Callable[[], int]
    made: bool = False


class DesignPool:
    """The round trips through each design of ``designs`` (the accesses of design ``i`` in
    ``accesses[i]``), deferred designs made on demand.  ``spares``: designs listed (after the
    others, as designs ``len(entries)``, ...) only once every other design is made and gives no round
    trip (``lane_space_design``: the tile's rounds split a lane's elements in every other layout), so
    that they change no plan that the others give."""

    def __init__(self, ctx: ConversionContext, entries: list[LdsDesign | _Deferred],
                 spares: tuple[LdsDesign, ...] = ()) -> None:
        self.ctx = ctx
        self.accesses: dict[int, list[LdsAccesses]] = {}
        self.deferred = {i: e for i, e in enumerate(entries) if isinstance(e, _Deferred)}
        self.spares = {len(entries) + k: d for k, d in enumerate(spares)}
        self._layouts: dict[tuple, list[LdsAccesses]] = {}
        for i, e in enumerate(entries):
            if isinstance(e, LdsDesign):
                self._add(i, e)

    def _add_spares(self) -> list[int]:
        """List the spare designs where every other one is made and gives no round trip; the designs
        listed (none otherwise, and none once listed)."""
        if not self.spares or self.deferred or any(self.accesses.values()):
            return []
        added = list(self.spares)
        for i in added:
            self._add(i, self.spares.pop(i))
        return added

    def _add(self, i: int, d: LdsDesign) -> None:
        """Design ``i`` is ``d``: its round trips are ``lds_accesses``' (none where that raises a
        DesignRefused: the layout's accesses cannot be formed, e.g. a transpose-read layout the dst
        cannot be read from, or one whose rounds split a lane's elements; the other designs stand).
        Any other error propagates: a bug, not a refusal."""
        same = self._layouts.get(layout_key(d))
        if same is not None:  # the layout of an earlier design: the same accesses (and floors)
            self.accesses[i] = [replace(a, design=d) for a in same]
            for copy, a in zip(self.accesses[i], same):
                copy._addresses = a._addresses
            return
        try:
            got = lds_accesses(self.ctx, d)
        except DesignRefused:
            got = []
        self._layouts[layout_key(d)] = self.accesses[i] = got

    def _make(self, i: int) -> list[LdsAccesses]:
        """Make deferred design ``i`` (none where ``make()`` raises a DesignRefused) and list its
        round trips (``_add``).  A DesignRefused of a design or of its accesses is treated alike
        whether the design was synthesized already or not, so whether the pool makes a design
        (pruned: ``by_floor`` under limits; unpruned: ``placed``) changes which round trips it
        gives, never whether the pool raises."""
        try:
            self._add(i, self.deferred.pop(i).make())
        except DesignRefused:
            self.accesses[i] = []
        return self.accesses[i]

    def every(self) -> list[LdsAccesses]:
        """Every round trip, in design order (deferred designs made)."""
        return [a for _, a in self.placed()]

    def placed(self) -> list[tuple[tuple[int, int], LdsAccesses]]:
        """Every round trip with its place ``(design, store choice)``, in design order (deferred
        designs made): ``by_floor`` without limits, in place order (no floor computed)."""
        for i in list(self.deferred):
            self._make(i)
        self._add_spares()
        return [((i, j), a) for i in sorted(self.accesses) for j, a in enumerate(self.accesses[i])]

    def by_floor(self, limit: Callable[[], float],
                 rank_limit: Callable[[], float]) -> Iterator[tuple[tuple[int, int], LdsAccesses]]:
        """The round trips of ``every()`` whose plan floor (``LdsAccesses.plan_floor``) has a rank
        value (``CostModel.rank_value``) at most ``rank_limit()``, in order of that rank value (ties:
        design order, then store choice), each with its place in the pool's own order, ``(design,
        store choice)`` (``every()``'s order, which settles plans tied in every ranking key:
        convert._rank).  Neither limit ever grows.  A round trip waits under the rank value of its
        ``early_plan_floor`` until that is the least waiting, then under its ``registers_plan_floor``'s
        (its address table walked: ``address_registers``) until that is, then under its plan
        floor's (its address program counted: ``address_valu``): each key at most the next, so the
        table is walked and the program counted only where the round trip might come next, and the
        order is the plan floors' (an entry's key, when it is taken, is at most every later plan
        floor's rank value).

        A deferred design (``_DeferredBounds``) is made only when the rank value of its bounds
        (its plan cost bound with its instructions bound: at most the rank value of each of its round
        trips' plan floors, ``rank_value`` not decreasing in either) is at most ``rank_limit()`` and
        at most the least rank value not given yet (one of its round trips might come first), and its
        floor bound at most ``limit()`` (no floor above that is wanted any more).  A design left
        unmade gives none of its round trips, none of which was wanted.  The order is exact: a design
        is made before any round trip of a rank value above its bound is given.  A design already
        synthesized (``_Deferred.made``) is made first where ``rank_limit()`` is infinite when asked,
        as a design listed made (no bound worked out), else under its bounds like any other.  Once
        the least rank value not given is above ``rank_limit()``, so is every later one: none is given.
        The spare designs are listed (``_add_spares``) once nothing waits and every other design is made
        and gives no round trip (none was left unmade by a limit), their round trips then given as any."""
        cm = self.ctx.cost_model

        stages = (LdsAccesses.early_plan_floor, LdsAccesses.registers_plan_floor, LdsAccesses.plan_floor)

        def entry(i: int, j: int, stage: int = 0) -> tuple[float, int, int, int]:  # (key, design, store, stage)
            return cm.rank_value(*stages[stage](self.accesses[i][j])), i, j, stage

        queue = [entry(i, j) for i, accs in self.accesses.items() for j in range(len(accs))]
        heapq.heapify(queue)
        # (rank value bound, design, floor bound) of each deferred design not made, least first; one
        # above a limit stays above it (neither grows): dropped once it is the least
        bounds = []
        unlimited = rank_limit() == float("inf")
        for i, d in self.deferred.items():
            if d.made and unlimited:  # made first, as if listed made: no limit to skip it by
                bounds.append((-float("inf"), i, -float("inf")))
                continue
            b = d.bounds()
            bounds.append((cm.rank_value(b.cost, d.instructions()) if b.cost < float("inf") else b.cost, i, b.floor))
        heapq.heapify(bounds)
        while True:
            lim, rank_lim = limit(), rank_limit()
            while bounds and (bounds[0][2] > lim or bounds[0][0] > rank_lim):
                heapq.heappop(bounds)
            if bounds and (not queue or bounds[0][:2] <= queue[0][:2]):
                i = heapq.heappop(bounds)[1]
                for j in range(len(self._make(i))):
                    heapq.heappush(queue, entry(i, j))
                continue
            if not queue and not bounds and (spares := self._add_spares()):
                queue = [entry(i, j) for i in spares for j in range(len(self.accesses[i]))]
                heapq.heapify(queue)
                continue
            if not queue or queue[0][0] > rank_lim:
                return
            _, i, j, stage = heapq.heappop(queue)
            if stage == len(stages) - 1:
                yield (i, j), self.accesses[i][j]
            else:
                heapq.heappush(queue, entry(i, j, stage + 1))


def transpose_floor(ctx: ConversionContext) -> float:
    """A lower bound of ``LdsAccesses.floor`` for every layout read with the target's transpose loads.

    Such a layout has dst lane bit ``b`` at offset bit ``b`` (``b < k``, ``2**k`` the elements of
    one load per lane), so a store moves more than one element only when dst lane 0's tensor
    vector is a src register vector (``_vector_bits``).  The floor is at least two DS latency
    levels, one conflict-free load per ``2**k`` dst registers, and per src register stored
    (``2**_moved_rank``) the least conflict-free store cycles per element over the widths allowed
    (a ds_write2 counted as two accesses sharing one issue); the issue and the LDS-pipe cycles
    bounded apart and joined by ``CostModel.path_floor``, as ``prefix_floor``'s; plus the issue of
    the barriers of one round (``_barrier_issue``: such a layout has one round or more)."""
    return _DeferredBounds.of(ctx, *_transpose_parts(ctx), 0).floor


def _transpose_readable(dst_cols: dict[str, list[int]], load: TransposeLoad) -> bool:
    """Can some shared layout let the dst (tensor columns ``dst_cols``) be read with the transpose
    load ``load`` (``_transpose_groups``)?  Not unless, with ``k = load.vector_bits``: the dst has ``k`` register bits or more and its register columns are
    independent (every dst register distinct: ``D.unique`` all of them); its lane columns ``L_0 ..
    L_{k-1}`` are independent (``C(L_b)`` must be offset bit ``b``, ``C`` an isomorphism); and the
    span of its other columns meets ``span(L_0 .. L_{k-1})`` only in 0 (each must have no offset bit
    below ``k``, so neither may a sum of them; a nonzero member ``v`` of that span has one, ``C(v)``
    being a nonzero sum of offset bits ``0 .. k-1``).  Each is a fact of the dst layout alone, so a
    dst that fails one gives no transpose-read round trip through any layout."""
    k = load.vector_bits
    regs, lanes = dst_cols["register"], dst_cols["lane"]
    if len(regs) < k or f2.rank(regs) < len(regs) or f2.rank(lanes[:k]) < k:
        return False
    others = [c for c in lanes[k:] + dst_cols["warp"] + regs if c]
    return f2.rank(lanes[:k] + others) == k + f2.rank(others)


def _transpose_parts(ctx: ConversionContext) -> tuple[float, float]:
    """(issue, LDS-pipe) floors of the accesses alone (no barrier) of ``transpose_floor``'s round trips."""
    cm, element_bytes = ctx.cost_model, ctx.element_bytes
    loads, stores, widths = _transpose_accesses(ctx)
    store_issue, store_pipe = _cheapest_per_element(cm, "lds_write", element_bytes, widths)
    load_bytes = ctx.target.transpose_load(ctx.element_bits).bytes_per_lane
    return (loads * cm.ds_issue + stores * store_issue,
            loads * (cm.instruction("lds_read", load_bytes) - cm.ds_issue) + stores * store_pipe)


def _transpose_accesses(ctx: ConversionContext) -> tuple[int, int, range | list[int]]:
    """Of every round trip through a layout read with the target's transpose loads (``transpose_floor``):
    its loads (one per ``2**k`` dst registers, ``_transpose_groups``), the src registers its
    stores move (``2**_moved_rank``) and the vector bits ``t`` a store may
    have (``0 .. log2(16 / bytes)`` only where dst lane 0's tensor vector is a src register vector)."""
    prob, element_bytes = ctx.problem, ctx.element_bytes
    k = ctx.target.transpose_load(ctx.element_bits).vector_bits
    src = prob.src_cols
    widths = range((16 // element_bytes).bit_length()) if f2.in_span(src["register"], prob.dst_cols["lane"][0]) else [0]
    stores = 1 << _moved_rank(src["register"], src["lane"] + src["warp"], True)
    return (1 << len(prob.dst_cols["register"])) >> k, stores, widths


def transpose_instructions(ctx: ConversionContext) -> int:
    """A lower bound of the instructions with setup (``LdsAccesses.plan_floor``) of every round trip
    through a layout read with the target's transpose loads: its loads (never paired) and its stores,
    ``2**t`` of the src registers stored each (``_transpose_accesses``), two of 4 or 8 bytes per
    ds_write2 (``_pairs``), the least over the ``t`` allowed; the barriers of one round
    (``_barriers``: such a layout has one round or more, each adding barriers), the ``least_address_valu``
    ops forming the first store's address and the ``s_waitcnt`` of ``least_waits`` (``prefix_instructions``'
    count for this side's widths)."""
    loads, stores, widths = _transpose_accesses(ctx)
    pairs = ctx.target.has_lds_pair
    least_stores = min(-(-(stores >> t) // (2 if pairs and ctx.element_bytes << t in (4, 8) else 1)) for t in widths)
    barriers = _barriers(ctx, 0)
    return loads + least_stores + barriers + least_address_valu(ctx) + least_waits(ctx, 1 if barriers else 0)


@dataclass
class _Side:
    """Offset/rep coordinates of every (warp, lane, register) of one side: ``C = inv o layout`` is
    linear, so the coordinate of (w, l, r) is ``warp_lane[w, l] ^ reg_image[r]``."""

    warp_lane: np.ndarray  # [W, lanes] C of every (warp, lane), register 0
    reg_image: np.ndarray  # [R] C of every register
    n_off: int  # offset bits (below them the offset, above the round)
    unique: list[int]  # the least register of each image (its original), duplicates removed
    reg_cols: list[int]  # C of each register bit (offset bits low, then rep bits)
    other_cols: list[int]  # C of each lane/warp bit
    registers: f2.Echelon  # the tensor vectors of the register bits, inserted in order (_registers)
    shared_cols: list[int]  # the tensor vector of each offset bit, then each rep bit (the shared layout's)
    stores: bool = False  # the src side: its accesses store one group per class of store_keys (_stored_once)
    _addresses: dict = field(default_factory=dict, repr=False)  # element bytes -> _lane_addresses; (r, element bytes) -> address
    _bases_of: dict = field(default_factory=dict, repr=False)  # vector bits -> _bases
    lane_slots: dict = field(default_factory=dict, repr=False)  # (p, low bits) -> _over_fetch_slot's answer

    @property
    def lane_bits(self) -> int:
        """Lane bits of a wave (the first ``other_cols``)."""
        return self.warp_lane.shape[1].bit_length() - 1

    def address(self, r: int, element_bytes: int) -> np.ndarray:
        """[W, lanes] byte address of register ``r`` (elements of ``element_bytes``; one read-only array per
        register, made when first asked).

        The address of (w, l, r) is ``((warp_lane[w, l] ^ C(r)) & M) * element_bytes`` (``M``: the
        offset bits); ``element_bytes`` is a power of two, so the product is a shift, which the XOR
        commutes with: ``lane_addresses ^ register_address(r)``."""
        key = (r, element_bytes)
        row = self._addresses.get(key)
        if row is None:
            row = self._lane_addresses(element_bytes) ^ self.register_address(r, element_bytes)
            row.setflags(write=False)
            self._addresses[key] = row
        return row

    def register_address(self, r: int, element_bytes: int) -> int:
        """``(C(r) & M) * element_bytes``: register ``r``'s part of its addresses (``address``)."""
        return (int(self.reg_image[r]) & ((1 << self.n_off) - 1)) * element_bytes

    def _lane_addresses(self, element_bytes: int) -> np.ndarray:
        """[W, lanes] ``(warp_lane & M) * element_bytes``: the (warp, lane) part of every address."""
        table = self._addresses.get(element_bytes)
        if table is None:
            table = self._addresses[element_bytes] = (self.warp_lane & ((1 << self.n_off) - 1)) * element_bytes
            table.setflags(write=False)
        return table

    @cached_property
    def reg_images(self) -> list[int]:
        """``reg_image`` as a list of ints."""
        return self.reg_image.tolist()

    @cached_property
    def store_keys(self) -> list[int]:
        """Per register ``r``, ``C(r)`` reduced modulo ``V``, the span of the lane and warp columns
        (its residual against an echelon basis of ``V``: equal residuals, equal cosets ``C(r) + V``).

        Registers ``r`` and ``r'`` have equal keys exactly when ``C(r) ^ C(r') = C(y)`` for some
        (warp, lane) ``y``: then for every (warp, lane) ``x``, ``r'`` holds in ``x ^ y`` the element
        ``r`` holds in ``x``, so storing ``r`` from every lane of every warp writes every element
        ``r'`` holds (and the other way round): ``r`` and ``r'`` are *store twins*, and only one of
        them is stored (``_stored_once``).  (Two registers of equal images, ``y = 0``, are
        *duplicates* of one another: ``unique`` keeps the least, and only it, on either side.)

        Store twins in two warps only where warps exchange data: where no ``y`` of a pair is a lane
        alone, ``y``'s warp part ``v`` is nonzero and the tensor vector of warp ``v``, ``C^-1(C(r) ^
        C(r') ^ C(y's lane part))``, lies in the span of the src register and lane columns, so the
        pair (dst warp 0, src warp ``v``) is in the kernel ``_warps_exchange`` looks at, off its
        diagonal (``_crosses_warps``, whatever the shared layout).  The round trip then has workgroup
        barriers between every round's stores and its loads, after which every warp reads what
        every warp wrote: storing ``r`` from one warp serves the other."""
        lanes_warps = f2.Echelon()
        for c in self.other_cols:
            lanes_warps.insert(c)
        return [lanes_warps.reduce(c)[0] for c in self.reg_images]

    @cached_property
    def n_moved(self) -> int:
        """The registers the side's accesses move, ``2**_moved_rank`` of its columns ``C(.)``: on the
        load side every one of ``unique``; on the store side one per class of equal ``store_keys``
        among them (``_stored_once``).

        The images ``C(u)``, ``u`` in ``unique``, are the members of ``R`` (the span of the register
        columns), each once, so ``len(unique) = 2**rank(R)``, and their keys are the cosets ``C(u) +
        V``, one per member of ``R / (R & V)``: ``2**(dim R - dim(R & V)) = 2**(rank(R + V) - rank V)``
        of them, ``_moved_rank``'s count (tests/test_lds_store_twins.py counts the keys)."""
        return 1 << _moved_rank(self.reg_cols, self.other_cols, self.stores)

    @cached_property
    def has_store_twins(self) -> bool:
        """Does the store side have store twins, two registers of ``unique`` with one ``store_keys``
        entry?  Exactly when its keys are fewer than its registers, ``n_moved < len(unique)`` (both
        counts in ``n_moved``'s docstring: ``dim(R & V) > 0``, a nonzero member of ``R`` lies in ``V``).
        A rank test, so a side without store twins never computes its keys.  Never on the load side
        (which stores nothing; there ``n_moved`` is ``len(unique)``)."""
        return self.stores and self.n_moved < len(self.unique)

    def offsets(self, lanes: np.ndarray, regs: np.ndarray) -> np.ndarray:
        """``[W, k]`` element offset of (warp ``w``, lane ``lanes[j]``, register ``regs[j]``), ``k`` of each."""
        return (self.warp_lane[:, lanes] ^ self.reg_image[regs]) & ((1 << self.n_off) - 1)

    def rounds(self, regs: list[int]) -> np.ndarray:
        """``[W, lanes, len(regs)]`` round of every (warp, lane) and register of ``regs``."""
        return (self.warp_lane[:, :, None] ^ self.reg_image[regs][None, None, :]) >> self.n_off


def _side(layout_cols: dict[str, list[int]], design: LdsDesign, inv_cols: list[int], stores: bool = False) -> _Side:
    """The side of a layout with tensor columns ``layout_cols``; ``inv_cols``: tensor bits -> (offset,
    rep) bits (the inverse of the shared layout), so ``C = inv o layout`` is linear in the hardware bits;
    ``stores``: the src side, whose stores write each element once (``_Side.stores``)."""
    reg_cols = [f2.apply_columns(inv_cols, c) for c in layout_cols["register"]]
    lane = [f2.apply_columns(inv_cols, c) for c in layout_cols["lane"]]
    warp = [f2.apply_columns(inv_cols, c) for c in layout_cols["warp"]]
    unique, registers = _registers(tuple(layout_cols["register"]))
    warp_lane = span_table(lane + warp).reshape(1 << len(warp), 1 << len(lane))  # index: lane bits low
    return _Side(warp_lane, span_table(reg_cols), design.n_offset_bits, unique, reg_cols, lane + warp, registers,
                 design.shared_cols, stores)


@caches.memoize("synth.lds_path.registers", size=64)  # 64: the two sides of the few problems planned at once
def _registers(tensor_cols: tuple[int, ...]) -> tuple[list[int], f2.Echelon]:
    """(``_first_registers``, the register vectors inserted in order into an echelon basis) of a
    side whose register bits hold the tensor vectors ``tensor_cols``, for every shared layout.

    A shared layout's inverse ``inv`` is a linear isomorphism, so ``C = inv o layout`` has the
    linear relations of the layout's own columns: the same pivot columns (``_first_registers``),
    and ``C x = e_i`` (offset bit ``i``) exactly when ``x`` solves ``layout x = `` the tensor
    vector of offset bit ``i`` (``_vector_bits``).  Read only: shared by the designs."""
    registers = f2.Echelon()
    pivots = [j for j, c in enumerate(tensor_cols) if registers.insert(c)]
    return _first_registers(pivots), registers


def _first_registers(pivots: list[int]) -> list[int]:
    """The least register of every distinct register image, ascending (two registers hold the same
    elements in every lane and warp iff their images are equal), from the ``pivots`` of the
    register images (the columns independent of those before them, f2.pivot_columns).

    The registers of one image form a coset of the kernel, whose echelon basis has one vector per
    *dependent* column ``j`` (in the span of the columns before it), with highest bit ``j``.  The
    least member of a coset is the one with no dependent bit set: any other differs from it by a
    kernel vector, whose highest bit (a dependent one) it then has set above equal higher bits."""
    return span_values([1 << j for j in pivots])  # ascending: each bit above the ones before


def _vector_bits(side: _Side, t_max: int) -> list[list[int]]:
    """For t = 0..: register vectors delta_0..delta_{t-1} with C(delta_i) = offset bit i (aligned):
    ``delta_i`` the solution on the pivot columns (as f2.solve's) of ``layout delta_i`` = the
    tensor vector of offset bit ``i`` (``_registers``), None where there is none (or no offset bit
    ``i``: a vector's elements lie in one round)."""
    options, deltas = [[]], []
    for t in range(1, t_max + 1):
        low = (1 << t) - 1
        if any(c & low for c in side.other_cols):
            break
        # delta_{t-1}, solved only now (the ones before it were solved for t - 1)
        delta = _solve(side.registers, side.shared_cols[t - 1]) if t - 1 < side.n_off else None
        if delta is None:  # f2.solve_many: exact solutions, or None
            break
        deltas = deltas + [delta]
        options.append(deltas)
    return options


def _solve(registers: f2.Echelon, v: int) -> int | None:
    """The ``x`` on the pivot columns (the insertions that were independent) with ``x``'s inserted
    vectors XORing to ``v``, None when ``v`` is outside their span."""
    residual, combo = registers.reduce(v)
    return None if residual else combo


def _groups(side: _Side, deltas: list[int]) -> list[list[int]]:
    """Register lists (offset order) of every access: the base registers of ``_bases`` XOR every
    combination of the deltas (``span_values(deltas)``, offset bit ``i`` of the access = bit ``i``
    of the index)."""
    span = span_values(deltas)
    return [[b ^ s for s in span] for b in _bases(side, deltas)]


def _bases(side: _Side, deltas: list[int]) -> list[int]:
    """The base register (offset bits ``0..t-1`` clear) of every access of vector bits ``deltas``,
    in the order of their first unique register; on the store side only the first access of
    each class of store twins (``_stored_once``).

    With ``C(delta_i)`` = offset bit ``i``, register ``r`` belongs to the access of the base
    ``r ^ sum(delta_i for the set bits i < t of C(r))``; the access's registers are the base XOR
    every combination of the deltas (``_groups``).  One list per side and vector bits."""
    key = tuple(deltas)
    bases = side._bases_of.get(key)
    if bases is None:
        span = span_values(deltas)
        low, images = len(span) - 1, side.reg_images
        bases = list(dict.fromkeys(u ^ span[images[u] & low] for u in side.unique))
        if side.has_store_twins:
            bases = _stored_once(side, bases, span)
        side._bases_of[key] = bases
    return bases


def _stored_once(side: _Side, firsts: list[int], span: list[int]) -> list[int]:
    """Of the store groups ``f ^ span[x]`` (``f`` in ``firsts``, in order; ``span`` a subspace of
    register indices), those kept so that every element is stored by one instruction: a group
    whose first register's ``store_keys`` is a key of a group kept before it is dropped.

    The keys are ``q(C(r))``, ``q`` the quotient map modulo ``V`` (lane and warp columns), and
    ``C`` is linear in the register index, so a group's keys are the coset ``q(C(f)) +
    q(C(span))`` of one subspace: two groups' keys are equal or disjoint.  So the kept groups
    have pairwise disjoint keys, and every key of a dropped group is a kept group's: every
    element a dropped group holds in some (warp, lane) is held by a kept register in another
    (its store twin, ``_Side.store_keys``), hence stored.  An element is then written by one group
    only: by the (warp, lane)s of one kept register holding it (a coset of the kernel of the lane
    and warp columns: lanes or warps broadcasting it, together in one access) and by any other
    register of that group with its key.  A plain vector access has none: its registers' images
    differ by nonzero sums of offset bits ``0..t-1``, which no lane or warp column touches
    (``_vector_bits``' alignment), so none lies in ``V`` and ``q`` keeps the group's ``2**t`` keys
    distinct.  The registers of one dword of a matrix access may share a key (``.trans`` leaves
    the dword's last register bit's image free); its pieces are accesses of their own, so
    ``_matrix_groups`` refuses that form.  No two accesses then write one byte (the two of a
    ds_write2 included), so no barrier orders stores (on NVIDIA, lanes not in lockstep, two stores
    of one byte from two lanes would need a warp barrier between them: emulator
    ``_check_lane_order``).  Without store twins (``_Side.has_store_twins``) every group is kept, and callers
    skip it."""
    keys, covered, kept = side.store_keys, set(), []
    for f in firsts:
        if keys[f] not in covered:
            kept.append(f)
            covered.update(keys[f ^ s] for s in span)
    return kept


def _in_order_chunks(bases: list[int], span: list[int], n: int) -> int:
    """How many chunks of ``n`` registers (a power of two dividing ``len(span)``) of the accesses
    ``base ^ span[x]`` (``_groups``) hold registers ``a, a+1, .., a+n-1`` with ``a % n == 0``.

    Chunk ``j`` of the access of ``b`` holds ``(b ^ span[n*j]) ^ span[y]``, ``y < n`` (``span`` is
    linear: ``span[n*j + y] = span[n*j] ^ span[y]``).  With ``a = b ^ span[n*j]`` aligned,
    ``a + y = a ^ y``, so the chunk is in order iff ``span[y] == y`` for every ``y < n`` (the same
    for every chunk) and the low ``log2 n`` bits of ``b`` equal those of ``span[n*j]``."""
    if span[:n] != list(range(n)):
        return 0
    low = Counter(s & (n - 1) for s in span[::n])
    return sum(low[b & (n - 1)] for b in bases)


def _perms_side(bases: list[int], span: list[int], p: int, element_bytes: int) -> int:
    """v_perm_b32 count of one side (accesses ``base ^ span[x]``, ``_groups``): VGPRs whose elements
    are not in address order (an access of at least a dword: every VGPR not holding registers
    ``p*j .. p*j+p-1`` in order; smaller accesses: one repack per access not in place,
    ``_narrow_repacks`` sharing none: loads, and stores where the target has no store from a
    register's upper half; ``_choose_vectors`` counts the shared repacks of the other stores)."""
    if p == 1 or not bases:
        return 0
    n = len(span)
    if n * element_bytes >= 4:
        return len(bases) * (n // p) - _in_order_chunks(bases, span, p)
    return len(_narrow_repacks([[b ^ s for s in span] for b in bases], p, element_bytes, False))


def _narrow_in_place(g: list[int], p: int, element_bytes: int) -> bool:
    """Can a store narrower than a dword (``ds_write_b8/b16[_d16_hi]``) take the registers ``g`` (in
    address order) where they sit: consecutive registers from byte 0 or 2 of a VGPR, aligned to
    the access's size?"""
    pos = (g[0] % p) * element_bytes
    return (g == list(range(g[0], g[0] + len(g))) and pos % 4 in (0, 2)
            and pos % (len(g) * element_bytes) == 0)


def _narrow_repacks(groups: list[list[int]], p: int, element_bytes: int, high_half: bool) -> list[list[int]]:
    """The ``v_perm_b32`` repacks of the stores narrower than a dword of the register groups ``groups``
    (in issue order): per repack, the indices of the groups it serves.  A group not in place
    (``_narrow_in_place``) is repacked into the low half of a fresh VGPR (its elements from byte 0);
    two such groups whose registers lie in the same VGPRs (the same set of ``r // p``: at most two,
    a store being at most half a dword) share one ``v_perm_b32`` of those VGPRs, the later one
    in the high half (a ``_d16_hi`` store), taken in order within each set, on targets with such a
    store (``high_half``: ``Target.has_lds_store_high_half``; in PTX the high half takes a shift
    before its ``st.shared.b16``, so a shared repack saves nothing and none is shared).  Only stores of whole
    halves (``ds_write_b16``) share: the compiler takes a ``ds_write_b8_d16_hi`` of a repacked
    byte apart again (LLVM turns the shared repack of two bytes into shifts and 16-bit ORs, more
    VALU than a repack per byte; gfx1100 fp8 ``blocked[1x1,t32x1,o10]->blocked[1x1,t1x32,o01]``)."""
    repacks: list[list[int]] = []
    waiting: dict[frozenset, int] = {}  # VGPR set -> the repack with a free high half
    for i, g in enumerate(groups):
        if _narrow_in_place(g, p, element_bytes):
            continue
        if len(g) * element_bytes != 2 or not high_half:
            repacks.append([i])
            continue
        vgprs = frozenset(r // p for r in g)
        k = waiting.pop(vgprs, None)
        if k is None:
            waiting[vgprs] = len(repacks)
            repacks.append([i])
        else:
            repacks[k].append(i)
    return repacks


def _store_copies(groups: list[list[int]], element_bits: int, tuples: VgprTuples, alignment: int) -> int:
    """``v_mov_b32`` tuple copies of the LDS stores of the register groups ``groups`` (each in VGPR
    order, one access, in issue order), the src VGPRs arriving in ``tuples``: cost.store_tuple_copies of the
    accesses' dwords (cost.register_dwords: a VGPR not holding one src dword is repacked by ``v_perm_b32``
    into a new value, placed in its tuple directly; the round trip reads the src nowhere else), the rule
    ``estimate_overhead`` prices the plan's stores by.  ``alignment``: ``Target.vgpr_tuple_alignment``."""
    fresh: list[set[int]] = [set() for _ in groups]
    return store_tuple_copies([register_dwords(g, element_bits, f) for g, f in zip(groups, fresh)], fresh, tuples,
                              alignment)


class _Vectors(NamedTuple):
    """A side's choice of vector bits (``_choose_vectors``) with its counts: ``perms``, the dwords
    repacked by ``v_perm_b32`` (``_perms_side``); ``copies``, the tuple copies (stores:
    ``_store_copies``; loads: cost.register_load_copies of the unpaired loads, the dst taken in tuples)."""

    deltas: list[int]
    perms: int
    copies: int


def _choose_vectors(side: _Side, t_cap: int, p: int, element_bytes: int, store: bool, tuples: VgprTuples,
                    share_rounds: Callable[[list[list[int]]], list[int]] | None, alignment: int) -> list[_Vectors]:
    """Vector bits with the fewest LDS instructions plus repacking ``v_perm``s; for stores once
    counting the ``v_mov``s that build their VGPR tuples (the src arriving in ``tuples``:
    ``_store_copies``) and once not; for loads the same with the ``v_mov``s that build the dst's
    ``tuples`` from them (cost.register_load_copies of the loads unpaired, the rule the plan is priced
    by; with no tuple, none: a loaded VGPR is used where it lands, and loads are chosen once).
    ``share_rounds``: for stores on a
    target that stores from a register's upper half, the round of each access group
    (``lds_accesses``): narrow stores share repacks within a round (``_narrow_repacks``), as
    ``build_lds`` makes them; None (loads, which write new registers, and PTX stores): none shared.
    ``alignment``: the target's ``vgpr_tuple_alignment`` (cost.load_tuple_copies).  The distinct
    choices, the one counting copies first."""
    counts = (True, False) if store or tuples.dwords > 1 else (False,)
    best: dict[bool, tuple[_Vectors, float]] = {}
    for deltas in reversed(_vector_bits(side, t_cap)):  # widest first; a tie keeps the wider
        width_bytes = element_bytes << len(deltas)
        pairing = 2 if width_bytes in (4, 8) else 1  # optimistic pairing into read2/write2
        # each access covers at most 2**t of the distinct registers: a narrower one that cannot
        # take fewer instructions than every choice so far is not looked at
        if len(best) == len(counts) and all(-(-side.n_moved >> len(deltas)) / pairing >= c
                                            for _, c in best.values()):
            continue
        bases, span = _bases(side, deltas), span_values(deltas)
        if share_rounds is not None and width_bytes < 4 and p > 1:  # narrow stores share within a round
            groups = _groups(side, deltas)
            rnd_of = share_rounds(groups)
            perms = sum(len(_narrow_repacks([g for g, k in zip(groups, rnd_of) if k == rnd], p, element_bytes, True))
                        for rnd in sorted(set(rnd_of)))
        else:
            perms = _perms_side(bases, span, p, element_bytes)
        copies = 0  # narrower than 8 bytes: no tuple
        if width_bytes >= 8 and tuples.dwords > 1:
            groups = [[b ^ x for x in span] for b in bases]
            copies = (_store_copies(groups, 8 * element_bytes, tuples, alignment) if store else
                      register_load_copies(groups, 8 * element_bytes, tuples, alignment))
        for with_copies in counts:
            c = len(bases) / pairing + perms + (copies if with_copies else 0)
            if with_copies not in best or c < best[with_copies][1]:
                best[with_copies] = (_Vectors(deltas, perms, copies), c)
    out: list[_Vectors] = []
    for with_copies in counts:
        if best[with_copies][0] not in out:
            out.append(best[with_copies][0])
    return out


def _pair_keys(side: _Side, regs: list[int], element_bytes: int, dword_starts: bool) -> tuple[list[int], list[int]]:
    """(pattern, base) of the accesses starting at registers ``regs`` (``_pairs``), from the side's
    columns: access ``i``'s byte address in (warp, lane) ``x`` is ``((C(x) ^ I_i) & M) * element_bytes``
    (``I_i`` its register's image, ``M`` the offset bits; ``dword_starts``: the dword holding it,
    ``_over_fetch_addr``, which clears the offset bits below a dword from ``M``).

    Its base (warp 0, lane 0) is ``(I_i & M) * element_bytes``.  Two accesses ``i``, ``j`` differ by
    one constant in every (warp, lane) iff ``d = (I_i ^ I_j) & M`` has no bit that some ``C(x) & M``
    has, i.e. none of ``V``, the OR of the lane and warp columns: the difference at ``x`` less that at
    ``x = 0`` is ``sum(-2 s_k 2**k)`` over the bits ``k`` of ``d`` set in ``C(x)`` (``s_k = +-1``), a
    signed sum of distinct powers of two, zero only when empty.  So the pattern ``I_i & M & V`` tells
    them apart."""
    mask = (1 << side.n_off) - 1
    if dword_starts:
        mask &= -max(1, 4 // element_bytes)
    varying = 0
    for c in side.other_cols:
        varying |= c
    images = side.reg_images
    return [images[r] & mask & varying for r in regs], [(images[r] & mask) * element_bytes for r in regs]


def _pairs(patterns: list[int], bases: list[int], width_bytes: int) -> list[tuple[int, int | None, int, bool]]:
    """Pair accesses of one width whose addresses differ by one constant in every lane
    (ds_read2/ds_write2): access ``i`` with ``patterns[i]`` and lane-0 byte address ``bases[i]``
    (``_pair_keys``: equal patterns, addresses differing by one constant).

    Returns (first, second or None, offset1, st64) in issue order."""
    if width_bytes not in (4, 8) or not bases:
        return [(i, None, 0, False) for i in range(len(bases))]
    by_pattern: dict[int, list[tuple[int, int]]] = {}
    for i, (pattern, base) in enumerate(zip(patterns, bases)):
        by_pattern.setdefault(pattern, []).append((base, i))
    out = []
    for members in by_pattern.values():
        members.sort()
        used = [False] * len(members)
        for x in range(len(members)):
            if used[x]:
                continue
            used[x] = True
            partner = None
            for y in range(x + 1, len(members)):
                if used[y]:
                    continue
                d = members[y][0] - members[x][0]
                if d % width_bytes == 0 and 0 < d // width_bytes <= 255:
                    partner = (y, d // width_bytes, False)
                elif d % (64 * width_bytes) == 0 and 0 < d // (64 * width_bytes) <= 255:
                    partner = (y, d // (64 * width_bytes), True)
                if partner:
                    break
            if partner:
                used[partner[0]] = True
                out.append((members[x][1], members[partner[0]][1], partner[1], partner[2]))
            else:
                out.append((members[x][1], None, 0, False))
    out.sort(key=lambda t: t[0])
    return out


#: ``cost.ds_depth`` of every plan ``build_lds`` makes: its stores read src values (level 1), its
#: loads read what the stores wrote (level 2, the later rounds' stores reading src values too), and
#: its other steps (``v_perm_b32``, ``prmt``) are no crossbar moves (no level of their own).
ROUND_TRIP_DS_DEPTH = 2


@dataclass
class LdsAccesses:
    """The accesses of one design, before any register program: per side the coordinates, the
    vector bits and the register groups of every access; per round the (paired) accesses in issue
    order as ``(group, partner group or None, offset1, st64)``."""

    design: LdsDesign
    S: _Side
    D: _Side
    s_width_bytes: int
    d_width_bytes: int
    cross: bool  # the warps must order their stores before their loads (workgroup barriers): _exchanges
    stores: list  # per round
    loads: list  # per round
    ctx: ConversionContext
    s_matrix: bool | None = None  # the stores are PTX stmatrix (True: .trans), None: st.shared
    d_matrix: bool | None = None  # the loads are PTX ldmatrix (True: .trans), None: ld.shared
    s_perms: int = 0  # store dwords repacked by v_perm_b32 (AMD; register_steps)
    s_copies: int = 0  # the stores' VGPR tuple copies (AMD; register_steps)
    d_perms: int = 0  # a lower bound of the dst dwords gathered by v_perm_b32 (AMD; register_steps)
    d_copies: int = 0  # the copies building the dst's VGPR tuples from the loads' (AMD; register_steps)
    _floors: dict = field(default_factory=dict)
    # address_registers and address_valu; not copied by ``replace`` (other accesses), shared by
    # DesignPool._add's copies for designs of the same layout (the same accesses)
    _addresses: dict = field(default_factory=dict, init=False)

    @property
    def barrier_scope(self) -> str | None:
        """The scope of the barriers between a round's stores and its loads and between rounds:
        ``"workgroup"`` when some warp reads bytes another warp writes (unless every warp writes those
        itself with the same data: ``cross``, ``_exchanges``); else ``"warp"`` when the
        target's lanes are not in lockstep (NVIDIA: a lane reads bytes other lanes of its warp
        wrote, and a round's stores overwrite bytes they read); else None (AMD: a wave's LDS
        instructions complete in order, emulator.LDS_IN_ORDER_PER_WAVE)."""
        return _barrier_scope(self.cross, self.ctx.target.lockstep_lanes)

    @property
    def barrier_kind(self) -> str | None:
        """The instruction kind of those barriers (steps.BARRIER_SCOPES), None without any."""
        scope = self.barrier_scope
        return None if scope is None else BARRIER_SCOPES[scope]

    def matrix(self, store: bool) -> bool | None:
        """The side's matrix accesses: None (ld/st.shared), False (plain ldmatrix/stmatrix), True (.trans)."""
        return self.s_matrix if store else self.d_matrix

    def matrix_name(self, store: bool, g: list[int]) -> str:
        """The ldmatrix/stmatrix form of the matrix access of register group ``g``."""
        return matrix_name(store, len(g) // self.ctx.slots_per_dword, self.matrix(store))

    def address(self, store: bool, g: list[int]) -> np.ndarray:
        """Byte address ``[W, lanes]`` each lane gives the access of register group ``g``."""
        trans = self.matrix(store)
        if trans is not None:
            return _matrix_addr(self.S if store else self.D, g, self.ctx.slots_per_dword, self.ctx.element_bytes,
                                trans)
        if store:
            return _addr(self.S, g[0], self.ctx.element_bytes)
        if self.design.read_transpose:
            return _transpose_addr(self.D, g, self.ctx.element_bytes, self.ctx.target.transpose_load(
                self.ctx.element_bits))
        if self.design.over_fetch:
            return _over_fetch_addr(self.D, g[0], self.ctx.element_bytes)
        return _addr(self.D, g[0], self.ctx.element_bytes)

    def floor(self) -> float:
        """A lower bound of the plan's modelled cost under the context's cost model:
        ``CostModel.path_floor`` of the issue floor (every access's issue slot, the barriers), the
        pipe floor (every access's LDS-pipe cycles with its bank conflicts, cost.lds_access_cost
        beyond its issue) and two levels of DS latency; repacking and setup not counted (they only
        add issue or pipe cycles).  Memoized per cost model and element size."""
        return self.ctx.cost_model.path_floor(*self._floor_parts(), self.ctx.cost_model.latency(ROUND_TRIP_DS_DEPTH))

    def plan_floor(self) -> tuple[float, int]:
        """Lower bounds of the cost and of the instructions with setup (Plan.total_with_overhead)
        of the plan build_lds makes of these accesses.  build_lds issues exactly these accesses
        in this order, so the VALU ops forming their addresses are known (cost.lds_address_valu),
        and it emits at least ``register_steps``' byte permutes and tuple copies: its issue cycles
        (setup included) are at least the floor's plus those ops', so its cost is at least
        ``path_floor`` of that; instructions >= the LDS accesses, the barriers, those ops, the
        ``selector_valu`` VALU ops and the ``s_waitcnt`` of ``least_waits`` (one per round's barrier on AMD)."""
        return self._plan_floor(self.address_valu)

    def registers_plan_floor(self) -> tuple[float, int]:
        """``plan_floor`` with ``address_registers``' least count (``AddressRegisters.least``) in place of
        ``address_valu``: the addresses' registers worked out, no op program built.  At least
        ``early_plan_floor`` (at least one op per new register, the first access's address among
        them) and at most ``plan_floor`` in both parts (``path_floor`` does not decrease in any part)."""
        return self._plan_floor(self.address_registers.least())

    def early_plan_floor(self) -> tuple[float, int]:
        """``plan_floor`` with ``least_address_valu`` address VALU ops in place of ``address_valu``'s
        (at least that many: no address is formed before the first access, cost.lds_address_valu),
        no address table walked: at most ``plan_floor`` in both parts (``path_floor`` does not
        decrease in any part)."""
        return self._plan_floor(least_address_valu(self.ctx))

    def _plan_floor(self, valu: int) -> tuple[float, int]:
        cm = self.ctx.cost_model
        key = ("plan", cm.key(), self.ctx.element_bits)
        parts = self._floors.get(key)
        if parts is None:  # all but the address VALU (the floors ask with up to three counts of it)
            perms, copies = self.register_steps()
            issue, pipe = self._floor_parts()
            accesses = sum(len(a) for a in self.stores) + sum(len(a) for a in self.loads)
            barriers = 2 * len(self.stores) - 1 if self.barrier_scope else 0
            waits = least_waits(self.ctx, len(self.stores) if self.barrier_scope else 0)
            parts = self._floors[key] = (issue, pipe, copies, perms * cm.instruction("v_perm_b32") if perms else 0.0,
                                         accesses + barriers + perms + copies + waits)
        issue, pipe, copies, perm_issue, instructions = parts
        valu += self.selector_valu
        issue += (valu + copies) * cm.valu_issue + perm_issue
        return cm.path_floor(issue, pipe, cm.latency(ROUND_TRIP_DS_DEPTH)), instructions + valu

    def register_steps(self) -> tuple[int, int]:
        """Lower bounds of the ``v_perm_b32`` steps and of the tuple copies (``valu_tuple_copies`` of
        cost.estimate_overhead) of the plan build_lds makes of these accesses, on AMD targets (on
        PTX targets, and for matrix sides, none are counted).

        Permutes: build_lds gathers each store dword (``p`` registers in slot order) with
        ``in_wave.gather_dwords``, which makes no op only for a src VGPR as it is (``_in_place``:
        registers ``p j .. p j + p - 1`` in order), and narrow stores with ``_NarrowStores`` (one
        repack per group of ``_narrow_repacks``, each round's stores apart): ``s_perms``
        (the store vectors' ``perms``, ``_choose_vectors``: ``_perms_side``, or for narrow stores
        sharing repacks each round's ``_narrow_repacks``) counts exactly those.  Such a dword (or repack) is no src value and the stores hold distinct
        registers, so each is the result of an op of its own (a value has one producer).  Where
        the dst has no duplicates, every dst dword is loaded and is in place only when one loaded
        VGPR holds it in order, so the dst dwords gathered are the loaded VGPRs out of order,
        ``_perms_side`` of the load vectors (for narrow loads, every dword; for over-fetching loads
        the dwords no loaded dword holds in place, ``_over_fetch_perms``): ``d_perms``, distinct
        dwords, none a store dword (those read src values).  Each such op is live (stores and
        outputs are) and becomes one ``v_perm_b32`` step (``ir._Emitter``; elements under 32 bits:
        one issue at ``CostModel.instruction("v_perm_b32")``).

        Copies: cost.tuple_copies over the wide stores, the src VGPRs arriving in tuples, counts
        the dwords of each chunk that are src VGPRs unless the chunk is an aligned tuple in order;
        a store reads a src value in its own VGPR (``ir._Emitter`` writes every new value to a
        fresh register, numbered above the src VGPRs) and a repacked one in a fresh register
        written before it: ``_store_copies`` counts exactly those (``s_copies``), each one
        ``v_mov_b32`` of setup at ``valu_issue``.  Plus the loads' copies building the dst's tuples
        (``d_copies``: cost.register_load_copies of the paired loads, ``valu_load_tuple_copies``)."""
        return self.s_perms + self.d_perms, self.s_copies + self.d_copies

    @cached_property
    def selector_valu(self) -> int:
        """A lower bound of the VALU building the per-lane ``v_perm_b32`` selectors (``valu_lane_selector`` of
        cost.estimate_overhead) of the plan build_lds makes of these accesses: ``over_fetch_selector_valu``
        of the dst lane columns' offset bits below the dword for over-fetching loads, else 0."""
        p = self.ctx.slots_per_dword
        if not self.design.over_fetch or p == 1:
            return 0
        return over_fetch_selector_valu(self.ctx, [c & (p - 1) for c in self.D.other_cols[:self.D.lane_bits]])

    @property
    def address_valu(self) -> int:
        """The VALU ops forming the LDS addresses of the plan build_lds makes of these accesses
        (cost.lds_address_valu of its LDS steps: these accesses, in this order):
        ``address_registers``' count, memoized with it."""
        got = self._addresses.get("valu")
        if got is None:
            got = self._addresses["valu"] = self.address_registers.count()
        return got

    @property
    def address_registers(self) -> AddressRegisters:
        """``cost.AddressRegisters`` of the warp-0 addresses of these accesses and their warp columns
        (``_warp_columns``: the warp part, ``cost.warp_part_ops``), each with one LDS step
        of its form (a step's immediate offsets depend on its kind, width and pairing, not on its
        address or registers); memoized in ``_addresses``, which the copies of these accesses for
        designs of the same layout share (DesignPool._add: the same accesses)."""
        got = self._addresses.get("registers")
        if got is not None:
            return got
        rows, forms, warps = [], [], []
        made: dict[tuple, Step] = {}  # form -> its step
        for stores, loads in zip(self.stores, self.loads):
            for store, accesses in ((True, stores), (False, loads)):
                if not accesses:
                    continue
                rows.append(self._warp0_addresses(store, [g for g, _, _, _ in accesses]))
                warps += self._warp_columns(store, [g for g, _, _, _ in accesses])
                for g, g2, off, st64 in accesses:
                    form = (store, g2 is None, off, st64)
                    if form not in made:
                        made[form] = self._form_step(store, g2, off, st64)
                    forms.append(made[form])
        got = self._addresses["registers"] = (AddressRegisters.of(np.concatenate(rows), forms, self.ctx.arch, warps,
                                                                  self.ctx.formed_addresses,
                                                                  self.ctx.one_wave)
                                              if forms else AddressRegisters(0, None, 0, ()))
        return got

    def _warp_columns(self, store: bool, groups: list[list[int]]) -> list[tuple[int, ...]]:
        """``cost.warp_columns`` of the accesses of register groups ``groups`` (a plain access's: its
        side's lane addresses', the same for every group)."""
        if self.matrix(store) is None and (store or not (self.design.read_transpose or self.design.over_fetch)):
            side = self.S if store else self.D
            return [warp_columns(side._lane_addresses(self.ctx.element_bytes))] * len(groups)
        return [warp_columns(self.address(store, g)) for g in groups]

    def _warp0_addresses(self, store: bool, groups: list[list[int]]) -> np.ndarray:
        """``[len(groups), lanes]`` warp 0's byte addresses of the accesses of register groups ``groups``
        (``address``; plain accesses: rows of the side's address table)."""
        if self.matrix(store) is None and (store or not (self.design.read_transpose or self.design.over_fetch)):
            side, element_bytes = (self.S if store else self.D), self.ctx.element_bytes
            regs = np.array([side.register_address(g[0], element_bytes) for g in groups], dtype=np.int64)
            return side._lane_addresses(element_bytes)[0][None, :] ^ regs[:, None]
        return np.array([_warp0(self.address(store, g)) for g in groups], dtype=np.int64)

    def _form_step(self, store: bool, pair: list[int] | None, pair_offset: int, st64: bool) -> Step:
        """An LDS step of the form (kind, width, pairing) of this round trip's accesses on one side."""
        if self.matrix(store) is not None:
            return (MatrixStore if store else MatrixLoad)(addr=None)
        kind, width_bytes = (LdsStore, self.s_width_bytes) if store else (LdsLoad, self.d_width_bytes)
        return kind(addr=None, width_bytes=width_bytes, pair=pair, pair_offset=pair_offset, st64=st64)

    def _floor_parts(self) -> tuple[float, float]:
        """(issue, LDS-pipe) cycles of these accesses and barriers (``floor``), memoized per cost
        model and element size."""
        return self._counted()[:2]

    def access_cycles(self) -> dict[tuple[bool, int, bool, int], float]:
        """``cost.lds_access_cost`` of every access that is no matrix access, by its form: (store,
        width in bytes, paired, transpose element bits), the arguments that ``Step.price`` gives
        ``cost._Pricer.lds_access`` besides the address.  One cost per form: one side's accesses are
        XOR-translates of each other by multiples of the width (an access starts at a register
        whose vector bits are clear), the same banks up to a permutation, and the same key of
        ``cost.lds_conflict_degree``.  Memoized with ``_floor_parts``."""
        return self._counted()[2]

    def _counted(self) -> tuple[float, float, dict]:
        key = (self.ctx.cost_model.key(), self.ctx.element_bits)
        if key not in self._floors:
            self._floors[key] = self._count_floor_parts()
        return self._floors[key]

    def _count_floor_parts(self) -> tuple[float, float, dict]:
        cm = self.ctx.cost_model
        issue = pipe = 0.0
        costs: dict[tuple[bool, int, bool, int], float] = {}  # access_cycles
        for store, rounds, width_bytes in ((True, self.stores, self.s_width_bytes),
                                           (False, self.loads, self.d_width_bytes)):
            matrix = self.matrix(store) is not None
            transpose = 0 if store else self.design.read_transpose
            for accesses in rounds:
                for g, g2, _, _ in accesses:
                    if matrix:  # groups of 1, 2 or 4 registers
                        cycles = matrix_access_cost(cm, self.ctx.arch, self.matrix_name(store, g),
                                                    self.address(store, g))
                    else:
                        form = (store, width_bytes, g2 is not None, transpose)
                        cycles = costs.get(form)
                        if cycles is None:
                            cycles = costs[form] = lds_access_cost(cm, self.ctx.arch, store, width_bytes,
                                                                   self.address(store, g), self.ctx.element_bits,
                                                                   g2 is not None, transpose)
                    issue += cm.ds_issue  # the issue slot; the rest is the pipe's (cost._Pricer)
                    pipe += cycles - cm.ds_issue
        if self.barrier_kind:
            issue += cm.instruction(self.barrier_kind) * (2 * len(self.stores) - 1)
        return issue, pipe, costs


def lds_accesses(ctx: ConversionContext, design: LdsDesign) -> list[LdsAccesses]:
    """The round trips through ``design``: vectors, groups, rounds and pairs, one per distinct choice
    of the store vectors (counting the stores' tuple copies, then not: a wide store with copies can
    beat narrow conflicting stores, the cost model decides), for each choice of the load vectors (one,
    or where the dst is taken in VGPR tuples on AMD two: counting the copies that build them, then
    not: ``_choose_vectors``).  A DesignRefused where the design's rounds split a lane's elements
    (``_check_rounds``) or its transpose loads cannot read the dst (``_transpose_groups``).

    Every access lies in one round: its registers' images differ only in offset bits (the vector
    bits are offset bits, ``_vector_bits``, ``_over_fetch_groups``, ``_transpose_groups``; a matrix
    access's dword registers too, ``_matrix_groups``, which takes a dword's round from its first) and no
    lane or warp column has a round component (``_check_rounds``), so the round of (warp, lane,
    register) is that of the register alone.  ``rounds_of`` checks it, an internal invariant."""
    prob, element_bytes, p = ctx.problem, ctx.element_bytes, ctx.slots_per_dword
    inv_cols = f2.inverse(design.shared_cols)  # tensor bits -> offset | rep bits
    S = _side(prob.src_cols, design, inv_cols, stores=True)
    D = _side(prob.dst_cols, design, inv_cols)
    _check_rounds(S, D)
    t_cap = (16 // element_bytes).bit_length() - 1

    def rounds_of(side: _Side, groups: list[list[int]]) -> list[int]:
        if not design.n_rep_bits:
            return [0] * len(groups)
        reps = side.rounds([g for grp in groups for g in grp])
        reps = reps.reshape(reps.shape[0], reps.shape[1], len(groups), -1)
        if (reps != reps[:1, :1, :, :1]).any():
            raise AssertionError("internal: an LDS access spans two rounds")
        return [int(x) for x in reps[0, 0, :, 0]]

    share_rounds = (lambda groups: rounds_of(S, groups)) if ctx.target.has_lds_store_high_half else None
    alignment = ctx.target.vgpr_tuple_alignment
    counted = ctx.target.lds_isa != "ptx"  # register_steps: AMD's (PTX: prmt, and no tuple copies)
    store_choices = _choose_vectors(S, t_cap, p, element_bytes, True, ctx.src_tuples if counted else VgprTuples(()),
                                    share_rounds, alignment)
    # per choice of the loads: (groups, width, a lower bound of the dst dwords gathered from the loaded
    # values: LdsAccesses.register_steps)
    if design.read_transpose:
        load = ctx.target.transpose_load(ctx.element_bits)
        load_choices = [(_transpose_groups(D, load, design.n_offset_bits), load.bytes_per_lane, 0)]
    elif design.over_fetch:
        d_groups, d_width_bytes = _over_fetch_groups(D, element_bytes, t_cap)
        d_perms = 0 if ctx.dst_unpacked else _over_fetch_perms(D, d_groups, element_bytes, d_width_bytes)
        load_choices = [(d_groups, d_width_bytes, d_perms)]
    else:
        load_choices = []
        for d_vectors in _choose_vectors(D, t_cap, p, element_bytes, False,
                                         ctx.dst_tuples if counted else VgprTuples(()), None, alignment):
            d_width_bytes = element_bytes << len(d_vectors.deltas)
            d_perms = 0
            if len(D.unique) == len(D.reg_image):  # (no duplicates)
                d_perms = _load_perms(ctx, d_vectors.perms, d_width_bytes, len(D.reg_image))
            load_choices.append((_groups(D, d_vectors.deltas), d_width_bytes, d_perms))

    def paired(side: _Side, groups: list[list[int]], width_bytes: int, rnd_of: list[int], rnd: int) -> list:
        gs = [g for g, k in zip(groups, rnd_of) if k == rnd]
        if ((side is D and design.read_transpose) or width_bytes not in (4, 8)  # only b32/b64 accesses pair
                or not ctx.target.has_lds_pair):
            return [(g, None, 0, False) for g in gs]
        keys = _pair_keys(side, [g[0] for g in gs], element_bytes, side is D and design.over_fetch)
        return [(gs[i], None if j is None else gs[j], off, st64) for i, j, off, st64 in _pairs(*keys, width_bytes)]

    n_rounds = 1 << design.n_rep_bits
    out: list[LdsAccesses] = []
    cross = _exchanges(ctx, design.n_rep_bits)
    # per choice of the stores: (its vectors, width, per round the paired accesses, v_perm_b32 steps with the
    # intermediates of each round's store dwords, build_lds's)
    store_rounds = []
    for s_vectors in store_choices:
        s_groups, s_width_bytes = _groups(S, s_vectors.deltas), element_bytes << len(s_vectors.deltas)
        s_round = rounds_of(S, s_groups)
        stores = [paired(S, s_groups, s_width_bytes, s_round, k) for k in range(n_rounds)]
        s_perms = s_vectors.perms
        if s_width_bytes >= 4 and element_bytes == 1:
            s_perms += sum(gather_intermediates(_dword_parts(_round_registers(rnd), p), element_bytes) for rnd in stores)
        store_rounds.append((s_vectors, s_width_bytes, stores, s_perms))
    plain_loads = not (design.read_transpose or design.over_fetch)
    for d_groups, d_width_bytes, d_perms in load_choices:
        d_round = rounds_of(D, d_groups)
        loads = [paired(D, d_groups, d_width_bytes, d_round, k) for k in range(n_rounds)]
        if plain_loads and element_bytes == 1 and len(D.unique) == len(D.reg_image) and not ctx.dst_unpacked:
            d_perms += _load_intermediates(D, loads, p, element_bytes, d_width_bytes)
        # the copies building the dst's tuples: a ds_read2 writes its two accesses' VGPRs one after the other
        d_copies = (register_load_copies([g + (g2 or []) for rnd in loads for g, g2, _, _ in rnd], ctx.element_bits,
                                         ctx.dst_tuples, alignment)
                    if counted and not design.over_fetch else 0)
        for s_vectors, s_width_bytes, stores, s_perms in store_rounds:
            out.append(LdsAccesses(design, S, D, s_width_bytes, d_width_bytes, cross, stores, loads,
                                   ctx, s_perms=s_perms if counted else 0,
                                   s_copies=s_vectors.copies if counted else 0, d_perms=d_perms if counted else 0,
                                   d_copies=d_copies))
    if out and not design.read_transpose and not design.over_fetch:
        out += _matrix_variants(ctx, out, n_rounds)
    return out


def _check_rounds(S: _Side, D: _Side) -> None:
    """A DesignRefused where a lane or warp column of either side has a round component (``C(c)``
    above the offset bits): the lanes (or warps) of one access would then hold elements of two
    rounds.  ``_valid_rounds`` only asks that some complement of the round vectors hold every lane
    and warp vector; a layout's offset basis need not be that complement (the register-first
    layouts put register vectors there: sm_90 fp16, a src lane ``e6 + e7`` and the dst registers
    ``e6`` then the round ``e7``, tests/test_lds_design_refusals.py)."""
    for side, name in ((S, "src"), (D, "dst")):
        if any(c >> side.n_off for c in side.other_cols):
            raise DesignRefused(f"the shared layout's rounds split a {name} lane's or warp's elements: a lane or "
                                f"warp vector has a round component")


def _matrix_variants(ctx: ConversionContext, plain: list[LdsAccesses], n_rounds: int) -> list[LdsAccesses]:
    """The round trips of ``plain``'s design with PTX ``ldmatrix`` loads and/or ``stmatrix`` stores
    (plain or ``.trans``) where the target has them and the side's layout allows them
    (``_matrix_groups``): every combination with at least one matrix side, the other side as in
    ``plain`` (each store choice there)."""
    target, p = ctx.target, ctx.slots_per_dword
    first = plain[0]

    def forms(store: bool) -> list[tuple[bool, list]]:
        if not target.has_matrix_access(store):
            return []
        out = []
        for trans in (False, True):
            try:
                groups = _matrix_groups(first.S if store else first.D, p, ctx.element_bits, trans, n_rounds)
            except LayoutError:
                continue
            out.append((trans, [[(g, None, 0, False) for g in rnd] for rnd in groups]))
        return out

    loads = [(None, first.loads, first.d_width_bytes)] + [(t, rounds, 16) for t, rounds in forms(False)]
    stores = [(None, a.stores, a.s_width_bytes, a.s_perms, a.s_copies) for a in plain] + \
        [(t, rounds, 16, 0, 0) for t, rounds in forms(True)]
    return [replace(first, s_width_bytes=s_width, d_width_bytes=d_width, stores=s_rounds, loads=d_rounds,
                    s_matrix=s_trans, d_matrix=d_trans, s_perms=s_perms, s_copies=s_copies,
                    d_perms=first.d_perms if d_trans is None else 0, _floors={})
            for s_trans, s_rounds, s_width, s_perms, s_copies in stores for d_trans, d_rounds, d_width in loads
            if s_trans is not None or d_trans is not None]


def _matrix_groups(side: _Side, p: int, element_bits: int, trans: bool, n_rounds: int) -> list[list[list[int]]]:
    """Per round, the register groups (``p`` registers per dword, 1, 2 or 4 dwords in order) of PTX
    ``ldmatrix``/``stmatrix`` accesses (``.trans`` if ``trans``) moving the side's distinct dwords.

    With ``C`` (the side's hardware bits -> offset bits) and ``z = log2 p`` sub-dword register
    bits, a plain access needs the elements of a lane's dword, then lane bits 0, 1, at offset bits
    ``0 .. z + 1`` (the 16-byte row of 4 lanes: ``C(register bit i) = 2**i`` for ``i < z``,
    ``C(lane bit j) = 2**(z + j)`` for ``j < 2``), and no other column touching those bits; then
    lane bits 2-4 (the row) and the dword (the matrix) are free: each row has its own address.
    ``.trans`` (8- and 16-bit elements) needs a half's elements, then lane bits 2, 3, 4 at offset
    bits ``0 .. z + 1`` (``z - 1`` register bits, then those lanes) and no other column touching
    them.  A dword is distinct when its first register is in ``side.unique``; the store side
    keeps one dword of each class of store twins (``_stored_once``; a LayoutError when two registers of
    a dword are store twins, ``.trans`` only); the dwords of a round are grouped in fours, the rest in
    twos and ones.  A LayoutError when the layout does not allow the access; a DesignRefused when a
    dword's registers lie in two rounds (``C(register bit i)`` above the offset bits for some
    ``i < z``: ``.trans`` leaves register bit ``z - 1`` free), so that every access lies in one round
    and a dword's round is that of its first register."""
    z = p.bit_length() - 1
    if element_bits not in (8, 16, 32) or (trans and element_bits == 32):
        raise LayoutError(f"no matrix access of {element_bits}-bit elements{' (.trans)' if trans else ''}")
    inner = z - 1 if trans else z  # register bits inside a piece
    lane_bits = [2, 3, 4] if trans else [0, 1]
    lanes = side.other_cols[:side.lane_bits]
    want = {("register", i): 1 << i for i in range(inner)}
    want.update({("lane", j): 1 << (inner + k) for k, j in enumerate(lane_bits)})
    low = (1 << (inner + len(lane_bits))) - 1
    if side.lane_bits != 5 or inner + len(lane_bits) > side.n_off or len(side.reg_cols) < z:
        raise LayoutError("the layout has no matrix fragment")
    cols = {("register", i): c for i, c in enumerate(side.reg_cols)}
    cols.update({("lane", j): c for j, c in enumerate(lanes)})
    cols.update({("warp", j): c for j, c in enumerate(side.other_cols[side.lane_bits:])})
    if any(cols[k] != v for k, v in want.items()) or any(c & low for k, c in cols.items() if k not in want):
        raise LayoutError("the layout's lanes do not hold matrix fragments of its shared layout")
    if any(c >> side.n_off for c in side.reg_cols[:z]):  # (.trans: register bit z - 1 is free of ``want``)
        raise DesignRefused("a dword's registers lie in two rounds: a matrix access would span both")
    unique = set(side.unique)
    firsts = [d * p for d in range(len(side.reg_image) // p) if d * p in unique]
    if side.has_store_twins:
        keys = side.store_keys
        if len({keys[j] for j in range(p)}) < p:  # (every dword's keys: those of 0..p-1, translated)
            raise LayoutError("a matrix store would write an element twice: two registers of a dword hold it "
                              "in two lanes or warps")
        firsts = _stored_once(side, firsts, list(range(p)))  # (a dword's registers: its first XOR 0..p-1)
    by_round: list[list[int]] = [[] for _ in range(n_rounds)]
    for f in firsts:
        by_round[(int(side.warp_lane[0, 0]) ^ int(side.reg_image[f])) >> side.n_off].append(f // p)
    out = []
    for dwords in by_round:
        groups, k = [], 0
        while k < len(dwords):
            n = 4 if len(dwords) - k >= 4 else (2 if len(dwords) - k >= 2 else 1)
            groups.append([d * p + j for d in dwords[k:k + n] for j in range(p)])
            k += n
        out.append(groups)
    return out


def _matrix_addr(side: _Side, g: list[int], p: int, element_bytes: int, trans: bool) -> np.ndarray:
    """``[W, 32]`` the byte address lane ``L = 8m + r`` gives a matrix access of the registers ``g``
    (``_matrix_groups``): row ``r`` of matrix ``m`` (``m`` taken mod the matrices: lanes past them give
    a copy).  Plain: the row held by lanes ``4r .. 4r + 3``, its first byte that of lane ``4r``'s
    register ``g[m p]``; ``.trans``: the row of half ``h = r & 1`` of lanes ``r >> 1 + 4 i``, its first
    byte that of lane ``r >> 1``'s register ``g[m p + h p / 2]``."""
    num = len(g) // p
    lane = np.arange(32)
    m, r = (lane >> 3) % num, lane & 7
    if trans:
        regs, lanes = np.asarray(g)[m * p + (r & 1) * (p // 2)], r >> 1
    else:
        regs, lanes = np.asarray(g)[m * p], 4 * r
    return side.offsets(lanes, regs) * element_bytes


def _transpose_groups(D: _Side, load: TransposeLoad, n_off: int) -> list[list[int]]:
    """The register groups of the transpose loads ``load`` of the dst side, in element order.

    ``E = 2**k`` elements per load and lane (``k = load.vector_bits``).  With ``C`` = (dst hardware
    bits -> offset bits), a transpose load needs ``C(lane bit b) = offset bit b`` for ``b < k`` (the
    elements one lane reads), no other column touching offset bits ``0..k-1`` (alignment), and the
    register vectors ``delta_t = 2**t`` (``t < k``: element ``j``'s register is ``r ^ j``) in
    one round.  Then lane ``i`` element ``j`` -- element ``i mod E`` of the read of the lane of its
    group ``TransposeLoad.sources`` names -- is the element of (lane ``i``, register ``r ^ j``)
    (``_transpose_addr``, linlayout.synth.plan.transpose_element_addresses).
    """
    k = load.vector_bits
    low = (1 << k) - 1
    lanes = D.other_cols[:D.lane_bits]
    if (len(D.reg_cols) < k or len(D.unique) != len(D.reg_image)
            or any(lanes[b] != 1 << b for b in range(k))
            or any(c & low for c in lanes[k:] + D.other_cols[D.lane_bits:] + D.reg_cols)
            or any(c >> n_off for c in D.reg_cols[:k])):
        raise DesignRefused("the dst layout cannot be read with transpose loads from this shared layout")
    n_regs = len(D.reg_image)
    return [[r + j for j in range(1 << k)] for r in range(0, n_regs, 1 << k)]


def _transpose_addr(D: _Side, g: list[int], element_bytes: int, load: TransposeLoad) -> np.ndarray:
    """``[W, lanes]`` byte address lane ``L`` supplies to the transpose load ``load`` of group ``g``: the
    offset of the element of (lane ``i``, register ``g[j]``), ``(i, j)`` being where element 0 of
    ``L``'s read goes (``TransposeLoad.read_origins``; ``i``'s low ``k`` bits are 0, so its elements
    ``0 .. E-1`` are the consecutive ones ``L`` reads, aligned)."""
    i, j = load.read_origins()
    regs = np.asarray(g)[j]
    return D.offsets(i, regs) * element_bytes


def _over_fetch_groups(D: _Side, element_bytes: int, t_cap: int) -> tuple[list[list[int]], int]:
    """The dst register groups of over-fetching loads (``over_fetch_design``) and their width in bytes.

    ``z = log2(4 / element_bytes)`` offset bits address inside a dword.  A load of ``2**t`` dwords needs
    register vectors ``delta_i`` with ``C(delta_i)`` = offset bit ``z + i`` (``i < t``) and no lane
    or warp column touching offset bits ``z .. z+t-1`` (alignment).  Lane columns may touch bits
    ``0 .. z-1``: the lane's element then sits in a lane-dependent slot of its dword (the other
    slots hold other lanes' elements); warp columns may not (one program serves every warp), and
    the lanes' slots form at most two patterns (one pair of ``v_perm_b32`` selectors).  Register
    ``r`` lies in dword ``(C(r) >> z) mod 2**t`` of the load of block ``C(r) >> (z + t)``; the
    widest ``t`` is taken.  Groups list their registers by dword, the group's first in dword 0."""
    z = (4 // element_bytes).bit_length() - 1
    low = (1 << z) - 1
    lanes, warps = D.other_cols[:D.lane_bits], D.other_cols[D.lane_bits:]
    _check_sub_dword_slots([c & low for c in lanes], [c & low for c in warps])
    t_max = min(t_cap, D.n_off) - z  # (dwords of offset bits: a load's elements lie in one round)
    targets = f2.solve_many(D.reg_cols, [1 << (z + i) for i in range(t_max)])
    t = 0
    while (t < t_max and targets[t] is not None and f2.apply_columns(D.reg_cols, targets[t]) == 1 << (z + t)
           and not any((c >> (z + t)) & 1 for c in D.other_cols)):
        t += 1
    groups: dict[int, list[int]] = {}
    for r in D.unique:
        groups.setdefault(int(D.reg_image[r]) >> (z + t), []).append(r)

    def dword_then_slot(r: int) -> tuple[int, int]:
        c = int(D.reg_image[r])
        return (c >> z) & ((1 << t) - 1), c & low

    return [sorted(g, key=dword_then_slot) for g in groups.values()], 4 << t


def _over_fetch_addr(D: _Side, r: int, element_bytes: int) -> np.ndarray:
    """``[W, lanes]`` byte address of the dword holding register ``r``'s element (over-fetch loads)."""
    return D.address(r, element_bytes) & ~3


def _over_fetch_slot(D: _Side, r: int, element_bytes: int) -> int | np.ndarray:
    """The slot of register ``r``'s element inside its loaded dword: per lane (warp 0; the warps
    agree, ``_over_fetch_groups``), an int when every lane has the same.

    The slot is ``(warp_lane[0, l] ^ C(r)) & (p - 1)`` (``p`` slots a dword), the lanes' low bits
    XOR the register's: uniform exactly when the lanes' are, and one read-only array per value of
    the register's low bits otherwise (kept on the side: ``_Side.lane_slots``)."""
    p = 4 // element_bytes
    low = int(D.reg_image[r]) & (p - 1)
    slots = D.lane_slots.get((p, low))
    if slots is None:
        slots = (D.warp_lane[0] & (p - 1)) ^ low
        slots = int(slots[0]) if (slots == slots[0]).all() else slots
        if isinstance(slots, np.ndarray):
            slots.setflags(write=False)
        D.lane_slots[(p, low)] = slots
    return slots


def _load_intermediates(D: _Side, loads: list[list], p: int, element_bytes: int, width_bytes: int) -> int:
    """``in_wave.gather_intermediates`` of the dst dwords ``build_lds`` gathers from the plain loads ``loads``
    (per round, its accesses) of ``width_bytes`` into a dst without duplicates: register ``r`` at the
    value and slot ``_loaded_at`` gives it (a value named by its round, access and index)."""
    at: dict[int, tuple] = {}
    for k, rnd in enumerate(loads):
        for a, (g, g2, _, _) in enumerate(rnd):
            for r, i, slot in _loaded_at(g, g2, p, element_bytes, width_bytes):
                at[r] = ((k, a, i), slot)
    n = len(D.reg_image)
    return gather_intermediates([[at[r] if r < n else None for r in range(j, j + p)] for j in range(0, n, p)],
                                element_bytes)


def _over_fetch_perms(D: _Side, groups: list[list[int]], element_bytes: int, width_bytes: int) -> int:
    """``LdsAccesses.d_perms`` of over-fetching loads (``_over_fetch_groups``' ``groups`` of ``width_bytes``)
    into a packed dst: its distinct dst dwords that no loaded dword holds in place.

    ``build_lds`` loads register ``r`` of group ``i`` into dword ``k`` of that load at the lane's slot
    ``_over_fetch_slot`` (``_emit_over_fetch_load``; a duplicate takes its original's), and gathers dst dword
    ``j`` (registers ``p j .. p j + p - 1``) with ``in_wave.gather_dwords``, which makes no op only where one
    loaded dword holds them all at slots ``0 .. p - 1`` in every lane (``_in_place``: each slot an int, a
    lane-dependent slot never is).  Any other dword is a ``v_perm_b32`` (or ``PermSelect``) of its own:
    its last op's operands and selector name every (loaded dword, slot) of its parts, so two dwords of
    different parts share none (a slot array is one per value of the register's low bits)."""
    p = 4 // element_bytes
    n = width_bytes // 4
    z = p.bit_length() - 1
    at: dict[int, tuple] = {}  # register of D.unique -> (group, dword of its load, slot or its low bits)
    for i, g in enumerate(groups):
        base = int(D.reg_image[g[0]])
        for r in g:
            slot = _over_fetch_slot(D, r, element_bytes)
            at[r] = (i, ((int(D.reg_image[r]) ^ base) >> z) & (n - 1),
                     slot if type(slot) is int else ("lanes", int(D.reg_image[r]) & (p - 1)))
    images = D.reg_images
    of_image = {images[u]: u for u in D.unique}
    parts = [at[of_image[x]] for x in images]  # (a duplicate: its original's)
    gathered = set()
    for j in range(0, len(parts), p):
        dword = tuple(parts[j:j + p])
        if not all(type(x[2]) is int and x[2] == k and x[:2] == dword[0][:2] for k, x in enumerate(dword)):
            gathered.add(dword)
    return len(gathered)


def build_lds(prog: Program, acc: LdsAccesses, src_dwords: list[int]) -> list[int]:
    """Emit the round trip ``acc`` into ``prog``; returns the dst register values (a register not
    loaded, a duplicate, takes the value of its original: the register of ``D.unique`` with its image)."""
    element_bytes, p, S, D = acc.ctx.element_bytes, acc.ctx.slots_per_dword, acc.S, acc.D
    loaded: dict[int, tuple[int, int]] = {}  # dst register -> (value, slot)
    for rnd, (stores, loads) in enumerate(zip(acc.stores, acc.loads)):
        if rnd and acc.barrier_scope:
            prog.barrier(acc.barrier_scope)
        # the dwords of a round's wide stores are built at once: 8-bit repacks share v_perm_b32s across stores
        wide = acc.s_width_bytes >= 4
        dwords = iter(_dwords_of(prog, _round_registers(stores), src_dwords, p, element_bytes) if wide else [])
        narrow = None if wide else _NarrowStores(prog, [g for g, _, _, _ in stores], src_dwords, p, element_bytes,
                                                 acc.ctx.target.has_lds_store_high_half)
        for g, g2, off, st64 in stores:
            if wide:
                vals, pair = ([next(dwords) for _ in range(len(h) // p)] if h is not None else None
                              for h in (g, g2))
                if acc.s_matrix is not None:  # stmatrix rows: 16 bytes each, never paired
                    prog.store(vals, [0] * len(vals), acc.address(True, g), 16, matrix=(len(vals), acc.s_matrix))
                    continue
                prog.store(vals, [0] * len(vals), _addr(S, g[0], element_bytes), acc.s_width_bytes, pair=pair,
                           pair_offset=off, st64=st64)
            else:
                prog.store(*narrow.value(g), _addr(S, g[0], element_bytes), acc.s_width_bytes)
        if acc.barrier_scope:
            prog.barrier(acc.barrier_scope)
        for g, g2, off, st64 in loads:
            if acc.d_matrix is not None:
                vals = prog.load(len(g) // p, acc.address(False, g), 16, matrix=(len(g) // p, acc.d_matrix))
                for k, r in enumerate(g):
                    loaded[r] = (vals[k // p], k % p)
                continue
            if acc.design.read_transpose:
                vals = prog.load(acc.d_width_bytes // 4, acc.address(False, g), acc.d_width_bytes,
                                 transpose=acc.design.read_transpose)
                for k, r in enumerate(g):
                    loaded[r] = (vals[k // p], k % p)
                continue
            if acc.design.over_fetch:
                _emit_over_fetch_load(prog, D, g, g2, off, st64, element_bytes, acc.d_width_bytes, loaded)
                continue
            _emit_load(prog, D, g, g2, off, st64, p, element_bytes, acc.d_width_bytes, loaded)
    # dst registers: loaded ones, duplicates from their original (two registers hold the same elements in
    # every lane and warp iff their images are equal, _first_registers; D.unique has one per image)
    images = D.reg_images
    R_d = len(images)
    of_image = {images[u]: u for u in D.unique}
    original = {r: of_image[images[r]] for r in range(R_d) if r not in loaded}
    if p == 1:
        return [loaded[original.get(r, r)][0] for r in range(R_d)]
    return gather_dwords(prog, [[loaded[original.get(r, r)] if r < R_d else None for r in range(dw * p, dw * p + p)]
                                for dw in range(-(-R_d // p))], element_bytes)


def _crosses_warps(prob: Problem) -> bool:
    """Does some warp read an element that another warp writes, through any shared layout
    (``LdsAccesses.cross``)?

    The accesses cover every register of both sides, so warp ``w`` writes the elements
    ``S(w) + V_S`` and reads ``D(w) + V_D`` (``V``: the span of a side's register and lane
    columns).  Warp ``w`` reads what warp ``v`` writes iff ``D(w) + S(v)`` lies in
    ``U = V_S + V_D``: the pairs ``(w, v)`` doing so are the kernel of a linear map modulo ``U``,
    and the answer is yes iff that kernel leaves the diagonal ``w = v``.  A shared layout maps the
    elements to their (offset, round) coordinates by a linear isomorphism, which keeps all of
    this: every design has the same answer."""
    return _warps_exchange(*prob.key()[1])  # (the src, then dst, register, lane and warp columns)


def _exchanges(ctx: ConversionContext, n_rep_bits: int) -> bool:
    """Must a round trip of ``n_rep_bits`` round bits order its warps' stores before their loads
    (``LdsAccesses.cross``: workgroup barriers)?  Where some warp reads an element that another warp
    writes (``_crosses_warps``), except on a target of lockstep lanes (AMD) in one round where every
    warp holds the whole src tile (``_src_in_every_warp``): every warp then stores every element
    itself, at the element's own offset, before its loads (a wave's LDS accesses complete in order,
    emulator.LDS_IN_ORDER_PER_WAVE), and the other warps' stores to those bytes write the same data
    (the stored value of a byte is its element's), so no order between the warps changes a byte a load
    reads.  Each store still writes what a dedup leaves (``_Side.unique``, ``_stored_once``): a
    register's twins by a lane and warp vector ``y`` are twins by ``y``'s lane part alone there (the
    warp columns lie in the lane columns' span), so a warp's own stores still cover its registers.
    With rounds the next round's stores overwrite bytes another warp may still read: the barriers
    stay.  Not on PTX targets, where the lanes of a warp are not in lockstep (and two warps storing
    the same bytes unordered is a data race of the PTX memory model however equal the data)."""
    if not _crosses_warps(ctx.problem):
        return False
    return not (n_rep_bits == 0 and ctx.target.lockstep_lanes and _src_in_every_warp(ctx.problem))


def _src_in_every_warp(prob: Problem) -> bool:
    """Does every warp hold the whole src tile: is every src warp column (a tensor vector) in the span of
    the src lane columns?  (The src spans the tensor, so its register and lane columns then do.)"""
    _, s_lane, s_warp, _, _, _ = prob.key()[1]
    lanes = f2.Span(s_lane)
    return all(lanes.contains(c) for c in s_warp)


@caches.memoize("synth.lds_path.warps_exchange", size=256)  # 256: one per layout pair planned
def _warps_exchange(s_reg: tuple, s_lane: tuple, s_warp: tuple, d_reg: tuple, d_lane: tuple, d_warp: tuple) -> bool:
    """``_crosses_warps`` of the src and dst tensor columns of each hardware dim."""
    u = f2.Span(s_reg + s_lane + d_reg + d_lane)
    cols = [u.reduce(c) for c in d_warp + s_warp]  # (w, v) -> mod U
    low = (1 << len(d_warp)) - 1
    return any(x & low != x >> len(d_warp) for x in f2.kernel_basis(cols))


def _addr(side: _Side, r: int, element_bytes: int) -> np.ndarray:
    return side.address(r, element_bytes)


def _dwords_of(prog: Program, g: list[int], src_dwords: list[int], p: int, element_bytes: int) -> list[int]:
    """Values holding the elements of ``g`` in address order, one per VGPR (v_perm when out of order)."""
    if p == 1:
        return [src_dwords[r] for r in g]
    return gather_dwords(prog, [[(src_dwords[d], slot) for d, slot in parts] for parts in _dword_parts(g, p)],
                         element_bytes)


def _dword_parts(g: list[int], p: int) -> list[list[tuple[int, int]]]:
    """(src dword, slot) of each register of ``g``, ``p`` registers a dword: the dwords ``_dwords_of`` gathers."""
    return [[(r // p, r % p) for r in g[k:k + p]] for k in range(0, len(g), p)]


def _round_registers(accesses: list) -> list[int]:
    """The registers of one round's accesses (``(group, paired group or None, offset, st64)``) in issue order."""
    return [r for g, g2, _, _ in accesses for r in g + (g2 or [])]


class _NarrowStores:
    """The values the stores narrower than a dword of one round take (register groups ``groups``, in
    issue order): a group in place (``_narrow_in_place``) stores from its src VGPR; the others from
    the ``v_perm_b32`` repacks of ``_narrow_repacks``, each made when its first group is stored, the
    first group of a repack from slot 0, the second from slot ``p / 2`` (byte 2: a ``_d16_hi``
    store; ``high_half``: the target has one)."""

    def __init__(self, prog: Program, groups: list[list[int]], src_dwords: list[int], p: int, element_bytes: int,
                 high_half: bool):
        self.prog, self.groups, self.src_dwords, self.p, self.element_bytes = prog, groups, src_dwords, p, element_bytes
        self.repack_of = {groups[i][0]: shared for shared in _narrow_repacks(groups, p, element_bytes, high_half)
                          for i in shared}
        self.made: dict[int, tuple[int, int]] = {}  # first register of a group -> (value, slot)

    def value(self, g: list[int]) -> tuple[list[int], list[int]]:
        """``([value], [slot])`` of the store of group ``g``, its repack made here if not yet."""
        shared = self.repack_of.get(g[0])
        if shared is None:
            return [self.src_dwords[g[0] // self.p]], [g[0] % self.p]
        if g[0] not in self.made:
            half, p = self.p // 2, self.p
            parts: list[tuple[int, int] | None] = [None] * p
            for k, i in enumerate(shared):
                for y, r in enumerate(self.groups[i]):
                    parts[k * half + y] = (self.src_dwords[r // p], r % p)
            v = gather_dword(self.prog, parts, self.element_bytes)
            self.made.update((self.groups[i][0], (v, k * half)) for k, i in enumerate(shared))
        v, slot = self.made[g[0]]
        return [v], [slot]


def _emit_load(prog: Program, D: _Side, g: list[int], g2: list[int] | None, off: int, st64: bool, p: int,
               element_bytes: int, width_bytes: int, loaded: dict[int, tuple[int, int]]) -> None:
    addr = _addr(D, g[0], element_bytes)
    if width_bytes >= 4:
        n = width_bytes // (8 if element_bytes == 8 else 4)  # registers (64-bit elements: one value per element)
        vals = prog.load(n, addr, width_bytes, paired=g2 is not None, pair_offset=off, st64=st64)
    else:
        vals = prog.load(1, addr, width_bytes)
    for r, i, slot in _loaded_at(g, g2, p, element_bytes, width_bytes):
        loaded[r] = (vals[i], slot)


def _loaded_at(g: list[int], g2: list[int] | None, p: int, element_bytes: int,
               width_bytes: int) -> list[tuple[int, int, int]]:
    """(register, index of the value holding it among the load's, slot) of each register a plain load of
    ``g`` (and ``g2``, paired) of ``width_bytes`` a lane writes (``_emit_load``): ``width_bytes // 4`` dwords
    a group (64-bit elements: one value each), the second group's after the first's; a narrower load one
    value, its registers from slot 0."""
    if width_bytes < 4:
        return [(r, 0, k) for k, r in enumerate(g)]
    n = width_bytes // (8 if element_bytes == 8 else 4)
    return [(r, half * n + k // p, k % p) for half, grp in enumerate((g, g2 or [])) for k, r in enumerate(grp)]


def _emit_over_fetch_load(prog: Program, D: _Side, g: list[int], g2: list[int] | None, off: int, st64: bool,
                          element_bytes: int, width_bytes: int,
                          loaded: dict[int, tuple[int, int | np.ndarray]]) -> None:
    """Load ``width_bytes // 4`` dwords (twice if paired) holding the elements of ``g`` (``g2``); each
    register's element is the lane's slot of its dword (``_over_fetch_slot``)."""
    n = width_bytes // 4
    z = (4 // element_bytes).bit_length() - 1
    vals = prog.load(n, _over_fetch_addr(D, g[0], element_bytes), width_bytes, paired=g2 is not None,
                     pair_offset=off, st64=st64)
    for grp, vs in ((g, vals[:n]), (g2 or [], vals[n:])):
        base = int(D.reg_image[grp[0]]) if grp else 0
        for r in grp:
            k = ((int(D.reg_image[r]) ^ base) >> z) & (n - 1)
            loaded[r] = (vs[k], _over_fetch_slot(D, r, element_bytes))
