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

The loop carries each tile packed, ``p = 32 / element_bits`` slots to a 32-bit word (slot ``r``
in bits ``element_bits * (r % p)`` of word ``r / p``; a 64-bit slot is a 64-bit word of its own),
the way a kernel keeps 8- and 16-bit data in registers; the element arrays exist only around each call, where unpacking and the
function's own packing cancel.  (Carried as element arrays, nvcc kept tiles of 128 8-bit slots
in local memory.)  A thread's slots are loaded and stored as words when they fill whole words,
else element by element.

The loop is unrolled by two (``#pragma unroll 2``).  In one iteration the first call writes the
new ``x`` while the second still reads the old one, so a rolled loop keeps two copies of ``x``
and copies one into the other at the back edge (a ``mov`` per word in the PTX); with 128 words
a tile, nvcc then spilled about every word each iteration (one-warp 64x64 fp32 tiles: 128
spill stores and 64 64-bit spill loads per iteration, where the unrolled loop has 6 and 6).
Unrolled by two, each iteration's results get their own names and no copy is left.  This is
the benchmark's artifact, not the conversion's: a kernel that converts a tile once has no such
loop (docs/nvidia_facts.md section 7).
"""

from __future__ import annotations

__all__ = ["roundtrip_kernel"]

HELPERS = """#ifndef LINLAYOUT_ROUNDTRIP_HELPERS
#define LINLAYOUT_ROUNDTRIP_HELPERS
template <typename T, int S, typename Word, int W>
__device__ __forceinline__ void roundtrip_unpack(const Word (&w)[W], T (&e)[S]) {
  constexpr int P = sizeof(Word) / sizeof(T);
#pragma unroll
  for (int r = 0; r < S; ++r) e[r] = static_cast<T>(w[r / P] >> (8 * sizeof(T) * (r % P)));
}
template <typename T, int S, typename Word, int W>
__device__ __forceinline__ void roundtrip_pack(const T (&e)[S], Word (&w)[W]) {
  constexpr int P = sizeof(Word) / sizeof(T);
#pragma unroll
  for (int k = 0; k < W; ++k) w[k] = 0u;
#pragma unroll
  for (int r = 0; r < S; ++r) w[r / P] |= static_cast<Word>(e[r]) << (8 * sizeof(T) * (r % P));
}
template <typename T, int S, typename Word, int W>
__device__ __forceinline__ void roundtrip_load(const T* p, Word (&w)[W]) {
  if constexpr ((S * sizeof(T)) % sizeof(Word) == 0) {
#pragma unroll
    for (int k = 0; k < W; ++k) w[k] = reinterpret_cast<const Word*>(p)[k];
  } else {
    T e[S];
#pragma unroll
    for (int r = 0; r < S; ++r) e[r] = p[r];
    roundtrip_pack(e, w);
  }
}
template <typename T, int S, typename Word, int W>
__device__ __forceinline__ void roundtrip_store(const Word (&w)[W], T* p) {
  if constexpr ((S * sizeof(T)) % sizeof(Word) == 0) {
#pragma unroll
    for (int k = 0; k < W; ++k) reinterpret_cast<Word*>(p)[k] = w[k];
  } else {
    T e[S];
    roundtrip_unpack(w, e);
#pragma unroll
    for (int r = 0; r < S; ++r) p[r] = e[r];
  }
}
#endif
"""


def roundtrip_kernel(name: str, forward: str, backward: str, element_type: str, element_bits: int, slots_in: int,
                     slots_out: int, block_threads: int, uses_shared: bool) -> str:
    """The kernel's source, with its helpers (the two device functions must be defined before it)."""
    if element_bits not in (8, 16, 32, 64):
        raise ValueError(f"the round-trip kernel carries 8-, 16-, 32- or 64-bit elements, not {element_bits}")
    t, word = element_type, "unsigned long long" if element_bits == 64 else "unsigned"
    per = max(1, 32 // element_bits)
    words_in, words_out = -(-slots_in // per), -(-slots_out // per)
    sync = "    __syncthreads();\n" if uses_shared else ""
    return HELPERS + f"""extern "C" __global__ void __launch_bounds__({block_threads}) {name}(const {t}* in, {t}* out_src, {t}* out_dst, int iterations) {{
  const unsigned long long at_in = (unsigned long long)blockIdx.x * {block_threads * slots_in}u + threadIdx.x * {slots_in}u;
  const unsigned long long at_out = (unsigned long long)blockIdx.x * {block_threads * slots_out}u + threadIdx.x * {slots_out}u;
  {word} xw[{words_in}], yw[{words_out}];
  roundtrip_load<{t}, {slots_in}>(in + at_in, xw);
  {{
    {t} x[{slots_in}], y[{slots_out}];
    roundtrip_unpack(xw, x);
    {forward}(x, y);
    roundtrip_pack(y, yw);
  }}
#pragma unroll 2
  for (int i = 0; i < iterations; ++i) {{
{sync}    {word} xn[{words_in}], yn[{words_out}];
    {{
      {t} y_in[{slots_out}], x_out[{slots_in}];
      roundtrip_unpack(yw, y_in);
      {backward}(y_in, x_out);
      roundtrip_pack(x_out, xn);
    }}
    {{
      {t} x_in[{slots_in}], y_out[{slots_out}];
      roundtrip_unpack(xw, x_in);
      {forward}(x_in, y_out);
      roundtrip_pack(y_out, yn);
    }}
#pragma unroll
    for (int k = 0; k < {words_in}; ++k) xw[k] = xn[k];
#pragma unroll
    for (int k = 0; k < {words_out}; ++k) yw[k] = yn[k];
  }}
  roundtrip_store<{t}, {slots_in}>(xw, out_src + at_in);
  roundtrip_store<{t}, {slots_out}>(yw, out_dst + at_out);
}}
"""
