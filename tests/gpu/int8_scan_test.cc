// Copyright 2026 The Sieve Authors.
//
// The GPU's candidate scan over int8 codes (GpuExecutorOptions::candidate_int8) against the
// float64 oracle: l2, ip and cosine, float16 and float32 rows, k from 1 to 4,096, one filter and
// a filter per query, random and clustered rows and groups of near ties that differ below int8
// resolution. Each search proves through the counters and its result that the int8 scan ran.
// Skipped without a CUDA device.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpu/gpu_executor.h"
#include "index/row_set.h"
#include "query/executor.h"
#include "query/int8_codes.h"
#include "tests/testutil.h"

namespace sieve {
namespace {

using gpu::GpuExecutor;
using gpu::GpuPathCounts;

float RoundToHalf(float x) { return static_cast<float>(static_cast<_Float16>(x)); }

enum class Data { kRandom, kClustered, kNearTies };

const char* DataName(Data d) {
  switch (d) {
    case Data::kRandom:
      return "random";
    case Data::kClustered:
      return "clustered";
    case Data::kNearTies:
      return "near ties";
  }
  return "?";
}

// Rows as the engine holds them (float16 collections: exact halves in float32), with a zero row
// and a duplicate (an exact tie).
struct Shard {
  std::vector<float> data;
  std::vector<float> sq_norms;
  ShardView view;
};

// nq queries and a shard of `rows` rows of the kind. Near ties: for each query, 200 rows at a
// small offset from it, each coordinate moved by up to 2e-3 (a quarter of an int8 step of these
// rows): their codes barely differ while their exact distances spread well beyond float32's
// resolution, so only an exact rescore of all of them orders them.
void MakeData(Data kind, uint32_t rows, uint32_t dim, uint32_t nq, DType dtype, uint64_t key,
              uint64_t seed, Shard* s, std::vector<float>* queries) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> jitter(-2e-3f, 2e-3f);
  s->data.assign(size_t{rows} * dim, 0.0f);
  queries->assign(size_t{nq} * dim, 0.0f);
  std::vector<float> centers(size_t{32} * dim);
  for (float& c : centers) c = normal(rng);
  for (uint32_t r = 0; r < rows; ++r) {
    float* x = s->data.data() + size_t{r} * dim;
    for (uint32_t j = 0; j < dim; ++j) {
      x[j] = kind == Data::kClustered ? centers[(r % 32) * size_t{dim} + j] + 0.3f * normal(rng)
                                      : normal(rng);
    }
  }
  for (uint32_t q = 0; q < nq; ++q) {
    for (uint32_t j = 0; j < dim; ++j) {
      (*queries)[size_t{q} * dim + j] =
          kind == Data::kClustered ? centers[(q % 32) * size_t{dim} + j] + 0.3f * normal(rng)
                                   : normal(rng);
    }
  }
  if (kind == Data::kNearTies) {
    for (uint32_t q = 0; q < nq; ++q) {
      for (uint32_t i = 0; i < 200; ++i) {
        const uint32_t r = (q * 7919 + i * 1543) % rows;
        float* x = s->data.data() + size_t{r} * dim;
        for (uint32_t j = 0; j < dim; ++j) {
          x[j] = (*queries)[size_t{q} * dim + j] + 0.05f + jitter(rng);
        }
      }
    }
  }
  std::fill_n(s->data.begin() + dim, dim, 0.0f);  // row 1: zero
  std::copy_n(s->data.begin() + 2 * size_t{dim}, dim, s->data.begin() + 5 * size_t{dim});
  if (dtype == DType::kFloat16) {
    for (float& v : s->data) v = RoundToHalf(v);
  }
  s->sq_norms.resize(rows);
  for (uint32_t r = 0; r < rows; ++r) {
    double acc = 0;
    for (uint32_t j = 0; j < dim; ++j) {
      acc += double{s->data[size_t{r} * dim + j]} * s->data[size_t{r} * dim + j];
    }
    s->sq_norms[r] = static_cast<float>(acc);
  }
  s->view = ShardView();
  s->view.key = key;
  s->view.generation = 1;
  s->view.vectors = s->data.data();
  s->view.sq_norms = s->sq_norms.data();
  s->view.rows = rows;
  s->view.dim = dim;
  s->view.dtype = dtype;
}

// One filter for the batch, or one a query whose densities spread from 0.3 to 1.
struct Filters {
  std::vector<RowSet> sets;
  BatchFilters batch;
  Filters(uint32_t rows, uint32_t nq, bool per_query, uint64_t seed) {
    const uint32_t n = per_query ? nq : 1;
    for (uint32_t i = 0; i < n; ++i) {
      const double density = per_query ? 0.3 + 0.7 * i / std::max(1u, n - 1) : 0.6;
      std::vector<uint32_t> ords;
      std::mt19937_64 rng(seed * 1000003 + i);
      std::bernoulli_distribution pass(density);
      for (uint32_t r = 0; r < rows; ++r) {
        if (pass(rng)) ords.push_back(r);
      }
      sets.push_back(RowSet::Of(ords.data(), ords.size()));
    }
    for (const RowSet& s : sets) {
      batch.sets.push_back(&s);
      batch.passing_rows.push_back(s.Cardinality());
    }
  }
  const RowSet& For(uint32_t q) const { return sets[batch.per_query() ? q : 0]; }
};

using Oracle = std::vector<std::vector<std::pair<uint32_t, double>>>;

Oracle ComputeOracle(Metric metric, const std::vector<float>& queries, const Shard& s,
                     const Filters& f, uint32_t k, uint32_t nq) {
  Oracle out(nq);
  const unsigned n_threads =
      std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), 32));
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < n_threads; ++t) {
    threads.emplace_back([&, t] {
      for (uint32_t q = t; q < nq; q += n_threads) {
        const RowSet& set = f.For(q);
        out[q] = test::OracleTopK(metric, queries.data() + size_t{q} * s.view.dim, s.data.data(),
                                  s.view.rows, s.view.dim, k,
                                  [&](uint32_t r) { return set.Contains(r); });
      }
    });
  }
  for (auto& th : threads) th.join();
  return out;
}

// A float32 distance's resolution against float64: relative to the terms the expansion adds
// (|q|² + |x|² for l2, |q||x| for ip), absolute for cosine. Tighter than the spread of a near-tie
// group, so a row of it in the wrong place fails.
double Tolerance(Metric metric, const float* q, const Shard& s) {
  double qn = 0;
  for (uint32_t d = 0; d < s.view.dim; ++d) qn += double{q[d]} * q[d];
  double xmax = 0;
  for (float n : s.sq_norms) xmax = std::max(xmax, double{n});
  switch (metric) {
    case Metric::kL2:
      return 2e-6 * (qn + xmax) + 1e-7;
    case Metric::kInnerProduct:
      return 2e-6 * std::sqrt(qn * xmax) + 1e-7;
    default:
      return 2e-6;
  }
}

class Int8ScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GpuExecutorOptions o;
    o.candidate_int8 = true;
    Status st = GpuExecutor::Create(o, &exec_);
    if (!st.ok()) {
      ASSERT_TRUE(st.IsUnavailable()) << st.ToString();
      GTEST_SKIP() << "no CUDA device: " << st.message();
    }
  }

  // Searches the dense path with the plan the planner makes, proves the int8 scan ran, and
  // checks every query against the oracle rank by rank. *fell_back: a candidate list overflowed
  // (the answer then came from the full path, still exact).
  // `full`: the oracle's top-k' for some k' >= k (its prefixes are the top-k), or null.
  void RunAndCheck(const std::string& what, Metric metric, const Shard& s, const Filters& f,
                   const std::vector<float>& queries, uint32_t nq, uint32_t k, bool* fell_back,
                   const Oracle* full = nullptr) {
    SCOPED_TRACE(what);
    ExecRequest req;
    req.queries = queries.data();
    req.num_queries = nq;
    req.k = k;
    req.metric = metric;
    req.path = SearchPath::kDense;
    PlanRequest(*exec_, s.view, f.batch, &req);
    ASSERT_EQ(req.topk.strategy, TopKStrategy::kCandidates) << req.topk.ToString();
    ASSERT_EQ(req.topk.products, Products::kInt8) << req.topk.ToString();
    const GpuPathCounts before = exec_->path_counts();
    ExecResult result;
    const Status st = exec_->Search(s.view, f.batch, req, &result);
    ASSERT_TRUE(st.ok()) << st.ToString();
    const GpuPathCounts after = exec_->path_counts();
    EXPECT_EQ(after.dense - before.dense, 1u);
    EXPECT_EQ(after.candidate_int8 - before.candidate_int8, 1u);
    EXPECT_EQ(after.candidate_products_refused - before.candidate_products_refused, 0u);
    *fell_back = after.candidate_fallbacks > before.candidate_fallbacks;
    if (!*fell_back) {
      EXPECT_EQ(result.select, "candidates");
      EXPECT_EQ(result.products, "int8");
      EXPECT_NE(result.select_plan.find("int8 products"), std::string::npos) << result.select_plan;
      const uint64_t kept = after.candidate_rows_kept - before.candidate_rows_kept;
      const uint64_t band = after.candidate_band_rows - before.candidate_band_rows;
      uint64_t expect = 0;
      for (uint32_t q = 0; q < nq; ++q) expect += std::min<uint64_t>(k, f.For(q).Cardinality());
      EXPECT_GE(band, expect);
      EXPECT_LE(band, kept);
      EXPECT_LT(kept, uint64_t{nq} * s.view.rows);  // the scan pruned
    } else {
      EXPECT_EQ(result.products, "float32");
    }
    Oracle oracle = full != nullptr ? *full : ComputeOracle(metric, queries, s, f, k, nq);
    for (auto& o : oracle) o.resize(std::min<size_t>(o.size(), k));
    ASSERT_EQ(result.neighbors.size(), nq);
    const bool larger_better = metric == Metric::kInnerProduct;
    for (uint32_t q = 0; q < nq; ++q) {
      SCOPED_TRACE("query " + std::to_string(q));
      const float* qv = queries.data() + size_t{q} * s.view.dim;
      const auto& got = result.neighbors[q];
      const auto& want = oracle[q];
      const double tol = Tolerance(metric, qv, s);
      ASSERT_EQ(got.size(), want.size());
      std::set<uint32_t> seen;
      for (size_t i = 0; i < got.size(); ++i) {
        const uint32_t id = got[i].first;
        ASSERT_LT(id, s.view.rows);
        ASSERT_TRUE(f.For(q).Contains(id)) << "row " << id << " fails the filter";
        ASSERT_TRUE(seen.insert(id).second) << "row " << id << " twice";
        if (i > 0) {
          if (larger_better) {
            ASSERT_GE(got[i - 1].second, got[i].second) << "rank " << i;
          } else {
            ASSERT_LE(got[i - 1].second, got[i].second) << "rank " << i;
          }
        }
        const double truth =
            test::OracleDistance(metric, qv, s.data.data() + size_t{id} * s.view.dim, s.view.dim);
        ASSERT_NEAR(truth, want[i].second, tol)
            << "rank " << i << ": got row " << id << ", oracle row " << want[i].first;
        ASSERT_NEAR(got[i].second, truth, 50 * tol) << "row " << id;
      }
    }
  }

  std::unique_ptr<GpuExecutor> exec_;
};

// Every metric, both dtypes, k 1..4,096, one filter and a filter per query, on random,
// clustered and near-tie rows (300,000 rows: enough columns for the candidate scan at k = 4,096).
TEST_F(Int8ScanTest, ExactAgainstTheOracle) {
  const uint32_t rows = 300000, nq = 8;
  uint64_t key = 3600;
  int runs = 0, fallbacks = 0;
  for (Data data : {Data::kRandom, Data::kClustered, Data::kNearTies}) {
    for (DType dtype : {DType::kFloat16, DType::kFloat32}) {
      const uint32_t dim = dtype == DType::kFloat16 ? 64 : 100;  // 100: codes padded to 112
      Shard s;
      std::vector<float> queries;
      ++key;
      MakeData(data, rows, dim, nq, dtype, key, 36 + key, &s, &queries);
      for (bool per_query : {false, true}) {
        const Filters f(rows, nq, per_query, key);
        for (Metric metric : {Metric::kL2, Metric::kInnerProduct, Metric::kCosine}) {
          const Oracle full =
              ComputeOracle(metric, queries, s, f, data == Data::kNearTies ? 64 : 4096, nq);
          for (uint32_t k : {1u, 10u, 64u, 1000u, 4096u}) {
            // Near ties are the 200 rows around each query: k up to 64 keeps them in question.
            if (data == Data::kNearTies && k > 64) continue;
            bool fell_back = false;
            RunAndCheck(std::string(DataName(data)) + " " + DTypeName(dtype) + " dim " +
                            std::to_string(dim) + (per_query ? " bitmap " : " bitset ") +
                            MetricName(metric) + " k " + std::to_string(k),
                        metric, s, f, queries, nq, k, &fell_back, &full);
            if (HasFatalFailure()) return;
            ++runs;
            fallbacks += fell_back ? 1 : 0;
            // Random rows never overflow their lists: the answers above were the int8 scan's.
            if (data == Data::kRandom) {
              EXPECT_FALSE(fell_back)
                  << DTypeName(dtype) << " " << MetricName(metric) << " k " << k;
            }
          }
        }
      }
    }
  }
  std::printf("int8 scan: %d searches, %d fell back to the full path\n", runs, fallbacks);
  EXPECT_LT(fallbacks, runs / 4);
}

// Appended rows get codes too (only the new rows are coded), and an older snapshot searches the
// prefix; the executor's resident bytes count the codes.
TEST_F(Int8ScanTest, AppendsCodeNewRows) {
  const uint32_t dim = 48, nq = 4;
  Shard s;
  std::vector<float> queries;
  MakeData(Data::kRandom, 200000, dim, nq, DType::kFloat32, 3700, 37, &s, &queries);
  s.view.rows = 120000;
  const Filters f1(120000, nq, false, 1);
  bool fell_back = false;
  RunAndCheck("first 120000", Metric::kL2, s, f1, queries, nq, 10, &fell_back);
  if (HasFatalFailure()) return;
  const uint64_t bytes_before = exec_->resident_bytes();
  EXPECT_GE(bytes_before, uint64_t{120000} * (dim * 4 + 4 + Int8CodeBytesPerRow(dim)));
  s.view.rows = 200000;
  s.view.generation = 2;
  const Filters f2(200000, nq, false, 2);
  RunAndCheck("all 200000", Metric::kL2, s, f2, queries, nq, 10, &fell_back);
  if (HasFatalFailure()) return;
  EXPECT_EQ(exec_->uploaded_rows(), 200000u);
  EXPECT_GE(exec_->resident_bytes(), uint64_t{200000} * (dim * 4 + 4 + Int8CodeBytesPerRow(dim)));
  s.view.rows = 120000;  // an older snapshot: the prefix
  RunAndCheck("prefix 120000", Metric::kInnerProduct, s, f1, queries, nq, 64, &fell_back);
}

// Without the option the planner never plans int8 and no codes are kept; with it the same shard
// holds the codes' bytes more and finds the same neighbours.
TEST(Int8ScanOptionTest, OffByDefault) {
  std::unique_ptr<GpuExecutor> exec;
  const Status st = GpuExecutor::Create(GpuExecutorOptions(), &exec);
  if (!st.ok()) GTEST_SKIP() << "no CUDA device: " << st.message();
  EXPECT_TRUE(exec->topk_abilities().int8_products);
  Shard s;
  std::vector<float> queries;
  MakeData(Data::kRandom, 100000, 32, 2, DType::kFloat16, 3800, 38, &s, &queries);
  const Filters f(100000, 2, false, 3);
  ExecRequest req;
  req.queries = queries.data();
  req.num_queries = 2;
  req.k = 10;
  req.metric = Metric::kL2;
  req.path = SearchPath::kDense;
  PlanRequest(*exec, s.view, f.batch, &req);
  EXPECT_NE(req.topk.products, Products::kInt8);
  ExecResult result;
  ASSERT_TRUE(exec->Search(s.view, f.batch, req, &result).ok());
  EXPECT_EQ(exec->path_counts().candidate_int8, 0u);
  EXPECT_NE(result.products, "int8");
  // The same shard on an executor with the codes holds their bytes more: each row's code (dim
  // padded to 16) and its four floats, at the buffer's capacity.
  GpuExecutorOptions o;
  o.candidate_int8 = true;
  std::unique_ptr<GpuExecutor> with_codes;
  ASSERT_TRUE(GpuExecutor::Create(o, &with_codes).ok());
  PlanRequest(*with_codes, s.view, f.batch, &req);
  EXPECT_EQ(req.topk.products, Products::kInt8);
  ExecResult coded;
  ASSERT_TRUE(with_codes->Search(s.view, f.batch, req, &coded).ok());
  EXPECT_EQ(coded.products, "int8");
  EXPECT_EQ(with_codes->path_counts().candidate_int8, 1u);
  const uint64_t extra = with_codes->resident_bytes() - exec->resident_bytes();
  EXPECT_GE(extra, uint64_t{100000} * Int8CodeBytesPerRow(32));
  EXPECT_LT(extra, uint64_t{100000 + 256} * Int8CodeBytesPerRow(32) * 2);
  ASSERT_EQ(coded.neighbors.size(), result.neighbors.size());
  for (size_t q = 0; q < result.neighbors.size(); ++q) {
    ASSERT_EQ(coded.neighbors[q].size(), result.neighbors[q].size());
    for (size_t i = 0; i < result.neighbors[q].size(); ++i) {
      EXPECT_NEAR(coded.neighbors[q][i].second, result.neighbors[q][i].second, 1e-3)
          << "query " << q << " rank " << i;
    }
  }
}

}  // namespace
}  // namespace sieve
