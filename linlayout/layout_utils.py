"""Layout utilities built on ``LinearLayout`` (Triton's LayoutUtils, in Python)."""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from . import f2
from .errors import LayoutError
from .layout import LinearLayout, _check_layout

__all__ = [
    "ensure_layout_not_larger_than",
    "ensure_layout_not_smaller_than",
    "factor_maximal_identity_prefix",
    "get_input_basis_mask",
    "get_output_basis_mask",
    "get_reps",
    "identity_standard_nd",
    "is_image_subset",
    "rename_dims",
    "square_sublayout_is_identity",
    "zeros_like",
]


def get_reps(cvt: LinearLayout, tile: LinearLayout) -> LinearLayout | None:
    """``cvt`` with the ``tile`` part zeroed: the repetitions of ``tile`` inside ``cvt``.

    For every in dim of ``tile``, the first bases of ``cvt`` must equal the
    tile's, and every remaining basis of ``cvt`` must avoid the out bits the tile
    uses.  Those first bases become 0; the others are kept unshifted (unlike
    ``divide_left``, the tile need not own the low bits of each out dim).
    Returns None when ``cvt`` does not contain ``tile`` that way.
    """
    _check_layout(cvt, "get_reps")
    _check_layout(tile, "get_reps")
    outs = cvt.out_dim_names
    used = {o: 0 for o in outs}
    for o in tile.out_dim_names:
        if o not in used:
            return None
    t_idx = {o: i for i, o in enumerate(tile.out_dim_names)}
    for n, _ in tile.in_dims:
        if not cvt.has_in_dim(n):
            return None
        for b in tile.bases[n]:
            for o, i in t_idx.items():
                used[o] |= b[i]
    bases = {}
    for n, _ in cvt.in_dims:
        tb = tile.bases.get(n, []) if tile.has_in_dim(n) else []
        cb = cvt.bases[n]
        if len(tb) > len(cb):
            return None
        new = []
        for i, b in enumerate(cb):
            if i < len(tb):
                want = [tb[i][t_idx[o]] if o in t_idx else 0 for o in outs]
                if list(b) != want:
                    return None
                new.append([0] * len(outs))
            else:
                if any(c & used[o] for o, c in zip(outs, b)):
                    return None
                new.append(list(b))
        bases[n] = new
    return LinearLayout(bases, cvt.out_dims)


def factor_maximal_identity_prefix(
    ll: LinearLayout, in_dim: str, out_dim: str, max_size: int | None = None
) -> tuple[int, LinearLayout]:
    """Largest ``k <= max_size`` with ``identity_1d(k, in_dim, out_dim) * Q == ll``; returns ``(k, Q)``.

    Triton's ``factorMaximalIdentityPrefix``; ``k = 1, Q = ll`` when no prefix exists.
    """
    _check_layout(ll, "factor_maximal_identity_prefix")
    return ll.factor_maximal_identity_prefix(in_dim, out_dim, max_size)


def square_sublayout_is_identity(ll: LinearLayout, dims: Sequence[str]) -> bool:
    """On ``dims`` (each both an in and an out dim of equal size) the layout is the identity.

    The sublayout ``dims -> dims`` is flattened (dims in the layout's own order,
    first least significant) and must send in bit ``i`` to out bit ``i``.  Other
    in dims may still touch these out dims.  True for no dims.
    """
    _check_layout(ll, "square_sublayout_is_identity")
    dims = list(dims)
    if not dims:
        return True
    for d in dims:
        if not ll.has_in_dim(d) or not ll.has_out_dim(d) or ll.in_dim_size(d) != ll.out_dim_size(d):
            return False
    flat = ll.sublayout(dims, dims).columns()
    return flat == [1 << i for i in range(len(flat))]


def zeros_like(ll: LinearLayout) -> LinearLayout:
    """Same dims and sizes, every basis 0."""
    _check_layout(ll, "zeros_like")
    zero = [0] * len(ll.out_dims)
    return LinearLayout({n: [zero] * (s.bit_length() - 1) for n, s in ll.in_dims}, ll.out_dims)


def get_output_basis_mask(ll: LinearLayout, ins: Iterable[str], out_dim: str) -> int:
    """OR of the ``out_dim`` components of every basis of ``ins`` (Triton's ``getBasisMask``)."""
    _check_layout(ll, "get_output_basis_mask")
    m = 0
    for d in ins:
        for i in range(ll.in_dim_size_log2(d)):
            m |= ll.basis(d, i, out_dim)
    return m


def get_input_basis_mask(ll: LinearLayout, in_dim: str, outs: Iterable[str]) -> int:
    """Bit ``i`` set when basis ``i`` of ``in_dim`` is non-zero in any of ``outs``."""
    _check_layout(ll, "get_input_basis_mask")
    outs = list(outs)
    m = 0
    for i in range(ll.in_dim_size_log2(in_dim)):
        if any(ll.basis(in_dim, i, o) for o in outs):
            m |= 1 << i
    return m


def _shape_pairs(ll: LinearLayout, shape) -> list[tuple[str, int]]:
    """``shape`` as ``[(out_dim, size)]``: a mapping, pairs, or sizes in out-dim order."""
    if isinstance(shape, Mapping):
        pairs = list(shape.items())
    else:
        shape = list(shape)
        if all(isinstance(x, (tuple, list)) for x in shape):
            pairs = [(n, s) for n, s in shape]
        else:
            if len(shape) != len(ll.out_dims):
                raise LayoutError(f"shape {shape} has {len(shape)} sizes but the layout has out dims {ll.out_dim_names}")
            pairs = list(zip(ll.out_dim_names, shape))
    for n, s in pairs:
        if not ll.has_out_dim(n):
            raise LayoutError(f"shape names out dim {n!r}, not one of {ll.out_dim_names}")
        if isinstance(s, bool) or not isinstance(s, int) or s < 1 or s & (s - 1):
            raise LayoutError(f"shape size {s!r} of out dim {n!r} is not a power of two")
    return pairs


def ensure_layout_not_larger_than(ll: LinearLayout, shape, broadcast_registers: bool = True) -> LinearLayout:
    """Clamp each out dim to ``shape``: basis components ``>= size`` become 0 (broadcast).

    In-dim sizes are unchanged, except that with ``broadcast_registers=False``
    the ``register`` bases that became 0 are dropped.
    """
    _check_layout(ll, "ensure_layout_not_larger_than")
    pairs = dict(_shape_pairs(ll, shape))
    outs = [(o, min(s, pairs.get(o, s))) for o, s in ll.out_dims]
    bases = {}
    for n, _ in ll.in_dims:
        new = []
        for b in ll.bases[n]:
            nb = [c if c < size else 0 for c, (_, size) in zip(b, outs)]
            if n == "register" and not broadcast_registers and any(b) and not any(nb):
                continue
            new.append(nb)
        bases[n] = new
    return LinearLayout(bases, outs)


def ensure_layout_not_smaller_than(ll: LinearLayout, shape) -> LinearLayout:
    """Grow each out dim to ``shape`` by ``* identity_1d(shape / size, first_in_dim, out)``.

    The first in dim (``register`` or ``offset``) receives the new bits, out dims
    taken in the layout's out-dim order (Triton's ``ensureLayoutNotSmallerThan``).
    """
    _check_layout(ll, "ensure_layout_not_smaller_than")
    pairs = dict(_shape_pairs(ll, shape))
    if not ll.in_dims:
        raise LayoutError("ensure_layout_not_smaller_than needs a layout with an in dim")
    first = ll.in_dim_names[0]
    if first not in ("register", "offset"):
        raise LayoutError(f"ensure_layout_not_smaller_than grows the first in dim, which must be 'register' or 'offset', not {first!r}")
    out = ll
    for o, s in ll.out_dims:
        want = pairs.get(o, s)
        if want > s:
            out = out * LinearLayout.identity_1d(want // s, first, o)
    return out


def identity_standard_nd(in_dim: str, shape: Sequence[int], order: Sequence[int]) -> LinearLayout:
    """Product over ``order`` (fastest dim first) of ``identity_1d(shape[d], in_dim, "dim{d}")``;
    out dims are ``dim0..dim{r-1}`` in that order."""
    shape, order = list(shape), list(order)
    if sorted(order) != list(range(len(shape))):
        raise LayoutError(f"order {order} is not a permutation of 0..{len(shape) - 1}")
    out = LinearLayout.empty()
    for d in order:
        out = out * LinearLayout.identity_1d(shape[d], in_dim, f"dim{d}")
    return out.transpose_outs([f"dim{d}" for d in range(len(shape))])


def rename_dims(
    ll: LinearLayout, in_renames: Mapping[str, str] | None = None, out_renames: Mapping[str, str] | None = None
) -> LinearLayout:
    """Rename in and out dims simultaneously (swaps allowed), keeping their order."""
    _check_layout(ll, "rename_dims")
    in_renames, out_renames = dict(in_renames or {}), dict(out_renames or {})
    for old in in_renames:
        if not ll.has_in_dim(old):
            raise LayoutError(f"rename: unknown in dim {old!r} (in dims are {ll.in_dim_names})")
    for old in out_renames:
        if not ll.has_out_dim(old):
            raise LayoutError(f"rename: unknown out dim {old!r} (out dims are {ll.out_dim_names})")
    bases = {in_renames.get(n, n): ll.bases[n] for n in ll.in_dim_names}
    if len(bases) != len(ll.in_dims):
        raise LayoutError(f"rename {in_renames} makes two in dims share a name")
    return LinearLayout(bases, [(out_renames.get(o, o), s) for o, s in ll.out_dims])


def is_image_subset(sub: LinearLayout, sup: LinearLayout) -> bool:
    """Every value of ``sub`` (out dims matched by name) is a value of ``sup``."""
    _check_layout(sub, "is_image_subset")
    _check_layout(sup, "is_image_subset")
    sizes = dict(sup.out_dims)
    for o, _ in sub.out_dims:
        if o not in sizes:
            return False
    try:
        cols = sub._aligned_columns(sup.out_dims, "is_image_subset")
    except LayoutError:
        return False
    ech = f2.Echelon()
    for c in sup.columns():
        ech.insert(c)
    return all(ech.contains(c) for c in cols)
