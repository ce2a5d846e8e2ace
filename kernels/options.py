"""The options every kernel takes (``linlayout kernel NAME``), without torch or the lowering.

The ``kernel`` command reads them (:func:`add_common_arguments`) before it imports the named
kernel, so a bad one (``--arch sm_90``) is refused in a fraction of a second, not after torch
has been imported; each kernel's own parser (``linlayout.kernels.common``) adds the same ones.
"""

from __future__ import annotations

import argparse

__all__ = ["ARCHES", "KERNEL_NAMES", "add_common_arguments"]

#: The targets the kernels are built for.
ARCHES = ("gfx942", "gfx950")
#: The kernel modules of this package that ``linlayout kernel NAME`` runs.
KERNEL_NAMES = ("attention", "convert", "fp8_fp16", "gemm")


def add_common_arguments(p: argparse.ArgumentParser) -> None:
    """``--arch``, ``--interpret``, ``--emit DIR``, ``--launch``, ``--seed`` and ``--json``."""
    p.add_argument("--arch", choices=ARCHES, default="gfx942", help="target (default gfx942)")
    p.add_argument("--interpret", action="store_true",
                   help="run the emitted MLIR on the wave interpreter and compare with torch")
    p.add_argument("--emit", metavar="DIR", help="write the MLIR, ISA and code object (.hsaco) into DIR")
    p.add_argument("--launch", action="store_true",
                   help="run the code object on a ROCm GPU of --arch (exit 2 where there is none)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
