"""Every kernel of kernels/ on gfx942 and gfx950: verified on the interpreter?, max |err|,
VGPRs, LDS bytes, LDS cycles vs ideal, the solved conversion, emit / compile (uncached) /
interpreter seconds.  Prints a markdown table (``--json``: the rows).

    python benchmarks/bench_kernels.py [--json]
"""

from __future__ import annotations

import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout.kernels import attention, common, convert, fp8_fp16, gemm  # noqa: E402
from linlayout.kernels.options import ARCHES  # noqa: E402
from linlayout.lowering.compile import compile_mlir  # noqa: E402

CASES = [
    ("convert", convert, ["--dtype", "f16"]),
    ("gemm", gemm, ["--dtype", "f16"]), ("gemm", gemm, ["--dtype", "bf16"]), ("gemm", gemm, ["--dtype", "fp8"]),
    ("attention", attention, ["--dtype", "f16"]), ("attention", attention, ["--dtype", "bf16"]),
    ("attention", attention, ["--dtype", "fp8"]),
    ("fp8_fp16", fp8_fp16, ["--direction", "fp8-to-f16"]), ("fp8_fp16", fp8_fp16, ["--direction", "f16-to-fp8"]),
]


def _conversion(name: str, dec: dict) -> str:
    if name == "attention":
        c = dec["p_conversion"]
        return f"P: {c['strategy']} {c['counts'] or ''}".strip()
    if name == "fp8_fp16":
        return f"{dec['plan']['strategy']} {dec['plan']['counts'] or ''} at {dec['layout_conversion_at_bits']} bits"
    if name == "convert":
        return f"{dec['strategy']} {dec['plan_counts'] or ''}"
    return f"{dec['tiling']['instruction']}, kWidth {dec['tiling']['k_width']}"


def row(name: str, mod, extra: list[str], arch: str) -> dict:
    common_args = ["--arch", arch, "--interpret"]
    parser = common._parser(name, "", mod.add_arguments)
    args = parser.parse_args(common_args + extra)
    t0 = time.perf_counter()
    kb = mod.build(args)
    emit = time.perf_counter() - t0
    t0 = time.perf_counter()
    ck = compile_mlir(kb.text, arch, binary=True, cache=False)
    comp = time.perf_counter() - t0
    st = common.static_report(kb, ck)
    it = common.interpret(kb, mod.make_case(kb, args, 0))
    return {"kernel": name, "arch": arch, "args": " ".join(extra), "verified": it["verified"],
            "max_abs_err": it["max_abs_err"], "vgprs": st["vgpr_count"], "agprs": st["agpr_count"],
            "lds_bytes": st["lds_bytes"], "lds_cycles": st["lds"]["cycles"], "lds_ideal": st["lds"]["ideal_cycles"],
            "conversion": _conversion(name, kb.decisions), "emit_s": round(emit, 3), "compile_s": round(comp, 3),
            "interpret_s": it["seconds"], "sizes": it["sizes"]}


def main() -> None:
    ap = ScriptParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rows = [row(n, m, e, arch) for n, m, e in CASES for arch in ARCHES]
    if a.json:
        print(json.dumps(rows, indent=1))
        return
    print("| kernel | arch | args | verified | max abs err | VGPRs | LDS bytes | LDS cycles (ideal) | decision | "
          "emit s | compile s | interp s |")
    print("|" + "---|" * 12)
    for r in rows:
        print(f"| {r['kernel']} | {r['arch']} | {r['args']} | {r['verified']} | {r['max_abs_err']:.2g} | {r['vgprs']} | "
              f"{r['lds_bytes']} | {r['lds_cycles']} ({r['lds_ideal']}) | {r['conversion']} | {r['emit_s']} | "
              f"{r['compile_s']} | {r['interpret_s']} |")


if __name__ == "__main__":
    main()
