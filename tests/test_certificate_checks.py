"""A plan certificate is user input: what no run, price or emission of it can accept is refused when it
is read (``Plan.from_certificate``), as one LayoutError line naming the item, on every target family."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pytest

from linlayout import LayoutError, LinearLayout
from linlayout.hw.lds import access_alignment, misaligned_address
from linlayout.synth.convert import plan_conversion
from linlayout.synth.cost import cost_model, lds_conflict_degree, plan_cost
from linlayout.synth.emulator import run_isa
from linlayout.synth.plan import Plan
from linlayout.synth.steps import LdsStore

# a transpose: 8 x 32 elements, 2 warps; lanes run along dim1 in src, along dim0 in dst
_SRC = LinearLayout({"register": [[1, 0], [2, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [4, 0]],
                     "warp": [[0, 16]]}, [("dim0", 8), ("dim1", 32)])
_DST = LinearLayout({"register": [[0, 1], [0, 2]], "lane": [[1, 0], [2, 0], [4, 0], [0, 4], [0, 8]],
                     "warp": [[0, 16]]}, [("dim0", 8), ("dim1", 32)])
_LANES64 = LinearLayout({"register": [[1, 0], [2, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]],
                         "warp": [[0, 32]]}, [("dim0", 8), ("dim1", 64)])
_LANES64_T = LinearLayout({"register": [[0, 1], [0, 2]], "lane": [[1, 0], [2, 0], [4, 0], [0, 4], [0, 8], [0, 16]],
                           "warp": [[0, 32]]}, [("dim0", 8), ("dim1", 64)])


def _lds_certificate(arch: str, element_bits: int = 16) -> dict:
    """The JSON certificate of a planned LDS round trip on ``arch`` (a wave64 transpose on CDNA)."""
    src, dst = (_LANES64, _LANES64_T) if arch.startswith("gfx9") else (_SRC, _DST)
    return json.loads(plan_conversion(src, dst, arch, element_bits, strategy="lds").dumps())


def _first(cert: dict, op: str) -> tuple[int, dict]:
    return next((k, item) for k, item in enumerate(cert["steps"]) if item["op"] == op)


# ---------------------------------------------------------------------- 1. alignment
@pytest.mark.parametrize("arch", ["gfx942", "gfx950", "gfx1100", "gfx1250", "sm_80", "sm_90"])
def test_a_misaligned_lds_address_is_refused_when_read(arch):
    """Lane 5 of warp 1 of the first LDS store moved by half its width (no longer a multiple of it) is
    refused when read; before, the plan was read and only pricing it raised the bank model's RuntimeError."""
    cert = _lds_certificate(arch)
    assert plan_cost(Plan.from_certificate(cert), cost_model(arch))[0] > 0
    k, item = _first(cert, "lds_store")
    width_bytes = item["isa"]["bytes"]
    assert width_bytes >= 2
    addr = np.array(item["addr"])
    addr[1, 5] += width_bytes // 2
    item["addr"] = addr.tolist()
    want = (f"plan step {k} (lds_store): lane 5 of warp 1 addresses byte {addr[1, 5]}, not a multiple of "
            f"{width_bytes} (a {width_bytes}-byte access)")
    with pytest.raises(LayoutError, match=f"^{re.escape(want)}$"):
        Plan.from_certificate(cert)


def test_a_misaligned_ldmatrix_row_is_refused_when_read():
    """Row 3 of the first ldmatrix moved by 4 bytes (its elem_addr moved with it) is refused when read."""
    plan = Plan.from_certificate(_lds_certificate("sm_80", 32))
    k, step = next((k, st) for k, st in enumerate(plan.steps) if st.op == "ldmatrix")
    lane_addr = np.array(step.addr)
    lane_addr[0, 3] += 4
    plan.steps[k] = replace(step, addr=lane_addr)
    cert = json.loads(plan.dumps())
    k = [item["op"] for item in cert["steps"]].index("ldmatrix")
    want = (f"plan step {k} (ldmatrix): a row address: lane 3 of warp 0 addresses byte {lane_addr[0, 3]}, not a "
            f"multiple of 16 (a 16-byte access)")
    with pytest.raises(LayoutError, match=f"^{re.escape(want)}$"):
        Plan.from_certificate(cert)


@pytest.mark.parametrize("width_bytes", [1, 2, 4, 8, 16])
def test_the_reader_the_emulator_and_the_bank_model_share_one_alignment_rule(width_bytes):
    """For addresses shifted by every byte below the width: the reader refuses the access exactly when the
    emulator does (with the same phrase) and the bank model does (a RuntimeError for a planner's plan)."""
    lanes = np.arange(64)
    lay = LinearLayout({"register": [[1], [2], [4], [8]], "lane": [[16 << j] for j in range(6)], "warp": []},
                       [("dim0", 1024)])
    for shift in range(width_bytes):
        addr = lanes * 16 + shift * (lanes % 3 == 1)
        slots = list(range(width_bytes))  # 8-bit elements: one a byte
        plan = Plan("gfx942", 64, 1, 8, lay, lay, 16, 16, [LdsStore(addr=addr, width_bytes=width_bytes, src=slots)],
                    lds_bytes=2048)
        phrase = misaligned_address(addr, width_bytes)
        assert bool(phrase) == (shift % access_alignment(width_bytes) != 0)
        if not phrase:
            Plan.from_certificate(json.loads(plan.dumps()))
            run_isa(plan)
            lds_conflict_degree("gfx942", True, width_bytes, addr, 8)
            continue
        assert phrase == f"lane 1 addresses byte {16 + shift}, not a multiple of {width_bytes} " \
                         f"(a {width_bytes}-byte access) (21 lanes in all)"
        with pytest.raises(LayoutError, match=f"^plan step 0 \\(lds_store\\): {re.escape(phrase)}$"):
            Plan.from_certificate(json.loads(plan.dumps()))
        with pytest.raises(RuntimeError, match=re.escape(phrase)):
            run_isa(plan)
        with pytest.raises(RuntimeError, match="not aligned"):
            lds_conflict_degree("gfx942", True, width_bytes, addr, 8)


# ---------------------------------------------------------------------- 2. transpose loads
def test_a_transpose_load_the_target_lacks_is_refused_when_read():
    """gfx950's transpose-reading plan of FA's P operand, its certificate relabelled gfx942: refused when
    read with ``missing_transpose_load``'s line; before, it was read and refused only by verification
    (and priced, a LayoutError from the bank model)."""
    acc = LinearLayout({"register": [[1, 0], [2, 0], [8, 0], [16, 0], [0, 32]],
                        "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]], "warp": []},
                       [("dim0", 32), ("dim1", 64)])
    dot_a = LinearLayout({"register": [[0, 1], [0, 2], [0, 4], [0, 16], [0, 32]],
                          "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 8]], "warp": []},
                         [("dim0", 32), ("dim1", 64)])
    cert = json.loads(plan_conversion(acc, dot_a, "gfx950", 16).dumps())
    k = next(k for k, item in enumerate(cert["steps"]) if "transpose" in item.get("isa", {}))
    assert cert["steps"][k]["isa"]["transpose"] == "ds_read_b64_tr_b16"
    Plan.from_certificate(cert)
    cert["arch"] = "gfx942"
    want = (f"plan step {k} (lds_load): gfx942 has no transpose load of 16-bit elements moving 8 bytes per lane; "
            f"ds_read_b64_tr_b16 is gfx950's")
    with pytest.raises(LayoutError, match=f"^{re.escape(want)}$"):
        Plan.from_certificate(cert)
