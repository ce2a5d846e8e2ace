"""The LDS steps ``lds_store`` and ``lds_load`` (one access, a two-address pair, or a transpose load)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from linlayout import LayoutError, caches
from linlayout.hw.lds import first_lane, misaligned_address
from linlayout.hw.targets import Target, get_target, target_names
from linlayout.hw.transpose_loads import TransposeLoad, transpose_load, transpose_load_named

from .base import PlanVerificationError, Step, ints, lane_table, register, table, vregs

__all__ = ["ACCESS_BYTES", "LdsLoad", "LdsStore", "OFFSET_LIMIT", "PAIR_OFFSET_MAX", "missing_transpose_load",
           "transpose_element_addresses"]

# ISA offset fields: ds_read/ds_write carry a 16-bit unsigned byte offset; ds_read2/ds_write2 two
# 8-bit ones (offset0, offset1) in units of the access width (times 64 for the st64 forms).
OFFSET_LIMIT = 1 << 16
#: Bytes one lane's LDS / shared-memory access moves (``ds_write_b8`` .. ``_b128``, ``st.shared.b8`` .. ``.b128``).
ACCESS_BYTES = (1, 2, 4, 8, 16)
PAIR_OFFSET_MAX = 255


def transpose_element_addresses(addr, load: TransposeLoad) -> list[np.ndarray]:
    """Byte address, per lane, of element ``j`` of the transpose load ``load`` whose lanes supply
    ``addr`` (``[..., wave_size]``).

    Lane ``i`` element ``j`` is element ``e`` of the read of lane ``s`` of its group
    (``TransposeLoad.sources``), i.e. the byte ``addr[s] + e * element_bits / 8``.  Returns
    ``E`` arrays shaped like ``addr``.
    """
    a = np.asarray(addr, dtype=np.int64)
    lane, offset = _transpose_sources(load)
    elem = a.reshape(-1, load.wave_size)[:, lane] + offset  # [rows, E, lanes]
    return [elem[:, j].reshape(a.shape) for j in range(len(lane))]


def missing_transpose_load(arch: str, element_bits: int, width_bytes: int, lanes: int) -> str:
    """Why ``arch`` has no transpose load of ``element_bits``-bit elements moving ``width_bytes`` per
    lane with addresses of ``lanes`` lanes ("" when it has one: ``Target.transpose_load``, a wave of
    ``lanes``): one line naming the targets that have the load wanted, if any does
    (linlayout.hw.transpose_loads)."""
    target = get_target(arch)
    own = target.transpose_load(element_bits, width_bytes)
    if own is not None:
        if lanes == target.wave_size:
            return ""
        return (f"{own.name} of {arch} reads addresses of its {target.wave_size}-lane waves, "
                f"got addresses of {lanes} lanes")
    wanted = transpose_load(lanes, element_bits, width_bytes)
    where = "" if wanted is None else "; " + wanted.name + " is " + ", ".join(
        name for name in target_names() if get_target(name).transpose_load(element_bits, width_bytes) == wanted) + "'s"
    return f"{arch} has no transpose load of {element_bits}-bit elements moving {width_bytes} bytes per lane{where}"


@caches.memoize("synth.steps.transpose_sources", table=True)
def _transpose_sources(load: TransposeLoad) -> tuple[np.ndarray, np.ndarray]:
    """``[E, lanes]`` each: the lane ``s`` whose read holds lane ``l``'s element ``j`` of ``load``,
    and that element's byte offset in the read (``transpose_element_addresses``)."""
    src_lane, src_elem = load.sources()
    lane, offset = src_lane.T.copy(), src_elem.T * (load.element_bits // 8)
    lane.setflags(write=False)
    offset.setflags(write=False)
    return lane, offset


def _check_element_addresses(group: list[dict], i: int, load: TransposeLoad, lane_addr: np.ndarray) -> None:
    """The ``addr`` of item ``j`` of the certificate items ``group`` (``items[i:i + E]``) of the
    transpose load ``load`` must be where lane ``l`` reads its element ``j`` given ``lane_addr``
    (``transpose_element_addresses``, as ``LdsLoad.to_cert`` writes it, one table shaped like
    ``lane_addr``); LayoutError naming the item and the first lane (in warp, then lane order) that
    differs, or the missing ``addr``."""
    for j, (item, want) in enumerate(zip(group, transpose_element_addresses(lane_addr, load))):
        where = f"plan step {i + j} (lds_load)"
        if "addr" not in item:
            raise LayoutError(f"{where} lacks the key 'addr'")
        given = lane_table(item["addr"], f"{where}: addr")
        element = f"element {j} of the {load.name} at item {i}"
        if given.shape != want.shape:
            raise LayoutError(f"{where}: {element} reads one address per lane shaped {list(want.shape)}, "
                              f"the certificate's addr is shaped {list(given.shape)}")
        first = first_lane(given != want)
        if first is not None:
            at, lane = first
            raise LayoutError(f"{where}: {element} reads byte {int(want[at])} in {lane}, "
                              f"the certificate says {int(given[at])}")


@dataclass(frozen=True)
class _LdsAccess(Step):
    """Common part of LDS steps: one access, or two (``ds_read2``/``ds_write2``) from one base address.

    Lane ``l`` of warp ``w`` accesses its slots at consecutive element positions starting at
    byte ``addr[w][l]`` (``addr`` ``[lanes]``: every warp alike), ``width_bytes`` bytes per lane.
    ``pair``: the second access's slots; it is at ``addr + pair_offset * width_bytes`` bytes,
    ``* 64`` for the ``st64`` forms (ISA offset fields: offset0 = 0, offset1 = ``pair_offset``,
    at most PAIR_OFFSET_MAX).
    """

    addr: np.ndarray  # [warps][lanes] byte address of the (first) access
    width_bytes: int  # bytes per lane per access
    pair: list[int] | None = None
    pair_offset: int = 0
    st64: bool = False
    lds = True
    pair_mnemonic = ""  # of the two-address form: ds_write / ds_read

    @classmethod
    def pair_name(cls, width_bytes: int, st64: bool) -> str:
        """The two-address instruction of ``width_bytes``-byte halves: ``ds_{write,read}2[st64]_bN``."""
        return f"{cls.pair_mnemonic}2{'st64' if st64 else ''}_b{8 * width_bytes}"

    def lane0_address(self) -> int:
        """Byte address of lane 0 of warp 0 (the pseudo-assembly's ``lane0=``)."""
        return int(np.asarray(self.addr).reshape(-1)[0])

    def pair_addr(self) -> np.ndarray:
        return np.asarray(self.addr) + self.pair_offset * self.offset_unit()

    def register_step(self) -> bool:
        return False

    @property
    def slots(self) -> list[int]:
        """The slots of the (first) access."""
        raise NotImplementedError

    def accesses(self) -> list[tuple[list[int], np.ndarray]]:
        """``(slots, addr)`` of the one or two accesses."""
        out = [(self.slots, self.addr)]
        if self.pair is not None:
            out.append((self.pair, self.pair_addr()))
        return out

    def access_offsets(self) -> list[tuple[list[int], int]]:
        """``(slots, byte offset from addr)`` of the one or two accesses."""
        out = [(self.slots, 0)]
        if self.pair is not None:
            out.append((self.pair, self.pair_offset * self.offset_unit()))
        return out

    def offset_unit(self) -> int:
        """Bytes per unit of the immediate offset: 1, or for a pair the width (``* 64`` for st64)."""
        return 1 if self.pair is None else self.width_bytes * (64 if self.st64 else 1)

    def offset_limit(self) -> int:
        """The immediate byte offsets ``d`` the instruction can add to its address register are
        ``0 <= d < offset_limit()`` in multiples of ``offset_unit()``: below OFFSET_LIMIT, or for
        a pair, with its second offset ``pair_offset`` above the first, within PAIR_OFFSET_MAX."""
        if self.pair is None:
            return OFFSET_LIMIT
        return self.offset_unit() * (PAIR_OFFSET_MAX + 1 - self.pair_offset)

    def offset_reaches(self, d: int) -> bool:
        """Can byte offset ``d`` ride in the immediate field (``offset_limit``)?"""
        return 0 <= d < self.offset_limit() and d % self.offset_unit() == 0

    def pair_error(self) -> str:
        """Why the two-address form is malformed ("" when it is fine or the step is one access)."""
        if self.pair is not None and (self.width_bytes not in (4, 8) or not 0 < self.pair_offset <= PAIR_OFFSET_MAX):
            return (f"a two-address LDS access needs 4- or 8-byte halves and an offset1 in 1..{PAIR_OFFSET_MAX}, "
                    f"got {self.width_bytes} bytes and {self.pair_offset}")
        return ""

    def plan_error(self, target: Target, element_bits: int, lds_bytes: int) -> str:
        """A malformed pair (``pair_error``), an access narrower than one element or listing other
        than the elements it moves, an address that
        breaks the access's alignment (``linlayout.hw.lds.access_alignment``: the emulator's and the
        bank model's rule) or an access outside bytes ``[0, lds_bytes)``."""
        error = self.pair_error()
        if error:
            return error
        if 8 * self.width_bytes < element_bits:
            return f"a {self.width_bytes}-byte access moves less than one {element_bits}-bit element"
        for slots, _ in self.accesses():
            if len(slots) * element_bits != 8 * self.width_bytes:
                return (f"a {self.width_bytes}-byte access moves {8 * self.width_bytes // element_bits} "
                        f"{element_bits}-bit elements, {len(slots)} slots listed")
        misaligned = misaligned_address(self.addr, self.width_bytes)
        if misaligned:
            return misaligned
        for _, addr in self.accesses():
            low, high = int(np.min(addr)), int(np.max(addr)) + self.width_bytes
            if low < 0 or high > lds_bytes:
                return f"it accesses bytes {low} to {high - 1}, outside the plan's {lds_bytes} (lds_bytes)"
        return ""

    def _check_pair(self, what: str) -> None:
        error = self.pair_error()
        if error:
            raise PlanVerificationError(f"{what}: {error}")

    @staticmethod
    def _access_bytes(isa: dict, i: int) -> int:
        """The ``bytes`` of item ``i``'s ``isa``: one of :data:`ACCESS_BYTES`, or ``LayoutError``."""
        width = int(isa.get("bytes", 0))
        if width not in ACCESS_BYTES:
            raise LayoutError(f"plan step {i}: an LDS access moves {', '.join(map(str, ACCESS_BYTES))} bytes per "
                              f"lane, got {width} (isa 'bytes')")
        return width

    @classmethod
    def _pair_fields(cls, items: list[dict], i: int, key: str, width_bytes: int) -> tuple[dict, int]:
        """The pair fields read from the item after ``items[i]`` (an access of ``width_bytes`` per
        lane) when it is fused to it, and the next index.  That item names the two-address
        instruction (``pair_name`` of ``width_bytes`` and its ``st64``) and moves ``width_bytes``
        too, else ``LayoutError``."""
        nxt = items[i + 1] if i + 1 < len(items) else {}
        if not isinstance(nxt, dict) or nxt.get("op") != cls.cert_op or "fused" not in nxt:
            return {}, i + 1
        nisa = nxt.get("isa", {})
        if not isinstance(nisa, dict):
            raise LayoutError(f"plan step {i + 1} ({cls.cert_op}): 'isa' must be an object of the instruction's "
                              f"parameters, got {nisa!r}")
        st64 = bool(nisa.get("st64", False))
        name = cls.pair_name(width_bytes, st64)
        if nxt["fused"] != name:
            raise LayoutError(f"plan step {i + 1} ({cls.cert_op}) has 'fused': {nxt['fused']!r}; fused to the "
                              f"{cls.cert_op} at item {i} ({width_bytes} bytes per lane) it is the second access of "
                              f"a {name}, which 'fused' names")
        if int(nisa.get("bytes", 0)) != width_bytes:
            raise LayoutError(f"plan step {i + 1} ({cls.cert_op}): the second access of the {name} at item {i} "
                              f"moves {width_bytes} bytes per lane, got {nisa.get('bytes')} (isa 'bytes')")
        if key not in nxt:
            raise LayoutError(f"plan step {i + 1} ({cls.cert_op}) lacks the key {key!r}")
        return dict(pair=ints(nxt[key]), pair_offset=int(nisa.get("offset1", 0)), st64=st64), i + 2

    def _pair_cert(self, key: str, raw: bool) -> list[dict]:
        if self.pair is None:
            return []
        return [{"op": self.cert_op, key: ints(self.pair), "addr": table(raw, self.pair_addr()),
                 "fused": self.pair_name(self.width_bytes, self.st64),
                 "isa": {"bytes": self.width_bytes, "offset1": self.pair_offset, "st64": self.st64}}]

    def note_setup(self, setup) -> None:
        setup.lds_access(self)

    def prepare(self, emitter, what: str):
        return emitter.lds_address(self, what)


@register
@dataclass(frozen=True)
class LdsStore(_LdsAccess):
    """``ds_write_b{8,16,32,64,128}`` (or ``ds_write2[st64]_b{32,64}``): lane ``l`` of warp ``w`` stores its
    slots ``src`` at consecutive element positions from byte ``addr[w][l]``.  ``d16_hi``: the
    element is the upper half (``ds_write_b16_d16_hi``) or byte 2 (``ds_write_b8_d16_hi``) of
    its VGPR.  Certificate: ``{"op": "lds_store", "src": [...], "addr": A}`` (a pair: a second
    item ``fused`` to it).
    """

    src: list[int] = field(default_factory=list)
    d16_hi: bool = False
    op = "lds_store"
    cert_op = "lds_store"
    pair_mnemonic = "ds_write"
    store = True

    @property
    def slots(self) -> list[int]:
        return self.src

    def to_cert(self, raw: bool = False) -> list[dict]:
        return [{"op": "lds_store", "src": ints(self.src), "addr": table(raw, self.addr),
                 "isa": {"bytes": self.width_bytes, "d16_hi": self.d16_hi}}] + self._pair_cert("src", raw)

    @classmethod
    def from_cert(cls, items: list[dict], i: int) -> tuple[Step, int]:
        d = items[i]
        isa = d.get("isa", {})
        width_bytes = cls._access_bytes(isa, i)
        pair, nxt = cls._pair_fields(items, i, "src", width_bytes)
        return cls(src=ints(d["src"]), d16_hi=bool(isa.get("d16_hi", False)), addr=lane_table(d["addr"], "addr"),
                   width_bytes=width_bytes, **pair), nxt

    def counts(self) -> dict[str, int]:
        return {"lds_write": 1}

    def asm(self, p: int, target: Target) -> str:
        """AMD: ``ds_write_bN[_d16_hi] v_addr, v`` (a pair: ``ds_write2``); NVIDIA (PTX):
        ``st.shared.bN [a], v`` (``v.hi``: the upper half of ``v``, AMD's ``d16_hi``)."""
        base = self.lane0_address()
        if target.lds_isa == "ptx":
            return f"{target.lds_op_name(True, self.width_bytes)} [a(lane0={base})], {vregs(self.src, p)}" + (
                ".hi" if self.d16_hi else "")
        if self.pair is not None:
            return (f"{self.pair_name(self.width_bytes, self.st64)} v_addr(lane0={base}), {vregs(self.src, p)}, "
                    f"{vregs(self.pair, p)} offset1:{self.pair_offset}")
        suffix = "_d16_hi" if self.d16_hi else ""
        return f"{target.lds_op_name(True, self.width_bytes)}{suffix} v_addr(lane0={base}), {vregs(self.src, p)}"

    def reads(self) -> list[int]:
        return self.src + (self.pair or [])

    def wide_store_tuples(self) -> list[list[int]]:
        """The VGPR tuples (slot lists) of the accesses when they are 8 or 16 bytes wide."""
        return [acc for acc in (self.src, self.pair) if acc] if self.width_bytes >= 8 else []

    @property
    def joined(self) -> bool:
        """Is this a ``ds_write2_b64`` of two accesses at consecutive addresses (``offset1`` 1, not st64), which
        LLVM joins into one 16-byte store before splitting it again (cost.joined_pair_copies)?"""
        return self.pair is not None and self.width_bytes == 8 and self.pair_offset == 1 and not self.st64

    def add_to_ds_chain(self, chain) -> None:
        chain.lds_store(self.reads())

    def price(self, pricer) -> None:
        pricer.lds_access(True, self.width_bytes, self.addr, self.pair is not None, 0)

    def run(self, machine, what: str) -> None:
        self._check_pair(what)
        for slots, addr in self.accesses():
            machine.lds_store(slots, addr, self.width_bytes, self.d16_hi, what)

    def emit(self, emitter, prepared, regs: dict[int, str], what: str) -> None:
        emitter.lds_store(self.access_offsets(), prepared, self.width_bytes, regs, what)


@register
@dataclass(frozen=True)
class LdsLoad(_LdsAccess):
    """``ds_read_b{32,64,128}`` / ``ds_read_u{8,16}`` (or ``ds_read2[st64]_b{32,64}``): lane ``l`` of warp
    ``w`` loads its slots ``dst`` from consecutive element positions from byte ``addr[w][l]``
    (``ds_read_u8/u16`` zero-extend into the whole VGPR).

    ``transpose`` (8 or 16): a transpose load of ``transpose``-bit elements (``transpose_load``:
    gfx950's ``ds_read_b64_tr_b{transpose}``, gfx1250's ``ds_load_tr16_b128`` / ``ds_load_tr8_b64``,
    told apart by ``width_bytes`` and the lanes of ``addr``): lane ``l`` supplies ``addr[w][l]``
    (aligned to ``width_bytes``) and receives its ``8 * width_bytes / transpose`` slots ``dst`` from
    the lanes of its group (``transpose_element_addresses``); in the certificate one ``lds_load``
    per slot at its element address, the later ones ``fused`` to the first (those addresses are
    checked against ``addr`` when read: ``_check_element_addresses``).
    """

    dst: list[int] = field(default_factory=list)
    transpose: int = 0
    op = "lds_load"
    cert_op = "lds_load"
    pair_mnemonic = "ds_read"

    @property
    def slots(self) -> list[int]:
        return self.dst

    @property
    def transpose_load(self) -> TransposeLoad | None:
        """The transpose load this step names (None: a plain load, or no such instruction)."""
        if not self.transpose:
            return None
        return transpose_load(np.shape(self.addr)[-1], self.transpose, self.width_bytes)

    def _known_transpose_load(self) -> TransposeLoad:
        load = self.transpose_load
        if load is None:
            raise LayoutError(f"no transpose load moves {self.width_bytes} bytes of {self.transpose}-bit elements "
                              f"per lane in a wave of {np.shape(self.addr)[-1]} lanes")
        return load

    def to_cert(self, raw: bool = False) -> list[dict]:
        if self.transpose:
            load = self._known_transpose_load()
            name = load.name
            out = []
            for j, (slot, a) in enumerate(zip(self.dst, transpose_element_addresses(self.addr, load))):
                item = {"op": "lds_load", "dst": [int(slot)], "addr": table(raw, a),
                        "isa": {"bytes": self.transpose // 8}}
                if j:
                    item["fused"] = name
                else:
                    item["isa"].update(transpose=name, lane_addr=table(raw, self.addr))
                out.append(item)
            return out
        return [{"op": "lds_load", "dst": ints(self.dst), "addr": table(raw, self.addr),
                 "isa": {"bytes": self.width_bytes}}] + self._pair_cert("dst", raw)

    @classmethod
    def from_cert(cls, items: list[dict], i: int) -> tuple[Step, int]:
        d = items[i]
        isa = d.get("isa", {})
        if "transpose" in isa:
            name = isa["transpose"]
            try:
                load = transpose_load_named(name)
            except LayoutError as e:
                raise LayoutError(f"plan step {i}: {e}") from None
            if load.element_bits not in (8, 16):
                raise LayoutError(f"plan step {i}: plans use the transpose loads of 8- and 16-bit elements, not {name}")
            n = load.elements
            group = items[i:i + n]
            if len(group) < n:
                raise LayoutError(f"plan step {i}: {name} needs {n} lds_load items, the later ones fused to it; "
                                  f"the certificate ends after {len(group)}")
            for j, g in enumerate(group[1:], i + 1):
                if not isinstance(g, dict) or g.get("op") != "lds_load" or g.get("fused") != name:
                    got = (g.get("op"), g.get("fused")) if isinstance(g, dict) else (None, None)
                    raise LayoutError(f"plan step {j}: element {j - i} of the {name} at item {i} is an lds_load "
                                      f"with 'fused': {name!r}, got op {got[0]!r} with 'fused': {got[1]!r}")
            lane_addr = lane_table(isa["lane_addr"], "lane_addr")
            if np.shape(lane_addr)[-1] != load.wave_size:  # (the step names its load by lanes, bits and width)
                raise LayoutError(f"plan step {i}: {name} is a load of {load.wave_size}-lane waves; its lane_addr has "
                                  f"{np.shape(lane_addr)[-1]} lanes")
            _check_element_addresses(group, i, load, lane_addr)
            return cls(dst=[s for g in group for s in ints(g["dst"])], addr=lane_addr,
                       width_bytes=load.bytes_per_lane, transpose=load.element_bits), i + n
        width_bytes = cls._access_bytes(isa, i)
        pair, nxt = cls._pair_fields(items, i, "dst", width_bytes)
        return cls(dst=ints(d["dst"]), addr=lane_table(d["addr"], "addr"), width_bytes=width_bytes, **pair), nxt

    def counts(self) -> dict[str, int]:
        return {"lds_read_tr" if self.transpose else "lds_read": 1}

    def asm(self, p: int, target: Target) -> str:
        """AMD: ``ds_read_bN v, v_addr`` (``_uN`` below 4 bytes; a pair: ``ds_read2``; a transpose load);
        NVIDIA (PTX): ``ld.shared.bN v, [a]``."""
        base = self.lane0_address()
        if target.lds_isa == "ptx":
            return f"{target.lds_op_name(False, self.width_bytes)} {vregs(self.dst, p)}, [a(lane0={base})]"
        if self.transpose:
            return f"{self._known_transpose_load().name} {vregs(self.dst, p)}, v_addr(lane0={base})"
        if self.pair is not None:
            return (f"{self.pair_name(self.width_bytes, self.st64)} {vregs(self.dst, p)}, {vregs(self.pair, p)}, "
                    f"v_addr(lane0={base}) offset1:{self.pair_offset}")
        return f"{target.lds_op_name(False, self.width_bytes)} {vregs(self.dst, p)}, v_addr(lane0={base})"

    def writes(self) -> list[int]:
        return self.dst + (self.pair or [])

    def load_tuple(self) -> list[int]:
        """Its slots, a ``ds_read2``'s two accesses' one after the other, when it loads whole dwords."""
        return self.writes() if self.width_bytes >= 4 else []

    def transpose_error(self, arch: str, element_bytes: int) -> str:
        """Why this transpose load of ``element_bytes``-byte elements cannot run on ``arch`` ("" when it can)."""
        missing = missing_transpose_load(arch, self.transpose, self.width_bytes, np.shape(self.addr)[-1])
        if missing:
            return missing
        load = get_target(arch).transpose_load(self.transpose, self.width_bytes)
        if self.transpose not in (8, 16) or element_bytes != self.transpose // 8 or self.pair is not None:
            return (f"a {load.name} moves {self.transpose}-bit elements, here {element_bytes * 8}-bit ones"
                    + (" (and a second address)" if self.pair is not None else ""))
        if len(self.dst) != load.elements:
            return f"{len(self.dst)} slots listed for {load.elements} elements"
        return ""

    def plan_error(self, target: Target, element_bits: int, lds_bytes: int) -> str:
        """A transpose load ``target`` lacks or that cannot move these elements (``transpose_error``),
        else the checks of every LDS access."""
        if self.transpose:
            error = self.transpose_error(target.name, element_bits // 8)
            if error:
                return error
        return super().plan_error(target, element_bits, lds_bytes)

    def add_to_ds_chain(self, chain) -> None:
        chain.lds_load(self.writes())

    def price(self, pricer) -> None:
        pricer.lds_access(False, self.width_bytes, self.addr, self.pair is not None, self.transpose)

    def run(self, machine, what: str) -> None:
        self._check_pair(what)
        if self.transpose:
            error = self.transpose_error(machine.arch, machine.element_bytes)
            if error:
                raise PlanVerificationError(f"{what}: {error}")
            machine.lds_transpose_load(self.dst, self.addr, self.transpose_load, what)
            return
        for slots, addr in self.accesses():
            machine.lds_load(slots, addr, self.width_bytes, what)

    def emit(self, emitter, prepared, regs: dict[int, str], what: str) -> None:
        if self.transpose:
            emitter.lds_transpose_load(self.dst, prepared, self._known_transpose_load(), regs, what)
            return
        emitter.lds_load(self.access_offsets(), prepared, self.width_bytes, regs, what)
