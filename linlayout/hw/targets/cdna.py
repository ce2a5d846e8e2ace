"""CDNA targets (gfx90a, gfx942, gfx950): wave64, MFMA, the gfx9 cross-lane instructions.

Facts and their evidence: docs/hardware.md sections 1 (targets), 2 (LDS: bank map and lane
phases; the sources in brackets are its short names) and 3 (cross-lane instructions).  The
LDS phase tables below are this family's LDS model (built by :func:`linlayout.hw.lds.lds_model`);
each [I] phase names its :class:`Assumption`.
"""

from __future__ import annotations

from types import MappingProxyType

from . import register
from .base import Assumption, LdsPhase, Target

# DPP controls of gfx9 (CDNA) -- the DPP_CTRL table.  DPP8 and row_xmask are RDNA only;
# row_newbcast exists from gfx90a on.
GFX9_DPP = frozenset(
    {"quad_perm", "row_shl", "row_shr", "row_ror", "wave_shl", "wave_rol", "wave_shr", "wave_ror",
     "row_mirror", "row_half_mirror", "row_bcast15", "row_bcast31", "row_newbcast"}
)
GFX9_DS_SWIZZLE = frozenset({"bitmask", "quad_perm", "rotate", "fft"})

L2, L3, L4, L5 = (1 << i for i in range(2, 6))  # lane bits as lane masks
# gfx942 ds_read_b128 (and gfx950 ds_read_b96): phase = (l2^l4, l3, l5)
_XOR8 = (L2 | L4, L3, L5)
# gfx950 ds_read_b128: phase = (l2^l3^l4, l5)
_XOR16 = (L2 | L3 | L4, L5)

# ------------------------------------------------------------------ LDS: named [I] assumptions
LDS_ASSUMPTIONS: dict[str, Assumption] = {
    a.name: a
    for a in [
        Assumption(
            "b32_phases_32banks",
            "gfx90a/gfx942 ds_read_b32 and ds_write_b32 serve 2 phases of 32 contiguous lanes",
            "GCN OpenCL guide ('threads 0-31 are checked for conflicts as are threads 32-63'), not re-confirmed "
            "for CDNA; consistent with 128 B/clk [docs/amd_facts.md 1.3, 1.4]",
            32,
        ),
        Assumption(
            "b32_phases_gfx950",
            "gfx950 ds_read_b32 and ds_write_b32 serve 2 phases of 32 contiguous lanes (128 B per cycle, "
            "64-bank map)",
            "not measured; Triton's comment that only ds_read_b64/ds_read_b64_tr/ds_read_b128 use all 64 banks "
            "[docs/triton_facts.md 3.2]; Triton's own cost formula would give 1 phase of 64 lanes",
            32,
        ),
        Assumption(
            "subdword_phases",
            "ds_read_u8/u16 and ds_write_b8/b16 use the phases of the b32 instruction of the same direction",
            "no source; each lane touches one dword like b32",
            "as b32",
        ),
        Assumption(
            "subdword_same_dword",
            "lanes of one phase touching different bytes of the same dword cost one dword (broadcast for reads, "
            "byte-masked merge for writes)",
            "reads: broadcast [Q RPC]; writes: inferred",
            "one dword",
        ),
        Assumption(
            "write_b64_phases_32banks",
            "gfx90a/gfx942 ds_write_b64 serves 4 phases of 16 contiguous lanes, like the measured ds_read_b64",
            "not measured on gfx942 [docs/amd_facts.md 1.3]",
            16,
        ),
        Assumption(
            "gfx90a_as_gfx942",
            "gfx90a's ds_read_b64 and ds_read_b128/ds_write_b128 phases equal gfx942's",
            "same 32-bank geometry [Q RPC 'CDNA accelerators']; gfx942 measurements only [docs/amd_facts.md 1.1, 1.3]",
            "as gfx942",
        ),
        Assumption(
            "read_b96_phases_32banks",
            "gfx90a/gfx942 ds_read_b96 serves 8 phases of 8 lanes grouped like gfx942 ds_read_b128, "
            "phase = (l2^l4, l3, l5)",
            "unknown on gfx942 [docs/amd_facts.md 5.1]; gfx950 ds_read_b96 measured with exactly these groups [M HK-PHASES]",
            _XOR8,
        ),
        Assumption(
            "write_b96_phases",
            "ds_write_b96 serves 8 phases of 8 contiguous lanes (like ds_write_b128 on 32 banks)",
            "unknown on every target [docs/amd_facts.md 5.1]",
            8,
        ),
        Assumption(
            "write_b128_phases_gfx950",
            "gfx950 ds_write_b128 serves 4 phases of 16 contiguous lanes (256 B per cycle)",
            "not measured [docs/amd_facts.md 1.3]; the 32-bank part serves 8 contiguous lanes of 16 B = all banks "
            "[Q LDS-BLOG]; Triton's formula gives the same 16",
            16,
        ),
        Assumption(
            "tr_b64_phases",
            "gfx950 ds_read_b64_tr_b{4,8,16} serve 2 phases of 32 contiguous lanes, like ds_read_b64",
            "Triton comment 'ds_read_b64_tr and ds_read_b64: 64 banks, lanes split into 2 groups' "
            "[docs/triton_facts.md 3.2]; bank behaviour of TR loads is undocumented [docs/amd_facts.md 1.6]",
            32,
        ),
        Assumption(
            "tr_b96_phases",
            "gfx950 ds_read_b96_tr_b6 serves the phases of ds_read_b96, phase = (l2^l4, l3, l5)",
            "no source [docs/amd_facts.md 1.6]",
            _XOR8,
        ),
        Assumption(
            "tr_lane_permutation",
            "ds_read_*_tr_*: within each 16-lane group, result lane i element j comes from source lane "
            "j*(16/E) + i//E, element i % E (E elements per lane)",
            "consistent with every quoted CDNA4-ISA statement, not spelled out by AMD [docs/amd_facts.md 1.6]",
            "see statement",
        ),
    ]
}

_Q_B128_WRITE_32 = "[Q LDS-BLOG, CK-LDS] ds_write_b128: 8 x 8 contiguous lanes"
_Q_B128_READ_32 = "[Q LDS-BLOG, CK-LDS; M PYHIP MI300] ds_read_b128 lane groups {0-3,20-23}, {4-7,16-19}, ..."
_M_B64_READ_32 = "[M PYHIP, MI300] ds_read_b64: 4 x 16 contiguous lanes"


def _lds_32banks(as_gfx942: bool) -> dict[str, LdsPhase]:
    """The LDS phases of the 32-bank CDNA parts: gfx942's, or gfx90a's (``as_gfx942``: its
    measured and quoted groupings are gfx942's, by assumption ``gfx90a_as_gfx942``)."""
    sub = LdsPhase("as b32", "I", "assumption subdword_phases", "subdword_phases")
    b32 = LdsPhase(LDS_ASSUMPTIONS["b32_phases_32banks"].default, "I", "assumption b32_phases_32banks",
                   "b32_phases_32banks")
    i90 = "gfx90a_as_gfx942" if as_gfx942 else None
    tag_q = "I" if i90 else "Q"
    tag_m = "I" if i90 else "M"
    return {
        "ds_read_u8": sub, "ds_read_u16": sub, "ds_write_b8": sub, "ds_write_b16": sub,
        "ds_read_b32": b32, "ds_write_b32": b32,
        "ds_read_b64": LdsPhase(16, tag_m, _M_B64_READ_32, i90),
        "ds_write_b64": LdsPhase(16, "I", "assumption write_b64_phases_32banks", "write_b64_phases_32banks"),
        "ds_read_b96": LdsPhase(_XOR8, "I", "assumption read_b96_phases_32banks", "read_b96_phases_32banks"),
        "ds_write_b96": LdsPhase(8, "I", "assumption write_b96_phases", "write_b96_phases"),
        "ds_read_b128": LdsPhase(_XOR8, tag_q, _Q_B128_READ_32, i90),
        "ds_write_b128": LdsPhase(8, tag_q, _Q_B128_WRITE_32, i90),
    }


def _lds_gfx950() -> dict[str, LdsPhase]:
    """The LDS phases of gfx950 (64 banks; transpose loads)."""
    sub = LdsPhase("as b32", "I", "assumption subdword_phases", "subdword_phases")
    b32 = LdsPhase(32, "I", "assumption b32_phases_gfx950", "b32_phases_gfx950")
    tr = LdsPhase(32, "I", "assumption tr_b64_phases", "tr_b64_phases")
    return {
        "ds_read_u8": sub, "ds_read_u16": sub, "ds_write_b8": sub, "ds_write_b16": sub,
        "ds_read_b32": b32, "ds_write_b32": b32,
        "ds_read_b64": LdsPhase(32, "M", "[M HK-PHASES] ds_read_b64: 2 x 32 lanes", None),
        "ds_write_b64": LdsPhase(16, "M", "[M HK-PHASES] ds_write_b64: 4 x 16 contiguous lanes", None),
        "ds_read_b96": LdsPhase(_XOR8, "M", "[M HK-PHASES] ds_read_b96: {0-3,20-23}, {4-7,16-19}, ... (+32)", None),
        "ds_write_b96": LdsPhase(8, "I", "assumption write_b96_phases", "write_b96_phases"),
        "ds_read_b128": LdsPhase(_XOR16, "M",
                                 "[M HK-PHASES] ds_read_b128: {0-3,12-15,20-27}, {4-11,16-19,28-31}, (+32)", None),
        "ds_write_b128": LdsPhase(16, "I", "assumption write_b128_phases_gfx950", "write_b128_phases_gfx950"),
        "ds_read_b64_tr_b16": tr, "ds_read_b64_tr_b8": tr, "ds_read_b64_tr_b4": tr,
        "ds_read_b96_tr_b6": LdsPhase(_XOR8, "I", "assumption tr_b96_phases", "tr_b96_phases"),
    }


def _cdna(name: str, lds_bytes: int, lds_banks: int, lds_phases: dict, mfma_version: int, emitter: str | None,
          aliases: tuple[str, ...], has_permlane_swap: bool = False, has_ds_read_tr: bool = False,
          opaque_beyond_offset_adds: bool = False, waits_after_inline_asm: bool = False,
          has_bitop3: bool = False) -> Target:
    """A wave64 CDNA descriptor; its LDS model also rests on ``subdword_same_dword`` and, with
    transpose loads, ``tr_lane_permutation``."""
    extra = ("subdword_same_dword",) + (("tr_lane_permutation",) if has_ds_read_tr else ())
    return Target(name, "cdna", 64, lds_bytes, lds_banks, GFX9_DPP, GFX9_DS_SWIZZLE,
                  has_permlane_swap=has_permlane_swap, has_ds_read_tr=has_ds_read_tr,
                  mma="mfma", mfma_version=mfma_version, emitter=emitter,
                  lds_phases=MappingProxyType(lds_phases), lds_assumptions=MappingProxyType(LDS_ASSUMPTIONS),
                  lds_model_assumptions=extra, aliases=aliases, agprs_per_lane=256,
                  opaque_beyond_offset_adds=opaque_beyond_offset_adds, waits_after_inline_asm=waits_after_inline_asm,
                  has_bitop3=has_bitop3, vgpr_tuple_alignment=2)


register(_cdna("gfx90a", 64 * 1024, 32, _lds_32banks(as_gfx942=True), 2, "rocdl", ("cdna2", "mi200")))
register(_cdna("gfx942", 64 * 1024, 32, _lds_32banks(as_gfx942=False), 3, "rocdl",
               ("gfx940", "gfx941", "cdna3", "mi300"), waits_after_inline_asm=True))
register(_cdna("gfx950", 160 * 1024, 64, _lds_gfx950(), 4, "rocdl", ("cdna4", "mi350", "mi355"),
               has_permlane_swap=True, has_ds_read_tr=True, opaque_beyond_offset_adds=True,
               waits_after_inline_asm=True, has_bitop3=True))
