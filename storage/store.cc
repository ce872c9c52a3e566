// Copyright 2026 The Sieve Authors.
//
// RocksStore (storage/rocks_store.h): its column families and their tuning, reads, and atomic
// durable commits. Opening is in store_open.cc, the checker in store_check.cc, repair in
// store_repair.cc, rewrites in store_rewrite.cc; byte layouts in format.{h,cc} and FORMAT.md.

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

#include "storage/file_checksum.h"
#include "storage/format.h"
#include "storage/info_log.h"
#include "storage/ledger.h"
#include "storage/roaring.h"
#include "storage/rocks_store.h"
#include "storage/wal_scan.h"

namespace sieve {

namespace {

namespace fmt = ::sieve::format;

constexpr size_t kScanReadahead = 8 << 20;
// Stored chunks hold at most this much vector payload; a caller's larger chunk is split.
// Every value read allocates a buffer of its size, and glibc serves allocations above 32 MiB
// with fresh mmap()s, whose page faults made loading in 32 MiB chunks several times slower
// than in 8 MiB chunks (StoreBenchTest.LoadMillionVectors).
constexpr size_t kMaxStoredVectorBytes = 8 << 20;
// Only small appends (below StoreOptions::vector_file_min_bytes) put vectors in the memtable.
constexpr size_t kVectorsWriteBuffer = 64 << 20;
constexpr size_t kRowsWriteBuffer = 64 << 20;
constexpr size_t kMetaWriteBuffer = 8 << 20;
// Database-wide settings in the meta family: "setting/" + name (see FORMAT.md).
const std::string kSettingKeyPrefix = "setting/";
// The meta key holding the store's commit counter (FORMAT.md, "The commit ledger").
constexpr char kCommitSeqKey[] = "commit_seq";
// A ledger past this size is rewritten after a flush of every memtable.
constexpr uint64_t kLedgerRotateBytes = 1 << 20;

std::string Num(uint64_t v) { return std::to_string(v); }

std::string_view View(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }

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

}  // namespace

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

std::string Where(const CollectionMeta& meta) {
  return "collection '" + meta.spec.name + "' (id " + Num(meta.id) + ")";
}

std::string Where(const CollectionMeta& meta, uint32_t shard) {
  return Where(meta) + " shard " + Num(shard);
}

std::string Where(const CollectionMeta& meta, uint32_t shard, uint32_t ordinal) {
  return Where(meta, shard) + " ordinal " + Num(ordinal);
}

RocksStore::RocksStore(std::string path, std::unique_ptr<rocksdb::Env> env,
                       rocksdb::Env* base_env, OpenMode mode, RocksLayout layout,
                       std::unique_ptr<rocksdb::DB> db,
                       std::vector<rocksdb::ColumnFamilyHandle*> handles,
                       size_t vector_file_min_bytes)
    : path_(std::move(path)),
      owned_env_(std::move(env)),
      env_(owned_env_.get()),
      base_env_(base_env),
      mode_(mode),
      layout_(std::move(layout)),
      db_(std::move(db)),
      handles_(std::move(handles)),
      vector_file_options_(layout_.db, layout_.vectors),
      vector_file_min_bytes_(vector_file_min_bytes) {
  meta_ = handles_[1];
  vectors_ = handles_[2];
  rows_ = handles_[3];
}

RocksStore::~RocksStore() {
  if (db_ == nullptr) return;
  for (auto* h : handles_) (void)db_->DestroyColumnFamilyHandle(h);
  // Every acknowledged write is already synced; a close error has nothing left to lose.
  (void)db_->Close();
}

template <typename Fn>
Status RocksStore::Run(std::string_view what, Fn&& fn) {
  return Guarded(what, [&]() -> Status {
    if (write_failed_.load()) {
      std::unique_lock<std::shared_mutex> lock(db_mu_);
      std::string why;
      if (write_failed_.load() && (db_ == nullptr || DiskHasRoom(&why))) {
        SIEVE_RETURN_IF_ERROR(ReopenLocked());
      }
    }
    std::shared_lock<std::shared_mutex> lock(db_mu_);
    if (db_ == nullptr) {
      return Status::IOError("the database at " + path_ +
                             " could not be reopened after a failed write");
    }
    return fn();
  });
}

Status RocksStore::WithDb(std::string_view what, const std::function<Status()>& fn) {
  return Run(what, fn);
}

Status RocksStore::ReopenLocked() {
  if (db_ != nullptr) {
    for (auto* h : handles_) (void)db_->DestroyColumnFamilyHandle(h);
    (void)db_->Close();
  }
  handles_.clear();
  db_.reset();
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status rs = OpenWithRestore(layout_, path_, mode_, &handles, &raw);
  if (!rs.ok()) {
    return FromRocks(rs, "reopening the database at " + path_ + " after a failed write");
  }
  // Vector files kept after a failed ingestion have served their purpose.
  RemoveVectorFileLeftovers(env_, path_);
  db_.reset(raw);
  handles_ = std::move(handles);
  meta_ = handles_[1];
  vectors_ = handles_[2];
  rows_ = handles_[3];
  // A write that failed after its WAL record landed is replayed: the counter may have moved.
  std::string value;
  rs = db_->Get(rocksdb::ReadOptions(), meta_, kCommitSeqKey, &value);
  if (rs.ok() && value.size() == 8) {
    commit_seq_ = std::max(commit_seq_, fmt::GetFixed64(value.data()));
  }
  // The next commit starts a fresh ledger that vouches for everything so far.
  ledger_.reset();
  write_failed_.store(false);
  return Status::OK();
}

bool RocksStore::DiskHasRoom(std::string* why) {
  uint64_t free = 0;
  if (!base_env_->GetFreeSpace(path_, &free).ok()) return true;  // unknown: try
  uint64_t memtables = 0;
  if (db_ != nullptr) {
    (void)db_->GetAggregatedIntProperty("rocksdb.cur-size-all-mem-tables", &memtables);
  }
  // Reopening replays the WAL into memtables and may flush them.
  const uint64_t need = 2 * memtables + (uint64_t{16} << 20);
  if (free >= need) return true;
  *why = Num(free) + " bytes free, " + Num(need) + " needed";
  return false;
}

Status RocksStore::CreateCollection(const CollectionSpec& spec, CollectionMeta* meta) {
  return Run("CreateCollection", [&] { return DoCreateCollection(spec, meta); });
}
Status RocksStore::ListCollections(std::vector<CollectionMeta>* metas) {
  return Run("ListCollections", [&] { return DoListCollections(metas); });
}
Status RocksStore::GetCollection(const std::string& name, CollectionMeta* meta) {
  return Run("GetCollection", [&] { return DoGetCollection(name, nullptr, meta); });
}
Status RocksStore::ReadShardState(const CollectionMeta& meta, uint32_t shard, ShardState* state) {
  return Run("ReadShardState", [&] { return DoReadShardState(meta, shard, nullptr, state); });
}
Status RocksStore::ScanChunks(const CollectionMeta& meta, uint32_t shard, uint32_t parts,
                              const std::function<Status(Chunk&&)>& visit) {
  return Run("ScanChunks", [&] { return DoScanChunks(meta, shard, parts, visit); });
}
Status RocksStore::CommitAppend(const CollectionMeta& meta, int64_t next_auto_id,
                                const std::vector<ShardAppend>& appends) {
  return Run("CommitAppend", [&] { return DoCommitAppend(meta, next_auto_id, appends); });
}
Status RocksStore::CommitShardStates(const CollectionMeta& meta,
                                     const std::vector<std::pair<uint32_t, ShardState>>& states) {
  return Run("CommitShardStates", [&] { return DoCommitShardStates(meta, states); });
}
Status RocksStore::PutSetting(const std::string& name, const std::string& value) {
  return Run("PutSetting", [&] {
    if (name.empty()) return Status::InvalidArgument("setting: the name is empty");
    SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly("writing setting '" + name + "'"));
    SIEVE_RETURN_IF_ERROR(RefuseWhileDiskFull("writing setting '" + name + "'"));
    rocksdb::WriteBatch batch;
    batch.Put(meta_, kSettingKeyPrefix + name, value);
    LedgerRecord record;
    record.kind = LedgerKind::kSetting;
    record.name = name;
    return Commit(&batch, std::move(record), "setting '" + name + "'");
  });
}
Status RocksStore::GetSetting(const std::string& name, std::string* value) {
  return Run("GetSetting", [&] {
    rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), meta_, kSettingKeyPrefix + name, value);
    if (rs.IsNotFound()) return Status::NotFound("no setting '" + name + "'");
    return FromRocks(rs, "reading setting '" + name + "' of " + path_);
  });
}
Status RocksStore::Flush() {
  return Run("Flush", [&] {
    SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly("flushing"));
    SIEVE_RETURN_IF_ERROR(RefuseWhileDiskFull("flushing " + path_));
    rocksdb::FlushOptions fo;
    fo.wait = true;
    rocksdb::Status rs = db_->Flush(fo, handles_);
    if (!rs.ok()) write_failed_.store(true);
    return FromRocks(rs, "flushing " + path_);
  });
}

Status RocksStore::CheckFormat(std::vector<std::string>* problems) {
  return Run("CheckFormat", [&] { return DoCheckFormat(problems); });
}

Status RocksStore::RefuseIfReadOnly(std::string_view what) const {
  if (mode_ == OpenMode::kReadWrite) return Status::OK();
  return Status::NotSupported(std::string(what) + ": the database at " + path_ +
                              " is open read-only");
}

Status RocksStore::RefuseWhileDiskFull(std::string_view context) {
  if (!write_failed_.load()) return Status::OK();
  std::string why;
  if (DiskHasRoom(&why)) return Status::OK();
  return Status::ResourceExhausted(std::string(context) + ": the disk of " + path_ +
                                   " is full (" + why + ")");
}

Status RocksStore::WriteSynced(rocksdb::WriteBatch* batch, std::string_view context) {
  SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly(context));
  rocksdb::WriteOptions wo;
  wo.sync = true;
  rocksdb::Status rs = db_->Write(wo, batch);
  if (!rs.ok() && !rs.IsInvalidArgument() && !rs.IsNotSupported()) write_failed_.store(true);
  return FromRocks(rs, std::string(context) + ": write to " + path_);
}

Status RocksStore::Commit(rocksdb::WriteBatch* batch, LedgerRecord record,
                          std::string_view context) {
  SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly(context));
  std::lock_guard<std::mutex> lock(commit_mu_);
  if (ledger_ == nullptr) {
    // The last append to the ledger failed (or it was never opened): start a fresh one that
    // vouches for every commit so far before writing another.
    SIEVE_RETURN_IF_ERROR(Ledger::Create(env_, path_, commit_seq_, &ledger_)
                              .WithContext(std::string(context) + ": the commit ledger"));
  }
  record.seq = commit_seq_ + 1;
  std::string seq;
  fmt::PutFixed64(&seq, record.seq);
  SIEVE_RETURN_IF_ERROR(FromRocks(batch->Put(meta_, kCommitSeqKey, seq), context));
  SIEVE_RETURN_IF_ERROR(WriteSynced(batch, context));
  commit_seq_ = record.seq;
  // The commit is durable from here on, whatever happens to the ledger.
  Status s = ledger_->Append(record);
  if (!s.ok()) {
    rocksdb::Log(rocksdb::InfoLogLevel::WARN_LEVEL, db_->GetDBOptions().info_log,
                 "Sieve: %s", s.ToString().c_str());
    ledger_.reset();
    return Status::OK();
  }
  if (ledger_->size() > kLedgerRotateBytes) {
    // Records of flushed commits are no longer needed to detect a lost WAL.
    rocksdb::FlushOptions fo;
    fo.wait = true;
    if (db_->Flush(fo, handles_).ok()) {
      std::unique_ptr<Ledger> fresh;
      if (Ledger::Create(env_, path_, commit_seq_, &fresh).ok()) ledger_ = std::move(fresh);
    }
  }
  return Status::OK();
}

// A summary of the commits the ledger lists after `seq`: what the store lost.
std::string LostCommits(const LedgerContents& ledger, uint64_t seq) {
  std::string out;
  size_t listed = 0, lost = 0;
  uint64_t rows = 0;
  for (const LedgerRecord& r : ledger.records) {
    if (r.seq <= seq) continue;
    ++lost;
    for (const LedgerShard& s : r.shards) {
      if (r.kind == LedgerKind::kAppend) rows += s.next_ordinal - s.first_ordinal;
    }
    if (listed++ >= 4) continue;
    out += (out.empty() ? "" : "; ") + std::string("commit ") + Num(r.seq) + ": " +
           LedgerKindName(r.kind) + (r.name.empty() ? "" : " '" + r.name + "'");
    for (const LedgerShard& s : r.shards) {
      if (r.kind == LedgerKind::kAppend) {
        out += " shard " + Num(s.shard) + " rows " + Num(s.first_ordinal) + ".." +
               Num(s.next_ordinal - 1);
      }
    }
  }
  if (listed > 4) out += "; and " + Num(listed - 4) + " more";
  std::string head = Num(ledger.last_seq() - seq) + " acknowledged commits";
  if (lost < ledger.last_seq() - seq) {
    head += " (" + Num(lost) + " listed in the ledger)";
  }
  if (rows > 0) head += " holding " + Num(rows) + " appended rows";
  return head + (out.empty() ? "" : ": " + out);
}

Status RocksStore::Init(const Status& ledger_status, const LedgerContents& ledger) {
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
    if (mode_ != OpenMode::kReadWrite) {
      return Status::NotFound("the database at " + path_ + " was never initialized");
    }
    if (!ledger_status.IsNotFound()) {
      return Status::Corruption("database at " + path_ + " is empty but has a commit ledger");
    }
    SIEVE_RETURN_IF_ERROR(Ledger::Create(env_, path_, 0, &ledger_));
    rocksdb::WriteBatch batch;
    std::string v;
    fmt::PutFixed32(&v, fmt::kFormatVersion);
    batch.Put(meta_, fmt::kFormatVersionKey, v);
    v.clear();
    fmt::PutFixed32(&v, 1);
    batch.Put(meta_, fmt::kNextCollectionIdKey, v);
    LedgerRecord record;
    record.kind = LedgerKind::kSetting;
    record.name = "format_version";
    return Commit(&batch, std::move(record), "initializing " + path_);
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

  // The commit counter against the ledger (FORMAT.md, "The commit ledger").
  rs = db_->Get(rocksdb::ReadOptions(), meta_, kCommitSeqKey, &value);
  const bool has_seq = rs.ok();
  if (!has_seq && !rs.IsNotFound()) {
    return FromRocks(rs, "reading the commit counter of " + path_);
  }
  if (has_seq && value.size() != 8) {
    return Status::Corruption("database at " + path_ + ": commit_seq value is " +
                              Num(value.size()) + " bytes, expected 8");
  }
  commit_seq_ = has_seq ? fmt::GetFixed64(value.data()) : 0;
  const std::string ledger_path = path_ + "/" + kLedgerFileName;
  const bool salvage = mode_ == OpenMode::kSalvage || mode_ == OpenMode::kSalvagePrefix;
  if (!salvage) {
    if (ledger_status.IsNotFound()) {
      if (commit_seq_ > 0) {
        return Status::Corruption(
            "database at " + path_ + ": its commit ledger " + ledger_path + " is missing (" +
            Num(commit_seq_) + " commits were made); run `sieve repair " + path_ + "`");
      }
    } else if (!ledger_status.ok()) {
      return Status::Corruption(ledger_status.message() + "; run `sieve repair " + path_ + "`");
    } else if (commit_seq_ < ledger.last_seq()) {
      return Status::Corruption(
          "database at " + path_ + " has lost " + LostCommits(ledger, commit_seq_) +
          " (its write-ahead log was damaged, truncated or deleted after they were "
          "acknowledged); run `sieve repair " + path_ + "` to salvage what remains");
    }
  }
  if (mode_ == OpenMode::kReadWrite) {
    // A crash between a commit and its ledger record leaves the store ahead of the ledger; a
    // missing ledger belongs to a store written before ledgers existed.
    if (ledger_status.ok() && commit_seq_ == ledger.last_seq()) {
      SIEVE_RETURN_IF_ERROR(Ledger::OpenForAppend(env_, path_, ledger, &ledger_));
    } else {
      SIEVE_RETURN_IF_ERROR(Ledger::Create(env_, path_, commit_seq_, &ledger_));
    }
  }
  if (salvage) return Status::OK();  // repair reads what it can
  // Fail at open, not at first use, when any collection's metadata is damaged.
  std::vector<CollectionMeta> metas;
  return DoListCollections(&metas);
}
Status RocksStore::DoCreateCollection(const CollectionSpec& spec, CollectionMeta* meta) {
  SIEVE_RETURN_IF_ERROR(fmt::ValidateSpec(spec));
  SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly("creating collection '" + spec.name + "'"));
  SIEVE_RETURN_IF_ERROR(RefuseWhileDiskFull("creating collection '" + spec.name + "'"));
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
  LedgerRecord record;
  record.kind = LedgerKind::kCreate;
  record.collection_id = id;
  record.name = spec.name;
  SIEVE_RETURN_IF_ERROR(Commit(&batch, std::move(record), "creating collection '" + spec.name + "'"));
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


RocksLayout MakeRocksLayout(rocksdb::Env* env, const std::string& path, OpenMode mode,
                            const StoreOptions& options) {
  RocksLayout layout;
  rocksdb::DBOptions& db_options = layout.db;
  db_options.create_if_missing = options.create_if_missing && mode == OpenMode::kReadWrite;
  db_options.error_if_exists = options.error_if_exists && mode == OpenMode::kReadWrite;
  db_options.create_missing_column_families = true;
  db_options.env = env;
  db_options.max_background_jobs = 4;
  db_options.bytes_per_sync = 1 << 20;
  // Shared WAL: a small cap would force the vectors memtable to flush early.
  db_options.max_total_wal_size = uint64_t{2} << 30;
  // Never RocksDB's own file logger (see info_log.h); read-only opens write no log at all.
  db_options.info_log = NewInfoLog(mode == OpenMode::kReadWrite ? path + "/LOG" : "");
  // A damaged WAL record fails the open (a record cut short at the very end, as a crash
  // leaves it, does not); the salvage of `sieve repair` skips damaged records instead.
  const bool salvage = mode == OpenMode::kSalvage || mode == OpenMode::kSalvagePrefix;
  db_options.wal_recovery_mode =
      mode == OpenMode::kSalvage         ? rocksdb::WALRecoveryMode::kSkipAnyCorruptedRecords
      : mode == OpenMode::kSalvagePrefix ? rocksdb::WALRecoveryMode::kPointInTimeRecovery
                                         : rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  // A WAL that RocksDB has finished writing is recorded in the MANIFEST with its size and
  // verified at open; the commit ledger covers the one being written.
  db_options.track_and_verify_wals_in_manifest = true;
  // No background retries after a write error: the next write resumes the store itself
  // (WriteSynced), at once and deterministically, instead of answering Busy while a retry
  // thread waits out its interval.
  db_options.max_bgerror_resume_count = 0;
  // All families flush together, so a store that loses its WAL loses whole commits.
  db_options.atomic_flush = true;
  db_options.file_checksum_gen_factory = FileChecksumFactory();
  if (salvage) {
    // Open despite missing or damaged table files; what cannot be read is reported.
    db_options.paranoid_checks = false;
    db_options.skip_checking_sst_file_sizes_on_db_open = true;
  }

  const rocksdb::CompressionType rows_compression = RowsCompression();

  rocksdb::ColumnFamilyOptions meta_options;
  meta_options.write_buffer_size = kMetaWriteBuffer;
  meta_options.compression = rows_compression;

  rocksdb::ColumnFamilyOptions& vector_options = layout.vectors;
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
    // XXH3 is hardware-fast where the packaged RocksDB's CRC32C is software.
    table.checksum = rocksdb::kXXH3;
    vector_options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  }

  rocksdb::ColumnFamilyOptions row_options;
  row_options.compression = rows_compression;
  row_options.write_buffer_size = kRowsWriteBuffer;
  row_options.target_file_size_base = 64 << 20;
  row_options.max_bytes_for_level_base = 512 << 20;

  layout.families = {
      {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()},
      {fmt::kMetaFamily, meta_options},
      {fmt::kVectorsFamily, vector_options},
      {fmt::kRowsFamily, row_options},
  };
  return layout;
}

}  // namespace sieve
