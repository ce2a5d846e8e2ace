"""MFMA: ``rocdl.mfma.*`` and ``rocdl.mfma.scale.*.f8f6f4`` through the instruction catalog.

For one wave, the A, B and C register values are gathered into matrices with the catalog's
layouts (``linlayout.hw.mfma.mfma_layouts``: ``(register item, lane) -> ([block,] row, col)``),
``D = A @ B + C`` is computed per block in float64 (int64 for i8) and rounded once to the
accumulator type (wrapped to 32 bits for i32), then scattered back with the C layout.
Operand bits are read from the operand value's register bytes: item e of a lane is bits
``[e*w, (e+1)*w)`` of its value (w = the element width: 4, 6, 8, 16, 32 or 64).

Modifiers (docs/amd_facts.md 3.5): CBSZ/ABID broadcast A blocks (lane l reads A from lane
``l % S + S*ABID``, ``S = 64 >> CBSZ``); BLGP permutes B lanes (0: l, 1: l%32, 2: l%32+32,
3: (l+16)%64, 4..7: l%16 + 16*(BLGP-4)).  f64 MFMAs (BLGP = negate bits) and xf32 (TF32
arithmetic) are refused rather than guessed.

fp8/bf8 encodings: gfx942 uses the FNUZ formats, gfx950 the OCP ones
(``InterpOptions.fp8_style_gfx942/gfx950``); the gfx950 F8F6F4 instructions always use OCP
formats chosen by the ``cbsz``/``blgp`` format attributes, and the scaled forms multiply
A[i, k] by 2**(scaleA byte - 127) of row i, K-block k // 32 (B likewise), the byte picked by
``opselA``/``opselB`` from the lane's 32-bit scale operand.
"""

from __future__ import annotations

import re
import numpy as np

from linlayout import caches
from linlayout.errors import LayoutError
from linlayout.hw.mfma import MFMA_ARCHES, get_instruction, instructions_for, mfma_layouts, mfma_scale_layouts

from .floats import FORMATS, decode_bits
from .registry import OpInfo, lanes, register, signed
from .types import bytes_to_items, normalize, to_bytes

WAVE = 64
#: BLGP lane map of B: lane l reads B from lane BLGP_MAP[blgp](l).
BLGP_MAP = {
    0: lambda l: l, 1: lambda l: l % 32, 2: lambda l: l % 32 + 32, 3: lambda l: (l + 16) % 64,
    4: lambda l: l % 16, 5: lambda l: l % 16 + 16, 6: lambda l: l % 16 + 32, 7: lambda l: l % 16 + 48,
}
_PERM_B = ["none", "bcast_first_32", "bcast_second_32", "rotate_16_right", "bcast_first_16", "bcast_second_16",
           "bcast_third_16", "bcast_fourth_16"]
#: F8F6F4 matrix format attribute -> catalog format name.
_MATRIX_FORMATS = {"fp8_e4m3": "fp8", "fp8_e5m2": "bf8", "fp6_e2m3": "fp6", "fp6_e3m2": "bf6", "fp4_e2m1": "fp4"}
_OCP = {"fp8": "f8E4M3FN", "bf8": "f8E5M2", "fp6": "f6E2M3FN", "bf6": "f6E3M2FN", "fp4": "f4E2M1FN"}
_FNUZ = {"fp8": "f8E4M3FNUZ", "bf8": "f8E5M2FNUZ"}


def _enum_attr(op: OpInfo, name: str) -> str:
    m = re.search(r"\s(\w+)>$", str(op.attr(name)))
    return m.group(1) if m else str(op.attr(name))


@caches.memoize("lowering.interp.mfma_tables", table=True)
def _tables(ins) -> dict:
    """Per operand: index arrays (block, row, col) of shape (64, items) from the catalog."""
    out = {}
    layouts = mfma_layouts(ins)
    for opnd in "ABC":
        ll = layouts[opnd]
        n = ll.in_dim_size("register")
        e, l = np.meshgrid(np.arange(n), np.arange(WAVE), indexing="xy")  # (64, n)
        coords = ll.apply({"register": e, "lane": l})
        blk = coords.get("block", np.zeros_like(e))
        out[opnd] = (blk, coords["dim0"], coords["dim1"])
    if ins.scaled:
        for opnd, ll in mfma_scale_layouts(ins).items():
            l = np.arange(WAVE)
            coords = ll.apply({"register": np.zeros_like(l), "lane": l})
            out[opnd] = (coords["dim0"], coords["dim1"])
    return out


def _items(x: np.ndarray, t, count: int, bits: int) -> np.ndarray:
    """The first ``count`` items of ``bits`` bits of each lane's value: (L, count) uint64."""
    return bytes_to_items(to_bytes(x, t), count, bits)


def _decoder(type_name: str, fp8_style: str):
    if type_name == "f64":
        return lambda u: u.view(np.float64)
    if type_name in ("f16", "bf16", "f32"):
        return lambda u: decode_bits(u, FORMATS[type_name])
    if type_name == "i8":
        return lambda u: signed(u, 8)
    if type_name in ("fp8", "bf8", "fp6", "bf6", "fp4"):
        fmt = FORMATS[(_FNUZ if fp8_style == "fnuz" else _OCP)[type_name]]
        return lambda u: decode_bits(u, fmt)
    raise ValueError(f"MFMA input type {type_name} is not modelled")


def _all_rocdl_names() -> list:
    names = set()
    for arch in MFMA_ARCHES:
        names.update(i.rocdl for i in instructions_for(arch))
    return sorted(names)


def _is_constant_zero(value) -> bool:
    """True when ``value`` is defined by ``arith.constant 0`` in the kernel text."""
    owner = getattr(value, "owner", None)
    if getattr(owner, "name", None) != "arith.constant":
        return False
    attr = owner.attributes["value"]
    try:
        return int(attr.value) == 0
    except (AttributeError, TypeError, ValueError):
        return False


@register(*_all_rocdl_names())
def _mfma(op: OpInfo):
    try:
        ins = get_instruction(op.arch, op.name)
    except LayoutError as exc:
        raise op.error(str(exc)) from None
    if ins.a_type == "xf32":
        raise op.error("xf32 (TF32) MFMAs are not modelled")
    scaled = ins.scaled
    # The unscaled F8F6F4 MFMAs are the scale intrinsic with constant-zero scale
    # operands, which LLVM selects as the unscaled instruction (scale 1): execute
    # what compiles, not 2**-127.
    apply_scales = scaled and not (_is_constant_zero(op.op.operands[3]) and _is_constant_zero(op.op.operands[4]))
    if scaled:
        fa, fb = _enum_attr(op, "cbsz"), _enum_attr(op, "blgp")
        if fa not in _MATRIX_FORMATS or fb not in _MATRIX_FORMATS:
            raise op.error(f"unknown matrix formats {fa}/{fb}")
        ins = ins.with_formats(_MATRIX_FORMATS[fa], _MATRIX_FORMATS[fb])
        cbsz = abid = blgp = 0
        opsel = (op.int_attr("opselA"), op.int_attr("opselB"))
        if not all(0 <= s <= 3 for s in opsel):
            raise op.error(f"opsel {opsel} out of range 0..3")
    else:
        cbsz, abid = op.int_attr("cbsz"), op.int_attr("abid")
        b = _enum_attr(op, "blgp")
        blgp = _PERM_B.index(b) if b in _PERM_B else op.int_attr("blgp")
        if ins.a_type == "f64" and (cbsz or abid or blgp):
            raise op.error("f64 MFMA modifiers (negate bits) are not modelled")
        if (cbsz or abid) and not ins.supports_cbsz_abid:
            raise op.error(f"{ins.name} does not support CBSZ/ABID")
        if cbsz > 4 or abid >= (1 << cbsz) or (1 << cbsz) > ins.blocks:
            if cbsz or abid:
                raise op.error(f"invalid CBSZ {cbsz} / ABID {abid} for {ins.blocks} blocks")
        if blgp and not ins.supports_blgp:
            raise op.error(f"{ins.name} does not support BLGP")
    tables = _tables(ins)
    na, nb, nc = (ins.items_per_lane(x) for x in "ABC")
    a_s, b_s, c_s = op.operands[:3]
    ta, tb, tc = op.operand_types[:3]
    t_out = op.result_types[0]
    r = op.results[0]
    is_int = ins.c_type == "i32"
    S = WAVE >> cbsz
    lane = np.arange(WAVE)
    a_map = (lane % S) + S * abid
    b_map = BLGP_MAP[blgp](lane)
    M, N, K, Bk = ins.m, ins.n, ins.k, ins.blocks

    def step(ctx):
        W = ctx.waves
        live = ctx.active().reshape(W, WAVE)
        if (live.any(axis=1) & ~live.all(axis=1)).any():
            raise op.error("MFMA under a partial EXEC mask is not modelled")
        style = ctx.opts.fp8_style(ctx.arch) if not scaled else "ocp"
        dec_a, dec_b = _decoder(ins.a_type, style), _decoder(ins.b_type, style)
        try:
            ia = dec_a(_items(lanes(ctx.vals[a_s], ctx.T), ta, na, ins.a_bits)).reshape(W, WAVE, na)[:, a_map]
            ib = dec_b(_items(lanes(ctx.vals[b_s], ctx.T), tb, nb, ins.b_bits)).reshape(W, WAVE, nb)[:, b_map]
        except ValueError as exc:
            raise op.error(str(exc)) from None
        cval = lanes(ctx.vals[c_s], ctx.T).reshape(W, WAVE, nc)
        dt = np.int64 if is_int else np.float64
        A = np.zeros((W, Bk, M, K), dt)
        B = np.zeros((W, Bk, K, N), dt)
        C = np.zeros((W, Bk, M, N), dt)
        blk, i, k = tables["A"]
        A[:, blk, i, k] = ia
        blk, k, j = tables["B"]
        B[:, blk, k, j] = ib
        blk, i, j = tables["C"]
        C[:, blk, i, j] = signed(cval, 32) if is_int else cval.astype(np.float64)
        if apply_scales:
            for name, mat, slot, sel in (("A_scale", A, op.operands[3], opsel[0]), ("B_scale", B, op.operands[4], opsel[1])):
                sc = (lanes(ctx.vals[slot], ctx.T).astype(np.uint64).reshape(W, WAVE) >> np.uint64(8 * sel)) & np.uint64(0xFF)
                val = decode_bits(sc, FORMATS["f8E8M0FNU"])
                d0, d1 = tables[name]
                grid = np.zeros((W,) + ((M, K // 32) if name == "A_scale" else (K // 32, N)))
                grid[:, d0, d1] = val
                if name == "A_scale":
                    mat *= np.repeat(grid, 32, axis=2)[:, None]
                else:
                    mat *= np.repeat(grid, 32, axis=1)[:, None]
        with np.errstate(all="ignore"):
            D = np.einsum("wbmk,wbkn->wbmn", A, B) + C
        blk, i, j = tables["C"]
        items = D[:, blk, i, j].reshape(ctx.T, nc)
        if is_int:
            items = items.astype(np.uint64)
        ctx.vals[r] = normalize(items.reshape((ctx.T,) + tuple(getattr(t_out, "shape", (nc,)))), t_out)

    return step
