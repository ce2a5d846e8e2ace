"""Per-lane values of a plan's C++ output as C++ expressions of the lane and warp ids.

A plan gives its per-lane parameters (shared-memory byte addresses, shuffle source lanes,
byte-permute selectors, select conditions) as tables ``T[w][l]`` (warp ``w``, lane ``l``;
``[L]`` when every warp has the same).  This module writes each table as one ``const``
variable of the function's prologue, as the MLIR path (linlayout.lowering.emit.lane_values)
finds them, but each affine table spelled on its own (the compiler's CSE shares terms; not the
MLIR path's one op program, linlayout.synth.lane_arith.LaneProgram):

* a GF(2)-affine table (``fit_affine``: ``T(l, w) = c ^ XOR_b l_b L_b ^ XOR_b w_b W_b``) is
  XORs of masked, shifted lane and warp bits (:func:`bit_runs`: a run of lane bits whose columns
  are consecutive powers of two is one AND and one shift);
* a table equal to an earlier one plus a uniform constant ``0 <= d < max_delta`` (a multiple
  of ``delta_unit``) reuses that variable; the caller adds ``d`` as an immediate offset;
* any other table is read from a constant array at file scope, indexed by the thread.

Conditions (0/1 tables) become the warp's lane mask (a uniform integer, chosen by the warp id
when warps differ) and a per-lane ``bool`` spelled by the dialect.  Every variable the prologue
defines is listed in :attr:`CppLaneValues.pinned` for the region markers.
"""

from __future__ import annotations

import numpy as np

from linlayout import LayoutError
from linlayout.synth.lane_arith import AffineTable, fit_affine

from .dialect import Dialect

__all__ = ["CppLaneValues", "affine_expression", "bit_runs"]


def bit_runs(cols: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """Group input bits with power-of-two columns into runs ``(first bit, count, shift)``.

    Bits ``b .. b+n-1`` form a run when column ``b+i`` is ``1 << (b + i + shift)``; the
    run's contribution is ``(x & mask) << shift`` (``>> -shift`` when negative).  Zero
    columns are skipped; general columns are single-bit runs with ``shift = None``.
    """
    runs: list[tuple[int, int, int]] = []
    for b, col in enumerate(cols):
        if col == 0:
            continue
        if col & (col - 1):
            runs.append((b, 1, None))  # type: ignore[arg-type]
            continue
        shift = col.bit_length() - 1 - b
        if runs and runs[-1][2] == shift and runs[-1][0] + runs[-1][1] == b:
            first, n, _ = runs[-1]
            runs[-1] = (first, n + 1, shift)
        else:
            runs.append((b, 1, shift))
    return runs


def _linear_terms(x: str, cols: tuple[int, ...]) -> list[str]:
    """C++ terms whose XOR is ``XOR_{b: bit b of x} cols[b]`` (``x`` an ``unsigned`` expression)."""
    terms = []
    for first, n, shift in bit_runs(cols):
        if shift is None:  # a general column: bit ``first`` of x times the column
            terms.append(f"((({x} >> {first}) & 1u) * 0x{cols[first]:x}u)")
            continue
        part = f"({x} & 0x{((1 << n) - 1) << first:x}u)"
        if shift > 0:
            part = f"({part} << {shift})"
        elif shift < 0:
            part = f"({part} >> {-shift})"
        terms.append(part)
    return terms


def affine_expression(aff: AffineTable, lane: str, warp: str) -> str:
    """The ``unsigned`` C++ expression of ``aff`` at lane ``lane`` and warp ``warp``."""
    terms = _linear_terms(lane, aff.lane_cols) + _linear_terms(warp, aff.warp_cols)
    if aff.const or not terms:
        terms.append(f"0x{aff.const:x}u")
    return " ^ ".join(terms)


class CppLaneValues:
    """The prologue's per-lane variables of one device function (``prefix`` names its file-scope tables).

    ``lines``: the prologue statements; ``tables``: file-scope constant arrays; ``pinned``:
    ``(variable, bits, uniform)`` of every variable defined.
    """

    def __init__(self, dialect: Dialect, prefix: str, num_warps: int, lane: str, warp: str, tid: str) -> None:
        self.dialect = dialect
        self.prefix = prefix
        self.num_warps = num_warps
        self.wave_size = dialect.wave_size
        self.lane, self.warp, self.tid = lane, warp, tid
        self.lines: list[str] = []
        self.tables: list[str] = []
        self.pinned: list[tuple[str, int, bool]] = []
        self._values: list[tuple[np.ndarray, str]] = []
        self._conds: dict[bytes, str] = {}
        self._count = 0

    def _fresh(self, hint: str) -> str:
        self._count += 1
        return f"{hint}{self._count}"

    def full_table(self, table, what: str) -> np.ndarray:
        """``table`` (``[L]`` or ``[W][L]``) as a ``[W, L]`` int64 array."""
        t = np.asarray(table, dtype=np.int64)
        if t.ndim == 1:
            t = np.broadcast_to(t, (self.num_warps, t.shape[0]))
        if t.shape != (self.num_warps, self.wave_size):
            raise LayoutError(f"{what}: expected one value per lane ([{self.wave_size}] or "
                              f"[{self.num_warps}][{self.wave_size}]), got shape {t.shape}")
        return t

    # ------------------------------------------------------------------ unsigned values
    def value_of(self, table, what: str, max_delta: int = 1, defined=None, delta_unit: int = 1) -> tuple[str, int]:
        """An expression ``v`` and a constant ``d`` with ``v + d == table`` in every (``defined``) lane.

        ``d`` is 0 unless an earlier table differs from this one by a uniform constant in
        ``[0, max_delta)``, a multiple of ``delta_unit`` (then that table's variable is reused)."""
        t = self.full_table(table, what)
        ok = np.ones(t.shape, dtype=bool) if defined is None else self.full_table(defined, what) != 0
        for prev, name in self._values:
            diff = (t - prev)[ok]
            d = int(diff[0]) if diff.size else 0
            if 0 <= d < max_delta and d % delta_unit == 0 and (diff == d).all():
                return name, d
        full, name = self._compute(t, ok, what)
        self._values.append((full, name))
        return name, 0

    def _compute(self, t: np.ndarray, ok: np.ndarray, what: str) -> tuple[np.ndarray, str]:
        aff = fit_affine(t, ok)
        if aff is None:
            return self._from_table(np.where(ok, t, 0), what)
        full = aff.evaluate(self.num_warps)
        if (full == full[0, 0]).all():
            return full, f"0x{int(full[0, 0]):x}u"
        name = self._fresh("a")
        self.lines.append(f"const unsigned {name} = {affine_expression(aff, self.lane, self.warp)};")
        self.pinned.append((name, 32, False))
        return full, name

    def _from_table(self, t: np.ndarray, what: str) -> tuple[np.ndarray, str]:
        """``t`` read from a constant array at file scope (a table no formula gives)."""
        if (t < 0).any() or (t >= 1 << 32).any():
            raise LayoutError(f"{what}: a per-lane value does not fit in 32 bits")
        same = (t == t[0]).all()
        data = t[0] if same else t.reshape(-1)
        array = f"{self.prefix}_table{len(self.tables)}"
        self.tables.append(f"__device__ const unsigned {array}[{data.size}] = {{"
                           + ", ".join(f"0x{int(v):x}u" for v in data) + "};")
        name = self._fresh("a")
        self.lines.append(f"const unsigned {name} = {array}[{self.lane if same else self.tid}];")
        self.pinned.append((name, 32, False))
        return t, name

    # ------------------------------------------------------------------ conditions
    def condition(self, cond, what: str) -> str:
        """A ``bool`` variable true in lane ``l`` of warp ``w`` iff ``cond[w][l]`` is nonzero."""
        t = self.full_table(cond, what) != 0
        key = t.tobytes()
        if key not in self._conds:
            masks = [int(sum(1 << l for l in range(self.wave_size) if t[w, l])) for w in range(self.num_warps)]
            mask = self._fresh("m")
            self.lines.append(f"const {self.dialect.mask_type()} {mask} = {self.dialect.mask(masks, self.warp)};")
            self.pinned.append((mask, self.wave_size, True))
            name = self._fresh("c")
            self.lines.append(f"const bool {name} = {self.dialect.condition(mask, self.lane)};")
            self._conds[key] = name
        return self._conds[key]
