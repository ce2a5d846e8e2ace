"""Plan steps (linlayout.synth.steps) -> MLIR ops, one op per instruction of the plan.

Registers.  The plan's slots live in 32-bit VGPRs ("dwords") as linlayout.synth.steps.base
says; the emitter keeps one i32 SSA value per dword; register steps act on whole dwords
(``dword_pairs``, the one pairing rule).  Each step emits itself (``Step.prepare`` and
``Step.emit``) through the primitives of :class:`PlanEmitter` below, which own the MLIR syntax.

Instruction per step (docs/amd_facts.md 2.8):

===================  =========================================================================
step                 MLIR
===================  =========================================================================
Mov rename / v_mov   none (SSA renaming; LLVM inserts a ``v_mov_b32`` only where it needs one)
Mov v_perm_b32       ``llvm.call_intrinsic "llvm.amdgcn.perm"(S0, S1, selector)``
PermSelect           the same with a per-lane selector register (``sel1`` where cond, else ``sel0``)
Select               ``arith.select cond, b, a`` (``v_cndmask_b32``: VCC = cond, S0 = a, S1 = b)
Movrels              ``vector.from_elements`` of the registers the warps read (poison up to
                     ``MOVRELS_MIN_ELEMENTS``), ``llvm.extractelement`` at the wave-uniform index
                     (an SGPR from the warp id) marked ``{linlayout.uniform_index}``: LLVM writes
                     ``m0`` and reads with ``v_movrels_b32`` (the extra elements are no registers)
Lane dpp:<ctl>       ``rocdl.update.dpp poison, src with ctrl, row_mask, bank_mask, bound_ctrl``
Lane dpp8:[..]       ``llvm.call_intrinsic "llvm.amdgcn.mov.dpp8.i32"(src, selector)`` (RDNA; no ROCDL op)
Lane permlanex16     ``rocdl.permlanex16 src, src, sel_lo, sel_hi, false, false`` (RDNA)
Lane permlane16      ``llvm.call_intrinsic "llvm.amdgcn.permlane16.i32"(src, src, sel_lo, sel_hi, 0, 0)``
                     (RDNA; no ROCDL op)
Lane ds_swizzle      ``rocdl.ds_swizzle src, offset``
Lane ds_bpermute     ``rocdl.ds_bpermute addr, src`` (addr = 4 * source lane)
FusedDpp v_mov       ``rocdl.update.dpp own, src with ctrl, row_mask, bank_mask, bound_ctrl``
FusedDpp v_cndmask   ``update.dpp`` (bound_ctrl 1, full masks) then ``arith.select keep, own, moved``;
                     LLVM's DPP combiner fuses the pair into one ``v_cndmask_b32_dpp``
PermlaneSwap         ``rocdl.permlane{16,32}.swap vdst, src0, false, false`` (both results used)
LdsStore / LdsLoad   ``llvm.store`` / ``llvm.load`` on ``!llvm.ptr<3>`` of the access width
                     (``ds_write_b{8,16,32,64,128}``, ``ds_write_b16_d16_hi``, ``ds_read_*``)
Barrier              ``gpu.barrier`` (``s_waitcnt lgkmcnt(0)`` + ``s_barrier``); RDNA and gfx1250:
                     ``gpu.barrier memfence [#gpu.address_space<workgroup>]`` (gfx12 and gfx1250:
                     ``s_wait_dscnt 0`` + ``s_barrier_signal -1`` + ``s_barrier_wait -1``)
===================  =========================================================================

The same ops serve 64-lane (CDNA) and 32-lane (RDNA, gfx1250) waves: a lane table has one entry per
lane of the plan's wave (``plan.wave_size``), a lane mask one bit per lane (i64 or i32).

The first register instruction after a run of LDS loads is preceded by one LDS wait
(:func:`~linlayout.lowering.emit.atoms.lds_wait`: ``s_waitcnt lgkmcnt(0)``, ``s_wait_dscnt 0`` on gfx12):
the plan's register steps after a round trip read its loads (one DS latency level
in the cost model), and one wait replaces the one LLVM would put before each load's first use
(where LLVM's scheduler moves a register instruction above it, its own waits remain as well).

Per-lane parameters (LDS addresses, ``ds_bpermute`` addresses, VCC masks) are computed in
the kernel's prologue by :class:`~linlayout.lowering.emit.lane_values.LaneValues` (:meth:`prepare`),
so the counted region holds only the instructions above.  LDS addresses: one register per class of
the plan's addresses that differ by constants (``PlanEmitter.lds_address``); an access reaches its
address with the instruction's immediate offset, or from one register more (``v_add_u32`` in the
prologue) where the offset field is too small.  The conversion kernel passes these registers through
its prologue's end marker (``ties_addresses``), so that LLVM cannot take them apart again in the region.

LLVM merges two ``ds_read_b32``/``ds_read_b64`` (or writes) off one address register into
one ``ds_read2*`` (and vectorizes adjacent accesses); the plan counts them separately, so a
``rocdl.sched.barrier none`` (no instruction) separates successive LDS steps between two
barriers and the ISA keeps exactly the plan's LDS instructions.  Where a store and a load follow
each other with no barrier between (a round trip whose lanes exchange bytes within their wave), a
``rocdl.wave.barrier`` (no instruction either) keeps LLVM from moving one across the other.
"""

from __future__ import annotations

import numpy as np

from linlayout import LayoutError, get_target
from linlayout.hw.transpose_loads import TransposeLoad
from linlayout.synth.lane_arith import bpermute_address_bits, fit_affine
from linlayout.synth.plan import Plan
from linlayout.synth.steps import slot_dwords
from linlayout.synth.steps.lds import OFFSET_LIMIT

from ..interp.ops_vector import UNIFORM_INDEX_ATTR
from ..step_emitter import StepEmitter
from . import atoms
from .builder import Builder, vector_type
from .lane_choices import LaneChoices
from .lane_values import LaneValues, lane_table

__all__ = ["MOVRELS_MIN_ELEMENTS", "PlanEmitter", "UNIFORM_INDEX_ATTR", "slot_dwords"]

#: The fewest elements of a vector LLVM reads at a uniform index with ``v_movrels_b32`` on a target with movrel:
#: our gfx1100 compiles read 4 and 7 elements with compares and ``v_cndmask_b32`` (LLVM's choice to expand a
#: small vector's dynamic read, ``SITargetLowering::shouldExpandVectorDynExt``), 8 with ``v_movrels_b32``;
#: docs/amd_facts.md 6.7.
MOVRELS_MIN_ELEMENTS = 8


class PlanEmitter(StepEmitter):
    """Lowers one :class:`~linlayout.synth.plan.Plan` to MLIR ops on i32 register values.

    Call :meth:`prepare` in the prologue (every step emits its per-lane setup values), then
    :meth:`emit` inside the counted region with the source registers (both passes and the
    register file: linlayout.lowering.step_emitter); ``pins_order``: in the order of
    linlayout.synth.hazards, pinned (the conversion kernel; a kernel that embeds a plan leaves the
    order to the compiler).  The other public methods are the
    primitives the steps call: prologue values (``condition``, ``lane_value``, ``lane_choice``,
    ``permlane_selector``, ``lds_address``; ``scalar_constant``: an SGPR of the prologue on CDNA, the
    instruction's literal on RDNA and gfx1250) and one instruction each in the region;
    ``pins_selectors``: the low words of permlane lane selectors in SGPRs of the prologue (the conversion
    kernel, whose prologue is outside its counted region).
    """

    def __init__(self, b: Builder, plan: Plan, lanes: LaneValues, lds: str | None, pins_order: bool = False,
                 pins_selectors: bool = False, ties_addresses: bool = False) -> None:
        super().__init__(plan)
        self.ties_addresses = ties_addresses
        self.pins_order = pins_order
        self.pins_selectors = pins_selectors
        self._selector_words: dict[int, tuple[str, str]] = {}
        self.b = b
        self.lanes = lanes
        self.choices = LaneChoices(lanes)
        self.lds = lds
        self._lds_ptrs: dict[str, str] = {}  # LDS address register (i32) -> its pointer ("": not yet made)
        self._lds_bases: dict[bytes, np.ndarray] | None = None
        self.loaded: set[str] = set()  # values that are LDS load results as loaded (no instruction after)
        self._indices: dict[tuple[int, ...], str] = {}  # register index table -> its i32 value (register_index)

    # ------------------------------------------------------------------ prologue
    def condition(self, cond, what: str) -> str:
        """The lane mask ``cond`` (``[lanes]`` or ``[warps, lanes]``) as an i1 value (VCC)."""
        return self.lanes.condition(cond, what)

    def lane_value(self, values, what: str, defined: np.ndarray | None = None) -> str:
        """The per-lane i32 ``values`` (only the ``defined`` lanes matter) in a VGPR."""
        return self.lanes.value_of(values, defined=defined, what=what)[0]

    def bpermute_address(self, values, what: str, defined: np.ndarray | None = None) -> tuple[str, int]:
        """The ``ds_bpermute`` byte addresses ``values`` (only the ``defined`` lanes matter) as a register and
        a constant ``d``: an earlier table plus a ``d`` that the instruction's 16-bit offset field holds
        (``OFFSET_LIMIT``) is that table's register (made once, cost.bpermute_address_valu) and ``d``, which
        :meth:`ds_bpermute` adds where it reads it and LLVM folds into the ``ds_bpermute_b32``'s ``offset:``
        (no instruction); any other table its own register and 0.  The instruction reads the address's
        ``bpermute_address_bits`` alone, so the register may differ above them."""
        return self.lanes.value_of(values, max_delta=OFFSET_LIMIT, defined=defined, what=what,
                                   care=bpermute_address_bits(self.plan.wave_size))

    def lane_choice(self, cond, if_false: int, if_true: int, what: str) -> str:
        """The i32 constant ``if_true`` in the lanes where ``cond`` holds, else ``if_false``, in a VGPR
        (:class:`~linlayout.lowering.emit.lane_choices.LaneChoices`: ``A + (m & K)`` with a lane-bit mask ``m``
        shared between choices)."""
        return self.choices.choice(cond, if_false, if_true, what)

    def scalar_constant(self, value: int) -> str:
        """The i32 constant operand of a VOP3 instruction (a ``v_perm_b32`` selector): on a target whose VOP3 takes
        one literal (``Target.vop3_literal``: RDNA and gfx1250, docs/amd_facts.md 6.4) the constant itself, no
        instruction; elsewhere (CDNA) pinned to an SGPR of the prologue (one ``s_mov_b32``)."""
        c = self.b.const(value)
        if get_target(self.plan.arch).vop3_literal:
            return c
        if (c, "i32", "s") not in self.lanes.pinned:
            self.lanes.pinned.append((c, "i32", "s"))
        return c

    def register_index(self, ranks: list[int], what: str) -> str:
        """The wave-uniform i32 register index ``ranks[w]`` of warp ``w`` in an SGPR of the prologue, once per
        table: the warp id where ``ranks`` is it, else a select chain on the warp id from ``ranks[0]``
        (``cost.movrels_index_salu`` prices it)."""
        key = tuple(int(r) for r in ranks)
        if len(key) != self.plan.num_warps:
            raise LayoutError(f"{what}: {len(key)} register indices for {self.plan.num_warps} warps")
        if key in self._indices:
            return self._indices[key]
        b = self.b
        if key == tuple(range(len(key))):
            index = self.lanes.warp
        else:
            index = b.const(key[0])
            for w, r in enumerate(key[1:], 1):
                if r != key[0]:
                    is_w = b.value(f"arith.cmpi eq, {self.lanes.warp}, {b.const(w)} : i32", "isw")
                    index = b.select(is_w, b.const(r), index)
            self.lanes.pinned.append((index, "i32", "s"))
        self._indices[key] = index
        return index

    def permlane_selector(self, selector: int) -> None:
        """With ``pins_selectors``: the low word of the ``v_permlane16``/``x16`` lane ``selector`` in an SGPR
        computed here, in the prologue (:func:`~linlayout.lowering.emit.atoms.uniform_word`, pinned), once
        per selector value, and the high word a constant (the instruction's one literal); the region's
        permlanes read them (with both words constants the compiler materialises one of them with an
        ``s_mov_b32`` next to the permlanes, in the region)."""
        if not self.pins_selectors or selector in self._selector_words:
            return
        low = atoms.uniform_word(self.b, selector & 0xFFFFFFFF)
        self.lanes.pinned.append((low, "i32", "s"))
        self._selector_words[selector] = (low, self.b.const(selector >> 32))

    def lds_address(self, st, what: str) -> tuple[str, int]:
        """The address register (an i32 byte address, :meth:`pointer` makes it a pointer) and immediate
        byte offset of the LDS step ``st``.

        The registers are at most one per class of the plan's LDS addresses that differ by constants
        (:meth:`_address_base`; none where an earlier register already reaches the class), and one more for each address whose constant above its class's
        register does not fit the step's immediate field (``st.offset_limit()``, in units of
        ``st.offset_unit()``: a paired step's register sits at a multiple of its unit below the
        first access, close enough for the second offset to fit), that register plus the constant
        (one ``v_add_u32``); an address within the immediate field of an earlier register shares it.
        """
        if self.lds is None:
            raise LayoutError(f"{what}: the plan accesses LDS but the kernel has no LDS allocation")
        error = st.pair_error()
        if error:
            raise LayoutError(f"{what}: {error}")
        base_table = self._address_base(st.addr)
        if self.lanes.offset_of(base_table, self._lds_ptrs, what) is None:
            self._address_register(self.lanes.value_of(base_table, what=what, pin=False, thread_id=True)[0])
        base, delta = self.lanes.value_of(st.addr, max_delta=st.offset_limit(), delta_unit=st.offset_unit(),
                                          what=what, beyond=self._lds_ptrs, pin=False, thread_id=True)
        self._address_register(base)
        return base, delta

    def _address_register(self, base: str) -> None:
        """Record the i32 byte address ``base`` as an LDS address register; its pointer is made here, in
        the prologue, and pinned, or with ``ties_addresses`` after the prologue (:meth:`tie_addresses`)."""
        if base in self._lds_ptrs:
            return
        if self.ties_addresses:
            self._lds_ptrs[base] = ""  # made by tie_addresses
            return
        ptr = atoms.lds_pointer(self.b, self.lds, base)
        self._lds_ptrs[base] = ptr
        self.lanes.pinned.append((ptr, "!llvm.ptr<3>", "v"))

    def address_registers(self) -> list[str]:
        """With ``ties_addresses``: the LDS address registers :meth:`prepare` made, in order (the values
        :meth:`tie_addresses` takes through the prologue's end)."""
        return [base for base, ptr in self._lds_ptrs.items() if not ptr] if self.ties_addresses else []

    def tie_addresses(self, tied: list[str]) -> None:
        """The values of :meth:`address_registers` as passed through the prologue's end marker (outputs
        tied to inputs, no instruction): the region's LDS accesses read those, which LLVM cannot take
        apart (it re-derives ``base + constant`` from a register it sees into, with a ``v_add_u32`` in
        the region, and leaves the prologue's register unread; docs/benchmarks.md measures pinning the
        registers instead).  The pointers are made after the marker from the LDS global's address,
        which is 0 in these kernels, so they cost no instruction in the region."""
        for base, value in zip(self.address_registers(), tied, strict=True):
            self._lds_ptrs[base] = atoms.lds_pointer(self.b, self.lds, value)
            self.lanes.rename(base, value)

    def _address_base(self, addr) -> np.ndarray:
        """The address register an LDS access at ``addr`` is made from (``[warps, lanes]``), one per class
        of the plan's LDS addresses that differ by uniform constants.  An access adds its constant above
        the register in its immediate field where that reaches, else in the region (one ``v_add_u32``).

        The register is the class's lowest address ``m = c ^ L(lane, warp)`` (GF(2)-affine) less the
        bits ``k`` of ``c`` that no lane or warp column touches (``m - k = (c ^ k) ^ L``: no more
        instructions than ``m``).  LLVM splits those bits off a prologue register anyway (it reads ``x ^
        k`` with ``x & k == 0`` as ``x + k`` and folds ``+ k`` into the access: its immediate offset, or
        a ``v_add_u32`` in the region when the offset field is too small), so a register holding them
        would be computed in the prologue and not read."""
        if self._lds_bases is None:
            self._lds_bases = {}
            for i, st in enumerate(self.plan.steps):
                if st.lds:
                    t = self._table(st.addr, f"plan step {i} ({st.op})")
                    key = (t - t[0, 0]).tobytes()
                    if key not in self._lds_bases or t[0, 0] < self._lds_bases[key][0, 0]:
                        self._lds_bases[key] = t
            self._lds_bases = {key: _without_added_bits(t) for key, t in self._lds_bases.items()}
        t = self._table(addr, "LDS address")
        return self._lds_bases.get((t - t[0, 0]).tobytes(), t)

    def _table(self, addr, what: str) -> np.ndarray:
        return lane_table(addr, self.plan.num_warps, self.plan.wave_size, what)

    # ------------------------------------------------------------------ region
    def separate_lds_steps(self) -> None:
        self.b.line("rocdl.sched.barrier none")

    def order_lds_accesses(self) -> None:
        """``rocdl.wave.barrier`` (``llvm.amdgcn.wave.barrier``: no instruction; the compiler moves no
        memory access across it): a barrier-free round trip's lanes read bytes other lanes of their
        wave wrote (emulator.LDS_IN_ORDER_PER_WAVE), an order LLVM's single-thread view of memory
        would not keep where it proves a lane's own load and store disjoint."""
        self.b.line("rocdl.wave.barrier")

    def keep_order(self) -> None:
        """``rocdl.sched.barrier none`` (no instruction): LLVM's scheduler keeps the steps on each side
        (linlayout.synth.hazards: the order that needs the fewest hazard wait states)."""
        self.b.line("rocdl.sched.barrier none")

    def wait_for_lds_loads(self) -> None:
        """One LDS wait before the first register instruction after a run of LDS loads (LLVM would
        wait once per load)."""
        atoms.lds_wait(self.b, self.plan.arch)

    def perm(self, regs: dict[int, str], operands: tuple[int, int], selector: str, what: str) -> str:
        """``v_perm_b32`` of the registers ``operands = (S0, S1)`` with the i32 ``selector`` value."""
        s0, s1 = operands
        return self.b.value(f'llvm.call_intrinsic "llvm.amdgcn.perm"({self.reg(regs, s0, what)}, '
                            f"{self.reg(regs, s1, what)}, {selector}) : (i32, i32, i32) -> i32", "perm")

    def indexed_read(self, candidates: list[str], index: str) -> str:
        """``v_movrels_b32``: ``candidates[index]`` at the wave-uniform i32 ``index`` (``register_index``), as an
        ``llvm.extractelement`` of their vector (poison up to ``MOVRELS_MIN_ELEMENTS``) marked
        ``UNIFORM_INDEX_ATTR``."""
        b = self.b
        elems = list(candidates)
        if len(elems) < MOVRELS_MIN_ELEMENTS:
            poison = b.value("llvm.mlir.poison : i32", "poison")
            elems += [poison] * (MOVRELS_MIN_ELEMENTS - len(elems))
        vec = b.build_vector(elems, "i32")
        return b.value(f"llvm.extractelement {vec}[{index} : i32] {{{UNIFORM_INDEX_ATTR}}} : "
                       f"{vector_type(len(elems), 'i32')}", "movrels")

    def select(self, cond: str, if_true: str, if_false: str) -> str:
        """``arith.select`` (``v_cndmask_b32``: VCC = cond, S0 = if_false, S1 = if_true)."""
        return self.b.select(cond, if_true, if_false)

    def dpp_mov(self, src: str, ctrl: int, row_mask: int, bank_mask: int, bound_ctrl: bool,
                old: str | None = None) -> str:
        """``rocdl.update.dpp old (or poison), src`` with its DPP control, masks and bound_ctrl."""
        return atoms.dpp_mov(self.b, src, ctrl, row_mask, bank_mask, bound_ctrl, old=old)

    def dpp8_mov(self, src: str, selector: int) -> str:
        """RDNA ``v_mov_b32_dpp`` with the 24-bit ``dpp8`` lane selector."""
        return atoms.dpp8_mov(self.b, src, selector)

    def permlane16(self, src: str, selector: int, cross: bool) -> str:
        """RDNA ``v_permlane16_b32`` (``cross``: ``v_permlanex16_b32``) with the 64-bit lane selector."""
        return atoms.permlane16(self.b, src, selector, cross, self._selector_words.get(selector))

    def ds_swizzle(self, src: str, offset: int) -> str:
        return atoms.ds_swizzle(self.b, src, offset)

    def ds_bpermute(self, byte_addr: tuple[str, int], src: str) -> str:
        """``ds_bpermute_b32`` at the addresses ``byte_addr`` (:meth:`bpermute_address`'s register and constant:
        the sum made here, at the instruction, so that no register holds it)."""
        base, d = byte_addr
        return atoms.ds_bpermute(self.b, self.b.arith("addi", base, self.b.const(d)) if d else base, src)

    def permlane_swap(self, kind: str, vdst: str, src0: str) -> tuple[str, str]:
        return atoms.permlane_swap(self.b, kind, vdst, src0)

    def barrier(self) -> None:
        """``gpu.barrier`` (``s_waitcnt lgkmcnt(0)`` + ``s_barrier``); on RDNA and gfx1250 with its memory
        fence on LDS only (``memfence [#gpu.address_space<workgroup>]``): there the acquire of global
        memory would add a cache invalidate (gfx12 ``global_inv``) that a conversion, which exchanges
        data through LDS alone, does not need."""
        if get_target(self.plan.arch).family == "cdna":
            self.b.line("gpu.barrier")
        else:
            self.b.line("gpu.barrier memfence [#gpu.address_space<workgroup>]")

    # ------------------------------------------------------------------ LDS
    def _pointers(self, address: tuple[str, int], accesses: list[tuple[list[int], int]]) -> list[tuple[list[int], str]]:
        """``(slots, pointer)`` of the one or two accesses ``(slots, byte offset)`` of an LDS step off its
        prepared ``address`` (a pair: no barrier between, LLVM fuses them into the ds_read2/ds_write2
        the plan names)."""
        base, delta = address
        ptr = self._lds_ptrs[base]
        return [(slots, atoms.lds_pointer(self.b, ptr, delta + offset)) for slots, offset in accesses]

    def lds_store(self, accesses: list[tuple[list[int], int]], address: tuple[str, int], width_bytes: int,
                  regs: dict[int, str], what: str) -> None:
        """``llvm.store`` of each access's slots (``ds_write_b{8 * width_bytes}``; a sub-dword store
        takes its bytes where they sit in the VGPR: from byte 2 it is a ``_d16_hi`` store)."""
        b = self.b
        for slots, ptr in self._pointers(address, accesses):
            pieces = self.access_pieces(slots, width_bytes, what)
            if width_bytes >= 4:
                vals = [self.reg(regs, d, what) for d, _, _ in pieces]
                t = vector_type(len(vals), "i32")
                value = b.build_vector(vals, "i32")
            else:
                (d, o, n), = pieces
                word = self.reg(regs, d, what)
                if o:
                    word = b.arith("shrui", word, b.const(8 * o))
                t = f"i{8 * n}"
                value = b.cast("arith.trunci", word, "i32", t)
            atoms.lds_store(b, value, ptr, t, width_bytes)

    def lds_load(self, accesses: list[tuple[list[int], int]], address: tuple[str, int], width_bytes: int,
                 regs: dict[int, str], what: str) -> None:
        """``llvm.load`` of each access's slots (``ds_read_b{32,64,128}``, zero-extending ``ds_read_u{8,16}``)."""
        for slots, ptr in self._pointers(address, accesses):
            self._load_one(slots, ptr, width_bytes, regs, what)

    def lds_transpose_load(self, slots: list[int], address: tuple[str, int], load: TransposeLoad,
                           regs: dict[int, str], what: str) -> None:
        """The transpose load ``load`` (gfx950's ``ds_read_b64_tr_b*``, gfx1250's ``ds_load_tr*``) into
        the dwords of ``slots``."""
        (slots, ptr), = self._pointers(address, [(slots, 0)])
        v = atoms.lds_transpose_load(self.b, ptr, load)
        t = vector_type(load.bytes_per_lane // 4, "i32")
        for k, (d, _, _) in enumerate(self.access_pieces(slots, load.bytes_per_lane, what)):
            regs[d] = self.b.extract(v, k, t)
            self.loaded.add(regs[d])

    def _load_one(self, slots: list[int], ptr: str, width_bytes: int, regs: dict[int, str], what: str) -> None:
        b = self.b
        pieces = self.access_pieces(slots, width_bytes, what)
        if width_bytes >= 4:
            t = vector_type(len(pieces), "i32")
            v = atoms.lds_load(b, ptr, t, width_bytes)
            for k, (d, _, _) in enumerate(pieces):
                regs[d] = v if len(pieces) == 1 else b.extract(v, k, t)
                self.loaded.add(regs[d])
            return
        (d, o, n), = pieces
        v = atoms.lds_load(b, ptr, f"i{8 * n}", width_bytes)
        word = b.cast("arith.extui", v, f"i{8 * n}", "i32")
        if o:
            word = b.arith("shli", word, b.const(8 * o))
        if d in regs and (o or n < 4):  # keep the other bytes of a register that holds data
            keep = b.arith("andi", regs[d], b.const(~(((1 << (8 * n)) - 1) << (8 * o)) & 0xFFFFFFFF))
            word = b.arith("ori", keep, word)
        elif not o:
            self.loaded.add(word)  # ds_read_u8/u16 zero-extend: the zext is free
        regs[d] = word


def _without_added_bits(table: np.ndarray) -> np.ndarray:
    """``table`` (``[warps, lanes]``, GF(2)-affine ``c ^ L``) less the bits of ``c`` that no column of
    ``L`` touches (:meth:`PlanEmitter._address_base`); a table that is not affine as it is."""
    aff = fit_affine(table)
    if aff is None:
        return table
    span = 0
    for col in aff.lane_cols + aff.warp_cols:
        span |= col
    return table - (aff.const & ~span)
