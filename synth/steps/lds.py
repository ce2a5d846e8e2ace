"""The LDS steps ``lds_store`` and ``lds_load`` (one access, a two-address pair, or a gfx950 transpose load)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from linlayout import LayoutError, caches
from linlayout.hw.lds import transpose_read_sources
from linlayout.hw.targets import Target, get_target

from .base import PlanVerificationError, Step, ints, lane_table, register, table, vregs

__all__ = ["ACCESS_BYTES", "LdsLoad", "LdsStore", "OFFSET_LIMIT", "PAIR_OFFSET_MAX", "transpose_element_addresses",
           "transpose_name"]

# ISA offset fields: ds_read/ds_write carry a 16-bit unsigned byte offset; ds_read2/ds_write2 two
# 8-bit ones (offset0, offset1) in units of the access width (times 64 for the st64 forms).
OFFSET_LIMIT = 1 << 16
#: Bytes one lane's LDS / shared-memory access moves (``ds_write_b8`` .. ``_b128``, ``st.shared.b8`` .. ``.b128``).
ACCESS_BYTES = (1, 2, 4, 8, 16)
PAIR_OFFSET_MAX = 255


def transpose_name(bits: int) -> str:
    """The gfx950 transpose load of ``bits``-bit elements (``ds_read_b64_tr_b16``, ``..._b8``)."""
    return f"ds_read_b64_tr_b{bits}"


def transpose_element_addresses(addr, bits: int) -> list[np.ndarray]:
    """Byte address, per lane, of element ``j`` of a transpose load whose lanes supply ``addr``.

    ``E = 64 / bits`` elements per lane; lane ``i`` element ``j`` is element ``e`` of the
    read of lane ``s`` of its 16-lane group (``linlayout.hw.lds.transpose_read_sources``),
    i.e. the byte ``addr[s] + e * bits / 8``.  Returns ``E`` arrays shaped like ``addr``.
    """
    a = np.asarray(addr, dtype=np.int64)
    lane, offset = _transpose_sources(bits)
    elem = a.reshape(-1, 64)[:, lane] + offset  # [rows, E, 64]
    return [elem[:, j].reshape(a.shape) for j in range(len(lane))]


@caches.memoize("synth.steps.transpose_sources", table=True)
def _transpose_sources(bits: int) -> tuple[np.ndarray, np.ndarray]:
    """``[E, 64]`` each: the lane ``s`` whose read holds lane ``l``'s element ``j`` of a transpose load,
    and that element's byte offset in the read (``transpose_element_addresses``)."""
    src_lane, src_elem = transpose_read_sources(64 // bits)
    lanes = np.arange(64)
    lane, offset = (lanes & ~15) + src_lane[lanes & 15].T, src_elem[lanes & 15].T * (bits // 8)
    lane.setflags(write=False)
    offset.setflags(write=False)
    return lane, offset


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

    def lane0_address(self) -> int:
        """Byte address of lane 0 of warp 0 (the pseudo-assembly's ``lane0=``)."""
        return int(np.asarray(self.addr).reshape(-1)[0])

    def pair_addr(self) -> np.ndarray:
        return np.asarray(self.addr) + self.pair_offset * self.offset_unit()

    def _pair_name(self, base: str) -> str:
        return f"{base}2{'st64' if self.st64 else ''}_b{8 * self.width_bytes}"

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
    def _pair_fields(cls, items: list[dict], i: int, key: str) -> tuple[dict, int]:
        """The pair fields read from the item after ``items[i]`` when it is fused to it, and the next index."""
        nxt = items[i + 1] if i + 1 < len(items) else {}
        if nxt.get("op") == cls.cert_op and nxt.get("fused"):
            nisa = nxt.get("isa", {})
            return dict(pair=ints(nxt[key]), pair_offset=int(nisa.get("offset1", 0)),
                        st64=bool(nisa.get("st64", False))), i + 2
        return {}, i + 1

    def _pair_cert(self, key: str, base: str, raw: bool) -> list[dict]:
        if self.pair is None:
            return []
        return [{"op": self.cert_op, key: ints(self.pair), "addr": table(raw, self.pair_addr()),
                 "fused": self._pair_name(base),
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
    store = True

    @property
    def slots(self) -> list[int]:
        return self.src

    def to_cert(self, raw: bool = False) -> list[dict]:
        return [{"op": "lds_store", "src": ints(self.src), "addr": table(raw, self.addr),
                 "isa": {"bytes": self.width_bytes, "d16_hi": self.d16_hi}}] + self._pair_cert("src", "ds_write", raw)

    @classmethod
    def from_cert(cls, items: list[dict], i: int) -> tuple[Step, int]:
        d = items[i]
        isa = d.get("isa", {})
        pair, nxt = cls._pair_fields(items, i, "src")
        return cls(src=ints(d["src"]), d16_hi=bool(isa.get("d16_hi", False)), addr=lane_table(d["addr"], "addr"),
                   width_bytes=cls._access_bytes(isa, i), **pair), nxt

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
            return (f"{self._pair_name('ds_write')} v_addr(lane0={base}), {vregs(self.src, p)}, "
                    f"{vregs(self.pair, p)} offset1:{self.pair_offset}")
        suffix = "_d16_hi" if self.d16_hi else ""
        return f"{target.lds_op_name(True, self.width_bytes)}{suffix} v_addr(lane0={base}), {vregs(self.src, p)}"

    def reads(self) -> list[int]:
        return self.src + (self.pair or [])

    def wide_store_tuples(self) -> list[list[int]]:
        """The VGPR tuples (slot lists) of the accesses when they are 8 or 16 bytes wide."""
        return [acc for acc in (self.src, self.pair) if acc] if self.width_bytes >= 8 else []

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

    ``transpose`` (gfx950, 8 or 16): ``ds_read_b64_tr_b{transpose}``: lane ``l`` supplies
    ``addr[w][l]`` (8-byte aligned) and receives its ``64 / transpose`` slots ``dst`` from the
    16 lanes of its group (``transpose_element_addresses``); in the certificate one
    ``lds_load`` per slot at its element address, the later ones ``fused`` to the first.
    """

    dst: list[int] = field(default_factory=list)
    transpose: int = 0
    op = "lds_load"
    cert_op = "lds_load"

    @property
    def slots(self) -> list[int]:
        return self.dst

    def to_cert(self, raw: bool = False) -> list[dict]:
        if self.transpose:
            name = transpose_name(self.transpose)
            out = []
            for j, (slot, a) in enumerate(zip(self.dst, transpose_element_addresses(self.addr, self.transpose))):
                item = {"op": "lds_load", "dst": [int(slot)], "addr": table(raw, a),
                        "isa": {"bytes": self.transpose // 8}}
                if j:
                    item["fused"] = name
                else:
                    item["isa"].update(transpose=name, lane_addr=table(raw, self.addr))
                out.append(item)
            return out
        return [{"op": "lds_load", "dst": ints(self.dst), "addr": table(raw, self.addr),
                 "isa": {"bytes": self.width_bytes}}] + self._pair_cert("dst", "ds_read", raw)

    @classmethod
    def from_cert(cls, items: list[dict], i: int) -> tuple[Step, int]:
        d = items[i]
        isa = d.get("isa", {})
        if "transpose" in isa:
            name = isa["transpose"]
            bits = {transpose_name(b): b for b in (8, 16)}.get(name)
            if bits is None:
                raise LayoutError(f"plan step {i}: unknown transpose load {name!r} (known: "
                                  f"{transpose_name(16)}, {transpose_name(8)})")
            n = 64 // bits
            group = items[i:i + n]
            if len(group) < n or any(g.get("fused") != name for g in group[1:]):
                raise LayoutError(f"plan step {i}: {name} needs {n} lds_load items, the later ones fused to it")
            return cls(dst=[s for g in group for s in ints(g["dst"])], addr=lane_table(isa["lane_addr"], "lane_addr"),
                       width_bytes=8, transpose=bits), i + n
        pair, nxt = cls._pair_fields(items, i, "dst")
        return cls(dst=ints(d["dst"]), addr=lane_table(d["addr"], "addr"), width_bytes=cls._access_bytes(isa, i),
                   **pair), nxt

    def counts(self) -> dict[str, int]:
        return {"lds_read_tr" if self.transpose else "lds_read": 1}

    def asm(self, p: int, target: Target) -> str:
        """AMD: ``ds_read_bN v, v_addr`` (``_uN`` below 4 bytes; a pair: ``ds_read2``; a transpose load);
        NVIDIA (PTX): ``ld.shared.bN v, [a]``."""
        base = self.lane0_address()
        if target.lds_isa == "ptx":
            return f"{target.lds_op_name(False, self.width_bytes)} {vregs(self.dst, p)}, [a(lane0={base})]"
        if self.transpose:
            return f"{transpose_name(self.transpose)} {vregs(self.dst, p)}, v_addr(lane0={base})"
        if self.pair is not None:
            return (f"{self._pair_name('ds_read')} {vregs(self.dst, p)}, {vregs(self.pair, p)}, "
                    f"v_addr(lane0={base}) offset1:{self.pair_offset}")
        return f"{target.lds_op_name(False, self.width_bytes)} {vregs(self.dst, p)}, v_addr(lane0={base})"

    def writes(self) -> list[int]:
        return self.dst + (self.pair or [])

    def transpose_error(self, arch: str, element_bytes: int) -> str:
        """Why this transpose load of ``element_bytes``-byte elements cannot run on ``arch`` ("" when it can)."""
        if transpose_name(self.transpose) not in (get_target(arch).lds_phases or {}):
            return f"transpose loads ds_read_b64_tr_b{{8,16}} exist only on gfx950, not on {arch}"
        if (self.transpose not in (8, 16) or self.width_bytes != 8 or element_bytes != self.transpose // 8
                or self.pair is not None):
            return (f"a ds_read_b64_tr_b{self.transpose} moves 8 bytes of {self.transpose}-bit elements, here "
                    f"{element_bytes * 8}-bit ones in {self.width_bytes} bytes")
        if len(self.dst) != 64 // self.transpose:
            return f"{len(self.dst)} slots listed for {64 // self.transpose} elements"
        return ""

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
            machine.lds_transpose_load(self.dst, self.addr, self.transpose, what)
            return
        for slots, addr in self.accesses():
            machine.lds_load(slots, addr, self.width_bytes, what)

    def emit(self, emitter, prepared, regs: dict[int, str], what: str) -> None:
        if self.transpose:
            emitter.lds_transpose_load(self.dst, prepared, self.transpose, regs, what)
            return
        emitter.lds_load(self.access_offsets(), prepared, self.width_bytes, regs, what)
