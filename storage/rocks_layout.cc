// Copyright 2026 The Sieve Authors.
//
// MakeRocksLayout (storage/rocks_store.h): the RocksDB options of a Sieve store, its four column
// families and their tuning.

#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>

#include <algorithm>
#include <string>

#include "storage/file_checksum.h"
#include "storage/format.h"
#include "storage/info_log.h"
#include "storage/rocks_store.h"

namespace sieve {

namespace {

namespace fmt = ::sieve::format;

// Only small appends (below StoreOptions::vector_file_min_bytes) put vectors in the memtable.
constexpr size_t kVectorsWriteBuffer = 64 << 20;
constexpr size_t kRowsWriteBuffer = 64 << 20;
constexpr size_t kMetaWriteBuffer = 8 << 20;

rocksdb::CompressionType RowsCompression() {
  const auto supported = rocksdb::GetSupportedCompressions();
  for (auto c : {rocksdb::kLZ4Compression, rocksdb::kSnappyCompression}) {
    if (std::find(supported.begin(), supported.end(), c) != supported.end()) return c;
  }
  return rocksdb::kNoCompression;
}

}  // namespace

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
  // No periodic statistics dumps into it: nothing reads them, and the background thread that
  // writes them made the store grow during calls that wrote nothing (a compaction).
  db_options.stats_dump_period_sec = 0;
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

  rocksdb::ColumnFamilyOptions& row_options = layout.rows;
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
