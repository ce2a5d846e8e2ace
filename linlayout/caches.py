"""Every process-wide cache of linlayout, declared once by name, emptied by one :func:`clear`.

A module declares each cache it keeps where the cache lives, with a dotted name (its module and
the quantity it holds) and a size:

    _bank_cycles = caches.cache("synth.cost.bank_cycles", size=4096)       # a mapping
    @caches.memoize("synth.span.index_bits", table=True)                    # a function
    def _index_bits(k): ...

The one policy: **every cache is an LRU map bounded in entries**, ``DEFAULT_SIZE`` (512) unless its
declaration says otherwise; a cache that is full forgets its least recently used entry.  512 holds
every layout pair a compile session plans (a few hundred at most) and every entry of a table of
the instruction set (DPP controls, lane masks, selectors), so most caches take it; a declaration
that names another size states its reason next to it (more entries for a cache filled several
times per layout pair, fewer for one whose entries are large, one for an environment lookup).

``table=True`` marks a cache that depends on the targets and their instructions alone (never on
the layouts planned): :func:`clear` empties it too, ``clear(keep_tables=True)`` keeps it, which is
what a cold timing of the planner wants (the benchmarks).

Not here, by design: values memoized on one object live and die with that object (a
``LinearLayout``'s columns, rank and hash; the ``functools.cached_property`` attributes of
``linlayout.hw.lds.LdsOp``, of the search sides and candidates of ``linlayout.synth.swizzle``, of
the sides and ``LdsAccesses`` of ``linlayout.synth.lds_path`` and of ``linlayout.kernels.mfma_tiles.MfmaTiling``);
the compile cache of ``linlayout.lowering.compile`` is a directory on disk (``$LINLAYOUT_CACHE``).
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Hashable

__all__ = ["DEFAULT_SIZE", "Cache", "CacheInfo", "cache", "clear", "declared", "memoize"]

DEFAULT_SIZE = 512  # entries of a cache that names no size (see the module doc)

_MISSING = object()


@dataclass(frozen=True)
class CacheInfo:
    """One declared cache: its ``name``, ``size`` (most entries kept), ``entries`` (now) and
    ``table`` (depends on the targets alone)."""

    name: str
    size: int
    entries: int
    table: bool


class Cache:
    """A bounded LRU mapping (the registry's kind of cache for values looked up by key).

    ``cache[key]`` and ``get(key, default)`` read and make the entry the most recently used
    (``key in cache`` only tests); ``cache[key] = value`` adds, forgetting the least recently used
    entry beyond ``size``; ``lookup(key, compute)`` is the value, ``compute()`` kept on a miss.
    """

    __slots__ = ("name", "size", "table", "_data")

    def __init__(self, name: str, size: int, table: bool) -> None:
        self.name, self.size, self.table = name, size, table
        self._data: OrderedDict = OrderedDict()

    def __contains__(self, key: Hashable) -> bool:
        return key in self._data

    def __getitem__(self, key: Hashable) -> Any:
        value = self._data[key]
        self._data.move_to_end(key)
        return value

    def get(self, key: Hashable, default: Any = None) -> Any:
        value = self._data.get(key, _MISSING)
        if value is _MISSING:
            return default
        self._data.move_to_end(key)
        return value

    def __setitem__(self, key: Hashable, value: Any) -> None:
        data = self._data
        data[key] = value
        data.move_to_end(key)
        if len(data) > self.size:
            data.popitem(last=False)

    def lookup(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        value = self.get(key, _MISSING)
        if value is _MISSING:
            value = compute()
            self[key] = value
        return value

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        self._data.clear()


_REGISTRY: dict[str, Any] = {}  # name -> Cache, or an lru_cache wrapper (with cache_clear/cache_info)
_TABLES: set[str] = set()


def _declare(name: str, size: int, table: bool, entry: Any) -> None:
    if not isinstance(size, int) or size < 1:
        raise ValueError(f"cache {name!r}: size must be a positive number of entries, got {size!r}")
    if name in _REGISTRY:
        raise RuntimeError(f"cache {name!r} is declared twice")
    _REGISTRY[name] = entry
    if table:
        _TABLES.add(name)


def cache(name: str, size: int = DEFAULT_SIZE, *, table: bool = False) -> Cache:
    """Declare a :class:`Cache` called ``name`` keeping at most ``size`` entries."""
    c = Cache(name, size, table)
    _declare(name, size, table, c)
    return c


def memoize(name: str, size: int = DEFAULT_SIZE, *, table: bool = False) -> Callable[[Callable], Callable]:
    """Decorator: memoize a function of hashable arguments in a cache called ``name`` of at most
    ``size`` entries (``functools.lru_cache``: LRU, like :class:`Cache`)."""

    def deco(fn: Callable) -> Callable:
        wrapped = functools.lru_cache(maxsize=size)(fn)
        _declare(name, size, table, wrapped)
        return wrapped

    return deco


def clear(*, keep_tables: bool = False) -> None:
    """Empty every declared cache (``keep_tables``: all but the ``table=True`` ones)."""
    for name, entry in _REGISTRY.items():
        if keep_tables and name in _TABLES:
            continue
        (entry.clear if isinstance(entry, Cache) else entry.cache_clear)()


def declared() -> dict[str, CacheInfo]:
    """Every declared cache by name (the modules that declare them must be imported)."""
    out = {}
    for name, entry in sorted(_REGISTRY.items()):
        if isinstance(entry, Cache):
            size, entries = entry.size, len(entry)
        else:
            info = entry.cache_info()
            size, entries = info.maxsize, info.currsize
        out[name] = CacheInfo(name, size, entries, name in _TABLES)
    return out
