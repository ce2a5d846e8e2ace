"""Host side of a conversion kernel: test tiles, the expected output, the plan emulator's
output, and a run on the wave interpreter.

A tile is a numpy array of unsigned integers of the element width (``uint8/16/32/64``),
row-major over the kernel's ``shape``; values are bit patterns (the conversion moves bits).
"""

from __future__ import annotations

import numpy as np

from linlayout import LayoutError
from linlayout.lowering.interp import load_kernel
from linlayout.synth.emulator import checked_slots, run_isa
from linlayout.synth.plan import Plan, dwords_per_slot, slots_per_dword

from .conversion_kernel import ConversionKernel, element_coords

__all__ = ["UINT", "distinct_tile", "expected_output", "emulated_output", "interpret"]

UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _dtype(element_bits: int) -> type:
    try:
        return UINT[element_bits]
    except KeyError:
        raise LayoutError(f"element width {element_bits} is not one of {sorted(UINT)}") from None


def distinct_tile(shape: tuple[int, ...], element_bits: int, seed: int = 0) -> np.ndarray:
    """A tile whose elements are pairwise distinct where the width allows (a bijective scramble of the index)."""
    n = int(np.prod(shape))
    idx = np.arange(n, dtype=np.uint64)
    mask = (1 << element_bits) - 1 if element_bits < 64 else (1 << 64) - 1
    v = (idx * np.uint64(0x9E3779B1) + np.uint64(seed * 7919 + 1)) & np.uint64(mask)
    return v.astype(_dtype(element_bits)).reshape(shape)


def _dst_coords(plan: Plan, shape: tuple[int, ...]) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    c = element_coords(plan.dst, plan.num_warps, plan.slots_out, plan.wave_size)
    coords = tuple(c[name] for name, _ in plan.dst.out_dims)
    inside = np.ones(coords[0].shape, dtype=bool)
    for x, n in zip(coords, shape):
        inside &= x < n
    return coords, inside


def expected_output(plan: Plan, tile: np.ndarray, fill: int = 0) -> np.ndarray:
    """The output buffer after the kernel: ``tile`` where the dst layout holds an element, ``fill`` elsewhere."""
    out = np.full(tile.shape, fill, dtype=tile.dtype)
    coords, inside = _dst_coords(plan, tile.shape)
    sel = tuple(x[inside] for x in coords)
    out[sel] = tile[sel]
    return out


def emulated_output(plan: Plan, tile: np.ndarray, fill: int = 0) -> np.ndarray:
    """The output buffer when the plan's steps run on the wave emulator (linlayout.synth.emulator.run_isa).

    The source registers are loaded from ``tile`` (0 outside the tensor, as a buffer load
    reads); the destination registers are written back where the dst layout points, from the slots the kernel
    stores (linlayout.synth.emulator.checked_slots: of a dst read in one copy, ``Plan.dst_one_copy``, the
    canonical lanes alone; of a dst held one element per VGPR, ``Plan.dst_unpacked``, each VGPR's low slot).
    """
    eb = plan.element_bits
    nbytes = max(1, eb // 8)
    c = element_coords(plan.src, plan.num_warps, plan.slots_in, plan.wave_size)
    coords = tuple(c[name] for name, _ in plan.src.out_dims)
    inside = np.ones(coords[0].shape, dtype=bool)
    for x, n in zip(coords, tile.shape):
        inside &= x < n
    vals = np.zeros(coords[0].shape, dtype=np.uint64)
    vals[inside] = tile[tuple(x[inside] for x in coords)].astype(np.uint64)
    init = np.stack([((vals >> np.uint64(8 * k)) & np.uint64(0xFF)).astype(np.int64) for k in range(nbytes)], axis=-1)
    regs = run_isa(plan, init=init)  # [dwords, W, wave_size, 4] byte cells
    p, dps = slots_per_dword(eb), dwords_per_slot(eb)
    got = np.zeros((plan.num_warps, plan.wave_size, plan.slots_out), dtype=np.uint64)
    stored = np.broadcast_to(checked_slots(plan), got.shape)  # (the slots the kernel stores)
    for s in range(plan.slots_out):
        if not stored[..., s].any():
            continue
        if dps == 2:
            cells = [(2 * s + h, b) for h in range(2) for b in range(4)]
        else:
            cells = [(s // p, (s % p) * nbytes + b) for b in range(nbytes)]
        for k, (d, b) in enumerate(cells):
            byte = np.where(stored[:, :, s], regs[d, :, :, b], 0)
            if (byte < 0).any() or (byte > 255).any():
                raise LayoutError(f"the emulator left slot {s} with undefined bytes")
            got[:, :, s] |= byte.astype(np.uint64) << np.uint64(8 * k)
    out = np.full(tile.shape, fill, dtype=tile.dtype)
    dcoords, dinside = _dst_coords(plan, tile.shape)
    dinside = dinside & stored
    out[tuple(x[dinside] for x in dcoords)] = got[dinside].astype(tile.dtype)
    return out


def interpret(kernel: ConversionKernel, tile: np.ndarray, fill: int = 0, options=None) -> np.ndarray:
    """Run ``kernel`` on the wave interpreter (linlayout.lowering.interp) with ``tile`` as input; the output buffer."""
    if tuple(tile.shape) != kernel.shape:
        raise LayoutError(f"tile shape {tile.shape} is not the kernel's {kernel.shape}")
    out = np.full(tile.shape, fill, dtype=tile.dtype)
    k = load_kernel(kernel.text, kernel.name, kernel.arch)
    res = k.run([np.ascontiguousarray(tile), out], grid=(1, 1, 1), block=kernel.block, options=options)
    return res[1]
