// Copyright 2026 The Sieve Authors.
//
// The top-k plan through the public API: explain's select, products and select_plan name what
// the planner chose for each shard's device (query/topk_plan.h), and the GPU's answers are the
// CPU's. The GPU cases skip without a CUDA device (they run on the H200 with e2e_tests).

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sieve/db.h"
#include "tests/testutil.h"

namespace sieve {
namespace {

class ExplainPlanTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(DB::Open(Options(), dir_.Join("db"), &db_).ok()); }

  // A collection of `rows` random rows with an int attribute `cat` = row % 10.
  void Make(const std::string& name, uint32_t rows, uint32_t dim, DType dtype, Metric metric) {
    CollectionSpec spec;
    spec.name = name;
    spec.dim = dim;
    spec.metric = metric;
    spec.dtype = dtype;
    spec.attributes = {{"cat", AttrType::kInt}};
    ASSERT_TRUE(db_->CreateCollection(spec).ok());
    const std::vector<float> v = test::RandomVectors(rows, dim, 7 + dim);
    std::vector<std::vector<Value>> attrs(rows);
    for (uint32_t i = 0; i < rows; ++i) attrs[i] = {Value(static_cast<int64_t>(i % 10))};
    RowBatch b{rows, dim, v.data(), nullptr, attrs.data()};
    IngestResult ir;
    ASSERT_TRUE(db_->Ingest(name, b, IngestOptions(), &ir).ok());
  }

  // Searches `name` on `device` along `path` with `filter`; false when the device is missing.
  bool Search(const std::string& name, Device device, SearchPath path, const std::string& filter,
              SearchResult* r) {
    const uint32_t dim = dims_[name];
    queries_ = test::RandomVectors(kQueries, dim, 99);
    SearchRequest req;
    req.queries = queries_.data();
    req.num_queries = kQueries;
    req.dim = dim;
    req.k = kK;
    req.filter = filter;
    SearchOptions o;
    o.device = device;
    o.path = path;
    Status s = db_->Search(name, req, o, r);
    if (s.IsUnavailable() && device == Device::kGpu) return false;
    EXPECT_TRUE(s.ok()) << s.ToString();
    return s.ok();
  }

  // The GPU's plan for one search, checked against what the shapes call for, and its answers
  // against the CPU's.
  void ExpectGpuPlan(const std::string& name, SearchPath path, const std::string& filter,
                     const std::string& select, const std::string& products) {
    SCOPED_TRACE(name + " " + SearchPathName(path) + " '" + filter + "'");
    SearchResult gpu, cpu;
    if (!Search(name, Device::kGpu, path, filter, &gpu)) GTEST_SKIP() << "no CUDA device";
    ASSERT_TRUE(Search(name, Device::kCpu, path, filter, &cpu));
    ASSERT_EQ(gpu.explain.shards.size(), 1u);
    const ShardPlan& p = gpu.explain.shards[0];
    EXPECT_EQ(p.path, SearchPathName(path));
    EXPECT_EQ(p.select, select) << gpu.explain.ToJson();
    EXPECT_EQ(p.products, products) << gpu.explain.ToJson();
    EXPECT_EQ(p.select_plan.rfind(select, 0), 0u) << p.select_plan;
    EXPECT_EQ(cpu.explain.shards[0].select, "heap");
    EXPECT_EQ(cpu.explain.shards[0].products, "float32");
    ASSERT_EQ(gpu.results.size(), cpu.results.size());
    for (size_t q = 0; q < gpu.results.size(); ++q) {
      EXPECT_EQ(gpu.results[q].ids, cpu.results[q].ids) << "query " << q;
    }
  }

  static constexpr uint32_t kQueries = 6;
  static constexpr int kK = 10;
  test::ScratchDir dir_;
  std::unique_ptr<DB> db_;
  std::map<std::string, uint32_t> dims_;
  std::vector<float> queries_;
};

TEST_F(ExplainPlanTest, TheCpuSaysHeapAndFloat32) {
  dims_["c"] = 16;
  Make("c", 2000, 16, DType::kFloat32, Metric::kL2);
  for (SearchPath path : {SearchPath::kSddmm, SearchPath::kGather, SearchPath::kDense}) {
    SearchResult r;
    ASSERT_TRUE(Search("c", Device::kCpu, path, "cat < 5", &r));
    ASSERT_EQ(r.explain.shards.size(), 1u);
    EXPECT_EQ(r.explain.shards[0].select, "heap");
    EXPECT_EQ(r.explain.shards[0].products, "float32");
    const std::string json = r.explain.ToJson();
    EXPECT_NE(json.find("\"select\": \"heap\", \"products\": \"float32\""), std::string::npos)
        << json;
  }
}

// 140,000 float16 rows of dim 64: the dense path takes the threshold select, a gather of
// 98,000 rows (below the threshold select's 262,144) the candidate scan with float16 products
// (l2; cosine multiplies in float32), the SDDMM path select_k.
TEST_F(ExplainPlanTest, TheGpuSaysWhatItsPlanRan) {
  SearchResult probe;
  dims_["probe"] = 8;
  Make("probe", 10, 8, DType::kFloat32, Metric::kL2);
  if (!Search("probe", Device::kGpu, SearchPath::kDense, "", &probe)) {
    GTEST_SKIP() << "no CUDA device";
  }
  dims_["h"] = dims_["hc"] = dims_["f"] = 64;
  Make("h", 140'000, 64, DType::kFloat16, Metric::kL2);
  Make("hc", 140'000, 64, DType::kFloat16, Metric::kCosine);
  Make("f", 140'000, 64, DType::kFloat32, Metric::kInnerProduct);
  ExpectGpuPlan("h", SearchPath::kDense, "", "threshold", "float32");
  ExpectGpuPlan("h", SearchPath::kGather, "cat < 7", "candidates", "float16");
  ExpectGpuPlan("hc", SearchPath::kGather, "cat < 7", "candidates", "float32");
  ExpectGpuPlan("h", SearchPath::kSddmm, "cat = 3", "select_k", "float32");
  ExpectGpuPlan("h", SearchPath::kGather, "cat = 3", "select_k", "float32");  // 14,000 rows
  ExpectGpuPlan("f", SearchPath::kDense, "cat < 9", "candidates", "tf32");
}

// With GpuExecutorOptions::candidate_int8 the dense path scans int8 codes, for float16 and
// float32 rows and every metric, and explain says "int8"; the answers are still the CPU's.
TEST_F(ExplainPlanTest, TheGpuSaysInt8WhenItScannedCodes) {
  db_.reset();
  Options options;
  options.gpu.candidate_int8 = true;
  ASSERT_TRUE(DB::Open(options, dir_.Join("db8"), &db_).ok());
  SearchResult probe;
  dims_["probe"] = 8;
  Make("probe", 10, 8, DType::kFloat32, Metric::kL2);
  if (!Search("probe", Device::kGpu, SearchPath::kDense, "", &probe)) {
    GTEST_SKIP() << "no CUDA device";
  }
  dims_["h"] = dims_["hc"] = dims_["f"] = 64;
  Make("h", 140'000, 64, DType::kFloat16, Metric::kL2);
  Make("hc", 140'000, 64, DType::kFloat16, Metric::kCosine);
  Make("f", 140'000, 64, DType::kFloat32, Metric::kInnerProduct);
  ExpectGpuPlan("h", SearchPath::kDense, "", "candidates", "int8");
  ExpectGpuPlan("h", SearchPath::kDense, "cat < 9", "candidates", "int8");
  ExpectGpuPlan("hc", SearchPath::kDense, "", "candidates", "int8");
  ExpectGpuPlan("f", SearchPath::kDense, "cat < 9", "candidates", "int8");
  // A gathered block has no codes: its candidate scan multiplies as before.
  ExpectGpuPlan("h", SearchPath::kGather, "cat < 7", "candidates", "float16");
}

}  // namespace
}  // namespace sieve
