"""Compilers for a plan's C++ output: ``nvcc`` for CUDA (to PTX), a HIP-capable clang for HIP (to AMDGPU ISA).

:func:`compile_cuda` runs ``nvcc -arch=<arch> -ptx -O3`` and returns the PTX text;
:func:`compile_hip` runs ``clang -x hip --offload-arch=<arch> --cuda-device-only -nogpuinc
-nogpulib -O3 -S`` and returns the ISA text.  Both define ``LINLAYOUT_MARK_REGIONS`` when
``mark`` (the default), so the plan's instructions lie between the region markers, and make every
warning an error when ``strict`` (nvcc ``-Werror all-warnings``, clang ``-Wall -Werror``).  The HIP
clang is ``$LINLAYOUT_HIP_CLANG`` when set, else a ``clang`` on ``PATH`` that compiles HIP for
the amdgcn target, else the clang inside the ``ziglang`` package (``python -m ziglang clang``).
A missing compiler is :class:`ToolchainNotFound`; a failed compile is :class:`CppCompileError`
with the compiler's message.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from linlayout import caches

from .source import MARK_MACRO, CppSource

__all__ = ["CppCompileError", "ToolchainNotFound", "compile_cuda", "compile_hip", "find_hip_clang", "find_nvcc"]

_PROBE = 'extern "C" __attribute__((global)) void probe(unsigned* p) { p[0] = __builtin_amdgcn_ds_swizzle(p[0], 0); }\n'


class ToolchainNotFound(RuntimeError):
    """No compiler for the dialect on this machine."""


class CppCompileError(RuntimeError):
    """The compiler rejected the source (the message holds its output)."""


def find_nvcc() -> str | None:
    """The ``nvcc`` on ``PATH`` (or under ``$CUDA_HOME/bin``, ``/usr/local/cuda/bin``), or None."""
    found = shutil.which("nvcc")
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if root and Path(root, "bin", "nvcc").is_file():
            return str(Path(root, "bin", "nvcc"))
    return None


def _hip_flags(arch: str) -> list[str]:
    return ["-x", "hip", f"--offload-arch={arch}", "--cuda-device-only", "-nogpuinc", "-nogpulib", "-O3", "-S"]


@caches.memoize("lowering.cpp.hip_clang", size=1)  # 1: no arguments (the probe compiles; linlayout.caches.clear forgets it)
def find_hip_clang() -> tuple[str, ...] | None:
    """The command of a clang that compiles HIP for gfx942 (see the module docstring), or None."""
    candidates = []
    if os.environ.get("LINLAYOUT_HIP_CLANG"):
        candidates.append((os.environ["LINLAYOUT_HIP_CLANG"],))
    if shutil.which("clang"):
        candidates.append((shutil.which("clang"),))
    candidates.append((sys.executable, "-m", "ziglang", "clang"))
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp, "probe.hip")
        src.write_text(_PROBE)
        for cmd in candidates:
            try:
                r = subprocess.run([*cmd, *_hip_flags("gfx942"), str(src), "-o", str(Path(tmp, "probe.s"))],
                                   capture_output=True, text=True, timeout=120)
            except (OSError, subprocess.TimeoutExpired):
                continue
            if r.returncode == 0 and "ds_swizzle_b32" in Path(tmp, "probe.s").read_text():
                return tuple(cmd)
    return None


def _run(name: str, cmd: list[str], source: str, suffix: str, out_suffix: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp, "conv" + suffix), Path(tmp, "conv" + out_suffix)
        src.write_text(source)
        r = subprocess.run([*cmd, str(src), "-o", str(out)], capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise CppCompileError(f"{name} failed ({r.returncode}):\n{r.stderr.strip()}")
        return out.read_text()


def _text(source: CppSource | str) -> str:
    return source.source if isinstance(source, CppSource) else source


def compile_cuda(source: CppSource | str, arch: str, mark: bool = True, strict: bool = False) -> str:
    """The PTX of CUDA ``source`` for ``arch`` (``sm_80``, ``sm_90``); ``strict``: warnings are errors."""
    nvcc = find_nvcc()
    if nvcc is None:
        raise ToolchainNotFound("no nvcc found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)")
    flags = [nvcc, f"-arch={arch}", "-ptx", "-O3"] + ([f"-D{MARK_MACRO}"] if mark else [])
    flags += ["-Werror", "all-warnings"] if strict else []
    return _run("nvcc", flags, _text(source), ".cu", ".ptx")


def compile_hip(source: CppSource | str, arch: str, mark: bool = True, strict: bool = False) -> str:
    """The AMDGPU ISA of HIP ``source`` for ``arch`` (``gfx942``, ``gfx950``, ...); ``strict``: warnings are
    errors."""
    clang = find_hip_clang()
    if clang is None:
        raise ToolchainNotFound("no HIP-capable clang found ($LINLAYOUT_HIP_CLANG, clang on PATH, "
                                "python -m ziglang clang)")
    flags = [*clang, *_hip_flags(arch)] + ([f"-D{MARK_MACRO}"] if mark else [])
    flags += ["-Wall", "-Werror"] if strict else []
    return _run("clang", flags, _text(source), ".hip", ".s")
