"""A small builder of MLIR assembly text: SSA names, types, constants, one op per line.

The emitters of this package write MLIR as text (the compile layer and the interpreter both
parse text), so the builder only has to keep SSA names unique and put every op on its own
line in program order.  Values are plain strings (``"%v12"``); types are MLIR type strings
(``"i32"``, ``"vector<4xi32>"``, ``"!llvm.ptr<3>"``).

Constants are interned per (value, type) and written at the top of the function body, so a
constant created while emitting a later section still dominates every use.
"""

from __future__ import annotations

from typing import Sequence

__all__ = ["Builder", "vector_type", "int_type", "kernel_module"]


def int_type(bits: int) -> str:
    """``i<bits>``."""
    return f"i{int(bits)}"


def vector_type(n: int, elem: str) -> str:
    """``vector<NxT>`` (``elem`` itself when ``n == 1``)."""
    return elem if n == 1 else f"vector<{int(n)}x{elem}>"


def kernel_module(name: str, params: Sequence[tuple[str, str]], body: str, threads: int,
                  globals_: Sequence[str] = ()) -> str:
    """A module with one ``gpu.module`` holding kernel ``name(params)`` (``(ssa name, type)`` pairs) of
    ``threads`` threads per workgroup, declared as ``known_block_size = [threads, 1, 1]``: the code object
    states it (``.max_flat_workgroup_size``) and the interpreter checks every launch against it.  A kernel
    that declares no size is taken by LLVM for one of at most 256 threads (``.max_flat_workgroup_size:
    256``), and LLVM then drops the thread id's bits from 256 up (the warp id's bits above 2 on a wave64)."""
    g = "".join(f"    {line}\n" for line in globals_)
    sig = ", ".join(f"{n}: {t}" for n, t in params)
    return (f"module {{\n  gpu.module @linlayout_kernels {{\n{g}"
            f"    gpu.func @{name}({sig}) kernel attributes {{known_block_size = array<i32: {threads}, 1, 1>}} {{\n"
            f"{body}\n      gpu.return\n    }}\n  }}\n}}\n")


class Builder:
    """Collects the body of one function: a constant section and the op lines, in order."""

    def __init__(self, indent: str = "      ") -> None:
        self.indent = indent
        self._consts: dict[tuple[str, str], str] = {}
        self._const_lines: list[str] = []
        self.lines: list[str] = []
        self._count = 0

    # ------------------------------------------------------------------ names
    def fresh(self, hint: str = "v") -> str:
        """A new SSA name ``%<hint><n>``."""
        self._count += 1
        return f"%{hint}{self._count}"

    # ------------------------------------------------------------------ lines
    def line(self, text: str) -> None:
        """Append one op line (no result, or a result named by the caller)."""
        self.lines.append(self.indent + text)

    def lines_(self, texts: list[str]) -> None:
        for t in texts:
            self.line(t)

    def comment(self, text: str) -> None:
        """An MLIR ``//`` comment line (ignored by every parser)."""
        self.line("// " + text.replace("\n", " "))

    def value(self, rhs: str, hint: str = "v") -> str:
        """Append ``%new = <rhs>`` and return ``%new``."""
        name = self.fresh(hint)
        self.line(f"{name} = {rhs}")
        return name

    def values(self, rhs: str, n: int, hint: str = "v") -> list[str]:
        """Append ``%new:n = <rhs>`` (a multi-result op); return ``%new#0 .. %new#n-1``."""
        name = self.fresh(hint)
        self.line(f"{name}:{n} = {rhs}")
        return [f"{name}#{i}" for i in range(n)]

    # ------------------------------------------------------------------ constants
    def const(self, value: int, type_: str = "i32") -> str:
        """An ``arith.constant`` of an integer type (interned, placed at the top of the body)."""
        bits = int(type_[1:]) if type_.startswith("i") and type_[1:].isdigit() else None
        v = int(value)
        if bits is not None:  # print the two's-complement value MLIR expects for the width
            v &= (1 << bits) - 1
            if v >= 1 << (bits - 1) and bits > 1:
                v -= 1 << bits
        key = (str(v), type_)
        name = self._consts.get(key)
        if name is None:
            name = self.fresh("c")
            self._const_lines.append(f"{self.indent}{name} = arith.constant {v} : {type_}")
            self._consts[key] = name
        return name

    # ------------------------------------------------------------------ common ops
    def arith(self, op: str, a: str, b: str, type_: str = "i32") -> str:
        """``arith.<op> a, b : type`` (addi, subi, muli, andi, ori, xori, shli, shrui, ...)."""
        return self.value(f"arith.{op} {a}, {b} : {type_}", op[:3])

    def select(self, cond: str, if_true: str, if_false: str, type_: str = "i32") -> str:
        """``arith.select``: per lane ``if_true`` where ``cond`` else ``if_false``."""
        return self.value(f"arith.select {cond}, {if_true}, {if_false} : {type_}", "sel")

    def cast(self, op: str, x: str, from_t: str, to_t: str) -> str:
        """A cast op (``arith.trunci``, ``arith.extui``, ``llvm.bitcast``, ``arith.index_cast`` ...)."""
        return self.value(f"{op} {x} : {from_t} to {to_t}", "cv")

    def extract(self, vec: str, i: int, vec_t: str) -> str:
        """Element ``i`` of an LLVM-compatible 1-D vector."""
        return self.value(f"llvm.extractelement {vec}[{self.const(i)} : i32] : {vec_t}", "e")

    def build_vector(self, elems: list[str], elem_t: str) -> str:
        """A 1-D vector of ``elems`` (a lone element is returned as is)."""
        if len(elems) == 1:
            return elems[0]
        vt = vector_type(len(elems), elem_t)
        return self.value(f"vector.from_elements {', '.join(elems)} : {vt}", "vec")

    def body(self) -> str:
        """The constant section followed by the op lines."""
        return "\n".join(self._const_lines + self.lines)
