// Copyright 2026 The Sieve Authors.
//
// The one calibration recipe: time an executor's paths over a grid, fit the planner
// thresholds to the timings, name where they came from, and summarize the fit. DB::Calibrate
// (engine/calibrate.cc), DB::RefitCalibration and a GPU's first-use calibration
// (engine/device_thresholds.cc) all run it; the engine decides which executor, which grid and
// whether to store the result.

#ifndef SIEVE_QUERY_CALIBRATE_CALIBRATION_H_
#define SIEVE_QUERY_CALIBRATE_CALIBRATION_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "query/calibrate/cell.h"
#include "query/calibrate/fit.h"
#include "query/calibrate/sweep.h"
#include "query/executor.h"
#include "sieve/db.h"
#include "sieve/status.h"

namespace sieve::calibrate {

// A fit and what it was fitted to.
struct Calibration {
  std::string device;            // the executor's name
  PlannerRule base;        // what the cells could not settle came from
  PlannerRule thresholds;  // the fit, its source set
  FitReport fit;
  std::vector<Cell> cells;
  uint32_t queries = 0;
  uint32_t k = 0;
  double seconds = 0;    // the sweep and the fit
  bool complete = true;  // the sweep measured its whole grid within its time limit
};

// Times `executor` over `config` (RunSweep, `progress` as there) and fits thresholds to the
// cells from `base`. The source reads "calibrated <time> on <device> (<caller>, <n> points,
// <s> s)", with ", cut by its time limit" after the points when `note_cut` and the time limit
// cut the sweep. InvalidArgument when no point had two paths timed (the fit compares them)
// and no path failed; Internal naming the first failure when paths failed instead; the
// executor's errors as RunSweep returns them.
Status Calibrate(Executor* executor, const SweepConfig& config, const PlannerRule& base,
                 const std::string& caller, bool note_cut,
                 const std::function<void(const std::string&)>& progress, Calibration* out);

// Fits thresholds to the cells recorded in `path` (ReadCells), from DefaultsFor the recorded
// device (without one: "cpu" when !gpu, else "gpu"); the source reads "refitted <time> to the
// <n> points of <path>". ReadCells' errors; InvalidArgument when the file holds no point.
Status Refit(const std::string& path, bool gpu, Calibration* out);

// The JSON summary `sieve calibrate` prints (CalibrateReport::summary_json): device, stored,
// seconds, complete, thresholds, fit, penalty_in_sample, points.
std::string SummaryJson(const Calibration& c, bool stored);

}  // namespace sieve::calibrate

#endif  // SIEVE_QUERY_CALIBRATE_CALIBRATION_H_
