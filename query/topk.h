// Copyright 2026 The Sieve Authors.
//
// Exact top-k selection on the host. TopK keeps the best k (score, ordinal) candidates seen so
// far, breaking ties by the smaller ordinal, so that every backend and every path returns the
// same rows for the same scores.
//
// Internally every candidate is ranked by a key where smaller is better: the score itself for
// l2 and cosine, the negated score for inner product (negation is exact, so no precision is
// lost). Hot loops compute keys themselves and call PushKey / the block helpers; most
// candidates are rejected by one compare against the current k-th key (worst_key()).
//
// Thread-safety: none; give each thread its own TopK and Merge them at the end.

#ifndef SIEVE_QUERY_TOPK_H_
#define SIEVE_QUERY_TOPK_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "sieve/types.h"

namespace sieve {

// The order of every result list: the better score first (larger for inner product, smaller
// otherwise), ties to the smaller id. For any score and id types (float32 executor scores and
// ordinals, float64 refined distances and user ids).
template <typename Score, typename Id>
bool BetterThan(bool larger_better, Score a, Id a_id, Score b, Id b_id) {
  if (a != b) return larger_better ? a > b : a < b;
  return a_id < b_id;
}

class TopK {
 public:
  // Keeps up to k candidates (k ≥ 1). `larger_better` is true for inner product.
  TopK(uint32_t k, bool larger_better);
  // The ordering the metric implies (only kInnerProduct is larger-is-better).
  TopK(uint32_t k, Metric metric) : TopK(k, metric == Metric::kInnerProduct) {}

  uint32_t k() const { return k_; }
  bool larger_better() const { return larger_better_; }
  size_t size() const { return heap_.size(); }
  bool full() const { return heap_.size() == k_; }

  // The key a candidate must not exceed to be considered: +inf until k candidates are held,
  // then the k-th best key. A candidate whose key equals it is kept only with a smaller
  // ordinal than the k-th.
  float worst_key() const { return worst_; }

  // Converts between a metric score and its ranking key (an involution).
  float ToKey(float score) const { return larger_better_ ? -score : score; }

  // Offers one candidate by key. NaN keys are never kept.
  void PushKey(float key, uint32_t ordinal) {
    if (key > worst_) return;
    PushKeySlow(key, ordinal);
  }
  // Offers one candidate by score.
  void Push(float score, uint32_t ordinal) { PushKey(ToKey(score), ordinal); }

  // Offers keys[i] for ordinal first_ordinal + i, i in [0, n).
  void PushKeys(const float* keys, size_t n, uint32_t first_ordinal);
  // Same, offering only the ordinals whose bit is set in `bits` (bit o%32 of word o/32 for
  // ordinal o, the layout of RowSet::ToBitset). REQUIRES: first_ordinal % 32 == 0.
  void PushKeysMasked(const float* keys, size_t n, uint32_t first_ordinal, const uint32_t* bits);
  // Offers keys[i * stride] for ordinal ordinals[i], i in [0, n); with `bits` non-null only
  // ordinals whose bit is set.
  void PushKeysIndexed(const float* keys, size_t stride, size_t n, const uint32_t* ordinals,
                       const uint32_t* bits = nullptr);

  // Offers every candidate held by `other` (which must have the same ordering).
  void Merge(const TopK& other);

  // The kept candidates as (ordinal, score), best first, ties by the smaller ordinal.
  std::vector<std::pair<uint32_t, float>> Sorted() const;
  // Appends Sorted() to *out.
  void AppendSorted(std::vector<std::pair<uint32_t, float>>* out) const;

  void Clear();

 private:
  struct Entry {
    float key;
    uint32_t ordinal;
  };
  // Max-heap order: the worst candidate (largest key, then largest ordinal) on top.
  static bool Worse(const Entry& a, const Entry& b) {
    return a.key < b.key || (a.key == b.key && a.ordinal < b.ordinal);
  }
  void PushKeySlow(float key, uint32_t ordinal);

  uint32_t k_;
  bool larger_better_;
  float worst_ = std::numeric_limits<float>::infinity();
  std::vector<Entry> heap_;
};

}  // namespace sieve

#endif  // SIEVE_QUERY_TOPK_H_
