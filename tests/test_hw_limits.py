"""Per-target resource limits (linlayout.hw.limits): their values, and every entry point
refusing what no target can hold with one line (exit 2 on the CLI) before doing the work."""

from __future__ import annotations

import json
import time

import pytest

from linlayout import LayoutError, LinearLayout
from linlayout.cli import main
from linlayout.hw import limits
from linlayout.hw.limits import (check_conversion, check_kernel_buffers, check_kernel_lds, registers_per_lane,
                                 resource_limits)
from linlayout.lowering.emit.atoms import BUFFER_OOB_OFFSET
from linlayout.spec import parse_layout
from linlayout.synth.convert import plan_conversion
from linlayout.synth.swizzle import padding_options, synthesize

WRITER = "blocked:spt=1x8,tpw=8x8,wpc=1x1,order=1x0,shape={0}x{0}"
READER = "mfma.a:32x32x8,warps=1x1,kwidth=4,shape={0}x{0}"


def run(capsys, *argv, seconds=10.0):
    """(exit code, stdout, stderr lines) of ``linlayout ARGV`` in-process, within ``seconds`` (the
    refusals take well under a second; the bound leaves room for a loaded machine and first imports)."""
    t0 = time.perf_counter()
    code = main(list(argv))
    elapsed = time.perf_counter() - t0
    out, err = capsys.readouterr()
    assert elapsed < seconds, f"linlayout {' '.join(argv)} took {elapsed:.1f} s"
    return code, out, err.splitlines()


@pytest.mark.parametrize("arch,vgprs,agprs,lds,waves", [
    ("gfx90a", 256, 256, 65536, 16), ("gfx942", 256, 256, 65536, 16), ("gfx950", 256, 256, 163840, 16),
    ("gfx1100", 256, 0, 65536, 32), ("gfx1200", 256, 0, 65536, 32), ("gfx1250", 1024, 0, 327680, 32),
    ("sm_80", 255, 0, 163 * 1024, 32), ("sm_90", 255, 0, 227 * 1024, 32)])
def test_values(arch, vgprs, agprs, lds, waves):
    lim = resource_limits(arch)
    assert (lim.target, lim.vgprs_per_lane, lim.agprs_per_lane, lim.lds_bytes) == (arch, vgprs, agprs, lds)
    assert lim.registers_per_lane == vgprs + agprs
    assert lim.threads_per_workgroup == 1024 and lim.waves_per_workgroup == waves
    assert lim.kernel_buffer_bytes == 1 << 31 == BUFFER_OOB_OFFSET  # masked lanes' offset lies past every buffer


def test_aliases_and_unknown():
    assert resource_limits("cdna3") == resource_limits("gfx942")
    with pytest.raises(LayoutError, match="unknown arch"):
        resource_limits("gfx0")


def test_registers_per_lane():
    assert registers_per_lane(1024, 16) == 512
    assert registers_per_lane(3, 4) == 1 and registers_per_lane(9, 4) == 2
    assert registers_per_lane(3, 64) == 6 and registers_per_lane(5, 8) == 2


def test_conversion_registers_at_the_limit():
    fits = parse_layout("mfma:32x32x8,warps=4x1,shape=512x512")  # 1024 fp16 per lane = 512 registers
    check_conversion(fits, fits, "gfx942", 16, None)
    with pytest.raises(LayoutError, match=r"src holds 1024 elements of 32 bits per lane: 1024 registers, more than "
                                          r"gfx942's 512 registers per lane \(256 VGPRs \+ 256 AGPRs\)"):
        check_conversion(fits, fits, "gfx942", 32, None)
    big = parse_layout("mfma:32x32x8,warps=4x1,shape=1024x512")
    with pytest.raises(LayoutError, match="dst holds 2048 elements of 16 bits per lane: 1024 registers"):
        check_conversion(fits, big, "gfx942", 16, None)


def test_conversion_warps_and_budget():
    many = parse_layout("mfma:32x32x8,warps=32x1,shape=1024x32")
    with pytest.raises(LayoutError, match="src has 32 warps, more than the 16 waves of 64 a gfx942 workgroup"):
        plan_conversion(many, many, "gfx942", 16)
    lay = parse_layout("mfma:32x32x8,warps=4x1,shape=128x64")
    with pytest.raises(LayoutError, match="LDS budget 65537 bytes is more than gfx942's 65536 bytes"):
        plan_conversion(lay, lay, "gfx942", 16, lds_budget_bytes=65537)


def test_nvidia_limits_speak_of_threads_warps_and_shared_memory():
    """An NVIDIA target's limit messages use its words: registers per thread, warps of a thread block, shared
    memory (they said VGPRs per lane and waves of a workgroup)."""
    many = parse_layout("blocked:spt=1x4,tpw=4x8,wpc=64x1,order=1x0,shape=1024x32")
    with pytest.raises(LayoutError, match=r"src has 64 warps, more than the 32 warps of 32 a sm_90 thread block can "
                                          r"hold \(1024 threads\)"):
        plan_conversion(many, many, "sm_90", 16)
    big = parse_layout("blocked:spt=1x4,tpw=4x8,wpc=1x1,order=1x0,shape=1024x512")
    with pytest.raises(LayoutError, match="src holds 16384 elements of 16 bits per lane: 8192 registers, more than "
                                          "sm_90's 255 registers per thread"):
        plan_conversion(big, big, "sm_90", 16)
    lay = parse_layout("blocked:spt=1x4,tpw=4x8,wpc=1x1,order=1x0,shape=16x32")
    with pytest.raises(LayoutError, match="more than sm_90's 232448 bytes of shared memory per thread block"):
        plan_conversion(lay, lay, "sm_90", 16, lds_budget_bytes=232449)


def test_synthesis_defaults_to_the_target_lds():
    writer, reader = parse_layout(WRITER.format(256)), parse_layout(READER.format(256))
    res = synthesize(writer, reader, 16, "gfx942")  # 128 KiB of fp16: two rounds of gfx942's 64 KiB
    assert (res.lds_bytes, res.reps) == (65536, 2)
    assert synthesize(writer, reader, 16, "gfx950").reps == 1  # 160 KiB holds it
    with pytest.raises(LayoutError, match="LDS budget 131072 bytes is more than gfx942's 65536"):
        synthesize(writer, reader, 16, "gfx942", lds_budget_bytes=131072)


def test_padding_options_fit_the_lds():
    w, r = parse_layout(WRITER.format(128)), parse_layout(READER.format(128))
    opts = padding_options(w, r, 32, "gfx942")  # 64 KiB unpadded: only pads past the last element fit
    assert opts and all(o.lds_bytes <= 65536 for o in opts)
    assert max(o.lds_bytes for o in padding_options(w, r, 16, "gfx942")) > 32768  # padding does grow a tile
    assert padding_options(parse_layout(WRITER.format(256)), parse_layout(READER.format(256)), 16, "gfx942") == []


def test_kernel_buffers(monkeypatch):
    check_kernel_buffers("gfx942", {"A": 1 << 31}, interpret=False)
    with pytest.raises(LayoutError, match="buffer A needs 2147483649 bytes; the kernels' 32-bit buffer offsets "
                                          "address at most 2147483648 bytes per buffer"):
        check_kernel_buffers("gfx942", {"A": (1 << 31) + 1}, interpret=False)
    monkeypatch.setattr(limits, "host_memory_bytes", lambda: 8000)
    check_kernel_buffers("gfx942", {"A": 600, "B": 400}, interpret=False)
    check_kernel_buffers("gfx942", {"A": 600, "B": 400}, interpret=True)  # 8 x 1000 bytes
    with pytest.raises(LayoutError, match="needs about 8008 bytes of host memory for buffers of 1001 bytes; "
                                          "this machine has 8000"):
        check_kernel_buffers("gfx942", {"A": 601, "B": 400}, interpret=True)
    check_kernel_lds("gfx950", 163840)
    with pytest.raises(LayoutError, match="the kernel needs 163841 bytes of LDS, more than gfx950's 163840"):
        check_kernel_lds("gfx950", 163841)


# ---------------------------------------------------------------------- the findings of issue 14
def test_convert_of_a_huge_tile_is_refused_at_once(capsys):
    code, out, err = run(capsys, "convert", "--src", "mfma:32x32x8,warps=4x1,shape=65536x65536", "--dst",
                         "mfma.a:32x32x8,warps=4x1,shape=65536x65536,kwidth=8", "--arch", "gfx942", "--dtype", "fp16")
    assert code == 2 and out == "" and len(err) == 1
    assert err[0] == ("linlayout: error: src holds 16777216 elements of 16 bits per lane: 8388608 registers, more "
                      "than gfx942's 512 registers per lane (256 VGPRs + 256 AGPRs)")


def test_banks_never_answers_more_than_the_lds(capsys):
    code, out, err = run(capsys, "banks", "--arch", "gfx942", "--writer", WRITER.format(256), "--reader",
                         READER.format(256), "--dtype", "fp16", "--json", seconds=30.0)
    d = json.loads(out)
    assert code == 0 and err == [] and (d["lds_bytes"], d["reps"]) == (65536, 2)
    code, out, err = run(capsys, "banks", "--arch", "gfx942", "--writer", WRITER.format(65536), "--reader",
                         READER.format(65536), "--dtype", "fp16")
    assert code == 2 and out == "" and len(err) == 1 and "writer holds 67108864 elements" in err[0]
    code, out, err = run(capsys, "banks", "--arch", "gfx942", "--writer", WRITER.format(256), "--reader",
                         READER.format(256), "--dtype", "fp16", "--lds-budget", "131072")
    assert code == 2 and len(err) == 1 and "more than gfx942's 65536 bytes of LDS" in err[0]


def test_gemm_beyond_its_addressing(capsys):
    code, out, err = run(capsys, "kernel", "gemm", "--arch", "gfx942", "--interpret", "--m", "65536", "--n",
                         "65536", "--k", "64", seconds=30.0)
    assert code == 2 and out == "" and err == [
        "linlayout: error: kernel gemm: buffer C needs 17179869184 bytes; the kernels' 32-bit buffer offsets "
        "address at most 2147483648 bytes per buffer"]


def test_gemm_beyond_the_lds(capsys):
    code, out, err = run(capsys, "kernel", "gemm", "--arch", "gfx942", "--tiles", "16x1", seconds=30.0)
    assert code == 2 and out == "" and err == [
        "linlayout: error: kernel gemm: the kernel needs 131072 bytes of LDS, more than gfx942's 65536 bytes per "
        "workgroup"]


def test_banks_tile_mode_holds_one_round_in_the_lds(capsys):
    shared = "swizzled:vec=1,phase=1,maxphase=1,order=1x0,shape=256x256"
    reg = "mfma.a:32x32x8,warps=4x1,kwidth=4,shape=256x256"
    code, out, err = run(capsys, "banks", "--arch", "gfx942", "--shared", shared, "--reg", reg, "--dtype", "f16")
    assert code == 2 and out == "" and err == [
        "linlayout: error: the shared layout holds 131072 bytes per round, more than gfx942's 65536 bytes of LDS "
        "per workgroup"]
    code, out, err = run(capsys, "banks", "--arch", "gfx950", "--shared", shared, "--reg", reg, "--dtype", "f16",
                         seconds=30.0)
    assert code == 0 and err == []
