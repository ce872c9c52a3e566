// Copyright 2026 The Sieve Authors.
//
// Private to storage/: the commit ledger, a small append-only file (SIEVE-LEDGER) beside
// RocksDB's files that records every acknowledged commit outside the write-ahead log.
//
// RocksDB keeps recent writes only in its WAL until a memtable flush. A WAL that is deleted,
// truncated or damaged in its last record loses those writes silently: RocksDB cannot tell
// (it verifies only WALs that are no longer being written). Every commit therefore also bumps
// a counter in the meta family (`commit_seq`, in the same WriteBatch) and appends a record
// here, synced, before it is acknowledged. At open, a store whose counter is behind the
// ledger's has lost acknowledged commits, and the ledger says which: collection, shard and
// rows of each (FORMAT.md, "The commit ledger").
//
// Thread-safety: none; Store serializes commits.

#ifndef SIEVE_STORAGE_LEDGER_H_
#define SIEVE_STORAGE_LEDGER_H_

#include <rocksdb/env.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sieve/status.h"

namespace sieve {

inline constexpr char kLedgerFileName[] = "SIEVE-LEDGER";

// Persisted: do not renumber.
enum class LedgerKind : uint8_t {
  kCreate = 1,   // a collection created
  kAppend = 2,   // rows appended (an ingest batch)
  kStates = 3,   // shard states replaced (deletes)
  kSetting = 4,  // a database setting written
  kDrop = 5,     // a collection dropped
  kRewrite = 6,  // a shard's chunks rewritten (compaction)
  kUpdate = 7,   // attribute chunks replaced
  kAlter = 8,    // a collection's schema changed (its attribute chunks rewritten)
  kRename = 9,   // a collection renamed (with the aliases naming it)
  kAlias = 10,   // an alias created, switched or dropped
};

const char* LedgerKindName(LedgerKind kind);

// One shard a commit touched, as the commit left it.
struct LedgerShard {
  uint32_t shard = 0;
  uint32_t first_ordinal = 0;  // kAppend: the first appended ordinal; else next_ordinal
  uint32_t next_ordinal = 0;
  uint64_t live_rows = 0;
};

struct LedgerRecord {
  uint64_t seq = 0;  // the store's commit_seq after this commit
  LedgerKind kind = LedgerKind::kAppend;
  uint32_t collection_id = 0;  // 0 for database-wide commits
  std::string name;            // collection or setting name
  std::vector<LedgerShard> shards;
};

struct LedgerContents {
  // Commits up to base_seq were acknowledged before the ledger was last rewritten; they are
  // not listed one by one.
  uint64_t base_seq = 0;
  std::vector<LedgerRecord> records;  // in commit order
  uint64_t valid_bytes = 0;           // where the intact records end
  bool torn_tail = false;             // a last record was cut short (a crash while appending)
  uint64_t last_seq() const { return records.empty() ? base_seq : records.back().seq; }
};

class Ledger {
 public:
  // Reads the ledger of database directory `dir`. NotFound when there is none; Corruption
  // naming the byte offset of a damaged header or record.
  static Status Read(rocksdb::Env* env, const std::string& dir, LedgerContents* out);

  // Writes a fresh ledger with no records and `base_seq` (to a temporary file, synced, then
  // renamed over the old one and the directory synced), and opens it for appending.
  static Status Create(rocksdb::Env* env, const std::string& dir, uint64_t base_seq,
                       std::unique_ptr<Ledger>* out);
  // Opens an existing ledger for appending after `contents` (as Read returned it; a torn tail
  // is cut off first).
  static Status OpenForAppend(rocksdb::Env* env, const std::string& dir,
                              const LedgerContents& contents, std::unique_ptr<Ledger>* out);

  // Appends one record and syncs it.
  Status Append(const LedgerRecord& record);
  uint64_t size() const { return size_; }

 private:
  Ledger(std::unique_ptr<rocksdb::WritableFile> file, std::string path, uint64_t size)
      : file_(std::move(file)), path_(std::move(path)), size_(size) {}

  std::unique_ptr<rocksdb::WritableFile> file_;
  std::string path_;
  uint64_t size_;
};

}  // namespace sieve

#endif  // SIEVE_STORAGE_LEDGER_H_
