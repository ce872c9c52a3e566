// Copyright 2026 The Sieve Authors.
//
// DB::GetSnapshot: searches, gets, counts and scans given a snapshot read the version it was
// taken at, whatever lands after it (ingests, upserts, deletes, updates, compaction, a drop, a
// re-create), checked against a model of the rows kept at the snapshot (searches against the
// float64 oracle over the model's vectors); reads without it see the latest rows; scans paged
// with one snapshot while another thread writes return that version exactly once; misuse
// (a released or foreign snapshot) is InvalidArgument.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sieve/db.h"
#include "tests/testutil.h"

namespace sieve {
namespace {

constexpr uint32_t kDim = 8;

// What a collection holds: id → (vector, attribute n).
struct Model {
  std::map<int64_t, std::pair<std::vector<float>, int64_t>> rows;
};

class SnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }
  void Open() {
    Status s = DB::Open(Options(), dir_.Join("db"), &db_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  void Create(const std::string& name) {
    CollectionSpec spec;
    spec.name = name;
    spec.dim = kDim;
    spec.shards = 3;
    spec.attributes = {{"n", AttrType::kInt}};
    Status s = db_->CreateCollection(spec);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // Writes rows ids [first, first + count) with n = id % 7 (or `n` when >= 0), ingest or upsert,
  // into the collection and the model.
  void Write(const std::string& name, int64_t first, size_t count, uint64_t seed, Model* model,
             bool upsert = false, int64_t n = -1) {
    std::vector<float> v = test::RandomVectors(count, kDim, seed);
    std::vector<int64_t> ids(count);
    std::vector<std::vector<Value>> attrs(count);
    for (size_t i = 0; i < count; ++i) {
      ids[i] = first + static_cast<int64_t>(i);
      const int64_t value = n >= 0 ? n : ids[i] % 7;
      attrs[i] = {Value(value)};
      model->rows[ids[i]] = {std::vector<float>(v.begin() + i * kDim, v.begin() + (i + 1) * kDim),
                             value};
    }
    RowBatch b;
    b.num_rows = count;
    b.dim = kDim;
    b.vectors = v.data();
    b.ids = ids.data();
    b.attributes = attrs.data();
    IngestOptions options;
    options.batch_rows = 64;  // several commits per call
    IngestResult r;
    Status s = upsert ? db_->Upsert(name, b, options, &r) : db_->Ingest(name, b, options, &r);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  void DeleteRange(const std::string& name, int64_t lo, int64_t hi, Model* model) {
    uint64_t deleted = 0;
    Status s = db_->DeleteByFilter(
        name, "id >= " + std::to_string(lo) + " AND id <= " + std::to_string(hi), &deleted);
    ASSERT_TRUE(s.ok()) << s.ToString();
    for (int64_t id = lo; id <= hi; ++id) model->rows.erase(id);
  }

  void SetN(const std::string& name, int64_t lo, int64_t hi, int64_t n, Model* model) {
    UpdateRequest u;
    u.filter = "id >= " + std::to_string(lo) + " AND id <= " + std::to_string(hi);
    u.set = {{"n", Value(n)}};
    uint64_t updated = 0;
    Status s = db_->Update(name, u, &updated);
    ASSERT_TRUE(s.ok()) << s.ToString();
    for (auto& [id, row] : model->rows) {
      if (id >= lo && id <= hi) row.second = n;
    }
  }

  // Every read, through `snapshot` (null: the latest rows), equals `model`.
  void ExpectReads(const std::string& name, const Snapshot* snapshot, const Model& model) {
    SCOPED_TRACE(snapshot == nullptr ? "latest" : "snapshot");
    ReadOptions ro;
    ro.snapshot = snapshot;
    // Counts.
    uint64_t count = 0;
    Status s = db_->Count(ro, name, "", &count);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(count, model.rows.size());
    s = db_->Count(ro, name, "n = 3", &count);
    ASSERT_TRUE(s.ok()) << s.ToString();
    uint64_t want = 0;
    for (const auto& [id, row] : model.rows) want += row.second == 3;
    EXPECT_EQ(count, want);

    // Scan, in pages: every row once, in id order, with its vector and n.
    ScanRequest scan;
    scan.limit = 37;
    scan.include.vector = true;
    scan.include.attributes = {"n"};
    scan.snapshot = snapshot;
    std::vector<Row> rows;
    for (;;) {
      ScanResult page;
      s = db_->Scan(name, scan, &page);
      ASSERT_TRUE(s.ok()) << s.ToString();
      rows.insert(rows.end(), page.rows.begin(), page.rows.end());
      if (page.done) break;
      scan.has_after = true;
      scan.after = page.next;
    }
    ASSERT_EQ(rows.size(), model.rows.size());
    size_t i = 0;
    for (const auto& [id, row] : model.rows) {
      ASSERT_EQ(rows[i].id, id);
      EXPECT_EQ(rows[i].vector, row.first) << id;
      ASSERT_EQ(rows[i].attributes.size(), 1u);
      EXPECT_EQ(std::get<int64_t>(rows[i].attributes[0]), row.second) << id;
      ++i;
    }

    // Get: ids present and absent.
    std::vector<int64_t> ids;
    for (int64_t id = -2; id < 700; id += 13) ids.push_back(id);
    Include inc;
    inc.attributes = {"n"};
    GetResult got;
    s = db_->Get(ro, name, ids.data(), ids.size(), inc, &got);
    ASSERT_TRUE(s.ok()) << s.ToString();
    for (size_t j = 0; j < ids.size(); ++j) {
      auto it = model.rows.find(ids[j]);
      ASSERT_EQ(got.found[j], it != model.rows.end()) << ids[j];
      if (got.found[j]) EXPECT_EQ(std::get<int64_t>(got.rows[j].attributes[0]), it->second.second);
    }

    // Search: exact against the float64 oracle over the model, with and without a filter.
    std::vector<float> flat;
    std::vector<int64_t> order;
    std::vector<int64_t> ns;
    for (const auto& [id, row] : model.rows) {
      flat.insert(flat.end(), row.first.begin(), row.first.end());
      order.push_back(id);
      ns.push_back(row.second);
    }
    const std::vector<float> queries = test::RandomVectors(5, kDim, 99);
    for (const std::string filter : {"", "n = 3"}) {
      SearchRequest req;
      req.queries = queries.data();
      req.num_queries = 5;
      req.dim = kDim;
      req.k = 9;
      req.filter = filter;
      SearchOptions so;
      so.device = Device::kCpu;
      so.snapshot = snapshot;
      SearchResult res;
      s = db_->Search(name, req, so, &res);
      ASSERT_TRUE(s.ok()) << s.ToString();
      for (size_t q = 0; q < 5; ++q) {
        auto oracle =
            test::OracleTopK(Metric::kL2, queries.data() + q * kDim, flat.data(), order.size(),
                             kDim, 9, [&](uint32_t r) { return filter.empty() || ns[r] == 3; });
        ASSERT_EQ(res.results[q].ids.size(), oracle.size()) << filter;
        for (size_t j = 0; j < oracle.size(); ++j) {
          EXPECT_EQ(res.results[q].ids[j], order[oracle[j].first]) << filter << " " << q;
        }
      }
    }
  }

  test::ScratchDir dir_;
  std::unique_ptr<DB> db_;
};

TEST_F(SnapshotTest, ReadsOneVersionWhateverIsWrittenAfterIt) {
  Create("c");
  Model live;
  Write("c", 0, 300, 1, &live);
  const Snapshot* snap = nullptr;
  ASSERT_TRUE(db_->GetSnapshot(&snap).ok());
  ASSERT_NE(snap, nullptr);
  const Model at_snap = live;

  Write("c", 300, 200, 2, &live);                  // appends
  DeleteRange("c", 0, 49, &live);                  // deletes
  SetN("c", 100, 149, 3, &live);                   // attribute updates
  Write("c", 200, 20, 3, &live, /*upsert=*/true);  // replaced vectors
  CompactResult compacted;
  CompactOptions force;
  force.force = true;  // a few deleted rows: rewritten only when forced
  ASSERT_TRUE(db_->Compact("c", force, &compacted).ok());  // renumbered shards
  EXPECT_GT(compacted.rows_removed, 0u);
  Write("c", 600, 50, 4, &live);

  ExpectReads("c", snap, at_snap);
  ExpectReads("c", nullptr, live);

  // A second snapshot sees the rows as they are now, and keeps them.
  const Snapshot* later = nullptr;
  ASSERT_TRUE(db_->GetSnapshot(&later).ok());
  EXPECT_NE(later->id(), snap->id());
  const Model at_later = live;
  DeleteRange("c", 300, 399, &live);
  ExpectReads("c", later, at_later);
  ExpectReads("c", snap, at_snap);
  ExpectReads("c", nullptr, live);

  ASSERT_TRUE(db_->ReleaseSnapshot(snap).ok());
  ASSERT_TRUE(db_->ReleaseSnapshot(later).ok());
  ExpectReads("c", nullptr, live);
}

TEST_F(SnapshotTest, KeepsACollectionThatWasNotInMemoryWhenTaken) {
  Create("c");
  Model live;
  Write("c", 0, 250, 5, &live);
  db_.reset();
  Open();  // nothing of "c" is loaded now
  const Snapshot* snap = nullptr;
  ASSERT_TRUE(db_->GetSnapshot(&snap).ok());
  const Model at_snap = live;
  DeleteRange("c", 10, 19, &live);  // a write that loads the rows pins them first
  Write("c", 250, 30, 6, &live);
  ExpectReads("c", snap, at_snap);
  ExpectReads("c", nullptr, live);
  ASSERT_TRUE(db_->ReleaseSnapshot(snap).ok());
}

TEST_F(SnapshotTest, SeesCollectionsAsTheyWereCreatedAndDropped) {
  Create("c");
  Model old_c;
  Write("c", 0, 120, 7, &old_c);
  const Snapshot* snap = nullptr;
  ASSERT_TRUE(db_->GetSnapshot(&snap).ok());

  Create("d");  // created after: not in the snapshot
  Model d;
  Write("d", 0, 10, 8, &d);
  uint64_t count = 0;
  ReadOptions ro;
  ro.snapshot = snap;
  Status s = db_->Count(ro, "d", "", &count);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();

  // Dropped and re-created with other rows after: the snapshot still reads the old one.
  ASSERT_TRUE(db_->DropCollection("c").ok());
  Create("c");
  Model new_c;
  Write("c", 1000, 40, 9, &new_c);
  ExpectReads("c", snap, old_c);
  ExpectReads("c", nullptr, new_c);

  // A handle to the new collection did not exist at the snapshot.
  std::shared_ptr<Collection> h;
  ASSERT_TRUE(db_->GetCollection("c", &h).ok());
  s = h->Count(ro, "", &count);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  ASSERT_TRUE(db_->ReleaseSnapshot(snap).ok());
}

TEST_F(SnapshotTest, HandlesReadTheSnapshotToo) {
  Create("c");
  Model live;
  Write("c", 0, 100, 10, &live);
  std::shared_ptr<Collection> h;
  ASSERT_TRUE(db_->GetCollection("c", &h).ok());
  const Snapshot* snap = nullptr;
  ASSERT_TRUE(db_->GetSnapshot(&snap).ok());
  DeleteRange("c", 0, 59, &live);
  ReadOptions ro;
  ro.snapshot = snap;
  uint64_t count = 0;
  ASSERT_TRUE(h->Count(ro, "", &count).ok());
  EXPECT_EQ(count, 100u);
  ASSERT_TRUE(h->Count("", &count).ok());
  EXPECT_EQ(count, 40u);
  const int64_t id = 5;
  GetResult got;
  ASSERT_TRUE(h->Get(ro, &id, 1, Include(), &got).ok());
  EXPECT_TRUE(got.found[0]);
  ASSERT_TRUE(h->Get(&id, 1, Include(), &got).ok());
  EXPECT_FALSE(got.found[0]);
  ASSERT_TRUE(db_->ReleaseSnapshot(snap).ok());
}

TEST_F(SnapshotTest, PagesReadOneVersionWhileWritesLand) {
  Create("c");
  Model live;
  Write("c", 0, 400, 11, &live);
  const Snapshot* snap = nullptr;
  ASSERT_TRUE(db_->GetSnapshot(&snap).ok());
  // One round: deletes ten rows (ahead of or behind the reader's cursor), re-inserts them with
  // n = 3 (which the reader's filter refuses) and appends five past the end.
  Model scratch;
  auto round = [&](int r) {
    uint64_t deleted = 0;
    const int64_t lo = (r * 37) % 400;
    Status s = db_->DeleteByFilter(
        "c", "id >= " + std::to_string(lo) + " AND id < " + std::to_string(lo + 10), &deleted);
    ASSERT_TRUE(s.ok()) << s.ToString();
    Write("c", lo, 10, 100 + r, &scratch, /*upsert=*/true, /*n=*/3);
    Write("c", 10000 + r * 5, 5, 200 + r, &scratch);
  };
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int r = 0; r < 200 && !stop; ++r) round(1000 + r);
  });
  std::vector<int64_t> seen;
  ScanRequest scan;
  scan.limit = 7;
  scan.filter = "n != 3";
  scan.snapshot = snap;
  for (int r = 0;; ++r) {
    ScanResult page;
    Status s = db_->Scan("c", scan, &page);
    ASSERT_TRUE(s.ok()) << s.ToString();
    for (const Row& row : page.rows) seen.push_back(row.id);
    if (page.done) break;
    scan.has_after = true;
    scan.after = page.next;
    round(r);  // between pages, besides the other thread's
  }
  stop = true;
  writer.join();
  std::vector<int64_t> want;
  for (int64_t id = 0; id < 400; ++id) {
    if (id % 7 != 3) want.push_back(id);
  }
  EXPECT_EQ(seen, want);
  ASSERT_TRUE(db_->ReleaseSnapshot(snap).ok());
}

// Schema changes, renames and alias switches after a snapshot: reads through it keep the old
// schema (a dropped attribute still filters, an added one is unknown), the old name and what
// the alias named then.
TEST_F(SnapshotTest, KeepsTheSchemaNamesAndAliasesItWasTakenWith) {
  Create("c");
  Create("d");
  Model c_rows, d_rows;
  Write("c", 0, 120, 20, &c_rows);
  Write("d", 500, 60, 21, &d_rows);
  ASSERT_TRUE(db_->PutAlias("current", "c").ok());
  const Snapshot* snap = nullptr;
  ASSERT_TRUE(db_->GetSnapshot(&snap).ok());

  AlterResult altered;
  ASSERT_TRUE(db_->AlterCollection("c", AlterRequest::AddAttribute("fresh", AttrType::kBool),
                                   &altered).ok());
  ASSERT_TRUE(db_->AlterCollection("c", AlterRequest::DropAttribute("n"), &altered).ok());
  ASSERT_TRUE(db_->RenameCollection("c", "c2").ok());
  ASSERT_TRUE(db_->PutAlias("current", "d").ok());

  ReadOptions ro;
  ro.snapshot = snap;
  uint64_t count = 0;
  // The snapshot's schema: n still filters, fresh is unknown.
  Status s = db_->Count(ro, "c", "n = 3", &count);
  ASSERT_TRUE(s.ok()) << s.ToString();
  uint64_t want = 0;
  for (const auto& [id, row] : c_rows.rows) want += row.second == 3;
  EXPECT_EQ(count, want);
  s = db_->Count(ro, "c", "fresh = true", &count);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  ExpectReads("c", snap, c_rows);
  // The new name did not exist then; the alias still names c.
  s = db_->Count(ro, "c2", "", &count);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  ASSERT_TRUE(db_->Count(ro, "current", "", &count).ok());
  EXPECT_EQ(count, c_rows.rows.size());
  // Now: the new schema, the new name, the switched alias.
  ASSERT_TRUE(db_->Count("c2", "fresh IS NULL", &count).ok());
  EXPECT_EQ(count, c_rows.rows.size());
  EXPECT_TRUE(db_->Count("c2", "n = 3", &count).IsInvalidArgument());
  ASSERT_TRUE(db_->Count("current", "", &count).ok());
  EXPECT_EQ(count, d_rows.rows.size());
  ExpectReads("d", snap, d_rows);
  ASSERT_TRUE(db_->ReleaseSnapshot(snap).ok());
}

TEST_F(SnapshotTest, RefusesAReleasedOrForeignSnapshot) {
  Create("c");
  Model live;
  Write("c", 0, 10, 12, &live);
  const Snapshot* snap = nullptr;
  ASSERT_TRUE(db_->GetSnapshot(&snap).ok());
  ASSERT_TRUE(db_->ReleaseSnapshot(snap).ok());
  Status s = db_->ReleaseSnapshot(snap);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  ReadOptions ro;
  ro.snapshot = snap;
  uint64_t count = 0;
  s = db_->Count(ro, "c", "", &count);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("snapshot"), std::string::npos) << s.ToString();

  test::ScratchDir other_dir;
  std::unique_ptr<DB> other;
  ASSERT_TRUE(DB::Open(Options(), other_dir.Join("db"), &other).ok());
  const Snapshot* foreign = nullptr;
  ASSERT_TRUE(other->GetSnapshot(&foreign).ok());
  ro.snapshot = foreign;
  s = db_->Count(ro, "c", "", &count);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_TRUE(db_->ReleaseSnapshot(foreign).IsInvalidArgument());
  EXPECT_TRUE(other->ReleaseSnapshot(foreign).ok());
  EXPECT_TRUE(db_->GetSnapshot(nullptr).IsInvalidArgument());
}

TEST_F(SnapshotTest, ADatabaseClosedWithSnapshotsHeldFreesThem) {
  Create("c");
  Model live;
  Write("c", 0, 50, 13, &live);
  const Snapshot* snap = nullptr;
  ASSERT_TRUE(db_->GetSnapshot(&snap).ok());
  DeleteRange("c", 0, 9, &live);  // pins
  db_.reset();                    // must not leak or crash (ASan checks the leak)
  Open();
  ExpectReads("c", nullptr, live);
}

}  // namespace
}  // namespace sieve
