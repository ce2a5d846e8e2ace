"""The two dialects of a plan's C++ output: CUDA C++ (NVIDIA targets) and HIP C++ (AMD targets).

A dialect owns every spelling that differs between them: the prelude (types, qualifiers), the
thread id, the vector types of 64- and 128-bit shared-memory accesses, the barrier, and the
intrinsic of each lane instruction.  An instruction the dialect has no spelling for is a
``LayoutError`` naming the target (``Dialect.lacks``).

Lane instructions (one C++ expression of 32-bit ``unsigned`` values each):

=====================  ==============================================  =========================================
plan instruction       CUDA                                            HIP (clang builtins)
=====================  ==============================================  =========================================
shfl.sync.idx          ``__shfl_sync(~0u, v, b[, width])``             --
shfl.sync.bfly         ``__shfl_xor_sync(~0u, v, b[, width])``         --
shfl.sync.up / down    ``__shfl_up_sync`` / ``__shfl_down_sync``        --
                       ``(~0u, v, b[, width])``; a ``c`` no intrinsic
                       makes: inline PTX
prmt.b32 (generic)     ``__byte_perm(a, b, s)``                        --
v_perm_b32             --                                              ``__builtin_amdgcn_perm(s0, s1, sel)``
select                 ``c ? b : a`` (PTX ``selp.b32``)                ``c ? b : a`` (``v_cndmask_b32``)
DPP move               --                                              ``__builtin_amdgcn_update_dpp``
DPP8 move (RDNA)       --                                              ``__builtin_amdgcn_mov_dpp8``
v_permlane{,x}16_b32   --                                              ``__builtin_amdgcn_permlane{,x}16``
ds_swizzle_b32         --                                              ``__builtin_amdgcn_ds_swizzle``
ds_bpermute_b32        --                                              ``__builtin_amdgcn_ds_bpermute``
v_permlane{16,32}_swap --                                              ``__builtin_amdgcn_permlane{16,32}_swap``
ds_read_b64_tr_b{8,16} --                                              ``__builtin_amdgcn_ds_read_tr{8,16}_b64_*``
ds_load_tr16_b128,     --                                              ``__builtin_amdgcn_ds_load_tr16_b128_v8i16``,
ds_load_tr8_b64                                                        ``__builtin_amdgcn_ds_load_tr8_b64_v2i32``
barrier                ``__syncthreads()`` (PTX ``bar.sync 0``)         workgroup fences around
                                                                       ``__builtin_amdgcn_s_barrier()``
warp barrier           ``__syncwarp()`` (PTX ``bar.warp.sync -1``)      -- (a wave's lanes are in lockstep)
=====================  ==============================================  =========================================

The HIP source needs no HIP header: it defines ``__device__``, ``__global__`` and
``__shared__`` (and ``__forceinline__``) as clang attributes where ``hip_runtime.h`` has not, so it compiles with
``hipcc`` and with a bare clang (``-x hip -nogpuinc -nogpulib``).
"""

from __future__ import annotations

from linlayout import LayoutError
from linlayout.hw.targets import Target, get_target

__all__ = ["DIALECTS", "CudaDialect", "Dialect", "HipDialect", "SHFL_INTRINSICS", "dialect_for"]

#: The CUDA intrinsic of each ``shfl.sync`` mode.
SHFL_INTRINSICS = {"idx": "__shfl_sync", "bfly": "__shfl_xor_sync", "up": "__shfl_up_sync", "down": "__shfl_down_sync"}


class Dialect:
    """The spelling of one C++ dialect for one target (``target``: a Target descriptor)."""

    name = ""
    families: tuple[str, ...] = ()

    def __init__(self, target: Target) -> None:
        self.target = target
        self.wave_size = target.wave_size

    def lacks(self, what: str) -> LayoutError:
        """The error for an instruction ``what`` this dialect cannot spell for its target."""
        return LayoutError(f"{what} has no {self.name.upper()} form for {self.target.name}")

    # ------------------------------------------------------------------ source text
    def prelude(self) -> list[str]:
        """Lines at the top of the file (includes, macros, vector types), guarded against repetition."""
        raise NotImplementedError

    def thread_index(self) -> str:
        """The thread's index in its (one-dimensional) block, an ``unsigned`` expression."""
        raise NotImplementedError

    def block_index(self) -> str:
        """The block's index in the (one-dimensional) grid, an ``unsigned`` expression."""
        raise NotImplementedError

    def uniform(self, expr: str) -> str:
        """``expr`` (equal in every lane of a warp) marked as warp-uniform where the dialect can."""
        return expr

    def vector_type(self, dwords: int) -> str:
        """The type of a ``dwords``-dword shared-memory access (2 or 4)."""
        raise NotImplementedError

    def vector_value(self, words: list[str]) -> str:
        """A vector of the ``unsigned`` expressions ``words``."""
        raise NotImplementedError

    #: how an assembly comment starts
    comment = ""

    def region_marker(self, text: str, inputs: list[tuple[str, int, bool]], tied: list[str]) -> str:
        """A zero-cost inline-asm comment ``text``; ``inputs`` are ``(variable, bits, uniform)`` operands
        the compiler must compute before it, ``tied`` the ``unsigned`` variables passed through it
        (read and written, no instruction)."""
        outs = ", ".join(f'"+{self.constraint(32, False)}"({v})' for v in tied)
        ins = ", ".join(f'"{self.constraint(bits, uniform)}"({v})' for v, bits, uniform in inputs)
        return self.fenced(f'asm volatile("{self.comment} {text}" : {outs} : {ins});')

    def constraint(self, bits: int, uniform: bool) -> str:
        """The inline-asm register constraint of a ``bits``-bit value (``uniform`` in a warp)."""
        raise NotImplementedError

    def fenced(self, statement: str) -> str:
        """``statement`` kept in its place among the instructions around it."""
        return statement

    def lds_separator(self) -> str:
        """A statement (no instruction) that keeps the compiler from merging two shared-memory steps."""
        raise NotImplementedError

    def lds_order(self) -> str:
        """A statement (no instruction) that keeps the compiler from moving shared-memory accesses across
        it (between the stores and loads of a round trip with no barrier: targets whose lanes are in
        lockstep)."""
        raise self.lacks("an order of a wave's shared-memory accesses without a barrier")

    def barrier(self) -> str:
        raise NotImplementedError

    def warp_barrier(self) -> str:
        """The barrier of one warp's lanes (targets whose lanes are not in lockstep)."""
        raise self.lacks("a warp-scope barrier")

    def launch_bounds(self, block_threads: int) -> str:
        """The kernel attribute promising at most ``block_threads`` threads per block (so the compiler
        may give each thread every register the target has for such a block)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ lane instructions
    def mask_type(self) -> str:
        """The integer type of a wave's lane mask (one bit per lane)."""
        return "unsigned long long" if self.wave_size == 64 else "unsigned"

    def mask(self, masks: list[int], warp: str) -> str:
        """``masks[warp]`` as an expression of :meth:`mask_type` (uniform in a warp)."""
        suffix = "ull" if self.wave_size == 64 else "u"
        mask = f"0x{masks[-1]:x}{suffix}"
        for w in range(len(masks) - 2, -1, -1):
            if masks[w] != masks[-1]:  # a warp without its own test falls through to the last warp's mask
                mask = f"({warp} == {w}u ? 0x{masks[w]:x}{suffix} : {mask})"
        return mask

    def condition(self, mask: str, lane: str) -> str:
        """A ``bool`` true in lane ``lane`` iff its bit of the lane mask ``mask`` is set."""
        raise NotImplementedError

    def shfl(self, mode: str, value: str, b: str, c: int) -> str:
        """PTX ``shfl.sync.<mode>.b32 d, value, b, c, 0xffffffff``."""
        raise self.lacks(f"shfl.sync.{mode}")

    def perm(self, s0: str, s1: str, selector: str) -> str:
        """``v_perm_b32 D, S0, S1, sel`` (``Mov``'s docstring)."""
        raise self.lacks("v_perm_b32")

    def prmt(self, a: str, b: str, selector: str) -> str:
        """PTX ``prmt.b32 d, a, b, selector`` (generic mode, ``Mov``'s docstring)."""
        raise self.lacks("prmt.b32")

    def dpp_mov(self, old: str | None, src: str, ctrl: int, row_mask: int, bank_mask: int, bound_ctrl: bool) -> str:
        raise self.lacks("a DPP move")

    def dpp8_mov(self, src: str, selector: int) -> str:
        raise self.lacks("a DPP8 move")

    def permlane16(self, src: str, selector: int, cross: bool) -> str:
        raise self.lacks(f"v_permlane{'x' if cross else ''}16_b32")

    def ds_swizzle(self, src: str, offset: int) -> str:
        raise self.lacks("ds_swizzle_b32")

    def ds_bpermute(self, byte_addr: str, src: str) -> str:
        raise self.lacks("ds_bpermute_b32")

    def permlane_swap(self, kind: str, vdst: str, src0: str) -> str:
        """An expression of two ``unsigned`` (``[0]`` the new vdst, ``[1]`` the new src0)."""
        raise self.lacks(f"v_{kind}_b32")

    def transpose_load(self, address: str, load) -> str:
        """The transpose load ``load`` (a ``linlayout.hw.transpose_loads.TransposeLoad``) of the
        shared-memory byte pointer ``address`` as its dwords."""
        raise self.lacks(load.name)

    def matrix_access(self, store: bool, num: int, trans: bool, address: str, registers: list[str]) -> str:
        """The statement of a PTX ``stmatrix`` (``store``: of the ``unsigned`` expressions ``registers``) or
        ``ldmatrix`` (into the declared ``unsigned`` variables ``registers``) ``.x{num}[.trans]`` whose
        lane gives the shared-memory byte pointer ``address``."""
        raise self.lacks(f"{'st' if store else 'ld'}matrix")

    def movmatrix(self, value: str) -> str:
        """PTX ``movmatrix.sync.aligned.m8n8.trans.b16`` of ``value``, an ``unsigned`` expression."""
        raise self.lacks("movmatrix")


class CudaDialect(Dialect):
    """CUDA C++ for NVIDIA targets (``nvcc``): warps of 32 lanes, ``__shfl_*_sync``, ``__byte_perm``."""

    name = "cuda"
    families = ("nvidia",)

    def prelude(self) -> list[str]:
        return ["#include <cstdint>", "#include <cuda_runtime.h>"]

    def thread_index(self) -> str:
        return "threadIdx.x"

    def block_index(self) -> str:
        return "blockIdx.x"

    def vector_type(self, dwords: int) -> str:
        return {2: "uint2", 4: "uint4"}[dwords]

    def vector_value(self, words: list[str]) -> str:
        return f"make_{self.vector_type(len(words))}({', '.join(words)})"

    comment = "//"

    def constraint(self, bits: int, uniform: bool) -> str:
        return "l" if bits == 64 else "r"

    def lds_separator(self) -> str:
        return 'asm volatile("" ::: "memory");'

    def barrier(self) -> str:
        return "__syncthreads();"

    def warp_barrier(self) -> str:
        return "__syncwarp();"

    def launch_bounds(self, block_threads: int) -> str:
        return f"__launch_bounds__({block_threads})"

    def condition(self, mask: str, lane: str) -> str:
        return f"((({mask}) >> {lane}) & 1u) != 0u"

    def shfl(self, mode: str, value: str, b: str, c: int) -> str:
        # c = (32 - width) << 8 | clamp: the intrinsics' form when the segment is a power of two and the
        # clamp is theirs (0 for up, 31 else); any other c as inline PTX
        if mode not in SHFL_INTRINSICS:
            raise LayoutError(f"shfl.sync has no mode {mode!r}")
        width = 32 - ((c >> 8) & 31)
        if c >> 13 == 0 and width & (width - 1) == 0 and c & 31 == (0 if mode == "up" else 31):
            tail = f", {width}" if width != 32 else ""
            return f"{SHFL_INTRINSICS[mode]}(0xffffffffu, {value}, {b}{tail})"
        return (f'[&] {{ unsigned r; asm("shfl.sync.{mode}.b32 %0, %1, %2, 0x{c:x}, 0xffffffff;" : "=r"(r) : '
                f'"r"({value}), "r"({b})); return r; }}()')

    def prmt(self, a: str, b: str, selector: str) -> str:
        return f"__byte_perm({a}, {b}, {selector})"  # __byte_perm(x, y, s) is prmt.b32 d, x, y, s

    def matrix_access(self, store: bool, num: int, trans: bool, address: str, registers: list[str]) -> str:
        # inline PTX: the address operand is the 32-bit shared-window address of the generic pointer
        form = f"{'st' if store else 'ld'}matrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.shared.b16"
        vector = "{" + ", ".join(f"%{k + (1 if store else 0)}" for k in range(num)) + "}"
        if store:
            text, outs, ins = f"{form} [%0], {vector};", "", [f'"r"({r})' for r in registers]
        else:
            text, outs, ins = f"{form} {vector}, [%{num}];", ", ".join(f'"=r"({r})' for r in registers), []
        addr = f'"r"(static_cast<unsigned>(__cvta_generic_to_shared({address})))'
        operands = ", ".join([addr] + ins) if store else ", ".join(ins + [addr])
        return f'asm volatile("{text}" : {outs} : {operands} : "memory");'

    def movmatrix(self, value: str) -> str:
        return (f'[&] {{ unsigned r; asm("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(r) : "r"({value})); '
                f'return r; }}()')


class HipDialect(Dialect):
    """HIP C++ for AMD targets (clang builtins of the amdgcn target)."""

    name = "hip"
    families = ("cdna", "rdna")

    def prelude(self) -> list[str]:
        return [
            "#include <stdint.h>",
            "#ifndef __device__",
            "#define __device__ __attribute__((device))",
            "#endif",
            "#ifndef __global__",
            "#define __global__ __attribute__((global))",
            "#endif",
            "#ifndef __shared__",
            "#define __shared__ __attribute__((shared))",
            "#endif",
            "#ifndef __forceinline__",
            "#define __forceinline__ inline __attribute__((always_inline))",
            "#endif",
            "#ifndef LINLAYOUT_HIP_VECTORS",
            "#define LINLAYOUT_HIP_VECTORS",
            "typedef unsigned linlayout_u32x2 __attribute__((ext_vector_type(2)));",
            "typedef unsigned linlayout_u32x4 __attribute__((ext_vector_type(4)));",
            "typedef short linlayout_i16x4 __attribute__((ext_vector_type(4)));",
            "typedef short linlayout_i16x8 __attribute__((ext_vector_type(8)));",
            "typedef int linlayout_i32x2 __attribute__((ext_vector_type(2)));",
            "#endif",
        ]

    def thread_index(self) -> str:
        return "__builtin_amdgcn_workitem_id_x()"

    def block_index(self) -> str:
        return "__builtin_amdgcn_workgroup_id_x()"

    def uniform(self, expr: str) -> str:
        return f"__builtin_amdgcn_readfirstlane({expr})"

    def vector_type(self, dwords: int) -> str:
        return {2: "linlayout_u32x2", 4: "linlayout_u32x4"}[dwords]

    def vector_value(self, words: list[str]) -> str:
        return f"{self.vector_type(len(words))}{{{', '.join(words)}}}"

    comment = ";"

    def constraint(self, bits: int, uniform: bool) -> str:
        return "s" if uniform else "v"

    def fenced(self, statement: str) -> str:
        return f"__builtin_amdgcn_sched_barrier(0); {statement} __builtin_amdgcn_sched_barrier(0);"

    def lds_separator(self) -> str:
        return "__builtin_amdgcn_sched_barrier(0);"

    def lds_order(self) -> str:
        return "__builtin_amdgcn_wave_barrier();"

    def barrier(self) -> str:
        return ('__builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); __builtin_amdgcn_s_barrier(); '
                '__builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");')

    def launch_bounds(self, block_threads: int) -> str:
        return f"__attribute__((amdgpu_flat_work_group_size(1, {block_threads})))"

    def condition(self, mask: str, lane: str) -> str:
        # the wave's lane mask is the condition itself (no instruction): llvm.amdgcn.inverse.ballot
        return f"__builtin_amdgcn_inverse_ballot_w{self.wave_size}({mask})"

    def perm(self, s0: str, s1: str, selector: str) -> str:
        return f"__builtin_amdgcn_perm({s0}, {s1}, {selector})"

    def dpp_mov(self, old: str | None, src: str, ctrl: int, row_mask: int, bank_mask: int, bound_ctrl: bool) -> str:
        tail = f"0x{ctrl:x}, 0x{row_mask:x}, 0x{bank_mask:x}, {'true' if bound_ctrl else 'false'}"
        if old is None:
            return f"__builtin_amdgcn_mov_dpp({src}, {tail})"
        return f"__builtin_amdgcn_update_dpp({old}, {src}, {tail})"

    def dpp8_mov(self, src: str, selector: int) -> str:
        return f"__builtin_amdgcn_mov_dpp8({src}, 0x{selector:x})"

    def permlane16(self, src: str, selector: int, cross: bool) -> str:
        # every lane active: the old value (src) is never kept, fetch-inactive and bound_ctrl off
        name = "permlanex16" if cross else "permlane16"
        return (f"__builtin_amdgcn_{name}({src}, {src}, 0x{selector & 0xFFFFFFFF:x}u, 0x{selector >> 32:x}u, "
                f"false, false)")

    def ds_swizzle(self, src: str, offset: int) -> str:
        return f"__builtin_amdgcn_ds_swizzle({src}, 0x{offset:04x})"

    def ds_bpermute(self, byte_addr: str, src: str) -> str:
        return f"__builtin_amdgcn_ds_bpermute({byte_addr}, {src})"

    def permlane_swap(self, kind: str, vdst: str, src0: str) -> str:
        if not self.target.has_permlane_swap:
            raise self.lacks(f"v_{kind}_b32")
        if kind not in ("permlane16_swap", "permlane32_swap"):
            raise LayoutError(f"permlane swap kind {kind!r} must be permlane16_swap or permlane32_swap")
        return f"__builtin_amdgcn_{kind}({vdst}, {src0}, false, false)"

    def transpose_load(self, address: str, load) -> str:
        """HIP builtin of the transpose load ``load`` (``HIP_TRANSPOSE_LOADS``: gfx950's
        ``ds_read_b64_tr_b{8,16}``, gfx1250's ``ds_load_tr16_b128`` / ``ds_load_tr8_b64``), its result
        bit-cast to the load's dwords; a load the target does not have is ``lacks``."""
        if load.name not in HIP_TRANSPOSE_LOADS or self.target.transpose_load(load.element_bits,
                                                                              load.bytes_per_lane) != load:
            raise self.lacks(load.name)
        builtin, pointee = HIP_TRANSPOSE_LOADS[load.name]
        return (f"__builtin_bit_cast({self.vector_type(load.bytes_per_lane // 4)}, {builtin}("
                f"(__attribute__((address_space(3))) {pointee}*)({address})))")


#: Transpose load -> (clang builtin, the vector type its LDS pointer points to).
HIP_TRANSPOSE_LOADS = {
    "ds_read_b64_tr_b16": ("__builtin_amdgcn_ds_read_tr16_b64_v4i16", "linlayout_i16x4"),
    "ds_read_b64_tr_b8": ("__builtin_amdgcn_ds_read_tr8_b64_v2i32", "linlayout_i32x2"),
    "ds_load_tr16_b128": ("__builtin_amdgcn_ds_load_tr16_b128_v8i16", "linlayout_i16x8"),
    "ds_load_tr8_b64": ("__builtin_amdgcn_ds_load_tr8_b64_v2i32", "linlayout_i32x2"),
}


DIALECTS = {d.name: d for d in (CudaDialect, HipDialect)}


def dialect_for(arch: str, dialect: str | None = None) -> Dialect:
    """The dialect ``dialect`` (``cuda``, ``hip``; None: the target's own) for the target ``arch``.

    ``LayoutError`` for an unknown dialect or one that does not run on the target (HIP for an
    NVIDIA target, CUDA for an AMD one)."""
    target = get_target(arch)
    if dialect is None:
        chosen = next((d for d in DIALECTS.values() if target.family in d.families), None)
        if chosen is None:
            raise LayoutError(f"no C++ dialect for {target.name} (family {target.family})")
        return chosen(target)
    if dialect not in DIALECTS:
        raise LayoutError(f"C++ dialect must be one of {', '.join(DIALECTS)}, got {dialect!r}")
    chosen = DIALECTS[dialect]
    if target.family not in chosen.families:
        raise LayoutError(f"{dialect} C++ does not run on {target.name} ({target.family} family; "
                          f"{dialect} is for {', '.join(chosen.families)} targets)")
    return chosen(target)
