// Copyright 2026 The Sieve Authors.

#include "storage/wal_scan.h"

#include <rocksdb/file_checksum.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sieve {

namespace {

constexpr size_t kBlockSize = 32768;
constexpr size_t kHeaderSize = 7;             // crc (4), length (2), type (1)
constexpr size_t kRecyclableHeaderSize = 11;  // + log number (4)
constexpr uint8_t kZeroType = 0;
constexpr uint8_t kFirstRecyclableType = 5;
constexpr uint8_t kLastRecyclableType = 8;
constexpr uint8_t kLastKnownType = 10;
constexpr uint32_t kMaskDelta = 0xa282ead8u;

uint32_t Unmask(uint32_t masked) {
  const uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

// CRC32C through RocksDB's public checksum generator (the library's own implementation).
uint32_t Crc32c(const char* a, size_t na, const char* b, size_t nb) {
  static const auto factory = rocksdb::GetFileChecksumGenCrc32cFactory();
  auto gen = factory->CreateFileChecksumGenerator(rocksdb::FileChecksumGenContext());
  gen->Update(a, na);
  gen->Update(b, nb);
  gen->Finalize();
  const std::string c = gen->GetChecksum();  // big-endian
  uint32_t v = 0;
  for (unsigned char ch : c) v = (v << 8) | ch;
  return v;
}

uint32_t Fixed32(const char* p) {
  return static_cast<uint32_t>(static_cast<unsigned char>(p[0])) |
         static_cast<uint32_t>(static_cast<unsigned char>(p[1])) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(p[2])) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(p[3])) << 24;
}

// The first damaged record of one log, or false.
bool ScanLog(rocksdb::Env* env, const std::string& path, bool newest, WalDamage* damage) {
  std::unique_ptr<rocksdb::SequentialFile> file;
  if (!env->NewSequentialFile(path, &file, rocksdb::EnvOptions()).ok()) return false;
  std::vector<char> scratch(kBlockSize);
  uint64_t block_start = 0;
  uint64_t batch_start = 0;
  while (true) {
    rocksdb::Slice block;
    if (!file->Read(kBlockSize, &block, scratch.data()).ok() || block.empty()) return false;
    const bool last_block = block.size() < kBlockSize;
    size_t pos = 0;
    while (pos + kHeaderSize <= block.size()) {
      const char* h = block.data() + pos;
      const uint8_t type = static_cast<uint8_t>(h[6]);
      const size_t length = static_cast<uint8_t>(h[4]) | (static_cast<uint8_t>(h[5]) << 8);
      const uint64_t offset = block_start + pos;
      if (type == kZeroType && length == 0) {
        // Zero fill: the rest of the block is padding or preallocated space.
        break;
      }
      const size_t header =
          type >= kFirstRecyclableType && type <= kLastRecyclableType ? kRecyclableHeaderSize
                                                                      : kHeaderSize;
      // Full and first fragments (plain or recyclable) start a write batch.
      const uint8_t base = type >= kFirstRecyclableType && type <= kLastRecyclableType
                               ? static_cast<uint8_t>(type - 4)
                               : type;
      if (base == 1 || base == 2) batch_start = offset;
      if (type > kLastKnownType) {
        *damage = {path, offset, batch_start, "unknown record type " + std::to_string(type)};
        return true;
      }
      if (pos + header + length > block.size()) {
        if (newest && last_block) return false;  // cut short by a crash: not damage
        *damage = {path, offset, batch_start, "record length runs past its block"};
        return true;
      }
      const uint32_t expected = Unmask(Fixed32(h));
      // The CRC covers the type byte, the log number of recyclable records, and the payload.
      std::string covered(1, static_cast<char>(type));
      covered.append(h + kHeaderSize, header - kHeaderSize);
      if (Crc32c(covered.data(), covered.size(), h + header, length) != expected) {
        *damage = {path, offset, batch_start, "checksum mismatch"};
        return true;
      }
      pos += header + length;
    }
    if (last_block) return false;
    block_start += kBlockSize;
  }
}

}  // namespace

bool FindWalDamage(rocksdb::Env* env, const std::string& dir, WalDamage* damage) {
  std::vector<std::string> children;
  if (!env->GetChildren(dir, &children).ok()) return false;
  std::vector<std::pair<uint64_t, std::string>> logs;
  for (const std::string& name : children) {
    if (name.size() <= 4 || name.compare(name.size() - 4, 4, ".log") != 0) continue;
    char* end = nullptr;
    const uint64_t number = std::strtoull(name.c_str(), &end, 10);
    if (end != name.c_str() + name.size() - 4) continue;
    logs.emplace_back(number, dir + "/" + name);
  }
  std::sort(logs.begin(), logs.end());
  for (size_t i = 0; i < logs.size(); ++i) {
    if (ScanLog(env, logs[i].second, i + 1 == logs.size(), damage)) return true;
  }
  return false;
}

}  // namespace sieve
