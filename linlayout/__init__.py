"""linlayout: GF(2) linear layouts for AMD GPU kernels.

Every layout is a linear map over GF(2) from hardware index bits (register,
lane, warp, block, or LDS offset) to tensor coordinate bits.  See
``linlayout.layout.LinearLayout`` for the conventions.

The package's rooms: ``linlayout`` (this engine: bit matrices, layouts, CuTe and
Triton interop, the AMD hardware catalog in ``linlayout.hw``, pictures),
``synth`` (bank conflicts, swizzles, conversion plans, the wave emulator),
``lowering`` (MLIR emission, compilation, the MLIR interpreter) and ``kernels``.
"""

from .cute import from_cute, to_cute
from .equivalence import Equivalence, equivalent
from .errors import LayoutError
from .hw.targets import Target, get_target
from .layout import LinearLayout, least_squares, supremum
from .spec import parse_layout

__all__ = [
    "Equivalence",
    "LayoutError",
    "LinearLayout",
    "Target",
    "equivalent",
    "from_cute",
    "get_target",
    "least_squares",
    "parse_layout",
    "supremum",
    "to_cute",
]
__version__ = "0.1.0"
