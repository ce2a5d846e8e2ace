"""Register layouts of one matrix instruction, derived from AMD's general rule.

Every map here is a *bit permutation*: each bit of the hardware index
(``register`` = packed item index inside the lane, ``lane``) lands on exactly one
bit of one tensor coordinate, so the layouts are built from lists of
``(out_dim, bit)`` targets, never from tables.

Sources (``docs/amd_facts.md`` section 3; CDNA4 ISA section 7.1.4):

*Inputs* (A is M x K, B is K x N, per block): with ``K_L = K / (64 / (M*B))``
items per lane, ``A[b,i,k]`` is item ``k % K_L`` of lane ``i + M*(b + B*(k // K_L))``;
B likewise with ``j``.  In bits: the low ``log2 K_L`` register bits are k's low
bits, the lane bits are ``i`` (log2 M bits), then ``b`` (log2 B bits), then k's
next bits.  The gfx950 FP8 operands of the F8F6F4 instructions split the 32 items
of a lane into ``chunk``-item runs (16): ``k = e % 16 + 16*(lane // M) + (K/2)*(e // 16)``,
i.e. the general rule with ``K_L = 16`` applied to each K-half.

*Outputs* (C and D, M x N per block): group height ``H`` (4, or 1 for f64),
``B_I = ceil(64 / (N*M/H))`` blocks per item across the lanes, ``M_I = (64/B_I)/N``
rows per item, ``G = M/(H*M_I)`` row groups.  ``D[b,i,j]`` is item
``i%H + H*(i//(H*M_I) + G*(b//B_I))`` of lane ``j + N*((i//H)%M_I + M_I*(b%B_I))``.
In bits: register bits = i[0:log H], i[log(H*M_I):], b[log B_I:]; lane bits =
j, i[log H: log(H*M_I)], b[0:log B_I].  ``rows_before_blocks=False`` swaps the last two
lane fields (blocks before rows), which is what AMD's matrix calculator prints for
``v_mfma_f64_4x4x4_4b_f64`` (the only instruction with both ``M_I > 1`` and ``B_I > 1``).

*Scales* (gfx950 ``v_mfma_scale_*``): one E8M0 byte per lane; lane ``l`` holds the
scale of row (A) / column (B) ``l % M`` for K-block ``l // M`` (32 K values per block):
the input rule with ``K_L = 1`` applied to the M x (K/32) scale matrix.
"""

from __future__ import annotations

from typing import Optional, Sequence

from ..errors import LayoutError
from ..layout import LinearLayout

__all__ = [
    "BitTarget",
    "bit_layout",
    "log2_exact",
    "input_layout",
    "output_layout",
    "scale_layout",
    "SCALE_BLOCK_K",
    "WAVE64",
]

WAVE64 = 64
#: K values that share one E8M0 scale in the gfx950 scaled MFMAs [Q CDNA4-ISA 7.2].
SCALE_BLOCK_K = 32

BitTarget = Optional[tuple]  # (out_dim, bit index) or None for a broadcast (zero) bit


def log2_exact(value: int, what: str) -> int:
    """``log2(value)`` for a positive power of two, else ``LayoutError`` naming ``what``."""
    if not isinstance(value, int) or value < 1 or value & (value - 1):
        raise LayoutError(f"{what} = {value!r} is not a positive power of two")
    return value.bit_length() - 1


def bit_layout(in_bits: "dict[str, list[BitTarget]]", out_dims: Sequence[tuple]) -> LinearLayout:
    """The layout whose in-dim bit ``t`` of ``d`` is the single out bit ``in_bits[d][t]``.

    ``in_bits`` maps each in dim (in order) to a list of ``(out_dim, bit)`` targets
    (``None`` = the bit is ignored, a broadcast).  ``out_dims`` gives the out dims as
    ``(name, size)`` in order.
    """
    names = [n for n, _ in out_dims]
    bases = {}
    for dim, targets in in_bits.items():
        rows = []
        for t in targets:
            row = [0] * len(names)
            if t is not None:
                out, bit = t
                row[names.index(out)] = 1 << bit
            rows.append(row)
        bases[dim] = rows
    return LinearLayout(bases, list(out_dims))


def _field(out_dim: str, start: int, count: int) -> list:
    return [(out_dim, start + t) for t in range(count)]


def _out_dims(blocks: int, rows: int, cols: int) -> list:
    dims = [("dim0", rows), ("dim1", cols)]
    return [("block", blocks)] + dims if blocks > 1 else dims


def input_layout(
    operand: str, nonk: int, k: int, blocks: int, chunk: Optional[int] = None, lanes: int = WAVE64
) -> LinearLayout:
    """A (``operand="A"``, M x K) or B (``"B"``, K x N) register layout of the general rule.

    ``nonk`` is M for A and N for B.  ``chunk`` is the number of consecutive K values
    in one run of a lane's items (default ``K_L``, the whole lane: the general rule).
    """
    if operand not in ("A", "B"):
        raise LayoutError(f"operand must be 'A' or 'B', got {operand!r}")
    lg_nonk = log2_exact(nonk, "M" if operand == "A" else "N")
    lg_k = log2_exact(k, "K")
    lg_b = log2_exact(blocks, "blocks")
    lg_lanes = log2_exact(lanes, "lanes")
    lg_groups = lg_lanes - lg_nonk - lg_b  # lane groups along K
    lg_kl = lg_k - lg_groups  # log2 K_L
    if lg_groups < 0 or lg_kl < 0:
        raise LayoutError(
            f"operand {operand}: {nonk} x {k} x {blocks} blocks does not fill {lanes} lanes "
            f"(K_L = K / ({lanes} / (M*B)) must be a positive integer)"
        )
    lg_chunk = lg_kl if chunk is None else log2_exact(chunk, "chunk")
    if lg_chunk > lg_kl:
        raise LayoutError(f"operand {operand}: chunk {chunk} exceeds the {1 << lg_kl} items of a lane")
    kdim, ndim = ("dim1", "dim0") if operand == "A" else ("dim0", "dim1")
    register = _field(kdim, 0, lg_chunk) + _field(kdim, lg_chunk + lg_groups, lg_kl - lg_chunk)
    lane = _field(ndim, 0, lg_nonk) + _field("block", 0, lg_b) + _field(kdim, lg_chunk, lg_groups)
    rows, cols = (nonk, k) if operand == "A" else (k, nonk)
    return bit_layout({"register": register, "lane": lane}, _out_dims(blocks, rows, cols))


def output_layout(
    m: int, n: int, blocks: int, group_height: int, rows_before_blocks: bool = True, lanes: int = WAVE64
) -> LinearLayout:
    """C/D register layout (M x N per block) of the general output rule (module doc)."""
    lg_m = log2_exact(m, "M")
    lg_n = log2_exact(n, "N")
    lg_b = log2_exact(blocks, "blocks")
    lg_h = log2_exact(group_height, "group height H")
    lg_lanes = log2_exact(lanes, "lanes")
    # B_I = ceil(lanes / (N*M/H)); M_I = (lanes / B_I) / N; G = M / (H*M_I)
    lg_bi = max(0, lg_lanes - (lg_n + lg_m - lg_h))
    lg_mi = lg_lanes - lg_bi - lg_n
    lg_g = lg_m - lg_h - lg_mi
    if lg_h > lg_m or lg_mi < 0 or lg_g < 0 or lg_bi > lg_b:
        raise LayoutError(
            f"output {m} x {n} x {blocks} blocks with group height {group_height} does not tile {lanes} lanes"
        )
    rows = _field("dim0", lg_h, lg_mi)
    blks = _field("block", 0, lg_bi)
    lane = _field("dim1", 0, lg_n) + (rows + blks if rows_before_blocks else blks + rows)
    register = _field("dim0", 0, lg_h) + _field("dim0", lg_h + lg_mi, lg_g) + _field("block", lg_bi, lg_b - lg_bi)
    return bit_layout({"register": register, "lane": lane}, _out_dims(blocks, m, n))


def scale_layout(operand: str, nonk: int, k: int, lanes: int = WAVE64) -> LinearLayout:
    """Scale-operand layout of a block-scaled MFMA: one E8M0 byte per lane.

    Out dims follow the operand's orientation: A scales are ``[dim0 = row (M),
    dim1 = K-block]``, B scales ``[dim0 = K-block, dim1 = column (N)]``, with
    ``K / SCALE_BLOCK_K`` K-blocks.  In dims ``register`` (size 1: the byte that
    OPSEL picks) and ``lane``.
    """
    if k % SCALE_BLOCK_K:
        raise LayoutError(f"K = {k} is not a multiple of the scale block {SCALE_BLOCK_K}")
    layout = input_layout(operand, nonk, k // SCALE_BLOCK_K, 1, lanes=lanes)
    if layout.in_dim_size("register") != 1:
        raise LayoutError(f"scale operand {operand}: {nonk} x {k} needs more than one scale per lane")
    return layout
