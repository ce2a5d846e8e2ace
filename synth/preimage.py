"""The conversion problem: where does each dst hardware position find its element in src?

Both layouts map hardware bits (``register``, ``lane``, ``warp``) to tensor
bits.  For every dst basis bit ``b`` the src positions holding the element
``dst(b)`` form the coset ``x0 + ker(src)``; because layouts are linear, any
choice per basis bit gives a valid linear map ``M`` (dst hw -> src hw) with
``src(M(x)) == dst(x)``.  Triton takes the least-squares choice (free
variables 0), which can make a same-warp conversion look cross-warp when src
broadcasts across warps.  Here every basis bit picks the coset member that
moves least: a dst warp bit keeps its own warp bit, a dst lane bit keeps its
lane bit, a dst register bit prefers a src register bit, and nothing takes a
warp component it does not need.  The conversion stays inside each wave iff
every dst warp bit maps to the same src warp bit and no register/lane bit
needs a warp bit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from linlayout import LayoutError, LinearLayout, f2

from .span import span_table

__all__ = ["Problem", "WaveMap", "normalize", "wave_local_map", "wave_local_maps"]


@dataclass
class Problem:
    """Flattened tensor columns of both layouts (first out dim least significant)."""

    src: LinearLayout
    dst: LinearLayout
    wave: int
    num_warps: int
    n_tensor_bits: int
    src_cols: dict[str, list[int]]
    dst_cols: dict[str, list[int]]
    _key: tuple | None = field(default=None, init=False, repr=False, compare=False)  # ``key``, once made

    def src_hw_cols(self) -> list[int]:
        return self.src_cols["register"] + self.src_cols["lane"] + self.src_cols["warp"]

    def key(self) -> tuple:
        """Everything the planner reads from the problem (for caches): tensor shape, columns, warps, wave size
        (made once: a problem is not changed once made)."""
        if self._key is None:
            cols = tuple(tuple(c[k]) for c in (self.src_cols, self.dst_cols) for k in ("register", "lane", "warp"))
            self._key = (tuple(self.src.out_dims), cols, self.num_warps, self.wave)
        return self._key

    @property
    def n_src_reg(self) -> int:
        return len(self.src_cols["register"])

    @property
    def n_dst_reg(self) -> int:
        return len(self.dst_cols["register"])

    @property
    def n_lane(self) -> int:
        return len(self.src_cols["lane"])

    @property
    def n_warp(self) -> int:
        return len(self.src_cols["warp"])


def _columns_by_dim(layout: LinearLayout) -> dict[str, list[int]]:
    """The layout's columns (flattened over its own out dims, kept by the layout) per in dim."""
    cols = layout.columns()
    out, j = {}, 0
    for name, size in layout.in_dims:
        k = size.bit_length() - 1
        out[name] = cols[j : j + k]
        j += k
    return out


def normalize(src: LinearLayout, dst: LinearLayout, wave: int) -> Problem:
    """Check that ``src`` and ``dst`` are distributed layouts of one tensor and flatten them."""
    for name, lay in (("src", src), ("dst", dst)):
        if not isinstance(lay, LinearLayout):
            raise LayoutError(f"{name} must be a LinearLayout")
        extra = set(lay.in_dim_names) - {"register", "lane", "warp", "block"}
        if extra:
            raise LayoutError(f"{name} has in dims {sorted(extra)}; a distributed layout has register, lane, "
                              f"warp, block")
        for d in ("register", "lane"):
            if not lay.has_in_dim(d):
                raise LayoutError(f"{name} lacks the in dim {d!r}")
        if lay.in_dim_size("lane") != wave:
            raise LayoutError(f"{name} has lane size {lay.in_dim_size('lane')}, the target's wave size is {wave}")
        if lay.has_in_dim("block") and lay.in_dim_size("block") != 1:
            raise LayoutError(f"{name} has block size {lay.in_dim_size('block')}; conversions across CTAs "
                              f"are not supported")
    if {n for n, _ in src.out_dims} != {n for n, _ in dst.out_dims}:
        raise LayoutError(f"src out dims {src.out_dim_names} and dst out dims {dst.out_dim_names} differ")
    sizes = dict(src.out_dims)
    for n, s in dst.out_dims:
        if sizes[n] != s:
            raise LayoutError(f"out dim {n!r} has size {sizes[n]} in src but {s} in dst")
    if dst.out_dim_names != src.out_dim_names:  # one tensor bit order for both (src's)
        dst = dst.transpose_outs(src.out_dim_names)
    ws = src.in_dim_size("warp") if src.has_in_dim("warp") else 1
    wd = dst.in_dim_size("warp") if dst.has_in_dim("warp") else 1
    if ws != wd:
        raise LayoutError(f"src has {ws} warps but dst has {wd}")
    outs = src.out_dims  # dst's too, in this order, with these sizes
    sc, dc = _columns_by_dim(src), _columns_by_dim(dst)
    for c in (sc, dc):
        c.setdefault("warp", [])
        c.pop("block", None)
    n_bits = sum(s.bit_length() - 1 for _, s in outs)
    prob = Problem(src, dst, wave, ws, n_bits, sc, dc)
    src_span = f2.Span(prob.src_hw_cols())
    for d in ("register", "lane", "warp"):
        for i, t in enumerate(dc[d]):
            if t and not src_span.contains(t):
                raise LayoutError(f"dst {d} basis {i} ({list(dst.basis(d, i))}) names an element that src "
                                  f"does not hold")
    return prob


@dataclass
class WaveMap:
    """A choice of src position for every dst basis bit.

    ``reg``/``lane``/``warp``: per dst bit, a src hardware vector over the bits
    (src register bits, then lane bits, then warp bits).  ``wave_local``: no
    register/lane bit uses a warp bit and every warp bit maps to itself.
    """

    n_src_reg: int
    n_lane: int
    n_warp: int
    reg: list[int]
    lane: list[int]
    warp: list[int]

    @property
    def reg_lane_mask(self) -> int:
        return (1 << (self.n_src_reg + self.n_lane)) - 1

    @property
    def wave_local(self) -> bool:
        """Every warp reads only its own src data (possibly at warp-dependent registers)."""
        return self.warp_register_offsets is not None

    def _warp_offsets(self) -> list[int] | None:
        """Per dst warp bit ``k``, the src register/lane vector ``x_k`` with ``M(w_k) = w_k ^ x_k``; None
        when the conversion crosses warps (a register/lane bit or ``x_k`` has a warp component)."""
        m = self.reg_lane_mask
        if any(c & ~m for c in self.reg + self.lane):
            return None
        out = [c ^ (1 << (self.n_src_reg + self.n_lane + k)) for k, c in enumerate(self.warp)]
        return None if any(x & ~m for x in out) else out

    @property
    def warp_register_offsets(self) -> list[int] | None:
        """Per dst warp bit ``k``, the src register vector ``x_k`` with ``M(w_k) = w_k ^ x_k``: warp ``w``
        reads register ``r ^ sum(x_k for set bits k of w)`` where warp 0 reads ``r``.  None when the
        conversion crosses warps or moves lanes per warp."""
        xs = self._warp_offsets()
        return None if xs is None or any(x >> self.n_src_reg for x in xs) else xs

    @property
    def warp_lane_offsets(self) -> list[int] | None:
        """Per dst warp bit ``k``, the src lane vector ``y_k`` (over the lane bits) with ``M(w_k) = w_k ^
        x_k ^ y_k``, ``x_k`` a src register vector: warp ``w`` reads lane ``l ^ sum(y_k for set bits k
        of w)`` where warp 0 reads lane ``l``.  None when the conversion crosses warps or reads no lane
        per warp (``warp_register_offsets`` then covers it)."""
        xs = self._warp_offsets()
        lanes = None if xs is None else [x >> self.n_src_reg for x in xs]
        return lanes if lanes and any(lanes) else None


def wave_local_map(prob: Problem, max_kernel_bits: int = 10, still_lanes: bool = False) -> WaveMap:
    """Choose, per dst basis bit, the src position that moves least (see module doc).

    A dst lane bit whose own src lane bit is not in its coset (``dst(lane j)`` is held elsewhere,
    or the dst broadcasts over lane ``j`` while src does not) takes another single lane bit
    before 0; with ``still_lanes`` it takes 0 first when 0 is in its coset (dst broadcasts over lane
    ``j``): lane ``j`` then moves nothing, and no two dst lane bits share a src lane bit that the
    other one already names -- the element map may then be a partial bit permutation where the
    default choice is not (linlayout.synth.exchanges)."""
    choices = _Choices(prob, max_kernel_bits)
    return WaveMap(prob.n_src_reg, prob.n_lane, prob.n_warp, choices.pick("register"),
                   choices.pick("lane", still_lanes), choices.pick("warp"))


def wave_local_maps(prob: Problem, max_kernel_bits: int = 10) -> list[WaveMap]:
    """``wave_local_map(prob)``, then, where it stays in each wave and the lane choices differ,
    ``wave_local_map(prob, still_lanes=True)``: the two share the cosets and the register and warp
    choices (``still_lanes`` changes only the lane choices).  The second is not looked for when the
    first crosses warps, since it crosses them too: a lane choice has a warp component only when
    every member of its coset has one (a warp component adds 1000 to a score, every other score is
    below that), whichever map, so both maps have the same warp components and warp offsets."""
    choices = _Choices(prob, max_kernel_bits)
    reg, warp = choices.pick("register"), choices.pick("warp")
    first = WaveMap(prob.n_src_reg, prob.n_lane, prob.n_warp, reg, choices.pick("lane"), warp)
    if not first.wave_local:
        return [first]
    still = WaveMap(prob.n_src_reg, prob.n_lane, prob.n_warp, reg, choices.pick("lane", True), warp)
    return [first] + ([still] if still.lane != first.lane else [])


class _Choices:
    """The coset ``x0 + ker`` of src hardware vectors holding each dst basis bit's element, and the
    member each kind of dst bit takes (``pick``)."""

    def __init__(self, prob: Problem, max_kernel_bits: int) -> None:
        cols = prob.src_hw_cols()
        self.nr, self.nl, nw = prob.n_src_reg, prob.n_lane, prob.n_warp
        self.reg_m, self.lane_m = (1 << self.nr) - 1, ((1 << self.nl) - 1) << self.nr
        self.warp_m = ((1 << nw) - 1) << (self.nr + self.nl)
        kernel = f2.kernel_basis(cols)
        if len(kernel) > max_kernel_bits:  # keep the search small: the lowest-weight vectors
            kernel = sorted(kernel, key=lambda v: bin(v).count("1"))[:max_kernel_bits]
        self.kernel = kernel
        self.coset = span_table(kernel)
        kinds = ("register", "lane", "warp")
        solved = f2.solve_many(cols, [t for k in kinds for t in prob.dst_cols[k]])  # one member per coset
        self.solutions, j = {}, 0
        for k in kinds:
            self.solutions[k], j = solved[j:j + len(prob.dst_cols[k])], j + len(prob.dst_cols[k])

    def pick(self, kind: str, still_lanes: bool = False) -> list[int]:
        """Per target (dst bit ``i`` of ``kind``), the member of ``solution + ker`` scoring least (the
        first on ties); ``still_lanes``: the lanes' scores with 0 second (``wave_local_map``).  Every
        kind is picked at once, on first use (``_picked``)."""
        return self._picked["still lane" if still_lanes and kind == "lane" else kind]

    @cached_property
    def _picked(self) -> dict[str, list[int]]:
        """``pick`` of every kind and of the lanes with ``still_lanes`` (key ``"still lane"``), from one
        table of every target's coset (``cand[i]``: target ``i``'s, registers, lanes, then warps).
        Scores, per member: a warp bit's own bit 0, another member with the same warp part
        ``500 + weight``, any other ``1000 + weight``; a register bit's 0 the zero vector, then 1 a
        single register bit, 3 a single lane bit, else ``5 + weight``; a lane bit's 0 its own bit,
        then the zero vector 4 (1 with ``still_lanes``), a single lane bit 2, a single register bit
        3, else ``5 + weight``; a register or lane bit's member with a warp part 1000 more."""
        sol = self.solutions
        if not self.kernel:
            return {**sol, "still lane": sol["lane"]}
        nr, nl, reg_m, lane_m, warp_m = self.nr, self.nl, self.reg_m, self.lane_m, self.warp_m
        n_reg, n_lane = len(sol["register"]), len(sol["lane"])
        cand = np.array(sol["register"] + sol["lane"] + sol["warp"], dtype=np.int64)[:, None] ^ self.coset[None, :]
        pc = np.bitwise_count(cand).astype(np.int64)
        n_rl = n_reg + n_lane
        rl, pc_rl = cand[:n_rl], pc[:n_rl]
        single = pc_rl == 1
        in_reg, in_lane = single & ((rl & reg_m) != 0), single & ((rl & lane_m) != 0)
        own = np.concatenate([np.full(n_reg, -1), np.left_shift(1, nr + np.arange(n_lane))])[:, None]
        is_lane = (np.arange(n_rl) >= n_reg)[:, None]
        score = np.where(rl == own, 0, np.where(rl == 0, np.where(is_lane, 4, 0), np.where(
            in_lane, np.where(is_lane, 2, 3), np.where(in_reg, np.where(is_lane, 3, 1), 5 + pc_rl))))
        score += np.where((rl & warp_m) != 0, 1000, 0)
        warp, pc_w = cand[n_rl:], pc[n_rl:]
        own_w = np.left_shift(1, nr + nl + np.arange(len(warp)))[:, None]
        score_w = np.where(warp == own_w, 0, np.where((warp & warp_m) == own_w, 500 + pc_w, 1000 + pc_w))
        first = rl[np.arange(n_rl), np.argmin(score, axis=1)].tolist()
        lanes = rl[n_reg:]
        still = np.where(lanes == 0, 1, score[n_reg:])
        return {"register": first[:n_reg], "lane": first[n_reg:],
                "warp": warp[np.arange(len(warp)), np.argmin(score_w, axis=1)].tolist(),
                "still lane": lanes[np.arange(n_lane), np.argmin(still, axis=1)].tolist()}
