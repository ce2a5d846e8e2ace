"""The register layouts of an MFMA tiling: operands A and B and the accumulator of a workgroup
tile, built from the instruction's layouts (``linlayout.hw.mfma.mfma_layouts``) and a K order.

A workgroup computes a ``BM x BN`` tile of ``C = A B`` (A is ``BM x BK``, B is ``BK x BN``)
with ``WM x WN`` warps; each warp holds ``TM x TN`` instruction tiles of the single-block
MFMA ``ins`` (``M x N x K``), and a K block of ``BK = G * K`` takes ``G`` MFMAs per tile.
Warp ``w = wn + WN * wm`` (the low warp bits go along N).

**K order.**  ``C[m, n] = sum_k A[m, k] B[k, n]`` does not care in which order the k are
summed, so the instruction's internal K index ``kk`` (the ``dim1`` of its A layout, ``dim0``
of its B layout) and the group ``g`` may map to the tile's K coordinate by any bijection
``phi(g, kk)`` -- as long as A and B use the same one.  The tiling assigns the tile's K bits
(1, 2, 4, ...) to, in order: the instruction's register K bits, ``c`` group bits (``log2 c``
of them), the instruction's lane K bits, the remaining group bits.  So every lane holds
``c * ipl`` consecutive tile-k values (``ipl`` = items per lane of the instruction): ``c = 1``
is Triton's ``kWidth = ipl``; ``c = 2`` its doubled kWidth (two MFMAs per 128-bit load).

**Register index.**  Operand item ``e`` of the MFMA of group ``g`` and tile ``t`` is
register ``e + ipl * (g + G * t)`` (``t`` = ``tm`` for A, ``tn`` for B); accumulator item
``e`` of tile ``(tm, tn)`` is register ``e + ipl_C * (tn + TN * tm)``.  So
:meth:`MfmaTiling.operand_registers` / :meth:`acc_registers` are contiguous ranges.

Layouts are ``register, lane, warp -> dim0, dim1`` (docs/contract.md section 1; ``dim0`` = rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from linlayout import LayoutError, LinearLayout
from linlayout.hw.mfma import MfmaInstruction, mfma_layouts

__all__ = ["MfmaTiling"]


def _log2(x: int, what: str) -> int:
    if x < 1 or x & (x - 1):
        raise LayoutError(f"{what} = {x} must be a power of two")
    return x.bit_length() - 1


@dataclass(frozen=True)
class MfmaTiling:
    """``ins`` tiled ``tiles = (TM, TN)`` per warp, ``warps = (WM, WN)``, K block ``bk``, K-order factor ``c``."""

    ins: MfmaInstruction
    warps: tuple[int, int] = (1, 1)
    tiles: tuple[int, int] = (1, 1)
    bk: int = 0
    c: int = 1

    def __post_init__(self) -> None:
        if self.ins.blocks != 1:
            raise LayoutError(f"{self.ins.name}: only single-block MFMAs tile a workgroup here")
        bk = self.bk or self.ins.k
        object.__setattr__(self, "bk", bk)
        for what, v in (("WM", self.warps[0]), ("WN", self.warps[1]), ("TM", self.tiles[0]), ("TN", self.tiles[1]),
                         ("c", self.c)):
            _log2(v, what)
        if bk % self.ins.k or _log2(bk // self.ins.k, "BK / K") < _log2(self.c, "c"):
            raise LayoutError(f"BK = {bk} must be a power-of-two multiple of K = {self.ins.k} with at least c = "
                              f"{self.c} MFMAs")

    # ------------------------------------------------------------------ sizes
    @property
    def groups(self) -> int:
        """MFMAs along K per K block (G)."""
        return self.bk // self.ins.k

    @property
    def block_m(self) -> int:
        return self.ins.m * self.tiles[0] * self.warps[0]

    @property
    def block_n(self) -> int:
        return self.ins.n * self.tiles[1] * self.warps[1]

    @property
    def num_warps(self) -> int:
        return self.warps[0] * self.warps[1]

    def items(self, operand: str) -> int:
        """Items per lane of one MFMA's ``A``, ``B`` or ``C``."""
        return self.ins.items_per_lane(operand)

    # ------------------------------------------------------------------ K order
    @cached_property
    def _instr(self) -> dict:
        return mfma_layouts(self.ins)

    @cached_property
    def k_order(self) -> tuple[dict[int, int], list[int]]:
        """``(phi_kk, phi_g)``: the tile k of each instruction k bit (``{kk: k}``) and of each group bit."""
        A = self._instr["A"]
        reg_kk = [v[1] for v in A.bases["register"]]
        lane_kk = [v[1] for v in A.bases["lane"] if v[1]]
        if any(v[0] for v in A.bases["register"]) or any(kk & (kk - 1) for kk in reg_kk + lane_kk):
            raise LayoutError(f"{self.ins.name}: A's registers must hold single K bits only")
        nc, ng = _log2(self.c, "c"), _log2(self.groups, "G")
        order = [("kk", kk) for kk in reg_kk] + [("g", j) for j in range(nc)] + \
                [("kk", kk) for kk in lane_kk] + [("g", j) for j in range(nc, ng)]
        phi_kk = {kk: 1 << p for p, (kind, kk) in enumerate(order) if kind == "kk"}
        phi_g = [0] * ng
        for p, (kind, j) in enumerate(order):
            if kind == "g":
                phi_g[j] = 1 << p
        return phi_kk, phi_g

    def phi(self, g: int, kk: int) -> int:
        """Tile k of internal ``kk`` in the MFMA of group ``g`` (a GF(2)-linear bijection)."""
        phi_kk, phi_g = self.k_order
        k = 0
        for bit, img in phi_kk.items():
            if kk & bit:
                k ^= img
        for j, img in enumerate(phi_g):
            if (g >> j) & 1:
                k ^= img
        return k

    # ------------------------------------------------------------------ layouts
    def operand(self, operand: str) -> LinearLayout:
        """The layout of operand ``A`` (``BM x BK``) or ``B`` (``BK x BN``) over the workgroup."""
        if operand not in ("A", "B"):
            raise LayoutError(f"operand must be 'A' or 'B', got {operand!r}")
        L = self._instr[operand]
        a = operand == "A"
        _, phi_g = self.k_order

        def img(v):  # instruction image -> tile image, K through phi
            return [v[0], self.phi(0, v[1])] if a else [self.phi(0, v[0]), v[1]]

        tm, tn = self.tiles
        wm, wn = self.warps
        t_bits = _log2(tm if a else tn, "tiles")
        regs = [img(v) for v in L.bases["register"]]
        regs += [[0, k] if a else [k, 0] for k in phi_g]
        regs += [[self.ins.m << i, 0] if a else [0, self.ins.n << i] for i in range(t_bits)]
        lanes = [img(v) for v in L.bases["lane"]]
        warps = [[0, 0] if a else [0, self.ins.n * tn << i] for i in range(_log2(wn, "WN"))]
        warps += [[self.ins.m * tm << i, 0] if a else [0, 0] for i in range(_log2(wm, "WM"))]
        outs = [("dim0", self.block_m), ("dim1", self.bk)] if a else [("dim0", self.bk), ("dim1", self.block_n)]
        return LinearLayout({"register": regs, "lane": lanes, "warp": warps}, outs)

    def acc(self) -> LinearLayout:
        """The accumulator layout (``BM x BN``) over the workgroup."""
        L = self._instr["C"]
        tm, tn = self.tiles
        wm, wn = self.warps
        regs = [list(v) for v in L.bases["register"]]
        regs += [[0, self.ins.n << i] for i in range(_log2(tn, "TN"))]
        regs += [[self.ins.m << i, 0] for i in range(_log2(tm, "TM"))]
        warps = [[0, self.ins.n * tn << i] for i in range(_log2(wn, "WN"))]
        warps += [[self.ins.m * tm << i, 0] for i in range(_log2(wm, "WM"))]
        return LinearLayout({"register": regs, "lane": [list(v) for v in L.bases["lane"]], "warp": warps},
                            [("dim0", self.block_m), ("dim1", self.block_n)])

    # ------------------------------------------------------------------ registers of one MFMA
    def operand_registers(self, operand: str, g: int, t: int) -> range:
        """Registers holding items ``0..ipl-1`` of ``operand`` for the MFMA of group ``g``, tile ``t``."""
        ipl = self.items(operand)
        start = ipl * (g + self.groups * t)
        return range(start, start + ipl)

    def acc_registers(self, tm: int, tn: int) -> range:
        """Registers holding the accumulator items of tile ``(tm, tn)``."""
        ipl = self.items("C")
        start = ipl * (tn + self.tiles[1] * tm)
        return range(start, start + ipl)

    def describe(self) -> dict:
        phi_kk, phi_g = self.k_order
        return {"instruction": self.ins.name, "warps": list(self.warps), "tiles_per_warp": list(self.tiles),
                "block": [self.block_m, self.block_n, self.bk], "mfma_per_k_block": self.groups,
                "k_width": self.c * self.items("A"),
                "k_order": {"instruction_k_bit_to_tile_k": {str(k): v for k, v in phi_kk.items()},
                            "group_bit_to_tile_k": phi_g}}
