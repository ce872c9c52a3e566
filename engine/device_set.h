// Copyright 2026 The Sieve Authors.
//
// DeviceSet: the executors of one kind that a search spreads a collection's shards over, each a
// "device" (the CPU executors, or one GPU executor per CUDA device), and where each shard is
// placed among them (engine/shard_placement.h). With one device every shard is on it. A search
// runs each device's shards in a thread of its own; an executor already serializes, or runs
// in parallel, what one device is asked.
//
// Thread-safety: every method may be called from several threads; the executors outlive the
// set's callers as long as the set itself.

#ifndef SIEVE_ENGINE_DEVICE_SET_H_
#define SIEVE_ENGINE_DEVICE_SET_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "query/executor.h"
#include "engine/shard_placement.h"
#include "sieve/status.h"

namespace sieve {

class DeviceSet {
 public:
  struct Member {
    // "cpu0", "cpu1", …; "gpu0", "gpu1", …, and "gpu0/1" for a second executor on CUDA device 0.
    std::string label;
    std::unique_ptr<Executor> executor;
  };

  // REQUIRES: at least one member, none null. memory_bytes: the device memory each member may
  // fill with resident shards (Options::device_memory_bytes); 0: each executor's own
  // Executor::device_memory_bytes() (0 there too: not known, no limit).
  DeviceSet(std::vector<Member> members, uint64_t memory_bytes);

  size_t size() const { return members_.size(); }
  Executor* executor(size_t i) const { return members_[i].executor.get(); }
  const std::string& label(size_t i) const { return members_[i].label; }
  // The memory the placement holds device i to (0: no limit).
  uint64_t memory_bytes(size_t i) const { return memory_[i]; }

  // The device of each of one collection's shards (ShardPlacement::Place). The executor a
  // shard left drops its copy of it (Executor::EvictShard). ResourceExhausted, naming the
  // sizes, when the shards cannot all be held.
  Status Place(const std::string& collection, const std::vector<ShardPlacement::Shard>& shards,
               std::vector<uint32_t>* device_of);
  // Forgets where the shards of collection `collection_id` were (it was dropped).
  void Forget(uint32_t collection_id);
  // Rows placed on device i, over every collection (for tests and explain).
  uint64_t placed_rows(size_t i) const;
  void ClearCaches();

 private:
  std::vector<Member> members_;
  std::vector<uint64_t> memory_;
  mutable std::mutex mu_;
  ShardPlacement placement_;
};

}  // namespace sieve

#endif  // SIEVE_ENGINE_DEVICE_SET_H_
