// Copyright 2026 The Sieve Authors.
//
// Store is Sieve's persistent layer over RocksDB: collection metadata, per-shard state (row
// count, deleted rows) and immutable chunks of rows (ids, vectors, attribute columns). The
// on-disk format is written down in storage/FORMAT.md.
//
// Every write commits with one RocksDB WriteBatch with the WAL synced before the call returns,
// so a committed call survives kill -9 and power loss, and a crash leaves each call whole or
// absent. (A large append first ingests its vector chunks as a synced file; they stay invisible
// until the WriteBatch that advances the shard's next_ordinal commits.)
//
// Thread-safety: reads may run concurrently with each other and with writes; callers
// serialize the writes of one collection (DBImpl holds the collection's write lock).

#ifndef SIEVE_STORAGE_STORE_H_
#define SIEVE_STORAGE_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sieve/db.h"
#include "sieve/status.h"
#include "sieve/types.h"
#include "storage/column.h"

namespace roaring {
class Roaring;
}

namespace sieve {

// Persisted collection metadata.
struct CollectionMeta {
  uint32_t id = 0;  // internal, never reused
  CollectionSpec spec;
  // The next id to assign to a row ingested without one: one past the largest id ever
  // assigned or given, and never below 0.
  int64_t next_auto_id = 0;
};

// Persisted state of one shard.
struct ShardState {
  uint32_t next_ordinal = 0;  // rows ever appended to the shard: ordinals are [0, next_ordinal)
  uint64_t live_rows = 0;     // next_ordinal - |deleted|
  std::shared_ptr<roaring::Roaring> deleted;  // never null after a Read; ordinals < next_ordinal
  // The id the shard's chunk keys carry (FORMAT.md, "Key spaces"): 0 means the collection's
  // own id; a compaction moves the shard's rows to a fresh one. Carried over by every commit.
  uint32_t space = 0;
};

// A run of consecutive rows of one shard: ordinals [first_ordinal, first_ordinal + num_rows).
struct Chunk {
  uint32_t first_ordinal = 0;
  uint32_t num_rows = 0;
  std::vector<int64_t> ids;     // num_rows user ids
  std::vector<float> vectors;   // num_rows × dim (float16 collections: the rounded values)
  std::vector<Column> columns;  // one per attribute, schema order
};

// Which parts of a chunk a scan decodes (the others are left empty).
enum ChunkParts : uint32_t {
  kChunkIds = 1,
  kChunkVectors = 2,
  kChunkColumns = 4,
  kChunkAll = 7,
};

struct StoreOptions {
  bool create_if_missing = true;
  bool error_if_exists = false;
  // Opens without writing anything: no file is created, changed or removed (RocksDB's
  // read-only mode replays the write-ahead log in memory), so it works on a read-only copy,
  // on a full disk, and beside a process that has the store open for writing. Mutations
  // return NotSupported. Ignores create_if_missing (NotFound without a database).
  bool read_only = false;
  // With read_only: read one version of the store, as it was at Open, however a writer changes
  // the files meanwhile: the open is tried again (up to 20 times) while the writer moves the
  // MANIFEST or the write-ahead logs under it, and every table and blob file of the version it
  // got is then kept open (storage/pinned_file_system.h). The last attempt keeps what it
  // opened. A failed open whose directory did not change is the store's own failure, reported
  // at once. False: RocksDB's plain read-only mode, which opens files by name as it reads and
  // fails on a file a writer has deleted.
  bool read_only_fixed_view = true;
  // Test hook: when non-null, a rocksdb::Env* to use instead of the default (fault injection).
  // It also carries the vector files CommitAppend writes and ingests.
  void* env = nullptr;
  // CommitAppend writes the vector chunks of an append whose vector payload is at least this
  // many bytes into a file of its own (per shard), ingested into the store before the commit,
  // so bulk vectors skip the write-ahead log and the memtable; smaller appends put them into
  // the commit's WriteBatch. Either way the append is atomic (see storage/FORMAT.md).
  // Default: 1 MiB. 0: always a file (tests).
  size_t vector_file_min_bytes = size_t{1} << 20;
  // Read-only opens only: open without the commit ledger, vouching for nothing beyond what
  // RocksDB's files hold. A backup opened where it lies, to vet it, has none (a restore
  // writes it; FORMAT.md, "Backups").
  bool without_ledger = false;
};

class Store {
 public:
  // See DB::Repair, which this implements.
  static Status Repair(const StoreOptions& options, const std::string& path,
                       RepairReport* report);

  // See DB::BackupStore, DB::RestoreBackup, DB::ListBackups and DB::VerifyBackup, which these
  // implement (storage/store_backup.cc). `options.env` (tests) is the store's Env.
  static Status BackupClosed(const StoreOptions& options, const std::string& path,
                             const BackupOptions& backup, BackupResult* result);
  static Status RestoreBackup(const StoreOptions& options, const std::string& dest,
                              uint32_t backup_id, const std::string& path, RestoreResult* result);
  static Status ListBackups(const std::string& dest, BackupListing* listing);
  static Status VerifyBackup(const std::string& dest, uint32_t backup_id,
                             BackupListing* listing);

  // Opens or creates the database at `path`. IOError when it is open in this process already,
  // locked by another process or cannot be opened; Corruption when its metadata cannot be decoded.
  static Status Open(const StoreOptions& options, const std::string& path,
                     std::unique_ptr<Store>* store);
  virtual ~Store() = default;

  // Writes a new collection (metadata and empty shard states). InvalidArgument for a bad
  // spec, AlreadyExists when the name is taken. On success *meta holds what was written.
  virtual Status CreateCollection(const CollectionSpec& spec, CollectionMeta* meta) = 0;
  virtual Status ListCollections(std::vector<CollectionMeta>* metas) = 0;
  // NotFound when no collection has that name.
  virtual Status GetCollection(const std::string& name, CollectionMeta* meta) = 0;
  virtual Status ReadShardState(const CollectionMeta& meta, uint32_t shard, ShardState* state) = 0;

  // Visits the shard's chunks in ordinal order, decoding `parts` (a ChunkParts mask), up to
  // the shard's next_ordinal as of one snapshot. Stops at the first non-OK status returned by
  // `visit` and returns it. Corruption when a chunk cannot be decoded or the shard state is
  // missing.
  virtual Status ScanChunks(const CollectionMeta& meta, uint32_t shard, uint32_t parts,
                            const std::function<Status(Chunk&&)>& visit) = 0;

  // One shard's part of an append: its new chunks (ordinals continuing from the state's
  // previous next_ordinal) and the state after them.
  struct ShardAppend {
    uint32_t shard = 0;
    std::vector<const Chunk*> chunks;
    ShardState new_state;
  };
  // Atomically writes the chunks, the new shard states and the collection's next_auto_id,
  // WAL synced. Nothing visible is written when it fails (a failure after the vector file was
  // ingested leaves invisible vector chunks past next_ordinal, which the next append of that
  // shard removes).
  virtual Status CommitAppend(const CollectionMeta& meta, int64_t next_auto_id,
                              const std::vector<ShardAppend>& appends) = 0;

  // Atomically writes new shard states (deleted bitmaps and live counts), WAL synced.
  virtual Status CommitShardStates(const CollectionMeta& meta,
                                   const std::vector<std::pair<uint32_t, ShardState>>& states) = 0;

  // Atomically removes a collection: its metadata, shard states and every chunk (one synced
  // commit of range deletions), then has RocksDB drop the files that held them. The name may be
  // used again afterwards (for a new collection with a new id). NotFound when it is gone;
  // InvalidArgument, nothing written, while an alias names it.
  virtual Status DropCollection(const CollectionMeta& meta) = 0;

  // Sets attribute values of stored rows, in one atomic synced commit: the attribute chunks
  // holding them are rewritten; vectors and ids are not touched. InvalidArgument (nothing
  // written) for an ordinal at or past its shard's next_ordinal, an unknown attribute, or a
  // value of the wrong type (an int for a float attribute is not converted here).
  struct ColumnChange {
    uint32_t shard = 0;
    uint32_t ordinal = 0;
    size_t attribute = 0;  // index into the schema
    Value value;
  };
  virtual Status UpdateColumns(const CollectionMeta& meta,
                               const std::vector<ColumnChange>& changes) = 0;

  // A shard rewritten into a fresh key space (compaction): Append its new chunks in order
  // from ordinal 0, then Commit the state they make. Until Commit nothing visible changes; a
  // rewrite destroyed without Commit (or interrupted by a crash) leaves nothing behind once the
  // store is next opened for writing. After Commit the old chunks are gone and their files are
  // handed back to the file system.
  class ShardRewrite {
   public:
    virtual ~ShardRewrite() = default;
    virtual Status Append(const Chunk& chunk) = 0;
    // `state.next_ordinal` must equal the rows appended. The collection's next_auto_id is kept.
    virtual Status Commit(const ShardState& state) = 0;
  };
  // InvalidArgument when the shard does not exist; the caller serializes it with every other
  // write to the collection.
  virtual Status BeginRewrite(const CollectionMeta& meta, uint32_t shard,
                              std::unique_ptr<ShardRewrite>* rewrite) = 0;

  // A schema change (DB::AlterCollection): `spec` is the collection's new spec, equal to the
  // stored one but for its attributes; sources[i] says what new attribute i holds: the column
  // of old attribute `from`, or (from < 0) `fill` in every row. Every attribute chunk of every
  // shard is rewritten to the new schema (ids and vectors are not touched) and the new metadata
  // written, in one atomic synced commit; then, with `reclaim` (an attribute was dropped), the
  // rows family's files holding the old chunks are compacted so their bytes go back to the file
  // system. *altered is the metadata written. InvalidArgument (nothing written) for a spec that
  // breaks CollectionSpec's rules or changes more than the attributes, or a bad source.
  struct ColumnSource {
    int64_t from = -1;  // index into the old schema, or < 0 for a new column
    Value fill;         // a new column's value in every stored row (null: monostate)
  };
  struct AlterStats {
    uint64_t rows = 0;    // rows whose columns were rewritten
    uint64_t chunks = 0;  // attribute chunks rewritten
  };
  virtual Status AlterColumns(const CollectionMeta& meta, const CollectionSpec& spec,
                              const std::vector<ColumnSource>& sources, bool reclaim,
                              CollectionMeta* altered, AlterStats* stats) {
    (void)meta, (void)spec, (void)sources, (void)reclaim, (void)altered, (void)stats;
    return Status::NotSupported("altering a collection");
  }

  // Renames a collection in one atomic synced commit: its metadata moves to the new name's key
  // and every alias naming it is rewritten to the new name; no chunk is touched (chunk keys
  // carry the collection id). AlreadyExists when `new_name` is a collection or an alias;
  // InvalidArgument for a bad name. *renamed is the metadata written.
  virtual Status RenameCollection(const CollectionMeta& meta, const std::string& new_name,
                                  CollectionMeta* renamed) {
    (void)meta, (void)new_name, (void)renamed;
    return Status::NotSupported("renaming a collection");
  }

  // Aliases (FORMAT.md, meta key "alias/<name>"): PutAlias creates or switches one, synced;
  // InvalidArgument for a bad name or a target that is an alias, AlreadyExists when `alias` is
  // a collection, NotFound when `collection` is none. DropAlias: NotFound when there is no such
  // alias. ListAliases: (alias, collection) pairs in alias order. GetAlias: NotFound when none.
  virtual Status PutAlias(const std::string& alias, const std::string& collection) {
    (void)alias, (void)collection;
    return Status::NotSupported("aliases");
  }
  virtual Status DropAlias(const std::string& alias) {
    (void)alias;
    return Status::NotSupported("aliases");
  }
  virtual Status ListAliases(std::vector<std::pair<std::string, std::string>>* aliases) {
    aliases->clear();
    return Status::OK();
  }

  // Bytes the store's files take on disk (every file of its directory), counted once RocksDB's
  // background flushes and compactions are done (waiting up to 10 s) and with the info log's
  // buffered lines written out.
  virtual Status DiskBytes(uint64_t* bytes) = 0;

  // Small named settings of the database as a whole (e.g. "planner/<device>": the planner's
  // calibrated thresholds), stored in the meta family under "setting/<name>". PutSetting
  // overwrites, WAL synced; InvalidArgument for an empty name. GetSetting returns NotFound when
  // the setting was never written.
  virtual Status PutSetting(const std::string& name, const std::string& value) {
    (void)name, (void)value;
    return Status::NotSupported("settings");
  }
  virtual Status GetSetting(const std::string& name, std::string* value) {
    (void)name, (void)value;
    return Status::NotSupported("settings");
  }

  // See DB::Backup, which this implements. NotSupported when read-only.
  virtual Status Backup(const BackupOptions& options, BackupResult* result) {
    (void)options, (void)result;
    return Status::NotSupported("backup");
  }

  // Writes every memtable to table files (all families at once) and waits, so every
  // acknowledged commit lives in checksummed files and none depends on the write-ahead log.
  // NotSupported when read-only.
  virtual Status Flush() = 0;

  // Checks the storage-level invariants of every collection: metadata decodes, chunks are
  // contiguous from ordinal 0 to next_ordinal with matching part sizes, vectors finite,
  // deleted ⊆ [0, next_ordinal), live_rows consistent. Appends one line per problem.
  virtual Status CheckFormat(std::vector<std::string>* problems) = 0;
};

}  // namespace sieve

#endif  // SIEVE_STORAGE_STORE_H_
