"""A dst of which only one copy of each repeated element is read (``plan_conversion(..., dst_one_copy=True)``).

A dst layout whose lane basis ``k`` is zero (a *copy bit*: lane broadcast, as 1-D slices and small tiles
have) holds each of its elements in several lanes of a wave: lanes ``l`` and ``l ^ (1 << k)`` hold the same
slots.  A kernel that stores the dst to memory needs one copy; Triton's stores write one (an EXEC mask,
``v_cmp`` + ``s_and_saveexec``).  The *canonical* lanes are those whose copy bits are all clear (the lowest
lane of each copy class); a plan ``dst_one_copy`` leaves ``dst``'s elements there, and the other lanes'
dst slots are don't-care.  Warp copies (zero warp bases) are not part of the form: every warp holds its
elements.

How the planner uses the freedom: a *filled* dst, ``dst`` with each copy bit's zero lane basis replaced by
a nonzero column (``filled_dsts``), names the same elements in the canonical lanes (lane ``l`` with its copy
bits clear uses none of those bases), so a plan converting ``src`` into a filled dst is a plan of the form.
Such a plan may need fewer instructions: where a copy lane's element comes from the other half of the wave
while the canonical lane's is its own, filling the copy bit with the column that makes the copy lane take
its own element too makes the per-lane selectors uniform (wave32 ``v_permlanex16`` programs, whose
``v_perm_b32`` selectors then are constants).
"""

from __future__ import annotations

import itertools

import numpy as np

from linlayout import LayoutError, LinearLayout

__all__ = ["ONE_COPY_FILLS", "canonical_lanes", "copy_bits", "filled_dsts", "unfilled"]

#: [I] The most filled dsts (``filled_dsts``) the planner tries per conversion: the candidate columns of
#: each copy bit (the dst's register bases, then the src's lane basis of that bit) combined in order, the
#: first ones kept.  The corpora's dsts have 1 to 5 copy bits and 1 to 8 register bases.
ONE_COPY_FILLS = 24


def copy_bits(dst: LinearLayout) -> list[int]:
    """The lane bits ``k`` whose basis in ``dst`` is zero (lanes ``l`` and ``l ^ (1 << k)`` hold the same
    elements), lowest first."""
    return [k for k, column in enumerate(dst.bases.get("lane", [])) if not any(column)]


def canonical_lanes(dst: LinearLayout, wave_size: int) -> np.ndarray:
    """``[wave_size]`` bool: the lanes whose copy bits (``copy_bits``) are all clear, the lane of each
    copy class that a ``dst_one_copy`` plan fills and its kernel stores from."""
    mask = sum(1 << k for k in copy_bits(dst))
    return (np.arange(wave_size) & mask) == 0


def filled_dsts(src: LinearLayout, dst: LinearLayout) -> list[LinearLayout]:
    """The filled dsts the planner tries (module docstring): for each copy bit ``k`` of ``dst`` a candidate
    column, one of ``dst``'s nonzero register bases or ``src``'s lane basis ``k`` where nonzero (each column
    once), every combination in order, at most ``ONE_COPY_FILLS``.  Empty where ``dst`` has no copy bit."""
    bits = copy_bits(dst)
    if not bits:
        return []
    registers = [tuple(b) for b in dst.bases.get("register", []) if any(b)]
    src_lanes = src.bases.get("lane", [])
    choices = [list(dict.fromkeys(registers + ([tuple(src_lanes[k])] if k < len(src_lanes) and any(src_lanes[k])
                                                else [])))
               for k in bits]
    out = []
    for columns in itertools.islice(itertools.product(*choices), ONE_COPY_FILLS):
        obj = dst.to_json()
        for k, column in zip(bits, columns):
            obj["bases"]["lane"][k] = list(column)
        out.append(LinearLayout.from_json(obj))
    return out


def unfilled(filled: LinearLayout, bits: list[int]) -> LinearLayout:
    """``filled`` with its lane bases ``bits`` zero again: the dst a filled one was made of, in the register
    order of ``filled`` (a plan's ``dst`` after the planner chose its packing)."""
    obj = filled.to_json()
    for k in bits:
        if k >= len(obj["bases"]["lane"]):
            raise LayoutError(f"lane bit {k} is not a lane bit of the layout")
        obj["bases"]["lane"][k] = [0] * len(obj["out_dims"])
    return LinearLayout.from_json(obj)
