// Copyright 2026 The Sieve Authors.
//
// Private to storage/: whole-file checksums. Every table and blob file RocksDB writes for a
// Sieve store (flushes, compactions, and the vector files CommitAppend ingests) gets an XXH3-64
// digest of its bytes, recorded in the MANIFEST next to the file; `check` recomputes it. XXH3
// rather than RocksDB's CRC32C, which the packaged RocksDB computes in software at a small
// fraction of the disk's speed.

#ifndef SIEVE_STORAGE_FILE_CHECKSUM_H_
#define SIEVE_STORAGE_FILE_CHECKSUM_H_

#include <rocksdb/file_checksum.h>

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t by value: no allocation inside RocksDB's calls
#include <xxhash.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace sieve {

// The name RocksDB records with each digest.
inline constexpr char kFileChecksumName[] = "SieveXXH3_64";

std::shared_ptr<rocksdb::FileChecksumGenFactory> FileChecksumFactory();

// Incremental XXH3-64 over a byte stream (the digest the factory's generators compute).
class Xxh3Stream {
 public:
  Xxh3Stream();
  Xxh3Stream(const Xxh3Stream&) = delete;
  Xxh3Stream& operator=(const Xxh3Stream&) = delete;
  void Update(const void* data, size_t n);
  uint64_t Digest() const;

 private:
  XXH3_state_t state_;
};

// XXH3-64 of one buffer.
uint64_t Xxh3(const void* data, size_t n);

// The digest as RocksDB stores it for kFileChecksumName: 8 bytes, big-endian.
std::string EncodeFileChecksum(uint64_t digest);

}  // namespace sieve

#endif  // SIEVE_STORAGE_FILE_CHECKSUM_H_
