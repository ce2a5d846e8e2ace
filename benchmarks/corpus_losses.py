"""Where the planner loses on the corpus: cases whose instruction count exceeds Triton's, by kind.

Usage::

    linlayout bench conversions --corpus [wave32|nvidia] --isa-only --json > rows.json
    python benchmarks/corpus_losses.py rows.json [--corpus benchmarks/data/triton_amd_corpus.json]

(for ``--corpus wave32`` or ``nvidia``, pass ``--corpus benchmarks/data/triton_wave32_corpus.json`` or
``triton_nvidia_corpus.json``; the NVIDIA counts are PTX classes, ``linlayout.lowering.ptx_counts``)
(the rows of ``--corpus`` tagged ``"set": "baseline"`` are left out; the rows of ``--baseline
benchmarks/data/triton_amd_corpus.json`` work as well.)
Prints the summary of ``linlayout bench conversions`` (wins, ties, losses, geometric mean, and the
same against Triton's whole conversion), a
Markdown table per kind (cases, wins, ties, losses, geometric mean of ours/Triton, cases whose
modelled cycles under the plans' objective exceed Triton's mix; then the losses and the cases over
in cycles of our whole conversion against Triton's, ``ours_whole`` and ``triton_whole``: linlayout bench
conversions), a Markdown table of every losing
case with both instruction mixes, one of the cases over Triton's modelled cycles only, and the
planner's refusals.  Triton's region counts are read from
the corpus file, so rows measured against an earlier version of it stay usable; its whole
conversion (counts and modelled cycles) is the rows', as the bench computed it from the corpus it
ran.  The kind of a case is ``src family -> dst family`` (``mfma``, ``wmma``, ``mma``, ``dot``,
``blocked``), ``1-D slice`` for slices
and ``register-only`` when both layouts put every element in the same lane and wave.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: benchmarks.script_args

from benchmarks.script_args import ScriptParser  # noqa: E402
from linlayout.cli.bench import OLDER_ROWS, rows_of_an_older_bench, summarize, uses_shared_memory  # noqa: E402
from linlayout.layout import LinearLayout  # noqa: E402
from linlayout.lowering.ptx_counts import PTX_CLASS_KEYS  # noqa: E402

CORPUS = Path(__file__).resolve().parent / "data" / "triton_amd_corpus.json"
FAMILY = {"amd_mfma": "mfma", "amd_mfma_dot_operand": "dot", "amd_wmma": "wmma", "amd_wmma_dot_operand": "dot",
          "nvidia_mma": "mma", "dot_operand_of_nvidia_mma": "dot", "blocked": "blocked"}
#: The instruction classes a losing case lists, of amdgcn counts (``isa_counts``; its ``valu``
#: sub-counts left out) and of PTX counts (the NVIDIA corpus, ``ptx_counts``).
ISA_CLASSES = ("valu", "ds_bpermute", "ds_swizzle", "lds_write", "lds_read", "lds_read_tr", "s_barrier",
               "s_waitcnt", "salu", "s_nop")


def kind(case: dict) -> str:
    """The kind of one corpus case (module docstring)."""
    src, dst = case["triton_src_params"], case["triton_dst_params"]
    if src["encoding"] == "slice":
        return "1-D slice"
    a, b = LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])
    if all(a.bases.get(d) == b.bases.get(d) for d in ("lane", "warp")):
        return "register-only"
    return f"{FAMILY[src['encoding']]} -> {FAMILY[dst['encoding']]}"


def _classes(counts: dict) -> str:
    """The nonzero instruction classes of an amdgcn or PTX count dict, largest first
    (:data:`ISA_CLASSES` or ``PTX_CLASS_KEYS``)."""
    keys = ISA_CLASSES if "valu" in counts else PTX_CLASS_KEYS
    return ", ".join(f"{k} {counts[k]}" for k in sorted(keys, key=lambda k: -counts[k]) if counts[k])


def _over_cycles(row: dict) -> bool:
    """Are our modelled cycles under the objective the plan was chosen by above Triton's mix's?"""
    m = row["modelled"][row["objective"]]
    return m["ours"] > m["triton"] + 1e-9


def table(rows: list[dict], cases: list[dict]) -> str:
    """Markdown: one row per kind (cases, wins, ties, losses, geometric mean of ours/Triton), then
    one row per losing case, by kind, then the refusals."""
    if [(r["name"], r["arch"], r["dtype"]) for r in rows] != [(c["name"], c["arch"], c["dtype"]) for c in cases]:
        raise ValueError("the bench rows are not the corpus's cases in order: run the whole corpus")
    by_kind = defaultdict(list)
    for r, c in zip(rows, cases):
        by_kind[kind(c)].append((r, c))
    summary = ["| kind | cases | wins | ties | losses | geomean ours/Triton | over Triton's cycles (the plans' objective) "
               "| losses, whole conversion | over its cycles |",
               "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    losses = ["| kind | case | arch | dtype | waves | shape | ours | Triton | ours' classes | Triton's classes |",
              "|---|---|---|---|---:|---|---:|---:|---|---|"]
    cycles = ["| kind | case | arch | dtype | waves | ours | Triton | ours' cycles | Triton's cycles |",
              "|---|---|---|---|---:|---:|---:|---:|---:|"]
    refusals = []
    for k in sorted(by_kind):
        measured = [(r, c) for r, c in by_kind[k] if "refused" not in r]
        refusals += [f"- {r['name']} {r['arch']} {r['dtype']} {c['num_warps']} waves: {r['refused']}"
                     for r, c in by_kind[k] if "refused" in r]
        pairs = [(r["ours"]["total"], r["triton"]["total"]) for r, _ in measured]
        both = [o / t for o, t in pairs if o and t]
        geo = f"{math.exp(sum(map(math.log, both)) / len(both)):.2f}" if both else "-"
        over = [(r, c) for r, c in measured if _over_cycles(r)]
        whole = [r for r, _ in measured if r.get("triton_whole") and r["ours_whole"] is not None]
        whole_losses = sum(r["ours_whole"]["total"] > r["triton_whole"]["total"] for r in whole)
        whole_over = sum(r["modelled"][r["objective"]]["ours_whole"] > r["modelled"][r["objective"]]["triton_whole"]
                         + 1e-9
                         for r in whole)
        summary.append(f"| {k} | {len(by_kind[k])} | {sum(o < t for o, t in pairs)} | "
                       f"{sum(o == t for o, t in pairs)} | {sum(o > t for o, t in pairs)} | {geo} | {len(over)} | "
                       f"{whole_losses} | {whole_over} |")
        cycles += [f"| {k} | `{r['name']}` | {r['arch']} | {r['dtype']} | {c['num_warps']} | {r['ours']['total']} | "
                   f"{r['triton']['total']} | {r['modelled'][r['objective']]['ours']:.0f} | "
                   f"{r['modelled'][r['objective']]['triton']:.0f} |"
                   for r, c in over if r["ours"]["total"] <= r["triton"]["total"]]
        losses += [f"| {k} | `{r['name']}` | {r['arch']} | {r['dtype']} | {c['num_warps']} | "
                   f"{'x'.join(map(str, c['shape']))} | {r['ours']['total']} | {r['triton']['total']} | "
                   f"{_classes(r['ours'])} | {_classes(r['triton'])} |"
                   for r, c in measured if r["ours"]["total"] > r["triton"]["total"]]
    out = summary + ["", "Every case where ours exceeds Triton's count:", ""] + losses
    out += ["", "Every other case where our modelled cycles (the plan's objective) exceed Triton's mix:", ""] + cycles
    return "\n".join(out + (["", "Refused by the planner:", ""] + refusals if refusals else []))


def read_cases(ap: argparse.ArgumentParser, path: str, what: str) -> list[dict]:
    """The ``cases`` list of the JSON file ``path`` (``ap.error``, one line, where there is none)."""
    try:
        cases = json.loads(Path(path).read_text())["cases"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        ap.error(f"{what} {path}: not a JSON file with a 'cases' list ({type(e).__name__}: {e})")
    if not isinstance(cases, list):
        ap.error(f"{what} {path}: 'cases' is not a list")
    return cases


def corpus_rows(ap: argparse.ArgumentParser, rows_path: str, corpus_path: str) -> tuple[list[dict], list[dict]]:
    """The bench rows of ``rows_path`` but the baseline's, and the cases of the corpus ``corpus_path``, one
    row per case in order (``ap.error``, one line, for rows of an older bench or of another case list)."""
    cases = read_cases(ap, corpus_path, "--corpus")
    rows = [r for r in read_cases(ap, rows_path, "rows") if r.get("set") != "baseline"]
    if rows_of_an_older_bench(rows):
        ap.error(f"rows {rows_path}: {OLDER_ROWS}")
    if len(rows) != len(cases):
        ap.error(f"{len(rows)} bench rows for {len(cases)} corpus cases: run the whole corpus")
    return rows, cases


def main() -> None:
    ap = ScriptParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rows", help="the --json output of linlayout bench conversions --corpus")
    ap.add_argument("--corpus", default=str(CORPUS))
    args = ap.parse_args()
    rows, cases = corpus_rows(ap, args.rows, args.corpus)
    rows = [r if "refused" in r else dict(r, triton=c["triton"], triton_uses_lds=uses_shared_memory(c["triton"]))
            for r, c in zip(rows, cases)]
    s = summarize(rows)
    print(f"cases {s['cases']} (refused {len(s['refused'])}): wins {s['wins']}, ties {s['ties']}, "
          f"losses {s['losses']}; geometric mean ours/Triton {s['geomean_ratio']} over {s['geomean_cases']}; "
          f"instructions ours {s['ours_total']} vs Triton {s['triton_total']}")
    w = s["whole_conversion"]
    if w:
        print(f"whole conversions (ours against Triton's), {w['cases']} cases (load/store-side VALU not measured "
              f"on {w['outside_valu_not_measured']}): wins {w['wins']}, ties {w['ties']}, losses {w['losses']}; "
              f"instructions ours {w['ours_total']} vs Triton {w['triton_total']}")
    print()
    print(table(rows, cases))


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:  # the reader stopped early (``| head``): nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes
