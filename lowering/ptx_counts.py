"""Counting NVIDIA PTX instructions by kind (the classes the NVIDIA corpus records).

Counting rule (the one ``benchmarks/data/triton_nvidia_corpus.json`` follows)
-----------------------------------------------------------------------------
Every PTX instruction line is put into exactly one *class*; ``total`` is the number of
instruction lines and equals the sum of the class counts.  A line is an instruction when it is
not empty, not a comment (``//``), not a directive (``.loc``, ``.reg``, ...), not a label
(``$L__BB0_1:``) and not a brace; a guard predicate (``@%p1``, ``@!%p1``) is skipped before
the mnemonic is read.

================ =================================================================
class            mnemonics (the part before the first ``.`` type/space suffix)
================ =================================================================
``shfl.sync``    ``shfl.sync.*`` (idx, bfly, up, down)
``prmt``         ``prmt.*`` (byte permute)
``selp``         ``selp.*`` (select by predicate)
``ld.shared``    ``ld.shared.*``
``st.shared``    ``st.shared.*``
``ldmatrix``     ``ldmatrix.*``
``stmatrix``     ``stmatrix.*``
``bar.sync``     ``bar.sync``, ``barrier.sync``, ``bar.warp.sync``
``mov``          ``mov.*`` (register moves, packing and unpacking of vectors)
``other``        anything else (address arithmetic, ``cvt``, ``setp``, ``and``, ...)
================ =================================================================

PTX is virtual ISA: ``ptxas`` may merge or split instructions on the way to SASS, so these are
counts of the code Triton (or a plan) hands to ``ptxas``, not of what the GPU executes.
"""

from __future__ import annotations

__all__ = ["PTX_CLASS_KEYS", "PTX_COUNT_KEYS", "ptx_mnemonic", "ptx_class", "ptx_counts"]

#: The classes, in the order the corpus stores them.
PTX_CLASS_KEYS = ("shfl.sync", "prmt", "selp", "ld.shared", "st.shared", "ldmatrix", "stmatrix",
                  "bar.sync", "mov", "other")
PTX_COUNT_KEYS = ("total",) + PTX_CLASS_KEYS
_BARRIERS = ("bar.sync", "barrier.sync", "bar.warp.sync")
_PREFIXED = ("shfl.sync", "ld.shared", "st.shared")
_FIRST_WORD = ("prmt", "selp", "ldmatrix", "stmatrix", "mov")


def ptx_mnemonic(line: str) -> str | None:
    """The full mnemonic (``ld.shared.v4.b32``) of a PTX line, None for a non-instruction line."""
    code = line.split("//", 1)[0].strip()
    if not code or code[0] in ".{}" or code.endswith(":"):
        return None
    words = code.split()
    if words[0].startswith("@"):
        words = words[1:]
    return words[0].rstrip(";") if words else None


def ptx_class(mnemonic: str) -> str:
    """The class of a PTX mnemonic (module docstring)."""
    if mnemonic.startswith(_BARRIERS):
        return "bar.sync"
    for prefix in _PREFIXED:
        if mnemonic == prefix or mnemonic.startswith(prefix + "."):
            return prefix
    first = mnemonic.split(".", 1)[0]
    return first if first in _FIRST_WORD else "other"


def ptx_counts(lines: list[str] | str) -> dict[str, int]:
    """Counts by class (``total`` first) of the instruction lines in ``lines`` (text or a list of lines)."""
    if isinstance(lines, str):
        lines = lines.splitlines()
    counts = dict.fromkeys(PTX_COUNT_KEYS, 0)
    for line in lines:
        mnemonic = ptx_mnemonic(line)
        if mnemonic is not None:
            counts[ptx_class(mnemonic)] += 1
            counts["total"] += 1
    return counts
