// Copyright 2026 The Sieve Authors.
//
// GpuExecutor: the Executor (query/executor.h) of one CUDA device. Host-only header: no CUDA or
// RAFT type appears here. The engine reaches it through gpu/gpu_backend.h; tests and benchmarks
// that need its counters use this header.
//
// Every path is exact for l2, ip and cosine and any k >= 1. A shard's vectors stay resident on
// the device after its first search (gpu/device_shard.cuh); appends upload only the new rows.
// How the top-k is selected and at what precision the rows are multiplied is the request's plan
// (ExecRequest::topk, made by query/topk_plan.h PlanTopK from topk_abilities(), which carry the
// executor's GpuExecutorOptions); the executor carries it out, refuses a plan it cannot, and
// reports what ran in ExecResult::select, products and select_plan.
//
// Thread-safety: every method may be called from several threads; searches are serialized.

#ifndef SIEVE_GPU_GPU_EXECUTOR_H_
#define SIEVE_GPU_GPU_EXECUTOR_H_

#include <cstdint>
#include <memory>
#include <string>

#include "query/executor.h"
#include "sieve/gpu_options.h"
#include "sieve/status.h"

namespace sieve::gpu {

// What the executor has run since it was created. Tests use it to prove which path ran.
struct GpuPathCounts {
  uint64_t sddmm = 0;
  uint64_t gather = 0;
  uint64_t dense = 0;
  // Query chunks of the gather and dense paths that ran candidate selection (an exact sample
  // threshold, then only rows that can beat it are rescored), and those of them that fell back
  // to the full path because a query kept more rows than its candidate list holds.
  uint64_t candidate_chunks = 0;
  uint64_t candidate_fallbacks = 0;
  // Chunks that selected through gpu::ThresholdSelect (counted in candidate_chunks too; their
  // fallbacks in candidate_fallbacks).
  uint64_t threshold_chunks = 0;
  // Of searches whose candidate selection did not fall back: the rows the candidate scans kept
  // (every query's), and the rows of the bands rescored exactly (those of the kept rows, or of
  // the threshold select's, within twice the error bound of the k-th best computed distance;
  // float32 rows scanned in float32 keep their scan distances, which are exact, and have none).
  uint64_t candidate_rows_kept = 0;
  uint64_t candidate_band_rows = 0;
  // Chunks whose candidate scan took float16 dot products (float16 rows, l2 or ip, no product
  // that could overflow float16).
  uint64_t candidate_half_dots = 0;
  // Chunks whose candidate scan multiplied float32 rows on TF32 tensor cores
  // (GpuExecutorOptions::candidate_tf32; l2 and ip).
  uint64_t candidate_tf32 = 0;
  // Chunks whose candidate scan multiplied the resident rows' int8 codes
  // (GpuExecutorOptions::candidate_int8; the dense path, l2, ip and cosine).
  uint64_t candidate_int8 = 0;
  // Chunks whose planned float16, TF32 or int8 products the resident rows' norms refused (the rows'
  // norms passed the plan's bound but not the device's; int8: the shard's codes could not be
  // built): they multiplied in float32.
  uint64_t candidate_products_refused = 0;
  // A filter per query: its distinct sets uploaded as 16-bit chunked lists and as bitsets
  // (gpu/filter_pack.h), and the batches whose queries all had one set, searched as one filter.
  uint64_t filter_list_slots = 0;
  uint64_t filter_bitset_slots = 0;
  uint64_t filters_shared = 0;
  // Searches whose per-query lists went up in row ranges beside the SDDMM
  // (GpuExecutorOptions::list_upload_groups), and the ranges.
  uint64_t list_range_uploads = 0;
  uint64_t list_ranges = 0;
  // SDDMM launches whose blocks took several tiles of list positions each (enough blocks to
  // fill the device many times over).
  uint64_t sddmm_tiled_launches = 0;
};

class GpuExecutor final : public Executor {
 public:
  // Creates an executor on CUDA device options.device. InvalidArgument for options that do not
  // Validate(); Unavailable when no device can be used (the message says why);
  // ResourceExhausted when its buffers cannot be allocated.
  static Status Create(const GpuExecutorOptions& options, std::unique_ptr<GpuExecutor>* out);
  ~GpuExecutor() override;

  GpuExecutor(const GpuExecutor&) = delete;
  GpuExecutor& operator=(const GpuExecutor&) = delete;

  // "gpu:<device name>".
  std::string name() const override;
  TopKAbilities topk_abilities() const override;

  // See Executor::Search. InvalidArgument: k == 0, a path of kAuto, filters whose number does
  // not match the queries, or a set reaching rows >= shard.rows. ResourceExhausted: device
  // memory ran out (nothing is cached in a half-updated state). Internal: a CUDA, cuBLAS or RAFT
  // failure, named in the message, or a row beyond the shard in the results.
  Status Search(const ShardView& shard, const BatchFilters& filters, const ExecRequest& request,
                ExecResult* result) override;

  // See Executor::Profile: the host side is prepared once (residency, Roaring → pinned
  // bitsets, query preparation); each run is timed with CUDA events from the filter and query
  // upload (from pinned memory) through compaction, distances and top-k to the download of
  // the results.
  Status Profile(const ShardView& shard, const BatchFilters& filters, const ExecRequest& request,
                 const ProfileOptions& options, ExecProfile* profile) override;

  // Forgets every cached shard and frees its device memory.
  void ClearCache() override;

  GpuPathCounts path_counts() const;
  // Bytes of device memory held by cached shards (their pools' slabs, norms and slab tables, and
  // their page tables, at capacity).
  uint64_t resident_bytes() const;
  // Rows uploaded from the host since creation (tests check appends upload only new rows).
  uint64_t uploaded_rows() const;

 private:
  struct State;
  struct Batch;
  explicit GpuExecutor(std::unique_ptr<State> state);
  // REQUIRES for the three below: state_->mu held.
  Status Prepare(const ShardView& shard, const BatchFilters& filters, const ExecRequest& request,
                 Batch* batch);
  // One run of the device part (and its rerun on the full path after an overflow); *ms gets
  // its device milliseconds.
  Status RunTimed(Batch* batch, bool stages, float* ms);
  Status Assemble(const Batch& batch, const ShardView& shard, const BatchFilters& filters,
                  const ExecRequest& request, ExecResult* result) const;

  std::unique_ptr<State> state_;
};

}  // namespace sieve::gpu

#endif  // SIEVE_GPU_GPU_EXECUTOR_H_
