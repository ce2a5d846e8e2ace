"""Named layout specs for Triton's encodings (typed wherever a LAYOUT is accepted).

Registered with ``linlayout.spec.register_named_layouts`` on import.  A spec is
``PREFIX:ARGS`` with comma-separated ``key=value`` arguments (a few are
positional or bare flags); sizes and lists are written ``AxBxC``::

    mfma:32x32x8,warps=2x2,shape=64x64[,transposed][,bits=16][,tpw=2x1][,v=3]
    mfma.a:32x32x8,warps=2x2,kwidth=8,shape=64x32      operand A (M x K); mfma.b: operand B (K x N)
    wmma:16x16x16,v=2,warps=2x2,shape=32x32[,transposed][,tpw=..]   (v: 1 RDNA3, 2 RDNA4, 3 gfx1250)
    wmma.a:16x16x16,v=2,warps=2x2,kwidth=8,shape=32x16 ; wmma.b:...
    blocked:spt=1x8,tpw=8x8,wpc=4x1,order=1x0,shape=64x64
    swizzled:vec=8,phase=1,maxphase=8,order=1x0,shape=64x64
    rotating:vec=4,phase=2,maxphase=4,order=1x0,shape=64x64
    dotop:mfma(32x32x8,warps=2x2),op=0,kwidth=8,shape=64x32   any parent: mfma(...), wmma(...), blocked(...)
    slice:blocked(spt=1x4,tpw=8x8,wpc=4x1,order=1x0),dim=1,shape=64
    triton:{"encoding": "amd_mfma", "shape": [64, 64], ...}   the JSON of ``linlayout layout --triton``

Inside ``dotop``/``slice`` the parent is written ``name(args)`` without ``shape``.
Padded shared layouts are not linear, so they have no LAYOUT spec (use
``linlayout layout --triton`` or ``linlayout.encodings.padded_shared``).
"""

from __future__ import annotations

import json
from typing import Callable

from ..errors import LayoutError
from ..layout import LinearLayout
from ..spec import register_named_layouts
from .blocked import Blocked
from .dot_operand import DotOperand
from .mfma import Mfma
from .shared import AmdRotatingShared, SwizzledShared
from .slice import Slice
from .triton import from_triton
from .wmma import Wmma

__all__ = ["parse_named", "parse_encoding_spec", "SPEC_HELP"]


class _Args:
    """The parsed argument list of one spec: positionals, ``key=value`` pairs and flags."""

    def __init__(self, spec: str, text: str) -> None:
        self.spec = spec
        self.positional: list[str] = []
        self.values: dict[str, str] = {}
        for item in _split_top(text, spec):
            if "=" in item and "(" not in item.split("=", 1)[0]:
                key, value = (s.strip() for s in item.split("=", 1))
                if key in self.values:
                    raise LayoutError(f"{spec}: argument {key!r} is given twice")
                self.values[key] = value
            else:
                self.positional.append(item)
        self._used: set[str] = set()

    def take(self, key: str, convert: Callable[[str, str], object], default: object = ...) -> object:
        self._used.add(key)
        if key not in self.values:
            if default is ...:
                raise LayoutError(f"{self.spec}: missing argument {key}=...")
            return default
        return convert(self.values[key], f"{self.spec} argument {key}")

    def flag(self, name: str) -> bool:
        if name in self.positional:
            self.positional.remove(name)
            return True
        return False

    def done(self) -> None:
        unknown = sorted(set(self.values) - self._used)
        if unknown:
            raise LayoutError(f"{self.spec}: unknown argument(s) {unknown}")
        if self.positional:
            raise LayoutError(f"{self.spec}: unexpected argument(s) {self.positional}")


def _split_top(text: str, spec: str) -> list[str]:
    """``text`` split at commas outside parentheses; empty items are errors."""
    items, depth, cur = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise LayoutError(f"{spec}: unbalanced ')' in {text!r}")
        if ch == "," and depth == 0:
            items.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if depth:
        raise LayoutError(f"{spec}: unbalanced '(' in {text!r}")
    items.append("".join(cur).strip())
    if any(not i for i in items):
        raise LayoutError(f"{spec}: empty argument in {text!r}")
    return items


def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise LayoutError(f"{what}: {text!r} is not an integer") from None


def _sizes(text: str, what: str) -> list[int]:
    """``AxBxC`` -> ``[A, B, C]``."""
    return [_int(p, what) for p in text.lower().split("x")]


def _instr(args: _Args, default: list[int] | None = None) -> list[int]:
    shapes = [p for p in args.positional if p[:1].isdigit()]
    if len(shapes) > 1:
        raise LayoutError(f"{args.spec}: more than one instruction shape {shapes}")
    if not shapes:
        if default is None:
            raise LayoutError(f"{args.spec}: missing the instruction shape (e.g. 32x32x8)")
        return default
    args.positional.remove(shapes[0])
    return _sizes(shapes[0], f"{args.spec} instruction shape")


def _mfma(args: _Args) -> Mfma:
    instr = _instr(args)
    transposed = args.flag("transposed")
    return Mfma(args.take("v", _int, 3), instr, args.take("warps", _sizes), transposed,
                args.take("tpw", _sizes, None), args.take("bits", _int, 32))


def _wmma(args: _Args) -> Wmma:
    instr = _instr(args, [16, 16, 16])
    transposed = args.flag("transposed")
    return Wmma(args.take("v", _int), args.take("warps", _sizes), transposed, instr, args.take("tpw", _sizes, None))


def _blocked(args: _Args) -> Blocked:
    return Blocked(args.take("spt", _sizes), args.take("tpw", _sizes), args.take("wpc", _sizes),
                   args.take("order", _sizes))


def _swizzled(cls: type) -> Callable[[_Args], object]:
    def build(args: _Args) -> object:
        return cls(args.take("vec", _int), args.take("phase", _int), args.take("maxphase", _int),
                   args.take("order", _sizes))
    return build


#: Encodings written ``name(args)`` inside dotop/slice, or ``name:args,shape=...`` on their own.
_ENCODINGS: dict[str, Callable[[_Args], object]] = {
    "mfma": _mfma,
    "wmma": _wmma,
    "blocked": _blocked,
    "swizzled": _swizzled(SwizzledShared),
    "rotating": _swizzled(AmdRotatingShared),
}


def parse_encoding_spec(text: str) -> object:
    """An encoding object from ``name(args)`` (no shape), e.g. ``mfma(32x32x8,warps=2x2)``."""
    s = text.strip()
    open_at = s.find("(")
    if open_at < 0 or not s.endswith(")"):
        raise LayoutError(f"parent {s!r} is not written name(args), e.g. mfma(32x32x8,warps=2x2)")
    name = s[:open_at].strip()
    if name not in _ENCODINGS:
        raise LayoutError(f"parent {s!r}: unknown encoding {name!r} (known: {', '.join(_ENCODINGS)})")
    args = _Args(name, s[open_at + 1 : -1])
    enc = _ENCODINGS[name](args)
    args.done()
    return enc


def _parent(args: _Args) -> object:
    parents = [p for p in args.positional if "(" in p]
    if len(parents) != 1:
        raise LayoutError(f"{args.spec}: expected exactly one parent written name(args), got {parents or 'none'}")
    args.positional.remove(parents[0])
    return parse_encoding_spec(parents[0])


def parse_named(prefix: str, text: str) -> LinearLayout:
    """The layout of the named spec ``prefix:text`` (see the module docstring)."""
    if prefix == "triton":
        try:
            obj = json.loads(text)
        except ValueError as e:
            raise LayoutError(f"triton: the argument is not JSON: {e}") from None
        result = from_triton(obj)
        if not isinstance(result, LinearLayout):
            raise LayoutError("triton: padded_shared is not a linear layout; use `linlayout layout --triton`")
        return result
    args = _Args(prefix, text)
    base, _, operand = prefix.partition(".")
    if prefix == "dotop":
        enc = DotOperand(_parent(args), args.take("op", _int), args.take("kwidth", _int, 0))
    elif prefix == "slice":
        enc = Slice(_parent(args), args.take("dim", _int))
    elif operand in ("a", "b") and base in ("mfma", "wmma"):
        enc = DotOperand(_ENCODINGS[base](args), 0 if operand == "a" else 1, args.take("kwidth", _int))
    elif prefix in _ENCODINGS:
        enc = _ENCODINGS[prefix](args)
    else:
        raise LayoutError(f"unknown named layout {prefix!r}")
    shape = args.take("shape", _sizes)
    args.done()
    return enc.to_linear_layout(shape)


#: ``{prefix: one-line usage}`` of the specs this module registers.
SPEC_HELP = {
    "mfma": "mfma:32x32x8,warps=2x2,shape=64x64[,transposed][,bits=16][,tpw=1x1][,v=3]  Triton MFMA accumulator",
    "mfma.a": "mfma.a:32x32x8,warps=2x2,kwidth=8,shape=64x32  Triton MFMA operand A (M x K)",
    "mfma.b": "mfma.b:32x32x8,warps=2x2,kwidth=8,shape=32x64  Triton MFMA operand B (K x N)",
    "wmma": "wmma:16x16x16,v=2,warps=2x2,shape=32x32[,transposed][,tpw=1x1]  Triton WMMA accumulator",
    "wmma.a": "wmma.a:16x16x16,v=2,warps=2x2,kwidth=8,shape=32x16  Triton WMMA operand A",
    "wmma.b": "wmma.b:16x16x16,v=2,warps=2x2,kwidth=8,shape=16x32  Triton WMMA operand B",
    "blocked": "blocked:spt=1x8,tpw=8x8,wpc=4x1,order=1x0,shape=64x64  Triton blocked layout",
    "swizzled": "swizzled:vec=8,phase=1,maxphase=8,order=1x0,shape=64x64  Triton swizzled shared layout",
    "rotating": "rotating:vec=4,phase=2,maxphase=4,order=1x0,shape=64x64  Triton AMD rotating shared layout",
    "dotop": "dotop:mfma(32x32x8,warps=2x2),op=0,kwidth=8,shape=64x32  dot operand of any parent",
    "slice": "slice:blocked(spt=1x4,tpw=8x8,wpc=4x1,order=1x0),dim=1,shape=64  slice of any parent",
    "triton": 'triton:{"encoding": "amd_mfma", "shape": [64, 64], ...}  Triton encoding params (JSON)',
}

for _prefix, _help in SPEC_HELP.items():
    register_named_layouts(_prefix, (lambda p: lambda rest: parse_named(p, rest))(_prefix), _help)
