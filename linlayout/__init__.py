"""linlayout: GF(2) linear layouts for AMD GPU kernels.

Every layout is a linear map over GF(2) from hardware index bits (register,
lane, warp, block, or LDS offset) to tensor coordinate bits.  See
``linlayout.layout.LinearLayout`` for the conventions.
"""

from .errors import LayoutError
from .layout import LinearLayout, least_squares, supremum

__all__ = ["LayoutError", "LinearLayout", "least_squares", "supremum"]
__version__ = "0.1.0"
