// Copyright 2026 The Sieve Authors.

#include "gpu/filter_pack.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

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
                           const std::vector<uint32_t>& slot_of, uint32_t rows, size_t words)
    : slots_(slots), slot_of_(slot_of), words_(words) {
  PackedFilters& pk = layout_;
  pk.chunks = static_cast<uint32_t>((uint64_t{rows} + kListChunkRows - 1) / kListChunkRows);
  const size_t bitset_bytes = words * 4;
  const size_t list_overhead = (size_t{pk.chunks} + 1) * 8;
  slot_source_.resize(slots.size());
  for (size_t s = 0; s < slots.size(); ++s) {
    const uint64_t n = slots[s]->Cardinality();
    if (n * 2 + list_overhead < bitset_bytes) {
      slot_source_[s] = kListSource | pk.list_slots++;
      pk.list_ids += n;
    } else {
      slot_source_[s] = pk.bitset_slots++;
      pk.bitset_ids += n;
    }
  }
  pk.off_bitsets = 0;
  pk.off_bitset_starts = AlignUp(size_t{pk.bitset_slots} * bitset_bytes);
  pk.off_chunk_starts = pk.off_bitset_starts + AlignUp((size_t{pk.bitset_slots} + 1) * 8);
  pk.off_source = pk.off_chunk_starts + AlignUp(size_t{pk.list_slots} * list_overhead);
  pk.off_lows = pk.off_source + AlignUp(slot_of.size() * 4);
  pk.bytes = pk.off_lows + AlignUp(pk.list_ids * 2);
}

void FilterPacker::Write(char* out) const {
  const PackedFilters& pk = layout_;
  auto* bitsets = reinterpret_cast<uint32_t*>(out + pk.off_bitsets);
  auto* bitset_starts = reinterpret_cast<uint64_t*>(out + pk.off_bitset_starts);
  auto* chunk_starts = reinterpret_cast<uint64_t*>(out + pk.off_chunk_starts);
  auto* source = reinterpret_cast<uint32_t*>(out + pk.off_source);
  auto* lows = reinterpret_cast<uint16_t*>(out + pk.off_lows);
  uint64_t bitset_at = 0, list_at = 0;
  bitset_starts[0] = 0;
  for (size_t s = 0; s < slots_.size(); ++s) {
    const RowSet& set = *slots_[s];
    const uint32_t src = slot_source_[s];
    if ((src & kListSource) == 0) {
      set.ToBitset(bitsets + size_t{src} * words_, words_);
      bitset_at += set.Cardinality();
      bitset_starts[src + 1] = bitset_at;
      continue;
    }
    // The list: each id's low 16 bits, and where each chunk's ids begin.
    uint64_t* cs = chunk_starts + size_t{src & ~kListSource} * (size_t{pk.chunks} + 1);
    set.ToChunkedLows(lows + list_at, cs, pk.chunks, list_at);
    list_at = cs[pk.chunks];
  }
  for (size_t q = 0; q < slot_of_.size(); ++q) source[q] = slot_source_[slot_of_[q]];
}

}  // namespace sieve::gpu::detail
