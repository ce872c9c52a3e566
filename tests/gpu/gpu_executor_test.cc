// Copyright 2026 The Sieve Authors.
//
// The GPU executor against the float64 oracle (and the CPU executor): every path forced ×
// every metric × float32 and float16 × bitset and bitmap, on the shapes of cuVS's prefiltered
// suite and on edge cases (nothing passing, everything passing, k above the passing count,
// k = 1024, appends, several dense tiles). Each search proves which path ran through the
// executor's path counters and its stage names. Skipped without a CUDA device.

#include "gpu/gpu_executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gpu/gpu_backend.h"
#include "index/row_set.h"
#include "query/cpu_executor.h"
#include "tests/testutil.h"

namespace sieve {
namespace {

using gpu::GpuExecutor;
using gpu::GpuPathCounts;

constexpr SearchPath kPaths[] = {SearchPath::kSddmm, SearchPath::kGather, SearchPath::kDense};
constexpr Metric kMetrics[] = {Metric::kL2, Metric::kInnerProduct, Metric::kCosine};

const char* PathStr(SearchPath p) {
  switch (p) {
    case SearchPath::kSddmm: return "sddmm";
    case SearchPath::kGather: return "gather";
    case SearchPath::kDense: return "dense";
    default: return "auto";
  }
}
const char* MetricStr(Metric m) {
  switch (m) {
    case Metric::kL2: return "l2";
    case Metric::kInnerProduct: return "ip";
    default: return "cosine";
  }
}

float RoundToHalf(float x) { return static_cast<float>(static_cast<_Float16>(x)); }

// Host rows as the engine would hold them (float16 collections keep exact halves in float32).
struct HostShard {
  std::vector<float> data;
  std::vector<float> sq_norms;
  ShardView view;

  HostShard(uint32_t rows, uint32_t dim, DType dtype, uint64_t key, uint64_t seed,
            bool special_rows = true) {
    data = test::RandomVectors(rows, dim, seed);
    // A zero row (cosine's "zero norm → 1") and a duplicate row (exact ties).
    if (special_rows && rows > 3) std::fill_n(data.begin() + dim, dim, 0.0f);
    if (special_rows && rows > 5) std::copy_n(data.begin() + 2 * dim, dim, data.begin() + 5 * dim);
    if (dtype == DType::kFloat16) {
      for (float& v : data) v = RoundToHalf(v);
    }
    sq_norms.resize(rows);
    for (uint32_t r = 0; r < rows; ++r) {
      double acc = 0;
      for (uint32_t d = 0; d < dim; ++d) acc += double{data[size_t{r} * dim + d]} * data[size_t{r} * dim + d];
      sq_norms[r] = static_cast<float>(acc);
    }
    view.key = key;
    view.generation = 1;
    view.vectors = data.data();
    view.sq_norms = sq_norms.data();
    view.rows = rows;
    view.dim = dim;
    view.dtype = dtype;
  }
};

RowSet RandomSet(uint32_t rows, double fraction, uint64_t seed) {
  if (fraction >= 1.0) return RowSet::Range(0, rows);
  std::vector<uint32_t> ords;
  if (fraction > 0) {
    std::mt19937_64 rng(seed);
    std::bernoulli_distribution pass(fraction);
    for (uint32_t r = 0; r < rows; ++r) {
      if (pass(rng)) ords.push_back(r);
    }
  }
  return RowSet::Of(ords.data(), ords.size());
}

// The filters of one batch: a bitset, or a bitmap whose per-query densities spread from 0.25×
// to 1.75× the nominal one (uneven, like cuVS's RMAT filters).
struct Filters {
  std::vector<RowSet> sets;
  BatchFilters batch;
  Filters(uint32_t rows, uint32_t nq, bool per_query, double density, uint64_t seed) {
    const uint32_t n = per_query ? nq : 1;
    sets.reserve(n);
    for (uint32_t i = 0; i < n; ++i) {
      double d = density;
      if (per_query && density < 1.0) d = std::min(1.0, density * (0.25 + 1.5 * i / std::max(1u, n - 1)));
      sets.push_back(RandomSet(rows, d, seed * 1000003 + i));
    }
    Rebuild();
  }
  void Rebuild() {
    batch.sets.clear();
    batch.passing_rows.clear();
    for (const RowSet& s : sets) {
      batch.sets.push_back(&s);
      batch.passing_rows.push_back(s.Cardinality());
    }
  }
  const RowSet& For(uint32_t q) const { return sets[batch.per_query() ? q : 0]; }
};

using Oracle = std::vector<std::vector<std::pair<uint32_t, double>>>;

// The float64 oracle for the queries listed in `check`, computed on several threads.
Oracle ComputeOracle(Metric metric, const std::vector<float>& queries, const HostShard& s,
                     const Filters& f, uint32_t k, const std::vector<uint32_t>& check) {
  Oracle out(check.size());
  const unsigned n_threads = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), 32));
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < n_threads; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = t; i < check.size(); i += n_threads) {
        const uint32_t q = check[i];
        const RowSet& set = f.For(q);
        out[i] = test::OracleTopK(metric, queries.data() + size_t{q} * s.view.dim, s.data.data(),
                                  s.view.rows, s.view.dim, k,
                                  [&](uint32_t r) { return set.Contains(r); });
      }
    });
  }
  for (auto& th : threads) th.join();
  return out;
}

// The tolerance of a float32 distance against float64: relative to the size of the terms the
// expansion adds (|q|² + |x|² for l2, |q||x| for ip), absolute for cosine.
double Tolerance(Metric metric, const float* q, const HostShard& s) {
  double qn = 0;
  for (uint32_t d = 0; d < s.view.dim; ++d) qn += double{q[d]} * q[d];
  double xmax = 0;
  for (float n : s.sq_norms) xmax = std::max(xmax, double{n});
  switch (metric) {
    case Metric::kL2: return 5e-5 * (qn + xmax) + 1e-6;
    case Metric::kInnerProduct: return 5e-5 * std::sqrt(qn * xmax) + 1e-6;
    default: return 5e-5;
  }
}

// Checks one executor's answer for query q: min(k, passing) results, each passing the filter,
// no duplicates, sorted best first, each with its own true distance, and rank by rank equal to
// the oracle's distances (so the set is an exact top-k; ties at the k-th place may swap).
void CheckQuery(const std::string& what, Metric metric, const float* query, const HostShard& s,
                const RowSet& set, uint32_t k, const std::vector<std::pair<uint32_t, double>>& want,
                const std::vector<std::pair<uint32_t, float>>& got, double tol) {
  SCOPED_TRACE(what);
  const size_t expect_n = std::min<uint64_t>(k, set.Cardinality());
  ASSERT_EQ(want.size(), expect_n);
  ASSERT_EQ(got.size(), expect_n);
  std::set<uint32_t> seen;
  const bool larger_better = metric == Metric::kInnerProduct;
  for (size_t i = 0; i < got.size(); ++i) {
    const uint32_t id = got[i].first;
    ASSERT_LT(id, s.view.rows) << "rank " << i;
    ASSERT_TRUE(set.Contains(id)) << "row " << id << " fails the filter (rank " << i << ")";
    ASSERT_TRUE(seen.insert(id).second) << "row " << id << " returned twice";
    if (i > 0) {
      if (larger_better) {
        ASSERT_GE(got[i - 1].second, got[i].second) << "not sorted at rank " << i;
      } else {
        ASSERT_LE(got[i - 1].second, got[i].second) << "not sorted at rank " << i;
      }
    }
    const double truth = test::OracleDistance(metric, query, s.data.data() + size_t{id} * s.view.dim,
                                              s.view.dim);
    ASSERT_NEAR(got[i].second, truth, tol) << "row " << id << " at rank " << i;
    ASSERT_NEAR(got[i].second, want[i].second, tol)
        << "rank " << i << ": got row " << id << ", oracle row " << want[i].first;
  }
}

std::vector<uint32_t> QueriesToCheck(uint32_t nq, double work) {
  // Every query unless the oracle would be slow; then a stride that still covers both ends.
  std::vector<uint32_t> out;
  const uint32_t stride = work > 4e9 ? std::max<uint32_t>(1, static_cast<uint32_t>(work / 4e9 + 1)) : 1;
  for (uint32_t q = 0; q < nq; q += stride) out.push_back(q);
  if (out.back() != nq - 1) out.push_back(nq - 1);
  return out;
}

class GpuExecutorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::unique_ptr<GpuExecutor> e;
    create_status_ = new Status(GpuExecutor::Create(GpuExecutorOptions(), &e));
    exec_ = e.release();
  }
  static void TearDownTestSuite() {
    delete exec_;
    exec_ = nullptr;
    delete create_status_;
    create_status_ = nullptr;
  }
  void SetUp() override {
    if (!create_status_->ok()) {
      ASSERT_TRUE(create_status_->IsUnavailable()) << create_status_->ToString();
      GTEST_SKIP() << "no CUDA device: " << create_status_->message();
    }
  }

  // What `result` says ran is the plan, carried out (or, after an overflow, the full path), and
  // the counters agree: a threshold select, a candidate scan, its products.
  static void ExpectPlanRan(const TopKPlan& plan, const GpuPathCounts& before,
                            const GpuPathCounts& after, const ExecResult& result) {
    SCOPED_TRACE("plan " + plan.ToString() + ", ran " + result.select_plan);
    const bool fell_back = after.candidate_fallbacks > before.candidate_fallbacks;
    const bool refused = after.candidate_products_refused > before.candidate_products_refused;
    if (fell_back) {
      EXPECT_EQ(result.select, "select_k");
      EXPECT_EQ(result.products, "float32");
      EXPECT_NE(result.select_plan.find("overflowed"), std::string::npos);
    } else {
      EXPECT_EQ(result.select, TopKStrategyName(plan.strategy));
      EXPECT_EQ(result.products, refused ? "float32" : ProductsName(plan.products));
      EXPECT_EQ(result.select_plan.rfind(plan.ToString(), 0), 0u);
    }
    const uint64_t threshold = after.threshold_chunks - before.threshold_chunks;
    const uint64_t candidates = after.candidate_chunks - before.candidate_chunks;
    EXPECT_EQ(threshold > 0, plan.strategy == TopKStrategy::kThreshold);
    EXPECT_EQ(candidates > threshold, plan.strategy == TopKStrategy::kCandidates);
    if (fell_back) return;  // the first run's products are counted, the rerun's reported
    EXPECT_EQ(after.candidate_half_dots > before.candidate_half_dots, result.products == "float16");
    EXPECT_EQ(after.candidate_tf32 > before.candidate_tf32, result.products == "tf32");
  }

  // Runs `path` on the GPU, proves it ran, and checks the queries in `check` against `oracle`.
  void RunAndCheck(const std::string& what, SearchPath path, Metric metric, const HostShard& s,
                   const Filters& f, const std::vector<float>& queries, uint32_t nq, uint32_t k,
                   const std::vector<uint32_t>& check, const Oracle& oracle,
                   ExecResult* result_out = nullptr) {
    SCOPED_TRACE(what + " path=" + PathStr(path));
    ExecRequest req;
    req.queries = queries.data();
    req.num_queries = nq;
    req.k = k;
    req.metric = metric;
    req.path = path;
    PlanRequest(*exec_, s.view, f.batch, &req);
    const GpuPathCounts before = exec_->path_counts();
    ExecResult result;
    Status st = exec_->Search(s.view, f.batch, req, &result);
    ASSERT_TRUE(st.ok()) << st.ToString();
    const GpuPathCounts after = exec_->path_counts();
    EXPECT_EQ(after.sddmm - before.sddmm, path == SearchPath::kSddmm ? 1u : 0u);
    EXPECT_EQ(after.gather - before.gather, path == SearchPath::kGather ? 1u : 0u);
    EXPECT_EQ(after.dense - before.dense, path == SearchPath::kDense ? 1u : 0u);
    ExpectPlanRan(req.topk, before, after, result);
    bool stage_named = false;
    for (const auto& [name, ms] : result.stage_ms) stage_named |= name == std::string("gpu.") + PathStr(path);
    EXPECT_TRUE(stage_named) << "no stage gpu." << PathStr(path);
    ASSERT_EQ(result.neighbors.size(), nq);
    for (size_t i = 0; i < check.size(); ++i) {
      const uint32_t q = check[i];
      const float* qv = queries.data() + size_t{q} * s.view.dim;
      CheckQuery("query " + std::to_string(q), metric, qv, s, f.For(q), k, oracle[i],
                 result.neighbors[q], Tolerance(metric, qv, s));
      if (HasFatalFailure()) return;
    }
    if (result_out != nullptr) *result_out = std::move(result);
  }

  // For the rest of a test, RunAndCheck and exec_ use an executor of the test's own, created
  // with `options` (the suite's executor has the defaults).
  class WithOptions {
   public:
    explicit WithOptions(const GpuExecutorOptions& options) : saved_(exec_) {
      status_ = GpuExecutor::Create(options, &own_);
      if (status_.ok()) exec_ = own_.get();
    }
    ~WithOptions() { exec_ = saved_; }
    const Status& status() const { return status_; }

   private:
    GpuExecutor* saved_;
    std::unique_ptr<GpuExecutor> own_;
    Status status_;
  };

  static GpuExecutor* exec_;
  static Status* create_status_;
};

GpuExecutor* GpuExecutorTest::exec_ = nullptr;
Status* GpuExecutorTest::create_status_ = nullptr;

TEST_F(GpuExecutorTest, NameAndFactory) {
  EXPECT_EQ(exec_->name().rfind("gpu:", 0), 0u) << exec_->name();
  std::unique_ptr<Executor> e;
  Status st = gpu::CreateGpuExecutor(GpuExecutorOptions(), &e);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(e->name(), exec_->name());
}

// Every path × metric × dtype × filter mode, with k from 1 to 1024, against the oracle and the
// CPU executor.
TEST_F(GpuExecutorTest, EveryPathMetricDtypeAndFilterMode) {
  CpuExecutor cpu;
  const uint32_t rows = 5000, dim = 37, nq = 7;
  for (DType dtype : {DType::kFloat32, DType::kFloat16}) {
    HostShard s(rows, dim, dtype, 100 + static_cast<int>(dtype), 11);
    const std::vector<float> queries = test::RandomVectors(nq, dim, 12);
    for (bool per_query : {false, true}) {
      Filters f(rows, nq, per_query, 0.05, 13);
      for (uint32_t k : {1u, 10u, 300u, 1024u}) {
        std::vector<uint32_t> check(nq);
        for (uint32_t q = 0; q < nq; ++q) check[q] = q;
        for (Metric metric : kMetrics) {
          const Oracle oracle = ComputeOracle(metric, queries, s, f, k, check);
          for (SearchPath path : kPaths) {
            const std::string what = std::string("dtype=") + (dtype == DType::kFloat16 ? "f16" : "f32") +
                                     (per_query ? " bitmap" : " bitset") + " k=" + std::to_string(k) +
                                     " metric=" + MetricStr(metric);
            RunAndCheck(what, path, metric, s, f, queries, nq, k, check, oracle);
            if (HasFatalFailure()) return;
            // The CPU executor on the same request gives the same answer (up to float ties).
            ExecRequest req{queries.data(), nq, k, metric, path};
            ExecResult cpu_result;
            Status st = cpu.Search(s.view, f.batch, req, &cpu_result);
            ASSERT_TRUE(st.ok()) << st.ToString();
            for (uint32_t q = 0; q < nq; ++q) {
              const float* qv = queries.data() + size_t{q} * dim;
              CheckQuery(what + " cpu query " + std::to_string(q), metric, qv, s, f.For(q), k,
                         oracle[q], cpu_result.neighbors[q], Tolerance(metric, qv, s));
              if (HasFatalFailure()) return;
            }
          }
        }
      }
    }
  }
}

// The shapes of cuVS's prefiltered brute-force suite (NVIDIA/cuvs 26.10,
// brute_force_prefiltered.cu; rows with k = 0 are vacuous there and left out; L2Sqrt maps to
// l2). Density is the nominal fraction of passing rows.
struct CuvsShape {
  uint32_t nq, rows, dim, k;
  double density;
  Metric metric;
};

const CuvsShape kCuvsShapes[] = {
    {4, 300000, 128, 16, 0.001, Metric::kL2},
    {4, 300000, 128, 16, 0.08, Metric::kL2},
    {4, 300000, 128, 16, 0.08, Metric::kInnerProduct},
    {4, 300000, 128, 16, 0.08, Metric::kCosine},
    {4, 300000, 128, 16, 0.30, Metric::kL2},
    {8, 131072, 255, 255, 0.01, Metric::kL2},
    {8, 131072, 255, 255, 0.01, Metric::kInnerProduct},
    {8, 131072, 255, 255, 0.01, Metric::kCosine},
    {2, 131072, 255, 255, 0.4, Metric::kL2},
    {8, 131072, 512, 16, 0.5, Metric::kL2},
    {16, 131072, 2052, 16, 0.2, Metric::kL2},
    {2, 8192, 255, 16, 0.01, Metric::kInnerProduct},
    {2, 8192, 255, 16, 0.4, Metric::kInnerProduct},
    {16, 8192, 512, 16, 0.5, Metric::kInnerProduct},
    {128, 8192, 2052, 16, 0.2, Metric::kInnerProduct},
    {1024, 8192, 1, 1, 0.1, Metric::kL2},
    {1024, 8192, 3, 1, 0.1, Metric::kInnerProduct},
    {1024, 8192, 5, 1, 0.1, Metric::kL2},
    {1024, 8192, 8, 1, 0.1, Metric::kCosine},
    {1024, 8192, 2050, 16, 0.4, Metric::kL2},
    {1024, 8192, 2051, 16, 0.5, Metric::kL2},
    {1024, 8192, 2052, 16, 0.2, Metric::kL2},
    {1024, 8192, 2050, 16, 0.4, Metric::kInnerProduct},
    {1024, 8192, 2051, 16, 0.5, Metric::kInnerProduct},
    {1024, 8192, 2052, 16, 0.2, Metric::kInnerProduct},
    {1024, 8192, 2050, 16, 0.4, Metric::kCosine},
    {1024, 8192, 2051, 16, 0.5, Metric::kCosine},
    {1024, 8192, 2052, 16, 0.2, Metric::kCosine},
    {1024, 8192, 1, 16, 0.5, Metric::kL2},
    {1024, 8192, 2, 16, 0.2, Metric::kL2},
    {1024, 8192, 3, 16, 0.4, Metric::kInnerProduct},
    {1024, 8192, 4, 16, 0.5, Metric::kInnerProduct},
    {1024, 8192, 5, 16, 0.2, Metric::kL2},
    {1024, 8192, 8, 16, 0.4, Metric::kL2},
    {1024, 8192, 5, 16, 0.5, Metric::kCosine},
    {1024, 8192, 8, 16, 0.2, Metric::kCosine},
};

class GpuCuvsShapeTest : public GpuExecutorTest,
                         public ::testing::WithParamInterface<std::tuple<int, DType, bool>> {};

TEST_P(GpuCuvsShapeTest, EveryPathMatchesOracle) {
  const auto [index, dtype, per_query] = GetParam();
  const CuvsShape& c = kCuvsShapes[index];
  // One key per (rows, dim, dtype): shapes that share data reuse the resident copy.
  const uint64_t key = (uint64_t{c.rows} << 24) ^ (uint64_t{c.dim} << 2) ^ static_cast<uint64_t>(dtype);
  HostShard s(c.rows, c.dim, dtype, key, 2024 + c.rows + c.dim);
  const std::vector<float> queries = test::RandomVectors(c.nq, c.dim, 7 + index);
  Filters f(c.rows, c.nq, per_query, c.density, 31 + index);
  double mean_pass = 0;
  for (uint64_t n : f.batch.passing_rows) mean_pass += static_cast<double>(n);
  mean_pass /= f.batch.passing_rows.size();
  const std::vector<uint32_t> check = QueriesToCheck(c.nq, static_cast<double>(c.nq) * mean_pass * c.dim);
  const Oracle oracle = ComputeOracle(c.metric, queries, s, f, c.k, check);
  char what[160];
  std::snprintf(what, sizeof(what), "(%u, %u, %u, %u, %.3f) %s %s %s", c.nq, c.rows, c.dim, c.k,
                c.density, MetricStr(c.metric), dtype == DType::kFloat16 ? "f16" : "f32",
                per_query ? "bitmap" : "bitset");
  for (SearchPath path : kPaths) {
    RunAndCheck(what, path, c.metric, s, f, queries, c.nq, c.k, check, oracle);
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(
    CuvsPrefilteredShapes, GpuCuvsShapeTest,
    ::testing::Combine(::testing::Range(0, static_cast<int>(std::size(kCuvsShapes))),
                       ::testing::Values(DType::kFloat32, DType::kFloat16),
                       ::testing::Bool()),
    [](const auto& info) {
      return "shape" + std::to_string(std::get<0>(info.param)) +
             (std::get<1>(info.param) == DType::kFloat16 ? "_f16" : "_f32") +
             (std::get<2>(info.param) ? "_bitmap" : "_bitset");
    });

// Nothing passing, everything passing, k above the passing count, a bitmap where some queries
// pass nothing: every path, every metric, both dtypes.
TEST_F(GpuExecutorTest, EdgeFilters) {
  const uint32_t rows = 3000, dim = 20, nq = 5;
  for (DType dtype : {DType::kFloat32, DType::kFloat16}) {
    HostShard s(rows, dim, dtype, 200 + static_cast<int>(dtype), 21);
    const std::vector<float> queries = test::RandomVectors(nq, dim, 22);
    std::vector<std::pair<std::string, Filters>> cases;
    cases.emplace_back("none pass (bitset)", Filters(rows, nq, false, 0.0, 1));
    cases.emplace_back("none pass (bitmap)", Filters(rows, nq, true, 0.0, 2));
    cases.emplace_back("all pass (bitset)", Filters(rows, nq, false, 1.0, 3));
    cases.emplace_back("all pass (bitmap)", Filters(rows, nq, true, 1.0, 4));
    cases.emplace_back("7 pass, k above (bitset)", Filters(rows, nq, false, 7.0 / rows, 5));
    {
      Filters mixed(rows, nq, true, 0.01, 6);
      mixed.sets[1] = RowSet();
      mixed.sets[3] = RowSet::Range(rows - 3, rows);  // 3 rows, at the very end
      mixed.sets[4] = RowSet::Range(0, 1);
      mixed.Rebuild();
      cases.emplace_back("bitmap with empty and tiny queries", std::move(mixed));
    }
    for (auto& [name, f] : cases) {
      f.Rebuild();  // the vector of cases moved the sets
      for (uint32_t k : {1u, 16u, 1024u}) {
        std::vector<uint32_t> check(nq);
        for (uint32_t q = 0; q < nq; ++q) check[q] = q;
        for (Metric metric : kMetrics) {
          const Oracle oracle = ComputeOracle(metric, queries, s, f, k, check);
          for (SearchPath path : kPaths) {
            RunAndCheck(name + " k=" + std::to_string(k) + " " + MetricStr(metric) +
                            (dtype == DType::kFloat16 ? " f16" : " f32"),
                        path, metric, s, f, queries, nq, k, check, oracle);
            if (HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

// A filter per query as it is uploaded (gpu/filter_pack.h): sets over several 65536-row
// chunks, sparse ones as 16-bit lists and dense ones as bitsets, repeated by content, the empty
// set, ids at the chunk edges and a set in the last, partial chunk only. Every path, metric and
// dtype against the oracle, the packing proven by its counters.
TEST_F(GpuExecutorTest, PackedPerQueryFilters) {
  const uint32_t rows = 2 * 65536 + 3000, dim = 24, nq = 9;
  for (DType dtype : {DType::kFloat32, DType::kFloat16}) {
    HostShard s(rows, dim, dtype, 400 + static_cast<int>(dtype), 51);
    const std::vector<float> queries = test::RandomVectors(nq, dim, 52);
    Filters f(rows, nq, true, 0.001, 53);
    f.sets[1] = RandomSet(rows, 0.4, 54);   // a bitset
    f.sets[2] = f.sets[0];                  // query 0's set, another copy
    f.sets[3] = RowSet();
    const uint32_t edges[] = {0, 65535, 65536, 65537, 131071, 131072, rows - 1};
    f.sets[4] = RowSet::Of(edges, sizeof(edges) / sizeof(edges[0]));
    f.sets[5] = RowSet::Range(2 * 65536, rows);
    f.sets[6] = RandomSet(rows, 0.02, 55);  // a list over every chunk
    f.sets[7] = f.sets[1];
    f.sets[8] = RandomSet(rows, 0.005, 56);
    f.Rebuild();
    for (uint32_t k : {1u, 50u}) {
      std::vector<uint32_t> check(nq);
      for (uint32_t q = 0; q < nq; ++q) check[q] = q;
      for (Metric metric : kMetrics) {
        const Oracle oracle = ComputeOracle(metric, queries, s, f, k, check);
        for (SearchPath path : kPaths) {
          const GpuPathCounts before = exec_->path_counts();
          RunAndCheck(std::string("packed k=") + std::to_string(k) + " " + MetricStr(metric) +
                          (dtype == DType::kFloat16 ? " f16" : " f32"),
                      path, metric, s, f, queries, nq, k, check, oracle);
          if (HasFatalFailure()) return;
          const GpuPathCounts after = exec_->path_counts();
          EXPECT_EQ(after.filter_list_slots - before.filter_list_slots, 6u);
          EXPECT_EQ(after.filter_bitset_slots - before.filter_bitset_slots, 1u);
          EXPECT_EQ(after.filters_shared, before.filters_shared);
        }
      }
    }
  }
}

// A filter per query of lists on the SDDMM path, uploaded in row ranges on the upload lane
// (GpuExecutorOptions::list_upload_groups) and searched a range at a time as each lands: every
// metric and dtype against the oracle, with lists that skip ranges, the empty list, one that
// lies in the last range only, and ranges asked past the shard's chunks; the ranges proven by
// their counters. Rows that are not a multiple of 16 bytes, or a bitset among the sets, keep
// one upload.
TEST_F(GpuExecutorTest, ListsInRowRangesBesideTheSddmm) {
  for (uint32_t asked : {3u, 64u}) {
    GpuExecutorOptions options;
    options.list_upload_groups = asked;
    const WithOptions with(options);
    ASSERT_TRUE(with.status().ok()) << with.status().ToString();
    const uint32_t rows = 5 * 65536 + 777, nq = 10;
    for (auto [dtype, dim] : {std::pair{DType::kFloat16, 128u}, std::pair{DType::kFloat32, 24u},
                              std::pair{DType::kFloat16, 20u}}) {
      HostShard s(rows, dim, dtype, 470 + static_cast<int>(dtype) + dim, 71);
      const std::vector<float> queries = test::RandomVectors(nq, dim, 72);
      for (bool with_bitset : {false, true}) {
        Filters f(rows, nq, true, 0.01, 73);
        f.sets[1] = RandomSet(rows, 0.002, 74);
        f.sets[2] = RowSet();
        f.sets[3] = RowSet::Range(5 * 65536 + 10, rows);  // the last range only
        const uint32_t edges[] = {0, 65535, 65536, 3 * 65536 - 1, 3 * 65536, rows - 1};
        f.sets[4] = RowSet::Of(edges, sizeof(edges) / sizeof(edges[0]));
        f.sets[5] = RowSet::Range(0, 1000);  // the first range only
        f.sets[6] = f.sets[0];
        if (with_bitset) f.sets[7] = RandomSet(rows, 0.5, 75);
        f.Rebuild();
        const bool ranged = !with_bitset && dim * (dtype == DType::kFloat16 ? 2 : 4) % 16 == 0;
        const uint64_t ranges = std::min(asked, 6u);
        for (uint32_t k : {1u, 60u}) {
          std::vector<uint32_t> check(nq);
          for (uint32_t q = 0; q < nq; ++q) check[q] = q;
          for (Metric metric : kMetrics) {
            const Oracle oracle = ComputeOracle(metric, queries, s, f, k, check);
            const GpuPathCounts before = exec_->path_counts();
            RunAndCheck(std::string("ranges ") + std::to_string(asked) + " dim " +
                            std::to_string(dim) + (with_bitset ? " with a bitset" : "") + " k=" +
                            std::to_string(k) + " " + MetricStr(metric),
                        SearchPath::kSddmm, metric, s, f, queries, nq, k, check, oracle);
            if (HasFatalFailure()) return;
            const GpuPathCounts after = exec_->path_counts();
            EXPECT_EQ(after.list_range_uploads - before.list_range_uploads, ranged ? 1u : 0u);
            EXPECT_EQ(after.list_ranges - before.list_ranges, ranged ? ranges : 0u);
          }
        }
      }
    }
  }
}

// Lists long enough, over enough queries, that the SDDMM's blocks each take several tiles of
// list positions (the next tile's ids loaded beside the current rows): a filter per query
// (lists of varied lengths, so sentinels fall inside a block's tiles, in row ranges and in one
// upload) and one shared list, every metric against the oracle, the tiled launches proven by
// their counter.
TEST_F(GpuExecutorTest, SddmmBlocksTakeSeveralTiles) {
  const uint32_t rows = 1'000'000, dim = 128;
  HostShard s(rows, dim, DType::kFloat16, 490, 81);
  struct Case {
    uint32_t nq;
    bool per_query;
    double density;
    uint32_t ranges;
  };
  for (const Case c : {Case{64, true, 0.03, 2}, Case{64, true, 0.01, 1}, Case{100, false, 0.05, 0}}) {
    GpuExecutorOptions options;
    options.list_upload_groups = c.ranges;
    const WithOptions with(options);
    ASSERT_TRUE(with.status().ok()) << with.status().ToString();
    const std::vector<float> queries = test::RandomVectors(c.nq, dim, 82);
    Filters f(rows, c.nq, c.per_query, c.density, 83);
    const std::vector<uint32_t> check = {0, 17, c.nq - 1};
    for (Metric metric : kMetrics) {
      const uint32_t k = 64;
      const Oracle oracle = ComputeOracle(metric, queries, s, f, k, check);
      const GpuPathCounts before = exec_->path_counts();
      RunAndCheck(std::string("tiles ") + (c.per_query ? "bitmap" : "bitset") + " ranges " +
                      std::to_string(c.ranges) + " " + MetricStr(metric),
                  SearchPath::kSddmm, metric, s, f, queries, c.nq, k, check, oracle);
      if (HasFatalFailure()) return;
      const GpuPathCounts after = exec_->path_counts();
      EXPECT_GE(after.sddmm_tiled_launches - before.sddmm_tiled_launches, 1u);
      EXPECT_EQ(after.list_range_uploads - before.list_range_uploads,
                c.per_query && c.ranges > 1 ? 1u : 0u);
    }
  }
}

// A filter per query whose queries all have the same set (here: equal copies) is searched as
// one filter, and gives the same answers.
TEST_F(GpuExecutorTest, IdenticalPerQueryFiltersSearchAsOne) {
  const uint32_t rows = 70000, dim = 16, nq = 6;
  HostShard s(rows, dim, DType::kFloat16, 450, 61);
  const std::vector<float> queries = test::RandomVectors(nq, dim, 62);
  for (double density : {0.0005, 0.05, 0.7}) {
    Filters f(rows, nq, true, density, 63);
    for (uint32_t q = 1; q < nq; ++q) f.sets[q] = f.sets[0];
    f.Rebuild();
    const uint32_t k = 20;
    std::vector<uint32_t> check(nq);
    for (uint32_t q = 0; q < nq; ++q) check[q] = q;
    for (Metric metric : kMetrics) {
      const Oracle oracle = ComputeOracle(metric, queries, s, f, k, check);
      for (SearchPath path : kPaths) {
        const GpuPathCounts before = exec_->path_counts();
        RunAndCheck("same set density " + std::to_string(density) + " " + MetricStr(metric), path,
                    metric, s, f, queries, nq, k, check, oracle);
        if (HasFatalFailure()) return;
        const GpuPathCounts after = exec_->path_counts();
        EXPECT_EQ(after.filters_shared - before.filters_shared, 1u);
        EXPECT_EQ(after.filter_list_slots, before.filter_list_slots);
        EXPECT_EQ(after.filter_bitset_slots, before.filter_bitset_slots);
      }
    }
  }
}

// Enough queries and rows that the dense and gather paths run several tiles and merge them.
TEST_F(GpuExecutorTest, SeveralDenseTilesMerge) {
  const uint32_t rows = 600000, dim = 8, nq = 1024, k = 64;
  for (DType dtype : {DType::kFloat32, DType::kFloat16}) {
    HostShard s(rows, dim, dtype, 300 + static_cast<int>(dtype), 41);
    const std::vector<float> queries = test::RandomVectors(nq, dim, 42);
    for (bool per_query : {false, true}) {
      Filters f(rows, nq, per_query, 0.6, 43);
      const std::vector<uint32_t> check = QueriesToCheck(nq, 1e10);
      const Oracle oracle = ComputeOracle(Metric::kL2, queries, s, f, k, check);
      for (SearchPath path : {SearchPath::kGather, SearchPath::kDense}) {
        RunAndCheck(std::string(dtype == DType::kFloat16 ? "f16" : "f32") +
                        (per_query ? " bitmap" : " bitset"),
                    path, Metric::kL2, s, f, queries, nq, k, check, oracle);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// Candidate selection (gather and dense over many columns). Random rows: it runs and keeps few
// enough rows not to fall back. Rows ordered so that the first columns (the exact sample that
// sets the thresholds) are the worst: nearly every row is kept, lists overflow, and the chunk
// falls back to the full path. Both must be exact.
// Far more exact ties than k at the k-th place: every 50th of 200,000 rows is one vector u and
// the queries are u (float16: exact halves), so the top 32 are 32 of the ~1,600 passing copies,
// all at one distance. Candidate selection's sample threshold is that distance, and its last
// select must take k slots equal to it (SelectRowsKernel's equal-key branch; the threshold
// path's band likewise).
TEST_F(GpuExecutorTest, CandidateSelectionManyTiesAtTheKth) {
  const uint32_t rows = 200000, dim = 16, nq = 8, k = 32;
  for (DType dtype : {DType::kFloat16, DType::kFloat32}) {
    HostShard s(rows, dim, dtype, 900 + static_cast<int>(dtype), 91, false);
    const std::vector<float> u = test::RandomVectors(1, dim, 92);
    std::vector<float> uh(u);
    if (dtype == DType::kFloat16) {
      for (float& x : uh) x = RoundToHalf(x);
    }
    for (uint32_t r = 0; r < rows; r += 50) {
      std::copy(uh.begin(), uh.end(), s.data.begin() + size_t{r} * dim);
      double acc = 0;
      for (float x : uh) acc += double{x} * x;
      s.sq_norms[r] = static_cast<float>(acc);
    }
    std::vector<float> queries;
    for (uint32_t q = 0; q < nq; ++q) queries.insert(queries.end(), uh.begin(), uh.end());
    for (bool per_query : {false, true}) {
      Filters f(rows, nq, per_query, 0.4, 93);
      std::vector<uint32_t> check(nq);
      for (uint32_t q = 0; q < nq; ++q) check[q] = q;
      for (Metric metric : {Metric::kL2, Metric::kCosine}) {
        const Oracle oracle = ComputeOracle(metric, queries, s, f, k, check);
        for (SearchPath path : {SearchPath::kGather, SearchPath::kDense}) {
          RunAndCheck(std::string("ties ") + MetricStr(metric) +
                          (dtype == DType::kFloat16 ? " f16" : " f32") +
                          (per_query ? " bitmap" : " bitset"),
                      path, metric, s, f, queries, nq, k, check, oracle);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST_F(GpuExecutorTest, CandidateSelectionAndFallback) {
  {
    // 200,003 rows: the dense scan's last columns are a partial group of four (and of sixteen,
    // CandidateKernel's columns a thread) and a partial page.
    const uint32_t rows = 200003, dim = 16, k = 32;
    // 8, 40 and 100 queries: the fused float16 kernel's 2, 4 and 8 fragments of 16 queries.
    for (auto [dtype, nq] : {std::pair{DType::kFloat32, 8u}, std::pair{DType::kFloat16, 8u},
                             std::pair{DType::kFloat16, 40u}, std::pair{DType::kFloat16, 100u}}) {
      HostShard s(rows, dim, dtype, 600 + static_cast<int>(dtype), 71);
      const std::vector<float> queries = test::RandomVectors(nq, dim, 72);
      for (bool per_query : {false, true}) {
        // 0.4 of 200k rows: the gather path over a bitset sees about 80k columns, above the
        // executor's minimum for candidate selection (65,536).
        Filters f(rows, nq, per_query, 0.4, 73);
        std::vector<uint32_t> check(nq);
        for (uint32_t q = 0; q < nq; ++q) check[q] = q;
        for (Metric metric : kMetrics) {
          const Oracle oracle = ComputeOracle(metric, queries, s, f, k, check);
          for (SearchPath path : {SearchPath::kGather, SearchPath::kDense}) {
            const GpuPathCounts before = exec_->path_counts();
            RunAndCheck(std::string("random ") + MetricStr(metric) +
                            (dtype == DType::kFloat16 ? " f16" : " f32") +
                            (per_query ? " bitmap" : " bitset"),
                        path, metric, s, f, queries, nq, k, check, oracle);
            if (HasFatalFailure()) return;
            const GpuPathCounts after = exec_->path_counts();
            EXPECT_EQ(after.candidate_chunks - before.candidate_chunks, 1u);
            EXPECT_EQ(after.candidate_fallbacks - before.candidate_fallbacks, 0u);
            // float32 rows, cosine: the scan's float32 distances are exact, nothing is
            // rescored; l2 and ip scan on TF32 tensor cores. TF32 and float16: the band
            // rescored holds at least k rows a query, and fewer than the scan kept.
            const uint64_t kept = after.candidate_rows_kept - before.candidate_rows_kept;
            const uint64_t band = after.candidate_band_rows - before.candidate_band_rows;
            const bool tf32 = dtype == DType::kFloat32 && metric != Metric::kCosine;
            EXPECT_EQ(after.candidate_tf32 - before.candidate_tf32, tf32 ? 1u : 0u);
            if (dtype == DType::kFloat32 && !tf32) {
              EXPECT_GT(kept, 0u);
              EXPECT_EQ(band, 0u);
            } else if (after.threshold_chunks != before.threshold_chunks) {
              EXPECT_EQ(kept, 0u);
              EXPECT_GE(band, uint64_t{nq} * k);
            } else {
              EXPECT_GE(band, uint64_t{nq} * k);
              EXPECT_LT(band, kept);
            }
          }
        }
      }
    }
  }
  {
    const uint32_t rows = 200000, dim = 4, nq = 6, k = 16;
    const float v[dim] = {0.5f, 1.0f, 0.5f, 1.0f};
    for (DType dtype : {DType::kFloat32, DType::kFloat16}) {
      HostShard s(rows, dim, dtype, 700 + static_cast<int>(dtype), 81, false);
      for (uint32_t r = 0; r < rows; ++r) {
        double acc = 0;
        for (uint32_t d = 0; d < dim; ++d) {
          float x = v[d] * static_cast<float>(r) / rows;
          if (dtype == DType::kFloat16) x = RoundToHalf(x);
          s.data[size_t{r} * dim + d] = x;
          acc += double{x} * x;
        }
        s.sq_norms[r] = static_cast<float>(acc);
      }
      // Queries beyond the last row along v: distances fall and dot products grow with the row.
      std::vector<float> queries = test::RandomVectors(nq, dim, 82);
      for (uint32_t i = 0; i < nq * dim; ++i) queries[i] = 1.5f * v[i % dim] + 0.01f * queries[i];
      for (bool per_query : {false, true}) {
        Filters f(rows, nq, per_query, 0.5, 83);
        std::vector<uint32_t> check(nq);
        for (uint32_t q = 0; q < nq; ++q) check[q] = q;
        for (Metric metric : {Metric::kL2, Metric::kInnerProduct}) {
          const Oracle oracle = ComputeOracle(metric, queries, s, f, k, check);
          for (SearchPath path : {SearchPath::kGather, SearchPath::kDense}) {
            const GpuPathCounts before = exec_->path_counts();
            RunAndCheck(std::string("ordered ") + MetricStr(metric) +
                            (dtype == DType::kFloat16 ? " f16" : " f32") +
                            (per_query ? " bitmap" : " bitset"),
                        path, metric, s, f, queries, nq, k, check, oracle);
            if (HasFatalFailure()) return;
            const GpuPathCounts after = exec_->path_counts();
            EXPECT_EQ(after.candidate_chunks - before.candidate_chunks, 1u);
            EXPECT_EQ(after.candidate_fallbacks - before.candidate_fallbacks, 1u);
          }
        }
      }
    }
  }
}

// The radix selects of candidate selection over long rows: at a million columns the sample
// (16,384 keys at k = 64, 65,536 at k = 1,024) and the candidate lists (as long) are kept in
// shared memory above the 48 KB a launch gets by default, or, past what a block may have at all,
// read from global memory each pass (k = 1,024). float32 rows (exact scan distances, the lists
// selected whole) and float16 rows (the band and its select), l2 and ip, the threshold select
// off so that float16 rows take the scan too.
TEST_F(GpuExecutorTest, CandidateSelectsOverLongRows) {
  GpuExecutorOptions options;
  options.threshold_select = false;
  const WithOptions with(options);
  ASSERT_TRUE(with.status().ok()) << with.status().ToString();
  const uint32_t rows = 1'000'000, dim = 16, nq = 4;
  std::vector<uint32_t> check(nq);
  for (uint32_t q = 0; q < nq; ++q) check[q] = q;
  for (DType dtype : {DType::kFloat32, DType::kFloat16}) {
    HostShard s(rows, dim, dtype, 1500 + static_cast<int>(dtype), 151, false);
    const std::vector<float> queries = test::RandomVectors(nq, dim, 152);
    Filters f(rows, nq, false, 0.95, 153);
    for (uint32_t k : {64u, 1024u}) {
      for (Metric metric : {Metric::kL2, Metric::kInnerProduct}) {
        const Oracle oracle = ComputeOracle(metric, queries, s, f, k, check);
        const GpuPathCounts before = exec_->path_counts();
        RunAndCheck(std::string("long rows k ") + std::to_string(k) + " " + MetricStr(metric) +
                        (dtype == DType::kFloat16 ? " f16" : " f32"),
                    SearchPath::kDense, metric, s, f, queries, nq, k, check, oracle);
        if (HasFatalFailure()) return;
        const GpuPathCounts after = exec_->path_counts();
        EXPECT_EQ(after.candidate_chunks - before.candidate_chunks, 1u);
        EXPECT_EQ(after.candidate_fallbacks - before.candidate_fallbacks, 0u);
        EXPECT_GE(after.candidate_rows_kept - before.candidate_rows_kept, uint64_t{nq} * k);
      }
    }
  }
}

// Dense over float16 rows of more dims than the tensor-core threshold select takes (264, 512)
// keeps candidate selection: the scan keeps the rows that can beat each query's sample
// threshold, and only the band within twice the error bound of the k-th best computed distance
// is rescored exactly, fewer rows than were kept (proven by the counters); l2 and ip scan
// float16 dot products where no product can overflow them. Exact for every metric, k 1 and 100,
// bitset and bitmap. Random rows only: a zero row would be every query's nearest by far under
// l2, and at k = 1 the only row kept.
TEST_F(GpuExecutorTest, CandidateBandAtHighDims) {
  const uint32_t rows = 140000, nq = 20;
  for (uint32_t dim : {264u, 512u}) {
    HostShard s(rows, dim, DType::kFloat16, 1300 + dim, 131, false);
    const std::vector<float> queries = test::RandomVectors(nq, dim, 132);
    for (bool per_query : {false, true}) {
      Filters f(rows, nq, per_query, 0.6, 133);
      std::vector<uint32_t> check(nq);
      for (uint32_t q = 0; q < nq; ++q) check[q] = q;
      for (uint32_t k : {1u, 100u}) {
        for (Metric metric : kMetrics) {
          const Oracle oracle = ComputeOracle(metric, queries, s, f, k, check);
          const GpuPathCounts before = exec_->path_counts();
          RunAndCheck("dim " + std::to_string(dim) + " k " + std::to_string(k) + " " +
                          MetricStr(metric) + (per_query ? " bitmap" : " bitset"),
                      SearchPath::kDense, metric, s, f, queries, nq, k, check, oracle);
          if (HasFatalFailure()) return;
          const GpuPathCounts after = exec_->path_counts();
          EXPECT_EQ(after.candidate_chunks - before.candidate_chunks, 1u);
          EXPECT_EQ(after.threshold_chunks - before.threshold_chunks, 0u);
          EXPECT_EQ(after.candidate_fallbacks - before.candidate_fallbacks, 0u);
          const uint64_t kept = after.candidate_rows_kept - before.candidate_rows_kept;
          const uint64_t band = after.candidate_band_rows - before.candidate_band_rows;
          EXPECT_GE(band, uint64_t{nq} * k);
          EXPECT_LT(band, kept);
          // l2 and ip scan float16 dot products (these norms cannot overflow them); cosine
          // keeps float32 ones.
          EXPECT_EQ(after.candidate_half_dots - before.candidate_half_dots,
                    metric == Metric::kCosine ? 0u : 1u);
        }
      }
    }
  }
  // Rows 512 times larger (still exact in float16): a product could pass float16's range, so
  // the scan keeps float32 dot products, and stays exact.
  const uint32_t dim = 512;
  HostShard s(rows, dim, DType::kFloat16, 1400, 141, false);
  for (float& x : s.data) x *= 512.0f;
  for (float& n : s.sq_norms) n *= 512.0f * 512.0f;
  const std::vector<float> queries = test::RandomVectors(nq, dim, 142);
  Filters f(rows, nq, false, 0.6, 143);
  std::vector<uint32_t> check(nq);
  for (uint32_t q = 0; q < nq; ++q) check[q] = q;
  for (Metric metric : {Metric::kL2, Metric::kInnerProduct}) {
    const Oracle oracle = ComputeOracle(metric, queries, s, f, 64, check);
    const GpuPathCounts before = exec_->path_counts();
    RunAndCheck(std::string("large rows ") + MetricStr(metric), SearchPath::kDense, metric, s, f,
                queries, nq, 64, check, oracle);
    if (HasFatalFailure()) return;
    const GpuPathCounts after = exec_->path_counts();
    EXPECT_EQ(after.candidate_chunks - before.candidate_chunks, 1u);
    EXPECT_EQ(after.candidate_half_dots - before.candidate_half_dots, 0u);
    EXPECT_LT(after.candidate_band_rows - before.candidate_band_rows,
              after.candidate_rows_kept - before.candidate_rows_kept);
  }
}

// Float32 rows, l2 and ip: the candidate scan multiplies on TF32 tensor cores (inputs of 10
// mantissa bits), keeps the rows its widened error bound cannot rule out, and rescores the band
// within twice that bound of the k-th best exactly in float32, fewer rows than it kept; cosine
// keeps the float32 scan (exact distances, no band). Dense and gather, dims 264 and 1,024, k 1
// and 100, bitset and bitmap, then rows 2^20 times larger (the bound is relative) and the scan
// in float32 when candidate_tf32 is off. Every answer exact.
TEST_F(GpuExecutorTest, Tf32ScanOfFloat32Rows) {
  const uint32_t rows = 140000, nq = 12;
  std::vector<uint32_t> check(nq);
  for (uint32_t q = 0; q < nq; ++q) check[q] = q;
  auto run = [&](const std::string& what, const HostShard& s, const std::vector<float>& queries,
                 const Filters& f, uint32_t k, Metric metric, SearchPath path, bool tf32,
                 const Oracle& oracle) {
    const bool per_query = f.batch.per_query();
    const GpuPathCounts before = exec_->path_counts();
    RunAndCheck(what + " k " + std::to_string(k) + " " + MetricStr(metric) +
                    (per_query ? " bitmap" : " bitset"),
                path, metric, s, f, queries, nq, k, check, oracle);
    if (HasFatalFailure()) return;
    const GpuPathCounts after = exec_->path_counts();
    EXPECT_EQ(after.candidate_chunks - before.candidate_chunks, 1u);
    EXPECT_EQ(after.candidate_fallbacks - before.candidate_fallbacks, 0u);
    const bool on = tf32 && metric != Metric::kCosine;
    EXPECT_EQ(after.candidate_tf32 - before.candidate_tf32, on ? 1u : 0u);
    const uint64_t kept = after.candidate_rows_kept - before.candidate_rows_kept;
    const uint64_t band = after.candidate_band_rows - before.candidate_band_rows;
    if (on) {
      EXPECT_GE(band, uint64_t{nq} * k);
      EXPECT_LT(band, kept);
    } else {
      EXPECT_GE(kept, uint64_t{nq} * k);
      EXPECT_EQ(band, 0u);
    }
  };
  for (uint32_t dim : {264u, 1024u}) {
    HostShard s(rows, dim, DType::kFloat32, 1600 + dim, 161, false);
    const std::vector<float> queries = test::RandomVectors(nq, dim, 162);
    for (bool per_query : {false, true}) {
      const Filters f(rows, nq, per_query, 0.7, 163);
      for (uint32_t k : {1u, 100u}) {
        for (Metric metric : kMetrics) {
          const Oracle oracle = ComputeOracle(metric, queries, s, f, k, check);
          for (SearchPath path : {SearchPath::kDense, SearchPath::kGather}) {
            run("dim " + std::to_string(dim) + " " + PathStr(path), s, queries, f, k, metric,
                path, true, oracle);
            if (HasFatalFailure()) return;
          }
        }
      }
    }
  }
  const uint32_t dim = 264;
  HostShard big(rows, dim, DType::kFloat32, 1700, 171, false);
  for (float& x : big.data) x *= 0x1p20f;
  for (float& n : big.sq_norms) n *= 0x1p40f;
  const std::vector<float> queries = test::RandomVectors(nq, dim, 172);
  const Filters bitset(rows, nq, false, 0.7, 173);
  for (Metric metric : {Metric::kL2, Metric::kInnerProduct}) {
    run("large rows", big, queries, bitset, 64, metric, SearchPath::kDense, true,
        ComputeOracle(metric, queries, big, bitset, 64, check));
    if (HasFatalFailure()) return;
  }
  GpuExecutorOptions options;
  options.candidate_tf32 = false;
  const WithOptions with(options);
  ASSERT_TRUE(with.status().ok()) << with.status().ToString();
  HostShard s(rows, dim, DType::kFloat32, 1800, 181, false);
  const Filters bitmap(rows, nq, true, 0.7, 183);
  for (Metric metric : {Metric::kL2, Metric::kInnerProduct}) {
    run("float32 scan", s, queries, bitmap, 64, metric, SearchPath::kDense, false,
        ComputeOracle(metric, queries, s, bitmap, 64, check));
    if (HasFatalFailure()) return;
  }
}

// The dense path over float16 rows selects through gpu::ThresholdSelect (tensor-core kernel:
// dim % 8 == 0, dim <= 256): a sample threshold, one pass over every row, the band rescored.
// Two query tiles (150 queries, the second partial), dims 40 and 128, k 1 and 64, bitset and
// bitmap, every metric, with the zero and duplicate rows; then rows ordered so that the sample
// is the worst possible, where the candidates overflow and the search falls back.
TEST_F(GpuExecutorTest, ThresholdSelectDensePath) {
  {
    const uint32_t rows = 140000, nq = 150;
    for (uint32_t dim : {40u, 128u}) {
      HostShard s(rows, dim, DType::kFloat16, 900 + dim, 91);
      const std::vector<float> queries = test::RandomVectors(nq, dim, 92);
      const std::vector<uint32_t> check = {0, 1, 77, 127, 128, 149};
      for (bool per_query : {false, true}) {
        Filters f(rows, nq, per_query, 0.6, 93);
        for (uint32_t k : {1u, 64u}) {
          for (Metric metric : kMetrics) {
            SCOPED_TRACE(std::string("threshold ") + MetricStr(metric) + " dim " +
                         std::to_string(dim) + " k " + std::to_string(k) +
                         (per_query ? " bitmap" : " bitset"));
            const Oracle oracle = ComputeOracle(metric, queries, s, f, k, check);
            const GpuPathCounts before = exec_->path_counts();
            ExecResult result;
            RunAndCheck(std::string("threshold ") + MetricStr(metric) + " dim " +
                            std::to_string(dim) + " k " + std::to_string(k) +
                            (per_query ? " bitmap" : " bitset"),
                        SearchPath::kDense, metric, s, f, queries, nq, k, check, oracle, &result);
            if (HasFatalFailure()) return;
            const GpuPathCounts after = exec_->path_counts();
            EXPECT_EQ(after.threshold_chunks - before.threshold_chunks, 1u);
            EXPECT_EQ(after.candidate_fallbacks - before.candidate_fallbacks, 0u);
            EXPECT_EQ(result.select, "threshold");
            EXPECT_EQ(result.select_plan.rfind("threshold: ", 0), 0u) << result.select_plan;
          }
        }
      }
    }
  }
  {
    const uint32_t rows = 150000, dim = 8, nq = 5, k = 16;
    HostShard s(rows, dim, DType::kFloat16, 950, 95, false);
    for (uint32_t r = 0; r < rows; ++r) {
      double acc = 0;
      for (uint32_t d = 0; d < dim; ++d) {
        const float x = RoundToHalf((d % 2 ? 1.0f : 0.5f) * static_cast<float>(r) / rows);
        s.data[size_t{r} * dim + d] = x;
        acc += double{x} * x;
      }
      s.sq_norms[r] = static_cast<float>(acc);
    }
    std::vector<float> queries = test::RandomVectors(nq, dim, 96);
    for (uint32_t i = 0; i < nq * dim; ++i) {
      queries[i] = 1.5f * (i % 2 ? 1.0f : 0.5f) + 0.01f * queries[i];
    }
    Filters f(rows, nq, false, 0.5, 97);
    const std::vector<uint32_t> check = {0, 4};
    for (Metric metric : {Metric::kL2, Metric::kInnerProduct}) {
      const GpuPathCounts before = exec_->path_counts();
      ExecResult result;
      RunAndCheck(std::string("ordered threshold ") + MetricStr(metric), SearchPath::kDense,
                  metric, s, f, queries, nq, k, check,
                  ComputeOracle(metric, queries, s, f, k, check), &result);
      if (HasFatalFailure()) return;
      const GpuPathCounts after = exec_->path_counts();
      EXPECT_EQ(after.threshold_chunks - before.threshold_chunks, 1u);
      EXPECT_EQ(after.candidate_fallbacks - before.candidate_fallbacks, 1u);
      EXPECT_EQ(result.select, "select_k");
      EXPECT_NE(result.select_plan.find("threshold select overflowed"), std::string::npos)
          << result.select_plan;
    }
  }
}

// With threshold_gather_min_rows 0 the gather path over a bitset selects through the threshold
// select at any size (the gathered block as pages, positions mapped back to ordinals before the
// exact rescoring); over a bitmap it keeps candidate selection.
TEST_F(GpuExecutorTest, ThresholdSelectGatherPath) {
  GpuExecutorOptions options;
  options.threshold_gather_min_rows = 0;
  const WithOptions with(options);
  ASSERT_TRUE(with.status().ok()) << with.status().ToString();
  const uint32_t rows = 300000, dim = 128, nq = 150;
  HostShard s(rows, dim, DType::kFloat16, 960, 98);
  const std::vector<float> queries = test::RandomVectors(nq, dim, 99);
  const std::vector<uint32_t> check = {0, 63, 128, 149};
  for (bool per_query : {false, true}) {
    Filters f(rows, nq, per_query, 0.3, 100);  // ~90k gathered columns
    for (uint32_t k : {1u, 64u}) {
      for (Metric metric : kMetrics) {
        SCOPED_TRACE(std::string("threshold gather ") + MetricStr(metric) + " k " +
                     std::to_string(k) + (per_query ? " bitmap" : " bitset"));
        const GpuPathCounts before = exec_->path_counts();
        ExecResult result;
        RunAndCheck("threshold gather", SearchPath::kGather, metric, s, f, queries, nq, k, check,
                    ComputeOracle(metric, queries, s, f, k, check), &result);
        if (HasFatalFailure()) return;
        const GpuPathCounts after = exec_->path_counts();
        EXPECT_EQ(after.threshold_chunks - before.threshold_chunks, per_query ? 0u : 1u);
        EXPECT_EQ(after.candidate_fallbacks - before.candidate_fallbacks, 0u);
        EXPECT_EQ(result.select, per_query ? "candidates" : "threshold");
      }
    }
  }
}

// By default the gather path over a bitset takes the threshold select from 262,144 gathered rows
// up (where it measured faster), candidate selection below; threshold_gather_min_rows UINT64_MAX
// keeps candidate selection at any size.
TEST_F(GpuExecutorTest, ThresholdGatherDefaultBySize) {
  const uint32_t rows = 400000, dim = 32, nq = 20, k = 64;
  HostShard s(rows, dim, DType::kFloat16, 970, 101);
  const std::vector<float> queries = test::RandomVectors(nq, dim, 102);
  const std::vector<uint32_t> check = {0, 7, 19};
  struct Case {
    double density;      // of 400,000 rows
    uint64_t min_rows;   // GpuExecutorOptions::threshold_gather_min_rows
    bool threshold;      // expected: the threshold select ran
  };
  const uint64_t kDefault = GpuExecutorOptions().threshold_gather_min_rows;
  const uint64_t kNever = std::numeric_limits<uint64_t>::max();
  for (const Case& c : {Case{0.8, kDefault, true}, Case{0.5, kDefault, false},
                        Case{0.8, kNever, false}}) {
    GpuExecutorOptions options;
    options.threshold_gather_min_rows = c.min_rows;
    const WithOptions with(options);
    ASSERT_TRUE(with.status().ok()) << with.status().ToString();
    Filters f(rows, nq, false, c.density, 103);
    SCOPED_TRACE("gathered rows " + std::to_string(f.batch.passing_rows[0]) + " min rows " +
                 std::to_string(c.min_rows));
    ASSERT_EQ(f.batch.passing_rows[0] >= (uint64_t{1} << 18), c.density > 0.7);
    const GpuPathCounts before = exec_->path_counts();
    ExecResult result;
    RunAndCheck("gather by size", SearchPath::kGather, Metric::kL2, s, f, queries, nq, k, check,
                ComputeOracle(Metric::kL2, queries, s, f, k, check), &result);
    if (HasFatalFailure()) return;
    const GpuPathCounts after = exec_->path_counts();
    EXPECT_EQ(after.threshold_chunks - before.threshold_chunks, c.threshold ? 1u : 0u);
    EXPECT_EQ(after.candidate_chunks - before.candidate_chunks, 1u);
    EXPECT_EQ(after.candidate_fallbacks - before.candidate_fallbacks, 0u);
    EXPECT_EQ(result.select, c.threshold ? "threshold" : "candidates");
  }
}

// Appending rows uploads only the new rows; the next search sees them.
TEST_F(GpuExecutorTest, AppendUploadsOnlyNewRows) {
  const uint32_t dim = 24, nq = 3, k = 20;
  HostShard all(4000, dim, DType::kFloat16, 400, 51, false);
  HostShard s(2500, dim, DType::kFloat16, 400, 51, false);  // the same rows, fewer of them
  ASSERT_TRUE(std::equal(s.data.begin(), s.data.end(), all.data.begin()));
  const std::vector<float> queries = test::RandomVectors(nq, dim, 52);
  std::vector<uint32_t> check = {0, 1, 2};

  Filters f1(2500, nq, false, 0.5, 53);
  const uint64_t up0 = exec_->uploaded_rows();
  RunAndCheck("before append", SearchPath::kDense, Metric::kL2, s, f1, queries, nq, k, check,
              ComputeOracle(Metric::kL2, queries, s, f1, k, check));
  EXPECT_EQ(exec_->uploaded_rows() - up0, 2500u);

  // Same generation, same rows: nothing uploaded.
  RunAndCheck("again", SearchPath::kSddmm, Metric::kL2, s, f1, queries, nq, k, check,
              ComputeOracle(Metric::kL2, queries, s, f1, k, check));
  EXPECT_EQ(exec_->uploaded_rows() - up0, 2500u);

  all.view.generation = 2;
  Filters f2(4000, nq, false, 0.5, 54);
  RunAndCheck("after append", SearchPath::kGather, Metric::kL2, all, f2, queries, nq, k, check,
              ComputeOracle(Metric::kL2, queries, all, f2, k, check));
  EXPECT_EQ(exec_->uploaded_rows() - up0, 4000u) << "an append re-uploaded old rows";

  // Rows only in the appended part must be findable: a filter of the new rows only.
  Filters f3(4000, nq, false, 1.0, 55);
  f3.sets[0] = RowSet::Range(2500, 4000);
  f3.Rebuild();
  RunAndCheck("new rows only", SearchPath::kDense, Metric::kInnerProduct, all, f3, queries, nq, k,
              check, ComputeOracle(Metric::kInnerProduct, queries, all, f3, k, check));
  EXPECT_EQ(exec_->uploaded_rows() - up0, 4000u);
  EXPECT_GT(exec_->resident_bytes(), 0u);

  // An older snapshot (same generation, fewer rows) reads a prefix of the resident rows: the
  // dense path must not scan the rows after it.
  HostShard prefix(2500, dim, DType::kFloat16, 400, 51, false);
  prefix.view.generation = 2;
  Filters f4(2500, nq, false, 1.0, 56);
  for (SearchPath path : kPaths) {
    RunAndCheck("older snapshot", path, Metric::kL2, prefix, f4, queries, nq, k, check,
                ComputeOracle(Metric::kL2, queries, prefix, f4, k, check));
  }
  EXPECT_EQ(exec_->uploaded_rows() - up0, 4000u);
}

// Resident rows span many slabs (64 KiB slabs: 40- and 80-byte rows make slabs of 1024 and 512
// rows, rounded down to a power-of-two number of pages), so every kernel that reads resident
// rows, the GEMM tiles cut at slab ends, candidate selection and an append that starts mid-page
// and mid-slab all cross slab boundaries.
TEST_F(GpuExecutorTest, SmallSlabsCrossBoundaries) {
  GpuExecutorOptions options;
  options.resident_slab_bytes = size_t{64} << 10;
  const WithOptions with(options);
  ASSERT_TRUE(with.status().ok()) << with.status().ToString();
  const uint32_t dim = 20, nq = 8, k = 10;
  std::vector<uint32_t> check(nq);
  for (uint32_t q = 0; q < nq; ++q) check[q] = q;
  for (DType dtype : {DType::kFloat32, DType::kFloat16}) {
    const char* dt = dtype == DType::kFloat16 ? " f16" : " f32";
    const uint64_t key = 900 + static_cast<int>(dtype);
    HostShard first(70000, dim, dtype, key, 91);
    HostShard all(90000, dim, dtype, key, 91);  // the same rows, and 20,000 more
    ASSERT_TRUE(std::equal(first.data.begin(), first.data.end(), all.data.begin()));
    const std::vector<float> queries = test::RandomVectors(nq, dim, 92);
    const uint64_t up0 = exec_->uploaded_rows();

    Filters f0(70000, nq, false, 0.9, 93);
    RunAndCheck(std::string("first") + dt, SearchPath::kDense, Metric::kL2, first, f0, queries,
                nq, k, check, ComputeOracle(Metric::kL2, queries, first, f0, k, check));
    if (HasFatalFailure()) return;
    EXPECT_EQ(exec_->uploaded_rows() - up0, 70000u);

    // 70,000 = 1093 pages + 48 rows: the append starts mid-page.
    all.view.generation = 2;
    for (bool per_query : {false, true}) {
      Filters f(90000, nq, per_query, 0.9, 94);
      for (Metric metric : kMetrics) {
        const Oracle oracle = ComputeOracle(metric, queries, all, f, k, check);
        for (SearchPath path : kPaths) {
          const GpuPathCounts before = exec_->path_counts();
          RunAndCheck(std::string("appended ") + MetricStr(metric) + dt +
                          (per_query ? " bitmap" : " bitset"),
                      path, metric, all, f, queries, nq, k, check, oracle);
          if (HasFatalFailure()) return;
          const GpuPathCounts after = exec_->path_counts();
          EXPECT_EQ(after.candidate_chunks - before.candidate_chunks,
                    path == SearchPath::kSddmm ? 0u : 1u);
        }
      }
    }
    EXPECT_EQ(exec_->uploaded_rows() - up0, 90000u) << "an append re-uploaded old rows";
    EXPECT_GT(exec_->resident_bytes(), 0u);

    // An older snapshot below the candidate minimum: the full dense path, its tiles cut at
    // every slab end, and the full gather path.
    HostShard prefix(60000, dim, dtype, key, 91);
    prefix.view.generation = 2;
    Filters fp(60000, nq, false, 0.9, 95);
    for (Metric metric : kMetrics) {
      const Oracle oracle = ComputeOracle(metric, queries, prefix, fp, k, check);
      for (SearchPath path : kPaths) {
        const GpuPathCounts before = exec_->path_counts();
        RunAndCheck(std::string("prefix ") + MetricStr(metric) + dt, path, metric, prefix, fp,
                    queries, nq, k, check, oracle);
        if (HasFatalFailure()) return;
        EXPECT_EQ(exec_->path_counts().candidate_chunks - before.candidate_chunks, 0u);
      }
    }
    EXPECT_EQ(exec_->uploaded_rows() - up0, 90000u);
  }
}

// Profile runs the search warmup + reps times, timing each run and, asked, the stages of the
// last; its results are the search's.
TEST_F(GpuExecutorTest, ProfileTimesRunsAndStages) {
  const uint32_t rows = 5000, dim = 16, nq = 4, k = 8;
  HostShard s(rows, dim, DType::kFloat32, 980, 104);
  const std::vector<float> queries = test::RandomVectors(nq, dim, 105);
  Filters f(rows, nq, false, 0.3, 106);
  for (SearchPath path : kPaths) {
    SCOPED_TRACE(PathStr(path));
    ExecRequest req{queries.data(), nq, k, Metric::kL2, path};
    PlanRequest(*exec_, s.view, f.batch, &req);
    ExecResult searched;
    ASSERT_TRUE(exec_->Search(s.view, f.batch, req, &searched).ok());
    ProfileOptions po;
    po.warmup = 1;
    po.reps = 3;
    po.stages = true;
    ExecProfile profile;
    const GpuPathCounts before = exec_->path_counts();
    Status st = exec_->Profile(s.view, f.batch, req, po, &profile);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(exec_->path_counts().sddmm - before.sddmm, path == SearchPath::kSddmm ? 1u : 0u);
    ASSERT_EQ(profile.ms.size(), 3u);
    for (double ms : profile.ms) EXPECT_GT(ms, 0.0);
    ASSERT_FALSE(profile.stages.empty());
    EXPECT_EQ(profile.stages.front().first, "upload");
    EXPECT_EQ(profile.stages.back().first, "download");
    EXPECT_EQ(profile.result.neighbors, searched.neighbors);
  }
  ExecProfile profile;
  ExecRequest req{queries.data(), nq, k, Metric::kL2, SearchPath::kDense};
  EXPECT_TRUE(exec_->Profile(s.view, f.batch, req, ProfileOptions{0, 0, false}, &profile)
                  .IsInvalidArgument());
}

TEST_F(GpuExecutorTest, RejectsBadOptions) {
  GpuExecutorOptions options;
  options.threshold_max_levels = 9;
  std::unique_ptr<GpuExecutor> e;
  EXPECT_TRUE(GpuExecutor::Create(options, &e).IsInvalidArgument());
  EXPECT_EQ(e, nullptr);
}

TEST_F(GpuExecutorTest, RejectsBadRequests) {
  HostShard s(100, 4, DType::kFloat32, 500, 61);
  const std::vector<float> queries = test::RandomVectors(2, 4, 62);
  Filters f(100, 2, false, 0.5, 63);
  ExecRequest req{queries.data(), 2, 0, Metric::kL2, SearchPath::kDense};
  ExecResult r;
  EXPECT_TRUE(exec_->Search(s.view, f.batch, req, &r).IsInvalidArgument());  // k == 0
  req.k = 5;
  req.path = SearchPath::kAuto;
  EXPECT_TRUE(exec_->Search(s.view, f.batch, req, &r).IsInvalidArgument());
  req.path = SearchPath::kDense;
  Filters wrong(200, 2, false, 1.0, 64);  // reaches rows the shard does not have
  EXPECT_TRUE(exec_->Search(s.view, wrong.batch, req, &r).IsInvalidArgument());
  Filters three(100, 3, true, 0.5, 65);  // three filters for two queries
  EXPECT_TRUE(exec_->Search(s.view, three.batch, req, &r).IsInvalidArgument());
  BatchFilters miscounted = f.batch;  // buffers are sized from the counts
  miscounted.passing_rows[0] += 1;
  EXPECT_TRUE(exec_->Search(s.view, miscounted, req, &r).IsInvalidArgument());
  // The same codes as the CPU executor's (query/executor.h ValidateExecRequest).
  ExecRequest bad_metric = req;
  bad_metric.metric = static_cast<Metric>(7);
  EXPECT_TRUE(exec_->Search(s.view, f.batch, bad_metric, &r).IsInvalidArgument());
  ShardView bad_dtype = s.view;
  bad_dtype.dtype = static_cast<DType>(9);
  EXPECT_TRUE(exec_->Search(bad_dtype, f.batch, req, &r).IsInvalidArgument());
  // A request not planned for this executor, or a plan it cannot carry out.
  EXPECT_TRUE(exec_->Search(s.view, f.batch, req, &r).IsInvalidArgument());  // no plan
  req.topk.strategy = TopKStrategy::kHeap;
  Status st = exec_->Search(s.view, f.batch, req, &r);
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_NE(st.message().find("PlanRequest"), std::string::npos) << st.ToString();
  req.topk = FullPlan();
  req.topk.products = Products::kTf32;  // select_k multiplies in float32
  EXPECT_TRUE(exec_->Search(s.view, f.batch, req, &r).IsInvalidArgument());
  req.topk = FullPlan();
  req.topk.strategy = TopKStrategy::kThreshold;  // float32 rows, no levels
  EXPECT_TRUE(exec_->Search(s.view, f.batch, req, &r).IsInvalidArgument());
  req.topk.strategy = TopKStrategy::kCandidates;  // no sample or list
  EXPECT_TRUE(exec_->Search(s.view, f.batch, req, &r).IsInvalidArgument());
  req.path = SearchPath::kSddmm;
  req.topk.sample = req.topk.cap = 64;
  req.topk.tile_bytes = 1 << 20;  // the SDDMM path selects with select_k
  EXPECT_TRUE(exec_->Search(s.view, f.batch, req, &r).IsInvalidArgument());
  req.path = SearchPath::kDense;
  PlanRequest(*exec_, s.view, f.batch, &req);
  EXPECT_EQ(req.topk.strategy, TopKStrategy::kSelectK);  // 100 rows
  EXPECT_TRUE(exec_->Search(s.view, f.batch, req, &r).ok());
  EXPECT_EQ(r.select, "select_k");
  EXPECT_EQ(r.products, "float32");
}

}  // namespace
}  // namespace sieve
