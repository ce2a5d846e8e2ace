"""The address registers of named corpus round trips: ``cost.AddressRegisters``' count and least count, the
keys the LDS pool orders a round trip by (``early_plan_floor`` -> ``registers_plan_floor`` -> ``plan_floor``),
and the sharing of ``LdsAccesses._addresses`` between copies of one layout (``DesignPool._add``).

Each case is one the benchmark kernel plans through an LDS round trip whose setup is its LDS addresses
alone (``valu_lds_addr`` the only setup VALU of the plan), with more than one warp: its count, the warp part of
the addresses in it (``cost.warp_part_ops``), is the compiled ``setup`` region's VALU and SALU
(the ``store_addresses`` region, the kernel's own global-store addresses, is its own region, outside it), so
each pinned count is the compiled one, and each least count the ops the count has at the least (``fixed``
plus one per new register: ``lane_arith.least_tables_valu``)."""

from __future__ import annotations

import functools
import json
from dataclasses import replace

import pytest
from repo_data import family_corpus

import needs
from linlayout import LinearLayout, caches
from linlayout.dtypes import dtype_bits
from linlayout.synth import convert, cost, lds_path
from linlayout.synth.context import ConversionContext

# (family, name, arch, dtype, num_warps, least, count, copies): ``copies`` the round trips of the pool
# (designs of the same layout) whose plan is the kernel's.  The count holds the warp part of the addresses
# (cost.warp_part_ops: ``AddressRegisters.warp``, SALU and joining VALU); the compiled setup's VALU and SALU
# (count) in the comments.
CASES = [
    # one table, the thread id's bits 0-6 shifted up 4 (lane_arith.thread_id_form): 2 VALU, v_lshlrev_b32 and
    # v_and_b32; compiled 3 (COMPILED: LLVM makes the src load line's (tid << 4) & 0x3f0 there from the same
    # shift); split, the lane part and the whole warp id shifted in by a v_lshl_or_b32, it was 3 and 3
    ("amd", "mfma16T->dotA16(kw4)", "gfx950", "fp16", 8, 1, 2, 1),
    # two tables, one the whole warp id shifted in (v_lshl_or_b32 of the warp id's SGPR), one from the thread
    # id: 7 (8 when both were split)
    ("amd", "mfma32T->mfma16T", "gfx942", "fp16", 4, 2, 7, 1),
    # (until cyc29 a round trip of 9, a warp part of two shift terms, s_lshl_b32 x2 and s_or_b32, joined by a
    # v_or3_b32 that the lane part has anyway; its accesses conflict 2 ways and near ties now count the passes)
    # the conflict-free round trip through the tensor order after a 2-bit prefix, rows swizzled by 5: 15;
    # compiled 16 (COMPILED)
    ("amd", "mfma16->mfma32T", "gfx942", "fp32", 4, 6, 15, 1),
    # two tables, 14 adds to formed registers beyond the immediate offset and a register XOR a formed one (fixed
    # 15), the whole warp id shifted in twice (warp part 2): 30, 28 VALU (v_add_u32 x7 and v_or_b32 x7, v_and_b32
    # x4, v_lshlrev_b32 x4, v_or3_b32 x2, v_lshl_or_b32 x2, v_xor_b32 x2: LLVM shares the terms otherwise than the
    # program) and 2 SALU
    ("amd", "mfma32T->blocked[2x1,t4x16,o01]", "gfx942", "fp32", 2, 17, 30, 1),
    # RDNA, two tables: 7, 3 VALU and 4 SALU (the warp part, 4: terms and their s_or_b32)
    ("wave32", "slice0(blocked[1x2,t2x16,o10])->slice1(wmma2.16x16T)", "gfx1200", "fp16", 8, 2, 7, 1),
    # the store's and the load's tables, each the thread id shifted up 4 under its own mask (thread_id_form):
    # 4; compiled 3 (COMPILED: v_lshlrev_b32, v_and_b32 and an s_delay_alu, LLVM folding the other mask into
    # the accesses); split, a lane table with two warp parts, it was 5 and 5
    ("wave32", "wmma2.16x16T->dotAwmma2.16x16T(kw8)", "gfx1200", "fp16", 8, 2, 4, 1),
    # the same in bf16: since session 22 (lds_path.PER_PREFIX_FAMILIES) through the src lanes order after the
    # 16-byte prefix, rows swizzled by 2 (plan cost 288, fewer bank conflicts): 8; compiled 11 (COMPILED: 6 VALU, 2
    # SALU and 3 s_delay_alu where the program's count has one; whole 35 where linlayout.synth.swizzle's layout,
    # 9, two copies of it in the pool, compiled to 32)
    ("wave32", "wmma2.16x16T->dotAwmma2.16x16T(kw8)", "gfx1200", "bf16", 8, 2, 8, 1),
    # the store's warp part is the whole warp id shifted, the loads have none: the loads' register is the lane
    # part (2 VALU) and the store's one v_lshl_or_b32 more, 3; compiled 5 (COMPILED) since the kernel declares its
    # 128 threads: LLVM takes the warp part from the thread id, (tid << 6) & 0x1000 (s_lshl_b32, s_and_b32), joined
    # by a v_or_b32, where it shifted the warp id's SGPR in by a v_lshl_or_b32
    ("amd", "mfma32T->dotA32(kw4)", "gfx942", "fp16", 2, 1, 3, 1),
]
IDS = [f"{c[2]}-{c[3]}-{c[1]}" for c in CASES]
# the compiled setup's VALU and SALU where they are not the count (the comments above)
COMPILED = {("mfma16T->dotA16(kw4)", "gfx950", "fp16"): 3,
            ("wmma2.16x16T->dotAwmma2.16x16T(kw8)", "gfx1200", "fp16"): 3,
            ("mfma32T->dotA32(kw4)", "gfx942", "fp16"): 5,
            ("mfma16->mfma32T", "gfx942", "fp32"): 16,
            ("wmma2.16x16T->dotAwmma2.16x16T(kw8)", "gfx1200", "bf16"): 11}


def _case(family: str, name: str, arch: str, dtype: str, num_warps: int) -> dict:
    (case,) = [c for c in family_corpus(family)["cases"] if (c["name"], c["arch"], c["dtype"], c["num_warps"])
               == (name, arch, dtype, num_warps) and c.get("set") != "baseline"]
    return case


def _context(plan) -> ConversionContext:
    """The planner's context of the kernel's plan ``plan`` (bench.kernel_plan: its chosen register orders, the
    tuples the kernel loads and stores and the offsets of its row-major src load)."""
    from linlayout.lowering.emit.conversion_kernel import source_tuples
    from linlayout.synth.src_offsets import row_major_strides

    bits = plan.element_bits
    return ConversionContext.create(plan.src, plan.dst, plan.arch, bits,
                                    src_tuple_dwords=source_tuples(plan.src, bits),
                                    dst_tuple_dwords=source_tuples(plan.dst, bits),
                                    src_global_strides=row_major_strides([n for _, n in plan.src.out_dims]))


def _same_plan(a, b) -> bool:
    """The same plan (steps, setup, cost, notes), the unpruned lower bound left out (lds_plan prices none)."""
    x, y = json.loads(a.dumps()), json.loads(b.dumps())
    x.pop("lower_bound", None)
    y.pop("lower_bound", None)
    return x == y


@functools.cache
def _round_trips(family: str, name: str, arch: str, dtype: str, num_warps: int):
    """The kernel's plan of the case, its context and the round trips of the pool whose plan is it, with their
    places in the pool (``DesignPool.placed``)."""
    from linlayout.cli.bench import kernel_plan

    c = _case(family, name, arch, dtype, num_warps)
    plan = kernel_plan(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), arch, dtype_bits(dtype))
    ctx = _context(plan)
    placed = [(place, a) for place, a in lds_path.designs(ctx).placed() if _same_plan(convert.lds_plan(ctx, a), plan)]
    return plan, ctx, [a for _, a in placed], [place for place, _ in placed]


@functools.cache
def _setup_alu(family: str, name: str, arch: str, dtype: str, num_warps: int) -> int:
    """The VALU and SALU of the compiled ``setup`` region of the case's kernel (a ``v_dual_*`` two: isa_counts;
    the SALU of the warp part of the addresses, and on RDNA their ``s_delay_alu``)."""
    from linlayout.lowering.report import kernel_setup
    from linlayout.lowering.conversion import lower_conversion

    plan = _round_trips(family, name, arch, dtype, num_warps)[0]
    setup = kernel_setup(lower_conversion(plan, binary=False).compiled.isa)
    return setup["valu"] + setup["salu"]


@pytest.mark.parametrize("family,name,arch,dtype,num_warps,least,count,copies", CASES, ids=IDS)
def test_the_address_registers_count_is_the_plans_setup(family, name, arch, dtype, num_warps, least, count,
                                                        copies):
    # the pool's round trip of the kernel's plan: its registers count `count` (the plan's valu_lds_addr, the
    # only setup VALU it has) and at the least `least`, below it
    plan, ctx, trips, _ = _round_trips(family, name, arch, dtype, num_warps)
    assert plan.strategy == "lds" and len(trips) == copies
    assert {k: v for k, v in plan.overhead.items() if v and k.startswith(("valu", "salu"))} == {"valu_lds_addr": count}
    for a in trips:
        regs = a.address_registers
        assert (regs.least(), regs.count(), a.address_valu) == (least, count, count)
        assert least < count
        # the same addresses, counted from the plan's LDS steps (cost.lds_address_valu)
        assert cost.lds_address_valu([st for st in plan.steps if st.op in ("lds_store", "lds_load")], arch) == count


@needs.mlir
@pytest.mark.parametrize("family,name,arch,dtype,num_warps,least,count,copies", CASES, ids=IDS)
def test_the_address_registers_count_is_the_compiled_setup(family, name, arch, dtype, num_warps, least, count,
                                                           copies):
    # the compiled setup VALU and SALU are the planner's count (that of the pool's round trip, the plan's
    # valu_lds_addr, the warp part of the addresses in it)
    plan, _, trips, _ = _round_trips(family, name, arch, dtype, num_warps)
    assert trips[0].address_valu == plan.overhead["valu_lds_addr"] == count
    assert _setup_alu(family, name, arch, dtype, num_warps) == COMPILED.get((name, arch, dtype), count)
    # a warp part, or a table from the thread id (whose warp columns are in its program)
    assert trips[0].address_registers.warp > 0 or any(t is not None and len(t) > 2
                                                      for t in trips[0].address_registers.tables)


@pytest.mark.parametrize("family,name,arch,dtype,num_warps,least,count,copies", CASES, ids=IDS)
def test_the_pools_three_keys_count_the_address_ops_least_first(family, name, arch, dtype, num_warps, least,
                                                                count, copies):
    # the keys a round trip waits under in the pool differ only in the address VALU they count: none
    # (least_address_valu, 0 after the kernel's src load line: early_plan_floor), the least count
    # (registers_plan_floor), the count (plan_floor);
    # the instructions of the last are the plan's with setup (the floor is exact here), the costs grow by
    # the same issue per VALU (CDNA and RDNA: the issue and the LDS pipe add, path_floor)
    plan, ctx, trips, _ = _round_trips(family, name, arch, dtype, num_warps)
    a = trips[0]
    (c_early, n_early), (c_regs, n_regs), (c_plan, n_plan) = a.early_plan_floor(), a.registers_plan_floor(), \
        a.plan_floor()
    assert n_plan == plan.total_with_overhead()
    assert cost.least_address_valu(ctx) == 0
    assert (n_plan - n_early, n_plan - n_regs) == (count, count - least)
    per_valu = (c_plan - c_early) / count
    assert per_valu > 0 and c_regs == pytest.approx(c_early + least * per_valu)
    assert c_plan <= plan.cost + 1e-9


# cases whose pool (plan_conversion's tuples) holds copies of one layout (DesignPool._add): those of CASES with two
# copies of the kernel's round trip, gfx1200 bf16 (whose kernel plan had two until session 22), and two whose
# copied layout has two store choices of different addresses
# (least, count: (5, 11) and (2, 8); (9, 18) and (3, 12)), so that a copy sharing another store choice's addresses
# would count wrong
SHARED = [c[:5] for c in CASES if c[7] > 1] + [("wave32", "wmma2.16x16T->dotAwmma2.16x16T(kw8)", "gfx1200", "bf16",
                                                8), ("amd", "mfma32T->mfma16T", "gfx942", "bf16", 1),
                                               ("wave32", "wmma3.16x4->dotBwmma3.16x4(kw2)", "gfx1250", "fp32", 2)]
TWO_STORE_CHOICES = {("mfma32T->mfma16T", "gfx942"), ("wmma3.16x4->dotBwmma3.16x4(kw2)", "gfx1250")}


@pytest.mark.parametrize("family,name,arch,dtype,num_warps", SHARED, ids=[f"{c[2]}-{c[3]}-{c[1]}" for c in SHARED])
def test_copies_of_one_layout_share_their_addresses(family, name, arch, dtype, num_warps, monkeypatch):
    # the pool's copies of one layout's round trips (designs of the same layout) share one _addresses per
    # store choice: the registers are worked out (AddressRegisters.of) and counted once for all the copies,
    # and the shared result is what a round trip of its own (no sharing: dataclasses.replace) works out
    c = _case(family, name, arch, dtype, num_warps)
    made, counted = [], []
    of, count = cost.AddressRegisters.of.__func__, cost.AddressRegisters.count
    monkeypatch.setattr(cost.AddressRegisters, "of", classmethod(lambda cls, *args: made.append(1) or of(cls, *args)))
    monkeypatch.setattr(cost.AddressRegisters, "count", lambda self: counted.append(1) or count(self))
    caches.clear(keep_tables=True)
    ctx = ConversionContext.create(LinearLayout.from_json(c["src"]), LinearLayout.from_json(c["dst"]), arch,
                                   dtype_bits(dtype))  # (plan_conversion's default tuples)
    pool = lds_path.designs(ctx)  # a pool of its own: nothing worked out yet
    pool.every()
    layouts: dict[tuple, list[int]] = {}
    for i, accs in sorted(pool.accesses.items()):
        if accs:
            layouts.setdefault(lds_path.layout_key(accs[0].design), []).append(i)
    copied = [designs for designs in layouts.values() if len(designs) > 1]
    assert copied
    for designs in copied:
        first = pool.accesses[designs[0]]
        for i in designs[1:]:
            assert len(pool.accesses[i]) == len(first)
            for a, b in zip(first, pool.accesses[i]):
                assert a.design is not b.design and a._addresses is b._addresses and not a._addresses
        made.clear()
        counted.clear()
        for j, a in enumerate(first):
            registers = [pool.accesses[i][j].address_registers for i in designs]
            valu = [pool.accesses[i][j].address_valu for i in designs]
            assert all(r is registers[0] for r in registers) and len(set(valu)) == 1
            own = replace(a, design=a.design)  # a round trip of its own: its registers worked out again
            assert own._addresses is not a._addresses and not own._addresses
            assert own.address_registers == registers[0] and own.address_valu == valu[0]
        assert (len(made), len(counted)) == (2 * len(first), 2 * len(first))  # once shared, once its own
    # the store choices of a copied layout work out different registers (the two extra cases: two choices)
    for designs in copied:
        registers = [a.address_registers for a in pool.accesses[designs[0]]]
        assert len(set(registers)) == len(registers)
    assert max(len(pool.accesses[d[0]]) for d in copied) == (2 if (name, arch) in TWO_STORE_CHOICES else 1)
