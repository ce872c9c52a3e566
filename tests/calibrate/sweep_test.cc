// Copyright 2026 The Sieve Authors.
//
// The path sweep (query/calibrate/sweep.h) on the CPU executor: every point of the grid, every
// path timed through Executor::Profile, the paths agreeing.

#include "query/calibrate/sweep.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "query/cpu_executor.h"

namespace sieve::calibrate {
namespace {

// 4,096 rows x dims 8 and 16, float32, 4 queries, k = 4: a sweep of seconds.
SweepConfig TinyConfig() {
  SweepConfig c;
  c.rows_list = {4096};
  c.dims = {8, 16};
  c.fractions = {0.01, 0.5};
  c.counts = {10};
  c.queries = 4;
  c.k = 4;
  c.dtype = DType::kFloat32;
  c.warmup = 0;
  c.min_reps = 1;
  c.max_reps = 2;
  c.budget_ms = 1;
  return c;
}

TEST(SweepTest, TimesEveryPathAtEveryPoint) {
  CpuExecutor cpu(CpuExecutorOptions{1, 0, true});
  SweepConfig c = TinyConfig();
  std::vector<std::string> progress;
  std::vector<Cell> cells;
  bool stopped = true;
  Status s = RunSweep(
      &cpu, c, [&](const std::string& line) { progress.push_back(line); }, &cells, &stopped);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(stopped);
  EXPECT_FALSE(progress.empty());
  // 2 dims × 3 counts × (bitset + bitmap shared + bitmap independent).
  ASSERT_EQ(cells.size(), 18u);
  for (const Cell& cell : cells) {
    EXPECT_TRUE(cell.results_agree);
    for (int p = 0; p < 3; ++p) {
      EXPECT_FALSE(cell.failed[p]);
      if (!cell.pruned[p]) EXPECT_GE(cell.reps[p], 1);
    }
    EXPECT_GE(cell.best(), 0);
  }
  EXPECT_GE(cpu.runs(SearchPath::kSddmm), 18u);
  EXPECT_GE(cpu.runs(SearchPath::kGather), 1u);
  EXPECT_GE(cpu.runs(SearchPath::kDense), 1u);
}

// bitmap_max_shape_bytes keeps the per-query series to the small shapes; the bitset series
// still runs on every shape.
TEST(SweepTest, BitmapSeriesOnlyOnSmallShapes) {
  CpuExecutor cpu(CpuExecutorOptions{1, 0, true});
  SweepConfig c = TinyConfig();
  c.fractions = {0.5};
  c.max_reps = 1;
  c.bitmap_max_shape_bytes = 4096 * 8 * 4;  // 4096 x 8 float32: the dim-8 shape only
  std::vector<Cell> cells;
  Status s = RunSweep(&cpu, c, nullptr, &cells);
  ASSERT_TRUE(s.ok()) << s.ToString();
  size_t bitset8 = 0, bitset16 = 0, bitmap8 = 0, bitmap16 = 0;
  for (const Cell& cell : cells) {
    size_t& n = cell.per_query ? (cell.dim == 8 ? bitmap8 : bitmap16)
                               : (cell.dim == 8 ? bitset8 : bitset16);
    ++n;
  }
  EXPECT_EQ(bitset8, 2u);
  EXPECT_EQ(bitset16, 2u);
  EXPECT_EQ(bitmap8, 4u);  // shared and independent, two counts each
  EXPECT_EQ(bitmap16, 0u);
}

TEST(SweepTest, RejectsABadGrid) {
  CpuExecutor cpu;
  SweepConfig c;
  c.rows_list = {0};
  c.dims = {8};
  c.fractions = {0.5};
  std::vector<Cell> cells;
  EXPECT_TRUE(RunSweep(&cpu, c, nullptr, &cells).IsInvalidArgument());
}

}  // namespace
}  // namespace sieve::calibrate
