"""What a target descriptor is: the facts about one GPU architecture every other module reads.

A :class:`Target` decides the wave size, the cross-lane instructions the planner may use, the
LDS model (geometry, the lane phases of every LDS instruction with their evidence, the named
[I] assumptions they rest on), the matrix-instruction catalog and the emitter.  The modules
of this package (one per target family) build and register descriptors; nothing outside
them branches on an architecture's name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, NamedTuple

from ..transpose_loads import TransposeLoad, transpose_load

__all__ = ["Assumption", "LdsPhase", "Target"]


@dataclass(frozen=True)
class Assumption:
    """A named inferred [I] fact of the model (a hypothesis to test on hardware)."""

    name: str
    statement: str
    source: str
    default: object  # lanes per contiguous phase (int), phase rows (tuple), or a description


class LdsPhase(NamedTuple):
    """How one LDS instruction serves its lanes on one target, with the evidence.

    ``form``: lanes per contiguous phase (int), phase rows (a tuple of lane masks: phase-id bit
    ``k`` of lane ``l`` is ``popcount(l & rows[k]) % 2``) or ``"as b32"`` (the phases of the
    ``b32`` instruction of the same direction).  ``tag``: Q, M or I.  ``assumption``: the name of
    the [I] assumption it rests on (one of the target's ``lds_assumptions``), or None.
    ``merge_lanes``: lane masks ``x``; when every lane's address equals lane ``l ^ x``'s, the
    first phase row is dropped (NVIDIA 64/128-bit loads; :meth:`linlayout.hw.lds.LdsOp.merged`)."""

    form: object
    tag: str
    source: str
    assumption: str | None
    merge_lanes: tuple = ()


@dataclass(frozen=True)
class Target:
    """One GPU architecture as far as layouts are concerned.

    * ``family``: ``"cdna"`` (MFMA, wave64), ``"rdna"`` (WMMA, wave32) or ``"nvidia"`` (warps of
      32, ``mma.sync``/``wgmma``, PTX shared memory); ``aliases``: other
      names :func:`linlayout.get_target` accepts (``"mi300"``, ``"cdna3"``, ...).
    * Lane operations: ``dpp_controls`` (DPP control families, as in the ISA's DPP_CTRL table),
      ``ds_swizzle_modes``, ``has_ds_bpermute``, ``has_permlane_swap`` (v_permlane16/32_swap_b32),
      ``has_permlanex16`` (RDNA v_permlanex16_b32), ``has_ds_read_tr`` (LDS transpose loads: gfx950's
      ds_read_b64_tr_b{4,8,16} / ds_read_b96_tr_b6, gfx1250's ds_load_tr16_b128 / ds_load_tr8_b64; which
      ones a target has: ``transpose_load``); ``lane_ops``: the named lane instructions of targets described by name
      rather than by the AMD fields (NVIDIA: ``shfl.sync.idx`` ... ``movmatrix``).
    * LDS: ``lds_bytes`` (per-workgroup maximum), ``lds_banks`` (4-byte banks), ``lds_phases``
      (op name -> :class:`LdsPhase`; None: no hardware LDS model), ``lds_assumptions`` (the
      named [I] assumptions the phases may rest on, by name) and ``lds_model_assumptions`` (those
      the model rests on beyond its phase table).
    * ``mma``: the matrix-instruction catalog, ``"mfma"`` (:mod:`linlayout.hw.mfma`) or ``"wmma"``
      (:mod:`linlayout.hw.wmma`) or ``"mma_sync"`` (:mod:`linlayout.hw.mma_nvidia`); ``mfma_version`` follows Triton's numbering (2 = gfx90a,
      3 = gfx942, 4 = gfx950), ``wmma_version`` likewise (1 = gfx11, 2 = gfx12, 3 = gfx1250).
    * ``emitter``: the name of the lowering that emits kernels for it (``"rocdl"``: ROCDL MLIR,
      resolved by ``linlayout.lowering``), or None where nothing is emitted.
    * ``barrier_instructions``: the instructions one workgroup barrier takes (2 on gfx12 and gfx1250:
      ``s_barrier_signal`` and ``s_barrier_wait``, which ISA counts class as ``s_barrier`` both; 1 elsewhere).
    * Resources (``linlayout.hw.limits``; docs/hardware.md section 7): ``vgprs_per_lane`` and
      ``agprs_per_lane`` (32-bit architectural and accumulation registers one lane addresses),
      ``threads_per_workgroup``.
    * ``lockstep_lanes``: do the lanes of one wave execute every instruction together (AMD: one
      instruction stream per wave), so that one lane's LDS write is seen by every lane of its
      wave's later instructions?  False on NVIDIA (independent thread scheduling since Volta: the
      CUDA memory model orders one lane's shared-memory write before another lane's read of it only
      through a warp barrier, ``bar.warp.sync`` / ``__syncwarp()``); a plan for such a target puts
      a warp-scope barrier between lanes' writes and other lanes' reads or overwrites of the same
      bytes (docs/nvidia_facts.md section 1).
    * ``opaque_beyond_offset_adds`` [I]: the ROCDL lowering passes a setup register through an opaque
      copy before adding a constant beyond an LDS access's offset field, because the compiler would
      otherwise merge ``base + constant`` into the logic ops that made ``base`` (a ``v_bitop3_b32`` and an
      ``s_mov_b32`` of the constant instead of one ``v_add_u32``; seen in gfx950 corpus kernels).  Where
      it is False the add stays one ``v_or_b32``/``v_add_u32`` and a copy would cost a ``v_mov_b32``.
    * ``vop3_literal``: does a VOP3 instruction take one 32-bit literal operand (GFX10 and later: every RDNA
      target here, gfx1250 included; gfx9's VOP3 takes none, only inline constants)?  The lowering passes a constant
      ``v_perm_b32`` selector as the literal there and moves it into an SGPR in the prologue elsewhere
      (docs/amd_facts.md 6.4); a per-lane choice on a lane mask (``v_cndmask_b32``) takes one of its two
      constants as the literal there and both in VGPRs elsewhere (linlayout.synth.lane_choices).
    * ``has_delay_alu``: does the compiler put an ``s_delay_alu`` before a VALU instruction that reads a recent
      VALU result (gfx11 and later: every RDNA target here; docs/amd_facts.md 6.4)?  The planner counts them
      (linlayout.synth.hazards.valu_delays, the lane choices' ``salu_lane_selector_delay``).
    * ``has_bitop3``: does the ISA have ``v_bitop3_b32`` (a bitwise function of three operands by its truth table:
      gfx950 and gfx1250)?  The compiler then fuses a ``v_and_b32`` with a constant into the ``v_xor_b32`` that made
      its operand, and drops that XOR where nothing else reads it (linlayout.synth.lane_choices: a lane-bit
      parity's mask and its ``K``; on gfx950 ``K`` is moved into an SGPR first, no VALU).
    * ``has_xor3``: does the ISA have ``v_xor3_b32`` (GFX10 and later: every RDNA target here)?  The compiler then
      merges an XOR that only another XOR reads into it (linlayout.synth.lane_choices: the parity of three lane
      bits or more).
    * ``waits_after_inline_asm`` [I]: does the compiler wait one cycle (an ``s_nop 0`` where it finds no other
      instruction to put there) between an inline asm that writes a VGPR and a VALU instruction that reads it?
      LLVM assumes an inline asm may write with a forwarding hazard on gfx940 and later CDNA (seen in gfx942 and
      gfx950 kernels); none on gfx90a and RDNA.  Where it waits, the lowering hides a value from the compiler
      without an inline asm (linlayout.lowering.emit.lane_choices: ``atoms.unseen_word``).
    * ``vgpr_tuple_alignment``: the VGPR a tuple of two or more dwords starts at is a multiple of this: 2 on
      CDNA (gfx90a and later: 64-bit and wider VGPR operands are even-aligned, docs/amd_facts.md), 1 on RDNA
      and NVIDIA; the dst tuple copies read it (linlayout.synth.cost.load_tuple_copies).
    * ``has_movrels``: does the compiler read a register at a wave-uniform index (an SGPR, ``m0``) with
      ``v_movrels_b32`` (VGPR[dst] = VGPR[src + m0])?  RDNA here (gfx1100, gfx1200, gfx1250: LLVM's movrel
      feature, compiled); not gfx9 (gfx90a, gfx942, gfx950), where LLVM indexes with the VGPR index mode
      (``s_set_gpr_idx_on``) or a select per element (docs/amd_facts.md 6.7).  The plan step
      ``linlayout.synth.steps.Movrels``.
    * ``default_objective``: the conversion cost objective (linlayout.synth.cost.OBJECTIVES) a plan
      for this target is chosen by when none is asked for: ``concurrent`` on AMD (argued in
      docs/conversions.md section 5), ``latency`` on NVIDIA, where plans chosen by it ran faster
      on an H200 than those chosen by ``concurrent`` (docs/nvidia_facts.md section 9).
    """

    name: str
    family: str
    wave_size: int
    lds_bytes: int
    lds_banks: int
    dpp_controls: frozenset = field(default_factory=frozenset)
    ds_swizzle_modes: frozenset = field(default_factory=frozenset)
    has_ds_bpermute: bool = True
    has_permlane_swap: bool = False
    has_permlanex16: bool = False
    has_ds_read_tr: bool = False
    lane_ops: frozenset = field(default_factory=frozenset)
    mma: str | None = None
    mfma_version: int = 0
    wmma_version: int = 0
    emitter: str | None = None
    lds_phases: Mapping[str, LdsPhase] | None = field(default=None, hash=False, compare=False, repr=False)
    lds_assumptions: Mapping[str, Assumption] = field(default_factory=dict, hash=False, compare=False, repr=False)
    lds_model_assumptions: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    vgprs_per_lane: int = 256
    agprs_per_lane: int = 0
    threads_per_workgroup: int = 1024
    lockstep_lanes: bool = True
    barrier_instructions: int = 1
    default_objective: str = "concurrent"
    opaque_beyond_offset_adds: bool = False
    vop3_literal: bool = False
    has_delay_alu: bool = False
    has_bitop3: bool = False
    has_xor3: bool = False
    waits_after_inline_asm: bool = False
    vgpr_tuple_alignment: int = 1
    has_movrels: bool = False

    @property
    def gfx_generation(self) -> int:
        """The GFX IP major version of an AMD target, read from its name: 9 (gfx90a, gfx942, gfx950),
        11 (gfx1100), 12 (gfx1200, gfx1250).  It fixes instruction encodings such as ``s_waitcnt``'s."""
        if self.family not in ("cdna", "rdna"):
            raise ValueError(f"{self.name} is not an AMD target")
        return int(self.name[3:-2])

    @property
    def lds_isa(self) -> str:
        """How its LDS instructions are named: ``"ptx"`` (``ld/st.shared.bN``, NVIDIA) or ``"ds"``
        (``ds_read_bN`` / ``ds_write_bN``, AMD)."""
        return "ptx" if self.family == "nvidia" else "ds"

    def has_matrix_access(self, store: bool) -> bool:
        """Does it have NVIDIA's ``stmatrix`` (``store``) / ``ldmatrix``: a ``stmatrix.x1`` /
        ``ldmatrix.x1`` entry in ``lds_phases`` (``ldmatrix`` on sm_75 and later, ``stmatrix`` on
        sm_90 and later; docs/nvidia_facts.md section 1)?"""
        return f"{'st' if store else 'ld'}matrix.x1" in (self.lds_phases or {})

    def has_lane_family(self, family: str) -> bool:
        """Does it have the lane instructions of ``family``: ``dpp`` (DPP16 controls), ``dpp8``,
        ``ds_swizzle``, ``ds_bpermute``, ``readlane`` (AMD), ``permlane16`` (RDNA's v_permlane16/x16),
        ``permlane_swap`` (v_permlane16/32_swap), ``shfl`` (PTX ``shfl.sync``)?  The one answer of the
        emulator and the plan certificate reader."""
        present = {"dpp": bool(self.dpp_controls), "dpp8": "dpp8" in self.dpp_controls,
                   "ds_swizzle": bool(self.ds_swizzle_modes), "ds_bpermute": self.has_ds_bpermute,
                   "readlane": self.family != "nvidia", "permlane16": self.has_permlanex16,
                   "permlane_swap": self.has_permlane_swap, "shfl": "shfl.sync.idx" in self.lane_ops}
        if family not in present:
            raise ValueError(f"unknown lane instruction family {family!r}")
        return present[family]

    @property
    def has_lds_pair(self) -> bool:
        """Does it have two-address LDS accesses (AMD ``ds_read2`` / ``ds_write2``; none in PTX)?"""
        return self.lds_isa == "ds"

    @property
    def has_lds_store_high_half(self) -> bool:
        """Can a store narrower than a dword take its bytes from the upper half of a register in one
        instruction (AMD ``ds_write_b16_d16_hi`` / ``ds_write_b8_d16_hi``)?  Not in PTX:
        ``st.shared.b16`` / ``.b8`` stores the low bits of its operand, so the upper half takes a
        shift first (the CUDA emitter's ``>> 16``), one more instruction."""
        return self.lds_isa == "ds"

    def lds_op_name(self, store: bool, width_bytes: int) -> str:
        """The LDS instruction moving ``width_bytes`` per lane (1..16): ``ds_write_bN``, ``ds_read_bN``
        (``ds_read_uN`` below 4 bytes, zero-extending) on AMD, ``st.shared.bN`` / ``ld.shared.bN`` on
        NVIDIA (``N = 8 * width_bytes``)."""
        if self.lds_isa == "ptx":
            return f"{'st' if store else 'ld'}.shared.b{8 * width_bytes}"
        if store:
            return f"ds_write_b{8 * width_bytes}"
        return f"ds_read_b{8 * width_bytes}" if width_bytes >= 4 else f"ds_read_u{8 * width_bytes}"

    def transpose_load(self, element_bits: int, bytes_per_lane: int | None = None) -> TransposeLoad | None:
        """Its LDS transpose load of ``element_bits``-bit elements (of ``bytes_per_lane`` per lane
        where given: :mod:`linlayout.hw.transpose_loads`), one with an entry in ``lds_phases``; None
        where it has none."""
        return transpose_load(self.wave_size, element_bits, bytes_per_lane, among=self.lds_phases or {})

    @property
    def bank_bytes(self) -> int:
        """Bytes served by all banks in one cycle (4-byte banks)."""
        return 4 * self.lds_banks
