// Copyright 2026 The Sieve Authors.
//
// What callers of the threshold select do with its slots: the exact top-k (TopKFromCandidates),
// thresholds from a previous top-k (ThresholdsFromTopK) and the band to rescore (CollectBand).

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "gpu/cuda_status.cuh"
#include "gpu/radix_select.cuh"
#include "gpu/threshold_select/scores.cuh"
#include "gpu/threshold_select/select_state.cuh"
#include "gpu/threshold_select/threshold_select.h"

namespace sieve::gpu {
namespace detail::ts {

// Final top-k from the slots: one CTA per row. Items are ranked by a 64-bit key, the ordered
// stored score above the complement of the key index (unique within a row), radix-selected
// (8 bits a pass, stopping as soon as the prefix holds exactly the remaining count), then
// bitonic-sorted best first.

// The filled slots [lo, hi) of a row: from `ranges`, else from its counters (rows that fit).
__device__ __forceinline__ void SlotRange(const int32_t* ranges, const int32_t* counters,
                                          uint32_t num_rows, int64_t row, int top_k, int capacity,
                                          int* lo, int* hi) {
  if (ranges != nullptr) {
    *lo = ranges[row];
    *hi = ranges[num_rows + row];
  } else {
    *lo = top_k - min(counters[2 * row + 1], top_k);
    *hi = top_k + min(counters[2 * row], capacity);
  }
}

constexpr int kTopKMax = 4096;

__global__ void __launch_bounds__(kThreads)
    TopKKernel(const int2* __restrict__ slots, const int32_t* __restrict__ counters,
               const int32_t* __restrict__ ranges, const float* __restrict__ thresholds,
               uint32_t num_rows, int top_k, int capacity, int k, int32_t* __restrict__ out_keys,
               float* __restrict__ out_scores) {
  __shared__ uint32_t hist[256];
  __shared__ unsigned long long buf[kTopKMax];
  __shared__ int s_count;
  __shared__ unsigned long long s_prefix;
  __shared__ int s_shift;
  __shared__ int s_remaining;
  __shared__ int s_done;
  const int64_t row = blockIdx.x;
  int lo, hi;
  SlotRange(ranges, counters, num_rows, row, top_k, capacity, &lo, &hi);
  const int n = max(hi - lo, 0);
  const int2* items = slots + row * static_cast<int64_t>(top_k + capacity) + lo;
  auto key_of = [&](int i) -> unsigned long long {
    const int2 it = items[i];
    const uint32_t u = OrderedKey(__int_as_float(it.y));
    return (static_cast<unsigned long long>(u) << 32) | static_cast<uint32_t>(~it.x);
  };
  const int take = min(n, k);
  if (threadIdx.x == 0) {
    s_count = 0;
    s_prefix = 0;
    s_shift = 64;
    s_remaining = take;
    s_done = n <= k;
  }
  __syncthreads();
  // Radix select: after it, the chosen items are those whose top (64 - s_shift) bits are above
  // s_prefix, plus all of those equal to it.
  for (int pass = 0; pass < 8 && !s_done; ++pass) {
    for (int t = threadIdx.x; t < 256; t += blockDim.x) hist[t] = 0;
    __syncthreads();
    const int shift = s_shift - 8;
    const unsigned long long prefix = s_prefix;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
      const unsigned long long key = key_of(i);
      if (pass == 0 || (key >> (shift + 8)) == prefix) atomicAdd(&hist[(key >> shift) & 255u], 1u);
    }
    __syncthreads();
    if (threadIdx.x < 32) {
      const int want = s_remaining;
      int digit = 0, cum = 0;
      detail::HighDigit(hist, want, &digit, &cum);
      if (threadIdx.x == 0) {
        s_remaining = want - cum;
        s_prefix = (prefix << 8) | static_cast<unsigned long long>(digit);
        s_shift = shift;
        if (static_cast<int>(hist[digit]) == s_remaining || shift == 0) s_done = 1;
      }
    }
    __syncthreads();
  }
  const int P = take <= 1 ? 1 : 1 << (32 - __clz(take - 1));
  for (int t = threadIdx.x; t < P; t += blockDim.x) buf[t] = 0ull;
  __syncthreads();
  {
    const int shift = s_shift;
    const unsigned long long prefix = s_prefix;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
      const unsigned long long key = key_of(i);
      if (n <= k || shift >= 64 || (key >> shift) >= prefix) {
        const int pos = atomicAdd(&s_count, 1);
        if (pos < take) buf[pos] = key;
      }
    }
  }
  __syncthreads();
  // Bitonic sort, descending.
  for (int size = 2; size <= P; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int t = threadIdx.x; t < P; t += blockDim.x) {
        const int o = t ^ stride;
        if (o > t) {
          const bool desc = (t & size) == 0;
          const unsigned long long x = buf[t], y = buf[o];
          if (desc ? (x < y) : (x > y)) {
            buf[t] = y;
            buf[o] = x;
          }
        }
      }
      __syncthreads();
    }
  }
  const float thr = thresholds[row];
  for (int i = threadIdx.x; i < k; i += blockDim.x) {
    int32_t key = -1;
    float score = -INFINITY;
    if (i < take) {
      const unsigned long long x = buf[i];
      key = static_cast<int32_t>(~static_cast<uint32_t>(x & 0xffffffffu));
      const uint32_t u = static_cast<uint32_t>(x >> 32);
      score = u == 0u ? __int_as_float(0x7fc00000) : Decode(FromOrderedKey(u), thr);
    }
    out_keys[row * k + i] = key;
    out_scores[row * k + i] = score;
  }
}

__global__ void ThresholdsKernel(const float* __restrict__ scores, uint32_t num_rows, int k,
                                 const float* __restrict__ margin, float* __restrict__ thresholds,
                                 int32_t* __restrict__ counters) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= num_rows) return;
  float s = scores[r * k + k - 1];
  if (isnan(s)) s = -INFINITY;
  if (margin != nullptr && s != -INFINITY) s = __fsub_rn(s, margin[r]);
  thresholds[r] = s;
  counters[2 * r] = 0;
  counters[2 * r + 1] = 0;
}

// One CTA per row: keys whose decoded score is at least the row's floor.
__global__ void __launch_bounds__(kThreads)
    BandKernel(const int2* __restrict__ slots, const int32_t* __restrict__ counters,
               const int32_t* __restrict__ ranges, const float* __restrict__ thresholds,
               uint32_t num_rows, int top_k, int capacity, const float* __restrict__ kth_scores,
               int k, const float* __restrict__ margin, uint32_t out_cap,
               uint32_t* __restrict__ out_ids, uint32_t* __restrict__ out_counts) {
  __shared__ uint32_t s_count;
  const int64_t row = blockIdx.x;
  int lo, hi;
  SlotRange(ranges, counters, num_rows, row, top_k, capacity, &lo, &hi);
  float floor_score = kth_scores[row * k + k - 1];
  if (isnan(floor_score) || floor_score == -INFINITY) {
    floor_score = -INFINITY;
  } else if (margin != nullptr) {
    floor_score = __fsub_rn(floor_score, margin[row]);
  }
  const float thr = thresholds[row];
  if (threadIdx.x == 0) s_count = 0;
  __syncthreads();
  const int2* items = slots + row * static_cast<int64_t>(top_k + capacity);
  for (int i = lo + static_cast<int>(threadIdx.x); i < hi; i += blockDim.x) {
    const int2 it = items[i];
    const float s = Decode(__int_as_float(it.y), thr);
    if (floor_score == -INFINITY || s >= floor_score) {
      const uint32_t pos = atomicAdd(&s_count, 1u);
      if (pos < out_cap) out_ids[row * out_cap + pos] = static_cast<uint32_t>(it.x);
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) out_counts[row] = s_count;
}


}  // namespace detail::ts

using detail::FromCuda;
using detail::ts::BandKernel;
using detail::ts::kThreads;
using detail::ts::kTopKMax;
using detail::ts::ThresholdsKernel;
using detail::ts::TopKKernel;

Status TopKFromCandidates(const int32_t* candidates, const int32_t* counters, const int32_t* ranges,
                          const float* thresholds, uint32_t num_rows, uint32_t top_k,
                          uint32_t capacity, uint32_t k, int32_t* out_keys, float* out_scores,
                          void* stream) {
  if (num_rows == 0) return Status::OK();
  if (candidates == nullptr || thresholds == nullptr || out_keys == nullptr ||
      out_scores == nullptr || (ranges == nullptr && counters == nullptr)) {
    return Status::InvalidArgument("top-k from candidates: a required buffer is null");
  }
  if (k == 0 || k > kTopKMax || uint64_t{k} > uint64_t{top_k} + capacity) {
    return Status::InvalidArgument(
        "top-k from candidates: k must be in [1, min(4096, top_k + "
        "capacity)], got " +
        std::to_string(k));
  }
  TopKKernel<<<num_rows, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      reinterpret_cast<const int2*>(candidates), counters, ranges, thresholds, num_rows,
      static_cast<int>(top_k), static_cast<int>(capacity), static_cast<int>(k), out_keys,
      out_scores);
  return FromCuda(cudaGetLastError(), "launch top-k from candidates");
}

Status ThresholdsFromTopK(const float* out_scores, uint32_t num_rows, uint32_t k,
                          const float* margin, float* thresholds, int32_t* counters, void* stream) {
  if (num_rows == 0) return Status::OK();
  if (out_scores == nullptr || thresholds == nullptr || counters == nullptr || k == 0) {
    return Status::InvalidArgument("thresholds from top-k: bad arguments");
  }
  ThresholdsKernel<<<(num_rows + 255) / 256, 256, 0, static_cast<cudaStream_t>(stream)>>>(
      out_scores, num_rows, static_cast<int>(k), margin, thresholds, counters);
  return FromCuda(cudaGetLastError(), "launch thresholds from top-k");
}

Status CollectBand(const int32_t* candidates, const int32_t* counters, const int32_t* ranges,
                   const float* thresholds, uint32_t num_rows, uint32_t top_k, uint32_t capacity,
                   const float* kth_scores, uint32_t k, const float* margin, uint32_t out_cap,
                   uint32_t* out_ids, uint32_t* out_counts, void* stream) {
  if (num_rows == 0) return Status::OK();
  if (candidates == nullptr || thresholds == nullptr || kth_scores == nullptr || k == 0 ||
      out_counts == nullptr || (out_cap > 0 && out_ids == nullptr) ||
      (ranges == nullptr && counters == nullptr)) {
    return Status::InvalidArgument("collect band: bad arguments");
  }
  BandKernel<<<num_rows, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      reinterpret_cast<const int2*>(candidates), counters, ranges, thresholds, num_rows,
      static_cast<int>(top_k), static_cast<int>(capacity), kth_scores, static_cast<int>(k), margin,
      out_cap, out_ids, out_counts);
  return FromCuda(cudaGetLastError(), "launch collect band");
}

}  // namespace sieve::gpu
