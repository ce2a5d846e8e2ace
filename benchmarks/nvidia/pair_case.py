"""One conversion the GPU harness (``run_plans.py``) plans, emits and checks."""

from __future__ import annotations

import json
from dataclasses import dataclass

from linlayout import LinearLayout

__all__ = ["PairCase"]


@dataclass(frozen=True)
class PairCase:
    """One conversion: layouts (in dims register, lane, warp), element size, warps, where from, and
    the target and cost objective its plans are made for (``objective`` None: the planner's
    default)."""

    name: str
    src: LinearLayout
    dst: LinearLayout
    element_bits: int
    num_warps: int
    origin: dict
    arch: str = "sm_90"
    objective: str | None = None

    def key(self) -> tuple:
        return (json.dumps(self.src.to_json()), json.dumps(self.dst.to_json()), self.element_bits, self.num_warps,
                self.arch, self.objective)
