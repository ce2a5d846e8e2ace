"""Linear algebra over GF(2) with Python ints as bit vectors.

A vector of GF(2)^n is an ``int`` whose bit ``i`` is coordinate ``i``.  A matrix
is given by its **columns**: ``cols[j]`` is the image of the ``j``-th unit input
vector, so ``A @ x`` is the XOR of ``cols[j]`` over the set bits ``j`` of ``x``.
This is the natural form for linear layouts (column ``j`` = image of input bit
``j``) and lets every operation below run on whole words: reducing a vector
against an echelon basis costs one XOR per pivot it meets, never a loop over bits.

Pivot convention (Triton's ``lstsq`` / RREF with free variables set to 0):
columns are scanned in index order and a column is a *pivot column* when it is
independent of the columns before it.  ``solve`` only ever uses pivot columns,
so its answer is the unique solution whose free variables are 0.

Implementation: an echelon basis is a dict ``lead -> vector`` whose vectors have
distinct leading (highest) bits, plus the mask of those leads.  Reducing ``v``
repeatedly XORs the stored vector of the highest lead bit still set in ``v``;
each step clears that bit and only touches lower bits, so it ends after at most
``rank`` steps.  When the provenance of a vector is needed (``solve``), the
combination of input columns is carried in the bits above the vectors' width
("packed" vectors), so one XOR updates the vector and its provenance together.
"""

from __future__ import annotations

from typing import Iterable, Sequence

__all__ = [
    "Echelon",
    "Span",
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


class Span:
    """A subspace as an echelon basis built incrementally, without provenance (cheaper than
    ``Echelon`` when only membership and rank matter).  Each stored vector has a distinct
    leading (highest) bit."""

    __slots__ = ("_vec", "_mask")

    def __init__(self, vectors: Iterable[int] = ()) -> None:
        vec: dict[int, int] = {}  # lead bit -> vector with that lead
        mask = 0  # OR of 1 << lead
        for v in vectors:  # insert(v), inlined
            m = v & mask
            while m:
                v ^= vec[m.bit_length() - 1]
                m = v & mask
            if v:
                lead = v.bit_length() - 1
                vec[lead] = v
                mask |= 1 << lead
        self._vec, self._mask = vec, mask

    @property
    def rank(self) -> int:
        return len(self._vec)

    def copy(self) -> "Span":
        """An independent copy (inserting into one leaves the other as it is)."""
        out = Span.__new__(Span)
        out._vec, out._mask = dict(self._vec), self._mask
        return out

    def insert(self, v: int) -> bool:
        """Add ``v``; True if it was independent of the span."""
        vec, mask = self._vec, self._mask
        m = v & mask
        while m:  # _reduce, inlined
            v ^= vec[m.bit_length() - 1]
            m = v & mask
        if v == 0:
            return False
        lead = v.bit_length() - 1
        vec[lead] = v
        self._mask = mask | (1 << lead)
        return True

    def reduce(self, v: int) -> int:
        """``v`` reduced against the basis: no bit at any lead, 0 exactly when ``v`` is in the span
        (the same residue for every member of ``v + span``)."""
        return _reduce(v, self._vec, self._mask)

    def contains(self, v: int) -> bool:
        """Whether ``v`` is in the span: reduced from its highest bit down, it is not as soon as
        that bit is no lead (the XORs below it never clear it)."""
        vec = self._vec
        while v:
            u = vec.get(v.bit_length() - 1)
            if u is None:
                return False
            v ^= u
        return True


class Echelon:
    """An echelon basis of a subspace, built incrementally, with provenance.

    Each stored vector has a distinct leading (highest) bit.  ``combo`` records,
    as a bit mask over insertion indices, which inserted vectors XOR to it, so a
    reduction also tells *how* a vector is expressed in the inserted ones.
    """

    __slots__ = ("_vec", "_combo", "_mask", "_count")

    def __init__(self) -> None:
        self._vec: dict[int, int] = {}  # lead bit -> vector with that lead
        self._combo: dict[int, int] = {}  # lead bit -> insertion indices XORing to it
        self._mask = 0  # OR of 1 << lead
        self._count = 0

    @property
    def rank(self) -> int:
        return len(self._vec)

    def basis(self) -> list[int]:
        """The stored (echelon) vectors, highest leading bit first."""
        return [self._vec[b] for b in sorted(self._vec, reverse=True)]

    def reduce(self, v: int) -> tuple[int, int]:
        """Return ``(residual, combo)``: ``v = residual ^ XOR(inserted[i] for i in combo)``.

        ``residual`` has no bit at any lead, and is 0 exactly when ``v`` lies in the span.
        """
        combo = 0
        vec, cmb, mask = self._vec, self._combo, self._mask
        m = v & mask
        while m:
            b = m.bit_length() - 1
            v ^= vec[b]
            combo ^= cmb[b]
            m = v & mask
        return v, combo

    def insert(self, v: int) -> bool:
        """Insert the next vector (index = number of insertions so far).

        Returns True if it was independent of the vectors before it.
        """
        idx = self._count
        self._count = idx + 1
        vec, cmb, mask = self._vec, self._combo, self._mask
        combo = 0
        m = v & mask
        while m:  # self.reduce(v), inlined
            b = m.bit_length() - 1
            v ^= vec[b]
            combo ^= cmb[b]
            m = v & mask
        if v == 0:
            return False
        lead = v.bit_length() - 1
        vec[lead] = v
        cmb[lead] = combo ^ (1 << idx)
        self._mask = mask | (1 << lead)
        return True

    def contains(self, v: int) -> bool:
        return _reduce(v, self._vec, self._mask) == 0


# ----------------------------------------------------------------- kernels
def _reduce(v: int, basis: dict[int, int], mask: int) -> int:
    """``v`` reduced against an echelon ``basis`` (lead -> vector) with lead ``mask``."""
    m = v & mask
    while m:
        v ^= basis[m.bit_length() - 1]
        m = v & mask
    return v


def _eliminate(vectors: Sequence[int], low: int) -> tuple[dict[int, int], int, list[int]]:
    """Forward elimination of packed vectors (a vector part ``& low``, a payload above it) in
    order: a vector whose vector part stays non-zero once reduced against the ones kept before
    is kept, under the lead bit of that part.  Returns (lead -> kept vector, mask of the leads,
    every vector as reduced)."""
    basis: dict[int, int] = {}
    mask = 0
    reduced = []
    for v in vectors:
        m = v & mask
        while m:
            v ^= basis[m.bit_length() - 1]
            m = v & mask
        r = v & low
        if r:
            b = r.bit_length() - 1
            basis[b] = v
            mask |= 1 << b
        reduced.append(v)
    return basis, mask, reduced


class _Packed:
    """Forward elimination of columns in index order, provenance packed above bit ``shift``.

    ``basis`` maps each lead bit to ``reduced_column | combo << shift`` where
    ``combo`` is the set of pivot columns (and the column itself) XORing to it.
    ``pivots`` lists the pivot column indices; ``kernel`` holds, for each
    dependent column ``j``, the mask of columns summing to 0 (bit ``j`` set).
    """

    __slots__ = ("shift", "low", "basis", "mask", "pivots", "kernel")

    def __init__(self, cols: Sequence[int], width: int = 0) -> None:
        shift = max(width, max((c.bit_length() for c in cols), default=0))
        low = (1 << shift) - 1
        basis, mask, reduced = _eliminate([c | (1 << (shift + j)) for j, c in enumerate(cols)], low)
        self.shift, self.low, self.basis, self.mask = shift, low, basis, mask
        self.pivots = [j for j, v in enumerate(reduced) if v & low]
        self.kernel = [v >> shift for v in reduced if not v & low]

    def solve(self, b: int) -> int | None:
        if b >> self.shift:
            return None  # b has a bit above every column: not in the image
        v = _reduce(b, self.basis, self.mask)
        if v & self.low:
            return None
        # combo bits come only from pivot columns: free variables are 0.
        return v >> self.shift


def rank(vectors: Iterable[int]) -> int:
    """Dimension of the span of ``vectors``: each reduced from its highest bit down against the kept
    vectors (one per leading bit) until its highest bit leads none, then kept under it (``Span``'s
    basis, without the mask of the leads: cheaper for the few short vectors of most calls)."""
    vec: dict[int, int] = {}  # lead bit -> kept vector with that lead
    for v in vectors:
        while v:
            lead = v.bit_length() - 1
            u = vec.get(lead)
            if u is None:
                vec[lead] = v
                break
            v ^= u
    return len(vec)


def pivot_columns(cols: Sequence[int]) -> list[int]:
    """Indices of the columns independent of all columns before them."""
    span = Span()
    return [j for j, v in enumerate(cols) if span.insert(v)]


def image_basis(cols: Sequence[int]) -> list[int]:
    """A basis of the column space: the pivot columns themselves, in order."""
    return [cols[j] for j in pivot_columns(cols)]


def kernel_basis(cols: Sequence[int]) -> list[int]:
    """A basis of ``{x : A x = 0}``; each ``x`` is a bit mask over column indices.

    One vector per non-pivot column ``j``: ``e_j`` plus the pivot columns that
    express column ``j``.
    """
    return _Packed(cols).kernel


def in_span(vectors: Sequence[int], v: int) -> bool:
    """Whether ``v`` lies in the span of ``vectors``."""
    return Span(vectors).contains(v)


def apply_columns(cols: Sequence[int], x: int) -> int:
    """``A @ x``: XOR of the columns selected by the set bits of ``x``."""
    out = 0
    while x:
        low = x & -x
        out ^= cols[low.bit_length() - 1]
        x ^= low
    return out


def solve(cols: Sequence[int], b: int) -> int | None:
    """The solution ``x`` of ``A x = b`` supported on pivot columns, or None.

    Free variables (non-pivot columns) are 0, as in Triton's ``lstsq``.
    """
    return _Packed(cols).solve(b)


def solve_many(cols: Sequence[int], targets: Sequence[int]) -> list[int | None]:
    """``solve`` for each target, sharing one elimination."""
    p = _Packed(cols)
    return [p.solve(b) for b in targets]


def inverse(cols: Sequence[int]) -> list[int]:
    """Columns of ``A^-1`` for a square invertible ``A`` (n columns of n bits).

    Raises ``ValueError`` when ``A`` is singular or not square.
    """
    n = len(cols)
    if any(c >> n for c in cols):
        raise ValueError("matrix is not square: a column has more bits than there are columns")
    p = _Packed(cols, n)
    if len(p.pivots) != n:
        raise ValueError(f"matrix is singular (rank {len(p.pivots)} < {n})")
    basis, mask, shift = p.basis, p.mask, p.shift
    return [_reduce(1 << i, basis, mask) >> shift for i in range(n)]


def span_sum(u: Sequence[int], v: Sequence[int]) -> list[int]:
    """A basis of ``span(u) + span(v)``."""
    return image_basis(list(u) + list(v))


def intersection(u: Sequence[int], v: Sequence[int]) -> list[int]:
    """A basis of ``span(u) ∩ span(v)``.

    Every ``v[j]`` that depends on ``u`` and the ``v``'s before it has a unique
    expression in the pivot columns of ``[u | v]``; its ``u`` half (the XOR of
    the ``u`` columns in it) lies in the intersection, and these halves span it.
    One elimination finds them: each ``u`` column carries a copy of itself above
    bit ``shift`` and each ``v`` column carries nothing, so a ``v`` column that
    reduces to 0 below ``shift`` is left holding exactly its ``u`` half above.
    The halves are returned as ``image_basis`` of them, in the order of ``v``.
    """
    shift = max((c.bit_length() for c in (*u, *v)), default=0)
    low = (1 << shift) - 1
    _, _, reduced = _eliminate([c << shift | c for c in u] + list(v), low)
    return image_basis([x >> shift for x in reduced[len(u):] if not x & low])


def complement(u: Sequence[int], n_bits: int, candidates: Sequence[int] | None = None) -> list[int]:
    """Vectors completing ``span(u)`` to GF(2)^n_bits (or to ``span(u + candidates)``).

    Candidates are tried in order (default: unit vectors, lowest bit first) and a
    candidate is kept when it is independent of ``u`` and the ones kept so far.
    """
    span = Span(u)
    if candidates is None:
        candidates = [1 << i for i in range(n_bits)]
    return [c for c in candidates if span.insert(c)]


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
    with the non-zero rows of the RREF (in pivot order) and their pivot columns.
    Forward pass, rows in order: each is reduced at the pivots so far, lowest first (the row
    of pivot ``b`` has no bit below ``n_cols`` under ``b``, so that clears ``b`` and touches only
    higher bits); if a bit below ``n_cols`` is left, its lowest such bit becomes a pivot.  Back
    pass, highest pivot first: a row is cleared at the higher pivots by their finished rows
    (zero at every other pivot, so one XOR per pivot bit it holds).  Bits at ``n_cols`` and
    above ride along: the rows kept are those independent of the rows before them (below
    ``n_cols``), and each output row is the unique combination of them with its low part.
    """
    low = (1 << n_cols) - 1
    echelon: dict[int, int] = {}  # pivot bit (1 << column) -> its row, no lower bit below n_cols
    mask = 0  # OR of the pivot bits
    for v in rows:
        m = v & mask
        while m:
            v ^= echelon[m & -m]
            m = v & mask
        pivot = v & low
        if pivot:
            pivot &= -pivot
            echelon[pivot] = v
            mask |= pivot
    bits = sorted(echelon)
    reduced: dict[int, int] = {}
    for pivot in reversed(bits):
        v = echelon[pivot]
        m = v & mask ^ pivot  # the higher pivots it holds
        while m:
            b = m & -m
            v ^= reduced[b]
            m ^= b
        reduced[pivot] = v
    return [reduced[b] for b in bits], [b.bit_length() - 1 for b in bits]
