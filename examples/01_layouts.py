"""Rung 1: a layout is a GF(2) linear map; show two, compare them, draw one.

The MFMA v_mfma_f32_32x32x8_f16 accumulator (C) and A operand, built two ways:
from the ISA catalog (linlayout.hw.mfma, one rule for every MFMA) and from
Triton's amd_mfma / dot-operand encodings.  We check that both descriptions are
the same map, show where a near miss (Triton's transposed accumulator) differs,
ask which lane holds an element, and draw the accumulator as a PNG.
"""

import tempfile
from pathlib import Path

from linlayout import LayoutError, equivalent
from linlayout.encodings import Mfma, mfma_dot_operand, mfma_layout
from linlayout.hw.mfma import get_instruction, mfma_layouts

ins = get_instruction("gfx942", "v_mfma_f32_32x32x8_f16")
hw = mfma_layouts(ins)  # {"A": 32x8, "B": 8x32, "C": 32x32}, in dims register, lane
C = hw["C"]
print(f"{ins.name}: {ins.m}x{ins.n}x{ins.k}, {ins.cycles} cycles, ROCDL op {ins.rocdl}")
# Each basis is the (dim0=row, dim1=col) image of one in bit; any index is the XOR of its bits'.
for dim in C.in_dim_names:
    print(f"  C {dim:8s} bits -> " + "  ".join(f"({r},{c})" for r, c in C.bases[dim]))

# Triton's encodings carry warp and block dims too; one warp, one block -> keep register, lane.
def per_wave(layout):
    return layout.sublayout(["register", "lane"], layout.out_dim_names)

triton_C = per_wave(mfma_layout(3, (32, 32, 8), (1, 1), (32, 32)))  # version 3 = gfx942
triton_A = per_wave(mfma_dot_operand(Mfma(3, (32, 32, 8), (1, 1)), 0, 4, (32, 8)))  # opIdx 0, kWidth 4
print("catalog C == Triton amd_mfma:       ", equivalent(C, triton_C).equal)
print("catalog A == Triton dot operand A:  ", equivalent(hw["A"], triton_A).equal)

# A near miss: Triton's isTransposed=True accumulator runs the registers along columns.
near = per_wave(mfma_layout(3, (32, 32, 8), (1, 1), (32, 32), is_transposed=True))
v = equivalent(C, near)
print("catalog C == transposed accumulator:", v.equal)
print(f"  counterexample {v.input}: catalog -> {v.output_a}, transposed -> {v.output_b}")

# Who holds C[5][17]?  Invert the (bijective) map.
who = C.invert().apply({"dim0": 5, "dim1": 17})
print(f"C[5][17] is register {who['register']} of lane {who['lane']}")
assert C.apply(who) == {"dim0": 5, "dim1": 17}

# Pictures need matplotlib (pip install 'linlayout[plot]'); the rest does not.
try:
    from linlayout.pictures import render

    png = Path(tempfile.mkdtemp()) / "mfma32_C.png"
    render(C, png, title="v_mfma_f32_32x32x8_f16 C")
    print(f"picture: {png}, {png.stat().st_size} bytes")
except LayoutError as e:
    print(f"picture skipped: {e}")
