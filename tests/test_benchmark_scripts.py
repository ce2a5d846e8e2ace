"""The scripts of benchmarks/ and benchmarks/nvidia/ refuse a bad command line the project's way:
one line ``PROG: error: MESSAGE`` on stderr, nothing on stdout, exit status 2 (through
``benchmarks.script_args.ScriptParser``; argparse's own parser printed its usage line first).

Every script with a command line (an ``add_argument`` call) is run once, from a scratch folder,
with an option no script has: the parser refuses it (or, first, a missing required argument)
before any work."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(p for p in [*BENCHMARKS.glob("*.py"), *BENCHMARKS.glob("nvidia/*.py")]
                 if "add_argument(" in p.read_text())


def test_every_script_parses_with_the_shared_parser():
    assert len(SCRIPTS) >= 20  # the scripts of both folders (a glob that finds none would test nothing)
    assert [p.name for p in SCRIPTS if "argparse.ArgumentParser(" in p.read_text()] == []


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(BENCHMARKS)))
def test_bad_option_is_one_line_and_exit_2(script, tmp_path):
    done = subprocess.run([sys.executable, str(script), "--no-such-option"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert re.fullmatch(rf"{re.escape(script.name)}: error: (unrecognized arguments: --no-such-option"
                        r"|the following arguments are required: [^\n]+|one of the arguments [^\n]+ is required)\n",
                        done.stderr), done.stderr


@pytest.mark.parametrize("argv, line", [
    (["nvidia/run_plans.py", "build"], "run_plans.py build: error: the following arguments are required: --out"),
    (["nvidia/run_plans.py", "build", "--out", "x", "--losses"],
     "run_plans.py: error: --losses selects among the cases of --corpus; give --corpus FILE"),
    (["nvidia/access_width.py", "report", "--no-such-option"],
     "access_width.py report: error: the following arguments are required: results, --out"),
    (["plan_snapshot.py", "--check", "no-such-file"], "plan_snapshot.py: error: --check no-such-file: not a snapshot "
     "this script wrote (FileNotFoundError: [Errno 2] No such file or directory: 'no-such-file')"),
    (["bench_conversions_plan.py", "--every", "0"], "bench_conversions_plan.py: error: --every must be at least 1, got 0"),
])
def test_subcommands_and_own_checks_are_one_line(argv, line, tmp_path):
    """A subcommand's parser is the shared one too, and so are the scripts' own ``ap.error`` refusals."""
    done = subprocess.run([sys.executable, str(BENCHMARKS / argv[0]), *argv[1:]], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", line + "\n")


def _linlayout_imports(tree) -> list:
    return [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "linlayout"
            or isinstance(n, ast.Import) and any(a.name.split(".")[0] == "linlayout" for a in n.names)]


def test_a_script_that_imports_linlayout_at_module_level_imports_it_only_there():
    """As the library's modules do (tests/test_architecture.py): a script of benchmarks/ that imports
    linlayout at module level has no linlayout import in a function.  A script that imports it in
    functions alone does so on purpose (``plan_timing.py`` times the tree its options name)."""
    late = {}
    for path in sorted([*BENCHMARKS.glob("*.py"), *BENCHMARKS.glob("nvidia/*.py")]):
        tree = ast.parse(path.read_text())
        if any(_linlayout_imports(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))):
            inner = [f"{f.name}:{n.lineno}" for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.ClassDef))
                     for n in _linlayout_imports(f)]
            if inner:
                late[path.name] = inner
    assert late == {}
