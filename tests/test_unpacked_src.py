"""A src held one 8/16-bit element per VGPR (``plan_conversion(..., src_unpacked=True)``, ``Plan.src_unpacked``):
the form of Triton's kernels that load each element alone (``global_load_ubyte`` / ``_ushort``) and
store it from its own VGPR (docs/conversions.md section 4, "A src held one element per VGPR")."""

from __future__ import annotations

import pytest

import needs
from linlayout import LayoutError, LinearLayout
from linlayout.cli.bench import kernel_plan
from linlayout.synth.convert import UnpackedSrcRefused, candidate_plans, plan_conversion
from linlayout.synth.emulator import run_isa, verify
from linlayout.synth.packing import plan_free_packing
from linlayout.synth.plan import LdsStore, Plan, packed_src, unpacked_src
from repo_data import corpus


def _case(name: str, arch: str, dtype: str, num_warps: int) -> dict:
    (case,) = [c for c in corpus()["cases"] if (c["name"], c["arch"], c["dtype"], c["num_warps"])
               == (name, arch, dtype, num_warps)]
    return case


def _layouts(case: dict) -> tuple[LinearLayout, LinearLayout]:
    return LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])


#: gfx90a fp8, 1 wave: 4 bytes per lane 16 apart, to one dword per lane (Triton: 4 ``ds_write_b8``, a read).
BYTES = ("slice1(dotA16(kw8))->slice1(blocked[4x1,t32x2,o01])", "gfx90a", "fp8", 1)
#: gfx90a bf16, 4 waves: its packed-form plan reads the upper half of a src VGPR.
HALVES = ("slice0(blocked[1x1,t1x64,o10])->slice1(mfma32T)", "gfx90a", "bf16", 4)


def test_the_unpacked_src_layout_puts_each_element_in_the_low_slot_of_its_vgpr():
    src, _ = _layouts(_case(*BYTES))
    u = unpacked_src(src, 8)
    assert u.in_dim_size("register") == 4 * src.in_dim_size("register")
    assert u.bases["register"] == [[0], [0]] + src.bases["register"]
    for r in range(src.in_dim_size("register")):
        for lane in (0, 5, 63):
            assert u.apply({"register": 4 * r, "lane": lane, "warp": 0, "block": 0}) == \
                src.apply({"register": r, "lane": lane, "warp": 0, "block": 0})
    assert packed_src(u, 8).to_json() == src.to_json()
    assert unpacked_src(src, 16).bases["register"] == [[0]] + src.bases["register"]


def test_the_bytes_are_stored_from_their_own_vgprs_with_no_permute():
    src, dst = _layouts(_case(*BYTES))
    plan = plan_conversion(src, dst, "gfx90a", 8, src_unpacked=True)
    assert plan.verified and plan.src_unpacked and plan.strategy == "lds"
    counts = plan.counts()
    assert (counts["lds_write"], counts["lds_read"], counts["v_perm_b32"], counts["total"]) == (4, 1, 0, 5)
    stores = [st for st in plan.steps if isinstance(st, LdsStore)]
    assert sorted(st.src[0] for st in stores) == [0, 4, 8, 12]  # the low byte of VGPRs 0..3
    assert all(st.width_bytes == 1 and not st.d16_hi for st in stores)
    packed = plan_conversion(src, dst, "gfx90a", 8)  # the bytes packed: bytes 1 and 3 permuted down first
    assert (packed.counts()["v_perm_b32"], packed.counts()["total"]) == (2, 7)
    assert (plan.slots_in, packed.slots_in) == (16, 4)
    assert plan.lane_bytes() == packed.lane_bytes() == (4, 4)  # each lane's 4 bytes, however held


def test_the_emulator_zeroes_the_bytes_above_an_unpacked_element():
    src, dst = _layouts(_case(*BYTES))
    plan = plan_conversion(src, dst, "gfx90a", 8, src_unpacked=True)
    stores = [k for k, st in enumerate(plan.steps) if isinstance(st, LdsStore)]
    head = Plan(**{**{f: getattr(plan, f) for f in ("arch", "wave_size", "num_warps", "element_bits", "src", "dst",
                                                      "slots_in", "slots_out", "lds_bytes")},
                   "steps": plan.steps[:stores[0]], "src_unpacked": True})
    regs = run_isa(head)  # [dwords, warps, lanes, 4 bytes]
    assert (regs[:4, :, :, 1:] == 0).all() and (regs[:4, :, :, 0] >= 256).all()
    head.src_unpacked = False
    assert (run_isa(head)[:4, :, :, 1:] >= 256).all()


def _reads_upper(src, dst):
    """A candidate of the packed form (every half of a VGPR its element) that reads an upper half: it
    converts packed and fails with the bits above each element zero."""
    from linlayout.synth.convert import candidate_plans

    for plan in candidate_plans(unpacked_src(src, 16), dst, "gfx90a", 16, prune=False):
        ok_packed = verify(plan, certificate=False).ok
        plan.src_unpacked = True
        result = verify(plan, certificate=False)
        plan.src_unpacked = False
        if ok_packed and not result.ok:
            return plan, result
    raise AssertionError("no candidate reads an upper half")


def test_a_plan_that_reads_an_upper_half_fails_on_an_unpacked_src_and_is_not_chosen():
    src, dst = _layouts(_case(*HALVES))
    packed_form, result = _reads_upper(src, dst)
    assert packed_form.counts()["total"] == 2 and "lane 32 slot 0 holds element -1" in result.message
    plan = plan_conversion(src, dst, "gfx90a", 16, src_unpacked=True)
    assert plan.verified and plan.src_unpacked and verify(plan, certificate=False).ok
    # two ds_bpermute reading the low halves and the v_perm_b32 joining them, 7 with setup (the plan of one
    # ds_bpermute and a per-lane selector is 2 + 7 at more cycles)
    assert (plan.counts()["total"], plan.total_with_overhead(), plan.strategy) == (3, 7, "lanes")


def test_where_no_candidate_reads_the_elements_alone_the_form_is_refused_and_free_packing_keeps_the_packed(
        monkeypatch):
    import linlayout.synth.convert as convert

    src, dst = _layouts(_case(*HALVES))
    reads_upper, _ = _reads_upper(src, dst)
    monkeypatch.setattr(convert, "_candidates", lambda ctx, best_only=False, ceiling=float("inf"): [reads_upper])
    with pytest.raises(UnpackedSrcRefused, match="no plan converts this src held one element per VGPR"):
        plan_conversion(src, dst, "gfx90a", 16, src_unpacked=True)
    monkeypatch.undo()
    monkeypatch.setattr(convert, "_first_unpacked", lambda ranked, *_: None)
    plan = plan_free_packing(src, dst, "gfx90a", 16, unpacked_src=True)
    assert not plan.src_unpacked and plan.verified


def test_a_src_whose_first_ranked_candidates_read_upper_bytes_takes_a_later_one():
    """gfx1250 fp8 ``dotAwmma3.16x64(kw8)->dotAwmma3.16x64(kw16)``, 4 waves: none of the candidates built for
    the first place converts the unpacked src; of every candidate the first that does is a round trip."""
    from repo_data import family_corpus

    (case,) = [c for c in family_corpus("wave32")["cases"] if (c["name"], c["arch"], c["dtype"], c["num_warps"])
               == ("dotAwmma3.16x64(kw8)->dotAwmma3.16x64(kw16)", "gfx1250", "fp8", 4)]
    src, dst = _layouts(case)
    plan = plan_conversion(src, dst, "gfx1250", 8, src_unpacked=True)
    assert plan.strategy == "lds" and plan.src_unpacked and verify(plan, certificate=False).ok
    counts = plan.counts()
    # no barrier: every wave holds the whole src (lds_path._exchanges, since session 24; 1 and 9 before)
    assert (counts["v_perm_b32"], counts["lds_write"], counts["lds_read"], counts["s_barrier"], counts["total"]) == \
        (6, 1, 1, 0, 8)
    assert plan_conversion(src, dst, "gfx1250", 8).counts()["total"] == 4  # packed: 4 in the wave


def test_the_certificate_keeps_the_form_and_refuses_a_bad_one():
    src, dst = _layouts(_case(*BYTES))
    plan = plan_conversion(src, dst, "gfx90a", 8, src_unpacked=True)
    cert = plan.to_certificate()
    assert cert["src_unpacked"] is True
    assert "src_unpacked" not in plan_conversion(src, dst, "gfx90a", 8).to_certificate()
    back = Plan.from_certificate(cert)
    assert back.src_unpacked and verify(back).ok
    with pytest.raises(LayoutError, match="src_unpacked 'yes'; it must be true or false"):
        Plan.from_certificate({**cert, "src_unpacked": "yes"})
    packed = plan_conversion(src, dst, "gfx90a", 8).to_certificate()
    with pytest.raises(LayoutError, match="src_unpacked true but its src's first register bases are not zero"):
        Plan.from_certificate({**packed, "src_unpacked": True})


def test_a_certificate_reading_a_slot_above_an_unpacked_element_is_refused():
    # the upper slots of an unpacked src VGPR hold nothing at element level (docs/contract.md section 4)
    import json

    from convert_checker import check_certificate
    from linlayout.synth.emulator import element_ids, run_certificate
    src, dst = _layouts(_case(*BYTES))
    cert = plan_conversion(src, dst, "gfx90a", 8, src_unpacked=True).to_certificate()
    assert check_certificate(json.loads(json.dumps(cert))) == (True, "")
    (store,) = [st for st in cert["steps"] if st["op"] == "lds_store" and st["src"] == [4]]
    store["src"], store["isa"]["d16_hi"] = [6], True  # slot 6: byte 2 of VGPR 1, above its element (slot 4)
    tampered = Plan.from_certificate(json.loads(json.dumps(cert)))
    assert tampered.src_unpacked and not verify(tampered).ok
    state = run_certificate(cert)[:, :, :cert["slots_out"]]
    assert (state != element_ids(tampered.dst, tampered.num_warps)).any() and (state == -1).any()
    ok, message = check_certificate(json.loads(json.dumps(cert)))
    assert not ok and "holds None" in message


@pytest.mark.parametrize("call, message", [
    (lambda s, d: plan_conversion(s, d, "gfx90a", 8, src_unpacked=1), "src_unpacked must be True or False, got 1"),
    (lambda s, d: plan_conversion(s, d, "gfx90a", 32, src_unpacked=True),
     "a src held one element per VGPR needs 8- or 16-bit elements, not 32-bit ones"),
    (lambda s, d: plan_free_packing(s, d, "gfx90a", 8, unpacked_src="yes"),
     "unpacked_src must be True or False, got 'yes'"),
    (lambda s, d: plan_free_packing(s, d, "gfx90a", 8, src_fixed_bits=2, unpacked_src=True),
     "unpacked_src needs 8- or 16-bit elements whose dwords the caller does not move whole"),
    (lambda s, d: plan_free_packing(s, d, "gfx90a", 32, unpacked_src=True),
     "unpacked_src needs 8- or 16-bit elements whose dwords the caller does not move whole"),
    (lambda s, d: kernel_plan(s, d, "gfx90a", 8, unpacked_src=1), "unpacked_src must be True or False, got 1"),
    (lambda s, d: candidate_plans(s, d, "sm_90", 8, src_unpacked=True),
     "src_unpacked: held one element per VGPR is an AMD kernel form; sm_90 has no emitter for it"),
    (lambda s, d: plan_free_packing(s, d, "sm_90", 8, unpacked_src=True),
     "unpacked_src: held one element per VGPR is an AMD kernel form; sm_90 has no emitter for it"),
])
def test_bad_values_are_one_line_errors(call, message):
    src, dst = _layouts(_case(*BYTES))
    with pytest.raises(LayoutError, match=message) as e:
        call(src, dst)
    assert "\n" not in str(e.value)


def test_free_packing_takes_the_unpacked_src_where_it_is_cheaper_and_keeps_the_packed_one_elsewhere():
    src, dst = _layouts(_case(*BYTES))
    plan = plan_free_packing(src, dst, "gfx90a", 8, unpacked_src=True)
    assert plan.src_unpacked and plan.counts()["total"] == 5
    assert not plan_free_packing(src, dst, "gfx90a", 8).src_unpacked
    assert kernel_plan(src, dst, "gfx90a", 8).src_unpacked
    assert not kernel_plan(src, dst, "gfx90a", 8, unpacked_src=False).src_unpacked
    s2, d2 = _layouts(_case("slice1(mfma32)->slice1(blocked[4x1,t16x4,o01])", "gfx950", "fp8", 4))
    kept = plan_free_packing(s2, d2, "gfx950", 8, unpacked_src=True)  # unpacked: 16 + 8 at 404, packed 4 + 6 at 304
    assert not kept.src_unpacked and kept.counts()["total"] == 4


@needs.mlir
def test_the_kernel_loads_each_byte_into_its_own_vgpr_and_stores_it_as_is():
    from interp_kernels import converting_kernel
    from linlayout.lowering.isa import region_lines

    src, dst = _layouts(_case(*BYTES))
    plan = plan_conversion(src, dst, "gfx90a", 8, src_unpacked=True)
    low = converting_kernel(plan)
    counts = low.report["isa_counts"]
    assert (counts["total"], counts["lds_write"], counts["lds_read"], counts["valu"]) == (5, 4, 1, 0)
    assert low.report["setup_counts"]["total"] == 1  # the read's address
    isa = low.compiled.isa
    assert isa.count("buffer_load_ubyte") == 4
    loaded = isa.split("linlayout-begin setup")[0].split("buffer_load_ubyte", 1)[1]
    assert not any(op in loaded for op in ("v_or_b32", "v_lshlrev_b16", "v_perm_b32"))  # no packing after the loads
    ops = [line.split()[0] for line in region_lines(isa, "conv") if not line.lstrip().startswith(";")]
    assert ops == ["ds_write_b8"] * 4 + ["ds_read_b32"]


@needs.mlir
def test_the_bench_counts_the_unpacked_kernel_whole():
    from linlayout.cli.bench import bench_case

    row = bench_case(_case(*BYTES), binary=False)
    assert row["src_unpacked"] and row["repacked"] == []
    assert (row["ours"]["total"], row["ours_setup"]["total"], row["ours_whole"]["total"]) == (5, 1, 6)
    assert row["ours_outside_valu"] == {"load": 0, "store": 0}
    assert (row["triton"]["total"], row["triton_whole"]["total"]) == (7, 8)
