"""The command lines in README.md and the docs run, and docs/cli.md covers the whole command line.

Every ``linlayout SUBCOMMAND ...`` line inside a code block of README.md or a page under docs/ (fenced,
or indented by four spaces) is run in-process, and every ``linlayout kernel NAME ...`` line
as a subprocess, from an empty scratch directory.
A line containing ``[-`` is a synopsis and is not run; a trailing ``\\`` continues a line.  A command must exit 0; ``linlayout
verify`` may also exit 1 (layouts that differ: a well-formed question answered "no").  A linlayout
command without ``--json`` is run again with it and must print exactly one JSON object
(not when it draws a picture: drawing once is enough).

A line written ``$ linlayout ...`` is followed by its output, up to the next ``$`` line or
the end of the block.  Text output: every shown line other than ``...`` must appear in the
real output, in order (so output may be trimmed, never invented).  JSON output (the command
has ``--json``): the shown text is one JSON object whose keys must have exactly the real
values; the string ``"..."`` stands for any value.

docs/cli.md must name every subcommand in ``linlayout.cli.SUBCOMMANDS`` in a heading and
mention every option string of every (sub)parser.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from linlayout.cli import SUBCOMMANDS, build_parser, main

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
COMMAND = re.compile(r"^\s*(?P<prompt>\$ )?(?P<prog>linlayout|python -m linlayout\.kernels\.\w+|linlayout kernel \w+) (?P<rest>.*)$")


class DocCommand:
    def __init__(self, page: Path, line: int, prog: str, argv: list[str], shown: list[str] | None):
        self.page, self.line, self.prog, self.argv, self.shown = page, line, prog, argv, shown

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def _code_lines(text: str) -> list[tuple[int, str, int]]:
    """(line number, text, block id) of every line inside a fenced or indented code block."""
    out, fence, block, prev_blank = [], False, 0, True
    for i, ln in enumerate(text.splitlines(), 1):
        if ln.lstrip().startswith("```"):
            fence = not fence
            block += 1
            prev_blank = False
            continue
        indented = ln.startswith("    ") and (prev_blank or (out and out[-1][0] == i - 1))
        if fence or indented:
            out.append((i, ln, block if fence else -i if prev_blank else out[-1][2]))
        prev_blank = not ln.strip()
    return out


def _commands(page: Path) -> list[DocCommand]:
    lines = _code_lines(page.read_text())
    cmds, k = [], 0
    while k < len(lines):
        no, ln, block = lines[k]
        m = COMMAND.match(ln)
        k += 1
        if not m:
            continue
        if m.group("prog") == "linlayout" and m.group("rest").split(" ", 1)[0] not in SUBCOMMANDS + ["--help"]:
            continue
        text = m.group("rest")
        while text.rstrip().endswith("\\"):  # a shell line continuation
            text = text.rstrip()[:-1] + " " + lines[k][1].strip()
            k += 1
        while True:  # a quoted argument may continue on the next lines
            try:
                argv = shlex.split(text, comments=True)
                break
            except ValueError:
                text += " " + lines[k][1].strip()
                k += 1
        if "[-" in text:
            continue  # a synopsis
        shown = None
        if m.group("prompt"):
            shown = []
            while k < len(lines) and lines[k][2] == block and not lines[k][1].lstrip().startswith("$ "):
                shown.append(lines[k][1])
                k += 1
        cmds.append(DocCommand(page, no, m.group("prog"), argv, shown))
    return cmds


ALL = [c for p in [REPO / "README.md", *sorted(DOCS.rglob("*.md"))] for c in _commands(p)]


def _run(cmd: DocCommand, argv: list[str], capsys) -> tuple[int, str, str]:
    if cmd.prog != "linlayout":  # linlayout kernel NAME: its own process
        proc = subprocess.run([sys.executable, "-m", cmd.prog.split()[-1], *argv], capture_output=True, text=True,
                              timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
        return proc.returncode, proc.stdout, proc.stderr
    try:
        code = main(argv)
    except SystemExit as e:  # --help
        code = e.code or 0
    out, err = capsys.readouterr()
    return code, out, err


def _matches(shown, real) -> bool:
    if shown == "...":
        return True
    if isinstance(shown, dict):
        return isinstance(real, dict) and all(k in real and _matches(v, real[k]) for k, v in shown.items())
    if isinstance(shown, list):
        return isinstance(real, list) and len(shown) == len(real) and all(map(_matches, shown, real))
    return shown == real


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """An empty working directory."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("COLUMNS", "80")  # argparse wraps --help at the terminal width
    return work


def test_docs_have_commands():
    assert len(ALL) >= 20, [c.id for c in ALL]


@pytest.mark.parametrize("cmd", ALL, ids=lambda c: c.id)
def test_doc_command(cmd, scratch, capsys):
    code, out, err = _run(cmd, cmd.argv, capsys)
    allowed = (0, 1) if cmd.prog == "linlayout" and cmd.argv[0] == "verify" else (0,)
    assert code in allowed, f"{cmd.id}: {cmd.prog} {' '.join(cmd.argv)} exited {code}: {err.strip()}"
    if cmd.shown:
        if "--json" in cmd.argv:
            shown = json.loads(" ".join(cmd.shown))
            assert _matches(shown, json.loads(out)), f"{cmd.id}: shown JSON differs from the real output:\n{out}"
        else:
            real = [ln.rstrip() for ln in out.splitlines()]
            pos = 0
            for ln in cmd.shown:
                if ln.strip() == "...":
                    continue
                while pos < len(real) and real[pos] != ln.rstrip():
                    pos += 1
                assert pos < len(real), f"{cmd.id}: shown line {ln!r} is not in the real output (in order):\n{out}"
                pos += 1
    if cmd.prog == "linlayout" and not {"--json", "--help", "-h", "--png", "--svg"} & set(cmd.argv):
        code, out, err = _run(cmd, cmd.argv + ["--json"], capsys)  # (pictures: slow, drawn once)
        assert code in (0, 1), f"{cmd.id} --json exited {code}: {err.strip()}"
        assert isinstance(json.loads(out), dict), f"{cmd.id} --json did not print one JSON object"


def _parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, path + (name,))


def test_cli_reference_covers_every_subcommand_and_flag():
    text = (DOCS / "cli.md").read_text()
    headings = [ln for ln in text.splitlines() if ln.startswith("#")]
    for name in SUBCOMMANDS:
        assert any(f"linlayout {name}" in h for h in headings), f"docs/cli.md has no heading for `linlayout {name}`"
    missing = []
    for path, parser in _parsers(build_parser()):
        for action in parser._actions:
            for opt in action.option_strings:
                if opt not in ("-h", "--help") and not re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", text):
                    missing.append(f"linlayout {' '.join(path)} {opt}")
    assert not missing, f"docs/cli.md does not mention: {missing}"


def test_architectures_bullet_names_every_emit_format():
    """docs/cli.md's Architectures bullet says which --emit formats each family gets, all of them."""
    from linlayout.lowering.conversion import EMIT_FORMATS

    text = (REPO / "docs" / "cli.md").read_text()
    bullet = text.split("* **Architectures**", 1)[1].split("\n\n", 1)[0]
    assert all(fmt in bullet for fmt in EMIT_FORMATS), bullet
