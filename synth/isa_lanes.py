"""The ISA semantics of the cross-lane instructions the wave emulator executes.

Written from the ISA facts of docs/hardware.md section 3 (cross-lane instructions: the
gfx9 DPP_CTRL table, the four ds_swizzle_b32 modes, ds_bpermute_b32's address rule, the
gfx950 permlane swaps, v_perm_b32's byte selectors), of docs/amd_facts.md (RDNA's wave32 DPP16
and DPP8, v_permlane16/x16) and of docs/nvidia_facts.md (PTX
``shfl.sync`` in its four modes, ``prmt``, ``ldmatrix``/``stmatrix``, ``movmatrix``), one function per
instruction.  This
module is the *oracle* conversion plans are verified against (through
:mod:`linlayout.synth.emulator`); it is checked against the MLIR interpreter's independent
transcription (``linlayout.lowering.interp``) on every control value by
``tests/test_isa_lanes.py``.  The planner (:mod:`linlayout.synth.lane_ops` and every other
planning module) never imports it: it derives the lane maps it searches over on its own, so
a plan that passes the emulator is checked against semantics the planner did not use.

A *source-lane table* ``src[n]`` is the lane whose value lane ``n`` reads, -1 where the
instruction gives lane ``n`` no valid source (DPP: then ``bound_ctrl`` decides).  Every
function takes the wave size (``wave_size``: 64 on CDNA, 32 on RDNA and NVIDIA); lane ``n``
of a wave64 has bits ``n[5:0]``, of a wave32 ``n[4:0]``; a DPP *row* is 16 lanes
(``n[5:4]``), a ds_swizzle *half* is 32 lanes (``n[5]``; a wave32 is one half).
"""

from __future__ import annotations

import numpy as np

from linlayout import LayoutError

__all__ = ["bpermute_src_lanes", "dpp8_src_lanes", "dpp_src_lanes", "matrix_row_bytes", "movmatrix_sources",
           "permlane16_src_lanes", "permlane_swap", "prmt_b32", "shfl_sync", "swizzle_src_lanes", "v_perm_b32"]


def dpp_src_lanes(ctrl: int, wave_size: int, family: str = "cdna") -> np.ndarray:
    """Source lane of every lane for the 9-bit ``DPP_CTRL`` ``ctrl`` of gfx9 (``family`` ``cdna``)
    or of RDNA's dpp16 (``family`` ``rdna``); -1 = out of range.

    docs/hardware.md section 3 (DPP_CTRL table, gfx9): ``quad_perm`` 0x000-0x0FF (lane ``n``
    reads lane ``(n & ~3) + ctrl[2(n%4)+1 : 2(n%4)]``); ``row_shl:s`` 0x101-0x10F (``n + s``
    while inside the row); ``row_shr:s`` 0x111-0x11F (``n - s`` while inside the row);
    ``row_ror:s`` 0x121-0x12F (rotate right by ``s`` within the row); ``wave_shl:1`` 0x130,
    ``wave_rol:1`` 0x134, ``wave_shr:1`` 0x138, ``wave_ror:1`` 0x13C; ``row_mirror`` 0x140;
    ``row_half_mirror`` 0x141; ``row_bcast:15`` 0x142 (rows 1-3 read lane 15 of the row
    before); ``row_bcast:31`` 0x143 (lanes 32-63 read lane 31); ``row_newbcast:k``
    0x150-0x15F (lane ``k`` of the row).  Any other value is reserved (a ``LayoutError``).

    RDNA (docs/amd_facts.md, wave32 DPP; LLVM's dpp16_ctrl list): the same quad_perm, row_shl,
    row_shr, row_ror, row_mirror and row_half_mirror; ``row_share:k`` 0x150-0x15F (lane ``k``
    of the row, as row_newbcast) and ``row_xmask:k`` 0x160-0x16F (position ``(n & 15) ^ k`` of
    the row); no wave shifts or rotates and no row_bcast (reserved).
    """
    n = np.arange(wave_size)
    row = n & ~15
    rdna = family == "rdna"
    if rdna and (0x130 <= ctrl <= 0x13F or ctrl in (0x142, 0x143)):
        raise LayoutError(f"DPP control 0x{ctrl:x} is reserved on RDNA")
    if rdna and 0x160 <= ctrl <= 0x16F:  # row_xmask
        return row | ((n & 15) ^ (ctrl - 0x160))
    if 0 <= ctrl <= 0xFF:  # quad_perm
        return (n & ~3) + ((ctrl >> (2 * (n & 3))) & 3)
    if 0x101 <= ctrl <= 0x10F:  # row_shl
        s = ctrl - 0x100
        return np.where((n & 15) < 16 - s, n + s, -1)
    if 0x111 <= ctrl <= 0x11F:  # row_shr
        s = ctrl - 0x110
        return np.where((n & 15) >= s, n - s, -1)
    if 0x121 <= ctrl <= 0x12F:  # row_ror
        s = ctrl - 0x120
        return row | (((n & 15) - s) & 15)
    if ctrl == 0x130:  # wave_shl:1
        return np.where(n < wave_size - 1, n + 1, -1)
    if ctrl == 0x134:  # wave_rol:1
        return (n + 1) % wave_size
    if ctrl == 0x138:  # wave_shr:1
        return np.where(n > 0, n - 1, -1)
    if ctrl == 0x13C:  # wave_ror:1
        return (n - 1) % wave_size
    if ctrl == 0x140:  # row_mirror
        return row | (15 - (n & 15))
    if ctrl == 0x141:  # row_half_mirror
        return (n & ~7) | (7 - (n & 7))
    if ctrl == 0x142:  # row_bcast:15
        return np.where(n > 15, (n & 0x30) - 1, -1)
    if ctrl == 0x143:  # row_bcast:31
        return np.where(n > 31, 31, -1)
    if 0x150 <= ctrl <= 0x15F:  # row_newbcast:k (gfx9), row_share:k (RDNA)
        return row + (ctrl - 0x150)
    raise LayoutError(f"DPP control 0x{ctrl:x} is reserved on {'RDNA' if rdna else 'gfx9'}")


def dpp8_src_lanes(selectors: int, wave_size: int) -> np.ndarray:
    """RDNA ``dpp8:[s0,...,s7]`` (``selectors``: ``s_i`` in bits ``3i+2 : 3i``): lane ``n`` reads lane
    ``(n & ~7) + s[n & 7]`` (docs/amd_facts.md, wave32 DPP); every source is valid."""
    n = np.arange(wave_size)
    return (n & ~7) + ((selectors >> (3 * (n & 7))) & 7)


def permlane16_src_lanes(selector: int, cross: bool, wave_size: int) -> np.ndarray:
    """RDNA ``v_permlane16_b32`` (``cross`` False) / ``v_permlanex16_b32`` (True) with the 64-bit
    lane selector ``selector = {S2, S1}``: lane ``16 r + i`` reads lane ``16 r' + selector[4i+3 : 4i]``
    with ``r' = r`` (permlane16) or ``r ^ 1`` (permlanex16) -- every row the same selector
    (docs/amd_facts.md, v_permlane16/x16; all lanes active)."""
    n = np.arange(wave_size)
    row = (n >> 4) ^ (1 if cross else 0)
    positions = np.array([(selector >> (4 * i)) & 15 for i in range(16)])  # a 64-bit selector: Python ints
    return 16 * row + positions[n & 15]


def swizzle_src_lanes(offset: int, wave_size: int) -> np.ndarray:
    """Source lane of every lane for ``ds_swizzle_b32 offset:<offset>`` (16 bits).

    docs/hardware.md section 3 (ds_swizzle_b32), four modes tested in this order, each keeping
    lane bit 5 (``i = n & 31`` below):

    * FFT, ``offset >= 0xE000``: ``j = reverse5(i) >> popcount(mask) | (i & mask)``,
      ``mask = offset[4:0]``;
    * rotate, ``offset >= 0xC000``: ``j = (i & mask) | ((i + rot) & ~mask)`` within the half,
      ``rot = offset[9:5]``, negated when ``offset[10]`` (rotate right);
    * quad-perm, ``offset[15]``: lane ``4q + t`` reads lane ``4q + offset[2t+1:2t]``;
    * bit-mask: ``j = ((i & and) | or) ^ xor`` with ``and, or, xor = offset[4:0], [9:5], [14:10]``.
    """
    if not 0 <= offset <= 0xFFFF:
        raise LayoutError(f"ds_swizzle offset {offset} is not a 16-bit value")
    n = np.arange(wave_size)
    half = n & 0x20
    i = n & 0x1F
    if offset >= 0xE000:  # FFT
        mask = offset & 0x1F
        rev = np.zeros_like(i)
        for b in range(5):
            rev |= ((i >> b) & 1) << (4 - b)
        return (rev >> bin(mask).count("1")) | (i & mask) | half
    if offset >= 0xC000:  # rotate
        rot = (offset >> 5) & 0x1F
        mask = offset & 0x1F
        if offset & 0x400:
            rot = -rot
        return (i & mask) | ((i + rot) & ~mask & 0x1F) | half
    if offset & 0x8000:  # quad-perm
        sel = np.array([(offset >> (2 * t)) & 3 for t in range(4)])
        return (n & ~3) | sel[n & 3]
    and_m, or_m, xor_m = offset & 0x1F, (offset >> 5) & 0x1F, (offset >> 10) & 0x1F
    return ((((i & and_m) | or_m) ^ xor_m) & 0x1F) | half


def bpermute_src_lanes(addr: np.ndarray, wave_size: int, offset: int = 0) -> np.ndarray:
    """``ds_bpermute_b32``: lane ``n`` reads lane ``((addr[n] + offset) / 4) % wave_size``.

    docs/hardware.md section 3 (ds_bpermute_b32): the address is a 32-bit byte address; its
    low 2 bits and its bits above the lane index are ignored."""
    a = (np.asarray(addr, dtype=np.int64) + int(offset)) & 0xFFFFFFFF
    return (a >> 2) % wave_size


def permlane_swap(kind: str, vdst: np.ndarray, src0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``v_permlane{16,32}_swap_b32 vdst, src0`` on arrays with the lane axis at 1: new (vdst, src0).

    docs/hardware.md section 3 (gfx950 permlane swaps): 32: for lane < 32, ``src0[lane]``
    and ``vdst[lane + 32]`` swap (wave64 only); 16: in each 32-lane half (a wave32 is one),
    ``src0[lane]`` and ``vdst[lane + 16]`` swap for the half's lanes 0-15.  Both registers are
    written.  The wave size is the length of the lane axis."""
    vd, s0 = vdst.copy(), src0.copy()
    wave_size = vdst.shape[1]
    if kind == "permlane32_swap" and wave_size == 64:
        pairs = [(slice(0, 32), slice(32, 64))]
    elif kind == "permlane16_swap":
        pairs = [(slice(h, h + 16), slice(h + 16, h + 32)) for h in range(0, wave_size, 32)]
    else:
        raise LayoutError(f"no permlane swap {kind!r} in a wave of {wave_size} lanes")
    for lo, hi in pairs:
        vd[:, hi] = src0[:, lo]
        s0[:, lo] = vdst[:, hi]
    return vd, s0


def v_perm_b32(s0: np.ndarray, s1: np.ndarray, selector: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``v_perm_b32``: bytes ``[..., 4]`` of S0, S1 and a selector ``[..., 4]`` (one byte per result byte);
    ``out``: the array to write the result into (shares no memory with S0 or S1), else a new one.

    docs/hardware.md section 3 (v_perm_b32): selector byte ``k`` picks choice ``k`` of 0..7
    the bytes of ``{S0, S1}`` (0..3 = S1, 4..7 = S0), 8..11 the sign byte of S1 byte 1,
    S1 byte 3, S0 byte 1, S0 byte 3 (0xFF if the byte is >= 0x80, else 0), 12 the byte 0x00,
    13 and above 0xFF.  A cell above 0xFF is not a byte but a symbolic tag (the emulator's
    element bytes): its sign byte is ``-tag``."""
    if _one_selector(selector):  # one selector for every lane: result byte k is choice sel[k] everywhere
        if out is None:
            alike = s0.shape == s1.shape and s0.dtype == s1.dtype
            out = (np.empty_like(s0) if alike
                   else np.empty(np.broadcast_shapes(s0.shape, s1.shape), dtype=np.result_type(s0, s1)))
        for k, code in enumerate(selector):
            out[..., k] = _perm_choice(s0, s1, min(int(code), 13))
        return out
    sel = np.minimum(np.asarray(selector, dtype=np.int64), 13)
    choices = _perm_choices(s0, s1, bool((sel >= 8).any()))
    res = np.take_along_axis(choices, np.broadcast_to(sel, s0.shape), axis=-1)
    if out is None:
        return res
    out[...] = res
    return out


def _one_selector(selector) -> bool:
    """Is a v_perm_b32 selector one for every lane (its 4 bytes as a flat sequence or a 1-D array)?"""
    if isinstance(selector, np.ndarray):
        return selector.ndim == 1
    return not isinstance(selector[0], (list, tuple, np.ndarray))


def _perm_choice(s0: np.ndarray, s1: np.ndarray, code: int) -> np.ndarray | int:
    """Choice ``code`` (0..13) of ``v_perm_b32`` in every lane (``[...]``; an int for the constants)."""
    if code < 8:
        return (s1 if code < 4 else s0)[..., code & 3]
    if code < 12:
        return _sign_bytes((s1 if code < 10 else s0)[..., 1 + 2 * (code & 1)])
    return 0 if code == 12 else 0xFF


def _sign_bytes(b: np.ndarray) -> np.ndarray:
    """The sign bytes of the bytes ``b``: 0xFF for one >= 0x80, else 0; ``-tag`` for a symbolic tag."""
    return np.where(b > 0xFF, -b, np.where(b >= 0x80, 0xFF, 0))


def _perm_choices(s0: np.ndarray, s1: np.ndarray, constants: bool) -> np.ndarray:
    """The bytes ``[..., 8]`` a v_perm_b32 selector chooses from, or all 14 (``constants``: also the
    four sign bytes, 0x00 and 0xFF) -- choice ``k`` at index ``k``."""
    src = np.concatenate([s1, s0], axis=-1)  # in[0..3] = S1, in[4..7] = S0
    if not constants:
        return src
    sign = _sign_bytes(src[..., 1::2])  # of the bytes 1, 3, 5, 7: choices 8..11
    fixed = np.broadcast_to(np.array([0, 0xFF], dtype=src.dtype), src.shape[:-1] + (2,))
    return np.concatenate([src, sign, fixed], axis=-1)


def shfl_sync(mode: str, b, c: int, wave_size: int) -> tuple[np.ndarray, np.ndarray]:
    """PTX ``shfl.sync.{up,down,bfly,idx}.b32 d|p, a, b, c, 0xffffffff``: ``(j, p)``, lane ``l``'s
    source lane ``j[l]`` (``d[l] = a[j[l]]``) and predicate ``p[l]``, for a whole active warp.

    docs/nvidia_facts.md (shfl.sync), per lane ``l`` with its own ``b`` (``b[l]`` or one value):
    ``bv = b & 31``, ``clamp = c & 31``, ``seg = (c >> 8) & 31`` (the lane bits naming the
    segment), ``hi = (l & seg) | (clamp & ~seg)``, ``lo = l & seg``; ``up``: ``j = l - bv``,
    valid iff ``j >= hi``; ``down``: ``j = l + bv``, valid iff ``j <= hi``; ``bfly``:
    ``j = l ^ bv``, valid iff ``j <= hi``; ``idx``: ``j = lo | (bv & ~seg)``, valid iff
    ``j <= hi``.  An invalid lane reads its own value (``j = l``, ``p = 0``).  With the CUDA
    encodings for a whole warp (``c = 0x1f``; ``c = 0`` for ``up``) ``up``/``down`` leave the
    lanes whose source is outside the warp with their own value, ``bfly`` and ``idx`` always
    read ``l ^ bv`` and ``bv``."""
    if wave_size != 32:
        raise LayoutError(f"shfl.sync needs a warp of 32 lanes, not {wave_size}")
    lane = np.arange(32)
    bv = np.asarray(b, dtype=np.int64) & 31
    clamp, seg = c & 31, (c >> 8) & 31
    hi = (lane & seg) | (clamp & ~seg)
    if mode == "up":
        j = lane - bv
        ok = j >= hi
    elif mode == "down":
        j = lane + bv
        ok = j <= hi
    elif mode == "bfly":
        j = lane ^ bv
        ok = j <= hi
    elif mode == "idx":
        j = (lane & seg) | (bv & ~seg)
        ok = j <= hi
    else:
        raise LayoutError(f"shfl.sync has no mode {mode!r} (up, down, bfly, idx)")
    return np.where(ok, j, lane), ok


def prmt_b32(a: np.ndarray, b: np.ndarray, selector: int) -> np.ndarray:
    """PTX ``prmt.b32 d, a, b, c`` (generic mode) on bytes ``[..., 4]`` of a and b: byte ``i`` of d.

    docs/nvidia_facts.md (prmt): the eight source bytes are ``a`` bytes 0-3 then ``b`` bytes
    0-3 (4-7); nibble ``i`` of the selector ``c[4i+3 : 4i]`` names result byte ``i``: its low 3
    bits the source byte, its bit 3 (sign) replicates bit 7 of that byte into all 8 bits (0xFF
    if the byte is >= 0x80, else 0).  A cell above 0xFF is a symbolic tag (the emulator's element
    bytes): its replicated sign is ``-tag``."""
    src = np.concatenate([a, b], axis=-1)
    out = []
    for i in range(4):
        nib = (selector >> (4 * i)) & 0xF
        byte = src[..., nib & 7]
        if nib & 8:
            byte = np.where(byte > 0xFF, -byte, np.where(byte >= 0x80, 0xFF, 0))
        out.append(byte)
    return np.stack(out, axis=-1)


def matrix_row_bytes(num: int, trans: bool) -> tuple[np.ndarray, np.ndarray]:
    """PTX ``ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16`` (and ``stmatrix``, which stores the
    same fragments): where byte ``k`` of register ``m`` of lane ``t`` lives, as ``(row_lane, row_byte)``
    each ``[32, num, 4]``: byte ``row_byte`` of the 16-byte row whose address lane ``row_lane`` supplies.

    docs/nvidia_facts.md section 3: lane ``8m + r`` (``m < num``) supplies the 16-byte aligned address
    of row ``r`` of matrix ``m`` (8 elements of 16 bits, column ``c`` at bytes ``2c, 2c + 1``); lanes
    from ``8 num`` on supply none.  Register ``m`` of lane ``t`` holds two elements of matrix ``m``, half
    ``h = k >> 1`` (``h = 0``: the low 16 bits): plain, the element (row ``t >> 2``, column
    ``2 (t & 3) + h``); ``.trans``, the element (row ``2 (t & 3) + h``, column ``t >> 2``)."""
    if num not in (1, 2, 4):
        raise LayoutError(f"ldmatrix/stmatrix move 1, 2 or 4 matrices, not {num!r}")
    t = np.arange(32)[:, None, None]
    m = np.arange(num)[None, :, None]
    k = np.arange(4)[None, None, :]
    h = k >> 1
    if trans:
        row, col = 2 * (t & 3) + h, t >> 2
    else:
        row, col = t >> 2, 2 * (t & 3) + h
    row_lane = np.broadcast_to(8 * m + row, (32, num, 4))
    return np.ascontiguousarray(row_lane), np.broadcast_to(2 * col + (k & 1), (32, num, 4)).copy()


def movmatrix_sources() -> tuple[np.ndarray, np.ndarray]:
    """PTX ``movmatrix.sync.aligned.m8n8.trans.b16 d, a``: byte ``k`` of ``d`` in lane ``t`` is byte
    ``src_byte[t, k]`` of ``a`` in lane ``src_lane[t, k]`` (each ``[32, 4]``), for a whole warp.

    docs/nvidia_facts.md section 1: ``a`` holds an 8x8 matrix of 16-bit elements in the plain
    ``ldmatrix`` fragment (lane ``u``, half ``h'``: row ``u >> 2``, column ``2 (u & 3) + h'``); ``d``
    holds its transpose in the same fragment, so lane ``t``, half ``h`` of ``d`` is the element
    (row ``2 (t & 3) + h``, column ``t >> 2``) of ``a``'s matrix: lane ``4 (2 (t & 3) + h) + (t >> 3)``,
    half ``(t >> 2) & 1``."""
    t = np.arange(32)[:, None]
    k = np.arange(4)[None, :]
    h = k >> 1
    src_lane = 4 * (2 * (t & 3) + h) + (t >> 3)
    src_byte = 2 * ((t >> 2) & 1) + (k & 1)
    return np.broadcast_to(src_lane, (32, 4)).copy(), np.broadcast_to(src_byte, (32, 4)).copy()
