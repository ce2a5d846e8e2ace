"""Counting AMDGPU instructions in ISA text, by category, optionally inside a marked region.

Counting rule (the one ``benchmarks/data/triton_amd_baseline.json`` follows)
-----------------------------------------------------------------------------
Every instruction line is put into exactly one *class*; ``total`` is the number of
instruction lines and equals the sum of the class counts:

=============== ==========================================================================
class           mnemonics
=============== ==========================================================================
``valu``        every ``v_*`` except MFMA: VOP1/2/3/3P/C incl. ``_dpp``/``_sdwa`` forms,
                ``v_cndmask``, ``v_perm_b32``, ``v_mov_*``, ``v_readlane``,
                ``v_permlane{16,32}_swap``, ``v_pk_*``, ``v_accvgpr_*``
``mfma``        ``v_mfma*``, ``v_smfmac*``
``salu``        ``s_*`` except the five classes below (``s_mov``, ``s_and``, ``s_cmp``,
                ``s_cbranch``, ``s_setprio``, ``s_endpgm``, ...)
``s_waitcnt``   ``s_waitcnt*`` (and gfx12 ``s_wait_*``)
``s_barrier``   ``s_barrier`` (gfx12, gfx1250: ``s_barrier_signal`` and ``s_barrier_wait``, the
                two halves of one barrier, count two)
``s_nop``       ``s_nop`` (hazard wait states)
``smem``        scalar memory: ``s_load*``, ``s_buffer_*``, ``s_store*``, ``s_dcache*``,
                ``s_memtime``, ``s_memrealtime``, ``s_scratch_*``, ``s_atc_probe*``
``ds_bpermute`` ``ds_bpermute_b32``
``ds_permute``  ``ds_permute_b32``
``ds_swizzle``  ``ds_swizzle_b32``
``lds_write``   ``ds_write*`` / ``ds_store*`` (all widths, ``ds_write2*``)
``lds_read_tr`` ``ds_read_*_tr_*`` / ``ds_load_tr*`` (gfx950 and gfx1250 transpose loads)
``lds_read``    other ``ds_read*`` / ``ds_load*``
``vmem``        ``buffer_*``, ``tbuffer_*``, ``global_*``, ``flat_*``, ``scratch_*``
``other``       anything else (LDS atomics, ``ds_nop``, ``exp``, ``image_*``, ...)
=============== ==========================================================================

Sub-counts of ``valu`` (they may overlap each other, never leave ``valu``):
``v_cndmask`` (``v_cndmask_*``), ``v_perm_b32``, ``dpp`` (any ``*_dpp`` instruction),
``v_mov`` (``v_mov_*`` and ``v_movrel*`` without DPP: a DPP mov counts under ``dpp`` only),
``readlane`` (``v_readlane_*``, ``v_readfirstlane_*``), ``permlane16_swap``,
``permlane32_swap``, ``pack_ops`` (``v_pk_*`` incl. ``v_pk_mov_b32``, ``v_pack_*``).

Sub-count of ``salu`` (it never leaves ``salu``): ``s_delay_alu`` (gfx11 and later: the hint that
delays the wave's next VALU instruction behind a dependency; ``salu`` keeps it, as Triton's stored
counts always did, so that the instruction classes are unchanged).  It is counted apart because it
is not priced as an SALU instruction: ``linlayout.synth.cost.mix_cost`` prices it as a wait, as it
prices ``s_waitcnt`` (which holds gfx12's ``s_wait_alu``), docs/amd_facts.md 6.5 ("ALU waits").

RDNA's dual-issue VOPD line ``v_dual_X ... :: v_dual_Y ...`` (gfx11, gfx12) holds two VALU
operations issued together; each half counts as the instruction it stands for, ``v_X`` / ``v_Y``
(a ``v_dual_cndmask_b32 :: v_dual_mov_b32`` line adds 2 to ``total`` and ``valu``, 1 to
``v_cndmask`` and 1 to ``v_mov``), so that a conversion's count is its operations whether or not
the compiler paired them (``valu`` keeps containing its sub-counts).  Triton's stored wave32
counts (benchmarks/data/triton_wave32_corpus.json) were taken before this rule: a VOPD line there
is one ``valu`` instruction without sub-counts.

Evidence from the 48 baseline cases: ``total == valu + salu + ds_bpermute + ds_permute +
ds_swizzle + lds_write + lds_read + lds_read_tr + s_barrier + s_waitcnt`` holds exactly in
45 cases and is one short in 3 (gfx942 fp32 ``mfma32T->dotA(kw8)``, gfx950 fp16
``mfma32T->dotA(kw8) [FA P]`` and ``mfma16T->dotA(kw8)``), i.e. one instruction in no listed
class: an ``s_nop`` hazard wait (``s_nop`` is its own class here).  ``s_waitcnt`` and
``s_barrier`` are therefore not part of ``salu``.  ``valu`` contains the sub-counts:
gfx950 fp32 ``mfma32T->dotA(kw8) [FA P]`` has ``total = valu = permlane32_swap = 16`` and
``mfma16T->dotA(kw8)`` has ``valu = 32 = permlane16_swap + permlane32_swap``; gfx942 fp32
``mfma32T->dotA(kw8)`` has ``valu = 52 >= v_cndmask = 48`` while its 16 ``ds_bpermute``
sit outside ``valu``; in every case ``valu >= v_cndmask + v_perm_b32 + dpp + v_mov +
readlane + permlane16_swap + permlane32_swap + pack_ops``.  ``pack_ops`` appears in fp32
cases too, so it counts packed VALU ops such as ``v_pk_mov_b32``, not only fp16 packing.

Region markers
--------------
A region is delimited by two zero-cost comment lines that the emitter puts into the MLIR
as side-effecting inline asm (LLVM keeps them in order with memory operations and prints
them between ``;;#ASMSTART`` / ``;;#ASMEND``; they assemble to nothing)::

    rocdl.sched.barrier none
    llvm.inline_asm has_side_effects "; linlayout-begin conv", "" : () -> ()
    rocdl.sched.barrier none
    ... the code to count ...
    rocdl.sched.barrier none
    llvm.inline_asm has_side_effects "; linlayout-end conv", "" : () -> ()
    rocdl.sched.barrier none

``rocdl.sched.barrier none`` (mask 0) stops the machine scheduler from moving any
instruction across the marker and also emits no instruction.  :func:`marker_ops` returns
these lines.  Address arithmetic that LLVM hoists out of the region is not counted, as in
the baseline.
"""

from __future__ import annotations

import re

__all__ = [
    "COUNT_KEYS",
    "CLASS_KEYS",
    "SALU_SUB_KEYS",
    "IsaRegionError",
    "isa_counts",
    "instructions",
    "region_lines",
    "marker_ops",
    "classify",
]

CLASS_KEYS = (
    "valu",
    "mfma",
    "salu",
    "s_waitcnt",
    "s_barrier",
    "s_nop",
    "smem",
    "ds_bpermute",
    "ds_permute",
    "ds_swizzle",
    "lds_write",
    "lds_read",
    "lds_read_tr",
    "vmem",
    "other",
)
VALU_SUB_KEYS = (
    "v_cndmask",
    "v_perm_b32",
    "dpp",
    "v_mov",
    "readlane",
    "permlane16_swap",
    "permlane32_swap",
    "pack_ops",
)
SALU_SUB_KEYS = ("s_delay_alu",)
COUNT_KEYS = ("total",) + CLASS_KEYS + VALU_SUB_KEYS + SALU_SUB_KEYS

_MARKER_RE = re.compile(r"^\s*;+\s*linlayout-(begin|end)(?:\s+(\S+))?\s*$")
_MNEMONIC_RE = re.compile(r"^\s*([a-z][a-z0-9_]*)(?:\s|$)")
_SMEM_PREFIXES = ("s_load", "s_buffer_", "s_store", "s_dcache", "s_scratch_", "s_atc_probe")


class IsaRegionError(ValueError):
    """The requested region's markers are missing, unbalanced or repeated in the ISA text."""


def _code_lines(isa_text: str) -> list[str]:
    """The lines of ``isa_text`` outside ``.amdgpu_metadata`` and ``.amdhsa_kernel`` blocks."""
    out, skip_until = [], None
    for line in isa_text.splitlines():
        s = line.strip()
        if skip_until is not None:
            if s.startswith(skip_until):
                skip_until = None
            continue
        if s.startswith(".amdgpu_metadata"):
            skip_until = ".end_amdgpu_metadata"
        elif s.startswith(".amdhsa_kernel"):
            skip_until = ".end_amdhsa_kernel"
        else:
            out.append(line)
    return out


def _mnemonic(line: str) -> str | None:
    """The instruction mnemonic of an ISA line, or None for labels, directives, comments."""
    code = line.split(";", 1)[0].split("//", 1)[0]
    m = _MNEMONIC_RE.match(code)
    if m is None or code.rstrip().endswith(":"):
        return None
    return m.group(1)


def instructions(isa_text: str) -> list[str]:
    """The instruction lines (stripped) of ``isa_text``, in order, without metadata."""
    return [ln.strip() for ln in _code_lines(isa_text) if _mnemonic(ln) is not None]


def region_lines(isa_text: str, region: str) -> list[str]:
    """The lines strictly between ``; linlayout-begin <region>`` and ``; linlayout-end <region>``.

    Exactly one begin/end pair with that tag must exist, begin first; otherwise
    :class:`IsaRegionError`.
    """
    lines = _code_lines(isa_text)
    begins, ends = [], []
    for i, ln in enumerate(lines):
        m = _MARKER_RE.match(ln)
        if m and (m.group(2) or "") == region:
            (begins if m.group(1) == "begin" else ends).append(i)
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise IsaRegionError(
            f"region {region!r}: expected one '; linlayout-begin {region}' before one "
            f"'; linlayout-end {region}' in the ISA, found {len(begins)} begin and {len(ends)} end markers"
        )
    return lines[begins[0] + 1 : ends[0]]


def around_region(isa_text: str, region: str, leave_out: tuple[str, ...] = ()) -> tuple[list[str], list[str]]:
    """The lines before and the lines after the one ``region`` of ``isa_text`` (its markers as
    :func:`region_lines` reads them; :class:`IsaRegionError` where it is not there once), less the
    lines and markers of the regions named in ``leave_out``, wherever they lie."""
    region_lines(isa_text, region)  # exactly one begin/end pair, or IsaRegionError
    before, inside, after = [], [], []
    where, skipping = before, None
    for ln in _code_lines(isa_text):
        m = _MARKER_RE.match(ln)
        tag = (m.group(2) or "") if m else None
        if tag == region:
            where = inside if m.group(1) == "begin" else after
        elif tag in leave_out:
            skipping = tag if m.group(1) == "begin" else None
        elif skipping is None:
            where.append(ln)
    return before, after


def classify(mnemonic: str) -> tuple[str, tuple[str, ...]]:
    """The class of one mnemonic and the sub-counts (of ``valu``, of ``salu``) it belongs to."""
    mn = mnemonic.lower()
    if mn.startswith("v_"):
        if mn.startswith(("v_mfma", "v_smfmac")):
            return "mfma", ()
        subs = []
        is_dpp = "_dpp" in mn
        if mn.startswith("v_cndmask"):
            subs.append("v_cndmask")
        if mn.startswith("v_perm_b32"):
            subs.append("v_perm_b32")
        if is_dpp:
            subs.append("dpp")
        if mn.startswith(("v_mov_", "v_movrel")) and not is_dpp:  # v_movrel*: a move at an m0 register index
            subs.append("v_mov")
        if mn.startswith(("v_readlane", "v_readfirstlane")):
            subs.append("readlane")
        if mn.startswith("v_permlane16_swap"):
            subs.append("permlane16_swap")
        if mn.startswith("v_permlane32_swap"):
            subs.append("permlane32_swap")
        if mn.startswith(("v_pk_", "v_pack_")):
            subs.append("pack_ops")
        return "valu", tuple(subs)
    if mn.startswith("s_"):
        if mn.startswith(("s_waitcnt", "s_wait_")):
            return "s_waitcnt", ()
        if mn in ("s_barrier", "s_barrier_signal", "s_barrier_wait"):
            return "s_barrier", ()
        if mn == "s_nop":
            return "s_nop", ()
        if mn.startswith(_SMEM_PREFIXES) or mn in ("s_memtime", "s_memrealtime"):
            return "smem", ()
        return "salu", (("s_delay_alu",) if mn == "s_delay_alu" else ())
    if mn.startswith("ds_"):
        if mn.startswith("ds_bpermute"):
            return "ds_bpermute", ()
        if mn.startswith("ds_permute"):
            return "ds_permute", ()
        if mn.startswith("ds_swizzle"):
            return "ds_swizzle", ()
        if mn.startswith(("ds_write", "ds_store")):
            return "lds_write", ()
        if mn.startswith(("ds_read", "ds_load")):
            return ("lds_read_tr", ()) if "_tr" in mn else ("lds_read", ())
        return "other", ()
    if mn.startswith(("buffer_", "tbuffer_", "global_", "flat_", "scratch_")):
        return "vmem", ()
    return "other", ()


def _mnemonics(line: str) -> list[str]:
    """The instruction mnemonics of an ISA line: none (a label, directive or comment), one, or the two
    halves of a VOPD line as the ``v_*`` instructions they stand for."""
    mn = _mnemonic(line)
    if mn is None or not mn.startswith("v_dual_"):
        return [] if mn is None else [mn]
    code = line.split(";", 1)[0].split("//", 1)[0]
    return ["v_" + part.split()[0][len("v_dual_"):] for part in code.split("::") if part.strip()]


def isa_counts(isa_text: str, region: str | None = None) -> dict[str, int]:
    """Count the instructions of ``isa_text`` (or of one marked region) by category.

    Returns a dict with every key of :data:`COUNT_KEYS` (``total``, the classes, the
    ``valu`` sub-counts; see the module docstring for the rules).  ``region`` names the
    tag of a ``; linlayout-begin <tag>`` / ``; linlayout-end <tag>`` pair; None counts
    every instruction in the text (all kernels, no metadata).
    """
    lines = _code_lines(isa_text) if region is None else region_lines(isa_text, region)
    counts = dict.fromkeys(COUNT_KEYS, 0)
    for ln in lines:
        for mn in _mnemonics(ln):
            cls, subs = classify(mn)
            counts["total"] += 1
            counts[cls] += 1
            for s in subs:
                counts[s] += 1
    return counts


def marker_ops(region: str, which: str) -> list[str]:
    """MLIR lines that open (``which="begin"``) or close (``"end"``) a counted region.

    An inline-asm comment ``; linlayout-<which> <region>`` between two
    ``rocdl.sched.barrier none``; all three emit no instruction.
    """
    if which not in ("begin", "end"):
        raise ValueError(f"which must be 'begin' or 'end', got {which!r}")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", region):
        raise ValueError(f"region tag {region!r} must match [A-Za-z0-9_.-]+")
    return [
        "rocdl.sched.barrier none",
        f'llvm.inline_asm has_side_effects "; linlayout-{which} {region}", "" : () -> ()',
        "rocdl.sched.barrier none",
    ]
