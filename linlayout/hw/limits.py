"""Per-target resource limits, checked before any work: registers per lane, LDS bytes per
workgroup, waves per workgroup, and the bytes one kernel buffer can span.

A request beyond a limit cannot be met by any plan, layout or kernel, so the entry points
(``plan_conversion``, ``synthesize``, ``padding_options``, ``tile_access_report``, the kernels'
``build``) call the ``check_*`` functions below first; each violation is one ``LayoutError``
line naming the limit and both numbers.

Facts (evidence in ``docs/hardware.md`` section 7):

* registers per lane: CDNA2-4 (gfx90a, gfx942, gfx950) have a unified file of 512 per lane,
  at most 256 architectural VGPRs and 256 AGPRs (accumulation registers) [Q]; RDNA3/RDNA4
  (gfx11, gfx12) 256 VGPRs, no AGPRs [Q]; gfx1250 1024 VGPRs (two blocks of 512) [Q].
  A layout holding ``E`` elements of ``b`` bits per lane needs ``ceil(E * b / 32)`` registers
  (sub-dword elements packed, 64-bit elements in register pairs).
* threads per workgroup: at most 1024 on every target [Q], so 16 waves of 64 (CDNA) or
  32 waves of 32 (RDNA).
* LDS bytes per workgroup: ``Target.lds_bytes``.  The register and workgroup facts are fields
  of the target descriptors too (``Target.vgprs_per_lane``, ``agprs_per_lane``,
  ``threads_per_workgroup``), so a new target brings its own.
* bytes per kernel buffer: raw buffer offsets are 32-bit, and the kernels give masked lanes
  the offset ``0x80000000`` (``linlayout.lowering.emit.atoms.BUFFER_OOB_OFFSET``), which must
  lie outside every buffer: a buffer spans at most ``2**31`` bytes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping

from ..errors import LayoutError
from ..encodings.padded import PaddedLayout
from ..layout import LinearLayout
from .targets import get_target

__all__ = ["ResourceLimits", "resource_limits", "registers_per_lane", "check_layout", "check_lds_budget",
           "check_conversion", "check_synthesis", "check_tile_access", "check_kernel_buffers", "check_kernel_lds",
           "host_memory_bytes", "INTERPRET_HOST_BYTES_PER_BUFFER_BYTE", "KERNEL_BUFFER_BYTES"]

#: Bytes one kernel buffer may span: the kernels' out-of-range voffset 0x80000000 must lie past it.
KERNEL_BUFFER_BYTES = 1 << 31
# [I] Host bytes the wave interpreter run of a kernel needs per byte of its buffers: the torch
# tensors, the interpreter's copies, the outputs read back, and a float64 reference (8 bytes
# per 4-byte output element, plus its float32 copy).
INTERPRET_HOST_BYTES_PER_BUFFER_BYTE = 8

@dataclass(frozen=True)
class ResourceLimits:
    """What one workgroup of ``target`` can hold.

    ``vgprs_per_lane``/``agprs_per_lane``: architectural and accumulation registers (32 bits
    each) one lane of a wave can address; ``lds_bytes``: LDS one workgroup can allocate;
    ``threads_per_workgroup``: work-items per workgroup; ``kernel_buffer_bytes``: the largest
    buffer an emitted kernel addresses.
    """

    target: str
    wave_size: int
    vgprs_per_lane: int
    agprs_per_lane: int
    lds_bytes: int
    threads_per_workgroup: int
    kernel_buffer_bytes: int
    family: str = "cdna"  # the target's family: its messages use NVIDIA's words (thread, warp) or AMD's

    @property
    def registers_per_lane(self) -> int:
        """32-bit registers a lane can hold data in (VGPRs plus AGPRs)."""
        return self.vgprs_per_lane + self.agprs_per_lane

    @property
    def waves_per_workgroup(self) -> int:
        return self.threads_per_workgroup // self.wave_size

    def describe_registers(self) -> str:
        if self.family == "nvidia":
            return f"{self.target}'s {self.registers_per_lane} registers per thread"
        if self.agprs_per_lane:
            return (f"{self.target}'s {self.registers_per_lane} registers per lane ({self.vgprs_per_lane} VGPRs + "
                    f"{self.agprs_per_lane} AGPRs)")
        return f"{self.target}'s {self.registers_per_lane} VGPRs per lane"

    def describe_lds(self) -> str:
        """``gfx942's 65536 bytes of LDS per workgroup``; shared memory per block on NVIDIA."""
        if self.family == "nvidia":
            return f"{self.target}'s {self.lds_bytes} bytes of shared memory per thread block"
        return f"{self.target}'s {self.lds_bytes} bytes of LDS per workgroup"

    def describe_waves(self) -> str:
        """``the 16 waves of 64 a gfx942 workgroup can hold (1024 threads)``; warps and a block on NVIDIA."""
        if self.family == "nvidia":
            return (f"the {self.waves_per_workgroup} warps of {self.wave_size} a {self.target} thread block can hold "
                    f"({self.threads_per_workgroup} threads)")
        return (f"the {self.waves_per_workgroup} waves of {self.wave_size} a {self.target} workgroup can hold "
                f"({self.threads_per_workgroup} threads)")


def resource_limits(arch: str) -> ResourceLimits:
    """The limits of ``arch`` (a gfx name or an alias such as ``cdna3``)."""
    t = get_target(arch)
    return ResourceLimits(t.name, t.wave_size, t.vgprs_per_lane, t.agprs_per_lane, t.lds_bytes,
                          t.threads_per_workgroup, KERNEL_BUFFER_BYTES, t.family)


def registers_per_lane(elements_per_lane: int, element_bits: int) -> int:
    """32-bit registers holding ``elements_per_lane`` elements of ``element_bits`` bits, packed:
    ``ceil(elements_per_lane * element_bits / 32)``."""
    return -(-elements_per_lane * element_bits // 32)


def check_layout(limits: ResourceLimits, what: str, layout, element_bits: int) -> None:
    """A distributed layout (in dims ``register``, ``lane``, ``warp``...) one workgroup can hold:
    its registers per lane and its warps within ``limits``.  Layouts without those in dims pass."""
    if isinstance(element_bits, bool) or not isinstance(element_bits, int) or element_bits < 1:
        raise LayoutError(f"element_bits {element_bits!r} must be a positive integer")
    if layout.has_in_dim("register"):
        elements = layout.in_dim_size("register")
        need = registers_per_lane(elements, element_bits)
        if need > limits.registers_per_lane:
            raise LayoutError(f"{what} holds {elements} elements of {element_bits} bits per lane: {need} registers, "
                              f"more than {limits.describe_registers()}")
    if layout.has_in_dim("warp"):
        warps = layout.in_dim_size("warp")
        if warps > limits.waves_per_workgroup:
            raise LayoutError(f"{what} has {warps} warps, more than {limits.describe_waves()}")


def check_lds_budget(limits: ResourceLimits, lds_budget_bytes: int | None) -> int:
    """The LDS bytes a tile may occupy at once: ``lds_budget_bytes`` (at most the target's LDS),
    or the target's LDS when it is None."""
    if lds_budget_bytes is None:
        return limits.lds_bytes
    if isinstance(lds_budget_bytes, bool) or not isinstance(lds_budget_bytes, int) or lds_budget_bytes < 1:
        raise LayoutError(f"lds_budget_bytes {lds_budget_bytes!r} must be a positive integer")
    if lds_budget_bytes > limits.lds_bytes:
        raise LayoutError(f"LDS budget {lds_budget_bytes} bytes is more than {limits.describe_lds()}")
    return lds_budget_bytes


def check_conversion(src, dst, arch: str, element_bits: int, lds_budget_bytes: int | None) -> None:
    """``plan_conversion``'s limits: ``src`` and ``dst`` each fit the registers and waves of
    ``arch``, and an LDS budget is at most its LDS.  (A tile larger than the LDS is the
    planner's to split into rounds, or to refuse when no split exists.)"""
    limits = resource_limits(arch)
    for what, layout in (("src", src), ("dst", dst)):
        if isinstance(layout, LinearLayout):  # anything else is refused by the planner's own checks
            check_layout(limits, what, layout, element_bits)
    check_lds_budget(limits, lds_budget_bytes)


def _limits_of(arch) -> ResourceLimits | None:
    """The limits of ``arch``: a target name, or an LDS model of a target (None for a generic
    model, which has no target: ``lds_bytes`` 0)."""
    if isinstance(arch, str):
        return resource_limits(arch)
    return resource_limits(arch.arch) if arch.lds_bytes else None


def check_synthesis(writer, reader, element_bits: int, arch, lds_budget_bytes: int | None) -> int | None:
    """``synthesize``'s limits: writer and reader fit the target's registers and waves; the
    result is the LDS budget the synthesis must meet (the target's LDS when none is given, so
    a tile larger than the LDS moves in rounds).  ``arch``: a target name or an LDS model; a
    generic model has no limits and keeps ``lds_budget_bytes``."""
    limits = _limits_of(arch)
    if limits is None:
        return lds_budget_bytes
    for what, layout in (("writer", writer), ("reader", reader)):
        if isinstance(layout, LinearLayout):  # anything else is refused by synthesize's own checks
            check_layout(limits, what, layout, element_bits)
    return check_lds_budget(limits, lds_budget_bytes)


def check_tile_access(shared, reg_layout, element_bits: int, arch) -> None:
    """``tile_access_report``'s limits: the register layout fits the target's registers and
    waves, and one round of ``shared`` (a LinearLayout, in dim ``reps`` counting rounds, or a
    PaddedLayout: up to its last element) fits its LDS."""
    limits = _limits_of(arch)
    if limits is None:
        return
    if isinstance(reg_layout, LinearLayout):
        check_layout(limits, "register layout", reg_layout, element_bits)
    if isinstance(shared, PaddedLayout):
        elements = shared.footprint
    elif isinstance(shared, LinearLayout):
        reps = shared.in_dim_size("reps") if shared.has_in_dim("reps") else 1
        elements = shared.total_in_size // reps
    else:
        return  # refused by tile_access_report's own checks
    nbytes = -(-elements * element_bits // 8)
    if nbytes > limits.lds_bytes:
        raise LayoutError(f"the shared layout holds {nbytes} bytes per round, more than {limits.describe_lds()}")


def check_kernel_lds(arch: str, lds_bytes: int) -> None:
    """A kernel's LDS allocation (bytes) within one workgroup's LDS."""
    limits = resource_limits(arch)
    if lds_bytes > limits.lds_bytes:
        raise LayoutError(f"the kernel needs {lds_bytes} bytes of LDS, more than {limits.target}'s {limits.lds_bytes} "
                          f"bytes per workgroup")


def host_memory_bytes() -> int:
    """Physical memory of this machine in bytes."""
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def check_kernel_buffers(arch: str, buffer_bytes: Mapping[str, int], *, interpret: bool) -> None:
    """A kernel's buffers (name -> bytes): each within the kernels' addressing, and with
    ``interpret`` all of them within this machine's memory for the wave interpreter
    (``INTERPRET_HOST_BYTES_PER_BUFFER_BYTE`` host bytes per buffer byte)."""
    limits = resource_limits(arch)
    for name, nbytes in buffer_bytes.items():
        if nbytes > limits.kernel_buffer_bytes:
            raise LayoutError(f"buffer {name} needs {nbytes} bytes; the kernels' 32-bit buffer offsets address at "
                              f"most {limits.kernel_buffer_bytes} bytes per buffer")
    if interpret:
        need = INTERPRET_HOST_BYTES_PER_BUFFER_BYTE * sum(buffer_bytes.values())
        have = host_memory_bytes()
        if need > have:
            raise LayoutError(f"--interpret needs about {need} bytes of host memory for buffers of "
                              f"{sum(buffer_bytes.values())} bytes; this machine has {have}")
