"""Worker process that asks the real Triton wheel (Gluon's builder, CPU only) for layouts.

Run as ``python tests/triton_worker.py REQUESTS.jsonl``; it reads one JSON request per
line and prints one JSON answer per line (flushed), in order, each tagged with the
request's index ``i``.  Triton aborts the process on some inputs; the client
(tests/triton_oracle.py) restarts it after the request that killed it.

Requests (``gluon`` fields are Gluon Python expressions over ``ttgl``, as printed by
``linlayout.encodings.gluon_source``):

* ``{"op": "layout", "gluon": E, "shape": [...]}`` -> ``{"bases": {in_dim: [[...]]}, "shape": [...]}``
  (in dims ``register, lane, warp, block`` or ``offset, block``);
* ``{"op": "banks", "reg": E, "shared": E, "shape": [...], "bitwidth": b, "lanes": 32|64}``
  -> ``{"conflicts": n}`` (Gluon's ``bank_conflicts``, a CUDA module: 32 banks);
* ``{"op": "time_layouts", "cases": [[E, shape], ...], "repeat": r}`` and
  ``{"op": "time_banks", "cases": [[reg, shared, shape, bitwidth, lanes], ...], "repeat": r}``
  -> ``{"seconds": best of r}`` for the whole list (Gluon objects built before timing;
  the timed call is ``_to_ir`` + the C++ binding).

Any Python exception becomes ``{"error": "..."}``.
"""

from __future__ import annotations

import json
import sys
import time

from triton._C.libtriton import ir
from triton._C.libtriton.gluon_ir import GluonOpBuilder
from triton.experimental.gluon import language as ttgl

CONTEXT = ir.context()
ir.load_dialects(CONTEXT)
BUILDER = GluonOpBuilder(CONTEXT)


def _entry_block(lanes: int):
    """An insertion point inside a function of a CUDA module with ``lanes`` threads per warp
    (the bank-conflict query reads the module's target)."""
    module = BUILDER.create_module()
    module.set_attr("ttg.target", BUILDER.get_string_attr("cuda:90"))
    module.set_attr("ttg.num-warps", BUILDER.get_int32_attr(4))
    module.set_attr("ttg.num-ctas", BUILDER.get_int32_attr(1))
    module.set_attr("ttg.threads-per-warp", BUILDER.get_int32_attr(lanes))
    fn = BUILDER.get_or_insert_function(module, f"f{lanes}", BUILDER.get_function_ty([], []), "public", False)
    module.push_back(fn)
    return module, fn.add_entry_block()


BLOCKS = {lanes: _entry_block(lanes) for lanes in (32, 64)}
NAMESPACE = {"ttgl": ttgl}


def _gluon(expr: str):
    return eval(expr, NAMESPACE)  # noqa: S307 - the expressions come from our own printer


def _bases(layout) -> dict:
    if isinstance(layout, ttgl.DistributedLinearLayout):
        return {"bases": {"register": layout.reg_bases, "lane": layout.lane_bases, "warp": layout.warp_bases,
                          "block": layout.block_bases}, "shape": layout.shape}
    return {"bases": {"offset": layout.offset_bases, "block": layout.block_bases}, "shape": layout.shape}


def _layout(req: dict) -> dict:
    return _bases(BUILDER.to_linear_layout(_gluon(req["gluon"])._to_ir(BUILDER), req["shape"]))


def _banks(req: dict) -> dict:
    BUILDER.set_insertion_point_to_start(BLOCKS[req["lanes"]][1])
    reg, shared = _gluon(req["reg"]), _gluon(req["shared"])
    return {"conflicts": BUILDER.get_shared_bank_conflicts(reg._to_ir(BUILDER), shared._to_ir(BUILDER),
                                                            req["shape"], req["bitwidth"])}


def _best(run, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def _time_layouts(req: dict) -> dict:
    cases = [(_gluon(e), shape) for e, shape in req["cases"]]

    def run():
        for layout, shape in cases:
            BUILDER.to_linear_layout(layout._to_ir(BUILDER), shape)
    return {"seconds": _best(run, req["repeat"])}


def _time_banks(req: dict) -> dict:
    cases = [(_gluon(r), _gluon(s), shape, bits, lanes) for r, s, shape, bits, lanes in req["cases"]]

    def run():
        for reg, shared, shape, bits, lanes in cases:
            BUILDER.set_insertion_point_to_start(BLOCKS[lanes][1])
            BUILDER.get_shared_bank_conflicts(reg._to_ir(BUILDER), shared._to_ir(BUILDER), shape, bits)
    return {"seconds": _best(run, req["repeat"])}


OPS = {"layout": _layout, "banks": _banks, "time_layouts": _time_layouts, "time_banks": _time_banks}


def main(path: str) -> None:
    with open(path) as f:
        for line in f:
            req = json.loads(line)
            try:
                answer = OPS[req["op"]](req)
            except Exception as e:  # Triton's own rejections (bad params, unsupported encodings)
                answer = {"error": f"{type(e).__name__}: {e}".splitlines()[0][:300]}
            print(json.dumps({"i": req["i"], **answer}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
