"""The conversion kernel: load a tile in the source layout, convert it with a plan, store it
in the destination layout.

Memory.  The tile is a row-major tensor of ``shape`` (default: the layouts' out-dim sizes;
``dim0`` outermost) of ``element_bits``-bit elements in global memory, read from the first
kernel argument and written to the second (``!llvm.ptr<1>`` each).  Element ``x`` (one
coordinate per out dim) sits at byte ``bytes * sum_d x_d * stride_d``.  A ``shape`` smaller
than the layouts (a ragged tile) needs no branch: the buffer resources cover exactly the
tensor, and a lane whose element lies outside it gets the offset
:data:`~linlayout.lowering.emit.atoms.BUFFER_OOB_OFFSET` (loads read 0, stores are dropped).

Kernel structure (one workgroup of ``wave_size * num_warps`` threads, x dimension; 64-lane waves on
CDNA, 32-lane waves on RDNA and gfx1250):

1. thread ids, buffer resources, raw buffer loads of the source registers (adjacent
   elements of one lane that are adjacent in memory become one dword/dwordx2/x4 load,
   up to ``io_dwords``, and the compiler merges single loads at consecutive addresses further:
   ``source_tuples``; a dwordx4 fixes which four registers are consecutive, so a plan
   that stores other register groups to LDS costs the ``v_mov`` copies the compiler adds);
2. the ``setup`` region: the plan's per-lane values (LDS and ``ds_bpermute`` addresses,
   lane masks, byte selectors, the low words of the permlane lane selectors in SGPRs)
   (:meth:`~linlayout.lowering.emit.plan_ops.PlanEmitter.prepare`) -- all loop-invariant in a real
   kernel, the conversion's own setup (linlayout.lowering.beyond_identity counts it in our whole
   conversion); its end marker pins every one of them, so none is computed later;
   then the :data:`STORE_ADDRESSES` region: the stores' addresses (no work of the conversion, left
   out of both sides of the kernel by linlayout.lowering.beyond_identity), pinned by its end marker.
   The setup comes first so that it computes everything the plan needs (the store addresses may
   reuse its values, never the reverse: the compiler merges equal expressions, so a setup after
   them would be counted short).  The VALU before ``conv`` is then the store addresses', which moves
   a few gfx11/gfx12 regions by one ``s_delay_alu`` or wait against a kernel with one region for both
   (4 of the wave32 corpus's, two up and two down; none of the AMD corpus's);
3. the ``conv`` region (``; linlayout-begin conv`` ... ``; linlayout-end conv``): exactly
   the plan's instructions plus the waits, hazard ``s_nop`` and copies the compiler adds.
   The begin marker takes the source registers as operands (the region starts with them
   loaded, as after an MFMA).  With ``pin_sources`` it passes them *through* (outputs
   tied to inputs), so that no conversion instruction can be computed before it -- at
   the price that the hazard recognizer sees the marker as writing those registers and
   may put an ``s_nop`` before a first DPP or permlane read
   (:func:`linlayout.lowering.conversion.lower_conversion` compiles without it and falls back to it
   only when an instruction of the plan left the region); the end marker pins every destination register that an
   instruction of the region computes (pure register ops cannot drift past it, and their waits count), but not the
   results of LDS reads as such (their final wait, like Triton's, falls after the region); a register stored in
   pieces (8/16-bit elements stored one at a time) it passes *through* instead (outputs tied to inputs), so that
   the stores' own work, extracting each byte or half, cannot be hoisted into the region (a tied output of every
   register would make the register allocator copy some of them in the region);
4. raw buffer stores of the destination registers; of a dst read in one copy (``Plan.dst_one_copy``) in
   the canonical lanes alone (``scf.if`` on the constant lane mask, a setup value: ``s_and_saveexec`` and
   ``s_cbranch_execz``; the other lanes' dst registers are don't-care).

Address arithmetic: the offset of register ``r`` of lane ``l`` in warp ``w`` is
``off(r, l, w)``; every table ``off(r, ., .)`` that differs from an earlier one by a
constant in ``[0, 4096)`` reuses that register with an immediate ``offset:``.  Tables of a
full (power-of-two) tile are GF(2)-affine in the lane and warp bits; a ragged tile's are
computed per coordinate (each GF(2)-affine), multiplied by the strides and added.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linlayout import LayoutError, LinearLayout, get_target
from linlayout.synth.one_copy import canonical_lanes
from linlayout.synth.plan import Plan, dwords_per_slot, slots_per_dword
from linlayout.synth.src_offsets import row_major_strides
from linlayout.synth.vgpr_tuples import VgprTuples

from . import atoms
from .builder import Builder, kernel_module, vector_type
from .lane_values import LaneValues
from .plan_ops import PlanEmitter, slot_dwords

__all__ = ["ConversionKernel", "build_conversion_kernel", "contiguous_registers", "element_coords", "source_tuples",
           "BUFFER_OFFSET_LIMIT", "MERGED_ACCESS_DWORDS", "STORE_ADDRESSES"]

# buffer_load/store carry a 12-bit unsigned immediate byte offset.
BUFFER_OFFSET_LIMIT = 1 << 12
#: The marked region that computes the destination stores' addresses (after ``setup``, before ``conv``).
STORE_ADDRESSES = "store_addresses"


@dataclass(frozen=True)
class ConversionKernel:
    """An emitted conversion kernel: MLIR text and how to launch it.

    ``shape`` is the tensor's shape in memory (row-major, ``dim0`` outermost),
    ``block`` the workgroup size (``wave_size * num_warps`` threads); the kernel takes
    ``(in, out)`` pointers and runs one workgroup.
    """

    text: str
    name: str
    arch: str
    shape: tuple[int, ...]
    element_bits: int
    num_warps: int
    out_dims: tuple[str, ...]
    wave_size: int

    @property
    def block(self) -> tuple[int, int, int]:
        return (self.wave_size * self.num_warps, 1, 1)

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape)) * max(1, self.element_bits // 8)


def element_coords(layout: LinearLayout, num_warps: int, n_regs: int, wave_size: int) -> dict[str, np.ndarray]:
    """Tensor coordinates ``[W, wave_size, n_regs]`` per out dim of ``layout(register, lane, warp)``."""
    w = np.arange(num_warps)[:, None, None]
    lane = np.arange(wave_size)[None, :, None]
    r = np.arange(n_regs)[None, None, :]
    shape = (num_warps, wave_size, n_regs)
    ins = {"register": r, "lane": lane, "warp": w}
    args = {k: np.broadcast_to(v, shape) for k, v in ins.items() if layout.has_in_dim(k)}
    if layout.has_in_dim("block"):
        args["block"] = np.zeros(shape, dtype=np.int64)
    out = layout.apply(args)
    return {name: np.broadcast_to(np.asarray(out[name], dtype=np.int64), shape) for name, _ in layout.out_dims}


class _GlobalTile:
    """Byte offsets of the tile's elements for one layout, and the values that compute them."""

    def __init__(self, b: Builder, lanes: LaneValues, layout: LinearLayout, n_slots: int, shape: tuple[int, ...],
                 element_bits: int, num_warps: int) -> None:
        self.b, self.lanes = b, lanes
        self.shape = shape
        self.eb = max(1, element_bits // 8)
        self.p, self.dps = slots_per_dword(element_bits), dwords_per_slot(element_bits)
        coords = element_coords(layout, num_warps, n_slots, lanes.wave_size)
        self.dims = [name for name, _ in layout.out_dims]
        strides = row_major_strides(shape)
        self.coords = [coords[d] for d in self.dims]
        self.strides = strides
        off = sum(c * s for c, s in zip(self.coords, strides)) * self.eb
        self.oob = np.zeros(off.shape, dtype=bool)
        for c, n in zip(self.coords, shape):
            self.oob |= c >= n
        self.offset = off  # [W, wave_size, slots] element byte offsets
        self.n_slots = n_slots

    def pieces(self, d: int) -> list[tuple[int, int, int, int]]:
        """``(slot, byte within the element, first byte in dword, bytes)`` of each element piece of dword ``d``."""
        out = []
        for s in self.slots_of(d):
            for k, (dd, o, n) in enumerate(slot_dwords(s, self.p, self.dps)):
                if dd == d:
                    out.append((s, 4 * k, o, n))
        return out

    def table(self, slot: int, extra: int) -> np.ndarray:
        """Byte offsets ``[W, wave_size]`` of byte ``extra`` of the element in ``slot``."""
        return self.offset[:, :, slot] + extra

    def slots_of(self, d: int) -> list[int]:
        """The slots held by dword ``d`` (a last dword may be partly unused)."""
        slots = [d // 2] if self.dps == 2 else [d * self.p + k for k in range(self.p)]
        return [s for s in slots if s < self.n_slots]

    def dword_oob(self, d: int) -> np.ndarray:
        """Lanes where some element of dword ``d`` lies outside the tensor."""
        m = np.zeros(self.oob.shape[:2], dtype=bool)
        for s in self.slots_of(d):
            m |= self.oob[:, :, s]
        return m

    def voffset(self, slot: int, extra: int, oob: np.ndarray, what: str) -> tuple[str, str]:
        """``(voffset, soffset)`` with ``voffset + soffset`` equal to :meth:`table` in the lanes inside the
        tensor and ``voffset`` out of range (``oob``) elsewhere.

        A full tile (no lane outside the tensor) shares one address register between
        tables that differ by any constant: up to 4095 bytes go to the instruction's
        immediate offset, more to ``soffset`` (a uniform register, outside the range check,
        which a full tile never needs).  A ragged tile keeps the whole offset in ``voffset``.
        """
        b = self.b
        inside = ~oob
        full = not self.oob.any()
        v, delta = self.lanes.value_of(self.table(slot, extra), max_delta=(1 << 31) if full else BUFFER_OFFSET_LIMIT,
                                       defined=inside, what=what,
                                       fallback=lambda: self._per_coordinate(slot, extra, inside, what))
        soff = b.const(0)
        if delta >= BUFFER_OFFSET_LIMIT:
            soff = b.const(delta)
        elif delta:
            v = b.arith("addi", v, b.const(delta))
        if oob.any():
            v = b.select(self.lanes.condition(oob.astype(np.int64), what), b.const(atoms.BUFFER_OOB_OFFSET), v)
        return v, soff

    def _per_coordinate(self, slot: int, extra: int, inside: np.ndarray, what: str) -> str:
        """``bytes * sum_d x_d * stride_d + extra`` from the coordinates (each GF(2)-affine)."""
        b = self.b
        acc = None
        for c, stride in zip(self.coords, self.strides):
            x, dx = self.lanes.value_of(c[:, :, slot], defined=inside, what=what)
            if dx:
                x = b.arith("addi", x, b.const(dx))
            term = b.arith("muli", x, b.const(stride * self.eb)) if stride * self.eb != 1 else x
            acc = term if acc is None else b.arith("addi", acc, term)
        return acc if not extra else b.arith("addi", acc, b.const(extra))


class _Kernel:
    def __init__(self, plan: Plan, shape: tuple[int, ...] | None, name: str, io_dwords: int,
                 pin_sources: bool) -> None:
        src, dst = plan.src, plan.dst
        if [n for n, _ in src.out_dims] != [n for n, _ in dst.out_dims] or src.out_dims != dst.out_dims:
            raise LayoutError(f"src and dst layouts cover different tensors: {src.out_dims} vs {dst.out_dims}")
        dims = tuple(n for n, _ in src.out_dims)
        full = tuple(int(s) for _, s in src.out_dims)
        shape = full if shape is None else tuple(int(x) for x in shape)
        if len(shape) != len(full) or any(not 1 <= s <= f for s, f in zip(shape, full)):
            raise LayoutError(f"tensor shape {shape} must have one extent in 1..size per out dim {list(zip(dims, full))}")
        for lay, what in ((src, "src"), (dst, "dst")):
            if lay.has_in_dim("block") and lay.in_dim_size("block") != 1:
                raise LayoutError(f"{what} layout spans {lay.in_dim_size('block')} blocks; a conversion kernel is one block")
        if not 1 <= plan.num_warps <= 16:
            raise LayoutError(f"num_warps {plan.num_warps} is not in 1..16")
        if io_dwords not in (1, 2, 4):
            raise LayoutError(f"io_dwords must be 1, 2 or 4, got {io_dwords}")
        self.plan, self.shape, self.name, self.dims, self.io_dwords = plan, shape, name, dims, io_dwords
        self.pin_sources = pin_sources
        self.eb = max(1, plan.element_bits // 8)
        self.p, self.dps = slots_per_dword(plan.element_bits), dwords_per_slot(plan.element_bits)
        self.opaque_bytes = get_target(plan.arch).family == "cdna"  # _store's docstring

    def _n_dwords(self, n_slots: int) -> int:
        return n_slots * 2 if self.dps == 2 else -(-n_slots // self.p)

    def build(self) -> ConversionKernel:
        plan = self.plan
        b = Builder()
        tid, _t32, lane, warp = atoms.thread_ids(b, plan.wave_size)
        nbytes = int(np.prod(self.shape)) * self.eb
        flags = atoms.buffer_flags(plan.arch)
        rin = atoms.buffer_rsrc(b, "%in", nbytes, flags)
        rout = atoms.buffer_rsrc(b, "%out", nbytes, flags)
        lanes = LaneValues(b, tid, lane, warp, plan.num_warps, plan.wave_size, plan.arch)
        lds, lds_globals = atoms.plan_lds(b, "conv_lds", plan.lds_bytes)

        src_tile = self.src_tile = _GlobalTile(b, lanes, plan.src, plan.slots_in, self.shape, plan.element_bits,
                                               plan.num_warps)
        dst_tile = self.dst_tile = _GlobalTile(b, lanes, plan.dst, plan.slots_out, self.shape, plan.element_bits,
                                               plan.num_warps)

        b.comment("load the source registers")
        regs = self._load(b, rin, src_tile, self._n_dwords(plan.slots_in))
        rsrcs = [(rin, "!llvm.ptr<8>", "s"), (rout, "!llvm.ptr<8>", "s")]
        atoms.region_marker(b, "setup", "begin")
        emitter = PlanEmitter(b, plan, lanes, lds, pins_order=True, pins_selectors=True, ties_addresses=True)
        emitter.prepare()
        # a dst read in one copy is stored from its canonical lanes alone (the lane mask a setup value)
        stored = (lanes.condition(canonical_lanes(plan.dst, plan.wave_size).astype(np.int64), "canonical dst lanes")
                  if plan.dst_one_copy else None)
        emitter.tie_addresses(atoms.region_marker(b, "setup", "end", _unique(lanes.pinned + rsrcs),
                                                  tied=emitter.address_registers()))
        n_setup = len(lanes.pinned)
        atoms.region_marker(b, STORE_ADDRESSES, "begin")
        stores = self._accesses(dst_tile, self._n_dwords(plan.slots_out), "store")
        store_offsets = [(v, "i32", "v") for _, parts in stores for (v, _), _, _ in parts]
        atoms.region_marker(b, STORE_ADDRESSES, "end", _unique(lanes.pinned[n_setup:] + store_offsets))
        if self.pin_sources:
            order = sorted(regs)
            regs = dict(zip(order, atoms.region_marker(b, "conv", "begin", tied=[regs[d] for d in order])))
        else:
            atoms.region_marker(b, "conv", "begin", [(regs[d], "i32", "v") for d in sorted(regs)])
        regs = emitter.emit(regs)
        dst_dwords = [d for dwords, _ in stores for d in dwords]
        missing = [d for d in dst_dwords if d not in regs]
        if missing:
            raise LayoutError(f"the plan leaves destination register(s) {missing} without a value")
        computed = [d for d in dst_dwords if regs[d] not in emitter.loaded]
        split = {d for dwords, parts in stores for d in dwords if any(size < 4 for _, _, size in parts)}
        tied = list(dict.fromkeys(regs[d] for d in computed if d in split))
        passed = dict(zip(tied, atoms.region_marker(b, "conv", "end", _unique(
            [(regs[d], "i32", "v") for d in computed if regs[d] not in tied]), tied=tied)))
        regs = {d: passed.get(v, v) for d, v in regs.items()}
        b.comment("store the destination registers")
        if stored is not None:
            b.line(f"scf.if {stored} {{")
        self._store(b, rout, stores, regs)
        if stored is not None:
            b.line("}")

        text = kernel_module(self.name, [("%in", "!llvm.ptr<1>"), ("%out", "!llvm.ptr<1>")], b.body(),
                             plan.num_warps * plan.wave_size, list(lanes.globals) + lds_globals)
        return ConversionKernel(text=text, name=self.name, arch=plan.arch, shape=self.shape,
                                element_bits=plan.element_bits, num_warps=plan.num_warps, out_dims=self.dims,
                                wave_size=plan.wave_size)

    # ------------------------------------------------------------------ global I/O
    def _runs(self, tile: _GlobalTile, n_dwords: int) -> list[list[tuple[int, list]]]:
        """Groups of dwords moved by one buffer instruction: ``[(dword, pieces), ...]``.

        A dword whose elements fill it and are adjacent in memory (in every lane), all inside or
        all outside the tensor, is one 4-byte piece (a last dword holding fewer slots than fit
        moves only their bytes: a wider store would overwrite the elements beside them);
        consecutive such dwords at consecutive addresses with the same lanes outside the tensor
        join into one access of 2 or 4 dwords.  Other dwords move element by element.
        """
        dwords = []
        for d in range(n_dwords):
            pieces = tile.pieces(d)
            tabs = [tile.table(s, e) for s, e, _, _ in pieces]
            whole = (sum(n for *_, n in pieces) == 4  # a last dword with fewer slots moves only its pieces
                     and all(np.array_equal(tabs[k + 1], tabs[k] + pieces[k][3]) for k in range(len(pieces) - 1)))
            oob = tile.dword_oob(d)
            same_oob = all(np.array_equal(tile.oob[:, :, s], oob) for s in tile.slots_of(d))
            aligned = bool((tabs[0][~oob] % 4 == 0).all())
            dwords.append((d, [pieces[0][:2] + (0, 4)] if whole and same_oob and aligned else pieces))
        runs: list[list[tuple[int, list]]] = []
        for d, pieces in dwords:
            if runs and len(runs[-1]) < self.io_dwords and len(pieces) == 1 and pieces[0][3] == 4:
                prev_d, prev = runs[-1][-1]
                if (prev_d == d - 1 and len(prev) == 1 and prev[0][3] == 4
                        and np.array_equal(tile.table(*pieces[0][:2]), tile.table(*prev[0][:2]) + 4)
                        and np.array_equal(tile.dword_oob(d), tile.dword_oob(prev_d))):
                    runs[-1].append((d, pieces))
                    continue
            runs.append([(d, pieces)])
        out = []
        for run in runs:  # no 3-dword accesses: split a run of 3 into 2 + 1
            out.extend([run[:2], run[2:]] if len(run) == 3 else [run])
        return out

    def _accesses(self, tile: _GlobalTile, n_dwords: int, what: str) -> list[tuple[list[int], list]]:
        """``(dwords, [((voffset, soffset), first byte in dword, bytes)])`` per buffer instruction; a side
        held one element per VGPR (``Plan.src_unpacked`` / ``dst_unpacked``: its VGPR's slots name one
        element) moves its first piece alone, the element in the low bits (zero-extended when loaded)."""
        unpacked = (self.plan.src_unpacked and tile is self.src_tile) or (self.plan.dst_unpacked
                                                                          and tile is self.dst_tile)
        out = []
        for run in self._runs(tile, n_dwords):
            first_d, pieces = run[0]
            if len(pieces) == 1 and pieces[0][3] == 4:
                s, e, _, _ = pieces[0]
                voff = tile.voffset(s, e, tile.dword_oob(first_d), f"{what} of register {first_d}")
                out.append(([d for d, _ in run], [(voff, 0, 4 * len(run))]))
            else:
                out.append(([first_d], [(tile.voffset(s, e, tile.oob[:, :, s], f"{what} of register {first_d}"), o, n)
                                        for s, e, o, n in (pieces[:1] if unpacked else pieces)]))
        return out

    def _load(self, b: Builder, rsrc: str, tile: _GlobalTile, n_dwords: int) -> dict[int, str]:
        regs: dict[int, str] = {}
        for dwords, parts in self._accesses(tile, n_dwords, "load"):
            if len(parts) == 1 and parts[0][2] == 4 * len(dwords):
                t = vector_type(len(dwords), "i32")
                v = atoms.buffer_load(b, rsrc, parts[0][0][0], t, parts[0][0][1])
                for k, d in enumerate(dwords):
                    regs[d] = v if len(dwords) == 1 else b.extract(v, k, t)
                continue
            word = None
            for voff, o, n in parts:
                t = f"i{8 * n}"
                piece = b.cast("arith.extui", atoms.buffer_load(b, rsrc, voff[0], t, voff[1]), t, "i32")
                if o:
                    piece = b.arith("shli", piece, b.const(8 * o))
                word = piece if word is None else b.arith("ori", word, piece)
            regs[dwords[0]] = word
        return regs

    def _store(self, b: Builder, rsrc: str, stores, regs: dict[int, str]) -> None:
        """Raw buffer stores of the destination registers: a dword tuple whole, or a register in 8/16-bit
        pieces, each piece the register shifted down to its place and truncated.  The shifted word of a
        byte piece passes through ``atoms.opaque_word`` (no instruction): in a kernel that loads no 8-bit
        value LLVM otherwise rebuilds a register it stores in bytes from those bytes before storing them
        (9 VALU more than the 3 shifts, gfx90a to gfx950: AMD corpus gfx950 fp8 ``mfma16T->mfma16``; the
        identity kernels, which load bytes, did not).  ``atoms.unseen_word`` there leaves ``v_mov_b32``
        copies in other kernels (5 in gfx950 fp8 ``blocked[1x4,t16x4,o10]->mfma32``).  Halves are stored
        as before (the rebuild was seen for bytes).  [I] CDNA only: no wave32 corpus kernel had the rebuild,
        and there the opaque words cost 1 VALU in 4 kernels (docs/benchmarks.md, "Session 21: wamd25")."""
        for dwords, parts in stores:
            if len(parts) == 1 and parts[0][2] == 4 * len(dwords):
                t = vector_type(len(dwords), "i32")
                atoms.buffer_store(b, b.build_vector([regs[d] for d in dwords], "i32"), rsrc, parts[0][0][0], t,
                                   parts[0][0][1])
                continue
            (d,) = dwords
            for voff, o, n in parts:  # a byte above the low one: its shifted word opaque (docstring)
                word = regs[d] if not o else b.arith("shrui", regs[d], b.const(8 * o))
                if o and n == 1 and self.opaque_bytes:
                    word = atoms.opaque_word(b, word)
                t = f"i{8 * n}"
                atoms.buffer_store(b, b.cast("arith.trunci", word, "i32", t), rsrc, voff[0], t, voff[1])


def _unique(pinned: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """Pinned operands without repeats (a value listed once), in order."""
    seen: set[str] = set()
    out = []
    for v in pinned:
        if v[0] not in seen:
            seen.add(v[0])
            out.append(v)
    return out


def contiguous_registers(layout: LinearLayout) -> int:
    """``k``: registers ``0 .. 2**k - 1`` of every lane lie at consecutive addresses of the full,
    row-major tile of ``layout``, so the kernel (``_Kernel._runs``) moves them in one global access.

    That holds when the first ``k`` register bases are the unit vectors ``1, 2, .., 2**(k-1)`` of
    the innermost dimension and no lane or warp base touches those bits (their coordinate is then
    the lane's own plus the register number)."""
    inner = len(layout.out_dims) - 1
    regs = layout.bases.get("register", [])
    others = [b[inner] for d in ("lane", "warp", "block") for b in layout.bases.get(d, [])]
    k = 0
    while k < len(regs) and regs[k] == [0] * inner + [1 << k] and not any(o & ((2 << k) - 1) for o in others):
        k += 1
    return k


#: [I] The widest buffer load or store the compiler forms from single ones (``buffer_load_dwordx4``): LLVM's
#: SILoadStoreOptimizer merges loads (and stores) of one lane with the same address register at consecutive
#: immediate offsets, greedily from the lowest, into accesses of up to this many dwords.
MERGED_ACCESS_DWORDS = 4


def _address_columns(layout: LinearLayout) -> tuple[list[int], list[int]]:
    """(register columns, other columns: lane, warp, block) of ``layout`` as element addresses in its full,
    row-major tile (``dim0`` outermost): a coordinate's bits sit at the address bits above the inner dims'."""
    shifts, shift = [], 0
    for _, size in reversed(layout.out_dims):
        shifts.append(shift)
        shift += int(size).bit_length() - 1
    shifts.reverse()

    def column(base: list[int]) -> int:
        return sum(int(x) << k for x, k in zip(base, shifts))

    regs = [column(b) for b in layout.bases.get("register", [])]
    return regs, [column(b) for d in ("lane", "warp", "block") for b in layout.bases.get(d, [])]


def source_tuples(layout: LinearLayout, element_bits: int) -> VgprTuples:
    """The VGPR tuples the kernel's registers of ``layout`` arrive in from its global loads (src) or
    are taken in by its global stores (dst) on the full, row-major tile, as dword-index bits
    (linlayout.synth.vgpr_tuples: ``plan_conversion``'s ``src_tuple_dwords`` / ``dst_tuple_dwords``).

    A dword moves in one piece when its ``p`` elements are consecutive in memory in order (the first
    ``log2 p`` register bits are the units ``1, 2, ..`` of the address and nothing else touches those
    address bits; a 64-bit element's two dwords always); else in pieces, each VGPR assembled (no tuple:
    ``()``).  The whole dwords of one lane at consecutive addresses become one access of up to
    :data:`MERGED_ACCESS_DWORDS` dwords (the kernel's runs, ``_Kernel._runs``, and the compiler's merging
    of the rest): dword-index bit ``k`` is tuple bit ``i`` when it moves the address by ``2 ** i`` dwords
    (its column is that unit and no other column touches that address bit), for ``i = 0, 1, ..`` while
    such a bit exists.  (The merged access starts at the address of the tuple's first dword: those
    address bits are clear there, and the kernel's address registers, each the address of the first
    register of its class in register order, are such first dwords.)

    [I] The compiler merges only accesses with the same ``soffset``, and no store across a store of
    another: a register ``BUFFER_OFFSET_LIMIT`` bytes or more from the first takes that distance as its
    own ``soffset`` (``_GlobalTile.voffset``).  Where a dword-index bit moves the address that far
    (``far``), the kernel's own runs (the bits ``0, 1, ..`` of consecutive registers) are the tuples
    where it has any; else a dword with a ``far`` bit set is in no tuple (``VgprTuples.alone``) and the
    others merge on the tuple bits below the lowest ``far`` bit only (a store between two merged ones
    must share their ``soffset``; loads could merge on the bits above it too, a case none of the corpora
    has): gfx1200 fp32 ``blocked[1x1,t32x1,o01]`` (64x64) stores registers 0, 2, 4, 6 at consecutive
    addresses, each after a store of register 1, 3, 5 at 8 KB more: no merge.  Returned as ``VgprTuples``."""
    p, dps = slots_per_dword(element_bits), dwords_per_slot(element_bits)
    regs, others = _address_columns(layout)
    every = regs + others

    def unit_bit(unit: int) -> int | None:  # the register bit moving the address by ``unit`` elements alone
        hits = [k for k, c in enumerate(regs) if c == unit]
        if len(hits) != 1 or sum(1 for c in every if c & unit) != 1:
            return None
        return hits[0]

    low = p.bit_length() - 1  # register bits inside a dword
    if any(unit_bit(1 << i) != i for i in range(low)):
        return VgprTuples(())
    bits = [0] if dps == 2 else []  # a 64-bit element's two dwords: dword unit 1
    while len(bits) < MERGED_ACCESS_DWORDS.bit_length() - 1:
        i = len(bits)  # dword unit 2**i: element unit p * 2**i (64-bit elements: 2**(i-1))
        k = unit_bit(p << i if dps == 1 else 1 << (i - 1))
        if k is None:
            break
        bits.append(k - low if dps == 1 else k + 1)
    far = 0  # dword-index bits whose register is BUFFER_OFFSET_LIMIT bytes or more away
    for k, c in enumerate(regs):
        if k >= low and c * max(1, element_bits // 8) >= BUFFER_OFFSET_LIMIT:
            far |= 1 << (k - low if dps == 1 else k + 1)
    if not far:
        return VgprTuples(tuple(bits))
    own = 0  # the kernel's runs: consecutive registers
    while own < len(bits) and bits[own] == own:
        own += 1
    if own:
        return VgprTuples(tuple(bits[:own]))
    below = [b for b in bits if b < min(k for k in range(far.bit_length()) if far >> k & 1)]
    return VgprTuples(tuple(below), far)


def build_conversion_kernel(plan: Plan, *, shape: tuple[int, ...] | None = None, name: str = "convert_layout",
                            io_dwords: int = 4, pin_sources: bool = False) -> ConversionKernel:
    """The conversion kernel of a (verified) ``plan``.

    ``shape``: the tensor's extent when the tile is ragged (default: the full tile).
    ``io_dwords``: the widest global load/store in dwords the kernel forms (4: dwordx4 where memory is
    contiguous, as Triton's test kernels do; 1: one dword per register, which the compiler still
    merges where the addresses are consecutive: ``source_tuples``).
    ``pin_sources``: pass the source registers through the begin marker (see the module doc).
    """
    if not isinstance(plan, Plan):
        raise LayoutError(f"expected a linlayout.synth.plan.Plan, got {type(plan).__name__}")
    if not plan.verified:
        raise LayoutError("the plan was not verified on the wave emulator; refusing to emit it")
    if not name.replace("_", "").isalnum():
        raise LayoutError(f"kernel name {name!r} must be letters, digits and underscores")
    return _Kernel(plan, shape, name, io_dwords, pin_sources).build()
