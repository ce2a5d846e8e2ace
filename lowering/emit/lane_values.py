"""Per-lane setup values of a kernel's prologue: addresses, lane-select masks, from tables.

A conversion plan gives its per-lane parameters as tables ``T[w][l]`` (warp ``w``, lane
``l``): LDS byte addresses, ``ds_bpermute`` byte addresses, ``v_cndmask`` conditions.
Hardware wants one VGPR (or, for a condition, one SGPR pair) per distinct table.  This
module turns a table into MLIR ops that compute it from the thread id, before the counted
region, and shares registers between tables:

* **affine tables.**  Almost every table of a linear-layout plan is GF(2)-affine in the
  lane and warp bits: ``T(l, w) = c ^ XOR_{b: l_b = 1} L_b ^ XOR_{b: w_b = 1} W_b``
  (:func:`fit_affine` finds ``c, L, W`` and checks every entry).  It is computed as XORs
  of masked, shifted lane bits (a run of lane bits whose columns are consecutive powers
  of two costs one AND and one shift; a general column one bit-extract and one multiply),
  the warp part from the wave-uniform warp id.
* **offsets.**  A table equal to an already computed one plus a uniform constant
  ``0 <= d < max_delta`` reuses that register; the constant becomes the instruction's
  immediate offset (``ds_read/ds_write offset:``, ``buffer_* offset:``).
* any other table is read from a constant array in global memory, indexed by thread.

Tables may have don't-care entries (a ``ds_bpermute`` source lane nobody reads): the
affine fit only has to match the defined ones.

Conditions (0/1 tables) are the wave's lane mask ``mask(w)`` (one bit per lane: an i64 in an
SGPR pair on a wave64, an i32 in one SGPR on a wave32; a uniform value chosen by the warp id when
warps differ) turned into a per-lane ``i1`` by ``llvm.amdgcn.inverse.ballot.i64`` / ``.i32`` -- no
instruction: the mask *is* the lane condition (VCC, or VCC_LO on a wave32).

Tables have one column per lane of the wave: ``[L]`` or ``[W][L]`` with ``L`` the wave size (64 on
CDNA, 32 on RDNA and gfx1250).

Every value created here is recorded in :attr:`LaneValues.pinned` (value, type, inline-asm
constraint) so that the kernel can pin it before its counted region.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from linlayout import LayoutError, f2

from .builder import Builder

__all__ = ["AffineTable", "LaneValues", "bit_runs", "fit_affine", "lane_table"]


@dataclass(frozen=True)
class AffineTable:
    """``T(l, w) = const ^ XOR lane_cols[b] (bit b of l) ^ XOR warp_cols[b] (bit b of w)`` (32-bit);
    a wave has ``2 ** len(lane_cols)`` lanes."""

    const: int
    lane_cols: tuple[int, ...]
    warp_cols: tuple[int, ...]

    def evaluate(self, num_warps: int) -> np.ndarray:
        """The table ``[num_warps, 2 ** len(lane_cols)]`` this map describes."""
        wave_size = 1 << len(self.lane_cols)
        lane = np.arange(wave_size)
        out = np.full((num_warps, wave_size), self.const, dtype=np.int64)
        for b, col in enumerate(self.lane_cols):
            out ^= np.where((lane >> b) & 1, col, 0)[None, :]
        for b, col in enumerate(self.warp_cols):
            out ^= np.where((np.arange(num_warps) >> b) & 1, col, 0)[:, None]
        return out


def lane_table(table, num_warps: int, wave_size: int, what: str) -> np.ndarray:
    """A per-lane table (``[wave_size]``, the same in every warp, or ``[num_warps][wave_size]``) as a
    ``[num_warps, wave_size]`` int64 array; any other shape is a ``LayoutError`` naming ``what``."""
    t = np.asarray(table, dtype=np.int64)
    if t.ndim == 1:
        t = np.broadcast_to(t, (num_warps, t.shape[0]))
    if t.shape != (num_warps, wave_size):
        raise LayoutError(f"{what}: expected one value per lane ([{wave_size}] or [{num_warps}][{wave_size}]), "
                          f"got shape {t.shape}")
    return t


def fit_affine(table: np.ndarray, defined: np.ndarray | None = None) -> AffineTable | None:
    """A GF(2)-affine map equal to a ``[W, L]`` table of 32-bit ints (``L`` lanes, a power of two), or None.

    ``defined`` (same shape, bool) marks the entries that must match; the others are
    don't-care.  Each output bit is solved independently over GF(2) (unknowns: the
    constant bit and one coefficient per lane and warp bit).
    """
    t = np.asarray(table, dtype=np.int64)
    num_warps, wave_size = t.shape
    if num_warps & (num_warps - 1) or wave_size & (wave_size - 1):
        return None
    lane_bits = wave_size.bit_length() - 1
    ok = np.ones(t.shape, dtype=bool) if defined is None else np.asarray(defined, dtype=bool)
    if ((t < 0) & ok).any() or ((t >= 1 << 32) & ok).any():
        return None
    wb = num_warps.bit_length() - 1
    ws, ls = np.nonzero(ok)
    if ws.size == 0:
        return AffineTable(0, (0,) * lane_bits, (0,) * wb)
    x = [int(l) | (int(w) << lane_bits) for w, l in zip(ws, ls)]
    vals = [int(v) for v in t[ws, ls]]
    n_in = lane_bits + wb
    cols = [sum(1 << i for i, xi in enumerate(x) if (xi >> j) & 1) for j in range(n_in)]
    cols.append((1 << len(x)) - 1)  # the constant term
    targets = [sum(1 << i for i, v in enumerate(vals) if (v >> k) & 1) for k in range(32)]
    sol = f2.solve_many(cols, targets)
    if any(s is None for s in sol):
        return None
    def column(j: int) -> int:
        return sum(((s >> j) & 1) << k for k, s in enumerate(sol))
    cand = AffineTable(column(n_in), tuple(column(j) for j in range(lane_bits)),
                       tuple(column(lane_bits + j) for j in range(wb)))
    return cand if np.array_equal(cand.evaluate(num_warps)[ok], t[ok]) else None


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


class LaneValues:
    """Builds and caches per-lane i32 values and per-lane conditions in a prologue.

    ``tid`` is the thread id in the workgroup (``index``), ``lane`` the lane id (i32,
    0..wave_size-1) and ``warp`` the wave-uniform warp id (i32); ``wave_size`` is 64 for the
    CDNA kernels, the plan's for a conversion kernel.  ``globals`` collects the module-level
    constant arrays of non-affine tables.
    """

    def __init__(self, b: Builder, tid: str, lane: str, warp: str, num_warps: int, wave_size: int = 64) -> None:
        if wave_size not in (32, 64):
            raise ValueError(f"a wave has 32 or 64 lanes, not {wave_size}")
        self.b = b
        self.wave_size = wave_size
        self.tid = tid
        self.lane = lane
        self.warp = warp
        self.num_warps = num_warps
        self._tables: list[tuple[np.ndarray, str]] = []  # computed tables and their values
        self._conds: dict[bytes, str] = {}
        self._unpinned: set[str] = set()  # computed values not (yet) in pinned (value_of's pin)
        self.globals: list[str] = []
        self.pinned: list[tuple[str, str, str]] = []

    # ------------------------------------------------------------------ i32 tables
    def value_of(self, table, max_delta: int = 1, defined=None, what: str = "table",
                 fallback: Callable[[], str] | None = None, delta_unit: int = 1,
                 beyond=(), pin: bool = True) -> tuple[str, int]:
        """A value ``v`` and a constant ``d`` with ``v + d == table`` in every (defined) lane.

        ``d`` is 0 unless an earlier table differs from this one by a uniform constant in
        ``[0, max_delta)``, a multiple of ``delta_unit``, on the ``defined`` entries
        (default: all); then that table's value is reused.  Else, when one of the values
        ``beyond`` (names of earlier tables) differs from it by any uniform constant, the value is
        that one plus the constant (one ``v_add_u32``).  A table that is not GF(2)-affine is computed by
        ``fallback()`` when given, else read from a constant array.  ``pin``: record the value in
        :attr:`pinned` (False: the caller pins what it makes of it, an LDS pointer; a later call
        that reuses the value with ``pin`` pins it then).
        """
        if beyond and defined is not None:  # the value found beyond is exact on every entry, not just the defined
            raise LayoutError(f"{what}: a table with don't-care entries cannot reuse a value beyond the offset field")
        t, ok = self._table_of(table, defined, what)
        found = self._offset_from(t, ok, lambda d: 0 <= d < max_delta and d % delta_unit == 0)
        if found is None:
            near = self._offset_from(t, ok, lambda d: True, beyond)
            if near is not None:
                full, name = t, self.b.arith("addi", near[0], self.b.const(near[1]))
            else:
                full, name = self._compute(t, ok, what, fallback)
            self._tables.append((full, name))
            self._unpinned.add(name)
            found = name, 0
        if pin and found[0] in self._unpinned:
            self._unpinned.discard(found[0])
            self.pinned.append((found[0], "i32", "v"))
        return found

    def rename(self, old: str, new: str) -> None:
        """Later tables equal to (or a constant above) the value ``old`` reuse ``new``, which holds the same
        per-lane values (``old`` passed through a marker: the LDS accesses after it read ``new``)."""
        self._tables = [(t, new if name == old else name) for t, name in self._tables]

    def offset_of(self, table, among, what: str = "table") -> tuple[str, int] | None:
        """A value of ``among`` (names of earlier tables) that ``table`` exceeds by a uniform constant,
        and the constant, or None; nothing is computed."""
        t, ok = self._table_of(table, None, what)
        return self._offset_from(t, ok, lambda d: True, among)

    def _table_of(self, table, defined, what: str) -> tuple[np.ndarray, np.ndarray]:
        """``table`` as ``[W, L]`` and its defined entries (default: all)."""
        t = lane_table(table, self.num_warps, self.wave_size, what)
        ok = np.ones(t.shape, dtype=bool) if defined is None else lane_table(defined, self.num_warps, self.wave_size,
                                                                           what) != 0
        return t, ok

    def _offset_from(self, t: np.ndarray, ok: np.ndarray, fits: Callable[[int], bool],
                     among=None) -> tuple[str, int] | None:
        """The first computed table (whose value is in ``among``; None: any) that ``t`` exceeds by one
        constant ``d`` with ``fits(d)`` on the entries ``ok``: its value and ``d``."""
        for prev, name in self._tables:
            if among is not None and name not in among:
                continue
            diff = (t - prev)[ok]
            d = int(diff[0]) if diff.size else 0
            if fits(d) and (diff == d).all():
                return name, d
        return None

    def _compute(self, t: np.ndarray, ok: np.ndarray, what: str,
                 fallback: Callable[[], str] | None) -> tuple[np.ndarray, str]:
        aff = fit_affine(t, ok)
        if aff is None:
            t = np.where(ok, t, 0)
            return t, (fallback() if fallback is not None else self._from_global(t, what))
        full = aff.evaluate(self.num_warps)
        if (full == full[0, 0]).all():
            return full, self.b.const(int(full[0, 0]))
        return full, self._affine(aff)

    def _from_global(self, t: np.ndarray, what: str) -> str:
        """``t[tid]`` read from a constant array in global memory (a table no formula gives)."""
        if (t < -(1 << 31)).any() or (t >= 1 << 32).any():
            raise LayoutError(f"{what}: a per-lane value does not fit in 32 bits")
        name = f"lane_table{len(self.globals)}"
        n = t.size
        mt = f"memref<{n}xi32, #gpu.address_space<global>>"
        data = ", ".join(str(int(v) - (1 << 32) if v >= 1 << 31 else int(v)) for v in t.reshape(-1))
        self.globals.append(f'memref.global "private" constant @{name} : {mt} = dense<[{data}]>')
        g = self.b.value(f"memref.get_global @{name} : {mt}", "tbl")
        return self.b.value(f"memref.load {g}[{self.tid}] : {mt}", "ld")

    def _linear_part(self, x: str, cols: tuple[int, ...]) -> str | None:
        b = self.b
        terms: list[str] = []
        for first, n, shift in bit_runs(cols):
            if shift is None:  # general column: ((x >> first) & 1) * col
                bit = b.arith("andi", b.arith("shrui", x, b.const(first)), b.const(1))
                terms.append(b.arith("muli", bit, b.const(cols[first])))
                continue
            part = b.arith("andi", x, b.const(((1 << n) - 1) << first))
            if shift > 0:
                part = b.arith("shli", part, b.const(shift))
            elif shift < 0:
                part = b.arith("shrui", part, b.const(-shift))
            terms.append(part)
        if not terms:
            return None
        acc = terms[0]
        for t in terms[1:]:
            acc = b.arith("xori", acc, t)
        return acc

    def _affine(self, aff: AffineTable) -> str:
        b = self.b
        parts = [p for p in (self._linear_part(self.lane, aff.lane_cols),
                             self._linear_part(self.warp, aff.warp_cols)) if p is not None]
        if aff.const:
            parts.append(b.const(aff.const))
        acc = parts[0]
        for p in parts[1:]:
            acc = b.arith("xori", acc, p)
        return acc

    # ------------------------------------------------------------------ conditions
    def condition(self, cond, what: str = "condition") -> str:
        """An ``i1`` that is true in lane ``l`` of warp ``w`` iff ``cond[w][l]`` is nonzero."""
        t = lane_table(cond, self.num_warps, self.wave_size, what) != 0
        key = t.tobytes()
        if key in self._conds:
            return self._conds[key]
        b = self.b
        mask_t = f"i{self.wave_size}"
        masks = [int(sum(1 << l for l in range(self.wave_size) if t[w, l])) for w in range(self.num_warps)]
        mask = b.const(masks[0], mask_t)
        for w in range(1, self.num_warps):
            if masks[w] != masks[0]:
                is_w = b.value(f"arith.cmpi eq, {self.warp}, {b.const(w)} : i32", "isw")
                mask = b.select(is_w, b.const(masks[w], mask_t), mask, mask_t)
        self.pinned.append((mask, mask_t, "s"))
        c = b.value(f'llvm.call_intrinsic "llvm.amdgcn.inverse.ballot.{mask_t}"({mask}) : ({mask_t}) -> i1', "cond")
        self._conds[key] = c
        return c
