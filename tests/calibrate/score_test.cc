// Copyright 2026 The Sieve Authors.
//
// Scoring planner rules against a sweep's fastest paths (query/calibrate/score.h).

#include "query/calibrate/score.h"

#include <gtest/gtest.h>

#include <vector>

namespace sieve::calibrate {
namespace {

Cell MakeCell(uint64_t passing, double sddmm, double gather, double dense) {
  Cell c;
  c.rows = 100000;
  c.dim = 128;
  c.passing = passing;
  c.union_rows = passing;
  c.max_passing = passing;
  c.ms[0] = sddmm;
  c.ms[1] = gather;
  c.ms[2] = dense;
  c.reps[0] = c.reps[1] = c.reps[2] = 3;
  return c;
}

TEST(ScoreTest, PenaltyOfARuleAgainstTheFastestPath) {
  const std::vector<Cell> cells = {MakeCell(100, 1, 2, 4), MakeCell(10000, 3, 1, 2),
                                   MakeCell(90000, 8, 4, 2)};
  EXPECT_EQ(cells[1].best(), 1);
  const Penalty best = Score(cells, false, 100, 10, [](const PlanInput& in) {
    return in.passing_rows < 1000    ? SearchPath::kSddmm
           : in.passing_rows < 50000 ? SearchPath::kGather
                                     : SearchPath::kDense;
  });
  EXPECT_EQ(best.points, 3u);
  EXPECT_DOUBLE_EQ(best.mean, 1.0);
  EXPECT_DOUBLE_EQ(best.worst, 1.0);
  const Penalty dense =
      Score(cells, false, 100, 10, [](const PlanInput&) { return SearchPath::kDense; });
  EXPECT_DOUBLE_EQ(dense.worst, 4.0);
  EXPECT_GT(dense.mean, 1.0);
  // Bitmap cells are scored apart: none here.
  EXPECT_EQ(Score(cells, true, 100, 10, [](const PlanInput&) { return SearchPath::kDense; }).points,
            0u);
}

TEST(ScoreTest, APrunedChoiceIsALowerBound) {
  std::vector<Cell> cells = {MakeCell(100, 1, 2, 40)};
  cells[0].pruned[2] = true;
  const Penalty p =
      Score(cells, false, 100, 10, [](const PlanInput&) { return SearchPath::kDense; });
  EXPECT_EQ(p.lower_bounds, 1u);
  EXPECT_DOUBLE_EQ(p.worst, 40.0);
}

}  // namespace
}  // namespace sieve::calibrate
