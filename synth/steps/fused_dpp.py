"""The fused DPP step: one ``v_cndmask_b32_dpp`` or row/bank-masked ``v_mov_b32_dpp`` that moves and selects."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from linlayout import LayoutError
from linlayout.hw.targets import Target

from .base import PlanVerificationError, Step, ints, lane_table, mask_name, register, table, vregs
from .lane import dpp_controls, dpp_suffix

__all__ = ["FusedDpp"]


@register
@dataclass(frozen=True)
class FusedDpp(Step):
    """One DPP instruction that moves and selects: ``dst = own if keep[l] else moved(src)[l]``.

    ``moved(src)[l]`` is ``src`` of lane ``src_lane[l]`` (the DPP control's source lane, in the
    target's family: CDNA's wave64 or RDNA's wave32 controls).  ``src_lane`` and ``keep`` are
    per-lane tables of the plan's wave size (``[lanes]``, or one per warp ``[warps][lanes]``);
    nothing here assumes 64 lanes: the row mask has one bit per 16-lane row (4 rows on wave64, 2 on
    wave32), the bank mask one bit per 4-lane bank of a row.
    ``form = "v_cndmask_b32_dpp"``: ``v_cndmask_b32 dst, src(DPP), own`` with VCC = ``keep``
    (S0 = the DPP-read ``src``, S1 = ``own``); ``bound_ctrl`` is 1 so a lane whose DPP source
    is out of range still writes (it selects ``own``).  ``form = "v_mov_b32_dpp"``:
    ``v_mov_b32_dpp dst(old = own), src`` with the row/bank masks disabling exactly the
    ``keep`` lanes.  Certificate: a ``lane`` item into the temporary slots ``tmp``, then a
    ``select`` item (``a = tmp``, ``b = own``, ``cond = keep``) carrying ``"fused": form``;
    the pair is one instruction and is counted once.  (The planner makes the ``v_cndmask_b32_dpp``
    form only under ``ir.FUSE_DPP_SELECT``, off by default.  LLVM's DPP combiner fuses the emitted
    move and select on gfx9; the HIP clang we test with leaves them two instructions on gfx11/gfx12.)
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
    cert_op = "lane"
    fused_forms = ("v_cndmask_b32_dpp", "v_mov_b32_dpp")

    def to_cert(self, raw: bool = False) -> list[dict]:
        isa = dict(self.isa)
        lane = {"op": "lane", "kind": f"dpp:{self.ctrl_name}", "dst": ints(self.tmp), "src": ints(self.src),
                "src_lane": table(raw, self.src_lane), "isa": isa}
        sel = {"op": "select", "dst": ints(self.dst), "a": ints(self.tmp), "b": ints(self.own),
               "cond": table(raw, self.keep), "fused": self.form}
        return [lane, sel]

    @classmethod
    def claims(cls, items: list[dict], i: int) -> bool:
        """A ``lane`` item followed by a ``select`` item fused to it by one of ``fused_forms``; any
        other next item (another op carrying such a ``fused``, a value that is no object) leaves the
        lane item a plain move, and the reader refuses a stray ``fused`` on the next item."""
        nxt = items[i + 1] if i + 1 < len(items) else None
        return isinstance(nxt, dict) and nxt.get("op") == "select" and nxt.get("fused") in cls.fused_forms

    @classmethod
    def from_cert(cls, items: list[dict], i: int) -> tuple[Step, int]:
        d, s = items[i], items[i + 1]
        if not str(d["kind"]).startswith("dpp:"):
            raise LayoutError(f"plan step {i + 1} (select) has 'fused': {s['fused']!r} but the lane move at item {i} "
                              f"is {d['kind']!r}, not a DPP move")
        return cls(form=s["fused"], dst=ints(s["dst"]), own=ints(s["b"]), src=ints(d["src"]), tmp=ints(d["dst"]),
                   ctrl_name=d["kind"].split(":", 1)[1], src_lane=lane_table(d["src_lane"], "src_lane"),
                   keep=lane_table(s["cond"], "cond"), isa=dict(d.get("isa", {}))), i + 2

    def counts(self) -> dict[str, int]:
        return {"dpp": 1}

    @property
    def across_lanes(self) -> bool:
        """Whether a lane takes another lane's value (a masked identity move, a select, moves none)."""
        src = np.asarray(self.src_lane)
        return bool(((src >= 0) & (src != np.arange(src.shape[-1]))).any())

    @property
    def fused_select(self) -> bool:
        return self.form == "v_cndmask_b32_dpp"

    def asm(self, p: int, target: Target) -> str:
        suffix = dpp_suffix(f"dpp:{self.ctrl_name}", self.isa)
        if self.form == "v_mov_b32_dpp":
            return f"v_mov_b32_dpp {vregs(self.dst, p)}(old={vregs(self.own, p)}), {vregs(self.src, p)} {suffix}"
        return (f"v_cndmask_b32_dpp {vregs(self.dst, p)}, {vregs(self.src, p)}, {vregs(self.own, p)}, "
                f"{mask_name(self.keep)} {suffix}")

    def reads(self) -> list[int]:
        return self.src + self.own

    def writes(self) -> list[int]:
        return self.dst

    def named_slots(self) -> list[int]:
        return self.reads() + self.writes() + self.tmp

    def note_setup(self, setup) -> None:
        if self.form == "v_cndmask_b32_dpp":
            setup.condition(self.keep)

    def run(self, machine, what: str) -> None:
        keep = np.asarray(self.keep).astype(bool)  # [lanes] or [warps, lanes]
        ctrl, row_mask, bank_mask, bound_ctrl = dpp_controls(self.isa)
        for (d, o), (_, s) in zip(machine.pairs(self.dst, self.own, what), machine.pairs(self.dst, self.src, what)):
            if self.form == "v_mov_b32_dpp":
                if d != o:
                    raise PlanVerificationError(f"{what}: a masked v_mov_b32_dpp writes its 'old' register in place")
                if (machine.dpp_enabled(row_mask, bank_mask)[None, :] == keep).any():
                    raise PlanVerificationError(f"{what}: the row/bank masks do not disable exactly the kept lanes")
                got = machine.dpp(d, s, ctrl, row_mask, bank_mask, bound_ctrl)
            elif self.form == "v_cndmask_b32_dpp":
                if row_mask != 0xF or bank_mask != 0xF or not bound_ctrl:
                    raise PlanVerificationError(f"{what}: a DPP v_cndmask must have full masks and bound_ctrl:1")
                got = machine.dpp(d, s, ctrl, row_mask, bank_mask, bound_ctrl, vcc=keep, s1=o)
            else:
                raise LayoutError(f"{what}: unknown fused form {self.form!r}")
            machine.check_declared(np.where(keep, -1, self.src_lane), got, what)
            if ((~keep) & (got < 0)).any():
                raise PlanVerificationError(f"{what}: a lane that takes the moved value has no DPP source")

    def prepare(self, emitter, what: str):
        return emitter.condition(self.keep, what) if self.form == "v_cndmask_b32_dpp" else None

    def emit(self, emitter, prepared, regs: dict[int, str], what: str) -> None:
        ctrl, row_mask, bank_mask, bound_ctrl = dpp_controls(self.isa)
        own_pairs, src_pairs = emitter.pairs(self.dst, self.own, what), emitter.pairs(self.dst, self.src, what)
        for (d, o), (_, s) in zip(own_pairs, src_pairs):
            own, src = emitter.reg(regs, o, what), emitter.reg(regs, s, what)
            if self.form == "v_mov_b32_dpp":
                regs[d] = emitter.dpp_mov(src, ctrl, row_mask, bank_mask, bool(bound_ctrl), old=own)
            elif self.form == "v_cndmask_b32_dpp":  # LLVM's DPP combiner fuses the pair into one instruction
                moved = emitter.dpp_mov(src, ctrl, 0xF, 0xF, True)
                regs[d] = emitter.select(prepared, own, moved)
            else:
                raise LayoutError(f"{what}: unknown fused DPP form {self.form!r}")
