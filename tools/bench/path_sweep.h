// Copyright 2026 The Sieve Authors.
//
// The path sweep behind `sieve calibrate` and `sieve bench`: times the SDDMM, gather and dense
// paths of one executor on synthetic shards (uniform random vectors in [-1, 1), float16-rounded
// for f16) over a grid of rows × dims × passing-row counts, for one filter shared by the batch
// (bitset) and for per-query filters (bitmap) of varied overlap; fits the planner thresholds to
// the timings; scores planner rules against the fastest path of every point.
//
// Timing: Executor::Profile, i.e. on the GPU CUDA events around the device part after warm-up,
// on the CPU wall time around Search (synchronous: it returns the results on the host). Each path of each point
// runs `warmup` untimed times, then one timed run sets how many more fit in the per-path time
// budget (between min_reps and max_reps); the median is kept. A path that was at least
// prune_factor × slower than the fastest path at a smaller count of the same series is not run
// again at larger counts (its cost only grows with the count): its last time is kept as a lower
// bound and marked pruned, and it can never be the fastest.
//
// Not thread-safe; one sweep at a time per executor.

#ifndef SIEVE_TOOLS_BENCH_PATH_SWEEP_H_
#define SIEVE_TOOLS_BENCH_PATH_SWEEP_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "query/executor.h"
#include "query/planner.h"
#include "sieve/db.h"
#include "sieve/status.h"

namespace sieve::sweep {

// How the per-query filters of a bitmap point overlap: every query the same set, each its own
// independent random set, or half shared and half its own.
enum class Overlap : uint8_t { kShared = 0, kIndependent = 1, kHalf = 2 };
const char* OverlapName(Overlap o);
Status ParseOverlap(const std::string& text, Overlap* out);

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
  uint64_t seed = 1;
  // Stop before the next shape or series once this many seconds have passed since the sweep
  // began, keeping the cells measured so far (RunSweep sets *stopped_early). 0: no limit.
  double time_limit_s = 0;
};

// One point: a shape, a filter mode and a passing-row count, with every path's time.
struct Cell {
  uint64_t rows = 0;
  uint32_t dim = 0;
  bool per_query = false;
  Overlap overlap = Overlap::kShared;  // bitmap only
  uint64_t passing = 0;                // bitset: the set's count; bitmap: the mean per-query count
  uint64_t union_rows = 0;             // bitmap: |union of the queries' sets|; bitset: = passing
  uint64_t max_passing = 0;            // bitmap: the largest per-query count; bitset: = passing
  double ms[3] = {0, 0, 0};            // sddmm, gather, dense (median); a lower bound when pruned
  bool pruned[3] = {false, false, false};
  bool failed[3] = {false, false, false};
  int reps[3] = {0, 0, 0};
  bool results_agree = true;  // every path returned the same counts and best distances

  double fraction() const { return rows ? static_cast<double>(passing) / rows : 0; }
  double union_fraction() const { return rows ? static_cast<double>(union_rows) / rows : 0; }
  // The fastest path that ran (0 sddmm, 1 gather, 2 dense), and its time.
  int best() const;
  double best_ms() const { return ms[best()]; }
  PlanInput plan_input(uint32_t queries, uint32_t k) const;
};

int PathIndex(SearchPath p);  // kSddmm 0, kGather 1, kDense 2
SearchPath PathAt(int i);

// Runs the sweep. `progress` (may be empty) gets one line per shape. Unavailable / NotSupported
// / ResourceExhausted from the executor end the sweep; shapes skipped for max_shape_bytes are
// reported through `progress`.
// `stopped_early` (may be null) tells whether config.time_limit_s cut the sweep short.
Status RunSweep(Executor* executor, const SweepConfig& config,
                const std::function<void(const std::string&)>& progress, std::vector<Cell>* cells,
                bool* stopped_early = nullptr);

// What the fit found, beside the thresholds.
struct FitReport {
  // Per series (rows, dim, mode, overlap): where SDDMM stopped beating the better of gather and
  // dense (passing rows) and where gather stopped beating dense (fraction); censored = the
  // crossover lies outside the measured range (the value is the range's end).
  struct Series {
    uint64_t rows = 0;
    uint32_t dim = 0;
    bool per_query = false;
    Overlap overlap = Overlap::kShared;
    double sddmm_rows = 0;
    int sddmm_censored = 0;      // -1: lost from the first count, +1: never lost, 0: bracketed
    double gather_fraction = 0;  // bitset: passing fraction; bitmap: union fraction
    int gather_censored = 0;
    double model_fraction = 0;    // the fitted rule's gather bound at (rows, dim) (bitset)
    double model_sddmm_rows = 0;  // the fitted rule's SDDMM bound at dim (bitset)
  };
  std::vector<Series> series;
  double fit_log_rms = 0;  // RMS of log(model / measured) over bracketed bitset series (gather)
  // The bitset SDDMM bound's fit: how many bracketed series at how many distinct dims, and the
  // RMS of log(model / measured crossover) over them.
  int sddmm_series = 0;
  int sddmm_dims = 0;
  double sddmm_log_rms = 0;
  // The bitmap SDDMM-vs-dense bound's fit: series (overlap, rows, dim) whose alternative is
  // dense, and the RMS of log(model / measured crossover) over the bracketed ones.
  int bitmap_sddmm_series = 0;
  double bitmap_sddmm_log_rms = 0;
};

// Fits thresholds to the cells (see README "Calibration and the planner"):
//   sddmm_max_rows, sddmm_dim_exponent
//                         log(crossover) = log(sddmm_max_rows) + e · log(128 / dim) by least
//                         squares over the bracketed bitset series' SDDMM crossovers (10% tie),
//                         e clamped to [0, 2]; with fewer than two dims, e stays base's and the
//                         count is the log-median of the crossovers scaled to dim 128;
//   sddmm_max_fraction    1 (no bound), or the tightest per-series crossover fraction when
//                         that lowers the mean penalty over the bitset cells by > 3%;
//   gather_min_rows, gather_scale, gather_max_fraction
//                         cuVS's form by a grid search: first the mean log penalty over the
//                         bitset cells the bound decides (gather or dense), then, to settle
//                         what that leaves flat, the squared log error to the gather → dense
//                         crossovers of the series of at least 65,536 rows (censored series
//                         only count on the side they bound), ties toward cuVS's constants;
//   bitmap_union_gather, bitmap_gather_max_fraction, bitmap_gather_scale,
//   bitmap_gather_dim_exponent, bitmap_gather_rows_exponent
//                         on when the union gather beat dense by ≥ 10% in some cell; the
//                         bound log(scale) + a · log(dim / 128) + b · log(10^6 / rows) by
//                         least squares to the bracketed crossover union fractions of the
//                         series of at least 65,536 rows (a, b in [0, 2]), capped by the
//                         largest of them (or of the fractions where the gather still won at
//                         a series' end), when those span two dims and two shard sizes;
//                         else (scale 0) the median crossover union fraction at every shape;
//   bitmap_sddmm_max_share
//                         a grid search minimizing the mean log penalty over the bitmap cells
//                         whose alternative to SDDMM is the union gather;
//   bitmap_sddmm_base_rows, bitmap_sddmm_max_fraction
//                         base + fraction · rows fitted by a grid search on squared log error
//                         to the crossovers (largest per-query count where per-query SDDMM
//                         stops beating dense, 10% tie) of the bitmap series whose alternative
//                         is dense, censored series counting only on the side they bound;
//   bitmap_sddmm_max_rows no bound (UINT64_MAX): a count alone does not carry from one shard
//                         size to another.
// The share search takes, of the settings that reach the least loss, the one nearest (in log)
// to their log-centroid: the middle of the range the data allows, not an edge of it.
// `base` supplies whatever the cells cannot (a mode that was not swept).
PlannerThresholds FitThresholds(const std::vector<Cell>& cells, uint32_t queries, uint32_t k,
                                const PlannerThresholds& base, FitReport* report);

// Penalty of a rule over cells: chosen path's time / fastest path's time.
struct Penalty {
  size_t points = 0;
  double mean = 0, p90 = 0, worst = 0;
  size_t lower_bounds = 0;  // points where the chosen path was pruned (penalty is a lower bound)
};
using Rule = std::function<SearchPath(const PlanInput&)>;
Penalty Score(const std::vector<Cell>& cells, bool per_query, uint32_t queries, uint32_t k,
              const Rule& rule);

// CSV: one row per cell × path (header first), with the chosen path of each named rule.
Status WriteCsv(const std::string& path, const std::vector<Cell>& cells, const SweepConfig& config,
                const std::vector<std::pair<std::string, Rule>>& rules);

}  // namespace sieve::sweep

#endif  // SIEVE_TOOLS_BENCH_PATH_SWEEP_H_
