// Copyright 2026 The Sieve Authors.
//
// Private to storage/: RocksStore, the Store over RocksDB. store.cc holds its lifecycle, the
// catalog, settings and the commit; store_open.cc opening; rocks_layout.cc the column families'
// tuning; store_scan.cc reading a shard's chunks; store_append.cc appends and shard-state
// commits; store_check.cc the checker that reads every byte; store_repair.cc the salvage of a
// damaged store; store_rewrite.cc shard rewrites. The byte layouts live in format.{h,cc} and
// FORMAT.md.

#ifndef SIEVE_STORAGE_ROCKS_STORE_H_
#define SIEVE_STORAGE_ROCKS_STORE_H_

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "storage/ledger.h"
#include "storage/store.h"

namespace sieve {

// How Open configures RocksDB.
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

// Decimal text of a count, for messages.
inline std::string Num(uint64_t v) { return std::to_string(v); }

// Stored chunks hold at most this much vector payload (larger ones are split by appends and
// rewrites): each value read allocates its size, and glibc mmap()s fresh pages above 32 MiB.
inline constexpr size_t kMaxStoredVectorBytes = 8 << 20;

// Readahead of scans that read a family in key order (chunk scans, the checker).
inline constexpr size_t kScanReadahead = 8 << 20;

// "vectors", "ids" or "attributes": the part a chunk key's tag names, for messages.
const char* PartName(char tag);

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

// Vector files are written in the database directory (so ingesting them is a hard link) under
// this prefix; Open deletes leftovers of a crash (store_open.cc).
inline constexpr char kVectorFilePrefix[] = "sieve-vectors-";

enum class OpenMode : uint8_t {
  kReadWrite,
  kReadOnly,  // RocksDB read-only: nothing is written, the WAL is replayed in memory
  kSalvage,   // read-only, and WAL records that fail their checksum are skipped (repair)
  kSalvagePrefix,  // as kSalvage, but the WAL is replayed only up to its first damage
};

// The RocksDB options of a Sieve store: its four column families and their tuning.
struct RocksLayout {
  rocksdb::DBOptions db;
  std::vector<rocksdb::ColumnFamilyDescriptor> families;  // default, meta, vectors, rows
  rocksdb::ColumnFamilyOptions vectors;                   // for SstFileWriter
  rocksdb::ColumnFamilyOptions rows;                      // for SstFileWriter (compaction)
};
RocksLayout MakeRocksLayout(rocksdb::Env* env, const std::string& path, OpenMode mode,
                            const StoreOptions& options);

// Opens RocksDB for `mode`. A read-write open that finds a table file missing puts back an
// ingested vector file RocksDB itself lost (store_append.cc, IngestVectorFiles) and tries again.
rocksdb::Status OpenWithRestore(const RocksLayout& layout, const std::string& path, OpenMode mode,
                                std::vector<rocksdb::ColumnFamilyHandle*>* handles,
                                rocksdb::DB** raw);
// Opens the store at `path` in `mode` (Store::Open is this with kReadWrite or kReadOnly). In
// kSalvage the commit ledger is read but not enforced.
class RocksStore;
Status OpenRocksStore(const StoreOptions& options, const std::string& path, OpenMode mode,
                      std::unique_ptr<RocksStore>* store);

// Deletes the sieve-vectors-*.sst files of appends that never committed.
void RemoveVectorFileLeftovers(rocksdb::Env* env, const std::string& dir);

// RocksDB status → Status, with `context` naming what was being done.
Status FromRocks(const rocksdb::Status& s, std::string_view context);

// The id a shard's chunk keys carry (FORMAT.md, "Key spaces").
inline uint32_t SpaceOf(const CollectionMeta& meta, const ShardState& state) {
  return state.space != 0 ? state.space : meta.id;
}

// "collection 'name' (id 3)", "… shard 0", "… shard 0 ordinal 42".
std::string Where(const CollectionMeta& meta);
std::string Where(const CollectionMeta& meta, uint32_t shard);
std::string Where(const CollectionMeta& meta, uint32_t shard, uint32_t ordinal);

class RocksShardRewrite;

class RocksStore final : public Store {
 public:
  // `env` wraps `base_env`, which it does not own.
  RocksStore(std::string path, std::unique_ptr<rocksdb::Env> env, rocksdb::Env* base_env,
             OpenMode mode, RocksLayout layout, std::unique_ptr<rocksdb::DB> db,
             std::vector<rocksdb::ColumnFamilyHandle*> handles, size_t vector_file_min_bytes);
  ~RocksStore() override;

  // Checks the format version and the commit ledger; in read-write mode also initializes an
  // empty database and opens the ledger for appending.
  Status Init(const Status& ledger_status, const LedgerContents& ledger);

  Status CreateCollection(const CollectionSpec& spec, CollectionMeta* meta) override;
  Status ListCollections(std::vector<CollectionMeta>* metas) override;
  Status GetCollection(const std::string& name, CollectionMeta* meta) override;
  Status ReadShardState(const CollectionMeta& meta, uint32_t shard, ShardState* state) override;
  Status ScanChunks(const CollectionMeta& meta, uint32_t shard, uint32_t parts,
                    const std::function<Status(Chunk&&)>& visit) override;
  Status CommitAppend(const CollectionMeta& meta, int64_t next_auto_id,
                      const std::vector<ShardAppend>& appends) override;
  Status CommitShardStates(const CollectionMeta& meta,
                           const std::vector<std::pair<uint32_t, ShardState>>& states) override;
  Status PutSetting(const std::string& name, const std::string& value) override;
  Status GetSetting(const std::string& name, std::string* value) override;
  Status Flush() override;
  Status Backup(const BackupOptions& options, BackupResult* result) override;
  Status DropCollection(const CollectionMeta& meta) override;
  Status UpdateColumns(const CollectionMeta& meta,
                       const std::vector<ColumnChange>& changes) override;
  Status BeginRewrite(const CollectionMeta& meta, uint32_t shard,
                      std::unique_ptr<ShardRewrite>* rewrite) override;
  Status DiskBytes(uint64_t* bytes) override;
  // store_alter.cc
  Status AlterColumns(const CollectionMeta& meta, const CollectionSpec& spec,
                      const std::vector<ColumnSource>& sources, bool reclaim,
                      CollectionMeta* altered, AlterStats* stats) override;
  Status RenameCollection(const CollectionMeta& meta, const std::string& new_name,
                          CollectionMeta* renamed) override;
  Status PutAlias(const std::string& alias, const std::string& collection) override;
  Status DropAlias(const std::string& alias) override;
  Status ListAliases(std::vector<std::pair<std::string, std::string>>* aliases) override;
  // The aliases naming collection `name`, sorted. REQUIRES: create_mu_ held (or none can
  // change meanwhile).
  Status AliasesOf(const std::string& name, std::vector<std::string>* aliases);

  // Runs `fn` as a public call does (Run): for objects handed out by the store.
  Status WithDb(std::string_view what, const std::function<Status()>& fn);
  // Removes the chunks of key space `space` of `shard` in every family, synced, and hands
  // their files back. Used for abandoned rewrites.
  Status RemoveSpace(uint32_t space, uint32_t shard, bool delete_marker);
  // Asks RocksDB to drop the files of the chunk key ranges of (space, shard) and compact what
  // is left of them (after their deletion committed). Failures are logged, not returned.
  void ReclaimSpace(uint32_t space, uint32_t shard);
  // Adds the deletion of every chunk of (space, shard) to `batch`.
  void DeleteSpace(uint32_t space, uint32_t shard, rocksdb::WriteBatch* batch);
  // Removes the key spaces of rewrites that never committed. REQUIRES: read-write, at open.
  Status RemoveAbandonedSpaces();
  const rocksdb::Options& vector_file_options() const { return vector_file_options_; }
  const rocksdb::Options& rows_file_options() const { return rows_file_options_; }
  std::mutex* create_mu() { return &create_mu_; }
  rocksdb::Env* env() const { return env_; }
  Status CheckFormat(std::vector<std::string>* problems) override;
  // CheckFormat's structural part: metadata and shard states decode, and every shard's id,
  // attribute and vector chunks are contiguous from ordinal 0 to next_ordinal with the same
  // boundaries; ids and attribute chunks are decoded, vector chunks only to their headers
  // (they are read, not checked for finite values), and no file is digested whole. Used to
  // vet a backup before it is kept (store_backup.cc).
  Status CheckStructure(std::vector<std::string>* problems);

  rocksdb::DB* db() const { return db_.get(); }
  uint64_t commit_seq() const { return commit_seq_; }
  rocksdb::ColumnFamilyHandle* meta_family() const { return meta_; }
  rocksdb::ColumnFamilyHandle* vectors_family() const { return vectors_; }
  rocksdb::ColumnFamilyHandle* rows_family() const { return rows_; }
  const std::string& path() const { return path_; }

 private:
  friend class RocksShardRewrite;  // store_rewrite.cc

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
  // `whole`: CheckFormat, else CheckStructure. store_check.cc
  Status DoCheckFormat(std::vector<std::string>* problems, bool whole);
  Status DoDiskBytes(uint64_t* bytes);  // store_rewrite.cc

  // Every public call goes through Run: it runs `fn` under the shared lock, turning
  // exceptions into Status. After a failed write it first reopens RocksDB (once the disk has
  // room): the way back from RocksDB's error state, which refuses every write until then and
  // which a DB::Resume attempted on a full disk makes permanent.
  template <typename Fn>
  Status Run(std::string_view what, Fn&& fn);
  // Closes and reopens RocksDB, replaying its WAL. REQUIRES: db_mu_ held exclusively.
  Status ReopenLocked();
  // Whether the disk has room to reopen after a failed write; else *why says how little.
  bool DiskHasRoom(std::string* why);
  // ResourceExhausted, before anything is written, while a failed write waits for room.
  Status RefuseWhileDiskFull(std::string_view context);
  Status RefuseIfReadOnly(std::string_view what) const;
  // Re-reads the collection named in `meta` and fails unless it is the same collection (id).
  Status ReadCurrentMeta(const CollectionMeta& meta, CollectionMeta* current);
  // Writes `batch` synced. After a failed write RocksDB refuses every later one until
  // DB::Resume (for example once disk space is freed): one Resume and one retry are tried.
  Status WriteSynced(rocksdb::WriteBatch* batch, std::string_view context);
  // The one way a mutation becomes durable: bumps commit_seq inside `batch`, writes it synced,
  // then records the commit in the ledger (FORMAT.md, "The commit ledger").
  Status Commit(rocksdb::WriteBatch* batch, LedgerRecord record, std::string_view context);

  // A vector chunk as CommitAppend stores it: `rows` rows from `data`, under `key`.
  struct VectorPiece {
    std::string key;
    uint32_t rows = 0;
    const float* data = nullptr;
  };
  void EncodeVectorPiece(const CollectionSpec& spec, const VectorPiece& piece,
                         std::string* value) const;
  // Deletes the shard's vector chunks at or beyond `next_ordinal` (orphans of an ingest whose
  // commit never happened), synced and flushed, so a file ingested next lies above the
  // tombstone. Does nothing (one seek) when there are none.
  Status RemoveOrphanVectors(const CollectionMeta& meta, uint32_t shard, uint32_t space,
                             uint32_t next_ordinal);
  // Writes one synced file per shard with that shard's pieces (in key order) and ingests them
  // all into the vectors family in one atomic step. The chunks are invisible to readers until
  // the shard states move past them.
  Status IngestVectorFiles(const CollectionMeta& meta,
                           const std::vector<std::vector<VectorPiece>>& shard_pieces);

  const std::string path_;
  // Outlives db_ (declared first, destroyed last).
  const std::unique_ptr<rocksdb::Env> owned_env_;
  rocksdb::Env* const env_;
  rocksdb::Env* const base_env_;  // the caller's (free space is asked of it)
  const OpenMode mode_;
  const RocksLayout layout_;
  // Held shared by every public call, exclusively while RocksDB is reopened.
  std::shared_mutex db_mu_;
  // A write, flush or ingestion failed: RocksDB refuses writes until the store is reopened.
  std::atomic<bool> write_failed_{false};
  std::unique_ptr<rocksdb::DB> db_;  // null only after a reopen failed
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // default, meta, vectors, rows
  rocksdb::ColumnFamilyHandle* meta_ = nullptr;
  rocksdb::ColumnFamilyHandle* vectors_ = nullptr;
  rocksdb::ColumnFamilyHandle* rows_ = nullptr;
  // Serializes collection creation: name check, id counter and write must be one step.
  std::mutex create_mu_;
  // The vectors family's options with the database's env, for SstFileWriter.
  const rocksdb::Options vector_file_options_;
  // The rows family's options (its compression) with the database's env, for the id and
  // attribute files of a compaction.
  const rocksdb::Options rows_file_options_;
  const size_t vector_file_min_bytes_;
  std::atomic<uint64_t> next_file_number_{0};

  // Guards the commit sequence and the ledger: commits are serialized across the store.
  std::mutex commit_mu_;
  uint64_t commit_seq_ = 0;
  std::unique_ptr<Ledger> ledger_;  // null in read-only modes, or after a failed append
};

}  // namespace sieve

#endif  // SIEVE_STORAGE_ROCKS_STORE_H_
