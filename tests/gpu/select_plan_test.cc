// Copyright 2026 The Sieve Authors.
//
// The GPU executor's top-k plan (gpu/select_plan.h), on the host: which strategy each shape and
// option takes, and the sizes the strategies use. Runs without a GPU.

#include "gpu/select_plan.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "sieve/gpu_options.h"

namespace sieve::gpu {
namespace {

// The dense path over 10M float16 rows of dim 128, 100 queries, k 64 (the H200 benchmark).
SelectInput Dense10M() {
  SelectInput in;
  in.k = 64;
  in.queries = 100;
  in.dim = 128;
  in.columns = 10'000'000;
  in.float16_rows = true;
  in.split_queries = true;
  return in;
}

TEST(SelectPlanTest, DenseFloat16TakesTheThresholdSelect) {
  const SelectPlan plan = PlanSelect(Dense10M(), GpuExecutorOptions());
  ASSERT_EQ(plan.strategy, TopKStrategy::kThreshold);
  ASSERT_EQ(plan.level_ends.size(), 4u);  // threshold_max_levels
  EXPECT_EQ(plan.level_ends.back(), 10'000'000u);
  for (size_t i = 1; i < plan.level_ends.size(); ++i) {
    EXPECT_GT(plan.level_ends[i], plan.level_ends[i - 1]);
    EXPECT_EQ(plan.level_ends[i - 1] % 64, 0u);  // whole pages
    EXPECT_LE(plan.level_ends[i - 1] * 4, 10'000'000u);
  }
  ASSERT_EQ(plan.level_caps.size(), plan.level_ends.size());
  EXPECT_EQ(plan.level_caps[0], plan.level_ends[0]);  // level 0 keeps every key of its prefix
  for (size_t i = 1; i < plan.level_caps.size(); ++i) EXPECT_GE(plan.level_caps[i], 16384u);
  EXPECT_EQ(plan.ToString().rfind("threshold: 4 levels, ends ", 0), 0u) << plan.ToString();
}

TEST(SelectPlanTest, OptionsSwitchTheStrategy) {
  GpuExecutorOptions o;
  o.threshold_select = false;
  SelectPlan plan = PlanSelect(Dense10M(), o);
  EXPECT_EQ(plan.strategy, TopKStrategy::kCandidates);
  EXPECT_EQ(plan.tile_bytes, size_t{32} << 20);  // resident rows: tiles that stay in L2
  o.candidate_tile_bytes = size_t{64} << 20;
  EXPECT_EQ(PlanSelect(Dense10M(), o).tile_bytes, size_t{64} << 20);
  o = GpuExecutorOptions();
  o.candidate_selection = false;  // no candidates means no threshold select either
  EXPECT_EQ(PlanSelect(Dense10M(), o).strategy, TopKStrategy::kTiles);
  o = GpuExecutorOptions();
  o.threshold_max_levels = 2;
  plan = PlanSelect(Dense10M(), o);
  EXPECT_EQ(plan.strategy, TopKStrategy::kThreshold);
  EXPECT_EQ(plan.level_ends.size(), 2u);
  SelectInput in = Dense10M();
  in.fallback = true;  // a list overflowed: the full path
  EXPECT_EQ(PlanSelect(in, GpuExecutorOptions()).strategy, TopKStrategy::kTiles);
}

TEST(SelectPlanTest, ThresholdSelectNeedsItsKernelsKeys) {
  SelectInput in = Dense10M();
  in.float16_rows = false;  // float32 rows
  in.split_queries = false;
  EXPECT_EQ(PlanSelect(in, GpuExecutorOptions()).strategy, TopKStrategy::kCandidates);
  in = Dense10M();
  in.dim = 100;  // not a multiple of 8: the CUDA-core kernel, slower than the candidate scan
  EXPECT_EQ(PlanSelect(in, GpuExecutorOptions()).strategy, TopKStrategy::kCandidates);
  in.dim = 264;  // above 256
  EXPECT_EQ(PlanSelect(in, GpuExecutorOptions()).strategy, TopKStrategy::kCandidates);
  in = Dense10M();
  in.k = 4097;  // above what its final top-k sorts
  EXPECT_NE(PlanSelect(in, GpuExecutorOptions()).strategy, TopKStrategy::kThreshold);
}

TEST(SelectPlanTest, GatherTakesTheThresholdSelectFromItsMinimum) {
  SelectInput in = Dense10M();
  in.gathered = true;
  in.columns = (uint64_t{1} << 18) - 64;
  EXPECT_EQ(PlanSelect(in, GpuExecutorOptions()).strategy, TopKStrategy::kCandidates);
  in.columns = uint64_t{1} << 18;
  EXPECT_EQ(PlanSelect(in, GpuExecutorOptions()).strategy, TopKStrategy::kThreshold);
  in.per_query = true;  // a bitmap's gathered block keeps the candidate scan
  EXPECT_EQ(PlanSelect(in, GpuExecutorOptions()).strategy, TopKStrategy::kCandidates);
  GpuExecutorOptions o;
  o.threshold_gather_min_rows = 0;
  in.per_query = false;
  in.columns = 100'000;
  EXPECT_EQ(PlanSelect(in, o).strategy, TopKStrategy::kThreshold);
  o.threshold_gather_min_rows = std::numeric_limits<uint64_t>::max();
  in.columns = 5'000'000;
  EXPECT_EQ(PlanSelect(in, o).strategy, TopKStrategy::kCandidates);
  // A gathered block of at most 64 MiB of dot products is one candidate tile.
  in.columns = 100'000;
  const SelectPlan plan = PlanSelect(in, GpuExecutorOptions());
  ASSERT_EQ(plan.strategy, TopKStrategy::kCandidates);
  EXPECT_EQ(plan.tile_bytes, size_t{64} << 20);
}

TEST(SelectPlanTest, FewColumnsTakeTheTiles) {
  SelectInput in = Dense10M();
  in.columns = kMinCandidateColumns - 1;
  const SelectPlan plan = PlanSelect(in, GpuExecutorOptions());
  EXPECT_EQ(plan.strategy, TopKStrategy::kTiles);
  EXPECT_EQ(plan.ToString(), "select_k");
  EXPECT_EQ(plan.sample, 0u);
}

TEST(SelectPlanTest, CandidateSizes) {
  uint64_t sample = 0, cap = 0;
  // sqrt(4 · 64 · 10^7) = 50,596 → 51,200 (whole 1,024s); 4 · 64 · 10^7 / 51,200 = 50,000 →
  // 50,176.
  CandidateSizes(10'000'000, 64, 1.0, &sample, &cap);
  EXPECT_EQ(sample, 51200u);
  EXPECT_EQ(cap, 50176u);
  CandidateSizes(10'000'000, 64, 2.0, &sample, &cap);
  EXPECT_EQ(sample, 101376u);
  EXPECT_EQ(cap, 25600u);
  CandidateSizes(2000, 4096, 1.0, &sample, &cap);  // the list at most the columns
  EXPECT_EQ(sample, 6144u);
  EXPECT_EQ(cap, 2000u);
  // Below kCandidateMinK the sizes are k = 8's: at k = 1 over 300,000 columns, sqrt(32 · 3·10^5)
  // = 3,099 → 4,096 and 32 · 3·10^5 / 4,096 = 2,344 → 3,072, 42 times the rows a query keeps on
  // average (300,000 / 4,096), whose count is geometric: a list 4 times the mean overflows for
  // one query in 55, one 32 times for one in 8·10^13.
  uint64_t sample8 = 0, cap8 = 0;
  for (uint32_t k : {1u, 2u, 7u}) {
    CandidateSizes(300'000, k, 1.0, &sample, &cap);
    CandidateSizes(300'000, 8, 1.0, &sample8, &cap8);
    EXPECT_EQ(sample, sample8) << "k " << k;
    EXPECT_EQ(cap, cap8) << "k " << k;
  }
  CandidateSizes(300'000, 1, 1.0, &sample, &cap);
  EXPECT_EQ(sample, 4096u);
  EXPECT_EQ(cap, 3072u);
  CandidateSizes(300'000, 16, 1.0, &sample, &cap);  // from kCandidateMinK up, k's own
  EXPECT_EQ(sample, 5120u);  // sqrt(64 · 3·10^5) = 4,382
  EXPECT_EQ(cap, 4096u);     // 64 · 3·10^5 / 5,120 = 3,750
}

TEST(SelectPlanTest, ThresholdLevelsFitOrAreEmpty) {
  std::vector<uint64_t> ends, caps;
  ThresholdLevels(65536, 4096, 4, &ends, &caps);  // only two levels fit
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(ends[0], 16384u);
  EXPECT_EQ(ends[1], 65536u);
  ThresholdLevels(1000, 64, 4, &ends, &caps);  // no prefix is a quarter of the rows
  EXPECT_TRUE(ends.empty());
  EXPECT_TRUE(caps.empty());
}

TEST(SelectPlanTest, OptionsValidate) {
  EXPECT_TRUE(GpuExecutorOptions().Validate().ok());
  EXPECT_EQ(GpuExecutorOptions().Changed(), "");
  GpuExecutorOptions o;
  o.candidate_sample_factor = 0.1;
  EXPECT_TRUE(o.Validate().IsInvalidArgument());
  o = GpuExecutorOptions();
  o.threshold_max_levels = 7;
  EXPECT_TRUE(o.Validate().IsInvalidArgument());
  o = GpuExecutorOptions();
  o.resident_slab_bytes = 0;
  EXPECT_TRUE(o.Validate().IsInvalidArgument());
  o = GpuExecutorOptions();
  o.list_upload_groups = GpuExecutorOptions::kMaxListUploadGroups + 1;
  EXPECT_TRUE(o.Validate().IsInvalidArgument());
  EXPECT_NE(o.Validate().message().find("list_upload_groups"), std::string::npos);
  o.list_upload_groups = GpuExecutorOptions::kMaxListUploadGroups;
  EXPECT_TRUE(o.Validate().ok());
  o.filter_pack_threads = 257;
  EXPECT_TRUE(o.Validate().IsInvalidArgument());
  o.filter_pack_threads = 256;
  EXPECT_TRUE(o.Validate().ok());
  o = GpuExecutorOptions();
  o.threshold_select = false;
  o.resident_slab_bytes = 65536;
  o.list_upload_groups = 1;
  EXPECT_EQ(o.Changed(), "resident_slab_bytes=65536 threshold_select=false list_upload_groups=1");
}

}  // namespace
}  // namespace sieve::gpu
