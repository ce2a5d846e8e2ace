"""``convert``: a layout conversion of one lane's fragment, emitted in place inside ``@flyc.kernel``.

    P = linlayout.flydsl.convert(frag_C.load().to(fx.Float16), src, dst)

``values`` is a FlyDSL vector (or an ``ir.Value`` of type ``vector<N x T>``) holding element
``r`` of the lane's fragment at register ``r`` of ``src``; the result holds register ``r``
of ``dst`` at position ``r``.  The conversion is planned by
:func:`linlayout.synth.convert.plan_conversion` for FlyDSL's compile target and verified on
the wave emulator before anything is emitted.

Emission.  The plan is lowered by the same :class:`~linlayout.lowering.emit.plan_ops.PlanEmitter`
as linlayout's own kernels, into the text of one function ``vector<N x T> -> vector<M x T>``
(the lane's dwords are ``llvm.bitcast`` views of the vector, bit ``k`` of dword ``d`` is bit
``32 d + k`` of the vector).  That function is parsed in FlyDSL's MLIR context and its ops
are *moved* to FlyDSL's insertion point, its argument replaced by ``values``: no call, no
helper symbol is left behind.  Module-level ops of the plan -- its LDS buffer (an
``llvm.mlir.global`` in address space 3) and any constant lane table -- are moved into the
kernel's ``gpu.module`` under names unique to the call.  The per-lane setup values
(addresses, lane masks) are computed where the conversion stands; LLVM hoists them out of
loops.  Barriers are the plan's own ``Barrier`` steps, where waves exchange data through LDS.
"""

from __future__ import annotations

import itertools

from linlayout import LayoutError, LinearLayout, get_target
from linlayout.lowering.emit import atoms
from linlayout.lowering.emit.builder import Builder, vector_type
from linlayout.lowering.emit.lane_values import LaneValues
from linlayout.lowering.emit.plan_ops import PlanEmitter
from linlayout.synth.convert import plan_conversion
from linlayout.synth.plan import Plan

from .layouts import layout_of
from .target import gpu_module_body, kernel_block, kernel_threads, target_arch

__all__ = ["convert", "plan_for", "for_kernel", "conversion_function"]

_names = itertools.count()


def _layout(obj, what: str) -> LinearLayout:
    """A LinearLayout as given; an ``(object, reading)`` pair read by ``layout_of(object, reading)``
    (a fragment's role: ``(tiled_mma, "C")``, a copy's side: ``(tiled_copy, "dst")``); anything
    else (a tiled copy, layout text such as ``tv:16x16:Layout<...>``) read by ``layout_of(obj)``."""
    if isinstance(obj, LinearLayout):
        return obj
    try:
        if isinstance(obj, tuple):
            if len(obj) != 2 or not isinstance(obj[1], str):
                raise LayoutError(f"a pair (FlyDSL object, reading) such as (tiled_mma, 'C'), got {obj!r}")
            return layout_of(*obj)
        return layout_of(obj)
    except LayoutError as e:
        raise LayoutError(f"{what}: {e}") from None


def plan_for(src, dst, element_bits: int, *, arch: str | None = None, strategy: str = "auto",
             one_wave: bool | None = None) -> Plan:
    """The verified plan ``convert`` emits for ``src -> dst`` (``arch``: FlyDSL's target by default; ``one_wave``:
    ``plan_conversion``'s, None for the layouts' warps: ``convert`` passes None where the kernel being traced declares
    its threads, ``target.kernel_threads()``, and plans for all its waves (:func:`for_kernel`), False where it
    declares none)."""
    return plan_conversion(_layout(src, "src"), _layout(dst, "dst"), arch or target_arch(), element_bits,
                           strategy=strategy, one_wave=one_wave)


def _dwords(count: int, element_bits: int, what: str) -> int:
    if count * element_bits % 32:
        raise LayoutError(f"{what}: {count} elements of {element_bits} bits do not fill whole 32-bit registers")
    return count * element_bits // 32


def conversion_function(plan: Plan, element_type: str, name: str, lds_name: str,
                        declared: bool = True, block: tuple[int, int, int] | None = None) -> tuple[str, list[str]]:
    """``(function text, module-level op lines)`` of ``plan`` as ``func.func @name(vector<N x T>) -> vector<M x T>``.

    ``element_type``: the MLIR element type of the vector (``f16``, ``bf16``, ``f32``, ``i8`` ...);
    ``lds_name``: the symbol of the plan's LDS buffer (used only when the plan needs LDS).
    ``declared``: the kernel runs the plan's warps (``convert`` plans for the kernel's waves where it declares them);
    False: it declares none and may run more, a plan without LDS only, whose lane programs then see the thread id
    modulo the plan's threads and the warp id modulo its warps (wave ``w`` is warp ``w % num_warps``: no bit of a
    larger warp id enters an address, a select or a table index).  ``block``: the kernel's declared block sizes
    (x, y, z), whose linear thread id the plan's lanes and warps are (``atoms.thread_ids``); None: one-dimensional.
    """
    n_in, n_out = plan.slots_in, plan.slots_out
    d_in = _dwords(n_in, plan.element_bits, "the source fragment")
    d_out = _dwords(n_out, plan.element_bits, "the destination fragment")
    in_t, out_t = f"vector<{n_in}x{element_type}>", f"vector<{n_out}x{element_type}>"
    if not declared and plan.lds_bytes > 0:
        raise LayoutError("conversion_function: a plan through LDS needs a kernel of the plan's warps")
    b = Builder(indent="    ")
    tid, t32, lane, warp = atoms.thread_ids(b, plan.wave_size, block)
    if not declared:
        tid = b.cast("arith.index_cast", b.arith("andi", t32, b.const(plan.num_warps * plan.wave_size - 1)),
                     "i32", "index")
        warp = b.arith("andi", warp, b.const(plan.num_warps - 1))
    lanes = LaneValues(b, tid, lane, warp, plan.num_warps, plan.wave_size, plan.arch, plan.one_wave)
    lds = atoms.lds_base(b, lds_name) if plan.lds_bytes > 0 else None
    emitter = PlanEmitter(b, plan, lanes, lds)
    emitter.prepare()
    words = b.cast("llvm.bitcast", "%values", in_t, vector_type(d_in, "i32"))
    regs = {d: words if d_in == 1 else b.extract(words, d, vector_type(d_in, "i32")) for d in range(d_in)}
    regs = emitter.emit(regs)
    missing = [d for d in range(d_out) if d not in regs]
    if missing:
        raise LayoutError(f"the plan leaves destination register(s) {missing} without a value")
    packed = b.build_vector([regs[d] for d in range(d_out)], "i32")
    result = b.cast("llvm.bitcast", packed, vector_type(d_out, "i32"), out_t)
    text = (f"func.func @{name}(%values: {in_t}) -> {out_t} {{\n{b.body()}\n"
            f"    func.return {result} : {out_t}\n}}\n")
    module_ops = list(lanes.globals)
    if plan.lds_bytes > 0:
        module_ops.append(atoms.lds_global(lds_name, -(-plan.lds_bytes // 16) * 16))
    return text, module_ops


GROUP_DIM = "wave_group"  # the out dim that tells the groups of a kernel's waves apart (``for_kernel``)


def for_kernel(src: LinearLayout, dst: LinearLayout, threads: int | None,
               wave_size: int) -> tuple[LinearLayout, LinearLayout]:
    """``src -> dst`` as the kernel of ``threads`` threads (None: not declared) runs it: every group of the layouts'
    ``W`` warps converts its own fragments.  With ``G = threads / (W wave_size) > 1`` groups both layouts become
    ``layout * identity(warp -> wave_group)``, ``G W`` warps, warp ``w`` of the kernel holding the elements of warp
    ``w % W`` of group ``w // W`` (out dim ``wave_group``): the plan covers every wave, its LDS buffer and addresses
    give each group its own elements.  A LayoutError where ``G`` is not a power of two (no whole number of groups,
    or groups no warp bits tell apart); undeclared threads keep the layouts."""
    per_group = wave_size * (src.in_dim_size("warp") if src.has_in_dim("warp") else 1)
    if threads is None:
        return src, dst
    groups = threads // per_group
    if threads % per_group or groups & (groups - 1):
        raise LayoutError(f"convert: the kernel's {threads} threads are not a power-of-two multiple of the layouts' "
                          f"{per_group} ({per_group // wave_size} warp(s) of {wave_size} lanes); launch such a "
                          f"multiple, or convert layouts of the kernel's warps")
    if groups == 1:
        return src, dst
    copies = LinearLayout.identity_1d(groups, "warp", GROUP_DIM)
    return src * copies, dst * copies


def convert(values, src, dst, *, strategy: str = "auto"):
    """One lane's ``values`` in ``src`` register order -> the same elements in ``dst`` order.

    Call inside ``@flyc.kernel``.  ``values``: a FlyDSL ``Vector`` or an ``ir.Value`` of a
    1-D vector type; ``src``/``dst``: LinearLayouts (register, lane, warp -> tensor), FlyDSL
    fragments as ``(tiled_mma, role)`` pairs (``(tiled, "C")``), tiled copies, or layout text
    (``tv:16x16:Layout<...>``), read by :func:`linlayout.flydsl.layout_of`; ``strategy``: ``auto``, ``registers`` or ``lds``
    (:func:`linlayout.synth.convert.plan_conversion`).  Returns the same kind as ``values``.
    """
    from flydsl._mlir import ir
    from flydsl.expr.typing import Vector

    value = values.ir_value() if isinstance(values, Vector) else values
    if not isinstance(value, ir.Value) or not isinstance(value.type, ir.VectorType):
        raise LayoutError(f"convert: values must be a FlyDSL Vector or a vector ir.Value, got {type(values).__name__}")
    vtype = value.type
    if vtype.rank != 1:
        raise LayoutError(f"convert: values must be a 1-D vector, got {vtype}")
    element_type = vtype.element_type
    if not isinstance(element_type, (ir.IntegerType, ir.FloatType)):
        raise LayoutError(f"convert: elements of {vtype} are not integers or floats")
    element_bits = int(element_type.width)
    block, threads = kernel_block(), kernel_threads()
    arch = target_arch()
    wave_size = get_target(arch).wave_size
    src, dst = for_kernel(_layout(src, "src"), _layout(dst, "dst"), threads, wave_size)
    # declared threads: the plan's warps are the kernel's waves (plan_conversion's default); else there may be more
    plan = plan_for(src, dst, element_bits, arch=arch, strategy=strategy, one_wave=None if threads is not None else False)
    if threads is None and plan.lds_bytes > 0:
        raise LayoutError("convert: the plan goes through LDS and the kernel declares no block size, so the "
                          "waves beyond the layouts' would share its LDS bytes; launch the kernel with a static "
                          "block=(...) or pass strategy='registers'")
    if vtype.shape[0] != plan.slots_in:
        raise LayoutError(f"convert: the src layout has {plan.slots_in} registers per lane, values has {vtype.shape[0]}")
    k = next(_names)
    text, module_ops = conversion_function(plan, str(element_type), f"linlayout_convert_{k}", f"linlayout_lds_{k}",
                                          threads is not None, block)
    result = _splice(ir, text, module_ops, value)
    return Vector(result, (plan.slots_out,), values.dtype) if isinstance(values, Vector) else result


def _splice(ir, text: str, module_ops: list[str], value):
    """Move the ops of the one function of ``text`` to the current insertion point, its
    argument replaced by ``value``, and ``module_ops`` into the kernel's ``gpu.module``;
    returns the value the function returned."""
    parsed = ir.Module.parse("\n".join(module_ops) + "\n" + text)
    here = ir.InsertionPoint.current
    ops = list(parsed.body.operations)
    func = ops[-1]
    with ir.InsertionPoint(gpu_module_body()):
        for op in ops[:-1]:
            op.detach_from_parent()
            ir.InsertionPoint.current.insert(op)
    block = func.regions[0].blocks[0]
    block.arguments[0].replace_all_uses_with(value)
    body = list(block.operations)
    ret = body[-1]
    result = ret.operands[0]
    ret.erase()
    for op in body[:-1]:
        op.detach_from_parent()
        here.insert(op)
    func.erase()
    return result
