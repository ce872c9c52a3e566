// Copyright 2026 The Sieve Authors.
//
// CpuExecutor runs the three exact filtered-search paths on the host:
//
//   kSddmm   distances only for (query, passing row) pairs, with a hand-vectorized kernel
//            (picked for AVX-512 / AVX2 / baseline at run time) that reuses each row from cache
//            for every query of the batch.
//   kGather  compacts the passing rows (for a filter per query: the union of the queries'
//            rows) tile by tile into a dense block with their norms, one cblas_sgemm per tile,
//            then selects, testing each query's own set in bitmap mode.
//   kDense   tiled cblas_sgemm over every row of the shard; the filter is tested inside the
//            selection pass, so there is no separate mask pass.
//
// Distances from dot products: l2 = |q|² + |x|² − 2 q·x (clamped at 0), ip = q·x, cosine =
// 1 − q·x / (|q||x|) with cos = 0 (distance 1) when either norm is 0. Row norms come from
// ShardView::sq_norms. Top-k is exact (query/topk.h): ties go to the smaller ordinal.
//
// Parallelism: work is cut into tiles that worker threads take from a shared counter; each
// worker keeps its own top-k per query, merged exactly at the end. Workers call cblas_sgemm
// concurrently, so by default the constructor sets OpenBLAS to one thread (a process-wide
// setting; concurrent single-threaded sgemm calls were verified correct with Debian's
// libopenblas0-pthread 0.3.21).
//
// Thread-safety: Search may be called concurrently from many threads; an executor holds no
// per-search state (only the run counters, which are atomic).

#ifndef SIEVE_QUERY_CPU_EXECUTOR_H_
#define SIEVE_QUERY_CPU_EXECUTOR_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "query/executor.h"

namespace sieve {

struct CpuExecutorOptions {
  // Worker threads per search; 0 means std::thread::hardware_concurrency(). Small searches
  // use fewer. Default: 0.
  int threads = 0;
  // Rows per GEMM tile in the dense and gather paths; 0 picks a size that keeps the score tile
  // near 256 KiB (4096 rows for 16 queries). Default: 0.
  uint32_t tile_rows = 0;
  // Set OpenBLAS to one thread at construction so that workers may call sgemm concurrently.
  // Default: true.
  bool single_threaded_blas = true;
};

class CpuExecutor : public Executor {
 public:
  explicit CpuExecutor(const CpuExecutorOptions& options = CpuExecutorOptions());

  std::string name() const override { return "cpu"; }

  // Returns InvalidArgument for k == 0, null queries, a filter list that is neither one set
  // nor one per query (or holds a null set), path kAuto, an unknown metric, or a shard view
  // whose vectors or norms are missing; ResourceExhausted when host memory runs out.
  // result->neighbors gets one list per query; result->select is "heap"; result->stage_ms
  // gets this path's stages (see below), where worker stages are the mean per worker thread:
  //   sddmm:  "enumerate", "sddmm", "select", "merge"
  //   gather: "enumerate" (+ "bitset" per query in bitmap mode), "gather", "gemm", "select",
  //           "merge"
  //   dense:  "bitset" (when filtered), "gemm", "select", "merge"
  Status Search(const ShardView& shard, const BatchFilters& filters, const ExecRequest& request,
                ExecResult* result) override;

  // Host memory only (tiles, bitsets, gathered blocks, per-worker heaps, the result); an upper
  // bound that assumes every worker sees every passing row of every query. Same errors as
  // Search for invalid arguments.
  Status EstimateMemory(const ShardView& shard, const BatchFilters& filters,
                        const ExecRequest& request, MemoryEstimate* estimate) const override;
  // Wall time of each run (the CPU has no stages). See Executor::Profile.
  Status Profile(const ShardView& shard, const BatchFilters& filters, const ExecRequest& request,
                 const ProfileOptions& options, ExecProfile* profile) override;
  // Nothing is kept between searches.
  void ClearCache() override {}

  // How many Search calls ran `path` successfully (0 for kAuto). For tests that must prove
  // which path ran.
  uint64_t runs(SearchPath path) const;

  const CpuExecutorOptions& options() const { return options_; }

 private:
  CpuExecutorOptions options_;
  std::atomic<uint64_t> runs_[4] = {};
};

}  // namespace sieve

#endif  // SIEVE_QUERY_CPU_EXECUTOR_H_
