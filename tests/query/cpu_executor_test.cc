// Copyright 2026 The Sieve Authors.
//
// Every path × metric × filter mode of the CPU executor against the float64 oracle.

#include "query/cpu_executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "index/row_set.h"
#include "index/vector_arena.h"
#include "tests/testutil.h"

namespace sieve {
namespace {

constexpr SearchPath kPaths[] = {SearchPath::kSddmm, SearchPath::kGather, SearchPath::kDense};
constexpr Metric kMetrics[] = {Metric::kL2, Metric::kInnerProduct, Metric::kCosine};

struct Shard {
  VectorArena arena;
  ShardView view;
  std::vector<float> data;

  Shard(uint32_t rows, uint32_t dim, uint64_t seed, bool zero_rows = true)
      : arena(dim), data(test::RandomVectors(rows, dim, seed)) {
    // A zero row exercises cosine's "zero norm → distance 1"; a duplicate row makes exact ties.
    if (zero_rows && rows > 3) std::fill_n(data.begin() + dim, dim, 0.0f);
    if (rows > 5) std::copy_n(data.begin() + 2 * dim, dim, data.begin() + 5 * dim);
    arena.Append(data.data(), rows);
    view.key = seed;
    view.generation = arena.generation();
    view.vectors = arena.data();
    view.sq_norms = arena.sq_norms();
    view.rows = rows;
    view.dim = dim;
  }
};

RowSet RandomSet(uint32_t rows, double fraction, uint64_t seed) {
  if (fraction >= 1.0) return RowSet::Range(0, rows);
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution pass(fraction);
  std::vector<uint32_t> ords;
  for (uint32_t r = 0; r < rows; ++r) {
    if (pass(rng)) ords.push_back(r);
  }
  return RowSet::Of(ords.data(), ords.size());
}

double Scale(Metric metric, const float* q, const Shard& s) {
  double qn = 0;
  for (uint32_t d = 0; d < s.view.dim; ++d) qn += static_cast<double>(q[d]) * q[d];
  double xn = 0;
  for (uint32_t r = 0; r < s.view.rows; ++r) xn = std::max<double>(xn, s.view.sq_norms[r]);
  switch (metric) {
    case Metric::kL2:
      return qn + xn + 1e-6;
    case Metric::kInnerProduct:
      return std::sqrt(qn * xn) + 1e-6;
    case Metric::kCosine:
      return 1.0;
  }
  return 1.0;
}

// Checks one query's result against the oracle: every id passes and is unique, distances are
// true (against the oracle's distance for that id) and sorted, the i-th distance matches the
// oracle's i-th, and ids equal the oracle's wherever no near-tie could reorder them.
void ExpectMatchesOracle(const std::vector<std::pair<uint32_t, float>>& got, Metric metric,
                         const float* q, const Shard& s, uint32_t k, const RowSet& set,
                         const std::string& where) {
  SCOPED_TRACE(where);
  auto pass = [&](uint32_t r) { return set.Contains(r); };
  const auto want = test::OracleTopK(metric, q, s.data.data(), s.view.rows, s.view.dim, k, pass);
  ASSERT_EQ(got.size(), want.size());
  const double tol = 1e-4 * Scale(metric, q, s);
  const bool larger = metric == Metric::kInnerProduct;
  std::set<uint32_t> ids;
  for (size_t i = 0; i < got.size(); ++i) {
    const auto [id, dist] = got[i];
    ASSERT_LT(id, s.view.rows);
    EXPECT_TRUE(set.Contains(id)) << "non-passing row " << id;
    EXPECT_TRUE(ids.insert(id).second) << "duplicate row " << id;
    const double truth =
        test::OracleDistance(metric, q, s.data.data() + static_cast<size_t>(id) * s.view.dim,
                             s.view.dim);
    EXPECT_NEAR(dist, truth, tol) << "row " << id;
    EXPECT_NEAR(dist, want[i].second, tol) << "rank " << i;
    if (i > 0) {
      if (larger) {
        EXPECT_LE(dist, got[i - 1].second);
      } else {
        EXPECT_GE(dist, got[i - 1].second);
      }
    }
    const double prev = i > 0 ? want[i - 1].second : -INFINITY;
    const double next = i + 1 < want.size() ? want[i + 1].second : INFINITY;
    const bool isolated = std::abs(want[i].second - prev) > 2 * tol &&
                          std::abs(want[i].second - next) > 2 * tol;
    if (isolated) {
      EXPECT_EQ(id, want[i].first) << "rank " << i;
    }
  }
}

struct Shape {
  uint32_t rows;
  uint32_t dim;
  uint32_t queries;
  uint32_t k;
  double fraction;  // of rows passing; per-query sets vary around it
};

std::string ShapeName(const Shape& sh) {
  return "rows=" + std::to_string(sh.rows) + " dim=" + std::to_string(sh.dim) +
         " nq=" + std::to_string(sh.queries) + " k=" + std::to_string(sh.k) +
         " frac=" + std::to_string(sh.fraction);
}

const Shape kShapes[] = {
    {1, 1, 1, 1, 1.0},        {1, 3, 2, 10, 1.0},       {7, 3, 3, 10, 1.0},
    {7, 17, 5, 3, 0.5},       {100, 1, 4, 10, 0.3},     {100, 17, 17, 1, 1.0},
    {300, 128, 16, 10, 0.2},  {2000, 17, 9, 50, 0.05},  {2000, 128, 33, 10, 1.0},
    {5000, 3, 16, 10, 0.01},  {20000, 128, 16, 10, 0.1}, {20000, 17, 2, 10, 0.001},
    {1000, 128, 16, 1000, 0.5},  // k larger than the passing count
    {500, 17, 4, 10, 0.0},       // nothing passes
};

class CpuExecutorPathsTest : public ::testing::TestWithParam<CpuExecutorOptions> {};

TEST_P(CpuExecutorPathsTest, AllPathsMetricsModesMatchOracle) {
  CpuExecutor exec(GetParam());
  uint64_t seed = 1;
  for (const Shape& sh : kShapes) {
    Shard shard(sh.rows, sh.dim, ++seed);
    std::vector<float> queries = test::RandomVectors(sh.queries, sh.dim, ++seed);
    // A zero query (cosine: every distance 1) and a query equal to a row (l2 distance 0).
    if (sh.queries > 1) std::fill_n(queries.begin() + sh.dim, sh.dim, 0.0f);
    if (sh.queries > 2) std::copy_n(shard.data.begin(), sh.dim, queries.begin() + 2 * sh.dim);
    std::vector<RowSet> sets;
    sets.push_back(RandomSet(sh.rows, sh.fraction, ++seed));
    for (uint32_t q = 0; q < sh.queries; ++q) {
      sets.push_back(RandomSet(sh.rows, sh.fraction * (0.5 + (q % 3) * 0.5), ++seed));
    }
    for (bool per_query : {false, true}) {
      BatchFilters filters;
      for (uint32_t q = 0; q < (per_query ? sh.queries : 1); ++q) {
        filters.sets.push_back(&sets[per_query ? q + 1 : 0]);
        filters.passing_rows.push_back(filters.sets.back()->Cardinality());
      }
      if (per_query && sh.queries == 1) continue;  // that is bitset mode
      for (Metric metric : kMetrics) {
        for (SearchPath path : kPaths) {
          ExecRequest req;
          req.queries = queries.data();
          req.num_queries = sh.queries;
          req.k = sh.k;
          req.metric = metric;
          req.path = path;
          ExecResult result;
          const uint64_t before = exec.runs(path);
          ASSERT_TRUE(exec.Search(shard.view, filters, req, &result).ok());
          EXPECT_EQ(exec.runs(path), before + 1);
          EXPECT_EQ(result.select, "heap");
          ASSERT_EQ(result.neighbors.size(), sh.queries);
          const std::string where = ShapeName(sh) + (per_query ? " bitmap " : " bitset ") +
                                    MetricName(metric) + " " + SearchPathName(path);
          for (uint32_t q = 0; q < sh.queries; ++q) {
            ExpectMatchesOracle(result.neighbors[q], metric, queries.data() + q * sh.dim, shard,
                                sh.k, *filters.sets[per_query ? q : 0],
                                where + " query " + std::to_string(q));
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, CpuExecutorPathsTest,
                         ::testing::Values(CpuExecutorOptions{},
                                           // many small tiles over three workers: merges
                                           CpuExecutorOptions{3, 64, true},
                                           CpuExecutorOptions{1, 0, true}),
                         [](const ::testing::TestParamInfo<CpuExecutorOptions>& info) {
                           return "threads" + std::to_string(info.param.threads) + "_tile" +
                                  std::to_string(info.param.tile_rows);
                         });

bool HasStage(const ExecResult& r, const std::string& name) {
  for (const auto& [stage, ms] : r.stage_ms) {
    if (stage == name) return true;
  }
  return false;
}

TEST(CpuExecutorTest, EachPathRunsItsOwnStages) {
  Shard shard(5000, 32, 3);
  std::vector<float> queries = test::RandomVectors(4, 32, 4);
  RowSet set = RandomSet(5000, 0.2, 5);
  BatchFilters filters{{&set}, {set.Cardinality()}};
  CpuExecutor exec;
  ExecRequest req{queries.data(), 4, 10, Metric::kL2, SearchPath::kSddmm};
  ExecResult sddmm, gather, dense;
  ASSERT_TRUE(exec.Search(shard.view, filters, req, &sddmm).ok());
  req.path = SearchPath::kGather;
  ASSERT_TRUE(exec.Search(shard.view, filters, req, &gather).ok());
  req.path = SearchPath::kDense;
  ASSERT_TRUE(exec.Search(shard.view, filters, req, &dense).ok());
  EXPECT_TRUE(HasStage(sddmm, "sddmm"));
  EXPECT_FALSE(HasStage(sddmm, "gemm"));
  EXPECT_TRUE(HasStage(gather, "gather"));
  EXPECT_TRUE(HasStage(gather, "gemm"));
  EXPECT_FALSE(HasStage(dense, "gather"));
  EXPECT_TRUE(HasStage(dense, "gemm"));
  EXPECT_TRUE(HasStage(dense, "bitset"));
  EXPECT_EQ(exec.runs(SearchPath::kSddmm), 1u);
  EXPECT_EQ(exec.runs(SearchPath::kGather), 1u);
  EXPECT_EQ(exec.runs(SearchPath::kDense), 1u);
  EXPECT_EQ(exec.name(), "cpu");
}

// The nearest rows are filtered out: none of them may come back on any path.
TEST(CpuExecutorTest, NonPassingRowsNeverAppear) {
  const uint32_t rows = 4000, dim = 8;
  Shard shard(rows, dim, 21, /*zero_rows=*/false);
  // Queries equal to rows 0..7, which the filter excludes along with every even row.
  std::vector<float> queries(shard.data.begin(), shard.data.begin() + 8 * dim);
  std::vector<uint32_t> odd;
  for (uint32_t r = 9; r < rows; r += 2) odd.push_back(r);
  RowSet set = RowSet::Of(odd.data(), odd.size());
  CpuExecutor exec(CpuExecutorOptions{2, 64, true});
  for (bool per_query : {false, true}) {
    BatchFilters filters;
    for (int q = 0; q < (per_query ? 8 : 1); ++q) {
      filters.sets.push_back(&set);
      filters.passing_rows.push_back(set.Cardinality());
    }
    for (Metric metric : kMetrics) {
      for (SearchPath path : kPaths) {
        ExecRequest req{queries.data(), 8, 100, metric, path};
        ExecResult result;
        ASSERT_TRUE(exec.Search(shard.view, filters, req, &result).ok());
        for (const auto& list : result.neighbors) {
          ASSERT_EQ(list.size(), 100u);
          for (const auto& [id, dist] : list) ASSERT_TRUE(id % 2 == 1 && id >= 9) << id;
        }
      }
    }
  }
}

// Small integers, so that every dot product and norm is exact in float32 whatever order a
// BLAS kernel sums in (kernels treat a tile's edge rows differently on some CPUs).
std::vector<float> SmallIntegerVectors(size_t n, size_t dim, uint64_t seed) {
  std::vector<float> v = test::RandomVectors(n, dim, seed);
  for (float& x : v) x = std::round(x * 4.0f);
  return v;
}

// All rows identical: every distance ties exactly, so each path must return the smallest
// passing ordinals in ascending order, across tiles and workers.
TEST(CpuExecutorTest, TiesGoToTheSmallerOrdinal) {
  // Enough work (rows × queries × dim) that two workers split it.
  const uint32_t rows = 20000, dim = 64, nq = 16;
  std::vector<float> one = SmallIntegerVectors(1, dim, 9);
  VectorArena arena(dim);
  for (uint32_t r = 0; r < rows; ++r) arena.Append(one.data(), 1);
  ShardView view{1, arena.generation(), arena.data(), arena.sq_norms(), rows, dim};
  std::vector<float> queries = SmallIntegerVectors(nq, dim, 10);
  RowSet set = RandomSet(rows, 0.5, 11);
  std::vector<uint32_t> ords(set.Cardinality());
  set.ToArray(ords.data());
  CpuExecutor exec(CpuExecutorOptions{2, 64, true});
  for (bool per_query : {false, true}) {
    BatchFilters filters;
    for (uint32_t q = 0; q < (per_query ? nq : 1); ++q) {
      filters.sets.push_back(&set);
      filters.passing_rows.push_back(set.Cardinality());
    }
    for (Metric metric : kMetrics) {
      for (SearchPath path : kPaths) {
        ExecRequest req{queries.data(), nq, 20, metric, path};
        ExecResult result;
        ASSERT_TRUE(exec.Search(view, filters, req, &result).ok());
        for (const auto& list : result.neighbors) {
          ASSERT_EQ(list.size(), 20u);
          for (size_t i = 0; i < 20; ++i) {
            EXPECT_EQ(list[i].first, ords[i]) << SearchPathName(path) << " " << MetricName(metric);
          }
        }
      }
    }
  }
}

TEST(CpuExecutorTest, RejectsBadRequests) {
  Shard shard(10, 4, 1);
  std::vector<float> queries = test::RandomVectors(2, 4, 2);
  RowSet set = RowSet::Range(0, 10);
  CpuExecutor exec;
  ExecResult result;
  BatchFilters one{{&set}, {10}};
  ExecRequest req{queries.data(), 2, 5, Metric::kL2, SearchPath::kDense};
  ASSERT_TRUE(exec.Search(shard.view, one, req, &result).ok());

  ExecRequest bad = req;
  bad.k = 0;
  EXPECT_TRUE(exec.Search(shard.view, one, bad, &result).IsInvalidArgument());
  bad = req;
  bad.queries = nullptr;
  EXPECT_TRUE(exec.Search(shard.view, one, bad, &result).IsInvalidArgument());
  bad = req;
  bad.path = SearchPath::kAuto;
  EXPECT_TRUE(exec.Search(shard.view, one, bad, &result).IsInvalidArgument());
  bad = req;
  bad.metric = static_cast<Metric>(7);
  EXPECT_TRUE(exec.Search(shard.view, one, bad, &result).IsInvalidArgument());
  ShardView bad_dtype = shard.view;
  bad_dtype.dtype = static_cast<DType>(9);
  EXPECT_TRUE(exec.Search(bad_dtype, one, req, &result).IsInvalidArgument());
  BatchFilters three{{&set, &set, &set}, {10, 10, 10}};
  EXPECT_TRUE(exec.Search(shard.view, three, req, &result).IsInvalidArgument());
  BatchFilters none;
  EXPECT_TRUE(exec.Search(shard.view, none, req, &result).IsInvalidArgument());
  BatchFilters null_set{{nullptr}, {0}};
  EXPECT_TRUE(exec.Search(shard.view, null_set, req, &result).IsInvalidArgument());
  ShardView no_norms = shard.view;
  no_norms.sq_norms = nullptr;
  EXPECT_TRUE(exec.Search(no_norms, one, req, &result).IsInvalidArgument());
  // Counts that are not the sets' (buffers are sized from them), and rows past the shard: each
  // refused naming the filter, by Search and EstimateMemory alike.
  RowSet past = RowSet::Range(5, 11);
  const BatchFilters wrong_count{{&set}, {9}}, no_counts{{&set}, {}}, past_end{{&past}, {6}};
  const std::pair<const BatchFilters*, const char*> refused[] = {
      {&wrong_count, "filter 0: its passing count 9 is not its 10 rows"},
      {&no_counts, "0 passing counts for 1 sets"},
      {&past_end, "filter 0 holds row 10 of a shard of 10 rows"},
      {&null_set, "filter 0 is null"}};
  for (const auto& [filters, message] : refused) {
    Status s = exec.Search(shard.view, *filters, req, &result);
    EXPECT_TRUE(s.IsInvalidArgument()) << message;
    EXPECT_NE(s.message().find(message), std::string::npos) << s.message();
    MemoryEstimate estimate;
    s = exec.EstimateMemory(shard.view, *filters, req, &estimate);
    EXPECT_NE(s.message().find(message), std::string::npos) << s.message();
  }
}

TEST(CpuExecutorTest, EmptyShardAndNoQueries) {
  CpuExecutor exec;
  RowSet empty;
  BatchFilters filters{{&empty}, {0}};
  ShardView view;
  view.dim = 4;
  std::vector<float> queries(8, 1.0f);
  for (SearchPath path : kPaths) {
    ExecRequest req{queries.data(), 2, 5, Metric::kCosine, path};
    ExecResult result;
    ASSERT_TRUE(exec.Search(view, filters, req, &result).ok());
    ASSERT_EQ(result.neighbors.size(), 2u);
    EXPECT_TRUE(result.neighbors[0].empty());
    EXPECT_TRUE(result.neighbors[1].empty());
  }
}

// Searches from several threads at once share one executor (and OpenBLAS).
TEST(CpuExecutorTest, ConcurrentSearchesAgree) {
  Shard shard(20000, 64, 31);
  std::vector<float> queries = test::RandomVectors(16, 64, 32);
  RowSet set = RandomSet(20000, 0.5, 33);
  BatchFilters filters{{&set}, {set.Cardinality()}};
  CpuExecutor exec(CpuExecutorOptions{2, 512, true});
  ExecRequest req{queries.data(), 16, 10, Metric::kL2, SearchPath::kDense};
  ExecResult want;
  ASSERT_TRUE(exec.Search(shard.view, filters, req, &want).ok());
  std::vector<ExecResult> got(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      ExecRequest r = req;
      r.path = kPaths[t % 3];
      for (int rep = 0; rep < 5; ++rep) ASSERT_TRUE(exec.Search(shard.view, filters, r, &got[t]).ok());
    });
  }
  for (auto& th : threads) th.join();
  // Every concurrent search is exact (the float64 oracle) and agrees with the lone one.
  for (size_t t = 0; t < got.size(); ++t) {
    const ExecResult& g = got[t];
    ASSERT_EQ(g.neighbors.size(), 16u);
    for (size_t q = 0; q < 16; ++q) {
      ExpectMatchesOracle(g.neighbors[q], Metric::kL2, queries.data() + q * 64, shard, 10, set,
                          "thread " + std::to_string(t) + " query " + std::to_string(q));
      ASSERT_EQ(g.neighbors[q].size(), want.neighbors[q].size());
      for (size_t i = 0; i < g.neighbors[q].size(); ++i) {
        EXPECT_EQ(g.neighbors[q][i].first, want.neighbors[q][i].first);
      }
    }
  }
}

// Profile runs warmup + reps searches, times each and returns the last one's results.
TEST(CpuExecutorTest, ProfileTimesEachRun) {
  Shard shard(2000, 16, 41);
  std::vector<float> queries = test::RandomVectors(3, 16, 42);
  RowSet set = RandomSet(2000, 0.3, 43);
  BatchFilters filters{{&set}, {set.Cardinality()}};
  CpuExecutor exec(CpuExecutorOptions{1, 0, true});
  ExecRequest req{queries.data(), 3, 5, Metric::kL2, SearchPath::kGather};
  ProfileOptions po;
  po.warmup = 1;
  po.reps = 4;
  ExecProfile profile;
  ASSERT_TRUE(exec.Profile(shard.view, filters, req, po, &profile).ok());
  EXPECT_EQ(profile.ms.size(), 4u);
  EXPECT_TRUE(profile.stages.empty());
  EXPECT_EQ(exec.runs(SearchPath::kGather), 5u);
  ASSERT_EQ(profile.result.neighbors.size(), 3u);
  for (size_t q = 0; q < 3; ++q) {
    ExpectMatchesOracle(profile.result.neighbors[q], Metric::kL2, queries.data() + q * 16, shard,
                        5, set, "query " + std::to_string(q));
  }
  po.reps = 0;
  EXPECT_TRUE(exec.Profile(shard.view, filters, req, po, &profile).IsInvalidArgument());
}

}  // namespace
}  // namespace sieve
