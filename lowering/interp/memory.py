"""Memories of one kernel launch: global buffers, the workgroup's LDS, private allocations.

Addresses are plain integers (``uint64`` arrays, one per lane):

* global (``!llvm.ptr<1>``, flat ``!llvm.ptr``, global memrefs): buffer ``k`` of the launch
  lives at ``(k + 1) << GLOBAL_SHIFT``; an access outside every buffer is a memory fault
  (``InterpreterError``), never a silent read;
* LDS (``!llvm.ptr<3>``, workgroup memrefs): byte offsets ``0 .. size-1`` into the
  workgroup's LDS; allocations are laid out in declaration order at their alignment, and an
  access outside every allocation raises;
* private (``memref.alloca``): a per-lane byte array per allocation.

The LDS also keeps, per byte, whether this workgroup wrote it, and which waves wrote / read
it in the current barrier epoch, to report reads of never-written bytes and data races
between waves (the interpreter runs all waves in lockstep, which would hide both).  A store
that leaves a byte's value as it is races with nothing, and a wave reading a byte it stored
itself in the epoch reads its own value, which every other store of the byte in the epoch
matched (else that store was reported), where the byte held one value since its first store in
the epoch (else another wave's earlier store of other data may land between).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from .errors import InterpreterError

__all__ = ["GlobalMemory", "LocalMemory", "LdsLayout", "PrivateMemory", "MemRefValue", "GLOBAL_SHIFT"]

GLOBAL_SHIFT = 40
_OFFSET_MASK = (1 << GLOBAL_SHIFT) - 1


def _byte_index(addrs: np.ndarray, nbytes: int) -> np.ndarray:
    return addrs.astype(np.int64)[:, None] + np.arange(nbytes, dtype=np.int64)[None, :]


class GlobalMemory:
    """The launch's global buffers (byte arrays), addressed as described in the module doc."""

    def __init__(self) -> None:
        self.buffers: list = []
        self.names: list = []

    def add(self, data: np.ndarray, name: str) -> int:
        """Register a byte array; returns its base address."""
        self.buffers.append(data)
        self.names.append(name)
        return len(self.buffers) << GLOBAL_SHIFT

    def _locate(self, addrs: np.ndarray, nbytes: int, what: str) -> tuple:
        region = (addrs >> np.uint64(GLOBAL_SHIFT)).astype(np.int64) - 1
        off = (addrs & np.uint64(_OFFSET_MASK)).astype(np.int64)
        for r in np.unique(region):
            sel = region == r
            if r < 0 or r >= len(self.buffers):
                lane = int(np.flatnonzero(sel)[0])
                raise InterpreterError(f"global {what} at address {int(addrs[lane]):#x} (lane {lane}) is in no buffer")
            size = self.buffers[r].size
            bad = sel & ((off < 0) | (off + nbytes > size))
            if bad.any():
                lane = int(np.flatnonzero(bad)[0])
                raise InterpreterError(
                    f"global {what} of {nbytes} bytes at byte offset {int(off[lane])} of {self.names[r]} "
                    f"(size {size} bytes) by lane {lane} is out of bounds"
                )
        return region, off

    def load(self, addrs: np.ndarray, nbytes: int, active: np.ndarray) -> np.ndarray:
        """Bytes at ``addrs`` (one address per lane) for active lanes; zeros elsewhere."""
        out = np.zeros((addrs.shape[0], nbytes), np.uint8)
        idx = np.flatnonzero(active)
        if idx.size == 0:
            return out
        a = addrs[idx]
        region, off = self._locate(a, nbytes, "load")
        for r in np.unique(region):
            sel = region == r
            out[idx[sel]] = self.buffers[r][_byte_index(off[sel], nbytes)]
        return out

    def store(self, addrs: np.ndarray, data: np.ndarray, active: np.ndarray, check_conflicts: bool) -> None:
        """Write ``data[l]`` (``(L, nbytes)``) at ``addrs[l]`` for active lanes."""
        idx = np.flatnonzero(active)
        if idx.size == 0:
            return
        nbytes = data.shape[1]
        region, off = self._locate(addrs[idx], nbytes, "store")
        for r in np.unique(region):
            sel = region == r
            bidx = _byte_index(off[sel], nbytes).ravel()
            vals = data[idx[sel]].ravel()
            if check_conflicts:
                _check_same_address_same_value(bidx, vals, f"global store to {self.names[r]}")
            self.buffers[r][bidx] = vals


def _check_same_address_same_value(addr: np.ndarray, vals: np.ndarray, what: str) -> None:
    order = np.argsort(addr, kind="stable")
    a, v = addr[order], vals[order]
    dup = a[1:] == a[:-1]
    if dup.any():
        clash = dup & (v[1:] != v[:-1])
        if clash.any():
            k = int(np.flatnonzero(clash)[0])
            raise InterpreterError(
                f"{what}: lanes of one instruction write different values to byte {int(a[k])} "
                "(the hardware keeps an unspecified one)"
            )


@dataclass
class LdsLayout:
    """Static LDS allocations of a kernel: ``(name, offset, size)``, and the total size."""

    allocations: list = field(default_factory=list)
    size: int = 0

    def allocate(self, name: str, nbytes: int, align: int) -> int:
        align = max(int(align), 1)
        off = -(-self.size // align) * align
        self.allocations.append((name, off, int(nbytes)))
        self.size = off + int(nbytes)
        return off


class LocalMemory:
    """One workgroup's LDS with written-byte and per-wave race tracking (module doc)."""

    def __init__(self, layout: LdsLayout, waves: int, uninitialized: str, seed: int) -> None:
        """``uninitialized`` is ``InterpOptions.uninitialized_lds``: "error", "zero" or "garbage"."""
        n = max(layout.size, 1)
        if uninitialized == "garbage":
            self.data = np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)
        else:
            self.data = np.zeros(n, np.uint8)
        self.valid = np.zeros(n, bool)
        for _, off, size in layout.allocations:
            self.valid[off : off + size] = True
        self.layout = layout
        self.written = np.zeros(n, bool)
        self.write_epoch = np.zeros(n, np.int32)
        self.read_epoch = np.zeros((waves, n), np.int32)
        self.own_write_epoch = np.zeros((waves, n), np.int32)  # per wave: the epoch it last wrote each byte in
        self.rewrite_epoch = np.zeros(n, np.int32)  # the epoch a byte written in it was last changed again in
        self.epoch = 1
        self.error_uninitialized = uninitialized == "error"

    def barrier(self) -> None:
        self.epoch += 1

    def _where(self, byte: int) -> str:
        for name, off, size in self.layout.allocations:
            if off <= byte < off + size:
                return f"{name}+{byte - off}"
        return f"byte {byte}"

    def _check_range(self, bidx: np.ndarray, lanes: np.ndarray, nbytes: int, what: str) -> None:
        bad = (bidx < 0) | (bidx >= self.valid.size)
        bad[~bad] = ~self.valid[bidx[~bad]]
        if bad.any():
            r, _ = np.argwhere(bad)[0]
            start = int(bidx[r, 0])
            raise InterpreterError(
                f"LDS {what} of {nbytes} bytes at address {start} by lane {int(lanes[r])} is outside every "
                f"LDS allocation ({', '.join(f'{n}@{o}+{s}' for n, o, s in self.layout.allocations) or 'none'})"
            )

    def _other_writers(self, bidx: np.ndarray, w: np.ndarray) -> np.ndarray:
        """``(waves, n, nbytes)``: which waves other than the accessing one (``w``, per lane) stored each
        byte of ``bidx`` (``(n, nbytes)``) in the epoch."""
        wep = self.own_write_epoch[:, bidx] == self.epoch
        wep[np.broadcast_to(w, bidx.shape), np.arange(bidx.shape[0])[:, None], np.arange(bidx.shape[1])[None, :]] = False
        return wep

    def load(self, addrs: np.ndarray, nbytes: int, active: np.ndarray, wave: np.ndarray, races: bool) -> np.ndarray:
        out = np.zeros((addrs.shape[0], nbytes), np.uint8)
        idx = np.flatnonzero(active)
        if idx.size == 0:
            return out
        bidx = _byte_index(addrs[idx], nbytes)
        self._check_range(bidx, idx, nbytes, "read")
        if self.error_uninitialized:
            unw = ~self.written[bidx]
            if unw.any():
                r, c = np.argwhere(unw)[0]
                raise InterpreterError(
                    f"LDS read by lane {int(idx[r])} of {self._where(int(bidx[r, c]))} (address {int(bidx[r, c])}), "
                    "which this workgroup never wrote (uninitialized_lds='error')"
                )
        w = wave[idx][:, None]
        if races:
            recent = self.write_epoch[bidx] == self.epoch
            wep = self._other_writers(bidx, w) if recent.any() else None
            race = None if wep is None else wep.any(axis=0) & (
                (self.own_write_epoch[np.broadcast_to(w, bidx.shape), bidx] != self.epoch)
                | (self.rewrite_epoch[bidx] == self.epoch))
            if race is not None and race.any():
                r, c = np.argwhere(race)[0]
                raise InterpreterError(
                    f"LDS race: wave {int(w[r, 0])} (lane {int(idx[r])}) reads {self._where(int(bidx[r, c]))} that wave "
                    f"{int(np.flatnonzero(wep[:, r, c])[0])} wrote with no barrier in between"
                )
            self.read_epoch[np.broadcast_to(w, bidx.shape), bidx] = self.epoch
        out[idx] = self.data[bidx]
        return out

    def store(self, addrs: np.ndarray, data: np.ndarray, active: np.ndarray, wave: np.ndarray,
              races: bool, check_conflicts: bool) -> None:
        idx = np.flatnonzero(active)
        if idx.size == 0:
            return
        nbytes = data.shape[1]
        bidx = _byte_index(addrs[idx], nbytes)
        self._check_range(bidx, idx, nbytes, "write")
        vals = data[idx]
        w = np.broadcast_to(wave[idx][:, None], bidx.shape)
        if check_conflicts:
            _check_same_address_same_value(bidx.ravel(), vals.ravel(), "LDS store")
        if races:
            changed = self.data[bidx] != vals
            again = changed & (self.write_epoch[bidx] == self.epoch)
            wep = self._other_writers(bidx, w) if again.any() else None
            waw = None if wep is None else again & wep.any(axis=0)
            if waw is not None and waw.any():
                r, c = np.argwhere(waw)[0]
                raise InterpreterError(
                    f"LDS race: wave {int(w[r, c])} (lane {int(idx[r])}) overwrites {self._where(int(bidx[r, c]))} that "
                    f"wave {int(np.flatnonzero(wep[:, r, c])[0])} wrote with no barrier in between"
                )
            self.rewrite_epoch[bidx[again]] = self.epoch
            rep = self.read_epoch[:, bidx] == self.epoch  # (waves, n, nbytes)
            rep[w, np.arange(bidx.shape[0])[:, None], np.arange(nbytes)[None, :]] = False
            war = changed & rep.any(axis=0)
            if war.any():
                r, c = np.argwhere(war)[0]
                reader = int(np.flatnonzero(rep[:, r, c])[0])
                raise InterpreterError(
                    f"LDS race: wave {int(w[r, c])} (lane {int(idx[r])}) overwrites {self._where(int(bidx[r, c]))} that "
                    f"wave {reader} read with no barrier in between"
                )
            if np.unique(w).size > 1:  # several waves in this one instruction: same-byte writes differ?
                flat_b, flat_w = bidx.ravel(), w.ravel()
                order = np.argsort(flat_b, kind="stable")
                fb, fw, fv = flat_b[order], flat_w[order], vals.ravel()[order]
                clash = (fb[1:] == fb[:-1]) & (fw[1:] != fw[:-1]) & (fv[1:] != fv[:-1])
                if clash.any():
                    k = int(np.flatnonzero(clash)[0])
                    raise InterpreterError(f"LDS race: waves {int(fw[k])} and {int(fw[k + 1])} write different values to {self._where(int(fb[k]))}")
        self.data[bidx] = vals
        self.written[bidx] = True
        self.write_epoch[bidx] = self.epoch
        self.own_write_epoch[w, bidx] = self.epoch


class PrivateMemory:
    """One ``memref.alloca``: ``nbytes`` bytes per lane."""

    def __init__(self, lanes: int, nbytes: int) -> None:
        self.data = np.zeros((lanes, nbytes), np.uint8)

    def load(self, addrs: np.ndarray, nbytes: int, active: np.ndarray) -> np.ndarray:
        out = np.zeros((addrs.shape[0], nbytes), np.uint8)
        idx = np.flatnonzero(active)
        bidx = _byte_index(addrs[idx], nbytes)
        if ((bidx < 0) | (bidx >= self.data.shape[1])).any():
            raise InterpreterError(f"private memory access outside its {self.data.shape[1]}-byte allocation")
        out[idx] = self.data[idx[:, None], bidx]
        return out

    def store(self, addrs: np.ndarray, data: np.ndarray, active: np.ndarray) -> None:
        idx = np.flatnonzero(active)
        bidx = _byte_index(addrs[idx], data.shape[1])
        if ((bidx < 0) | (bidx >= self.data.shape[1])).any():
            raise InterpreterError(f"private memory access outside its {self.data.shape[1]}-byte allocation")
        self.data[idx[:, None], bidx] = data[idx]


@dataclass(frozen=True)
class MemRefValue:
    """A memref at run time: its type, the byte address of element offset 0 (``base``,
    per lane or uniform), the element offset (the type's, or a run-time one), and for private
    memrefs the allocation."""

    mtype: Any
    base: np.ndarray
    elem_offset: Any = 0
    private: Optional[PrivateMemory] = None
