"""Reductions across the lanes of a wave along one tensor dim of a distributed layout.

A register value ``x`` held in layout ``L`` (one value per lane) is reduced over the tensor
dim ``dim`` by combining it, for every lane bit whose basis vector of ``L`` moves along
``dim`` only, with the value of the partner lane ``l ^ (1 << bit)`` (a butterfly): after
all such bits every lane holds the reduction over its whole group.  Lane bits that move
along the other dims are kept; a lane bit moving along both is an error.

The partner exchange per bit is chosen per arch: on gfx950 bit 5 is one
``v_permlane32_swap`` and bit 4 one ``v_permlane16_swap`` (the two results of the swap
are ``x`` and the partner's ``x`` in every lane, so ``op(results)`` is the butterfly step,
without a copy); otherwise the cheapest instruction realizing the lane map
``l -> l ^ (1 << bit)`` (``linlayout.synth.lane_ops.find_lane_op``: DPP, then ``ds_swizzle``, then
``ds_bpermute``).
"""

from __future__ import annotations

import numpy as np

from linlayout import LayoutError, LinearLayout
from linlayout.hw.targets import get_target
from linlayout.lowering.emit import atoms
from linlayout.lowering.emit.builder import Builder
from linlayout.lowering.emit.lane_values import LaneValues
from linlayout.synth.lane_ops import find_lane_op

__all__ = ["reduce_lane_bits", "LaneReducer"]

#: gfx950 swaps that realize a butterfly step on one lane bit.
PERMLANE_SWAP_BITS = {5: "permlane32_swap", 4: "permlane16_swap"}


def reduce_lane_bits(layout: LinearLayout, dim: str) -> list[int]:
    """Lane bits of ``layout`` whose basis moves along ``dim`` only (the bits a reduction over ``dim`` crosses)."""
    names = layout.out_dim_names
    k = names.index(dim)
    out = []
    for bit, v in enumerate(layout.bases["lane"]):
        along, other = v[k] != 0, any(x for i, x in enumerate(v) if i != k)
        if along and other:
            raise LayoutError(f"lane bit {bit} moves along {dim} and another dim at once: {v}")
        if along:
            out.append(bit)
    return out


class LaneReducer:
    """Butterfly reductions of f32 values over given lane bits on ``arch``."""

    def __init__(self, b: Builder, lanes: LaneValues, arch: str, bits: list[int]) -> None:
        self.b, self.bits = b, list(bits)
        target = get_target(arch)
        self.steps: list[tuple[int, str, dict]] = []
        lane = np.arange(64)
        for bit in self.bits:
            if target.has_permlane_swap and bit in PERMLANE_SWAP_BITS:
                self.steps.append((bit, PERMLANE_SWAP_BITS[bit], {}))
                continue
            op = find_lane_op(lane ^ (1 << bit), target)
            isa = dict(op.isa)
            if op.family == "ds_bpermute":
                v, d = lanes.value_of(4 * (lane ^ (1 << bit)), what=f"partner address of lane bit {bit}")
                isa = {"addr": v if not d else b.arith("addi", v, b.const(d))}
            self.steps.append((bit, op.kind if op.family != "ds_bpermute" else "ds_bpermute", isa))

    def describe(self) -> list[dict]:
        return [{"lane_bit": bit, "instruction": kind} for bit, kind, _ in self.steps]

    def reduce(self, x: str, op: str) -> str:
        """``op`` (``maxnumf`` or ``addf``) of the f32 ``x`` over the lane group."""
        b = self.b
        for bit, kind, isa in self.steps:
            xi = b.value(f"llvm.bitcast {x} : f32 to i32", "bc")
            if kind in ("permlane32_swap", "permlane16_swap"):
                r0, r1 = atoms.permlane_swap(b, kind, xi, xi)
                a = b.value(f"llvm.bitcast {r0} : i32 to f32", "bc")
                c = b.value(f"llvm.bitcast {r1} : i32 to f32", "bc")
                x = b.value(f"arith.{op} {a}, {c} : f32", "red")
                continue
            if kind.startswith("dpp:"):
                moved = atoms.dpp_mov(b, xi, int(isa["ctrl"]))
            elif kind.startswith("ds_swizzle"):
                moved = atoms.ds_swizzle(b, xi, int(isa["offset"]))
            else:
                moved = atoms.ds_bpermute(b, isa["addr"], xi)
            partner = b.value(f"llvm.bitcast {moved} : i32 to f32", "bc")
            x = b.value(f"arith.{op} {x}, {partner} : f32", "red")
        return x
