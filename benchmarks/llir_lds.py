"""The LDS accesses of a compiled Triton kernel, read from its LLVM IR (``compiled.asm["llir"]``).

Every ``store`` to and ``load`` from ``ptr addrspace(3)`` is an LDS access.  Its per-thread byte
address is evaluated for every thread of the workgroup from the integer instructions that compute
it (``llvm.amdgcn.workitem.id.x`` is the thread id; ``llvm.amdgcn.readfirstlane`` of a value is
its value in the first lane of the thread's wave; ``@global_smem`` is byte 0), one numpy array of
``threads`` addresses per access.  Evaluated are the integer instructions Triton's lowering emits
for addresses (``and or xor shl lshr ashr add sub mul udiv urem sdiv srem zext sext trunc select
icmp getelementptr``); any other instruction in an address is an error (``ValueError``), never a
guess.  The access width is the stored or loaded type's size (``<4 x half>``: 8 bytes per lane).

Branches: the corpus kernels branch only forward (a wave's lanes that store nothing, where the dst
layout broadcasts, skip the store's block, and LLVM may sink the LDS loads into it).  Each block's
``active`` threads are those that reach it (the entry block: all; ``br i1 %c, label %a, label %b``
sends the threads where ``%c`` holds to ``%a``, the rest to ``%b``); a branch back to an earlier
block, a ``switch`` or a ``phi`` in an address is an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

_DEF = re.compile(r"^\s*(%[\w.]+) = (.*?)(?:, !dbg.*)?$")
_TYPE_BYTES = {"i8": 1, "i16": 2, "half": 2, "bfloat": 2, "i32": 4, "float": 4, "i64": 8, "double": 8}
_ICMP = {"eq": np.equal, "ne": np.not_equal, "ult": np.less, "ugt": np.greater, "ule": np.less_equal,
         "uge": np.greater_equal, "slt": np.less, "sgt": np.greater, "sle": np.less_equal, "sge": np.greater_equal}
_BINARY = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor, "add": np.add, "sub": np.subtract,
           "mul": np.multiply, "shl": np.left_shift, "lshr": np.right_shift, "ashr": np.right_shift,
           "udiv": np.floor_divide, "sdiv": np.floor_divide, "urem": np.remainder, "srem": np.remainder}
_FLAGS = {"nuw", "nsw", "exact", "disjoint", "nneg", "inbounds", "samesign"}


@dataclass(frozen=True)
class LdsAccess:
    """One LDS access of the kernel: ``store`` or load, ``width_bytes`` per lane, ``addr[thread]``
    (bytes from the kernel's LDS base), ``active[thread]`` (the threads that execute it) and the
    LLVM IR line it is on (1-based)."""

    store: bool
    width_bytes: int
    addr: np.ndarray
    active: np.ndarray
    line: int


def type_bytes(ty: str) -> int:
    """The size in bytes of an LLVM IR first-class type (``i32``, ``<4 x half>``)."""
    m = re.fullmatch(r"<(\d+) x (\w+)>", ty.strip())
    if m:
        return int(m.group(1)) * _TYPE_BYTES[m.group(2)]
    return _TYPE_BYTES[ty.strip()]


class _Evaluator:
    def __init__(self, lines: list[str], threads: int, wave_size: int) -> None:
        self.defs = {}
        for ln in lines:
            m = _DEF.match(ln)
            if m:
                self.defs[m.group(1)] = m.group(2)
        self.tid = np.arange(threads, dtype=np.int64)
        self.wave_size = wave_size
        self.values: dict[str, np.ndarray] = {}

    def operand(self, text: str) -> np.ndarray:
        text = text.strip()
        words = text.split()
        name = words[-1]
        if name == "@global_smem":
            return np.zeros_like(self.tid)
        if name in ("true", "false"):
            return np.full_like(self.tid, name == "true")
        if name.startswith("%"):
            return self.value(name)
        return np.full_like(self.tid, int(name))

    def value(self, name: str) -> np.ndarray:
        got = self.values.get(name)
        if got is None:
            got = self.values[name] = self._evaluate(name, self.defs[name])
        return got

    def _evaluate(self, name: str, text: str) -> np.ndarray:
        if "@llvm.amdgcn.workitem.id.x" in text:
            return self.tid.copy()
        if "@llvm.amdgcn.wave.id" in text:
            return self.tid // self.wave_size
        m = re.match(r"(?:tail )?call i(\d+) @llvm\.bitreverse\.i\d+\(i\d+ (%[\w.]+)\)", text)
        if m:
            bits, v = int(m.group(1)), self.value(m.group(2))
            return sum(((v >> b) & 1) << (bits - 1 - b) for b in range(bits))
        m = re.match(r"(?:tail )?call i32 @llvm\.amdgcn\.readfirstlane(?:\.i32)?\(i32 (%[\w.]+)\)", text)
        if m:
            v = self.value(m.group(1))
            return v[(self.tid // self.wave_size) * self.wave_size]
        words = text.replace(",", " ").split()
        op = words[0]
        rest = [w for w in words[1:] if w not in _FLAGS]
        if op in _BINARY:
            a, b = text.split(",", 1)
            x, y = self.operand(a.split()[-1]), self.operand(b)
            if op in ("udiv", "sdiv", "urem", "srem") and not np.all(y):
                raise ValueError(f"division by zero in {name}")
            bits = int(rest[0][1:]) if rest[0].startswith("i") else 64
            if op in ("ashr", "sdiv", "srem") and bool(np.any(x >> (bits - 1) & 1)):
                raise ValueError(f"signed {op} of a negative value in {name}")
            return _BINARY[op](x, y) & ((1 << bits) - 1)
        if op in ("zext", "bitcast"):
            return self.operand(text.split(" to ")[0].split()[-1])
        if op in ("trunc", "sext"):
            v = self.operand(text.split(" to ")[0].split()[-1])
            bits = int(text.split(" to ")[1].split()[0][1:]) if op == "trunc" else int(rest[0][1:])
            if op == "sext" and bool(np.any(v >> (bits - 1) & 1)):
                raise ValueError(f"sext of a negative value in {name}")
            return v & ((1 << bits) - 1)
        if op == "icmp":
            pred = rest[0]
            a, b = text.split(",", 1)
            return _ICMP[pred](self.operand(a.split()[-1]), self.operand(b)).astype(np.int64)
        if op == "select":
            c, a, b = text[len("select"):].split(",")
            return np.where(self.operand(c) != 0, self.operand(a), self.operand(b))
        if op == "getelementptr":
            parts = [p.strip() for p in text[len("getelementptr"):].split(",")]
            elem = parts[0].split()[-1]
            base = self.operand(parts[1])
            if len(parts) != 3:
                raise ValueError(f"getelementptr with {len(parts) - 1} indices in {name}: {text}")
            return base + self.operand(parts[2]) * type_bytes(elem)
        raise ValueError(f"address instruction not evaluated: {name} = {text}")


def lds_accesses(llir: str, threads: int, wave_size: int) -> list[LdsAccess]:
    """Every LDS access of the kernel ``llir`` in program order, evaluated for ``threads`` threads
    of waves of ``wave_size`` lanes (module docstring)."""
    lines = llir.splitlines()
    ev = _Evaluator(lines, threads, wave_size)
    everyone = np.ones(threads, dtype=bool)
    reached: dict[str, np.ndarray] = {}
    seen: set[str] = set()
    active, out = everyone, []
    for i, ln in enumerate(lines, 1):
        label = re.match(r"^([\w.]+):", ln)
        if label:
            seen.add(label.group(1))
            active = reached.get(label.group(1), np.zeros(threads, dtype=bool))
            continue
        if re.match(r"\s*(switch|indirectbr)\b", ln) or re.match(r"\s*%[\w.]+ = phi\b", ln):
            raise ValueError(f"line {i}: control flow the LDS address reader does not follow: {ln.strip()[:80]}")
        m = re.match(r"\s*br i1 (%[\w.]+), label %([\w.]+), label %([\w.]+)", ln)
        if m:
            taken = ev.operand(m.group(1)) != 0
            _reach(reached, seen, m.group(2), active & taken, i)
            _reach(reached, seen, m.group(3), active & ~taken, i)
            continue
        m = re.match(r"\s*br label %([\w.]+)", ln)
        if m:
            _reach(reached, seen, m.group(1), active, i)
            continue
        m = re.match(r"\s*store (<[^>]*>|\S+) \S+, ptr addrspace\(3\) (\S+?),", ln)
        if m:
            out.append(LdsAccess(True, type_bytes(m.group(1)), ev.operand(m.group(2)), active, i))
            continue
        m = re.match(r"\s*%[\w.]+ = load (<[^>]*>|[^,]+), ptr addrspace\(3\) (\S+?),", ln)
        if m:
            out.append(LdsAccess(False, type_bytes(m.group(1)), ev.operand(m.group(2)), active, i))
        elif "addrspace(3)" in ln and re.search(r"\b(atomicrmw|cmpxchg|call)\b", ln):
            raise ValueError(f"an LDS access that is not a load or store: {ln.strip()[:120]}")
    return out


def _reach(reached: dict, seen: set, label: str, threads: np.ndarray, line: int) -> None:
    if label in seen:
        raise ValueError(f"line {line}: a branch back to block {label}")
    reached[label] = reached[label] | threads if label in reached else threads
