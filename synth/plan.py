"""Conversion plans: instruction steps on per-lane slots, the plan certificate, pseudo-assembly.

State model (CONTRACT.md section 4).  Every lane ``l`` of every warp ``w``
holds numbered *slots*; at the start slot ``r`` holds the element
``src(register=r, lane=l, warp=w)``.  At the end slot ``r`` must hold
``dst(register=r, lane=l, warp=w)`` for every ``r < slots_out``.

Slots and registers.  With ``b``-bit elements, ``p = max(1, 32 // b)``
consecutive slots share one 32-bit VGPR (*dword*): slot ``s`` is element
``s % p`` of dword ``s // p`` (little endian: bytes ``(s % p) * b/8 ..``).
A 64-bit slot spans the two dwords ``2s, 2s+1``.  Every register step below
is ONE hardware instruction (two for 64-bit elements, one per dword half)
and lists whole dwords, in order, in its slot lists.

Each step keeps the ISA parameters needed to lower it to that instruction
(DPP control and masks, ds_swizzle offset, ds_bpermute byte addresses,
v_perm selector, VCC mask, LDS byte addresses and width).  The certificate is
the element-level view; a fused DPP instruction (``v_cndmask_b32_dpp`` or a
row/bank-masked ``v_mov_b32_dpp``) is written as a ``lane`` step followed by
a ``select`` step carrying ``"fused": <instruction>`` -- the pair is one
instruction and is counted once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Sequence

import numpy as np

from linlayout import LayoutError, LinearLayout
from linlayout.lane_map import lane_map_pattern

__all__ = [
    "Barrier", "CERT_FORMAT", "COUNT_KINDS", "FusedDpp", "Lane", "LdsLoad", "LdsStore", "Mov",
    "PermSelect", "PermlaneSwap", "Plan", "Select", "Step", "dwords_per_slot", "slots_per_dword", "step_from_json",
    "transpose_element_addresses", "transpose_name",
]

CERT_FORMAT = "linlayout-plan/v1"

# Instruction kinds counted in ``Plan.counts()`` (the names of CONTRACT.md's isa_counts).
COUNT_KINDS = ("v_cndmask", "v_perm_b32", "v_mov", "dpp", "ds_bpermute", "ds_swizzle", "readlane",
               "permlane16_swap", "permlane32_swap", "lds_write", "lds_read", "lds_read_tr", "s_barrier")


def slots_per_dword(element_bits: int) -> int:
    """Elements packed in one 32-bit VGPR (1 for 32- and 64-bit elements)."""
    return max(1, 32 // element_bits)


def dwords_per_slot(element_bits: int) -> int:
    """32-bit VGPRs one element occupies (2 for 64-bit elements, else 1)."""
    return 2 if element_bits == 64 else 1


def _ints(xs: Iterable) -> list[int]:
    return [int(x) for x in xs]


def _lane_table(t: Any, what: str) -> np.ndarray:
    """A per-lane table (``[64]`` or ``[warps][64]``) as an int64 array."""
    try:
        a = np.asarray(t, dtype=np.int64)
    except (TypeError, ValueError):
        raise LayoutError(f"{what} must be a list of integers per lane") from None
    if a.ndim not in (1, 2):
        raise LayoutError(f"{what} must be one list per wave or one list per warp")
    return a


def _tab(raw: bool, a: Any) -> Any:
    """A per-lane table for a certificate: a list, or the numpy array when ``raw``."""
    return np.asarray(a) if raw else np.asarray(a).tolist()


def _vregs(slots: Sequence[int], p: int) -> str:
    """Pseudo-asm name of the VGPRs holding ``slots`` (whole dwords)."""
    if not slots:
        return "-"
    d = sorted({s // p for s in slots})
    if len(d) == 1:
        return f"v{d[0]}"
    if d == list(range(d[0], d[-1] + 1)):
        return f"v[{d[0]}:{d[-1]}]"
    return "v{" + ",".join(str(x) for x in d) + "}"


@dataclass
class Step:
    """One instruction (or a free renaming).  Subclasses define ``op``."""

    op = ""

    def to_cert(self, raw: bool = False) -> list[dict]:
        """Element-level certificate steps (one, or two for a fused instruction); ``raw`` keeps
        per-lane tables as numpy arrays (for in-process checking)."""
        raise NotImplementedError

    def counts(self) -> dict[str, int]:
        """Instructions by kind, per dword (64-bit elements double register steps later)."""
        return {}

    def asm(self, p: int) -> str:
        raise NotImplementedError

    def register_step(self) -> bool:
        """True for VGPR-to-VGPR steps whose count doubles for 64-bit elements."""
        return True


@dataclass
class Mov(Step):
    """Per-lane copy ``dst[i] = src[i]``: a free renaming, a ``v_mov_b32``, or a ``v_perm_b32``.

    ``v_perm_b32 D, S0, S1, sel``: byte ``i`` of D is byte ``sel.byte[i]`` of the
    64-bit value ``{S0, S1}`` (0..3 = S1, 4..7 = S0, 12 = 0x00).  ``operands`` are
    the dword indices ``(S0, S1)`` and ``selector`` the 32-bit selector (uniform).
    Slots of the destination dword that are not listed are don't-care.
    """

    dst: list[int]
    src: list[int]
    kind: str = "rename"  # rename | v_mov | v_perm_b32
    operands: tuple[int, int] | None = None
    selector: int | None = None
    dst_dword: int | None = None
    op = "mov"

    def to_cert(self, raw: bool = False) -> list[dict]:
        d = {"op": "mov", "dst": _ints(self.dst), "src": _ints(self.src)}
        if self.kind != "rename":
            d["kind"] = self.kind
        if self.kind == "v_perm_b32":
            d["isa"] = {"s0": int(self.operands[0]), "s1": int(self.operands[1]),
                        "selector": int(self.selector), "vdst": int(self.dst_dword)}
        return [d]

    def counts(self) -> dict[str, int]:
        if self.kind == "rename":
            return {}
        return {self.kind: 1}

    def asm(self, p: int) -> str:
        if self.kind == "rename":
            pairs = ", ".join(f"{d}<-{s}" for d, s in zip(self.dst, self.src))
            return f"; rename slots {pairs}"
        if self.kind == "v_mov":
            return f"v_mov_b32 {_vregs(self.dst, p)}, {_vregs(self.src, p)}"
        return (f"v_perm_b32 v{self.dst_dword}, v{self.operands[0]}, v{self.operands[1]}, "
                f"0x{self.selector:08x}")


@dataclass
class Select(Step):
    """``v_cndmask_b32``: per lane ``dst = b if cond[l] else a`` (VCC = cond; S0 = a, S1 = b)."""

    dst: list[int]
    a: list[int]
    b: list[int]
    cond: np.ndarray
    op = "select"

    def to_cert(self, raw: bool = False) -> list[dict]:
        return [{"op": "select", "dst": _ints(self.dst), "a": _ints(self.a), "b": _ints(self.b),
                 "cond": _tab(raw, self.cond)}]

    def counts(self) -> dict[str, int]:
        return {"v_cndmask": 1}

    def asm(self, p: int) -> str:
        return (f"v_cndmask_b32 {_vregs(self.dst, p)}, {_vregs(self.a, p)}, {_vregs(self.b, p)}, "
                f"{_mask_name(self.cond)}")


@dataclass
class PermSelect(Step):
    """``v_perm_b32`` with a lane-dependent selector (a VGPR holding ``sel1`` where ``cond``, else ``sel0``).

    Element level it is a select: slot ``dst[i]`` gets ``b[i]`` where ``cond[l]``,
    else ``a[i]`` (the slots each selector copies).  Certificate: a ``select`` step
    with ``"fused": "v_perm_b32"``.
    """

    dst: list[int]
    a: list[int]
    b: list[int]
    cond: np.ndarray
    operands: tuple[int, int]
    sel0: int
    sel1: int
    dst_dword: int
    op = "permsel"

    def to_cert(self, raw: bool = False) -> list[dict]:
        return [{"op": "select", "dst": _ints(self.dst), "a": _ints(self.a), "b": _ints(self.b),
                 "cond": _tab(raw, self.cond), "fused": "v_perm_b32",
                 "isa": {"s0": int(self.operands[0]), "s1": int(self.operands[1]), "sel0": int(self.sel0),
                         "sel1": int(self.sel1), "vdst": int(self.dst_dword)}}]

    def counts(self) -> dict[str, int]:
        return {"v_perm_b32": 1}

    def asm(self, p: int) -> str:
        return (f"v_perm_b32 v{self.dst_dword}, v{self.operands[0]}, v{self.operands[1]}, "
                f"v_sel[0x{self.sel0:08x} / 0x{self.sel1:08x} on {_mask_name(self.cond)}]")


def _mask_name(cond: np.ndarray) -> str:
    c = np.asarray(cond).reshape(-1, np.asarray(cond).shape[-1])[0]
    v = int(sum(int(x) << i for i, x in enumerate(c)))
    return f"s[0x{v:016x}]"


@dataclass
class Lane(Step):
    """A lane permutation: lane ``l`` receives ``src`` of lane ``src_lane[l]`` (-1: undefined).

    ``kind``: ``ds_bpermute``, ``dpp:<control>``, ``ds_swizzle:<offset>`` (CONTRACT naming).
    ``isa``: the instruction's parameters -- DPP: ``ctrl``, ``row_mask``,
    ``bank_mask``, ``bound_ctrl``; ds_swizzle: ``offset``; ds_bpermute: ``addr``
    (per-lane byte address VGPR, ``[64]`` or ``[warps][64]``) and ``offset``.
    """

    kind: str
    dst: list[int]
    src: list[int]
    src_lane: np.ndarray
    isa: dict = field(default_factory=dict)
    op = "lane"

    def to_cert(self, raw: bool = False) -> list[dict]:
        isa = {k: (_tab(raw, v) if isinstance(v, np.ndarray) else v) for k, v in self.isa.items()}
        return [{"op": "lane", "kind": self.kind, "dst": _ints(self.dst), "src": _ints(self.src),
                 "src_lane": _tab(raw, self.src_lane), "isa": isa}]

    def counts(self) -> dict[str, int]:
        return {_lane_kind_family(self.kind): 1}

    def asm(self, p: int) -> str:
        fam = _lane_kind_family(self.kind)
        if fam == "dpp":
            return f"v_mov_b32_dpp {_vregs(self.dst, p)}, {_vregs(self.src, p)} {_dpp_suffix(self.kind, self.isa)}"
        if fam == "ds_swizzle":
            return f"ds_swizzle_b32 {_vregs(self.dst, p)}, {_vregs(self.src, p)} offset:0x{self.isa['offset']:04x}"
        return f"ds_bpermute_b32 {_vregs(self.dst, p)}, v_addr[{lane_map_pattern(self.src_lane)}], {_vregs(self.src, p)}"


def _pattern_name(t: np.ndarray) -> str:
    a = np.asarray(t).reshape(-1)[:64]
    return "lane<-" + ",".join(str(int(x)) for x in a[:4]) + ",..."


def _dpp_suffix(kind: str, isa: dict) -> str:
    ctl = kind.split(":", 1)[1]
    s = ctl.replace("row_bcast15", "row_bcast:15").replace("row_bcast31", "row_bcast:31")
    extra = []
    if isa.get("row_mask", 0xF) != 0xF:
        extra.append(f"row_mask:0x{isa['row_mask']:x}")
    if isa.get("bank_mask", 0xF) != 0xF:
        extra.append(f"bank_mask:0x{isa['bank_mask']:x}")
    if isa.get("bound_ctrl", 0):
        extra.append("bound_ctrl:1")
    return " ".join([s] + extra)


def _lane_kind_family(kind: str) -> str:
    if kind.startswith("dpp:"):
        return "dpp"
    if kind.startswith("ds_swizzle"):
        return "ds_swizzle"
    if kind == "readlane":
        return "readlane"
    if kind == "ds_bpermute":
        return "ds_bpermute"
    raise LayoutError(f"unknown lane step kind {kind!r}")


@dataclass
class FusedDpp(Step):
    """One DPP instruction that moves and selects: ``dst = own if keep[l] else moved(src)[l]``.

    ``form = "v_cndmask_b32_dpp"``: ``v_cndmask_b32 dst, src(DPP), own`` with VCC =
    ``keep`` (S0 = the DPP-read ``src``, S1 = ``own``); ``bound_ctrl`` is 1 so a
    lane whose DPP source is out of range still writes (it selects ``own``).
    ``form = "v_mov_b32_dpp"``: ``v_mov_b32_dpp dst(old = own), src`` with the
    row/bank masks disabling exactly the ``keep`` lanes.
    Certificate: ``lane`` into the temporary slots ``tmp`` then ``select``.
    """

    form: str
    dst: list[int]
    own: list[int]
    src: list[int]
    tmp: list[int]
    ctrl_name: str  # e.g. "row_shr:4"
    src_lane: np.ndarray  # lanes that take the moved value; -1 elsewhere
    keep: np.ndarray  # 1 where the lane keeps ``own``
    isa: dict = field(default_factory=dict)
    op = "fused"

    def to_cert(self, raw: bool = False) -> list[dict]:
        isa = dict(self.isa)
        lane = {"op": "lane", "kind": f"dpp:{self.ctrl_name}", "dst": _ints(self.tmp), "src": _ints(self.src),
                "src_lane": _tab(raw, self.src_lane), "isa": isa}
        sel = {"op": "select", "dst": _ints(self.dst), "a": _ints(self.tmp), "b": _ints(self.own),
               "cond": _tab(raw, self.keep), "fused": self.form}
        return [lane, sel]

    def counts(self) -> dict[str, int]:
        return {"dpp": 1}

    def asm(self, p: int) -> str:
        suffix = _dpp_suffix(f"dpp:{self.ctrl_name}", self.isa)
        if self.form == "v_mov_b32_dpp":
            return f"v_mov_b32_dpp {_vregs(self.dst, p)}(old={_vregs(self.own, p)}), {_vregs(self.src, p)} {suffix}"
        return (f"v_cndmask_b32_dpp {_vregs(self.dst, p)}, {_vregs(self.src, p)}, {_vregs(self.own, p)}, "
                f"{_mask_name(self.keep)} {suffix}")


@dataclass
class PermlaneSwap(Step):
    """gfx950 ``v_permlane{16,32}_swap_b32 vdst, src0`` (both registers written in place)."""

    kind: str  # permlane16_swap | permlane32_swap
    vdst: list[int]
    src0: list[int]
    op = "permlane_swap"

    def to_cert(self, raw: bool = False) -> list[dict]:
        return [{"op": "permlane_swap", "kind": self.kind, "vdst": _ints(self.vdst), "src0": _ints(self.src0)}]

    def counts(self) -> dict[str, int]:
        return {self.kind: 1}

    def asm(self, p: int) -> str:
        return f"v_{self.kind}_b32 {_vregs(self.vdst, p)}, {_vregs(self.src0, p)}"


@dataclass
class _LdsAccess(Step):
    """Common part of LDS steps: one access, or two (``ds_read2``/``ds_write2``) from one base address.

    ``pair``: the second access's slots; it is at ``addr + pair_offset * width``
    bytes, ``* 64`` for the ``st64`` forms (ISA offset fields: offset0 = 0,
    offset1 = ``pair_offset``, at most 255).
    """

    addr: np.ndarray  # [warps][64] byte address of the (first) access
    width: int  # bytes per lane per access
    pair: list[int] | None = None
    pair_offset: int = 0
    st64: bool = False

    def pair_addr(self) -> np.ndarray:
        return np.asarray(self.addr) + self.pair_offset * self.width * (64 if self.st64 else 1)

    def _pair_name(self, base: str) -> str:
        return f"{base}2{'st64' if self.st64 else ''}_b{8 * self.width}"

    def register_step(self) -> bool:
        return False


@dataclass
class LdsStore(_LdsAccess):
    """``ds_write_b{8,16,32,64,128}`` (or ``ds_write2[st64]_b{32,64}``): lane ``l`` of warp ``w`` stores its
    slots at byte ``addr[w][l]``.  ``d16_hi``: the element is the upper half
    (``ds_write_b16_d16_hi``) or byte 2 (``ds_write_b8_d16_hi``) of its VGPR.
    """

    src: list[int] = field(default_factory=list)
    d16_hi: bool = False
    op = "lds_store"

    def to_cert(self, raw: bool = False) -> list[dict]:
        out = [{"op": "lds_store", "src": _ints(self.src), "addr": _tab(raw, self.addr),
                "isa": {"bytes": self.width, "d16_hi": self.d16_hi}}]
        if self.pair is not None:
            out.append({"op": "lds_store", "src": _ints(self.pair), "addr": _tab(raw, self.pair_addr()),
                        "fused": self._pair_name("ds_write"),
                        "isa": {"bytes": self.width, "offset1": self.pair_offset, "st64": self.st64}})
        return out

    def counts(self) -> dict[str, int]:
        return {"lds_write": 1}

    def asm(self, p: int) -> str:
        base = int(np.asarray(self.addr).reshape(-1)[0])
        if self.pair is not None:
            return (f"{self._pair_name('ds_write')} v_addr(lane0={base}), {_vregs(self.src, p)}, "
                    f"{_vregs(self.pair, p)} offset1:{self.pair_offset}")
        suffix = "_d16_hi" if self.d16_hi else ""
        return f"ds_write_b{8 * self.width}{suffix} v_addr(lane0={base}), {_vregs(self.src, p)}"


def transpose_name(bits: int) -> str:
    """The gfx950 transpose load of ``bits``-bit elements (``ds_read_b64_tr_b16``, ``..._b8``)."""
    return f"ds_read_b64_tr_b{bits}"


def transpose_element_addresses(addr, bits: int) -> list[np.ndarray]:
    """Byte address, per lane, of element ``j`` of a transpose load whose lanes supply ``addr``.

    ``E = 64 / bits`` elements per lane; lane ``i`` element ``j`` is element ``e`` of the
    read of lane ``s`` of its 16-lane group (``linlayout.hw.lds.transpose_read_sources``),
    i.e. the byte ``addr[s] + e * bits / 8``.  Returns ``E`` arrays shaped like ``addr``.
    """
    a = np.asarray(addr, dtype=np.int64)
    lane, offset = _transpose_sources(bits)
    elem = a.reshape(-1, 64)[:, lane] + offset  # [rows, E, 64]
    return [elem[:, j].reshape(a.shape) for j in range(len(lane))]


@lru_cache(maxsize=None)  # kept by clear_caches: a table of the instruction (per element size)
def _transpose_sources(bits: int) -> tuple[np.ndarray, np.ndarray]:
    """``[E, 64]`` each: the lane ``s`` whose read holds lane ``l``'s element ``j`` of a transpose load,
    and that element's byte offset in the read (``transpose_element_addresses``)."""
    from linlayout.hw.lds import transpose_read_sources

    src_lane, src_elem = transpose_read_sources(64 // bits)
    lanes = np.arange(64)
    lane, offset = (lanes & ~15) + src_lane[lanes & 15].T, src_elem[lanes & 15].T * (bits // 8)
    lane.setflags(write=False)
    offset.setflags(write=False)
    return lane, offset


@dataclass
class LdsLoad(_LdsAccess):
    """``ds_read_b{32,64,128}`` / ``ds_read_u{8,16}`` (or ``ds_read2[st64]_b{32,64}``): lane ``l`` of warp
    ``w`` loads slots from byte ``addr[w][l]``.

    ``transpose`` (gfx950, 8 or 16): ``ds_read_b64_tr_b{transpose}``: lane ``l`` supplies
    ``addr[w][l]`` (8-byte aligned) and receives its ``64 / transpose`` slots ``dst`` from the
    16 lanes of its group (``transpose_element_addresses``); in the certificate one
    ``lds_load`` per slot at its element address, the later ones ``fused`` to the first.
    """

    dst: list[int] = field(default_factory=list)
    transpose: int = 0
    op = "lds_load"

    def to_cert(self, raw: bool = False) -> list[dict]:
        if self.transpose:
            name = transpose_name(self.transpose)
            out = []
            for j, (slot, a) in enumerate(zip(self.dst, transpose_element_addresses(self.addr, self.transpose))):
                item = {"op": "lds_load", "dst": [int(slot)], "addr": _tab(raw, a),
                        "isa": {"bytes": self.transpose // 8}}
                if j:
                    item["fused"] = name
                else:
                    item["isa"].update(transpose=name, lane_addr=_tab(raw, self.addr))
                out.append(item)
            return out
        out = [{"op": "lds_load", "dst": _ints(self.dst), "addr": _tab(raw, self.addr),
                "isa": {"bytes": self.width}}]
        if self.pair is not None:
            out.append({"op": "lds_load", "dst": _ints(self.pair), "addr": _tab(raw, self.pair_addr()),
                        "fused": self._pair_name("ds_read"),
                        "isa": {"bytes": self.width, "offset1": self.pair_offset, "st64": self.st64}})
        return out

    def counts(self) -> dict[str, int]:
        return {"lds_read_tr" if self.transpose else "lds_read": 1}

    def asm(self, p: int) -> str:
        base = int(np.asarray(self.addr).reshape(-1)[0])
        if self.transpose:
            return f"{transpose_name(self.transpose)} {_vregs(self.dst, p)}, v_addr(lane0={base})"
        if self.pair is not None:
            return (f"{self._pair_name('ds_read')} {_vregs(self.dst, p)}, {_vregs(self.pair, p)}, "
                    f"v_addr(lane0={base}) offset1:{self.pair_offset}")
        name = f"ds_read_b{8 * self.width}" if self.width >= 4 else f"ds_read_u{8 * self.width}"
        return f"{name} {_vregs(self.dst, p)}, v_addr(lane0={base})"


@dataclass
class Barrier(Step):
    """``s_barrier``: every warp reaches it before any continues."""

    op = "barrier"

    def to_cert(self, raw: bool = False) -> list[dict]:
        return [{"op": "barrier"}]

    def counts(self) -> dict[str, int]:
        return {"s_barrier": 1}

    def register_step(self) -> bool:
        return False

    def asm(self, p: int) -> str:
        return "s_barrier"


def step_from_json(items: list[dict], i: int) -> tuple[Step, int]:
    """Parse the certificate step at ``items[i]`` (two items for a fused pair); returns (step, next i)."""
    d = items[i]
    if not isinstance(d, dict) or "op" not in d:
        raise LayoutError(f"plan step {i} is not an object with an 'op'")
    op = d["op"]
    try:
        if op == "lane" and i + 1 < len(items) and items[i + 1].get("fused") in ("v_cndmask_b32_dpp",
                                                                                "v_mov_b32_dpp"):
            s = items[i + 1]
            isa = dict(d.get("isa", {}))
            return FusedDpp(form=s["fused"], dst=_ints(s["dst"]), own=_ints(s["b"]), src=_ints(d["src"]),
                            tmp=_ints(d["dst"]), ctrl_name=d["kind"].split(":", 1)[1],
                            src_lane=_lane_table(d["src_lane"], "src_lane"),
                            keep=_lane_table(s["cond"], "cond"), isa=isa), i + 2
        if op == "mov":
            isa = d.get("isa", {})
            kind = d.get("kind", "rename")
            return Mov(dst=_ints(d["dst"]), src=_ints(d["src"]), kind=kind,
                       operands=(isa["s0"], isa["s1"]) if kind == "v_perm_b32" else None,
                       selector=isa.get("selector"), dst_dword=isa.get("vdst")), i + 1
        if op == "select" and d.get("fused") == "v_perm_b32":
            isa = d["isa"]
            return PermSelect(dst=_ints(d["dst"]), a=_ints(d["a"]), b=_ints(d["b"]),
                              cond=_lane_table(d["cond"], "cond"), operands=(int(isa["s0"]), int(isa["s1"])),
                              sel0=int(isa["sel0"]), sel1=int(isa["sel1"]), dst_dword=int(isa["vdst"])), i + 1
        if op == "select":
            return Select(dst=_ints(d["dst"]), a=_ints(d["a"]), b=_ints(d["b"]),
                          cond=_lane_table(d["cond"], "cond")), i + 1
        if op == "lane":
            isa = {k: (np.asarray(v, dtype=np.int64) if isinstance(v, list) else v)
                   for k, v in d.get("isa", {}).items()}
            return Lane(kind=d["kind"], dst=_ints(d["dst"]), src=_ints(d["src"]),
                        src_lane=_lane_table(d["src_lane"], "src_lane"), isa=isa), i + 1
        if op == "permlane_swap":
            return PermlaneSwap(kind=d["kind"], vdst=_ints(d["vdst"]), src0=_ints(d["src0"])), i + 1
        if op == "lds_load" and "transpose" in d.get("isa", {}):
            name = d["isa"]["transpose"]
            bits = {transpose_name(b): b for b in (8, 16)}.get(name)
            if bits is None:
                raise LayoutError(f"plan step {i}: unknown transpose load {name!r} (known: "
                                  f"{transpose_name(16)}, {transpose_name(8)})")
            n = 64 // bits
            group = items[i:i + n]
            if len(group) < n or any(g.get("fused") != name for g in group[1:]):
                raise LayoutError(f"plan step {i}: {name} needs {n} lds_load items, the later ones fused to it")
            return LdsLoad(dst=[s for g in group for s in _ints(g["dst"])],
                           addr=_lane_table(d["isa"]["lane_addr"], "lane_addr"), width=8, transpose=bits), i + n
        if op in ("lds_store", "lds_load"):
            isa = d.get("isa", {})
            common = dict(addr=_lane_table(d["addr"], "addr"), width=int(isa.get("bytes", 0)))
            nxt = items[i + 1] if i + 1 < len(items) else {}
            if nxt.get("op") == op and nxt.get("fused"):
                nisa = nxt.get("isa", {})
                common.update(pair=_ints(nxt["src" if op == "lds_store" else "dst"]),
                              pair_offset=int(nisa.get("offset1", 0)), st64=bool(nisa.get("st64", False)))
                step_n = 2
            else:
                step_n = 1
            if op == "lds_store":
                return LdsStore(src=_ints(d["src"]), d16_hi=bool(isa.get("d16_hi", False)), **common), i + step_n
            return LdsLoad(dst=_ints(d["dst"]), **common), i + step_n
        if op == "barrier":
            return Barrier(), i + 1
    except KeyError as e:
        raise LayoutError(f"plan step {i} ({op}) lacks the key {e.args[0]!r}") from None
    raise LayoutError(f"plan step {i}: unknown op {op!r}")


@dataclass
class Plan:
    """A conversion plan for one workgroup: steps, cost, lower bound and instruction counts.

    ``strategy`` names how it was built (``noop``, ``registers``, ``lanes``,
    ``lds``); ``cost`` is the cost-model value (linlayout.synth.cost); ``lower_bound`` the
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

    # ------------------------------------------------------------ counts
    def counts(self) -> dict[str, int]:
        """Instructions of one wave by kind (``total`` = their sum); 64-bit register steps count twice."""
        mult = dwords_per_slot(self.element_bits)
        out = {k: 0 for k in COUNT_KINDS}
        for s in self.steps:
            m = mult if mult > 1 and s.register_step() else 1
            for k, v in s.counts().items():
                out[k] = out.get(k, 0) + v * m
        out["total"] = sum(out[k] for k in COUNT_KINDS)
        return out

    def total_with_overhead(self) -> int:
        return self.counts()["total"] + sum(int(v) for v in self.overhead.values())

    # ------------------------------------------------------------ certificate
    def to_certificate(self, raw: bool = False) -> dict:
        """The plan certificate (CONTRACT.md section 4), with extra keys for cost and ISA parameters.

        ``raw``: per-lane tables stay numpy arrays (not JSON-serializable; for in-process checks)."""
        steps: list[dict] = []
        for s in self.steps:
            steps.extend(s.to_cert(raw))
        return {
            "format": CERT_FORMAT, "arch": self.arch, "wave_size": self.wave_size, "num_warps": self.num_warps,
            "element_bits": self.element_bits, "src": self.src.to_json(), "dst": self.dst.to_json(),
            "slots_in": self.slots_in, "slots_out": self.slots_out, "steps": steps,
            "strategy": self.strategy, "cost": self.cost, "lower_bound": self.lower_bound,
            "plan_counts": self.counts(), "overhead_estimate": self.overhead, "lds_bytes": self.lds_bytes,
        }

    def dumps(self) -> str:
        return json.dumps(self.to_certificate())

    @classmethod
    def from_certificate(cls, obj: dict) -> "Plan":
        """Read a certificate back (steps with ISA parameters when present)."""
        if not isinstance(obj, dict) or obj.get("format") != CERT_FORMAT:
            raise LayoutError(f"not a plan certificate (format must be {CERT_FORMAT!r})")
        try:
            items = obj["steps"]
            steps, i = [], 0
            while i < len(items):
                s, i = step_from_json(items, i)
                steps.append(s)
            return cls(arch=obj["arch"], wave_size=int(obj["wave_size"]), num_warps=int(obj["num_warps"]),
                       element_bits=int(obj["element_bits"]), src=LinearLayout.from_json(obj["src"]),
                       dst=LinearLayout.from_json(obj["dst"]), slots_in=int(obj["slots_in"]),
                       slots_out=int(obj["slots_out"]), steps=steps, strategy=obj.get("strategy", ""),
                       cost=float(obj.get("cost", 0.0)), lower_bound=obj.get("lower_bound", {}),
                       overhead=obj.get("overhead_estimate", {}), lds_bytes=int(obj.get("lds_bytes", 0)))
        except KeyError as e:
            raise LayoutError(f"plan certificate lacks the key {e.args[0]!r}") from None

    # ------------------------------------------------------------ text
    def pseudo_asm(self) -> str:
        """The plan as readable pseudo-assembly for one wave, one instruction per line."""
        p = slots_per_dword(self.element_bits)
        lines = [f"; {self.strategy} plan, {self.arch}, {self.element_bits}-bit elements, "
                 f"{self.slots_in} -> {self.slots_out} slots per lane, {self.num_warps} warps"]
        if dwords_per_slot(self.element_bits) == 2:
            lines.append("; 64-bit elements: every register instruction below runs once per dword half")
        for s in self.steps:
            lines.append("  " + s.asm(p))
        return "\n".join(lines)

    def summary(self) -> str:
        c = self.counts()
        kinds = ", ".join(f"{k} {v}" for k, v in c.items() if v and k != "total")
        lb = self.lower_bound
        lines = [
            f"strategy: {self.strategy}   verified: {self.verified}",
            f"instructions: {c['total']} ({kinds or 'none'})",
            f"estimated setup instructions: {sum(self.overhead.values())} {self.overhead}",
            f"cost: {self.cost:g}   lower bound: {lb.get('cost', 0):g}",
        ]
        if lb:
            lines.append("lower bound detail: " + ", ".join(f"{k}={v}" for k, v in lb.items() if k != "cost"))
        if self.lds_bytes:
            lines.append(f"LDS bytes: {self.lds_bytes}")
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)
