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
(:func:`ours_beyond_identity`).

Triton's counted region holds whatever setup its lowering puts on the ``convert_layout`` line; ours
computes the conversion's setup in a region of its own (``setup``: lane masks, selectors, LDS and
``ds_bpermute`` addresses, the permlane selectors' low words) before ``conv``, and the stores'
addresses in another (``store_addresses``, left out of both sides: :func:`kernel_sides`).  Our whole
conversion therefore adds the ``setup`` region beyond the identity kernels' (:func:`setup_beyond`) to the counted region.
A kernel storing a dst read in one copy (``Plan.dst_one_copy``) from its canonical lanes adds that mask's
SALU to the setup (:func:`store_mask_salu`): the identity kernels store every lane.  The ``m0`` writes LLVM
hoists out of the regions (a ``Movrels`` register index) are setup too (:func:`hoisted_m0_writes`).
"""

from __future__ import annotations

import re

from linlayout import LayoutError
from linlayout.synth.convert import plan_conversion

from .compile import CompileError
from .conversion import lower_conversion
from .emit.conversion_kernel import STORE_ADDRESSES, source_tuples
from .isa import IsaRegionError, around_region, isa_counts
from .report import hoisted_m0_writes, kernel_setup

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
    store side (after it), two regions left out: ``setup`` (the conversion's own prologue, counted
    apart, :func:`kernel_setup`) and
    :data:`~linlayout.lowering.emit.conversion_kernel.STORE_ADDRESSES` (the stores' addresses, no work
    of the conversion; an identity kernel, whose stores are its loads, reuses its load addresses
    there).  Triton's store line may compute its stores' addresses too, beyond its identity kernel's
    (which puts them on its load line); docs/benchmarks.md ("The public corpus") bounds that
    difference: ``{"load": counts, "store": counts}``."""
    before, after = around_region(isa_text, "conv", leave_out=("setup", STORE_ADDRESSES))
    return {"load": isa_counts("\n".join(before)), "store": isa_counts("\n".join(after))}


#: The instructions of a store masked to some lanes: EXEC saved and narrowed, and the branch past the stores.
STORE_MASK_OPS = re.compile(r"^\s*(s_and_saveexec_b(32|64)|s_cbranch_execz)\b", re.M)


def store_mask_salu(isa_text: str) -> int:
    """The SALU of a kernel's stores masked to the canonical lanes (``Plan.dst_one_copy``): its
    ``s_and_saveexec`` and ``s_cbranch_execz`` (:data:`STORE_MASK_OPS`) and the ``s_mov`` of the constant
    lane mask, which LLVM hoists to the kernel's start (one SGPR or pair).  0 in a kernel without them."""
    n = len(STORE_MASK_OPS.findall(isa_text))
    return n + 1 if n else 0


def setup_beyond(setup: dict, identities: list[dict]) -> dict:
    """``setup`` (:func:`kernel_setup` of a conversion kernel) less the setup of the identity kernel
    with the smallest one (by ``total``; each count at least 0), the one identity kernel's counts
    subtracted together so that ``total`` and the classes stay of one kernel: the setup the
    conversion adds.  An identity kernel's plan
    moves nothing, so its setup is empty and this is ``setup``."""
    least = min(identities, key=lambda counts: int(counts["total"]))
    if not int(least["total"]):
        return dict(setup)
    out = {k: max(0, int(n) - int(least[k])) for k, n in setup.items()}
    out["total"] = max(0, int(setup["total"]) - int(least["total"]))
    return out


class IdentityKernelError(Exception):
    """Our identity kernels of a compiled conversion could not be planned, emitted or read (a fault of
    the measurement, not a refusal of the conversion): the load/store-side VALU is not measured."""


def ours_beyond_identity(plan, isa_text: str) -> dict:
    """Our conversion kernel of ``plan`` (its ISA ``isa_text``, linlayout.lowering.conversion.
    lower_conversion) against its identity kernels (the no-op plans of ``plan.src`` and of
    ``plan.dst``: the same loads, and the same stores, with no conversion), compiled here:

    * ``outside_valu``: :func:`outside_valu` of each side, the load side against the src identity
      kernel's, the store side against the dst one's (``{"load": n, "store": n}``);
    * ``setup``: :func:`setup_beyond` of our ``setup`` region (``isa_counts``), with the store mask's
      SALU of a dst read in one copy (:func:`store_mask_salu`).

    A side held one element per VGPR (``plan.src_unpacked`` / ``dst_unpacked``) is compared with the
    identity kernel of the same elements packed (``Plan.packed_sides``; the same global loads and
    stores, whose bytes LLVM packs and unpacks there): what that kernel does on that side and ours does
    not counts 0, not less.

    :class:`IdentityKernelError` where an identity kernel cannot be planned or compiled, or a region
    of either kernel is not in its ISA."""
    try:
        sides = kernel_sides(isa_text)
        setup = kernel_setup(isa_text)
        outside, identity_setups = {}, []
        for side, layout in zip(SIDES, plan.packed_sides()):
            identity = plan_conversion(layout, layout, plan.arch, plan.element_bits,
                                       src_tuple_dwords=source_tuples(layout, plan.element_bits))
            isa = lower_conversion(identity, binary=False).compiled.isa
            outside[side] = outside_valu(valu_beyond(sides[side], kernel_sides(isa)[side]))
            identity_setups.append(kernel_setup(isa))
    except (LayoutError, IsaRegionError, CompileError) as e:
        raise IdentityKernelError(f"identity kernels of {plan.arch} {plan.element_bits}-bit conversion: {e}") from e
    setup = setup_beyond(setup, identity_setups)
    if plan.dst_one_copy:  # (the store mask: the conversion's own SALU, none in the identity kernels)
        mask = store_mask_salu(isa_text)
        setup = dict(setup, salu=int(setup["salu"]) + mask, total=int(setup["total"]) + mask)
    return {"outside_valu": outside, "setup": setup}
