// The linear-layout paper's hand solution of its fp16 -> fp8 example, written out in CUDA.
//
// One warp holds a 16x32 tile of 8-bit elements (fp8 after the cast, moved as bytes).
// Source: the mma.sync m16n8 accumulator layout (Triton nvidia_mma v2, instrShape 16x8), the
// layout the fp16 accumulator had; destination: the fp8 A operand of mma.m16n8k32 (dot operand
// 0, kWidth 4).  With c0..c4 the column bits and r0..r3 the row bits of an element:
//
//   source       register bits (c0, r3, c3, c4)   lane bits (c1, c2, r0, r1, r2)
//   destination  register bits (c0, c1, r3, c4)   lane bits (c2, c3, r0, r1, r2)
//
// so each thread holds 4 columns of a row in 2-column pairs before and 4 contiguous columns
// after.  Packed 4 bytes to a 32-bit word (slot s in byte s % 4 of word s / 4), the source words
// of one c4 half are A (c3 = 0) and B (c3 = 1), bytes (c0, r3); the destination words P (r3 = 0)
// and Q (r3 = 1), bytes (c0, c1).  Bit c1 goes lane -> register, c2 lane 1 -> lane 0, c3
// register -> lane 1: a register/lane cycle, which the paper solves per word pair with
// 2 shuffles and 4 selects (a select, a shuffle and a select per 32-bit half of the exchange,
// the "three shears" of a register/lane swap), here plus the 2 byte permutes that regroup bytes.
//
// Thread with lane bits d0 = lane & 1, d1 = (lane >> 1) & 1, forward, per c4 half:
//   Y0 = d0 ? B : A;  Y1 = d0 ? A : B                         (2 selects)
//   Zj = shfl(Yj, (lane & ~3) | (j ^ d1) | (d0 << 1))        (2 shuffles)
//   Wa = d1 ? Z1 : Z0;  Wb = d1 ? Z0 : Z1                     (2 selects)
//   P = prmt(Wa, Wb, 0x5410);  Q = prmt(Wa, Wb, 0x7632)       (2 byte permutes)
// and the inverse runs the same steps backwards.

__device__ __forceinline__ unsigned paper_word(const uint8_t* b) {
  return (unsigned)b[0] | ((unsigned)b[1] << 8) | ((unsigned)b[2] << 16) | ((unsigned)b[3] << 24);
}

__device__ __forceinline__ void paper_bytes(unsigned w, uint8_t* b) {
  b[0] = (uint8_t)w; b[1] = (uint8_t)(w >> 8); b[2] = (uint8_t)(w >> 16); b[3] = (uint8_t)(w >> 24);
}

// mma accumulator layout -> fp8 A operand layout (16 slots per thread each way).
__device__ __forceinline__ void paper_fp16_to_fp8(const uint8_t (&src)[16], uint8_t (&dst)[16]) {
  const unsigned lane = threadIdx.x % 32u;
  const bool d0 = lane & 1u, d1 = (lane >> 1) & 1u;
  const unsigned from0 = (lane & ~3u) | (0u ^ d1) | ((unsigned)d0 << 1);
  const unsigned from1 = (lane & ~3u) | (1u ^ d1) | ((unsigned)d0 << 1);
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const unsigned a = paper_word(src + 8 * half), b = paper_word(src + 8 * half + 4);
    const unsigned y0 = d0 ? b : a, y1 = d0 ? a : b;
    const unsigned z0 = __shfl_sync(~0u, y0, from0), z1 = __shfl_sync(~0u, y1, from1);
    const unsigned wa = d1 ? z1 : z0, wb = d1 ? z0 : z1;
    paper_bytes(__byte_perm(wa, wb, 0x5410), dst + 8 * half);
    paper_bytes(__byte_perm(wa, wb, 0x7632), dst + 8 * half + 4);
  }
}

// fp8 A operand layout -> mma accumulator layout: the same steps in reverse order.
__device__ __forceinline__ void paper_fp8_to_fp16(const uint8_t (&src)[16], uint8_t (&dst)[16]) {
  const unsigned lane = threadIdx.x % 32u;
  const bool s0 = lane & 1u, s1 = (lane >> 1) & 1u;
  // source lane s reads, in shuffle j, the destination-layout lane (d0 = s1, d1 = j ^ s0)
  const unsigned from0 = (lane & ~3u) | (unsigned)s1 | ((0u ^ s0) << 1);
  const unsigned from1 = (lane & ~3u) | (unsigned)s1 | ((1u ^ s0) << 1);
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const unsigned p = paper_word(src + 8 * half), q = paper_word(src + 8 * half + 4);
    const unsigned wa = __byte_perm(p, q, 0x5410), wb = __byte_perm(p, q, 0x7632);
    // a thread of the destination layout sends, in shuffle j, its c1 = j ^ (its lane bit 1) word
    const bool own1 = (lane >> 1) & 1u;
    const unsigned z0 = own1 ? wb : wa, z1 = own1 ? wa : wb;
    const unsigned y0 = __shfl_sync(~0u, z0, from0), y1 = __shfl_sync(~0u, z1, from1);
    const unsigned a = s0 ? y1 : y0, b = s0 ? y0 : y1;
    paper_bytes(a, dst + 8 * half);
    paper_bytes(b, dst + 8 * half + 4);
  }
}
