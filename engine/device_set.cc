// Copyright 2026 The Sieve Authors.

#include "engine/device_set.h"

#include <utility>

namespace sieve {

namespace {

std::vector<std::string> Labels(const std::vector<DeviceSet::Member>& members) {
  std::vector<std::string> out;
  for (const auto& m : members) out.push_back(m.label);
  return out;
}

std::vector<uint64_t> Memories(const std::vector<DeviceSet::Member>& members, uint64_t bytes) {
  std::vector<uint64_t> out;
  for (const auto& m : members)
    out.push_back(bytes != 0 ? bytes : m.executor->device_memory_bytes());
  return out;
}

}  // namespace

DeviceSet::DeviceSet(std::vector<Member> members, uint64_t memory_bytes)
    : members_(std::move(members)),
      memory_(Memories(members_, memory_bytes)),
      placement_(Labels(members_), memory_) {}

Status DeviceSet::Place(const std::string& collection,
                        const std::vector<ShardPlacement::Shard>& shards,
                        std::vector<uint32_t>* device_of) {
  std::vector<ShardPlacement::Move> moves;
  {
    std::lock_guard<std::mutex> l(mu_);
    SIEVE_RETURN_IF_ERROR(placement_.Place(collection, shards, device_of, &moves));
  }
  for (const auto& m : moves) members_[m.from].executor->EvictShard(m.key);
  return Status::OK();
}

void DeviceSet::Forget(uint32_t collection_id) {
  std::lock_guard<std::mutex> l(mu_);
  const uint64_t first = static_cast<uint64_t>(collection_id) << 32;
  placement_.Forget(first, first | 0xffffffffu);
}

uint64_t DeviceSet::placed_rows(size_t i) const {
  std::lock_guard<std::mutex> l(mu_);
  return placement_.rows(static_cast<uint32_t>(i));
}

void DeviceSet::ClearCaches() {
  for (auto& m : members_) m.executor->ClearCache();
}

}  // namespace sieve
