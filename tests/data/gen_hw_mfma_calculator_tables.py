"""Regenerate ``hw_mfma_calculator_tables.json`` from AMD's matrix instruction calculator.

Usage::

    python tests/data/gen_hw_mfma_calculator_tables.py /path/to/matrix_calculator.py [COMMIT]

(ROCm/amd_matrix_instruction_calculator; needs its ``tabulate`` dependency.)  For every
dense CDNA2 (gfx90a) and CDNA3 (gfx942) MFMA and every dense RDNA3 (gfx1100) and RDNA4
(gfx1200) WMMA (wave32) the calculator knows, it runs
``--{A,B,C,D}-matrix --register-layout --csv`` and records, for every (item, lane) of
the operand, the (block, row, col) the calculator prints.  C and D must agree and are
stored once, with the cycles and the (first, i.e. wave32 for RDNA) GPR counts of
``--detail-instruction``.  Nothing here computes a layout: it only parses the tool's CSV.  The item
index counts the element slots a register actually uses (RDNA3 16-bit results use only
bits 15:0, so there item = VGPR); 64-bit items are VGPR pairs.

Encoding per (arch, instruction, operand): ``items`` = packed items per lane, ``lanes``
= wave size, and ``table`` = base64(zlib(uint16 little-endian array)), entry
``lane + lanes * item`` = ``block << 10 | row << 5 | col``.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np

ARCHES = {"cdna2": ("gfx90a", 64), "cdna3": ("gfx942", 64), "rdna3": ("gfx1100", 32), "rdna4": ("gfx1200", 32)}
_CELL = re.compile(r"^v(?:(\d+)|\[(\d+):(\d+)\])\{(\d+)\}(?:\.\[(\d+):(\d+)\])?$")


def _run(calc: str, *args: str) -> str:
    return subprocess.run([sys.executable, calc, *args], capture_output=True, text=True, check=True).stdout


def _instructions(calc: str, arch: str) -> list:
    out = _run(calc, "--architecture", arch, "--list-instructions")
    names = re.findall(r"\b(v_(?:mfma|wmma)_\w+)", out)
    return list(dict.fromkeys(names))


def _table(calc: str, arch: str, mnemonic: str, matrix: str, lanes: int) -> dict:
    out = _run(calc, "--architecture", arch, "--instruction", mnemonic, "--wavefront", str(lanes),
               f"--{matrix}-matrix", "--register-layout", "--csv")
    block, raw = 0, []
    for line in out.splitlines():
        if line.startswith("Block "):
            block = int(line.split()[1])
            continue
        parts = line.split(",")
        if len(parts) < 2 or not parts[0].isdigit():
            continue
        row = int(parts[0])
        for col, cell in enumerate(parts[1:]):
            for c in cell.split(" "):
                m = _CELL.match(c)
                if not m:
                    raise SystemExit(f"{mnemonic} {matrix}: cannot parse cell {c!r}")
                reg = int(m.group(1)) if m.group(1) else int(m.group(3))
                lane = int(m.group(4))
                lo = int(m.group(6)) if m.group(6) else 0
                hi = int(m.group(5)) if m.group(5) else (63 if m.group(2) else 31)
                raw.append((reg, lo, hi - lo + 1, lane, (block, row, col)))
    slots = len({lo for _, lo, _, _, _ in raw})  # element slots used per register
    cells = {}
    for reg, lo, bits, lane, where in raw:
        item = reg // 2 if bits == 64 else reg * slots + lo // bits
        cells[(item, lane)] = where
    return cells


def _encode(cells: dict, lanes: int) -> dict:
    items = 1 + max(e for e, _ in cells)
    if len(cells) != lanes * items:
        raise SystemExit("calculator table does not cover every (item, lane)")
    arr = np.zeros(lanes * items, dtype="<u2")
    for (e, lane), (b, r, c) in cells.items():
        arr[lane + lanes * e] = b << 10 | r << 5 | c
    return {"items": items, "lanes": lanes, "table": base64.b64encode(zlib.compress(arr.tobytes(), 9)).decode()}


def main(calc: str, commit: str = "") -> None:
    version = _run(calc, "--version").strip()
    out = {"tool": "ROCm/amd_matrix_instruction_calculator matrix_calculator.py", "tool_version": version,
           "tool_commit": commit,
           "encoding": __doc__.split("Encoding per")[1].strip(), "instructions": {}}
    for arch, (gfx, lanes) in ARCHES.items():
        for mnemonic in _instructions(calc, arch):
            detail = _run(calc, "--architecture", arch, "--instruction", mnemonic, "--detail-instruction")
            if "Sparse A matrix: True" in detail:
                continue
            entry = {"cycles": int(re.search(r"Execution cycles: (\d+)", detail).group(1)),
                     "registers": {m: int(re.search(rf"GPRs required for {m}: (\d+)", detail).group(1)) for m in "ABC"}}
            for matrix in "ABC":
                entry[matrix] = _encode(_table(calc, arch, mnemonic, matrix, lanes), lanes)
            if _encode(_table(calc, arch, mnemonic, "D", lanes), lanes) != entry["C"]:
                raise SystemExit(f"{mnemonic}: C and D layouts differ")
            out["instructions"][f"{gfx} {mnemonic}"] = entry
    path = Path(__file__).with_name("hw_mfma_calculator_tables.json")
    path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(out['instructions'])} instructions to {path}")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__)
    main(*sys.argv[1:])
