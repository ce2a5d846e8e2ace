"""Warp-id select trees read at a wave-uniform register index (``v_movrels_b32``, ``steps.Movrels``).

A *warp-id select* is a ``Select`` step whose condition is one list per warp, each warp's list constant
over its lanes and the lists not all equal: it picks a register by the warp id, a value uniform in each
wave.  Chained, such selects give each of their destination slots a *leaf* per warp: the slot whose value
warp ``w`` ends up with, ``leaf[w]`` (a slot no warp-id select wrote since, or one whose value was kept).
A select whose leaves lie at one set of offsets from a base slot, ``leaf_i[w] = base_i + shift[w]`` for
every slot ``i`` it writes, is one ``v_movrels_b32`` of ``base`` with ``m0`` the warp's register offset:
one VALU as the select it replaces, and the selects that only fed it go.  So a tree of ``s`` selects with
``r`` roots becomes ``r`` moves and the index's SALU (``cost.movrels_index_salu``); the planner keeps the
indexed plan where its cost model ranks it first (``linlayout.synth.convert``).
"""

from __future__ import annotations

import numpy as np

from linlayout.hw.targets import get_target

from .steps import Movrels, Select, Step

__all__ = ["indexed_steps", "warp_id_condition", "warp_select_trees"]


def warp_id_condition(step: Step) -> tuple[int, ...] | None:
    """The per-warp condition ``c[w]`` of a warp-id select (module docstring), else None."""
    if not isinstance(step, Select) or step.kind != "v_cndmask":
        return None
    cond = np.asarray(step.cond)
    if cond.ndim != 2 or not (cond == cond[:, :1]).all():
        return None
    c = tuple(int(x != 0) for x in cond[:, 0])
    return c if len(set(c)) > 1 else None


def warp_select_trees(steps: list[Step], num_warps: int) -> dict[int, tuple[dict[int, tuple[int, ...]], int]]:
    """Per warp-id select step index ``k``: ``({dst slot: leaf per warp}, selects)`` at the step, ``selects``
    the warp-id selects (this one included) its leaves went through.  A slot's leaves are dropped when a
    later step writes the slot or any of its leaves (the slot's value is then its own leaf)."""
    state: dict[int, tuple[tuple[int, ...], frozenset]] = {}  # slot -> (leaf per warp, select steps)
    out: dict[int, tuple[dict[int, tuple[int, ...]], int]] = {}
    for k, st in enumerate(steps):
        written = set(st.writes())
        cond = warp_id_condition(st)
        new: dict[int, tuple[tuple[int, ...], frozenset]] = {}
        if cond is not None:
            for d, a, b in zip(st.dst, st.a, st.b):
                la, ma = state.get(a, ((a,) * num_warps, frozenset()))
                lb, mb = state.get(b, ((b,) * num_warps, frozenset()))
                new[d] = (tuple(lb[w] if cond[w] else la[w] for w in range(num_warps)), ma | mb | {k})
            through = frozenset().union(*(m for _, m in new.values()))
            out[k] = ({d: leaf for d, (leaf, _) in new.items()}, len(through))
        state = {s: v for s, v in state.items() if s not in written and not written.intersection(v[0])}
        state.update(new)
    return out


def _shift(leaves: dict[int, tuple[int, ...]], dst: list[int]) -> tuple[list[int], tuple[int, ...]] | None:
    """``(base per dst slot, shift per warp)`` when every slot's leaves are its base plus one shift table."""
    bases = [min(leaves[d]) for d in dst]
    shifts = {tuple(x - base for x in leaves[d]) for d, base in zip(dst, bases)}
    return (bases, shifts.pop()) if len(shifts) == 1 else None


def _live_slots(steps: list[Step], k: int, slots: set[int], slots_out: int) -> bool:
    """Does a step after ``k`` read one of ``slots`` before it is written again, or does one reach the end
    as a dst slot (``< slots_out``)?"""
    slots = set(slots)
    for st in steps[k + 1:]:
        if slots.intersection(st.reads()):
            return True
        slots -= set(st.writes())
        if not slots:
            return False
    return any(s < slots_out for s in slots)


def indexed_steps(steps: list[Step], arch: str, num_warps: int, element_bits: int,
                  slots_out: int) -> list[Step] | None:
    """``steps`` with every warp-id select of two levels or more (``warp_select_trees``) whose leaves are a base
    plus one shift table a ``Movrels`` step, and the warp-id selects and moves no longer read dropped; None when
    the target has no ``v_movrels_b32`` (``Target.has_movrels``) or no select qualifies."""
    if not get_target(arch).has_movrels or num_warps < 2:
        return None
    p = max(1, 32 // element_bits)
    trees = warp_select_trees(steps, num_warps)
    new = list(steps)
    replaced = False
    for k, (leaves, selects) in trees.items():
        if selects < 2:
            continue
        st = steps[k]
        fit = _shift(leaves, st.dst)
        if fit is None or any(s % p for s in fit[1]):
            continue
        new[k] = Movrels(dst=list(st.dst), src=fit[0], shift=fit[1])
        replaced = True
    if not replaced:
        return None
    for k in range(len(new) - 1, -1, -1):  # last first: a select that only fed a dropped one goes too
        droppable = isinstance(new[k], Movrels) or warp_id_condition(new[k]) is not None
        if droppable and not _live_slots(new, k, set(new[k].writes()), slots_out):
            del new[k]
    return new
