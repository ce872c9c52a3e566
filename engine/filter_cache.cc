// Copyright 2026 The Sieve Authors.

#include "engine/filter_cache.h"

#include <utility>

namespace sieve {

std::string FilterCache::Key(const std::string& text, uint64_t instance) {
  std::string key(reinterpret_cast<const char*>(&instance), sizeof(instance));
  key += text;
  return key;
}

std::shared_ptr<const RowSet> FilterCache::Find(const std::string& text, uint64_t instance,
                                                uint64_t version) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = index_.find(Key(text, instance));
  if (it == index_.end() || it->second->version != version) {
    ++misses_;
    return nullptr;
  }
  lru_.splice(lru_.begin(), lru_, it->second);
  ++hits_;
  return it->second->set;
}

void FilterCache::Insert(const std::string& text, uint64_t instance, uint64_t version,
                         std::shared_ptr<const RowSet> set) {
  if (set == nullptr) return;
  const uint64_t bytes = set->MemoryBytes() + text.size() + sizeof(Entry);
  std::lock_guard<std::mutex> l(mu_);
  const std::string key = Key(text, instance);
  auto it = index_.find(key);
  if (it != index_.end()) {
    if (it->second->version > version) return;  // a newer set is kept already
    Erase(it->second);
  }
  if (bytes > capacity_) return;
  while (bytes_ + bytes > capacity_ && !lru_.empty()) Erase(std::prev(lru_.end()));
  lru_.push_front(Entry{text, instance, version, std::move(set), bytes});
  index_.emplace(key, lru_.begin());
  bytes_ += bytes;
}

void FilterCache::Erase(Lru::iterator it) {
  bytes_ -= it->bytes;
  index_.erase(Key(it->text, it->instance));
  lru_.erase(it);
}

uint64_t FilterCache::bytes() const {
  std::lock_guard<std::mutex> l(mu_);
  return bytes_;
}

uint64_t FilterCache::hits() const {
  std::lock_guard<std::mutex> l(mu_);
  return hits_;
}

uint64_t FilterCache::misses() const {
  std::lock_guard<std::mutex> l(mu_);
  return misses_;
}

}  // namespace sieve
