// Copyright 2026 The Sieve Authors.
//
// What `sieve calibrate` measures, shared by the CLI (tools/cli/calibrate_command.cc) and the
// Python package's Database.calibrate (python/src/module.cc): the executor it times and the
// grid of shapes and passing-row counts. The sweep and the fit are tools/bench/path_sweep.h.

#ifndef SIEVE_TOOLS_BENCH_CALIBRATION_H_
#define SIEVE_TOOLS_BENCH_CALIBRATION_H_

#include <memory>
#include <string>

#include "query/executor.h"
#include "sieve/db.h"
#include "sieve/status.h"
#include "tools/bench/path_sweep.h"

namespace sieve::calibration {

// The executor a calibration times: the CPU backend, or the GPU one (kAuto: the GPU when
// usable). *gpu tells which. Unavailable for kGpu without a usable GPU.
Status MakeExecutor(Device device, std::unique_ptr<Executor>* out, bool* gpu);

// The grid of a calibration on a GPU or CPU executor, full or quick (README "Calibration and
// the planner"): 100 queries, k = 64, float16, shared and independent per-query filters.
sweep::SweepConfig Grid(bool on_gpu, bool quick);

// "2026-11-29T23:56Z", the time a calibration's source names.
std::string UtcNow();

}  // namespace sieve::calibration

#endif  // SIEVE_TOOLS_BENCH_CALIBRATION_H_
