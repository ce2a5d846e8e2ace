"""cost.lds_conflict_degree, memoized on the access up to a move that keeps its bank cycles, against the
bank model itself (linlayout.synth.banks.lane_cycles) on every access asked for; a transpose load the
target lacks is a LayoutError when priced."""

import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from linlayout import LayoutError, caches
from linlayout.hw.targets import get_target
from linlayout.synth import banks
from linlayout.synth.cost import lds_conflict_degree


@settings(max_examples=300, deadline=None)
@given(st.data(), st.sampled_from(["gfx90a", "gfx942", "gfx950", "gfx1100"]), st.booleans(),
       st.sampled_from([1, 2, 4, 8, 16]), st.sampled_from([8, 16, 32]))
def test_conflict_degree_is_the_bank_models_whatever_was_asked_before(data, arch, store, width_bytes, element_bits):
    if width_bytes * 8 < element_bits:
        return
    element_bytes = element_bits // 8
    lanes = get_target(arch).wave_size
    # a few accesses of one shape at several bases (aligned to the width or not), in a random order
    shape = np.array(data.draw(st.lists(st.integers(0, 255), min_size=lanes, max_size=lanes)), dtype=np.int64)
    shape = shape * width_bytes
    op = get_target(arch).lds_op_name(store, width_bytes)
    caches.clear()
    for base in data.draw(st.lists(st.integers(0, 4096).map(lambda b: b - b % element_bytes), min_size=1,
                                   max_size=6)):
        addr = shape + base
        try:
            cycles, ideal = banks.lane_cycles(arch, op, addr // element_bytes, element_bits)
        except LayoutError:  # an access the op cannot make (lanes not aligned to it)
            continue
        assert lds_conflict_degree(arch, store, width_bytes, addr, element_bits) == cycles / max(1, ideal)
        assert lds_conflict_degree(arch, store, width_bytes, addr[None], element_bits) == cycles / max(1, ideal)


def _transpose_plan(arch: str, width_bytes: int = 8):
    """One wave64 of 16-bit elements stored at ``8 * lane`` and read back by a transpose load of
    ``width_bytes`` per lane (gfx950's ds_read_b64_tr_b16 at 8)."""
    from linlayout import LinearLayout
    from linlayout.synth.plan import LdsLoad, LdsStore, Plan

    lanes = np.arange(64)
    lay = LinearLayout({"register": [[1], [2]], "lane": [[4 << j] for j in range(6)], "warp": []}, [("dim0", 256)])
    steps = [LdsStore(addr=lanes * 8, width_bytes=8, src=[0, 1, 2, 3]),
             LdsLoad(addr=lanes * width_bytes, width_bytes=width_bytes, dst=[4, 5, 6, 7], transpose=16)]
    return Plan(arch, 64, 1, 16, lay, lay, 4, 8, steps, lds_bytes=512)


def test_pricing_a_transpose_load_the_target_lacks_is_one_layout_error():
    """A plan of public steps naming a transpose load its target lacks, priced by ``plan_cost``, is a
    LayoutError naming the load and the targets that have it; before, a RuntimeError (the bank model's
    refusal wrapped as a planner bug, or a bare 'no transpose load moves ...').  A certificate naming
    one is refused when read, with the same line (tests/test_certificate_checks.py)."""
    from linlayout.synth.cost import cost_model, plan_cost

    assert plan_cost(_transpose_plan("gfx950"), cost_model("gfx950"))[0] > 0
    lacking = "gfx942 has no transpose load of 16-bit elements moving 8 bytes per lane; ds_read_b64_tr_b16 is gfx950's"
    with pytest.raises(LayoutError, match=f"^{re.escape(lacking)}$"):
        plan_cost(_transpose_plan("gfx942"), cost_model("gfx942"))
    with pytest.raises(LayoutError, match="^gfx950 has no transpose load of 16-bit elements moving 4 bytes per lane$"):
        plan_cost(_transpose_plan("gfx950", 4), cost_model("gfx950"))
    with pytest.raises(LayoutError, match=f"^{re.escape(lacking)}$"):
        lds_conflict_degree("gfx942", False, 8, np.arange(64) * 8, 16, transpose=16)
