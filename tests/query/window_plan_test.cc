// Copyright 2026 The Sieve Authors.
//
// query/window_plan.h: the windows of range search and pages, what a shard's candidate list
// proves (its cover bound), and the verdicts on a merged list, including rows tied in float32
// at a window's edge.

#include "query/window_plan.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace sieve {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(WindowPlanTest, RangeWindowsGrowEightfoldToLimitPlusOneThenDouble) {
  EXPECT_EQ(FirstRangeWindow(10), 11u);
  EXPECT_EQ(FirstRangeWindow(1000), kFirstRangeWindow);
  EXPECT_EQ(NextRangeWindow(256, 1000), 1001u);
  EXPECT_EQ(NextRangeWindow(256, 100000), 2048u);
  EXPECT_EQ(NextRangeWindow(1001, 1000), 2002u);  // ties at the edge
  EXPECT_EQ(NextRangeWindow(kMaxSearchWindow / 2 + 1, kMaxSearchWindow), 0u);
}

TEST(WindowPlanTest, PageWindowsStartPastThePageAndDouble) {
  EXPECT_EQ(FirstPageWindow(0, 10), 10u);
  EXPECT_EQ(FirstPageWindow(990, 10), 1000u);
  EXPECT_EQ(NextPageWindow(1000), 2000u);
  EXPECT_EQ(FirstPageWindow(kMaxSearchWindow, 1), 0u);
  EXPECT_EQ(NextPageWindow(kMaxSearchWindow / 2 + 1), 0u);
}

TEST(WindowPlanTest, ShardCoverBoundIsTheKeyPastTheWindowOrInfinity) {
  const std::vector<double> keys = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  // Asked 12 (window 4, margin 8) of 100 passing: rows rounding below the 5th key are proven.
  EXPECT_EQ(ShardCoverBound(keys.data(), keys.size(), 12, 4, 100), 5.0f);
  // Asked for as many as pass: the list is every passing row.
  EXPECT_EQ(ShardCoverBound(keys.data(), keys.size(), 12, 4, 12), kInf);
  // A list shorter than its margin proves nothing.
  EXPECT_EQ(ShardCoverBound(keys.data(), 3, 12, 4, 100), -kInf);
}

TEST(WindowPlanTest, RangeDoneWhenTheRadiusRoundsBelowTheBound) {
  const std::vector<double> keys = {0.1, 0.2, 0.3, 0.5, 0.9};
  WindowOutcome o = DecideRange(keys.data(), keys.size(), 0.3, 10, 0.5f);
  EXPECT_EQ(o.verdict, WindowVerdict::kDone);
  EXPECT_EQ(o.end, 3u);  // the row exactly on the radius is in
  // The bound equals the radius: a row at the radius may be missing.
  o = DecideRange(keys.data(), keys.size(), 0.5, 10, 0.5f);
  EXPECT_EQ(o.verdict, WindowVerdict::kWiden);
  // Every passing row in the list.
  o = DecideRange(keys.data(), keys.size(), 100, 10, kInf);
  EXPECT_EQ(o.verdict, WindowVerdict::kDone);
  EXPECT_EQ(o.end, 5u);
  // Nothing within.
  o = DecideRange(keys.data(), keys.size(), 0.05, 10, 0.5f);
  EXPECT_EQ(o.verdict, WindowVerdict::kDone);
  EXPECT_EQ(o.end, 0u);
}

TEST(WindowPlanTest, RangeLimitReachedOnlyWhenTheRowPastTheLimitIsProven) {
  const std::vector<double> keys = {0.1, 0.2, 0.3, 0.4, 0.5};
  WindowOutcome o = DecideRange(keys.data(), keys.size(), 0.45, 3, 0.5f);
  EXPECT_EQ(o.verdict, WindowVerdict::kLimitReached);
  EXPECT_EQ(o.end, 3u);
  // Exactly `limit` rows within: done, not reached.
  o = DecideRange(keys.data(), keys.size(), 0.3, 3, 0.5f);
  EXPECT_EQ(o.verdict, WindowVerdict::kDone);
  EXPECT_EQ(o.end, 3u);
  // The 4th row within is not proven: widen.
  o = DecideRange(keys.data(), keys.size(), 0.45, 3, 0.4f);
  EXPECT_EQ(o.verdict, WindowVerdict::kWiden);
}

TEST(WindowPlanTest, PageNeedsItsLastRowProven) {
  const std::vector<double> keys = {1, 2, 3, 4, 5, 6};
  WindowOutcome o = DecidePage(keys.data(), keys.size(), 2, 2, 5.0f);
  EXPECT_EQ(o.verdict, WindowVerdict::kDone);
  EXPECT_EQ(o.begin, 2u);
  EXPECT_EQ(o.end, 4u);
  EXPECT_EQ(DecidePage(keys.data(), keys.size(), 3, 2, 5.0f).verdict, WindowVerdict::kWiden);
  // Past the end of a list that holds every row: a short or empty page.
  o = DecidePage(keys.data(), keys.size(), 5, 4, kInf);
  EXPECT_EQ(o.verdict, WindowVerdict::kDone);
  EXPECT_EQ(o.end - o.begin, 1u);
  o = DecidePage(keys.data(), keys.size(), 9, 4, kInf);
  EXPECT_EQ(o.verdict, WindowVerdict::kDone);
  EXPECT_EQ(o.end - o.begin, 0u);
  // Past the end of a list that does not: widen.
  EXPECT_EQ(DecidePage(keys.data(), keys.size(), 5, 4, 100.0f).verdict, WindowVerdict::kWiden);
}

TEST(WindowPlanTest, RowsTiedInFloat32AtTheEdgeAreNeverSplit) {
  // Three rows whose float64 keys differ but round to the same float32, at the window's edge:
  // the bound is that float32, so none of them is proven, and the page waits for a wider window.
  const double a = 1.0, b = 1.0 + 1e-12, c = 1.0 + 2e-12;
  const std::vector<double> keys = {0.5, a, b, c};
  const float bound = ShardCoverBound(keys.data(), keys.size(), 4, 2, 100);
  EXPECT_EQ(bound, 1.0f);
  EXPECT_EQ(DecidePage(keys.data(), keys.size(), 0, 2, bound).verdict, WindowVerdict::kWiden);
  EXPECT_EQ(DecidePage(keys.data(), keys.size(), 0, 1, bound).verdict, WindowVerdict::kDone);
}

}  // namespace
}  // namespace sieve
