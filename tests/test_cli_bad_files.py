"""Malformed layout files (``@FILE``) and bad scalar arguments for ``convert``, ``verify``, ``banks`` and
``show``: each call exits 2 with one line on stderr and nothing on stdout, never a traceback
(test_cli_fuzz.call checks the contract).  The files are what a user's tool might leave: truncated, binary, empty,
a JSON list, a string, float, boolean or negative basis entry, a non-power-of-two dim, a basis outside its out dim,
a dim named twice, a dim of 2**40.  Then the good cases beside them: a conversion through 4 bytes of LDS (16 rounds
of one dword, lds_path's vectors kept in one round) exits 0."""

from __future__ import annotations

import json

import pytest

from test_cli_fuzz import call

GOOD = {"in_dims": [["register", 2], ["lane", 64]], "out_dims": [["dim0", 128]],
        "bases": {"register": [[1]], "lane": [[2], [4], [8], [16], [32], [64]]}}


def _with(**changes) -> str:
    layout = json.loads(json.dumps(GOOD))
    for key, value in changes.items():
        if key == "register":
            layout["bases"]["register"] = value
        else:
            layout[key] = value
    return json.dumps(layout)


BAD_FILES = {
    "truncated": '{"in_dims": [["register", 2]',
    "binary": b"\xff\xfe\x00bin",
    "empty": "",
    "a list": "[1, 2, 3]",
    "a string basis": _with(register=[["x"]]),
    "a float basis": _with(register=[[1e300]]),
    "a boolean basis": _with(register=[[True]]),
    "a negative basis": _with(register=[[-1]]),
    "two entries for one out dim": _with(register=[[1, 2]]),
    "a dim of 3": _with(in_dims=[["register", 3], ["lane", 64]]),
    "a basis outside its dim": _with(out_dims=[["dim0", 64]]),
    "a dim named twice": _with(in_dims=[["register", 2], ["lane", 64], ["lane", 1]]),
    "a dim of 2**40": _with(in_dims=[["register", 1 << 40], ["lane", 64]]),
}


def _commands(bad: str, good: str) -> list[list[str]]:
    return [["convert", "--src", bad, "--dst", good, "--arch", "gfx942", "--dtype", "f16"],
            ["convert", "--src", good, "--dst", bad, "--arch", "gfx1100", "--dtype", "f32"],
            ["verify", bad, good],
            ["banks", "--arch", "gfx942", "--writer", bad, "--reader", good, "--dtype", "f16"],
            ["banks", "--arch", "gfx942", "--shared", bad, "--reg", good, "--dtype", "f16"],
            ["show", bad]]


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_a_malformed_layout_file_is_one_line(tmp_path, name):
    content = BAD_FILES[name]
    path = tmp_path / "bad.json"
    (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(GOOD))
    for argv in _commands(f"@{path}", f"@{good}"):
        for json_flag in ([], ["--json"]):
            code, _, err = call(json_flag + argv)
            assert code == 2 and err.startswith("linlayout: error: "), (argv, err)


@pytest.mark.parametrize("flag, value", [("--arch", "gfx9000"), ("--arch", "sm_100"), ("--arch", ""),
                                         ("--dtype", "fp17"), ("--dtype", "int"), ("--lds-budget", "-1"),
                                         ("--lds-budget", "0"), ("--lds-budget", "1.5"), ("--lds-budget", "0x10"),
                                         ("--strategy", "registerz"), ("--objective", "fast")])
def test_a_bad_convert_argument_is_one_line(tmp_path, flag, value):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(GOOD))
    argv = {"--src": f"@{good}", "--dst": f"@{good}", "--arch": "gfx942", "--dtype": "f16", flag: value}
    code, _, err = call([x for k, v in argv.items() for x in (k, v)])
    assert code == 2 and err.startswith("linlayout: error: "), err


def test_a_conversion_through_four_bytes_of_lds(tmp_path):
    """16 fp32 elements in every lane's registers, the dst's in another order, through 4 bytes of LDS: before
    vectors were kept in one round, every layout's accesses spanned two rounds and the command refused."""
    def registers(order):
        return json.dumps({"in_dims": [["register", 16], ["lane", 64]], "out_dims": [["dim0", 16]],
                           "bases": {"register": [[r] for r in order], "lane": [[0]] * 6}})
    (tmp_path / "s.json").write_text(registers([1, 2, 4, 8]))
    (tmp_path / "d.json").write_text(registers([2, 1, 8, 4]))
    code, out, _ = call(["--json", "convert", "--src", f"@{tmp_path}/s.json", "--dst", f"@{tmp_path}/d.json",
                         "--arch", "gfx942", "--dtype", "f32", "--lds-budget", "4", "--strategy", "lds"])
    got = json.loads(out)
    assert code == 0 and got["verified"] and got["lds_bytes"] == 4, got
    assert (got["plan_counts"]["lds_write"], got["plan_counts"]["lds_read"]) == (16, 16)
