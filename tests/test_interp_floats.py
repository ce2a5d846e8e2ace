"""Narrow float formats of the interpreter (rounding, encodings) against torch's own
implementations, and the float math ops on the interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import needs
from linlayout.lowering.interp.floats import FORMATS, decode_bits, encode_bits, round_to_format

torch = needs.module("torch")

TORCH_FP8 = {"f8E4M3FN": "float8_e4m3fn", "f8E5M2": "float8_e5m2", "f8E4M3FNUZ": "float8_e4m3fnuz",
             "f8E5M2FNUZ": "float8_e5m2fnuz"}


@pytest.mark.parametrize("name", sorted(TORCH_FP8))
def test_fp8_decode_matches_torch_for_every_code(name):
    codes = np.arange(256, dtype=np.uint8)
    ours = decode_bits(codes, FORMATS[name])
    theirs = torch.from_numpy(codes).view(getattr(torch, TORCH_FP8[name])).double().numpy()
    np.testing.assert_array_equal(ours, theirs)
    finite = ~np.isnan(ours)
    np.testing.assert_array_equal(encode_bits(ours[finite], FORMATS[name]), codes[finite])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=False, width=32, min_value=-4e5, max_value=4e5), min_size=1, max_size=64))
def test_rounding_matches_torch_and_numpy(values):
    x = np.array(values, np.float32)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(round_to_format(x, FORMATS["f16"]), x.astype(np.float16).astype(np.float64))
    t = torch.from_numpy(x)
    np.testing.assert_array_equal(round_to_format(x, FORMATS["bf16"]), t.to(torch.bfloat16).double().numpy())
    # values in range only: out-of-range conversion differs between libraries (inf / NaN / saturation)
    for name in ("f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ", "f8E4M3FN"):
        fmt = FORMATS[name]
        inside = np.abs(x) <= fmt.max_finite
        ours = round_to_format(x[inside], fmt)
        theirs = t[torch.from_numpy(inside)].to(getattr(torch, TORCH_FP8[name])).double().numpy()
        np.testing.assert_array_equal(ours, theirs, err_msg=name)


def test_mx_formats_decode_by_formula():
    # OCP MX: f6E2M3 (bias 1), f6E3M2 (bias 3), f4E2M1 (bias 1); no inf/nan
    for name, e, m, bias in (("f6E2M3FN", 2, 3, 1), ("f6E3M2FN", 3, 2, 3), ("f4E2M1FN", 2, 1, 1)):
        n = 1 + e + m
        codes = np.arange(1 << n)
        got = decode_bits(codes, FORMATS[name])
        for c in codes:
            s, ef, mf = c >> (n - 1), (c >> m) & ((1 << e) - 1), c & ((1 << m) - 1)
            v = mf / 2**m * 2.0 ** (1 - bias) if ef == 0 else (1 + mf / 2**m) * 2.0 ** (ef - bias)
            assert got[c] == (-v if s else v), (name, c)
    assert FORMATS["f4E2M1FN"].max_finite == 6.0 and FORMATS["f6E2M3FN"].max_finite == 7.5
    assert round_to_format(np.array([100.0, 2.6, 2.4]), FORMATS["f4E2M1FN"]).tolist() == [6.0, 3.0, 2.0]
    e8 = decode_bits(np.array([0, 127, 130, 255]), FORMATS["f8E8M0FNU"])
    assert e8[1] == 1.0 and e8[2] == 8.0 and e8[0] == 2.0**-127 and np.isnan(e8[3])


@needs.mlir
def test_math_ops_on_the_interpreter():
    from interp_kernels import multi_kernel, run_lanes

    x = np.abs(np.random.default_rng(1).standard_normal(64)).astype(np.float32) + np.float32(0.5)
    ops = ["sqrt", "absf", "exp", "log"]
    body = "\n".join(f"      %g{k} = math.{o} %x : f32\n      %res{k} = arith.bitcast %g{k} : f32 to i32"
                     for k, o in enumerate(ops))
    body += "\n      %g4 = rocdl.exp2 %x f32 -> f32\n      %res4 = arith.bitcast %g4 : f32 to i32"
    text = multi_kernel(body, 5, 64, in_type="f32")
    got = run_lanes(text, x, np.uint32, out_shape=5 * 64).reshape(5, 64).view(np.float32)
    np.testing.assert_array_equal(got[0], np.sqrt(x))  # IEEE sqrt is correctly rounded
    np.testing.assert_array_equal(got[1], x)
    # exp/log/exp2 are the hardware's approximations; the interpreter rounds the exact value
    np.testing.assert_allclose(got[2], np.exp(x.astype(np.float64)), rtol=2**-23)
    np.testing.assert_allclose(got[3], np.log(x.astype(np.float64)), rtol=2**-22)
    np.testing.assert_allclose(got[4], np.exp2(x.astype(np.float64)), rtol=2**-23)
