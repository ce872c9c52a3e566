// Copyright 2026 The Sieve Authors.
//
// The path sweep behind `sieve calibrate` and `sieve bench`: times the SDDMM, gather and dense
// paths of one executor on synthetic shards (uniform random vectors in [-1, 1), float16-rounded
// for f16) over a grid of rows × dims × passing-row counts, for one filter shared by the batch
// (bitset) and for per-query filters (bitmap) of varied overlap; fits the planner thresholds to
// the timings; scores planner rules against the fastest path of every point.
//
// Timing: Executor::Profile, i.e. on the GPU CUDA events around the device part after warm-up,
// on the CPU wall time around Search (synchronous: it returns the results on the host). Each path
// of each point runs `warmup` untimed times, then one timed run sets how many more fit in the
// per-path time budget (between min_reps and max_reps); the median is kept. A path that was at
// least prune_factor × slower than the fastest path at a smaller count of the same series is not
// run again at larger counts (its cost only grows with the count): its last time is kept as a lower
// bound and marked pruned, and it can never be the fastest.
//

#ifndef SIEVE_QUERY_CALIBRATE_SWEEP_H_
#define SIEVE_QUERY_CALIBRATE_SWEEP_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "query/executor.h"
#include "sieve/db.h"
#include "sieve/status.h"
#include "query/calibrate/cell.h"

namespace sieve::calibrate {

struct SweepConfig {
  std::vector<uint64_t> rows_list;
  std::vector<uint32_t> dims;
  // Passing-row counts per series, as fractions of rows (0 < f ≤ 1) and as absolute counts
  // (used where below rows). Merged, sorted, deduplicated per rows.
  std::vector<double> fractions;
  std::vector<uint64_t> counts;
  uint32_t queries = 100;
  uint32_t k = 64;
  DType dtype = DType::kFloat16;
  Metric metric = Metric::kL2;
  bool bitset = true;
  bool bitmap = true;
  std::vector<Overlap> overlaps = {Overlap::kShared, Overlap::kIndependent};
  int warmup = 2;
  int min_reps = 3;
  int max_reps = 15;
  double budget_ms = 150;  // per path per point, for the timed runs
  double prune_factor = 20;
  // Skip (rows, dim) shapes whose vectors would take more bytes than this on the device
  // (rows × dim × element size). 0: no limit.
  uint64_t max_shape_bytes = 0;
  // Time the per-query (bitmap) series only on shapes of at most this many bytes (their
  // filters cost the most to build and time). 0: no limit beyond max_shape_bytes.
  uint64_t bitmap_max_shape_bytes = 0;
  uint64_t seed = 1;
  // Stop before the next shape or series once this many seconds have passed since the sweep
  // began, keeping the cells measured so far (RunSweep sets *stopped_early). 0: no limit.
  double time_limit_s = 0;
};

// Runs the sweep. `progress` (may be empty) gets one line per shape. Unavailable / NotSupported
// / ResourceExhausted from the executor end the sweep; shapes skipped for max_shape_bytes are
// reported through `progress`.
// `stopped_early` (may be null) tells whether config.time_limit_s cut the sweep short;
// `first_failure` (may be null) gets the error of the first path that failed at a point (the
// point is kept, that path marked failed), OK when none did.
Status RunSweep(Executor* executor, const SweepConfig& config,
                const std::function<void(const std::string&)>& progress, std::vector<Cell>* cells,
                bool* stopped_early = nullptr, Status* first_failure = nullptr);

}  // namespace sieve::calibrate

#endif  // SIEVE_QUERY_CALIBRATE_SWEEP_H_
