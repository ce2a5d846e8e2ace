"""The README's main job, ``linlayout demo``, answers its four questions correctly."""

import json

from linlayout.cli import main


def test_demo_json(capsys):
    assert main(["demo", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    lay = r["layouts"]
    assert lay["isa_equals_triton"] is True
    # a transposed C layout differs first at register bit 0: row 1 vs column 1
    assert lay["transposed_differs_at"] == {"register": 1, "lane": 0}
    assert lay["isa_output"] == {"dim0": 1, "dim1": 0} and lay["transposed_output"] == {"dim0": 0, "dim1": 1}
    banks = r["banks"]
    # 8 ds_read_b64 per wave, 4 phases each: 16-way conflicts unswizzled, ideal after the swizzle
    assert banks["unswizzled"] == {"op": "ds_read_b64", "cycles": 512, "ideal": 32}
    assert banks["swizzled"]["cycles"] == banks["swizzled"]["ideal"] == 32
    assert banks["swizzled"]["conflict_free"] is True
    for arch in ("gfx942", "gfx950"):
        e = r["convert"][arch]
        assert e["verified"] is True
        assert e["interpreted_equal"] is True
        assert e["plan_isa_differences"] == {}
        assert e["fatbin_bytes"] > 0


def test_demo_text_without_compile(capsys):
    assert main(["demo", "--no-compile"]) == 0
    out = capsys.readouterr().out
    assert "conflict-free: True" in out
    assert "4. Compile" not in out


def test_the_readme_shows_the_demos_real_output(capsys):
    """README.md's demo block is what ``linlayout demo`` prints, up to times and code-object sizes (the linker's
    choice); it once kept a gfx942 region of 40 instructions after the planner's waits went to 1."""
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    shown = readme.split("`linlayout demo` answers the four questions", 1)[1].split("```\n", 2)[1]
    assert main(["demo"]) == 0
    real = capsys.readouterr().out

    def varying(text: str) -> list[str]:
        text = re.sub(r"\(\d+ ms\)", "(N ms)", text)
        text = re.sub(r"code object \d+ bytes", "code object N bytes", text)
        return re.sub(r"done in [\d.]+ s", "done in N s", text).strip().splitlines()

    assert varying(shown) == varying(real)
