"""Triton's generic swizzling and bank-conflict model, re-derived for comparison.

This is Triton's algorithm (``lib/Tools/GenericSwizzling.cpp``, described in
docs/triton_facts.md 2.4 and 3.1), written from its
description so that our synthesizer and our hardware model can be compared
with Triton's *choices* and Triton's *numbers*.  It is not used to produce
layouts for users.

Triton works on layouts flattened to one out dim; a vector is a flattened
tensor index (first out dim least significant).  The shared layout it builds
has in dims ``vector`` (one access), ``bank`` (the rest of one
``num_banks x 32``-bit line), ``segment`` (lines) and ``reps`` (rounds).  Its
conflict count for the lanes ``T`` of one phase is

    conflicts(T) = 2 ** dim(span(segment) ∩ span(T)) - 1        (extra wavefronts)

with ``T`` = the first lanes (``num_banks / dwords`` of them) or an explicit
``laneAddr`` index subset (Triton's ``bitwidth`` is ``element_bits`` here).  The
two differences from linlayout.synth.banks: phases are index subsets (the XOR
groups of ``ds_read_b128`` cannot be expressed), and lanes that differ in both a
segment bit and a sub-dword bit are not counted as conflicting.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from linlayout import LayoutError, LinearLayout, f2

from .lds_access import largest_vector_of_offsets

__all__ = [
    "TRITON_B128_LANE_ADDR",
    "as_offset_layout",
    "bank_conflicts_memdesc",
    "lane_tile",
    "optimal_swizzling_ldst",
    "segment_conflicts",
    "shared_byte_addresses",
]

#: Triton's AMD ``getSharedLdStTiles`` for 128-bit *loads* (stores use the default tile).
TRITON_B128_LANE_ADDR = {32: (0, 1, 4), 64: (0, 1, 3, 4)}


def _flat(layout: LinearLayout, dim: str) -> list[int]:
    if not layout.has_in_dim(dim):
        return []
    return list(layout.sublayout([dim], layout.out_dim_names).columns())


def _log2(x: int) -> int:
    return x.bit_length() - 1


def _intersection(b1: Sequence[int], b2: Sequence[int]) -> list[int]:
    """Triton's ``intersectionBasis``: common unit vectors in ``b1``'s order, else the span intersection."""
    if all(x and not x & (x - 1) for x in list(b1) + list(b2)):
        s2 = set(b2)
        return [b for b in b1 if b and b in s2]
    return f2.intersection(list(b1), list(b2))


def lane_tile(lanes: Sequence[int], vec_elems: int, element_bits: int, num_banks: int,
              lane_addr: Sequence[int] = ()) -> list[int]:
    """Triton's ``getLaneTile``: the lane vectors of one phase."""
    log2_vec = _log2(max(1, vec_elems * element_bits // 32))
    log2_phase = max(0, log2_vec + len(lanes) - _log2(num_banks))
    if lane_addr:
        return [lanes[i] for i in lane_addr]
    return list(lanes[: len(lanes) - log2_phase])


def segment_conflicts(segment: Sequence[int], tile: Sequence[int]) -> int:
    """``2 ** dim(span(segment) ∩ span(tile)) - 1``."""
    return (1 << len(_intersection(list(segment), list(tile)))) - 1


def _vec_basis(src: LinearLayout, dst: LinearLayout, element_bits: int) -> tuple[list[int], bool | None]:
    """Triton's ``getVecBasisLdSt``: (vector basis, which side filled the bank)."""
    reg_src, reg_dst = _flat(src, "register"), _flat(dst, "register")
    vb = _intersection(reg_src, reg_dst)
    vb = vb[: _log2(128 // element_bits)]
    src_fills = None
    if (1 << len(vb)) * element_bits < 32:
        per_bank = _log2(32 // element_bits)
        warp_src = [x for x in _flat(src, "warp") if x]
        warp_dst = [x for x in _flat(dst, "warp") if x]
        block_src = _flat(src, "block")
        rs = _intersection([r for r in reg_src if r not in vb], warp_dst)
        rd = _intersection([r for r in reg_dst if r not in vb], warp_src)
        if len(rs) == len(rd) and rs:
            src_fills = min(rs) < min(rd)
            largest = rs if src_fills else rd
        else:
            src_fills = len(rs) > len(rd)
            largest = rs if src_fills else rd
        vb = vb + list(largest)
        if len(vb) < per_bank:
            vb += _intersection(warp_src, warp_dst)
        i = 0
        while len(vb) < per_bank and (i < len(warp_src) or i < len(warp_dst)):
            if i < len(warp_src) and warp_src[i] not in vb:
                vb.append(warp_src[i])
            if len(vb) < per_bank and i < len(warp_dst) and warp_dst[i] not in vb and warp_dst[i] not in block_src:
                vb.append(warp_dst[i])
            i += 1
        vb = vb[:per_bank]
    return vb, src_fills


def _compute_segment(bank_src: list[int], bank_dst: list[int], dim: int, length: int) -> list[int]:
    set_src = {x for x in bank_src if x}
    set_dst = {x for x in bank_dst if x}
    seg = [1 << b for b in range(dim) if (1 << b) not in set_src and (1 << b) not in set_dst]
    if len(seg) >= length:
        return seg[:length]
    a = sorted(x for x in set_src if x not in set_dst)
    b = sorted(x for x in set_dst if x not in set_src)
    if len(a) > len(b):
        a, b = b, a
    k = min(max(0, length - len(a) - len(seg)), len(a))
    seg += [a[i] ^ b[i] for i in range(k, len(a))]
    seg += a[:k] + b[:k]
    return seg[:length]


def _complement(basis: list[int], dim: int) -> list[int]:
    """Unit vectors of the non-pivot columns of ``rref(basis)`` (pivot = lowest set bit)."""
    rows = [x for x in basis if x]
    pivots = set()
    work = list(rows)
    for c in range(dim):
        idx = next((i for i, r in enumerate(work) if (r >> c) & 1 and (r & ((1 << c) - 1)) == 0), None)
        if idx is None:
            continue
        p = work.pop(idx)
        pivots.add(c)
        work = [r ^ p if (r >> c) & 1 else r for r in work]
    return [1 << c for c in range(dim) if c not in pivots]


def optimal_swizzling_ldst(src: LinearLayout, dst: LinearLayout, element_bits: int, num_banks: int = 32,
                           src_lane_addr: Sequence[int] = (), dst_lane_addr: Sequence[int] = ()) -> LinearLayout:
    """Triton's ``optimalSwizzlingLdSt``: shared layout with in dims ``vector, bank, segment, reps``.

    ``src``/``dst``: distributed layouts (register broadcast is removed here).
    ``*_lane_addr``: Triton's ``laneAddr`` tiles (AMD: :data:`TRITON_B128_LANE_ADDR` for
    128-bit loads, i.e. on ``dst`` when the vector is 128 bits).
    """
    outs = src.out_dims
    src = src.remove_zero_bases_along_dim("register") if src.has_in_dim("register") else src
    dst = dst.remove_zero_bases_along_dim("register") if dst.has_in_dim("register") else dst
    dst = dst.transpose_outs([o for o, _ in outs])
    dim = sum(_log2(s) for _, s in outs)
    vb, src_fills = _vec_basis(src, dst, element_bits)
    vec = 1 << len(vb)
    t_src = lane_tile(_flat(src, "lane"), vec, element_bits, num_banks, src_lane_addr)
    t_dst = lane_tile(_flat(dst, "lane"), vec, element_bits, num_banks, dst_lane_addr)
    block = [x for x in _flat(src, "block") if x]
    len_b = min(_log2(num_banks * 32 // (vec * element_bits)), dim - len(vb) - len(block))
    len_s = dim - len_b - len(vb) - len(block)
    seg = _compute_segment(vb + t_src + block, vb + t_dst + block, dim, len_s)
    bank = _complement(vb + seg + block, dim)
    if _log2(max(1, vec * element_bits // 32)) < 2 and num_banks <= 32:
        regs_src, regs_dst = set(_flat(src, "register")), set(_flat(dst, "register"))
        in_src = [i for i, b in enumerate(bank) if b in regs_src]
        in_dst = [i for i, b in enumerate(bank) if b in regs_dst]
        if src_fills is True:
            order = in_src
        elif src_fills is False:
            order = in_dst
        else:
            order = in_src if len(in_src) > len(in_dst) else in_dst
        order = order + [i for i in range(len(bank)) if i not in order]
        bank = [bank[i] for i in order]
    regs_src, regs_dst = set(_flat(src, "register")), set(_flat(dst, "register"))
    reps = [s for s in seg if s in regs_src and s in regs_dst]
    seg = [s for s in seg if s not in reps]

    def unflat(v: int) -> list[int]:
        comps, sh = [], 0
        for _, s in outs:
            comps.append((v >> sh) & (s - 1))
            sh += _log2(s)
        return comps

    return LinearLayout({"vector": [unflat(v) for v in vb], "bank": [unflat(v) for v in bank],
                         "segment": [unflat(v) for v in seg], "reps": [unflat(v) for v in reps]}, outs)


def as_offset_layout(smem: LinearLayout) -> LinearLayout:
    """Triton's ``vector, bank, segment, reps`` smem layout as one in dim ``offset`` (reps on top)."""
    bases = []
    for d in ("vector", "bank", "segment", "reps"):
        if smem.has_in_dim(d):
            bases += smem.bases[d]
    return LinearLayout({"offset": bases}, smem.out_dims)


def _columns(layout: LinearLayout, dim: str, outs: Sequence[str]) -> list[int]:
    """Flattened images of in dim ``dim``'s bits with the out dims in the order ``outs``
    (first least significant)."""
    names = layout.out_dim_names
    if names == list(outs):  # the layout's own flattening (cached)
        start = 0
        for name, size in layout.in_dims:
            k = size.bit_length() - 1
            if name == dim:
                return layout.columns()[start:start + k]
            start += k
        return []
    if not layout.has_in_dim(dim):
        return []
    index, shifts, shift = [], [], 0
    for o in outs:
        index.append(names.index(o))
        shifts.append(shift)
        shift += layout.out_dim_size_log2(o)
    return [sum(b[i] << sh for i, sh in zip(index, shifts)) for b in layout.bases[dim]]


def bank_conflicts_memdesc(reg: LinearLayout, smem: LinearLayout, element_bits: int, num_banks: int = 32,
                           lane_addr: Sequence[int] = ()) -> tuple[int, int]:
    """Triton's ``bankConflictsMemDesc``: ``(extra wavefronts per phase, vector elements)``.

    ``smem``: a shared layout with in dim ``offset``.  Everything is flattened tensor
    coordinates (``smem``'s out-dim order): the offset of each register (broadcast registers
    dropped), lane and warp bit is the solution of ``smem(offset) = reg(bit)``, as in
    :func:`linlayout.synth.lds_access.access_map`.
    """
    if not smem.has_in_dim("offset") or not reg.has_in_dim("lane"):
        raise LayoutError("bank_conflicts_memdesc: the shared layout needs in dim 'offset', the register layout 'lane'")
    outs = smem.out_dim_names
    if sorted(reg.out_dim_names) != sorted(outs):
        raise LayoutError(f"register layout out dims {reg.out_dim_names} differ from the shared layout's {outs}")
    offs = _columns(smem, "offset", outs)
    if f2.rank(offs) != len(offs):
        raise LayoutError("shared layout: two offsets hold the same tensor element (not injective)")
    regs = [c for c in _columns(reg, "register", outs) if c]
    lanes = _columns(reg, "lane", outs)
    solved = f2.solve_many(offs, regs + lanes + _columns(reg, "warp", outs))
    if None in solved:
        raise LayoutError("the register layout holds tensor elements the shared layout does not store")
    v, _ = largest_vector_of_offsets(solved[:len(regs)], solved[len(regs):], element_bits)
    total = smem.in_dim_size("offset")
    bank_size = min(num_banks * 32 // (v * element_bits), total)
    if total < bank_size * v:
        raise LayoutError("Triton's model needs the tile to fill one bank line (segment size 0)")
    seg = offs[_log2(v * bank_size):]
    return segment_conflicts(seg, lane_tile(lanes, v, element_bits, num_banks, lane_addr)), v


def shared_byte_addresses(reg: LinearLayout, smem: LinearLayout, element_bits: int, warp: int = 0) -> np.ndarray:
    """``[registers, lanes]``: the byte address in the LDS buffer of every register (broadcast
    registers dropped) of every lane of wave ``warp`` of the distributed layout ``reg`` under
    Triton's shared layout ``smem`` (:func:`optimal_swizzling_ldst`'s in dims).  Its ``reps`` bases
    are rounds through one buffer (docs/triton_facts.md 2.4), so they take no address bits: the
    address is the element's ``vector, bank, segment`` offset times its bytes."""
    reg = reg.remove_zero_bases_along_dim("register") if reg.has_in_dim("register") else reg
    rounds = smem.in_dim_size("reps") if smem.has_in_dim("reps") else 1
    offsets = reg.invert_and_compose(as_offset_layout(smem))
    registers, lanes = reg.in_dim_size("register"), reg.in_dim_size("lane")
    r, lane = np.meshgrid(np.arange(registers), np.arange(lanes), indexing="ij")
    inputs = {"register": r, "lane": lane, **{d: np.full_like(r, warp if d == "warp" else 0)
                                           for d in reg.in_dim_names if d not in ("register", "lane")}}
    offset = np.asarray(offsets.apply(inputs)["offset"])
    buffer = offsets.out_dim_size("offset") // rounds  # the reps bases are the offset's top bits
    return (offset % buffer) * max(1, element_bits // 8)
