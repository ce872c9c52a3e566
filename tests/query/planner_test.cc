// Copyright 2026 The Sieve Authors.

#include "query/planner.h"

#include <gtest/gtest.h>

namespace sieve {
namespace {

PlannerThresholds Fixed() {
  PlannerThresholds t;
  t.sddmm_max_rows = 2000;
  t.gather_max_fraction = 0.03;
  t.bitmap_sddmm_max_rows = 1000;
  t.bitmap_gather_max_fraction = 0.05;
  t.source = "test";
  return t;
}

PlanInput Bitset(uint64_t rows, uint64_t pass) {
  PlanInput in;
  in.rows = rows;
  in.dim = 128;
  in.num_queries = 16;
  in.k = 10;
  in.passing_rows = pass;
  return in;
}

PlanInput Bitmap(uint64_t rows, uint64_t mean_pass, uint64_t union_rows) {
  PlanInput in = Bitset(rows, mean_pass);
  in.per_query = true;
  in.union_rows = union_rows;
  return in;
}

TEST(PlannerTest, BitsetBoundaries) {
  const PlannerThresholds t = Fixed();
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 1)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 2000)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 2001)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 30000)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 30001)), SearchPath::kDense);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 1000000)), SearchPath::kDense);
  // The SDDMM bound is absolute: in a small shard it covers everything.
  EXPECT_EQ(ChoosePath(t, Bitset(1500, 1500)), SearchPath::kSddmm);
  // Above the SDDMM bound but over the gather fraction: dense, never gather.
  EXPECT_EQ(ChoosePath(t, Bitset(10000, 5000)), SearchPath::kDense);
}

TEST(PlannerTest, BitmapBoundaries) {
  const PlannerThresholds t = Fixed();
  EXPECT_EQ(ChoosePath(t, Bitmap(1000000, 1000, 16000)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitmap(1000000, 1001, 16000)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(t, Bitmap(1000000, 1001, 50000)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(t, Bitmap(1000000, 1001, 50001)), SearchPath::kDense);
  // The bitset thresholds do not apply to bitmaps.
  EXPECT_EQ(ChoosePath(t, Bitmap(1000000, 1500, 40000)), SearchPath::kGather);
}

TEST(PlannerTest, EmptyShardOrNothingPassingIsSddmm) {
  const PlannerThresholds t = Fixed();
  EXPECT_EQ(ChoosePath(t, Bitset(0, 0)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 0)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitmap(1000000, 0, 0)), SearchPath::kSddmm);
  PlannerThresholds zero;  // even with every threshold 0
  EXPECT_EQ(ChoosePath(zero, Bitset(1000000, 0)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(zero, Bitset(1000000, 1)), SearchPath::kDense);
}

TEST(PlannerTest, DefaultsAreSane) {
  for (const PlannerThresholds& t : {PlannerThresholds::CpuDefaults(),
                                     PlannerThresholds::GpuDefaults()}) {
    EXPECT_GT(t.sddmm_max_rows, 0u);
    EXPECT_GT(t.gather_max_fraction, 0.0);
    EXPECT_LT(t.gather_max_fraction, 1.0);
    EXPECT_GT(t.bitmap_sddmm_max_rows, 0u);
    EXPECT_GT(t.bitmap_gather_max_fraction, 0.0);
    EXPECT_LT(t.bitmap_gather_max_fraction, 1.0);
    EXPECT_FALSE(t.source.empty());
  }
  const PlannerThresholds gpu = PlannerThresholds::GpuDefaults();
  EXPECT_EQ(gpu.sddmm_max_rows, 2000u);
  EXPECT_DOUBLE_EQ(gpu.gather_max_fraction, 0.03);
  EXPECT_NE(gpu.source.find("cuVS 26.10"), std::string::npos);
  // The three paths are all reachable with the defaults on a 1M-row shard.
  for (const PlannerThresholds& t : {PlannerThresholds::CpuDefaults(), gpu}) {
    EXPECT_EQ(ChoosePath(t, Bitset(1000000, 100)), SearchPath::kSddmm);
    EXPECT_EQ(ChoosePath(t, Bitset(1000000, 1000000)), SearchPath::kDense);
  }
}

}  // namespace
}  // namespace sieve
