// Copyright 2026 The Sieve Authors.
//
// The synthetic data of a sweep: uniform [-1, 1) vectors (float16-rounded when asked) and
// filters of an exact passing-row count, shared by the batch or one per query of a chosen
// overlap. Deterministic for a seed, built on every core.

#ifndef SIEVE_QUERY_CALIBRATE_SYNTHETIC_H_
#define SIEVE_QUERY_CALIBRATE_SYNTHETIC_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "index/row_set.h"
#include "query/calibrate/cell.h"

namespace sieve::calibrate {

// An allocator whose resize leaves new floats uninitialized, so that the threads writing a
// buffer of gigabytes are the first to touch its pages (a zero-filling resize would fault them
// all in on one thread first).
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <typename U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using FloatBuffer = std::vector<float, UninitializedAllocator<float>>;

// Vectors n × dim, uniform in [-1, 1) (float16-rounded when round_half), and their squared
// norms (when norms is not null); every element of both is written, on every core.
void MakeVectors(size_t n, uint32_t dim, bool round_half, uint64_t seed, FloatBuffer* v,
                 FloatBuffer* norms);

// x (|x| < 1) rounded to the nearest float16 value, ties to even: static_cast<_Float16>'s result.
float RoundToHalf(float x);

// Rows passing a Bernoulli(p) test keyed by `seed` (about p · rows of them).
RowSet Bernoulli(uint64_t rows, double p, uint64_t seed);

// Exactly `n` rows spread uniformly (all of them when n >= rows).
RowSet Exactly(uint64_t rows, uint64_t n, uint64_t seed);

// The passing-row counts of one series over `rows` rows: the fractions (0 < f <= 1) and the
// absolute counts below rows, sorted, unique, >= 1.
std::vector<uint64_t> SeriesCounts(const std::vector<double>& fractions,
                                   const std::vector<uint64_t>& counts, uint64_t rows);

// The filters of one point of a series.
struct PointFilters {
  uint64_t count = 0;
  std::vector<RowSet> sets;  // bitset: 1; bitmap: one per query (shared: 1, reused)
  uint64_t mean = 0;
  uint64_t union_rows = 0;
  uint64_t max_rows = 0;  // the largest set
};

// One shared set of exactly `count` rows (a bitset, or a bitmap whose queries share it), or
// per query sets of about `count` rows each: independent, or half shared and half its own.
PointFilters BuildFilters(uint64_t rows, uint64_t count, bool per_query, Overlap overlap,
                          uint32_t queries, uint64_t seed);

}  // namespace sieve::calibrate

#endif  // SIEVE_QUERY_CALIBRATE_SYNTHETIC_H_
