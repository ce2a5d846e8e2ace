"""LDS bank-conflict analysis of one instruction of one wave.

An *access* says where each lane's data lives: a map ``(lane, register) ->
offset`` where ``register`` indexes the elements one lane moves in this one
instruction (contiguous) and ``offset`` is the element index into LDS.  With
``b = element_bits`` the lane's first byte is ``offset * b / 8`` and it touches
the op's ``bytes_per_lane`` consecutive bytes.

Cost (docs/contract.md section 3): for each lane phase ``P`` of the op, ``cycles(P)`` is
the largest number of distinct dwords that one bank serves to the lanes of
``P``; the instruction costs ``sum_P cycles(P)``, ideally ``#phases``.

**Linear path** (a LinearLayout access, power-of-two element width, 1/2/4
dwords per lane).  Let ``D`` map lane bits to dword addresses (linear: byte
address ``>> 2``), ``K`` the phase subspace of the op (the lanes served with
lane 0; every phase is a coset ``c + K``) and ``T = span{1, .., w-1}`` the dword
offsets inside one lane's aligned ``w``-dword access.  Phase ``c + K`` touches
the dwords ``D(c) + U`` with ``U = D(K) + T``, an affine copy of the subspace
``U``; the bank of a dword is its low ``log2(banks)`` bits (projection ``pi``).
Every bank that the phase touches receives the same number of dwords,
``|U ∩ ker pi| = 2**(dim U - rank pi(U))``, and this does not depend on ``c``:

    cycles(P) = 2 ** (dim U - rank pi(U))      for every phase P.

The *conflict subspace* ``U ∩ ker pi`` (dword differences that keep the bank and
change the row) explains the conflict: each of its basis vectors is written as
``D(x) ^ t`` with a lane difference ``x`` in ``K`` -- lanes ``l`` and ``l ^ x`` of
one phase hit the same bank in different rows.

**Enumeration path** (padded layouts, arbitrary per-lane offsets, b96, 6-bit
elements): list every lane's dwords and count per phase and bank.  Both paths
give the same numbers on linear accesses (tests/test_banks_agreement.py).

**Served op**: only the op's address lanes count (``ldmatrix.x1`` reads lanes 0-7), and an
op with ``merge_lanes`` (NVIDIA 64/128-bit loads) is served by ``op.merged()`` -- one phase
row fewer -- when every lane's address equals that of lane ``l ^ x`` for an ``x`` of
``merge_lanes`` (linear: the lane columns of ``x`` add up to 0); :func:`served_op`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence, Union

import numpy as np

from linlayout import LayoutError, LinearLayout, caches, f2
from linlayout.encodings.padded import PaddedLayout
from linlayout.hw.lds import LdsModel, LdsOp, access_alignment, lds_model

from .span import span_table, span_values

__all__ = ["BankReport", "Collision", "analyze", "analyze_op", "bank_load", "lane_cycles", "lane_start_bytes",
           "linear_cycles", "served_op"]

Access = Union[LinearLayout, np.ndarray, Sequence[int]]


@dataclass(frozen=True)
class Collision:
    """Lanes ``l`` and ``l ^ lanes`` (same phase) touch dwords ``d`` and ``d ^ word_delta``:
    same bank (``word_delta`` has no bank bits), different rows."""

    lanes: int
    word_delta: int

    def to_json(self, bank_bits: int) -> dict:
        return {"lanes": self.lanes, "lane_bits": _bits_text(self.lanes, "l"),
                "word_delta": self.word_delta, "row_delta": self.word_delta >> bank_bits}


@dataclass
class BankReport:
    """Cycles of one LDS instruction of one wave, and why.

    ``phase_cycles[p]`` = largest number of distinct dwords one bank serves to
    phase ``p``; ``cycles`` = their sum; ``min_cycles`` = number of phases.
    ``collisions`` (linear path) is a basis of the conflict subspace;
    ``lane_steps`` gives, for each basis lane difference ``x`` of the phase
    subspace, the dword difference ``D(x)`` split into bank and row parts.
    """

    arch: str
    op: str
    element_bits: int
    cycles: int
    min_cycles: int
    phase_cycles: list[int]
    method: str
    num_banks: int
    lanes_per_phase: int
    banks_per_phase: int
    phase_tag: str = ""
    assumption: str | None = None
    # linear path: (phase-subspace lane masks, their dword images, dwords inside one lane's access);
    # the explanation is derived from these on first use
    _basis: tuple | None = field(default=None, repr=False, compare=False)
    _detail: tuple | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def collisions(self) -> list[Collision]:
        return self._explain()[0]

    @property
    def lane_steps(self) -> list[dict]:
        return self._explain()[1]

    @property
    def idle_bank_bits(self) -> list[int]:
        """Bank-index bits that are constant over every phase (linear path): the banks they
        select are never used, which is where the colliding rows pile up."""
        if not self._basis:
            return []
        _, dk, inner = self._basis
        used = 0
        for v in list(dk) + list(inner):
            used |= v
        return [b for b in range(self.num_banks.bit_length() - 1) if not (used >> b) & 1]

    def _explain(self) -> tuple[list[Collision], list[dict]]:
        if self._detail is None:
            self._detail = _linear_detail(self.num_banks, *self._basis) if self._basis else ([], [])
        return self._detail

    @property
    def conflict_free(self) -> bool:
        return self.cycles == self.min_cycles

    @property
    def conflict_degree(self) -> int:
        """Worst phase: the largest number of distinct dwords in one bank."""
        return max(self.phase_cycles)

    @property
    def explanation(self) -> str:
        bank_bits = self.num_banks.bit_length() - 1
        phases = len(self.phase_cycles)
        lines = [
            f"{self.op} on {self.arch}: {phases} phase(s) of {self.lanes_per_phase} lanes, "
            f"{self.num_banks} banks; {self.cycles} cycles vs {self.min_cycles} ideal"
            + (" (conflict-free)" if self.conflict_free else f" ({self.conflict_degree}-way conflict in the worst phase)"),
        ]
        if self.method == "linear":
            lines.append(f"each phase spreads over {self.banks_per_phase} of {self.num_banks} banks")
            idle = self.idle_bank_bits
            if idle:
                lines.append(f"  bank-index bits no lane of a phase changes: {', '.join(f'b{b}' for b in idle)}")
            for s in self.lane_steps:
                lines.append(f"  lanes differing by {s['lane_bits']}: dword ^{s['word_delta']:#x} "
                             f"(bank ^{s['bank_delta']}, row ^{s['row_delta']})")
            for c in self.collisions:
                lines.append(f"  collision: lanes l and l^({_bits_text(c.lanes, 'l')}) hit the same bank, "
                             f"rows differ by ^{c.word_delta >> bank_bits}")
        else:
            worst = [p for p, c in enumerate(self.phase_cycles) if c == self.conflict_degree]
            lines.append(f"enumerated; worst phases {worst[:8]}{' ...' if len(worst) > 8 else ''}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        bank_bits = self.num_banks.bit_length() - 1
        return {
            "arch": self.arch, "op": self.op, "element_bits": self.element_bits,
            "cycles": self.cycles, "min_cycles": self.min_cycles, "conflict_free": self.conflict_free,
            "conflict_degree": self.conflict_degree, "phase_cycles": list(self.phase_cycles),
            "method": self.method, "num_banks": self.num_banks, "lanes_per_phase": self.lanes_per_phase,
            "banks_per_phase": self.banks_per_phase,
            "collisions": [c.to_json(bank_bits) for c in self.collisions],
            "lane_steps": list(self.lane_steps), "idle_bank_bits": self.idle_bank_bits,
            "phase_tag": self.phase_tag, "assumption": self.assumption,
            "explanation": self.explanation,
        }


# ----------------------------------------------------------------- public API
def analyze(arch: Union[str, LdsModel], op: str, access: Access, element_bytes: int | None = None, *,
            element_bits: int | None = None, padding: PaddedLayout | Sequence[tuple[int, int]] | None = None,
            method: str = "auto") -> BankReport:
    """Cycles of LDS instruction ``op`` on ``arch`` for one wave's ``access``.

    ``access``: a LinearLayout ``lane[, register] -> offset`` (elements), or the
    per-lane start offsets (array ``[wave]``, or ``[wave, n]`` with each row
    contiguous).  ``padding``: a PaddedLayout (its intervals/pads) or
    ``[(interval, pad), ...]`` applied to every offset (Triton's padded shared
    memory: ``pad`` unused elements after every ``interval``).  Give the element
    size as ``element_bytes`` or ``element_bits`` (e.g. 4 for fp4, 6 for fp6).
    ``method``: ``"auto"`` (algebra when possible), ``"linear"`` or ``"enumerate"``.
    ``arch`` may be an :class:`~linlayout.hw.lds.LdsModel` (e.g. with changed assumptions).
    """
    model = arch if isinstance(arch, LdsModel) else lds_model(arch)
    return analyze_op(model.op(op), access, _element_bits(element_bytes, element_bits), padding=padding,
                      method=method)


def analyze_op(op: LdsOp, access: Access, element_bits: int, *,
               padding: PaddedLayout | Sequence[tuple[int, int]] | None = None, method: str = "auto") -> BankReport:
    """:func:`analyze` for a resolved :class:`LdsOp`."""
    if method not in ("auto", "linear", "enumerate"):
        raise LayoutError(f"method {method!r} must be 'auto', 'linear' or 'enumerate'")
    pad = _padding(padding)
    linear_ok = (isinstance(access, LinearLayout) and pad is None and _pow2(element_bits)
                 and op.bytes_per_lane != 12)
    if method == "linear" and not linear_ok:
        raise LayoutError(f"op {op.name}: the linear method needs a LinearLayout access without padding, a "
                          f"power-of-two element width and 1, 2 or 4 dwords per lane")
    if linear_ok and method != "enumerate":
        cols = _lane_byte_columns(op, access, element_bits)
        return _analyze_linear(served_op(op, byte_cols=cols), cols, element_bits)
    starts = lane_start_bytes(op, access, element_bits, pad)
    return _analyze_enumerated(served_op(op, starts=starts), starts, element_bits)


def served_op(op: LdsOp, *, byte_cols: Sequence[int] | None = None, starts: np.ndarray | None = None) -> LdsOp:
    """The op as the hardware serves this access: ``op.merged()`` when, for one ``x`` of
    ``op.merge_lanes``, every lane's address equals lane ``l ^ x``'s (given the lanes' byte
    columns of a linear access, or the start bytes ``[..., wave]``: then in every instance)."""
    for x in op.merge_lanes:
        if byte_cols is not None:
            paired = f2.apply_columns(list(byte_cols), x) == 0
        else:
            s = np.asarray(starts)
            paired = bool((s == s[..., np.arange(op.wave_size) ^ x]).all())
        if paired:
            return op.merged()
    return op


def lane_cycles(arch: Union[str, LdsModel], op: str, offsets: np.ndarray, element_bits: int) -> tuple[int, int]:
    """``(cycles, min_cycles)`` of ``analyze(arch, op, offsets, element_bits=...)`` for per-lane
    element offsets ``[wave]`` (the same checks and LayoutErrors), without the report.

    When the lanes' start bytes are XOR-linear in the lane bits (lane 0 at byte 0), the
    linear formula of the module doc gives the numbers (equal to the enumeration's on
    linear accesses, tests/test_banks_agreement.py); otherwise the lanes are enumerated."""
    model = arch if isinstance(arch, LdsModel) else lds_model(arch)
    o = model.op(op)
    a = np.asarray(offsets)
    if (a.shape == (o.wave_size,) and a.dtype.kind in "iu" and element_bits % 8 == 0 and _pow2(element_bits)
            and o.bytes_per_lane != 12):
        # lane offsets linear from 0 with aligned byte columns pass every check of lane_start_bytes
        # (compared as Python ints: one wave's offsets, fewer calls than numpy's)
        offsets = a.tolist()
        cols = [offsets[1 << j] for j in range(o.lane_bits)]
        byte_cols = [c * (element_bits // 8) for c in cols]
        align = access_alignment(o.bytes_per_lane)
        if (min(cols, default=0) >= 0 and all(c % align == 0 for c in byte_cols)
                and span_values(cols) == offsets):
            _check_lane_elems(o, 1, element_bits)
            return _linear_cycles(served_op(o, byte_cols=byte_cols), byte_cols)
    starts = lane_start_bytes(o, offsets, element_bits)
    cols = [int(starts[1 << j]) for j in range(o.lane_bits)]
    if _pow2(element_bits) and o.bytes_per_lane != 12 and (starts == span_table(cols)).all():
        return _linear_cycles(served_op(o, byte_cols=cols), cols)
    rep = _analyze_enumerated(served_op(o, starts=starts), starts, element_bits)
    return rep.cycles, rep.min_cycles


def _linear_cycles(op: LdsOp, byte_cols: list[int]) -> tuple[int, int]:
    """``(cycles, min_cycles)`` of ``_analyze_linear`` (every phase alike), without the report."""
    per_phase, _, _ = _linear_counts(op, byte_cols)
    return per_phase << len(op.phase_rows), 1 << len(op.phase_rows)


def bank_load(op: LdsOp, starts: np.ndarray) -> np.ndarray:
    """``[..., phases, banks]``: distinct dwords each bank serves to each phase.

    ``starts``: ``[..., wave]`` byte address of every lane's first byte; leading
    dims are independent instances (e.g. the instructions and warps of a tile).  Lanes past
    ``op.address_lanes`` are ignored.
    """
    starts = np.asarray(starts, dtype=np.int64)
    lead = starts.shape[:-1]
    n = int(np.prod(lead, dtype=np.int64))
    words = _lane_words(op, starts.reshape(n, op.wave_size)[:, :op.address_lanes])  # [n, address lanes, w]
    group = (np.arange(n)[:, None] * op.num_phases + _phase_ids(op)[None, :])  # [n, wave]
    keys = np.unique((np.repeat(group[:, :, None], words.shape[2], axis=2) << 40) | words)
    g_u, w_u = keys >> 40, keys & ((1 << 40) - 1)
    table = np.zeros(n * op.num_phases * op.num_banks, dtype=np.int64)
    np.add.at(table, g_u * op.num_banks + w_u % op.num_banks, 1)
    return table.reshape(*lead, op.num_phases, op.num_banks)


def lane_start_bytes(op: LdsOp, access: Access, element_bits: int,
                     padding: PaddedLayout | Sequence[tuple[int, int]] | None = None) -> np.ndarray:
    """Byte address of every lane's first byte (validated: contiguous, aligned).

    ``access``: a LinearLayout, or integer element offsets ``[..., wave]`` (start of each
    lane) or ``[..., wave, n]`` (all ``n`` elements of each lane); leading dims are
    independent instances.  Returns ``[..., wave]``.
    """
    pad = _padding(padding)
    if isinstance(access, LinearLayout):
        regs = _check_access_layout(op, access, element_bits)
        # register bits are offsets 1, 2, 4, .. (checked): a lane's elements are start + 0 .. regs-1
        # once the start is aligned (checked below), so one evaluation over the lanes suffices
        lane = access.apply({"lane": np.arange(op.wave_size)})["offset"]
        arr = lane[:, None] + np.arange(regs)
    else:
        try:
            arr = np.asarray(access)
        except (TypeError, ValueError) as e:
            raise LayoutError(f"access: per-lane offsets are not a rectangular integer array ({e})") from None
        if arr.dtype == object or not np.issubdtype(arr.dtype, np.integer):
            raise LayoutError("access: per-lane offsets must be integers")
        per_lane = arr.ndim >= 2 and arr.shape[-2] == op.wave_size
        if not (arr.ndim >= 1 and arr.shape[-1] == op.wave_size) and not per_lane:
            raise LayoutError(f"access: expected {op.wave_size} per-lane offsets, got shape {list(np.shape(access))}")
        if arr.size and arr.min() < 0:
            raise LayoutError("access: offsets must be non-negative")
        if not per_lane:
            arr = arr[..., None]
        regs = arr.shape[-1]
        _check_lane_elems(op, regs, element_bits)
    arr = np.asarray(arr, dtype=np.int64)
    if arr.ndim == 1:
        arr = arr[:, None]
    if pad is not None:
        arr = pad.address(arr)
    if arr.shape[-1] > 1 and np.any(np.diff(arr, axis=-1) != 1):
        raise LayoutError("access: each lane's elements must be consecutive in LDS"
                          + (" (padding splits a vector)" if pad is not None else ""))
    bits = arr[..., 0] * element_bits
    if np.any(bits % 8):
        raise LayoutError(f"op {op.name}: a lane starts inside a byte ({element_bits}-bit elements)")
    starts = bits // 8
    align = access_alignment(op.bytes_per_lane)
    bad = np.argwhere(starts % align)
    if bad.size:
        where = tuple(int(i) for i in bad[0])
        raise LayoutError(f"op {op.name}: lane {where[-1]} starts at byte {int(starts[where])}, "
                          f"not aligned to {align} bytes")
    return starts


# ------------------------------------------------------------------ internals
class _Pad:
    """Padding ``offset -> offset + sum (offset >> log2 I) << log2 P`` (elements)."""

    def __init__(self, pairs: Sequence[tuple[int, int]]) -> None:
        self.pairs = [(int(i).bit_length() - 1, int(p)) for i, p in pairs]

    def address(self, offsets: np.ndarray) -> np.ndarray:
        out = offsets.copy()
        for shift, pad in self.pairs:
            out = out + (offsets >> shift) * pad
        return out


def _padding(padding) -> "_Pad | None":
    if padding is None:
        return None
    if isinstance(padding, _Pad):
        return padding
    if isinstance(padding, PaddedLayout):
        return _Pad(list(zip(padding.intervals, padding.pads)))
    try:
        pairs = [(int(i), int(p)) for i, p in padding]
    except (TypeError, ValueError):
        raise LayoutError(f"padding {padding!r} is neither a PaddedLayout nor a list of (interval, pad)") from None
    for i, p in pairs:
        if i < 1 or i & (i - 1) or p < 0:
            raise LayoutError(f"padding ({i}, {p}): the interval must be a power of two and the pad >= 0")
    return _Pad(pairs)


def _pow2(x: int) -> bool:
    return x > 0 and not x & (x - 1)


def _element_bits(element_bytes, element_bits) -> int:
    if (element_bytes is None) == (element_bits is None):
        raise LayoutError("give exactly one of element_bytes and element_bits")
    if element_bits is None:
        if isinstance(element_bytes, bool) or not isinstance(element_bytes, (int, np.integer)) or element_bytes < 1:
            raise LayoutError(f"element_bytes {element_bytes!r} must be a positive integer")
        return int(element_bytes) * 8
    if isinstance(element_bits, bool) or not isinstance(element_bits, (int, np.integer)) or not 1 <= element_bits <= 64:
        raise LayoutError(f"element_bits {element_bits!r} must be an integer in 1..64")
    return int(element_bits)


def _check_lane_elems(op: LdsOp, regs: int, element_bits: int) -> None:
    """``regs`` elements per lane must fill the op exactly (1 = just the start given)."""
    tr = op.shape.transpose_bits
    if tr is not None and element_bits != tr:
        raise LayoutError(f"op {op.name} transposes {tr}-bit elements, the access has {element_bits}-bit elements")
    if regs > 1 and regs * element_bits != op.bytes_per_lane * 8:
        raise LayoutError(f"op {op.name} moves {op.bytes_per_lane} bytes per lane, but in dim 'register' has "
                          f"{regs} elements of {element_bits} bits")
    if regs == 1 and element_bits > op.bytes_per_lane * 8:
        raise LayoutError(f"op {op.name} moves {op.bytes_per_lane} bytes per lane, less than one "
                          f"{element_bits}-bit element")


def _access_columns(op: LdsOp, access: LinearLayout, element_bits: int) -> tuple[int, list[int]]:
    """Validate a ``lane[, register] -> offset`` access; return (register count, lane offsets)."""
    ins = access.in_dims
    names = [n for n, _ in ins]
    if "lane" not in names or any(n not in ("lane", "register") for n in names):
        raise LayoutError(f"access layout: in dims must be 'lane' and optionally 'register', got {names}")
    outs = access.out_dims
    if len(outs) != 1 or outs[0][0] != "offset":
        raise LayoutError(f"access layout: the one out dim must be 'offset', got {[o for o, _ in outs]}")
    sizes = dict(ins)
    if sizes["lane"] != op.wave_size:
        raise LayoutError(f"access layout: in dim 'lane' has size {sizes['lane']}, "
                          f"the {op.arch} wave has {op.wave_size} lanes")
    regs = sizes.get("register", 1)
    _check_lane_elems(op, regs, element_bits)
    cols = access.columns()  # in dims in order, one int (the offset) per in bit
    k = regs.bit_length() - 1
    start = 0
    for n, size in ins:
        if n == "register":
            for i, got in enumerate(cols[start:start + k]):
                if got != 1 << i:
                    raise LayoutError(f"access layout: register basis {i} maps to offset {got}, but a lane's "
                                      f"elements must be contiguous (expected {1 << i})")
        else:
            lane = cols[start:start + size.bit_length() - 1]
        start += size.bit_length() - 1
    return regs, lane


def _check_access_layout(op: LdsOp, access: LinearLayout, element_bits: int) -> int:
    """Validate a ``lane[, register] -> offset`` access; return the register count."""
    return _access_columns(op, access, element_bits)[0]


def _lane_byte_columns(op: LdsOp, access: LinearLayout, element_bits: int) -> list[int]:
    """Byte address of each lane bit (validated aligned)."""
    _, lane = _access_columns(op, access, element_bits)
    return _byte_columns(op, lane, element_bits)


def linear_cycles(op: LdsOp, lane_offsets: Sequence[int], element_bits: int) -> int:
    """The cycles ``analyze_op`` finds for the access ``lane -> offset`` with lane columns
    ``lane_offsets`` (elements; the lane's register bits already valid), by the linear path;
    a LayoutError as ``analyze_op``'s when a lane column is not aligned to the op."""
    cols = _byte_columns(op, lane_offsets, element_bits)
    return _linear_cycles(served_op(op, byte_cols=cols), cols)[0]


def _byte_columns(op: LdsOp, lane: Sequence[int], element_bits: int) -> list[int]:
    """Byte address of each lane bit, given its element offset (validated aligned)."""
    align = access_alignment(op.bytes_per_lane)
    cols = []
    for j, o in enumerate(lane):
        bits = o * element_bits
        if bits % (8 * align):
            raise LayoutError(f"op {op.name}: lane basis {j} puts lane {1 << j} at offset {o} "
                              f"({bits / 8:g} bytes), not aligned to {align} bytes")
        cols.append(bits // 8)
    return cols


def _analyze_linear(op: LdsOp, byte_cols: list[int], element_bits: int) -> BankReport:
    """``cycles(phase) = 2 ** (dim U - rank pi(U))`` with ``U = D(K) + T`` (module doc)."""
    per_phase, banks, dk = _linear_counts(op, byte_cols)
    kernel, _, inner = _op_consts(op)
    phases = 1 << len(op.phase_rows)
    return BankReport(op.arch, op.shape.name, element_bits, per_phase * phases, phases, [per_phase] * phases,
                      "linear", op.num_banks, op.lanes_per_phase, banks, op.tag, op.assumption,
                      (kernel, tuple(dk), inner))


def _linear_counts(op: LdsOp, byte_cols: list[int]) -> tuple[int, int, list[int]]:
    """(cycles of every phase, banks one phase uses, the dwords ``D(K)``) of a linear access."""
    words = [c >> 2 for c in byte_cols]
    _, kernel_bits, inner = _op_consts(op)
    dk = []
    for bits in kernel_bits:
        d = 0
        for j in bits:
            d ^= words[j]
        dk.append(d)
    bank_mask = op.num_banks - 1
    dim_u = f2.rank(dk + list(inner))
    dim_pu = f2.rank([v & bank_mask for v in (*dk, *inner)])  # (masking is linear: pi(U) is spanned by these)
    return 1 << (dim_u - dim_pu), 1 << dim_pu, dk


_CONSTS = caches.cache("synth.banks.op_consts", table=True)


def _op_consts(op: LdsOp) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...], tuple[int, ...]]:
    """Per op: phase-subspace lane masks, their set lane bits, and the dword offsets inside one
    lane's access (``span{1, .., w-1}``)."""
    key = (op.address_lanes, op.phase_rows, op.bytes_per_lane)
    c = _CONSTS.get(key)
    if c is None:
        kernel = tuple(op.phase_subspace())
        bits = tuple(tuple(j for j in range(x.bit_length()) if (x >> j) & 1) for x in kernel)
        inner = tuple(1 << i for i in range(op.words_per_lane.bit_length() - 1))
        c = _CONSTS[key] = (kernel, bits, inner)
    return c


def _linear_detail(num_banks: int, kernel: tuple, dk: tuple, inner: tuple) -> tuple[list[Collision], list[dict]]:
    """Basis of the conflict subspace ``U ∩ ker(pi)``, each written as ``D(x) ^ t`` (lanes
    ``l`` and ``l ^ x``), and the dword step of each phase-subspace lane direction."""
    bank_mask = num_banks - 1
    bank_bits = num_banks.bit_length() - 1
    u = f2.image_basis(list(dk) + list(inner))
    pu = [x & bank_mask for x in u]
    conflict = [f2.apply_columns(u, k) for k in f2.kernel_basis(pu)]
    collisions = []
    for c in conflict:
        x = f2.solve(list(dk) + list(inner), c)
        lanes = f2.apply_columns(list(kernel), x & ((1 << len(kernel)) - 1)) if x is not None else 0
        collisions.append(Collision(lanes, c))
    steps = [{"lanes": x, "lane_bits": _bits_text(x, "l"), "word_delta": d, "bank_delta": d & bank_mask,
              "row_delta": d >> bank_bits} for x, d in zip(kernel, dk)]
    return collisions, steps


def _analyze_enumerated(op: LdsOp, starts: np.ndarray, element_bits: int) -> BankReport:
    table = bank_load(op, starts)
    per_phase = table.max(axis=1)
    used = (table > 0).sum(axis=1)
    return BankReport(op.arch, op.name, element_bits, int(per_phase.sum()), op.num_phases,
                      [int(c) for c in per_phase], "enumeration", op.num_banks, op.lanes_per_phase,
                      int(used.max()), op.tag, op.assumption)


_PHASE_CACHE = caches.cache("synth.banks.phase_ids", table=True)


def _phase_ids(op: LdsOp) -> np.ndarray:
    key = (op.address_lanes, op.phase_rows)
    ids = _PHASE_CACHE.get(key)
    if ids is None:
        lanes = np.arange(op.address_lanes)
        ids = np.zeros(op.address_lanes, dtype=np.int64)
        for k, r in enumerate(op.phase_rows):
            par = np.zeros(op.address_lanes, dtype=np.int64)
            for b in range(op.address_lane_bits):
                if (r >> b) & 1:
                    par ^= (lanes >> b) & 1
            ids |= par << k
        _PHASE_CACHE[key] = ids
    return ids


def _lane_words(op: LdsOp, starts: np.ndarray) -> np.ndarray:
    """``[..., wave, dwords]``: the dwords each lane touches (``starts``: ``[..., wave]`` bytes)."""
    first = starts >> 2
    last = (starts + op.bytes_per_lane - 1) >> 2
    n = int((last - first).max()) + 1 if starts.size else 1
    words = first[..., None] + np.arange(n)
    # a lane touching fewer dwords repeats its last one (same dword counts once)
    return np.minimum(words, last[..., None])


def _bits_text(mask: int, prefix: str) -> str:
    return "^".join(f"{prefix}{b}" for b in range(mask.bit_length()) if (mask >> b) & 1) or "0"
