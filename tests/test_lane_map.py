"""linlayout.lane_map: a lane map is shown as its pattern or in full, never as a truncated prefix."""

from __future__ import annotations

import numpy as np
import pytest

from linlayout.lane_map import lane_map_pattern

L = np.arange(64)


@pytest.mark.parametrize("src_lane,name", [
    (L, "l"),
    (L ^ 0x20, "l^0x20"),
    (L ^ 0x5, "l^0x5"),
    (np.where(L + 4 < 64, L + 4, -1), "l+4, 4 lanes undefined"),
    (np.where(L >= 1, L - 1, -1), "l-1, 1 lanes undefined"),
    ((L & ~15) | ((L + 1) & 15), "l+1 mod 16"),
    ((L + 3) % 64, "l+3 mod 64"),
    (np.full(64, 5), "lane 5"),
    ((L & ~15) + 3, "lane 3 of each 16"),
    (np.full(64, -1), "undefined"),
    (np.stack([L ^ 2, L ^ 2]), "l^0x2"),
    (np.stack([L, L ^ 1]), "warp 0: l; warp 1: l^0x1"),
    (np.arange(32) ^ 16, "l^0x10"),
])
def test_patterns(src_lane, name):
    assert lane_map_pattern(src_lane) == name


def test_anything_else_is_listed_in_full():
    t = np.random.default_rng(0).permutation(64)
    t[:4] = [0, 1, 2, 3]  # an identity-looking prefix is not the map
    assert lane_map_pattern(t) == "[" + ",".join(map(str, t)) + "]"
