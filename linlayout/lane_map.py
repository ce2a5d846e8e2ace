"""Names of lane maps, for people reading a plan's pseudo-assembly.

A lane map ``T`` (one wave's ``src_lane`` of a plan's ``lane`` step: lane ``l`` receives the
value of lane ``T[l]``, ``-1`` undefined) is named by the first pattern it follows on its
defined lanes, else listed in full -- never abbreviated, so what is shown is the whole map:

* ``l`` (identity), ``l^0x20`` (xor mask), ``l+1`` / ``l-4`` (shift across the wave; the
  lanes it would read from outside the wave are the undefined ones),
* ``l+1 mod 16`` (rotation inside each group of 16 lanes; ``mod 64``: the whole wave),
* ``lane 5`` (broadcast of one lane), ``lane 3 of each 16`` (broadcast inside groups),
* else ``[T[0],T[1],...]``;

followed by ``, N lanes undefined`` when some entries are -1.  A map with one row per
warp is named per warp (``warp 0: ...; warp 1: ...``) unless every warp has the same map.
"""

from __future__ import annotations

import numpy as np

__all__ = ["lane_map_pattern"]


def _groups(n: int):
    """Group sizes 2, 4, ..., n (powers of two dividing the wave)."""
    g = 2
    while g <= n:
        yield g
        g *= 2


def _one(t: np.ndarray) -> str:
    n = len(t)
    lanes = np.arange(n)
    defined = t >= 0
    undefined = int((~defined).sum())
    tail = f", {undefined} lanes undefined" if undefined else ""
    if not defined.any():
        return "undefined"
    lt, tt = lanes[defined], t[defined]

    def follows(f) -> bool:
        return bool(np.array_equal(f(lt), tt))

    if len(set(tt.tolist())) == 1 and len(tt) > 1:
        return f"lane {int(tt[0])}{tail}"
    mask = int(tt[0] ^ lt[0])
    if follows(lambda x: x ^ mask):
        return ("l" if mask == 0 else f"l^0x{mask:x}") + tail
    shift = int(tt[0] - lt[0])
    if follows(lambda x: x + shift):
        return f"l{shift:+d}{tail}"
    for g in _groups(n):
        k = int(tt[0] - lt[0]) % g
        if k and follows(lambda x: (x & ~(g - 1)) | ((x + k) & (g - 1))):
            return f"l+{k} mod {g}{tail}"
    for g in _groups(n):
        c = int(tt[0] - (lt[0] & ~(g - 1)))
        if 0 <= c < g and g < n and follows(lambda x: (x & ~(g - 1)) + c):
            return f"lane {c} of each {g}{tail}"
    return "[" + ",".join(str(int(x)) for x in t) + "]"


def lane_map_pattern(src_lane) -> str:
    """The name of the lane map ``src_lane`` (``[wave]`` or ``[warps][wave]`` lane indices)."""
    t = np.asarray(src_lane, dtype=np.int64)
    if t.ndim == 1:
        return _one(t)
    rows = t.reshape(-1, t.shape[-1])
    if all(np.array_equal(r, rows[0]) for r in rows[1:]):
        return _one(rows[0])
    return "; ".join(f"warp {w}: {_one(r)}" for w, r in enumerate(rows))
