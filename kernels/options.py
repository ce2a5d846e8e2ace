"""The options every kernel takes (``linlayout kernel NAME``), without torch or the lowering.

The ``kernel`` command reads them (:func:`add_common_arguments`) before it imports the named
kernel, so a bad one (``--arch sm_90``) is refused in a fraction of a second, not after torch
has been imported; each kernel's own parser (``linlayout.kernels.common``) adds the same ones.
"""

from __future__ import annotations

import argparse

from linlayout.argparsing import output_folder

__all__ = ["ARCHES", "KERNEL_NAMES", "add_common_arguments"]

#: The targets the kernels are built for.
ARCHES = ("gfx942", "gfx950")
#: The kernel modules of this package that ``linlayout kernel NAME`` runs.
KERNEL_NAMES = ("attention", "convert", "fp8_fp16", "gemm")


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """``--arch``, ``--interpret``, ``--emit DIR``, ``--launch``, ``--seed`` and ``--json``."""
    parser.add_argument("--arch", choices=ARCHES, default="gfx942", help="target (default gfx942)")
    parser.add_argument("--interpret", action="store_true",
                        help="run the emitted MLIR on the wave interpreter and compare with torch")
    parser.add_argument("--emit", metavar="DIR", type=output_folder,
                        help="write the MLIR, ISA and code object (.hsaco) into DIR, an existing folder")
    parser.add_argument("--launch", action="store_true",
                        help="run the code object on a ROCm GPU of --arch (exit 2 where there is none)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    parser.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
