"""An independent checker of plan certificates, written from docs/contract.md section 4 alone.

It shares no code with synth (only the core ``LinearLayout.apply``): slots hold
tensor coordinates, steps follow the contract's prose, and the final state is
compared with ``dst``.  Used by tests/test_convert_*.py.
"""

from __future__ import annotations

from linlayout import LinearLayout

UNDEFINED = None


def _coords(layout: LinearLayout, W: int, wave: int) -> list[list[list[tuple]]]:
    """``[warp][lane][register]`` -> tensor coordinate tuple (out dims in order)."""
    import numpy as np

    R = layout.in_dim_size("register")
    w, l, r = np.meshgrid(np.arange(W), np.arange(wave), np.arange(R), indexing="ij")
    ins = {"register": r, "lane": l}
    if layout.has_in_dim("warp"):
        ins["warp"] = w
    if layout.has_in_dim("block"):
        ins["block"] = np.zeros_like(r)
    out = layout.apply(ins)
    cols = [np.asarray(out[n]).tolist() for n in layout.out_dim_names]
    return [[[tuple(c[a][b][k] for c in cols) for k in range(R)] for b in range(wave)] for a in range(W)]


def _per_lane(table, w: int, wave: int) -> list[int]:
    if len(table) == wave and not isinstance(table[0], list):
        return table
    return table[w]


def check_certificate(cert: dict) -> tuple[bool, str]:
    """Re-execute ``cert`` (a JSON-loaded certificate); (True, "") when every dst slot is right."""
    assert cert["format"] in ("linlayout-plan/v1", "linlayout-plan/v1-unpacked", "linlayout-plan/v1-one-copy",
                              "linlayout-plan/v1-unpacked-one-copy")
    W, wave = cert["num_warps"], cert["wave_size"]
    src, dst = LinearLayout.from_json(cert["src"]), LinearLayout.from_json(cert["dst"])
    nbytes = max(1, cert["element_bits"] // 8)
    sc, dc = _coords(src, W, wave), _coords(dst, W, wave)
    per_vgpr = max(1, 32 // cert["element_bits"])  # slots in a VGPR
    # a src held one element per VGPR: only each VGPR's low slot holds its element, the slots above nothing
    held = [r for r in range(cert["slots_in"]) if not cert.get("src_unpacked") or r % per_vgpr == 0]
    state = [[{r: sc[w][l][r] for r in held} for l in range(wave)] for w in range(W)]
    lds: dict[int, object] = {}
    for i, st in enumerate(cert["steps"]):
        op = st["op"]
        for w in range(W):
            lanes = state[w]
            if op == "mov":
                for l in range(wave):
                    vals = [lanes[l].get(s) for s in st["src"]]
                    for d, v in zip(st["dst"], vals):
                        lanes[l][d] = v
            elif op == "select":
                c = _per_lane(st["cond"], w, wave)
                for l in range(wave):
                    pick = st["b"] if c[l] else st["a"]
                    vals = [lanes[l].get(s) for s in pick]
                    for d, v in zip(st["dst"], vals):
                        lanes[l][d] = v
            elif op == "lane":
                t = _per_lane(st["src_lane"], w, wave)
                new = [[(lanes[t[l]].get(s) if t[l] >= 0 else UNDEFINED) for s in st["src"]] for l in range(wave)]
                for l in range(wave):
                    for d, v in zip(st["dst"], new[l]):
                        lanes[l][d] = v
            elif op == "permlane_swap":
                half = 32 if st["kind"] == "permlane32_swap" else 16
                for base in ((0,) if half == 32 else range(0, wave, 32)):  # each 32-lane half
                    for l in range(base, base + half):
                        for vd, s0 in zip(st["vdst"], st["src0"]):
                            a, b = lanes[l].get(s0), lanes[l + half].get(vd)
                            lanes[l][s0], lanes[l + half][vd] = b, a
            elif op in ("lds_store", "lds_load"):
                a = _per_lane(st["addr"], w, wave)
                for l in range(wave):
                    slots = st["src"] if op == "lds_store" else st["dst"]
                    for k, s in enumerate(slots):
                        key = a[l] + k * nbytes
                        if op == "lds_store":
                            lds[key] = lanes[l].get(s)
                        else:
                            lanes[l][s] = lds.get(key)
            elif op in ("ldmatrix", "stmatrix"):  # slot j at its element address E_j
                slots = st["src"] if op == "stmatrix" else st["dst"]
                for s, e in zip(slots, st["elem_addr"]):
                    e = _per_lane(e, w, wave)
                    for l in range(wave):
                        if op == "stmatrix":
                            lds[e[l]] = lanes[l].get(s)
                        else:
                            lanes[l][s] = lds.get(e[l])
            elif op == "movmatrix":  # dst[j] of lane l <- slot S_j[l] of lane T_j[l]
                new = [[lanes[_per_lane(t, w, wave)[l]].get(_per_lane(s, w, wave)[l])
                        for t, s in zip(st["src_lane"], st["src_slot"])] for l in range(wave)]
                for l in range(wave):
                    for d, v in zip(st["dst"], new[l]):
                        lanes[l][d] = v
            elif op == "barrier":
                pass
            else:
                return False, f"step {i}: unknown op {op}"
    # a dst read in one copy: only the lanes whose bits of the dst's zero lane bases are clear are checked
    copies = sum(1 << k for k, b in enumerate(dst.bases["lane"]) if not any(b)) if cert.get("dst_one_copy") else 0
    for w in range(W):
        for l in (l for l in range(wave) if not l & copies):
            for r in range(0, cert["slots_out"], per_vgpr if cert.get("dst_unpacked") else 1):  # (dst: low slots)
                want = dc[w][l][r]
                got = state[w][l].get(r)
                if got != want:
                    return False, f"warp {w} lane {l} slot {r}: holds {got}, expected {want}"
    return True, ""
