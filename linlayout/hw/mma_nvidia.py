"""NVIDIA matrix fragments as GF(2) bit maps: ``mma.sync`` / ``wgmma`` operands and the
``ldmatrix`` / ``stmatrix`` / ``movmatrix`` 8x8 fragments (docs/nvidia_facts.md sections 3, 4).

Every map is a bit permutation (like :mod:`linlayout.hw.mfma_layout`): each bit of the
hardware index -- ``register`` (the element index inside the lane, low half or low byte
first), ``lane``, and ``warp`` (inside a wgmma warpgroup) -- lands on one bit of one tensor
coordinate.  With ``g = lane >> 2`` and ``t = lane & 3``:

* ``mma.m16n8k16`` (f16/bf16 A, B): A (16x16) element ``i`` of lane ``l`` is
  (row ``g + 8*i1``, col ``2t + i0 + 8*i2``); B (16x8) is (k ``2t + i0 + 8*i1``, n ``g``);
  C/D (16x8) is (row ``g + 8*i1``, col ``2t + i0``), f32 or f16 alike.
* ``mma.m16n8k32`` (8-bit A, B; e4m3/e5m2 need sm_89+): A (16x32) is (row ``g + 8*i2``,
  col ``4t + i0 + 2*i1 + 16*i3``); B (32x8) is (k ``4t + i0 + 2*i1 + 16*i2``, n ``g``); C as above.
* ``wgmma.m64nNk16`` (sm_90a): the accumulator is the m16n8 C layout repeated every 8 columns
  (register bits 2.. -> n8, n16, ...), warp ``w`` of the warpgroup owning rows ``16w ..``;
  A from registers is the m16n8k16 A layout per warp.
* ``ldmatrix``/``stmatrix .xN`` (b16): element (row ``r``, col ``c``) of matrix ``m`` is half
  ``c % 2`` of register ``m`` of lane ``4r + c/2`` (``.trans``: rows and columns swap); the row
  addresses come from lane ``8m + r``.  ``movmatrix.trans`` maps the plain fragment to the
  ``.trans`` one.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from ..errors import LayoutError
from ..layout import LinearLayout
from .mfma_layout import bit_layout, log2_exact
from .targets import get_target, targets_with

__all__ = [
    "NVIDIA_MMA_ARCHES",
    "NvidiaMmaInstruction",
    "get_nvidia_mma",
    "matrix_address_layout",
    "matrix_fragment_layout",
    "nvidia_mma_instructions_for",
    "nvidia_mma_layouts",
]

NVIDIA_MMA_ARCHES = targets_with(mma="mma_sync")
_ARCH_ORDER = ("sm_80", "sm_89", "sm_90")  # sm_89 (Ada) is not a target: it only gates fp8 mma.sync
TYPE_BITS = {"f32": 32, "s32": 32, "f16": 16, "bf16": 16, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8}


@dataclass(frozen=True)
class NvidiaMmaInstruction:
    """One NVIDIA matrix instruction: ``m x n x k``, operand types, the first arch that has it,
    its PTX spelling and whether A/B come from registers (wgmma: B from shared memory only)."""

    name: str
    ptx: str
    m: int
    n: int
    k: int
    a_type: str
    c_type: str
    min_arch: str
    warps: int = 1  # 4 for wgmma (a warpgroup)

    @property
    def b_type(self) -> str:
        return self.a_type

    @property
    def is_wgmma(self) -> bool:
        return self.warps > 1

    def registers(self, operand: str) -> int:
        """32-bit registers per lane of operand ``A``, ``B`` or ``C`` (0: not in registers)."""
        if operand == "B" and self.is_wgmma:
            return 0
        rows, cols = {"A": (self.m, self.k), "B": (self.k, self.n), "C": (self.m, self.n)}[operand]
        bits = TYPE_BITS[self.c_type if operand == "C" else self.a_type]
        return rows * cols * bits // (32 * 32 * self.warps)

    def to_json(self) -> dict:
        return {
            "instruction": self.name, "mnemonic": self.ptx, "M": self.m, "N": self.n, "K": self.k, "blocks": 1,
            "types": {"A": self.a_type, "B": self.b_type, "C": self.c_type},
            "bits": {"A": TYPE_BITS[self.a_type], "B": TYPE_BITS[self.b_type], "C": TYPE_BITS[self.c_type]},
            "registers": {op: self.registers(op) for op in "ABC"}, "cycles": None,
            "warps": self.warps, "min_arch": self.min_arch,
        }


def _catalog() -> list[NvidiaMmaInstruction]:
    out = []
    for a in ("f16", "bf16"):
        for c in ("f32", "f16") if a == "f16" else ("f32",):
            out.append(NvidiaMmaInstruction(f"mma.m16n8k16.{c}.{a}", f"mma.sync.aligned.m16n8k16.row.col.{c}.{a}.{a}.{c}",
                                            16, 8, 16, a, c, "sm_80"))
    for a, arch in (("s8", "sm_80"), ("u8", "sm_80"), ("e4m3", "sm_89"), ("e5m2", "sm_89")):
        c = "s32" if a in ("s8", "u8") else "f32"
        out.append(NvidiaMmaInstruction(f"mma.m16n8k32.{c}.{a}", f"mma.sync.aligned.m16n8k32.row.col.{c}.{a}.{a}.{c}",
                                        16, 8, 32, a, c, arch))
    for n in (8, 16, 32, 64, 128, 256):
        out.append(NvidiaMmaInstruction(f"wgmma.m64n{n}k16.f32.f16", f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.f16.f16",
                                        64, n, 16, "f16", "f32", "sm_90", warps=4))
    return out


_CATALOG = {ins.name: ins for ins in _catalog()}
#: Short spellings: ``mma.m16n8k16.f16`` = f16 inputs with f32 accumulation, and the like.
_SHORT = {f"{ins.name.rsplit('.', 2)[0]}.{ins.a_type}": ins.name for ins in _CATALOG.values() if ins.c_type != "f16"}


def _arch(arch: str) -> str:
    t = get_target(arch)
    if t.name not in NVIDIA_MMA_ARCHES:
        raise LayoutError(f"arch {arch!r} ({t.name}) has no mma.sync/wgmma; NVIDIA arches: {', '.join(NVIDIA_MMA_ARCHES)}")
    return t.name


def _available(ins: NvidiaMmaInstruction, arch: str) -> bool:
    return _ARCH_ORDER.index(ins.min_arch) <= _ARCH_ORDER.index(arch)


def nvidia_mma_instructions_for(arch: str) -> list[NvidiaMmaInstruction]:
    """Every catalogued matrix instruction of ``arch`` (sm_80, sm_90)."""
    name = _arch(arch)
    return [ins for ins in _CATALOG.values() if _available(ins, name)]


def get_nvidia_mma(arch: str, name: str) -> NvidiaMmaInstruction:
    """The instruction spelled ``name`` (catalog name, short name or PTX) on ``arch``; a
    LayoutError naming the target when ``arch`` lacks it."""
    arch_name = _arch(arch)
    if not isinstance(name, str):
        raise LayoutError(f"instruction name must be a string, got {name!r}")
    key = name.strip().lower()
    key = _SHORT.get(key, key)
    ins = _CATALOG.get(key) or next((i for i in _CATALOG.values() if i.ptx == key), None)
    if ins is None:
        close = difflib.get_close_matches(key, list(_CATALOG) + list(_SHORT), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise LayoutError(f"unknown NVIDIA matrix instruction {name!r} for {arch_name}{hint}")
    if not _available(ins, arch_name):
        raise LayoutError(f"{ins.name} needs {ins.min_arch} or later; {arch_name} does not have it")
    return ins


def _bits(dim: str, *bits: int) -> list:
    return [(dim, b) for b in bits]


def nvidia_mma_layouts(ins: NvidiaMmaInstruction) -> dict[str, LinearLayout]:
    """``{"A": LL, "B": LL, "C": LL}`` (B absent for wgmma: it reads B from shared memory).

    In dims ``register`` (element index in the lane), ``lane`` and, for wgmma, ``warp``;
    out dims ``dim0, dim1`` (A: M x K, B: K x N, C: M x N)."""
    eight_bit = TYPE_BITS[ins.a_type] == 8
    lg_n = log2_exact(ins.n, "N")
    k_lane = (2, 3) if eight_bit else (1, 2)  # k bits of lane bits 0, 1
    k_reg = (0, 1) if eight_bit else (0,)  # low k bits of the register index
    k_high = 4 if eight_bit else 3  # the k bit of the last register bit
    warp = {"warp": _bits("dim0", 4, 5)} if ins.is_wgmma else {}
    m_lane = _bits("dim0", 0, 1, 2)
    out = {"A": bit_layout({"register": _bits("dim1", *k_reg) + [("dim0", 3), ("dim1", k_high)],
                            "lane": _bits("dim1", *k_lane) + m_lane, **warp}, [("dim0", ins.m), ("dim1", ins.k)])}
    if not ins.is_wgmma:
        out["B"] = bit_layout({"register": _bits("dim0", *k_reg, k_high),
                               "lane": _bits("dim0", *k_lane) + _bits("dim1", 0, 1, 2)},
                              [("dim0", ins.k), ("dim1", ins.n)])
    out["C"] = bit_layout({"register": [("dim1", 0), ("dim0", 3)] + _bits("dim1", *range(3, lg_n)),
                           "lane": _bits("dim1", 1, 2) + m_lane, **warp}, [("dim0", ins.m), ("dim1", ins.n)])
    return out


def matrix_fragment_layout(num: int, trans: bool = False) -> LinearLayout:
    """The data side of ``ldmatrix``/``stmatrix .x{num}[.trans]`` (b16): ``register`` (bit 0 = the
    half of a 32-bit register, bits 1.. = the matrix index) x ``lane`` -> ``matrix, row, col`` of
    the stored 8x8 matrices.  Plain: half -> col 1, lane bits 0-1 -> col 2, 4, lane bits 2-4 ->
    row 1, 2, 4; ``.trans`` swaps row and col.  ``movmatrix.trans`` maps the plain fragment
    to the ``.trans`` one."""
    lg = _matrix_count_bits(num)
    col, row = ("row", "col") if trans else ("col", "row")
    return bit_layout({"register": [(col, 0)] + _bits("matrix", *range(lg)),
                       "lane": [(col, 1), (col, 2), (row, 0), (row, 1), (row, 2)]},
                      [("matrix", num), ("row", 8), ("col", 8)])


def matrix_address_layout(num: int) -> LinearLayout:
    """The address side of ``ldmatrix``/``stmatrix .x{num}``: ``lane -> matrix, row`` whose
    16-byte row address that lane supplies (lanes ``8*num ..`` are ignored: zero columns)."""
    lg = _matrix_count_bits(num)
    return bit_layout({"lane": _bits("row", 0, 1, 2) + _bits("matrix", *range(lg)) + [None] * (2 - lg)},
                      [("matrix", num), ("row", 8)])


def _matrix_count_bits(num: int) -> int:
    if num not in (1, 2, 4):
        raise LayoutError(f"ldmatrix/stmatrix move 1, 2 or 4 matrices (.x1/.x2/.x4), not {num!r}")
    return log2_exact(num, ".xN")
