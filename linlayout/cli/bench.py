"""``linlayout bench conversions [--baseline FILE]``: our conversion kernels against Triton's.

For every case of the baseline (docs/contract.md section 5; by default the repository's
benchmarks/data/triton_amd_baseline.json, Triton's counts for its conversion cases):
plan the conversion for the benchmark kernel (``kernel_plan``: on every AMD target the 8/16-bit
packing is chosen where the kernel moves single elements; ``repacked`` names the sides whose
register order it changed, ``src_unpacked`` / ``dst_unpacked`` whether the src arrives / the dst
leaves one element per VGPR, ``dst_one_copy`` whether the kernel stores one copy of the dst's repeated
elements), emit the conversion kernel, compile it to ISA and a code object, and
count the instructions of the ``conv`` region of one wave the way the baseline counts Triton's
(linlayout.lowering.isa); the AMD wave32 targets (``--corpus wave32``) too.  Targets without a kernel emitter
(``--corpus nvidia``) are counted from the plan in the classes of Triton's counts (PTX;
``counted_by: "plan"``, no registers, times are the planner's).  Prints ``{"cases": [...], "summary": {...}}``:

* ``cases``: one row per case, with the keys listed at the end of this help (:data:`ROW_KEYS`; a refused
  case's too); with ``--corpus`` each row also has ``set``, its set;
* ``summary``: wins/ties/losses, the cases whose modelled value is above Triton's per objective, the geometric
  mean of ours/Triton over the cases where both are nonzero, whether ours is at most Triton's everywhere,
  the cases where Triton goes through LDS for a conversion that stays in each wave and whether ours is at
  most half of Triton's there, and compile-time statistics;
* ``summary.whole_conversion`` (corpus cases): our whole conversions (``ours_whole``) against Triton's
  (``triton_whole``): wins/ties/losses, the cases modelled above it, the cases whose load/store-side VALU
  is not measured or failed; and the cases whose Triton kernel needs more LDS than the target has
  (``triton_over_target_lds``: it cannot launch there; ours moves such a tile in rounds).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import textwrap
import time
from pathlib import Path

import numpy as np

from linlayout.lowering.beyond_identity import SIDES, IdentityKernelError, ours_beyond_identity
from linlayout.lowering.conversion import lower_conversion
from linlayout.lowering.plan_counts import plan_isa_counts, plan_ptx_counts
from linlayout.lowering.emit.conversion_kernel import contiguous_registers, source_tuples
from linlayout.synth.convert import plan_conversion
from linlayout.synth.one_copy import copy_bits
from linlayout.synth.packing import packing_bits, plan_free_packing
from linlayout.synth.src_offsets import row_major_strides
from linlayout.synth.cost import OBJECTIVES, access_conflict_cycles, cost_model, lds_conflict_cycles, mix_cost
from linlayout.synth.emulator import element_ids

from ..dtypes import dtype_bits
from ..errors import LayoutError, require_flag
from ..hw.targets import get_target
from ..layout import LinearLayout
from . import add_command, add_json_flag

# Triton's compile time per conversion kernel, as the issue states it (seconds).
TRITON_COMPILE_SECONDS = (0.3, 0.5)
#: The repository's baseline (a source checkout; an installed package names one with --baseline).
DEFAULT_BASELINE = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "triton_amd_baseline.json"
#: The repository's public corpora (benchmarks/make_corpus.py --family F), run by ``--corpus F``.
CORPORA = {family: DEFAULT_BASELINE.with_name(f"triton_{family}_corpus.json") for family in ("amd", "nvidia", "wave32")}
#: Triton's LDS accesses of the amdgcn corpora with their bank cycles (benchmarks/triton_lds_conflicts.py).
TRITON_LDS_CONFLICTS = DEFAULT_BASELINE.with_name("triton_lds_conflicts.json")
#: The kinds under which mix_cost prices each PTX class: the cost model prices ``shfl`` as
#: ``ds_bpermute``, ``prmt``/``selp``/``mov`` as ``v_perm_b32``/``v_cndmask``/``v_mov`` (one vector
#: issue) and shared-memory accesses as LDS ones (CostModel.instruction; tests/test_ptx_counts.py).
PTX_AS_MIX = {"shfl.sync": "ds_bpermute", "prmt": "v_perm_b32", "selp": "v_cndmask", "mov": "v_mov",
              "st.shared": "lds_write", "stmatrix": "lds_write", "ld.shared": "lds_read", "ldmatrix": "lds_read",
              "bar.sync": "s_barrier"}
#: The objectives whose values are cycles, printed per case and in the summaries.
CYCLE_OBJECTIVES = tuple(o for o in OBJECTIVES if o != "instructions")
#: Triton's count keys that are shared-memory (LDS) instructions, AMD and PTX.
SHARED_MEMORY_KEYS = ("lds_write", "lds_read", "lds_read_tr", "st.shared", "ld.shared", "ldmatrix", "stmatrix")


#: The keys of a planned case's row (:func:`bench_case`), in its order, with their meanings: ``bench
#: conversions --help`` lists them from here (:func:`row_keys_help`), and tests compare them with real rows.
ROW_KEYS = {
    "name": "the case's name", "arch": "its target", "dtype": "its element type",
    "ours": "our counts: the compiled conv region of one wave counted the way the baseline counts Triton's "
            "(linlayout.lowering.isa, isa_counts), or the plan's where counted_by is plan",
    "triton": "Triton's counts (the baseline's)",
    "strategy": "the plan's strategy", "objective": "the objective the plan was chosen by",
    "plan_counts": "the plan's instructions per kind",
    "ratio": "ours / Triton's total (null where Triton's is 0)",
    "stays_in_wave": "every element stays in its warp",
    "triton_uses_lds": "Triton's counts hold a shared-memory access",
    "triton_lds_bytes": "the LDS Triton's kernel allocates (the baseline's; null where it has none)",
    "triton_whole": "Triton's whole conversion (corpus cases; null otherwise): its counted region with the "
                    "shared-memory accesses that the .loc directives put on another line and the VALU its load "
                    "and store lines hold beyond its identity kernels' (triton_outside_valu)",
    "triton_outside_valu": "that VALU, {load, store} (null where not measured alike with ours)",
    "ours_whole": "our whole conversion: ours with our kernel's setup region beyond the identity kernels' "
                  "(ours_setup, the conversion's prologue that Triton's counted region holds on its line) and the "
                  "VALU our load and store sides hold beyond our identity kernels' (ours_outside_valu, "
                  "linlayout.lowering.beyond_identity; measured only where the corpus has Triton's and ours is a "
                  "compiled kernel)",
    "ours_whole_rule": "how ours_whole was counted (OURS_WHOLE_RULE; the summary refuses rows of another)",
    "ours_setup": "our setup region's counts beyond the identity kernels'",
    "ours_outside_valu": "our load/store-side VALU, {load, store}",
    "ours_outside_valu_failed": "why our identity kernels failed (then no ours_whole); null otherwise",
    "triton_over_target_lds": "Triton's kernel needs more LDS than the target has",
    "plan_seconds": "planning time (layouts -> plan)",
    "lds_bytes": "our LDS bytes", "vgpr_count": "our kernel's VGPRs (null where counted from the plan)",
    "sgpr_count": "its SGPRs (null where counted from the plan)",
    "setup_total": "our setup instructions (the compiled setup region; the plan's estimate where counted from "
                   "the plan)",
    "plan_isa_differences": "where the compiled region's counts differ from the plan's",
    "compile_seconds": "layouts -> plan -> MLIR -> ISA + code object, cache bypassed (the planning time where "
                       "counted from the plan)",
    "counted_by": 'isa, or "plan": a target without a kernel emitter (NVIDIA: PTX counts, no registers)',
    "modelled": "per objective, our ISA counts and Triton's priced alike as instruction mixes by the planner's "
                "cost model (linlayout.synth.cost.mix_cost), each with the bank conflicts of its LDS accesses "
                "where bank_conflicts has them, the plan's own value, and with triton_whole and ours_whole "
                "priced alike where both are given",
    "modelled_conflict_blind": "modelled with no bank conflict on either side (the measure before session 22)",
    "bank_conflicts": "the cycles bank conflicts add to the LDS accesses of ours (the plan's, "
                      "linlayout.synth.cost.lds_conflict_cycles), of Triton's region and of its whole conversion "
                      "(its compiled accesses, benchmarks/data/triton_lds_conflicts.json); null where Triton's are "
                      "not stored (then modelled is conflict-blind on both sides)",
    "repacked": "the sides whose register order the plan changed (kernel_plan's packing)",
    "src_unpacked": "the src arrives one 8/16-bit element per VGPR",
    "dst_unpacked": "the dst leaves one 8/16-bit element per VGPR",
    "dst_one_copy": "the kernel stores one copy of the dst's repeated elements, from the canonical lanes",
}
#: The keys of a row the planner refused (:func:`bench_or_refusal`).
REFUSED_ROW_KEYS = ("name", "arch", "dtype", "triton_total", "refused")


def row_keys_help(width: int = 100) -> str:
    """The end of ``bench conversions --help``: each key of :data:`ROW_KEYS` with its meaning, and
    :data:`REFUSED_ROW_KEYS`, wrapped at ``width`` characters."""
    lines = ["The keys of a row of cases (a case the planner refuses: " + ", ".join(REFUSED_ROW_KEYS) + "):"]
    for key, meaning in ROW_KEYS.items():
        lines += textwrap.wrap(f"{key}: {meaning}", width, initial_indent="  ", subsequent_indent="      ")
    return "\n".join(lines)


def register(subparsers) -> None:
    p = add_command(subparsers, "bench",
                    "Benchmarks of linlayout against Triton's code (AMD; NVIDIA and wave32 corpora).")
    sub = p.add_subparsers(dest="bench", metavar="BENCH")
    c = sub.add_parser("conversions", help="our ISA counts beside Triton's for every baseline conversion",
                       description=__doc__.split("\n\n", 1)[1] + "\n" + row_keys_help())
    c.add_argument("--baseline", metavar="FILE",
                   help="the baseline JSON (default: the repository's benchmarks/data/triton_amd_baseline.json)")
    c.add_argument("--corpus", nargs="?", const="amd", choices=sorted(CORPORA), metavar="FAMILY",
                   help="run a corpus of the repository (benchmarks/data/triton_FAMILY_corpus.json): amd (the "
                        "default; beside the baseline, a summary per set), nvidia (sm_80/sm_90, PTX counts) or "
                        "wave32 (gfx1100/gfx1200/gfx1250), these two alone")
    c.add_argument("--cases", type=int, metavar="N", help="only the first N cases")
    c.add_argument("--arch", help="only the cases of this arch")
    c.add_argument("--isa-only", action="store_true", help="skip the code object (no linker; compile times exclude it)")
    add_json_flag(c)
    c.set_defaults(func=run)
    p.set_defaults(func=_no_bench)


def _no_bench(args: argparse.Namespace) -> dict:
    raise LayoutError("name a benchmark: linlayout bench conversions [--baseline FILE]")


def _load_baseline(path: str | None, default: Path = DEFAULT_BASELINE) -> list[dict]:
    if path is None:
        if not default.is_file():
            raise LayoutError(f"no baseline at {str(default)!r} (not a source checkout): give --baseline FILE")
        path = str(default)
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise LayoutError(f"cannot read the baseline {path!r}: {e}") from None
    cases = data.get("cases") if isinstance(data, dict) else None
    if not isinstance(cases, list) or not cases:
        raise LayoutError(f"{path!r} has no 'cases' list (expected triton_amd_convert_baseline/v1)")
    for i, c in enumerate(cases):
        missing = [k for k in ("name", "arch", "dtype", "src", "dst", "triton") if k not in c]
        if missing:
            raise LayoutError(f"baseline case {i} lacks {missing}")
        _check_outside_valu(c, i)
    return cases


def _check_outside_valu(case: dict, index: int) -> None:
    """A case's ``triton_outside_valu``, where given (not null), is ``{"load": n, "store": n}`` with
    each ``n`` an int >= 0 (:func:`triton_whole_conversion`); ``LayoutError`` naming the case
    otherwise (a missing side is not 0, an empty dict not a measurement)."""
    outside = case.get("triton_outside_valu")
    if outside is None:
        return
    if (not isinstance(outside, dict) or set(outside) != set(SIDES)
            or not all(type(n) is int and n >= 0 for n in outside.values())):
        raise LayoutError(f"baseline case {index} ({case['name']} {case['arch']} {case['dtype']}): "
                          f"triton_outside_valu must be {{\"load\": n, \"store\": n}} with ints n >= 0, "
                          f"got {json.dumps(outside)}")


def stays_in_wave(src, dst, num_warps: int) -> bool:
    """True when every element dst puts in warp ``w`` is held by warp ``w`` in src."""
    s, d = element_ids(src, num_warps), element_ids(dst, num_warps)
    return all(np.isin(d[w], s[w]).all() for w in range(num_warps))


def bench_case(case: dict, binary: bool = True) -> dict:
    """Plan, emit, compile and count one baseline case, planned for the kernel's src loads
    (``source_tuples``: the VGPR tuples its global loads leave the src registers in); where
    the target has no emitter, count the plan in the classes of Triton's counts
    (linlayout.lowering.plan_counts: PTX for NVIDIA, the ISA's for AMD; ``counted_by: "plan"``, no
    registers; PTX mixes priced as :func:`ptx_mix`).  Where the corpus stores Triton's load/store-line
    VALU and ours is a compiled kernel, ours is measured alike (``ours_outside_valu``: our identity
    kernels compiled too, after the timed compile) for the whole conversions (``ours_whole``)."""
    src, dst = LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])
    element_bits = dtype_bits(case["dtype"])
    target = get_target(case["arch"])
    # the load/store-side VALU is compared where ours is measured alike (a compiled kernel)
    whole = triton_whole_conversion(case, outside_valu=target.emitter is not None)
    outside_alike = whole is not None and target.emitter is not None and outside_valu_measured(case)
    t0 = time.perf_counter()
    plan = kernel_plan(src, dst, case["arch"], element_bits)
    t1 = time.perf_counter()
    ours_outside = ours_setup = outside_failed = None
    if target.emitter is None:
        nvidia = target.family == "nvidia"
        ours = plan_ptx_counts(plan) if nvidia else plan_isa_counts(plan)
        measured = {"lds_bytes": plan.lds_bytes, "vgpr_count": None, "sgpr_count": None,
                    "setup_total": sum(int(v) for v in plan.overhead.values()), "plan_isa_differences": [],
                    "compile_seconds": round(t1 - t0, 4), "counted_by": "plan",
                    "modelled": modelled(plan, ptx_mix(ours), ptx_mix(case["triton"]),
                                         None if whole is None else ptx_mix(whole), ptx_mix(ours)) if nvidia
                    else modelled(plan, ours, case["triton"], whole, ours)}
        measured["modelled_conflict_blind"], measured["bank_conflicts"] = measured["modelled"], None
        ours_whole = None if whole is None else dict(ours)
    else:
        low = lower_conversion(plan, binary=binary, cache=False)
        ours = low.report["isa_counts"]
        measured = {k: low.report[k] for k in ("lds_bytes", "vgpr_count", "sgpr_count")}
        measured.update(setup_total=low.report["setup_counts"]["total"], plan_isa_differences=low.differences,
                        compile_seconds=round(time.perf_counter() - t0, 4), counted_by="isa")
        ours_whole = None
        if whole is not None:
            try:
                beyond = ours_beyond_identity(plan, low.compiled.isa)
            except IdentityKernelError as e:  # our measurement failed: no whole conversion of ours, not a refusal
                outside_failed = str(e)
            else:
                ours_setup = beyond["setup"]
                ours_outside = beyond["outside_valu"] if outside_alike else None
                ours_whole = with_outside_valu(with_setup(ours, ours_setup), ours_outside)
        conflicts = bank_conflicts(plan, case, whole)
        measured["modelled"] = modelled(plan, ours, case["triton"], whole, ours_whole, conflicts)
        measured["modelled_conflict_blind"] = (measured["modelled"] if conflicts is None
                                               else modelled(plan, ours, case["triton"], whole, ours_whole))
        measured["bank_conflicts"] = conflicts
    triton = case["triton"]
    tri_total = int(triton["total"])
    return {
        "name": case["name"], "arch": case["arch"], "dtype": case["dtype"],
        "ours": ours, "triton": triton,
        "strategy": plan.strategy, "objective": plan.objective, "plan_counts": plan.counts(),
        "ratio": (ours["total"] / tri_total) if tri_total else None,
        "stays_in_wave": stays_in_wave(src, dst, plan.num_warps),
        "triton_uses_lds": uses_shared_memory(triton), "triton_lds_bytes": case.get("triton_lds_bytes"),
        "triton_whole": whole, "triton_outside_valu": case["triton_outside_valu"] if outside_alike else None,
        "ours_whole": ours_whole, "ours_whole_rule": OURS_WHOLE_RULE, "ours_setup": ours_setup,
        "ours_outside_valu": ours_outside,
        "ours_outside_valu_failed": outside_failed, "triton_over_target_lds": triton_exceeds_target_lds(case),
        "plan_seconds": round(t1 - t0, 4), **measured,
        "repacked": [side for side, given, planned in zip(("src", "dst"), (src, dst), plan.packed_sides())
                     if given.bases["register"] != planned.bases["register"]],
        "src_unpacked": plan.src_unpacked, "dst_unpacked": plan.dst_unpacked, "dst_one_copy": plan.dst_one_copy,
    }


def kernel_plan(src: LinearLayout, dst: LinearLayout, arch: str, element_bits: int, strategy: str = "auto",
                unpacked_src: bool = True, unpacked_dst: bool = True, load_line: bool = True,
                one_copy_dst: bool = True):
    """The plan of one case for the benchmark kernel, planned for the VGPR tuples its global loads leave
    the src in and its global stores take the dst in (``source_tuples``: its runs of
    ``2 ** contiguous_registers`` registers and the single loads and stores at consecutive addresses
    that the compiler merges into wide ones).  On every
    AMD target (CDNA and RDNA: the targets with a kernel emitter) the planner also chooses which
    8/16-bit elements share a VGPR where the kernel moves them one at a time
    (``linlayout.synth.packing.plan_free_packing``; the registers of one run keep their place, and each
    candidate order is planned for the tuples the kernel loads its src and stores its dst in): Triton's
    ``convert_layout``, which these cases compare against, takes and yields single 8/16-bit values
    and leaves their packing to the loads and stores around it (docs/benchmarks.md); where the kernel
    loads every 8/16-bit src element alone (a dword's elements not all consecutive in memory, so that
    ``_Kernel._runs`` moves it element by element), the src may also arrive one element per VGPR, as
    Triton's kernels load them (``unpacked_src``, ``plan.src_unpacked``; ``unpacked_src=False``: the
    kernel packs them, the only form before session 20); where it stores every dst element alone, the
    dst may likewise leave one element per VGPR (``unpacked_dst``, ``plan.dst_unpacked``).  The kernel
    loads and stores per ``plan.src`` / ``plan.dst``.  Targets counted from the plan (NVIDIA) keep the
    layouts' register order and are planned with no tuples or load line (PTX prices neither).
    ``strategy``: plan_conversion's.  On the targets with a kernel emitter the plan is made for the offsets the
    kernel's src load line forms (``src_global_strides``: the full tile, row-major, ``row_major_strides``),
    whose registers the setup reuses; ``load_line`` False plans without them (as the bench did before that
    input).  Where the dst holds elements in several lanes (a
    zero lane basis), the kernel may store one copy of each from the canonical lanes (``one_copy_dst``:
    plan_conversion's ``dst_one_copy``, ``plan.dst_one_copy`` where that plan is the cheapest; the
    kernel then masks its stores, whose SALU the whole conversion counts)."""
    for name, value in (("unpacked_src", unpacked_src), ("unpacked_dst", unpacked_dst), ("load_line", load_line),
                        ("one_copy_dst", one_copy_dst)):
        require_flag(name, value)
    if get_target(arch).emitter is None:
        return plan_conversion(src, dst, arch, element_bits, strategy=strategy)  # (PTX: no VGPR tuples)
    src_alone, dst_alone = unpacked_sides(src, dst, element_bits)
    return plan_free_packing(src, dst, arch, element_bits, src_fixed_bits=contiguous_registers(src),
                             dst_fixed_bits=contiguous_registers(dst), strategy=strategy,
                             unpacked_src=unpacked_src and src_alone, unpacked_dst=unpacked_dst and dst_alone,
                             src_tuple_dwords=lambda order: source_tuples(order, element_bits),
                             dst_tuple_dwords=lambda order: source_tuples(order, element_bits),
                             src_global_strides=row_major_strides([size for _, size in src.out_dims]) if load_line
                             else None, dst_one_copy=one_copy_dst and bool(copy_bits(dst)))


#: [I] The most dst VGPRs the kernel holds one element each (``kernel_plan``'s ``unpacked_dst``): with 64
#: (gfx942 bf16 ``blocked[1x8,t2x32,o10]->blocked[2x1,t16x4,o01]``, 4 waves) LLVM's register allocator copies
#: 32 src VGPRs into the tuples of the round trip's stores (region 83 -> 114); at 32 and fewer no case did.
UNPACKED_DST_VGPRS = 32


def unpacked_sides(src: LinearLayout, dst: LinearLayout, element_bits: int) -> tuple[bool, bool]:
    """Whether the bench kernel can load the src / store the dst one 8/16-bit element per VGPR: it moves
    that side's elements alone (``contiguous_registers`` below ``packing_bits``: no dword moved whole),
    and the dst's elements are at most ``UNPACKED_DST_VGPRS``."""
    alone = [contiguous_registers(side) < packing_bits(element_bits) for side in (src, dst)]
    return alone[0], alone[1] and dst.in_dim_size("register") <= UNPACKED_DST_VGPRS


def ptx_mix(counts: dict) -> dict:
    """PTX counts as the instruction mix mix_cost prices (``PTX_AS_MIX``; ``other``, the integer
    and conversion arithmetic, as other vector instructions)."""
    mix = {"total": int(counts["total"]), "valu": sum(int(counts[k]) for k in ("prmt", "selp", "mov", "other"))}
    for cls, kind in PTX_AS_MIX.items():
        mix[kind] = mix.get(kind, 0) + int(counts[cls])
    return mix


def uses_shared_memory(counts: dict) -> bool:
    """Whether AMD or PTX counts hold a shared-memory (LDS) access."""
    return any(counts.get(k, 0) for k in SHARED_MEMORY_KEYS)


def triton_whole_conversion(case: dict, outside_valu: bool = True) -> dict | None:
    """Triton's counts of the case with the work of its conversion that its counted region leaves
    out, as the corpus stores it (benchmarks/make_corpus.py):

    * the shared-memory accesses of Triton's whole kernel (``triton_kernel_shared``), all of them
      the conversion's since the kernel uses shared memory for nothing else; the ``.loc``
      directives put some on the line of the store that consumes them.  Per class, ``max(kernel,
      region)``;
    * with ``outside_valu``, the VALU that the kernel's load and store lines hold beyond those of
      the case's identity kernels (``triton_outside_valu``: ``{"load": n, "store": n}``, amdgcn
      corpora; linlayout.lowering.beyond_identity), added to ``valu``: the repacking of 8/16-bit
      halves after its LDS loads, and register copies into the stores' tuples.  Compare it with
      ours measured alike (``ours_outside_valu``); where ours is not (counts from a plan,
      ``outside_valu`` False) or the case has no such field (the NVIDIA corpus: its PTX lines are
      not compared), that VALU is *not measured* (never 0): the whole conversion is the region and
      the shared-memory accesses, and the bench's summary counts such cases.

    ``total`` grows by what is added.  None for a case without ``triton_kernel_shared`` (the
    48-case baseline)."""
    kernel = case.get("triton_kernel_shared")
    if kernel is None:
        return None
    counts = dict(case["triton"])
    for kind, n in kernel.items():
        missing = n - int(counts.get(kind, 0))
        if missing > 0:
            counts[kind] = int(counts.get(kind, 0)) + missing
            counts["total"] = int(counts["total"]) + missing
    return with_outside_valu(counts, case["triton_outside_valu"] if outside_valu and outside_valu_measured(case)
                             else None)


def outside_valu_measured(case: dict) -> bool:
    """Does the case carry ``triton_outside_valu`` (:func:`triton_whole_conversion`)?  One that does
    not has that VALU not measured, which is not the same as none."""
    return case.get("triton_outside_valu") is not None


def with_outside_valu(counts: dict, outside: dict | None) -> dict:
    """amdgcn ``counts`` with the load- and store-side VALU ``outside`` (``{"load": n, "store": n}``;
    None: not measured, nothing added) added to ``valu`` and ``total``."""
    if outside is None:
        return dict(counts)
    added = sum(int(n) for n in outside.values())
    return dict(counts, valu=int(counts["valu"]) + added, total=int(counts["total"]) + added)


def with_setup(counts: dict, setup: dict | None) -> dict:
    """amdgcn ``counts`` (``isa_counts``) with our ``setup`` region's counts beyond the identity
    kernels' (linlayout.lowering.beyond_identity.setup_beyond; None: nothing added) added per class:
    the conversion's prologue, which Triton's counted region holds on its ``convert_layout`` line."""
    if setup is None:
        return dict(counts)
    return {k: int(n) + int(setup.get(k, 0)) for k, n in counts.items()}


def triton_exceeds_target_lds(case: dict) -> bool:
    """Does Triton's kernel of the case take more LDS (``triton_lds_bytes``, its compiled metadata) than
    the target has?  Such a kernel cannot launch there (Triton compiles it on the CPU unchecked)."""
    return (case.get("triton_lds_bytes") or 0) > get_target(case["arch"]).lds_bytes


def modelled(plan, ours: dict, triton: dict, triton_whole: dict | None = None, ours_whole: dict | None = None,
             conflicts: dict | None = None) -> dict:
    """Our ISA counts and Triton's priced alike as instruction mixes (linlayout.synth.cost.mix_cost: the
    same cost model, the same information) under every objective, beside the plan's own value (its
    steps' accesses and bank conflicts, with estimated setup): ``{objective: {"ours", "triton",
    "ours_plan"}}``, with ``triton_whole`` (:func:`triton_whole_conversion`'s counts priced alike)
    and ``ours_whole`` (ours with our setup and load/store-side VALU beyond our identity kernels',
    :func:`with_setup`, :func:`with_outside_valu`) where both are given.  ``conflicts``
    (:func:`bank_conflicts`): the cycles bank conflicts add to each side's LDS accesses, added to
    its mix (``ours`` to ours and ours_whole); None: no conflict on either side."""
    cm = cost_model(plan.arch)
    lane_bytes = plan.lane_bytes()
    extra = conflicts or {}
    mine = mix_cost(cm, ours, *lane_bytes, extra.get("ours", 0.0))
    theirs = mix_cost(cm, triton, *lane_bytes, extra.get("triton", 0.0))
    wholes = {} if triton_whole is None or ours_whole is None else {
        "triton_whole": mix_cost(cm, triton_whole, *lane_bytes, extra.get("triton_whole", 0.0)),
        "ours_whole": mix_cost(cm, ours_whole, *lane_bytes, extra.get("ours", 0.0))}
    return {o: {"ours": mine[f"{o}_value"], "triton": theirs[f"{o}_value"],
                "ours_plan": plan.cost_detail[f"{o}_value"],
                **{k: v[f"{o}_value"] for k, v in wholes.items()}} for o in OBJECTIVES}


_triton_bank_rows: dict[str, list] | None = None


def triton_bank_table() -> dict[str, list]:
    """The cases of :data:`TRITON_LDS_CONFLICTS` (read once); a LayoutError where the file is missing (the
    rows would be conflict-blind: benchmarks/triton_lds_conflicts.py writes it)."""
    global _triton_bank_rows
    if _triton_bank_rows is None:
        if not TRITON_LDS_CONFLICTS.exists():
            raise LayoutError(f"{TRITON_LDS_CONFLICTS} is missing (benchmarks/triton_lds_conflicts.py writes it): "
                              "without Triton's LDS accesses the rows would not count bank conflicts")
        _triton_bank_rows = json.loads(TRITON_LDS_CONFLICTS.read_text())["cases"]
    return _triton_bank_rows


def prices_triton_banks(case: dict) -> bool:
    """Does the case's row price Triton's bank conflicts (:func:`bank_conflicts`): an amdgcn corpus
    case, one with Triton's whole kernel's shared-memory accesses (``triton_kernel_shared``, which its
    stored accesses are the accesses of) on a target with a kernel emitter.  The baseline (no
    ``triton_kernel_shared``) and the NVIDIA corpus (counted from the plan) never read
    :data:`TRITON_LDS_CONFLICTS`."""
    return case.get("triton_kernel_shared") is not None and get_target(case["arch"]).emitter is not None


def triton_bank_rows(case: dict) -> list | None:
    """Triton's LDS accesses of a corpus case as ``[store, width_bytes, cycles, min_cycles, count]``
    rows (:func:`triton_bank_table`, keyed ``name arch dtype num_warps shape``, read only for a case
    that :func:`prices_triton_banks`), or None for a case that does not (the baseline, the NVIDIA
    corpus) or that the file does not have (a case Triton's IR was not read for)."""
    if not prices_triton_banks(case):
        return None
    shape = "x".join(map(str, case.get("shape", ())))
    return triton_bank_table().get(f"{case['name']} {case['arch']} {case['dtype']} {case.get('num_warps')} {shape}")


def bank_conflicts(plan, case: dict, triton_whole: dict | None) -> dict | None:
    """The cycles bank conflicts add to the LDS accesses of each side (:func:`modelled`'s
    ``conflicts``): ``ours`` (the plan's accesses on their addresses,
    linlayout.synth.cost.lds_conflict_cycles), ``triton`` and ``triton_whole`` (Triton's compiled
    accesses, :func:`triton_bank_rows`, linlayout.synth.cost.access_conflict_cycles); None where
    Triton's are not stored.  Triton's accesses are its kernel's (``triton_kernel_shared``); its
    counted region holds a share of them per side, and it is given that share of each side's
    conflict cycles (its count of the side over the kernel's)."""
    rows = triton_bank_rows(case)
    if rows is None:
        return None
    cm = cost_model(plan.arch)
    extra = access_conflict_cycles(cm, rows)
    kernel = case.get("triton_kernel_shared") or {}

    def share(counts: dict) -> float:
        total = 0.0
        for side, kinds in (("lds_write", ("lds_write",)), ("lds_read", ("lds_read", "lds_read_tr"))):
            n_kernel = sum(int(kernel.get(k, 0)) for k in kinds)
            if n_kernel:
                total += extra[side] * min(1.0, sum(int(counts.get(k, 0)) for k in kinds) / n_kernel)
        return total

    return {"ours": lds_conflict_cycles(plan), "triton": share(case["triton"]),
            "triton_whole": None if triton_whole is None else share(triton_whole)}


def bench_or_refusal(case: dict, binary: bool = True) -> dict:
    """:func:`bench_case`, or the case's ``name, arch, dtype`` and ``refused`` (the planner's LayoutError:
    the target or the conversion is not planned; no numbers of ours).  A missing data file that the
    case needs (:func:`triton_bank_table`, where it :func:`prices_triton_banks`) is no refusal: its
    LayoutError passes."""
    try:
        needs_banks = prices_triton_banks(case)  # (an unknown target: refused)
    except LayoutError as e:
        return _refusal(case, e)
    if needs_banks:
        triton_bank_table()
    try:
        return bench_case(case, binary=binary)
    except LayoutError as e:
        return _refusal(case, e)


def _refusal(case: dict, error: LayoutError) -> dict:
    """The row of a case the planner refused (:data:`REFUSED_ROW_KEYS`)."""
    return {"name": case["name"], "arch": case["arch"], "dtype": case["dtype"],
            "triton_total": int(case["triton"]["total"]), "refused": str(error)}


def summarize(all_rows: list[dict]) -> dict:
    """Wins/ties/losses, geometric mean ratio, the in-wave LDS criterion, compile times, refusals."""
    rows = [r for r in all_rows if "refused" not in r]
    ours = [r["ours"]["total"] for r in rows]
    tri = [int(r["triton"]["total"]) for r in rows]
    both = [(o, t) for o, t in zip(ours, tri) if o and t]
    geo = math.exp(sum(math.log(o / t) for o, t in both) / len(both)) if both else None
    in_wave_lds = [r for r in rows if r["stays_in_wave"] and r["triton_uses_lds"]]
    times = [r["compile_seconds"] for r in rows]
    return {
        "cases": len(rows),
        "wins": sum(o < t for o, t in zip(ours, tri)),
        "ties": sum(o == t for o, t in zip(ours, tri)),
        "losses": sum(o > t for o, t in zip(ours, tri)),
        "ours_total": sum(ours), "triton_total": sum(tri),
        "geomean_ratio": None if geo is None else round(geo, 4),
        "geomean_cases": len(both),
        "at_most_triton_everywhere": all(o <= t for o, t in zip(ours, tri)) if rows else None,
        "losing_cases": [f"{r['name']} {r['arch']} {r['dtype']}" for r, o, t in zip(rows, ours, tri) if o > t],
        "in_wave_triton_lds_cases": len(in_wave_lds),
        "in_wave_at_most_half": all(2 * r["ours"]["total"] <= int(r["triton"]["total"]) for r in in_wave_lds),
        "in_wave_over_half": [f"{r['name']} {r['arch']} {r['dtype']}" for r in in_wave_lds
                              if 2 * r["ours"]["total"] > int(r["triton"]["total"])],
        "plan_isa_disagreements": sum(bool(r["plan_isa_differences"]) for r in rows),
        "modelled_over_triton": {o: [f"{r['name']} {r['arch']} {r['dtype']}" for r in rows
                                     if r["modelled"][o]["ours"] > r["modelled"][o]["triton"] + 1e-9]
                                 for o in OBJECTIVES},
        "modelled_over_triton_conflict_blind": {
            o: [f"{r['name']} {r['arch']} {r['dtype']}" for r in rows
                if r["modelled_conflict_blind"][o]["ours"] > r["modelled_conflict_blind"][o]["triton"] + 1e-9]
            for o in OBJECTIVES},
        "compile_seconds": {"median": round(statistics.median(times), 4), "max": round(max(times), 4),
                            "mean": round(statistics.fmean(times), 4)} if times else {},
        "triton_compile_seconds": list(TRITON_COMPILE_SECONDS),
        "refused": [f"{r['name']} {r['arch']} {r['dtype']}: {r['refused']}" for r in all_rows if "refused" in r],
        "objectives": sorted({r["objective"] for r in rows}),
        "whole_conversion": _whole_conversion_summary(rows),
        "triton_over_target_lds": [f"{r['name']} {r['arch']} {r['dtype']}" for r in rows
                                   if r.get("triton_over_target_lds")],
    }


#: How a row's ``ours_whole`` is counted, stored in the row (``ours_whole_rule``): the counted region,
#: the ``setup`` region beyond the identity kernels', and the load and store sides' VALU beyond theirs,
#: the stores' addresses left out (linlayout.lowering.beyond_identity).  Rows of another rule (an
#: older bench) are refused, not compared.
OURS_WHOLE_RULE = "region+setup+sides"


def rows_of_an_older_bench(rows: list[dict]) -> int:
    """How many bench rows have Triton's whole conversion (``triton_whole``) but an ``ours_whole``
    counted by another rule than :data:`OURS_WHOLE_RULE` (rows made by an older ``linlayout bench
    conversions``)."""
    return sum(r.get("ours_whole_rule") != OURS_WHOLE_RULE for r in rows if r.get("triton_whole") is not None)


#: The refusal of rows :func:`rows_of_an_older_bench` counts (the scripts of benchmarks/ print it).
OLDER_ROWS = "made by an older linlayout bench (its ours_whole counted otherwise): run it again"


def _whole_conversion_summary(rows: list[dict]) -> dict | None:
    """Wins/ties/losses and the cases modelled above Triton per objective of our whole conversion
    (``ours_whole``: ours with our ``setup`` region and load/store-side VALU beyond our identity
    kernels') against Triton's (``triton_whole``: its counted region with the shared-memory accesses
    and the load/store-line VALU the region leaves out, :func:`triton_whole_conversion`), on the rows
    that have both, how many of those have the load/store-side VALU not measured
    (``outside_valu_not_measured``: neither side's counted), and the cases whose identity kernels
    failed (``outside_valu_failed``: no whole conversion of ours, left out); None when no row has
    Triton's.  ``LayoutError`` for rows of an older bench (:data:`OLDER_ROWS`)."""
    if rows_of_an_older_bench(rows):
        raise LayoutError(f"{rows_of_an_older_bench(rows)} rows {OLDER_ROWS}")
    rows = [r for r in rows if r.get("triton_whole") is not None]
    if not rows:
        return None
    failed = [f"{r['name']} {r['arch']} {r['dtype']}: {r['ours_outside_valu_failed']}" for r in rows
              if r["ours_whole"] is None]
    rows = [r for r in rows if r["ours_whole"] is not None]
    pairs = [(int(r["ours_whole"]["total"]), int(r["triton_whole"]["total"])) for r in rows]
    return {
        "cases": len(rows),
        "wins": sum(o < t for o, t in pairs), "ties": sum(o == t for o, t in pairs),
        "losses": sum(o > t for o, t in pairs),
        "ours_total": sum(o for o, _ in pairs), "triton_total": sum(t for _, t in pairs),
        "losing_cases": [f"{r['name']} {r['arch']} {r['dtype']}" for r, (o, t) in zip(rows, pairs) if o > t],
        "outside_valu_not_measured": sum(r.get("ours_outside_valu") is None for r in rows),
        "outside_valu_failed": failed,
        "modelled_over_triton": {o: [f"{r['name']} {r['arch']} {r['dtype']}" for r in rows
                                     if r["modelled"][o]["ours_whole"] > r["modelled"][o]["triton_whole"] + 1e-9]
                                 for o in OBJECTIVES},
        "modelled_over_triton_conflict_blind": {
            o: [f"{r['name']} {r['arch']} {r['dtype']}" for r in rows
                if r["modelled_conflict_blind"][o]["ours_whole"]
                > r["modelled_conflict_blind"][o]["triton_whole"] + 1e-9]
            for o in OBJECTIVES},
    }


def _selected(cases: list[dict], args: argparse.Namespace, what: str) -> list[dict]:
    """The cases of ``--arch``, the first ``--cases`` of them."""
    if args.arch:
        cases = [c for c in cases if c["arch"] == args.arch]
        if not cases:
            raise LayoutError(f"the {what} has no case for arch {args.arch!r}")
    if args.cases is not None:
        if args.cases < 1:
            raise LayoutError(f"--cases must be at least 1, got {args.cases}")
        cases = cases[: args.cases]
    return cases


def run(args: argparse.Namespace) -> dict:
    """The baseline's rows and summary; with ``--corpus`` (amd) also the corpus's, each row tagged
    with its set; ``--corpus nvidia|wave32``: that corpus's rows alone, tagged with its name."""
    family = args.corpus
    if family not in (None, "amd") and args.baseline:
        raise LayoutError(f"--baseline is run beside the amd corpus; --corpus {family} runs its corpus alone")
    if family not in (None, "amd"):
        rows = [bench_or_refusal(c, binary=not args.isa_only)
                for c in _selected(_load_baseline(None, CORPORA[family]), args, f"{family} corpus")]
        return {"cases": [dict(r, set=family) for r in rows], "summary": summarize(rows),
                "summaries": {family: summarize(rows)}}
    cases = _selected(_load_baseline(args.baseline), args, "baseline")
    rows = [bench_or_refusal(c, binary=not args.isa_only) for c in cases]
    if not family:
        return {"cases": rows, "summary": summarize(rows)}
    corpus = _selected(_load_baseline(None, CORPORA["amd"]), args, "corpus")
    corpus_rows = [bench_or_refusal(c, binary=not args.isa_only) for c in corpus]
    tagged = [dict(r, set="baseline") for r in rows] + [dict(r, set="corpus") for r in corpus_rows]
    return {"cases": tagged, "summary": summarize(rows),
            "summaries": {"baseline": summarize(rows), "corpus": summarize(corpus_rows)}}


def render(result: dict, args: argparse.Namespace) -> str:
    head = (f"{'case':30s} {'arch':6s} {'dtype':5s} {'strategy':9s} {'ours':>5s} {'triton':>6s} {'ratio':>6s} "
            f"{'concurr ours/tri':>16s} {'latency ours/tri':>16s} {'thruput ours/tri':>16s}  ours' kinds")
    lines = [head, "-" * len(head)]
    for r in result["cases"]:
        if "refused" in r:
            lines.append(f"{r['name'][:30]:30s} {r['arch']:6s} {r['dtype']:5s} "
                         f"not planned (Triton {r['triton_total']}): {r['refused']}")
            continue
        kinds = ", ".join(f"{k} {v}" for k, v in r["ours"].items() if v and k != "total")
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}"
        flag = " *in-wave, Triton via LDS" if r["stays_in_wave"] and r["triton_uses_lds"] else ""
        cycles = " ".join(f"{r['modelled'][o]['ours']:>7.0f}/{r['modelled'][o]['triton']:<8.0f}"
                          for o in CYCLE_OBJECTIVES)
        lines.append(f"{r['name'][:30]:30s} {r['arch']:6s} {r['dtype']:5s} {r['strategy']:9s} "
                     f"{r['ours']['total']:5d} {r['triton']['total']:6d} {ratio:>6s} {cycles}  {kinds}{flag}")
    planned = [r for r in result["cases"] if "refused" not in r]
    plan_only = bool(planned) and all(r.get("counted_by") == "plan" for r in planned)
    for name, s in result.get("summaries", {"": result["summary"]}).items():
        lines += [""] + ([f"[{name}]"] if name else []) + _summary_lines(s, plan_only)
    return "\n".join(lines)


def _summary_lines(s: dict, plan_only: bool = False) -> list[str]:
    """The printed summary of one set of cases (``plan_only``: no kernel was compiled, the
    counts are the plan's, with no compiled region to check them against, and the times the
    planner's)."""
    ct = s["compile_seconds"]
    timed = "plan time per case (layouts -> plan; no kernel compiled)" if plan_only else \
        "compile time per kernel (layouts -> code object)"
    return [
        f"cases {s['cases']}: wins {s['wins']}, ties {s['ties']}, losses {s['losses']}; "
        f"instructions ours {s['ours_total']} vs Triton {s['triton_total']}",
        f"geometric mean ratio (ours/Triton, {s['geomean_cases']} cases with both nonzero): {s['geomean_ratio']}",
        f"at most Triton's on every case: {s['at_most_triton_everywhere']}"
        + (f" (losing: {', '.join(s['losing_cases'])})" if s["losing_cases"] else ""),
        f"in-wave conversions Triton routes through LDS: {s['in_wave_triton_lds_cases']}; ours at most half on all: "
        f"{s['in_wave_at_most_half']}" + (f" (over half: {', '.join(s['in_wave_over_half'])})"
                                          if s["in_wave_over_half"] else ""),
        ("counts are the plan's (no kernel compiled, so no plan/ISA check)" if plan_only else
         f"plan/ISA disagreements: {s['plan_isa_disagreements']}") + "; not planned (refused by the planner): "
        f"{len(s['refused'])}",
        "modelled cycles over Triton's mix (same cost model, bank conflicts where Triton's are stored; "
        "conflict-blind in brackets): "
        + "; ".join(f"{_objective_label(o, s)} {len(s['modelled_over_triton'][o])} "
                    f"[{len(s['modelled_over_triton_conflict_blind'][o])}]" for o in CYCLE_OBJECTIVES),
        (f"{timed}: median {ct['median']} s, max {ct['max']} s " if ct else f"{timed}: none (no case planned) ")
        + f"(Triton: {s['triton_compile_seconds'][0]}-{s['triton_compile_seconds'][1]} s)",
    ] + _whole_conversion_lines(s)


def _objective_label(objective: str, s: dict) -> str:
    """``objective`` as a summary line names it: marked when the set's plans were chosen by it."""
    return f"{objective} (the plans' objective)" if objective in s["objectives"] else objective


def _whole_conversion_lines(s: dict) -> list[str]:
    """The printed comparison against Triton's whole conversion, and Triton's kernels that exceed
    the target's LDS (none printed when the set has neither)."""
    lines = []
    w = s.get("whole_conversion")
    if w:
        unmeasured = w["outside_valu_not_measured"]
        lines.append(f"whole conversions (Triton's: its region plus the shared-memory accesses and the load/store-"
                     f"line VALU beyond its identity kernels'; ours: plus our setup and load/store-side VALU beyond "
                     f"ours; that VALU not measured on {unmeasured} of the cases; identity kernels failed on "
                     f"{len(w['outside_valu_failed'])} more, left out), {w['cases']} cases: wins {w['wins']}, ties "
                     f"{w['ties']}, losses {w['losses']}; "
                     f"instructions ours {w['ours_total']} vs Triton {w['triton_total']}; modelled cycles over "
                     "Triton's: " + "; ".join(f"{_objective_label(o, s)} {len(w['modelled_over_triton'][o])} "
                                             f"[{len(w['modelled_over_triton_conflict_blind'][o])}]"
                                             for o in CYCLE_OBJECTIVES))
    if s.get("triton_over_target_lds"):
        lines.append(f"Triton's kernel needs more LDS than the target has: {', '.join(s['triton_over_target_lds'])}")
    return lines
