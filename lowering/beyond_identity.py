"""The VALU a conversion kernel spends outside its counted region, beyond its identity kernels'.

A conversion kernel loads a tile in the src layout, converts it and stores it in the dst layout;
its conversion is counted as a region of its ISA (Triton's: the instructions the ``.loc``
directives put on the ``convert_layout`` line, benchmarks/make_corpus.py; ours: the ``conv``
region, linlayout.lowering.isa).  The compiler may do part of the conversion outside that region,
on the load's side or the store's: Triton repacks 8/16-bit halves after its LDS loads on the
store's line (``v_perm_b32`` on CDNA, ``v_mov_b16`` / ``v_lshrrev_b32`` on gfx11/gfx12), and both
compilers copy registers into the tuples of the stores where the conversion leaves them elsewhere.

The *identity kernels* of a conversion load and store the same tile with no conversion: the src
layout loaded and stored (the same loads), and the dst layout loaded and stored (the same stores).
What the conversion kernel's load side holds beyond the src identity kernel's load side, and its
store side beyond the dst identity kernel's store side, is work for the conversion.  Per side and
count (:data:`VALU_KEYS`) the difference, at least 0 (:func:`valu_beyond`), and as one number
:func:`outside_valu`.  Both kernels of a comparison are compiled by the same compiler, so
``linlayout bench conversions`` counts ours the same way as the corpus counts Triton's
(:func:`ours_outside_valu`).
"""

from __future__ import annotations

from linlayout.synth.convert import plan_conversion

from .conversion import lower_conversion
from .emit.conversion_kernel import source_tuple_dwords
from .isa import around_region, isa_counts

#: The counts compared per side: all VALU, and the two kinds that only move data.
VALU_KEYS = ("valu", "v_mov", "v_perm_b32")
#: The sides of a conversion kernel around its counted region.
SIDES = ("load", "store")


def valu_beyond(counts: dict, identity: dict) -> dict:
    """``counts`` (``isa_counts`` of one side of a conversion kernel) less ``identity`` (the same side
    of its identity kernel), per :data:`VALU_KEYS`, at least 0 each."""
    return {k: max(0, int(counts[k]) - int(identity[k])) for k in VALU_KEYS}


def outside_valu(beyond: dict) -> int:
    """The conversion's VALU on one side from a :func:`valu_beyond` answer: its ``valu``, or its
    ``v_mov`` + ``v_perm_b32`` (which move data only) where those are more (the identity kernel may
    compute the side's addresses with more VALU than the conversion kernel, hiding moves in the
    difference)."""
    return max(beyond["valu"], beyond["v_mov"] + beyond["v_perm_b32"])


def kernel_sides(isa_text: str) -> dict:
    """``isa_counts`` of one of our conversion kernels' load side (before its ``conv`` region) and
    store side (after it), the ``setup`` region (addresses the plan's count estimates apart)
    left out: ``{"load": counts, "store": counts}``."""
    before, after = around_region(isa_text, "conv", leave_out=("setup",))
    return {"load": isa_counts("\n".join(before)), "store": isa_counts("\n".join(after))}


def ours_outside_valu(plan, isa_text: str) -> dict:
    """:func:`outside_valu` of each side of our conversion kernel of ``plan`` (its ISA
    ``isa_text``, linlayout.lowering.conversion.lower_conversion): the load side against the kernel
    of the no-op plan of ``plan.src``, the store side against that of ``plan.dst`` (the same loads,
    and the same stores, with no conversion), compiled here; ``{"load": n, "store": n}``."""
    sides = kernel_sides(isa_text)
    out = {}
    for side, layout in (("load", plan.src), ("store", plan.dst)):
        identity = plan_conversion(layout, layout, plan.arch, plan.element_bits,
                                   src_tuple_dwords=source_tuple_dwords(layout, plan.element_bits))
        theirs = kernel_sides(lower_conversion(identity, binary=False).compiled.isa)[side]
        out[side] = outside_valu(valu_beyond(sides[side], theirs))
    return out
