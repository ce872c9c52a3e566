// Copyright 2026 The Sieve Authors.
//
// Private to storage/: the RocksDB info log Sieve installs instead of RocksDB's own.
//
// RocksDB's file logger writes through a WritableFileWriter, which (in Debian's build, whose
// assertions are on) aborts the process on the write after a failed one: with a full disk the
// first log line of an open killed every command. This logger writes with plain stdio and
// drops what cannot be written, so a full disk costs log lines, never the process.

#ifndef SIEVE_STORAGE_INFO_LOG_H_
#define SIEVE_STORAGE_INFO_LOG_H_

#include <rocksdb/env.h>

#include <memory>
#include <string>

namespace sieve {

// A logger appending to `path` (renaming an existing file to `path` + ".old" first), or, when
// `path` is empty or cannot be opened, one that discards everything. Never fails.
std::shared_ptr<rocksdb::Logger> NewInfoLog(const std::string& path);

}  // namespace sieve

#endif  // SIEVE_STORAGE_INFO_LOG_H_
