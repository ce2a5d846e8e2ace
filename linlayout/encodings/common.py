"""Shared machinery of Triton's encoding -> LinearLayout rules.

Everything here follows Triton's ``LinearLayoutConversions.cpp`` and
``LayoutUtils.cpp`` (facts re-derived, see docs/triton_facts.md
section 1e):

* out dims are ``dim0, dim1, ...``; ``dim0`` is the outermost tensor dim;
* an ``order`` lists tensor dims fastest-varying first (row-major 2-D: ``[1, 0]``);
* every encoding ends with :func:`combine_cta_cga_with_shape`, which tiles the
  per-CTA layout over the requested shape (extra *register*/*offset* bits,
  appended in the CTA layout's out-dim order) or folds it onto a smaller
  shape (bases that fall outside become 0 = broadcast; register bases that
  become 0 stay, except in blocked layouts), then multiplies in the CGA
  (``block``) layout.  A dot operand's CGA never splits K (:meth:`Cga.operand`).

Parameter checking lives here too: every public constructor validates its
inputs and raises ``LayoutError`` naming the offending parameter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from ..errors import LayoutError
from ..layout import LinearLayout, supremum

__all__ = [
    "Cga",
    "Tile",
    "standard_out_dims",
    "matrix_order",
    "dot_operand_order",
    "combine_cta_cga_with_shape",
    "check_pow2",
    "check_pow2_list",
    "check_order",
    "check_shape",
    "check_bool",
    "shape_per_cta",
    "ParamReader",
    "EncodingBase",
    "check_warps_and_tiles",
]


# ------------------------------------------------------------ validation
def _is_list(value: object) -> bool:
    """A sequence of entries (a list or tuple, fast; not text)."""
    return type(value) in (list, tuple) or (not isinstance(value, (str, bytes)) and isinstance(value, Sequence))


def check_pow2(name: str, value: object) -> int:
    """``value`` as an int that is a power of two."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise LayoutError(f"parameter {name}: {value!r} is not an integer")
    if value < 1 or value & (value - 1):
        raise LayoutError(f"parameter {name}: {value} is not a power of two")
    return value


def check_pow2_list(name: str, value: object, rank: int | None = None) -> tuple[int, ...]:
    """A list/tuple of powers of two, of length ``rank`` when given."""
    if not _is_list(value):
        raise LayoutError(f"parameter {name}: {value!r} is not a list of integers")
    if all(type(v) is int and v > 0 and not v & (v - 1) for v in value):
        out = tuple(value)
    else:  # name the first bad entry
        out = tuple(check_pow2(f"{name}[{i}]", v) for i, v in enumerate(value))
    if rank is not None and len(out) != rank:
        raise LayoutError(f"parameter {name}: {list(out)} has {len(out)} entries, expected {rank} (the tensor rank)")
    return out


def check_order(name: str, value: object, rank: int) -> tuple[int, ...]:
    """A permutation of ``0..rank-1``."""
    if not _is_list(value):
        raise LayoutError(f"parameter {name}: {value!r} is not a list of dims")
    out = tuple(value)
    if any(isinstance(v, bool) or not isinstance(v, int) for v in out) or sorted(out) != list(range(rank)):
        raise LayoutError(f"parameter {name}: {list(out)} is not a permutation of 0..{rank - 1}")
    return out


def check_shape(value: object, name: str = "shape") -> tuple[int, ...]:
    """A non-empty tensor shape of powers of two."""
    out = check_pow2_list(name, value)
    if not out:
        raise LayoutError(f"parameter {name}: the shape is empty")
    return out


def check_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise LayoutError(f"parameter {name}: {value!r} is not true/false")
    return value


# ------------------------------------------------------------ dims/orders
def standard_out_dims(rank: int) -> list[str]:
    """``["dim0", ..., "dim{rank-1}"]``."""
    return [f"dim{i}" for i in range(rank)]


def matrix_order(rank: int, row_major: bool) -> list[int]:
    """Triton's ``getMatrixOrder``: ``[rank-1, ..., 0]``, the first two swapped when column-major."""
    order = list(range(rank - 1, -1, -1))
    if not row_major:
        order[0], order[1] = order[1], order[0]
    return order


def dot_operand_order(op_idx: int, rank: int, k_contig: bool) -> list[int]:
    """Triton's ``getOrderForDotOperand``; with ``k_contig`` the K dim comes first."""
    return matrix_order(rank, row_major=(bool(op_idx) != k_contig))


# ------------------------------------------------------------ building
class Tile:
    """A layout under construction, built the way Triton builds it: a product of 1-D pieces.

    Every in dim (in first-use order) holds a list of bases; a basis is a list of ``rank``
    components in standard order (``dim0`` first); tensor dim ``d`` has size ``2**log2[d]``.
    ``outs`` is the out-dim order of Triton's layout (dims by first use, or as set by
    :meth:`order_outs`): it decides where :meth:`combine` puts the register bits of a tensor
    larger than the tile.  :meth:`identity` and :meth:`zeros` are ``self * identity1D`` and
    ``self * zeros1D``; :meth:`multiply` is ``self * other``.  Plain lists, no LinearLayout
    products: this is the hot path of every encoding.
    """

    __slots__ = ("rank", "bases", "outs", "log2")

    def __init__(self, rank: int) -> None:
        self.rank = rank
        self.bases: dict[str, list[list[int]]] = {}
        self.outs: list[int] = []
        self.log2 = [0] * rank

    def _dims(self, in_dim: str, dim: int) -> list[list[int]]:
        if dim not in self.outs:
            self.outs.append(dim)
        return self.bases.setdefault(in_dim, [])

    def identity(self, size: int, in_dim: str, dim: int) -> "Tile":
        """``size`` more values of ``in_dim`` count along tensor dim ``dim`` (above what is there)."""
        bases = self._dims(in_dim, dim)
        shift = self.log2[dim]
        for i in range(size.bit_length() - 1):
            basis = [0] * self.rank
            basis[dim] = 1 << (shift + i)
            bases.append(basis)
        self.log2[dim] = shift + size.bit_length() - 1
        return self

    def zeros(self, size: int, in_dim: str, dim: int) -> "Tile":
        """``size`` more values of ``in_dim`` that hold copies (zero bases); ``dim`` joins the out dims."""
        self._dims(in_dim, dim).extend([0] * self.rank for _ in range(size.bit_length() - 1))
        return self

    def identity_nd(self, in_dim: str, shape: Sequence[int], order: Sequence[int],
                    zero_dim: int | None = None) -> "Tile":
        """Triton's ``identityStandardND``: ``in_dim`` counts through ``shape``, ``order[0]`` fastest;
        along ``zero_dim`` (a dot operand's K) the values are copies (``broadcastedDotOperandLayout``)."""
        for d in order:
            (self.zeros if d == zero_dim else self.identity)(shape[d], in_dim, d)
        return self

    def multiply(self, other: "Tile") -> "Tile":
        """``self * other``: ``other``'s bases follow, shifted above this tile's size."""
        for in_dim, bases in other.bases.items():
            mine = self.bases.setdefault(in_dim, [])
            for b in bases:
                mine.append([c << shift for c, shift in zip(b, self.log2)])
        self.outs = supremum(self.outs, other.outs)
        self.log2 = [a + b for a, b in zip(self.log2, other.log2)]
        return self

    def order_outs(self, dims: Sequence[int]) -> "Tile":
        """Set the out-dim order (``transposeOuts``); listed dims not yet used join with size 1."""
        if not set(self.outs) <= set(dims):
            raise ValueError(f"out order {list(dims)} misses dims of {self.outs}")
        self.outs = list(dims)
        return self

    @classmethod
    def from_layout(cls, layout: LinearLayout) -> "Tile":
        """The tile of a layout whose out dims are ``dim0..`` (in any order)."""
        rank = len(layout.out_dims)
        names = standard_out_dims(rank)
        if sorted(layout.out_dim_names) != sorted(names):
            raise LayoutError(f"CTA layout out dims {layout.out_dim_names} are not {names}")
        tile = cls(rank)
        position = [names.index(n) for n in layout.out_dim_names]
        for in_dim, bases in layout.bases.items():
            tile.bases[in_dim] = [[b[position.index(d)] for d in range(rank)] for b in bases]
        tile.outs = position
        for n, size in layout.out_dims:
            tile.log2[names.index(n)] = size.bit_length() - 1
        return tile

    def layout(self) -> LinearLayout:
        """The LinearLayout (out dims ``dim0..`` in standard order)."""
        # every component is an int below its dim's size by construction: the trusted constructor
        return LinearLayout._make([(d, 1 << len(b)) for d, b in self.bases.items()],
                                  [(f"dim{d}", 1 << self.log2[d]) for d in range(self.rank)], self.bases)

    def combine(self, cga: "Cga", shape: Sequence[int], broadcast_registers: bool = True) -> LinearLayout:
        """Triton's ``combineCtaCgaWithShape`` (see :func:`combine_cta_cga_with_shape`)."""
        rank = self.rank
        if sorted(self.outs) != list(range(rank)):
            raise LayoutError(f"CTA layout out dims {self.outs} are not dims 0..{rank - 1}")
        want = [s.bit_length() - 1 for s in shape]
        cga_tile = cga.tile(rank) if cga.ctas_per_cga is not None else None
        cga_log2 = [min(c, w) for c, w in zip(cga_tile.log2, want)] if cga_tile else [0] * rank
        cta_log2 = [w - c for w, c in zip(want, cga_log2)]
        first = next(iter(self.bases))
        for d in self.outs:  # ensureLayoutNotSmallerThan, in the layout's out-dim order
            if cta_log2[d] > self.log2[d]:
                self.identity(1 << (cta_log2[d] - self.log2[d]), first, d)
        over = [(d, 1 << w) for d, (a, w) in enumerate(zip(self.log2, cta_log2)) if a > w]
        if over:  # ensureLayoutNotLargerThan: components outside the shape become 0
            for in_dim, bases in self.bases.items():
                drop = in_dim == "register" and not broadcast_registers
                kept = []
                for b in bases:
                    outside = [d for d, limit in over if b[d] >= limit]
                    if outside:
                        b = list(b)
                        for d in outside:
                            b[d] = 0
                        if drop and not any(b):
                            continue
                    kept.append(b)
                self.bases[in_dim] = kept
            self.log2 = [min(a, w) for a, w in zip(self.log2, cta_log2)]
        block = self.bases.setdefault("block", [])
        if cga_tile:
            cga_limits = [1 << c for c in cga_log2]
            for b in cga_tile.bases["block"]:
                block.append([(c << shift) if c < limit else 0 for c, limit, shift in zip(b, cga_limits, self.log2)])
            self.log2 = [a + c for a, c in zip(self.log2, cga_log2)]
        return self.layout()


# ------------------------------------------------------------ CGA
@dataclass(frozen=True)
class Cga:
    """Triton's CTA layout attribute (``CTAsPerCGA``, ``CTASplitNum``, ``CTAOrder``).

    The tensor is split into ``cta_split_num[d]`` pieces along dim ``d``; the
    ``ctas_per_cga[d] / cta_split_num[d]`` remaining CTAs along ``d`` hold copies.
    ``None`` for all three means one CTA.
    """

    ctas_per_cga: tuple[int, ...] | None = None
    cta_split_num: tuple[int, ...] | None = None
    cta_order: tuple[int, ...] | None = None

    @classmethod
    def from_params(cls, ctas_per_cga=None, cta_split_num=None, cta_order=None, rank: int | None = None) -> "Cga":
        if ctas_per_cga is None and cta_split_num is None and cta_order is None:
            return cls()
        if rank is None:
            for v in (ctas_per_cga, cta_split_num, cta_order):
                if v is not None and not isinstance(v, (str, bytes)) and isinstance(v, Sequence):
                    rank = len(v)
                    break
            else:
                raise LayoutError("parameters CTAsPerCGA/CTASplitNum/CTAOrder must be lists of integers")
        ctas = check_pow2_list("CTAsPerCGA", ctas_per_cga, rank) if ctas_per_cga is not None else (1,) * rank
        split = check_pow2_list("CTASplitNum", cta_split_num, rank) if cta_split_num is not None else ctas
        order = check_order("CTAOrder", cta_order, rank) if cta_order is not None else tuple(range(rank - 1, -1, -1))
        for d, (c, s) in enumerate(zip(ctas, split)):
            if s > c:
                raise LayoutError(f"parameter CTASplitNum[{d}] = {s} exceeds CTAsPerCGA[{d}] = {c}")
        return cls(ctas, split, order)

    def check_rank(self, rank: int) -> None:
        if self.ctas_per_cga is not None and len(self.ctas_per_cga) != rank:
            raise LayoutError(
                f"parameter CTAsPerCGA: {list(self.ctas_per_cga)} has {len(self.ctas_per_cga)} entries, "
                f"expected {rank} (the tensor rank)"
            )

    def split(self, rank: int) -> tuple[int, ...]:
        return self.cta_split_num if self.cta_split_num is not None else (1,) * rank

    def tile(self, rank: int) -> Tile:
        """``block -> dims``: for d in CTAOrder, ``split[d]`` identity bits then broadcast bits."""
        self.check_rank(rank)
        tile = Tile(rank)
        tile.bases["block"] = []
        if self.ctas_per_cga is None:
            return tile.order_outs(range(rank - 1, -1, -1))
        for d in self.cta_order:
            split = self.cta_split_num[d]
            tile.identity(split, "block", d).zeros(self.ctas_per_cga[d] // split, "block", d)
        return tile

    def linear_layout(self, rank: int) -> LinearLayout:
        """The CGA layout ``block -> dim0..``."""
        return self.tile(rank).layout()

    def operand(self, k_dim: int) -> "Cga":
        """The CGA of a dot operand whose K dim is ``k_dim``: CTAs never split K (the CTAs
        along K hold copies), as Triton's dot-operand CGA layout with the K components zeroed."""
        if self.ctas_per_cga is None:
            return self
        split = list(self.cta_split_num)
        split[k_dim] = 1
        return Cga(self.ctas_per_cga, tuple(split), self.cta_order)

    def to_params(self) -> dict:
        if self.ctas_per_cga is None:
            return {}
        return {"CTAsPerCGA": list(self.ctas_per_cga), "CTASplitNum": list(self.cta_split_num),
                "CTAOrder": list(self.cta_order)}


def shape_per_cta(shape: Sequence[int], cga: Cga) -> list[int]:
    """``shape[d] / CTASplitNum[d]`` (at least 1)."""
    return [max(1, s // p) for s, p in zip(shape, cga.split(len(shape)))]


def combine_cta_cga_with_shape(cta: LinearLayout, cga: Cga, shape: Sequence[int],
                               broadcast_registers: bool = True) -> LinearLayout:
    """Triton's ``combineCtaCgaWithShape``: fit ``cta`` to ``shape / CGA size`` and append ``block``.

    The CTA layout grows to the per-CTA shape (identity bits of its first in dim, for each
    out dim in its out-dim order) and folds onto a smaller one (components outside become
    0); register bases that fold to 0 stay (broadcast registers: each thread holds copies)
    unless ``broadcast_registers`` is false (Triton's blocked layout).  The result's out dims
    are ``dim0..`` in standard order with sizes ``shape``.
    """
    return Tile.from_layout(cta).combine(cga, shape, broadcast_registers)


# ------------------------------------------------------------ misc
class ParamReader:
    """Reads Triton-named encoding params from a dict, naming any bad or unknown one."""

    def __init__(self, params: Mapping, encoding: str) -> None:
        if not isinstance(params, Mapping):
            raise LayoutError(f"{encoding}: params must be an object, got {type(params).__name__}")
        self._params = params
        self._encoding = encoding
        self._used: set[str] = set()

    def get(self, name: str, default: object = ..., required: bool = True) -> object:
        self._used.add(name)
        if name in self._params:
            return self._params[name]
        if default is ... and required:
            raise LayoutError(f"{self._encoding}: missing parameter {name}")
        return None if default is ... else default

    def done(self) -> None:
        unknown = sorted(set(self._params) - self._used)
        if unknown:
            raise LayoutError(
                f"{self._encoding}: unknown parameter(s) {unknown}; accepted: {sorted(self._used)}"
            )

    def cga(self, like: object) -> Cga:
        """The CGA params; the rank is that of ``like`` (a per-dim param list) when it is a list."""
        rank = len(like) if isinstance(like, (list, tuple)) else None
        return Cga.from_params(
            self.get("CTAsPerCGA", None), self.get("CTASplitNum", None), self.get("CTAOrder", None), rank
        )


class EncodingBase:
    """What every encoding dataclass shares: ``rank`` (from ``_rank_source``) and shape checks."""

    kind = "encoding"

    @property
    def rank(self) -> int:
        return len(getattr(self, self._rank_source))

    def check_layout_shape(self, shape: object) -> tuple[int, ...]:
        """``shape`` validated, and of this encoding's rank."""
        shape = check_shape(shape)
        if len(shape) != self.rank:
            raise LayoutError(
                f"parameter shape: {list(shape)} has rank {len(shape)} but the {self.kind} layout has rank {self.rank}"
            )
        return shape


def check_warps_and_tiles(warps: object, tiles: object) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``warpsPerCTA`` (2 or 3 entries) and ``tilesPerWarp`` (default all 1) of an MMA encoding."""
    w = check_pow2_list("warpsPerCTA", warps)
    if len(w) not in (2, 3):
        raise LayoutError(f"parameter warpsPerCTA: {list(w)} must have 2 or 3 entries")
    t = (1,) * len(w) if tiles is None else check_pow2_list("tilesPerWarp", tiles, len(w))
    return w, t
