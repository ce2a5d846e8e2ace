"""The MFMA instruction catalog of gfx90a, gfx942 and gfx950, and their register layouts.

Every dense MFMA of the three CDNA targets is generated from a compact family
description (input type, output type, shapes with blocks and cycles, naming style);
nothing is typed in per instruction.  Sources: AMD's matrix instruction calculator
(instruction set, blocks, cycles of gfx90a = CDNA2 and gfx942 = CDNA3), the CDNA4 ISA
Table 28 (gfx950), ROCDLOps.td / LLVM for the intrinsic names
(``docs/amd_facts.md`` sections 2.8, 3.4 and 3.6).  The 2:4-sparse
``v_smfmac_*`` instructions are not catalogued.

``mfma_layouts(instr, arch)`` gives A (M x K), B (K x N) and C/D (M x N) as
``LinearLayout`` with in dims ``register`` (packed item index inside the lane,
register-major) and ``lane``, and out dims ``dim0`` (row), ``dim1`` (column), led by
``block`` for multi-block instructions.  They follow the general rule of
``mfma_layout`` (CDNA4 ISA 7.1.4), with two documented departures:

* ``v_mfma_f64_4x4x4_4b_f64`` C/D: AMD's calculator puts the 4 blocks in lane bits 2-3
  and the rows in lane bits 4-5; the ISA formula says the opposite.  We follow the
  calculator (``F64_4X4X4_CD_RULE``) on every arch: it is the tool AMD validates for
  CDNA2/CDNA3 and the CDNA4 ISA prints the same formula text, so nothing suggests
  gfx950 differs [I].
* gfx950 F8F6F4 with an FP8/BF8 operand: 16-item K runs (ISA FP8 tables); FP6/BF6 and
  FP4 follow the general rule (ISA FP6/FP4 tables).  Triton's ROCm fork treats FP6
  like FP8; we follow the ISA (``docs/hardware_mfma.md``).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, replace
from typing import Optional

from ..errors import LayoutError
from ..layout import LinearLayout
from .mfma_layout import WAVE64, input_layout, output_layout, scale_layout
from .targets import get_target, targets_with

__all__ = [
    "MfmaInstruction",
    "OperandBits",
    "TYPE_BITS",
    "F8F6F4_FORMATS",
    "F8_RUN_ITEMS",
    "F64_4X4X4_CD_RULE",
    "MFMA_ARCHES",
    "instructions_for",
    "get_instruction",
    "mfma_layouts",
    "mfma_scale_layouts",
    "layout_notes",
]

MFMA_ARCHES = targets_with(mma="mfma")  # the targets whose matrix instructions this catalog holds

#: Bits of one element of each data type in the registers.
TYPE_BITS = {
    "f64": 64, "f32": 32, "xf32": 32, "i32": 32, "f16": 16, "bf16": 16,
    "i8": 8, "iu8": 8, "fp8": 8, "bf8": 8, "fp6": 6, "bf6": 6, "fp4": 4, "iu4": 4,
}
#: F8F6F4 operand formats -> CBSZ (A) / BLGP (B) code [Q CDNA4-ISA 7.1.5].
F8F6F4_FORMATS = {"fp8": 0, "bf8": 1, "fp6": 2, "bf6": 3, "fp4": 4}
#: Consecutive K values per run of items for an 8-bit F8F6F4 operand [Q CDNA4-ISA FP8 tables].
F8_RUN_ITEMS = 16
#: Which rule gives the C/D layout of v_mfma_f64_4x4x4_4b_f64, per arch: "calculator"
#: (blocks in lane bits 2-3, rows in lane bits 4-5) or "isa" (the CDNA4-ISA 7.1.4
#: formula: rows in lane bits 2-3, blocks in 4-5).  [T CALC for gfx90a/gfx942; I for gfx950]
F64_4X4X4_CD_RULE = {"gfx90a": "calculator", "gfx942": "calculator", "gfx950": "calculator"}

# ------------------------------------------------------------------ the families
# Naming styles of the LLVM intrinsic: "legacy" = llvm.amdgcn.mfma.<out>.<M>x<N>x<K><in>[.1k]
# (the CDNA1/CDNA2 spelling, kept for the same instruction on later targets);
# "dotted" = llvm.amdgcn.mfma.<out>.<M>x<N>x<K>.<a>[.<b>] (gfx940 and later instructions).
_LEGACY, _LEGACY_1K, _DOTTED, _F8F6F4 = "legacy", "legacy.1k", "dotted", "f8f6f4"

_CDNA3P = ("gfx942", "gfx950")
_FP8_PAIRS = (("fp8", "fp8"), ("fp8", "bf8"), ("bf8", "fp8"), ("bf8", "bf8"))


@dataclass(frozen=True)
class _Family:
    arches: tuple
    a_type: str
    b_type: str
    c_type: str
    style: str
    shapes: tuple  # (M, N, K, blocks, cycles)
    scaled: bool = False


def _classic(k_multi: int, k_single: int, c32: int, c16: int) -> tuple:
    """The five classic shapes of one input type: 32x32 (2 blocks), 16x16 (4), 4x4 (16) with
    K = ``k_multi``, then single-block 32x32 (K = ``k_single``, ``c32`` cycles) and 16x16
    (K = 2 * ``k_single``, ``c16`` cycles)."""
    return ((32, 32, k_multi, 2, 64), (16, 16, k_multi, 4, 32), (4, 4, k_multi, 16, 8),
            (32, 32, k_single, 1, c32), (16, 16, 2 * k_single, 1, c16))


def _families() -> list:
    """The compact description every instruction is generated from."""
    fams = [
        _Family(MFMA_ARCHES, "f32", "f32", "f32", _LEGACY, _classic(1, 2, 64, 32)),
        _Family(("gfx90a",), "f16", "f16", "f32", _LEGACY, _classic(4, 8, 64, 32)),
        _Family(_CDNA3P, "f16", "f16", "f32", _LEGACY, _classic(4, 8, 32, 16)),
        _Family(("gfx90a",), "bf16", "bf16", "f32", _LEGACY, _classic(2, 4, 64, 32)),  # pre-"1k" bf16
        _Family(("gfx90a",), "bf16", "bf16", "f32", _LEGACY_1K, _classic(4, 8, 64, 32)),
        _Family(_CDNA3P, "bf16", "bf16", "f32", _LEGACY_1K, _classic(4, 8, 32, 16)),
        _Family(("gfx90a",), "i8", "i8", "i32", _LEGACY, _classic(4, 8, 64, 32)),
        _Family(_CDNA3P, "i8", "i8", "i32", _LEGACY, _classic(4, 8, 64, 32)[:3]),
        _Family(_CDNA3P, "i8", "i8", "i32", _DOTTED, ((32, 32, 16, 1, 32), (16, 16, 32, 1, 16))),
        _Family(("gfx90a", "gfx942"), "f64", "f64", "f64", _LEGACY, ((16, 16, 4, 1, 32), (4, 4, 4, 4, 16))),
        _Family(("gfx950",), "f64", "f64", "f64", _LEGACY, ((16, 16, 4, 1, 64), (4, 4, 4, 4, 32))),
        _Family(("gfx942",), "xf32", "xf32", "f32", _DOTTED, ((16, 16, 8, 1, 16), (32, 32, 4, 1, 32))),
    ]
    fams += [_Family(_CDNA3P, a, b, "f32", _DOTTED, ((16, 16, 32, 1, 16), (32, 32, 16, 1, 32))) for a, b in _FP8_PAIRS]
    fams += [_Family(("gfx950",), t, t, "f32", _DOTTED, ((16, 16, 32, 1, 16), (32, 32, 16, 1, 32))) for t in ("f16", "bf16")]
    fams.append(_Family(("gfx950",), "i8", "i8", "i32", _DOTTED, ((16, 16, 64, 1, 16), (32, 32, 32, 1, 32))))
    # F8F6F4: cycles listed for non-8-bit operands; doubled when either operand is 8-bit [Q CDNA4-ISA 7.1.5].
    for scaled in (False, True):
        fams.append(_Family(("gfx950",), "fp8", "fp8", "f32", _F8F6F4,
                            ((16, 16, 128, 1, 16), (32, 32, 64, 1, 32)), scaled=scaled))
    return fams


# ------------------------------------------------------------------ instruction
class OperandBits:
    """Bit widths of the A, B and C operands from ``a_type``/``b_type``/``c_type`` (``TYPE_BITS``)."""

    a_type: str
    b_type: str
    c_type: str

    @property
    def a_bits(self) -> int:
        return TYPE_BITS[self.a_type]

    @property
    def b_bits(self) -> int:
        return TYPE_BITS[self.b_type]

    @property
    def c_bits(self) -> int:
        return TYPE_BITS[self.c_type]


@dataclass(frozen=True)
class MfmaInstruction(OperandBits):
    """One MFMA instruction on one arch.

    ``name`` is the CDNA3-style spelling (``v_mfma_f32_32x32x8_f16``), the same on every
    arch; ``mnemonic`` is the arch's own assembler spelling (gfx90a:
    ``v_mfma_f32_32x32x8f16``).  ``m, n, k`` are per block; ``blocks`` is B.  Types are
    ``a_type``/``b_type``/``c_type`` with bit widths ``a_bits``/``b_bits``/``c_bits``.
    F8F6F4 instructions carry the operand formats chosen by CBSZ (A) and BLGP (B)
    (default fp8/fp8 = modifiers 0); ``with_formats`` picks others.  ``cycles`` is the
    issue-to-issue pass count on ``arch``.
    """

    name: str
    mnemonic: str
    arch: str
    m: int
    n: int
    k: int
    blocks: int
    a_type: str
    b_type: str
    c_type: str
    cycles: int
    intrinsic: str
    scaled: bool = False
    formats: tuple = ()
    available_on: tuple = field(default=(), compare=False)
    _base_cycles: int = field(default=0, repr=False, compare=False)

    @property
    def rocdl(self) -> str:
        """The MLIR ROCDL op (same spelling as the intrinsic after ``llvm.amdgcn.``)."""
        return "rocdl." + self.intrinsic[len("llvm.amdgcn."):]

    @property
    def is_f8f6f4(self) -> bool:
        return bool(self.formats)

    def items_per_lane(self, operand: str) -> int:
        """Packed items per lane of operand ``A``, ``B`` or ``C`` (no lane holds a duplicate)."""
        rows, cols = {"A": (self.m, self.k), "B": (self.k, self.n), "C": (self.m, self.n)}[_operand(operand)]
        return rows * cols * self.blocks // WAVE64

    def registers(self, operand: str) -> int:
        """VGPRs of operand ``A``, ``B`` or ``C`` (= D): items x bits / 32, rounded up."""
        bits = {"A": self.a_bits, "B": self.b_bits, "C": self.c_bits}[_operand(operand)]
        return -(-self.items_per_lane(operand) * bits // 32)

    @property
    def flops(self) -> int:
        return 2 * self.m * self.n * self.k * self.blocks

    # ---- modifiers
    @property
    def supports_cbsz_abid(self) -> bool:
        """CBSZ/ABID broadcast of A blocks: multi-block, non-f64 instructions [T CALC, Q ISA 7.1.6]."""
        return self.blocks > 1 and self.a_type != "f64" and not self.is_f8f6f4

    @property
    def supports_blgp(self) -> bool:
        """BLGP lane permutation of B as the calculator reports it [T CALC]: every non-f64
        instruction on gfx90a; on gfx942/gfx950 the f32 ones and the multi-block ones.
        (f64 reuses BLGP as negate bits, F8F6F4 as the B format.)"""
        if self.a_type == "f64" or self.is_f8f6f4:
            return False
        return self.arch == "gfx90a" or self.a_type == "f32" or self.blocks > 1

    def with_formats(self, a_format: str, b_format: str) -> "MfmaInstruction":
        """The F8F6F4 instruction with A in ``a_format`` and B in ``b_format``."""
        if not self.is_f8f6f4:
            raise LayoutError(f"{self.name} has fixed operand types; formats apply to the f8f6f4 instructions only")
        for what, f in (("A", a_format), ("B", b_format)):
            if not isinstance(f, str) or f not in F8F6F4_FORMATS:
                raise LayoutError(f"{self.name}: unknown {what} format {f!r}; one of {', '.join(F8F6F4_FORMATS)}")
        eight_bit = TYPE_BITS[a_format] == 8 or TYPE_BITS[b_format] == 8
        return replace(self, a_type=a_format, b_type=b_format,
                       cycles=self._base_cycles * (2 if eight_bit else 1))

    def to_json(self) -> dict:
        out = {
            "instruction": self.name, "mnemonic": self.mnemonic, "arch": self.arch,
            "M": self.m, "N": self.n, "K": self.k, "blocks": self.blocks,
            "types": {"A": self.a_type, "B": self.b_type, "C": self.c_type},
            "bits": {"A": self.a_bits, "B": self.b_bits, "C": self.c_bits},
            "registers": {op: self.registers(op) for op in "ABC"},
            "cycles": self.cycles, "flops": self.flops,
            "rocdl": self.rocdl, "intrinsic": self.intrinsic,
            "available_on": list(self.available_on),
            "modifiers": {"cbsz_abid": self.supports_cbsz_abid, "blgp": self.supports_blgp},
        }
        if self.is_f8f6f4:
            out["formats"] = list(self.formats)
            out["scaled"] = self.scaled
        return out


def _operand(op: str) -> str:
    op = op.upper() if isinstance(op, str) else op
    if op == "D":
        return "C"
    if op not in ("A", "B", "C"):
        raise LayoutError(f"MFMA operand must be A, B or C (D), got {op!r}")
    return op


# ------------------------------------------------------------------ naming
def _in_suffix(fam: _Family) -> str:
    if fam.style == _F8F6F4:
        return "f8f6f4"
    if TYPE_BITS[fam.a_type] == 8 and fam.a_type != "i8":  # fp8/bf8 always name both operands
        return f"{fam.a_type}_{fam.b_type}"
    return fam.a_type


def _cdna3_name(fam: _Family, m: int, n: int, k: int, b: int) -> str:
    blk = f"_{b}b" if b > 1 else ""
    op = "v_mfma_scale" if fam.scaled else "v_mfma"
    return f"{op}_{fam.c_type}_{m}x{n}x{k}{blk}_{_in_suffix(fam)}"


def _cdna2_name(fam: _Family, m: int, n: int, k: int) -> str:
    return f"v_mfma_{fam.c_type}_{m}x{n}x{k}{fam.a_type}{'_1k' if fam.style == _LEGACY_1K else ''}"


def _intrinsic(fam: _Family, m: int, n: int, k: int) -> str:
    shape = f"{m}x{n}x{k}"
    if fam.style in (_LEGACY, _LEGACY_1K):
        tail = f"{shape}{fam.a_type}{'.1k' if fam.style == _LEGACY_1K else ''}"
    elif fam.style == _DOTTED:
        tail = f"{shape}.{_in_suffix(fam).replace('_', '.')}"
    else:  # F8F6F4: LLVM has only the scale intrinsic; with scaling off it selects the plain op [I]
        tail = f"{shape}.f8f6f4"
        return f"llvm.amdgcn.mfma.scale.{fam.c_type}.{tail}"
    return f"llvm.amdgcn.mfma.{fam.c_type}.{tail}"


def _generate() -> dict:
    """``{arch: {name: MfmaInstruction}}`` for every catalogued arch."""
    catalog: dict = {a: {} for a in MFMA_ARCHES}
    for fam in _families():
        for m, n, k, b, cycles in fam.shapes:
            name = _cdna3_name(fam, m, n, k, b)
            for arch in fam.arches:
                if name in catalog[arch]:
                    raise LayoutError(f"catalog: {name} defined twice for {arch}")  # pragma: no cover
                catalog[arch][name] = MfmaInstruction(
                    name=name,
                    mnemonic=_cdna2_name(fam, m, n, k) if arch == "gfx90a" else name,
                    arch=arch, m=m, n=n, k=k, blocks=b,
                    a_type=fam.a_type, b_type=fam.b_type, c_type=fam.c_type,
                    cycles=cycles * (2 if fam.style == _F8F6F4 else 1),  # default formats fp8/fp8
                    intrinsic=_intrinsic(fam, m, n, k), scaled=fam.scaled,
                    formats=tuple(F8F6F4_FORMATS) if fam.style == _F8F6F4 else (),
                    _base_cycles=cycles,
                )
    where: dict = {}
    for arch, insts in catalog.items():
        for name in insts:
            where.setdefault(name, []).append(arch)
    return {arch: {name: replace(i, available_on=tuple(where[name])) for name, i in insts.items()}
            for arch, insts in catalog.items()}


_CATALOG = _generate()


def _aliases(arch: str) -> dict:
    """Every accepted spelling on ``arch`` -> canonical name (ambiguous spellings dropped)."""
    table: dict = {}
    clash: set = set()
    for name, ins in _CATALOG[arch].items():
        spellings = {name, ins.mnemonic, _cdna2_spelling(ins), ins.intrinsic, ins.rocdl}
        if ins.is_f8f6f4 and not ins.scaled:
            spellings -= {ins.intrinsic, ins.rocdl}  # shared with the scaled instruction
        for s in spellings:
            if s in table and table[s] != name:
                clash.add(s)
            table[s] = name
    for s in clash:
        del table[s]
    return table


def _cdna2_spelling(ins: MfmaInstruction) -> str:
    """The CDNA2-style spelling of a CDNA3 name (accepted on every arch)."""
    if ins.is_f8f6f4 or ins.a_type != ins.b_type or ins.a_type in ("xf32", "fp8", "bf8"):
        return ins.name
    one_k = "_1k" if ins.a_type == "bf16" and ins.intrinsic.endswith(".1k") else ""
    return f"v_mfma_{ins.c_type}_{ins.m}x{ins.n}x{ins.k}{ins.a_type}{one_k}"


_ALIASES = {arch: _aliases(arch) for arch in MFMA_ARCHES}


# ------------------------------------------------------------------ lookup
def catalog_arch(arch: str, catalog: dict, kind: str) -> str:
    """The gfx name of ``arch`` (or alias) if ``catalog`` has it, else ``LayoutError``."""
    target = get_target(arch)
    if target.name not in catalog:
        raise LayoutError(f"arch {arch!r} ({target.name}) has no {kind}; {kind} arches: {', '.join(catalog)}")
    return target.name


def _mfma_arch(arch: str) -> str:
    return catalog_arch(arch, _CATALOG, "MFMA")


def instructions_for(arch: str) -> list:
    """Every catalogued MFMA instruction of ``arch`` (a gfx name or alias), in catalog order."""
    return list(_CATALOG[_mfma_arch(arch)].values())


def get_instruction(arch: str, name: str, a_format: Optional[str] = None,
                    b_format: Optional[str] = None) -> MfmaInstruction:
    """The instruction spelled ``name`` on ``arch``.

    Accepts the CDNA3 spelling, the arch mnemonic, the CDNA2 spelling, the LLVM
    intrinsic and the ROCDL op name (case-insensitive).  ``a_format``/``b_format``
    choose F8F6F4 operand formats.  Unknown names raise ``LayoutError`` with the
    closest catalogued names.
    """
    arch_name = _mfma_arch(arch)
    if not isinstance(name, str):
        raise LayoutError(f"instruction name must be a string, got {name!r}")
    key = name.strip().lower()
    canonical = _ALIASES[arch_name].get(key)
    if canonical is None:
        elsewhere = [a for a in MFMA_ARCHES if key in _ALIASES[a]]
        if elsewhere:
            raise LayoutError(f"MFMA instruction {name!r} does not exist on {arch_name}; "
                              f"it is available on {', '.join(elsewhere)}")
        close = difflib.get_close_matches(key, list(_ALIASES[arch_name]), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(dict.fromkeys(_ALIASES[arch_name][c] for c in close))}?" if close else ""
        raise LayoutError(f"unknown MFMA instruction {name!r} for {arch_name}{hint}")
    ins = _CATALOG[arch_name][canonical]
    if a_format is not None or b_format is not None:
        ins = ins.with_formats(a_format or ins.a_type, b_format or ins.b_type)
    return ins


def _resolve(instr, arch: Optional[str]) -> MfmaInstruction:
    if isinstance(instr, MfmaInstruction):
        if arch is not None and _mfma_arch(arch) != instr.arch:
            return get_instruction(arch, instr.name, *(
                (instr.a_type, instr.b_type) if instr.is_f8f6f4 else (None, None)))
        return instr
    if arch is None:
        raise LayoutError("an instruction given by name needs an arch")
    return get_instruction(arch, instr)


# ------------------------------------------------------------------ layouts
def _operand_layout(ins: MfmaInstruction, operand: str) -> LinearLayout:
    nonk = ins.m if operand == "A" else ins.n
    fmt = ins.a_type if operand == "A" else ins.b_type
    chunk = F8_RUN_ITEMS if ins.is_f8f6f4 and TYPE_BITS[fmt] == 8 else None
    return input_layout(operand, nonk, ins.k, ins.blocks, chunk=chunk)


def mfma_layouts(instr, arch: Optional[str] = None) -> dict:
    """``{"A": LL, "B": LL, "C": LL}`` of ``instr`` (an ``MfmaInstruction`` or a name).

    In dims ``register`` (packed item e: 16-bit data item e is half e%2 of VGPR e//2,
    8-bit byte e%4 of VGPR e//4, 4-bit nibble e%8 of VGPR e//8, 6-bit bits 6e..6e+5 of the
    concatenated VGPRs, 32-bit VGPR e, 64-bit the VGPR pair e) and ``lane`` (64).  Out
    dims ``[block,] dim0, dim1``: A is M x K, B is K x N, C (= D) is M x N.
    """
    ins = _resolve(instr, arch)
    h = 1 if ins.c_type == "f64" else 4
    rule = "isa"
    if ins.a_type == "f64" and (ins.m, ins.n, ins.k, ins.blocks) == (4, 4, 4, 4):
        rule = F64_4X4X4_CD_RULE.get(ins.arch, "calculator")
        if rule not in ("calculator", "isa"):
            raise LayoutError(f"F64_4X4X4_CD_RULE[{ins.arch!r}] = {rule!r}; expected 'calculator' or 'isa'")
    return {
        "A": _operand_layout(ins, "A"),
        "B": _operand_layout(ins, "B"),
        "C": output_layout(ins.m, ins.n, ins.blocks, h, rows_before_blocks=(rule == "isa")),
    }


def layout_notes(ins: MfmaInstruction) -> list:
    """Where this instruction's layouts rest on a choice between disagreeing sources."""
    notes = []
    if ins.a_type == "f64" and (ins.m, ins.blocks) == (4, 4):
        notes.append(f"C/D follows the {F64_4X4X4_CD_RULE.get(ins.arch, 'calculator')} rule (F64_4X4X4_CD_RULE): AMD's "
                     "calculator puts blocks in lane bits 2-3 and rows in 4-5; the CDNA4-ISA formula swaps them")
    if ins.is_f8f6f4:
        notes.append("FP8/BF8 operands use 16-item K runs (ISA FP8 tables); FP6/FP4 the general rule (ISA tables; "
                     "Triton's ROCm fork treats FP6 like FP8); gfx950 layouts are ISA-derived, not tool-verified")
    elif ins.arch == "gfx950" and "gfx942" not in ins.available_on:
        notes.append("gfx950-only instruction: layout from the CDNA4-ISA rule, not tool-verified")
    return notes


def mfma_scale_layouts(instr, arch: Optional[str] = None) -> dict:
    """``{"A_scale": LL, "B_scale": LL}`` of a ``v_mfma_scale_*`` instruction.

    One E8M0 scale per lane and per 32 K values: A scales are M x (K/32)
    (``dim0`` row, ``dim1`` K-block), B scales (K/32) x N.
    """
    ins = _resolve(instr, arch)
    if not ins.scaled:
        raise LayoutError(f"{ins.name} has no scale operands (only v_mfma_scale_* instructions do)")
    return {"A_scale": scale_layout("A", ins.m, ins.k), "B_scale": scale_layout("B", ins.n, ins.k)}
