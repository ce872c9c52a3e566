// Copyright 2026 The Sieve Authors.
//
// DB::AlterCollection, RenameCollection and aliases through the public API: every kind of read
// and write sees a schema change at once (and after reopening), handles follow a collection
// to its new name and schema, reads racing alters never fail, and a reader searching through an
// alias while it is switched between two collections gets each answer wholly from one of them.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "sieve/db.h"
#include "tests/testutil.h"

namespace sieve {
namespace {

constexpr uint32_t kDim = 8;

class AlterTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }
  void Open(bool read_only = false) {
    db_.reset();
    Options o;
    o.read_only = read_only;
    Status s = DB::Open(o, dir_.Join("db"), &db_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // A collection of n rows: ids first..first+n-1, n = id % 5, s = "s<id>".
  void Make(const std::string& name, int64_t first, size_t n, uint32_t shards = 2) {
    CollectionSpec spec;
    spec.name = name;
    spec.dim = kDim;
    spec.shards = shards;
    spec.attributes = {{"s", AttrType::kString}, {"n", AttrType::kInt}};
    Status s = db_->CreateCollection(spec);
    ASSERT_TRUE(s.ok()) << s.ToString();
    Ingest(name, first, n, /*with_w=*/false);
  }

  void Ingest(const std::string& name, int64_t first, size_t n, bool with_w) {
    std::vector<float> v = test::RandomVectors(n, kDim, static_cast<uint64_t>(first) + 7);
    std::vector<int64_t> ids(n);
    std::vector<std::vector<Value>> attrs(n);
    for (size_t i = 0; i < n; ++i) {
      ids[i] = first + static_cast<int64_t>(i);
      attrs[i] = {Value("s" + std::to_string(ids[i])), Value(ids[i] % 5)};
      if (with_w) attrs[i].push_back(Value(9.0));
    }
    RowBatch b;
    b.num_rows = n;
    b.dim = kDim;
    b.vectors = v.data();
    b.ids = ids.data();
    b.attributes = attrs.data();
    IngestResult r;
    Status s = db_->Ingest(name, b, IngestOptions(), &r);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  uint64_t Count(const std::string& name, const std::string& filter) {
    uint64_t n = 0;
    Status s = db_->Count(name, filter, &n);
    EXPECT_TRUE(s.ok()) << filter << ": " << s.ToString();
    return n;
  }

  std::vector<int64_t> SearchIds(const std::string& name, const std::string& filter,
                                 Status* status = nullptr) {
    std::vector<float> q = test::RandomVectors(1, kDim, 99);
    SearchRequest req;
    req.queries = q.data();
    req.num_queries = 1;
    req.dim = kDim;
    req.k = 1000;
    req.filter = filter;
    SearchResult result;
    SearchOptions options;
    options.device = Device::kCpu;
    Status s = db_->Search(name, req, options, &result);
    if (status != nullptr) *status = s;
    if (!s.ok()) return {};
    return result.results[0].ids;
  }

  test::ScratchDir dir_;
  std::unique_ptr<DB> db_;
};

TEST_F(AlterTest, EveryReadAndWriteSeesTheNewSchemaAtOnce) {
  Make("c", 0, 300);
  EXPECT_EQ(SearchIds("c", "n = 1").size(), 60u);  // loads the image, vectors included
  AlterResult result;
  Status s = db_->AlterCollection("c", AlterRequest::AddAttribute("w", AttrType::kFloat,
                                                                  Value(int64_t{2})),
                                  &result);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(result.rows, 300u);
  ASSERT_EQ(result.spec.attributes.size(), 3u);
  EXPECT_EQ(result.spec.attributes[2].name, "w");
  // Rows stored before get the default (an int given for a float attribute is a float).
  EXPECT_EQ(Count("c", "w = 2.0"), 300u);
  EXPECT_EQ(SearchIds("c", "w = 2 AND n = 1").size(), 60u);
  GetResult got;
  const int64_t ids[] = {7, 8};
  Include include;
  ASSERT_TRUE(Include::Parse("w,s", &include).ok());
  ASSERT_TRUE(db_->Get("c", ids, 2, include, &got).ok());
  EXPECT_EQ(got.attribute_names, (std::vector<std::string>{"w", "s"}));
  EXPECT_EQ(std::get<double>(got.rows[0].attributes[0]), 2.0);
  EXPECT_EQ(std::get<std::string>(got.rows[1].attributes[1]), "s8");
  // Update and ingest write the new column; a scan reads it.
  UpdateRequest update;
  update.filter = "n = 3";
  update.set = {{"w", Value(5.5)}};
  uint64_t updated = 0;
  ASSERT_TRUE(db_->Update("c", update, &updated).ok());
  EXPECT_EQ(updated, 60u);
  Ingest("c", 1000, 10, /*with_w=*/true);
  EXPECT_EQ(Count("c", "w = 9.0"), 10u);
  ScanRequest scan;
  scan.filter = "w = 5.5";
  scan.limit = 1000;
  scan.include.attributes = {"w"};
  ScanResult page;
  ASSERT_TRUE(db_->Scan("c", scan, &page).ok());
  ASSERT_EQ(page.rows.size(), 60u);
  EXPECT_EQ(page.rows[0].id, 3);

  // Drop s: filters and includes naming it are refused, the others go on.
  ASSERT_TRUE(db_->AlterCollection("c", AlterRequest::DropAttribute("s"), &result).ok());
  ASSERT_EQ(result.spec.attributes.size(), 2u);
  uint64_t n = 0;
  EXPECT_TRUE(db_->Count("c", "s = 's1'", &n).IsInvalidArgument());
  EXPECT_TRUE(db_->Get("c", ids, 2, include, &got).IsInvalidArgument());
  EXPECT_EQ(Count("c", "n = 1"), 62u);
  EXPECT_EQ(Count("c", "w = 5.5"), 60u);
  EXPECT_EQ(SearchIds("c", "w = 5.5").size(), 60u);

  // Rename n to m.
  ASSERT_TRUE(db_->AlterCollection("c", AlterRequest::RenameAttribute("n", "m"), &result).ok());
  EXPECT_EQ(Count("c", "m = 1"), 62u);
  EXPECT_TRUE(db_->Count("c", "n = 1", &n).IsInvalidArgument());

  // Refusals, nothing changed.
  EXPECT_TRUE(db_->AlterCollection("c", AlterRequest::AddAttribute("m", AttrType::kInt), &result)
                  .IsInvalidArgument());
  EXPECT_TRUE(db_->AlterCollection("c", AlterRequest::AddAttribute("9x", AttrType::kInt), &result)
                  .IsInvalidArgument());
  EXPECT_TRUE(db_->AlterCollection("c", AlterRequest::AddAttribute("b", AttrType::kBool,
                                                                   Value("yes")),
                                   &result)
                  .IsInvalidArgument());
  EXPECT_TRUE(db_->AlterCollection("c", AlterRequest::DropAttribute("nope"), &result)
                  .IsInvalidArgument());
  EXPECT_TRUE(db_->AlterCollection("c", AlterRequest::RenameAttribute("w", "m"), &result)
                  .IsInvalidArgument());
  EXPECT_TRUE(db_->AlterCollection("none", AlterRequest::DropAttribute("m"), &result)
                  .IsNotFound());

  // Durable: the same after reopening, and the store checks clean.
  Open();
  CollectionStats stats;
  ASSERT_TRUE(db_->GetStats("c", &stats).ok());
  ASSERT_EQ(stats.spec.attributes.size(), 2u);
  EXPECT_EQ(stats.spec.attributes[0].name, "m");
  EXPECT_EQ(stats.spec.attributes[1].name, "w");
  EXPECT_EQ(Count("c", "m = 1 AND w = 2.0"), 60u);
  std::vector<std::string> report;
  Status check = db_->Check(&report);
  EXPECT_TRUE(check.ok()) << check.ToString();
  Open(/*read_only=*/true);
  EXPECT_TRUE(db_->AlterCollection("c", AlterRequest::DropAttribute("m"), &result)
                  .IsNotSupported());
  EXPECT_TRUE(db_->RenameCollection("c", "d").IsNotSupported());
  EXPECT_TRUE(db_->PutAlias("a", "c").IsNotSupported());
}

TEST_F(AlterTest, HandlesFollowRenamesAndSchemaChanges) {
  Make("c", 0, 100);
  std::shared_ptr<Collection> h;
  ASSERT_TRUE(db_->GetCollection("c", &h).ok());
  ASSERT_TRUE(db_->RenameCollection("c", "d").ok());
  EXPECT_EQ(h->name(), "d");
  uint64_t n = 0;
  ASSERT_TRUE(h->Count("n = 1", &n).ok());
  EXPECT_EQ(n, 20u);
  EXPECT_TRUE(db_->Count("c", "", &n).IsNotFound());
  std::shared_ptr<Collection> again;
  ASSERT_TRUE(db_->GetCollection("d", &again).ok());
  EXPECT_EQ(again, h);
  AlterResult result;
  ASSERT_TRUE(h->Alter(AlterRequest::AddAttribute("t", AttrType::kTags), &result).ok());
  EXPECT_EQ(h->spec().attributes.size(), 3u);
  ASSERT_TRUE(h->Count("t IS NULL", &n).ok());
  EXPECT_EQ(n, 100u);
  ASSERT_TRUE(h->Rename("e").ok());
  EXPECT_EQ(h->name(), "e");
  // The old names are free again.
  Make("c", 0, 5);
  Make("d", 0, 6);
  std::vector<std::string> names;
  ASSERT_TRUE(db_->ListCollections(&names).ok());
  EXPECT_EQ(names, (std::vector<std::string>{"c", "d", "e"}));
  EXPECT_TRUE(db_->RenameCollection("e", "c").IsAlreadyExists());
  EXPECT_TRUE(db_->RenameCollection("e", "bad name").IsInvalidArgument());
  ASSERT_TRUE(db_->DropCollection("e").ok());
  EXPECT_TRUE(h->Count("", &n).IsNotFound());
  EXPECT_TRUE(h->Rename("f").IsNotFound());
}

TEST_F(AlterTest, AliasesResolveAtCallTimeAndNeverShadowACollection) {
  Make("v1", 0, 100);
  Make("v2", 1000, 150);
  ASSERT_TRUE(db_->PutAlias("live", "v1").ok());
  EXPECT_EQ(Count("live", ""), 100u);
  EXPECT_TRUE(db_->PutAlias("v2", "v1").IsAlreadyExists());
  EXPECT_TRUE(db_->PutAlias("x", "live").IsInvalidArgument());
  EXPECT_TRUE(db_->PutAlias("x", "none").IsNotFound());
  CollectionSpec spec;
  spec.name = "live";
  spec.dim = kDim;
  EXPECT_TRUE(db_->CreateCollection(spec).IsAlreadyExists());
  EXPECT_TRUE(db_->DropCollection("v1").IsInvalidArgument());    // named by 'live'
  EXPECT_TRUE(db_->DropCollection("live").IsInvalidArgument());  // an alias, not a collection
  EXPECT_TRUE(db_->RenameCollection("live", "z").IsInvalidArgument());
  // Writes through the alias reach the collection it names.
  Ingest("live", 500, 1, /*with_w=*/false);
  EXPECT_EQ(Count("v1", ""), 101u);
  // Renaming the collection keeps the alias on it.
  ASSERT_TRUE(db_->RenameCollection("v1", "v1b").ok());
  std::vector<AliasInfo> aliases;
  ASSERT_TRUE(db_->ListAliases(&aliases).ok());
  ASSERT_EQ(aliases.size(), 1u);
  EXPECT_EQ(aliases[0].collection, "v1b");
  EXPECT_EQ(Count("live", ""), 101u);
  ASSERT_TRUE(db_->PutAlias("live", "v2").ok());
  EXPECT_EQ(Count("live", ""), 150u);
  ASSERT_TRUE(db_->DropCollection("v1b").ok());  // no alias names it now
  Open();  // durable
  ASSERT_TRUE(db_->ListAliases(&aliases).ok());
  ASSERT_EQ(aliases.size(), 1u);
  EXPECT_EQ(aliases[0].alias, "live");
  EXPECT_EQ(aliases[0].collection, "v2");
  EXPECT_EQ(SearchIds("live", "").size(), 150u);
  ASSERT_TRUE(db_->DropAlias("live").ok());
  uint64_t n = 0;
  EXPECT_TRUE(db_->Count("live", "", &n).IsNotFound());
  EXPECT_TRUE(db_->DropAlias("live").IsNotFound());
  std::vector<std::string> report;
  EXPECT_TRUE(db_->Check(&report).ok());
}

// The swap an operator does to put a rebuilt collection under live readers: every search and
// count through the alias answers wholly from one collection, and none fails.
TEST_F(AlterTest, SwitchingAnAliasUnderALiveReaderGivesWholeAnswers) {
  Make("a", 0, 100);      // ids 0..99
  Make("b", 1000, 150);   // ids 1000..1149
  ASSERT_TRUE(db_->PutAlias("live", "a").ok());
  std::atomic<bool> stop{false};
  std::atomic<int> from_a{0}, from_b{0}, mixed{0}, errors{0};
  std::string first_error;
  std::thread reader([&] {
    while (!stop.load()) {
      Status s;
      std::vector<int64_t> ids = SearchIds("live", "n >= 0", &s);
      uint64_t count = 0;
      Status c = db_->Count("live", "", &count);
      if (!s.ok() || !c.ok()) {
        if (errors.fetch_add(1) == 0) first_error = (s.ok() ? c : s).ToString();
        continue;
      }
      const bool all_a = ids.size() == 100 &&
                         std::all_of(ids.begin(), ids.end(), [](int64_t i) { return i < 100; });
      const bool all_b = ids.size() == 150 &&
                         std::all_of(ids.begin(), ids.end(), [](int64_t i) { return i >= 1000; });
      (all_a ? from_a : all_b ? from_b : mixed).fetch_add(1);
      if (count != 100 && count != 150) mixed.fetch_add(1);
    }
  });
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(db_->PutAlias("live", i % 2 == 0 ? "b" : "a").ok());
    // Let the reader see each side: wait until it has answered from the new one.
    for (int spin = 0; spin < 2000; ++spin) {
      if ((i % 2 == 0 ? from_b : from_a).load() > i / 2) break;
      std::this_thread::yield();
    }
  }
  stop.store(true);
  reader.join();
  EXPECT_EQ(errors.load(), 0) << first_error;
  EXPECT_EQ(mixed.load(), 0);
  EXPECT_GT(from_a.load(), 0);
  EXPECT_GT(from_b.load(), 0);
}

// Reads racing schema changes (attributes added and dropped before the one they filter on,
// moving its place in the schema) never fail and always read the right column.
TEST_F(AlterTest, ReadsRacingAltersNeverFail) {
  Make("c", 0, 200);
  std::atomic<bool> stop{false};
  std::atomic<int> errors{0}, reads{0};
  std::string first_error;
  std::thread reader([&] {
    while (!stop.load()) {
      Status s;
      std::vector<int64_t> ids = SearchIds("c", "n = 2", &s);
      GetResult got;
      Include include;
      include.attributes = {"n"};
      const int64_t id = 42;
      Status g = s.ok() ? db_->Get("c", &id, 1, include, &got) : s;
      const bool right = g.ok() && ids.size() == 40 && got.found[0] &&
                         std::get<int64_t>(got.rows[0].attributes[0]) == 2;
      if (!right && errors.fetch_add(1) == 0) {
        first_error = g.ok() ? "wrong answer: " + std::to_string(ids.size()) + " ids"
                             : g.ToString();
      }
      reads.fetch_add(1);
    }
  });
  AlterResult result;
  for (int i = 0; i < 20; ++i) {
    // s sits before n at first; once dropped and re-added it sits after.
    ASSERT_TRUE(db_->AlterCollection("c", AlterRequest::DropAttribute("s"), &result).ok());
    ASSERT_TRUE(db_->AlterCollection("c", AlterRequest::AddAttribute("s", AttrType::kString,
                                                                     Value("x")),
                                     &result)
                    .ok());
  }
  while (reads.load() < 5) std::this_thread::yield();
  stop.store(true);
  reader.join();
  EXPECT_EQ(errors.load(), 0) << first_error;
  EXPECT_EQ(Count("c", "s = 'x'"), 200u);
}

}  // namespace
}  // namespace sieve
