"""Rung 2: is an LDS access conflict-free?  If not, why, and which swizzle fixes it.

The A operand of the 32x32 f16 MFMA (M=32 rows x K=64) is read from a row-major
fp16 tile in LDS (K contiguous, 128 bytes per row).  For each arch we ask
which ds_read the MFMA layout can use, how many bank cycles it takes against
the ideal, and which lanes collide.  Then we synthesize the shared layout for
the pair (a 16-byte-per-lane global-load layout writes the tile, the MFMA
operand reads it), check it is conflict-free, and compare with padding.
"""

from linlayout.encodings import Mfma, blocked, mfma_dot_operand, swizzled_shared
from linlayout.synth.lds_access import tile_access_report
from linlayout.synth.swizzle import padding_options, synthesize

M, K, BITS = 32, 64, 16
row_major = swizzled_shared(1, 1, 1, (1, 0), (M, K))          # vec 1, no phase: plain row-major
writer = blocked((1, 8), (8, 8), (1, 1), (1, 0), (M, K))       # 8 fp16 (16 B) per lane along K

# (arch, Triton MFMA version, instruction M x N x K, kWidth = K elements per lane)
for arch, version, instr, k_width in [("gfx942", 3, (32, 32, 8), 4), ("gfx950", 4, (32, 32, 16), 8)]:
    reader = mfma_dot_operand(Mfma(version, instr, (1, 1)), 0, k_width, (M, K))
    print(f"=== {arch}: A operand of {instr[0]}x{instr[1]}x{instr[2]} f16 (kWidth {k_width})")

    plain = tile_access_report(row_major, reader, BITS, arch, "read")
    c = plain.choice
    print(f"row-major: {c.count} x {c.op}, {plain.total_cycles} cycles vs {plain.ideal_cycles} ideal, "
          f"conflict-free: {plain.conflict_free}")
    # Why: each lane-bit step that keeps the bank and changes the row is a collision.
    why = [ln.strip() for ln in c.report.explanation.splitlines() if "collision" in ln or "spreads" in ln]
    print("  " + "\n  ".join(why))

    # Synthesis: widest vectors on both sides first, then fewest cycles, with a lower bound.
    s = synthesize(writer, reader, BITS, arch)
    after = tile_access_report(s.shared, reader, BITS, arch, "read")
    print(f"synthesized: {s.write_instructions} x {s.write_op} + {s.read_instructions} x {s.read_op}, "
          f"{s.total_cycles} cycles (lower bound {s.lower_bound_cycles}, certified {s.certified}), "
          f"{s.lds_bytes} B")
    print(f"  read after swizzle: {after.total_cycles} cycles vs {after.ideal_cycles} ideal, "
          f"conflict-free: {after.conflict_free}")
    # The layout itself: offset bit i -> (row, col) of the tile; the XOR mixing is the swizzle.
    # The low bits are one lane's vector; registers may be renamed, so it need not lie in one row.
    print("  offset bits -> (row, col): " + " ".join(f"({r},{c})" for r, c in s.shared.bases["offset"]))

    # The classic alternative: pad each row (pad elements every interval elements).
    p = padding_options(writer, reader, BITS, arch)[0]
    print(f"best padding: +{p.pad} every {p.interval}: {p.write_instructions} x {p.write_op} + "
          f"{p.read_instructions} x {p.read_op}, {p.total_cycles} cycles, {p.lds_bytes} B")
