// Copyright 2026 The Sieve Authors.

#include "index/row_set.h"

#include <roaring/roaring.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <exception>
#include <new>
#include <utility>
#include <vector>

namespace sieve {

namespace {

// ToBitset copies 64-bit bitset-container words as pairs of 32-bit words; that is the dense
// layout (bit i of word w = row 32w + i) only on little-endian hosts.
static_assert(std::endian::native == std::endian::little, "ToBitset assumes little-endian");

// Words of the 32-bit output that one Roaring container (2^16 rows) covers.
constexpr size_t kWordsPerContainer = (1u << 16) / 32;

roaring_bitmap_t* NewBitmap() {
  roaring_bitmap_t* r = roaring_bitmap_create();
  if (r == nullptr) throw std::bad_alloc();
  return r;
}

// Sets bits [lo, hi) of `words` (hi exclusive, both in bits).
void SetBits(uint32_t* words, size_t lo, size_t hi) {
  if (lo >= hi) return;
  size_t w0 = lo / 32, w1 = (hi - 1) / 32;
  uint32_t first = ~uint32_t{0} << (lo % 32);
  uint32_t last = ~uint32_t{0} >> (31 - (hi - 1) % 32);
  if (w0 == w1) {
    words[w0] |= first & last;
    return;
  }
  words[w0] |= first;
  for (size_t w = w0 + 1; w < w1; ++w) words[w] = ~uint32_t{0};
  words[w1] |= last;
}

// Checks the invariants a deserialized bitmap must hold before we trust it: keys ascending,
// arrays strictly ascending, runs ascending and disjoint, cardinalities consistent. The
// portable decoder checks sizes against the buffer but not these.
bool WellFormed(const roaring_bitmap_t* r) {
  const roaring_array_t& ra = r->high_low_container;
  for (int32_t i = 0; i < ra.size; ++i) {
    if (i > 0 && ra.keys[i] <= ra.keys[i - 1]) return false;
    uint8_t type = ra.typecodes[i];
    const void* c = container_unwrap_shared(ra.containers[i], &type);
    switch (type) {
      case BITSET_CONTAINER_TYPE_CODE: {
        auto* b = static_cast<const bitset_container_t*>(c);
        int64_t n = 0;
        for (size_t w = 0; w < kWordsPerContainer / 2; ++w) n += std::popcount(b->array[w]);
        if (n != b->cardinality || n == 0) return false;
        break;
      }
      case ARRAY_CONTAINER_TYPE_CODE: {
        auto* a = static_cast<const array_container_t*>(c);
        if (a->cardinality <= 0) return false;
        for (int32_t j = 1; j < a->cardinality; ++j) {
          if (a->array[j] <= a->array[j - 1]) return false;
        }
        break;
      }
      case RUN_CONTAINER_TYPE_CODE: {
        auto* run = static_cast<const run_container_t*>(c);
        if (run->n_runs <= 0) return false;
        int64_t prev_end = -1;  // last value of the previous run
        for (int32_t j = 0; j < run->n_runs; ++j) {
          int64_t start = run->runs[j].value;
          int64_t end = start + run->runs[j].length;
          if (end > 0xFFFF || start <= prev_end) return false;
          prev_end = end;
        }
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

}  // namespace

RowSet::RowSet() : bitmap_(NewBitmap()) {}

RowSet::~RowSet() { roaring_bitmap_free(bitmap_); }

RowSet::RowSet(const RowSet& other) : bitmap_(roaring_bitmap_copy(other.bitmap_)) {
  if (bitmap_ == nullptr) throw std::bad_alloc();
}

RowSet& RowSet::operator=(const RowSet& other) {
  if (this != &other && !roaring_bitmap_overwrite(bitmap_, other.bitmap_)) {
    throw std::bad_alloc();
  }
  return *this;
}

// The moved-from set stays a valid empty set, so it can be reused like any other.
RowSet::RowSet(RowSet&& other) noexcept : bitmap_(other.bitmap_) {
  other.bitmap_ = roaring_bitmap_create();
  if (other.bitmap_ == nullptr) std::terminate();
}

RowSet& RowSet::operator=(RowSet&& other) noexcept {
  std::swap(bitmap_, other.bitmap_);
  roaring_bitmap_clear(other.bitmap_);
  return *this;
}

RowSet RowSet::Range(uint32_t begin, uint32_t end) {
  RowSet s;
  s.AddRange(begin, end);
  // Ranges are the one shape where run containers win by orders of magnitude (Live()).
  s.RunOptimize();
  return s;
}

RowSet RowSet::Of(const uint32_t* ordinals, size_t n) {
  RowSet s;
  s.AddMany(ordinals, n);
  return s;
}

RowSet RowSet::CopyOf(const roaring_bitmap_s* bitmap) {
  RowSet s;
  if (!roaring_bitmap_overwrite(s.bitmap_, bitmap)) throw std::bad_alloc();
  return s;
}

RowSet RowSet::Adopt(roaring_bitmap_s* bitmap) {
  if (bitmap == nullptr) throw std::bad_alloc();
  RowSet s;
  std::swap(s.bitmap_, bitmap);
  roaring_bitmap_free(bitmap);
  return s;
}

uint64_t RowSet::Cardinality() const { return roaring_bitmap_get_cardinality(bitmap_); }

uint64_t RowSet::RangeCardinality(uint64_t begin, uint64_t end) const {
  return begin >= end ? 0 : roaring_bitmap_range_cardinality(bitmap_, begin, end);
}

uint64_t RowSet::MemoryBytes() const {
  const roaring_array_t& ra = bitmap_->high_low_container;
  // The bitmap itself, and per container a key, a type code and a pointer.
  uint64_t bytes = sizeof(roaring_bitmap_t) + static_cast<uint64_t>(ra.allocation_size) *
                                                  (sizeof(uint16_t) + 1 + sizeof(void*));
  for (int32_t i = 0; i < ra.size; ++i) {
    uint8_t type = ra.typecodes[i];
    const void* c = container_unwrap_shared(ra.containers[i], &type);
    switch (type) {
      case BITSET_CONTAINER_TYPE_CODE:
        bytes += sizeof(bitset_container_t) + (1u << 16) / 8;
        break;
      case ARRAY_CONTAINER_TYPE_CODE:
        bytes += sizeof(array_container_t) +
                 static_cast<uint64_t>(static_cast<const array_container_t*>(c)->capacity) *
                     sizeof(uint16_t);
        break;
      case RUN_CONTAINER_TYPE_CODE:
        bytes += sizeof(run_container_t) +
                 static_cast<uint64_t>(static_cast<const run_container_t*>(c)->capacity) *
                     sizeof(rle16_t);
        break;
      default:
        break;
    }
  }
  return bytes;
}

bool RowSet::Empty() const { return roaring_bitmap_is_empty(bitmap_); }

bool RowSet::Contains(uint32_t ordinal) const { return roaring_bitmap_contains(bitmap_, ordinal); }

uint32_t RowSet::End() const {
  if (Empty()) return 0;
  return roaring_bitmap_maximum(bitmap_) + 1;
}

void RowSet::Add(uint32_t ordinal) { roaring_bitmap_add(bitmap_, ordinal); }

void RowSet::AddMany(const uint32_t* ordinals, size_t n) {
  if (n > 0) roaring_bitmap_add_many(bitmap_, n, ordinals);
}

void RowSet::AddRange(uint32_t begin, uint32_t end) {
  if (begin >= end) return;
  roaring_bitmap_add_range(bitmap_, begin, end);
}

void RowSet::Remove(uint32_t ordinal) { roaring_bitmap_remove(bitmap_, ordinal); }

void RowSet::RemoveRangeFrom(uint32_t begin) {
  roaring_bitmap_remove_range(bitmap_, begin, uint64_t{1} << 32);
}

void RowSet::RunOptimize() { roaring_bitmap_run_optimize(bitmap_); }

void RowSet::Clear() { roaring_bitmap_clear(bitmap_); }

RowSet& RowSet::operator&=(const RowSet& other) {
  if (this != &other) roaring_bitmap_and_inplace(bitmap_, other.bitmap_);
  return *this;
}

RowSet& RowSet::operator|=(const RowSet& other) {
  if (this != &other) roaring_bitmap_or_inplace(bitmap_, other.bitmap_);
  return *this;
}

RowSet& RowSet::operator-=(const RowSet& other) {
  if (this == &other) {
    Clear();
  } else {
    roaring_bitmap_andnot_inplace(bitmap_, other.bitmap_);
  }
  return *this;
}

RowSet operator&(const RowSet& a, const RowSet& b) {
  return RowSet::Adopt(roaring_bitmap_and(a.bitmap_, b.bitmap_));
}

RowSet operator|(const RowSet& a, const RowSet& b) {
  return RowSet::Adopt(roaring_bitmap_or(a.bitmap_, b.bitmap_));
}

RowSet operator-(const RowSet& a, const RowSet& b) {
  return RowSet::Adopt(roaring_bitmap_andnot(a.bitmap_, b.bitmap_));
}

bool RowSet::operator==(const RowSet& other) const {
  return roaring_bitmap_equals(bitmap_, other.bitmap_);
}

RowSet RowSet::Union(const RowSet* const* sets, size_t n) {
  if (n == 0) return RowSet();
  if (n == 1) return *sets[0];
  std::vector<const roaring_bitmap_t*> raw(n);
  for (size_t i = 0; i < n; ++i) raw[i] = sets[i]->bitmap_;
  return Adopt(roaring_bitmap_or_many(n, raw.data()));
}

RowSet RowSet::UnionRaw(const roaring_bitmap_s* const* bitmaps, size_t n) {
  if (n == 0) return RowSet();
  if (n == 1) return CopyOf(bitmaps[0]);
  // or_many's signature lacks the inner const; it does not write through the pointers.
  return Adopt(roaring_bitmap_or_many(n, const_cast<const roaring_bitmap_t**>(bitmaps)));
}

void RowSet::ToArray(uint32_t* out) const { roaring_bitmap_to_uint32_array(bitmap_, out); }

void RowSet::ToBitset(uint32_t* words, size_t n_words) const {
  const roaring_array_t& ra = bitmap_->high_low_container;
  size_t written = 0;  // words [0, written) hold their final value
  for (int32_t i = 0; i < ra.size; ++i) {
    size_t base = size_t{ra.keys[i]} * kWordsPerContainer;
    if (base >= n_words) break;
    if (base > written) std::memset(words + written, 0, (base - written) * sizeof(uint32_t));
    size_t limit = std::min(kWordsPerContainer, n_words - base);  // words of this window
    uint32_t* window = words + base;
    uint8_t type = ra.typecodes[i];
    const void* c = container_unwrap_shared(ra.containers[i], &type);
    if (type == BITSET_CONTAINER_TYPE_CODE) {
      std::memcpy(window, static_cast<const bitset_container_t*>(c)->array,
                  limit * sizeof(uint32_t));
    } else {
      std::memset(window, 0, limit * sizeof(uint32_t));
      const size_t limit_bits = limit * 32;
      if (type == ARRAY_CONTAINER_TYPE_CODE) {
        auto* a = static_cast<const array_container_t*>(c);
        for (int32_t j = 0; j < a->cardinality; ++j) {
          uint32_t v = a->array[j];
          if (v >= limit_bits) break;  // ascending
          window[v >> 5] |= uint32_t{1} << (v & 31);
        }
      } else if (type == RUN_CONTAINER_TYPE_CODE) {
        auto* run = static_cast<const run_container_t*>(c);
        for (int32_t j = 0; j < run->n_runs; ++j) {
          size_t start = run->runs[j].value;
          if (start >= limit_bits) break;
          size_t end = std::min(start + run->runs[j].length + 1, limit_bits);
          SetBits(window, start, end);
        }
      }
    }
    written = base + limit;
  }
  if (written < n_words) std::memset(words + written, 0, (n_words - written) * sizeof(uint32_t));
}

void RowSet::ToChunkedLows(uint16_t* lows, uint64_t* chunk_starts, uint32_t c0, uint32_t c1,
                           uint64_t base) const {
  const roaring_array_t& ra = bitmap_->high_low_container;
  uint64_t at = 0;  // lows written
  uint32_t chunk = c0;
  int32_t i = 0;
  while (i < ra.size && ra.keys[i] < c0) ++i;
  for (; i < ra.size && ra.keys[i] < c1; ++i) {
    while (chunk <= ra.keys[i]) chunk_starts[chunk++ - c0] = base + at;
    uint8_t type = ra.typecodes[i];
    const void* c = container_unwrap_shared(ra.containers[i], &type);
    uint16_t* out = lows + at;
    if (type == ARRAY_CONTAINER_TYPE_CODE) {
      auto* a = static_cast<const array_container_t*>(c);
      std::memcpy(out, a->array, size_t(a->cardinality) * sizeof(uint16_t));
      at += static_cast<uint64_t>(a->cardinality);
    } else if (type == BITSET_CONTAINER_TYPE_CODE) {
      auto* b = static_cast<const bitset_container_t*>(c);
      for (uint32_t w = 0; w < (1u << 16) / 64; ++w) {
        for (uint64_t word = b->array[w]; word != 0; word &= word - 1) {
          *out++ = static_cast<uint16_t>(w * 64 + static_cast<uint32_t>(std::countr_zero(word)));
        }
      }
      at = static_cast<uint64_t>(out - lows);
    } else if (type == RUN_CONTAINER_TYPE_CODE) {
      auto* run = static_cast<const run_container_t*>(c);
      for (int32_t j = 0; j < run->n_runs; ++j) {
        const uint32_t start = run->runs[j].value;
        const uint32_t end = start + run->runs[j].length;  // inclusive, < 65,536
        for (uint32_t v = start; v <= end; ++v) *out++ = static_cast<uint16_t>(v);
      }
      at = static_cast<uint64_t>(out - lows);
    }
  }
  while (chunk <= c1) chunk_starts[chunk++ - c0] = base + at;
}

void RowSet::ForEachBatch(void (*fn)(const uint32_t*, size_t, void*), void* context) const {
  constexpr uint32_t kBatch = 256;
  uint32_t buf[kBatch];
  roaring_uint32_iterator_t it;
  roaring_init_iterator(bitmap_, &it);
  while (it.has_value) {
    uint32_t n = roaring_read_uint32_iterator(&it, buf, kBatch);
    if (n == 0) break;
    fn(buf, n, context);
  }
}

std::string RowSet::Serialize() const {
  std::string out(roaring_bitmap_portable_size_in_bytes(bitmap_), '\0');
  size_t n = roaring_bitmap_portable_serialize(bitmap_, out.data());
  out.resize(n);
  return out;
}

Status RowSet::Deserialize(std::string_view bytes, RowSet* out) {
  // deserialize_size walks the headers within `bytes` only, so garbage cannot make the
  // decoder read past the buffer; the whole buffer must be one bitmap.
  size_t need = roaring_bitmap_portable_deserialize_size(bytes.data(), bytes.size());
  if (need == 0 || need != bytes.size()) {
    return Status::Corruption("row set: not a portable Roaring bitmap of " +
                              std::to_string(bytes.size()) + " bytes");
  }
  roaring_bitmap_t* r = roaring_bitmap_portable_deserialize_safe(bytes.data(), bytes.size());
  if (r == nullptr) return Status::Corruption("row set: cannot decode Roaring bitmap");
  if (!WellFormed(r)) {
    roaring_bitmap_free(r);
    return Status::Corruption("row set: Roaring bitmap with unordered or inconsistent contents");
  }
  *out = Adopt(r);
  return Status::OK();
}

}  // namespace sieve
