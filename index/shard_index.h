// Copyright 2026 The Sieve Authors.
//
// ShardIndex is the in-memory image of one shard, built from storage: its vectors, user ids,
// attribute indexes and deleted rows. Loading reads the shard's chunks in large sequential
// blocks.
//
// Thread-safety: mutation (Load, ApplyChunk, SetDeleted) needs exclusive access; const methods
// may run concurrently.

#ifndef SIEVE_INDEX_SHARD_INDEX_H_
#define SIEVE_INDEX_SHARD_INDEX_H_

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "index/attribute_index.h"
#include "index/row_set.h"
#include "index/vector_arena.h"
#include "sieve/status.h"
#include "storage/store.h"

namespace sieve {

class ShardIndex {
 public:
  ShardIndex(const CollectionSpec& spec, uint32_t shard);

  uint32_t shard() const { return shard_; }
  // Rows ever appended (ordinals are [0, rows())).
  uint32_t rows() const { return vectors_.rows(); }
  uint64_t live_rows() const { return rows() - deleted_.Cardinality(); }

  const VectorArena& vectors() const { return vectors_; }
  const AttributeIndex& attribute(size_t i) const { return attributes_[i]; }
  size_t num_attributes() const { return attributes_.size(); }
  const RowSet& deleted() const { return deleted_; }
  // [0, rows()) minus deleted.
  RowSet Live() const;

  int64_t id(uint32_t ordinal) const { return ids_[ordinal]; }
  const std::vector<int64_t>& ids() const { return ids_; }
  // The ordinal of the live row with this id, or false.
  bool FindLive(int64_t id, uint32_t* ordinal) const;

  // Reads the shard's state and chunks from the store. Corruption when they disagree.
  Status Load(Store* store, const CollectionMeta& meta);
  // Appends a chunk whose first ordinal is rows().
  void ApplyChunk(const Chunk& chunk);
  // Replaces the deleted set (a superset of the old one) and drops those ids from the map.
  void SetDeleted(const RowSet& deleted);

 private:
  uint32_t shard_;
  VectorArena vectors_;
  std::vector<AttributeIndex> attributes_;
  std::vector<int64_t> ids_;
  std::unordered_map<int64_t, uint32_t> live_ids_;
  RowSet deleted_;
};

}  // namespace sieve

#endif  // SIEVE_INDEX_SHARD_INDEX_H_
