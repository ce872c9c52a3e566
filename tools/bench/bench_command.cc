// Copyright 2026 The Sieve Authors.
//
// `sieve bench` lives here rather than in tools/cli/: it is a measurement of the planner's
// rules, not a database operation, and reads the calibration internals (query/calibrate/,
// query/planner.h, engine/executors.h) that no public API exposes.

#include "tools/bench/bench_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/executors.h"
#include "query/calibrate/fit.h"
#include "query/calibrate/records.h"
#include "query/calibrate/score.h"
#include "query/calibrate/sweep.h"
#include "query/planner.h"
#include "sieve/db.h"
#include "tools/cli/cli_util.h"
#include "tools/cli/flags.h"

namespace sieve::cli {

namespace {

using Clock = std::chrono::steady_clock;

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

// The executor a sweep times, resolved from --device as every search resolves it.
Status MakeExecutor(Device device, Executors* executors, Executor** out, bool* gpu) {
  Device resolved = Device::kCpu;
  SIEVE_RETURN_IF_ERROR(executors->Resolve(device, out, &resolved));
  *gpu = resolved == Device::kGpu;
  return Status::OK();
}

template <typename T>
Status ParseList(const Flags& flags, const std::string& name, double lo, double hi,
                 std::vector<T>* out) {
  std::vector<double> v;
  SIEVE_RETURN_IF_ERROR(ParseNumberList(flags, name, lo, hi, &v));
  if (!flags.Has(name)) return Status::OK();
  out->clear();
  for (double x : v) out->push_back(static_cast<T>(x));
  return Status::OK();
}

// Shape, dtype, repetitions.
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

void Progress(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }

}  // namespace

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
  const PlannerRule defaults = PlannerRule::DefaultsFor(name);
  PlannerRule calibrated;
  bool have_calibrated = false;
  if (flags.Has("db")) {
    std::unique_ptr<DB> db;
    s = OpenDb(flags.Get("db"), OpenFor::kRead, &db);
    std::string stored_name;
    // The stored thresholds of exactly this device (not the DB's own choice of device).
    PlannerThresholds stored;
    if (s.ok()) {
      s = db->GetPlannerThresholds(on_gpu ? Device::kGpu : Device::kCpu, &stored, &stored_name);
    }
    if (s.ok()) s = FromThresholds(stored, &calibrated);
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
  const PlannerRule cuvs = Cuvs2610Thresholds();
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
