"""NVIDIA targets (sm_80 = A100, sm_90 = H100): warps of 32 lanes, PTX lane instructions,
shared memory of 32 banks x 4 bytes, ``mma.sync`` (and ``wgmma`` on sm_90).

Facts and their evidence: docs/nvidia_facts.md (section numbers below).  The shared-memory
phase table is this family's bank model (built by :func:`linlayout.hw.lds.lds_model`, the
same machinery as AMD's LDS): one phase of 32 lanes up to 32 bits per lane, two half-warp
phases for 64 bits, four quarter-warp phases for 128 bits, one phase per 8x8 matrix of
``ldmatrix``/``stmatrix .xN`` (address lanes ``8m .. 8m+7``), and the load-only merge of the
first two phases when lanes are paired on the same address (``merge_lanes``: ``l ^ 1`` or
``l ^ 2``).  sm_90's table was measured on an H100 and an H200 with Nsight Compute (section 2.2;
``benchmarks/nvidia/bank_counters.py`` repeats it); sm_80's rests on the named assumption
``sm80_as_sm90``.  The lanes of a warp are not in lockstep (``Target.lockstep_lanes``): a lane
reading shared-memory bytes another lane of its warp wrote needs a warp barrier between.
"""

from __future__ import annotations

from types import MappingProxyType

from . import register
from .base import Assumption, LdsPhase, Target

#: PTX lane instructions a conversion may use (docs/nvidia_facts.md section 1).
PTX_LANE_OPS = frozenset({"shfl.sync.idx", "shfl.sync.bfly", "shfl.sync.up", "shfl.sync.down", "prmt", "selp",
                          "movmatrix"})

L3, L4 = 1 << 3, 1 << 4  # lane bits as lane masks
PAIRED = (1, 2)  # lanes l and l^1, or l and l^2, on the same address

ASSUMPTIONS: dict[str, Assumption] = {
    a.name: a
    for a in [
        Assumption(
            "sm80_as_sm90",
            "sm_80 (A100) serves shared memory in the phases measured on sm_90 (H100)",
            "A100 not measured; a forum answer describes the same half-/quarter-warp split for CC 7.x "
            "[docs/nvidia_facts.md 2.4]",
            "as sm_90",
        ),
        Assumption(
            "pairing_whole_warp",
            "64/128-bit loads merge two phases only when every lane shares its address with lane l^1 "
            "(or every lane with lane l^2); a partly paired warp is served unmerged",
            "measured: all 32 lanes paired merge; lanes 0-15 paired, or all but lane 31, do not "
            "[docs/nvidia_facts.md 2.2]; other partial pairings untested",
            "whole warp",
        ),
    ]
}


def _phases(measured: bool) -> dict[str, LdsPhase]:
    """The shared-memory phase table; ``measured``: sm_90's (measured), else sm_80's by assumption."""
    tag, why = ("M", "ncu counters on H100 and H200") if measured else ("I", "assumption sm80_as_sm90")
    base = None if measured else "sm80_as_sm90"

    def phase(form: object, text: str, merge: tuple = ()) -> LdsPhase:
        return LdsPhase(form, tag, f"[{tag} docs/nvidia_facts.md 2.2, {why}] {text}", base, merge)

    table = {}
    for verb in ("ld", "st"):
        load = verb == "ld"
        table[f"{verb}.shared.b8"] = phase(32, "one phase of 32 lanes")
        table[f"{verb}.shared.b16"] = phase(32, "one phase of 32 lanes")
        table[f"{verb}.shared.b32"] = phase(32, "one phase of 32 lanes")
        table[f"{verb}.shared.b64"] = phase(16, "two half-warp phases (l4)" + (", merged when paired" if load else ""),
                                            PAIRED if load else ())
        table[f"{verb}.shared.b128"] = phase((L3, L4), "four quarter-warp phases (l3, l4)"
                                             + (", l3 dropped when paired" if load else ""), PAIRED if load else ())
        if verb == "ld" or measured:  # stmatrix is sm_90+
            for n in (1, 2, 4):
                for trans in ("", ".trans"):
                    table[f"{verb}matrix.x{n}{trans}"] = phase(8, "one phase per 8x8 matrix (address lanes 8m..8m+7)")
    return table


#: Registers one thread can address: 255 32-bit registers (R0..R254; ptxas never allocates more, and
#: register number 255 is the zero register RZ) [S docs/nvidia_facts.md 1].
REGISTERS_PER_THREAD = 255


def _nvidia(name: str, lds_bytes: int, measured: bool, aliases: tuple[str, ...]) -> Target:
    """A warp-32 NVIDIA descriptor (no AMD lane instructions; PTX ones in ``lane_ops``)."""
    return Target(name, "nvidia", 32, lds_bytes, 32, has_ds_bpermute=False, lane_ops=PTX_LANE_OPS,
                  mma="mma_sync", lds_phases=MappingProxyType(_phases(measured)),
                  lds_assumptions=MappingProxyType(ASSUMPTIONS), lds_model_assumptions=("pairing_whole_warp",),
                  aliases=aliases, lockstep_lanes=False, vgprs_per_lane=REGISTERS_PER_THREAD,
                  default_objective="latency")


# shared memory per block (opt-in maximum): 163 KiB on sm_80, 227 KiB on sm_90 [I docs/nvidia_facts.md 1]
register(_nvidia("sm_80", 163 * 1024, False, ("sm80", "a100", "ampere")))
register(_nvidia("sm_90", 227 * 1024, True, ("sm90", "sm_90a", "h100", "hopper")))
