"""One cache registry (linlayout.caches): every process-wide cache declared there, one clear()."""

from __future__ import annotations

import ast
import importlib

import numpy as np
import pytest

from linlayout import LinearLayout, caches
from linlayout.caches import Cache, CacheInfo

from test_architecture import LAYERS, ROOMS

LANES = [(0, 1), (0, 2), (0, 4), (0, 8), (1, 0), (2, 0)]


def _lru_names(node) -> bool:
    """Whether a decorator or callee names functools.lru_cache or functools.cache."""
    target = node.func if isinstance(node, ast.Call) else node
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
    return name in ("lru_cache", "cache") and not (isinstance(target, ast.Attribute)
                                                   and getattr(target.value, "id", None) == "caches")


def undeclared(source: str) -> list[int]:
    """Lines of ``source`` keeping a process-wide cache outside linlayout.caches: a module-level
    (or class-level) function memoized with functools, or a module-level dict or OrderedDict named
    like a cache.  Caches made inside a function live for one call and are not process-wide."""
    tree = ast.parse(source)
    found = []
    scopes = [tree.body] + [n.body for n in tree.body if isinstance(n, ast.ClassDef)]
    for body in scopes:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found += [d.lineno for d in node.decorator_list if _lru_names(d)]
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [t.id for t in targets if isinstance(t, ast.Name)]
                v = node.value
                memoized = isinstance(v, ast.Call) and isinstance(v.func, ast.Call) and _lru_names(v.func)
                mapping = isinstance(v, ast.Dict) or (isinstance(v, ast.Call) and getattr(v.func, "id", None)
                                                      in ("dict", "OrderedDict"))
                if memoized or (mapping and any("cache" in n.lower() for n in names)):
                    found.append(node.lineno)
    return found


@pytest.mark.parametrize("layer", LAYERS)
def test_every_process_wide_cache_is_declared(layer):
    bad = [f"{m}:{line}" for m, path in ROOMS[layer] for line in undeclared(path.read_text())]
    assert bad == []


@pytest.mark.parametrize("source,lines", [
    ("from functools import lru_cache\n@lru_cache(maxsize=None)\ndef f(x):\n    return x\n", [2]),
    ("import functools\nclass A:\n    @functools.cache\n    def f(self):\n        return 1\n", [3]),
    ("_dpp_cache: dict = {}\n_CACHE = OrderedDict()\n_TABLE = {}\n", [1, 2]),
    ("g = lru_cache(maxsize=1)(len)\n", [1]),
    ("@caches.memoize('x')\ndef f(x):\n    return x\n_c = caches.cache('y')\n", []),
    ("def f():\n    rng = cache(lambda: 1)\n    memo = {}\n", []),
])
def test_the_scan_catches(source, lines):
    assert undeclared(source) == lines


def _import_everything() -> None:
    for layer in ("core", "synth", "lowering"):
        for module, _ in ROOMS[layer]:
            importlib.import_module(module)


def test_names_are_the_declaring_modules():
    _import_everything()
    info = caches.declared()
    assert len(info) >= 30
    for name in info:
        module, _, quantity = name.rpartition(".")
        importlib.import_module("linlayout" if module == "" else f"linlayout.{module}")
        assert quantity and module.split(".")[0] in ("hw", "synth", "lowering", "encodings")


def _plan_one():
    from linlayout.synth.convert import plan_conversion

    dims = [("dim0", 4), ("dim1", 64)]
    src = LinearLayout({"register": [[0, 16]], "lane": LANES, "warp": [[0, 32]]}, dims)
    dst = LinearLayout({"register": [[0, 32]], "lane": LANES, "warp": [[0, 16]]}, dims)
    return plan_conversion(src, dst, "gfx942", 16)


def _plan_in_wave():
    from linlayout.synth.convert import plan_conversion

    dims = [("dim0", 4), ("dim1", 64)]
    src = LinearLayout({"register": [[0, 16]], "lane": LANES, "warp": [[0, 32]]}, dims)
    dst = LinearLayout({"register": [[0, 1]], "lane": [(0, 16)] + LANES[1:], "warp": [[0, 32]]}, dims)
    return plan_conversion(src, dst, "gfx942", 16)


def test_clear_empties_every_cache_and_keep_tables_keeps_the_tables():
    _import_everything()
    caches.clear()  # what follows fills the caches itself, whatever ran before
    plan = _plan_one()
    assert plan.verified and plan.lds_bytes  # an LDS round trip: fills the bank, design and cell caches
    assert _plan_in_wave().verified  # a conversion inside each wave: fills the wave maps
    full = {n for n, i in caches.declared().items() if i.entries}
    for name in ("synth.convert.wave_maps", "synth.cost.bank_conflict_degree", "synth.lds_path.designs",
                 "synth.emulator.cells", "synth.span.index_bits", "hw.lds.default_model"):
        assert name in full
    caches.clear(keep_tables=True)
    after = caches.declared()
    assert {n for n, i in after.items() if i.entries} == {n for n in full if after[n].table}
    caches.clear()
    assert all(i.entries == 0 for i in caches.declared().values())
    assert _plan_one().dumps() == plan.dumps()  # cold and warm plans agree


def test_lane_op_searches_are_cleared():
    from linlayout.hw.targets import get_target
    from linlayout.synth.lane_ops import find_lane_op

    need = np.arange(64) ^ 1
    op = find_lane_op(need, get_target("gfx942"))
    assert op.family == "dpp"
    assert caches.declared()["synth.lane_ops.dpp"].entries >= 1
    caches.clear()
    assert caches.declared()["synth.lane_ops.dpp"].entries == 0
    assert caches.declared()["synth.lane_ops.lane_op"].entries == 0


def test_cache_is_a_bounded_lru():
    c = Cache("test.lru", 2, False)
    c["a"], c["b"] = 1, 2
    assert c["a"] == 1  # a read makes "a" the most recent
    c["c"] = 3  # forgets "b", the least recently used
    assert "b" not in c and "a" in c and "c" in c and len(c) == 2
    calls = []
    assert c.lookup("d", lambda: calls.append(1) or 4) == 4
    assert c.lookup("d", lambda: calls.append(1) or 5) == 4 and calls == [1]
    assert "a" not in c and c.get("a", "none") == "none"


def test_declarations(monkeypatch):
    monkeypatch.setattr(caches, "_REGISTRY", dict(caches._REGISTRY))  # the test's caches go with the test
    monkeypatch.setattr(caches, "_TABLES", set(caches._TABLES))
    c = caches.cache("test.declared", size=3, table=True)
    assert caches.declared()["test.declared"] == CacheInfo("test.declared", 3, 0, True)
    with pytest.raises(RuntimeError, match="declared twice"):
        caches.cache("test.declared")

    @caches.memoize("test.memoized", size=2)
    def square(x):
        return x * x

    assert [square(i) for i in (1, 2, 3, 3)] == [1, 4, 9, 9]
    assert caches.declared()["test.memoized"] == CacheInfo("test.memoized", 2, 2, False)
    c[1] = 1
    caches.clear(keep_tables=True)
    assert len(c) == 1 and caches.declared()["test.memoized"].entries == 0
    caches.clear()
    assert len(c) == 0
    with pytest.raises(ValueError, match="positive number"):
        caches.cache("test.empty", size=0)
