// Copyright 2026 The Sieve Authors.
//
// Radix-select building blocks shared by the backend's kernels (device code only): one step of
// an 8-bit radix select done by a whole warp, and the k-th largest 32-bit key of a row done by
// one CTA.

#ifndef SIEVE_GPU_RADIX_SELECT_CUH_
#define SIEVE_GPU_RADIX_SELECT_CUH_

#include <cstdint>

namespace sieve::gpu::detail {

// Order-preserving unsigned key of a float: larger float, larger key. NaN (either sign) is 0,
// below every other value (-inf is 0x007fffff).
__device__ __forceinline__ uint32_t OrderedKey(float x) {
  if (x != x) return 0u;
  const uint32_t b = __float_as_uint(x);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

// The float of an OrderedKey; NaN for 0.
__device__ __forceinline__ float FromOrderedKey(uint32_t u) {
  if (u == 0u) return __int_as_float(0x7fc00000);
  return __uint_as_float((u & 0x80000000u) ? (u & 0x7fffffffu) : ~u);
}

// Radix-select step, by one whole warp: the largest digit d of a 256-bin histogram with at least
// `want` items in bins >= d, and `above`, the items in bins > d. Lane l sums bins
// 255 - 8l .. 248 - 8l, a scan over the lanes finds the lane holding the crossing, and that lane
// walks its 8 bins: about 40 dependent steps instead of 256 for one thread. Without a crossing
// (the bins hold fewer than `want`), d = 0 and `above` is the total, as the walk of one thread
// would give.
__device__ __forceinline__ void HighDigit(const uint32_t* hist, int want, int* digit, int* above) {
  constexpr unsigned kAll = 0xffffffffu;
  const int lane = threadIdx.x & 31;
  int local = 0;
#pragma unroll
  for (int b = 0; b < 8; ++b) local += static_cast<int>(hist[255 - 8 * lane - b]);
  int incl = local;
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const int x = __shfl_up_sync(kAll, incl, off);
    if (lane >= off) incl += x;
  }
  const unsigned crossing = __ballot_sync(kAll, incl >= want);
  const int owner = crossing != 0 ? __ffs(crossing) - 1 : 31;
  int d = 0, cum = incl - local;
  if (lane == owner) {
    bool found = false;
    for (int b = 0; b < 8 && !found; ++b) {
      const int bin = 255 - 8 * lane - b;
      const int h = static_cast<int>(hist[bin]);
      if (cum + h >= want) {
        d = bin;
        found = true;
      } else {
        cum += h;
      }
    }
  }
  *digit = __shfl_sync(kAll, d, owner);
  *above = __shfl_sync(kAll, cum, owner);
}

// Adds one to hist[bin] for every lane of the warp with `take` set; lanes of one bin add together
// (one atomic a distinct bin, not one a lane: a row's keys share their high digits, and atomics
// of a warp on one shared word run one after another). Every lane of the warp must call it.
__device__ __forceinline__ void WarpHistogramAdd(uint32_t* hist, uint32_t bin, bool take) {
  const unsigned peers = __match_any_sync(0xffffffffu, take ? bin : 0xffffffffu);
  if (take && static_cast<int>(threadIdx.x & 31) == __ffs(peers) - 1) {
    atomicAdd(&hist[bin], static_cast<uint32_t>(__popc(peers)));
  }
}

// The k-th largest (1-based, k <= n) of the n keys key(i), i < n, by the whole CTA (blockDim.x
// a multiple of 32): four 8-bit passes over the keys, each counting those that match the digits
// found so far. `hist` is 256 words of shared memory; every thread gets the result. With
// `cache` (n words of shared memory), the first pass keeps the keys there and the other three
// read them from it instead of calling key(i) again; the caller may then read cache[i] for
// key(i). A thread takes kKthUnroll keys a round and reads them all before it counts any, so
// that the global reads of key(i) overlap.
constexpr int kKthUnroll = 8;
template <typename KeyOf>
__device__ uint32_t BlockKthLargest(int64_t n, int k, KeyOf key, uint32_t* hist,
                                    uint32_t* cache = nullptr) {
  __shared__ uint32_t s_prefix;
  __shared__ int s_want;
  if (threadIdx.x == 0) {
    s_prefix = 0;
    s_want = k;
  }
  const int64_t round = static_cast<int64_t>(blockDim.x) * kKthUnroll;
  for (int pass = 0; pass < 4; ++pass) {
    const int shift = 24 - 8 * pass;
    for (int t = threadIdx.x; t < 256; t += blockDim.x) hist[t] = 0;
    __syncthreads();  // the histogram is clear; s_prefix and s_want are the last pass's
    const uint32_t prefix = s_prefix;
    const bool fresh = cache == nullptr || pass == 0;  // keys from key(i), not the cache
    // The bound is the same for the whole CTA, so every warp is whole at WarpHistogramAdd.
    for (int64_t base = 0; base < n; base += round) {
      uint32_t u[kKthUnroll];
#pragma unroll
      for (int j = 0; j < kKthUnroll; ++j) {
        const int64_t i = base + static_cast<int64_t>(j) * blockDim.x + threadIdx.x;
        u[j] = i < n ? (fresh ? key(i) : cache[i]) : 0u;
      }
#pragma unroll
      for (int j = 0; j < kKthUnroll; ++j) {
        const int64_t i = base + static_cast<int64_t>(j) * blockDim.x + threadIdx.x;
        if (cache != nullptr && pass == 0 && i < n) cache[i] = u[j];
        const bool take = i < n && (pass == 0 || (u[j] >> (shift + 8)) == prefix);
        WarpHistogramAdd(hist, (u[j] >> shift) & 255u, take);
      }
    }
    __syncthreads();
    if (threadIdx.x < 32) {
      const int want = s_want;
      int digit = 0, above = 0;
      HighDigit(hist, want, &digit, &above);
      if (threadIdx.x == 0) {
        s_want = want - above;
        s_prefix = (prefix << 8) | static_cast<uint32_t>(digit);
      }
    }
    __syncthreads();
  }
  return s_prefix;
}

}  // namespace sieve::gpu::detail

#endif  // SIEVE_GPU_RADIX_SELECT_CUH_
