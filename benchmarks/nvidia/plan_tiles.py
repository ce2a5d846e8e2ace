"""The tiles a conversion kernel is checked on, computed on the host from the two layouts.

A distributed layout ``L`` (in dims ``register, lane, warp``; out dims the tensor's, ``dim0``
outermost) puts at register ``r`` of lane ``l`` of warp ``w`` the element ``L(r, l, w)``.
Its *slot tile* is the array ``[warps, 32, registers]`` of those elements' row-major indices
``sum_d x_d * stride_d`` (stride of the last dim 1).  A conversion ``src -> dst`` is correct
exactly when, for source slots filled with each element's value, every destination slot
``(w, l, r)`` holds the value of element ``dst(r, l, w)`` -- duplicated (broadcast) slots
included.

Values: an element's index has ``index_bits = log2(numel)`` bits, more than an 8-bit element
holds, so a tile is checked on ``planes`` copies: plane ``p < ceil(index_bits / element_bits)``
holds bits ``[p * element_bits, (p + 1) * element_bits)`` of the index, and one last plane a
hash of it (so that no bit of an element is constant over the tile).  A pure data movement that
is right on every plane moves every element to its place.
"""

from __future__ import annotations

import numpy as np

from linlayout import LayoutError, LinearLayout

__all__ = ["WARP", "element_dtype", "plane_count", "plane_values", "slot_indices", "slot_tiles", "tensor_tiles"]

WARP = 32
_DTYPES = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def element_dtype(element_bits: int):
    """The unsigned numpy type of an ``element_bits``-bit element (8, 16, 32 or 64)."""
    if element_bits not in _DTYPES:
        raise LayoutError(f"element_bits {element_bits}: the GPU check takes 8, 16, 32 or 64")
    return _DTYPES[element_bits]


def _strides(layout: LinearLayout) -> list[int]:
    sizes = [size for _, size in layout.out_dims]
    return [int(np.prod(sizes[d + 1:], dtype=np.int64)) for d in range(len(sizes))]


def slot_indices(layout: LinearLayout, num_warps: int) -> np.ndarray:
    """``[num_warps, 32, registers]``: the row-major index of the element in each slot."""
    if layout.in_dim_size("lane") != WARP:
        raise LayoutError(f"the layout has {layout.in_dim_size('lane')} lanes, an NVIDIA warp {WARP}")
    warps = layout.in_dim_size("warp") if layout.has_in_dim("warp") else 1
    if warps != num_warps:
        raise LayoutError(f"the layout has {warps} warps, the kernel {num_warps}")
    regs = layout.in_dim_size("register")
    inputs = {"register": np.arange(regs)[None, None, :], "lane": np.arange(WARP)[None, :, None]}
    if layout.has_in_dim("warp"):
        inputs["warp"] = np.arange(num_warps)[:, None, None]
    coords = layout.apply(inputs)
    index = sum(coords[name] * stride for (name, _), stride in zip(layout.out_dims, _strides(layout)))
    return np.broadcast_to(index, (num_warps, WARP, regs)).astype(np.int64)


def plane_count(numel: int, element_bits: int) -> int:
    """Index planes (enough to spell every index) plus one hashed plane."""
    index_bits = max(1, (numel - 1).bit_length())
    return -(-index_bits // element_bits) + 1


def _hash32(index: np.ndarray) -> np.ndarray:
    """A 32-bit hash of each (non-negative, below 2**31) index, as uint64."""
    hashed = (index.astype(np.uint64) * np.uint64(2654435761) + np.uint64(0x9E3779B9)) & np.uint64(0xFFFFFFFF)
    return hashed ^ (hashed >> np.uint64(13))


def plane_values(index: np.ndarray, element_bits: int, planes: int) -> np.ndarray:
    """``[planes, *index.shape]`` element values (see the module docstring; a 64-bit element's
    hashed plane is two 32-bit hashes, of the index and of the index XOR 0x5A5A5A5A)."""
    mask = np.uint64((1 << element_bits) - 1)
    unsigned = index.astype(np.uint64)
    out = [(unsigned >> np.uint64(p * element_bits)) & mask for p in range(planes - 1)]
    hashed = _hash32(index)
    if element_bits == 64:
        hashed |= _hash32(index ^ 0x5A5A5A5A) << np.uint64(32)
    out.append(hashed & mask)
    return np.stack(out).astype(element_dtype(element_bits))


def slot_tiles(src: LinearLayout, dst: LinearLayout, element_bits: int, num_warps: int) -> tuple[np.ndarray, np.ndarray]:
    """(source slots, expected destination slots), each ``[planes, warps, 32, registers]``."""
    numel = src.total_out_size
    if numel != dst.total_out_size:
        raise LayoutError(f"the layouts cover different tensors: {src.out_dims} vs {dst.out_dims}")
    planes = plane_count(numel, element_bits)
    return (plane_values(slot_indices(src, num_warps), element_bits, planes),
            plane_values(slot_indices(dst, num_warps), element_bits, planes))


def tensor_tiles(layout: LinearLayout, element_bits: int) -> np.ndarray:
    """``[planes, numel]``: the same planes as a row-major tensor (the Triton kernel's input)."""
    numel = layout.total_out_size
    return plane_values(np.arange(numel, dtype=np.int64), element_bits, plane_count(numel, element_bits))
