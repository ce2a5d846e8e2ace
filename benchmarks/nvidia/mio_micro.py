"""Throughput per SM and latency of the instructions NVIDIA plans use, measured on the GPU.

    python3 benchmarks/nvidia/mio_micro.py --out DIR        # on a machine with nvcc and an sm_90 GPU
    python3 benchmarks/nvidia/mio_micro.py --table DIR/mio_micro.json --out benchmarks/nvidia/results

The first form compiles ``mio_micro.cu`` (nvcc -O3 -arch=sm_90a), runs it, counts the SASS
opcodes of each throughput kernel when ``cuobjdump`` is on the PATH, and writes
``DIR/mio_micro.json`` and ``DIR/mio_micro.md``; the second writes the table again from a saved
JSON.  What each kernel does and how it is timed is in ``mio_micro.cu``'s opening comment:
throughput is warp-instructions of the kind named per SM cycle (one CTA of 1..32 warps per SM,
8 independent chains per thread), latency is SM cycles per instruction of one dependent chain.
"""

from __future__ import annotations

import collections
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: benchmarks.script_args

from benchmarks.script_args import ScriptParser  # noqa: E402

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "mio_micro.cu"


def measure(nvcc: str = "nvcc") -> dict:
    """Compile and run the microbenchmark; its JSON document with the SASS opcode counts added."""
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "mio_micro"
        subprocess.run([nvcc, "-O3", "-arch=sm_90a", "-o", str(exe), str(SOURCE)], check=True)
        doc = json.loads(subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout)
        cuobjdump = shutil.which("cuobjdump")
        if cuobjdump:
            sass = subprocess.run([cuobjdump, "--dump-sass", str(exe)], check=True, capture_output=True, text=True)
            doc["sass_opcodes"] = sass_opcodes(sass.stdout)
    return doc


def sass_opcodes(sass: str) -> dict[str, dict[str, int]]:
    """Kernel (mangled name) -> opcode -> count over the whole function (the timed loop dominates)."""
    out = {}
    for m in re.finditer(r"Function : (\S+)\n(.*?)(?=\n\s*\.{8}|\Z)", sass, re.S):
        ops = re.findall(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)", m.group(2))
        out[m.group(1)] = dict(collections.Counter(ops).most_common(8))
    return out


def table(doc: dict) -> str:
    """Markdown: one row per throughput kernel (warp-instructions per SM cycle at each warp count)
    and the latencies."""
    rows = [r for r in doc["rows"] if r["kind"] == "throughput"]
    warps = sorted({r["warps"] for r in rows})
    ops = list(dict.fromkeys(r["op"] for r in rows))
    lines = [f"Device: {doc['device']} (compute capability {doc['capability']}, {doc['sm_count']} SMs); "
             "one CTA per SM, 8 independent chains per thread.", "",
             "Throughput: PTX instructions of the kind named per SM cycle, whole SM (4 sub-partitions), "
             "by warps per SM (for a mix, instructions of the mix).", "",
             "| instruction | " + " | ".join(f"{w} warps" for w in warps) + " |",
             "|---|" + "---|" * len(warps)]
    for op in ops:
        by_warps = {r["warps"]: r for r in rows if r["op"] == op}
        cells = [f"{by_warps[w]['warp_ops_per_sm_cycle'] * by_warps[w]['instructions_per_op']:.3f}"
                 if w in by_warps else "-" for w in warps]
        lines.append(f"| {op} | " + " | ".join(cells) + " |")
    lines += ["", "Latency (one warp, one dependent chain):", "", "| instruction | SM cycles |", "|---|---|"]
    lines += [f"| {r['op']} | {r['cycles_per_op']:.1f} |" for r in doc["rows"] if r["kind"] == "latency"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = ScriptParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="folder for mio_micro.json and mio_micro.md")
    ap.add_argument("--table", type=Path, help="write the files from this saved JSON instead of measuring")
    ap.add_argument("--nvcc", default="nvcc")
    args = ap.parse_args(argv)
    doc = json.loads(args.table.read_text()) if args.table else measure(args.nvcc)
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.table:
        (args.out / "mio_micro.json").write_text(json.dumps(doc, indent=1) + "\n")
    text = table(doc)
    (args.out / "mio_micro.md").write_text("# NVIDIA lane and shared-memory instructions, measured\n\n" + text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
