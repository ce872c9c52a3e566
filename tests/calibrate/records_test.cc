// Copyright 2026 The Sieve Authors.
//
// A sweep's recorded forms (query/calibrate/records.h): the bench CSV and the calibrate summary
// read back as the cells that were written, and the H200 summaries the refit tests use.

#include "query/calibrate/records.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/testutil.h"
#include "query/calibrate/fit.h"

namespace sieve::calibrate {
namespace {

std::vector<Cell> SomeCells() {
  std::vector<Cell> cells;
  for (bool per_query : {false, true}) {
    for (uint64_t passing : {100ull, 5000ull, 60000ull}) {
      Cell c;
      c.rows = 100000;
      c.dim = 64;
      c.per_query = per_query;
      c.overlap = per_query ? Overlap::kIndependent : Overlap::kShared;
      c.passing = passing;
      c.union_rows = per_query ? std::min<uint64_t>(passing * 20, 100000) : passing;
      c.max_passing = passing + (per_query ? 7 : 0);
      c.ms[0] = 0.001 * passing;
      c.ms[1] = 1.5;
      c.ms[2] = 3.25;
      c.reps[0] = c.reps[1] = c.reps[2] = 4;
      cells.push_back(c);
    }
  }
  cells.back().failed[0] = true;
  return cells;
}

void ExpectSameCells(const std::vector<Cell>& want, const std::vector<Cell>& got) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(got[i].per_query, want[i].per_query);
    if (want[i].per_query) EXPECT_EQ(got[i].overlap, want[i].overlap);
    EXPECT_EQ(got[i].rows, want[i].rows);
    EXPECT_EQ(got[i].dim, want[i].dim);
    EXPECT_EQ(got[i].passing, want[i].passing);
    EXPECT_EQ(got[i].union_rows, want[i].union_rows);
    EXPECT_EQ(got[i].max_passing, want[i].max_passing);
    for (int p = 0; p < 3; ++p) {
      EXPECT_EQ(got[i].failed[p], want[i].failed[p]);
      if (!want[i].failed[p]) EXPECT_NEAR(got[i].ms[p], want[i].ms[p], 1e-4);
    }
  }
}

TEST(RecordsTest, CsvRoundTrip) {
  test::ScratchDir dir;
  const std::vector<Cell> cells = SomeCells();
  SweepConfig config;
  config.queries = 50;
  config.k = 16;
  const std::string csv = dir.Join("sweep.csv");
  ASSERT_TRUE(
      WriteCsv(csv, cells, config, {{"dense", [](const PlanInput&) { return SearchPath::kDense; }}})
          .ok());
  std::vector<Cell> got;
  std::string device = "x";
  uint32_t queries = 0, k = 0;
  Status s = ReadCells(csv, &got, &device, &queries, &k);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(device, "");
  EXPECT_EQ(queries, 50u);
  EXPECT_EQ(k, 16u);
  ExpectSameCells(cells, got);
}

TEST(RecordsTest, SummaryPointsRoundTrip) {
  test::ScratchDir dir;
  const std::vector<Cell> cells = SomeCells();
  nlohmann::ordered_json summary;
  summary["device"] = "gpu:test";
  summary["points"] = nlohmann::ordered_json::array();
  for (const Cell& c : cells) summary["points"].push_back(CellJson(c));
  const std::string file = dir.Join("summary.json");
  std::ofstream(file) << summary.dump();
  std::vector<Cell> got;
  std::string device;
  uint32_t queries = 0, k = 0;
  ASSERT_TRUE(ReadCells(file, &got, &device, &queries, &k).ok());
  EXPECT_EQ(device, "gpu:test");
  ExpectSameCells(cells, got);
}

TEST(RecordsTest, BadFilesAreNamed) {
  test::ScratchDir dir;
  std::vector<Cell> got;
  std::string device;
  uint32_t queries = 0, k = 0;
  EXPECT_TRUE(ReadCells(dir.Join("missing"), &got, &device, &queries, &k).IsIOError());
  std::ofstream(dir.Join("bad.csv")) << "a,b\n1,2\n";
  Status s = ReadCells(dir.Join("bad.csv"), &got, &device, &queries, &k);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("bad.csv"), std::string::npos) << s.message();
  std::ofstream(dir.Join("bad.json")) << "{\"points\": [{\"mode\": \"bitset\"}]}";
  EXPECT_TRUE(ReadCells(dir.Join("bad.json"), &got, &device, &queries, &k).IsInvalidArgument());
}

// The H200 summary the e2e refit test also uses: every point reads, and the fit keeps the
// SDDMM bound inside what the series measured.
TEST(RecordsTest, RecordedH200SummaryFits) {
  std::vector<Cell> cells;
  std::string device;
  uint32_t queries = 100, k = 64;
  const std::string file =
      test::SourceDir() + "/tests/data/calibrate/h200-sweep2-calib-quick1.json";
  Status s = ReadCells(file, &cells, &device, &queries, &k);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(device.rfind("gpu:", 0), 0u) << device;
  ASSERT_GT(cells.size(), 100u);
  FitReport report;
  const PlannerRule t =
      FitThresholds(cells, queries, k, PlannerRule::GpuDefaults(), &report);
  EXPECT_GT(t.sddmm_max_rows, 100u);
  EXPECT_LT(t.sddmm_max_rows, 1000000u);
  EXPECT_GT(report.sddmm_series, 0);
  EXPECT_GT(t.gather_max_fraction, 0.0);
  EXPECT_LE(t.gather_max_fraction, 1.0);
}

}  // namespace
}  // namespace sieve::calibrate
