"""The ``lane`` step: one cross-lane move (DPP, ``ds_swizzle_b32``, ``ds_bpermute_b32``; PTX ``shfl.sync``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from linlayout import LayoutError, caches
from linlayout.hw.targets import Target
from linlayout.lane_map import lane_map_pattern

from .base import Step, ints, lane_table, register, same_lengths, table, vregs

__all__ = ["LANE_ISA_KEYS", "Lane", "dpp_suffix", "lane_instruction_family", "lane_kind_family", "shfl_kind"]

SHFL_MODES = ("idx", "bfly", "up", "down")


@caches.memoize("synth.steps.lane_kind_family", table=True)
def lane_kind_family(kind: str) -> str:
    """The instruction family of a lane step kind (``dpp`` -- dpp16 controls and RDNA's dpp8 --,
    ``permlane16`` -- RDNA's v_permlane16/x16 --, ``ds_swizzle``, ``ds_bpermute``, ``readlane``, ``shfl``)."""
    if kind.startswith("shfl.sync."):
        return "shfl"
    if kind.startswith(("permlane16:", "permlanex16:")):
        return "permlane16"
    if kind.startswith(("dpp:", "dpp8:")):
        return "dpp"
    if kind.startswith("ds_swizzle"):
        return "ds_swizzle"
    if kind == "readlane":
        return "readlane"
    if kind == "ds_bpermute":
        return "ds_bpermute"
    raise LayoutError(f"unknown lane step kind {kind!r}")


#: The ``isa`` keys the instruction of each lane family needs (``dpp8``: a ``dpp8:`` kind; the class doc).
LANE_ISA_KEYS = {"dpp8": ("dpp8",), "dpp": ("ctrl",), "permlane16": ("sel", "cross"), "ds_swizzle": ("offset",),
                 "ds_bpermute": ("addr",), "readlane": (), "shfl": ("mode", "b", "c")}

#: The ``isa`` keys that may be per-lane tables: ds_bpermute's addresses, shfl.sync.idx's source lanes.
LANE_ISA_TABLES = ("addr", "b")


def lane_instruction_family(kind: str) -> str:
    """``lane_kind_family``, with RDNA's ``dpp8:`` moves told apart from DPP16 ones (``dpp8``)."""
    return "dpp8" if kind.startswith("dpp8:") else lane_kind_family(kind)


def dpp_suffix(kind: str, isa: dict) -> str:
    """Pseudo-asm DPP modifiers of the lane kind ``dpp:<control>`` with its masks and bound_ctrl."""
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


def shfl_kind(mode: str, b: int | None) -> str:
    """The lane kind of a ``shfl.sync`` of ``mode``: ``shfl.sync.idx`` (any source table), else
    ``shfl.sync.<mode>:<b>`` (the uniform mask of ``bfly``, the delta of ``up``/``down``)."""
    if mode not in SHFL_MODES:
        raise LayoutError(f"shfl.sync has no mode {mode!r}")
    return "shfl.sync.idx" if mode == "idx" else f"shfl.sync.{mode}:{b}"


def dpp_controls(isa: dict) -> tuple[int, int, int, int]:
    """``(ctrl, row_mask, bank_mask, bound_ctrl)`` of a DPP instruction's parameters."""
    return (int(isa["ctrl"]), int(isa.get("row_mask", 0xF)), int(isa.get("bank_mask", 0xF)),
            int(isa.get("bound_ctrl", 0)))


@register
@dataclass(frozen=True)
class Lane(Step):
    """A lane permutation: lane ``l`` receives ``src`` of lane ``src_lane[l]`` of its warp (-1: undefined).

    Certificate: ``{"op": "lane", "kind": K, "dst": [...], "src": [...], "src_lane": T}``.
    ``kind``: ``ds_bpermute``, ``dpp:<control>``, ``ds_swizzle:<offset>`` (docs/contract.md naming),
    on RDNA also ``dpp8:[s0,...,s7]`` (``isa``: ``dpp8``, the 24-bit selector) and
    ``permlane16:<sel>`` / ``permlanex16:<sel>`` (``isa``: ``sel``, the 64-bit lane selector, and
    ``cross``), or on NVIDIA ``shfl.sync.idx``, ``shfl.sync.bfly:<mask>``, ``shfl.sync.up:<delta>``,
    ``shfl.sync.down:<delta>``.  ``isa``: the instruction's parameters -- DPP: ``ctrl``,
    ``row_mask``, ``bank_mask``, ``bound_ctrl``; ds_swizzle: ``offset``; ds_bpermute: ``addr``
    (per-lane byte address VGPR, ``[lanes]`` or ``[warps][lanes]``) and ``offset``; shfl.sync:
    ``mode`` (idx, bfly, up, down), ``b`` (the lane, mask or delta operand: one value, or one
    per lane for ``idx``) and ``c`` (the clamp/segment operand: 0x1f, or 0 for ``up``; membermask
    0xffffffff).  The emulator checks that the instruction reads the declared source lanes.
    """

    kind: str
    dst: list[int]
    src: list[int]
    src_lane: np.ndarray
    isa: dict = field(default_factory=dict)
    op = "lane"
    cert_op = "lane"
    across_lanes = True

    def to_cert(self, raw: bool = False) -> list[dict]:
        isa = {k: (table(raw, v) if isinstance(v, np.ndarray) else v) for k, v in self.isa.items()}
        return [{"op": "lane", "kind": self.kind, "dst": ints(self.dst), "src": ints(self.src),
                 "src_lane": table(raw, self.src_lane), "isa": isa}]

    @classmethod
    def from_cert(cls, items: list[dict], i: int) -> tuple[Step, int]:
        d = items[i]
        isa = {k: (np.asarray(v, dtype=np.int64) if isinstance(v, list) else v) for k, v in d.get("isa", {}).items()}
        kind = d["kind"]
        same_lengths(i, "lane", dst=d["dst"], src=d["src"])
        missing = [k for k in LANE_ISA_KEYS[lane_instruction_family(kind)] if k not in isa]
        if missing:
            raise LayoutError(f"plan step {i} (lane): a {kind} move needs the isa keys {', '.join(missing)}")
        if kind.startswith("shfl.sync.") and not (isinstance(isa["mode"], str) and isa["mode"] in SHFL_MODES):
            raise LayoutError(f"plan step {i} (lane): shfl.sync mode {isa['mode']!r} must be one of "
                              f"{', '.join(SHFL_MODES)}")
        for k, v in isa.items():  # numbers, or the per-lane tables LANE_ISA_TABLES (shfl's mode is a name)
            if isinstance(v, np.ndarray) and k not in LANE_ISA_TABLES:
                raise LayoutError(f"plan step {i} (lane): isa {k!r} must be a number, got a list")
            if k != "mode" and not isinstance(v, np.ndarray):
                int(v)  # a TypeError or ValueError: the certificate's malformed value
        return cls(kind=kind, dst=ints(d["dst"]), src=ints(d["src"]),
                   src_lane=lane_table(d["src_lane"], "src_lane"), isa=isa), i + 1

    def plan_error(self, target: Target, element_bits: int, lds_bytes: int) -> str:
        """A lane instruction ``target`` lacks (``Target.has_lane_family``, the emulator's answer)."""
        family = lane_instruction_family(self.kind)
        return "" if target.has_lane_family(family) else f"{target.name} has no {self.kind} instruction"

    @property
    def family(self) -> str:
        return lane_kind_family(self.kind)

    @property
    def crossbar(self) -> bool:  # ds_swizzle, ds_bpermute (and shfl.sync) go through the LDS crossbar
        return self.family not in ("dpp", "permlane16")

    def counts(self) -> dict[str, int]:
        return {self.family: 1}

    def asm(self, p: int, target: Target) -> str:
        fam = self.family
        if self.kind.startswith("dpp8:"):
            return f"v_mov_b32_dpp {vregs(self.dst, p)}, {vregs(self.src, p)} {self.kind}"
        if fam == "dpp":
            return f"v_mov_b32_dpp {vregs(self.dst, p)}, {vregs(self.src, p)} {dpp_suffix(self.kind, self.isa)}"
        if fam == "permlane16":
            sel = int(self.isa["sel"])
            return (f"v_{self.kind.split(':')[0]}_b32 {vregs(self.dst, p)}, {vregs(self.src, p)}, "
                    f"0x{sel & 0xFFFFFFFF:08x}, 0x{sel >> 32:08x}")
        if fam == "ds_swizzle":
            return f"ds_swizzle_b32 {vregs(self.dst, p)}, {vregs(self.src, p)} offset:0x{self.isa['offset']:04x}"
        if fam == "shfl":
            b = self.isa["b"]
            b_text = f"r_lane[{lane_map_pattern(b)}]" if np.ndim(b) else str(int(b))
            return (f"shfl.sync.{self.isa['mode']}.b32 {vregs(self.dst, p)}, {vregs(self.src, p)}, {b_text}, "
                    f"0x{int(self.isa['c']):x}, 0xffffffff")
        return f"ds_bpermute_b32 {vregs(self.dst, p)}, v_addr[{lane_map_pattern(self.src_lane)}], {vregs(self.src, p)}"

    def reads(self) -> list[int]:
        return self.src

    def writes(self) -> list[int]:
        return self.dst

    def note_setup(self, setup) -> None:
        if self.kind == "ds_bpermute":
            setup.bpermute_address(self.isa["addr"])
        elif self.family == "shfl" and np.ndim(self.isa["b"]):  # a per-lane source lane register
            setup.bpermute_address(self.isa["b"])
        elif self.family == "permlane16":
            setup.permlane_selector(int(self.isa["sel"]))

    def run(self, machine, what: str) -> None:
        fam = self.family
        for d, s in machine.at_once(machine.pairs(self.dst, self.src, what)):
            if self.kind.startswith("dpp8:"):
                got = machine.dpp8(d, s, int(self.isa["dpp8"]))
            elif fam == "dpp":
                ctrl, row_mask, bank_mask, bound_ctrl = dpp_controls(self.isa)
                got = machine.dpp(d, s, ctrl, row_mask, bank_mask, bound_ctrl)
            elif fam == "permlane16":
                got = machine.permlane16(d, s, int(self.isa["sel"]), bool(self.isa["cross"]))
            elif fam == "ds_swizzle":
                got = machine.ds_swizzle(d, s, int(self.isa["offset"]))
            elif fam == "ds_bpermute":
                got = machine.ds_bpermute(d, s, self.isa["addr"], int(self.isa.get("offset", 0)))
            elif fam == "shfl":
                got = machine.shfl(d, s, self.isa["mode"], self.isa["b"], int(self.isa["c"]))
            else:
                raise LayoutError(f"{what}: lane kind {self.kind!r} has no ISA model")
            machine.check_declared(np.asarray(self.src_lane), got, what)

    def prepare(self, emitter, what: str):
        fam = self.family
        if fam == "shfl":
            b = self.isa["b"]
            return emitter.lane_value(np.asarray(b, dtype=np.int64), what) if np.ndim(b) else None
        if fam == "permlane16":
            emitter.permlane_selector(int(self.isa["sel"]))
            return None
        if self.kind != "ds_bpermute":
            return None
        need = np.asarray(self.src_lane, dtype=np.int64)
        return emitter.bpermute_address(4 * np.where(need >= 0, need, 0), what, defined=need >= 0)

    def emit(self, emitter, prepared, regs: dict[int, str], what: str) -> None:
        fam = self.family
        for d, s in emitter.pairs(self.dst, self.src, what):
            src = emitter.reg(regs, s, what)
            if self.kind.startswith("dpp8:"):
                regs[d] = emitter.dpp8_mov(src, int(self.isa["dpp8"]))
            elif fam == "dpp":
                ctrl, row_mask, bank_mask, bound_ctrl = dpp_controls(self.isa)
                regs[d] = emitter.dpp_mov(src, ctrl, row_mask, bank_mask, bool(bound_ctrl))
            elif fam == "permlane16":
                regs[d] = emitter.permlane16(src, int(self.isa["sel"]), bool(self.isa["cross"]))
            elif fam == "ds_swizzle":
                regs[d] = emitter.ds_swizzle(src, int(self.isa["offset"]))
            elif fam == "ds_bpermute":
                regs[d] = emitter.ds_bpermute(prepared, src)
            elif fam == "shfl":  # b: the per-lane source register (idx) from prepare, else the constant
                b = prepared if prepared is not None else int(self.isa["b"])
                regs[d] = emitter.shfl(src, self.isa["mode"], b, int(self.isa["c"]))
            else:
                raise LayoutError(f"{what}: lane step kind {self.kind!r} has no lowering")
