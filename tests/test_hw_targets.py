"""Target descriptors: one registry, each family's module registers its targets, and a
descriptor decides wave size, lane operations, LDS model, MMA catalog and emitter."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest

import linlayout
from linlayout import LayoutError, LinearLayout, get_target
from linlayout.hw import targets
from linlayout.hw.lds import ASSUMPTIONS, LDS_ARCHS, OP_SHAPES, SHARED_MEMORY_ARCHS, lds_model
from linlayout.hw.mfma import MFMA_ARCHES, instructions_for
from linlayout.hw.mma_nvidia import NVIDIA_MMA_ARCHES
from linlayout.hw.wmma import WMMA_ARCHES
from linlayout.lowering.compile import SUPPORTED_ARCHS
from linlayout.lowering.conversion import EMITTERS, emitter_for

ROOT = Path(__file__).resolve().parent.parent


def test_registry_holds_every_family_module_in_order():
    assert targets.target_names() == ["gfx90a", "gfx942", "gfx950", "sm_80", "sm_90", "gfx1100", "gfx1200", "gfx1250"]
    assert linlayout.Target is targets.Target and linlayout.get_target is targets.get_target
    assert get_target("MI300").name == "gfx942" and get_target("cdna4").name == "gfx950"
    assert get_target("gfx1201").name == "gfx1200"
    with pytest.raises(LayoutError, match="unknown arch 'gfx908'"):
        get_target("gfx908")
    with pytest.raises(ValueError, match="registered twice"):
        targets.register(replace(get_target("gfx942"), name="gfx9y9", aliases=("mi300",)))
    assert "gfx9y9" not in targets.TARGETS


def test_descriptors_decide_the_derived_tables():
    assert LDS_ARCHS == ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1200", "gfx1250")
    assert MFMA_ARCHES == ("gfx90a", "gfx942", "gfx950") and WMMA_ARCHES == ("gfx1100", "gfx1200", "gfx1250")
    assert SUPPORTED_ARCHS == ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1200", "gfx1250") == targets.targets_with(
        emitter="rocdl")
    assert targets.targets_with(has_permlane_swap=True) == ("gfx950", "gfx1250")
    assert [get_target(a).wave_size for a in targets.target_names()] == [64, 64, 64, 32, 32, 32, 32, 32]
    assert SHARED_MEMORY_ARCHS == ("gfx90a", "gfx942", "gfx950", "sm_80", "sm_90", "gfx1100", "gfx1200", "gfx1250")
    assert NVIDIA_MMA_ARCHES == targets.targets_with(family="nvidia") == ("sm_80", "sm_90")


@pytest.mark.parametrize("arch", targets.target_names())
def test_each_descriptor_is_consistent(arch):
    t = get_target(arch)
    assert t.mma in ("mfma", "wmma", "mma_sync") and (t.mma == "mfma") == (t.mfma_version > 0) == (arch in MFMA_ARCHES)
    assert t.emitter is None or t.emitter in EMITTERS
    if t.lds_phases is None:
        assert arch not in LDS_ARCHS
        return
    assert set(t.lds_phases) <= set(OP_SHAPES)
    named = {p.assumption for p in t.lds_phases.values() if p.assumption} | set(t.lds_model_assumptions)
    assert named <= set(t.lds_assumptions) <= set(ASSUMPTIONS)
    model = lds_model(arch)
    assert (model.num_banks, model.wave_size, model.lds_bytes) == (t.lds_banks, t.wave_size, t.lds_bytes)
    assert [a.name for a in model.assumptions][-len(t.lds_model_assumptions):] == list(t.lds_model_assumptions)


def test_a_target_without_an_emitter_or_lds_model_says_so(monkeypatch):
    want = ("no kernel emitter for sm_90; conversion kernels are emitted for gfx90a, gfx942, gfx950, gfx1100, "
            "gfx1200, gfx1250$")
    with pytest.raises(LayoutError, match=want):
        emitter_for("sm_90")
    bare = replace(get_target("gfx1100"), name="gfx11z0", aliases=(), lds_phases=None)
    monkeypatch.setitem(targets.TARGETS, bare.name, bare)
    with pytest.raises(LayoutError, match="'gfx11z0' has no LDS model"):
        lds_model("gfx11z0")
    from linlayout.synth.convert import plan_conversion
    lay = LinearLayout({"register": [[1]], "lane": [[1 << i] for i in range(1, 6)]}, [("x", 64)])
    with pytest.raises(LayoutError, match="^arch gfx11z0 has no LDS model; the conversion planner needs one$"):
        plan_conversion(lay, lay, "gfx11z0", 32)


def test_a_new_target_is_one_descriptor(monkeypatch):
    """A wave64 part registered as one descriptor (gfx950's lane operations, gfx942's 32-bank
    LDS) gets its LDS model and plans conversions with its own lane operations."""
    g942, g950 = get_target("gfx942"), get_target("gfx950")
    new = replace(g950, name="gfx9z1", aliases=(), lds_bytes=g942.lds_bytes, lds_banks=g942.lds_banks,
                  lds_phases=g942.lds_phases, has_ds_read_tr=False, lds_model_assumptions=g942.lds_model_assumptions)
    monkeypatch.setitem(targets.TARGETS, new.name, new)
    model, ref = lds_model("gfx9z1"), lds_model("gfx942")
    assert {n: o.phase_rows for n, o in model.ops.items()} == {n: o.phase_rows for n, o in ref.ops.items()}
    from linlayout.synth.convert import plan_conversion

    dims = [("dim0", 64), ("dim1", 2)]  # register bit 0 <-> lane bit 4: one permlane16 swap on gfx950's lanes
    src = linlayout.LinearLayout({"register": [[0, 1]], "lane": [[1 << k, 0] for k in range(6)], "warp": []}, dims)
    dst = linlayout.LinearLayout({"register": [[16, 0]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1], [32, 0]],
                                  "warp": []}, dims)
    p = plan_conversion(src, dst, "gfx9z1", 32)
    assert p.verified and p.arch == "gfx9z1" and p.counts()["permlane16_swap"] == p.counts()["total"] == 1


def test_no_arch_name_checks_left_in_hw_and_lowering():
    """Outside the target modules, linlayout.hw and lowering do not branch on an architecture's
    name (``arch == "gfx950"``), except where named here."""
    allowed = {"linlayout/hw/mfma.py",  # the MFMA catalog's per-arch data (CDNA2 spellings, notes)
               "lowering/interp/options.py"}  # the user's fp8 style options, one per arch by name
    offenders = []
    for path in sorted((ROOT / "linlayout/hw").glob("*.py")) + sorted((ROOT / "lowering").rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        if rel in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare) and any(
                    isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value.startswith("gfx")
                    for c in [node.left, *node.comparators]):
                offenders.append(f"{rel}:{node.lineno}")
    assert offenders == []
