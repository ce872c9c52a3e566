// Copyright 2026 The Sieve Authors.
//
// RocksStore::DoScanChunks (storage/rocks_store.h): a shard's chunks in ordinal order, one
// iterator a part (vectors, ids, attributes) over one snapshot, each chunk's parts checked
// against each other before it is decoded and handed on.

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/slice.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "storage/format.h"
#include "storage/rocks_store.h"

namespace sieve {

namespace {

namespace fmt = ::sieve::format;

// An iterator over the keys of one part of one shard, in ordinal order.
struct PartCursor {
  PartCursor(char t, rocksdb::ColumnFamilyHandle* f) : tag(t), family(f) {}

  char tag = 0;
  rocksdb::ColumnFamilyHandle* family = nullptr;
  std::string lower;
  std::string upper;
  rocksdb::Slice upper_slice;
  std::unique_ptr<rocksdb::Iterator> it;

  // With `end_ordinal`, stops before the chunk key of that ordinal.
  void Open(rocksdb::DB* db, const rocksdb::Snapshot* snapshot, bool bulk, uint32_t collection_id,
            uint32_t shard, std::optional<uint32_t> end_ordinal) {
    lower = fmt::ChunkPrefix(tag, collection_id, shard);
    upper = end_ordinal ? fmt::ChunkKey(tag, collection_id, shard, *end_ordinal)
                        : fmt::PrefixSuccessor(lower);
    upper_slice = rocksdb::Slice(upper);
    rocksdb::ReadOptions ro;
    ro.snapshot = snapshot;
    ro.readahead_size = kScanReadahead;
    ro.iterate_upper_bound = &upper_slice;
    if (bulk) {
      // Vectors are read once into the index; caching them would only evict useful blocks.
      ro.fill_cache = false;
      // Vector blocks are ~8 MiB each: RocksDB's readahead buffer would only add a copy.
      ro.readahead_size = 0;
    }
    // Checksums stay verified (the default): a damaged block is reported, never decoded (a
    // damaged key or length would trip one of the packaged RocksDB's assertions).
    it.reset(db->NewIterator(ro, family));
    it->Seek(lower);
  }
  uint32_t Ordinal() const { return fmt::GetFixed32BE(it->key().data() + 9); }
  bool WellFormed() const { return it->key().size() == fmt::kChunkKeySize; }
};

}  // namespace

const char* PartName(char tag) {
  switch (tag) {
    case fmt::kVectorsTag:
      return "vectors";
    case fmt::kIdsTag:
      return "ids";
    case fmt::kColumnsTag:
      return "attributes";
  }
  return "unknown part";
}

Status RocksStore::DoScanChunks(const CollectionMeta& meta, uint32_t shard, uint32_t parts,
                                const std::function<Status(Chunk&&)>& visit) {
  if (shard >= meta.spec.shards) {
    return Status::InvalidArgument(Where(meta) + " has " + Num(meta.spec.shards) +
                                   " shards, no shard " + Num(shard));
  }
  SnapshotGuard snapshot(db_.get());
  // Vector chunks at or beyond next_ordinal belong to an append that has not committed (or
  // never will): the scan stops before them.
  ShardState state;
  SIEVE_RETURN_IF_ERROR(DoReadShardState(meta, shard, snapshot.get(), &state));
  // Without any part requested the (small) id values still enumerate the chunks.
  const bool want_ids = (parts & kChunkIds) || !(parts & (kChunkVectors | kChunkColumns));
  std::vector<PartCursor> cursors;
  cursors.reserve(3);
  if (parts & kChunkVectors) cursors.emplace_back(fmt::kVectorsTag, vectors_);
  if (want_ids) cursors.emplace_back(fmt::kIdsTag, rows_);
  if (parts & kChunkColumns) cursors.emplace_back(fmt::kColumnsTag, rows_);
  for (PartCursor& c : cursors) {
    const bool vectors = c.tag == fmt::kVectorsTag;
    c.Open(db_.get(), snapshot.get(), /*bulk=*/vectors, SpaceOf(meta, state), shard,
           vectors ? std::optional<uint32_t>(state.next_ordinal) : std::nullopt);
  }
  PartCursor& driver = cursors.front();
  uint32_t expected = 0;
  while (driver.it->Valid()) {
    if (!driver.WellFormed()) {
      return Status::Corruption(Where(meta, shard) + ": malformed " + PartName(driver.tag) +
                                " key of " + Num(driver.it->key().size()) + " bytes");
    }
    Chunk chunk;
    chunk.first_ordinal = driver.Ordinal();
    const std::string where = Where(meta, shard, chunk.first_ordinal);
    if (chunk.first_ordinal != expected) {
      return Status::Corruption(where + ": chunk found where ordinal " + Num(expected) +
                                " was expected");
    }
    bool have_rows = false;
    for (PartCursor& c : cursors) {
      if (!c.it->Valid()) {
        SIEVE_RETURN_IF_ERROR(FromRocks(c.it->status(), "scanning " + where));
        return Status::Corruption(where + ": the " + PartName(c.tag) + " chunk is missing");
      }
      if (!c.WellFormed() || c.Ordinal() != chunk.first_ordinal) {
        return Status::Corruption(where + ": the " + PartName(c.tag) +
                                  " chunks do not line up with the " + PartName(driver.tag) +
                                  " chunks");
      }
      uint32_t rows = 0;
      Status s;
      const std::string_view value = c.it->value().ToStringView();
      switch (c.tag) {
        case fmt::kVectorsTag:
          s = fmt::DecodeVectors(value, meta.spec.dim, meta.spec.dtype, &rows, &chunk.vectors);
          break;
        case fmt::kIdsTag:
          s = fmt::DecodeIds(value, &rows, (parts & kChunkIds) ? &chunk.ids : nullptr);
          break;
        case fmt::kColumnsTag:
          s = fmt::DecodeColumns(value, meta.spec.attributes, &rows, &chunk.columns);
          break;
      }
      if (!s.ok()) return s.WithContext(where + " " + PartName(c.tag));
      if (have_rows && rows != chunk.num_rows) {
        return Status::Corruption(where + ": the " + PartName(c.tag) + " chunk has " + Num(rows) +
                                  " rows, the " + PartName(driver.tag) + " chunk has " +
                                  Num(chunk.num_rows));
      }
      if (rows == 0) return Status::Corruption(where + ": empty " + PartName(c.tag) + " chunk");
      chunk.num_rows = rows;
      have_rows = true;
    }
    expected = chunk.first_ordinal + chunk.num_rows;
    SIEVE_RETURN_IF_ERROR(visit(std::move(chunk)));
    for (PartCursor& c : cursors) c.it->Next();
  }
  for (PartCursor& c : cursors) {
    SIEVE_RETURN_IF_ERROR(FromRocks(c.it->status(), "scanning " + Where(meta, shard)));
    if (c.it->Valid()) {
      return Status::Corruption(Where(meta, shard, c.Ordinal()) + ": the " + PartName(c.tag) +
                                " chunk has no " + PartName(driver.tag) + " chunk");
    }
  }
  return Status::OK();
}

}  // namespace sieve
