// Copyright 2026 The Sieve Authors.
//
// The threshold-select path: exact top-k over every resident row (or a gathered block) through
// gpu::ThresholdSelect, in levels of growing row prefixes, without a score matrix.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gpu/cuda_status.cuh"
#include "gpu/device_run.cuh"
#include "gpu/memory.cuh"
#include "gpu/paths/distance.cuh"
#include "gpu/threshold_select/threshold_select.h"

namespace sieve::gpu::detail {

__global__ void FillIntKernel(int32_t* p, int64_t n, int32_t v) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    p[i] = v;
  }
}

// Threshold-select dense path (see DeviceRun::ThresholdDense). Per query row r: the query
// scale (the float16 high halves were divided by it), a threshold of -inf, and the margin 2E,
// where E bounds |computed - exact| of a score: float16 high halves move a dot product by at
// most 2^-11 |q||x| and float32 accumulation (tensor cores included) by far less; err_rel
// (2^-9 + 2^-13) covers both with room, against the largest resident row norm.
__global__ void ThresholdSetupKernel(int m, float scale, const float* __restrict__ q_sq_norms,
                                     float max_x_sq_norm, int metric, float err_rel,
                                     float* __restrict__ scales, float* __restrict__ thresholds,
                                     float* __restrict__ margin) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= m) return;
  const float e = ScoreErrorBound(metric, err_rel, 0.0f, q_sq_norms[r], max_x_sq_norm);
  scales[r] = scale;
  thresholds[r] = -INFINITY;
  margin[r] = 2.0f * e * 1.0001f;
}

// Band lists of positions in a gathered block become resident ordinals: ids[q * cap + i] =
// col_ids[ids[q * cap + i]] for i < min(counts[q], cap). One block per query.
__global__ void PositionsToOrdinalsKernel(uint32_t* __restrict__ ids,
                                          const uint32_t* __restrict__ counts, uint32_t cap,
                                          const uint32_t* __restrict__ col_ids) {
  const int64_t q = blockIdx.x;
  const uint32_t n = min(counts[q], cap);
  for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
    ids[q * cap + i] = col_ids[ids[q * cap + i]];
  }
}

// Overflow bits of one level of the threshold-select path, ORed into why[r]: 1 its candidates
// passed `cap`, 2 its ties passed top_k, 4 its band passed band_cap (band_counts given). With
// `host_cap` set, the last level writes flags[r] = host_cap + why[r] (or 0) for the host.
__global__ void ThresholdOverflowKernel(int m, const int32_t* __restrict__ counters, int32_t cap,
                                        int32_t top_k, const uint32_t* __restrict__ band_counts,
                                        uint32_t band_cap, uint32_t* __restrict__ why,
                                        uint32_t host_cap, uint32_t* __restrict__ flags) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= m) return;
  uint32_t w = why[r] | (counters[2 * r] > cap ? 1u : 0u) |
               (counters[2 * r + 1] > top_k ? 2u : 0u) |
               (band_counts != nullptr && band_counts[r] > band_cap ? 4u : 0u);
  why[r] = w;
  if (flags != nullptr) flags[r] = w != 0 ? host_cap + w : 0u;
}

// Exact top-k over every resident row through gpu::ThresholdSelect, without a score matrix.
// E bounds |computed - exact| of a score (float16 high halves of the queries, float32
// accumulation; see ThresholdSetupKernel).
// (1) Levels (query/topk_plan.h ThresholdLevels): level 0 keeps every key of a prefix of the
//     rows; its k-th best computed score s less 2E is the next level's threshold, and so on:
//     a row of a prefix's exact top-k scores at least s - 2E, so every level keeps the top-k
//     of its rows, and the last level keeps every row of the exact top-k among all rows.
// (2) The k-th best computed score c of the last level bounds the band: a row of the exact
//     top-k has a computed score of at least c - 2E. Only the band is rescored exactly
//     (float32 query against the row) and select_k takes the k best.
// Overflow at any level (candidates past its cap, ties past k, or a band past its list) goes
// to the host with the results, and GpuExecutor::Run reruns the search on the full path.
// What the threshold select reads: pages (the resident shard's, or a gathered block's), the
// block table (one row), the filter (none for a block gathered through a bitset: every row of
Status DeviceRun::ThresholdDense(uint32_t q0, uint32_t m, uint64_t n_cols, const ThresholdKeys& tk,
                                 const TopKPlan& plan) {
  const Prepared& p = p_;
  const std::vector<uint64_t>& ends = plan.level_ends;
  const std::vector<uint64_t>& caps = plan.level_caps;
  const uint64_t most = *std::max_element(caps.begin(), caps.end());
  const uint32_t k = p.k;
  const uint32_t kf = static_cast<uint32_t>(std::min<uint64_t>(k, n_cols));
  const uint32_t band_cap = std::max<uint32_t>(4 * k, 1024);
  const uint32_t tiles = (m + kQueryTileRows - 1) / kQueryTileRows;

  DeviceBuffer<float> scales, thresholds, margin, kth_scores;
  DeviceBuffer<int32_t> row_ends, requests, counters, slots, kth_keys;
  DeviceBuffer<uint32_t> band_ids, band_counts, why, flags;
  SIEVE_RETURN_IF_ERROR(scales.Allocate(m, stream_));
  SIEVE_RETURN_IF_ERROR(thresholds.Allocate(m, stream_));
  SIEVE_RETURN_IF_ERROR(margin.Allocate(m, stream_));
  SIEVE_RETURN_IF_ERROR(row_ends.Allocate(m, stream_));
  SIEVE_RETURN_IF_ERROR(requests.Allocate(tiles, stream_));
  SIEVE_RETURN_IF_ERROR(counters.Allocate(size_t{2} * m, stream_));
  SIEVE_RETURN_IF_ERROR(slots.Allocate(size_t{m} * (k + most) * 2, stream_));
  SIEVE_RETURN_IF_ERROR(kth_keys.Allocate(size_t{m} * k, stream_));
  SIEVE_RETURN_IF_ERROR(kth_scores.Allocate(size_t{m} * k, stream_));
  SIEVE_RETURN_IF_ERROR(why.Allocate(m, stream_));
  SIEVE_RETURN_IF_ERROR(flags.Allocate(m, stream_));
  SIEVE_RETURN_IF_ERROR(band_ids.Allocate(size_t{m} * band_cap, stream_));
  SIEVE_RETURN_IF_ERROR(band_counts.Allocate(m, stream_));
  SIEVE_CUDA_TRY(cudaMemsetAsync(requests.get(), 0, size_t{tiles} * 4, stream_));
  SIEVE_CUDA_TRY(cudaMemsetAsync(counters.get(), 0, size_t{m} * 8, stream_));
  SIEVE_CUDA_TRY(cudaMemsetAsync(why.get(), 0, size_t{m} * 4, stream_));
  ThresholdSetupKernel<<<(m + 255) / 256, 256, 0, stream_>>>(
      static_cast<int>(m), p.scale, qnorms_ + q0, p.shard->max_sq_norm, p.metric,
      0x1p-9f + 0x1p-13f, scales.get(), thresholds.get(), margin.get());
  SIEVE_CUDA_CHECK_LAUNCH("ThresholdSetupKernel");

  ThresholdSelectArgs a;
  a.keys = tk.keys;
  a.metric = static_cast<Metric>(p.metric);
  a.queries = split_ + size_t{2} * q0 * p.dim;  // the chunk's m high halves
  a.num_rows = m;
  a.query_scales = scales.get();
  a.query_sq_norms = qnorms_ + q0;
  a.row_ends = row_ends.get();
  a.tile_requests = requests.get();
  a.block_table = tk.table;
  a.blocks_per_request = tk.blocks;
  a.filter = tk.filter;
  a.filter_stride = tk.filter_stride;
  a.thresholds = thresholds.get();
  a.counters = counters.get();
  a.candidates = slots.get();
  a.top_k = k;

  // (1) The levels; after each, its top-k (whose k-th best is the next threshold, and after
  // the last, the top of the band). Every row sees every column; a level's prefix is its
  // max_context (the kernel sees min(row end, max_context)).
  FillIntKernel<<<(m + 255) / 256, 256, 0, stream_>>>(
      row_ends.get(), m, static_cast<int32_t>(ends.back()));
  SIEVE_CUDA_CHECK_LAUNCH("FillIntKernel");
  for (size_t level = 0; level < ends.size(); ++level) {
    a.max_context = static_cast<uint32_t>(ends[level]);
    a.capacity = static_cast<uint32_t>(caps[level]);
    SIEVE_RETURN_IF_ERROR(ThresholdSelect(a, stream_));
    SIEVE_RETURN_IF_ERROR(TopKFromCandidates(slots.get(), counters.get(), nullptr,
                                             thresholds.get(), m, k, a.capacity, k,
                                             kth_keys.get(), kth_scores.get(), stream_));
    const bool last = level + 1 == ends.size();
    if (last) {
      SIEVE_RETURN_IF_ERROR(CollectBand(slots.get(), counters.get(), nullptr, thresholds.get(),
                                        m, k, a.capacity, kth_scores.get(), k, margin.get(),
                                        band_cap, band_ids.get(), band_counts.get(), stream_));
    }
    ThresholdOverflowKernel<<<(m + 255) / 256, 256, 0, stream_>>>(
        static_cast<int>(m), counters.get(), static_cast<int32_t>(a.capacity),
        static_cast<int32_t>(k), last ? band_counts.get() : nullptr, band_cap, why.get(),
        static_cast<uint32_t>(most), last ? flags.get() : nullptr);
    SIEVE_CUDA_CHECK_LAUNCH("ThresholdOverflowKernel");
    if (!last) {
      SIEVE_RETURN_IF_ERROR(ThresholdsFromTopK(kth_scores.get(), m, k, margin.get(),
                                               thresholds.get(), counters.get(), stream_));
      Mark("ts.level");
    }
  }
  SIEVE_CUDA_TRY(cudaMemcpyAsync(h_counts_ + q0, flags.get(), size_t{m} * 4,
                                 cudaMemcpyDeviceToHost, stream_));
  SIEVE_CUDA_TRY(cudaMemcpyAsync(h_counts_ + p.nq + q0, band_counts.get(), size_t{m} * 4,
                                 cudaMemcpyDeviceToHost, stream_));
  cand_cap_ = most;
  Mark("ts.select");

  // (2) The band, rescored exactly; the k best of it.
  if (tk.col_ids != nullptr) {
    PositionsToOrdinalsKernel<<<m, 256, 0, stream_>>>(band_ids.get(), band_counts.get(),
                                                              band_cap, tk.col_ids);
    SIEVE_CUDA_CHECK_LAUNCH("PositionsToOrdinalsKernel");
  }
  return RescoreAndSelect(q0, m, band_ids.get(), nullptr, band_cap, band_counts.get(),
                          static_cast<int>(kf), "ts.rescore", "ts.final");
}

}  // namespace sieve::gpu::detail
