// Copyright 2026 The Sieve Authors.
//
// Grouped search (SearchRequest::group_by) against a float64 brute-force oracle over a model of
// the rows: both strategies (few_groups, many_groups, proven by explain) and the planner's
// choice, int / string / bool / tags attributes (a tags row in each of its groups), nulls in
// no group, ties at the group boundaries, several shards, deletes and updates, per-query
// filters, include, k beyond the groups, a snapshot, and the request rules.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sieve/db.h"
#include "tests/testutil.h"

namespace sieve {
namespace {

constexpr uint32_t kDim = 8;

struct ModelRow {
  std::vector<float> vec;
  std::vector<Value> attrs;  // schema order: g (int), s (string), b (bool), t (tags), f (int)
};

// Every passing row of each group, as the oracle ranks it.
struct OracleGroup {
  Value value;
  std::vector<std::pair<double, int64_t>> rows;  // (distance, id), best first
};

class GroupByTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status s = DB::Open(Options(), dir_.Join("db"), &db_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  void Create(uint32_t shards, Metric metric = Metric::kL2) {
    CollectionSpec spec;
    spec.name = "c";
    spec.dim = kDim;
    spec.metric = metric;
    spec.shards = shards;
    spec.attributes = {{"g", AttrType::kInt},
                       {"s", AttrType::kString},
                       {"b", AttrType::kBool},
                       {"t", AttrType::kTags},
                       {"f", AttrType::kInt},
                       {"x", AttrType::kFloat}};
    metric_ = metric;
    Status s = db_->CreateCollection(spec);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // Rows ids [first, first + n): g = id % groups (null every 11th row), s = "s" + id % 5,
  // b = id % 2 == 0, t = two or three tags of 6, f = id % 3.
  void Write(int64_t first, size_t n, int64_t groups, uint64_t seed,
             const std::vector<float>* vectors = nullptr) {
    std::vector<float> v = vectors ? *vectors : test::RandomVectors(n, kDim, seed);
    std::vector<int64_t> ids(n);
    std::vector<std::vector<Value>> attrs(n);
    for (size_t i = 0; i < n; ++i) {
      const int64_t id = first + static_cast<int64_t>(i);
      ids[i] = id;
      std::vector<std::string> tags = {"t" + std::to_string(id % 6),
                                       "t" + std::to_string((id / 6) % 6)};
      if (id % 4 == 0) tags.push_back("t" + std::to_string((id + 1) % 6));
      attrs[i] = {id % 11 == 5 ? Value() : Value(id % groups),
                  Value("s" + std::to_string(id % 5)),
                  Value(id % 2 == 0),
                  id % 13 == 7 ? Value() : Value(tags),
                  Value(id % 3),
                  Value(0.5 * static_cast<double>(id))};
      model_[id] = {std::vector<float>(v.begin() + i * kDim, v.begin() + (i + 1) * kDim),
                    attrs[i]};
    }
    RowBatch b;
    b.num_rows = n;
    b.dim = kDim;
    b.vectors = v.data();
    b.ids = ids.data();
    b.attributes = attrs.data();
    IngestResult r;
    Status s = db_->Ingest("c", b, IngestOptions(), &r);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // The oracle: query q's k groups by `attr` (schema index) over rows passing `pass`.
  template <typename Pass>
  std::vector<OracleGroup> Oracle(const float* query, size_t attr, int k, int size,
                                  Pass&& pass) const {
    const std::map<int64_t, ModelRow>& rows = model_;
    std::map<Value, OracleGroup> groups;
    for (const auto& [id, row] : rows) {
      if (!pass(id, row)) continue;
      const Value& v = row.attrs[attr];
      if (IsNull(v)) continue;
      std::vector<Value> values;
      if (auto* tags = std::get_if<std::vector<std::string>>(&v)) {
        std::set<std::string> distinct(tags->begin(), tags->end());
        for (auto& t : distinct) values.emplace_back(t);
      } else {
        values.push_back(v);
      }
      const double d = test::OracleDistance(metric_, query, row.vec.data(), kDim);
      for (Value& value : values) {
        OracleGroup& g = groups[value];
        g.value = value;
        g.rows.emplace_back(metric_ == Metric::kInnerProduct ? -d : d, id);
      }
    }
    std::vector<OracleGroup> out;
    for (auto& [value, g] : groups) {
      std::sort(g.rows.begin(), g.rows.end());
      g.rows.resize(std::min<size_t>(g.rows.size(), size));
      out.push_back(std::move(g));
    }
    std::stable_sort(out.begin(), out.end(), [](const OracleGroup& a, const OracleGroup& b) {
      return a.rows[0] < b.rows[0];  // values ascending already: ties keep value order
    });
    out.resize(std::min<size_t>(out.size(), k));
    return out;
  }

  void ExpectEqual(const std::vector<OracleGroup>& want, const Neighbors& got,
                   const std::string& where) {
    ASSERT_EQ(got.groups.size(), want.size()) << where;
    EXPECT_TRUE(got.ids.empty()) << where;
    for (size_t g = 0; g < want.size(); ++g) {
      const Group& have = got.groups[g];
      EXPECT_EQ(have.value, want[g].value) << where << " group " << g;
      ASSERT_EQ(have.ids.size(), want[g].rows.size()) << where << " group " << g;
      for (size_t i = 0; i < have.ids.size(); ++i) {
        EXPECT_EQ(have.ids[i], want[g].rows[i].second) << where << " group " << g << " row " << i;
        const double d =
            metric_ == Metric::kInnerProduct ? -want[g].rows[i].first : want[g].rows[i].first;
        EXPECT_NEAR(have.distances[i], d, 1e-4 * (1 + std::abs(d))) << where;
      }
    }
  }

  SearchResult Search(const std::vector<float>& queries, int k, const std::string& by, int size,
                      GroupStrategy strategy, const std::string& filter = "",
                      const std::vector<std::string>& filters = {},
                      const SearchOptions& options = SearchOptions()) {
    SearchRequest req;
    req.queries = queries.data();
    req.num_queries = queries.size() / kDim;
    req.dim = kDim;
    req.k = k;
    req.group_by = by;
    req.group_size = size;
    req.group_strategy = strategy;
    req.filter = filter;
    req.filters = filters;
    SearchResult res;
    Status s = db_->Search("c", req, options, &res);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return res;
  }

  // Every strategy against the oracle, for each query; returns what auto chose.
  template <typename Pass>
  std::string CheckAll(const std::vector<float>& queries, int k, const std::string& by,
                       size_t attr, int size, const std::string& filter, Pass&& pass) {
    std::string chosen;
    for (GroupStrategy st :
         {GroupStrategy::kFewGroups, GroupStrategy::kManyGroups, GroupStrategy::kAuto}) {
      SearchResult res = Search(queries, k, by, size, st, filter);
      if (!res.explain.group) {
        ADD_FAILURE() << "no group plan";
        return "";
      }
      const std::string ran = res.explain.group->strategy;
      if (st != GroupStrategy::kAuto) {
        EXPECT_EQ(ran, GroupStrategyName(st));
      } else {
        chosen = ran;
      }
      EXPECT_GT(res.explain.group->searches, 0u);
      for (size_t q = 0; q < queries.size() / kDim; ++q) {
        ExpectEqual(Oracle(queries.data() + q * kDim, attr, k, size, pass), res.results[q],
                    by + " " + ran + " query " + std::to_string(q));
      }
    }
    return chosen;
  }

  test::ScratchDir dir_;
  std::unique_ptr<DB> db_;
  std::map<int64_t, ModelRow> model_;
  Metric metric_ = Metric::kL2;
};

auto kAll = [](int64_t, const ModelRow&) { return true; };

TEST_F(GroupByTest, FewGroupsEveryTypeMatchesTheOracle) {
  Create(/*shards=*/3);
  Write(0, 600, /*groups=*/7, 1);
  const std::vector<float> queries = test::RandomVectors(3, kDim, 99);
  EXPECT_EQ(CheckAll(queries, 4, "g", 0, 3, "", kAll), "few_groups");
  CheckAll(queries, 3, "s", 1, 2, "", kAll);
  CheckAll(queries, 2, "b", 2, 5, "", kAll);
  CheckAll(queries, 4, "t", 3, 3, "", kAll);
  // A filter: only f = 1 rows.
  CheckAll(queries, 5, "g", 0, 2, "f = 1",
           [](int64_t, const ModelRow& r) { return std::get<int64_t>(r.attrs[4]) == 1; });
}

TEST_F(GroupByTest, ManyGroupsMatchesTheOracleAndAutoChoosesIt) {
  Create(/*shards=*/2);
  // 6,000 values over 12,000 rows: more than kMaxFewGroups.
  Write(0, 12000, /*groups=*/6000, 2);
  const std::vector<float> queries = test::RandomVectors(2, kDim, 98);
  SearchResult res = Search(queries, 5, "g", 2, GroupStrategy::kAuto);
  ASSERT_TRUE(res.explain.group);
  EXPECT_EQ(res.explain.group->strategy, "many_groups");
  EXPECT_GE(res.explain.group->distinct_values, 6000u);
  EXPECT_GE(res.explain.group->rounds, 1u);
  for (size_t q = 0; q < 2; ++q) {
    ExpectEqual(Oracle(queries.data() + q * kDim, 0, 5, 2, kAll), res.results[q], "auto");
  }
  // group_size past what the first scans hold: the fill searches give the rest.
  res = Search(queries, 3, "g", 2, GroupStrategy::kManyGroups, "f = 2");
  bool filled = false;
  for (auto& b : res.explain.group->batches) filled |= b.kind == "fill";
  EXPECT_TRUE(filled) << res.explain.ToJson();
  for (size_t q = 0; q < 2; ++q) {
    ExpectEqual(Oracle(queries.data() + q * kDim, 0, 3, 2,
                       [](int64_t, const ModelRow& r) {
                         return std::get<int64_t>(r.attrs[4]) == 2;
                       }),
                res.results[q], "many, f = 2");
  }
  const std::string json = res.explain.ToJson();
  EXPECT_NE(json.find("\"group\": {\"field\": \"g\", \"strategy\": \"many_groups\""),
            std::string::npos)
      << json;
}

TEST_F(GroupByTest, TiesAtGroupBoundariesRankByIdThenValue) {
  Create(/*shards=*/1);
  // Every row the same vector: all distances tie, so groups rank by their smallest id, and a
  // tags row's groups by value.
  std::vector<float> same(200 * kDim, 0.25f);
  Write(0, 200, /*groups=*/9, 3, &same);
  const std::vector<float> queries = test::RandomVectors(2, kDim, 97);
  CheckAll(queries, 5, "g", 0, 4, "", kAll);
  CheckAll(queries, 6, "t", 3, 2, "", kAll);
  CheckAll(queries, 3, "s", 1, 3, "b = true",
           [](int64_t, const ModelRow& r) { return std::get<bool>(r.attrs[2]); });
}

TEST_F(GroupByTest, TagsRowsJoinEachOfTheirGroupsAndNullsNone) {
  Create(/*shards=*/2);
  Write(0, 300, /*groups=*/4, 4);
  const std::vector<float> queries = test::RandomVectors(1, kDim, 96);
  SearchResult res = Search(queries, 6, "t", 300, GroupStrategy::kAuto);
  ASSERT_EQ(res.results[0].groups.size(), 6u);  // t0 .. t5
  std::map<int64_t, int> memberships;
  for (const Group& g : res.results[0].groups) {
    for (int64_t id : g.ids) ++memberships[id];
  }
  for (const auto& [id, row] : model_) {
    if (IsNull(row.attrs[3])) {
      EXPECT_EQ(memberships.count(id), 0u) << "null tags row " << id;
      continue;
    }
    const auto& tags = std::get<std::vector<std::string>>(row.attrs[3]);
    EXPECT_EQ(memberships[id], std::set<std::string>(tags.begin(), tags.end()).size()) << id;
  }
  // An int attribute with nulls: every row of each group, none null.
  res = Search(queries, 4, "g", 300, GroupStrategy::kAuto);
  size_t total = 0;
  for (const Group& g : res.results[0].groups) total += g.ids.size();
  size_t non_null = 0;
  for (const auto& [id, row] : model_) non_null += !IsNull(row.attrs[0]);
  EXPECT_EQ(total, non_null);
}

TEST_F(GroupByTest, KBeyondTheGroupsReturnsEveryGroup) {
  Create(/*shards=*/2);
  Write(0, 100, /*groups=*/3, 5);
  const std::vector<float> queries = test::RandomVectors(2, kDim, 95);
  for (GroupStrategy st : {GroupStrategy::kFewGroups, GroupStrategy::kManyGroups}) {
    SearchResult res = Search(queries, 50, "g", 2, st);
    for (size_t q = 0; q < 2; ++q) {
      EXPECT_EQ(res.results[q].groups.size(), 3u);
      ExpectEqual(Oracle(queries.data() + q * kDim, 0, 50, 2, kAll), res.results[q], "k > groups");
    }
    // A filter nothing passes: no groups.
    res = Search(queries, 5, "g", 2, st, "f = 7");
    EXPECT_TRUE(res.results[0].groups.empty());
  }
}

TEST_F(GroupByTest, DeletesAndUpdatesAreReflected) {
  Create(/*shards=*/2);
  Write(0, 400, /*groups=*/6, 6);
  uint64_t deleted = 0;
  ASSERT_TRUE(db_->DeleteByFilter("c", "g = 2 OR f = 0", &deleted).ok());
  for (auto it = model_.begin(); it != model_.end();) {
    const ModelRow& r = it->second;
    const bool gone = (!IsNull(r.attrs[0]) && std::get<int64_t>(r.attrs[0]) == 2) ||
                      std::get<int64_t>(r.attrs[4]) == 0;
    it = gone ? model_.erase(it) : std::next(it);
  }
  UpdateRequest up;
  up.filter = "g = 4";
  up.set = {{"g", Value(int64_t{40})}, {"s", Value(std::string("moved"))}};
  uint64_t updated = 0;
  ASSERT_TRUE(db_->Update("c", up, &updated).ok());
  ASSERT_GT(updated, 0u);
  for (auto& [id, r] : model_) {
    if (!IsNull(r.attrs[0]) && std::get<int64_t>(r.attrs[0]) == 4) {
      r.attrs[0] = Value(int64_t{40});
      r.attrs[1] = Value(std::string("moved"));
    }
  }
  const std::vector<float> queries = test::RandomVectors(2, kDim, 94);
  CheckAll(queries, 6, "g", 0, 3, "", kAll);
  CheckAll(queries, 6, "s", 1, 2, "", kAll);
}

TEST_F(GroupByTest, PerQueryFiltersGroupWithinTheirOwnFilter) {
  Create(/*shards=*/3);
  Write(0, 500, /*groups=*/8, 7);
  const std::vector<float> queries = test::RandomVectors(3, kDim, 93);
  const std::vector<std::string> filters = {"f = 0", "", "b = false AND g < 5"};
  std::vector<std::function<bool(int64_t, const ModelRow&)>> pass = {
      [](int64_t, const ModelRow& r) { return std::get<int64_t>(r.attrs[4]) == 0; },
      [](int64_t, const ModelRow&) { return true; },
      [](int64_t, const ModelRow& r) {
        return !std::get<bool>(r.attrs[2]) && !IsNull(r.attrs[0]) &&
               std::get<int64_t>(r.attrs[0]) < 5;
      }};
  for (GroupStrategy st : {GroupStrategy::kFewGroups, GroupStrategy::kManyGroups}) {
    SearchResult res = Search(queries, 4, "g", 3, st, "", filters);
    EXPECT_EQ(res.explain.filter_mode, "bitmap");
    for (size_t q = 0; q < 3; ++q) {
      ExpectEqual(Oracle(queries.data() + q * kDim, 0, 4, 3, pass[q]), res.results[q],
                  std::string(GroupStrategyName(st)) + " query " + std::to_string(q));
    }
  }
}

TEST_F(GroupByTest, IncludeReturnsEachGroupRowsFields) {
  Create(/*shards=*/2);
  Write(0, 200, /*groups=*/5, 8);
  const std::vector<float> queries = test::RandomVectors(1, kDim, 92);
  SearchRequest req;
  req.queries = queries.data();
  req.num_queries = 1;
  req.dim = kDim;
  req.k = 3;
  req.group_by = "t";
  req.group_size = 2;
  req.include.attributes = {"g", "t"};
  req.include.vector = true;
  SearchResult res;
  ASSERT_TRUE(db_->Search("c", req, SearchOptions(), &res).ok());
  EXPECT_EQ(res.attribute_names, (std::vector<std::string>{"g", "t"}));
  ASSERT_EQ(res.results[0].groups.size(), 3u);
  for (const Group& g : res.results[0].groups) {
    ASSERT_EQ(g.attributes.size(), g.ids.size());
    ASSERT_EQ(g.vectors.size(), g.ids.size());
    for (size_t i = 0; i < g.ids.size(); ++i) {
      const ModelRow& row = model_.at(g.ids[i]);
      EXPECT_EQ(g.attributes[i][0], row.attrs[0]);
      EXPECT_EQ(g.attributes[i][1], row.attrs[3]);
      EXPECT_EQ(g.vectors[i], row.vec);
      const auto& tags = std::get<std::vector<std::string>>(row.attrs[3]);
      EXPECT_NE(std::find(tags.begin(), tags.end(), std::get<std::string>(g.value)), tags.end());
    }
  }
}

TEST_F(GroupByTest, SnapshotSeesItsOwnVersion) {
  Create(/*shards=*/2);
  Write(0, 300, /*groups=*/5, 9);
  const std::map<int64_t, ModelRow> before = model_;
  const Snapshot* snap = nullptr;
  ASSERT_TRUE(db_->GetSnapshot(&snap).ok());
  Write(300, 300, /*groups=*/5, 10);  // lands after the snapshot
  uint64_t deleted = 0;
  ASSERT_TRUE(db_->DeleteByFilter("c", "g = 1", &deleted).ok());
  const std::vector<float> queries = test::RandomVectors(2, kDim, 91);
  SearchOptions at;
  at.snapshot = snap;
  std::map<int64_t, ModelRow> after = model_;
  model_ = before;
  for (GroupStrategy st : {GroupStrategy::kFewGroups, GroupStrategy::kManyGroups}) {
    SearchResult res = Search(queries, 5, "g", 3, st, "", {}, at);
    for (size_t q = 0; q < 2; ++q) {
      ExpectEqual(Oracle(queries.data() + q * kDim, 0, 5, 3, kAll), res.results[q], "snapshot");
    }
  }
  ASSERT_TRUE(db_->ReleaseSnapshot(snap).ok());
}

TEST_F(GroupByTest, InnerProductRanksLargestFirst) {
  Create(/*shards=*/2, Metric::kInnerProduct);
  Write(0, 300, /*groups=*/10, 11);
  const std::vector<float> queries = test::RandomVectors(2, kDim, 90);
  CheckAll(queries, 4, "g", 0, 3, "", kAll);
}

TEST_F(GroupByTest, RequestRulesAreEnforced) {
  Create(/*shards=*/1);
  Write(0, 20, 3, 12);
  const std::vector<float> q = test::RandomVectors(1, kDim, 1);
  SearchRequest req;
  req.queries = q.data();
  req.num_queries = 1;
  req.dim = kDim;
  SearchResult res;
  auto expect = [&](const std::string& needle) {
    Status s = db_->Search("c", req, SearchOptions(), &res);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_NE(s.message().find(needle), std::string::npos) << s.ToString();
  };
  req.group_by = "nope";
  expect("no attribute 'nope'");
  req.group_by = "x";
  expect("'x' is float");
  req.group_by = "g";
  req.group_size = 0;
  expect("group_size must be within");
  req.group_size = 2;
  req.k = kMaxSearchK;
  expect("k × group_size");
  req.k = 3;
  req.radius = 1.0;  // a grouped search is not a range search nor a page
  expect("group_by does not combine with radius, offset or after");
  req.radius.reset();
  req.offset = 0;
  expect("group_by does not combine");
  req.offset.reset();
  req.after = {""};
  expect("group_by does not combine");
  req.after.clear();
  req.group_by = "";
  expect("group_size needs group_by");
}

}  // namespace
}  // namespace sieve
