// Copyright 2026 The Sieve Authors.
//
// Range search (SearchRequest::radius, limit) and pages (offset, after) against a float64
// oracle over a model of the rows: every metric and every path, one filter or one per query,
// deletes, rows exactly on the radius, radii passing none and all, a limit hit exactly, pages
// across rows tied exactly (duplicate vectors) at their edges, writes between pages with and
// without a snapshot, the explain's windows, include, and every rule's error.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sieve/db.h"
#include "tests/testutil.h"

namespace sieve {
namespace {

constexpr uint32_t kDim = 8;

struct Hit {
  double distance;
  int64_t id;
};

class RangePagesTest : public ::testing::TestWithParam<Metric> {
 protected:
  void SetUp() override {
    Status s = DB::Open(Options(), dir_.Join("db"), &db_);
    ASSERT_TRUE(s.ok()) << s.ToString();
    CollectionSpec spec;
    spec.name = "c";
    spec.dim = kDim;
    spec.metric = GetParam();
    spec.shards = 3;
    spec.attributes = {{"n", AttrType::kInt}};
    s = db_->CreateCollection(spec);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // Rows [first, first + count): each distinct vector of `distinct` small-integer vectors
  // repeated (exact ties in float32 and float64), n = id % 5. With `reverse`, ids fall as the
  // rows are stored, so that an executor's float32 ties (broken by the row's place in its
  // shard) keep the larger ids, which the exact order puts last.
  void Write(int64_t first, size_t count, size_t distinct, uint64_t seed, bool reverse = false) {
    std::vector<float> base = test::RandomVectors(distinct, kDim, seed);
    for (float& x : base) x = std::round(x * 3);
    for (size_t i = 0; i < distinct; ++i) base[i * kDim] += 4;  // no zero vector (cosine)
    std::vector<float> v(count * kDim);
    std::vector<int64_t> ids(count);
    std::vector<std::vector<Value>> attrs(count);
    for (size_t i = 0; i < count; ++i) {
      ids[i] = first + static_cast<int64_t>(reverse ? count - 1 - i : i);
      std::copy_n(base.begin() + (i % distinct) * kDim, kDim, v.begin() + i * kDim);
      attrs[i] = {Value(ids[i] % 5)};
      rows_[ids[i]] = {std::vector<float>(v.begin() + i * kDim, v.begin() + (i + 1) * kDim),
                       ids[i] % 5};
    }
    RowBatch b;
    b.num_rows = count;
    b.dim = kDim;
    b.vectors = v.data();
    b.ids = ids.data();
    b.attributes = attrs.data();
    IngestResult r;
    Status s = db_->Ingest("c", b, IngestOptions(), &r);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  void Delete(int64_t lo, int64_t hi) {
    uint64_t deleted = 0;
    Status s = db_->DeleteByFilter(
        "c", "id >= " + std::to_string(lo) + " AND id <= " + std::to_string(hi), &deleted);
    ASSERT_TRUE(s.ok()) << s.ToString();
    for (int64_t id = lo; id <= hi; ++id) rows_.erase(id);
  }

  bool LargerBetter() const { return GetParam() == Metric::kInnerProduct; }

  // Every passing row of `rows` (n == n_eq, or all when n_eq < 0) in exact (distance, id)
  // order, in float64.
  std::vector<Hit> Oracle(const float* q, int64_t n_eq,
                          const std::map<int64_t, std::pair<std::vector<float>, int64_t>>& rows) {
    std::vector<Hit> hits;
    for (const auto& [id, row] : rows) {
      if (n_eq >= 0 && row.second != n_eq) continue;
      hits.push_back({test::OracleDistance(GetParam(), q, row.first.data(), kDim), id});
    }
    const bool lb = LargerBetter();
    std::sort(hits.begin(), hits.end(), [&](const Hit& a, const Hit& b) {
      if (a.distance != b.distance) return lb ? a.distance > b.distance : a.distance < b.distance;
      return a.id < b.id;
    });
    return hits;
  }
  std::vector<Hit> Oracle(const float* q, int64_t n_eq) { return Oracle(q, n_eq, rows_); }

  bool Within(double d, double r) const { return LargerBetter() ? d >= r : d <= r; }

  void ExpectRows(const Neighbors& got, const std::vector<Hit>& want, size_t begin, size_t end) {
    ASSERT_EQ(got.ids.size(), end - begin);
    for (size_t i = begin; i < end; ++i) {
      ASSERT_EQ(got.ids[i - begin], want[i].id) << "row " << i;
      ASSERT_EQ(got.distances[i - begin], static_cast<float>(want[i].distance)) << "row " << i;
    }
  }

  std::vector<float> Queries(size_t n, uint64_t seed) {
    std::vector<float> q = test::RandomVectors(n, kDim, seed);
    for (float& x : q) x = std::round(x * 3);
    for (size_t i = 0; i < n; ++i) q[i * kDim + 1] += 2;
    return q;
  }

  test::ScratchDir dir_;
  std::unique_ptr<DB> db_;
  std::map<int64_t, std::pair<std::vector<float>, int64_t>> rows_;
};

// The radius at which the oracle passes `count` rows, exactly the count-th row's distance.
double RadiusPassing(const std::vector<Hit>& hits, size_t count) {
  return hits[std::min(count, hits.size()) - 1].distance;
}

TEST_P(RangePagesTest, RangeEqualsTheOracleOnEveryPathWithFiltersAndDeletes) {
  Write(0, 900, 120, 1);
  Delete(100, 160);
  std::vector<float> q = Queries(4, 2);
  const std::vector<std::string> filters = {"", "n = 2", "", "n = 4"};
  const std::vector<int64_t> n_eq = {-1, 2, -1, 4};
  for (SearchPath path :
       {SearchPath::kAuto, SearchPath::kSddmm, SearchPath::kGather, SearchPath::kDense}) {
    for (size_t passing : {1, 30, 400, 2000}) {
      SCOPED_TRACE(std::string(SearchPathName(path)) + " passing " + std::to_string(passing));
      // One radius per batch: query 0's, so other queries pass other counts.
      const double r = RadiusPassing(Oracle(q.data(), -1), passing);
      SearchRequest req;
      req.queries = q.data();
      req.num_queries = 4;
      req.dim = kDim;
      req.filters = filters;
      req.radius = r;
      req.limit = 100000;
      SearchOptions opt;
      opt.path = path;
      SearchResult res;
      Status s = db_->Search("c", req, opt, &res);
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_EQ(res.explain.shape, "range");
      for (size_t i = 0; i < 4; ++i) {
        std::vector<Hit> all = Oracle(q.data() + i * kDim, n_eq[i]);
        size_t within = 0;
        while (within < all.size() && Within(all[within].distance, r)) ++within;
        ExpectRows(res.results[i], all, 0, within);
        EXPECT_FALSE(res.results[i].limit_reached);
        EXPECT_TRUE(res.results[i].next.empty());
      }
    }
  }
}

TEST_P(RangePagesTest, RowsOnTheRadiusNoneAllAndTheLimit) {
  Write(0, 600, 50, 3);  // every vector 12 times: rows exactly on any row's distance
  std::vector<float> q = Queries(1, 4);
  std::vector<Hit> all = Oracle(q.data(), -1);
  auto run = [&](double r, int limit, SearchResult* res) {
    SearchRequest req;
    req.queries = q.data();
    req.num_queries = 1;
    req.dim = kDim;
    req.radius = r;
    req.limit = limit;
    Status s = db_->Search("c", req, SearchOptions(), res);
    ASSERT_TRUE(s.ok()) << s.ToString();
  };
  // A radius equal to the 100th row's distance takes every row tied with it.
  const double r = all[99].distance;
  size_t within = 0;
  while (within < all.size() && Within(all[within].distance, r)) ++within;
  ASSERT_GE(within, 100u + 1);  // the 100th row's whole tie group
  SearchResult res;
  run(r, 100000, &res);
  ExpectRows(res.results[0], all, 0, within);
  // Just inside the radius's neighbours: the tie group drops out whole.
  run(LargerBetter() ? std::nextafter(r, 1e300) : std::nextafter(r, -1e300), 100000, &res);
  size_t inside = 0;
  while (inside < all.size() && all[inside].distance != r) ++inside;
  ExpectRows(res.results[0], all, 0, inside);
  // None and all.
  run(LargerBetter() ? all[0].distance + 1 : all[0].distance - 1, 10, &res);
  EXPECT_TRUE(res.results[0].ids.empty());
  EXPECT_FALSE(res.results[0].limit_reached);
  run(LargerBetter() ? -1e9 : 1e9, 100000, &res);
  ExpectRows(res.results[0], all, 0, all.size());
  EXPECT_FALSE(res.results[0].limit_reached);
  // The limit: equal to the rows within (not reached), one fewer (reached), inside a tie group.
  run(r, static_cast<int>(within), &res);
  ExpectRows(res.results[0], all, 0, within);
  EXPECT_FALSE(res.results[0].limit_reached);
  run(r, static_cast<int>(within - 1), &res);
  ExpectRows(res.results[0], all, 0, within - 1);
  EXPECT_TRUE(res.results[0].limit_reached);
  run(r, 95, &res);
  ExpectRows(res.results[0], all, 0, 95);
  EXPECT_TRUE(res.results[0].limit_reached);
}

TEST_P(RangePagesTest, AWideRadiusWidensTheWindowInRounds) {
  Write(0, 3000, 3000, 5);
  std::vector<float> q = Queries(2, 6);
  const double r = RadiusPassing(Oracle(q.data(), -1), 2500);
  SearchRequest req;
  req.queries = q.data();
  req.num_queries = 2;
  req.dim = kDim;
  req.radius = r;
  req.limit = 100000;
  req.include = {{"n"}, false, true};
  SearchResult res;
  Status s = db_->Search("c", req, SearchOptions(), &res);
  ASSERT_TRUE(s.ok()) << s.ToString();
  // 256 rows, then 2048 (each shard's 1,000 rows: all of them).
  ASSERT_EQ(res.explain.windows.size(), 2u);
  EXPECT_EQ(res.explain.windows[0], 256u);
  EXPECT_EQ(res.explain.windows[1], 2048u);
  EXPECT_EQ(res.explain.window_queries[0], 2u);
  const std::string json = res.explain.ToJson();
  EXPECT_NE(json.find("\"shape\": \"range\""), std::string::npos) << json;
  for (size_t i = 0; i < 2; ++i) {
    std::vector<Hit> all = Oracle(q.data() + i * kDim, -1);
    size_t within = 0;
    while (within < all.size() && Within(all[within].distance, r)) ++within;
    ExpectRows(res.results[i], all, 0, within);
    // include: each row's own n and vector.
    ASSERT_EQ(res.results[i].attributes.size(), within);
    for (size_t j = 0; j < within; ++j) {
      const auto& row = rows_.at(res.results[i].ids[j]);
      EXPECT_EQ(std::get<int64_t>(res.results[i].attributes[j][0]), row.second);
      EXPECT_EQ(res.results[i].vectors[j], row.first);
    }
  }
}

// Pages of k through every passing row, by offset or by cursor, equal the oracle's order.
TEST_P(RangePagesTest, PagesThroughTiesEqualOneExactSearch) {
  // Four vectors, each 200 times (about 65 rows per shard, more than the planner's candidate
  // margin): tie groups straddle page edges and the executors' windows.
  Write(0, 800, 4, 7, /*reverse=*/true);
  Delete(40, 55);
  std::vector<float> q = Queries(2, 8);
  const std::vector<std::string> filters = {"n != 3", ""};
  for (SearchPath path : {SearchPath::kAuto, SearchPath::kSddmm, SearchPath::kDense}) {
    for (bool cursor : {false, true}) {
      SCOPED_TRACE(std::string(SearchPathName(path)) + (cursor ? " cursor" : " offset"));
      std::vector<std::vector<Hit>> all = {Oracle(q.data(), -1), Oracle(q.data() + kDim, -1)};
      all[0].erase(std::remove_if(all[0].begin(), all[0].end(),
                                  [&](const Hit& h) { return rows_.at(h.id).second == 3; }),
                   all[0].end());
      const int k = 7;
      std::vector<std::string> after = {"", ""};
      std::vector<bool> done = {false, false};
      size_t pages = 0, widened = 0;
      for (size_t at = 0;; at += k, ++pages) {
        SearchRequest req;
        req.queries = q.data();
        req.num_queries = 2;
        req.dim = kDim;
        req.k = k;
        req.filters = filters;
        if (cursor) {
          req.after = after;
        } else {
          req.offset = static_cast<int64_t>(at);
        }
        SearchOptions opt;
        opt.path = path;
        SearchResult res;
        Status s = db_->Search("c", req, opt, &res);
        ASSERT_TRUE(s.ok()) << s.ToString();
        EXPECT_EQ(res.explain.shape, "page");
        widened += res.explain.windows.size() > 1;
        bool more = false;
        for (size_t i = 0; i < 2; ++i) {
          if (done[i]) continue;  // its cursor is "": it would start again
          const size_t end = std::min(at + k, all[i].size());
          ExpectRows(res.results[i], all[i], std::min(at, end), end);
          EXPECT_EQ(res.results[i].next.empty(), end - std::min(at, end) < size_t{k});
          after[i] = res.results[i].next;
          done[i] = after[i].empty();
          more |= at + k < all[i].size();
        }
        if (!more) break;
      }
      EXPECT_GT(pages, 80u);
      // Tie groups at a shard's window edge made pages search again with a wider window.
      EXPECT_GT(widened, 0u);
    }
  }
}

TEST_P(RangePagesTest, WritesBetweenPagesUnderASnapshotChangeNothing) {
  Write(0, 500, 40, 9);
  std::vector<float> q = Queries(1, 10);
  const Snapshot* snap = nullptr;
  ASSERT_TRUE(db_->GetSnapshot(&snap).ok());
  const auto at_snapshot = rows_;
  const std::vector<Hit> all = Oracle(q.data(), -1, at_snapshot);
  std::string after;
  size_t seen = 0;
  for (int page = 0; seen < all.size(); ++page) {
    SearchRequest req;
    req.queries = q.data();
    req.num_queries = 1;
    req.dim = kDim;
    req.k = 9;
    req.after = {after};
    SearchOptions opt;
    opt.snapshot = snap;
    SearchResult res;
    Status s = db_->Search("c", req, opt, &res);
    ASSERT_TRUE(s.ok()) << s.ToString();
    const size_t end = std::min(seen + 9, all.size());
    ExpectRows(res.results[0], all, seen, end);
    seen = end;
    after = res.results[0].next;
    // Writes land: rows equal to the nearest ones (they would take the first places), and
    // deletes of rows the next pages hold.
    Write(10000 + page * 40, 40, 40, 9);
    Delete(seen + 3, seen + 5);
  }
  ASSERT_TRUE(db_->ReleaseSnapshot(snap).ok());
}

TEST_P(RangePagesTest, WithoutASnapshotACursorResumesAfterItsRowInTheRowsAsTheyAreNow) {
  Write(0, 400, 400, 11);
  std::vector<float> q = Queries(1, 12);
  SearchRequest req;
  req.queries = q.data();
  req.num_queries = 1;
  req.dim = kDim;
  req.k = 20;
  req.offset = 0;
  SearchResult res;
  ASSERT_TRUE(db_->Search("c", req, SearchOptions(), &res).ok());
  const std::vector<Hit> before = Oracle(q.data(), -1);
  ExpectRows(res.results[0], before, 0, 20);
  const Hit last = before[19];
  // New rows (some before the cursor, some after) and deletes after it.
  Write(5000, 300, 300, 13);
  Delete(before[25].id, before[25].id);
  req.offset.reset();
  req.after = {res.results[0].next};
  ASSERT_TRUE(db_->Search("c", req, SearchOptions(), &res).ok());
  std::vector<Hit> now = Oracle(q.data(), -1);
  const bool lb = LargerBetter();
  auto past = std::find_if(now.begin(), now.end(), [&](const Hit& h) {
    if (h.distance != last.distance)
      return lb ? h.distance < last.distance : h.distance > last.distance;
    return h.id > last.id;
  });
  const size_t start = past - now.begin();
  ExpectRows(res.results[0], now, start, start + 20);
}

TEST_P(RangePagesTest, RulesRefuseBadRequests) {
  Write(0, 50, 50, 14);
  std::vector<float> q = Queries(2, 15);
  auto check = [&](const std::function<void(SearchRequest*)>& set, const std::string& needle) {
    SearchRequest req;
    req.queries = q.data();
    req.num_queries = 2;
    req.dim = kDim;
    set(&req);
    SearchResult res;
    Status s = db_->Search("c", req, SearchOptions(), &res);
    EXPECT_TRUE(s.IsInvalidArgument()) << needle << ": " << s.ToString();
    EXPECT_NE(s.ToString().find(needle), std::string::npos) << s.ToString();
  };
  check([](SearchRequest* r) { r->radius = std::nan(""); }, "radius must be a finite");
  check(
      [](SearchRequest* r) {
        r->radius = 1;
        r->limit = 0;
      },
      "limit must be 1 to");
  check(
      [](SearchRequest* r) {
        r->radius = 1;
        r->offset = 0;
      },
      "takes no offset or after");
  check([](SearchRequest* r) { r->offset = -1; }, "offset must be 0 to");
  check([](SearchRequest* r) { r->offset = kMaxSearchK; }, "offset + k <=");
  check(
      [](SearchRequest* r) {
        r->offset = 0;
        r->after = {"", ""};
      },
      "not both");
  check([](SearchRequest* r) { r->after = {""}; }, "1 cursors for 2 queries");
  check([](SearchRequest* r) { r->after = {"", "bogus"}; }, "after: query 1: 'bogus' is not");
  check([](SearchRequest* r) { r->after = {"c1.zz", ""}; }, "is not a cursor");
  // A real cursor with one character changed to a non-hex one.
  SearchRequest req;
  req.queries = q.data();
  req.num_queries = 1;
  req.dim = kDim;
  req.k = 3;
  req.offset = 0;
  SearchResult res;
  ASSERT_TRUE(db_->Search("c", req, SearchOptions(), &res).ok());
  std::string token = res.results[0].next;
  ASSERT_EQ(token.size(), 51u);
  token[20] = 'x';
  check([&](SearchRequest* r) { r->after = {token, ""}; }, "is not a cursor");
}

INSTANTIATE_TEST_SUITE_P(Metrics, RangePagesTest,
                         ::testing::Values(Metric::kL2, Metric::kInnerProduct, Metric::kCosine),
                         [](const auto& info) { return std::string(MetricName(info.param)); });

}  // namespace
}  // namespace sieve
