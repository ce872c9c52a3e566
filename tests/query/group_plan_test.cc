// Copyright 2026 The Sieve Authors.
//
// PlanGroups: few_groups up to kMaxFewGroups values, many_groups past it or when one scan holds
// every passing row, a forced strategy as asked; the first K' and its doubling.

#include "query/group_plan.h"

#include <gtest/gtest.h>

namespace sieve {
namespace {

GroupPlanInput Input(uint64_t values, uint64_t passing, uint32_t k, uint32_t size) {
  GroupPlanInput in;
  in.distinct_values = values;
  in.max_passing_rows = passing;
  in.k = k;
  in.group_size = size;
  return in;
}

TEST(GroupPlanTest, ChoosesFromTheCounts) {
  GroupDecision d = PlanGroups(Input(12, 1000000, 10, 2), GroupStrategy::kAuto);
  EXPECT_EQ(d.strategy, GroupStrategy::kFewGroups);
  EXPECT_NE(d.reason.find("12 values"), std::string::npos) << d.reason;
  d = PlanGroups(Input(100, 1000000, 10, 2), GroupStrategy::kAuto);
  EXPECT_EQ(d.strategy, GroupStrategy::kManyGroups);
  d = PlanGroups(Input(kMaxFewGroups, 1000000, 10, 2), GroupStrategy::kAuto);
  EXPECT_EQ(d.strategy, GroupStrategy::kFewGroups);
  d = PlanGroups(Input(kMaxFewGroups + 1, 1000000, 10, 2), GroupStrategy::kAuto);
  EXPECT_EQ(d.strategy, GroupStrategy::kManyGroups);
  EXPECT_EQ(d.first_scan_k, 20u);
  // Every passing row fits the first scan: one round, whatever the values.
  d = PlanGroups(Input(50, 15, 10, 2), GroupStrategy::kAuto);
  EXPECT_EQ(d.strategy, GroupStrategy::kManyGroups);
  EXPECT_EQ(d.first_scan_k, 15u);
  EXPECT_NE(d.reason.find("fits one scan"), std::string::npos) << d.reason;
}

TEST(GroupPlanTest, FirstScanHoldsKGroupsOfTheirSize) {
  EXPECT_EQ(PlanGroups(Input(1000000, 1000000, 10, 1), GroupStrategy::kAuto).first_scan_k, 20u);
  EXPECT_EQ(PlanGroups(Input(1000000, 1000000, 10, 5), GroupStrategy::kAuto).first_scan_k, 50u);
  EXPECT_EQ(PlanGroups(Input(1000000, 0, 10, 5), GroupStrategy::kAuto).first_scan_k, 1u);
}

TEST(GroupPlanTest, ForcedStrategyIsTaken) {
  GroupDecision d = PlanGroups(Input(10, 1000000, 10, 1), GroupStrategy::kManyGroups);
  EXPECT_EQ(d.strategy, GroupStrategy::kManyGroups);
  EXPECT_NE(d.reason.find("asked for"), std::string::npos);
  d = PlanGroups(Input(10000000, 1000000, 10, 1), GroupStrategy::kFewGroups);
  EXPECT_EQ(d.strategy, GroupStrategy::kFewGroups);
}

TEST(GroupPlanTest, NextScanDoublesUpToThePassingRows) {
  EXPECT_EQ(NextScanK(20, 1000), 40u);
  EXPECT_EQ(NextScanK(600, 1000), 1000u);
  EXPECT_EQ(NextScanK(1000, 1000), 1000u);
}

}  // namespace
}  // namespace sieve
