// Copyright 2026 The Sieve Authors.
//
// Distances and filter bits as every path's kernels compute them, and distances as radix-select
// keys (device code).

#ifndef SIEVE_GPU_PATHS_DISTANCE_CUH_
#define SIEVE_GPU_PATHS_DISTANCE_CUH_

#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>

#include "gpu/radix_select.cuh"
#include "sieve/types.h"

namespace sieve::gpu::detail {

__device__ __forceinline__ float ToFloat(float x) { return x; }
__device__ __forceinline__ float ToFloat(__half x) { return __half2float(x); }

// l2: squared Euclidean from the expansion (clamped at 0); ip: the dot; cosine: 1 - cos, and 1
// when either vector is zero (as the float64 oracle defines it).
__device__ __forceinline__ float FinishDistance(int metric, float dot, float qn2, float xn2) {
  if (metric == static_cast<int>(Metric::kL2)) return fmaxf(qn2 + xn2 - 2.0f * dot, 0.0f);
  if (metric == static_cast<int>(Metric::kInnerProduct)) return dot;
  if (qn2 == 0.0f || xn2 == 0.0f) return 1.0f;
  return 1.0f - dot / (sqrtf(qn2) * sqrtf(xn2));
}

// E, a bound on |computed - rescored| of any score of a query whose squared norm is qn2 against
// rows whose squared norms are at most max_x_sq_norm, when the computed dot product is off by at
// most err_rel |q| |x| + err_abs (float16 high halves of the query, float32 accumulation, and
// for dot products rounded to float16 that rounding): e = err_rel |q| |x| + err_abs for ip,
// twice e plus a few ulps of the norms' sum for l2; err_rel for cosine (err_abs must be 0).
__device__ __forceinline__ float ScoreErrorBound(int metric, float err_rel, float err_abs,
                                                 float qn2, float max_x_sq_norm) {
  if (metric == static_cast<int>(Metric::kCosine)) return err_rel + 0x1p-20f;
  const float e = err_rel * sqrtf(qn2) * sqrtf(max_x_sq_norm) + err_abs;
  if (metric == static_cast<int>(Metric::kL2)) return 2.0f * e + 0x1p-20f * (qn2 + max_x_sq_norm);
  return e;
}

// Bit id % 32 of word id / 32 (RowSet::ToBitset's layout).
__device__ __forceinline__ bool TestBit(const uint32_t* words, uint32_t id) {
  return (words[id >> 5] >> (id & 31u)) & 1u;
}

// Better distance, larger key (select_min: smaller distances; else larger); NaN the smallest.
__device__ __forceinline__ uint32_t DistanceKey(float x, bool select_min) {
  if (x != x) return 0u;
  return select_min ? ~OrderedKey(x) : OrderedKey(x);
}

// The radix-select kernels that keep a row's keys in shared memory (KthBestKernel,
// CandidateBandKernel, SelectRowsKernel) take a row of up to `cache_keys` keys there: as many as
// one CTA of the device may have beside their static histograms (KeyCacheKeys; GpuExecutor
// lets them take that much, EnableKeyCaches). A longer row is read from global memory each pass.
// The dynamic shared memory of a launch over rows of n keys: n keys, or none when they do not fit.
inline size_t KeyCacheBytes(int64_t n, int64_t cache_keys) {
  return n <= cache_keys ? static_cast<size_t>(n) * 4 : 0;
}

}  // namespace sieve::gpu::detail

#endif  // SIEVE_GPU_PATHS_DISTANCE_CUH_
