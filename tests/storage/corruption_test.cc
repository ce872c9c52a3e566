// Copyright 2026 The Sieve Authors.
//
// Flipped bytes in every kind of file a store holds: ingested vector files, blob files, table
// files of every family, the write-ahead log, the MANIFEST, CURRENT, OPTIONS, IDENTITY and the
// commit ledger, each at many offsets. After every flip, opening and checking the store never
// crashes, and either the damage is reported (the open fails, or CheckFormat names a problem)
// or the store reads back exactly as before. Damage to a table or blob file is always
// reported: every byte of those is covered by a checksum (storage/FORMAT.md).

#include <gtest/gtest.h>

#include <algorithm>
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

constexpr uint32_t kDim = 32;
constexpr uint32_t kBatchRows = 100;  // 12.8 KB of vectors a batch: above the blob threshold

CollectionSpec Spec() {
  CollectionSpec spec;
  spec.name = "damaged";
  spec.dim = kDim;
  spec.attributes = {{"n", AttrType::kInt}, {"tags", AttrType::kTags}};
  return spec;
}

Chunk BatchChunk(uint32_t b) {
  Chunk chunk;
  chunk.first_ordinal = b * kBatchRows;
  chunk.num_rows = kBatchRows;
  chunk.vectors = test::RandomVectors(kBatchRows, kDim, b + 11);
  Column n, tags;
  n.type = AttrType::kInt;
  tags.type = AttrType::kTags;
  for (uint32_t r = 0; r < kBatchRows; ++r) {
    const int64_t id = int64_t{b} * kBatchRows + r;
    chunk.ids.push_back(id);
    n.Append(r % 5 == 0 ? Value() : Value(id * 7));
    tags.Append(Value(std::vector<std::string>(r % 3, "t" + std::to_string(r % 4))));
  }
  chunk.columns = {std::move(n), std::move(tags)};
  return chunk;
}

Status Append(Store* store, const CollectionMeta& meta, uint32_t b) {
  ShardState state;
  SIEVE_RETURN_IF_ERROR(store->ReadShardState(meta, 0, &state));
  Chunk chunk = BatchChunk(b);
  ShardState next = state;
  next.next_ordinal = (b + 1) * kBatchRows;
  next.live_rows = state.live_rows + kBatchRows;
  Store::ShardAppend append{0, {&chunk}, next};
  return store->CommitAppend(meta, next.next_ordinal, {append});
}

// What a store holds, read back in full.
struct Contents {
  uint32_t next_ordinal = 0;
  uint64_t live_rows = 0;
  std::vector<uint32_t> deleted;
  std::vector<int64_t> ids;
  std::vector<float> vectors;
  std::vector<Value> values;
  std::string setting;
  bool operator==(const Contents&) const = default;
};

Status ReadContents(Store* store, Contents* out) {
  CollectionMeta meta;
  SIEVE_RETURN_IF_ERROR(store->GetCollection("damaged", &meta));
  ShardState state;
  SIEVE_RETURN_IF_ERROR(store->ReadShardState(meta, 0, &state));
  out->next_ordinal = state.next_ordinal;
  out->live_rows = state.live_rows;
  for (uint32_t o : *state.deleted) out->deleted.push_back(o);
  SIEVE_RETURN_IF_ERROR(store->ScanChunks(meta, 0, kChunkAll, [&](Chunk&& c) {
    out->ids.insert(out->ids.end(), c.ids.begin(), c.ids.end());
    out->vectors.insert(out->vectors.end(), c.vectors.begin(), c.vectors.end());
    for (uint32_t r = 0; r < c.num_rows; ++r) {
      for (const Column& col : c.columns) out->values.push_back(col.Get(r));
    }
    return Status::OK();
  }));
  return store->GetSetting("planner/test", &out->setting);
}

// A store holding every kind of file: vector files ingested by bulk appends, blob files and
// table files of every family from a flush, and a WAL holding the last commits.
void BuildStore(const std::string& path) {
  StoreOptions bulk;
  bulk.vector_file_min_bytes = 0;
  {
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(bulk, path, &store).ok());
    CollectionMeta meta;
    ASSERT_TRUE(store->CreateCollection(Spec(), &meta).ok());
    ASSERT_TRUE(Append(store.get(), meta, 0).ok());
    ASSERT_TRUE(Append(store.get(), meta, 1).ok());
  }
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(StoreOptions(), path, &store).ok());
  CollectionMeta meta;
  ASSERT_TRUE(store->GetCollection("damaged", &meta).ok());
  ASSERT_TRUE(Append(store.get(), meta, 2).ok());
  ASSERT_TRUE(Append(store.get(), meta, 3).ok());
  ShardState state;
  ASSERT_TRUE(store->ReadShardState(meta, 0, &state).ok());
  auto deleted = std::make_shared<roaring::Roaring>();
  deleted->addRange(5, 25);
  state.deleted = deleted;
  state.live_rows = state.next_ordinal - 20;
  ASSERT_TRUE(store->CommitShardStates(meta, {{0, state}}).ok());
  ASSERT_TRUE(store->PutSetting("planner/test", "{\"x\": 1}").ok());
  ASSERT_TRUE(store->Flush().ok());
  // Left in the WAL only.
  ASSERT_TRUE(Append(store.get(), meta, 4).ok());
}

void FlipByte(const std::string& file, uint64_t offset) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x5a);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
}

enum class Kind { kTable, kBlob, kWal, kManifest, kLedger, kCurrent, kOther };

Kind KindOf(const std::string& name) {
  auto ends = [&](const char* s) {
    const std::string suffix = s;
    return name.size() >= suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends(".sst")) return Kind::kTable;
  if (ends(".blob")) return Kind::kBlob;
  if (ends(".log")) return Kind::kWal;
  if (name.rfind("MANIFEST-", 0) == 0) return Kind::kManifest;
  if (name == "SIEVE-LEDGER") return Kind::kLedger;
  if (name == "CURRENT") return Kind::kCurrent;
  return Kind::kOther;
}

TEST(CorruptionTest, EveryFlippedByteIsReportedOrHarmless) {
  test::ScratchDir dir;
  const std::string golden_path = dir.Join("golden");
  BuildStore(golden_path);
  if (HasFatalFailure()) return;
  Contents golden;
  {
    StoreOptions ro;
    ro.read_only = true;
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(ro, golden_path, &store).ok());
    ASSERT_TRUE(ReadContents(store.get(), &golden).ok());
    std::vector<std::string> problems;
    ASSERT_TRUE(store->CheckFormat(&problems).ok());
  }
  ASSERT_EQ(golden.next_ordinal, 5 * kBatchRows);

  std::map<Kind, int> files_of_kind;
  int flips = 0, reported = 0;
  for (const auto& entry : fs::directory_iterator(golden_path)) {
    const std::string name = entry.path().filename();
    if (name == "LOCK" || name.rfind("LOG", 0) == 0) continue;  // never read by the store
    const Kind kind = KindOf(name);
    ++files_of_kind[kind];
    const uint64_t size = fs::file_size(entry.path());
    if (size == 0) continue;
    std::vector<uint64_t> offsets = {0, size - 1, size / 2};
    for (int i = 1; i <= 12; ++i) offsets.push_back(size * i / 13);
    std::sort(offsets.begin(), offsets.end());
    offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
    for (uint64_t offset : offsets) {
      SCOPED_TRACE(name + " byte " + std::to_string(offset) + " of " + std::to_string(size));
      const std::string copy = dir.Join("copy");
      fs::remove_all(copy);
      fs::copy(golden_path, copy);
      FlipByte(copy + "/" + name, offset);
      ++flips;
      StoreOptions ro;
      ro.read_only = true;
      std::unique_ptr<Store> store;
      Status s = Store::Open(ro, copy, &store);
      bool detected = !s.ok();
      if (!detected) {
        std::vector<std::string> problems;
        s = store->CheckFormat(&problems);
        detected = !s.ok();
        if (detected) {
          EXPECT_FALSE(problems.empty()) << s.ToString();
        }
      }
      if (detected) {
        ++reported;
        // The report names what was wrong: a file, or the collection.
        EXPECT_TRUE(s.message().find(copy) != std::string::npos ||
                    s.message().find("damaged") != std::string::npos ||
                    s.message().find("CURRENT") != std::string::npos)
            << s.ToString();
        continue;
      }
      EXPECT_NE(kind, Kind::kTable) << "damage to a table file went unreported";
      EXPECT_NE(kind, Kind::kBlob) << "damage to a blob file went unreported";
      EXPECT_NE(kind, Kind::kLedger) << "damage to the ledger went unreported";
      // Unreported damage must be harmless: everything reads back as it was.
      Contents got;
      s = ReadContents(store.get(), &got);
      ASSERT_TRUE(s.ok()) << "check passed but reading failed: " << s.ToString();
      EXPECT_TRUE(got == golden) << "check passed but the contents changed";
    }
  }
  // The store really held every kind of file the test is about.
  EXPECT_GE(files_of_kind[Kind::kTable], 4);
  EXPECT_GE(files_of_kind[Kind::kBlob], 1);
  EXPECT_EQ(files_of_kind[Kind::kWal], 1);
  EXPECT_EQ(files_of_kind[Kind::kManifest], 1);
  EXPECT_EQ(files_of_kind[Kind::kLedger], 1);
  EXPECT_GT(reported, flips / 2);
}

}  // namespace
}  // namespace sieve
