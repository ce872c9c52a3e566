// Copyright 2026 The Sieve Authors.

#include "engine/shard_placement.h"

#include <algorithm>
#include <utility>

#include "engine/memory_budget.h"
#include "query/int8_codes.h"

namespace sieve {

namespace {

std::string ShardName(uint64_t key) { return "shard " + std::to_string(key & 0xffffffffu); }

}  // namespace

uint64_t ResidentBytes(uint64_t rows, uint32_t dim, bool float16, bool int8_codes) {
  const uint64_t codes = int8_codes ? Int8CodeBytesPerRow(dim) : 0;
  return rows * (static_cast<uint64_t>(dim) * (float16 ? 2 : 4) + sizeof(float) + codes);
}

ShardPlacement::ShardPlacement(std::vector<std::string> names, std::vector<uint64_t> memory_bytes)
    : names_(std::move(names)),
      memory_(std::move(memory_bytes)),
      rows_(memory_.size(), 0),
      bytes_(memory_.size(), 0) {}

bool ShardPlacement::Fits(uint32_t device, uint64_t bytes) const {
  return memory_[device] == 0 || bytes_[device] + bytes <= memory_[device];
}

int ShardPlacement::Emptiest(uint64_t bytes, int except) const {
  int best = -1;
  for (uint32_t d = 0; d < memory_.size(); ++d) {
    if (static_cast<int>(d) == except || !Fits(d, bytes)) continue;
    if (best < 0 || rows_[d] < rows_[best]) best = static_cast<int>(d);
  }
  return best;
}

void ShardPlacement::Put(uint64_t key, const Placed& p) {
  placed_[key] = p;
  rows_[p.device] += p.rows;
  bytes_[p.device] += p.bytes;
}

void ShardPlacement::Take(uint64_t key) {
  auto it = placed_.find(key);
  if (it == placed_.end()) return;
  rows_[it->second.device] -= it->second.rows;
  bytes_[it->second.device] -= it->second.bytes;
  placed_.erase(it);
}

bool ShardPlacement::DeviceOf(uint64_t key, uint32_t* device) const {
  auto it = placed_.find(key);
  if (it == placed_.end()) return false;
  *device = it->second.device;
  return true;
}

void ShardPlacement::Forget(uint64_t first_key, uint64_t last_key) {
  for (auto it = placed_.lower_bound(first_key); it != placed_.end() && it->first <= last_key;) {
    const uint64_t key = it->first;
    ++it;
    Take(key);
  }
}

std::string ShardPlacement::Describe() const {
  std::string out;
  for (uint32_t d = 0; d < memory_.size(); ++d) {
    if (d) out += "; ";
    out += names_[d] + ": " + std::to_string(rows_[d]) + " rows in " + DescribeBytes(bytes_[d]);
    if (memory_[d] != 0) out += " of " + DescribeBytes(memory_[d]);
  }
  return out;
}

Status ShardPlacement::Place(const std::string& collection, const std::vector<Shard>& shards,
                             std::vector<uint32_t>* device_of, std::vector<Move>* moves) {
  moves->clear();
  // Work on the state itself, restoring it if the shards cannot all be held.
  const auto saved_rows = rows_;
  const auto saved_bytes = bytes_;
  const auto saved_placed = placed_;
  auto fail = [&](std::string message) {
    rows_ = saved_rows;
    bytes_ = saved_bytes;
    placed_ = saved_placed;
    moves->clear();
    return Status::ResourceExhausted(std::move(message));
  };

  // 1. Placed shards keep their device, at their current size.
  std::vector<size_t> fresh;
  uint64_t mine_bytes = 0, mine_rows = 0;
  for (size_t i = 0; i < shards.size(); ++i) {
    const Shard& s = shards[i];
    mine_bytes += s.bytes;
    mine_rows += s.rows;
    uint32_t d;
    if (DeviceOf(s.key, &d)) {
      Take(s.key);
      Put(s.key, {d, s.rows, s.bytes});
    } else {
      fresh.push_back(i);
    }
  }

  // 2. Everything placed must fit in every device's memory together.
  bool all_known = true;
  uint64_t memory = 0, held = 0;
  for (uint32_t d = 0; d < memory_.size(); ++d) {
    all_known = all_known && memory_[d] != 0;
    memory += memory_[d];
    held += bytes_[d];
  }
  for (size_t i : fresh) held += shards[i].bytes;
  if (all_known && held > memory) {
    return fail("collection '" + collection + "' needs " + DescribeBytes(mine_bytes) +
                " of device memory for its " + std::to_string(mine_rows) +
                " rows, and the shards of other collections held there take " +
                DescribeBytes(held - mine_bytes) + ": more than its " +
                std::to_string(memory_.size()) + " devices hold together (" +
                DescribeBytes(memory) + "; " + Describe() +
                "); use more devices, or fewer or smaller rows (float16 halves them)");
  }

  // 3. A device whose shards outgrew it sends this collection's largest elsewhere.
  std::vector<std::pair<uint64_t, uint64_t>> here;  // (bytes, key) of this collection's
  for (uint32_t d = 0; d < memory_.size(); ++d) {
    if (Fits(d, 0)) continue;
    here.clear();
    for (size_t i = 0; i < shards.size(); ++i) {
      uint32_t at;
      if (DeviceOf(shards[i].key, &at) && at == d) here.emplace_back(shards[i].bytes, i);
    }
    std::sort(here.rbegin(), here.rend());
    for (const auto& [bytes, i] : here) {
      if (Fits(d, 0)) break;
      const int to = Emptiest(bytes, static_cast<int>(d));
      if (to < 0) break;
      Take(shards[i].key);
      Put(shards[i].key, {static_cast<uint32_t>(to), shards[i].rows, bytes});
      moves->push_back({shards[i].key, d, static_cast<uint32_t>(to)});
    }
    if (!Fits(d, 0)) {
      return fail("collection '" + collection + "': the shards on " + names_[d] + " take " +
                  DescribeBytes(bytes_[d]) + ", more than its " + DescribeBytes(memory_[d]) +
                  ", and no other device has room for them (" + Describe() +
                  "); create the collection with more shards, or use more devices");
    }
  }

  // 4. New shards, largest first, to the emptiest device with room.
  std::stable_sort(fresh.begin(), fresh.end(), [&](size_t a, size_t b) {
    return std::make_pair(shards[a].bytes, shards[a].rows) >
           std::make_pair(shards[b].bytes, shards[b].rows);
  });
  for (size_t i : fresh) {
    const int to = Emptiest(shards[i].bytes);
    if (to < 0) {
      return fail("collection '" + collection + "': " + ShardName(shards[i].key) + " (" +
                  std::to_string(shards[i].rows) + " rows, " + DescribeBytes(shards[i].bytes) +
                  ") fits on no device (" + Describe() +
                  "); create the collection with more shards, or use more devices");
    }
    Put(shards[i].key, {static_cast<uint32_t>(to), shards[i].rows, shards[i].bytes});
  }

  // 5. One move against a gap that growth opened (not of shards placed or moved just now).
  if (memory_.size() > 1 && moves->empty()) {
    uint32_t full = 0, empty = 0;
    uint64_t total = 0;
    for (uint32_t d = 0; d < memory_.size(); ++d) {
      total += rows_[d];
      if (rows_[d] > rows_[full]) full = d;
      if (rows_[d] < rows_[empty]) empty = d;
    }
    const uint64_t gap = rows_[full] - rows_[empty];
    if (gap > 0 && gap * 8 * memory_.size() > total) {
      int best = -1;
      uint64_t best_left = gap;
      for (size_t i = 0; i < shards.size(); ++i) {
        if (std::find(fresh.begin(), fresh.end(), i) != fresh.end()) continue;
        uint32_t at;
        if (!DeviceOf(shards[i].key, &at) || at != full) continue;
        const uint64_t r = shards[i].rows;
        if (r == 0 || r >= gap || !Fits(empty, shards[i].bytes)) continue;
        // The gap after the move: |gap - 2r|.
        const uint64_t left = 2 * r > gap ? 2 * r - gap : gap - 2 * r;
        if (left < best_left) {
          best_left = left;
          best = static_cast<int>(i);
        }
      }
      if (best >= 0) {
        const Shard& s = shards[best];
        Take(s.key);
        Put(s.key, {empty, s.rows, s.bytes});
        moves->push_back({s.key, full, empty});
      }
    }
  }

  device_of->resize(shards.size());
  for (size_t i = 0; i < shards.size(); ++i) (void)DeviceOf(shards[i].key, &(*device_of)[i]);
  return Status::OK();
}

}  // namespace sieve
