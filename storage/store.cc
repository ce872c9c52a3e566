// Copyright 2026 The Sieve Authors.
//
// RocksStore (storage/rocks_store.h): its lifecycle (construction, resuming after a failed
// write, the ledger check at open), the catalog, settings, and atomic durable commits. The
// other files are listed in rocks_store.h; byte layouts in format.{h,cc} and FORMAT.md.

#include "storage/store.h"

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/options.h>
#include <rocksdb/slice.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/format.h"
#include "storage/ledger.h"
#include "storage/roaring.h"
#include "storage/rocks_store.h"

namespace sieve {

namespace {

namespace fmt = ::sieve::format;

// A ledger past this size is rewritten after a flush of every memtable.
constexpr uint64_t kLedgerRotateBytes = 1 << 20;

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
      rows_file_options_(layout_.db, layout_.rows),
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
  rs = db_->Get(rocksdb::ReadOptions(), meta_, fmt::kCommitSeqKey, &value);
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
    batch.Put(meta_, fmt::kSettingKeyPrefix + name, value);
    LedgerRecord record;
    record.kind = LedgerKind::kSetting;
    record.name = name;
    return Commit(&batch, std::move(record), "setting '" + name + "'");
  });
}
Status RocksStore::GetSetting(const std::string& name, std::string* value) {
  return Run("GetSetting", [&] {
    rocksdb::Status rs =
        db_->Get(rocksdb::ReadOptions(), meta_, fmt::kSettingKeyPrefix + name, value);
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
  return Run("CheckFormat", [&] { return DoCheckFormat(problems, /*whole=*/true); });
}

Status RocksStore::CheckStructure(std::vector<std::string>* problems) {
  return Run("CheckStructure", [&] { return DoCheckFormat(problems, /*whole=*/false); });
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
  SIEVE_RETURN_IF_ERROR(FromRocks(batch->Put(meta_, fmt::kCommitSeqKey, seq), context));
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
  rs = db_->Get(rocksdb::ReadOptions(), meta_, fmt::kCommitSeqKey, &value);
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
  rs = db_->Get(rocksdb::ReadOptions(), meta_, fmt::AliasKey(spec.name), &value);
  if (rs.ok()) {
    std::string target;
    (void)fmt::DecodeAlias(value, &target);
    return Status::AlreadyExists("'" + spec.name + "' is an alias (of collection '" + target +
                                 "'); a collection cannot take its name");
  }
  if (!rs.IsNotFound()) return FromRocks(rs, "reading alias '" + spec.name + "'");

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
    Status s = fmt::DecodeMeta(it->value().ToStringView(), &m);
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

}  // namespace sieve
