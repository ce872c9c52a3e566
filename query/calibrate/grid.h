// Copyright 2026 The Sieve Authors.
//
// What a calibration measures (DB::Calibrate, engine/calibrate.cc, behind `sieve calibrate`
// and Python's Database.calibrate; and a GPU's first use): the grid of shapes and passing-row
// counts, and the time a calibration's source names.

#ifndef SIEVE_QUERY_CALIBRATE_GRID_H_
#define SIEVE_QUERY_CALIBRATE_GRID_H_

#include <string>

#include "query/calibrate/sweep.h"

namespace sieve::calibrate {

// The grid of a calibration on a GPU or CPU executor, full or quick
// (docs/planner.md#sieve-calibrate): 100 queries, k = 64, float16, shared and independent
// per-query filters.
SweepConfig Grid(bool on_gpu, bool quick);

// The grid of a GPU's first-use calibration (Options::first_use_calibration): --quick's counts
// and fractions on shards of 8,192, 200,000 and 2,000,000 rows (those below max_rows, then
// max_rows itself when it is below 2,000,000) at dims 128 and 512, per-query series on shapes
// of up to 1 GB, with fewer repetitions.
SweepConfig FirstUseGrid(uint64_t max_rows);

// "2026-11-29T23:56Z", the time a calibration's source names.
std::string UtcNow();

}  // namespace sieve::calibrate

#endif  // SIEVE_QUERY_CALIBRATE_GRID_H_
