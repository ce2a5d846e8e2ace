"""Generate and measure the public conversion corpora: ``benchmarks/data/triton_<family>_corpus.json``.

Usage (Triton 3.9 from PyPI; no GPU, it compiles for the targets on the CPU)::

    python benchmarks/make_corpus.py [--family amd|nvidia] [--out FILE] [--limit N] [--batch B]
                                     [--case-seconds S] [--assemble-only]
    python benchmarks/make_corpus.py --calibrate benchmarks/data/triton_amd_baseline.json

A *family* (:data:`FAMILIES`) is a set of targets with its cases and its way of counting:
``amd`` (gfx90a, gfx942, gfx950; wave64; amdgcn) -> ``triton_amd_corpus.json`` and ``nvidia``
(sm_80, sm_90; warps of 32; PTX) -> ``triton_nvidia_corpus.json``.

Each case is one ``ttg.convert_layout`` between two Triton encodings of a ``shape`` tile in one
``dtype`` on one ``arch`` with ``num_warps`` waves.  A Gluon kernel loads the tile in the source
encoding, converts it and stores it; it is compiled with the family's ``GPUTarget`` (``("hip",
arch, 64)`` or ``("cuda", 80 | 90, 32)``) and the instructions that the assembly's ``.loc``
directives attribute to the ``convert_layout`` line are counted, less the global loads and
stores interleaved with them (``counted_by: "source_line"``): the amdgcn of one wave with
``linlayout.lowering.isa.isa_counts`` (the baseline's classes, docs/benchmarks.md), the PTX of
one warp (``asm["ptx"]``) with ``linlayout.lowering.ptx_counts.ptx_counts``.  On the 48 baseline cases (``--calibrate``) this gives the
baseline's totals within 3 instructions on the 24 fp32 cases and on 17 of the 24 fp16 ones.
Inline-asm markers that take the registers as operands do not work here: with 16-bit elements
they unpack the registers inside the region, with 8-bit ones they do not reach the ISA, and with
hundreds of operands LLVM's register allocator stalls.

The layouts are stored as layout JSON (contract.md 1) from Triton's own ``to_linear_layout``
of the same encodings; ``linlayout.encodings`` puts the same elements in every lane and wave
(tests/test_corpus.py; docs/benchmarks.md says where the register order differs).  A file has
the baseline's format (``triton_amd_convert_baseline/v1``; the NVIDIA one names itself
``triton_nvidia_convert_baseline/v1`` and its ``triton`` counts have the PTX classes) plus
``triton_src_params`` / ``triton_dst_params``, the encodings as Triton's params (the objects
``linlayout.encodings.from_triton`` takes, without ``shape``), and ``failed`` (the candidates
Triton did not compile, with why), so
``linlayout bench conversions --baseline benchmarks/data/triton_amd_corpus.json`` runs it.

Triton aborts the process on some inputs, so cases are compiled by a worker subprocess
(``--worker``), one batch at a time; a case that kills its worker is recorded under ``failed``.
The amd family's targets have no WMMA, so its corpus has none.  On sm_80 Triton 3.9 has no
e4m3 type, so the nvidia family's fp8 cases are e5m2 there (e4m3 on sm_90); the layouts only see
the element width.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

FORMAT = "triton_amd_convert_baseline/v1"
OUT = Path(__file__).resolve().parent / "data" / "triton_amd_corpus.json"
ARCHS = ("gfx90a", "gfx942", "gfx950")
DTYPES = ("fp32", "fp16", "bf16", "fp8", "i8")
#: MFMA version of each arch in Triton's AMDMFMALayout.
MFMA_VERSION = {"gfx90a": 2, "gfx942": 3, "gfx950": 4}
#: Triton's pointer element type per (dtype, arch): fp8 is e4m3fnuz on gfx942, e4m3fn elsewhere.
TRITON_DTYPE = {"fp32": "fp32", "fp16": "fp16", "bf16": "bf16", "i8": "i8"}
FP8_TRITON = {"gfx90a": "fp8e4nv", "gfx942": "fp8e4b8", "gfx950": "fp8e4nv"}
ELEMENT_BITS = {"fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "i8": 8}
#: Triton's dot-operand encoding name of each parent encoding.
DOT_ENCODING = {"amd_mfma": "amd_mfma_dot_operand", "amd_wmma": "amd_wmma_dot_operand",
                "nvidia_mma": "dot_operand_of_nvidia_mma"}
#: Most elements one lane may hold in one layout (keeps the kernels free of spills).
MAX_ELEMENTS_PER_LANE = 128


# ----------------------------------------------------------------------------- case generation

def mfma_k(arch: str, element_bits: int, m: int) -> int:
    """The K of the MFMA instruction Triton picks for an ``m x m`` tile of ``element_bits`` operands."""
    k32 = {32: 2, 16: 8, 8: 16}[element_bits] * (2 if arch == "gfx950" and element_bits < 32 else 1)
    return k32 if m == 32 else 2 * k32


def k_widths(arch: str, element_bits: int) -> tuple[int, ...]:
    """The kWidth values of dot operands for elements of ``element_bits`` on ``arch``."""
    if element_bits == 32:
        return (1, 2)
    if element_bits == 16:
        return (4, 8) if arch == "gfx950" else (4,)
    return (8, 16) if arch == "gfx950" else (8,)


def warps_2d(num_warps: int, rng: random.Random) -> list[int]:
    """A random factorization ``[w0, w1]`` of ``num_warps``."""
    w0 = 1 << rng.randint(0, num_warps.bit_length() - 1)
    return [w0, num_warps // w0]


def mfma_spec(arch: str, dtype: str, m: int, transposed: bool, warps: list[int]) -> dict:
    return {"kind": "mfma", "version": MFMA_VERSION[arch], "instr": [m, m, mfma_k(arch, ELEMENT_BITS[dtype], m)],
            "transposed": transposed, "warps": warps}


def blocked_spec(size: list[int], threads: list[int], warps: list[int], order: list[int]) -> dict:
    return {"kind": "blocked", "size": size, "threads": threads, "warps": warps, "order": order}


def random_blocked(rng: random.Random, num_warps: int, element_bits: int, wave_size: int = 64) -> dict:
    """A blocked encoding with random vector size, lane split (of ``wave_size`` lanes), wave split and order."""
    vec = rng.choice([1, 2, 4, 8] if element_bits < 32 else [1, 2, 4])
    t1 = 1 << rng.randint(0, wave_size.bit_length() - 1)
    order = rng.choice([[1, 0], [0, 1]])
    size = [1, vec] if order == [1, 0] else [vec, 1]
    if rng.random() < 0.2:
        size = [2, 2]
    return blocked_spec(size, [wave_size // t1, t1], warps_2d(num_warps, rng), order)


def slice_parent(rng: random.Random, dim: int, num_warps: int, wave_size: int = 64) -> dict:
    """A blocked encoding whose lanes lie mostly along the dimension that slicing ``dim`` keeps."""
    vec, across = rng.choice([1, 2, 4]), rng.choice([1, 2, 4])
    if dim == 0:
        return blocked_spec([1, vec], [across, wave_size // across], warps_2d(num_warps, rng), [1, 0])
    return blocked_spec([vec, 1], [wave_size // across, across], warps_2d(num_warps, rng), [0, 1])


def label(spec: dict) -> str:
    """A short readable name of an encoding spec."""
    k = spec["kind"]
    if k == "mfma":
        return f"mfma{spec['instr'][0]}{'T' if spec['transposed'] else ''}"
    if k == "mma":
        return f"mma{spec['version']}.{'x'.join(map(str, spec['instr'][:2]))}"
    if k == "wmma":
        return f"wmma{spec['version']}.{spec['instr'][0]}x{spec['instr'][2]}{'T' if spec['transposed'] else ''}"
    if k == "dot":
        parent = spec["parent"]
        tag = parent["instr"][0] if parent["kind"] == "mfma" else label(parent)
        return f"dot{'AB'[spec['op']]}{tag}(kw{spec['k_width']})"
    if k == "slice":
        return f"slice{spec['dim']}({label(spec['parent'])})"
    s = spec
    return f"blocked[{s['size'][0]}x{s['size'][1]},t{s['threads'][0]}x{s['threads'][1]},o{s['order'][0]}{s['order'][1]}]"


def triton_params(spec: dict) -> dict:
    """The encoding of ``spec`` as Triton's params (``linlayout.encodings.from_triton`` without shape)."""
    k = spec["kind"]
    if k == "mfma":
        return {"encoding": "amd_mfma", "version": spec["version"], "instrShape": spec["instr"],
                "isTransposed": spec["transposed"], "warpsPerCTA": spec["warps"]}
    if k == "mma":
        return {"encoding": "nvidia_mma", "versionMajor": spec["version"], "versionMinor": 0,
                "warpsPerCTA": spec["warps"], "instrShape": spec["instr"]}
    if k == "wmma":
        return {"encoding": "amd_wmma", "version": spec["version"], "warpsPerCTA": spec["warps"],
                "isTransposed": spec["transposed"], "instrShape": spec["instr"]}
    if k == "dot":
        parent = triton_params(spec["parent"])
        return {"encoding": DOT_ENCODING[parent["encoding"]], "opIdx": spec["op"], "kWidth": spec["k_width"],
                "parent": {k: v for k, v in parent.items() if k != "encoding"}}
    if k == "slice":
        return {"encoding": "slice", "dim": spec["dim"], "parent": triton_params(spec["parent"])}
    return {"encoding": "blocked", "sizePerThread": spec["size"], "threadsPerWarp": spec["threads"],
            "warpsPerCTA": spec["warps"], "order": spec["order"]}


def finish(record: dict) -> dict:
    """A measured record as stored: ``triton_src``/``triton_dst`` names, the params as Triton's."""
    out = {k: v for k, v in record.items() if k != "index"}
    for side in ("src", "dst"):
        spec = record[f"triton_{side}_params"]
        out[f"triton_{side}"] = label(spec)
        out[f"triton_{side}_params"] = triton_params(spec)
    return out


def elements_per_lane(shape: list[int], num_warps: int, wave_size: int = 64) -> float:
    total = 1
    for s in shape:
        total *= s
    return total / (wave_size * num_warps)


def pairs_for(arch: str, dtype: str, rng: random.Random) -> list[tuple[dict, dict, list[int], int]]:
    """(src, dst, shape, num_warps) candidates of one (arch, dtype): every kind of conversion."""
    bits = ELEMENT_BITS[dtype]
    out = []
    for num_warps in (1, 2, 4, 8):
        w = warps_2d(num_warps, rng)
        m = rng.choice([16, 32])
        shape = [rng.choice([16, 32, 64, 128, 256]), rng.choice([16, 32, 64, 128, 256])]
        if elements_per_lane(shape, num_warps) > MAX_ELEMENTS_PER_LANE:
            shape = [64, 64]
        t = rng.random() < 0.5
        acc = mfma_spec(arch, dtype, m, t, w)
        other = mfma_spec(arch, dtype, 48 - m, rng.random() < 0.5, w)
        # accumulator -> accumulator of the other instruction size, and -> its transpose
        out.append((acc, other, shape, num_warps))
        out.append((acc, dict(acc, transposed=not t), shape, num_warps))
        # accumulator -> dot operand A/B with several kWidth (a chained-dot P operand)
        op = rng.choice([0, 1])
        kw = rng.choice(k_widths(arch, bits))
        out.append((acc, {"kind": "dot", "op": op, "parent": acc, "k_width": kw}, shape, num_warps))
        # blocked -> dot operand and -> accumulator, accumulator -> blocked
        blk = random_blocked(rng, num_warps, bits)
        out.append((blk, {"kind": "dot", "op": rng.choice([0, 1]), "parent": acc,
                          "k_width": rng.choice(k_widths(arch, bits))}, shape, num_warps))
        out.append((blk, acc, shape, num_warps))
        out.append((acc, random_blocked(rng, num_warps, bits), shape, num_warps))
        # blocked -> blocked (vector size, lane split, order, cross-wave)
        out.append((blk, random_blocked(rng, num_warps, bits), shape, num_warps))
        # register-only reordering: lanes along dim0 and waves along dim1 in both, the register order differs
        wb = [1, num_warps]
        out.append((blocked_spec([2, 2], [64, 1], wb, [1, 0]), blocked_spec([2, 2], [64, 1], wb, [0, 1]),
                    [128, 8 * num_warps], num_warps))
        # 1-D slices of MFMA, dot operand and blocked parents (the blocked parent spreads its lanes
        # mostly along the kept dimension, as a reduction's result layout does)
        w = warps_2d(num_warps, rng)
        acc = mfma_spec(arch, dtype, rng.choice([16, 32]), rng.random() < 0.5, w)
        dot = {"kind": "dot", "op": 0, "parent": acc, "k_width": k_widths(arch, bits)[0]}
        length = rng.choice([64, 128, 256])
        dim = rng.choice([0, 1])
        out.append(({"kind": "slice", "dim": dim, "parent": acc},
                    {"kind": "slice", "dim": dim, "parent": slice_parent(rng, dim, num_warps)}, [length], num_warps))
        out.append(({"kind": "slice", "dim": 1, "parent": dot},
                    {"kind": "slice", "dim": 1, "parent": slice_parent(rng, 1, num_warps)}, [length], num_warps))
        out.append(({"kind": "slice", "dim": 0, "parent": slice_parent(rng, 0, num_warps)},
                    {"kind": "slice", "dim": 1, "parent": acc}, [length], num_warps))
    # shapes smaller than the instruction tile
    acc32 = mfma_spec(arch, dtype, 32, False, [1, 1])
    out.append((acc32, mfma_spec(arch, dtype, 16, False, [1, 1]), [16, 16], 1))
    out.append((blocked_spec([1, 4], [16, 4], [1, 1], [1, 0]), acc32, [16, 16], 1))
    return out


#: kWidth of a dot operand that Triton's MMA lowering gives elements of each width (one 32-bit
#: register of K per lane and fragment row), and the wider one of the next-narrower type's fragment.
NVIDIA_K_WIDTH = {32: 1, 16: 2, 8: 4}
#: PTX's element type per (dtype, arch): sm_80 has no e4m3 in Triton 3.9, so fp8 is e5m2 there.
NVIDIA_FP8 = {"sm_80": "fp8e5", "sm_90": "fp8e4nv"}


def mma_spec(arch: str, element_bits: int, shape: list[int], warps: list[int]) -> dict:
    """The MMA accumulator Triton picks: ``wgmma`` (v3, ``[16, N, K]``) on sm_90 with whole warp
    groups along M (``warps[0] % 4 == 0``), ``mma.sync`` m16n8 (v2) otherwise."""
    if arch == "sm_90" and warps[0] % 4 == 0:
        n = min(256, max(8, shape[1] // warps[1]))
        return {"kind": "mma", "version": 3, "instr": [16, n, 256 // element_bits], "warps": warps}
    return {"kind": "mma", "version": 2, "instr": [16, 8], "warps": warps}


def nvidia_pairs(arch: str, dtype: str, rng: random.Random) -> list[tuple[dict, dict, list[int], int]]:
    """(src, dst, shape, num_warps) candidates of one (sm arch, dtype): MMA accumulators to dot
    operands, blocked <-> MMA, 16-bit <-> 8-bit operand fragments, transposes and slices."""
    bits = ELEMENT_BITS[dtype]
    kw = NVIDIA_K_WIDTH[bits]
    out = []
    for num_warps in (1, 2, 4, 8):
        shape = [rng.choice([16, 32, 64, 128]), rng.choice([16, 32, 64, 128])]
        if elements_per_lane(shape, num_warps, 32) > MAX_ELEMENTS_PER_LANE:
            shape = [64, 64]
        if arch == "sm_90" and num_warps >= 4:
            w = [num_warps, 1] if rng.random() < 0.5 else [4, num_warps // 4]
            shape[0] = max(shape[0], 16 * w[0])
        else:
            w = warps_2d(num_warps, rng)
        acc = mma_spec(arch, bits, shape, w)
        v2 = mma_spec("sm_80", bits, shape, w)
        dot = lambda op, k_width, parent=acc: {"kind": "dot", "op": op, "parent": parent, "k_width": k_width}
        # accumulator -> operand A (a chained dot's P; with 8-bit elements the blog's fp16 -> fp8
        # example) and the mma.sync operand B
        out.append((acc, dot(0, kw), shape, num_warps))
        out.append((v2, dot(1, kw, v2), shape, num_warps))
        # the fragment of 16-bit operands (kWidth 2) <-> that of 8-bit ones (kWidth 4)
        out.append((dot(0, 2), dot(0, 4), shape, num_warps))
        out.append((dot(1, 4, v2), dot(1, 2, v2), shape, num_warps))
        # blocked <-> accumulator, blocked -> operand
        blk = random_blocked(rng, num_warps, bits, 32)
        out.append((blk, acc, shape, num_warps))
        out.append((acc, random_blocked(rng, num_warps, bits, 32), shape, num_warps))
        out.append((blk, dot(rng.choice([0, 1]), kw, v2), shape, num_warps))
        # transposes: the same blocked encoding with its order swapped
        size = [1, rng.choice([1, 2, 4, 8] if bits < 32 else [1, 2, 4])]
        t1 = 1 << rng.randint(0, 5)
        ww = warps_2d(num_warps, rng)
        out.append((blocked_spec(size, [32 // t1, t1], ww, [1, 0]),
                    blocked_spec(size[::-1], [t1, 32 // t1], ww[::-1], [0, 1]), shape, num_warps))
        # 1-D slices of accumulator and blocked parents
        length = rng.choice([64, 128])
        dim = rng.choice([0, 1])
        out.append(({"kind": "slice", "dim": dim, "parent": acc},
                    {"kind": "slice", "dim": dim, "parent": slice_parent(rng, dim, num_warps, 32)}, [length], num_warps))
        out.append(({"kind": "slice", "dim": 0, "parent": slice_parent(rng, 0, num_warps, 32)},
                    {"kind": "slice", "dim": 1, "parent": v2}, [length], num_warps))
    return out


def nvidia_blog_cases() -> list[dict]:
    """The linear-layout blog's example, per arch: the MMA fp16-accumulator register layout to the
    fp8 operand-A layout of the next dot (each lane holds 4 vs 8 columns), 8-bit elements."""
    out = []
    for arch, warps in (("sm_80", [4, 1]), ("sm_90", [4, 1])):
        acc = mma_spec(arch, 8, [64, 64], warps)
        src, dst = acc, {"kind": "dot", "op": 0, "parent": acc, "k_width": 4}
        out.append({"name": f"{label(src)}->{label(dst)} [blog]", "arch": arch, "dtype": "fp8", "shape": [64, 64],
                    "num_warps": 4, "triton_src_params": src, "triton_dst_params": dst})
    return out


def generate(family: "Family", seed: int = 17) -> list[dict]:
    """Every candidate case of ``family``, deterministic for ``seed``."""
    rng = random.Random(seed)
    groups = []
    for arch, dtype in itertools.product(family.archs, DTYPES):
        groups.append([{"name": f"{label(src)}->{label(dst)}", "arch": arch, "dtype": dtype, "shape": shape,
                        "num_warps": num_warps, "triton_src_params": src, "triton_dst_params": dst}
                       for src, dst, shape, num_warps in family.pairs(arch, dtype, rng)])
    # round robin over (arch, dtype), so that every prefix of the list covers all of them
    cases = [c for row in itertools.zip_longest(*groups) for c in row if c is not None]
    return cases + family.extra_cases()


def largest_tiles() -> list[dict]:
    """256x256 tiles on 8 waves (128 elements per lane): accumulator -> accumulator of the other
    size, blocked -> accumulator, for every (arch, dtype)."""
    out = []
    for arch, dtype in itertools.product(ARCHS, DTYPES):
        bits = ELEMENT_BITS[dtype]
        acc32, acc16 = mfma_spec(arch, dtype, 32, False, [4, 2]), mfma_spec(arch, dtype, 16, True, [4, 2])
        blk = blocked_spec([1, 8 if bits < 32 else 4], [8, 8], [8, 1], [1, 0])
        for src, dst in ((acc32, acc16), (blk, acc16)):
            out.append({"name": f"{label(src)}->{label(dst)}", "arch": arch, "dtype": dtype, "shape": [256, 256],
                        "num_warps": 8, "triton_src_params": src, "triton_dst_params": dst})
    return out


# ----------------------------------------------------------------------------- target families

@dataclass(frozen=True)
class Family:
    """One corpus: its targets (``archs``, ``wave_size`` lanes), its cases, how Triton compiles them
    (``GPUTarget(backend, ...)``, the ``asm[asm_key]`` text) and how that text is counted."""

    name: str
    archs: tuple[str, ...]
    wave_size: int
    backend: str
    asm_key: str
    out: Path
    format: str
    pairs: Callable[[str, str, random.Random], list]
    extra_cases: Callable[[], list[dict]]
    method: str

    def target_arch(self, arch: str) -> str | int:
        """The arch as ``GPUTarget`` takes it: the gfx name, or the compute capability (``sm_90`` -> 90)."""
        return int(arch[3:]) if self.backend == "cuda" else arch

    def pointer_type(self, arch: str, dtype: str) -> str:
        """Triton's pointer type of the kernel's tensors."""
        if dtype != "fp8":
            return "*" + TRITON_DTYPE[dtype]
        return "*" + (NVIDIA_FP8 if self.backend == "cuda" else FP8_TRITON)[arch]

    def counts(self, lines: list[str]) -> dict:
        """The counts of the instruction lines attributed to the conversion."""
        if self.backend == "cuda":
            from linlayout.lowering.ptx_counts import ptx_counts

            return ptx_counts(lines)
        from linlayout.lowering.isa import isa_counts

        return isa_counts("\n".join(lines))


_SOURCE_LINE = ("counts are the {what} of ONE {unit} attributed to the convert_layout source line (.loc), "
                "global loads/stores{waits} excluded.")
FAMILIES = {
    "amd": Family("amd", ARCHS, 64, "hip", "amdgcn", OUT, FORMAT, pairs_for, largest_tiles,
                  "benchmarks/make_corpus.py: Gluon kernel: load in SRC, convert_layout, store in DST; compiled "
                  "for the AMD target without a GPU; " + _SOURCE_LINE.format(
                      what="amdgcn instructions", unit="wave", waits=" and their vmcnt waits")),
    "nvidia": Family("nvidia", ("sm_80", "sm_90"), 32, "cuda", "ptx", OUT.with_name("triton_nvidia_corpus.json"),
                     "triton_nvidia_convert_baseline/v1", nvidia_pairs, nvidia_blog_cases,
                     "benchmarks/make_corpus.py --family nvidia: Gluon kernel: load in SRC, convert_layout, store "
                     "in DST; compiled for the NVIDIA target without a GPU (Triton's bundled ptxas); "
                     + _SOURCE_LINE.format(what="PTX instructions (lowering/ptx_counts.py classes)", unit="warp",
                                           waits="")),
}


# ----------------------------------------------------------------------------- the worker (Triton)

def _gluon_layout(spec: dict):
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language import amd as gla

    k = spec["kind"]
    if k == "mfma":
        return gla.AMDMFMALayout(spec["version"], spec["instr"], spec["transposed"], spec["warps"])
    if k == "mma":
        return gl.NVMMADistributedLayout([spec["version"], 0], spec["warps"], spec["instr"])
    if k == "wmma":
        return gla.AMDWMMALayout(spec["version"], spec["transposed"], _wmma_warp_bases(spec),
                                 instr_shape=spec["instr"])
    if k == "dot":
        return gl.DotOperandLayout(spec["op"], _gluon_layout(spec["parent"]), spec["k_width"])
    if k == "slice":
        return gl.SliceLayout(spec["dim"], _gluon_layout(spec["parent"]))
    return gl.BlockedLayout(spec["size"], spec["threads"], spec["warps"], spec["order"])


def _wmma_warp_bases(spec: dict) -> list[list[int]]:
    """Gluon's ``warp_bases`` of a WMMA spec's ``warpsPerCTA`` (linlayout's Wmma CTA layout, which
    tests/test_encodings_triton_wheel.py checks against Triton's)."""
    from linlayout.encodings import encoding_from_params

    return encoding_from_params("amd_wmma", {k: v for k, v in triton_params(spec).items()
                                             if k != "encoding"}).cta_layout().bases["warp"]


def _kernels():
    """The two Gluon kernels (2-D and 1-D tiles): load in SRC, convert to DST, store."""
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl

    @gluon.jit
    def convert_2d(src_ptr, dst_ptr, M: gl.constexpr, N: gl.constexpr, SRC: gl.constexpr, DST: gl.constexpr):
        rs = gl.arange(0, M, layout=gl.SliceLayout(1, SRC))
        cs = gl.arange(0, N, layout=gl.SliceLayout(0, SRC))
        x = gl.load(src_ptr + gl.expand_dims(rs, 1) * N + gl.expand_dims(cs, 0))
        y = gl.convert_layout(x, DST)
        rd = gl.arange(0, M, layout=gl.SliceLayout(1, DST))
        cd = gl.arange(0, N, layout=gl.SliceLayout(0, DST))
        gl.store(dst_ptr + gl.expand_dims(rd, 1) * N + gl.expand_dims(cd, 0), y)

    @gluon.jit
    def convert_1d(src_ptr, dst_ptr, M: gl.constexpr, SRC: gl.constexpr, DST: gl.constexpr):
        x = gl.load(src_ptr + gl.arange(0, M, layout=SRC))
        y = gl.convert_layout(x, DST)
        gl.store(dst_ptr + gl.arange(0, M, layout=DST), y)

    return convert_2d, convert_1d


def _layout_json(builder, layout, shape: list[int]) -> dict:
    """Triton's linear layout of ``layout`` over ``shape`` as layout JSON (register counts elements)."""
    ll = builder.to_linear_layout(layout._to_ir(builder), shape)
    bases = {"register": ll.reg_bases, "lane": ll.lane_bases, "warp": ll.warp_bases, "block": ll.block_bases}
    return {"in_dims": [[d, 2 ** len(b)] for d, b in bases.items()],
            "out_dims": [[f"dim{i}", s] for i, s in enumerate(shape)],
            "bases": {d: [list(v) for v in b] for d, b in bases.items()}}


def convert_lines(asm: str, convert_line: int) -> list[str]:
    """The assembly lines (amdgcn or PTX) attributed to the ``convert_layout`` source line.

    Both assemblies carry ``.loc 1 LINE`` directives that attribute every following instruction
    to ``LINE`` of this file until the next one.  The global loads and stores (and, in amdgcn,
    their ``s_waitcnt vmcnt``) that the scheduler interleaves with the conversion carry its line
    too and are left out.
    """
    lines, line = [], None
    for ln in asm.splitlines():
        fields = ln.split()
        if fields[:2] == [".loc", "1"]:
            line = int(fields[2])
        elif line == convert_line and fields and not _is_global_access(fields):
            lines.append(ln)
    return lines


def _is_global_access(fields: list[str]) -> bool:
    """An amdgcn or PTX line (split) that is a global memory access or a wait for global memory only."""
    mnemonic = fields[1] if fields[0].startswith("@") and len(fields) > 1 else fields[0]
    if mnemonic.startswith(("global_", "buffer_", "flat_", "ld.global", "st.global")):
        return True
    return mnemonic == "s_waitcnt" and all(f.rstrip(",").startswith("vmcnt") for f in fields[1:])


def measure(case: dict, builder, kernels, family: Family = FAMILIES["amd"]) -> dict:
    """Compile one case of ``family`` with Triton and return its stored record."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    src, dst = _gluon_layout(case["triton_src_params"]), _gluon_layout(case["triton_dst_params"])
    shape = case["shape"]
    ptr = family.pointer_type(case["arch"], case["dtype"])
    convert_2d, convert_1d = kernels
    if len(shape) == 2:
        fn, consts = convert_2d, {"M": shape[0], "N": shape[1], "SRC": src, "DST": dst}
    else:
        fn, consts = convert_1d, {"M": shape[0], "SRC": src, "DST": dst}
    for layout in (src, dst):
        registers = 2 ** len(builder.to_linear_layout(layout._to_ir(builder), shape).reg_bases)
        if registers > MAX_ELEMENTS_PER_LANE:
            raise ValueError(f"a layout holds {registers} elements per lane, more than {MAX_ELEMENTS_PER_LANE}")
    signature = {"src_ptr": ptr, "dst_ptr": ptr, **dict.fromkeys(consts, "constexpr")}
    compiled = triton.compile(GluonASTSource(fn, signature=signature, constexprs=consts),
                              target=GPUTarget(family.backend, family.target_arch(case["arch"]), family.wave_size),
                              options={"num_warps": case["num_warps"]})
    return dict(case, src=_layout_json(builder, src, shape), dst=_layout_json(builder, dst, shape),
                triton=family.counts(convert_lines(compiled.asm[family.asm_key], _convert_line(fn))),
                triton_lds_bytes=compiled.metadata.shared, counted_by="source_line")


def _convert_line(kernel) -> int:
    """The source line of ``gl.convert_layout`` in a Gluon kernel of this file."""
    import inspect

    lines, first = inspect.getsourcelines(kernel.fn)
    return first + next(i for i, ln in enumerate(lines) if "gl.convert_layout" in ln)


def _triton_session():
    """An MLIR context, a Gluon op builder on it (for ``to_linear_layout``) and the two kernels.
    The caller keeps the context alive as long as it uses the builder."""
    from triton._C.libtriton import ir
    from triton._C.libtriton.gluon_ir import GluonOpBuilder

    context = ir.context()
    ir.load_dialects(context)
    return context, GluonOpBuilder(context), _kernels()


def worker(path: str, family: Family) -> None:
    """Measure every case of the JSON-lines file ``path``; print one JSON line per case."""
    import os
    import warnings

    warnings.simplefilter("ignore")
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    context, builder, kernels = _triton_session()  # noqa: F841 (context kept alive)
    for line in Path(path).read_text().splitlines():
        case = json.loads(line)
        print(json.dumps({"case": case["index"], "status": "start"}), flush=True)
        try:
            record = measure(case, builder, kernels, family)
        except Exception as e:  # Triton's compile errors: the case is reported as failed
            record = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"}
        print(json.dumps({"case": case["index"], "record": record}), flush=True)


# ----------------------------------------------------------------------------- calibration

def _baseline_candidates(text: str, arch: str, num_warps: int) -> list[dict]:
    """Encoding specs that the baseline's ``triton_src`` string may stand for (warps and K unknown)."""
    m = re.fullmatch(r"(dot[AB])\((.*),(\d+)\)", text)
    if m:
        return [{"kind": "dot", "op": "AB".index(m.group(1)[-1]), "parent": p, "k_width": int(m.group(3))}
                for p in _baseline_candidates(m.group(2), arch, num_warps)]
    warps = [[w, num_warps // w] for w in (1, 2, 4, 8) if w <= num_warps]
    m = re.fullmatch(r"mfma\((\d+)(,transposed=True)?\)", text)
    if m:
        size = int(m.group(1))
        return [{"kind": "mfma", "version": MFMA_VERSION[arch], "instr": [size, size, k],
                 "transposed": bool(m.group(2)), "warps": w} for w in warps for k in (2, 4, 8, 16, 32, 64)]
    m = re.fullmatch(r"blocked\(\[(\d+),(\d+)\],\[(\d+),(\d+)\]\)", text)
    size, threads = [int(m.group(1)), int(m.group(2))], [int(m.group(3)), int(m.group(4))]
    return [blocked_spec(size, threads, w, o) for w in warps for o in ([1, 0], [0, 1])]


def calibrate(path: str) -> None:
    """Measure the baseline's cases with this script's method; print both totals per case."""
    context, builder, kernels = _triton_session()  # noqa: F841 (context kept alive)
    for c in json.loads(Path(path).read_text())["cases"]:
        spec = {}
        for side in ("src", "dst"):
            for cand in _baseline_candidates(c[f"triton_{side}"], c["arch"], c["num_warps"]):
                try:
                    bases = _layout_json(builder, _gluon_layout(cand), c["shape"])["bases"]
                except Exception:  # Triton rejects some (K, kWidth) candidates
                    continue
                if bases == c[side]["bases"]:
                    spec[side] = cand
                    break
        if len(spec) < 2:
            print(f"{c['name']} {c['arch']} {c['dtype']}: no matching encoding", flush=True)
            continue
        case = dict(c, triton_src_params=spec["src"], triton_dst_params=spec["dst"])
        ours = measure(case, builder, kernels)["triton"]
        print(f"{c['name']:28s} {c['arch']} {c['dtype']}: baseline {c['triton']['total']:3d}, this method "
              f"{ours['total']:3d} (baseline valu+salu {c['triton']['valu'] + c['triton']['salu']}, "
              f"here {ours['valu'] + ours['salu']})", flush=True)


# ----------------------------------------------------------------------------- driver

def run_batches(cases: list[dict], batch: int, log: Path, case_seconds: float, family: Family) -> None:
    """Measure ``cases`` in worker subprocesses, appending each result to the JSON-lines ``log``.

    A worker that dies, or spends more than ``case_seconds`` on one case, is ended and that case
    is logged as a failure (``error``); the batch goes on in a new worker.
    """
    tmp = log.with_suffix(".cases.jsonl")
    pending = list(cases)
    while pending:
        chunk, pending = pending[:batch], pending[batch:]
        tmp.write_text("".join(json.dumps(c) + "\n" for c in chunk))
        done = set()
        with subprocess.Popen([sys.executable, __file__, "--worker", str(tmp),
                               "--family", family.name], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True) as proc, log.open("a") as out:
            started = None
            for line in _lines_with_timeout(proc, case_seconds):
                msg = json.loads(line)
                if msg.get("status") == "start":
                    started = msg["case"]
                    continue
                done.add(msg["case"])
                out.write(json.dumps(dict(msg["record"], index=msg["case"])) + "\n")
            if proc.poll() is None:
                proc.kill()
            if started is not None and started not in done:
                out.write(json.dumps({"index": started, "error": "Triton aborted or took longer than "
                                      f"{case_seconds:.0f} s"}) + "\n")
                done.add(started)
        pending = [c for c in chunk if c["index"] not in done] + pending
        print(f"{len(pending)} left", file=sys.stderr, flush=True)
    tmp.unlink()


def _lines_with_timeout(proc: subprocess.Popen, seconds: float):
    """The JSON lines the worker prints, until it exits or is silent for ``seconds``."""
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    while True:
        if not sel.select(timeout=seconds):
            return
        line = proc.stdout.readline()
        if not line:
            return
        if line.startswith("{"):
            yield line


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--family", choices=sorted(FAMILIES), default="amd",
                    help="the targets: amd (gfx90a/gfx942/gfx950), nvidia (sm_80/sm_90 PTX)")
    ap.add_argument("--out", help="the corpus file (default: benchmarks/data/ the family's file)")
    ap.add_argument("--limit", type=int, help="only the first N candidates")
    ap.add_argument("--batch", type=int, default=40)
    ap.add_argument("--assemble-only", action="store_true",
                    help="write the corpus from the cases measured so far (the .records.jsonl log)")
    ap.add_argument("--case-seconds", type=float, default=120.0, help="longest compile of one case")
    ap.add_argument("--calibrate", metavar="BASELINE_JSON",
                    help="measure the baseline's cases with this method and print both counts")
    ap.add_argument("--worker", metavar="CASES_JSONL", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    family = FAMILIES[args.family]
    if args.worker:
        worker(args.worker, family)
        return
    if args.calibrate:
        calibrate(args.calibrate)
        return
    import triton

    cases = generate(family)[: args.limit]
    for i, c in enumerate(cases):
        c["index"] = i
    out = Path(args.out or family.out)
    log = out.with_suffix(".records.jsonl")
    logged = {}
    if log.is_file():
        logged = {r["index"]: r for r in map(json.loads, log.read_text().splitlines())}
    if not args.assemble_only:
        run_batches([c for c in cases if c["index"] not in logged], args.batch, log, args.case_seconds, family)
        logged = {r["index"]: r for r in map(json.loads, log.read_text().splitlines())}
    records = [logged[c["index"]] for c in cases if c["index"] in logged and "error" not in logged[c["index"]]]
    failures = [logged[c["index"]] for c in cases if c["index"] in logged and "error" in logged[c["index"]]]
    names = {c["index"]: f"{c['name']} {c['arch']} {c['dtype']}" for c in cases}
    data = {
        "format": family.format, "triton": triton.__version__, "method": family.method,
        "cases": [finish(r) for r in records],
        "failed": [{"case": names[f["index"]], "error": f["error"]} for f in failures],
    }
    out.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    print(f"{len(records)} cases, {len(failures)} failed -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
