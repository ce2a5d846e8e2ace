"""Rung 3: convert a tile between MFMA layouts and read the plan.

Flash attention's P tile: the 32x32 MFMA accumulator of S = Q K^T (fp16, 128 x 64,
4 waves along M) must become the A operand of the next MFMA (P V).  The planner
tries register renaming, in-wave lane moves (DPP, ds_swizzle, permlane swaps,
ds_bpermute, with v_cndmask / v_perm_b32) and an LDS round trip, prices them,
and executes the cheapest on the wave emulator before returning it.  The plan
certificate is an element-level JSON anyone can re-check (docs/contract.md section 4).
"""

import json
import tempfile
from pathlib import Path

from linlayout import LinearLayout
from linlayout.encodings import Mfma, mfma_dot_operand, mfma_layout
from linlayout.synth.convert import plan_conversion

# Triton 3.9's instruction counts for the same conversions (the benchmark baseline, docs/benchmarks.md).
BASELINE = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "triton_amd_baseline.json"
cases = json.loads(BASELINE.read_text())["cases"]


def triton_total(arch, src, dst):
    for c in cases:
        if c["arch"] == arch and c["dtype"] == "fp16" and \
                LinearLayout.from_json(c["src"]) == src and LinearLayout.from_json(c["dst"]) == dst:
            return f"{c['triton']['total']} ({c['name']})"
    raise LookupError(f"the baseline has no fp16 case {arch} {src} -> {dst}")


# (arch, Triton MFMA version, instruction M x N x K, kWidth of the A operand)
for arch, version, instr, k_width in [("gfx942", 3, (32, 32, 8), 4), ("gfx950", 4, (32, 32, 16), 8)]:
    mfma = Mfma(version, instr, (4, 1))                       # 4 waves along M
    src = mfma_layout(version, instr, (4, 1), (128, 64))      # accumulator of S = Q K^T
    dst = mfma_dot_operand(mfma, 0, k_width, (128, 64))       # A operand of P V
    plan = plan_conversion(src, dst, arch, 16)                # 16-bit elements; raises unless verified
    counts = {k: v for k, v in plan.counts().items() if v and k != "total"}
    print(f"=== {arch}: mfma{instr[0]} accumulator -> A operand (kWidth {k_width}), fp16 128x64")
    print(f"strategy {plan.strategy}, verified on the emulator: {plan.verified}")
    print(f"instructions: {plan.counts()['total']} {counts}; + estimated setup "
          f"{sum(plan.overhead.values())} = {plan.total_with_overhead()}")
    print(f"modelled cost {plan.cost:g} cycles, lower bound {plan.lower_bound['cost']:g} "
          f"(some lane needs {plan.lower_bound['cross_lane_dwords']} dwords that other lanes hold)")
    print(f"Triton 3.9 total (compiled ISA, one wave): {triton_total(arch, src, dst)}")
    asm = plan.pseudo_asm().splitlines()
    print("\n".join(asm[:9]) + f"\n  ... {len(asm) - 9} more lines")

    # The certificate: element-level steps, re-loadable with Plan.from_certificate.
    cert = Path(tempfile.mkdtemp()) / f"plan_{arch}.json"
    cert.write_text(plan.dumps())
    steps = json.loads(cert.read_text())["steps"]
    print(f"certificate: {len(steps)} steps, ops {sorted({s['op'] for s in steps})}")
