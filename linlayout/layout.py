"""``LinearLayout``: a linear map over GF(2) between named, ordered index spaces.

A layout maps *in dims* (hardware indices such as ``register``, ``lane``,
``warp``, ``block`` or ``offset``) to *out dims* (tensor coordinates ``dim0``,
``dim1``, ...).  Every dim has a power-of-two size.  ``bases[d][i]`` is the
image of input ``d = 2**i`` (all other inputs 0), one integer per out dim in
out-dim order; the image of any input is the XOR of the bases of its set bits.

Conventions (Triton's, see docs/contract.md section 1):

* dim order is minor to major: when dims are flattened the **first dim is the
  least significant** (``flat = dim0 + dim1 * size(dim0)``);
* the matrix of a layout has one row per out bit (out dims in order, LSB first)
  and one column per in bit (in dims in order, LSB first);
* a zero basis means broadcast (several hardware indices hold one element).

Internally each basis is also kept *flattened*: an int whose bits are the out
bits in the order above.  All algebra works on these column ints (``f2``).
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence, Union

import numpy as np

from . import f2
from .errors import LayoutError

__all__ = ["LinearLayout", "least_squares", "supremum"]

DimSpec = Sequence[tuple[str, int]]
Basis = tuple[int, ...]


def _log2_exact(size: object, what: str) -> int:
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise LayoutError(f"{what}: size {size!r} is not an integer")
    size = int(size)
    if size < 1 or size & (size - 1):
        raise LayoutError(f"{what}: size {size} is not a power of two")
    return size.bit_length() - 1


def _check_name(name: object, what: str) -> str:
    if not isinstance(name, str) or not name:
        raise LayoutError(f"{what}: dim name {name!r} is not a non-empty string")
    return name


def _dim_spec(spec: object, what: str) -> list[tuple[str, int]]:
    """``spec`` as a validated ``[(name, power-of-two size)]`` list."""
    if isinstance(spec, (str, bytes, Mapping)) or not isinstance(spec, Iterable):
        raise LayoutError(f"{what}: expected a list of (name, size) pairs, got {spec!r}")
    out = []
    for item in spec:
        if isinstance(item, (str, bytes)) or not isinstance(item, (tuple, list)) or len(item) != 2:
            raise LayoutError(f"{what}: entry {item!r} is not a (name, size) pair")
        name = _check_name(item[0], what)
        _log2_exact(item[1], f"{what} {name!r}")
        out.append((name, int(item[1])))
    return out


def _names(names: object, what: str) -> list[str]:
    """``names`` as a validated list of dim names."""
    if isinstance(names, (str, bytes)) or not isinstance(names, Iterable):
        raise LayoutError(f"{what}: expected a list of dim names, got {names!r}")
    return [_check_name(n, what) for n in names]


def _check_layout(other: object, op: str) -> "LinearLayout":
    if not isinstance(other, LinearLayout):
        raise LayoutError(f"{op}: expected a LinearLayout, got {type(other).__name__}")
    return other


def supremum(x: Sequence[str], y: Sequence[str]) -> list[str]:
    """The merged dim order of ``x * y`` (Triton's ``supremum``): an order containing
    both lists that keeps each list's relative order where possible.

    Names the two lists share are emitted when both lists reach them; while the
    heads differ, a head the other list does not hold (or holds only behind its
    own cursor) goes first; otherwise the head whose partner in the other list
    comes sooner wins, ties favouring ``x``.  So ``[a, b] + [a, c] -> [a, b, c]``
    and a contradiction such as ``[dim1, dim0]`` vs ``[dim0, dim1]`` resolves to
    ``x``'s order, as in Triton.
    """
    pos_x = {e: i for i, e in enumerate(x)}
    pos_y = {e: i for i, e in enumerate(y)}
    result: list[str] = []
    seen: set[str] = set()
    i = j = 0
    far = len(x) + len(y) + 1
    while True:
        while i < len(x) and x[i] in seen:
            i += 1
        while j < len(y) and y[j] in seen:
            j += 1
        if i >= len(x) and j >= len(y):
            return result
        if i < len(x) and j < len(y) and x[i] == y[j]:
            pick, i, j = x[i], i + 1, j + 1
        else:
            cand_x = pos_y.get(x[i], -1) if i < len(x) else -1
            cand_x = cand_x if cand_x >= j else far
            cand_y = pos_x.get(y[j], -1) if j < len(y) else -1
            cand_y = cand_y if cand_y >= i else far
            x_free = i < len(x) and cand_x == far
            y_free = j < len(y) and cand_y == far
            if x_free or (not y_free and i < len(x) and cand_x <= cand_y):
                pick, i = x[i], i + 1
            else:
                pick, j = y[j], j + 1
        result.append(pick)
        seen.add(pick)


class LinearLayout:
    """A GF(2)-linear map from named in dims to named out dims (all sizes powers of two).

    Construct with ``LinearLayout(bases, out_dims)`` where ``bases`` maps each in
    dim (in order) to its list of bases and ``out_dims`` is a list of
    ``(name, size)`` pairs, or of names (sizes then inferred as the smallest
    power of two above every basis component), or use a factory.
    """

    __slots__ = ("_ins", "_outs", "_bases", "_cols", "_hash", "_rank")

    # ------------------------------------------------------------------ build
    def __init__(
        self,
        bases: Mapping[str, Sequence[Sequence[int]]],
        out_dims: Union[DimSpec, Sequence[str]],
    ) -> None:
        if not isinstance(bases, Mapping):
            raise LayoutError(f"bases must be a mapping from in-dim name to a list of bases, got {type(bases).__name__}")
        if isinstance(out_dims, (str, bytes)):  # list("dim0") would be four one-letter dims
            raise LayoutError(f"out_dims must be a list, got the string {out_dims!r}")
        try:
            out_list = list(out_dims)
        except TypeError:
            raise LayoutError(f"out_dims must be a list, got {type(out_dims).__name__}") from None
        names_only = all(isinstance(o, str) for o in out_list)
        n_out = len(out_list)
        ins: list[tuple[str, int]] = []
        bmap: dict[str, tuple[Basis, ...]] = {}
        for d, blist in bases.items():
            _check_name(d, "in dim")
            if type(blist) not in (list, tuple) and (isinstance(blist, (str, bytes)) or not isinstance(blist, Iterable)):
                raise LayoutError(f"in dim {d!r}: bases must be a list of lists, got {blist!r}")
            rows: list[Basis] = []
            for i, b in enumerate(blist):
                if type(b) not in (list, tuple) and (isinstance(b, (str, bytes)) or not isinstance(b, Iterable)):
                    raise LayoutError(f"in dim {d!r} basis {i}: {b!r} is not a list of integers")
                b = tuple(b)
                if len(b) != n_out:
                    raise LayoutError(
                        f"in dim {d!r} basis {i}: {list(b)} has {len(b)} components but there are {n_out} out dims"
                    )
                if all(type(c) is int and c >= 0 for c in b):  # plain non-negative ints: already the row
                    rows.append(b)
                    continue
                for c in b:
                    if isinstance(c, bool) or not isinstance(c, (int, np.integer)):
                        raise LayoutError(f"in dim {d!r} basis {i}: component {c!r} is not an integer")
                    if c < 0:
                        raise LayoutError(f"in dim {d!r} basis {i}: component {c} is negative")
                rows.append(tuple(int(c) for c in b))
            bmap[d] = tuple(rows)
            ins.append((d, 1 << len(rows)))
        if names_only:
            outs = []
            for k, o in enumerate(out_list):
                _check_name(o, "out dim")
                m = max((b[k] for bl in bmap.values() for b in bl), default=0)
                outs.append((o, 1 << m.bit_length()))
        else:
            outs = []
            for o in out_list:
                if not isinstance(o, (tuple, list)) or len(o) != 2:
                    raise LayoutError(f"out dim {o!r} is not a (name, size) pair")
                name = _check_name(o[0], "out dim")
                _log2_exact(o[1], f"out dim {name!r}")
                outs.append((name, int(o[1])))
        self._init(tuple(ins), tuple(outs), bmap)

    def _init(self, ins, outs, bmap) -> None:
        names = [n for n, _ in ins]
        if len(set(names)) != len(names):
            raise LayoutError(f"duplicate in dim names {names}")
        onames = [n for n, _ in outs]
        if len(set(onames)) != len(onames):
            raise LayoutError(f"duplicate out dim names {onames}")
        sizes = [size for _, size in outs]
        for d, blist in bmap.items():
            for i, b in enumerate(blist):
                if any(c >= size for c, size in zip(b, sizes)):
                    (o, size), c = next(((o, size), c) for (o, size), c in zip(outs, b) if c >= size)
                    raise LayoutError(f"in dim {d!r} basis {i}: component {c} is outside out dim {o!r} of size {size}")
        self._ins = ins
        self._outs = outs
        self._bases = bmap
        self._cols = None
        self._hash = None
        self._rank = None

    @classmethod
    def _make(cls, ins, outs, bmap) -> "LinearLayout":
        """Internal constructor from already-validated parts (no re-validation of types)."""
        obj = cls.__new__(cls)
        obj._init(tuple(ins), tuple(outs), {d: tuple(tuple(b) for b in bmap[d]) for d, _ in ins})
        return obj

    @classmethod
    def empty(cls) -> "LinearLayout":
        """The 0-dim layout: identity element of ``*``."""
        return cls._make((), (), {})

    @classmethod
    def identity_1d(cls, size: int, in_dim: str, out_dim: str) -> "LinearLayout":
        """``x -> x`` for ``x < size``."""
        _check_name(in_dim, "identity_1d in dim")
        _check_name(out_dim, "identity_1d out dim")
        k = _log2_exact(size, f"identity_1d {in_dim!r}")
        return cls._make([(in_dim, size)], [(out_dim, size)], {in_dim: [(1 << i,) for i in range(k)]})

    @classmethod
    def zeros_1d(cls, size: int, in_dim: str, out_dim: str, out_size: int = 1) -> "LinearLayout":
        """``x -> 0`` for ``x < size`` (broadcast); out dim of ``out_size``."""
        _check_name(in_dim, "zeros_1d in dim")
        _check_name(out_dim, "zeros_1d out dim")
        k = _log2_exact(size, f"zeros_1d {in_dim!r}")
        _log2_exact(out_size, f"zeros_1d out dim {out_dim!r}")
        return cls._make([(in_dim, size)], [(out_dim, out_size)], {in_dim: [(0,)] * k})

    @classmethod
    def strided_1d(cls, size: int, stride: int, in_dim: str, out_dim: str) -> "LinearLayout":
        """``x -> stride * x`` for ``x < size``; ``stride`` a power of two. Out size ``stride * size``."""
        _check_name(in_dim, "strided_1d in dim")
        _check_name(out_dim, "strided_1d out dim")
        k = _log2_exact(size, f"strided_1d {in_dim!r}")
        s = _log2_exact(stride, f"strided_1d stride of {in_dim!r}")
        return cls._make([(in_dim, size)], [(out_dim, size << s)], {in_dim: [(1 << (i + s),) for i in range(k)]})

    @classmethod
    def identity(cls, dims: DimSpec, in_names: Sequence[str] | None = None) -> "LinearLayout":
        """Identity on ``dims`` (in dim ``in_names[k]`` or the same name -> out dim ``dims[k]``)."""
        dims = _dim_spec(dims, "identity dims")
        ins = [n for n, _ in dims] if in_names is None else _names(in_names, "identity in_names")
        if len(ins) != len(dims):
            raise LayoutError(f"identity: {len(ins)} in_names for {len(dims)} dims")
        out = cls.empty()
        for (name, size), in_name in zip(dims, ins):
            out = out * cls.identity_1d(size, in_name, name)
        return out

    @classmethod
    def from_bases(
        cls, bases: Mapping[str, Sequence[Sequence[int]]], out_dims: Union[DimSpec, Sequence[str]]
    ) -> "LinearLayout":
        """Same as the constructor."""
        return cls(bases, out_dims)

    @classmethod
    def from_matrix(cls, matrix, in_dims: DimSpec, out_dims: DimSpec) -> "LinearLayout":
        """From a 0/1 matrix: row = out bit (out dims in order, LSB first), column = in bit."""
        try:
            m = np.asarray(matrix, dtype=np.int64) & 1
        except (TypeError, ValueError, OverflowError) as e:
            raise LayoutError(f"matrix is not a 0/1 array: {e}") from None
        in_dims, out_dims = _dim_spec(in_dims, "in dim"), _dim_spec(out_dims, "out dim")
        n_in = sum(s.bit_length() - 1 for _, s in in_dims)
        n_out = sum(s.bit_length() - 1 for _, s in out_dims)
        if m.ndim != 2 or m.shape != (n_out, n_in):
            raise LayoutError(f"matrix has shape {m.shape}, expected ({n_out}, {n_in}) for these dims")
        cols = [int(sum(int(m[r, c]) << r for r in range(n_out))) for c in range(n_in)]
        return cls._from_columns(in_dims, out_dims, cols)

    @classmethod
    def _from_columns(cls, ins: DimSpec, outs: DimSpec, cols: Sequence[int]) -> "LinearLayout":
        """From flattened columns (in bits in order) over the given dims."""
        shifts = []
        acc = 0
        for _, s in outs:
            shifts.append((acc, s - 1))
            acc += s.bit_length() - 1
        bmap = {}
        j = 0
        for name, size in ins:
            k = size.bit_length() - 1
            bmap[name] = [tuple((c >> sh) & mask for sh, mask in shifts) for c in cols[j : j + k]]
            j += k
        return cls._make(ins, outs, bmap)

    # ----------------------------------------------------------------- JSON
    @classmethod
    def from_json(cls, obj: Mapping) -> "LinearLayout":
        """Parse the layout JSON of docs/contract.md section 1 (a dict)."""
        if not isinstance(obj, Mapping):
            raise LayoutError(f"layout JSON must be an object, got {type(obj).__name__}")
        for key in ("in_dims", "out_dims", "bases"):
            if key not in obj:
                raise LayoutError(f"layout JSON lacks the key {key!r}")
        in_dims, out_dims, bases = obj["in_dims"], obj["out_dims"], obj["bases"]
        if not isinstance(bases, Mapping):
            raise LayoutError("layout JSON 'bases' must be an object")
        if not isinstance(in_dims, (list, tuple)) or not isinstance(out_dims, (list, tuple)):
            raise LayoutError("layout JSON 'in_dims' and 'out_dims' must be lists of [name, size]")
        ordered = {}
        for item in in_dims:
            if not isinstance(item, (list, tuple)) or len(item) != 2:
                raise LayoutError(f"in dim entry {item!r} is not [name, size]")
            name, size = item
            _check_name(name, "in dim")
            if name in ordered:
                raise LayoutError(f"in dim {name!r} is listed twice in in_dims")
            k = _log2_exact(size, f"in dim {name!r}")
            blist = bases.get(name, [])
            if not isinstance(blist, (list, tuple)):
                raise LayoutError(f"in dim {name!r}: bases must be a list")
            if len(blist) != k:
                raise LayoutError(f"in dim {name!r} has size {size} but {len(blist)} bases (expected {k})")
            ordered[name] = blist
        extra = set(bases) - set(ordered)
        if extra:
            raise LayoutError(f"bases name in dims {sorted(extra)} that are not in in_dims")
        return cls(ordered, [tuple(o) if isinstance(o, (list, tuple)) else o for o in out_dims])

    def to_json(self) -> dict:
        """The layout JSON of docs/contract.md section 1."""
        return {
            "in_dims": [[n, s] for n, s in self._ins],
            "out_dims": [[n, s] for n, s in self._outs],
            "bases": {n: [list(b) for b in self._bases[n]] for n, _ in self._ins},
        }

    # -------------------------------------------------------------- queries
    @property
    def in_dims(self) -> list[tuple[str, int]]:
        return list(self._ins)

    @property
    def out_dims(self) -> list[tuple[str, int]]:
        return list(self._outs)

    @property
    def in_dim_names(self) -> list[str]:
        return [n for n, _ in self._ins]

    @property
    def out_dim_names(self) -> list[str]:
        return [n for n, _ in self._outs]

    @property
    def bases(self) -> dict[str, list[list[int]]]:
        return {n: [list(b) for b in self._bases[n]] for n, _ in self._ins}

    def has_in_dim(self, name: str) -> bool:
        return isinstance(name, str) and name in self._bases

    def has_out_dim(self, name: str) -> bool:
        return any(n == name for n, _ in self._outs)

    def _in_index(self, name: str) -> int:
        for i, (n, _) in enumerate(self._ins):
            if n == name:
                return i
        raise LayoutError(f"unknown in dim {name!r} (in dims are {self.in_dim_names})")

    def _out_index(self, name: str) -> int:
        for i, (n, _) in enumerate(self._outs):
            if n == name:
                return i
        raise LayoutError(f"unknown out dim {name!r} (out dims are {self.out_dim_names})")

    def in_dim_size(self, name: str) -> int:
        return self._ins[self._in_index(name)][1]

    def out_dim_size(self, name: str) -> int:
        return self._outs[self._out_index(name)][1]

    def in_dim_size_log2(self, name: str) -> int:
        return self.in_dim_size(name).bit_length() - 1

    def out_dim_size_log2(self, name: str) -> int:
        return self.out_dim_size(name).bit_length() - 1

    @property
    def total_in_size(self) -> int:
        return 1 << self.total_in_bits

    @property
    def total_out_size(self) -> int:
        return 1 << self.total_out_bits

    @property
    def total_in_bits(self) -> int:
        return sum(s.bit_length() - 1 for _, s in self._ins)

    @property
    def total_out_bits(self) -> int:
        return sum(s.bit_length() - 1 for _, s in self._outs)

    def basis(self, in_dim: str, i: int, out_dim: str | None = None):
        """Basis ``i`` of ``in_dim`` (a tuple), or its component in ``out_dim``."""
        blist = self._bases[self.in_dim_names[self._in_index(in_dim)]]
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < len(blist):
            raise LayoutError(f"in dim {in_dim!r} has no basis {i} (it has {len(blist)})")
        if out_dim is None:
            return blist[i]
        return blist[i][self._out_index(out_dim)]

    def _out_shifts(self) -> list[int]:
        shifts, acc = [], 0
        for _, s in self._outs:
            shifts.append(acc)
            acc += s.bit_length() - 1
        return shifts

    def _flat(self, b: Basis) -> int:
        v = 0
        for sh, c in zip(self._out_shifts(), b):
            v |= c << sh
        return v

    def columns(self) -> list[int]:
        """Flattened images of every in bit (in dims in order, LSB first)."""
        if self._cols is None:
            shifts = self._out_shifts()
            cols = []
            for n, _ in self._ins:
                for b in self._bases[n]:
                    v = 0
                    for sh, c in zip(shifts, b):
                        v |= c << sh
                    cols.append(v)
            self._cols = cols
        return self._cols

    def _split(self, v: int) -> Basis:
        return tuple((v >> sh) & (s - 1) for sh, (_, s) in zip(self._out_shifts(), self._outs))

    def rank(self) -> int:
        if self._rank is None:
            self._rank = f2.rank(self.columns())
        return self._rank

    def is_surjective(self) -> bool:
        return self.rank() == self.total_out_bits

    def is_injective(self) -> bool:
        return self.rank() == self.total_in_bits

    def is_invertible(self) -> bool:
        return self.is_surjective() and self.total_in_bits == self.total_out_bits

    def free_variable_masks(self) -> dict[str, int]:
        """Per in dim, a mask of the in bits that are not pivots (broadcast/redundant bits).

        Pivots are chosen from the first in dim's lowest bit upwards, so a bit is
        free when its image is spanned by the images of the bits before it.
        """
        pivots = set(f2.pivot_columns(self.columns()))
        out, j = {}, 0
        for n, s in self._ins:
            m = 0
            for i in range(s.bit_length() - 1):
                if j not in pivots:
                    m |= 1 << i
                j += 1
            out[n] = m
        return out

    def num_consecutive_in_out(self) -> int:
        """Largest ``V`` such that inputs ``0..V-1`` of the first in dim map to consecutive
        values ``0..V-1`` of the first out dim (and nothing else touches those out bits)."""
        if not self._ins or not self._outs:
            return 1
        return self.factor_maximal_identity_prefix(self._ins[0][0], self._outs[0][0])[0]

    def factor_maximal_identity_prefix(
        self, in_dim: str, out_dim: str, max_size: int | None = None
    ) -> tuple[int, "LinearLayout"]:
        """Largest ``k <= max_size`` with ``identity_1d(k, in_dim, out_dim) * Q == self``; returns ``(k, Q)``."""
        self._in_index(in_dim)
        oi = self._out_index(out_dim)
        blist = self._bases[in_dim]
        limit = len(blist) if max_size is None else min(len(blist), _log2_exact(max_size, "max_size"))
        k = 0
        while k < limit:
            b = blist[k]
            if b[oi] != 1 << k or any(c for j, c in enumerate(b) if j != oi):
                break
            k += 1
        while k > 0:
            q = self.divide_left(LinearLayout.identity_1d(1 << k, in_dim, out_dim))
            if q is not None:
                return 1 << k, q
            k -= 1
        return 1, self

    def contiguous_elems_along_out_dim(self, out_dim: str) -> int:
        """Largest ``2**k`` such that every coordinate ``0..2**k-1`` of ``out_dim``
        (other out dims 0) lies in the image of the layout."""
        oi = self._out_index(out_dim)
        sh = self._out_shifts()[oi]
        ech = f2.Echelon()
        for c in self.columns():
            ech.insert(c)
        k = 0
        size_bits = self._outs[oi][1].bit_length() - 1
        while k < size_bits and ech.contains(1 << (sh + k)):
            k += 1
        return 1 << k

    def sublayout_is_zero(self, ins: Iterable[str], outs: Iterable[str]) -> bool:
        """Every basis of ``ins`` projected onto ``outs`` is 0."""
        ins, outs = _names(ins, "sublayout_is_zero ins"), _names(outs, "sublayout_is_zero outs")
        oidx = [self._out_index(o) for o in outs]
        for d in ins:
            self._in_index(d)
            if any(b[j] for b in self._bases[d] for j in oidx):
                return False
        return True

    def is_identity_on_out_dim(self, dim: str) -> bool:
        """Out ``dim`` equals in ``dim`` and no other in dim affects it."""
        _check_name(dim, "is_identity_on_out_dim")
        if dim not in self._bases or not self.has_out_dim(dim):
            return False
        oi = self._out_index(dim)
        if self.in_dim_size(dim) != self.out_dim_size(dim):
            return False
        for i, b in enumerate(self._bases[dim]):
            if b[oi] != 1 << i:
                return False
        return all(b[oi] == 0 for n, _ in self._ins if n != dim for b in self._bases[n])

    def is_trivial_over(self, dims: Iterable[str]) -> bool:
        """The identity on ``dims``: each is an in and an out dim of equal size mapped
        identically, no other in dim touches them, and they touch no other out dim."""
        dims = _names(dims, "is_trivial_over")
        dset = set(dims)
        for d in dims:
            if not self.is_identity_on_out_dim(d):
                return False
            for b in self._bases[d]:
                if any(c for (o, _), c in zip(self._outs, b) if o not in dset):
                    return False
        return True

    def is_zero(self) -> bool:
        return not any(self.columns())

    # ---------------------------------------------------------------- apply
    def apply(self, inputs: Mapping[str, object]) -> dict:
        """Evaluate on one input (``{in_dim: int}``) or, vectorised, on numpy arrays.

        Missing in dims are 0.  Returns ``{out_dim: value}`` (ints, or arrays of the
        broadcast input shape).
        """
        if not isinstance(inputs, Mapping):
            raise LayoutError(f"apply takes a mapping from in-dim name to value, got {type(inputs).__name__}")
        vectorised = any(isinstance(v, (np.ndarray, list, tuple)) for v in inputs.values())
        for name in inputs:
            if name not in self._bases:
                raise LayoutError(f"unknown in dim {name!r} (in dims are {self.in_dim_names})")
        if not vectorised:
            out = [0] * len(self._outs)
            for name, val in inputs.items():
                if isinstance(val, bool) or not isinstance(val, (int, np.integer)):
                    raise LayoutError(f"in dim {name!r}: value {val!r} is not an integer")
                val = int(val)
                size = self.in_dim_size(name)
                if not 0 <= val < size:
                    raise LayoutError(f"in dim {name!r}: value {val} is outside [0, {size})")
                i = 0
                blist = self._bases[name]
                while val:
                    if val & 1:
                        b = blist[i]
                        for j in range(len(out)):
                            out[j] ^= b[j]
                    val >>= 1
                    i += 1
            return {n: v for (n, _), v in zip(self._outs, out)}
        arrays = {}
        for name, val in inputs.items():
            a = np.asarray(val)
            if not np.issubdtype(a.dtype, np.integer):
                raise LayoutError(f"in dim {name!r}: values must be integers, got dtype {a.dtype}")
            size = self.in_dim_size(name)
            if a.size and (a.min() < 0 or a.max() >= size):
                raise LayoutError(f"in dim {name!r}: values outside [0, {size})")
            arrays[name] = a.astype(np.int64)
        shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
        res = [np.zeros(shape, dtype=np.int64) for _ in self._outs]
        for name, a in arrays.items():
            for i, b in enumerate(self._bases[name]):
                bit = ((a >> i) & 1).astype(bool)
                for j, c in enumerate(b):
                    if c:
                        res[j] ^= np.where(bit, c, 0)
        return {n: r for (n, _), r in zip(self._outs, res)}

    def apply_flat(self, x: int) -> int:
        """Evaluate on a flattened input (in bits in order) to a flattened output."""
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or not 0 <= x < self.total_in_size:
            raise LayoutError(f"apply_flat: input {x!r} is not an integer in [0, {self.total_in_size})")
        return f2.apply_columns(self.columns(), int(x))

    def table(self) -> np.ndarray:
        """All outputs: array ``[total_in_size, n_out_dims]``, input flattened (first in dim fastest)."""
        idx = np.arange(self.total_in_size, dtype=np.int64)
        inputs, shift = {}, 0
        for n, s in self._ins:
            inputs[n] = (idx >> shift) & (s - 1)
            shift += s.bit_length() - 1
        if not inputs:
            return np.zeros((1, len(self._outs)), dtype=np.int64)
        out = self.apply(inputs)
        return np.stack([out[n] for n, _ in self._outs], axis=-1) if self._outs else np.zeros((len(idx), 0), np.int64)

    # --------------------------------------------------------- dim surgery
    def transpose_ins(self, order: Sequence[str]) -> "LinearLayout":
        """Reorder the in dims (``order`` is a permutation of their names)."""
        order = _names(order, "transpose_ins order")
        if sorted(order) != sorted(self.in_dim_names):
            raise LayoutError(f"transpose_ins order {order} is not a permutation of in dims {self.in_dim_names}")
        return LinearLayout._make([(n, self.in_dim_size(n)) for n in order], self._outs, self._bases)

    def transpose_outs(self, order: Sequence[str]) -> "LinearLayout":
        """Reorder the out dims and the components of every basis."""
        order = _names(order, "transpose_outs order")
        if sorted(order) != sorted(self.out_dim_names):
            raise LayoutError(f"transpose_outs order {order} is not a permutation of out dims {self.out_dim_names}")
        perm = [self._out_index(n) for n in order]
        bmap = {n: [tuple(b[p] for p in perm) for b in bl] for n, bl in self._bases.items()}
        return LinearLayout._make(self._ins, [self._outs[p] for p in perm], bmap)

    def reshape_ins(self, new_ins: DimSpec) -> "LinearLayout":
        """Flatten all in bits (first dim least significant) and re-split them into ``new_ins``."""
        new_ins = _dim_spec(new_ins, "reshape_ins in dim")
        ks = [s.bit_length() - 1 for _, s in new_ins]
        if sum(ks) != self.total_in_bits:
            raise LayoutError(
                f"reshape_ins to {new_ins}: total size {1 << sum(ks)} differs from {self.total_in_size}"
            )
        flat = [b for n, _ in self._ins for b in self._bases[n]]
        bmap, j = {}, 0
        for (n, _), k in zip(new_ins, ks):
            bmap[n] = flat[j : j + k]
            j += k
        return LinearLayout._make(new_ins, self._outs, bmap)

    def reshape_outs(self, new_outs: DimSpec) -> "LinearLayout":
        """Flatten all out bits (first dim least significant) and re-split them into ``new_outs``."""
        new_outs = _dim_spec(new_outs, "reshape_outs out dim")
        ks = [s.bit_length() - 1 for _, s in new_outs]
        if sum(ks) != self.total_out_bits:
            raise LayoutError(
                f"reshape_outs to {new_outs}: total size {1 << sum(ks)} differs from {self.total_out_size}"
            )
        return LinearLayout._from_columns(self._ins, new_outs, self.columns())

    def flatten_ins(self) -> "LinearLayout":
        """One in dim, named like the first, holding every in bit."""
        if not self._ins:
            return self
        return self.reshape_ins([(self._ins[0][0], self.total_in_size)])

    def flatten_outs(self) -> "LinearLayout":
        """One out dim, named like the first, holding every out bit."""
        if not self._outs:
            return self
        return self.reshape_outs([(self._outs[0][0], self.total_out_size)])

    def squeeze_ins(self, dim: str) -> "LinearLayout":
        """Remove the size-1 in dim ``dim``."""
        if self.in_dim_size(dim) != 1:
            raise LayoutError(f"cannot squeeze in dim {dim!r} of size {self.in_dim_size(dim)}")
        ins = [d for d in self._ins if d[0] != dim]
        return LinearLayout._make(ins, self._outs, self._bases)

    def squeeze_outs(self, dim: str) -> "LinearLayout":
        """Remove the size-1 out dim ``dim``."""
        oi = self._out_index(dim)
        if self._outs[oi][1] != 1:
            raise LayoutError(f"cannot squeeze out dim {dim!r} of size {self._outs[oi][1]}")
        outs = [o for o in self._outs if o[0] != dim]
        bmap = {n: [b[:oi] + b[oi + 1 :] for b in bl] for n, bl in self._bases.items()}
        return LinearLayout._make(self._ins, outs, bmap)

    def resize_in_dim(self, dim: str, size: int) -> "LinearLayout":
        """Shrink (drop the most significant bases) or grow (append zero bases: broadcast)."""
        i = self._in_index(dim)
        k = _log2_exact(size, f"resize_in_dim {dim!r}")
        bl = list(self._bases[dim])
        bl = bl[:k] + [(0,) * len(self._outs)] * (k - len(bl))
        ins = list(self._ins)
        ins[i] = (dim, size)
        bmap = dict(self._bases)
        bmap[dim] = bl
        return LinearLayout._make(ins, self._outs, bmap)

    def resize_out_dim(self, dim: str, size: int) -> "LinearLayout":
        """Shrink an out dim to ``size``: every basis component ``>= size`` becomes 0 (Triton's
        ``resizeOutDim``; for power-of-two components this is the projection mod ``size``)."""
        oi = self._out_index(dim)
        _log2_exact(size, f"resize_out_dim {dim!r}")
        if size > self._outs[oi][1]:
            raise LayoutError(f"resize_out_dim only shrinks: out dim {dim!r} has size {self._outs[oi][1]} < {size}")
        outs = list(self._outs)
        outs[oi] = (dim, size)
        bmap = {n: [b[:oi] + (b[oi] if b[oi] < size else 0,) + b[oi + 1 :] for b in bl] for n, bl in self._bases.items()}
        return LinearLayout._make(self._ins, outs, bmap)

    def rename_in_dim(self, old: str, new: str) -> "LinearLayout":
        i = self._in_index(old)
        _check_name(new, "in dim")
        if new != old and new in self._bases:
            raise LayoutError(f"cannot rename in dim {old!r} to {new!r}: {new!r} exists")
        ins = list(self._ins)
        ins[i] = (new, ins[i][1])
        bmap = {(new if n == old else n): bl for n, bl in self._bases.items()}
        return LinearLayout._make(ins, self._outs, bmap)

    def rename_out_dim(self, old: str, new: str) -> "LinearLayout":
        oi = self._out_index(old)
        _check_name(new, "out dim")
        if new != old and self.has_out_dim(new):
            raise LayoutError(f"cannot rename out dim {old!r} to {new!r}: {new!r} exists")
        outs = list(self._outs)
        outs[oi] = (new, outs[oi][1])
        return LinearLayout._make(self._ins, outs, self._bases)

    def concat_ins(self, other: "LinearLayout") -> "LinearLayout":
        """Same out dims and sizes, disjoint in dims: ``[self ins, other ins]``."""
        _check_layout(other, "concat_ins")
        if self._outs != other._outs:
            raise LayoutError(f"concat_ins needs equal out dims: {self.out_dims} vs {other.out_dims}")
        common = set(self._bases) & set(other._bases)
        if common:
            raise LayoutError(f"concat_ins needs disjoint in dims; both have {sorted(common)}")
        bmap = dict(self._bases)
        bmap.update(other._bases)
        return LinearLayout._make(self._ins + other._ins, self._outs, bmap)

    def concat_outs(self, other: "LinearLayout") -> "LinearLayout":
        """Same in dims and sizes, disjoint out dims: out dims stacked ``[self, other]``."""
        _check_layout(other, "concat_outs")
        if self._ins != other._ins:
            raise LayoutError(f"concat_outs needs equal in dims: {self.in_dims} vs {other.in_dims}")
        common = set(self.out_dim_names) & set(other.out_dim_names)
        if common:
            raise LayoutError(f"concat_outs needs disjoint out dims; both have {sorted(common)}")
        bmap = {n: [a + b for a, b in zip(self._bases[n], other._bases[n])] for n, _ in self._ins}
        return LinearLayout._make(self._ins, self._outs + other._outs, bmap)

    def sublayout(self, ins: Iterable[str], outs: Iterable[str]) -> "LinearLayout":
        """Keep only in dims ``ins`` and out dims ``outs`` (original order and sizes)."""
        ins, outs = set(_names(ins, "sublayout ins")), set(_names(outs, "sublayout outs"))
        for d in ins:
            self._in_index(d)
        for o in outs:
            self._out_index(o)
        keep = [j for j, (o, _) in enumerate(self._outs) if o in outs]
        new_ins = [d for d in self._ins if d[0] in ins]
        bmap = {n: [tuple(b[j] for j in keep) for b in self._bases[n]] for n, _ in new_ins}
        return LinearLayout._make(new_ins, [self._outs[j] for j in keep], bmap)

    def remove_zero_bases_along_dim(self, dim: str) -> "LinearLayout":
        """Delete the all-zero bases of in dim ``dim`` (e.g. strip register broadcast)."""
        i = self._in_index(dim)
        bl = [b for b in self._bases[dim] if any(b)]
        ins = list(self._ins)
        ins[i] = (dim, 1 << len(bl))
        bmap = dict(self._bases)
        bmap[dim] = bl
        return LinearLayout._make(ins, self._outs, bmap)

    def quotient(self, dims: Iterable[str]) -> "LinearLayout | None":
        """If trivial over ``dims``, the layout on the remaining in and out dims; else None."""
        dims = _names(dims, "quotient")
        if not self.is_trivial_over(dims):
            return None
        keep_in = [n for n in self.in_dim_names if n not in dims]
        keep_out = [n for n in self.out_dim_names if n not in dims]
        return self.sublayout(keep_in, keep_out)

    # -------------------------------------------------------------- algebra
    def __mul__(self, outer: "LinearLayout") -> "LinearLayout":
        """Direct product: ``outer``'s bases follow ``self``'s in shared in dims and are
        shifted above ``self``'s size in shared out dims."""
        if not isinstance(outer, LinearLayout):
            return NotImplemented
        ins = supremum(self.in_dim_names, outer.in_dim_names)
        outs = supremum(self.out_dim_names, outer.out_dim_names)
        a_out = dict(self._outs)
        b_out = dict(outer._outs)
        out_dims = [(o, a_out.get(o, 1) * b_out.get(o, 1)) for o in outs]
        a_idx = {o: i for i, (o, _) in enumerate(self._outs)}
        b_idx = {o: i for i, (o, _) in enumerate(outer._outs)}
        shift = {o: (a_out.get(o, 1).bit_length() - 1) for o in outs}
        bmap, in_dims = {}, []
        for d in ins:
            bl = []
            for b in self._bases.get(d, ()):
                bl.append(tuple(b[a_idx[o]] if o in a_idx else 0 for o in outs))
            for b in outer._bases.get(d, ()):
                bl.append(tuple((b[b_idx[o]] << shift[o]) if o in b_idx else 0 for o in outs))
            bmap[d] = bl
            in_dims.append((d, 1 << len(bl)))
        return LinearLayout._make(in_dims, out_dims, bmap)

    def compose(self, outer: "LinearLayout") -> "LinearLayout":
        """``outer ∘ self``: requires ``self``'s out dims to be ``outer``'s in dims (as sets)
        with sizes no larger.  The result has ``self``'s in dims and ``outer``'s out dims."""
        _check_layout(outer, "compose")
        if set(self.out_dim_names) != set(outer.in_dim_names):
            raise LayoutError(
                f"compose: out dims {self.out_dim_names} of the inner layout are not the in dims "
                f"{outer.in_dim_names} of the outer layout"
            )
        for o, s in self._outs:
            if s > outer.in_dim_size(o):
                raise LayoutError(f"compose: out dim {o!r} has size {s} > outer in dim size {outer.in_dim_size(o)}")
        inner = self._aligned_columns(outer._ins, "compose")
        outer_cols = outer.columns()
        cols = [f2.apply_columns(outer_cols, c) for c in inner]
        return LinearLayout._from_columns(self._ins, outer._outs, cols)

    def _aligned_columns(self, outs: DimSpec, what: str) -> list[int]:
        """Columns of ``self`` flattened over the out dims ``outs`` (a superset, sizes >=)."""
        sizes = dict(outs)
        for o, s in self._outs:
            if o not in sizes:
                raise LayoutError(f"{what}: out dim {o!r} is missing from the other layout's out dims {list(sizes)}")
            if s > sizes[o] and any(b[self._out_index(o)] >= sizes[o] for bl in self._bases.values() for b in bl):
                raise LayoutError(f"{what}: out dim {o!r} has size {s} > {sizes[o]}")
        shifts, acc = {}, 0
        for o, s in outs:
            shifts[o] = acc
            acc += s.bit_length() - 1
        cols = []
        for n, _ in self._ins:
            for b in self._bases[n]:
                v = 0
                for (o, _), c in zip(self._outs, b):
                    v |= c << shifts[o]
                cols.append(v)
        return cols

    def invert_and_compose(self, outer: "LinearLayout") -> "LinearLayout":
        """``C`` with ``outer(C(x)) == self(x)`` for every ``x`` (free variables 0).

        In dims present in both layouts with identical images are kept as
        identity (e.g. warp -> warp), as Triton does.  The rest is solved by
        least squares: each in bit of ``self`` becomes the pivot-supported
        preimage under ``outer`` (pivots: ``outer``'s in bits in order, a bit is
        a pivot when independent of the bits before it; free variables are 0).
        When keeping those dims as identity makes the system unsolvable (their
        bases are needed to reach another dim's image), everything is solved
        jointly instead.  ``C`` has ``self``'s in dims and ``outer``'s in dims
        (with their sizes) as out dims.  Raises ``LayoutError`` when some image
        of ``self`` is not in ``outer``'s image.
        """
        _check_layout(outer, "invert_and_compose")
        identity_dims = set()
        for d, s in self._ins:
            if d in outer._bases and outer.in_dim_size(d) == s:
                mine = [{o: c for (o, _), c in zip(self._outs, b) if c} for b in self._bases[d]]
                theirs = [{o: c for (o, _), c in zip(outer._outs, b) if c} for b in outer._bases[d]]
                if mine == theirs:
                    identity_dims.add(d)
        a_all = self._aligned_columns(outer._outs, "invert_and_compose")
        b_all = outer.columns()
        sols = self._solve_excluding(a_all, outer, b_all, identity_dims)
        if sols is None and identity_dims:
            identity_dims = set()
            sols = self._solve_excluding(a_all, outer, b_all, identity_dims)
        if sols is None:
            x = f2.solve_many(b_all, a_all)
            idx = next(i for i, v in enumerate(x) if v is None)
            name, bit = self._in_bit_name(idx)
            raise LayoutError(
                f"invert_and_compose: image of in dim {name!r} basis {bit} "
                f"({list(self._bases[name][bit])}) is not in the image of the outer layout"
            )
        return LinearLayout._from_columns(self._ins, outer._ins, sols)

    def _in_bit_name(self, j: int) -> tuple[str, int]:
        """The (in dim, bit) of flattened in bit ``j``."""
        for n, s in self._ins:
            k = s.bit_length() - 1
            if j < k:
                return n, j
            j -= k
        raise LayoutError(f"in bit {j} is outside the layout's {self.total_in_bits} in bits")

    def _solve_excluding(self, a_all, outer, b_all, identity_dims) -> list[int] | None:
        """Flattened columns of ``C`` (over ``outer``'s in bits) or None when unsolvable.

        In dims in ``identity_dims`` map to themselves; the other in bits of
        ``self`` are solved against the other in bits of ``outer``.
        """
        b_off, acc = {}, 0
        for n, s in outer._ins:
            b_off[n] = acc
            acc += s.bit_length() - 1
        keep_b = [j for n, s in outer._ins if n not in identity_dims for j in range(b_off[n], b_off[n] + s.bit_length() - 1)]
        rows, j = [], 0
        for n, s in self._ins:
            k = s.bit_length() - 1
            rows.append((n, j, k))
            j += k
        targets = [a_all[j + t] for n, j, k in rows if n not in identity_dims for t in range(k)]
        sols = f2.solve_many([b_all[j] for j in keep_b], targets)
        if any(x is None for x in sols):
            return None
        if not identity_dims:
            return sols  # solved over all of outer's in bits: already in place
        out, it = [], iter(sols)
        for n, j, k in rows:
            for t in range(k):
                if n in identity_dims:
                    out.append(1 << (b_off[n] + t))
                    continue
                x, y = next(it), 0
                while x:  # move solution bit i to outer in bit keep_b[i]
                    low = x & -x
                    y |= 1 << keep_b[low.bit_length() - 1]
                    x ^= low
                out.append(y)
        return out

    def pseudo_inverse(self) -> "LinearLayout":
        """A right inverse ``P`` (out dims -> in dims) with ``self(P(y)) == y`` on the image,
        free variables 0."""
        ident = LinearLayout.identity(self._outs)
        return ident.invert_and_compose(self)

    def invert(self) -> "LinearLayout":
        """The inverse of an invertible layout."""
        if not self.is_invertible():
            raise LayoutError(
                f"layout is not invertible (rank {self.rank()}, {self.total_in_bits} in bits, "
                f"{self.total_out_bits} out bits)"
            )
        return self.pseudo_inverse()

    def divide_left(self, b: "LinearLayout") -> "LinearLayout | None":
        """``C`` with ``b * C == self`` (C keeps self's dim names), or None."""
        return self._divide(b, left=True)

    def divide_right(self, b: "LinearLayout") -> "LinearLayout | None":
        """``C`` with ``C * b == self`` (C keeps self's dim names), or None."""
        return self._divide(b, left=False)

    def _divide(self, b: "LinearLayout", left: bool) -> "LinearLayout | None":
        _check_layout(b, "divide_left" if left else "divide_right")
        for n, s in b._ins:
            if n not in self._bases:
                if s != 1:
                    return None
        a_out = dict(self._outs)
        for o, s in b._outs:
            if o not in a_out:
                if s != 1:
                    return None
            elif s > a_out[o]:
                return None
        b_out = dict(b._outs)
        c_outs = [(o, s // b_out.get(o, 1)) for o, s in self._outs]
        c_ins = []
        bmap = {}
        for n, s in self._ins:
            kb = b.in_dim_size_log2(n) if n in b._bases else 0
            ka = s.bit_length() - 1
            if kb > ka:
                return None
            bl = self._bases[n]
            if left:
                c_bl = bl[kb:]
                shifts = {o: (b_out.get(o, 1).bit_length() - 1) for o, _ in self._outs}
                new = []
                for basis in c_bl:
                    t = []
                    for (o, _), c in zip(self._outs, basis):
                        sh = shifts[o]
                        if c & ((1 << sh) - 1):
                            return None
                        t.append(c >> sh)
                    new.append(tuple(t))
            else:
                new = list(bl[: ka - kb])
                for basis in new:
                    for (o, _), c, (_, cs) in zip(self._outs, basis, c_outs):
                        if c >= cs:
                            return None
            bmap[n] = new
            c_ins.append((n, 1 << len(new)))
        try:
            c = LinearLayout._make(c_ins, c_outs, bmap)
            prod = b * c if left else c * b
        except LayoutError:
            return None
        return c if prod == self else None

    def to_matrix(self) -> np.ndarray:
        """0/1 matrix ``[total_out_bits, total_in_bits]`` (rows out bits, columns in bits)."""
        cols = self.columns()
        m = np.zeros((self.total_out_bits, len(cols)), dtype=np.uint8)
        for j, c in enumerate(cols):
            for r in range(self.total_out_bits):
                m[r, j] = (c >> r) & 1
        return m

    def to_galois(self):
        """The matrix as a ``galois.GF(2)`` array (requires the optional ``galois`` package)."""
        try:
            import galois
        except ImportError as e:  # pragma: no cover - depends on environment
            raise LayoutError("to_galois needs the 'galois' package: pip install galois") from e
        return galois.GF(2)(self.to_matrix())

    # ------------------------------------------------------ equality, text
    def _key(self):
        ins = tuple(sorted(self._ins))
        outs = tuple(sorted(self._outs))
        perm = [self._out_index(o) for o, _ in outs]
        bases = tuple(
            (n, tuple(tuple(b[p] for p in perm) for b in self._bases[n])) for n, _ in ins
        )
        return ins, outs, bases

    def __eq__(self, other: object) -> bool:
        """Same map on the same named dims (dim order is not compared)."""
        if not isinstance(other, LinearLayout):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self._key())
        return self._hash

    def equal_ignoring_out_dim_sizes(self, other: "LinearLayout") -> bool:
        """Same map on the same named dims, out-dim sizes not compared (Triton's
        ``equalIgnoringOutDimSizes``; dim order is not compared either)."""
        _check_layout(other, "equal_ignoring_out_dim_sizes")
        if set(self.out_dim_names) != set(other.out_dim_names):
            return False
        a, b = self._key(), other._key()
        return a[0] == b[0] and a[2] == b[2]

    def same_order(self, other: "LinearLayout") -> bool:
        """Equal and with the same dim orders (matters for reshape, flatten and ``*``)."""
        _check_layout(other, "same_order")
        return self == other and self._ins == other._ins and self._outs == other._outs

    def __repr__(self) -> str:
        return f"LinearLayout({self.bases!r}, {self.out_dims!r})"

    def __str__(self) -> str:
        lines = [
            "LinearLayout  "
            + (" x ".join(f"{n}:{s}" for n, s in self._ins) or "(no in dims)")
            + "  ->  "
            + (" x ".join(f"{n}:{s}" for n, s in self._outs) or "(no out dims)")
        ]
        outs = self.out_dim_names
        for n, _ in self._ins:
            for i, b in enumerate(self._bases[n]):
                comps = ", ".join(f"{o}={c}" for o, c in zip(outs, b))
                lines.append(f"  {n}[{1 << i}] -> ({comps})")
        if self.total_in_bits and self.total_out_bits:
            lines.append("matrix (rows: out bits, LSB first; columns: in bits, LSB first):")
            col_labels = [f"{n}{i}" for n, s in self._ins for i in range(s.bit_length() - 1)]
            row_labels = [f"{n}{i}" for n, s in self._outs for i in range(s.bit_length() - 1)]
            w = max(len(x) for x in row_labels)
            lines.append(" " * (w + 2) + " ".join(col_labels))
            m = self.to_matrix()
            for r, lab in enumerate(row_labels):
                cells = " ".join(("1" if m[r, c] else ".").rjust(len(col_labels[c])) for c in range(len(col_labels)))
                lines.append(f"  {lab.rjust(w)} {cells}")
        return "\n".join(lines)


def least_squares(a: LinearLayout, b: LinearLayout) -> LinearLayout:
    """``X`` with ``a(X(x)) == b(x)``, free variables 0 (Triton's ``lstsq(A, B)``).

    Unlike ``invert_and_compose`` no in dim is kept as identity: everything is solved.
    """
    _check_layout(a, "least_squares")
    _check_layout(b, "least_squares")
    b_cols = b._aligned_columns(a._outs, "least_squares")
    sols = f2.solve_many(a.columns(), b_cols)
    for idx, x in enumerate(sols):
        if x is None:
            name, bit = b._in_bit_name(idx)
            raise LayoutError(f"least_squares: the image of in dim {name!r} basis {bit} is not in the image of A")
    return LinearLayout._from_columns(b._ins, a._ins, sols)  # type: ignore[arg-type]
