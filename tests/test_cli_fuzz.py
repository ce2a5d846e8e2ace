"""Every command answers every input: random and malformed arguments for every ``linlayout``
subcommand and every kernel entry (``linlayout kernel NAME``), run in-process through
``linlayout.cli.main``.

Each call must exit 0, 1 or 2 within :data:`SECONDS` (an alarm stops a hang); exit 2 prints
exactly one line on stderr and nothing on stdout; nothing prints a traceback; with ``--json``
exit 0 or 1 prints one JSON object.  The kernels are only given argument lists that are bad
somewhere (or ``--launch`` on this GPU-less machine), so every kernel call must exit 2 before
compiling anything.  Examples are derandomized (the same on every run) and few, so the file
runs in a few tens of seconds.

Tile sizes stay small here: oversized shapes (resource limits) are checked elsewhere.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import signal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linlayout.cli import main
from repo_data import TRITON_BASELINE

#: Wall-clock bound of one call, in seconds (a plan or a picture takes well under one).
SECONDS = 20

TINY = '{"in_dims": [["register", 2], ["lane", 4]], "out_dims": [["dim0", 8]], ' \
       '"bases": {"register": [[1]], "lane": [[2], [4]]}}'
LAYOUTS = [
    "mfma:32x32x8,warps=1x1,shape=32x32", "mfma.a:32x32x8,warps=1x1,shape=32x32,kwidth=8",
    "mfma:16x16x16,warps=2x2,shape=32x32", "blocked:spt=1x8,tpw=8x8,wpc=1x1,order=1x0,shape=32x64",
    "swizzled:vec=1,phase=1,maxphase=1,order=1x0,shape=32x64", "(8,64):(1,64)", "(64):(1)", "8:1", TINY,
]
BAD_LAYOUTS = [
    "", " ", "{", "[]", "{}", '{"in_dims": 1}', '{"in_dims": [["lane", 3]], "out_dims": [], "bases": {}}',
    "mfma:", "mfma:33x33x8,warps=1x1,shape=32x32", "mfma:32x32x8,warps=0x1,shape=32x32",
    "mfma:32x32x8,warps=1x1,shape=0x32", "blocked:spt=0x8", "(8,64):(1", "(8,64):(1,64,2)", "@/nonexistent",
    "@", "cute:", "triton:{", "λ", "1e9", "-1", "mfma:32x32x8,warps=1x1,shape=-32x32",
]
ARCHES = ["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx9000", "", "GFX942", "sm_90"]
DTYPES = ["fp16", "f16", "bf16", "fp8", "f32", "fp32", "i8", "fp4", "fp17", "", "F16", "int"]
INTS = ["0", "1", "-1", "64", "4096", "x", "", "1.5", "0x10", "99999999999999999999"]
PATHS = ["/nonexistent/dir/file", "", "/"]
WORDS = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12)


def _value(pool):
    return st.one_of(st.sampled_from(pool), WORDS)


def _flags(table: dict) -> st.SearchStrategy:
    """Lists of ``[flag, value...]`` groups drawn from ``table`` (flag -> value strategy or None)."""
    groups = [st.tuples(st.just(flag)) if values is None else st.tuples(st.just(flag), values)
              for flag, values in table.items()]
    return st.lists(st.one_of(groups), max_size=6).map(lambda gs: [t for g in gs for t in g])


def _mutated(groups, extra=()) -> st.SearchStrategy:
    """An argument list from ``groups`` of ``(flag, good values, bad values)`` (``None`` values: a
    flag without a value; flag ``""``: a positional, kept in its place): each group most often
    good, else bad or left out, the flags in random order, and now and then one ``extra`` group
    or a random word.  Mostly well-formed calls with one thing wrong, so the checks after
    parsing are reached too."""
    def as_args(flag, value):
        return [value] if flag == "" else [flag] if value is None else [flag, value]

    def one(group):
        flag, good, bad = group
        how = st.sampled_from(["good"] * 6 + ["bad", "omit"])
        return how.flatmap(lambda h: st.just([]) if h == "omit" else (good if h == "good" else bad).map(
            lambda v: as_args(flag, v)))
    positional = st.tuples(*[one(g) for g in groups if g[0] == ""])
    flags = st.tuples(*[one(g) for g in groups if g[0] != ""]).flatmap(lambda ps: st.permutations(ps))
    more = st.one_of(WORDS.map(lambda w: [w]), *[one((f, g, g)) for f, g in extra])
    sometimes = st.sampled_from([False, False, False, True]).flatmap(lambda m: more.map(lambda x: [x]) if m else
                                                                      st.just([]))
    return st.tuples(positional, flags, sometimes).map(lambda t: [x for g in [*t[0], *t[1], *t[2]] for x in g])


def _paths(tmp) -> st.SearchStrategy:
    return st.sampled_from(PATHS + [str(tmp / "out.png"), str(tmp / "out.svg"), str(tmp / "out.txt")])


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout(f"a call took more than {SECONDS} s")


def call(argv: list[str]) -> tuple[int, str, str]:
    """``linlayout ARGV`` in-process: (exit status, stdout, stderr), checked against the contract."""
    out, err = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(SECONDS)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as e:  # --help
                code = e.code
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    o, e = out.getvalue(), err.getvalue()
    assert code in (0, 1, 2), (argv, code, e)
    assert "Traceback" not in e and "Traceback" not in o, (argv, e)
    if code == 2:
        assert o == "" and len(e.splitlines()) == 1 and e.strip(), (argv, o, e)
    elif "--json" in argv and not {"-h", "--help"} & set(argv):
        assert isinstance(json.loads(o), dict), (argv, o)
    return code, o, e


def _with_json(argv_strategy):
    """``--json`` before the command, after it, or not at all."""
    return st.tuples(st.sampled_from(["before", "after", "none"]), argv_strategy).map(
        lambda p: (["--json"] + p[1]) if p[0] == "before" else (p[1] + ["--json"]) if p[0] == "after" else p[1])


FUZZ = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


NONE = st.just(None)
GOOD_LAYOUT, BAD_LAYOUT = st.sampled_from(LAYOUTS), _value(BAD_LAYOUTS)
SAME_SHAPE = st.sampled_from(["mfma:32x32x8,warps=1x1,shape=32x32", "mfma:32x32x8,warps=1x1,shape=32x32,transposed"])


@FUZZ
@given(data=st.data())
def test_show(tmp, data):
    argv = data.draw(_with_json(_mutated([
        ("", GOOD_LAYOUT, BAD_LAYOUT), ("--limit", st.sampled_from(["0", "3", "40"]), _value(INTS)),
        ("--png", st.just(str(tmp / "s.png")), _paths(tmp)), ("--svg", st.just(str(tmp / "s.svg")), _paths(tmp)),
    ]).map(lambda a: ["show"] + a)))
    call(argv)


@FUZZ
@given(data=st.data())
def test_verify(data):
    argv = data.draw(_with_json(_mutated([
        ("", SAME_SHAPE, BAD_LAYOUT), ("", SAME_SHAPE, BAD_LAYOUT),
    ], extra=[("--flatten", NONE), ("--rename", _value(["dim0=dim1", "lane=register", "x", "=", "a="]))]).map(
        lambda a: ["verify"] + a)))
    call(argv)


TRITON = [
    '{"encoding": "blocked", "shape": [32, 32], "sizePerThread": [1, 4], "threadsPerWarp": [8, 8], '
    '"warpsPerCTA": [4, 1], "order": [1, 0]}',
    '{"encoding": "amd_mfma", "shape": [32, 32], "version": 3, "warpsPerCTA": [1, 1], "instrShape": [32, 32, 8]}',
]
BAD_TRITON = ['{"encoding": "blocked"}', '{"encoding": "nope", "shape": [4]}', '{"encoding": "blocked", "shape": [3, 5]}',
              '[]', '"x"', "{", "@/nonexistent", '{"encoding": "amd_mfma", "shape": [32, 32], "version": 9}',
              '{"encoding": "amd_mfma", "shape": [32, 32], "version": 3, "warpsPerCTA": [1, 1], "instrShape": [7, 7]}']


@FUZZ
@given(data=st.data())
def test_layout(data):
    argv = data.draw(_with_json(_mutated([("--triton", st.sampled_from(TRITON), _value(BAD_TRITON))]).map(
        lambda a: ["layout"] + a)))
    call(argv)


@FUZZ
@given(data=st.data())
def test_mfma(data):
    instr = ["v_mfma_f32_32x32x8_f16", "v_mfma_f32_16x16x32_f16", "v_mfma_scale_f32_16x16x128_f8f6f4",
             "v_wmma_f32_16x16x16_f16"]
    argv = data.draw(_with_json(_mutated([
        ("", st.sampled_from(["gfx942", "gfx950", "gfx90a", "gfx1100"]), _value(ARCHES)),
        ("", st.sampled_from(instr), _value(["v_mfma_bogus", "32x32x8", ""])),
    ], extra=[("--list", NONE), ("--a-format", _value(["fp4", "fp8", "x"])), ("--b-format", _value(["bf6", "fp8"]))]).map(
        lambda a: ["mfma"] + a)))
    call(argv)


ACCESS = ['{"in_dims": [["lane", 64]], "out_dims": [["offset", 4096]], "bases": {"lane": '
          '[[64], [128], [256], [512], [1024], [2048]]}}', "(8,64):(1,64)", "(64):(1)", "(4,64):(1,4)"]
OPS = ["ds_read_b32", "ds_read_b64", "ds_read_b128", "ds_write_b32", "ds_write_b128", "ds_read_b64_tr_b16"]
GOOD_ARCH = st.sampled_from(["gfx90a", "gfx942", "gfx950"])
GOOD_DTYPE = st.sampled_from(["fp16", "f16", "bf16", "fp8", "f32", "fp32"])
SHARED = ["swizzled:vec=1,phase=1,maxphase=1,order=1x0,shape=32x64", "swizzled:vec=4,phase=1,maxphase=8,order=1x0,shape=32x64"]
REGS = ["mfma.a:32x32x8,warps=1x1,shape=32x64,kwidth=4", "blocked:spt=1x8,tpw=8x8,wpc=1x1,order=1x0,shape=32x64"]


@FUZZ
@given(data=st.data())
def test_banks(tmp, data):
    mode = data.draw(st.sampled_from(["instruction", "tile", "synthesis", "model"]))
    groups = [("--arch", GOOD_ARCH, _value(ARCHES))]
    pictures = [("--png", st.just(str(tmp / "h.png")), _paths(tmp)), ("--svg", st.just(str(tmp / "h.svg")), _paths(tmp))]
    if mode == "instruction":
        groups += [("--op", st.sampled_from(OPS), _value(["ds_bogus", ""])),
                   ("--access", st.sampled_from(ACCESS), BAD_LAYOUT),
                   ("--element-bytes", st.sampled_from(["1", "2", "4"]), _value(INTS)),
                   ("--padding", st.sampled_from(["64:2", "64:+4"]), _value(["x", "64", "0:1", "-1:2"])),
                   ("--method", st.sampled_from(["auto", "linear", "enumerate"]), _value(["x"]))] + pictures
    elif mode == "tile":
        groups += [("--shared", st.sampled_from(SHARED), BAD_LAYOUT), ("--reg", st.sampled_from(REGS), BAD_LAYOUT),
                   ("--dtype", GOOD_DTYPE, _value(DTYPES)),
                   ("--direction", st.sampled_from(["read", "write"]), _value(["x"]))] + pictures
    elif mode == "synthesis":
        groups += [("--writer", st.sampled_from(REGS[1:]), BAD_LAYOUT), ("--reader", st.sampled_from(REGS[:1]), BAD_LAYOUT),
                   ("--dtype", GOOD_DTYPE, _value(DTYPES)), ("--lds-budget", st.sampled_from(["2048", "65536"]),
                                                               _value(INTS)),
                   ("--padding-options", NONE, NONE), ("--no-transpose", NONE, NONE)]
    else:
        groups = [("--model", NONE, NONE), ("--arch", GOOD_ARCH, _value(ARCHES)),
                  ("--assume", st.sampled_from(["b32_phases_gfx950=64"]), _value(["x=1", "=", "a=b"]))]
    argv = data.draw(_with_json(_mutated(groups).map(lambda a: ["banks"] + a)))
    call(argv)


PAIRS = [("mfma:32x32x8,warps=1x1,shape=32x32", "mfma.a:32x32x8,warps=1x1,shape=32x32,kwidth=8"),
         ("blocked:spt=1x8,tpw=8x8,wpc=1x1,order=1x0,shape=32x64", "mfma.a:32x32x8,warps=1x1,shape=32x64,kwidth=4"),
         ("mfma:16x16x16,warps=2x2,shape=32x32", "mfma:16x16x16,warps=2x2,shape=32x32,transposed")]


@FUZZ
@given(data=st.data())
def test_convert(tmp, data):
    src, dst = data.draw(st.sampled_from(PAIRS))
    argv = data.draw(_with_json(_mutated([
        ("--src", st.just(src), BAD_LAYOUT), ("--dst", st.just(dst), _value(BAD_LAYOUTS + LAYOUTS)),
        ("--arch", GOOD_ARCH, _value(ARCHES)), ("--dtype", GOOD_DTYPE, _value(DTYPES)),
        ("--plan", st.just(str(tmp / "plan.json")), _paths(tmp)),
        ("--lds-budget", st.sampled_from(["65536", "4096"]), _value(INTS)),
        ("--strategy", st.sampled_from(["auto", "registers", "lds"]), _value(["x"])),
    ], extra=[("--emit", _value(["mlir", "isa", "x"])), ("-o", _paths(tmp))]).map(lambda a: ["convert"] + a)))
    call(argv)


@settings(FUZZ, max_examples=12)
@given(data=st.data())
def test_bench(tmp, data):
    bad = tmp / "bad.json"
    bad.write_text('{"cases": [{"name": 1}]}')
    argv = data.draw(_with_json(st.tuples(st.sampled_from([[], ["conversions"], ["nope"]]), _flags({
        "--baseline": _value(PATHS + [str(bad)]), "--arch": _value(ARCHES), "--isa-only": None}),
        _value(["0", "-1", "x"])).map(lambda t: ["bench"] + t[0] + t[1] + ["--cases", t[2]])))
    assert call(argv)[0] == 2  # (never a whole benchmark run)


KERNEL_FLAGS = {"--arch": _value(ARCHES), "--interpret": None, "--seed": _value(INTS), "--dtype": _value(DTYPES),
                "--m": _value(INTS), "--n": _value(INTS), "--k": _value(INTS), "--warps": _value(["2x2", "0x1", "x"]),
                "--src": _value(LAYOUTS), "--direction": _value(["fp8-to-f16", "x"]), "--emit": st.sampled_from(PATHS)}
KERNEL_BAD = [["--arch", "gfx9000"], ["--dtype", "fp17"], ["--m", "x"], ["--bogus"], ["--launch"], ["--seed", "1.5"],
              ["--dtype", "i8"], ["--arch"]]


@settings(FUZZ, max_examples=30)
@given(data=st.data())
def test_kernel_entries_refuse_bad_input_before_work(data):
    """Every kernel, each argument list bad somewhere (or --launch without a GPU): exit 2, one line."""
    name = data.draw(st.sampled_from(["gemm", "attention", "convert", "fp8_fp16"]))
    flags = data.draw(_flags(KERNEL_FLAGS))
    bad = data.draw(st.sampled_from(KERNEL_BAD))
    where = data.draw(st.integers(0, len(flags)))
    argv = data.draw(_with_json(st.just(["kernel", name] + flags[:where] + bad + flags[where:])))
    code, _, err = call(argv)
    assert code == 2, (argv, err)


@settings(FUZZ, max_examples=30)
@given(argv=st.lists(st.one_of(st.sampled_from(["--json", "-h", "show", "kernel", "bench", "x", "--"]), WORDS),
                     max_size=4))
def test_any_words(argv):
    if {"demo", "bench"} & set(argv):
        return  # a full demo or benchmark run is not fuzzing
    call(argv)


def test_bench_family_corpus_refuses_a_baseline_it_would_ignore(tmp):
    """--corpus nvidia|wave32 runs that corpus alone: a --baseline beside it is an error, not ignored."""
    for family in ("nvidia", "wave32"):
        code, _, err = call(["bench", "conversions", "--corpus", family, "--baseline", str(tmp / "none.json"),
                             "--cases", "1", "--isa-only"])
        assert code == 2 and "--baseline" in err, (family, err)


def test_convert_help_names_nvidia_and_the_cpp_emitters():
    """convert plans for NVIDIA targets too and writes CUDA/HIP: its --help says so."""
    code, out, _ = call(["convert", "--help"])
    assert code == 0 and "one AMD target" not in out and "NVIDIA" in out and "cuda|hip" in out, out


@pytest.mark.parametrize("arch, src, dst, dialect", [
    ("sm_90", "blocked:spt=1x4,tpw=4x8,wpc=1x1,order=1x0,shape=16x32",
     "blocked:spt=4x1,tpw=8x4,wpc=1x1,order=0x1,shape=16x32", "cuda"),
])
def test_convert_emit_kernel_on_a_target_without_one_names_the_cpp_emit(tmp, arch, src, dst, dialect):
    """--emit mlir|isa|fatbin for a target without a kernel emitter: exit 2, one line naming --emit cuda|hip."""
    for emit in ("mlir", "isa", "fatbin"):
        code, _, err = call(["convert", "--src", src, "--dst", dst, "--arch", arch, "--dtype", "f16",
                             "--emit", emit, "-o", str(tmp / "k.out")])
        assert code == 2 and f"no kernel emitter for {arch}" in err and f"--emit {dialect}" in err, err


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1200", "gfx1250"])
def test_convert_emits_a_wave32_mlir_kernel(tmp, arch):
    """--emit mlir for a wave32 AMD target writes a kernel of 32-lane waves."""
    out = tmp / f"k_{arch}.mlir"
    code, _, err = call(["convert", "--src", "wmma:16x16x16,v=2,warps=2x2,shape=32x32",
                         "--dst", "wmma.a:16x16x16,v=2,warps=2x2,kwidth=8,shape=32x32", "--arch", arch,
                         "--dtype", "f16", "--emit", "mlir", "-o", str(out)])
    text = out.read_text()
    consts = dict(re.findall(r"(%c\d+) = arith.constant (-?\d+) : i32", text))
    lane = re.search(r"= arith.andi %cv\d+, (%c\d+) : i32", text)  # lane = thread id & (wave size - 1)
    warp = re.search(r"= arith.shrui %cv\d+, (%c\d+) : i32", text)  # warp = thread id >> log2(wave size)
    assert code == 0 and "gpu.func @convert_layout" in text, err
    assert (consts[lane.group(1)], consts[warp.group(1)]) == ("31", "5")


def test_bench_plan_counted_corpus_does_not_call_plan_time_compile_time():
    """--corpus nvidia compiles no kernel: its summary's time line says plan time, not layouts -> code object."""
    code, out, _ = call(["bench", "conversions", "--corpus", "nvidia", "--cases", "1", "--isa-only"])
    assert code == 0 and "plan time per case (layouts -> plan; no kernel compiled)" in out, out
    assert "code object" not in out, out


def test_bench_plan_counted_corpus_claims_no_plan_isa_check():
    """--corpus nvidia compiles no kernel (NVIDIA targets have no kernel emitter), so no plan/ISA comparison
    ran: the summary says the counts are the plan's instead of printing a count of disagreements."""
    argv = ["bench", "conversions", "--corpus", "nvidia", "--cases", "1", "--isa-only"]
    code, out, _ = call(argv + ["--json"])
    assert code == 0 and [r["counted_by"] for r in json.loads(out)["cases"]] == ["plan"], out
    code, out, _ = call(argv)
    assert code == 0 and "counts are the plan's (no kernel compiled, so no plan/ISA check)" in out, out
    assert "plan/ISA disagreements" not in out, out


@pytest.mark.parametrize("dtype, bits", [("fp4", 4), ("fp6", 6), ("iu4", 4)])
@pytest.mark.parametrize("emit", [None, "cuda", "hip", "mlir"])
def test_convert_sub_byte_dtype_names_the_dtype_and_the_element_sizes(tmp, dtype, bits, emit):
    """A sub-byte --dtype is one line naming the dtype and the element sizes conversions move (the planner's
    own message spoke of element_bits, a name the command line does not have), whatever --emit asks."""
    argv = ["convert", "--src", LAYOUTS[3], "--dst", LAYOUTS[3], "--arch", "gfx942", "--dtype", dtype]
    code, out, err = call(argv + (["--emit", emit, "-o", str(tmp / "k.out")] if emit else []))
    assert code == 2 and out == "" and err.startswith(f"linlayout: error: --dtype {dtype} has {bits}-bit elements; "
                                                      "conversions move elements of 8, 16, 32 or 64 bits"), err


def test_top_level_help_names_the_nvidia_targets():
    """linlayout --help: the program, mfma, banks and bench serve NVIDIA targets too, and the help says so."""
    code, out, _ = call(["--help"])
    assert code == 0 and "for AMD and NVIDIA GPU kernels" in out and "NVIDIA mma" in out, out
    assert "shared-memory bank conflicts" in out and "Triton's AMD and NVIDIA backends" in out, out


def test_bench_help_says_emitterless_targets_are_counted_from_the_plan():
    code, out, _ = call(["bench", "conversions", "--help"])
    assert code == 0 and 'counted_by: "plan"' in out, out


def test_unknown_command_and_kernel_are_one_line():
    assert call(["nope"])[0] == 2
    assert call(["kernel", "nope"])[0] == 2
    assert call(["--json", "kernel", "gemm", "--m", "0"])[0] == 2


@pytest.mark.parametrize("outputs, message", [
    (["--plan", "{tmp}/plan.json", "--emit", "mlir", "-o", "{tmp}/no/k.mlir"],
     "cannot write the --emit mlir output to '{tmp}/no/k.mlir': no folder '{tmp}/no'"),
    (["--plan", "{tmp}/no/plan.json"], "cannot write the plan certificate to '{tmp}/no/plan.json': no folder '{tmp}/no'"),
    (["--plan", "{tmp}"], "cannot write the plan certificate to '{tmp}': it is a folder"),
    (["--plan", ""], "cannot write the plan certificate to '': an empty path"),
    (["--plan", "{tmp}/x.json", "--emit", "mlir", "-o", "{tmp}/x.json"],
     "--plan and -o name one file '{tmp}/x.json'; the --emit output would overwrite the certificate"),
])
def test_convert_bad_output_path_writes_nothing(tmp_path, outputs, message):
    """A bad --plan or -o path is refused before planning: one line, exit 2, and no file written (the
    certificate was written before an -o in a missing folder failed)."""
    argv = ["convert", "--src", PAIRS[0][0], "--dst", PAIRS[0][1], "--arch", "gfx942", "--dtype", "f16"]
    code, out, err = call(argv + [a.format(tmp=tmp_path) for a in outputs])
    assert (code, out, err) == (2, "", f"linlayout: error: {message.format(tmp=tmp_path)}\n")
    assert list(tmp_path.iterdir()) == []


def test_bench_with_every_case_refused_says_none_was_timed(tmp_path):
    """A baseline whose cases are all refused (here: an unknown arch) is a run with no compile time: the
    summary says so (it printed "median None s, max None s")."""
    baseline = json.loads(TRITON_BASELINE.read_text())
    case = {**baseline["cases"][0], "arch": "gfx9999"}
    path = tmp_path / "refused.json"
    path.write_text(json.dumps({**baseline, "cases": [case]}))
    code, out, _ = call(["bench", "conversions", "--baseline", str(path), "--isa-only"])
    assert code == 0 and "not planned (refused by the planner): 1" in out, out
    assert "compile time per kernel (layouts -> code object): none (no case planned) (Triton: 0.3-0.5 s)" in out, out


@pytest.mark.parametrize("outside", [5, {"load": "x", "store": 1}, {"load": 1}, {}, {"load": 1, "store": -1},
                                     {"load": 1, "store": 2, "other": 0}, {"load": True, "store": 0}, [1, 2]])
def test_bench_refuses_a_malformed_triton_outside_valu(tmp_path, outside):
    """``triton_outside_valu`` is ``{"load": n, "store": n}`` with ints n >= 0 or null: anything else is one
    line naming the case, exit 2 (an int was an AttributeError traceback, a string a ValueError one, a
    missing side read as 0 and ``{}`` counted as measured)."""
    baseline = json.loads(TRITON_BASELINE.read_text())
    case = {**baseline["cases"][0], "triton_outside_valu": outside}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**baseline, "cases": [case]}))
    code, out, err = call(["bench", "conversions", "--baseline", str(path), "--isa-only"])
    assert (code, out) == (2, ""), err
    assert re.fullmatch(rf"linlayout: error: baseline case 0 \({re.escape(case['name'])} {case['arch']} "
                        rf"{case['dtype']}\): triton_outside_valu must be [^\n]+, got [^\n]+\n", err), err
