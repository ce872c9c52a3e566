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

Status CalibrateFirstUse(Executor* executor, const FirstUseCalibration& options,
                         const PlannerThresholds& base, PlannerThresholds* out,
                         FirstUseReport* report) {
  const auto t0 = std::chrono::steady_clock::now();
  SweepConfig config = FirstUseGrid(options.max_rows);
  config.time_limit_s = options.time_limit_s;
  std::vector<Cell> cells;
  bool stopped = false;
  Status first_failure;
  SIEVE_RETURN_IF_ERROR(RunSweep(executor, config, {}, &cells, &stopped, &first_failure));
  // A point counts when at least two of its paths were timed: the fit compares them.
  auto compared = [](const Cell& c) {
    int timed = 0;
    for (int p = 0; p < 3; ++p) timed += !c.failed[p] && c.reps[p] > 0;
    return timed >= 2;
  };
  if (std::none_of(cells.begin(), cells.end(), compared)) {
    if (!first_failure.ok()) {
      return Status::Internal("no point was timed; the first failure: " +
                              first_failure.ToString());
    }
    return Status::InvalidArgument("the first-use calibration timed no point within its " +
                                   std::to_string(options.time_limit_s) + " s");
  }
  FitReport fit;
  *out = FitThresholds(cells, config.queries, config.k, base, &fit);
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
