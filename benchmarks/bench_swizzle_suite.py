"""Swizzle suite: our synthesized LDS layout vs Triton's choices and fixed conventions.

48 tile cases = {gfx942, gfx950} x {16x16, 32x32 MFMA} x {operand A, B} x {row-, column-major
global source} x {fp16, bf16, fp8}.  The writer is a global-load style blocked layout (16 bytes
per lane along the source's contiguous dim, 4 warps); the reader is Triton's MFMA dot-operand
layout (warps 2x2).  fp16 tiles are 128x64 (A) / 64x128 (B); bf16 and fp8 tiles are 128x128.

Every candidate shared layout is scored by the same exact analysis (linlayout.synth.lds_access: widest
legal instruction per side, then cycles): LDS instructions per wave (write + read) and bank
cycles (write + read).  Candidates:

  ours      linlayout.synth.swizzle.synthesize (default objective: fewest instructions, then cycles)
  ours_cyc  synthesize(objective="cycles"): fewest cycles, then fewest instructions
  t_op      Triton's AMD operand layout (composeSharedLayoutForOperand swizzled_shared)
  t_cvt     Triton's optimalSwizzlingLdSt with AMD laneAddr tiles (its convert_layout LDS path)
  xor333    byte-level Swizzle<3,4,3>
  ck16      CK-Tile XOR pre-shuffle with 16-byte packs
  plain     unswizzled
  pad       best padded layout (row / 2 rows interval; 1 dword, 2 dwords, 16 bytes pad)

Run:  python benchmarks/bench_swizzle_suite.py [--json]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout import LayoutError  # noqa: E402
from linlayout.encodings import Mfma, blocked, mfma_dot_operand  # noqa: E402
from linlayout.synth.lds_access import tile_access_report  # noqa: E402
from linlayout.synth.swizzle import padding_options, synthesize  # noqa: E402
from linlayout.synth.swizzle_conventions import (ck_xor16, triton_convert_shared, triton_mfma_operand_shared,  # noqa: E402
                                       unswizzled, xor_333)

INSTR = {  # (arch, bits) -> {tile: (instr shape, kWidth)}
    ("gfx942", 16): {16: ((16, 16, 16), 4), 32: ((32, 32, 8), 4)},
    ("gfx942", 8): {16: ((16, 16, 32), 8), 32: ((32, 32, 16), 8)},
    ("gfx950", 16): {16: ((16, 16, 32), 8), 32: ((32, 32, 16), 8)},
    ("gfx950", 8): {16: ((16, 16, 128), 16), 32: ((32, 32, 64), 16)},
}
DTYPES = {"fp16": 16, "bf16": 16, "fp8": 8}
CANDIDATES = ["ours", "ours_cyc", "t_op", "t_cvt", "xor333", "ck16", "plain", "pad"]
OTHERS = CANDIDATES[2:]


def cases():
    for arch in ("gfx942", "gfx950"):
        for tile in (16, 32):
            for op_idx in (0, 1):
                for row_major in (True, False):
                    for dtype, bits in DTYPES.items():
                        instr, kw = INSTR[(arch, bits)][tile]
                        big = dtype != "fp16"
                        shape = (128, 128) if big else ((128, 64) if op_idx == 0 else (64, 128))
                        yield dict(arch=arch, tile=tile, op_idx=op_idx, row_major=row_major, dtype=dtype, bits=bits,
                                   instr=instr, k_width=kw, shape=shape)


def layouts(c):
    version = 4 if c["arch"] == "gfx950" else 3
    reader = mfma_dot_operand(Mfma(version, c["instr"], (2, 2)), c["op_idx"], c["k_width"], c["shape"])
    order = (1, 0) if c["row_major"] else (0, 1)
    inner = order[0]
    vec = 128 // c["bits"]
    spt, tpw = [1, 1], [1, 1]
    spt[inner] = vec
    tpw[inner] = min(64, c["shape"][inner] // vec)
    tpw[1 - inner] = 64 // tpw[inner]
    writer = blocked(spt, tpw, [4, 1] if c["row_major"] else [1, 4], list(order), c["shape"])
    return writer, reader, order, (1 if c["op_idx"] == 0 else 0)


def score(shared, writer, reader, bits, arch):
    w = tile_access_report(shared, writer, bits, arch, "write")
    r = tile_access_report(shared, reader, bits, arch, "read")
    return {"instr": w.choice.count + r.choice.count, "cycles": w.total_cycles + r.total_cycles,
            "ops": f"{w.choice.op.replace('ds_', '')}/{r.choice.op.replace('ds_', '')}",
            "ideal": w.ideal_cycles + r.ideal_cycles}


def run_case(c):
    writer, reader, order, k_dim = layouts(c)
    arch, bits, shape = c["arch"], c["bits"], c["shape"]
    out = {}
    t = time.perf_counter()
    res = synthesize(writer, reader, bits, arch)
    for key, objective in (("ours", "vector"), ("ours_cyc", "cycles")):
        if objective == "cycles":
            res = synthesize(writer, reader, bits, arch, objective="cycles")
        out[key] = {"instr": res.write_instructions + res.read_instructions, "cycles": res.total_cycles,
                    "ops": f"{res.write_op.replace('ds_', '')}/{res.read_op.replace('ds_', '')}",
                    "ideal": res.ideal_cycles, "optimal": res.optimal, "certified": res.certified,
                    "lower_bound": res.lower_bound_cycles}
    synth_s = time.perf_counter() - t
    others = {
        "t_op": lambda: triton_mfma_operand_shared(shape, order, k_dim, c["k_width"], bits, arch),
        "t_cvt": lambda: triton_convert_shared(writer, reader, bits, arch),
        "xor333": lambda: xor_333(shape, order, bits),
        "ck16": lambda: ck_xor16(shape, order, bits),
        "plain": lambda: unswizzled(shape, order),
    }
    for name, make in others.items():
        try:
            out[name] = score(make(), writer, reader, bits, arch)
        except LayoutError as e:
            out[name] = {"error": str(e)}
    row = shape[order[0]]
    pads = padding_options(writer, reader, bits, arch, intervals=[row, 2 * row], orders=[order])
    if pads:
        p = pads[0]
        out["pad"] = {"instr": p.write_instructions + p.read_instructions, "cycles": p.total_cycles,
                      "ops": f"{p.write_op.replace('ds_', '')}/{p.read_op.replace('ds_', '')}",
                      "pad": f"{p.interval}:+{p.pad}", "lds_bytes": p.lds_bytes}
    return out, synth_s


def name_of(c):
    return (f"{c['arch']} {c['tile']}x{c['tile']} {'A' if c['op_idx'] == 0 else 'B'} "
            f"{'row' if c['row_major'] else 'col'} {c['dtype']}")


def main(argv=None):
    ap = ScriptParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rows = []
    tally = {(who, k, what): 0 for who in ("ours", "ours_cyc") for k in OTHERS for what in ("le", "lt")}
    certified = {"ours": 0, "ours_cyc": 0}
    cycles_le = {k: 0 for k in OTHERS}
    total_time = 0.0
    for c in cases():
        res, secs = run_case(c)
        total_time += secs
        for who in certified:
            certified[who] += bool(res[who]["certified"])
        mine = {"ours": (res["ours"]["instr"], res["ours"]["cycles"]),
                "ours_cyc": (res["ours_cyc"]["cycles"], res["ours_cyc"]["instr"])}
        for k in OTHERS:
            o = res.get(k, {})
            inf = float("inf")
            theirs = {"ours": (o.get("instr", inf), o.get("cycles", inf)),
                      "ours_cyc": (o.get("cycles", inf), o.get("instr", inf))}
            for who in mine:
                tally[(who, k, "le")] += mine[who] <= theirs[who]
                tally[(who, k, "lt")] += mine[who] < theirs[who]
            cycles_le[k] += res["ours"]["cycles"] <= o.get("cycles", inf)
        rows.append({"case": name_of(c), **{k: res.get(k) for k in CANDIDATES}, "synth_seconds": round(secs, 3)})
    n = len(rows)
    summary = {
        "cases": n,
        "certified_optimal (over enumerated choices, under the model)": certified,
        "ours: (instructions, cycles) never worse than": {k: f"{tally[('ours', k, 'le')]}/{n}" for k in OTHERS},
        "ours: strictly better than": {k: f"{tally[('ours', k, 'lt')]}/{n}" for k in OTHERS},
        "ours: cycles alone never worse than": {k: f"{cycles_le[k]}/{n}" for k in OTHERS},
        "ours_cyc: (cycles, instructions) never worse than": {k: f"{tally[('ours_cyc', k, 'le')]}/{n}" for k in OTHERS},
        "ours_cyc: strictly better than": {k: f"{tally[('ours_cyc', k, 'lt')]}/{n}" for k in OTHERS},
        "synthesis_seconds_total (both objectives)": round(total_time, 2),
    }
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary}))
        return 0
    w = 26
    print("cells: LDS instructions per wave (write+read) / bank cycles (write+read); ideal = conflict-free cycles")
    print(f"{'case':<{w}} " + " ".join(f"{k:>11}" for k in CANDIDATES) + "   ideal  ops(ours)")
    for r in rows:
        cells = []
        for k in CANDIDATES:
            v = r.get(k) or {}
            cells.append(f"{v['instr']:>5}/{v['cycles']:<5}" if "instr" in v else f"{'n/a':>11}")
        print(f"{r['case']:<{w}} " + " ".join(cells) + f"   {r['ours']['ideal']:>5}  {r['ours']['ops']}")
    print()
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
