// Copyright 2026 The Sieve Authors.

#include "gpu/device_run.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "gpu/cuda_status.cuh"
#include "gpu/stage_timer.cuh"
#include "gpu/threshold_select/threshold_select.h"

namespace sieve::gpu::detail {

const char* PathName(SearchPath p) {
  switch (p) {
    case SearchPath::kSddmm: return "sddmm";
    case SearchPath::kGather: return "gather";
    case SearchPath::kDense: return "dense";
    default: return "auto";
  }
}

Status DeviceRun::Run() {
  const Prepared& p = p_;
  const size_t nk = size_t{p.nq} * p.k;
  std::fill(h_ids_, h_ids_ + nk, kInvalidId);
  std::fill(h_vals_, h_vals_ + nk, p.sentinel);
  std::fill(h_counts_, h_counts_ + size_t{2} * p.nq, 0u);
  // Every run names the plan it carries out, also where no chunk reaches Dense (the SDDMM path,
  // nothing passing); Dense and the candidate scan add what they changed (products refused).
  NotePlan((p.no_candidates ? FullPlan() : p.topk).ToString());
  if (p.total_passing == 0 || p.rows == 0) return Status::OK();

  // Uploads: filter words, queries (float32 and split halves), query norms, list starts.
  if (p.ids_direct) {
    SIEVE_RETURN_IF_ERROR(d_ids_.Allocate(p.upload_words, stream_));
    SIEVE_CUDA_TRY(cudaMemcpyAsync(d_ids_.get(), h_filter_, p.upload_words * 4,
                                   cudaMemcpyHostToDevice, stream_));
    n_ids_ = p.total_passing;
  } else if (p.per_query && !p.no_filter) {
    // Grouped, the lows follow on the upload lane; everything before them goes first.
    SIEVE_RETURN_IF_ERROR(d_packed_.Allocate(p.packed.bytes, stream_));
    SIEVE_CUDA_TRY(cudaMemcpyAsync(d_packed_.get(), h_filter_,
                                   Grouped() ? p.packed.off_lows : p.packed.bytes,
                                   cudaMemcpyHostToDevice, stream_));
  } else if (!p.no_filter) {
    SIEVE_RETURN_IF_ERROR(d_filter_.Allocate(p.upload_words, stream_));
    SIEVE_CUDA_TRY(cudaMemcpyAsync(d_filter_.get(), h_filter_, p.upload_words * 4,
                                   cudaMemcpyHostToDevice, stream_));
  }
  SIEVE_RETURN_IF_ERROR(d_queries_.Allocate(p.queries_bytes, stream_));
  SIEVE_CUDA_TRY(cudaMemcpyAsync(d_queries_.get(), h_queries_, p.queries_bytes,
                                 cudaMemcpyHostToDevice, stream_));
  queries_ = reinterpret_cast<const float*>(d_queries_.get() + p.off_queries);
  split_ = reinterpret_cast<const __half*>(d_queries_.get() + p.off_split);
  qnorms_ = reinterpret_cast<const float*>(d_queries_.get() + p.off_qnorms);
  starts_ = reinterpret_cast<const uint64_t*>(d_queries_.get() + p.off_starts);
  if (Grouped()) SIEVE_RETURN_IF_ERROR(UploadListGroups());

  Mark("upload");
  if (p.per_query && !p.no_filter) {
    SIEVE_RETURN_IF_ERROR(UnpackFilters());
  } else if (NeedsCompaction(p.path) && !p.ids_direct) {
    SIEVE_RETURN_IF_ERROR(
        Compact(d_filter_.get(), static_cast<int64_t>(p.words), p.total_passing, &d_ids_));
    n_ids_ = p.total_passing;
    Mark("compact");
  }

  for (uint32_t q0 = 0; q0 < p.nq; q0 += chunk()) {
    const uint32_t m = std::min(chunk(), p.nq - q0);
    SIEVE_RETURN_IF_ERROR(RunChunk(q0, m));
  }
  return Status::OK();
}

uint32_t DeviceRun::chunk() const {
  const Prepared& p = p_;
  if (p.path == SearchPath::kSddmm) {
    return SddmmQueryChunk(p.per_query ? p.max_passing : p.total_passing);
  }
  return kMaxQueryChunk;
}

Status DeviceRun::RunChunk(uint32_t q0, uint32_t m) {
  switch (p_.path) {
    case SearchPath::kSddmm:
      return Sddmm(q0, m);
    case SearchPath::kGather:
      return Dense(q0, m, d_ids_.get(), n_ids_);
    case SearchPath::kDense:
      return Dense(q0, m, nullptr, p_.rows);
    default:
      return Status::InvalidArgument("no path chosen");
  }
}

Status DeviceRun::Dense(uint32_t q0, uint32_t m, const uint32_t* col_ids, uint64_t n_cols) {
  const Prepared& p = p_;
  if (n_cols == 0) return Status::OK();
  const bool half = p.shard->dtype == DType::kFloat16;
  const size_t elem = half ? 2 : 4;
  RowBlocks rows;
  rows.bases = p.shard->slab_bases.data();
  rows.block_rows = p.shard->slab_rows();
  rows.row_bytes = size_t{p.dim} * elem;

  if (col_ids != nullptr) SIEVE_RETURN_IF_ERROR(GatherBlock(col_ids, n_cols, &rows));

  const TopKPlan plan = p.no_candidates ? FullPlan() : p.topk;
  ran_strategy_ = plan.strategy;
  ran_products_ = Products::kFloat32;
  if (plan.strategy != TopKStrategy::kCandidates) NotePlan(plan.ToString());
  if (plan.strategy == TopKStrategy::kThreshold) {
    ThresholdKeys keys;
    if (col_ids == nullptr) {
      keys.keys = p.shard->keys();
      keys.table = p.shard->d_pages;
      keys.blocks = static_cast<uint32_t>(p.shard->pages.size());
      keys.filter = ChunkFilter(q0, nullptr);
      keys.filter_stride = FilterStride();
    } else {
      SIEVE_RETURN_IF_ERROR(GatheredPages(col_ids, n_cols, &keys));
    }
    ++counts_->candidate_chunks;
    ++counts_->threshold_chunks;
    used_threshold_ = true;
    return ThresholdDense(q0, m, n_cols, keys, plan);
  }
  if (plan.strategy == TopKStrategy::kCandidates) {
    ++counts_->candidate_chunks;
    return Candidates(q0, m, rows, col_ids, n_cols, plan);
  }
  return Tiles(q0, m, rows, col_ids, n_cols);
}

// Writes the chunk's final (value, id) pairs, kf per query, into the pinned results.
Status DeviceRun::Download(uint32_t q0, uint32_t m, int kf, const float* d_vals, const uint32_t* d_ids) {
  const size_t k = p_.k;
  SIEVE_CUDA_TRY(cudaMemcpy2DAsync(h_vals_ + size_t{q0} * k, k * sizeof(float), d_vals,
                                   kf * sizeof(float), kf * sizeof(float), m,
                                   cudaMemcpyDeviceToHost, stream_));
  SIEVE_CUDA_TRY(cudaMemcpy2DAsync(h_ids_ + size_t{q0} * k, k * sizeof(uint32_t), d_ids,
                                   kf * sizeof(uint32_t), kf * sizeof(uint32_t), m,
                                   cudaMemcpyDeviceToHost, stream_));
  return Status::OK();
}

// The filter words that the chunk of queries starting at q0 tests, or null: columns gathered
// through a shared bitset all pass it, so only a bitmap needs testing there; and without a
// filter (no_filter) every row passes.
const uint32_t* DeviceRun::ChunkFilter(uint32_t q0, const uint32_t* col_ids) const {
  if ((col_ids != nullptr && !p_.per_query) || p_.no_filter) return nullptr;
  return d_filter_.get() + (p_.per_query ? size_t{q0} * p_.words : 0);
}

void DeviceRun::Mark(const char* name) { timer_->Record(name, stream_); }

void DeviceRun::NotePlan(const std::string& plan) {
  if (plan_.empty()) {
    plan_ = plan;
  } else if (plan_.find(plan) == std::string::npos) {
    plan_ += "; " + plan;
  }
}

}  // namespace sieve::gpu::detail
