"""Interpreter options, including every inferred ([I]) hardware fact as a named parameter.

Facts tagged [I] in ``docs/amd_facts.md`` are not documented by AMD; each is a
field here with the value we believe, so a test or a later measurement can change it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import InterpreterError

__all__ = ["InterpOptions", "FP8_STYLES"]

#: The ds_read_b64_tr_b{4,8,16} / ds_read_b96_tr_b6 lane models we know (docs/amd_facts.md 1.6).
#: fp8/bf8 encodings of the plain (non-f8f6f4) fp8 MFMAs: "fnuz" = f8E4M3FNUZ/f8E5M2FNUZ
#: (MI300), "ocp" = f8E4M3FN/f8E5M2 (MI350).
FP8_STYLES = ("fnuz", "ocp")


@dataclass(frozen=True)
class InterpOptions:
    """How the interpreter treats undefined behaviour and undocumented hardware details.

    Undefined behaviour
      ``uninitialized_lds``: reading LDS bytes this workgroup never wrote: ``"error"``
      (default), ``"zero"`` or ``"garbage"`` (deterministic pseudo-random bytes, so a result
      that depends on them fails comparison).
      ``check_lds_races``: a read of bytes another wave wrote since the last barrier, a write
      of bytes another wave wrote (with a different value) or read since the last barrier,
      raise ``InterpreterError`` (the interpreter runs the waves in lockstep, which would
      otherwise hide a missing barrier).
      ``check_store_conflicts``: one store instruction whose active lanes write different
      values to the same byte raises (the hardware keeps an unspecified one).
      ``undef_fill``: the contents of ``llvm.mlir.undef`` / ``llvm.mlir.poison`` /
      ``ub.poison``: ``"pattern"`` (integers 0xA5 bytes, floats NaN) or ``"zero"``.

    Inferred hardware facts [I]
      ``dpp_inactive_source_invalid``: a DPP mov whose source lane is inactive (EXEC=0)
      treats the source as out of range (bound_ctrl decides: 0 written or old kept), as the
      GCN3 documentation says; the gfx9 text does not say.
      ``dpp_row_bcast_row0_invalid``: row_bcast:15 / row_bcast:31 lanes with no source row
      (lanes 0-15 / 0-31) count as out of range (bound_ctrl decides); ``False``: they are not
      written at all (keep ``old`` whatever bound_ctrl says).
      ``buffer_oob_rule``: raw buffer range check of one dword component at byte offset
      ``o`` (voffset + component offset, soffset excluded): ``"start"`` = out of range iff
      ``o >= num_records`` (the ISA text), ``"end"`` = iff ``o + size > num_records``.
      ``buffer_require_dword_alignment``: dword (and wider) buffer accesses must be
      4-byte aligned (ISA: the low two address bits are ignored; LLVM assumes unaligned
      mode); a misaligned one raises instead of guessing.
      ``fp8_style_gfx942`` / ``fp8_style_gfx950``: the encoding of the fp8/bf8 operands of the
      plain fp8 MFMAs on that arch (:data:`FP8_STYLES`).
      ``mbcnt_and_exec``: ``v_mbcnt_lo/hi`` also AND the mask with EXEC (the MLIR ROCDL op
      description says so; the ISA pseudocode does not, and is the default).
    """

    uninitialized_lds: str = "error"
    check_lds_races: bool = True
    check_store_conflicts: bool = True
    undef_fill: str = "pattern"
    dpp_inactive_source_invalid: bool = True
    dpp_row_bcast_row0_invalid: bool = True
    buffer_oob_rule: str = "start"
    buffer_require_dword_alignment: bool = True
    fp8_style_gfx942: str = "fnuz"
    fp8_style_gfx950: str = "ocp"
    mbcnt_and_exec: bool = False
    seed: int = 0

    def fp8_style(self, arch: str) -> str:
        return self.fp8_style_gfx950 if arch == "gfx950" else self.fp8_style_gfx942

    def validate(self) -> None:
        if self.uninitialized_lds not in ("error", "zero", "garbage"):
            raise InterpreterError(f"uninitialized_lds must be 'error', 'zero' or 'garbage', got {self.uninitialized_lds!r}")
        if self.undef_fill not in ("pattern", "zero"):
            raise InterpreterError(f"undef_fill must be 'pattern' or 'zero', got {self.undef_fill!r}")
        if self.buffer_oob_rule not in ("start", "end"):
            raise InterpreterError(f"buffer_oob_rule must be 'start' or 'end', got {self.buffer_oob_rule!r}")
        for s in (self.fp8_style_gfx942, self.fp8_style_gfx950):
            if s not in FP8_STYLES:
                raise InterpreterError(f"fp8 style must be one of {FP8_STYLES}, got {s!r}")
