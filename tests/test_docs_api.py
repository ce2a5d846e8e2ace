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
