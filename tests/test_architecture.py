"""The layers point one way: core <- synth <- lowering <- kernels <- flydsl, cli, with imports at module level.

Every module of every room is parsed (its AST, nothing imported): ``linlayout/`` (the core: f2,
layouts, encodings, hw, pictures, caches), ``synth/``, ``lowering/``, ``kernels/`` (linked into
the namespace as ``linlayout.synth`` ...), ``linlayout/flydsl`` (the FlyDSL integration) and
``linlayout/cli``, the two leaves: nothing else imports them.  An import of a higher layer or of
another leaf, absolute or relative, fails; so does a bare top-level ``synth``/``lowering``/``kernels``
(the one namespace is ``linlayout``), and so does an import inside a function, class or block,
but for the optional third-party dependencies of ``OPTIONAL`` (imported where they are needed, so
that the library works without them).
"""

from __future__ import annotations

import ast
import re
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("core", "synth", "lowering", "kernels", "flydsl", "cli")  # each may import only its own and earlier layers
LEAVES = ("flydsl", "cli")  # integration layers: no other layer imports them
GENERIC = ("synth", "lowering", "kernels")  # rooms that must never be imported as top-level names

#: Optional third-party dependencies, the only imports allowed below module level: each is an extra
#: of pyproject.toml, heavy or missing on a plain install, imported where a feature needs it.
OPTIONAL = {
    "torch": "kernels/ (extra 'kernels'): reference values and GPU buffers",
    "matplotlib": "linlayout.pictures (extra 'plot'): pictures",
    "galois": "LinearLayout.to_galois (extra 'test'): GF(2) arrays",
    "flydsl": "the MLIR Python bindings (extra 'mlir')",
    "mlir": "the upstream MLIR Python bindings, flydsl's alternative",
    "ziglang": "the ld.lld of the ziglang wheel (extra 'mlir')",
}


#: The only modules that import by name at run time (importlib), with what they import.
DYNAMIC = {
    "linlayout.spec": "the named-layout providers of spec.PROVIDERS (core modules, tested below)",
    "linlayout.lowering.mlir": "the optional MLIR bindings (flydsl._mlir or mlir)",
    "linlayout.cli": "the CLI's subcommand modules, linlayout.cli.* (the leaf)",
    "linlayout.cli.kernel": "the one kernel it runs, linlayout.kernels.<NAME> (torch only for a kernel that runs)",
    "linlayout.hw.targets": "the target descriptors found in its own package, linlayout.hw.targets.* (core)",
    "linlayout.room_alias": "a room imported by its bare name: its module of the package, linlayout.<room>.*",
}


def _room_files() -> dict[str, list[tuple[str, Path]]]:
    """Per layer: (module name, file) of every module (the linked rooms read once, from their folders)."""
    out: dict[str, list[tuple[str, Path]]] = {layer: [] for layer in LAYERS}
    for path in sorted((ROOT / "linlayout").rglob("*.py")):
        rel = path.relative_to(ROOT / "linlayout")
        if rel.parts[0] in GENERIC:
            continue  # the links to the rooms, read below
        out[rel.parts[0] if rel.parts[0] in LEAVES else "core"].append((_module_name(("linlayout",) + rel.parts), path))
    for room in GENERIC:
        for path in sorted((ROOT / room).rglob("*.py")):
            out[room].append((_module_name(("linlayout", room) + path.relative_to(ROOT / room).parts), path))
    return out


def _module_name(parts: tuple[str, ...]) -> str:
    parts = parts[:-1] + (parts[-1][: -len(".py")],)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> str | None:
    """The layer of a module name of the namespace (None: not linlayout's)."""
    parts = module.split(".")
    if parts[0] != "linlayout":
        return None
    if len(parts) > 1 and parts[1] in GENERIC + LEAVES:
        return parts[1]
    return "core"


def _imports(tree: ast.Module, module: str, is_package: bool):
    """``(node, target, nested)`` per imported name: the absolute module (or ``module.name``) it
    names, and whether the import sits below module level."""
    top = {id(n) for n in tree.body}
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                if node.level - 1 >= len(base):
                    raise AssertionError(f"{module}:{node.lineno}: relative import above the package")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [source if a.name == "*" else f"{source}.{a.name}" for a in node.names]
        else:
            continue
        for t in targets:
            yield node, t, id(node) not in top


def violations(layer: str, module: str, source: str, is_package: bool = False) -> list[str]:
    """What breaks the rules in the text ``source`` of ``module`` (of ``layer``)."""
    out = []
    for node, target, nested in _imports(ast.parse(source), module, is_package):
        head = target.split(".")[0]
        where = f"{module}:{node.lineno}"
        if head in GENERIC:
            out.append(f"{where}: imports the top-level name {target!r} (the namespace is linlayout.{head})")
            continue
        if head == "__future__":
            continue
        to = layer_of(target)
        if to is not None and LAYERS.index(to) > LAYERS.index(layer):
            out.append(f"{where}: {layer} imports {target} of the higher layer {to}")
        elif to in LEAVES and to != layer:
            out.append(f"{where}: {layer} imports {target} of the leaf {to}")
        if nested and head not in OPTIONAL:
            out.append(f"{where}: imports {target} inside a function or block (imports belong at module level)")
    if module not in DYNAMIC:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) in (
                    "import_module", "__import__"):
                out.append(f"{module}:{node.lineno}: imports by name at run time (importlib)")
    return out


ROOMS = _room_files()


def _check(layer: str) -> list[str]:
    found = []
    for module, path in ROOMS[layer]:
        found += violations(layer, module, path.read_text(), path.name == "__init__.py")
    return found


@pytest.mark.parametrize("layer", [la for la in LAYERS if la != "cli"])
def test_each_layer_imports_only_lower_layers_at_module_level(layer):
    assert ROOMS[layer], f"no module found for layer {layer}"
    assert _check(layer) == []


def test_the_cli_imports_at_module_level():
    assert _check("cli") == []


def test_every_room_is_read():
    names = {m for layer in LAYERS for m, _ in ROOMS[layer]}
    for module in ("linlayout", "linlayout.f2", "linlayout.hw.lds", "linlayout.synth.convert",
                   "linlayout.lowering.interp.core", "linlayout.kernels.gemm", "linlayout.cli",
                   "linlayout.flydsl", "linlayout.flydsl.check", "linlayout.flydsl_text"):
        assert module in names
    assert sum(len(v) for v in ROOMS.values()) == len(names)  # each module once (links not read twice)


def test_importing_linlayout_does_not_import_flydsl():
    code = ("import sys, linlayout, linlayout.spec, linlayout.flydsl_text\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'flydsl' or m.startswith('linlayout.flydsl.')))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_linlayout_init_imports_the_core_only():
    tree = ast.parse((ROOT / "linlayout" / "__init__.py").read_text())
    targets = [t for _, t, _ in _imports(tree, "linlayout", True)]
    assert targets and all(layer_of(t) in ("core", None) for t in targets)


@pytest.mark.parametrize("layer,module,source,is_package,expected", [
    ("synth", "linlayout.synth.cost", "from linlayout.lowering.mlir import bindings", False,
     "synth imports linlayout.lowering.mlir.bindings of the higher layer lowering"),
    ("synth", "linlayout.synth.cost", "from ..lowering import mlir", False,
     "synth imports linlayout.lowering.mlir of the higher layer lowering"),
    ("core", "linlayout.hw.lds", "from ..synth.banks import analyze", False,
     "core imports linlayout.synth.banks.analyze of the higher layer synth"),
    ("core", "linlayout", "from . import synth", True, "core imports linlayout.synth of the higher layer synth"),
    ("kernels", "linlayout.kernels.gemm", "import linlayout.cli", False,
     "kernels imports linlayout.cli of the higher layer cli"),
    ("kernels", "linlayout.kernels.gemm", "from linlayout.flydsl import layout_of", False,
     "kernels imports linlayout.flydsl.layout_of of the higher layer flydsl"),
    ("cli", "linlayout.cli.banks", "from ..flydsl import check_copy", False,
     "cli imports linlayout.flydsl.check_copy of the leaf flydsl"),
    ("lowering", "linlayout.lowering.report", "import synth.plan", False,
     "imports the top-level name 'synth.plan' (the namespace is linlayout.synth)"),
    ("synth", "linlayout.synth.convert", "def f():\n    from . import emulator\n", False,
     "imports linlayout.synth.emulator inside a function or block"),
    ("synth", "linlayout.synth.cost", "try:\n    from . import banks\nexcept ImportError:\n    banks = None\n", False,
     "imports linlayout.synth.banks inside a function or block"),
    ("core", "linlayout.layout", "import importlib\nbanks = importlib.import_module('linlayout.synth.banks')\n",
     False, "imports by name at run time (importlib)"),
])
def test_the_rules_catch(layer, module, source, is_package, expected):
    found = violations(layer, module, source, is_package)
    assert len(found) == 1 and expected in found[0], found


@pytest.mark.parametrize("source", [
    "from linlayout import LayoutError\nfrom .banks import analyze\n",  # same or lower layer, module level
    "def f():\n    import torch\n    import matplotlib.pyplot as plt\n",  # optional dependencies
])
def test_the_rules_allow(source):
    assert violations("synth", "linlayout.synth.cost", source) == []


def test_named_layout_providers_are_core():
    from linlayout.spec import PROVIDERS

    assert PROVIDERS and all(layer_of(p) == "core" for p in PROVIDERS)


def test_importing_every_module_keeps_one_namespace():
    """Every module imports (kernels/ only with torch, linlayout.flydsl only with flydsl); no top-level
    synth, lowering or kernels appears."""
    modules = [m for layer in LAYERS for m, _ in ROOMS[layer]
               if (layer != "kernels" or _has("torch")) and (layer != "flydsl" or _has("flydsl"))]
    code = textwrap.dedent(f"""
        import importlib, sys
        for m in {modules!r}:
            importlib.import_module(m)
        print(sorted(n for n in sys.modules if n.split(".")[0] in {GENERIC!r}))
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def _has(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


#: A statement importing a room by its bare name, in prose code: ``from kernels import gemm``,
#: ``>>> import synth.plan`` (it runs only from the repository root, where the room is a folder).
BARE_ROOM_IMPORT = re.compile(r"^\s*(?:>>>|\.\.\.)?\s*(?:from|import)\s+(?:synth|lowering|kernels)\b", re.M)


def test_docs_and_examples_import_rooms_through_linlayout():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "examples").glob("*.py"))]
    found = [f"{p.relative_to(ROOT)}: {m.group(0).strip()}" for p in pages
             for m in BARE_ROOM_IMPORT.finditer(p.read_text())]
    assert found == []


def _bare_room_imports(path: Path, root: Path = ROOT) -> list[str]:
    """The imports of a bare room name in the Python file ``path``: statements (``import synth.cost``,
    ``from lowering import emit``) and importlib calls with a literal name (``import_module("kernels.gemm")``)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""] if not node.level else []
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
              in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            names = [node.args[0].value]
        else:
            continue
        out += [f"{path.relative_to(root)}:{node.lineno}: {n}" for n in names if n.split(".")[0] in GENERIC]
    return out


def test_tests_and_benchmarks_import_rooms_through_linlayout():
    """tests/, benchmarks/ and examples/ name the rooms as linlayout.synth ... (a bare ``synth`` is the same
    modules, linlayout.room_alias, but the one spelling is the package's)."""
    files = [p for folder in ("tests", "benchmarks", "examples") for p in sorted((ROOT / folder).rglob("*.py"))]
    assert len(files) > 100
    assert [hit for p in files for hit in _bare_room_imports(p)] == []


def test_the_bare_import_scan_catches(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text("import synth.cost\nfrom lowering import emit\nimport importlib\n"
                    "importlib.import_module('kernels.gemm')\nimport linlayout.synth\nfrom . import needs\n")
    assert _bare_room_imports(path, tmp_path) == ["probe.py:1: synth.cost", "probe.py:2: lowering",
                                                  "probe.py:4: kernels.gemm"]


def test_a_bare_room_name_is_the_package_s_room():
    """From the repository root, ``import synth.cost`` (and ``from lowering import emit``, ``import kernels``)
    gives the modules of linlayout.synth ...: one copy, so no cache is declared twice, whichever name comes
    first (linlayout.room_alias)."""
    code = textwrap.dedent("""
        import sys
        import synth.cost
        from synth import span
        import linlayout.synth.cost
        import linlayout.lowering.emit
        from lowering import emit
        import kernels
        import synth.lds_path as lds_path
        import linlayout.synth.lds_path
        import synth.steps.lds
        print(synth.cost is linlayout.synth.cost, span is sys.modules["linlayout.synth.span"],
              emit is linlayout.lowering.emit, kernels is sys.modules["linlayout.kernels"],
              lds_path is linlayout.synth.lds_path, synth.steps.lds is sys.modules["linlayout.synth.steps.lds"],
              synth.cost.__spec__.name, synth.cost.__name__)
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["True"] * 6 + ["linlayout.synth.cost"] * 2


def test_a_bare_room_submodule_runs_as_a_script():
    """``python -m kernels.convert`` from the repository root runs linlayout.kernels.convert (runpy asks the
    alias's loader for the module's code: ``_AliasLoader.get_code``)."""
    run = subprocess.run([sys.executable, "-m", "kernels.convert", "--help"], capture_output=True, text=True,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("usage: linlayout kernel convert")


def test_another_top_level_package_of_a_room_s_name_keeps_its_submodules(tmp_path):
    """A third-party ``kernels`` package ahead of the repository root on sys.path: once a bare room
    (``synth``) made the aliases, ``kernels.convert`` is still that package's module, not
    linlayout.kernels.convert."""
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "__init__.py").write_text("")
    (tmp_path / "kernels" / "convert.py").write_text("WHO = 'third party'\n")
    code = textwrap.dedent("""
        import synth.cost
        import kernels.convert
        print(kernels.convert.WHO, kernels.convert.__name__)
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])})
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["third", "party", "kernels.convert"]
