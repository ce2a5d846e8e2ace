"""``linlayout convert``'s flags for what the kernel does around the conversion: ``--src-unpacked``,
``--dst-unpacked``, ``--dst-one-copy``, ``--src-global-strides``, ``--src-tuple-dwords``,
``--dst-tuple-dwords``.  Each is
``plan_conversion``'s keyword: the CLI's plan (counts, setup, certificate) is the API's with it, which
differs from the plan without it; the certificate runs on the wave emulator; a bad value is exit 2 with
one line; the emitted kernel of an unpacked side loads/stores each element alone and converts on the
wave interpreter."""

from __future__ import annotations

import json

import numpy as np
import pytest

import needs
from linlayout import LinearLayout
from linlayout.cli import main
from linlayout.lowering.emit.conversion_kernel import source_tuples
from linlayout.synth.convert import plan_conversion
from linlayout.synth.emulator import verify
from linlayout.synth.plan import CERT_FORMAT, CERT_FORMAT_UNPACKED, Plan
from linlayout.synth.src_offsets import row_major_strides
from repo_data import baseline_cases, corpus, family_corpus

BITS = {"fp8": 8, "i8": 8, "bf16": 16, "fp16": 16, "fp32": 32}
#: gfx90a fp8, 1 wave: 4 bytes per lane 16 apart; loaded one per VGPR, 4 ds_write_b8 and a read (7 packed).
SRC_BYTES = ("slice1(dotA16(kw8))->slice1(blocked[4x1,t32x2,o01])", "gfx90a", "fp8", 1)
#: gfx950 i8, 1 wave: stored one per VGPR, 3 instructions (4 packed); the src load line saves 2 of its 5 setup.
DST_BYTES = ("slice0(blocked[1x2,t2x32,o10])->slice1(mfma32T)", "gfx950", "i8", 1)
#: gfx90a fp32 mfma16->dotA16(kw2), 8 waves: the dst stored in dwordx2 tuples takes 16 ds_write2st64 (8 blind).
DST_PAIRS = ("mfma16->dotA16(kw2)", "gfx90a", "fp32", 8)
#: 16-bit pairs adjacent in memory on both sides (a form the bench kernel would pack): gfx942, 1 wave.
PAIRS = ("blocked:spt=1x2,tpw=8x8,wpc=1x1,order=1x0,shape=32x32",
         "blocked:spt=1x2,tpw=4x16,wpc=1x1,order=1x0,shape=32x32")


def _corpus_case(name: str, arch: str, dtype: str, num_warps: int) -> dict:
    (case,) = [c for c in corpus()["cases"] if (c["name"], c["arch"], c["dtype"], c["num_warps"])
               == (name, arch, dtype, num_warps)]
    return case


def _baseline_case(name: str, arch: str, dtype: str) -> dict:
    return next(c for c in baseline_cases() if (c["name"], c["arch"], c["dtype"]) == (name, arch, dtype))


def _convert(capsys, tmp_path, case: dict, *flags: str) -> tuple[dict, dict]:
    """The JSON and the certificate of ``linlayout convert`` of ``case`` with ``flags``."""
    for side in ("src", "dst"):
        (tmp_path / f"{side}.json").write_text(json.dumps(case[side]))
    cert = tmp_path / "plan.json"
    code = main(["convert", "--src", f"@{tmp_path / 'src.json'}", "--dst", f"@{tmp_path / 'dst.json'}",
                 "--arch", case["arch"], "--dtype", case["dtype"], "--plan", str(cert), "--json", *flags])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    return json.loads(out), json.loads(cert.read_text())


def _api(case: dict, **keywords) -> Plan:
    src, dst = LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])
    return plan_conversion(src, dst, case["arch"], BITS[case["dtype"]], **keywords)


def _row_major(case: dict) -> tuple[int, ...]:
    return row_major_strides([n for _, n in LinearLayout.from_json(case["src"]).out_dims])


def _source_tuples(case: dict, side: str):
    return source_tuples(LinearLayout.from_json(case[side]), BITS[case["dtype"]])


def _shape(plan: Plan) -> tuple:
    return plan.counts(), plan.overhead, plan.cost


ROW_MAJOR_SRC_TUPLES = lambda c: dict(src_tuple_dwords=_source_tuples(c, "src"))  # noqa: E731
NOTHING = lambda c: {}  # noqa: E731

# (case, flags, plan_conversion's keywords, those of the plan without the flag, the measure, its change)
CASES = [
    (_corpus_case(*SRC_BYTES), ["--src-unpacked"], lambda c: dict(src_unpacked=True), NOTHING,
     lambda p: p.counts()["total"], (7, 5)),
    (_corpus_case(*DST_BYTES), ["--dst-unpacked"], lambda c: dict(dst_unpacked=True), NOTHING,
     lambda p: p.counts()["total"], (4, 3)),
    (_corpus_case(*DST_BYTES), ["--src-global-strides", "row-major"],
     lambda c: dict(src_global_strides=_row_major(c)), NOTHING, lambda p: sum(p.overhead.values()), (5, 3)),
    (_corpus_case(*DST_BYTES), ["--src-global-strides", "1"], lambda c: dict(src_global_strides=(1,)), NOTHING,
     lambda p: sum(p.overhead.values()), (5, 3)),
    (_baseline_case("mfma32->blocked", "gfx942", "fp32"), ["--src-tuple-dwords", "1"],
     lambda c: dict(src_tuple_dwords=1), NOTHING, lambda p: p.counts()["lds_write"], (16, 8)),
    (_baseline_case("mfma32->blocked", "gfx942", "fp32"), ["--src-tuple-dwords", "bits:"],
     lambda c: dict(src_tuple_dwords=()), NOTHING, lambda p: p.counts()["lds_write"], (16, 8)),
    (_corpus_case(*DST_PAIRS), ["--src-tuple-dwords", "row-major", "--dst-tuple-dwords", "2"],
     lambda c: dict(ROW_MAJOR_SRC_TUPLES(c), dst_tuple_dwords=2), ROW_MAJOR_SRC_TUPLES,
     lambda p: p.counts()["lds_write"], (8, 16)),
    (_corpus_case(*DST_PAIRS), ["--src-tuple-dwords", "row-major", "--dst-tuple-dwords", "bits:0"],
     lambda c: dict(ROW_MAJOR_SRC_TUPLES(c), dst_tuple_dwords=(0,)), ROW_MAJOR_SRC_TUPLES,
     lambda p: p.counts()["lds_write"], (8, 16)),
]


@pytest.mark.parametrize("case,flags,keywords,without,measure,change", CASES,
                         ids=[" ".join(c[1]) + f" {c[0]['arch']} {c[0]['dtype']}" for c in CASES])
def test_each_flag_is_the_api_keyword(capsys, tmp_path, case, flags, keywords, without, measure, change):
    kw = keywords(case)
    plan = _api(case, **kw)
    assert (measure(_api(case, **without(case))), measure(plan)) == change  # the flag changes the plan
    result, cert = _convert(capsys, tmp_path, case, *flags)
    assert (result["plan_counts"], result["overhead_estimate"], result["cost"]) == _shape(plan)
    assert cert == json.loads(plan.dumps())
    assert result["verified"] and verify(Plan.from_certificate(cert)).ok
    unpacked = kw.get("src_unpacked", False), kw.get("dst_unpacked", False)
    assert (result["src_unpacked"], result["dst_unpacked"]) == unpacked
    assert cert["format"] == (CERT_FORMAT_UNPACKED if any(unpacked) else CERT_FORMAT)
    assert [k for k in ("src_unpacked", "dst_unpacked") if cert.get(k)] == [k for k, on in zip(
        ("src_unpacked", "dst_unpacked"), unpacked) if on]
    assert result["src_global_strides"] == (list(kw["src_global_strides"]) if "src_global_strides" in kw else None)


def test_the_json_names_the_tuples_planned_for(capsys, tmp_path):
    case = _corpus_case(*DST_PAIRS)
    default, _ = _convert(capsys, tmp_path, case)
    assert (default["src_tuples"], default["dst_tuples"]) == ({"bits": [0, 1], "alone": 0}, {"bits": [], "alone": 0})
    assert (default["src_unpacked"], default["dst_unpacked"], default["src_global_strides"]) == (False, False, None)
    given, _ = _convert(capsys, tmp_path, case, "--src-tuple-dwords", "row-major", "--dst-tuple-dwords", "row-major")
    for side in ("src", "dst"):
        tuples = _source_tuples(case, side)
        assert given[f"{side}_tuples"] == {"bits": list(tuples.bits), "alone": tuples.alone}


def test_row_major_tuples_of_an_unpacked_side_are_single_dwords(capsys, tmp_path):
    case = _corpus_case(*SRC_BYTES)
    result, cert = _convert(capsys, tmp_path, case, "--src-unpacked", "--src-tuple-dwords", "row-major",
                            "--src-global-strides", "row-major")
    plan = _api(case, src_unpacked=True, src_tuple_dwords=1, src_global_strides=_row_major(case))
    assert cert == json.loads(plan.dumps()) and result["overhead_estimate"] == plan.overhead
    assert result["src_tuples"] == {"bits": [], "alone": 0}


def test_row_major_tuples_of_unpacked_sides_of_wide_rows_are_single_dwords(capsys, tmp_path):
    from linlayout.spec import parse_layout

    src, dst = (f"blocked:spt=1x{n},tpw={t},wpc=1x1,order=1x0,shape=32x64" for n, t in ((8, "8x8"), (4, "4x16")))
    case = {"src": parse_layout(src).to_json(), "dst": parse_layout(dst).to_json(), "arch": "gfx942", "dtype": "fp16"}
    # (packed, the sides' row-major tuples: the 8 halves in a row of a lane 4 dwords, its 4 halves 2 dwords)
    assert [_source_tuples(case, side).bits for side in ("src", "dst")] == [(0, 1), (0,)]
    result, cert = _convert(capsys, tmp_path, case, "--src-unpacked", "--dst-unpacked", "--src-tuple-dwords",
                            "row-major", "--dst-tuple-dwords", "row-major")
    assert result["src_tuples"] == result["dst_tuples"] == {"bits": [], "alone": 0}
    plan = _api(case, src_unpacked=True, dst_unpacked=True, src_tuple_dwords=1, dst_tuple_dwords=1)
    assert cert == json.loads(plan.dumps())


def test_the_text_output_says_what_the_plan_was_made_for(capsys):
    src, dst = PAIRS
    code = main(["convert", "--src", src, "--dst", dst, "--arch", "gfx942", "--dtype", "fp16", "--src-unpacked",
                 "--src-global-strides", "row-major"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    assert ("planned for the kernel: src held one element per VGPR; src loaded with element strides [32, 1]; "
            "src tuples of dword bits [0, 1]; dst tuples of dword bits []") in out.splitlines()
    assert main(["convert", "--src", src, "--dst", dst, "--arch", "gfx942", "--dtype", "fp16"]) == 0
    assert "planned for the kernel" not in capsys.readouterr()[0]
    assert main(["convert", "--src", src, "--dst", dst, "--arch", "gfx942", "--dtype", "fp16",
                 "--src-tuple-dwords", "bits:"]) == 0
    assert "planned for the kernel: src tuples of dword bits []; dst tuples of dword bits []" in capsys.readouterr()[0]


@pytest.mark.parametrize("flags,message", [
    (["--src-global-strides", "1.5,2"], "argument --src-global-strides: '1.5,2' must be row-major or element strides"),
    (["--src-global-strides", "0,1"], "argument --src-global-strides: '0,1' must be row-major or element strides"),
    (["--src-global-strides", "32,1,1"], "--src-global-strides 32,1,1: 3 stride(s) for the src's 2 out dims "
                                          "['dim0', 'dim1']; give one per out dim, in that order"),
    (["--src-global-strides", "1000000000,1"], "the tile's last byte offset 62000000062 is not below 2147483648"),
    (["--src-tuple-dwords", "3"], "argument --src-tuple-dwords: '3' must be row-major, 1, 2 or 4, or bits:B[,B]"),
    (["--dst-tuple-dwords", "bits:0,0"], "argument --dst-tuple-dwords: 'bits:0,0' must be row-major, 1, 2 or 4"),
    (["--dst-tuple-dwords", "bits:0,1,2"], "argument --dst-tuple-dwords: 'bits:0,1,2' must be row-major, 1, 2 or 4"),
    (["--src-tuple-dwords", "pairs"], "argument --src-tuple-dwords: 'pairs' must be row-major, 1, 2 or 4"),
    (["--src-tuple-dwords", "bits:5"], "--src-tuple-dwords [5]: the side's 8 dword(s) have index bits below 3"),
    (["--dst-tuple-dwords", "bits:0,9"], "--dst-tuple-dwords [0, 9]: the side's 8 dword(s) have index bits below 3"),
    (["--src-unpacked", "--src-tuple-dwords", "bits:4"],  # (one element per VGPR: 16 dwords)
     "--src-tuple-dwords [4]: the side's 16 dword(s) have index bits below 4"),
    (["--src-global-strides", "row-major", "--arch", "sm_90"],
     "--src-global-strides is an AMD kernel input; sm_90's plans price no load line's address registers and no "
     "VGPR tuples"),
    (["--src-tuple-dwords", "4", "--arch", "sm_80"], "--src-tuple-dwords is an AMD kernel input; sm_80's plans"),
    (["--dst-tuple-dwords", "row-major", "--arch", "sm_90"], "--dst-tuple-dwords is an AMD kernel input; sm_90's"),
    (["--src-unpacked", "--dtype", "fp32"], "a src held one element per VGPR needs 8- or 16-bit elements"),
    (["--dst-unpacked", "--dtype", "fp32"], "a dst held one element per VGPR needs 8- or 16-bit elements"),
    (["--src-unpacked", "--arch", "sm_90"],
     "--src-unpacked: held one element per VGPR is an AMD kernel form; sm_90 has no emitter for it"),
    (["--dst-unpacked", "--arch", "sm_80", "--emit", "cuda", "-o", "{tmp}/k.cu"],
     "--dst-unpacked: held one element per VGPR is an AMD kernel form; sm_80 has no emitter for it"),
    (["--src-unpacked", "--emit", "hip", "-o", "{tmp}/k.hip"],
     "--emit hip with --src-unpacked: the C++ function takes the src and returns the dst as packed registers"),
    (["--dst-unpacked", "--emit", "hip", "-o", "{tmp}/k.hip"], "--emit hip with --dst-unpacked: the C++ function"),
    (["--dst-one-copy", "--arch", "sm_90"],
     "--dst-one-copy: a dst stored from its canonical lanes is an AMD kernel form; sm_90 has no emitter for it"),
    (["--dst-one-copy", "--emit", "cuda", "-o", "{tmp}/k.cu"],
     "--emit cuda with --dst-one-copy: the C++ function takes the src and returns the dst as packed registers in "
     "every lane; a dst stored from its canonical lanes alone is the MLIR kernel's load/store form"),
])
def test_bad_values_are_one_line_exit_2(capsys, tmp_path, flags, message):
    src, dst = PAIRS
    flags = [f.format(tmp=tmp_path) for f in flags]
    args = {"--arch": "gfx942", "--dtype": "fp16"}
    for k in args:
        if k in flags:
            i = flags.index(k)
            args[k] = flags.pop(i + 1)
            flags.pop(i)
    code = main(["convert", "--src", src, "--dst", dst, *[x for kv in args.items() for x in kv], *flags])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.startswith("linlayout: error: ") and err.count("\n") == 1 and message in err
    assert list(tmp_path.iterdir()) == []  # refused before writing anything


@needs.mlir
def test_an_unpacked_src_kernel_loads_each_byte_alone(capsys, tmp_path):
    case = _corpus_case(*SRC_BYTES)
    out = tmp_path / "k.s"
    result, cert = _convert(capsys, tmp_path, case, "--src-unpacked", "--emit", "isa", "-o", str(out))
    assert result["plan_isa_differences"] == {} and result["isa_counts"]["total"] == 5
    isa = out.read_text()
    assert isa.count("buffer_load_ubyte") == 4 and "buffer_load_dword" not in isa
    assert cert["src_unpacked"] is True


@needs.mlir
@pytest.mark.parametrize("flags", [["--src-unpacked"], ["--dst-unpacked"], ["--src-unpacked", "--dst-unpacked"]])
def test_the_emitted_kernel_of_an_unpacked_side_converts_on_the_interpreter(capsys, tmp_path, flags):
    """Pairs of halves adjacent in memory, which a packed kernel moves as dwords: the kernel of an unpacked
    side moves each half alone (16 loads / stores of 16 bits, 8 of a packed side), and converts."""
    from linlayout.lowering.conversion import lower_conversion
    from linlayout.lowering.emit.host import distinct_tile, expected_output, interpret
    from linlayout.spec import parse_layout

    src, dst = PAIRS
    case = {"src": parse_layout(src).to_json(), "dst": parse_layout(dst).to_json(), "arch": "gfx942", "dtype": "fp16"}
    mlir = tmp_path / "k.mlir"
    result, cert = _convert(capsys, tmp_path, case, *flags, "--emit", "mlir", "-o", str(mlir))
    plan = Plan.from_certificate(cert)
    assert (plan.src_unpacked, plan.dst_unpacked) == ("--src-unpacked" in flags, "--dst-unpacked" in flags)
    assert verify(plan).ok
    plan.verified = True
    kernel = lower_conversion(plan, compile=False).kernel
    text = mlir.read_text()
    assert kernel.text == text and result["kernel"] == kernel.name
    assert text.count("rocdl.raw.ptr.buffer.load") == (16 if plan.src_unpacked else 8)
    assert text.count("rocdl.raw.ptr.buffer.store") == (16 if plan.dst_unpacked else 8)
    for seed in (1, 2):
        tile = distinct_tile(kernel.shape, 16, seed=seed)
        assert np.array_equal(interpret(kernel, tile, fill=0x5A), expected_output(plan, tile, fill=0x5A))


#: wave32 gfx1100 fp16, 2 waves: each dst element in lanes l and l ^ 16; read in one copy, the v_perm_b32
#: selectors are constants in lanes 0-15 (tests/test_one_copy.py's case).
ONE_COPY = ("wmma1.16x16T->dotAwmma1.16x16T(kw8)", "gfx1100", "fp16", 2)


@needs.mlir
def test_a_dst_read_in_one_copy_is_the_apis_plan_and_the_kernel_masks_its_stores(capsys, tmp_path):
    from linlayout.lowering.beyond_identity import store_mask_salu

    (case,) = [c for c in family_corpus("wave32")["cases"]
               if (c["name"], c["arch"], c["dtype"], c["num_warps"]) == ONE_COPY]
    src, dst = LinearLayout.from_json(case["src"]), LinearLayout.from_json(case["dst"])
    api = plan_conversion(src, dst, "gfx1100", 16, dst_one_copy=True)
    out = tmp_path / "k.s"
    result, cert = _convert(capsys, tmp_path, case, "--dst-one-copy", "--emit", "isa", "-o", str(out))
    assert result["dst_one_copy"] is True and cert["format"] == "linlayout-plan/v1-one-copy"
    assert cert == json.loads(api.dumps())
    assert result["overhead_estimate"]["salu_one_copy_store"] == 3 and verify(Plan.from_certificate(cert)).ok
    assert store_mask_salu(out.read_text()) == 3 and result["isa_counts"]["total"] == 48
    every, _ = _convert(capsys, tmp_path, case)
    assert every["dst_one_copy"] is False and every["total_with_overhead"] == result["total_with_overhead"] == 54
    assert every["cost"] > result["cost"]
