"""Which of Triton's conversion instructions its counted region leaves out.

Usage::

    python benchmarks/triton_region_audit.py ROWS.json [--corpus benchmarks/data/triton_amd_corpus.json]

``ROWS.json`` is the ``--json`` output of ``linlayout bench conversions --corpus`` (the corpus
rows are taken in order).  For every corpus case where ours exceeds Triton's count or Triton's
modelled cycles under the default objective, the case is compiled again with Triton
(``benchmarks/make_corpus.py``'s kernel) and the LDS instructions and ``v_perm_b32`` of the
*whole* kernel are counted beside those of the ``convert_layout`` line.  The kernel loads the
tile from global memory, converts it and stores it, so every LDS instruction in it belongs to
the conversion: an LDS access the region lacks is one that the ISA's ``.loc`` directives
attribute to the neighbouring store line (the region's count, and its modelled cycles, are
then too low).  ``v_perm_b32`` outside the region packs 16-bit or 8-bit values for the global
accesses (the load's or the store's vectors); some of it is the conversion's own repacking.
A kernel that stores 8- or 16-bit values one at a time (``global_store_byte`` / ``_short``, with
``_d16_hi``) never packs the converted values into VGPRs in the dst layout's register order,
which linlayout's plans hand over (docs/contract.md): Triton's count then holds no such packing.

Prints one line per case and a summary: the cases whose region lacks LDS reads or writes of
the kernel (and how many of them stay over Triton in instructions and in modelled cycles once
those accesses are added to Triton's counts: ``corrected``, priced with ``mix_cost`` as the bench
prices both sides), and the 8/16-bit cases among the others whose kernel stores sub-dword values.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import make_corpus  # noqa: E402

from linlayout.layout import LinearLayout  # noqa: E402
from linlayout.dtypes import dtype_bits  # noqa: E402
from linlayout.synth.cost import DEFAULT_OBJECTIVE, cost_model, mix_cost  # noqa: E402
from linlayout.lowering.isa import isa_counts  # noqa: E402

LDS_KEYS = ("lds_write", "lds_read", "lds_read_tr")


def spec_of(params: dict) -> dict:
    """The make_corpus spec of an encoding given as Triton's params (the inverse of
    ``make_corpus.triton_params``; a dot operand's parent has no ``encoding`` key)."""
    e = params.get("encoding", "amd_mfma")
    if e == "amd_mfma":
        return {"kind": "mfma", "version": params["version"], "instr": params["instrShape"],
                "transposed": params["isTransposed"], "warps": params["warpsPerCTA"]}
    if e == "amd_mfma_dot_operand":
        return {"kind": "dot", "op": params["opIdx"], "k_width": params["kWidth"], "parent": spec_of(params["parent"])}
    if e == "slice":
        return {"kind": "slice", "dim": params["dim"], "parent": spec_of(params["parent"])}
    return {"kind": "blocked", "size": params["sizePerThread"], "threads": params["threadsPerWarp"],
            "warps": params["warpsPerCTA"], "order": params["order"]}


def kernel_asm(case: dict, builder, kernels) -> tuple[str, int]:
    """Triton's amdgcn of the corpus kernel of ``case`` and the source line of its ``convert_layout``."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    src = make_corpus._gluon_layout(spec_of(case["triton_src_params"]))
    dst = make_corpus._gluon_layout(spec_of(case["triton_dst_params"]))
    shape = case["shape"]
    dtype = make_corpus.FP8_TRITON[case["arch"]] if case["dtype"] == "fp8" else make_corpus.TRITON_DTYPE[case["dtype"]]
    convert_2d, convert_1d = kernels
    if len(shape) == 2:
        fn, consts = convert_2d, {"M": shape[0], "N": shape[1], "SRC": src, "DST": dst}
    else:
        fn, consts = convert_1d, {"M": shape[0], "SRC": src, "DST": dst}
    signature = {"src_ptr": "*" + dtype, "dst_ptr": "*" + dtype, **dict.fromkeys(consts, "constexpr")}
    compiled = triton.compile(GluonASTSource(fn, signature=signature, constexprs=consts),
                              target=GPUTarget("hip", case["arch"], 64), options={"num_warps": case["num_warps"]})
    return compiled.asm["amdgcn"], make_corpus._convert_line(fn)


def audit(case: dict, builder, kernels) -> dict:
    """LDS accesses and v_perm_b32 of Triton's whole kernel and of its counted region."""
    asm, line = kernel_asm(case, builder, kernels)
    kernel = isa_counts(asm.split(".Lfunc_end0")[0])
    region = make_corpus.FAMILIES["amd"].counts(make_corpus.convert_lines(asm, line))
    keys = LDS_KEYS + ("v_perm_b32",)
    sub_dword_stores = sum(1 for ln in asm.splitlines()
                           if ln.split()[:1] and ln.split()[0].startswith(("global_store_byte", "global_store_short")))
    return {"kernel": {k: kernel[k] for k in keys}, "region": {k: region[k] for k in keys},
            "sub_dword_stores": sub_dword_stores}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rows", help="the --json output of linlayout bench conversions --corpus")
    ap.add_argument("--corpus", default=str(make_corpus.OUT))
    args = ap.parse_args()
    cases = json.loads(Path(args.corpus).read_text())["cases"]
    rows = [r for r in json.loads(Path(args.rows).read_text())["cases"] if r.get("set", "corpus") == "corpus"]
    if len(rows) != len(cases):
        raise ValueError(f"{len(rows)} corpus rows for {len(cases)} corpus cases: run the whole corpus")
    warnings.simplefilter("ignore")
    context, builder, kernels = make_corpus._triton_session()  # noqa: F841 (context kept alive)
    short = unpacked = 0
    audited = still_count = still_cycles = 0
    for r, c in zip(rows, cases):
        if "refused" in r:
            continue
        m = r["modelled"][DEFAULT_OBJECTIVE]
        if r["ours"]["total"] <= r["triton"]["total"] and m["ours"] <= m["triton"] + 1e-9:
            continue
        audited += 1
        a = audit(c, builder, kernels)
        missing = {k: a["kernel"][k] - a["region"][k] for k in LDS_KEYS if a["kernel"][k] > a["region"][k]}
        short += bool(missing)
        if missing:
            over_count, over_cycles = corrected_over(r, c, missing)
            still_count += over_count
            still_cycles += over_cycles
        loose = not missing and c["dtype"] != "fp32" and a["sub_dword_stores"] > 0
        unpacked += loose
        print(f"{c['name']} {c['arch']} {c['dtype']} {c['num_warps']}w: kernel {a['kernel']}, region {a['region']}, "
              f"sub-dword stores {a['sub_dword_stores']}" + (f"; LDS outside the region {missing}" if missing else ""))
    print(f"\n{audited} cases over Triton's count or modelled cycles; {short} of them have LDS accesses of "
          f"Triton's conversion outside its counted region (with those added, {still_count} stay over in "
          f"instructions and {still_cycles} in modelled cycles); of the others, {unpacked} 8/16-bit cases store "
          f"the converted values one at a time (never packed in the dst's register order)")


def corrected_over(row: dict, case: dict, missing: dict) -> tuple[bool, bool]:
    """Is ours still over Triton in instructions, and in modelled cycles under the default objective,
    once Triton's counts hold the LDS accesses ``missing`` from its region?  Both mixes are priced
    as ``linlayout bench conversions`` prices them (``mix_cost``, each side's registers per lane)."""
    triton = dict(case["triton"])
    for k, n in missing.items():
        triton[k] = triton.get(k, 0) + n
        triton["total"] += n
    bits = dtype_bits(case["dtype"])
    lane_bytes = [LinearLayout.from_json(case[s]).in_dim_size("register") * bits // 8 for s in ("src", "dst")]
    cm = cost_model(case["arch"])
    ours, theirs = (mix_cost(cm, m, *lane_bytes)[f"{DEFAULT_OBJECTIVE}_value"] for m in (row["ours"], triton))
    return row["ours"]["total"] > triton["total"], ours > theirs + 1e-9


if __name__ == "__main__":
    main()
