"""C++ output of a conversion plan: CUDA C++ for NVIDIA targets, HIP C++ (clang builtins) for AMD ones.

``emit_cpp(plan, dialect=None, name=None) -> CppSource`` (linlayout.lowering.cpp.source: the
device function, the test kernel and its indexing); docs/cpp.md shows how to compile and run it.
"""

from .dialect import DIALECTS, dialect_for
from .source import ELEMENT_TYPES, MARK_MACRO, REGION, CppSource, emit_cpp

__all__ = ["CppSource", "DIALECTS", "ELEMENT_TYPES", "MARK_MACRO", "REGION", "dialect_for", "emit_cpp"]
