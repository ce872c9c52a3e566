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

// A filter per query as it is uploaded (gpu/paths/filter_unpack.cu): each distinct set once,
// as a bitset of the shard's rows or, where that is smaller, as a sorted list of ids in
// kListChunkRows-row chunks, 16 bits an id. The device builds from it what the path reads: the
// query-by-row bitmap, the per-query id lists or the union bitset.
struct PackedFilters {
  uint32_t bitset_slots = 0;
  uint32_t list_slots = 0;
  uint32_t chunks = 0;      // kListChunkRows-row chunks of the shard
  uint64_t list_ids = 0;    // ids held by the list slots
  uint64_t bitset_ids = 0;  // ids held by the bitset slots
  // Byte offsets into the pinned filter buffer of: bitset slots (words each); per bitset slot
  // the start of its ids in their compaction (uint64, bitset_slots + 1); per list slot the
  // start of each chunk's ids in `lows` (uint64, chunks + 1 each); per query its source
  // (uint32); the lows (uint16, list_ids).
  size_t off_bitsets = 0, off_bitset_starts = 0, off_chunk_starts = 0, off_source = 0, off_lows = 0,
         bytes = 0;
};

// The distinct sets of a filter per query, by address and then by content (among sets of the
// same size), and the slot of each query. One slot means every query has the same filter.
void DistinctSets(const BatchFilters& filters, std::vector<const RowSet*>* slots,
                  std::vector<uint32_t>* slot_of);

// Lays the slots out as PackedFilters for a shard of `rows` rows (`words` words a bitset):
// *out gets the layout; Write fills a buffer of out->bytes bytes.
class FilterPacker {
 public:
  FilterPacker(const std::vector<const RowSet*>& slots, const std::vector<uint32_t>& slot_of,
               uint32_t rows, size_t words);
  const PackedFilters& layout() const { return layout_; }
  void Write(char* out) const;

 private:
  const std::vector<const RowSet*>& slots_;
  const std::vector<uint32_t>& slot_of_;
  size_t words_;
  std::vector<uint32_t> slot_source_;  // per slot: its bitset index, or kListSource | list index
  PackedFilters layout_;
};

}  // namespace sieve::gpu::detail

#endif  // SIEVE_GPU_FILTER_PACK_H_
