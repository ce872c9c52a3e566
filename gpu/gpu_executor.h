// Copyright 2026 The Sieve Authors.
//
// GpuExecutor runs one shard's share of a query batch on a CUDA device, by the SDDMM, gather or
// dense path the planner chose. Host-only header: no CUDA or RAFT type appears here.
//
// Device residency: the first Search of a shard (ShardView::key) uploads its vectors (float32,
// or float16 when ShardView::dtype says so) and computes their squared norms on the device;
// both stay there. Each resident shard owns a PagePool (threshold_select.h) of 256 MiB slabs
// and takes its pages in order, so row r is slot r % 64 of page r / 64 (the shard's block table
// is the identity). A later Search whose generation changed and whose rows grew takes more
// pages and uploads only the new rows: resident rows never move (slabs are never reallocated;
// only the pool's squared norms, 1/(64·dim) of the data, and its small slab table are copied
// device to device as the pool grows). Kernels address a row through the slab table; cuBLAS
// tiles over resident rows end at slab ends. A snapshot with fewer rows than are resident,
// same generation, uses a prefix. A shard whose dim or dtype changed, or whose generation
// changed while its rows shrank, is reloaded in full.
//
// Filters: each RowSet becomes a bitset in pinned host memory (RowSet::ToBitset, by containers)
// and is copied to the device: one bitset for the batch, or a bitmap of num_queries rows of
// ceil(rows / 32) words (query q's row starts at word q * words). Passing-row counts come from
// BatchFilters::passing_rows, never from the device.
//
// Paths (all exact for l2, ip and cosine, any k >= 1):
//   sddmm  — compacts the passing ids on the device (one list per batch, or one per query) and
//            computes only (query, passing row) distances with its own kernel, then top-k.
//   gather — compacts the passing ids (of the union, for a bitmap), gathers those rows into a
//            dense block, GEMM (cuBLAS; float16 rows use tensor cores with fp32 accumulation
//            and each query split into two halves, hi + lo, so that queries keep float32
//            precision), distances + per-query mask in one epilogue pass, top-k, ids mapped back.
//   dense  — tiled GEMM over every row; the epilogue that turns dot products into distances
//            also applies the filter (failing rows get the worst value), top-k per tile, tiles
//            merged by a second top-k.
//   Candidate selection (gather and dense over at least 65,536 and 64·k columns): the exact
//   path on a prefix sample of about sqrt(4·k·n) columns gives each query a threshold no
//   better than its true k-th best; then L2-sized tiles run GEMM (float16: high query halves
//   only) and one pass that finishes distances, applies the filter and keeps only rows whose
//   distance, within a proven error bound, can beat the threshold; kept rows are rescored
//   exactly and select_k takes the top k. A query keeping more rows than its list holds (about
//   4× the expected count) sends the chunk to the full path above, so results are exact either
//   way.
//   Threshold select (the dense path over float16 rows with dim % 8 == 0, dim <= 256, k <= 4096
//   and at least 65,536 rows, and the gather path over a bitset from 262,144 gathered rows up,
//   where it measured faster than candidate selection; SIEVE_GPU_THRESHOLD=0 turns it off,
//   SIEVE_GPU_THRESHOLD_GATHER=0 / 1 forces the gather case off / on at any size):
//   gpu::ThresholdSelect over the resident pages (or the gathered block as pages)
//   in up to four levels of growing row prefixes, each keeping the rows whose computed score
//   (float16 high query halves, tensor cores) beats the previous level's k-th best less twice
//   the error bound; no score matrix is written. The band under the last level's k-th best is
//   rescored exactly and select_k takes the top k. An overflowing level or band sends the
//   chunk to the full path. Results report select "threshold".
// Top-k is raft::matrix::select_k. Results are checked on the host: worst-value sentinels are
// dropped (fewer than k passing → fewer results), any other row must be in the query's set
// (Internal error otherwise), and each list is sorted best first, ties by smaller ordinal.
//
// Thread-safety: Search may be called from several threads; calls are serialized.

#ifndef SIEVE_GPU_GPU_EXECUTOR_H_
#define SIEVE_GPU_GPU_EXECUTOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "query/executor.h"
#include "sieve/status.h"

namespace sieve::gpu {

// How many searches each path has executed since the executor was created. Tests use it to
// prove which path ran.
struct GpuPathCounts {
  uint64_t sddmm = 0;
  uint64_t gather = 0;
  uint64_t dense = 0;
  // Query chunks of the gather and dense paths that ran candidate selection (an exact sample
  // threshold, then only rows that can beat it are rescored), and those of them that fell back
  // to the full path because a query kept more rows than its candidate list holds.
  uint64_t candidate_chunks = 0;
  uint64_t candidate_fallbacks = 0;
  // Dense query chunks that selected through gpu::ThresholdSelect (counted in candidate_chunks
  // too; their fallbacks in candidate_fallbacks).
  uint64_t threshold_chunks = 0;
};

class GpuExecutor final : public Executor {
 public:
  // Creates an executor on CUDA device `device`. Unavailable when no device can be used (the
  // message says why); ResourceExhausted when its buffers cannot be allocated.
  static Status Create(int device, std::unique_ptr<GpuExecutor>* out);
  ~GpuExecutor() override;

  GpuExecutor(const GpuExecutor&) = delete;
  GpuExecutor& operator=(const GpuExecutor&) = delete;

  // "gpu:<device name>".
  std::string name() const override;

  // See Executor::Search. InvalidArgument: k == 0, a path of kAuto, filters whose number does
  // not match the queries, a set reaching rows >= shard.rows, or a passing count that differs
  // from the set's cardinality. ResourceExhausted: device memory ran out (nothing is cached in
  // a half-updated state). Internal: a CUDA, cuBLAS or RAFT failure, named in the message.
  Status Search(const ShardView& shard, const BatchFilters& filters, const ExecRequest& request,
                ExecResult* result) override;

  GpuPathCounts path_counts() const;

  // Bytes of device memory held by cached shards (their pools' slabs, norms and slab tables, and
  // their page tables, at capacity).
  uint64_t resident_bytes() const;
  // Rows uploaded from the host since creation (tests check appends upload only new rows).
  uint64_t uploaded_rows() const;
  // Forgets every cached shard and frees its device memory.
  void ClearCache();

  // For benchmarks: prepares the request as Search does (residency, Roaring → pinned bitsets,
  // query preparation), then runs its device part `warmup` times untimed and `reps` times
  // timed with CUDA events; appends each timed run's milliseconds to `ms`. The device part is
  // everything from the filter and query upload (from pinned memory) through compaction,
  // distances and top-k to the download of the results. `result` receives the last run's
  // results, post-filtered and sorted as Search returns them.
  Status TimeDevicePart(const ShardView& shard, const BatchFilters& filters,
                        const ExecRequest& request, int warmup, int reps, std::vector<double>* ms,
                        ExecResult* result);

 private:
  struct State;
  explicit GpuExecutor(std::unique_ptr<State> state);
  Status Run(const ShardView& shard, const BatchFilters& filters, const ExecRequest& request,
             int warmup, int reps, std::vector<double>* ms, ExecResult* result);

  std::unique_ptr<State> state_;
};

}  // namespace sieve::gpu

#endif  // SIEVE_GPU_GPU_EXECUTOR_H_
