// Copyright 2026 The Sieve Authors.

#include "tools/cli/calibrate_command.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "engine/executors.h"
#include "query/planner.h"
#include "sieve/db.h"
#include "query/calibrate/fit.h"
#include "query/calibrate/grid.h"
#include "query/calibrate/records.h"
#include "query/calibrate/score.h"
#include "query/calibrate/sweep.h"
#include "tools/cli/cli_util.h"
#include "tools/cli/flags.h"

namespace sieve::cli {

namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::ordered_json;

const char kCalibrateUsage[] =
    "usage: sieve calibrate DB [--device auto|cpu|gpu] [--quick] [--rows-list N,...]\n"
    "                          [--dims D,...] [--queries Q] [--k K] [--dtype f16|f32]\n"
    "                          [--reps R] [--warmup W] [--time-limit-s S] [--dry-run]\n"
    "       sieve calibrate --refit FILE [--device cpu|gpu]\n"
    "Times the SDDMM, gather and dense paths of the device on synthetic uniform data over a\n"
    "grid of passing-row counts x rows x dims, for one shared filter (bitset) and per-query\n"
    "filters of varied overlap (bitmap), fits the planner thresholds and stores them in DB\n"
    "under the device's name; later searches on that device use them. Prints a JSON summary\n"
    "(thresholds, per-point winners, seconds) on stdout. --dry-run fits without storing;\n"
    "--time-limit-s stops the sweep early (before the next shape) and fits what was measured.\n"
    "--refit fits to the points recorded in FILE (a calibrate JSON summary or a bench --csv\n"
    "file) instead of timing anything, and prints the summary without storing it (no DB);\n"
    "the base thresholds are the --device's defaults (auto: the summary's device, else gpu).\n"
    "Defaults: queries 100, k 64, dtype f16; the grid depends on the device and --quick.\n";

const char kBenchUsage[] =
    "usage: sieve bench [--device auto|cpu|gpu] [--rows-list N,...] [--dims D,...]\n"
    "                   [--fractions F,...] [--queries 100] [--k 64] [--dtype f16|f32]\n"
    "                   [--mode bitset|bitmap|both] [--overlaps shared,independent,half]\n"
    "                   [--csv FILE] [--db DB] [--reps R] [--warmup W] [--budget-ms MS]\n"
    "                   [--max-gb GB] [--time-limit-s S]\n"
    "The published method's sweep: every path timed at every point (median), the fastest as the\n"
    "oracle, and the penalty (mean, p90, worst) of four rules: the old cuVS rule, cuVS 26.10's,\n"
    "Sieve's defaults and Sieve calibrated (the thresholds stored in --db for this device; "
    "without\n"
    "--db, or with none stored, a fit on this sweep itself, marked in-sample).\n"
    "Defaults: rows 200000,1000000,3000000,10000000; dims 128,256,512,1024; fractions\n"
    "0.0001..0.6 (12 points); f16, l2, k 64, 100 queries; both modes, overlaps\n"
    "shared,independent.\n";

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

template <typename T>
Status ParseList(const Flags& flags, const std::string& name, double lo, double hi,
                 std::vector<T>* out) {
  if (!flags.Has(name)) return Status::OK();
  out->clear();
  for (const std::string& item : SplitList(flags.Get(name))) {
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (end == item.c_str() || *end != '\0' || !(v >= lo && v <= hi)) {
      return Status::InvalidArgument("--" + name + ": '" + item + "' is not a number in [" +
                                     std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    out->push_back(static_cast<T>(v));
  }
  if (out->empty()) return Status::InvalidArgument("--" + name + " is empty");
  return Status::OK();
}

// The executor a sweep times, resolved from --device as every search resolves it.
Status MakeExecutor(Device device, Executors* executors, Executor** out, bool* gpu) {
  Device resolved = Device::kCpu;
  SIEVE_RETURN_IF_ERROR(executors->Resolve(device, out, &resolved));
  *gpu = resolved == Device::kGpu;
  return Status::OK();
}

// Options shared by both commands: shape, dtype, repetitions.
Status ParseCommon(const Flags& flags, calibrate::SweepConfig* c) {
  Status s = ParseList(flags, "rows-list", 1, 4294967295.0, &c->rows_list);
  if (s.ok()) s = ParseList(flags, "dims", 1, 65536, &c->dims);
  long long v = 0;
  if (s.ok() && flags.Has("queries")) {
    s = flags.GetInt("queries", 100, 1, 100000, &v);
    c->queries = static_cast<uint32_t>(v);
  }
  if (s.ok() && flags.Has("k")) {
    s = flags.GetInt("k", 64, 1, 1000000, &v);
    c->k = static_cast<uint32_t>(v);
  }
  if (s.ok() && flags.Has("reps")) {
    s = flags.GetInt("reps", 15, 1, 100000, &v);
    c->max_reps = static_cast<int>(v);
    c->min_reps = std::min(c->min_reps, c->max_reps);
  }
  if (s.ok() && flags.Has("warmup")) {
    s = flags.GetInt("warmup", 2, 0, 100000, &v);
    c->warmup = static_cast<int>(v);
  }
  if (s.ok() && flags.Has("time-limit-s")) {
    std::vector<double> lim;
    s = ParseList(flags, "time-limit-s", 0, 1e7, &lim);
    if (s.ok()) c->time_limit_s = lim[0];
  }
  if (s.ok() && flags.Has("dtype")) {
    const std::string d = flags.Get("dtype");
    if (d == "f16")
      c->dtype = DType::kFloat16;
    else if (d == "f32")
      c->dtype = DType::kFloat32;
    else
      s = Status::InvalidArgument("--dtype is f16 or f32, got '" + d + "'");
  }
  return s;
}

json ThresholdsJson(const PlannerThresholds& t) {
  json j = json::parse(t.ToJson());
  return j;
}

json PenaltyJson(const calibrate::Penalty& p) {
  json j;
  j["points"] = p.points;
  j["mean"] = p.mean;
  j["p90"] = p.p90;
  j["worst"] = p.worst;
  if (p.lower_bounds) j["lower_bounds"] = p.lower_bounds;
  return j;
}

void Progress(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }

}  // namespace

int Calibrate(const Args& args) {
  Flags flags({"device", "rows-list", "dims", "queries", "k", "dtype", "reps", "warmup",
               "time-limit-s", "refit"},
              {"quick", "dry-run"});
  Status s = flags.Parse(args);
  if (flags.help()) {
    std::fputs(kCalibrateUsage, stdout);
    return 0;
  }
  const bool refit = flags.Has("refit");
  if (s.ok() && !refit && flags.positional().size() != 1) {
    s = Status::InvalidArgument(flags.positional().empty() ? "missing the database path"
                                                           : "one database path expected");
  }
  if (s.ok() && refit && !flags.positional().empty()) {
    s = Status::InvalidArgument("--refit stores nothing: no database path expected");
  }
  if (!s.ok()) {
    std::fprintf(stderr, "sieve calibrate: %s (see sieve calibrate --help)\n", s.message().c_str());
    return 1;
  }
  Device device = Device::kAuto;
  s = ParseDevice(flags.Get("device", "auto"), &device);
  if (!s.ok()) return Fail("calibrate", s);
  const bool quick = flags.Has("quick");
  const bool store = !refit && !flags.Has("dry-run");

  calibrate::SweepConfig c;
  c.queries = 100;
  c.k = 64;
  std::vector<calibrate::Cell> cells;
  bool partial = false;
  bool on_gpu = false;
  std::string name;
  std::unique_ptr<DB> db;
  auto t0 = Clock::now();
  if (refit) {
    s = calibrate::ReadCells(flags.Get("refit"), &cells, &name, &c.queries, &c.k);
    if (!s.ok()) return Fail("calibrate", s);
    if (cells.empty()) return Fail("calibrate", Status::InvalidArgument("no points to refit"));
    on_gpu = device == Device::kGpu || (device == Device::kAuto && name.rfind("cpu", 0) != 0);
    if (name.empty()) name = on_gpu ? "gpu" : "cpu";
  } else {
    Executors executors;
    Executor* executor = nullptr;
    s = MakeExecutor(device, &executors, &executor, &on_gpu);
    if (!s.ok()) return Fail("calibrate", s);

    c = calibrate::Grid(on_gpu, quick);
    s = ParseCommon(flags, &c);
    if (!s.ok()) return Fail("calibrate", s);

    s = OpenDb(flags.positional()[0], OpenFor::kWrite, &db);
    if (!s.ok()) return Fail("calibrate", s);

    name = executor->name();
    std::fprintf(stderr, "calibrating %s%s: %zu rows x %zu dims, %u queries, k=%u, %s\n",
                 name.c_str(), quick ? " (quick)" : "", c.rows_list.size(), c.dims.size(),
                 c.queries, c.k, c.dtype == DType::kFloat16 ? "f16" : "f32");
    t0 = Clock::now();
    s = calibrate::RunSweep(executor, c, Progress, &cells, &partial);
    if (!s.ok()) return Fail("calibrate", s);
    if (cells.empty()) return Fail("calibrate", Status::InvalidArgument("the grid has no points"));
  }

  const PlannerThresholds defaults = PlannerThresholds::DefaultsFor(name);
  calibrate::FitReport report;
  PlannerThresholds fitted = calibrate::FitThresholds(cells, c.queries, c.k, defaults, &report);
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  char src[256];
  if (refit) {
    std::snprintf(src, sizeof(src), "refitted %s to the %zu points of %s",
                  calibrate::UtcNow().c_str(), cells.size(), flags.Get("refit").c_str());
  } else {
    std::snprintf(src, sizeof(src), "calibrated %s on %s (sieve calibrate%s, %zu points, %.0f s)",
                  calibrate::UtcNow().c_str(), name.c_str(), quick ? " --quick" : "",
                  cells.size(), seconds);
  }
  fitted.source = src;
  if (store) {
    s = db->PutPlannerThresholds(name, fitted);
    if (!s.ok()) return Fail("calibrate", s);
  }

  json out;
  out["device"] = name;
  out["stored"] = store;
  out["seconds"] = std::round(seconds * 10) / 10;
  out["complete"] = !partial;
  out["thresholds"] = ThresholdsJson(fitted);
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
    if (fs.per_query) j["overlap"] = calibrate::OverlapName(fs.overlap);
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
    m["fitted"] = PenaltyJson(calibrate::Score(
        cells, pq, c.queries, c.k, [&](const PlanInput& in) { return ChoosePath(fitted, in); }));
    m["defaults"] = PenaltyJson(calibrate::Score(
        cells, pq, c.queries, c.k, [&](const PlanInput& in) { return ChoosePath(defaults, in); }));
    pen[pq ? "bitmap" : "bitset"] = m;
  }
  out["penalty_in_sample"] = pen;
  json points = json::array();
  for (const auto& cell : cells) points.push_back(calibrate::CellJson(cell));
  out["points"] = points;
  std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  std::fprintf(stderr, "%s %s in %.1f s: %s\n", store ? "stored" : "fitted (not stored)",
               name.c_str(), seconds, DescribeThresholds(fitted).c_str());
  return 0;
}

int Bench(const Args& args) {
  Flags flags({"device", "rows-list", "dims", "fractions", "queries", "k", "dtype", "mode",
               "overlaps", "csv", "db", "reps", "warmup", "budget-ms", "max-gb", "time-limit-s"},
              {});
  Status s = flags.Parse(args);
  if (flags.help()) {
    std::fputs(kBenchUsage, stdout);
    return 0;
  }
  if (s.ok() && !flags.positional().empty()) {
    s = Status::InvalidArgument("unexpected argument '" + flags.positional()[0] +
                                "' (the database is --db DB)");
  }
  if (!s.ok()) {
    std::fprintf(stderr, "sieve bench: %s (see sieve bench --help)\n", s.message().c_str());
    return 1;
  }
  Device device = Device::kAuto;
  s = ParseDevice(flags.Get("device", "auto"), &device);
  if (!s.ok()) return Fail("bench", s);
  calibrate::SweepConfig c;
  c.rows_list = {200000, 1000000, 3000000, 10000000};
  c.dims = {128, 256, 512, 1024};
  c.fractions = {0.0001, 0.0003, 0.001, 0.003, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.45, 0.6};
  c.queries = 100;
  c.k = 64;
  c.dtype = DType::kFloat16;
  c.warmup = 2;
  c.min_reps = 3;
  c.max_reps = 10;
  c.budget_ms = 30;
  c.max_shape_bytes = uint64_t{24} << 30;
  s = ParseCommon(flags, &c);
  if (s.ok()) s = ParseList(flags, "fractions", 1e-9, 1.0, &c.fractions);
  if (s.ok() && flags.Has("budget-ms")) {
    std::vector<double> b;
    s = ParseList(flags, "budget-ms", 0, 1e6, &b);
    if (s.ok()) c.budget_ms = b[0];
  }
  if (s.ok() && flags.Has("max-gb")) {
    std::vector<double> b;
    s = ParseList(flags, "max-gb", 0, 1e6, &b);
    if (s.ok()) c.max_shape_bytes = static_cast<uint64_t>(b[0] * 1e9);
  }
  const std::string mode = flags.Get("mode", "both");
  if (s.ok()) {
    if (mode == "bitset")
      c.bitmap = false;
    else if (mode == "bitmap")
      c.bitset = false;
    else if (mode != "both")
      s = Status::InvalidArgument("--mode is bitset, bitmap or both");
  }
  if (s.ok() && flags.Has("overlaps")) {
    c.overlaps.clear();
    for (const std::string& o : SplitList(flags.Get("overlaps"))) {
      calibrate::Overlap ov;
      s = calibrate::ParseOverlap(o, &ov);
      if (!s.ok()) break;
      c.overlaps.push_back(ov);
    }
  }
  if (!s.ok()) return Fail("bench", s);

  Executors executors;
  Executor* executor = nullptr;
  bool on_gpu = false;
  s = MakeExecutor(device, &executors, &executor, &on_gpu);
  if (!s.ok()) return Fail("bench", s);
  const std::string name = executor->name();
  const PlannerThresholds defaults = PlannerThresholds::DefaultsFor(name);
  PlannerThresholds calibrated;
  bool have_calibrated = false;
  if (flags.Has("db")) {
    std::unique_ptr<DB> db;
    s = OpenDb(flags.Get("db"), OpenFor::kRead, &db);
    std::string stored_name;
    // The stored thresholds of exactly this device (not the DB's own choice of device).
    if (s.ok()) {
      s = db->GetPlannerThresholds(on_gpu ? Device::kGpu : Device::kCpu, &calibrated, &stored_name);
    }
    if (!s.ok()) return Fail("bench", s);
    have_calibrated = calibrated.source.rfind("calibrated", 0) == 0;
    if (!have_calibrated) {
      std::fprintf(stderr, "bench: %s holds no calibration for %s; calibrated = in-sample fit\n",
                   flags.Get("db").c_str(), name.c_str());
    }
  }
  std::fprintf(stderr, "bench on %s: %zu rows x %zu dims x %zu fractions, %u queries, k=%u, %s\n",
               name.c_str(), c.rows_list.size(), c.dims.size(), c.fractions.size(), c.queries, c.k,
               c.dtype == DType::kFloat16 ? "f16" : "f32");
  auto t0 = Clock::now();
  std::vector<calibrate::Cell> cells;
  bool partial = false;
  s = calibrate::RunSweep(executor, c, Progress, &cells, &partial);
  if (!s.ok()) return Fail("bench", s);
  std::string calibrated_label = "Sieve calibrated";
  if (!have_calibrated) {
    calibrated = calibrate::FitThresholds(cells, c.queries, c.k, defaults, nullptr);
    calibrated.source = "in-sample fit of this sweep on " + name;
    calibrated_label = "Sieve calibrated (in-sample fit)";
  }
  const PlannerThresholds cuvs = Cuvs2610Thresholds();
  std::vector<std::pair<std::string, calibrate::Rule>> rules = {
      {"old_cuvs", [](const PlanInput& in) { return ChooseOldCuvsPath(in); }},
      {"cuvs_2610", [&](const PlanInput& in) { return ChoosePath(cuvs, in); }},
      {"sieve_defaults", [&](const PlanInput& in) { return ChoosePath(defaults, in); }},
      {"sieve_calibrated", [&](const PlanInput& in) { return ChoosePath(calibrated, in); }},
  };
  const char* labels[] = {
      "old cuVS (sparsity < 0.9 -> dense)", "cuVS 26.10",
      !on_gpu                                   ? "Sieve defaults (CPU)"
      : defaults.source.rfind("shipped", 0) == 0 ? "Sieve defaults (shipped for this device)"
                                                 : "Sieve defaults (cuVS 26.10, SDDMM bound x 128/dim)",
      calibrated_label.c_str()};
  if (flags.Has("csv")) {
    s = calibrate::WriteCsv(flags.Get("csv"), cells, c, rules);
    if (!s.ok()) return Fail("bench", s);
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("# sieve bench on %s, %s, l2, k=%u, %u queries; %zu points in %.0f s\n", name.c_str(),
              c.dtype == DType::kFloat16 ? "f16" : "f32", c.k, c.queries, cells.size(), seconds);
  for (bool pq : {false, true}) {
    if ((pq && !c.bitmap) || (!pq && !c.bitset)) continue;
    std::printf("\n%s: penalty = chosen path's time / fastest path's time\n\n",
                pq ? "bitmap (per-query filters)" : "bitset (one filter)");
    std::printf("| rule | points | mean | p90 | worst |\n|---|---|---|---|---|\n");
    for (size_t r = 0; r < rules.size(); ++r) {
      calibrate::Penalty p = calibrate::Score(cells, pq, c.queries, c.k, rules[r].second);
      std::printf("| %s | %zu | %.3fx | %.3fx | %.2fx%s |\n", labels[r], p.points, p.mean, p.p90,
                  p.worst, p.lower_bounds ? " (lower bound)" : "");
    }
  }
  std::printf("\ncalibrated thresholds: %s\n", calibrated.ToJson().c_str());
  size_t disagree = 0;
  for (const auto& cell : cells) disagree += !cell.results_agree;
  if (disagree) std::printf("WARNING: the paths disagreed on %zu points\n", disagree);
  std::fflush(stdout);
  return 0;
}

}  // namespace sieve::cli
