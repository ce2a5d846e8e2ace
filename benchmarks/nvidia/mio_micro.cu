// Throughput and latency of the instructions linlayout's NVIDIA plans use, per SM, on the GPU.
//
// Built and run by benchmarks/nvidia/mio_micro.py (nvcc -O3 -arch=sm_90a; prints one JSON document).
//
// Throughput: one CTA per SM (the dynamic shared memory asked for allows no second), W warps of it
// each running ITERS x UNROLL x CHAINS operations of one kind, CHAINS independent dependency chains
// per thread so that latency is hidden by the chains and the warps.  Thread 0 reads clock64()
// between two __syncthreads() around the loop: the CTA's SM cycles.  An operation is one PTX
// instruction of the kind named (plus the bookkeeping each kind lists; mio_micro.py counts the
// SASS of each kernel's loop to check), so warp-instructions per SM cycle = W * ITERS * UNROLL *
// CHAINS / cycles.
//
// Latency: one warp, one dependency chain (the shuffle's source lane and the load's address come
// from the previous result), cycles per operation.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>

#define CHAINS 8
#define UNROLL 4
#define SHARED_BYTES (200 * 1024)  // > half the SM's 228 KB: one CTA per SM

#define CHECK(x)                                                                        \
  do {                                                                                  \
    cudaError_t e_ = (x);                                                               \
    if (e_ != cudaSuccess) {                                                            \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(2);                                                                          \
    }                                                                                   \
  } while (0)

enum Op {
  SHFL_IDX, SHFL_BFLY, LDS32, LDS64, LDS128, STS32, STS64, STS128, SELP, PRMT, WARPSYNC,
  SHFL_SELP2, ROUNDTRIP128, NUM_OPS
};
static const char* OP_NAMES[NUM_OPS] = {
  "shfl.sync.idx.b32", "shfl.sync.bfly.b32", "ld.shared.b32", "ld.shared.v2.b32", "ld.shared.v4.b32",
  "st.shared.b32", "st.shared.v2.b32", "st.shared.v4.b32", "selp.b32", "prmt.b32", "bar.warp.sync",
  "shfl.sync.idx + 2 selp", "st.shared.v4 + bar.warp.sync + ld.shared.v4"};
// PTX instructions of the kind(s) named per operation (selp and prmt: two per chain and step)
static const int OP_INSTRUCTIONS[NUM_OPS] = {1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 1, 3, 3};

__device__ __forceinline__ uint32_t shfl_idx(uint32_t v, uint32_t src) {
  uint32_t r;
  asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(src));
  return r;
}
template <int M>
__device__ __forceinline__ uint32_t shfl_bfly(uint32_t v) {
  uint32_t r;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "n"(M));
  return r;
}
__device__ __forceinline__ uint32_t selp(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t r;  // r = c & 1 ? a : b, the predicate from a register as a select needs
  asm volatile("{ .reg .pred p; setp.ne.b32 p, %3, 0; selp.b32 %0, %1, %2, p; }" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
}
template <int S>
__device__ __forceinline__ uint32_t prmt(uint32_t a, uint32_t b) {
  uint32_t r;
  asm volatile("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "n"(S));
  return r;
}

template <int OP, int I, int U>
__device__ __forceinline__ void step(uint32_t& a, uint32_t& b, uint32_t& c, uint32_t base, uint32_t lane, uint32_t it) {
  constexpr uint32_t slot = U * CHAINS + I;  // distinct address per unrolled operation
  if constexpr (OP == SHFL_IDX) {
    a = shfl_idx(a, b);
  } else if constexpr (OP == SHFL_BFLY) {
    a = shfl_bfly<(I % 31) + 1>(a);
  } else if constexpr (OP == LDS32) {
    uint32_t x;
    asm volatile("ld.volatile.shared.b32 %0, [%1];" : "=r"(x) : "r"(base + lane * 4 + slot * 128));
    a ^= x;
  } else if constexpr (OP == LDS64) {
    uint32_t x, y;
    asm volatile("ld.volatile.shared.v2.b32 {%0, %1}, [%2];" : "=r"(x), "=r"(y) : "r"(base + lane * 8 + slot * 256));
    a ^= x;
    b ^= y;
  } else if constexpr (OP == LDS128) {
    uint32_t x, y, z, w;
    asm volatile("ld.volatile.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(x), "=r"(y), "=r"(z), "=r"(w) : "r"(base + lane * 16 + slot * 512));
    a ^= x ^ z;
    b ^= y ^ w;
  } else if constexpr (OP == STS32) {
    asm volatile("st.volatile.shared.b32 [%0], %1;" :: "r"(base + lane * 4 + slot * 128), "r"(a + it));
  } else if constexpr (OP == STS64) {
    asm volatile("st.volatile.shared.v2.b32 [%0], {%1, %2};" :: "r"(base + lane * 8 + slot * 256), "r"(a + it), "r"(b));
  } else if constexpr (OP == STS128) {
    asm volatile("st.volatile.shared.v4.b32 [%0], {%1, %2, %3, %4};"
                 :: "r"(base + lane * 16 + slot * 512), "r"(a + it), "r"(b), "r"(c), "r"(a));
  } else if constexpr (OP == PRMT) {
    a = prmt<0x5140 + I>(a, b);
    b = prmt<0x7362>(b, a);
  } else if constexpr (OP == WARPSYNC) {
    asm volatile("bar.warp.sync 0xffffffff;" ::: "memory");
  } else if constexpr (OP == SHFL_SELP2) {
    uint32_t t = shfl_idx(a, c);
    a = selp(t, b, lane & 1);
    b = selp(b, t, lane & 1);
  } else if constexpr (OP == ROUNDTRIP128) {
    // one warp's exchange through shared memory: store 4 registers, warp barrier, load 4 back
    // (another lane's 16 bytes: lane ^ 1)
    asm volatile("st.volatile.shared.v4.b32 [%0], {%1, %2, %3, %4};"
                 :: "r"(base + lane * 16 + I * 512), "r"(a), "r"(b), "r"(c), "r"(a ^ b) : "memory");
    asm volatile("bar.warp.sync 0xffffffff;" ::: "memory");
    uint32_t x, y, z, w;
    asm volatile("ld.volatile.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(x), "=r"(y), "=r"(z), "=r"(w) : "r"(base + (lane ^ 1) * 16 + I * 512) : "memory");
    a = x ^ w;
    b = y;
    c = z;
  }
}

// 16 selp in one asm statement sharing one setp (a plan's selects reuse a lane predicate): inline
// asm takes no predicate operand, and a setp per selp would double the ALU work
__device__ __forceinline__ void selp16(uint32_t (&a)[CHAINS], uint32_t (&b)[CHAINS], uint32_t lane) {
  asm volatile(
      "{ .reg .pred p; setp.ne.b32 p, %16, 0;\n"
      "selp.b32 %0, %8, %0, p; selp.b32 %8, %0, %8, !p;\n"
      "selp.b32 %1, %9, %1, p; selp.b32 %9, %1, %9, !p;\n"
      "selp.b32 %2, %10, %2, p; selp.b32 %10, %2, %10, !p;\n"
      "selp.b32 %3, %11, %3, p; selp.b32 %11, %3, %11, !p;\n"
      "selp.b32 %4, %12, %4, p; selp.b32 %12, %4, %12, !p;\n"
      "selp.b32 %5, %13, %5, p; selp.b32 %13, %5, %13, !p;\n"
      "selp.b32 %6, %14, %6, p; selp.b32 %14, %6, %14, !p;\n"
      "selp.b32 %7, %15, %7, p; selp.b32 %15, %7, %15, !p; }"
      : "+r"(a[0]), "+r"(a[1]), "+r"(a[2]), "+r"(a[3]), "+r"(a[4]), "+r"(a[5]), "+r"(a[6]), "+r"(a[7]),
        "+r"(b[0]), "+r"(b[1]), "+r"(b[2]), "+r"(b[3]), "+r"(b[4]), "+r"(b[5]), "+r"(b[6]), "+r"(b[7])
      : "r"(lane & 1));
}

template <int OP, int I, int U>
__device__ __forceinline__ void chains(uint32_t (&a)[CHAINS], uint32_t (&b)[CHAINS], uint32_t (&c)[CHAINS],
                                       uint32_t base, uint32_t lane, uint32_t it) {
  static_assert(CHAINS == 8, "selp16 names 8 chains");
  if constexpr (OP == SELP) {
    selp16(a, b, lane);  // 2 selp per chain
  } else if constexpr (I < CHAINS) {
    step<OP, I, U>(a[I], b[I], c[I], base, lane, it);
    chains<OP, I + 1, U>(a, b, c, base, lane, it);
  }
}
template <int OP, int U>
__device__ __forceinline__ void unrolled(uint32_t (&a)[CHAINS], uint32_t (&b)[CHAINS], uint32_t (&c)[CHAINS],
                                         uint32_t base, uint32_t lane, uint32_t it) {
  if constexpr (U < UNROLL) {
    chains<OP, 0, U>(a, b, c, base, lane, it);
    unrolled<OP, U + 1>(a, b, c, base, lane, it);
  }
}

template <int OP>
__global__ void throughput(int iters, uint32_t seed, unsigned long long* cycles, uint32_t* sink) {
  extern __shared__ uint32_t smem[];
  const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (uint32_t k = threadIdx.x; k < SHARED_BYTES / 4; k += blockDim.x) smem[k] = k * seed;
  // each warp its own 16 KB of shared memory for the round trip, the first 16 KB for the others
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem)) + (OP == ROUNDTRIP128 ? (warp % 12) * 16384 : 0);
  uint32_t a[CHAINS], b[CHAINS], c[CHAINS];
#pragma unroll
  for (int i = 0; i < CHAINS; ++i) {
    a[i] = seed * (threadIdx.x + 7 * i + 1);
    b[i] = (lane * 5 + i) ^ (seed << 5);  // the low 5 bits: a shuffle's source lane
    c[i] = (seed >> i) ^ lane;
  }
  __syncthreads();
  const unsigned long long t0 = clock64();
  for (int it = 0; it < iters; ++it) unrolled<OP, 0>(a, b, c, base, lane, it);
  __syncthreads();
  const unsigned long long t1 = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
  uint32_t s = 0;
#pragma unroll
  for (int i = 0; i < CHAINS; ++i) s ^= a[i] ^ b[i] ^ c[i];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// one warp, one chain: 0 shfl.sync.idx (source lane from the value), 1 ld.shared (address from the
// value), 2 selp (ALU dependency), 3 prmt
template <int KIND>
__global__ void latency(int iters, uint32_t seed, unsigned long long* cycles, uint32_t* sink) {
  extern __shared__ uint32_t smem[];
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  for (uint32_t k = lane; k < 1024; k += 32) smem[k] = base + ((k * 4 + 132) % 4096);  // a chain of addresses
  __syncwarp();
  uint32_t v = KIND == 1 ? base + lane * 4 : seed + lane;
  const uint32_t p = seed & 1;
  __syncwarp();
  const unsigned long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < 16; ++u) {
      if constexpr (KIND == 0) v = shfl_idx(v, v);
      if constexpr (KIND == 1) asm volatile("ld.volatile.shared.b32 %0, [%0];" : "+r"(v));
      if constexpr (KIND == 2) v = selp(v, seed, p);
      if constexpr (KIND == 3) v = prmt<0x1032>(v, seed);
    }
  }
  const unsigned long long t1 = clock64();
  if (lane == 0) cycles[0] = t1 - t0;
  sink[lane] = v;
}

template <typename K>
static double run(K kernel, int ctas, int threads, int iters, unsigned long long* d_cycles, uint32_t* d_sink) {
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SHARED_BYTES));
  kernel<<<ctas, threads, SHARED_BYTES>>>(iters, 0x9e3779b9u, d_cycles, d_sink);  // warm-up
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<double> medians;
  for (int rep = 0; rep < 3; ++rep) {
    kernel<<<ctas, threads, SHARED_BYTES>>>(iters, 0x9e3779b9u + rep, d_cycles, d_sink);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::vector<unsigned long long> h(ctas);
    CHECK(cudaMemcpy(h.data(), d_cycles, ctas * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    std::sort(h.begin(), h.end());
    medians.push_back(static_cast<double>(h[ctas / 2]));
  }
  std::sort(medians.begin(), medians.end());
  return medians[1];
}

template <int OP>
static void throughput_rows(int sms, unsigned long long* d_cycles, uint32_t* d_sink, bool& first) {
  const int iters = 512;
  for (int warps = 1; warps <= 32; warps *= 2) {
    const double cycles = run(throughput<OP>, sms, 32 * warps, iters, d_cycles, d_sink);
    const double ops = static_cast<double>(warps) * iters * UNROLL * CHAINS;
    printf("%s  {\"kind\": \"throughput\", \"op\": \"%s\", \"kernel\": %d, \"warps\": %d, \"ops_per_warp\": %d, "
           "\"instructions_per_op\": %d, \"cycles\": %.0f, \"warp_ops_per_sm_cycle\": %.4f}",
           first ? "" : ",\n", OP_NAMES[OP], OP, warps, iters * UNROLL * CHAINS, OP_INSTRUCTIONS[OP], cycles, ops / cycles);
    first = false;
  }
}

template <int OP>
static void all_throughput(int sms, unsigned long long* d_cycles, uint32_t* d_sink, bool& first) {
  if constexpr (OP < NUM_OPS) {
    throughput_rows<OP>(sms, d_cycles, d_sink, first);
    all_throughput<OP + 1>(sms, d_cycles, d_sink, first);
  }
}

template <int KIND>
static void latency_row(unsigned long long* d_cycles, uint32_t* d_sink, bool& first) {
  static const char* names[] = {"shfl.sync.idx.b32", "ld.shared.b32", "selp.b32", "prmt.b32"};
  const int iters = 256;
  const double cycles = run(latency<KIND>, 1, 32, iters, d_cycles, d_sink);
  printf("%s  {\"kind\": \"latency\", \"op\": \"%s\", \"chain\": %d, \"cycles\": %.0f, \"cycles_per_op\": %.2f}",
         first ? "" : ",\n", names[KIND], iters * 16, cycles, cycles / (iters * 16));
  first = false;
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  unsigned long long* d_cycles;
  uint32_t* d_sink;
  CHECK(cudaMalloc(&d_cycles, sms * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&d_sink, sms * 1024 * sizeof(uint32_t)));
  int clock_khz = 0;
  CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  printf("{\"format\": \"linlayout_mio_micro/v1\", \"device\": \"%s\", \"capability\": \"%d.%d\", \"sm_count\": %d, "
         "\"clock_khz\": %d, \"chains\": %d, \"unroll\": %d,\n \"rows\": [\n",
         prop.name, prop.major, prop.minor, sms, clock_khz, CHAINS, UNROLL);
  bool first = true;
  all_throughput<0>(sms, d_cycles, d_sink, first);
  latency_row<0>(d_cycles, d_sink, first);
  latency_row<1>(d_cycles, d_sink, first);
  latency_row<2>(d_cycles, d_sink, first);
  latency_row<3>(d_cycles, d_sink, first);
  printf("\n]}\n");
  return 0;
}
