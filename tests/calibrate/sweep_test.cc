// Copyright 2026 The Sieve Authors.
//
// The path sweep (tools/calibrate/sweep.h) on the CPU executor: every point of the grid, every
// path timed through Executor::Profile, the paths agreeing.

#include "tools/calibrate/sweep.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "query/cpu_executor.h"

namespace sieve::calibrate {
namespace {

TEST(SweepTest, TimesEveryPathAtEveryPoint) {
  CpuExecutor cpu(CpuExecutorOptions{1, 0, true});
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
