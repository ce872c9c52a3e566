// Copyright 2026 The Sieve Authors.
//
// The commits that replace stored rows: DropCollection, CommitColumns, and the shard rewrite
// of compaction (its key spaces, abandoned rewrites, a writer killed mid-rewrite, and the disk
// space it hands back).

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "storage/format.h"
#include "storage/roaring.h"
#include "storage/store.h"
#include "tests/testutil.h"

namespace sieve {
namespace {

constexpr uint32_t kDim = 16;

CollectionSpec Spec(const std::string& name = "c") {
  CollectionSpec spec;
  spec.name = name;
  spec.dim = kDim;
  spec.attributes = {{"n", AttrType::kInt}, {"s", AttrType::kString}};
  return spec;
}

// Rows [first, first + n) with ids 10 * ordinal.
Chunk Rows(uint32_t first, uint32_t n, uint64_t seed) {
  Chunk c;
  c.first_ordinal = first;
  c.num_rows = n;
  c.vectors = test::RandomVectors(n, kDim, seed);
  c.columns.resize(2);
  c.columns[0].type = AttrType::kInt;
  c.columns[1].type = AttrType::kString;
  for (uint32_t r = 0; r < n; ++r) {
    c.ids.push_back(10 * int64_t{first + r});
    c.columns[0].Append(Value(int64_t{first + r}));
    c.columns[1].Append(r % 3 == 0 ? Value() : Value("v" + std::to_string(first + r)));
  }
  return c;
}

Status Append(Store* store, const CollectionMeta& meta, uint32_t shard, const Chunk& chunk) {
  ShardState state;
  SIEVE_RETURN_IF_ERROR(store->ReadShardState(meta, shard, &state));
  ShardState next = state;
  next.next_ordinal += chunk.num_rows;
  next.live_rows += chunk.num_rows;
  Store::ShardAppend a{shard, {&chunk}, next};
  CollectionMeta current;
  SIEVE_RETURN_IF_ERROR(store->GetCollection(meta.spec.name, &current));
  return store->CommitAppend(meta, std::max(current.next_auto_id, chunk.ids.back() + 1), {a});
}

Status Delete(Store* store, const CollectionMeta& meta, uint32_t shard, uint32_t begin,
              uint32_t end) {
  ShardState state;
  SIEVE_RETURN_IF_ERROR(store->ReadShardState(meta, shard, &state));
  auto deleted = std::make_shared<roaring::Roaring>(*state.deleted);
  deleted->addRange(begin, end);
  state.deleted = deleted;
  state.live_rows = state.next_ordinal - deleted->cardinality();
  return store->CommitShardStates(meta, {{shard, state}});
}

std::vector<Chunk> Scan(Store* store, const CollectionMeta& meta, uint32_t shard) {
  std::vector<Chunk> out;
  Status s = store->ScanChunks(meta, shard, kChunkAll, [&](Chunk&& c) {
    out.push_back(std::move(c));
    return Status::OK();
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

void ExpectClean(Store* store) {
  std::vector<std::string> problems;
  Status s = store->CheckFormat(&problems);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

// Compacts shard 0 the way DBImpl does: live rows only, renumbered from 0.
Status Compact(Store* store, const CollectionMeta& meta, uint32_t* live) {
  ShardState state;
  SIEVE_RETURN_IF_ERROR(store->ReadShardState(meta, 0, &state));
  std::vector<Chunk> chunks = Scan(store, meta, 0);
  std::unique_ptr<Store::ShardRewrite> rewrite;
  SIEVE_RETURN_IF_ERROR(store->BeginRewrite(meta, 0, &rewrite));
  Chunk out;
  out.columns.resize(2);
  out.columns[0].type = AttrType::kInt;
  out.columns[1].type = AttrType::kString;
  for (const Chunk& c : chunks) {
    for (uint32_t r = 0; r < c.num_rows; ++r) {
      if (state.deleted->contains(c.first_ordinal + r)) continue;
      out.ids.push_back(c.ids[r]);
      out.vectors.insert(out.vectors.end(), c.vectors.begin() + r * kDim,
                         c.vectors.begin() + (r + 1) * kDim);
      for (int a = 0; a < 2; ++a) out.columns[a].Append(c.columns[a].Get(r));
      ++out.num_rows;
    }
  }
  *live = out.num_rows;
  if (out.num_rows > 0) SIEVE_RETURN_IF_ERROR(rewrite->Append(out));
  ShardState next;
  next.next_ordinal = out.num_rows;
  next.live_rows = out.num_rows;
  next.deleted = std::make_shared<roaring::Roaring>();
  return rewrite->Commit(next);
}

TEST(RewriteTest, DropRemovesEverythingAndFreesTheName) {
  test::ScratchDir dir;
  StoreOptions bulk;
  bulk.vector_file_min_bytes = 0;
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(bulk, dir.path(), &store).ok());
  CollectionMeta a, b;
  ASSERT_TRUE(store->CreateCollection(Spec("a"), &a).ok());
  ASSERT_TRUE(store->CreateCollection(Spec("b"), &b).ok());
  ASSERT_TRUE(Append(store.get(), a, 0, Rows(0, 500, 1)).ok());
  ASSERT_TRUE(Append(store.get(), b, 0, Rows(0, 300, 2)).ok());
  ASSERT_TRUE(store->DropCollection(a).ok());
  CollectionMeta got;
  EXPECT_TRUE(store->GetCollection("a", &got).IsNotFound());
  EXPECT_TRUE(store->DropCollection(a).IsNotFound());
  EXPECT_EQ(Scan(store.get(), b, 0).size(), 1u);  // the other collection is untouched
  ExpectClean(store.get());
  // The name is free again, for a new collection with a new id and no rows.
  CollectionMeta again;
  ASSERT_TRUE(store->CreateCollection(Spec("a"), &again).ok());
  EXPECT_NE(again.id, a.id);
  EXPECT_TRUE(Scan(store.get(), again, 0).empty());
  store.reset();
  ASSERT_TRUE(Store::Open(StoreOptions(), dir.path(), &store).ok());
  ExpectClean(store.get());
  EXPECT_TRUE(store->GetCollection("a", &got).ok());
  EXPECT_EQ(got.id, again.id);
}

TEST(RewriteTest, UpdateColumnsReplacesAttributesOnly) {
  test::ScratchDir dir;
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(StoreOptions(), dir.path(), &store).ok());
  CollectionMeta meta;
  ASSERT_TRUE(store->CreateCollection(Spec(), &meta).ok());
  const Chunk first = Rows(0, 40, 3), second = Rows(40, 40, 4);
  ASSERT_TRUE(Append(store.get(), meta, 0, first).ok());
  ASSERT_TRUE(Append(store.get(), meta, 0, second).ok());
  // Rows in both stored chunks, one set twice (the last change wins), one to null.
  std::vector<Store::ColumnChange> changes = {{0, 5, 0, Value(int64_t{-5})},
                                              {0, 45, 1, Value(std::string("new"))},
                                              {0, 5, 0, Value(int64_t{-6})},
                                              {0, 46, 0, Value()}};
  ASSERT_TRUE(store->UpdateColumns(meta, changes).ok());
  store.reset();
  ASSERT_TRUE(Store::Open(StoreOptions(), dir.path(), &store).ok());
  std::vector<Chunk> chunks = Scan(store.get(), meta, 0);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].vectors, first.vectors);
  EXPECT_EQ(chunks[1].ids, second.ids);
  EXPECT_EQ(chunks[0].columns[0].Get(5), Value(int64_t{-6}));
  EXPECT_EQ(chunks[0].columns[1].Get(5), first.columns[1].Get(5));
  EXPECT_EQ(chunks[0].columns[0].Get(6), first.columns[0].Get(6));
  EXPECT_EQ(chunks[1].columns[1].Get(5), Value(std::string("new")));
  EXPECT_EQ(chunks[1].columns[0].Get(6), Value());
  ExpectClean(store.get());
  // A wrong type or a row past the end is refused whole.
  EXPECT_TRUE(store->UpdateColumns(meta, {{0, 1, 0, Value(1.5)}}).IsInvalidArgument());
  EXPECT_TRUE(store->UpdateColumns(meta, {{0, 7, 0, Value(int64_t{1})},
                                          {0, 80, 0, Value(int64_t{1})}})
                  .IsInvalidArgument());
  EXPECT_EQ(Scan(store.get(), meta, 0)[0].columns[0].Get(7), first.columns[0].Get(7));
}

TEST(RewriteTest, CompactionRenumbersLiveRowsInANewKeySpace) {
  test::ScratchDir dir;
  StoreOptions bulk;
  bulk.vector_file_min_bytes = 0;
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(bulk, dir.path(), &store).ok());
  CollectionMeta meta;
  ASSERT_TRUE(store->CreateCollection(Spec(), &meta).ok());
  ASSERT_TRUE(Append(store.get(), meta, 0, Rows(0, 1000, 4)).ok());
  ASSERT_TRUE(Append(store.get(), meta, 0, Rows(1000, 1000, 5)).ok());
  ASSERT_TRUE(Delete(store.get(), meta, 0, 100, 1600).ok());
  uint32_t live = 0;
  ASSERT_TRUE(Compact(store.get(), meta, &live).ok());
  EXPECT_EQ(live, 500u);
  ShardState state;
  ASSERT_TRUE(store->ReadShardState(meta, 0, &state).ok());
  EXPECT_NE(state.space, 0u);
  EXPECT_EQ(state.next_ordinal, 500u);
  EXPECT_EQ(state.deleted->cardinality(), 0u);
  std::vector<Chunk> chunks = Scan(store.get(), meta, 0);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].ids[99], 990);    // ids stay: ordinal 99 of the old shard
  EXPECT_EQ(chunks[0].ids[100], 16000);  // then the first row after the deleted range
  ExpectClean(store.get());
  // Appends continue in the new space; a second compaction moves it again.
  ASSERT_TRUE(Append(store.get(), meta, 0, Rows(500, 10, 6)).ok());
  ASSERT_TRUE(Delete(store.get(), meta, 0, 0, 5).ok());
  const uint32_t first_space = state.space;
  ASSERT_TRUE(Compact(store.get(), meta, &live).ok());
  EXPECT_EQ(live, 505u);
  ASSERT_TRUE(store->ReadShardState(meta, 0, &state).ok());
  EXPECT_NE(state.space, first_space);
  store.reset();
  ASSERT_TRUE(Store::Open(StoreOptions(), dir.path(), &store).ok());
  ExpectClean(store.get());
  EXPECT_EQ(Scan(store.get(), meta, 0)[0].num_rows, 505u);
}

TEST(RewriteTest, AbandonedRewriteLeavesNothingVisible) {
  test::ScratchDir dir;
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(StoreOptions(), dir.path(), &store).ok());
  CollectionMeta meta;
  ASSERT_TRUE(store->CreateCollection(Spec(), &meta).ok());
  const Chunk rows = Rows(0, 200, 7);
  ASSERT_TRUE(Append(store.get(), meta, 0, rows).ok());
  {
    std::unique_ptr<Store::ShardRewrite> rewrite;
    ASSERT_TRUE(store->BeginRewrite(meta, 0, &rewrite).ok());
    ASSERT_TRUE(rewrite->Append(Rows(0, 50, 8)).ok());
    ExpectClean(store.get());  // a pending space is not a problem
  }
  std::vector<Chunk> chunks = Scan(store.get(), meta, 0);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].ids, rows.ids);
  ExpectClean(store.get());
  // A rewrite whose shard changed since it began is refused.
  std::unique_ptr<Store::ShardRewrite> rewrite;
  ASSERT_TRUE(store->BeginRewrite(meta, 0, &rewrite).ok());
  ASSERT_TRUE(Append(store.get(), meta, 0, Rows(200, 5, 9)).ok());
  ShardState next;
  next.deleted = std::make_shared<roaring::Roaring>();
  EXPECT_TRUE(rewrite->Commit(next).IsInvalidArgument());
}

// Run in a child process by the test below: compacts again and again while printing how many
// compactions were acknowledged.
TEST(RewriteCrashChild, Compactor) {
  const char* db = std::getenv("SIEVE_REWRITE_DB");
  const char* acks = std::getenv("SIEVE_REWRITE_ACKS");
  if (db == nullptr || acks == nullptr) GTEST_SKIP() << "only run by the kill -9 test";
  StoreOptions bulk;
  bulk.vector_file_min_bytes = 0;
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(bulk, db, &store).ok());
  CollectionMeta meta;
  ASSERT_TRUE(store->GetCollection("c", &meta).ok());
  const int fd = ::open(acks, O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0);
  for (int i = 1;; ++i) {
    uint32_t live = 0;
    ASSERT_TRUE(Compact(store.get(), meta, &live).ok());
    const std::string line = std::to_string(i) + "\n";
    ASSERT_EQ(::write(fd, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  }
}

TEST(RewriteTest, KillNineDuringCompactionLeavesOldOrNewShard) {
  for (int round = 0; round < 3; ++round) {
    test::ScratchDir dir;
    const std::string db = dir.Join("db");
    const std::string acks = dir.Join("acks");
    { std::ofstream(acks).flush(); }
    std::vector<int64_t> want;
    {
      StoreOptions bulk;
      bulk.vector_file_min_bytes = 0;
      std::unique_ptr<Store> store;
      ASSERT_TRUE(Store::Open(bulk, db, &store).ok());
      CollectionMeta meta;
      ASSERT_TRUE(store->CreateCollection(Spec(), &meta).ok());
      ASSERT_TRUE(Append(store.get(), meta, 0, Rows(0, 20000, 10)).ok());
      ASSERT_TRUE(Delete(store.get(), meta, 0, 0, 3).ok());
      for (uint32_t o = 3; o < 20000; ++o) want.push_back(10 * int64_t{o});
    }
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      setenv("SIEVE_REWRITE_DB", db.c_str(), 1);
      setenv("SIEVE_REWRITE_ACKS", acks.c_str(), 1);
      const int devnull = ::open("/dev/null", O_WRONLY);
      if (devnull >= 0) {
        dup2(devnull, STDOUT_FILENO);
        dup2(devnull, STDERR_FILENO);
      }
      execl("/proc/self/exe", "storage_tests", "--gtest_filter=RewriteCrashChild.Compactor",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    // Kill at a different moment each round, once some compactions were acknowledged.
    int acked = 0;
    for (int i = 0; i < 3000 && acked < 2 + round; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      std::ifstream in(acks);
      for (std::string line; std::getline(in, line);) acked = std::stoi(line);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(7 * round));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the compactor exited by itself: " << status;
    std::unique_ptr<Store> store;
    Status s = Store::Open(StoreOptions(), db, &store);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ExpectClean(store.get());
    CollectionMeta meta;
    ASSERT_TRUE(store->GetCollection("c", &meta).ok());
    ShardState state;
    ASSERT_TRUE(store->ReadShardState(meta, 0, &state).ok());
    std::vector<int64_t> live;
    for (const Chunk& c : Scan(store.get(), meta, 0)) {
      for (uint32_t r = 0; r < c.num_rows; ++r) {
        if (!state.deleted->contains(c.first_ordinal + r)) live.push_back(c.ids[r]);
      }
    }
    EXPECT_EQ(live, want);  // the same live rows, whichever side of a commit the kill fell
  }
}

TEST(RewriteTest, CompactionHandsSpaceBack) {
  test::ScratchDir dir;
  std::unique_ptr<Store> store;
  StoreOptions bulk;
  bulk.vector_file_min_bytes = 0;
  ASSERT_TRUE(Store::Open(bulk, dir.path(), &store).ok());
  CollectionMeta meta;
  ASSERT_TRUE(store->CreateCollection(Spec(), &meta).ok());
  for (uint32_t b = 0; b < 8; ++b) {
    ASSERT_TRUE(Append(store.get(), meta, 0, Rows(b * 10000, 10000, 20 + b)).ok());
  }
  uint64_t full = 0;
  ASSERT_TRUE(store->DiskBytes(&full).ok());
  ASSERT_TRUE(Delete(store.get(), meta, 0, 0, 40000).ok());
  uint32_t live = 0;
  ASSERT_TRUE(Compact(store.get(), meta, &live).ok());
  ASSERT_EQ(live, 40000u);
  uint64_t after = 0;
  ASSERT_TRUE(store->DiskBytes(&after).ok());
  // Half the rows: about half the bytes (8 × 10000 × 16 floats of vectors dominate).
  EXPECT_LT(after, full * 0.6) << full << " -> " << after;
}

}  // namespace
}  // namespace sieve
