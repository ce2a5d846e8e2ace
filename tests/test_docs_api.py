"""The docs say what runs.

* Every ```pycon block of every page under docs/ is a doctest: it runs (one namespace per
  page, blocks in order) and its printed output must match.
* Every name docs/api.md documents exists, with the documented parameters.
* Every [I] parameter docs/hardware.md names exists where it says, and every named LDS
  assumption and inferred interpreter option is listed there.
"""

from __future__ import annotations

import ast
import dataclasses
import doctest
import importlib
import inspect
import re
from pathlib import Path

import pytest

import needs
from isolated import run_python

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
FENCE = re.compile(r"^```pycon\n(.*?)^```", re.S | re.M)


def _pycon_pages():
    return [p for p in PAGES if FENCE.search(p.read_text())]


NEEDS_MLIR = ("lower_conversion(", "compile_mlir(", "interpret(", "run_kernel(", "import flydsl")


@pytest.mark.parametrize("page", _pycon_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_pycon_blocks_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = "".join(FENCE.findall(page.read_text()))
    if any(k in code for k in NEEDS_MLIR) and not needs.has("flydsl"):
        pytest.skip(needs.reason("flydsl"))
    if "import flydsl" in code:  # flydsl.expr changes the MLIR bindings process-wide (test_flydsl_live.py)
        run = run_python("-c", f"import pathlib, test_docs_api; test_docs_api.run_pycon_blocks(pathlib.Path({str(page)!r}))",
                         cwd=tmp_path)
        assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
        return
    run_pycon_blocks(page)


def run_pycon_blocks(page: Path) -> None:
    """Run every ```pycon block of ``page`` in order, in one namespace; fail on any mismatch."""
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
                    parts = path.relative_to(ROOT).with_suffix("").parts
                    module = ".".join(parts if parts[0] == "linlayout" else ("linlayout", *parts))
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
    from linlayout.lowering.interp import InterpOptions

    text = (DOCS / "hardware.md").read_text()
    missing = [f"assumption {k}" for k in ASSUMPTIONS if f"`{k}`" not in text]
    missing += [f"InterpOptions.{f.name}" for f in dataclasses.fields(InterpOptions)
                if f"`InterpOptions.{f.name}`" not in text]
    missing += [f"{mod}.{name}" for mod, name in _inferred_constants() if f"`{mod}.{name}`" not in text]
    assert not missing, f"docs/hardware.md does not list: {missing}"


# ---------------------------------------------------------------------------------- api.md
SECTION = re.compile(r"^## `([\w.]+)`\s*$", re.M)
NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?:\((.*)\))?$")


def _api_entries() -> list[tuple[str, str, str | None]]:
    """(module, dotted name, parameter text or None) of every name docs/api.md declares.

    A bullet ``- `A(x)`, `B` — text`` declares the backticked names before the dash; in
    the text, backticked ``Declared.attr`` references are declarations too."""
    text = (DOCS / "api.md").read_text()
    parts = SECTION.split(text)
    out = []
    for module, body in zip(parts[1::2], parts[2::2]):
        for ln in body.splitlines():
            if not ln.startswith("- "):
                continue
            head, _, tail = ln.partition(" — ")
            declared = []
            for tok in re.findall(r"`([^`]+)`", head):
                m = NAME.match(tok)
                if m:
                    declared.append(tok.split("(")[0])
                    out.append((module, tok.split("(")[0], m.group(1)))
            roots = {d.split(".")[0] for d in declared}
            for tok in re.findall(r"`([^`]+)`", tail):
                m = NAME.match(tok)
                if m and "." in tok.split("(")[0] and tok.split(".")[0] in roots:
                    out.append((module, tok.split("(")[0], m.group(1)))
    return out


API = _api_entries()


def _param_names(text: str) -> list[str]:
    names, depth, cur = [], 0, ""
    for ch in text + ",":
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            name = cur.split("=")[0].strip().lstrip("*")
            if name and name != "/":
                names.append(name)
            cur = ""
        else:
            cur += ch
    return names


def test_api_doc_declares_many_names():
    assert len(API) >= 200, len(API)


@pytest.mark.parametrize("module,name,params", API, ids=[f"{m}:{n}" for m, n, _ in API])
def test_api_name_exists_with_its_parameters(module, name, params):
    if module.split(".")[:2] == ["linlayout", "flydsl"]:  # imports flydsl.expr: a process of its own
        if not needs.has("flydsl"):
            pytest.skip(needs.reason("flydsl"))
        run = run_python("-c", f"import test_docs_api; test_docs_api.check_api_name({module!r}, {name!r}, {params!r})")
        assert run.returncode == 0, run.stderr[-3000:]
        return
    check_api_name(module, name, params)


def check_api_name(module: str, name: str, params: str | None) -> None:
    """Fail unless ``module.name`` exists and, when ``params`` is given, has exactly those parameters."""
    obj = importlib.import_module(module)
    for attr in name.split("."):
        assert hasattr(obj, attr), f"docs/api.md: {module}.{name} does not exist"
        obj = getattr(obj, attr)
    if params is None:
        return
    sig = inspect.signature(obj)
    real = [p.name for p in sig.parameters.values() if p.name not in ("self", "cls")]
    assert _param_names(params) == real, f"docs/api.md: {module}.{name}({params}) but the code has {real}"


def test_api_doc_covers_the_package_root():
    import linlayout

    documented = {n for m, n, _ in API if m == "linlayout"}
    assert set(linlayout.__all__) <= documented, set(linlayout.__all__) - documented


def test_api_doc_covers_linlayout_flydsl():
    """Every public name of ``linlayout.flydsl`` (its ``__all__``, read without importing FlyDSL)."""
    tree = ast.parse((ROOT / "linlayout" / "flydsl" / "__init__.py").read_text())
    (names,) = [node.value for node in tree.body if isinstance(node, ast.Assign)
                and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["__all__"]]
    public = set(ast.literal_eval(names))
    documented = {n for m, n, _ in API if m == "linlayout.flydsl"}
    assert len(public) >= 8 and public <= documented, public - documented


# ---------------------------------------------------------------------------------- links
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    return {_slug(ln.lstrip("#")) for ln in page.read_text().splitlines() if ln.startswith("#")}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_relative_links_resolve(page):
    bad = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"^[a-z]+:", target):
            continue  # http(s), mailto
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            bad.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            bad.append(target)
    assert not bad, f"{page.relative_to(DOCS)}: broken links {bad}"


@pytest.mark.parametrize("page", PAGES + [DOCS.parent / "README.md"], ids=lambda p: p.name)
def test_no_page_names_a_path_of_one_machine(page):
    # a fresh clone has no /work/... or /tmp/... file: name the commit and the command that makes it instead
    local = re.findall(r"(?<![\w.])/(?:work|tmp|home|root)/[\w./-]+", page.read_text())
    assert not local, f"{page.name}: local paths {local}"
