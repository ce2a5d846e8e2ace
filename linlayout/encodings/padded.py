"""Padded shared layouts (Triton's ``#ttg.padded_shared<[I0:+P0, I1:+P1, ...] {...}>``).

Padding is not linear over GF(2), so a padded layout is two maps:

* ``linear``: a LinearLayout ``offset[, block] -> dims`` from the *unpadded*
  element offset to the tensor element (Triton's "linear component");
* the padding function ``offset -> address``:
  ``address(o) = o + sum_i (o // I_i) * P_i`` (all ``I_i``, ``P_i`` powers of
  two, so each term is ``(o >> log2 I_i) << log2 P_i``): after every ``I_i``
  elements ``P_i`` unused elements are inserted.

Addresses are in elements; multiply by the element size for bytes.  The
padding function is strictly increasing, so it is injective, and the unused
addresses are exactly the ones it skips (:meth:`PaddedLayout.padding_mask`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from ..errors import LayoutError
from ..layout import LinearLayout
from .common import (
    Cga,
    ParamReader,
    check_order,
    check_pow2,
    EncodingBase,
    Tile,
    shape_per_cta,
    standard_out_dims,
)

__all__ = ["PaddedLayout", "PaddedShared", "padded_shared"]


def _check_pairs(intervals: Sequence[int], pads: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if isinstance(intervals, (str, bytes)) or not isinstance(intervals, Sequence):
        raise LayoutError(f"parameter intervals: {intervals!r} is not a list of integers")
    if isinstance(pads, (str, bytes)) or not isinstance(pads, Sequence):
        raise LayoutError(f"parameter paddings: {pads!r} is not a list of integers")
    if len(intervals) != len(pads):
        raise LayoutError(f"parameters intervals {list(intervals)} and paddings {list(pads)} differ in length")
    if not intervals:
        raise LayoutError("parameter intervals: at least one interval:+padding pair is needed")
    iv = tuple(check_pow2(f"intervals[{i}]", v) for i, v in enumerate(intervals))
    pd = tuple(check_pow2(f"paddings[{i}]", v) for i, v in enumerate(pads))
    if len(set(iv)) != len(iv):
        raise LayoutError(f"parameter intervals: {list(iv)} repeats an interval")
    return iv, pd


@dataclass(frozen=True)
class PaddedLayout:
    """A padded shared-memory layout: ``linear`` (unpadded offset -> tensor) plus padding.

    ``intervals[i]``, ``pads[i]``: after every ``intervals[i]`` elements, ``pads[i]``
    unused elements follow.  ``linear`` has in dim ``offset`` (and optionally ``block``).
    """

    linear: LinearLayout
    intervals: tuple[int, ...]
    pads: tuple[int, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.linear, LinearLayout) or not self.linear.has_in_dim("offset"):
            raise LayoutError("parameter linear: a padded layout needs a LinearLayout with in dim 'offset'")
        iv, pd = _check_pairs(self.intervals, self.pads)
        object.__setattr__(self, "intervals", iv)
        object.__setattr__(self, "pads", pd)

    @property
    def num_offsets(self) -> int:
        """Unpadded elements per block (the size of in dim ``offset``)."""
        return self.linear.in_dim_size("offset")

    def address(self, offset):
        """Padded address (elements) of unpadded ``offset``; int or numpy array in, same out."""
        if isinstance(offset, (np.ndarray, list, tuple)):
            o = np.asarray(offset)
            if not np.issubdtype(o.dtype, np.integer):
                raise LayoutError(f"offsets must be integers, got dtype {o.dtype}")
            if o.size and (o.min() < 0 or o.max() >= self.num_offsets):
                raise LayoutError(f"offsets outside [0, {self.num_offsets})")
            o = o.astype(np.int64)
        else:
            if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)):
                raise LayoutError(f"offset {offset!r} is not an integer")
            o = int(offset)
            if not 0 <= o < self.num_offsets:
                raise LayoutError(f"offset {o} is outside [0, {self.num_offsets})")
        out = o
        for interval, pad in zip(self.intervals, self.pads):
            out = out + (o >> (interval.bit_length() - 1)) * pad
        return out

    def addresses(self) -> np.ndarray:
        """``address(o)`` for every offset ``o`` (int64 array of length ``num_offsets``)."""
        return self.address(np.arange(self.num_offsets, dtype=np.int64))

    @property
    def footprint(self) -> int:
        """Elements from address 0 through the last element's address (inclusive)."""
        return int(self.address(self.num_offsets - 1)) + 1

    def padding_mask(self) -> np.ndarray:
        """Bool array over ``[0, footprint)``: True where no element is stored (padding)."""
        mask = np.ones(self.footprint, dtype=bool)
        mask[self.addresses()] = False
        return mask

    def address_of(self, coords: Mapping[str, object]):
        """Padded address of the tensor element at ``coords`` (``{"dim0": ..., ...}``, ints or
        arrays), through the pseudo-inverse of ``linear`` restricted to block 0."""
        inv = self.linear.sublayout(["offset"], self.linear.out_dim_names).pseudo_inverse()
        return self.address(inv.apply(dict(coords))["offset"])

    def to_json(self) -> dict:
        """The linear part's layout JSON plus ``"padding": [[interval, pad], ...]``."""
        return {**self.linear.to_json(), "padding": [[i, p] for i, p in zip(self.intervals, self.pads)]}

    def __str__(self) -> str:
        pairs = ", ".join(f"{i}:+{p}" for i, p in zip(self.intervals, self.pads))
        return f"PaddedLayout [{pairs}]  footprint {self.footprint} elements\n{self.linear}"


@dataclass(frozen=True)
class PaddedShared(EncodingBase):
    """``#ttg.padded_shared<[I:+P, ...] {order}>`` or ``{offset = [...], block = [...]}``.

    With ``order`` the linear component is the identity over the shape with
    ``order[0]`` fastest; with ``linear`` it is that layout (its out dims must
    match the shape).
    """

    intervals: tuple[int, ...]
    pads: tuple[int, ...]
    order: tuple[int, ...] | None = None
    linear: LinearLayout | Mapping | None = None
    cga: Cga = field(default_factory=Cga)

    kind = "padded_shared"

    def __post_init__(self) -> None:
        iv, pd = _check_pairs(self.intervals, self.pads)
        object.__setattr__(self, "intervals", iv)
        object.__setattr__(self, "pads", pd)
        if (self.order is None) == (self.linear is None):
            raise LayoutError("padded_shared: give exactly one of parameter order or parameter offset (linear component)")
        if self.order is not None:
            if isinstance(self.order, (str, bytes)) or not isinstance(self.order, Sequence):
                raise LayoutError(f"parameter order: {self.order!r} is not a list of dims")
            object.__setattr__(self, "order", check_order("order", self.order, len(self.order)))
        elif isinstance(self.linear, Mapping):
            offset = self.linear.get("offset")
            if not isinstance(offset, list) or not offset or not isinstance(offset[0], list):
                raise LayoutError("parameter offset: expected a non-empty list of bases [[c_dim0, c_dim1, ...], ...]")
        elif not isinstance(self.linear, LinearLayout) or not self.linear.has_in_dim("offset"):
            raise LayoutError("parameter offset: the linear component needs in dim 'offset'")

    @property
    def rank(self) -> int:
        if self.order is not None:
            return len(self.order)
        if isinstance(self.linear, Mapping):
            return len(self.linear["offset"][0])
        return len(self.linear.out_dims)

    @classmethod
    def from_params(cls, params: Mapping) -> "PaddedShared":
        """Params: ``intervals``, ``paddings`` and either ``order`` or ``offset`` (+ ``block``) bases."""
        r = ParamReader(params, cls.kind)
        intervals, pads = r.get("intervals"), r.get("paddings")
        order = r.get("order", None)
        offset = r.get("offset", None)
        block = r.get("block", None)
        linear = None if offset is None else {"offset": offset, "block": [] if block is None else block}
        enc = cls(intervals, pads, order, linear, r.cga(order))
        r.done()
        return enc

    def to_params(self) -> dict:
        out: dict = {"intervals": list(self.intervals), "paddings": list(self.pads)}
        if self.order is not None:
            out["order"] = list(self.order)
            out.update(self.cga.to_params())
        else:
            bases = self.linear if isinstance(self.linear, Mapping) else self.linear.bases
            out["offset"] = bases["offset"]
            if "block" in bases:
                out["block"] = bases["block"]
        return out

    def to_linear_layout(self, shape: Sequence[int]) -> PaddedLayout:
        """The padded layout over ``shape`` (named like the other encodings' method; the
        result is a :class:`PaddedLayout`, whose ``linear`` is the LinearLayout)."""
        shape = self.check_layout_shape(shape)
        if self.order is not None:
            cta = Tile(len(shape)).identity_nd("offset", shape_per_cta(shape, self.cga), self.order)
            linear = cta.combine(self.cga, shape)
        elif isinstance(self.linear, Mapping):
            linear = LinearLayout(dict(self.linear), list(zip(standard_out_dims(len(shape)), shape)))
        else:
            linear = self.linear
            got = [s for _, s in linear.out_dims]
            if got != list(shape):
                raise LayoutError(f"parameter offset: the linear component covers {got}, the shape is {list(shape)}")
        return PaddedLayout(linear, self.intervals, self.pads)


def padded_shared(
    intervals_pads: Sequence[tuple[int, int]],
    shape: Sequence[int],
    order: Sequence[int] | None = None,
    *,
    linear: LinearLayout | None = None,
) -> PaddedLayout:
    """A padded shared layout, e.g. ``padded_shared([(128, 4)], (64, 64), order=(1, 0))``:
    row-major 64x64 with 4 pad elements after every 128."""
    try:
        intervals = [i for i, _ in intervals_pads]
        pads = [p for _, p in intervals_pads]
    except (TypeError, ValueError):
        raise LayoutError(f"parameter intervals_pads: {intervals_pads!r} is not a list of (interval, pad) pairs") from None
    return PaddedShared(intervals, pads, order, linear).to_linear_layout(shape)
