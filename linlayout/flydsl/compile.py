"""Compiling FlyDSL kernels without a GPU, and reading what FlyDSL emitted.

FlyDSL's compile-only mode (``COMPILE_ONLY=1 ARCH=<gfx>``) compiles a ``@flyc.jit`` call and
skips the launch; its final link runs ``$ROCM_PATH/llvm/bin/ld.lld``.  :func:`compile_only`
sets that environment for the duration of a ``with`` block, with ``ROCM_PATH`` pointing at
the toolkit directory :func:`linlayout.lowering.linker.find_toolkit` provides (a ROCm install,
an LLD >= 19 on ``PATH``, or the ``ziglang`` wheel's LLD behind a shim ``llvm/bin/ld.lld``), so
the README's install suffices.  With ``dump_dir`` FlyDSL writes every pipeline stage there
(``FLYDSL_DUMP_IR``): one folder per kernel, ``NN_<stage>.mlir`` files, the ISA last.

:func:`compile_kernel` runs a jit function under that environment and returns the dumped
stages: the ISA and the last stage whose kernel is still a ``gpu.func`` (LLVM-dialect values,
kernel arguments as FlyDSL passes them), the input of :func:`linlayout.flydsl.interpret`.
"""

from __future__ import annotations

import io
import os
import re
import sys
import tempfile
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

from linlayout import LayoutError
from linlayout.lowering.linker import find_toolkit

__all__ = ["compile_only", "compile_kernel", "FlyKernel"]

ARCHES = ("gfx942", "gfx950")


@contextmanager
def compile_only(arch: str, dump_dir: str | os.PathLike | None = None):
    """Environment for FlyDSL to compile for ``arch`` without a GPU, linking with linlayout's ld.lld."""
    if arch not in ARCHES:
        raise LayoutError(f"FlyDSL compile-only targets are {', '.join(ARCHES)}; got {arch!r}")
    env = {"COMPILE_ONLY": "1", "ARCH": arch, "ROCM_PATH": find_toolkit().path, "FLYDSL_RUNTIME_ENABLE_CACHE": "0"}
    if dump_dir is not None:
        env.update(FLYDSL_DUMP_IR="1", FLYDSL_DUMP_DIR=str(dump_dir))
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@dataclass(frozen=True)
class FlyKernel:
    """One kernel FlyDSL compiled: ``name``, ``arch``, ``module`` (the last ``gpu.func`` stage's MLIR
    text) and ``isa`` (the final assembly)."""

    name: str
    arch: str
    module: str
    isa: str


def _stages(folder: Path) -> list[Path]:
    return sorted(folder.iterdir(), key=lambda p: int(re.match(r"(\d+)", p.name).group(1)) if p.name[0].isdigit() else -1)


class _DropDumpNotes(io.TextIOBase):
    """Standard output without FlyDSL's ``[flydsl.compile] dump ...`` notes about the (temporary) dump files."""

    def __init__(self, out) -> None:
        self.out = out
        self.line = ""

    def write(self, text: str) -> int:
        self.line += text
        *done, self.line = self.line.split("\n")
        for ln in done:
            if not ln.startswith("[flydsl.compile] "):
                self.out.write(ln + "\n")
        return len(text)

    def flush(self) -> None:
        if self.line and not self.line.startswith("[flydsl.compile] "):
            self.out.write(self.line)
        self.line = ""
        self.out.flush()


def compile_kernel(jit_fn, *args, arch: str, **kwargs) -> list[FlyKernel]:
    """Compile ``jit_fn(*args, **kwargs)`` (a ``@flyc.jit`` function) for ``arch``; its kernels.

    FlyDSL keeps a compiled jit function in memory per argument signature and compiles it only
    the first time; a jit function already called with these argument types is an error here."""
    with tempfile.TemporaryDirectory(prefix="linlayout-flydsl-") as tmp:
        quiet = _DropDumpNotes(sys.stdout)
        with compile_only(arch, tmp), redirect_stdout(quiet):
            jit_fn(*args, **kwargs)
        quiet.flush()
        out = []
        for folder in sorted(Path(tmp).iterdir()):
            stages = _stages(folder)
            isa = [p for p in stages if p.suffix == ".s"]
            mods = [p for p in stages if p.suffix == ".mlir" and re.search(r"gpu\.func @\S+\(.*\bkernel\b",
                                                                            p.read_text())]
            if not isa or not mods:
                raise LayoutError(f"FlyDSL wrote no ISA or no gpu.func stage for kernel {folder.name}")
            text = mods[-1].read_text()
            name = re.search(r"gpu\.func @([\w$.]+)\(", text).group(1)
            out.append(FlyKernel(name, arch, text, isa[-1].read_text()))
    if not out:
        raise LayoutError("FlyDSL compiled no kernel: the function is not a @flyc.jit that launches one, or it was "
                          "already compiled for these argument types in this process (FlyDSL keeps that in memory); "
                          "pass a @flyc.jit function not yet called with them")
    return out
