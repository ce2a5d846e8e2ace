"""RDNA targets (gfx1100, gfx1200, gfx1250): wave32, WMMA.

Catalogued for their WMMA layouts (:mod:`linlayout.hw.wmma`); they have no hardware LDS
model and no emitter.  Facts: docs/hardware.md section 1 and Triton's target features for
the RDNA parts (wave32, 32 or 64 banks); DPP8, row_share and row_xmask are RDNA's DPP
(docs/hardware.md section 3).
"""

from __future__ import annotations

from . import register
from .base import Target

RDNA_DPP = frozenset({"quad_perm", "row_shl", "row_shr", "row_ror", "row_mirror", "row_half_mirror",
                      "row_share", "row_xmask", "dpp8"})
RDNA_DS_SWIZZLE = frozenset({"bitmask", "quad_perm"})


def _rdna(name: str, lds_bytes: int, lds_banks: int, wmma_version: int, aliases: tuple[str, ...],
          has_permlane_swap: bool = False, has_ds_read_tr: bool = False, vgprs_per_lane: int = 256) -> Target:
    """A wave32 RDNA descriptor (v_permlanex16_b32 on every part)."""
    return Target(name, "rdna", 32, lds_bytes, lds_banks, RDNA_DPP, RDNA_DS_SWIZZLE,
                  has_permlane_swap=has_permlane_swap, has_permlanex16=True, has_ds_read_tr=has_ds_read_tr,
                  mma="wmma", wmma_version=wmma_version, aliases=aliases, vgprs_per_lane=vgprs_per_lane)


register(_rdna("gfx1100", 64 * 1024, 32, 1, ("gfx1101", "gfx1102")))
register(_rdna("gfx1200", 64 * 1024, 32, 2, ("gfx1201",)))
register(_rdna("gfx1250", 320 * 1024, 64, 3, (), has_permlane_swap=True, has_ds_read_tr=True, vgprs_per_lane=1024))
