"""The Python constructors: worked examples, independent formulas (ISA / classic swizzle /
mixed-radix blocked), CGA handling and parameter errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from repo_data import triton_vectors

from linlayout import LayoutError, LinearLayout
from linlayout.encodings import (
    Blocked,
    Mfma,
    Wmma,
    amd_rotating_shared,
    blocked,
    choose_wmma_cta_linear_layout,
    dot_operand,
    from_triton,
    mfma_dot_operand,
    mfma_layout,
    slice_layout,
    swizzled_shared,
    wmma_dot_operand,
    wmma_layout,
)


def _all_inputs(layout: LinearLayout, fixed: dict | None = None):
    """Every input of ``layout`` as arrays (in dims in ``fixed`` pinned)."""
    fixed = fixed or {}
    names = [n for n, _ in layout.in_dims if n not in fixed]
    grids = np.meshgrid(*[np.arange(layout.in_dim_size(n)) for n in names], indexing="ij")
    inp = {n: g.ravel() for n, g in zip(names, grids)}
    inp.update({n: np.full(grids[0].size, v) for n, v in fixed.items()})
    return inp


# --------------------------------------------------------------- worked examples
def test_mfma_32x32_worked_example_from_reference():
    # docs/triton_facts.md 1e: 32x32 instr, warps [2,4], 128x128, non-transposed
    L = mfma_layout(3, (32, 32, 8), (2, 4), (128, 128))
    assert L.bases == {
        "register": [[1, 0], [2, 0], [8, 0], [16, 0], [64, 0]],
        "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]],
        "warp": [[0, 32], [0, 64], [32, 0]],
        "block": [],
    }
    assert L.out_dims == [("dim0", 128), ("dim1", 128)]


@pytest.mark.parametrize("m, bits", [(32, 32), (16, 32), (16, 64), (32, 16)])
def test_mfma_single_instruction_matches_isa_formula(m, bits):
    """docs/amd_facts.md 3.2: C[i][j] is item (i%H) + H*(i//(H*M_I)) of lane j + N*((i//H) % M_I), one block."""
    n = m
    h = 1 if bits == 64 else 4
    m_i = 64 // n
    L = mfma_layout(3, (m, n, 8), (1, 1), (m, n), element_bits=bits)
    inp = _all_inputs(L, {"warp": 0, "block": 0})
    out = L.apply(inp)
    i, j = out["dim0"], out["dim1"]
    assert np.array_equal(inp["register"], (i % h) + h * (i // (h * m_i)))
    assert np.array_equal(inp["lane"], j + n * ((i // h) % m_i))
    assert L.is_invertible()


@pytest.mark.parametrize("instr", [(32, 32, 8), (16, 16, 16)])
def test_mfma_transposed_swaps_rows_and_columns_inside_the_tile(instr):
    one_a = mfma_layout(3, instr, (1, 1), instr[:2])
    one_t = mfma_layout(3, instr, (1, 1), instr[:2], is_transposed=True)
    assert one_t.bases == {d: [[b[1], b[0]] for b in bl] for d, bl in one_a.bases.items()}
    # the warp arrangement over the tensor does not change
    a = mfma_layout(3, instr, (2, 2), (128, 128))
    t = mfma_layout(3, instr, (2, 2), (128, 128), is_transposed=True)
    assert a.bases["warp"] == t.bases["warp"]


def test_mfma_dot_operand_is_independent_of_is_transposed():
    for op in (0, 1):
        shape = (64, 32) if op == 0 else (32, 64)
        a = mfma_dot_operand(Mfma(3, (32, 32, 8), (2, 2)), op, 4, shape)
        b = mfma_dot_operand(Mfma(3, (32, 32, 8), (2, 2), is_transposed=True), op, 4, shape)
        assert a == b


def test_mfma_dot_operand_broadcasts_over_the_other_operands_warps():
    # A of a 2x2-warp MFMA: warps along N hold copies of the same A rows
    A = mfma_dot_operand(Mfma(3, (32, 32, 8), (2, 2)), 0, 4, (64, 16))
    assert A.bases["warp"] == [[0, 0], [32, 0]]
    # kWidth consecutive K per lane, then 32 lanes along M, then lane 32 along K
    assert A.bases["register"][:2] == [[0, 1], [0, 2]]
    assert A.bases["lane"] == [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 4]]


def test_wmma_v2_tile_formula():
    """RDNA4 16x16 accumulator: register r, lane l -> (M = r + 8*(l//16), N = l % 16)."""
    L = wmma_layout(2, (1, 1), (16, 16))
    inp = _all_inputs(L, {"warp": 0, "block": 0})
    out = L.apply(inp)
    assert np.array_equal(out["dim0"], inp["register"] + 8 * (inp["lane"] // 16))
    assert np.array_equal(out["dim1"], inp["lane"] % 16)


def test_wmma_v1_operand_lanes_16_to_31_are_copies():
    A = wmma_dot_operand(Wmma(1, (1, 1)), 0, 16, (16, 16))
    assert A.bases["lane"][4] == [0, 0]
    assert A.is_surjective() and not A.is_injective()


def test_choose_wmma_cta_linear_layout_order():
    cta = choose_wmma_cta_linear_layout(2, (2, 4), (2, 1))
    # dim1 first: tilesPerWarp[1] (none), 4 warps; then dim0: 2 tiles, 2 warps
    assert cta.bases == {"register": [[1, 0]], "warp": [[0, 1], [0, 2], [2, 0]]}


# --------------------------------------------------------------- blocked / shared
@settings(max_examples=40, deadline=None)
@given(st.data())
def test_blocked_is_mixed_radix(data):
    """Shape = spt*tpw*wpc: coordinate along d is (w_d*tpw_d + l_d)*spt_d + r_d, ids split in order."""
    rank = data.draw(st.integers(1, 3))
    p2 = st.sampled_from([1, 2, 4])
    spt = [data.draw(p2) for _ in range(rank)]
    tpw = [data.draw(p2) for _ in range(rank)]
    wpc = [data.draw(p2) for _ in range(rank)]
    order = data.draw(st.permutations(list(range(rank))))
    shape = [s * t * w for s, t, w in zip(spt, tpw, wpc)]
    L = blocked(spt, tpw, wpc, order, shape)
    inp = _all_inputs(L, {"block": 0})

    def split(ids, sizes):
        coords = [None] * rank
        for d in order:
            coords[d] = ids % sizes[d]
            ids = ids // sizes[d]
        return coords

    r, l, w = split(inp["register"], spt), split(inp["lane"], tpw), split(inp["warp"], wpc)
    out = L.apply(inp)
    for d in range(rank):
        assert np.array_equal(out[f"dim{d}"], (w[d] * tpw[d] + l[d]) * spt[d] + r[d])


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([1, 2, 4, 8]), st.sampled_from([1, 2, 4]), st.sampled_from([1, 2, 4, 8]),
       st.sampled_from([4, 8, 16, 32]), st.sampled_from([8, 16, 64]), st.booleans())
def test_swizzled_shared_is_the_xor_swizzle(vec, per_phase, max_phase, rows, cols, col_major):
    """Offset o holds row R = o // cols at stored column c' = o % cols; its column is
    c' ^ (vec * ((R // perPhase) % maxPhase)) % cols."""
    order = (0, 1) if col_major else (1, 0)
    shape = (cols, rows) if col_major else (rows, cols)
    L = swizzled_shared(vec, per_phase, max_phase, order, shape)
    o = np.arange(rows * cols)
    out = L.apply({"offset": o})
    row = o // cols
    col = (o % cols) ^ ((vec * ((row // per_phase) % max_phase)) % cols)
    got_row, got_col = (out["dim1"], out["dim0"]) if col_major else (out["dim0"], out["dim1"])
    assert np.array_equal(got_row, row) and np.array_equal(got_col, col)
    assert L.is_invertible()


def test_rotating_shared_rotates_the_phase_per_block_of_rows():
    L = amd_rotating_shared(4, 2, 4, (1, 0), (64, 64))
    for r in range(64):
        phase = ((r // 2) % 4) ^ ((r // 8) % 4)
        assert L.apply({"offset": r * 64})["dim1"] == (4 * phase) % 64


def test_slice_of_mfma_drops_the_sliced_dim():
    # slicing N away from a 32x32 MFMA: the 32 N-lanes hold copies, registers keep the rows
    s = slice_layout(Mfma(3, (32, 32, 8), (1, 1)), 1, (32,))
    assert s.out_dims == [("dim0", 32)]
    assert s.bases["lane"][:5] == [[0]] * 5
    assert s.bases["lane"][5] == [4]
    assert s.is_surjective()


def test_blocked_dot_operand_holds_all_of_k():
    A = dot_operand(Blocked((1, 4), (8, 4), (2, 2), (1, 0)), 0, 0, (32, 16))
    # lanes and warps never move along K (dim1): they broadcast; registers cover all of K
    assert all(b[1] == 0 for b in A.bases["lane"] + A.bases["warp"])
    ks = {A.apply({"register": r})["dim1"] for r in range(A.in_dim_size("register"))}
    assert ks == set(range(16))
    assert A.is_surjective()


# --------------------------------------------------------------- CGA
def test_cga_split_and_broadcast():
    # 2 CTAs along dim0, each owning half; then 2 CTAs that share (split 1) along dim1
    L = blocked((1, 1), (4, 8), (1, 1), (1, 0), (8, 8), ctas_per_cga=(2, 2), cta_split_num=(2, 1), cta_order=(1, 0))
    assert L.bases["block"] == [[0, 0], [4, 0]]
    assert L.bases["lane"] == [[0, 1], [0, 2], [0, 4], [1, 0], [2, 0]]


def test_cga_from_triton_params():
    obj = {"encoding": "blocked", "shape": [8, 8], "sizePerThread": [1, 1], "threadsPerWarp": [4, 8],
           "warpsPerCTA": [1, 1], "order": [1, 0], "CTAsPerCGA": [2, 2], "CTASplitNum": [2, 1], "CTAOrder": [1, 0]}
    assert from_triton(obj) == blocked((1, 1), (4, 8), (1, 1), (1, 0), (8, 8), ctas_per_cga=(2, 2),
                                       cta_split_num=(2, 1), cta_order=(1, 0))


# --------------------------------------------------------------- constructors vs vectors
def _vector_params(kind: str):
    vectors = triton_vectors(f"to_linear_layout/{kind}")
    assert vectors, f"no to_linear_layout/{kind} vector"
    return [(v["params"], v["expected"]) for v in vectors]


def test_constructors_reproduce_mfma_vectors():
    for p, exp in _vector_params("amd_mfma"):
        got = mfma_layout(p["version"], p["instrShape"], p["warpsPerCTA"], p["shape"],
                          is_transposed=p["isTransposed"], tiles_per_warp=p["tilesPerWarp"],
                          element_bits=p["elementBitWidth"])
        assert got.to_json() == exp


def test_constructors_reproduce_mfma_and_wmma_operand_vectors():
    for kind, cls, fn in (("amd_mfma_dot_operand", Mfma, mfma_dot_operand),
                          ("amd_wmma_dot_operand", Wmma, wmma_dot_operand)):
        for p, exp in _vector_params(kind):
            parent = cls.from_params(p["parent"])
            assert fn(parent, p["opIdx"], p["kWidth"], p["shape"]).to_json() == exp


def test_constructors_reproduce_blocked_and_shared_vectors():
    for p, exp in _vector_params("blocked"):
        got = blocked(p["sizePerThread"], p["threadsPerWarp"], p["warpsPerCTA"], p["order"], p["shape"],
                      ctas_per_cga=p["CTAsPerCGA"], cta_split_num=p["CTASplitNum"], cta_order=p["CTAOrder"])
        assert got.to_json() == exp
    for p, exp in _vector_params("swizzled_shared"):
        if p["CTAsPerCGA"] == [1] * len(p["shape"]):
            assert swizzled_shared(p["vec"], p["perPhase"], p["maxPhase"], p["order"], p["shape"]).to_json() == exp


def test_wmma_constructor_reproduces_vectors():
    for p, exp in _vector_params("amd_wmma"):
        got = wmma_layout(p["version"], p["warpsPerCTA"], p["shape"], instr_shape=p["instrShape"],
                          is_transposed=p["isTransposed"], tiles_per_warp=p["tilesPerWarp"])
        assert got.to_json() == exp


# --------------------------------------------------------------- errors
MFMA = {"encoding": "amd_mfma", "shape": [64, 64], "version": 3, "warpsPerCTA": [2, 2], "instrShape": [32, 32, 8]}


@pytest.mark.parametrize("patch, needle", [
    ({"version": 7}, "version"),
    ({"instrShape": [32, 16, 8]}, "instrShape"),
    ({"instrShape": [32, 32]}, "instrShape"),
    ({"warpsPerCTA": [3, 2]}, "warpsPerCTA[0]"),
    ({"warpsPerCTA": "2x2"}, "warpsPerCTA"),
    ({"tilesPerWarp": [1, 1, 1]}, "tilesPerWarp"),
    ({"isTransposed": "yes"}, "isTransposed"),
    ({"elementBitWidth": 12}, "elementBitWidth"),
    ({"shape": [64, 48]}, "shape[1]"),
    ({"shape": [64, 64, 64]}, "shape"),
    ({"bogus": 1}, "bogus"),
    ({"instrShape": [64, 4, 4]}, "isTransposed"),
])
def test_bad_mfma_params_name_the_param(patch, needle):
    with pytest.raises(LayoutError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        from_triton({**MFMA, **patch})


@pytest.mark.parametrize("obj, needle", [
    ({"encoding": "amd_wmma", "shape": [16, 16], "version": 2, "warpsPerCTA": [1, 1], "instrShape": [32, 16, 64]},
     "instrShape"),
    ({"encoding": "amd_wmma", "shape": [16, 16], "version": 4, "warpsPerCTA": [1, 1]}, "version"),
    ({"encoding": "amd_mfma_dot_operand", "shape": [64, 64], "opIdx": 2, "kWidth": 4,
      "parent": {k: v for k, v in MFMA.items() if k not in ("encoding", "shape")}}, "opIdx"),
    ({"encoding": "amd_mfma_dot_operand", "shape": [64, 64], "opIdx": 0, "kWidth": 3,
      "parent": {k: v for k, v in MFMA.items() if k not in ("encoding", "shape")}}, "kWidth"),
    ({"encoding": "amd_mfma_dot_operand", "shape": [64, 64], "opIdx": 0, "kWidth": 4}, "parent"),
    ({"encoding": "swizzled_shared", "shape": [16, 16], "vec": 3, "perPhase": 1, "maxPhase": 1, "order": [1, 0]},
     "vec"),
    ({"encoding": "swizzled_shared", "shape": [16, 16], "vec": 1, "perPhase": 1, "maxPhase": 1, "order": [1, 1]},
     "order"),
    ({"encoding": "blocked", "shape": [16, 16], "sizePerThread": [1, 1], "threadsPerWarp": [8, 8],
      "warpsPerCTA": [1], "order": [1, 0]}, "warpsPerCTA"),
    ({"encoding": "blocked", "shape": [16, 16], "sizePerThread": [1, 1], "threadsPerWarp": [8, 8],
      "warpsPerCTA": [1, 1], "order": [1, 0], "CTAsPerCGA": [1, 2], "CTASplitNum": [1, 4]}, "CTASplitNum"),
    ({"encoding": "slice_of_blocked", "shape": [16], "dim": 2,
      "parent": {"sizePerThread": [1, 1], "threadsPerWarp": [8, 8], "warpsPerCTA": [1, 1], "order": [1, 0]}},
     "dim"),
    ({"encoding": "nvidia_mma", "shape": [16, 16], "versionMajor": 5, "warpsPerCTA": [1, 1], "instrShape": [16, 8]},
     "versionMajor"),
    ({"encoding": "nope", "shape": [16]}, "encoding"),
    ({"shape": [16]}, "encoding"),
    ({"encoding": "blocked", "sizePerThread": [1, 1], "threadsPerWarp": [8, 8], "warpsPerCTA": [1, 1],
      "order": [1, 0]}, "blocked: missing parameter shape"),
    ({"encoding": "ll_mul"}, "parameter encoding: 'll_mul' is not one of"),  # the encoding before the shape
])
def test_bad_params_name_the_param(obj, needle):
    with pytest.raises(LayoutError, match=needle):
        from_triton(obj)


def test_cli_bad_params_exit_2(capsys):
    from linlayout.cli import main

    assert main(["layout", "--triton", json.dumps({**MFMA, "version": 9}), "--json"]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and "version" in cap.err and cap.err.count("\n") == 1
    assert main(["layout", "--triton", "{not json", "--json"]) == 2
    assert "JSON" in capsys.readouterr().err


def test_cli_human_output_is_the_layout_text(capsys):
    from linlayout.cli import main

    assert main(["layout", "--triton", json.dumps(MFMA)]) == 0
    assert capsys.readouterr().out.strip() == str(from_triton(MFMA))


def test_every_public_constructor_shape_mismatch_is_a_layout_error():
    with pytest.raises(LayoutError, match="shape"):
        mfma_layout(3, (32, 32, 8), (2, 2), (64,))
    with pytest.raises(LayoutError, match="shape"):
        wmma_layout(2, (2, 2), (16, 16, 16))
    with pytest.raises(LayoutError, match="parent"):
        mfma_dot_operand(Wmma(2, (1, 1)), 0, 8, (16, 16))
    with pytest.raises(LayoutError, match="order"):
        blocked((1, 1), (8, 8), (1, 1), (0,), (8, 8))


_GARBAGE = [0, 1, 3, -2, 64, True, None, "x", [], [1], [2, 2], [1, 2, 3], [1, 0], [0, 0], {}, [[1]], 1.5, [1.0, 2]]


def _vector_objs():
    return [{"encoding": v["kind"].split("/", 1)[1], **v["params"]} for v in triton_vectors(prefix="to_linear_layout/")]


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_mutated_params_raise_only_layout_error(data):
    obj = json.loads(json.dumps(data.draw(st.sampled_from(_vector_objs()))))
    for _ in range(data.draw(st.integers(1, 3))):
        target = obj
        if "parent" in obj and data.draw(st.booleans()):
            target = obj["parent"] if isinstance(obj["parent"], dict) else obj
        if not target:
            break
        key = data.draw(st.sampled_from(sorted(target)))
        if data.draw(st.integers(0, 9)) == 0:
            del target[key]
        else:
            target[key] = data.draw(st.sampled_from(_GARBAGE))
    try:
        result = from_triton(obj)
    except LayoutError:
        return
    assert result.to_json()["out_dims"]
