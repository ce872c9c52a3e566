// Copyright 2026 The Sieve Authors.
//
// ShardPlacement: which device of a DeviceSet holds each shard, decided from the shards' rows
// and resident bytes and each device's memory, and kept from one search to the next so that a
// shard stays resident where it was placed.
//
// The rule, applied by Place to the shards of one collection at each search:
//   1. A shard keeps its device while the device's shards fit in its memory.
//   2. The collections' resident bytes together must fit in the devices' memory together;
//      otherwise ResourceExhausted names both sizes (and nothing is placed or moved).
//   3. A device whose shards outgrew its memory moves its largest shards of this collection to
//      the device with the fewest rows that has room.
//   4. A shard not placed yet goes to the device with the fewest rows that has room, largest
//      shards first. So a collection spreads over every device balanced by rows, and a new
//      collection fills the emptiest devices first.
//   5. When growth has left the device with the most rows more than an eighth of the mean above
//      the one with the fewest, one shard of this collection moves from the first to the
//      second, the one that narrows the gap most (at most one move per call, and none in a call
//      that moved or placed others: a move costs its rows' upload to the new device).
// A device's memory of 0 means it is not known: such a device always has room, and the check of
// step 2 is made only when every device's memory is known. Ties go to the lower device index.
//
// Thread-safety: none; DeviceSet serializes its calls.

#ifndef SIEVE_ENGINE_SHARD_PLACEMENT_H_
#define SIEVE_ENGINE_SHARD_PLACEMENT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sieve/status.h"

namespace sieve {

class ShardPlacement {
 public:
  struct Shard {
    uint64_t key = 0;    // ShardView::key: (collection id << 32) | shard
    uint64_t rows = 0;   // rows the device holds of it (deleted ones too, until compaction)
    uint64_t bytes = 0;  // device memory they take
  };
  struct Move {
    uint64_t key = 0;
    uint32_t from = 0;
    uint32_t to = 0;
  };

  // One entry per device: its name (for messages) and the bytes of resident shards it may hold
  // (0: not known). REQUIRES: at least one device, as many names as memories.
  ShardPlacement(std::vector<std::string> names, std::vector<uint64_t> memory_bytes);

  // Places the shards of one collection (every one of its shards, with their current sizes) by
  // the rule above: (*device_of)[i] is the device of shards[i], and *moves lists the shards
  // that left a device (whose copy there the caller should drop). `collection` names it in
  // messages. ResourceExhausted, naming the sizes, when they cannot all be held; nothing
  // changes then.
  Status Place(const std::string& collection, const std::vector<Shard>& shards,
               std::vector<uint32_t>* device_of, std::vector<Move>* moves);

  // Forgets every shard whose key is in [first_key, last_key] (a dropped or rewritten
  // collection's), so that its rows no longer count against its device.
  void Forget(uint64_t first_key, uint64_t last_key);

  size_t devices() const { return memory_.size(); }
  uint64_t rows(uint32_t device) const { return rows_[device]; }
  uint64_t bytes(uint32_t device) const { return bytes_[device]; }
  uint64_t memory(uint32_t device) const { return memory_[device]; }
  // The device of the shard `key`; false when it is not placed.
  bool DeviceOf(uint64_t key, uint32_t* device) const;

 private:
  struct Placed {
    uint32_t device = 0;
    uint64_t rows = 0;
    uint64_t bytes = 0;
  };
  bool Fits(uint32_t device, uint64_t bytes) const;
  // The device with the fewest rows that has room for `bytes` (and is not `except`), or -1.
  int Emptiest(uint64_t bytes, int except = -1) const;
  void Put(uint64_t key, const Placed& p);
  void Take(uint64_t key);
  std::string Describe() const;  // every device's rows, bytes and memory, for messages

  const std::vector<std::string> names_;
  const std::vector<uint64_t> memory_;
  std::vector<uint64_t> rows_;
  std::vector<uint64_t> bytes_;
  std::map<uint64_t, Placed> placed_;
};

// Device memory of a shard's resident rows: each row's components (2 bytes each for float16,
// 4 for float32) and its squared norm (4 bytes), and with `int8_codes` (the executor keeps them:
// GpuExecutorOptions::candidate_int8) each row's int8 code and its terms (Int8CodeBytesPerRow).
// Page tables, slab rounding and the codes' geometric growth are left out.
uint64_t ResidentBytes(uint64_t rows, uint32_t dim, bool float16, bool int8_codes = false);

}  // namespace sieve

#endif  // SIEVE_ENGINE_SHARD_PLACEMENT_H_
