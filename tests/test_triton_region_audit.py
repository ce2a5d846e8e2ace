"""benchmarks/triton_region_audit.py: what of Triton's kernel lies outside the corpus's counted
region (its global stores of single 8/16-bit values, the VALU its load and store lines hold
beyond its identity kernels'), and, where Triton 3.9.0 is installed, that audit of the largest
wave32 16-bit loss (docs/benchmarks.md, the wave32 corpus)."""

from __future__ import annotations

import sys

import pytest

from repo_data import REPO, family_corpus
from triton_oracle import TRITON_VERSION, triton_version

sys.path.insert(0, str(REPO / "benchmarks"))
import make_corpus  # noqa: E402
import triton_region_audit as audit  # noqa: E402

from linlayout.lowering.beyond_identity import outside_valu  # noqa: E402


def test_sub_dword_stores_counts_single_value_stores_of_both_isas():
    """CDNA's byte/short stores and gfx11/gfx12's b8/b16 ones, with their _d16_hi forms, count;
    wider stores (b32, b64, b128: a prefix of ``global_store_b16`` in name only) do not."""
    asm = "\n".join([
        "\tglobal_store_byte v[0:1], v2, off", "\tglobal_store_short_d16_hi v[0:1], v2, off",
        "\tglobal_store_b8 v[0:1], v2, off", "\tglobal_store_d16_hi_b8 v[0:1], v2, off offset:2",
        "\tglobal_store_b16 v[0:1], v2, off", "\tglobal_store_d16_hi_b16 v[0:1], v2, off",
        "\tglobal_store_b128 v[0:1], v[2:5], off", "\tglobal_store_b32 v[0:1], v2, off",
        "\tglobal_store_dwordx4 v[0:1], v[2:5], off", "\t; global_store_b8 in a comment"])
    assert audit.sub_dword_stores(asm) == 6


#: Triton 3.9.0's gfx1200 fp16 ``slice0(wmma2.16x16)->slice0(blocked[1x4,t1x32,o10])``, one wave (its
#: convert_layout on line 567), abridged: a clause of global loads opened on the conversion's line, its
#: barrier with the global cache invalidate of Triton's fence, and the dst pointer's kernel-argument load
#: that the scheduler put there.
GFX1200_REGION = """\t.loc\t1 567 0
\ts_clause 0x1
\tglobal_load_d16_b16 v2, v4, s[2:3]
\t.loc\t1 567 2
\tglobal_load_d16_hi_b16 v2, v4, s[2:3] offset:32
\tv_add_nc_u32_e32 v4, 0, v4
\ts_wait_loadcnt 0x1
\tds_store_b16 v4, v2
\ts_wait_dscnt 0x0
\ts_barrier_signal -1
\ts_barrier_wait -1
\tglobal_inv scope:SCOPE_SE
\ts_clause 0x1
\tds_load_b64 v[0:1], v0
\tds_load_b64 v[2:3], v0 offset:8
\ts_load_b64 s[0:1], s[0:1], 0x8
\ts_delay_alu instid0(VALU_DEP_1)
\ts_wait_kmcnt 0x0
\t.loc\t1 568 0
\ts_wait_dscnt 0x0
\tglobal_store_b64 v2, v[0:1], s[0:1]
"""


def test_the_counted_region_leaves_out_what_is_not_the_conversion():
    """make_corpus.convert_lines (the corpus's Triton counts) leaves out the global accesses and their
    waits, the barrier's ``global_inv`` (our kernels fence LDS only: their barriers have none), the
    kernel-argument loads (``s_load_b64``) and their gfx12 wait (``s_wait_kmcnt``), and the ``s_clause``
    that opens a clause of global loads, none of which our regions hold; it keeps the LDS accesses, their
    wait, the barrier's two halves, the clause of LDS loads, the VALU and the ``s_delay_alu`` (an ``salu``
    and its sub-count)."""
    from linlayout.lowering.isa import isa_counts

    kept = [ln.strip() for ln in make_corpus.convert_lines(GFX1200_REGION, 567)]
    assert kept == ["v_add_nc_u32_e32 v4, 0, v4", "ds_store_b16 v4, v2", "s_wait_dscnt 0x0", "s_barrier_signal -1",
                    "s_barrier_wait -1", "s_clause 0x1", "ds_load_b64 v[0:1], v0", "ds_load_b64 v[2:3], v0 offset:8",
                    "s_delay_alu instid0(VALU_DEP_1)"]
    counts = isa_counts("\n".join(kept))
    assert {k: v for k, v in counts.items() if v} == {"total": 9, "valu": 1, "lds_write": 1, "lds_read": 2,
                                                      "s_waitcnt": 1, "s_barrier": 2, "salu": 2, "s_delay_alu": 1}


def test_the_counted_region_leaves_out_gfx1250_waits_for_global_memory():
    """gfx1250's waits for the global stores before the conversion (Triton 3.9.0's gfx1250 regions): for
    their VGPRs to have been read (``s_wait_alu depctr_vm_vsrc(0)``) and for their transfers
    (``s_wait_xcnt``) are left out like ``s_wait_storecnt``; a wait for a VALU result (``s_wait_alu
    depctr_va_vdst(5)``), or one with such a field beside ``depctr_vm_vsrc``, stays."""
    asm = "\n".join(["\t.loc\t1 561 0", "\ts_wait_alu depctr_vm_vsrc(0)", "\tds_load_b128 v[0:3], v92",
                     "\ts_wait_xcnt 0x7", "\ts_wait_alu depctr_va_vdst(5)", "\tv_perm_b32 v1, v2, v3, v4",
                     "\ts_wait_alu depctr_va_vdst(0) depctr_vm_vsrc(0)", "\ts_wait_storecnt 0x0"])
    assert [ln.split()[0] for ln in make_corpus.convert_lines(asm, 561)] == [
        "ds_load_b128", "s_wait_alu", "v_perm_b32", "s_wait_alu"]


def test_source_lines_of_the_corpus_kernels():
    """The load, convert and store of both kernels are on consecutive statements' lines."""
    for kernel in make_corpus._kernels():
        load, convert, store = (make_corpus.source_line(kernel, call)
                                for call in ("gl.load", "gl.convert_layout", "gl.store"))
        assert load + 1 == convert < store


@pytest.mark.skipif(triton_version() != TRITON_VERSION, reason=f"triton=={TRITON_VERSION} is not installed")
def test_audit_of_the_wave32_16bit_repack():
    """gfx1200 fp16 ``wmma2.16x16->blocked[1x4,t16x2,o10]``, one wave, 64x64: Triton's counted
    region holds the 16 ``ds_store_b128`` of its round trip, the store line the 16 ``ds_load_b128``
    and the repacking of the loaded halves into the store's order (96 ``v_mov_b16`` and 64
    ``v_lshrrev_b32``, 2 more VALU than the identity kernel's line otherwise), and the load line
    no more VALU than the identity kernel's (its ``global_load_d16_b16`` / ``_d16_hi_b16`` put
    each element in its half); it stores the tile with ``global_store_b64``.  The corpus stores
the same VALU beyond the identity kernels (``triton_outside_valu``)."""
    case = next(c for c in family_corpus("wave32")["cases"]
                if (c["name"], c["arch"], c["dtype"], c["num_warps"])
                == ("wmma2.16x16->blocked[1x4,t16x2,o10]", "gfx1200", "fp16", 1))
    context, builder, kernels = make_corpus._triton_session()  # noqa: F841 (context kept alive)
    a = audit.audit(case, make_corpus.FAMILIES["wave32"], kernels)
    assert a["region"] == {"lds_write": 16, "lds_read": 0, "lds_read_tr": 0, "v_perm_b32": 0}
    assert a["kernel"] == {"lds_write": 16, "lds_read": 16, "lds_read_tr": 0, "v_perm_b32": 0}
    assert a["sub_dword_stores"] == 0
    assert a["load_valu"] == {"valu": 0, "v_mov": 0, "v_perm_b32": 0}
    assert a["store_valu"] == {"valu": 162, "v_mov": 96, "v_perm_b32": 0}
    assert case["triton"]["total"] + outside_valu(a["store_valu"]) == 196
    # the corpus stores the same per line (make_corpus.measure), which the whole conversion counts
    assert case["triton_outside_valu"] == {"load": 0, "store": 162}


def _refused(monkeypatch, capsys, rows) -> tuple[int, str]:
    """The exit status and the last line on stderr of the audit run on ``rows``."""
    monkeypatch.setattr("sys.argv", ["triton_region_audit.py", str(rows), "--family", "wave32"])
    with pytest.raises(SystemExit) as e:
        audit.main()
    return e.value.code, capsys.readouterr().err.strip().splitlines()[-1]


def test_unreadable_or_partial_rows_are_refused_in_one_line(tmp_path, capsys, monkeypatch):
    rows = tmp_path / "rows.json"
    code, err = _refused(monkeypatch, capsys, rows)
    assert code == 2 and f"rows {rows}: not a JSON file with a 'cases' list (FileNotFoundError" in err
    rows.write_text('{"cases": [{"set": "wave32", "name": "x"}]}')
    code, err = _refused(monkeypatch, capsys, rows)
    assert code == 2 and err.endswith("1 bench rows for 615 corpus cases: run the whole corpus")


def test_rows_of_an_older_bench_are_refused_in_one_line(tmp_path, capsys, monkeypatch):
    """Rows with Triton's whole conversion but no ``ours_whole`` (an older ``linlayout bench``, which
    counted ours without its setup) are refused, not read as ours (it was a KeyError traceback)."""
    rows = tmp_path / "rows.json"
    rows.write_text('{"cases": [{"set": "wave32", "name": "x", "triton_whole": {"total": 3}, '
                    '"ours": {"total": 2}}]}')
    code, err = _refused(monkeypatch, capsys, rows)
    assert code == 2 and err.endswith(f"rows {rows}: made by an older linlayout bench (its ours_whole counted otherwise): run it again")
