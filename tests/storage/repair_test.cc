// Copyright 2026 The Sieve Authors.
//
// Store::Repair: what it salvages from damaged stores, and that it says exactly which rows of
// which batches it lost.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "storage/roaring.h"
#include "storage/store.h"
#include "tests/testutil.h"

namespace sieve {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kDim = 8;
constexpr uint32_t kBatchRows = 2000;  // a WAL batch spanning several 32 KiB log blocks

CollectionSpec Spec() {
  CollectionSpec spec;
  spec.name = "r";
  spec.dim = kDim;
  spec.attributes = {{"n", AttrType::kInt}};
  return spec;
}

// Batch b holds ids 1000 + [b * kBatchRows, (b + 1) * kBatchRows).
Chunk BatchChunk(uint32_t b, uint32_t first_ordinal) {
  Chunk chunk;
  chunk.first_ordinal = first_ordinal;
  chunk.num_rows = kBatchRows;
  chunk.vectors = test::RandomVectors(kBatchRows, kDim, b + 3);
  Column n;
  n.type = AttrType::kInt;
  for (uint32_t r = 0; r < kBatchRows; ++r) {
    const int64_t id = 1000 + int64_t{b} * kBatchRows + r;
    chunk.ids.push_back(id);
    n.Append(r % 7 == 0 ? Value() : Value(id * 2));
  }
  chunk.columns = {std::move(n)};
  return chunk;
}

void Append(Store* store, const CollectionMeta& meta, uint32_t b) {
  ShardState state;
  ASSERT_TRUE(store->ReadShardState(meta, 0, &state).ok());
  Chunk chunk = BatchChunk(b, state.next_ordinal);
  ShardState next = state;
  next.next_ordinal += kBatchRows;
  next.live_rows += kBatchRows;
  Store::ShardAppend append{0, {&chunk}, next};
  ASSERT_TRUE(store->CommitAppend(meta, 1000 + int64_t{b + 1} * kBatchRows, {append}).ok());
}

// id → (vector, attribute) of every live row.
std::map<int64_t, std::pair<std::vector<float>, Value>> LiveRows(const std::string& path) {
  std::map<int64_t, std::pair<std::vector<float>, Value>> rows;
  StoreOptions ro;
  ro.read_only = true;
  std::unique_ptr<Store> store;
  Status s = Store::Open(ro, path, &store);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) return rows;
  CollectionMeta meta;
  EXPECT_TRUE(store->GetCollection("r", &meta).ok());
  ShardState state;
  EXPECT_TRUE(store->ReadShardState(meta, 0, &state).ok());
  s = store->ScanChunks(meta, 0, kChunkAll, [&](Chunk&& c) {
    for (uint32_t r = 0; r < c.num_rows; ++r) {
      if (state.deleted->contains(c.first_ordinal + r)) continue;
      rows[c.ids[r]] = {std::vector<float>(c.vectors.begin() + r * kDim,
                                           c.vectors.begin() + (r + 1) * kDim),
                        c.columns[0].Get(r)};
    }
    return Status::OK();
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  std::vector<std::string> problems;
  s = store->CheckFormat(&problems);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return rows;
}

// Six batches: 0-2 bulk (ingested vector files), then a delete of 100 rows of batch 1, a flush,
// then 3-5 through the WAL alone.
void Build(const std::string& path) {
  StoreOptions bulk;
  bulk.vector_file_min_bytes = 0;
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(bulk, path, &store).ok());
  CollectionMeta meta;
  ASSERT_TRUE(store->CreateCollection(Spec(), &meta).ok());
  for (uint32_t b = 0; b < 3; ++b) Append(store.get(), meta, b);
  ShardState state;
  ASSERT_TRUE(store->ReadShardState(meta, 0, &state).ok());
  auto deleted = std::make_shared<roaring::Roaring>();
  deleted->addRange(kBatchRows, kBatchRows + 100);
  state.deleted = deleted;
  state.live_rows -= 100;
  ASSERT_TRUE(store->CommitShardStates(meta, {{0, state}}).ok());
  ASSERT_TRUE(store->PutSetting("planner/cpu", "{}").ok());
  ASSERT_TRUE(store->Flush().ok());
  store.reset();
  ASSERT_TRUE(Store::Open(StoreOptions(), path, &store).ok());
  ASSERT_TRUE(store->GetCollection("r", &meta).ok());
  for (uint32_t b = 3; b < 6; ++b) Append(store.get(), meta, b);
}

// The newest write-ahead log (the one holding the commits since the flush).
std::string NewestLog(const std::string& dir) {
  std::string found;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".log") continue;
    if (found.empty() || e.path().filename().string() > fs::path(found).filename().string()) {
      found = e.path();
    }
  }
  return found;
}

void Flip(const std::string& file, uint64_t offset) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.read(&c, 1);
  c ^= 0x40;
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
}

class RepairTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.Join("db");
    Build(path_);
    before_ = LiveRows(path_);
    ASSERT_EQ(before_.size(), 6 * kBatchRows - 100);
  }
  // Live rows before the damage, minus the ids of batches `lost`.
  std::map<int64_t, std::pair<std::vector<float>, Value>> Without(std::vector<uint32_t> lost) {
    auto want = before_;
    for (uint32_t b : lost) {
      for (uint32_t r = 0; r < kBatchRows; ++r) want.erase(1000 + int64_t{b} * kBatchRows + r);
    }
    return want;
  }
  test::ScratchDir dir_;
  std::string path_;
  std::map<int64_t, std::pair<std::vector<float>, Value>> before_;
};

TEST_F(RepairTest, CleanStoreIsLeftAlone) {
  RepairReport report;
  ASSERT_TRUE(Store::Repair(StoreOptions(), path_, &report).ok());
  EXPECT_FALSE(report.repaired);
  EXPECT_TRUE(report.losses.empty());
  EXPECT_EQ(LiveRows(path_), before_);
}

TEST_F(RepairTest, DamagedWalKeepsTheBatchesBeforeItAndNamesTheRest) {
  const std::string wal = NewestLog(path_);
  ASSERT_FALSE(wal.empty());
  const uint64_t size = fs::file_size(wal);
  // Inside batch 4 of the three WAL batches (3, 4, 5), each ~1/3 of the log.
  Flip(wal, size / 2);
  std::unique_ptr<Store> store;
  Status s = Store::Open(StoreOptions(), path_, &store);
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find(wal), std::string::npos) << s.message();

  RepairReport report;
  s = Store::Repair(StoreOptions(), path_, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(report.repaired);
  ASSERT_EQ(report.losses.size(), 2u);  // batches 4 and 5, each whole
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(report.losses[i].rows, kBatchRows);
    EXPECT_EQ(report.losses[i].lost_rows, kBatchRows);
    EXPECT_GT(report.losses[i].commit, 0u);
    EXPECT_EQ(report.losses[i].first_ordinal, (4 + i) * kBatchRows);
  }
  EXPECT_EQ(report.rows_lost, 2 * kBatchRows);
  EXPECT_EQ(report.rows_kept, 4 * kBatchRows - 100);
  EXPECT_TRUE(fs::exists(report.damaged_copy));
  EXPECT_EQ(LiveRows(path_), Without({4, 5}));

  // The repaired store takes writes and keeps assigning ids after the largest one.
  ASSERT_TRUE(Store::Open(StoreOptions(), path_, &store).ok());
  CollectionMeta meta;
  ASSERT_TRUE(store->GetCollection("r", &meta).ok());
  EXPECT_GE(meta.next_auto_id, 1000 + int64_t{4} * kBatchRows);
  std::string setting;
  EXPECT_TRUE(store->GetSetting("planner/cpu", &setting).ok());
}

TEST_F(RepairTest, DeletedWalLosesExactlyTheBatchesItHeld) {
  fs::remove(NewestLog(path_));
  RepairReport report;
  Status s = Store::Repair(StoreOptions(), path_, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(report.losses.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(report.losses[i].first_ordinal, (3 + i) * kBatchRows);
    EXPECT_EQ(report.losses[i].lost_rows, kBatchRows);
  }
  EXPECT_EQ(LiveRows(path_), Without({3, 4, 5}));
}

TEST_F(RepairTest, DamagedVectorFileLosesItsBatchOnly) {
  // The largest table file is an ingested vector file of one bulk batch.
  std::string biggest;
  for (const auto& e : fs::directory_iterator(path_)) {
    if (e.path().extension() == ".sst" &&
        (biggest.empty() || fs::file_size(e.path()) > fs::file_size(biggest))) {
      biggest = e.path();
    }
  }
  Flip(biggest, fs::file_size(biggest) / 3);
  RepairReport report;
  Status s = Store::Repair(StoreOptions(), path_, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(report.losses.size(), 1u);
  const RepairLoss& loss = report.losses[0];
  EXPECT_EQ(loss.rows, kBatchRows);
  EXPECT_GT(loss.commit, 0u);
  EXPECT_NE(loss.cause.find("vectors"), std::string::npos) << loss.cause;
  const uint32_t batch = static_cast<uint32_t>(loss.first_ordinal / kBatchRows);
  EXPECT_LT(batch, 3u);
  // Batch 1 had 100 deleted rows: those are not counted as lost.
  EXPECT_EQ(loss.lost_rows, batch == 1 ? kBatchRows - 100 : kBatchRows);
  EXPECT_EQ(LiveRows(path_), Without({batch}));
}

TEST_F(RepairTest, MissingLedgerIsRebuiltWithEveryRow) {
  fs::remove(path_ + "/SIEVE-LEDGER");
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(StoreOptions(), path_, &store).IsCorruption());
  RepairReport report;
  ASSERT_TRUE(Store::Repair(StoreOptions(), path_, &report).ok());
  EXPECT_TRUE(report.repaired);
  EXPECT_EQ(report.rows_lost, 0u);
  EXPECT_EQ(LiveRows(path_), before_);
}

}  // namespace
}  // namespace sieve
