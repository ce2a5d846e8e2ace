"""Plan steps (linlayout.synth.steps) -> C++ statements on 32-bit ``unsigned`` registers.

:class:`CppEmitter` offers the primitives the steps call (``Step.prepare`` in the prologue,
``Step.emit`` in the body: the same double dispatch as the MLIR path's PlanEmitter), spelled by
a :class:`~linlayout.lowering.cpp.dialect.Dialect`.  Registers are the plan's dwords
(linlayout.synth.steps.base: ``p = 32 / element_bits`` slots per dword, a 64-bit slot is two
dwords), one ``const unsigned`` variable per value written; register steps act on whole dwords
(``dword_pairs``, the one pairing rule), so a 64-bit element's step is one statement per half.

========================  ======================================================================
step                      C++
========================  ======================================================================
Mov rename / v_mov / mov  none (a new name for the same variable; the compiler copies where it must)
Mov v_perm_b32 / prmt     ``dialect.perm`` / ``dialect.prmt`` with the constant selector
PermSelect                the same with a per-lane selector variable
Select (v_cndmask, selp)  ``c ? b : a``
Movrels                   a tree of ``c_b ? .. : ..`` over the registers the warps read, ``c_b`` the
                          prologue conditions of the bits of the warp's index (a select tree again: C++
                          has no uniform register index; the compiler picks the instructions)
Lane shfl.sync.<mode>     ``dialect.shfl`` with the step's operands ``b`` (per-lane for ``idx``) and ``c``
Lane dpp / dpp8 /         ``dialect.dpp_mov`` / ``dpp8_mov`` / ``permlane16`` / ``ds_swizzle`` /
permlane16 / ds_swizzle / ``ds_bpermute`` (address = 4 * source lane)
ds_bpermute
FusedDpp                  v_mov form: ``update_dpp(own, src, ...)``; v_cndmask form: ``mov_dpp`` with
                          bound_ctrl then ``keep ? own : moved`` (LLVM fuses the pair)
PermlaneSwap              ``dialect.permlane_swap`` (both results used)
LdsStore / LdsLoad        a store / load of the access width through the shared array ``lds``: 8-
                          and 16-byte accesses as the dialect's 2- and 4-dword vector type, 4 bytes
                          as ``unsigned``, 1 and 2 bytes as ``uint8_t`` / ``uint16_t``
MatrixLoad / MatrixStore  ``dialect.matrix_access``: inline PTX ``ldmatrix``/``stmatrix`` of the step's form on
                          the shared address of the lane's row pointer
Movmatrix                 ``dialect.movmatrix``: inline PTX ``movmatrix``
Barrier                   ``dialect.barrier`` (workgroup scope), ``dialect.warp_barrier`` (warp scope)
========================  ======================================================================

Between two shared-memory steps with no barrier between them the body holds
``dialect.lds_separator()`` (no instruction), so the compiler keeps each access the plan names
(it would merge neighbours into wider ones).
"""

from __future__ import annotations

import numpy as np

from linlayout import LayoutError
from linlayout.synth.plan import Plan

from ..step_emitter import StepEmitter
from .dialect import Dialect
from .lane_exprs import CppLaneValues

__all__ = ["CppEmitter"]


class CppEmitter(StepEmitter):
    """Lowers one :class:`~linlayout.synth.plan.Plan` to C++ statements of one device function.

    ``values`` holds the prologue (per-lane variables); :meth:`prepare` fills it, :meth:`emit`
    writes :attr:`body` on the source registers (both passes and the register file:
    linlayout.lowering.step_emitter); ``lds`` names the function's shared byte array.
    """

    def __init__(self, plan: Plan, dialect: Dialect, values: CppLaneValues, lds: str) -> None:
        if plan.wave_size != dialect.wave_size:
            raise LayoutError(f"the plan has {plan.wave_size}-lane waves but {dialect.target.name} has "
                              f"{dialect.wave_size}")
        super().__init__(plan)
        self.dialect = dialect
        self.values = values
        self.lds = lds
        self.body: list[str] = []
        self._count = 0
        self._index_bits: dict[str, list[str]] = {}  # a register index (register_index's key) -> its bits' conditions

    def let(self, expr: str, hint: str = "r", type_: str = "unsigned") -> str:
        """A new ``const`` variable of the body holding ``expr``."""
        self._count += 1
        name = f"{hint}{self._count}"
        self.body.append(f"const {type_} {name} = {expr};")
        return name

    # ------------------------------------------------------------------ prologue primitives
    def condition(self, cond, what: str) -> str:
        return self.values.condition(cond, what)

    def lane_value(self, values, what: str, defined: np.ndarray | None = None) -> str:
        return self.values.value_of(values, what, defined=defined)[0]

    def scalar_constant(self, value: int) -> str:
        name, _ = self.values.value_of(np.full(self.dialect.wave_size, int(value) & 0xFFFFFFFF), "constant")
        return name

    def lds_address(self, st, what: str) -> tuple[str, int]:
        """The byte-address variable and constant byte offset of the shared-memory step ``st``."""
        error = st.pair_error()
        if error:
            raise LayoutError(f"{what}: {error}")
        return self.values.value_of(st.addr, what, max_delta=st.offset_limit(), delta_unit=st.offset_unit())

    # ------------------------------------------------------------------ body
    def separate_lds_steps(self) -> None:
        self.body.append(self.dialect.lds_separator())

    def order_lds_accesses(self) -> None:
        self.body.append(self.dialect.lds_order())

    def perm(self, regs: dict[int, str], operands: tuple[int, int], selector: str, what: str) -> str:
        """``v_perm_b32`` of the registers ``operands = (S0, S1)`` with the selector ``selector``."""
        s0, s1 = (self.reg(regs, d, what) for d in operands)
        return self.let(self.dialect.perm(s0, s1, selector), "p")

    def prmt(self, regs: dict[int, str], operands: tuple[int, int], selector: int | str, what: str) -> str:
        """``prmt.b32`` (generic mode) of the registers ``operands = (a, b)`` with the selector ``selector``
        (a constant, or the variable of a per-lane selector)."""
        a, b = (self.reg(regs, d, what) for d in operands)
        sel = f"0x{selector:x}u" if isinstance(selector, int) else selector
        return self.let(self.dialect.prmt(a, b, sel), "p")

    def select(self, cond: str, if_true: str, if_false: str) -> str:
        return self.let(f"{cond} ? {if_true} : {if_false}", "s")

    def register_index(self, ranks: list[int], what: str) -> str:
        """The warp's register index ``ranks[w]`` as a prologue condition per bit of it (``indexed_read`` selects on
        them), named by the returned key."""
        if len(ranks) != self.plan.num_warps:
            raise LayoutError(f"{what}: {len(ranks)} register indices for {self.plan.num_warps} warps")
        table = np.repeat(np.asarray(ranks, dtype=np.int64)[:, None], self.dialect.wave_size, axis=1)
        index = f"index{tuple(int(r) for r in ranks)}"  # a name for indexed_read, no variable
        self._index_bits[index] = [self.values.condition((table >> b) & 1, what)
                                   for b in range(max(int(table.max()), 1).bit_length())]
        return index

    def indexed_read(self, candidates: list[str], index: str) -> str:
        """``candidates[index]`` as a tree of ``?:`` on the index's bit conditions, low bit first (as a select
        tree; an index past the candidates is never taken)."""
        level = list(candidates)
        for bit in self._index_bits[index]:
            level = [f"({bit} ? {level[k + 1]} : {level[k]})" if k + 1 < len(level) else level[k]
                     for k in range(0, len(level), 2)]
        return self.let(level[0], "i")

    def shfl(self, src: str, mode: str, b: int | str, c: int) -> str:
        """``shfl.sync.<mode>.b32`` of ``src`` with the lane operand ``b`` (a constant, or the variable of a
        per-lane source lane) and the clamp/segment operand ``c``, all 32 lanes taking part."""
        operand = f"{b}u" if isinstance(b, int) else b
        return self.let(self.dialect.shfl(mode, src, operand, c), "x")

    def dpp_mov(self, src: str, ctrl: int, row_mask: int, bank_mask: int, bound_ctrl: bool,
                old: str | None = None) -> str:
        return self.let(self.dialect.dpp_mov(old, src, ctrl, row_mask, bank_mask, bound_ctrl), "d")

    def dpp8_mov(self, src: str, selector: int) -> str:
        """RDNA ``v_mov_b32_dpp`` with the 24-bit ``dpp8`` lane selector."""
        return self.let(self.dialect.dpp8_mov(src, selector), "d")

    def permlane16(self, src: str, selector: int, cross: bool) -> str:
        """RDNA ``v_permlane16_b32`` (``cross``: ``v_permlanex16_b32``) with the 64-bit lane selector."""
        return self.let(self.dialect.permlane16(src, selector, cross), "q")

    def ds_swizzle(self, src: str, offset: int) -> str:
        return self.let(self.dialect.ds_swizzle(src, offset), "z")

    def ds_bpermute(self, byte_addr: tuple[str, int], src: str) -> str:
        """``ds_bpermute_b32`` at ``byte_addr`` (:meth:`bpermute_address`'s register and constant)."""
        base, d = byte_addr
        return self.let(self.dialect.ds_bpermute(f"{base} + {d}u" if d else base, src), "b")

    def permlane_swap(self, kind: str, vdst: str, src0: str) -> tuple[str, str]:
        pair = self.let(self.dialect.permlane_swap(kind, vdst, src0), "w", "auto")
        return f"{pair}[0]", f"{pair}[1]"

    def barrier(self) -> None:
        self.body.append(self.dialect.barrier())

    def warp_barrier(self) -> None:
        self.body.append(self.dialect.warp_barrier())

    # ------------------------------------------------------------------ shared memory
    def _pieces(self, slots: list[int], width_bytes: int, what: str) -> list[tuple[int, int, int]]:
        """``access_pieces`` of an access of a width C++ has a type for."""
        if width_bytes not in (1, 2, 4, 8, 16):
            raise LayoutError(f"{what}: no {width_bytes}-byte shared-memory access")
        return self.access_pieces(slots, width_bytes, what)

    def _pointer(self, address: tuple[str, int], offset: int, width_bytes: int) -> str:
        """The shared byte pointer of an access, with its alignment (the access width) told to the
        compiler (else it may split an 8- or 16-byte access into narrower ones)."""
        base, delta = address
        total = delta + offset
        ptr = f"{self.lds} + {base}" + (f" + {total}u" if total else "")
        return f"(__builtin_assume_aligned({ptr}, {width_bytes}))" if width_bytes > 1 else f"({ptr})"

    def lds_store(self, accesses: list[tuple[list[int], int]], address: tuple[str, int], width_bytes: int,
                  regs: dict[int, str], what: str) -> None:
        """One store per access: its dwords as one value of the access width (a sub-dword store takes
        its bytes where they sit in the register)."""
        for slots, offset in accesses:
            pieces = self._pieces(slots, width_bytes, what)
            ptr = self._pointer(address, offset, width_bytes)
            if width_bytes >= 4:
                words = [self.reg(regs, d, what) for d, _, _ in pieces]
                if len(words) == 1:
                    self.body.append(f"*reinterpret_cast<unsigned*>{ptr} = {words[0]};")
                else:
                    t = self.dialect.vector_type(len(words))
                    self.body.append(f"*reinterpret_cast<{t}*>{ptr} = {self.dialect.vector_value(words)};")
                continue
            (d, o, n), = pieces
            t = f"uint{8 * n}_t"
            word = self.reg(regs, d, what)
            self.body.append(f"*reinterpret_cast<{t}*>{ptr} = static_cast<{t}>({word}" + (f" >> {8 * o});" if o else ");"))

    def lds_load(self, accesses: list[tuple[list[int], int]], address: tuple[str, int], width_bytes: int,
                 regs: dict[int, str], what: str) -> None:
        """One load per access (a sub-dword load zero-extends and keeps the register's other bytes)."""
        for slots, offset in accesses:
            pieces = self._pieces(slots, width_bytes, what)
            ptr = self._pointer(address, offset, width_bytes)
            if width_bytes >= 4:
                if len(pieces) == 1:
                    regs[pieces[0][0]] = self.let(f"*reinterpret_cast<const unsigned*>{ptr}", "l")
                    continue
                t = self.dialect.vector_type(len(pieces))
                v = self.let(f"*reinterpret_cast<const {t}*>{ptr}", "l", t)
                for k, (d, _, _) in enumerate(pieces):
                    regs[d] = f"{v}.{'xyzw'[k]}"
                continue
            (d, o, n), = pieces
            word = f"static_cast<unsigned>(*reinterpret_cast<const uint{8 * n}_t*>{ptr})"
            if o:
                word = f"({word} << {8 * o})"
            if d in regs and (o or n < 4):  # keep the other bytes of a register that holds data
                keep = ~(((1 << (8 * n)) - 1) << (8 * o)) & 0xFFFFFFFF
                word = f"({regs[d]} & 0x{keep:x}u) | {word}"
            regs[d] = self.let(word, "l")

    def ldmatrix(self, slots: list[int], address: tuple[str, int], num: int, trans: bool, regs: dict[int, str],
                 what: str) -> None:
        """PTX ``ldmatrix.x{num}[.trans]`` into the ``num`` dwords of ``slots``."""
        pieces = self._pieces(slots, 4 * num, what)
        self._count += 1
        names = [f"m{self._count}_{k}" for k in range(num)]
        self.body.append(f"unsigned {', '.join(names)};")
        self.body.append(self.dialect.matrix_access(False, num, trans, self._pointer(address, 0, 16), names))
        for (d, _, _), name in zip(pieces, names):
            regs[d] = name

    def stmatrix(self, slots: list[int], address: tuple[str, int], num: int, trans: bool, regs: dict[int, str],
                 what: str) -> None:
        """PTX ``stmatrix.x{num}[.trans]`` of the ``num`` dwords of ``slots``."""
        pieces = self._pieces(slots, 4 * num, what)
        words = [self.reg(regs, d, what) for d, _, _ in pieces]
        self.body.append(self.dialect.matrix_access(True, num, trans, self._pointer(address, 0, 16), words))

    def movmatrix(self, value: str) -> str:
        """PTX ``movmatrix.sync.aligned.m8n8.trans.b16`` of ``value``."""
        return self.let(self.dialect.movmatrix(value), "t")

    def lds_transpose_load(self, slots: list[int], address: tuple[str, int], load, regs: dict[int, str],
                           what: str) -> None:
        """The transpose load ``load`` (a ``linlayout.hw.transpose_loads.TransposeLoad``; HIP:
        ``dialect.HIP_TRANSPOSE_LOADS``) into the dwords of ``slots``."""
        v = self.let(self.dialect.transpose_load(self._pointer(address, 0, load.bytes_per_lane), load), "t", "auto")
        for k, (d, _, _) in enumerate(self._pieces(slots, load.bytes_per_lane, what)):
            regs[d] = f"{v}[{k}]"
