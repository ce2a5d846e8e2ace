"""Brute-force LDS oracle for the tests/test_banks_* and test_swizzle_* files.

Independent of linlayout.hw.lds and synth.*: the lane groups are the literal
lists of docs/amd_facts.md 1.3 (or contiguous groups of the stated
size), element addresses come from evaluating the layouts point by point, and
cycles are counted with Python sets.
"""

from __future__ import annotations

from linlayout import LinearLayout


def _ranges(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out += list(range(int(a), int(b or a) + 1))
    return out


def _plus32(groups: list[str]) -> list[list[int]]:
    g = [_ranges(t) for t in groups]
    return g + [[x + 32 for x in grp] for grp in g]


def contiguous(n: int, wave: int = 64) -> list[list[int]]:
    return [list(range(s, s + n)) for s in range(0, wave, n)]


# docs/amd_facts.md 1.3, copied as lane lists
GFX942_B128_READ = _plus32(["0-3,20-23", "4-7,16-19", "8-11,28-31", "12-15,24-27"])
GFX950_B128_READ = _plus32(["0-3,12-15,20-27", "4-11,16-19,28-31"])
GFX950_B96_READ = GFX942_B128_READ

PHASES = {
    ("gfx942", "ds_read_b128"): GFX942_B128_READ,
    ("gfx942", "ds_write_b128"): contiguous(8),
    ("gfx942", "ds_read_b64"): contiguous(16),
    ("gfx942", "ds_write_b64"): contiguous(16),
    ("gfx942", "ds_read_b32"): contiguous(32),
    ("gfx942", "ds_write_b32"): contiguous(32),
    ("gfx942", "ds_read_u16"): contiguous(32),
    ("gfx942", "ds_write_b16"): contiguous(32),
    ("gfx942", "ds_read_u8"): contiguous(32),
    ("gfx942", "ds_write_b8"): contiguous(32),
    ("gfx950", "ds_read_b128"): GFX950_B128_READ,
    ("gfx950", "ds_read_b96"): GFX950_B96_READ,
    ("gfx950", "ds_write_b128"): contiguous(16),
    ("gfx950", "ds_read_b64"): contiguous(32),
    ("gfx950", "ds_write_b64"): contiguous(16),
    ("gfx950", "ds_read_b32"): contiguous(32),
    ("gfx950", "ds_write_b32"): contiguous(32),
    ("gfx950", "ds_read_u16"): contiguous(32),
    ("gfx950", "ds_write_b16"): contiguous(32),
    ("gfx950", "ds_read_u8"): contiguous(32),
    ("gfx950", "ds_write_b8"): contiguous(32),
    ("gfx950", "ds_read_b64_tr_b16"): contiguous(32),
    ("gfx950", "ds_read_b64_tr_b8"): contiguous(32),
    ("gfx950", "ds_read_b64_tr_b4"): contiguous(32),
}
BANKS = {"gfx942": 32, "gfx950": 64}
OP_BYTES = {"u8": 1, "b8": 1, "u16": 2, "b16": 2, "b32": 4, "b64": 8, "b96": 12, "b128": 16}


def op_bytes(op: str) -> int:
    return 8 if "_tr_" in op else OP_BYTES[op.split("_")[2]]


def instruction_cycles(starts: list[int], nbytes: int, banks: int, phases: list[list[int]]) -> list[int]:
    """Per phase: the most distinct dwords one bank serves (``starts``: byte address per lane)."""
    out = []
    for grp in phases:
        words = set()
        for lane in grp:
            for byte in range(starts[lane], starts[lane] + nbytes):
                words.add(byte // 4)
        per_bank: dict[int, int] = {}
        for w in words:
            per_bank[w % banks] = per_bank.get(w % banks, 0) + 1
        out.append(max(per_bank.values()))
    return out


def address_table(shared, n_elems: int) -> dict[tuple, int]:
    """Tensor coordinates -> element address (padded layouts: through their padding function)."""
    lin = shared.linear if hasattr(shared, "linear") else shared
    table = {}
    outs = lin.out_dim_names
    for o in range(lin.in_dim_size("offset")):
        coord = lin.apply({"offset": o})
        addr = int(shared.address(o)) if hasattr(shared, "linear") else o
        table[tuple(coord[d] for d in outs)] = addr
    return table


def tile_cycles(shared, reg: LinearLayout, elem_bits: int, arch: str, op: str, vec_regs: list[int],
                warp: int = 0) -> list[int]:
    """Cycles of each instruction of warp ``warp`` when ``reg`` moves the tile with ``op``,
    each instruction covering the register bits ``vec_regs`` (in element order; indices
    among the non-broadcast register bits, as linlayout.synth.lds_access reports them)."""
    table = address_table(shared, 0)
    outs = (shared.linear if hasattr(shared, "linear") else shared).out_dim_names
    nreg = reg.in_dim_size("register")
    all_bits = [b for b in range(nreg.bit_length() - 1) if any(reg.basis("register", b))]
    vec_regs = [all_bits[k] for k in vec_regs]
    rest = [b for b in all_bits if b not in vec_regs]
    nbytes = op_bytes(op)
    tr = "_tr_" in op
    cycles = []
    for i in range(1 << len(rest)):
        base = sum(((i >> k) & 1) << b for k, b in enumerate(rest))

        def addr(lane: int, j: int) -> int:
            r = base + sum(((j >> k) & 1) << b for k, b in enumerate(vec_regs))
            c = reg.apply({"register": r, "lane": lane, "warp": warp})
            return table[tuple(c[d] for d in outs)]

        starts = []
        if not tr:
            v = 1 << len(vec_regs)
            for lane in range(64):
                a = [addr(lane, j) for j in range(v)]
                assert a == list(range(a[0], a[0] + v)), f"lane {lane} elements not contiguous: {a}"
                starts.append(a[0] * elem_bits // 8)
        else:
            e = 64 // elem_bits
            per = 16 // e
            for lane in range(64):
                g, s = lane >> 4, lane & 15
                # source lane s supplies result lanes e*(s % per) + k, element s // per
                a = [addr(16 * g + e * (s % per) + k, s // per) for k in range(e)]
                assert a == list(range(a[0], a[0] + e)), f"source lane {lane} not contiguous: {a}"
                starts.append(a[0] * elem_bits // 8)
        for lane, st in enumerate(starts):
            assert st % min(nbytes, 16) == 0 or nbytes == 12, f"lane {lane} misaligned"
        cycles.append(sum(instruction_cycles(starts, max(1, nbytes), BANKS[arch], PHASES[(arch, op)])))
    return cycles
