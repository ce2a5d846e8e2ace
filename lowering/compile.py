"""Compiling an MLIR GPU module to AMDGPU ISA text and an HSA code object.

Input is MLIR assembly of a builtin module holding exactly one ``gpu.module`` (kernels as
``gpu.func`` with arith/vector/memref/scf/rocdl ops, or already as ``llvm.func`` with
llvm/rocdl ops).  :func:`compile_mlir` replaces the gpu.module's targets with one
``#rocdl.target`` for the requested arch, lowers to the LLVM dialect with
:data:`LOWERING_PIPELINE` (the pre-binary part of flydsl's own ROCm pipeline, minus its
``fly-*`` passes), and runs ``gpu-module-to-binary`` twice: ``format=isa`` for the assembly
text (no linker needed) and ``format=fatbin`` for the code object (an AMDGPU ELF
``.hsaco``, linked by the ``ld.lld`` that :mod:`linlayout.lowering.linker` finds; for ROCDL ``fatbin``
and ``bin`` give the same ELF).

Results are cached on disk under ``$LINLAYOUT_CACHE/compile`` (default
``~/.cache/linlayout/compile``), one JSON file per sha256 key of (MLIR text, arch,
options, pipeline, linlayout version, MLIR bindings version).  Entries are written to a
temporary file in the same directory and ``os.replace``-d, so a crash never leaves a
partial entry; an unreadable or inconsistent entry is ignored and rebuilt.
``LINLAYOUT_NO_CACHE=1`` or ``cache=False`` bypasses the cache.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from linlayout.hw.targets import get_target, target_names, targets_with
from linlayout.hw.transpose_loads import TRANSPOSE_LOADS

from . import linker
from .mlir import bindings, new_context

__all__ = [
    "CompileError",
    "CompiledKernel",
    "KernelResources",
    "compile_mlir",
    "lowering_pipeline",
    "parse_kernel_resources",
    "SUPPORTED_ARCHS",
    "FEATURE_OPS",
    "WAVE_SIZE_OPS",
]

SUPPORTED_ARCHS = targets_with(emitter="rocdl")  # the targets whose descriptor names this ROCDL lowering
# ROCDL ops whose intrinsics only a target with the named descriptor flag can select (gfx950, gfx1250).
# On any other chip LLVM does not report an error but aborts the whole process ("LLVM ERROR:
# Cannot select: intrinsic ..."), so compile_mlir refuses them up front; an arch without a
# descriptor has none of the flags.  The transpose loads are refused the same way, each by whether
# the target has that load (linlayout.hw.transpose_loads, ``Target.transpose_load``).
FEATURE_OPS = {"rocdl.permlane16.swap": "has_permlane_swap", "rocdl.permlane32.swap": "has_permlane_swap"}
# Of those, the ROCDL ops of one wave size's instructions (op -> lanes): gfx950 and gfx1250 share the
# flag but no permlane32 swap exists in a 32-lane wave, and LLVM aborts on it the same way.
WAVE_SIZE_OPS = {"rocdl.permlane32.swap": 64}
CACHE_FORMAT = "linlayout-compiled/v1"
_ARCH_RE = re.compile(r"^gfx[0-9a-f]{3,4}$")


class CompileError(RuntimeError):
    """The MLIR module did not parse, lower or serialize; the message carries MLIR's diagnostics."""


@dataclass(frozen=True)
class KernelResources:
    """Resource usage of one kernel, from the code object metadata in the ISA text.

    ``sgpr_count`` and ``vgpr_count`` are the metadata's ``.sgpr_count`` / ``.vgpr_count``
    (SGPRs include VCC and other reserved ones); ``lds_bytes`` is
    ``.group_segment_fixed_size`` (static LDS), ``scratch_bytes`` is
    ``.private_segment_fixed_size``.
    """

    name: str
    vgpr_count: int
    sgpr_count: int
    agpr_count: int
    lds_bytes: int
    scratch_bytes: int
    vgpr_spill_count: int
    sgpr_spill_count: int
    wavefront_size: int


@dataclass(frozen=True)
class CompiledKernel:
    """The compiled form of one ``gpu.module`` for one arch.

    ``isa`` is the assembly text (with ``;`` comments, inline-asm markers and the
    ``.amdgpu_metadata`` block), ``binary`` the HSA code object bytes (``b""`` when only the
    ISA was requested), ``kernels`` the per-kernel resources, ``compile_seconds`` the wall
    time of the compile that produced it (also when it comes from the cache, see
    ``from_cache``), and ``cache_key`` the sha256 key of the entry.
    """

    arch: str
    isa: str
    binary: bytes
    kernels: tuple[KernelResources, ...]
    compile_seconds: float
    from_cache: bool = False
    cache_key: str = ""
    options: dict = field(default_factory=dict)

    def kernel(self, name: str | None = None) -> KernelResources:
        """The resources of kernel ``name`` (or of the only kernel when ``name`` is None)."""
        if name is None:
            if len(self.kernels) != 1:
                raise KeyError(f"{len(self.kernels)} kernels in module; name one of {[k.name for k in self.kernels]}")
            return self.kernels[0]
        for k in self.kernels:
            if k.name == name:
                return k
        raise KeyError(f"no kernel {name!r}; kernels are {[k.name for k in self.kernels]}")

    @property
    def vgpr_count(self) -> int:
        """Largest VGPR count over the kernels."""
        return max((k.vgpr_count for k in self.kernels), default=0)

    @property
    def sgpr_count(self) -> int:
        """Largest SGPR count over the kernels."""
        return max((k.sgpr_count for k in self.kernels), default=0)

    @property
    def lds_bytes(self) -> int:
        """Largest static LDS size in bytes over the kernels."""
        return max((k.lds_bytes for k in self.kernels), default=0)


def lowering_pipeline(arch: str) -> str:
    """The pass pipeline from the input module to LLVM dialect (before ``gpu-module-to-binary``)."""
    chipset = arch.split("-", 1)[0]
    return (
        "builtin.module("
        "gpu.module(convert-scf-to-cf,cse,"
        f"convert-gpu-to-rocdl{{chipset={chipset} index-bitwidth=0 runtime=HIP use-bare-ptr-memref-call-conv=true}}),"
        "convert-scf-to-cf,convert-cf-to-llvm,"
        "gpu-to-llvm{use-bare-pointers-for-host=true use-bare-pointers-for-kernels=true},"
        "convert-vector-to-llvm,convert-ub-to-llvm,convert-arith-to-llvm,convert-func-to-llvm,"
        "reconcile-unrealized-casts)"
    )


def _target_attr(arch: str, opt_level: int, abi: str) -> str:
    return f'#rocdl.target<O = {opt_level}, triple = "amdgcn-amd-amdhsa", chip = "{arch}", abi = "{abi}">'


_META_KEYS = {
    "name": "name",
    "vgpr_count": "vgpr_count",
    "sgpr_count": "sgpr_count",
    "agpr_count": "agpr_count",
    "group_segment_fixed_size": "lds_bytes",
    "private_segment_fixed_size": "scratch_bytes",
    "vgpr_spill_count": "vgpr_spill_count",
    "sgpr_spill_count": "sgpr_spill_count",
    "wavefront_size": "wavefront_size",
}


def parse_kernel_resources(isa: str) -> tuple[KernelResources, ...]:
    """Read each kernel's resources from the ``.amdgpu_metadata`` YAML block of ISA text."""
    m = re.search(r"^\s*\.amdgpu_metadata\s*$(.*?)^\s*\.end_amdgpu_metadata", isa, re.M | re.S)
    if not m:
        return ()
    kernels: list[dict] = []
    in_kernels = False
    for line in m.group(1).splitlines():
        if not line.startswith(" "):
            in_kernels = line.startswith("amdhsa.kernels:")
            continue
        if not in_kernels:
            continue
        if line.startswith("  - ."):
            kernels.append({})
            line = "    " + line[4:]
        km = re.match(r"^    \.(\w+):\s+(\S+)\s*$", line)
        if km and kernels and km.group(1) in _META_KEYS:
            kernels[-1][_META_KEYS[km.group(1)]] = km.group(2)
    out = []
    for k in kernels:
        ints = {f: int(k.get(f, 0)) for f in _META_KEYS.values() if f != "name"}
        out.append(KernelResources(name=k.get("name", ""), **ints))
    return tuple(out)


def _linlayout_version() -> str:
    try:
        return version("linlayout")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "source"


def _cache_dir(cache: bool) -> Path | None:
    if not cache or os.environ.get("LINLAYOUT_NO_CACHE", "") not in ("", "0"):
        return None
    return linker.cache_root() / "compile"


def _read_entry(path: Path, key: str, need_binary: bool) -> CompiledKernel | None:
    try:
        with open(path, encoding="utf-8") as f:
            e = json.load(f)
        if e.get("format") != CACHE_FORMAT or e.get("key") != key:
            return None
        binary = base64.b64decode(e["binary_b64"], validate=True) if e.get("binary_b64") else b""
        if hashlib.sha256(binary).hexdigest() != e["binary_sha256"]:
            return None
        if need_binary and not binary:
            return None
        isa = e["isa"]
        if hashlib.sha256(isa.encode()).hexdigest() != e["isa_sha256"]:
            return None
        return CompiledKernel(
            arch=e["arch"],
            isa=isa,
            binary=binary,
            kernels=parse_kernel_resources(isa),
            compile_seconds=float(e["compile_seconds"]),
            from_cache=True,
            cache_key=key,
            options=dict(e.get("options", {})),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _write_entry(path: Path, key: str, ck: CompiledKernel) -> None:
    entry = {
        "format": CACHE_FORMAT,
        "key": key,
        "arch": ck.arch,
        "options": ck.options,
        "compile_seconds": ck.compile_seconds,
        "isa": ck.isa,
        "isa_sha256": hashlib.sha256(ck.isa.encode()).hexdigest(),
        "binary_b64": base64.b64encode(ck.binary).decode("ascii"),
        "binary_sha256": hashlib.sha256(ck.binary).hexdigest(),
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{key[:16]}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(entry, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        pass  # an unwritable cache only costs a recompile next time


def _serialize(lowered: str, fmt: str, toolkit: str) -> bytes:
    """Run ``gpu-module-to-binary{format=fmt}`` on lowered MLIR text; the one object's bytes."""
    b = bindings()
    ctx = new_context()
    with ctx:
        module = b.ir.Module.parse(lowered)
        opts = f"format={fmt}" + (f" toolkit={toolkit}" if toolkit else "")
        b.passmanager.PassManager.parse(f"builtin.module(gpu-module-to-binary{{{opts}}})").run(module.operation)
        objects = [
            b.gpu.ObjectAttr(o).object
            for op in module.body.operations
            if op.operation.name == "gpu.binary"
            for o in op.attributes["objects"]
        ]
    if len(objects) != 1:
        raise CompileError(f"expected one serialized object, got {len(objects)}")
    return objects[0]


def _lower(text: str, arch: str, opt_level: int, abi: str) -> str:
    b = bindings()
    ctx = new_context()
    with ctx:
        module = b.ir.Module.parse(text)
        gpu_modules = [op for op in module.body.operations if op.operation.name == "gpu.module"]
        if len(gpu_modules) != 1:
            raise CompileError(f"expected exactly one gpu.module in the input, found {len(gpu_modules)}")
        target = b.ir.Attribute.parse(_target_attr(arch, opt_level, abi))
        gpu_modules[0].operation.attributes["targets"] = b.ir.ArrayAttr.get([target])
        module.operation.attributes["gpu.container_module"] = b.ir.UnitAttr.get()
        b.passmanager.PassManager.parse(lowering_pipeline(arch)).run(module.operation)
        return module.operation.get_asm(enable_debug_info=False)


def compile_mlir(
    mlir_text: str,
    arch: str,
    *,
    binary: bool = True,
    opt_level: int = 3,
    abi: str = "600",
    cache: bool = True,
) -> CompiledKernel:
    """Compile one ``gpu.module`` in ``mlir_text`` for ``arch`` (e.g. ``"gfx942"``).

    ``binary=False`` skips the linker and returns only the ISA.  ``opt_level`` is LLVM's
    ``-O`` level, ``abi`` the code object version ("600" = v6, flydsl's default).  Raises
    :class:`CompileError` for MLIR errors, :class:`linlayout.lowering.linker.LinkerNotFound` when a
    binary is requested and no ``ld.lld`` exists, ``ValueError`` for a malformed arch.
    """
    if not isinstance(arch, str) or not _ARCH_RE.match(arch):
        raise ValueError(f"arch {arch!r} is not an AMDGPU target name like 'gfx942' (supported: {SUPPORTED_ARCHS})")
    target = get_target(arch) if arch in target_names() else None
    lacking = sorted(op for op, flag in FEATURE_OPS.items() if op in mlir_text and not getattr(target, flag, False))
    if lacking:
        have = ", ".join(targets_with(**{FEATURE_OPS[lacking[0]]: True}))
        raise CompileError(f"{', '.join(lacking)} exist only on {have}, not on {arch}")
    for load in TRANSPOSE_LOADS:
        if load.rocdl in mlir_text and (target is None
                                        or target.transpose_load(load.element_bits, load.bytes_per_lane) != load):
            have = ", ".join(name for name in target_names()
                             if get_target(name).transpose_load(load.element_bits, load.bytes_per_lane) == load)
            raise CompileError(f"{load.rocdl} ({load.name}) exists only on {have}, not on {arch}")
    other_wave = sorted(op for op, lanes in WAVE_SIZE_OPS.items()
                        if op in mlir_text and target is not None and target.wave_size != lanes)
    if other_wave:
        raise CompileError(f"{', '.join(other_wave)} are instructions of {WAVE_SIZE_OPS[other_wave[0]]}-lane waves; "
                           f"{arch} has {target.wave_size}-lane waves")
    b = bindings()
    options = {"opt_level": int(opt_level), "abi": str(abi)}
    key_src = {
        "format": CACHE_FORMAT,
        "mlir": mlir_text,
        "arch": arch,
        "options": options,
        "pipeline": lowering_pipeline(arch),
        "linlayout": _linlayout_version(),
        "bindings": f"{b.source} {b.version}",
    }
    key = hashlib.sha256(json.dumps(key_src, sort_keys=True).encode()).hexdigest()
    cdir = _cache_dir(cache)
    path = cdir / key[:2] / f"{key}.json" if cdir is not None else None
    if path is not None:
        hit = _read_entry(path, key, binary)
        if hit is not None:
            return hit

    toolkit = linker.find_toolkit().path if binary else ""
    t0 = time.perf_counter()
    try:
        lowered = _lower(mlir_text, arch, opt_level, abi)
        isa = _serialize(lowered, "isa", "").decode("utf-8")
        code = _serialize(lowered, "fatbin", toolkit) if binary else b""
    except b.ir.MLIRError as exc:
        raise CompileError(f"compiling for {arch} failed: {exc}") from None
    seconds = time.perf_counter() - t0
    ck = CompiledKernel(
        arch=arch,
        isa=isa,
        binary=code,
        kernels=parse_kernel_resources(isa),
        compile_seconds=seconds,
        cache_key=key,
        options=options,
    )
    if path is not None:
        _write_entry(path, key, ck)
    return ck
