// Copyright 2026 The Sieve Authors.
//
// Tests of the public C++ API (include/sieve/db.h) against a float64 oracle: float16
// collections, several shards merged exactly, id assignment, reopening, concurrent searches.

#include "sieve/db.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <thread>

#include <gtest/gtest.h>

#include "tests/testutil.h"

namespace sieve {
namespace {

struct Fixture {
  test::ScratchDir dir;
  std::unique_ptr<DB> db;
  Fixture() { EXPECT_TRUE(DB::Open(Options(), dir.Join("db"), &db).ok()); }
};

CollectionSpec Spec(const std::string& name, uint32_t dim, Metric m, DType t = DType::kFloat32,
                    uint32_t shards = 1) {
  CollectionSpec s;
  s.name = name;
  s.dim = dim;
  s.metric = m;
  s.dtype = t;
  s.shards = shards;
  s.attributes = {{"cat", AttrType::kInt}};
  return s;
}

std::vector<std::vector<Value>> Cats(size_t n, int mod) {
  std::vector<std::vector<Value>> rows(n);
  for (size_t i = 0; i < n; ++i) rows[i] = {Value(static_cast<int64_t>(i % mod))};
  return rows;
}

// Compares a result with the oracle over `rows` (ids = position + id_base) passing `pass`.
void ExpectOracle(const Neighbors& got, Metric m, const float* q, const std::vector<float>& rows,
                  uint32_t dim, size_t k, int64_t id_base, const std::function<bool(uint32_t)>& pass) {
  auto want = test::OracleTopK(m, q, rows.data(), rows.size() / dim, dim, k, pass);
  ASSERT_EQ(got.ids.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got.distances[i], want[i].second, 1e-4 * std::max(1.0, std::fabs(want[i].second)));
    bool tie = (i > 0 && want[i - 1].second == want[i].second) ||
               (i + 1 < want.size() && want[i + 1].second == want[i].second);
    if (!tie) {
      EXPECT_EQ(got.ids[i], static_cast<int64_t>(want[i].first) + id_base);
    }
  }
}

TEST(DBTest, Float16CollectionsUseTheRoundedValues) {
  Fixture f;
  const uint32_t dim = 24;
  const size_t n = 2000;
  ASSERT_TRUE(f.db->CreateCollection(Spec("h", dim, Metric::kL2, DType::kFloat16)).ok());
  auto v = test::RandomVectors(n, dim, 3);
  auto attrs = Cats(n, 4);
  RowBatch b{n, dim, v.data(), nullptr, attrs.data()};
  IngestResult ir;
  ASSERT_TRUE(f.db->Ingest("h", b, IngestOptions(), &ir).ok());
  std::vector<float> rounded(v.size());
  for (size_t i = 0; i < v.size(); ++i) rounded[i] = static_cast<float>(static_cast<_Float16>(v[i]));
  auto q = test::RandomVectors(3, dim, 4);
  for (SearchPath p : {SearchPath::kSddmm, SearchPath::kGather, SearchPath::kDense}) {
    SearchRequest req;
    req.queries = q.data();
    req.num_queries = 3;
    req.dim = dim;
    req.k = 7;
    req.filter = "cat = 1";
    SearchOptions o;
    o.device = Device::kCpu;
    o.path = p;
    SearchResult r;
    ASSERT_TRUE(f.db->Search("h", req, o, &r).ok());
    for (size_t i = 0; i < 3; ++i) {
      ExpectOracle(r.results[i], Metric::kL2, q.data() + i * dim, rounded, dim, 7, 0,
                   [](uint32_t row) { return row % 4 == 1; });
    }
  }
}

TEST(DBTest, ShardsMergeExactlyAndSurviveReopen) {
  test::ScratchDir dir;
  const uint32_t dim = 8;
  const size_t n = 5000;
  auto v = test::RandomVectors(n, dim, 9);
  auto q = test::RandomVectors(5, dim, 10);
  std::vector<int64_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = static_cast<int64_t>(i) + 100;
  auto attrs = Cats(n, 10);
  SearchRequest req;
  req.queries = q.data();
  req.num_queries = 5;
  req.dim = dim;
  req.k = 20;
  req.filter = "cat IN (2, 3)";
  SearchResult before;
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(Options(), dir.Join("db"), &db).ok());
    ASSERT_TRUE(db->CreateCollection(Spec("s", dim, Metric::kCosine, DType::kFloat32, 3)).ok());
    RowBatch b{n, dim, v.data(), ids.data(), attrs.data()};
    IngestResult ir;
    IngestOptions io;
    io.batch_rows = 777;
    ASSERT_TRUE(db->Ingest("s", b, io, &ir).ok());
    EXPECT_EQ(ir.live_rows, n);
    ASSERT_TRUE(db->Search("s", req, SearchOptions(), &before).ok());
    EXPECT_EQ(before.explain.shards.size(), 3u);
    for (size_t i = 0; i < 5; ++i) {
      ExpectOracle(before.results[i], Metric::kCosine, q.data() + i * dim, v, dim, 20, 100,
                   [](uint32_t row) { return row % 10 == 2 || row % 10 == 3; });
    }
  }
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(Options(), dir.Join("db"), &db).ok());
  SearchResult after;
  ASSERT_TRUE(db->Search("s", req, SearchOptions(), &after).ok());
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(after.results[i].ids, before.results[i].ids);
    EXPECT_EQ(after.results[i].distances, before.results[i].distances);
  }
  CollectionStats st;
  ASSERT_TRUE(db->GetStats("s", &st).ok());
  EXPECT_EQ(st.rows, n);
  std::vector<std::string> report;
  EXPECT_TRUE(db->Check(&report).ok()) << (report.empty() ? "" : report[0]);
}

TEST(DBTest, IdsAreAssignedAfterTheLargestEverSeen) {
  Fixture f;
  ASSERT_TRUE(f.db->CreateCollection(Spec("a", 2, Metric::kL2)).ok());
  std::vector<float> v = {0, 0, 1, 1, 2, 2};
  RowBatch b{3, 2, v.data(), nullptr, nullptr};
  IngestResult ir;
  ASSERT_TRUE(f.db->Ingest("a", b, IngestOptions(), &ir).ok());
  std::vector<int64_t> ids = {50};
  RowBatch b2{1, 2, v.data(), ids.data(), nullptr};
  ASSERT_TRUE(f.db->Ingest("a", b2, IngestOptions(), &ir).ok());
  // Rows without ids into a collection with live rows: only when asked for.
  Status again = f.db->Ingest("a", b, IngestOptions(), &ir);
  EXPECT_TRUE(again.IsInvalidArgument());
  EXPECT_NE(again.message().find("auto ids"), std::string::npos) << again.message();
  IngestOptions auto_ids;
  auto_ids.auto_ids = true;
  ASSERT_TRUE(f.db->Ingest("a", b, auto_ids, &ir).ok());
  std::vector<float> q = {2, 2};
  SearchRequest req;
  req.queries = q.data();
  req.num_queries = 1;
  req.dim = 2;
  req.k = 3;
  SearchResult r;
  ASSERT_TRUE(f.db->Search("a", req, SearchOptions(), &r).ok());
  ASSERT_EQ(r.results[0].ids.size(), 3u);
  EXPECT_EQ(r.results[0].ids[0], 2);   // first batch: 0, 1, 2
  EXPECT_EQ(r.results[0].ids[1], 53);  // third batch: 51, 52, 53
  EXPECT_EQ(r.results[0].distances[0], 0.0f);
}

TEST(DBTest, CosineWithZeroVectorsAndConcurrentSearches) {
  Fixture f;
  const uint32_t dim = 5;
  ASSERT_TRUE(f.db->CreateCollection(Spec("z", dim, Metric::kCosine)).ok());
  auto v = test::RandomVectors(3000, dim, 1);
  std::fill(v.begin(), v.begin() + dim, 0.0f);  // row 0 is all zeros
  auto attrs = Cats(3000, 3);
  RowBatch b{3000, dim, v.data(), nullptr, attrs.data()};
  IngestResult ir;
  ASSERT_TRUE(f.db->Ingest("z", b, IngestOptions(), &ir).ok());
  auto q = test::RandomVectors(8, dim, 2);
  SearchRequest req;
  req.queries = q.data();
  req.num_queries = 8;
  req.dim = dim;
  req.k = 3000;
  req.filter = "cat = 0";
  SearchResult expect;
  ASSERT_TRUE(f.db->Search("z", req, SearchOptions(), &expect).ok());
  for (size_t i = 0; i < 8; ++i) {
    ExpectOracle(expect.results[i], Metric::kCosine, q.data() + i * dim, v, dim, 3000, 0,
                 [](uint32_t row) { return row % 3 == 0; });
    // The zero row is at distance exactly 1.
    auto it = std::find(expect.results[i].ids.begin(), expect.results[i].ids.end(), 0);
    ASSERT_NE(it, expect.results[i].ids.end());
    EXPECT_FLOAT_EQ(expect.results[i].distances[it - expect.results[i].ids.begin()], 1.0f);
  }
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int rep = 0; rep < 5; ++rep) {
        SearchResult r;
        if (!f.db->Search("z", req, SearchOptions(), &r).ok()) ++mismatches;
        for (size_t i = 0; i < 8; ++i) {
          if (r.results.size() != 8 || r.results[i].ids != expect.results[i].ids) ++mismatches;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(DBTest, ErrorsAreStatusesNotCrashes) {
  Fixture f;
  ASSERT_TRUE(f.db->CreateCollection(Spec("e", 3, Metric::kL2)).ok());
  EXPECT_TRUE(f.db->CreateCollection(Spec("e", 3, Metric::kL2)).IsAlreadyExists());
  std::vector<float> v = {1, 2, 3};
  SearchRequest req;
  req.queries = v.data();
  req.num_queries = 1;
  req.dim = 3;
  req.k = 0;
  SearchResult r;
  EXPECT_TRUE(f.db->Search("e", req, SearchOptions(), &r).IsInvalidArgument());
  req.k = 1;
  EXPECT_TRUE(f.db->Search("nope", req, SearchOptions(), &r).IsNotFound());
  req.filters = {"cat = 1", "cat = 2"};
  EXPECT_TRUE(f.db->Search("e", req, SearchOptions(), &r).IsInvalidArgument());
  req.filters.clear();
  req.filter = "cat = ";
  Status s = f.db->Search("e", req, SearchOptions(), &r);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("position"), std::string::npos) << s.message();
  // Bad attribute values name the row and attribute, and nothing is written.
  std::vector<std::vector<Value>> attrs = {{Value(int64_t{1})}, {Value(std::string("x"))}};
  std::vector<float> two = {1, 2, 3, 4, 5, 6};
  RowBatch b{2, 3, two.data(), nullptr, attrs.data()};
  IngestResult ir;
  s = f.db->Ingest("e", b, IngestOptions(), &ir);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("row 1"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("cat"), std::string::npos) << s.message();
  CollectionStats st;
  ASSERT_TRUE(f.db->GetStats("e", &st).ok());
  EXPECT_EQ(st.rows, 0u);
  // The GPU is Unavailable, never a silent CPU fallback, when there is none.
  req.filter = "";
  SearchOptions o;
  o.device = Device::kGpu;
  s = f.db->Search("e", req, o, &r);
  EXPECT_TRUE(s.ok() || s.IsUnavailable()) << s.ToString();
  if (s.ok()) {
    EXPECT_EQ(r.explain.device.rfind("gpu", 0), 0u);
  }
}

}  // namespace
}  // namespace sieve
