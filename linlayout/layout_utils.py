"""Layout utilities built on ``LinearLayout`` (Triton's LayoutUtils, in Python)."""

from __future__ import annotations

from .layout import LinearLayout

__all__ = ["get_reps"]


def get_reps(cvt: LinearLayout, tile: LinearLayout) -> LinearLayout | None:
    """``cvt`` with the ``tile`` part zeroed: the repetitions of ``tile`` inside ``cvt``.

    For every in dim of ``tile``, the first bases of ``cvt`` must equal the
    tile's, and every remaining basis of ``cvt`` must avoid the out bits the tile
    uses.  Those first bases become 0; the others are kept unshifted (unlike
    ``divide_left``, the tile need not own the low bits of each out dim).
    Returns None when ``cvt`` does not contain ``tile`` that way.
    """
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
