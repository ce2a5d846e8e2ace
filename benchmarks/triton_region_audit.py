"""What of Triton's kernel lies outside its counted conversion region, for the cases we lose.

Usage::

    python benchmarks/triton_region_audit.py ROWS.json [--family amd|wave32] [--corpus FILE]

``ROWS.json`` is the ``--json`` output of ``linlayout bench conversions --corpus`` (or ``--corpus
wave32`` with ``--family wave32``; the corpus rows are taken in order, the baseline's rows left
out).  The bench already
compares every case with Triton's *whole* conversion (``triton_whole``: the counted region plus
the shared-memory accesses the ``.loc`` directives put on the neighbouring store line and the VALU
its load and store lines hold beyond its identity kernels'; the corpus stores both,
``triton_kernel_shared`` and ``triton_outside_valu``, benchmarks/make_corpus.py).  This
script looks at the cases still over Triton there, in instructions or in modelled cycles under the
plans' objective: it compiles each again with Triton (``make_corpus.py``'s kernel) and counts the
``v_perm_b32`` of the whole kernel beside the region's, and the global stores of sub-dword values.
``v_perm_b32`` outside the region packs 16-bit or 8-bit values for the global accesses (the load's
or the store's vectors); some of it is the conversion's own repacking.  A kernel that stores 8- or
16-bit values one at a time (``global_store_byte`` / ``_short`` on CDNA, ``global_store_b8`` /
``_b16`` on gfx11/gfx12, with their ``_d16_hi`` forms) never packs the converted values into VGPRs
in the dst layout's register order, which linlayout's plans hand over (docs/contract.md): Triton's
count then holds no such packing.

It also compiles the case's two identity kernels (the src layout loaded and stored with no
conversion, and the same for the dst layout) and counts the VALU that the conversion kernel's
``.loc`` directives put on the load line and on the store line beyond theirs
(``make_corpus.valu_beyond_identity``): the repacking of 8/16-bit values that Triton does there
(after its LDS loads, ``v_mov_b16`` and ``v_lshrrev_b32`` on gfx11/gfx12, ``v_perm_b32``
elsewhere), for the conversion and outside its counted region, by kind, and checks it against the
corpus's stored ``triton_outside_valu``, which the whole conversion already counts.

Prints one line per case and a summary.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: benchmarks.script_args

import make_corpus  # noqa: E402
from corpus_losses import read_cases  # noqa: E402
from benchmarks.script_args import ScriptParser  # noqa: E402

from linlayout.cli.bench import OLDER_ROWS, rows_of_an_older_bench  # noqa: E402
from linlayout.lowering.beyond_identity import outside_valu  # noqa: E402
from linlayout.lowering.isa import isa_counts  # noqa: E402

LDS_KEYS = ("lds_write", "lds_read", "lds_read_tr")


def gluon_layouts(case: dict) -> tuple:
    """The Gluon layouts of a stored case's src and dst encodings (its recorded Triton params)."""
    return tuple(make_corpus._gluon_layout(make_corpus.spec_of(case[f"triton_{side}_params"]))
                 for side in ("src", "dst"))


#: The amdgcn global stores of one 8- or 16-bit value (CDNA and gfx11/gfx12 spellings, with the
#: ``_d16_hi`` forms that store the high half of a VGPR).
SUB_DWORD_STORES = ("global_store_byte", "global_store_byte_d16_hi", "global_store_short",
                    "global_store_short_d16_hi", "global_store_b8", "global_store_b16",
                    "global_store_d16_hi_b8", "global_store_d16_hi_b16")


def sub_dword_stores(asm: str) -> int:
    """How many global stores of one 8- or 16-bit value the assembly holds."""
    return sum(1 for ln in asm.splitlines() if ln.split()[:1] and ln.split()[0] in SUB_DWORD_STORES)


def audit(case: dict, family: make_corpus.Family, kernels) -> dict:
    """LDS accesses and v_perm_b32 of Triton's whole kernel and of its counted region, its global
    stores of single 8/16-bit values, and the VALU its ``.loc`` directives put on the load and
    store lines beyond those of the identity kernels (``load_valu``, ``store_valu``:
    ``make_corpus.valu_beyond_identity``, which the corpus stores as ``triton_outside_valu``):
    packing or unpacking that the conversion needs and the region's count leaves out."""
    src, dst = gluon_layouts(case)
    compiled, fn = make_corpus.compile_kernel(case, src, dst, kernels, family)
    asm = compiled.asm[family.asm_key]
    kernel = isa_counts(asm.split(".Lfunc_end0")[0])
    region = make_corpus.line_counts(asm, make_corpus.source_line(fn))
    keys = LDS_KEYS + ("v_perm_b32",)
    beyond = make_corpus.valu_beyond_identity(case, src, dst, asm, fn, kernels, family)
    return {"kernel": {k: kernel[k] for k in keys}, "region": {k: region[k] for k in keys},
            "sub_dword_stores": sub_dword_stores(asm), "load_valu": beyond["load"], "store_valu": beyond["store"]}


def over_whole(row: dict) -> tuple[bool, bool]:
    """Is ours over Triton's whole conversion in instructions, and in modelled cycles under the
    objective the plan was chosen by?"""
    m = row["modelled"][row["objective"]]
    return row["ours_whole"]["total"] > row["triton_whole"]["total"], m["ours_whole"] > m["triton_whole"] + 1e-9


#: The corpora this audit reads (amdgcn; the NVIDIA corpus counts PTX).
AMD_FAMILIES = ("amd", "wave32")


def main() -> None:
    ap = ScriptParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rows", help="the --json output of linlayout bench conversions --corpus [wave32]")
    ap.add_argument("--family", choices=AMD_FAMILIES, default="amd",
                    help="the corpus the rows are of: amd (wave64) or wave32 (make_corpus.py's families)")
    ap.add_argument("--corpus", help="the corpus file (default: the family's, benchmarks/data/)")
    args = ap.parse_args()
    family = make_corpus.FAMILIES[args.family]
    cases = read_cases(ap, str(args.corpus or family.out), "--corpus")
    rows = [r for r in read_cases(ap, args.rows, "rows") if r.get("set") != "baseline"]
    if rows_of_an_older_bench(rows):
        ap.error(f"rows {args.rows}: {OLDER_ROWS}")
    if len(rows) != len(cases):
        ap.error(f"{len(rows)} bench rows for {len(cases)} corpus cases: run the whole corpus")
    warnings.simplefilter("ignore")
    context, builder, kernels = make_corpus._triton_session()  # noqa: F841 (context kept alive)
    audited = over_count = over_cycles = unpacked = stored_differs = 0
    for r, c in zip(rows, cases):
        if ("refused" in r or r.get("triton_whole") is None or r["ours_whole"] is None
                or r.get("triton_over_target_lds")):
            continue
        count, cycles = over_whole(r)
        if not (count or cycles):
            continue
        audited += 1
        over_count += count
        over_cycles += cycles
        a = audit(c, family, kernels)
        unpacked += c["dtype"] != "fp32" and a["sub_dword_stores"] > 0
        stored_differs += c.get("triton_outside_valu") != {
            "load": outside_valu(a["load_valu"]), "store": outside_valu(a["store_valu"])}
        print(f"{c['name']} {c['arch']} {c['dtype']} {c['num_warps']}w: over in "
              f"{' and '.join(w for w, x in (('instructions', count), ('cycles', cycles)) if x)}; ours "
              f"{r['ours_whole']['total']}, Triton's whole conversion {r['triton_whole']['total']}; v_perm_b32 kernel "
              f"{a['kernel']['v_perm_b32']}, region {a['region']['v_perm_b32']}; sub-dword stores "
              f"{a['sub_dword_stores']}; VALU beyond the identity kernels: load line {_valu(a['load_valu'])}, "
              f"store line {_valu(a['store_valu'])}")
    print(f"\n{audited} cases over Triton's whole conversion ({over_count} in instructions, {over_cycles} in "
          f"modelled cycles; Triton's kernels that exceed the target's LDS left out); {unpacked} of them are "
          f"8/16-bit cases whose Triton kernel stores the converted values one at a time (never packed in the "
          f"dst's register order); on {stored_differs} of them the load/store-line VALU measured here differs from "
          f"the corpus's triton_outside_valu (which the whole conversion counts)")


def _valu(counts: dict) -> str:
    """``N (v_mov M, v_perm_b32 P)`` of a ``make_corpus.valu_beyond_identity`` entry."""
    return f"{counts['valu']} (v_mov {counts['v_mov']}, v_perm_b32 {counts['v_perm_b32']})"


if __name__ == "__main__":
    main()
