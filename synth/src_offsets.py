"""The address registers a kernel's src load line leaves formed (``ConversionContext.src_offsets``).

A kernel that loads the conversion's src from a global tensor right before converting it computes, per
lane, the byte offset of every load: register ``r`` of lane ``l`` in warp ``w`` holds the element
``x = src(r, l, w)`` (one coordinate ``x_d`` per out dim), at byte

    off(r, l, w) = element_bytes * sum_d x_d * stride_d

of a tensor with element strides ``stride_d`` (a row-major tensor of shape ``n``: ``stride_d =
prod(n[d+1:])``, ``dim0`` outermost; the tile's origin is a uniform base, no VGPR).  It forms one VGPR
per class of these tables that differ by a constant (the load's immediate offset or ``soffset`` takes the
constant; linlayout.lowering.emit.conversion_kernel and lane_values: a table reuses an earlier one it is
at or above by a constant, so a class whose tables come in falling order holds more than one).  LLVM's
common-subexpression elimination lets the conversion's setup reuse them: an LDS address that is such a
register plus a constant costs what one formed by the setup itself does (``cost._AddressBases``: 0 in
the access's immediate range, else one add; one XOR where it is such a register XOR a constant).  The
lowering shares them before LLVM does, through one ``LaneValues`` for the load and the setup.  Measured
(docs/benchmarks.md, "Session 20: the src load line"): the bench kernel's setup estimates meet the
compiled setups in more cases with these registers than without.  The dst's global offsets are no such
source: a kernel computes them after the conversion's setup.

Units: ``strides`` in elements, the tables in bytes (``element_bytes``), ``int64``.  Only the tables
that are GF(2)-affine in the warp bits (every warp's table its warp 0's XOR the warp part: all of them
where the strides put the coordinates at disjoint bits, a power-of-two row-major tensor) are kept: the
planner keys an address on warp 0's table and its warp columns (``cost.warp_columns``), and two other
tables could share those.  The loads are taken as unmasked (every element in the tensor).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linlayout import LayoutError

from .cost import warp_columns
from .preimage import Problem

__all__ = ["SrcOffsets", "OFFSET_LIMIT_BYTES", "row_major_strides"]

#: The byte offsets a 32-bit VGPR holds as a buffer offset (non-negative ``int32``).
OFFSET_LIMIT_BYTES = 1 << 31


@dataclass(frozen=True)
class SrcOffsets:
    """The src load line's formed address registers: ``strides`` (elements, per out dim in the src's
    out-dim order) and ``registers``, one ``(a - a[0], a ^ a[0], warp columns, a[0])`` per formed
    register ``a`` (warp 0's byte table, ``int64`` bytes per lane; ``cost._AddressBases``' keys) in load
    order (module docstring).  Compared by value (the planner's caches key on it)."""

    strides: tuple[int, ...]
    registers: tuple[tuple[bytes, bytes, tuple[int, ...], int], ...]

    @classmethod
    def of(cls, strides, problem: Problem, element_bits: int) -> "SrcOffsets | None":
        """The registers of a load of ``problem.src`` from a tensor of element ``strides`` (a sequence of
        positive integers, one per out dim; None: no such load, returns None; a SrcOffsets: itself).  A
        LayoutError names a bad argument: not one positive integer per out dim, or offsets beyond
        ``OFFSET_LIMIT_BYTES``."""
        if strides is None or isinstance(strides, SrcOffsets):
            return strides
        dims = problem.src.out_dims
        if isinstance(strides, (str, bytes)) or not hasattr(strides, "__len__") or len(strides) != len(dims) \
                or any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s <= 0 for s in strides):
            raise LayoutError(f"src_global_strides {strides!r} must be {len(dims)} positive integers, one per out dim "
                              f"{[n for n, _ in dims]}")
        strides = tuple(int(s) for s in strides)
        element_bytes = max(1, element_bits // 8)
        last = element_bytes * sum((int(n) - 1) * s for (_, n), s in zip(dims, strides))
        if last >= OFFSET_LIMIT_BYTES:
            raise LayoutError(f"src_global_strides {list(strides)}: the tile's last byte offset {last} is not below "
                              f"{OFFSET_LIMIT_BYTES} (a 32-bit buffer offset)")
        return cls(strides, _registers(_offsets(problem, strides, element_bytes)))


def row_major_strides(shape) -> tuple[int, ...]:
    """The element strides of a row-major tensor of ``shape`` (``dim0`` outermost): ``prod(shape[d+1:])``."""
    shape = [int(n) for n in shape]
    return tuple(int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape)))


def _offsets(problem: Problem, strides: tuple[int, ...], element_bytes: int) -> np.ndarray:
    """``off(r, l, w)`` of every src element, ``[warps, lanes, registers]`` bytes: the tensor index is the XOR
    of the columns of the set bits (``Problem``'s flat columns, first out dim least significant)."""
    cols = problem.src_cols
    n_reg = 1 << len(cols["register"])
    flat = np.zeros((problem.num_warps, problem.wave, n_reg), dtype=np.int64)
    for axis, name in ((2, "register"), (1, "lane"), (0, "warp")):
        index = np.arange(flat.shape[axis]).reshape([-1 if a == axis else 1 for a in range(3)])
        for b, col in enumerate(cols[name]):
            flat = flat ^ np.where((index >> b) & 1, col, 0)
    off, low = np.zeros_like(flat), 0
    for (_, size), stride in zip(problem.src.out_dims, strides):  # first out dim at the least significant bits
        bits = int(size).bit_length() - 1
        off += ((flat >> low) & (int(size) - 1)) * stride
        low += bits
    return off * element_bytes


def _registers(off: np.ndarray) -> tuple[tuple[bytes, bytes, tuple[int, ...], int], ...]:
    """The formed registers of the tables ``off[:, :, r]`` in register order: a table reuses a register of its
    class (same ``a - a[0]`` in every warp) that it is at or above by a constant, else forms one."""
    out, starts = [], {}
    warps = np.arange(off.shape[0])
    for r in range(off.shape[2]):
        table = off[:, :, r]
        cols = warp_columns(table)
        part = np.zeros(len(warps), dtype=np.int64)
        for b, col in enumerate(cols):
            part ^= np.where((warps >> b) & 1, col, 0)
        if not np.array_equal(table, table[:1] ^ part[:, None]):  # not affine in the warp bits: kept out
            continue
        key = (table - table[0, 0]).tobytes()
        first = int(table[0, 0])
        if any(first >= s for s in starts.get(key, ())):
            continue
        starts.setdefault(key, []).append(first)
        w0 = table[0]
        out.append(((w0 - w0[0]).tobytes(), (w0 ^ w0[0]).tobytes(), cols, first))
    return tuple(out)
