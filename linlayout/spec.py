"""Layout arguments as text: JSON, ``@file``, CuTe, or a named spec.

``parse_layout(text)`` tries, in this order:

1. ``@PATH``: the file's text, parsed by the rules below (no nested ``@``);
2. text starting with ``{``: layout JSON (docs/contract.md section 1), or an object
   whose ``"layout"`` key holds one (as ``linlayout show --json`` prints);
3. ``PREFIX:REST`` where ``PREFIX`` is a registered name (a letter then
   letters, digits, ``_``, ``-`` or ``.``): the registered parser gets ``REST``;
4. FlyDSL's printed text (``linlayout.flydsl_text``): ``Layout<...>`` as the CuTe layout it
   wraps, ``ComposedLayout<S<B,M,S> o 0 o ...>`` as a shared layout ``offset -> dim0, ...``;
   named specs ``tv:[MxN:]LAYOUT`` (a thread-value layout) and ``smem:LAYOUT`` choose the reading;
5. a CuTe layout (``linlayout.cute``), e.g. ``Sw<3,3,3> o (8,64):(64,1)``.

Other modules add named specs with ``register_named_layouts(prefix, parser,
help)``.  Modules listed in ``PROVIDERS`` are imported the first time an
unknown prefix is met, so they can register themselves on import.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from typing import Callable

from .cute import from_cute
from .errors import LayoutError
from .flydsl_text import from_flydsl, is_flydsl_text
from .layout import LinearLayout

__all__ = ["PROVIDERS", "named_layouts", "parse_layout", "register_named_layouts"]

# Modules that call register_named_layouts when imported (add yours here).
PROVIDERS: list[str] = ["linlayout.encodings.named"]

_REGISTRY: dict[str, tuple[Callable[[str], LinearLayout], str]] = {}
_PREFIX = re.compile(r"^([A-Za-z][A-Za-z0-9_.\-]*):(.*)$", re.S)
_loaded_providers = False


def register_named_layouts(prefix: str, parser: Callable[[str], LinearLayout], help: str) -> None:
    """Make ``PREFIX:REST`` parse as ``parser(REST)``; ``help`` is a one-line usage text.

    Registering the same parser again is a no-op; another parser for a taken
    prefix raises ``LayoutError``.
    """
    if not isinstance(prefix, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_.\-]*", prefix):
        raise LayoutError(f"named layout prefix {prefix!r} must be a letter followed by letters, digits, _ . -")
    if not callable(parser):
        raise LayoutError(f"named layout parser for {prefix!r} is not callable")
    old = _REGISTRY.get(prefix)
    if old is not None:
        if old[0] is not parser:
            raise LayoutError(f"named layout prefix {prefix!r} is already registered")
        return
    _REGISTRY[prefix] = (parser, help)


def named_layouts() -> dict[str, str]:
    """``{prefix: help}`` of every registered named spec (providers loaded)."""
    _load_providers()
    return {p: h for p, (_, h) in sorted(_REGISTRY.items())}


def _load_providers() -> None:
    global _loaded_providers
    if _loaded_providers:
        return
    _loaded_providers = True
    for mod in PROVIDERS:
        importlib.import_module(mod)


def _from_json_text(text: str) -> LinearLayout:
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise LayoutError(f"layout JSON does not parse: {e}") from None
    if isinstance(obj, dict) and "layout" in obj and "bases" not in obj:
        obj = obj["layout"]
    return LinearLayout.from_json(obj)


def _parse_text(text: str, source: str) -> LinearLayout:
    s = text.strip()
    if not s:
        raise LayoutError(f"{source} is empty")
    if s.startswith("{"):
        return _from_json_text(s)
    m = _PREFIX.match(s)
    if m:
        prefix, rest = m.group(1), m.group(2)
        if prefix not in _REGISTRY:
            _load_providers()
        if prefix in _REGISTRY:
            try:
                result = _REGISTRY[prefix][0](rest)
            except LayoutError:
                raise
            except (ValueError, TypeError, KeyError, IndexError, AttributeError) as e:
                raise LayoutError(f"named layout {prefix!r} rejected {_short(rest)}: {type(e).__name__}: {e}") from None
            if not isinstance(result, LinearLayout):
                raise LayoutError(f"named layout {prefix!r} did not produce a layout")
            return result
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise LayoutError(
            f"cannot parse layout {_short(s)}: {prefix!r} is not a registered named layout (known: {known}); "
            "expected layout JSON, @FILE, a CuTe layout or PREFIX:SPEC"
        )
    if is_flydsl_text(s):
        return from_flydsl(s)
    try:
        return from_cute(s)
    except LayoutError as e:
        raise LayoutError(
            f"cannot parse layout {_short(s)}: not layout JSON (no leading '{{'), not @FILE, "
            f"no PREFIX:SPEC, and as a CuTe layout: {e}"
        ) from None


def _short(s: str) -> str:
    return repr(s if len(s) <= 60 else s[:57] + "...")


def parse_layout(text: str) -> LinearLayout:
    """A ``LinearLayout`` from layout JSON text, ``@path``, a named spec, or a CuTe layout."""
    if not isinstance(text, str):
        raise LayoutError(f"a layout argument must be text, got {type(text).__name__}")
    s = text.strip()
    if s.startswith("@"):
        path = Path(s[1:])
        try:
            content = path.read_text()
        except (OSError, UnicodeDecodeError, ValueError) as e:
            raise LayoutError(f"cannot read layout file {str(path)!r}: {e}") from None
        if content.strip().startswith("@"):
            raise LayoutError(f"layout file {str(path)!r} refers to another file; nesting '@' is not supported")
        return _parse_text(content, f"layout file {str(path)!r}")
    return _parse_text(s, "layout argument")


_TV_TILE = re.compile(r"^\s*(\d+(?:x\d+)*)\s*:(.*)$", re.S)


def _tv_spec(rest: str) -> LinearLayout:
    """``[MxN:]LAYOUT``: FlyDSL or CuTe text read as a thread-value layout, over the tile MxN if given."""
    m = _TV_TILE.match(rest)
    if m is None:
        return from_flydsl(rest, "tv")
    return from_flydsl(m.group(2), "tv", tile=[int(e) for e in m.group(1).split("x")])


def _smem_spec(rest: str) -> LinearLayout:
    return from_flydsl(rest, "smem")


register_named_layouts("cute", from_cute, "cute:LAYOUT  a CuTe layout, e.g. cute:Sw<3,3,3> o (8,64):(64,1)")
register_named_layouts("tv", _tv_spec, "tv:[MxN:]LAYOUT  a FlyDSL/CuTe thread-value layout -> register, lane, warp, "
                       "e.g. tv:16x16:Layout<((16,4),4):((1,64),16)>")
register_named_layouts("smem", _smem_spec, "smem:LAYOUT  a FlyDSL/CuTe memory layout as a shared layout offset -> "
                       "dim0, dim1, e.g. smem:Layout<(128,64):(64,1)>")
