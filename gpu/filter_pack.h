// Copyright 2026 The Sieve Authors.
//
// A filter per query, packed on the host for its upload: the distinct sets of the batch once
// each, every one as a bitset or as a chunked list of 16-bit offsets, whichever is smaller.
// The device expands it (gpu/paths/filter_unpack.cu). Host-only: no CUDA type appears here.

#ifndef SIEVE_GPU_FILTER_PACK_H_
#define SIEVE_GPU_FILTER_PACK_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "index/row_set.h"
#include "query/executor.h"
#include "sieve/status.h"

namespace sieve::gpu::detail {

// Rows per chunk of a packed filter list: a list's ids are kept as 16-bit offsets within their
// chunk, as Roaring keeps its array containers.
constexpr uint32_t kListChunkRows = 65536;
constexpr uint32_t kListChunkWords = kListChunkRows / 32;
// PackedFilters::source[q] of a query whose set is list slot i: kListSource | i (otherwise the
// bitset slot's index).
constexpr uint32_t kListSource = 0x80000000u;

// Lists a group holds at the fewest when the packer chooses the groups (FilterPacker): smaller
// groups would add more launches than their uploads hide.
constexpr uint64_t kListGroupMinBytes = uint64_t{1} << 20;
// Groups the packer chooses at the most.
constexpr uint32_t kListGroupsAuto = 8;

// A filter per query as it is uploaded (gpu/paths/filter_unpack.cu): each distinct set once,
// as a bitset of the shard's rows or, where that is smaller, as a sorted list of ids in
// kListChunkRows-row chunks, 16 bits an id. The device builds from it what the path reads: the
// query-by-row bitmap, the per-query id lists or the union bitset.
//
// The lists' lows are laid out in `groups` row ranges of whole chunks (group-major, then slot,
// then chunk), so that each range's lows are one contiguous upload: the SDDMM searches a range
// as soon as it has landed, while the later ones cross PCIe.
struct PackedFilters {
  uint32_t bitset_slots = 0;
  uint32_t list_slots = 0;
  uint32_t chunks = 0;      // kListChunkRows-row chunks of the shard
  uint64_t list_ids = 0;    // ids held by the list slots
  uint64_t bitset_ids = 0;  // ids held by the bitset slots
  uint32_t queries = 0;
  uint32_t groups = 1;
  std::vector<uint32_t> group_chunks;  // groups + 1: group g holds chunks [gc[g], gc[g + 1])
  std::vector<uint64_t> group_lows;    // groups + 1: group g's lows are [gl[g], gl[g + 1])
  // groups: the most list positions one query's segment of group g spans (Write's segments).
  std::vector<uint64_t> group_span;
  // Byte offsets into the pinned filter buffer of: bitset slots (words each); per bitset slot
  // the start of its ids in their compaction (uint64, bitset_slots + 1); per list slot, for
  // each chunk, the position in the slot's list of the chunk's first id (uint64, chunks + 1
  // each: the last is the list's length) and the index in `lows` of that id (uint64, chunks + 1
  // each); per group and query the list positions [lo, hi) that the group's SDDMM launch covers
  // (uint64 pairs, groups × queries; the last group's hi is the longest list's length, past a
  // query's own length its slots get the sentinel); per query its source (uint32); the lows
  // (uint16, list_ids).
  size_t off_bitsets = 0, off_bitset_starts = 0, off_chunk_ranks = 0, off_chunk_lows = 0,
         off_segments = 0, off_source = 0, off_lows = 0, bytes = 0;
};

// The distinct sets of a filter per query, by address and then by content (among sets of the
// same size), and the slot of each query. One slot means every query has the same filter.
void DistinctSets(const BatchFilters& filters, std::vector<const RowSet*>* slots,
                  std::vector<uint32_t>* slot_of);

// Lays the slots out as PackedFilters for a shard of `rows` rows (`words` words a bitset):
// *out gets the layout; Write fills a buffer of out->bytes bytes. The lists are laid out in
// `groups` row ranges (fewer where the shard has fewer chunks; 1 where a set is a bitset, so
// that nothing waits on a compaction); 0 chooses: one range a kListGroupMinBytes of lows, up
// to kListGroupsAuto. Write spreads the slots over `threads` threads (the calling one among
// them): each slot writes only its own places, so the bytes do not depend on the threads.
class FilterPacker {
 public:
  FilterPacker(const std::vector<const RowSet*>& slots, const std::vector<uint32_t>& slot_of,
               uint32_t rows, size_t words, uint32_t groups = 1);
  const PackedFilters& layout() const { return layout_; }
  void Write(char* out, uint32_t threads = 1) const;

 private:
  const std::vector<const RowSet*>& slots_;
  const std::vector<uint32_t>& slot_of_;
  size_t words_;
  std::vector<uint32_t> slot_source_;  // per slot: its bitset index, or kListSource | list index
  std::vector<uint64_t> slot_rows_;    // per slot: its cardinality
  // Per list slot and group: where its ids of the group begin in the lows.
  std::vector<uint64_t> slot_lows_at_;
  // Per bitset slot: where its ids begin in the bitset slots' compaction (bitset_slots + 1).
  std::vector<uint64_t> bitset_starts_;
  // Per group and query: the list positions [lo, hi) of PackedFilters' segments.
  std::vector<uint64_t> segments_;
  PackedFilters layout_;
};

}  // namespace sieve::gpu::detail

#endif  // SIEVE_GPU_FILTER_PACK_H_
