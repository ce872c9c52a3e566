// Copyright 2026 The Sieve Authors.
//
// FilterCache: compiled filters kept between searches. The row set a filter text compiles to
// on one shard image is kept under (text, ShardIndex::instance(), ShardIndex::version()), so a
// search that repeats a filter of an earlier one (a server's clients sending the same few
// filters) compiles it once per change of the shard. A write to the shard changes its version,
// so a set compiled before it is never returned after it; stale entries are dropped by the
// byte bound, least recently used first.
//
// Thread-safety: every method may be called from several threads.

#ifndef SIEVE_ENGINE_FILTER_CACHE_H_
#define SIEVE_ENGINE_FILTER_CACHE_H_

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "index/row_set.h"

namespace sieve {

class FilterCache {
 public:
  // Keeps sets of at most capacity_bytes in all (RowSet::MemoryBytes plus the key); 0 keeps
  // nothing.
  explicit FilterCache(uint64_t capacity_bytes) : capacity_(capacity_bytes) {}
  FilterCache(const FilterCache&) = delete;
  FilterCache& operator=(const FilterCache&) = delete;

  // The set `text` compiled to on that shard image at that version, or null.
  std::shared_ptr<const RowSet> Find(const std::string& text, uint64_t instance,
                                     uint64_t version);
  // Keeps `set` (a set larger than the capacity is not kept). Entries of older versions of the
  // same (text, instance) are dropped.
  void Insert(const std::string& text, uint64_t instance, uint64_t version,
              std::shared_ptr<const RowSet> set);

  uint64_t bytes() const;
  uint64_t hits() const;
  uint64_t misses() const;

 private:
  struct Entry {
    std::string text;
    uint64_t instance;
    uint64_t version;
    std::shared_ptr<const RowSet> set;
    uint64_t bytes;
  };
  using Lru = std::list<Entry>;  // most recently used first
  static std::string Key(const std::string& text, uint64_t instance);
  void Erase(Lru::iterator it);  // REQUIRES: mu_ held

  const uint64_t capacity_;
  mutable std::mutex mu_;
  Lru lru_;
  std::unordered_map<std::string, Lru::iterator> index_;  // Key(text, instance) → entry
  uint64_t bytes_ = 0;
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
};

}  // namespace sieve

#endif  // SIEVE_ENGINE_FILTER_CACHE_H_
