// Copyright 2026 The Sieve Authors.
//
// Rows in and rows out through the public API, against an oracle kept beside the store:
// attributes with results, Get, Upsert, Update, Count, Scan, `id` in filters, DropCollection
// and Compact (ids stable, searches exact, space given back), each checked again after a
// reopen.

#include <algorithm>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "sieve/db.h"
#include "tests/testutil.h"

namespace sieve {
namespace {

constexpr uint32_t kDim = 6;

// What the store must hold: id → (vector, price, color, tags).
struct OracleRow {
  std::vector<float> v;
  std::vector<Value> attrs;  // price (float), color (string), tags
};

class RowsTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }

  void Reopen() {
    db_.reset();
    ASSERT_TRUE(DB::Open(Options(), dir_.Join("db"), &db_).ok());
  }

  void Create(uint32_t shards = 3) {
    CollectionSpec spec;
    spec.name = "c";
    spec.dim = kDim;
    spec.metric = Metric::kL2;
    spec.shards = shards;
    spec.attributes = {{"price", AttrType::kFloat},
                       {"color", AttrType::kString},
                       {"tags", AttrType::kTags}};
    ASSERT_TRUE(db_->CreateCollection(spec).ok());
  }

  // Writes rows with these ids (new random vectors, attributes from the id), via Upsert when
  // `upsert`, and records them in the oracle.
  IngestResult Write(const std::vector<int64_t>& ids, uint64_t seed, bool upsert) {
    auto v = test::RandomVectors(ids.size(), kDim, seed);
    std::vector<std::vector<Value>> attrs(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      const int64_t id = ids[i];
      attrs[i] = {Value(static_cast<double>(id % 7) + 0.5 + static_cast<double>(seed)),
                  id % 3 == 0 ? Value() : Value(std::string(id % 2 ? "red" : "blue")),
                  Value(std::vector<std::string>{"t" + std::to_string(id % 4)})};
    }
    RowBatch b;
    b.num_rows = ids.size();
    b.dim = kDim;
    b.vectors = v.data();
    b.ids = ids.data();
    b.attributes = attrs.data();
    IngestOptions o;
    o.batch_rows = 100;
    IngestResult r;
    Status s = upsert ? db_->Upsert("c", b, o, &r) : db_->Ingest("c", b, o, &r);
    EXPECT_TRUE(s.ok()) << s.ToString();
    for (size_t i = 0; i < ids.size(); ++i) {
      oracle_[ids[i]] = {std::vector<float>(v.begin() + i * kDim, v.begin() + (i + 1) * kDim),
                         attrs[i]};
    }
    return r;
  }

  std::vector<int64_t> Range(int64_t lo, int64_t hi) {
    std::vector<int64_t> ids;
    for (int64_t i = lo; i < hi; ++i) ids.push_back(i);
    return ids;
  }

  // Every live row, through Scan in pages of `page`, must equal the oracle (in id order).
  void ExpectScanEqualsOracle(size_t page) {
    ScanRequest req;
    req.include.all_attributes = true;
    req.include.vector = true;
    req.limit = page;
    std::vector<Row> all;
    for (int pages = 0;; ++pages) {
      ASSERT_LT(pages, 100000);
      ScanResult r;
      ASSERT_TRUE(db_->Scan("c", req, &r).ok());
      ASSERT_EQ(r.attribute_names, (std::vector<std::string>{"price", "color", "tags"}));
      ASSERT_LE(r.rows.size(), page);
      for (auto& row : r.rows) all.push_back(std::move(row));
      if (r.done) break;
      req.has_after = true;
      req.after = r.next;
    }
    ASSERT_EQ(all.size(), oracle_.size());
    size_t i = 0;
    for (const auto& [id, want] : oracle_) {
      EXPECT_EQ(all[i].id, id);
      EXPECT_EQ(all[i].vector, want.v) << "id " << id;
      EXPECT_EQ(all[i].attributes, want.attrs) << "id " << id;
      ++i;
    }
  }

  // A search with a filter on every shard, against the float64 oracle of the live rows.
  void ExpectSearchExact(const std::string& filter, const std::function<bool(const OracleRow&)>& pass) {
    auto q = test::RandomVectors(4, kDim, 99);
    SearchRequest req;
    req.queries = q.data();
    req.num_queries = 4;
    req.dim = kDim;
    req.k = 15;
    req.filter = filter;
    req.include.all_attributes = true;
    req.include.vector = true;
    SearchOptions o;
    o.device = Device::kCpu;
    for (SearchPath path : {SearchPath::kSddmm, SearchPath::kGather, SearchPath::kDense}) {
      o.path = path;
      SearchResult r;
      Status s = db_->Search("c", req, o, &r);
      ASSERT_TRUE(s.ok()) << s.ToString();
      for (size_t qi = 0; qi < 4; ++qi) {
        std::vector<std::pair<double, int64_t>> want;
        for (const auto& [id, row] : oracle_) {
          if (!pass(row)) continue;
          want.emplace_back(test::OracleDistance(Metric::kL2, q.data() + qi * kDim, row.v.data(),
                                                 kDim),
                            id);
        }
        std::sort(want.begin(), want.end());
        want.resize(std::min<size_t>(want.size(), 15));
        const Neighbors& nb = r.results[qi];
        ASSERT_EQ(nb.ids.size(), want.size());
        ASSERT_EQ(nb.attributes.size(), want.size());
        ASSERT_EQ(nb.vectors.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i) {
          EXPECT_EQ(nb.ids[i], want[i].second);
          EXPECT_NEAR(nb.distances[i], want[i].first, 1e-4);
          const OracleRow& row = oracle_.at(nb.ids[i]);
          EXPECT_EQ(nb.attributes[i], row.attrs);
          EXPECT_EQ(nb.vectors[i], row.v);
        }
      }
    }
  }

  test::ScratchDir dir_;
  std::unique_ptr<DB> db_;
  std::map<int64_t, OracleRow> oracle_;
};

TEST_F(RowsTest, SearchReturnsTheIncludedAttributesAndVectors) {
  Create();
  Write(Range(0, 300), 1, false);
  ExpectSearchExact("", [](const OracleRow&) { return true; });
  ExpectSearchExact("color = 'red'", [](const OracleRow& r) {
    return std::holds_alternative<std::string>(r.attrs[1]) &&
           std::get<std::string>(r.attrs[1]) == "red";
  });
  // Named attributes come in the order asked for; unknown ones are refused with the list.
  auto q = test::RandomVectors(1, kDim, 5);
  SearchRequest req;
  req.queries = q.data();
  req.num_queries = 1;
  req.dim = kDim;
  req.k = 3;
  ASSERT_TRUE(Include::Parse("tags, price", &req.include).ok());
  SearchResult r;
  ASSERT_TRUE(db_->Search("c", req, SearchOptions(), &r).ok());
  EXPECT_EQ(r.attribute_names, (std::vector<std::string>{"tags", "price"}));
  ASSERT_EQ(r.results[0].attributes.size(), 3u);
  EXPECT_EQ(r.results[0].attributes[0][1], oracle_.at(r.results[0].ids[0]).attrs[0]);
  EXPECT_TRUE(r.results[0].vectors.empty());
  ASSERT_TRUE(Include::Parse("colour", &req.include).ok());
  Status s = db_->Search("c", req, SearchOptions(), &r);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("price, color, tags"), std::string::npos) << s.message();
  // A buffer laid out for another dimension is refused, not read past its end.
  req.include = Include();
  req.dim = kDim + 1;
  s = db_->Search("c", req, SearchOptions(), &r);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("dim 6"), std::string::npos) << s.message();
}

TEST_F(RowsTest, IncludeParsesNamesStarAndVector) {
  Include inc;
  ASSERT_TRUE(Include::Parse(" a , *, vector,, \"vector\" ", &inc).ok());
  EXPECT_EQ(inc.attributes, (std::vector<std::string>{"a", "vector"}));
  EXPECT_TRUE(inc.all_attributes);
  EXPECT_TRUE(inc.vector);
  ASSERT_TRUE(Include::Parse("", &inc).ok());
  EXPECT_TRUE(inc.empty());
  EXPECT_TRUE(Include::Parse("\"open", &inc).IsInvalidArgument());
}

TEST_F(RowsTest, GetReportsMissingIdsPerId) {
  Create();
  Write(Range(0, 200), 1, false);
  uint64_t deleted = 0;
  std::vector<int64_t> gone = {5};
  ASSERT_TRUE(db_->DeleteByIds("c", gone.data(), 1, &deleted).ok());
  oracle_.erase(5);
  std::vector<int64_t> ids = {7, 5, 1000, 0, 7};
  Include inc;
  inc.all_attributes = true;
  inc.vector = true;
  GetResult r;
  ASSERT_TRUE(db_->Get("c", ids.data(), ids.size(), inc, &r).ok());
  ASSERT_EQ(r.rows.size(), 5u);
  EXPECT_EQ(r.found, (std::vector<bool>{true, false, false, true, true}));
  for (size_t i : {0, 3, 4}) {
    EXPECT_EQ(r.rows[i].id, ids[i]);
    EXPECT_EQ(r.rows[i].attributes, oracle_.at(ids[i]).attrs);
    EXPECT_EQ(r.rows[i].vector, oracle_.at(ids[i]).v);
  }
  EXPECT_EQ(r.rows[1].id, 5);
  EXPECT_TRUE(r.rows[1].attributes.empty());
  EXPECT_TRUE(db_->Get("nope", ids.data(), 1, inc, &r).IsNotFound());
}

TEST_F(RowsTest, UpsertReplacesLiveRowsAndInsertsTheRest) {
  Create();
  Write(Range(0, 250), 1, false);
  // Plain ingest of a live id stays an error, and names upsert.
  std::vector<int64_t> one = {10};
  auto v = test::RandomVectors(1, kDim, 3);
  RowBatch b;
  b.num_rows = 1;
  b.dim = kDim;
  b.vectors = v.data();
  b.ids = one.data();
  IngestResult ir;
  Status s = db_->Ingest("c", b, IngestOptions(), &ir);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("already exists"), std::string::npos) << s.message();
  // Upsert without ids is refused.
  b.ids = nullptr;
  EXPECT_TRUE(db_->Upsert("c", b, IngestOptions(), &ir).IsInvalidArgument());

  IngestResult r = Write(Range(200, 400), 2, true);
  EXPECT_EQ(r.ingested, 200u);
  EXPECT_EQ(r.replaced, 50u);
  EXPECT_EQ(r.live_rows, 400u);
  CollectionStats stats;
  ASSERT_TRUE(db_->GetStats("c", &stats).ok());
  EXPECT_EQ(stats.rows, 400u);
  EXPECT_EQ(stats.deleted_rows, 50u);
  ExpectScanEqualsOracle(64);
  ExpectSearchExact("", [](const OracleRow&) { return true; });
  Reopen();
  ExpectScanEqualsOracle(1000);
  ExpectSearchExact("price > 3", [](const OracleRow& row) {
    return std::get<double>(row.attrs[0]) > 3;
  });
  // Upserting the same rows again replaces every one.
  r = Write(Range(200, 400), 3, true);
  EXPECT_EQ(r.replaced, 200u);
  ExpectScanEqualsOracle(7);
}

TEST_F(RowsTest, AutoIdsMustBeAskedForOnceTheCollectionHasRows) {
  Create(1);
  auto v = test::RandomVectors(4, kDim, 3);
  RowBatch b;
  b.num_rows = 4;
  b.dim = kDim;
  b.vectors = v.data();
  IngestResult r;
  ASSERT_TRUE(db_->Ingest("c", b, IngestOptions(), &r).ok());  // empty: new ids 0..3
  Status s = db_->Ingest("c", b, IngestOptions(), &r);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("auto"), std::string::npos) << s.message();
  IngestOptions o;
  o.auto_ids = true;
  ASSERT_TRUE(db_->Ingest("c", b, o, &r).ok());
  EXPECT_EQ(r.live_rows, 8u);
  uint64_t n = 0;
  ASSERT_TRUE(db_->Count("c", "id BETWEEN 4 AND 7", &n).ok());
  EXPECT_EQ(n, 4u);
  b.dim = kDim - 1;  // a short buffer
  s = db_->Ingest("c", b, o, &r);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("5 components"), std::string::npos) << s.message();
}

TEST_F(RowsTest, UpdateChangesAttributesOnlyAndFiltersSeeTheNewValues) {
  Create();
  Write(Range(0, 300), 1, false);
  uint64_t before = 0;
  ASSERT_TRUE(db_->Count("c", "color = 'green'", &before).ok());
  EXPECT_EQ(before, 0u);
  std::vector<int64_t> ids = {3, 4, 5, 999};
  UpdateRequest u;
  u.ids = ids.data();
  u.num_ids = ids.size();
  u.set = {{"color", Value(std::string("green"))}, {"price", Value(int64_t{42})}};
  uint64_t updated = 0;
  ASSERT_TRUE(db_->Update("c", u, &updated).ok());
  EXPECT_EQ(updated, 3u);
  for (int64_t id : {3, 4, 5}) {
    oracle_[id].attrs[1] = Value(std::string("green"));
    oracle_[id].attrs[0] = Value(42.0);
  }
  // By filter, to null.
  UpdateRequest byf;
  byf.filter = "id >= 290";
  byf.set = {{"tags", Value()}};
  ASSERT_TRUE(db_->Update("c", byf, &updated).ok());
  EXPECT_EQ(updated, 10u);
  for (int64_t id = 290; id < 300; ++id) oracle_[id].attrs[2] = Value();
  uint64_t n = 0;
  ASSERT_TRUE(db_->Count("c", "color = 'green' AND price = 42", &n).ok());
  EXPECT_EQ(n, 3u);
  ASSERT_TRUE(db_->Count("c", "tags IS NULL", &n).ok());
  EXPECT_EQ(n, 10u);
  ExpectScanEqualsOracle(100);
  ExpectSearchExact("color = 'green'", [](const OracleRow& row) {
    return std::holds_alternative<std::string>(row.attrs[1]) &&
           std::get<std::string>(row.attrs[1]) == "green";
  });
  Reopen();
  ASSERT_TRUE(db_->Count("c", "color = 'green' AND price = 42", &n).ok());
  EXPECT_EQ(n, 3u);
  ExpectScanEqualsOracle(1000);

  // Refusals: each says what is wrong, and nothing changes.
  UpdateRequest bad = u;
  bad.set = {{"colour", Value(std::string("x"))}};
  Status s = db_->Update("c", bad, &updated);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("price, color, tags"), std::string::npos) << s.message();
  bad.set = {{"price", Value(std::string("x"))}};
  EXPECT_TRUE(db_->Update("c", bad, &updated).IsInvalidArgument());
  bad.set = {};
  EXPECT_TRUE(db_->Update("c", bad, &updated).IsInvalidArgument());
  bad = u;
  bad.filter = "price > 1";  // both
  EXPECT_TRUE(db_->Update("c", bad, &updated).IsInvalidArgument());
  ExpectScanEqualsOracle(1000);
}

TEST_F(RowsTest, ParseAssignmentReadsTheFilterLanguagesLiterals) {
  CollectionSpec spec;
  spec.name = "c";
  spec.attributes = {{"price", AttrType::kFloat}, {"n", AttrType::kInt},
                     {"s", AttrType::kString}, {"b", AttrType::kBool}, {"t", AttrType::kTags}};
  std::string name;
  Value v;
  ASSERT_TRUE(ParseAssignment("price = 3", spec, &name, &v).ok());
  EXPECT_EQ(name, "price");
  EXPECT_EQ(v, Value(3.0));
  ASSERT_TRUE(ParseAssignment("n=-7", spec, &name, &v).ok());
  EXPECT_EQ(v, Value(int64_t{-7}));
  ASSERT_TRUE(ParseAssignment("s = 'it''s'", spec, &name, &v).ok());
  EXPECT_EQ(v, Value(std::string("it's")));
  ASSERT_TRUE(ParseAssignment("b = TRUE", spec, &name, &v).ok());
  EXPECT_EQ(v, Value(true));
  ASSERT_TRUE(ParseAssignment("t = ('x', 'y')", spec, &name, &v).ok());
  EXPECT_EQ(v, Value(std::vector<std::string>{"x", "y"}));
  ASSERT_TRUE(ParseAssignment("s = NULL", spec, &name, &v).ok());
  EXPECT_EQ(v, Value());
  for (const char* bad : {"n = 1.5", "price = 'x'", "nope = 1", "n 1", "n = 1 2", "= 1",
                          "t = (1)", "id = 3"}) {
    Status s = ParseAssignment(bad, spec, &name, &v);
    EXPECT_TRUE(s.IsInvalidArgument()) << bad;
  }
}

TEST_F(RowsTest, CountAndScanFollowTheFilter) {
  Create();
  Write(Range(0, 500), 1, false);
  uint64_t deleted = 0;
  ASSERT_TRUE(db_->DeleteByFilter("c", "id BETWEEN 100 AND 149", &deleted).ok());
  EXPECT_EQ(deleted, 50u);
  for (int64_t id = 100; id < 150; ++id) oracle_.erase(id);
  struct Case {
    std::string filter;
    std::function<bool(int64_t, const OracleRow&)> pass;
  };
  const std::vector<Case> cases = {
      {"", [](int64_t, const OracleRow&) { return true; }},
      {"id = 7", [](int64_t id, const OracleRow&) { return id == 7; }},
      {"id IN (1, 120, 499, 600)", [](int64_t id, const OracleRow&) {
         return id == 1 || id == 120 || id == 499;
       }},
      {"NOT id IN (1, 2)", [](int64_t id, const OracleRow&) { return id != 1 && id != 2; }},
      {"id < 10 OR id >= 490", [](int64_t id, const OracleRow&) { return id < 10 || id >= 490; }},
      {"id != 3 AND color = 'red'", [](int64_t id, const OracleRow& r) {
         return id != 3 && std::holds_alternative<std::string>(r.attrs[1]) &&
                std::get<std::string>(r.attrs[1]) == "red";
       }},
      {"tags CONTAINS 't1' AND id BETWEEN 50 AND 300", [](int64_t id, const OracleRow& r) {
         return id >= 50 && id <= 300 &&
                std::get<std::vector<std::string>>(r.attrs[2])[0] == "t1";
       }},
  };
  for (const Case& c : cases) {
    std::vector<int64_t> want;
    for (const auto& [id, row] : oracle_) {
      if (c.pass(id, row)) want.push_back(id);
    }
    uint64_t n = 0;
    ASSERT_TRUE(db_->Count("c", c.filter, &n).ok()) << c.filter;
    EXPECT_EQ(n, want.size()) << c.filter;
    std::vector<int64_t> got;
    ScanRequest req;
    req.filter = c.filter;
    req.limit = 33;
    for (;;) {
      ScanResult r;
      ASSERT_TRUE(db_->Scan("c", req, &r).ok());
      EXPECT_TRUE(r.attribute_names.empty());
      for (const Row& row : r.rows) got.push_back(row.id);
      if (r.done) break;
      req.has_after = true;
      req.after = r.next;
    }
    EXPECT_EQ(got, want) << c.filter;
  }
  uint64_t n = 0;
  EXPECT_TRUE(db_->Count("c", "id = 'x'", &n).IsInvalidArgument());
  ScanRequest bad;
  bad.limit = 0;
  ScanResult r;
  EXPECT_TRUE(db_->Scan("c", bad, &r).IsInvalidArgument());
}

TEST_F(RowsTest, DropRemovesTheCollectionDurably) {
  Create();
  Write(Range(0, 300), 1, false);
  ASSERT_TRUE(db_->DropCollection("c").ok());
  CollectionStats stats;
  EXPECT_TRUE(db_->GetStats("c", &stats).IsNotFound());
  EXPECT_TRUE(db_->DropCollection("c").IsNotFound());
  Reopen();
  std::vector<std::string> names;
  ASSERT_TRUE(db_->ListCollections(&names).ok());
  EXPECT_TRUE(names.empty());
  // The name is free again, for a collection with nothing of the old one.
  oracle_.clear();
  Create(2);
  uint64_t n = 1;
  ASSERT_TRUE(db_->Count("c", "", &n).ok());
  EXPECT_EQ(n, 0u);
  Write(Range(0, 10), 4, false);
  ExpectScanEqualsOracle(3);
  std::vector<std::string> report;
  EXPECT_TRUE(db_->Check(&report).ok()) << (report.empty() ? "" : report[0]);
}

TEST_F(RowsTest, CompactKeepsIdsAndAnswersAndGivesSpaceBack) {
  Create();
  // Enough rows that the vectors dominate the files.
  Write(Range(0, 6000), 1, false);
  ExpectSearchExact("", [](const OracleRow&) { return true; });  // the GPU cache, were it one
  uint64_t deleted = 0;
  ASSERT_TRUE(db_->DeleteByFilter("c", "id < 4500", &deleted).ok());
  for (int64_t id = 0; id < 4500; ++id) oracle_.erase(id);
  CompactResult r;
  // 1,500 deleted rows a shard hold less than a rewrite writes: left in place, nothing written.
  ASSERT_TRUE(db_->Compact("", &r).ok());
  EXPECT_EQ(r.rows_removed, 0u);
  EXPECT_EQ(r.shards_rewritten, 0u);
  EXPECT_EQ(r.shards_skipped, 3u);
  EXPECT_EQ(r.rows_left_deleted, 4500u);
  EXPECT_EQ(r.bytes_after, r.bytes_before);
  EXPECT_NE(r.note.find("4500 deleted rows in 3 shards were left"), std::string::npos) << r.note;
  CompactOptions force;
  force.force = true;
  ASSERT_TRUE(db_->Compact("", force, &r).ok());
  EXPECT_EQ(r.rows_removed, 4500u);
  EXPECT_EQ(r.shards_skipped, 0u);
  EXPECT_EQ(r.rows_left_deleted, 0u);
  EXPECT_EQ(r.shards_rewritten, 3u);
  EXPECT_LT(r.bytes_after, r.bytes_before);
  CollectionStats stats;
  ASSERT_TRUE(db_->GetStats("c", &stats).ok());
  EXPECT_EQ(stats.rows, 1500u);
  EXPECT_EQ(stats.deleted_rows, 0u);
  ExpectScanEqualsOracle(500);
  ExpectSearchExact("price < 4", [](const OracleRow& row) {
    return std::get<double>(row.attrs[0]) < 4;
  });
  // Writes after a compaction land beside the rewritten rows.
  Write(Range(10000, 10100), 5, false);
  Write(Range(5990, 6010), 6, true);
  ExpectSearchExact("", [](const OracleRow&) { return true; });
  Reopen();
  ExpectScanEqualsOracle(1000);
  ExpectSearchExact("", [](const OracleRow&) { return true; });
  std::vector<std::string> report;
  EXPECT_TRUE(db_->Check(&report).ok()) << (report.empty() ? "" : report[0]);
  // Nothing deleted: nothing rewritten.
  ASSERT_TRUE(db_->Compact("c", force, &r).ok());
  EXPECT_EQ(r.rows_removed, 10u);  // the rows the upsert above replaced
  EXPECT_GE(r.shards_rewritten, 1u);
  ASSERT_TRUE(db_->Compact("c", force, &r).ok());
  EXPECT_EQ(r.shards_rewritten, 0u);
  EXPECT_EQ(r.bytes_after, r.bytes_before);
  EXPECT_TRUE(db_->Compact("nope", &r).IsNotFound());
}

TEST_F(RowsTest, CountsAndGetsReadNoVectorsAndSearchesStillSeeThem) {
  Create();
  Write(Range(0, 400), 1, false);
  Reopen();  // nothing loaded
  uint64_t n = 0;
  ASSERT_TRUE(db_->Count("c", "price > 3", &n).ok());  // loads ids and attributes only
  size_t want = 0;
  for (const auto& [id, row] : oracle_) want += std::get<double>(row.attrs[0]) > 3;
  EXPECT_EQ(n, want);
  // Writes on an image without vectors, then a search that needs them.
  Write(Range(400, 450), 2, false);
  Write(Range(0, 20), 3, true);
  UpdateRequest u;
  u.filter = "id < 5";
  u.set = {{"color", Value(std::string("green"))}};
  uint64_t updated = 0;
  ASSERT_TRUE(db_->Update("c", u, &updated).ok());
  for (int64_t id = 0; id < 5; ++id) oracle_[id].attrs[1] = Value(std::string("green"));
  ExpectSearchExact("", [](const OracleRow&) { return true; });
  ExpectScanEqualsOracle(64);
}

TEST_F(RowsTest, ReadOnlyOpensRefuseEveryWriteFirst) {
  Create();
  Write(Range(0, 50), 1, false);
  db_.reset();
  Options o;
  o.read_only = true;
  ASSERT_TRUE(DB::Open(o, dir_.Join("db"), &db_).ok());
  auto v = test::RandomVectors(1, kDim, 3);
  RowBatch b;  // no ids into a collection with rows: read-only is what is said
  b.num_rows = 1;
  b.dim = kDim;
  b.vectors = v.data();
  IngestResult ir;
  EXPECT_TRUE(db_->Ingest("c", b, IngestOptions(), &ir).IsNotSupported());
  std::vector<int64_t> one = {1};
  b.ids = one.data();
  EXPECT_TRUE(db_->Upsert("c", b, IngestOptions(), &ir).IsNotSupported());
  uint64_t n = 0;
  EXPECT_TRUE(db_->DeleteByIds("c", one.data(), 1, &n).IsNotSupported());
  EXPECT_TRUE(db_->DeleteByFilter("c", "id = 1", &n).IsNotSupported());
  UpdateRequest u;
  u.ids = one.data();
  u.num_ids = 1;
  u.set = {{"price", Value(1.0)}};
  EXPECT_TRUE(db_->Update("c", u, &n).IsNotSupported());
  EXPECT_TRUE(db_->DropCollection("c").IsNotSupported());
  CompactResult cr;
  EXPECT_TRUE(db_->Compact("", &cr).IsNotSupported());
  // Reads work.
  ASSERT_TRUE(db_->Count("c", "", &n).ok());
  EXPECT_EQ(n, 50u);
  ExpectScanEqualsOracle(20);
}

}  // namespace
}  // namespace sieve
