"""Triton's LDS accesses of every amdgcn corpus case and their bank cycles under our bank model:
``benchmarks/data/triton_lds_conflicts.json``.

Usage (Triton 3.9 from PyPI; no GPU: it compiles for the targets on the CPU, as make_corpus.py does)::

    python benchmarks/triton_lds_conflicts.py [--family amd|wave32 ...] [--limit N] [--out FILE]
    python benchmarks/triton_lds_conflicts.py --sample N [--out benchmarks/data/triton_lds_sample.json]

Each corpus case's kernel is compiled again (benchmarks.make_corpus.compile_kernel, the same Gluon
kernel and options) and every LDS access of its LLVM IR is read with its per-thread byte addresses
(benchmarks.llir_lds: the address arithmetic evaluated for every thread).  Each access is priced by
linlayout.synth.banks for the target's LDS instruction of its width (``Target.lds_op_name``) on the
addresses of each wave, and takes its worst wave's cycles: ``[store, width_bytes, cycles, min_cycles,
count]`` rows, equal accesses counted together.  The planner prices one wave's instructions, each
access on wave 0's addresses (linlayout.synth.cost.lds_conflict_degree), and every wave of its plans
has the same conflicts (their addresses are XOR-translates by multiples of the width; on the amdgcn
corpora, 10,770 multi-wave accesses of the bench's plans, none differs), so wave 0 is its worst; of
Triton's kernels, some waves conflict where wave 0 does not.  Per access, the worst wave's cycles bound
the slowest wave's sum, equal where one wave is the worst of every access.  Lanes a
branch masks off (a broadcasting dst stores from some lanes only; LLVM may sink the loads into that
block) add no bank cycles: each takes the address of an active lane of its phase, and a phase with
no active lane is priced as one with a single lane [I] (the hardware is assumed to issue it).

The LLVM IR's accesses are the vectors Triton's lowering stores and loads; LLVM may join two of one
pattern into a ``ds_write2``/``ds_read2`` or split one into narrower ones: the bank cycles of the
data moved are the same (each part has the pattern of its lanes' bytes), so they are counted per IR
access (linlayout.synth.cost.triton_conflict_cycles prices them).

Each case's IR accesses are checked against its ISA: the bytes per lane they store and load equal
those of the amdgcn's ``ds_write*``/``ds_read*`` (``ds_store*``/``ds_load*``) instructions; the
cases where they differ are listed under ``ir_isa_differences`` (their rows are still stored).

``--sample N`` stores instead, for N cases of each family that use the LDS, spread over its (arch,
dtype) pairs, and the ``--case`` ones, every access with wave 0's address table and active lanes: the test data of
tests/test_triton_lds_layout.py, which checks that linlayout.synth.triton_swizzle's re-derived
shared layout (Triton's generic swizzling) gives these addresses.  The stored sample is ``--sample 15 --case
'blocked[1x4,t2x32,o10]->dotA16(kw8) gfx90a i8 1 64x64'`` (31 cases).
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: benchmarks.*

from benchmarks.llir_lds import LdsAccess, lds_accesses  # noqa: E402
from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout.dtypes import dtype_bits  # noqa: E402
from linlayout.hw.lds import lds_model  # noqa: E402
from linlayout.hw.targets import get_target  # noqa: E402
from linlayout.synth import banks  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
OUT = DATA / "triton_lds_conflicts.json"
SAMPLE = DATA / "triton_lds_sample.json"
FORMAT = "triton_lds_conflicts/v1"


def case_key(case: dict) -> str:
    """The key of a corpus case in the stored file: ``name arch dtype num_warps shape`` (``64x64``)."""
    return f"{case['name']} {case['arch']} {case['dtype']} {case['num_warps']} {'x'.join(map(str, case['shape']))}"


def wave_addresses(access: LdsAccess, arch: str, wave: int) -> tuple[str, np.ndarray | None]:
    """The target's instruction for ``access`` and wave ``wave``'s byte addresses, a masked lane given
    the address of an active lane of its phase (any active lane where its phase has none); None where
    no lane of the wave executes it."""
    target = get_target(arch)
    op_name = target.lds_op_name(access.store, access.width_bytes)
    size = target.wave_size
    addr, active = access.addr[wave * size:(wave + 1) * size].copy(), access.active[wave * size:(wave + 1) * size]
    if not active.any():
        return op_name, None
    if not active.all():
        op = lds_model(arch).op(op_name)
        phase = np.array([op.phase_of(lane % op.address_lanes) for lane in range(size)])
        fallback = addr[np.flatnonzero(active)[0]]
        for lane in np.flatnonzero(~active):
            same = np.flatnonzero(active & (phase == phase[lane]))
            addr[lane] = addr[same[0]] if same.size else fallback
    return op_name, addr


def bank_rows(accesses: list[LdsAccess], arch: str, element_bits: int) -> list[list[int]]:
    """``[store, width_bytes, cycles, min_cycles, count]`` of the accesses, each at its worst wave's
    cycles over its conflict-free least (module docstring); an access no lane executes is left out."""
    element_bytes = max(1, element_bits // 8)
    waves = -(-len(accesses[0].addr) // get_target(arch).wave_size) if accesses else 0
    rows = Counter()
    for a in accesses:
        priced = []
        for w in range(waves):
            op_name, addr = wave_addresses(a, arch, w)
            if addr is not None:
                cycles, ideal = banks.lane_cycles(arch, op_name, addr // element_bytes, element_bits)
                priced.append((int(cycles), int(ideal)))
        if priced:
            cycles, ideal = max(priced, key=lambda c: c[0] / c[1])
            rows[(int(a.store), a.width_bytes, cycles, ideal)] += 1
    return [[*k, n] for k, n in sorted(rows.items())]


_ISA_LDS = re.compile(r"^\s*ds_(write|store|read|load)(2st64|2|_2addr_stride64|_2addr)?_?(?:tr\d+_)?[a-z]?(\d+)")


def isa_lane_bytes(amdgcn: str) -> dict[str, int]:
    """The bytes per lane that the kernel's LDS instructions store and load (``{"store", "load"}``;
    a ``ds_write2``/``ds_read2`` twice its width; ``ds_read_b64_tr_b16``'s width the first)."""
    out = {"store": 0, "load": 0}
    for ln in amdgcn.split(".Lfunc_end0")[0].splitlines():
        m = _ISA_LDS.match(ln)
        if m and not ln.split()[0].startswith(("ds_read_addtid", "ds_write_addtid")):
            side = "store" if m.group(1) in ("write", "store") else "load"
            out[side] += int(m.group(3)) // 8 * (2 if m.group(2) else 1)
    return out


def compiled_accesses(case: dict, builder, kernels, family) -> tuple[list[LdsAccess], dict, dict]:
    """The LDS accesses of Triton's compiled kernel of ``case`` (benchmarks.llir_lds), and the
    bytes per lane they store and load against its ISA's (:func:`isa_lane_bytes`)."""
    from benchmarks import make_corpus as mc

    src = mc._gluon_layout(mc.spec_of(case["triton_src_params"]))
    dst = mc._gluon_layout(mc.spec_of(case["triton_dst_params"]))
    compiled, _ = mc.compile_kernel(case, src, dst, kernels, family)
    accesses = lds_accesses(compiled.asm["llir"], case["num_warps"] * family.wave_size, family.wave_size)
    ir = {"store": sum(a.width_bytes for a in accesses if a.store),
          "load": sum(a.width_bytes for a in accesses if not a.store)}
    return accesses, ir, isa_lane_bytes(compiled.asm["amdgcn"])


def sample_cases(cases: list[dict], n: int, seed: int = 27) -> list[dict]:
    """Up to ``n`` cases that use the LDS, spread over every (arch, dtype) in turn, each group's in a
    shuffled order (``seed``: its waves and shapes vary too)."""
    groups: dict[tuple, list[dict]] = {}
    for c in cases:
        if c["triton_kernel_shared"]:
            groups.setdefault((c["arch"], c["dtype"]), []).append(c)
    for g in groups.values():
        random.Random(seed).shuffle(g)
    out, i = [], 0
    while len(out) < n and any(i < len(g) for g in groups.values()):
        out += [g[i] for g in groups.values() if i < len(g)][: n - len(out)]
        i += 1
    return out


def _dumps(out: dict) -> str:
    """The file's JSON, one case per line (diffs stay readable)."""
    head = {k: v for k, v in out.items() if k != "cases"}
    lines = [f" {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}" for k, v in sorted(out["cases"].items())]
    return json.dumps(head, indent=1, sort_keys=True)[:-2] + ',\n "cases": {\n' + ",\n".join(lines) + "\n }\n}\n"


def main() -> None:
    from benchmarks import make_corpus as mc

    ap = ScriptParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--family", action="append", choices=("amd", "wave32"))
    ap.add_argument("--limit", type=int, help="only the first N cases of each family")
    ap.add_argument("--sample", type=int, help="store N cases' address tables instead (the test data)")
    ap.add_argument("--case", action="append", default=[], metavar="KEY",
                    help="with --sample, also this case ('name arch dtype num_warps shape')")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    import os
    import warnings

    warnings.simplefilter("ignore")
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    context, builder, kernels = mc._triton_session()  # noqa: F841 (context kept alive)
    out = {"format": FORMAT, "method": __doc__.split("\n\n")[0].replace("\n", " "), "cases": {}, "failed": {},
           "ir_isa_differences": {}}
    for name in args.family or ("amd", "wave32"):
        family = mc.FAMILIES[name]
        cases = json.loads(family.out.read_text())["cases"]
        if args.sample:
            cases = sample_cases(cases, args.sample) + [c for c in cases if case_key(c) in args.case]
        else:
            cases = cases[: args.limit]
        for i, case in enumerate(cases):
            key = case_key(case)
            try:
                accesses, ir_bytes, isa_bytes = compiled_accesses(case, builder, kernels, family)
                if ir_bytes != isa_bytes:
                    out["ir_isa_differences"][key] = {"ir": ir_bytes, "isa": isa_bytes}
                bits = dtype_bits(case["dtype"])
                if args.sample:
                    wave = family.wave_size
                    out["cases"][key] = {
                        "corpus": name, "accesses": [
                            {"store": a.store, "width_bytes": a.width_bytes,
                             "addr": a.addr[:wave].tolist(), "active": a.active[:wave].astype(int).tolist()}
                            for a in accesses]}
                else:
                    out["cases"][key] = bank_rows(accesses, case["arch"], bits)
            except Exception as e:  # noqa: BLE001 (Triton's compile errors, an address the reader refuses)
                out["failed"][key] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
            print(f"{name} {i + 1}/{len(cases)} {key}", file=sys.stderr, flush=True)
    path = args.out or (SAMPLE if args.sample else OUT)
    path.write_text(_dumps(out))
    print(f"{path}: {len(out['cases'])} cases, {len(out['failed'])} failed")


if __name__ == "__main__":
    main()
