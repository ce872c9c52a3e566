// Copyright 2026 The Sieve Authors.
//
// ShardIndex is the in-memory image of one shard, built from storage: its vectors, user ids,
// attribute indexes and deleted rows. Loading reads the shard's chunks in large sequential
// blocks.
//
// Snapshots: CopyForWrite gives a copy for a writer to change while readers keep this image
// unchanged (DB::GetSnapshot). The copy shares the vectors and owns everything else.
//
// Thread-safety: mutation (Load, ApplyChunk, SetDeleted) needs exclusive access; const methods
// may run concurrently. An image that shares its vectors with a copy is read under the same
// lock as the copy is changed under (the collection's).

#ifndef SIEVE_INDEX_SHARD_INDEX_H_
#define SIEVE_INDEX_SHARD_INDEX_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <unordered_map>
#include <vector>

#include "index/attribute_index.h"
#include "index/row_set.h"
#include "index/text_index.h"
#include "index/vector_arena.h"
#include "sieve/status.h"
#include "storage/store.h"

namespace sieve {

class ShardIndex {
 public:
  ShardIndex(const CollectionSpec& spec, uint32_t shard);
  ShardIndex(const ShardIndex&) = delete;
  ShardIndex& operator=(const ShardIndex&) = delete;

  uint32_t shard() const { return shard_; }
  // Rows ever appended (ordinals are [0, rows())).
  uint32_t rows() const { return static_cast<uint32_t>(ids_.size()); }
  // False for an image loaded without its vectors (Load's `vectors`): vectors() is then empty
  // and ApplyChunk keeps none.
  bool has_vectors() const { return has_vectors_; }
  uint64_t live_rows() const { return rows() - deleted_.Cardinality(); }

  const VectorArena& vectors() const { return *vectors_; }
  const AttributeIndex& attribute(size_t i) const { return attributes_[i]; }
  size_t num_attributes() const { return attributes_.size(); }
  // The inverted index of attribute i when it is a text attribute, else null.
  const TextIndex* text(size_t i) const { return text_[i].get(); }
  const RowSet& deleted() const { return deleted_; }
  // [0, rows()) minus deleted.
  RowSet Live() const;

  int64_t id(uint32_t ordinal) const { return ids_[ordinal]; }
  const std::vector<int64_t>& ids() const { return ids_; }
  // The ordinal of the live row with this id, or false.
  bool FindLive(int64_t id, uint32_t* ordinal) const;

  // The live rows as (id, ordinal) pairs in ascending id order: built on first use after a
  // change and kept until the next one. Safe to call concurrently with other const methods.
  std::shared_ptr<const std::vector<std::pair<int64_t, uint32_t>>> SortedLive() const;
  // Live rows with lo <= id <= hi.
  RowSet IdRange(int64_t lo, int64_t hi) const;

  // A copy of this image that a writer may change while this one stays as it is: the ids,
  // attribute indexes and deleted rows are copied (O(rows)); the vectors are shared, and the
  // copy's appends never move or change the rows this image reads (VectorArena::HasRoomFor).
  // The copy has this image's instance() and version(), which its first change increases past
  // any this image will have (this one is not changed again), so compiled-filter caches stay
  // right.
  std::shared_ptr<ShardIndex> CopyForWrite() const;

  // Reads the shard's state and chunks from the store (without the vector payload unless
  // `vectors`: ids and attributes are enough for counts, gets and scans). Corruption when they
  // disagree.
  Status Load(Store* store, const CollectionMeta& meta, bool vectors = true);
  // Appends a chunk whose first ordinal is rows(). A text column's rows join the attribute's
  // TextIndex through its segment (built here when the column's is not current; throws
  // std::bad_alloc when that analysis fails, which only an allocation failure makes it do).
  void ApplyChunk(const Chunk& chunk);
  // Replaces the deleted set (a superset of the old one) and drops those ids from the map.
  void SetDeleted(const RowSet& deleted);
  // Replaces one row's value of attribute `attr` (see AttributeIndex::Set and, for a text
  // attribute, TextIndex::Set, which may throw std::bad_alloc).
  void SetValue(size_t attr, uint32_t ordinal, const Value& value);

  // What a filter compiled over this image depends on: a number no other ShardIndex of the
  // process has had, and one that every mutation above (Load included) increases. Caches of
  // compiled filters key on the two.
  uint64_t instance() const { return instance_; }
  uint64_t version() const { return version_; }

 private:
  struct CopyTag {};
  ShardIndex(const ShardIndex& other, CopyTag);

  uint64_t instance_;
  uint64_t version_ = 0;
  uint32_t shard_;
  std::shared_ptr<VectorArena> vectors_;
  bool has_vectors_ = true;
  std::vector<AttributeIndex> attributes_;
  std::vector<std::unique_ptr<TextIndex>> text_;  // per attribute; null unless text
  std::vector<int64_t> ids_;
  std::unordered_map<int64_t, uint32_t> live_ids_;
  RowSet deleted_;
  mutable std::mutex sorted_mu_;
  mutable std::shared_ptr<const std::vector<std::pair<int64_t, uint32_t>>> sorted_live_;
};

}  // namespace sieve

#endif  // SIEVE_INDEX_SHARD_INDEX_H_
