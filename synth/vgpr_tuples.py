"""Which of a side's dwords share one aligned VGPR tuple: the tuples the src VGPRs arrive in (a
wide global load, an MFMA result) or the dst's consumer takes them in (a wide global store, an
MFMA/WMMA operand).

A side's dwords are numbered in register order (dword ``j`` holds registers ``p j .. p j + p - 1``
of ``p`` elements per dword; a 64-bit register ``r`` is dwords ``2 r, 2 r + 1``).
``VgprTuples(bits)``: the dwords whose indices differ only in the dword-index bits ``bits`` form one
tuple of ``2 ** len(bits)`` consecutive VGPRs, dword ``d`` at position ``pext(d, bits)`` (bit ``i``
of the position is bit ``bits[i]`` of ``d``: ``bits[0]`` the lowest).  ``bits`` ``(0, .., k - 1)``
is an aligned run of ``2 ** k`` dwords in register order (``contiguous(2 ** k)``: an MFMA result, a
kernel's ``dwordx4`` of consecutive registers); ``()`` is no tuple (each VGPR alone, placed where
its first use wants it).  Other bits arise where the compiler merges single loads at consecutive
addresses into a wide one (linlayout.lowering.emit.conversion_kernel.source_tuples): gfx1200 fp32
``blocked[4x1,t32x1,o01]`` loads registers ``r, r+4, r+8, r+12`` into one ``buffer_load_b128``,
``VgprTuples((2, 3))``.

A run of ``c`` dwords (a power of two, at most the tuple's ``dwords``) in VGPR order is *in place*
(``in_place``) when it is positions ``k c .. k c + c - 1`` of one tuple in order: an LDS access
can name it where it arrived, and a tuple built from it needs no copy.
"""

from __future__ import annotations

from dataclasses import dataclass

from linlayout import LayoutError, caches

__all__ = ["TUPLE_DWORDS", "VgprTuples"]

# The VGPR tuple sizes a side's registers can arrive or be taken in (dwordx1/x2/x4 accesses, MFMA operands).
TUPLE_DWORDS = (1, 2, 4)


# The VgprTuples objects ``VgprTuples.of`` has checked (it is asked again for each access priced), by id, each
# kept alive here so that its id names it alone: taken as they are (frozen, of a tuple and an int: they stay
# valid).  64: the few tuple values of the conversions planned at once.
_checked = caches.cache("synth.vgpr_tuples.checked", size=64)


@dataclass(frozen=True)
class VgprTuples:
    """The dword-index bits ``bits`` that vary inside one VGPR tuple, the position's lowest first
    (module docstring); ``VgprTuples.of`` checks a user's value.  ``alone``: a mask of other
    dword-index bits; a dword with one of them set is in no tuple (it arrives, or is taken, by itself:
    a kernel's single access of another ``soffset``, linlayout.lowering.emit.conversion_kernel.source_tuples)."""

    bits: tuple[int, ...]
    alone: int = 0

    @classmethod
    def contiguous(cls, dwords: int) -> "VgprTuples":
        """Aligned runs of ``dwords`` (1, 2 or 4) dwords in register order."""
        return cls(tuple(range(dwords.bit_length() - 1)))

    @classmethod
    def of(cls, name: str, value, dword_bits: int | None = None) -> "VgprTuples":
        """``value`` as tuples: a ``VgprTuples``; an int of :data:`TUPLE_DWORDS` (``contiguous``); or a
        sequence of at most two distinct dword-index bits (ints >= 0), the position's lowest first.
        Where ``dword_bits`` is given (the side's dwords are ``2 ** dword_bits``), bits other than a
        run in register order (``0, 1, ..``: a run longer than the side is cut by its end, as an int
        says) must lie below it.  A ``LayoutError`` naming ``name`` for anything else (a bool, a
        float, a repeated, negative or too high bit)."""
        if dword_bits is None and _checked.get(id(value)) is value:  # this very value checked before
            return value
        if type(value) is int:
            if value not in TUPLE_DWORDS:
                raise LayoutError(f"{name} {value!r} must be 1, 2 or 4, or a sequence of dword-index bits")
            return cls.contiguous(value)
        if isinstance(value, cls):
            if not isinstance(value.bits, (list, tuple)):
                raise LayoutError(f"{name}: bits {value.bits!r} must be a sequence of dword-index bits")
            bits = tuple(value.bits)
        elif isinstance(value, (list, tuple)):
            bits = tuple(value)
        else:
            raise LayoutError(f"{name} {value!r} must be 1, 2 or 4, or a sequence of dword-index bits")
        if len(bits) > 2 or not all(type(b) is int and b >= 0 for b in bits) or len(set(bits)) != len(bits):
            raise LayoutError(f"{name} {list(bits)!r} must be at most two distinct dword-index bits (ints >= 0)")
        if dword_bits is not None and bits != tuple(range(len(bits))) and any(b >= dword_bits for b in bits):
            raise LayoutError(f"{name} {list(bits)!r}: the side's {1 << dword_bits} dword(s) have index bits "
                              f"below {dword_bits}")
        if not isinstance(value, cls):
            return cls(bits)
        if type(value.alone) is not int or value.alone < 0 or value.alone & value.mask:
            raise LayoutError(f"{name}: alone {value.alone!r} must be a mask (int >= 0) of bits other than {list(bits)}")
        if bits is not value.bits:  # bits given as a list: hashable
            return cls(bits, value.alone)
        if type(value) is cls:
            _checked[id(value)] = value
        return value

    @property
    def dwords(self) -> int:
        """The VGPRs of one tuple."""
        return 1 << len(self.bits)

    @property
    def mask(self) -> int:
        """The OR of the tuple's bits: ``d & ~mask`` names dword ``d``'s tuple."""
        m = 0
        for b in self.bits:
            m |= 1 << b
        return m

    def position(self, d: int) -> int:
        """Dword ``d``'s VGPR in its tuple (0 .. ``dwords`` - 1)."""
        return sum(((d >> b) & 1) << i for i, b in enumerate(self.bits))

    def tuple_of(self, d: int) -> int:
        """A name of dword ``d``'s tuple, ordered as the tuples' first dwords are."""
        return d & ~self.mask

    def by_itself(self, d: int) -> bool:
        """Is dword ``d`` in no tuple (an ``alone`` bit set)?"""
        return bool(d & self.alone)

    def in_place(self, dwords: list[int]) -> bool:
        """Are ``dwords`` (non-negative, ``c = len(dwords)`` a power of two, at most ``self.dwords``) in
        VGPR order the positions ``k c .. k c + c - 1`` of one tuple, in order?  ``dwords[z]`` must be
        ``dwords[0]`` with the bits of ``z`` set at ``bits[0], bits[1], ..`` (the low ``log2 c`` bits
        of ``dwords[0]``'s position clear)."""
        first = dwords[0]
        low = self.bits[:len(dwords).bit_length() - 1]
        if any((first >> b) & 1 for b in low):
            return False
        for z in range(1, len(dwords)):
            d = first
            for i, b in enumerate(low):
                if (z >> i) & 1:
                    d |= 1 << b
            if dwords[z] != d:
                return False
        return True
