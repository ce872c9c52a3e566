// Copyright 2026 The Sieve Authors.

#include "index/shard_index.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <vector>

#include "index/roaring_bridge.h"
#include "tests/testutil.h"

namespace sieve {
namespace {

CollectionSpec Spec() {
  CollectionSpec spec;
  spec.name = "c";
  spec.dim = 3;
  spec.attributes = {{"n", AttrType::kInt}, {"s", AttrType::kString}};
  return spec;
}

// A chunk of `n` rows starting at `first`: ids 1000 + ordinal, n = ordinal % 5, s null on
// every third row.
Chunk MakeChunk(uint32_t first, uint32_t n) {
  Chunk c;
  c.first_ordinal = first;
  c.num_rows = n;
  c.vectors = test::RandomVectors(n, 3, first);
  c.columns.resize(2);
  c.columns[0].type = AttrType::kInt;
  c.columns[1].type = AttrType::kString;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t o = first + i;
    c.ids.push_back(1000 + o);
    c.columns[0].valid.push_back(1);
    c.columns[0].ints.push_back(o % 5);
    bool null = o % 3 == 0;
    c.columns[1].valid.push_back(!null);
    c.columns[1].strings.push_back(null ? "" : "v" + std::to_string(o % 2));
  }
  return c;
}

std::vector<uint32_t> Rows(const RowSet& s) {
  std::vector<uint32_t> out;
  s.ForEach([&](uint32_t v) { out.push_back(v); });
  return out;
}

TEST(ShardIndexTest, ApplyChunksAndDelete) {
  ShardIndex shard(Spec(), 2);
  EXPECT_EQ(shard.shard(), 2u);
  EXPECT_EQ(shard.num_attributes(), 2u);
  shard.ApplyChunk(MakeChunk(0, 10));
  shard.ApplyChunk(MakeChunk(10, 7));
  EXPECT_EQ(shard.rows(), 17u);
  EXPECT_EQ(shard.live_rows(), 17u);
  EXPECT_EQ(shard.vectors().rows(), 17u);
  EXPECT_EQ(shard.attribute(0).rows(), 17u);
  EXPECT_EQ(shard.id(12), 1012);
  EXPECT_EQ(Rows(shard.attribute(0).EqualInt(2)), (std::vector<uint32_t>{2, 7, 12}));
  EXPECT_EQ(shard.attribute(1).nulls().Cardinality(), 6u);  // 0, 3, ..., 15
  uint32_t ord = 0;
  ASSERT_TRUE(shard.FindLive(1013, &ord));
  EXPECT_EQ(ord, 13u);
  EXPECT_FALSE(shard.FindLive(5, &ord));

  RowSet del;
  del.Add(13);
  del.Add(2);
  shard.SetDeleted(del);
  EXPECT_EQ(shard.live_rows(), 15u);
  EXPECT_FALSE(shard.FindLive(1013, &ord));
  EXPECT_TRUE(shard.FindLive(1012, &ord));
  RowSet live = shard.Live();
  EXPECT_EQ(live.Cardinality(), 15u);
  EXPECT_FALSE(live.Contains(2));
  EXPECT_FALSE(live.Contains(13));
  EXPECT_TRUE(live.Contains(16));
  EXPECT_FALSE(live.Contains(17));

  // An id deleted and re-ingested maps to its new row; deleting more leaves that mapping.
  Chunk again = MakeChunk(17, 1);
  again.ids[0] = 1013;
  shard.ApplyChunk(again);
  ASSERT_TRUE(shard.FindLive(1013, &ord));
  EXPECT_EQ(ord, 17u);
  del.Add(5);
  shard.SetDeleted(del);
  ASSERT_TRUE(shard.FindLive(1013, &ord));
  EXPECT_EQ(ord, 17u);
  EXPECT_FALSE(shard.FindLive(1005, &ord));
}

// Serves chunks and a shard state from memory, to test Load without RocksDB.
class FakeStore : public Store {
 public:
  std::vector<Chunk> chunks;
  uint32_t next_ordinal = 0;
  uint64_t live_rows = 0;
  RowSet deleted;

  Status CreateCollection(const CollectionSpec&, CollectionMeta*) override {
    return Status::NotSupported("fake");
  }
  Status ListCollections(std::vector<CollectionMeta>*) override {
    return Status::NotSupported("fake");
  }
  Status GetCollection(const std::string&, CollectionMeta*) override {
    return Status::NotSupported("fake");
  }
  Status ReadShardState(const CollectionMeta&, uint32_t, ShardState* state) override {
    state->next_ordinal = next_ordinal;
    state->live_rows = live_rows;
    state->deleted = ToRoaring(deleted);
    return Status::OK();
  }
  Status ScanChunks(const CollectionMeta&, uint32_t, uint32_t parts,
                    const std::function<Status(Chunk&&)>& visit) override {
    EXPECT_EQ(parts, uint32_t{kChunkAll});
    for (const Chunk& c : chunks) {
      Chunk copy = c;
      SIEVE_RETURN_IF_ERROR(visit(std::move(copy)));
    }
    return Status::OK();
  }
  Status CommitAppend(const CollectionMeta&, int64_t, const std::vector<ShardAppend>&) override {
    return Status::NotSupported("fake");
  }
  Status CommitShardStates(const CollectionMeta&,
                           const std::vector<std::pair<uint32_t, ShardState>>&) override {
    return Status::NotSupported("fake");
  }
  Status Flush() override { return Status::NotSupported("fake"); }
  Status DropCollection(const CollectionMeta&) override { return Status::NotSupported("fake"); }
  Status UpdateColumns(const CollectionMeta&, const std::vector<ColumnChange>&) override {
    return Status::NotSupported("fake");
  }
  Status BeginRewrite(const CollectionMeta&, uint32_t, std::unique_ptr<ShardRewrite>*) override {
    return Status::NotSupported("fake");
  }
  Status DiskBytes(uint64_t*) override { return Status::NotSupported("fake"); }
  Status CheckFormat(std::vector<std::string>*) override { return Status::NotSupported("fake"); }
};

FakeStore GoodStore() {
  FakeStore store;
  store.chunks = {MakeChunk(0, 50), MakeChunk(50, 30)};
  store.next_ordinal = 80;
  store.deleted.Add(7);
  store.deleted.Add(79);
  store.live_rows = 78;
  return store;
}

TEST(ShardIndexTest, LoadFromStore) {
  FakeStore store = GoodStore();
  CollectionMeta meta;
  meta.spec = Spec();
  ShardIndex shard(meta.spec, 0);
  ASSERT_TRUE(shard.Load(&store, meta).ok());
  EXPECT_EQ(shard.rows(), 80u);
  EXPECT_EQ(shard.live_rows(), 78u);
  EXPECT_TRUE(shard.deleted() == store.deleted);
  uint32_t ord;
  EXPECT_FALSE(shard.FindLive(1007, &ord));
  ASSERT_TRUE(shard.FindLive(1060, &ord));
  EXPECT_EQ(ord, 60u);
  EXPECT_EQ(shard.vectors().row(60)[1], store.chunks[1].vectors[10 * 3 + 1]);
  EXPECT_EQ(std::get<std::string>(shard.attribute(1).ValueAt(61)), "v1");
  // Loading twice into one index is a caller error, not a silent double append.
  EXPECT_TRUE(shard.Load(&store, meta).IsInvalidArgument());
}

TEST(ShardIndexTest, LoadDetectsDisagreement) {
  CollectionMeta meta;
  meta.spec = Spec();
  auto expect_corrupt = [&](FakeStore store, const char* what) {
    ShardIndex shard(meta.spec, 0);
    Status s = shard.Load(&store, meta);
    EXPECT_TRUE(s.IsCorruption()) << what << ": " << s.ToString();
  };
  FakeStore gap = GoodStore();
  gap.chunks[1] = MakeChunk(51, 29);
  expect_corrupt(gap, "gap between chunks");
  FakeStore short_state = GoodStore();
  short_state.next_ordinal = 90;
  short_state.live_rows = 88;
  expect_corrupt(short_state, "fewer rows than next_ordinal");
  FakeStore past = GoodStore();
  past.next_ordinal = 60;
  past.live_rows = 58;
  expect_corrupt(past, "chunk past next_ordinal");
  FakeStore live = GoodStore();
  live.live_rows = 80;
  expect_corrupt(live, "live count");
  FakeStore deleted = GoodStore();
  deleted.deleted.Add(80);
  deleted.live_rows = 77;
  expect_corrupt(deleted, "deleted beyond rows");
  FakeStore column = GoodStore();
  column.chunks[0].columns[1].strings.pop_back();
  expect_corrupt(column, "short column");
  FakeStore type = GoodStore();
  type.chunks[0].columns[0].type = AttrType::kFloat;
  expect_corrupt(type, "column type");
  FakeStore ids = GoodStore();
  ids.chunks[1].ids.pop_back();
  expect_corrupt(ids, "ids");
  FakeStore vecs = GoodStore();
  vecs.chunks[1].vectors.pop_back();
  expect_corrupt(vecs, "vectors");
  FakeStore cols = GoodStore();
  cols.chunks[1].columns.pop_back();
  expect_corrupt(cols, "columns");
}

// Load from the real RocksDB-backed store: the chunks and deleted rows it persisted come back
// exactly.
TEST(ShardIndexTest, LoadFromRocksStore) {
  test::ScratchDir dir;
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(StoreOptions(), dir.Join("db"), &store).ok());
  CollectionMeta meta;
  Status s = store->CreateCollection(Spec(), &meta);
  ASSERT_TRUE(s.ok()) << s.ToString();
  Chunk a = MakeChunk(0, 40), b = MakeChunk(40, 25);
  Store::ShardAppend append;
  append.shard = 0;
  append.chunks = {&a, &b};
  append.new_state.next_ordinal = 65;
  append.new_state.live_rows = 65;
  append.new_state.deleted = ToRoaring(RowSet());
  s = store->CommitAppend(meta, 2000, {append});
  ASSERT_TRUE(s.ok()) << s.ToString();
  RowSet deleted;
  deleted.Add(3);
  deleted.Add(64);
  ShardState state;
  state.next_ordinal = 65;
  state.live_rows = 63;
  state.deleted = ToRoaring(deleted);
  s = store->CommitShardStates(meta, {{0, state}});
  ASSERT_TRUE(s.ok()) << s.ToString();

  ShardIndex shard(meta.spec, 0);
  s = shard.Load(store.get(), meta);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(shard.rows(), 65u);
  EXPECT_EQ(shard.live_rows(), 63u);
  EXPECT_TRUE(shard.deleted() == deleted);
  uint32_t ord;
  EXPECT_FALSE(shard.FindLive(1003, &ord));
  ASSERT_TRUE(shard.FindLive(1050, &ord));
  EXPECT_EQ(ord, 50u);
  for (uint32_t r = 0; r < 65; ++r) {
    const Chunk& c = r < 40 ? a : b;
    uint32_t i = r - c.first_ordinal;
    for (uint32_t d = 0; d < 3; ++d) ASSERT_EQ(shard.vectors().row(r)[d], c.vectors[i * 3 + d]);
    EXPECT_EQ(std::get<int64_t>(shard.attribute(0).ValueAt(r)), r % 5);
    EXPECT_EQ(IsNull(shard.attribute(1).ValueAt(r)), r % 3 == 0);
  }
}

}  // namespace
}  // namespace sieve

namespace sieve {
namespace {

// CopyForWrite: every change to the copy (appends that fit and that do not, deletes, value
// updates) leaves the original's rows, vectors, ids, deletes and attribute index as they were.
TEST(ShardIndexCopyTest, ChangesToTheCopyLeaveTheOriginalAsItWas) {
  auto original = std::make_shared<ShardIndex>(Spec(), 0);
  original->ApplyChunk(MakeChunk(0, 10));
  original->SetDeleted(RowSet::Of(std::vector<uint32_t>{2, 3}.data(), 2));
  const std::vector<float> vectors(original->vectors().data(),
                                   original->vectors().data() + 10 * 3);
  const uint64_t lineage = original->vectors().lineage();

  std::shared_ptr<ShardIndex> copy = original->CopyForWrite();
  EXPECT_EQ(copy->instance(), original->instance());
  EXPECT_EQ(copy->version(), original->version());
  copy->ApplyChunk(MakeChunk(10, 1));     // fits, or moves to an arena of its own
  copy->ApplyChunk(MakeChunk(11, 500));   // cannot fit: a new arena
  copy->SetDeleted(RowSet::Of(std::vector<uint32_t>{2, 3, 4, 400}.data(), 4));
  copy->SetValue(0, 1, Value(int64_t{77}));
  EXPECT_GT(copy->version(), original->version());

  EXPECT_EQ(original->rows(), 10u);
  EXPECT_EQ(original->live_rows(), 8u);
  EXPECT_EQ(original->vectors().lineage(), lineage);
  EXPECT_EQ(std::vector<float>(original->vectors().data(), original->vectors().data() + 30),
            vectors);
  EXPECT_EQ(Rows(original->deleted()), (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(std::get<int64_t>(original->attribute(0).ValueAt(1)), 1);
  uint32_t ordinal = 0;
  EXPECT_TRUE(original->FindLive(1004, &ordinal));
  EXPECT_FALSE(original->FindLive(1011, &ordinal));
  EXPECT_EQ(original->SortedLive()->size(), 8u);

  EXPECT_EQ(copy->rows(), 511u);
  EXPECT_NE(copy->vectors().lineage(), lineage);
  EXPECT_EQ(std::vector<float>(copy->vectors().data(), copy->vectors().data() + 30), vectors);
  EXPECT_EQ(std::get<int64_t>(copy->attribute(0).ValueAt(1)), 77);
  EXPECT_FALSE(copy->FindLive(1004, &ordinal));
  EXPECT_TRUE(copy->FindLive(1011, &ordinal));
}

// Appends that fit share the original's allocation without moving its rows.
TEST(ShardIndexCopyTest, AppendsThatFitShareTheArena) {
  auto original = std::make_shared<ShardIndex>(Spec(), 0);
  original->ApplyChunk(MakeChunk(0, 4));
  original->ApplyChunk(MakeChunk(4, 1));  // the arena doubles: room for more
  const float* data = original->vectors().data();
  ASSERT_TRUE(original->vectors().HasRoomFor(1));
  std::shared_ptr<ShardIndex> copy = original->CopyForWrite();
  copy->ApplyChunk(MakeChunk(5, 1));
  EXPECT_EQ(copy->vectors().lineage(), original->vectors().lineage());
  EXPECT_EQ(original->vectors().data(), data);
  EXPECT_EQ(original->rows(), 5u);
  EXPECT_EQ(copy->rows(), 6u);
}

}  // namespace
}  // namespace sieve
