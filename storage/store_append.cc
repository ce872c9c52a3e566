// Copyright 2026 The Sieve Authors.
//
// RocksStore's appends and shard-state commits (storage/rocks_store.h): vectors cut into stored
// chunks of at most kMaxStoredVectorBytes, written into the commit's batch or, for large
// appends, as vector files RocksDB ingests; the vectors of an append that never committed
// removed before the next one; every part validated before anything is written.

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/options.h>
#include <rocksdb/slice.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "storage/format.h"
#include "storage/ledger.h"
#include "storage/rocks_store.h"

namespace sieve {

namespace fmt = ::sieve::format;

void RocksStore::EncodeVectorPiece(const CollectionSpec& spec, const VectorPiece& piece,
                                   std::string* value) const {
  value->clear();
  fmt::EncodeVectorsHeader(piece.rows, spec.dim, spec.dtype, value);
  const size_t n = size_t{piece.rows} * spec.dim;
  if (spec.dtype == DType::kFloat32 && std::endian::native == std::endian::little) {
    // Float32 payload bytes are the floats themselves (validated by the caller).
    value->append(reinterpret_cast<const char*>(piece.data), n * sizeof(float));
  } else {
    (void)fmt::EncodeVectorsPayload(piece.data, piece.rows, spec.dim, spec.dtype, value);
  }
}

Status RocksStore::RemoveOrphanVectors(const CollectionMeta& meta, uint32_t shard,
                                       uint32_t space, uint32_t next_ordinal) {
  const std::string begin = fmt::ChunkKey(fmt::kVectorsTag, space, shard, next_ordinal);
  const std::string end = fmt::PrefixSuccessor(fmt::ChunkPrefix(fmt::kVectorsTag, space, shard));
  const rocksdb::Slice end_slice(end);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &end_slice;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, vectors_));
  it->Seek(begin);
  if (!it->Valid()) {
    return FromRocks(it->status(), "looking for uncommitted vectors of " + Where(meta, shard));
  }
  it.reset();
  rocksdb::WriteBatch batch;
  SIEVE_RETURN_IF_ERROR(
      FromRocks(batch.DeleteRange(vectors_, begin, end), Where(meta, shard, next_ordinal)));
  SIEVE_RETURN_IF_ERROR(
      WriteSynced(&batch, "removing uncommitted vectors of " + Where(meta, shard, next_ordinal)));
  rocksdb::FlushOptions fo;
  fo.wait = true;
  rocksdb::Status rs = db_->Flush(fo, vectors_);
  if (!rs.ok()) write_failed_.store(true);
  return FromRocks(rs, "removing uncommitted vectors of " + Where(meta, shard, next_ordinal));
}

Status RocksStore::IngestVectorFiles(const CollectionMeta& meta,
                                     const std::vector<std::vector<VectorPiece>>& shard_pieces) {
  rocksdb::Env* env = vector_file_options_.env;
  std::vector<std::string> files;
  // Until the ingestion is attempted the files are ours to remove. After a successful one
  // RocksDB has moved them (hard-linked, then unlinked). After a failed one they stay: RocksDB
  // 7.8 can record a file in the MANIFEST and then delete its link when the MANIFEST's sync
  // fails, and the next open puts the link back from here (RestoreIngestedFile); the open
  // after that removes them. A file left by a crash is removed by the next open too.
  bool attempted = false;
  struct Cleanup {
    rocksdb::Env* env;
    std::vector<std::string>* files;
    const bool* attempted;
    ~Cleanup() {
      if (*attempted) return;
      for (const std::string& f : *files) {
        if (env->FileExists(f).ok()) (void)env->DeleteFile(f);
      }
    }
  } cleanup{env, &files, &attempted};
  const std::string where = "writing vectors of " + Where(meta);
  std::string value;
  rocksdb::IngestExternalFileArg arg;
  arg.column_family = vectors_;
  for (const std::vector<VectorPiece>& pieces : shard_pieces) {
    if (pieces.empty()) continue;
    const uint64_t stamp =
        static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    files.push_back(path_ + "/" + kVectorFilePrefix + Num(stamp) + "-" +
                    Num(next_file_number_.fetch_add(1)) + ".sst");
    // invalidate_page_cache = false: the first load after an ingest reads these pages.
    rocksdb::SstFileWriter writer(rocksdb::EnvOptions(vector_file_options_), vector_file_options_,
                                  vectors_, /*invalidate_page_cache=*/false);
    SIEVE_RETURN_IF_ERROR(FromRocks(writer.Open(files.back()), where + " to " + files.back()));
    for (const VectorPiece& piece : pieces) {
      EncodeVectorPiece(meta.spec, piece, &value);
      SIEVE_RETURN_IF_ERROR(FromRocks(writer.Put(piece.key, value), where + " to " + files.back()));
    }
    // Finish syncs the file before closing it, and computes its whole-file checksum.
    rocksdb::ExternalSstFileInfo info;
    SIEVE_RETURN_IF_ERROR(FromRocks(writer.Finish(&info), where + " to " + files.back()));
    arg.external_files.push_back(files.back());
    arg.files_checksums.push_back(info.file_checksum);
    arg.files_checksum_func_names.push_back(info.file_checksum_func_name);
  }
  if (files.empty()) return Status::OK();
  arg.options.move_files = true;
  // The global sequence number, when one is needed, lives in the MANIFEST; rewriting it into the
  // file would only add a write.
  arg.options.write_global_seqno = false;
  arg.options.verify_checksums_before_ingest = false;
  // The checksum SstFileWriter computed is recorded as it is, without reading the file again.
  arg.options.verify_file_checksum = false;
  attempted = true;
  rocksdb::Status rs = db_->IngestExternalFiles({arg});
  if (!rs.ok()) write_failed_.store(true);
  return FromRocks(rs, "ingesting vectors of " + Where(meta) + " into " + path_);
}

Status RocksStore::DoCommitAppend(const CollectionMeta& meta, int64_t next_auto_id,
                                  const std::vector<ShardAppend>& appends) {
  SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly("appending to " + Where(meta)));
  SIEVE_RETURN_IF_ERROR(RefuseWhileDiskFull("appending to " + Where(meta)));
  CollectionMeta current;
  SIEVE_RETURN_IF_ERROR(ReadCurrentMeta(meta, &current));
  const CollectionSpec& spec = current.spec;
  if (next_auto_id < current.next_auto_id) {
    return Status::InvalidArgument(Where(current) + ": next_auto_id " + Num(next_auto_id) +
                                   " would go below the stored " + Num(current.next_auto_id));
  }
  // Large chunks are stored as several smaller ones (see kMaxStoredVectorBytes).
  const size_t row_bytes = size_t{spec.dim} * (spec.dtype == DType::kFloat16 ? 2 : 4);
  const uint32_t piece_rows =
      static_cast<uint32_t>(std::max<size_t>(1, kMaxStoredVectorBytes / row_bytes));
  // Validate everything and stage the small parts before anything is written.
  rocksdb::WriteBatch batch;
  std::set<uint32_t> seen;
  std::string payload, state_value;
  std::vector<std::pair<uint32_t, uint32_t>> shard_starts;  // (shard, stored next_ordinal)
  std::map<uint32_t, std::vector<VectorPiece>> pieces_by_shard;
  std::map<uint32_t, uint32_t> spaces;  // shard → key space
  size_t vector_bytes = 0;
  for (const ShardAppend& a : appends) {
    if (a.shard >= spec.shards) {
      return Status::InvalidArgument(Where(current) + " has " + Num(spec.shards) +
                                     " shards, no shard " + Num(a.shard));
    }
    if (!seen.insert(a.shard).second) {
      return Status::InvalidArgument(Where(current, a.shard) + " appears twice in one append");
    }
    ShardState state;
    SIEVE_RETURN_IF_ERROR(DoReadShardState(current, a.shard, nullptr, &state));
    const uint32_t space = SpaceOf(current, state);
    if (SpaceOf(current, a.new_state) != space) {
      return Status::InvalidArgument(Where(current, a.shard) +
                                     ": the new state names another key space");
    }
    shard_starts.emplace_back(a.shard, state.next_ordinal);
    spaces[a.shard] = space;
    std::vector<VectorPiece>& pieces = pieces_by_shard[a.shard];
    uint64_t next = state.next_ordinal;
    for (const Chunk* chunk : a.chunks) {
      if (chunk == nullptr) {
        return Status::InvalidArgument(Where(current, a.shard) + ": null chunk");
      }
      const std::string where = Where(current, a.shard, chunk->first_ordinal);
      if (chunk->first_ordinal != next) {
        return Status::InvalidArgument(where + ": chunk does not continue the shard, which " +
                                       "ends at ordinal " + Num(next));
      }
      const uint32_t n = chunk->num_rows;
      if (n == 0) return Status::InvalidArgument(where + ": empty chunk");
      if (next + n > UINT32_MAX) {
        return Status::InvalidArgument(where + ": " + Num(n) +
                                       " rows would overflow the 32-bit ordinals");
      }
      if (chunk->ids.size() != n) {
        return Status::InvalidArgument(where + ": " + Num(chunk->ids.size()) + " ids for " +
                                       Num(n) + " rows");
      }
      if (chunk->vectors.size() != size_t{n} * spec.dim) {
        return Status::InvalidArgument(where + ": " + Num(chunk->vectors.size()) +
                                       " vector components for " + Num(n) + " rows of dim " +
                                       Num(spec.dim));
      }
      Status s = fmt::CheckColumns(chunk->columns, spec.attributes, n);
      if (!s.ok()) return s.WithContext(where);

      s = fmt::EncodeVectorsPayload(chunk->vectors.data(), n, spec.dim, spec.dtype, nullptr);
      if (!s.ok()) return s.WithContext(where);
      for (uint32_t off = 0; off < n; off += piece_rows) {
        const uint32_t m = std::min(piece_rows, n - off);
        const uint32_t ordinal = static_cast<uint32_t>(next) + off;
        pieces.push_back(VectorPiece{fmt::ChunkKey(fmt::kVectorsTag, space, a.shard, ordinal),
                                     m, chunk->vectors.data() + size_t{off} * spec.dim});
        vector_bytes += size_t{m} * row_bytes;

        payload.clear();
        fmt::EncodeIdsHeader(m, &payload);
        for (uint32_t r = off; r < off + m; ++r) {
          fmt::PutFixed64(&payload, static_cast<uint64_t>(chunk->ids[r]));
        }
        SIEVE_RETURN_IF_ERROR(FromRocks(
            batch.Put(rows_, fmt::ChunkKey(fmt::kIdsTag, space, a.shard, ordinal), payload),
            where));

        payload.clear();
        fmt::EncodeColumns(chunk->columns, off, m, &payload);
        SIEVE_RETURN_IF_ERROR(FromRocks(
            batch.Put(rows_, fmt::ChunkKey(fmt::kColumnsTag, space, a.shard, ordinal),
                      payload),
            where));
      }
      next += n;
    }
    if (a.new_state.next_ordinal != next) {
      return Status::InvalidArgument(Where(current, a.shard) + ": new next_ordinal " +
                                     Num(a.new_state.next_ordinal) +
                                     " differs from the end of the appended chunks, " + Num(next));
    }
    Status s = fmt::CheckShardState(a.new_state);
    if (!s.ok()) return s.WithContext(Where(current, a.shard) + ": new state");
    fmt::EncodeShardState(a.new_state, &state_value);
    SIEVE_RETURN_IF_ERROR(
        FromRocks(batch.Put(meta_, fmt::ShardStateKey(current.id, a.shard), state_value),
                  Where(current, a.shard)));
  }
  current.next_auto_id = next_auto_id;
  SIEVE_RETURN_IF_ERROR(FromRocks(
      batch.Put(meta_, fmt::CollectionKey(spec.name), fmt::EncodeMeta(current)), Where(current)));

  // Chunks of an earlier append that ingested its vectors but never committed would collide
  // with (or, at other boundaries, overlap) this append's.
  for (const auto& [shard, start] : shard_starts) {
    SIEVE_RETURN_IF_ERROR(RemoveOrphanVectors(current, shard, spaces[shard], start));
  }
  if (vector_bytes > 0 && vector_bytes >= vector_file_min_bytes_) {
    // Vectors first, as an invisible file; then the commit that makes them visible.
    std::vector<std::vector<VectorPiece>> shard_pieces;
    for (auto& [shard, pieces] : pieces_by_shard) shard_pieces.push_back(std::move(pieces));
    SIEVE_RETURN_IF_ERROR(IngestVectorFiles(current, shard_pieces));
  } else {
    std::string value;
    for (const auto& [shard, pieces] : pieces_by_shard) {
      for (const VectorPiece& piece : pieces) {
        const std::string where = Where(current, shard);
        if (spec.dtype == DType::kFloat32 && std::endian::native == std::endian::little) {
          // Float32 payload bytes are the floats themselves: hand them to the batch uncopied.
          std::string header;
          fmt::EncodeVectorsHeader(piece.rows, spec.dim, spec.dtype, &header);
          rocksdb::Slice key(piece.key);
          rocksdb::Slice parts[2] = {rocksdb::Slice(header),
                                     rocksdb::Slice(reinterpret_cast<const char*>(piece.data),
                                                    size_t{piece.rows} * spec.dim * sizeof(float))};
          SIEVE_RETURN_IF_ERROR(FromRocks(
              batch.Put(vectors_, rocksdb::SliceParts(&key, 1), rocksdb::SliceParts(parts, 2)),
              where));
        } else {
          EncodeVectorPiece(spec, piece, &value);
          SIEVE_RETURN_IF_ERROR(FromRocks(batch.Put(vectors_, piece.key, value), where));
        }
      }
    }
  }
  LedgerRecord record;
  record.kind = LedgerKind::kAppend;
  record.collection_id = current.id;
  record.name = spec.name;
  for (const auto& [shard, start] : shard_starts) {
    for (const ShardAppend& a : appends) {
      if (a.shard != shard) continue;
      record.shards.push_back(
          LedgerShard{shard, start, a.new_state.next_ordinal, a.new_state.live_rows});
    }
  }
  return Commit(&batch, std::move(record), "appending to " + Where(current));
}

Status RocksStore::DoCommitShardStates(const CollectionMeta& meta,
                                       const std::vector<std::pair<uint32_t, ShardState>>& states) {
  SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly("updating shard states of " + Where(meta)));
  SIEVE_RETURN_IF_ERROR(RefuseWhileDiskFull("updating shard states of " + Where(meta)));
  CollectionMeta current;
  SIEVE_RETURN_IF_ERROR(ReadCurrentMeta(meta, &current));
  rocksdb::WriteBatch batch;
  std::set<uint32_t> seen;
  std::string value;
  for (const auto& [shard, state] : states) {
    if (shard >= current.spec.shards) {
      return Status::InvalidArgument(Where(current) + " has " + Num(current.spec.shards) +
                                     " shards, no shard " + Num(shard));
    }
    if (!seen.insert(shard).second) {
      return Status::InvalidArgument(Where(current, shard) + " appears twice in one commit");
    }
    ShardState stored;
    SIEVE_RETURN_IF_ERROR(DoReadShardState(current, shard, nullptr, &stored));
    if (SpaceOf(current, state) != SpaceOf(current, stored)) {
      return Status::InvalidArgument(Where(current, shard) +
                                     ": the new state names another key space");
    }
    if (state.next_ordinal != stored.next_ordinal) {
      return Status::InvalidArgument(Where(current, shard) + ": next_ordinal " +
                                     Num(state.next_ordinal) + " differs from the stored " +
                                     Num(stored.next_ordinal) + " (only appends may change it)");
    }
    Status s = fmt::CheckShardState(state);
    if (!s.ok()) return s.WithContext(Where(current, shard));
    fmt::EncodeShardState(state, &value);
    SIEVE_RETURN_IF_ERROR(FromRocks(batch.Put(meta_, fmt::ShardStateKey(current.id, shard), value),
                                    Where(current, shard)));
  }
  LedgerRecord record;
  record.kind = LedgerKind::kStates;
  record.collection_id = current.id;
  record.name = current.spec.name;
  for (const auto& [shard, state] : states) {
    record.shards.push_back(
        LedgerShard{shard, state.next_ordinal, state.next_ordinal, state.live_rows});
  }
  return Commit(&batch, std::move(record), "updating shard states of " + Where(current));
}

}  // namespace sieve
