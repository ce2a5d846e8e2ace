"""cost.lds_conflict_degree, memoized on the access up to a move that keeps its bank cycles, against the
bank model itself (linlayout.synth.banks.lane_cycles) on every access asked for."""

import numpy as np
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
