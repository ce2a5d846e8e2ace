"""Conversion plans: the plan of steps, its certificate, instruction counts, pseudo-assembly.

State model (docs/contract.md section 4).  Every lane ``l`` of every warp ``w``
holds numbered *slots*; at the start slot ``r`` holds the element
``src(register=r, lane=l, warp=w)``.  At the end slot ``r`` must hold
``dst(register=r, lane=l, warp=w)`` for every ``r < slots_out``.

The steps, one class per kind with its element-level semantics, its ISA parameters and its
certificate items, live in linlayout.synth.steps (which also tells how slots sit in 32-bit
VGPRs); they are re-exported here.  Every register step is ONE hardware instruction (two for
64-bit elements, one per dword half) and lists whole dwords, in order, in its slot lists.
The certificate is the element-level view; a fused instruction (a ``v_cndmask_b32_dpp``, a
``ds_read2``, a transpose load) is written as several items, the later ones ``fused`` to the
first, and is counted once.
"""

from __future__ import annotations

import json
import operator
from dataclasses import dataclass, field, fields

import numpy as np

from linlayout import LayoutError, LinearLayout
from linlayout.hw.targets import get_target
from linlayout.lane_map import lane_map_pattern

from .steps import (Barrier, FusedDpp, Lane, LdsLoad, LdsStore, Mov, PermlaneSwap, PermSelect, Select, Step,
                    dwords_per_slot, prmt_selector, slots_per_dword, step_from_json, transpose_element_addresses)

__all__ = [
    "CERT_SLOT_LIMIT", "ELEMENT_BITS",
    "Barrier", "CERT_FORMAT", "CERT_FORMAT_ONE_COPY", "CERT_FORMAT_UNPACKED", "CERT_FORMAT_UNPACKED_ONE_COPY",
    "cert_format", "COUNT_KINDS", "PTX_COUNT_KINDS", "RDNA_COUNT_KINDS", "count_kinds", "FusedDpp", "Lane", "LdsLoad",
    "LdsStore", "Mov",
    "PermSelect", "PermlaneSwap", "Plan", "Select", "Step", "dwords_per_slot", "packed_src", "prmt_selector",
    "packed_dst", "slots_per_dword", "step_from_json", "unpacked_dst", "unpacked_src",
    "transpose_element_addresses",
]

CERT_FORMAT = "linlayout-plan/v1"
#: The format of a certificate with a side held one element per VGPR (``src_unpacked`` / ``dst_unpacked``):
#: its start or end state means less than v1's (slots above an element hold nothing / are not checked), so
#: a v1 reader refuses it by name rather than checking slots the plan never fills (docs/contract.md section 4).
CERT_FORMAT_UNPACKED = "linlayout-plan/v1-unpacked"
#: The format of a certificate whose dst is read in one copy (``dst_one_copy``): its end state is the dst's
#: elements in the canonical lanes only (linlayout.synth.one_copy), so a v1 reader refuses it by name; with a
#: side held one element per VGPR too, ``CERT_FORMAT_UNPACKED_ONE_COPY``.
CERT_FORMAT_ONE_COPY = "linlayout-plan/v1-one-copy"
CERT_FORMAT_UNPACKED_ONE_COPY = "linlayout-plan/v1-unpacked-one-copy"
#: The element sizes (bits) a plan moves: one, two or four per 32-bit register, or one per register pair.
ELEMENT_BITS = (8, 16, 32, 64)
#: The slot numbers a certificate may name: ``0 <= slot < CERT_SLOT_LIMIT``.  Plans number fresh
#: temporaries sparsely (a planned wave32 fp32 case names slots needing 1.5x the register file), so
#: the bound is not the target's registers; it keeps a run's register array (every slot up to the
#: largest named, ``linlayout.synth.emulator``) within memory.
CERT_SLOT_LIMIT = 1 << 16

# Instruction kinds counted in ``Plan.counts()`` (the names of docs/contract.md's isa_counts).
COUNT_KINDS = ("v_cndmask", "v_perm_b32", "v_mov", "dpp", "ds_bpermute", "ds_swizzle", "readlane",
               "permlane16_swap", "permlane32_swap", "lds_write", "lds_read", "lds_read_tr", "s_barrier")
# The kinds of an NVIDIA plan (PTX: selp, prmt, mov.b32, shfl.sync, movmatrix, st/ld.shared, ldmatrix, stmatrix,
# bar.sync, bar.warp.sync);
# its steps' ``s_barrier`` is counted as ``bar.sync``.
PTX_COUNT_KINDS = ("selp", "prmt", "mov", "shfl", "movmatrix", "lds_write", "lds_read", "ldmatrix", "stmatrix",
                   "bar.sync", "bar.warp.sync")
_PTX_COUNT_NAMES = {"s_barrier": "bar.sync"}
# The kinds of an RDNA (wave32) plan: COUNT_KINDS and v_permlane16/x16 (``permlane16``).
RDNA_COUNT_KINDS = COUNT_KINDS + ("permlane16",)


def count_kinds(arch: str) -> tuple[str, ...]:
    """The instruction kinds ``Plan.counts`` reports for a plan of ``arch``'s family."""
    family = get_target(arch).family
    return PTX_COUNT_KINDS if family == "nvidia" else (RDNA_COUNT_KINDS if family == "rdna" else COUNT_KINDS)


def unpacked_src(layout: LinearLayout, element_bits: int) -> LinearLayout:
    """``layout`` held one element per 32-bit VGPR: its register bases after ``log2(32 / element_bits)``
    zero ones (8- and 16-bit elements), so that slot ``r * 32 / element_bits`` -- the low bits of
    VGPR ``r`` -- holds ``layout``'s register ``r``; the slots above it name the same element, which
    a kernel loading one element per VGPR does not hold there (``Plan.src_unpacked``)."""
    return _one_per_vgpr(layout, element_bits, "src")


def unpacked_dst(layout: LinearLayout, element_bits: int) -> LinearLayout:
    """The dst side's :func:`unpacked_src`: slot ``r * 32 / element_bits`` holds ``layout``'s register
    ``r``, and the slots above it, which name the same element, are not read (``Plan.dst_unpacked``)."""
    return _one_per_vgpr(layout, element_bits, "dst")


def _one_per_vgpr(layout: LinearLayout, element_bits: int, side: str) -> LinearLayout:
    """:func:`unpacked_src` / :func:`unpacked_dst` (``side`` names the side in the error)."""
    if element_bits not in (8, 16):
        raise LayoutError(f"a {side} held one element per VGPR needs 8- or 16-bit elements, "
                          f"not {element_bits}-bit ones")
    obj = layout.to_json()
    zeros = [[0] * len(obj["out_dims"])] * (slots_per_dword(element_bits).bit_length() - 1)
    obj["bases"]["register"] = zeros + obj["bases"]["register"]
    obj["in_dims"] = [[name, size * slots_per_dword(element_bits)] if name == "register" else [name, size]
                      for name, size in obj["in_dims"]]
    return LinearLayout.from_json(obj)


def packed_src(layout: LinearLayout, element_bits: int) -> LinearLayout:
    """The inverse of :func:`unpacked_src` (and of :func:`unpacked_dst`): ``layout`` less its leading zero
    register bases."""
    n = slots_per_dword(element_bits).bit_length() - 1
    obj = layout.to_json()
    obj["bases"]["register"] = obj["bases"]["register"][n:]
    obj["in_dims"] = [[name, size >> n] if name == "register" else [name, size] for name, size in obj["in_dims"]]
    return LinearLayout.from_json(obj)


#: the inverse of :func:`unpacked_dst` (:func:`packed_src`: the same leading zero register bases dropped)
packed_dst = packed_src


def _unpacked_key(key: str, value, layout: LinearLayout, element_bits: int) -> bool:
    """A certificate's ``src_unpacked`` / ``dst_unpacked`` (``key``): a bool, True only where ``layout``
    (that side) is an :func:`unpacked_src` / :func:`unpacked_dst`."""
    if not isinstance(value, bool):
        raise LayoutError(f"plan certificate has {key} {value!r}; it must be true or false")
    n = slots_per_dword(element_bits).bit_length() - 1
    regs = layout.bases.get("register", []) if layout.has_in_dim("register") else []
    if value and (element_bits not in (8, 16) or len(regs) < n or any(any(b) for b in regs[:n])):
        raise LayoutError(f"plan certificate has {key} true but its {key[:3]}'s first register bases are not "
                          "zero ones of 8- or 16-bit elements")
    return value


def cert_format(unpacked: bool, one_copy: bool) -> str:
    """The format name of a certificate with a side held one element per VGPR (``unpacked``) and / or a
    dst read in one copy (``one_copy``): each narrows the end state (or start state) v1 checks."""
    return {(False, False): CERT_FORMAT, (True, False): CERT_FORMAT_UNPACKED,
            (False, True): CERT_FORMAT_ONE_COPY, (True, True): CERT_FORMAT_UNPACKED_ONE_COPY}[(unpacked, one_copy)]


def _one_copy_key(value, dst: LinearLayout) -> bool:
    """A certificate's ``dst_one_copy``: a bool, True only where ``dst`` has a zero lane basis (a copy bit,
    linlayout.synth.one_copy)."""
    if not isinstance(value, bool):
        raise LayoutError(f"plan certificate has dst_one_copy {value!r}; it must be true or false")
    if value and not any(not any(column) for column in dst.bases.get("lane", [])):
        raise LayoutError("plan certificate has dst_one_copy true but its dst has no zero lane basis "
                          "(no element in several lanes)")
    return value


def _check_lane_tables(steps: list[Step], wave_size: int, num_warps: int) -> None:
    """Every per-lane table of ``steps`` (their numpy array fields, and those of their dict fields: an
    ``isa``'s) is ``[wave_size]`` or ``[num_warps][wave_size]``, and every per-warp table (``Step.warp_tables``)
    has ``num_warps`` entries, else ``LayoutError`` naming the step and the field."""
    shapes = ((wave_size,), (num_warps, wave_size))
    for k, st in enumerate(steps):
        for name in st.warp_tables:
            if len(getattr(st, name)) != num_warps:
                raise LayoutError(f"plan step {k} ({st.op}): {name} has {len(getattr(st, name))} entries; a "
                                  f"per-warp table has one per warp ({num_warps})")
        for f in fields(st):
            value = getattr(st, f.name)
            named = value.items() if isinstance(value, dict) else [("", value)]  # a dict: an isa's tables
            for key, table in named:
                if isinstance(table, np.ndarray) and table.shape not in shapes:
                    name = f"{f.name}.{key}" if key else f.name
                    raise LayoutError(f"plan step {k} ({st.op}): {name} has shape {list(table.shape)}; a per-lane "
                                      f"table is [{wave_size}] or [{num_warps}][{wave_size}]")


@dataclass
class Plan:
    """A conversion plan for one workgroup: steps, cost, lower bound and instruction counts.

    ``strategy`` names how it was built (``noop``, ``registers``, ``lanes``,
    ``lds``); ``cost`` is the cost-model value under ``objective`` (linlayout.synth.cost); ``lower_bound`` the
    analytic bounds; ``overhead`` the estimated setup instructions the steps
    need (addresses, VCC masks, selectors, waits) that are not steps themselves.
    """

    arch: str
    wave_size: int
    num_warps: int
    element_bits: int
    src: LinearLayout
    dst: LinearLayout
    slots_in: int
    slots_out: int
    steps: list[Step]
    strategy: str = ""
    cost: float = 0.0
    lower_bound: dict = field(default_factory=dict)
    overhead: dict = field(default_factory=dict)
    lds_bytes: int = 0
    verified: bool = False
    notes: list[str] = field(default_factory=list)
    cost_detail: dict = field(default_factory=dict)
    objective: str = ""
    #: the src held one element per VGPR (``unpacked_src``): src's first ``log2(32 / element_bits)``
    #: register bases are zero, and the kernel holds VGPR ``r``'s element in its low bits, the bits
    #: above it zero (zero-extending per-element loads); the plan reads no byte above an element
    src_unpacked: bool = False
    #: the dst held one element per VGPR (``unpacked_dst``): dst's first ``log2(32 / element_bits)``
    #: register bases are zero, and the plan leaves VGPR ``r``'s element in its low bits; the bits above
    #: it are don't-care (the kernel stores each element alone, ``global_store_byte`` / ``_short``)
    dst_unpacked: bool = False
    #: only one copy of each repeated dst element is read (``dst_one_copy``): the plan leaves ``dst``'s
    #: elements in the canonical lanes (linlayout.synth.one_copy.canonical_lanes: a dst lane whose zero lane
    #: bases' bits are all clear); the other lanes' dst slots are don't-care (the kernel stores from the
    #: canonical lanes alone)
    dst_one_copy: bool = False
    #: the kernel is one wave and declares it, so that LLVM bounds the thread id by the wave size: the setup estimates
    #: count the one-wave programs (linlayout.synth.lane_arith, "One wave"); None (made): ``num_warps == 1``, as in
    #: linlayout's kernels; False with one warp where the kernel runs more waves or declares no threads
    #: (plan_conversion's ``one_wave``); in a certificate only then (``"one_wave": false``)
    one_wave: bool | None = None
    # (arch, element bits, the steps, their counts) of the last count (``counts``)
    _counted: tuple = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.one_wave is None:
            self.one_wave = self.num_warps == 1

    # ------------------------------------------------------------ counts
    def counts(self) -> dict[str, int]:
        """Instructions of one wave by kind (``total`` = their sum); 64-bit register steps count twice.
        The kinds are ``count_kinds(arch)``: ``COUNT_KINDS``, ``RDNA_COUNT_KINDS`` or ``PTX_COUNT_KINDS``.

        Ranking and pricing ask several times, so the count is kept with the steps it was made of:
        a list whose steps are those very objects, in order (steps are frozen dataclasses: never changed once made), with
        the same target and element size, has that count."""
        return dict(self._kept_counts())

    def _kept_counts(self) -> dict[str, int]:
        """``counts``, kept (the caller does not change it)."""
        kept = self._counted
        if (kept and kept[:2] == (self.arch, self.element_bits) and len(kept[2]) == len(self.steps)
                and all(map(operator.is_, kept[2], self.steps))):
            return kept[3]
        out = self._count()
        self._counted = (self.arch, self.element_bits, tuple(self.steps), out)
        return out

    def _count(self) -> dict[str, int]:
        """``counts``, counted."""
        mult = dwords_per_slot(self.element_bits)
        kinds = count_kinds(self.arch)
        ptx = get_target(self.arch).family == "nvidia"  # count_kinds gave PTX_COUNT_KINDS
        out = {k: 0 for k in kinds}
        for s in self.steps:
            m = mult if mult > 1 and s.register_step() else 1
            for k, v in s.counts().items():
                k = _PTX_COUNT_NAMES.get(k, k) if ptx else k
                out[k] = out.get(k, 0) + v * m
        out["total"] = sum(out[k] for k in kinds)
        return out

    def packed_sides(self) -> tuple[LinearLayout, LinearLayout]:
        """``(src, dst)`` with a side held one element per VGPR (``src_unpacked`` / ``dst_unpacked``) as the
        same elements packed (``packed_src`` / ``packed_dst``): the layouts the plan converts between."""
        return (packed_src(self.src, self.element_bits) if self.src_unpacked else self.src,
                packed_dst(self.dst, self.element_bits) if self.dst_unpacked else self.dst)

    def lane_bytes(self) -> tuple[int, int]:
        """The bytes of the tile one lane holds in src and in dst (``slots * element_bits / 8``; a src held
        one element per VGPR, ``src_unpacked`` / ``dst_unpacked``, counted once per VGPR: its elements, not
        its slots)."""
        p = slots_per_dword(self.element_bits)
        return tuple((slots // p if unpacked else slots) * self.element_bits // 8
                     for slots, unpacked in ((self.slots_in, self.src_unpacked), (self.slots_out, self.dst_unpacked)))

    def total_with_overhead(self) -> int:
        return self._kept_counts()["total"] + sum(map(int, self.overhead.values()))

    # ------------------------------------------------------------ certificate
    def to_certificate(self, raw: bool = False) -> dict:
        """The plan certificate (docs/contract.md section 4), with extra keys for cost and ISA parameters.

        ``raw``: per-lane tables stay numpy arrays (not JSON-serializable; for in-process checks)."""
        steps: list[dict] = []
        for s in self.steps:
            steps.extend(s.to_cert(raw))
        return {
            "format": cert_format(self.src_unpacked or self.dst_unpacked, self.dst_one_copy),
            "arch": self.arch, "wave_size": self.wave_size, "num_warps": self.num_warps,
            "element_bits": self.element_bits, "src": self.src.to_json(), "dst": self.dst.to_json(),
            "slots_in": self.slots_in, "slots_out": self.slots_out, "steps": steps,
            "strategy": self.strategy, "cost": self.cost, "lower_bound": self.lower_bound,
            "plan_counts": self.counts(), "overhead_estimate": self.overhead, "lds_bytes": self.lds_bytes,
            "objective": self.objective, **({"src_unpacked": True} if self.src_unpacked else {}),
            **({"dst_unpacked": True} if self.dst_unpacked else {}),
            **({"dst_one_copy": True} if self.dst_one_copy else {}),
            **({"one_wave": False} if self.num_warps == 1 and not self.one_wave else {}),
        }

    def dumps(self) -> str:
        return json.dumps(self.to_certificate())

    @classmethod
    def from_certificate(cls, obj: dict) -> "Plan":
        """Read a certificate back (steps with ISA parameters when present).  LayoutError for anything but
        a certificate: a missing key, a malformed value, a ``num_warps`` other than src's and dst's warp
        count (2**warp bits; 1 without a warp dim), a ``slots_in`` other than src's register count, a
        ``lower_bound`` or ``overhead_estimate`` that does not map names to numbers, a ``wave_size``
        other than the target's, an element size plans do not move, a slot number outside ``[0,
        CERT_SLOT_LIMIT)``, a per-lane table of another shape than ``[wave_size]`` or
        ``[num_warps][wave_size]``, ``lds_bytes`` beyond the target's LDS, a ``one_wave`` other than false with one
        warp (absent: ``num_warps == 1``), a ``fused`` item that is not
        the later part of the instruction the items before it start, named by that instruction
        (``step_from_json``), a two-address LDS access on a target without one, or a step the plan
        cannot hold (``Step.plan_error``: an LDS address that is not a multiple of its access's
        alignment, ``linlayout.hw.lds.access_alignment``, or outside ``lds_bytes``; a transpose load the
        target lacks, ``missing_transpose_load``'s line; an instruction of another target; an access
        listing other than the elements it moves; a byte permute naming other registers than
        those of its slots)."""
        formats = (CERT_FORMAT, CERT_FORMAT_UNPACKED, CERT_FORMAT_ONE_COPY, CERT_FORMAT_UNPACKED_ONE_COPY)
        if not isinstance(obj, dict) or obj.get("format") not in formats:
            raise LayoutError(f"not a plan certificate (format must be one of {', '.join(map(repr, formats))})")

        try:
            items = obj["steps"]
            steps, starts, i = [], [], 0
            while i < len(items):
                starts.append(i)
                s, i = step_from_json(items, i)
                steps.append(s)
            src, dst, num_warps = LinearLayout.from_json(obj["src"]), LinearLayout.from_json(obj["dst"]), \
                int(obj["num_warps"])
            for side, lay in (("src", src), ("dst", dst)):
                warps = lay.in_dim_size("warp") if lay.has_in_dim("warp") else 1
                if warps != num_warps:
                    raise LayoutError(f"plan certificate has num_warps {num_warps} but its {side} has {warps} warps")
            element_bits = int(obj["element_bits"])
            if element_bits not in ELEMENT_BITS:
                raise LayoutError(f"plan certificate has element_bits {element_bits}; plans move elements of "
                                  f"{', '.join(map(str, ELEMENT_BITS))} bits")
            slots_in, slots_out = int(obj["slots_in"]), int(obj["slots_out"])
            for key, n in (("slots_in", slots_in), ("slots_out", slots_out)):
                if not 1 <= n <= CERT_SLOT_LIMIT:
                    raise LayoutError(f"plan certificate has {key} {n}; it must be 1 to {CERT_SLOT_LIMIT}")
            registers = src.in_dim_size("register") if src.has_in_dim("register") else 1
            if slots_in != registers:
                raise LayoutError(f"plan certificate has slots_in {slots_in} but its src has {registers} registers")
            for key in ("lower_bound", "overhead_estimate"):
                value = obj.get(key, {})
                if not isinstance(value, dict) or not all(isinstance(v, (int, float)) for v in value.values()):
                    raise LayoutError(f"plan certificate has {key} {value!r}; it must map names to numbers")
            named = [s for st in steps for s in st.named_slots()]
            if named and (min(named) < 0 or max(named) >= CERT_SLOT_LIMIT):
                bad = min(named) if min(named) < 0 else max(named)
                raise LayoutError(f"plan certificate names slot {bad}; slots are 0 to {CERT_SLOT_LIMIT - 1}")
            wave_size, lds_bytes = int(obj["wave_size"]), int(obj.get("lds_bytes", 0))
            target = get_target(obj["arch"])
            if wave_size != target.wave_size:
                raise LayoutError(f"plan certificate has wave_size {wave_size}; {target.name} runs waves of "
                                  f"{target.wave_size} lanes")
            _check_lane_tables(steps, wave_size, num_warps)
            paired = next((k for k, st in zip(starts, steps) if isinstance(st, (LdsStore, LdsLoad))
                           and st.pair is not None), None)
            if paired is not None and not target.has_lds_pair:
                raise LayoutError(f"plan step {paired + 1} ({items[paired]['op']}) has 'fused': "
                                  f"{items[paired + 1]['fused']!r} but {target.name} has no two-address LDS access")
            target_lds_bytes = target.lds_bytes
            if not 0 <= lds_bytes <= target_lds_bytes:
                raise LayoutError(f"plan certificate has lds_bytes {lds_bytes}; {obj['arch']} has 0 to "
                                  f"{target_lds_bytes}")
            for k, st in zip(starts, steps):
                error = st.plan_error(target, element_bits, lds_bytes)
                if error:
                    raise LayoutError(f"plan step {k} ({items[k]['op']}): {error}")
            src_unpacked = _unpacked_key("src_unpacked", obj.get("src_unpacked", False), src, element_bits)
            dst_unpacked = _unpacked_key("dst_unpacked", obj.get("dst_unpacked", False), dst, element_bits)
            dst_one_copy = _one_copy_key(obj.get("dst_one_copy", False), dst)
            one_wave = obj.get("one_wave", num_warps == 1)
            if one_wave is not (num_warps == 1) and one_wave is not False:
                raise LayoutError(f"plan certificate has one_wave {one_wave!r}: only false, and only with one warp "
                                  f"(a kernel of one-warp layouts that runs more waves)")
            flagged = [key for key, on in (("src_unpacked", src_unpacked), ("dst_unpacked", dst_unpacked),
                                           ("dst_one_copy", dst_one_copy)) if on]
            expected_format = cert_format(src_unpacked or dst_unpacked, dst_one_copy)
            if obj["format"] != expected_format:
                raise LayoutError(f"plan certificate of format {obj['format']!r} "
                                  + (f"has {' and '.join(flagged)} true" if flagged else
                                     "has none of src_unpacked, dst_unpacked, dst_one_copy true")
                                  + f"; that is format {expected_format!r}")
            return cls(arch=obj["arch"], wave_size=wave_size, num_warps=num_warps,
                       element_bits=element_bits, src=src, dst=dst, slots_in=slots_in, slots_out=slots_out,
                       steps=steps, strategy=obj.get("strategy", ""),
                       cost=float(obj.get("cost", 0.0)), lower_bound=obj.get("lower_bound", {}),
                       overhead=obj.get("overhead_estimate", {}), lds_bytes=lds_bytes,
                       objective=str(obj.get("objective", "")), src_unpacked=src_unpacked, dst_unpacked=dst_unpacked,
                       dst_one_copy=dst_one_copy, one_wave=one_wave)
        except KeyError as e:
            raise LayoutError(f"plan certificate lacks the key {e.args[0]!r}") from None
        except LayoutError:
            raise
        except (TypeError, ValueError) as e:  # a number that is not one, a list where a value belongs
            raise LayoutError(f"plan certificate has a malformed value: {e}") from None

    # ------------------------------------------------------------ text
    def pseudo_asm(self) -> str:
        """The plan as readable pseudo-assembly for one wave, one instruction per line, in its target's
        instruction names (``ds_write``/``s_barrier`` on AMD, ``st.shared``/``bar.sync`` on NVIDIA)."""
        p = slots_per_dword(self.element_bits)
        lines = [f"; {self.strategy} plan, {self.arch}, {self.element_bits}-bit elements, "
                 f"{self.slots_in} -> {self.slots_out} slots per lane, {self.num_warps} warps"]
        if dwords_per_slot(self.element_bits) == 2:
            lines.append("; 64-bit elements: every register instruction below runs once per dword half")
        target = get_target(self.arch)
        for s in self.steps:
            lines.append("  " + s.asm(p, target))
        return "\n".join(lines)

    def summary(self) -> str:
        c = self.counts()
        kinds = ", ".join(f"{k} {v}" for k, v in c.items() if v and k != "total")
        lb = self.lower_bound
        lines = [
            f"strategy: {self.strategy}   verified: {self.verified}",
            f"instructions: {c['total']} ({kinds or 'none'})",
            f"estimated setup instructions: {sum(self.overhead.values())} {self.overhead}",
            f"cost ({self.objective or 'unknown'} objective): {self.cost:g}   lower bound: {lb.get('cost', 0):g}",
        ]
        if lb:
            lines.append("lower bound detail: " + ", ".join(f"{k}={v}" for k, v in lb.items() if k != "cost"))
        if self.lds_bytes:
            lines.append(f"LDS bytes: {self.lds_bytes}")
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)
