"""A plan's C++ source: the device function that converts one thread's registers, and its test kernel.

``emit_cpp(plan, dialect=None, name=None) -> CppSource``.  The file holds

* ``__device__ __forceinline__ void NAME(const T (&src)[SLOTS_IN], T (&dst)[SLOTS_OUT])``:
  ``T`` the unsigned integer type of ``element_bits`` (``uint8_t`` .. ``uint64_t``).  Called by
  every thread of a one-dimensional block of ``block_threads = num_warps * wave_size`` threads
  (thread ``t`` is lane ``t % wave_size`` of warp ``t / wave_size``), with ``src[r]`` the element
  ``plan.src(register=r, lane, warp)``; on return ``dst[r]`` is ``plan.dst(register=r, lane,
  warp)``.  The arrays are fully unrolled into registers: the function packs the slots into
  32-bit registers (slot ``s`` is bits ``(s % p) * element_bits ..`` of register ``s // p``,
  ``p = 32 / element_bits``; a 64-bit slot is registers ``2s`` (low half) and ``2s + 1``), runs
  the plan's steps on them and unpacks.  A plan that uses shared memory declares its own
  ``__shared__`` array of ``plan.lds_bytes`` bytes (at least what its accesses touch) in the
  function (a plan without shared-memory steps declares none); the function does not end with a
  barrier, so a caller that calls it again (or reuses that memory) puts a ``__syncthreads()``
  between.  Only the ids (thread, lane, warp) the function reads are declared: the output
  compiles without warnings.
* ``extern "C" __global__ void NAME_test(const T* in, T* out)``: thread ``t`` of block ``b``
  reads ``src[r] = in[b * tile_in + t * slots_in + r]`` (``tile_in = block_threads *
  slots_in`` elements per block), calls ``NAME`` and writes ``out[b * tile_out + t * slots_out
  + r] = dst[r]`` (``tile_out = block_threads * slots_out``).  Launch it with
  ``block_threads`` threads per block and any number of blocks.

Compiled with ``-DLINLAYOUT_MARK_REGIONS`` the function's steps sit between two zero-cost
inline-asm comments ``linlayout-begin conv`` / ``linlayout-end conv`` (PTX ``//``, AMDGPU
``;``): the begin marker takes the prologue's per-lane values as inputs and passes the source
registers through (read and written, no instruction), the end marker passes the final
registers through, so the instructions of the plan, and only they, lie between the markers
(linlayout.lowering.cpp.counts counts them there).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from linlayout import LayoutError
from linlayout.synth.plan import Plan
from linlayout.synth.steps import dwords_per_slot, slot_dwords, slots_per_dword

from .dialect import Dialect, dialect_for
from .emitter import CppEmitter
from .lane_exprs import CppLaneValues

__all__ = ["CppSource", "ELEMENT_TYPES", "MARK_MACRO", "REGION", "emit_cpp"]

#: The C++ element type of each element size (bits).
ELEMENT_TYPES = {8: "uint8_t", 16: "uint16_t", 32: "uint32_t", 64: "uint64_t"}
#: Compile with ``-D<MARK_MACRO>`` to put the region markers into the function.
MARK_MACRO = "LINLAYOUT_MARK_REGIONS"
#: The tag of the marked region (``linlayout-begin conv`` .. ``linlayout-end conv``).
REGION = "conv"
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class CppSource:
    """The C++ file of one plan and what a caller needs to run its test kernel.

    ``source``: the whole file; ``dialect``: ``cuda`` or ``hip``; ``arch``: the plan's target;
    ``function_name`` / ``kernel_name``: the device function and the ``extern "C"`` test kernel;
    ``block_threads``: threads per block (``num_warps * wave_size``); ``slots_in`` /
    ``slots_out``: elements per thread in and out; ``element_bits``: bits per element (the
    arrays' type is ``element_type``); ``tile_in`` / ``tile_out``: elements per block of the
    test kernel's ``in`` and ``out`` (``block_threads * slots_in`` / ``* slots_out``);
    ``lds_bytes``: the function's shared memory.
    """

    source: str
    dialect: str
    arch: str
    function_name: str
    kernel_name: str
    block_threads: int
    wave_size: int
    num_warps: int
    slots_in: int
    slots_out: int
    element_bits: int
    lds_bytes: int

    @property
    def element_type(self) -> str:
        return ELEMENT_TYPES[self.element_bits]

    @property
    def tile_in(self) -> int:
        return self.block_threads * self.slots_in

    @property
    def tile_out(self) -> int:
        return self.block_threads * self.slots_out


def _lds_bytes(plan: Plan) -> int:
    """Shared-memory bytes the function declares: none for a plan without shared-memory steps, else
    ``plan.lds_bytes``, at least the last byte any access touches, rounded up to 16."""
    if not any(st.lds for st in plan.steps):
        return 0
    need = plan.lds_bytes
    for st in plan.steps:
        if st.lds:
            for _, addr in st.accesses():
                need = max(need, int(addr.max()) + st.width_bytes)
    return -(-need // 16) * 16


def emit_cpp(plan: Plan, dialect: str | None = None, name: str | None = None) -> CppSource:
    """The C++ source of ``plan`` (module docstring: the function, the test kernel, their indexing).

    ``dialect``: ``"cuda"`` or ``"hip"``; None takes the target's own (CUDA for NVIDIA targets,
    HIP for AMD ones).  ``name``: the device function's name (a C identifier; default
    ``linlayout_convert``), the test kernel is ``<name>_test``.  LayoutError for a dialect that
    does not run on ``plan.arch``, an element size without an unsigned type, a step the
    dialect has no form for (naming the target), or a plan whose dst is held one element per VGPR
    (``plan.dst_unpacked``: its slots above each VGPR's low one are don't-care, so ``dst[r]`` would not
    be ``plan.dst(register=r)`` there) or read in one copy (``plan.dst_one_copy``: its lanes other than the
    canonical ones are don't-care).
    """
    if plan.dst_one_copy:
        raise LayoutError("C++ output needs every dst lane: a dst_one_copy plan leaves the copies of its repeated "
                          "elements outside the canonical lanes unset; plan it without dst_one_copy")
    if plan.dst_unpacked:
        raise LayoutError("C++ output needs a packed dst: a dst_unpacked plan leaves its slots above each VGPR's "
                          "low one unset, so dst[r] would not be plan.dst(register=r); plan it without dst_unpacked")
    d = dialect_for(plan.arch, dialect)
    name = name or "linlayout_convert"
    if not _NAME_RE.match(name):
        raise LayoutError(f"the function name must be a C identifier, got {name!r}")
    if plan.element_bits not in ELEMENT_TYPES:
        raise LayoutError(f"C++ output needs {', '.join(map(str, ELEMENT_TYPES))}-bit elements, "
                          f"got {plan.element_bits}")
    t = ELEMENT_TYPES[plan.element_bits]
    lds_bytes = _lds_bytes(plan)
    tid, lane, warp = "tid", "lane", "warp"
    values = CppLaneValues(d, name, plan.num_warps, lane, warp, tid)
    em = CppEmitter(plan, d, values, "lds")
    em.prepare()
    src_regs, pack = _pack(plan)
    regs = em.emit(src_regs)
    final, copies, unpack = _unpack(plan, regs, t)

    wave = d.wave_size
    ids = [(tid, d.thread_index()), (lane, f"{tid} % {wave}u"), (warp, d.uniform(f"{tid} / {wave}u"))]
    fn = [f"__device__ __forceinline__ void {name}(const {t} (&src)[{plan.slots_in}], {t} (&dst)[{plan.slots_out}]) {{"]
    fn += ["  " + ln for ln in _read_ids(ids, values.lines + em.body)]
    if lds_bytes:
        fn.append(f"  __shared__ alignas(16) unsigned char lds[{lds_bytes}];")
    fn += ["  " + ln for ln in values.lines + pack]
    fn += [f"#ifdef {MARK_MACRO}",
           "  " + d.region_marker(f"linlayout-begin {REGION}", values.pinned, list(src_regs.values())),
           "#endif"]
    fn += ["  " + ln for ln in em.body + copies]
    fn += [f"#ifdef {MARK_MACRO}",
           "  " + d.region_marker(f"linlayout-end {REGION}", [], final),
           "#endif"]
    fn += ["  " + ln for ln in unpack] + ["}"]
    header = [f"// linlayout conversion: {plan.strategy} plan for {plan.arch}, {plan.element_bits}-bit elements, "
              f"{plan.slots_in} -> {plan.slots_out} per thread, {plan.num_warps} warps of {wave} lanes "
              f"({d.name} C++, linlayout.lowering.cpp)"]
    block_threads = plan.num_warps * wave
    kernel = _test_kernel(d, name, t, block_threads, plan.slots_in, plan.slots_out)
    text = "\n".join(header + d.prelude() + [""] + values.tables + [""] + fn + [""] + kernel) + "\n"
    return CppSource(source=text, dialect=d.name, arch=plan.arch, function_name=name, kernel_name=f"{name}_test",
                     block_threads=block_threads, wave_size=wave, num_warps=plan.num_warps,
                     slots_in=plan.slots_in, slots_out=plan.slots_out, element_bits=plan.element_bits,
                     lds_bytes=lds_bytes)


def _read_ids(ids: list[tuple[str, str]], statements: list[str]) -> list[str]:
    """The declarations ``const unsigned NAME = EXPR;`` of the ids (thread, lane, warp; each EXPR may read
    the ids before it) that ``statements``, or a kept declaration, read; an id nothing reads is not
    declared (a one-warp plan never reads the warp id, and compilers warn about unused variables)."""
    text = "\n".join(statements)
    kept = []
    for name, expr in reversed(ids):
        if re.search(rf"\b{name}\b", text):
            kept.append(f"const unsigned {name} = {expr};")
            text += "\n" + expr
    return kept[::-1]


def _test_kernel(d: Dialect, name: str, t: str, block_threads: int, slots_in: int, slots_out: int) -> list[str]:
    """The test kernel ``<name>_test`` (module docstring: thread ``t`` of block ``b`` reads
    ``in[b * tile_in + t * slots_in + r]`` and writes ``out[b * tile_out + t * slots_out + r]``)."""
    block = f"(unsigned long long){d.block_index()}"
    return [
        f'extern "C" __global__ void {d.launch_bounds(block_threads)} {name}_test(const {t}* in, {t}* out) {{',
        f"  const unsigned t = {d.thread_index()};",
        f"  const {t}* tile_in = in + {block} * {block_threads * slots_in}u + t * {slots_in}u;",
        f"  {t}* tile_out = out + {block} * {block_threads * slots_out}u + t * {slots_out}u;",
        f"  {t} src[{slots_in}];",
        f"  {t} dst[{slots_out}];",
        "#pragma unroll",
        f"  for (int r = 0; r < {slots_in}; ++r) src[r] = tile_in[r];",
        f"  {name}(src, dst);",
        "#pragma unroll",
        f"  for (int r = 0; r < {slots_out}; ++r) tile_out[r] = dst[r];",
        "}",
    ]


def _dword_count(slots: int, element_bits: int) -> int:
    p, dps = slots_per_dword(element_bits), dwords_per_slot(element_bits)
    return slots * dps if dps == 2 else -(-slots // p)


def _pack(plan: Plan) -> tuple[dict[int, str], list[str]]:
    """The source registers (dword -> variable) and the statements packing ``src`` into them."""
    p, dps = slots_per_dword(plan.element_bits), dwords_per_slot(plan.element_bits)
    parts: dict[int, list[str]] = {}
    for s in range(plan.slots_in):
        for d, first, n in slot_dwords(s, p, dps):
            if dps == 2:
                parts.setdefault(d, []).append(f"static_cast<unsigned>(src[{s}]" + (" >> 32)" if d % 2 else ")"))
            else:
                shifted = f"static_cast<unsigned>(src[{s}])" + (f" << {8 * first}" if first else "")
                parts.setdefault(d, []).append(f"({shifted})" if first else shifted)
    regs = {d: f"v{d}" for d in range(_dword_count(plan.slots_in, plan.element_bits))}
    lines = [f"unsigned {regs[d]} = {' | '.join(parts[d])};" for d in sorted(regs)]
    return regs, lines


def _unpack(plan: Plan, regs: dict[int, str], t: str) -> tuple[list[str], list[str], list[str]]:
    """The output registers' variables, the statements copying the final registers into them, and the
    statements writing ``dst`` from them."""
    p, dps = slots_per_dword(plan.element_bits), dwords_per_slot(plan.element_bits)
    outs: dict[int, str] = {}
    lines = []
    for s in range(plan.slots_out):
        pieces = slot_dwords(s, p, dps)
        for d, _, _ in pieces:
            if d not in regs:
                raise LayoutError(f"the plan leaves register {d} (destination slot {s}) without a value")
            outs.setdefault(d, f"o{d}")
        if dps == 2:
            lo, hi = (outs[d] for d, _, _ in pieces)
            lines.append(f"dst[{s}] = (static_cast<{t}>({hi}) << 32) | {lo};")
        else:
            (d, first, _), = pieces
            lines.append(f"dst[{s}] = static_cast<{t}>({outs[d]}" + (f" >> {8 * first});" if first else ");"))
    copies = [f"unsigned {v} = {regs[d]};" for d, v in outs.items()]
    return list(outs.values()), copies, lines
