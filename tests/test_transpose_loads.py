"""The LDS transpose loads (linlayout.hw.transpose_loads): their lane maps against the statements of
docs/amd_facts.md 1.6 (gfx950) and 6.6 (gfx1250), written out here element by element; gfx1250's
``ds_load_tr16_b128`` / ``ds_load_tr8_b64`` in the emulator, the certificate, the planner (Triton's
wave32 corpus: WMMA-operand conversions read transposed), the MLIR wave interpreter and the
compiled ISA."""

from __future__ import annotations

import json

import numpy as np
import pytest

from linlayout import LayoutError, LinearLayout
from linlayout.dtypes import dtype_bits
from linlayout.hw.targets import get_target
from linlayout.hw.transpose_loads import TRANSPOSE_LOADS, transpose_load_named
from linlayout.synth.convert import plan_conversion
from linlayout.synth.emulator import PlanVerificationError, run_certificate, run_isa
from linlayout.synth.plan import LdsLoad, LdsStore, Plan, transpose_element_addresses

import needs
from repo_data import family_corpus


def _documented_source(name: str, i: int, j: int) -> tuple[int, int]:
    """(source lane, element of its read) of destination lane ``i``, element ``j``, as the docs state it."""
    if name.startswith("ds_read_b"):  # gfx950, docs/amd_facts.md 1.6: 16-lane groups
        load = transpose_load_named(name)
        e = load.elements
        return 16 * (i // 16) + j * (16 // e) + (i % 16) // e, (i % 16) % e
    if name == "ds_load_tr16_b128":  # gfx1250, 6.6: an 8 x 8 transpose per group of 8 lanes
        return 8 * (i // 8) + j, i % 8
    if name == "ds_load_tr8_b64":  # gfx1250, 6.6: groups of 16 lanes
        return 16 * (i // 16) + j % 4 + 4 * ((i % 16) // 8) + 8 * (j // 4), i % 8
    raise AssertionError(name)


@pytest.mark.parametrize("load", TRANSPOSE_LOADS, ids=lambda t: t.name)
def test_lane_maps_are_the_documented_ones(load):
    src_lane, src_elem = load.sources()
    want = np.array([[_documented_source(load.name, i, j) for j in range(load.elements)]
                     for i in range(load.wave_size)])
    assert np.array_equal(src_lane, want[..., 0]) and np.array_equal(src_elem, want[..., 1])
    # read_origins inverts the map at element 0: lane s's read lands, element 0 first, at (lane, element)
    lane, elem = load.read_origins()
    assert np.array_equal(src_lane[lane, elem], np.arange(load.wave_size)) and not src_elem[lane, elem].any()


def test_gfx1250_loads_by_target():
    t = get_target("gfx1250")
    assert (t.transpose_load(16).name, t.transpose_load(8).name) == ("ds_load_tr16_b128", "ds_load_tr8_b64")
    assert (t.transpose_load(16).bytes_per_lane, t.transpose_load(8).bytes_per_lane) == (16, 8)
    assert get_target("gfx950").transpose_load(8).name == "ds_read_b64_tr_b8"
    assert get_target("gfx1200").transpose_load(16) is None and get_target("gfx942").transpose_load(8) is None
    assert "gfx1250_tr_lane_map" in t.lds_model_assumptions


@pytest.mark.parametrize("name", ["ds_load_tr16_b128", "ds_load_tr8_b64"])
def test_element_addresses_follow_the_statement(name):
    load = transpose_load_named(name)
    rng = np.random.default_rng(7)
    addr = rng.permutation(64)[:32] * load.bytes_per_lane  # aligned, distinct
    got = transpose_element_addresses(addr, load)
    element_bytes = load.element_bits // 8
    for i in range(32):
        for j in range(load.elements):
            s, e = _documented_source(name, i, j)
            assert got[j][i] == addr[s] + e * element_bytes


LANES32 = np.arange(32)


def _tr_plan(bits: int, arch: str = "gfx1250") -> Plan:
    """One wave32 warp: element id ``r + E * lane`` in slot ``r`` (``E`` per lane); every lane stores
    them at ``E * element_bytes * lane`` and reads them back with the arch's transpose load."""
    load = get_target("gfx1250").transpose_load(bits)
    e, nbytes = load.elements, load.bytes_per_lane
    src = LinearLayout({"register": [[1 << k] for k in range(e.bit_length() - 1)],
                        "lane": [[e << k] for k in range(5)], "warp": []}, [("dim0", 32 * e)])
    steps = [LdsStore(addr=LANES32 * nbytes, width_bytes=nbytes, src=list(range(e))),
             LdsLoad(addr=LANES32 * nbytes, width_bytes=nbytes, dst=list(range(e, 2 * e)), transpose=bits)]
    return Plan(arch, 32, 1, bits, src, src, e, 2 * e, steps, lds_bytes=32 * nbytes)


@pytest.mark.parametrize("bits", [16, 8])
def test_emulated_transpose_load_moves_the_documented_elements(bits):
    plan = _tr_plan(bits)
    name = plan.steps[1].transpose_load.name
    cert = json.loads(plan.dumps())
    loads = [s for s in cert["steps"] if s["op"] == "lds_load"]
    assert loads[0]["isa"]["transpose"] == name and all(s.get("fused") == name for s in loads[1:])
    back = Plan.from_certificate(cert)
    assert back.steps[1].width_bytes == plan.steps[1].width_bytes and back.counts()["lds_read_tr"] == 1
    ids = run_certificate(cert)[0]  # [32, slots] element ids
    regs = run_isa(back)  # [dwords, W, 32, 4 bytes]: tags 256 + 8 * id + byte in 8-bit cells
    e = plan.steps[1].transpose_load.elements
    for i in range(32):
        for j in range(e):
            s, c = _documented_source(name, i, j)
            assert ids[i, e + j] == e * s + c  # the element lane s stored at position c
    slot_bytes = bits // 8
    for j in range(e):  # the emulator's registers hold the same elements
        slot = e + j
        dword, byte = divmod(slot * slot_bytes, 4)
        assert np.array_equal((regs[dword, 0, :, byte] - 256) // 8, ids[:, slot])


@pytest.mark.parametrize("bits", [16, 8])
def test_other_wave32_targets_have_no_transpose_loads(bits):
    load = {16: "ds_load_tr16_b128", 8: "ds_load_tr8_b64"}[bits]
    with pytest.raises(PlanVerificationError, match=f"gfx1200 has no transpose load of {bits}-bit elements .*; "
                                                    f"{load} is gfx1250's"):
        run_isa(_tr_plan(bits, "gfx1200"))


def test_a_certificate_names_its_load():
    cert = json.loads(_tr_plan(8).dumps())
    cert["steps"][1]["isa"]["transpose"] = "ds_load_tr4_b64"
    with pytest.raises(LayoutError, match="unknown transpose load 'ds_load_tr4_b64'"):
        Plan.from_certificate(cert)


@pytest.mark.parametrize("bits, other", [(8, "ds_read_b64_tr_b8"), (16, "ds_read_b64_tr_b16")])
def test_a_certificate_naming_another_waves_load_is_refused(bits, other):
    """A gfx1250 certificate whose transpose load is gfx950's (a load of 64-lane waves, another lane
    map) is refused when read, not run as gfx1250's load of the same width."""
    cert = json.loads(_tr_plan(bits).dumps())
    own = cert["steps"][1]["isa"]["transpose"]
    for item in cert["steps"]:
        if item.get("isa", {}).get("transpose") == own:
            item["isa"]["transpose"] = other
        if item.get("fused") == own:
            item["fused"] = other
    with pytest.raises(LayoutError, match=f"{other} is a load of 64-lane waves; its lane_addr has 32 lanes"):
        Plan.from_certificate(cert)


def _corpus_case(name: str, dtype: str, shape: tuple[int, int], num_warps: int) -> dict:
    """The gfx1250 case of Triton's wave32 corpus of this name, dtype, shape and warps (named so, not by
    its place in the file, which moves as the corpus grows)."""
    key = ("gfx1250", name, dtype, tuple(shape), num_warps)
    (case,) = [c for c in family_corpus("wave32")["cases"]
               if (c["arch"], c["name"], c["dtype"], tuple(c["shape"]), c["num_warps"]) == key]
    return case


def _corpus_plan(case: dict) -> Plan:
    src, dst = LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])
    return plan_conversion(src, dst, case["arch"], dtype_bits(case["dtype"]))


#: Named corpus cases (name, dtype, shape, warps) whose dst the planner reads transposed: the load and
#: the plan's counts; without the transpose loads the planner writes and re-reads (the first two: 41
#: and 44 instructions).
TRANSPOSED_CASES = {
    ("wmma3.16x32->dotAwmma3.16x32(kw8)", "bf16", (64, 32), 8):
        ("ds_load_tr16_b128", {"lds_write": 4, "lds_read_tr": 8, "s_barrier": 1, "total": 13}),
    ("wmma3.16x64T->wmma3.16x64", "fp8", (128, 32), 2):
        ("ds_load_tr8_b64", {"lds_write": 4, "lds_read_tr": 8, "total": 12}),
    ("wmma3.16x32T->wmma3.16x32", "fp16", (64, 64), 1):
        ("ds_load_tr16_b128", {"lds_write": 16, "lds_read_tr": 16, "total": 32}),
    ("blocked[1x1,t1x32,o10]->blocked[1x1,t32x1,o01]", "fp16", (64, 64), 1):
        ("ds_load_tr16_b128", {"v_perm_b32": 64, "lds_write": 16, "lds_read_tr": 16, "total": 96}),
}
#: The two of them run on the interpreter and compiled.
COMPILED_CASES = list(TRANSPOSED_CASES)[:2]


@pytest.mark.parametrize("key", list(TRANSPOSED_CASES), ids=lambda k: f"{k[0]}-{k[1]}")
def test_named_corpus_conversions_on_gfx1250_read_transposed(key):
    load, counts = TRANSPOSED_CASES[key]
    p = _corpus_plan(_corpus_case(*key))
    assert p.verified and {k: v for k, v in p.counts().items() if v} == counts
    assert {st.transpose_load.name for st in p.steps if isinstance(st, LdsLoad)} == {load}


def _gfx1250_transpose_cases():
    """The gfx1250 cases of the wave32 corpus that a transpose load could move (8- and 16-bit
    elements), each with its context (built on empty planner caches) and whether
    ``lds_path._transpose_readable`` lets some shared layout read its dst with the target's load."""
    from linlayout import caches
    from linlayout.synth import lds_path
    from linlayout.synth.context import ConversionContext

    for c in family_corpus("wave32")["cases"]:
        if c["arch"] != "gfx1250" or dtype_bits(c["dtype"]) not in (8, 16):
            continue
        caches.clear(keep_tables=True)  # each case from empty planner caches
        ctx = ConversionContext.create(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), "gfx1250",
                                       dtype_bits(c["dtype"]))
        yield c, ctx, lds_path._transpose_readable(ctx.problem.dst_cols, ctx.target.transpose_load(ctx.element_bits))


def test_gfx1250_plans_read_transposed_only_readable_dsts():
    """Over the corpus (counted, not pinned): a plan reads with a transpose load only a dst that
    ``_transpose_readable`` admits, with the target's load of its element width, and verifies; each
    gfx1250 load is chosen for at least one case and at most for the cases that admit it."""
    chosen, readable_by_load = {}, {}
    for case, ctx, readable in _gfx1250_transpose_cases():
        load = ctx.target.transpose_load(ctx.element_bits).name
        readable_by_load[load] = readable_by_load.get(load, 0) + readable
        p = _corpus_plan(case)
        used = {st.transpose_load.name for st in p.steps if isinstance(st, LdsLoad) and st.transpose_load}
        assert p.verified and used <= ({load} if readable else set()), case["name"]
        chosen[load] = chosen.get(load, 0) + bool(used)
    assert set(chosen) == {"ds_load_tr16_b128", "ds_load_tr8_b64"}
    assert all(0 < chosen[load] <= readable_by_load[load] for load in chosen), (chosen, readable_by_load)


@needs.mlir
@pytest.mark.parametrize("key", COMPILED_CASES, ids=lambda k: f"{k[0]}-{k[1]}")
def test_gfx1250_transpose_plans_run_on_the_interpreter_and_compile(key):
    from linlayout.lowering.compile import CompileError, compile_mlir
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.emit.host import distinct_tile, expected_output, interpret

    p = _corpus_plan(_corpus_case(*key))
    low = lower_conversion(p, binary=False, cache=False)
    assert TRANSPOSED_CASES[key][0].replace("ds_load_tr", "rocdl.ds.load.tr").replace("_b", ".b") in low.kernel.text
    tile = distinct_tile(low.kernel.shape, p.element_bits, seed=5)
    assert np.array_equal(interpret(low.kernel, tile, fill=0x5A), expected_output(p, tile, fill=0x5A))
    assert low.report["isa_counts"]["lds_read_tr"] == p.counts()["lds_read_tr"] and not low.differences
    # gfx950 has the descriptor flag but not gfx1250's loads: refused before LLVM would abort
    name = TRANSPOSED_CASES[key][0]
    with pytest.raises(CompileError, match=rf"rocdl.ds.load.tr\d+.b\d+ \({name}\) exists only on gfx1250, not on gfx950"):
        compile_mlir(low.kernel.text, "gfx950", binary=False, cache=False)
    with pytest.raises(CompileError, match=rf"\({name}\) exists only on gfx1250, not on gfx1200"):
        compile_mlir(low.kernel.text, "gfx1200", binary=False, cache=False)


def test_gfx1250_transpose_read_bounds_on_the_wave32_corpus():
    # as test_convert_lds_vectors' gfx950 one: lds_path._transpose_readable rules out only dsts whose
    # transpose search gives no round trip; transpose_instructions is at most the instruction floor of
    # every round trip through the transpose-read layout, and its deferred bounds (_DeferredBounds)
    # satisfy floor <= each round trip's floor, cost <= each plan_floor cost (often reached)
    from linlayout.synth import lds_path

    seen = {True: 0, False: 0}
    gaps, checked, reached, above = [], 0, 0, 0
    for c, ctx, readable in _gfx1250_transpose_cases():
        try:
            trips = lds_path.lds_accesses(ctx, lds_path.shared_layout(ctx, transpose=True))
        except LayoutError:
            trips = []
        assert readable or not trips, c["name"]
        seen[readable] += 1
        gaps += [a.plan_floor()[1] - lds_path.transpose_instructions(ctx) for a in trips]
        if not readable:
            continue
        pool = lds_path.designs(ctx)
        (i, deferred), = [(i, d) for i, d in pool.deferred.items() if i == 1]  # the transpose-read design
        b = deferred.bounds()
        pool.every()
        for a in pool.accesses[i]:
            assert a.design.read_transpose
            assert b.floor <= a.floor() + 1e-9 and b.floor <= b.cost <= a.plan_floor()[0] + 1e-9, c["name"]
            checked += 1
            reached += abs(b.floor - a.floor()) < 1e-9
            above += b.floor < b.cost
    # counted, not pinned: the corpus has dsts of both kinds, every round trip's bounds were checked,
    # the floor bound is reached somewhere and the cost bound is above it somewhere (equal where no address op
    # is certain: 8-bit elements, cost.least_address_valu)
    assert seen[True] and seen[False]
    assert len(gaps) == checked > 0 and min(gaps) >= 0 and 0 < reached <= checked and 0 < above


def test_a_transpose_load_with_another_waves_lanes_names_the_wave():
    """A load the target has, given addresses of another wave size, says so rather than that the
    target lacks the load (gfx1250's ds_load_tr16_b128 exists, for 32 lanes)."""
    from linlayout.synth.steps.lds import missing_transpose_load
    assert missing_transpose_load("gfx1250", 16, 16, 32) == ""
    assert missing_transpose_load("gfx1250", 16, 16, 64) == (
        "ds_load_tr16_b128 of gfx1250 reads addresses of its 32-lane waves, got addresses of 64 lanes")
    assert missing_transpose_load("gfx942", 16, 8, 64) == (
        "gfx942 has no transpose load of 16-bit elements moving 8 bytes per lane; ds_read_b64_tr_b16 is gfx950's")
