"""Every ``to_linear_layout/*`` vector of tests/data/triton_vectors_public.json
reproduces exactly (bases, dim order and sizes) through ``from_triton`` and through
``linlayout layout --triton ... --json``."""

from __future__ import annotations

import json

import pytest
from repo_data import triton_vectors

from linlayout.cli import main
from linlayout.encodings import from_triton


def _cases():
    out = []
    for i, v in enumerate(triton_vectors()):
        if v["kind"].startswith("to_linear_layout/"):
            encoding = v["kind"].split("/", 1)[1]
            out.append(pytest.param({"encoding": encoding, **v["params"]}, v["expected"], id=f"{i}-{encoding}"))
    return out


CASES = _cases()


@pytest.mark.parametrize("obj, expected", CASES)
def test_from_triton_reproduces_vector(obj, expected):
    assert from_triton(obj).to_json() == expected


@pytest.mark.parametrize("obj, expected", CASES)
def test_cli_layout_reproduces_vector(obj, expected, capsys):
    assert main(["layout", "--triton", json.dumps(obj), "--json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out) == expected
    assert out.count("\n") == 1  # exactly one JSON object


def test_every_encoding_kind_is_covered():
    kinds = {c.values[0]["encoding"] for c in CASES}
    assert kinds >= {
        "amd_mfma", "amd_mfma_dot_operand", "amd_wmma", "amd_wmma_dot_operand", "blocked",
        "dot_operand_of_blocked", "slice_of_blocked", "swizzled_shared", "amd_rotating_shared",
        "nvidia_mma", "dot_operand_of_nvidia_mma",
    }
