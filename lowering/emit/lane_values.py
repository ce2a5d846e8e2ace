"""Per-lane setup values of a kernel's prologue: addresses, lane-select masks, from tables.

A conversion plan gives its per-lane parameters as tables ``T[w][l]`` (warp ``w``, lane
``l``): LDS byte addresses, ``ds_bpermute`` byte addresses, ``v_cndmask`` conditions.
Hardware wants one VGPR (or, for a condition, one SGPR pair) per distinct table.  This
module turns a table into MLIR ops that compute it from the thread id, before the counted
region, and shares registers between tables:

* **affine tables.**  Almost every table of a linear-layout plan is GF(2)-affine in the
  lane and warp bits: ``T(l, w) = c ^ XOR_{b: l_b = 1} L_b ^ XOR_{b: w_b = 1} W_b``
  (linlayout.synth.lane_arith.fit_affine finds ``c, L, W`` and checks every entry).  All the affine tables of a
  kernel are nodes of one op program (:class:`linlayout.synth.lane_arith.LaneProgram`: shift and
  column terms, OR'ed where their bits are disjoint, terms shared between tables, a table derived
  from an earlier one by XOR where that is cheaper; the warp part from the wave-uniform warp id,
  scalar); each node is one arith op here.  The planner's setup estimate counts the same program
  (linlayout.synth.cost.addresses_valu, linlayout.synth.lane_arith.tables_valu).
* **offsets.**  A table equal to an already computed one plus a uniform constant
  ``0 <= d < max_delta`` reuses that register; the constant becomes the instruction's
  immediate offset (``ds_read/ds_write offset:``, ``buffer_* offset:``).
* any other table is read from a constant array in global memory, indexed by thread.

Tables may have don't-care entries (a ``ds_bpermute`` source lane nobody reads): the
affine fit only has to match the defined ones.  A table read in its low bits alone (``care``: a
``ds_bpermute`` address) may hold other bits above them (``LaneProgram.add``'s ``care``: a shift
term of the thread id); such a value serves only tables read in the same bits.

Conditions (0/1 tables) are the wave's lane mask ``mask(w)`` (one bit per lane: an i64 in an
SGPR pair on a wave64, an i32 in one SGPR on a wave32; a uniform value chosen by the warp id when
warps differ: the sign of a popcount's parity where the condition is the parity of two or more warp bits,
else a chain of selects on ``warp == w``) turned into a per-lane ``i1`` by
``llvm.amdgcn.inverse.ballot.i64`` / ``.i32`` -- no instruction: the mask *is* the lane condition (VCC, or
VCC_LO on a wave32).

Tables have one column per lane of the wave: ``[L]`` or ``[W][L]`` with ``L`` the wave size (64 on
CDNA, 32 on RDNA and gfx1250).

Every value created here is recorded in :attr:`LaneValues.pinned` (value, type, inline-asm
constraint) so that the kernel can pin it before its counted region.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from linlayout import LayoutError
from linlayout.hw.targets import get_target
from linlayout.synth.lane_arith import LANE, TID, WARP, LaneProgram, fit_affine, program_family
from linlayout.synth.lane_choices import warp_parity_bits

from . import atoms
from .builder import Builder

__all__ = ["LaneValues", "lane_table"]

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


class LaneValues:
    """Builds and caches per-lane i32 values and per-lane conditions in a prologue.

    ``tid`` is the thread id in the workgroup (``index``), ``lane`` the lane id (i32,
    0..wave_size-1) and ``warp`` the wave-uniform warp id (i32); ``wave_size`` is 64 for the
    CDNA kernels, the plan's for a conversion kernel; ``arch`` (the kernel's target) picks the op
    costs of the affine tables' program (:attr:`program`, linlayout.synth.lane_arith.program_family)
    and whether adds beyond the offset field read their base through an opaque copy (``Target.opaque_beyond_offset_adds``).
    ``globals`` collects the module-level constant arrays of non-affine tables.  ``one_wave``: the kernel is one
    wave and declares it (the program's, lane_arith "One wave"; ``Plan.one_wave``); None: ``num_warps == 1``, a kernel
    that declares its ``num_warps`` waves.
    """

    def __init__(self, b: Builder, tid: str, lane: str, warp: str, num_warps: int, wave_size: int,
                 arch: str, one_wave: bool | None = None) -> None:
        if wave_size not in (32, 64):
            raise ValueError(f"a wave has 32 or 64 lanes, not {wave_size}")
        self.arch = arch
        target = get_target(arch)
        self.opaque_adds = target.opaque_beyond_offset_adds
        # how an add's base is hidden from LLVM: no inline asm where the compiler waits after one
        self._hide = atoms.unseen_word if target.waits_after_inline_asm else atoms.opaque_word
        self.program = LaneProgram(program_family(arch), wave_size.bit_length() - 1,
                                   max(num_warps - 1, 0).bit_length(),
                                   num_warps == 1 if one_wave is None else one_wave)
        self._nodes: dict[int, str] = {LANE: lane, WARP: warp}  # program node -> its value (TID: made on use)
        self._opaque: dict[str, str] = {}  # a value -> its hidden copy (what adds beyond read)
        self.b = b
        self.wave_size = wave_size
        self.tid = tid
        self.lane = lane
        self.warp = warp
        self.num_warps = num_warps
        self._tables: list[tuple[np.ndarray, str, int | None]] = []  # computed tables, their values, care bits
        self._conds: dict[bytes, str] = {}
        self._unpinned: set[str] = set()  # computed values not (yet) in pinned (value_of's pin)
        self.globals: list[str] = []
        self.pinned: list[tuple[str, str, str]] = []

    # ------------------------------------------------------------------ i32 tables
    def value_of(self, table, max_delta: int = 1, defined=None, what: str = "table",
                 fallback: Callable[[], str] | None = None, delta_unit: int = 1,
                 beyond=(), pin: bool = True, thread_id: bool = False,
                 care: int | None = None) -> tuple[str, int]:
        """A value ``v`` and a constant ``d`` with ``v + d == table`` in every (defined) lane.

        ``d`` is 0 unless an earlier table differs from this one by a uniform constant in
        ``[0, max_delta)``, a multiple of ``delta_unit``, on the ``defined`` entries
        (default: all); then that table's value is reused.  Else, when one of the values
        ``beyond`` (names of earlier tables) differs from it by any uniform constant, the value is
        that one plus the constant (one ``v_add_u32``; on targets with ``opaque_beyond_offset_adds`` the add reads the value through
        a copy the compiler does not look through, so that it cannot merge the add into the ops that made the value:
        ``atoms.unseen_word`` where it waits a cycle after an inline asm, ``Target.waits_after_inline_asm``, else
        ``atoms.opaque_word``).
        A table that is not GF(2)-affine is computed by ``fallback()`` when given, else read from a
        constant array.  ``pin``: record the value in
        :attr:`pinned` (False: the caller pins what it makes of it, an LDS pointer; a later call
        that reuses the value with ``pin`` pins it then).  ``thread_id``: a GF(2)-affine table that
        ``lane_arith.thread_id_form`` takes from the thread id is built from it (the LDS addresses,
        whose estimate, ``cost.AddressRegisters``, takes the same form).  ``care``: the table is read in these bits
        alone (a ``ds_bpermute`` address, ``lane_arith.bpermute_address_bits``): its value may differ
        above them (module docstring) and is reused only for tables read in the same bits; None: every bit.
        """
        if beyond and defined is not None:  # the value found beyond is exact on every entry, not just the defined
            raise LayoutError(f"{what}: a table with don't-care entries cannot reuse a value beyond the offset field")
        t, ok = self._table_of(table, defined, what)
        found = self._offset_from(t, ok, lambda d: 0 <= d < max_delta and d % delta_unit == 0, care=care)
        if found is None:
            near = self._offset_from(t, ok, lambda d: True, beyond, care)
            if near is not None:
                base = near[0]
                if self.opaque_adds:
                    if base not in self._opaque:
                        self._opaque[base] = self._hide(self.b, base)
                    base = self._opaque[base]
                full, name, above = t, self.b.arith("addi", base, self.b.const(near[1])), None
            else:
                full, name, above = self._compute(t, ok, what, fallback, thread_id, care)
            self._tables.append((full, name, above))
            self._unpinned.add(name)
            found = name, 0
        if pin and found[0] in self._unpinned:
            self._unpinned.discard(found[0])
            self.pinned.append((found[0], "i32", "v"))
        return found

    def rename(self, old: str, new: str) -> None:
        """Later tables equal to (or a constant above) the value ``old`` reuse ``new``, which holds the same
        per-lane values (``old`` passed through a marker: the LDS accesses after it read ``new``)."""
        self._tables = [(t, new if name == old else name, care) for t, name, care in self._tables]

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
                     among=None, care: int | None = None) -> tuple[str, int] | None:
        """The first computed table (whose value is in ``among``; None: any) that ``t`` exceeds by one
        constant ``d`` with ``fits(d)`` on the entries ``ok``: its value and ``d``.  A value made for a
        table read in some bits alone that differs from it above them serves only a ``t`` read in the same
        ``care`` bits."""
        for prev, name, made_care in self._tables:
            if (among is not None and name not in among) or (made_care is not None and made_care != care):
                continue
            diff = (t - prev)[ok]
            d = int(diff[0]) if diff.size else 0
            if fits(d) and (diff == d).all():
                return name, d
        return None

    def _compute(self, t: np.ndarray, ok: np.ndarray, what: str, fallback: Callable[[], str] | None,
                 thread_id: bool = False, care: int | None = None) -> tuple[np.ndarray, str, int | None]:
        """The table ``t`` (its ``ok`` entries) computed: the full table, its value and, where the value
        differs from the table above the bits ``care`` (a thread-id term, ``LaneProgram.add``), ``care``
        (else None: the value serves every table).  ``thread_id``, ``care``: :meth:`value_of`'s
        (``LaneProgram.add``'s)."""
        aff = fit_affine(t, ok)
        if aff is None:
            t = np.where(ok, t, 0)
            return t, (fallback() if fallback is not None else self._from_global(t, what)), None
        full = aff.evaluate(self.num_warps)
        if (full == full[0, 0]).all():
            return full, self.b.const(int(full[0, 0])), None
        node = self.program.add(aff, thread_id=thread_id, care=care)
        exact = care is None or np.array_equal(self.program.evaluate(node, self.num_warps), full)
        return full, self._node_value(node), None if exact else care

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

    def lane_sign_bit(self, bit: int) -> str:
        """``-((lane >> bit) & 1)``: per lane 0 or -1 (one ``v_bfe_i32``), the ``sbit`` node of :attr:`program` on
        the lane id (shared with the affine tables that use it)."""
        return self._node_value(self.program.node("sbit", LANE, bit))

    def _node_value(self, i: int) -> str:
        """The value of :attr:`program`'s node ``i``, its ops emitted where not before, one arith op each
        (``bfe`` a shift and a mask, ``sbit`` a shift left and an arithmetic shift right: the patterns of
        ``v_bfe_u32`` and ``v_bfe_i32``; the thread id the i32 of ``tid``)."""
        got = self._nodes.get(i)
        if got is not None:
            return got
        b = self.b
        n = self.program.nodes[i]
        kind = n[0]
        if i == TID:
            v = b.cast("arith.index_cast", self.tid, "index", "i32")
        elif kind == "const":
            v = b.const(n[1])
        elif kind in ("or", "xor"):
            v = b.arith(kind + "i", self._node_value(n[1]), self._node_value(n[2]))
        else:
            x = self._node_value(n[1])
            if kind in ("and", "mul"):
                v = b.arith("andi" if kind == "and" else "muli", x, b.const(n[2]))
            elif kind in ("shl", "shr"):
                v = b.arith("shli" if kind == "shl" else "shrui", x, b.const(n[2]))
            elif kind == "bfe":
                v = b.arith("andi", b.arith("shrui", x, b.const(n[2])) if n[2] else x, b.const((1 << n[3]) - 1))
            else:  # sbit
                v = b.arith("shrsi", b.arith("shli", x, b.const(31 - n[2])) if n[2] < 31 else x, b.const(31))
        self._nodes[i] = v
        return v

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
        bits = warp_parity_bits(t)
        if bits is not None:
            mask = self._parity_mask(bits, mask_t)
        else:
            mask = b.const(masks[0], mask_t)
            for w in range(1, self.num_warps):
                if masks[w] != masks[0]:
                    is_w = b.value(f"arith.cmpi eq, {self.warp}, {b.const(w)} : i32", "isw")
                    mask = b.select(is_w, b.const(masks[w], mask_t), mask, mask_t)
        self.pinned.append((mask, mask_t, "s"))
        c = b.value(f'llvm.call_intrinsic "llvm.amdgcn.inverse.ballot.{mask_t}"({mask}) : ({mask_t}) -> i1', "cond")
        self._conds[key] = c
        return c

    def _parity_mask(self, bits: int, mask_t: str) -> str:
        """The lane mask of a condition true in the whole of the warps where ``popcount(warp & bits)`` is odd and
        false elsewhere (linlayout.synth.lane_choices.warp_parity_bits): the parity's sign,
        ``(popcount(warp & bits) << 31) >> 31`` (arithmetic: 0 or -1), sign-extended to an i64 on a wave64.  gfx9 and
        gfx11 SALU: ``s_and_b32``, ``s_bcnt1_i32_b32``, ``s_bfe_i32`` and on a wave64 ``s_ashr_i32`` for the high
        word, ``cost.WARP_PARITY_SALU`` (of the chain of ``warp == w`` selects LLVM made 11 SALU for the bits 0b101
        of 8 warps on gfx942, 13 on gfx1100: tests/test_fuzz_regressions.py)."""
        b = self.b
        count = b.value(f'llvm.call_intrinsic "llvm.ctpop.i32"({b.arith("andi", self.warp, b.const(bits))}) : '
                        f'(i32) -> i32', "pop")
        m = b.arith("shrsi", b.arith("shli", count, b.const(31)), b.const(31))
        return m if mask_t == "i32" else b.cast("arith.extsi", m, "i32", mask_t)
