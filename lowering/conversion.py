"""A conversion plan all the way down: plan -> conversion kernel (MLIR) -> ISA / code object
-> ISA report, with the times of each stage.

This is the entry point of ``linlayout convert --emit`` and ``linlayout bench conversions``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from linlayout import LayoutError, get_target
from linlayout.hw.targets import targets_with
from linlayout.lowering.compile import CompiledKernel, compile_mlir
from linlayout.lowering.linker import LinkerNotFound
from linlayout.lowering.mlir import MlirUnavailable

from .cpp import DIALECTS, emit_cpp
from .emit.conversion_kernel import ConversionKernel, build_conversion_kernel
from .report import PLAN_CHECKED_KEYS, isa_report, kernel_setup, plan_isa_differences

__all__ = ["EMITTERS", "EMIT_FORMATS", "LoweredConversion", "emitter_for", "lower_conversion", "write_conversion"]

EMIT_FORMATS = ("mlir", "isa", "fatbin") + tuple(DIALECTS)  # the MLIR path's artifacts, then C++ source
#: The conversion-kernel builder of each emitter a target descriptor can name (``Target.emitter``).
EMITTERS = {"rocdl": build_conversion_kernel}


@dataclass
class LoweredConversion:
    """The emitted kernel of a plan and, when compiled, its ISA report.

    ``report`` is :func:`linlayout.lowering.report.isa_report` of the ``conv`` region (with
    ``setup_counts``: the ``setup`` region, the plan's prologue outside the ``conv`` region -- LDS and
    ``ds_bpermute`` addresses, lane masks, byte selectors, the permlane selectors' low words, and the ``m0``
    writes LLVM hoists out of the regions: ``report.kernel_setup`` -- not the stores' addresses, which
    have a region of their own); ``differences`` lists the checked
    instruction kinds where the ISA and the plan disagree (empty when they agree).
    """

    kernel: ConversionKernel
    compiled: CompiledKernel | None = None
    report: dict = field(default_factory=dict)
    differences: dict = field(default_factory=dict)
    emit_seconds: float = 0.0
    compile_seconds: float = 0.0

    def to_json(self) -> dict:
        out = {"kernel": self.kernel.name, "emit_seconds": round(self.emit_seconds, 4)}
        if self.compiled is not None:
            out.update(self.report)
            out["plan_isa_differences"] = self.differences
            out["compile_seconds"] = round(self.compile_seconds, 4)
        return out


def lower_conversion(plan, *, compile: bool = True, binary: bool = False, shape: tuple[int, ...] | None = None,
                     cache: bool = True) -> LoweredConversion:
    """Emit the conversion kernel of ``plan`` and (``compile``) compile it for ``plan.arch``.

    ``binary`` also links the HSA code object; ``cache=False`` bypasses the compile
    cache (for timing).
    """
    build = emitter_for(plan.arch)
    t0 = time.perf_counter()
    kernel = build(plan, shape=shape)
    out = LoweredConversion(kernel=kernel, emit_seconds=time.perf_counter() - t0)
    if not compile:
        return out
    _compile(out, plan, binary, cache)
    if _escaped(out.differences):  # an instruction of the plan was computed before the region
        t2 = time.perf_counter()
        out.kernel = build(plan, shape=shape, pin_sources=True)
        out.emit_seconds += time.perf_counter() - t2
        _compile(out, plan, binary, cache)
    out.report["sources_pinned"] = out.kernel.text.count('"=v') > 0
    return out


def emitter_for(arch: str):
    """The conversion-kernel builder of the emitter ``arch``'s descriptor names; ``LayoutError``
    where it names none."""
    target = get_target(arch)
    if target.emitter not in EMITTERS:
        raise LayoutError(f"no kernel emitter for {target.name}; conversion kernels are emitted for "
                          f"{', '.join(targets_with(emitter=True))}")
    return EMITTERS[target.emitter]


def _compile(out: LoweredConversion, plan, binary: bool, cache: bool) -> None:
    t1 = time.perf_counter()
    ck = compile_mlir(out.kernel.text, out.kernel.arch, binary=binary, cache=cache)
    out.compile_seconds += ck.compile_seconds if ck.from_cache else time.perf_counter() - t1
    out.compiled = ck
    out.report = isa_report(ck, "conv")
    out.report["setup_counts"] = kernel_setup(ck.isa)
    out.differences = plan_isa_differences(plan, out.report["isa_counts"], hazards=True)


def _escaped(differences: dict) -> bool:
    """True when the region holds fewer instructions of some checked kind than the plan."""
    return any(d["isa"] < d["plan"] for k, d in differences.items() if k in PLAN_CHECKED_KEYS)


def write_conversion(plan, emit: str, path: str | Path, *, shape: tuple[int, ...] | None = None) -> dict:
    """Write the ``emit`` artifact (``mlir``, ``isa``, ``fatbin``, or C++ source: ``cuda``, ``hip``) of
    ``plan`` to ``path``.

    Returns the JSON keys for ``linlayout convert``: ``emit``, ``output`` and, when the
    kernel was compiled (``isa``/``fatbin``), ``isa_counts``, ``lds_bytes``, the register
    counts and ``plan_isa_differences``; for C++ the names and launch shape of its test kernel
    (:func:`_write_cpp`).
    """
    if emit not in EMIT_FORMATS:
        raise LayoutError(f"--emit must be one of {', '.join(EMIT_FORMATS)}, got {emit!r}")
    if emit in DIALECTS:
        return _write_cpp(plan, emit, Path(path))
    target = get_target(plan.arch)
    if target.emitter not in EMITTERS:  # say which --emit does write this target's plan
        own = next((d for d, cls in DIALECTS.items() if target.family in cls.families), None)
        hint = f"; --emit {own} writes the plan as {own.upper()} C++" if own else ""
        raise LayoutError(f"--emit {emit}: no kernel emitter for {target.name}; conversion kernels are emitted "
                          f"for {', '.join(targets_with(emitter=True))}{hint}")
    try:
        low = lower_conversion(plan, compile=emit != "mlir", binary=emit == "fatbin", shape=shape)
    except (MlirUnavailable, LinkerNotFound) as e:  # the environment, not the plan: a one-line message
        raise LayoutError(f"--emit {emit}: {e}") from None
    data = low.kernel.text if emit == "mlir" else low.compiled.isa if emit == "isa" else low.compiled.binary
    _write(Path(path), data)
    return {"emit": emit, "output": str(path), **low.to_json()}


def _write_cpp(plan, dialect: str, path: Path) -> dict:
    """Write the ``dialect`` C++ source of ``plan`` (linlayout.lowering.cpp) to ``path``; returns ``emit``,
    ``output``, ``function``, ``kernel``, ``block_threads``, ``slots_in``, ``slots_out``, ``element_bits``."""
    src = emit_cpp(plan, dialect=dialect)
    _write(path, src.source)
    return {"emit": dialect, "output": str(path), "function": src.function_name, "kernel": src.kernel_name,
            "block_threads": src.block_threads, "slots_in": src.slots_in, "slots_out": src.slots_out,
            "element_bits": src.element_bits}


def _write(path: Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` (a LayoutError naming the file when that fails)."""
    try:
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data)
    except OSError as e:
        raise LayoutError(f"cannot write {str(path)!r}: {e}") from None
