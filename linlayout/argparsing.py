"""What every command line of the project shares: the ``linlayout`` CLI and the kernels'
entry points (``linlayout kernel NAME``) parse with :class:`Parser` and read ``--dtype``
with :func:`dtype_arg`.

* :class:`Parser` is argparse that raises :class:`~linlayout.errors.LayoutError` instead of
  printing its usage and exiting, so a bad argument is one line on stderr and exit status 2;
  its descriptions are printed as written (line breaks kept).
* :func:`error_line` is that one line, the same for every command and kernel:
  ``linlayout: error: [kernel NAME: ]MESSAGE``.
* :func:`plain_text` drops the reStructuredText inline markup of a docstring used as help:
  ````code```` -> ``code``, ``:func:`name``` / ``:class:`~mod.Name``` -> ``name`` / ``Name``,
  ``*word*`` -> ``word``.
* :func:`dtype_arg` is ``--dtype``'s type: any spelling :func:`linlayout.dtypes.dtype_name`
  reads (``fp16``, ``f16``, ``half``, ...), given to the command as the canonical name.
* :func:`positive_int` is the type of a count or size that must be at least 1 (``--lds-budget``),
  so a bad value is refused in the option's name (``argument --lds-budget: ...``).
* :func:`add_unpacked_arguments` adds ``--src-unpacked`` / ``--dst-unpacked`` / ``--dst-one-copy``
  (``plan_conversion``'s ``src_unpacked`` / ``dst_unpacked`` / ``dst_one_copy``) to the commands that plan a
  conversion for a kernel they describe
  (``linlayout convert``, ``linlayout kernel convert``).
* :func:`check_output` refuses, before any work, an output path the command could not write;
  no command creates folders (docs/cli.md, "Output files and folders").  :func:`output_folder`
  is the argparse type of an option naming the folder a command writes its files into
  (``linlayout kernel NAME --emit DIR``).
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

from .dtypes import dtype_name
from .errors import LayoutError

__all__ = ["Parser", "error_line", "plain_text", "dtype_arg", "positive_int", "add_unpacked_arguments", "check_output",
           "output_folder"]

_ROLE = re.compile(r":[a-z]+:`(~?)([^`]+)`")
_CODE = re.compile(r"``(.+?)``")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?!\s)([^*\n]+?)(?<!\s)\*(?![\w*])")


def plain_text(doc: str | None) -> str:
    """``doc`` without reStructuredText inline markup (roles, literals, emphasis)."""
    if not doc:
        return ""
    text = _ROLE.sub(lambda m: m.group(2).rsplit(".", 1)[-1] if m.group(1) else m.group(2), doc)
    text = _CODE.sub(r"\1", text)
    return _EMPHASIS.sub(r"\1", text)


class Parser(argparse.ArgumentParser):
    """argparse that raises ``LayoutError`` instead of exiting, with plain-text descriptions."""

    def __init__(self, *args, description: str | None = None, **kwargs):
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, description=plain_text(description) or None, **kwargs)

    def error(self, message: str):  # type: ignore[override]
        raise LayoutError(message)


def error_line(error: Exception, command: str | None = None) -> str:
    """The one line (no newline) the command line prints on stderr for bad input, exit status 2:
    ``linlayout: error: MESSAGE``, or ``linlayout: error: COMMAND: MESSAGE`` where the error comes from
    a kernel's own options or build (``command`` ``kernel NAME``); whitespace runs (line breaks too) are
    one space."""
    message = " ".join(str(error).split())
    return f"linlayout: error: {command}: {message}" if command else f"linlayout: error: {message}"


def dtype_arg(text: str) -> str:
    """``--dtype``'s argparse type: the canonical name of ``text`` (``"fp16"`` -> ``"f16"``)."""
    try:
        return dtype_name(text)
    except LayoutError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def positive_int(text: str) -> int:
    """The argparse type of an integer option that must be at least 1: ``int(text)``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value} must be a positive integer")
    return value


def add_unpacked_arguments(parser: argparse.ArgumentParser) -> None:
    """``--src-unpacked`` and ``--dst-unpacked`` (store-true flags, ``args.src_unpacked`` / ``dst_unpacked``):
    the kernel moves that side's 8/16-bit elements one per VGPR; ``--dst-one-copy`` (``args.dst_one_copy``):
    it stores one copy of each dst element held in several lanes, from the canonical lanes."""
    parser.add_argument("--src-unpacked", action="store_true",
                        help="the kernel loads each 8/16-bit src element alone into the low bits of its own VGPR, "
                             "the bits above it zero (global_load_ubyte/_ushort): plan for the src held one element "
                             "per VGPR (AMD targets)")
    parser.add_argument("--dst-unpacked", action="store_true",
                        help="the kernel stores each 8/16-bit dst element alone from the low bits of its own VGPR "
                             "(global_store_byte/_short), the bits above it don't-care: plan for the dst held one "
                             "element per VGPR (AMD targets)")
    parser.add_argument("--dst-one-copy", action="store_true",
                        help="the kernel stores one copy of each dst element the dst holds in several lanes (a zero "
                             "lane basis), from the lanes whose bits of those bases are clear, under an EXEC mask: "
                             "plan for the dst read in one copy (AMD targets; with --strategy lds none is tried)")


def check_output(path: str | None, what: str, *, folder: bool = False) -> None:
    """Refuse an output ``path`` the command could not write, before any work, so a bad argument
    writes nothing (docs/contract.md section 3): one ``LayoutError`` line, ``cannot write {what}
    {path!r}: {reason}``.  A file (``folder=False``) must be a non-empty path, not a folder nor
    ending in a separator (``x.png/`` would write ``x.png``), in an existing folder, writable; a folder the command writes its files into (``folder=True``) must
    exist and be writable.  None is no output (nothing to check)."""
    if path is None:
        return
    target = Path(path)
    home = target if folder else target.parent
    if not path:
        reason = "an empty path"
    elif not folder and (target.is_dir() or path.endswith(("/", os.sep))):
        reason = "it is a folder" if target.is_dir() else "a path ending in a separator names a folder"
    elif folder and target.exists() and not target.is_dir():
        reason = "it is not a folder"
    elif not home.is_dir():
        reason = "no such folder" if folder else f"no folder {str(home)!r}"
    elif not os.access(home, os.W_OK) or (not folder and target.exists() and not os.access(target, os.W_OK)):
        reason = "not writable"
    else:
        return
    raise LayoutError(f"cannot write {what} {path!r}: {reason}")


def output_folder(text: str) -> str:
    """The argparse type of an option naming the existing, writable folder a command writes its
    files into (:func:`check_output` with ``folder=True``): ``text`` itself."""
    try:
        check_output(text, "into", folder=True)
    except LayoutError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text
