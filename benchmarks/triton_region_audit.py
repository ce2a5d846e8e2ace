"""What of Triton's kernel lies outside its counted conversion region, for the cases we lose.

Usage::

    python benchmarks/triton_region_audit.py ROWS.json [--corpus benchmarks/data/triton_amd_corpus.json]

``ROWS.json`` is the ``--json`` output of ``linlayout bench conversions --corpus`` (the corpus
rows are taken in order).  The bench already compares every case with Triton's *whole*
conversion (``triton_whole``: the counted region plus the shared-memory accesses the ``.loc``
directives put on the neighbouring store line; the corpus stores the whole kernel's accesses,
``triton_kernel_shared``, benchmarks/make_corpus.py).  This script looks at the cases still over
Triton there, in instructions or in modelled cycles under the plans' objective: it compiles each
again with Triton (``make_corpus.py``'s kernel) and counts the ``v_perm_b32`` of the whole kernel
beside the region's, and the global stores of sub-dword values.  ``v_perm_b32`` outside the
region packs 16-bit or 8-bit values for the global accesses (the load's or the store's vectors);
some of it is the conversion's own repacking.  A kernel that stores 8- or 16-bit values one at a
time (``global_store_byte`` / ``_short``, with ``_d16_hi``) never packs the converted values into
VGPRs in the dst layout's register order, which linlayout's plans hand over (docs/contract.md):
Triton's count then holds no such packing.

Prints one line per case and a summary.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import make_corpus  # noqa: E402

from linlayout.lowering.isa import isa_counts  # noqa: E402

LDS_KEYS = ("lds_write", "lds_read", "lds_read_tr")


def kernel_asm(case: dict, builder, kernels) -> tuple[str, int]:
    """Triton's amdgcn of the corpus kernel of ``case`` and the source line of its ``convert_layout``."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    src = make_corpus._gluon_layout(make_corpus.spec_of(case["triton_src_params"]))
    dst = make_corpus._gluon_layout(make_corpus.spec_of(case["triton_dst_params"]))
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


def over_whole(row: dict) -> tuple[bool, bool]:
    """Is ours over Triton's whole conversion in instructions, and in modelled cycles under the
    objective the plan was chosen by?"""
    m = row["modelled"][row["objective"]]
    return row["ours"]["total"] > row["triton_whole"]["total"], m["ours"] > m["triton_whole"] + 1e-9


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
    audited = over_count = over_cycles = unpacked = 0
    for r, c in zip(rows, cases):
        if "refused" in r or r.get("triton_whole") is None or r.get("triton_over_target_lds"):
            continue
        count, cycles = over_whole(r)
        if not (count or cycles):
            continue
        audited += 1
        over_count += count
        over_cycles += cycles
        a = audit(c, builder, kernels)
        unpacked += c["dtype"] != "fp32" and a["sub_dword_stores"] > 0
        print(f"{c['name']} {c['arch']} {c['dtype']} {c['num_warps']}w: over in "
              f"{' and '.join(w for w, x in (('instructions', count), ('cycles', cycles)) if x)}; ours "
              f"{r['ours']['total']}, Triton's whole conversion {r['triton_whole']['total']}; v_perm_b32 kernel "
              f"{a['kernel']['v_perm_b32']}, region {a['region']['v_perm_b32']}; sub-dword stores "
              f"{a['sub_dword_stores']}")
    print(f"\n{audited} cases over Triton's whole conversion ({over_count} in instructions, {over_cycles} in "
          f"modelled cycles; Triton's kernels that exceed the target's LDS left out); {unpacked} of them are "
          f"8/16-bit cases whose Triton kernel stores the converted values one at a time (never packed in the "
          f"dst's register order)")


if __name__ == "__main__":
    main()
