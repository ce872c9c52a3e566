// Copyright 2026 The Sieve Authors.

#include "gpu/filter_pack.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

namespace sieve::gpu::detail {
namespace {

size_t AlignUp(size_t x) { return (x + 255) & ~size_t{255}; }

}  // namespace

void DistinctSets(const BatchFilters& filters, std::vector<const RowSet*>* slots,
                  std::vector<uint32_t>* slot_of) {
  slots->clear();
  slot_of->assign(filters.sets.size(), 0);
  std::unordered_map<const RowSet*, uint32_t> by_address;
  std::unordered_multimap<uint64_t, uint32_t> by_size;  // cardinality → slot
  for (size_t q = 0; q < filters.sets.size(); ++q) {
    const RowSet* set = filters.sets[q];
    auto found = by_address.find(set);
    if (found != by_address.end()) {
      (*slot_of)[q] = found->second;
      continue;
    }
    const uint64_t n = filters.passing_rows[q];
    uint32_t slot = static_cast<uint32_t>(slots->size());
    auto [first, last] = by_size.equal_range(n);
    for (auto it = first; it != last; ++it) {
      if (*(*slots)[it->second] == *set) {
        slot = it->second;
        break;
      }
    }
    if (slot == slots->size()) {
      slots->push_back(set);
      by_size.emplace(n, slot);
    }
    by_address.emplace(set, slot);
    (*slot_of)[q] = slot;
  }
}

FilterPacker::FilterPacker(const std::vector<const RowSet*>& slots,
                           const std::vector<uint32_t>& slot_of, uint32_t rows, size_t words,
                           uint32_t groups)
    : slots_(slots), slot_of_(slot_of), words_(words) {
  PackedFilters& pk = layout_;
  pk.chunks = static_cast<uint32_t>((uint64_t{rows} + kListChunkRows - 1) / kListChunkRows);
  pk.queries = static_cast<uint32_t>(slot_of.size());
  const size_t bitset_bytes = words * 4;
  const size_t list_overhead = (size_t{pk.chunks} + 1) * 16;
  slot_source_.resize(slots.size());
  slot_rows_.resize(slots.size());
  for (size_t s = 0; s < slots.size(); ++s) {
    const uint64_t n = slot_rows_[s] = slots[s]->Cardinality();
    if (n * 2 + list_overhead < bitset_bytes) {
      slot_source_[s] = kListSource | pk.list_slots++;
      pk.list_ids += n;
    } else {
      slot_source_[s] = pk.bitset_slots++;
      pk.bitset_ids += n;
    }
  }
  uint64_t longest = 0;  // the longest query's list
  for (uint32_t s : slot_of) longest = std::max(longest, slot_rows_[s]);

  if (groups == 0) {
    groups = static_cast<uint32_t>(
        std::clamp<uint64_t>(pk.list_ids * 2 / kListGroupMinBytes, 1, kListGroupsAuto));
  }
  pk.groups = pk.bitset_slots > 0 || pk.list_slots == 0
                  ? 1
                  : std::max<uint32_t>(1, std::min(groups, pk.chunks));
  pk.group_chunks.resize(pk.groups + 1);
  for (uint32_t g = 0; g <= pk.groups; ++g) {
    pk.group_chunks[g] = static_cast<uint32_t>(uint64_t{pk.chunks} * g / pk.groups);
  }
  // Per slot and group, its ids in the group's chunks (a bitset slot's all in the one group).
  std::vector<uint64_t> group_ids(slots.size() * pk.groups, 0);
  pk.group_lows.assign(pk.groups + 1, 0);
  for (size_t s = 0; s < slots.size(); ++s) {
    for (uint32_t g = 0; g < pk.groups; ++g) {
      group_ids[s * pk.groups + g] =
          pk.groups == 1 ? slot_rows_[s]
                         : slots[s]->RangeCardinality(
                               uint64_t{pk.group_chunks[g]} * kListChunkRows,
                               uint64_t{pk.group_chunks[g + 1]} * kListChunkRows);
      if ((slot_source_[s] & kListSource) != 0) pk.group_lows[g + 1] += group_ids[s * pk.groups + g];
    }
  }
  for (uint32_t g = 0; g < pk.groups; ++g) pk.group_lows[g + 1] += pk.group_lows[g];
  // Where each list slot's ids of each group begin in `lows`, and each bitset slot's ids in
  // their compaction: every slot writes its own places (Write may spread them over threads).
  slot_lows_at_.assign(size_t{pk.list_slots} * pk.groups, 0);
  bitset_starts_.assign(pk.bitset_slots + 1, 0);
  std::vector<uint64_t> at(pk.group_lows.begin(), pk.group_lows.end() - 1);
  for (size_t s = 0; s < slots.size(); ++s) {
    const uint32_t src = slot_source_[s];
    if ((src & kListSource) == 0) {
      bitset_starts_[src + 1] = slot_rows_[s];
      continue;
    }
    for (uint32_t g = 0; g < pk.groups; ++g) {
      slot_lows_at_[size_t{src & ~kListSource} * pk.groups + g] = at[g];
      at[g] += group_ids[s * pk.groups + g];
    }
  }
  for (uint32_t b = 0; b < pk.bitset_slots; ++b) bitset_starts_[b + 1] += bitset_starts_[b];
  // A query's segment of group g: its list positions in the group's chunks; the last group's
  // reaches the longest list's length. The spans are the segments' widest.
  segments_.resize(size_t{pk.groups} * pk.queries * 2);
  pk.group_span.assign(pk.groups, 0);
  for (size_t q = 0; q < slot_of.size(); ++q) {
    uint64_t lo = 0;
    for (uint32_t g = 0; g < pk.groups; ++g) {
      const uint64_t hi =
          g + 1 == pk.groups ? longest : lo + group_ids[size_t{slot_of[q]} * pk.groups + g];
      uint64_t* seg = segments_.data() + (size_t{g} * pk.queries + q) * 2;
      seg[0] = lo;
      seg[1] = hi;
      pk.group_span[g] = std::max(pk.group_span[g], hi - lo);
      lo = hi;
    }
  }

  const size_t chunk_table = size_t{pk.list_slots} * (size_t{pk.chunks} + 1) * 8;
  pk.off_bitsets = 0;
  pk.off_bitset_starts = AlignUp(size_t{pk.bitset_slots} * bitset_bytes);
  pk.off_chunk_ranks = pk.off_bitset_starts + AlignUp((size_t{pk.bitset_slots} + 1) * 8);
  pk.off_chunk_lows = pk.off_chunk_ranks + AlignUp(chunk_table);
  pk.off_segments = pk.off_chunk_lows + AlignUp(chunk_table);
  pk.off_source = pk.off_segments + AlignUp(size_t{pk.groups} * pk.queries * 16);
  pk.off_lows = pk.off_source + AlignUp(size_t{pk.queries} * 4);
  pk.bytes = pk.off_lows + AlignUp(pk.list_ids * 2);
}

void FilterPacker::Write(char* out, uint32_t threads) const {
  const PackedFilters& pk = layout_;
  auto* bitsets = reinterpret_cast<uint32_t*>(out + pk.off_bitsets);
  auto* bitset_starts = reinterpret_cast<uint64_t*>(out + pk.off_bitset_starts);
  auto* chunk_ranks = reinterpret_cast<uint64_t*>(out + pk.off_chunk_ranks);
  auto* chunk_lows = reinterpret_cast<uint64_t*>(out + pk.off_chunk_lows);
  auto* segments = reinterpret_cast<uint64_t*>(out + pk.off_segments);
  auto* source = reinterpret_cast<uint32_t*>(out + pk.off_source);
  auto* lows = reinterpret_cast<uint16_t*>(out + pk.off_lows);
  const size_t table = size_t{pk.chunks} + 1;
  std::copy(bitset_starts_.begin(), bitset_starts_.end(), bitset_starts);
  auto write_slot = [&](size_t s) {
    const RowSet& set = *slots_[s];
    const uint32_t src = slot_source_[s];
    if ((src & kListSource) == 0) {
      set.ToBitset(bitsets + size_t{src} * words_, words_);
      return;
    }
    // The list, a group at a time: each id's low 16 bits at its place in its group's lows,
    // where each chunk's ids begin there, and their positions in the list.
    const uint32_t l = src & ~kListSource;
    uint64_t* ranks = chunk_ranks + size_t{l} * table;
    uint64_t* at = chunk_lows + size_t{l} * table;
    ranks[0] = 0;
    for (uint32_t g = 0; g < pk.groups; ++g) {
      const uint32_t c0 = pk.group_chunks[g], c1 = pk.group_chunks[g + 1];
      const uint64_t first = slot_lows_at_[size_t{l} * pk.groups + g];
      // at[c1] is the next group's first entry, written over by it (the last stays).
      set.ToChunkedLows(lows + first, at + c0, c0, c1, first);
      for (uint32_t c = c0; c < c1; ++c) ranks[c + 1] = ranks[c] + (at[c + 1] - at[c]);
    }
  };
  // The slots, taken in turn by up to `threads` threads (the calling one among them); where a
  // thread cannot be started, the ones running take its share.
  std::atomic<size_t> next{0};
  auto work = [&]() {
    for (size_t s = next++; s < slots_.size(); s = next++) write_slot(s);
  };
  std::vector<std::thread> helpers;
  const size_t n_threads = std::min<size_t>(std::max<uint32_t>(threads, 1), slots_.size());
  for (size_t t = 1; t < n_threads; ++t) {
    try {
      helpers.emplace_back(work);
    } catch (const std::system_error&) {
      break;
    }
  }
  work();
  for (std::thread& t : helpers) t.join();
  for (size_t q = 0; q < slot_of_.size(); ++q) source[q] = slot_source_[slot_of_[q]];
  std::copy(segments_.begin(), segments_.end(), segments);
}

}  // namespace sieve::gpu::detail
