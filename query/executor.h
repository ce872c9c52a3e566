// Copyright 2026 The Sieve Authors.
//
// The executor interface: what the planner hands a backend (CPU or GPU) to run one shard's
// share of a query batch. Host-only; no CUDA, RAFT or Roaring type appears here.
//
// Scores: every executor returns, per query, up to k (ordinal, distance) pairs sorted best
// first (query/topk.h BetterThan), where distance is as the metric defines it (l2: squared
// Euclidean, smaller better; ip: inner product, larger better; cosine: 1 - cos, smaller better).
// Ties are broken by the smaller ordinal. Only rows in the query's filter set are ever returned
// (DBImpl checks every result once); fewer than k pass → fewer results.

#ifndef SIEVE_QUERY_EXECUTOR_H_
#define SIEVE_QUERY_EXECUTOR_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "index/row_set.h"
#include "query/topk_plan.h"
#include "sieve/db.h"
#include "sieve/status.h"
#include "sieve/types.h"

namespace sieve {

// A read-only view of one shard's vectors at a snapshot of `rows` rows.
struct ShardView {
  uint64_t key = 0;         // identifies the (collection, shard) across calls, for caching
  uint64_t generation = 0;  // changes whenever rows are appended
  const float* vectors = nullptr;   // rows × dim, row-major float32
  const float* sq_norms = nullptr;  // rows squared L2 norms
  uint32_t rows = 0;
  uint32_t dim = 0;
  DType dtype = DType::kFloat32;  // float16: the float32 values above are exactly halves
  // Identifies the allocation the rows live in (VectorArena::lineage): rows of one lineage
  // only ever grow, so a cached copy of another lineage is no prefix of these.
  uint64_t lineage = 0;
  // At least the largest of sq_norms[0, rows) (VectorArena::max_sq_norm); infinite when not
  // known, which plans no float16 or TF32 products (PlanRequest reads sq_norms then).
  double max_sq_norm = std::numeric_limits<double>::infinity();
};

// The filters of one batch: one set shared by every query (bitset mode), or one per query
// (bitmap mode). Each set already excludes deleted rows and rows ≥ ShardView::rows. The caller
// has built every fact below (the planner needs them); executors use them as given and do not
// compute them again.
struct BatchFilters {
  std::vector<const RowSet*> sets;     // size 1 or num_queries; never null
  // REQUIRES: passing_rows[i] == sets[i]->Cardinality().
  std::vector<uint64_t> passing_rows;
  // Bitmap mode: the union of the sets, or null to have the executor build it where a path
  // needs it (the gather over a bitmap compacts the union).
  const RowSet* union_set = nullptr;
  bool per_query() const { return sets.size() > 1; }
};

struct ExecRequest {
  const float* queries = nullptr;  // num_queries × dim
  uint32_t num_queries = 0;
  uint32_t k = 0;
  Metric metric = Metric::kL2;
  SearchPath path = SearchPath::kDense;  // never kAuto: the planner has chosen
  // How the executor selects the top-k and multiplies (query/topk_plan.h): planned for this
  // executor (PlanRequest, or the engine's plan step); an executor refuses one it cannot carry
  // out.
  TopKPlan topk;
};

// What one Search call will allocate, computed from its arguments before it allocates.
struct MemoryEstimate {
  // The most host memory the call holds at once beyond its arguments, its result included.
  uint64_t host_bytes = 0;
  // Device memory the call allocates beyond what is already resident (vectors an earlier call
  // uploaded stay resident and are not counted again).
  uint64_t device_bytes = 0;
};

struct ExecResult {
  // Per query, up to k results, best first.
  std::vector<std::vector<std::pair<uint32_t, float>>> neighbors;
  // How the top-k was selected (TopKStrategyName: the plan's strategy, or "select_k" after a
  // candidate list overflowed) and the products it multiplied in (ProductsName).
  std::string select;
  std::string products;
  // The plan carried out with its sizes (TopKPlan::ToString), and what happened to it (an
  // overflow and the rerun), for explain.
  std::string select_plan;
  std::vector<std::pair<std::string, double>> stage_ms;  // executor-internal stages
};

// How Executor::Profile times a request.
struct ProfileOptions {
  int warmup = 2;  // untimed runs first
  int reps = 5;    // timed runs, at least 1
  // Also the device time of each stage of the last timed run (GPU; the CPU has none).
  bool stages = false;
};

struct ExecProfile {
  // Milliseconds of each timed run. GPU: device time (CUDA events) from the filter and query
  // upload through the download of the results; CPU: wall time of the search.
  std::vector<double> ms;
  // With ProfileOptions::stages: (stage, device milliseconds since the previous one) of the
  // last timed run, in order.
  std::vector<std::pair<std::string, double>> stages;
  ExecResult result;  // the last run's, as Search returns it
};

// InvalidArgument, naming the filter, unless `filters` holds one set or one per query
// (num_queries), none null, each within the shard's rows, with passing_rows[i] equal to its
// cardinality: what every executor checks before it sizes buffers from the counts.
Status ValidateFilters(const ShardView& shard, const BatchFilters& filters, uint32_t num_queries);

// What every executor checks of a request before it runs it, with the same codes everywhere
// (InvalidArgument): k >= 1; queries present; a chosen path (not kAuto); a metric and a dtype
// of their enums; a shard with a dim and, holding rows, vectors; and ValidateFilters. An
// executor adds only what is its own (the CPU executor needs the norms too; the GPU executor
// checks that the top-k plan is one it can carry out).
Status ValidateExecRequest(const ShardView& shard, const BatchFilters& filters,
                           const ExecRequest& request);

class Executor;

// What PlanTopK reads of a request on one shard (TopKInput): the path, metric, k and queries
// of `request`, the shard's dtype, dim and largest row norm (scanning shard.sq_norms when
// shard.max_sq_norm is not known), the columns the path selects among and whether the batch
// has a filter per query whose sets differ.
TopKInput TopKInputFor(const ShardView& shard, const BatchFilters& filters,
                       const ExecRequest& request);

// Plans request->topk for `executor` (PlanTopK over TopKInputFor): what the engine's plan step
// does, for callers that drive an executor themselves (calibration, benchmarks, tests).
void PlanRequest(const Executor& executor, const ShardView& shard, const BatchFilters& filters,
                 ExecRequest* request);

// Thread-safety: implementations may be called from several threads at once.
class Executor {
 public:
  virtual ~Executor() = default;
  // "cpu" or "gpu:<device name>".
  virtual std::string name() const = 0;
  // What this executor can carry out of a top-k plan (PlanTopK reads it). The base version is
  // the CPU's: the heap.
  virtual TopKAbilities topk_abilities() const { return TopKAbilities(); }
  // Runs the request on one shard. InvalidArgument for k == 0; NotSupported when the path
  // cannot honour the request (never silently ignoring the filter).
  virtual Status Search(const ShardView& shard, const BatchFilters& filters,
                        const ExecRequest& request, ExecResult* result) = 0;

  // What Search(shard, filters, request) would allocate, without allocating it (the planner
  // reserves it from Options::memory_budget_bytes before running the search). Never an
  // underestimate of what Search holds at once. Returns the errors Search would return for
  // invalid arguments, and ResourceExhausted (naming the sizes) when the device cannot hold
  // device_bytes. The base version counts the one allocation every backend makes, its result
  // (num_queries lists of up to min(k, passing rows) pairs), and no device memory: a backend
  // with scratch space or device buffers of its own must override it.
  virtual Status EstimateMemory(const ShardView& shard, const BatchFilters& filters,
                                const ExecRequest& request, MemoryEstimate* estimate) const;
  // Runs the request as Search does, options.warmup times untimed and options.reps times
  // timed (benchmarks and calibration). The same Status as Search, and InvalidArgument for
  // negative warmup or reps < 1.
  virtual Status Profile(const ShardView& shard, const BatchFilters& filters,
                         const ExecRequest& request, const ProfileOptions& options,
                         ExecProfile* profile) = 0;
  // Drops whatever the executor keeps between searches (a device copy of the shards), so that
  // memory is free for other work; later searches rebuild it.
  virtual void ClearCache() = 0;
  // Drops what the executor keeps of the shard whose ShardView::key is `key` (it was placed on
  // another device). The base version calls ClearCache(): an executor that can drop one shard
  // alone overrides it.
  virtual void EvictShard(uint64_t key) { ClearCache(); }
  // The memory of this executor's device that resident shards may fill, in bytes, or 0 when it
  // has none of its own or does not say (the CPU's; the base version). The engine places a
  // collection's shards over several devices so that each device's resident rows fit in it
  // (Options::device_memory_bytes overrides it).
  virtual uint64_t device_memory_bytes() const { return 0; }
};

}  // namespace sieve

#endif  // SIEVE_QUERY_EXECUTOR_H_
