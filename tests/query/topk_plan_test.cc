// Copyright 2026 The Sieve Authors.
//
// The top-k plan (query/topk_plan.h), on the host: which strategy and products each shape,
// executor and option takes, the sizes the strategies use, and what PlanRequest reads of a
// request. Runs without a GPU: the GPU's abilities are written out as its executor gives them.

#include "query/topk_plan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "index/row_set.h"
#include "query/executor.h"
#include "sieve/gpu_options.h"

namespace sieve {
namespace {

// A GPU as GpuExecutor::topk_abilities() describes one: 1,024 queries a GEMM pass, the
// threshold select's tensor cores for float16 dims that are multiples of 8 up to 256, pages of
// 64 rows.
TopKAbilities Gpu(const GpuExecutorOptions& options = GpuExecutorOptions()) {
  TopKAbilities a;
  a.gpu = true;
  a.options = options;
  a.max_query_chunk = 1024;
  a.threshold_max_dim = 256;
  a.threshold_dim_multiple = 8;
  a.page_rows = 64;
  a.int8_products = true;
  return a;
}

// The dense path over 10M float16 rows of dim 128, 100 queries, k 64 (the H200 benchmark),
// with norms far from float16's range.
TopKInput Dense10M() {
  TopKInput in;
  in.path = SearchPath::kDense;
  in.metric = Metric::kL2;
  in.dtype = DType::kFloat16;
  in.k = 64;
  in.queries = 100;
  in.dim = 128;
  in.columns = 10'000'000;
  in.max_query_sq_norm = 1;
  in.max_row_sq_norm = 1;
  in.query_scale = 1;
  return in;
}

TEST(TopKPlanTest, TheCpuSelectsWithAHeapInFloat32) {
  const TopKPlan plan = PlanTopK(Dense10M(), TopKAbilities());
  EXPECT_EQ(plan.strategy, TopKStrategy::kHeap);
  EXPECT_EQ(plan.products, Products::kFloat32);
  EXPECT_EQ(plan.ToString(), "heap");
}

TEST(TopKPlanTest, DenseFloat16TakesTheThresholdSelect) {
  const TopKPlan plan = PlanTopK(Dense10M(), Gpu());
  ASSERT_EQ(plan.strategy, TopKStrategy::kThreshold);
  EXPECT_EQ(plan.products, Products::kFloat32);
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

TEST(TopKPlanTest, TheSddmmPathSelectsAsItScores) {
  TopKInput in = Dense10M();
  in.path = SearchPath::kSddmm;
  const TopKPlan plan = PlanTopK(in, Gpu());
  EXPECT_EQ(plan.strategy, TopKStrategy::kSelectK);
  EXPECT_EQ(plan.products, Products::kFloat32);
  EXPECT_EQ(plan.ToString(), "select_k");
}

TEST(TopKPlanTest, OptionsSwitchTheStrategy) {
  GpuExecutorOptions o;
  o.threshold_select = false;
  TopKPlan plan = PlanTopK(Dense10M(), Gpu(o));
  EXPECT_EQ(plan.strategy, TopKStrategy::kCandidates);
  EXPECT_EQ(plan.tile_bytes, size_t{32} << 20);  // resident rows: tiles that stay in L2
  EXPECT_EQ(plan.ToString(), "candidates: sample 51200, cap 50176, tile 32 MiB, float16 products");
  o.candidate_tile_bytes = size_t{64} << 20;
  EXPECT_EQ(PlanTopK(Dense10M(), Gpu(o)).tile_bytes, size_t{64} << 20);
  o = GpuExecutorOptions();
  o.candidate_selection = false;  // no candidates means no threshold select either
  EXPECT_EQ(PlanTopK(Dense10M(), Gpu(o)).strategy, TopKStrategy::kSelectK);
  o = GpuExecutorOptions();
  o.threshold_max_levels = 2;
  plan = PlanTopK(Dense10M(), Gpu(o));
  EXPECT_EQ(plan.strategy, TopKStrategy::kThreshold);
  EXPECT_EQ(plan.level_ends.size(), 2u);
  // What an overflowed candidate list reruns with.
  EXPECT_EQ(FullPlan().strategy, TopKStrategy::kSelectK);
  EXPECT_EQ(FullPlan().products, Products::kFloat32);
}

TEST(TopKPlanTest, ThresholdSelectNeedsItsKernelsKeys) {
  TopKInput in = Dense10M();
  in.dtype = DType::kFloat32;
  EXPECT_EQ(PlanTopK(in, Gpu()).strategy, TopKStrategy::kCandidates);
  in = Dense10M();
  in.dim = 100;  // not a multiple of 8: the CUDA-core kernel, slower than the candidate scan
  EXPECT_EQ(PlanTopK(in, Gpu()).strategy, TopKStrategy::kCandidates);
  in.dim = 264;  // above 256
  EXPECT_EQ(PlanTopK(in, Gpu()).strategy, TopKStrategy::kCandidates);
  in = Dense10M();
  in.k = 4097;  // above what its final top-k sorts
  EXPECT_NE(PlanTopK(in, Gpu()).strategy, TopKStrategy::kThreshold);
  TopKAbilities none = Gpu();
  none.threshold_max_dim = 0;  // an executor without the threshold select
  EXPECT_EQ(PlanTopK(Dense10M(), none).strategy, TopKStrategy::kCandidates);
}

TEST(TopKPlanTest, GatherTakesTheThresholdSelectFromItsMinimum) {
  TopKInput in = Dense10M();
  in.path = SearchPath::kGather;
  in.columns = (uint64_t{1} << 18) - 64;
  EXPECT_EQ(PlanTopK(in, Gpu()).strategy, TopKStrategy::kCandidates);
  in.columns = uint64_t{1} << 18;
  EXPECT_EQ(PlanTopK(in, Gpu()).strategy, TopKStrategy::kThreshold);
  in.per_query = true;  // a bitmap's gathered block keeps the candidate scan
  EXPECT_EQ(PlanTopK(in, Gpu()).strategy, TopKStrategy::kCandidates);
  GpuExecutorOptions o;
  o.threshold_gather_min_rows = 0;
  in.per_query = false;
  in.columns = 100'000;
  EXPECT_EQ(PlanTopK(in, Gpu(o)).strategy, TopKStrategy::kThreshold);
  o.threshold_gather_min_rows = std::numeric_limits<uint64_t>::max();
  in.columns = 5'000'000;
  EXPECT_EQ(PlanTopK(in, Gpu(o)).strategy, TopKStrategy::kCandidates);
  // A gathered block of at most 64 MiB of dot products is one candidate tile.
  in.columns = 100'000;
  const TopKPlan plan = PlanTopK(in, Gpu());
  ASSERT_EQ(plan.strategy, TopKStrategy::kCandidates);
  EXPECT_EQ(plan.tile_bytes, size_t{64} << 20);
}

TEST(TopKPlanTest, FewColumnsTakeTheTiles) {
  TopKInput in = Dense10M();
  in.columns = kMinCandidateColumns - 1;
  const TopKPlan plan = PlanTopK(in, Gpu());
  EXPECT_EQ(plan.strategy, TopKStrategy::kSelectK);
  EXPECT_EQ(plan.ToString(), "select_k");
  EXPECT_EQ(plan.sample, 0u);
}

TEST(TopKPlanTest, LargeBatchesArePlannedForOneChunkOfQueries) {
  // 100,000 queries search in chunks of 1,024: the buffers are sized for one chunk, so the
  // candidate scan still fits where the whole batch's lists would not.
  GpuExecutorOptions o;
  o.threshold_select = false;
  TopKInput in = Dense10M();
  in.queries = 100'000;
  EXPECT_EQ(PlanTopK(in, Gpu(o)).strategy, TopKStrategy::kCandidates);
  TopKAbilities whole = Gpu(o);
  whole.max_query_chunk = 100'000;
  EXPECT_EQ(PlanTopK(in, whole).strategy, TopKStrategy::kSelectK);
}

TEST(TopKPlanTest, ProductsFollowTheRowsTheMetricAndTheNorms) {
  GpuExecutorOptions o;
  o.threshold_select = false;
  TopKInput in = Dense10M();
  EXPECT_EQ(PlanTopK(in, Gpu(o)).products, Products::kFloat16);
  // |q| / scale · |x| must stay below 2^15: a row norm of 2^16 with a query at its scale
  // does not.
  in.max_row_sq_norm = std::ldexp(1.0, 32);
  EXPECT_EQ(PlanTopK(in, Gpu(o)).products, Products::kFloat32);
  in.max_row_sq_norm = std::ldexp(1.0, 28);  // 2^14
  EXPECT_EQ(PlanTopK(in, Gpu(o)).products, Products::kFloat16);
  in.max_row_sq_norm = std::numeric_limits<double>::infinity();  // not known: no float16
  EXPECT_EQ(PlanTopK(in, Gpu(o)).products, Products::kFloat32);
  in.max_row_sq_norm = std::nan("");
  EXPECT_EQ(PlanTopK(in, Gpu(o)).products, Products::kFloat32);
  in = Dense10M();
  in.metric = Metric::kCosine;  // an absolute error divided by norms: float32 products
  EXPECT_EQ(PlanTopK(in, Gpu(o)).products, Products::kFloat32);

  in = Dense10M();
  in.dtype = DType::kFloat32;
  TopKPlan plan = PlanTopK(in, Gpu(o));
  EXPECT_EQ(plan.strategy, TopKStrategy::kCandidates);
  EXPECT_EQ(plan.products, Products::kTf32);
  EXPECT_NE(plan.ToString().find("tf32 products"), std::string::npos) << plan.ToString();
  in.metric = Metric::kCosine;
  EXPECT_EQ(PlanTopK(in, Gpu(o)).products, Products::kFloat32);
  in.metric = Metric::kInnerProduct;
  in.max_query_sq_norm = std::numeric_limits<double>::infinity();
  EXPECT_EQ(PlanTopK(in, Gpu(o)).products, Products::kFloat32);
  in.max_query_sq_norm = 1;
  o.candidate_tf32 = false;
  EXPECT_EQ(PlanTopK(in, Gpu(o)).products, Products::kFloat32);
}

// Int8 products: only where the option and the executor allow them, on the dense path over
// enough columns, for float16 and float32 rows and every metric, before the threshold select;
// never for norms whose product leaves float32's safe range, a gathered block or the SDDMM.
TEST(TopKPlanTest, Int8ProductsWhereAllowedAndTheShapeSuits) {
  GpuExecutorOptions o;
  EXPECT_FALSE(o.candidate_int8);  // off by default until measured
  TopKInput in = Dense10M();
  EXPECT_EQ(PlanTopK(in, Gpu(o)).strategy, TopKStrategy::kThreshold);
  o.candidate_int8 = true;
  for (DType dtype : {DType::kFloat16, DType::kFloat32}) {
    for (Metric m : {Metric::kL2, Metric::kInnerProduct, Metric::kCosine}) {
      in = Dense10M();
      in.dtype = dtype;
      in.metric = m;
      const TopKPlan plan = PlanTopK(in, Gpu(o));
      EXPECT_EQ(plan.strategy, TopKStrategy::kCandidates) << MetricName(m);
      EXPECT_EQ(plan.products, Products::kInt8) << MetricName(m);
      EXPECT_NE(plan.ToString().find("int8 products"), std::string::npos) << plan.ToString();
      EXPECT_GT(plan.sample, 0u);
      EXPECT_GE(plan.cap, in.k);
    }
  }
  EXPECT_STREQ(ProductsName(Products::kInt8), "int8");
  // 1M × 1024 and k up to 4,096 too.
  in = Dense10M();
  in.columns = 1'000'000;
  in.dim = 1024;
  in.k = 4096;
  EXPECT_EQ(PlanTopK(in, Gpu(o)).products, Products::kInt8);
  // The executor cannot: the threshold select as before.
  TopKAbilities no_int8 = Gpu(o);
  no_int8.int8_products = false;
  EXPECT_EQ(PlanTopK(Dense10M(), no_int8).strategy, TopKStrategy::kThreshold);
  // A gathered block has no codes; the SDDMM selects as it scores; few columns take the tiles.
  in = Dense10M();
  in.path = SearchPath::kGather;
  in.columns = 1'000'000;
  EXPECT_NE(PlanTopK(in, Gpu(o)).products, Products::kInt8);
  in.path = SearchPath::kSddmm;
  EXPECT_EQ(PlanTopK(in, Gpu(o)).strategy, TopKStrategy::kSelectK);
  in = Dense10M();
  in.columns = 1000;
  EXPECT_EQ(PlanTopK(in, Gpu(o)).strategy, TopKStrategy::kSelectK);
  // Norms: infinite, NaN or too large for the float32 estimate.
  in = Dense10M();
  in.max_row_sq_norm = std::numeric_limits<double>::infinity();
  EXPECT_NE(PlanTopK(in, Gpu(o)).products, Products::kInt8);
  in.max_row_sq_norm = std::nan("");
  EXPECT_NE(PlanTopK(in, Gpu(o)).products, Products::kInt8);
  in.max_row_sq_norm = 0x1p150;
  in.max_query_sq_norm = 0x1p60;
  EXPECT_NE(PlanTopK(in, Gpu(o)).products, Products::kInt8);
  in.max_query_sq_norm = 0x1p40;  // |q| |x| = 2^95
  EXPECT_EQ(PlanTopK(in, Gpu(o)).products, Products::kInt8);
  EXPECT_FALSE(Int8ProductsFit(SearchPath::kDense, 70000, 1, 1));
  EXPECT_TRUE(Int8ProductsFit(SearchPath::kDense, 1536, 1, 1));
  // candidate_selection off turns every candidate scan off.
  o.candidate_selection = false;
  EXPECT_EQ(PlanTopK(Dense10M(), Gpu(o)).strategy, TopKStrategy::kSelectK);
}

TEST(TopKPlanTest, QueryScaleAndTheProductBounds) {
  EXPECT_EQ(QueryScale(0.0f), 1.0f);
  EXPECT_EQ(QueryScale(0.75f), 1.0f);  // 0.75 < 2^0
  EXPECT_EQ(QueryScale(1.0f), 2.0f);   // the power of two above it
  EXPECT_EQ(QueryScale(3.0f), 4.0f);
  EXPECT_EQ(QueryScale(std::ldexp(1.0f, -120)), 1.0f);  // denormal-small queries
  EXPECT_TRUE(Float16ProductsFit(Metric::kL2, 1, 1, 1));
  EXPECT_FALSE(Float16ProductsFit(Metric::kCosine, 1, 1, 1));
  EXPECT_FALSE(Float16ProductsFit(Metric::kInnerProduct, 1, 1, 32768.0 * 32768.0));
  EXPECT_TRUE(Tf32ProductsFit(Metric::kL2, 128, 1, 1));
  EXPECT_FALSE(Tf32ProductsFit(Metric::kL2, 128, 1, std::numeric_limits<double>::infinity()));
  // At least float32's smallest normal value, and above the flush-to-zero sum.
  const float e = Tf32AbsoluteError(128, 1, 1);
  EXPECT_GE(e, std::ldexp(1.0f, -126));
  EXPECT_GE(static_cast<double>(e), std::ldexp(1.0, -125) * (128 + std::sqrt(128.0) * 2));
}

TEST(TopKPlanTest, CandidateSizes) {
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

TEST(TopKPlanTest, ThresholdLevelsFitOrAreEmpty) {
  std::vector<uint64_t> ends, caps;
  ThresholdLevels(65536, 4096, 4, 64, &ends, &caps);  // only two levels fit
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(ends[0], 16384u);
  EXPECT_EQ(ends[1], 65536u);
  ThresholdLevels(1000, 64, 4, 64, &ends, &caps);  // no prefix is a quarter of the rows
  EXPECT_TRUE(ends.empty());
  EXPECT_TRUE(caps.empty());
}

// An executor that only says what it can do (PlanRequest asks nothing else).
class AbilitiesOnly : public Executor {
 public:
  explicit AbilitiesOnly(TopKAbilities a) : a_(std::move(a)) {}
  std::string name() const override { return "abilities-only"; }
  TopKAbilities topk_abilities() const override { return a_; }
  Status Search(const ShardView&, const BatchFilters&, const ExecRequest&,
                ExecResult*) override {
    return Status::NotSupported("abilities only");
  }
  Status Profile(const ShardView&, const BatchFilters&, const ExecRequest&,
                 const ProfileOptions&, ExecProfile*) override {
    return Status::NotSupported("abilities only");
  }
  void ClearCache() override {}

 private:
  TopKAbilities a_;
};

TEST(TopKPlanTest, PlanRequestReadsTheShardTheFiltersAndTheQueries) {
  constexpr uint32_t kRows = 200'000, kDim = 8;
  std::vector<float> norms(kRows, 4.0f);
  norms[7] = 9.0f;
  ShardView shard;
  shard.rows = kRows;
  shard.dim = kDim;
  shard.dtype = DType::kFloat16;
  shard.sq_norms = norms.data();
  std::vector<float> vectors(size_t{kRows} * kDim, 0.0f);
  shard.vectors = vectors.data();
  const std::vector<float> queries = {3, 0, 0, 0, 0, 0, 0, 0, 0.5f, 0, 0, 0, 0, 0, 0, 0};

  // Two queries whose sets differ: a filter per query; the gather selects among their union.
  RowSet a, b;
  a.AddRange(0, 150'000);
  b.AddRange(100'000, 180'000);
  BatchFilters filters;
  filters.sets = {&a, &b};
  filters.passing_rows = {a.Cardinality(), b.Cardinality()};
  ExecRequest request{queries.data(), 2, 10, Metric::kL2, SearchPath::kGather};
  TopKInput in = TopKInputFor(shard, filters, request);
  EXPECT_TRUE(in.per_query);
  EXPECT_EQ(in.columns, 180'000u);
  EXPECT_EQ(in.max_query_sq_norm, 9.0);
  EXPECT_EQ(in.query_scale, 4.0);
  EXPECT_EQ(in.max_row_sq_norm, 9.0);  // scanned: the view did not know it
  shard.max_sq_norm = 16.0;
  EXPECT_EQ(TopKInputFor(shard, filters, request).max_row_sq_norm, 16.0);

  // The same set for both queries: one filter, its rows.
  filters.sets = {&a, &a};
  filters.passing_rows = {a.Cardinality(), a.Cardinality()};
  in = TopKInputFor(shard, filters, request);
  EXPECT_FALSE(in.per_query);
  EXPECT_EQ(in.columns, 150'000u);
  request.path = SearchPath::kDense;
  EXPECT_EQ(TopKInputFor(shard, filters, request).columns, kRows);

  // Planned for the executor it runs on: the gather over 150,000 rows, below the threshold
  // select's 262,144, takes the candidate scan.
  AbilitiesOnly gpu(Gpu()), cpu((TopKAbilities()));
  request.path = SearchPath::kGather;
  PlanRequest(gpu, shard, filters, &request);
  EXPECT_EQ(request.topk.strategy, TopKStrategy::kCandidates);
  EXPECT_EQ(request.topk.products, Products::kFloat16);
  PlanRequest(cpu, shard, filters, &request);
  EXPECT_EQ(request.topk.strategy, TopKStrategy::kHeap);
}

}  // namespace
}  // namespace sieve
