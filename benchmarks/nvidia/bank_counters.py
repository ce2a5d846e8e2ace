"""linlayout's shared-memory bank model against Nsight Compute's counters on an NVIDIA GPU.

Generates one CUDA kernel per access case (one warp, one shared-memory instruction: ld/st.shared
of 16/32/64/128 bits, ldmatrix and stmatrix .x1/.x2/.x4 with and without .trans, on linear,
strided, paired, broadcast, tiled, XOR-swizzled and padded addresses), predicts each one's
wavefronts and bank conflicts with :func:`linlayout.synth.banks.analyze` (``wavefronts`` =
the model's cycles, ``bank_conflicts`` = cycles - phases, which is what the counter reports:
docs/nvidia_facts.md 2.3), runs the kernels under ``ncu`` and writes the table of model vs
counters (JSON and markdown).

    python benchmarks/nvidia/bank_counters.py --out DIR            # build, profile, compare
    python benchmarks/nvidia/bank_counters.py --out DIR --build-only
    python benchmarks/nvidia/bank_counters.py --out DIR --csv ncu.csv   # compare a saved ncu CSV

Needs nvcc (CUDA 12.x/13.x) to build, and an NVIDIA GPU of compute capability 9.0 with
profiling counters readable (root, or NVreg_RestrictProfilingToAdminUsers=0) to profile.
Each kernel's address pattern is in the JSON (``lane_bytes``: the byte offset of each lane's
address from a 1024-byte aligned buffer).
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: benchmarks.script_args

from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout.synth.banks import analyze  # noqa: E402

METRICS = {
    ("read", "wavefronts"): "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    ("read", "bank_conflicts"): "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    ("write", "wavefronts"): "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    ("write", "bank_conflicts"): "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
}
SMEM_BYTES = 8192
LANES = np.arange(32)


@dataclass(frozen=True)
class Case:
    """One kernel: ``op`` (a linlayout shared-memory op of sm_90), its PTX and each lane's byte address."""

    name: str
    op: str
    ptx: str
    lane_bytes: tuple[int, ...]

    @property
    def direction(self) -> str:
        return "write" if self.op.startswith("st") else "read"


# ------------------------------------------------------------------ address patterns
def cute_swizzle(bits: int, base: int, shift: int):
    """CuTe's ``Swizzle<B, M, S>`` on an offset: XOR bits ``[M+S, M+S+B)`` into bits ``[M, M+B)``."""
    mask = ((1 << bits) - 1) << (base + shift)
    return lambda x: x ^ ((x & mask) >> shift)


def _mma_a_tile(row_bytes: int, element_swizzle=None) -> np.ndarray:
    """Row starts of the 16x16 fp16 A block read by ldmatrix.x4 (lane ``l``: matrix ``l // 8``,
    row ``l % 8``; matrices (rows 0-7, k 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15)) from a
    row-major fp16 tile of ``row_bytes`` per row; ``element_swizzle`` acts on fp16 element offsets."""
    row = LANES % 8 + 8 * ((LANES // 8) % 2)
    elements = row * (row_bytes // 2) + 8 * (LANES // 16)
    if element_swizzle is not None:
        elements = element_swizzle(elements)
    return 2 * elements


def patterns(lane_bytes: int) -> dict[str, np.ndarray]:
    """Named per-lane byte addresses for an access of ``lane_bytes`` bytes per lane."""
    w, l = lane_bytes, LANES
    column = 128 * (l % 8) + w * (l // 8)  # lanes down a column of 128-byte rows, 8 rows
    out = {
        "linear": w * l,
        "stride2": 2 * w * l,
        "stride128": 128 * l if w < 16 else 128 * (l % 8) + 1024 * (l // 8),
        "pairs": w * (l // 2),
        "broadcast": 0 * l,
        "halves_64": np.where(l < 16, 0, 64),
        "halves_128": np.where(l < 16, 0, 128),
        "column128": column,
        "column128_swizzle343": cute_swizzle(3, 4, 3)(column),
        "column128_swizzle242": cute_swizzle(2, 4, 2)(column),
        "column144_padded": 144 * (l % 8) + w * (l // 8),
        "pairs128": 128 * (l // 2),
        "lane16_to_128": np.where(l == 16, 128, w * l),
        "pairs_low_half": np.where(l < 16, w * (l // 2), w * l),  # paired in lanes 0-15 only
        "pairs_but_lane31": np.where(l == 31, 1024, w * (l // 2)),
    }
    if w == 16:
        out["mma_a_rows128"] = _mma_a_tile(128)
        out["mma_a_rows128_swizzle333"] = _mma_a_tile(128, cute_swizzle(3, 3, 3))
        out["mma_a_rows128_swizzle233"] = _mma_a_tile(128, cute_swizzle(2, 3, 3))
        out["mma_a_rows64_swizzle233"] = _mma_a_tile(64, cute_swizzle(2, 3, 3))
        out["mma_a_rows64"] = _mma_a_tile(64)
    return {k: np.asarray(v, dtype=np.int64) for k, v in out.items()}


# op -> (bytes per lane, PTX template, patterns used)
_SCALAR = {
    "ld.shared.b8": (1, "ld.shared.u8", ["linear", "stride2", "stride128"]),
    "st.shared.b8": (1, "st.shared.u8", ["linear", "stride128"]),
    "ld.shared.b16": (2, "ld.shared.u16", ["linear", "stride2", "stride128", "broadcast"]),
    "st.shared.b16": (2, "st.shared.u16", ["linear", "stride128"]),
    "ld.shared.b32": (4, "ld.shared.b32", ["linear", "stride2", "stride128", "broadcast", "lane16_to_128",
                                           "column128", "column128_swizzle343", "pairs128"]),
    "st.shared.b32": (4, "st.shared.b32", ["linear", "stride2", "stride128", "column128_swizzle343"]),
    "ld.shared.b64": (8, "ld.shared.v2.b32", ["linear", "stride2", "pairs", "halves_64", "halves_128", "pairs128",
                                              "column128", "column128_swizzle343", "broadcast", "pairs_low_half", "pairs_but_lane31"]),
    "st.shared.b64": (8, "st.shared.v2.b32", ["linear", "stride2", "pairs", "column128_swizzle343"]),
    "ld.shared.b128": (16, "ld.shared.v4.b32", ["linear", "stride2", "pairs", "broadcast", "pairs128", "column128",
                                                "column128_swizzle343", "column128_swizzle242", "column144_padded",
                                                "mma_a_rows128", "mma_a_rows128_swizzle333", "pairs_low_half",
                                                "pairs_but_lane31"]),
    "st.shared.b128": (16, "st.shared.v4.b32", ["linear", "stride2", "pairs", "broadcast", "column128",
                                                "column128_swizzle343"]),
}
_MATRIX_PATTERNS = {
    1: ["linear", "stride2", "stride128", "column144_padded"],
    2: ["linear", "stride128", "column128_swizzle343", "mma_a_rows64"],
    4: ["linear", "stride128", "column128", "column128_swizzle343", "column144_padded", "mma_a_rows128",
        "mma_a_rows128_swizzle333", "mma_a_rows128_swizzle233", "mma_a_rows64_swizzle233", "pairs"],
}


_TRANS_PATTERNS = ["linear", "stride128", "column128_swizzle343"]  # .trans moves data, not addresses


def cases() -> list[Case]:
    """Every case of the suite, in kernel order."""
    out = []
    for op, (w, ptx, names) in _SCALAR.items():
        pats = patterns(w)
        out += [Case(f"{op}:{n}", op, ptx, tuple(int(v) for v in pats[n])) for n in names]
    pats = patterns(8)
    out += [Case(f"ld.shared.b64(scalar):{n}", "ld.shared.b64", "ld.shared.b64", tuple(int(v) for v in pats[n]))
            for n in ("stride2", "pairs", "column128")]
    pats = patterns(16)
    for verb in ("ld", "st"):
        for n, names in _MATRIX_PATTERNS.items():
            for trans in ("", ".trans"):
                op = f"{verb}matrix.x{n}{trans}"
                ptx = f"{verb}matrix.sync.aligned.m8n8.x{n}{trans}.shared.b16"
                for p in names if not trans else _TRANS_PATTERNS:
                    out.append(Case(f"{op}:{p}", op, ptx, tuple(int(v) for v in pats[p])))
    return out


def predict(case: Case, arch: str = "sm_90") -> dict:
    """linlayout's wavefronts and bank conflicts for one case."""
    rep = analyze(arch, case.op, np.asarray(case.lane_bytes), element_bits=8)
    return {"wavefronts": rep.cycles, "bank_conflicts": rep.cycles - rep.min_cycles}


# ------------------------------------------------------------------ CUDA source
def _asm(case: Case) -> tuple[str, str]:
    """(declarations, the one asm statement) of a case's kernel body."""
    ptx = case.ptx
    if case.op.startswith(("ldmatrix", "stmatrix")):
        n = int(case.op.split(".x")[1][0])
        regs = ", ".join(f"%{i + (1 if case.direction == 'write' else 0)}" for i in range(n))
        if case.direction == "read":
            outs = ", ".join(f'"=r"(r[{i}])' for i in range(n))
            return ("", f'asm volatile("{ptx} {{{regs}}}, [%{n}];" : {outs} : "r"(a) : "memory");')
        ins = ", ".join(f'"r"(v + {i})' for i in range(n))
        return ("", f'asm volatile("{ptx} [%0], {{{regs}}};" :: "r"(a), {ins} : "memory");')
    w = int(case.op.rsplit(".b", 1)[1]) // 8
    if case.direction == "read":
        if ptx.endswith((".u8", ".u16")):
            return ("unsigned short h;", f'asm volatile("{ptx} %0, [%1];" : "=h"(h) : "r"(a) : "memory"); r[0] = h;')
        if ptx.endswith(".b64"):
            # both halves used, or ptxas narrows the load to 32 bits
            return ("unsigned long long d;", f'asm volatile("{ptx} %0, [%1];" : "=l"(d) : "r"(a) : "memory"); '
                    "r[0] = (unsigned)d; r[1] = (unsigned)(d >> 32);")
        n = w // 4
        regs = ", ".join(f"%{i}" for i in range(n))
        outs = ", ".join(f'"=r"(r[{i}])' for i in range(n))
        vec = f"{{{regs}}}" if n > 1 else "%0"
        return ("", f'asm volatile("{ptx} {vec}, [%{n}];" : {outs} : "r"(a) : "memory");')
    if w < 4:
        return ("", f'asm volatile("{ptx} [%0], %1;" :: "r"(a), "h"((unsigned short)v) : "memory");')
    n = w // 4
    regs = ", ".join(f"%{i + 1}" for i in range(n))
    ins = ", ".join(f'"r"(v + {i})' for i in range(n))
    vec = f"{{{regs}}}" if n > 1 else "%1"
    return ("", f'asm volatile("{ptx} [%0], {vec};" :: "r"(a), {ins} : "memory");')


def cuda_source(suite: list[Case]) -> str:
    """One kernel ``k<i>`` per case (1 block of 32 threads) and a host main launching each once."""
    kernels = []
    for i, case in enumerate(suite):
        decl, stmt = _asm(case)
        kernels.append(f"""// {case.name}
extern "C" __global__ void k{i}(const unsigned* __restrict__ offs, unsigned* out) {{
  __shared__ __align__(1024) unsigned char smem[{SMEM_BYTES}];
  unsigned a = (unsigned)__cvta_generic_to_shared(smem) + offs[threadIdx.x];
  unsigned v = threadIdx.x * 0x01010101u;
  unsigned r[4] = {{v, v, v, v}};
  {decl}
  {stmt}
  out[threadIdx.x] = r[0] ^ r[1] ^ r[2] ^ r[3];
}}""")
    offsets = ",\n".join("  " + ", ".join(str(b) for b in c.lane_bytes) for c in suite)
    table = ", ".join(f"k{i}" for i in range(len(suite)))
    return f"""// generated by benchmarks/nvidia/bank_counters.py: one shared-memory instruction per kernel
#include <cstdio>
#include <cuda_runtime.h>
{chr(10).join(kernels)}

static const unsigned kOffsets[{len(suite)} * 32] = {{
{offsets}
}};
typedef void (*Kernel)(const unsigned*, unsigned*);
static const Kernel kKernels[] = {{{table}}};

int main() {{
  unsigned *offs = nullptr, *out = nullptr;
  if (cudaMalloc(&offs, sizeof(kOffsets)) != cudaSuccess || cudaMalloc(&out, 32 * sizeof(unsigned)) != cudaSuccess) {{
    std::fprintf(stderr, "cudaMalloc failed\\n");
    return 1;
  }}
  cudaMemcpy(offs, kOffsets, sizeof(kOffsets), cudaMemcpyHostToDevice);
  for (int i = 0; i < {len(suite)}; ++i) kKernels[i]<<<1, 32>>>(offs + 32 * i, out);
  cudaError_t err = cudaDeviceSynchronize();
  std::printf("%d kernels: %s\\n", {len(suite)}, cudaGetErrorString(err));
  return err == cudaSuccess ? 0 : 1;
}}
"""


# ------------------------------------------------------------------ build, profile, compare
def build(suite: list[Case], out: Path, arch: str = "sm_90a", cuobjdump: str = "cuobjdump") -> Path:
    """Write ``bank_kernels.cu``, compile it with nvcc and check each kernel's SASS holds exactly
    one shared-memory instruction, of the case's width (:func:`sass_opcode`); returns the executable."""
    src = out / "bank_kernels.cu"
    src.write_text(cuda_source(suite))
    exe = out / "bank_kernels"
    subprocess.run(["nvcc", "-O2", f"-arch={arch}", "-o", str(exe), str(src)], check=True)
    sass = subprocess.run([cuobjdump, "-sass", str(exe)], check=True, capture_output=True, text=True).stdout
    found = _shared_instructions(sass)
    bad = {f"k{i}": found.get(i) for i, c in enumerate(suite) if found.get(i) != [sass_opcode(c.op)]}
    if bad:
        raise SystemExit(f"kernels whose SASS is not the one expected shared-memory instruction: {bad}")
    return exe


def sass_opcode(op: str) -> str:
    """The SASS opcode ptxas emits for ``op`` (LDS.64, LDSM.16.MT88.4, STS.U8, ...)."""
    if "matrix" in op:
        n = op.split(".x")[1][0]
        return (f"{'LDSM' if op.startswith('ld') else 'STSM'}.16.{'MT88' if op.endswith('.trans') else 'M88'}"
                + ("" if n == "1" else f".{n}"))
    bits = int(op.rsplit(".b", 1)[1])
    suffix = {8: ".U8", 16: ".U16", 32: "", 64: ".64", 128: ".128"}[bits]
    return ("LDS" if op.startswith("ld") else "STS") + suffix


def _shared_instructions(sass: str) -> dict[int, list[str]]:
    """Per kernel ``k<i>``: its LDS/STS/LDSM/STSM opcodes in ``cuobjdump -sass`` output."""
    found: dict[int, list[str]] = {}
    current = None
    for line in sass.splitlines():
        if "Function : k" in line:
            current = int(line.split("Function : k")[1].split()[0])
            found[current] = []
        elif current is not None and "*/" in line:
            opcode = line.split("*/", 1)[1].strip().split(" ")[0].rstrip(";")
            if opcode.split(".")[0] in ("LDS", "STS", "LDSM", "STSM"):
                found[current].append(opcode)
    return found


def profile(exe: Path) -> str:
    """The ncu CSV of one run of every kernel, with the shared-memory wavefront and conflict counters."""
    cmd = ["ncu", "--metrics", ",".join(METRICS.values()), "--csv", "--print-units", "base", str(exe)]
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def parse_counters(text: str) -> dict[int, dict[str, float]]:
    """Kernel index -> metric name -> value, from ncu's ``--csv`` output."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    out: dict[int, dict[str, float]] = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        kernel = row["Kernel Name"].split("(")[0].strip()
        if kernel.startswith("k") and kernel[1:].isdigit():
            out.setdefault(int(kernel[1:]), {})[row["Metric Name"]] = float(row["Metric Value"].replace(",", ""))
    return out


def compare(suite: list[Case], counters: dict[int, dict[str, float]]) -> list[dict]:
    """One row per case: the model's numbers, the counters' and whether they agree."""
    rows = []
    for i, case in enumerate(suite):
        measured = {what: int(counters[i][METRICS[(case.direction, what)]]) for what in ("wavefronts", "bank_conflicts")}
        model = predict(case)
        rows.append({"kernel": f"k{i}", "case": case.name, "op": case.op, "ptx": case.ptx,
                     "lane_bytes": list(case.lane_bytes), "model": model, "ncu": measured,
                     "agree": model == measured})
    return rows


def markdown(rows: list[dict], header: str) -> str:
    agree = sum(r["agree"] for r in rows)
    lines = [header, "", f"model = counters on {agree} of {len(rows)} cases", "",
             "| case | PTX | model wavefronts / conflicts | ncu wavefronts / conflicts | agree |", "|---|---|---|---|---|"]
    for r in rows:
        m, n = r["model"], r["ncu"]
        lines.append(f"| {r['case']} | `{r['ptx']}` | {m['wavefronts']} / {m['bank_conflicts']} | "
                     f"{n['wavefronts']} / {n['bank_conflicts']} | {'yes' if r['agree'] else 'NO'} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = ScriptParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="folder for the CUDA source, binary, CSV and tables")
    ap.add_argument("--build-only", action="store_true", help="write and compile the kernels, do not profile")
    ap.add_argument("--csv", type=Path, help="compare this saved ncu CSV instead of profiling")
    ap.add_argument("--arch", default="sm_90a", help="nvcc -arch (default sm_90a)")
    ap.add_argument("--cuobjdump", default="cuobjdump", help="cuobjdump executable (checks each kernel's SASS)")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    suite = cases()
    if args.csv is None:
        if shutil.which("nvcc") is None:
            raise SystemExit("nvcc not found")
        exe = build(suite, args.out, args.arch, args.cuobjdump)
        if args.build_only:
            print(f"{len(suite)} kernels built: {exe}")
            return 0
        text = profile(exe)
        (args.out / "ncu.csv").write_text(text)
    else:
        text = args.csv.read_text()
    rows = compare(suite, parse_counters(text))
    (args.out / "bank_counters.json").write_text("[\n" + ",\n".join(json.dumps(r) for r in rows) + "\n]\n")
    (args.out / "bank_counters.md").write_text(markdown(rows, "# Shared-memory bank model vs Nsight Compute"))
    agree = sum(r["agree"] for r in rows)
    print(f"model = counters on {agree} of {len(rows)} cases")
    for r in rows:
        if not r["agree"]:
            print(f"  {r['case']}: model {r['model']} ncu {r['ncu']}")
    return 0 if agree == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
