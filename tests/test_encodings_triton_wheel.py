"""linlayout's encodings against the real Triton 3.9.0 wheel (Gluon's builder, on the CPU).

3,400 random valid encodings of every kind both accept (tests/triton_random_encodings.py),
built by linlayout and, from the Gluon Python that ``gluon_source`` prints, by Triton's
``to_linear_layout``; every layout both accept must be equal, base for base.  The same
worker compares Triton's ``bank_conflicts`` with our re-derivation of its formula
(``linlayout.synth.triton_swizzle.bank_conflicts_memdesc``), and checks that ``to_gluon``'s
``DistributedLinearLayout``/``SharedLinearLayout`` text gives Triton the same layout.
Triton runs in a worker process (it aborts on some inputs).  Skipped without triton 3.9.0.
``LINLAYOUT_TRITON_SEED`` picks another random corpus.
"""

from __future__ import annotations

import os
import random
from collections import Counter

import pytest

from linlayout import LayoutError
from linlayout.encodings import encoding_from_params
from linlayout.encodings.gluon import gluon_source, to_gluon
from linlayout.synth.triton_swizzle import bank_conflicts_memdesc
from triton_oracle import TRITON_VERSION, ask_triton, triton_version
from triton_random_encodings import KINDS, random_encoding, random_encodings, swizzled_params

pytestmark = pytest.mark.skipif(triton_version() != TRITON_VERSION,
                                reason=f"triton=={TRITON_VERSION} is not installed")

SEED = int(os.environ.get("LINLAYOUT_TRITON_SEED", "0"))
LAYOUT_CASES = 3400
BANK_CASES = 400
#: Why Triton may refuse an encoding linlayout builds: Gluon's SharedLinearLayout cannot be
#: empty (a shared layout of one element).
TRITON_ONLY_LIMITS = ("SharedLinearLayout offset_bases must not be empty",)
#: Bank-conflict cases where linlayout's model refuses and Triton aborts, sent to confirm it.
ABORTS_CHECKED = 4


def _build(case: dict):
    params = dict(case)
    kind, shape = params.pop("encoding"), params.pop("shape")
    encoding = encoding_from_params(kind, params)
    return encoding, encoding.to_linear_layout(shape)


def _bases(layout, dims) -> dict:
    return {d: [list(b) for b in layout.bases.get(d, [])] for d in dims}


def _same(layout, answer) -> bool:
    dims = list(answer["bases"])
    return (set(layout.in_dim_names) <= set(dims) and _bases(layout, dims) == answer["bases"]
            and [size for _, size in layout.out_dims] == answer["shape"])


@pytest.fixture(scope="module")
def layout_results():
    """Per case: (case, linlayout's layout or its LayoutError, Triton's answer, to_gluon's answer)."""
    cases = random_encodings(SEED, LAYOUT_CASES)
    ours, requests = [], []
    for case in cases:
        try:
            encoding, layout = _build(case)
        except LayoutError as e:
            ours.append(e)
            requests.append({"op": "layout", "gluon": "None", "shape": case["shape"]})
            continue
        ours.append(layout)
        requests.append({"op": "layout", "gluon": gluon_source(encoding), "shape": case["shape"]})
    linear = [i for i, layout in enumerate(ours) if not isinstance(layout, LayoutError)][::8]
    requests += [{"op": "layout", "gluon": to_gluon(ours[i]), "shape": cases[i]["shape"]} for i in linear]
    answers = ask_triton(requests)
    return cases, ours, answers[:len(cases)], dict(zip(linear, answers[len(cases):]))


def _classify(layout, answer) -> str:
    if isinstance(layout, LayoutError):
        return "neither" if "error" in answer else "triton_only"
    if "error" in answer:
        return "linlayout_only"
    return "equal" if _same(layout, answer) else "different"


def test_every_layout_both_accept_is_triton_s(layout_results):
    cases, ours, answers, _ = layout_results
    counts = Counter(_classify(layout, answer) for layout, answer in zip(ours, answers))
    different = [(case, layout.to_json(), answer) for case, layout, answer in zip(cases, ours, answers)
                 if _classify(layout, answer) == "different"]
    assert different == []
    assert counts["equal"] >= 3000, counts


def test_every_kind_is_compared(layout_results):
    cases, ours, answers, _ = layout_results
    equal = Counter(case["encoding"] for case, layout, answer in zip(cases, ours, answers)
                    if _classify(layout, answer) == "equal")
    assert set(equal) == set(KINDS)
    assert min(equal.values()) >= 100, equal


def test_rejections_agree(layout_results):
    """linlayout refuses nothing Triton builds; Triton refuses only what Gluon cannot express."""
    cases, ours, answers, _ = layout_results
    triton_only = [case for case, layout, answer in zip(cases, ours, answers)
                   if _classify(layout, answer) == "triton_only"]
    assert triton_only == []
    refused = {answer["error"] for layout, answer in zip(ours, answers) if _classify(layout, answer) == "linlayout_only"}
    assert all(any(limit in error for limit in TRITON_ONLY_LIMITS) for error in refused), refused


def test_to_gluon_text_gives_triton_the_same_layout(layout_results):
    cases, ours, _, printed = layout_results
    assert len(printed) > 300
    for i, answer in printed.items():
        if "error" in answer:  # only the one-element shared layouts Gluon cannot express
            assert any(limit in answer["error"] for limit in TRITON_ONLY_LIMITS), (cases[i], answer)
        else:
            assert _same(ours[i], answer), (cases[i], to_gluon(ours[i]), answer)


def _bank_case(rng: random.Random) -> tuple[dict, int | LayoutError]:
    """A distributed tensor stored to a swizzled shared layout (one CTA): Triton's request
    and linlayout's count of Triton's bank conflicts (or its refusal)."""
    kind = rng.choice(("blocked", "blocked", "amd_mfma", "amd_mfma_dot_operand", "nvidia_mma",
                       "dot_operand_of_nvidia_mma", "amd_wmma"))
    case = random_encoding(rng, kind)
    one_cta = {k: v for k, v in case.items() if not k.startswith("CTA")}
    if "parent" in case:
        one_cta["parent"] = {k: v for k, v in case["parent"].items() if not k.startswith("CTA")}
    shared_params = {k: v for k, v in swizzled_params(rng, len(case["shape"])).items() if not k.startswith("CTA")}
    reg_encoding, reg = _build(one_cta)
    shared_encoding = encoding_from_params("swizzled_shared", shared_params)
    shared = shared_encoding.to_linear_layout(case["shape"])
    bitwidth = rng.choice((8, 16, 32, 64))
    request = {"op": "banks", "reg": gluon_source(reg_encoding), "shared": gluon_source(shared_encoding),
               "shape": case["shape"], "bitwidth": bitwidth, "lanes": reg.in_dim_size("lane")}
    try:
        return request, bank_conflicts_memdesc(reg, shared, bitwidth, 32)[0]
    except LayoutError as e:
        return request, e


def test_bank_conflicts_are_triton_s():
    rng = random.Random(SEED)
    counted, refused = [], []
    while len(counted) < BANK_CASES:
        request, ours = _bank_case(rng)
        (refused if isinstance(ours, LayoutError) else counted).append((request, ours))
    sent = counted + refused[:ABORTS_CHECKED]
    answers = ask_triton([request for request, _ in sent])
    for (request, ours), answer in zip(sent, answers):
        if isinstance(ours, LayoutError):  # tile smaller than one bank line: Triton aborts
            assert answer["error"].startswith("worker died"), (request, answer)
        else:
            assert answer.get("conflicts") == ours, (request, ours, answer)
    assert len({ours for _, ours in counted}) > 3  # not all zero: the comparison can fail
