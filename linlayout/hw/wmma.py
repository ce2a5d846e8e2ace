"""WMMA instructions of RDNA3 (gfx11), RDNA4 (gfx12) and gfx1250 (wave32), as layouts.

The same conventions as ``mfma``: in dims ``register`` (packed item index inside the
lane) and ``lane`` (32), out dims ``dim0`` (row) and ``dim1`` (column); A is M x K,
B is K x N, C (= D) is M x N.  All tiles are 16 x 16 per instruction.

Rules (bit maps, ``l4`` = lane bit 4; lanes 0-15 always index the row of A / column
of B / column of C):

* gfx11 (WMMA v1): every lane holds all K values of its row (A) / column (B) and
  lanes 16-31 repeat lanes 0-15 (``l4`` is a broadcast bit).  C item ``e`` (one VGPR
  each, 16-bit results in bits 15:0 with OPSEL = 0) is row ``2e + l4``.
* gfx12 (WMMA v2): A/B follow the MFMA input rule on 32 lanes with K runs of 64 bits
  (``RDNA4_K_RUN_BITS``): ``k = e % R + R*l4 + 2R*(e // R)`` with ``R = 64/bits`` items
  (capped at the lane's items).  C item ``e`` is row ``e + 8*l4``; 16-bit results are
  packed two per VGPR.
* gfx1250 (WMMA v3): C as gfx12 [Q Triton's amd_wmma v3 rule].  A/B: Triton's v3
  dot-operand rule with ``kWidth`` = ``GFX1250_K_RUN_ITEMS`` [I: no ISA or calculator
  source was available; a different K order that is the same for A and B gives the
  same product, so treat gfx1250 A/B as Triton's choice, not the ISA's].

gfx11 and gfx12 reproduce every entry of AMD's matrix instruction calculator (rdna3,
rdna4; ``tests/data/hw_mfma_calculator_tables.json``).  Sparse ``v_swmmac_*`` are not
catalogued.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Optional

from ..errors import LayoutError
from ..layout import LinearLayout
from .mfma import OperandBits, catalog_arch
from .mfma_layout import bit_layout, input_layout, log2_exact
from .targets import get_target, targets_with

__all__ = ["WmmaInstruction", "WMMA_ARCHES", "RDNA4_K_RUN_BITS", "GFX1250_K_RUN_ITEMS",
           "wmma_instructions_for", "get_wmma_instruction", "wmma_layouts", "layout_notes"]

WMMA_ARCHES = targets_with(mma="wmma")  # the targets whose matrix instructions this catalog holds
WAVE32 = 32
#: Bits of one contiguous K run inside a gfx12 lane [T CALC rdna4].
RDNA4_K_RUN_BITS = 64
#: Items per K run of gfx1250 A/B operands (Triton's kWidth for v3 16-bit operands) [I].
GFX1250_K_RUN_ITEMS = {"f32": 2, "f16": 8, "bf16": 8}

# (arch, in types, out type, K, cycles or None) -- cycles from AMD's calculator (rdna3/rdna4).
_FAMILIES = [
    ("gfx1100", "f16", "f32", 16, 32), ("gfx1100", "bf16", "f32", 16, 32),
    ("gfx1100", "f16", "f16", 16, 32), ("gfx1100", "bf16", "bf16", 16, 32),
    ("gfx1100", "iu8", "i32", 16, 32), ("gfx1100", "iu4", "i32", 16, 16),
    ("gfx1200", "f16", "f32", 16, 16), ("gfx1200", "bf16", "f32", 16, 16),
    ("gfx1200", "f16", "f16", 16, 16), ("gfx1200", "bf16", "bf16", 16, 16),
    ("gfx1200", "iu8", "i32", 16, 8), ("gfx1200", "iu4", "i32", 16, 8), ("gfx1200", "iu4", "i32", 32, 8),
    *[("gfx1200", p, "f32", 16, 8) for p in ("fp8_fp8", "fp8_bf8", "bf8_fp8", "bf8_bf8")],
    ("gfx1250", "f32", "f32", 4, None), ("gfx1250", "f16", "f32", 32, None), ("gfx1250", "bf16", "f32", 32, None),
    ("gfx1250", "f16", "f16", 32, None), ("gfx1250", "bf16", "bf16", 32, None),
]


@dataclass(frozen=True)
class WmmaInstruction(OperandBits):
    """One WMMA instruction (16 x 16 x ``k``) on one wave32 arch."""

    name: str
    arch: str
    version: int
    k: int
    a_type: str
    b_type: str
    c_type: str
    cycles: Optional[int]
    intrinsic: str
    m: int = 16
    n: int = 16
    blocks: int = 1
    rocdl: str = field(default="", compare=False)

    def items_per_lane(self, operand: str) -> int:
        """Items per lane, counting gfx11's duplicated A/B items."""
        if operand not in ("A", "B", "C"):
            raise LayoutError(f"WMMA operand must be A, B or C, got {operand!r}")
        if operand in ("A", "B"):
            return self.k if self.version == 1 else self.m * self.k // WAVE32
        return self.m * self.n // WAVE32

    def registers(self, operand: str) -> int:
        """VGPRs of ``A``, ``B`` or ``C``; gfx11 16-bit results take one VGPR each."""
        items = self.items_per_lane(operand)
        bits = {"A": self.a_bits, "B": self.b_bits, "C": self.c_bits}[operand]
        if operand == "C" and self.version == 1:
            bits = 32
        return -(-items * bits // 32)

    def to_json(self) -> dict:
        return {
            "instruction": self.name, "mnemonic": self.name, "arch": self.arch, "wmma_version": self.version,
            "M": self.m, "N": self.n, "K": self.k, "blocks": 1,
            "types": {"A": self.a_type, "B": self.b_type, "C": self.c_type},
            "bits": {"A": self.a_bits, "B": self.b_bits, "C": self.c_bits},
            "registers": {op: self.registers(op) for op in "ABC"},
            "cycles": self.cycles, "flops": 2 * self.m * self.n * self.k,
            "rocdl": self.rocdl, "intrinsic": self.intrinsic,
        }


def _generate() -> dict:
    catalog: dict = {a: {} for a in WMMA_ARCHES}
    for arch, ins, out, k, cycles in _FAMILIES:
        a, b = ins.split("_") if "_" in ins else (ins, ins)
        name = f"v_wmma_{out}_16x16x{k}_{ins}"
        rocdl_tail = f"{out}.16x16x{k}.{ins}"
        catalog[arch][name] = WmmaInstruction(
            name=name, arch=arch, version=get_target(arch).wmma_version, k=k, a_type=a, b_type=b,
            c_type=out, cycles=cycles, intrinsic="llvm.amdgcn.wmma." + rocdl_tail.replace("_", "."),
            rocdl="rocdl.wmma." + rocdl_tail)
    return catalog


_CATALOG = _generate()


def wmma_instructions_for(arch: str) -> list:
    """Every catalogued WMMA of ``arch``."""
    return list(_CATALOG[catalog_arch(arch, _CATALOG, "WMMA")].values())


def get_wmma_instruction(arch: str, name: str) -> WmmaInstruction:
    """The WMMA spelled ``name`` (ISA mnemonic, LLVM intrinsic or ROCDL op) on ``arch``."""
    arch_name = catalog_arch(arch, _CATALOG, "WMMA")
    if not isinstance(name, str):
        raise LayoutError(f"instruction name must be a string, got {name!r}")
    key = name.strip().lower()
    for ins in _CATALOG[arch_name].values():
        if key in (ins.name, ins.intrinsic, ins.rocdl):
            return ins
    close = difflib.get_close_matches(key, list(_CATALOG[arch_name]), n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise LayoutError(f"unknown WMMA instruction {name!r} for {arch_name}{hint}")


def _input(ins: WmmaInstruction, operand: str) -> LinearLayout:
    bits = ins.a_bits if operand == "A" else ins.b_bits
    if ins.version == 1:  # whole K per lane, lane bit 4 broadcast
        kdim, ndim = ("dim1", "dim0") if operand == "A" else ("dim0", "dim1")
        lg_k = log2_exact(ins.k, "K")
        rows, cols = (ins.m, ins.k) if operand == "A" else (ins.k, ins.n)
        return bit_layout({"register": [(kdim, t) for t in range(lg_k)],
                           "lane": [(ndim, t) for t in range(4)] + [None]},
                          [("dim0", rows), ("dim1", cols)])
    items = ins.items_per_lane(operand)
    if ins.version == 2:
        run = min(items, RDNA4_K_RUN_BITS // bits)
    else:
        run = GFX1250_K_RUN_ITEMS[ins.a_type]
    return input_layout(operand, ins.m if operand == "A" else ins.n, ins.k, 1, chunk=run, lanes=WAVE32)


def _output(ins: WmmaInstruction) -> LinearLayout:
    lanes_j = [("dim1", t) for t in range(4)]
    if ins.version == 1:  # row = 2e + l4
        reg, l4 = [("dim0", t) for t in (1, 2, 3)], ("dim0", 0)
    else:  # row = e + 8*l4
        reg, l4 = [("dim0", t) for t in (0, 1, 2)], ("dim0", 3)
    return bit_layout({"register": reg, "lane": lanes_j + [l4]}, [("dim0", ins.m), ("dim1", ins.n)])


def layout_notes(ins: WmmaInstruction) -> list:
    """Where this instruction's layouts rest on an inference rather than AMD's calculator."""
    if ins.version == 3:
        return ["gfx1250: C/D from Triton's amd_wmma v3 rule; A/B from Triton's dot-operand rule "
                "(GFX1250_K_RUN_ITEMS), whose K order may differ from the ISA's"]
    return []


def wmma_layouts(instr, arch: Optional[str] = None) -> dict:
    """``{"A": LL, "B": LL, "C": LL}`` of a WMMA (an instance, or a name with ``arch``)."""
    if not isinstance(instr, WmmaInstruction):
        if arch is None:
            raise LayoutError("an instruction given by name needs an arch")
        instr = get_wmma_instruction(arch, instr)
    return {"A": _input(instr, "A"), "B": _input(instr, "B"), "C": _output(instr)}
