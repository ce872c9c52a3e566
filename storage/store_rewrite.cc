// Copyright 2026 The Sieve Authors.
//
// RocksStore's commits that replace stored rows rather than append them: dropping a
// collection, replacing attribute columns, and rewriting a shard into a fresh key space
// (compaction). FORMAT.md, "Key spaces".

#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/sst_file_writer.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "storage/format.h"
#include "storage/roaring.h"
#include "storage/rocks_store.h"

namespace sieve {

namespace {

namespace fmt = ::sieve::format;

constexpr char kRewriteFilePrefix[] = "sieve-vectors-rewrite-";

// The key range [begin, end) of one part of one shard in one key space.
std::pair<std::string, std::string> PartRange(char tag, uint32_t space, uint32_t shard) {
  std::string begin = fmt::ChunkPrefix(tag, space, shard);
  std::string end = fmt::PrefixSuccessor(begin);
  return {std::move(begin), std::move(end)};
}

}  // namespace

// Store::ShardRewrite over RocksDB: the new chunks go to three SST files (vectors, ids,
// attributes) under the fresh key space, ingested and made live by one commit.
class RocksShardRewrite final : public Store::ShardRewrite {
 public:
  RocksShardRewrite(RocksStore* store, CollectionMeta meta, uint32_t shard, uint32_t space,
                    uint32_t old_space, uint32_t old_next_ordinal)
      : store_(store),
        meta_(std::move(meta)),
        shard_(shard),
        space_(space),
        old_space_(old_space),
        old_next_ordinal_(old_next_ordinal) {}

  ~RocksShardRewrite() override {
    for (Part& p : parts_) p.writer.reset();
    if (!committed_) {
      for (Part& p : parts_) {
        if (!p.path.empty()) (void)store_->env()->DeleteFile(p.path);
      }
      (void)store_->WithDb("abandoning a compaction", [&] {
        return store_->RemoveSpace(space_, shard_, /*delete_marker=*/true);
      });
    }
  }

  Status Append(const Chunk& chunk) override {
    const std::string where = Where(meta_, shard_, chunk.first_ordinal);
    if (committed_) return Status::InvalidArgument(where + ": the rewrite has committed");
    if (chunk.first_ordinal != next_) {
      return Status::InvalidArgument(where + ": chunk does not continue the rewrite, which ends "
                                             "at ordinal " + Num(next_));
    }
    const uint32_t n = chunk.num_rows;
    const CollectionSpec& spec = meta_.spec;
    if (n == 0 || chunk.ids.size() != n || chunk.vectors.size() != size_t{n} * spec.dim) {
      return Status::InvalidArgument(where + ": chunk sizes disagree with its " + Num(n) + " rows");
    }
    SIEVE_RETURN_IF_ERROR(fmt::CheckColumns(chunk.columns, spec.attributes, n).WithContext(where));
    const size_t row_bytes = size_t{spec.dim} * (spec.dtype == DType::kFloat16 ? 2 : 4);
    const uint32_t piece_rows =
        static_cast<uint32_t>(std::max<size_t>(1, kMaxStoredVectorBytes / row_bytes));
    std::string value;
    for (uint32_t off = 0; off < n; off += piece_rows) {
      const uint32_t m = std::min(piece_rows, n - off);
      const uint32_t ordinal = next_ + off;
      value.clear();
      fmt::EncodeVectorsHeader(m, spec.dim, spec.dtype, &value);
      SIEVE_RETURN_IF_ERROR(fmt::EncodeVectorsPayload(chunk.vectors.data() + size_t{off} * spec.dim,
                                                      m, spec.dim, spec.dtype, &value)
                                .WithContext(where));
      SIEVE_RETURN_IF_ERROR(Put(kVectors, fmt::kVectorsTag, ordinal, value));
      value.clear();
      fmt::EncodeIdsHeader(m, &value);
      for (uint32_t r = off; r < off + m; ++r) {
        fmt::PutFixed64(&value, static_cast<uint64_t>(chunk.ids[r]));
      }
      SIEVE_RETURN_IF_ERROR(Put(kIds, fmt::kIdsTag, ordinal, value));
      value.clear();
      fmt::EncodeColumns(chunk.columns, off, m, &value);
      SIEVE_RETURN_IF_ERROR(Put(kColumns, fmt::kColumnsTag, ordinal, value));
    }
    next_ += n;
    return Status::OK();
  }

  Status Commit(const ShardState& state) override {
    if (committed_) return Status::InvalidArgument("the rewrite has committed already");
    return store_->WithDb("committing a compaction", [&]() -> Status {
      const std::string where = Where(meta_, shard_);
      if (state.next_ordinal != next_) {
        return Status::InvalidArgument(where + ": state's next_ordinal " +
                                       Num(state.next_ordinal) + " differs from the " +
                                       Num(next_) + " rows rewritten");
      }
      ShardState next = state;
      next.space = space_;
      if (!next.deleted) next.deleted = std::make_shared<roaring::Roaring>();
      SIEVE_RETURN_IF_ERROR(fmt::CheckShardState(next).WithContext(where));
      // Nothing may have been appended or deleted since the rewrite began.
      ShardState stored;
      SIEVE_RETURN_IF_ERROR(store_->DoReadShardState(meta_, shard_, nullptr, &stored));
      if (SpaceOf(meta_, stored) != old_space_ || stored.next_ordinal != old_next_ordinal_) {
        return Status::InvalidArgument(where + " changed while it was being rewritten");
      }
      // The new chunks, as invisible files in every family at once.
      std::vector<rocksdb::IngestExternalFileArg> args;
      for (int p = 0; p < kParts; ++p) {
        Part& part = parts_[p];
        if (part.writer == nullptr) continue;
        rocksdb::ExternalSstFileInfo info;
        SIEVE_RETURN_IF_ERROR(FromRocks(part.writer->Finish(&info), "writing " + part.path));
        part.writer.reset();
        rocksdb::IngestExternalFileArg arg;
        arg.column_family = p == kVectors ? store_->vectors_family() : store_->rows_family();
        arg.external_files = {part.path};
        arg.files_checksums = {info.file_checksum};
        arg.files_checksum_func_names = {info.file_checksum_func_name};
        arg.options.move_files = true;
        arg.options.write_global_seqno = false;
        arg.options.verify_checksums_before_ingest = false;
        arg.options.verify_file_checksum = false;
        args.push_back(std::move(arg));
      }
      // The rows family holds the ids and the attributes: one ingestion argument.
      for (size_t i = 1; i < args.size(); ++i) {
        if (args[i].column_family == args[i - 1].column_family) {
          args[i - 1].external_files.push_back(args[i].external_files[0]);
          args[i - 1].files_checksums.push_back(args[i].files_checksums[0]);
          args[i - 1].files_checksum_func_names.push_back(args[i].files_checksum_func_names[0]);
          args.erase(args.begin() + i);
          --i;
        }
      }
      if (!args.empty()) {
        SIEVE_RETURN_IF_ERROR(FromRocks(store_->db()->IngestExternalFiles(args),
                                        "compacting " + where + ": ingesting its new chunks"));
      }
      // Then one commit: the state that points at the new space, the marker gone, and the old
      // space's chunks deleted.
      rocksdb::WriteBatch batch;
      std::string value;
      fmt::EncodeShardState(next, &value);
      batch.Put(store_->meta_family(), fmt::ShardStateKey(meta_.id, shard_), value);
      batch.Delete(store_->meta_family(), fmt::SpaceKey(space_));
      store_->DeleteSpace(old_space_, shard_, &batch);
      LedgerRecord record;
      record.kind = LedgerKind::kRewrite;
      record.collection_id = meta_.id;
      record.name = meta_.spec.name;
      record.shards.push_back(LedgerShard{shard_, 0, next.next_ordinal, next.live_rows});
      SIEVE_RETURN_IF_ERROR(store_->Commit(&batch, std::move(record), "compacting " + where));
      committed_ = true;
      store_->ReclaimSpace(old_space_, shard_);
      return Status::OK();
    });
  }

 private:
  enum PartIndex { kVectors = 0, kIds = 1, kColumns = 2, kParts = 3 };
  struct Part {
    std::string path;
    std::unique_ptr<rocksdb::SstFileWriter> writer;
  };

  Status Put(int p, char tag, uint32_t ordinal, const std::string& value) {
    Part& part = parts_[p];
    if (part.writer == nullptr) {
      const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
      part.path = store_->path() + "/" + kRewriteFilePrefix + Num(space_) + "-" + Num(p) + "-" +
                  Num(static_cast<uint64_t>(stamp)) + ".sst";
      // Each file with its own family's options: the ids and attributes compressed as the
      // rows family compresses its flushes (written with the vectors' options they were not).
      const rocksdb::Options& options =
          p == kVectors ? store_->vector_file_options() : store_->rows_file_options();
      part.writer = std::make_unique<rocksdb::SstFileWriter>(
          rocksdb::EnvOptions(options), options,
          p == kVectors ? store_->vectors_family() : store_->rows_family());
      SIEVE_RETURN_IF_ERROR(FromRocks(part.writer->Open(part.path), "writing " + part.path));
    }
    return FromRocks(part.writer->Put(fmt::ChunkKey(tag, space_, shard_, ordinal), value),
                     "writing " + part.path);
  }

  RocksStore* const store_;
  const CollectionMeta meta_;
  const uint32_t shard_;
  const uint32_t space_;
  const uint32_t old_space_;
  const uint32_t old_next_ordinal_;
  Part parts_[kParts];
  uint32_t next_ = 0;
  bool committed_ = false;
};

void RocksStore::DeleteSpace(uint32_t space, uint32_t shard, rocksdb::WriteBatch* batch) {
  for (char tag : {fmt::kVectorsTag, fmt::kIdsTag, fmt::kColumnsTag}) {
    auto [begin, end] = PartRange(tag, space, shard);
    batch->DeleteRange(tag == fmt::kVectorsTag ? vectors_ : rows_, begin, end);
  }
}

void RocksStore::ReclaimSpace(uint32_t space, uint32_t shard) {
  for (char tag : {fmt::kVectorsTag, fmt::kIdsTag, fmt::kColumnsTag}) {
    rocksdb::ColumnFamilyHandle* family = tag == fmt::kVectorsTag ? vectors_ : rows_;
    auto [begin, end] = PartRange(tag, space, shard);
    const rocksdb::Slice b(begin), e(end);
    // Whole files inside the range go at once; what is left is compacted away.
    rocksdb::Status rs = rocksdb::DeleteFilesInRange(db_.get(), family, &b, &e);
    rocksdb::CompactRangeOptions co;
    co.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
    co.blob_garbage_collection_policy = rocksdb::BlobGarbageCollectionPolicy::kForce;
    co.blob_garbage_collection_age_cutoff = 1.0;
    if (rs.ok()) rs = db_->CompactRange(co, family, &b, &e);
    if (!rs.ok()) {
      rocksdb::Log(rocksdb::InfoLogLevel::WARN_LEVEL, layout_.db.info_log,
                   "Sieve: reclaiming key space %u shard %u: %s", space, shard,
                   rs.ToString().c_str());
    }
  }
}

Status RocksStore::RemoveSpace(uint32_t space, uint32_t shard, bool delete_marker) {
  rocksdb::WriteBatch batch;
  DeleteSpace(space, shard, &batch);
  if (delete_marker) batch.Delete(meta_, fmt::SpaceKey(space));
  SIEVE_RETURN_IF_ERROR(WriteSynced(&batch, "removing key space " + Num(space)));
  ReclaimSpace(space, shard);
  return Status::OK();
}

Status RocksStore::RemoveAbandonedSpaces() {
  const std::string prefix = fmt::kSpaceKeyPrefix;
  std::vector<std::pair<uint32_t, uint32_t>> abandoned;  // (space, shard)
  {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), meta_));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      uint32_t space = 0;
      if (!fmt::ParseSpaceKey(std::string_view(it->key().data(), it->key().size()), &space) ||
          it->value().size() != 8) {
        continue;  // reported by the checker
      }
      abandoned.emplace_back(space, fmt::GetFixed32(it->value().data() + 4));
    }
    SIEVE_RETURN_IF_ERROR(FromRocks(it->status(), "reading key spaces of " + path_));
  }
  // A marker is deleted by the commit that makes its space live, so every one left is
  // abandoned.
  for (const auto& [space, shard] : abandoned) {
    SIEVE_RETURN_IF_ERROR(RemoveSpace(space, shard, /*delete_marker=*/true));
  }
  return Status::OK();
}

Status RocksStore::DropCollection(const CollectionMeta& meta) {
  return WithDb("DropCollection", [&]() -> Status {
    const std::string where = "dropping " + Where(meta);
    SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly(where));
    SIEVE_RETURN_IF_ERROR(RefuseWhileDiskFull(where));
    // Under the names' lock: no alias may come to name the collection while it goes.
    std::unique_lock<std::mutex> names(create_mu_);
    CollectionMeta current;
    SIEVE_RETURN_IF_ERROR(ReadCurrentMeta(meta, &current));
    std::vector<std::string> aliases;
    SIEVE_RETURN_IF_ERROR(AliasesOf(current.spec.name, &aliases));
    if (!aliases.empty()) {
      std::string list;
      for (const std::string& a : aliases) list += (list.empty() ? "'" : ", '") + a + "'";
      return Status::InvalidArgument(
          "collection '" + current.spec.name + "' is named by the alias" +
          (aliases.size() > 1 ? "es " : " ") + list +
          "; switch them to another collection or drop them first");
    }
    rocksdb::WriteBatch batch;
    std::vector<uint32_t> spaces(current.spec.shards);
    for (uint32_t s = 0; s < current.spec.shards; ++s) {
      ShardState state;
      Status st = DoReadShardState(current, s, nullptr, &state);
      // A damaged state still goes; its chunks are under the collection's own id or lost.
      spaces[s] = st.ok() ? SpaceOf(current, state) : current.id;
      DeleteSpace(spaces[s], s, &batch);
      if (spaces[s] != current.id) DeleteSpace(current.id, s, &batch);
      batch.Delete(meta_, fmt::ShardStateKey(current.id, s));
    }
    batch.Delete(meta_, fmt::CollectionKey(current.spec.name));
    LedgerRecord record;
    record.kind = LedgerKind::kDrop;
    record.collection_id = current.id;
    record.name = current.spec.name;
    SIEVE_RETURN_IF_ERROR(Commit(&batch, std::move(record), where));
    names.unlock();
    for (uint32_t s = 0; s < current.spec.shards; ++s) {
      ReclaimSpace(spaces[s], s);
      if (spaces[s] != current.id) ReclaimSpace(current.id, s);
    }
    return Status::OK();
  });
}

Status RocksStore::UpdateColumns(const CollectionMeta& meta,
                                 const std::vector<ColumnChange>& changes) {
  return WithDb("UpdateColumns", [&]() -> Status {
    const std::string where = "updating attributes of " + Where(meta);
    SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly(where));
    SIEVE_RETURN_IF_ERROR(RefuseWhileDiskFull(where));
    if (changes.empty()) return Status::OK();
    CollectionMeta current;
    SIEVE_RETURN_IF_ERROR(ReadCurrentMeta(meta, &current));
    const auto& schema = current.spec.attributes;
    // Changes by shard and ordinal, so each stored chunk is read and written once.
    std::vector<const ColumnChange*> sorted;
    for (const ColumnChange& c : changes) sorted.push_back(&c);
    std::stable_sort(sorted.begin(), sorted.end(), [](const ColumnChange* a, const ColumnChange* b) {
      return a->shard != b->shard ? a->shard < b->shard : a->ordinal < b->ordinal;
    });
    rocksdb::WriteBatch batch;
    LedgerRecord record;
    record.kind = LedgerKind::kUpdate;
    record.collection_id = current.id;
    record.name = current.spec.name;
    std::string value;
    size_t i = 0;
    while (i < sorted.size()) {
      const uint32_t shard = sorted[i]->shard;
      if (shard >= current.spec.shards) {
        return Status::InvalidArgument(where + ": no shard " + Num(shard));
      }
      ShardState state;
      SIEVE_RETURN_IF_ERROR(DoReadShardState(current, shard, nullptr, &state));
      const uint32_t space = SpaceOf(current, state);
      record.shards.push_back(
          LedgerShard{shard, state.next_ordinal, state.next_ordinal, state.live_rows});
      const std::string lower = fmt::ChunkPrefix(fmt::kColumnsTag, space, shard);
      std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), rows_));
      while (i < sorted.size() && sorted[i]->shard == shard) {
        const uint32_t ordinal = sorted[i]->ordinal;
        const std::string at = Where(current, shard, ordinal);
        if (ordinal >= state.next_ordinal) {
          return Status::InvalidArgument(at + ": no such row (the shard ends at ordinal " +
                                         Num(state.next_ordinal) + ")");
        }
        // The chunk holding the row: the last chunk key at or before it.
        it->SeekForPrev(fmt::ChunkKey(fmt::kColumnsTag, space, shard, ordinal));
        SIEVE_RETURN_IF_ERROR(FromRocks(it->status(), at));
        char tag = 0;
        uint32_t kspace = 0, kshard = 0, first = 0;
        if (!it->Valid() || !it->key().starts_with(lower) ||
            !fmt::ParseChunkKey(std::string_view(it->key().data(), it->key().size()), &tag,
                                &kspace, &kshard, &first)) {
          return Status::Corruption(at + ": no attribute chunk holds the row");
        }
        const std::string key = it->key().ToString();
        uint32_t rows = 0;
        std::vector<Column> columns;
        SIEVE_RETURN_IF_ERROR(
            fmt::DecodeColumns(std::string_view(it->value().data(), it->value().size()), schema,
                               &rows, &columns)
                .WithContext(at));
        if (ordinal >= first + rows) {
          return Status::Corruption(at + ": no attribute chunk holds the row");
        }
        for (; i < sorted.size() && sorted[i]->shard == shard && sorted[i]->ordinal < first + rows;
             ++i) {
          const ColumnChange& c = *sorted[i];
          if (c.attribute >= schema.size() ||
              !columns[c.attribute].Set(c.ordinal - first, c.value)) {
            return Status::InvalidArgument(Where(current, shard, c.ordinal) +
                                           ": a value of the wrong type for attribute " +
                                           Num(c.attribute));
          }
        }
        // Only the changed rows of a text column are analyzed again.
        SIEVE_RETURN_IF_ERROR(
            EnsureTextSegments(schema, &columns).WithContext(Where(current, shard, first)));
        value.clear();
        fmt::EncodeColumns(columns, 0, rows, &value);
        batch.Put(rows_, key, value);
      }
    }
    return Commit(&batch, std::move(record), where);
  });
}

Status RocksStore::BeginRewrite(const CollectionMeta& meta, uint32_t shard,
                                std::unique_ptr<ShardRewrite>* rewrite) {
  return WithDb("BeginRewrite", [&]() -> Status {
    const std::string where = "compacting " + Where(meta, shard);
    SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly(where));
    SIEVE_RETURN_IF_ERROR(RefuseWhileDiskFull(where));
    CollectionMeta current;
    SIEVE_RETURN_IF_ERROR(ReadCurrentMeta(meta, &current));
    ShardState state;
    SIEVE_RETURN_IF_ERROR(DoReadShardState(current, shard, nullptr, &state));
    // A fresh space id from the collection id counter, so no key of any collection shares it,
    // recorded as pending before any of its chunks exist.
    std::lock_guard<std::mutex> lock(create_mu_);
    std::string value;
    SIEVE_RETURN_IF_ERROR(FromRocks(
        db_->Get(rocksdb::ReadOptions(), meta_, fmt::kNextCollectionIdKey, &value), where));
    if (value.size() != 4) return Status::Corruption(where + ": the id counter is damaged");
    const uint32_t space = fmt::GetFixed32(value.data());
    if (space == UINT32_MAX) return Status::ResourceExhausted("key space ids are exhausted");
    rocksdb::WriteBatch batch;
    std::string counter, marker;
    fmt::PutFixed32(&counter, space + 1);
    batch.Put(meta_, fmt::kNextCollectionIdKey, counter);
    fmt::PutFixed32(&marker, current.id);
    fmt::PutFixed32(&marker, shard);
    batch.Put(meta_, fmt::SpaceKey(space), marker);
    LedgerRecord record;
    record.kind = LedgerKind::kRewrite;
    record.collection_id = current.id;
    record.name = current.spec.name;
    SIEVE_RETURN_IF_ERROR(Commit(&batch, std::move(record), where));
    rewrite->reset(new RocksShardRewrite(this, current, shard, space, SpaceOf(current, state),
                                         state.next_ordinal));
    return Status::OK();
  });
}

Status RocksStore::DiskBytes(uint64_t* bytes) {
  *bytes = 0;
  return WithDb("DiskBytes", [&] { return DoDiskBytes(bytes); });
}

Status RocksStore::DoDiskBytes(uint64_t* bytes) {
  if (mode_ == OpenMode::kReadWrite) {
    // RocksDB's background flushes and compactions delete and write files: counted when they
    // are done, the figure is the store's, not a moment of their work.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < give_up) {
      uint64_t busy = 0, n = 0;
      for (const char* property :
           {"rocksdb.num-running-flushes", "rocksdb.num-running-compactions"}) {
        if (db_->GetIntProperty(property, &n)) busy += n;
      }
      for (const char* property :
           {"rocksdb.mem-table-flush-pending", "rocksdb.compaction-pending"}) {
        if (db_->GetAggregatedIntProperty(property, &n)) busy += n;
      }
      if (busy == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  // Lines the info log still buffers belong to the count.
  if (layout_.db.info_log != nullptr) layout_.db.info_log->Flush();
  std::vector<std::string> children;
  SIEVE_RETURN_IF_ERROR(FromRocks(env_->GetChildren(path_, &children), "listing " + path_));
  for (const std::string& name : children) {
    uint64_t size = 0;
    if (name != "." && name != ".." && env_->GetFileSize(path_ + "/" + name, &size).ok()) {
      *bytes += size;
    }
  }
  return Status::OK();
}

}  // namespace sieve
