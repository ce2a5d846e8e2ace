"""benchmarks/warp_part.py --summary: the accuracy line over the rows a run printed (one JSON object a plan:
its setup estimate by key and its compiled setup)."""

import json

from benchmarks.warp_part import main, summary


def _row(estimate: dict, total: int) -> str:
    return json.dumps({"name": "x", "estimate": estimate, "setup": {"total": total, "valu": total, "salu": 0,
                                                                      "delay": 0}})


def test_summary_counts_exact_within_one_sum_and_median(tmp_path, capsys):
    # compiled - estimate: 0, 1, -3, 2 -> exact 1, within one 2, sum 0, median (0 + 1) / 2
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join([_row({"valu_lds_addr": 5}, 5), _row({"valu_lds_addr": 3, "salu_vcc": 1}, 5),
                               _row({"valu_lds_addr": 7}, 4), _row({}, 2)]) + "\n")
    line = ("4 plans: compiled setup = estimate 1, within one 2; compiled - estimate: sum 0, median 0.5")
    assert summary(rows) == line
    assert main(["--summary", str(rows)]) == 0
    assert capsys.readouterr().out.strip() == line


def test_summary_of_no_rows(tmp_path):
    rows = tmp_path / "empty.jsonl"
    rows.write_text("\n")
    assert summary(rows) == f"{rows}: no rows"


def test_kernel_sharing_reads_of_the_load_line_and_addresses_formed_outside():
    # v18 is read before the setup writes it (a load-line value); v0 is the lane id; v1, the first
    # store's address, is formed by neither region (the load line's offset register); v0's read
    # address is the setup's; the second store's address v5 is formed in the conv region.
    from benchmarks.warp_part import kernel_sharing
    setup = ["v_lshlrev_b32_e32 v0, 6, v0", "s_lshl_b32 s9, s8, 9", "v_lshl_or_b32 v0, v18, 4, v0",
             "v_or3_b32 v3, s9, v0, v3", "s_delay_alu instid0(VALU_DEP_1)"]
    conv = ["ds_write2_b32 v1, v2, v3 offset1:2", "v_add_u32_e32 v5, 0x400, v0",
            "ds_write_b32 v5, v4", "s_waitcnt lgkmcnt(0)", "ds_read_b32 v1, v0", "ds_read_b32 v6, v1"]
    # v3 is read by v_or3_b32 before the setup writes it: a load-line value too
    assert kernel_sharing(setup, conv) == ([3, 18], ["v1"])


def test_kernel_sharing_of_a_self_contained_setup():
    from benchmarks.warp_part import kernel_sharing
    setup = ["v_and_b32_e32 v35, 15, v0", "v_lshlrev_b32_e32 v36, 4, v35", "v_xor_b32_e32 v37, 16, v36"]
    conv = ["ds_write_b128 v36, v[2:5]", "ds_read_b128 v[6:9], v37 offset:256"]
    assert kernel_sharing(setup, conv) == ([], [])


def test_summary_causes_splits_by_sharing(tmp_path):
    rows = tmp_path / "rows.jsonl"
    shared = json.dumps({"estimate": {"valu_lds_addr": 5}, "setup": {"total": 2, "valu": 2, "salu": 0, "delay": 0},
                         "kernel_values": [], "outside_addresses": ["v1"]})
    alone = json.dumps({"estimate": {"valu_lds_addr": 4}, "setup": {"total": 5, "valu": 3, "salu": 0, "delay": 2},
                        "kernel_values": [], "outside_addresses": []})
    rows.write_text(shared + "\n" + alone + "\n")
    assert summary(rows, causes=True).splitlines() == [
        "2 plans: compiled setup = estimate 0, within one 1; compiled - estimate: sum -2, median -1",
        "sharing values with the kernel's load line: 1 plans: compiled setup = estimate 0, within one 0; "
        "compiled - estimate: sum -3, median -3",
        "self-contained: 1 plans: compiled setup = estimate 0, within one 1; compiled - estimate: sum 1, median 1",
        "s_delay_alu compiled 2 (in 1 plans)"]


def test_causes_without_summary_is_one_line_exit_2(capsys):
    import pytest
    with pytest.raises(SystemExit) as e:
        main(["--causes"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("error: --causes summarizes rows: give --summary FILE") and "\n" not in err


def test_kernel_sharing_v0_rewritten_by_the_load_line_is_a_kernel_value():
    # gfx90a fp16 slice1(mfma16T)->slice1(blocked[2x1,t16x4,o01]), 2 waves: the load line makes v0 = v0 & 15
    from benchmarks.warp_part import kernel_sharing
    setup = ["v_lshlrev_b32_e32 v3, 2, v0", "v_lshl_or_b32 v4, s8, 6, v3", "v_lshlrev_b32_e32 v0, 3, v0"]
    conv = ["ds_write_b32 v4, v2", "ds_read_b32 v1, v0"]
    before = ["v_readfirstlane_b32 s8, v0", "v_and_b32_e32 v0, 15, v0", "buffer_store_dword v0, v1, s[4:7], 0 offen"]
    assert kernel_sharing(setup, conv, before) == ([0], [])
    assert kernel_sharing(setup, conv, before[:1]) == ([], [])


def test_kernel_sharing_reads_both_halves_of_a_vopd_line_before_either_writes():
    # v7 is read by the second half (a load-line value); v2, written by the second half, is the setup's own
    # when the next line reads it; v1 is read by the second half before the first half's write lands
    from benchmarks.warp_part import kernel_sharing
    setup = ["v_dual_mov_b32 v1, v0 :: v_dual_lshlrev_b32 v2, v1, v7", "v_or_b32_e32 v3, v2, v1"]
    assert kernel_sharing(setup, ["ds_read_b32 v4, v3"]) == ([1, 7], [])


def test_kernel_sharing_takes_no_address_of_a_ds_swizzle():
    # ds_swizzle_b32 vdst, vdata: its second operand is data, not an LDS address
    from benchmarks.warp_part import kernel_sharing
    conv = ["ds_swizzle_b32 v5, v9 offset:0x401f", "s_waitcnt lgkmcnt(0)", "ds_write_b32 v8, v5"]
    assert kernel_sharing([], conv) == ([], ["v8"])


def test_kernel_sharing_a_global_or_buffer_store_before_the_setup_writes_no_register():
    # a store's first operand is its address (or data), read: v0 stays the kernel's lane id
    from benchmarks.warp_part import kernel_sharing
    setup = ["v_lshlrev_b32_e32 v3, 2, v0"]
    for store in ("buffer_store_dword v0, v1, s[4:7], 0 offen", "global_store_dwordx4 v0, v[4:7], s[2:3]"):
        assert kernel_sharing(setup, ["ds_write_b32 v3, v2"], [store]) == ([], [])
    assert kernel_sharing(setup, ["ds_write_b32 v3, v2"], ["v_and_b32_e32 v0, 15, v0"]) == ([0], [])


def test_an_arch_the_corpus_lacks_is_one_line_exit_2(capsys):
    import pytest
    with pytest.raises(SystemExit) as e:
        main(["--arch", "foo"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "error: --arch foo: no case of the amd corpus is for it" in err and "\n" not in err


def test_a_prefetch_reads_its_address_and_writes_no_vgpr():
    # gfx1250's load line prefetches at v0: the thread id stays the kernel's v0, read and not written
    from benchmarks.warp_part import _read_vgprs, _written_vgprs
    line = "\tglobal_prefetch_b8 v0, s[0:1] offset:16"
    assert _written_vgprs(line) == set() and _read_vgprs(line) == {0}
    assert _written_vgprs("\tv_and_b32_e32 v1, 63, v0") == {1} and _read_vgprs("\tv_and_b32_e32 v1, 63, v0") == {0}
