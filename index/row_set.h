// Copyright 2026 The Sieve Authors.
//
// RowSet is a set of dense 32-bit row ordinals of one shard: the hand-off between the filter
// language (which computes it) and the executors (which consume it). It wraps a Roaring bitmap
// without exposing it, so that query/ and gpu/ never see <roaring/...>.
//
// Thread-safety: const methods may be called concurrently; mutation needs exclusive access.
// Ownership: a RowSet owns its bitmap; copies are deep.

#ifndef SIEVE_INDEX_ROW_SET_H_
#define SIEVE_INDEX_ROW_SET_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "sieve/status.h"

struct roaring_bitmap_s;

namespace sieve {

class RowSet {
 public:
  RowSet();
  ~RowSet();
  RowSet(const RowSet& other);
  RowSet& operator=(const RowSet& other);
  RowSet(RowSet&& other) noexcept;
  RowSet& operator=(RowSet&& other) noexcept;

  // [begin, end).
  static RowSet Range(uint32_t begin, uint32_t end);
  // From ordinals in any order (duplicates allowed).
  static RowSet Of(const uint32_t* ordinals, size_t n);

  // The exact number of rows in the set; O(number of containers).
  uint64_t Cardinality() const;
  // Ordinals in [begin, end).
  uint64_t RangeCardinality(uint64_t begin, uint64_t end) const;
  bool Empty() const;
  // Heap bytes the set holds now (container payloads at their capacity, and headers).
  uint64_t MemoryBytes() const;
  bool Contains(uint32_t ordinal) const;
  // Largest ordinal + 1, or 0 when empty.
  uint32_t End() const;

  void Add(uint32_t ordinal);
  void AddMany(const uint32_t* ordinals, size_t n);
  void AddRange(uint32_t begin, uint32_t end);  // [begin, end)
  void Remove(uint32_t ordinal);
  void RemoveRangeFrom(uint32_t begin);  // removes every ordinal ≥ begin

  RowSet& operator&=(const RowSet& other);
  RowSet& operator|=(const RowSet& other);
  RowSet& operator-=(const RowSet& other);  // set difference
  friend RowSet operator&(const RowSet& a, const RowSet& b);
  friend RowSet operator|(const RowSet& a, const RowSet& b);
  friend RowSet operator-(const RowSet& a, const RowSet& b);
  bool operator==(const RowSet& other) const;
  bool operator!=(const RowSet& other) const { return !(*this == other); }
  // Union of many sets at once (faster than repeated |=).
  static RowSet Union(const RowSet* const* sets, size_t n);

  // Writes the ordinals in ascending order; `out` must hold Cardinality() values.
  void ToArray(uint32_t* out) const;
  // Writes a dense bitset (bit i of word w is row 32w + i, 1 = in the set) covering
  // n_words * 32 rows, by walking Roaring containers (not values). Ordinals at or beyond
  // n_words * 32 are ignored. Every word is written.
  void ToBitset(uint32_t* words, size_t n_words) const;
  // Writes the chunks [c0, c1) of the set as Roaring keeps them (chunk c: rows [65,536 c,
  // 65,536 (c + 1))): the low 16 bits of each of their ordinals, ascending, into `lows`, and
  // for each chunk c in [c0, c1) the position in `lows` of its first ordinal, plus `base`, into
  // chunk_starts[c - c0], with chunk_starts[c1 - c0] = base + the ordinals written (ordinals
  // outside the chunks are left out). Array containers are copied whole; no 32-bit array is
  // built.
  void ToChunkedLows(uint16_t* lows, uint64_t* chunk_starts, uint32_t c0, uint32_t c1,
                     uint64_t base) const;
  // Calls fn(ordinal) in ascending order.
  template <typename Fn>
  void ForEach(Fn&& fn) const;

  // Portable Roaring serialization, stable across versions (Persisted).
  std::string Serialize() const;
  // Corruption (and *out unchanged) when `bytes` is not exactly one well-formed bitmap.
  static Status Deserialize(std::string_view bytes, RowSet* out);

  void Clear();
  // Converts containers to runs where that is smaller; worth it for range-like sets.
  void RunOptimize();

  // For index/ and filter/ only, which may see Roaring.
  roaring_bitmap_s* raw() { return bitmap_; }
  const roaring_bitmap_s* raw() const { return bitmap_; }
  // A deep copy of `bitmap`.
  static RowSet CopyOf(const roaring_bitmap_s* bitmap);
  // Takes ownership of `bitmap` (from a roaring_bitmap_* call; must not be null).
  static RowSet Adopt(roaring_bitmap_s* bitmap);
  // Union of n bitmaps owned elsewhere.
  static RowSet UnionRaw(const roaring_bitmap_s* const* bitmaps, size_t n);

 private:
  // Calls fn(values, n, context) with batches of ascending ordinals.
  void ForEachBatch(void (*fn)(const uint32_t*, size_t, void*), void* context) const;

  roaring_bitmap_s* bitmap_;
};

template <typename Fn>
void RowSet::ForEach(Fn&& fn) const {
  ForEachBatch(
      [](const uint32_t* values, size_t n, void* ctx) {
        auto& f = *static_cast<std::remove_reference_t<Fn>*>(ctx);
        for (size_t i = 0; i < n; ++i) f(values[i]);
      },
      &fn);
}

}  // namespace sieve

#endif  // SIEVE_INDEX_ROW_SET_H_
