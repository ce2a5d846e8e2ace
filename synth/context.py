"""What one conversion is planned for, made once and carried through the planner.

``ConversionContext.create(src, dst, arch, element_bits, lds_budget_bytes, strategy, objective,
src_tuple_dwords, dst_tuple_dwords, src_global_strides)``
checks the user's arguments (a ``LayoutError`` naming the bad one), normalizes the two
layouts (``problem``: linlayout.synth.preimage.Problem, the columns of both layouts),
and fixes the target descriptor (linlayout.hw.targets), the element size and the cost
model (linlayout.synth.cost) with the objective a plan's cost measures (``concurrent``, ``latency``,
``throughput`` or ``instructions``: ``cost_model.objective``).  linlayout.synth.convert makes it in ``plan_conversion``,
``candidate_plans`` and ``exchange_schedule_plans``; the planning modules
(linlayout.synth.in_wave, .exchanges, .lds_path, .cost) read the target, the element size
and the cost model from it instead of taking them as loose arguments.

Units of the element size: ``element_bits`` (8, 16, 32 or 64) is one element;
``element_bytes = element_bits / 8``; ``slots_per_dword`` elements share one 32-bit VGPR
(1 from 32 bits up) and one element takes ``dwords_per_slot`` VGPRs (2 for 64 bits).

LDS budget: ``lds_budget_bytes`` is what the conversion may use; left out it is the
target's whole LDS (``budget_given`` False), and a tile larger than it moves in rounds
(linlayout.synth.lds_path) like an explicit budget -- only an explicit budget that no plan
can meet is the user's error.

Wave size: ``target.wave_size`` (64 on CDNA, 32 on RDNA and NVIDIA) is the lane count
every planning module and the emulator use; the normalized layouts have that many lanes.

A context is immutable and compared by identity; the planner's caches key on its fields
(``problem.key()``, ``element_bits``, ``arch``, ``lds_budget_bytes``, and ``objective`` where
the cached value depends on it: the lower bounds, the LDS design pools), as they did before
the context existed (the arch fixes the wave size; ``problem.key()`` has the lane count).

How the src VGPRs arrive: ``src_tuples`` (linlayout.synth.vgpr_tuples.VgprTuples, made from the
argument ``src_tuple_dwords``) are the aligned VGPR tuples they come in.  The argument is 1, 2 or 4,
aligned runs of that many dwords in register order (default ``cost.SRC_TUPLE_DWORDS`` = 4: an MFMA
result or a dwordx4 load), or the dword-index bits that vary inside one tuple (a kernel whose
single loads at consecutive addresses LLVM merges into wide ones:
linlayout.lowering.emit.conversion_kernel.source_tuples).  An LDS store of a register group that
breaks such a tuple costs the copies LLVM adds (linlayout.synth.cost.tuple_copies); a src loaded one
dword at a time (1: no tuple) breaks none.

What the dst's consumer needs: ``dst_tuples`` (from ``dst_tuple_dwords``, the same forms) are the
aligned VGPR tuples of dst dwords that it takes whole (a kernel's ``dwordx2``/``dwordx4`` store,
merged or not, an MFMA/WMMA operand).  An LDS load writes its dwords to consecutive VGPRs (a
``ds_read2``: both accesses' dwords, one tuple); a dst tuple that is not in place inside one load's
VGPRs costs the copies LLVM adds (``cost.register_load_copies``, the same rule as the stores'
``cost.tuple_copies``).  The default 1 (``DST_TUPLE_DWORDS``) is no constraint: each dst VGPR is
taken alone, and a loaded one is used where it lands.

What the kernel's src load line holds: ``src_offsets`` (linlayout.synth.src_offsets.SrcOffsets, made
from the argument ``src_global_strides``; None, the default: no such load is known) are the byte offsets
of a global load of the src right before the conversion, from a tensor of those element strides (one
per out dim; a row-major tensor of shape ``n``: ``prod(n[d+1:])``).  Its VGPRs are formed before the
conversion's setup, and LLVM's common-subexpression elimination lets the setup reuse them: the LDS
addresses that are one of them plus (or XOR) a constant cost what one the setup formed does
(``cost.AddressRegisters.of``).  A plan for a conversion with no such load is unchanged.

The LDS designs' caches also key on ``src_tuples``, ``dst_tuples``, ``src_offsets`` and ``dst_unpacked``,
the lower bounds' on whether ``src_offsets`` is given.
"""

from __future__ import annotations

from dataclasses import dataclass

from linlayout import LayoutError, LinearLayout
from linlayout.hw.limits import check_conversion
from linlayout.hw.targets import Target, get_target

from .cost import DST_TUPLE_DWORDS, SRC_TUPLE_DWORDS, CostModel, cost_model
from .plan import ELEMENT_BITS, dwords_per_slot, slots_per_dword
from .preimage import Problem, normalize
from .src_offsets import SrcOffsets
from .vgpr_tuples import VgprTuples

__all__ = ["ConversionContext", "ELEMENT_BITS", "STRATEGIES", "dword_bits"]

STRATEGIES = ("auto", "registers", "lds")


@dataclass(frozen=True, eq=False)
class ConversionContext:
    """One conversion: the normalized layouts, the target, the element size, the cost model, the LDS
    budget in bytes (the target's LDS unless ``budget_given``; rounds when the tile is larger), the
    strategy, the sizes of the VGPR tuples the src registers arrive in and the dst registers leave in and
    the address registers of the kernel's src load line (module docstring)."""

    problem: Problem
    target: Target
    element_bits: int
    cost_model: CostModel
    lds_budget_bytes: int
    strategy: str = "auto"
    budget_given: bool = False
    src_tuples: VgprTuples = VgprTuples.contiguous(SRC_TUPLE_DWORDS)
    dst_tuples: VgprTuples = VgprTuples.contiguous(DST_TUPLE_DWORDS)
    src_offsets: SrcOffsets | None = None
    #: the dst is handed over one element per VGPR (``Plan.dst_unpacked``): the programs are built for the
    #: packed dst, their outputs then split per element (``in_wave.unpacked_outputs``)
    dst_unpacked: bool = False
    #: the kernel is one wave and declares it (LLVM bounds the thread id by the wave size): the setup estimates take
    #: the one-wave programs (linlayout.synth.lane_arith, "One wave"); ``create``'s ``one_wave``
    one_wave: bool = False

    @classmethod
    def create(cls, src: LinearLayout, dst: LinearLayout, arch: str, element_bits: int,
               lds_budget_bytes: int | None = None, strategy: str = "auto",
               objective: str | None = None, src_tuple_dwords=SRC_TUPLE_DWORDS,
               dst_tuple_dwords=DST_TUPLE_DWORDS, src_global_strides=None,
               dst_unpacked: bool = False, one_wave: bool | None = None) -> "ConversionContext":
        """The context of converting ``src`` into ``dst`` on ``arch``; a LayoutError for a bad argument.
        ``src_tuple_dwords``/``dst_tuple_dwords``: the sides' VGPR tuples (``VgprTuples.of``: 1, 2, 4,
        a sequence of dword-index bits or a VgprTuples; module docstring).  ``src_global_strides``: the
        element strides of the global tensor the kernel loads the src from right before the conversion,
        one positive integer per out dim (``SrcOffsets.of``; a SrcOffsets: taken as it is; None: no
        such load); ``dst_unpacked``: the field; ``one_wave``: the field, None for the layouts' warps (one warp: one
        wave, as linlayout's kernels declare their threads); True for layouts of more than one warp is a LayoutError."""
        target = get_target(arch)
        if target.lds_phases is None:
            raise LayoutError(f"arch {target.name} has no LDS model; the conversion planner needs one")
        if isinstance(element_bits, bool) or element_bits not in ELEMENT_BITS:
            raise LayoutError(f"element_bits {element_bits!r} must be 8, 16, 32 or 64")
        if strategy not in STRATEGIES:
            raise LayoutError(f"strategy {strategy!r} must be one of {', '.join(STRATEGIES)}")
        if lds_budget_bytes is not None and (isinstance(lds_budget_bytes, bool)
                                             or not isinstance(lds_budget_bytes, int) or lds_budget_bytes <= 0):
            raise LayoutError(f"lds_budget_bytes {lds_budget_bytes!r} must be a positive integer")
        check_conversion(src, dst, target.name, element_bits, lds_budget_bytes)
        src_tuples = VgprTuples.of("src_tuple_dwords", src_tuple_dwords, dword_bits(src, element_bits))
        dst_tuples = VgprTuples.of("dst_tuple_dwords", dst_tuple_dwords, dword_bits(dst, element_bits))
        budget_given = lds_budget_bytes is not None
        problem = normalize(src, dst, target.wave_size)
        if one_wave is None:
            one_wave = problem.num_warps == 1
        elif not isinstance(one_wave, bool):
            raise LayoutError(f"one_wave must be True, False or None, not {one_wave!r}")
        elif one_wave and problem.num_warps > 1:
            raise LayoutError(f"one_wave: the layouts have {problem.num_warps} warps; a kernel of one wave holds one")
        return cls(problem, target, element_bits, cost_model(target.name, objective),
                   lds_budget_bytes if budget_given else target.lds_bytes, strategy, budget_given, src_tuples,
                   dst_tuples, SrcOffsets.of(src_global_strides, problem, element_bits), dst_unpacked, one_wave)

    @property
    def arch(self) -> str:
        """The target's canonical name (``gfx942`` for ``mi300``)."""
        return self.target.name

    @property
    def objective(self) -> str:
        """What a plan's cost measures (linlayout.synth.cost.OBJECTIVES)."""
        return self.cost_model.objective

    @property
    def budget_text(self) -> str:
        """The LDS budget in words for an error: ``the budget 4096`` or ``gfx942's LDS (65536 bytes)``."""
        if self.budget_given:
            return f"the budget {self.lds_budget_bytes}"
        return f"{self.target.name}'s LDS ({self.target.lds_bytes} bytes)"

    @property
    def formed_addresses(self) -> tuple:
        """``src_offsets.registers``, the address registers formed before the conversion's setup (() when
        no src load line is known): ``cost.AddressRegisters.of``'s ``formed``."""
        return () if self.src_offsets is None else self.src_offsets.registers

    @property
    def element_bytes(self) -> int:
        """Bytes of one element: ``element_bits / 8``."""
        return self.element_bits // 8

    @property
    def slots_per_dword(self) -> int:
        """Elements in one 32-bit VGPR (1 for 32- and 64-bit elements)."""
        return slots_per_dword(self.element_bits)

    @property
    def dwords_per_slot(self) -> int:
        """32-bit VGPRs holding one element (2 for 64-bit elements, else 1)."""
        return dwords_per_slot(self.element_bits)


def dword_bits(layout: LinearLayout, element_bits: int) -> int:
    """The dword-index bits of ``layout``'s registers: ``log2`` of its dwords (``p`` elements per dword,
    a 64-bit element two): the bits ``VgprTuples.of`` takes below it (the src side: ``unpacked_src(src)`` of an
    unpacked src, as ``plan_conversion`` plans it)."""
    regs = layout.in_dim_size("register") if layout.has_in_dim("register") else 1
    return max(1, regs * dwords_per_slot(element_bits) // slots_per_dword(element_bits)).bit_length() - 1
