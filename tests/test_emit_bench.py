"""``linlayout bench conversions``: the summary arithmetic, and a short run against the baseline."""

from __future__ import annotations

import json
import math

import pytest

import needs
from linlayout.cli import main
from linlayout import LinearLayout
from linlayout.cli.bench import stays_in_wave, summarize
from linlayout.synth.cost import OBJECTIVES, cost_model, mix_cost
from repo_data import TRITON_BASELINE, baseline_cases

BITS = {"fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8}


def _row(name, ours, triton, in_wave=False, lds=False, secs=0.2):
    return {"name": name, "arch": "gfx942", "dtype": "fp32", "ours": {"total": ours}, "triton": {"total": triton},
            "stays_in_wave": in_wave, "triton_uses_lds": lds, "plan_isa_differences": {}, "compile_seconds": secs,
            "objective": "concurrent",
            "modelled": {o: {"ours": 4.0 * ours, "triton": 4.0 * triton, "ours_plan": 0.0} for o in OBJECTIVES},
            # conflict-blind: Triton's without the conflicts of its accesses (here 3 cycles per instruction)
            "modelled_conflict_blind": {o: {"ours": 4.0 * ours, "triton": 1.0 * triton, "ours_plan": 0.0}
                                        for o in OBJECTIVES}}


def test_summary_arithmetic():
    rows = [_row("a", 10, 40, in_wave=True, lds=True), _row("b", 0, 0), _row("c", 30, 20),
            _row("d", 5, 5, in_wave=True, lds=True, secs=0.4)]
    s = summarize(rows)
    assert (s["wins"], s["ties"], s["losses"]) == (1, 2, 1)
    assert s["geomean_cases"] == 3
    assert math.isclose(s["geomean_ratio"], round((10 / 40 * 30 / 20 * 1.0) ** (1 / 3), 4))
    assert not s["at_most_triton_everywhere"] and s["losing_cases"] == ["c gfx942 fp32"]
    assert s["in_wave_triton_lds_cases"] == 2 and not s["in_wave_at_most_half"]
    assert s["in_wave_over_half"] == ["d gfx942 fp32"]
    assert s["compile_seconds"]["max"] == 0.4 and s["ours_total"] == 45 and s["triton_total"] == 65
    assert s["modelled_over_triton"] == {o: ["c gfx942 fp32"] for o in OBJECTIVES}
    assert s["modelled_over_triton_conflict_blind"] == {o: ["c gfx942 fp32", "d gfx942 fp32"]
                                                        for o in OBJECTIVES}
    assert s["objectives"] == ["concurrent"] and s["whole_conversion"] is None and s["triton_over_target_lds"] == []


def test_stays_in_wave():
    from linlayout import LinearLayout

    lay = LinearLayout({"register": [[0, 1]], "lane": [[0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [1, 0]],
                        "warp": [[2, 0]]}, [("dim0", 4), ("dim1", 64)])
    swapped_in_wave = LinearLayout({"register": [[0, 2]], "lane": [[0, 1], [0, 4], [0, 8], [0, 16], [0, 32], [1, 0]],
                                    "warp": [[2, 0]]}, [("dim0", 4), ("dim1", 64)])
    across = LinearLayout({"register": [[0, 1]], "lane": [[0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [2, 0]],
                           "warp": [[1, 0]]}, [("dim0", 4), ("dim1", 64)])
    assert stays_in_wave(lay, swapped_in_wave, 2)
    assert not stays_in_wave(lay, across, 2)


def test_source_tuples():
    """The VGPR tuples the conversion kernel's global loads leave the src registers in (dword-index bits):
    its own runs of consecutive registers and the single loads at consecutive addresses the compiler
    merges."""
    from linlayout.encodings import blocked
    from linlayout.lowering.emit.conversion_kernel import source_tuples
    from linlayout.synth.vgpr_tuples import VgprTuples

    def tile(size, order=(1, 0)):
        return blocked(list(size), [8, 8], [1, 1], list(order), shape=[64, 64])

    assert [source_tuples(tile([1, 4]), b).bits for b in (32, 16, 8)] == [(0, 1), (0,), ()]
    assert [source_tuples(tile([1, 8]), b).bits for b in (32, 16, 8)] == [(0, 1), (0, 1), (0,)]
    # registers along dim0 first, then dim1's 1 and 2: single loads the compiler merges in fours; on the 64x64
    # tile registers 8.. (register bits 3 and 4: 16 and 32 rows, 4 and 8 KB further) have soffsets of their own
    assert source_tuples(blocked([2, 4], [8, 8], [1, 1], [0, 1], shape=[16, 32]), 32) == VgprTuples((1, 2))
    assert source_tuples(tile([2, 4], (0, 1)), 32) == VgprTuples((1, 2), 0b11000)
    assert source_tuples(tile([4, 1], (0, 1)), 32).bits == ()  # registers along dim0 alone: no neighbour in memory
    assert source_tuples(tile([1, 1]), 64).bits == (0,)  # a 64-bit element is one dwordx2
    assert source_tuples(tile([1, 2]), 64).bits == (0, 1)
    # dword bit 1 is the element's dim0 register (on a tile whose registers lie within 4 KB)
    assert source_tuples(blocked([2, 2], [8, 8], [1, 1], [0, 1], shape=[16, 16]), 64).bits == (0, 2)
    c = next(c for c in baseline_cases() if (c["name"], c["arch"], c["dtype"]) == ("mfma32->blocked", "gfx942", "fp32"))
    assert source_tuples(LinearLayout.from_json(c["src"]), 32).bits == ()
    assert source_tuples(LinearLayout.from_json(c["dst"]), 32).bits == (0, 1)


@needs.mlir
def test_bench_cli_short_run(capsys, tmp_path, monkeypatch):
    """The in-repo baseline is the default; naming it with --baseline gives the same rows."""
    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    argv = ["bench", "conversions", "--cases", "3", "--arch", "gfx950", "--isa-only", "--json"]
    assert main(argv) == 0
    r = json.loads(capsys.readouterr().out)
    assert main(argv + ["--baseline", str(TRITON_BASELINE)]) == 0
    named = json.loads(capsys.readouterr().out)
    assert [row["ours"] for row in named["cases"]] == [row["ours"] for row in r["cases"]]
    base = [c for c in baseline_cases() if c["arch"] == "gfx950"][:3]
    assert [c["name"] for c in r["cases"]] == [c["name"] for c in base]
    for row, c in zip(r["cases"], base):
        assert set(row) >= {"name", "arch", "dtype", "ours", "triton"} and row["triton"] == c["triton"]
        assert row["ours"]["total"] == sum(row["ours"][k] for k in (
            "valu", "mfma", "salu", "s_waitcnt", "s_barrier", "s_nop", "smem", "ds_bpermute", "ds_permute",
            "ds_swizzle", "lds_write", "lds_read", "lds_read_tr", "vmem", "other"))
        assert row["plan_isa_differences"] == {}
        lane_bytes = [LinearLayout.from_json(c[k]).in_dim_size("register") * BITS[c["dtype"]] // 8 for k in ("src", "dst")]
        mix = mix_cost(cost_model("gfx950"), c["triton"], *lane_bytes)
        assert {o: row["modelled"][o]["triton"] for o in OBJECTIVES} == {o: mix[f"{o}_value"] for o in OBJECTIVES}
    assert r["summary"]["cases"] == 3
    assert main(["bench", "conversions", "--baseline", str(tmp_path / "missing.json")]) == 2
    assert main(["bench", "conversions", "--cases", "0"]) == 2
    assert main(["bench"]) == 2


@needs.mlir
def test_the_help_lists_the_keys_of_real_rows(capsys, tmp_path, monkeypatch):
    """``bench conversions --help`` lists a row's keys (``ROW_KEYS``, in the row's order), and they are the keys of
    a compiled kernel's row (an AMD corpus case, its whole conversion measured) and of a row counted from the plan
    (NVIDIA); a refused case's row has the keys the help names for it (``REFUSED_ROW_KEYS``).  The list lacked
    the keys added since it was written (objective, plan_seconds, setup_total, dst_one_copy, ...)."""
    from linlayout.cli.bench import REFUSED_ROW_KEYS, ROW_KEYS, bench_case, bench_or_refusal
    from repo_data import family_corpus

    monkeypatch.setenv("LINLAYOUT_CACHE", str(tmp_path))
    with pytest.raises(SystemExit) as done:
        main(["bench", "conversions", "--help"])
    assert done.value.code == 0
    help_text = capsys.readouterr().out
    head, _, listing = help_text.partition("The keys of a row of cases (a case the planner refuses: ")
    refused, _, listing = listing.partition("):\n")
    listed = [line.split(":")[0].strip() for line in listing.split("\n\noptions:")[0].splitlines()
              if not line.startswith("      ")]
    assert listed == list(ROW_KEYS) and refused.split(", ") == list(REFUSED_ROW_KEYS)
    amd = bench_case(family_corpus("amd")["cases"][0], binary=False)
    nvidia = bench_case(family_corpus("nvidia")["cases"][0])
    assert amd["counted_by"] == "isa" and amd["ours_whole"] is not None and nvidia["counted_by"] == "plan"
    assert list(amd) == list(nvidia) == listed
    bad = dict(family_corpus("amd")["cases"][0], arch="gfx1")
    assert tuple(bench_or_refusal(bad)) == REFUSED_ROW_KEYS
