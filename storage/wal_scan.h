// Copyright 2026 The Sieve Authors.
//
// Private to storage/: finds where a RocksDB write-ahead log is damaged. RocksDB refuses to
// open a store whose WAL has a damaged record (Store opens with
// WALRecoveryMode::kTolerateCorruptedTailRecords) but does not say where; this reads the log's
// physical records (RocksDB's documented log format: 32 KiB blocks of records with a masked
// CRC32C of the type and payload) and names the file and byte offset of the first bad one.

#ifndef SIEVE_STORAGE_WAL_SCAN_H_
#define SIEVE_STORAGE_WAL_SCAN_H_

#include <rocksdb/env.h>

#include <cstdint>
#include <string>

namespace sieve {

struct WalDamage {
  std::string file;     // path of the log file
  uint64_t offset = 0;  // byte offset of the damaged record's header
  // Byte offset where the write batch holding the damaged record begins (its first fragment):
  // the log cut there replays whole batches only.
  uint64_t batch_start = 0;
  std::string what;     // "checksum mismatch", "bad record length", ...
};

// Scans every *.log file of the database directory `dir` in file-number order. Returns true
// and fills *damage at the first damaged record; false when every record is intact (a record
// cut short at the very end of the newest log, as a crash leaves it, is not damage).
bool FindWalDamage(rocksdb::Env* env, const std::string& dir, WalDamage* damage);

}  // namespace sieve

#endif  // SIEVE_STORAGE_WAL_SCAN_H_
