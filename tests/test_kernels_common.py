"""linlayout.kernels.common: the bank report takes the worst variant, tensors survive the trip to the
interpreter's raw buffers, the GPU path says why it cannot run, the CLI contract keys."""

from __future__ import annotations

import ctypes
import os
import re

import numpy as np
import pytest

import needs

needs.require("torch", "flydsl")

import torch  # noqa: E402
from linlayout.kernels import common  # noqa: E402
from tests.kernels_helpers import run_cli  # noqa: E402


def test_lds_instruction_reports_worst_variant_and_warp():
    lanes = np.arange(64)
    free = lanes  # one dword per lane, consecutive: conflict-free ds_read_b32
    strided = lanes * 32  # every lane of a phase in the same bank (32-dword stride)
    ins = common.LdsInstruction("x", "ds_read_b32", 32, 1, np.stack([free[None], strided[None]]))
    rep = ins.analyse("gfx942")
    assert rep["ideal"] < rep["cycles"] and not rep["conflict_free"]
    ok = common.LdsInstruction("y", "ds_read_b32", 32, 1, np.stack([free[None], (free + 64)[None]]))
    rep = ok.analyse("gfx942")
    assert rep["cycles"] == rep["ideal"] and rep["conflict_free"]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float8_e4m3fnuz, torch.float8_e4m3fn,
                                   torch.float32, torch.int16])
def test_raw_buffers_round_trip(dtype):
    x = (torch.randn(5, 7) * 3).to(dtype)
    back = common.numpy_to_torch(common.torch_to_numpy(x), x)
    assert back.dtype == x.dtype and torch.equal(back.view(torch.uint8) if back.element_size() == 1 else back, 
                                                 x.view(torch.uint8) if x.element_size() == 1 else x)


@pytest.mark.skipif(bool(getattr(torch.version, "hip", None)), reason="a ROCm torch is installed")
def test_gpu_path_says_unavailable_without_rocm():
    st = common.gpu_status("gfx942")
    assert st["available"] is False and "torch.version.hip" in st["reason"]


def test_cli_contract_keys_and_artifacts(capsys, tmp_path):
    status, out = run_cli(capsys, "convert", "--arch", "gfx942", "--interpret", "--emit", str(tmp_path))
    assert status == 0
    assert out["verified"] is True and out["max_abs_err"] == 0.0
    assert out["fatbin"] == str(tmp_path / "convert_layout.hsaco")
    with open(out["fatbin"], "rb") as f:
        assert f.read(4) == b"\x7fELF"
    assert os.path.exists(tmp_path / "convert_layout.mlir") and os.path.exists(tmp_path / "convert_layout.s")
    assert out["launch"]["ran"] is False and out["launch"]["reason"]


def test_cli_without_interpret_is_not_verified(capsys, tmp_path):
    status, out = run_cli(capsys, "convert", "--arch", "gfx950", "--emit", str(tmp_path))
    assert status == 0 and out["verified"] is False and out["interpret"]["ran"] is False


@pytest.mark.parametrize("argv,words", [
    (["--m", "0"], "--m"),
    (["--m", "x"], "argument --m: invalid int value: 'x'"),
    (["--dtype", "f32"], "argument --dtype: invalid choice: 'f32'"),
    (["--dtype", "fp17"], "unknown dtype 'fp17'"),
    (["--arch", "gfx1"], "argument --arch: invalid choice"),
    (["--bogus"], "unrecognized arguments: --bogus"),
])
def test_cli_bad_input_is_one_line_and_exit_2(capsys, argv, words):
    from linlayout.kernels import gemm

    status = common.main("gemm", "", gemm.add_arguments, gemm.build, gemm.make_case, argv + ["--json"])
    captured = capsys.readouterr()
    assert status == 2 and captured.out == ""
    assert len(captured.err.splitlines()) == 1 and captured.err.startswith("linlayout: error: kernel gemm: ")
    assert words in captured.err


@pytest.mark.parametrize("name,argv,message", [
    ("gemm", ["--warps", "3x2"], "--warps '3x2': both counts must be powers of two"),
    ("gemm", ["--tiles", "0x1"], "--tiles '0x1': both counts must be powers of two"),
    ("gemm", ["--bk", "0"], "--bk must be positive"),  # was taken as "no --bk": the default K block
    ("attention", ["--d", "0"], "head dim 0 must be a power of two and a multiple of 32 and of the MFMA's K = 8"),
    ("attention", ["--scale", "nan"], "softmax scale nan must be a finite number"),  # was a traceback
    ("attention", ["--scale", "inf"], "softmax scale inf must be a finite number"),  # was a run that mismatched
])
def test_cli_bad_kernel_option_names_the_option(capsys, name, argv, message):
    """A bad kernel option is refused before any work with one line naming the option as the user wrote it."""
    import importlib

    kernel = importlib.import_module(f"linlayout.kernels.{name}")
    status = common.main(name, "", kernel.add_arguments, kernel.build, kernel.make_case, argv)
    captured = capsys.readouterr()
    assert (status, captured.out, captured.err) == (2, "", f"linlayout: error: kernel {name}: {message}\n")


@pytest.mark.parametrize("name,argv", [("gemm", ["--warps", "4x2"]), ("attention", []), ("fp8_fp16", [])])
def test_a_kernel_declares_the_threads_it_is_launched_with(name, argv):
    """Every kernel of the package declares its workgroup's threads (``known_block_size``, which its code
    object states), the same count its case launches; the interpreter refuses a launch of other threads."""
    import dataclasses
    import importlib

    from linlayout.lowering.interpreter import InterpreterError

    kernel = importlib.import_module(f"linlayout.kernels.{name}")
    args = common._parser(name, "", kernel.add_arguments).parse_args(argv + ["--interpret"])
    kb = kernel.build(args)
    case = kernel.make_case(kb, args, 0)
    assert f"kernel attributes {{known_block_size = array<i32: {case.block[0]}, 1, 1>}}" in kb.text
    assert case.block[1:] == (1, 1)
    with pytest.raises(InterpreterError, match=f"declares known_block_size = \\({case.block[0]}, 1, 1\\)"):
        common.interpret(kb, dataclasses.replace(case, block=(case.block[0] // 2, 1, 1)))


@pytest.mark.parametrize("name,argv", [("gemm", ["--warps", "4x2"]), ("attention", [])])
def test_a_gpu_launch_of_other_threads_is_refused_before_the_gpu(name, argv):
    """``--launch`` checks its case's launch against the threads the kernel declares (``known_block_size``: LLVM
    compiles the code object for exactly those) on the CPU, before it asks for a GPU: a launch of other threads is
    the interpreter's refusal, here on a machine without one (it went to the GPU unchecked)."""
    import dataclasses
    import importlib

    from linlayout.lowering.interpreter import InterpreterError

    kernel = importlib.import_module(f"linlayout.kernels.{name}")
    args = common._parser(name, "", kernel.add_arguments).parse_args(argv)
    kb = kernel.build(args)
    case = kernel.make_case(kb, args, 0)
    threads = case.block[0]
    for block in ((threads // 2, 1, 1), (threads, 2, 1)):
        message = f"kernel {kb.name} declares known_block_size = {(threads, 1, 1)}, launched with {block}"
        with pytest.raises(InterpreterError, match=re.escape(message)):
            common.launch_on_gpu(kb, None, dataclasses.replace(case, block=block))


def test_a_gpu_launch_is_checked_without_the_interpreter_build(monkeypatch):
    """``launch_on_gpu`` reads the declared threads from the parsed module: it never builds the kernel for the
    interpreter (0.04-0.2 s for the 8-warp GEMM, more on a cold cache), and its refusal is the same line."""
    import dataclasses

    from linlayout.kernels import gemm
    from linlayout.lowering.interp import core
    from linlayout.lowering.interpreter import InterpreterError

    args = common._parser("gemm", "", gemm.add_arguments).parse_args(["--warps", "4x2"])
    kb = gemm.build(args)
    kb = dataclasses.replace(kb, text=kb.text + "\n// not in the interpreter's cache\n")
    case = gemm.make_case(kb, args, 0)

    def no_build(*_):
        raise AssertionError("the launch check built the kernel for the interpreter")

    monkeypatch.setattr(core, "Compiler", no_build)
    threads = case.block[0]
    message = f"kernel {kb.name} declares known_block_size = {(threads, 1, 1)}, launched with {(threads, 2, 1)}"
    with pytest.raises(InterpreterError, match=re.escape(message)):
        common.launch_on_gpu(kb, None, dataclasses.replace(case, block=(threads, 2, 1)))
    with pytest.raises(InterpreterError, match=re.escape("block (1025, 1, 1) has more than 1024 threads")):
        common.launch_on_gpu(kb, None, dataclasses.replace(case, block=(1025, 1, 1)))


def test_emit_dir_must_be_an_existing_writable_folder(capsys, tmp_path, monkeypatch):
    """--emit DIR is refused before the kernel is built unless DIR is an existing folder (a missing
    one was created); the check is the one every output of the command line has (docs/cli.md)."""
    from linlayout.kernels import gemm

    monkeypatch.setattr(gemm, "build", None)  # never reached
    (tmp_path / "file").write_text("")
    for path, reason in ((tmp_path / "no" / "out", "no such folder"), (tmp_path / "file", "it is not a folder"),
                         ("", "an empty path")):
        status = common.main("gemm", "", gemm.add_arguments, gemm.build, gemm.make_case, ["--emit", str(path)])
        captured = capsys.readouterr()
        assert (status, captured.out, captured.err) == (
            2, "", f"linlayout: error: kernel gemm: argument --emit: cannot write into '{path}': {reason}\n")
    assert not (tmp_path / "no").exists()


def test_dtype_spellings_are_one_vocabulary(capsys):
    from linlayout.kernels import gemm

    p = common._parser("gemm", "", gemm.add_arguments)
    assert [p.parse_args(["--dtype", d]).dtype for d in ("fp16", "f16", "FP16", "half", "e4m3", "bfloat16")] == \
        ["f16", "f16", "f16", "f16", "fp8", "bf16"]


@pytest.mark.skipif(bool(getattr(torch.version, "hip", None)), reason="a ROCm torch is installed")
def test_launch_without_a_gpu_is_refused_before_any_work(capsys, monkeypatch):
    from linlayout.kernels import gemm

    monkeypatch.setattr(gemm, "build", None)  # never reached
    status = common.main("gemm", "", gemm.add_arguments, gemm.build, gemm.make_case, ["--launch"])
    captured = capsys.readouterr()
    assert status == 2 and captured.out == "" and len(captured.err.splitlines()) == 1
    assert "--launch: torch" in captured.err and "not a ROCm build" in captured.err


def test_without_a_linker_the_isa_is_still_written(capsys, tmp_path, monkeypatch):
    from linlayout.lowering.linker import LinkerNotFound

    real = common.compile_mlir

    def no_linker(text, arch, binary=True, **kw):
        if binary:
            raise LinkerNotFound("no ld.lld (test)")
        return real(text, arch, binary=False, **kw)

    monkeypatch.setattr(common, "compile_mlir", no_linker)
    status, out = run_cli(capsys, "convert", "--arch", "gfx942", "--interpret", "--emit", str(tmp_path))
    assert status == 0 and out["verified"] is True
    assert out["fatbin"] is None and "ld.lld" in out["fatbin_missing"]
    assert os.path.exists(out["artifacts"]["isa"]) and out["launch"]["ran"] is False


def test_kernel_params_point_at_the_argument_values():
    t = torch.zeros(4)
    holders, params = common.kernel_params([t, 7, -3])
    assert len(params) == 3
    assert ctypes.c_void_p.from_address(params[0]).value == t.data_ptr()
    assert ctypes.c_int32.from_address(params[1]).value == 7
    assert ctypes.c_int32.from_address(params[2]).value == -3
