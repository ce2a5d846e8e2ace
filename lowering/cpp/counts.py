"""Counting the PTX of a plan's CUDA output, and the counts its plan says it must show.

Counting rule.  Every PTX instruction statement (a line ending in ``;`` that is not a
directive or a comment) is one instruction; ``total`` counts them.  The keys:

==================  ==============================================================
key                 PTX
==================  ==============================================================
``shfl.sync.idx``   ``shfl.sync.idx.b32`` (and ``bfly``, ``up``, ``down`` alike)
``prmt``            ``prmt.b32`` (any mode)
``selp``            ``selp.*``
``st.shared``       ``st.shared*`` (``st.shared.b<bits>``: by bytes per thread, below)
``ld.shared``       ``ld.shared*`` (``ld.shared.b<bits>`` alike)
``ldmatrix``        ``ldmatrix.*`` (``ldmatrix.x<n>[.trans]``: by form, below)
``stmatrix``        ``stmatrix.*`` (likewise)
``movmatrix``       ``movmatrix.*``
``bar.sync``        ``bar.sync`` / ``barrier.sync`` (``__syncthreads()``)
``bar.warp.sync``   ``bar.warp.sync`` (``__syncwarp()``)
==================  ==============================================================

The width of a shared access is its vector count times its type's bits (``ld.shared.v4.u32``
is 128 bits, ``st.shared.u8`` 8).

A plan's CUDA lowers each step to exactly one PTX instruction per 32-bit register it writes
(linlayout.lowering.cpp.emitter): a ``shfl.sync.<mode>`` lane step to that shuffle, a ``selp``
select to ``selp``, a ``prmt`` (uniform or per-lane selector) to ``prmt``, each access of a
shared-memory step to one ``st.shared``/``ld.shared`` of the step's width, a barrier to
``bar.sync`` (workgroup scope) or ``bar.warp.sync`` (warp scope), an ``ldmatrix``/``stmatrix`` step to one instruction of its form, a
``movmatrix`` step to ``movmatrix``; a renaming to nothing.  A plan's
``mov`` (``mov.b32``) is a renaming in C++: the compiler copies a register only where it must, so
``mov`` is not compared.
:func:`expected_ptx_counts` derives the counts from the plan's steps; their sums are the plan's
own ``Plan.counts()`` (``shfl``, ``selp``, ``prmt``, ``lds_write``, ``lds_read``, ``ldmatrix``,
``stmatrix``, ``movmatrix``, ``bar.sync``, ``bar.warp.sync``).
"""

from __future__ import annotations

import re
from collections import Counter

from linlayout import LayoutError
from linlayout.synth.plan import Barrier, Lane, LdsLoad, LdsStore, Mov, PermSelect, Plan, Select
from linlayout.synth.steps import (MatrixLoad, MatrixStore, Movmatrix, dword_pairs, dwords_per_slot, matrix_name,
                                   slots_per_dword)

__all__ = ["PTX_KEYS", "expected_ptx_counts", "ptx_counts", "ptx_region_lines"]

PTX_KEYS = ("shfl.sync.idx", "shfl.sync.bfly", "shfl.sync.up", "shfl.sync.down", "prmt", "selp", "st.shared",
            "ld.shared", "ldmatrix", "stmatrix", "movmatrix", "bar.sync", "bar.warp.sync")
_MATRIX_FORM = re.compile(r"^(ldmatrix|stmatrix)\.sync\.aligned\.m8n8\.(x[124](?:\.trans)?)\.shared\.b16$")
_MARKER_RE = re.compile(r"^\s*//\s*linlayout-(begin|end)\s+(\S+)\s*$")
_TYPE_BITS = re.compile(r"\.[busf](8|16|32|64|128)\b")


def _code_lines(ptx: str) -> list[str]:
    return [ln.strip() for ln in ptx.splitlines()]


def _is_instruction(line: str) -> bool:
    """A PTX instruction statement: ends with ``;``, not a directive (``.reg``, ``.shared``) or comment."""
    return line.endswith(";") and not line.startswith((".", "//"))


def ptx_region_lines(ptx: str, region: str) -> list[str]:
    """The lines strictly between ``// linlayout-begin <region>`` and ``// linlayout-end <region>``;
    exactly one such pair must exist (LayoutError otherwise)."""
    lines = _code_lines(ptx)
    marks = [(i, m.group(1)) for i, ln in enumerate(lines) if (m := _MARKER_RE.match(ln)) and m.group(2) == region]
    if [w for _, w in marks] != ["begin", "end"]:
        raise LayoutError(f"region {region!r}: expected one begin and one end marker in the PTX, found "
                          f"{[w for _, w in marks]}")
    return lines[marks[0][0] + 1: marks[1][0]]


def _shared_bits(mnemonic: str) -> int:
    """Bits per thread of a ``ld/st.shared`` mnemonic (vector count times type bits)."""
    m = _TYPE_BITS.search(mnemonic)
    if m is None:
        raise LayoutError(f"no type in the shared-memory instruction {mnemonic!r}")
    vec = re.search(r"\.v(2|4|8)\b", mnemonic)
    return int(m.group(1)) * (int(vec.group(1)) if vec else 1)


def ptx_counts(ptx: str, region: str | None = None) -> dict[str, int]:
    """Instructions of ``ptx`` (or of one marked region) by the keys of the module docstring, with
    ``total`` and ``st.shared.b<bits>`` / ``ld.shared.b<bits>`` by width."""
    lines = _code_lines(ptx) if region is None else ptx_region_lines(ptx, region)
    out: Counter = Counter({k: 0 for k in PTX_KEYS})
    for ln in lines:
        if not _is_instruction(ln):
            continue
        mnemonic = re.sub(r"^@!?%\w+\s+", "", ln).split(None, 1)[0].rstrip(";")
        out["total"] += 1
        if mnemonic.startswith("shfl.sync."):
            out["shfl.sync." + mnemonic.split(".")[2]] += 1
        elif mnemonic.startswith("prmt."):
            out["prmt"] += 1
        elif mnemonic.startswith("selp."):
            out["selp"] += 1
        elif mnemonic.startswith(("ld.shared", "st.shared")):
            verb = mnemonic[:9]
            out[verb] += 1
            out[f"{verb}.b{_shared_bits(mnemonic)}"] += 1
        elif mnemonic.startswith(("ldmatrix.", "stmatrix.")):
            verb = mnemonic[:8]
            out[verb] += 1
            form = _MATRIX_FORM.match(mnemonic)
            if form is None:
                raise LayoutError(f"unexpected matrix instruction {mnemonic!r}")
            out[f"{verb}.{form.group(2)}"] += 1
        elif mnemonic.startswith("movmatrix."):
            out["movmatrix"] += 1
        elif mnemonic in ("bar.sync", "barrier.sync") or mnemonic.startswith(("bar.sync.", "barrier.sync.")):
            out["bar.sync"] += 1
        elif mnemonic == "bar.warp.sync":
            out["bar.warp.sync"] += 1
    return dict(out)


def expected_ptx_counts(plan: Plan) -> dict[str, int]:
    """The :data:`PTX_KEYS` counts (and shared accesses by width) the CUDA of ``plan`` must show
    (module docstring); LayoutError for a step with no CUDA form."""
    p, dps = slots_per_dword(plan.element_bits), dwords_per_slot(plan.element_bits)
    out: Counter = Counter({k: 0 for k in PTX_KEYS})
    for i, st in enumerate(plan.steps):
        what = f"plan step {i} ({st.op})"
        if isinstance(st, Lane) and st.family == "shfl":
            out[f"shfl.sync.{st.isa['mode']}"] += len(dword_pairs(st.dst, st.src, p, dps, what))
        elif isinstance(st, Select) and st.kind == "selp":
            out["selp"] += len(dword_pairs(st.dst, st.a, p, dps, what))
        elif (isinstance(st, PermSelect) and st.form == "prmt") or (isinstance(st, Mov) and st.kind == "prmt"):
            out["prmt"] += 1
        elif isinstance(st, Mov) and st.kind in ("rename", "mov"):
            continue
        elif isinstance(st, (LdsStore, LdsLoad)) and not getattr(st, "transpose", 0):
            verb = "st.shared" if st.store else "ld.shared"
            for _ in st.accesses():
                out[verb] += 1
                out[f"{verb}.b{8 * st.width_bytes}"] += 1
        elif isinstance(st, (MatrixLoad, MatrixStore)):
            name = matrix_name(st.store, st.num, st.trans)
            out[name.split(".")[0]] += 1
            out[name] += 1
        elif isinstance(st, Movmatrix):
            out["movmatrix"] += 1
        elif isinstance(st, Barrier):
            out["bar.sync" if st.scope == "workgroup" else "bar.warp.sync"] += 1
        else:
            raise LayoutError(f"{what}: no CUDA form for {plan.arch}")
    return dict(out)
