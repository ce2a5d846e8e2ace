"""AMD GPU targets: the per-architecture facts every other module reads.

Sources: ``docs/amd_facts.md`` sections 1.1 (LDS geometry), 2 (cross-lane
instructions) and 3 (MFMA), and Triton's target features for the RDNA/WMMA
parts (wave32, 32 or 64 banks).  ``lds_bytes`` is the per-workgroup maximum.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import LayoutError

__all__ = ["Target", "TARGETS", "get_target", "target_names"]

# DPP controls of gfx9 (CDNA) — docs/amd_facts.md 2.3, Table 94.  DPP8 and row_xmask are RDNA only.
_GFX9_DPP = frozenset(
    {"quad_perm", "row_shl", "row_shr", "row_ror", "wave_shl", "wave_rol", "wave_shr", "wave_ror",
     "row_mirror", "row_half_mirror", "row_bcast15", "row_bcast31", "row_newbcast"}
)
_GFX90A_DPP = _GFX9_DPP  # row_newbcast exists from gfx90a on
_RDNA_DPP = frozenset({"quad_perm", "row_shl", "row_shr", "row_ror", "row_mirror", "row_half_mirror",
                       "row_share", "row_xmask", "dpp8"})
_DS_SWIZZLE_GFX9 = frozenset({"bitmask", "quad_perm", "rotate", "fft"})
_DS_SWIZZLE_RDNA = frozenset({"bitmask", "quad_perm"})


@dataclass(frozen=True)
class Target:
    """One GPU architecture as far as layouts are concerned.

    ``family`` is ``"cdna"`` (MFMA, wave64) or ``"rdna"`` (WMMA, wave32).
    ``mfma_version`` follows Triton's numbering (2 = gfx90a, 3 = gfx942,
    4 = gfx950); ``wmma_version`` likewise (1 = gfx11, 2 = gfx12, 3 = gfx1250).
    """

    name: str
    family: str
    wave_size: int
    lds_bytes: int
    lds_banks: int
    dpp_controls: frozenset = field(default_factory=frozenset)
    ds_swizzle_modes: frozenset = field(default_factory=frozenset)
    has_ds_bpermute: bool = True
    has_permlane_swap: bool = False  # v_permlane16_swap_b32 / v_permlane32_swap_b32
    has_permlanex16: bool = False  # RDNA v_permlanex16_b32
    has_ds_read_tr: bool = False  # ds_read_b64_tr_b{4,8,16}, ds_read_b96_tr_b6
    mfma_version: int = 0
    wmma_version: int = 0

    @property
    def bank_bytes(self) -> int:
        """Bytes served by all banks in one cycle (4-byte banks)."""
        return 4 * self.lds_banks


TARGETS: dict[str, Target] = {
    t.name: t
    for t in [
        Target("gfx90a", "cdna", 64, 64 * 1024, 32, _GFX90A_DPP, _DS_SWIZZLE_GFX9, mfma_version=2),
        Target("gfx942", "cdna", 64, 64 * 1024, 32, _GFX9_DPP, _DS_SWIZZLE_GFX9, mfma_version=3),
        Target("gfx950", "cdna", 64, 160 * 1024, 64, _GFX9_DPP, _DS_SWIZZLE_GFX9,
               has_permlane_swap=True, has_ds_read_tr=True, mfma_version=4),
        Target("gfx1100", "rdna", 32, 64 * 1024, 32, _RDNA_DPP, _DS_SWIZZLE_RDNA,
               has_permlanex16=True, wmma_version=1),
        Target("gfx1200", "rdna", 32, 64 * 1024, 32, _RDNA_DPP, _DS_SWIZZLE_RDNA,
               has_permlanex16=True, wmma_version=2),
        Target("gfx1250", "rdna", 32, 320 * 1024, 64, _RDNA_DPP, _DS_SWIZZLE_RDNA,
               has_permlane_swap=True, has_permlanex16=True, has_ds_read_tr=True, wmma_version=3),
    ]
}

_ALIASES = {"gfx940": "gfx942", "gfx941": "gfx942", "cdna2": "gfx90a", "cdna3": "gfx942", "cdna4": "gfx950",
            "mi200": "gfx90a", "mi300": "gfx942", "mi350": "gfx950", "mi355": "gfx950",
            "gfx1101": "gfx1100", "gfx1102": "gfx1100", "gfx1201": "gfx1200"}


def target_names() -> list[str]:
    return list(TARGETS)


def get_target(name: str) -> Target:
    """The target called ``name`` (a gfx name, or an alias like ``cdna3``/``mi300``)."""
    if not isinstance(name, str):
        raise LayoutError(f"arch must be a string such as 'gfx942', got {name!r}")
    key = _ALIASES.get(name.lower(), name.lower())
    try:
        return TARGETS[key]
    except KeyError:
        raise LayoutError(f"unknown arch {name!r}; known: {', '.join(TARGETS)}") from None
