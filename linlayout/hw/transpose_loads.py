"""The AMD LDS transpose loads as lane maps: gfx950's ``ds_read_b64_tr_b*`` / ``ds_read_b96_tr_b6``
(wave64) and gfx1250's ``ds_load_tr16_b128`` / ``ds_load_tr8_b64`` (wave32).

Every lane supplies an address and reads ``bytes_per_lane`` contiguous bytes there: ``E``
elements of ``element_bits`` bits, ``k = log2 E``.  The lanes then trade elements: destination
lane ``i`` element ``j`` (``j < E``) receives element ``i mod E`` of the read of the *source*
lane ``s``, whose bits are, from bit 0 up (Triton's ``a``/``b`` interleave of
``lowerDsReadTr``, docs/amd_facts.md 1.6 and 6.6)::

    j bits 0 .. a-1,  i bits k .. k+b-1,  j bits a .. k-1,  i bits k+b .. (the rest of i)

with ``a = lead_element_bits`` and ``b = inner_lane_bits``.  So the exchange stays inside
groups of ``2**(k + b)`` consecutive lanes (``group_lanes``), and lane ``i``'s low ``k`` bits
choose the element of the source read.  gfx950 (``a = 0``, ``b = 4 - k``): inside each 16-lane
group, lane ``i`` element ``j`` is element ``i % E`` of lane ``j * (16 / E) + i // E``'s read.
gfx1250 ``ds_load_tr16_b128`` (``E = 8``, ``a = b = 0``): an 8 x 8 transpose inside each group
of 8 lanes; ``ds_load_tr8_b64`` (``E = 8``, ``a = 2``, ``b = 1``): groups of 16 lanes.

The gfx950 maps are [I] (consistent with every statement of the CDNA4 ISA, written nowhere by
AMD); the gfx1250 ones are Triton's lowering (its ``TargetInfo::queryLDSTransLoadParams`` and
``lowerDsReadTr``), with no AMD text found.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..errors import LayoutError

__all__ = ["TRANSPOSE_LOADS", "TransposeLoad", "transpose_load", "transpose_load_named"]


@dataclass(frozen=True)
class TransposeLoad:
    """One transpose load: its ISA name, its ROCDL op, the wave it works in, what a lane reads and
    the source-lane bit order (module docstring; the [I] maps are the targets' assumptions
    ``tr_lane_permutation`` on gfx950 and ``gfx1250_tr_lane_map`` on gfx1250)."""

    name: str
    rocdl: str
    wave_size: int
    element_bits: int
    bytes_per_lane: int
    lead_element_bits: int
    inner_lane_bits: int

    @property
    def elements(self) -> int:
        """``E``: elements each lane reads and receives."""
        return self.bytes_per_lane * 8 // self.element_bits

    @property
    def vector_bits(self) -> int:
        """``k = log2 E``: the destination lane bits that choose the element of the source read."""
        return self.elements.bit_length() - 1

    @property
    def group_lanes(self) -> int:
        """The lanes that trade elements among themselves (consecutive, aligned)."""
        return 1 << (self.vector_bits + self.inner_lane_bits)

    def source_columns(self, lanes: list, elements: list) -> list:
        """The source lane's bits, bit 0 first, as the destination's: ``lanes[t]`` stands for
        destination lane bit ``t`` (every lane bit of the wave), ``elements[u]`` for element bit
        ``u`` (``k`` of them).  Any values can stand for the bits (tensor vectors, bit masks)."""
        k, a, b = self.vector_bits, self.lead_element_bits, self.inner_lane_bits
        if len(elements) != k:
            raise ValueError(f"{self.name}: {len(elements)} element bits given, {k} wanted")
        return list(elements[:a]) + list(lanes[k:k + b]) + list(elements[a:]) + list(lanes[k + b:])

    @cached_property
    def _bit_origin(self) -> list[tuple[str, int]]:
        """Per source lane bit: ("lane", t) or ("element", u), the destination bit it is."""
        lane_bits = self.wave_size.bit_length() - 1
        return self.source_columns([("lane", t) for t in range(lane_bits)],
                                   [("element", u) for u in range(self.vector_bits)])

    def sources(self) -> tuple[np.ndarray, np.ndarray]:
        """``(src_lane, src_elem)``, two ``[wave_size, E]`` int arrays: destination lane ``i``
        element ``j`` receives element ``src_elem[i, j]`` of lane ``src_lane[i, j]``'s read."""
        i, j = np.meshgrid(np.arange(self.wave_size), np.arange(self.elements), indexing="ij")
        src = np.zeros_like(i)
        for bit, (kind, t) in enumerate(self._bit_origin):
            src |= (((i if kind == "lane" else j) >> t) & 1) << bit
        return src, i & (self.elements - 1)

    def read_origins(self) -> tuple[np.ndarray, np.ndarray]:
        """``(lane, element)``, two read-only ``[wave_size]`` int arrays: where lane ``s``'s read goes,
        as the destination (lane, element) that receives its element 0 (the lane's low ``k`` bits are
        0; element ``c`` of the read goes to lane ``lane[s] + c``, the same element).  Worked out once
        per load (``_read_origins``): they depend on its fields alone."""
        return self._read_origins

    @cached_property
    def _read_origins(self) -> tuple[np.ndarray, np.ndarray]:
        s = np.arange(self.wave_size)
        out = {"lane": np.zeros_like(s), "element": np.zeros_like(s)}
        for bit, (kind, t) in enumerate(self._bit_origin):
            out[kind] |= ((s >> bit) & 1) << t
        for origin in out.values():
            origin.setflags(write=False)
        return out["lane"], out["element"]


#: Every transpose load linlayout knows, gfx950's then gfx1250's.
TRANSPOSE_LOADS: tuple[TransposeLoad, ...] = (
    TransposeLoad("ds_read_b64_tr_b16", "rocdl.ds.read.tr16.b64", 64, 16, 8, 0, 2),
    TransposeLoad("ds_read_b64_tr_b8", "rocdl.ds.read.tr8.b64", 64, 8, 8, 0, 1),
    TransposeLoad("ds_read_b64_tr_b4", "rocdl.ds.read.tr4.b64", 64, 4, 8, 0, 0),
    TransposeLoad("ds_read_b96_tr_b6", "rocdl.ds.read.tr6.b96", 64, 6, 12, 0, 0),
    TransposeLoad("ds_load_tr16_b128", "rocdl.ds.load.tr16.b128", 32, 16, 16, 0, 0),
    TransposeLoad("ds_load_tr8_b64", "rocdl.ds.load.tr8.b64", 32, 8, 8, 2, 1),
)
_BY_NAME = {t.name: t for t in TRANSPOSE_LOADS}


def transpose_load_named(name: str) -> TransposeLoad:
    """The transpose load of ISA name ``name`` (a LayoutError for an unknown one)."""
    if name not in _BY_NAME:
        raise LayoutError(f"unknown transpose load {name!r} (known: {', '.join(_BY_NAME)})")
    return _BY_NAME[name]


def transpose_load(wave_size: int, element_bits: int, bytes_per_lane: int | None = None,
                   among=None) -> TransposeLoad | None:
    """The transpose load of a wave of ``wave_size`` lanes moving ``element_bits``-bit elements (of
    ``bytes_per_lane`` per lane where given; one named in ``among`` where given: a target's
    ``lds_phases``); None where there is none."""
    for t in TRANSPOSE_LOADS:
        if (t.wave_size == wave_size and t.element_bits == element_bits
                and bytes_per_lane in (None, t.bytes_per_lane) and (among is None or t.name in among)):
            return t
    return None
