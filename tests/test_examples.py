"""Every examples/*.py runs to completion on a CPU-only machine and prints a real result.

Each example runs as a subprocess from a scratch directory (so it needs nothing but the
installed packages), must exit 0 within its time limit, and its output must contain the
lines listed in ``EXPECTED`` -- lines that only a correct result prints (an equivalence
that holds, a conflict-free read after the synthesized swizzle, an interpreter run that
matches).  An example with no entry in ``EXPECTED`` fails: every rung states what it proves.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import needs

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SCRIPTS = sorted(p.name for p in EXAMPLES.glob("*.py"))
TIMEOUT_S = 60  # generous for a loaded 2-core machine; each runs in a few seconds

# Regular expressions, each of which must match some line of the example's stdout
# ((pattern, n): at least n lines, e.g. once per arch).
EXPECTED = {
    "01_layouts.py": [
        r"^catalog C == Triton amd_mfma: +True$",
        r"^catalog A == Triton dot operand A: +True$",
        r"^catalog C == transposed accumulator: False$",
        r"^  counterexample \{'register': 1, 'lane': 0\}: catalog -> \{'dim0': 1, 'dim1': 0\}, "
        r"transposed -> \{'dim0': 0, 'dim1': 1\}$",
        r"^C\[5\]\[17\] is register 1 of lane 49$",
        r"^picture: /\S+/mfma32_C.png, \d+ bytes$|^picture skipped: ",
    ],
    "02_bank_conflicts.py": [
        r"^row-major: 8 x ds_read_b64, 512 cycles vs 32 ideal, conflict-free: False$",
        r"^row-major: 4 x ds_read_b128, 128 cycles vs 16 ideal, conflict-free: False$",
        r"^  collision: lanes l and l\^\(l0\) hit the same bank, rows differ by \^1$",
        r"^  read after swizzle: 32 cycles vs 32 ideal, conflict-free: True$",
        r"^  read after swizzle: 16 cycles vs 16 ideal, conflict-free: True$",
        r"^synthesized: .*certified True\), 4096 B$",
        r"^best padding: \+\d+ every \d+: ",
    ],
    "03_convert.py": [
        r"^=== gfx942: mfma32 accumulator -> A operand \(kWidth 4\), fp16 128x64$",
        r"^=== gfx950: mfma32 accumulator -> A operand \(kWidth 8\), fp16 128x64$",
        (r"^strategy \w+, verified on the emulator: True$", 2),
        r"^modelled cost [\d.]+ cycles, lower bound [\d.]+ ",
        r"^Triton 3.9 total \(compiled ISA, one wave\): \d+ \(mfma32->dotA\(kw[48]\) \[FA P\]\)",
        r"^certificate: \d+ steps, ops \[",
    ],
    "04_compile.py": [
        r"^=== gfx942: \w+ plan -> /\S+/convert_gfx942.hsaco \(\d+ bytes\)$",
        r"^=== gfx950: \w+ plan -> /\S+/convert_gfx950.hsaco \(\d+ bytes\)$",
        r"^isa_counts \(conv region, one wave\): \{'total': \d+",
        (r"plan/ISA differences: none$", 2),
        (r"^interpreter output == expected: True \(8192 elements, 4 waves\)$", 2),
    ],
    "05_gemm.py": [
        r"^=== gfx942: v_mfma_f32_32x32x8_f16, block \d+x\d+x\d+, \d+ waves$",
        r"^=== gfx950: v_mfma_f32_32x32x16_f16, block \d+x\d+x\d+, \d+ waves$",
        (r"^  A through LDS: .*, (\d+) cycles, lower bound \1, certified True$", 2),
        (r"^  emitted LDS instructions: (\d+) cycles vs \1 ideal, conflict-free: True$", 2),
        (r"^  compiled: \d+ VGPRs, \d+ LDS bytes, \d+-byte code object$", 2),
        (r"^  interpreter vs torch: verified True, max \|err\| ", 2),
    ],
    "06_attention.py": [
        r"^=== gfx942: v_mfma_f32_32x32x8_f16, head dim 64, key block \d+$",
        r"^=== gfx950: v_mfma_f32_32x32x16_f16, head dim 64, key block \d+$",
        (r"^  chosen: \w+, \d+ instructions, cost ([\d.]+) \(lower bound \1\), verified on the emulator: True$", 2),
        (r"^  V through LDS: .*, (\d+) cycles, lower bound \1$", 2),
        (r"^  compiled P conversion region: .*; matches the plan: True$", 2),
        r"^  compiled P conversion region: \{.*'permlane32_swap': [1-9]\d*.*\}; matches the plan: True$",
        (r"^  interpreter vs torch: verified True, max \|err\| ", 2),
    ],
    "07_flydsl_attention.py": [
        (r"^=== gfx9(42|50) (auto|lds): P conversion \w+, \d+ instructions, verified on the emulator: True$", 4),
        (r"^  ISA between the two MFMAs matches the plan: True$", 4),
        (r"^  interpreter vs torch: max \|err\| .*, verified True$", 4),
    ],
    "08_flydsl_gemm.py": [
        (r"^=== gfx9(42|50): ds_write_b64 \+ ds_read_b64, (\d+) cycles, lower bound \2, certified True$", 2),
        (r"^  FlyDSL layout: ComposedLayout<S<\d,\d,\d> o 0 o \S+:\S+>$", 2),
        (r"^  LDS as written equals linlayout's layout: True; interpreter vs torch: .*, verified True$", 2),
    ],
    "09_nvidia_fp8.py": [
        r"^=== sm_90: mma fp16 accumulator -> fp8 A operand, 16x32 per warp$",
        r"^source      register bits \(c0, r3, c3, c4\), lane bits \(c1, c2, r0, r1, r2\)$",
        r"^destination register bits \(c0, c1, r3, c4\), lane bits \(c2, c3, r0, r1, r2\)$",
        r"^linlayout plan: lanes, \{.*'shfl': [1-9]\d*, 'total': \d+\}, verified on the emulator: True$",
        r"^CUDA: fp16_acc_to_fp8_a\(uint8_t src\[16\], dst\[16\]\), [1-9]\d* shuffles in the source",
    ],
    "10_gfx1250_transpose_loads.py": [
        r"^=== gfx1250: wmma3 16x16 accumulator -> A operand \(kWidth 8\), bf16 64x32, 8 waves$",
        r"^strategy lds, 13 instructions \{'lds_write': 4, 'lds_read_tr': 8, 's_barrier': 1\}, "
        r"verified on the emulator: True$",
        r"^transpose loads: ds_load_tr16_b128$",
        r"^Triton 3.9 \(compiled ISA, one wave\): 79 instructions, 8 LDS stores and 8 loads$",
        r"^MLIR: 8 transpose loads in the ISA; interpreter output == expected: True$",
        r"^HIP: 8 transpose loads in clang's ISA$|^HIP skipped: ",
    ],
}
#: the optional dependencies (tests/needs.py) each example needs beyond the core
NEEDS = {"04_compile.py": ("flydsl",), "05_gemm.py": ("flydsl", "torch"), "06_attention.py": ("flydsl", "torch"),
        "07_flydsl_attention.py": ("flydsl", "torch"), "08_flydsl_gemm.py": ("flydsl", "torch"),
        "10_gfx1250_transpose_loads.py": ("flydsl",)}


def test_every_rung_is_listed():
    assert SCRIPTS, f"no examples in {EXAMPLES}"
    assert set(EXPECTED) <= set(SCRIPTS), f"EXPECTED names missing examples: {set(EXPECTED) - set(SCRIPTS)}"


@pytest.mark.parametrize("name", SCRIPTS)
def test_example_runs(name, tmp_path):
    for dependency in NEEDS.get(name, ()):
        if not needs.has(dependency):
            pytest.skip(needs.reason(dependency))
    assert name in EXPECTED, f"examples/{name} has no expected output in tests/test_examples.py"
    proc = subprocess.run([sys.executable, str(EXAMPLES / name)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=TIMEOUT_S)
    assert proc.returncode == 0, f"examples/{name} exited {proc.returncode}:\n{proc.stderr[-3000:]}"
    lines = proc.stdout.splitlines()
    for item in EXPECTED[name]:
        pattern, count = item if isinstance(item, tuple) else (item, 1)
        rx = re.compile(pattern)
        found = sum(1 for ln in lines if rx.search(ln))
        assert found >= count, \
            f"examples/{name}: {found} line(s) match {pattern!r}, expected {count}, in\n{proc.stdout}"
