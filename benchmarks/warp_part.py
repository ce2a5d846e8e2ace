"""The setup estimate against the compiled setup, per plan (analysis, not a benchmark row); first made for
the warp part of multi-warp LDS plans' addresses, hence the name.

For every corpus case whose plan accesses LDS with more than one warp (``--all``: every plan): the
planner's setup estimate (``plan.overhead``: its setup-region entries), the compiled
``setup`` region's VALU, SALU and ``s_delay_alu`` (linlayout.lowering.conversion.lower_conversion,
``; linlayout-begin setup``), the affine tables the lowering built for the LDS address registers (their
lane and warp columns, as linlayout.synth.lane_arith.AffineTable), and what the setup shares with the
kernel around it (``kernel_sharing``): the VGPRs it reads that the kernel's load line computed (not the
lane id, ``v0``), and the LDS addresses of the conversion that no setup or conversion instruction forms
(the load line's own registers: LLVM's CSE with the global loads' offsets).  One JSON line per plan:

    PYTHONPATH=$PWD python benchmarks/warp_part.py [--corpus wave32] [--arch A] [--all] > rows.jsonl
    python benchmarks/warp_part.py --summary rows.jsonl [--causes]

``--summary`` reads such lines back: how many plans' compiled setup (VALU and SALU, ``s_delay_alu``
included) equals the estimate, is within one of it, and the sum and median of compiled minus estimate.
``--causes`` adds the same line for the plans whose setup shares values with the kernel and for the
others, and the ``s_delay_alu`` compiled (RDNA).
(The tables are read by wrapping ``LaneValues._compute`` and ``PlanEmitter.lds_address`` for the run.)
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the repository root: benchmarks.script_args

from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout import LinearLayout  # noqa: E402
from linlayout.cli.bench import dtype_bits, kernel_plan  # noqa: E402
from linlayout.lowering.conversion import lower_conversion  # noqa: E402
from linlayout.lowering.emit import lane_values, plan_ops  # noqa: E402
from linlayout.lowering.isa import around_region, region_lines, isa_counts  # noqa: E402
from linlayout.synth.lane_arith import fit_affine  # noqa: E402

SETUP_KEYS = ("valu_bpermute_addr", "salu_vcc", "salu_perm_selector", "valu_lane_selector",
              "salu_lane_selector_delay", "salu_permlane_selector", "valu_lds_addr")
CORPORA = {"amd": REPO / "benchmarks/data/triton_amd_corpus.json",
           "wave32": REPO / "benchmarks/data/triton_wave32_corpus.json"}


class _Recorder:
    """The affine tables ``LaneValues._compute`` fits while ``PlanEmitter.lds_address`` runs."""

    def __init__(self) -> None:
        self.inside = 0
        self.tables: list = []
        compute, address = lane_values.LaneValues._compute, plan_ops.PlanEmitter.lds_address
        rec = self

        def _compute(lanes, t, ok, *args, **kwargs):
            aff = fit_affine(t, ok) if rec.inside else None
            if aff is not None:
                rec.tables.append(aff)
            return compute(lanes, t, ok, *args, **kwargs)

        def lds_address(emitter, st, what):
            rec.inside += 1
            try:
                return address(emitter, st, what)
            finally:
                rec.inside -= 1

        lane_values.LaneValues._compute = _compute
        plan_ops.PlanEmitter.lds_address = lds_address


def kernel_sharing(setup: Sequence[str], conv: Sequence[str],
                   before: Sequence[str] = ()) -> tuple[list[int], list[str]]:
    """What a compiled setup region (``setup``, its instruction lines) takes from the kernel around it:
    the VGPRs it reads before it writes them, other than ``v0`` where no line ``before`` the setup writes
    it (the work-item id the kernel starts with; else a value of the load line too), i.e. values of the
    load line (LLVM's CSE of the address terms the global loads computed), and the address operands of the
    ``conv`` region's DS instructions that neither region writes before (the load line's registers)."""
    written: set[int] = set()
    foreign: set[int] = set()
    given = {0} - {r for line in before for r in _written_vgprs(line)}  # v0 as the kernel got it
    for line in setup:
        foreign |= _read_vgprs(line) - written - given
        written |= _written_vgprs(line)
    outside: list[str] = []
    for line in conv:
        for ops in _instructions(line):
            if ops[0].startswith("ds_") and not ops[0].startswith(DS_WITHOUT_ADDRESS) and len(ops) > 2:
                addr = ops[1] if ops[0].startswith(_STORES) else ops[2]
                regs = _vgprs(addr)
                if regs and not regs & written and addr not in outside:
                    outside.append(addr)
        written |= _written_vgprs(line)
    return sorted(foreign), outside


#: DS instructions that take no address operand (``ds_swizzle_b32 vdst, vdata``: a lane pattern in its
#: offset), so none of their operands is an LDS address.
DS_WITHOUT_ADDRESS = ("ds_swizzle", "ds_append", "ds_consume", "ds_nop")
#: Mnemonic prefixes of the stores, whose first operand is read (an address), not written.
#: instructions whose first operand is read, not written: stores, and prefetches (``global_prefetch_b8 v0, ...``
#: reads its address and writes no VGPR)
_STORES = ("ds_write", "ds_store", "buffer_store", "global_store", "global_prefetch")


def _written_vgprs(line: str) -> set[int]:
    """The VGPRs a vector instruction line writes: the first operand of each instruction on it (both
    halves of a VOPD line); none for a store or a scalar op."""
    return {r for ops in _instructions(line) if len(ops) > 1 and not ops[0].startswith(("s_",) + _STORES)
            for r in _vgprs(ops[1])}


def _read_vgprs(line: str) -> set[int]:
    """The VGPRs a vector instruction line reads: the operands after the first of each instruction on it
    (both halves of a VOPD line, which read before either writes), and a store's first; none for a scalar op."""
    return {r for ops in _instructions(line) if not ops[0].startswith("s_")
            for arg in ops[1 if ops[0].startswith(_STORES) else 2:] for r in _vgprs(arg)}


def _instructions(line: str) -> list[list[str]]:
    """The mnemonic and operands of each instruction of one ISA line (a comment dropped; a VOPD line
    ``X :: Y`` is two)."""
    halves = ([t for t in re.split(r"[\s,]+", half.strip()) if t] for half in line.split(";", 1)[0].split("::"))
    return [ops for ops in halves if ops]


def _vgprs(operand: str) -> set[int]:
    """The VGPR numbers an operand names (``v7``, ``v[4:7]``); none for any other operand."""
    m = re.fullmatch(r"v\[(\d+):(\d+)\]", operand)
    if m:
        return set(range(int(m.group(1)), int(m.group(2)) + 1))
    m = re.fullmatch(r"v(\d+)", operand)
    return {int(m.group(1))} if m else set()


def _accuracy(rows: list[dict]) -> str:
    """Plans, exact, within one, sum and median of compiled setup less estimate, summed estimate and
    compiled setup, of ``rows``."""
    diffs = sorted(r["setup"]["total"] - sum(r["estimate"].values()) for r in rows)
    median = (diffs[(len(diffs) - 1) // 2] + diffs[len(diffs) // 2]) / 2
    return (f"{len(rows)} plans: compiled setup = estimate {sum(d == 0 for d in diffs)}, within one "
            f"{sum(abs(d) <= 1 for d in diffs)}; compiled - estimate: sum {sum(diffs)}, median {median:g}")


def summary(path: Path, causes: bool = False) -> str:
    """Lines on the rows ``main`` printed to ``path``: plans, exact, within one, sum and median of the
    compiled setup less the estimate; with ``causes`` the same for the plans whose setup shares values
    with the kernel (``kernel_sharing``) and for the others, and the ``s_delay_alu`` compiled (the
    estimate counts the address programs' RDNA delays inside ``valu_lds_addr``, not apart)."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if not rows:
        return f"{path}: no rows"
    lines = [_accuracy(rows)]
    if causes:
        shared = [r for r in rows if r["kernel_values"] or r["outside_addresses"]]
        alone = [r for r in rows if not (r["kernel_values"] or r["outside_addresses"])]
        for what, part in (("sharing values with the kernel's load line", shared), ("self-contained", alone)):
            lines.append(f"{what}: " + (_accuracy(part) if part else "0 plans"))
        lines.append(f"s_delay_alu compiled {sum(r['setup']['delay'] for r in rows)} "
                     f"(in {sum(r['setup']['delay'] > 0 for r in rows)} plans)")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = ScriptParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", choices=sorted(CORPORA), default="amd")
    ap.add_argument("--arch")
    ap.add_argument("--all", action="store_true", help="one-warp plans and plans without a warp part too")
    ap.add_argument("--summary", type=Path, help="summarize the rows of an earlier run instead")
    ap.add_argument("--causes", action="store_true", help="with --summary: by sharing with the kernel, and the waits")
    args = ap.parse_args(argv)
    if args.causes and not args.summary:
        ap.error("--causes summarizes rows: give --summary FILE")
    if args.summary:
        try:
            print(summary(args.summary, args.causes))
        except (OSError, ValueError, KeyError, TypeError) as e:
            ap.error(f"--summary {args.summary}: not rows this script wrote ({type(e).__name__}: {e})")
        return 0
    cases = json.loads(CORPORA[args.corpus].read_text())["cases"]
    if args.arch and args.arch not in {c["arch"] for c in cases}:
        ap.error(f"--arch {args.arch}: no case of the {args.corpus} corpus is for it "
                 f"(its archs: {', '.join(sorted({c['arch'] for c in cases}))})")
    rec = _Recorder()
    for c in cases:
        if args.arch and c["arch"] != args.arch:
            continue
        plan = kernel_plan(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), c["arch"],
                           dtype_bits(c["dtype"]))
        if "valu_lds_addr" not in plan.overhead and not args.all:
            continue
        if plan.num_warps < 2 and not args.all:
            continue
        rec.tables = []
        try:
            low = lower_conversion(plan, binary=False)
        except Exception as e:  # noqa: BLE001 (an analysis: report the case and go on)
            print(f"{c['name']} {c['arch']} {c['dtype']}: {e}", file=sys.stderr)
            continue
        isa = low.compiled.isa
        lines = region_lines(isa, "setup")
        counts = isa_counts(isa, "setup")
        tables = [(t.const, list(t.lane_cols), list(t.warp_cols)) for t in rec.tables]
        code = [ln.strip() for ln in lines if ln.strip() and not ln.strip().startswith(";")]
        kernel_values, outside = kernel_sharing(
            code, [ln.strip() for ln in region_lines(isa, "conv") if ln.strip() and not ln.strip().startswith(";")],
            around_region(isa, "setup")[0])
        if not args.all and not any(any(w) for _, _, w in tables):
            continue
        print(json.dumps({
            "name": c["name"], "arch": c["arch"], "dtype": c["dtype"], "num_warps": plan.num_warps,
            "wave_size": plan.wave_size, "estimate": {k: plan.overhead.get(k, 0) for k in SETUP_KEYS},
            "setup": {"total": counts["total"], "valu": counts["valu"], "salu": counts["salu"],
                      "delay": sum("s_delay_alu" in ln for ln in lines)},
            "tables": tables, "kernel_values": kernel_values, "outside_addresses": outside, "isa": code,
        }), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
