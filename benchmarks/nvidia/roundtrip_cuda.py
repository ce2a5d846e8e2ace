"""The CUDA round-trip kernel around two device functions (a conversion and its inverse).

The functions have the signature of linlayout's C++ output
(:func:`linlayout.lowering.cpp.emit_cpp`): ``void f(const T (&src)[SLOTS_IN], T (&dst)[SLOTS_OUT])``,
called by every thread of a block of ``block_threads`` threads, ``src[r]`` the element of
register ``r`` of the thread's lane and warp.  The kernel (``extern "C"``)::

    NAME(const T* in, T* out_src, T* out_dst, int iterations)
    x = in[tile];  y = forward(x)
    repeat iterations:  (x, y) = (backward(y), forward(x))
    out_src[tile] = x;  out_dst[tile] = y

with thread ``t`` of block ``b`` at ``b * block_threads * SLOTS + t * SLOTS`` of each array
(the slot order of ``emit_cpp``'s test kernel).  Both loop-carried tiles are stored, so the
compiler keeps both chains; it cannot fold ``backward(forward(x))`` through shuffles.  When a
function uses shared memory (``uses_shared``), a ``__syncthreads()`` separates the calls of
consecutive iterations (``emit_cpp``'s functions end without one).
"""

from __future__ import annotations

__all__ = ["roundtrip_kernel"]


def roundtrip_kernel(name: str, forward: str, backward: str, element_type: str, slots_in: int, slots_out: int,
                     block_threads: int, uses_shared: bool) -> str:
    """The kernel's source (the two device functions must be defined before it)."""
    sync = "    __syncthreads();\n" if uses_shared else ""
    return f"""extern "C" __global__ void __launch_bounds__({block_threads}) {name}(const {element_type}* in, {element_type}* out_src, {element_type}* out_dst, int iterations) {{
  const unsigned long long at_in = (unsigned long long)blockIdx.x * {block_threads * slots_in}u + threadIdx.x * {slots_in}u;
  const unsigned long long at_out = (unsigned long long)blockIdx.x * {block_threads * slots_out}u + threadIdx.x * {slots_out}u;
  {element_type} x[{slots_in}], y[{slots_out}];
#pragma unroll
  for (int r = 0; r < {slots_in}; ++r) x[r] = in[at_in + r];
  {forward}(x, y);
  for (int i = 0; i < iterations; ++i) {{
{sync}    {element_type} x_next[{slots_in}], y_next[{slots_out}];
    {backward}(y, x_next);
    {forward}(x, y_next);
#pragma unroll
    for (int r = 0; r < {slots_in}; ++r) x[r] = x_next[r];
#pragma unroll
    for (int r = 0; r < {slots_out}; ++r) y[r] = y_next[r];
  }}
#pragma unroll
  for (int r = 0; r < {slots_in}; ++r) out_src[at_in + r] = x[r];
#pragma unroll
  for (int r = 0; r < {slots_out}; ++r) out_dst[at_out + r] = y[r];
}}
"""
