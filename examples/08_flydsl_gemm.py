"""Rung 8: a FlyDSL GEMM whose LDS layout linlayout synthesizes.

linlayout.flydsl.gemm stages A (16 x 64 f16) through LDS: each K block is written by a tiled
copy (8 bytes a lane) and read back as the MFMA's A operand (8 bytes a lane).  linlayout
synthesizes the shared layout for these two access patterns (bank cycles at the lower bound)
and the kernel hands it to FlyDSL as the composed layout ``S<B,M,S> o 0 o L`` that
linlayout.flydsl.to_flydsl builds.  Without a GPU, the kernel is compiled for both arches and
run on the wave interpreter; the LDS image FlyDSL wrote is compared with linlayout's shared
layout, C with torch.
"""

import numpy as np
import torch

from linlayout.flydsl import interpret
from linlayout.flydsl.gemm import gemm_kernel, shared_layout
from linlayout.flydsl_text import to_flydsl_text

torch.manual_seed(0)
a, b = torch.randn(16, 64).half(), torch.randn(16, 64).half()

for arch in ("gfx942", "gfx950"):
    res, full = shared_layout(arch)
    print(f"=== {arch}: {res.write_op} + {res.read_op}, {res.total_cycles} cycles, "
          f"lower bound {res.lower_bound_cycles}, certified {res.certified}")
    print(f"  FlyDSL layout: {to_flydsl_text(full)}")
    c, image = torch.zeros(16, 16), torch.zeros(1024).half()
    interpret(gemm_kernel(arch), a, b, c, image, arch=arch)   # compiled by FlyDSL, run on the interpreter
    coords = full.apply({"offset": np.arange(1024)})
    same = torch.equal(image, a[torch.from_numpy(np.asarray(coords["dim0"])), torch.from_numpy(np.asarray(coords["dim1"]))])
    err = (c - a.float() @ b.float().T).abs().max().item()
    print(f"  LDS as written equals linlayout's layout: {same}; interpreter vs torch: max |err| {err:.2g}, "
          f"verified {err < 1e-2}")
