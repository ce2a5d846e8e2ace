"""The planner's ``movmatrix`` stage (NVIDIA): an 8x8 transpose of 16-bit halves in every register.

``movmatrix.sync.aligned.m8n8.trans.b16`` (linlayout.synth.steps.Movmatrix) takes a register holding
an 8x8 matrix of 16-bit halves in the plain ``ldmatrix`` fragment -- half ``h``, lane bits 0, 1 the
column, lane bits 2, 3, 4 the row -- to the same fragment of its transpose.  Applied to every
register of a layout, it swaps, as GF(2) columns, the half bit ``(h, lane 0, lane 1)`` with
``(lane 2, lane 3, lane 4)``: the layout after it has

* the half's column = the old lane 2's, lane 0's = old lane 3's, lane 1's = old lane 4's,
* lane 2's = the old half's, lane 3's = old lane 0's, lane 4's = old lane 1's,

every other column kept.  The half is register bit ``z - 1`` (``z = log2(32 / element_bits)``: bit 0
of 16-bit elements, bit 1 of 8-bit ones, whose register bit 0 picks the byte inside the half).
These are the planner's formulas; the emulator runs the instruction by its oracle
(linlayout.synth.isa_lanes.movmatrix_sources).
"""

from __future__ import annotations

from linlayout import LinearLayout

__all__ = ["movmatrix_layout", "worth_trying"]


def movmatrix_layout(layout: LinearLayout, element_bits: int) -> LinearLayout | None:
    """``layout`` (register, lane, warp -> tensor) after a movmatrix of every register (module
    docstring); None when it has no 16-bit halves in registers (32- or 64-bit elements, too few
    register bits) or no 32 lanes."""
    if element_bits not in (8, 16):
        return None
    half = 1 if element_bits == 8 else 0
    bases = {k: [list(b) for b in v] for k, v in layout.bases.items()}
    regs, lanes = bases.get("register", []), bases.get("lane", [])
    if len(regs) <= half or len(lanes) != 5:
        return None
    old_half = regs[half]
    regs[half] = lanes[2]
    bases["lane"] = [lanes[3], lanes[4], old_half, lanes[0], lanes[1]]
    return LinearLayout(bases, layout.out_dims)


#: [I] pruning: lane columns equal to dst's that the stage must add before its plans are built (on the
#: NVIDIA corpus no plan with a stage that added one was chosen: 21 of the 102 tries; 36 were chosen)
MIN_LANES_GAINED = 2


def worth_trying(src: LinearLayout, moved: LinearLayout, dst: LinearLayout) -> bool:
    """Does the movmatrix stage bring ``src``'s lanes closer to ``dst``'s: at least MIN_LANES_GAINED
    more lane columns equal to ``dst``'s after it (``moved``) than before?  (The planner builds the
    stage's plans only then.)"""
    def same(a: LinearLayout) -> int:
        return sum(x == y for x, y in zip(a.bases["lane"], dst.bases["lane"]))

    return same(moved) >= same(src) + MIN_LANES_GAINED
