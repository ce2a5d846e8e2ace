"""Are two layouts the same map?  If not, an input where they differ.

``equivalent(A, B)`` aligns the dims of ``B`` to ``A`` by name (order does not
matter) and compares the image of every in bit.  Two linear maps differ on
``x`` exactly when ``(A xor B)(x) != 0``; if in bits ``0..j-1`` (flattened, ``A``'s
in-dim order, first dim least significant) have equal images and bit ``j``
does not, every ``x < 2**j`` gives equal outputs, so ``x = 2**j`` is the
smallest flat input where they differ.  That is the counterexample reported.

``flatten=True`` compares the maps between flattened index spaces instead:
each layout's in bits and out bits are numbered in its own dim order (first
dim least significant), so layouts with differently named or split dims can be
compared.  ``rename`` (``{old: new}``) renames ``B``'s in and out dims first.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Mapping

from .errors import LayoutError
from .layout import LinearLayout
from .layout_utils import rename_dims

__all__ = ["Equivalence", "equivalent"]


@dataclass(frozen=True)
class Equivalence:
    """The verdict of ``equivalent``.

    ``input`` is a counterexample in ``A``'s in dims (``input_b``: the same
    point in ``B``'s in dims, which differs only with ``flatten``), with both
    outputs; all four are None when the layouts are equal or when their dims
    differ so that no common input exists.  ``flat_input`` is the counterexample
    as one integer (``A``'s in bits, first dim least significant).
    """

    equal: bool
    reason: str
    input: dict | None = None
    output_a: dict | None = None
    output_b: dict | None = None
    input_b: dict | None = None
    flat_input: int | None = None

    def __bool__(self) -> bool:
        return self.equal

    def to_json(self) -> dict:
        return asdict(self)


def _split(layout: LinearLayout, flat: int) -> dict[str, int]:
    """A flat input as ``{in_dim: value}`` (first in dim least significant)."""
    out, shift = {}, 0
    for n, s in layout.in_dims:
        out[n] = (flat >> shift) & (s - 1)
        shift += s.bit_length() - 1
    return out


def _counterexample(a: LinearLayout, b: LinearLayout, j: int, reason: str) -> Equivalence:
    x = 1 << j
    ia, ib = _split(a, x), _split(b, x)
    return Equivalence(False, reason, ia, a.apply(ia), b.apply(ib), ib, x)


def _renamed(b: LinearLayout, rename: Mapping[str, str]) -> LinearLayout:
    if not isinstance(rename, Mapping):
        raise LayoutError(f"rename must be a mapping {{old: new}}, got {type(rename).__name__}")
    for old in rename:
        if not b.has_in_dim(old) and not b.has_out_dim(old):
            raise LayoutError(f"rename names {old!r}, which is not a dim of B (in {b.in_dim_names}, out {b.out_dim_names})")
    return rename_dims(
        b,
        {o: n for o, n in rename.items() if b.has_in_dim(o)},
        {o: n for o, n in rename.items() if b.has_out_dim(o)},
    )


def _dims_reason(kind: str, a: list[tuple[str, int]], b: list[tuple[str, int]]) -> str | None:
    na, nb = {n for n, _ in a}, {n for n, _ in b}
    if na != nb:
        return (
            f"{kind} dims differ: A has {sorted(na)}, B has {sorted(nb)} "
            "(use flatten=True to compare flattened index spaces)"
        )
    if kind == "in":
        sb = dict(b)
        for n, s in a:
            if sb[n] != s:
                return f"in dim {n!r} has size {s} in A and {sb[n]} in B"
    return None


def equivalent(
    a: LinearLayout, b: LinearLayout, *, flatten: bool = False, rename: Mapping[str, str] | None = None
) -> Equivalence:
    """Compare ``a`` and ``b`` as maps; a counterexample (smallest flat input) when they differ."""
    if not isinstance(a, LinearLayout) or not isinstance(b, LinearLayout):
        raise LayoutError("equivalent compares two LinearLayout objects")
    if rename:
        b = _renamed(b, rename)
    if flatten:
        return _equivalent_flat(a, b)
    for kind, da, db in (("in", a.in_dims, b.in_dims), ("out", a.out_dims, b.out_dims)):
        why = _dims_reason(kind, da, db)
        if why:
            return Equivalence(False, why)
    b = b.transpose_ins(a.in_dim_names).transpose_outs(a.out_dim_names)
    ca = [bb for n in a.in_dim_names for bb in a.bases[n]]
    cb = [bb for n in b.in_dim_names for bb in b.bases[n]]
    for j, (x, y) in enumerate(zip(ca, cb)):
        if x != y:
            name, bit = a._in_bit_name(j)
            return _counterexample(
                a, b, j, f"they differ at in dim {name!r} = {1 << bit}: A gives {list(x)}, B gives {list(y)}"
            )
    sizes_b = dict(b.out_dims)
    for o, s in a.out_dims:
        if sizes_b[o] != s:
            return Equivalence(False, f"same value on every input, but out dim {o!r} has size {s} in A and {sizes_b[o]} in B")
    return Equivalence(True, "same map on the same dims")


def _equivalent_flat(a: LinearLayout, b: LinearLayout) -> Equivalence:
    if a.total_in_bits != b.total_in_bits:
        return Equivalence(False, f"A has {a.total_in_size} flat inputs, B has {b.total_in_size}")
    for j, (x, y) in enumerate(zip(a.columns(), b.columns())):
        if x != y:
            return _counterexample(a, b, j, f"they differ at flat input {1 << j}: A gives flat {x}, B gives flat {y}")
    if a.total_out_bits != b.total_out_bits:
        return Equivalence(
            False, f"same flat value on every input, but A has {a.total_out_size} flat outputs and B {b.total_out_size}"
        )
    return Equivalence(True, "same map between the flattened index spaces")
