// Copyright 2026 The Sieve Authors.
//
// DB::Calibrate and DB::RefitCalibration: the options checked, the device's executor and grid
// chosen, query/calibrate/calibration.h's recipe run, and its fit stored and reported.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "engine/db_impl.h"
#include "query/calibrate/calibration.h"
#include "query/calibrate/grid.h"
#include "query/planner.h"

namespace sieve {

namespace {

Status CheckCalibrateOptions(const CalibrateOptions& o) {
  auto bad = [](const std::string& what) {
    return Status::InvalidArgument("CalibrateOptions::" + what);
  };
  if (!(o.time_limit_s >= 0) || !std::isfinite(o.time_limit_s)) {
    return bad("time_limit_s must be finite and >= 0, got " + std::to_string(o.time_limit_s));
  }
  for (uint64_t rows : o.rows_list) {
    if (rows < 1 || rows > 4294967295ull) {
      return bad("rows_list: " + std::to_string(rows) + " is not in [1, 4294967295]");
    }
  }
  for (uint32_t dim : o.dims) {
    if (dim < 1 || dim > 65536) {
      return bad("dims: " + std::to_string(dim) + " is not in [1, 65536]");
    }
  }
  if (o.queries > 100000) return bad("queries must be at most 100000");
  if (o.k > 1000000) return bad("k must be at most 1000000");
  if (o.dtype != DType::kFloat16 && o.dtype != DType::kFloat32) return bad("dtype is f16 or f32");
  if (o.max_reps < 0 || o.max_reps > 100000) return bad("max_reps must be in [0, 100000]");
  if (o.warmup < -1 || o.warmup > 100000) return bad("warmup must be in [-1, 100000]");
  return Status::OK();
}

// The device's grid with the options' overrides.
calibrate::SweepConfig GridOf(const CalibrateOptions& o, bool gpu) {
  calibrate::SweepConfig c = calibrate::Grid(gpu, o.quick);
  if (!o.rows_list.empty()) c.rows_list = o.rows_list;
  if (!o.dims.empty()) c.dims = o.dims;
  if (o.queries > 0) c.queries = o.queries;
  if (o.k > 0) c.k = o.k;
  c.dtype = o.dtype;
  if (o.max_reps > 0) {
    c.max_reps = o.max_reps;
    c.min_reps = std::min(c.min_reps, c.max_reps);
  }
  if (o.warmup >= 0) c.warmup = o.warmup;
  c.time_limit_s = o.time_limit_s;
  return c;
}

void Report(const calibrate::Calibration& c, bool stored, CalibrateReport* report) {
  report->device = c.device;
  report->thresholds = ToThresholds(c.thresholds);
  report->stored = stored;
  report->seconds = c.seconds;
  report->points = c.cells.size();
  report->complete = c.complete;
  report->description = DescribeThresholds(c.thresholds);
  report->summary_json = calibrate::SummaryJson(c, stored);
}

}  // namespace

Status DBImpl::Calibrate(const CalibrateOptions& options, CalibrateReport* report) {
  SIEVE_RETURN_IF_ERROR(CheckCalibrateOptions(options));
  // Refused before the sweep rather than after it.
  if (options.store) SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly("calibrate (store)"));
  Executor* executor = nullptr;
  Device resolved = Device::kCpu;
  SIEVE_RETURN_IF_ERROR(executors_->Resolve(options.device, &executor, &resolved));
  const std::string name = executor->name();
  const calibrate::SweepConfig config = GridOf(options, resolved == Device::kGpu);
  if (options.progress) {
    char line[256];
    std::snprintf(line, sizeof(line), "calibrating %s%s: %zu rows x %zu dims, %u queries, k=%u, %s",
                  name.c_str(), options.quick ? " (quick)" : "", config.rows_list.size(),
                  config.dims.size(), config.queries, config.k,
                  config.dtype == DType::kFloat16 ? "f16" : "f32");
    options.progress(line);
  }
  calibrate::Calibration c;
  SIEVE_RETURN_IF_ERROR(calibrate::Calibrate(executor, config, PlannerRule::DefaultsFor(name),
                                             options.caller, /*note_cut=*/false, options.progress,
                                             &c));
  if (options.store) SIEVE_RETURN_IF_ERROR(StoreRule(name, c.thresholds));
  Report(c, options.store, report);
  return Status::OK();
}

Status DB::RefitCalibration(const std::string& records_path, Device device,
                            CalibrateReport* report) {
  calibrate::Calibration c;
  SIEVE_RETURN_IF_ERROR(calibrate::Refit(records_path, device != Device::kCpu, &c));
  Report(c, /*stored=*/false, report);
  return Status::OK();
}

}  // namespace sieve
