// Copyright 2026 The Sieve Authors.
//
// A GPU's first-use calibration (Options::first_use_calibration): the short sweep and fit that
// a DB runs on a device with neither a stored calibration nor shipped thresholds, before its
// first search there. The DB decides when, announces it and stores the result
// (query/db_impl.cc); this times and fits.

#ifndef SIEVE_QUERY_CALIBRATE_FIRST_USE_H_
#define SIEVE_QUERY_CALIBRATE_FIRST_USE_H_

#include <cstddef>
#include <cstdint>

#include "query/executor.h"
#include "sieve/db.h"
#include "sieve/status.h"

namespace sieve::calibrate {

struct FirstUseReport {
  size_t points = 0;     // cells measured
  double seconds = 0;    // the sweep and the fit
  bool complete = true;  // the sweep measured its whole grid within the time limit
};

// Times `executor` over FirstUseGrid(options.max_rows) (query/calibrate/grid.h), stopping at
// options.time_limit_s, and fits thresholds to it from `base` (what the cells cannot settle;
// with shards of at most 2M rows the fit leaves the gather cap without a fall with the rows);
// *out's source names the time, the device, the points and the seconds. InvalidArgument when
// the time limit left no point measured; the executor's errors as RunSweep returns them.
Status CalibrateFirstUse(Executor* executor, const FirstUseCalibration& options,
                         const PlannerThresholds& base, PlannerThresholds* out,
                         FirstUseReport* report);

}  // namespace sieve::calibrate

#endif  // SIEVE_QUERY_CALIBRATE_FIRST_USE_H_
