"""The docs say what runs.

* Every ```pycon block of every page under docs/ is a doctest: it runs (one namespace per
  page, blocks in order) and its printed output must match.
* Every name docs/api.md documents exists, with the documented parameters.
* Every [I] parameter docs/hardware.md names exists where it says, and every named LDS
  assumption and inferred interpreter option is listed there.
"""

from __future__ import annotations

import dataclasses
import doctest
import importlib
import inspect
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
FENCE = re.compile(r"^```pycon\n(.*?)^```", re.S | re.M)


def _pycon_pages():
    return [p for p in PAGES if FENCE.search(p.read_text())]


@pytest.mark.parametrize("page", _pycon_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_pycon_blocks_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = page.read_text()
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    globs: dict = {}
    for m in FENCE.finditer(text):
        line = text[: m.start()].count("\n") + 2
        test = parser.get_doctest(m.group(1), globs, f"{page.name}:{line}", str(page), line)
        runner.run(test, clear_globs=False)
        globs = test.globs  # DocTest copies its globs: carry this block's names to the next
    res = runner.summarize(verbose=False)
    assert res.failed == 0, f"{res.failed} of {res.attempted} doc examples in {page.name} failed (see output above)"


# ---------------------------------------------------------------------------------- hardware.md
ROOT = DOCS.parent
PACKAGES = ("linlayout", "synth", "lowering", "kernels")
CODE_NAME = re.compile(r"`((?:linlayout|synth|lowering|kernels)(?:\.\w+)+)`")
CONSTANT = re.compile(r"^([A-Z][A-Z0-9_]+)\s*(?::[^=]*)?=")


def _resolve(dotted: str):
    """Import the longest module prefix of ``dotted`` and get the rest as attributes."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for attr in parts[k:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def _inferred_constants() -> list[tuple[str, str]]:
    """(module, NAME) of every module-level constant tagged [I] on its line or in the comments right above."""
    out = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            lines = path.read_text().splitlines()
            for i, ln in enumerate(lines):
                m = CONSTANT.match(ln)
                if not m:
                    continue
                ctx, j = [ln], i - 1
                while j >= 0 and lines[j].lstrip().startswith("#"):
                    ctx.append(lines[j])
                    j -= 1
                if any("[I]" in c for c in ctx):
                    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
                    out.append((module, m.group(1)))
    return out


def test_hardware_names_exist():
    text = (DOCS / "hardware.md").read_text()
    names = set(CODE_NAME.findall(text))
    assert len(names) >= 20
    for dotted in sorted(names):
        _resolve(dotted)  # raises if the documented name does not exist


def test_hardware_lists_every_inferred_parameter():
    from linlayout.hw.lds import ASSUMPTIONS
    from lowering.interp import InterpOptions

    text = (DOCS / "hardware.md").read_text()
    missing = [f"assumption {k}" for k in ASSUMPTIONS if f"`{k}`" not in text]
    missing += [f"InterpOptions.{f.name}" for f in dataclasses.fields(InterpOptions)
                if f"`InterpOptions.{f.name}`" not in text]
    missing += [f"{mod}.{name}" for mod, name in _inferred_constants() if f"`{mod}.{name}`" not in text]
    assert not missing, f"docs/hardware.md does not list: {missing}"
