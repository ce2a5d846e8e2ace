"""Shared machinery of Triton's encoding -> LinearLayout rules.

Everything here follows Triton's ``LinearLayoutConversions.cpp`` and
``LayoutUtils.cpp`` (facts re-derived, see shared/reference/triton_linear_layout.md
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
from ..layout import LinearLayout

__all__ = [
    "Cga",
    "standard_out_dims",
    "matrix_order",
    "dot_operand_order",
    "identity_standard_nd",
    "broadcast_along_k",
    "ensure_layout_not_smaller_than",
    "ensure_layout_not_larger_than",
    "combine_cta_cga_with_shape",
    "project_away_out_dim",
    "remove_broadcast_registers",
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
def check_pow2(name: str, value: object) -> int:
    """``value`` as an int that is a power of two."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise LayoutError(f"parameter {name}: {value!r} is not an integer")
    if value < 1 or value & (value - 1):
        raise LayoutError(f"parameter {name}: {value} is not a power of two")
    return value


def check_pow2_list(name: str, value: object, rank: int | None = None) -> tuple[int, ...]:
    """A list/tuple of powers of two, of length ``rank`` when given."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise LayoutError(f"parameter {name}: {value!r} is not a list of integers")
    out = tuple(check_pow2(f"{name}[{i}]", v) for i, v in enumerate(value))
    if rank is not None and len(out) != rank:
        raise LayoutError(f"parameter {name}: {list(out)} has {len(out)} entries, expected {rank} (the tensor rank)")
    return out


def check_order(name: str, value: object, rank: int) -> tuple[int, ...]:
    """A permutation of ``0..rank-1``."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
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


def identity_standard_nd(in_dim: str, shape: Sequence[int], order: Sequence[int]) -> LinearLayout:
    """``in_dim`` counts through ``shape`` with ``order[0]`` fastest; out dims ``dim{order[0]}, dim{order[1]}, ...``
    (in ``order``, as Triton's ``identityStandardND``: a layout tiled over a larger tensor gets its
    extra register bits fastest dim first)."""
    names = standard_out_dims(len(shape))
    ret = LinearLayout.empty()
    for d in order:
        ret = ret * LinearLayout.identity_1d(shape[d], in_dim, names[d])
    return ret


# ------------------------------------------------------------ products
def broadcast_along_k(shape: Sequence[int], order: Sequence[int], k_dim: int, in_dim: str) -> LinearLayout:
    """``in_dim`` counts through ``shape`` in ``order`` but every bit along ``k_dim`` maps
    to 0: a dot operand's copies along K (Triton's ``broadcastedDotOperandLayout``)."""
    names = standard_out_dims(len(shape))
    ret = LinearLayout.empty()
    for d in order:
        piece = LinearLayout.zeros_1d if d == k_dim else LinearLayout.identity_1d
        ret = ret * piece(shape[d], in_dim, names[d])
    return ret


# ------------------------------------------------------------ shape fitting
def ensure_layout_not_smaller_than(layout: LinearLayout, shape: Mapping[str, int]) -> LinearLayout:
    """Tile ``layout`` up to ``shape``: for each out dim (in the layout's out-dim order)
    that is too small, append identity bases of the first in dim (``register`` or ``offset``)."""
    first = layout.in_dim_names[0]
    ret = layout
    for name, size in layout.out_dims:
        want = shape[name]
        if want > size:
            ret = ret * LinearLayout.identity_1d(want // size, first, name)
    return ret


def ensure_layout_not_larger_than(
    layout: LinearLayout, shape: Mapping[str, int], broadcast_registers: bool = True
) -> LinearLayout:
    """Fold ``layout`` onto ``shape``: out dims shrink to ``min(size, shape)``, every basis
    component that falls outside becomes 0 (broadcast).  Unless ``broadcast_registers``,
    ``register`` bases that *became* all-zero are removed (zero ones already there stay)."""
    new_outs = [(n, min(s, shape[n])) for n, s in layout.out_dims]
    sizes = [s for _, s in new_outs]
    bases = {}
    for d, blist in layout.bases.items():
        drop = d == "register" and not broadcast_registers
        kept = []
        for b in blist:
            was_zero = not any(b)
            nb = [0 if c >= s else c for c, s in zip(b, sizes)]
            if not drop or was_zero or any(nb):
                kept.append(nb)
        bases[d] = kept
    return LinearLayout(bases, new_outs)


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

    def linear_layout(self, rank: int) -> LinearLayout:
        """``block -> dims``: for d in CTAOrder, ``split[d]`` identity bits then broadcast bits."""
        self.check_rank(rank)
        names = standard_out_dims(rank)
        if self.ctas_per_cga is None:
            return identity_standard_nd("block", (1,) * rank, list(range(rank - 1, -1, -1)))
        ret = LinearLayout.empty()
        for d in self.cta_order:
            split = self.cta_split_num[d]
            ret = ret * LinearLayout.identity_1d(split, "block", names[d])
            ret = ret * LinearLayout.zeros_1d(self.ctas_per_cga[d] // split, "block", names[d])
        return ret.transpose_outs(names)

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

    Register bases that fold to 0 on a smaller shape stay (broadcast registers: each
    thread holds copies) unless ``broadcast_registers`` is false (Triton's blocked layout).
    The result's out dims are ``dim0..`` in standard order with sizes ``shape``.
    """
    rank = len(shape)
    names = standard_out_dims(rank)
    if sorted(cta.out_dim_names) != sorted(names):
        raise LayoutError(f"CTA layout out dims {cta.out_dim_names} are not {names}")
    labeled = dict(zip(names, shape))
    cga_ll = ensure_layout_not_larger_than(cga.linear_layout(rank), labeled).transpose_outs(cta.out_dim_names)
    cta_shape = {d: max(1, labeled[d] // cga_ll.out_dim_size(d)) for d in cta.out_dim_names}
    cta = ensure_layout_not_smaller_than(cta, cta_shape)
    cta = ensure_layout_not_larger_than(cta, cta_shape, broadcast_registers)
    return (cta * cga_ll).transpose_outs(names)


# ------------------------------------------------------------ misc
def project_away_out_dim(layout: LinearLayout, dim: str) -> LinearLayout:
    """Every basis component along out dim ``dim`` set to 0; out sizes shrink to what
    the bases reach (so ``dim`` becomes size 1), as Triton's ``projectAwayOutDim``."""
    idx = layout.out_dim_names.index(dim)
    bases = {d: [[0 if i == idx else c for i, c in enumerate(b)] for b in bl] for d, bl in layout.bases.items()}
    return LinearLayout(bases, layout.out_dim_names)


def remove_broadcast_registers(layout: LinearLayout) -> LinearLayout:
    """Drop the all-zero ``register`` bases."""
    return layout.remove_zero_bases_along_dim("register")


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
