// Copyright 2026 The Sieve Authors.

#include "query/calibrate/calibration.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "query/calibrate/grid.h"
#include "query/calibrate/records.h"
#include "query/calibrate/score.h"
#include "query/planner.h"

namespace sieve::calibrate {

namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::ordered_json;

json PenaltyJson(const Penalty& p) {
  json j;
  j["points"] = p.points;
  j["mean"] = p.mean;
  j["p90"] = p.p90;
  j["worst"] = p.worst;
  if (p.lower_bounds) j["lower_bounds"] = p.lower_bounds;
  return j;
}

}  // namespace

Status Calibrate(Executor* executor, const SweepConfig& config, const PlannerRule& base,
                 const std::string& caller, bool note_cut,
                 const std::function<void(const std::string&)>& progress, Calibration* out) {
  const auto t0 = Clock::now();
  out->device = executor->name();
  out->base = base;
  out->queries = config.queries;
  out->k = config.k;
  out->cells.clear();
  bool stopped = false;
  Status first_failure;
  SIEVE_RETURN_IF_ERROR(
      RunSweep(executor, config, progress, &out->cells, &stopped, &first_failure));
  // A point counts when at least two of its paths were timed: the fit compares them.
  auto compared = [](const Cell& c) {
    int timed = 0;
    for (int p = 0; p < 3; ++p) timed += !c.failed[p] && c.reps[p] > 0;
    return timed >= 2;
  };
  if (std::none_of(out->cells.begin(), out->cells.end(), compared)) {
    if (!first_failure.ok()) {
      return Status::Internal("no point was timed; the first failure: " + first_failure.ToString());
    }
    return Status::InvalidArgument("the calibration timed no point within its " +
                                   std::to_string(config.time_limit_s) + " s");
  }
  out->thresholds = FitThresholds(out->cells, config.queries, config.k, base, &out->fit);
  out->complete = !stopped;
  out->seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  char source[512];
  std::snprintf(source, sizeof(source), "calibrated %s on %s (%s, %zu points%s, %.0f s)",
                UtcNow().c_str(), out->device.c_str(), caller.c_str(), out->cells.size(),
                note_cut && stopped ? ", cut by its time limit" : "", out->seconds);
  out->thresholds.source = source;
  return Status::OK();
}

Status Refit(const std::string& path, bool gpu, Calibration* out) {
  const auto t0 = Clock::now();
  out->queries = 100;
  out->k = 64;
  out->cells.clear();
  out->device.clear();
  SIEVE_RETURN_IF_ERROR(ReadCells(path, &out->cells, &out->device, &out->queries, &out->k));
  if (out->cells.empty()) return Status::InvalidArgument("no points to refit");
  if (out->device.empty()) out->device = gpu ? "gpu" : "cpu";
  out->base = PlannerRule::DefaultsFor(out->device);
  out->thresholds = FitThresholds(out->cells, out->queries, out->k, out->base, &out->fit);
  out->complete = true;
  out->seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  char source[512];
  std::snprintf(source, sizeof(source), "refitted %s to the %zu points of %s", UtcNow().c_str(),
                out->cells.size(), path.c_str());
  out->thresholds.source = source;
  return Status::OK();
}

std::string SummaryJson(const Calibration& c, bool stored) {
  json out;
  out["device"] = c.device;
  out["stored"] = stored;
  out["seconds"] = std::round(c.seconds * 10) / 10;
  out["complete"] = c.complete;
  out["thresholds"] = json::parse(c.thresholds.ToJson());
  const FitReport& report = c.fit;
  json fit;
  fit["gather_form"] =
      "(1 - gather_min_rows/rows) * min(gather_scale/sqrt(dim), gather_max_fraction * "
      "(1e6/max(rows,1e6))^(gather_rows_exponent * (128/dim)^gather_rows_dim_exponent))";
  fit["log_rms"] = report.fit_log_rms;
  fit["sddmm_form"] = "sddmm_max_rows * (128/dim)^sddmm_dim_exponent";
  fit["sddmm_series"] = report.sddmm_series;
  fit["sddmm_dims"] = report.sddmm_dims;
  fit["sddmm_log_rms"] = report.sddmm_log_rms;
  fit["bitmap_sddmm_form"] =
      "bitmap_sddmm_base_rows + bitmap_sddmm_max_fraction * (1e6/rows)^bitmap_sddmm_rows_exponent "
      "* (128/dim)^bitmap_sddmm_dim_exponent * rows";
  fit["bitmap_sddmm_series"] = report.bitmap_sddmm_series;
  fit["bitmap_sddmm_log_rms"] = report.bitmap_sddmm_log_rms;
  json series = json::array();
  for (const auto& fs : report.series) {
    json j;
    j["mode"] = fs.per_query ? "bitmap" : "bitset";
    if (fs.per_query) j["overlap"] = OverlapName(fs.overlap);
    j["rows"] = fs.rows;
    j["dim"] = fs.dim;
    j["sddmm_crossover_rows"] = std::round(fs.sddmm_rows);
    j["sddmm_censored"] = fs.sddmm_censored;
    j[fs.per_query ? "gather_crossover_union_fraction" : "gather_crossover_fraction"] =
        fs.gather_fraction;
    j["gather_censored"] = fs.gather_censored;
    if (!fs.per_query) {
      j["model_fraction"] = fs.model_fraction;
      j["model_sddmm_rows"] = std::round(fs.model_sddmm_rows);
    }
    series.push_back(j);
  }
  fit["series"] = series;
  out["fit"] = fit;
  json pen;
  for (bool pq : {false, true}) {
    json m;
    m["fitted"] = PenaltyJson(Score(c.cells, pq, c.queries, c.k, [&](const PlanInput& in) {
      return ChoosePath(c.thresholds, in);
    }));
    m["defaults"] = PenaltyJson(Score(c.cells, pq, c.queries, c.k,
                                      [&](const PlanInput& in) { return ChoosePath(c.base, in); }));
    pen[pq ? "bitmap" : "bitset"] = m;
  }
  out["penalty_in_sample"] = pen;
  json points = json::array();
  for (const auto& cell : c.cells) points.push_back(CellJson(cell));
  out["points"] = points;
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace sieve::calibrate
