"""Plans whose 8- and 16-bit elements share 32-bit registers in an order the planner chooses.

A plan takes and hands over sub-dword elements packed in register order (docs/contract.md
section 4): with ``p = 32 / element_bits`` elements per VGPR, register ``r`` of a lane is slot
``r``, bits ``(r % p) * element_bits ..`` of VGPR ``r // p``.  So the first ``packing_bits =
log2(p)`` register bits of a layout (1 for 16-bit, 2 for 8-bit, 0 from 32 bits up) decide which
elements share a VGPR; the VGPR order above them is free anyway (renaming whole VGPRs costs
nothing).

A caller that moves elements one at a time pays the same for any choice of those bits.  A kernel
that loads 16-bit elements with ``global_load_d16`` / ``_d16_hi`` (8-bit: ``_d16_u8`` /
``_d16_hi_u8`` and byte permutes) fills any half of any VGPR, and one that stores them with
``global_store_b16`` / ``_d16_hi_b16`` reads any half: it is Triton's own case, whose
``convert_layout`` takes and yields single 8/16-bit values and leaves their packing to the loads
and stores around it.  Register bits that the caller moves together (consecutive elements of
one wide load or store) keep their place: ``src_fixed_bits`` / ``dst_fixed_bits`` say how many
of a side's leading register bits are such (``packing_bits`` or more: that side's order is
kept).

``plan_free_packing(src, dst, arch, element_bits, src_fixed_bits=..., dst_fixed_bits=...)``
plans the conversion for each candidate order (``packing_candidates``), each for the VGPR tuples
its src arrives in (``src_tuple_dwords``: a number for every order, or a function of the src
order: a kernel that loads registers consecutive in memory with one wide load delivers a
reordered src in other tuples) and for those its dst is taken in (``dst_tuple_dwords``, alike), with
:func:`linlayout.synth.convert.plan_conversion` and returns the cheapest plan under the
objective as the planner ranks whole plans (``CostModel.best_plan``: the least rank value of the
``rank_cost``; within ``CostModel.tie_fraction`` of it, the fewest ``CostModel.tie_count``,
instructions with setup and under ``concurrent`` on CDNA the LDS passes of bank conflicts, then
the least ``rank_cost``; the first on a tie, the given order being the first candidate).  The plan's ``src`` and
``dst`` are the given layouts with their register bases reordered (the same elements in the
same lanes and warps; only which register index names which element differs), so its caller
puts element ``plan.src(register=r, lane, warp)`` in slot ``r`` and finds
``plan.dst(register=r, lane, warp)`` in slot ``r``.

Candidates: the given orders, and one pair for each side's register order ``A`` (src's, then
dst's).  The *shared* bases are the nonzero register bases both layouts hold in registers.  ``T``
is both sides' fixed leading bases (when one side's begin the other's) followed by the shared
bases in the order ``A``, ``packing_bits`` in all; a side whose registers hold all of ``T`` and
whose fixed bases begin it takes ``T`` as its first register bases (the rest in their given
order).  A side that cannot but has free bits takes its own fixed bases followed by the shared
ones in the order ``A``; a side with none keeps its order.  When both take ``T``, every dword
holds the same elements on both sides, so an LDS round trip moves whole dwords and a register plan
renames them with no byte permute; when one side follows the other only where it can, the byte
permutes fall on one side.  Where such a side gets fewer than ``packing_bits`` bases (fixed and
shared), the pair is also tried with them completed by the side's own next register bases in its
order: a dword of that side then holds two halves whose elements the other side holds in one
VGPR each, so an LDS round trip can store them as halves (``ds_write_b16`` / ``_d16_hi``) from
the lanes holding them and load that side's dwords whole (gfx1200 i8 ``blocked[1x1,t32x1,o10]->
blocked[1x1,t1x32,o01]``: 16 ``v_perm_b32``, 32 half stores and 4 ``ds_load_b128``, where keeping
the order takes 48 ``v_perm_b32``, 4 stores and 32 ``ds_load_u16``).
"""

from __future__ import annotations

from linlayout import LayoutError, LinearLayout
from linlayout.errors import require_flag

from . import cost as cost_mod
from .convert import UNPACKED_FORM, UnpackedDstRefused, UnpackedSrcRefused, plan_conversion, require_amd
from .plan import Plan, slots_per_dword

__all__ = ["packing_bits", "packing_candidates", "plan_free_packing", "unpacked_orders", "with_register_order"]

Basis = tuple[int, ...]


def packing_bits(element_bits: int) -> int:
    """The register bits inside one 32-bit VGPR: log2(32 / element_bits); 0 from 32 bits up."""
    return slots_per_dword(element_bits).bit_length() - 1


def _register_bases(layout: LinearLayout) -> list[Basis]:
    return [tuple(b) for b in layout.bases.get("register", [])]


def with_register_order(layout: LinearLayout, first: tuple[Basis, ...]) -> LinearLayout:
    """``layout`` with the register bases ``first`` (each one of its register bases) as its first ones,
    the others after them in their order; lanes, warps and blocks unchanged."""
    regs = _register_bases(layout)
    if len(set(first)) != len(first) or any(b not in regs for b in first):
        raise ValueError(f"{list(first)} are not distinct register bases of the layout ({regs})")
    obj = layout.to_json()
    obj["bases"]["register"] = [list(b) for b in first] + [list(b) for b in regs if b not in first]
    return LinearLayout.from_json(obj)


def packing_candidates(src: LinearLayout, dst: LinearLayout, element_bits: int, src_fixed_bits: int,
                       dst_fixed_bits: int) -> list[tuple[tuple[Basis, ...] | None, tuple[Basis, ...] | None]]:
    """The candidate orders (module docstring): ``(src_first, dst_first)`` pairs, None for a side that
    keeps its order; the first pair is ``(None, None)``."""
    n = packing_bits(element_bits)
    out: list[tuple[tuple[Basis, ...] | None, tuple[Basis, ...] | None]] = [(None, None)]
    sr, dr = _register_bases(src), _register_bases(dst)
    if n == 0 or len(sr) < n or len(dr) < n:
        return out
    sides = ((sr, min(src_fixed_bits, n)), (dr, min(dst_fixed_bits, n)))
    shared = [b for b in sr if b in dr and any(b)]
    short, long_ = sorted((sr[:sides[0][1]], dr[:sides[1][1]]), key=len)
    common = long_ if long_[:len(short)] == short else None  # both sides' fixed bits in one order

    def first_bits(prefix: list[Basis], order: list[Basis]) -> tuple[Basis, ...]:
        return tuple(prefix + [b for b in order if b in shared and b not in prefix])[:n]

    for order in (sr, dr):
        both = first_bits(common, order) if common is not None else ()
        pair, filled = [], []
        for regs, k in sides:
            first = both if len(both) == n and all(b in regs for b in both) and list(both[:k]) == regs[:k] else ()
            if not first and k < n:
                first = first_bits(regs[:k], order)
            pair.append(first if len(first) == n and list(first) != regs[:n] else None)
            if 0 < len(first) < n:  # too few shared bases: the side's own next ones complete them
                first += tuple(b for b in regs if b not in first)[:n - len(first)]
            filled.append(first if len(first) == n and list(first) != regs[:n] else None)
        for cand in (tuple(pair), tuple(filled)):
            if cand not in out:
                out.append(cand)
    return out


def unpacked_orders(candidates: list[tuple], unpacked_src: bool, unpacked_dst: bool) -> list[tuple]:
    """``(src_first, dst_first, src_unpacked, dst_unpacked)`` of the forms with a side held one element per
    VGPR that ``plan_free_packing`` tries after the packed ``candidates`` (``packing_candidates``'): the
    src unpacked (where ``unpacked_src``) with each dst order, the dst unpacked (``unpacked_dst``) with
    each src order, then both; an unpacked side's order within a dword is moot (None), each pair once."""
    out = []
    for src_unpacked, dst_unpacked in ((True, False), (False, True), (True, True)):
        if (src_unpacked and not unpacked_src) or (dst_unpacked and not unpacked_dst):
            continue
        orders = dict.fromkeys((None if src_unpacked else s, None if dst_unpacked else d) for s, d in candidates)
        out.extend((s, d, src_unpacked, dst_unpacked) for s, d in orders)
    return out


def plan_free_packing(src: LinearLayout, dst: LinearLayout, arch: str, element_bits: int, *,
                      src_fixed_bits: int = 0, dst_fixed_bits: int = 0, lds_budget_bytes: int | None = None,
                      strategy: str = "auto", objective: str | None = None,
                      src_tuple_dwords=cost_mod.SRC_TUPLE_DWORDS,
                      dst_tuple_dwords=cost_mod.DST_TUPLE_DWORDS, unpacked_src: bool = False,
                      unpacked_dst: bool = False, src_global_strides=None, dst_one_copy: bool = False) -> Plan:
    """The cheapest verified plan over the packing candidates (module docstring); its ``src``/``dst`` are
    ``src``/``dst`` with the chosen register order.  ``src_fixed_bits``/``dst_fixed_bits``: the leading
    register bits of each side whose elements the caller moves together (0: every element alone;
    ``packing_bits(element_bits)`` or more: the side keeps its order).  ``src_tuple_dwords``:
    :func:`linlayout.synth.convert.plan_conversion`'s, for every order, or a function giving it for
    a src register order (each candidate is planned for its own); ``dst_tuple_dwords`` the same for the
    dst (a kernel whose single stores at consecutive addresses LLVM merges takes a reordered dst in
    other tuples).  ``unpacked_src``: the caller can also load the src one element per VGPR (its
    global loads move single elements, as a kernel's do whose dwords' elements are not all adjacent in
    memory: ``src_fixed_bits`` below ``packing_bits``): the plans of the src held so
    (plan_conversion's ``src_unpacked``), with the given dst order and each candidate's, join the
    candidates after the packed ones (where one converts: ``UnpackedSrcRefused``); ``unpacked_dst`` the
    same for the dst the caller stores element by element (``dst_unpacked``; ``unpacked_orders``).  The
    other arguments are plan_conversion's (``src_global_strides`` the same for every order: the offsets
    follow the elements, not their registers; ``dst_one_copy`` the same for every order)."""
    for name, bits in (("src_fixed_bits", src_fixed_bits), ("dst_fixed_bits", dst_fixed_bits)):
        if isinstance(bits, bool) or not isinstance(bits, int) or bits < 0:
            raise LayoutError(f"{name} {bits!r} must be a non-negative integer")
    for name, asked, fixed in (("unpacked_src", unpacked_src, src_fixed_bits),
                               ("unpacked_dst", unpacked_dst, dst_fixed_bits)):
        if require_flag(name, asked):
            require_amd(name, arch, UNPACKED_FORM)
        if asked and fixed >= packing_bits(element_bits):
            raise LayoutError(f"{name} needs 8- or 16-bit elements whose dwords the caller does not move whole "
                              f"({name[-3:]}_fixed_bits below log2(32 / element_bits))")
    src_tuples = src_tuple_dwords if callable(src_tuple_dwords) else (lambda _layout: src_tuple_dwords)
    dst_tuples = dst_tuple_dwords if callable(dst_tuple_dwords) else (lambda _layout: dst_tuple_dwords)
    options = dict(lds_budget_bytes=lds_budget_bytes, strategy=strategy, objective=objective,
                   src_global_strides=src_global_strides, dst_one_copy=dst_one_copy)
    # the given order first; it checks the arguments
    plans = [plan_conversion(src, dst, arch, element_bits, src_tuple_dwords=src_tuples(src),
                             dst_tuple_dwords=dst_tuples(dst), **options)]
    candidates = packing_candidates(src, dst, element_bits, src_fixed_bits, dst_fixed_bits)
    for src_first, dst_first in candidates[1:]:
        s_ordered = src if src_first is None else with_register_order(src, src_first)
        d_ordered = dst if dst_first is None else with_register_order(dst, dst_first)
        plans.append(plan_conversion(s_ordered, d_ordered, arch, element_bits, src_tuple_dwords=src_tuples(s_ordered),
                                     dst_tuple_dwords=dst_tuples(d_ordered), **options))
    for src_first, dst_first, src_unpacked, dst_unpacked in unpacked_orders(candidates, unpacked_src, unpacked_dst):
        s_ordered = src if src_first is None else with_register_order(src, src_first)
        d_ordered = dst if dst_first is None else with_register_order(dst, dst_first)
        try:
            plans.append(plan_conversion(s_ordered, d_ordered, arch, element_bits,
                                         src_tuple_dwords=1 if src_unpacked else src_tuples(s_ordered),
                                         dst_tuple_dwords=1 if dst_unpacked else dst_tuples(d_ordered),
                                         src_unpacked=src_unpacked, dst_unpacked=dst_unpacked, **options))
        except (UnpackedSrcRefused, UnpackedDstRefused):  # (no candidate of that form converts: the others)
            continue
    cm = cost_mod.cost_model(arch, objective)
    return cm.best_plan(plans)
