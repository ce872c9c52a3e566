// Copyright 2026 The Sieve Authors.
//
// Which shard a row of a collection lives in: part of the on-disk layout (storage/FORMAT.md,
// "Shards"), so it must stay the same across platforms and releases.

#ifndef SIEVE_STORAGE_SHARD_OF_H_
#define SIEVE_STORAGE_SHARD_OF_H_

#include <cstdint>

namespace sieve {

// The shard of the row with user id `id` in a collection of `shards` shards: splitmix64 of the
// id, modulo the shard count. REQUIRES: shards >= 1.
inline uint32_t ShardOf(int64_t id, uint32_t shards) {
  if (shards == 1) return 0;
  uint64_t z = static_cast<uint64_t>(id) + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<uint32_t>(z % shards);
}

}  // namespace sieve

#endif  // SIEVE_STORAGE_SHARD_OF_H_
