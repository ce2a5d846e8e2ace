"""What every kernel of this package shares: the command line, compiling and writing the
artifacts, the static report, running on the wave interpreter, and launching on a ROCm GPU.

A kernel module provides three functions and calls :func:`main`::

    add_arguments(parser)                    # its own options (sizes, dtype, ...)
    build(args) -> KernelBuild               # the MLIR and the layout decisions behind it
    make_case(kb, args, seed) -> Case        # torch inputs, launch geometry, torch reference

Every kernel takes ``--arch gfx942|gfx950``, ``--interpret`` (run the emitted MLIR on the
wave interpreter and compare with the torch reference), ``--emit DIR`` (write
``<name>.mlir``, ``<name>.s`` and ``<name>.hsaco``), ``--launch`` (run the code object on a
ROCm GPU) and ``--json`` (print one JSON object with at least ``verified``, ``max_abs_err``
and ``fatbin``; docs/contract.md section 5).  ``verified`` is true only when the kernel was run
(interpreter or GPU) and every output matched the reference.  Exit status: 0 done, 1 a run
did not match its reference, 2 bad input (one line on stderr): a bad option, or ``--launch``
where no code object can be launched (no ROCm GPU of ``--arch``, or no linker).

Static report.  The compiled kernel's resources (VGPRs, SGPRs, AGPRs, LDS bytes, scratch)
from the code object metadata, its ISA instruction counts, and the bank-conflict analysis
(``linlayout.synth.banks.analyze``) of every LDS instruction the kernel emits: the builder records
each one (:class:`LdsInstruction`: the op and the element offset of every lane, for every
warp and every variant such as the LDS stage of a double buffer), and the report gives its
cycles (worst warp and variant) next to the ideal (the op's number of lane phases).  The
ISA's ``ds_read*``/``ds_write*`` mnemonics are compared with the recorded ones.

GPU launch.  Needs torch with a ROCm (HIP) device and ``libamdhip64``: the code object is
loaded with ``hipModuleLoadData`` and launched with ``hipModuleLaunchKernel`` (ctypes), on
torch tensors, once the case's launch is checked against the threads the kernel declares
(:func:`launch_on_gpu`).  Without a ROCm GPU, :func:`gpu_status` says why; ``--launch`` is then refused
before anything is built.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import json
import os
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import torch

from linlayout import LayoutError, get_target
from linlayout.argparsing import Parser, error_line
from linlayout.lowering.compile import CompiledKernel, compile_mlir
from linlayout.lowering.interpreter import launch_bounds, run_kernel
from linlayout.lowering.isa import instructions, isa_counts
from linlayout.lowering.linker import LinkerNotFound
from linlayout.synth.banks import analyze

from .options import add_common_arguments

__all__ = ["LdsInstruction", "KernelBuild", "Case", "lds_report", "static_report", "interpret", "gpu_status",
           "kernel_params", "launch_on_gpu", "write_artifacts", "main", "torch_to_numpy", "numpy_to_torch"]


# ---------------------------------------------------------------------- what a kernel builder returns
@dataclass
class LdsInstruction:
    """One LDS instruction of the kernel as emitted.

    ``offsets`` is ``[variants, warps, lanes]`` (``lanes``: the target's ``wave_size``): the element
    offset (into the LDS allocation, in ``element_bits`` elements) of every lane's first element;
    ``variants`` are the address sets one static instruction takes at run time (e.g. the two stages
    of a double buffer).  ``vector`` elements per lane are contiguous.
    """

    what: str
    op: str
    element_bits: int
    vector: int
    offsets: np.ndarray

    def analyse(self, arch: str) -> dict:
        """Bank cycles of this instruction (worst warp and variant) and its ideal."""
        offs = np.asarray(self.offsets, dtype=np.int64)
        lanes = get_target(arch).wave_size
        if offs.ndim != 3 or offs.shape[2] != lanes:
            raise LayoutError(f"{self.what}: offsets must be [variants, warps, {lanes}] on {arch}, got {offs.shape}")
        worst = None
        for v in range(offs.shape[0]):
            for w in range(offs.shape[1]):
                lane = offs[v, w][:, None] + np.arange(self.vector)
                rep = analyze(arch, self.op, lane, element_bits=self.element_bits, method="enumerate")
                if worst is None or rep.cycles > worst.cycles:
                    worst = rep
        return {"what": self.what, "op": self.op, "cycles": int(worst.cycles), "ideal": int(worst.min_cycles),
                "conflict_free": bool(worst.conflict_free), "variants": int(offs.shape[0]),
                "warps": int(offs.shape[1])}


@dataclass
class KernelBuild:
    """An emitted kernel: MLIR text, the LDS instructions it issues, and why it looks so.

    ``decisions`` (JSON-able) records the layout decisions linlayout made (instruction,
    tiles, synthesized swizzles, conversion plans) with their costs.
    """

    name: str
    arch: str
    text: str
    lds: list[LdsInstruction] = field(default_factory=list)
    decisions: dict = field(default_factory=dict)
    emit_seconds: float = 0.0
    regions: tuple[str, ...] = ()  # marked ISA regions (linlayout.lowering.isa markers) to count separately
    extra: dict = field(default_factory=dict)  # builder state make_case needs (not reported)


@dataclass
class Case:
    """One concrete problem: the kernel arguments and the expected outputs.

    ``args`` are torch tensors (buffers; bf16/fp8 as their own dtypes) and Python ints
    (i32 scalars), in kernel parameter order.  ``expected`` maps an argument index to the
    torch reference of that buffer after the run; ``atol``/``rtol`` bound the error.
    ``sizes`` (JSON-able) describes the problem.
    """

    args: list
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    expected: dict[int, torch.Tensor]
    atol: float = 0.0
    rtol: float = 0.0
    sizes: dict = field(default_factory=dict)


# ---------------------------------------------------------------------- tensors <-> interpreter buffers
def torch_to_numpy(t: torch.Tensor) -> np.ndarray:
    """The raw bits of ``t`` as a numpy array (bf16 and fp8 have no numpy dtype: int16 / uint8)."""
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.uint16)
    if t.dtype in (torch.float8_e4m3fn, torch.float8_e4m3fnuz, torch.float8_e5m2, torch.float8_e5m2fnuz):
        return t.view(torch.uint8).numpy()
    return t.numpy()


def numpy_to_torch(a: np.ndarray, like: torch.Tensor) -> torch.Tensor:
    """``a`` (raw bits, as :func:`torch_to_numpy` gives) back as a tensor of ``like``'s dtype and shape."""
    if like.dtype == torch.bfloat16:
        return torch.from_numpy(np.ascontiguousarray(a).view(np.int16)).view(torch.bfloat16).reshape(like.shape)
    if like.dtype in (torch.float8_e4m3fn, torch.float8_e4m3fnuz, torch.float8_e5m2, torch.float8_e5m2fnuz):
        return torch.from_numpy(np.ascontiguousarray(a)).view(like.dtype).reshape(like.shape)
    return torch.from_numpy(np.ascontiguousarray(a)).reshape(like.shape)


def _compare(outs: dict[int, torch.Tensor], case: Case) -> tuple[bool, float, dict]:
    """``(all match, largest |out - ref|, per-output detail)``."""
    ok, worst, detail = True, 0.0, {}
    for i, ref in case.expected.items():
        got = outs[i].to(torch.float64)
        want = ref.to(torch.float64)
        err = (got - want).abs()
        finite = bool(torch.isfinite(got).all())
        m = float(err.max()) if err.numel() else 0.0
        good = finite and bool((err <= case.atol + case.rtol * want.abs()).all())
        ok &= good
        worst = max(worst, m if finite else float("inf"))
        detail[f"arg{i}"] = {"max_abs_err": m if finite else None, "match": good, "elements": int(err.numel())}
    return ok, worst, detail


# ---------------------------------------------------------------------- interpreter
def interpret(kb: KernelBuild, case: Case) -> dict:
    """Run ``kb`` on the wave interpreter with ``case``; compare with the reference."""
    bufs = [torch_to_numpy(a) if isinstance(a, torch.Tensor) else int(a) for a in case.args]
    t0 = time.perf_counter()
    res = run_kernel(kb.text, kb.name, bufs, grid=case.grid, block=case.block, arch=kb.arch)
    secs = time.perf_counter() - t0
    outs = {i: numpy_to_torch(res[i], case.args[i]) for i in case.expected}
    ok, err, detail = _compare(outs, case)
    return {"ran": True, "verified": ok, "max_abs_err": err, "outputs": detail, "seconds": round(secs, 3),
            "grid": list(case.grid), "block": list(case.block), "sizes": case.sizes}


# ---------------------------------------------------------------------- static report
def lds_report(kb: KernelBuild) -> dict:
    """Bank analysis of every recorded LDS instruction, and the ISA's LDS mnemonics next to them."""
    rows = [ins.analyse(kb.arch) for ins in kb.lds]
    return {"instructions": rows, "cycles": sum(r["cycles"] for r in rows),
            "ideal_cycles": sum(r["ideal"] for r in rows), "conflict_free": all(r["conflict_free"] for r in rows)}


def _isa_lds_ops(isa: str) -> dict[str, int]:
    """LDS data instructions of the ISA by mnemonic; a ``ds_read2*``/``ds_write2*`` counts as two of
    its base op and ``*_d16_hi`` as its base op (the way :class:`LdsInstruction` records them)."""
    c: Counter = Counter()
    for line in instructions(isa):
        m = line.split()[0]
        if not m.startswith(("ds_read", "ds_write")) or "addtid" in m:
            continue
        base, n = m.replace("_d16_hi", ""), 1
        for pair in ("2st64_", "2_"):
            if pair in base:
                base, n = base.replace(pair, "_"), 2
        c[base] += n
    return dict(sorted(c.items()))


def static_report(kb: KernelBuild, ck: CompiledKernel) -> dict:
    """Resources of the compiled kernel, its ISA counts and the LDS bank report."""
    k = ck.kernel(kb.name)
    lds = lds_report(kb)
    emitted = dict(sorted(Counter(i.op for i in kb.lds).items()))
    isa_ops = _isa_lds_ops(ck.isa)
    return {
        "vgpr_count": k.vgpr_count, "sgpr_count": k.sgpr_count, "agpr_count": k.agpr_count,
        "lds_bytes": k.lds_bytes, "scratch_bytes": k.scratch_bytes,
        "spills": {"vgpr": k.vgpr_spill_count, "sgpr": k.sgpr_spill_count},
        "isa_counts": isa_counts(ck.isa),
        "region_counts": {r: {k: v for k, v in isa_counts(ck.isa, region=r).items() if v} for r in kb.regions},
        "lds": lds, "lds_ops_emitted": emitted, "lds_ops_isa": isa_ops, "lds_ops_match": emitted == isa_ops,
        "lds_ops_isa_subset": set(isa_ops) <= set(emitted),
        "compile_seconds": round(ck.compile_seconds, 3), "compile_from_cache": ck.from_cache,
    }


# ---------------------------------------------------------------------- artifacts
def write_artifacts(kb: KernelBuild, ck: CompiledKernel, out_dir: str | os.PathLike) -> dict[str, str]:
    """Write ``<name>.mlir``, ``<name>.s`` and (when compiled) ``<name>.hsaco`` (the code object) into
    ``out_dir``, an existing folder (``--emit DIR`` is checked when parsed: ``output_folder``)."""
    d = Path(out_dir)
    try:
        paths = {"mlir": d / f"{kb.name}.mlir", "isa": d / f"{kb.name}.s", "fatbin": d / f"{kb.name}.hsaco"}
        paths["mlir"].write_text(kb.text)
        paths["isa"].write_text(ck.isa)
        if ck.binary:
            paths["fatbin"].write_bytes(ck.binary)
    except OSError as e:
        raise LayoutError(f"cannot write the artifacts to {str(d)!r}: {e}") from None
    return {k: str(v) for k, v in paths.items()}


def _default_dir(kb: KernelBuild) -> Path:
    """The folder of the artifacts without ``--emit``: the kernel's own under the system temp folder
    (created here; a folder the user names must exist)."""
    d = Path(tempfile.gettempdir()) / "linlayout-kernels" / f"{kb.name}-{kb.arch}"
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise LayoutError(f"cannot write the artifacts to {str(d)!r}: {e}") from None
    return d


# ---------------------------------------------------------------------- ROCm GPU launch
def gpu_status(arch: str) -> dict:
    """``{"available": bool, "reason": str, ...}``: can this process launch a code object for ``arch``?"""
    info = {"torch": torch.__version__, "hip": getattr(torch.version, "hip", None)}
    if not info["hip"]:
        return {"available": False, "reason": f"torch {torch.__version__} is not a ROCm build (torch.version.hip is "
                                              f"None): no AMD GPU launch on this machine", **info}
    if not torch.cuda.is_available():
        return {"available": False, "reason": "torch sees no ROCm device (torch.cuda.is_available() is False)", **info}
    dev = torch.cuda.get_device_properties(0)
    name = getattr(dev, "gcnArchName", "")
    info["device"] = name
    if name.split(":")[0] != arch:
        return {"available": False, "reason": f"the GPU is {name}, the kernel was compiled for {arch}", **info}
    if _hip_library() is None:
        return {"available": False, "reason": "libamdhip64 was not found (set ROCM_PATH)", **info}
    return {"available": True, "reason": "", **info}


def _hip_library():
    names = [os.path.join(os.environ.get("ROCM_PATH", "/opt/rocm"), "lib", "libamdhip64.so"),
             "libamdhip64.so", ctypes.util.find_library("amdhip64")]
    for n in names:
        if not n:
            continue
        try:
            return ctypes.CDLL(n)
        except OSError:
            continue
    return None


def _hip_check(lib, err: int, what: str) -> None:
    if err != 0:
        lib.hipGetErrorString.restype = ctypes.c_char_p
        raise RuntimeError(f"{what} failed: HIP error {err} ({lib.hipGetErrorString(err).decode()})")


def kernel_params(args: Sequence) -> tuple[list, ctypes.Array]:
    """``hipModuleLaunchKernel``'s ``kernelParams``: one pointer per kernel argument, to the device
    address of a tensor (8 bytes) or to an i32 scalar.  Returns the value holders too (they must
    outlive the launch)."""
    holders = [ctypes.c_void_p(a.data_ptr()) if isinstance(a, torch.Tensor) else ctypes.c_int32(int(a)) for a in args]
    params = (ctypes.c_void_p * len(holders))(*[ctypes.cast(ctypes.byref(h), ctypes.c_void_p) for h in holders])
    return holders, params


def launch_on_gpu(kb: KernelBuild, ck: CompiledKernel, case: Case) -> dict:
    """Run the code object on the GPU with ``case`` (tensors moved to the device) and compare.  First, on
    the CPU, ``case``'s launch is checked against the sizes the kernel declares (``known_block_size``, which
    LLVM compiles it for: linlayout.lowering.interpreter's ``launch_bounds``, read from the parsed module without
    building the kernel for the interpreter, and checked as the interpreter checks its runs); a launch of other
    threads is an InterpreterError (a LayoutError), never run."""
    launch_bounds(kb.text, kb.name).check(case.grid, case.block)
    status = gpu_status(kb.arch)
    if not status["available"]:
        return {"ran": False, **status}
    lib = _hip_library()
    dev_args = [a.to("cuda") if isinstance(a, torch.Tensor) else int(a) for a in case.args]
    module, func = ctypes.c_void_p(), ctypes.c_void_p()
    image = ctypes.create_string_buffer(ck.binary, len(ck.binary))
    _hip_check(lib, lib.hipModuleLoadData(ctypes.byref(module), image), "hipModuleLoadData")
    try:
        _hip_check(lib, lib.hipModuleGetFunction(ctypes.byref(func), module, kb.name.encode()), "hipModuleGetFunction")
        holders, params = kernel_params(dev_args)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        _hip_check(lib, lib.hipModuleLaunchKernel(func, *[ctypes.c_uint(x) for x in case.grid],
                                                  *[ctypes.c_uint(x) for x in case.block], ctypes.c_uint(0),
                                                  ctypes.c_void_p(0), params, ctypes.c_void_p(0)),
                   "hipModuleLaunchKernel")
        _hip_check(lib, lib.hipDeviceSynchronize(), "hipDeviceSynchronize")
        secs = time.perf_counter() - t0
    finally:
        lib.hipModuleUnload(module)
    outs = {i: dev_args[i].cpu() for i in case.expected}
    ok, err, detail = _compare(outs, case)
    return {"ran": True, "verified": ok, "max_abs_err": err, "outputs": detail, "seconds": round(secs, 6), **status}


# ---------------------------------------------------------------------- command line
def _parser(prog: str, description: str, add_arguments: Callable) -> argparse.ArgumentParser:
    p = Parser(prog=f"linlayout kernel {prog}", description=description)
    add_common_arguments(p)
    add_arguments(p)
    return p


def run(prog: str, args: argparse.Namespace, build: Callable, make_case: Callable) -> dict:
    """Build, compile, report, and (as asked) interpret, write and launch; the JSON result.
    ``--launch`` where nothing can be launched is a ``LayoutError``, raised before the work."""
    if args.launch:
        status = gpu_status(args.arch)
        if not status["available"]:
            raise LayoutError(f"--launch: {status['reason']}")
    t0 = time.perf_counter()
    kb = build(args)
    kb.emit_seconds = time.perf_counter() - t0
    try:
        ck = compile_mlir(kb.text, kb.arch, binary=True)
        no_binary = ""
    except LinkerNotFound as e:  # the ISA needs no linker; the code object does
        if args.launch:
            raise LayoutError(f"--launch needs a code object: {e}") from None
        ck = compile_mlir(kb.text, kb.arch, binary=False)
        no_binary = f"no code object: {e}"
    out_dir = args.emit or _default_dir(kb)
    paths = write_artifacts(kb, ck, out_dir)
    if no_binary:
        paths["fatbin"] = None
    result: dict[str, Any] = {"kernel": prog, "name": kb.name, "arch": kb.arch, "verified": False,
                              "max_abs_err": None, "fatbin": paths["fatbin"], "artifacts": paths,
                              **({"fatbin_missing": no_binary} if no_binary else {}),
                              "emit_seconds": round(kb.emit_seconds, 3), "decisions": kb.decisions,
                              "static": static_report(kb, ck)}
    case = make_case(kb, args, args.seed) if (args.interpret or args.launch) else None
    if args.interpret:
        result["interpret"] = interpret(kb, case)
    else:
        result["interpret"] = {"ran": False, "reason": "run with --interpret to execute on the wave interpreter"}
    if args.launch:
        result["launch"] = launch_on_gpu(kb, ck, case)
    else:
        result["launch"] = {"ran": False, **gpu_status(kb.arch)}
    runs = [r for r in (result["interpret"], result["launch"]) if r.get("ran")]
    if runs:
        result["verified"] = all(r["verified"] for r in runs)
        result["max_abs_err"] = max(r["max_abs_err"] for r in runs)
    return result


def render(result: dict) -> str:
    """The human-readable report."""
    st = result["static"]
    named = result["kernel"] if result["name"] == result["kernel"] else f"{result['kernel']} ({result['name']})"
    lines = [f"{named} for {result['arch']}"]
    for k, v in result["decisions"].items():
        lines.append(f"  {k}: {v if not isinstance(v, (dict, list)) else json.dumps(v)}")
    lines.append(f"static: {st['vgpr_count']} VGPRs, {st['agpr_count']} AGPRs, {st['sgpr_count']} SGPRs, "
                 f"{st['lds_bytes']} LDS bytes, {st['scratch_bytes']} scratch bytes, "
                 f"{st['isa_counts']['total']} instructions (mfma {st['isa_counts']['mfma']}, "
                 f"vmem {st['isa_counts']['vmem']}), compiled in {st['compile_seconds']} s")
    for r, c in st["region_counts"].items():
        lines.append(f"  region {r}: {c}")
    for r in st["lds"]["instructions"]:
        lines.append(f"  LDS {r['op']:<16} {r['cycles']:>3} cycles (ideal {r['ideal']})"
                     f"{'' if r['conflict_free'] else '  CONFLICTS'}  {r['what']}")
    if st["lds"]["instructions"]:
        same = ("match" if st["lds_ops_match"] else "are the emitted kinds (counts differ: loop unrolling)"
                if st["lds_ops_isa_subset"] else "DIFFER from the emitted ones")
        lines.append(f"  LDS total {st['lds']['cycles']} cycles vs {st['lds']['ideal_cycles']} ideal; ISA LDS ops "
                     f"{st['lds_ops_isa']} {same}")
    it = result["interpret"]
    if it.get("ran"):
        lines.append(f"interpreter: {'verified' if it['verified'] else 'MISMATCH'}, max |err| {it['max_abs_err']:.3g} "
                     f"({it['seconds']} s, grid {it['grid']}, sizes {it['sizes']})")
    else:
        lines.append(f"interpreter: not run ({it['reason']})")
    la = result["launch"]
    lines.append(f"GPU launch: {'verified' if la.get('verified') else 'ran' if la.get('ran') else 'unavailable'}"
                 f"{'' if la.get('ran') else ' - ' + la['reason']}")
    lines.append(f"artifacts: {result['artifacts']}")
    return "\n".join(lines)


def main(prog: str, description: str, add_arguments: Callable, build: Callable, make_case: Callable,
         argv: Sequence[str] | None = None) -> int:
    """The ``linlayout kernel <prog>`` (and ``python -m linlayout.kernels.<prog>``) entry point; exit 0 when nothing failed, 1 when a run did
    not verify, 2 on bad input."""
    try:
        args = _parser(prog, description, add_arguments).parse_args(argv)
        result = run(prog, args, build, make_case)
    except LayoutError as e:
        print(error_line(e, f"kernel {prog}"), file=sys.stderr)
        return 2
    print(json.dumps(result) if args.json else render(result))
    ran = result["interpret"].get("ran") or result["launch"].get("ran")
    return 0 if (not ran or result["verified"]) else 1
