// Copyright 2026 The Sieve Authors.

#include "query/topk.h"

#include <algorithm>
#include <cassert>

namespace sieve {

TopK::TopK(uint32_t k, bool larger_better) : k_(k), larger_better_(larger_better) {
  assert(k >= 1);
  // k may be far larger than any candidate count; the heap grows as candidates arrive.
  heap_.reserve(std::min<uint32_t>(k, 1024));
}

void TopK::Clear() {
  heap_.clear();
  worst_ = std::numeric_limits<float>::infinity();
}

void TopK::PushKeySlow(float key, uint32_t ordinal) {
  if (key != key) return;  // NaN
  const Entry e{key, ordinal};
  if (heap_.size() < k_) {
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), Worse);
    if (heap_.size() == k_) worst_ = heap_.front().key;
    return;
  }
  if (!Worse(e, heap_.front())) return;  // equal key, larger ordinal
  std::pop_heap(heap_.begin(), heap_.end(), Worse);
  heap_.back() = e;
  std::push_heap(heap_.begin(), heap_.end(), Worse);
  worst_ = heap_.front().key;
}

void TopK::PushKeys(const float* keys, size_t n, uint32_t first_ordinal) {
  for (size_t i = 0; i < n; ++i) {
    if (keys[i] <= worst_) PushKeySlow(keys[i], first_ordinal + static_cast<uint32_t>(i));
  }
}

void TopK::PushKeysMasked(const float* keys, size_t n, uint32_t first_ordinal,
                          const uint32_t* bits) {
  assert(first_ordinal % 32 == 0);
  const uint32_t* word = bits + first_ordinal / 32;
  for (size_t base = 0; base < n; base += 32, ++word) {
    uint32_t w = *word;
    const size_t span = std::min<size_t>(32, n - base);
    if (span < 32) w &= (1u << span) - 1;
    if (w == 0) continue;
    const float* kb = keys + base;
    const uint32_t ob = first_ordinal + static_cast<uint32_t>(base);
    if (w == 0xffffffffu) {
      for (uint32_t i = 0; i < 32; ++i) {
        if (kb[i] <= worst_) PushKeySlow(kb[i], ob + i);
      }
    } else {
      do {
        const uint32_t i = static_cast<uint32_t>(__builtin_ctz(w));
        w &= w - 1;
        if (kb[i] <= worst_) PushKeySlow(kb[i], ob + i);
      } while (w != 0);
    }
  }
}

void TopK::PushKeysIndexed(const float* keys, size_t stride, size_t n, const uint32_t* ordinals,
                           const uint32_t* bits) {
  if (bits == nullptr) {
    for (size_t i = 0; i < n; ++i) {
      const float key = keys[i * stride];
      if (key <= worst_) PushKeySlow(key, ordinals[i]);
    }
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    const uint32_t o = ordinals[i];
    if (((bits[o >> 5] >> (o & 31)) & 1u) == 0) continue;
    const float key = keys[i * stride];
    if (key <= worst_) PushKeySlow(key, o);
  }
}

void TopK::Merge(const TopK& other) {
  assert(other.larger_better_ == larger_better_);
  for (const Entry& e : other.heap_) PushKey(e.key, e.ordinal);
}

std::vector<std::pair<uint32_t, float>> TopK::Sorted() const {
  std::vector<std::pair<uint32_t, float>> out;
  AppendSorted(&out);
  return out;
}

void TopK::AppendSorted(std::vector<std::pair<uint32_t, float>>* out) const {
  std::vector<Entry> sorted = heap_;
  std::sort(sorted.begin(), sorted.end(), Worse);  // ascending: best first
  out->reserve(out->size() + sorted.size());
  for (const Entry& e : sorted) out->emplace_back(e.ordinal, ToKey(e.key));
}

}  // namespace sieve
