"""CuTe layouts as linear layouts: parse ``shape:stride`` (with swizzles) and print them back.

A CuTe layout maps a *coordinate* to an *offset*.  The coordinate is a flat
index ``x`` in ``[0, size)`` split colexicographically over the (nested) shape,
first mode fastest: for ``(8,(4,8))`` the mode extents in order are 8, 4, 8, so
``x = c0 + 8*c1 + 32*c2``.  The offset is ``sum(c_i * stride_i)``.

When every extent and every stride is a power of two (stride 0 = broadcast) and
no two modes reach the same offset bit, that integer sum has no carries and
equals the XOR of the bits' images, so the layout is GF(2)-linear: in bit
``j`` of ``x`` maps to one offset bit.  ``from_cute`` returns that map as a
``LinearLayout`` from in dim ``coord`` (the flat coordinate; or one in dim per
top-level mode when ``in_dim`` is a list) to out dim ``offset``.  Anything else
is not linear over GF(2) and raises ``LayoutError`` naming the mode and why.

Syntax (CuTe's own printing, plus a composition operator)::

    LAYOUT   := TERM ( ("o" | "∘") TERM )*     rightmost term applied first
    TERM     := SHAPE [":" STRIDE] | SWIZZLE | "0" | "_0"
    SHAPE    := INT | "(" SHAPE ("," SHAPE)* ")"      STRIDE congruent with SHAPE
    SWIZZLE  := ("Sw" | "Swizzle") "<" B "," M "," S ">"
    INT      := digits, optionally "_"-prefixed (CuTe's static integers)

* ``SHAPE`` without ``:STRIDE`` gets compact colexicographic strides (1, e0, e0*e1, ...).
* ``Sw<B,M,S>`` is CuTe's swizzle functor ``y = x ^ ((x & Ymask) >> S)`` with
  ``Ymask`` the B bits from bit ``M + max(S, 0)`` and target bits from
  ``M - min(S, 0)`` (a negative ``S`` shifts left).  CuTe requires ``|S| >= B``;
  then source and target bits are disjoint and the swizzle is an involution.
  A bare swizzle acts on the offsets below ``2**(M + |S| + B)``.
* ``Sw<3,3,3> o (8,64):(64,1)`` is the swizzle applied to the offset produced
  by the layout (CuTe's ``composition(Swizzle, Layout)``); CuTe prints it as
  ``Sw<3,3,3> o _0 o (8,64):(64,1)``: a middle term ``0``/``_0`` is that zero
  offset and is accepted (a non-zero offset is affine, not linear).
* A term's output must lie inside the domain of the term on its left.

The out dim size is the smallest power of two holding every offset unless
``out_size`` is given.  Sizes are capped at ``2**64`` (``MAX_BITS``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence, Union

from . import f2
from .errors import LayoutError
from .layout import LinearLayout

__all__ = ["MAX_BITS", "Swizzle", "from_cute", "swizzle_layout", "to_cute", "top_level_modes"]

MAX_BITS = 64  # largest domain / codomain handled, in bits (as Triton's getMatrix)

Nested = Union[int, tuple]


@dataclass(frozen=True)
class Swizzle:
    """CuTe's ``Swizzle<B,M,S>``: ``y = x ^ ((x & ymask) >> S)`` (``S < 0``: shift left)."""

    bits: int
    base: int
    shift: int

    def __post_init__(self) -> None:
        b, m, s = self.bits, self.base, self.shift
        if b < 0 or m < 0:
            raise LayoutError(f"Swizzle<{b},{m},{s}>: B and M must be non-negative")
        if abs(s) < b:
            raise LayoutError(
                f"Swizzle<{b},{m},{s}>: |S|={abs(s)} is smaller than B={b}, so its source bits "
                f"[{self.src_lo}, {self.src_lo + b}) overlap its target bits [{self.dst_lo}, {self.dst_lo + b}) "
                f"(CuTe requires |S| >= B)"
            )
        if self.top_bit > MAX_BITS:
            raise LayoutError(f"Swizzle<{b},{m},{s}> reaches bit {self.top_bit - 1}, beyond {MAX_BITS} bits")

    @property
    def src_lo(self) -> int:
        """Lowest source (``yyy``) bit."""
        return self.base + max(self.shift, 0)

    @property
    def dst_lo(self) -> int:
        """Lowest target (``zzz``) bit."""
        return self.base - min(self.shift, 0)

    @property
    def top_bit(self) -> int:
        """One above the highest bit the swizzle reads or writes (0 when ``B == 0``)."""
        return max(self.src_lo, self.dst_lo) + self.bits if self.bits else 0

    def __call__(self, x: int) -> int:
        y = x & (((1 << self.bits) - 1) << self.src_lo)
        return x ^ (y >> self.shift if self.shift >= 0 else y << -self.shift)

    def __str__(self) -> str:
        return f"Sw<{self.bits},{self.base},{self.shift}>"


# ------------------------------------------------------------------ parsing
_TOKEN = re.compile(
    r"\s*(?:(?P<sw>Swizzle|Sw)\s*<\s*(?P<b>[-+]?\d{1,4})\s*,\s*(?P<m>[-+]?\d{1,4})\s*,\s*(?P<s>[-+]?\d{1,4})\s*>"
    r"|(?P<int>_?\d+)|(?P<punct>[(),:])|(?P<comp>∘|o(?![A-Za-z0-9_])))"
)
_MAX_DIGITS = 20  # no extent or stride below 2**64 needs more
_MAX_DEPTH = 32  # nesting depth of shapes


def _tokens(text: str) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if text[pos:].lstrip().startswith("-"):
            raise LayoutError(f"CuTe layout {text!r}: negative numbers (strides) are not linear over GF(2)")
        if not m or m.end() == pos:
            raise LayoutError(f"CuTe layout {text!r}: unexpected text at position {pos}: {text[pos:pos + 12]!r}")
        pos = m.end()
        if m.group("sw"):
            out.append(("sw", Swizzle(int(m.group("b")), int(m.group("m")), int(m.group("s")))))
        elif m.group("int"):
            digits = m.group("int").lstrip("_")
            if len(digits) > _MAX_DIGITS:
                raise LayoutError(f"CuTe layout {text!r}: integer {digits[:12]}... is too large")
            out.append(("int", int(digits)))
        elif m.group("punct"):
            out.append((m.group("punct"), None))
        else:
            out.append(("o", None))
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> str | None:
        return self.toks[self.i][0] if self.i < len(self.toks) else None

    def take(self, kind: str):
        if self.peek() != kind:
            got = self.peek() or "end of text"
            raise LayoutError(f"CuTe layout {self.text!r}: expected {kind!r}, found {got!r}")
        self.i += 1
        return self.toks[self.i - 1][1]

    def nested(self, depth: int = 0) -> Nested:
        if self.peek() == "int":
            return self.take("int")
        if depth >= _MAX_DEPTH:
            raise LayoutError(f"CuTe layout {self.text[:40]!r}...: shapes nested deeper than {_MAX_DEPTH} levels")
        self.take("(")
        items = []
        if self.peek() != ")":
            items.append(self.nested(depth + 1))
            while self.peek() == ",":
                self.take(",")
                items.append(self.nested(depth + 1))
        self.take(")")
        return tuple(items)

    def term(self):
        """A swizzle, a zero offset (``("offset", n)``) or a layout ``(shape, stride|None)``."""
        if self.peek() == "sw":
            return self.take("sw")
        shape = self.nested()
        if self.peek() == ":":
            self.take(":")
            return ("layout", shape, self.nested())
        return ("layout", shape, None)

    def chain(self) -> list:
        if not self.toks:
            raise LayoutError("CuTe layout is empty")
        terms = [self.term()]
        while self.peek() == "o":
            self.take("o")
            terms.append(self.term())
        if self.peek() is not None:
            raise LayoutError(f"CuTe layout {self.text!r}: unexpected {self.peek()!r} after the layout")
        # A bare integer that is not the rightmost term is CuTe's offset (must be 0).
        for k, t in enumerate(terms[:-1]):
            if isinstance(t, tuple) and t[2] is None and isinstance(t[1], int):
                if t[1] != 0:
                    raise LayoutError(
                        f"CuTe layout {self.text!r}: offset {t[1]} in the composition is not 0; "
                        "an offset makes the map affine, not linear"
                    )
                terms[k] = None
        return [t for t in terms if t is not None]


def _leaves(shape: Nested, stride: Nested | None, path: str) -> list[tuple[str, int, int]]:
    """``(mode path, extent, stride)`` of every leaf mode, colexicographic order."""
    if isinstance(shape, int):
        if stride is not None and not isinstance(stride, int):
            raise LayoutError(f"stride {_fmt(stride)} of mode {path} is a tuple but its shape is {shape}")
        return [(path, shape, stride)]  # type: ignore[list-item]
    if stride is not None and (isinstance(stride, int) or len(stride) != len(shape)):
        raise LayoutError(f"stride {_fmt(stride)} of mode {path} is not congruent with its shape {_fmt(shape)}")
    out = []
    for k, sub in enumerate(shape):
        out += _leaves(sub, None if stride is None else stride[k], f"{path}.{k}" if path else str(k))
    return out


def _fmt(x: Nested) -> str:
    return str(x) if isinstance(x, int) else "(" + ",".join(_fmt(y) for y in x) + ")"


def _layout_columns(shape: Nested, stride: Nested | None) -> tuple[list[int], list[int]]:
    """Columns (offset of each coordinate bit) and the bit count of each top-level mode."""
    top = [shape] if isinstance(shape, int) else list(shape)
    top_stride = None if stride is None else ([stride] if isinstance(shape, int) else stride)
    if top_stride is not None and (isinstance(top_stride, int) or len(top_stride) != len(top)):
        raise LayoutError(f"stride {_fmt(stride)} is not congruent with shape {_fmt(shape)}")
    cols: list[int] = []
    counts: list[int] = []
    owner: dict[int, tuple[str, int, int]] = {}  # offset bit -> (mode, extent, stride)
    compact = 1
    for k, sub in enumerate(top):
        leaves = _leaves(sub, None if top_stride is None else top_stride[k], str(k))
        n = 0
        for path, extent, d in leaves:
            if extent < 1 or extent & (extent - 1):
                raise LayoutError(
                    f"extent {extent} of mode {path} is not a power of two: its coordinate is not a "
                    "bit field of the index, so the map is not linear over GF(2)"
                )
            k_bits = extent.bit_length() - 1
            if d is None:
                d = compact
            compact *= extent
            if k_bits and d and d & (d - 1):
                raise LayoutError(f"stride {d} of mode {path} is not a power of two: the map is not linear over GF(2)")
            if len(cols) + k_bits > MAX_BITS:
                raise LayoutError(f"the layout has more than 2**{MAX_BITS} coordinates")
            for i in range(k_bits):
                c = d << i if d else 0
                if c:
                    b = c.bit_length() - 1
                    if b >= MAX_BITS:
                        raise LayoutError(f"mode {path} reaches offset 2**{b}, beyond {MAX_BITS} bits")
                    if b in owner:
                        p2, e2, d2 = owner[b]
                        raise LayoutError(
                            f"modes {p2} and {path} both reach offset bit {b} (stride {d2} x extent {e2} and "
                            f"stride {d} x extent {extent}): integer addition carries there, so the map is "
                            "not linear over GF(2)"
                        )
                    owner[b] = (path, extent, d)
                cols.append(c)
            n += k_bits
        counts.append(n)
    return cols, counts


def _swizzle_columns(sw: Swizzle, n_bits: int) -> list[int]:
    return [sw(1 << i) for i in range(max(n_bits, sw.top_bit))]


def swizzle_layout(sw: Swizzle, n_bits: int, in_dim: str = "offset", out_dim: str = "offset") -> LinearLayout:
    """The swizzle as a layout on ``max(n_bits, sw.top_bit)`` offset bits."""
    cols = _swizzle_columns(sw, n_bits)
    size = 1 << len(cols)
    return LinearLayout._from_columns([(in_dim, size)], [(out_dim, size)], cols)


def top_level_modes(text: str) -> int:
    """The number of top-level modes of the rightmost layout term of CuTe ``text`` (an integer
    shape is one mode; a bare swizzle, one)."""
    if not isinstance(text, str):
        raise LayoutError(f"CuTe layout must be a string, got {type(text).__name__}")
    last = _Parser(text).chain()[-1]
    return 1 if isinstance(last, Swizzle) or isinstance(last[1], int) else len(last[1])


def from_cute(
    text: str,
    in_dim: Union[str, Sequence[str]] = "coord",
    out_dim: str = "offset",
    out_size: int | None = None,
) -> LinearLayout:
    """The CuTe layout ``text`` as a ``LinearLayout`` (coordinate -> offset).

    ``in_dim``: one name (the flat colexicographic coordinate) or one name per
    top-level mode of the rightmost layout term (a list of one name is one name).  ``out_size``: the out dim
    size (default: the smallest power of two holding every offset).
    """
    if not isinstance(text, str):
        raise LayoutError(f"CuTe layout must be a string, got {type(text).__name__}")
    terms = _Parser(text).chain()
    cols: list[int] | None = None
    counts: list[int] = []
    domain_bits = 0
    for t in reversed(terms):
        if isinstance(t, Swizzle):
            width = domain_bits if cols is None else max((c.bit_length() for c in cols), default=0)
            sw_cols = _swizzle_columns(t, width)
            if cols is None:
                cols, counts = sw_cols, [len(sw_cols)]
            else:
                cols = [f2.apply_columns(sw_cols, c) for c in cols]
            continue
        _, shape, stride = t
        t_cols, t_counts = _layout_columns(shape, stride)
        if cols is None:
            cols, counts = t_cols, t_counts
            continue
        size = 1 << len(t_cols)
        top = max(cols, default=0)
        if top.bit_length() > len(t_cols):
            raise LayoutError(
                f"CuTe layout {text!r}: the inner map reaches offset bit {top.bit_length() - 1}, outside the "
                f"domain of size {size} of the layout {_fmt(shape)} it feeds"
            )
        cols = [f2.apply_columns(t_cols, c) for c in cols]
    assert cols is not None
    need = 1 << max((c.bit_length() for c in cols), default=0)
    if out_size is None:
        out_size = need
    elif isinstance(out_size, bool) or not isinstance(out_size, int) or out_size < need or out_size & (out_size - 1):
        raise LayoutError(f"out_size {out_size!r} is not a power of two >= {need}, the offsets' range")
    names = [in_dim] if isinstance(in_dim, str) else list(in_dim)
    if len(names) == 1:
        ins = [(names[0], 1 << len(cols))]
    else:
        if len(names) != len(counts):
            raise LayoutError(f"in_dim names {names} do not match the layout's {len(counts)} top-level modes")
        ins = [(n, 1 << k) for n, k in zip(names, counts)]
    for n, _ in ins:
        if not isinstance(n, str) or not n:
            raise LayoutError(f"in dim name {n!r} is not a non-empty string")
    return LinearLayout._from_columns(ins, [(out_dim, out_size)], cols)


# ----------------------------------------------------------------- printing
def _runs(cols: Sequence[int]) -> list[tuple[int, int]] | None:
    """Split one in dim's columns into CuTe modes ``(extent, stride)``, or None."""
    runs: list[list[int]] = []
    for c in cols:
        if c & (c - 1):
            return None
        if runs and ((c == 0 and runs[-1][1] == 0) or (c and c == runs[-1][1] << runs[-1][0].bit_length() - 1)):
            runs[-1][0] *= 2
        else:
            runs.append([2, c])
    return [(e, s) for e, s in runs]


def _plain(per_dim: list[list[int]]) -> str | None:
    """``shape:stride`` for the columns of each in dim, or None when not representable."""
    nonzero = [c for cols in per_dim for c in cols if c]
    if len(set(nonzero)) != len(nonzero):
        return None
    modes = []
    for cols in per_dim:
        r = _runs(cols)
        if r is None:
            return None
        modes.append(r or [(1, 0)])
    if len(modes) == 1:
        m = modes[0]
        if len(m) == 1:
            return f"{m[0][0]}:{m[0][1]}"
        return "(" + ",".join(str(e) for e, _ in m) + "):(" + ",".join(str(s) for _, s in m) + ")"

    def one(m, k):
        return str(m[0][k]) if len(m) == 1 else "(" + ",".join(str(x[k]) for x in m) + ")"

    return "(" + ",".join(one(m, 0) for m in modes) + "):(" + ",".join(one(m, 1) for m in modes) + ")"


def to_cute(layout: LinearLayout) -> str:
    """CuTe text for a layout with one out dim: ``shape:stride``, or ``Sw<B,M,S> o shape:stride``.

    One in dim gives a flat mode list; several in dims give one top-level mode
    per in dim (``from_cute(text, in_dim=[...])`` reads that back).  Raises
    ``LayoutError`` when no such form exists (an in bit reaching several offset
    bits that no swizzle explains, or two in bits reaching the same one).
    """
    if len(layout.out_dims) != 1:
        raise LayoutError(
            f"to_cute needs exactly one out dim (the offset), the layout has {layout.out_dim_names}; "
            "use flatten_outs() first"
        )
    if not layout.in_dims:
        raise LayoutError("to_cute needs at least one in dim")
    cols = layout.columns()
    split, j = [], 0
    for _, s in layout.in_dims:
        k = s.bit_length() - 1
        split.append(cols[j : j + k])
        j += k
    text = _plain(split)
    if text is not None:
        return text
    # A swizzle is invertible, so it cannot separate equal columns; it can only
    # help when some column has several bits, and it must make that one a single bit.
    multi = next((c for c in cols if c & (c - 1)), None)
    n = min(layout.total_out_bits, MAX_BITS)
    for b in range(1, n + 1 if multi is not None else 1):
        for shift in range(b, n - b + 1):
            for m in range(0, n - b - shift + 1):
                for s in (shift, -shift):
                    sw = Swizzle(b, m, s)
                    y = sw(multi)
                    if y & (y - 1):
                        continue
                    text = _plain([[sw(c) for c in part] for part in split])
                    if text is not None:
                        return f"{sw} o {text}"
    name, bit = layout._in_bit_name(next(j for j, c in enumerate(cols) if c & (c - 1) or cols.count(c) > 1 and c))
    raise LayoutError(
        f"layout is not a CuTe layout: in dim {name!r} bit {bit} maps to offset {layout.basis(name, bit)[0]}, "
        "which is not a distinct power of two, and no Sw<B,M,S> o shape:stride form matches"
    )
