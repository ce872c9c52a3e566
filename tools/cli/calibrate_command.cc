// Copyright 2026 The Sieve Authors.

#include "tools/cli/calibrate_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "sieve/db.h"
#include "tools/cli/cli_util.h"
#include "tools/cli/flags.h"

namespace sieve::cli {

namespace {

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

// The grid's overrides: shape, dtype, repetitions, time limit.
Status ParseGrid(const Flags& flags, CalibrateOptions* o) {
  std::vector<double> v;
  Status s = ParseNumberList(flags, "rows-list", 1, 4294967295.0, &v);
  for (double x : v) o->rows_list.push_back(static_cast<uint64_t>(x));
  v.clear();
  if (s.ok()) s = ParseNumberList(flags, "dims", 1, 65536, &v);
  for (double x : v) o->dims.push_back(static_cast<uint32_t>(x));
  long long n = 0;
  if (s.ok() && flags.Has("queries")) {
    s = flags.GetInt("queries", 100, 1, 100000, &n);
    o->queries = static_cast<uint32_t>(n);
  }
  if (s.ok() && flags.Has("k")) {
    s = flags.GetInt("k", 64, 1, 1000000, &n);
    o->k = static_cast<uint32_t>(n);
  }
  if (s.ok() && flags.Has("reps")) {
    s = flags.GetInt("reps", 15, 1, 100000, &n);
    o->max_reps = static_cast<int>(n);
  }
  if (s.ok() && flags.Has("warmup")) {
    s = flags.GetInt("warmup", 2, 0, 100000, &n);
    o->warmup = static_cast<int>(n);
  }
  if (s.ok() && flags.Has("time-limit-s")) {
    v.clear();
    s = ParseNumberList(flags, "time-limit-s", 0, 1e7, &v);
    if (s.ok()) o->time_limit_s = v[0];
  }
  if (s.ok() && flags.Has("dtype")) {
    const std::string d = flags.Get("dtype");
    if (d == "f16")
      o->dtype = DType::kFloat16;
    else if (d == "f32")
      o->dtype = DType::kFloat32;
    else
      s = Status::InvalidArgument("--dtype is f16 or f32, got '" + d + "'");
  }
  return s;
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
  CalibrateOptions options;
  s = ParseDevice(flags.Get("device", "auto"), &options.device);
  if (!s.ok()) return Fail("calibrate", s);
  options.quick = flags.Has("quick");
  options.store = !refit && !flags.Has("dry-run");
  options.caller = options.quick ? "sieve calibrate --quick" : "sieve calibrate";
  options.progress = Progress;

  CalibrateReport report;
  if (refit) {
    s = DB::RefitCalibration(flags.Get("refit"), options.device, &report);
    if (!s.ok()) return Fail("calibrate", s);
  } else {
    s = ParseGrid(flags, &options);
    if (!s.ok()) return Fail("calibrate", s);
    std::unique_ptr<DB> db;
    s = OpenDb(flags.positional()[0], OpenFor::kWrite, &db);
    if (!s.ok()) return Fail("calibrate", s);
    s = db->Calibrate(options, &report);
    if (!s.ok()) return Fail("calibrate", s);
  }
  std::printf("%s\n", report.summary_json.c_str());
  std::fprintf(stderr, "%s %s in %.1f s: %s\n", report.stored ? "stored" : "fitted (not stored)",
               report.device.c_str(), report.seconds, report.description.c_str());
  return 0;
}

}  // namespace sieve::cli
