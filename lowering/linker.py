"""Finding an ``ld.lld`` for MLIR's ``gpu-module-to-binary`` on AMDGPU.

The ROCDL serializer links the relocatable object it generates into an HSA code object by
running ``<toolkit>/llvm/bin/ld.lld -shared in.o -o out.hsaco``, where ``<toolkit>`` is the
pass's ``toolkit=`` option (default ``$ROCM_PATH``).  :func:`find_toolkit` returns such a
toolkit directory, trying in order:

1. ``$LINLAYOUT_LD_LLD`` (an explicit path to an ``ld.lld``);
2. ``$ROCM_PATH/llvm/bin/ld.lld``, then ``/opt/rocm/llvm/bin/ld.lld`` (a ROCm install);
3. an ``ld.lld`` / ``ld.lld-NN`` on ``PATH`` of LLVM 19 or newer (the LLVM inside flydsl
   writes code object v6, which older lld rejects with "unknown abi version"; Debian 12's
   default ``lld`` package is lld 14 and fails, ``lld-19`` works);
4. the ``ziglang`` wheel (``pip install 'ziglang>=0.14'``; 0.14 ships LLVM 19, 0.17.1 ships
   lld 22) through a two-line shell shim ``exec python -m ziglang ld.lld "$@"``.

For 3 and 4 the toolkit is a private directory under the cache
(``$LINLAYOUT_CACHE/toolkit/<name>``) holding ``llvm/bin/ld.lld`` as a symlink or shim.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from linlayout import caches

__all__ = ["LinkerNotFound", "Toolkit", "find_toolkit", "cache_root", "MIN_LLD_MAJOR", "INSTALL_HINT"]

MIN_LLD_MAJOR = 19
INSTALL_HINT = (
    "install one with `pip install 'ziglang>=0.14'` (recommended, any OS), or "
    "`apt-get install -y lld-19` (Debian/Ubuntu), or set ROCM_PATH to a ROCm install, or "
    "LINLAYOUT_LD_LLD to an ld.lld of LLVM >= 19"
)


class LinkerNotFound(RuntimeError):
    """No ``ld.lld`` usable for AMDGPU code objects was found."""


@dataclass(frozen=True)
class Toolkit:
    """A directory ``path`` with ``llvm/bin/ld.lld`` inside; ``origin`` says where that came from."""

    path: str
    origin: str

    @property
    def ld_lld(self) -> str:
        """The ``ld.lld`` that ``gpu-module-to-binary`` will run."""
        return os.path.join(self.path, "llvm", "bin", "ld.lld")


def cache_root() -> Path:
    """The project's cache directory: ``$LINLAYOUT_CACHE`` or ``~/.cache/linlayout``."""
    env = os.environ.get("LINLAYOUT_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "linlayout"


def _lld_major(cmd: str | list[str]) -> int | None:
    argv = [cmd] if isinstance(cmd, str) else list(cmd)
    try:
        out = subprocess.run([*argv, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"LLD (\d+)\.", out.stdout + out.stderr)
    return int(m.group(1)) if m else None


def _path_candidates() -> list[str]:
    found: list[str] = []
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if not d:
            continue
        names = sorted(glob.glob(os.path.join(d, "ld.lld-[0-9]*")), reverse=True)
        names.append(os.path.join(d, "ld.lld"))
        found += [n for n in names if os.path.isfile(n) and os.access(n, os.X_OK)]
    return found


def _rocm_candidates() -> list[str]:
    return [r for r in (os.environ.get("ROCM_PATH"), "/opt/rocm") if r]


def _ziglang_available() -> bool:
    return importlib.util.find_spec("ziglang") is not None


def _install(dirname: str, make) -> str:
    """Create ``<cache>/toolkit/<dirname>/llvm/bin/ld.lld`` with ``make(tmp_path)``, atomically."""
    root = cache_root() / "toolkit" / dirname
    bindir = root / "llvm" / "bin"
    bindir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=bindir, prefix=".ld.lld.")
    os.close(fd)
    os.unlink(tmp)
    make(tmp)
    os.replace(tmp, bindir / "ld.lld")
    return str(root)


def _symlink_toolkit(exe: str, major: int) -> str:
    real = os.path.realpath(exe)
    tag = re.sub(r"[^A-Za-z0-9]+", "_", real).strip("_")
    return _install(f"lld{major}-{tag}", lambda tmp: os.symlink(real, tmp))


def _zig_toolkit() -> str:
    def make(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(f'#!/bin/sh\nexec "{sys.executable}" -m ziglang ld.lld "$@"\n')
        os.chmod(tmp, 0o755)

    tag = re.sub(r"[^A-Za-z0-9]+", "_", sys.executable).strip("_")
    return _install(f"ziglang-{tag}", make)


@caches.memoize("lowering.linker.toolkit", size=1)  # 1: no arguments
def find_toolkit() -> Toolkit:
    """The toolkit directory to pass as ``gpu-module-to-binary{toolkit=...}``.

    Raises :class:`LinkerNotFound` with install instructions when nothing usable exists.
    Cached for the process; the filesystem work happens once.
    """
    rejected: list[str] = []
    explicit = os.environ.get("LINLAYOUT_LD_LLD")
    if explicit:
        if not (os.path.isfile(explicit) and os.access(explicit, os.X_OK)):
            raise LinkerNotFound(f"LINLAYOUT_LD_LLD={explicit!r} is not an executable file")
        return Toolkit(_symlink_toolkit(explicit, _lld_major(explicit) or 0), f"LINLAYOUT_LD_LLD={explicit}")
    for root in _rocm_candidates():
        if os.access(os.path.join(root, "llvm", "bin", "ld.lld"), os.X_OK):
            return Toolkit(root, f"ROCm at {root}")
    for exe in _path_candidates():
        major = _lld_major(exe)
        if major is not None and major >= MIN_LLD_MAJOR:
            return Toolkit(_symlink_toolkit(exe, major), f"{exe} (LLD {major})")
        rejected.append(f"{exe} (LLD {major}, need >= {MIN_LLD_MAJOR})")
    if _ziglang_available():
        major = _lld_major([sys.executable, "-m", "ziglang", "ld.lld"])
        if major is not None and major >= MIN_LLD_MAJOR:
            return Toolkit(_zig_toolkit(), f"ziglang wheel (LLD {major}) via {sys.executable} -m ziglang ld.lld")
        rejected.append(f"ziglang wheel (LLD {major}, need >= {MIN_LLD_MAJOR}: pip install -U 'ziglang>=0.14')")
    seen = f" Rejected: {', '.join(rejected)}." if rejected else ""
    raise LinkerNotFound(f"no ld.lld for AMDGPU code objects found.{seen} To fix, {INSTALL_HINT}.")


def which_ld_lld() -> str | None:
    """The resolved ``ld.lld`` path, or None when there is none (never raises)."""
    try:
        return find_toolkit().ld_lld
    except LinkerNotFound:
        return None

