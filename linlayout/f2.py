"""Linear algebra over GF(2) with Python ints as bit vectors.

A vector of GF(2)^n is an ``int`` whose bit ``i`` is coordinate ``i``.  A matrix
is given by its **columns**: ``cols[j]`` is the image of the ``j``-th unit input
vector, so ``A @ x`` is the XOR of ``cols[j]`` over the set bits ``j`` of ``x``.
This is the natural form for linear layouts (column ``j`` = image of input bit
``j``) and lets every operation below run on whole words: reducing a vector
against an echelon basis costs one XOR per pivot, never a loop over bits.

Pivot convention (Triton's ``lstsq`` / RREF with free variables set to 0):
columns are scanned in index order and a column is a *pivot column* when it is
independent of the columns before it.  ``solve`` only ever uses pivot columns,
so its answer is the unique solution whose free variables are 0.
"""

from __future__ import annotations

from typing import Iterable, Sequence

__all__ = [
    "Echelon",
    "apply_columns",
    "complement",
    "image_basis",
    "in_span",
    "intersection",
    "inverse",
    "kernel_basis",
    "pivot_columns",
    "rank",
    "rref_rows",
    "solve",
    "solve_many",
    "span_sum",
    "transpose",
]


class Echelon:
    """An echelon basis of a subspace, built incrementally, with provenance.

    Each stored vector has a distinct leading (highest) bit.  ``combo`` records,
    as a bit mask over insertion indices, which inserted vectors XOR to it, so a
    reduction also tells *how* a vector is expressed in the inserted ones.
    Reduction visits pivots from the highest leading bit down: one XOR per pivot.
    """

    __slots__ = ("_lead", "_vec", "_combo", "_count")

    def __init__(self) -> None:
        self._lead: list[int] = []  # leading bits, kept sorted descending
        self._vec: dict[int, int] = {}
        self._combo: dict[int, int] = {}
        self._count = 0

    @property
    def rank(self) -> int:
        return len(self._lead)

    def basis(self) -> list[int]:
        """The stored (echelon) vectors, highest leading bit first."""
        return [self._vec[b] for b in self._lead]

    def reduce(self, v: int) -> tuple[int, int]:
        """Return ``(residual, combo)``: ``v = residual ^ XOR(inserted[i] for i in combo)``.

        ``residual`` is 0 exactly when ``v`` lies in the span.
        """
        combo = 0
        vec = self._vec
        cmb = self._combo
        for b in self._lead:
            if (v >> b) & 1:
                v ^= vec[b]
                combo ^= cmb[b]
        return v, combo

    def insert(self, v: int) -> bool:
        """Insert the next vector (index = number of insertions so far).

        Returns True if it was independent of the vectors before it.
        """
        idx = self._count
        self._count += 1
        r, combo = self.reduce(v)
        if r == 0:
            return False
        lead = r.bit_length() - 1
        self._vec[lead] = r
        self._combo[lead] = combo ^ (1 << idx)
        # keep leads sorted descending (bisect on a short list)
        leads = self._lead
        lo, hi = 0, len(leads)
        while lo < hi:
            mid = (lo + hi) // 2
            if leads[mid] > lead:
                lo = mid + 1
            else:
                hi = mid
        leads.insert(lo, lead)
        return True

    def contains(self, v: int) -> bool:
        return self.reduce(v)[0] == 0


def _echelon_of(vectors: Iterable[int]) -> tuple[Echelon, list[int], list[int]]:
    """Insert ``vectors`` in order; return the echelon, pivot indices, and kernel vectors."""
    ech = Echelon()
    pivots: list[int] = []
    kernel: list[int] = []
    for j, v in enumerate(vectors):
        if ech.insert(v):
            pivots.append(j)
        else:
            # v depends on earlier vectors: v ^ XOR(combo) == 0
            _, combo = ech.reduce(v)
            kernel.append(combo | (1 << j))
    return ech, pivots, kernel


def rank(vectors: Iterable[int]) -> int:
    """Dimension of the span of ``vectors``."""
    ech = Echelon()
    for v in vectors:
        ech.insert(v)
    return ech.rank


def pivot_columns(cols: Sequence[int]) -> list[int]:
    """Indices of the columns independent of all columns before them."""
    return _echelon_of(cols)[1]


def image_basis(cols: Sequence[int]) -> list[int]:
    """A basis of the column space: the pivot columns themselves, in order."""
    return [cols[j] for j in pivot_columns(cols)]


def kernel_basis(cols: Sequence[int]) -> list[int]:
    """A basis of ``{x : A x = 0}``; each ``x`` is a bit mask over column indices.

    One vector per non-pivot column ``j``: ``e_j`` plus the pivot columns that
    express column ``j``.
    """
    return _echelon_of(cols)[2]


def in_span(vectors: Sequence[int], v: int) -> bool:
    ech = Echelon()
    for u in vectors:
        ech.insert(u)
    return ech.contains(v)


def apply_columns(cols: Sequence[int], x: int) -> int:
    """``A @ x``: XOR of the columns selected by the set bits of ``x``."""
    out = 0
    j = 0
    while x:
        if x & 1:
            out ^= cols[j]
        x >>= 1
        j += 1
    return out


class _Solver:
    """Solves ``A x = b`` for many right-hand sides, free variables set to 0."""

    __slots__ = ("ech", "pivots")

    def __init__(self, cols: Sequence[int]) -> None:
        self.ech, self.pivots, _ = _echelon_of(cols)

    def solve(self, b: int) -> int | None:
        r, combo = self.ech.reduce(b)
        if r:
            return None
        # combo is over insertion indices = column indices; dependent columns
        # never entered a combo, so only pivot columns appear (free vars = 0).
        return combo


def solve(cols: Sequence[int], b: int) -> int | None:
    """The solution ``x`` of ``A x = b`` supported on pivot columns, or None.

    Free variables (non-pivot columns) are 0, as in Triton's ``lstsq``.
    """
    return _Solver(cols).solve(b)


def solve_many(cols: Sequence[int], targets: Sequence[int]) -> list[int | None]:
    """``solve`` for each target, sharing one elimination."""
    s = _Solver(cols)
    return [s.solve(b) for b in targets]


def inverse(cols: Sequence[int]) -> list[int]:
    """Columns of ``A^-1`` for a square invertible ``A`` (n columns of n bits).

    Raises ``ValueError`` when ``A`` is singular or not square.
    """
    n = len(cols)
    if any(c >> n for c in cols):
        raise ValueError("matrix is not square: a column has more bits than there are columns")
    s = _Solver(cols)
    if len(s.pivots) != n:
        raise ValueError(f"matrix is singular (rank {len(s.pivots)} < {n})")
    out = []
    for i in range(n):
        x = s.solve(1 << i)
        assert x is not None  # full rank
        out.append(x)
    return out


def span_sum(u: Sequence[int], v: Sequence[int]) -> list[int]:
    """A basis of ``span(u) + span(v)``."""
    return image_basis(list(u) + list(v))


def intersection(u: Sequence[int], v: Sequence[int]) -> list[int]:
    """A basis of ``span(u) ∩ span(v)``.

    Kernel vectors of ``[u | v]`` pair combinations of ``u`` with equal
    combinations of ``v``; their ``u`` halves span the intersection.
    """
    u = image_basis(u)
    n = len(u)
    mask = (1 << n) - 1
    out = []
    for k in kernel_basis(u + list(v)):
        out.append(apply_columns(u, k & mask))
    return image_basis(out)


def complement(u: Sequence[int], n_bits: int, candidates: Sequence[int] | None = None) -> list[int]:
    """Vectors completing ``span(u)`` to GF(2)^n_bits (or to ``span(u + candidates)``).

    Candidates are tried in order (default: unit vectors, lowest bit first) and a
    candidate is kept when it is independent of ``u`` and the ones kept so far.
    """
    ech = Echelon()
    for x in u:
        ech.insert(x)
    if candidates is None:
        candidates = [1 << i for i in range(n_bits)]
    return [c for c in candidates if ech.insert(c)]


def transpose(rows: Sequence[int], n_cols: int) -> list[int]:
    """Transpose a bit matrix: rows (``n_cols`` bits each) -> columns as ints."""
    cols = [0] * n_cols
    for i, r in enumerate(rows):
        while r:
            low = r & -r
            cols[low.bit_length() - 1] |= 1 << i
            r ^= low
    return cols


def rref_rows(rows: Sequence[int], n_cols: int) -> tuple[list[int], list[int]]:
    """Reduced row echelon form of a matrix given by rows (bit ``j`` = column ``j``).

    Pivot columns are chosen from column 0 upwards; returns ``(rows, pivots)``
    with the non-zero rows of the RREF and their pivot columns.
    """
    work = [r for r in rows]
    pivots: list[int] = []
    out: list[int] = []
    for c in range(n_cols):
        bit = 1 << c
        idx = next((i for i, r in enumerate(work) if r & bit), None)
        if idx is None:
            continue
        p = work.pop(idx)
        work = [r ^ p if r & bit else r for r in work]
        out = [r ^ p if r & bit else r for r in out]
        out.append(p)
        pivots.append(c)
    return out, pivots
