"""The LDS (local data share) of gfx90a / gfx942 / gfx950, and the shared memory of NVIDIA
sm_80 / sm_90, as GF(2) maps.

Two maps describe one LDS instruction of one wave:

* the **bank map** (byte address -> bank): ``bank = (addr >> 2) mod num_banks``,
  i.e. the dword-address bits ``0 .. log2(num_banks)-1`` (banks are 4 bytes wide);
  32 banks on gfx90a/gfx942, 64 on gfx950 [Q CDNA4-ISA 11.1, M HK-PHASES];
* the **phase map** (lane id -> phase id): lanes are served in phases, and only
  lanes of one phase can conflict.  Every phase grouping below is linear over
  GF(2): phase-id bit ``k`` is the parity of ``lane & rows[k]``, so the phases are
  the cosets of the *phase subspace* ``ker(rows)`` (the lanes served together
  differ by a vector of that subspace).  Contiguous groups of ``2**j`` lanes are
  the special case ``rows = [1 << j, ..., 1 << 5]``; the XOR-defined groups of
  ``ds_read_b128`` (gfx942: phase = (l2^l4, l3, l5); gfx950: (l2^l3^l4, l5))
  are not index subsets and cannot be written as Triton's ``laneAddr`` lists.

Every phase grouping carries its evidence tag from ``docs/amd_facts.md``
([Q] quoted, [M] measured, [I] inferred).  The phase tables and the named assumptions
belong to the target descriptors (``Target.lds_phases``, ``Target.lds_assumptions``:
:mod:`linlayout.hw.targets.cdna`); this module builds the model from them.  Inferred
groupings are *named assumptions* (:data:`ASSUMPTIONS`): ``linlayout banks --model`` lists them, and
``lds_model(arch, assume={name: value})`` replaces one (value: lanes per
contiguous phase, or a list of phase rows as lane masks).

NVIDIA's shared memory is the same kind of model (32 banks of 4 bytes, linear phases:
docs/nvidia_facts.md) with two more facts an op may carry: ``ldmatrix``/``stmatrix .xN``
take addresses from lanes ``0 .. 8N-1`` only (:attr:`OpShape.address_lanes`), and 64/128-bit
loads merge their first two phases when every lane's address equals that of lane ``l ^ x``
for one ``x`` in :attr:`LdsOp.merge_lanes` (:meth:`LdsOp.merged`).

Also here: Triton's approximation of the same hardware (:func:`triton_lds_model`:
``num_banks / words`` consecutive lanes per phase, ``laneAddr`` index subsets for
``ds_read_b128``), and Triton's generic model for any bank count and wave size
(:func:`generic_lds_model`), used to compare with Triton's numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Mapping, Sequence

import numpy as np

from .. import caches, f2
from ..errors import LayoutError
from .targets import Assumption, LdsPhase, Target, get_target, target_names, targets_with

__all__ = [
    "ASSUMPTIONS",
    "LDS_ARCHS",
    "Assumption",
    "LdsModel",
    "LdsOp",
    "OP_SHAPES",
    "OpShape",
    "SHARED_MEMORY_ARCHS",
    "access_alignment",
    "first_lane",
    "misaligned_address",
    "generic_lds_model",
    "lds_model",
    "triton_lds_model",
]

#: The AMD targets with a hardware LDS model; SHARED_MEMORY_ARCHS adds NVIDIA's.
SHARED_MEMORY_ARCHS = targets_with(lds_phases=True)
LDS_ARCHS = tuple(a for a in SHARED_MEMORY_ARCHS if get_target(a).family != "nvidia")


def access_alignment(bytes_per_lane: int) -> int:
    """The bytes every lane's address of an LDS / shared-memory access of ``bytes_per_lane`` bytes per
    lane is a multiple of: the width itself when a power of two (``ds_read_b64``, ``ld.shared.b64``:
    8; a byte access: 1), a dword for ``ds_read_b96``/``ds_write_b96`` (12 bytes).  The one rule of
    the bank model (linlayout.synth.banks), the wave emulator and the plan certificate reader."""
    return bytes_per_lane if bytes_per_lane & (bytes_per_lane - 1) == 0 else 4


def first_lane(flags: np.ndarray) -> tuple[tuple[int, ...], str] | None:
    """The first true entry of per-lane ``flags`` (``[lanes]`` or ``[warps, lanes]``, in warp, then
    lane order): its index and its name ("lane 5", "lane 5 of warp 1"); None when none is true."""
    hits = np.argwhere(flags)
    if not hits.size:
        return None
    at = tuple(int(x) for x in hits[0])
    return at, f"lane {at[-1]}" + (f" of warp {at[0]}" if flags.ndim == 2 else "")


def misaligned_address(addr, bytes_per_lane: int) -> str:
    """Where the per-lane byte addresses ``addr`` (``[lanes]``, every warp alike, or ``[warps, lanes]``)
    of an access of ``bytes_per_lane`` bytes per lane break ``access_alignment``: "" when no lane
    does, else one phrase naming the first such lane (in warp, then lane order), its address and
    how many lanes do."""
    a = np.asarray(addr, dtype=np.int64)
    align = access_alignment(bytes_per_lane)
    bad = a % align != 0
    first = first_lane(bad)
    if first is None:
        return ""
    where, lane = first
    count = int(bad.sum())
    more = f" ({count} lanes in all)" if count > 1 else ""
    return (f"{lane} addresses byte {int(a[where])}, not a multiple of {align} (a {bytes_per_lane}-byte access)"
            + more)


@dataclass(frozen=True)
class OpShape:
    """What one lane of an LDS instruction moves.

    ``bytes_per_lane``: bytes one lane reads or writes (contiguous, from its own
    address).  ``transpose``: for a transpose load (gfx950's ``ds_read_*_tr_*``, gfx1250's
    ``ds_load_tr*``), the element width in bits of the transposed matrix (the lane supplies
    ``bytes*8/bits`` consecutive elements; the data lands transposed across a group of lanes:
    :mod:`linlayout.hw.transpose_loads`).
    ``isa``: ``"amdgcn"`` (``ds_*``) or ``"ptx"`` (NVIDIA ``ld/st.shared``, ``ldmatrix``,
    ``stmatrix``).  ``address_lanes``: the lanes that supply an address (lanes ``0 ..
    address_lanes-1``; ``ldmatrix``/``stmatrix .xN``: ``8N``, one 16-byte row each; None: every lane).
    ``fragment``: the data of an address lane's row is spread over other lanes' registers
    (``ldmatrix``/``stmatrix``), so the op is not a per-lane vector access of a register layout.
    """

    name: str
    direction: str  # "read" | "write"
    bytes_per_lane: int
    transpose_bits: int | None = None
    isa: str = "amdgcn"
    address_lanes: int | None = None
    fragment: bool = False

    @property
    def words_per_lane(self) -> int:
        """Dwords one lane touches when its address is aligned (1 for sub-dword ops)."""
        return max(1, self.bytes_per_lane // 4)

    @property
    def transpose_elems(self) -> int | None:
        """Elements per lane of a transpose read (gfx950: 16, 8, 4 for tr_b4/b6, tr_b8, tr_b16; gfx1250: 8)."""
        return None if self.transpose_bits is None else self.bytes_per_lane * 8 // self.transpose_bits


OP_SHAPES: dict[str, OpShape] = {
    s.name: s
    for s in [
        OpShape("ds_read_u8", "read", 1),
        OpShape("ds_read_u16", "read", 2),
        OpShape("ds_read_b32", "read", 4),
        OpShape("ds_read_b64", "read", 8),
        OpShape("ds_read_b96", "read", 12),
        OpShape("ds_read_b128", "read", 16),
        OpShape("ds_write_b8", "write", 1),
        OpShape("ds_write_b16", "write", 2),
        OpShape("ds_write_b32", "write", 4),
        OpShape("ds_write_b64", "write", 8),
        OpShape("ds_write_b96", "write", 12),
        OpShape("ds_write_b128", "write", 16),
        OpShape("ds_read_b64_tr_b16", "read", 8, 16),
        OpShape("ds_read_b64_tr_b8", "read", 8, 8),
        OpShape("ds_read_b64_tr_b4", "read", 8, 4),
        OpShape("ds_read_b96_tr_b6", "read", 12, 6),
        OpShape("ds_load_tr16_b128", "read", 16, 16),
        OpShape("ds_load_tr8_b64", "read", 8, 8),
        # NVIDIA (PTX): ld/st.shared of 1..16 bytes per lane (.v2.b32 = b64, .v4.b32 = b128), and the
        # matrix ops, whose address lanes each supply one 16-byte row (.trans moves data, not addresses)
        *(OpShape(f"{verb}.shared.b{8 * n}", direction, n, isa="ptx")
          for verb, direction in (("ld", "read"), ("st", "write")) for n in (1, 2, 4, 8, 16)),
        *(OpShape(f"{verb}matrix.x{n}{trans}", direction, 16, isa="ptx", address_lanes=8 * n, fragment=True)
          for verb, direction in (("ld", "read"), ("st", "write")) for n in (1, 2, 4) for trans in ("", ".trans")),
    ]
}


@dataclass(frozen=True)
class LdsOp:
    """One LDS instruction on one target: its bank map and its lane phases.

    ``phase_rows[k]`` is a lane mask; phase-id bit ``k`` of lane ``l`` is
    ``popcount(l & phase_rows[k]) % 2``, over the op's address lanes.  ``tag`` is the
    evidence for the phase grouping (Q, M or I); ``assumption`` names the [I] assumption it
    rests on.  ``merge_lanes``: lane masks ``x`` such that, when every lane's address equals
    that of lane ``l ^ x``, the op is served by :meth:`merged` (first phase row dropped).
    """

    arch: str
    shape: OpShape
    num_banks: int
    wave_size: int
    phase_rows: tuple[int, ...]
    tag: str
    source: str
    assumption: str | None = None
    merge_lanes: tuple[int, ...] = ()

    @property
    def name(self) -> str:
        return self.shape.name

    @property
    def direction(self) -> str:
        return self.shape.direction

    @property
    def bytes_per_lane(self) -> int:
        return self.shape.bytes_per_lane

    @property
    def words_per_lane(self) -> int:
        return self.shape.words_per_lane

    @property
    def lane_bits(self) -> int:
        return self.wave_size.bit_length() - 1

    @property
    def address_lanes(self) -> int:
        """The lanes ``0 .. address_lanes-1`` whose addresses the op reads (the others are ignored)."""
        return self.shape.address_lanes or self.wave_size

    @property
    def address_lane_bits(self) -> int:
        return self.address_lanes.bit_length() - 1

    def merged(self) -> "LdsOp":
        """The op as served when its ``merge_lanes`` pairing holds: first phase row dropped."""
        if not self.merge_lanes:
            raise ValueError(f"op {self.name} on {self.arch} merges no phases")
        return replace(self, phase_rows=self.phase_rows[1:], merge_lanes=(),
                       source=f"{self.source}; lanes paired (same address): phases merged")

    @property
    def bank_bits(self) -> int:
        return self.num_banks.bit_length() - 1

    @property
    def num_phases(self) -> int:
        return 1 << len(self.phase_rows)

    @property
    def lanes_per_phase(self) -> int:
        return self.address_lanes // self.num_phases

    def phase_of(self, lane: int) -> int:
        """Phase id of ``lane`` (bit k = parity of ``lane & phase_rows[k]``)."""
        return sum((bin(lane & r).count("1") & 1) << k for k, r in enumerate(self.phase_rows))

    def phase_subspace(self) -> list[int]:
        """Basis (lane masks) of the lanes served together with lane 0: ``ker(phase map)``."""
        return list(self._kernel)

    @cached_property
    def _kernel(self) -> tuple[int, ...]:
        n = self.address_lane_bits
        # columns of the phase map: image of lane bit j = the phase-id bits it flips
        cols = [sum(((r >> j) & 1) << k for k, r in enumerate(self.phase_rows)) for j in range(n)]
        return tuple(f2.kernel_basis(cols))

    def phase_lanes(self, phase: int) -> list[int]:
        """The lanes of phase ``phase``, ascending."""
        if not 0 <= phase < self.num_phases:
            raise LayoutError(f"op {self.name} on {self.arch}: phase {phase} outside [0, {self.num_phases})")
        return [lane for lane in range(self.address_lanes) if self.phase_of(lane) == phase]

    def describe(self) -> dict:
        """JSON-able description (for ``linlayout banks --model``)."""
        return {
            "op": self.name,
            "direction": self.direction,
            "bytes_per_lane": self.bytes_per_lane,
            "phases": self.num_phases,
            "lanes_per_phase": self.lanes_per_phase,
            "phase_bits": [_lane_mask_text(r) for r in self.phase_rows],
            "phase0_lanes": _ranges(self.phase_lanes(0)),
            "tag": self.tag,
            "source": self.source,
            "assumption": self.assumption,
            **({"address_lanes": self.address_lanes} if self.address_lanes != self.wave_size else {}),
            **({"merge_lanes": [_lane_mask_text(x) for x in self.merge_lanes]} if self.merge_lanes else {}),
        }


@dataclass(frozen=True)
class LdsModel:
    """The LDS of one target: geometry plus one :class:`LdsOp` per instruction."""

    arch: str
    num_banks: int
    wave_size: int
    lds_bytes: int
    ops: Mapping[str, LdsOp] = field(default_factory=dict)
    kind: str = "hardware"  # "hardware" | "triton" | "generic"
    assumptions: tuple[Assumption, ...] = ()

    @property
    def bank_bits(self) -> int:
        return self.num_banks.bit_length() - 1

    @cached_property
    def isas(self) -> frozenset[str]:
        """The instruction sets of its ops (``OpShape.isa``; computed once per model)."""
        return frozenset(op.shape.isa for op in self.ops.values())

    def op(self, name: str) -> LdsOp:
        if not isinstance(name, str) or name not in self.ops:
            raise LayoutError(f"op {name!r} is not an LDS instruction of {self.arch} ({self.kind} model); "
                              f"known: {', '.join(self.ops)}")
        return self.ops[name]

    def op_names(self, direction: str | None = None) -> list[str]:
        return [n for n, o in self.ops.items() if direction is None or o.direction == direction]

    def describe(self) -> dict:
        """The model with its sources and named assumptions (JSON-able)."""
        return {
            "arch": self.arch,
            "kind": self.kind,
            "num_banks": self.num_banks,
            "bank_map": f"bank = (byte_address >> 2) mod {self.num_banks}",
            "wave_size": self.wave_size,
            "lds_bytes": self.lds_bytes,
            "cycle_model": ("cycles(phase) = max over banks of the number of distinct dwords the phase's "
                            "lanes touch in that bank; an instruction costs the sum over its phases"),
            "ops": [o.describe() for o in self.ops.values()],
            "assumptions": [
                {"name": a.name, "statement": a.statement, "source": a.source, "default": _jsonable(a.default)}
                for a in self.assumptions
            ],
        }


# ---------------------------------------------------------------- phase forms
def _contiguous(lanes_per_phase: int, wave_size: int) -> tuple[int, ...]:
    """Phase rows of contiguous groups of ``lanes_per_phase`` lanes."""
    if lanes_per_phase < 1 or lanes_per_phase & (lanes_per_phase - 1) or lanes_per_phase > wave_size:
        raise LayoutError(f"lanes per phase {lanes_per_phase} must be a power of two <= {wave_size}")
    j = lanes_per_phase.bit_length() - 1
    return tuple(1 << b for b in range(j, wave_size.bit_length() - 1))


def _lane_tile_rows(lane_addr: Sequence[int], wave_size: int) -> tuple[int, ...]:
    """Phase rows whose phase subspace is spanned by the lane bits ``lane_addr`` (Triton's laneAddr)."""
    return tuple(1 << b for b in range(wave_size.bit_length() - 1) if b not in set(lane_addr))


#: Every named [I] LDS assumption of every target (the target descriptors own them).
ASSUMPTIONS: dict[str, Assumption] = {name: a for arch in target_names()
                                      for name, a in get_target(arch).lds_assumptions.items()}


def _phase_table(t: Target) -> Mapping[str, LdsPhase]:
    """The LDS phase table of target ``t`` (its descriptor's), or ``LayoutError`` if it has none."""
    if t.lds_phases is None:
        raise LayoutError(f"arch {t.name!r} has no LDS model; LDS models exist for {', '.join(SHARED_MEMORY_ARCHS)}")
    return t.lds_phases


def _rows_of(form: object, wave_size: int, what: str) -> tuple[int, ...]:
    if isinstance(form, bool):
        raise LayoutError(f"{what}: {form!r} is not a phase form")
    if isinstance(form, int):
        return _contiguous(form, wave_size)
    if isinstance(form, (list, tuple)) and all(isinstance(r, int) and not isinstance(r, bool) for r in form):
        rows = tuple(form)
        if any(r <= 0 or r >= wave_size for r in rows) or f2.rank(rows) != len(rows):
            raise LayoutError(f"{what}: phase rows {list(rows)} must be independent non-zero lane masks < {wave_size}")
        return rows
    raise LayoutError(f"{what}: {form!r} is neither lanes per phase (int) nor a list of phase rows (lane masks)")


def lds_model(arch: str, assume: Mapping[str, object] | None = None) -> LdsModel:
    """The hardware model of ``arch`` (gfx90a, gfx942, gfx950, sm_80, sm_90 or an alias).

    ``assume`` replaces named phase assumptions (see :data:`ASSUMPTIONS`): value
    = lanes per contiguous phase (int) or phase rows (list of lane masks).
    """
    t = get_target(arch)
    if assume is not None and not isinstance(assume, Mapping):
        raise LayoutError(f"assume must be a mapping from assumption name to value, got {type(assume).__name__}")
    if not assume:
        return _default_model(t.name)
    return _build_model(t.name, dict(assume))


@caches.memoize("hw.lds.default_model", table=True)
def _default_model(arch: str) -> LdsModel:
    return _build_model(arch, {})


def _build_model(arch: str, assume: dict) -> LdsModel:
    t = get_target(arch)
    table = _phase_table(t)
    for name in assume:
        if name not in ASSUMPTIONS:
            raise LayoutError(f"unknown assumption {name!r}; known: {', '.join(ASSUMPTIONS)}")
    ops: dict[str, LdsOp] = {}
    used: list[str] = []

    def form_of(op_name: str) -> tuple[object, str]:
        form, source, assumption = table[op_name].form, table[op_name].source, table[op_name].assumption
        if form == "as b32":
            return form_of("ds_read_b32" if OP_SHAPES[op_name].direction == "read" else "ds_write_b32")[0], source
        if assumption in assume and isinstance(t.lds_assumptions[assumption].default, (int, tuple)):
            return assume[assumption], f"overridden assumption {assumption}"
        return form, source

    for op_name, phase in table.items():
        form, source = form_of(op_name)
        shape = OP_SHAPES[op_name]
        rows = _rows_of(form, shape.address_lanes or t.wave_size, f"{t.name} {op_name}")
        if phase.assumption and phase.assumption not in used:
            used.append(phase.assumption)
        ops[op_name] = LdsOp(t.name, shape, t.lds_banks, t.wave_size, rows, phase.tag, source, phase.assumption,
                             phase.merge_lanes)
    used += list(t.lds_model_assumptions)
    known = t.lds_assumptions
    listed = tuple(replace(known[a], statement=f"OVERRIDDEN to {assume[a]!r}; default: {known[a].statement}")
                   if a in assume else known[a] for a in used)
    return LdsModel(t.name, t.lds_banks, t.wave_size, t.lds_bytes, ops, "hardware", listed)


def generic_lds_model(num_banks: int, wave_size: int, lane_tiles: Mapping[str, Sequence[int]] | None = None,
                      name: str = "generic") -> LdsModel:
    """Triton's generic phase model: an op moving ``w`` dwords per lane serves
    ``num_banks / w`` consecutive lanes per phase (at most the wave), or, for the
    ops named in ``lane_tiles``, the lanes spanned by the given lane bits (``laneAddr``)."""
    for what, v in (("num_banks", num_banks), ("wave_size", wave_size)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1 or v & (v - 1):
            raise LayoutError(f"{what} {v!r} must be a power of two")
    if lane_tiles is not None and not isinstance(lane_tiles, Mapping):
        raise LayoutError(f"lane_tiles must map op names to lane-bit lists, got {type(lane_tiles).__name__}")
    tiles = dict(lane_tiles or {})
    n_lane = wave_size.bit_length() - 1
    for op_name, bits in tiles.items():
        if op_name not in OP_SHAPES:
            raise LayoutError(f"lane_tiles: unknown op {op_name!r}")
        if isinstance(bits, (str, bytes)) or not all(isinstance(b, int) and 0 <= b < n_lane for b in bits):
            raise LayoutError(f"lane_tiles[{op_name!r}] = {bits!r}: lane bits must be integers in [0, {n_lane})")
    ops = {}
    for op_name, shape in OP_SHAPES.items():
        if shape.transpose_bits is not None or shape.bytes_per_lane == 12 or shape.isa != "amdgcn":
            continue
        if op_name in tiles:
            rows = _lane_tile_rows(tiles[op_name], wave_size)
            src = f"Triton laneAddr {list(tiles[op_name])}"
        else:
            rows = _contiguous(min(wave_size, max(1, num_banks // shape.words_per_lane)), wave_size)
            src = "Triton: num_banks / dwords consecutive lanes per phase"
        ops[op_name] = LdsOp(name, shape, num_banks, wave_size, rows, "T", src, None)
    return LdsModel(name, num_banks, wave_size, 0, ops, "generic" if name == "generic" else "triton")


#: Triton's AMD ``getSharedLdStTiles`` laneAddr for 128-bit loads (CDNA3 / CDNA4).
TRITON_B128_LANE_ADDR = {32: (0, 1, 4), 64: (0, 1, 3, 4)}


def triton_lds_model(arch: str) -> LdsModel:
    """How Triton models ``arch``'s LDS: its bank count, ``num_banks / dwords``
    consecutive lanes per phase, and ``laneAddr`` index subsets for ``ds_read_b128``."""
    t = get_target(arch)
    _phase_table(t)  # only the targets with a hardware LDS model
    if t.family == "nvidia":
        raise LayoutError(f"arch {t.name}: Triton's LDS approximation models AMD targets; use lds_model({t.name!r})")
    tiles = {"ds_read_b128": TRITON_B128_LANE_ADDR[t.lds_banks]}
    model = generic_lds_model(t.lds_banks, t.wave_size, tiles, name=t.name)
    return replace(model, lds_bytes=t.lds_bytes, kind="triton")


# ------------------------------------------------------------------- helpers
def _lane_mask_text(mask: int) -> str:
    return "^".join(f"l{b}" for b in range(mask.bit_length()) if (mask >> b) & 1)


def _ranges(values: Sequence[int]) -> str:
    """``[0,1,2,3,20,21]`` -> ``"0-3,20-21"``."""
    out, start, prev = [], None, None
    for v in values:
        if start is None:
            start = prev = v
        elif v == prev + 1:
            prev = v
        else:
            out.append(f"{start}-{prev}" if prev != start else f"{start}")
            start = prev = v
    if start is not None:
        out.append(f"{start}-{prev}" if prev != start else f"{start}")
    return ",".join(out)


def _jsonable(v: object) -> object:
    if isinstance(v, tuple):
        return [_lane_mask_text(r) for r in v]
    return v
