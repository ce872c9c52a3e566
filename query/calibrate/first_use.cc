// Copyright 2026 The Sieve Authors.

#include "query/calibrate/first_use.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "query/calibrate/fit.h"
#include "query/calibrate/grid.h"
#include "query/calibrate/sweep.h"

namespace sieve::calibrate {

namespace {

// The smallest shard whose timings may set the gather cap's fall with the rows.
constexpr uint64_t kFallMinRows = 5000000;

}  // namespace

Status CalibrateFirstUse(Executor* executor, const FirstUseCalibration& options,
                         const PlannerThresholds& base, PlannerThresholds* out,
                         FirstUseReport* report) {
  const auto t0 = std::chrono::steady_clock::now();
  SweepConfig config = FirstUseGrid(options.max_rows);
  config.time_limit_s = options.time_limit_s;
  std::vector<Cell> cells;
  bool stopped = false;
  std::string first_failure;  // RunSweep's line for the first path that failed
  auto progress = [&](const std::string& line) {
    if (first_failure.empty() && line.find(" failed at ") != std::string::npos) {
      first_failure = line.substr(line.find_first_not_of(' '));
    }
  };
  SIEVE_RETURN_IF_ERROR(RunSweep(executor, config, progress, &cells, &stopped));
  // A point counts when at least two of its paths were timed: the fit compares them.
  size_t timed = 0;
  for (const Cell& c : cells) {
    timed += (!c.failed[0] && c.reps[0] > 0) + (!c.failed[1] && c.reps[1] > 0) +
                     (!c.failed[2] && c.reps[2] > 0) >=
             2;
  }
  if (timed == 0) {
    if (!first_failure.empty()) return Status::Internal("no point was timed; " + first_failure);
    return Status::InvalidArgument("the first-use calibration timed no point within its " +
                                   std::to_string(options.time_limit_s) + " s");
  }
  FitReport fit;
  *out = FitThresholds(cells, config.queries, config.k, base, &fit);
  // The gather cap's fall with the rows, fitted on shards of a few million rows at most, would
  // be stretched over shards many times larger: past the grid the fall stays the base's.
  uint64_t largest = 0;
  for (const Cell& c : cells) largest = std::max(largest, c.rows);
  if (largest < kFallMinRows) {
    out->gather_rows_exponent = base.gather_rows_exponent;
    out->gather_rows_dim_exponent = base.gather_rows_dim_exponent;
  }
  report->points = cells.size();
  report->complete = !stopped;
  report->seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  char source[256];
  std::snprintf(source, sizeof(source),
                "calibrated %s on %s (first use, %zu points%s, %.0f s)", UtcNow().c_str(),
                executor->name().c_str(), report->points,
                report->complete ? "" : ", cut by its time limit", report->seconds);
  out->source = source;
  return Status::OK();
}

}  // namespace sieve::calibrate
