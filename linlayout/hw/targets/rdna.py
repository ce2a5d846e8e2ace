"""RDNA and gfx1250 targets (gfx1100, gfx1200, gfx1250): wave32, WMMA, RDNA's lane instructions.

Facts and their evidence: docs/amd_facts.md section 6 (wave32 targets), docs/hardware.md
section 1.  Lane instructions: dpp16 with RDNA's controls (no wave shifts or row_bcast;
row_share and row_xmask added) and dpp8, ``v_permlane16_b32`` / ``v_permlanex16_b32``,
``ds_swizzle_b32`` (bit-mask and quad-perm modes), ``ds_bpermute_b32`` on 32 lanes; gfx1250
adds ``v_permlane16_swap_b32`` and the transpose loads ``ds_load_tr16_b128`` / ``ds_load_tr8_b64``
(:mod:`linlayout.hw.transpose_loads`).  The LDS phase tables below are this family's LDS model (built
by :func:`linlayout.hw.lds.lds_model`): no source gives the phase grouping of a wave32 LDS
access, so every phase rests on a named [I] assumption (the ``ds_read_b128`` ones on the lane
groups Triton assumes, [Q] as a hardware fact).  Banks: 32 on gfx11/gfx12, 64 on gfx1250 (Triton's figure; LLVM's feature
list says 32 -- assumption ``rdna_gfx1250_64_banks``).
"""

from __future__ import annotations

from types import MappingProxyType

from . import register
from .base import Assumption, LdsPhase, Target
from .cdna import LDS_ASSUMPTIONS as CDNA_ASSUMPTIONS

RDNA_DPP = frozenset({"quad_perm", "row_shl", "row_shr", "row_ror", "row_mirror", "row_half_mirror",
                      "row_share", "row_xmask", "dpp8"})
RDNA_DS_SWIZZLE = frozenset({"bitmask", "quad_perm"})

L2, L3 = 1 << 2, 1 << 3  # lane bits as lane masks

ASSUMPTIONS: dict[str, Assumption] = {
    a.name: a
    for a in [
        Assumption(
            "rdna_b32_one_phase",
            "a wave32 ds_read_b32 / ds_write_b32 (and the 8/16-bit forms) serves its 32 lanes in one phase",
            "32 lanes x 4 B fill the 32 banks of one pass; no source gives the wave32 grouping "
            "[docs/amd_facts.md 6.3]",
            32,
        ),
        Assumption(
            "rdna_b64_phases_32banks",
            "gfx11/gfx12 ds_read_b64 / ds_write_b64 serve 2 phases of 16 contiguous lanes",
            "16 lanes x 8 B fill 32 banks, as the measured gfx942 ds_read_b64 [docs/amd_facts.md 6.3]",
            16,
        ),
        Assumption(
            "rdna_b128_write_phases_32banks",
            "gfx11/gfx12 ds_write_b128 (and b96) serve 4 phases of 8 contiguous lanes",
            "8 lanes x 16 B fill 32 banks [docs/amd_facts.md 6.3]",
            8,
        ),
        Assumption(
            "rdna_b128_read_phases_32banks",
            "gfx11/gfx12 ds_read_b128 (and b96) serve 4 phases of 8 lanes spanned by lane bits 0, 1, 4 "
            "(phase = l2, l3)",
            "Triton's ds_read_b128 tile for 32 banks [Q TRITON-AMD, docs/amd_facts.md 6.3]; not measured",
            (L2, L3),
        ),
        Assumption(
            "rdna_gfx1250_64_banks",
            "gfx1250's LDS has 64 banks of 4 bytes; ds_read/write_b32 and b64 serve the 32 lanes in one phase",
            "Triton's getSharedMemoryBanks; LLVM's gfx1250 feature list says 32 banks [docs/amd_facts.md 6.3]",
            32,
        ),
        Assumption(
            "rdna_gfx1250_b128_phases",
            "gfx1250 ds_read_b128 (and b96) serve 2 phases of 16 lanes spanned by lane bits 0, 1, 3, 4 "
            "(phase = l2); ds_write_b128 2 phases of 16 contiguous lanes",
            "Triton's 64-bank ds_read_b128 tile [Q TRITON-AMD, docs/amd_facts.md 6.3]; writes by analogy",
            (L2,),
        ),
        Assumption(
            "rdna_gfx1250_tr_phases",
            "gfx1250 ds_load_tr16_b128 serves the phases of its ds_read_b128 (2 phases of 16 lanes, phase = l2), "
            "ds_load_tr8_b64 those of its ds_read_b64 (one phase of 32 lanes)",
            "no source gives the phases of a transpose load; each reads as many bytes per lane as the plain "
            "load [docs/amd_facts.md 6.6]",
            (L2,),
        ),
        Assumption(
            "gfx1250_tr_lane_map",
            "ds_load_tr16_b128: inside each 8-lane group, lane i element j is element i of lane j's read; "
            "ds_load_tr8_b64: inside each 16-lane group, lane i element j is element i % 8 of the read of lane "
            "(j % 4) + 4 * (i // 8) + 8 * (j // 4)",
            "Triton's gfx1250 lowering of transposed local loads (lowerDsReadTr, queryLDSTransLoadParams); no AMD "
            "text found [docs/amd_facts.md 6.6]",
            "see statement",
        ),
    ]
}
# the LDS model's rule for sub-dword lanes on one dword is AMD's (docs/amd_facts.md 1.2)
ASSUMPTIONS["subdword_same_dword"] = CDNA_ASSUMPTIONS["subdword_same_dword"]


def _phases(banks: int) -> dict[str, LdsPhase]:
    """The wave32 LDS phase table of a part with ``banks`` 4-byte banks (32: gfx11/gfx12, 64: gfx1250)."""
    def assumed(name: str, form: object | None = None) -> LdsPhase:
        return LdsPhase(ASSUMPTIONS[name].default if form is None else form, "I", f"assumption {name}", name)

    if banks == 64:
        one = assumed("rdna_gfx1250_64_banks")
        read128 = assumed("rdna_gfx1250_b128_phases")
        write128 = assumed("rdna_gfx1250_b128_phases", 16)
        b64_read = b64_write = one
        transposes = {"ds_load_tr16_b128": assumed("rdna_gfx1250_tr_phases"),
                      "ds_load_tr8_b64": assumed("rdna_gfx1250_tr_phases", 32)}
    else:
        one = assumed("rdna_b32_one_phase")
        read128 = assumed("rdna_b128_read_phases_32banks")
        write128 = assumed("rdna_b128_write_phases_32banks")
        b64_read = b64_write = assumed("rdna_b64_phases_32banks")
        transposes = {}
    return {
        "ds_read_u8": one, "ds_read_u16": one, "ds_write_b8": one, "ds_write_b16": one,
        "ds_read_b32": one, "ds_write_b32": one,
        "ds_read_b64": b64_read, "ds_write_b64": b64_write,
        "ds_read_b96": read128, "ds_write_b96": write128,
        "ds_read_b128": read128, "ds_write_b128": write128,
        **transposes,
    }


def _rdna(name: str, lds_bytes: int, lds_banks: int, wmma_version: int, aliases: tuple[str, ...],
          has_permlane_swap: bool = False, has_ds_read_tr: bool = False, vgprs_per_lane: int = 256,
          barrier_instructions: int = 1, has_bitop3: bool = False) -> Target:
    """A wave32 RDNA descriptor (v_permlane16/x16_b32 and v_xor3_b32 on every part; GFX11 and later: a VOP3 takes a
    literal, a dependent VALU read gets an ``s_delay_alu``; ``v_movrels_b32`` at an ``m0`` index)."""
    return Target(name, "rdna", 32, lds_bytes, lds_banks, RDNA_DPP, RDNA_DS_SWIZZLE,
                  has_permlane_swap=has_permlane_swap, has_permlanex16=True, has_ds_read_tr=has_ds_read_tr,
                  mma="wmma", wmma_version=wmma_version, lds_phases=MappingProxyType(_phases(lds_banks)),
                  lds_assumptions=MappingProxyType(ASSUMPTIONS),
                  lds_model_assumptions=("subdword_same_dword",) + (("gfx1250_tr_lane_map",) if has_ds_read_tr else ()),
                  aliases=aliases, vgprs_per_lane=vgprs_per_lane, barrier_instructions=barrier_instructions,
                  emitter="rocdl", vop3_literal=True, has_delay_alu=True, has_bitop3=has_bitop3, has_xor3=True,
                  has_movrels=True)


register(_rdna("gfx1100", 64 * 1024, 32, 1, ("gfx1101", "gfx1102")))
# gfx12 and gfx1250 split a barrier into s_barrier_signal + s_barrier_wait (their compiled code; docs/benchmarks.md)
register(_rdna("gfx1200", 64 * 1024, 32, 2, ("gfx1201",), barrier_instructions=2))
register(_rdna("gfx1250", 320 * 1024, 64, 3, (), has_permlane_swap=True, has_ds_read_tr=True, vgprs_per_lane=1024,
               barrier_instructions=2, has_bitop3=True))
