"""Compiling a ``gpu.func`` into steps, and running it one workgroup at a time.

:class:`Compiler` walks the parsed module once (through the MLIR Python bindings), gives every
SSA value a slot number, lays out the kernel's LDS, and turns each op into a step with the
handler registered for its name (``registry.OPS``); an op with no handler is an
``InterpreterError`` naming it and its line.  The MLIR objects are not needed afterwards.

:class:`Kernel` runs the steps SIMT-vectorised: one numpy array per SSA value holds the
value of every thread of the workgroup (lane axis T = waves * W, thread t is lane t % W of
wave t // W, W the target's wave size: 64 on CDNA, 32 on RDNA and gfx1250; linear thread id
t = x + bx*(y + by*z)).  ``Ctx.mask`` is the EXEC mask
(``None`` = every thread active); divergent ``scf.if``/``scf.for``/``scf.while`` narrow it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from linlayout import caches
from linlayout.errors import LayoutError
from linlayout.hw.targets import get_target
from linlayout.lowering.mlir import bindings, parse_module

from .errors import InterpreterError
from .memory import GlobalMemory, LdsLayout, LocalMemory, MemRefValue, PrivateMemory
from .ops_arith import dense_values
from .options import InterpOptions
from .registry import OPS, OpInfo, _location, const_array
from .types import FloatT, IntT, MemRefT, PtrT, StructT, VectorT, byte_size, parse_type, to_bytes

__all__ = ["Compiler", "Kernel", "Ctx", "Block", "LaunchBounds", "run_block", "launch_bounds", "load_kernel",
           "TERMINATORS"]

TERMINATORS = ("scf.yield", "scf.condition", "gpu.return", "func.return", "llvm.return")
MAX_THREADS = 1024


def _check_text(module_text: Any) -> None:
    """An InterpreterError where ``module_text`` is not a str."""
    if not isinstance(module_text, str):
        raise InterpreterError(f"module_text must be MLIR assembly text, got {type(module_text).__name__}")


def _parsed(text: str) -> Any:
    """The MLIR module of ``text``; an InterpreterError where it does not parse."""
    ir = bindings().ir
    try:
        return parse_module(text)
    except ir.MLIRError as exc:
        raise InterpreterError(f"the module does not parse: {exc}") from None


def _gpu_module_ops(module: Any):
    """The ops of every ``gpu.module`` of ``module``, in order."""
    for op in module.body.operations:
        op = op.operation
        if op.name == "gpu.module":
            for inner in op.regions[0].blocks[0].operations:
                yield inner.operation


def _find_kernel(module: Any, name: Optional[str]) -> Any:
    """The ``gpu.func`` kernel ``name`` of ``module`` (None: its only one); an InterpreterError where there is none
    such (or several, unnamed)."""
    kernels = [op for op in _gpu_module_ops(module) if op.name == "gpu.func" and "kernel" in op.attributes]
    names = [k.attributes["sym_name"].value for k in kernels]
    if not kernels:
        raise InterpreterError("no gpu.func kernel inside a gpu.module")
    if name is None:
        if len(kernels) > 1:
            raise InterpreterError(f"{len(kernels)} kernels ({', '.join(names)}); name one")
        return kernels[0]
    if name not in names:
        raise InterpreterError(f"no kernel {name!r}; kernels are {', '.join(names)}")
    return kernels[names.index(name)]


@dataclass(frozen=True)
class LaunchBounds:
    """The launches kernel ``name`` allows: at most ``MAX_THREADS`` threads a workgroup and the sizes it declares,
    ``known`` (``known_block_size``, ``known_grid_size`` -> a 3-tuple, where declared: LLVM compiles the kernel
    for exactly those, ``.max_flat_workgroup_size`` in its code object)."""

    name: str
    known: dict

    @classmethod
    def of(cls, func: Any) -> "LaunchBounds":
        """The bounds a ``gpu.func`` declares in its attributes."""
        return cls(func.attributes["sym_name"].value,
                   {key: tuple(int(v) for v in func.attributes[key])
                    for key in ("known_block_size", "known_grid_size") if key in func.attributes})

    def check(self, grid: Any, block: Any) -> tuple[tuple, tuple]:
        """``(grid, block)`` as 3-tuples, where a launch of them is one the kernel allows (the class docstring);
        an InterpreterError naming the difference otherwise.  The interpreter checks every run so
        (:meth:`Kernel.run`), and so does a GPU launch of the kernel's code object before it starts
        (linlayout.kernels.common.launch_on_gpu, by :func:`launch_bounds`)."""
        grid, block = _dims(grid, "grid"), _dims(block, "block")
        if block[0] * block[1] * block[2] > MAX_THREADS:
            raise InterpreterError(f"block {block} has more than {MAX_THREADS} threads")
        for key, launch in (("known_block_size", block), ("known_grid_size", grid)):
            if key in self.known and self.known[key] != launch:
                raise InterpreterError(f"kernel {self.name} declares {key} = {self.known[key]}, launched with {launch}")
        return grid, block


def launch_bounds(module_text: str, kernel_name: Optional[str] = None) -> LaunchBounds:
    """:class:`LaunchBounds` of ``kernel_name`` (or the only kernel) of ``module_text``, read from its attributes
    alone: the module is parsed, not built for the interpreter (its ops need no handler)."""
    _check_text(module_text)
    module = _parsed(module_text)
    with module.context:  # (as Compiler's: value casters of the bindings' users need a current context)
        return LaunchBounds.of(_find_kernel(module, kernel_name))


@dataclass
class Block:
    """A compiled single-block region: argument slots, steps, and the terminator's operands."""

    arg_slots: list
    steps: list  # (op name, location, step)
    term_slots: list


class Compiler:
    """Turns one kernel of an MLIR module into a :class:`Kernel`."""

    def __init__(self, text: str, kernel_name: Optional[str], arch: str) -> None:
        try:
            self.target = get_target(arch)
        except LayoutError as exc:
            raise InterpreterError(str(exc)) from None
        if self.target.family not in ("cdna", "rdna"):
            raise InterpreterError(f"the interpreter models AMD targets (CDNA wave64, RDNA and gfx1250 wave32), "
                                   f"not {arch}")
        self.arch = self.target.name
        self.ir = bindings().ir
        module = _parsed(text)
        self.slots: dict = {}
        self.nslots = 0
        self.lds = LdsLayout()
        self.dynamic_lds: list = []  # (name, alignment) of the dynamic shared memory symbols
        self.symbols: dict = {}  # name -> ("lds", offset) | ("const", index)
        self.consts: list = []  # (name, bytes) of read-only global data
        with module.context:  # value casters registered by the bindings' users (FlyDSL) need a current context
            func = self._find_kernel(module, kernel_name)
            self.kernel_name = func.attributes["sym_name"].value
            self.body = self._compile_function(func)
        self.slots = {}  # the MLIR values die with the module; keep no references

    # ---- slots
    def slot(self, value: Any) -> int:
        try:
            return self.slots[value]
        except KeyError:
            raise InterpreterError(f"value {value.get_name()} is used before it is defined") from None

    def new_slot(self, value: Any) -> int:
        s = self.nslots
        self.slots[value] = s
        self.nslots += 1
        return s

    # ---- module structure
    def _find_kernel(self, module: Any, name: Optional[str]) -> Any:
        """``find_kernel``'s, declaring the module's globals on the way."""
        for op in _gpu_module_ops(module):
            if op.name in ("memref.global", "llvm.mlir.global"):
                self._declare_global(op)
        return _find_kernel(module, name)

    def _declare_global(self, op: Any) -> None:
        name = op.attributes["sym_name"].value
        align = int(op.attributes["alignment"].value) if "alignment" in op.attributes else 16
        if op.name == "memref.global":
            t = parse_type(op.attributes["type"].value, self.ir)
            if not isinstance(t, MemRefT):
                raise InterpreterError(f"memref.global @{name}: unsupported type {t}")
            nbytes = byte_size(t.elem) * int(np.prod(t.shape, dtype=np.int64))
            if t.space == "workgroup":
                self.symbols[name] = ("lds", self.lds.allocate(name, nbytes, max(align, 16)))
                return
            init = op.attributes["initial_value"] if "initial_value" in op.attributes else None
            if init is None or "constant" not in op.attributes:
                raise InterpreterError(f"memref.global @{name}: only workgroup globals and constant globals are supported")
            vals = const_array(dense_values(init, t.elem, t.shape), _vec(t))
            self.consts.append((name, to_bytes(vals, _vec(t)).ravel().copy()))
            self.symbols[name] = ("const", len(self.consts) - 1)
            return
        space = int(op.attributes["addr_space"].value) if "addr_space" in op.attributes else 0
        t = parse_type(op.attributes["global_type"].value, self.ir)
        if space != 3:
            raise InterpreterError(f"llvm.mlir.global @{name}: only address space 3 (LDS) globals are supported")
        if byte_size(t) == 0:  # an external zero-size array: the launch's dynamic shared memory
            self.dynamic_lds.append((name, align))
            return
        self.symbols[name] = ("lds", self.lds.allocate(name, byte_size(t), max(align, 16)))

    def _compile_function(self, func: Any) -> Block:
        block = func.regions[0].blocks[0]
        if len(func.regions[0].blocks) != 1:
            raise InterpreterError("kernels with several blocks (cf branches) are not supported; use scf")
        n_wg = int(func.attributes["workgroup_attributions"].value) if "workgroup_attributions" in func.attributes else 0
        args = list(block.arguments)
        self.bounds = LaunchBounds.of(func)
        ftype = self.ir.FunctionType(func.attributes["function_type"].value)
        n_params = len(ftype.inputs)
        self.params = [(self.new_slot(a), parse_type(a.type, self.ir)) for a in args[:n_params]]
        self.attributions = []
        for i, a in enumerate(args[n_params:]):
            t = parse_type(a.type, self.ir)
            if not isinstance(t, MemRefT):
                raise InterpreterError(f"attribution {i} has unsupported type {t}")
            nbytes = byte_size(t.elem) * int(np.prod(t.shape, dtype=np.int64))
            if i < n_wg:
                self.attributions.append((self.new_slot(a), t, "lds", self.lds.allocate(f"workgroup{i}", nbytes, 16)))
            else:
                self.attributions.append((self.new_slot(a), t, "private", nbytes))
        for name, align in self.dynamic_lds:  # after every static allocation: its size comes with the launch
            self.symbols[name] = ("lds", self.lds.allocate(name, 0, max(align, 16)))
        return self._compile_block(block, None, bind_args=False)

    def compile_region(self, region: Any, owner: OpInfo) -> Block:
        blocks = list(region.blocks)
        if len(blocks) != 1:
            raise owner.error(f"regions with {len(blocks)} blocks are not supported")
        return self._compile_block(blocks[0], owner)

    def _compile_block(self, block: Any, owner: Optional[OpInfo], bind_args: bool = True) -> Block:
        arg_slots = [self.new_slot(a) for a in block.arguments] if bind_args else []
        steps, term_slots = [], []
        for op in block.operations:
            op = op.operation
            name = op.name
            if name in TERMINATORS:
                term_slots = [self.slot(v) for v in op.operands]
                continue
            handler = OPS.get(name)
            if handler is None:
                raise InterpreterError("operation not supported by the interpreter", name, _location(op))
            try:
                info = OpInfo(op, self)
                step = handler(info)
            except InterpreterError:
                raise
            except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
                raise InterpreterError(f"cannot interpret this op ({exc})", name, _location(op)) from None
            if step is not None:
                steps.append((name, info.loc, step))
        return Block(arg_slots, steps, term_slots)


def _vec(t: MemRefT) -> VectorT:
    """The memref's contents as one vector value (for constant initialisers)."""
    return VectorT(tuple(t.shape), t.elem)


class Ctx:
    """Execution state of one workgroup."""

    def __init__(self, kernel: "Kernel", gmem: GlobalMemory, lds: LocalMemory, bid: tuple, grid: tuple,
                 block: tuple, geometry: "_Geometry", opts: InterpOptions, const_bases: list) -> None:
        self.vals: list = [None] * kernel.nslots
        self.kernel = kernel
        self.gmem = gmem
        self.lds = lds
        self.bid = bid
        self.grid = grid
        self.block = block
        self.T = geometry.lanes
        self.waves = geometry.waves
        self.wave = geometry.wave
        self.lane = geometry.lane
        self.tid = geometry.tid
        self.launch_mask: Optional[np.ndarray] = geometry.launch_mask
        self.mask: Optional[np.ndarray] = geometry.launch_mask
        self._all = np.ones(self.T, bool)
        self.opts = opts
        self.arch = kernel.arch
        self.target = kernel.target
        self.const_bases = const_bases
        self.lds_pending = False  # LDS writes not yet waited for (see ops_gpu)

    def active(self) -> np.ndarray:
        """The EXEC mask of every lane as a bool array (T,)."""
        return self._all if self.mask is None else self.mask

    def set_mask(self, m: np.ndarray) -> None:
        self.mask = None if m.all() else m

    def converged(self) -> bool:
        """Every launched thread is active (no divergent control flow around us)."""
        if self.mask is None:
            return True
        if self.launch_mask is None:
            return False
        return bool(np.array_equal(self.mask, self.launch_mask))


def run_block(ctx: Ctx, block: Block, args: Sequence) -> list:
    """Run ``block`` with ``args`` bound to its arguments; the terminator's operand values."""
    vals = ctx.vals
    for s, v in zip(block.arg_slots, args):
        vals[s] = v
    for name, loc, step in block.steps:
        try:
            step(ctx)
        except InterpreterError as exc:
            if exc.op is None:
                raise InterpreterError(str(exc), name, loc) from None
            raise
        except (ArithmeticError, ValueError, IndexError, TypeError, KeyError, AttributeError) as exc:
            raise InterpreterError(f"internal interpreter failure ({type(exc).__name__}: {exc})", name, loc) from exc
    return [vals[s] for s in block.term_slots]


@dataclass
class _Geometry:
    lanes: int
    waves: int
    wave: np.ndarray
    lane: np.ndarray
    tid: tuple
    launch_mask: Optional[np.ndarray]


def _geometry(block: tuple, wave_size: int) -> _Geometry:
    n = block[0] * block[1] * block[2]
    waves = -(-n // wave_size)
    t = np.arange(waves * wave_size)
    tid = (t % block[0], (t // block[0]) % block[1], t // (block[0] * block[1]))
    mask = None if n == waves * wave_size else t < n
    return _Geometry(waves * wave_size, waves, t // wave_size, t % wave_size, tid, mask)


def _dims(v: Any, what: str) -> tuple:
    if isinstance(v, (int, np.integer)):
        v = (int(v),)
    try:
        d = tuple(int(x) for x in v)
    except TypeError:
        raise InterpreterError(f"{what} must be an int or a tuple of up to 3 ints, got {v!r}") from None
    if not 1 <= len(d) <= 3 or min(d) < 1:
        raise InterpreterError(f"{what} must be 1 to 3 positive ints, got {v!r}")
    return d + (1,) * (3 - len(d))


def struct_argument(t: StructT, a: Any, what: str) -> tuple:
    """A struct kernel argument (a uniform value: a tuple of field values) from ``a``: a tuple with
    one entry per field (numbers, nested tuples for nested structs) or, for a packed struct of
    numbers, its bytes (fields little-endian, in order, no padding: the C ABI FlyDSL passes
    a tensor's dynamic shape and strides in)."""
    if isinstance(a, (bytes, bytearray)):
        if not t.packed:
            raise InterpreterError(f"{what}: only a packed struct can be given as bytes ({t})")
        if len(a) != _packed_size(t, what):
            raise InterpreterError(f"{what}: {t} takes {_packed_size(t, what)} bytes, got {len(a)}")
        a = _unpack(t, np.frombuffer(bytes(a), np.uint8))
    if not isinstance(a, tuple) or len(a) != len(t.fields):
        raise InterpreterError(f"{what}: {t} needs a tuple of {len(t.fields)} fields, got {a!r}")
    out = []
    for k, (f, x) in enumerate(zip(t.fields, a)):
        if isinstance(f, StructT):
            out.append(struct_argument(f, x, f"{what} field {k}"))
        elif isinstance(f, (IntT, FloatT)) and isinstance(x, (int, float, np.integer, np.floating)):
            out.append(const_array(x, f))
        else:
            raise InterpreterError(f"{what} field {k}: a {f} field takes a number, got {x!r}")
    return tuple(out)


def _packed_size(t: StructT, what: str) -> int:
    size = 0
    for f in t.fields:
        if isinstance(f, StructT) and f.packed:
            size += _packed_size(f, what)
        elif isinstance(f, IntT) and f.bits % 8 == 0:
            size += f.bits // 8
        else:
            raise InterpreterError(f"{what}: field {f} of {t} cannot be read from bytes")
    return size


def _unpack(t: StructT, data: np.ndarray) -> tuple:
    out, at = [], 0
    for f in t.fields:
        n = _packed_size(f, "field") if isinstance(f, StructT) else f.bits // 8
        chunk = data[at:at + n]
        out.append(_unpack(f, chunk) if isinstance(f, StructT) else int.from_bytes(chunk.tobytes(), "little"))
        at += n
    return tuple(out)


class Kernel:
    """A compiled kernel; :meth:`run` launches it on the interpreter."""

    def __init__(self, comp: Compiler) -> None:
        self.name = comp.kernel_name
        self.arch = comp.arch
        self.target = comp.target
        self.nslots = comp.nslots
        self.params = comp.params
        self.attributions = comp.attributions
        self.lds_layout = comp.lds
        self.dynamic_lds = comp.dynamic_lds
        self.symbols = comp.symbols
        self.consts = comp.consts
        self.body = comp.body
        self.bounds = comp.bounds
        if self.lds_layout.size > self.target.lds_bytes:
            raise InterpreterError(
                f"kernel {self.name} allocates {self.lds_layout.size} bytes of LDS; {self.arch} has {self.target.lds_bytes}"
            )

    def _bind(self, args: Sequence, gmem: GlobalMemory) -> tuple:
        if len(args) != len(self.params):
            raise InterpreterError(f"kernel {self.name} takes {len(self.params)} arguments, got {len(args)}")
        values, buffers = [], []
        for i, ((_, t), a) in enumerate(zip(self.params, args)):
            if isinstance(t, (PtrT, MemRefT)):
                if isinstance(t, PtrT) and t.space not in (0, 1):
                    raise InterpreterError(f"argument {i}: pointers in address space {t.space} cannot be kernel arguments")
                if isinstance(t, MemRefT) and t.space != "global":
                    raise InterpreterError(f"argument {i}: a {t.space} memref cannot be a kernel argument")
                if not isinstance(a, np.ndarray) or a.dtype.hasobject:
                    raise InterpreterError(f"argument {i} ({t}) must be a numeric numpy array, got {type(a).__name__}")
                data = np.ascontiguousarray(a).reshape(-1).view(np.uint8).copy()
                base = np.array([gmem.add(data, f"argument {i}")], np.uint64)
                buffers.append((i, data, a.dtype, a.shape))
                if isinstance(t, MemRefT):
                    if None in t.shape or None in t.strides or t.offset is None:
                        raise InterpreterError(f"argument {i}: memref arguments need a static shape and layout ({t})")
                    extent = (t.offset + sum((d - 1) * s for d, s in zip(t.shape, t.strides)) + 1) * byte_size(t.elem)
                    if extent > data.size:
                        raise InterpreterError(f"argument {i}: {t} needs {extent} bytes, the array has {data.size}")
                    values.append(MemRefValue(t, base))
                else:
                    values.append(base)
            elif isinstance(t, (IntT, FloatT)):
                if not isinstance(a, (int, float, np.integer, np.floating, bool)):
                    raise InterpreterError(f"argument {i} ({t}) must be a Python number, got {type(a).__name__}")
                if isinstance(t, IntT) and not isinstance(a, (int, np.integer, bool)):
                    raise InterpreterError(f"argument {i} ({t}) must be an integer, got {a!r}")
                values.append(const_array(a, t))
            elif isinstance(t, StructT):
                values.append(struct_argument(t, a, f"argument {i}"))
            else:
                raise InterpreterError(f"argument {i}: unsupported kernel argument type {t}")
        return values, buffers

    def _with_dynamic_lds(self, nbytes: int) -> LdsLayout:
        """The LDS layout with ``nbytes`` of dynamic shared memory after the static allocations."""
        if not isinstance(nbytes, int) or nbytes < 0:
            raise InterpreterError(f"dynamic_lds_bytes must be a non-negative integer, got {nbytes!r}")
        if not nbytes:
            return self.lds_layout
        dynamic = {name for name, _ in self.dynamic_lds}
        if not dynamic:
            raise InterpreterError(f"kernel {self.name} has no dynamic shared memory; dynamic_lds_bytes={nbytes}")
        allocations = [(n, off, nbytes if n in dynamic else size) for n, off, size in self.lds_layout.allocations]
        layout = LdsLayout(allocations, max(off + size for _, off, size in allocations))
        if layout.size > self.target.lds_bytes:
            raise InterpreterError(f"kernel {self.name} uses {layout.size} bytes of LDS; {self.arch} has {self.target.lds_bytes}")
        return layout

    def check_launch(self, grid: Any, block: Any) -> tuple[tuple, tuple]:
        """:meth:`LaunchBounds.check` of the kernel's bounds: :meth:`run` checks every launch so."""
        return self.bounds.check(grid, block)

    def run(self, args: Sequence = (), grid: Any = (1, 1, 1), block: Any = (64, 1, 1),
            options: Optional[InterpOptions] = None, dynamic_lds_bytes: int = 0) -> list:
        """Launch on ``grid`` workgroups of ``block`` threads; the buffers after the run.

        ``args`` holds one entry per kernel parameter: a numpy array for every pointer or
        memref (copied in; the kernel sees its bytes), a number for scalars.  Returns a list
        aligned with ``args``: the final contents of each buffer (same dtype and shape as the
        array passed), ``None`` for scalars.  Workgroups run one after another in x, y, z
        order.  ``dynamic_lds_bytes``: the launch's dynamic shared memory (the size of the kernel's
        zero-size external LDS globals, placed after its static LDS).
        """
        opts = options or InterpOptions()
        lds_layout = self._with_dynamic_lds(dynamic_lds_bytes)
        opts.validate()
        grid, block = self.check_launch(grid, block)
        gmem = GlobalMemory()
        values, buffers = self._bind(args, gmem)
        const_bases = [gmem.add(data.copy(), f"constant @{name}") for name, data in self.consts]
        geo = _geometry(block, self.target.wave_size)
        for bz in range(grid[2]):
            for by in range(grid[1]):
                for bx in range(grid[0]):
                    seed = opts.seed + bx + grid[0] * (by + grid[1] * bz)
                    lds = LocalMemory(lds_layout, geo.waves, opts.uninitialized_lds, seed)
                    ctx = Ctx(self, gmem, lds, (bx, by, bz), grid, block, geo, opts, const_bases)
                    for (slot, _), v in zip(self.params, values):
                        ctx.vals[slot] = v
                    for slot, t, kind, where in self.attributions:
                        if kind == "lds":
                            ctx.vals[slot] = MemRefValue(t, np.array([where], np.uint64))
                        else:
                            mem = PrivateMemory(geo.lanes, where)
                            ctx.vals[slot] = MemRefValue(t, np.zeros(1, np.uint64), 0, mem)
                    run_block(ctx, self.body, [])
        out: list = [None] * len(args)
        for i, data, dtype, shape in buffers:
            out[i] = data.view(dtype).reshape(shape).copy()
        return out


_CACHE = caches.cache("lowering.interp.kernels", size=32)  # 32: a compiled kernel is large


def load_kernel(module_text: str, kernel_name: Optional[str] = None, arch: str = "gfx942") -> Kernel:
    """Parse and compile ``kernel_name`` (or the only kernel) of ``module_text`` for ``arch``.

    Compiled kernels are cached by (text, name, arch)."""
    _check_text(module_text)
    return _CACHE.lookup((module_text, kernel_name, arch), lambda: Kernel(Compiler(module_text, kernel_name, arch)))
