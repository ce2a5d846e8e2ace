"""Element types of the kernels: bit width, torch dtype per arch, MFMA operand type name.

fp8 is E4M3 in the arch's encoding (the one its fp8 MFMAs and ``v_cvt_pk_fp8_f32`` use):
gfx942 ``float8_e4m3fnuz`` (bias 8, one NaN, no -0), gfx950 the OCP ``float8_e4m3fn``.
Kernels move elements as raw bits (``i16``/``i8`` storage types in MLIR) and bitcast only
where an instruction needs the float type.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from linlayout import LayoutError

__all__ = ["DTYPES", "DtypeInfo", "dtype_info", "random_values"]

DTYPES = ("f16", "bf16", "fp8", "f32")


@dataclass(frozen=True)
class DtypeInfo:
    """``name``, ``bits``, the torch dtype on the arch, the MLIR storage integer type and the
    MFMA catalog's operand type name (``None`` for f32)."""

    name: str
    bits: int
    torch_dtype: torch.dtype
    storage: str
    mfma_type: str | None

    @property
    def bytes(self) -> int:
        return self.bits // 8


def dtype_info(name: str, arch: str) -> DtypeInfo:
    """The :class:`DtypeInfo` of ``name`` (one of :data:`DTYPES`) on ``arch``."""
    if name == "f16":
        return DtypeInfo("f16", 16, torch.float16, "i16", "f16")
    if name == "bf16":
        return DtypeInfo("bf16", 16, torch.bfloat16, "i16", "bf16")
    if name == "fp8":
        dt = torch.float8_e4m3fnuz if arch == "gfx942" else torch.float8_e4m3fn
        return DtypeInfo("fp8", 8, dt, "i8", "fp8")
    if name == "f32":
        return DtypeInfo("f32", 32, torch.float32, "i32", None)
    raise LayoutError(f"dtype {name!r} is not one of {', '.join(DTYPES)}")


def random_values(shape, name: str, arch: str, seed: int, scale: float = 1.0) -> torch.Tensor:
    """Normal random values times ``scale``, rounded to the dtype (a fixed ``seed``)."""
    g = torch.Generator().manual_seed(int(seed))
    x = torch.randn(tuple(int(s) for s in shape), generator=g, dtype=torch.float32) * scale
    return x.to(dtype_info(name, arch).torch_dtype)
