"""``linlayout show`` and ``linlayout verify`` through cli.main, plus the installed console script."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

import needs
from isolated import run_python

from linlayout import LinearLayout
from linlayout.cli import main

SWZ = "Sw<3,3,3> o (8,64):(64,1)"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_show_text(capsys):
    code, out, err = run(capsys, "show", "(8,4):(4,1)", "--limit", "3")
    assert code == 0 and err == ""
    assert "coord[8] -> (offset=1)" in out  # bases
    assert "offset0      .      .      .      1      ." in out  # the 0/1 matrix row of offset bit 0
    assert "rank=5, injective=True, surjective=True, invertible=True" in out
    assert "CuTe: (8,4):(4,1)" in out
    assert out.rstrip().splitlines()[-1] == "... 29 more rows (--limit)"
    rows = [line.split() for line in out.splitlines() if "->" in line and "[" not in line]
    assert rows[1:] == [["coord", "->", "offset"], ["0", "->", "0"], ["1", "->", "4"], ["2", "->", "8"]]


def test_show_json(capsys):
    code, out, _ = run(capsys, "show", SWZ, "--limit", "5", "--json")
    assert code == 0
    res = json.loads(out)
    lay = LinearLayout.from_json(res["layout"])
    assert res["rank"] == 9 and res["injective"] and res["surjective"] and res["invertible"]
    assert res["cute"] == SWZ
    assert [r["output"]["offset"] for r in res["table"]] == [lay.apply({"coord": x})["offset"] for x in range(5)]
    assert res["table"][1] == {"input": {"coord": 1}, "output": {"offset": 64 | 8}}
    assert res["table_truncated"] is True and len(res["matrix"]) == 9
    # show --json output is itself a valid layout argument
    code, out, _ = run(capsys, "verify", out, SWZ)
    assert code == 0 and out.startswith("equivalent")


def test_show_broadcast_layout_reports_free_bits(capsys):
    lay = json.dumps(LinearLayout({"lane": [[1], [0], [2]]}, ["dim0"]).to_json())
    code, out, _ = run(capsys, "show", lay, "--limit", "0")
    assert code == 0 and "injective=False" in out and "free (broadcast) in bits: lane=0b10" in out
    assert "lane  ->  dim0" not in out  # no table with --limit 0
    assert out.rstrip().splitlines()[-1] == "... 8 more rows (--limit)"


@pytest.mark.parametrize(
    "argv,msg",
    [
        (["show", "(8,4):(4,3)"], "stride 3 of mode 1 is not a power of two"),
        (["show", "8:1", "--limit", "-1"], "--limit must be >= 0"),
        (["verify", "8:1"], "the following arguments are required"),
        (["verify", "8:1", "{bad"], "does not parse"),
        (["verify", "8:1", "8:1", "--rename", "x"], "--rename takes OLD=NEW"),
        (["nosuchcommand"], "invalid choice"),
        (["convert", "--src", "(8,4):(4,1)", "--dst", "(8,4):(4,1)", "--arch", "gfx942", "--dtype", "f16",
          "--lds-budget", "-5"], "argument --lds-budget: -5 must be a positive integer"),
        (["banks", "--lds-budget", "0"], "argument --lds-budget: 0 must be a positive integer"),
        (["convert", "--lds-budget", "1k"], "argument --lds-budget: '1k' is not an integer"),
        # an unknown encoding is named, not the shape it also lacks (was "ll_mul: missing parameter shape")
        (["layout", "--triton", '{"encoding": "ll_mul"}'], "linlayout: error: parameter encoding: 'll_mul' is not one of"),
        (["layout", "--triton", '{"encoding": "blocked", "sizePerThread": [1, 4], "threadsPerWarp": [8, 8], '
          '"warpsPerCTA": [4, 1], "order": [1, 0]}'], "linlayout: error: blocked: missing parameter shape"),
        (["show", '{"in_dims": [["lane", 2], ["lane", 2]], "out_dims": [["dim0", 4]], "bases": {"lane": [[1]]}}'],
         "linlayout: error: in dim 'lane' is listed twice in in_dims"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, argv, msg):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and msg in err


def test_kernel_refuses_a_bad_arch_without_importing_a_kernel_or_torch():
    """``linlayout kernel gemm --arch sm_90``: exit 2 with the --arch message, and neither torch nor any
    kernel module was imported (the refusal took 10-14 s on a loaded machine when they were)."""
    script = ("import sys; from linlayout.cli import main; code = main(['kernel', 'gemm', '--arch', 'sm_90']); "
              "print(code, sorted(m for m in sys.modules if m == 'torch' or m.startswith('linlayout.kernels.')))")
    done = run_python("-c", script)
    assert done.stdout.split("\n")[0] == "2 ['linlayout.kernels.options']", done.stdout + done.stderr
    assert done.stderr.strip() == ("linlayout: error: kernel gemm: argument --arch: invalid choice: 'sm_90' "
                                   "(choose from 'gfx942', 'gfx950')")


@needs.torch
def test_every_error_line_of_the_command_line_has_one_form(capsys):
    """A bad argument of a command, a bad common option of a kernel (refused before the kernel is imported)
    and a bad option of the kernel's own (refused by the kernel's parser) are each one line
    ``linlayout: error: [kernel NAME: ]MESSAGE``, exit 2: the kernel's own refusals were
    ``linlayout kernel NAME: error: MESSAGE``."""
    lines = {}
    for argv in (["show", "8:1", "--bogus"], ["kernel", "gemm", "--arch", "sm_90"], ["kernel", "gemm", "--m", "0"]):
        code, out, err = run(capsys, *argv)
        assert (code, out, err.count("\n")) == (2, "", 1), (argv, err)
        lines[argv[0] if argv[0] != "kernel" else argv[-2]] = err
    assert lines["show"] == "linlayout: error: unrecognized arguments: --bogus\n"
    assert lines["--arch"].startswith("linlayout: error: kernel gemm: argument --arch: invalid choice: 'sm_90'")
    assert lines["--m"].startswith("linlayout: error: kernel gemm: --m"), lines["--m"]


def test_kernel_emit_into_a_missing_folder_is_refused_before_any_work(tmp_path):
    """``linlayout kernel gemm --emit DIR`` with no folder DIR: exit 2 with one line, DIR not created
    (it was, silently), and neither torch nor any kernel module imported: as ``convert -o`` in a
    missing folder, an output no command creates a folder for (docs/cli.md)."""
    missing = tmp_path / "no" / "out"
    script = (f"import sys; from linlayout.cli import main; code = main(['kernel', 'gemm', '--emit', {str(missing)!r}]); "
              "print(code, sorted(m for m in sys.modules if m == 'torch' or m.startswith('linlayout.kernels.')))")
    done = run_python("-c", script)
    assert done.stdout.split("\n")[0] == "2 ['linlayout.kernels.options']", done.stdout + done.stderr
    assert done.stderr.strip() == (f"linlayout: error: kernel gemm: argument --emit: cannot write into "
                                   f"'{missing}': no such folder")
    assert not (tmp_path / "no").exists()


def test_show_picture_to_an_empty_path_is_refused(capsys):
    """``--png ''`` drew nothing and said nothing; an empty output path is bad input, as for convert -o."""
    assert run(capsys, "show", "8:1", "--png", "") == (2, "", "linlayout: error: argument --png: cannot write "
                                                        "picture '': an empty path\n")


@pytest.mark.parametrize("command", [["show", "(4,16):(1,4)", "--limit", "0"], ["banks", "--arch", "gfx942", "--op", "ds_read_b64", "--access", "64:2", "--element-bytes", "4"]])
def test_a_bad_second_picture_path_writes_nothing(capsys, tmp_path, command):
    """Both picture paths are checked when the options are parsed: a bad ``--svg`` is refused before
    the ``--png`` is drawn (it used to be written first, then the command failed)."""
    good = tmp_path / "good.png"
    code, out, err = run(capsys, *command, "--png", str(good), "--svg", str(tmp_path / "no" / "x.svg"))
    assert (code, out) == (2, "") and not good.exists()
    assert err == f"linlayout: error: argument --svg: cannot write picture '{tmp_path / 'no' / 'x.svg'}': no folder '{tmp_path / 'no'}'\n"


def test_an_output_file_path_ending_in_a_separator_is_refused(capsys, tmp_path):
    """``--png new.png/`` named a folder but wrote the file ``new.png``."""
    path = str(tmp_path / "new.png") + "/"
    code, out, err = run(capsys, "show", "8:1", "--png", path)
    assert (code, out) == (2, "") and not (tmp_path / "new.png").exists()
    assert err == f"linlayout: error: argument --png: cannot write picture '{path}': a path ending in a separator names a folder\n"


def test_show_picture_without_plotting_support(capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails
    code, out, err = run(capsys, "show", "8:1", "--png", str(tmp_path / "x.png"))
    assert code == 2 and out == "" and "pip install 'linlayout[plot]'" in err


def test_show_picture(capsys, tmp_path):
    needs.module("matplotlib")
    png, svg = tmp_path / "l.png", tmp_path / "l.svg"
    code, out, err = run(capsys, "show", "(4,8):(8,1)", "--png", str(png), "--svg", str(svg), "--json")
    assert code == 0, err
    assert json.loads(out)["pictures"] == [str(png), str(svg)]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and b"<svg" in svg.read_bytes()[:2000]


def test_verify_equivalent_and_not(capsys):
    code, out, _ = run(capsys, "verify", "(8,4):(4,1)", "(8,(2,2)):(4,(1,2))")
    assert code == 0 and out.startswith("equivalent")
    code, out, _ = run(capsys, "verify", "(8,4):(4,1)", "Sw<1,0,1> o (8,4):(4,1)", "--json")
    res = json.loads(out)
    assert code == 1 and res["equivalent"] is False
    assert res["input"] == {"coord": 16} and res["output_a"] == {"offset": 2} and res["output_b"] == {"offset": 3}
    code, out, _ = run(capsys, "verify", "(8,4):(4,1)", "Sw<1,0,1> o (8,4):(4,1)")
    assert code == 1 and "NOT equivalent" in out and "{'coord': 16}" in out


def test_verify_flatten_and_rename(capsys):
    a = json.dumps(LinearLayout.identity_1d(4, "register", "dim0").to_json())
    b = json.dumps((LinearLayout.identity_1d(2, "x", "r") * LinearLayout.identity_1d(2, "y", "r")).to_json())
    code, out, _ = run(capsys, "verify", a, b)
    assert code == 1 and "in dims differ" in out
    assert run(capsys, "verify", a, b, "--flatten")[0] == 0
    c = json.dumps(LinearLayout.identity_1d(4, "lane", "row").to_json())
    assert run(capsys, "verify", a, c, "--rename", "lane=register", "--rename", "row=dim0")[0] == 0


def test_console_script_exit_codes():
    exe = shutil.which("linlayout")
    if exe is None:
        pytest.skip("the linlayout console script is not installed")
    ok = subprocess.run([exe, "verify", "8:1", "(2,4):(1,2)"], capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout.startswith("equivalent")
    diff = subprocess.run([exe, "verify", "8:1", "8:2", "--json"], capture_output=True, text=True)
    assert diff.returncode == 1 and json.loads(diff.stdout)["equivalent"] is False
    bad = subprocess.run([exe, "show", "(6,2):(1,6)"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stdout == ""
    assert len(bad.stderr.strip().splitlines()) == 1 and "extent 6 of mode 0" in bad.stderr
