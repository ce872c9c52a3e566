// Copyright 2026 The Sieve Authors.
//
// DB::GetCollection's handle: its schema, its operations against a float64 oracle, and what a
// drop does to it: every handle goes stale (NotFound, never the re-created collection of the
// same name), and calls racing a drop, by name or by handle, end OK or NotFound, never with
// another code.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sieve/db.h"
#include "tests/testutil.h"

namespace sieve {
namespace {

class CollectionHandleTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(DB::Open(Options(), dir_.Join("db"), &db_).ok()); }

  void Create(uint32_t dim, uint32_t shards = 2) {
    CollectionSpec spec;
    spec.name = "c";
    spec.dim = dim;
    spec.shards = shards;
    spec.attributes = {{"n", AttrType::kInt}};
    Status s = db_->CreateCollection(spec);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // n rows with ids 0..n-1, attribute n = id % 5, through `h`; the vectors are returned.
  std::vector<float> Fill(Collection* h, size_t n, uint64_t seed) {
    const uint32_t dim = h->spec().dim;
    std::vector<float> v = test::RandomVectors(n, dim, seed);
    std::vector<int64_t> ids(n);
    std::vector<std::vector<Value>> attrs(n);
    for (size_t i = 0; i < n; ++i) {
      ids[i] = static_cast<int64_t>(i);
      attrs[i] = {Value(static_cast<int64_t>(i % 5))};
    }
    RowBatch b;
    b.num_rows = n;
    b.dim = dim;
    b.vectors = v.data();
    b.ids = ids.data();
    b.attributes = attrs.data();
    IngestResult r;
    Status s = h->Ingest(b, IngestOptions(), &r);
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(r.ingested, n);
    return v;
  }

  // A search through `h` for `queries` (filter "n = 1") must equal the float64 oracle.
  void ExpectSearchMatchesOracle(Collection* h, const std::vector<float>& rows,
                                 const std::vector<float>& queries, size_t k) {
    const uint32_t dim = h->spec().dim;
    const size_t nq = queries.size() / dim, n = rows.size() / dim;
    SearchRequest req;
    req.queries = queries.data();
    req.num_queries = nq;
    req.dim = dim;
    req.k = static_cast<int>(k);
    req.filter = "n = 1";
    SearchOptions opts;
    opts.device = Device::kCpu;
    SearchResult res;
    Status s = h->Search(req, opts, &res);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_EQ(res.results.size(), nq);
    for (size_t q = 0; q < nq; ++q) {
      auto want = test::OracleTopK(Metric::kL2, queries.data() + q * dim, rows.data(), n, dim, k,
                                   [](uint32_t r) { return r % 5 == 1; });
      ASSERT_EQ(res.results[q].ids.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(res.results[q].ids[i], static_cast<int64_t>(want[i].first)) << q << "," << i;
        EXPECT_NEAR(res.results[q].distances[i], want[i].second, 1e-4 * (1 + want[i].second));
      }
    }
  }

  test::ScratchDir dir_;
  std::unique_ptr<DB> db_;
};

TEST_F(CollectionHandleTest, GivesTheSpecAndEveryOperation) {
  std::shared_ptr<Collection> missing;
  EXPECT_TRUE(db_->GetCollection("c", &missing).IsNotFound());
  EXPECT_EQ(missing, nullptr);
  Create(12);
  std::shared_ptr<Collection> h;
  ASSERT_TRUE(db_->GetCollection("c", &h).ok());
  EXPECT_EQ(h->name(), "c");
  EXPECT_EQ(h->spec().dim, 12u);
  ASSERT_EQ(h->spec().attributes.size(), 1u);
  EXPECT_FALSE(h->dropped());
  std::shared_ptr<Collection> again;
  ASSERT_TRUE(db_->GetCollection("c", &again).ok());
  EXPECT_EQ(again, h);  // one handle per collection while it is held
  const std::vector<float> rows = Fill(h.get(), 500, 1);
  ExpectSearchMatchesOracle(h.get(), rows, test::RandomVectors(4, 12, 2), 7);

  uint64_t count = 0;
  ASSERT_TRUE(h->Count("n = 1", &count).ok());
  EXPECT_EQ(count, 100u);
  CollectionStats stats;
  ASSERT_TRUE(h->GetStats(&stats).ok());
  EXPECT_EQ(stats.rows, 500u);
  EXPECT_EQ(stats.spec.dim, 12u);
  const int64_t ids[] = {3, 999};
  GetResult got;
  Include all;
  all.all_attributes = true;
  ASSERT_TRUE(h->Get(ids, 2, all, &got).ok());
  EXPECT_EQ(got.found, (std::vector<bool>{true, false}));
  EXPECT_EQ(got.rows[0].attributes, (std::vector<Value>{Value(int64_t{3})}));
  UpdateRequest up;
  up.ids = ids;
  up.num_ids = 1;
  up.set = {{"n", Value(int64_t{1})}};
  uint64_t updated = 0;
  ASSERT_TRUE(h->Update(up, &updated).ok());
  EXPECT_EQ(updated, 1u);
  uint64_t deleted = 0;
  ASSERT_TRUE(h->DeleteByFilter("n = 4", &deleted).ok());
  EXPECT_EQ(deleted, 100u);
  ASSERT_TRUE(h->DeleteByIds(ids, 1, &deleted).ok());
  EXPECT_EQ(deleted, 1u);
  ScanRequest scan;
  scan.limit = 1000;
  ScanResult page;
  ASSERT_TRUE(h->Scan(scan, &page).ok());
  EXPECT_EQ(page.rows.size(), 399u);
  EXPECT_TRUE(page.done);
  // The handle and the name see one collection.
  ASSERT_TRUE(db_->Count("c", "", &count).ok());
  EXPECT_EQ(count, 399u);
  // Compact through the handle reclaims this collection's deleted rows.
  CompactResult compacted;
  CompactOptions force;
  force.force = true;  // 101 rows hold less than a rewrite writes
  ASSERT_TRUE(h->Compact(force, &compacted).ok());
  EXPECT_EQ(compacted.rows_removed, 101u);
  ASSERT_TRUE(h->GetStats(&stats).ok());
  EXPECT_EQ(stats.rows, 399u);
  EXPECT_EQ(stats.deleted_rows, 0u);
}

TEST_F(CollectionHandleTest, DropMakesEveryHandleStaleAndTheNewCollectionIsAnother) {
  Create(16);
  std::shared_ptr<Collection> a, b;
  ASSERT_TRUE(db_->GetCollection("c", &a).ok());
  ASSERT_TRUE(db_->GetCollection("c", &b).ok());
  Fill(a.get(), 100, 3);
  ASSERT_TRUE(db_->DropCollection("c").ok());
  EXPECT_TRUE(a->dropped());
  EXPECT_TRUE(b->dropped());

  // The new collection has another dim: a stale handle must neither reach it nor take its dim.
  Create(5, 3);
  for (Collection* stale : {a.get(), b.get()}) {
    EXPECT_EQ(stale->spec().dim, 16u);
    CollectionStats stats;
    Status s = stale->GetStats(&stats);
    EXPECT_TRUE(s.IsNotFound()) << s.ToString();
    EXPECT_NE(s.message().find("collection 'c' was dropped"), std::string::npos) << s.ToString();
    std::vector<float> q = test::RandomVectors(1, 16, 4);
    SearchRequest req;
    req.queries = q.data();
    req.num_queries = 1;
    req.dim = 16;
    SearchResult res;
    EXPECT_TRUE(stale->Search(req, SearchOptions(), &res).IsNotFound());
    EXPECT_TRUE(res.results.empty());
    uint64_t n = 0;
    EXPECT_TRUE(stale->Count("", &n).IsNotFound());
    const int64_t id = 0;
    GetResult got;
    EXPECT_TRUE(stale->Get(&id, 1, Include(), &got).IsNotFound());
    ScanResult page;
    EXPECT_TRUE(stale->Scan(ScanRequest(), &page).IsNotFound());
    UpdateRequest up;
    up.ids = &id;
    up.num_ids = 1;
    up.set = {{"n", Value(int64_t{1})}};
    EXPECT_TRUE(stale->Update(up, &n).IsNotFound());
    EXPECT_TRUE(stale->DeleteByIds(&id, 1, &n).IsNotFound());
    EXPECT_TRUE(stale->DeleteByFilter("n = 1", &n).IsNotFound());
    std::vector<float> v = test::RandomVectors(1, 16, 5);
    RowBatch batch;
    batch.num_rows = 1;
    batch.dim = 16;
    batch.vectors = v.data();
    batch.ids = &id;
    IngestResult ir;
    EXPECT_TRUE(stale->Ingest(batch, IngestOptions(), &ir).IsNotFound());
    EXPECT_TRUE(stale->Upsert(batch, IngestOptions(), &ir).IsNotFound());
    CompactResult compacted;
    EXPECT_TRUE(stale->Compact(&compacted).IsNotFound());
  }
  uint64_t n = 1;
  ASSERT_TRUE(db_->Count("c", "", &n).ok());
  EXPECT_EQ(n, 0u);  // nothing the stale handles tried reached the new collection

  std::shared_ptr<Collection> fresh;
  ASSERT_TRUE(db_->GetCollection("c", &fresh).ok());
  EXPECT_EQ(fresh->spec().dim, 5u);
  EXPECT_NE(fresh, a);
  EXPECT_FALSE(fresh->dropped());
  const std::vector<float> rows = Fill(fresh.get(), 300, 6);
  ExpectSearchMatchesOracle(fresh.get(), rows, test::RandomVectors(3, 5, 7), 10);
  // A handle outlives its DB (it is not used after).
  db_.reset();
  EXPECT_EQ(fresh->spec().dim, 5u);
}

// Threads search, get, count, scan, update and read stats by name and by handle while the
// collection is dropped: each call ends OK or NotFound, nothing else, and nothing crashes.
TEST_F(CollectionHandleTest, CallsRacingADropEndOkOrNotFound) {
  constexpr uint32_t kDim = 8;
  const std::vector<float> q = test::RandomVectors(2, kDim, 9);
  for (int round = 0; round < 8; ++round) {
    Create(kDim, 1 + round % 3);
    std::shared_ptr<Collection> h;
    ASSERT_TRUE(db_->GetCollection("c", &h).ok());
    Fill(h.get(), 2000, 10 + round);
    if (round % 2 == 1) {
      // Half the rounds drop a collection that was never loaded: the load races the drop.
      db_.reset();
      ASSERT_TRUE(DB::Open(Options(), dir_.Join("db"), &db_).ok());
      ASSERT_TRUE(db_->GetCollection("c", &h).ok());
    }
    std::atomic<bool> stop{false};
    std::atomic<int> ok{0}, not_found{0};
    std::vector<std::string> bad;
    std::mutex bad_mu;
    auto record = [&](const char* op, const Status& s) {
      if (s.ok()) {
        ++ok;
      } else if (s.IsNotFound()) {
        ++not_found;
      } else {
        std::lock_guard<std::mutex> l(bad_mu);
        bad.push_back(std::string(op) + ": " + s.ToString());
      }
    };
    auto worker = [&](int which, bool by_handle) {
      // Paused between calls, and at most 400 before the drop, so that readers holding the
      // collection's shared lock back to back cannot keep the drop waiting indefinitely.
      int after_stop = 0;
      for (int i = 0; after_stop < 3; ++i) {
        if (stop || i >= 400) ++after_stop;
        if (i >= 400)
          while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        std::this_thread::sleep_for(std::chrono::microseconds(100 * (i % 7)));
        Status s;
        switch (which) {
          case 0: {
            SearchRequest req;
            req.queries = q.data();
            req.num_queries = 2;
            req.dim = kDim;
            req.k = 5;
            req.filter = "n < 3";
            SearchResult res;
            SearchOptions opts;
            opts.device = Device::kCpu;
            s = by_handle ? h->Search(req, opts, &res) : db_->Search("c", req, opts, &res);
            record("search", s);
            break;
          }
          case 1: {
            const int64_t ids[] = {1, 2, 3};
            Include inc;
            inc.vector = true;
            GetResult got;
            s = by_handle ? h->Get(ids, 3, inc, &got) : db_->Get("c", ids, 3, inc, &got);
            record("get", s);
            break;
          }
          case 2: {
            uint64_t n = 0;
            s = by_handle ? h->Count("n = 2", &n) : db_->Count("c", "n = 2", &n);
            record("count", s);
            CollectionStats st;
            s = by_handle ? h->GetStats(&st) : db_->GetStats("c", &st);
            record("stats", s);
            break;
          }
          case 3: {
            ScanRequest req;
            req.limit = 100;
            req.filter = "n >= 1";
            ScanResult page;
            s = by_handle ? h->Scan(req, &page) : db_->Scan("c", req, &page);
            record("scan", s);
            break;
          }
          case 4: {
            UpdateRequest up;
            up.filter = "n = 4";
            up.set = {{"n", Value(int64_t{4})}};
            uint64_t n = 0;
            s = by_handle ? h->Update(up, &n) : db_->Update("c", up, &n);
            record("update", s);
            break;
          }
        }
      }
    };
    std::vector<std::thread> threads;
    for (int w = 0; w < 5; ++w) {
      threads.emplace_back(worker, w, true);
      threads.emplace_back(worker, w, false);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(round % 4 == 0 ? 0 : 5 * round));
    Status drop = db_->DropCollection("c");
    stop = true;
    for (auto& t : threads) t.join();
    ASSERT_TRUE(drop.ok()) << drop.ToString();
    EXPECT_TRUE(bad.empty()) << "round " << round << ": " << bad.size()
                             << " calls failed with another code than NotFound, e.g. "
                             << bad.front();
    EXPECT_GT(not_found.load(), 0) << "round " << round;  // every thread ran after the drop
    EXPECT_TRUE(h->dropped());
  }
}

}  // namespace
}  // namespace sieve
