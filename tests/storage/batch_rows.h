// Copyright 2026 The Sieve Authors.
//
// Rows the storage tests commit straight through Store, a batch at a time: batch b holds ids
// [b * kBatchRows, (b + 1) * kBatchRows) at the same ordinals of shard 0, vectors of kBatchDim
// components drawn from seed b + 1, n = 2 * id and tags of r % 3 "x"s. store_fault_test.cc and
// backup_test.cc check what survives a fault or a backup against it.

#ifndef SIEVE_TESTS_STORAGE_BATCH_ROWS_H_
#define SIEVE_TESTS_STORAGE_BATCH_ROWS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "storage/store.h"
#include "tests/testutil.h"

namespace sieve::test {

inline constexpr uint32_t kBatchDim = 16;
inline constexpr uint32_t kBatchRows = 50;

// One shard, dim kBatchDim, attributes n (int) and tags.
inline CollectionSpec BatchSpec(const std::string& name) {
  CollectionSpec spec;
  spec.name = name;
  spec.dim = kBatchDim;
  spec.attributes = {{"n", AttrType::kInt}, {"tags", AttrType::kTags}};
  return spec;
}

inline Chunk BatchChunk(uint32_t b) {
  Chunk chunk;
  chunk.first_ordinal = b * kBatchRows;
  chunk.num_rows = kBatchRows;
  chunk.vectors = RandomVectors(kBatchRows, kBatchDim, b + 1);
  Column n, tags;
  n.type = AttrType::kInt;
  tags.type = AttrType::kTags;
  for (uint32_t r = 0; r < kBatchRows; ++r) {
    const int64_t id = int64_t{b} * kBatchRows + r;
    chunk.ids.push_back(id);
    n.Append(Value(id * 2));
    tags.Append(Value(std::vector<std::string>(r % 3, "x")));
  }
  chunk.columns = {std::move(n), std::move(tags)};
  return chunk;
}

// Commits batch b as the shard's next rows (its state then holds (b + 1) * kBatchRows rows).
inline Status CommitBatch(Store* store, const CollectionMeta& meta, uint32_t b) {
  Chunk chunk = BatchChunk(b);
  const uint32_t end = (b + 1) * kBatchRows;
  Store::ShardAppend append{0, {&chunk}, ShardState{end, end, nullptr}};
  return store->CommitAppend(meta, end, {append});
}

}  // namespace sieve::test

#endif  // SIEVE_TESTS_STORAGE_BATCH_ROWS_H_
