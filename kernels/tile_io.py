"""Moving a distributed layout's registers between global memory / LDS and MLIR values.

:class:`GlobalTile`: raw buffer loads and stores of the registers of a layout
``register, lane, warp -> (dim0 = row, dim1 = column)`` over a row-major matrix.  Registers
are moved ``vec`` at a time: registers ``base .. base + vec - 1`` must be consecutive
columns of one row (checked for every lane and warp).  Element ``(row0 + row, col0 + col)``
sits at byte ``((row0 + row) * ld + col0 + col) * bytes``; a lane whose row is ``>= rows``
or whose column is ``>= cols`` gets the offset ``BUFFER_OOB_OFFSET`` (reads 0, writes
dropped), so ragged matrices need no branch.  The caller guarantees that a vector never
straddles ``cols`` (``cols`` a multiple of ``vec``, or ``vec == 1``).

:class:`LdsStage`: the LDS writes and reads of a :class:`~linlayout.kernels.lds_tile.StagedTile`
(addresses computed once in the prologue, a run-time stage offset added per access), and
the :class:`~linlayout.kernels.common.LdsInstruction` records of the accesses for the bank report.

Per-lane address tables are turned into values by ``linlayout.lowering.emit.lane_values.LaneValues``
(GF(2)-affine in the lane and warp bits; equal tables up to a constant share a register and
the constant becomes an immediate).
"""

from __future__ import annotations

import numpy as np

from linlayout import LayoutError, LinearLayout
from linlayout.lowering.emit import atoms
from linlayout.lowering.emit.builder import Builder, vector_type
from linlayout.lowering.emit.lane_values import LaneValues

from .common import LdsInstruction
from .lds_tile import LdsAccess, StagedTile
from .mlir_ops import and1, ult
from .regs import Registers, bitcast

__all__ = ["MAX_ACCESS_BYTES", "TRANSPOSE_READ_TYPES", "ELEM_BYTES", "GlobalTile", "LdsStage", "layout_tables", "add", "mul"]

#: Widest buffer access per lane (buffer_load_dwordx4 / buffer_store_dwordx4).
MAX_ACCESS_BYTES = 16
#: The LLVM result type of each gfx950 transpose read the kernels emit.
TRANSPOSE_READ_TYPES = {"ds_read_b64_tr_b16": "vector<4xi16>", "ds_read_b64_tr_b8": "vector<2xi32>"}
#: Bytes of the MLIR element types the kernels move.
ELEM_BYTES = {"i8": 1, "i16": 2, "i32": 4, "f32": 4}


def add(b: Builder, x: str, c: int | str) -> str:
    """``x + c`` (i32; a zero constant adds nothing)."""
    if isinstance(c, int):
        return x if c == 0 else b.arith("addi", x, b.const(c))
    return b.arith("addi", x, c)


def mul(b: Builder, x: str, c: int | str) -> str:
    """``x * c`` (i32; a unit constant multiplies nothing)."""
    if isinstance(c, int):
        return x if c == 1 else b.arith("muli", x, b.const(c))
    return b.arith("muli", x, c)


def layout_tables(layout: LinearLayout, reg: int, num_warps: int, wave_size: int) -> dict[str, np.ndarray]:
    """``{out dim: [warp, lane] coordinates}`` of register ``reg`` of ``layout`` on waves of ``wave_size`` lanes
    (``Target.wave_size``: 64 on CDNA, 32 on RDNA); a LayoutError where the layout has another number of lanes."""
    lanes = layout.in_dim_size("lane") if layout.has_in_dim("lane") else 1
    if lanes != wave_size:
        raise LayoutError(f"the layout has {lanes} lanes; a wave here has {wave_size}")
    shape = (num_warps, wave_size)
    args = {"register": np.full(shape, reg), "lane": np.broadcast_to(np.arange(wave_size)[None, :], shape)}
    if layout.has_in_dim("warp"):
        args["warp"] = np.broadcast_to(np.arange(num_warps)[:, None], shape)
    return {k: np.asarray(v, dtype=np.int64) for k, v in layout.apply(args).items()}


def _mem_type(nbytes: int) -> str:
    return vector_type(nbytes // 4, "i32") if nbytes >= 4 else f"i{8 * nbytes}"


class GlobalTile:
    """Buffer loads/stores of ``layout``'s registers, ``vec`` per instruction (see the module docstring)."""

    def __init__(self, b: Builder, lanes: LaneValues, layout: LinearLayout, num_warps: int, vec: int, elem: str,
                 what: str) -> None:
        self.b, self.vec, self.elem, self.what = b, vec, elem, what
        self.eb = ELEM_BYTES[elem]
        n = layout.in_dim_size("register")
        if n % vec:
            raise LayoutError(f"{what}: {n} registers do not split into vectors of {vec}")
        self.groups = []
        for base in range(0, n, vec):
            tabs = [layout_tables(layout, base + j, num_warps, lanes.wave_size) for j in range(vec)]
            for j, t in enumerate(tabs):
                if not (np.array_equal(t["dim0"], tabs[0]["dim0"]) and np.array_equal(t["dim1"], tabs[0]["dim1"] + j)):
                    raise LayoutError(f"{what}: registers {base}..{base + vec - 1} are not consecutive columns of a row")
            row = lanes.value_of(tabs[0]["dim0"], what=f"{what} row of register {base}")
            col = lanes.value_of(tabs[0]["dim1"], what=f"{what} column of register {base}")
            self.groups.append((list(range(base, base + vec)), row, col))

    def _voffset(self, row, col, row0: str, col0: str, rows: str, cols: str, ld: str) -> str:
        b = self.b
        r = add(b, add(b, row0, row[0]), row[1])
        c = add(b, add(b, col0, col[0]), col[1])
        ok = and1(b, ult(b, r, rows), ult(b, c, cols))
        off = mul(b, add(b, mul(b, r, ld), c), self.eb)
        return b.select(ok, off, b.const(atoms.BUFFER_OOB_OFFSET))

    def _chunks(self, rl: list[int]) -> list[tuple[int, list[int]]]:
        """``(byte offset, registers)`` of the buffer instructions of one vector: at most
        :data:`MAX_ACCESS_BYTES` each (a 32-byte vector of fp8 is two ``dwordx4``)."""
        n = max(1, min(len(rl), MAX_ACCESS_BYTES // self.eb))
        return [(q * self.eb, rl[q:q + n]) for q in range(0, len(rl), n)]

    def load(self, rsrc: str, row0: str, col0: str, rows: str, cols: str, ld: str) -> Registers:
        """The registers of the tile at ``(row0, col0)`` of a ``rows x cols`` matrix with row stride ``ld``."""
        b = self.b
        regs = Registers(b, self.elem)
        for rl, row, col in self.groups:
            voff = self._voffset(row, col, row0, col0, rows, cols, ld)
            for off, part in self._chunks(rl):
                mt, vt = _mem_type(len(part) * self.eb), vector_type(len(part), self.elem)
                regs.put(part, bitcast(b, atoms.buffer_load(b, rsrc, add(b, voff, off), mt), mt, vt))
        return regs

    def store(self, regs: Registers, rsrc: str, row0: str, col0: str, rows: str, cols: str, ld: str) -> None:
        """Store ``regs`` to the tile at ``(row0, col0)`` (elements outside the matrix are dropped)."""
        b = self.b
        for rl, row, col in self.groups:
            voff = self._voffset(row, col, row0, col0, rows, cols, ld)
            for off, part in self._chunks(rl):
                mt, vt = _mem_type(len(part) * self.eb), vector_type(len(part), self.elem)
                atoms.buffer_store(b, bitcast(b, regs.gather(part), vt, mt), rsrc, add(b, voff, off), mt)


class LdsStage:
    """LDS writes and reads of a staged tile at ``lds + stage offset`` (the offset a run-time i32)."""

    def __init__(self, b: Builder, lanes: LaneValues, lds: str, staged: StagedTile, elem: str, what: str) -> None:
        self.b, self.staged, self.elem, self.what = b, staged, elem, what
        self.eb = ELEM_BYTES[elem]
        self.writes = [(acc, self._address(lanes, lds, acc, f"{what} write {i}")) for i, acc in enumerate(staged.writes)]
        self.reads = [(acc, self._address(lanes, lds, acc, f"{what} read {i}")) for i, acc in enumerate(staged.reads)]

    def _address(self, lanes: LaneValues, lds: str, acc: LdsAccess, what: str) -> tuple[str, int]:
        v, d = lanes.value_of(acc.offsets * self.eb, max_delta=1 << 16, what=what)
        return atoms.lds_pointer(self.b, lds, v), d

    def _ptr(self, base: tuple[str, int], stage_off: str | None) -> str:
        p = base[0] if stage_off is None else atoms.lds_pointer(self.b, base[0], stage_off)
        return atoms.lds_pointer(self.b, p, base[1])

    def store(self, regs: Registers, stage_off: str | None = None) -> None:
        for acc, base in self.writes:
            atoms.lds_store(self.b, regs.gather(acc.regs), self._ptr(base, stage_off),
                            vector_type(acc.vector, self.elem), acc.vector * self.eb)

    def read(self, stage_off: str | None = None) -> Registers:
        regs = Registers(self.b, self.elem)
        for acc, base in self.reads:
            vt = vector_type(acc.vector, self.elem)
            ptr = self._ptr(base, stage_off)
            if "_tr_" in acc.op:  # gfx950 ds_read_b64_tr_b<bits>: 8 bytes per lane, exchanged in 16-lane groups
                raw_t = TRANSPOSE_READ_TYPES[acc.op]
                raw = self.b.value(f"rocdl.ds.read.tr{8 * self.eb}.b64 {ptr} : !llvm.ptr<3> -> {raw_t}", "tr")
                regs.put(acc.regs, bitcast(self.b, raw, raw_t, vt))
            else:
                regs.put(acc.regs, atoms.lds_load(self.b, ptr, vt, acc.vector * self.eb))
        return regs

    def records(self, where: str, stage_bytes: int, write_stages: list[int],
                read_stages: list[int]) -> list[LdsInstruction]:
        """Bank-report records: each write at the stages ``write_stages``, each read at ``read_stages``."""
        bits = 8 * self.eb
        out = []
        for kind, accs, stages in (("write", self.writes, write_stages), ("read", self.reads, read_stages)):
            if not stages:
                continue
            for i, (acc, _) in enumerate(accs):
                offs = np.stack([acc.offsets + s * stage_bytes // self.eb for s in stages])
                out.append(LdsInstruction(f"{self.what} {kind} {i} ({where})", acc.op, bits, acc.vector, offs))
        return out
