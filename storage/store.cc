// Copyright 2026 The Sieve Authors.
//
// RocksStore: Store over RocksDB. The byte layouts live in format.{h,cc} and FORMAT.md; this
// file owns the column families, their tuning, atomicity and the invariant checker.

#include "storage/store.h"

#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/options.h>
#include <rocksdb/slice.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <exception>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "storage/format.h"
#include "storage/roaring.h"

namespace sieve {

namespace {

namespace fmt = ::sieve::format;

constexpr size_t kScanReadahead = 8 << 20;
// Stored chunks hold at most this much vector payload; a caller's larger chunk is split.
// Every value read allocates a buffer of its size, and glibc serves allocations above 32 MiB
// with fresh mmap()s whose page faults made loading 1M × 128 floats in 32 MiB chunks 4–5×
// slower than in 8 MiB chunks (measured with StoreBenchTest.LoadMillionVectors).
constexpr size_t kMaxStoredVectorBytes = 8 << 20;
// Only small appends (below StoreOptions::vector_file_min_bytes) put vectors in the memtable.
constexpr size_t kVectorsWriteBuffer = 64 << 20;
// Vector files are written in the database directory (so ingesting them is a hard link) under
// this prefix; Open deletes leftovers of a crash.
constexpr char kVectorFilePrefix[] = "sieve-vectors-";
constexpr size_t kRowsWriteBuffer = 64 << 20;
constexpr size_t kMetaWriteBuffer = 8 << 20;
// Database-wide settings in the meta family: "setting/" + name (see FORMAT.md).
const std::string kSettingKeyPrefix = "setting/";
// Problems past this many are counted but not listed, so a badly damaged store cannot make
// CheckFormat's report unbounded.
constexpr size_t kMaxProblemLines = 1000;

std::string Num(uint64_t v) { return std::to_string(v); }

std::string Where(const CollectionMeta& meta) {
  return "collection '" + meta.spec.name + "' (id " + Num(meta.id) + ")";
}

std::string Where(const CollectionMeta& meta, uint32_t shard) {
  return Where(meta) + " shard " + Num(shard);
}

std::string Where(const CollectionMeta& meta, uint32_t shard, uint32_t ordinal) {
  return Where(meta, shard) + " ordinal " + Num(ordinal);
}

Status FromRocks(const rocksdb::Status& s, std::string_view context) {
  if (s.ok()) return Status::OK();
  const std::string msg = std::string(context) + ": " + s.ToString();
  switch (s.code()) {
    case rocksdb::Status::kNotFound:
      return Status::NotFound(msg);
    case rocksdb::Status::kCorruption:
      return Status::Corruption(msg);
    case rocksdb::Status::kNotSupported:
      return Status::NotSupported(msg);
    case rocksdb::Status::kInvalidArgument:
      return Status::InvalidArgument(msg);
    case rocksdb::Status::kIOError:
      if (s.subcode() == rocksdb::Status::kNoSpace) return Status::ResourceExhausted(msg);
      return Status::IOError(msg);
    case rocksdb::Status::kMemoryLimit:
      return Status::ResourceExhausted(msg);
    default:
      // Busy, Aborted, TimedOut, ShutdownInProgress …: the write or read did not happen.
      return Status::IOError(msg);
  }
}

std::string_view View(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }

// Runs `fn`, turning any exception (allocation failure, a throwing callback) into a Status so
// none crosses the storage boundary.
template <typename Fn>
Status Guarded(std::string_view what, Fn&& fn) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted(std::string(what) + ": out of memory");
  } catch (const std::exception& e) {
    return Status::Internal(std::string(what) + ": " + e.what());
  } catch (...) {
    return Status::Internal(std::string(what) + ": unknown exception");
  }
}

rocksdb::CompressionType RowsCompression() {
  const auto supported = rocksdb::GetSupportedCompressions();
  for (auto c : {rocksdb::kLZ4Compression, rocksdb::kSnappyCompression}) {
    if (std::find(supported.begin(), supported.end(), c) != supported.end()) return c;
  }
  return rocksdb::kNoCompression;
}

// A snapshot held for the duration of one multi-iterator read.
class SnapshotGuard {
 public:
  explicit SnapshotGuard(rocksdb::DB* db) : db_(db), snapshot_(db->GetSnapshot()) {}
  ~SnapshotGuard() { db_->ReleaseSnapshot(snapshot_); }
  SnapshotGuard(const SnapshotGuard&) = delete;
  SnapshotGuard& operator=(const SnapshotGuard&) = delete;
  const rocksdb::Snapshot* get() const { return snapshot_; }

 private:
  rocksdb::DB* db_;
  const rocksdb::Snapshot* snapshot_;
};

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
      // The packaged RocksDB computes CRC32C in software (~0.5 GB/s), which alone would make
      // loading 1M × 128 floats from blob files (format of earlier builds) take over a second.
      // CheckFormat reads them with checksums verified.
      ro.verify_checksums = false;
      // Vector blocks are ~8 MiB each: RocksDB's readahead buffer would only add a copy.
      ro.readahead_size = 0;
    }
    it.reset(db->NewIterator(ro, family));
    it->Seek(lower);
  }
  uint32_t Ordinal() const { return fmt::GetFixed32BE(it->key().data() + 9); }
  bool WellFormed() const { return it->key().size() == fmt::kChunkKeySize; }
};

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

class RocksStore final : public Store {
 public:
  RocksStore(std::string path, std::unique_ptr<rocksdb::DB> db,
             std::vector<rocksdb::ColumnFamilyHandle*> handles,
             rocksdb::Options vector_file_options, size_t vector_file_min_bytes)
      : path_(std::move(path)),
        db_(std::move(db)),
        handles_(std::move(handles)),
        vector_file_options_(std::move(vector_file_options)),
        vector_file_min_bytes_(vector_file_min_bytes) {
    meta_ = handles_[1];
    vectors_ = handles_[2];
    rows_ = handles_[3];
  }

  ~RocksStore() override {
    for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
    // Every acknowledged write is already synced; a close error has nothing left to lose.
    (void)db_->Close();
  }

  Status Init();

  Status CreateCollection(const CollectionSpec& spec, CollectionMeta* meta) override {
    return Guarded("CreateCollection", [&] { return DoCreateCollection(spec, meta); });
  }
  Status ListCollections(std::vector<CollectionMeta>* metas) override {
    return Guarded("ListCollections", [&] { return DoListCollections(metas); });
  }
  Status GetCollection(const std::string& name, CollectionMeta* meta) override {
    return Guarded("GetCollection", [&] { return DoGetCollection(name, nullptr, meta); });
  }
  Status ReadShardState(const CollectionMeta& meta, uint32_t shard, ShardState* state) override {
    return Guarded("ReadShardState", [&] { return DoReadShardState(meta, shard, nullptr, state); });
  }
  Status ScanChunks(const CollectionMeta& meta, uint32_t shard, uint32_t parts,
                    const std::function<Status(Chunk&&)>& visit) override {
    return Guarded("ScanChunks", [&] { return DoScanChunks(meta, shard, parts, visit); });
  }
  Status CommitAppend(const CollectionMeta& meta, int64_t next_auto_id,
                      const std::vector<ShardAppend>& appends) override {
    return Guarded("CommitAppend", [&] { return DoCommitAppend(meta, next_auto_id, appends); });
  }
  Status CommitShardStates(const CollectionMeta& meta,
                           const std::vector<std::pair<uint32_t, ShardState>>& states) override {
    return Guarded("CommitShardStates", [&] { return DoCommitShardStates(meta, states); });
  }
  Status PutSetting(const std::string& name, const std::string& value) override {
    return Guarded("PutSetting", [&] {
      if (name.empty()) return Status::InvalidArgument("setting: the name is empty");
      rocksdb::WriteBatch batch;
      batch.Put(meta_, kSettingKeyPrefix + name, value);
      return Write(&batch, "setting '" + name + "'");
    });
  }
  Status GetSetting(const std::string& name, std::string* value) override {
    return Guarded("GetSetting", [&] {
      rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), meta_, kSettingKeyPrefix + name, value);
      if (rs.IsNotFound()) return Status::NotFound("no setting '" + name + "'");
      return FromRocks(rs, "reading setting '" + name + "' of " + path_);
    });
  }
  Status CheckFormat(std::vector<std::string>* problems) override {
    return Guarded("CheckFormat", [&] { return DoCheckFormat(problems); });
  }

 private:
  Status DoCreateCollection(const CollectionSpec& spec, CollectionMeta* meta);
  Status DoListCollections(std::vector<CollectionMeta>* metas);
  Status DoGetCollection(const std::string& name, const rocksdb::Snapshot* snapshot,
                         CollectionMeta* meta);
  Status DoReadShardState(const CollectionMeta& meta, uint32_t shard,
                          const rocksdb::Snapshot* snapshot, ShardState* state);
  Status DoScanChunks(const CollectionMeta& meta, uint32_t shard, uint32_t parts,
                      const std::function<Status(Chunk&&)>& visit);
  Status DoCommitAppend(const CollectionMeta& meta, int64_t next_auto_id,
                        const std::vector<ShardAppend>& appends);
  Status DoCommitShardStates(const CollectionMeta& meta,
                             const std::vector<std::pair<uint32_t, ShardState>>& states);
  Status DoCheckFormat(std::vector<std::string>* problems);

  // Re-reads the collection named in `meta` and fails unless it is the same collection (id).
  Status ReadCurrentMeta(const CollectionMeta& meta, CollectionMeta* current);
  Status Write(rocksdb::WriteBatch* batch, std::string_view context);

  // A vector chunk as CommitAppend stores it: `rows` rows from `data`, under `key`.
  struct VectorPiece {
    std::string key;
    uint32_t rows = 0;
    const float* data = nullptr;
  };
  // Encodes a piece's value (header + payload) into *value.
  void EncodeVectorPiece(const CollectionSpec& spec, const VectorPiece& piece,
                         std::string* value) const;
  // Deletes the shard's vector chunks at or beyond `next_ordinal` (orphans of an ingest whose
  // commit never happened), synced and flushed, so a file ingested next lies above the
  // tombstone. Does nothing (one seek) when there are none.
  Status RemoveOrphanVectors(const CollectionMeta& meta, uint32_t shard, uint32_t next_ordinal);
  // Writes one synced file per shard with that shard's pieces (in key order) and ingests them
  // all into the vectors family in one atomic step. The chunks are invisible to readers until
  // the shard states move past them.
  Status IngestVectorFiles(const CollectionMeta& meta,
                           const std::vector<std::vector<VectorPiece>>& shard_pieces);

  const std::string path_;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // default, meta, vectors, rows
  rocksdb::ColumnFamilyHandle* meta_ = nullptr;
  rocksdb::ColumnFamilyHandle* vectors_ = nullptr;
  rocksdb::ColumnFamilyHandle* rows_ = nullptr;
  // Serializes collection creation: name check, id counter and write must be one step.
  std::mutex create_mu_;
  // The vectors family's options with the database's env, for SstFileWriter.
  const rocksdb::Options vector_file_options_;
  const size_t vector_file_min_bytes_;
  std::atomic<uint64_t> next_file_number_{0};
};

Status RocksStore::Write(rocksdb::WriteBatch* batch, std::string_view context) {
  rocksdb::WriteOptions wo;
  wo.sync = true;
  return FromRocks(db_->Write(wo, batch), std::string(context) + ": write to " + path_);
}

Status RocksStore::Init() {
  std::string value;
  rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), meta_, fmt::kFormatVersionKey, &value);
  if (rs.IsNotFound()) {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), meta_));
    it->SeekToFirst();
    if (it->Valid()) {
      return Status::Corruption("database at " + path_ + " has metadata but no " +
                                fmt::kFormatVersionKey + " key");
    }
    SIEVE_RETURN_IF_ERROR(FromRocks(it->status(), "reading metadata of " + path_));
    rocksdb::WriteBatch batch;
    std::string v;
    fmt::PutFixed32(&v, fmt::kFormatVersion);
    batch.Put(meta_, fmt::kFormatVersionKey, v);
    v.clear();
    fmt::PutFixed32(&v, 1);
    batch.Put(meta_, fmt::kNextCollectionIdKey, v);
    return Write(&batch, "initializing");
  }
  SIEVE_RETURN_IF_ERROR(FromRocks(rs, "reading the format version of " + path_));
  if (value.size() != 4) {
    return Status::Corruption("database at " + path_ + ": format_version value is " +
                              Num(value.size()) + " bytes, expected 4");
  }
  const uint32_t version = fmt::GetFixed32(value.data());
  if (version != fmt::kFormatVersion) {
    return Status::NotSupported("database at " + path_ + " has format version " + Num(version) +
                                ", this build reads version " + Num(fmt::kFormatVersion));
  }
  // Fail at open, not at first use, when any collection's metadata is damaged.
  std::vector<CollectionMeta> metas;
  return DoListCollections(&metas);
}

Status RocksStore::DoCreateCollection(const CollectionSpec& spec, CollectionMeta* meta) {
  SIEVE_RETURN_IF_ERROR(fmt::ValidateSpec(spec));
  std::lock_guard<std::mutex> lock(create_mu_);
  const std::string key = fmt::CollectionKey(spec.name);
  std::string value;
  rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), meta_, key, &value);
  if (rs.ok()) return Status::AlreadyExists("collection '" + spec.name + "' already exists");
  if (!rs.IsNotFound()) return FromRocks(rs, "reading collection '" + spec.name + "'");

  rs = db_->Get(rocksdb::ReadOptions(), meta_, fmt::kNextCollectionIdKey, &value);
  SIEVE_RETURN_IF_ERROR(FromRocks(rs, "reading the collection id counter of " + path_));
  if (value.size() != 4) {
    return Status::Corruption("collection id counter of " + path_ + " is " + Num(value.size()) +
                              " bytes, expected 4");
  }
  const uint32_t id = fmt::GetFixed32(value.data());
  if (id == UINT32_MAX) return Status::ResourceExhausted("collection ids are exhausted");

  CollectionMeta m;
  m.id = id;
  m.spec = spec;
  m.next_auto_id = 0;
  rocksdb::WriteBatch batch;
  batch.Put(meta_, key, fmt::EncodeMeta(m));
  std::string counter;
  fmt::PutFixed32(&counter, id + 1);
  batch.Put(meta_, fmt::kNextCollectionIdKey, counter);
  ShardState empty;
  empty.deleted = std::make_shared<roaring::Roaring>();
  std::string state;
  fmt::EncodeShardState(empty, &state);
  for (uint32_t s = 0; s < spec.shards; ++s) {
    batch.Put(meta_, fmt::ShardStateKey(id, s), state);
  }
  SIEVE_RETURN_IF_ERROR(Write(&batch, "creating collection '" + spec.name + "'"));
  if (meta != nullptr) *meta = std::move(m);
  return Status::OK();
}

Status RocksStore::DoListCollections(std::vector<CollectionMeta>* metas) {
  metas->clear();
  const std::string prefix = fmt::kCollectionKeyPrefix;
  const std::string upper = fmt::PrefixSuccessor(prefix);
  rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, meta_));
  for (it->Seek(prefix); it->Valid(); it->Next()) {
    const std::string key = it->key().ToString();
    CollectionMeta m;
    Status s = fmt::DecodeMeta(View(it->value()), &m);
    if (!s.ok()) return s.WithContext("metadata key '" + key + "' in " + path_);
    if (fmt::CollectionKey(m.spec.name) != key) {
      return Status::Corruption("metadata key '" + key + "' in " + path_ + " holds collection '" +
                                m.spec.name + "'");
    }
    metas->push_back(std::move(m));
  }
  return FromRocks(it->status(), "listing collections of " + path_);
}

Status RocksStore::DoGetCollection(const std::string& name, const rocksdb::Snapshot* snapshot,
                                   CollectionMeta* meta) {
  std::string value;
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  rocksdb::Status rs = db_->Get(ro, meta_, fmt::CollectionKey(name), &value);
  if (rs.IsNotFound()) return Status::NotFound("no collection named '" + name + "'");
  SIEVE_RETURN_IF_ERROR(FromRocks(rs, "reading collection '" + name + "'"));
  CollectionMeta m;
  Status s = fmt::DecodeMeta(value, &m);
  if (!s.ok()) return s.WithContext("collection '" + name + "' in " + path_);
  if (m.spec.name != name) {
    return Status::Corruption("metadata of collection '" + name + "' names '" + m.spec.name + "'");
  }
  *meta = std::move(m);
  return Status::OK();
}

Status RocksStore::ReadCurrentMeta(const CollectionMeta& meta, CollectionMeta* current) {
  SIEVE_RETURN_IF_ERROR(DoGetCollection(meta.spec.name, nullptr, current));
  if (current->id != meta.id) {
    return Status::InvalidArgument(Where(meta) + " is stale: the stored collection has id " +
                                   Num(current->id));
  }
  return Status::OK();
}

Status RocksStore::DoReadShardState(const CollectionMeta& meta, uint32_t shard,
                                    const rocksdb::Snapshot* snapshot, ShardState* state) {
  if (shard >= meta.spec.shards) {
    return Status::InvalidArgument(Where(meta) + " has " + Num(meta.spec.shards) +
                                   " shards, no shard " + Num(shard));
  }
  std::string value;
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  rocksdb::Status rs = db_->Get(ro, meta_, fmt::ShardStateKey(meta.id, shard), &value);
  if (rs.IsNotFound()) {
    return Status::Corruption(Where(meta, shard) + ": shard state is missing");
  }
  SIEVE_RETURN_IF_ERROR(FromRocks(rs, "reading state of " + Where(meta, shard)));
  Status s = fmt::DecodeShardState(value, state);
  if (!s.ok()) return s.WithContext(Where(meta, shard));
  return Status::OK();
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
    c.Open(db_.get(), snapshot.get(), /*bulk=*/vectors, meta.id, shard,
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
      const std::string_view value = View(c.it->value());
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
                                       uint32_t next_ordinal) {
  const std::string begin = fmt::ChunkKey(fmt::kVectorsTag, meta.id, shard, next_ordinal);
  const std::string end = fmt::PrefixSuccessor(fmt::ChunkPrefix(fmt::kVectorsTag, meta.id, shard));
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
      Write(&batch, "removing uncommitted vectors of " + Where(meta, shard, next_ordinal)));
  rocksdb::FlushOptions fo;
  fo.wait = true;
  return FromRocks(db_->Flush(fo, vectors_),
                   "removing uncommitted vectors of " + Where(meta, shard, next_ordinal));
}

Status RocksStore::IngestVectorFiles(const CollectionMeta& meta,
                                     const std::vector<std::vector<VectorPiece>>& shard_pieces) {
  rocksdb::Env* env = vector_file_options_.env;
  std::vector<std::string> files;
  // On success RocksDB has moved (hard-linked, then unlinked) the files; otherwise they are ours
  // to remove. A file left by a crash here is removed by the next Open.
  struct Cleanup {
    rocksdb::Env* env;
    std::vector<std::string>* files;
    ~Cleanup() {
      for (const std::string& f : *files) {
        if (env->FileExists(f).ok()) (void)env->DeleteFile(f);
      }
    }
  } cleanup{env, &files};
  const std::string where = "writing vectors of " + Where(meta);
  std::string value;
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
    // Finish syncs the file before closing it.
    SIEVE_RETURN_IF_ERROR(FromRocks(writer.Finish(), where + " to " + files.back()));
  }
  if (files.empty()) return Status::OK();
  rocksdb::IngestExternalFileOptions io;
  io.move_files = true;
  // The global sequence number, when one is needed, lives in the MANIFEST; rewriting it into the
  // file would only add a write.
  io.write_global_seqno = false;
  io.verify_checksums_before_ingest = false;
  return FromRocks(db_->IngestExternalFile(vectors_, files, io),
                   "ingesting vectors of " + Where(meta) + " into " + path_);
}

Status RocksStore::DoCommitAppend(const CollectionMeta& meta, int64_t next_auto_id,
                                  const std::vector<ShardAppend>& appends) {
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
    shard_starts.emplace_back(a.shard, state.next_ordinal);
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
        pieces.push_back(VectorPiece{fmt::ChunkKey(fmt::kVectorsTag, current.id, a.shard, ordinal),
                                     m, chunk->vectors.data() + size_t{off} * spec.dim});
        vector_bytes += size_t{m} * row_bytes;

        payload.clear();
        fmt::EncodeIdsHeader(m, &payload);
        for (uint32_t r = off; r < off + m; ++r) {
          fmt::PutFixed64(&payload, static_cast<uint64_t>(chunk->ids[r]));
        }
        SIEVE_RETURN_IF_ERROR(FromRocks(
            batch.Put(rows_, fmt::ChunkKey(fmt::kIdsTag, current.id, a.shard, ordinal), payload),
            where));

        payload.clear();
        fmt::EncodeColumns(chunk->columns, off, m, &payload);
        SIEVE_RETURN_IF_ERROR(FromRocks(
            batch.Put(rows_, fmt::ChunkKey(fmt::kColumnsTag, current.id, a.shard, ordinal),
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
    SIEVE_RETURN_IF_ERROR(RemoveOrphanVectors(current, shard, start));
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
  return Write(&batch, "appending to " + Where(current));
}

Status RocksStore::DoCommitShardStates(const CollectionMeta& meta,
                                       const std::vector<std::pair<uint32_t, ShardState>>& states) {
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
  return Write(&batch, "updating shard states of " + Where(current));
}

// --- CheckFormat ----------------------------------------------------------------------------

class ProblemList {
 public:
  explicit ProblemList(std::vector<std::string>* out) : out_(out) {}
  void Add(std::string line) {
    if (count_ == 0) first_ = line;
    ++count_;
    if (out_ != nullptr && count_ <= kMaxProblemLines) out_->push_back(std::move(line));
  }
  Status Result() const {
    if (count_ == 0) return Status::OK();
    if (out_ != nullptr && count_ > kMaxProblemLines) {
      out_->push_back("... and " + Num(count_ - kMaxProblemLines) + " more problems");
    }
    return Status::Corruption(Num(count_) + " problems found: " + first_);
  }

 private:
  std::vector<std::string>* out_;
  size_t count_ = 0;
  std::string first_;
};

struct ChunkSpan {
  uint32_t first;
  uint32_t rows;
  bool operator==(const ChunkSpan&) const = default;
};

struct CheckedShard {
  bool state_present = false;
  std::optional<ShardState> state;
  std::map<char, std::vector<ChunkSpan>> spans;  // by part tag
};

struct CheckedCollection {
  CollectionMeta meta;
  std::vector<CheckedShard> shards;
  std::unordered_set<int64_t> live_ids;
};

Status RocksStore::DoCheckFormat(std::vector<std::string>* problems) {
  ProblemList report(problems);
  SnapshotGuard snapshot(db_.get());
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot.get();
  ro.readahead_size = kScanReadahead;
  ro.fill_cache = false;

  std::map<uint32_t, CheckedCollection> collections;
  std::optional<uint32_t> next_id;
  std::vector<std::pair<std::string, std::string>> shard_values;
  {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, meta_));
    const std::string_view collection_prefix = fmt::kCollectionKeyPrefix;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const std::string key = it->key().ToString();
      const std::string_view value = View(it->value());
      if (key == fmt::kFormatVersionKey) {
        if (value.size() != 4 || fmt::GetFixed32(value.data()) != fmt::kFormatVersion) {
          report.Add("metadata: format_version is not " + Num(fmt::kFormatVersion));
        }
      } else if (key == fmt::kNextCollectionIdKey) {
        if (value.size() != 4) {
          report.Add("metadata: next_collection_id is " + Num(value.size()) + " bytes, expected 4");
        } else {
          next_id = fmt::GetFixed32(value.data());
        }
      } else if (key.compare(0, kSettingKeyPrefix.size(), kSettingKeyPrefix) == 0) {
        // A setting's value is opaque to the store.
      } else if (key.compare(0, collection_prefix.size(), collection_prefix) == 0) {
        CollectionMeta m;
        Status s = fmt::DecodeMeta(value, &m);
        if (!s.ok()) {
          report.Add("metadata key '" + key + "': " + s.message());
        } else if (fmt::CollectionKey(m.spec.name) != key) {
          report.Add("metadata key '" + key + "' holds collection '" + m.spec.name + "'");
        } else if (collections.count(m.id)) {
          report.Add(Where(m) + ": id already used by collection '" +
                     collections[m.id].meta.spec.name + "'");
        } else {
          CheckedCollection& c = collections[m.id];
          c.shards.resize(m.spec.shards);
          c.meta = std::move(m);
        }
      } else {
        uint32_t cid = 0, shard = 0;
        if (fmt::ParseShardStateKey(key, &cid, &shard)) {
          shard_values.emplace_back(key, std::string(value));
        } else {
          report.Add("metadata: stray key of " + Num(key.size()) + " bytes starting '" +
                     key.substr(0, 32) + "'");
        }
      }
    }
    if (!it->status().ok()) return FromRocks(it->status(), "checking metadata of " + path_);
  }
  if (!next_id) {
    report.Add("metadata: next_collection_id is missing");
  } else if (!collections.empty() && collections.rbegin()->first >= *next_id) {
    report.Add(Where(collections.rbegin()->second.meta) + ": id is not below next_collection_id " +
               Num(*next_id));
  }
  for (const auto& [key, value] : shard_values) {
    uint32_t cid = 0, shard = 0;
    fmt::ParseShardStateKey(key, &cid, &shard);
    auto c = collections.find(cid);
    if (c == collections.end()) {
      report.Add("shard state for unknown collection id " + Num(cid) + " shard " + Num(shard));
      continue;
    }
    const CollectionMeta& m = c->second.meta;
    if (shard >= m.spec.shards) {
      report.Add(Where(m, shard) + ": shard state beyond the collection's " + Num(m.spec.shards) +
                 " shards");
      continue;
    }
    c->second.shards[shard].state_present = true;
    ShardState state;
    Status s = fmt::DecodeShardState(value, &state);
    if (s.ok()) s = fmt::CheckShardState(state);
    if (!s.ok()) {
      report.Add(Where(m, shard) + ": shard state: " + s.message());
      continue;
    }
    c->second.shards[shard].state = std::move(state);
  }
  for (auto& [cid, c] : collections) {
    for (uint32_t s = 0; s < c.shards.size(); ++s) {
      if (!c.shards[s].state_present) {
        report.Add(Where(c.meta, s) + ": shard state is missing");
      }
    }
  }

  std::vector<float> vectors;
  std::vector<int64_t> ids;
  for (auto* family : {vectors_, rows_}) {
    const char* family_name = family == vectors_ ? fmt::kVectorsFamily : fmt::kRowsFamily;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, family));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      char tag = 0;
      uint32_t cid = 0, shard = 0, first = 0;
      const bool tag_ok = family == vectors_
                              ? it->key().size() > 0 && it->key()[0] == fmt::kVectorsTag
                              : it->key().size() > 0 && (it->key()[0] == fmt::kIdsTag ||
                                                         it->key()[0] == fmt::kColumnsTag);
      if (!tag_ok || !fmt::ParseChunkKey(View(it->key()), &tag, &cid, &shard, &first)) {
        report.Add(std::string(family_name) + ": stray key of " + Num(it->key().size()) + " bytes");
        continue;
      }
      auto c = collections.find(cid);
      if (c == collections.end()) {
        report.Add(std::string(family_name) + ": " + PartName(tag) +
                   " chunk of unknown collection id " + Num(cid) + " shard " + Num(shard) +
                   " ordinal " + Num(first));
        continue;
      }
      CheckedCollection& col = c->second;
      const CollectionMeta& m = col.meta;
      if (shard >= m.spec.shards) {
        report.Add(Where(m, shard, first) + ": " + PartName(tag) +
                   " chunk beyond the collection's " + Num(m.spec.shards) + " shards");
        continue;
      }
      const auto& shard_state = col.shards[shard].state;
      if (tag == fmt::kVectorsTag && shard_state && first >= shard_state->next_ordinal) {
        // Ingested by an append that has not committed: invisible, removed by the next append.
        continue;
      }
      const std::string where = Where(m, shard, first) + ": " + PartName(tag) + " chunk: ";
      const std::string_view value = View(it->value());
      uint32_t rows = 0;
      Status s;
      if (tag == fmt::kVectorsTag) {
        s = fmt::DecodeVectors(value, m.spec.dim, m.spec.dtype, &rows, &vectors);
        if (s.ok()) s = fmt::CheckFinite(vectors, m.spec.dim);
      } else if (tag == fmt::kIdsTag) {
        s = fmt::DecodeIds(value, &rows, &ids);
        const auto& state = col.shards[shard].state;
        for (uint32_t r = 0; s.ok() && r < rows; ++r) {
          const uint64_t ordinal = uint64_t{first} + r;
          const bool live = state && ordinal < state->next_ordinal &&
                            !state->deleted->contains(static_cast<uint32_t>(ordinal));
          if (live && !col.live_ids.insert(ids[r]).second) {
            report.Add(Where(m, shard, static_cast<uint32_t>(ordinal)) + ": live id " +
                       std::to_string(ids[r]) + " is not unique in the collection");
          }
        }
      } else {
        s = fmt::DecodeColumns(value, m.spec.attributes, &rows, nullptr);
      }
      if (s.ok() && rows == 0) s = Status::Corruption("empty chunk");
      if (!s.ok()) {
        report.Add(where + s.message());
        continue;
      }
      col.shards[shard].spans[tag].push_back(ChunkSpan{first, rows});
    }
    if (!it->status().ok()) {
      return FromRocks(it->status(), std::string("checking ") + family_name + " of " + path_);
    }
  }

  for (const auto& [cid, c] : collections) {
    for (uint32_t s = 0; s < c.shards.size(); ++s) {
      const CheckedShard& shard = c.shards[s];
      if (!shard.state) continue;
      const uint32_t end = shard.state->next_ordinal;
      for (char tag : {fmt::kVectorsTag, fmt::kIdsTag, fmt::kColumnsTag}) {
        auto found = shard.spans.find(tag);
        const std::vector<ChunkSpan> none;
        const std::vector<ChunkSpan>& spans = found == shard.spans.end() ? none : found->second;
        uint64_t next = 0;
        for (const ChunkSpan& span : spans) {
          if (span.first != next) {
            report.Add(Where(c.meta, s, span.first) + ": " + PartName(tag) + " chunk " +
                       (span.first < next ? "overlaps the previous chunk, which ends at "
                                          : "leaves a gap after ordinal ") +
                       Num(next));
          }
          next = std::max<uint64_t>(next, uint64_t{span.first} + span.rows);
        }
        if (next != end) {
          report.Add(Where(c.meta, s) + ": " + PartName(tag) + " chunks end at ordinal " +
                     Num(next) + ", the shard state says next_ordinal " + Num(end));
        }
        if (tag != fmt::kVectorsTag) {
          auto vec = shard.spans.find(fmt::kVectorsTag);
          if (vec != shard.spans.end() && vec->second != spans) {
            report.Add(Where(c.meta, s) + ": " + PartName(tag) +
                       " chunk boundaries differ from the vector chunk boundaries");
          }
        }
      }
    }
  }
  return report.Result();
}

}  // namespace

Status Store::Open(const StoreOptions& options, const std::string& path,
                   std::unique_ptr<Store>* store) {
  return Guarded("opening " + path, [&]() -> Status {
    rocksdb::Env* env =
        options.env != nullptr ? static_cast<rocksdb::Env*>(options.env) : rocksdb::Env::Default();
    // RocksDB would create the directory (and a LOCK and LOG) before failing: a mistyped path
    // must leave nothing behind.
    if (!options.create_if_missing && !env->FileExists(path + "/CURRENT").ok()) {
      return Status::NotFound("no Sieve database at '" + path + "'");
    }
    rocksdb::DBOptions db_options;
    db_options.create_if_missing = options.create_if_missing;
    db_options.error_if_exists = options.error_if_exists;
    db_options.create_missing_column_families = true;
    db_options.env = env;
    db_options.max_background_jobs = 4;
    db_options.bytes_per_sync = 1 << 20;
    // Shared WAL: a small cap would force the vectors memtable to flush early.
    db_options.max_total_wal_size = uint64_t{2} << 30;
    db_options.keep_log_file_num = 4;

    const rocksdb::CompressionType rows_compression = RowsCompression();

    rocksdb::ColumnFamilyOptions meta_options;
    meta_options.write_buffer_size = kMetaWriteBuffer;
    meta_options.compression = rows_compression;

    rocksdb::ColumnFamilyOptions vector_options;
    vector_options.compression = rocksdb::kNoCompression;
    vector_options.bottommost_compression = rocksdb::kNoCompression;
    vector_options.write_buffer_size = kVectorsWriteBuffer;
    vector_options.max_write_buffer_number = 2;
    vector_options.target_file_size_base = 64 << 20;
    vector_options.max_bytes_for_level_base = 256 << 20;
    // Bulk appends ingest their vectors as SST files that land, non-overlapping, in the last
    // level, so compaction never rewrites them. Small appends go through the memtable; chunks
    // are never overwritten, so keep flushed values in blob files, written once at flush, and let
    // compaction move only the small key/blob-reference entries.
    vector_options.enable_blob_files = true;
    vector_options.min_blob_size = 4096;
    vector_options.blob_file_size = 256 << 20;
    vector_options.blob_compression_type = rocksdb::kNoCompression;
    vector_options.enable_blob_garbage_collection = false;
    {
      rocksdb::BlockBasedTableOptions table;
      // Each value is one block anyway; a large block keeps the index small for the rest.
      table.block_size = 256 << 10;
      // XXH3 is hardware-fast where the packaged RocksDB's CRC32C is software (~0.5 GB/s).
      table.checksum = rocksdb::kXXH3;
      vector_options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
    }

    rocksdb::ColumnFamilyOptions row_options;
    row_options.compression = rows_compression;
    row_options.write_buffer_size = kRowsWriteBuffer;
    row_options.target_file_size_base = 64 << 20;
    row_options.max_bytes_for_level_base = 512 << 20;

    std::vector<rocksdb::ColumnFamilyDescriptor> families = {
        {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()},
        {fmt::kMetaFamily, meta_options},
        {fmt::kVectorsFamily, vector_options},
        {fmt::kRowsFamily, row_options},
    };
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    rocksdb::Status rs = rocksdb::DB::Open(db_options, path, families, &handles, &raw);
    if (!rs.ok()) {
      const std::string text = rs.ToString();
      if (rs.IsIOError() &&
          (text.find("lock") != std::string::npos || text.find("LOCK") != std::string::npos)) {
        return Status::IOError("database at " + path + " is in use by another process (" + text +
                               ")");
      }
      return FromRocks(rs, "opening database at " + path);
    }
    auto result = std::make_unique<RocksStore>(
        path, std::unique_ptr<rocksdb::DB>(raw), std::move(handles),
        rocksdb::Options(db_options, vector_options), options.vector_file_min_bytes);
    SIEVE_RETURN_IF_ERROR(result->Init());
    // Vector files of an append that crashed before ingesting them.
    std::vector<std::string> children;
    if (env->GetChildren(path, &children).ok()) {
      for (const std::string& name : children) {
        if (name.rfind(kVectorFilePrefix, 0) == 0) (void)env->DeleteFile(path + "/" + name);
      }
    }
    *store = std::move(result);
    return Status::OK();
  });
}

}  // namespace sieve
