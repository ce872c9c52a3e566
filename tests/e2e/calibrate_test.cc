// Copyright 2026 The Sieve Authors.
//
// `sieve calibrate` end to end on the CPU: a tiny calibration stores thresholds for "cpu",
// the planner then uses them (explain names them as calibrated), searches stay exact against
// a float64 oracle, and the stored thresholds survive a reopen through the public API.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "query/planner.h"
#include "sieve/db.h"
#include "tests/e2e/cli_run.h"
#include "tests/planner_rule_util.h"
#include "tests/testutil.h"
#include "tools/io/npy.h"

namespace sieve {
namespace {

using json = nlohmann::json;

using test::CliRun;

class CalibrateTest : public ::testing::Test {
 protected:
  static constexpr size_t kRows = 4000;
  static constexpr size_t kDim = 8;

  // `sieve calibrate --refit` over a summary holding `points` (written to NAME in the test's
  // folder).
  CliRun Refit(const json& points, const std::string& name) {
    const json summary = {{"device", "gpu:model"}, {"points", points}};
    const std::string file = dir_.Join(name);
    {
      std::ofstream out(file);
      out << summary.dump();
    }
    return Sieve({"calibrate", "--refit", file});
  }

  // `sieve calibrate --refit --device gpu` of a recorded calibration summary (a file under
  // tests/data/calibrate/, from an H200 run): its output, and in *fitted the thresholds it
  // fitted.
  void RefitRecorded(const std::string& results_path, json* out, PlannerRule* fitted) {
    const std::string file =
        test::SourceDir() + "/tests/data/calibrate/" + results_path;
    ParseFit(Sieve({"calibrate", "--refit", file, "--device", "gpu"}), out, fitted);
  }

  // `sieve calibrate --refit` over `points` (see Refit): its output in *out, the thresholds it
  // fitted in *fitted.
  void RefitPoints(const json& points, const std::string& name, json* out,
                   PlannerRule* fitted) {
    ParseFit(Refit(points, name), out, fitted);
  }

  static void ParseFit(const CliRun& r, json* out, PlannerRule* fitted) {
    ASSERT_EQ(r.code, 0) << r.err;
    *out = json::parse(r.out);
    ASSERT_TRUE(PlannerRule::FromJson((*out)["thresholds"].dump(), fitted).ok());
  }

  // A batch of 100 queries with a filter each, over 128 dims (the planner's input).
  static PlanInput BitmapInput(uint64_t rows, uint64_t most, uint64_t uni) {
    PlanInput in;
    in.rows = rows;
    in.dim = 128;
    in.num_queries = 100;
    in.k = 64;
    in.per_query = true;
    in.passing_rows = most;
    in.union_rows = uni;
    return in;
  }

  CliRun Sieve(const std::vector<std::string>& args) { return test::RunCli(args, dir_); }

  // The explain line of a query (the last stderr line that parses as JSON).
  static json ExplainOf(const CliRun& r) {
    std::istringstream in(r.err);
    std::string line;
    json last;
    while (std::getline(in, line)) {
      json j = json::parse(line, nullptr, false);
      if (j.is_object()) last = j;
    }
    return last;
  }

  test::ScratchDir dir_;
};

TEST_F(CalibrateTest, TinyCpuCalibrationIsStoredUsedAndExact) {
  const std::string db = dir_.Join("db");
  const std::vector<float> vectors = test::RandomVectors(kRows, kDim, 11);
  const std::vector<float> queries = test::RandomVectors(3, kDim, 12);
  ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("v.npy"), vectors.data(), kRows, kDim).ok());
  ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("q.npy"), queries.data(), 3, kDim).ok());
  {
    std::ofstream attrs(dir_.Join("a.jsonl"));
    for (size_t i = 0; i < kRows; ++i) attrs << "{\"cat\": " << (i % 7) << "}\n";
  }
  ASSERT_EQ(
      Sieve({"create", db, "--collection", "c", "--dim", std::to_string(kDim), "--attr", "cat:int"})
          .code,
      0);
  CliRun r = Sieve({"ingest", db, "--collection", "c", "--vectors", dir_.Join("v.npy"),
                    "--attributes", dir_.Join("a.jsonl")});
  ASSERT_EQ(r.code, 0) << r.err;

  // Before calibration the planner runs on the CPU defaults.
  r = Sieve({"query", db, "--collection", "c", "--queries", dir_.Join("q.npy"), "--k", "5",
             "--filter", "cat = 3", "--device", "cpu", "--explain"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(ExplainOf(r)["thresholds"].get<std::string>().rfind("defaults", 0), 0u) << r.err;

  // Bad input: exit 1 with one line.
  r = Sieve({"calibrate", dir_.Join("nothing-here"), "--device", "cpu", "--quick"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("no Sieve database"), std::string::npos) << r.err;
  r = Sieve({"calibrate", db, "--device", "cpu", "--dims", "0"});
  EXPECT_EQ(r.code, 1);

  // A calibration of seconds: two small shapes, a few queries, few repetitions.
  r = Sieve({"calibrate", db, "--device", "cpu", "--quick", "--rows-list", "2048,4096", "--dims",
             "4,8", "--queries", "8", "--k", "5", "--reps", "2", "--warmup", "0"});
  ASSERT_EQ(r.code, 0) << r.err;
  json summary = json::parse(r.out);
  EXPECT_EQ(summary["device"], "cpu");
  EXPECT_TRUE(summary["stored"].get<bool>());
  const json& t = summary["thresholds"];
  EXPECT_GT(t["sddmm_max_rows"].get<uint64_t>(), 0u);
  EXPECT_GE(t["gather_max_fraction"].get<double>(), 0.0);
  EXPECT_LE(t["gather_max_fraction"].get<double>(), 1.0);
  const std::string source = t["source"];
  EXPECT_EQ(source.rfind("calibrated ", 0), 0u) << source;
  EXPECT_NE(source.find(" on cpu"), std::string::npos) << source;
  // Every grid point has a time per path and a winner.
  ASSERT_FALSE(summary["points"].empty());
  for (const json& p : summary["points"]) {
    EXPECT_TRUE(p["winner"] == "sddmm" || p["winner"] == "gather" || p["winner"] == "dense");
    EXPECT_GT(p["ms"]["dense"].get<double>(), 0.0);
  }

  // The planner now uses the stored thresholds; every filter mode still returns exact results.
  for (const std::string& filter :
       {std::string("cat = 3"), std::string("cat < 6"), std::string("")}) {
    r = Sieve({"query", db, "--collection", "c", "--queries", dir_.Join("q.npy"), "--k", "5",
               "--filter", filter, "--device", "cpu", "--explain"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(ExplainOf(r)["thresholds"].get<std::string>(), source);
    std::istringstream lines(r.out);
    std::string line;
    size_t q = 0;
    while (std::getline(lines, line)) {
      json j = json::parse(line);
      // float64 oracle over the rows passing the filter.
      std::vector<std::pair<double, int64_t>> all;
      for (size_t i = 0; i < kRows; ++i) {
        const int64_t cat = static_cast<int64_t>(i % 7);
        if (filter == "cat = 3" && cat != 3) continue;
        if (filter == "cat < 6" && cat >= 6) continue;
        double d = 0;
        for (size_t c = 0; c < kDim; ++c) {
          const double x = double(queries[q * kDim + c]) - double(vectors[i * kDim + c]);
          d += x * x;
        }
        all.emplace_back(d, static_cast<int64_t>(i));
      }
      std::sort(all.begin(), all.end());
      ASSERT_EQ(j["ids"].size(), 5u);
      for (size_t i = 0; i < 5; ++i) {
        EXPECT_EQ(j["ids"][i].get<int64_t>(), all[i].second) << filter << " query " << q;
        EXPECT_NEAR(j["distances"][i].get<double>(), all[i].first, 1e-4 * (1 + all[i].first));
      }
      ++q;
    }
    EXPECT_EQ(q, 3u);
  }

  // Through the public API after a reopen: the same thresholds for "cpu", the defaults for a
  // device with none stored.
  std::unique_ptr<DB> handle;
  ASSERT_TRUE(DB::Open(Options(), db, &handle).ok());
  PlannerRule got;
  std::string name;
  ASSERT_TRUE(test::GetRule(handle.get(), Device::kCpu, &got, &name).ok());
  EXPECT_EQ(name, "cpu");
  EXPECT_EQ(got.source, source);
  EXPECT_EQ(got.sddmm_max_rows, t["sddmm_max_rows"].get<uint64_t>());
  PlannerRule mine = PlannerRule::CpuDefaults();
  mine.sddmm_max_rows = 1;
  mine.gather_max_fraction = 1.0;
  mine.source = "calibrated by hand";
  ASSERT_TRUE(handle->PutPlannerThresholds("cpu", ToThresholds(mine)).ok());
  EXPECT_TRUE(handle->PutPlannerThresholds("", ToThresholds(mine)).IsInvalidArgument());
  PlannerRule bad = mine;
  bad.gather_max_fraction = 2.0;
  PlannerThresholds refused;
  EXPECT_TRUE(PlannerThresholds::FromJson(bad.ToJson(), &refused).IsInvalidArgument());
  EXPECT_TRUE(handle->PutPlannerThresholds("cpu", refused).IsInvalidArgument());
  ASSERT_TRUE(test::GetRule(handle.get(), Device::kCpu, &got, &name).ok());
  EXPECT_EQ(got.source, "calibrated by hand");
  EXPECT_EQ(got.sddmm_max_rows, 1u);
  // With SDDMM capped at 1 row and gather allowed everywhere, a filtered search gathers.
  SearchRequest req;
  req.queries = queries.data();
  req.num_queries = 3;
  req.dim = kDim;
  req.k = 5;
  req.filter = "cat = 3";
  SearchOptions opts;
  opts.device = Device::kCpu;
  SearchResult res;
  ASSERT_TRUE(handle->Search("c", req, opts, &res).ok());
  ASSERT_FALSE(res.explain.shards.empty());
  EXPECT_EQ(res.explain.shards[0].path, "gather");
  EXPECT_EQ(res.explain.thresholds, "calibrated by hand");
}

// `sieve calibrate --refit` on recorded points of a known cost model: the SDDMM bound's fall
// with dim and the bitmap rule come out of the fit (no device needed).
TEST_F(CalibrateTest, RefitRecoversDimScalingAndBitmapOverlap) {
  // Bitset: SDDMM = n·dim·a, gather = K + n·dim·b, dense far slower; SDDMM is 10% slower than
  // gather (the fit's tie) at n·dim = 1.1K / (a - 1.1b) = 512,000, i.e. 4,000 rows at dim 128.
  const double a = 1e-7, b = 1e-8, K = (a - 1.1 * b) * 512000 / 1.1;
  json points = json::array();
  for (uint64_t rows : {1000000ull, 10000000ull}) {
    for (uint32_t dim : {64u, 512u}) {
      for (double n = 100; n < 0.5 * rows; n *= 2) {
        const double nd = n * dim;
        points.push_back({{"mode", "bitset"},
                          {"rows", rows},
                          {"dim", dim},
                          {"passing", static_cast<uint64_t>(n)},
                          {"ms", {{"sddmm", nd * a}, {"gather", K + nd * b}, {"dense", 1e3}}}});
      }
      // Bitmaps of 100 queries: per-query SDDMM pays for the largest list, the union gather
      // for the union, dense for the rows.
      for (const char* overlap : {"shared", "independent"}) {
        for (double n = 100; n < 0.5 * rows; n *= 2) {
          const bool shared = std::string(overlap) == "shared";
          const double uni = shared ? n : std::min<double>(rows, 100 * n);
          points.push_back({{"mode", "bitmap"},
                            {"overlap", overlap},
                            {"rows", rows},
                            {"dim", dim},
                            {"passing", static_cast<uint64_t>(n)},
                            {"union", static_cast<uint64_t>(uni)},
                            {"ms",
                             {{"sddmm", 1 + 5e-5 * n},
                              {"gather", 1.2 + 2e-6 * uni},
                              {"dense", 1 + 1e-6 * rows}}}});
        }
      }
    }
  }
  json j;
  PlannerRule fitted;
  RefitPoints(points, "points.json", &j, &fitted);
  ASSERT_FALSE(HasFatalFailure());
  const json& t = j["thresholds"];
  EXPECT_FALSE(j["stored"].get<bool>());
  EXPECT_NEAR(t["sddmm_dim_exponent"].get<double>(), 1.0, 0.1) << t.dump();
  EXPECT_NEAR(t["sddmm_max_rows"].get<double>(), 4000, 800) << t.dump();
  // Independent filters: SDDMM (1 + 5 ms) beats the union gather (1.2 + 12.7 ms) and dense
  // (11 ms); shared ones: the gather (1.4 ms) beats SDDMM.
  EXPECT_EQ(ChoosePath(fitted, BitmapInput(10000000, 100000, 6340000)), SearchPath::kSddmm)
      << t.dump();
  EXPECT_EQ(ChoosePath(fitted, BitmapInput(10000000, 100000, 100000)), SearchPath::kGather)
      << t.dump();
  // SDDMM against dense (union ≈ rows): 1 + 5e-5·n < 1 + 1e-6·rows while n < 2% of rows.
  EXPECT_EQ(ChoosePath(fitted, BitmapInput(10000000, 150000, 10000000)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(fitted, BitmapInput(10000000, 300000, 10000000)), SearchPath::kDense);
  EXPECT_EQ(BitmapInput(1, 1, 1).max_passing_rows, 0u);
}

// The bitmap SDDMM-vs-dense bound comes from the crossovers, so it carries to larger shards:
// dense = 0.3 + 1e-6·rows (a fixed cost, then the rows), per-query SDDMM = 0.1 + 2.4e-5·n. With
// the 10% tie, SDDMM stops winning at n = (0.23 + 1.1e-6·rows) / 2.4e-5 = 9,583 + 0.0458·rows:
// 8.4% of 200,000 rows, 5.0% of 2M, 4.7% of 10M (never calibrated).
TEST_F(CalibrateTest, RefitBitmapSddmmBoundFollowsCrossovers) {
  json points = json::array();
  for (uint64_t rows : {200000ull, 2000000ull}) {
    for (uint32_t dim : {64u, 512u}) {
      for (double n = 100; n < 0.8 * rows; n *= 2) {
        points.push_back({{"mode", "bitmap"},
                          {"overlap", "independent"},
                          {"rows", rows},
                          {"dim", dim},
                          {"passing", static_cast<uint64_t>(n)},
                          {"union", rows},
                          {"ms",
                           {{"sddmm", 0.1 + 2.4e-5 * n},
                            {"gather", 2 * (0.3 + 1e-6 * rows)},
                            {"dense", 0.3 + 1e-6 * rows}}}});
      }
    }
  }
  json j;
  PlannerRule fitted;
  RefitPoints(points, "bitmap-points.json", &j, &fitted);
  ASSERT_FALSE(HasFatalFailure());
  const json& t = j["thresholds"];
  EXPECT_NEAR(t["bitmap_sddmm_max_fraction"].get<double>(), 0.0458, 0.0458 * 0.15) << t.dump();
  EXPECT_GT(t["bitmap_sddmm_base_rows"].get<double>(), 9583.0 / 2) << t.dump();
  EXPECT_LT(t["bitmap_sddmm_base_rows"].get<double>(), 9583.0 * 2) << t.dump();
  EXPECT_EQ(j["fit"]["bitmap_sddmm_series"].get<int>(), 4) << j["fit"].dump();
  EXPECT_LT(j["fit"]["bitmap_sddmm_log_rms"].get<double>(), 0.15) << j["fit"].dump();
  // Every query its own 350,000 (600,000) rows of 10M, the union all of them.
  EXPECT_EQ(ChoosePath(fitted, BitmapInput(10000000, 350000, 10000000)), SearchPath::kSddmm)
      << t.dump();
  EXPECT_EQ(ChoosePath(fitted, BitmapInput(10000000, 600000, 10000000)), SearchPath::kDense)
      << t.dump();
}

// Refitting the points of a real `sieve calibrate --quick` on the H200 (recorded 2026-11-30):
// the bitset gather bound follows the penalty and the crossovers of shards of 65,536 rows and
// more (there gather beat dense up to 72-80% passing), not those of 8,192-row shards, which
// pulled the cap to 0.56; the bitmap SDDMM-vs-dense bound follows the crossovers (about 5% at
// 200,000 rows, 2.5% at 2M), not a flat penalty that put it at 5% of any shard.
TEST_F(CalibrateTest, RefitOfRecordedH200Calibration) {
  json j;
  PlannerRule fitted;
  RefitRecorded("h200-sweep2-calib-quick1.json", &j, &fitted);
  ASSERT_FALSE(HasFatalFailure());
  const json& t = j["thresholds"];
  for (uint32_t dim : {128u, 256u, 512u}) {
    EXPECT_GT(GatherMaxSelectivity(fitted, 200000, dim), 0.6) << dim << " " << t.dump();
    EXPECT_GT(GatherMaxSelectivity(fitted, 10000000, dim), 0.6) << dim << " " << t.dump();
  }
  // 8,192 rows: crossovers 3.7% (dim 64) and 24% (dim 512), which the form cannot both follow;
  // the penalty settles between them.
  EXPECT_LT(GatherMaxSelectivity(fitted, 8192, 64), 0.3) << t.dump();
  // Crossover counts: about 10,000 at 200,000 rows and 50,000 at 2M; 5% of 10M is far past.
  const double base = t["bitmap_sddmm_base_rows"].get<double>();
  const double frac = t["bitmap_sddmm_max_fraction"].get<double>();
  EXPECT_NEAR(base + frac * 200000, 10000, 4000) << t.dump();
  EXPECT_NEAR(base + frac * 2000000, 60000, 20000) << t.dump();
  EXPECT_LT(base + frac * 10000000, 500000) << t.dump();
  // Series whose alternative to SDDMM is dense (8 of 12 before the union gather bound followed
  // rows and dim; 6 with it, where the gather is the alternative at 2M rows).
  EXPECT_GE(j["fit"]["bitmap_sddmm_series"].get<int>(), 6) << j["fit"].dump();
}

// The union gather's crossover falls with the shard's rows: gather / dense = union fraction /
// f(rows), f = 0.6 · (10^6 / rows)^0.2 at every dim (0.83 at 200k rows, 0.38 at 10M). One
// fraction for every shard cannot follow it; the fitted power law does. The per-query sets
// overlap (each holds 60 % of the union): one set for every query is planned as a bitset.
TEST_F(CalibrateTest, RefitUnionGatherBoundFallsWithRows) {
  json points = json::array();
  for (uint64_t rows : {200000ull, 2000000ull, 10000000ull}) {
    const double f = 0.6 * std::pow(1e6 / static_cast<double>(rows), 0.2);
    const double dense = 1e-6 * static_cast<double>(rows);
    for (uint32_t dim : {64u, 512u}) {
      for (double n = 1000; n < 0.95 * rows; n *= 1.25) {
        points.push_back({{"mode", "bitmap"},
                          {"overlap", "half"},
                          {"rows", rows},
                          {"dim", dim},
                          {"passing", static_cast<uint64_t>(0.6 * n)},
                          {"union", static_cast<uint64_t>(n)},
                          {"ms",
                           {{"sddmm", 1e3},
                            {"gather", dense * n / (f * static_cast<double>(rows))},
                            {"dense", dense}}}});
      }
    }
  }
  json j;
  PlannerRule fitted;
  RefitPoints(points, "union-points.json", &j, &fitted);
  ASSERT_FALSE(HasFatalFailure());
  const json& t = j["thresholds"];
  EXPECT_NEAR(t["bitmap_gather_rows_exponent"].get<double>(), 0.2, 0.05) << t.dump();
  EXPECT_LT(t["bitmap_gather_dim_exponent"].get<double>(), 0.05) << t.dump();
  EXPECT_GT(BitmapGatherMaxFraction(fitted, 200000, 128), 0.75) << t.dump();
  EXPECT_LT(BitmapGatherMaxFraction(fitted, 10000000, 128), 0.45) << t.dump();
  // Half of 10M rows in the union: dense; 70% of 200,000: the gather.
  EXPECT_EQ(ChoosePath(fitted, BitmapInput(10000000, 3000000, 5000000)), SearchPath::kDense);
  PlanInput small = BitmapInput(200000, 84000, 140000);
  EXPECT_EQ(ChoosePath(fitted, small), SearchPath::kGather) << t.dump();
}

// Bitset points over rows {200k, 2M, 10M} x `dims` whose gather / dense ratio is fraction /
// f(rows, dim): the gather wins below the fraction f, dense above; SDDMM never.
json GatherPoints(const std::vector<uint32_t>& dims,
                  const std::function<double(double, double)>& f) {
  json points = json::array();
  for (uint64_t rows : {200000ull, 2000000ull, 10000000ull}) {
    const double dense = 1e-7 * static_cast<double>(rows);
    for (uint32_t dim : dims) {
      for (double n = 1000; n < 0.95 * rows; n *= 1.25) {
        const double fraction = n / static_cast<double>(rows);
        const double gather = dense * fraction / f(static_cast<double>(rows), dim);
        points.push_back({{"mode", "bitset"},
                          {"rows", rows},
                          {"dim", dim},
                          {"passing", static_cast<uint64_t>(n)},
                          {"ms", {{"sddmm", 1e3}, {"gather", gather}, {"dense", dense}}}});
      }
    }
  }
  return points;
}

// A gather crossover that falls with the rows past 10^6, the same at every dim: the fitted
// exponent follows it.
TEST_F(CalibrateTest, RefitGatherCapFallsWithRows) {
  auto f = [](double rows, double) { return 0.8 * std::pow(1e6 / std::max(rows, 1e6), 0.3); };
  json j;
  PlannerRule fitted;
  RefitPoints(GatherPoints({128, 512}, f), "gather-points.json", &j, &fitted);
  ASSERT_FALSE(HasFatalFailure());
  const json& t = j["thresholds"];
  EXPECT_NEAR(t["gather_rows_exponent"].get<double>(), 0.3, 0.1) << t.dump();
  for (uint32_t dim : {128u, 256u, 512u}) {
    EXPECT_NEAR(GatherMaxSelectivity(fitted, 1000000, dim), 0.8, 0.1) << dim << " " << t.dump();
    EXPECT_NEAR(GatherMaxSelectivity(fitted, 10000000, dim), 0.4, 0.06) << dim << " " << t.dump();
  }
  PlanInput big = BitmapInput(10000000, 6000000, 6000000);
  big.per_query = false;
  EXPECT_EQ(ChoosePath(fitted, big), SearchPath::kDense) << t.dump();
  big.passing_rows = 3000000;
  EXPECT_EQ(ChoosePath(fitted, big), SearchPath::kGather) << t.dump();
}

// A gather crossover whose fall past 10^6 rows weakens with dim: one fall for every dim
// cannot follow it, the fitted dim term does.
TEST_F(CalibrateTest, RefitGatherCapFallWeakensWithDim) {
  auto f = [](double rows, double dim) {
    return 0.7 * std::pow(1e6 / std::max(rows, 1e6), 0.3 * 128 / dim);
  };
  json j;
  PlannerRule fitted;
  RefitPoints(GatherPoints({128, 256, 512}, f), "gather-dim-points.json", &j, &fitted);
  ASSERT_FALSE(HasFatalFailure());
  const json& t = j["thresholds"];
  EXPECT_GT(fitted.gather_rows_dim_exponent, 0.5) << t.dump();
  for (uint32_t dim : {128u, 256u, 512u}) {
    const double want = f(1e7, dim);
    EXPECT_NEAR(GatherMaxSelectivity(fitted, 10000000, dim) / want, 1.0, 0.12)
        << dim << " " << t.dump();
  }
}

// Points of independent per-query filters whose per-query SDDMM beats dense below `cross(rows,
// dim)` rows a query (SDDMM / dense = most / cross), the union gather always 3x dense.
json BitmapSddmmPoints(const std::vector<uint64_t>& rows_list, const std::vector<uint32_t>& dims,
                       const std::function<double(double, double)>& cross) {
  json points = json::array();
  for (uint64_t rows : rows_list) {
    const double dense = 1e-7 * static_cast<double>(rows);
    for (uint32_t dim : dims) {
      const double c = cross(static_cast<double>(rows), dim);
      for (double n = 1000; n < 0.5 * rows; n *= 1.25) {
        points.push_back(
            {{"mode", "bitmap"},
             {"overlap", "independent"},
             {"rows", rows},
             {"dim", dim},
             {"passing", static_cast<uint64_t>(n)},
             {"max_passing", static_cast<uint64_t>(n)},
             {"union", rows},
             {"ms", {{"sddmm", dense * n / c}, {"gather", 3 * dense}, {"dense", dense}}}});
      }
    }
  }
  return points;
}

// A per-query SDDMM crossover against dense whose fraction of the rows falls with them
// (per-query SDDMM / dense = most / c(rows)): with the fall the fit carries across sizes.
TEST_F(CalibrateTest, RefitBitmapSddmmFractionFallsWithRows) {
  auto c = [](double rows) { return 0.05 * std::pow(1e6 / rows, 0.25) * rows; };
  json j;
  PlannerRule fitted;
  RefitPoints(BitmapSddmmPoints({200000, 2000000, 10000000}, {128, 512},
                                [&](double rows, double) { return c(rows); }),
              "bitmap-rows-points.json", &j, &fitted);
  ASSERT_FALSE(HasFatalFailure());
  const json& t = j["thresholds"];
  EXPECT_NEAR(t["bitmap_sddmm_rows_exponent"].get<double>(), 0.25, 0.1) << t.dump();
  // The fit follows the crossovers with the 10 % tie, 1.1 c.
  for (double rows : {200000.0, 2000000.0, 10000000.0}) {
    const double bound =
        fitted.bitmap_sddmm_base_rows +
        BitmapSddmmMaxFraction(fitted, static_cast<uint64_t>(rows), 128) * rows;
    EXPECT_NEAR(bound / (1.1 * c(rows)), 1.0, 0.15) << rows << " " << t.dump();
  }
  EXPECT_EQ(ChoosePath(fitted, BitmapInput(10000000, 500000, 10000000)), SearchPath::kDense)
      << t.dump();
  EXPECT_EQ(ChoosePath(fitted, BitmapInput(10000000, 200000, 10000000)), SearchPath::kSddmm)
      << t.dump();
}

// A per-query SDDMM crossover against dense whose fraction of the rows falls with the dim (the
// dense path's candidate scan gains on per-query SDDMM at high dims): the fitted dim term
// follows it at every dim, where one fraction for all dims would sit between them.
TEST_F(CalibrateTest, RefitBitmapSddmmFractionFallsWithDim) {
  auto c = [](double rows, double dim) { return 0.05 * std::pow(128.0 / dim, 0.3) * rows; };
  json j;
  PlannerRule fitted;
  RefitPoints(BitmapSddmmPoints({200000, 2000000}, {128, 512, 1024}, c), "bitmap-dim-points.json",
              &j, &fitted);
  ASSERT_FALSE(HasFatalFailure());
  const json& t = j["thresholds"];
  EXPECT_NEAR(t["bitmap_sddmm_dim_exponent"].get<double>(), 0.3, 0.1) << t.dump();
  for (uint32_t dim : {128u, 512u, 1024u}) {
    const double bound = fitted.bitmap_sddmm_base_rows +
                         BitmapSddmmMaxFraction(fitted, 2000000, dim) * 2e6;
    EXPECT_NEAR(bound / (1.1 * c(2e6, dim)), 1.0, 0.15) << dim << " " << t.dump();
  }
}

// Refitting this session's recorded `sieve calibrate --quick` (H200, 2026-11-30, rows 8,192 /
// 200k / 2M x dims 64 / 512): its union gather crossovers were 0.73-0.75 at 200k rows and at
// 2M x 512, but 0.39 at 2M x 64. The sweep beside it measured the gather 1.60x slower than
// dense at 10M x 128 with 60% of the rows in the union and 1.34x at 45%, while at 200k x 512
// it still won at 60%.
TEST_F(CalibrateTest, RefitOfRecordedH200UnionGather) {
  json j;
  PlannerRule fitted;
  RefitRecorded("h200-session4-sweep1-calib-quick1.json", &j, &fitted);
  ASSERT_FALSE(HasFatalFailure());
  const json& t = j["thresholds"];
  EXPECT_GT(t["bitmap_gather_rows_exponent"].get<double>(), 0) << t.dump();
  // About 0.47 (the flat fraction was 0.68): 60% of 10M x 128 goes to dense.
  EXPECT_LT(BitmapGatherMaxFraction(fitted, 10000000, 128), 0.55) << t.dump();
  EXPECT_GT(BitmapGatherMaxFraction(fitted, 200000, 512), 0.6) << t.dump();
}

// The recorded three-dim quick calibration (tests/data/calibrate/README.md): its refit must
// make the choices the sweep beside it timed as fastest at these shapes.
TEST_F(CalibrateTest, RefitOfRecordedH200ThreeDimQuick) {
  json j;
  PlannerRule fitted;
  RefitRecorded("h200-3dims-calib-quick1.json", &j, &fitted);
  ASSERT_FALSE(HasFatalFailure());
  const json& t = j["thresholds"];
  EXPECT_GT(fitted.gather_rows_exponent, 0) << t.dump();
  EXPECT_GT(fitted.gather_rows_dim_exponent, 0) << t.dump();
  EXPECT_LT(GatherMaxSelectivity(fitted, 10000000, 128), 0.45) << t.dump();
  EXPECT_GT(GatherMaxSelectivity(fitted, 10000000, 512), 0.45) << t.dump();
  EXPECT_GT(GatherMaxSelectivity(fitted, 1000000, 128), 0.6) << t.dump();
  EXPECT_LT(SddmmMaxRows(fitted, 256), 3000) << t.dump();
  EXPECT_GT(SddmmMaxRows(fitted, 128), 3000) << t.dump();
  EXPECT_EQ(ChoosePath(fitted, BitmapInput(10000000, 500000, 10000000)), SearchPath::kDense)
      << t.dump();
  EXPECT_EQ(ChoosePath(fitted, BitmapInput(10000000, 200000, 10000000)), SearchPath::kSddmm)
      << t.dump();
}

TEST(PlannerRuleJsonTest, RoundTripAndErrors) {
  PlannerRule t = PlannerRule::GpuDefaults();
  PlannerRule back;
  ASSERT_TRUE(PlannerRule::FromJson(t.ToJson(), &back).ok());
  EXPECT_EQ(back.sddmm_max_rows, t.sddmm_max_rows);
  EXPECT_EQ(back.bitmap_sddmm_max_rows, t.bitmap_sddmm_max_rows);
  EXPECT_DOUBLE_EQ(back.gather_scale, t.gather_scale);
  EXPECT_DOUBLE_EQ(back.gather_min_rows, t.gather_min_rows);
  EXPECT_EQ(back.bitmap_union_gather, t.bitmap_union_gather);
  EXPECT_EQ(back.source, t.source);
  EXPECT_TRUE(PlannerRule::FromJson("not json", &back).IsInvalidArgument());
  EXPECT_TRUE(PlannerRule::FromJson("{}", &back).IsInvalidArgument());
  json j = json::parse(t.ToJson());
  j["sddmm_max_fraction"] = -1;
  Status s = PlannerRule::FromJson(j.dump(), &back);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("sddmm_max_fraction"), std::string::npos) << s.ToString();
}

TEST(PlannerRuleTest, JsonRoundTripAndOlderFormat) {
  PlannerRule t = PlannerRule::CpuDefaults();
  t.sddmm_dim_exponent = 0.75;
  t.bitmap_sddmm_base_rows = 1234.5;
  t.bitmap_sddmm_max_share = 0.25;
  t.bitmap_gather_scale = 0.57;
  t.bitmap_gather_dim_exponent = 0.12;
  t.bitmap_gather_rows_exponent = 0.08;
  t.gather_rows_exponent = 0.21;
  t.gather_rows_dim_exponent = 0.9;
  t.bitmap_sddmm_rows_exponent = 0.17;
  PlannerRule back;
  ASSERT_TRUE(PlannerRule::FromJson(t.ToJson(), &back).ok());
  EXPECT_DOUBLE_EQ(back.sddmm_dim_exponent, 0.75);
  EXPECT_DOUBLE_EQ(back.bitmap_sddmm_base_rows, 1234.5);
  EXPECT_DOUBLE_EQ(back.bitmap_sddmm_max_share, 0.25);
  EXPECT_DOUBLE_EQ(back.bitmap_gather_scale, 0.57);
  EXPECT_DOUBLE_EQ(back.bitmap_gather_dim_exponent, 0.12);
  EXPECT_DOUBLE_EQ(back.bitmap_gather_rows_exponent, 0.08);
  EXPECT_DOUBLE_EQ(back.gather_rows_exponent, 0.21);
  EXPECT_DOUBLE_EQ(back.gather_rows_dim_exponent, 0.9);
  EXPECT_DOUBLE_EQ(back.bitmap_sddmm_rows_exponent, 0.17);
  EXPECT_EQ(back.ToJson(), t.ToJson());
  // A calibration stored before these fields existed still loads: no dim scaling, no base
  // count, no share bound.
  const std::string old_format =
      R"({"sddmm_max_rows":5811,"sddmm_max_fraction":1.0,"gather_min_rows":0.0,)"
      R"("gather_scale":15.85,"gather_max_fraction":0.89,"bitmap_sddmm_max_rows":12589,)"
      R"("bitmap_sddmm_max_fraction":1.0,"bitmap_union_gather":true,)"
      R"("bitmap_gather_max_fraction":0.8,"source":"calibrated 2026-11-30T00:10Z"})";
  PlannerRule old;
  old.sddmm_dim_exponent = 9;
  ASSERT_TRUE(PlannerRule::FromJson(old_format, &old).ok());
  EXPECT_EQ(old.sddmm_max_rows, 5811u);
  EXPECT_DOUBLE_EQ(old.sddmm_dim_exponent, 0);
  EXPECT_DOUBLE_EQ(old.bitmap_sddmm_base_rows, 0);
  EXPECT_DOUBLE_EQ(old.bitmap_sddmm_max_share, 1.0);
  EXPECT_DOUBLE_EQ(old.bitmap_gather_scale, 0);
  EXPECT_DOUBLE_EQ(BitmapGatherMaxFraction(old, 10000000, 128), 0.8);
  EXPECT_DOUBLE_EQ(old.gather_rows_exponent, 0);
  EXPECT_DOUBLE_EQ(old.gather_rows_dim_exponent, 0);
  EXPECT_DOUBLE_EQ(old.bitmap_sddmm_rows_exponent, 0);
  EXPECT_DOUBLE_EQ(GatherMaxSelectivity(old, 10000000, 8), 0.89);
  // Out of range values are refused, naming the field.
  PlannerRule bad;
  Status s = PlannerRule::FromJson(
      R"({"sddmm_max_rows":1,"sddmm_dim_exponent":-1,"sddmm_max_fraction":1.0,)"
      R"("gather_min_rows":0,"gather_scale":1,"gather_max_fraction":0.5,)"
      R"("bitmap_sddmm_max_rows":1,"bitmap_sddmm_max_fraction":1.0,)"
      R"("bitmap_union_gather":false,"bitmap_gather_max_fraction":0})",
      &bad);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("sddmm_dim_exponent"), std::string::npos);
  json j = json::parse(PlannerRule::GpuDefaults().ToJson());
  j["gather_rows_exponent"] = -0.5;
  s = PlannerRule::FromJson(j.dump(), &bad);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("gather_rows_exponent"), std::string::npos) << s.ToString();
  j["gather_rows_exponent"] = 0.5;
  j["bitmap_sddmm_rows_exponent"] = "x";
  s = PlannerRule::FromJson(j.dump(), &bad);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("bitmap_sddmm_rows_exponent"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace sieve
