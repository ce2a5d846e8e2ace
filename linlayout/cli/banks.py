"""``linlayout banks``: LDS bank conflicts of one instruction, of a whole tile, or a synthesized swizzle.

Modes (one per call):

* one instruction (docs/contract.md section 3):
  ``--arch A --op OP --access LAYOUT --element-bytes N`` (or ``--element-bits``);
* whole tile: ``--arch A --shared LAYOUT --reg LAYOUT --dtype DT [--direction read|write]``
  chooses the widest legal instruction and reports cycles per instruction;
* swizzle synthesis: ``--arch A --writer LAYOUT --reader LAYOUT --dtype DT``
  [``--lds-budget BYTES``] [``--padding-options``];
* ``--model [--arch A]``: the hardware model, its sources and named assumptions.

LAYOUT: anything ``linlayout.spec.parse_layout`` reads (JSON, ``@file``, CuTe,
named spec); a JSON shared layout may carry ``"padding": [[interval, pad], ...]``.
An ``--access`` with one in dim (e.g. CuTe ``(8,64):(1,64)``, element fastest) is read
as ``register`` (its low ``log2(size/64)`` bits) x ``lane``.
``--assume NAME=VALUE`` replaces a named [I] assumption (VALUE: lanes per
contiguous phase, or comma-separated lane masks).  ``--png FILE`` / ``--svg FILE``
draw a phase x bank heat map of distinct dwords (instruction 0).
"""

from __future__ import annotations

import json

from linlayout.synth.banks import analyze_op, bank_load, lane_start_bytes
from linlayout.synth.lds_access import tile_access_report
from linlayout.synth.swizzle import OBJECTIVES as SWIZZLE_OBJECTIVES, padding_options, synthesize

from ..argparsing import positive_int
from ..dtypes import dtype_bits
from ..encodings.padded import PaddedLayout
from ..errors import LayoutError
from ..hw.lds import LDS_ARCHS, lds_model
from ..layout import LinearLayout
from ..pictures import bank_heatmap, picture_file
from ..spec import parse_layout
from . import DTYPE_HELP, add_command


#: The defaults of the options that have one, applied after the mode check (argparse leaves them None,
#: so that an option given with its default value still counts as given: ``_check_mode_options``).
_DEFAULTS = {"method": "auto", "direction": "read", "objective": "vector"}


def register(subparsers) -> None:
    p = add_command(subparsers, "banks", __doc__)
    p.add_argument("--arch", metavar="ARCH", help="gfx90a, gfx942, gfx950, sm_80, sm_90, gfx1100, gfx1200 or gfx1250")
    p.add_argument("--op", metavar="OP", help="LDS instruction, e.g. ds_read_b128 (single-instruction mode)")
    p.add_argument("--access", metavar="LAYOUT", help="layout lane[, register] -> offset (single-instruction mode)")
    p.add_argument("--element-bytes", metavar="N", type=int, help="bytes per element (single-instruction mode)")
    p.add_argument("--element-bits", metavar="N", type=int, help="bits per element, e.g. 4 or 6 (instead of --element-bytes)")
    p.add_argument("--padding", metavar="I:P,...", help="padding 'INTERVAL:PAD[,INTERVAL:PAD]' in elements, applied to offsets")
    p.add_argument("--method", choices=["auto", "linear", "enumerate"], default=None,
                   help="single-instruction mode: subspace algebra, enumeration, or auto")
    p.add_argument("--shared", metavar="LAYOUT", help="shared layout offset -> tensor (whole-tile mode)")
    p.add_argument("--reg", metavar="LAYOUT", help="register layout register, lane, warp -> tensor (whole-tile mode)")
    p.add_argument("--direction", choices=["read", "write"], default=None, help="whole-tile mode")
    p.add_argument("--writer", metavar="LAYOUT", help="register layout that writes the tile (synthesis mode)")
    p.add_argument("--reader", metavar="LAYOUT", help="register layout that reads the tile (synthesis mode)")
    p.add_argument("--dtype", metavar="DTYPE", help=DTYPE_HELP)
    p.add_argument("--lds-budget", type=positive_int, metavar="BYTES",
                   help="synthesis: LDS bytes available (moves the tile in rounds)")
    p.add_argument("--padding-options", action="store_true", help="synthesis: also list padded alternatives")
    p.add_argument("--no-transpose", action="store_true", help="synthesis: do not use transpose loads (gfx950 ds_read_*_tr_*, gfx1250 ds_load_tr*)")
    p.add_argument("--objective", choices=list(SWIZZLE_OBJECTIVES), default=None,
                   help="synthesis: vector (fewest instructions, then cycles; the default), cycles, or a conversion "
                        "objective (latency, throughput, instructions) picking from the Pareto set")
    p.add_argument("--model", action="store_true", help="print the LDS model with its named assumptions")
    p.add_argument("--assume", action="append", default=[], metavar="NAME=VALUE",
                   help="replace a named assumption (lanes per phase, or lane masks 'm0,m1,..')")
    p.add_argument("--png", metavar="FILE", type=picture_file,
                   help="draw a phase x bank heat map to this PNG file (needs matplotlib)")
    p.add_argument("--svg", metavar="FILE", type=picture_file, help="draw the heat map to this SVG file (needs matplotlib)")
    p.set_defaults(func=run)


# ------------------------------------------------------------------ parsing
def _assumptions(items: list[str]) -> dict:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise LayoutError(f"--assume {item!r}: expected NAME=VALUE")
        try:
            parts = [int(v, 0) for v in value.split(",")]
        except ValueError:
            raise LayoutError(f"--assume {item!r}: VALUE must be an integer or comma-separated lane masks") from None
        out[name] = parts[0] if len(parts) == 1 and "," not in value else parts
    return out


def _model(args):
    if not args.arch:
        raise LayoutError("--arch is required")
    return lds_model(args.arch, _assumptions(args.assume))


def _padding_pairs(text: str | None) -> list[tuple[int, int]] | None:
    if not text:
        return None
    pairs = []
    for part in text.split(","):
        a, sep, b = part.partition(":")
        try:
            pairs.append((int(a), int(b.lstrip("+"))))
        except ValueError:
            raise LayoutError(f"--padding {text!r}: expected INTERVAL:PAD[,INTERVAL:PAD]") from None
        if not sep:
            raise LayoutError(f"--padding {text!r}: expected INTERVAL:PAD[,INTERVAL:PAD]")
    return pairs


def _layout(text: str, what: str):
    """A LinearLayout, or a PaddedLayout for JSON with a ``padding`` key."""
    if not isinstance(text, str) or not text.strip():
        raise LayoutError(f"{what}: empty layout")
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            obj = json.loads(stripped)
        except ValueError as e:
            raise LayoutError(f"{what}: layout JSON does not parse: {e}") from None
        if isinstance(obj, dict) and "padding" in obj:
            pairs = obj["padding"]
            lin = LinearLayout.from_json({k: v for k, v in obj.items() if k != "padding"})
            try:
                return PaddedLayout(lin, tuple(i for i, _ in pairs), tuple(p for _, p in pairs))
            except (TypeError, ValueError) as e:
                raise LayoutError(f"{what}: bad padding {pairs!r}: {e}") from None
    try:
        return parse_layout(text)
    except LayoutError as e:
        raise LayoutError(f"{what}: {e}") from None


def _lane_register_dims(access: LinearLayout, wave: int) -> LinearLayout:
    """A one-in-dim access (e.g. CuTe's flat ``coord``, element fastest: ``(V,64):(1,S)``)
    becomes ``register`` (the low bits, ``size / wave`` elements) x ``lane``."""
    names = access.in_dim_names
    if len(names) != 1 or names[0] in ("lane", "register"):
        return access
    size = access.in_dim_size(names[0])
    if size < wave:
        raise LayoutError(f"--access: in dim {names[0]!r} has {size} points, fewer than the {wave} lanes")
    flat = access.rename_in_dim(names[0], "flat")
    dims = ([("register", size // wave)] if size > wave else []) + [("lane", wave)]
    return flat.reshape_ins(dims)


def _element_bits(args) -> int:
    given = [x for x in (args.element_bytes, args.element_bits, args.dtype) if x is not None]
    if len(given) != 1:
        raise LayoutError("give exactly one of --element-bytes, --element-bits, --dtype")
    if args.dtype is not None:
        return dtype_bits(args.dtype)
    if args.element_bytes is not None:
        if args.element_bytes < 1:
            raise LayoutError(f"--element-bytes {args.element_bytes} must be positive")
        return args.element_bytes * 8
    return args.element_bits


# ------------------------------------------------------------------ modes
#: The options each mode reads besides --arch and --assume (every mode's), by argparse dest.
_MODE_OPTIONS = {
    "model": ("model",),
    "instruction": ("op", "access", "element_bytes", "element_bits", "dtype", "padding", "method", "png", "svg"),
    "tile": ("shared", "reg", "element_bytes", "element_bits", "dtype", "padding", "direction", "png", "svg"),
    "synthesis": ("writer", "reader", "element_bytes", "element_bits", "dtype", "lds_budget", "padding_options",
                  "no_transpose", "objective"),
}


def _check_mode_options(args, mode: str) -> None:
    """An option of another mode is an error, not ignored (``--png`` in synthesis mode drew nothing).
    An option counts as given when argparse has a value for it (``None`` and an unset flag's ``False``
    are not given; ``0`` is)."""
    given = {name for names in _MODE_OPTIONS.values() for name in names
             if getattr(args, name) is not None and getattr(args, name) is not False}
    stray = sorted(given - set(_MODE_OPTIONS[mode]))
    if stray:
        flags = ", ".join("--" + name.replace("_", "-") for name in stray)
        raise LayoutError(f"{flags}: {'not an option' if len(stray) == 1 else 'not options'} of {mode} mode")


def run(args) -> dict:
    modes = {"model": bool(args.model), "instruction": bool(args.op or args.access),
             "tile": bool(args.shared or args.reg), "synthesis": bool(args.writer or args.reader)}
    if sum(modes.values()) != 1:
        raise LayoutError("choose one mode: --model | --op/--access | --shared/--reg | --writer/--reader")
    mode = next(m for m, on in modes.items() if on)
    _check_mode_options(args, mode)
    for name, default in _DEFAULTS.items():
        if getattr(args, name) is None:
            setattr(args, name, default)
    return {"model": _run_model, "instruction": _run_single, "tile": _run_tile, "synthesis": _run_synthesis}[mode](args)


def _run_model(args) -> dict:
    archs = [args.arch] if args.arch else list(LDS_ARCHS)
    assume = _assumptions(args.assume)
    return {"mode": "model", "models": [lds_model(a, assume).describe() for a in archs]}


def _run_single(args) -> dict:
    if not (args.op and args.access):
        raise LayoutError("single-instruction mode needs --op and --access")
    model = _model(args)
    op = model.op(args.op)
    bits = _element_bits(args)
    access = _layout(args.access, "--access")
    if not isinstance(access, LinearLayout):
        raise LayoutError("--access must be a linear layout (give padding with --padding)")
    access = _lane_register_dims(access, op.wave_size)
    pad = _padding_pairs(args.padding)
    report = analyze_op(op, access, bits, padding=pad, method=args.method)
    out = {"mode": "instruction", **report.to_json()}
    out["pictures"] = _heatmaps(args, lambda: bank_load(op, lane_start_bytes(op, access, bits, pad)), op)
    return out


def _run_tile(args) -> dict:
    if not (args.shared and args.reg):
        raise LayoutError("whole-tile mode needs --shared and --reg")
    model = _model(args)
    shared = _apply_padding(_layout(args.shared, "--shared"), args.padding)
    reg = _layout(args.reg, "--reg")
    if not isinstance(reg, LinearLayout):
        raise LayoutError("--reg must be a linear layout")
    bits = _element_bits(args)
    rep = tile_access_report(shared, reg, bits, model, args.direction)
    out = {"mode": "tile", **rep.to_json()}
    if rep.choice.access is not None:
        op = model.op(rep.choice.op)
        out["pictures"] = _heatmaps(args, lambda: bank_load(op, lane_start_bytes(op, rep.choice.access, bits)), op)
    return out


def _apply_padding(shared, text):
    pairs = _padding_pairs(text)
    if pairs is None:
        return shared
    if isinstance(shared, PaddedLayout):
        raise LayoutError("--padding given for a layout that already has padding")
    return PaddedLayout(shared, tuple(i for i, _ in pairs), tuple(p for _, p in pairs))


def _run_synthesis(args) -> dict:
    if not (args.writer and args.reader):
        raise LayoutError("synthesis mode needs --writer and --reader")
    model = _model(args)
    w, r = _layout(args.writer, "--writer"), _layout(args.reader, "--reader")
    if not isinstance(w, LinearLayout) or not isinstance(r, LinearLayout):
        raise LayoutError("--writer and --reader must be linear layouts")
    bits = _element_bits(args)
    res = synthesize(w, r, bits, model, lds_budget_bytes=args.lds_budget, allow_transpose=not args.no_transpose,
                     objective=args.objective)
    out = {"mode": "synthesis", **res.to_json(),
           "write_explanation": res.write_report.explanation, "read_explanation": res.read_report.explanation}
    if args.padding_options:
        out["padding_options"] = [o.to_json() for o in padding_options(w, r, bits, model)[:8]]
    return out


def _heatmaps(args, table, op) -> list[str]:
    """Draw the heat map ``table()`` (phases x banks) to ``--png`` and ``--svg``; the paths drawn."""
    paths = [p for p in (args.png, args.svg) if p is not None]
    if paths:
        load = table()
        for path in paths:
            bank_heatmap(load, path, title=f"{op.name} on {op.arch}: distinct dwords per bank and lane phase")
    return paths


# ------------------------------------------------------------------ text
def render(result: dict, args) -> str:
    mode = result.get("mode")
    if mode == "model":
        lines = []
        for m in result["models"]:
            lines.append(f"{m['arch']}: {m['num_banks']} banks x 4 B ({m['bank_map']}), wave {m['wave_size']}, "
                         f"LDS {m['lds_bytes']} B")
            lines.append(f"  cycles: {m['cycle_model']}")
            for o in m["ops"]:
                a = f"  [{o['assumption']}]" if o["assumption"] else ""
                lines.append(f"  {o['op']:<20} {o['phases']} x {o['lanes_per_phase']:>2} lanes, phase = "
                             f"({', '.join(o['phase_bits']) or '-'}), phase 0 = {{{o['phase0_lanes']}}}  "
                             f"[{o['tag']}] {o['source']}{a}")
            lines.append("  named assumptions [I]:")
            for a in m["assumptions"]:
                lines.append(f"    {a['name']}: {a['statement']} (source: {a['source']})")
        return "\n".join(lines)
    if mode in ("instruction", "tile"):
        head = (f"cycles {result['cycles']}  min_cycles {result['min_cycles']}  conflict_free {result['conflict_free']}\n"
                if mode == "instruction" else "")
        return head + "\n".join([result["explanation"]] + [f"wrote {path}" for path in result.get("pictures", [])])
    lines = [f"synthesized shared layout ({result['lds_bytes']} bytes, {result['reps']} round(s)):",
             str(LinearLayout.from_json(result["shared"])),
             f"write: {result['write_instructions']} x {result['write_op']}: {result['write_cycles']} cycles",
             f"read:  {result['read_instructions']} x {result['read_op']}: {result['read_cycles']} cycles",
             f"total {result['total_cycles']} (ideal {result['ideal_cycles']}, lower bound "
             f"{result['lower_bound_cycles']}, optimal {result['optimal']})", "why:", result["argument"]]
    for q in result.get("pareto", []):
        modelled = (f"; modelled latency {q['modelled']['latency']:g}, throughput {q['modelled']['throughput']:g}"
                    if "modelled" in q else "")
        lines.append(f"pareto: {q['instructions']} instructions ({q['write_op']}/{q['read_op']}), {q['cycles']} cycles"
                     + modelled)
    for o in result.get("padding_options", []):
        lines.append(f"padding {o['interval']}:+{o['pad']} order {o['order']}: {o['write_instructions']} x "
                     f"{o['write_op']} + {o['read_instructions']} x {o['read_op']}, {o['total_cycles']} cycles, "
                     f"{o['lds_bytes']} bytes")
    return "\n".join(lines)
